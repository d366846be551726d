/*
 * options.h — attnd's command-line and environment configuration.
 *
 * Every setting is a long flag (--port 8080 or --port=8080) and an ATTND_*
 * environment variable (ATTND_PORT=8080); a flag wins over the environment,
 * the environment over the default. Contract: docs/contract.md section 15.
 */
#ifndef SRV_OPTIONS_H
#define SRV_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "api.h"

typedef enum { SRV_LOG_TEXT = 0, SRV_LOG_JSON } srv_log_format;

#define SRV_PER_ADDRESS_AUTO 0xffffffffu
#define SRV_MEMORY_BUDGET_AUTO UINT64_MAX
#define SRV_ANSWER_CACHE_AUTO UINT64_MAX

typedef struct {
    unsigned port; /* TCP port, 0 = any free port */
    /* the probe listener's TCP port (probe.h); 0: none (the default) */
    unsigned probe_port;
    char bind[64];         /* numeric IPv4 or IPv6 address */
    unsigned threads;      /* HTTP worker threads, >= 1 */
    size_t max_body_bytes; /* request body limit, bytes */
    size_t max_elements;   /* per-tensor limit, doubles */
    uint64_t max_work;     /* estimated scalar operations per request */
    unsigned timeout_s;    /* idle connection timeout, seconds */
    /* server-wide memory budget, bytes; 0: none; SRV_MEMORY_BUDGET_AUTO:
     * from the cgroup limit or RAM (memory_budget.h) */
    uint64_t memory_budget;
    /* bytes of recent answers kept for identical requests (part of the
     * memory budget; api_answer_cache_set); SRV_ANSWER_CACHE_AUTO: the
     * smaller of 64 MiB and a sixteenth of the budget */
    uint64_t answer_cache;
    unsigned compute_timeout_s; /* per-request computing time limit */
    unsigned header_timeout_s;  /* request line and headers deadline */
    size_t min_body_rate;       /* body bytes/s a sender must keep; 0: off */
    size_t min_response_rate;   /* answer bytes/s a reader must take; 0: off */
    char cors_origin[1024];     /* "*" or a comma-separated allow-list */
    srv_log_format log_format;
    size_t gzip_min_bytes;     /* compress answers from this size; 0: never */
    unsigned shutdown_grace_s; /* seconds to finish in-flight requests */
    int healthcheck; /* 1: probe /healthz on --probe-port, else --port */
    /* shared-lab safety: every one off (0 or "") by default */
    double rate_limit;                  /* requests/s per client */
    unsigned burst;                     /* bucket size; 0 = ceil(rate) */
    unsigned max_concurrent_per_client; /* requests in flight per client */
    unsigned max_connections;           /* requests in flight in all */
    /* connections one peer address may hold, from accept; 0: no limit;
     * SRV_PER_ADDRESS_AUTO: an eighth of the connection slots */
    unsigned max_connections_per_address;
    char trusted_proxy[1024]; /* addresses/CIDRs whose X-Forwarded-For counts */
    char auth_token_file[4096];     /* bearer tokens, one per line */
    int metrics_public;             /* 1: /metrics needs no token */
    char grading_token_file[4096];  /* graders' tokens: variants */
    char variant_secret_file[4096]; /* the course secret of variants */
    char roster[4096];              /* the class's roster of variants */
    char tls_cert[4096];            /* PEM certificate chain */
    char tls_key[4096];             /* PEM private key */
} srv_options;

/* The bound on the JSON tree of a body (api_limits.max_tree_bytes) for a
 * body limit of max_body_bytes: four times it, SIZE_MAX when that does
 * not fit. The daemon's rule; the offline commands apply it too
 * (offline.c). */
size_t srv_max_tree_bytes(size_t max_body_bytes);

/* The api's limits of opts (limits filled whole): api_limits_default,
 * then --max-body-bytes, --max-elements, --max-work, the JSON tree's
 * bound from the body's (srv_max_tree_bytes) and --compute-timeout. */
void srv_options_limits(const srv_options *opts, api_limits *limits);

/* What srv_options_parse decided. */
typedef enum {
    SRV_OPT_RUN = 0, /* options valid: serve */
    SRV_OPT_EXIT_OK, /* --help printed: exit 0 */
    SRV_OPT_EXIT_BAD /* message printed to stderr: exit 2 */
} srv_opt_result;

/* Fill opts with the defaults: port 8080, bind 127.0.0.1, threads = online
 * CPUs, 16 MiB body, 16 Mi elements, 2^33 work, 30 s timeout, a memory
 * budget from the cgroup limit or RAM, 10 s to compute, 10 s for the
 * headers, bodies at 8 KiB/s at least, CORS "*",
 * text logs, 8 s shutdown grace, gzip from 1 KiB; no rate limit, no caps
 * but an eighth of the connection slots per address, no trusted proxy, no
 * token, no TLS. */
void srv_options_default(srv_options *opts);

/* Read ATTND_* variables from the environment, then argv (argv[0] is the
 * program name). Writes usage to stdout for --help; for a bad name or value,
 * or settings that cannot go together (--probe-port equal to --port),
 * writes one line naming it to stderr. opts must hold the defaults first. */
srv_opt_result srv_options_parse(srv_options *opts, int argc, char **argv);

/* For a command that takes a few of these settings (attnd run, offline.h):
 * read the ATTND_* variable of each option named in flags (names without
 * "--", NULL-terminated) and no other. A bad value: one line naming it to
 * stderr, SRV_OPT_EXIT_BAD; else SRV_OPT_RUN. */
srv_opt_result srv_options_env(srv_options *opts, const char *const *flags);

/* Parse the option at argv[*i] ("--name VALUE" or "--name=VALUE") when
 * its name is among flags: store it, leave *i at its last word and return
 * SRV_OPT_RUN. An unknown option, one of the table not among flags, a
 * missing or bad value: one line to stderr (starting with who, e.g.
 * "attnd run"), SRV_OPT_EXIT_BAD. */
srv_opt_result srv_options_take(srv_options *opts, int argc, char **argv,
                                int *i, const char *const *flags,
                                const char *who);

#endif /* SRV_OPTIONS_H */
