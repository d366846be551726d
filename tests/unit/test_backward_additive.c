/*
 * test_backward_additive.c — gradients of additive attention
 * (attn_additive_backward) with respect to queries, keys, values, W_q, W_k
 * and w_v: against central finite differences of attn_additive_forward on
 * random shapes and masks, against torch autograd
 * (tests/vectors/grads_additive.txt), the exact fully masked cases, errors
 * and the memory bound of the workspace.
 */
#include "backward_check.h"
#include "vectors.h"

#define ADDITIVE_VECTORS "tests/vectors/grads_additive.txt"

typedef struct {
    size_t B, Nq, Nk, dq, dk, dv, h;
    attn_mask mask;
    double *q, *k, *v, *W_q, *W_k, *w_v, *dO, *out, *w;
    double *gq, *gk, *gv, *gW_q, *gW_k, *gw_v;
    int64_t *lens;
} add_case;

static void ac_alloc(add_case *c, size_t B, size_t Nq, size_t Nk, size_t dq,
                     size_t dk, size_t dv, size_t h) {
    memset(c, 0, sizeof *c);
    c->B = B, c->Nq = Nq, c->Nk = Nk, c->dq = dq, c->dk = dk, c->dv = dv;
    c->h = h;
    c->q = bw_alloc(B * Nq * dq);
    c->k = bw_alloc(B * Nk * dk);
    c->v = bw_alloc(B * Nk * dv);
    c->W_q = bw_alloc(h * dq);
    c->W_k = bw_alloc(h * dk);
    c->w_v = bw_alloc(h);
    c->dO = bw_alloc(B * Nq * dv);
    c->out = bw_alloc(B * Nq * dv);
    c->w = bw_alloc(B * Nq * Nk);
    c->gq = bw_alloc(B * Nq * dq);
    c->gk = bw_alloc(B * Nk * dk);
    c->gv = bw_alloc(B * Nk * dv);
    c->gW_q = bw_alloc(h * dq);
    c->gW_k = bw_alloc(h * dk);
    c->gw_v = bw_alloc(h);
    c->lens = calloc(B * Nq, sizeof(int64_t));
    assert_non_null(c->lens);
}

static void ac_free(add_case *c) {
    double *bufs[] = {c->q,   c->k,  c->v,    c->W_q,  c->W_k,
                      c->w_v, c->dO, c->out,  c->w,    c->gq,
                      c->gk,  c->gv, c->gW_q, c->gW_k, c->gw_v};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(bufs[i]);
    free(c->lens);
}

static attn_status ac_forward(add_case *c) {
    return attn_additive_forward(c->out, c->w, NULL, c->q, c->k, c->v, c->W_q,
                                 c->W_k, c->w_v, &c->mask, c->B, c->Nq, c->Nk,
                                 c->dq, c->dk, c->dv, c->h, NULL);
}

static attn_status ac_backward(add_case *c, attn_fault *fault) {
    return attn_additive_backward(c->gq, c->gk, c->gv, c->gW_q, c->gW_k,
                                  c->gw_v, c->dO, c->w, c->q, c->k, c->v,
                                  c->W_q, c->W_k, c->w_v, &c->mask, c->B, c->Nq,
                                  c->Nk, c->dq, c->dk, c->dv, c->h, fault);
}

static double ac_loss(void *ctx) {
    add_case *c = ctx;
    assert_int_equal(ac_forward(c), ATTN_OK);
    return bw_dot(c->dO, c->out, c->B * c->Nq * c->dv);
}

static void ac_fill(add_case *c, attn_rng *rng, double sd) {
    bw_normals(rng, c->q, c->B * c->Nq * c->dq, sd);
    bw_normals(rng, c->k, c->B * c->Nk * c->dk, sd);
    bw_normals(rng, c->v, c->B * c->Nk * c->dv, 1.0);
    bw_normals(rng, c->W_q, c->h * c->dq, 1.0 / sqrt((double)c->dq));
    bw_normals(rng, c->W_k, c->h * c->dk, 1.0 / sqrt((double)c->dk));
    bw_normals(rng, c->w_v, c->h, 1.0);
    bw_normals(rng, c->dO, c->B * c->Nq * c->dv, 1.0);
}

