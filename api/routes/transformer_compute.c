/*
 * transformer_compute.c — a Transformer request computed (step 8 of the
 * contract's order of checks): the positional encoding, the forward and
 * backward passes (lib/transformer.c), the trace's attention
 * intermediates, and a library failure turned into the contract's
 * problem, pointing at the mask row that empties a fully masked row.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "limit.h"
#include "pointer.h"
#include "transformer_steps.h"

/* The trace's attention intermediates of every layer, and "masked":
 * the scaled scores plus a float mask, the entries the masks hide as NaN
 * (printed null). */
static attn_status trace_attention(xf_request *m) {
    const attn_xf_config *c = &m->cfg;
    size_t nblocks = c->decoder ? 2 : 1;
    for (size_t k = 0; k < nblocks; k++) {
        const size_t Nk = k ? c->S_mem : c->N;
        const size_t rq = c->B * c->N * c->E, rk = c->B * Nk * c->E;
        const size_t qk = c->B * c->H * c->N * Nk;
        const attn_mask *mask = k ? &m->cross_mask : &m->self_mask;
        xf_trace_attn *t = &m->tr[k];
        for (size_t l = 0; l < c->L; l++) {
            const double *const *p =
                (const double *const *)m->param + l * ATTN_XF_N_PARAMS;
            const double *q = attn_xf_block_input(&m->tape, c, m->x0, l, k);
            const double *kv = k ? m->memd : q;
            /* PyTorch's packed in_proj (3E, E): rows W_q, W_k, W_v */
            const size_t E = c->E;
            const double *W_in = p[k ? ATTN_XF_CA_IN_W : ATTN_XF_SA_IN_W];
            const double *b_in = p[k ? ATTN_XF_CA_IN_B : ATTN_XF_SA_IN_B];
            const attn_multihead_params params = {
                .W_q = W_in,
                .W_k = W_in + E * E,
                .W_v = W_in + 2 * E * E,
                .b_q = b_in,
                .b_k = b_in + E,
                .b_v = b_in + 2 * E,
            };
            const attn_multihead_steps steps = {
                .Q = t->Q + l * rq,
                .K = t->K + l * rk,
                .V = t->V + l * rk,
                .Q_heads = t->Q_heads + l * rq,
                .K_heads = t->K_heads + l * rk,
                .V_heads = t->V_heads + l * rk,
                .QK = t->QK + l * qk,
                .weighted_values = t->wv + l * rq,
                .concat = t->concat + l * rq,
            };
            attn_status st = attn_multihead_trace(
                &steps, m->tape.weights[k] + l * qk, q, kv, kv, &params, c->B,
                c->N, Nk, E, E, E, E, c->H);
            if (st != ATTN_OK)
                return st;
            double *out = t->masked + l * qk;
            st = attn_mask_apply(out, m->tape.scores[k] + l * qk, mask, c->B,
                                 c->H, c->N, Nk, NULL);
            if (st != ATTN_OK)
                return st;
            for (size_t i = 0; i < qk; i++) /* hidden: −∞, printed null */
                if (out[i] == -INFINITY)
                    out[i] = NAN;
        }
    }
    return ATTN_OK;
}

/* transformer_steps.h. The backward pass goes through the encoding:
 * ∂(x·√E + P)/∂x = √E. */
attn_status api_xf_compute(api_call *call, xf_request *m, attn_fault *fault) {
    const attn_xf_config *c = &m->cfg;
    const size_t re = c->B * c->N * c->E;
    const double *const *params = (const double *const *)m->param;
    double t0 = api_clock_ms();
    attn_status st = ATTN_OK;
    if (m->pe)
        st = attn_xf_embed(m->x0, m->P, m->embedded, m->xd, c->B, c->N, c->E);
    if (st == ATTN_OK)
        st = attn_xf_forward(m->out, &m->tape, m->x0,
                             c->decoder ? m->memd : NULL, params, c,
                             &m->self_mask, &m->cross_mask, fault);
    if (st == ATTN_OK && m->has_grad) {
        st = attn_xf_backward(m->grad_x, c->decoder ? m->grad_mem : NULL,
                              m->gparam, m->grad_out, &m->tape, m->x0,
                              c->decoder ? m->memd : NULL, params, c,
                              &m->self_mask, &m->cross_mask, fault);
        if (st == ATTN_OK && m->pe) {
            const double scale = sqrt((double)c->E);
            for (size_t i = 0; i < re; i++)
                m->grad_x[i] *= scale;
        }
    }
    if (st == ATTN_OK && m->trace)
        st = trace_attention(m);
    call->compute_ms = api_clock_ms() - t0;
    return st;
}

