/*
 * trace.c — "trace": true, the forward pass's intermediates in the answer
 * (see trace.h; docs/trace.md).
 */
#include "trace.h"

#include <math.h>
#include <string.h>

#include "fields.h"
#include "limit.h"

/* What a trace value that cannot be printed fails with. */
static const char trace_nonfinite[] =
    "a trace value is not finite (an intermediate overflowed a double); "
    "ask without \"trace\" or scale the inputs down";

int api_trace_asked(const json_t *body) {
    return api_field_bool(body, "trace", 0);
}

void api_trace_init(api_trace *t, api_trace_route route, const json_t *body,
                    size_t h) {
    memset(t, 0, sizeof *t);
    t->on = api_trace_asked(body);
    t->route = route;
    t->h = route == API_TRACE_DOT ? 0 : h;
}

/* One tensor of a trace, batched: its name, shape, and where it lies —
 * a buffer of the trace (own: the api_trace member, planned here) or one
 * of the answer (shared: weights or output, counted again as text). */
typedef struct {
    const char *name;
    size_t shape[4];
    size_t rank;
    double **own;
    const double *shared;
} trace_tensor;

#define TRACE_TENSORS_MAX 13

typedef struct {
    trace_tensor t[TRACE_TENSORS_MAX];
    size_t n;
} trace_list;

static void add(trace_list *l, const char *name, double **own,
                const double *shared, size_t rank, size_t d0, size_t d1,
                size_t d2, size_t d3) {
    trace_tensor *x = &l->t[l->n++];
    x->name = name;
    x->rank = rank;
    x->shape[0] = d0;
    x->shape[1] = d1;
    x->shape[2] = d2;
    x->shape[3] = d3;
    x->own = own;
    x->shared = shared;
}

/* The trace's tensors in the answer's order (trace.h). The shared ones
 * point at a->weights and a->out (NULL before api_attention_take, which
 * only the answer needs). */
static void trace_tensors(api_trace *t, const api_attention *a, trace_list *l) {
    size_t B = a->B, Nq = a->Nq, Nk = a->Nk, H = a->H, h = t->h;
    size_t dh = H ? h / H : h; /* rounded down until H is checked */
    attn_multihead_steps *s = &t->steps;
    l->n = 0;
    switch (t->route) {
    case API_TRACE_DOT:
        add(l, "trace.QK", &t->QK, NULL, 3, B, Nq, Nk, 0);
        add(l, "trace.scaled", &t->scores, NULL, 3, B, Nq, Nk, 0);
        add(l, "trace.masked", &t->masked, NULL, 3, B, Nq, Nk, 0);
        add(l, "trace.weights", NULL, a->weights, 3, B, Nq, Nk, 0);
        add(l, "trace.weighted_values", NULL, a->out, 3, B, Nq, a->dv, 0);
        break;
    case API_TRACE_ADDITIVE:
        add(l, "trace.Q", &t->Q, NULL, 3, B, Nq, h, 0);
        add(l, "trace.K", &t->K, NULL, 3, B, Nk, h, 0);
        add(l, "trace.features", &t->features, NULL, 4, B, Nq, Nk, h);
        add(l, "trace.scores", &t->scores, NULL, 3, B, Nq, Nk, 0);
        add(l, "trace.masked", &t->masked, NULL, 3, B, Nq, Nk, 0);
        add(l, "trace.weights", NULL, a->weights, 3, B, Nq, Nk, 0);
        add(l, "trace.weighted_values", NULL, a->out, 3, B, Nq, a->dv, 0);
        break;
    case API_TRACE_MULTIHEAD:
        add(l, "trace.Q", &s->Q, NULL, 3, B, Nq, h, 0);
        add(l, "trace.K", &s->K, NULL, 3, B, Nk, h, 0);
        add(l, "trace.V", &s->V, NULL, 3, B, Nk, h, 0);
        add(l, "trace.Q_heads", &s->Q_heads, NULL, 4, B, H, Nq, dh);
        add(l, "trace.K_heads", &s->K_heads, NULL, 4, B, H, Nk, dh);
        add(l, "trace.V_heads", &s->V_heads, NULL, 4, B, H, Nk, dh);
        add(l, "trace.QK", &s->QK, NULL, 4, B, H, Nq, Nk);
        add(l, "trace.scaled", &t->scores, NULL, 4, B, H, Nq, Nk);
        add(l, "trace.masked", &t->masked, NULL, 4, B, H, Nq, Nk);
        add(l, "trace.weights", NULL, a->weights, 4, B, H, Nq, Nk);
        add(l, "trace.weighted_values", &s->weighted_values, NULL, 4, B, H, Nq,
            dh);
        add(l, "trace.concat", &s->concat, NULL, 3, B, Nq, h, 0);
        add(l, "trace.output", NULL, a->out, 3, B, Nq, a->d_out, 0);
        break;
    }
}

