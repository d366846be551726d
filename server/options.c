/*
 * options.c — parse attnd's flags and ATTND_* environment variables from one
 * table, so the two spellings, the defaults and --help never drift apart.
 */
#include "options.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

typedef enum {
    OPT_UINT,
    OPT_SIZE,
    OPT_U64,
    OPT_ADDR,
    OPT_ORIGIN,
    OPT_LOG,
    OPT_RATE, /* requests per second: "R", "R/s" or "R/m" */
    OPT_TEXT, /* a string of at most max - 1 bytes (max: the field's size) */
    OPT_BOOL  /* "--flag" alone, or 1/0, true/false, yes/no, on/off */
} opt_kind;

typedef struct {
    const char *flag; /* without the leading "--" */
    const char *env;
    opt_kind kind;
    size_t offset;     /* of the field in srv_options */
    uint64_t min, max; /* bounds for the numeric kinds */
    const char *help;
} opt_spec;

#define FIELD_SIZE(f) sizeof(((srv_options *)0)->f)
#define RATE_MAX 1e6 /* requests per second */

#define KiB 1024ULL
#define MiB (1024ULL * 1024ULL)

static const opt_spec specs[] = {
    {"port", "ATTND_PORT", OPT_UINT, offsetof(srv_options, port), 0, 65535,
     "TCP port, 0 picks a free one (default 8080)"},
    {"probe-port", "ATTND_PROBE_PORT", OPT_UINT,
     offsetof(srv_options, probe_port), 0, 65535,
     "TCP port of a second, plain-HTTP listener on --bind that answers only "
     "GET/HEAD /healthz, /v2/health/* and /metrics, on a thread and "
     "connections of its own, so that probes are answered however busy the "
     "main port is; keep it off the public network; 0: none (default 0)"},
    {"bind", "ATTND_BIND", OPT_ADDR, offsetof(srv_options, bind), 0, 0,
     "numeric address to listen on (default 127.0.0.1)"},
    {"threads", "ATTND_THREADS", OPT_UINT, offsetof(srv_options, threads), 1,
     1024, "HTTP worker threads (default: online CPUs)"},
    {"max-body-bytes", "ATTND_MAX_BODY_BYTES", OPT_SIZE,
     offsetof(srv_options, max_body_bytes), 1, 1ULL << 40,
     "largest request body in bytes, K/M/G suffixes allowed (default 16M)"},
    {"max-elements", "ATTND_MAX_ELEMENTS", OPT_SIZE,
     offsetof(srv_options, max_elements), 1, 1ULL << 40,
     "largest tensor in doubles, K/M/G suffixes allowed (default 16M)"},
    {"max-work", "ATTND_MAX_WORK", OPT_U64, offsetof(srv_options, max_work), 1,
     UINT64_MAX,
     "largest estimated scalar operations per request, K/M/G suffixes "
     "allowed (default 8G = 2^33)"},
    {"timeout", "ATTND_TIMEOUT", OPT_UINT, offsetof(srv_options, timeout_s), 1,
     86400, "idle connection timeout in seconds (default 30)"},
    {"memory-budget", "ATTND_MEMORY_BUDGET", OPT_U64,
     offsetof(srv_options, memory_budget), 0, 1ULL << 50,
     "bytes all requests may hold at once (bodies, trees, tensors, answers "
     "being sent), K/M/G suffixes allowed; 0: no budget (default: 3/4 of "
     "the cgroup memory limit, else half of RAM)"},
    {"answer-cache", "ATTND_ANSWER_CACHE", OPT_U64,
     offsetof(srv_options, answer_cache), 0, 1ULL << 50,
     "bytes of recent answers kept for identical requests, from the memory "
     "budget, K/M/G suffixes allowed; 0: none (identical requests at once "
     "still share one computation) (default: 64M, or a sixteenth of the "
     "budget when that is less)"},
    {"compute-timeout", "ATTND_COMPUTE_TIMEOUT", OPT_UINT,
     offsetof(srv_options, compute_timeout_s), 1, 86400,
     "seconds one request may compute; past it 503 (default 10)"},
    {"header-timeout", "ATTND_HEADER_TIMEOUT", OPT_UINT,
     offsetof(srv_options, header_timeout_s), 1, 3600,
     "seconds from accept to the end of the request headers; past it 408 "
     "and close (default 10)"},
    {"min-body-rate", "ATTND_MIN_BODY_RATE", OPT_SIZE,
     offsetof(srv_options, min_body_rate), 0, 1ULL << 40,
     "bytes per second a request body must arrive at, on average once "
     "--header-timeout has passed; slower: 408 and close; K/M/G suffixes "
     "allowed, 0: off (default 8K)"},
    {"min-response-rate", "ATTND_MIN_RESPONSE_RATE", OPT_SIZE,
     offsetof(srv_options, min_response_rate), 0, 1ULL << 40,
     "bytes per second a client must take an answer at, on average over "
     "each window of --header-timeout from when it was ready; slower: the "
     "connection is reset and the answer's memory given back; K/M/G "
     "suffixes allowed, 0: off (default 8K)"},
    {"cors-origin", "ATTND_CORS_ORIGIN", OPT_ORIGIN,
     offsetof(srv_options, cors_origin), 0, 0,
     "\"*\" or a comma-separated list of allowed origins (default *)"},
    {"log-format", "ATTND_LOG_FORMAT", OPT_LOG,
     offsetof(srv_options, log_format), 0, 0,
     "access log format on stderr: text or json (default text)"},
    {"shutdown-grace", "ATTND_SHUTDOWN_GRACE", OPT_UINT,
     offsetof(srv_options, shutdown_grace_s), 0, 3600,
     "seconds to finish in-flight requests after SIGTERM (default 8)"},
    {"gzip-min-bytes", "ATTND_GZIP_MIN_BYTES", OPT_SIZE,
     offsetof(srv_options, gzip_min_bytes), 0, 1ULL << 40,
     "gzip answers of at least this many bytes when the client accepts it, "
     "K/M/G suffixes allowed; 0 turns compression off (default 1K)"},
    {"rate-limit", "ATTND_RATE_LIMIT", OPT_RATE,
     offsetof(srv_options, rate_limit), 0, 0,
     "requests per client (a listed token, else the address), R, R/s or "
     "R/m; over it 429 (default 0: off)"},
    {"burst", "ATTND_BURST", OPT_UINT, offsetof(srv_options, burst), 1, 1000000,
     "requests a client may send at once under --rate-limit "
     "(default: the rate per second, rounded up)"},
    {"max-concurrent-per-client", "ATTND_MAX_CONCURRENT_PER_CLIENT", OPT_UINT,
     offsetof(srv_options, max_concurrent_per_client), 0, 1000000,
     "requests in flight per client (a listed token, else the address); "
     "over it 429 (default 0: off)"},
    {"max-connections", "ATTND_MAX_CONNECTIONS", OPT_UINT,
     offsetof(srv_options, max_connections), 0, 1000000,
     "requests in flight in all; over it 503 overloaded (default 0: off)"},
    {"max-connections-per-address", "ATTND_MAX_CONNECTIONS_PER_ADDRESS",
     OPT_UINT, offsetof(srv_options, max_connections_per_address), 0, 1000000,
     "connections one client address may hold, counted from accept (trusted "
     "proxies exempt); 0: no limit (default: an eighth of the connection "
     "slots)"},
    {"trusted-proxy", "ATTND_TRUSTED_PROXY", OPT_TEXT,
     offsetof(srv_options, trusted_proxy), 0, FIELD_SIZE(trusted_proxy),
     "comma-separated proxy addresses/CIDRs whose X-Forwarded-For names "
     "the client (default: none)"},
    {"auth-token-file", "ATTND_AUTH_TOKEN_FILE", OPT_TEXT,
     offsetof(srv_options, auth_token_file), 0, FIELD_SIZE(auth_token_file),
     "file of bearer tokens, one per line; requests must carry one "
     "(default: none, no token needed)"},
    {"grading-token-file", "ATTND_GRADING_TOKEN_FILE", OPT_TEXT,
     offsetof(srv_options, grading_token_file), 0,
     FIELD_SIZE(grading_token_file),
     "file of graders' bearer tokens, as --auth-token-file: only these "
     "grade or hand out students' variants (default: none)"},
    {"variant-secret-file", "ATTND_VARIANT_SECRET_FILE", OPT_TEXT,
     offsetof(srv_options, variant_secret_file), 0,
     FIELD_SIZE(variant_secret_file),
     "the course secret each student's variant is drawn from, at least 16 "
     "bytes (else ATTND_VARIANT_SECRET; default: none, no variants)"},
    {"roster", "ATTND_ROSTER", OPT_TEXT, offsetof(srv_options, roster), 0,
     FIELD_SIZE(roster),
     "the class's roster (id, or id,group, per line): a variant is graded "
     "only for a student on it, and answers are checked against every "
     "student's variant (default: none)"},
    {"metrics-public", "ATTND_METRICS_PUBLIC", OPT_BOOL,
     offsetof(srv_options, metrics_public), 0, 1,
     "serve /metrics without a token when --auth-token-file is set"},
    {"tls-cert", "ATTND_TLS_CERT", OPT_TEXT, offsetof(srv_options, tls_cert), 0,
     FIELD_SIZE(tls_cert),
     "PEM certificate chain: serve HTTPS (with --tls-key)"},
    {"tls-key", "ATTND_TLS_KEY", OPT_TEXT, offsetof(srv_options, tls_key), 0,
     FIELD_SIZE(tls_key), "PEM private key of --tls-cert, unencrypted"},
};
#define NSPECS (sizeof specs / sizeof specs[0])

