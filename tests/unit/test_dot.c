/*
 * test_dot.c — scaled dot-product attention: d2l's toy example, a
 * hand-computed case, extremes, errors, and the BLAS path against the
 * plain-loop reference on 200 random shapes.
 */
#include "check.h"

#include "attn.h"

#include <stdlib.h>
#include <string.h>

/* d2l 11.3.2's toy: keys all ones (2, 10, 2), values arange(40) as (10, 4)
 * for both examples, valid_lens [2, 6]; any queries. Equal keys give equal
 * scores, so the output is the mean of the first valid_len value rows:
 * [2, 3, 4, 5] and [10, 11, 12, 13] (tolerance 1e-12). */
static void test_d2l_toy(void **state) {
    (void)state;
    double q[2 * 1 * 2], k[2 * 10 * 2], v[2 * 10 * 4];
    attn_rng rng;
    attn_rng_seed(&rng, 0);
    attn_rng_normals(&rng, q, 4);
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
    double out[8], w[20], out_ref[8], w_ref[20];
    attn_fault fault;
    assert_int_equal(attn_dot_forward(out, w, NULL, q, k, v, &mask,
                                      attn_dot_default_scale(2), 2, 1, 10, 2, 4,
                                      &fault),
                     ATTN_OK);
    assert_close(out, want, 8, 1e-12);
    assert_int_equal(attn_dot_forward_ref(out_ref, w_ref, NULL, q, k, v, &mask,
                                          attn_dot_default_scale(2), 2, 1, 10,
                                          2, 4, &fault),
                     ATTN_OK);
    assert_close(out_ref, want, 8, 1e-12);
    for (size_t j = 0; j < 10; j++) {
        assert_near(w[j], j < 2 ? 0.5 : 0.0, 1e-15);
        assert_near(w[10 + j], j < 6 ? 1.0 / 6.0 : 0.0, 1e-15);
        assert_true(j < 2 || w[j] == 0.0);
        assert_true(j < 6 || w[10 + j] == 0.0);
    }
}

/* Scores ln 1, ln 2, ln 3 by construction (scale 1): weights (1, 2, 3) / 6,
 * out = (6·1 + 0·2 + 12·3, 0·1 + 6·2 − 6·3) / 6 = (7, −1); tolerance 1e-15. */
static void test_hand_example(void **state) {
    (void)state;
    const double q[] = {1.0, 0.0};
    const double k[] = {0.0, 5.0, log(2.0), 1.0, log(3.0), -4.0};
    const double v[] = {6.0, 0.0, 0.0, 6.0, 12.0, -6.0};
    double out[2], w[3], s[3];
    assert_int_equal(
        attn_dot_forward(out, w, s, q, k, v, NULL, 1.0, 1, 1, 3, 2, 2, NULL),
        ATTN_OK);
    const double want_s[] = {0.0, log(2.0), log(3.0)};
    const double want_w[] = {1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0};
    const double want_out[] = {7.0, -1.0};
    assert_close(s, want_s, 3, 1e-15);
    assert_close(w, want_w, 3, 1e-15);
    assert_close(out, want_out, 2, 1e-14);
    /* the scale multiplies the scores: 2·ln 2 = ln 4 */
    assert_int_equal(
        attn_dot_forward(out, w, s, q, k, v, NULL, 2.0, 1, 1, 3, 2, 2, NULL),
        ATTN_OK);
    const double want_w2[] = {1.0 / 14.0, 4.0 / 14.0, 9.0 / 14.0};
    assert_close(w, want_w2, 3, 1e-15);
    assert_near(s[1], 2.0 * log(2.0), 1e-15);
    /* default scale 1/sqrt(d) */
    assert_true(attn_dot_default_scale(4) == 0.5);
    assert_true(attn_dot_default_scale(1) == 1.0);
    /* 1.0 / sqrt(d) exactly as docs/contract.md writes it (not sqrt(1/d), which
     * rounds differently for d = 2) */
    assert_true(attn_dot_default_scale(2) == 1.0 / sqrt(2.0));
    assert_true(attn_dot_default_scale(64) == 0.125);
}

/* Random shapes from the library's generator: sizes 1 ... 8, normal data, a
 * random mask (valid_lens 1-D or 2-D or none, any causal alignment, zero or
 * uniform policy) and scale. Records the worst differences. */
typedef struct {
    size_t B, Nq, Nk, d, dv;
    int64_t lens[3 * 8];
    attn_mask mask;
    double scale;
} random_case;

