/*
 * transformer_alloc.c — a Transformer request's one allocation (steps
 * 6–7 of the contract's order of checks): its plan, which the cost
 * function charges before anything is held (api_xf_cost), then the
 * buffers carved from it, the parameter tables, and the inputs and
 * parameters read or drawn.
 */
#include <stdio.h>
#include <string.h>

#include "cost.h"
#include "grads.h"
#include "limit.h"
#include "transformer.h"
#include "transformer_steps.h"

/* Slots of n bytes. */
static size_t slots_of(size_t bytes) {
    return (bytes + 7) / 8;
}

/* Entries of parameter t. */
static size_t param_count(const attn_xf_config *c, attn_xf_param t) {
    size_t dims[2], rank;
    attn_xf_param_shape(t, c->E, c->F, dims, &rank);
    return dims[0] * dims[1];
}

/* Entries of one layer's parameters. */
static size_t layer_params(const attn_xf_config *c) {
    size_t n = 0;
    for (int t = 0; t < ATTN_XF_N_PARAMS; t++)
        if (attn_xf_param_used((attn_xf_param)t, c->decoder))
            n += param_count(c, (attn_xf_param)t);
    return n;
}

/* Slots of one attention block's trace buffers (Nk keys). */
static void plan_trace_attn(api_arena *a, const attn_xf_config *c, size_t Nk) {
    size_t L = c->L, rq = c->L * c->B * c->N * c->E;
    size_t rk = L * c->B * Nk * c->E, qk = L * c->B * c->H * c->N * Nk;
    const size_t n[10] = {rq, rk, rk, rq, rk, rk, qk, qk, rq, rq};
    for (size_t i = 0; i < 10; i++)
        api_arena_plan(a, n[i]);
}

/* The request's one allocation, inputs first (cost.h): src or tgt,
 * memory, grad_output, given parameters; then the drawn parameters, the
 * gradients, the parameter tables, the encoded input, output, tape,
 * input gradients, trace buffers and the answer's member tables and keys.
 * Returns the input slots. */
static size_t plan(const xf_request *m, api_arena *a, size_t tape_doubles) {
    const attn_xf_config *c = &m->cfg;
    const size_t re = c->B * c->N * c->E, rm = c->B * c->S_mem * c->E;
    const size_t params = c->L * layer_params(c);
    const size_t tables = c->L * ATTN_XF_N_PARAMS;
    api_arena_plan(a, re);
    api_arena_plan(a, rm);
    api_arena_plan(a, m->has_grad ? re : 0);
    api_arena_plan(a, m->given ? params : 0);
    api_masks_plan(&m->masks[0].m, a);
    api_masks_plan(&m->masks[1].m, a);
    size_t inputs = a->slots;
    api_arena_plan(a, m->given ? 0 : params);
    api_arena_plan(a, m->has_grad ? params : 0);
    api_arena_plan(a, tables);
    api_arena_plan(a, tables);
    api_arena_plan(a, m->pe ? re : 0);
    api_arena_plan(a, m->pe ? c->N * c->E : 0);
    api_arena_plan(a, m->pe && m->trace ? re : 0);
    api_arena_plan(a, re);
    api_arena_plan(a, tape_doubles);
    api_arena_plan(a, m->has_grad ? re : 0);
    api_arena_plan(a, m->has_grad ? rm : 0);
    if (m->trace) {
        plan_trace_attn(a, c, c->N);
        if (c->decoder)
            plan_trace_attn(a, c, c->S_mem);
    }
    size_t member = slots_of(sizeof(api_result_member));
    size_t keys = c->L * m->n_used;
    api_arena_plan(a, m->given ? 0 : keys * member);
    api_arena_plan(a, m->has_grad ? keys * member : 0);
    api_arena_plan(a, m->trace ? TRACE_MEMBERS_MAX * member : 0);
    api_arena_plan(a, keys * slots_of(KEY_MAX));
    return inputs;
}

/* Multiply-adds of one forward pass: per layer, the self-attention's
 * four projections and heads, the cross-attention's, the feed-forward
 * network, about ten per entry for each norm and residual, an erf per
 * hidden entry for GELU; the positional encoding's sines. */
