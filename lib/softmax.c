/*
 * softmax.c — masked softmax over the last axis (d2l 11.3.1 "Masked Softmax
 * Operation"), computed over the visible keys only: no fill value, so masked
 * weights are exactly 0 and any finite visible score beats a masked key.
 */
#include "attn_internal.h"

#include <math.h>

/* Softmax of the visible prefix s[0 ... len-1] into w (w may alias s); the
 * rest of the row, w[len ... Nk-1], becomes exactly 0. len >= 1. Returns
 * len, or the index of the first non-finite visible score (w untouched).
 * Subtracting the maximum keeps every exponent <= 0, so nothing overflows
 * and the sum is >= 1. */
static size_t softmax_row(double *w, const double *s, size_t len, size_t Nk) {
    double max;
    if (!attn_max_finite_n(&max, s, len)) {
        size_t j = 0;
        while (isfinite(s[j]))
            j++;
        return j;
    }
    attn_div_n(w, attn_exp_sum_n(w, s, max, len), len);
    for (size_t j = len; j < Nk; j++)
        w[j] = 0.0;
    return len;
}

attn_status attn_softmax_masked(double *weights, const double *scores,
                                const attn_mask *mask, size_t B, size_t Nq,
                                size_t Nk, attn_fault *fault) {
    attn_fault_clear(fault);
    if (!weights || !scores || B == 0 || Nq == 0 || Nk == 0)
        return ATTN_E_INVALID_ARG;
    size_t rows, total;
    if (attn_size_mul(&rows, B, Nq) != ATTN_OK ||
        attn_size_mul(&total, rows, Nk) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    attn_status st = attn_mask_check(mask, B, Nq, Nk, fault);
    if (st != ATTN_OK)
        return st;
    attn_fully_masked policy =
        mask ? mask->fully_masked : ATTN_FULLY_MASKED_ZERO;

    for (size_t b = 0; b < B; b++) {
        for (size_t i = 0; i < Nq; i++) {
            size_t row = b * Nq + i;
            const double *s = scores + row * Nk;
            double *w = weights + row * Nk;
            int by_causal;
            size_t len = attn_mask_row_len(mask, b, i, Nq, Nk, &by_causal);

            /* 1. a query that sees no key: the fully_masked policy */
            if (len == 0) {
                if (policy == ATTN_FULLY_MASKED_ERROR) {
                    if (fault)
                        fault->by_causal = by_causal;
                    return attn_fault_at(fault, row, ATTN_E_FULLY_MASKED);
                }
                double fill = policy == ATTN_FULLY_MASKED_UNIFORM
                                  ? 1.0 / (double)Nk
                                  : 0.0;
                for (size_t j = 0; j < Nk; j++)
                    w[j] = fill;
                continue;
            }
            /* 2. stable softmax over the visible prefix, zeros after it;
             *    visible scores must be finite, masked ones are never read */
            size_t bad = softmax_row(w, s, len, Nk);
            if (bad < len)
                return attn_fault_at(fault, row * Nk + bad, ATTN_E_NONFINITE);
        }
    }
    return ATTN_OK;
}
