/*
 * test_additive.c — additive (Bahdanau) attention: d2l's toy example with
 * Xavier parameters, a case written out by hand, the workspace size,
 * extremes and errors, and the BLAS path against the plain-loop reference
 * on 200 random shapes with dq, dk and h drawn independently.
 */
#include "check.h"

#include "attn.h"

#include <stdlib.h>
#include <string.h>

/* d2l 11.3.3's toy: queries (2, 1, 20), keys all ones (2, 10, 2), values
 * arange(40) as (10, 4) for both examples, valid_lens [2, 6], h = 8 with
 * Xavier-uniform W_q (8, 20), W_k (8, 2), w_v (1, 8) drawn in that order.
 * Equal keys give equal scores whatever the parameters: the outputs are
 * [2, 3, 4, 5] and [10, 11, 12, 13] (tolerance 1e-12). */
static void test_d2l_toy(void **state) {
    (void)state;
    double q[2 * 1 * 20], k[2 * 10 * 2], v[2 * 10 * 4];
    double W_q[8 * 20], W_k[8 * 2], w_v[8];
    attn_rng rng;
    attn_rng_seed(&rng, 0);
    attn_rng_xavier(&rng, W_q, 8, 20);
    attn_rng_xavier(&rng, W_k, 8, 2);
    attn_rng_xavier(&rng, w_v, 1, 8);
    attn_rng_normals(&rng, q, 40);
    for (size_t t = 0; t < 40; t++)
        k[t] = 1.0;
    for (size_t t = 0; t < 80; t++)
        v[t] = (double)(t % 40);
    const int64_t lens[] = {2, 6};
    attn_mask mask = {.valid_lens = lens,
                      .per_query = 0,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    const double want[] = {2, 3, 4, 5, 10, 11, 12, 13};
    double out[8], w[20];
    attn_fault fault;
    assert_int_equal(attn_additive_forward(out, w, NULL, q, k, v, W_q, W_k, w_v,
                                           &mask, 2, 1, 10, 20, 2, 4, 8,
                                           &fault),
                     ATTN_OK);
    assert_close(out, want, 8, 1e-12);
    for (size_t j = 2; j < 10; j++)
        assert_true(w[j] == 0.0);
    for (size_t j = 6; j < 10; j++)
        assert_true(w[10 + j] == 0.0);
    assert_int_equal(attn_additive_forward_ref(out, w, NULL, q, k, v, W_q, W_k,
                                               w_v, &mask, 2, 1, 10, 20, 2, 4,
                                               8, &fault),
                     ATTN_OK);
    assert_close(out, want, 8, 1e-12);
}

/* dq = 2, dk = 1, h = 2, Nk = 3, dv = 2, written out:
 *   W_q = I, W_k = (2, −1)ᵀ, w_v = (0.5, −1), q = (0.3, −0.2),
 *   score_j = 0.5 tanh(0.3 + 2 k_j) − tanh(−0.2 − k_j). */
static void test_hand_example(void **state) {
    (void)state;
    const double q[] = {0.3, -0.2}, k[] = {0.1, -0.4, 0.7};
    const double v[] = {1.0, -1.0, 2.0, 0.5, -3.0, 4.0};
    const double W_q[] = {1.0, 0.0, 0.0, 1.0}, W_k[] = {2.0, -1.0};
    const double w_v[] = {0.5, -1.0};
    double s_want[3], w_want[3], out_want[2] = {0.0, 0.0}, sum = 0.0;
    for (size_t j = 0; j < 3; j++) {
        s_want[j] = 0.5 * tanh(0.3 + 2.0 * k[j]) - tanh(-0.2 - k[j]);
        sum += exp(s_want[j]);
    }
    for (size_t j = 0; j < 3; j++) {
        w_want[j] = exp(s_want[j]) / sum;
        out_want[0] += w_want[j] * v[2 * j];
        out_want[1] += w_want[j] * v[2 * j + 1];
    }
    double out[2], w[3], s[3];
    assert_int_equal(attn_additive_forward(out, w, s, q, k, v, W_q, W_k, w_v,
                                           NULL, 1, 1, 3, 2, 1, 2, 2, NULL),
                     ATTN_OK);
    assert_close(s, s_want, 3, 1e-15);
    assert_close(w, w_want, 3, 1e-15);
    assert_close(out, out_want, 2, 1e-14);
    assert_int_equal(attn_additive_forward_ref(out, w, s, q, k, v, W_q, W_k,
                                               w_v, NULL, 1, 1, 3, 2, 1, 2, 2,
                                               NULL),
                     ATTN_OK);
    assert_close(s, s_want, 3, 1e-15);
    assert_close(w, w_want, 3, 1e-15);
    assert_close(out, out_want, 2, 1e-14);
}

static void test_workspace(void **state) {
    (void)state;
    size_t bytes = 0;
    /* projected queries (B·Nq, h) plus projected keys (B·Nk, h), three
     * times (exp and expm1 of twice each beside them) */
    assert_int_equal(attn_additive_workspace(&bytes, 2, 1, 10, 8), ATTN_OK);
    assert_int_equal(bytes, 3 * (2 * 1 + 2 * 10) * 8 * sizeof(double));
    assert_int_equal(attn_additive_workspace(&bytes, 3, 7, 5, 1), ATTN_OK);
    assert_int_equal(bytes, 3 * (3 * 7 + 3 * 5) * sizeof(double));
    /* independent of dq, dk, dv, and far below B·Nq·Nk·h */
    assert_int_equal(attn_additive_workspace(&bytes, 4, 512, 512, 64), ATTN_OK);
    assert_int_equal(bytes, (size_t)3 * (4 * 512 * 2) * 64 * sizeof(double));
    assert_int_equal(attn_additive_workspace(&bytes, SIZE_MAX / 2, 1, 2, 1),
                     ATTN_E_OVERFLOW);
    assert_int_equal(attn_additive_workspace(&bytes, 1, SIZE_MAX / 16, 1, 2),
                     ATTN_E_OVERFLOW);
    assert_int_equal(attn_additive_workspace(&bytes, 1, 1, 1, SIZE_MAX / 8),
                     ATTN_E_OVERFLOW);
    assert_int_equal(attn_additive_workspace(NULL, 1, 1, 1, 1),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_additive_workspace(&bytes, 1, 1, 1, 0),
                     ATTN_E_INVALID_ARG);
}

static size_t draw_size(attn_rng *rng, size_t max) {
    return 1 + (size_t)(attn_rng_uniform(rng) * (double)max);
}

static double *alloc_normals(attn_rng *rng, size_t n) {
    double *x = malloc(n * sizeof *x);
    assert_non_null(x);
    attn_rng_normals(rng, x, n);
    return x;
}

static void test_random_shapes_vs_reference(void **state) {
    (void)state;
    const double tol = 1e-12;
    attn_rng rng;
    attn_rng_seed(&rng, 7);
    double worst_out = 0.0, worst_w = 0.0, worst_s = 0.0;
    size_t distinct = 0;
    for (int round = 0; round < 200; round++) {
        size_t B = draw_size(&rng, 3), Nq = draw_size(&rng, 8);
        size_t Nk = draw_size(&rng, 8), dq = draw_size(&rng, 8);
        size_t dk = draw_size(&rng, 8), dv = draw_size(&rng, 8);
        size_t h = draw_size(&rng, 8);
        distinct += dq != dk && dk != h && dq != h;
        int per_query = attn_rng_uniform(&rng) < 0.5;
        int64_t lens[3 * 8];
        for (size_t t = 0; t < (per_query ? B * Nq : B); t++)
            lens[t] = (int64_t)(attn_rng_uniform(&rng) * (double)(Nk + 1));
        attn_mask mask = {
            .valid_lens = attn_rng_uniform(&rng) < 0.7 ? lens : NULL,
            .per_query = per_query,
            .causal = (attn_causal)(attn_rng_next(&rng) % 3),
            .fully_masked = (attn_fully_masked)(attn_rng_next(&rng) % 2)};
        double *W_q = malloc(h * dq * sizeof *W_q);
        double *W_k = malloc(h * dk * sizeof *W_k);
        double *w_v = malloc(h * sizeof *w_v);
        assert_non_null(W_q);
        assert_non_null(W_k);
        assert_non_null(w_v);
        attn_rng_xavier(&rng, W_q, h, dq);
        attn_rng_xavier(&rng, W_k, h, dk);
        attn_rng_xavier(&rng, w_v, 1, h);
        double *q = alloc_normals(&rng, B * Nq * dq);
        double *k = alloc_normals(&rng, B * Nk * dk);
        double *v = alloc_normals(&rng, B * Nk * dv);
        size_t no = B * Nq * dv, ns = B * Nq * Nk;
        double *buf = malloc((2 * no + 4 * ns) * sizeof *buf);
        assert_non_null(buf);
        double *out = buf, *out_ref = out + no, *w = out_ref + no;
        double *w_ref = w + ns, *s = w_ref + ns, *s_ref = s + ns;
        assert_int_equal(attn_additive_forward(out, w, s, q, k, v, W_q, W_k,
                                               w_v, &mask, B, Nq, Nk, dq, dk,
                                               dv, h, NULL),
                         ATTN_OK);
        assert_int_equal(attn_additive_forward_ref(out_ref, w_ref, s_ref, q, k,
                                                   v, W_q, W_k, w_v, &mask, B,
                                                   Nq, Nk, dq, dk, dv, h, NULL),
                         ATTN_OK);
        size_t at;
        worst_out = fmax(worst_out, check_worst(out, out_ref, no, &at));
        worst_w = fmax(worst_w, check_worst(w, w_ref, ns, &at));
        worst_s = fmax(worst_s, check_worst(s, s_ref, ns, &at));
        assert_close(out, out_ref, no, tol);
        assert_close(w, w_ref, ns, tol);
        assert_close(s, s_ref, ns, tol);
        free(W_q);
        free(W_k);
        free(w_v);
        free(q);
        free(k);
        free(v);
        free(buf);
    }
    assert_true(distinct > 50); /* dq != dk != h is well covered */
    print_message("# additive, 200 random shapes (%zu with dq, dk, h all "
                  "different), worst |BLAS - loops| / max(1, |loops|): "
                  "output %.3g, weights %.3g, scores %.3g (tol %.0e)\n",
                  distinct, worst_out, worst_w, worst_s, tol);
}

/* Enough features (2 · 61 · 130 · 40 = 634,400) that the scores are shared
 * out over the cores, with odd sizes so the ranges and key blocks have
 * remainders: the same as the reference loops. With the first query
 * scaled by first_scale, its projections pass ATTN_TANH_EXP_MAX and the
 * features come from tanh itself instead of exponentials. */
static void check_large(double first_scale) {
    const size_t B = 2, Nq = 61, Nk = 130, dq = 5, dk = 7, dv = 3, h = 40;
    attn_rng rng;
    attn_rng_seed(&rng, 11);
    double *W_q = alloc_normals(&rng, h * dq),
           *W_k = alloc_normals(&rng, h * dk);
    double *w_v = alloc_normals(&rng, h);
    double *q = alloc_normals(&rng, B * Nq * dq);
    for (size_t c = 0; c < dq; c++)
        q[c] *= first_scale;
    double *k = alloc_normals(&rng, B * Nk * dk);
    double *v = alloc_normals(&rng, B * Nk * dv);
    size_t no = B * Nq * dv, ns = B * Nq * Nk;
    double *buf = malloc((2 * no + 4 * ns) * sizeof *buf);
    assert_non_null(buf);
    double *out = buf, *out_ref = out + no, *w = out_ref + no;
    double *w_ref = w + ns, *s = w_ref + ns, *s_ref = s + ns;
    int64_t lens[] = {100, 130};
    attn_mask mask = {.valid_lens = lens,
                      .per_query = 0,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    assert_int_equal(attn_additive_forward(out, w, s, q, k, v, W_q, W_k, w_v,
                                           &mask, B, Nq, Nk, dq, dk, dv, h,
                                           NULL),
                     ATTN_OK);
    assert_int_equal(attn_additive_forward_ref(out_ref, w_ref, s_ref, q, k, v,
                                               W_q, W_k, w_v, &mask, B, Nq, Nk,
                                               dq, dk, dv, h, NULL),
                     ATTN_OK);
    assert_close(s, s_ref, ns, 1e-12);
    assert_close(w, w_ref, ns, 1e-12);
    assert_close(out, out_ref, no, 1e-12);
    free(buf);
    free(W_q);
    free(W_k);
    free(w_v);
    free(q);
    free(k);
    free(v);
}

static void test_large_split_over_threads(void **state) {
    (void)state;
    check_large(1.0); /* projections within a few units: exponentials */
    check_large(1e3); /* some beyond 170: tanh */
}

static void test_extremes(void **state) {
    (void)state;
    const double one[] = {1.0};
    double out[2], w[2], s[2];
    attn_fault fault;

    /* Nk = 1, dq = dk = h = dv = 1: weight exactly 1 */
    const double q1[] = {0.25}, k1[] = {-4.0}, v1[] = {7.5};
    assert_int_equal(attn_additive_forward(out, w, s, q1, k1, v1, one, one, one,
                                           NULL, 1, 1, 1, 1, 1, 1, 1, &fault),
                     ATTN_OK);
    assert_true(w[0] == 1.0 && out[0] == 7.5);
    assert_near(s[0], tanh(0.25 - 4.0), 3.5e-16); /* lib/vmath.c */

    /* huge projections saturate tanh: equal scores, equal weights */
    const double qh[] = {1e300}, kh[] = {1.0, -1e10}, vh[] = {2.0, 4.0};
    assert_int_equal(attn_additive_forward(out, w, s, qh, kh, vh, one, one, one,
                                           NULL, 1, 1, 2, 1, 1, 1, 1, &fault),
                     ATTN_OK);
    assert_true(s[0] == 1.0 && s[1] == 1.0);
    assert_true(w[0] == 0.5 && w[1] == 0.5 && out[0] == 3.0);

    /* inf − inf inside tanh -> NaN score -> ATTN_E_NONFINITE ... */
    const double big[] = {10.0};
    const double qi[] = {1e308}, ki[] = {0.0, -1e308};
    assert_int_equal(attn_additive_forward(out, w, s, qi, ki, vh, big, big, one,
                                           NULL, 1, 1, 2, 1, 1, 1, 1, &fault),
                     ATTN_E_NONFINITE);
    assert_int_equal(fault.index, 1);
    assert_int_equal(attn_additive_forward_ref(out, w, s, qi, ki, vh, big, big,
                                               one, NULL, 1, 1, 2, 1, 1, 1, 1,
                                               &fault),
                     ATTN_E_NONFINITE);
    assert_int_equal(fault.index, 1);
    /* ... unless that key is masked */
    const int64_t len1[] = {1};
    attn_mask mask = {.valid_lens = len1,
                      .per_query = 0,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    assert_int_equal(attn_additive_forward(out, w, s, qi, ki, vh, big, big, one,
                                           &mask, 1, 1, 2, 1, 1, 1, 1, &fault),
                     ATTN_OK);
    assert_true(w[0] == 1.0 && w[1] == 0.0 && out[0] == 2.0);
}

/* Tiny and cancelling projections keep their relative accuracy: scores
 * tanh(q + k) for q = 1e-9 against keys 0, 1e-9 and 3e-12, and for pairs
 * whose sum cancels, within 4e-16 relative of libm's tanh of the same
 * sums. */
static void test_tiny_projections(void **state) {
    (void)state;
    const double one[] = {1.0};
    const double q[] = {1e-9}, k[] = {0.0, 1e-9, 3e-12}, v[] = {1, 2, 3};
    double out[1], w[3], s[3];
    assert_int_equal(attn_additive_forward(out, w, s, q, k, v, one, one, one,
                                           NULL, 1, 1, 3, 1, 1, 1, 1, NULL),
                     ATTN_OK);
    for (size_t j = 0; j < 3; j++) {
        double want = tanh(q[0] + k[j]);
        assert_true(fabs(s[j] - want) <= 4e-16 * fabs(want));
    }
    /* projections that cancel: the sum's tanh, not a difference of
     * exponentials (which would leave 5.6e-17 as 0, or -1e-10 off by 6e-7
     * relative) */
    const double qc[] = {0.4792079334269953, 0.5, 100.0, 1e-9};
    const double kc[] = {-0.47920793342699525, -0.5000000001, -100.00000001,
                         -1e-9};
    for (size_t t = 0; t < 4; t++) {
        assert_int_equal(attn_additive_forward(out, w, s, &qc[t], &kc[t], v,
                                               one, one, one, NULL, 1, 1, 1, 1,
                                               1, 1, 1, NULL),
                         ATTN_OK);
        double want = tanh(qc[t] + kc[t]);
        assert_true(fabs(s[0] - want) <= 4e-16 * fabs(want));
    }
}

static void test_errors(void **state) {
    (void)state;
    const double q[] = {1.0, 2.0}, k[] = {1.0, 0.0}, v[] = {1.0, 2.0};
    const double W[] = {1.0, 1.0};
    double out[2], w[2];
    attn_fault fault;
    assert_int_equal(attn_additive_forward(out, w, NULL, q, k, v, NULL, W, W,
                                           NULL, 1, 1, 2, 1, 1, 1, 1, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_additive_forward(out, w, NULL, q, k, v, W, W, NULL,
                                           NULL, 1, 1, 2, 1, 1, 1, 1, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_additive_forward(out, w, NULL, q, k, v, W, W, W, NULL,
                                           1, 1, 2, 1, 1, 1, 0, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_additive_forward_ref(out, w, NULL, q, k, v, W, W, W,
                                               NULL, 1, 1, 2, 0, 1, 1, 1, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_additive_forward(out, w, NULL, q, k, v, W, W, W, NULL,
                                           1, 1, 2, 1, 1, 1, SIZE_MAX / 4,
                                           NULL),
                     ATTN_E_OVERFLOW);
    const int64_t bad[] = {-2};
    attn_mask mask = {.valid_lens = bad,
                      .per_query = 0,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    assert_int_equal(attn_additive_forward(out, w, NULL, q, k, v, W, W, W,
                                           &mask, 1, 1, 2, 1, 1, 1, 1, &fault),
                     ATTN_E_VALID_LEN);
    assert_int_equal(fault.index, 0);
    const int64_t empty[] = {0};
    attn_mask err = {.valid_lens = empty,
                     .per_query = 0,
                     .causal = ATTN_CAUSAL_TOP_LEFT,
                     .fully_masked = ATTN_FULLY_MASKED_ERROR};
    assert_int_equal(attn_additive_forward(out, w, NULL, q, k, v, W, W, W, &err,
                                           1, 1, 2, 1, 1, 1, 1, &fault),
                     ATTN_E_FULLY_MASKED);
    assert_int_equal(fault.index, 0);
    assert_int_equal(fault.by_causal, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_d2l_toy),
        cmocka_unit_test(test_hand_example),
        cmocka_unit_test(test_workspace),
        cmocka_unit_test(test_random_shapes_vs_reference),
        cmocka_unit_test(test_large_split_over_threads),
        cmocka_unit_test(test_extremes),
        cmocka_unit_test(test_tiny_projections),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests_name("additive", tests, NULL, NULL);
}
