/*
 * route.h — the route description: every (method, path) attnd answers is
 * declared once, as one api_route in the file of its handler, and listed
 * in api/registry.c. Everything else about a route is read from that entry:
 *   - lookup, 404 and 405 and the Allow value (dispatch.c);
 *   - its request fields and their checks, in the contract's order
 *     (fields.h), and which tensor fields the fast path reads
 *     (fastpath.h);
 *   - the members of its answer (answers.h), which POST /grade grades and
 *     the Open Inference Protocol front sends as outputs;
 *   - its Open Inference Protocol model: name, inputs and parameters,
 *     derived from the request fields (kserve.h);
 *   - what the server's gate needs: open or not, counted by the limits or
 *     not, computing or not (api.h's API_ROUTE_* flags);
 *   - what a request costs, from its shapes: input bytes, working set,
 *     answer bytes and operations (cost.h), which the limits check;
 *   - metric names (metrics.c) and api/fronts/openapi.json, which a test
 *     holds to the table (tests/unit/test_api_openapi.c).
 * GET routes also answer HEAD (the server drops the body); OPTIONS is
 * answered 204 with the Allow value (the server adds the CORS headers).
 * How to add a route: docs/architecture.md.
 */
#ifndef API_ROUTE_H
#define API_ROUTE_H

#include <stddef.h>

#include "answers.h"
#include "call.h"
#include "cost.h"
#include "fields.h"

typedef struct api_route {
    const char *method; /* "GET" or "POST" */
    const char *path;   /* path ({model}: one of the models' names); also
                           the route's name in metrics and logs */
    api_handler handler;
    unsigned flags; /* API_ROUTE_* (api.h) */
    /* The body's fields in the contract's order (API_ROUTE_JSON_BODY
     * routes, also for /grade's and the v2 front's checks), or NULL. */
    const api_schema *request;
    /* The members of its 200 answer, for routes that compute one (the
     * routes POST /grade can grade), or NULL. */
    const api_answer_table *answer;
    /* The Open Inference Protocol model that serves this route
     * ("attention_dot"), or NULL. */
    const char *model;
    /* What a request costs from its decoded shapes (computing routes), or
     * NULL. */
    api_cost_fn cost;
    /* For a front whose body embeds tensors elsewhere than at the top
     * ("request/queries", "inputs/<index>/data"): the paths the fast path
     * reads (fastpath.h), NULL-terminated and static, where every reader
     * of those members resolves placeholders. NULL: the request schema's
     * tensor fields of real numbers. */
    const char *const *(*fast_paths)(void);
    /* API_ROUTE_RAW_BODY routes: the media types the body may be sent
     * as, NULL-terminated and static (a charset parameter must say
     * utf-8); any other Content-Type is refused with the other headers
     * (415). NULL for every other route. */
    const char *const *body_types;
} api_route;

/* The routes attnd serves, in their order (the order of /metrics and of
 * openapi.json's paths): api/registry.c, above the floors that define
 * the entries beside their handlers, so that core/ names none of them. */
extern const api_route *const api_routes[];
extern const size_t api_routes_count;
/* The most routes the list may hold (registry.c checks it when built). */
#define API_ROUTES_MAX 64

/* The route whose path matches `path` (equal, or a model's name where the
 * route has {model}), or NULL (404). */
const api_route *api_route_find(const char *path);

/* The route whose template is exactly `route` (api_response.route), or
 * NULL. */
const api_route *api_route_named(const char *route);

/* The route a model serves, by the len bytes of its name, or NULL. */
const api_route *api_route_of_model(const char *name, size_t len);

/* The table, in its order: routes 0 … api_route_count()-1. */
size_t api_route_count(void);
const api_route *api_route_at(size_t i);

/* The paths the fast path reads in the route's body (fastpath.h),
 * NULL-terminated: its fast_paths, or else the tensor fields of real
 * numbers of its request schema (an empty list for routes without one).
 * Static; never NULL for a route of the table. */
const char *const *api_route_fast_fields(const api_route *r);

/* Count what call's request costs with its route's cost function (shapes:
 * the route's decoded shapes, as its cost function documents) into
 * call->cost, and refuse it when it is beyond the limits: more operations
 * than --max-work -> 413 payload_too_large (limit.h). Then reserve its
 * input, working set and answer from the memory budget through
 * call->ledger (budget.h): 413 when they exceed the whole budget, 503
 * overloaded when they do not fit now. In a try on an HTTP thread
 * (api_request.inline_work_max), more work than that bound, or no room
 * now, sets call->ledger->deferred instead. Returns 0, or -1 with
 * call->problem set or the request deferred. */
int api_route_charge(api_call *call, const void *shapes);

/* The entry of r->body_types that content_type (a Content-Type value,
 * parameters allowed) names, or NULL when none does (dispatch.c). */
const char *api_route_body_type(const api_route *r, const char *content_type);

/* The Allow value of a route: "GET, HEAD, OPTIONS" or "POST, OPTIONS". */
const char *api_route_allow(const api_route *r);

/* Allow value for "OPTIONS *": every method some route answers. */
#define API_ALLOW_ANY "GET, HEAD, POST, OPTIONS"

#endif /* API_ROUTE_H */
