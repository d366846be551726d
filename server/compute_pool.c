/*
 * compute_pool.c — worker threads behind a bounded queue of three lanes,
 * each fair between clients (see compute_pool.h), under one mutex, with
 * a condition variable for each kind of worker waiting for a job it may
 * take: the workers of the interactive and grading lanes, and the bulk
 * lane's own workers, which run at a lower priority (BULK_NICE).
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
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NONE UINT32_MAX

/* The nice value of the bulk lane's workers: a weight of 110 against the
 * 1024 of the HTTP threads and the other workers (the kernel's CFS
 * weights), so that a batch takes the cores only when the class leaves
 * them idle. Raising a thread's nice value needs no privilege. */
#define BULK_NICE 10

typedef struct {
    srv_compute_fn run;
    void *arg;
    uint32_t next; /* the next job of its queue, or the next free slot */
    srv_lane lane;
    srv_addr client;
} job;

/* A client with jobs running in the interactive and grading lanes. */
typedef struct {
    srv_addr client;
    unsigned jobs;
} busy_client;

typedef struct {
    srv_addr client;
    uint32_t first, last; /* its jobs, oldest first */
    uint32_t next, prev;  /* its lane's ring, or the next free queue */
} client_queue;

struct srv_compute_pool {
    pthread_mutex_t lock;
    /* a job may be taken, or the pool is stopping: [0] for the workers of
     * the interactive and grading lanes, [1] for the bulk lane's */
    pthread_cond_t ready[2];
    job *jobs;            /* queue_max slots */
    client_queue *queues; /* queue_max queues */
    uint32_t free_job, free_queue;
    /* per lane: the client queue served next (NONE: nothing waits), and
     * the jobs waiting and running */
    uint32_t turn[SRV_LANES];
    unsigned waiting[SRV_LANES], running[SRV_LANES];
    unsigned queue_max;
    int stopping;
    pthread_t *threads; /* the workers, then the bulk lane's workers */
    unsigned n_threads;
    /* the interactive and grading lanes' clients with jobs running (at
     * most one per worker), and how many one client may run at once */
    busy_client *busy;
    unsigned n_busy, client_max;
};

static const char *const lane_names[SRV_LANES] = {"interactive", "grading",
                                                  "bulk"};

const char *srv_lane_name(srv_lane lane) {
    return lane < SRV_LANES ? lane_names[lane] : "interactive";
}

/* The jobs client runs now in the interactive and grading lanes. */
static unsigned busy_jobs(const srv_compute_pool *p, const srv_addr *client) {
    for (unsigned i = 0; i < p->n_busy; i++)
        if (memcmp(&p->busy[i].client, client, sizeof *client) == 0)
            return p->busy[i].jobs;
    return 0;
}

/* client runs one more job (delta 1), or one fewer (-1). */
static void busy_add(srv_compute_pool *p, const srv_addr *client, int delta) {
    unsigned i = 0;
    while (i < p->n_busy &&
           memcmp(&p->busy[i].client, client, sizeof *client) != 0)
        i++;
    if (i == p->n_busy) { /* delta is 1: at most one entry per worker */
        p->busy[p->n_busy++] = (busy_client){*client, 0};
    }
    p->busy[i].jobs += (unsigned)delta;
    if (p->busy[i].jobs == 0)
        p->busy[i] = p->busy[--p->n_busy];
}

/* The first client queue of lane l, from its turn on, whose client may
 * run one more job, or NONE: in the interactive and grading lanes a
 * client runs at most client_max jobs at once, so that one client whose
 * jobs are long never holds every worker while others wait. */
static uint32_t eligible_queue(const srv_compute_pool *p, srv_lane l) {
    uint32_t q = p->turn[l];
    if (q == NONE || l == SRV_LANE_BULK)
        return q;
    do {
        if (busy_jobs(p, &p->queues[q].client) < p->client_max)
            return q;
        q = p->queues[q].next;
    } while (q != p->turn[l]);
    return NONE;
}

/* The lane a free worker serves next, or SRV_LANES when none has a job it
 * may take: for a bulk worker the bulk lane, else the first of the
 * interactive and grading lanes, in that order. */
