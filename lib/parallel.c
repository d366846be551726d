/*
 * parallel.c — one large call's element-wise work split over the cores.
 *
 * BLAS has its own threads; the work around it (additive attention's
 * B·Nq·Nk·h tanh features) does not, and for a lone large request it would
 * leave the other cores idle. Small calls stay on the caller's thread:
 * a thread costs tens of microseconds to start.
 */
#include "attn_internal.h"

#include <pthread.h>
#include <unistd.h>

enum { THREADS_MAX = 8 };

typedef struct {
    attn_range_fn fn;
    void *ctx;
    size_t begin, end;
    double deadline;           /* the caller's, for the threads started here */
    const atomic_int *watched; /* and its flag (attn_deadline_watch) */
} range_job;

static void *run_range(void *arg) {
    range_job *j = arg;
    attn_deadline_set(j->deadline);
    attn_deadline_watch(j->watched);
    j->fn(j->ctx, j->begin, j->end);
    return NULL;
}

void attn_parallel_for(size_t n, size_t min_per_thread, attn_range_fn fn,
                       void *ctx) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    size_t threads = cpus > 1 ? (size_t)cpus : 1;
    if (threads > THREADS_MAX)
        threads = THREADS_MAX;
    size_t most = min_per_thread ? n / min_per_thread : n;
    if (threads > most)
        threads = most ? most : 1;
    range_job jobs[THREADS_MAX];
    pthread_t tid[THREADS_MAX];
    int started[THREADS_MAX] = {0};
    for (size_t t = 0; t < threads; t++)
        jobs[t] = (range_job){fn,
                              ctx,
                              n / threads * t,
                              t + 1 == threads ? n : n / threads * (t + 1),
                              attn_deadline_get(),
                              attn_deadline_watched()};
    for (size_t t = 1; t < threads; t++)
        started[t] = pthread_create(&tid[t], NULL, run_range, &jobs[t]) == 0;
    run_range(&jobs[0]);
    for (size_t t = 1; t < threads; t++) {
        if (started[t])
            pthread_join(tid[t], NULL);
        else
            run_range(&jobs[t]); /* no thread to be had: do it here */
    }
}
