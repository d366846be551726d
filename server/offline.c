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
 * request to each submission of stdin before the batch reads it (the
 * section "attnd grade --question DIR" below).
 */
#include "offline.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "api.h"
#include "batch_scan.h"
#include "fastpath.h"
#include "memory_budget.h"
#include "options.h"
#include "problem.h"
#include "route.h"
#include "suggest.h"

/* the path POST /grade/batch, which attnd grade runs */
#define GRADE_BATCH_PATH "/grade/batch"
/* bytes copied from a streamed answer at a time */
#define COPY_BLOCK ((size_t)64 << 10)
/* the files of a question folder (attnd grade --question DIR) */
#define QUESTION_FILE "question.json"
#define REQUEST_FILE "request.json"
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
    const char *content_type; /* --content-type, or NULL */
    const char *accept;       /* --accept, or NULL */
    srv_options opts;         /* the limits */
} offline_args;

int srv_offline_command(const char *arg) {
    return arg != NULL &&
           (strcmp(arg, "run") == 0 || strcmp(arg, "grade") == 0);
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
                "a problem line\n");
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
            "Subcommands: attnd run PATH, attnd grade (docs/offline.md).\n"
            "Exit status: 0 a 2xx answer, on stdout; 1 a usage or I/O "
            "error; 2 a 4xx/5xx\n"
            "answer, its problem+json on stderr and nothing on stdout; 3 a "
            "batch answer\n"
            "(on stdout) in which some submissions could not be graded.\n",
            grade ? "application/x-ndjson, or application/json for an array"
                  : "application/json");
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
        const char **own = NULL;
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            usage(stdout, grade);
            return 1;
        }
        if (strcmp(arg, "--content-type") == 0)
            own = &a->content_type;
        else if (strcmp(arg, "--accept") == 0)
            own = &a->accept;
        else if (grade && strcmp(arg, "--format") == 0)
            own = &a->format;
        else if (grade && strcmp(arg, "--question") == 0)
            own = &a->question;
        if (own != NULL) {
            if (i + 1 >= argc) {
                fprintf(stderr, "%s: option '%s' needs a value\n", a->who, arg);
                return -1;
            }
            *own = argv[++i];
            continue;
        }
        if (strncmp(arg, "--", 2) == 0 && strchr(arg, '=') != NULL) {
            /* --content-type=TYPE and the like */
            size_t n = (size_t)(strchr(arg, '=') - arg);
            const char *value = arg + n + 1;
            if (n == 14 && strncmp(arg, "--content-type", n) == 0) {
                a->content_type = value;
                continue;
            }
            if (n == 8 && strncmp(arg, "--accept", n) == 0) {
                a->accept = value;
                continue;
            }
            if (grade && n == 8 && strncmp(arg, "--format", n) == 0) {
                a->format = value;
                continue;
            }
            if (grade && n == 10 && strncmp(arg, "--question", n) == 0) {
                a->question = value;
                continue;
            }
        }
        if (strncmp(arg, "--", 2) == 0) {
            if (srv_options_take(&a->opts, argc, argv, &i, limit_flags,
                                 a->who) != SRV_OPT_RUN)
                return -1;
            continue;
        }
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

/* A body read from stdin and what it holds of the memory budget. */
typedef struct {
    char *text;       /* malloc'd; NULL when empty, freed or refused */
    size_t len;       /* its length (a refused body's whole length) */
    uint64_t charged; /* bytes of the budget its buffer holds */
    int refused;      /* API_BUDGET_NEVER: the buffer found no room */
} offline_body;

