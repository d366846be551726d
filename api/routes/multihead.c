/*
 * multihead.c — POST /attention/multihead: multi-head (and self-)
 * attention as d2l's MultiHeadAttention and PyTorch's nn.MultiheadAttention
 * compute it (d2l 11.5; Vaswani et al. 2017): project queries, keys and
 * values to h features, split them into H contiguous heads of h/H, scaled
 * dot-product attention per head (scale 1/sqrt(h/H)), concatenate, project
 * to d_out.
 *
 *   queries (B, Nq, dq)  keys (B, Nk, dk)  values (B, Nk, dv)
 *   keys default to queries and values to keys (after their own default),
 *   so queries alone is self-attention
 *   W_q (h, dq)  W_k (h, dk)  W_v (h, dv)  W_o (d_out, h)  (nn.Linear
 *   layout), optional biases b_q, b_k, b_v (h), b_o (d_out); or num_hiddens
 *   = h and seed: Xavier-uniform W_q, W_k, W_v, W_o (d_out = h) drawn in
 *   that order from one generator (docs/contract.md section 7), no biases
 *   num_heads = H, dividing h
 *   grad_output (B, Nq, d_out), optional: dL/d(output)
 *   -> {"output": (B, Nq, d_out), "weights": (B, H, Nq, Nk) per head,
 *       "params"?: {"W_q", "W_k", "W_v", "W_o"} when drawn,
 *       "diagnostics"?: rows (B, H, Nq) (diagnostics.h),
 *       "grads"?: {"queries", "keys"?, "values"?, "W_q", "W_k", "W_v",
 *                  "W_o", given biases},
 *       "trace"?: {"Q", "K", "V", "Q_heads", "K_heads", "V_heads", "QK",
 *                  "scaled", "masked", "weights", "weighted_values",
 *                  "concat", "output"} with "trace": true (trace.h)}
 * Rank-2 input is one unbatched example; outputs, diagnostics and
 * gradients then drop the batch axis (weights (H, Nq, Nk)).
 */
#include <stdio.h>
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
static const api_tensor_spec W_v_spec = {"W_v", API_RANK(2), 0, "(h, dv)", 0};
static const api_tensor_spec W_o_spec = {"W_o", API_RANK(2), 0, "(d_out, h)",
                                         0};
static const api_tensor_spec b_q_spec = {"b_q", API_RANK(1), 0, "(h)", 0};
static const api_tensor_spec b_k_spec = {"b_k", API_RANK(1), 0, "(h)", 0};
static const api_tensor_spec b_v_spec = {"b_v", API_RANK(1), 0, "(h)", 0};
static const api_tensor_spec b_o_spec = {"b_o", API_RANK(1), 0, "(d_out)", 0};

/* The contract's field table (docs/contract.md section 6), in its order. */
static const api_field fields[] = {
    {"queries", API_FIELD_TENSOR, 1, &api_attention_queries_spec, NULL},
    {"keys", API_FIELD_TENSOR, 0, &api_attention_keys_spec, NULL},
    {"values", API_FIELD_TENSOR, 0, &api_attention_values_spec, NULL},
    {"num_heads", API_FIELD_INTEGER, 1, NULL, NULL},
    {"W_q", API_FIELD_TENSOR, 0, &W_q_spec, NULL},
    {"W_k", API_FIELD_TENSOR, 0, &W_k_spec, NULL},
    {"W_v", API_FIELD_TENSOR, 0, &W_v_spec, NULL},
    {"W_o", API_FIELD_TENSOR, 0, &W_o_spec, NULL},
    {"b_q", API_FIELD_TENSOR, 0, &b_q_spec, NULL},
    {"b_k", API_FIELD_TENSOR, 0, &b_k_spec, NULL},
    {"b_v", API_FIELD_TENSOR, 0, &b_v_spec, NULL},
    {"b_o", API_FIELD_TENSOR, 0, &b_o_spec, NULL},
    {"num_hiddens", API_FIELD_INTEGER, 0, NULL, NULL},
    {"seed", API_FIELD_INTEGER, 0, NULL, NULL},
    API_ATTENTION_MASK_FIELDS,
    {"return_weights", API_FIELD_BOOL, 0, NULL, NULL},
    API_ATTENTION_ANSWER_FIELDS,
};