static uint64_t forward_work(const attn_xf_config *c, int pe) {
    uint64_t R = api_work_mul(c->B, c->N), E = c->E;
    uint64_t RE2 = api_work_mul(R, api_work_mul(E, E));
    uint64_t self_heads = api_work_mul(api_work_mul(R, c->N), 2 * E);
    uint64_t layer = api_work_add(api_work_mul(RE2, 4), self_heads);
    if (c->decoder) {
        uint64_t Rm = api_work_mul(c->B, c->S_mem);
        uint64_t kv = api_work_mul(Rm, api_work_mul(E, E));
        uint64_t heads = api_work_mul(api_work_mul(R, c->S_mem), 2 * E);
        layer = api_work_add(layer, api_work_mul(RE2, 2));
        layer = api_work_add(layer, api_work_add(api_work_mul(kv, 2), heads));
    }
    uint64_t RF = api_work_mul(R, c->F);
    layer = api_work_add(layer, api_work_mul(api_work_mul(RF, E), 2));
    if (c->activation == ATTN_ACTIVATION_GELU)
        layer = api_work_add(layer, api_work_mul(RF, API_WORK_EXP));
    layer = api_work_add(
        layer, api_work_mul(api_work_mul(R, E), 10 * (c->decoder ? 3 : 2)));
    uint64_t work = api_work_mul(layer, c->L);
    if (pe)
        work = api_work_add(work,
                            api_work_mul(api_work_mul(c->N, E), API_WORK_EXP));
    return work;
}

/* transformer.h */
void api_xf_cost(const api_call *call, const void *shapes, api_cost *cost) {
    (void)call;
    const xf_request *m = shapes;
    size_t tape = 0, ws = 0;
    attn_xf_tape_size(&tape, &m->cfg);
    attn_xf_workspace(&ws, &m->cfg);
    api_arena arena = {0};
    size_t inputs = plan(m, &arena, tape);
    uint64_t work = api_grads_work(forward_work(&m->cfg, m->pe), m->has_grad);
    if (m->trace) /* the attention intermediates recomputed */
        work = api_work_add(work, forward_work(&m->cfg, 0));
    if (!m->given) /* the parameters drawn from the seed */
        work = api_work_add(
            work, api_work_mul(api_work_mul(layer_params(&m->cfg), m->cfg.L),
                               API_WORK_DRAW));
    api_cost_of_plan(cost, inputs, &arena, work);
    /* the library's own scratch (multi-head attention's, the backward's) */
    cost->working_bytes = api_work_add(cost->working_bytes, ws);
}

/* Carve one attention block's trace buffers. */
static void take_trace_attn(xf_trace_attn *t, api_arena *a,
                            const attn_xf_config *c, size_t Nk) {
    size_t L = c->L, rq = c->L * c->B * c->N * c->E;
    size_t rk = L * c->B * Nk * c->E, qk = L * c->B * c->H * c->N * Nk;
    t->Q = api_arena_take(a, rq);
    t->K = api_arena_take(a, rk);
    t->V = api_arena_take(a, rk);
    t->Q_heads = api_arena_take(a, rq);
    t->K_heads = api_arena_take(a, rk);
    t->V_heads = api_arena_take(a, rk);
    t->QK = api_arena_take(a, qk);
    t->masked = api_arena_take(a, qk);
    t->wv = api_arena_take(a, rq);
    t->concat = api_arena_take(a, rq);
}

/* Carve the planned buffers in plan's order; *params and *grads get the
 * blocks of the parameters and of their gradients (fill_tables points
 * the tables into them). */
static void carve(xf_request *m, size_t tape, double **params, double **grads) {
    const attn_xf_config *c = &m->cfg;
    const size_t re = c->B * c->N * c->E, rm = c->B * c->S_mem * c->E;
    const size_t tables = c->L * ATTN_XF_N_PARAMS;
    api_arena *a = &m->arena;
    m->xd = api_arena_take(a, re);
    m->memd = api_arena_take(a, rm);
    m->grad_out = api_arena_take(a, m->has_grad ? re : 0);
    double *given = api_arena_take(a, m->given ? c->L * layer_params(c) : 0);
    api_masks_take(&m->masks[0].m, a);
    api_masks_take(&m->masks[1].m, a);
    *params = m->given ? given : api_arena_take(a, c->L * layer_params(c));
    *grads = api_arena_take(a, m->has_grad ? c->L * layer_params(c) : 0);
    m->param = api_arena_take(a, tables);
    m->gparam = api_arena_take(a, tables);
    m->x0 = m->pe ? api_arena_take(a, re) : m->xd;
    m->P = api_arena_take(a, m->pe ? c->N * c->E : 0);
    m->embedded = api_arena_take(a, m->pe && m->trace ? re : 0);
    m->out = api_arena_take(a, re);
    m->tape_buf = api_arena_take(a, tape);
    m->grad_x = api_arena_take(a, m->has_grad ? re : 0);
    m->grad_mem = api_arena_take(a, m->has_grad ? rm : 0);
    if (m->trace) {
        take_trace_attn(&m->tr[0], a, c, c->N);
        if (c->decoder)
            take_trace_attn(&m->tr[1], a, c, c->S_mem);
    }
    size_t member = slots_of(sizeof(api_result_member)),
           keys = c->L * m->n_used;
    m->sd_members = api_arena_take(a, m->given ? 0 : keys * member);
    m->grad_members = api_arena_take(a, m->has_grad ? keys * member : 0);
    m->trace_members =
        api_arena_take(a, m->trace ? TRACE_MEMBERS_MAX * member : 0);
    m->key_text = api_arena_take(a, keys * slots_of(KEY_MAX));
    attn_xf_tape_layout(&m->tape, m->tape_buf, c);
}

