/*
 * front.c — asking the fronts (see front.h).
 */
#include "front.h"

void api_front_respond_problem(api_response *res, const api_problem *p,
                               const char *path) {
    for (size_t i = 0; i < api_fronts_count; i++) {
        const api_front *f = api_fronts[i];
        if (f->owns && f->respond_error && f->owns(path)) {
            f->respond_error(res, p, path);
            return;
        }
    }
    api_problem_respond(res, p);
}

const api_front *api_front_framing(const struct api_route *r) {
    for (size_t i = 0; i < api_fronts_count; i++) {
        const api_front *f = api_fronts[i];
        if (f->frames_body && f->frames_body(r))
            return f;
    }
    return NULL;
}

const api_front *api_front_for_heatmap(const api_call *call) {
    for (size_t i = 0; i < api_fronts_count; i++) {
        const api_front *f = api_fronts[i];
        if (f->wants_heatmap && f->respond_heatmap && f->wants_heatmap(call))
            return f;
    }
    return NULL;
}
