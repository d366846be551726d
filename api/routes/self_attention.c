/*
 * self_attention.c — POST /attention/self: the seed note's
 * self_attention(x, d_k) (note 2, section 4.6; d2l 11.6.1): queries, keys
 * and values are projections of one sequence x, then scaled dot-product
 * attention of them.
 *
 *   x (B, N, d_model), or unbatched (N, d_model)
 *   W_Q, W_K, W_V (d_model, d_k) in the note's (in, out) layout, Q = x @ W_Q
 *   (the transpose of nn.Linear's weight); or d_k and seed (default 42, the
 *   note's): np.random.seed(seed), then W_Q, W_K, W_V =
 *   np.random.randn(d_model, d_k) * init_std each, in that order, by
 *   NumPy's legacy generator to the bit (lib/numpy_random.c; init_std
 *   default 0.1, the note's)
 *   scale (default 1/sqrt(d_k)); valid_lens, attn_mask (N, N) or (B, N,
 *   N), key_padding_mask (B, N), causal, fully_masked as /attention/dot;
 *   trace; grad_output (B, N, d_k)
 *   -> {"output": (B, N, d_k), "weights": (B, N, N), "scale",
 *       "params"?: {"W_Q", "W_K", "W_V"} when drawn,
 *       "trace"?: {"Q", "K", "V", "QK", "scaled", "masked", "weights",
 *                  "weighted_values"},
 *       "grads"?: {"x", "W_Q", "W_K", "W_V"}}
 * Rank-2 input is one unbatched example; outputs drop the batch axis.
 * The attention itself is attn_dot_forward's (lib/self_attention.c).
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

static const api_tensor_spec x_spec = {
    "x", API_RANK(2) | API_RANK(3), 0,
    "(B, N, d_model) or unbatched (N, d_model)", 0};
static const api_tensor_spec W_Q_spec = {"W_Q", API_RANK(2), 0,
                                         "(d_model, d_k)", 0};
static const api_tensor_spec W_K_spec = {"W_K", API_RANK(2), 0,
                                         "(d_model, d_k)", 0};
static const api_tensor_spec W_V_spec = {"W_V", API_RANK(2), 0,
                                         "(d_model, d_k)", 0};

/* The contract's field table (docs/contract.md section 6, "POST
 * /attention/self"), in its order. */
static const api_field fields[] = {
    {"x", API_FIELD_TENSOR, 1, &x_spec, NULL},
    {"W_Q", API_FIELD_TENSOR, 0, &W_Q_spec, NULL},
    {"W_K", API_FIELD_TENSOR, 0, &W_K_spec, NULL},
    {"W_V", API_FIELD_TENSOR, 0, &W_V_spec, NULL},
    {"d_k", API_FIELD_INTEGER, 0, NULL, NULL},
    {"seed", API_FIELD_INTEGER, 0, NULL, NULL},
    {"init_std", API_FIELD_NUMBER, 0, NULL, NULL},
    {"scale", API_FIELD_NUMBER, 0, NULL, NULL},
    API_ATTENTION_MASK_FIELDS,
    {"return_weights", API_FIELD_BOOL, 0, NULL, NULL},
    {"trace", API_FIELD_BOOL, 0, NULL, NULL},
    {"grad_output", API_FIELD_TENSOR, 0, &api_grad_output_spec, NULL},
    {"tensor_format", API_FIELD_STRING, 0, NULL, NULL},
    {"precision", API_FIELD_INTEGER, 0, NULL, NULL},
};

static const api_schema schema = {"/attention/self", fields,
                                  sizeof fields / sizeof fields[0]};

enum { P_WQ, P_WK, P_WV, N_PARAMS };
static const char *const param_names[N_PARAMS] = {"W_Q", "W_K", "W_V"};
static const char *const param_pointers[N_PARAMS] = {"/W_Q", "/W_K", "/W_V"};
static const char *const param_answers[N_PARAMS] = {"params.W_Q", "params.W_K",
                                                    "params.W_V"};
static const char *const grad_answers[N_PARAMS] = {"grads.W_Q", "grads.W_K",
                                                   "grads.W_V"};
static const api_tensor_spec *const param_specs[N_PARAMS] = {
    &W_Q_spec, &W_K_spec, &W_V_spec};

/* The note's seed (np.random.seed(42) inside self_attention) and scale of
 * the drawn weights (np.random.randn(d_model, d_k) * 0.1). */
