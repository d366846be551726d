/*
 * problem.h — the request layer's error: a code, the RFC 6901 pointer of the
 * field at fault, a detail that teaches, and optional expected/got shapes.
 * One table maps each code to its HTTP status and RFC 9110 title; the
 * response body is RFC 9457 application/problem+json:
 *   {"type": "about:blank", "title", "status", "code", "pointer"?,
 *    "expected"?, "got"?, "detail"}
 * The first error recorded wins: later api_fail calls are ignored.
 */
#ifndef API_PROBLEM_H
#define API_PROBLEM_H

#include <jansson.h>
#include <stddef.h>

#include "api.h"
#include "buf.h"
#include "pointer.h"

/* The wire contract's error codes (docs/contract.md "Errors"), in one enum. */
typedef enum {
    API_E_NONE = 0,
    API_E_INVALID_JSON,           /* 400 */
    API_E_UNAUTHORIZED,           /* 401 */
    API_E_NOT_FOUND,              /* 404 */
    API_E_METHOD_NOT_ALLOWED,     /* 405 */
    API_E_PAYLOAD_TOO_LARGE,      /* 413 */
    API_E_UNSUPPORTED_MEDIA_TYPE, /* 415 */
    API_E_MISSING_FIELD,          /* 422 */
    API_E_UNKNOWN_FIELD,          /* 422 */
    API_E_WRONG_TYPE,             /* 422 */
    API_E_RAGGED_ARRAY,           /* 422 */
    API_E_SHAPE_MISMATCH,         /* 422 */
    API_E_INVALID_VALUE,          /* 422 */
    API_E_RATE_LIMITED,           /* 429 */
    API_E_OVERLOADED,             /* 503 */
    API_E_INTERNAL,               /* 500 */
    /* 503 "overloaded" too, for want of room in the memory budget: the
     * server counts it apart (attnd_refused_total{reason="memory"}) */
    API_E_NO_ROOM,
    API_E_COUNT
} api_error;

/* Most dimensions a shape in an error (or a tensor) may have. */
#define API_SHAPE_MAX 8
/* Bytes of detail text kept, NUL included (longer text is cut). */
#define API_DETAIL_MAX 768

typedef struct {
    api_error code;  /* API_E_NONE until the first failure */
    int has_pointer; /* 1: pointer names the field at fault */
    char pointer[API_POINTER_MAX];
    char detail[API_DETAIL_MAX];
    int has_expected; /* expected shape; -1 marks a free dimension */
    size_t expected_rank;
    long long expected[API_SHAPE_MAX];
    int has_got; /* the shape that arrived */
    size_t got_rank;
    long long got[API_SHAPE_MAX];
} api_problem;

/* Wire name of a code ("shape_mismatch"); "internal" outside the enum. */
const char *api_error_name(api_error code);

/* HTTP status of a code (422 for the validation codes). */
int api_error_status(api_error code);

/* RFC 9110 section 15 reason phrase ("Content Too Large" for 413,
 * "Unprocessable Content" for 422); "Error" for statuses not in the table. */
const char *api_status_title(int status);

/* Record an error unless one is already recorded (first error wins).
 * pointer: RFC 6901, already escaped, or NULL when no single field is at
 * fault. detail: printf format, cut to API_DETAIL_MAX at a UTF-8 boundary.
 * Always returns -1, so validators can `return api_fail(...)`. */
int api_fail(api_problem *p, api_error code, const char *pointer,
             const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Attach the expected and/or got shapes to the recorded error (a NULL
 * array leaves that one out); ranks above API_SHAPE_MAX are cut. */
void api_problem_shapes(api_problem *p, const long long *expected,
                        size_t expected_rank, const long long *got,
                        size_t got_rank);

/* Same with got given as size_t dimensions (a decoded tensor's shape). */
void api_problem_shapes_z(api_problem *p, const long long *expected,
                          size_t expected_rank, const size_t *got,
                          size_t got_rank);

/* one when n is 1, else many: "1 example", "2 examples" in a detail. */
const char *api_plural(size_t n, const char *one, const char *many);

/* What to do about a raw NUL byte at text[pos], for the invalid_json
 * detail: "inside a string write \u0000" when pos lies inside a string
 * literal (scanned from text's start, escapes skipped), else "JSON allows
 * none outside strings" (RFC 8259 section 7: control characters are
 * escaped in strings, and are not whitespace). A static string. */
const char *api_json_nul_hint(const char *text, size_t pos);

/* The one place where a jansson parse error becomes the wire's 400
 * invalid_json. body[0 .. len) is the text jansson read; the detail says
 * "the body is empty" for an empty (or blank) body; names a byte order
 * mark at the start (EF BB BF), the first byte that is not UTF-8 with its
 * offset, a number beyond the double range (±1.8e308), a trailing comma
 * before ']' or '}', and JSON's lack of NaN and Infinity when one of those
 * literals stopped it; and otherwise gives jansson's text with line,
 * column and byte. */
void api_problem_from_json_error(api_problem *p, const json_error_t *error,
                                 const char *body, size_t len);

/* "a string", "an integer", "null", ... for details, of a value as
 * jansson built it. */
const char *api_json_kind(const json_t *v);

/* The same for a value of the document doc (fastpath.h), where a
 * placeholder is "an array", as the client sent it. */
struct api_fastpath;
const char *api_json_kind_in(const struct api_fastpath *doc, const json_t *v);

/* Write the problem+json body for p into out. */
void api_problem_write(api_buf *out, const api_problem *p);

/* Fill res (status, content type, body) for p; a body that cannot be
 * allocated leaves res->body NULL with body_len 0. Any res->body already
 * there is freed first. The server's own refusals come here too, through
 * api_refuse (api.h) and their path's front. */
void api_problem_respond(api_response *res, const api_problem *p);

/* Fill res for an error of HTTP itself, found before any route is asked
 * (a request target or header block over its limit, broken framing, a
 * transfer coding not understood, a client too slow): problem+json with
 * the status, its title (RFC 9110 section 15), a "code" named after the
 * status (bad_request 400, request_timeout 408, payload_too_large 413,
 * uri_too_long 414, rate_limited 429, header_fields_too_large 431,
 * not_implemented 501, overloaded 503, else internal; docs/errors.md)
 * and detail. Frees any res->body first; a body that
 * cannot be allocated leaves res->body NULL. */
void api_problem_respond_http(api_response *res, int status,
                              const char *detail);

/* Content types of the two kinds of answer. */
#define API_CT_JSON "application/json"
#define API_CT_PROBLEM "application/problem+json"
/* a JSON header and raw tensor bytes (the binary tensor data extension) */
#define API_CT_OCTET_STREAM "application/octet-stream"

#endif /* API_PROBLEM_H */