/* Give back what b holds, buffer and budget. */
static void body_release(offline_body *b) {
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

/* All of in (stdin, or a question folder's file) into b (b->text NULL
 * when it is empty), its buffer reserved from the memory budget as it
 * grows, as the daemon reserves a body's.
 * A body that outgrows the whole budget is read to its end and dropped:
 * b->refused API_BUDGET_NEVER, b->len its whole length (the daemon's
 * answer names it). Returns 0, or -1 with errno set (ENOMEM when memory
 * runs out). */
static int read_stream(FILE *in, offline_body *b) {
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
                body_release(b);
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
    }
    if (b->refused) { /* the rest is read and counted, not kept */
        b->text = buf;
        body_release(b);
        buf = NULL;
        char drop[4096];
        size_t got;
        while ((got = fread(drop, 1, sizeof drop, in)) > 0)
            n += got;
    }
    if (ferror(in)) {
        int saved = errno != 0 ? errno : EIO;
        b->text = buf;
        body_release(b);
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
    body_release(ctx);
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
    api_limits_default(limits);
    limits->max_body_bytes = a->opts.max_body_bytes;
    limits->max_elements = a->opts.max_elements;
    limits->max_work = a->opts.max_work;
    /* the daemon's rule, four times the body limit; without one, four
     * times the daemon's default limit, not the budget (see the top) */
    size_t body_limit = a->opts.max_body_bytes;
    if (body_limit == SIZE_MAX) {
        srv_options daemon;
        srv_options_default(&daemon);
        body_limit = daemon.max_body_bytes;
    }
    limits->max_tree_bytes = srv_max_tree_bytes(body_limit);
    limits->compute_timeout_s = a->opts.compute_timeout_s;
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

/* ------------------------------------------- attnd grade --question DIR
 *
 * A question folder (docs/offline.md) holds question.json, the members of
 * a grading request that every submission of the question shares, and
 * request.json, the request the students answer. Each submission of
 * stdin then gives only what is its own ({"id", "answer"}; other members
 * too), and the batch's body is stdin with, before the closing '}' of
 * each submission, question.json's members and "request": request.json:
 *
 *   {"id": "ada", "answer": {...}}
 *   -> {"id": "ada", "answer": {...},"endpoint":...,"request":{...}}
 *
 * Nothing else in the body moves: blank lines, line numbers, array
 * elements and a submission's own bytes stay where they were, so the
 * batch's problems (a line that is not JSON, not an object) read as for
 * the body without --question. A submission that gives a member the
 * question gives too has it twice, which the batch refuses as that
 * submission's problem (invalid_json, "an object gives a member twice"):
 * the question's settings are never replaced by a line's, nor the
 * reverse. The submissions are not parsed here; the batch parses each
 * one, as it would parse it without --question.
 *
 * Both files are read whole, each its buffer and its JSON tree reserved
 * from the memory budget (the tree bounded as a body's), checked, and
 * kept as text: the members to add (question.json's re-written compactly,
 * request.json's as it is, its line ends made spaces, which JSON allows
 * only as white space, so that a submission stays on one line). The body
 * so built is reserved from the budget before it is made. */

/* question.json's members: those of a grading request (grade.c) but the
 * ones each submission gives (id, answer), request.json's (request) and
 * the command line's (format: --format). */
static const char *const question_members[] = {
    "endpoint",   "fields",        "compare", "points", "credit",
    "visibility", "show_expected", "rtol",    "atol"};
#define N_QUESTION_MEMBERS                                                     \
    (sizeof question_members / sizeof question_members[0])

/* What a question folder's file holds of the budget for its JSON tree
 * (an api_tree_gate): the tree is bounded as a body's. */
typedef struct {
    size_t max;       /* limits.max_tree_bytes (0: none) */
    uint64_t bytes;   /* the last tree asked for */
    uint64_t charged; /* of the budget */
    int over;         /* bytes > max */
    int room;         /* API_BUDGET_* of the last reservation */
} file_tree;

static int admit_file_tree(void *ctx, uint64_t bytes) {
    file_tree *t = ctx;
    api_budget_give(t->charged); /* a second text replaces the first */
    t->charged = 0;
    t->bytes = bytes;
    if (t->max > 0 && bytes > t->max) {
        t->over = 1;
        return -1;
    }
    t->room = api_budget_take(bytes, 0);
    if (t->room != API_BUDGET_OK)
        return -1;
    t->charged = bytes;
    return 0;
}

/* dir/name in a malloc'd string, or NULL when memory runs out. */
static char *folder_file(const char *dir, const char *name) {
    size_t n = strlen(dir);
    char *path = malloc(n + 1 + strlen(name) + 1);
    if (path != NULL)
        sprintf(path, "%s%s%s", dir, n > 0 && dir[n - 1] == '/' ? "" : "/",
                name);
    return path;
}

/* JSON's white space. */
static int json_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The JSON object in the file at path, parsed as a body is: the file's
 * bytes into *file and its tree admitted by *tree (both reserved from the
 * memory budget, the tree bounded by limits), the tensors of route's
 * fields read by *fast when route is given. Returns the object, or NULL
 * after printing why (naming the file) with nothing held. The caller
 * releases the object, *fast, tree->charged and *file. */
static json_t *load_folder_file(const char *who, const char *path,
                                const api_limits *limits,
                                const api_route *route, api_fastpath *fast,
                                file_tree *tree, offline_body *file) {
    memset(file, 0, sizeof *file);
    FILE *in = fopen(path, "rb");
    if (in == NULL) {
        fprintf(stderr, "%s: cannot read %s: %s\n", who, path, strerror(errno));
        return NULL;
    }
    int rc = read_stream(in, file);
    int saved = errno;
    fclose(in);
    if (rc != 0) {
        fprintf(stderr, "%s: cannot read %s: %s\n", who, path, strerror(saved));
        return NULL;
    }
    if (file->refused) {
        char detail[512];
        api_budget_refusal(detail, sizeof detail, file->refused, path,
                           file->len);
        fprintf(stderr, "%s: %s\n", who, detail);
        return NULL;
    }
    if (file->text != NULL && file->charged > file->len) {
        /* kept for the whole batch: its room beyond the text is given back */
        char *fit = realloc(file->text, file->len);
        if (fit != NULL) {
            file->text = fit;
            api_budget_give(file->charged - file->len);
            file->charged = file->len;
        }
    }
    const char *nul =
        file->text != NULL ? memchr(file->text, '\0', file->len) : NULL;
    if (nul != NULL) {
        fprintf(stderr,
                "%s: %s is not valid JSON: a raw NUL byte at byte %zu\n", who,
                path, (size_t)(nul - file->text));
        body_release(file);
        return NULL;
    }
    memset(tree, 0, sizeof *tree);
    tree->max = limits->max_tree_bytes;
    api_tree_gate gate = {admit_file_tree, tree};
    json_error_t error;
    json_t *root = api_fastpath_load(
        fast, route != NULL ? api_route_fast_fields(route) : NULL,
        file->text != NULL ? file->text : "", file->len,
        JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &gate,
        &error);
    if (root == NULL) {
        if (tree->over)
            fprintf(stderr,
                    "%s: %s would take about %llu MiB of memory as a tree of "
                    "values, over the limit of %zu MiB (four times "
                    "--max-body-bytes)\n",
                    who, path, (unsigned long long)(tree->bytes >> 20),
                    tree->max >> 20);
        else if (fast->refused) {
            char detail[512];
            api_budget_refusal(detail, sizeof detail, tree->room, path,
                               tree->bytes);
            fprintf(stderr, "%s: %s (its JSON tree)\n", who, detail);
        } else
            fprintf(stderr,
                    "%s: %s is not valid JSON: %s (line %d, column %d)\n", who,
                    path, error.text, error.line, error.column);
    } else if (!json_is_object(root)) {
        fprintf(stderr, "%s: %s holds %s, not a JSON object {...}\n", who, path,
                api_json_kind(root));
        json_decref(root);
        root = NULL;
    }
    if (root == NULL) {
        api_fastpath_release(fast);
        api_budget_give(tree->charged);
        tree->charged = 0;
        body_release(file);
    }
    return root;
}

/* Check question.json's members; returns 0, or -1 after printing why. */
static int check_question(const char *who, const char *path,
                          const json_t *question) {
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)question, key, value) {
        size_t i = 0;
        while (i < N_QUESTION_MEMBERS && strcmp(key, question_members[i]))
            i++;
        if (i < N_QUESTION_MEMBERS)
            continue;
        const char *why = NULL;
        if (!strcmp(key, "request"))
            why = "the request the students answer is request.json, beside it";
        else if (!strcmp(key, "answer") || !strcmp(key, "id"))
            why = "each submission on stdin gives its own";
        else if (!strcmp(key, "format"))
            why = "the answer's form is attnd grade's --format";
        char names[256], hint[API_SUGGEST_TEXT];
        api_join_names(names, sizeof names, question_members,
                       N_QUESTION_MEMBERS);
        if (why != NULL)
            fprintf(stderr, "%s: %s: `%s` is not a question's setting: %s\n",
                    who, path, key, why);
        else
            fprintf(stderr,
                    "%s: %s: unknown member `%s`%s A question's settings "
                    "are: %s\n",
                    who, path, key,
                    api_did_you_mean(hint, key, strlen(key), question_members,
                                     N_QUESTION_MEMBERS),
                    names);
        return -1;
    }
    return 0;
}