#define NOTES_SEED 42
#define NOTES_INIT_STD 0.1

/* The trace's members, in the computation's order (docs/trace.md). */
enum {
    T_Q,
    T_K,
    T_V,
    T_QK,
    T_SCALED,
    T_MASKED,
    T_WEIGHTS,
    T_WEIGHTED,
    N_TRACE
};
static const char *const trace_answers[N_TRACE] = {
    "trace.Q",      "trace.K",      "trace.V",       "trace.QK",
    "trace.scaled", "trace.masked", "trace.weights", "trace.weighted_values"};

/* One request, decoded: x (in a.q), the attention's shared parts, the
 * parameters given or to draw, then the buffers of its one allocation. */
typedef struct {
    api_attention a; /* q = x; Nq = Nk = N, dq = dk = dv = d_out = d_k */
    api_tensor x;
    size_t d_model, d_k;
    api_tensor P[N_PARAMS];
    int present[N_PARAMS];
    int given; /* W_Q, W_K, W_V given (else drawn) */
    int64_t seed;
    double init_std, scale;
    int trace;
    api_arena arena;
    double *xd, *param[N_PARAMS], *grad_x, *grad[N_PARAMS];
    double *q, *k, *v;  /* the projections (B, N, d_k) */
    double *t[N_TRACE]; /* trace copies, when asked (Q, K, V are q, k, v) */
} self_request;

/* All three weight matrices, or none of them and d_k (missing_field
 * phase). */
static const api_attention_params params_rule = {
    param_names,
    N_PARAMS,
    "d_k",
    "self-attention needs its weights: W_Q, W_K and W_V (d_model, d_k) "
    "each, or d_k (and seed) to draw them as the notes do",
    "give all three of W_Q, W_K and W_V, or none of them and d_k",
    "W_Q, W_K and W_V"};

/* W_Q (d_model, d_k) against x, then W_K and W_V against W_Q. */
static int cross_params(self_request *s, api_problem *p) {
    const api_tensor *P = s->P;
    char detail[API_DETAIL_MAX];
    long long e[2] = {(long long)s->d_model, -1};
    if (P[P_WQ].shape[0] != s->d_model) {
        snprintf(detail, sizeof detail,
                 "W_Q is (d_model, d_k) in the notes' layout (Q = x @ W_Q): "
                 "its %zu %s must match the d_model = %zu %s of x",
                 P[P_WQ].shape[0], api_plural(P[P_WQ].shape[0], "row", "rows"),
                 s->d_model, api_plural(s->d_model, "feature", "features"));
        api_fail(p, API_E_SHAPE_MISMATCH, "/W_Q", "%s", detail);
        api_problem_shapes_z(p, e, 2, P[P_WQ].shape, 2);
        return -1;
    }
    e[1] = (long long)P[P_WQ].shape[1];
    for (int i = P_WK; i <= P_WV; i++) {
        if (P[i].shape[0] == s->d_model && P[i].shape[1] == P[P_WQ].shape[1])
            continue;
        snprintf(detail, sizeof detail,
                 "%s must be (d_model, d_k) = (%zu, %zu), the shape of W_Q",
                 param_names[i], s->d_model, P[P_WQ].shape[1]);
        api_fail(p, API_E_SHAPE_MISMATCH, param_pointers[i], "%s", detail);
        api_problem_shapes_z(p, e, 2, P[i].shape, 2);
        return -1;
    }
    return 0;
}

/* Entries of one (B, N, d_k), one (B, N, N) and one weight matrix. */
static size_t rows_k(const self_request *s) {
    return s->a.B * s->a.Nq * s->d_k;
}
static size_t rows_n(const self_request *s) {
    return s->a.B * s->a.Nq * s->a.Nq;
}
static size_t weight_count(const self_request *s) {
    return s->d_model * s->d_k;
}

/* The one allocation: x, valid_lens, grad_output, the masks (the
 * request's own, in that order), the weights, q, k, v, output, weights, with
 * trace the copies (QK, scaled, masked, weights, weighted_values), with
 * grad_output grads of x and of the weights. */