void srv_options_default(srv_options *opts) {
    memset(opts, 0, sizeof *opts);
    opts->port = 8080;
    strcpy(opts->bind, "127.0.0.1");
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    opts->threads = ncpu >= 1 ? (unsigned)(ncpu > 1024 ? 1024 : ncpu) : 1;
    opts->max_body_bytes = 16 * MiB;
    opts->max_elements = 16 * MiB;
    opts->max_work = 1ULL << 33;
    opts->max_connections_per_address = SRV_PER_ADDRESS_AUTO;
    opts->timeout_s = 30;
    opts->memory_budget = SRV_MEMORY_BUDGET_AUTO;
    opts->answer_cache = SRV_ANSWER_CACHE_AUTO;
    opts->compute_timeout_s = 10;
    opts->header_timeout_s = 10;
    opts->min_body_rate = 8 * KiB;
    opts->min_response_rate = 8 * KiB;
    strcpy(opts->cors_origin, "*");
    opts->log_format = SRV_LOG_TEXT;
    opts->shutdown_grace_s = 8;
    opts->gzip_min_bytes = KiB;
    opts->healthcheck = 0;
}

size_t srv_max_tree_bytes(size_t max_body_bytes) {
    return max_body_bytes > SIZE_MAX / 4 ? SIZE_MAX : max_body_bytes * 4;
}

