/*
 * metrics.h — request counters for GET /metrics in the Prometheus text
 * exposition format 0.0.4 (docs/contract.md section 14):
 *   attnd_requests_total{route, method, status}     counter
 *   attnd_request_duration_seconds{route}           histogram
 *   attnd_in_flight_requests                        gauge
 *   attnd_request_bytes_total, attnd_response_bytes_total  counters
 *   attnd_refused_total{reason}                     counter (refusals.h)
 *   attnd_compute_waiting_jobs{lane}, attnd_compute_running_jobs{lane}
 *                                                   gauges (compute_pool.h)
 * (attnd_build_info comes from the api layer, which knows the version.)
 *
 * Labels are bounded whatever clients send: route is a route template from
 * the api's table or "other", method one of GET, HEAD, POST, OPTIONS or
 * "other", status a code from 200 to 599. Every counter is a relaxed
 * atomic in a fixed array, so recording a request takes no lock.
 */
#ifndef SRV_METRICS_H
#define SRV_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "compute_pool.h"

/* Route templates counted apart; the api's table must fit (routes past it
 * are counted as "other" and srv_metrics_init says so). */
#define SRV_METRICS_MAX_ROUTES 48

/* Upper bounds of the duration histogram, seconds (the +Inf bucket is
 * added): from a health probe (~50 µs) to a request near --max-work. */
#define SRV_METRICS_BUCKETS                                                    \
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,     \
        0.25, 0.5, 1, 2.5, 5, 10, 30

/* One finished request. */
typedef struct {
    const char *route;  /* api_response.route: a template, "other" or NULL */
    const char *method; /* request method as sent; NULL: unknown */
    int status;         /* status sent; 0 when none was (not counted) */
    uint64_t request_bytes;  /* body bytes received, kept or not */
    uint64_t response_bytes; /* body bytes sent (after gzip; 0 for HEAD) */
    double duration_s;       /* first byte to completion, seconds */
} srv_metrics_sample;

/* Learn the route templates from the api's table and make GET /metrics
 * render srv_metrics_render's text. Call once, after srv_log_init and
 * before serving. Routes past SRV_METRICS_MAX_ROUTES templates are counted
 * as "other", with a warning in the log. */
void srv_metrics_init(void);

/* Show pool's lanes on GET /metrics from now on (NULL: no more; call
 * before the pool is freed). */
void srv_metrics_show_pool(srv_compute_pool *pool);

/* A request has started (its first byte arrived): in-flight + 1.
 * Thread-safe, lock-free. */
void srv_metrics_request_started(void);

/* A request started with srv_metrics_request_started has ended: in-flight
 * − 1, and, when s->status is 200 … 599, the request, duration and byte
 * counters move (bytes are counted whatever the status). Thread-safe,
 * lock-free. */
void srv_metrics_request_finished(const srv_metrics_sample *s);

/* The counters as Prometheus text (format 0.0.4): a malloc'd buffer of
 * *len bytes, owned by the caller (free()); NULL when memory runs out.
 * Series whose counter is zero are left out, except the histograms of
 * routes that have seen a request and the gauge. A request that the
 * gauge no longer counts is counted in every other series; counters read
 * while requests finish may be a request apart from each other; each
 * histogram's _count is the sum of its buckets. */
char *srv_metrics_render(size_t *len);

#endif /* SRV_METRICS_H */