static void plan(const self_request *s, api_arena *arena) {
    const api_attention *a = &s->a;
    api_arena_plan(arena, s->x.count);
    if (a->has_lens)
        api_arena_plan(arena, a->lens.count);
    if (a->has_grad)
        api_arena_plan(arena, a->grad.count);
    api_masks_plan(&a->masks, arena);
    for (int i = 0; i < N_PARAMS; i++)
        api_arena_plan(arena, weight_count(s));
    for (int i = 0; i < 4; i++) /* q, k, v, output */
        api_arena_plan(arena, rows_k(s));
    api_arena_plan(arena, rows_n(s)); /* weights */
    if (s->trace) {
        for (int i = T_QK; i <= T_WEIGHTS; i++)
            api_arena_plan(arena, rows_n(s));
        api_arena_plan(arena, rows_k(s));
    }
    if (a->has_grad) {
        api_arena_plan(arena, s->x.count);
        for (int i = 0; i < N_PARAMS; i++)
            api_arena_plan(arena, weight_count(s));
    }
}

/* Multiply-adds: projections 3·B·N·d_model·d_k, Q Kᵀ and weights·V
 * B·N·N·2·d_k (and Q Kᵀ again for the trace), tripled with grad_output. */
static uint64_t forward_work(const self_request *s) {
    size_t proj[5] = {3, s->a.B, s->a.Nq, s->d_model, s->d_k};
    size_t att[5] = {s->trace ? 3 : 2, s->a.B, s->a.Nq, s->a.Nq, s->d_k};
    return api_work_add(api_work_prod(proj, 5), api_work_prod(att, 5));
}

/* shapes: the decoded self_request (d_k, flags read). */
static void cost_self(const api_call *call, const void *shapes,
                      api_cost *cost) {
    (void)call;
    const self_request *s = shapes;
    size_t inputs = s->x.count;
    if (s->a.has_lens)
        inputs += s->a.lens.count;
    if (s->a.has_grad)
        inputs += s->a.grad.count;
    inputs += api_masks_slots(&s->a.masks);
    if (s->given)
        inputs += N_PARAMS * weight_count(s);
    api_arena arena = {0};
    plan(s, &arena);
    uint64_t work = api_grads_work(forward_work(s), s->a.has_grad);
    if (!s->given) /* the weights drawn from the seed */
        work = api_work_add(
            work,
            api_work_mul(N_PARAMS * (uint64_t)weight_count(s), API_WORK_DRAW));
    api_cost_of_plan(cost, inputs, &arena, work);
}

/* Step 5, the values in table order: d_k (at least 1 to draw; not with
 * given weights), seed (np.random.seed's range; not with given weights),
 * init_std, scale (default 1/sqrt(d_k)). dk_ok: d_k is a count; seed_big:
 * seed is beyond int64. Returns 0, or -1 with p set. */
static int check_values(self_request *s, const json_t *body, int dk_ok,
                        int seed_big, api_problem *p) {
    if (!s->given && !dk_ok)
        return api_fail(p, API_E_INVALID_VALUE, "/d_k",
                        "d_k is the number of features of Q, K and V (the "
                        "columns of the drawn W_Q, W_K, W_V), at least 1");
    if (s->given && api_field_value(body, "d_k"))
        return api_fail(p, API_E_INVALID_VALUE, "/d_k",
                        "give W_Q, W_K and W_V, or d_k (and seed) to draw "
                        "them — not both; with the weights, d_k is their "
                        "columns");
    if (s->given && api_field_value(body, "seed"))
        return api_fail(p, API_E_INVALID_VALUE, "/seed",
                        "seed draws the weights; with W_Q, W_K and W_V "
                        "given, leave it out");
    if (seed_big || s->seed < 0 || s->seed > (int64_t)UINT32_MAX)
        return api_fail(p, API_E_INVALID_VALUE, "/seed",
                        "seed is np.random.seed's integer, from 0 to 2^32 - 1 "
                        "= 4294967295");
    s->init_std = api_field_number(body, "init_std", NOTES_INIT_STD);
    if (s->given && api_field_value(body, "init_std"))
        return api_fail(p, API_E_INVALID_VALUE, "/init_std",
                        "init_std scales the drawn weights; with W_Q, W_K "
                        "and W_V given, leave it out");
    if (!(isfinite(s->init_std) && s->init_std > 0))
        return api_fail(p, API_E_INVALID_VALUE, "/init_std",
                        "init_std multiplies the standard normals of the "
                        "drawn weights and must be a finite number > 0 "
                        "(default 0.1, the notes')");
    s->scale = api_field_number(body, "scale", -1);
    if (api_field_value(body, "scale") && !(isfinite(s->scale) && s->scale > 0))
        return api_fail(p, API_E_INVALID_VALUE, "/scale",
                        "scale multiplies Q Kᵀ and must be a finite number > 0 "
                        "(default 1/sqrt(d_k))");
    if (!api_field_value(body, "scale"))
        s->scale = attn_dot_default_scale(s->d_k);
    return 0;
}

