/*
 * misconceptions_additive.c — the known wrong implementations of
 * /attention/additive (misconceptions.h).
 */
#include "misconceptions.h"

const api_misconception api_misconceptions_additive[] = {
    {NULL, NULL, NULL},
};
const size_t api_misconceptions_additive_count = 0;
