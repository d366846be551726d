/*
 * test_nw.c — Nadaraya–Watson regression: the seed's worked example (to
 * 1e-12), every kernel on hand-computed points, the analytic ∂loss/∂w
 * against central finite differences, gradient descent (one-step example,
 * leave-one-out against an explicit construction, loss decreasing on the
 * textbook dataset), extremes and errors.
 */
#include "check.h"

#include "attn.h"

#include <stdlib.h>
#include <string.h>

/* The seed's worked example: three training pairs, one query. */
static const double X_TRAIN[] = {1.0, 2.0, 4.0};
static const double Y_TRAIN[] = {0.0, 3.0, 1.0};
static const double X_QUERY[] = {2.5};
static const double Y_QUERY[] = {3.0};

static void test_worked_example(void **state) {
    (void)state;
    double pred, w[3], loss, grad;
    attn_fault fault;
    assert_int_equal(attn_nw_predict(&pred, w, X_QUERY, X_TRAIN, Y_TRAIN,
                                     ATTN_KERNEL_GAUSSIAN, 0.5, 1, 3, 1,
                                     &fault),
                     ATTN_OK);
    const double want_w[] = {0.304504342420284, 0.39099131515943186,
                             0.304504342420284};
    assert_close(w, want_w, 3, 1e-12);
    assert_near(pred, 1.4774782878985795, 1e-12);
    assert_int_equal(attn_nw_loss(&loss, &grad, X_QUERY, Y_QUERY, X_TRAIN,
                                  Y_TRAIN, ATTN_KERNEL_GAUSSIAN, 0.5, 1, 3, 1,
                                  &fault),
                     ATTN_OK);
    assert_near(loss, 1.1590361819101205, 1e-12);
    assert_near(grad, -0.9063461621648087, 1e-12);

    /* w = 1 and w = 2 */
    assert_int_equal(attn_nw_predict(&pred, w, X_QUERY, X_TRAIN, Y_TRAIN,
                                     ATTN_KERNEL_GAUSSIAN, 1.0, 1, 3, 1, NULL),
                     ATTN_OK);
    assert_near(pred, 1.940292211914573, 1e-12);
    assert_int_equal(attn_nw_predict(&pred, w, X_QUERY, X_TRAIN, Y_TRAIN,
                                     ATTN_KERNEL_GAUSSIAN, 2.0, 1, 3, 1, NULL),
                     ATTN_OK);
    assert_near(pred, 2.9116578899297596, 1e-12);

    /* one gradient step in query mode at lr 0.1 */
    attn_nw_epoch history[1];
    double w_out;
    assert_int_equal(attn_nw_fit(&w_out, history, 0.5, 0.1, 1,
                                 ATTN_NW_FIT_QUERY, X_TRAIN, Y_TRAIN, X_QUERY,
                                 Y_QUERY, 3, 1, 1, &fault),
                     ATTN_OK);
    assert_near(w_out, 0.5906346162164808, 1e-12);
    assert_int_equal(history[0].epoch, 1);
    assert_true(history[0].w == 0.5);
    assert_near(history[0].loss, 1.1590361819101205, 1e-12);
}

