/*
 * test_bandwidth_edges.c — NW bandwidth rules at the edges of doubles and
 * of compact kernels' supports, each against a long double computation of
 * the contract's formula written here:
 *   - Scott / Silverman on x spaced 1e-300, at unit scale, spaced 1e300
 *     and near ±DBL_MAX;
 *   - the leave-one-out error at x near ±DBL_MAX and at an h whose 1/h
 *     overflows;
 *   - "cv": the LOO error at the chosen h (and at 1/w read back) is no
 *     worse than the best point of the contract's grid, 200 points
 *     lo·(hi/lo)^(k/199) over [gap/20, 100·range] scored in long double,
 *     on cases where a grid point lies within ulps of a pair distance and
 *     on fixed random cases, at unit scale and scaled by 2^-1000 and by
 *     about 2^1017 (where 100·range is beyond DBL_MAX).
 */
#include "check.h"

#include "attn.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

#define GRID 200

/* The long double references need its wider exponent (x86-64's 80-bit
 * format): squares of 1e-300 and sums near DBL_MAX must not under- or
 * overflow there. */
#define LD_WIDE (LDBL_MAX_EXP >= 16384)

/* |got/want − 1| <= tol, printing both when not. */
#define assert_rel(got, want, tol)                                             \
    do {                                                                       \
        const double g_ = (got), w_ = (want);                                  \
        const double r_ = fabs(g_ / w_ - 1.0);                                 \
        if (!(r_ <= (tol))) {                                                  \
            print_error("%s: %.17g vs %.17g, relative %.3g > %.3g\n", #got,    \
                        g_, w_, r_, (double)(tol));                            \
            fail();                                                            \
        }                                                                      \
    } while (0)

/* --------------------------------------------- long double references */

static int cmp_ld(const void *pa, const void *pb) {
    long double a = *(const long double *)pa, b = *(const long double *)pb;
    return (a > b) - (a < b);
}

/* numpy.quantile's linear method on sorted s. */
static long double ld_quantile(const long double *s, size_t n, long double p) {
    long double pos = (long double)(n - 1) * p;
    size_t lo = (size_t)floorl(pos);
    if (lo >= n - 1)
        return s[n - 1];
    long double t = pos - (long double)lo;
    return s[lo] + (s[lo + 1] - s[lo]) * t;
}

/* h = factor·A·n^(−1/5), A = min(sd, IQR/1.349), sd alone when IQR is 0 */
static long double ld_rule(const double *x, size_t n, long double factor) {
    long double *s = malloc(n * sizeof *s), mean = 0.0L, ss = 0.0L;
    assert_non_null(s);
    for (size_t i = 0; i < n; i++) {
        s[i] = x[i];
        mean += s[i];
    }
    mean /= (long double)n;
    for (size_t i = 0; i < n; i++)
        ss += (s[i] - mean) * (s[i] - mean);
    qsort(s, n, sizeof *s, cmp_ld);
    long double sd = sqrtl(ss / (long double)(n - 1));
    long double iqr = ld_quantile(s, n, 0.75L) - ld_quantile(s, n, 0.25L);
    free(s);
    long double a = iqr > 0.0L && iqr / 1.349L < sd ? iqr / 1.349L : sd;
    return factor * a * powl((long double)n, -0.2L);
}

/* Σᵢ Σ_c (yᵢ − ŷ₋ᵢ)², u = |xᵢ − xⱼ|/h, support |xᵢ − xⱼ| < h, the
 * Gaussian shifted by its largest weight; inf at zero mass. */
