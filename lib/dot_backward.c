/*
 * dot_backward.c — gradients of scaled dot-product attention (d2l 11.3.2;
 * Vaswani et al. 2017): given the forward's inputs, its weights and dL/dO,
 * the four products of the backward pass go through cblas_dgemm per
 * example, around the masked softmax backward (softmax_backward.c).
 */
#include "attn_internal.h"
#include "backward_internal.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>

attn_status attn_dot_backward_workspace(size_t *bytes, size_t Nq, size_t Nk) {
    if (!bytes || Nq == 0 || Nk == 0)
        return ATTN_E_INVALID_ARG;
    /* dL/dS of one example, (Nq, Nk) */
    const size_t shape[] = {Nq, Nk, sizeof(double)};
    return attn_size_prod(bytes, shape, 3);
}

/* Arguments, sizes (overflow-checked) and the mask, before any work. */
static attn_status dot_backward_check(
    const double *grad_q, const double *grad_k, const double *grad_v,
    const double *grad_out, const double *weights, const double *q,
    const double *k, const double *v, const attn_mask *mask, double scale,
    size_t B, size_t Nq, size_t Nk, size_t d, size_t dv, attn_fault *fault) {
    attn_fault_clear(fault);
    if (!grad_q || !grad_k || !grad_v || !grad_out || !weights || !q || !k ||
        !v)
        return ATTN_E_INVALID_ARG;
    if (B == 0 || Nq == 0 || Nk == 0 || d == 0 || dv == 0)
        return ATTN_E_INVALID_ARG;
    if (!isfinite(scale) || !(scale > 0.0))
        return ATTN_E_INVALID_ARG;
    const size_t shapes[][4] = {{B, Nq, d, 8},
                                {B, Nk, d, 8},
                                {B, Nk, dv, 8},
                                {B, Nq, Nk, 8},
                                {B, Nq, dv, 8}};
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        size_t n;
        if (attn_size_prod(&n, shapes[t], 4) != ATTN_OK)
            return ATTN_E_OVERFLOW;
    }
    const size_t dims[] = {Nq, Nk, d, dv};
    for (size_t t = 0; t < sizeof dims / sizeof dims[0]; t++) {
        if (!attn_blas_dim_ok(dims[t]))
            return ATTN_E_OVERFLOW;
    }
    return attn_backward_check_mask(mask, B, Nq, Nk, fault);
}

attn_status attn_dot_backward(double *grad_q, double *grad_k, double *grad_v,
                              const double *grad_out, const double *weights,
                              const double *q, const double *k, const double *v,
                              const attn_mask *mask, double scale, size_t B,
                              size_t Nq, size_t Nk, size_t d, size_t dv,
                              attn_fault *fault) {
    attn_status st =
        dot_backward_check(grad_q, grad_k, grad_v, grad_out, weights, q, k, v,
                           mask, scale, B, Nq, Nk, d, dv, fault);
    if (st != ATTN_OK)
        return st;
    size_t bytes;
    attn_dot_backward_workspace(&bytes, Nq, Nk); /* checked above */
    double *dS = malloc(bytes);
    if (!dS)
        return ATTN_E_NOMEM;
    const int nq = (int)Nq, nk = (int)Nk, nd = (int)d, ndv = (int)dv;

    for (size_t b = 0; b < B; b++) {
        const double *W = weights + b * Nq * Nk;
        const double *dO = grad_out + b * Nq * dv;
        const double *Qb = q + b * Nq * d, *Kb = k + b * Nk * d;
        const double *Vb = v + b * Nk * dv;

        /* 1. forward "out_b = weights_b V_b":
         *    grad_v_b = weights_bᵀ dO_b (Nk, dv), dW = dO_b V_bᵀ (Nq, Nk).
         *    Masked weights are 0, so masked keys' values get nothing from
         *    the row; a "uniform" fully masked row passes 1/Nk of dO. */
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nk, ndv, nq, 1.0,
                    W, nk, dO, ndv, 0.0, grad_v + b * Nk * dv, ndv);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nq, nk, ndv, 1.0,
                    dO, ndv, Vb, ndv, 0.0, dS, nk);

        /* 2. forward "weights = masked_softmax(s)":
         *    dS = W ⊙ (dW − rowsum(dW ⊙ W)), 0 at masked keys and on fully
         *    masked rows (in place). */
        attn_softmax_backward_example(dS, dS, W, mask, b, Nq, Nk);

        /* 3. forward "s_b = Q_b K_bᵀ · scale":
         *    grad_q_b = scale · dS K_b (Nq, d),
         *    grad_k_b = scale · dSᵀ Q_b (Nk, d). */
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nq, nd, nk,
                    scale, dS, nk, Kb, nd, 0.0, grad_q + b * Nq * d, nd);
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nk, nd, nq, scale,
                    dS, nk, Qb, nd, 0.0, grad_k + b * Nk * d, nd);
    }
    free(dS);

    const double *g[] = {grad_q, grad_k, grad_v};
    const size_t n[] = {B * Nq * d, B * Nk * d, B * Nk * dv};
    return attn_grads_finite(g, n, 3, fault);
}
