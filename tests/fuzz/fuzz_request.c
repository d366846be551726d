/*
 * fuzz_request.c — libFuzzer target: api_handle() on arbitrary bytes. The
 * input is a request line "METHOD PATH[ ACCEPT]" and a newline, then the
 * body (POST) or the query string (any other method), so that saved inputs
 * read as requests and keep their meaning when routes are added. An
 * ACCEPT of "ihcl=N" sends instead Inference-Header-Content-Length: N
 * with Content-Type application/octet-stream (the v2 front's binary
 * tensor data extension: a JSON header, then raw bytes). Small
 * limits keep every input fast (docs/contract.md section 1: every tensor,
 * derived size and work estimate is checked before anything is allocated, so
 * these limits are all a request can cost).
 *
 * Invariants checked on every answer (docs/contract.md section 1, "Errors"):
 *   - the status is one the contract documents, never 500;
 *   - problem+json answers parse, with "type" about:blank, a "title", a
 *     "code", a "status" member equal to the HTTP status, and a "pointer"
 *     that names a value of the request body or an absent member of one of
 *     its objects (missing_field's, or a field left to its default);
 *   - application/json answers parse with jansson's strict parser (so hold
 *     no NaN or Infinity);
 *   - application/octet-stream answers are a JSON header of their
 *     Inference-Header-Content-Length, whose outputs' binary_data_size
 *     add up to the bytes after it;
 *   - the same request answered twice gives the same bytes (catches reads
 *     of uninitialised memory and hidden state between requests).
 */
#include <cblas.h>
#include <jansson.h>
#include <string.h>

#include "api.h"
#include "fuzz.h"

#define REQ_MAX_ELEMENTS ((size_t)1 << 16)
#define REQ_MAX_WORK ((uint64_t)1 << 22)

static int request_status_documented(int status) {
    static const int documented[] = {200, 204, 400, 404, 405,
                                     413, 415, 422, 503};
    for (size_t i = 0; i < sizeof documented / sizeof documented[0]; i++)
        if (status == documented[i])
            return 1;
    return 0;
}

/* RFC 6901: the value at pointer p in doc, or NULL. */
static const json_t *request_resolve(const json_t *doc, const char *p) {
    char token[1100];
    while (doc != NULL && *p == '/') {
        p++;
        size_t n = 0;
        while (*p && *p != '/' && n + 1 < sizeof token) {
            if (p[0] == '~' && p[1] == '1')
                token[n++] = '/', p += 2;
            else if (p[0] == '~' && p[1] == '0')
                token[n++] = '~', p += 2;
            else
                token[n++] = *p++;
        }
        token[n] = '\0';
        if (json_is_object(doc)) {
            doc = json_object_get(doc, token);
        } else if (json_is_array(doc)) {
            char *end;
            unsigned long long i = strtoull(token, &end, 10);
            int canonical = n > 0 && *end == '\0' &&
                            (token[0] != '0' || n == 1) && token[0] != '-' &&
                            token[0] != '+';
            doc = canonical ? json_array_get(doc, (size_t)i) : NULL;
        } else {
            doc = NULL;
        }
    }
    return *p == '\0' ? doc : NULL;
}

/* p names a value of doc, or an absent member of an object of doc: a
 * field that took its default (docs/contract.md blames /fit/lr for a step that
 * makes w <= 0, also when lr was left out). */
static int request_names(const json_t *doc, const char *p) {
    if (request_resolve(doc, p) != NULL)
        return 1;
    const char *last = strrchr(p, '/');
    if (last == NULL)
        return 0;
    char parent[1100];
    snprintf(parent, sizeof parent, "%.*s", (int)(last - p), p);
    return json_is_object(request_resolve(doc, parent));
}

static void request_check_problem(const api_response *res,
                                  const json_t *request_doc) {
    json_error_t err;
    json_t *doc = json_loadb(res->body, res->body_len, 0, &err);
    fuzz_check(json_is_object(doc), "problem body does not parse: %s",
               err.text);
    const json_t *status = json_object_get(doc, "status");
    const json_t *code = json_object_get(doc, "code");
    const json_t *type = json_object_get(doc, "type");
    const json_t *title = json_object_get(doc, "title");
    const json_t *pointer = json_object_get(doc, "pointer");
    fuzz_check(json_is_integer(status) &&
                   json_integer_value(status) == res->status,
               "problem status member differs from %d", res->status);
    fuzz_check(json_is_string(code), "problem without a code");
    fuzz_check(json_is_string(title), "problem without a title");
    fuzz_check(json_is_string(type) &&
                   !strcmp(json_string_value(type), "about:blank"),
               "problem type is not about:blank");
    fuzz_check(strcmp(json_string_value(code), "internal") != 0,
               "internal error: %.*s", (int)res->body_len, res->body);
    if (pointer != NULL) {
        fuzz_check(json_is_string(pointer), "pointer is not a string");
        const char *p = json_string_value(pointer);
        fuzz_check(p[0] == '\0' || p[0] == '/', "pointer '%s' is not RFC 6901",
                   p);
        /* a pointer too long to hold names the member holding the one
         * meant (pointer.h), so every pointer resolves */
        if (request_doc != NULL)
            fuzz_check(request_names(request_doc, p),
                       "pointer '%s' (%s) names nothing in the request", p,
                       json_string_value(code));
    }
    json_decref(doc);
}