static const api_schema schema = {"/attention/multihead", fields,
                                  sizeof fields / sizeof fields[0]};

/* The eight parameter tensors, in table order: weights 0 … 3, biases
 * 4 … 7. */
enum { P_WQ, P_WK, P_WV, P_WO, P_BQ, P_BK, P_BV, P_BO, N_PARAMS };
static const char *const param_names[N_PARAMS] = {"W_q", "W_k", "W_v", "W_o",
                                                  "b_q", "b_k", "b_v", "b_o"};
/* Their names in the answer: drawn weights under "params", gradients
 * under "grads". */
static const char *const param_answers[P_WO + 1] = {"params.W_q", "params.W_k",
                                                    "params.W_v", "params.W_o"};
static const char *const grad_answers[N_PARAMS] = {
    "grads.W_q", "grads.W_k", "grads.W_v", "grads.W_o",
    "grads.b_q", "grads.b_k", "grads.b_v", "grads.b_o"};
static const char *const param_pointers[N_PARAMS] = {
    "/W_q", "/W_k", "/W_v", "/W_o", "/b_q", "/b_k", "/b_v", "/b_o"};
static const api_tensor_spec *const param_specs[N_PARAMS] = {
    &W_q_spec, &W_k_spec, &W_v_spec, &W_o_spec,
    &b_q_spec, &b_k_spec, &b_v_spec, &b_o_spec};

/* All four weight matrices, or none of them and num_hiddens (missing_field
 * phase; biases are optional either way). */
static const api_attention_params params_rule = {
    param_names,
    4,
    "num_hiddens",
    "multi-head attention needs its parameters: W_q (h, dq), W_k (h, dk), "
    "W_v (h, dv) and W_o (d_out, h), or num_hiddens = h (and seed) to draw "
    "them",
    "give all four of W_q, W_k, W_v and W_o, or none of them and "
    "num_hiddens",
    "W_q, W_k, W_v and W_o"};

/* shape_mismatch at a parameter with expected/got. */
static int param_mismatch(api_problem *p, int i, const long long *expected,
                          const api_tensor *got, const char *detail) {
    api_fail(p, API_E_SHAPE_MISMATCH, param_pointers[i], "%s", detail);
    api_problem_shapes_z(p, expected, got->rank, got->shape, got->rank);
    return -1;
}

/* Given parameters against the inputs and each other, in table order:
 * W_q (h, dq) sets h, W_k (h, dk), W_v (h, dv), W_o (d_out, h) sets d_out,
 * then the biases present: b_q, b_k, b_v (h) and b_o (d_out). */
static int cross_params(const api_tensor *P, const int *present,
                        const api_attention *a, api_problem *p) {
    char detail[API_DETAIL_MAX];
    size_t h = P[P_WQ].shape[0];
    long long H = (long long)h;
    if (P[P_WQ].shape[1] != a->dq) {
        long long e[2] = {-1, (long long)a->dq};
        snprintf(detail, sizeof detail,
                 "W_q is (h, dq) in nn.Linear layout: its %zu %s must "
                 "match the %zu %s of queries",
                 P[P_WQ].shape[1],
                 api_plural(P[P_WQ].shape[1], "column", "columns"), a->dq,
                 api_plural(a->dq, "feature", "features"));
        return param_mismatch(p, P_WQ, e, &P[P_WQ], detail);
    }
    const size_t din[3] = {a->dq, a->dk, a->dv};
    static const char *const input[3] = {"queries", "keys", "values"};
    for (int i = P_WK; i <= P_WV; i++) {
        if (P[i].shape[0] == h && P[i].shape[1] == din[i])
            continue;
        long long e[2] = {H, (long long)din[i]};
        snprintf(detail, sizeof detail,
                 "%s must be (h, %s) = (%zu, %zu): h rows like W_q, one "
                 "column per feature of %s",
                 param_names[i], i == P_WK ? "dk" : "dv", h, din[i], input[i]);
        return param_mismatch(p, i, e, &P[i], detail);
    }
    if (P[P_WO].shape[1] != h) {
        long long e[2] = {-1, H};
        snprintf(detail, sizeof detail,
                 "W_o is (d_out, h): its %zu %s must match the h = %zu %s "
                 "of W_q (the concatenated heads)",
                 P[P_WO].shape[1],
                 api_plural(P[P_WO].shape[1], "column", "columns"), h,
                 api_plural(h, "row", "rows"));
        return param_mismatch(p, P_WO, e, &P[P_WO], detail);
    }
    size_t d_out = P[P_WO].shape[0];
    for (int i = P_BQ; i <= P_BO; i++) {
        size_t want = i == P_BO ? d_out : h;
        if (!present[i] || P[i].shape[0] == want)
            continue;
        long long e[1] = {(long long)want};
        snprintf(detail, sizeof detail,
                 "%s is added to the %s and must have %s = %zu %s",
                 param_names[i],
                 i == P_BO ? "output projection" : "projected features",
                 i == P_BO ? "d_out (W_o's rows)" : "h (W_q's rows)", want,
                 api_plural(want, "entry", "entries"));
        return param_mismatch(p, i, e, &P[i], detail);
    }
    return 0;
}

