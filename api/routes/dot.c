/*
 * dot.c — POST /attention/dot: scaled dot-product attention,
 * softmax(mask(Q Kᵀ · scale)) V (d2l 11.3.2; Vaswani et al. 2017).
 *
 *   queries (B, Nq, d)  keys (B, Nk, d)  values (B, Nk, dv)
 *   grad_output (B, Nq, dv), optional: dL/d(output)
 *   -> {"output": (B, Nq, dv), "weights": (B, Nq, Nk), "scale": used,
 *       "scores": (B, Nq, Nk) with masked entries null, when asked,
 *       "diagnostics": {...} (diagnostics.h), when asked,
 *       "grads": {"queries", "keys", "values"}, with grad_output,
 *       "trace": {"QK", "scaled", "masked", "weights", "weighted_values"},
 *       with "trace": true (trace.h)}
 * Rank-2 input is one unbatched example; outputs then drop the batch axis.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "attention.h"
#include "call.h"
#include "fields.h"
#include "grads.h"
#include "limit.h"
#include "route.h"
#include "trace.h"

static const api_tensor_spec queries_spec = {
    "queries", API_RANK(2) | API_RANK(3), API_TENSOR_MASKED_SCORES,
    "(B, Nq, d) or unbatched (Nq, d)", 0};
static const api_tensor_spec keys_spec = {"keys", API_RANK(2) | API_RANK(3),
                                          API_TENSOR_MASKED_SCORES,
                                          "(B, Nk, d) or unbatched (Nk, d)", 0};
static const api_tensor_spec values_spec = {
    "values", API_RANK(2) | API_RANK(3), API_TENSOR_MASKED_SCORES,
    "(B, Nk, dv) or unbatched (Nk, dv)", 0};

/* The contract's field table (docs/contract.md section 2), in its order. */
static const api_field fields[] = {
    {"queries", API_FIELD_TENSOR, 1, &queries_spec, NULL},
    {"keys", API_FIELD_TENSOR, 1, &keys_spec, NULL},
    {"values", API_FIELD_TENSOR, 1, &values_spec, NULL},
    API_ATTENTION_MASK_FIELDS,
    {"scale", API_FIELD_NUMBER, 0, NULL, NULL},
    {"return_weights", API_FIELD_BOOL, 0, NULL, NULL},
    {"return_scores", API_FIELD_BOOL, 0, NULL, NULL},
    API_ATTENTION_ANSWER_FIELDS,
};

static const api_schema schema = {"/attention/dot", fields,
                                  sizeof fields / sizeof fields[0]};

/* shapes: the decoded api_attention, flags read. Work B·Nq·Nk·(d + dv),
 * tripled with grad_output (grads.h); a trace's buffers and work
 * (trace.h). */
static void cost_dot(const api_call *call, const void *shapes, api_cost *cost) {
    const api_attention *a = shapes;
    api_trace t;
    api_trace_init(&t, API_TRACE_DOT, call->body, 0);
    api_arena plan = {0};
    api_attention_plan(a, &plan);
    api_trace_plan(&t, a, &plan);
    api_cost_of_plan(cost, api_attention_input_slots(a), &plan,
                     api_grads_work(api_attention_work_dot(a), a->has_grad));
    api_trace_cost(&t, a, cost);
}

/* One request, decoded: the attention's shared parts, its trace and
 * scale, then the one allocation they lie in. */
typedef struct {
    api_attention a;
    api_trace trace; /* "trace": true (trace.h) */
    double scale;
    api_arena arena;
} dot_request;

/* Steps 1–4 of the contract's order of checks (fields.h): fields,
 * tensors, cross-field shapes, sizes and the cost (charged, cost_dot).
 * Returns 0, or -1 with call->problem set. */
static int decode(api_call *call, void *req) {
    static const api_tensor_spec *const specs[3] = {&queries_spec, &keys_spec,
                                                    &values_spec};
    dot_request *r = req;
    api_problem *p = &call->problem;
    const json_t *body = call->body;
    const api_fastpath *doc = call->doc;
    size_t max_elements = call->limits->max_elements;
    api_attention *a = &r->a;

    /* 1. unknown_field, missing_field, wrong_type over the whole body */
    if (api_fields_check(doc, body, &schema, "", p))
        return -1;
    /* 2. each tensor in table order: rank, ragged, size, len(data), zero */
    if (api_attention_decode_qkv(a, doc, body, specs, max_elements, p) ||
        api_attention_decode_extras(a, doc, body, max_elements, p))
        return -1;
    /* 3. cross-field shapes */
    if (api_attention_cross_qkv(a, 1, p) || api_attention_cross_lens(a, 0, p) ||
        api_attention_cross_masks(a, 0, p) || api_attention_cross_grad(a, p))
        return -1;
    /* 4. derived sizes and the cost (cost_dot) */
    api_attention_read_flags(a, body);
    api_trace_init(&r->trace, API_TRACE_DOT, body, 0);
    if (api_attention_check_sizes(a, max_elements, p) ||
        api_trace_check_sizes(&r->trace, a, max_elements, p) ||
        api_route_charge(call, a))
        return -1;
    return 0;
}