/* Read dir's question.json and request.json into *settings: the text
 * added to each submission (question.json's members, then "request":
 * request.json), reserved from the memory budget. Returns 0, or -1 after
 * printing why. */
static int load_question(const char *who, const char *dir,
                         const api_limits *limits, offline_body *settings) {
    memset(settings, 0, sizeof *settings);
    int rc = -1;
    char *members = NULL;
    api_fastpath q_fast, r_fast;
    file_tree q_tree, r_tree;
    char *q_path = folder_file(dir, QUESTION_FILE);
    char *r_path = folder_file(dir, REQUEST_FILE);
    offline_body q_file, r_file;
    memset(&q_file, 0, sizeof q_file);
    memset(&r_file, 0, sizeof r_file);
    if (q_path == NULL || r_path == NULL) {
        fprintf(stderr, "%s: out of memory\n", who);
        goto done;
    }
    /* question.json: its members, written compactly without the braces */
    json_t *question =
        load_folder_file(who, q_path, limits, NULL, &q_fast, &q_tree, &q_file);
    if (question == NULL)
        goto done;
    const char *endpoint =
        json_string_value(json_object_get(question, "endpoint"));
    const api_route *route = endpoint != NULL ? api_route_find(endpoint) : NULL;
    if (check_question(who, q_path, question) == 0) {
        members = json_dumps(question, JSON_COMPACT);
        if (members == NULL)
            fprintf(stderr, "%s: out of memory\n", who);
    }
    json_decref(question);
    api_fastpath_release(&q_fast);
    api_budget_give(q_tree.charged);
    body_release(&q_file);
    if (members == NULL)
        goto done;
    /* request.json: checked as JSON, its text kept */
    json_t *request =
        load_folder_file(who, r_path, limits, route, &r_fast, &r_tree, &r_file);
    if (request == NULL)
        goto done;
    json_decref(request);
    api_fastpath_release(&r_fast);
    api_budget_give(r_tree.charged);
    /* the text: members (without '{' and '}'), ",", "request":, the
     * request's text from its '{' to its '}' */
    size_t m_len = strlen(members) - 2;
    const char *r = r_file.text;
    size_t r_start = 0, r_end = r_file.len;
    while (json_space(r[r_start]))
        r_start++;
    while (json_space(r[r_end - 1]))
        r_end--;
    size_t len =
        m_len + (m_len > 0) + strlen("\"request\":") + (r_end - r_start);
    int room = api_budget_take(len, 0);
    if (room != API_BUDGET_OK) {
        char detail[512];
        api_budget_refusal(detail, sizeof detail, room, r_path, len);
        fprintf(stderr, "%s: %s\n", who, detail);
        goto done;
    }
    settings->charged = len;
    settings->text = malloc(len);
    if (settings->text == NULL) {
        fprintf(stderr, "%s: out of memory\n", who);
        body_release(settings);
        goto done;
    }
    char *out = settings->text;
    memcpy(out, members + 1, m_len);
    out += m_len;
    if (m_len > 0)
        *out++ = ',';
    memcpy(out, "\"request\":", strlen("\"request\":"));
    out += strlen("\"request\":");
    for (size_t i = r_start; i < r_end; i++) /* one line */
        *out++ = r[i] == '\n' || r[i] == '\r' ? ' ' : r[i];
    settings->len = len;
    rc = 0;
done:
    body_release(&r_file);
    free(members);
    free(q_path);
    free(r_path);
    return rc;
}