static long double ld_loo(const double *x, const double *y, size_t n, size_t dv,
                          attn_kernel kernel, long double h) {
    long double total = 0.0L, pred[4];
    assert_true(dv <= 4);
    for (size_t i = 0; i < n; i++) {
        long double umin = INFINITY, mass = 0.0L;
        for (size_t j = 0; j < n; j++) {
            long double u = fabsl((long double)x[i] - x[j]) / h;
            if (j != i && u < umin)
                umin = u;
        }
        for (size_t c = 0; c < dv; c++)
            pred[c] = 0.0L;
        for (size_t j = 0; j < n; j++) {
            if (j == i)
                continue;
            long double d = fabsl((long double)x[i] - x[j]), u = d / h, k;
            switch (kernel) {
            case ATTN_KERNEL_GAUSSIAN:
                k = expl(-(u - umin) * (u + umin) / 2.0L);
                break;
            case ATTN_KERNEL_BOXCAR:
                k = d < h ? 1.0L : 0.0L;
                break;
            case ATTN_KERNEL_EPANECHNIKOV:
                k = d < h ? 1.0L - u * u : 0.0L;
                break;
            case ATTN_KERNEL_TRIANGULAR:
                k = d < h ? 1.0L - u : 0.0L;
                break;
            default:
                k = 1.0L;
            }
            mass += k;
            for (size_t c = 0; c < dv; c++)
                pred[c] += k * y[j * dv + c];
        }
        if (!(mass > 0.0L))
            return INFINITY;
        for (size_t c = 0; c < dv; c++) {
            long double e = y[i * dv + c] - pred[c] / mass;
            total += e * e;
        }
    }
    return total;
}

/* The least LOO error over the contract's grid: h_k = lo·(hi/lo)^(k/199),
 * lo = smallest positive gap / 20, hi = 100·range, in long double. */
static long double ld_grid_min(const double *x, size_t n, const double *y,
                               size_t dv, attn_kernel kernel) {
    long double *s = malloc(n * sizeof *s), gap = INFINITY;
    assert_non_null(s);
    for (size_t i = 0; i < n; i++)
        s[i] = x[i];
    qsort(s, n, sizeof *s, cmp_ld);
    for (size_t i = 1; i < n; i++) {
        if (s[i] > s[i - 1] && s[i] - s[i - 1] < gap)
            gap = s[i] - s[i - 1];
    }
    long double lo = gap / 20.0L, hi = 100.0L * (s[n - 1] - s[0]);
    free(s);
    long double best = INFINITY;
    for (int k = 0; k < GRID; k++) {
        long double h = k == 0          ? lo
                        : k == GRID - 1 ? hi
                                        : lo * powl(hi / lo, k / 199.0L);
        long double f = ld_loo(x, y, n, dv, kernel, h);
        if (f < best)
            best = f;
    }
    return best;
}

static double sum_sq(const double *y, size_t count) {
    double s = 0.0;
    for (size_t i = 0; i < count; i++)
        s += y[i] * y[i];
    return s;
}

/* ------------------------------------------------------ rules of thumb */

/* Scott and Silverman within 1e-14 of the long double formula, w = 1/h. */
static void check_rules(const double *x, size_t n) {
    const attn_nw_bw_rule rule[2] = {ATTN_NW_BW_SCOTT, ATTN_NW_BW_SILVERMAN};
    const long double factor[2] = {1.059L, 0.9L};
    for (int r = 0; r < 2; r++) {
        double h = 0.0, w = 0.0;
        assert_int_equal(attn_nw_bandwidth(&h, &w, x, NULL,
                                           ATTN_KERNEL_GAUSSIAN, rule[r], n, 0),
                         ATTN_OK);
        long double want = ld_rule(x, n, factor[r]);
        assert_rel(h, (double)want, 1e-14);
        assert_true(w == 1.0 / h);
        assert_rel(w, (double)(1.0L / want), 1e-14);
    }
}

/* x spaced 1e-300 (whose squared deviations underflow: sd was taken as 0
 * and "no finite w" answered), at unit scale, spaced 1e300, and near
 * ±DBL_MAX, where the mean's sum, the squares and the IQR's difference
 * overflow; with and without a zero IQR. */
