/*
 * test_rng.c — reproducible randomness and the textbook's NW dataset,
 * against the golden values of the wire contract (docs/contract.md sections 5
 * and 7), compared exactly (==), plus structural and statistical properties.
 */
#include "check.h"

#include "attn.h"

#include <string.h>

static void test_next_golden(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 0);
    /* s[0] is the first splitmix64 output from state 0 (Vigna's reference
     * splitmix64.c gives 0xe220a8397b1dcdaf) */
    assert_true(rng.s[0] == 0xe220a8397b1dcdafu);
    assert_true(attn_rng_next(&rng) == 0x99ec5f36cb75f2b4u);
    assert_true(attn_rng_next(&rng) == 0xbf6e1f784956452au);
}

static void test_uniform_golden(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 0);
    assert_true(attn_rng_uniform(&rng) == 0.6012629994179048);
    assert_true(attn_rng_uniform(&rng) == 0.7477740925472398);
    assert_true(attn_rng_uniform(&rng) == 0.10301998939503632);
    /* uniform() is (next() >> 11) · 2⁻⁵³ of the same stream */
    attn_rng a, b;
    attn_rng_seed(&a, 99);
    attn_rng_seed(&b, 99);
    for (int t = 0; t < 1000; t++) {
        uint64_t bits = attn_rng_next(&a);
        double u = attn_rng_uniform(&b);
        assert_true(u == (double)(bits >> 11) / 9007199254740992.0);
        assert_true(u >= 0.0 && u < 1.0);
    }
}

static void test_normals_golden(void **state) {
    (void)state;
    attn_rng rng;
    double z[3];
    attn_rng_seed(&rng, 0);
    attn_rng_normals(&rng, z, 3);
    assert_true(z[0] == -0.01410679738124918);
    assert_true(z[1] == -1.0085864725210538);
    assert_true(z[2] == -1.8458950876958273);

    /* Box–Muller from the uniforms themselves (first pair): exact */
    attn_rng_seed(&rng, 0);
    double u1 = attn_rng_uniform(&rng), u2 = attn_rng_uniform(&rng);
    double r = sqrt(-2.0 * log(u1));
    assert_true(z[0] == r * cos(2.0 * M_PI * u2));
    assert_true(z[1] == r * sin(2.0 * M_PI * u2));
}

/* An odd count drops the pair's second value: normals(5) draws 6 uniforms,
 * gives the first five of normals(6), and leaves the same state. */
static void test_normals_odd_count(void **state) {
    (void)state;
    attn_rng a, b;
    double five[5], six[6];
    attn_rng_seed(&a, 17);
    attn_rng_seed(&b, 17);
    attn_rng_normals(&a, five, 5);
    attn_rng_normals(&b, six, 6);
    assert_memory_equal(five, six, sizeof five);
    assert_memory_equal(a.s, b.s, sizeof a.s);
    attn_rng_normals(&a, five, 0); /* n = 0 draws nothing */
    assert_memory_equal(a.s, b.s, sizeof a.s);
}

static void test_xavier_golden(void **state) {
    (void)state;
    attn_rng rng;
    double W[6];
    attn_rng_seed(&rng, 0);
    attn_rng_xavier(&rng, W, 2, 3);
    const double want[] = {0.22185611608727585, 0.5428458386139836,
                           -0.8697396267479146, -0.18274417446004343,
                           0.510470366862243,   1.0948939664127075};
    for (size_t t = 0; t < 6; t++)
        assert_true(W[t] == want[t]);
    /* bounds: |W| <= sqrt(6 / (in + out)) for a (5, 7) matrix */
    double W2[35];
    attn_rng_xavier(&rng, W2, 5, 7);
    double a = sqrt(6.0 / 12.0);
    for (size_t t = 0; t < 35; t++)
        assert_true(W2[t] >= -a && W2[t] < a);
}

/* Means and variances over 200000 draws, tolerance about 5 standard errors:
 * uniform mean 0.5 ± 0.003, variance 1/12 ± 0.001; normal mean 0 ± 0.012,
 * variance 1 ± 0.016. */
