/*
 * front.c — errors in the form of a path's front (see front.h).
 */
#include "front.h"

#include "kserve.h"

void api_front_respond_problem(api_response *res, const api_problem *p,
                               const char *path) {
    if (api_kserve_path(path))
        api_kserve_respond_error(res, p, path);
    else
        api_problem_respond(res, p);
}