void srv_options_limits(const srv_options *opts, api_limits *limits) {
    api_limits_default(limits);
    limits->max_body_bytes = opts->max_body_bytes;
    limits->max_elements = opts->max_elements;
    limits->max_work = opts->max_work;
    limits->max_tree_bytes = srv_max_tree_bytes(opts->max_body_bytes);
    limits->compute_timeout_s = opts->compute_timeout_s;
}

static void usage(FILE *out) {
    fprintf(out, "usage: attnd [--option VALUE ...] [--healthcheck]\n"
                 "       attnd run PATH [--accept TYPE] < BODY\n"
                 "       attnd grade [--format FORMAT] < SUBMISSIONS\n"
                 "       attnd variants --question DIR --roster FILE\n"
                 "Serve attention computations over HTTP (see README.md and "
                 "docs/).\n"
                 "run and grade answer one request from stdin without a "
                 "server (attnd run --help,\n"
                 "docs/offline.md); variants writes each student's own "
                 "problem (docs/variants.md).\n\n");
    for (size_t i = 0; i < NSPECS; i++)
        fprintf(out, "  --%s (%s)\n      %s\n", specs[i].flag, specs[i].env,
                specs[i].help);
    fprintf(out, "  --healthcheck\n      %s\n",
            "GET /healthz on 127.0.0.1:PORT, the --probe-port when one is "
            "set (plain HTTP, else TLS); exit 0 on 200, else 1");
    fprintf(out, "  --help\n      print this and exit\n");
}

/* Parse an unsigned decimal with an optional K, M or G (binary) suffix when
 * suffixes is set. Returns 0 on success. */
static int parse_u64(const char *s, int suffixes, uint64_t *out) {
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno == ERANGE)
        return -1;
    uint64_t mul = 1;
    if (suffixes && *end) {
        switch (*end) {
        case 'k':
        case 'K':
            mul = KiB;
            break;
        case 'm':
        case 'M':
            mul = MiB;
            break;
        case 'g':
        case 'G':
            mul = KiB * MiB;
            break;
        default:
            return -1;
        }
        end++;
        if (*end == 'i' || *end == 'I')
            end++;
        if (*end == 'b' || *end == 'B')
            end++;
    }
    if (*end)
        return -1;
    if (v > UINT64_MAX / mul)
        return -1;
    *out = (uint64_t)v * mul;
    return 0;
}

/* A rate: a decimal number of requests, optionally "/s" (per second) or
 * "/m" (per minute); stored per second. Returns 0 on success. */
