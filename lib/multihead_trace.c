/*
 * multihead_trace.c — the intermediates of multi-head attention (d2l 11.5;
 * Vaswani et al. 2017; PyTorch nn.MultiheadAttention) that
 * attn_multihead_forward keeps in its scratch: the projections, the
 * heads, each head's unscaled Q'K'ᵀ, each head's weighted values and
 * their concatenation. Each is made by the very BLAS calls the forward
 * pass makes (the same products of the same operands, rows and strides),
 * so the trace holds the doubles the answer was computed from; the
 * scores, weights and output themselves are the forward's.
 */
#include "attn_internal.h"

#include <cblas.h>
#include <string.h>

void attn_heads_split(double *heads, const double *x, size_t B, size_t N,
                      size_t h, size_t H) {
    size_t dh = h / H;
    for (size_t b = 0; b < B; b++)
        for (size_t t = 0; t < H; t++)
            for (size_t i = 0; i < N; i++)
                memcpy(heads + ((b * H + t) * N + i) * dh,
                       x + (b * N + i) * h + t * dh, dh * sizeof(double));
}

attn_status attn_multihead_trace(const attn_multihead_steps *t,
                                 const double *weights, const double *q,
                                 const double *k, const double *v,
                                 const attn_multihead_params *params, size_t B,
                                 size_t Nq, size_t Nk, size_t dq, size_t dk,
                                 size_t dv, size_t h, size_t H) {
    if (!t || !t->Q || !t->K || !t->V || !t->Q_heads || !t->K_heads ||
        !t->V_heads || !t->QK || !t->weighted_values || !t->concat ||
        !weights || !q || !k || !v || !params || !params->W_q || !params->W_k ||
        !params->W_v)
        return ATTN_E_INVALID_ARG;
    if (!B || !Nq || !Nk || !dq || !dk || !dv || !h || !H || h % H != 0)
        return ATTN_E_INVALID_ARG;
    const size_t shapes[][4] = {{B, Nq, dq, 1}, {B, Nk, dk, 1}, {B, Nk, dv, 1},
                                {B, Nq, h, 1},  {B, Nk, h, 1},  {B, H, Nq, Nk}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        size_t n;
        if (attn_size_prod(&n, shapes[i], 4) != ATTN_OK)
            return ATTN_E_OVERFLOW;
    }
    const size_t dims[] = {Nq, Nk, dq, dk, dv, h};
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        if (!attn_blas_dim_ok(dims[i]))
            return ATTN_E_OVERFLOW;
    const size_t dh = h / H;

    /* 1. Q' = q·W_qᵀ + b_q, K' = k·W_kᵀ + b_k, V' = v·W_vᵀ + b_v */
    attn_multihead_project(t->Q, q, params->W_q, params->b_q, B * Nq, dq, h);
    attn_multihead_project(t->K, k, params->W_k, params->b_k, B * Nk, dk, h);
    attn_multihead_project(t->V, v, params->W_v, params->b_v, B * Nk, dv, h);

    for (size_t b = 0; b < B; b++) {
        if (attn_deadline_passed())
            return ATTN_E_DEADLINE;
        const double *Qb = t->Q + b * Nq * h;
        const double *Kb = t->K + b * Nk * h;
        const double *Vb = t->V + b * Nk * h;
        double *Cb = t->concat + b * Nq * h;
        for (size_t hd = 0; hd < H; hd++) {
            size_t slab = (b * H + hd) * Nq * Nk;
            /* 2. Q'_hd K'_hdᵀ over the head's columns, unscaled (the
             *    forward multiplies by the scale in the same product) */
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)Nq,
                        (int)Nk, (int)dh, 1.0, Qb + hd * dh, (int)h,
                        Kb + hd * dh, (int)h, 0.0, t->QK + slab, (int)Nk);
            /* 4. weights·V'_hd into the head's columns of concat: the
             *    forward's step 4, the same call */
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)Nq,
                        (int)dh, (int)Nk, 1.0, weights + slab, (int)Nk,
                        Vb + hd * dh, (int)h, 0.0, Cb + hd * dh, (int)h);
        }
    }

    /* the heads: contiguous column blocks of the projections and of the
     * concatenation, laid out head by head */
    attn_heads_split(t->Q_heads, t->Q, B, Nq, h, H);
    attn_heads_split(t->K_heads, t->K, B, Nk, h, H);
    attn_heads_split(t->V_heads, t->V, B, Nk, h, H);
    attn_heads_split(t->weighted_values, t->concat, B, Nq, h, H);
    return ATTN_OK;
}
