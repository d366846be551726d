/*
 * additive.c — POST /attention/additive: additive (Bahdanau)
 * attention, score(q, k) = w_vᵀ tanh(W_q q + W_k k) (d2l 11.3.3;
 * Bahdanau et al. 2014).
 *
 *   queries (B, Nq, dq)  keys (B, Nk, dk)  values (B, Nk, dv)
 *   W_q (h, dq)  W_k (h, dk)  w_v (h)        (nn.Linear weight layout)
 *   or num_hiddens = h and seed: Xavier-uniform W_q, W_k, w_v drawn in
 *   that order from one generator (docs/contract.md section 7)
 *   grad_output (B, Nq, dv), optional: dL/d(output)
 *   -> {"output": (B, Nq, dv), "weights": (B, Nq, Nk),
 *       "scores"?: (B, Nq, Nk), "params"?: {"W_q", "W_k", "w_v"},
 *       "diagnostics"?: {...} (diagnostics.h),
 *       "grads"?: {"queries", "keys", "values", "W_q", "W_k", "w_v"},
 *       "trace"?: {"Q", "K", "features", "scores", "masked", "weights",
 *                  "weighted_values"} with "trace": true (trace.h)}
 */
#include <string.h>

#include "attention.h"
#include "call.h"
#include "fields.h"
#include "grads.h"
#include "limit.h"
#include "route.h"
#include "trace.h"

static const api_tensor_spec W_q_spec = {"W_q", API_RANK(2), 0, "(h, dq)", 0};
static const api_tensor_spec W_k_spec = {"W_k", API_RANK(2), 0, "(h, dk)", 0};
static const api_tensor_spec w_v_spec = {"w_v", API_RANK(1), 0, "(h)", 0};

/* The contract's field table (docs/contract.md section 3), in its order. */
static const api_field fields[] = {
    API_ATTENTION_QKV_FIELDS,
    {"W_q", API_FIELD_TENSOR, 0, &W_q_spec, NULL},
    {"W_k", API_FIELD_TENSOR, 0, &W_k_spec, NULL},
    {"w_v", API_FIELD_TENSOR, 0, &w_v_spec, NULL},
    {"num_hiddens", API_FIELD_INTEGER, 0, NULL, NULL},
    {"seed", API_FIELD_INTEGER, 0, NULL, NULL},
    API_ATTENTION_MASK_FIELDS,
    {"return_weights", API_FIELD_BOOL, 0, NULL, NULL},
    {"return_scores", API_FIELD_BOOL, 0, NULL, NULL},
    API_ATTENTION_ANSWER_FIELDS,
};

static const api_schema schema = {"/attention/additive", fields,
                                  sizeof fields / sizeof fields[0]};

static const char *const param_names[3] = {"W_q", "W_k", "w_v"};

/* All three matrices, or none of them and num_hiddens. */
static const api_attention_params params_rule = {
    param_names,
    3,
    "num_hiddens",
    "additive attention needs its parameters: W_q (h, dq), W_k (h, dk) and "
    "w_v (h), or num_hiddens = h (and seed) to draw them",
    "give all three of W_q, W_k and w_v, or none of them and num_hiddens",
    "W_q, W_k and w_v"};

/* W_q (h, dq), W_k (h, dk), w_v (h) against queries, keys and each other. */
static int cross_params(const api_tensor *W, const api_attention *a,
                        api_problem *p) {
    size_t h = W[0].shape[0];
    long long eq[2] = {-1, (long long)a->dq};
    long long ek[2] = {(long long)h, (long long)a->dk};
    long long ev[1] = {(long long)h};
    if (W[0].shape[1] != a->dq) {
        api_fail(p, API_E_SHAPE_MISMATCH, "/W_q",
                 "W_q is (h, dq) in nn.Linear layout: its %zu %s must "
                 "match the %zu %s of queries",
                 W[0].shape[1], api_plural(W[0].shape[1], "column", "columns"),
                 a->dq, api_plural(a->dq, "feature", "features"));
        api_problem_shapes_z(p, eq, 2, W[0].shape, 2);
        return -1;
    }
    if (W[1].shape[0] != h || W[1].shape[1] != a->dk) {
        api_fail(p, API_E_SHAPE_MISMATCH, "/W_k",
                 "W_k must be (h, dk) = (%zu, %zu): h rows like W_q, one "
                 "column per key feature",
                 h, a->dk);
        api_problem_shapes_z(p, ek, 2, W[1].shape, 2);
        return -1;
    }
    if (W[2].shape[0] != h) {
        api_fail(p, API_E_SHAPE_MISMATCH, "/w_v",
                 "w_v must have h = %zu %s, one per row of W_q", h,
                 api_plural(h, "entry", "entries"));
        api_problem_shapes_z(p, ev, 1, W[2].shape, 1);
        return -1;
    }
    return 0;
}