/* Steps 1–5 of the contract's order of checks (fields.h): fields,
 * tensors, cross-field shapes, sizes and work (charged), then the values
 * of d_k, seed, init_std and scale. Returns 0, or -1 with p set. */
static int decode(api_call *call, void *req) {
    self_request *s = req;
    api_problem *p = &call->problem;
    const json_t *body = call->body;
    const api_fastpath *doc = call->doc;
    size_t max_elements = call->limits->max_elements;
    api_attention *a = &s->a;

    /* 1. unknown_field, missing_field (with the weights rule), types */
    if (api_attention_check_fields(doc, body, &schema, &params_rule, &s->given,
                                   p))
        return -1;
    /* 2. tensors in table order */
    int present_x = 0;
    if (api_field_tensor(&s->x, &present_x, doc, body, "x", &x_spec,
                         max_elements, p))
        return -1;
    for (int i = 0; i < N_PARAMS; i++)
        if (api_field_tensor(&s->P[i], &s->present[i], doc, body,
                             param_names[i], param_specs[i], max_elements, p))
            return -1;
    if (api_attention_decode_extras(a, doc, body, max_elements, p))
        return -1;

    /* 3. cross-field shapes: the weights against x, then valid_lens, the
     * masks (N, N) or (B, N, N) and (B, N), and grad_output against the
     * output (B, N, d_k) */
    a->batched = s->x.rank == 3;
    size_t o = a->batched ? 1 : 0;
    a->B = a->batched ? s->x.shape[0] : 1;
    a->Nq = a->Nk = s->x.shape[o];
    s->d_model = s->x.shape[o + 1];
    if (s->given && cross_params(s, p))
        return -1;
    int64_t d_k = 0;
    int dk_big = api_field_int(body, "d_k", 0, &d_k);
    int seed_big = api_field_int(body, "seed", NOTES_SEED, &s->seed);
    int dk_ok = !dk_big && d_k >= 1;
    s->d_k = s->given ? s->P[P_WQ].shape[1] : dk_ok ? (size_t)d_k : 1;
    a->dq = a->dk = a->dv = a->d_out = s->d_k;
    a->H = 1;
    if (api_attention_cross_lens(a, 0, p) ||
        api_attention_cross_masks(a, 0, p) ||
        ((s->given || dk_ok) && api_attention_cross_grad(a, p)))
        return -1;

    /* 4. derived sizes (output, weights; drawn weights) and work */
    size_t w[2] = {s->d_model, s->d_k};
    if (!s->given && dk_ok)
        for (int i = 0; i < N_PARAMS; i++)
            if (api_limit_elements(param_names[i], w, 2, max_elements, p))
                return -1;
    if (api_attention_check_sizes(a, max_elements, p))
        return -1;
    a->return_weights = api_field_bool(body, "return_weights", 1);
    s->trace = api_field_bool(body, "trace", 0);
    if (api_route_charge(call, s)) /* cost_self */
        return -1;

    /* 5. remaining values in table order, up to scale */
    return check_values(s, body, dk_ok, seed_big, p);
}

/* valid_lens as integers, in place, as api_attention_take converts them
 * (the range check is api_attention_check_lens). */
static void take_lens(api_attention *a, api_arena *arena) {
    a->lens_d = NULL;
    if (!a->has_lens)
        return;
    double *tmp = api_arena_take(arena, a->lens.count);
    api_tensor_read(tmp, &a->lens);
    a->lens_d = (int64_t *)(void *)tmp;
    for (size_t i = 0; i < a->lens.count; i++) {
        double x = tmp[i];
        a->lens_d[i] = x < 0               ? -1
                       : x > (double)a->Nk ? (int64_t)a->Nk + 1
                                           : (int64_t)x;
    }
}

/* Steps 6–7: the allocation carved (plan's order), x and grad_output
 * read, valid_lens and the mask, the output format, then the weights read
 * or drawn: np.random.seed(seed), np.random.randn(d_model, d_k) * init_std
 * for W_Q, W_K, W_V in turn. Returns 0, or -1 with p set and nothing
 * held. */