/* Where the object text[0 .. len) holds closes: the index of its last
 * '}', with *empty set when only white space lies between its '{' and
 * it; SIZE_MAX when the text, white space aside, does not begin with '{'
 * and end with '}'. Such a submission is passed on as it is, and the
 * batch says what is wrong with it; one that does and still is not an
 * object stays wrong with the settings added (they hold no quote or
 * bracket that could close what the submission left open, and no comma
 * that could mend it). */
static size_t object_close(const char *text, size_t len, int *empty) {
    size_t first = 0, last = len;
    while (first < len && json_space(text[first]))
        first++;
    while (last > first && json_space(text[last - 1]))
        last--;
    if (last - first < 2 || text[first] != '{' || text[last - 1] != '}')
        return SIZE_MAX;
    size_t inner = first + 1;
    while (inner < last - 1 && json_space(text[inner]))
        inner++;
    *empty = inner == last - 1;
    return last - 1;
}

/* The body of the batch: in[0 .. len) in form with settings added to each
 * submission that is an object (see above), into out (NULL: only
 * counted); *total gets its length. Returns 0, or -1 when the length
 * would pass SIZE_MAX. */
static int add_settings(const char *in, size_t len, api_batch_form form,
                        const offline_body *settings, char *out,
                        size_t *total) {
    api_batch_scanner scan;
    api_batch_item item;
    size_t where, copied = 0, at = 0, extra = 0;
    const char *why;
    api_batch_scan_start(&scan, in, len, form);
    while (api_batch_scan_next(&scan, &item, NULL, 0, &where, &why) ==
           API_BATCH_ITEM) {
        int empty;
        size_t close = object_close(in + item.start, item.len, &empty);
        if (close == SIZE_MAX)
            continue;
        close += item.start;
        size_t add = settings->len + (empty ? 0 : 1);
        if (add > SIZE_MAX - len - extra)
            return -1;
        extra += add;
        if (out != NULL) {
            memcpy(out + at, in + copied, close - copied);
            at += close - copied;
            if (!empty)
                out[at++] = ',';
            memcpy(out + at, settings->text, settings->len);
            at += settings->len;
        }
        copied = close; /* the '}' goes with what follows */
    }
    if (out != NULL)
        memcpy(out + at, in + copied, len - copied);
    *total = len + extra;
    return 0;
}

