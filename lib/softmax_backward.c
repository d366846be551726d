/*
 * softmax_backward.c — backward pass of the masked softmax (d2l 11.3.1;
 * the Jacobian of softmax, e.g. Goodfellow et al. "Deep Learning" 6.2.2.3):
 * for w = softmax(s) over the visible keys,
 *     ∂L/∂s_j = w_j (∂L/∂w_j − Σ_k w_k ∂L/∂w_k),
 * and masked keys, whose scores the forward pass never reads, get 0 (a
 * float attn_mask adds a constant to the score, so its gradient is the
 * score's).
 */
#include "attn_internal.h"
#include "backward_internal.h"

attn_status attn_backward_check_mask_heads(const attn_mask *mask, size_t B,
                                           size_t H, size_t Nq, size_t Nk,
                                           attn_fault *fault) {
    attn_status st = attn_mask_check(mask, B, Nq, Nk, fault);
    if (st != ATTN_OK || !mask || mask->fully_masked != ATTN_FULLY_MASKED_ERROR)
        return st;
    int pattern = attn_mask_has_pattern(mask);
    /* without a pattern every head has the same rows: look at head 0 */
    size_t heads = pattern ? H : 1;
    for (size_t b = 0; b < B; b++) {
        if (attn_deadline_passed())
            return ATTN_E_DEADLINE;
        for (size_t t = 0; t < heads; t++) {
            for (size_t i = 0; i < Nq; i++) {
                int by_causal, by_mask = 0;
                size_t seen;
                if (pattern) {
                    attn_mask_row r;
                    attn_mask_row_of(&r, mask, b, t, H, i, Nq, Nk, &by_causal);
                    seen = attn_mask_row_count(&r, Nk, &by_mask);
                } else {
                    seen = attn_mask_row_len(mask, b, i, Nq, Nk, &by_causal);
                }
                if (seen == 0) {
                    if (fault) {
                        fault->by_causal = by_causal;
                        fault->by_mask = by_mask;
                        fault->head = t;
                    }
                    return attn_fault_at(fault, b * Nq + i,
                                         ATTN_E_FULLY_MASKED);
                }
            }
        }
    }
    return ATTN_OK;
}

attn_status attn_backward_check_mask(const attn_mask *mask, size_t B, size_t Nq,
                                     size_t Nk, attn_fault *fault) {
    return attn_backward_check_mask_heads(mask, B, 1, Nq, Nk, fault);
}

/* The softmax backward of one row under a pattern mask: the visible keys
 * as the forward pass saw them, every other entry exactly 0. */
static void backward_row_pattern(double *gs, const double *gw, const double *wi,
                                 const attn_mask_row *r, size_t Nk) {
    double dot = 0.0;
    for (size_t j = 0; j < r->len; j++)
        if (attn_mask_row_admits(r, j))
            dot += gw[j] * wi[j];
    for (size_t j = 0; j < Nk; j++)
        gs[j] = attn_mask_row_admits(r, j) ? wi[j] * (gw[j] - dot) : 0.0;
}

void attn_softmax_backward_example(double *grad_s, const double *grad_w,
                                   const double *w, const attn_mask *mask,
                                   size_t b, size_t Nq, size_t Nk) {
    int pattern = attn_mask_has_pattern(mask);
    for (size_t i = 0; i < Nq; i++) {
        const double *gw = grad_w + i * Nk;
        const double *wi = w + i * Nk;
        double *gs = grad_s + i * Nk;
        if (pattern) {
            /* a fully masked row admits no key: all 0, as below */
            attn_mask_row r;
            attn_mask_row_of(&r, mask, b, 0, 1, i, Nq, Nk, NULL);
            backward_row_pattern(gs, gw, wi, &r, Nk);
            continue;
        }
        /* Forward: w = softmax of the visible prefix s[0 ... len-1], zeros
         * after it; a fully masked row (len 0) is a constant (all 0, or all
         * 1/Nk under "uniform"), so no gradient reaches its scores. */
        size_t len = attn_mask_row_len(mask, b, i, Nq, Nk, NULL);
        double dot = 0.0;
        for (size_t j = 0; j < len; j++)
            dot += gw[j] * wi[j];
        for (size_t j = 0; j < len; j++)
            gs[j] = wi[j] * (gw[j] - dot);
        for (size_t j = len; j < Nk; j++)
            gs[j] = 0.0;
    }
}

attn_status attn_grads_finite(const double *const *grads, const size_t *counts,
                              size_t n, attn_fault *fault) {
    size_t base = 0;
    for (size_t t = 0; t < n; t++) {
        if (!grads[t])
            continue;
        attn_status st = attn_check_finite(grads[t], counts[t], fault);
        if (st != ATTN_OK) {
            if (fault)
                fault->index += base;
            return st;
        }
        base += counts[t];
    }
    return ATTN_OK;
}

attn_status attn_softmax_masked_backward(
    double *grad_scores, const double *grad_weights, const double *weights,
    const attn_mask *mask, size_t B, size_t Nq, size_t Nk, attn_fault *fault) {
    attn_fault_clear(fault);
    if (!grad_scores || !grad_weights || !weights || B == 0 || Nq == 0 ||
        Nk == 0)
        return ATTN_E_INVALID_ARG;
    size_t total;
    const size_t shape[] = {B, Nq, Nk};
    if (attn_size_prod(&total, shape, 3) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    attn_status st = attn_backward_check_mask(mask, B, Nq, Nk, fault);
    if (st != ATTN_OK)
        return st;
    for (size_t b = 0; b < B; b++) {
        size_t slab = b * Nq * Nk;
        attn_softmax_backward_example(grad_scores + slab, grad_weights + slab,
                                      weights + slab, mask, b, Nq, Nk);
    }
    const double *g[] = {grad_scores};
    return attn_grads_finite(g, &total, 1, fault);
}
