/*
 * refusal.c — the server's own refusals in the api's forms (api_refuse,
 * api.h): a request the gate, the memory budget or the probe port turns
 * away is answered as the path's front answers its errors, and an error
 * of HTTP itself as problem+json, so that the server writes no error body
 * of its own and names no code of the contract.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "front.h"
#include "problem.h"

/* The contract's code for a refusal's status; 500 internal for any
 * other. */
static api_error code_of(int status) {
    switch (status) {
    case 401:
        return API_E_UNAUTHORIZED;
    case 404:
        return API_E_NOT_FOUND;
    case 405:
        return API_E_METHOD_NOT_ALLOWED;
    case 413:
        return API_E_PAYLOAD_TOO_LARGE;
    case 429:
        return API_E_RATE_LIMITED;
    case 503:
        return API_E_OVERLOADED;
    default:
        return API_E_INTERNAL;
    }
}

/* An error of HTTP itself: its detail kept whole, in a malloc'd copy. */
static void refuse_http(api_response *res, int status, const char *fmt,
                        va_list ap) {
    char *detail = NULL;
    if (vasprintf(&detail, fmt, ap) < 0) {
        free(res->body);
        res->body = NULL;
        res->body_len = 0;
        res->status = status;
        res->content_type = API_CT_PROBLEM;
        return;
    }
    api_problem_respond_http(res, status, detail);
    free(detail);
}

void api_refuse(api_response *res, const char *path, int status,
                const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (path == NULL) {
        refuse_http(res, status, fmt, ap);
        va_end(ap);
        return;
    }
    /* one byte more than a detail keeps: api_fail sees that the text was
     * cut, and cuts it where it would have cut the whole */
    char detail[API_DETAIL_MAX + 1];
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    api_problem p;
    memset(&p, 0, sizeof p);
    api_fail(&p, code_of(status), NULL, "%s", detail);
    api_front_respond_problem(res, &p, path);
}