/* Projections B·h·(Nq·dq + Nk·dk + Nk·dv), output projection B·Nq·d_out·h,
 * and per head Q'K'ᵀ and weights·V' over h/H features: B·Nq·Nk·h·2
 * (multiply-adds, saturating). */
static uint64_t forward_work(const api_attention *a, size_t h) {
    uint64_t in = api_work_add(api_work_mul(a->Nq, a->dq),
                               api_work_mul(a->Nk, api_work_add(a->dk, a->dv)));
    uint64_t work = api_work_mul(api_work_mul(a->B, h), in);
    size_t out[4] = {a->B, a->Nq, a->d_out, h};
    size_t heads[5] = {a->B, a->Nq, a->Nk, h, 2};
    work = api_work_add(work, api_work_prod(out, 4));
    return api_work_add(work, api_work_prod(heads, 5));
}

/* Entries of each parameter: W_q (h, dq), W_k (h, dk), W_v (h, dv),
 * W_o (d_out, h), b_q, b_k, b_v (h), b_o (d_out). */
static void param_counts(const api_attention *a, size_t h,
                         size_t count[N_PARAMS]) {
    const size_t c[N_PARAMS] = {h * a->dq, h * a->dk, h * a->dv, a->d_out * h,
                                h,         h,         h,         a->d_out};
    memcpy(count, c, sizeof c);
}

/* The request's allocation: attention's buffers, then each weight and
 * each bias given, with its gradient when grad_output is. */
static void plan(const api_attention *a, size_t h, const int *present,
                 api_arena *arena) {
    size_t count[N_PARAMS];
    param_counts(a, h, count);
    api_attention_plan(a, arena);
    for (int i = 0; i < N_PARAMS; i++)
        if (i <= P_WO || present[i])
            api_arena_plan(arena, a->has_grad ? 2 * count[i] : count[i]);
}

/* What cost_multihead counts: the decoded shapes (flags read), h, which
 * parameters are present, and whether they are given (inputs) or drawn. */
typedef struct {
    const api_attention *a;
    size_t h;
    const int *present; /* N_PARAMS flags */
    int given;
} multihead_shapes;

/* forward_work, tripled with grad_output. The working set adds lib's
 * scratch (the projections, attn_multihead_workspace, and with
 * grad_output their gradients, the larger of the two); the answer holds
 * the drawn parameters and the gradients of those present. A trace's
 * buffers, text and work (trace.h). */
