/*
 * test_bandwidth.c — NW bandwidth rules: Scott and Silverman against numpy,
 * leave-one-out CV against statsmodels KernelReg(bw='cv_ls') and a numpy
 * implementation of the same search (tests/vectors/bandwidth.txt), the LOO
 * error against attn_nw_predict, zero kernel mass, scaling and errors.
 */
#include "check.h"
#include "vectors.h"

#include "attn.h"

#include <stdlib.h>
#include <string.h>

#define BANDWIDTH_VECTORS "tests/vectors/bandwidth.txt"

/* Calls fn on every case of the vector file whose name starts with prefix;
 * returns how many. */
static size_t for_cases(const char *prefix, void (*fn)(const vec_case *)) {
    FILE *f = fopen(BANDWIDTH_VECTORS, "r");
    assert_non_null(f);
    vec_case c;
    int rc;
    size_t n = 0;
    while ((rc = vec_read_case(f, &c)) == 1) {
        if (strncmp(c.name, prefix, strlen(prefix)) == 0) {
            fn(&c);
            n++;
        }
        vec_case_free(&c);
    }
    fclose(f);
    assert_int_equal(rc, 0);
    return n;
}

/* ------------------------------------------------ rules of thumb */

static double rules_worst;

static void check_rules(const vec_case *c) {
    const vec_tensor *x = vec_get(c, "x");
    const double want[2] = {vec_data(c, "scott")[0],
                            vec_data(c, "silverman")[0]};
    const attn_nw_bw_rule rule[2] = {ATTN_NW_BW_SCOTT, ATTN_NW_BW_SILVERMAN};
    for (int r = 0; r < 2; r++) {
        double h = 0.0, w = 0.0;
        /* y_train is not needed by the rules of thumb */
        assert_int_equal(attn_nw_bandwidth(&h, &w, x->data, NULL,
                                           ATTN_KERNEL_GAUSSIAN, rule[r],
                                           x->count, 0),
                         ATTN_OK);
        assert_close(&h, &want[r], 1, 1e-14);
        assert_true(w == 1.0 / h);
        double d = check_diff(h, want[r]);
        rules_worst = d > rules_worst ? d : rules_worst;
    }
}

/* Scott h = 1.059·A·n^(−1/5), Silverman 0.9·A·n^(−1/5) on 12 samples
 * (IQR 0, duplicates, a heavy tail, unsorted, the textbook datasets)
 * within 1e-14 of numpy. */
static void test_rules_vs_numpy(void **state) {
    (void)state;
    rules_worst = 0.0;
    assert_int_equal(for_cases("rule_", check_rules), 12);
    print_message("# scott/silverman vs numpy: 12 samples, worst relative "
                  "difference %.3g\n",
                  rules_worst);
}

/* Hand-computed: x = [1, 2, 4]: std = sqrt(7/3), quartiles 1.5 and 3, IQR
 * 1.5, 1.5/1.349 < std; Silverman 0.9·(1.5/1.349)·3^(−1/5). x = [3 ×8, 0,
 * 10]: IQR 0, so A = std. */
static void test_rules_by_hand(void **state) {
    (void)state;
    const double x[] = {4.0, 1.0, 2.0};
    double h, w;
    assert_int_equal(attn_nw_bandwidth(&h, &w, x, NULL, ATTN_KERNEL_GAUSSIAN,
                                       ATTN_NW_BW_SILVERMAN, 3, 1),
                     ATTN_OK);
    assert_near(h, 0.9 * (1.5 / 1.349) * pow(3.0, -0.2), 1e-15);
    const double flat[] = {3, 3, 3, 3, 3, 3, 3, 3, 0, 10};
    double mean = 34.0 / 10.0, ss = 8 * (3 - mean) * (3 - mean) + mean * mean +
                                    (10 - mean) * (10 - mean);
    assert_int_equal(attn_nw_bandwidth(&h, &w, flat, NULL, ATTN_KERNEL_GAUSSIAN,
                                       ATTN_NW_BW_SCOTT, 10, 1),
                     ATTN_OK);
    assert_near(h, 1.059 * sqrt(ss / 9.0) * pow(10.0, -0.2), 1e-15);
}

