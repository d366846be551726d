/*
 * attn_internal.h — helpers shared between libattn's source files; not part
 * of the public interface (lib/attn.h).
 */
#ifndef ATTN_INTERNAL_H
#define ATTN_INTERNAL_H

#include "attn.h"

#include <math.h>
#include <stddef.h>

/* Keys visible to query i of example b form a prefix 0 ... len-1 of the Nk
 * keys, because both valid_lens and either causal alignment admit a prefix.
 * Returns len (0 ... Nk). *by_causal (may be NULL) is set to 1 when len is 0
 * only because of the causal rule (the valid_len alone would leave keys).
 * mask must have passed attn_mask_check; NULL means every key. */
size_t attn_mask_row_len(const attn_mask *mask, size_t b, size_t i, size_t Nq,
                         size_t Nk, int *by_causal);

/* 1 when mask gives a bool_mask, float_mask or key_padding_mask: its rows'
 * visible keys are then not a prefix, and the pattern path runs. */
int attn_mask_has_pattern(const attn_mask *mask);

/* One query row of a mask with a pattern (lib/mask.c): the prefix len
 * that valid_lens and causal admit (attn_mask_row_len), and the row's
 * entries of each pattern mask, (Nk) each, or NULL when that mask is not
 * given. */
typedef struct {
    size_t len;
    const unsigned char *bool_row;
    const double *float_row;
    const unsigned char *pad_row;
} attn_mask_row;

/* The row of query i of head t (of H) of example b; mask checked, not
 * NULL. *by_causal as attn_mask_row_len. */
void attn_mask_row_of(attn_mask_row *r, const attn_mask *mask, size_t b,
                      size_t t, size_t H, size_t i, size_t Nq, size_t Nk,
                      int *by_causal);

/* 1 when the row admits key j (every mask does). */
static inline int attn_mask_row_admits(const attn_mask_row *r, size_t j) {
    return j < r->len && !(r->bool_row && r->bool_row[j]) &&
           !(r->pad_row && r->pad_row[j]) &&
           !(r->float_row && r->float_row[j] == -INFINITY);
}

/* The number of keys the row admits; when none, *by_mask (may be NULL)
 * gets attn_fault's by_mask: 0 when the prefix is empty, else
 * ATTN_BY_KEY_PADDING when the key padding alone hides the prefix, else
 * ATTN_BY_ATTN_MASK. */
size_t attn_mask_row_count(const attn_mask_row *r, size_t Nk, int *by_mask);

/* The mask of head t (of H) of example b alone, for a call with B = 1 on
 * that head's (Nq, Nk) scores: valid_lens, the pattern slabs and the key
 * padding row moved to b (and t); mask may be NULL. */
attn_mask attn_mask_slice(const attn_mask *mask, size_t b, size_t t, size_t H,
                          size_t Nq, size_t Nk);

/* ATTN_OK when every x[0 ... n-1] is finite, else ATTN_E_NONFINITE with
 * fault->index (fault may be NULL) = the first bad index. */
attn_status attn_check_finite(const double *x, size_t n, attn_fault *fault);

/* 1 when n fits the integer type of the CBLAS interface (int). */
int attn_blas_dim_ok(size_t n);

/* y = x·Wᵀ: x (rows, din), W (h, din) in nn.Linear layout -> y (rows, h),
 * by cblas_dgemm in blocks of about 2^24 multiply-adds, stopping with
 * ATTN_E_DEADLINE (y partly written) between blocks once this thread's
 * deadline has passed. Sizes are already checked (rows, din and h within
 * BLAS's int). Else ATTN_OK. */
attn_status attn_project_rows(double *y, const double *x, const double *W,
                              size_t rows, size_t din, size_t h);

/* Plain-loop reference of attn_pool_values (attn.h), for the test
 * oracles; same contract. */
attn_status attn_pool_values_ref(double *out, const double *weights,
                                 const double *v, size_t B, size_t Nq,
                                 size_t Nk, size_t dv, attn_fault *fault);

/* The masked softmax of rows [begin, end) of (B·Nq, Nk) scores (row =
 * b·Nq + i), as attn_softmax_masked does them, after its checks; stops at
 * the first failure (lib/softmax.c). */
attn_status attn_softmax_rows(double *weights, const double *scores,
                              const attn_mask *mask, size_t Nq, size_t Nk,
                              size_t begin, size_t end, attn_fault *fault);

/* 1 once this thread's deadline (attn_deadline_set) has passed. */
int attn_deadline_passed(void);

/* This thread's deadline, 0 when none: attn_parallel_for gives it to the
 * threads it starts. */
double attn_deadline_get(void);

/* This thread's flag (attn_deadline_watch), NULL when none: handed on
 * with the deadline. */
const atomic_int *attn_deadline_watched(void);

/* Reset *fault (may be NULL) to all zeros. */
void attn_fault_clear(attn_fault *fault);

/* Set fault->index (fault may be NULL) and return s. */
attn_status attn_fault_at(attn_fault *fault, size_t index, attn_status s);

/* Run fn(ctx, begin, end) over contiguous ranges covering [0, n): on one
 * thread per online CPU (at most 8), but only as many as give each at
 * least min_per_thread items; the caller's thread takes the first range.
 * Returns when every range is done (lib/parallel.c). */
