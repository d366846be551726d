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

int api_front_explain_empty(const char *path, const char *body, size_t len,
                            api_problem *p) {
    for (size_t i = 0; i < api_fronts_count; i++) {
        const api_front *f = api_fronts[i];
        if (f->explain_empty && f->explain_empty(path, body, len, p))
            return 1;
    }
    return 0;
}

const api_front *api_front_for_heatmap(const api_call *call) {
    for (size_t i = 0; i < api_fronts_count; i++) {
        const api_front *f = api_fronts[i];
        if (f->wants_heatmap && f->respond_heatmap && f->wants_heatmap(call))
            return f;
    }
    return NULL;
}
