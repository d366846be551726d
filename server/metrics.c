/*
 * metrics.c — lock-free request counters and their Prometheus text
 * rendering (see metrics.h; format: Prometheus "Exposition formats",
 * text format 0.0.4).
 *
 * Layout: requests[route][method][status − 200] counts requests; each
 * route has a histogram row of per-bucket counts (not cumulative: one
 * increment per request, summed when rendered) and a duration sum in
 * nanoseconds. Slot SRV_METRICS_MAX_ROUTES is "other". Untouched rows of
 * the zero-initialised arrays cost no memory.
 */
#include "metrics.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "log.h"
#include "refusals.h"

#define OTHER_ROUTE SRV_METRICS_MAX_ROUTES
#define N_ROUTE_SLOTS (SRV_METRICS_MAX_ROUTES + 1)
#define STATUS_MIN 200
#define STATUS_MAX 599
#define N_STATUS (STATUS_MAX - STATUS_MIN + 1)

static const char *const methods[] = {"GET", "HEAD", "POST", "OPTIONS",
                                      "other"};
#define N_METHODS (sizeof methods / sizeof methods[0])
#define OTHER_METHOD (N_METHODS - 1)

static const double bucket_le[] = {SRV_METRICS_BUCKETS};
#define N_BUCKETS (sizeof bucket_le / sizeof bucket_le[0])

/* Route templates by slot; distinct, from the api's table. */
static const char *routes[SRV_METRICS_MAX_ROUTES];
static size_t n_routes;

static atomic_ullong requests[N_ROUTE_SLOTS][N_METHODS][N_STATUS];
static atomic_ullong buckets[N_ROUTE_SLOTS][N_BUCKETS + 1]; /* + Inf */
static atomic_ullong duration_ns[N_ROUTE_SLOTS];
static atomic_ullong request_bytes;
static atomic_ullong response_bytes;
static atomic_llong in_flight;
static _Atomic(srv_compute_pool *) pool_shown;

void srv_metrics_init(void) {
    n_routes = 0;
    for (size_t i = 0; api_route_template(i) != NULL; i++) {
        const char *t = api_route_template(i);
        size_t j = 0;
        while (j < n_routes && strcmp(routes[j], t) != 0)
            j++;
        if (j < n_routes)
            continue; /* one path with several methods */
        if (n_routes == SRV_METRICS_MAX_ROUTES) {
            srv_log_message("warning",
                            "metrics: more than %d routes; %s and later "
                            "ones are counted as \"other\"",
                            SRV_METRICS_MAX_ROUTES, t);
            break;
        }
        routes[n_routes++] = t;
    }
    api_set_metrics_source(&srv_metrics_render);
}

/* The slot of a route template: the api hands back pointers into its own
 * table, so the pointer usually matches before any strcmp. */
static size_t route_slot(const char *route) {
    if (route == NULL)
        return OTHER_ROUTE;
    for (size_t i = 0; i < n_routes; i++)
        if (routes[i] == route)
            return i;
    for (size_t i = 0; i < n_routes; i++)
        if (strcmp(routes[i], route) == 0)
            return i;
    return OTHER_ROUTE;
}

static size_t method_slot(const char *method) {
    if (method != NULL)
        for (size_t i = 0; i < OTHER_METHOD; i++)
            if (strcmp(methods[i], method) == 0)
                return i;
    return OTHER_METHOD;
}

/* The first bucket whose upper bound holds d (N_BUCKETS: +Inf). */
static size_t bucket_slot(double d) {
    size_t i = 0;
    while (i < N_BUCKETS && d > bucket_le[i])
        i++;
    return i;
}

void srv_metrics_request_started(void) {
    atomic_fetch_add_explicit(&in_flight, 1, memory_order_relaxed);
}

void srv_metrics_request_finished(const srv_metrics_sample *s) {
    atomic_fetch_add_explicit(&request_bytes, s->request_bytes,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&response_bytes, s->response_bytes,
                              memory_order_relaxed);
    if (s->status >= STATUS_MIN && s->status <= STATUS_MAX) {
        size_t r = route_slot(s->route);
        atomic_fetch_add_explicit(
            &requests[r][method_slot(s->method)][s->status - STATUS_MIN], 1,
            memory_order_relaxed);
        double d = s->duration_s > 0 ? s->duration_s : 0;
        atomic_fetch_add_explicit(&buckets[r][bucket_slot(d)], 1,
                                  memory_order_relaxed);
        /* 2^64 ns is 584 years: a sum that never wraps in practice */
        atomic_fetch_add_explicit(&duration_ns[r],
                                  (unsigned long long)(d * 1e9),
                                  memory_order_relaxed);
    }
    /* last, with release order: a scrape that sees the gauge drop (acquire)
     * sees this request counted */
    atomic_fetch_sub_explicit(&in_flight, 1, memory_order_release);
}

