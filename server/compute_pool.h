/*
 * compute_pool.h — the threads that compute, apart from the HTTP threads.
 *
 * A request that computes (API_ROUTE_COMPUTES) is handed to this pool
 * while its connection is suspended (MHD_suspend_connection), and resumed
 * when the answer is ready, so that the HTTP threads stay free for
 * /healthz, /v2/health/..., /metrics and every other short answer however
 * long the computing takes (docs/contract.md section 1, "Sharing one
 * server"). The queue is bounded: a job beyond it is refused at once, and
 * its request gets 503 overloaded with Retry-After.
 *
 * Jobs run in three lanes (docs/contract.md section 14): interactive
 * (a student's click), grading (POST /grade) and bulk (POST /grade/batch,
 * and any request with a large body). The pool's workers take an
 * interactive job first, then a grading one; bulk jobs have workers of
 * their own (one fewer than the others, at least one), which run at nice
 * 10, so that the kernel gives the cores to the HTTP threads and the
 * other workers first. An interactive click then waits behind no batch,
 * neither in the queue nor for a core, only behind the click or grade a
 * worker is finishing.
 *
 * Within a lane the queue is fair between clients: each client (the
 * identity the per-client limits use, client_addr.h, or its token) has a
 * queue of its own, first come first served within it, and a free worker
 * takes the next job round-robin over the clients that hold one. In the
 * interactive and grading lanes one client runs at most half the workers'
 * jobs at once (at least one), so that a client whose jobs each compute
 * for seconds never holds every worker while another client's job waits
 * (docs/operations.md, "Compute pool").
 */
#ifndef SRV_COMPUTE_POOL_H
#define SRV_COMPUTE_POOL_H

#include "client_addr.h"

typedef struct srv_compute_pool srv_compute_pool;

/* The lanes, served in this order. */
typedef enum {
    SRV_LANE_INTERACTIVE = 0,
    SRV_LANE_GRADING,
    SRV_LANE_BULK,
    SRV_LANES
} srv_lane;

/* The lane's name for /metrics: "interactive", "grading", "bulk". */
const char *srv_lane_name(srv_lane lane);

/* One job: run(arg) on a worker thread. */
typedef void (*srv_compute_fn)(void *arg);

/* A pool of `workers` threads (≥ 1) for the interactive and grading
 * lanes, max(workers - 1, 1) more for the bulk lane, and a queue of at
 * most `queue_max` jobs waiting (≥ 1), over all clients. Returns NULL
 * when threads or memory run out. */
srv_compute_pool *srv_compute_pool_new(unsigned workers, unsigned queue_max);

/* Queue run(arg) in `lane`, in the queue of `client` (NULL: one queue
 * shared by every job without a client). Returns 0, or -1 when the queue
 * is full or the pool is stopping (run is then not called). */
int srv_compute_pool_submit(srv_compute_pool *p, srv_compute_fn run, void *arg,
                            srv_lane lane, const srv_addr *client);

/* Jobs waiting, and jobs running now, in every lane. */
unsigned srv_compute_pool_waiting(srv_compute_pool *p);
unsigned srv_compute_pool_running(srv_compute_pool *p);

/* The same for one lane. */
unsigned srv_compute_pool_lane_waiting(srv_compute_pool *p, srv_lane lane);
unsigned srv_compute_pool_lane_running(srv_compute_pool *p, srv_lane lane);

/* Run what is queued, then stop the workers and free the pool (NULL: no
 * effect). */
void srv_compute_pool_free(srv_compute_pool *p);

#endif /* SRV_COMPUTE_POOL_H */
