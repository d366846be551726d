/*
 * test_backward_dot.c — gradients of scaled dot-product attention
 * (attn_dot_backward) against central finite differences of
 * attn_dot_forward on random shapes and masks, against torch autograd
 * (tests/vectors/grads_dot.txt), and the exact values the fully masked
 * policies and masked keys must give; errors and workspace.
 */
#include "backward_check.h"
#include "vectors.h"

#define DOT_VECTORS "tests/vectors/grads_dot.txt"

typedef struct {
    size_t B, Nq, Nk, d, dv;
    double scale;
    attn_mask mask;
    double *q, *k, *v, *dO, *out, *w;
    double *gq, *gk, *gv;
    int64_t *lens;
} dot_case;

static void dc_alloc(dot_case *c, size_t B, size_t Nq, size_t Nk, size_t d,
                     size_t dv) {
    memset(c, 0, sizeof *c);
    c->B = B, c->Nq = Nq, c->Nk = Nk, c->d = d, c->dv = dv;
    c->scale = attn_dot_default_scale(d);
    c->q = bw_alloc(B * Nq * d);
    c->k = bw_alloc(B * Nk * d);
    c->v = bw_alloc(B * Nk * dv);
    c->dO = bw_alloc(B * Nq * dv);
    c->out = bw_alloc(B * Nq * dv);
    c->w = bw_alloc(B * Nq * Nk);
    c->gq = bw_alloc(B * Nq * d);
    c->gk = bw_alloc(B * Nk * d);
    c->gv = bw_alloc(B * Nk * dv);
    c->lens = calloc(B * Nq, sizeof(int64_t));
    assert_non_null(c->lens);
}

static void dc_free(dot_case *c) {
    double *bufs[] = {c->q, c->k,  c->v,  c->dO, c->out,
                      c->w, c->gq, c->gk, c->gv};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(bufs[i]);
    free(c->lens);
}

static attn_status dc_forward(dot_case *c) {
    return attn_dot_forward(c->out, c->w, NULL, c->q, c->k, c->v, &c->mask,
                            c->scale, c->B, c->Nq, c->Nk, c->d, c->dv, NULL);
}

static attn_status dc_backward(dot_case *c, attn_fault *fault) {
    return attn_dot_backward(c->gq, c->gk, c->gv, c->dO, c->w, c->q, c->k, c->v,
                             &c->mask, c->scale, c->B, c->Nq, c->Nk, c->d,
                             c->dv, fault);
}

/* L = Σ dO ⊙ out at the current inputs. */
static double dc_loss(void *ctx) {
    dot_case *c = ctx;
    assert_int_equal(dc_forward(c), ATTN_OK);
    return bw_dot(c->dO, c->out, c->B * c->Nq * c->dv);
}

/* ------------------------------------------------ finite differences */

/* 120 random shapes (every size 1 ... 5), random masks (none, (B), (B, Nq)
 * valid_lens with zeros, each causal rule), both non-error policies, the
 * default or a random scale: grad_q, grad_k, grad_v within 1e-6 relative of
 * central differences. The draws must have covered every mask feature and
 * fully masked rows under both policies. */
static void test_fd_random(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 101);
    double worst = 0.0;
    size_t seen_1d = 0, seen_2d = 0, seen_causal[3] = {0}, full_rows[2] = {0};
    for (int iter = 0; iter < 120; iter++) {
        dot_case c;
        dc_alloc(&c, bw_size(&rng, 2), bw_size(&rng, 5), bw_size(&rng, 5),
                 bw_size(&rng, 4), bw_size(&rng, 3));
        attn_fully_masked policy =
            iter % 2 ? ATTN_FULLY_MASKED_UNIFORM : ATTN_FULLY_MASKED_ZERO;
        c.mask = bw_random_mask(&rng, c.lens, c.B, c.Nq, c.Nk, policy);
        if (attn_rng_uniform(&rng) < 0.3)
            c.scale = 0.2 + 2.0 * attn_rng_uniform(&rng);
        bw_normals(&rng, c.q, c.B * c.Nq * c.d, 1.0);
        bw_normals(&rng, c.k, c.B * c.Nk * c.d, 1.0);
        bw_normals(&rng, c.v, c.B * c.Nk * c.dv, 1.0);
        bw_normals(&rng, c.dO, c.B * c.Nq * c.dv, 1.0);
        seen_1d += c.mask.valid_lens && !c.mask.per_query;
        seen_2d += c.mask.valid_lens && c.mask.per_query;
        seen_causal[c.mask.causal]++;
        full_rows[iter % 2] += bw_fully_masked_rows(&c.mask, c.B, c.Nq, c.Nk);

        assert_int_equal(dc_forward(&c), ATTN_OK);
        assert_int_equal(dc_backward(&c, NULL), ATTN_OK);
        assert_grad_fd(c.gq, c.q, c.B * c.Nq * c.d, dc_loss, &c, &worst);
        assert_grad_fd(c.gk, c.k, c.B * c.Nk * c.d, dc_loss, &c, &worst);
        assert_grad_fd(c.gv, c.v, c.B * c.Nk * c.dv, dc_loss, &c, &worst);
        dc_free(&c);
    }
    assert_true(seen_1d > 0 && seen_2d > 0);
    assert_true(seen_causal[0] && seen_causal[1] && seen_causal[2]);
    assert_true(full_rows[0] > 0 && full_rows[1] > 0);
    print_message("# dot backward vs finite differences: 120 cases, worst "
                  "relative error %.3g\n",
                  worst);
}