/* ------------------------------------------------------------ rendering */

typedef struct {
    char *data;
    size_t len, cap;
    int failed;
} text;

static void putf(text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void putf(text *t, const char *fmt, ...) {
    if (t->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->data + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            t->failed = 1;
            return;
        }
        if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap * 2 + (size_t)n + 1;
        char *grown = realloc(t->data, cap);
        if (grown == NULL) {
            t->failed = 1;
            return;
        }
        t->data = grown;
        t->cap = cap;
    }
}

/* A route label value. Templates are ASCII paths, but the format's label
 * escapes (backslash, double quote, newline) are applied all the same. */
static void put_label(text *t, const char *s) {
    for (; *s != '\0'; s++) {
        if (*s == '\\' || *s == '"')
            putf(t, "\\%c", *s);
        else if (*s == '\n')
            putf(t, "\\n");
        else
            putf(t, "%c", *s);
    }
}

static const char *route_name(size_t slot) {
    return slot == OTHER_ROUTE ? "other" : routes[slot];
}

static int slot_in_use(size_t slot) {
    return slot == OTHER_ROUTE || slot < n_routes;
}

static unsigned long long load(atomic_ullong *a) {
    return atomic_load_explicit(a, memory_order_relaxed);
}

static void render_requests(text *t) {
    putf(t, "# HELP attnd_requests_total Requests answered, by route "
            "template, method and status.\n"
            "# TYPE attnd_requests_total counter\n");
    for (size_t r = 0; r < N_ROUTE_SLOTS; r++) {
        if (!slot_in_use(r))
            continue;
        for (size_t m = 0; m < N_METHODS; m++)
            for (size_t s = 0; s < N_STATUS; s++) {
                unsigned long long n = load(&requests[r][m][s]);
                if (n == 0)
                    continue;
                putf(t, "attnd_requests_total{route=\"");
                put_label(t, route_name(r));
                putf(t, "\",method=\"%s\",status=\"%zu\"} %llu\n", methods[m],
                     s + STATUS_MIN, n);
            }
    }
}

static void render_durations(text *t) {
    putf(t, "# HELP attnd_request_duration_seconds Time from a request's "
            "first byte to its last response byte, by route template.\n"
            "# TYPE attnd_request_duration_seconds histogram\n");
    for (size_t r = 0; r < N_ROUTE_SLOTS; r++) {
        if (!slot_in_use(r))
            continue;
        unsigned long long counts[N_BUCKETS + 1], total = 0;
        for (size_t b = 0; b <= N_BUCKETS; b++) {
            counts[b] = load(&buckets[r][b]);
            total += counts[b];
        }
        if (total == 0)
            continue;
        unsigned long long cumulative = 0;
        for (size_t b = 0; b <= N_BUCKETS; b++) {
            cumulative += counts[b];
            putf(t, "attnd_request_duration_seconds_bucket{route=\"");
            put_label(t, route_name(r));
            if (b < N_BUCKETS)
                putf(t, "\",le=\"%g\"} %llu\n", bucket_le[b], cumulative);
            else
                putf(t, "\",le=\"+Inf\"} %llu\n", cumulative);
        }
        putf(t, "attnd_request_duration_seconds_sum{route=\"");
        put_label(t, route_name(r));
        putf(t, "\"} %.9f\n", (double)load(&duration_ns[r]) / 1e9);
        putf(t, "attnd_request_duration_seconds_count{route=\"");
        put_label(t, route_name(r));
        putf(t, "\"} %llu\n", total);
    }
}

void srv_metrics_show_pool(srv_compute_pool *pool) {
    atomic_store(&pool_shown, pool);
}