/* ---------------------------------------------- cross-validation */

static double cv_worst_sm, cv_worst_spec;

/* Gaussian CV on the textbook dataset: within 1% of statsmodels (the
 * contract), within 1e-4 of the numpy search, and at least as good as the
 * best of 20000 log-spaced h (up to 1e-9). */
static void check_cv_gaussian(const vec_case *c) {
    const vec_tensor *x = vec_get(c, "x"), *y = vec_get(c, "y");
    size_t n = x->count, dv = y->count / n;
    double h, w, sse;
    assert_int_equal(attn_nw_bandwidth(&h, &w, x->data, y->data,
                                       ATTN_KERNEL_GAUSSIAN, ATTN_NW_BW_CV, n,
                                       dv),
                     ATTN_OK);
    assert_true(w == 1.0 / h);
    const double *h_sm = vec_data(c, "h_statsmodels");
    if (h_sm) {
        double rel = fabs(h / h_sm[0] - 1.0);
        assert_true(rel < 0.01);
        cv_worst_sm = rel > cv_worst_sm ? rel : cv_worst_sm;
    }
    double rel = fabs(h / vec_data(c, "h_spec")[0] - 1.0);
    assert_true(rel < 1e-4);
    cv_worst_spec = rel > cv_worst_spec ? rel : cv_worst_spec;
    assert_int_equal(attn_nw_loo_sse(&sse, x->data, y->data,
                                     ATTN_KERNEL_GAUSSIAN, h, n, dv, NULL),
                     ATTN_OK);
    assert_true(sse <= vec_data(c, "sse_dense")[0] * (1.0 + 1e-9));
}

static void test_cv_gaussian(void **state) {
    (void)state;
    cv_worst_sm = cv_worst_spec = 0.0;
    assert_int_equal(for_cases("cv_gaussian_seed", check_cv_gaussian), 5);
    print_message("# cv gaussian: worst |h/h_statsmodels - 1| = %.3g over 5 "
                  "seeds (limit 0.01); vs numpy search %.3g\n",
                  cv_worst_sm, cv_worst_spec);
    assert_int_equal(for_cases("cv_gaussian_dv2", check_cv_gaussian), 1);
}

static double compact_worst;

/* Compact kernels: the LOO error at the chosen h equals the numpy search's
 * (1e-9; boxcar errors are piecewise constant, so h itself may differ
 * inside a plateau), and every training point keeps kernel mass there. */
static void check_cv_compact(const vec_case *c) {
    const vec_tensor *x = vec_get(c, "x"), *y = vec_get(c, "y");
    attn_kernel kernel = (attn_kernel)vec_data(c, "kernel")[0];
    double h, w, sse;
    assert_int_equal(attn_nw_bandwidth(&h, &w, x->data, y->data, kernel,
                                       ATTN_NW_BW_CV, x->count, 1),
                     ATTN_OK);
    assert_int_equal(
        attn_nw_loo_sse(&sse, x->data, y->data, kernel, h, x->count, 1, NULL),
        ATTN_OK);
    assert_near(sse, vec_data(c, "sse_spec")[0], 1e-9);
    double d = check_diff(sse, vec_data(c, "sse_spec")[0]);
    compact_worst = d > compact_worst ? d : compact_worst;
}

static void test_cv_compact_kernels(void **state) {
    (void)state;
    compact_worst = 0.0;
    size_t n = for_cases("cv_boxcar", check_cv_compact) +
               for_cases("cv_epanechnikov", check_cv_compact) +
               for_cases("cv_triangular", check_cv_compact);
    assert_int_equal(n, 6);
    print_message("# cv compact kernels: 6 cases, worst LOO error "
                  "difference vs numpy search %.3g\n",
                  compact_worst);
}

/* attn_nw_loo_sse at the numpy search's h equals numpy's LOO error
 * (1e-12) for all four kernels and two-column y. */
