/*
 * vmath.c — exp and tanh over whole arrays, for the softmax, the kernels and
 * additive attention's features, where libm's one-call-per-number exp and
 * tanh cost more than the matrix products around them.
 *
 * Each lane is plain IEEE arithmetic (no table, no libm call, no FMA:
 * contraction is off), so the compiler can run several lanes at once (AVX2
 * where the CPU has it, SSE2 otherwise) and every build on every x86-64 CPU
 * gives the same bits. exp is within 1 unit in the last place of the exact
 * value and tanh within 2.5 (tests/unit/test_vmath.c measures the worst
 * case against long double over millions of arguments: 0.83 and 2.3), but
 * they are not always libm's bits.
 *
 * exp: Cody–Waite reduction x = k·ln 2 + r, |r| <= ln 2 / 2 (ln 2 split as
 * in fdlibm's e_exp.c so that k·ln2_hi is exact), then the Taylor polynomial
 * of degree 13 (its remainder is below 2^-55 on that interval), then 2^k
 * applied as two exact powers of two so that subnormal results are rounded
 * once. tanh: (1 - e)/(1 + e) with e = exp(-2|x|) = 2^k (1 + m), rewritten
 * in m where 1 - e would cancel (k = 0 and k = -1, |x| < 3 ln 2 / 4).
 */
#include "attn_internal.h"

#include <stdint.h>
#include <string.h>

#ifdef __clang__
#pragma STDC FP_CONTRACT OFF /* GCC's C11 mode has it off already */
#endif

/* GCC vectorises these loops with its full cost model only (-O3 or this
 * attribute); clang does at -O2 already. */
#if defined(__GNUC__) && !defined(__clang__)
#define VMATH_LOOP                                                             \
    __attribute__((optimize("tree-vectorize", "no-trapping-math")))
#else
#define VMATH_LOOP
#endif
/* A lane's code must sit inside the loop to be vectorised with it. */
#define VMATH_LANE VMATH_LOOP __attribute__((always_inline)) static inline

/* One copy per instruction set, chosen when the program loads. Both copies
 * use the same operations in the same order, so they agree bit for bit. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) &&         \
    !defined(__SANITIZE_ADDRESS__)
#define VMATH_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define VMATH_CLONES
#endif

static const double INV_LN2 = 0x1.71547652b82fep0;
static const double LN2_HI = 0x1.62e42feep-1; /* 32 trailing zero bits */
static const double LN2_LO = 0x1.a39ef35793c76p-33;
static const double SHIFT = 0x1.8p52; /* adding it rounds to an integer */

