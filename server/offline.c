/*
 * offline.c — `attnd run PATH` and `attnd grade` (offline.h): one request
 * from the command line and stdin, answered by api_handle in-process, its
 * body written to stdout.
 *
 * What the daemon does with a request, and what is done here instead:
 *   - the method is the route's own (api/core/route.h), so that no route
 *     fact is repeated here; a path no route answers is sent as GET and
 *     answered 404 by the api, as the daemon answers it;
 *   - the path is percent-decoded as libmicrohttpd decodes it, the query
 *     is passed raw;
 *   - Content-Type is application/json unless --content-type is given;
 *     Accept is --accept, else none, which the api reads as any type;
 *   - the limits are the daemon's (--max-elements, --max-work,
 *     --compute-timeout, their ATTND_* variables and defaults), but for the
 *     body: a local file is not a shared server, so there is no body limit
 *     unless --max-body-bytes (or ATTND_MAX_BODY_BYTES) is given;
 *   - the JSON tree of the body is bounded as the daemon bounds it, four
 *     times the body limit (srv_max_tree_bytes); without a body limit, four
 *     times the daemon's default one (64 MiB). Not the memory budget: half
 *     of RAM is gigabytes, and a body of empty objects (a "tree bomb") would
 *     take them all before its answer, a 400 or 422, while a tensor sent as
 *     arrays of numbers hardly counts in the tree (fastpath.h), so a large
 *     well-formed body still fits; --max-body-bytes raises the bound;
 *   - a memory budget as the daemon's (--memory-budget, ATTND_MEMORY_BUDGET;
 *     default 3/4 of the cgroup memory limit, else half of RAM:
 *     srv_memory_budget), reserved from as the daemon reserves: the body's
 *     buffer as it is read, the tree, the route's tensors, working set and
 *     answer. What exceeds it is the daemon's 413. Nothing waits for room
 *     (one request: no other would give any back);
 *   - one request at a time with BLAS using every core, as the daemon with
 *     --threads 1;
 *   - a large answer comes as a stream (stream_ok, as for every method but
 *     HEAD in the daemon) and is copied as it is read: the same bytes as
 *     the chunks the daemon sends, uncompressed.
 *
 * attnd grade --question DIR adds a question folder's settings and
 * request to each submission of stdin before the batch reads it
 * (offline_question.c).
 */
#include "offline.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api.h"
#include "memory_budget.h"
#include "offline_internal.h"
#include "offline_variants.h"
#include "options.h"
#include "roster.h"
#include "variant_secret.h"

/* the path POST /grade/batch, which attnd grade runs */
#define GRADE_BATCH_PATH "/grade/batch"
/* bytes copied from a streamed answer at a time */
#define COPY_BLOCK ((size_t)64 << 10)
/* bytes read from stdin at first; the buffer doubles from there */
#define READ_FIRST ((size_t)64 << 10)

/* The daemon's options that apply to one request offline. */
static const char *const limit_flags[] = {"max-body-bytes", "max-elements",
                                          "max-work",       "compute-timeout",
                                          "memory-budget",  NULL};

/* What the command line asks for. */
typedef struct {
    const char *who;          /* "attnd run" or "attnd grade" */
    const char *target;       /* run: PATH with its query; grade: NULL */
    const char *format;       /* grade --format, or NULL */
    const char *question;     /* grade --question DIR, or NULL */
    const char *secret_file;  /* grade --secret-file FILE, or NULL */
    const char *roster;       /* grade --roster FILE, or NULL */
    const char *content_type; /* --content-type, or NULL */
    const char *accept;       /* --accept, or NULL */
    srv_options opts;         /* the limits */
} offline_args;

int srv_offline_command(const char *arg) {
    return arg != NULL &&
           (strcmp(arg, "run") == 0 || strcmp(arg, "grade") == 0 ||
            strcmp(arg, "variants") == 0);
}

