/*
 * backward_check.h — what the gradient tests share: random data from the
 * library's generator, random masks, and the finite-difference oracle.
 *
 * Oracle: for a scalar loss L(x) = Σ grad_out ⊙ forward(x), each dL/dx[t]
 * is estimated by the fourth-order central difference
 *     (−L(x + 2ε) + 8 L(x + ε) − 8 L(x − ε) + L(x − 2ε)) / (12 ε),
 * ε = 1e-4 · max(1, |x[t]|) (truncation error O(ε⁴), rounding about
 * 1e-16 · |L| / ε). The gradient is then compared by the relative error
 *     |analytic − numeric| / max(|analytic|, |numeric|, FD_FLOOR),
 * FD_FLOOR = 1e-3: relative for every gradient above 1e-3, and an absolute
 * 1e-9 bound below, where the rounding of L dominates any difference.
 *
 * Torch autograd vectors (tests/vectors/grads_*.txt, read with vectors.h)
 * come with their sizes, tensors and mask; the bw_vector_* helpers unpack
 * those.
 */
#ifndef BACKWARD_CHECK_H
#define BACKWARD_CHECK_H

#include "check.h"

#include "attn.h"
#include "vectors.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FD_FLOOR 1e-3
#define FD_TOL 1e-6

static inline double *bw_alloc(size_t n) {
    double *p = calloc(n ? n : 1, sizeof(double));
    assert_non_null(p);
    return p;
}

/* 1 ... max, uniformly. */
static inline size_t bw_size(attn_rng *rng, size_t max) {
    return 1 + (size_t)(attn_rng_uniform(rng) * (double)max);
}

/* n standard normals times sd. */
static inline void bw_normals(attn_rng *rng, double *x, size_t n, double sd) {
    attn_rng_normals(rng, x, n);
    for (size_t i = 0; i < n; i++)
        x[i] *= sd;
}

/* A random mask over (B, Nq, Nk): valid_lens none, (B) or (B, Nq) with
 * entries 0 ... Nk, any causal rule, and the given policy. lens must hold
 * B·Nq entries. */
static inline attn_mask bw_random_mask(attn_rng *rng, int64_t *lens, size_t B,
                                       size_t Nq, size_t Nk,
                                       attn_fully_masked policy) {
    attn_mask m = {0};
    double u = attn_rng_uniform(rng);
    if (u < 0.7) {
        m.per_query = u < 0.35;
        size_t count = m.per_query ? B * Nq : B;
        for (size_t t = 0; t < count; t++)
            lens[t] = (int64_t)(attn_rng_uniform(rng) * (double)(Nk + 1));
        m.valid_lens = lens;
    }
    m.causal = (attn_causal)(attn_rng_uniform(rng) * 3.0);
    m.fully_masked = policy;
    return m;
}

/* Number of (b, i) rows of the mask that see no key. */
static inline size_t bw_fully_masked_rows(const attn_mask *m, size_t B,
                                          size_t Nq, size_t Nk) {
    size_t n = 0;
    for (size_t b = 0; b < B; b++) {
        for (size_t i = 0; i < Nq; i++) {
            size_t seen = 0;
            for (size_t j = 0; j < Nk; j++)
                seen += (size_t)attn_mask_visible(m, b, i, j, Nq, Nk);
            n += seen == 0;
        }
    }
    return n;
}

/* Σ a ⊙ b over n. */
static inline double bw_dot(const double *a, const double *b, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++)
        s += a[i] * b[i];
    return s;
}

/* The loss L at the current inputs, computed by the forward pass. */
typedef double (*bw_loss_fn)(void *ctx);

static inline double bw_rel_err(double analytic, double numeric) {
    double den = fmax(fmax(fabs(analytic), fabs(numeric)), FD_FLOOR);
    double e = fabs(analytic - numeric) / den;
    return isnan(e) ? INFINITY : e;
}

/* Worst relative error of grad (n) against finite differences of loss in
 * x (n, perturbed in place and restored). *at gets its index, *numeric_at
 * the numeric value there. */
