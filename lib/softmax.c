/*
 * softmax.c — masked softmax over the last axis (d2l 11.3.1 "Masked Softmax
 * Operation"), computed over the visible keys only: no fill value, so masked
 * weights are exactly 0 and any finite visible score beats a masked key.
 * Rows whose visible keys are a prefix (valid_lens, causal) take the fast
 * path; PyTorch's pattern masks (attn_mask, key_padding_mask) the packed
 * path, with the same arithmetic on the visible scores.
 */
#include "attn_internal.h"

#include <math.h>
#include <stdatomic.h>

/* Scores worth a thread of their own: about half a millisecond of softmax
 * (exp, sums and divisions at some 4 ns a score). */
#define SCORES_PER_THREAD ((size_t)1 << 17)

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

/* The pattern path's row: the visible keys' scores (plus the float mask)
 * are packed to the front of w, take the softmax of softmax_row there, in
 * the same order (so a pattern that is a prefix gives the prefix's bits),
 * and are spread back, masked keys exactly 0. Writing w[c] for the c-th
 * visible key only overwrites scores already read (c <= j), and spreading
 * from the end only reads packed entries not yet overwritten, so w may
 * alias s. Returns Nk, or the key of the first non-finite visible score
 * (w partly written); *count gets the number of visible keys (0: nothing
 * is written). */
static size_t softmax_row_pattern(double *w, const double *s,
                                  const attn_mask_row *r, size_t Nk,
                                  size_t *count) {
    size_t c = 0;
    for (size_t j = 0; j < r->len; j++) {
        if (attn_mask_row_admits(r, j))
            w[c++] = r->float_row ? s[j] + r->float_row[j] : s[j];
    }
    *count = c;
    if (c == 0)
        return Nk;
    double max;
    if (!attn_max_finite_n(&max, w, c)) {
        size_t bad = 0;
        while (isfinite(w[bad]))
            bad++;
        for (size_t j = 0;; j++) /* the bad-th visible key */
            if (attn_mask_row_admits(r, j) && bad-- == 0)
                return j;
    }
    attn_div_n(w, attn_exp_sum_n(w, w, max, c), c);
    for (size_t j = Nk; j-- > 0;)
        w[j] = attn_mask_row_admits(r, j) ? w[--c] : 0.0;
    return Nk;
}

/* attn_softmax_rows for a mask with a pattern (attn_mask_has_pattern). */
static attn_status softmax_rows_pattern(double *weights, const double *scores,
                                        const attn_mask *mask, size_t Nq,
                                        size_t Nk, size_t begin, size_t end,
                                        attn_fault *fault) {
    for (size_t row = begin; row < end; row++) {
        size_t b = row / Nq, i = row % Nq;
        double *w = weights + row * Nk;
        int by_causal;
        attn_mask_row r;
        attn_mask_row_of(&r, mask, b, 0, 1, i, Nq, Nk, &by_causal);
        size_t count;
        size_t bad = softmax_row_pattern(w, scores + row * Nk, &r, Nk, &count);
        if (bad < Nk)
            return attn_fault_at(fault, row * Nk + bad, ATTN_E_NONFINITE);
        if (count > 0)
            continue;
        /* a query that sees no key: the fully_masked policy */
        if (mask->fully_masked == ATTN_FULLY_MASKED_ERROR) {
            if (fault) {
                fault->by_causal = by_causal;
                attn_mask_row_count(&r, Nk, &fault->by_mask);
            }
            return attn_fault_at(fault, row, ATTN_E_FULLY_MASKED);
        }
        double fill = mask->fully_masked == ATTN_FULLY_MASKED_UNIFORM
                          ? 1.0 / (double)Nk
                          : 0.0;
        for (size_t j = 0; j < Nk; j++)
            w[j] = fill;
    }
    return ATTN_OK;
}

attn_status attn_softmax_rows(double *weights, const double *scores,
                              const attn_mask *mask, size_t Nq, size_t Nk,
                              size_t begin, size_t end, attn_fault *fault) {
    if (attn_mask_has_pattern(mask))
        return softmax_rows_pattern(weights, scores, mask, Nq, Nk, begin, end,
                                    fault);
    attn_fully_masked policy =
        mask ? mask->fully_masked : ATTN_FULLY_MASKED_ZERO;
    for (size_t row = begin; row < end; row++) {
        size_t b = row / Nq, i = row % Nq;
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
            double fill =
                policy == ATTN_FULLY_MASKED_UNIFORM ? 1.0 / (double)Nk : 0.0;
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
    return ATTN_OK;
}

typedef struct {
    double *weights;
    const double *scores;
    const attn_mask *mask;
    size_t Nq, Nk;
    atomic_int failed; /* a range stopped at a failure */
} softmax_job;

static void softmax_range(void *ctx, size_t begin, size_t end) {
    softmax_job *job = ctx;
    if (attn_softmax_rows(job->weights, job->scores, job->mask, job->Nq,
                          job->Nk, begin, end, NULL) != ATTN_OK)
        atomic_store(&job->failed, 1);
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
    if (total < 2 * SCORES_PER_THREAD)
        return attn_softmax_rows(weights, scores, mask, Nq, Nk, 0, rows, fault);
    /* Rows shared out over the cores. A failure is rare: the rows are then
     * done again in order, which finds the first one, as one thread would. */
    softmax_job job = {weights, scores, mask, Nq, Nk, 0};
    attn_parallel_for(rows, SCORES_PER_THREAD / Nk + 1, softmax_range, &job);
    if (!atomic_load(&job.failed))
        return ATTN_OK;
    return attn_softmax_rows(weights, scores, mask, Nq, Nk, 0, rows, fault);
}
