/*
 * registry.c — what the api serves: its routes, in order, and its
 * fronts. The list sits above the floors whose files define the entries
 * beside their handlers (docs/architecture.md), as nginx's generated
 * ngx_modules.c lists its modules, so that core/ names none of its users.
 * A new route is its file and a line here.
 */
#include "front.h"
#include "kserve.h"
#include "route.h"
#include "svg.h"

extern const api_route api_route_dot, api_route_additive, api_route_multihead,
    api_route_self_attention, api_route_nw, api_route_dataset,
    api_route_softmax_masked, api_route_posenc, api_route_grade,
    api_route_grade_batch, api_route_v2_server, api_route_v2_model,
    api_route_v2_model_ready, api_route_v2_infer, api_route_healthz,
    api_route_live, api_route_ready, api_route_version, api_route_openapi,
    api_route_metrics, api_route_lab, api_route_transformer_encoder,
    api_route_transformer_decoder, api_route_variants;

/* the order of /metrics and of api/fronts/openapi.json's paths */
const api_route *const api_routes[] = {
    &api_route_dot,
    &api_route_additive,
    &api_route_multihead,
    &api_route_self_attention,
    &api_route_nw,
    &api_route_dataset,
    &api_route_softmax_masked,
    &api_route_posenc,
    &api_route_transformer_encoder,
    &api_route_transformer_decoder,
    &api_route_grade,
    &api_route_grade_batch,
    &api_route_variants,
    &api_route_v2_server,
    &api_route_v2_model,
    &api_route_v2_model_ready,
    &api_route_v2_infer,
    &api_route_healthz,
    &api_route_live,
    &api_route_ready,
    &api_route_version,
    &api_route_openapi,
    &api_route_metrics,
    &api_route_lab,
};
const size_t api_routes_count = sizeof api_routes / sizeof api_routes[0];
_Static_assert(sizeof api_routes / sizeof api_routes[0] <= API_ROUTES_MAX,
               "more routes than API_ROUTES_MAX (route.h)");

const api_front *const api_fronts[] = {&api_front_kserve, &api_front_svg};
const size_t api_fronts_count = sizeof api_fronts / sizeof api_fronts[0];
