/*
 * kserve_body.c — how an inference request's body is framed
 * (kserve_internal.h): the Content-Types Triton's clients send it as, the
 * length of the JSON header that binary tensor data follows
 * (Inference-Header-Content-Length, kserve_binary.h), and what to say when
 * that header is not JSON, which most often means the length sent is not
 * the JSON object's. The dispatcher asks for these through the front
 * (front.h) and names none of them.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "content_type.h"
#include "fastpath.h"
#include "kserve.h"
#include "kserve_internal.h"

int api_kserve_frames_body(const struct api_route *r) {
    return (r->flags & API_ROUTE_TENSOR_PROTOCOL) != 0;
}

int api_kserve_check_body_type(const api_request *req, api_problem *p) {
    /* Triton's clients send a body with binary tensors as either type, or
     * with none (its Python client) */
    const char *ct = req->content_type;
    if (!ct || api_content_type_is(ct, API_CT_JSON) ||
        api_content_type_is(ct, API_CT_OCTET_STREAM))
        return 0;
    return api_fail(p, API_E_UNSUPPORTED_MEDIA_TYPE, NULL,
                    "send the body as Content-Type: application/json "
                    "(UTF-8), or application/octet-stream for a JSON "
                    "header followed by binary tensor data; got %.100s",
                    ct);
}

static const char *skip_blanks(const char *s) {
    while (*s == ' ' || *s == '\t')
        s++;
    return s;
}

int api_kserve_header_length(const api_request *req, long long content_length,
                             size_t *len, api_problem *p) {
    const char *s = req->inference_header_length;
    *len = content_length >= 0 ? (size_t)content_length : 0;
    if (!s)
        return 0;
    const char *digits = skip_blanks(s), *end = digits;
    unsigned long long v = 0;
    int too_big = 0;
    for (; *end >= '0' && *end <= '9'; end++) {
        too_big |= v > (ULLONG_MAX - 9) / 10;
        v = v * 10 + (unsigned)(*end - '0');
    }
    if (*skip_blanks(end) == ',') /* the server joins repeated lines so */
        return api_fail(p, API_E_INVALID_JSON, NULL,
                        "Inference-Header-Content-Length is given more than "
                        "once (\"%.40s\"): send the JSON header's length "
                        "once",
                        s);
    if (end == digits || *skip_blanks(end) != '\0')
        return api_fail(p, API_E_INVALID_JSON, NULL,
                        "Inference-Header-Content-Length must be the JSON "
                        "header's length in bytes (decimal digits); got "
                        "\"%.40s\"",
                        s);
    if (v == 0 && !too_big)
        return api_fail(p, API_E_INVALID_JSON, NULL,
                        "Inference-Header-Content-Length is 0: the body "
                        "starts with the JSON inference request, whose "
                        "length in bytes this header gives; binary tensor "
                        "data follows it");
    if (content_length >= 0 &&
        (too_big || v > (unsigned long long)content_length))
        return api_fail(p, API_E_INVALID_JSON, NULL,
                        "Inference-Header-Content-Length says the JSON header "
                        "has %s%llu bytes, but the whole body has %lld",
                        too_big ? "over " : "", too_big ? ULLONG_MAX : v,
                        content_length);
    *len = (size_t)v;
    return 0;
}

/* A syntax error in a JSON header that binary tensor data follows: say
 * where the header ends, since a wrong length is the likely cause. */
static void header_note(api_problem *p, size_t json_len) {
    size_t n = strlen(p->detail);
    snprintf(p->detail + n, sizeof p->detail - n,
             " (the JSON header is the body's first %zu bytes, as "
             "Inference-Header-Content-Length says)",
             json_len);
}

/* A v2 body that is not JSON to its end (a NUL byte, or text after the
 * object) when its JSON object ends before: binary tensor data with no
 * Inference-Header-Content-Length, or with a length past the object's
 * end. Returns 1 with p rewritten to say which length to send, else 0. */
static int header_hint(const api_request *req, size_t json_len,
                       api_problem *p) {
    size_t end = api_json_object_end(req->body, json_len);
    if (end == 0 || end >= json_len)
        return 0;
    memset(p, 0, sizeof *p); /* this replaces the syntax error */
    if (!req->inference_header_length)
        api_fail(p, API_E_INVALID_JSON, NULL,
                 "the body's JSON object ends at byte %zu and %zu more bytes "
                 "follow: for binary tensor data after it, send "
                 "Inference-Header-Content-Length: %zu",
                 end, req->body_len - end, end);
    else
        api_fail(p, API_E_INVALID_JSON, NULL,
                 "Inference-Header-Content-Length says the JSON header has "
                 "%zu bytes, but its object ends at byte %zu: send "
                 "Inference-Header-Content-Length: %zu",
                 json_len, end, end);
    return 1;
}

void api_kserve_explain_not_json(const api_request *req, size_t json_len,
                                 int nul, api_problem *p) {
    if (nul) {
        header_hint(req, json_len, p);
        return;
    }
    if (!api_kserve_empty_body(req->path, req->body, json_len, p) &&
        !header_hint(req, json_len, p) && json_len < req->body_len)
        header_note(p, json_len);
}