static srv_lane next_lane(const srv_compute_pool *p, int bulk) {
    if (bulk)
        return p->waiting[SRV_LANE_BULK] > 0 ? SRV_LANE_BULK : SRV_LANES;
    for (int l = 0; l < SRV_LANE_BULK; l++)
        if (eligible_queue(p, (srv_lane)l) != NONE)
            return (srv_lane)l;
    return SRV_LANES;
}

/* Jobs waiting in the lanes a worker of this kind serves. */
static unsigned waiting_for(const srv_compute_pool *p, int bulk) {
    return bulk ? p->waiting[SRV_LANE_BULK]
                : p->waiting[SRV_LANE_INTERACTIVE] +
                      p->waiting[SRV_LANE_GRADING];
}

/* The next job of lane l, round-robin over its clients that may run one
 * more (eligible_queue is not NONE). */
static job take(srv_compute_pool *p, srv_lane l) {
    uint32_t q = p->turn[l] = eligible_queue(p, l);
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

/* A worker's loop: the jobs of its kind until the pool stops with none
 * of them left. */
static void serve(srv_compute_pool *p, int bulk) {
    pthread_mutex_lock(&p->lock);
    for (;;) {
        srv_lane l;
        /* stopping, the jobs left are run before the worker ends */
        while ((l = next_lane(p, bulk)) == SRV_LANES &&
               !(p->stopping && waiting_for(p, bulk) == 0))
            pthread_cond_wait(&p->ready[bulk], &p->lock);
        if (l == SRV_LANES) /* stopping, and nothing left to run */
            break;
        job j = take(p, l);
        p->running[l]++;
        if (!bulk)
            busy_add(p, &j.client, 1);
        pthread_mutex_unlock(&p->lock);
        j.run(j.arg);
        pthread_mutex_lock(&p->lock);
        p->running[l]--;
        if (!bulk) {
            busy_add(p, &j.client, -1);
            /* its client may run another: a worker waiting for one wakes */
            if (waiting_for(p, 0) > 0)
                pthread_cond_broadcast(&p->ready[0]);
        }
    }
    pthread_mutex_unlock(&p->lock);
}

static void *worker(void *cls) {
    serve(cls, 0);
    return NULL;
}

static void *bulk_worker(void *cls) {
    /* this thread only (Linux: a thread's nice value is its own) */
    (void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), BULK_NICE);
    serve(cls, 1);
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
    /* as many bulk workers as workers but one (at least one), so that on
     * an idle machine a batch still has every core but one */
    unsigned bulk_workers = workers > 1 ? workers - 1 : 1;
    p->threads = calloc(workers + bulk_workers, sizeof *p->threads);
    p->busy = calloc(workers, sizeof *p->busy);
    /* half the workers (at least one) for one client's jobs */
    p->client_max = workers > 1 ? workers / 2 : 1;
    if (p->jobs == NULL || p->queues == NULL || p->threads == NULL ||
        p->busy == NULL) {
        free(p->jobs);
        free(p->queues);
        free(p->threads);
        free(p->busy);
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
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->ready[0], NULL);
    pthread_cond_init(&p->ready[1], NULL);
    /* every thread or none: a pool without one kind would leave its lanes
     * waiting for ever */
    for (; p->n_threads < workers + bulk_workers; p->n_threads++)
        if (pthread_create(&p->threads[p->n_threads], NULL,
                           p->n_threads < workers ? worker : bulk_worker,
                           p) != 0) {
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
        p->jobs[j] = (job){run, arg, NONE, lane, *client};
        enqueue(p, lane, j, client);
        p->waiting[lane]++;
        pthread_cond_signal(&p->ready[lane == SRV_LANE_BULK]);
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
    pthread_cond_broadcast(&p->ready[0]);
    pthread_cond_broadcast(&p->ready[1]);
    pthread_mutex_unlock(&p->lock);
    for (unsigned i = 0; i < p->n_threads; i++)
        pthread_join(p->threads[i], NULL);
    pthread_cond_destroy(&p->ready[0]);
    pthread_cond_destroy(&p->ready[1]);
    pthread_mutex_destroy(&p->lock);
    free(p->jobs);
    free(p->queues);
    free(p->threads);
    free(p->busy);
    free(p);
}
