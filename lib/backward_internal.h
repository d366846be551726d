/*
 * backward_internal.h — pieces shared by the backward passes (gradients) of
 * the attention kernels; not part of the public interface (lib/attn.h).
 */
#ifndef ATTN_BACKWARD_INTERNAL_H
#define ATTN_BACKWARD_INTERNAL_H

#include "attn.h"

#include <stddef.h>

/* valid_lens in range (ATTN_E_VALID_LEN, fault->index into valid_lens) and,
 * under ATTN_FULLY_MASKED_ERROR, no query without a visible key
 * (ATTN_E_FULLY_MASKED, fault->index = b·Nq + i, fault->by_causal): the
 * errors the forward pass gave for the same mask, found before any work. */
attn_status attn_backward_check_mask(const attn_mask *mask, size_t B, size_t Nq,
                                     size_t Nk, attn_fault *fault);

/* The same for H heads (multi-head), whose rows differ under a PER_HEAD
 * pattern mask: fault->head = the head of the first empty row (b, then t,
 * then i). Also ATTN_E_DEADLINE, checked once per example. */
attn_status attn_backward_check_mask_heads(const attn_mask *mask, size_t B,
                                           size_t H, size_t Nq, size_t Nk,
                                           attn_fault *fault);

/* Softmax backward for the Nq rows of example b (mask already checked;
 * a PER_HEAD pattern is read as H = 1: pass attn_mask_slice of the head):
 *   grad_w, w: (Nq, Nk) -> grad_s: (Nq, Nk), grad_s may alias grad_w.
 * Visible prefix: grad_s = w ⊙ (grad_w − Σ_j grad_w ⊙ w); masked keys and
 * every key of a fully masked row (either policy: such rows are constants)
 * get exactly 0. */
void attn_softmax_backward_example(double *grad_s, const double *grad_w,
                                   const double *w, const attn_mask *mask,
                                   size_t b, size_t Nq, size_t Nk);

/* ATTN_OK when every gradient is finite, else ATTN_E_NONFINITE with
 * fault->index (fault may be NULL) = flat offset of the first bad value in
 * the concatenation grads[0], grads[1], ... of counts[t] doubles each;
 * NULL entries are skipped and count for nothing. */
attn_status attn_grads_finite(const double *const *grads, const size_t *counts,
                              size_t n, attn_fault *fault);

#endif /* ATTN_BACKWARD_INTERNAL_H */
