/*
 * additive_trace.c — the intermediates of additive (Bahdanau) attention
 * (d2l 11.3.3; Bahdanau, Cho & Bengio 2014) that attn_additive_forward
 * never stores: the projections Q = q·W_qᵀ, K = k·W_kᵀ and the
 * (B, Nq, Nk, h) features tanh(Q_i + K_j), for a trace of the forward
 * pass. They are made as the forward makes them — the same dgemm calls,
 * the same choice between the exponential form and tanh itself, the same
 * per-feature functions of lib/vmath.c — so they are the doubles the
 * forward's scores were summed from; the scores, weights and output are
 * the forward's own.
 */
#include "attn_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

attn_status attn_additive_trace_workspace(size_t *bytes, size_t B, size_t Nq,
                                          size_t Nk, size_t h) {
    if (!bytes || B == 0 || Nq == 0 || Nk == 0 || h == 0)
        return ATTN_E_INVALID_ARG;
    size_t nq, nk, rows, doubles, total;
    /* the projections, the exp and expm1 of twice each, then one row's
     * cancels */
    if (attn_size_mul(&nq, B, Nq) != ATTN_OK ||
        attn_size_mul(&nk, B, Nk) != ATTN_OK ||
        attn_size_add(&rows, nq, nk) != ATTN_OK ||
        attn_size_mul(&doubles, rows, h) != ATTN_OK ||
        attn_size_mul(&doubles, doubles, 3) != ATTN_OK ||
        attn_size_mul(&total, doubles, sizeof(double)) != ATTN_OK ||
        attn_size_add(bytes, total, Nk) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    return ATTN_OK;
}

attn_status attn_additive_trace(double *Q, double *K, double *features,
                                const double *q, const double *k,
                                const double *W_q, const double *W_k, size_t B,
                                size_t Nq, size_t Nk, size_t dq, size_t dk,
                                size_t h) {
    if (!Q || !K || !features || !q || !k || !W_q || !W_k)
        return ATTN_E_INVALID_ARG;
    size_t bytes, nf;
    attn_status st = attn_additive_trace_workspace(&bytes, B, Nq, Nk, h);
    if (st != ATTN_OK)
        return st;
    if (dq == 0 || dk == 0)
        return ATTN_E_INVALID_ARG;
    const size_t dims[] = {B * Nq, B * Nk, Nk, dq, dk, h};
    for (size_t t = 0; t < sizeof dims / sizeof dims[0]; t++)
        if (!attn_blas_dim_ok(dims[t]))
            return ATTN_E_OVERFLOW;
    const size_t fshape[4] = {B, Nq, Nk, h};
    if (attn_size_prod(&nf, fshape, 4) != ATTN_OK)
        return ATTN_E_OVERFLOW;

    /* 1. the forward's projections and their exponential form, by the
     *    forward's own function (attn_additive_project): p = [Q | K] */
    size_t nqh = B * Nq * h, np = B * (Nq + Nk) * h;
    double *ws = malloc(bytes);
    if (!ws)
        return ATTN_E_NOMEM;
    double *p = ws, *e = p + np, *m = e + np;
    unsigned char *cancels = (unsigned char *)(m + np);
    int exp_form;
    if (attn_additive_project(p, e, m, &exp_form, q, k, W_q, W_k, B, Nq, Nk, dq,
                              dk, h) != ATTN_OK) {
        free(ws);
        return ATTN_E_DEADLINE;
    }
    memcpy(Q, p, nqh * sizeof(double));
    memcpy(K, p + nqh, (np - nqh) * sizeof(double));
    const double *eq = e, *ek = e + nqh, *mq = m, *mk = m + nqh;

    /* 2. features[b, i, j, :] = tanh(Q[b, i, :] + K[b, j, :]), in the
     *    exponential form when the forward used it */
    for (size_t row = 0; row < B * Nq; row++) {
        if (attn_deadline_passed()) {
            free(ws);
            return ATTN_E_DEADLINE;
        }
        size_t b = row / Nq, qi = row * h, kj = b * Nk * h;
        double *f = features + row * Nk * h;
        if (exp_form) {
            attn_tanh_add_exp_rows(f, cancels, Q + qi, eq + qi, mq + qi, K + kj,
                                   ek + kj, mk + kj, Nk, h);
            for (size_t r = 0; r < Nk; r++)
                if (cancels[r])
                    attn_tanh_add_cancel_row(f + r * h, Q + qi, K + kj + r * h,
                                             h);
        } else {
            attn_tanh_add_rows(f, Q + qi, K + kj, Nk, h);
        }
    }
    free(ws);
    return ATTN_OK;
}