/* Every gradient of one case against finite differences. */
static void ac_check_fd(add_case *c, double *worst) {
    assert_int_equal(ac_forward(c), ATTN_OK);
    assert_int_equal(ac_backward(c, NULL), ATTN_OK);
    assert_grad_fd(c->gq, c->q, c->B * c->Nq * c->dq, ac_loss, c, worst);
    assert_grad_fd(c->gk, c->k, c->B * c->Nk * c->dk, ac_loss, c, worst);
    assert_grad_fd(c->gv, c->v, c->B * c->Nk * c->dv, ac_loss, c, worst);
    assert_grad_fd(c->gW_q, c->W_q, c->h * c->dq, ac_loss, c, worst);
    assert_grad_fd(c->gW_k, c->W_k, c->h * c->dk, ac_loss, c, worst);
    assert_grad_fd(c->gw_v, c->w_v, c->h, ac_loss, c, worst);
}

/* ------------------------------------------------ finite differences */

/* 100 random shapes (sizes 1 ... 5, h 1 ... 6, dq and dk independent),
 * random masks (none, (B), (B, Nq) with zeros, each causal rule), both
 * non-error policies: all six gradients within 1e-6 relative of central
 * differences, with every mask feature and fully masked rows under both
 * policies drawn. */
static void test_fd_random(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 201);
    double worst = 0.0;
    size_t seen_1d = 0, seen_2d = 0, seen_causal[3] = {0}, full_rows[2] = {0};
    for (int iter = 0; iter < 100; iter++) {
        add_case c;
        ac_alloc(&c, bw_size(&rng, 2), bw_size(&rng, 5), bw_size(&rng, 5),
                 bw_size(&rng, 4), bw_size(&rng, 4), bw_size(&rng, 3),
                 bw_size(&rng, 6));
        attn_fully_masked policy =
            iter % 2 ? ATTN_FULLY_MASKED_UNIFORM : ATTN_FULLY_MASKED_ZERO;
        c.mask = bw_random_mask(&rng, c.lens, c.B, c.Nq, c.Nk, policy);
        ac_fill(&c, &rng, 1.0);
        seen_1d += c.mask.valid_lens && !c.mask.per_query;
        seen_2d += c.mask.valid_lens && c.mask.per_query;
        seen_causal[c.mask.causal]++;
        full_rows[iter % 2] += bw_fully_masked_rows(&c.mask, c.B, c.Nq, c.Nk);
        ac_check_fd(&c, &worst);
        ac_free(&c);
    }
    assert_true(seen_1d > 0 && seen_2d > 0);
    assert_true(seen_causal[0] && seen_causal[1] && seen_causal[2]);
    assert_true(full_rows[0] > 0 && full_rows[1] > 0);
    print_message("# additive backward vs finite differences: 100 cases, "
                  "worst relative error %.3g\n",
                  worst);
}

/* Saturated tanh (inputs with sd 4: |W_q q + W_k k| often > 5) and tiny
 * inputs: still within 1e-6. */
static void test_fd_extremes(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 202);
    double worst = 0.0;
    const double sds[] = {1e-3, 4.0};
    for (int iter = 0; iter < 12; iter++) {
        add_case c;
        ac_alloc(&c, 2, 3, 4, 3, 2, 2, 5);
        c.mask = bw_random_mask(&rng, c.lens, c.B, c.Nq, c.Nk,
                                ATTN_FULLY_MASKED_UNIFORM);
        ac_fill(&c, &rng, sds[iter % 2]);
        ac_check_fd(&c, &worst);
        ac_free(&c);
    }
    print_message("# additive backward, extreme inputs: worst relative "
                  "error %.3g\n",
                  worst);
}

/* ------------------------------------------------ exact special cases */

/* valid_lens (B) = [0] over Nk = 3: one example whose every query sees
 * nothing. "uniform": each value row gets Σ_i dO[i] / 3 and nothing else
 * moves (queries, keys and all three parameters get exactly 0); "zero":
 * every gradient is exactly 0. */