/* Larger values (scores up to about ±30, so nearly one-hot weights) and
 * tiny ones: still within 1e-6 of finite differences. */
static void test_fd_extremes(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 102);
    double worst = 0.0;
    const double sds[] = {1e-3, 3.0};
    for (int iter = 0; iter < 20; iter++) {
        dot_case c;
        dc_alloc(&c, 2, 4, 5, 3, 2);
        c.mask = bw_random_mask(&rng, c.lens, c.B, c.Nq, c.Nk,
                                ATTN_FULLY_MASKED_UNIFORM);
        double sd = sds[iter % 2];
        bw_normals(&rng, c.q, c.B * c.Nq * c.d, sd);
        bw_normals(&rng, c.k, c.B * c.Nk * c.d, sd);
        bw_normals(&rng, c.v, c.B * c.Nk * c.dv, 1.0);
        bw_normals(&rng, c.dO, c.B * c.Nq * c.dv, 1.0);
        assert_int_equal(dc_forward(&c), ATTN_OK);
        assert_int_equal(dc_backward(&c, NULL), ATTN_OK);
        assert_grad_fd(c.gq, c.q, c.B * c.Nq * c.d, dc_loss, &c, &worst);
        assert_grad_fd(c.gk, c.k, c.B * c.Nk * c.d, dc_loss, &c, &worst);
        assert_grad_fd(c.gv, c.v, c.B * c.Nk * c.dv, dc_loss, &c, &worst);
        dc_free(&c);
    }
    print_message("# dot backward, extreme scores: worst relative error "
                  "%.3g\n",
                  worst);
}

/* ------------------------------------------------ exact special cases */

/* One example, valid_lens (B, Nq) = [0, 2, 4] over Nk = 4, upstream
 * gradient only on the fully masked query 0. "uniform": its weights are the
 * constant 1/4, so every value row receives dO[0]/4 and nothing reaches
 * queries or keys; "zero": every gradient is exactly 0. */
static void test_fully_masked_row_exact(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 103);
    const attn_fully_masked policies[] = {ATTN_FULLY_MASKED_UNIFORM,
                                          ATTN_FULLY_MASKED_ZERO};
    for (int p = 0; p < 2; p++) {
        dot_case c;
        dc_alloc(&c, 1, 3, 4, 3, 2);
        c.lens[0] = 0, c.lens[1] = 2, c.lens[2] = 4;
        c.mask.valid_lens = c.lens;
        c.mask.per_query = 1;
        c.mask.fully_masked = policies[p];
        bw_normals(&rng, c.q, 9, 1.0);
        bw_normals(&rng, c.k, 12, 1.0);
        bw_normals(&rng, c.v, 8, 1.0);
        c.dO[0] = 0.75, c.dO[1] = -2.0; /* row 0 only */
        assert_int_equal(dc_forward(&c), ATTN_OK);
        assert_int_equal(dc_backward(&c, NULL), ATTN_OK);
        double fill = p == 0 ? 0.25 : 0.0;
        for (size_t j = 0; j < 4; j++) {
            assert_true(c.gv[j * 2] == 0.75 * fill);
            assert_true(c.gv[j * 2 + 1] == -2.0 * fill);
        }
        for (size_t t = 0; t < 9; t++)
            assert_true(c.gq[t] == 0.0);
        for (size_t t = 0; t < 12; t++)
            assert_true(c.gk[t] == 0.0);
        dc_free(&c);
    }
}