/* body (stdin, of Content-Type content_type) replaced by the batch's
 * body with settings added to its submissions, reserved from the memory
 * budget; a body that finds no room is left refused (body->refused, its
 * length body->len) and *what names it. A body of a type the batch does
 * not take, refused or empty, is left as it is. Returns 0, or -1 when
 * memory runs out. */
static int build_batch(offline_body *body, const char *content_type,
                       const offline_body *settings, const char **what) {
    const char *type =
        api_route_body_type(api_route_find(GRADE_BATCH_PATH), content_type);
    if (type == NULL || body->refused || body->text == NULL)
        return 0;
    api_batch_form form = strcmp(type, "application/json") == 0
                              ? API_BATCH_ARRAY
                              : API_BATCH_LINES;
    offline_body built;
    memset(&built, 0, sizeof built);
    if (add_settings(body->text, body->len, form, settings, NULL, &built.len))
        built.len = SIZE_MAX;
    int room = api_budget_take(built.len, 0);
    *what = "the body built with the question's settings and request";
    if (room != API_BUDGET_OK) {
        body_release(body);
        body->refused = room;
        body->len = built.len;
        return 0;
    }
    built.charged = built.len;
    built.text = malloc(built.len > 0 ? built.len : 1);
    if (built.text == NULL) {
        body_release(&built);
        return -1;
    }
    add_settings(body->text, body->len, form, settings, built.text, &built.len);
    body_release(body);
    *body = built;
    return 0;
}

/* Grade an empty answer with the question's settings and request, once,
 * before any student's: a setting the grader refuses (a misspelt field in
 * "fields", an unknown comparison, points naming no field) or a request
 * the endpoint refuses would otherwise fail every submission alike, each
 * a 0 the student reads. Only "nothing to grade" (422 at /answer) may come
 * back, or, when question.json leaves the endpoint to each submission,
 * its absence (422 at /endpoint). Returns 0, or -1 after printing the problem
 * and the file it is in. */