/* Kernels on x_train [0, 0.5, 2], query 0.4, w = 1: u = 0.4, −0.1, −1.6. */
static void test_kernels(void **state) {
    (void)state;
    const double xt[] = {0.0, 0.5, 2.0}, yt[] = {1.0, 2.0, 4.0};
    const double xq[] = {0.4};
    struct {
        attn_kernel kernel;
        double weights[3];
    } cases[] = {
        {ATTN_KERNEL_CONSTANT, {1.0 / 3, 1.0 / 3, 1.0 / 3}},
        {ATTN_KERNEL_BOXCAR, {0.5, 0.5, 0.0}},
        {ATTN_KERNEL_EPANECHNIKOV, {0.84 / 1.83, 0.99 / 1.83, 0.0}},
        {ATTN_KERNEL_TRIANGULAR, {0.6 / 1.5, 0.9 / 1.5, 0.0}},
        {ATTN_KERNEL_GAUSSIAN, {0}},
    };
    /* Gaussian: exp(−u²/2) normalised, written out */
    double g[3], gsum = 0.0;
    for (size_t i = 0; i < 3; i++) {
        g[i] = exp(-(xq[0] - xt[i]) * (xq[0] - xt[i]) / 2.0);
        gsum += g[i];
    }
    for (size_t i = 0; i < 3; i++)
        cases[4].weights[i] = g[i] / gsum;

    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double pred, w[3];
        assert_int_equal(attn_nw_predict(&pred, w, xq, xt, yt, cases[c].kernel,
                                         1.0, 1, 3, 1, NULL),
                         ATTN_OK);
        assert_close(w, cases[c].weights, 3, 1e-15);
        double want = 0.0;
        for (size_t i = 0; i < 3; i++)
            want += cases[c].weights[i] * yt[i];
        assert_near(pred, want, 1e-15);
        if (cases[c].kernel != ATTN_KERNEL_GAUSSIAN &&
            cases[c].kernel != ATTN_KERNEL_CONSTANT)
            assert_true(w[2] == 0.0); /* outside the support: exactly 0 */
    }
    /* boxcar is strict (|u| < 1); epanechnikov and triangular vanish at 1 */
    const double at_one[] = {1.0}, xt2[] = {0.0, 0.9};
    double pred, w2[2];
    assert_int_equal(attn_nw_predict(&pred, w2, at_one, xt2, yt,
                                     ATTN_KERNEL_BOXCAR, 1.0, 1, 2, 1, NULL),
                     ATTN_OK);
    assert_true(w2[0] == 0.0 && w2[1] == 1.0);
    assert_int_equal(attn_nw_predict(&pred, w2, at_one, xt2, yt,
                                     ATTN_KERNEL_TRIANGULAR, 1.0, 1, 2, 1,
                                     NULL),
                     ATTN_OK);
    assert_true(w2[0] == 0.0 && w2[1] == 1.0);
    assert_int_equal(attn_nw_predict(&pred, w2, at_one, xt2, yt,
                                     ATTN_KERNEL_EPANECHNIKOV, 1.0, 1, 2, 1,
                                     NULL),
                     ATTN_OK);
    assert_true(w2[0] == 0.0 && w2[1] == 1.0);
    /* the multiplier w scales u: boxcar with w = 4 around 0.4 keeps only
     * |x − xᵢ| < 0.25 */
    assert_int_equal(attn_nw_predict(&pred, w2, xq, xt + 1, yt + 1,
                                     ATTN_KERNEL_BOXCAR, 4.0, 1, 2, 1, NULL),
                     ATTN_OK);
    assert_true(w2[0] == 1.0 && w2[1] == 0.0 && pred == 2.0);
}

/* y_train (n, dv): each column is predicted as its own dv = 1 problem, and
 * several queries are independent rows; tolerance 1e-15. */
static void test_vector_values(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 31);
    enum { M = 4, N = 6, DV = 3 };
    double xq[M], xt[N], yt[N * DV], pred[M * DV], w[M * N];
    attn_rng_normals(&rng, xq, M);
    attn_rng_normals(&rng, xt, N);
    attn_rng_normals(&rng, yt, N * DV);
    assert_int_equal(attn_nw_predict(pred, w, xq, xt, yt, ATTN_KERNEL_GAUSSIAN,
                                     1.3, M, N, DV, NULL),
                     ATTN_OK);
    for (size_t c = 0; c < DV; c++) {
        double col[N], pc[M], wc[M * N];
        for (size_t i = 0; i < N; i++)
            col[i] = yt[i * DV + c];
        for (size_t q = 0; q < M; q++) {
            assert_int_equal(attn_nw_predict(&pc[q], wc, &xq[q], xt, col,
                                             ATTN_KERNEL_GAUSSIAN, 1.3, 1, N, 1,
                                             NULL),
                             ATTN_OK);
            assert_close(wc, w + q * N, N, 1e-15);
            assert_near(pred[q * DV + c], pc[q], 1e-15);
        }
    }
}