/* Keys beyond every query's valid_len (B) get exactly zero grad_k and
 * grad_v. Under bottom-right causal with Nq = 5 > Nk = 2, queries 0 ... 2
 * see nothing and query 3 sees key 0 alone (its weight is the constant 1):
 * those four get exactly zero grad_q, query 4 does not. */
static void test_masked_positions_zero(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 104);
    dot_case c;
    dc_alloc(&c, 2, 3, 5, 4, 3);
    c.lens[0] = 2, c.lens[1] = 4;
    c.mask.valid_lens = c.lens;
    bw_normals(&rng, c.q, 24, 1.0);
    bw_normals(&rng, c.k, 40, 1.0);
    bw_normals(&rng, c.v, 30, 1.0);
    bw_normals(&rng, c.dO, 18, 1.0);
    assert_int_equal(dc_forward(&c), ATTN_OK);
    assert_int_equal(dc_backward(&c, NULL), ATTN_OK);
    for (size_t b = 0; b < 2; b++) {
        for (size_t j = 0; j < 5; j++) {
            int masked = j >= (size_t)c.lens[b];
            for (size_t t = 0; t < 4; t++)
                assert_int_equal(c.gk[(b * 5 + j) * 4 + t] == 0.0, masked);
            for (size_t t = 0; t < 3; t++)
                assert_int_equal(c.gv[(b * 5 + j) * 3 + t] == 0.0, masked);
        }
    }
    dc_free(&c);

    dc_alloc(&c, 1, 5, 2, 3, 2);
    c.mask.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
    bw_normals(&rng, c.q, 15, 1.0);
    bw_normals(&rng, c.k, 6, 1.0);
    bw_normals(&rng, c.v, 4, 1.0);
    bw_normals(&rng, c.dO, 10, 1.0);
    assert_int_equal(dc_forward(&c), ATTN_OK);
    assert_int_equal(dc_backward(&c, NULL), ATTN_OK);
    for (size_t i = 0; i < 5; i++) {
        for (size_t t = 0; t < 3; t++)
            assert_int_equal(c.gq[i * 3 + t] == 0.0, i < 4);
    }
    dc_free(&c);
}

/* ------------------------------------------------ torch autograd */

/* Every case of grads_dot.txt: the forward's output and weights, then
 * grad_q, grad_k, grad_v within 1e-9 (check_diff) of torch autograd. */
static void test_torch_vectors(void **state) {
    (void)state;
    FILE *f = fopen(DOT_VECTORS, "r");
    assert_non_null(f);
    vec_case vc;
    int rc;
    size_t cases = 0;
    double worst = 0.0;
    while ((rc = vec_read_case(f, &vc)) == 1) {
        size_t z[5];
        bw_vector_sizes(z, &vc, 5);
        dot_case c;
        dc_alloc(&c, z[0], z[1], z[2], z[3], z[4]);
        c.scale = vec_data(&vc, "scale")[0];
        bw_vector_copy(c.q, &vc, "queries", c.B * c.Nq * c.d);
        bw_vector_copy(c.k, &vc, "keys", c.B * c.Nk * c.d);
        bw_vector_copy(c.v, &vc, "values", c.B * c.Nk * c.dv);
        bw_vector_copy(c.dO, &vc, "grad_output", c.B * c.Nq * c.dv);
        bw_vector_mask(&c.mask, c.lens, &vc);
        c.mask.fully_masked = bw_vector_policy(&vc);

        assert_int_equal(dc_forward(&c), ATTN_OK);
        assert_close(c.out, vec_data(&vc, "output"), c.B * c.Nq * c.dv, 1e-12);
        assert_close(c.w, vec_data(&vc, "weights"), c.B * c.Nq * c.Nk, 1e-12);
        assert_int_equal(dc_backward(&c, NULL), ATTN_OK);
        assert_close_worst(c.gq, vec_data(&vc, "grad_queries"),
                           c.B * c.Nq * c.d, 1e-9, &worst);
        assert_close_worst(c.gk, vec_data(&vc, "grad_keys"), c.B * c.Nk * c.d,
                           1e-9, &worst);
        assert_close_worst(c.gv, vec_data(&vc, "grad_values"),
                           c.B * c.Nk * c.dv, 1e-9, &worst);
        cases++;
        dc_free(&c);
        vec_case_free(&vc);
    }
    fclose(f);
    assert_int_equal(rc, 0);
    assert_int_equal(cases, 13);
    print_message("# dot backward vs torch autograd: %zu cases, worst "
                  "difference %.3g\n",
                  cases, worst);
}

/* ------------------------------------------------ errors, workspace */

