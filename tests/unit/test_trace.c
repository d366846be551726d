/*
 * test_trace.c — the library's traces of the forward passes (attn.h,
 * "traces of the forward passes") hold the doubles the forward computed
 * with: each test picks parameters under which a forward output is one of
 * the traced intermediates exactly (scale 1 or a power of two, W_o the
 * identity, w_v a unit vector) and compares the bits; then the heads'
 * layout, NW's scores against its weights, and the errors.
 */
#include "check.h"

#include "attn.h"

#include <stdlib.h>
#include <string.h>

/* n doubles from the generator, normals times mul. */
static double *normals(attn_rng *rng, size_t n, double mul) {
    double *x = malloc(n * sizeof *x);
    assert_non_null(x);
    attn_rng_normals(rng, x, n);
    for (size_t i = 0; i < n; i++)
        x[i] *= mul;
    return x;
}

static void assert_same_bits(const double *got, const double *want, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (memcmp(&got[i], &want[i], sizeof(double)) != 0) {
            print_error("[%zu]: %.17g is not %.17g\n", i, got[i], want[i]);
            fail();
        }
}

/* Scale 1 and 1/4 (exact multiples): the forward's scores are Q Kᵀ and
 * Q Kᵀ / 4 bit for bit, on the plain path and the pipelined one. */
static void test_dot_products_are_the_forwards(void **state) {
    (void)state;
    const size_t shapes[][5] = {{2, 3, 5, 4, 2}, {1, 520, 520, 3, 1}};
    attn_rng rng;
    attn_rng_seed(&rng, 1);
    for (size_t c = 0; c < 2; c++) {
        size_t B = shapes[c][0], Nq = shapes[c][1], Nk = shapes[c][2],
               d = shapes[c][3], dv = shapes[c][4];
        double *q = normals(&rng, B * Nq * d, 1),
               *k = normals(&rng, B * Nk * d, 1);
        double *v = normals(&rng, B * Nk * dv, 1);
        double *QK = malloc(B * Nq * Nk * sizeof *QK);
        double *s = malloc(B * Nq * Nk * sizeof *s);
        double *w = malloc(B * Nq * Nk * sizeof *w);
        double *out = malloc(B * Nq * dv * sizeof *out);
        assert_int_equal(attn_dot_products(QK, q, k, B, Nq, Nk, d), ATTN_OK);
        assert_int_equal(attn_dot_forward(out, w, s, q, k, v, NULL, 1.0, B, Nq,
                                          Nk, d, dv, NULL),
                         ATTN_OK);
        assert_same_bits(s, QK, B * Nq * Nk);
        assert_int_equal(attn_dot_forward(out, w, s, q, k, v, NULL, 0.25, B, Nq,
                                          Nk, d, dv, NULL),
                         ATTN_OK);
        for (size_t i = 0; i < B * Nq * Nk; i++)
            QK[i] *= 0.25;
        assert_same_bits(s, QK, B * Nq * Nk);
        free(q), free(k), free(v), free(QK), free(s), free(w), free(out);
    }
}

/* W_o = I (d_out = h), no b_o: the forward's output is the concatenation
 * of the heads bit for bit; the heads are its column blocks; the traced
 * projections give the forward's scores (scale 1/√(h/H) = 1/2 here, a
 * power of two). With biases and a mask. */
