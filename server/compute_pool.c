/*
 * compute_pool.c — worker threads behind a bounded queue (see
 * compute_pool.h): a ring of jobs under one mutex, one condition variable
 * for workers waiting for a job.
 */
#include "compute_pool.h"

#include <pthread.h>
#include <stdlib.h>

typedef struct {
    srv_compute_fn run;
    void *arg;
} job;

struct srv_compute_pool {
    pthread_mutex_t lock;
    pthread_cond_t ready; /* a job is queued, or the pool is stopping */
    job *ring;            /* queue_max slots */
    unsigned queue_max, head, waiting, running;
    int stopping;
    pthread_t *threads;
    unsigned n_threads;
};

static void *worker(void *cls) {
    srv_compute_pool *p = cls;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->waiting == 0 && !p->stopping)
            pthread_cond_wait(&p->ready, &p->lock);
        if (p->waiting == 0) /* stopping, and nothing left to run */
            break;
        job j = p->ring[p->head];
        p->head = (p->head + 1) % p->queue_max;
        p->waiting--;
        p->running++;
        pthread_mutex_unlock(&p->lock);
        j.run(j.arg);
        pthread_mutex_lock(&p->lock);
        p->running--;
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

srv_compute_pool *srv_compute_pool_new(unsigned workers, unsigned queue_max) {
    if (workers == 0 || queue_max == 0)
        return NULL;
    srv_compute_pool *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->ring = calloc(queue_max, sizeof *p->ring);
    p->threads = calloc(workers, sizeof *p->threads);
    if (p->ring == NULL || p->threads == NULL) {
        free(p->ring);
        free(p->threads);
        free(p);
        return NULL;
    }
    p->queue_max = queue_max;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->ready, NULL);
    for (; p->n_threads < workers; p->n_threads++)
        if (pthread_create(&p->threads[p->n_threads], NULL, worker, p) != 0)
            break;
    if (p->n_threads == 0) {
        srv_compute_pool_free(p);
        return NULL;
    }
    return p;
}

int srv_compute_pool_submit(srv_compute_pool *p, srv_compute_fn run,
                            void *arg) {
    pthread_mutex_lock(&p->lock);
    int ok = !p->stopping && p->waiting < p->queue_max;
    if (ok) {
        p->ring[(p->head + p->waiting) % p->queue_max] = (job){run, arg};
        p->waiting++;
        pthread_cond_signal(&p->ready);
    }
    pthread_mutex_unlock(&p->lock);
    return ok ? 0 : -1;
}

unsigned srv_compute_pool_waiting(srv_compute_pool *p) {
    pthread_mutex_lock(&p->lock);
    unsigned n = p->waiting;
    pthread_mutex_unlock(&p->lock);
    return n;
}

unsigned srv_compute_pool_running(srv_compute_pool *p) {
    pthread_mutex_lock(&p->lock);
    unsigned n = p->running;
    pthread_mutex_unlock(&p->lock);
    return n;
}

void srv_compute_pool_free(srv_compute_pool *p) {
    if (p == NULL)
        return;
    pthread_mutex_lock(&p->lock);
    p->stopping = 1;
    pthread_cond_broadcast(&p->ready);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->n_threads; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->ready);
    pthread_mutex_destroy(&p->lock);
    free(p->ring);
    free(p->threads);
    free(p);
}