/* The request's allocation: attention's buffers, then W_q, W_k, w_v and,
 * with grad_output, their gradients. */
static void plan(const api_attention *a, size_t h, api_arena *arena) {
    api_attention_plan(a, arena);
    for (int copies = a->has_grad ? 2 : 1; copies > 0; copies--) {
        api_arena_plan(arena, h * a->dq);
        api_arena_plan(arena, h * a->dk);
        api_arena_plan(arena, h);
    }
}

/* What cost_additive counts: the decoded shapes (flags read), h, and
 * whether W_q, W_k and w_v are given (inputs) or drawn. */
typedef struct {
    const api_attention *a;
    size_t h;
    int given;
} additive_shapes;

/* Projections B·Nq·h·dq + B·Nk·h·dk, their exponentials B·(Nq+Nk)·h
 * (API_WORK_EXP each), then B·Nq·Nk·h features for w_vᵀ tanh(...), each
 * counting API_WORK_TANH, and B·Nq·Nk·dv for weights·V; tripled with
 * grad_output. Given parameters are read from the request (inputs); drawn
 * ones are not, and are answered. The working set adds lib's scratch, the
 * larger of the forward's and (with grad_output) the backward's
 * (attn_additive_workspace: the projections and their exponentials). A
 * trace's buffers, text and work (trace.h). */
static void cost_additive(const api_call *call, const void *shapes,
                          api_cost *cost) {
    const additive_shapes *s = shapes;
    const api_attention *a = s->a;
    uint64_t work = api_work_mul(
        api_work_mul(a->B, s->h),
        api_work_add(api_work_mul(a->Nq, a->dq), api_work_mul(a->Nk, a->dk)));
    size_t bqk[3] = {a->B, a->Nq, a->Nk};
    work = api_work_add(
        work,
        api_work_mul(api_work_prod(bqk, 3),
                     api_work_add(api_work_mul(s->h, API_WORK_TANH), a->dv)));
    size_t rows[3] = {a->B, a->Nq + a->Nk, s->h};
    work =
        api_work_add(work, api_work_mul(api_work_prod(rows, 3), API_WORK_EXP));
    api_trace trace;
    api_trace_init(&trace, API_TRACE_ADDITIVE, call->body, s->h);
    api_arena arena = {0};
    plan(a, s->h, &arena);
    api_trace_plan(&trace, a, &arena);
    size_t inputs = api_attention_input_slots(a);
    uint64_t params = api_work_mul(s->h, api_work_add(a->dq + a->dk, 1));
    if (s->given)
        inputs += s->h * (a->dq + a->dk + 1);
    work = api_grads_work(work, a->has_grad);
    if (!s->given) /* W_q, W_k and w_v drawn from the seed */
        work = api_work_add(work, api_work_mul(params, API_WORK_DRAW));
    api_cost_of_plan(cost, inputs, &arena, work);
    api_trace_cost(&trace, a, cost);
    size_t fwd = 0, bwd = 0;
    int ok = attn_additive_workspace(&fwd, a->B, a->Nq, a->Nk, s->h) == ATTN_OK;
    if (a->has_grad)
        ok = ok && attn_additive_backward_workspace(&bwd, a->B, a->Nq, a->Nk,
                                                    s->h) == ATTN_OK;
    api_cost_scratch(cost, ok, fwd > bwd ? fwd : bwd);
    uint64_t answered = api_attention_answer_numbers(a);
    if (!s->given)
        answered = api_work_add(answered, params);
    if (a->has_grad)
        answered = api_work_add(answered, params);
    answered = api_work_add(answered, api_trace_answer_numbers(&trace, a));
    api_cost_answer(cost, answered);
}

/* One request, decoded: the attention inputs, the parameters given (W)
 * or to draw (h, seed), then the buffers they are read into. */
typedef struct {
    api_attention a;
    api_tensor W[3];
    int given; /* W_q, W_k, w_v given (else drawn) */
    size_t h;
    int64_t seed;
    api_arena arena;
    double *Wq, *Wk, *wv, *gWq, *gWk, *gwv;
    api_trace trace; /* "trace": true (trace.h) */
} additive_request;

/* Steps 1–5 of the contract's order of checks (fields.h): fields, tensors,
 * cross-field shapes, sizes and work (charged), then the remaining values
 * up to valid_lens. Returns 0, or -1 with call->problem set. */
