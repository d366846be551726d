/*
 * mask.c — which keys a query may see: valid_lens (d2l 11.3.1) AND-ed with a
 * causal rule (PyTorch scaled_dot_product_attention is_causal, top-left, or
 * the bottom-right KV-cache alignment), and with PyTorch's pattern masks
 * (nn.MultiheadAttention's boolean or float attn_mask and key_padding_mask).
 * The first two admit a prefix of the keys, so without a pattern a row's
 * mask is one length; with one, a row is that prefix and the row's entries
 * of each pattern mask.
 */
#include "attn_internal.h"

#include <limits.h>
#include <math.h>

void attn_fault_clear(attn_fault *fault) {
    if (fault) {
        fault->index = 0;
        fault->by_causal = 0;
        fault->by_mask = 0;
        fault->head = 0;
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
    switch (mask->layout) {
    case ATTN_MASK_SHARED:
    case ATTN_MASK_PER_EXAMPLE:
    case ATTN_MASK_PER_HEAD:
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

int attn_mask_has_pattern(const attn_mask *mask) {
    return mask &&
           (mask->bool_mask || mask->float_mask || mask->key_padding_mask);
}

/* Offset of the (Nq, Nk) slab of head t (of H) of example b. */
static size_t slab_offset(const attn_mask *mask, size_t b, size_t t, size_t H,
                          size_t Nq, size_t Nk) {
    switch (mask->layout) {
    case ATTN_MASK_PER_EXAMPLE:
        return b * Nq * Nk;
    case ATTN_MASK_PER_HEAD:
        return (b * H + t) * Nq * Nk;
    case ATTN_MASK_SHARED:
        break;
    }
    return 0;
}

void attn_mask_row_of(attn_mask_row *r, const attn_mask *mask, size_t b,
                      size_t t, size_t H, size_t i, size_t Nq, size_t Nk,
                      int *by_causal) {
    r->len = attn_mask_row_len(mask, b, i, Nq, Nk, by_causal);
    size_t at = slab_offset(mask, b, t, H, Nq, Nk) + i * Nk;
    r->bool_row = mask->bool_mask ? mask->bool_mask + at : NULL;
    r->float_row = mask->float_mask ? mask->float_mask + at : NULL;
    r->pad_row =
        mask->key_padding_mask ? mask->key_padding_mask + b * Nk : NULL;
}

size_t attn_mask_row_count(const attn_mask_row *r, size_t Nk, int *by_mask) {
    size_t n = 0;
    for (size_t j = 0; j < r->len && j < Nk; j++)
        n += (size_t)attn_mask_row_admits(r, j);
    if (n == 0 && by_mask) {
        size_t unpadded = 0;
        for (size_t j = 0; j < r->len; j++)
            unpadded += !(r->pad_row && r->pad_row[j]);
        *by_mask = r->len == 0     ? 0
                   : unpadded == 0 ? ATTN_BY_KEY_PADDING
                                   : ATTN_BY_ATTN_MASK;
    }
    return n;
}

attn_mask attn_mask_slice(const attn_mask *mask, size_t b, size_t t, size_t H,
                          size_t Nq, size_t Nk) {
    attn_mask m = {0};
    if (!mask)
        return m;
    m = *mask;
    if (m.valid_lens)
        m.valid_lens += m.per_query ? b * Nq : b;
    size_t at = slab_offset(mask, b, t, H, Nq, Nk);
    if (m.bool_mask)
        m.bool_mask += at;
    if (m.float_mask)
        m.float_mask += at;
    m.layout = ATTN_MASK_SHARED;
    if (m.key_padding_mask)
        m.key_padding_mask += b * Nk;
    return m;
}

int attn_mask_visible_head(const attn_mask *mask, size_t b, size_t t, size_t H,
                           size_t i, size_t j, size_t Nq, size_t Nk) {
    if (mask && mask->valid_lens) {
        int64_t vl = row_valid_len(mask, b, i, Nq);
        if (vl < 0 || (uint64_t)j >= (uint64_t)vl)
            return 0;
    }
    if (j >= causal_len(mask ? mask->causal : ATTN_CAUSAL_NONE, i, Nq, Nk))
        return 0;
    if (!attn_mask_has_pattern(mask))
        return 1;
    size_t at = slab_offset(mask, b, t, H, Nq, Nk) + i * Nk + j;
    if (mask->bool_mask && mask->bool_mask[at])
        return 0;
    if (mask->float_mask && mask->float_mask[at] == -INFINITY)
        return 0;
    return !(mask->key_padding_mask && mask->key_padding_mask[b * Nk + j]);
}

int attn_mask_visible(const attn_mask *mask, size_t b, size_t i, size_t j,
                      size_t Nq, size_t Nk) {
    return attn_mask_visible_head(mask, b, 0, 1, i, j, Nq, Nk);
}

attn_status attn_mask_apply(double *masked, const double *scores,
                            const attn_mask *mask, size_t B, size_t H,
                            size_t Nq, size_t Nk, attn_fault *fault) {
    attn_fault_clear(fault);
    if (!masked || !scores || H == 0)
        return ATTN_E_INVALID_ARG;
    size_t total;
    const size_t shape[] = {B, H, Nq, Nk, sizeof(double)};
    if (B == 0 || Nq == 0 || Nk == 0)
        return ATTN_E_INVALID_ARG;
    if (attn_size_prod(&total, shape, 5) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    attn_status st = attn_mask_check(mask, B, Nq, Nk, fault);
    if (st != ATTN_OK)
        return st;
    for (size_t b = 0; b < B; b++) {
        for (size_t t = 0; t < H; t++) {
            for (size_t i = 0; i < Nq; i++) {
                size_t row = ((b * H + t) * Nq + i) * Nk;
                attn_mask_row r = {Nk, NULL, NULL, NULL};
                if (mask)
                    attn_mask_row_of(&r, mask, b, t, H, i, Nq, Nk, NULL);
                for (size_t j = 0; j < Nk; j++) {
                    double x = scores[row + j];
                    if (!attn_mask_row_admits(&r, j))
                        x = -INFINITY;
                    else if (r.float_row)
                        x += r.float_row[j];
                    masked[row + j] = x;
                }
            }
        }
    }
    return ATTN_OK;
}
