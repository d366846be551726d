/*
 * dot.c — scaled dot-product attention (d2l 11.3.2; Vaswani et al. 2017,
 * "Attention Is All You Need"): out = softmax(mask(Q Kᵀ · scale)) V, with
 * both products through cblas_dgemm per example, and a plain-loop reference
 * kept beside it as the test oracle.
 */
#include "attn_internal.h"

#include <cblas.h>
#include <math.h>

double attn_dot_default_scale(size_t d) {
    return 1.0 / sqrt((double)d);
}

/* Arguments, sizes (overflow-checked) and valid_lens, before any work. */
static attn_status dot_check(const double *out, const double *weights,
                             const double *q, const double *k, const double *v,
                             const attn_mask *mask, double scale, size_t B,
                             size_t Nq, size_t Nk, size_t d, size_t dv,
                             attn_fault *fault) {
    attn_fault_clear(fault);
    if (!out || !weights || !q || !k || !v)
        return ATTN_E_INVALID_ARG;
    if (B == 0 || Nq == 0 || Nk == 0 || d == 0 || dv == 0)
        return ATTN_E_INVALID_ARG;
    if (!isfinite(scale) || !(scale > 0.0))
        return ATTN_E_INVALID_ARG;
    const size_t shapes[][3] = {
        {B, Nq, d}, {B, Nk, d}, {B, Nk, dv}, {B, Nq, Nk}, {B, Nq, dv}};
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        size_t n;
        if (attn_size_prod(&n, shapes[t], 3) != ATTN_OK)
            return ATTN_E_OVERFLOW;
    }
    return attn_mask_check(mask, B, Nq, Nk, fault);
}

attn_status attn_dot_forward(double *out, double *weights, double *scores,
                             const double *q, const double *k, const double *v,
                             const attn_mask *mask, double scale, size_t B,
                             size_t Nq, size_t Nk, size_t d, size_t dv,
                             attn_fault *fault) {
    attn_status st =
        dot_check(out, weights, q, k, v, mask, scale, B, Nq, Nk, d, dv, fault);
    if (st != ATTN_OK)
        return st;
    if (!attn_blas_dim_ok(Nq) || !attn_blas_dim_ok(Nk) ||
        !attn_blas_dim_ok(d) || !attn_blas_dim_ok(dv))
        return ATTN_E_OVERFLOW;
    const int nq = (int)Nq, nk = (int)Nk, nd = (int)d;
    double *s = scores ? scores : weights;

    /* 1. s_b = Q_b K_bᵀ · scale, one (Nq, d) x (d, Nk) product per example */
    for (size_t b = 0; b < B; b++)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nq, nk, nd, scale,
                    q + b * Nq * d, nd, k + b * Nk * d, nd, 0.0,
                    s + b * Nq * Nk, nk);

    /* 2. mask and 3. stable softmax (rejects non-finite visible scores) */
    st = attn_softmax_masked(weights, s, mask, B, Nq, Nk, fault);
    if (st != ATTN_OK)
        return st;

    /* 4. out_b = weights_b V_b, (Nq, Nk) x (Nk, dv) per example */
    return attn_pool_values(out, weights, v, B, Nq, Nk, dv, fault);
}

attn_status attn_dot_forward_ref(double *out, double *weights, double *scores,
                                 const double *q, const double *k,
                                 const double *v, const attn_mask *mask,
                                 double scale, size_t B, size_t Nq, size_t Nk,
                                 size_t d, size_t dv, attn_fault *fault) {
    attn_status st =
        dot_check(out, weights, q, k, v, mask, scale, B, Nq, Nk, d, dv, fault);
    if (st != ATTN_OK)
        return st;
    double *s = scores ? scores : weights;

    /* 1. s[b, i, j] = (q[b, i, :] · k[b, j, :]) · scale */
    for (size_t b = 0; b < B; b++) {
        for (size_t i = 0; i < Nq; i++) {
            const double *qi = q + (b * Nq + i) * d;
            for (size_t j = 0; j < Nk; j++) {
                const double *kj = k + (b * Nk + j) * d;
                double acc = 0.0;
                for (size_t c = 0; c < d; c++)
                    acc += qi[c] * kj[c];
                s[(b * Nq + i) * Nk + j] = acc * scale;
            }
        }
    }

    /* 2. mask and 3. stable softmax */
    st = attn_softmax_masked(weights, s, mask, B, Nq, Nk, fault);
    if (st != ATTN_OK)
        return st;

    /* 4. out[b, i, :] = Σ_j weights[b, i, j] v[b, j, :] */
    return attn_pool_values_ref(out, weights, v, B, Nq, Nk, dv, fault);
}
