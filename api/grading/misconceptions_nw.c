/*
 * misconceptions_nw.c — the known wrong implementations of
 * /regression/nw (misconceptions.h).
 */
#include "misconceptions.h"

const api_misconception api_misconceptions_nw[] = {
    {NULL, NULL, NULL},
};
const size_t api_misconceptions_nw_count = 0;