static size_t draw_size(attn_rng *rng, size_t max) {
    return 1 + (size_t)(attn_rng_uniform(rng) * (double)max);
}

static void draw_case(random_case *c, attn_rng *rng) {
    c->B = draw_size(rng, 3);
    c->Nq = draw_size(rng, 8);
    c->Nk = draw_size(rng, 8);
    c->d = draw_size(rng, 8);
    c->dv = draw_size(rng, 8);
    int per_query = attn_rng_uniform(rng) < 0.5;
    memset(&c->mask, 0, sizeof c->mask); /* no pattern masks */
    size_t count = per_query ? c->B * c->Nq : c->B;
    for (size_t t = 0; t < count; t++)
        c->lens[t] = (int64_t)(attn_rng_uniform(rng) * (double)(c->Nk + 1));
    c->mask.valid_lens = attn_rng_uniform(rng) < 0.7 ? c->lens : NULL;
    c->mask.per_query = per_query;
    c->mask.causal = (attn_causal)(attn_rng_next(rng) % 3);
    c->mask.fully_masked = (attn_fully_masked)(attn_rng_next(rng) % 2);
    c->scale = attn_rng_uniform(rng) < 0.5 ? attn_dot_default_scale(c->d)
                                           : 0.1 + 2.0 * attn_rng_uniform(rng);
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
    attn_rng_seed(&rng, 2024);
    double worst_out = 0.0, worst_w = 0.0, worst_s = 0.0;
    for (int round = 0; round < 200; round++) {
        random_case c;
        draw_case(&c, &rng);
        size_t nq = c.B * c.Nq, nk = c.B * c.Nk, ns = nq * c.Nk;
        double *q = alloc_normals(&rng, nq * c.d);
        double *k = alloc_normals(&rng, nk * c.d);
        double *v = alloc_normals(&rng, nk * c.dv);
        double *buf = malloc((2 * nq * c.dv + 4 * ns) * sizeof *buf);
        assert_non_null(buf);
        double *out = buf, *out_ref = out + nq * c.dv;
        double *w = out_ref + nq * c.dv, *w_ref = w + ns;
        double *s = w_ref + ns, *s_ref = s + ns;
        assert_int_equal(attn_dot_forward(out, w, s, q, k, v, &c.mask, c.scale,
                                          c.B, c.Nq, c.Nk, c.d, c.dv, NULL),
                         ATTN_OK);
        assert_int_equal(attn_dot_forward_ref(out_ref, w_ref, s_ref, q, k, v,
                                              &c.mask, c.scale, c.B, c.Nq, c.Nk,
                                              c.d, c.dv, NULL),
                         ATTN_OK);
        size_t at;
        worst_out = fmax(worst_out, check_worst(out, out_ref, nq * c.dv, &at));
        worst_w = fmax(worst_w, check_worst(w, w_ref, ns, &at));
        worst_s = fmax(worst_s, check_worst(s, s_ref, ns, &at));
        assert_close(out, out_ref, nq * c.dv, tol);
        assert_close(w, w_ref, ns, tol);
        assert_close(s, s_ref, ns, tol);
        /* masked weights are exactly 0 in both paths */
        for (size_t b = 0; b < c.B; b++)
            for (size_t i = 0; i < c.Nq; i++)
                for (size_t j = 0; j < c.Nk; j++) {
                    size_t t = (b * c.Nq + i) * c.Nk + j;
                    int live = attn_mask_visible(&c.mask, b, i, j, c.Nq, c.Nk);
                    if (!live && c.mask.fully_masked == ATTN_FULLY_MASKED_ZERO)
                        assert_true(w[t] == 0.0 && w_ref[t] == 0.0);
                }
        free(q);
        free(k);
        free(v);
        free(buf);
    }
    print_message("# dot, 200 random shapes, worst |BLAS - loops| / max(1, "
                  "|loops|): output %.3g, weights %.3g, scores %.3g "
                  "(tol %.0e)\n",
                  worst_out, worst_w, worst_s, tol);
}

