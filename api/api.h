/*
 * api.h — attnd's request layer: pure functions from an HTTP request
 * (method, path, query, headers of interest, body) to a response (status,
 * content type, body). No sockets and no libmicrohttpd here, so every route
 * can be tested and fuzzed in-process. The wire contract is docs-level
 * (docs/contract.md, api/fronts/openapi.json).
 */
#ifndef API_H
#define API_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Limits and settings the server passes to every request. */
typedef struct {
    size_t max_body_bytes; /* 16 MiB */
    size_t max_elements;   /* 16 Mi doubles per tensor */
    uint64_t max_work;     /* 2^33 estimated scalar operations */
    /* the JSON tree jansson may build for a body, estimated before it is
     * built (api_json_tree_bytes): 64 MiB, four times max_body_bytes in the
     * server; 0: no limit */
    size_t max_tree_bytes;
    /* seconds a request may compute (lib/'s deadline, attn.h); 0: none */
    unsigned compute_timeout_s;
} api_limits;

void api_limits_default(api_limits *limits);

/* A response body printed as it is read (api/text/stream.h). */
typedef struct api_stream api_stream;

/* A course's secret, from which each student's variant of a problem is
 * drawn (contract section 13b, api/grading/variant.h): read from a file
 * or the environment by the server, never from a request. */
typedef struct {
    const unsigned char *bytes;
    size_t len;
} api_variant_secret;

/* A class's roster (contract section 13b): its students' ids, sorted
 * by strcmp, each with its group's id (NULL: none). A variant is drawn
 * for the group's id where there is one. */
typedef struct {
    size_t n;
    const char *const *ids;
    const char *const *groups;
} api_roster;

typedef struct {
    const char *method; /* "GET", "POST", ... */
    const char
        *path; /* decoded path without the query, e.g. "/attention/dot" */
    const char *query;            /* raw query string without '?', or NULL */
    const char *content_type;     /* Content-Type header or NULL */
    const char *accept;           /* Accept header or NULL */
    const char *content_encoding; /* Content-Encoding header or NULL */
    /* Inference-Header-Content-Length (the Open Inference Protocol's binary
     * tensor data extension) or NULL */
    const char *inference_header_length;
    const char *body; /* may contain NUL bytes; NULL when body_len == 0 */
    size_t body_len;
    const api_limits *limits;
    int stream_ok; /* 1: a large answer may come as api_response.stream */
    /* Called (when not NULL) once the body has been parsed and is no longer
     * read, so that the caller may free it before the answer is computed. */
    void (*body_done)(void *ctx);
    void *body_ctx;
    /* 1: a reservation of the memory budget that does not fit may wait for
     * room (a compute thread); 0: it is refused at once (an HTTP thread,
     * which must never block) */
    int may_wait;
    /* > 0: a try on an HTTP thread, which computes the request only when
     * its estimated work is at most this many operations and every memory
     * reservation fits at once (neither waiting nor refused); otherwise
     * the answer is api_response.deferred, for a compute thread to handle
     * the request again (with 0 here). 0: no such bound. */
    uint64_t inline_work_max;
    /* non-NULL: the server sets *abandoned (non-zero) once the client has
     * gone; the computation then stops at its next check (lib/'s deadline
     * checks, attn_deadline_watch) with 503, an answer nobody reads.
     * Kept alive by the caller until api_handle returns. */
    const atomic_int *abandoned;
    /* If-None-Match header or NULL: an answer whose ETag it names is 304,
     * not computed (api/core/answer_cache.h) */
    const char *if_none_match;
    /* the server's variant secret, or NULL when it draws no variants */
    const api_variant_secret *variant_secret;
    /* the class's roster, or NULL: then any id is a student, and only the
     * batch's own variants are checked for copies */
    const api_roster *roster;
    /* 1: the request comes from a grader (a grading token, or attnd
     * grade): it may grade and hand out variants, which only the secret
     * and a student's id make */
    int grader;
} api_request;

/* An ETag's text: a quoted 32-digit hex string, and its NUL. */
#define API_ETAG_TEXT 35