/* Entries of one trace tensor, saturating (sizes are checked first). */
static uint64_t entries(const trace_tensor *x) {
    return api_work_prod(x->shape, x->rank);
}

int api_trace_check_sizes(const api_trace *t, const api_attention *a,
                          size_t max_elements, api_problem *p) {
    if (!t->on)
        return 0;
    trace_list l;
    trace_tensors((api_trace *)t, a, &l);
    for (size_t i = 0; i < l.n; i++)
        if (api_limit_elements(l.t[i].name, l.t[i].shape, l.t[i].rank,
                               max_elements, p))
            return -1;
    return 0;
}

void api_trace_plan(const api_trace *t, const api_attention *a,
                    api_arena *arena) {
    if (!t->on)
        return;
    trace_list l;
    trace_tensors((api_trace *)t, a, &l);
    for (size_t i = 0; i < l.n; i++)
        if (l.t[i].own) {
            /* an overflowing product fails the plan (arena.h) */
            uint64_t n = entries(&l.t[i]);
            api_arena_plan(arena, n > SIZE_MAX ? SIZE_MAX : (size_t)n);
        }
}

void api_trace_take(api_trace *t, const api_attention *a, api_arena *arena) {
    if (!t->on)
        return;
    trace_list l;
    trace_tensors(t, a, &l);
    for (size_t i = 0; i < l.n; i++)
        if (l.t[i].own)
            *l.t[i].own = api_arena_take(arena, (size_t)entries(&l.t[i]));
}

/* Multiply-adds of the trace's own steps: the copies of the scores into
 * masked and of the heads, and the products the library makes again. */
static uint64_t trace_work(const api_trace *t, const api_attention *a) {
    size_t B = a->B, Nq = a->Nq, Nk = a->Nk, h = t->h;
    size_t scores[4] = {B, a->H, Nq, Nk};
    uint64_t work = api_work_prod(scores, 4); /* masked */
    switch (t->route) {
    case API_TRACE_DOT: { /* Q Kᵀ */
        size_t qk[4] = {B, Nq, Nk, a->dq};
        return api_work_add(work, api_work_prod(qk, 4));
    }
    case API_TRACE_ADDITIVE: { /* projections, features (tanh each) */
        uint64_t proj = api_work_mul(
            api_work_mul(B, h),
            api_work_add(api_work_mul(Nq, a->dq), api_work_mul(Nk, a->dk)));
        size_t f[4] = {B, Nq, Nk, h};
        uint64_t feat = api_work_mul(api_work_prod(f, 4), API_WORK_TANH);
        return api_work_add(work, api_work_add(proj, feat));
    }
    case API_TRACE_MULTIHEAD: { /* projections, Q'K'ᵀ and weights·V' per
                                   head, the heads split */
        uint64_t proj = api_work_mul(
            api_work_mul(B, h),
            api_work_add(api_work_mul(Nq, a->dq),
                         api_work_mul(Nk, api_work_add(a->dk, a->dv))));
        size_t heads[5] = {B, Nq, Nk, h, 2};
        uint64_t split = api_work_mul(api_work_mul(B, h),
                                      api_work_mul(2, api_work_add(Nq, Nk)));
        return api_work_add(
            work,
            api_work_add(api_work_add(proj, api_work_prod(heads, 5)), split));
    }
    }
    return work;
}

void api_trace_cost(const api_trace *t, const api_attention *a,
                    api_cost *cost) {
    if (!t->on)
        return;
    trace_list l;
    trace_tensors((api_trace *)t, a, &l);
    uint64_t shared = 0;
    for (size_t i = 0; i < l.n; i++)
        if (!l.t[i].own)
            shared = api_work_add(shared, entries(&l.t[i]));
    cost->answer_bytes = api_work_add(
        cost->answer_bytes, api_work_mul(shared, API_COST_NUMBER_TEXT));
    cost->ops = api_work_add(cost->ops, trace_work(t, a));
    size_t scratch = 0;
    if (t->route == API_TRACE_ADDITIVE &&
        attn_additive_trace_workspace(&scratch, a->B, a->Nq, a->Nk, t->h) !=
            ATTN_OK)
        scratch = SIZE_MAX;
    cost->working_bytes = api_work_add(cost->working_bytes, scratch);
}

uint64_t api_trace_answer_numbers(const api_trace *t, const api_attention *a) {
    if (!t->on)
        return 0;
    trace_list l;
    trace_tensors((api_trace *)t, a, &l);
    uint64_t n = 0;
    for (size_t i = 0; i < l.n; i++)
        n = api_work_add(n, entries(&l.t[i]));
    return n;
}

double *api_trace_scores(const api_trace *t, const api_attention *a) {
    return t->on ? t->scores : a->scores;
}

