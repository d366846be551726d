/*
 * test_posenc.c — sinusoidal positional encoding: values by hand for small
 * cases (even and odd D), numpy's d2l construction
 * (tests/vectors/posenc.txt), the sin² + cos² identity, errors.
 */
#include "check.h"
#include "vectors.h"

#include "attn.h"

#include <stdint.h>
#include <stdlib.h>

#define POSENC_VECTORS "tests/vectors/posenc.txt"

/* Row 0 is [0, 1, 0, 1, ...] exactly (sin 0, cos 0), for even and odd D. */
static void test_row_zero(void **state) {
    (void)state;
    for (size_t D = 1; D <= 9; D++) {
        double P[2 * 9];
        assert_int_equal(attn_posenc_sinusoidal(P, 2, D), ATTN_OK);
        for (size_t c = 0; c < D; c++)
            assert_true(P[c] == (c % 2 ? 1.0 : 0.0));
    }
}

/* D = 8: the frequencies are 1, 1/10, 1/100, 1/1000 (10000^(2j/8) = 10^j),
 * so P[i] = [sin i, cos i, sin(i/10), cos(i/10), sin(i/100), ...]
 * (1e-15). */
static void test_by_hand_even(void **state) {
    (void)state;
    enum { N = 6, D = 8 };
    double P[N * D];
    assert_int_equal(attn_posenc_sinusoidal(P, N, D), ATTN_OK);
    const double divisor[] = {1.0, 10.0, 100.0, 1000.0};
    for (size_t i = 0; i < N; i++) {
        for (size_t j = 0; j < D / 2; j++) {
            assert_near(P[i * D + 2 * j], sin((double)i / divisor[j]), 1e-15);
            assert_near(P[i * D + 2 * j + 1], cos((double)i / divisor[j]),
                        1e-15);
        }
    }
    assert_near(P[1 * D + 0], 0.8414709848078965, 1e-16); /* sin 1 */
    assert_near(P[1 * D + 1], 0.5403023058681398, 1e-16); /* cos 1 */
    assert_near(P[5 * D + 2], 0.479425538604203, 1e-16);  /* sin 0.5 */
    assert_near(P[3 * D + 7], 0.999995500003375, 1e-16);  /* cos 0.003 */
}

/* Odd D: D = 1 is the single column sin i; D = 3 is [sin i, cos i,
 * sin(i / 10000^(2/3))] with 10000^(2/3) = cbrt(1e8); D = 5 ends with
 * sin(i / 10^3.2) (1e-15). */
static void test_by_hand_odd(void **state) {
    (void)state;
    enum { N = 50 };
    double P1[N], P3[N * 3], P5[N * 5];
    assert_int_equal(attn_posenc_sinusoidal(P1, N, 1), ATTN_OK);
    assert_int_equal(attn_posenc_sinusoidal(P3, N, 3), ATTN_OK);
    assert_int_equal(attn_posenc_sinusoidal(P5, N, 5), ATTN_OK);
    const double f3 = cbrt(1e8), f5a = pow(10.0, 1.6), f5b = pow(10.0, 3.2);
    for (size_t i = 0; i < N; i++) {
        double x = (double)i;
        assert_near(P1[i], sin(x), 1e-15);
        assert_near(P3[i * 3 + 0], sin(x), 1e-15);
        assert_near(P3[i * 3 + 1], cos(x), 1e-15);
        assert_near(P3[i * 3 + 2], sin(x / f3), 1e-15);
        assert_near(P5[i * 5 + 2], sin(x / f5a), 1e-15);
        assert_near(P5[i * 5 + 3], cos(x / f5a), 1e-15);
        assert_near(P5[i * 5 + 4], sin(x / f5b), 1e-15);
    }
}

/* numpy's float64 d2l construction for (60, 32), (7, 5), (400, 4), (3, 1),
 * (10, 127), within 1e-14. */
static void test_vs_numpy(void **state) {
    (void)state;
    FILE *f = fopen(POSENC_VECTORS, "r");
    assert_non_null(f);
    vec_case c;
    int rc;
    size_t cases = 0;
    double worst = 0.0;
    while ((rc = vec_read_case(f, &c)) == 1) {
        const double *sz = vec_data(&c, "sizes");
        size_t N = (size_t)sz[0], D = (size_t)sz[1];
        const vec_tensor *want = vec_get(&c, "P");
        assert_int_equal(want->count, N * D);
        double *P = malloc(N * D * sizeof(double));
        assert_non_null(P);
        assert_int_equal(attn_posenc_sinusoidal(P, N, D), ATTN_OK);
        assert_close(P, want->data, N * D, 1e-14);
        size_t at;
        double d = check_worst(P, want->data, N * D, &at);
        worst = d > worst ? d : worst;
        free(P);
        vec_case_free(&c);
        cases++;
    }
    fclose(f);
    assert_int_equal(rc, 0);
    assert_int_equal(cases, 5);
    print_message("# posenc vs numpy: 5 shapes, worst difference %.3g\n",
                  worst);
}

/* Each (sin, cos) pair lies on the unit circle (1e-15), and every value is
 * in [-1, 1]. */
static void test_unit_circle(void **state) {
    (void)state;
    enum { N = 300, D = 17 };
    double *P = malloc(N * D * sizeof(double));
    assert_non_null(P);
    assert_int_equal(attn_posenc_sinusoidal(P, N, D), ATTN_OK);
    for (size_t i = 0; i < N; i++) {
        for (size_t c = 0; c + 1 < D; c += 2) {
            double s = P[i * D + c], co = P[i * D + c + 1];
            assert_near(s * s + co * co, 1.0, 1e-15);
        }
        for (size_t c = 0; c < D; c++)
            assert_true(fabs(P[i * D + c]) <= 1.0);
    }
    free(P);
}

static void test_errors(void **state) {
    (void)state;
    double P[4];
    assert_int_equal(attn_posenc_sinusoidal(NULL, 2, 2), ATTN_E_INVALID_ARG);
    assert_int_equal(attn_posenc_sinusoidal(P, 0, 2), ATTN_E_INVALID_ARG);
    assert_int_equal(attn_posenc_sinusoidal(P, 2, 0), ATTN_E_INVALID_ARG);
    assert_int_equal(attn_posenc_sinusoidal(P, SIZE_MAX / 2, 4),
                     ATTN_E_OVERFLOW);
    assert_int_equal(attn_posenc_sinusoidal(P, SIZE_MAX / 16, 4),
                     ATTN_E_OVERFLOW); /* elements fit, bytes do not */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_row_zero),    cmocka_unit_test(test_by_hand_even),
        cmocka_unit_test(test_by_hand_odd), cmocka_unit_test(test_vs_numpy),
        cmocka_unit_test(test_unit_circle), cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