static void usage(FILE *out, int grade) {
    if (grade)
        fprintf(out,
                "usage: attnd grade [--format attnd|gradescope|prairielearn] "
                "[--question DIR]\n"
                "                   [--option VALUE ...] < SUBMISSIONS\n"
                "Grade a batch without a server: POST /grade/batch with stdin "
                "as its body (one\n"
                "submission per line, or a JSON array when the first byte "
                "that is not white\n"
                "space is '['), its answer on stdout.\n\n"
                "  --format FORMAT\n"
                "      the answer's form, sent as ?format=FORMAT\n"
                "  --question DIR\n"
                "      a question folder: each submission is then "
                "{\"id\", \"answer\"}, to which\n"
                "      the members of DIR/question.json (endpoint, fields, "
                "compare, points,\n"
                "      credit, visibility, rtol, atol) and \"request\": "
                "DIR/request.json are\n"
                "      added; a submission that gives one of them itself is "
                "a problem line\n"
                "  --secret-file FILE\n"
                "      the course secret (else ATTND_VARIANT_SECRET): a "
                "request.json that marks\n"
                "      members to draw is graded against each student's "
                "own variant\n"
                "      (docs/variants.md)\n"
                "  --roster FILE\n"
                "      the class's roster (as attnd variants reads it): a "
                "variant is graded\n"
                "      only for a student on it, with the roster's group, "
                "and answers are\n"
                "      checked for copies against every student's variant\n");
    else
        fprintf(out,
                "usage: attnd run PATH[?QUERY] [--option VALUE ...] [< BODY]\n"
                "Answer one request without a server, as the daemon answers "
                "it:\n"
                "  attnd run /attention/dot < request.json\n"
                "  attnd run '/encoding/positional?num_steps=4&d=8'\n"
                "The body is read from stdin for POST routes only; the "
                "answer's body goes to\n"
                "stdout byte for byte as over HTTP.\n\n");
    fprintf(out,
            "  --content-type TYPE\n"
            "      the body's Content-Type (default %s)\n"
            "  --accept TYPE\n"
            "      the Accept header, e.g. image/svg+xml (default: none, "
            "JSON)\n"
            "  --max-body-bytes SIZE (ATTND_MAX_BODY_BYTES)\n"
            "      largest body in bytes, K/M/G suffixes allowed (default: "
            "no limit); its\n"
            "      JSON tree is bounded to four times it, else to 64M as "
            "the server's by\n"
            "      default\n"
            "  --memory-budget SIZE (ATTND_MEMORY_BUDGET)\n"
            "      bytes the request may hold (body, JSON tree, tensors, "
            "answer); over it\n"
            "      413 as from the server (default: 3/4 of the cgroup "
            "memory limit, else\n"
            "      half of RAM; 0: no budget)\n"
            "  --max-elements, --max-work, --compute-timeout\n"
            "      as for the server, with their ATTND_* variables and "
            "defaults (attnd --help)\n"
            "  --help\n"
            "      print this and exit\n\n"
            "Subcommands: attnd run PATH, attnd grade (docs/offline.md), attnd "
            "variants (docs/variants.md).\n"
            "Exit status: 0 a 2xx answer, on stdout; 1 a usage or I/O "
            "error; 2 a 4xx/5xx\n"
            "answer, its problem+json on stderr and nothing on stdout; 3 a "
            "batch answer\n"
            "(on stdout) in which some submissions could not be graded.\n",
            grade ? "application/x-ndjson, or application/json for an array"
                  : "application/json");
}

/* The member of a that the option name[0 .. n) sets, an option of
 * attnd run and grade of their own: --content-type, --accept, and for
 * grade --format and --question; NULL for any other. */
static const char **own_option(offline_args *a, int grade, const char *name,
                               size_t n) {
    if (n == 14 && strncmp(name, "--content-type", n) == 0)
        return &a->content_type;
    if (n == 8 && strncmp(name, "--accept", n) == 0)
        return &a->accept;
    if (grade && n == 8 && strncmp(name, "--format", n) == 0)
        return &a->format;
    if (grade && n == 10 && strncmp(name, "--question", n) == 0)
        return &a->question;
    if (grade && n == 13 && strncmp(name, "--secret-file", n) == 0)
        return &a->secret_file;
    if (grade && n == 8 && strncmp(name, "--roster", n) == 0)
        return &a->roster;
    return NULL;
}