typedef void (*attn_range_fn)(void *ctx, size_t begin, size_t end);
void attn_parallel_for(size_t n, size_t min_per_thread, attn_range_fn fn,
                       void *ctx);

/* y[i] = exp(x[i]) and y[i] = tanh(x[i]) for i < n (y may alias x), exp
 * within 1 ulp and tanh within 2.5 ulp, the same bits on every CPU
 * (lib/vmath.c). exp gives 0 below -746 and for -inf, +inf above 709.78;
 * NaN stays NaN. */
void attn_exp_n(double *y, const double *x, size_t n);
void attn_tanh_n(double *y, const double *x, size_t n);
/* y[r, c] = tanh(a[c] + b[r, c]) for (rows, h) row-major y and b, the same
 * bits as attn_tanh_n of the sums: additive attention's features of one
 * query against a block of keys. */
void attn_tanh_add_rows(double *y, const double *a, const double *b,
                        size_t rows, size_t h);
/* e[i] = exp(x[i]) (the bits of attn_exp_n; e may alias x) and m[i] =
 * expm1(x[i]) = e^x[i] - 1 within a few ulp of itself, also near 0. */
void attn_exp_expm1_n(double *e, double *m, const double *x, size_t n);
/* The same features as attn_tanh_add_rows from ea[c] = exp(2 a[c]), ma[c]
 * = expm1(2 a[c]), eb[r, c] = exp(2 b[r, c]) and mb[r, c] = expm1(2 b[r,
 * c]) (attn_exp_expm1_n of the doubled projections pa = a, pb = b): within
 * about 2 ulp of |a| + |b| + |tanh(a + b)| of the exact value, the accuracy
 * to which the sum of two rounded projections is known, and 4 times
 * cheaper than tanh. For |a|, |b| <= ATTN_TANH_EXP_MAX, where every ea·eb
 * is a normal double. Where a + b cancels, |a + b| < (|a| + |b|) /
 * ATTN_TANH_CANCEL, that error could exceed 2^-42 of the feature itself:
 * cancels[r] is set to 1 when row r has such a feature (for normal data
 * about one row of 64 in 16), and attn_tanh_add_cancel_row redoes them in
 * one row y (h), b (h) as tanh of the sum, with the bits of
 * attn_tanh_add_rows. Every feature is then also within about 2^-42 of
 * itself relatively. */
#define ATTN_TANH_EXP_MAX 170.0
#define ATTN_TANH_CANCEL 1024.0
void attn_tanh_add_exp_rows(double *y, unsigned char *cancels, const double *pa,
                            const double *ea, const double *ma,
                            const double *pb, const double *eb,
                            const double *mb, size_t rows, size_t h);
void attn_tanh_add_cancel_row(double *y, const double *a, const double *b,
                              size_t h);

/* The softmax's passes over a row, in lib/vmath.c's fixed order (four
 * interleaved partial sums, combined as (l0 + l1) + (l2 + l3), then the
 * tail): attn_max_finite_n sets *max = max x[0 ... n-1] (n >= 1) and
 * returns 1 when every x is finite, else 0; attn_exp_sum_n sets
 * y = exp(x - c) (y may alias x) and returns Σ y; attn_div_n sets
 * y = y / c. */
int attn_max_finite_n(double *max, const double *x, size_t n);
double attn_exp_sum_n(double *y, const double *x, double c, size_t n);
void attn_div_n(double *y, double c, size_t n);

/* Additive attention's projections as attn_additive_forward makes them,
 * for the forward and its trace alike: p = [q·W_qᵀ (B·Nq, h) | k·W_kᵀ
 * (B·Nk, h)] by attn_project_rows, and *exp_form = 1 when every one is
 * within ±ATTN_TANH_EXP_MAX, with then e = exp(2p) and m = expm1(2p)
 * (each B·(Nq + Nk)·h, made in blocks). ATTN_E_DEADLINE when the
 * calling thread's deadline passes between blocks; no other error (the
 * caller checked the sizes). */
attn_status attn_additive_project(double *p, double *e, double *m,
                                  int *exp_form, const double *q,
                                  const double *k, const double *W_q,
                                  const double *W_k, size_t B, size_t Nq,
                                  size_t Nk, size_t dq, size_t dk, size_t h);

/* Nadaraya–Watson's kernel arguments and compact kernels, as
 * attn_nw_predict evaluates them (lib/nw.c), for its trace too:
 * attn_nw_scaled_difference is (x − xᵢ)·w without overflow (x·w − xᵢ·w
 * when the points are more than DBL_MAX apart); attn_nw_kernel_value is
 * K(u) of a compact or the constant kernel (1 for the Gaussian, which
 * nw.c takes in its shifted-logit form). No error. */
double attn_nw_scaled_difference(double x, double xi, double w);
double attn_nw_kernel_value(attn_kernel kernel, double u);

/* y = x·Wᵀ + b for rows of x: x (rows, din), W (dout, din), b (dout) or
 * NULL -> y (rows, dout); b's rows copied first, then one dgemm (beta 1
 * with a bias) per INT_MAX rows. Multi-head attention's projections
 * (lib/multihead.c), made by the same calls for its trace. No error. */
void attn_multihead_project(double *y, const double *x, const double *W,
                            const double *b, size_t rows, size_t din,
                            size_t dout);

#endif /* ATTN_INTERNAL_H */