static void cost_multihead(const api_call *call, const void *shapes,
                           api_cost *cost) {
    const multihead_shapes *s = shapes;
    const api_attention *a = s->a;
    size_t count[N_PARAMS], inputs = api_attention_input_slots(a);
    param_counts(a, s->h, count);
    for (int i = 0; s->given && i < N_PARAMS; i++)
        if (s->present[i])
            inputs += count[i];
    api_trace trace;
    api_trace_init(&trace, API_TRACE_MULTIHEAD, call->body, s->h);
    api_arena arena = {0};
    plan(a, s->h, s->present, &arena);
    api_trace_plan(&trace, a, &arena);
    api_cost_of_plan(cost, inputs, &arena,
                     api_grads_work(forward_work(a, s->h), a->has_grad));
    api_trace_cost(&trace, a, cost);
    size_t fwd = 0, bwd = 0;
    int ok =
        attn_multihead_workspace(&fwd, a->B, a->Nq, a->Nk, s->h) == ATTN_OK;
    if (a->has_grad)
        ok = ok && attn_multihead_backward_workspace(&bwd, a->B, a->Nq, a->Nk,
                                                     s->h) == ATTN_OK;
    api_cost_scratch(cost, ok, fwd > bwd ? fwd : bwd);
    uint64_t answered = api_attention_answer_numbers(a);
    for (int i = 0; i < N_PARAMS; i++)
        if (i <= P_WO || s->present[i])
            answered = api_work_add(answered, (uint64_t)count[i] *
                                                  (!s->given + a->has_grad));
    answered = api_work_add(answered, api_trace_answer_numbers(&trace, a));
    api_cost_answer(cost, answered);
}

/* One request, decoded: the attention inputs, the parameters given
 * (P, present) or to draw (h, seed), then the buffers they are read
 * into. */
typedef struct {
    api_attention a;
    api_tensor P[N_PARAMS];
    int present[N_PARAMS];
    int given; /* W_q, W_k, W_v, W_o given (else drawn) */
    size_t h;
    int64_t seed;
    api_arena arena;
    double *param[N_PARAMS], *grad[N_PARAMS];
    api_trace trace; /* "trace": true (trace.h) */
} multihead_request;

/* Step 2, the tensors in table order: queries, keys, values, the
 * parameters, then valid_lens, the masks, grad_output; keys default to
 * queries and values to keys (self-attention). Returns 0, or -1 with p
 * set. */
static int decode_tensors(multihead_request *m, const api_fastpath *doc,
                          const json_t *body, size_t max_elements,
                          api_problem *p) {
    api_attention *a = &m->a;
    if (api_attention_decode_qkv(a, doc, body, api_attention_qkv_specs,
                                 max_elements, p))
        return -1;
    for (int i = 0; i < N_PARAMS; i++)
        if (api_field_tensor(&m->P[i], &m->present[i], doc, body,
                             param_names[i], param_specs[i], max_elements, p))
            return -1;
    if (api_attention_decode_extras(a, doc, body, max_elements, p))
        return -1;
    /* self-attention: keys default to queries, values to keys */
    a->keys_defaulted = !api_field_value(body, "keys");
    a->values_defaulted = !api_field_value(body, "values");
    if (a->keys_defaulted)
        a->k = a->q;
    if (a->values_defaulted)
        a->v = a->k;
    return 0;
}

/* Step 4's derived sizes: output and weights, the drawn weights, the
 * projections, a trace's tensors; over max_elements -> 413. */
static int check_sizes(multihead_request *m, size_t max_elements,
                       api_problem *p) {
    const api_attention *a = &m->a;
    size_t h = m->h;
    size_t wq[2] = {h, a->dq}, wk[2] = {h, a->dk}, wv[2] = {h, a->dv},
           wo[2] = {h, h};
    size_t pq[2] = {a->B * a->Nq, h}, pk[2] = {a->B * a->Nk, h};
    if (api_attention_check_sizes(a, max_elements, p) ||
        (!m->given && (api_limit_elements("W_q", wq, 2, max_elements, p) ||
                       api_limit_elements("W_k", wk, 2, max_elements, p) ||
                       api_limit_elements("W_v", wv, 2, max_elements, p) ||
                       api_limit_elements("W_o", wo, 2, max_elements, p))) ||
        api_limit_elements("projected queries (B·Nq, h)", pq, 2, max_elements,
                           p) ||
        api_limit_elements("projected keys and values (B·Nk, h)", pk, 2,
                           max_elements, p) ||
        api_trace_check_sizes(&m->trace, a, max_elements, p))
        return -1;
    return 0;
}

/* Step 5's checks of num_heads (its range first: no h divides a number
 * beyond int64; at least 1; dividing h when h is known) and of biases
 * with drawn parameters, which have none. Returns 0, or -1 with p set. */
