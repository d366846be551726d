/*
 * nw_variants.h — the Nadaraya–Watson fit of lib/nw.c as known wrong
 * implementations run it, for naming the mistake behind a wrong answer
 * (api/grading/misconceptions_nw.c, docs/misconceptions.md). Not part of
 * the public interface (attn.h).
 */
#ifndef ATTN_NW_VARIANTS_H
#define ATTN_NW_VARIANTS_H

#include "attn.h"

#include <stddef.h>

/* How the student's w enters the Gaussian kernel: as the right one's
 * w_eff = T(w) in exp(−½((x − xᵢ)·w_eff)²). */
typedef enum {
    ATTN_NW_W_RIGHT = 0,   /* exp(−½((x − xᵢ)w)²): T(w) = w */
    ATTN_NW_W_NOT_SQUARED, /* exp(−½(x − xᵢ)²·w): T(w) = √w */
    ATTN_NW_W_NO_HALF      /* exp(−((x − xᵢ)w)²): T(w) = √2·w */
} attn_nw_w_map;

/* One wrong implementation of attn_nw_fit (attn_nw_fit_variant).
 * {ATTN_NW_W_RIGHT, 1, 1, 1} is the right one. */
typedef struct {
    attn_nw_w_map map;
    double loss_scale; /* loss = loss_scale · Σ ½(ŷ − y)²: 1 (right), 2 (the
                          ½ left out), 1/N (the mean over N target entries) */
    double grad_sign; /* +1 (right), −1: the step w ← w + lr·∂loss/∂w */
    int loo;          /* ATTN_NW_FIT_TRAIN_LOO: 1 leaves each training pair
                         out of its own prediction (right), 0 keeps it */
} attn_nw_variant;

/* T(w) and T'(w) of map (w > 0). */
double attn_nw_w_eff(attn_nw_w_map map, double w);
double attn_nw_w_eff_slope(attn_nw_w_map map, double w);

/* Gradient descent on w for the Gaussian kernel as variant v computes it
 * (d2l 11.2.4; seed notes §9–11): `epochs` times, with the student's loss
 * L(w) = loss_scale · Σ ½(ŷ(T(w)) − y)² and the student's derivative
 * g(w) = grad_sign · ∂L/∂w (chain rule through T),
 *   history[e] = {e + 1, w, L(w)},  w ← w − lr · g(w),
 * starting from w0; *w_out = w after the last step. The data and the
 * other arguments are attn_nw_fit's; for {ATTN_NW_W_RIGHT, 1, 1, 1} the
 * result equals attn_nw_fit's to rounding. Plain loops (no BLAS),
 * checking the deadline once per epoch and query.
 * Errors: ATTN_E_INVALID_ARG (NULL, zero sizes, w0 or lr not finite and
 * > 0, unknown data or map); ATTN_E_TOO_FEW (train_loo with n < 2);
 * ATTN_E_OVERFLOW; ATTN_E_NONFINITE (a loss or derivative overflowed;
 * fault->index = epoch, from 1); ATTN_E_BAD_STEP (a step made w <= 0 or
 * not finite; fault->index = epoch); ATTN_E_DEADLINE. */
attn_status attn_nw_fit_variant(double *w_out, attn_nw_epoch *history,
                                double w0, double lr, size_t epochs,
                                attn_nw_fit_data data, const double *x_train,
                                const double *y_train, const double *x_query,
                                const double *y_query, size_t n, size_t m,
                                size_t dv, const attn_nw_variant *v,
                                attn_fault *fault);

#endif /* ATTN_NW_VARIANTS_H */