static int parse_rate(const char *s, double *out) {
    if (*s < '0' || *s > '9')
        return -1;
    char *end;
    double v = strtod(s, &end);
    for (const char *p = s; p < end; p++)
        if ((*p < '0' || *p > '9') && *p != '.')
            return -1; /* no exponents, hex or infinities */
    if (strcmp(end, "/m") == 0 || strcmp(end, "/min") == 0)
        v /= 60;
    else if (*end != '\0' && strcmp(end, "/s") != 0)
        return -1;
    if (!isfinite(v) || v > RATE_MAX)
        return -1;
    *out = v;
    return 0;
}

/* A switch value; returns 0 or 1, -1 when it is not one. */
static int parse_bool(const char *s) {
    static const char *yes[] = {"1", "true", "yes", "on"};
    static const char *no[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0)
            return 1;
        if (strcasecmp(s, no[i]) == 0)
            return 0;
    }
    return -1;
}

static int valid_address(const char *s) {
    unsigned char buf[sizeof(struct in6_addr)];
    return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

/* Store the integer option sp (OPT_UINT, OPT_SIZE or OPT_U64) from
 * value, within sp->min ... sp->max (K/M/G suffixes but for OPT_UINT).
 * Returns 0, or -1 after printing why (naming source). */
static int apply_number(srv_options *opts, const opt_spec *sp,
                        const char *value, const char *source) {
    uint64_t v = 0;
    if (parse_u64(value, sp->kind != OPT_UINT, &v) != 0 || v < sp->min ||
        v > sp->max) {
        fprintf(stderr,
                "attnd: %s: invalid value '%s' (expected an integer "
                "from %" PRIu64 " to %" PRIu64 "%s)\n",
                source, value, sp->min, sp->max,
                sp->kind != OPT_UINT ? ", K/M/G suffix allowed" : "");
        return -1;
    }
    char *field = (char *)opts + sp->offset;
    if (sp->kind == OPT_UINT)
        *(unsigned *)(void *)field = (unsigned)v;
    else if (sp->kind == OPT_SIZE)
        *(size_t *)(void *)field = (size_t)v;
    else
        *(uint64_t *)(void *)field = v;
    return 0;
}

/* Store value for spec into opts; returns 0, or -1 after printing why. */
static int apply(srv_options *opts, const opt_spec *sp, const char *value,
                 const char *source) {
    switch (sp->kind) {
    case OPT_UINT:
    case OPT_SIZE:
    case OPT_U64:
        return apply_number(opts, sp, value, source);
    case OPT_ADDR:
        if (strlen(value) >= sizeof opts->bind || !valid_address(value)) {
            fprintf(stderr,
                    "attnd: %s: invalid value '%s' (expected a numeric IPv4 "
                    "or IPv6 address)\n",
                    source, value);
            return -1;
        }
        strcpy((char *)opts + sp->offset, value);
        return 0;
    case OPT_ORIGIN:
        if (*value == '\0' || strlen(value) >= sizeof opts->cors_origin) {
            fprintf(stderr,
                    "attnd: %s: invalid value '%s' (expected * or a "
                    "comma-separated list of origins)\n",
                    source, value);
            return -1;
        }
        strcpy((char *)opts + sp->offset, value);
        return 0;
    case OPT_RATE:
        if (parse_rate(value, (double *)(void *)((char *)opts + sp->offset)) !=
            0) {
            fprintf(stderr,
                    "attnd: %s: invalid value '%s' (expected requests per "
                    "second as R or R/s, or per minute as R/m; 0 turns it "
                    "off)\n",
                    source, value);
            return -1;
        }
        return 0;
    case OPT_TEXT:
        if (strlen(value) >= sp->max) {
            fprintf(stderr, "attnd: %s: value longer than %" PRIu64 " bytes\n",
                    source, sp->max - 1);
            return -1;
        }
        strcpy((char *)opts + sp->offset, value);
        return 0;
    case OPT_BOOL: {
        int b = parse_bool(value);
        if (b < 0) {
            fprintf(stderr,
                    "attnd: %s: invalid value '%s' (expected 1/0, true/false, "
                    "yes/no or on/off)\n",
                    source, value);
            return -1;
        }
        *(int *)(void *)((char *)opts + sp->offset) = b;
        return 0;
    }
    case OPT_LOG:
        if (strcmp(value, "text") == 0)
            opts->log_format = SRV_LOG_TEXT;
        else if (strcmp(value, "json") == 0)
            opts->log_format = SRV_LOG_JSON;
        else {
            fprintf(stderr,
                    "attnd: %s: invalid value '%s' (expected text or json)\n",
                    source, value);
            return -1;
        }
        return 0;
    }
    return 0;
}

static const opt_spec *find_spec(const char *name, size_t len) {
    for (size_t i = 0; i < NSPECS; i++)
        if (strlen(specs[i].flag) == len &&
            strncmp(specs[i].flag, name, len) == 0)
            return &specs[i];
    return NULL;
}

srv_opt_result srv_options_parse(srv_options *opts, int argc, char **argv) {
    for (size_t i = 0; i < NSPECS; i++) {
        const char *value = getenv(specs[i].env);
        if (value != NULL && apply(opts, &specs[i], value, specs[i].env) != 0)
            return SRV_OPT_EXIT_BAD;
    }
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout);
            return SRV_OPT_EXIT_OK;
        }
        if (strcmp(arg, "--healthcheck") == 0) {
            opts->healthcheck = 1;
            continue;
        }
        if (strncmp(arg, "--", 2) != 0) {
            fprintf(stderr, "attnd: unexpected argument '%s' (try --help)\n",
                    arg);
            return SRV_OPT_EXIT_BAD;
        }
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const opt_spec *sp = find_spec(name, len);
        if (sp == NULL) {
            fprintf(stderr, "attnd: unknown option '%.*s' (try --help)\n",
                    (int)(len + 2), arg);
            return SRV_OPT_EXIT_BAD;
        }
        const char *value;
        if (eq != NULL)
            value = eq + 1;
        else if (sp->kind == OPT_BOOL)
            value = "1"; /* a switch: --metrics-public */
        else if (i + 1 < argc)
            value = argv[++i];
        else {
            fprintf(stderr, "attnd: option '--%s' needs a value\n", sp->flag);
            return SRV_OPT_EXIT_BAD;
        }
        char source[64];
        snprintf(source, sizeof source, "--%s", sp->flag);
        if (apply(opts, sp, value, source) != 0)
            return SRV_OPT_EXIT_BAD;
    }
    if (opts->probe_port != 0 && opts->probe_port == opts->port) {
        fprintf(stderr,
                "attnd: --probe-port %u: the same as --port; the probe "
                "listener needs a port of its own (e.g. %u)\n",
                opts->probe_port, opts->port < 65535 ? opts->port + 1 : 8081);
        return SRV_OPT_EXIT_BAD;
    }
    return SRV_OPT_RUN;
}