typedef struct {
    int status;               /* HTTP status */
    const char *content_type; /* static string */
    char *body; /* malloc'd, owned by the caller (api_response_free) */
    size_t body_len;
    const char *allow; /* static "Allow" value for 405, else NULL */
    /* static "Accept-Encoding" value for a 415 refusing the body's content
     * coding (RFC 9110 section 15.5.16), else NULL */
    const char *accept_encoding;
    double compute_ms; /* >= 0: time in the library, for Server-Timing; < 0:
                          none */
    const char
        *route;      /* static route template ("/attention/dot"), or "other" */
    int vary_accept; /* 1: add "Vary: Accept" */
    /* > 0: the answer is a JSON header of this many bytes followed by raw
     * tensor bytes (the binary tensor data extension): send it as
     * Inference-Header-Content-Length, and do not compress it */
    size_t inference_header_length;
    api_stream *stream; /* non-NULL: the body comes from api_stream_read
                           (body NULL, length unknown in advance) */
    /* bytes of the memory budget that body or stream holds, given back
     * (api_budget_give) by whoever frees them: api_response_free, or the
     * server once the answer is sent */
    uint64_t charged;
    /* 1: a 503 for want of room in the memory budget (its code is
     * "overloaded", as for a busy server; counted apart) */
    int no_room;
    /* a batch (POST /grade/batch): how many of its submissions were
     * answered with a problem of their own instead of a grade */
    size_t item_problems;
    /* 1: not handled, nothing else set: the request is beyond
     * api_request.inline_work_max (or its memory does not fit now) */
    int deferred;
    /* the answer's ETag (a 200 or 304 of a route whose answers are a
     * function of the request: answer_cache.h), or "" */
    char etag[API_ETAG_TEXT];
} api_response;

/* Keep at most max_bytes of recent answers, reserved from the memory
 * budget, for identical requests (0: none; identical requests computing
 * at once still share one computation). Call before serving. */
void api_answer_cache_set(uint64_t max_bytes);

/* What identical requests shared since start: answers kept now (entries,
 * bytes), requests answered from a kept answer (hits) or from one
 * computed meanwhile (shared), and the computations offered to be shared
 * (computed). */
typedef struct {
    uint64_t entries, bytes;
    uint64_t hits, shared, computed;
} api_answer_cache_usage;

void api_answer_cache_stats(api_answer_cache_usage *u);

/* On an HTTP thread, before a request's body is parsed or queued: 1 when
 * an identical request's answer is kept (found by the request's bytes as
 * sent) and res holds it, 200, or 304 for an If-None-Match that names its
 * ETag; else 0 (res untouched), and the request goes on as usual. */
int api_answer_ready(const api_request *req, api_response *res);

/* Handle one request. Never fails: every error becomes a problem+json
 * response (500 "internal" when memory runs out). */
void api_handle(const api_request *req, api_response *res);

/* Frees res->body and res->stream; safe on a zeroed response. */
void api_response_free(api_response *res);

/* The next at most max bytes of a streamed body into dst. Returns the
 * number written (> 0), 0 at the end, or -1 when memory runs out. The
 * bytes are exactly those of the unstreamed answer. */
ssize_t api_stream_read(api_stream *s, char *dst, size_t max);

/* The whole length of a streamed body when it is known before it is
 * read (every entry left to print is raw bytes: the binary tensor data
 * extension), else -1. */
long long api_stream_length(const api_stream *s);

/* Free a stream (api_response_free does it for res->stream); NULL is
 * fine. */
void api_stream_free(api_stream *s);

/* The server-wide memory budget (docs/contract.md "Sharing one server"):
 * every request reserves what it will hold before it holds it (its body,
 * its JSON tree, its tensors, working set and answer; api/core/budget.h).
 * total_bytes 0: no budget (the default). At most max_waiters reservations
 * wait for room at a time, each at most max_wait_ms; others are refused at
 * once. */
void api_budget_set(uint64_t total_bytes, unsigned max_waiters,
                    unsigned max_wait_ms);

enum {
    API_BUDGET_OK = 0,    /* reserved */
    API_BUDGET_NEVER = 1, /* more than the whole budget: 413 */
    API_BUDGET_BUSY = 2   /* no room now, nor after waiting: 503 */
};

/* Reserve bytes (waiting for room when may_wait > 0 and a waiter's place
 * is free; may_wait < 0: a try, whose API_BUDGET_BUSY is not counted as a
 * refusal). Returns API_BUDGET_*; only API_BUDGET_OK reserves. */