static int check_heads(const multihead_request *m, int64_t num_heads,
                       int heads_big, int heads_ok, int h_known,
                       api_problem *p) {
    if (heads_big) /* its range first: no h divides it */
        return api_fail(p, API_E_INVALID_VALUE, "/num_heads",
                        "num_heads is out of range: the number of heads H "
                        "is an integer from 1 to 2^63 - 1 that divides h");
    if (num_heads < 1)
        return api_fail(p, API_E_INVALID_VALUE, "/num_heads",
                        "num_heads is the number of heads H, at least 1");
    if (h_known && (!heads_ok || m->h % m->a.H != 0))
        return api_fail(p, API_E_INVALID_VALUE, "/num_heads",
                        "num_heads must divide h = %zu: each head gets h / "
                        "H contiguous features of the projections",
                        m->h);
    for (int i = P_BQ; !m->given && i <= P_BO; i++)
        if (m->present[i])
            return api_fail(p, API_E_INVALID_VALUE, param_pointers[i],
                            "drawn parameters (num_hiddens) have no biases; "
                            "give W_q, W_k, W_v and W_o to use %s",
                            param_names[i]);
    return 0;
}

/* Steps 1–5 of the contract's order of checks (fields.h): fields, tensors,
 * cross-field shapes, sizes and work (charged), then the remaining
 * values up to valid_lens. Returns 0, or -1 with call->problem set. */
static int decode(api_call *call, void *req) {
    multihead_request *m = req;
    api_problem *p = &call->problem;
    const json_t *body = call->body;
    const api_fastpath *doc = call->doc;
    size_t max_elements = call->limits->max_elements;
    api_attention *a = &m->a;
    api_tensor *P = m->P;

    /* 1. unknown_field, missing_field (with the parameters rule), types */
    if (api_attention_check_fields(doc, body, &schema, &params_rule, &m->given,
                                   p))
        return -1;
    /* 2. tensors in table order */
    if (decode_tensors(m, doc, body, max_elements, p))
        return -1;

    /* 3. cross-field shapes */
    int given = m->given;
    if (api_attention_cross_qkv(a, 0, p) ||
        (given && cross_params(P, m->present, a, p)))
        return -1;
    int64_t num_heads = 0, num_hiddens;
    int heads_big = api_field_int(body, "num_heads", 0, &num_heads);
    if (api_attention_read_hiddens(body, given, P[P_WQ].shape[0], &num_hiddens,
                                   &m->h, p))
        return -1;
    int seed_big = api_field_int(body, "seed", 0, &m->seed);
    size_t h = m->h;
    /* h is known when given, or drawn with a valid num_hiddens; otherwise
     * num_hiddens is refused below and grad_output has nothing to match */
    int h_known =
        given || (api_field_value(body, "num_hiddens") && num_hiddens >= 1);
    a->d_out = given ? P[P_WO].shape[0] : h;
    a->heads = 1;
    /* attn_mask may be per head, (B·H, Nq, Nk), once H is a count */
    size_t mask_heads = !heads_big && num_heads >= 1 ? (size_t)num_heads : 0;
    if (api_attention_cross_lens(a, mask_heads, p) ||
        api_attention_cross_masks(a, mask_heads, p) ||
        (h_known && api_attention_cross_grad(a, p)))
        return -1;

    /* 4. derived sizes and work. Only 1 … h heads can divide h; any other
     * num_heads is refused below, so the weights are sized with one. */
    int heads_ok = !heads_big && num_heads >= 1 && (uint64_t)num_heads <= h;
    a->H = heads_ok ? (size_t)num_heads : 1;
    api_trace_init(&m->trace, API_TRACE_MULTIHEAD, body, h);
    if (check_sizes(m, max_elements, p))
        return -1;
    api_attention_read_flags(a, body);
    const multihead_shapes shapes = {a, h, m->present, given};
    if (api_route_charge(call, &shapes)) /* cost_multihead */
        return -1;

    /* 5. remaining values in table order, up to valid_lens */
    if (check_heads(m, num_heads, heads_big, heads_ok, h_known, p))
        return -1;
    return api_attention_check_drawn(body, &params_rule, given, num_hiddens,
                                     seed_big, m->seed, p);
}

/* Steps 6–7: one allocation (inputs, outputs, parameters and, with
 * grad_output, their gradients), valid_lens and the mask, then the
 * parameters read or drawn (Xavier-uniform W_q, W_k, W_v, W_o). Returns
 * 0, or -1 with call->problem set and nothing held. */