static inline double bw_fd_worst(const double *grad, double *x, size_t n,
                                 bw_loss_fn loss, void *ctx, size_t *at,
                                 double *numeric_at) {
    double worst = 0.0;
    *at = 0;
    *numeric_at = 0.0;
    for (size_t t = 0; t < n; t++) {
        const double x0 = x[t];
        const double eps = 1e-4 * fmax(1.0, fabs(x0));
        double L[4];
        const double steps[4] = {2.0, 1.0, -1.0, -2.0};
        for (int s = 0; s < 4; s++) {
            x[t] = x0 + steps[s] * eps;
            L[s] = loss(ctx);
        }
        x[t] = x0;
        double numeric =
            (-L[0] + 8.0 * L[1] - 8.0 * L[2] + L[3]) / (12.0 * eps);
        double e = bw_rel_err(grad[t], numeric);
        if (e > worst) {
            worst = e;
            *at = t;
            *numeric_at = numeric;
        }
    }
    return worst;
}

/* Asserts grad matches the finite differences within FD_TOL and folds the
 * worst error into *worst. */
static inline void bw_check_fd(const double *grad, double *x, size_t n,
                               bw_loss_fn loss, void *ctx, double *worst,
                               const char *what, const char *file, int line) {
    size_t at;
    double numeric;
    double e = bw_fd_worst(grad, x, n, loss, ctx, &at, &numeric);
    if (e > *worst)
        *worst = e;
    if (e <= FD_TOL)
        return;
    print_error("%s: relative error %.3g > %.3g at [%zu]: analytic %.17g, "
                "finite differences %.17g\n",
                what, e, FD_TOL, at, grad[at], numeric);
    _fail(file, line);
}

#define assert_grad_fd(grad, x, n, loss, ctx, worst)                           \
    bw_check_fd((grad), (x), (n), (loss), (ctx), (worst), #grad, __FILE__,     \
                __LINE__)

/* Worst check_diff of got against want, folded into *worst, asserted
 * within tol. */
#define assert_close_worst(got, want, n, tol, worst)                           \
    do {                                                                       \
        size_t at_;                                                            \
        double d_ = check_worst((got), (want), (n), &at_);                     \
        if (d_ > *(worst))                                                     \
            *(worst) = d_;                                                     \
        assert_close((got), (want), (n), (tol));                               \
    } while (0)

/* The case's "sizes" field, asserted to hold exactly n entries, into
 * z[0 .. n-1]. */
static inline void bw_vector_sizes(size_t *z, const vec_case *vc, size_t n) {
    const vec_tensor *sz = vec_get(vc, "sizes");
    assert_non_null(sz);
    assert_int_equal(sz->count, n);
    for (size_t i = 0; i < n; i++)
        z[i] = (size_t)sz->data[i];
}

/* The case's field `name`, asserted to hold exactly n doubles, into dst. */
static inline void bw_vector_copy(double *dst, const vec_case *vc,
                                  const char *name, size_t n) {
    const vec_tensor *t = vec_get(vc, name);
    assert_non_null(t);
    assert_int_equal(t->count, n);
    memcpy(dst, t->data, n * sizeof(double));
}

/* The case's mask into *m: valid_lens (B) or (B, Nq), when present, copied
 * into lens (room for every entry) and its causal rule. The fully masked
 * policy is left as it is (bw_vector_policy reads it). */
static inline void bw_vector_mask(attn_mask *m, int64_t *lens,
                                  const vec_case *vc) {
    const vec_tensor *vl = vec_get(vc, "valid_lens");
    if (vl) {
        for (size_t i = 0; i < vl->count; i++)
            lens[i] = (int64_t)vl->data[i];
        m->valid_lens = lens;
        m->per_query = vl->rank == 2;
    }
    m->causal = (attn_causal)vec_data(vc, "causal")[0];
}

/* The case's fully masked policy: 1 → uniform, else zero. */
static inline attn_fully_masked bw_vector_policy(const vec_case *vc) {
    return vec_data(vc, "fully_masked")[0] == 1.0 ? ATTN_FULLY_MASKED_UNIFORM
                                                  : ATTN_FULLY_MASKED_ZERO;
}

#endif /* BACKWARD_CHECK_H */