static void test_extremes(void **state) {
    (void)state;
    attn_fault fault;
    double out[4], w[4], s[4];

    /* d = 1, Nk = 1: the only key gets weight exactly 1, out = its value */
    const double q1[] = {3.0}, k1[] = {-2.0}, v1[] = {1.5, -2.5};
    assert_int_equal(attn_dot_forward(out, w, s, q1, k1, v1, NULL, 1.0, 1, 1, 1,
                                      1, 2, &fault),
                     ATTN_OK);
    assert_true(w[0] == 1.0 && s[0] == -6.0);
    assert_true(out[0] == 1.5 && out[1] == -2.5);

    /* scores ±1e300: one-hot, no inf/NaN */
    const double qb[] = {1e150}, kb[] = {1e150, -1e150}, vb[] = {4.0, 8.0};
    assert_int_equal(attn_dot_forward(out, w, s, qb, kb, vb, NULL, 1.0, 1, 1, 2,
                                      1, 1, &fault),
                     ATTN_OK);
    assert_true(w[0] == 1.0 && w[1] == 0.0 && out[0] == 4.0);
    assert_near(s[0] / 1e300, 1.0, 1e-15);
    assert_near(s[1] / 1e300, -1.0, 1e-15);

    /* q·k beyond 1e308 -> ATTN_E_NONFINITE at that score */
    const double qo[] = {1e200}, ko[] = {1.0, 1e200};
    assert_int_equal(attn_dot_forward(out, w, s, qo, ko, vb, NULL, 1.0, 1, 1, 2,
                                      1, 1, &fault),
                     ATTN_E_NONFINITE);
    assert_int_equal(fault.index, 1);
    assert_int_equal(attn_dot_forward_ref(out, w, s, qo, ko, vb, NULL, 1.0, 1,
                                          1, 2, 1, 1, &fault),
                     ATTN_E_NONFINITE);
    assert_int_equal(fault.index, 1);
    /* ... unless that key is masked: it is never read */
    const int64_t one[] = {1};
    attn_mask mask = {.valid_lens = one,
                      .per_query = 0,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    assert_int_equal(attn_dot_forward(out, w, s, qo, ko, vb, &mask, 1.0, 1, 1,
                                      2, 1, 1, &fault),
                     ATTN_OK);
    assert_true(w[0] == 1.0 && w[1] == 0.0 && out[0] == 4.0);

    /* a visible score of -1e300 still beats a masked key */
    const double ql[] = {-1e150}, kl[] = {1e150, -1e150};
    assert_int_equal(attn_dot_forward(out, w, s, ql, kl, vb, &mask, 1.0, 1, 1,
                                      2, 1, 1, &fault),
                     ATTN_OK);
    assert_true(w[0] == 1.0 && w[1] == 0.0 && out[0] == 4.0);

    /* a non-finite output (a value of inf) -> ATTN_E_NONFINITE */
    const double vi[] = {INFINITY, 1.0};
    assert_int_equal(attn_dot_forward(out, w, s, q1, kb, vi, NULL, 1.0, 1, 1, 2,
                                      1, 1, &fault),
                     ATTN_E_NONFINITE);
    assert_int_equal(fault.index, 0);

    /* Nq != Nk with bottom-right causal: Nq = 2, Nk = 4, equal keys, so
     * query 0 averages values 0 ... 2 and query 1 averages all four */
    const double q2[] = {1.0, 2.0}, k4[] = {1.0, 1.0, 1.0, 1.0};
    const double v4[] = {0.0, 3.0, 6.0, 9.0};
    attn_mask br = {.valid_lens = NULL,
                    .per_query = 0,
                    .causal = ATTN_CAUSAL_BOTTOM_RIGHT,
                    .fully_masked = ATTN_FULLY_MASKED_ZERO};
    double o2[2], w8[8];
    assert_int_equal(attn_dot_forward(o2, w8, NULL, q2, k4, v4, &br, 1.0, 1, 2,
                                      4, 1, 1, &fault),
                     ATTN_OK);
    const double want2[] = {3.0, 4.5};
    assert_close(o2, want2, 2, 1e-15);
    assert_true(w8[3] == 0.0);
}

static void test_errors(void **state) {
    (void)state;
    const double q[] = {1.0, 2.0}, k[] = {1.0, 0.0, 0.0, 1.0};
    const double v[] = {1.0, 2.0, 3.0, 4.0};
    double out[4], w[4];
    attn_fault fault;
    /* scale must be finite and > 0 */
    const double bad_scales[] = {0.0, -1.0, INFINITY, NAN};
    for (size_t t = 0; t < 4; t++) {
        assert_int_equal(attn_dot_forward(out, w, NULL, q, k, v, NULL,
                                          bad_scales[t], 1, 1, 2, 2, 2, NULL),
                         ATTN_E_INVALID_ARG);
        assert_int_equal(attn_dot_forward_ref(out, w, NULL, q, k, v, NULL,
                                              bad_scales[t], 1, 1, 2, 2, 2,
                                              NULL),
                         ATTN_E_INVALID_ARG);
    }
    /* NULL buffers and zero sizes */
    assert_int_equal(attn_dot_forward(NULL, w, NULL, q, k, v, NULL, 1.0, 1, 1,
                                      2, 2, 2, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_dot_forward(out, NULL, NULL, q, k, v, NULL, 1.0, 1, 1,
                                      2, 2, 2, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_dot_forward(out, w, NULL, q, NULL, v, NULL, 1.0, 1, 1,
                                      2, 2, 2, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(
        attn_dot_forward(out, w, NULL, q, k, v, NULL, 1.0, 1, 1, 2, 0, 2, NULL),
        ATTN_E_INVALID_ARG);
    assert_int_equal(
        attn_dot_forward(out, w, NULL, q, k, v, NULL, 1.0, 1, 1, 2, 2, 0, NULL),
        ATTN_E_INVALID_ARG);
    /* sizes overflow before anything is read */
    assert_int_equal(attn_dot_forward(out, w, NULL, q, k, v, NULL, 1.0,
                                      SIZE_MAX / 2, 1, 2, 2, 2, NULL),
                     ATTN_E_OVERFLOW);
    assert_int_equal(attn_dot_forward_ref(out, w, NULL, q, k, v, NULL, 1.0, 1,
                                          (size_t)1 << 40, (size_t)1 << 40, 2,
                                          2, NULL),
                     ATTN_E_OVERFLOW);
    /* valid_lens errors and fully masked rows reach the caller */
    const int64_t bad[] = {3};
    attn_mask mask = {.valid_lens = bad,
                      .per_query = 0,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    assert_int_equal(attn_dot_forward(out, w, NULL, q, k, v, &mask, 1.0, 1, 1,
                                      2, 2, 2, &fault),
                     ATTN_E_VALID_LEN);
    assert_int_equal(fault.index, 0);
    const int64_t per_query[] = {2, 0};
    attn_mask err = {.valid_lens = per_query,
                     .per_query = 1,
                     .causal = ATTN_CAUSAL_NONE,
                     .fully_masked = ATTN_FULLY_MASKED_ERROR};
    const double q2[] = {1.0, 2.0, 3.0, 4.0};
    assert_int_equal(attn_dot_forward(out, w, NULL, q2, k, v, &err, 1.0, 1, 2,
                                      2, 2, 2, &fault),
                     ATTN_E_FULLY_MASKED);
    assert_int_equal(fault.index, 1);
    assert_int_equal(fault.by_causal, 0);
    attn_mask causal = {.valid_lens = NULL,
                        .per_query = 0,
                        .causal = ATTN_CAUSAL_BOTTOM_RIGHT,
                        .fully_masked = ATTN_FULLY_MASKED_ERROR};
    assert_int_equal(attn_dot_forward(out, w, NULL, q2, k, v, &causal, 1.0, 1,
                                      2, 1, 2, 2, &fault),
                     ATTN_E_FULLY_MASKED);
    assert_int_equal(fault.index, 0);
    assert_int_equal(fault.by_causal, 1);
}

/* scores == NULL gives the same weights and output as a scores buffer. */
static void test_scores_optional(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 5);
    double q[2 * 3 * 4], k[2 * 5 * 4], v[2 * 5 * 3];
    attn_rng_normals(&rng, q, 24);
    attn_rng_normals(&rng, k, 40);
    attn_rng_normals(&rng, v, 30);
    double out1[18], out2[18], w1[30], w2[30], s[30];
    const int64_t lens[] = {4, 2};
    attn_mask mask = {.valid_lens = lens,
                      .per_query = 0,
                      .causal = ATTN_CAUSAL_TOP_LEFT,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    assert_int_equal(
        attn_dot_forward(out1, w1, s, q, k, v, &mask, 0.5, 2, 3, 5, 4, 3, NULL),
        ATTN_OK);
    assert_int_equal(attn_dot_forward(out2, w2, NULL, q, k, v, &mask, 0.5, 2, 3,
                                      5, 4, 3, NULL),
                     ATTN_OK);
    assert_memory_equal(out1, out2, sizeof out1);
    assert_memory_equal(w1, w2, sizeof w1);
    /* scores are Q Kᵀ · scale before masking, masked entries included */
    for (size_t b = 0; b < 2; b++)
        for (size_t i = 0; i < 3; i++)
            for (size_t j = 0; j < 5; j++) {
                double dot = 0.0;
                for (size_t c = 0; c < 4; c++)
                    dot += q[(b * 3 + i) * 4 + c] * k[(b * 5 + j) * 4 + c];
                assert_near(s[(b * 3 + i) * 5 + j], 0.5 * dot, 1e-14);
            }
}

/* Enough scores (2 · 300 · 512 = 307,200) for the pipelined forward pass
 * (products on this thread, softmax of finished row blocks on another):
 * the reference's results to 1e-12 under per-query lengths and a causal
 * mask, and the reference's status and fault index where the softmax
 * fails (a row fully masked, a score that overflows) or an output does,
 * wherever in the rows that happens. */
static void test_large_pipelined(void **state) {
    (void)state;
    enum { B = 2, NQ = 300, NK = 512, D = 8, DV = 3 };
    attn_rng rng;
    attn_rng_seed(&rng, 5);
    double *q = alloc_normals(&rng, B * NQ * D);
    double *k = alloc_normals(&rng, B * NK * D);
    double *v = alloc_normals(&rng, B * NK * DV);
    size_t no = B * NQ * DV, ns = B * NQ * NK;
    double *out = malloc(2 * no * sizeof *out);
    double *w = malloc(4 * ns * sizeof *w);
    int64_t *lens = malloc(B * NQ * sizeof *lens);
    assert_true(out && w && lens);
    double *out_ref = out + no, *w_ref = w + ns, *s = w_ref + ns,
           *s_ref = s + ns;
    for (size_t r = 0; r < B * NQ; r++)
        lens[r] = 1 + (int64_t)((r * 53) % NK);
    attn_mask mask = {.valid_lens = lens,
                      .per_query = 1,
                      .causal = ATTN_CAUSAL_BOTTOM_RIGHT,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    double scale = attn_dot_default_scale(D);
    attn_fault f, f_ref;
    assert_int_equal(attn_dot_forward(out, w, s, q, k, v, &mask, scale, B, NQ,
                                      NK, D, DV, &f),
                     ATTN_OK);
    assert_int_equal(attn_dot_forward_ref(out_ref, w_ref, s_ref, q, k, v, &mask,
                                          scale, B, NQ, NK, D, DV, &f_ref),
                     ATTN_OK);
    assert_close(s, s_ref, ns, 1e-12);
    assert_close(w, w_ref, ns, 1e-12);
    assert_close(out, out_ref, no, 1e-12);

    /* failures: a fully masked row in the second example's last block;
     * then also a score that overflows earlier (row 10 of example 1, key
     * 5); then instead an output that is not finite (an infinite value) */
    mask.causal = ATTN_CAUSAL_NONE;
    mask.fully_masked = ATTN_FULLY_MASKED_ERROR;
    lens[NQ + 290] = 0;
    for (int round = 0; round < 3; round++) {
        if (round == 1)
            for (size_t c = 0; c < D; c++) {
                q[(NQ + 10) * D + c] = 1e300;
                k[(NK + 5) * D + c] = 1e10;
            }
        if (round == 2) {
            for (size_t c = 0; c < D; c++)
                q[(NQ + 10) * D + c] = k[(NK + 5) * D + c] = 0.5;
            lens[NQ + 290] = NK;
            v[(NK + 3) * DV + 1] = INFINITY;
        }
        attn_status st = attn_dot_forward(out, w, s, q, k, v, &mask, scale, B,
                                          NQ, NK, D, DV, &f);
        attn_status st_ref =
            attn_dot_forward_ref(out_ref, w_ref, s_ref, q, k, v, &mask, scale,
                                 B, NQ, NK, D, DV, &f_ref);
        printf("# round %d: status %d, fault index %zu\n", round, (int)st,
               f.index);
        const size_t want[] = {NQ + 290, (NQ + 10) * NK + 5, NQ * DV + 1};
        assert_int_equal(st,
                         round == 0 ? ATTN_E_FULLY_MASKED : ATTN_E_NONFINITE);
        assert_int_equal(f.index, want[round]);
        assert_int_equal(st, st_ref);
        assert_int_equal(f.index, f_ref.index);
        assert_int_equal(f.by_causal, f_ref.by_causal);
    }
    free(q);
    free(k);
    free(v);
    free(out);
    free(w);
    free(lens);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_d2l_toy),
        cmocka_unit_test(test_hand_example),
        cmocka_unit_test(test_random_shapes_vs_reference),
        cmocka_unit_test(test_extremes),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_scores_optional),
        cmocka_unit_test(test_large_pipelined),
    };
    return cmocka_run_group_tests_name("dot", tests, NULL, NULL);
}