int api_budget_take(uint64_t bytes, int may_wait);

/* Reserve bytes without a check (memory already held). */
void api_budget_force(uint64_t bytes);

/* Give back bytes reserved before. */
void api_budget_give(uint64_t bytes);

typedef struct {
    uint64_t total;    /* the budget, or 0 when there is none */
    uint64_t used;     /* reserved now */
    uint64_t peak;     /* most reserved at once since start */
    unsigned waiting;  /* reservations waiting for room now */
    uint64_t refusals; /* reservations refused for want of room (503) */
} api_budget_usage;

void api_budget_stats(api_budget_usage *u);

/* The detail of a refused reservation of bytes for what ("the body"):
 * room API_BUDGET_NEVER (413) or API_BUDGET_BUSY (503), with sizes in
 * KiB, MiB or GiB. */
void api_budget_refusal(char *buf, size_t cap, int room, const char *what,
                        uint64_t bytes);

/* The detail of a request refused because its client's connections hold
 * `held` bytes of the budget in bodies and unsent answers, beyond the
 * client's share of `share` bytes while more than half of the budget is
 * taken (the server's rule; docs/contract.md "Sharing one server"). */
void api_budget_share_refusal(char *buf, size_t cap, uint64_t held,
                              uint64_t share);

/* Early decision from the headers alone, before the body arrives:
 * 404, 405, 415 and 413 (by Content-Length; content_length < 0 = unknown).
 * Returns 0 when the request may proceed, else fills res like api_handle. */
int api_precheck(const api_request *req, long long content_length,
                 api_response *res);

/* What the server needs to know of a route, from its entry in the route
 * table (api/core/route.h). api_response.route names the route. */
enum {
    API_ROUTE_JSON_BODY = 1u << 0,   /* POST: the body is a JSON object */
    API_ROUTE_VARY_ACCEPT = 1u << 1, /* the answer depends on Accept (SVG) */
    API_ROUTE_COMPUTES = 1u << 2,    /* it calls the attention library */
    API_ROUTE_OPEN = 1u << 3,        /* no token needed (--token-file) */
    API_ROUTE_OPEN_IF_METRICS_PUBLIC = 1u << 4, /* open with --metrics-public */
    API_ROUTE_UNLIMITED = 1u << 5, /* no limit counts it: health probes, so
                                      that a busy server is never restarted */
    /* its work is at most quadratic in the numbers of its body (every
     * size comes from a tensor sent, none from a parameter such as
     * num_hiddens or epochs): a small body is a short computation, which
     * the server may run on its HTTP thread */
    API_ROUTE_WORK_OF_BODY = 1u << 6,
    /* the Open Inference Protocol's infer: its binary tensor data
     * extension's header (Inference-Header-Content-Length) applies */
    API_ROUTE_TENSOR_PROTOCOL = 1u << 7,
    /* POST: the handler reads the body as it was sent (api_request.body,
     * one of its route's body_types, route.h); nothing parses it before */
    API_ROUTE_RAW_BODY = 1u << 8,
    /* POST: an object that gives a member twice is refused (400): where
     * the body is graded, a later copy must not replace the member graded
     * (jansson keeps the last) */
    API_ROUTE_UNIQUE_MEMBERS = 1u << 9,
    /* the compute lane its jobs run in (server/compute_pool.h): grading
     * (/grade), bulk (/grade/batch); neither: interactive, a click */
    API_ROUTE_LANE_GRADING = 1u << 10,
    API_ROUTE_LANE_BULK = 1u << 11,
    /* GET: a document served as it is, the same bytes every time (the lab
     * page, /openapi.json, /version): no per-client limit counts it, so
     * that a room behind one address loads the page at once, and the
     * server keeps its compressed form instead of compressing it again */
    API_ROUTE_STATIC = 1u << 12
};

/* The API_ROUTE_* flags of the route named route ("/healthz",
 * "/v2/models/{model}/infer"), or 0 for "other" and NULL. */
unsigned api_route_flags(const char *route);

/* The template of the route that answers path ("/attention/dot";
 * "/v2/models/attention_dot/infer" -> "/v2/models/{model}/infer"), or NULL
 * when none does. */
const char *api_route_of_path(const char *path);