static void check_loo_value(const vec_case *c) {
    const vec_tensor *x = vec_get(c, "x"), *y = vec_get(c, "y");
    attn_kernel kernel = (attn_kernel)vec_data(c, "kernel")[0];
    double sse;
    assert_int_equal(attn_nw_loo_sse(&sse, x->data, y->data, kernel,
                                     vec_data(c, "h_spec")[0], x->count,
                                     y->count / x->count, NULL),
                     ATTN_OK);
    assert_near(sse, vec_data(c, "sse_spec")[0], 1e-12);
}

static void test_loo_vs_numpy(void **state) {
    (void)state;
    assert_int_equal(for_cases("cv_", check_loo_value), 12);
}

/* The LOO error is Σᵢ |yᵢ − attn_nw_predict(xᵢ; pairs without i)|² with
 * w = 1/h, for every kernel, on unsorted x with a duplicate (1e-12); the
 * Gaussian also at a small h, where most weights are negligible. */
static void test_loo_vs_predict(void **state) {
    (void)state;
    enum { n = 12, dv = 2 };
    double x[n], y[n * dv], xo[n], yo[n * dv], pred[dv], wts[n];
    attn_rng rng;
    attn_rng_seed(&rng, 4);
    for (size_t i = 0; i < n; i++)
        x[i] = 3.0 * attn_rng_uniform(&rng);
    x[7] = x[3];
    attn_rng_normals(&rng, y, n * dv);
    const attn_kernel kernels[] = {ATTN_KERNEL_GAUSSIAN, ATTN_KERNEL_BOXCAR,
                                   ATTN_KERNEL_EPANECHNIKOV,
                                   ATTN_KERNEL_TRIANGULAR};
    for (size_t t = 0; t < 5; t++) {
        /* 1.7 is wide enough for every compact kernel */
        const double h = t < 4 ? 1.7 : 0.02;
        double want = 0.0;
        for (size_t i = 0; i < n; i++) {
            size_t m = 0;
            for (size_t j = 0; j < n; j++) {
                if (j == i)
                    continue;
                xo[m] = x[j];
                memcpy(yo + m * dv, y + j * dv, dv * sizeof(double));
                m++;
            }
            assert_int_equal(attn_nw_predict(pred, wts, &x[i], xo, yo,
                                             kernels[t % 4], 1.0 / h, 1, m, dv,
                                             NULL),
                             ATTN_OK);
            for (size_t c = 0; c < dv; c++)
                want += (y[i * dv + c] - pred[c]) * (y[i * dv + c] - pred[c]);
        }
        double sse;
        assert_int_equal(
            attn_nw_loo_sse(&sse, x, y, kernels[t % 4], h, n, dv, NULL),
            ATTN_OK);
        assert_near(sse, want, 1e-12);
    }
}

/* Compact kernels and small h: a point with no neighbour within h has zero
 * LOO mass (ATTN_E_ZERO_MASS, fault->index = that point as given); CV
 * never picks such an h. x = [10, 0, 1]: the boxcar needs h > 9 for 10. */
static void test_zero_mass(void **state) {
    (void)state;
    const double x[] = {10.0, 0.0, 1.0}, y[] = {0.5, 1.0, 2.0};
    double sse, h, w;
    attn_fault fault = {.index = 99};
    assert_int_equal(
        attn_nw_loo_sse(&sse, x, y, ATTN_KERNEL_BOXCAR, 2.0, 3, 1, &fault),
        ATTN_E_ZERO_MASS);
    assert_int_equal(fault.index, 0);
    /* the Gaussian never loses its mass, however small h */
    assert_int_equal(
        attn_nw_loo_sse(&sse, x, y, ATTN_KERNEL_GAUSSIAN, 1e-3, 3, 1, NULL),
        ATTN_OK);
    /* nearest neighbours: 1 predicts 0 and 0 predicts 1; 10 takes 1's y */
    double want = (1.0 - 2.0) * (1.0 - 2.0) * 2 + (0.5 - 2.0) * (0.5 - 2.0);
    assert_near(sse, want, 1e-15);
    const attn_kernel compact[] = {ATTN_KERNEL_BOXCAR, ATTN_KERNEL_EPANECHNIKOV,
                                   ATTN_KERNEL_TRIANGULAR};
    for (size_t t = 0; t < 3; t++) {
        assert_int_equal(
            attn_nw_bandwidth(&h, &w, x, y, compact[t], ATTN_NW_BW_CV, 3, 1),
            ATTN_OK);
        assert_true(h > 9.0);
        assert_int_equal(attn_nw_loo_sse(&sse, x, y, compact[t], h, 3, 1, NULL),
                         ATTN_OK);
    }
}