/* Central difference (L(w + h) − L(w − h)) / 2h with h = 1e-5·w. */
static double loss_at(const double *xq, const double *yq, const double *xt,
                      const double *yt, double w, size_t m, size_t n,
                      size_t dv) {
    double loss;
    assert_int_equal(attn_nw_loss(&loss, NULL, xq, yq, xt, yt,
                                  ATTN_KERNEL_GAUSSIAN, w, m, n, dv, NULL),
                     ATTN_OK);
    return loss;
}

static double central_difference(const double *xq, const double *yq,
                                 const double *xt, const double *yt, double w,
                                 size_t m, size_t n, size_t dv) {
    double h = 1e-5 * w;
    return (loss_at(xq, yq, xt, yt, w + h, m, n, dv) -
            loss_at(xq, yq, xt, yt, w - h, m, n, dv)) /
           (2.0 * h);
}

/* |analytic − numeric| <= 1e-6 · max(|analytic|, |numeric|) + 1e-12. */
static double gradient_error(double analytic, double numeric) {
    double err = fabs(analytic - numeric);
    assert_true(err <= 1e-6 * fmax(fabs(analytic), fabs(numeric)) + 1e-12);
    return err / fmax(fmax(fabs(analytic), fabs(numeric)), 1e-300);
}

static void test_gradient_vs_finite_differences(void **state) {
    (void)state;
    double worst = 0.0;
    size_t checks = 0;
    /* the worked example at several w */
    const double ws[] = {0.1, 0.5, 1.0, 1.7, 3.0};
    for (size_t t = 0; t < 5; t++) {
        double loss, grad;
        assert_int_equal(attn_nw_loss(&loss, &grad, X_QUERY, Y_QUERY, X_TRAIN,
                                      Y_TRAIN, ATTN_KERNEL_GAUSSIAN, ws[t], 1,
                                      3, 1, NULL),
                         ATTN_OK);
        worst = fmax(worst, gradient_error(grad, central_difference(
                                                     X_QUERY, Y_QUERY, X_TRAIN,
                                                     Y_TRAIN, ws[t], 1, 3, 1)));
        checks++;
    }
    /* random problems: m queries, n pairs, dv outputs */
    attn_rng rng;
    attn_rng_seed(&rng, 77);
    for (int round = 0; round < 40; round++) {
        size_t m = 1 + attn_rng_next(&rng) % 5, n = 2 + attn_rng_next(&rng) % 8;
        size_t dv = 1 + attn_rng_next(&rng) % 3;
        double xq[5], xt[9], yq[5 * 3], yt[9 * 3];
        attn_rng_normals(&rng, xq, m);
        attn_rng_normals(&rng, xt, n);
        attn_rng_normals(&rng, yq, m * dv);
        attn_rng_normals(&rng, yt, n * dv);
        double w = 0.2 + 2.8 * attn_rng_uniform(&rng);
        double loss, grad;
        assert_int_equal(attn_nw_loss(&loss, &grad, xq, yq, xt, yt,
                                      ATTN_KERNEL_GAUSSIAN, w, m, n, dv, NULL),
                         ATTN_OK);
        assert_near(loss, loss_at(xq, yq, xt, yt, w, m, n, dv), 0.0);
        worst =
            fmax(worst, gradient_error(grad, central_difference(xq, yq, xt, yt,
                                                                w, m, n, dv)));
        checks++;
    }
    print_message("# NW grad_w vs central differences: %zu cases, worst "
                  "relative difference %.3g (tol 1e-6)\n",
                  checks, worst);
}

/* The leave-one-out loss built by hand: query x_train[i] against the other
 * n − 1 pairs, summed over i. */
static double loo_loss(const double *xt, const double *yt, size_t n, double w) {
    double total = 0.0, x_rest[64], y_rest[64];
    assert_true(n <= 64);
    for (size_t i = 0; i < n; i++) {
        size_t r = 0;
        for (size_t j = 0; j < n; j++) {
            if (j == i)
                continue;
            x_rest[r] = xt[j];
            y_rest[r] = yt[j];
            r++;
        }
        total += loss_at(&xt[i], &yt[i], x_rest, y_rest, w, 1, n - 1, 1);
    }
    return total;
}

