/*
 * test_layer_norm.c — layer normalisation (PyTorch nn.LayerNorm: biased
 * variance, eps inside the square root): values by hand, the eps of a
 * constant row, shift invariance, the backward pass against central
 * finite differences and its zero row sums, errors.
 */
#include "check.h"

#include "attn.h"

#include <stdint.h>
#include <stdlib.h>

/* x = [1, 2, 3, 4]: mean 2.5, biased variance 1.25, so with eps 0
 * y = (x − 2.5)/sqrt(1.25) = [−3, −1, 1, 3]/sqrt(5); then gamma, beta. */
static void test_by_hand(void **state) {
    (void)state;
    const double x[4] = {1, 2, 3, 4}, one[4] = {1, 1, 1, 1},
                 zero[4] = {0, 0, 0, 0};
    const double g[4] = {2, 1, -1, 0.5}, b[4] = {0, 1, 2, -3};
    double y[4], mean, rstd;
    assert_int_equal(
        attn_layer_norm_forward(y, &mean, &rstd, x, one, zero, 1, 4, 0, NULL),
        ATTN_OK);
    const double s5 = sqrt(5.0);
    const double want[4] = {-3 / s5, -1 / s5, 1 / s5, 3 / s5};
    assert_close(y, want, 4, 1e-15);
    assert_near(mean, 2.5, 0);
    assert_near(rstd, 1 / sqrt(1.25), 1e-15);
    assert_int_equal(
        attn_layer_norm_forward(y, NULL, NULL, x, g, b, 1, 4, 0, NULL),
        ATTN_OK);
    for (size_t c = 0; c < 4; c++)
        assert_near(y[c], want[c] * g[c] + b[c], 1e-15);
    /* eps inside the square root: var 1.25 + eps 0.75 = 2 */
    assert_int_equal(
        attn_layer_norm_forward(y, NULL, &rstd, x, one, zero, 1, 4, 0.75, NULL),
        ATTN_OK);
    assert_near(rstd, 1 / sqrt(2.0), 1e-15);
    assert_near(y[3], 1.5 / sqrt(2.0), 1e-15);
}

/* A constant row has variance 0: y = beta exactly, rstd = 1/sqrt(eps);
 * with eps 0 the row cannot be normalised (non-finite). */
static void test_constant_row(void **state) {
    (void)state;
    const double x[3] = {3, 3, 3}, one[3] = {1, 1, 1}, b[3] = {0.5, -1, 2};
    double y[3], rstd;
    assert_int_equal(
        attn_layer_norm_forward(y, NULL, &rstd, x, one, b, 1, 3, 1e-5, NULL),
        ATTN_OK);
    for (size_t c = 0; c < 3; c++)
        assert_true(y[c] == b[c]);
    assert_near(rstd, 1 / sqrt(1e-5), 1e-15);
    attn_fault f;
    assert_int_equal(
        attn_layer_norm_forward(y, NULL, NULL, x, one, b, 1, 3, 0, &f),
        ATTN_E_NONFINITE);
}

/* Adding a constant to a row changes nothing but its mean; y may alias
 * x. */
static void test_shift_invariance(void **state) {
    (void)state;
    enum { R = 3, E = 5 };
    double x[R * E], shifted[R * E], y[R * E], g[E], b[E], m1[R], m2[R];
    for (size_t i = 0; i < R * E; i++) {
        x[i] = sin(1.7 * (double)i) * 2.0;
        shifted[i] = x[i] + 1024.0;
    }
    for (size_t c = 0; c < E; c++) {
        g[c] = 0.5 + (double)c;
        b[c] = -0.25 * (double)c;
    }
    assert_int_equal(
        attn_layer_norm_forward(y, m1, NULL, x, g, b, R, E, 1e-5, NULL),
        ATTN_OK);
    assert_int_equal(attn_layer_norm_forward(shifted, m2, NULL, shifted, g, b,
                                             R, E, 1e-5, NULL),
                     ATTN_OK);
    assert_close(shifted, y, R * E, 1e-12);
    for (size_t r = 0; r < R; r++)
        assert_near(m2[r], m1[r] + 1024.0, 1e-12);
}