/* Take argv[*i], an argument that is no option of attnd run's own (nor
 * --help): a daemon's limit (--max-work 1e9) or the path. Returns 0, or
 * -1 after printing why. */
static int take_arg(offline_args *a, int grade, int argc, char **argv, int *i) {
    const char *arg = argv[*i];
    if (strncmp(arg, "--", 2) == 0)
        return srv_options_take(&a->opts, argc, argv, i, limit_flags, a->who) ==
                       SRV_OPT_RUN
                   ? 0
                   : -1;
    if (grade || a->target != NULL) {
        fprintf(stderr, "%s: unexpected argument '%s' (try %s --help)\n",
                a->who, arg, a->who);
        return -1;
    }
    if (arg[0] != '/') {
        fprintf(stderr,
                "%s: the path '%s' does not begin with / (e.g. "
                "/attention/dot)\n",
                a->who, arg);
        return -1;
    }
    a->target = arg;
    return 0;
}

/* Parse argv (argv[0] the command) into a. Returns -1 to exit with
 * SRV_OFFLINE_USAGE (message printed), 1 to exit 0 (--help printed), 0 to
 * go on. */
static int parse_args(offline_args *a, int argc, char **argv) {
    int grade = strcmp(argv[0], "grade") == 0;
    memset(a, 0, sizeof *a);
    a->who = grade ? "attnd grade" : "attnd run";
    srv_options_default(&a->opts);
    a->opts.max_body_bytes = SIZE_MAX; /* none unless given */
    if (srv_options_env(&a->opts, limit_flags) != SRV_OPT_RUN)
        return -1;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout, grade);
            return 1;
        }
        const char **own = own_option(a, grade, arg, strlen(arg));
        if (own != NULL) {
            if (i + 1 >= argc) {
                fprintf(stderr, "%s: option '%s' needs a value\n", a->who, arg);
                return -1;
            }
            *own = argv[++i];
            continue;
        }
        const char *eq = strchr(arg, '=');
        if (strncmp(arg, "--", 2) == 0 && eq != NULL &&
            (own = own_option(a, grade, arg, (size_t)(eq - arg))) != NULL) {
            *own = eq + 1; /* --content-type=TYPE and the like */
            continue;
        }
        if (take_arg(a, grade, argc, argv, &i) != 0)
            return -1;
    }
    if (a->question != NULL && a->question[0] == '\0') {
        fprintf(stderr, "%s: --question needs a folder\n", a->who);
        return -1;
    }
    if (!grade && a->target == NULL) {
        fprintf(stderr,
                "%s: which path? e.g. attnd run /attention/dot < "
                "request.json (try attnd run --help)\n",
                a->who);
        return -1;
    }
    return 0;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* The first len bytes of target, percent-decoded as libmicrohttpd decodes
 * a request's path (%XX with two hex digits; anything else is kept), in a
 * malloc'd string; NULL when memory runs out. *nul is set when a %00 was
 * decoded (the daemon answers such a path 400; here it is a usage error). */
static char *decode_path(const char *target, size_t len, int *nul) {
    char *out = malloc(len + 1);
    if (out == NULL)
        return NULL;
    size_t n = 0;
    *nul = 0;
    for (size_t i = 0; i < len; i++) {
        int hi, lo;
        if (target[i] == '%' && i + 2 < len &&
            (hi = hex_digit(target[i + 1])) >= 0 &&
            (lo = hex_digit(target[i + 2])) >= 0) {
            out[n] = (char)(hi * 16 + lo);
            *nul |= out[n] == '\0';
            n++;
            i += 2;
        } else {
            out[n++] = target[i];
        }
    }
    out[n] = '\0';
    return out;
}

/* value percent-encoded for a query string (RFC 3986 unreserved bytes
 * kept), in a malloc'd string; NULL when memory runs out. */