/* 1 when name (without "--") is in the NULL-terminated list names. */
static int listed(const char *name, const char *const *names) {
    for (; *names != NULL; names++)
        if (strcmp(*names, name) == 0)
            return 1;
    return 0;
}

srv_opt_result srv_options_env(srv_options *opts, const char *const *flags) {
    for (size_t i = 0; i < NSPECS; i++) {
        if (!listed(specs[i].flag, flags))
            continue;
        const char *value = getenv(specs[i].env);
        if (value != NULL && apply(opts, &specs[i], value, specs[i].env) != 0)
            return SRV_OPT_EXIT_BAD;
    }
    return SRV_OPT_RUN;
}

srv_opt_result srv_options_take(srv_options *opts, int argc, char **argv,
                                int *i, const char *const *flags,
                                const char *who) {
    const char *arg = argv[*i];
    const char *name = arg + 2;
    const char *eq = strchr(name, '=');
    size_t len = eq ? (size_t)(eq - name) : strlen(name);
    const opt_spec *sp =
        strncmp(arg, "--", 2) == 0 ? find_spec(name, len) : NULL;
    if (sp == NULL) {
        fprintf(stderr, "%s: unknown option '%s' (try %s --help)\n", who, arg,
                who);
        return SRV_OPT_EXIT_BAD;
    }
    if (!listed(sp->flag, flags)) {
        fprintf(stderr,
                "%s: --%s is a server option, without effect here "
                "(try %s --help)\n",
                who, sp->flag, who);
        return SRV_OPT_EXIT_BAD;
    }
    const char *value;
    if (eq != NULL)
        value = eq + 1;
    else if (sp->kind == OPT_BOOL)
        value = "1";
    else if (*i + 1 < argc)
        value = argv[++*i];
    else {
        fprintf(stderr, "%s: option '--%s' needs a value\n", who, sp->flag);
        return SRV_OPT_EXIT_BAD;
    }
    char source[64];
    snprintf(source, sizeof source, "--%s", sp->flag);
    return apply(opts, sp, value, source) == 0 ? SRV_OPT_RUN : SRV_OPT_EXIT_BAD;
}