/* Scaling x by 4 (exact in binary) scales every bandwidth by exactly 4. */
static void test_scaling(void **state) {
    (void)state;
    enum { n = 40 };
    double x[n], x4[n], y[n];
    attn_rng rng;
    attn_rng_seed(&rng, 8);
    for (size_t i = 0; i < n; i++) {
        x[i] = 5.0 * attn_rng_uniform(&rng);
        x4[i] = 4.0 * x[i];
        y[i] = sin(x[i]) + 0.3 * attn_rng_uniform(&rng);
    }
    const attn_nw_bw_rule rules[] = {ATTN_NW_BW_SCOTT, ATTN_NW_BW_SILVERMAN,
                                     ATTN_NW_BW_CV};
    for (size_t r = 0; r < 3; r++) {
        double h, w, h4, w4;
        assert_int_equal(attn_nw_bandwidth(&h, &w, x, y,
                                           ATTN_KERNEL_EPANECHNIKOV, rules[r],
                                           n, 1),
                         ATTN_OK);
        assert_int_equal(attn_nw_bandwidth(&h4, &w4, x4, y,
                                           ATTN_KERNEL_EPANECHNIKOV, rules[r],
                                           n, 1),
                         ATTN_OK);
        assert_near(h4, 4.0 * h, 1e-14);
        assert_near(w4, w / 4.0, 1e-14);
    }
}

/* The datasets in the vector file are the contract's textbook data: the
 * library's generator gives the same doubles (cross-check of attnrng.py). */
static void check_dataset(const vec_case *c) {
    uint64_t seed = (uint64_t)(c->name[strlen(c->name) - 1] - '0');
    double x[50], y[50], xt[ATTN_NW_DATASET_TEST], yt[ATTN_NW_DATASET_TEST];
    assert_int_equal(attn_nw_dataset(x, y, xt, yt, 50, 0.5, seed), ATTN_OK);
    assert_close(x, vec_data(c, "x"), 50, 0.0);
    assert_close(y, vec_data(c, "y"), 50, 0.0);
}

static void test_vector_datasets(void **state) {
    (void)state;
    assert_int_equal(for_cases("cv_gaussian_seed", check_dataset), 5);
}

/* ------------------------------------------------------------ errors */

