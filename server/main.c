/*
 * main.c — attnd's entry point: read the options, size the BLAS thread
 * count against the HTTP worker pool, serve, and drain on SIGTERM/SIGINT
 * (readiness 503, stop accepting, finish in-flight requests within
 * --shutdown-grace, exit 0; the probe listener, probe.h, answers until
 * the end). The signal handler only writes the signal
 * number to a pipe (the self-pipe trick); this thread reads it and does the
 * work. A handler, not sigwait: OpenBLAS starts its threads before main, so
 * a blocked-signal mask cannot cover every thread. `attnd run` and `attnd
 * grade` answer one request without serving (offline.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "auth.h"
#include "client_addr.h"
#include "cors.h"
#include "csp.h"
#include "gate.h"
#include "gzip.h"
#include "healthcheck.h"
#include "http.h"
#include "log.h"
#include "memory_budget.h"
#include "metrics.h"
#include "offline.h"
#include "options.h"
#include "probe.h"
#include "request_id.h"
#include "roster.h"
#include "tls.h"
#include "variant_secret.h"

#define HEALTHCHECK_TIMEOUT_MS 3000
/* how long a request waits for room in the memory budget before its 503 */
#define BUDGET_WAIT_MS 2000
#define DRAIN_POLL_MS 20
#define DRAIN_SETTLE_MS 250 /* see drain */
/* Connections kept free under libmicrohttpd's limit for the 503 answers
 * of --max-connections. */
#define OVERLOAD_RESERVE 16

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

/* A large request allocates tens of MB (its body, its arena, its answer)
 * and glibc hands blocks that big back to the kernel when they are freed,
 * so the next one faults every page in again, zero-filled: a fifth of the
 * CPU time of a 7.7 MB dot request (tests/bench/README.md). Served from
 * the heap instead, freed blocks are reused; a heap keeps up to
 * KEEP_FREE_BYTES of free memory before it is trimmed. */
#define KEEP_FREE_BYTES (256 << 20)
/* Under a memory budget, the free memory each heap keeps is outside it:
 * at most a thirty-second of the budget, so that the heaps of every
 * thread that allocates (the HTTP threads, the compute threads, the probe
 * listener: about eight on two cores) keeping memory leave the process
 * within 1.3 times the budget, and within the limit the budget was taken
 * from (tests/http/admission.py measures it). */
static void keep_freed_memory(uint64_t budget) {
    uint64_t keep = KEEP_FREE_BYTES;
    if (budget > 0 && budget / 32 < keep)
        keep = budget / 32;
    mallopt(M_MMAP_THRESHOLD, (int)keep);
    mallopt(M_TRIM_THRESHOLD, (int)keep);
}

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The self-pipe: written by the handler, read by main. */
static int stop_pipe[2] = {-1, -1};

static void on_stop_signal(int sig) {
    int saved = errno;
    unsigned char b = (unsigned char)sig;
    ssize_t w = write(stop_pipe[1], &b, 1); /* async-signal-safe */
    (void)w; /* a full pipe already holds a pending stop */
    errno = saved;
}

/* Route SIGTERM and SIGINT to the pipe and ignore SIGPIPE. Returns 0, -1
 * when the pipe or a handler cannot be set up. */
static int install_stop_signals(void) {
    if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return -1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0)
        return -1;
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

/* Wait up to timeout_ms (-1: forever) for a stop signal; returns its
 * number, 0 on timeout, -1 when the pipe cannot be polled. */
static int wait_stop_signal(int timeout_ms) {
    struct pollfd p = {.fd = stop_pipe[0], .events = POLLIN};
    long long deadline = now_ms() + timeout_ms;
    for (;;) {
        int left = timeout_ms < 0 ? -1 : (int)(deadline - now_ms());
        if (timeout_ms >= 0 && left < 0)
            left = 0;
        int rc = poll(&p, 1, left);
        if (rc > 0) {
            unsigned char b;
            if (read(stop_pipe[0], &b, 1) == 1)
                return b;
        } else if (rc == 0) {
            return 0;
        } else if (errno != EINTR) {
            return -1;
        }
        /* EINTR (our own handler), or a racing read: wait again */
    }
}

