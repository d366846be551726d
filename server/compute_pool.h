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
 * The queue is fair between clients: each client (the identity the
 * per-client limits use, client_addr.h) has a lane of its own, first come
 * first served within it, and a free worker takes the next job round-robin
 * over the lanes that hold one. A client that queues a hundred slow jobs
 * then delays another client's job by at most one job per worker, not by
 * the hundred (docs/operations.md, "Compute pool").
 */
#ifndef SRV_COMPUTE_POOL_H
#define SRV_COMPUTE_POOL_H

#include "client_addr.h"

typedef struct srv_compute_pool srv_compute_pool;

/* One job: run(arg) on a worker thread. */
typedef void (*srv_compute_fn)(void *arg);

/* A pool of `workers` threads (≥ 1) and a queue of at most `queue_max`
 * jobs waiting (≥ 1), over all clients. Returns NULL when threads or
 * memory run out. */
srv_compute_pool *srv_compute_pool_new(unsigned workers, unsigned queue_max);

/* Queue run(arg) in the lane of `client` (NULL: one lane shared by every
 * job without a client). Returns 0, or -1 when the queue is full or the
 * pool is stopping (run is then not called). */
int srv_compute_pool_submit(srv_compute_pool *p, srv_compute_fn run, void *arg,
                            const srv_addr *client);

/* Jobs waiting, and jobs running now. */
unsigned srv_compute_pool_waiting(srv_compute_pool *p);
unsigned srv_compute_pool_running(srv_compute_pool *p);

/* Run what is queued, then stop the workers and free the pool (NULL: no
 * effect). */
void srv_compute_pool_free(srv_compute_pool *p);

#endif /* SRV_COMPUTE_POOL_H */