static void test_fully_masked_example_exact(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 203);
    for (int p = 0; p < 2; p++) {
        add_case c;
        ac_alloc(&c, 1, 2, 3, 2, 3, 2, 4);
        c.mask.valid_lens = c.lens; /* lens[0] = 0 */
        c.mask.fully_masked =
            p == 0 ? ATTN_FULLY_MASKED_UNIFORM : ATTN_FULLY_MASKED_ZERO;
        ac_fill(&c, &rng, 1.0);
        assert_int_equal(ac_forward(&c), ATTN_OK);
        assert_int_equal(ac_backward(&c, NULL), ATTN_OK);
        for (size_t j = 0; j < 3; j++) {
            for (size_t t = 0; t < 2; t++) {
                double want = p == 0 ? (c.dO[t] + c.dO[2 + t]) / 3.0 : 0.0;
                assert_near(c.gv[j * 2 + t], want, 1e-15);
            }
        }
        const double *zero[] = {c.gq, c.gk, c.gW_q, c.gW_k, c.gw_v};
        const size_t n[] = {4, 9, 8, 12, 4};
        for (size_t a = 0; a < 5; a++) {
            for (size_t t = 0; t < n[a]; t++)
                assert_true(zero[a][t] == 0.0);
        }
        ac_free(&c);
    }
}

/* ------------------------------------------------ torch autograd */

/* Every case of grads_additive.txt: output and weights within 1e-12, the
 * six gradients within 1e-9 (check_diff) of torch autograd. */
static void test_torch_vectors(void **state) {
    (void)state;
    FILE *f = fopen(ADDITIVE_VECTORS, "r");
    assert_non_null(f);
    vec_case vc;
    int rc;
    size_t cases = 0;
    double worst = 0.0;
    while ((rc = vec_read_case(f, &vc)) == 1) {
        size_t z[7];
        bw_vector_sizes(z, &vc, 7);
        add_case c;
        ac_alloc(&c, z[0], z[1], z[2], z[3], z[4], z[5], z[6]);
        bw_vector_copy(c.q, &vc, "queries", c.B * c.Nq * c.dq);
        bw_vector_copy(c.k, &vc, "keys", c.B * c.Nk * c.dk);
        bw_vector_copy(c.v, &vc, "values", c.B * c.Nk * c.dv);
        bw_vector_copy(c.W_q, &vc, "W_q", c.h * c.dq);
        bw_vector_copy(c.W_k, &vc, "W_k", c.h * c.dk);
        bw_vector_copy(c.w_v, &vc, "w_v", c.h);
        bw_vector_copy(c.dO, &vc, "grad_output", c.B * c.Nq * c.dv);
        bw_vector_mask(&c.mask, c.lens, &vc);
        c.mask.fully_masked = bw_vector_policy(&vc);

        assert_int_equal(ac_forward(&c), ATTN_OK);
        assert_close(c.out, vec_data(&vc, "output"), c.B * c.Nq * c.dv, 1e-12);
        assert_close(c.w, vec_data(&vc, "weights"), c.B * c.Nq * c.Nk, 1e-12);
        assert_int_equal(ac_backward(&c, NULL), ATTN_OK);
        assert_close_worst(c.gq, vec_data(&vc, "grad_queries"),
                           c.B * c.Nq * c.dq, 1e-9, &worst);
        assert_close_worst(c.gk, vec_data(&vc, "grad_keys"), c.B * c.Nk * c.dk,
                           1e-9, &worst);
        assert_close_worst(c.gv, vec_data(&vc, "grad_values"),
                           c.B * c.Nk * c.dv, 1e-9, &worst);
        assert_close_worst(c.gW_q, vec_data(&vc, "grad_W_q"), c.h * c.dq, 1e-9,
                           &worst);
        assert_close_worst(c.gW_k, vec_data(&vc, "grad_W_k"), c.h * c.dk, 1e-9,
                           &worst);
        assert_close_worst(c.gw_v, vec_data(&vc, "grad_w_v"), c.h, 1e-9,
                           &worst);
        cases++;
        ac_free(&c);
        vec_case_free(&vc);
    }
    fclose(f);
    assert_int_equal(rc, 0);
    assert_int_equal(cases, 9);
    print_message("# additive backward vs torch autograd: %zu cases, worst "
                  "difference %.3g\n",
                  cases, worst);
}