/* Steps 5–6: one allocation, inputs read, then the remaining values in
 * table order (valid_lens, the mask, scale, the output format). Returns
 * 0, or -1 with call->problem set and nothing held. */
static int prepare(api_call *call, void *req) {
    dot_request *r = req;
    api_problem *p = &call->problem;
    const json_t *body = call->body;
    api_attention *a = &r->a;
    api_attention_plan(a, &r->arena);
    api_trace_plan(&r->trace, a, &r->arena);
    if (api_arena_alloc(&r->arena))
        return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    api_attention_take(a, &r->arena);
    api_trace_take(&r->trace, a, &r->arena);

    r->scale = api_field_number(body, "scale", -1);
    int rc =
        api_attention_check_lens(a, p) || api_attention_read_mask(a, body, p);
    if (rc == 0 && api_field_value(body, "scale") &&
        !(isfinite(r->scale) && r->scale > 0))
        rc = api_fail(p, API_E_INVALID_VALUE, "/scale",
                      "scale multiplies Q Kᵀ and must be a finite number > 0 "
                      "(default 1/sqrt(d); temperature = 1/scale)");
    if (rc == 0)
        rc = api_tensor_format_read(&a->fmt, body, p);
    if (rc) {
        api_arena_free(&r->arena);
        return -1;
    }
    if (!api_field_value(body, "scale"))
        r->scale = attn_dot_default_scale(a->dq);
    return 0;
}

/* Step 7: forward (and the trace), and backward with grad_output. */
static attn_status compute(void *req, attn_fault *fault) {
    dot_request *r = req;
    api_attention *a = &r->a;
    attn_status st = attn_dot_forward(
        a->out, a->weights, api_trace_scores(&r->trace, a), a->qd, a->kd, a->vd,
        &a->mask, r->scale, a->B, a->Nq, a->Nk, a->dq, a->dv, fault);
    if (st == ATTN_OK)
        st = api_trace_dot(&r->trace, a);
    if (st == ATTN_OK && a->has_grad)
        st = attn_dot_backward(a->grad_q, a->grad_k, a->grad_v, a->grad_out,
                               a->weights, a->qd, a->kd, a->vd, &a->mask,
                               r->scale, a->B, a->Nq, a->Nk, a->dq, a->dv,
                               fault);
    return st;
}

/* Step 8: the typed result (result.h), which keeps the allocation. */
static void answer_result(api_call *call, void *req) {
    dot_request *r = req;
    api_attention *a = &r->a;
    api_result *res = &call->result;
    api_attention_answer(a, res, &r->arena,
                         "Scaled dot-product attention weights");
    api_attention_answer_scale(a, res, r->scale);
    const api_grad_entry grads[3] = {
        {"grads.queries", a->grad_q, a->q.shape, a->q.rank},
        {"grads.keys", a->grad_k, a->k.shape, a->k.rank},
        {"grads.values", a->grad_v, a->v.shape, a->v.rank},
    };
    api_attention_answer_extras(a, res, a->has_grad ? grads : NULL, 3);
    api_trace_answer(&r->trace, a, res);
}

static int handle_dot(api_call *call) {
    static const api_attention_steps steps = {decode, prepare, compute,
                                              answer_result};
    dot_request r;
    return api_attention_handle(call, &steps, &r, sizeof r, &r.a, &r.arena);
}

/* The route table's entry (route.h). */
static const api_answer_field answer_fields[] = {
    {"output", 3, 0, 0, API_ANSWER_ALWAYS},
    {"weights", 3, 0, 0, API_ANSWER_WEIGHTS},
    {"scale", 0, 0, 0, API_ANSWER_ALWAYS},
    {"scores", 3, 0, 0, API_ANSWER_SCORES},
    API_ANSWER_DIAGNOSTICS(2),
    {"grads.queries", 3, 0, 0, API_ANSWER_GRADS},
    {"grads.keys", 3, 0, 0, API_ANSWER_GRADS},
    {"grads.values", 3, 0, 0, API_ANSWER_GRADS},
    {"trace.QK", 3, 0, 0, API_ANSWER_TRACE},
    {"trace.scaled", 3, 0, 0, API_ANSWER_TRACE},
    {"trace.masked", 3, 0, 0, API_ANSWER_TRACE},
    {"trace.weights", 3, 0, 0, API_ANSWER_TRACE},
    {"trace.weighted_values", 3, 0, 0, API_ANSWER_TRACE},
};

static const api_answer_table answer = API_ANSWER_TABLE(answer_fields);

const api_route api_route_dot = {
    .method = "POST",
    .path = "/attention/dot",
    .handler = handle_dot,
    .flags = API_ROUTE_JSON_BODY | API_ROUTE_VARY_ACCEPT | API_ROUTE_COMPUTES |
             API_ROUTE_WORK_OF_BODY,
    .request = &schema,
    .answer = &answer,
    .model = "attention_dot",
    .cost = cost_dot,
};
