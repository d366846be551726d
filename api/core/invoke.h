/*
 * invoke.h — run a computing route's own handler on a request that
 * another route has already parsed: POST /grade runs the endpoint it
 * grades on the embedded request, and the Open Inference Protocol front
 * runs the route behind a model on the request it translated. The handler
 * checks, computes and writes exactly as for a request of its own, so the
 * answers and every error are the route's.
 */
#ifndef API_INVOKE_H
#define API_INVOKE_H

#include <jansson.h>

#include "call.h"
#include "route.h"

/* Run route->handler with the limits of the outer call:
 *   POST routes: body is the request object (borrowed), a value of the
 *                document doc (fastpath.h: call->doc, or one built on
 *                it), query NULL;
 *   GET routes:  query is the raw query string (without '?'), body NULL.
 * On success *result holds the route's typed answer, already checked to
 * print (api_result_check: the route's own JSON answer would not fail);
 * the caller frees it with api_result_free, or hands its arena to a
 * streamed answer. On the route's error its problem is copied into
 * call->problem, pointer unchanged (the caller rewrites it to point into
 * its own request), *result is left empty and -1 is returned.
 * call->compute_ms accumulates the route's time, and call->cost.ops the
 * operations the route counted (api_route_charge), whether it then
 * computed them or refused them: a batch counts its submissions' work
 * against its own --max-work. */
int api_invoke_result(api_call *call, const api_route *route,
                      const json_t *body, const api_fastpath *doc,
                      const char *query, api_result *result);

/* Rewrite the problem's pointer as prefix + pointer ("/request" +
 * "/values" -> "/request/values"); a problem without a pointer is left
 * alone. A result too long for the pointer buffer is cut like any other
 * pointer (pointer.h). */
void api_invoke_prefix_pointer(api_problem *p, const char *prefix);

#endif /* API_INVOKE_H */
