/*
 * additive_backward.c — gradients of additive (Bahdanau) attention (d2l
 * 11.3.3; Bahdanau, Cho & Bengio 2014). Memory stays bounded like the
 * forward pass: the (B, Nq, Nk, h) features are never stored; each pair
 * (b, i, j) recomputes tanh and adds its share into the gradients of the
 * projected queries (B·Nq, h) and keys (B·Nk, h), which then go back
 * through W_q and W_k with cblas_dgemm.
 */
#include "attn_internal.h"
#include "backward_internal.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Features of one (query, key) pair tanh'd at once, on the stack. */
#define TANH_CHUNK 256

attn_status attn_additive_backward_workspace(size_t *bytes, size_t B, size_t Nq,
                                             size_t Nk, size_t h) {
    if (!bytes || B == 0 || Nq == 0 || Nk == 0 || h == 0)
        return ATTN_E_INVALID_ARG;
    /* projected queries and keys, (B·Nq + B·Nk, h), their gradients of the
     * same size, and dL/dS of one example, (Nq, Nk) */
    size_t nq, nk, rows, proj, ds, doubles;
    if (attn_size_mul(&nq, B, Nq) != ATTN_OK ||
        attn_size_mul(&nk, B, Nk) != ATTN_OK ||
        attn_size_add(&rows, nq, nk) != ATTN_OK ||
        attn_size_mul(&proj, rows, h) != ATTN_OK ||
        attn_size_mul(&proj, proj, 2) != ATTN_OK ||
        attn_size_mul(&ds, Nq, Nk) != ATTN_OK ||
        attn_size_add(&doubles, proj, ds) != ATTN_OK ||
        attn_size_mul(bytes, doubles, sizeof(double)) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    return ATTN_OK;
}

/* Arguments, sizes (overflow-checked) and the mask, before any work. */
static attn_status
additive_backward_check(const double *const *bufs, size_t nbufs, size_t B,
                        size_t Nq, size_t Nk, size_t dq, size_t dk, size_t dv,
                        size_t h, const attn_mask *mask, attn_fault *fault) {
    attn_fault_clear(fault);
    for (size_t t = 0; t < nbufs; t++) {
        if (!bufs[t])
            return ATTN_E_INVALID_ARG;
    }
    if (B == 0 || Nq == 0 || Nk == 0 || dq == 0 || dk == 0 || dv == 0 || h == 0)
        return ATTN_E_INVALID_ARG;
    const size_t shapes[][4] = {{B, Nq, dq, 8}, {B, Nk, dk, 8}, {B, Nk, dv, 8},
                                {h, dq, 8, 1},  {h, dk, 8, 1},  {B, Nq, Nk, 8},
                                {B, Nq, dv, 8}};
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        size_t n;
        if (attn_size_prod(&n, shapes[t], 4) != ATTN_OK)
            return ATTN_E_OVERFLOW;
    }
    size_t bytes;
    attn_status st = attn_additive_backward_workspace(&bytes, B, Nq, Nk, h);
    if (st != ATTN_OK)
        return st;
    const size_t dims[] = {B * Nq, B * Nk, Nq, Nk, dq, dk, dv, h};
    for (size_t t = 0; t < sizeof dims / sizeof dims[0]; t++) {
        if (!attn_blas_dim_ok(dims[t]))
            return ATTN_E_OVERFLOW;
    }
    return attn_backward_check_mask(mask, B, Nq, Nk, fault);
}

/* Back through a projection y = x·Wᵀ (x: (rows, din), W: (h, din)) given
 * dy (rows, h): grad_x = dy·W (rows, din), grad_W = dyᵀ·x (h, din). */
static void projection_backward(double *grad_x, double *grad_W,
                                const double *dy, const double *x,
                                const double *W, size_t rows, size_t din,
                                size_t h) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)din,
                (int)h, 1.0, dy, (int)h, W, (int)din, 0.0, grad_x, (int)din);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)h, (int)din,
                (int)rows, 1.0, dy, (int)h, x, (int)din, 0.0, grad_W, (int)din);
}

/* Step 4 of attn_additive_backward for one query row: with the row's
 * score gradients dS (Nk), its projected query pqi (h) and the example's
 * projected keys pk (Nk, h), add to grad_pqi (h), grad_pk (Nk, h) and
 * grad_w_v (h). A zero score gradient (a masked key, a fully masked row)
 * adds nothing and is skipped. */
static void score_row_backward(double *grad_pqi, double *grad_pk,
                               double *grad_w_v, const double *dS,
                               const double *pqi, const double *pk,
                               const double *w_v, size_t Nk, size_t h) {
    for (size_t j = 0; j < Nk; j++) {
        double g = dS[j];
        if (g == 0.0)
            continue;
        const double *pkj = pk + j * h;
        double *gkj = grad_pk + j * h;
        double t[TANH_CHUNK];
        for (size_t c0 = 0; c0 < h; c0 += TANH_CHUNK) {
            size_t n = h - c0 < TANH_CHUNK ? h - c0 : TANH_CHUNK;
            attn_tanh_add_rows(t, pqi + c0, pkj + c0, 1, n);
            for (size_t c = c0; c < c0 + n; c++) {
                double tc = t[c - c0];
                double u = g * w_v[c] * (1.0 - tc * tc);
                grad_w_v[c] += g * tc;
                grad_pqi[c] += u;
                gkj[c] += u;
            }
        }
    }
}

