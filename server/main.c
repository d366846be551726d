/*
 * main.c — attnd's entry point: read the options, size the BLAS thread
 * count against the HTTP worker pool, serve, and drain on SIGTERM/SIGINT
 * (readiness 503, stop accepting, finish in-flight requests within
 * --shutdown-grace, exit 0). Signals are taken with sigtimedwait in this
 * thread; every other thread has them blocked.
 */
#include <cblas.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "cors.h"
#include "healthcheck.h"
#include "http.h"
#include "log.h"
#include "options.h"
#include "request_id.h"

#define HEALTHCHECK_TIMEOUT_MS 3000
#define DRAIN_POLL_MS 20

/* BLAS threads per request: the cores divided among the HTTP workers, so
 * that a full pool of concurrent requests never runs more compute threads
 * than cores (one each when there are at least as many workers as cores;
 * every core for a single worker). */
static int blas_threads_for(unsigned http_threads) {
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 1)
        ncpu = 1;
    long n = ncpu / (long)http_threads;
    return n >= 1 ? (int)n : 1;
}

static int set_blas_threads(int n) {
#ifdef OPENBLAS_VERSION
    openblas_set_num_threads(n);
    return openblas_get_num_threads();
#else
    (void)n;
    return 1;
#endif
}

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for in-flight requests to finish, at most grace_s seconds; a second
 * signal cuts the wait short. Returns the requests still running. */
static unsigned drain(srv_http *srv, const sigset_t *stop, unsigned grace_s) {
    long long deadline = now_ms() + (long long)grace_s * 1000;
    unsigned left;
    while ((left = srv_http_in_flight(srv)) > 0 && now_ms() < deadline) {
        struct timespec tick = {0, DRAIN_POLL_MS * 1000000L};
        if (sigtimedwait(stop, NULL, &tick) > 0)
            break;
    }
    return srv_http_in_flight(srv);
}

int main(int argc, char **argv) {
    srv_options opts;
    srv_options_default(&opts);
    switch (srv_options_parse(&opts, argc, argv)) {
    case SRV_OPT_RUN:
        break;
    case SRV_OPT_EXIT_OK:
        return 0;
    case SRV_OPT_EXIT_BAD:
        return 2;
    }
    if (opts.healthcheck)
        return srv_healthcheck(opts.bind, opts.port, HEALTHCHECK_TIMEOUT_MS);
    if (srv_cors_init(opts.cors_origin) != 0) {
        fprintf(stderr,
                "attnd: --cors-origin: invalid value '%s' (expected * or a "
                "comma-separated list of origins)\n",
                opts.cors_origin);
        return 2;
    }
    srv_log_init(opts.log_format);
    srv_request_id_init();

    /* Block the stop signals before any thread exists so that every
     * libmicrohttpd and OpenBLAS thread inherits the mask. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    int blas_threads = set_blas_threads(blas_threads_for(opts.threads));
    api_set_threads((int)opts.threads, blas_threads);
    api_set_ready(1);

    api_limits limits;
    api_limits_default(&limits);
    limits.max_body_bytes = opts.max_body_bytes;
    limits.max_elements = opts.max_elements;
    limits.max_work = opts.max_work;

    srv_http *srv = srv_http_start(&opts, &limits);
    if (srv == NULL)
        return 1;
    const char *host = opts.bind;
    int v6 = 0;
    for (const char *p = host; *p; p++)
        v6 |= *p == ':';
    srv_log_message("info",
                    "attnd listening on http://%s%s%s:%u (%u HTTP threads, "
                    "%d BLAS threads)",
                    v6 ? "[" : "", host, v6 ? "]" : "", srv_http_port(srv),
                    opts.threads, blas_threads);

    int sig;
    while (sigwait(&stop, &sig) != 0)
        ;
    srv_log_message("info", "attnd: %s received, draining (%u in flight)",
                    sig == SIGTERM ? "SIGTERM" : "SIGINT",
                    srv_http_in_flight(srv));
    api_set_ready(0);
    if (srv_http_quiesce(srv) != 0)
        srv_log_message("warning", "could not stop accepting connections");
    unsigned left = drain(srv, &stop, opts.shutdown_grace_s);
    if (left > 0)
        srv_log_message("warning", "closing %u unfinished request%s", left,
                        left == 1 ? "" : "s");
    srv_http_stop(srv);
    srv_log_message("info", "attnd: stopped");
    return 0;
}