/* A row that the masks leave without a key under fully_masked "error":
 * invalid_value at the key padding mask's row or the attn_mask's row of
 * the block whose mask empties it (the self-attention's when its mask
 * hides every key of the row, else the cross-attention's). */
static int fully_masked_problem(const xf_request *m, const attn_fault *fault,
                                api_problem *p) {
    const attn_xf_config *c = &m->cfg;
    const size_t b = fault->index / c->N, i = fault->index % c->N;
    const size_t t = fault->head;
    size_t k = 0;
    if (c->decoder) {
        int seen = 0;
        for (size_t j = 0; j < c->N && !seen; j++)
            seen = attn_mask_visible_head(&m->self_mask, b, t, c->H, i, j, c->N,
                                          c->N);
        k = seen ? 1 : 0;
    }
    const xf_masks *x = &m->masks[k];
    char who[96];
    if (m->batched)
        snprintf(who, sizeof who, "query %zu of example %zu, head %zu", i, b,
                 t);
    else
        snprintf(who, sizeof who, "query %zu, head %zu", i, t);
    const char *block = k ? "cross-attention" : "self-attention";
    api_pointer ptr;
    if (fault->by_mask == ATTN_BY_KEY_PADDING && x->m.has_kpm) {
        if (m->batched)
            api_tensor_row_pointer(&ptr, x->kpm_ptr, &x->m.kpm, b);
        else
            api_pointer_init(&ptr, x->kpm_ptr);
        return api_fail(p, API_E_INVALID_VALUE, ptr.s,
                        "%s sees no key in the %s: %s marks every key it may "
                        "see as padding, and fully_masked is \"error\"; use "
                        "\"zero\" or \"uniform\" to allow it",
                        who, block, x->kpm_spec->name);
    }
    if (x->m.has_amask) {
        size_t slab = x->m.layout == ATTN_MASK_PER_HEAD ? b * c->H + t : 0;
        size_t row = x->m.amask.rank == 3 ? slab * c->N + i : i;
        api_tensor_row_pointer(&ptr, x->mask_ptr, &x->m.amask, row);
        return api_fail(p, API_E_INVALID_VALUE, ptr.s,
                        "%s sees no key in the %s: %s%s leaves it none (%s) "
                        "and fully_masked is \"error\"; use \"zero\" or "
                        "\"uniform\" to allow it",
                        who, block, x->mask_spec->name,
                        x->m.has_kpm && !k && m->causal
                            ? " with causal and the key padding mask"
                        : x->m.has_kpm    ? " with the key padding mask"
                        : !k && m->causal ? " with causal"
                                          : "",
                        x->m.kind == API_MASK_BOOL ? "true = not allowed"
                                                   : "null = -infinity");
    }
    return api_fail(
        p, API_E_INVALID_VALUE, x->m.has_kpm ? x->kpm_ptr : "/causal",
        "%s sees no key in the %s and fully_masked is \"error\"", who, block);
}

/* transformer_steps.h */
int api_xf_fault_problem(const xf_request *m, attn_status st,
                         const attn_fault *fault, api_problem *p) {
    switch (st) {
    case ATTN_OK:
        return 0;
    case ATTN_E_FULLY_MASKED:
        return fully_masked_problem(m, fault, p);
    case ATTN_E_NONFINITE:
        return api_fail(p, API_E_INVALID_VALUE, NULL,
                        "the result is not finite (a value overflowed a "
                        "double in layer %zu); scale the inputs down",
                        fault->index);
    case ATTN_E_DEADLINE:
        return api_limit_deadline_passed(p);
    default:
        return api_fail(p, API_E_INTERNAL, NULL, "the Transformer failed: %s",
                        attn_status_str(st));
    }
}