/* d2l's training on its dataset (n = 50, noise 0.5, seed 0) with the
 * defaults epochs 5, lr 0.5, from w = 1: the loss falls every epoch; each
 * history entry's loss is the hand-built leave-one-out loss at its w
 * (1e-12), and each step is −lr times the finite-difference slope (1e-6). */
static void test_fit_train_loo(void **state) {
    (void)state;
    double xt[50], yt[50], x_test[ATTN_NW_DATASET_TEST];
    double y_truth[ATTN_NW_DATASET_TEST];
    assert_int_equal(attn_nw_dataset(xt, yt, x_test, y_truth, 50, 0.5, 0),
                     ATTN_OK);
    attn_nw_epoch history[5];
    double w_out;
    attn_fault fault;
    assert_int_equal(attn_nw_fit(&w_out, history, 1.0, 0.5, 5,
                                 ATTN_NW_FIT_TRAIN_LOO, xt, yt, NULL, NULL, 50,
                                 0, 1, &fault),
                     ATTN_OK);
    for (size_t e = 0; e < 5; e++) {
        assert_int_equal(history[e].epoch, e + 1);
        assert_near(history[e].loss, loo_loss(xt, yt, 50, history[e].w), 1e-12);
        double next = e + 1 < 5 ? history[e + 1].w : w_out;
        double h = 1e-5 * history[e].w;
        double slope = (loo_loss(xt, yt, 50, history[e].w + h) -
                        loo_loss(xt, yt, 50, history[e].w - h)) /
                       (2.0 * h);
        gradient_error((history[e].w - next) / 0.5, slope);
        if (e > 0)
            assert_true(history[e].loss < history[e - 1].loss);
    }
    assert_true(history[0].w == 1.0);
    double final_loss = loo_loss(xt, yt, 50, w_out);
    assert_true(final_loss < history[4].loss);
    print_message("# fit on the d2l dataset: loss %.6f -> %.6f, w 1 -> %.6f\n",
                  history[0].loss, final_loss, w_out);

    /* a longer run from w = 3 never increases the loss */
    attn_nw_epoch long_run[40];
    assert_int_equal(attn_nw_fit(&w_out, long_run, 3.0, 0.5, 40,
                                 ATTN_NW_FIT_TRAIN_LOO, xt, yt, NULL, NULL, 50,
                                 0, 1, &fault),
                     ATTN_OK);
    for (size_t e = 1; e < 40; e++)
        assert_true(long_run[e].loss <= long_run[e - 1].loss);
}

/* Query mode equals repeated loss/gradient calls (tolerance 1e-15). */
static void test_fit_query_steps(void **state) {
    (void)state;
    attn_nw_epoch history[3];
    double w_out, w = 0.5;
    assert_int_equal(attn_nw_fit(&w_out, history, w, 0.1, 3, ATTN_NW_FIT_QUERY,
                                 X_TRAIN, Y_TRAIN, X_QUERY, Y_QUERY, 3, 1, 1,
                                 NULL),
                     ATTN_OK);
    for (size_t e = 0; e < 3; e++) {
        double loss, grad;
        assert_int_equal(attn_nw_loss(&loss, &grad, X_QUERY, Y_QUERY, X_TRAIN,
                                      Y_TRAIN, ATTN_KERNEL_GAUSSIAN, w, 1, 3, 1,
                                      NULL),
                         ATTN_OK);
        assert_near(history[e].w, w, 1e-15);
        assert_near(history[e].loss, loss, 1e-15);
        w -= 0.1 * grad;
    }
    assert_near(w_out, w, 1e-15);
}

