/*
 * misconceptions.c — which catalogue a route has (misconceptions.h).
 */
#include "misconceptions.h"

void api_mistake_memo_free(api_mistake_memo *m) {
    if (m->data && m->free)
        m->free(m->data);
    m->data = NULL;
    m->free = NULL;
}

extern const api_route api_route_dot, api_route_additive, api_route_multihead,
    api_route_nw, api_route_softmax_masked;

const api_misconception *api_misconceptions_of(const api_route *route,
                                               size_t *n) {
    static const struct {
        const api_route *route;
        const api_misconception *list;
        const size_t *count;
    } catalogue[] = {
        {&api_route_dot, api_misconceptions_dot, &api_misconceptions_dot_count},
        {&api_route_additive, api_misconceptions_additive,
         &api_misconceptions_additive_count},
        {&api_route_multihead, api_misconceptions_multihead,
         &api_misconceptions_multihead_count},
        {&api_route_nw, api_misconceptions_nw, &api_misconceptions_nw_count},
        {&api_route_softmax_masked, api_misconceptions_softmax,
         &api_misconceptions_softmax_count},
    };
    for (size_t i = 0; i < sizeof catalogue / sizeof catalogue[0]; i++)
        if (catalogue[i].route == route) {
            *n = *catalogue[i].count;
            return *n ? catalogue[i].list : NULL;
        }
    *n = 0;
    return NULL;
}