static void test_errors(void **state) {
    (void)state;
    dot_case c;
    dc_alloc(&c, 2, 3, 4, 2, 2);
    attn_fault fault;
    for (size_t t = 0; t < 12; t++)
        c.q[t] = c.k[t] = c.v[t] = c.dO[t] = 0.1 * (double)t;
    assert_int_equal(dc_forward(&c), ATTN_OK);

    /* NULL buffers, zero sizes, bad scale */
    assert_int_equal(attn_dot_backward(NULL, c.gk, c.gv, c.dO, c.w, c.q, c.k,
                                       c.v, NULL, 1.0, 2, 3, 4, 2, 2, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_dot_backward(c.gq, c.gk, c.gv, c.dO, NULL, c.q, c.k,
                                       c.v, NULL, 1.0, 2, 3, 4, 2, 2, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_dot_backward(c.gq, c.gk, c.gv, c.dO, c.w, c.q, c.k,
                                       c.v, NULL, 1.0, 2, 3, 0, 2, 2, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_dot_backward(c.gq, c.gk, c.gv, c.dO, c.w, c.q, c.k,
                                       c.v, NULL, 0.0, 2, 3, 4, 2, 2, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_dot_backward(c.gq, c.gk, c.gv, c.dO, c.w, c.q, c.k,
                                       c.v, NULL, NAN, 2, 3, 4, 2, 2, NULL),
                     ATTN_E_INVALID_ARG);
    /* size overflow */
    assert_int_equal(attn_dot_backward(c.gq, c.gk, c.gv, c.dO, c.w, c.q, c.k,
                                       c.v, NULL, 1.0, SIZE_MAX / 2, 3, 4, 2, 2,
                                       NULL),
                     ATTN_E_OVERFLOW);
    /* valid_len out of range: index into valid_lens */
    c.lens[0] = 4, c.lens[1] = 5;
    c.mask.valid_lens = c.lens;
    assert_int_equal(dc_backward(&c, &fault), ATTN_E_VALID_LEN);
    assert_int_equal(fault.index, 1);
    /* "error" policy: the row that sees no key, as the forward reports */
    c.lens[1] = 3;
    c.lens[2] = 0; /* per query: (b=0, i=2) */
    c.mask.per_query = 1;
    c.mask.fully_masked = ATTN_FULLY_MASKED_ERROR;
    assert_int_equal(dc_backward(&c, &fault), ATTN_E_FULLY_MASKED);
    assert_int_equal(fault.index, 2);
    assert_int_equal(fault.by_causal, 0);
    c.mask.valid_lens = NULL;
    c.mask.causal = ATTN_CAUSAL_BOTTOM_RIGHT; /* Nq 3 <= Nk 4: all see keys */
    assert_int_equal(dc_backward(&c, &fault), ATTN_OK);
    /* an overflowing gradient: fault->index into grad_q, grad_k, grad_v
     * laid end to end. With q = k = 0 and top-left causal, key 0 has weight
     * 1, 1/2, 1/3 from the three queries, so grad_v[0] = 1e308 · 11/6
     * overflows while grad_q and grad_k (V = 0) stay 0. */
    c.mask.causal = ATTN_CAUSAL_TOP_LEFT;
    c.mask.fully_masked = ATTN_FULLY_MASKED_ZERO;
    for (size_t t = 0; t < 12; t++)
        c.dO[t] = 1e308;
    memset(c.q, 0, 12 * sizeof(double));
    memset(c.k, 0, 16 * sizeof(double));
    memset(c.v, 0, 16 * sizeof(double));
    assert_int_equal(dc_forward(&c), ATTN_OK);
    assert_int_equal(dc_backward(&c, &fault), ATTN_E_NONFINITE);
    assert_int_equal(fault.index, 2 * 3 * 2 + 2 * 4 * 2);
    dc_free(&c);
}

static void test_workspace(void **state) {
    (void)state;
    size_t bytes;
    assert_int_equal(attn_dot_backward_workspace(&bytes, 256, 128), ATTN_OK);
    assert_int_equal(bytes, 256 * 128 * sizeof(double));
    assert_int_equal(attn_dot_backward_workspace(NULL, 2, 2),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_dot_backward_workspace(&bytes, 0, 2),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_dot_backward_workspace(&bytes, SIZE_MAX / 4, 4),
                     ATTN_E_OVERFLOW);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fd_random),
        cmocka_unit_test(test_fd_extremes),
        cmocka_unit_test(test_fully_masked_row_exact),
        cmocka_unit_test(test_masked_positions_zero),
        cmocka_unit_test(test_torch_vectors),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_workspace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