/* The method of the route that answers path ("POST" for "/attention/dot";
 * the first route's when several do), or NULL when none does. For a
 * caller that names a path alone, without a method (attnd run). */
const char *api_route_method(const char *path);

/* Fill res (status, content type, body) with the server's own refusal of
 * a request, its detail printed from the printf format fmt. The server
 * writes no error body of its own, so that a client meets one form of
 * error whichever layer refuses it.
 *   path non-NULL: a request the api would otherwise answer, refused
 *     before it is asked (the gate, the memory budget, the probe port),
 *     written as path's front writes its errors (api/core/front.h: under
 *     /v2 the protocol's {"error"}, else problem+json), with the code
 *     the contract gives status: 401 unauthorized, 404 not_found, 405
 *     method_not_allowed, 413 payload_too_large, 429 rate_limited, 503
 *     overloaded; any other status is 500 internal. The detail is cut to
 *     767 bytes at a UTF-8 boundary, as every detail of the api.
 *   path NULL: an error of HTTP itself, found before any route is asked
 *     (a request target or header block over its limit, broken framing,
 *     a transfer coding not understood, a client too slow, a body where
 *     none may come): problem+json whatever the path, with the status,
 *     its title (RFC 9110 section 15) and a code named after it
 *     (bad_request 400, request_timeout 408, payload_too_large 413,
 *     uri_too_long 414, rate_limited 429, header_fields_too_large 431,
 *     not_implemented 501, overloaded 503 (an address over its
 *     connections), else internal; docs/errors.md); the detail is kept
 *     whole.
 * Any res->body already there is freed first; when memory runs out,
 * res->body is left NULL with body_len 0. res->route, compute_ms and
 * allow are the caller's to set. */
void api_refuse(api_response *res, const char *path, int status,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Parse a qvalue of n bytes at s (not NUL-terminated; RFC 9110 section
 * 12.4.2: "0" [ "." 0*3DIGIT ] or "1" [ "." 0*3("0") ], the weight grammar
 * of Accept and Accept-Encoding alike) into thousandths (0 … 1000).
 * Returns -1 when malformed: empty, a leading digit other than 0 or 1,
 * more than three decimals, a non-digit, or a value above 1. Public for
 * the server's Accept-Encoding, the same grammar as the api's Accept
 * (api/core/accept.c). */
int api_qvalue_parse(const char *s, size_t n);

/* Length in bytes (1 … 4) of the valid UTF-8 sequence starting at s[0],
 * reading at most n bytes (n >= 1), or 0 when the sequence is invalid:
 * a stray continuation byte, an overlong form, a surrogate (U+D800 …
 * U+DFFF), a code point above U+10FFFF, or a sequence cut off by n
 * (RFC 3629 section 4). Never fails otherwise; reads nothing past s[n-1].
 * Public for the server's access log, which escapes text as the api's
 * JSON writer does (api/text/utf8.c). */
size_t api_utf8_len(const unsigned char *s, size_t n);

/* Stop every computation: those in progress at their next check, later
 * ones at their first, each answered 503 overloaded ("the server is
 * stopping"). For a server whose drain grace has run out. */
void api_cancel_computing(void);

/* Set readiness (0 while draining: /v2/health/ready answers 503). */
void api_set_ready(int ready);

/* 1 while ready, 0 while draining. */
int api_is_ready(void);

/* The threads in force, set once by the server at start: http_threads
 * HTTP workers, and BLAS asked for blas_threads per call (lib/'s
 * attn_blas_set_threads). Returns the BLAS threads per call in force (1
 * when the BLAS library has no setting). /version reports both. */
int api_set_threads(int http_threads, int blas_threads);

/* Where GET /metrics gets the server's counters: a function returning
 * Prometheus text (format 0.0.4) in a malloc'd buffer of *len bytes that
 * the caller frees, or NULL when memory runs out (the answer is then 500).
 * Set once by the server before serving; until then /metrics answers
 * attnd_build_info alone. */
typedef char *(*api_metrics_source)(size_t *len);
void api_set_metrics_source(api_metrics_source fn);

/* The route templates ("/attention/dot", ...), the values api_response.route
 * takes besides "other": i = 0, 1, ... until NULL. A path answering several
 * methods may appear more than once. */
const char *api_route_template(size_t i);

#endif /* API_H */