static void test_statistics(void **state) {
    (void)state;
    enum { N = 200000 };
    static double z[N];
    attn_rng rng;
    attn_rng_seed(&rng, 12345);
    double sum = 0.0, sum2 = 0.0;
    for (int t = 0; t < N; t++) {
        double u = attn_rng_uniform(&rng);
        sum += u;
        sum2 += u * u;
    }
    double mean = sum / N, var = sum2 / N - mean * mean;
    assert_true(fabs(mean - 0.5) < 0.003);
    assert_true(fabs(var - 1.0 / 12.0) < 0.001);
    attn_rng_normals(&rng, z, N);
    sum = sum2 = 0.0;
    for (int t = 0; t < N; t++) {
        sum += z[t];
        sum2 += z[t] * z[t];
    }
    mean = sum / N;
    var = sum2 / N - mean * mean;
    assert_true(fabs(mean) < 0.012);
    assert_true(fabs(var - 1.0) < 0.016);
    print_message("# 200000 normals: mean %.4f, variance %.4f\n", mean, var);
}

static void test_seeds_reproduce(void **state) {
    (void)state;
    attn_rng a, b, c;
    attn_rng_seed(&a, 42);
    attn_rng_seed(&b, 42);
    attn_rng_seed(&c, 43);
    int differ = 0;
    for (int t = 0; t < 100; t++) {
        uint64_t x = attn_rng_next(&a);
        assert_true(x == attn_rng_next(&b));
        differ += x != attn_rng_next(&c);
    }
    assert_true(differ >= 99);
    attn_rng_seed(&a, UINT64_MAX); /* any 64-bit seed */
    assert_true(a.s[0] | a.s[1] | a.s[2] | a.s[3]);
}

static double f_truth(double x) {
    return 2.0 * sin(x) + pow(x, 0.8);
}

static void test_dataset(void **state) {
    (void)state;
    double x[50], y[50], x_test[ATTN_NW_DATASET_TEST];
    double y_truth[ATTN_NW_DATASET_TEST];
    assert_int_equal(attn_nw_dataset(x, y, x_test, y_truth, 50, 0.5, 0),
                     ATTN_OK);
    /* docs/contract.md section 5, seed 0 with the defaults */
    assert_true(x[0] == 0.19157748800980812);
    assert_true(y[0] == 0.4527892370680555);
    /* x = 5u sorted ascending, then y = f(x) + 0.5 z with the next normals */
    attn_rng rng;
    attn_rng_seed(&rng, 0);
    double u_sorted[50], z[50];
    for (size_t i = 0; i < 50; i++)
        u_sorted[i] = 5.0 * attn_rng_uniform(&rng);
    attn_rng_normals(&rng, z, 50);
    for (size_t i = 0; i < 50; i++) {
        assert_true(x[i] >= 0.0 && x[i] < 5.0);
        if (i > 0)
            assert_true(x[i - 1] <= x[i]);
        size_t rank = 0; /* x[i] is the i-th smallest of the draws */
        for (size_t t = 0; t < 50; t++)
            rank += u_sorted[t] < x[i];
        assert_int_equal(rank, i);
    }
    for (size_t i = 0; i < 50; i++)
        assert_true(y[i] == f_truth(x[i]) + 0.5 * z[i]);
    for (size_t i = 0; i < ATTN_NW_DATASET_TEST; i++) {
        assert_true(x_test[i] == (double)i / 10.0);
        assert_true(y_truth[i] == f_truth(x_test[i]));
    }
    /* noise 0: y is exactly f(x) */
    assert_int_equal(attn_nw_dataset(x, y, x_test, y_truth, 7, 0.0, 3),
                     ATTN_OK);
    for (size_t i = 0; i < 7; i++)
        assert_true(y[i] == f_truth(x[i]));
    /* errors */
    assert_int_equal(attn_nw_dataset(x, y, x_test, y_truth, 0, 0.5, 0),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_nw_dataset(x, y, x_test, y_truth, 5, -0.1, 0),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_nw_dataset(x, y, x_test, y_truth, 5, NAN, 0),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_nw_dataset(x, y, x_test, y_truth, 5, INFINITY, 0),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_nw_dataset(NULL, y, x_test, y_truth, 5, 0.5, 0),
                     ATTN_E_INVALID_ARG);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_next_golden),
        cmocka_unit_test(test_uniform_golden),
        cmocka_unit_test(test_normals_golden),
        cmocka_unit_test(test_normals_odd_count),
        cmocka_unit_test(test_xavier_golden),
        cmocka_unit_test(test_statistics),
        cmocka_unit_test(test_seeds_reproduce),
        cmocka_unit_test(test_dataset),
    };
    return cmocka_run_group_tests_name("rng", tests, NULL, NULL);
}
