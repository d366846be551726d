/*
 * mask.c — which keys a query may see: valid_lens (d2l 11.3.1) AND-ed with a
 * causal rule (PyTorch scaled_dot_product_attention is_causal, top-left, or
 * the bottom-right KV-cache alignment). Both admit a prefix of the keys, so a
 * row's mask is one length.
 */
#include "attn_internal.h"

#include <limits.h>
#include <math.h>

void attn_fault_clear(attn_fault *fault) {
    if (fault) {
        fault->index = 0;
        fault->by_causal = 0;
    }
}

attn_status attn_fault_at(attn_fault *fault, size_t index, attn_status s) {
    if (fault)
        fault->index = index;
    return s;
}

attn_status attn_check_finite(const double *x, size_t n, attn_fault *fault) {
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]))
            return attn_fault_at(fault, i, ATTN_E_NONFINITE);
    }
    return ATTN_OK;
}

int attn_blas_dim_ok(size_t n) {
    return n <= (size_t)INT_MAX;
}

/* Number of keys the causal rule alone admits for query i (0 ... Nk). */
static size_t causal_len(attn_causal causal, size_t i, size_t Nq, size_t Nk) {
    switch (causal) {
    case ATTN_CAUSAL_TOP_LEFT: /* j <= i */
        return i < Nk ? i + 1 : Nk;
    case ATTN_CAUSAL_BOTTOM_RIGHT: /* j <= i + Nk - Nq */
        if (Nk >= Nq)
            return i + 1 + (Nk - Nq); /* i + 1 <= Nq, so this is <= Nk */
        return i + 1 > Nq - Nk ? i + 1 - (Nq - Nk) : 0;
    case ATTN_CAUSAL_NONE:
        break;
    }
    return Nk;
}

/* The valid_len of query i of example b; mask->valid_lens is not NULL. */
static int64_t row_valid_len(const attn_mask *mask, size_t b, size_t i,
                             size_t Nq) {
    return mask->per_query ? mask->valid_lens[b * Nq + i] : mask->valid_lens[b];
}

size_t attn_mask_row_len(const attn_mask *mask, size_t b, size_t i, size_t Nq,
                         size_t Nk, int *by_causal) {
    size_t vl =
        mask && mask->valid_lens ? (size_t)row_valid_len(mask, b, i, Nq) : Nk;
    size_t cl = causal_len(mask ? mask->causal : ATTN_CAUSAL_NONE, i, Nq, Nk);
    if (by_causal)
        *by_causal = vl > 0 && cl == 0;
    return vl < cl ? vl : cl;
}

attn_status attn_mask_check(const attn_mask *mask, size_t B, size_t Nq,
                            size_t Nk, attn_fault *fault) {
    attn_fault_clear(fault);
    if (B == 0 || Nq == 0 || Nk == 0)
        return ATTN_E_INVALID_ARG;
    if (!mask)
        return ATTN_OK;
    if (mask->per_query != 0 && mask->per_query != 1)
        return ATTN_E_INVALID_ARG;
    switch (mask->causal) {
    case ATTN_CAUSAL_NONE:
    case ATTN_CAUSAL_TOP_LEFT:
    case ATTN_CAUSAL_BOTTOM_RIGHT:
        break;
    default:
        return ATTN_E_INVALID_ARG;
    }
    switch (mask->fully_masked) {
    case ATTN_FULLY_MASKED_ZERO:
    case ATTN_FULLY_MASKED_UNIFORM:
    case ATTN_FULLY_MASKED_ERROR:
        break;
    default:
        return ATTN_E_INVALID_ARG;
    }
    if (!mask->valid_lens)
        return ATTN_OK;
    size_t count = B;
    if (mask->per_query && attn_size_mul(&count, B, Nq) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    for (size_t t = 0; t < count; t++) {
        int64_t v = mask->valid_lens[t];
        if (v < 0 || (uint64_t)v > (uint64_t)Nk)
            return attn_fault_at(fault, t, ATTN_E_VALID_LEN);
    }
    return ATTN_OK;
}

int attn_mask_visible(const attn_mask *mask, size_t b, size_t i, size_t j,
                      size_t Nq, size_t Nk) {
    if (mask && mask->valid_lens) {
        int64_t vl = row_valid_len(mask, b, i, Nq);
        if (vl < 0 || (uint64_t)j >= (uint64_t)vl)
            return 0;
    }
    return j < causal_len(mask ? mask->causal : ATTN_CAUSAL_NONE, i, Nq, Nk);
}
