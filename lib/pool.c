/*
 * pool.c — attention pooling, out = weights · V (d2l 11.1), the last step of
 * every attention kernel: one cblas_dgemm per example, and a plain-loop
 * reference for the test oracles.
 */
#include "attn_internal.h"

#include <cblas.h>

attn_status attn_pool_values(double *out, const double *weights,
                             const double *v, size_t B, size_t Nq, size_t Nk,
                             size_t dv, attn_fault *fault) {
    if (!attn_blas_dim_ok(Nq) || !attn_blas_dim_ok(Nk) || !attn_blas_dim_ok(dv))
        return ATTN_E_OVERFLOW;
    for (size_t b = 0; b < B; b++)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)Nq, (int)dv,
                    (int)Nk, 1.0, weights + b * Nq * Nk, (int)Nk,
                    v + b * Nk * dv, (int)dv, 0.0, out + b * Nq * dv, (int)dv);
    return attn_check_finite(out, B * Nq * dv, fault);
}

attn_status attn_pool_values_ref(double *out, const double *weights,
                                 const double *v, size_t B, size_t Nq,
                                 size_t Nk, size_t dv, attn_fault *fault) {
    for (size_t b = 0; b < B; b++) {
        for (size_t i = 0; i < Nq; i++) {
            const double *wi = weights + (b * Nq + i) * Nk;
            double *oi = out + (b * Nq + i) * dv;
            for (size_t c = 0; c < dv; c++) {
                double acc = 0.0;
                for (size_t j = 0; j < Nk; j++)
                    acc += wi[j] * v[(b * Nk + j) * dv + c];
                oi[c] = acc;
            }
        }
    }
    return attn_check_finite(out, B * Nq * dv, fault);
}