static void request_check(const api_response *res, const json_t *request_doc,
                          const char *method) {
    fuzz_check(request_status_documented(res->status), "status %d: %.*s",
               res->status, (int)res->body_len, res->body ? res->body : "");
    fuzz_check(res->content_type != NULL || res->status == 204,
               "no content type for status %d", res->status);
    if (res->status == 204 || !strcmp(method, "HEAD"))
        return;
    fuzz_check(res->body != NULL && res->body_len > 0, "status %d, no body",
               res->status);
    if (!strcmp(res->content_type, "application/problem+json")) {
        request_check_problem(res, request_doc);
    } else if (!strcmp(res->content_type, "application/json")) {
        /* Numbers print as ECMAScript does (docs/contract.md "Responses"), so
         * an integral value from 2^63 up to 1e21 (a huge max_rel_err in a
         * /grade answer, say) prints as a long integer: valid JSON that
         * jansson reads only as a real. A string of the request may hold
         * \u0000 (docs/contract.md "Requests"), and /grade's "got" echoes
         * it; a key never does, which jansson checks even so. */
        json_error_t err;
        json_t *doc =
            json_loadb(res->body, res->body_len,
                       JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, &err);
        fuzz_check(doc != NULL, "JSON answer does not parse: %s (%.200s)",
                   err.text, res->body);
        json_decref(doc);
    } else if (!strcmp(res->content_type, "application/octet-stream")) {
        size_t n = res->inference_header_length;
        fuzz_check(n > 0 && n <= res->body_len,
                   "binary answer with header length %zu of %zu bytes", n,
                   res->body_len);
        /* the header prints numbers as the JSON answers do (a tensor sent
         * as JSON, from 2^63 up to 1e21, is a long integer), and its id
         * may hold \u0000 */
        json_error_t err;
        json_t *doc = json_loadb(
            res->body, n, JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, &err);
        fuzz_check(json_is_object(doc), "binary answer's header: %s", err.text);
        size_t sum = 0;
        const json_t *outputs = json_object_get(doc, "outputs");
        for (size_t i = 0; i < json_array_size(outputs); i++)
            sum += (size_t)json_number_value(json_object_get(
                json_object_get(json_array_get(outputs, i), "parameters"),
                "binary_data_size"));
        fuzz_check(sum == res->body_len - n,
                   "binary outputs claim %zu bytes; %zu follow the header", sum,
                   res->body_len - n);
        json_decref(doc);
    } else if (!strncmp(res->content_type, "image/svg+xml", 13)) {
        fuzz_check(strstr(res->body, "</svg>") != NULL, "SVG not closed");
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
#ifdef OPENBLAS_VERSION
    openblas_set_num_threads(1); /* inputs must run alike every time */
#endif
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* "METHOD PATH[ ACCEPT]\n", then the body or query */
    const uint8_t *nl = memchr(data, '\n', size < 600 ? size : 600);
    if (nl == NULL)
        return 0;
    char line[600], method[16] = "", path[600] = "", accept[600] = "";
    size_t line_len = (size_t)(nl - data);
    memcpy(line, data, line_len);
    line[line_len] = '\0';
    if (sscanf(line, "%15s %599s %599[^\n]", method, path, accept) < 2)
        return 0;
    int post = !strcmp(method, "POST");
    size_t rest_len = size - line_len - 1;
    api_limits limits;
    api_limits_default(&limits);
    limits.max_elements = REQ_MAX_ELEMENTS;
    limits.max_work = REQ_MAX_WORK;

    /* the body as sent (no terminating NUL), or the query as a string */
    char *rest = malloc(rest_len + 1);
    memcpy(rest, nl + 1, rest_len);
    rest[rest_len] = '\0';
    api_request req;
    memset(&req, 0, sizeof req);
    req.method = method;
    req.path = path;
    req.content_type = "application/json";
    req.accept = accept[0] ? accept : NULL;
    size_t json_len = rest_len; /* the JSON text pointers name */
    if (!strncmp(accept, "ihcl=", 5)) {
        req.content_type = "application/octet-stream";
        req.inference_header_length = accept + 5;
        req.accept = NULL;
        unsigned long long n = strtoull(accept + 5, NULL, 10);
        json_len = n < rest_len ? (size_t)n : rest_len;
    }
    req.limits = &limits;
    if (post) {
        req.body = rest_len > 0 ? rest : NULL;
        req.body_len = rest_len;
    } else {
        req.query = rest;
    }

    api_response first, second;
    api_handle(&req, &first);
    json_error_t err;
    json_t *doc =
        post ? json_loadb(rest, json_len, JSON_DECODE_ANY, &err) : NULL;
    request_check(&first, doc, method);
    api_handle(&req, &second);
    fuzz_check(first.status == second.status &&
                   first.body_len == second.body_len &&
                   (first.body_len == 0 ||
                    !memcmp(first.body, second.body, first.body_len)),
               "the same request answered differently: %d %.200s / %d %.200s",
               first.status, first.body ? first.body : "", second.status,
               second.body ? second.body : "");
    json_decref(doc);
    api_response_free(&first);
    api_response_free(&second);
    free(rest);
    return 0;
}