static void test_fit_errors(void **state) {
    (void)state;
    attn_nw_epoch history[4];
    double w_out = -7.0;
    attn_fault fault;
    /* y_query 1: the loss grows with w, so a large step crosses 0. From
     * w = 2 at lr 1 the first step stays positive, the second does not. */
    const double y_low[] = {1.0};
    assert_int_equal(attn_nw_fit(&w_out, history, 2.0, 1.0, 4,
                                 ATTN_NW_FIT_QUERY, X_TRAIN, Y_TRAIN, X_QUERY,
                                 y_low, 3, 1, 1, &fault),
                     ATTN_E_BAD_STEP);
    assert_int_equal(fault.index, 2);
    assert_true(w_out == -7.0); /* untouched on error */
    assert_true(history[0].w == 2.0 && history[1].w > 0.0);
    assert_int_equal(attn_nw_fit(&w_out, history, 1.4, 1.0, 4,
                                 ATTN_NW_FIT_QUERY, X_TRAIN, Y_TRAIN, X_QUERY,
                                 y_low, 3, 1, 1, &fault),
                     ATTN_E_BAD_STEP);
    assert_int_equal(fault.index, 1);
    /* a step to +inf: the worked example with y scaled by 1e10 has
     * ∂loss/∂w ≈ −0.9e20, times lr 1e300 */
    const double y_big[] = {0.0, 3e10, 1e10}, yq_big[] = {3e10};
    assert_int_equal(attn_nw_fit(&w_out, history, 0.5, 1e300, 1,
                                 ATTN_NW_FIT_QUERY, X_TRAIN, y_big, X_QUERY,
                                 yq_big, 3, 1, 1, &fault),
                     ATTN_E_BAD_STEP);
    assert_int_equal(fault.index, 1);
    /* train_loo needs n >= 2 */
    assert_int_equal(attn_nw_fit(&w_out, history, 1.0, 0.5, 1,
                                 ATTN_NW_FIT_TRAIN_LOO, X_TRAIN, Y_TRAIN, NULL,
                                 NULL, 1, 0, 1, &fault),
                     ATTN_E_TOO_FEW);
    assert_int_equal(attn_nw_fit(&w_out, history, 1.0, 0.5, 1,
                                 ATTN_NW_FIT_TRAIN_LOO, X_TRAIN, Y_TRAIN, NULL,
                                 NULL, 2, 0, 1, &fault),
                     ATTN_OK);
    /* query mode needs its data; w0, lr, epochs, mode must be valid */
    assert_int_equal(attn_nw_fit(&w_out, history, 1.0, 0.5, 1,
                                 ATTN_NW_FIT_QUERY, X_TRAIN, Y_TRAIN, X_QUERY,
                                 NULL, 3, 1, 1, &fault),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_nw_fit(&w_out, history, 1.0, 0.5, 1,
                                 ATTN_NW_FIT_QUERY, X_TRAIN, Y_TRAIN, X_QUERY,
                                 Y_QUERY, 3, 0, 1, &fault),
                     ATTN_E_INVALID_ARG);
    const double bad[] = {0.0, -1.0, NAN, INFINITY};
    for (size_t t = 0; t < 4; t++) {
        assert_int_equal(attn_nw_fit(&w_out, history, bad[t], 0.5, 1,
                                     ATTN_NW_FIT_QUERY, X_TRAIN, Y_TRAIN,
                                     X_QUERY, Y_QUERY, 3, 1, 1, &fault),
                         ATTN_E_INVALID_ARG);
        assert_int_equal(attn_nw_fit(&w_out, history, 1.0, bad[t], 1,
                                     ATTN_NW_FIT_QUERY, X_TRAIN, Y_TRAIN,
                                     X_QUERY, Y_QUERY, 3, 1, 1, &fault),
                         ATTN_E_INVALID_ARG);
    }
    assert_int_equal(attn_nw_fit(&w_out, history, 1.0, 0.5, 0,
                                 ATTN_NW_FIT_QUERY, X_TRAIN, Y_TRAIN, X_QUERY,
                                 Y_QUERY, 3, 1, 1, &fault),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_nw_fit(&w_out, history, 1.0, 0.5, 1,
                                 (attn_nw_fit_data)5, X_TRAIN, Y_TRAIN, X_QUERY,
                                 Y_QUERY, 3, 1, 1, &fault),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_nw_fit(&w_out, NULL, 1.0, 0.5, 1, ATTN_NW_FIT_QUERY,
                                 X_TRAIN, Y_TRAIN, X_QUERY, Y_QUERY, 3, 1, 1,
                                 &fault),
                     ATTN_E_INVALID_ARG);
}

