/*
 * front.h — errors in the form of the front a path is on: problem+json
 * (RFC 9457) everywhere, except under /v2, the Open Inference Protocol's
 * front (kserve.h), whose clients read {"error": "message"}
 * (docs/contract.md section 12). The server's own refusals (gate.h) come
 * through here too, so that both layers answer a path alike.
 */
#ifndef API_FRONT_H
#define API_FRONT_H

#include "api.h"
#include "problem.h"

/* Fill res (status, content type, body) with p as path's front writes
 * errors. Any res->body already there is freed first; a body that cannot
 * be allocated leaves res->body NULL with body_len 0. */
void api_front_respond_problem(api_response *res, const api_problem *p,
                               const char *path);

#endif /* API_FRONT_H */
