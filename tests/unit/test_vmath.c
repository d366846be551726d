/*
 * test_vmath.c — the array exp and tanh of lib/vmath.c against long double
 * expl and tanhl (64-bit significands, so their own error is ~2^-11 of a
 * double's unit in the last place; where long double is no wider than
 * double, as under valgrind, against libm's results with the bounds
 * widened by libm's own error): the worst error in ulps over millions of
 * arguments, the special values, and that the vector lanes and the scalar
 * tail of the same loop give the same bits (and tanh of sums the bits of
 * tanh of the sums); expm1 beside exp against expm1l, and additive
 * attention's features from exponentials against tanhl.
 */
#include "check.h"

#include "attn_internal.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

/* The spacing of doubles at |want| (the subnormal spacing below DBL_MIN). */
static long double ulp_at(long double want) {
    long double a = fabsl(want);
    if (a < (long double)DBL_MIN)
        return ldexpl(1.0L, -1074);
    int e;
    frexpl(a, &e); /* a = f · 2^e, f in [0.5, 1) */
    return ldexpl(1.0L, e - 53);
}

/* A reproducible uniform double in [lo, hi] (splitmix64). */
static double uniform(uint64_t *state, double lo, double hi) {
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    z ^= z >> 31;
    return lo + (hi - lo) * ((double)(z >> 11) * 0x1p-53);
}

enum { N = 1 << 20 };

typedef void (*array_fn)(double *, const double *, size_t);
typedef long double (*exact_fn)(long double);

/* Worst |f(x) - exact(x)| in ulps of exact(x) over n arguments; the worst
 * argument in *at. */
static double worst_ulps(array_fn f, exact_fn exact, const double *x, size_t n,
                         double *at) {
    double *y = malloc(n * sizeof *y);
    assert_non_null(y);
    f(y, x, n);
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        long double want = exact((long double)x[i]);
        double e = (double)(fabsl((long double)y[i] - want) / ulp_at(want));
        if (!(e <= worst)) {
            worst = e;
            *at = x[i];
        }
    }
    free(y);
    return worst;
}

/* 1 when long double carries more bits than double, as on x86-64; under
 * valgrind, whose x87 emulation computes in double, it does not, and expl
 * and tanhl are then only libm's double results. */
static int extended_precision(void) {
    volatile long double one = 1.0L, tiny = 0x1p-60L;
    return one + tiny != one;
}

/* The bound against the exact value, or, without extended precision, the
 * bound against libm (whose own error adds: glibc's exp is within 0.51 ulp
 * and its tanh within 2, so 0.5 and 2 more; for expm1 2 more, as measured
 * under valgrind here). */
static double bound(double exact_ulps, double libm_ulps) {
    return extended_precision() ? exact_ulps : exact_ulps + libm_ulps;
}

static void check_range(array_fn f, exact_fn exact, const char *name, double lo,
                        double hi, double max_ulps) {
    double *x = malloc(N * sizeof *x);
    assert_non_null(x);
    uint64_t state = 42;
    for (size_t i = 0; i < N; i++)
        x[i] = uniform(&state, lo, hi);
    double at = 0.0;
    double worst = worst_ulps(f, exact, x, N, &at);
    printf("# %s on [%g, %g]: worst %.3f ulp at %.17g (against %s)\n", name, lo,
           hi, worst, at,
           extended_precision() ? "long double" : "libm's double");
    free(x);
    assert_true(worst <= max_ulps);
}

static void test_exp_accuracy(void **state) {
    (void)state;
    check_range(attn_exp_n, expl, "exp", -745.0, 709.7,
                bound(1.0, 0.5)); /* and subnormal */
    check_range(attn_exp_n, expl, "exp", -40.0, 0.0, bound(0.8, 0.5));
    check_range(attn_exp_n, expl, "exp", -0.35, 0.35, bound(0.8, 0.5));
    check_range(attn_exp_n, expl, "exp", -745.13, -708.0,
                bound(1.0, 0.5)); /* subnormal */
}

static void test_tanh_accuracy(void **state) {
    (void)state;
    check_range(attn_tanh_n, tanhl, "tanh", -20.0, 20.0, bound(2.5, 2.0));
    check_range(attn_tanh_n, tanhl, "tanh", -1.0, 1.0, bound(2.5, 2.0));
    check_range(attn_tanh_n, tanhl, "tanh", -0.2, 0.2, bound(2.5, 2.0));
    check_range(attn_tanh_n, tanhl, "tanh", -1e-6, 1e-6, bound(2.5, 2.0));
}

/* attn_exp_expm1_n's m against expm1l: within 2.5 ulp (2.0 measured; its
 * e is checked for the bits of attn_exp_n in test_lanes_agree). */
static void expm1_of(double *y, const double *x, size_t n) {
    double *e = malloc(n * sizeof *e);
    assert_non_null(e);
    attn_exp_expm1_n(e, y, x, n);
    free(e);
}

