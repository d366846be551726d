/*
 * test_backward_multihead.c — gradients of multi-head attention
 * (attn_multihead_backward) with respect to the inputs, the four weight
 * matrices and whichever biases are given: against central finite
 * differences of attn_multihead_forward on random shapes (dq, d_out != h,
 * any subset of biases) and masks, against torch nn.MultiheadAttention
 * autograd (tests/vectors/grads_multihead.txt), self-attention, the exact
 * fully masked cases, errors and workspace.
 */
#include "backward_check.h"
#include "vectors.h"

#define MULTIHEAD_VECTORS "tests/vectors/grads_multihead.txt"

enum { P_WQ, P_WK, P_WV, P_WO, P_BQ, P_BK, P_BV, P_BO, NPARAM };

typedef struct {
    size_t B, Nq, Nk, dq, dk, dv, h, H, d_out;
    attn_mask mask;
    double *q, *k, *v, *dO, *out, *w;
    double *gq, *gk, *gv;
    double *p[NPARAM];  /* W_q, W_k, W_v, W_o, b_q, b_k, b_v, b_o */
    double *gp[NPARAM]; /* their gradients */
    size_t pn[NPARAM];  /* element counts */
    int has_bias[4];    /* b_q, b_k, b_v, b_o given */
    int64_t *lens;
} mh_case;

static void mc_alloc(mh_case *c, size_t B, size_t Nq, size_t Nk, size_t dq,
                     size_t dk, size_t dv, size_t h, size_t H, size_t d_out) {
    memset(c, 0, sizeof *c);
    c->B = B, c->Nq = Nq, c->Nk = Nk, c->dq = dq, c->dk = dk, c->dv = dv;
    c->h = h, c->H = H, c->d_out = d_out;
    c->q = bw_alloc(B * Nq * dq);
    c->k = bw_alloc(B * Nk * dk);
    c->v = bw_alloc(B * Nk * dv);
    c->dO = bw_alloc(B * Nq * d_out);
    c->out = bw_alloc(B * Nq * d_out);
    c->w = bw_alloc(B * H * Nq * Nk);
    c->gq = bw_alloc(B * Nq * dq);
    c->gk = bw_alloc(B * Nk * dk);
    c->gv = bw_alloc(B * Nk * dv);
    const size_t n[NPARAM] = {h * dq, h * dk, h * dv, d_out * h,
                              h,      h,      h,      d_out};
    for (int t = 0; t < NPARAM; t++) {
        c->pn[t] = n[t];
        c->p[t] = bw_alloc(n[t]);
        c->gp[t] = bw_alloc(n[t]);
    }
    c->lens = calloc(B * Nq, sizeof(int64_t));
    assert_non_null(c->lens);
}

static void mc_free(mh_case *c) {
    double *bufs[] = {c->q, c->k,  c->v,  c->dO, c->out,
                      c->w, c->gq, c->gk, c->gv};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(bufs[i]);
    for (int t = 0; t < NPARAM; t++) {
        free(c->p[t]);
        free(c->gp[t]);
    }
    free(c->lens);
}

static attn_multihead_params mc_params(const mh_case *c) {
    attn_multihead_params p = {c->p[P_WQ], c->p[P_WK], c->p[P_WV], c->p[P_WO],
                               NULL,       NULL,       NULL,       NULL};
    p.b_q = c->has_bias[0] ? c->p[P_BQ] : NULL;
    p.b_k = c->has_bias[1] ? c->p[P_BK] : NULL;
    p.b_v = c->has_bias[2] ? c->p[P_BV] : NULL;
    p.b_o = c->has_bias[3] ? c->p[P_BO] : NULL;
    return p;
}

static attn_status mc_forward(mh_case *c) {
    attn_multihead_params p = mc_params(c);
    return attn_multihead_forward(c->out, c->w, NULL, c->q, c->k, c->v, &p,
                                  &c->mask, c->B, c->Nq, c->Nk, c->dq, c->dk,
                                  c->dv, c->h, c->H, c->d_out, NULL);
}

static attn_status mc_backward(mh_case *c, attn_fault *fault) {
    attn_multihead_params p = mc_params(c);
    attn_multihead_grads g = {c->gp[P_WQ], c->gp[P_WK], c->gp[P_WV],
                              c->gp[P_WO], c->gp[P_BQ], c->gp[P_BK],
                              c->gp[P_BV], c->gp[P_BO]};
    return attn_multihead_backward(
        c->gq, c->gk, c->gv, &g, c->dO, c->w, c->q, c->k, c->v, &p, &c->mask,
        c->B, c->Nq, c->Nk, c->dq, c->dk, c->dv, c->h, c->H, c->d_out, fault);
}

