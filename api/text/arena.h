/*
 * arena.h — one allocation per request: plan every buffer's size first
 * (overflow-checked), allocate once, carve named buffers out of it, free
 * once. Units are 8-byte slots (one double or one int64_t each).
 */
#ifndef API_ARENA_H
#define API_ARENA_H

#include <stddef.h>

typedef struct {
    unsigned char *base; /* NULL until api_arena_alloc */
    size_t slots;        /* planned 8-byte slots */
    size_t used;         /* slots handed out */
    int overflow;        /* 1: the plan overflowed size_t */
} api_arena;

/* Plan `count` more slots (a zeroed api_arena starts the plan). */
void api_arena_plan(api_arena *a, size_t count);

/* Allocate the planned slots (at least one). Returns 0, or -1 on overflow
 * or when memory runs out. */
int api_arena_alloc(api_arena *a);

/* The next `count` planned slots, 8-byte aligned, uninitialised; NULL when
 * count is 0 or the plan is exceeded (a programming error). */
void *api_arena_take(api_arena *a, size_t count);

/* Free the allocation; safe on a zeroed or already freed arena. */
void api_arena_free(api_arena *a);

#endif /* API_ARENA_H */