static void test_expm1_accuracy(void **state) {
    (void)state;
    check_range(expm1_of, expm1l, "expm1", -1e-6, 1e-6, bound(2.5, 2.0));
    check_range(expm1_of, expm1l, "expm1", -1.5, 1.5, bound(2.5, 2.0));
    check_range(expm1_of, expm1l, "expm1", -40.0, 40.0, bound(2.5, 2.0));
    check_range(expm1_of, expm1l, "expm1", -700.0, 700.0, bound(2.5, 2.0));
}

/* Worst |feature - tanh(a + b)| of attn_tanh_add_exp_rows, with the
 * features whose sum cancels redone (the rows it marks, by
 * attn_tanh_add_cancel_row, which must give the bits of
 * attn_tanh_add_rows; *n_redone counts them), over
 * rows of H features, in units u = 2^-53 of |a| + |b| + |tanh(a + b)|, and
 * relatively in *worst_rel, with a and b uniform in [-scale, scale]; with
 * near_opposite, b = -a (1 + 1e-6 v): the sums that cancel. */
static double worst_exp_feature(double scale, int near_opposite, double *at_a,
                                double *at_b, double *worst_rel,
                                size_t *n_redone) {
    enum { H = 64, ROWS = N / H };
    double *a = malloc(H * sizeof *a), *ea = malloc(H * sizeof *ea);
    double *ma = malloc(H * sizeof *ma);
    double *b = malloc(N * sizeof *b), *eb = malloc(N * sizeof *eb);
    double *mb = malloc(N * sizeof *mb), *y = malloc(N * sizeof *y);
    assert_true(a && ea && ma && b && eb && mb && y);
    uint64_t s = 11;
    for (size_t c = 0; c < H; c++)
        a[c] = uniform(&s, -scale, scale);
    for (size_t i = 0; i < N; i++)
        b[i] = near_opposite ? -a[i % H] * (1.0 + 1e-6 * uniform(&s, -1, 1))
                             : uniform(&s, -scale, scale);
    for (size_t c = 0; c < H; c++)
        ea[c] = 2.0 * a[c];
    for (size_t i = 0; i < N; i++)
        eb[i] = 2.0 * b[i];
    attn_exp_expm1_n(ea, ma, ea, H);
    attn_exp_expm1_n(eb, mb, eb, N);
    unsigned char *cancels = malloc(ROWS);
    double *t = malloc(H * sizeof *t);
    assert_true(cancels && t);
    attn_tanh_add_exp_rows(y, cancels, a, ea, ma, b, eb, mb, ROWS, H);
    size_t redone = 0;
    for (size_t r = 0; r < ROWS; r++) {
        if (!cancels[r])
            continue;
        attn_tanh_add_cancel_row(y + r * H, a, b + r * H, H);
        attn_tanh_add_rows(t, a, b + r * H, 1, H);
        for (size_t c = 0; c < H; c++) {
            double sum = a[c] + b[r * H + c];
            if (ATTN_TANH_CANCEL * fabs(sum) <
                fabs(a[c]) + fabs(b[r * H + c])) {
                assert_memory_equal(&y[r * H + c], &t[c], sizeof t[c]);
                redone++;
            }
        }
    }
    double worst = 0.0;
    *worst_rel = 0.0;
    for (size_t i = 0; i < N; i++) {
        long double want = tanhl((long double)a[i % H] + (long double)b[i]);
        long double scale_i = fabsl((long double)a[i % H]) +
                              fabsl((long double)b[i]) + fabsl(want);
        long double err = fabsl((long double)y[i] - want);
        double e = (double)(err / (scale_i * 0x1p-53L));
        if (!(e <= worst)) {
            worst = e;
            *at_a = a[i % H];
            *at_b = b[i];
        }
        if (want != 0 && !((double)(err / fabsl(want)) <= *worst_rel))
            *worst_rel = (double)(err / fabsl(want));
    }
    *n_redone = redone;
    free(cancels);
    free(t);
    free(a);
    free(ea);
    free(ma);
    free(b);
    free(eb);
    free(mb);
    free(y);
    return worst;
}

/* Additive attention's features from exponentials: within 3 units of
 * |a| + |b| + |tanh(a + b)| (2.4 measured), as close as a + b is known from
 * projections that are themselves rounded, and within 2^-41 of themselves
 * (the redone features within 2.5 ulp), for tiny and saturating
 * arguments, sums that cancel, and up to the largest arguments allowed
 * (without extended precision, plus tanhl's own error). */
static void test_tanh_add_exp_accuracy(void **state) {
    (void)state;
    const double scales[] = {
        1e-9, 1e-3, 0.3, 0.5, 4.0, 20.0, ATTN_TANH_EXP_MAX};
    for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++) {
        for (int opposite = 0; opposite < 2; opposite++) {
            double a = 0.0, b = 0.0, rel = 0.0;
            size_t redone = 0;
            double worst =
                worst_exp_feature(scales[k], opposite, &a, &b, &rel, &redone);
            printf("# tanh(a + b) from exponentials, a, b in [-%g, %g]%s: "
                   "worst %.3f u(|a| + |b| + |t|) at a = %.17g, b = %.17g; "
                   "worst relative %.3g; %zu redone as tanh\n",
                   scales[k], scales[k], opposite ? ", b near -a" : "", worst,
                   a, b, rel, redone);
            assert_true(worst <= bound(3.0, 4.0));
            assert_true(rel <= (extended_precision() ? 0x1p-41 : 0x1p-40));
            if (opposite)
                assert_true(redone == N); /* every sum cancels */
        }
    }
}