attn_status attn_additive_backward(
    double *grad_q, double *grad_k, double *grad_v, double *grad_W_q,
    double *grad_W_k, double *grad_w_v, const double *grad_out,
    const double *weights, const double *q, const double *k, const double *v,
    const double *W_q, const double *W_k, const double *w_v,
    const attn_mask *mask, size_t B, size_t Nq, size_t Nk, size_t dq, size_t dk,
    size_t dv, size_t h, attn_fault *fault) {
    const double *bufs[] = {grad_q,   grad_k,   grad_v,  grad_W_q, grad_W_k,
                            grad_w_v, grad_out, weights, q,        k,
                            v,        W_q,      W_k,     w_v};
    attn_status st =
        additive_backward_check(bufs, sizeof bufs / sizeof bufs[0], B, Nq, Nk,
                                dq, dk, dv, h, mask, fault);
    if (st != ATTN_OK)
        return st;
    size_t bytes;
    attn_additive_backward_workspace(&bytes, B, Nq, Nk, h); /* checked */
    double *pq = malloc(bytes);
    if (!pq)
        return ATTN_E_NOMEM;
    double *pk = pq + B * Nq * h;           /* (B·Nk, h) */
    double *grad_pq = pk + B * Nk * h;      /* (B·Nq, h) */
    double *grad_pk = grad_pq + B * Nq * h; /* (B·Nk, h) */
    double *dS = grad_pk + B * Nk * h;      /* (Nq, Nk) */
    memset(grad_pq, 0, B * (Nq + Nk) * h * sizeof(double));
    memset(grad_w_v, 0, h * sizeof(double));

    /* 1. forward "pq = Q W_qᵀ, pk = K W_kᵀ", recomputed in blocks that
     *    stop at the deadline */
    if (attn_project_rows(pq, q, W_q, B * Nq, dq, h) != ATTN_OK ||
        attn_project_rows(pk, k, W_k, B * Nk, dk, h) != ATTN_OK) {
        free(pq);
        return ATTN_E_DEADLINE;
    }

    for (size_t b = 0; b < B; b++) {
        const double *W = weights + b * Nq * Nk;
        const double *dO = grad_out + b * Nq * dv;
        const double *Vb = v + b * Nk * dv;

        /* 2. forward "out_b = weights_b V_b":
         *    grad_v_b = weights_bᵀ dO_b, dW = dO_b V_bᵀ */
        cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)Nk, (int)dv,
                    (int)Nq, 1.0, W, (int)Nk, dO, (int)dv, 0.0,
                    grad_v + b * Nk * dv, (int)dv);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)Nq, (int)Nk,
                    (int)dv, 1.0, dO, (int)dv, Vb, (int)dv, 0.0, dS, (int)Nk);

        /* 3. forward "weights = masked_softmax(s)" (no scale here):
         *    dS = W ⊙ (dW − rowsum(dW ⊙ W)), 0 where masked */
        attn_softmax_backward_example(dS, dS, W, mask, b, Nq, Nk);

        /* 4. forward "s[b, i, j] = Σ_c w_v[c] tanh(pq[b, i, c] + pk[b, j, c])":
         *    with t = tanh(...) and g = dS[i, j],
         *    grad_w_v[c] += g t,  grad_pq[i, c] and grad_pk[j, c] += g w_v[c]
         *    (1 − t²), row by row (score_row_backward) */
        for (size_t i = 0; i < Nq; i++) {
            if (attn_deadline_passed()) {
                free(pq);
                return ATTN_E_DEADLINE;
            }
            score_row_backward(grad_pq + (b * Nq + i) * h, grad_pk + b * Nk * h,
                               grad_w_v, dS + i * Nk, pq + (b * Nq + i) * h,
                               pk + b * Nk * h, w_v, Nk, h);
        }
    }

    /* 5. back through step 1: grad_q = grad_pq W_q, grad_W_q = grad_pqᵀ Q;
     *    the same for the keys */
    projection_backward(grad_q, grad_W_q, grad_pq, q, W_q, B * Nq, dq, h);
    projection_backward(grad_k, grad_W_k, grad_pk, k, W_k, B * Nk, dk, h);
    free(pq);

    const double *g[] = {grad_q, grad_k, grad_v, grad_W_q, grad_W_k, grad_w_v};
    const size_t n[] = {B * Nq * dq, B * Nk * dk, B * Nk * dv,
                        h * dq,      h * dk,      h};
    return attn_grads_finite(g, n, 6, fault);
}
