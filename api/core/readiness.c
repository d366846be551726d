/*
 * readiness.c — readiness and thread counts (readiness.h, api.h): set by
 * the server, read by /v2/health/ready, /version and the v2 front.
 */
#include "readiness.h"

#include <stdatomic.h>

#include "attn.h"

static atomic_int ready = 1;
static atomic_int http_threads = 1;
static atomic_int blas_threads = 1;

void api_set_ready(int value) {
    atomic_store(&ready, value != 0);
}

int api_is_ready(void) {
    return atomic_load(&ready);
}

int api_set_threads(int http, int blas) {
    int used = attn_blas_set_threads(blas);
    if (used < 1)
        used = 1;
    atomic_store(&http_threads, http);
    atomic_store(&blas_threads, used);
    return used;
}

int api_http_threads(void) {
    return atomic_load(&http_threads);
}

int api_blas_threads_set(void) {
    return atomic_load(&blas_threads);
}
