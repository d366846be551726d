/*
 * arena.c — the per-request allocation (see arena.h).
 */
#include "arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void api_arena_plan(api_arena *a, size_t count) {
    if (count > SIZE_MAX / 8 - a->slots)
        a->overflow = 1;
    else
        a->slots += count;
}

int api_arena_alloc(api_arena *a) {
    if (a->overflow)
        return -1;
    a->base = malloc((a->slots ? a->slots : 1) * 8);
    a->used = 0;
    return a->base ? 0 : -1;
}

void *api_arena_take(api_arena *a, size_t count) {
    if (!a->base || count == 0 || count > a->slots - a->used)
        return NULL;
    void *p = a->base + a->used * 8;
    a->used += count;
    return p;
}

void api_arena_free(api_arena *a) {
    free(a->base);
    memset(a, 0, sizeof *a);
}
