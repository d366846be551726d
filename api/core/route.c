/*
 * route.c — finding, charging and describing routes (see route.h). The
 * list itself is api/registry.c's, above the floors whose files define
 * the entries.
 */
#include "route.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "limit.h"
#include "result.h"
#include "stream.h"

const api_route *api_route_of_model(const char *name, size_t len) {
    for (size_t i = 0; i < api_routes_count; i++) {
        const char *m = api_routes[i]->model;
        if (m && strlen(m) == len && !memcmp(m, name, len))
            return api_routes[i];
    }
    return NULL;
}

/* A route path matches itself, except that its segment "{model}" stands
 * for one segment naming a model: "/v2/models/{model}/infer" matches
 * "/v2/models/attention_dot/infer". */
static int matches(const char *route, const char *path) {
    static const char model[] = "{model}";
    while (*route && *path) {
        if (!strncmp(route, model, sizeof model - 1)) {
            size_t n = strcspn(path, "/");
            if (!api_route_of_model(path, n))
                return 0;
            route += sizeof model - 1;
            path += n;
        } else if (*route++ != *path++) {
            return 0;
        }
    }
    return *route == *path;
}

const api_route *api_route_find(const char *path) {
    if (!path)
        return NULL;
    for (size_t i = 0; i < api_routes_count; i++)
        if (matches(api_routes[i]->path, path))
            return api_routes[i];
    return NULL;
}

const api_route *api_route_named(const char *route) {
    for (size_t i = 0; route && i < api_routes_count; i++)
        if (!strcmp(api_routes[i]->path, route))
            return api_routes[i];
    return NULL;
}

unsigned api_route_flags(const char *route) {
    const api_route *r = api_route_named(route);
    return r ? r->flags : 0;
}

const char *api_route_of_path(const char *path) {
    const api_route *r = api_route_find(path);
    return r ? r->path : NULL;
}

const char *api_route_method(const char *path) {
    const api_route *r = api_route_find(path);
    return r ? r->method : NULL;
}

size_t api_route_count(void) {
    return api_routes_count;
}

const api_route *api_route_at(size_t i) {
    return i < api_routes_count ? api_routes[i] : NULL;
}

const char *api_route_allow(const api_route *r) {
    return strcmp(r->method, "GET") ? "POST, OPTIONS" : "GET, HEAD, OPTIONS";
}

/* Each route's fast-path fields, derived once from its schema: each
 * tensor field of real numbers, and its "data" member for the {"shape",
 * "data"} form. */
#define FAST_NAME_MAX 64
static const char *fast_fields[API_ROUTES_MAX][2 * API_FIELDS_MAX + 1];
static char fast_data[API_ROUTES_MAX][API_FIELDS_MAX][FAST_NAME_MAX];
static pthread_once_t fast_once = PTHREAD_ONCE_INIT;

static void derive_fast_fields(void) {
    for (size_t i = 0; i < api_routes_count; i++) {
        const char **names = fast_fields[i];
        size_t k = api_schema_real_tensors(api_routes[i]->request, names,
                                           API_FIELDS_MAX + 1);
        for (size_t j = 0; j < k; j++) {
            snprintf(fast_data[i][j], FAST_NAME_MAX, "%s/data", names[j]);
            names[k + j] = fast_data[i][j];
        }
        names[2 * k] = NULL;
    }
}

const char *const *api_route_fast_fields(const api_route *r) {
    if (r->fast_paths)
        return r->fast_paths();
    pthread_once(&fast_once, derive_fast_fields);
    for (size_t i = 0; i < api_routes_count; i++)
        if (api_routes[i] == r)
            return fast_fields[i];
    return NULL;
}

int api_route_charge(api_call *call, const void *shapes) {
    memset(&call->cost, 0, sizeof call->cost);
    if (!call->route || !call->route->cost)
        return api_fail(&call->problem, API_E_INTERNAL, NULL,
                        "the route counts no cost");
    call->route->cost(call, shapes, &call->cost);
    /* Run by another route (invoke.h), /grade and its catalogue compare
     * the typed result and never print it; the v2 front
     * (API_ROUTE_TENSOR_PROTOCOL) prints it as its outputs. */
    int printed = call->outer == NULL || call->outer->route == NULL ||
                  (call->outer->route->flags & API_ROUTE_TENSOR_PROTOCOL);
    if (api_limit_work(call->cost.ops, call->limits->max_work,
                       &call->problem) ||
        (printed &&
         api_limit_answer(call->cost.answer_bytes,
                          api_cost_answer_max(call->limits->max_elements),
                          call->limits->max_elements, &call->problem)) ||
        api_limit_time(call->cost.ops, call->limits->compute_timeout_s,
                       &call->problem))
        return -1;
    /* a try on an HTTP thread: longer work goes to a compute thread */
    if (call->req != NULL && call->req->inline_work_max > 0 &&
        call->cost.ops > call->req->inline_work_max && call->ledger != NULL) {
        call->ledger->deferred = 1;
        return -1;
    }
    /* the clock runs from here: what follows is the computing */
    api_limit_deadline_start(call->limits->compute_timeout_s);
    const api_cost *c = &call->cost;
    /* A streamed answer prints its large tensors as they are sent, from
     * the working set: only the tensors below API_STREAM_DEFER_MIN entries
     * are text at once. */
    uint64_t answer = c->answer_bytes;
    if (call->req != NULL && call->req->stream_ok &&
        answer > API_COST_STREAMED_TEXT)
        answer = API_COST_STREAMED_TEXT;
    if (!printed) /* nor is its text held */
        answer = 0;
    return api_ledger_reserve(
        call->ledger,
        api_work_add(c->input_bytes, api_work_add(c->working_bytes, answer)),
        "its tensors, working set and answer", &call->problem);
}