static double mc_loss(void *ctx) {
    mh_case *c = ctx;
    assert_int_equal(mc_forward(c), ATTN_OK);
    return bw_dot(c->dO, c->out, c->B * c->Nq * c->d_out);
}

static void mc_fill(mh_case *c, attn_rng *rng) {
    bw_normals(rng, c->q, c->B * c->Nq * c->dq, 1.0);
    bw_normals(rng, c->k, c->B * c->Nk * c->dk, 1.0);
    bw_normals(rng, c->v, c->B * c->Nk * c->dv, 1.0);
    bw_normals(rng, c->dO, c->B * c->Nq * c->d_out, 1.0);
    const size_t fan_in[NPARAM] = {c->dq, c->dk, c->dv, c->h, 1, 1, 1, 1};
    for (int t = 0; t < NPARAM; t++)
        bw_normals(rng, c->p[t], c->pn[t], 1.0 / sqrt((double)fan_in[t]));
}

/* Every gradient of one case (biases only where given) against finite
 * differences. */
static void mc_check_fd(mh_case *c, double *worst) {
    assert_int_equal(mc_forward(c), ATTN_OK);
    assert_int_equal(mc_backward(c, NULL), ATTN_OK);
    assert_grad_fd(c->gq, c->q, c->B * c->Nq * c->dq, mc_loss, c, worst);
    assert_grad_fd(c->gk, c->k, c->B * c->Nk * c->dk, mc_loss, c, worst);
    assert_grad_fd(c->gv, c->v, c->B * c->Nk * c->dv, mc_loss, c, worst);
    for (int t = 0; t < NPARAM; t++) {
        if (t >= P_BQ && !c->has_bias[t - P_BQ])
            continue;
        assert_grad_fd(c->gp[t], c->p[t], c->pn[t], mc_loss, c, worst);
    }
}

/* ------------------------------------------------ finite differences */

/* 80 random shapes (H 1 ... 3, h/H 1 ... 3, dq, dk, dv, d_out 1 ... 5
 * independent of h), each bias present or not, random masks (none, (B),
 * (B, Nq) with zeros, each causal rule), both non-error policies: every
 * gradient within 1e-6 relative of central differences. */
static void test_fd_random(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 301);
    double worst = 0.0;
    size_t seen_1d = 0, seen_2d = 0, seen_causal[3] = {0}, full_rows[2] = {0};
    size_t bias_on = 0, bias_off = 0;
    for (int iter = 0; iter < 80; iter++) {
        size_t H = bw_size(&rng, 3);
        mh_case c;
        mc_alloc(&c, bw_size(&rng, 2), bw_size(&rng, 4), bw_size(&rng, 4),
                 bw_size(&rng, 5), bw_size(&rng, 5), bw_size(&rng, 5),
                 H * bw_size(&rng, 3), H, bw_size(&rng, 5));
        for (int t = 0; t < 4; t++) {
            c.has_bias[t] = attn_rng_uniform(&rng) < 0.5;
            bias_on += (size_t)c.has_bias[t];
            bias_off += (size_t)!c.has_bias[t];
        }
        attn_fully_masked policy =
            iter % 2 ? ATTN_FULLY_MASKED_UNIFORM : ATTN_FULLY_MASKED_ZERO;
        c.mask = bw_random_mask(&rng, c.lens, c.B, c.Nq, c.Nk, policy);
        mc_fill(&c, &rng);
        seen_1d += c.mask.valid_lens && !c.mask.per_query;
        seen_2d += c.mask.valid_lens && c.mask.per_query;
        seen_causal[c.mask.causal]++;
        full_rows[iter % 2] += bw_fully_masked_rows(&c.mask, c.B, c.Nq, c.Nk);
        mc_check_fd(&c, &worst);
        mc_free(&c);
    }
    assert_true(seen_1d > 0 && seen_2d > 0);
    assert_true(seen_causal[0] && seen_causal[1] && seen_causal[2]);
    assert_true(full_rows[0] > 0 && full_rows[1] > 0);
    assert_true(bias_on > 0 && bias_off > 0);
    print_message("# multihead backward vs finite differences: 80 cases, "
                  "worst relative error %.3g\n",
                  worst);
}