/* Wait for in-flight requests to finish, at most grace_s seconds; a second
 * signal cuts the wait short. Then, while connections are still open, for
 * DRAIN_SETTLE_MS without a request: answers given while draining close
 * their connections, and a keep-alive client that sent its next request
 * before it read one arrives now (stopping at once would reset it, and
 * with it the answer still in the socket buffer). Returns the requests
 * still running. */
static unsigned drain(srv_http *srv, unsigned grace_s) {
    long long deadline = now_ms() + (long long)grace_s * 1000;
    long long quiet_since = now_ms();
    for (long long now = now_ms(); now < deadline; now = now_ms()) {
        if (srv_http_in_flight(srv) > 0)
            quiet_since = now;
        else if (srv_http_connections(srv) == 0 ||
                 now - quiet_since >= DRAIN_SETTLE_MS)
            break;
        if (wait_stop_signal(DRAIN_POLL_MS) != 0)
            break;
    }
    return srv_http_in_flight(srv);
}

/* Caps nest (docs/contract.md, "Sharing one server"): with
 * --max-connections N, one client may hold at most half of the N requests
 * in flight (a quarter when --max-concurrent-per-client is not given), so
 * that one client never takes every place. Not where addresses are said
 * to be shared (--max-connections-per-address 0: a class behind one NAT
 * or an untrusted proxy is one client). */
static unsigned nested_per_client(const srv_options *opts) {
    unsigned given = opts->max_concurrent_per_client;
    if (opts->max_connections == 0 || opts->max_connections_per_address == 0)
        return given;
    unsigned half = opts->max_connections / 2,
             quarter = opts->max_connections / 4;
    if (given == 0)
        return quarter > 0 ? quarter : 1;
    return given > half && half > 0 ? half : given;
}

/* The shared-lab settings (each off unless given): the admission gate
 * (per-client limits, trusted proxies, tokens, the in-flight cap) and the
 * TLS pair. Returns 0, or -1 after printing why the server must not start
 * with them. Warnings go to *warn (cap bytes; "" when none). */