static void test_multihead_concat_is_the_forwards(void **state) {
    (void)state;
    const size_t B = 2, Nq = 3, Nk = 5, dq = 4, dk = 3, dv = 2, h = 8, H = 2;
    const size_t dh = h / H;
    attn_rng rng;
    attn_rng_seed(&rng, 2);
    double *q = normals(&rng, B * Nq * dq, 1),
           *k = normals(&rng, B * Nk * dk, 1);
    double *v = normals(&rng, B * Nk * dv, 1);
    double *Wq = normals(&rng, h * dq, 1), *Wk = normals(&rng, h * dk, 1);
    double *Wv = normals(&rng, h * dv, 1), *bq = normals(&rng, h, 1);
    double *bk = normals(&rng, h, 1), *bv = normals(&rng, h, 1);
    double Wo[8 * 8] = {0};
    for (size_t i = 0; i < h; i++)
        Wo[i * h + i] = 1.0;
    const attn_multihead_params params = {Wq, Wk, Wv, Wo, bq, bk, bv, NULL};
    const int64_t lens[] = {2, 5};
    attn_mask mask = {.valid_lens = lens,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    double out[2 * 3 * 8], w[2 * 2 * 3 * 5], s[2 * 2 * 3 * 5];
    assert_int_equal(attn_multihead_forward(out, w, s, q, k, v, &params, &mask,
                                            B, Nq, Nk, dq, dk, dv, h, H, h,
                                            NULL),
                     ATTN_OK);
    double Q[2 * 3 * 8], K[2 * 5 * 8], V[2 * 5 * 8], Qh[2 * 3 * 8],
        Kh[2 * 5 * 8], Vh[2 * 5 * 8], QK[2 * 2 * 3 * 5], wv[2 * 3 * 8],
        concat[2 * 3 * 8];
    const attn_multihead_steps t = {Q, K, V, Qh, Kh, Vh, QK, wv, concat};
    assert_int_equal(attn_multihead_trace(&t, w, q, k, v, &params, B, Nq, Nk,
                                          dq, dk, dv, h, H),
                     ATTN_OK);
    assert_same_bits(concat, out, B * Nq * h);
    for (size_t i = 0; i < B * H * Nq * Nk; i++)
        QK[i] *= 0.5; /* 1/√dh, dh = 4 */
    assert_same_bits(QK, s, B * H * Nq * Nk);
    for (size_t b = 0; b < B; b++)
        for (size_t hd = 0; hd < H; hd++)
            for (size_t i = 0; i < Nq; i++) {
                assert_same_bits(Qh + ((b * H + hd) * Nq + i) * dh,
                                 Q + (b * Nq + i) * h + hd * dh, dh);
                assert_same_bits(wv + ((b * H + hd) * Nq + i) * dh,
                                 concat + (b * Nq + i) * h + hd * dh, dh);
            }
    /* the projections themselves, against loops (BLAS sums differently) */
    for (size_t r = 0; r < B * Nk; r++)
        for (size_t o = 0; o < h; o++) {
            double acc = bv[o];
            for (size_t c = 0; c < dv; c++)
                acc += v[r * dv + c] * Wv[o * dv + c];
            assert_near(V[r * h + o], acc, 1e-14);
        }
    free(q), free(k), free(v), free(Wq), free(Wk), free(Wv), free(bq);
    free(bk), free(bv);
}

/* w_v = e_1: the forward's scores are feature 1 of each pair bit for bit,
 * with projections that allow the exponential form (small W) and with
 * some beyond ±170 (tanh itself); every feature near tanh of the sum. */
static void test_additive_features_are_the_forwards(void **state) {
    (void)state;
    const size_t B = 2, Nq = 7, Nk = 600, dq = 3, dk = 2, dv = 1, h = 3;
    attn_rng rng;
    attn_rng_seed(&rng, 3);
    const double muls[] = {0.7, 120.0};
    for (size_t c = 0; c < 2; c++) {
        double *q = normals(&rng, B * Nq * dq, 1);
        double *k = normals(&rng, B * Nk * dk, 1);
        double *v = normals(&rng, B * Nk * dv, 1);
        double *Wq = normals(&rng, h * dq, muls[c]);
        double *Wk = normals(&rng, h * dk, 1);
        const double w_v[3] = {0, 1, 0};
        size_t nf = B * Nq * Nk * h;
        double *f = malloc(nf * sizeof *f), *Q = malloc(B * Nq * h * 8);
        double *K = malloc(B * Nk * h * 8), *s = malloc(B * Nq * Nk * 8);
        double *w = malloc(B * Nq * Nk * 8), *out = malloc(B * Nq * dv * 8);
        assert_int_equal(attn_additive_forward(out, w, s, q, k, v, Wq, Wk, w_v,
                                               NULL, B, Nq, Nk, dq, dk, dv, h,
                                               NULL),
                         ATTN_OK);
        assert_int_equal(
            attn_additive_trace(Q, K, f, q, k, Wq, Wk, B, Nq, Nk, dq, dk, h),
            ATTN_OK);
        for (size_t p = 0; p < B * Nq * Nk; p++)
            if (memcmp(&f[p * h + 1], &s[p], sizeof(double)) != 0) {
                print_error("pair %zu: feature %.17g, score %.17g\n", p,
                            f[p * h + 1], s[p]);
                fail();
            }
        for (size_t p = 0; p < B * Nq * Nk; p++) {
            size_t b = p / (Nq * Nk), i = p / Nk % Nq, j = p % Nk;
            for (size_t e = 0; e < h; e++) {
                double a = Q[(b * Nq + i) * h + e],
                       kb = K[(b * Nk + j) * h + e];
                assert_near(f[p * h + e], tanh(a + kb),
                            4e-16 * (fabs(a) + fabs(kb) + 1));
            }
        }
        free(q), free(k), free(v), free(Wq), free(Wk), free(f), free(Q);
        free(K), free(s), free(w), free(out);
    }
}

/* NW: distances and the compact kernels' scores, whose normalised rows
 * are the prediction's weights bit for bit (the same sum, in order); the
 * Gaussian's scores −(d·w)²/2 and their softmax. */
static void test_nw_scores_give_the_weights(void **state) {
    (void)state;
    const double xt[] = {0.1, 0.9, 1.7, 2.2, 3.5, 4.0};
    const double yt[] = {1, -1, 2, 0.5, 3, -2};
    const double xq[] = {0.5, 2.0, 3.9};
    const attn_kernel kernels[] = {ATTN_KERNEL_GAUSSIAN, ATTN_KERNEL_CONSTANT,
                                   ATTN_KERNEL_BOXCAR, ATTN_KERNEL_EPANECHNIKOV,
                                   ATTN_KERNEL_TRIANGULAR};
    double d[18], s[18], w[18], pred[3];
    for (size_t c = 0; c < 5; c++) {
        assert_int_equal(attn_nw_predict(pred, w, xq, xt, yt, kernels[c], 0.8,
                                         3, 6, 1, NULL),
                         ATTN_OK);
        assert_int_equal(attn_nw_trace(d, s, xq, xt, kernels[c], 0.8, 3, 6),
                         ATTN_OK);
        for (size_t q = 0; q < 3; q++) {
            double mass = 0, want[6];
            for (size_t i = 0; i < 6; i++) {
                double di = xq[q] - xt[i];
                assert_true(d[q * 6 + i] == di);
                if (kernels[c] == ATTN_KERNEL_GAUSSIAN) {
                    assert_true(s[q * 6 + i] == -(di * 0.8) * (di * 0.8) / 2);
                    want[i] = exp(s[q * 6 + i]);
                } else {
                    want[i] = s[q * 6 + i];
                }
                mass += want[i];
            }
            for (size_t i = 0; i < 6; i++)
                want[i] /= mass;
            if (kernels[c] == ATTN_KERNEL_GAUSSIAN)
                assert_close(w + q * 6, want, 6, 1e-15);
            else
                assert_same_bits(w + q * 6, want, 6);
        }
    }
}

static void test_errors(void **state) {
    (void)state;
    double x[64] = {0}, y[64];
    assert_int_equal(attn_dot_products(NULL, x, x, 1, 1, 1, 1),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_dot_products(y, x, x, 1, 0, 1, 1),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_dot_products(y, x, x, SIZE_MAX, 2, 2, 2),
                     ATTN_E_OVERFLOW);
    const attn_multihead_params p = {x, x, x, x, NULL, NULL, NULL, NULL};
    const attn_multihead_steps t = {y, y, y, y, y, y, y, y, y};
    assert_int_equal(
        attn_multihead_trace(&t, x, x, x, x, &p, 1, 1, 1, 1, 1, 1, 3, 2),
        ATTN_E_INVALID_ARG); /* H does not divide h */
    const attn_multihead_steps t0 = {y, y, y, NULL, y, y, y, y, y};
    assert_int_equal(
        attn_multihead_trace(&t0, x, x, x, x, &p, 1, 1, 1, 1, 1, 1, 2, 2),
        ATTN_E_INVALID_ARG);
    assert_int_equal(
        attn_additive_trace(y, y, NULL, x, x, x, x, 1, 1, 1, 1, 1, 1),
        ATTN_E_INVALID_ARG);
    assert_int_equal(
        attn_additive_trace(y, y, y, x, x, x, x, 1, 1, 1, 1, 1, SIZE_MAX / 4),
        ATTN_E_OVERFLOW);
    assert_int_equal(attn_nw_trace(y, y, x, x, ATTN_KERNEL_GAUSSIAN, 0.0, 1, 1),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_nw_trace(y, y, x, x, (attn_kernel)9, 1.0, 1, 1),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(
        attn_nw_trace(y, y, x, x, ATTN_KERNEL_GAUSSIAN, 1.0, SIZE_MAX, 2),
        ATTN_E_OVERFLOW);
    size_t bytes;
    assert_int_equal(attn_additive_trace_workspace(&bytes, 2, 3, 4, 5),
                     ATTN_OK);
    assert_int_equal(bytes, 24 * 2 * (3 + 4) * 5 + 4);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dot_products_are_the_forwards),
        cmocka_unit_test(test_multihead_concat_is_the_forwards),
        cmocka_unit_test(test_additive_features_are_the_forwards),
        cmocka_unit_test(test_nw_scores_give_the_weights),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests_name("trace", tests, NULL, NULL);
}