static void test_errors(void **state) {
    (void)state;
    const double one[] = {2.0};
    const double same[] = {1.5, 1.5, 1.5, 1.5};
    const double x[] = {0.0, 1.0, 3.0}, y[] = {1.0, 0.0, 2.0};
    double h = -1.0, w = -1.0, sse;
    const attn_nw_bw_rule rules[] = {ATTN_NW_BW_SCOTT, ATTN_NW_BW_SILVERMAN,
                                     ATTN_NW_BW_CV};
    for (size_t r = 0; r < 3; r++) {
        /* fewer than 2 distinct points */
        assert_int_equal(attn_nw_bandwidth(&h, &w, one, y, ATTN_KERNEL_GAUSSIAN,
                                           rules[r], 1, 1),
                         ATTN_E_TOO_FEW);
        assert_int_equal(attn_nw_bandwidth(&h, &w, same, same,
                                           ATTN_KERNEL_GAUSSIAN, rules[r], 4,
                                           1),
                         ATTN_E_TOO_FEW);
        assert_true(h == -1.0 && w == -1.0); /* untouched on error */
        assert_int_equal(attn_nw_bandwidth(&h, &w, x, y, ATTN_KERNEL_GAUSSIAN,
                                           rules[r], 0, 1),
                         ATTN_E_INVALID_ARG);
        assert_int_equal(attn_nw_bandwidth(NULL, &w, x, y, ATTN_KERNEL_GAUSSIAN,
                                           rules[r], 3, 1),
                         ATTN_E_INVALID_ARG);
        const double bad[] = {0.0, NAN, 1.0};
        assert_int_equal(attn_nw_bandwidth(&h, &w, bad, y, ATTN_KERNEL_GAUSSIAN,
                                           rules[r], 3, 1),
                         ATTN_E_INVALID_ARG);
    }
    /* CV: constant kernel (h has no effect), missing y, dv 0 */
    assert_int_equal(attn_nw_bandwidth(&h, &w, x, y, ATTN_KERNEL_CONSTANT,
                                       ATTN_NW_BW_CV, 3, 1),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_nw_bandwidth(&h, &w, x, NULL, ATTN_KERNEL_GAUSSIAN,
                                       ATTN_NW_BW_CV, 3, 1),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_nw_bandwidth(&h, &w, x, y, ATTN_KERNEL_GAUSSIAN,
                                       ATTN_NW_BW_CV, 3, 0),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_nw_bandwidth(&h, &w, x, y, ATTN_KERNEL_GAUSSIAN,
                                       (attn_nw_bw_rule)7, 3, 1),
                     ATTN_E_INVALID_ARG);
    /* rules of thumb accept the constant kernel (h is still defined) */
    assert_int_equal(attn_nw_bandwidth(&h, &w, x, NULL, ATTN_KERNEL_CONSTANT,
                                       ATTN_NW_BW_SCOTT, 3, 0),
                     ATTN_OK);
    /* a range beyond DBL_MAX: the two points predict each other at any h,
     * so the first candidate, gap/20 = 2e308/20, is the answer */
    const double huge[] = {-1e308, 1e308};
    assert_int_equal(attn_nw_bandwidth(&h, &w, huge, y, ATTN_KERNEL_GAUSSIAN,
                                       ATTN_NW_BW_CV, 2, 1),
                     ATTN_OK);
    assert_near(h / 1e307, 1.0, 1e-15);
    assert_true(w == 1.0 / h);
    /* an h whose w overflows: x one and two subnormal steps from 0, where
     * the boxcar's best h is just above 2·2^-1074 */
    const double sub[] = {0.0, 0x1p-1074, 0x1p-1073};
    assert_int_equal(attn_nw_bandwidth(&h, &w, sub, y, ATTN_KERNEL_BOXCAR,
                                       ATTN_NW_BW_CV, 3, 1),
                     ATTN_E_NONFINITE);
    /* LOO: n < 2, h not finite > 0, sizes that overflow */
    assert_int_equal(
        attn_nw_loo_sse(&sse, one, y, ATTN_KERNEL_GAUSSIAN, 1.0, 1, 1, NULL),
        ATTN_E_TOO_FEW);
    assert_int_equal(
        attn_nw_loo_sse(&sse, x, y, ATTN_KERNEL_GAUSSIAN, 0.0, 3, 1, NULL),
        ATTN_E_INVALID_ARG);
    assert_int_equal(
        attn_nw_loo_sse(&sse, x, y, ATTN_KERNEL_GAUSSIAN, INFINITY, 3, 1, NULL),
        ATTN_E_INVALID_ARG);
    assert_int_equal(attn_nw_loo_sse(&sse, x, y, ATTN_KERNEL_GAUSSIAN, 1.0,
                                     SIZE_MAX / 2, 4, NULL),
                     ATTN_E_OVERFLOW);
    /* the constant kernel's LOO error is defined (mean of the others) */
    assert_int_equal(
        attn_nw_loo_sse(&sse, x, y, ATTN_KERNEL_CONSTANT, 1.0, 3, 1, NULL),
        ATTN_OK);
    assert_near(sse, 0.0 + 2.25 + 2.25, 1e-15);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rules_vs_numpy),
        cmocka_unit_test(test_rules_by_hand),
        cmocka_unit_test(test_cv_gaussian),
        cmocka_unit_test(test_cv_compact_kernels),
        cmocka_unit_test(test_loo_vs_numpy),
        cmocka_unit_test(test_loo_vs_predict),
        cmocka_unit_test(test_zero_mass),
        cmocka_unit_test(test_scaling),
        cmocka_unit_test(test_vector_datasets),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
