/*
 * test_backward_softmax.c — the masked softmax backward
 * (attn_softmax_masked_backward): against central finite differences of
 * attn_softmax_masked, in place, on a hand-worked row, fully masked rows
 * under each policy, and errors.
 */
#include "backward_check.h"

typedef struct {
    size_t B, Nq, Nk;
    attn_mask mask;
    double *s, *w, *gw, *gs;
    int64_t *lens;
} sm_case;

static double sm_loss(void *ctx) {
    sm_case *c = ctx;
    assert_int_equal(
        attn_softmax_masked(c->w, c->s, &c->mask, c->B, c->Nq, c->Nk, NULL),
        ATTN_OK);
    return bw_dot(c->gw, c->w, c->B * c->Nq * c->Nk);
}

/* 150 random (B, Nq, Nk) up to (2, 5, 6), random masks and both non-error
 * policies: grad_scores within 1e-6 relative of finite differences, and
 * the in-place call (grad_scores = grad_weights) gives the same bits. */
static void test_fd_random(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 401);
    double worst = 0.0;
    size_t full_rows = 0;
    for (int iter = 0; iter < 150; iter++) {
        sm_case c;
        memset(&c, 0, sizeof c);
        c.B = bw_size(&rng, 2);
        c.Nq = bw_size(&rng, 5);
        c.Nk = bw_size(&rng, 6);
        size_t n = c.B * c.Nq * c.Nk;
        c.s = bw_alloc(n), c.w = bw_alloc(n), c.gw = bw_alloc(n);
        c.gs = bw_alloc(n);
        c.lens = calloc(c.B * c.Nq, sizeof(int64_t));
        assert_non_null(c.lens);
        c.mask = bw_random_mask(&rng, c.lens, c.B, c.Nq, c.Nk,
                                iter % 2 ? ATTN_FULLY_MASKED_UNIFORM
                                         : ATTN_FULLY_MASKED_ZERO);
        full_rows += bw_fully_masked_rows(&c.mask, c.B, c.Nq, c.Nk);
        bw_normals(&rng, c.s, n, 2.0);
        bw_normals(&rng, c.gw, n, 1.0);
        sm_loss(&c);
        assert_int_equal(attn_softmax_masked_backward(c.gs, c.gw, c.w, &c.mask,
                                                      c.B, c.Nq, c.Nk, NULL),
                         ATTN_OK);
        assert_grad_fd(c.gs, c.s, n, sm_loss, &c, &worst);

        sm_loss(&c); /* weights at the unperturbed scores again */
        double *inplace = bw_alloc(n);
        memcpy(inplace, c.gw, n * sizeof(double));
        assert_int_equal(attn_softmax_masked_backward(inplace, inplace, c.w,
                                                      &c.mask, c.B, c.Nq, c.Nk,
                                                      NULL),
                         ATTN_OK);
        assert_memory_equal(inplace, c.gs, n * sizeof(double));
        free(inplace);
        free(c.s), free(c.w), free(c.gw), free(c.gs), free(c.lens);
    }
    assert_true(full_rows > 0);
    print_message("# softmax backward vs finite differences: 150 cases, "
                  "worst relative error %.3g\n",
                  worst);
}

/* One row, scores [0, ln 3] visible of Nk = 3 (valid_len 2): weights
 * [1/4, 3/4, 0]; with grad_weights [1, 2, 5], Σ gw ⊙ w = 7/4 and
 * grad_scores = [1/4 (1 − 7/4), 3/4 (2 − 7/4), 0] = [−3/16, 3/16, 0]. The
 * masked key's 5 reaches nothing. */
static void test_hand_row(void **state) {
    (void)state;
    const double s[3] = {0.0, log(3.0), 100.0};
    const double gw[3] = {1.0, 2.0, 5.0};
    const int64_t len = 2;
    attn_mask m = {.valid_lens = &len,
                   .per_query = 0,
                   .causal = ATTN_CAUSAL_NONE,
                   .fully_masked = ATTN_FULLY_MASKED_ZERO};
    double w[3], gs[3];
    assert_int_equal(attn_softmax_masked(w, s, &m, 1, 1, 3, NULL), ATTN_OK);
    assert_int_equal(attn_softmax_masked_backward(gs, gw, w, &m, 1, 1, 3, NULL),
                     ATTN_OK);
    const double want[3] = {-3.0 / 16.0, 3.0 / 16.0, 0.0};
    assert_close(gs, want, 3, 1e-15);
    assert_true(gs[2] == 0.0);
}