static void test_rules_scales(void **state) {
    (void)state;
    if (!LD_WIDE)
        skip();
    enum { n = 50 };
    double z[n], x[n];
    attn_rng rng;
    attn_rng_seed(&rng, 21);
    attn_rng_normals(&rng, z, n);
    const double scales[] = {1e-300, 1e-150, 1.0, 1e150, 1e300};
    for (size_t s = 0; s < sizeof scales / sizeof *scales; s++) {
        for (size_t i = 0; i < n; i++)
            x[i] = z[i] * scales[s];
        check_rules(x, n);
    }
    const double tiny[] = {0, 1e-300, 2e-300, 3e-300, 4e-300};
    check_rules(tiny, 5);
    double h, w;
    assert_int_equal(attn_nw_bandwidth(&h, &w, tiny, NULL, ATTN_KERNEL_GAUSSIAN,
                                       ATTN_NW_BW_SILVERMAN, 5, 0),
                     ATTN_OK);
    /* IQR 2e-300 / 1.349 < sd: 0.9·1.4826e-300·5^(-1/5) */
    assert_rel(w, 1.0340307296173213e+300, 1e-15);
    const double huge[] = {0, 1e300, 2e300, 3e300, 4e300};
    check_rules(huge, 5);
    /* IQR 0: A = sd = 1e308·sqrt(2/7), whose square is beyond DBL_MAX */
    const double iqr0[] = {-1e308, 0, 0, 0, 0, 0, 0, 1e308};
    check_rules(iqr0, 8);
    /* the sum of the first two and the range overflow */
    const double edge[] = {1.7e308, 1.6e308, -1.6e308, -1.7e308};
    check_rules(edge, 4);
    const double two[] = {-DBL_MAX, DBL_MAX};
    check_rules(two, 2);
    /* h below 1/DBL_MAX: w overflows, the existing error */
    const double sub[] = {0, 1e-310, 2e-310, 4e-310};
    assert_int_equal(attn_nw_bandwidth(&h, &w, sub, NULL, ATTN_KERNEL_GAUSSIAN,
                                       ATTN_NW_BW_SCOTT, 4, 0),
                     ATTN_E_NONFINITE);
}

/* ---------------------------------------------------- LOO at the edges */

/* attn_nw_loo_sse within 1e-12 of the long double sum: x near ±DBL_MAX
 * (distances beyond DBL_MAX, which (xᵢ − xⱼ)·w made inf) at h 1e308, and
 * x spaced 1e-310 at an h whose 1/h overflows (refused before). */
static void test_loo_scales(void **state) {
    (void)state;
    if (!LD_WIDE)
        skip();
    const double big[] = {-1.5e308, -1e308, 0.0, 1e308, 1.5e308};
    const double y[] = {1.0, 2.0, 3.0, 4.0, 5.0, -1.0, 0.5, 2.5, 1.5, 0.0};
    const attn_kernel kernels[] = {ATTN_KERNEL_GAUSSIAN, ATTN_KERNEL_BOXCAR,
                                   ATTN_KERNEL_EPANECHNIKOV,
                                   ATTN_KERNEL_TRIANGULAR};
    double sse;
    for (size_t k = 0; k < 4; k++) {
        for (size_t dv = 1; dv <= 2; dv++) {
            assert_int_equal(
                attn_nw_loo_sse(&sse, big, y, kernels[k], 1.6e308, 5, dv, NULL),
                ATTN_OK);
            assert_rel(sse, (double)ld_loo(big, y, 5, dv, kernels[k], 1.6e308L),
                       1e-12);
        }
    }
    assert_int_equal(
        attn_nw_loo_sse(&sse, big, y, ATTN_KERNEL_GAUSSIAN, 1e308, 5, 1, NULL),
        ATTN_OK);
    assert_rel(sse, (double)ld_loo(big, y, 5, 1, ATTN_KERNEL_GAUSSIAN, 1e308L),
               1e-12);
    const double sub[] = {0.0, 1e-310, 3e-310, 4e-310, 7e-310};
    for (size_t k = 0; k < 4; k++) {
        assert_int_equal(
            attn_nw_loo_sse(&sse, sub, y, kernels[k], 3.5e-310, 5, 2, NULL),
            ATTN_OK);
        /* sub's values are subnormal: the reference takes them as stored */
        assert_rel(sse, (double)ld_loo(sub, y, 5, 2, kernels[k], 3.5e-310L),
                   1e-12);
    }
}

/* ------------------------------------------------ cv against the grid */

/* CV's h and w: LOO error at h, and at 1/w read back, no worse than the
 * long double grid's best (rel_tol; plus rounding noise against Σy²),
 * and the same at both. Returns h. */