static void test_zero_mass(void **state) {
    (void)state;
    const double xq[] = {0.2, 10.0, -10.0};
    double pred[3], w[9], loss;
    attn_fault fault;
    const attn_kernel compact[] = {ATTN_KERNEL_BOXCAR, ATTN_KERNEL_EPANECHNIKOV,
                                   ATTN_KERNEL_TRIANGULAR};
    for (size_t c = 0; c < 3; c++) {
        assert_int_equal(attn_nw_predict(pred, w, xq, X_TRAIN, Y_TRAIN,
                                         compact[c], 1.0, 3, 3, 1, &fault),
                         ATTN_E_ZERO_MASS);
        assert_int_equal(fault.index, 1);
        assert_int_equal(attn_nw_loss(&loss, NULL, xq, xq, X_TRAIN, Y_TRAIN,
                                      compact[c], 1.0, 3, 3, 1, &fault),
                         ATTN_E_ZERO_MASS);
        assert_int_equal(fault.index, 1);
    }
    /* the Gaussian and constant kernels always have mass */
    assert_int_equal(attn_nw_predict(pred, w, xq, X_TRAIN, Y_TRAIN,
                                     ATTN_KERNEL_GAUSSIAN, 1.0, 3, 3, 1,
                                     &fault),
                     ATTN_OK);
    assert_int_equal(attn_nw_predict(pred, w, xq, X_TRAIN, Y_TRAIN,
                                     ATTN_KERNEL_CONSTANT, 1.0, 3, 3, 1,
                                     &fault),
                     ATTN_OK);
    assert_true(pred[2] == 4.0 / 3.0);
}

/* A huge w never gives 0/0: the nearest point takes all the weight, ties
 * split it; a tiny w gives exactly uniform weights. */
static void test_extreme_bandwidths(void **state) {
    (void)state;
    double pred, w[3], loss, grad;
    const double huge[] = {1e200, 1e300, 1.7976931348623157e308};
    for (size_t t = 0; t < 3; t++) {
        assert_int_equal(attn_nw_predict(&pred, w, X_QUERY, X_TRAIN, Y_TRAIN,
                                         ATTN_KERNEL_GAUSSIAN, huge[t], 1, 3, 1,
                                         NULL),
                         ATTN_OK);
        assert_true(w[0] == 0.0 && w[1] == 1.0 && w[2] == 0.0 && pred == 3.0);
        const double tie[] = {3.0};
        assert_int_equal(attn_nw_predict(&pred, w, tie, X_TRAIN, Y_TRAIN,
                                         ATTN_KERNEL_GAUSSIAN, huge[t], 1, 3, 1,
                                         NULL),
                         ATTN_OK);
        assert_true(w[0] == 0.0 && w[1] == 0.5 && w[2] == 0.5 && pred == 2.0);
        assert_int_equal(attn_nw_loss(&loss, &grad, X_QUERY, Y_QUERY, X_TRAIN,
                                      Y_TRAIN, ATTN_KERNEL_GAUSSIAN, huge[t], 1,
                                      3, 1, NULL),
                         ATTN_OK);
        assert_true(loss == 0.0 && grad == 0.0);
    }
    assert_int_equal(attn_nw_predict(&pred, w, X_QUERY, X_TRAIN, Y_TRAIN,
                                     ATTN_KERNEL_GAUSSIAN, 1e-300, 1, 3, 1,
                                     NULL),
                     ATTN_OK);
    assert_true(w[0] == 1.0 / 3.0 && w[1] == 1.0 / 3.0 && w[2] == 1.0 / 3.0);
    /* points more than DBL_MAX apart */
    const double far_train[] = {-1e308, 1e308}, far_y[] = {-1.0, 1.0};
    const double far_q[] = {9e307};
    double w2[2];
    assert_int_equal(attn_nw_predict(&pred, w2, far_q, far_train, far_y,
                                     ATTN_KERNEL_GAUSSIAN, 1.0, 1, 2, 1, NULL),
                     ATTN_OK);
    assert_true(w2[0] == 0.0 && w2[1] == 1.0 && pred == 1.0);
    assert_int_equal(attn_nw_loss(&loss, &grad, far_q, far_y + 1, far_train,
                                  far_y, ATTN_KERNEL_GAUSSIAN, 1.0, 1, 2, 1,
                                  NULL),
                     ATTN_OK);
    assert_true(loss == 0.0 && grad == 0.0);
    /* a loss that overflows is reported */
    const double big_y[] = {1.7976931348623157e308, 1.7976931348623157e308};
    const double mid[] = {0.0}, near_train[] = {-1.0, 1.0};
    assert_int_equal(attn_nw_loss(&loss, NULL, mid, far_train, near_train,
                                  big_y, ATTN_KERNEL_GAUSSIAN, 1.0, 1, 2, 1,
                                  NULL),
                     ATTN_E_NONFINITE);
}

