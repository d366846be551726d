/*
 * self_attention.c — the seed note's single-head self-attention (note 2,
 * section 4.6, "self_attention(x, d_k)"; d2l 11.6 "Self-Attention"):
 * Q = x W_Q, K = x W_K, V = x W_V with the weights in (in, out) layout,
 * then scaled dot-product attention of Q, K, V (attn_dot_forward), and its
 * backward: attn_dot_backward, then the projections' chain rule.
 */
#include "attn_internal.h"
#include "backward_internal.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>

/* Arguments and sizes (overflow-checked, BLAS's int), before any work. */
static attn_status self_check(const double *x, const double *W_Q,
                              const double *W_K, const double *W_V, size_t B,
                              size_t N, size_t d_model, size_t d_k) {
    if (!x || !W_Q || !W_K || !W_V)
        return ATTN_E_INVALID_ARG;
    if (B == 0 || N == 0 || d_model == 0 || d_k == 0)
        return ATTN_E_INVALID_ARG;
    const size_t shapes[][3] = {
        {B, N, d_model}, {B, N, d_k}, {B, N, N}, {d_model, d_k, 1}};
    size_t rows;
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        size_t n;
        if (attn_size_prod(&n, shapes[t], 3) != ATTN_OK)
            return ATTN_E_OVERFLOW;
    }
    if (attn_size_mul(&rows, B, N) != ATTN_OK || !attn_blas_dim_ok(rows) ||
        !attn_blas_dim_ok(d_model) || !attn_blas_dim_ok(d_k))
        return ATTN_E_OVERFLOW;
    return ATTN_OK;
}

attn_status attn_self_forward(double *out, double *weights, double *qk,
                              double *scores, double *q, double *k, double *v,
                              const double *x, const double *W_Q,
                              const double *W_K, const double *W_V,
                              const attn_mask *mask, double scale, size_t B,
                              size_t N, size_t d_model, size_t d_k,
                              attn_fault *fault) {
    attn_fault_clear(fault);
    attn_status st = self_check(x, W_Q, W_K, W_V, B, N, d_model, d_k);
    if (st != ATTN_OK)
        return st;
    if (!out || !weights || !q || !k || !v)
        return ATTN_E_INVALID_ARG;
    if (!isfinite(scale) || !(scale > 0.0))
        return ATTN_E_INVALID_ARG;
    st = attn_mask_check(mask, B, N, N, fault);
    if (st != ATTN_OK)
        return st;
    const int rows = (int)(B * N), dm = (int)d_model, dk = (int)d_k;

    /* 1. the projections, all B·N rows of x at once: x (B·N, d_model) times
     *    W (d_model, d_k), the note's "x @ W_Q" */
    const double *W[3] = {W_Q, W_K, W_V};
    double *P[3] = {q, k, v};
    for (int t = 0; t < 3; t++) {
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, dk, dm,
                    1.0, x, dm, W[t], dk, 0.0, P[t], dk);
        st = attn_check_finite(P[t], B * N * d_k, NULL);
        if (st != ATTN_OK)
            return st;
    }

    /* 2. the unscaled Q Kᵀ, for a caller that shows it (the trace) */
    for (size_t b = 0; qk && b < B; b++)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)N, (int)N, dk,
                    1.0, q + b * N * d_k, dk, k + b * N * d_k, dk, 0.0,
                    qk + b * N * N, (int)N);

    /* 3. softmax(mask(Q Kᵀ · scale)) V */
    return attn_dot_forward(out, weights, scores, q, k, v, mask, scale, B, N, N,
                            d_k, d_k, fault);
}

attn_status attn_self_backward_workspace(size_t *bytes, size_t B, size_t N,
                                         size_t d_k) {
    if (!bytes || B == 0 || N == 0 || d_k == 0)
        return ATTN_E_INVALID_ARG;
    /* dL/dQ, dL/dK, dL/dV, (B, N, d_k) each */
    const size_t shape[] = {3, B, N, d_k, sizeof(double)};
    return attn_size_prod(bytes, shape, 5);
}

attn_status attn_self_backward(
    double *grad_x, double *grad_W_Q, double *grad_W_K, double *grad_W_V,
    const double *grad_out, const double *weights, const double *x,
    const double *W_Q, const double *W_K, const double *W_V, const double *q,
    const double *k, const double *v, const attn_mask *mask, double scale,
    size_t B, size_t N, size_t d_model, size_t d_k, attn_fault *fault) {
    attn_fault_clear(fault);
    attn_status st = self_check(x, W_Q, W_K, W_V, B, N, d_model, d_k);
    if (st != ATTN_OK)
        return st;
    if (!grad_x || !grad_W_Q || !grad_W_K || !grad_W_V || !grad_out ||
        !weights || !q || !k || !v)
        return ATTN_E_INVALID_ARG;
    size_t bytes;
    st = attn_self_backward_workspace(&bytes, B, N, d_k);
    if (st != ATTN_OK)
        return st;
    double *dQ = malloc(bytes);
    if (!dQ)
        return ATTN_E_NOMEM;
    size_t n = B * N * d_k;
    double *dK = dQ + n, *dV = dK + n;

    /* 1. through the attention: dL/dQ, dL/dK, dL/dV (dot_backward.c) */
    st = attn_dot_backward(dQ, dK, dV, grad_out, weights, q, k, v, mask, scale,
                           B, N, N, d_k, d_k, fault);
    if (st != ATTN_OK) {
        free(dQ);
        return st;
    }

    /* 2. through "Q = x W_Q" (and K, V), over all B·N rows:
     *    dL/dW_Q = xᵀ dQ (d_model, d_k),
     *    dL/dx = dQ W_Qᵀ + dK W_Kᵀ + dV W_Vᵀ (B·N, d_model) */
    const int rows = (int)(B * N), dm = (int)d_model, dk = (int)d_k;
    const double *W[3] = {W_Q, W_K, W_V}, *G[3] = {dQ, dK, dV};
    double *gW[3] = {grad_W_Q, grad_W_K, grad_W_V};
    for (int t = 0; t < 3; t++) {
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, dm, dk, rows, 1.0,
                    x, dm, G[t], dk, 0.0, gW[t], dk);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, dm, dk, 1.0,
                    G[t], dk, W[t], dk, t == 0 ? 0.0 : 1.0, grad_x, dm);
    }
    free(dQ);

    const double *g[] = {grad_x, grad_W_Q, grad_W_K, grad_W_V};
    const size_t counts[] = {B * N * d_model, d_model * d_k, d_model * d_k,
                             d_model * d_k};
    return attn_grads_finite(g, counts, 4, fault);
}
