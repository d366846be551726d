/*
 * compute_pool.c — worker threads behind a bounded queue of three lanes,
 * each fair between clients (see compute_pool.h), under one mutex, with
 * one condition variable for workers waiting for a job they may take.
 *
 * The queue_max job slots and queue_max client queues are fixed arrays,
 * so that submitting never allocates: a job is in the FIFO list of its
 * client's queue, and the client queues that hold jobs are in a ring per
 * lane, served in turn. A client queue exists while it holds a job (so at
 * most queue_max exist); finding a client's queue is a walk over its
 * lane's ring, at most queue_max compares of 16 bytes, against jobs that
 * run for 100 µs or more.
 */
#include "compute_pool.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NONE UINT32_MAX

typedef struct {
    srv_compute_fn run;
    void *arg;
    uint32_t next; /* the next job of its queue, or the next free slot */
    srv_lane lane;
} job;

typedef struct {
    srv_addr client;
    uint32_t first, last; /* its jobs, oldest first */
    uint32_t next, prev;  /* its lane's ring, or the next free queue */
} client_queue;

struct srv_compute_pool {
    pthread_mutex_t lock;
    pthread_cond_t ready; /* a job may be taken, or the pool is stopping */
    job *jobs;            /* queue_max slots */
    client_queue *queues; /* queue_max queues */
    uint32_t free_job, free_queue;
    /* per lane: the client queue served next (NONE: nothing waits), and
     * the jobs waiting and running */
    uint32_t turn[SRV_LANES];
    unsigned waiting[SRV_LANES], running[SRV_LANES];
    unsigned queue_max, bulk_max; /* bulk jobs running at once, at most */
    int stopping;
    pthread_t *threads;
    unsigned n_threads;
};

static const char *const lane_names[SRV_LANES] = {"interactive", "grading",
                                                  "bulk"};

const char *srv_lane_name(srv_lane lane) {
    return lane < SRV_LANES ? lane_names[lane] : "interactive";
}

/* The lane a free worker serves next, or SRV_LANES when none may be
 * served: the first, in lane order, that has a job waiting, bulk only
 * below its share of the workers. */
static srv_lane next_lane(const srv_compute_pool *p) {
    for (int l = 0; l < SRV_LANES; l++)
        if (p->waiting[l] > 0 &&
            (l != SRV_LANE_BULK || p->running[l] < p->bulk_max))
            return (srv_lane)l;
    return SRV_LANES;
}

/* The next job of lane l, round-robin over its clients (waiting > 0). */
static job take(srv_compute_pool *p, srv_lane l) {
    uint32_t q = p->turn[l];
    client_queue *cq = &p->queues[q];
    uint32_t j = cq->first;
    job out = p->jobs[j];
    cq->first = out.next;
    p->jobs[j].next = p->free_job;
    p->free_job = j;
    p->waiting[l]--;
    if (cq->first != NONE) {
        p->turn[l] = cq->next; /* its next job waits for the others' turns */
        return out;
    }
    /* the queue is empty: out of the ring, back to the free list */
    if (cq->next == q) {
        p->turn[l] = NONE;
    } else {
        p->queues[cq->prev].next = cq->next;
        p->queues[cq->next].prev = cq->prev;
        p->turn[l] = cq->next;
    }
    cq->next = p->free_queue;
    p->free_queue = q;
    return out;
}

static unsigned total(const unsigned counts[SRV_LANES]) {
    unsigned n = 0;
    for (int l = 0; l < SRV_LANES; l++)
        n += counts[l];
    return n;
}

