/*
 * softmax_backward.c — backward pass of the masked softmax (d2l 11.3.1;
 * the Jacobian of softmax, e.g. Goodfellow et al. "Deep Learning" 6.2.2.3):
 * for w = softmax(s) over the visible keys,
 *     ∂L/∂s_j = w_j (∂L/∂w_j − Σ_k w_k ∂L/∂w_k),
 * and masked keys, whose scores the forward pass never reads, get 0.
 */
#include "attn_internal.h"
#include "backward_internal.h"

attn_status attn_backward_check_mask(const attn_mask *mask, size_t B, size_t Nq,
                                     size_t Nk, attn_fault *fault) {
    attn_status st = attn_mask_check(mask, B, Nq, Nk, fault);
    if (st != ATTN_OK || !mask || mask->fully_masked != ATTN_FULLY_MASKED_ERROR)
        return st;
    for (size_t b = 0; b < B; b++) {
        for (size_t i = 0; i < Nq; i++) {
            int by_causal;
            if (attn_mask_row_len(mask, b, i, Nq, Nk, &by_causal) == 0) {
                if (fault)
                    fault->by_causal = by_causal;
                return attn_fault_at(fault, b * Nq + i, ATTN_E_FULLY_MASKED);
            }
        }
    }
    return ATTN_OK;
}

void attn_softmax_backward_example(double *grad_s, const double *grad_w,
                                   const double *w, const attn_mask *mask,
                                   size_t b, size_t Nq, size_t Nk) {
    for (size_t i = 0; i < Nq; i++) {
        const double *gw = grad_w + i * Nk;
        const double *wi = w + i * Nk;
        double *gs = grad_s + i * Nk;
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