/* A fully masked row is a constant under "zero" and "uniform" alike: its
 * grad_scores are exactly 0 whatever grad_weights is; "error" reports the
 * row as the forward does. */
static void test_fully_masked_rows(void **state) {
    (void)state;
    const int64_t lens[2] = {3, 0}; /* (B, Nq) = (1, 2): row 1 sees nothing */
    attn_mask m = {.valid_lens = lens,
                   .per_query = 1,
                   .causal = ATTN_CAUSAL_NONE,
                   .fully_masked = ATTN_FULLY_MASKED_UNIFORM};
    const double s[6] = {0.1, -0.4, 0.3, 0.2, 0.5, -0.9};
    const double gw[6] = {1.0, -2.0, 0.5, 3.0, -1.0, 2.0};
    double w[6], gs[6];
    for (int p = 0; p < 2; p++) {
        m.fully_masked = p ? ATTN_FULLY_MASKED_ZERO : ATTN_FULLY_MASKED_UNIFORM;
        assert_int_equal(attn_softmax_masked(w, s, &m, 1, 2, 3, NULL), ATTN_OK);
        assert_int_equal(
            attn_softmax_masked_backward(gs, gw, w, &m, 1, 2, 3, NULL),
            ATTN_OK);
        for (size_t j = 3; j < 6; j++)
            assert_true(gs[j] == 0.0);
        double row = gs[0] + gs[1] + gs[2]; /* softmax rows: Σ grad = 0 */
        assert_true(fabs(row) < 1e-15);
        assert_true(gs[0] != 0.0);
    }
    attn_fault fault;
    m.fully_masked = ATTN_FULLY_MASKED_ERROR;
    assert_int_equal(
        attn_softmax_masked_backward(gs, gw, w, &m, 1, 2, 3, &fault),
        ATTN_E_FULLY_MASKED);
    assert_int_equal(fault.index, 1);
}

static void test_errors(void **state) {
    (void)state;
    double x[4] = {0.5, 0.5, 0.5, 0.5}, g[4] = {0};
    attn_fault fault;
    assert_int_equal(
        attn_softmax_masked_backward(NULL, x, x, NULL, 1, 2, 2, NULL),
        ATTN_E_INVALID_ARG);
    assert_int_equal(attn_softmax_masked_backward(g, x, x, NULL, 1, 0, 2, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(
        attn_softmax_masked_backward(g, x, x, NULL, SIZE_MAX, 2, 2, NULL),
        ATTN_E_OVERFLOW);
    const int64_t bad[1] = {3};
    attn_mask m = {.valid_lens = bad,
                   .per_query = 0,
                   .causal = ATTN_CAUSAL_NONE,
                   .fully_masked = ATTN_FULLY_MASKED_ZERO};
    assert_int_equal(attn_softmax_masked_backward(g, x, x, &m, 1, 2, 2, &fault),
                     ATTN_E_VALID_LEN);
    assert_int_equal(fault.index, 0);
    /* an overflowing gradient, fault->index into grad_scores: row 1 has
     * weights [0.9, 0.1] and grad_weights [−1.7e308, 1.7e308], so
     * Σ gw ⊙ w = −1.36e308 and gw[1] − that overflows */
    const double w2[4] = {0.5, 0.5, 0.9, 0.1};
    const double gw[4] = {1.0, 2.0, -1.7e308, 1.7e308};
    assert_int_equal(
        attn_softmax_masked_backward(g, gw, w2, NULL, 1, 2, 2, &fault),
        ATTN_E_NONFINITE);
    assert_int_equal(fault.index, 3);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fd_random),
        cmocka_unit_test(test_hand_row),
        cmocka_unit_test(test_fully_masked_rows),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
