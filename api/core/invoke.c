/*
 * invoke.c — a computing route's handler run on a request parsed by
 * another route (see invoke.h).
 */
#include "invoke.h"

#include <string.h>

#include "limit.h"

int api_invoke_result(api_call *call, const api_route *route,
                      const json_t *body, const api_fastpath *doc,
                      const char *query, api_result *result) {
    api_request req;
    memset(&req, 0, sizeof req);
    req.method = route->method;
    req.path = route->path;
    req.query = query;
    req.content_type =
        (route->flags & API_ROUTE_JSON_BODY) ? API_CT_JSON : NULL;
    req.limits = call->limits;
    /* a try on an HTTP thread bounds the route's work as well */
    req.inline_work_max = call->req != NULL ? call->req->inline_work_max : 0;

    api_call inner;
    memset(&inner, 0, sizeof inner);
    inner.req = &req;
    inner.route = route;
    inner.limits = call->limits;
    inner.ledger = call->ledger;
    inner.outer = call;
    inner.body = (route->flags & API_ROUTE_JSON_BODY) ? body : NULL;
    inner.doc = doc;
    inner.status = 200;
    inner.compute_ms = -1;

    int rc = route->handler(&inner);
    call->cost.ops = api_work_add(call->cost.ops, inner.cost.ops);
    if (inner.compute_ms > 0)
        call->compute_ms =
            (call->compute_ms > 0 ? call->compute_ms : 0) + inner.compute_ms;
    if (rc == 0 && inner.status == 200 && inner.result.n == 0)
        rc = api_fail(&inner.problem, API_E_INTERNAL, NULL,
                      "%s gives no typed answer", route->path);
    if (rc == 0)
        rc = api_result_check(&inner.result, &inner.problem);
    if (rc != 0 || inner.status != 200) {
        if (inner.problem.code == API_E_NONE)
            api_fail(&inner.problem, API_E_INTERNAL, NULL,
                     "%s failed without saying why", route->path);
        if (call->problem.code == API_E_NONE)
            call->problem = inner.problem;
        api_result_free(&inner.result);
        api_buf_free(&inner.out);
        return -1;
    }
    api_buf_free(&inner.out);
    *result = inner.result;
    return 0;
}

void api_invoke_prefix_pointer(api_problem *p, const char *prefix) {
    if (p->has_pointer)
        api_pointer_join(p->pointer, sizeof p->pointer, prefix, p->pointer);
}