VMATH_LANE uint64_t bits_of(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

VMATH_LANE double double_of(uint64_t u) {
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* The reduced part of one lane: x = k·ln 2 + r, |r| <= ln 2 / 2 (x within
 * [-746, 710]); returns exp(r) and sets *m = exp(r) - 1 (exact to within
 * an ulp of m: no cancellation), *kd = k, *t = the double whose low bits
 * hold k. */
VMATH_LANE double exp_reduced(double x, double *m, double *kd, double *t) {
    *t = x * INV_LN2 + SHIFT;
    *kd = *t - SHIFT;
    double r = (x - *kd * LN2_HI) - *kd * LN2_LO;

    /* q = (exp(r) - 1 - r) / r² = Σ_{n=2}^{13} r^(n-2) / n!, by Estrin's
     * scheme (pairs, then r², r⁴, r⁸): a short dependency chain, so the
     * lanes of neighbouring elements overlap */
    double r2 = r * r, r4 = r2 * r2, r8 = r4 * r4;
    double p01 = 1.0 / 2.0 + r * (1.0 / 6.0);
    double p23 = 1.0 / 24.0 + r * (1.0 / 120.0);
    double p45 = 1.0 / 720.0 + r * (1.0 / 5040.0);
    double p67 = 1.0 / 40320.0 + r * (1.0 / 362880.0);
    double p89 = 1.0 / 3628800.0 + r * (1.0 / 39916800.0);
    double pab = 1.0 / 479001600.0 + r * (1.0 / 6227020800.0);
    double p03 = p01 + r2 * p23, p47 = p45 + r2 * p67, p8b = p89 + r2 * pab;
    double q = (p03 + r4 * p47) + r8 * p8b;
    double r2q = r2 * q;
    *m = r + r2q;
    /* 1 + r + r²q with 1 + r split exactly into hi + lo (Fast2Sum, as
     * |r| < 1), so that only the last addition rounds at 1's scale */
    double hi = 1.0 + r;
    double lo = (1.0 - hi) + r;
    return hi + (lo + r2q);
}

/* k as an integer, read from t's low bits (see exp_reduced). */
VMATH_LANE uint64_t k_of(double t) {
    return bits_of(t) - bits_of(SHIFT);
}

/* One lane of exp, with exp_reduced's m and k given back (see
 * exp_expm1_lane). Arguments below -746 give 0, above 709.78 give +inf,
 * -inf gives 0, NaN gives NaN. */
VMATH_LANE double exp_parts(double x, double *m, double *kd) {
    x = x < -746.0 ? -746.0 : x;
    x = x > 710.0 ? 710.0 : x;
    double t;
    double p = exp_reduced(x, m, kd, &t);
    /* 2^k = 2^k1 · 2^k2 with k1 = floor(k/2), k2 = k - k1, both normal for
     * k in [-1077, 1024], so a subnormal result is rounded once */
    uint64_t ki = k_of(t);
    uint64_t k1 = ((ki + 2048u) >> 1) - 1024u;
    uint64_t k2 = ki - k1;
    double s1 = double_of((k1 + 1023u) << 52);
    double s2 = double_of((k2 + 1023u) << 52);
    return (p * s1) * s2;
}

VMATH_LANE double exp_lane(double x) {
    double m, kd;
    return exp_parts(x, &m, &kd);
}

/* One lane of tanh, from e = exp(-2|x|) = 2^k (1 + m). Beyond |x| = 19.5
 * tanh rounds to ±1, so the argument is clamped there and 2^k (k >= -57)
 * is one normal power of two. Where 1 - e would cancel (k = 0, -1) the
 * fraction is rewritten in m: -m / (2 + m) and (1 - m) / (3 + m). */
VMATH_LANE double tanh_lane(double x) {
    double a = x < 0.0 ? -x : x;
    a = a > 19.5 ? 19.5 : a;
    double m, k, t;
    double p = exp_reduced(-2.0 * a, &m, &k, &t);
    double e = p * double_of((k_of(t) + 1023u) << 52);
    double num = k == 0.0 ? -m : k == -1.0 ? 1.0 - m : 1.0 - e;
    double den = k == 0.0 ? 2.0 + m : k == -1.0 ? 3.0 + m : 1.0 + e;
    return __builtin_copysign(num / den, x);
}

VMATH_CLONES VMATH_LOOP void attn_exp_n(double *y, const double *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        y[i] = exp_lane(x[i]);
}

VMATH_CLONES VMATH_LOOP void attn_tanh_n(double *y, const double *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        y[i] = tanh_lane(x[i]);
}

VMATH_CLONES VMATH_LOOP void attn_tanh_add_rows(double *y, const double *a,
                                                const double *b, size_t rows,
                                                size_t h) {
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < h; c++)
            y[r * h + c] = tanh_lane(a[c] + b[r * h + c]);
}

/* One lane of exp and expm1 together: *e as exp_lane gives it, and
 * *m = e^x - 1 within a few ulp of itself, from exp_reduced's m where the
 * subtraction would cancel (k = 0, and k = ±1: 2(1 + m) - 1 = 1 + 2m,
 * (1 + m)/2 - 1 = (m - 1)/2, each one rounding), else *e - 1, which is then
 * at least 0.6 away from 0. */
VMATH_LANE void exp_expm1_lane(double x, double *e, double *m1) {
    double m, kd;
    double ex = exp_parts(x, &m, &kd);
    *e = ex;
    *m1 = kd == 0.0    ? m
          : kd == 1.0  ? 1.0 + 2.0 * m
          : kd == -1.0 ? 0.5 * m - 0.5
                       : ex - 1.0;
}

VMATH_CLONES VMATH_LOOP void attn_exp_expm1_n(double *e, double *m,
                                              const double *x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        double xi = x[i], ei, mi;
        exp_expm1_lane(xi, &ei, &mi);
        e[i] = ei;
        m[i] = mi;
    }
}