static double check_cv(const double *x, const double *y, size_t n, size_t dv,
                       attn_kernel kernel, double rel_tol) {
    double h, w, sse, sse_w;
    assert_int_equal(
        attn_nw_bandwidth(&h, &w, x, y, kernel, ATTN_NW_BW_CV, n, dv), ATTN_OK);
    assert_true(w == 1.0 / h);
    long double best = ld_grid_min(x, n, y, dv, kernel);
    assert_true(isfinite(best));
    assert_int_equal(attn_nw_loo_sse(&sse, x, y, kernel, h, n, dv, NULL),
                     ATTN_OK);
    assert_int_equal(
        attn_nw_loo_sse(&sse_w, x, y, kernel, 1.0 / w, n, dv, NULL), ATTN_OK);
    const double limit =
        (double)best * (1.0 + rel_tol) + 1e-24 * sum_sq(y, n * dv);
    if (!(sse <= limit && sse_w <= limit)) {
        print_error("kernel %d, n %zu: LOO error %.17g at h %.17g (%.17g at "
                    "1/w) > grid best %.17Lg\n",
                    (int)kernel, n, sse, h, sse_w, best);
        fail();
    }
    if (kernel == ATTN_KERNEL_BOXCAR)
        assert_true(sse_w == sse);
    else
        assert_rel(sse_w + 1e-300, sse + 1e-300, 1e-9);
    return h;
}

/* Cases where a pair distance G lies within ulps below the contract's grid
 * point h_k (x: gap 1 and range 2000, so lo = 0.05 and hi = 200000): the
 * error is 0 for h in (G, B], B = G·(1 + 1e-9), where point 0 sees only G
 * (y equal) and -B only its partner; below G point 0 has no neighbour, above
 * B it mixes in -B's y. Only h_k falls in (G, B]. Before: h_69 computed as
 * lo·exp(step·k) fell 4 ulps below G = 9.73030567525374 (h_69 − G =
 * 5.5e-16·h), and h_74 likewise; h_63 and h_70 round to G itself, at which
 * (G − 0)·(1/G) rounded to 1 (and G/G is 1): the grid's best point was
 * missed, golden section cannot find a plateau 1e-9 wide, and the answer
 * had error 12.5 or 20.5 (boxcar) or 6.2 or 10.2 (the others) for 0. */
static const double edge_x[][8] = {
    /* k = 69 */
    {-1000, -999, -10.730305684984048, -9.7303056849840477, 0,
     9.7303056752537405, 999, 1000},
    /* k = 70 */
    {-1000, -999, -11.502741222998949, -10.502741222998949, 0,
     10.502741212496208, 999, 1000},
    /* k = 63 */
    {-1000, -999, -7.1527518406051396, -6.1527518406051396, 0,
     6.1527518344523875, 999, 1000},
    /* k = 74 */
    {-1000, -999, -15.256318471064983, -14.256318471064983, 0,
     14.256318456808664, 999, 1000},
};

static void test_cv_edge_cases(void **state) {
    (void)state;
    if (!LD_WIDE)
        skip();
    const double y1[8] = {0, 0, 5, 5, 0, 0, 0, 0};
    const double y2[16] = {0, 1, 0, 1, 5, -3, 5, -3, 0, 1, 0, 1, 0, 1, 0, 1};
    const attn_kernel kernels[] = {ATTN_KERNEL_BOXCAR, ATTN_KERNEL_EPANECHNIKOV,
                                   ATTN_KERNEL_TRIANGULAR};
    for (size_t c = 0; c < 4; c++) {
        /* the construction: the grid's best is 0 */
        assert_true(ld_grid_min(edge_x[c], 8, y1, 1, ATTN_KERNEL_BOXCAR) ==
                    0.0L);
        for (size_t k = 0; k < 3; k++) {
            for (size_t dv = 1; dv <= 2; dv++) {
                const double *y = dv == 1 ? y1 : y2;
                double h = check_cv(edge_x[c], y, 8, dv, kernels[k], 1e-12);
                /* inside (G, B], away from G by about 2e-12·h */
                double g = edge_x[c][5], b = -edge_x[c][3];
                assert_true(h > g * (1.0 + 1e-12) && h < b);
            }
        }
    }
}