static int prepare(api_call *call, void *req) {
    multihead_request *m = req;
    api_problem *p = &call->problem;
    api_attention *a = &m->a;
    size_t count[N_PARAMS];
    param_counts(a, m->h, count);
    plan(a, m->h, m->present, &m->arena);
    api_trace_plan(&m->trace, a, &m->arena);
    if (api_arena_alloc(&m->arena))
        return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    api_attention_take(a, &m->arena);
    for (int i = 0; i < N_PARAMS; i++)
        if (i <= P_WO || m->present[i]) {
            m->param[i] = api_arena_take(&m->arena, count[i]);
            m->grad[i] =
                a->has_grad ? api_arena_take(&m->arena, count[i]) : NULL;
        }
    api_trace_take(&m->trace, a, &m->arena);
    if (api_attention_check_lens(a, p) ||
        api_attention_read_mask(a, call->body, p) ||
        api_tensor_format_read(&a->fmt, call->body, p)) {
        api_arena_free(&m->arena);
        return -1;
    }
    if (m->given) {
        for (int i = 0; i < N_PARAMS; i++)
            if (m->param[i])
                api_tensor_read(m->param[i], &m->P[i]);
    } else {
        attn_rng rng;
        attn_rng_seed(&rng, (uint64_t)m->seed);
        attn_multihead_xavier(m->param[P_WQ], m->param[P_WK], m->param[P_WV],
                              m->param[P_WO], &rng, a->dq, a->dk, a->dv, m->h);
    }
    return 0;
}

/* Step 8: forward, and backward with grad_output; a defaulted tensor's
 * gradient goes to its source. */
static attn_status compute(void *req, attn_fault *fault) {
    multihead_request *m = req;
    api_attention *a = &m->a;
    double *const *w = m->param, *const *g = m->grad;
    const attn_multihead_params params = {w[P_WQ], w[P_WK], w[P_WV], w[P_WO],
                                          w[P_BQ], w[P_BK], w[P_BV], w[P_BO]};
    const attn_multihead_grads grads = {g[P_WQ], g[P_WK], g[P_WV], g[P_WO],
                                        g[P_BQ], g[P_BK], g[P_BV], g[P_BO]};
    attn_status st = attn_multihead_forward(
        a->out, a->weights, api_trace_scores(&m->trace, a), a->qd, a->kd, a->vd,
        &params, &a->mask, a->B, a->Nq, a->Nk, a->dq, a->dk, a->dv, m->h, a->H,
        a->d_out, fault);
    if (st == ATTN_OK)
        st = api_trace_multihead(&m->trace, a, &params);
    if (st == ATTN_OK && a->has_grad) {
        st = attn_multihead_backward(
            a->grad_q, a->grad_k, a->grad_v, &grads, a->grad_out, a->weights,
            a->qd, a->kd, a->vd, &params, &a->mask, a->B, a->Nq, a->Nk, a->dq,
            a->dk, a->dv, m->h, a->H, a->d_out, fault);
        if (a->values_defaulted)
            api_grads_accumulate(a->grad_k, a->grad_v, a->v.count);
        if (a->keys_defaulted)
            api_grads_accumulate(a->grad_q, a->grad_k, a->k.count);
    }
    return st;
}

/* Step 9: the typed result (result.h), which keeps the allocation: one
 * heatmap panel per head, drawn parameters, gradients. */
static void answer_result(api_call *call, void *req) {
    multihead_request *m = req;
    api_attention *a = &m->a;
    api_result *res = &call->result;
    size_t h = m->h, d_out = a->d_out;
    api_attention_answer(a, res, &m->arena, "Multi-head attention weights");
    size_t shape[N_PARAMS][2] = {{h, a->dq}, {h, a->dk}, {h, a->dv}, {d_out, h},
                                 {h},        {h},        {h},        {d_out}};
    if (!m->given)
        for (int i = P_WQ; i <= P_WO; i++)
            api_result_tensor(res, param_answers[i], m->param[i], shape[i], 2)
                ->fail_detail = "a drawn parameter could not be printed";
    api_grad_entry entries[3 + N_PARAMS];
    size_t n = 0;
    entries[n++] =
        (api_grad_entry){"grads.queries", a->grad_q, a->q.shape, a->q.rank};
    if (!a->keys_defaulted)
        entries[n++] =
            (api_grad_entry){"grads.keys", a->grad_k, a->k.shape, a->k.rank};
    if (!a->values_defaulted)
        entries[n++] =
            (api_grad_entry){"grads.values", a->grad_v, a->v.shape, a->v.rank};
    for (int i = 0; i < N_PARAMS; i++)
        if (m->grad[i])
            entries[n++] = (api_grad_entry){grad_answers[i], m->grad[i],
                                            shape[i], i <= P_WO ? 2 : 1};
    api_attention_answer_extras(a, res, a->has_grad ? entries : NULL, n);
    api_trace_answer(&m->trace, a, res);
}