/* ------------------------------------------------ errors, workspace */

static void test_errors(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 204);
    add_case c;
    ac_alloc(&c, 2, 3, 4, 2, 3, 2, 5);
    ac_fill(&c, &rng, 1.0);
    assert_int_equal(ac_forward(&c), ATTN_OK);
    attn_fault fault;

    assert_int_equal(attn_additive_backward(c.gq, c.gk, c.gv, c.gW_q, c.gW_k,
                                            NULL, c.dO, c.w, c.q, c.k, c.v,
                                            c.W_q, c.W_k, c.w_v, NULL, 2, 3, 4,
                                            2, 3, 2, 5, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_additive_backward(c.gq, c.gk, c.gv, c.gW_q, c.gW_k,
                                            c.gw_v, c.dO, c.w, c.q, c.k, c.v,
                                            NULL, c.W_k, c.w_v, NULL, 2, 3, 4,
                                            2, 3, 2, 5, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_additive_backward(c.gq, c.gk, c.gv, c.gW_q, c.gW_k,
                                            c.gw_v, c.dO, c.w, c.q, c.k, c.v,
                                            c.W_q, c.W_k, c.w_v, NULL, 2, 3, 4,
                                            2, 3, 2, 0, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_additive_backward(c.gq, c.gk, c.gv, c.gW_q, c.gW_k,
                                            c.gw_v, c.dO, c.w, c.q, c.k, c.v,
                                            c.W_q, c.W_k, c.w_v, NULL, 2, 3, 4,
                                            SIZE_MAX / 4, 3, 2, 5, NULL),
                     ATTN_E_OVERFLOW);
    /* valid_lens (B, Nq): entry 4 is -1 */
    for (size_t t = 0; t < 6; t++)
        c.lens[t] = 2;
    c.lens[4] = -1;
    c.mask.valid_lens = c.lens;
    c.mask.per_query = 1;
    assert_int_equal(ac_backward(&c, &fault), ATTN_E_VALID_LEN);
    assert_int_equal(fault.index, 4);
    /* "error" policy: valid_lens 0 at (b=1, i=1) empties row 4 */
    c.lens[4] = 0;
    c.mask.fully_masked = ATTN_FULLY_MASKED_ERROR;
    assert_int_equal(ac_backward(&c, &fault), ATTN_E_FULLY_MASKED);
    assert_int_equal(fault.index, 4);
    c.lens[4] = 2;
    assert_int_equal(ac_backward(&c, &fault), ATTN_OK);
    ac_free(&c);

    /* by_causal: Nq 4 > Nk 2 bottom-right empties queries 0 and 1 */
    ac_alloc(&c, 1, 4, 2, 2, 2, 2, 3);
    ac_fill(&c, &rng, 1.0);
    c.mask.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
    assert_int_equal(ac_forward(&c), ATTN_OK);
    c.mask.fully_masked = ATTN_FULLY_MASKED_ERROR;
    assert_int_equal(ac_backward(&c, &fault), ATTN_E_FULLY_MASKED);
    assert_int_equal(fault.index, 0);
    assert_int_equal(fault.by_causal, 1);
    ac_free(&c);
}

/* The scratch is two copies of the projections, 2·B·(Nq + Nk)·h doubles,
 * plus one example's (Nq, Nk): linear in h, never B·Nq·Nk·h. */
static void test_workspace(void **state) {
    (void)state;
    size_t bytes;
    assert_int_equal(attn_additive_backward_workspace(&bytes, 4, 64, 128, 32),
                     ATTN_OK);
    assert_int_equal(bytes, (2 * 4 * (64 + 128) * 32 + 64 * 128) * 8);
    assert_int_equal(attn_additive_backward_workspace(NULL, 1, 1, 1, 1),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_additive_backward_workspace(&bytes, 1, 1, 0, 1),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(
        attn_additive_backward_workspace(&bytes, SIZE_MAX / 2, 2, 2, 2),
        ATTN_E_OVERFLOW);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fd_random),
        cmocka_unit_test(test_fd_extremes),
        cmocka_unit_test(test_fully_masked_example_exact),
        cmocka_unit_test(test_torch_vectors),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_workspace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
