/*
 * misconceptions_multihead.c — the known wrong implementations of
 * /attention/multihead (misconceptions.h).
 */
#include "misconceptions.h"

const api_misconception api_misconceptions_multihead[] = {
    {NULL, NULL, NULL},
};
const size_t api_misconceptions_multihead_count = 0;