static int prepare(api_call *call, void *req) {
    self_request *s = req;
    api_problem *p = &call->problem;
    api_attention *a = &s->a;
    api_arena *arena = &s->arena;
    plan(s, arena);
    if (api_arena_alloc(arena))
        return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    s->xd = api_arena_take(arena, s->x.count);
    api_tensor_read(s->xd, &s->x);
    take_lens(a, arena);
    a->grad_out = NULL;
    if (a->has_grad) {
        a->grad_out = api_arena_take(arena, a->grad.count);
        api_tensor_read(a->grad_out, &a->grad);
    }
    api_masks_take(&a->masks, arena);
    for (int i = 0; i < N_PARAMS; i++)
        s->param[i] = api_arena_take(arena, weight_count(s));
    s->q = api_arena_take(arena, rows_k(s));
    s->k = api_arena_take(arena, rows_k(s));
    s->v = api_arena_take(arena, rows_k(s));
    a->out = api_arena_take(arena, rows_k(s));
    a->weights = api_arena_take(arena, rows_n(s));
    a->scores = NULL;
    if (s->trace) {
        for (int i = T_QK; i <= T_WEIGHTS; i++)
            s->t[i] = api_arena_take(arena, rows_n(s));
        s->t[T_WEIGHTED] = api_arena_take(arena, rows_k(s));
        s->t[T_Q] = s->q;
        s->t[T_K] = s->k;
        s->t[T_V] = s->v;
    }
    if (a->has_grad) {
        s->grad_x = api_arena_take(arena, s->x.count);
        for (int i = 0; i < N_PARAMS; i++)
            s->grad[i] = api_arena_take(arena, weight_count(s));
    }
    if (api_attention_check_lens(a, p) ||
        api_attention_read_mask(a, call->body, p) ||
        api_tensor_format_read(&a->fmt, call->body, p)) {
        api_arena_free(arena);
        return -1;
    }
    if (s->given) {
        for (int i = 0; i < N_PARAMS; i++)
            api_tensor_read(s->param[i], &s->P[i]);
    } else {
        attn_np_random rs;
        attn_np_seed(&rs, (uint32_t)s->seed);
        /* in even runs, which keep numpy's stream (the polar method's
         * pairs), with the time limit looked at between them */
        const size_t run = (size_t)1 << 20;
        for (int i = 0; i < N_PARAMS; i++)
            for (size_t at = 0; at < weight_count(s); at += run) {
                if (api_limit_time_is_up()) {
                    api_arena_free(arena);
                    return api_limit_deadline_passed(p);
                }
                size_t n =
                    weight_count(s) - at < run ? weight_count(s) - at : run;
                double *w = s->param[i] + at;
                attn_np_randn(&rs, w, n);
                for (size_t j = 0; j < n; j++)
                    w[j] *= s->init_std;
            }
    }
    return 0;
}

/* The trace's copies after the forward pass: scaled is the scores,
 * masked the same plus a float attn_mask with masked entries NaN (printed
 * null; attn_mask_apply's −∞), weights and weighted_values copies of the
 * answer's. */
static void fill_trace(self_request *s) {
    api_attention *a = &s->a;
    double *m = s->t[T_MASKED];
    /* the mask passed the forward pass's checks: this cannot fail */
    attn_mask_apply(m, s->t[T_SCALED], &a->mask, a->B, 1, a->Nq, a->Nq, NULL);
    for (size_t i = 0; i < rows_n(s); i++)
        if (m[i] == -INFINITY)
            m[i] = NAN;
    memcpy(s->t[T_WEIGHTS], a->weights, rows_n(s) * sizeof(double));
    memcpy(s->t[T_WEIGHTED], a->out, rows_k(s) * sizeof(double));
}