/* tanh(a + b) = n / (n + 2) with n = e^(2(a+b)) - 1, from the exponentials
 * of 2a and 2b (e) and their expm1 (m): n = ea·eb - 1 in general, and
 * n = ma + mb + ma·mb when both are small (m in [-0.5, 1], |a|, |b| below
 * about 0.35), where ea·eb - 1 would cancel. So a feature costs a few
 * products, a selection and one division (0.9 ns against 3.6 for
 * tanh_lane, measured here), and is within about 2 ulp of the scale
 * |a| + |b| + |tanh(a + b)| of the exact value (tests/unit/test_vmath.c):
 * as close as the projections a and b are known themselves, but where a + b
 * cancels not close relatively (attn_tanh_add_cancel_row redoes those).
 * The caller keeps ea·eb a normal double. */
VMATH_CLONES VMATH_LOOP void
attn_tanh_add_exp_rows(double *y, unsigned char *cancels, const double *pa,
                       const double *ea, const double *ma, const double *pb,
                       const double *eb, const double *mb, size_t rows,
                       size_t h) {
    for (size_t r = 0; r < rows; r++) {
        uint64_t any = 0;
        for (size_t c = 0; c < h; c++) {
            double a = ma[c], b = mb[r * h + c];
            double n_small = (a + b) + a * b;
            double n_large = ea[c] * eb[r * h + c] - 1.0;
            int small = (a >= -0.5) & (a <= 1.0) & (b >= -0.5) & (b <= 1.0);
            double n = small ? n_small : n_large;
            y[r * h + c] = n / (n + 2.0);
            double ac = pa[c], bc = pb[r * h + c], sum = ac + bc;
            any |= (uint64_t)(ATTN_TANH_CANCEL * __builtin_fabs(sum) <
                              __builtin_fabs(ac) + __builtin_fabs(bc));
        }
        cancels[r] = any != 0;
    }
}

/* One tanh_lane, out of line: attn_tanh_add_cancel_row calls it for a few
 * elements only, and must not be vectorised into computing it for all. */
VMATH_LOOP __attribute__((noinline)) static double tanh_one(double x) {
    return tanh_lane(x);
}

VMATH_LOOP void attn_tanh_add_cancel_row(double *y, const double *a,
                                         const double *b, size_t h) {
    for (size_t c = 0; c < h; c++) {
        double sum = a[c] + b[c];
        if (ATTN_TANH_CANCEL * __builtin_fabs(sum) <
            __builtin_fabs(a[c]) + __builtin_fabs(b[c]))
            y[c] = tanh_one(sum);
    }
}

/* The reductions below keep four running lanes (element j goes to lane
 * j mod 4) and combine them as (l0 + l1) + (l2 + l3), then the tail in
 * order: one fixed order, whether or not the CPU has vector units. */

VMATH_CLONES VMATH_LOOP int attn_max_finite_n(double *max, const double *x,
                                              size_t n) {
    double m[4] = {x[0], x[0], x[0], x[0]}, f[4] = {0.0, 0.0, 0.0, 0.0};
    size_t j = 0;
    for (; j + 4 <= n; j += 4) {
        for (size_t l = 0; l < 4; l++) {
            double v = x[j + l];
            m[l] = v > m[l] ? v : m[l];
            f[l] += v - v; /* 0 when finite, NaN otherwise */
        }
    }
    double mx = m[0] > m[1] ? m[0] : m[1];
    double m23 = m[2] > m[3] ? m[2] : m[3];
    mx = m23 > mx ? m23 : mx;
    double fin = (f[0] + f[1]) + (f[2] + f[3]);
    for (; j < n; j++) {
        mx = x[j] > mx ? x[j] : mx;
        fin += x[j] - x[j];
    }
    *max = mx;
    return fin == 0.0;
}

VMATH_CLONES VMATH_LOOP double attn_exp_sum_n(double *y, const double *x,
                                              double c, size_t n) {
    double a[4] = {0.0, 0.0, 0.0, 0.0};
    size_t j = 0;
    for (; j + 4 <= n; j += 4) {
        for (size_t l = 0; l < 4; l++) {
            y[j + l] = exp_lane(x[j + l] - c);
            a[l] += y[j + l];
        }
    }
    double sum = (a[0] + a[1]) + (a[2] + a[3]);
    for (; j < n; j++) {
        y[j] = exp_lane(x[j] - c);
        sum += y[j];
    }
    return sum;
}

VMATH_CLONES VMATH_LOOP void attn_div_n(double *y, double c, size_t n) {
    for (size_t i = 0; i < n; i++)
        y[i] = y[i] / c;
}