/* The same data at scale 1 and near DBL_MAX (x·s, w/s, s = 7e307): the
 * leave-one-out fit's loss and every kernel's weights agree, although the
 * outer training points are more than DBL_MAX apart and their half
 * distances sum beyond it. */
static void test_scale_near_dbl_max(void **state) {
    (void)state;
    const double s = 7e307, w = 0.2;
    /* s and w keep ∂loss/∂w at scale (∝ s) finite, while the outer
     * points' half distances sum beyond DBL_MAX (3s) */
    const double x1[] = {-2.0, 0.0, 2.0}, y[] = {0.0, 3e-3, 1e-3};
    const double xs[] = {-2.0 * s, 0.0, 2.0 * s}, q1[] = {1.1764705882352942},
                 qs[] = {1.1764705882352942 * s};
    /* the step's lr would have to be lr/s², below the smallest double, so
     * at scale only epoch 1's loss is compared (its step then fails or
     * not, as the sign of the gradient at scale 1 says) */
    attn_nw_epoch h1[1], hs[1];
    double w1_out, ws_out;
    assert_int_equal(attn_nw_fit(&w1_out, h1, w, 1e-9, 1, ATTN_NW_FIT_TRAIN_LOO,
                                 x1, y, NULL, NULL, 3, 0, 1, NULL),
                     ATTN_OK);
    attn_status st =
        attn_nw_fit(&ws_out, hs, w / s, 4.9e-324, 1, ATTN_NW_FIT_TRAIN_LOO, xs,
                    y, NULL, NULL, 3, 0, 1, NULL);
    assert_int_equal(st, w1_out < w ? ATTN_E_BAD_STEP : ATTN_OK);
    assert_true(fabs(hs[0].loss - h1[0].loss) <= 1e-12 * h1[0].loss);
    const attn_kernel kernels[] = {ATTN_KERNEL_GAUSSIAN, ATTN_KERNEL_BOXCAR,
                                   ATTN_KERNEL_EPANECHNIKOV,
                                   ATTN_KERNEL_TRIANGULAR};
    for (size_t k = 0; k < 4; k++) {
        double p1, ps, a1[3], as[3];
        double wk = kernels[k] == ATTN_KERNEL_GAUSSIAN ? w : 0.4;
        assert_int_equal(
            attn_nw_predict(&p1, a1, q1, x1, y, kernels[k], wk, 1, 3, 1, NULL),
            ATTN_OK);
        assert_int_equal(attn_nw_predict(&ps, as, qs, xs, y, kernels[k], wk / s,
                                         1, 3, 1, NULL),
                         ATTN_OK);
        for (size_t i = 0; i < 3; i++)
            assert_true(fabs(as[i] - a1[i]) <= 1e-12);
    }
}

/* A non-finite prediction is blamed on its query, not on the flat index
 * into pred (m, dv): here query 1 (a NaN) with dv = 2. */
static void test_nonfinite_prediction(void **state) {
    (void)state;
    const double xq[] = {0.0, NAN}, xt[] = {0.0, 5.0};
    const double yt[] = {1.0, 2.0, 3.0, 4.0}; /* (n, dv) = (2, 2) */
    double pred[4], w[4];
    attn_fault fault;
    const attn_kernel kernels[] = {ATTN_KERNEL_GAUSSIAN, ATTN_KERNEL_CONSTANT};
    assert_int_equal(
        attn_nw_predict(pred, w, xq, xt, yt, kernels[0], 1.0, 2, 2, 2, &fault),
        ATTN_E_NONFINITE);
    assert_int_equal(fault.index, 1);
    /* the constant kernel ignores x: finite */
    assert_int_equal(
        attn_nw_predict(pred, w, xq, xt, yt, kernels[1], 1.0, 2, 2, 2, &fault),
        ATTN_OK);
    assert_true(pred[2] == 2.0 && pred[3] == 3.0);
}