static int decode(api_call *call, void *req) {
    additive_request *r = req;
    static const api_tensor_spec *const param_specs[3] = {&W_q_spec, &W_k_spec,
                                                          &w_v_spec};
    api_problem *p = &call->problem;
    const json_t *body = call->body;
    const api_fastpath *doc = call->doc;
    size_t max_elements = call->limits->max_elements;
    api_attention *a = &r->a;

    /* 1. unknown_field, missing_field (with the parameters rule), types */
    if (api_attention_check_fields(doc, body, &schema, &params_rule, &r->given,
                                   p))
        return -1;
    /* 2. tensors in table order */
    if (api_attention_decode_qkv(a, doc, body, api_attention_qkv_specs,
                                 max_elements, p))
        return -1;
    for (int i = 0; i < 3; i++) {
        int present;
        if (api_field_tensor(&r->W[i], &present, doc, body, param_names[i],
                             param_specs[i], max_elements, p))
            return -1;
    }
    if (api_attention_decode_extras(a, doc, body, max_elements, p))
        return -1;
    /* 3. cross-field shapes */
    int given = r->given;
    if (api_attention_cross_qkv(a, 0, p) ||
        (given && cross_params(r->W, a, p)) ||
        api_attention_cross_lens(a, 0, p) ||
        api_attention_cross_masks(a, 0, p) || api_attention_cross_grad(a, p))
        return -1;
    /* 4. derived sizes and work */
    int64_t num_hiddens;
    if (api_attention_read_hiddens(body, given, r->W[0].shape[0], &num_hiddens,
                                   &r->h, p))
        return -1;
    int seed_big = api_field_int(body, "seed", 0, &r->seed);
    size_t h = r->h;
    size_t wq[2] = {h, a->dq}, wk[2] = {h, a->dk};
    size_t pq[2] = {a->B * a->Nq, h}, pk[2] = {a->B * a->Nk, h};
    api_trace_init(&r->trace, API_TRACE_ADDITIVE, body, h);
    if (api_attention_check_sizes(a, max_elements, p) ||
        (!given && (api_limit_elements("W_q", wq, 2, max_elements, p) ||
                    api_limit_elements("W_k", wk, 2, max_elements, p))) ||
        api_limit_elements("projected queries (B·Nq, h)", pq, 2, max_elements,
                           p) ||
        api_limit_elements("projected keys (B·Nk, h)", pk, 2, max_elements,
                           p) ||
        api_trace_check_sizes(&r->trace, a, max_elements, p))
        return -1;
    api_attention_read_flags(a, body);
    const additive_shapes shapes = {a, h, given};
    if (api_route_charge(call, &shapes)) /* cost_additive */
        return -1;

    /* 5. remaining values in table order, up to valid_lens */
    return api_attention_check_drawn(body, &params_rule, given, num_hiddens,
                                     seed_big, r->seed, p);
}

/* Steps 6–7: one allocation, valid_lens and the mask, then the
 * parameters: given, or Xavier-uniform in the order W_q, W_k, w_v from one
 * generator (w_v drawn as a (1, h) matrix). Returns 0, or -1 with
 * call->problem set and nothing held. */
static int prepare(api_call *call, void *req) {
    additive_request *r = req;
    api_problem *p = &call->problem;
    api_attention *a = &r->a;
    size_t h = r->h;
    plan(a, h, &r->arena);
    api_trace_plan(&r->trace, a, &r->arena);
    if (api_arena_alloc(&r->arena))
        return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    api_attention_take(a, &r->arena);
    r->Wq = api_arena_take(&r->arena, h * a->dq);
    r->Wk = api_arena_take(&r->arena, h * a->dk);
    r->wv = api_arena_take(&r->arena, h);
    if (a->has_grad) {
        r->gWq = api_arena_take(&r->arena, h * a->dq);
        r->gWk = api_arena_take(&r->arena, h * a->dk);
        r->gwv = api_arena_take(&r->arena, h);
    }
    api_trace_take(&r->trace, a, &r->arena);
    if (api_attention_check_lens(a, p) ||
        api_attention_read_mask(a, call->body, p) ||
        api_tensor_format_read(&a->fmt, call->body, p)) {
        api_arena_free(&r->arena);
        return -1;
    }
    if (r->given) {
        api_tensor_read(r->Wq, &r->W[0]);
        api_tensor_read(r->Wk, &r->W[1]);
        api_tensor_read(r->wv, &r->W[2]);
    } else {
        attn_rng rng;
        attn_rng_seed(&rng, (uint64_t)r->seed);
        attn_rng_xavier(&rng, r->Wq, h, a->dq);
        attn_rng_xavier(&rng, r->Wk, h, a->dk);
        attn_rng_xavier(&rng, r->wv, 1, h);
    }
    return 0;
}