void api_trace_mask_scores(double *masked, const double *scores,
                           const attn_mask *mask, size_t B, size_t H, size_t Nq,
                           size_t Nk) {
    /* the scores plus a float attn_mask, −∞ where a mask hides the key
     * (head hd's slab b·H + hd of a per-head mask); the mask passed the
     * forward pass's checks, so this cannot fail */
    if (attn_mask_apply(masked, scores, mask, B, H, Nq, Nk, NULL) != ATTN_OK)
        return;
    const size_t n = B * H * Nq * Nk;
    for (size_t i = 0; i < n; i++)
        if (masked[i] == -INFINITY) /* hidden: printed null */
            masked[i] = NAN;
}

/* Steps every attention trace shares: the scores the forward wrote into
 * the trace, copied to a->scores when the answer (or its diagnostics)
 * wants them; the masked step. */
static void after_forward(api_trace *t, api_attention *a) {
    size_t n = a->B * a->H * a->Nq * a->Nk;
    if (a->scores)
        memcpy(a->scores, t->scores, n * sizeof(double));
    api_trace_mask_scores(t->masked, t->scores, &a->mask, a->B, a->H, a->Nq,
                          a->Nk);
}

attn_status api_trace_dot(api_trace *t, api_attention *a) {
    if (!t->on)
        return ATTN_OK;
    after_forward(t, a);
    return attn_dot_products(t->QK, a->qd, a->kd, a->B, a->Nq, a->Nk, a->dq);
}

attn_status api_trace_additive(api_trace *t, api_attention *a,
                               const double *W_q, const double *W_k) {
    if (!t->on)
        return ATTN_OK;
    after_forward(t, a);
    return attn_additive_trace(t->Q, t->K, t->features, a->qd, a->kd, W_q, W_k,
                               a->B, a->Nq, a->Nk, a->dq, a->dk, t->h);
}

attn_status api_trace_multihead(api_trace *t, api_attention *a,
                                const attn_multihead_params *params) {
    if (!t->on)
        return ATTN_OK;
    after_forward(t, a);
    return attn_multihead_trace(&t->steps, a->weights, a->qd, a->kd, a->vd,
                                params, a->B, a->Nq, a->Nk, a->dq, a->dk, a->dv,
                                t->h, a->H);
}

void api_trace_answer(const api_trace *t, const api_attention *a,
                      api_result *r) {
    if (!t->on)
        return;
    trace_list l;
    trace_tensors((api_trace *)t, a, &l);
    size_t o = a->batched ? 0 : 1; /* unbatched drops the batch axis */
    for (size_t i = 0; i < l.n; i++) {
        const trace_tensor *x = &l.t[i];
        const double *data = x->own ? *x->own : x->shared;
        api_result_item *it =
            api_result_tensor(r, x->name, data, x->shape + o, x->rank - o);
        it->nan_as_null = !strcmp(x->name, "trace.masked");
        it->fail_detail = trace_nonfinite;
    }
}

/* ------------------------------------------------------------------ NW */

void api_trace_nw_plan(int on, size_t m, size_t n, api_arena *arena) {
    if (!on)
        return;
    api_arena_plan(arena, m * n);
    api_arena_plan(arena, m * n);
}

void api_trace_nw_cost(int on, size_t m, size_t n, size_t dv, api_cost *cost) {
    if (!on)
        return;
    uint64_t mn = api_work_mul(m, n);
    uint64_t shared = api_work_add(mn, api_work_mul(m, dv));
    cost->answer_bytes = api_work_add(
        cost->answer_bytes, api_work_mul(shared, API_COST_NUMBER_TEXT));
    cost->ops = api_work_add(cost->ops, api_work_mul(mn, 3));
}

void api_trace_nw_take(api_trace_nw *t, size_t m, size_t n, api_arena *arena) {
    if (!t->on)
        return;
    t->distances = api_arena_take(arena, m * n);
    t->scores = api_arena_take(arena, m * n);
}

void api_trace_nw_answer(const api_trace_nw *t, api_result *r,
                         const double *weights, const double *pred, size_t m,
                         size_t n, const size_t *pred_shape, size_t pred_rank) {
    if (!t->on)
        return;
    size_t sw[2] = {m, n};
    /* a Gaussian score below −DBL_MAX prints as null, as masked scores */
    for (size_t i = 0; i < m * n; i++)
        if (t->scores[i] == -INFINITY)
            t->scores[i] = NAN;
    api_result_tensor(r, "trace.distances", t->distances, sw, 2)->fail_detail =
        "a trace distance is not finite (a query and a training point are "
        "more than the largest double apart); ask without \"trace\"";
    api_result_item *s = api_result_tensor(r, "trace.scores", t->scores, sw, 2);
    s->nan_as_null = 1;
    s->fail_detail = trace_nonfinite;
    api_result_tensor(r, "trace.weights", weights, sw, 2);
    api_result_tensor(r, "trace.predictions", pred, pred_shape, pred_rank);
}