static void test_argument_errors(void **state) {
    (void)state;
    double pred, w[3], loss, grad;
    const double bad_w[] = {0.0, -0.5, NAN, INFINITY};
    for (size_t t = 0; t < 4; t++) {
        assert_int_equal(attn_nw_predict(&pred, w, X_QUERY, X_TRAIN, Y_TRAIN,
                                         ATTN_KERNEL_GAUSSIAN, bad_w[t], 1, 3,
                                         1, NULL),
                         ATTN_E_INVALID_ARG);
        assert_int_equal(attn_nw_loss(&loss, &grad, X_QUERY, Y_QUERY, X_TRAIN,
                                      Y_TRAIN, ATTN_KERNEL_GAUSSIAN, bad_w[t],
                                      1, 3, 1, NULL),
                         ATTN_E_INVALID_ARG);
    }
    /* grad_w only for the Gaussian; the loss alone for any kernel */
    assert_int_equal(attn_nw_loss(&loss, &grad, X_QUERY, Y_QUERY, X_TRAIN,
                                  Y_TRAIN, ATTN_KERNEL_BOXCAR, 1.0, 1, 3, 1,
                                  NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_nw_loss(&loss, NULL, X_QUERY, Y_QUERY, X_TRAIN,
                                  Y_TRAIN, ATTN_KERNEL_TRIANGULAR, 1.0, 1, 3, 1,
                                  NULL),
                     ATTN_OK);
    /* triangular at w = 1: u = 1.5, 0.5, −1.5 -> only x = 2; loss 0 */
    assert_true(loss == 0.0);
    assert_int_equal(attn_nw_predict(&pred, w, X_QUERY, X_TRAIN, Y_TRAIN,
                                     (attn_kernel)9, 1.0, 1, 3, 1, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_nw_predict(&pred, w, X_QUERY, X_TRAIN, Y_TRAIN,
                                     ATTN_KERNEL_GAUSSIAN, 1.0, 0, 3, 1, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_nw_predict(&pred, w, X_QUERY, NULL, Y_TRAIN,
                                     ATTN_KERNEL_GAUSSIAN, 1.0, 1, 3, 1, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_nw_loss(&loss, &grad, X_QUERY, NULL, X_TRAIN, Y_TRAIN,
                                  ATTN_KERNEL_GAUSSIAN, 1.0, 1, 3, 1, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_nw_predict(&pred, w, X_QUERY, X_TRAIN, Y_TRAIN,
                                     ATTN_KERNEL_GAUSSIAN, 1.0, (size_t)1 << 40,
                                     (size_t)1 << 40, 1, NULL),
                     ATTN_E_OVERFLOW);
    assert_int_equal(attn_nw_loss(&loss, &grad, X_QUERY, Y_QUERY, X_TRAIN,
                                  Y_TRAIN, ATTN_KERNEL_GAUSSIAN, 1.0, 1,
                                  SIZE_MAX / 2, 4, NULL),
                     ATTN_E_OVERFLOW);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_worked_example),
        cmocka_unit_test(test_kernels),
        cmocka_unit_test(test_vector_values),
        cmocka_unit_test(test_gradient_vs_finite_differences),
        cmocka_unit_test(test_fit_train_loo),
        cmocka_unit_test(test_fit_query_steps),
        cmocka_unit_test(test_fit_errors),
        cmocka_unit_test(test_zero_mass),
        cmocka_unit_test(test_extreme_bandwidths),
        cmocka_unit_test(test_scale_near_dbl_max),
        cmocka_unit_test(test_nonfinite_prediction),
        cmocka_unit_test(test_argument_errors),
    };
    return cmocka_run_group_tests_name("nw", tests, NULL, NULL);
}