/* Step 8: forward, and backward with grad_output. */
static attn_status compute(void *req, attn_fault *fault) {
    additive_request *r = req;
    api_attention *a = &r->a;
    attn_status st = attn_additive_forward(
        a->out, a->weights, api_trace_scores(&r->trace, a), a->qd, a->kd, a->vd,
        r->Wq, r->Wk, r->wv, &a->mask, a->B, a->Nq, a->Nk, a->dq, a->dk, a->dv,
        r->h, fault);
    if (st == ATTN_OK)
        st = api_trace_additive(&r->trace, a, r->Wq, r->Wk);
    if (st == ATTN_OK && a->has_grad)
        st = attn_additive_backward(
            a->grad_q, a->grad_k, a->grad_v, r->gWq, r->gWk, r->gwv,
            a->grad_out, a->weights, a->qd, a->kd, a->vd, r->Wq, r->Wk, r->wv,
            &a->mask, a->B, a->Nq, a->Nk, a->dq, a->dk, a->dv, r->h, fault);
    return st;
}

/* Step 9: the typed result (result.h), which keeps the allocation. */
static void answer_result(api_call *call, void *req) {
    additive_request *r = req;
    api_attention *a = &r->a;
    api_result *res = &call->result;
    api_attention_answer(a, res, &r->arena, "Additive attention weights");
    size_t sq[2] = {r->h, a->dq}, sk[2] = {r->h, a->dk}, sv[1] = {r->h};
    if (!r->given) {
        static const char drawn[] = "a drawn parameter could not be printed";
        api_result_tensor(res, "params.W_q", r->Wq, sq, 2)->fail_detail = drawn;
        api_result_tensor(res, "params.W_k", r->Wk, sk, 2)->fail_detail = drawn;
        api_result_tensor(res, "params.w_v", r->wv, sv, 1)->fail_detail = drawn;
    }
    const api_grad_entry grads[6] = {
        {"grads.queries", a->grad_q, a->q.shape, a->q.rank},
        {"grads.keys", a->grad_k, a->k.shape, a->k.rank},
        {"grads.values", a->grad_v, a->v.shape, a->v.rank},
        {"grads.W_q", r->gWq, sq, 2},
        {"grads.W_k", r->gWk, sk, 2},
        {"grads.w_v", r->gwv, sv, 1},
    };
    api_attention_answer_extras(a, res, a->has_grad ? grads : NULL, 6);
    api_trace_answer(&r->trace, a, res);
}

static int handle_additive(api_call *call) {
    static const api_attention_steps steps = {decode, prepare, compute,
                                              answer_result};
    additive_request r;
    return api_attention_handle(call, &steps, &r, sizeof r, &r.a, &r.arena);
}

/* The route table's entry (route.h). */
static const api_answer_field answer_fields[] = {
    {"output", 3, 0, 0, API_ANSWER_ALWAYS},
    {"weights", 3, 0, 0, API_ANSWER_WEIGHTS},
    {"scores", 3, 0, 0, API_ANSWER_SCORES},
    {"params.W_q", 2, 0, 0, API_ANSWER_DRAWN},
    {"params.W_k", 2, 0, 0, API_ANSWER_DRAWN},
    {"params.w_v", 1, 0, 0, API_ANSWER_DRAWN},
    API_ANSWER_DIAGNOSTICS(2),
    {"grads.queries", 3, 0, 0, API_ANSWER_GRADS},
    {"grads.keys", 3, 0, 0, API_ANSWER_GRADS},
    {"grads.values", 3, 0, 0, API_ANSWER_GRADS},
    {"grads.W_q", 2, 0, 0, API_ANSWER_GRADS},
    {"grads.W_k", 2, 0, 0, API_ANSWER_GRADS},
    {"grads.w_v", 1, 0, 0, API_ANSWER_GRADS},
    {"trace.Q", 3, 0, 0, API_ANSWER_TRACE},
    {"trace.K", 3, 0, 0, API_ANSWER_TRACE},
    {"trace.features", 4, 0, 0, API_ANSWER_TRACE},
    {"trace.scores", 3, 0, 0, API_ANSWER_TRACE},
    {"trace.masked", 3, 0, 0, API_ANSWER_TRACE},
    {"trace.weights", 3, 0, 0, API_ANSWER_TRACE},
    {"trace.weighted_values", 3, 0, 0, API_ANSWER_TRACE},
};

static const api_answer_table answer = API_ANSWER_TABLE(answer_fields);

const api_route api_route_additive = {
    .method = "POST",
    .path = "/attention/additive",
    .handler = handle_additive,
    .flags = API_ROUTE_JSON_BODY | API_ROUTE_VARY_ACCEPT | API_ROUTE_COMPUTES,
    .request = &schema,
    .answer = &answer,
    .model = "attention_additive",
    .cost = cost_additive,
};
