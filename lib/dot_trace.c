/*
 * dot_trace.c — the one step of scaled dot-product attention that
 * attn_dot_forward never writes out on its own: the unscaled products
 * Q Kᵀ (d2l 11.3.2, the notes' 点积 step), for a trace of the forward
 * pass. The scaled scores, weights and output are the forward's own.
 */
#include "attn_internal.h"

#include <cblas.h>

/* lib/dot.c's PIPELINE_SCORES and PIECE_SCORES: from this many scores on,
 * attn_dot_forward makes them in blocks of rows of about this many
 * (tests/unit/test_trace.c compares the bits on both sides of it). */
#define DOT_PIPELINE_SCORES ((size_t)1 << 18)
#define DOT_PIECE_SCORES ((size_t)1 << 16)

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
    /* QK_b = Q_b K_bᵀ, the products of attn_dot_forward's step 1 with
     * alpha 1 instead of the scale: one per example, or, where the forward
     * is pipelined, one per block of its rows, so that each entry is
     * summed as the forward sums it */
    size_t rows = Nq;
    if (B * Nq * Nk >= DOT_PIPELINE_SCORES)
        rows = DOT_PIECE_SCORES / Nk ? DOT_PIECE_SCORES / Nk : 1;
    for (size_t b = 0; b < B; b++) {
        if (attn_deadline_passed())
            return ATTN_E_DEADLINE;
        for (size_t i = 0; i < Nq; i += rows) {
            size_t n = Nq - i < rows ? Nq - i : rows;
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)n,
                        (int)Nk, (int)d, 1.0, q + (b * Nq + i) * d, (int)d,
                        k + b * Nk * d, (int)d, 0.0, QK + (b * Nq + i) * Nk,
                        (int)Nk);
        }
    }
    return ATTN_OK;
}
