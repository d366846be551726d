/*
 * route.c — the route table (see route.h). api/openapi.json lists exactly
 * these paths; tests/unit/test_api_openapi.c keeps the two in step.
 */
#include "route.h"

#include <string.h>

#include "kserve.h"

#define GET_ALLOW "GET, HEAD, OPTIONS"
#define POST_ALLOW "POST, OPTIONS"

static const api_route routes[] = {
    {"POST", "/attention/dot", api_handle_dot, POST_ALLOW, 1, 1},
    {"POST", "/attention/additive", api_handle_additive, POST_ALLOW, 1, 1},
    {"POST", "/attention/multihead", api_handle_multihead, POST_ALLOW, 1, 1},
    {"POST", "/regression/nw", api_handle_nw, POST_ALLOW, 1, 1},
    {"GET", "/regression/nw/dataset", api_handle_dataset, GET_ALLOW, 0, 0},
    {"POST", "/softmax/masked", api_handle_softmax_masked, POST_ALLOW, 1, 1},
    {"GET", "/encoding/positional", api_handle_posenc, GET_ALLOW, 0, 0},
    {"POST", "/grade", api_handle_grade, POST_ALLOW, 1, 0},
    {"GET", "/v2", api_handle_v2_server, GET_ALLOW, 0, 0},
    {"GET", "/v2/models/{model}", api_handle_v2_model, GET_ALLOW, 0, 0},
    {"GET", "/v2/models/{model}/ready", api_handle_v2_model_ready, GET_ALLOW, 0,
     0},
    {"POST", "/v2/models/{model}/infer", api_handle_v2_infer, POST_ALLOW, 1, 0},
    {"GET", "/healthz", api_handle_healthz, GET_ALLOW, 0, 0},
    {"GET", "/v2/health/live", api_handle_live, GET_ALLOW, 0, 0},
    {"GET", "/v2/health/ready", api_handle_ready, GET_ALLOW, 0, 0},
    {"GET", "/version", api_handle_version, GET_ALLOW, 0, 0},
    {"GET", "/openapi.json", api_handle_openapi, GET_ALLOW, 0, 0},
    {"GET", "/metrics", api_handle_metrics, GET_ALLOW, 0, 0},
    {"GET", "/", api_handle_lab, GET_ALLOW, 0, 0},
};

#define N_ROUTES (sizeof routes / sizeof routes[0])

/* A route path matches itself, except that its segment "{model}" stands
 * for one segment naming a model of the Open Inference Protocol front
 * (kserve.h): "/v2/models/{model}/infer" matches
 * "/v2/models/attention_dot/infer". */
static int matches(const char *route, const char *path) {
    static const char model[] = "{model}";
    while (*route && *path) {
        if (!strncmp(route, model, sizeof model - 1)) {
            size_t n = strcspn(path, "/");
            if (!api_kserve_model_known(path, n))
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
    for (size_t i = 0; i < N_ROUTES; i++)
        if (matches(routes[i].path, path))
            return &routes[i];
    return NULL;
}

size_t api_route_count(void) {
    return N_ROUTES;
}

const api_route *api_route_at(size_t i) {
    return i < N_ROUTES ? &routes[i] : NULL;
}