/* Step 8: forward, and backward with grad_output. */
static attn_status compute(void *req, attn_fault *fault) {
    self_request *s = req;
    api_attention *a = &s->a;
    double *const *w = s->param;
    attn_status st =
        attn_self_forward(a->out, a->weights, s->trace ? s->t[T_QK] : NULL,
                          s->trace ? s->t[T_SCALED] : NULL, s->q, s->k, s->v,
                          s->xd, w[P_WQ], w[P_WK], w[P_WV], &a->mask, s->scale,
                          a->B, a->Nq, s->d_model, s->d_k, fault);
    if (st == ATTN_OK && a->has_grad)
        st = attn_self_backward(
            s->grad_x, s->grad[P_WQ], s->grad[P_WK], s->grad[P_WV], a->grad_out,
            a->weights, s->xd, w[P_WQ], w[P_WK], w[P_WV], s->q, s->k, s->v,
            &a->mask, s->scale, a->B, a->Nq, s->d_model, s->d_k, fault);
    if (st == ATTN_OK && s->trace)
        fill_trace(s);
    return st;
}

/* Step 9: the typed result (result.h), which keeps the allocation. */
static void answer_result(api_call *call, void *req) {
    self_request *s = req;
    api_attention *a = &s->a;
    api_result *res = &call->result;
    api_attention_answer(a, res, &s->arena, "Self-attention weights");
    api_attention_answer_scale(a, res, s->scale);
    size_t wshape[2] = {s->d_model, s->d_k};
    if (!s->given)
        for (int i = 0; i < N_PARAMS; i++)
            api_result_tensor(res, param_answers[i], s->param[i], wshape, 2)
                ->fail_detail = "a drawn weight could not be printed";
    if (s->trace) {
        size_t o = a->batched ? 0 : 1;
        size_t sk[3] = {a->B, a->Nq, s->d_k}, sn[3] = {a->B, a->Nq, a->Nq};
        for (int i = 0; i < N_TRACE; i++) {
            int square = i >= T_QK && i <= T_WEIGHTS;
            api_result_item *t = api_result_tensor(
                res, trace_answers[i], s->t[i], (square ? sn : sk) + o, 3 - o);
            t->nan_as_null = i == T_MASKED;
        }
    }
    if (a->has_grad) {
        api_result_tensor(res, "grads.x", s->grad_x, s->x.shape, s->x.rank);
        for (int i = 0; i < N_PARAMS; i++)
            api_result_tensor(res, grad_answers[i], s->grad[i], wshape, 2);
    }
}

static int handle_self(api_call *call) {
    static const api_attention_steps steps = {decode, prepare, compute,
                                              answer_result};
    self_request s;
    return api_attention_handle(call, &steps, &s, sizeof s, &s.a, &s.arena);
}

#define ANSWER_TRACE "\"trace\": true"
#define ANSWER_DRAWN "d_k (and seed) instead of given W_Q, W_K, W_V"

/* The route table's entry (route.h). */
static const api_answer_field answer_fields[] = {
    {"output", 3, 0, 0, API_ANSWER_ALWAYS},
    {"weights", 3, 0, 0, API_ANSWER_WEIGHTS},
    {"scale", 0, 0, 0, API_ANSWER_ALWAYS},
    {"params.W_Q", 2, 0, 0, ANSWER_DRAWN},
    {"params.W_K", 2, 0, 0, ANSWER_DRAWN},
    {"params.W_V", 2, 0, 0, ANSWER_DRAWN},
    {"trace.Q", 3, 0, 0, ANSWER_TRACE},
    {"trace.K", 3, 0, 0, ANSWER_TRACE},
    {"trace.V", 3, 0, 0, ANSWER_TRACE},
    {"trace.QK", 3, 0, 0, ANSWER_TRACE},
    {"trace.scaled", 3, 0, 0, ANSWER_TRACE},
    {"trace.masked", 3, 0, 0, ANSWER_TRACE},
    {"trace.weights", 3, 0, 0, ANSWER_TRACE},
    {"trace.weighted_values", 3, 0, 0, ANSWER_TRACE},
    {"grads.x", 3, 0, 0, API_ANSWER_GRADS},
    {"grads.W_Q", 2, 0, 0, API_ANSWER_GRADS},
    {"grads.W_K", 2, 0, 0, API_ANSWER_GRADS},
    {"grads.W_V", 2, 0, 0, API_ANSWER_GRADS},
};

/* The members of the answer, which /grade grades. */
static const api_answer_table answer = API_ANSWER_TABLE(answer_fields);

const api_route api_route_self_attention = {
    .method = "POST",
    .path = "/attention/self",
    .handler = handle_self,
    .flags = API_ROUTE_JSON_BODY | API_ROUTE_VARY_ACCEPT | API_ROUTE_COMPUTES,
    .request = &schema,
    .answer = &answer,
    .cost = cost_self,
};