static char *encode_query_value(const char *value) {
    static const char hex[] = "0123456789ABCDEF";
    size_t len = strlen(value);
    char *out = malloc(3 * len + 1);
    if (out == NULL)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)value[i];
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
            (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
            c == '~') {
            out[n++] = (char)c;
        } else {
            out[n++] = '%';
            out[n++] = hex[c >> 4];
            out[n++] = hex[c & 15];
        }
    }
    out[n] = '\0';
    return out;
}

void srv_offline_body_release(offline_body *b) {
    free(b->text);
    b->text = NULL;
    api_budget_give(b->charged);
    b->charged = 0;
}

/* The size the buffer of stdin grows to from cap, within a budget of
 * total bytes (0: none); 0 when it cannot grow (more than the whole
 * budget, or than memory can address). */
static size_t grown_cap(size_t cap, uint64_t total) {
    size_t next = cap == 0 ? READ_FIRST : cap > SIZE_MAX / 2 ? 0 : cap * 2;
    if (total > 0 && (next == 0 || next > total))
        next = cap < total ? (size_t)total : 0;
    return next;
}

int srv_offline_read(FILE *in, offline_body *b, uint64_t max) {
    api_budget_usage u;
    api_budget_stats(&u);
    size_t cap = 0, n = 0;
    char *buf = NULL;
    memset(b, 0, sizeof *b);
    for (;;) {
        if (n == cap) {
            int c = getc(in); /* grow only for a body that goes on */
            if (c == EOF)
                break;
            ungetc(c, in);
            size_t next = grown_cap(cap, u.total);
            if (next == 0 && u.total > 0) {
                b->refused = API_BUDGET_NEVER;
                break;
            }
            int room =
                next > cap ? api_budget_take(next - cap, 0) : API_BUDGET_OK;
            if (room != API_BUDGET_OK) {
                b->refused = room;
                break;
            }
            b->charged += next - cap;
            char *grown = next > cap ? realloc(buf, next) : NULL;
            if (grown == NULL) {
                b->text = buf;
                srv_offline_body_release(b);
                errno = ENOMEM;
                return -1;
            }
            buf = grown;
            cap = next;
        }
        size_t got = fread(buf + n, 1, cap - n, in);
        n += got;
        if (got == 0)
            break;
        if (max > 0 && n > max) {
            b->over_max = 1;
            b->text = buf;
            srv_offline_body_release(b);
            b->len = n;
            return 0;
        }
    }
    if (b->refused) { /* the rest is read and counted, not kept */
        b->text = buf;
        srv_offline_body_release(b);
        buf = NULL;
        char drop[4096];
        size_t got;
        while ((got = fread(drop, 1, sizeof drop, in)) > 0)
            n += got;
    }
    if (ferror(in)) {
        int saved = errno != 0 ? errno : EIO;
        b->text = buf;
        srv_offline_body_release(b);
        errno = saved;
        return -1;
    }
    if (n == 0) {
        free(buf);
        buf = NULL;
    }
    b->text = buf;
    b->len = n;
    return 0;
}

/* api_request.body_done: the body is parsed, free it and give back its
 * share of the budget before the answer is computed (as the daemon
 * does). */
static void free_body(void *ctx) {
    srv_offline_body_release(ctx);
}

/* Write the answer's body to out: res->body, or its stream read to the
 * end. On a terminal a newline follows a body that does not end with one,
 * so the prompt starts on a line of its own; into a file or a pipe the
 * body goes byte for byte. Returns 0, or -1 after printing why. */
static int write_body(const char *who, api_response *res, FILE *out) {
    char last = '\n';
    if (res->stream == NULL) {
        if (res->body_len > 0 &&
            fwrite(res->body, 1, res->body_len, out) != res->body_len)
            goto write_failed;
        if (res->body_len > 0)
            last = res->body[res->body_len - 1];
    } else {
        char *block = malloc(COPY_BLOCK);
        if (block == NULL) {
            fprintf(stderr, "%s: out of memory\n", who);
            return -1;
        }
        ssize_t n;
        while ((n = api_stream_read(res->stream, block, COPY_BLOCK)) > 0) {
            if (fwrite(block, 1, (size_t)n, out) != (size_t)n) {
                free(block);
                goto write_failed;
            }
            last = block[n - 1];
        }
        free(block);
        if (n < 0) {
            fprintf(stderr, "%s: out of memory while printing the answer\n",
                    who);
            return -1;
        }
    }
    if (last != '\n' && isatty(fileno(out)) && fputc('\n', out) == EOF)
        goto write_failed;
    if (fflush(out) != 0)
        goto write_failed;
    return 0;
write_failed:
    fprintf(stderr, "%s: cannot write the answer to %s: %s\n", who,
            out == stdout ? "stdout" : "stderr", strerror(errno));
    return -1;
}

