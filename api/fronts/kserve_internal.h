/*
 * kserve_internal.h — the v2 front's models and the steps its files share
 * (fronts/kserve*.c alone include this): kserve.c keeps the models, their
 * metadata and the handler, kserve_body.c reads how an inference body is
 * framed, kserve_request.c turns the protocol's request into the route's
 * own, and kserve_answer.c the route's answer into the protocol's outputs.
 */
#ifndef API_KSERVE_INTERNAL_H
#define API_KSERVE_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

#include "api.h"
#include "buf.h"
#include "call.h"
#include "fastpath.h"
#include "fields.h"
#include "kserve_binary.h"
#include "problem.h"
#include "result.h"
#include "route.h"

/* A schema has at most API_FIELDS_MAX fields, so no input or parameter
 * is ever left out. */
enum {
    MODELS_MAX = 8,
    INPUTS_MAX = API_FIELDS_MAX,
    PARAMS_MAX = API_FIELDS_MAX,
    KSERVE_NAME_MAX = 32
};

typedef struct {
    const char *name;     /* the route's tensor field */
    const char *datatype; /* in the model metadata: INT64 for integers */
    unsigned rank;        /* batched rank, shown as that many -1 */
} kserve_input;

typedef struct {
    const char *name;       /* "attention_dot" */
    const api_route *route; /* the route behind it */
    kserve_input inputs[INPUTS_MAX];
    size_t n_inputs;
    const char *params[PARAMS_MAX]; /* parameters, fit_* flattened */
    size_t n_params;
    char flat[PARAMS_MAX][KSERVE_NAME_MAX]; /* the flattened names' text */
} kserve_model;

/* Where a tensor field of the translated request came from. */
typedef struct {
    const json_t *input; /* inputs[index], or NULL: not sent */
    size_t index;
    int nested;      /* data was nested arrays, flattened here */
    int empty_shape; /* shape [] read as [1] */
    int scalar;      /* valid_lens sent as its one number */
    int binary;      /* sent as bytes after the JSON header */
} kserve_source;

/* The translation of one request. */
typedef struct {
    const kserve_model *model;
    const json_t *request;
    const api_fastpath *doc; /* request's document (the call's) */
    kserve_source src[INPUTS_MAX];
    json_t *body; /* the route's request */
    api_problem *p;
    /* the inputs sent as bytes (kserve_binary.h), indexed as "inputs",
     * and the placeholders that stand for them in body */
    kserve_binary_input bin[INPUTS_MAX];
    api_fastpath bytes; /* body's document, built on doc */
} kserve_infer;

/* A body meant for another model (Triton's clients repeat the model's name
 * in model_name): invalid_value before anything else is read, since every
 * other name would be checked against the wrong model. A model_name that
 * is not a string is check_types' wrong_type. */
int api_kserve_check_model_name(const kserve_infer *k);

/* unknown_field over the whole request: its members, each input's and
 * requested output's members, input names, parameter names and output
 * names. */
int api_kserve_check_unknown(const kserve_infer *k);

/* missing_field: inputs, and each input's and output's required members
 * (null = absent). */
int api_kserve_check_missing(const kserve_infer *k);

/* wrong_type over the envelope (the route checks its fields' values). */
int api_kserve_check_types(const kserve_infer *k);

/* invalid_value in the envelope: datatypes, names given twice. */
int api_kserve_check_values(const kserve_infer *k);

/* The route's request: inputs as tensor fields, parameters as the other
 * fields (fit_* gathered into fit). The outputs are written from the
 * route's typed answer, so its tensor_format does not matter. */
int api_kserve_translate(kserve_infer *k);

/* Rewrite a pointer into the route's request as a pointer into the
 * protocol's request: /queries/data/5 -> /inputs/0/data/5 (or the nested
 * position), /scale -> /parameters/scale, /fit/lr -> /parameters/fit_lr,
 * a missing tensor -> /inputs; and the detail to match (map_detail). */
void api_kserve_map_pointer(const kserve_infer *k, api_problem *p);

/* The protocol's response from the route's typed answer (checked to
 * print by api_invoke_result): every output, or the requested ones in the
 * order asked (one the answer lacks -> invalid_value at /outputs/i/name,
 * saying what the request needs), each in the form asked for
 * (kserve_binary.h). With any output as bytes the answer is the JSON
 * header, whole (no holes: its length goes first), then those outputs'
 * bytes in order, large ones left as holes of the streamed answer. The
 * header is written in place, never copied: the answer's reservation
 * counts its text once. arena is the result's (stream.h). */
int api_kserve_write_response(api_call *call, const kserve_infer *k,
                              const api_result *answer, const api_arena *arena);

/* The body's framing, as the front (front.h) takes it over for the infer
 * route (API_ROUTE_TENSOR_PROTOCOL): a JSON header, then binary tensor
 * data (kserve_binary.h). */

/* 1 when r is the infer route, whose body this front frames, else 0. */
int api_kserve_frames_body(const struct api_route *r);

/* The infer body's Content-Type: application/json, application/
 * octet-stream or none at all, as Triton's clients send it. Returns 0, or
 * -1 with p set to 415 unsupported_media_type. */
int api_kserve_check_body_type(const api_request *req, api_problem *p);

/* The JSON header's length: Inference-Header-Content-Length (decimal
 * digits, blanks around them), at most the body's length when that is
 * known (content_length >= 0); without the header, the whole body
 * (content_length, or 0 when unknown). Returns 0 with *len set, or -1
 * with p set to 400 invalid_json: the header given twice, not digits, 0,
 * or more than the body. */
int api_kserve_header_length(const api_request *req, long long content_length,
                             size_t *len, api_problem *p);

/* p says why the JSON header body[0 .. json_len) is not JSON: a raw NUL
 * byte in it (nul 1) or jansson's syntax error (nul 0). Rewritten to say
 * what to send when the framing explains it: an empty body (what the
 * route reads), a JSON object that ends before the header does (the
 * Inference-Header-Content-Length to send); else, for a syntax error in a
 * header that bytes follow, the header's length added to the detail. */
void api_kserve_explain_not_json(const api_request *req, size_t json_len,
                                 int nul, api_problem *p);

#endif /* API_KSERVE_INTERNAL_H */