/* The compute pool's jobs by lane (compute_pool.h). */
static void render_lanes(text *t) {
    srv_compute_pool *pool = atomic_load(&pool_shown);
    if (pool == NULL)
        return;
    static const char *const what[2] = {"waiting", "running"};
    for (int k = 0; k < 2; k++) {
        putf(t,
             "# HELP attnd_compute_%s_jobs Jobs %s in each compute lane: "
             "interactive first, then grading, then bulk.\n"
             "# TYPE attnd_compute_%s_jobs gauge\n",
             what[k], k ? "running" : "waiting to run", what[k]);
        for (int l = 0; l < SRV_LANES; l++)
            putf(t, "attnd_compute_%s_jobs{lane=\"%s\"} %u\n", what[k],
                 srv_lane_name((srv_lane)l),
                 k ? srv_compute_pool_lane_running(pool, (srv_lane)l)
                   : srv_compute_pool_lane_waiting(pool, (srv_lane)l));
    }
}

char *srv_metrics_render(size_t *len) {
    text t = {.data = malloc(8192), .len = 0, .cap = 8192, .failed = 0};
    if (t.data == NULL)
        return NULL;
    /* first: every request the gauge no longer holds is in what follows */
    long long flying = atomic_load_explicit(&in_flight, memory_order_acquire);
    render_requests(&t);
    render_durations(&t);
    putf(&t,
         "# HELP attnd_in_flight_requests Requests between their first byte "
         "and their last response byte.\n"
         "# TYPE attnd_in_flight_requests gauge\n"
         "attnd_in_flight_requests %lld\n"
         "# HELP attnd_request_bytes_total Request body bytes received.\n"
         "# TYPE attnd_request_bytes_total counter\n"
         "attnd_request_bytes_total %llu\n"
         "# HELP attnd_response_bytes_total Response body bytes sent, after "
         "compression.\n"
         "# TYPE attnd_response_bytes_total counter\n"
         "attnd_response_bytes_total %llu\n",
         flying > 0 ? flying : 0, load(&request_bytes), load(&response_bytes));
    api_budget_usage u;
    api_budget_stats(&u);
    putf(&t,
         "# HELP attnd_memory_budget_bytes The server-wide memory budget "
         "(--memory-budget; 0: none).\n"
         "# TYPE attnd_memory_budget_bytes gauge\n"
         "attnd_memory_budget_bytes %llu\n"
         "# HELP attnd_memory_reserved_bytes Memory requests hold now: "
         "bodies, trees, tensors and answers being sent.\n"
         "# TYPE attnd_memory_reserved_bytes gauge\n"
         "attnd_memory_reserved_bytes %llu\n"
         "# HELP attnd_memory_reserved_peak_bytes The most reserved at once "
         "since start.\n"
         "# TYPE attnd_memory_reserved_peak_bytes gauge\n"
         "attnd_memory_reserved_peak_bytes %llu\n"
         "# HELP attnd_memory_waiting_requests Requests waiting for room in "
         "the memory budget.\n"
         "# TYPE attnd_memory_waiting_requests gauge\n"
         "attnd_memory_waiting_requests %u\n"
         "# HELP attnd_memory_refusals_total Requests answered 503 for want "
         "of room in the memory budget.\n"
         "# TYPE attnd_memory_refusals_total counter\n"
         "attnd_memory_refusals_total %llu\n",
         (unsigned long long)u.total, (unsigned long long)u.used,
         (unsigned long long)u.peak, u.waiting, (unsigned long long)u.refusals);
    char refused[1024];
    if (srv_refusals_render(refused, sizeof refused) < sizeof refused)
        putf(&t, "%s", refused);
    render_lanes(&t);
    api_answer_cache_usage c;
    api_answer_cache_stats(&c);
    putf(&t,
         "# HELP attnd_answers_total Answers of routes whose answer is a "
         "function of the request, by how they were made: computed, taken "
         "from the answers kept, or shared with an identical request "
         "computing at once.\n"
         "# TYPE attnd_answers_total counter\n"
         "attnd_answers_total{source=\"computed\"} %llu\n"
         "attnd_answers_total{source=\"kept\"} %llu\n"
         "attnd_answers_total{source=\"shared\"} %llu\n",
         (unsigned long long)c.computed, (unsigned long long)c.hits,
         (unsigned long long)c.shared);
    if (t.failed) {
        free(t.data);
        return NULL;
    }
    *len = t.len;
    return t.data;
}
