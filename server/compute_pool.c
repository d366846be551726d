/*
 * compute_pool.c — worker threads behind a bounded queue that is fair
 * between clients (see compute_pool.h), under one mutex, with one
 * condition variable for workers waiting for a job.
 *
 * The queue_max job slots and queue_max lanes are fixed arrays, so that
 * submitting never allocates: a job is in the FIFO list of its client's
 * lane, and the lanes that hold jobs are in a ring, served in turn. A lane
 * exists while it holds a job (so at most queue_max exist); finding a
 * client's lane is a walk over the ring, at most queue_max compares of 16
 * bytes, against jobs that run for 100 µs or more.
 */
#include "compute_pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

typedef struct {
    srv_compute_fn run;
    void *arg;
    uint32_t next; /* the next job of its lane, or the next free slot */
} job;

typedef struct {
    srv_addr client;
    uint32_t first, last; /* its jobs, oldest first */
    uint32_t next, prev;  /* the ring of busy lanes, or the next free lane */
} lane;

struct srv_compute_pool {
    pthread_mutex_t lock;
    pthread_cond_t ready; /* a job is queued, or the pool is stopping */
    job *jobs;            /* queue_max slots */
    lane *lanes;          /* queue_max lanes */
    uint32_t free_job, free_lane;
    uint32_t turn; /* the lane served next, or NONE when nothing waits */
    unsigned queue_max, waiting, running;
    int stopping;
    pthread_t *threads;
    unsigned n_threads;
};

/* The next job, round-robin over the lanes (waiting > 0). */
static job take(srv_compute_pool *p) {
    uint32_t l = p->turn;
    lane *ln = &p->lanes[l];
    uint32_t j = ln->first;
    job out = p->jobs[j];
    ln->first = out.next;
    p->jobs[j].next = p->free_job;
    p->free_job = j;
    p->waiting--;
    if (ln->first != NONE) {
        p->turn = ln->next; /* its next job waits for the others' turns */
        return out;
    }
    /* the lane is empty: out of the ring, back to the free list */
    if (ln->next == l) {
        p->turn = NONE;
    } else {
        p->lanes[ln->prev].next = ln->next;
        p->lanes[ln->next].prev = ln->prev;
        p->turn = ln->next;
    }
    ln->next = p->free_lane;
    p->free_lane = l;
    return out;
}

static void *worker(void *cls) {
    srv_compute_pool *p = cls;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        while (p->waiting == 0 && !p->stopping)
            pthread_cond_wait(&p->ready, &p->lock);
        if (p->waiting == 0) /* stopping, and nothing left to run */
            break;
        job j = take(p);
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
    if (workers == 0 || queue_max == 0 || queue_max >= NONE)
        return NULL;
    srv_compute_pool *p = calloc(1, sizeof *p);
    if (p == NULL)
        return NULL;
    p->jobs = calloc(queue_max, sizeof *p->jobs);
    p->lanes = calloc(queue_max, sizeof *p->lanes);
    p->threads = calloc(workers, sizeof *p->threads);
    if (p->jobs == NULL || p->lanes == NULL || p->threads == NULL) {
        free(p->jobs);
        free(p->lanes);
        free(p->threads);
        free(p);
        return NULL;
    }
    for (uint32_t i = 0; i < queue_max; i++) {
        p->jobs[i].next = i + 1 < queue_max ? i + 1 : NONE;
        p->lanes[i].next = i + 1 < queue_max ? i + 1 : NONE;
    }
    p->free_job = p->free_lane = 0;
    p->turn = NONE;
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

/* The lane of client in the ring, or NONE. */
static uint32_t find_lane(const srv_compute_pool *p, const srv_addr *client) {
    if (p->turn == NONE)
        return NONE;
    uint32_t l = p->turn;
    do {
        if (memcmp(&p->lanes[l].client, client, sizeof *client) == 0)
            return l;
        l = p->lanes[l].next;
    } while (l != p->turn);
    return NONE;
}

int srv_compute_pool_submit(srv_compute_pool *p, srv_compute_fn run, void *arg,
                            const srv_addr *client) {
    static const srv_addr nobody; /* all zeros: "::", never a peer */
    if (client == NULL)
        client = &nobody;
    pthread_mutex_lock(&p->lock);
    int ok = !p->stopping && p->waiting < p->queue_max;
    if (ok) {
        uint32_t j = p->free_job;
        p->free_job = p->jobs[j].next;
        p->jobs[j] = (job){run, arg, NONE};
        uint32_t l = find_lane(p, client);
        if (l == NONE) { /* a new lane, last in the ring: its turn comes
                            after every lane already waiting */
            l = p->free_lane;
            p->free_lane = p->lanes[l].next;
            lane *ln = &p->lanes[l];
            ln->client = *client;
            ln->first = j;
            if (p->turn == NONE) {
                ln->next = ln->prev = l;
                p->turn = l;
            } else {
                uint32_t last = p->lanes[p->turn].prev;
                ln->next = p->turn;
                ln->prev = last;
                p->lanes[last].next = l;
                p->lanes[p->turn].prev = l;
            }
        } else {
            p->jobs[p->lanes[l].last].next = j;
        }
        p->lanes[l].last = j;
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
    free(p->jobs);
    free(p->lanes);
    free(p->threads);
    free(p);
}
