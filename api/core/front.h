/*
 * front.h — the fronts: other ways in and out of the same routes than
 * problem+json and JSON answers. The Open Inference Protocol's front
 * (kserve.h) writes errors under /v2 as {"error": "message"} (docs/
 * contract.md section 12) and reads its infer body as a JSON header that
 * binary tensor data may follow; the SVG front (svg.h) draws a result's
 * heatmap when Accept asks for image/svg+xml. The server's own refusals
 * (gate.h) come through here too, so that both layers answer a path alike.
 *
 * api/registry.c lists the fronts, above the floors that define them;
 * core/ asks each in turn and names none.
 */
#ifndef API_FRONT_H
#define API_FRONT_H

#include <stddef.h>

#include "api.h"
#include "call.h"
#include "problem.h"
#include "result.h"

/* What a front takes over. A member left NULL is a part it does not. */
typedef struct {
    /* 1 when path is on this front: its errors are respond_error's */
    int (*owns)(const char *path);
    /* res (status, content type, body) filled with p in the front's form;
     * any res->body already there freed first */
    void (*respond_error)(api_response *res, const api_problem *p,
                          const char *path);
    /* 1 when this front frames route r's JSON body its own way: a JSON
     * header that other bytes may follow (the v2 front's binary tensor
     * data). The next three members, then all set, take over that body's
     * checks: */
    int (*frames_body)(const struct api_route *r);
    /* its Content-Type (415), in place of application/json alone: 0, or
     * -1 with p set */
    int (*check_body_type)(const api_request *req, api_problem *p);
    /* the length of the JSON header the body starts with (content_length:
     * the body's, < 0 while unknown): 0 with *len set, or -1 with p set */
    int (*header_length)(const api_request *req, long long content_length,
                         size_t *len, api_problem *p);
    /* p says why the header body[0 .. json_len) is not JSON (nul 1: a raw
     * NUL byte in it, 0: jansson's syntax error); rewritten or added to
     * where the framing explains it */
    void (*explain_not_json)(const api_request *req, size_t json_len, int nul,
                             api_problem *p);
    /* 1 when the call asks for this front's form of a result that has a
     * heatmap (result.h) */
    int (*wants_heatmap)(const api_call *call);
    /* replace call->out with that form of r's heatmap: 0, or -1 with
     * call->problem set */
    int (*respond_heatmap)(api_call *call, const api_result *r);
} api_front;

/* The fronts, in the order they are asked (api/registry.c). */
extern const api_front *const api_fronts[];
extern const size_t api_fronts_count;

/* Fill res (status, content type, body) with p as path's front writes
 * errors: the front that owns path, else problem+json (RFC 9457). Any
 * res->body already there is freed first; a body that cannot be
 * allocated leaves res->body NULL with body_len 0. */
void api_front_respond_problem(api_response *res, const api_problem *p,
                               const char *path);

/* The front that frames route r's JSON body (api_front.frames_body), or
 * NULL: the body is JSON to its end, sent as application/json. */
const api_front *api_front_framing(const struct api_route *r);

/* The front whose form of a heatmap the call asks for, or NULL (JSON). */
const api_front *api_front_for_heatmap(const api_call *call);

#endif /* API_FRONT_H */
