/*
 * call.h — what a route handler receives and returns. A handler validates
 * its input in the contract's order, calls the library, and fills
 * call->result (a computing route: the dispatcher encodes it as JSON or
 * SVG, result.h) or writes its body into call->out (the service's own
 * pages); on any error it records the first one in call->problem and
 * returns -1. Handlers never see libmicrohttpd.
 */
#ifndef API_CALL_H
#define API_CALL_H

#include <jansson.h>

#include "api.h"
#include "budget.h"
#include "buf.h"
#include "cost.h"
#include "fastpath.h"
#include "problem.h"
#include "result.h"

struct api_route;

typedef struct api_call {
    const api_request *req;
    const struct api_route *route; /* the route answering (route.h) */
    const api_limits *limits;
    const json_t *body; /* the parsed root object (POST routes), else NULL */
    /* body's other half: the numbers of the arrays the fast path read in
     * place of jansson (fastpath.h), which every reader of body's values
     * passes on; NULL: body is as jansson built it. Owned by whoever
     * parsed or built body. */
    const api_fastpath *doc;
    api_problem problem;      /* the first error */
    api_result result;        /* a computing route's answer (result.n > 0) */
    api_buf out;              /* the 200 body, when result is empty */
    int status;               /* 200 unless the handler says otherwise */
    double compute_ms;        /* time spent in lib/, or < 0 when none */
    api_cost cost;            /* what the route counted (api_route_charge) */
    api_ledger *ledger;       /* the request's memory reservations (budget.h) */
    const char *content_type; /* static type of out, NULL: application/json */
    /* the binary tensor data extension (Inference-Header-Content-Length):
     * the body's bytes after its JSON header (binary_len 0: none) */
    const unsigned char *binary;
    size_t binary_len;
    /* > 0: out is a JSON header of this many bytes, then raw tensor bytes */
    size_t inference_header_length;
    /* 1: the body is still held, for its binary tensor data, until
     * api_call_inputs_read */
    int body_held;
    struct api_call *outer; /* the call that ran this one (api_invoke_result) */
    size_t item_problems;   /* a batch's submissions answered with a problem */
    /* what the mistakes of one search share (misconceptions.h), while a
     * grade searches for the mistake behind a wrong answer; else NULL */
    struct api_mistake_memo *memo;
} api_call;

/* 0: call->result or call->out holds the answer (status call->status);
 * -1: call->problem. */
typedef int (*api_handler)(api_call *call);

/* Milliseconds on CLOCK_MONOTONIC, for call->compute_ms. */
double api_clock_ms(void);

/* A computing route has read its inputs into its own tensors, just
 * before it computes: a body still held for its binary tensor data (the
 * outermost call's) is released now, so that a large request does not
 * hold its bytes and its tensors and its answer at once. No-op
 * otherwise; call->binary is cleared. */
void api_call_inputs_read(api_call *call);

#endif /* API_CALL_H */