/* Self-attention: keys and values are the queries' buffer; the gradient of
 * the shared tensor is grad_q + grad_k + grad_v (what a caller adds up),
 * checked against finite differences that move all three uses at once. */
static void test_self_attention(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 302);
    double worst = 0.0;
    for (int iter = 0; iter < 10; iter++) {
        size_t d = bw_size(&rng, 4), N = bw_size(&rng, 5);
        mh_case c;
        mc_alloc(&c, 2, N, N, d, d, d, 4, 2, 3);
        c.has_bias[0] = c.has_bias[3] = 1;
        c.mask = bw_random_mask(&rng, c.lens, c.B, c.Nq, c.Nk,
                                ATTN_FULLY_MASKED_UNIFORM);
        mc_fill(&c, &rng);
        free(c.k);
        free(c.v);
        c.k = c.v = c.q; /* one buffer, three roles */
        assert_int_equal(mc_forward(&c), ATTN_OK);
        assert_int_equal(mc_backward(&c, NULL), ATTN_OK);
        size_t n = c.B * N * d;
        double *sum = bw_alloc(n);
        for (size_t t = 0; t < n; t++)
            sum[t] = c.gq[t] + c.gk[t] + c.gv[t];
        assert_grad_fd(sum, c.q, n, mc_loss, &c, &worst);
        free(sum);
        c.k = bw_alloc(1); /* mc_free frees q, k and v */
        c.v = bw_alloc(1);
        mc_free(&c);
    }
    print_message("# multihead self-attention: worst relative error %.3g\n",
                  worst);
}

/* ------------------------------------------------ exact special cases */

/* valid_lens (B, Nq) = [0, 3] over Nk = 3, upstream gradient on the fully
 * masked query 0 only, every bias given. That query's weights are
 * constants, so nothing reaches Q', K' or the inputs through the scores:
 * grad_q, grad_k, grad_W_q, grad_W_k, grad_b_q, grad_b_k are exactly 0 and
 * grad_b_o = dO[0]. "zero": its heads are 0, so grad_v, grad_W_v, grad_b_v
 * and grad_W_o are 0 too. "uniform": each key's value row gets
 * (dO[0] W_o W_v) / 3 — the same for every key. */
static void test_fully_masked_row_exact(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 303);
    for (int p = 0; p < 2; p++) {
        mh_case c;
        mc_alloc(&c, 1, 2, 3, 2, 3, 2, 4, 2, 3);
        for (int t = 0; t < 4; t++)
            c.has_bias[t] = 1;
        c.lens[0] = 0, c.lens[1] = 3;
        c.mask.valid_lens = c.lens;
        c.mask.per_query = 1;
        c.mask.fully_masked =
            p == 0 ? ATTN_FULLY_MASKED_UNIFORM : ATTN_FULLY_MASKED_ZERO;
        mc_fill(&c, &rng);
        for (size_t t = 3; t < 6; t++)
            c.dO[t] = 0.0; /* query 1 passes nothing back */
        assert_int_equal(mc_forward(&c), ATTN_OK);
        assert_int_equal(mc_backward(&c, NULL), ATTN_OK);

        const double *zero[] = {c.gq,       c.gk,       c.gp[P_WQ],
                                c.gp[P_WK], c.gp[P_BQ], c.gp[P_BK]};
        const size_t n[] = {4, 9, 8, 12, 4, 4};
        for (size_t a = 0; a < 6; a++) {
            for (size_t t = 0; t < n[a]; t++)
                assert_true(zero[a][t] == 0.0);
        }
        assert_close(c.gp[P_BO], c.dO, 3, 0.0);
        /* dconcat = dO[0] W_o (h = 4), then through W_v (4, 2) */
        double dcat[4] = {0}, want[2] = {0};
        for (size_t o = 0; o < 3; o++) {
            for (size_t t = 0; t < 4; t++)
                dcat[t] += c.dO[o] * c.p[P_WO][o * 4 + t];
        }
        for (size_t t = 0; t < 4; t++) {
            for (size_t s = 0; s < 2; s++)
                want[s] += dcat[t] * c.p[P_WV][t * 2 + s] / 3.0;
        }
        for (size_t j = 0; j < 3; j++) {
            for (size_t s = 0; s < 2; s++)
                assert_near(c.gv[j * 2 + s], p == 0 ? want[s] : 0.0, 1e-14);
        }
        if (p == 1) {
            const double *z2[] = {c.gp[P_WV], c.gp[P_BV], c.gp[P_WO]};
            const size_t n2[] = {8, 4, 12};
            for (size_t a = 0; a < 3; a++) {
                for (size_t t = 0; t < n2[a]; t++)
                    assert_true(z2[a][t] == 0.0);
            }
        }
        mc_free(&c);
    }
}