/* The same construction with G one ulp below golden section's first point
 * c = b − 0.618·(b − a) in the bracket (a, b) = (h_73, h_75) about the
 * grid's best, h_74 (error 12.5; no grid point is in (G, B]): c finds
 * error 0 there, but 1/(1/c) = G, where point 0 has no neighbour left.
 * The answer moves to about G·(1 + 2e-12), the same error and read back
 * the same. (Tied to the grid's and golden section's arithmetic: h
 * outside (G, B] means c moved, and G must follow it.) */
static void test_cv_golden_edge(void **state) {
    (void)state;
    if (!LD_WIDE)
        skip();
    const double x[8] = {-1000,
                         -999,
                         -15.040594734441829,
                         -14.040594734441829,
                         0,
                         14.040594720401232,
                         999,
                         1000};
    const double y[8] = {0, 0, 5, 5, 0, 0, 0, 0};
    const double g = x[5], b = -x[3], c = nextafter(g, INFINITY);
    assert_true(1.0 / (1.0 / c) == g);
    double h = check_cv(x, y, 8, 1, ATTN_KERNEL_BOXCAR, 1e-12), sse;
    assert_true(h > g * (1.0 + 1e-12) && h < b);
    assert_int_equal(
        attn_nw_loo_sse(&sse, x, y, ATTN_KERNEL_BOXCAR, h, 8, 1, NULL),
        ATTN_OK);
    assert_true(sse == 0.0);
}

/* Fixed random cases (n 5..60, x uniform or with ties, y 1 or 2 columns,
 * every kernel), no worse than the long double grid: at unit scale, with
 * x scaled by 2^-1000, and with x scaled by the least 2^s that puts
 * 100·range beyond DBL_MAX (where "no finite w" was answered) when h·2^s
 * stays below DBL_MAX/2; h scales exactly alike. */
static void test_cv_fixed_cases(void **state) {
    (void)state;
    if (!LD_WIDE)
        skip();
    enum { cases = 10, max_n = 60 };
    const attn_kernel kernels[] = {ATTN_KERNEL_GAUSSIAN, ATTN_KERNEL_BOXCAR,
                                   ATTN_KERNEL_EPANECHNIKOV,
                                   ATTN_KERNEL_TRIANGULAR};
    double x[max_n], xs[max_n], y[2 * max_n];
    size_t huge = 0;
    attn_rng rng;
    attn_rng_seed(&rng, 1234);
    for (size_t t = 0; t < cases; t++) {
        size_t n = 5 + (size_t)(attn_rng_uniform(&rng) * 56.0);
        size_t dv = 1 + t % 2;
        attn_kernel kernel = kernels[t % 4];
        double lo = INFINITY, hi = -INFINITY;
        for (size_t i = 0; i < n; i++) {
            x[i] = 5.0 * attn_rng_uniform(&rng);
            if (t >= 6) /* ties: x on 12 values */
                x[i] = floor(x[i] * 2.4) / 2.4;
            lo = fmin(lo, x[i]);
            hi = fmax(hi, x[i]);
        }
        attn_rng_normals(&rng, y, n * dv);
        /* continuous kernels: golden section's end in double against the
         * grid point's error in long double */
        double tol = kernel == ATTN_KERNEL_BOXCAR ? 1e-12 : 1e-9;
        double h = check_cv(x, y, n, dv, kernel, tol);
        int shifts[2] = {-1000, 0};
        (void)frexp(DBL_MAX / (100.0 * (hi - lo)), &shifts[1]);
        assert_true(ldexp(100.0 * (hi - lo), shifts[1]) == INFINITY);
        for (size_t s = 0; s < 2; s++) {
            if (s == 1 && !(ldexp(h, shifts[1]) < DBL_MAX / 2))
                continue; /* the answer is near the top of the grid */
            huge += s;
            for (size_t i = 0; i < n; i++)
                xs[i] = ldexp(x[i], shifts[s]);
            double hs = check_cv(xs, y, n, dv, kernel, tol);
            assert_true(hs == ldexp(h, shifts[s]));
        }
    }
    print_message("# cv: %d fixed cases, %zu of them also beyond DBL_MAX/100\n",
                  cases, huge);
    assert_true(huge >= cases / 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules_scales),
        cmocka_unit_test(test_loo_scales),
        cmocka_unit_test(test_cv_edge_cases),
        cmocka_unit_test(test_cv_golden_edge),
        cmocka_unit_test(test_cv_fixed_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
