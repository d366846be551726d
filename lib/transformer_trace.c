/*
 * transformer_trace.c — the intermediates of one multi-head attention
 * block for a Transformer trace, named as /attention/multihead's trace
 * names them (projections, heads, Q Kᵀ, weighted values, concatenation):
 * recomputed from the block's inputs, parameters and the weights the
 * forward pass kept, only when a trace is asked for.
 */
#include "attn_internal.h"
#include "transformer_internal.h"

#include <cblas.h>
#include <string.h>

/* X (B, n, E) -> heads (B, H, n, E/H): head t takes features t·dh … */
static void split_heads(double *heads, const double *X, size_t B, size_t n,
                        size_t E, size_t H) {
    const size_t dh = E / H;
    for (size_t b = 0; b < B; b++)
        for (size_t t = 0; t < H; t++)
            for (size_t i = 0; i < n; i++)
                memcpy(heads + ((b * H + t) * n + i) * dh,
                       X + (b * n + i) * E + t * dh, dh * sizeof(double));
}

attn_status attn_xf_attention_trace(double *Q, double *K, double *V,
                                    double *Q_heads, double *K_heads,
                                    double *V_heads, double *QK,
                                    double *weighted_values, double *concat,
                                    const double *q_in, const double *kv_in,
                                    const double *W_in, const double *b_in,
                                    const double *weights, size_t B, size_t Nq,
                                    size_t Nk, size_t E, size_t H) {
    if (!Q || !K || !V || !Q_heads || !K_heads || !V_heads || !QK ||
        !weighted_values || !concat || !q_in || !kv_in || !W_in || !b_in ||
        !weights || !B || !Nq || !Nk || !E || !H || E % H != 0)
        return ATTN_E_INVALID_ARG;
    size_t n;
    const size_t shapes[][4] = {{B, Nq, E, 8}, {B, Nk, E, 8}, {B, H, Nq, Nk}};
    for (size_t t = 0; t < 3; t++)
        if (attn_size_prod(&n, shapes[t], 4) != ATTN_OK ||
            attn_size_mul(&n, n, 8) != ATTN_OK)
            return ATTN_E_OVERFLOW;
    const size_t dims[] = {B * Nq, B * Nk, E};
    for (size_t t = 0; t < 3; t++)
        if (!attn_blas_dim_ok(dims[t]))
            return ATTN_E_OVERFLOW;
    const size_t dh = E / H;
    attn_xf_linear(Q, q_in, W_in, b_in, B * Nq, E, E);
    attn_xf_linear(K, kv_in, W_in + E * E, b_in + E, B * Nk, E, E);
    attn_xf_linear(V, kv_in, W_in + 2 * E * E, b_in + 2 * E, B * Nk, E, E);
    split_heads(Q_heads, Q, B, Nq, E, H);
    split_heads(K_heads, K, B, Nk, E, H);
    split_heads(V_heads, V, B, Nk, E, H);
    for (size_t bt = 0; bt < B * H; bt++) {
        const double *q = Q_heads + bt * Nq * dh, *k = K_heads + bt * Nk * dh;
        const double *v = V_heads + bt * Nk * dh;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)Nq, (int)Nk,
                    (int)dh, 1.0, q, (int)dh, k, (int)dh, 0.0,
                    QK + bt * Nq * Nk, (int)Nk);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)Nq, (int)dh,
                    (int)Nk, 1.0, weights + bt * Nq * Nk, (int)Nk, v, (int)dh,
                    0.0, weighted_values + bt * Nq * dh, (int)dh);
    }
    for (size_t b = 0; b < B; b++)
        for (size_t t = 0; t < H; t++)
            for (size_t i = 0; i < Nq; i++)
                memcpy(concat + (b * Nq + i) * E + t * dh,
                       weighted_values + ((b * H + t) * Nq + i) * dh,
                       dh * sizeof(double));
    return ATTN_OK;
}