/* The loss Σ y ⊙ w: gradients against central differences (h = 1e-6,
 * 1e-8), and every row of grad_x sums to 0 (y ignores a row's shift). */
static void test_backward(void **state) {
    (void)state;
    enum { R = 4, E = 6 };
    double x[R * E], w[R * E], g[E], b[E], mean[R], rstd[R];
    double y[R * E], gx[R * E], gg[E], gb[E];
    for (size_t i = 0; i < R * E; i++) {
        x[i] = cos(0.9 * (double)i + 0.3) * 1.5;
        w[i] = sin(2.1 * (double)i);
    }
    for (size_t c = 0; c < E; c++) {
        g[c] = 1.0 + 0.3 * (double)c;
        b[c] = 0.1 * (double)c;
    }
    const double eps = 1e-5;
    assert_int_equal(
        attn_layer_norm_forward(y, mean, rstd, x, g, b, R, E, eps, NULL),
        ATTN_OK);
    assert_int_equal(
        attn_layer_norm_backward(gx, gg, gb, w, x, mean, rstd, g, R, E, NULL),
        ATTN_OK);
    double *const targets[3] = {x, g, b};
    const double *const grads[3] = {gx, gg, gb};
    const size_t counts[3] = {R * E, E, E};
    const double h = 1e-6;
    for (size_t t = 0; t < 3; t++) {
        for (size_t i = 0; i < counts[t]; i++) {
            double keep = targets[t][i], loss[2];
            for (int s = 0; s < 2; s++) {
                targets[t][i] = keep + (s ? -h : h);
                attn_layer_norm_forward(y, NULL, NULL, x, g, b, R, E, eps,
                                        NULL);
                loss[s] = 0.0;
                for (size_t k = 0; k < R * E; k++)
                    loss[s] += y[k] * w[k];
            }
            targets[t][i] = keep;
            assert_near(grads[t][i], (loss[0] - loss[1]) / (2 * h), 1e-8);
        }
    }
    for (size_t r = 0; r < R; r++) {
        double sum = 0.0;
        for (size_t c = 0; c < E; c++)
            sum += gx[r * E + c];
        assert_near(sum, 0.0, 1e-14);
    }
    /* grad_x may alias grad_y */
    double w2[R * E];
    for (size_t i = 0; i < R * E; i++)
        w2[i] = w[i];
    assert_int_equal(
        attn_layer_norm_backward(w2, gg, gb, w2, x, mean, rstd, g, R, E, NULL),
        ATTN_OK);
    assert_close(w2, gx, R * E, 0);
}

static void test_errors(void **state) {
    (void)state;
    double x[2] = {1, 2}, y[2], g[2] = {1, 1}, b[2] = {0, 0}, m[1], s[1];
    assert_int_equal(
        attn_layer_norm_forward(NULL, m, s, x, g, b, 1, 2, 1e-5, NULL),
        ATTN_E_INVALID_ARG);
    assert_int_equal(
        attn_layer_norm_forward(y, m, s, x, g, b, 0, 2, 1e-5, NULL),
        ATTN_E_INVALID_ARG);
    assert_int_equal(attn_layer_norm_forward(y, m, s, x, g, b, 1, 2, -1, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_layer_norm_forward(y, m, s, x, g, b, 1, 2, NAN, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(
        attn_layer_norm_forward(y, m, s, x, g, b, SIZE_MAX, 2, 1e-5, NULL),
        ATTN_E_OVERFLOW);
    assert_int_equal(
        attn_layer_norm_backward(y, g, b, x, x, NULL, s, g, 1, 2, NULL),
        ATTN_E_INVALID_ARG);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_by_hand),
        cmocka_unit_test(test_constant_row),
        cmocka_unit_test(test_shift_invariance),
        cmocka_unit_test(test_backward),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