static int handle_multihead(api_call *call) {
    static const api_attention_steps steps = {decode, prepare, compute,
                                              answer_result};
    multihead_request m;
    return api_attention_handle(call, &steps, &m, sizeof m, &m.a, &m.arena);
}

/* The route table's entry (route.h). */
static const api_answer_field answer_fields[] = {
    {"output", 3, 0, 0, API_ANSWER_ALWAYS},
    {"weights", 4, 0, 0, API_ANSWER_WEIGHTS},
    {"params.W_q", 2, 0, 0, API_ANSWER_DRAWN},
    {"params.W_k", 2, 0, 0, API_ANSWER_DRAWN},
    {"params.W_v", 2, 0, 0, API_ANSWER_DRAWN},
    {"params.W_o", 2, 0, 0, API_ANSWER_DRAWN},
    API_ANSWER_DIAGNOSTICS(3),
    {"grads.queries", 3, 0, 0, API_ANSWER_GRADS},
    {"grads.keys", 3, 0, 0,
     API_ANSWER_GRADS " with keys given (self-attention adds "
                      "it into grads.queries)"},
    {"grads.values", 3, 0, 0, API_ANSWER_GRADS " with values given"},
    {"grads.W_q", 2, 0, 0, API_ANSWER_GRADS},
    {"grads.W_k", 2, 0, 0, API_ANSWER_GRADS},
    {"grads.W_v", 2, 0, 0, API_ANSWER_GRADS},
    {"grads.W_o", 2, 0, 0, API_ANSWER_GRADS},
    {"grads.b_q", 1, 0, 0, API_ANSWER_GRADS " with b_q given"},
    {"grads.b_k", 1, 0, 0, API_ANSWER_GRADS " with b_k given"},
    {"grads.b_v", 1, 0, 0, API_ANSWER_GRADS " with b_v given"},
    {"grads.b_o", 1, 0, 0, API_ANSWER_GRADS " with b_o given"},
    {"trace.Q", 3, 0, 0, API_ANSWER_TRACE},
    {"trace.K", 3, 0, 0, API_ANSWER_TRACE},
    {"trace.V", 3, 0, 0, API_ANSWER_TRACE},
    {"trace.Q_heads", 4, 0, 0, API_ANSWER_TRACE},
    {"trace.K_heads", 4, 0, 0, API_ANSWER_TRACE},
    {"trace.V_heads", 4, 0, 0, API_ANSWER_TRACE},
    {"trace.QK", 4, 0, 0, API_ANSWER_TRACE},
    {"trace.scaled", 4, 0, 0, API_ANSWER_TRACE},
    {"trace.masked", 4, 0, 0, API_ANSWER_TRACE},
    {"trace.weights", 4, 0, 0, API_ANSWER_TRACE},
    {"trace.weighted_values", 4, 0, 0, API_ANSWER_TRACE},
    {"trace.concat", 3, 0, 0, API_ANSWER_TRACE},
    {"trace.output", 3, 0, 0, API_ANSWER_TRACE},
};

static const api_answer_table answer = API_ANSWER_TABLE(answer_fields);

const api_route api_route_multihead = {
    .method = "POST",
    .path = "/attention/multihead",
    .handler = handle_multihead,
    .flags = API_ROUTE_JSON_BODY | API_ROUTE_VARY_ACCEPT | API_ROUTE_COMPUTES,
    .request = &schema,
    .answer = &answer,
    .model = "attention_multihead",
    .cost = cost_multihead,
};
