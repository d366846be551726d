/*
 * dot_trace.c — the one step of scaled dot-product attention that
 * attn_dot_forward never writes out on its own: the unscaled products
 * Q Kᵀ (d2l 11.3.2, the notes' 点积 step), for a trace of the forward
 * pass. The scaled scores, weights and output are the forward's own.
 */
#include "attn_internal.h"

#include <cblas.h>

attn_status attn_dot_products(double *QK, const double *q, const double *k,
                              size_t B, size_t Nq, size_t Nk, size_t d) {
    if (!QK || !q || !k || B == 0 || Nq == 0 || Nk == 0 || d == 0)
        return ATTN_E_INVALID_ARG;
    const size_t shapes[][3] = {{B, Nq, d}, {B, Nk, d}, {B, Nq, Nk}};
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        size_t n;
        if (attn_size_prod(&n, shapes[t], 3) != ATTN_OK)
            return ATTN_E_OVERFLOW;
    }
    if (!attn_blas_dim_ok(Nq) || !attn_blas_dim_ok(Nk) || !attn_blas_dim_ok(d))
        return ATTN_E_OVERFLOW;
    /* QK_b = Q_b K_bᵀ, the product of attn_dot_forward's step 1 with
     * alpha 1 instead of the scale */
    for (size_t b = 0; b < B; b++) {
        if (attn_deadline_passed())
            return ATTN_E_DEADLINE;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)Nq, (int)Nk,
                    (int)d, 1.0, q + b * Nq * d, (int)d, k + b * Nk * d, (int)d,
                    0.0, QK + b * Nq * Nk, (int)Nk);
    }
    return ATTN_OK;
}