static void test_exp_special(void **state) {
    (void)state;
    const double x[] = {0.0,     -0.0,     1.0,    -1.0,    -INFINITY,
                        -746.0,  -745.2,   -745.1, 709.78,  709.79,
                        1000.0,  INFINITY, 1e-300, -1e-300, 0x1p-1074,
                        -708.39, -1e6};
    const double want[] = {1.0,
                           1.0,
                           2.718281828459045,
                           0.36787944117144233,
                           0.0,
                           0.0,
                           0.0,
                           4.9406564584124654e-324,
                           1.7928227943945155e+308,
                           INFINITY,
                           INFINITY,
                           INFINITY,
                           1.0,
                           1.0,
                           1.0,
                           2.2394014988804677e-308,
                           0.0};
    size_t n = sizeof x / sizeof x[0];
    double y[sizeof x / sizeof x[0]];
    attn_exp_n(y, x, n);
    for (size_t i = 0; i < n; i++) {
        if (y[i] != want[i])
            fail_msg("exp(%.17g) = %.17g, want %.17g", x[i], y[i], want[i]);
    }
    double nan_in = NAN, nan_out;
    attn_exp_n(&nan_out, &nan_in, 1);
    assert_true(isnan(nan_out));
}

static void test_tanh_special(void **state) {
    (void)state;
    const double x[] = {0.0,    -0.0,    INFINITY,  -INFINITY, 25.0,   -25.0,
                        1e-300, -1e-300, 0x1p-1074, 0.5,       -0.1733};
    double y[sizeof x / sizeof x[0]];
    size_t n = sizeof x / sizeof x[0];
    attn_tanh_n(y, x, n);
    for (size_t i = 0; i < n; i++) {
        double want = tanh(x[i]);
        if (fabs(y[i] - want) > 2.0 * DBL_EPSILON * fabs(want) ||
            signbit(y[i]) != signbit(want))
            fail_msg("tanh(%.17g) = %.17g, want %.17g", x[i], y[i], want);
    }
    assert_true(signbit(y[1]) && y[1] == 0.0);
    double nan_in = NAN, nan_out;
    attn_tanh_n(&nan_out, &nan_in, 1);
    assert_true(isnan(nan_out));
}

/* The vector body and the scalar tail run the same operations: one element
 * at a time gives the bits of a whole array, and in-place equals
 * out-of-place. */
static void test_lanes_agree(void **state) {
    (void)state;
    enum { M = 4099 };
    static double x[M], whole[M], one[M], inplace[M];
    uint64_t s = 7;
    array_fn fns[] = {attn_exp_n, attn_tanh_n};
    for (size_t f = 0; f < 2; f++) {
        for (size_t i = 0; i < M; i++)
            x[i] = uniform(&s, -50.0, f == 0 ? 5.0 : 50.0);
        fns[f](whole, x, M);
        for (size_t i = 0; i < M; i++)
            fns[f](&one[i], &x[i], 1);
        memcpy(inplace, x, sizeof x);
        fns[f](inplace, inplace, M);
        assert_memory_equal(whole, one, sizeof whole);
        assert_memory_equal(whole, inplace, sizeof whole);
    }
    /* exp beside expm1: the bits of exp alone */
    for (size_t i = 0; i < M; i++)
        x[i] = uniform(&s, -700.0, 700.0);
    attn_exp_n(whole, x, M);
    attn_exp_expm1_n(one, inplace, x, M);
    assert_memory_equal(whole, one, sizeof whole);
    /* tanh of sums: the bits of tanh of the sums made first */
    static double a[M], b[M], sums[M];
    for (size_t i = 0; i < M; i++) {
        a[i] = uniform(&s, -10.0, 10.0);
        b[i] = uniform(&s, -10.0, 10.0);
    }
    for (size_t i = 0; i < M; i++)
        sums[i] = a[i % 37] + b[i]; /* rows of 37 features */
    attn_tanh_n(whole, sums, M / 37 * 37);
    attn_tanh_add_rows(one, a, b, M / 37, 37);
    assert_memory_equal(whole, one, M / 37 * 37 * sizeof *one);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exp_accuracy),
        cmocka_unit_test(test_tanh_accuracy),
        cmocka_unit_test(test_expm1_accuracy),
        cmocka_unit_test(test_tanh_add_exp_accuracy),
        cmocka_unit_test(test_exp_special),
        cmocka_unit_test(test_tanh_special),
        cmocka_unit_test(test_lanes_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