static int try_question(const char *who, const char *dir,
                        const api_limits *limits,
                        const offline_body *settings) {
    static const char empty[] = ",\"answer\":{}}";
    size_t len = 1 + settings->len + sizeof empty - 1;
    int room = api_budget_take(len, 0);
    if (room != API_BUDGET_OK) {
        char detail[512];
        api_budget_refusal(detail, sizeof detail, room, dir, len);
        fprintf(stderr, "%s: %s\n", who, detail);
        return -1;
    }
    char *body = malloc(len);
    if (body == NULL) {
        api_budget_give(len);
        fprintf(stderr, "%s: out of memory\n", who);
        return -1;
    }
    body[0] = '{';
    memcpy(body + 1, settings->text, settings->len);
    memcpy(body + 1 + settings->len, empty, sizeof empty - 1);
    api_request req;
    memset(&req, 0, sizeof req);
    req.method = "POST";
    req.path = "/grade";
    req.content_type = "application/json";
    req.body = body;
    req.body_len = len;
    req.limits = limits;
    req.may_wait = 1;
    api_response res;
    memset(&res, 0, sizeof res);
    api_handle(&req, &res);
    free(body);
    api_budget_give(len);
    json_t *problem = res.status >= 400 && res.body != NULL
                          ? json_loadb(res.body, res.body_len, 0, NULL)
                          : NULL;
    const char *pointer =
        json_string_value(json_object_get(problem, "pointer"));
    const char *code = json_string_value(json_object_get(problem, "code"));
    /* a question.json without "endpoint" leaves it to each submission:
     * then nothing past it can be tried before one arrives */
    int fine = res.status < 400 ||
               (res.status == 422 && pointer != NULL &&
                (strcmp(pointer, "/answer") == 0 ||
                 (strcmp(pointer, "/endpoint") == 0 && code != NULL &&
                  strcmp(code, "missing_field") == 0)));
    if (!fine) {
        /* a pointer into the request names its place in request.json */
        int in_request =
            pointer != NULL && strncmp(pointer, "/request", 8) == 0;
        const char *file = in_request ? REQUEST_FILE : QUESTION_FILE;
        if (in_request)
            pointer = pointer[8] != '\0' ? pointer + 8 : NULL;
        const char *detail =
            json_string_value(json_object_get(problem, "detail"));
        fprintf(stderr, "%s: %s/%s: %s%s%s: %s\n", who, dir, file,
                code != NULL ? code : "error", pointer != NULL ? " at " : "",
                pointer != NULL ? pointer : "",
                detail != NULL ? detail : "the question cannot be graded");
    }
    json_decref(problem);
    api_response_free(&res);
    return fine ? 0 : -1;
}

/* Hand the request to the api and write its answer; returns SRV_OFFLINE_*.
 * path and query as api_request wants them; settings (NULL: none) what
 * attnd grade --question adds to each submission. */
static int answer(const offline_args *a, const char *path, const char *query,
                  const offline_body *settings) {
    const api_route *route = api_route_find(path);
    const char *method = route != NULL ? route->method : "GET";
    offline_body body;
    memset(&body, 0, sizeof body);
    if (strcmp(method, "GET") != 0 && read_stream(stdin, &body) != 0) {
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
    if (settings != NULL &&
        build_batch(&body, req.content_type, settings, &what) != 0) {
        body_release(&body);
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
    api_response res;
    memset(&res, 0, sizeof res);
    if (body.refused)
        refuse_body(&res, &body, what, path);
    else
        api_handle(&req, &res);
    body_release(&body);
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
    if (a.question != NULL) { /* the question folder, before stdin */
        api_limits limits;
        limits_of(&a, &limits);
        if (load_question(a.who, a.question, &limits, &settings) != 0 ||
            try_question(a.who, a.question, &limits, &settings) != 0) {
            body_release(&settings);
            goto done;
        }
    }
    rc = answer(&a, path, query, a.question != NULL ? &settings : NULL);
    body_release(&settings);
done:
    free(path);
    free(query);
    return rc;
}
