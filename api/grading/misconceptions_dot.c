/*
 * misconceptions_dot.c — the known wrong implementations of
 * /attention/dot (misconceptions.h).
 */
#include <math.h>

#include "invoke.h"
#include "misconceptions.h"

extern const api_route api_route_dot;

/* The request again with scale set to x (a shallow copy: its tensors stay
 * the same values), answered by the route. */
static int with_scale(api_call *call, const json_t *request, double x,
                      api_result *wrong) {
    json_t *altered = json_copy((json_t *)request);
    if (!altered || json_object_set_new(altered, "scale", json_real(x))) {
        json_decref(altered);
        return API_MISTAKE_FAILED;
    }
    int rc = api_invoke_result(call, &api_route_dot, altered, NULL, wrong);
    json_decref(altered);
    return rc ? API_MISTAKE_FAILED : API_MISTAKE_ANSWERED;
}

/* 1 when the request sets its own scale: then no scaling mistake can
 * have been made in it. */
static int has_scale(const json_t *request) {
    const json_t *s = json_object_get(request, "scale");
    return s && !json_is_null(s);
}

static int no_scale(api_call *call, const json_t *request,
                    const api_result *reference, api_result *wrong) {
    const api_result_item *s = api_result_find(reference, "scale", 5);
    if (has_scale(request) || !s || s->number == 1)
        return API_MISTAKE_NOT_APPLICABLE;
    return with_scale(call, request, 1, wrong);
}

const api_misconception api_misconceptions_dot[] = {
    {"dot.no_scale",
     "the scores were not scaled: softmax(Q Kᵀ / √d) divides by √d, the "
     "square root of the query and key size (d2l 11.3.2; Vaswani et al. "
     "2017, eq. 1)",
     no_scale},
};
const size_t api_misconceptions_dot_count =
    sizeof api_misconceptions_dot / sizeof api_misconceptions_dot[0];