/* ------------------------------------------------ torch autograd */

/* Every case of grads_multihead.txt: output and per-head weights within
 * 1e-12, then every gradient within 1e-9 (check_diff) of torch autograd
 * through nn.MultiheadAttention. */
static void test_torch_vectors(void **state) {
    (void)state;
    FILE *f = fopen(MULTIHEAD_VECTORS, "r");
    assert_non_null(f);
    vec_case vc;
    int rc;
    size_t cases = 0, with_bias = 0;
    double worst = 0.0;
    static const char *const pnames[NPARAM] = {"W_q", "W_k", "W_v", "W_o",
                                               "b_q", "b_k", "b_v", "b_o"};
    static const char *const gnames[NPARAM] = {
        "grad_W_q", "grad_W_k", "grad_W_v", "grad_W_o",
        "grad_b_q", "grad_b_k", "grad_b_v", "grad_b_o"};
    while ((rc = vec_read_case(f, &vc)) == 1) {
        size_t z[9];
        bw_vector_sizes(z, &vc, 9);
        mh_case c;
        mc_alloc(&c, z[0], z[1], z[2], z[3], z[4], z[5], z[6], z[7], z[8]);
        bw_vector_copy(c.q, &vc, "queries", c.B * c.Nq * c.dq);
        bw_vector_copy(c.k, &vc, "keys", c.B * c.Nk * c.dk);
        bw_vector_copy(c.v, &vc, "values", c.B * c.Nk * c.dv);
        bw_vector_copy(c.dO, &vc, "grad_output", c.B * c.Nq * c.d_out);
        for (int t = 0; t < NPARAM; t++) {
            if (t >= P_BQ) {
                c.has_bias[t - P_BQ] = vec_get(&vc, pnames[t]) != NULL;
                if (!c.has_bias[t - P_BQ])
                    continue;
            }
            bw_vector_copy(c.p[t], &vc, pnames[t], c.pn[t]);
        }
        with_bias += (size_t)c.has_bias[0];
        bw_vector_mask(&c.mask, c.lens, &vc);

        assert_int_equal(mc_forward(&c), ATTN_OK);
        assert_close(c.out, vec_data(&vc, "output"), c.B * c.Nq * c.d_out,
                     1e-12);
        assert_close(c.w, vec_data(&vc, "weights"), c.B * c.H * c.Nq * c.Nk,
                     1e-12);
        assert_int_equal(mc_backward(&c, NULL), ATTN_OK);
        assert_close_worst(c.gq, vec_data(&vc, "grad_queries"),
                           c.B * c.Nq * c.dq, 1e-9, &worst);
        assert_close_worst(c.gk, vec_data(&vc, "grad_keys"), c.B * c.Nk * c.dk,
                           1e-9, &worst);
        assert_close_worst(c.gv, vec_data(&vc, "grad_values"),
                           c.B * c.Nk * c.dv, 1e-9, &worst);
        for (int t = 0; t < NPARAM; t++) {
            const vec_tensor *want = vec_get(&vc, gnames[t]);
            if (t >= P_BQ && !c.has_bias[t - P_BQ]) {
                assert_null(want);
                continue;
            }
            assert_non_null(want);
            assert_int_equal(want->count, c.pn[t]);
            assert_close_worst(c.gp[t], want->data, c.pn[t], 1e-9, &worst);
        }
        cases++;
        mc_free(&c);
        vec_case_free(&vc);
    }
    fclose(f);
    assert_int_equal(rc, 0);
    assert_int_equal(cases, 10);
    assert_true(with_bias > 0 && with_bias < cases);
    print_message("# multihead backward vs torch autograd: %zu cases, worst "
                  "difference %.3g\n",
                  cases, worst);
}

/* ------------------------------------------------ errors, workspace */