static int setup_safety(const srv_options *opts, srv_gate **gate,
                        srv_tls_keys *tls, char *warn, size_t cap) {
    char err[1024];
    srv_gate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    warn[0] = '\0';
    cfg.rate_per_s = opts->rate_limit;
    cfg.burst = opts->burst;
    cfg.max_concurrent = nested_per_client(opts);
    cfg.max_in_flight = opts->max_connections;
    cfg.metrics_public = opts->metrics_public;
    if (srv_netlist_parse(&cfg.trusted, opts->trusted_proxy) != 0) {
        fprintf(stderr,
                "attnd: --trusted-proxy: invalid value '%s' (expected a "
                "comma-separated list of at most %d addresses or CIDR "
                "networks, e.g. 127.0.0.1,10.0.0.0/8)\n",
                opts->trusted_proxy, SRV_NETLIST_MAX);
        return -1;
    }
    unsigned limit = srv_http_connection_limit();
    if (opts->max_connections > 0 &&
        opts->max_connections + OVERLOAD_RESERVE > limit) {
        fprintf(stderr,
                "attnd: --max-connections %u: at most %u here (libmicrohttpd "
                "takes %u connections with this descriptor limit and %d of "
                "them answer 503 past the cap)\n",
                opts->max_connections, limit - OVERLOAD_RESERVE, limit,
                OVERLOAD_RESERVE);
        return -1;
    }
    if ((opts->tls_cert[0] != '\0') != (opts->tls_key[0] != '\0')) {
        fprintf(stderr, "attnd: --tls-cert and --tls-key go together: give "
                        "both or neither\n");
        return -1;
    }
    if (opts->tls_cert[0] != '\0' &&
        srv_tls_load(tls, opts->tls_cert, opts->tls_key, err, warn, cap) != 0) {
        fprintf(stderr, "attnd: %s\n", err);
        return -1;
    }
    if (opts->auth_token_file[0] != '\0') {
        cfg.auth = srv_auth_load(opts->auth_token_file, err, sizeof err);
        if (cfg.auth == NULL) {
            fprintf(stderr, "attnd: --auth-token-file: %s\n", err);
            srv_tls_keys_free(tls);
            return -1;
        }
    }
    if (opts->grading_token_file[0] != '\0') {
        cfg.grading = srv_auth_load(opts->grading_token_file, err, sizeof err);
        if (cfg.grading == NULL) {
            fprintf(stderr, "attnd: --grading-token-file: %s\n", err);
            srv_auth_free(cfg.auth);
            srv_tls_keys_free(tls);
            return -1;
        }
    }
    if (opts->burst > 0 && opts->rate_limit <= 0 && warn[0] == '\0')
        snprintf(warn, cap, "--burst has no effect without --rate-limit");
    if (cfg.trusted.n > 0 && opts->rate_limit <= 0 &&
        opts->max_concurrent_per_client == 0 &&
        opts->max_connections_per_address == 0 && warn[0] == '\0')
        snprintf(warn, cap,
                 "--trusted-proxy has no effect without --rate-limit, "
                 "--max-concurrent-per-client or "
                 "--max-connections-per-address");
    *gate = srv_gate_new(&cfg);
    if (*gate == NULL) {
        fprintf(stderr, "attnd: out of memory\n");
        srv_tls_keys_free(tls);
        return -1;
    }
    return 0;
}

/* One line saying which shared-lab settings are on (never a token), the
 * connections per address when given (else the default, an eighth of the
 * slots, which the line leaves out) among them. */
static void log_safety(const srv_gate *gate, const srv_options *opts) {
    const srv_gate_config *cfg = srv_gate_config_of(gate);
    char line[1024] = "";
    size_t n = 0;
    if (cfg->auth != NULL)
        n += (size_t)snprintf(line + n, sizeof line - n,
                              "; bearer token required (%zu listed)",
                              srv_auth_count(cfg->auth));
    if (cfg->grading != NULL && n < sizeof line)
        n +=
            (size_t)snprintf(line + n, sizeof line - n, "; %zu graders' tokens",
                             srv_auth_count(cfg->grading));
    if (srv_variant_secret() != NULL && n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n,
                              "; students' variants drawn from a secret");
    if (srv_roster_of_daemon() != NULL && n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n,
                              "; a roster of %zu students",
                              srv_roster_of_daemon()->n);
    if (cfg->rate_per_s > 0 && n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n,
                              "; %g requests/s per client, bursts of %u",
                              cfg->rate_per_s, cfg->burst);
    if (cfg->max_concurrent > 0 && n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n,
                              "; %u in flight per client", cfg->max_concurrent);
    if (cfg->max_in_flight > 0 && n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n,
                              "; %u in flight in all", cfg->max_in_flight);
    if (cfg->trusted.n > 0 && n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n,
                              "; X-Forwarded-For from %s", opts->trusted_proxy);
    if (opts->max_connections_per_address != SRV_PER_ADDRESS_AUTO &&
        n < sizeof line)
        n += (size_t)snprintf(line + n, sizeof line - n,
                              opts->max_connections_per_address == 0
                                  ? "; no cap on connections per address"
                                  : "; %u connections per address",
                              opts->max_connections_per_address);
    if (n > 0)
        srv_log_message("info", "attnd limits: %s", line + 2);
}

/* The server-wide memory budget of opts (--memory-budget, else from the
 * cgroup limit or RAM; *source says which), set for the api and the heaps.
 * Returns it in bytes (0: none). */