/* The limits of a: the daemon's, but for the body (see the top). */
static void limits_of(const offline_args *a, api_limits *limits) {
    srv_options_limits(&a->opts, limits);
    /* the daemon's rule, four times the body limit; without one, four
     * times the daemon's default limit, not the budget (see the top) */
    if (a->opts.max_body_bytes == SIZE_MAX) {
        srv_options daemon;
        srv_options_default(&daemon);
        limits->max_tree_bytes = srv_max_tree_bytes(daemon.max_body_bytes);
    }
}

/* The Content-Type of attnd grade's body: a JSON array when its first
 * byte that is not JSON whitespace is '[', else lines of JSON. */
static const char *batch_content_type(const char *body, size_t len) {
    for (size_t i = 0; i < len; i++) {
        char c = body[i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            return c == '[' ? "application/json" : "application/x-ndjson";
    }
    return "application/x-ndjson";
}

/* The length of b's text (0 for a refused body, whose text is not kept). */
static size_t req_len(const offline_body *b) {
    return b->text != NULL ? b->len : 0;
}

/* The daemon's answer to a body that finds no room in the memory budget
 * (srv_http_answer_no_room, server/http_compute.c), into res. */
static void refuse_body(api_response *res, const offline_body *body,
                        const char *what, const char *path) {
    char detail[512];
    api_budget_refusal(detail, sizeof detail, body->refused, what, body->len);
    res->compute_ms = -1;
    res->route = api_route_of_path(path);
    api_refuse(res, path, body->refused == API_BUDGET_NEVER ? 413 : 503, "%s",
               detail);
}

/* Hand the request to the api and write its answer; returns SRV_OFFLINE_*.
 * path and query as api_request wants them; settings (NULL: none) what
 * attnd grade --question adds to each submission. */
static int answer(const offline_args *a, const char *path, const char *query,
                  const offline_body *settings,
                  const api_variant_secret *secret, const api_roster *roster) {
    const char *method = api_route_method(path);
    if (method == NULL)
        method = "GET";
    offline_body body;
    memset(&body, 0, sizeof body);
    if (strcmp(method, "GET") != 0 && srv_offline_read(stdin, &body, 0) != 0) {
        fprintf(stderr, "%s: cannot read the body from stdin: %s\n", a->who,
                strerror(errno));
        return SRV_OFFLINE_USAGE;
    }
    api_limits limits;
    limits_of(a, &limits);
    api_request req;
    memset(&req, 0, sizeof req);
    req.method = method;
    req.path = path;
    req.query = query;
    req.content_type = a->content_type;
    if (req.content_type == NULL)
        req.content_type = a->target == NULL
                               ? batch_content_type(body.text, req_len(&body))
                               : "application/json";
    const char *what = "the body";
    if (settings != NULL && srv_offline_question_batch(&body, req.content_type,
                                                       settings, &what) != 0) {
        srv_offline_body_release(&body);
        fprintf(stderr, "%s: out of memory\n", a->who);
        return SRV_OFFLINE_USAGE;
    }
    req.accept = a->accept;
    req.body = body.text;
    req.body_len = req_len(&body);
    req.limits = &limits;
    req.stream_ok = 1;
    req.body_done = free_body;
    req.body_ctx = &body;
    req.may_wait = 1;
    /* whoever runs attnd grade holds the files: a grader */
    req.grader = 1;
    req.variant_secret = secret;
    req.roster = roster;
    api_response res;
    memset(&res, 0, sizeof res);
    if (body.refused)
        refuse_body(&res, &body, what, path);
    else
        api_handle(&req, &res);
    srv_offline_body_release(&body);
    int ok = res.status >= 200 && res.status < 300;
    int rc = write_body(a->who, &res, ok ? stdout : stderr);
    if (rc != 0)
        rc = SRV_OFFLINE_USAGE;
    else if (!ok)
        rc = SRV_OFFLINE_PROBLEM;
    else if (res.item_problems > 0) {
        fprintf(stderr, "%s: %zu of the submissions could not be graded\n",
                a->who, res.item_problems);
        rc = SRV_OFFLINE_UNGRADED;
    }
    api_response_free(&res);
    return rc;
}

int srv_offline_main(int argc, char **argv) {
    if (strcmp(argv[0], "variants") == 0)
        return srv_offline_variants(argc, argv) ? SRV_OFFLINE_USAGE
                                                : SRV_OFFLINE_OK;
    offline_args a;
    int parsed = parse_args(&a, argc, argv);
    if (parsed != 0)
        return parsed > 0 ? SRV_OFFLINE_OK : SRV_OFFLINE_USAGE;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    api_set_threads(1, ncpu >= 1 ? (int)ncpu : 1);
    api_set_ready(1);
    /* the daemon's budget; no reservation waits (see the top) */
    const char *budget_source;
    api_budget_set(srv_memory_budget(a.opts.memory_budget, &budget_source), 0,
                   0);

    char *path = NULL, *query = NULL;
    int rc = SRV_OFFLINE_USAGE;
    api_variant_secret secret; /* attnd grade's, when it has one */
    memset(&secret, 0, sizeof secret);
    srv_roster roster;
    memset(&roster, 0, sizeof roster);
    if (a.target != NULL) { /* attnd run PATH[?QUERY] */
        const char *q = strchr(a.target, '?');
        size_t len = q != NULL ? (size_t)(q - a.target) : strlen(a.target);
        int nul;
        path = decode_path(a.target, len, &nul);
        query = q != NULL ? strdup(q + 1) : NULL;
        if (path == NULL || (q != NULL && query == NULL)) {
            fprintf(stderr, "%s: out of memory\n", a.who);
            goto done;
        }
        if (nul) {
            fprintf(stderr, "%s: the path holds a NUL byte (%%00)\n", a.who);
            goto done;
        }
    } else { /* attnd grade */
        path = strdup(GRADE_BATCH_PATH);
        if (a.format != NULL) {
            char *value = encode_query_value(a.format);
            query =
                value != NULL ? malloc(strlen(value) + sizeof "format=") : NULL;
            if (query != NULL)
                sprintf(query, "format=%s", value);
            free(value);
        }
        if (path == NULL || (a.format != NULL && query == NULL)) {
            fprintf(stderr, "%s: out of memory\n", a.who);
            goto done;
        }
    }
    offline_body settings;
    memset(&settings, 0, sizeof settings);
    char err[512];
    int has_secret =
        a.target == NULL
            ? srv_variant_secret_read(a.secret_file, &secret, err, sizeof err)
            : 0;
    if (has_secret < 0) {
        fprintf(stderr, "%s: --secret-file: %s\n", a.who, err);
        goto done;
    }
    if (a.roster != NULL &&
        srv_roster_read(a.roster, &roster, err, sizeof err)) {
        fprintf(stderr, "%s: --roster: %s\n", a.who, err);
        goto done;
    }
    if (a.question != NULL) { /* the question folder, before stdin */
        api_limits limits;
        limits_of(&a, &limits);
        if (srv_offline_question_load(a.who, a.question, &limits,
                                      has_secret ? &secret : NULL,
                                      &settings) != 0)
            goto done;
    }
    rc = answer(&a, path, query, a.question != NULL ? &settings : NULL,
                has_secret ? &secret : NULL, a.roster ? &roster.api : NULL);
    srv_offline_body_release(&settings);
done:
    srv_variant_secret_free(&secret);
    srv_roster_free(&roster);
    free(path);
    free(query);
    return rc;
}