static void test_errors(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 304);
    mh_case c;
    mc_alloc(&c, 2, 3, 4, 2, 3, 2, 4, 2, 3);
    c.has_bias[1] = 1;
    mc_fill(&c, &rng);
    assert_int_equal(mc_forward(&c), ATTN_OK);
    attn_multihead_params p = mc_params(&c);
    attn_multihead_grads g = {c.gp[P_WQ], c.gp[P_WK], c.gp[P_WV], c.gp[P_WO],
                              NULL,       c.gp[P_BK], NULL,       NULL};
    attn_fault fault;

    /* the given b_k needs its gradient; absent biases need none */
    assert_int_equal(attn_multihead_backward(c.gq, c.gk, c.gv, &g, c.dO, c.w,
                                             c.q, c.k, c.v, &p, NULL, 2, 3, 4,
                                             2, 3, 2, 4, 2, 3, NULL),
                     ATTN_OK);
    g.b_k = NULL;
    assert_int_equal(attn_multihead_backward(c.gq, c.gk, c.gv, &g, c.dO, c.w,
                                             c.q, c.k, c.v, &p, NULL, 2, 3, 4,
                                             2, 3, 2, 4, 2, 3, NULL),
                     ATTN_E_INVALID_ARG);
    g.b_k = c.gp[P_BK];
    g.W_o = NULL;
    assert_int_equal(attn_multihead_backward(c.gq, c.gk, c.gv, &g, c.dO, c.w,
                                             c.q, c.k, c.v, &p, NULL, 2, 3, 4,
                                             2, 3, 2, 4, 2, 3, NULL),
                     ATTN_E_INVALID_ARG);
    g.W_o = c.gp[P_WO];
    assert_int_equal(attn_multihead_backward(c.gq, c.gk, c.gv, NULL, c.dO, c.w,
                                             c.q, c.k, c.v, &p, NULL, 2, 3, 4,
                                             2, 3, 2, 4, 2, 3, NULL),
                     ATTN_E_INVALID_ARG);
    /* H must divide h */
    assert_int_equal(attn_multihead_backward(c.gq, c.gk, c.gv, &g, c.dO, c.w,
                                             c.q, c.k, c.v, &p, NULL, 2, 3, 4,
                                             2, 3, 2, 4, 3, 3, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_multihead_backward(c.gq, c.gk, c.gv, &g, c.dO, c.w,
                                             c.q, c.k, c.v, &p, NULL, 2, 3, 4,
                                             2, 3, 2, 4, 2, 0, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_multihead_backward(
                         c.gq, c.gk, c.gv, &g, c.dO, c.w, c.q, c.k, c.v, &p,
                         NULL, 2, 3, SIZE_MAX / 8, 2, 3, 2, 4, 2, 3, NULL),
                     ATTN_E_OVERFLOW);
    /* valid_lens (B) = [4, 7]: entry 1 is out of range */
    c.lens[0] = 4, c.lens[1] = 7;
    c.mask.valid_lens = c.lens;
    assert_int_equal(mc_backward(&c, &fault), ATTN_E_VALID_LEN);
    assert_int_equal(fault.index, 1);
    /* "error" policy: example 1 sees nothing, its first row is b·Nq = 3 */
    c.lens[1] = 0;
    c.mask.fully_masked = ATTN_FULLY_MASKED_ERROR;
    assert_int_equal(mc_backward(&c, &fault), ATTN_E_FULLY_MASKED);
    assert_int_equal(fault.index, 3);
    assert_int_equal(fault.by_causal, 0);
    mc_free(&c);
}

/* Two copies of the projections and one head's (Nq, Nk): no (B, H, Nq, Nk)
 * scratch. */
static void test_workspace(void **state) {
    (void)state;
    size_t bytes;
    assert_int_equal(attn_multihead_backward_workspace(&bytes, 4, 64, 128, 32),
                     ATTN_OK);
    assert_int_equal(bytes, (2 * 4 * (64 + 2 * 128) * 32 + 64 * 128) * 8);
    assert_int_equal(attn_multihead_backward_workspace(NULL, 1, 1, 1, 1),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_multihead_backward_workspace(&bytes, 1, 0, 1, 1),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(
        attn_multihead_backward_workspace(&bytes, 2, SIZE_MAX / 4, 1, 1),
        ATTN_E_OVERFLOW);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fd_random),
        cmocka_unit_test(test_self_attention),
        cmocka_unit_test(test_fully_masked_row_exact),
        cmocka_unit_test(test_torch_vectors),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_workspace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