static uint64_t set_memory_budget(const srv_options *opts,
                                  const char **source) {
    uint64_t budget = srv_memory_budget(opts->memory_budget, source);
    /* half the compute threads may wait for room, so that the others
     * keep computing what fits */
    unsigned cores = (unsigned)sysconf(_SC_NPROCESSORS_ONLN);
    api_budget_set(budget, cores > 3 ? cores / 2 : 1, BUDGET_WAIT_MS);
    keep_freed_memory(budget);
    uint64_t cache = opts->answer_cache;
    if (cache == SRV_ANSWER_CACHE_AUTO) {
        cache = (uint64_t)64 << 20;
        if (budget > 0 && budget / 16 < cache)
            cache = budget / 16;
    }
    api_answer_cache_set(cache);
    return budget;
}

/* Start the listeners: the probe port's first (--probe-port; *probe NULL
 * without one), so that a probe is answered as soon as the main port is
 * and never refused by its load, then the main port. Returns the daemon,
 * or NULL after logging why, with nothing started. */
static srv_http *start_listeners(const srv_options *opts,
                                 const api_limits *limits, srv_gate *gate,
                                 srv_tls_keys *tls, srv_probe **probe) {
    *probe = NULL;
    if (opts->probe_port != 0) {
        *probe = srv_probe_start(opts->bind, opts->probe_port, limits, gate);
        if (*probe == NULL)
            return NULL;
    }
    srv_http *srv = srv_http_start(opts, limits, gate, tls);
    if (srv == NULL) {
        srv_probe_stop(*probe);
        *probe = NULL;
    }
    return srv;
}

/* The lines that say where attnd listens: its port, threads and memory
 * budget, and the probe port's. */
static void log_listening(const srv_options *opts, const srv_tls_keys *tls,
                          srv_http *srv, srv_probe *probe, int blas_threads,
                          uint64_t budget, const char *budget_source) {
    const char *host = opts->bind;
    int v6 = 0;
    for (const char *p = host; *p; p++)
        v6 |= *p == ':';
    char budget_text[96] = "no memory budget";
    if (budget >= (1u << 20))
        snprintf(budget_text, sizeof budget_text,
                 "a memory budget of %.1f MiB, %s",
                 (double)budget / (1024.0 * 1024.0), budget_source);
    else if (budget > 0)
        snprintf(budget_text, sizeof budget_text,
                 "a memory budget of %llu bytes, %s",
                 (unsigned long long)budget, budget_source);
    srv_log_message("info",
                    "attnd listening on %s://%s%s%s:%u (%u HTTP %s, %d "
                    "BLAS %s, %s)",
                    tls->cert_pem != NULL ? "https" : "http", v6 ? "[" : "",
                    host, v6 ? "]" : "", srv_http_port(srv), opts->threads,
                    opts->threads == 1 ? "thread" : "threads", blas_threads,
                    blas_threads == 1 ? "thread" : "threads", budget_text);
    if (probe != NULL)
        srv_log_message("info",
                        "attnd probes on http://%s%s%s:%u (/healthz, "
                        "/v2/health/*, /metrics)",
                        v6 ? "[" : "", host, v6 ? "]" : "",
                        srv_probe_port(probe));
}

/* Serve until SIGTERM or SIGINT, then drain: readiness 503, no new
 * connections, in-flight requests finished within grace_s seconds. */
static void serve_until_stopped(srv_http *srv, unsigned grace_s) {
    int sig = wait_stop_signal(-1);
    srv_log_message("info", "attnd: %s, draining (%u in flight)",
                    sig == SIGTERM  ? "SIGTERM received"
                    : sig == SIGINT ? "SIGINT received"
                                    : "cannot wait for signals",
                    srv_http_in_flight(srv));
    api_set_ready(0);
    if (srv_http_quiesce(srv) != 0)
        srv_log_message("warning", "could not stop accepting connections");
    unsigned left = drain(srv, grace_s);
    if (left > 0)
        srv_log_message("warning", "closing %u unfinished request%s", left,
                        left == 1 ? "" : "s");
}

