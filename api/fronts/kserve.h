/*
 * kserve.h — the Open Inference Protocol (KServe v2 REST) front
 * (docs/contract.md section 12; kserve/kserve
 * docs/predict-api/v2/required_api.md):
 *
 *   GET  /v2                          server metadata
 *   GET  /v2/models/{model}           model metadata (inputs, outputs)
 *   GET  /v2/models/{model}/ready     model readiness
 *   POST /v2/models/{model}/infer     inference
 *
 * for the models attention_dot, attention_additive, attention_multihead
 * and regression_nw, each the route of the same name behind it. An
 * inference request's inputs are the route's tensor fields, as
 * {"name", "shape", "datatype", "data"} (datatype FP64, FP32, INT32 or
 * INT64, values read as doubles whatever it says; data flat row-major or
 * nested; shape [] is one value like [1], and for unbatched input a
 * valid_lens of shape [1] is the scalar form); its parameters are every
 * other field under its own name, NW's fit flattened to fit_epochs,
 * fit_lr, fit_data. The route answers; its members become outputs named
 * with dots (params.W_q, grads.queries, diagnostics.scores.min, NW's
 * history.w), datatype FP64 except diagnostics.argmax (INT64), scalars
 * with shape [1], masked scores null; diagnostics.warnings is left out.
 * The request's id is echoed. The binary tensor data extension (an
 * input's binary_data_size, binary_data_output, an output's binary_data)
 * is refused with 400.
 *
 * Every error on a path under /v2 is the protocol's {"error": "message"}
 * with the status the contract gives it; the message starts with the
 * contract's code and, when one field is at fault, the JSON Pointer into
 * the request as sent: "shape_mismatch at /inputs/2/shape: ...".
 */
#ifndef API_KSERVE_H
#define API_KSERVE_H

#include <stddef.h>

#include "api.h"
#include "front.h"
#include "problem.h"

/* 1 when path is on the protocol's front: "/v2" or below "/v2/". */
int api_kserve_path(const char *path);

/* Fill res (status, content type application/json, body) with p as the
 * protocol's error object {"error": "<code>[ at <pointer>]: <detail>"};
 * a 404 names the unknown model when path names one. Any res->body
 * already there is freed first; a body that cannot be allocated leaves
 * res->body NULL. */
void api_kserve_respond_error(api_response *res, const api_problem *p,
                              const char *path);

/* For an infer request to path whose JSON text body[0 .. len) is empty
 * or blank (body may be NULL): set p to 400 invalid_json saying what the
 * route reads, {"inputs": [{"name", "shape", "datatype", "data"}]}, and
 * that GET /v2/models/{model} lists them (in place of the native routes'
 * "one JSON object of its fields"), and return 1. Otherwise 0, p
 * untouched. */
int api_kserve_empty_body(const char *path, const char *body, size_t len,
                          api_problem *p);

/* The front (front.h): errors under /v2 in the protocol's form, and the
 * infer route's body framed as a JSON header that binary tensor data may
 * follow, its empty bodies explained (kserve_body.c). */
extern const api_front api_front_kserve;

#endif /* API_KSERVE_H */
