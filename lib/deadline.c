/*
 * deadline.c — the calling thread's time limit (attn.h, "deadline"): one
 * thread-local instant, read by the long loops through
 * attn_deadline_passed (attn_internal.h) and handed by attn_parallel_for
 * to the threads it starts.
 */
#include "attn_internal.h"

#include <stdatomic.h>
#include <time.h>

static _Thread_local double deadline; /* 0: none */
static atomic_int cancelled;          /* every deadline has passed */
/* the caller's own cut (attn_deadline_watch), or NULL */
static _Thread_local const atomic_int *watched;

void attn_deadline_cancel_all(void) {
    atomic_store(&cancelled, 1);
}

void attn_deadline_set(double at) {
    deadline = at;
}

double attn_deadline_get(void) {
    return deadline;
}

void attn_deadline_watch(const atomic_int *flag) {
    watched = flag;
}

const atomic_int *attn_deadline_watched(void) {
    return watched;
}

double attn_clock_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int attn_deadline_passed(void) {
    return (deadline > 0 && attn_clock_seconds() > deadline) ||
           atomic_load_explicit(&cancelled, memory_order_relaxed) ||
           (watched != NULL &&
            atomic_load_explicit(watched, memory_order_relaxed));
}