int main(int argc, char **argv) {
    /* attnd run PATH, attnd grade: one request without a server */
    if (argc > 1 && srv_offline_command(argv[1]))
        return srv_offline_main(argc - 1, argv + 1);
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
        return srv_healthcheck(
            opts.bind, opts.probe_port != 0 ? opts.probe_port : opts.port,
            HEALTHCHECK_TIMEOUT_MS);
    if (srv_cors_init(opts.cors_origin) != 0) {
        fprintf(stderr,
                "attnd: --cors-origin: invalid value '%s' (expected * or a "
                "comma-separated list of origins)\n",
                opts.cors_origin);
        return 2;
    }
    srv_gate *gate = NULL;
    srv_tls_keys tls = {NULL, NULL};
    char warn[512];
    if (setup_safety(&opts, &gate, &tls, warn, sizeof warn) != 0)
        return 2;
    api_variant_secret secret;
    char secret_err[512];
    int has_secret = srv_variant_secret_read(opts.variant_secret_file, &secret,
                                             secret_err, sizeof secret_err);
    if (has_secret < 0) {
        fprintf(stderr, "attnd: --variant-secret-file: %s\n", secret_err);
        srv_gate_free(gate);
        srv_tls_keys_free(&tls);
        return 2;
    }
    if (has_secret)
        srv_variant_secret_set(&secret);
    srv_roster roster;
    memset(&roster, 0, sizeof roster);
    if (opts.roster[0] != '\0') {
        char roster_err[512];
        if (srv_roster_read(opts.roster, &roster, roster_err,
                            sizeof roster_err)) {
            fprintf(stderr, "attnd: --roster: %s\n", roster_err);
            srv_variant_secret_free(&secret);
            srv_gate_free(gate);
            srv_tls_keys_free(&tls);
            return 2;
        }
        srv_roster_set_daemon(&roster.api);
    }
    srv_log_init(opts.log_format);
    srv_request_id_init();
    srv_gzip_set_min_bytes(opts.gzip_min_bytes);
    srv_metrics_init();
    if (warn[0] != '\0')
        srv_log_message("warning", "%s", warn);

    if (install_stop_signals() != 0) {
        srv_log_message("error", "cannot install signal handlers: %s",
                        strerror(errno));
        return 1;
    }

    int blas_threads =
        api_set_threads((int)opts.threads, blas_threads_for(opts.threads));
    api_set_ready(1);
    api_limits limits;
    srv_options_limits(&opts, &limits);
    const char *budget_source;
    uint64_t budget = set_memory_budget(&opts, &budget_source);

    srv_probe *probe = NULL;
    srv_http *srv = NULL;
    if (srv_csp_init() != 0)
        srv_log_message("error", "cannot hash the lab page for its "
                                 "Content-Security-Policy");
    else
        srv = start_listeners(&opts, &limits, gate, &tls, &probe);
    if (srv == NULL) {
        srv_gate_free(gate);
        srv_tls_keys_free(&tls);
        srv_variant_secret_free(&secret);
        srv_roster_free(&roster);
        return 1;
    }
    log_listening(&opts, &tls, srv, probe, blas_threads, budget, budget_source);
    log_safety(gate, &opts);
    serve_until_stopped(srv, opts.shutdown_grace_s);
    srv_http_stop(srv);
    /* last: readiness answered (503) while the main port drains */
    srv_probe_stop(probe);
    srv_gate_free(gate);
    srv_tls_keys_free(&tls);
    srv_variant_secret_set(NULL);
    srv_variant_secret_free(&secret);
    srv_roster_set_daemon(NULL);
    srv_roster_free(&roster);
    srv_log_message("info", "attnd: stopped");
    return 0;
}