static void *worker(void *cls) {
    srv_compute_pool *p = cls;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        srv_lane l;
        while ((l = next_lane(p)) == SRV_LANES &&
               !(p->stopping && total(p->waiting) == 0))
            pthread_cond_wait(&p->ready, &p->lock);
        if (l == SRV_LANES) /* stopping, and nothing left to run */
            break;
        job j = take(p, l);
        p->running[l]++;
        pthread_mutex_unlock(&p->lock);
        j.run(j.arg);
        pthread_mutex_lock(&p->lock);
        p->running[l]--;
        /* a bulk job's place is free: a worker that waits for one wakes */
        if (l == SRV_LANE_BULK && p->waiting[SRV_LANE_BULK] > 0)
            pthread_cond_signal(&p->ready);
        if (p->stopping && total(p->waiting) == 0)
            pthread_cond_broadcast(&p->ready);
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
    p->queues = calloc(queue_max, sizeof *p->queues);
    p->threads = calloc(workers, sizeof *p->threads);
    if (p->jobs == NULL || p->queues == NULL || p->threads == NULL) {
        free(p->jobs);
        free(p->queues);
        free(p->threads);
        free(p);
        return NULL;
    }
    for (uint32_t i = 0; i < queue_max; i++) {
        p->jobs[i].next = i + 1 < queue_max ? i + 1 : NONE;
        p->queues[i].next = i + 1 < queue_max ? i + 1 : NONE;
    }
    p->free_job = p->free_queue = 0;
    for (int l = 0; l < SRV_LANES; l++)
        p->turn[l] = NONE;
    p->queue_max = queue_max;
    /* one worker is kept from bulk jobs, when there are two or more */
    p->bulk_max = workers > 1 ? workers - 1 : 1;
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

/* The queue of client in lane l's ring, or NONE. */
static uint32_t find_queue(const srv_compute_pool *p, srv_lane l,
                           const srv_addr *client) {
    uint32_t q = p->turn[l];
    if (q == NONE)
        return NONE;
    do {
        if (memcmp(&p->queues[q].client, client, sizeof *client) == 0)
            return q;
        q = p->queues[q].next;
    } while (q != p->turn[l]);
    return NONE;
}

/* Job j into client's queue of lane l (a new queue goes last in the ring:
 * its turn comes after every client already waiting). */
static void enqueue(srv_compute_pool *p, srv_lane l, uint32_t j,
                    const srv_addr *client) {
    uint32_t q = find_queue(p, l, client);
    if (q != NONE) {
        p->jobs[p->queues[q].last].next = j;
        p->queues[q].last = j;
        return;
    }
    q = p->free_queue;
    p->free_queue = p->queues[q].next;
    client_queue *cq = &p->queues[q];
    cq->client = *client;
    cq->first = cq->last = j;
    if (p->turn[l] == NONE) {
        cq->next = cq->prev = q;
        p->turn[l] = q;
    } else {
        uint32_t last = p->queues[p->turn[l]].prev;
        cq->next = p->turn[l];
        cq->prev = last;
        p->queues[last].next = q;
        p->queues[p->turn[l]].prev = q;
    }
}

int srv_compute_pool_submit(srv_compute_pool *p, srv_compute_fn run, void *arg,
                            srv_lane lane, const srv_addr *client) {
    static const srv_addr nobody; /* all zeros: "::", never a peer */
    if (client == NULL)
        client = &nobody;
    if (lane >= SRV_LANES)
        lane = SRV_LANE_INTERACTIVE;
    pthread_mutex_lock(&p->lock);
    int ok = !p->stopping && total(p->waiting) < p->queue_max;
    if (ok) {
        uint32_t j = p->free_job;
        p->free_job = p->jobs[j].next;
        p->jobs[j] = (job){run, arg, NONE, lane};
        enqueue(p, lane, j, client);
        p->waiting[lane]++;
        pthread_cond_signal(&p->ready);
    }
    pthread_mutex_unlock(&p->lock);
    return ok ? 0 : -1;
}

/* counts[lane], or their sum for lane SRV_LANES, under the lock. */
static unsigned count_of(srv_compute_pool *p, const unsigned *counts,
                         srv_lane lane) {
    pthread_mutex_lock(&p->lock);
    unsigned n = lane < SRV_LANES ? counts[lane] : total(counts);
    pthread_mutex_unlock(&p->lock);
    return n;
}

unsigned srv_compute_pool_waiting(srv_compute_pool *p) {
    return count_of(p, p->waiting, SRV_LANES);
}

unsigned srv_compute_pool_running(srv_compute_pool *p) {
    return count_of(p, p->running, SRV_LANES);
}

unsigned srv_compute_pool_lane_waiting(srv_compute_pool *p, srv_lane lane) {
    return count_of(p, p->waiting, lane);
}

unsigned srv_compute_pool_lane_running(srv_compute_pool *p, srv_lane lane) {
    return count_of(p, p->running, lane);
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
    free(p->queues);
    free(p->threads);
    free(p);
}