/* The parameter tables: params[l][t] and their gradients (NULL for a
 * parameter the route's layers lack), and each used one's key. */
static void fill_tables(xf_request *m, double *params, double *grads) {
    const attn_xf_config *c = &m->cfg;
    size_t at = 0, k = 0;
    for (size_t l = 0; l < c->L; l++)
        for (int t = 0; t < ATTN_XF_N_PARAMS; t++) {
            size_t i = l * ATTN_XF_N_PARAMS + (size_t)t;
            m->param[i] = m->gparam[i] = NULL;
            if (!attn_xf_param_used((attn_xf_param)t, c->decoder))
                continue;
            m->param[i] = params + at;
            m->gparam[i] = grads ? grads + at : NULL;
            at += param_count(c, (attn_xf_param)t);
            snprintf(m->key_text + k * KEY_MAX, KEY_MAX, "layers.%zu.%s", l,
                     api_xf_param_suffix[t]);
            k++;
        }
}

/* The inputs read: the input, memory, grad_output, the parameters given
 * or drawn (attn_xf_init from seed). Returns ATTN_OK, or ATTN_E_DEADLINE
 * when the time limit passed while drawing. */
static attn_status read_inputs(xf_request *m) {
    const attn_xf_config *c = &m->cfg;
    api_tensor_read(m->xd, &m->x);
    if (c->decoder)
        api_tensor_read(m->memd, &m->mem);
    if (m->has_grad)
        api_tensor_read(m->grad_out, &m->grad);
    if (m->given) {
        for (size_t i = 0; i < m->n_keys; i++) {
            const xf_key *key = &m->keys[i];
            api_tensor_read(
                m->param[key->layer * ATTN_XF_N_PARAMS + key->param], &key->t);
        }
        return ATTN_OK;
    }
    attn_rng rng;
    attn_rng_seed(&rng, (uint64_t)m->seed);
    return attn_xf_init(m->param, &rng, c);
}

/* transformer_steps.h */
int api_xf_prepare(api_call *call, xf_request *m) {
    size_t tape = 0;
    attn_xf_tape_size(&tape, &m->cfg);
    plan(m, &m->arena, tape);
    if (api_arena_alloc(&m->arena))
        return api_fail(&call->problem, API_E_INTERNAL, NULL, "out of memory");
    double *params, *grads;
    carve(m, tape, &params, &grads);
    fill_tables(m, params, grads);
    attn_status st = read_inputs(m);
    if (st == ATTN_E_DEADLINE)
        return api_limit_deadline_passed(&call->problem);
    if (st != ATTN_OK)
        return api_fail(&call->problem, API_E_INTERNAL, NULL,
                        "the parameters could not be drawn (%s)",
                        attn_status_str(st));
    api_call_inputs_read(call);
    memset(&m->self_mask, 0, sizeof m->self_mask);
    memset(&m->cross_mask, 0, sizeof m->cross_mask);
    m->self_mask.causal = m->causal ? ATTN_CAUSAL_TOP_LEFT : ATTN_CAUSAL_NONE;
    m->self_mask.fully_masked = m->fully_masked;
    m->cross_mask.fully_masked = m->fully_masked;
    api_masks_set(&m->self_mask, &m->masks[0].m);
    api_masks_set(&m->cross_mask, &m->masks[1].m);
    return 0;
}
