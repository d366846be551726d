/*
 * test_multihead.c — multi-head attention: against PyTorch
 * nn.MultiheadAttention and a transcription of d2l's MultiHeadAttention
 * (tests/vectors/multihead.txt), the BLAS path against the plain-loop
 * reference on random shapes, reduction to dot-product attention per head,
 * self-attention, masks per head, errors, workspace and seeded parameters.
 */
#include "check.h"
#include "vectors.h"

#include "attn.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MULTIHEAD_VECTORS "tests/vectors/multihead.txt"
#define XAVIER_VECTORS "tests/vectors/multihead_xavier.txt"

/* Sizes of one call, in the order of attn_multihead_forward. */
typedef struct {
    size_t B, Nq, Nk, dq, dk, dv, h, H, d_out;
} mh_sizes;

/* Buffers for one call: inputs, parameters and both paths' outputs. */
typedef struct {
    mh_sizes z;
    double *q, *k, *v, *W_q, *W_k, *W_v, *W_o, *b_q, *b_k, *b_v, *b_o;
    double *out, *w, *s, *out_ref, *w_ref, *s_ref;
    int64_t *lens;
} mh_case;

static double *alloc_doubles(size_t n) {
    double *p = calloc(n ? n : 1, sizeof(double));
    assert_non_null(p);
    return p;
}

static void mh_alloc(mh_case *c, mh_sizes z) {
    memset(c, 0, sizeof *c);
    c->z = z;
    c->q = alloc_doubles(z.B * z.Nq * z.dq);
    c->k = alloc_doubles(z.B * z.Nk * z.dk);
    c->v = alloc_doubles(z.B * z.Nk * z.dv);
    c->W_q = alloc_doubles(z.h * z.dq);
    c->W_k = alloc_doubles(z.h * z.dk);
    c->W_v = alloc_doubles(z.h * z.dv);
    c->W_o = alloc_doubles(z.d_out * z.h);
    c->b_q = alloc_doubles(z.h);
    c->b_k = alloc_doubles(z.h);
    c->b_v = alloc_doubles(z.h);
    c->b_o = alloc_doubles(z.d_out);
    c->out = alloc_doubles(z.B * z.Nq * z.d_out);
    c->out_ref = alloc_doubles(z.B * z.Nq * z.d_out);
    c->w = alloc_doubles(z.B * z.H * z.Nq * z.Nk);
    c->w_ref = alloc_doubles(z.B * z.H * z.Nq * z.Nk);
    c->s = alloc_doubles(z.B * z.H * z.Nq * z.Nk);
    c->s_ref = alloc_doubles(z.B * z.H * z.Nq * z.Nk);
    c->lens = calloc(z.B * z.Nq, sizeof(int64_t));
    assert_non_null(c->lens);
}

static void mh_free(mh_case *c) {
    double *bufs[] = {c->q,   c->k,       c->v,     c->W_q, c->W_k,  c->W_v,
                      c->W_o, c->b_q,     c->b_k,   c->b_v, c->b_o,  c->out,
                      c->w,   c->out_ref, c->w_ref, c->s,   c->s_ref};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        free(bufs[i]);
    free(c->lens);
}

static attn_status run_blas(mh_case *c, const attn_multihead_params *p,
                            const attn_mask *mask, attn_fault *fault) {
    mh_sizes z = c->z;
    return attn_multihead_forward(c->out, c->w, c->s, c->q, c->k, c->v, p, mask,
                                  z.B, z.Nq, z.Nk, z.dq, z.dk, z.dv, z.h, z.H,
                                  z.d_out, fault);
}

static attn_status run_ref(mh_case *c, const attn_multihead_params *p,
                           const attn_mask *mask, attn_fault *fault) {
    mh_sizes z = c->z;
    return attn_multihead_forward_ref(
        c->out_ref, c->w_ref, c->s_ref, c->q, c->k, c->v, p, mask, z.B, z.Nq,
        z.Nk, z.dq, z.dk, z.dv, z.h, z.H, z.d_out, fault);
}

/* Uniform in [lo, hi) from the library's generator. */
static double uniform_in(attn_rng *rng, double lo, double hi) {
    return lo + (hi - lo) * attn_rng_uniform(rng);
}

static size_t below(attn_rng *rng, size_t n) {
    return (size_t)(attn_rng_uniform(rng) * (double)n);
}

static void fill(attn_rng *rng, double *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        x[i] = uniform_in(rng, -2.0, 2.0);
}

/* ------------------------------------------------ reference vectors */

/* Every case of multihead.txt, through both paths: output (B, Nq, d_out)
 * and per-head weights (B, H, Nq, Nk) within 1e-10 of PyTorch / d2l. */
static void test_reference_vectors(void **state) {
    (void)state;
    FILE *f = fopen(MULTIHEAD_VECTORS, "r");
    assert_non_null(f);
    vec_case vc;
    int rc;
    size_t cases = 0, torch_cases = 0;
    double worst = 0.0;
    const char *worst_case = "";
    while ((rc = vec_read_case(f, &vc)) == 1) {
        const vec_tensor *sz = vec_get(&vc, "sizes");
        assert_non_null(sz);
        assert_int_equal(sz->count, 9);
        mh_sizes z = {
            (size_t)sz->data[0], (size_t)sz->data[1], (size_t)sz->data[2],
            (size_t)sz->data[3], (size_t)sz->data[4], (size_t)sz->data[5],
            (size_t)sz->data[6], (size_t)sz->data[7], (size_t)sz->data[8]};
        mh_case c;
        mh_alloc(&c, z);
        memcpy(c.q, vec_data(&vc, "queries"),
               z.B * z.Nq * z.dq * sizeof(double));
        memcpy(c.k, vec_data(&vc, "keys"), z.B * z.Nk * z.dk * sizeof(double));
        memcpy(c.v, vec_data(&vc, "values"),
               z.B * z.Nk * z.dv * sizeof(double));
        attn_multihead_params p = {vec_data(&vc, "W_q"), vec_data(&vc, "W_k"),
                                   vec_data(&vc, "W_v"), vec_data(&vc, "W_o"),
                                   vec_data(&vc, "b_q"), vec_data(&vc, "b_k"),
                                   vec_data(&vc, "b_v"), vec_data(&vc, "b_o")};
        attn_mask mask = {0};
        const vec_tensor *vl = vec_get(&vc, "valid_lens");
        if (vl) {
            for (size_t i = 0; i < vl->count; i++)
                c.lens[i] = (int64_t)vl->data[i];
            mask.valid_lens = c.lens;
            mask.per_query = vl->rank == 2;
        }
        mask.causal = (attn_causal)vec_data(&vc, "causal")[0];
        mask.fully_masked = vec_data(&vc, "fully_masked")[0] == 1.0
                                ? ATTN_FULLY_MASKED_UNIFORM
                                : ATTN_FULLY_MASKED_ZERO;
        const double *want_out = vec_data(&vc, "output");
        const double *want_w = vec_data(&vc, "weights");
        assert_non_null(want_out);
        assert_non_null(want_w);
        size_t n_out = z.B * z.Nq * z.d_out, n_w = z.B * z.H * z.Nq * z.Nk;

        assert_int_equal(run_blas(&c, &p, &mask, NULL), ATTN_OK);
        assert_int_equal(run_ref(&c, &p, &mask, NULL), ATTN_OK);
        assert_close(c.out, want_out, n_out, 1e-10);
        assert_close(c.w, want_w, n_w, 1e-10);
        assert_close(c.out_ref, want_out, n_out, 1e-10);
        assert_close(c.w_ref, want_w, n_w, 1e-10);
        size_t at;
        double d[] = {check_worst(c.out, want_out, n_out, &at),
                      check_worst(c.w, want_w, n_w, &at),
                      check_worst(c.out_ref, want_out, n_out, &at),
                      check_worst(c.w_ref, want_w, n_w, &at)};
        for (size_t i = 0; i < 4; i++) {
            if (d[i] > worst) {
                worst = d[i];
                worst_case = vc.name;
            }
        }
        cases++;
        torch_cases += strncmp(vc.name, "torch_", 6) == 0;
        mh_free(&c);
        vec_case_free(&vc);
    }
    fclose(f);
    assert_int_equal(rc, 0);
    assert_int_equal(cases, 18);
    assert_int_equal(torch_cases, 13);
    print_message("# multihead vs torch/d2l: %zu cases, worst scaled "
                  "difference %.3g (%s)\n",
                  cases, worst, worst_case);
}

/* ------------------------------------------ BLAS path vs plain loops */

/* Random parameters and a random mask (none, (B) or (B, Nq) valid_lens
 * including 0, any causal rule, zero or uniform policy) on 300 random
 * shapes; outputs, weights and scores agree within 1e-12. */
static void test_blas_matches_reference(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 11);
    double worst = 0.0;
    for (int iter = 0; iter < 300; iter++) {
        size_t H = 1 + below(&rng, 4);
        mh_sizes z = {1 + below(&rng, 3),       1 + below(&rng, 7),
                      1 + below(&rng, 7),       1 + below(&rng, 6),
                      1 + below(&rng, 6),       1 + below(&rng, 6),
                      H * (1 + below(&rng, 3)), H,
                      1 + below(&rng, 5)};
        mh_case c;
        mh_alloc(&c, z);
        fill(&rng, c.q, z.B * z.Nq * z.dq);
        fill(&rng, c.k, z.B * z.Nk * z.dk);
        fill(&rng, c.v, z.B * z.Nk * z.dv);
        fill(&rng, c.W_q, z.h * z.dq);
        fill(&rng, c.W_k, z.h * z.dk);
        fill(&rng, c.W_v, z.h * z.dv);
        fill(&rng, c.W_o, z.d_out * z.h);
        fill(&rng, c.b_q, z.h);
        fill(&rng, c.b_k, z.h);
        fill(&rng, c.b_v, z.h);
        fill(&rng, c.b_o, z.d_out);
        unsigned bias_bits = (unsigned)below(&rng, 16);
        attn_multihead_params p = {c.W_q,
                                   c.W_k,
                                   c.W_v,
                                   c.W_o,
                                   bias_bits & 1 ? c.b_q : NULL,
                                   bias_bits & 2 ? c.b_k : NULL,
                                   bias_bits & 4 ? c.b_v : NULL,
                                   bias_bits & 8 ? c.b_o : NULL};
        attn_mask mask = {0};
        size_t kind = below(&rng, 3);
        if (kind > 0) {
            mask.per_query = kind == 2;
            size_t n = mask.per_query ? z.B * z.Nq : z.B;
            for (size_t i = 0; i < n; i++)
                c.lens[i] = (int64_t)below(&rng, z.Nk + 1);
            mask.valid_lens = c.lens;
        }
        mask.causal = (attn_causal)below(&rng, 3);
        mask.fully_masked =
            below(&rng, 2) ? ATTN_FULLY_MASKED_UNIFORM : ATTN_FULLY_MASKED_ZERO;

        assert_int_equal(run_blas(&c, &p, &mask, NULL), ATTN_OK);
        assert_int_equal(run_ref(&c, &p, &mask, NULL), ATTN_OK);
        size_t n_out = z.B * z.Nq * z.d_out, n_w = z.B * z.H * z.Nq * z.Nk;
        assert_close(c.out, c.out_ref, n_out, 1e-12);
        assert_close(c.w, c.w_ref, n_w, 1e-12);
        assert_close(c.s, c.s_ref, n_w, 1e-12);
        size_t at;
        double d[] = {check_worst(c.out, c.out_ref, n_out, &at),
                      check_worst(c.w, c.w_ref, n_w, &at),
                      check_worst(c.s, c.s_ref, n_w, &at)};
        for (size_t i = 0; i < 3; i++)
            worst = d[i] > worst ? d[i] : worst;
        mh_free(&c);
    }
    print_message("# multihead BLAS vs loops: 300 shapes, worst scaled "
                  "difference %.3g\n",
                  worst);
}

/* ------------------------------- reduction to dot-product attention */

/* Identity projections and no biases: head t of multi-head attention is
 * attn_dot_forward on features t·h/H ... of q, k, v with scale
 * 1/sqrt(h/H), and the output is those heads side by side (1e-12). */
static void test_identity_heads_are_dot_attention(void **state) {
    (void)state;
    const size_t B = 2, Nq = 3, Nk = 5, h = 6, H = 3, dh = h / H;
    mh_case c;
    mh_alloc(&c, (mh_sizes){B, Nq, Nk, h, h, h, h, H, h});
    attn_rng rng;
    attn_rng_seed(&rng, 5);
    fill(&rng, c.q, B * Nq * h);
    fill(&rng, c.k, B * Nk * h);
    fill(&rng, c.v, B * Nk * h);
    for (size_t i = 0; i < h; i++) {
        c.W_q[i * h + i] = c.W_k[i * h + i] = 1.0;
        c.W_v[i * h + i] = c.W_o[i * h + i] = 1.0;
    }
    const int64_t lens[] = {4, 2};
    attn_mask mask = {.valid_lens = lens,
                      .per_query = 0,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    attn_multihead_params p = {c.W_q, c.W_k, c.W_v, c.W_o,
                               NULL,  NULL,  NULL,  NULL};
    assert_int_equal(run_blas(&c, &p, &mask, NULL), ATTN_OK);

    double qh[2 * 3 * 2], kh[2 * 5 * 2], vh[2 * 5 * 2];
    double out_h[2 * 3 * 2], w_h[2 * 3 * 5];
    double got_out[2 * 3 * 2], got_w[2 * 3 * 5];
    for (size_t t = 0; t < H; t++) {
        for (size_t b = 0; b < B; b++) {
            for (size_t i = 0; i < Nq; i++)
                memcpy(qh + (b * Nq + i) * dh, c.q + (b * Nq + i) * h + t * dh,
                       dh * sizeof(double));
            for (size_t j = 0; j < Nk; j++) {
                memcpy(kh + (b * Nk + j) * dh, c.k + (b * Nk + j) * h + t * dh,
                       dh * sizeof(double));
                memcpy(vh + (b * Nk + j) * dh, c.v + (b * Nk + j) * h + t * dh,
                       dh * sizeof(double));
            }
        }
        assert_int_equal(attn_dot_forward(out_h, w_h, NULL, qh, kh, vh, &mask,
                                          1.0 / sqrt((double)dh), B, Nq, Nk, dh,
                                          dh, NULL),
                         ATTN_OK);
        for (size_t b = 0; b < B; b++) {
            memcpy(got_w + b * Nq * Nk, c.w + (b * H + t) * Nq * Nk,
                   Nq * Nk * sizeof(double));
            for (size_t i = 0; i < Nq; i++)
                memcpy(got_out + (b * Nq + i) * dh,
                       c.out + (b * Nq + i) * h + t * dh, dh * sizeof(double));
        }
        assert_close(got_w, w_h, B * Nq * Nk, 1e-12);
        assert_close(got_out, out_h, B * Nq * dh, 1e-12);
    }
    mh_free(&c);
}

/* Self-attention: keys = values = queries (one buffer) gives the same
 * result as three separate copies, and with W_q = W_k each head's score
 * matrix is symmetric (1e-12). */
static void test_self_attention(void **state) {
    (void)state;
    const size_t B = 2, N = 4, d = 3, h = 4, H = 2;
    mh_case c;
    mh_alloc(&c, (mh_sizes){B, N, N, d, d, d, h, H, h});
    attn_rng rng;
    attn_rng_seed(&rng, 9);
    fill(&rng, c.q, B * N * d);
    memcpy(c.k, c.q, B * N * d * sizeof(double));
    memcpy(c.v, c.q, B * N * d * sizeof(double));
    fill(&rng, c.W_q, h * d);
    memcpy(c.W_k, c.W_q, h * d * sizeof(double));
    fill(&rng, c.W_v, h * d);
    fill(&rng, c.W_o, h * h);
    fill(&rng, c.b_q, h);
    memcpy(c.b_k, c.b_q, h * sizeof(double));
    fill(&rng, c.b_o, h);
    attn_multihead_params p = {c.W_q, c.W_k, c.W_v, c.W_o,
                               c.b_q, c.b_k, NULL,  c.b_o};
    assert_int_equal(run_blas(&c, &p, NULL, NULL), ATTN_OK);
    double *out_same = alloc_doubles(B * N * h);
    double *w_same = alloc_doubles(B * H * N * N);
    double *s_same = alloc_doubles(B * H * N * N);
    assert_int_equal(attn_multihead_forward(out_same, w_same, s_same, c.q, c.q,
                                            c.q, &p, NULL, B, N, N, d, d, d, h,
                                            H, h, NULL),
                     ATTN_OK);
    assert_close(out_same, c.out, B * N * h, 1e-15);
    assert_close(w_same, c.w, B * H * N * N, 1e-15);
    for (size_t bh = 0; bh < B * H; bh++) {
        for (size_t i = 0; i < N; i++) {
            for (size_t j = 0; j < i; j++)
                assert_near(s_same[(bh * N + i) * N + j],
                            s_same[(bh * N + j) * N + i], 1e-12);
        }
    }
    free(out_same);
    free(w_same);
    free(s_same);
    mh_free(&c);
}

/* ------------------------------------------------ masks per head */

/* Every head's weight rows sum to 1 (1e-12) over exactly the keys the
 * mask admits (others exactly 0); a query that sees no key has all-zero
 * weights under "zero", so its output row is b_o exactly, and 1/Nk under
 * "uniform". */
static void test_masks_per_head(void **state) {
    (void)state;
    const size_t B = 2, Nq = 4, Nk = 5, d = 3, h = 6, H = 3, d_out = 2;
    mh_case c;
    mh_alloc(&c, (mh_sizes){B, Nq, Nk, d, d, d, h, H, d_out});
    attn_rng rng;
    attn_rng_seed(&rng, 21);
    fill(&rng, c.q, B * Nq * d);
    fill(&rng, c.k, B * Nk * d);
    fill(&rng, c.v, B * Nk * d);
    fill(&rng, c.W_q, h * d);
    fill(&rng, c.W_k, h * d);
    fill(&rng, c.W_v, h * d);
    fill(&rng, c.W_o, d_out * h);
    fill(&rng, c.b_v, h);
    fill(&rng, c.b_o, d_out);
    attn_multihead_params p = {c.W_q, c.W_k, c.W_v, c.W_o,
                               NULL,  NULL,  c.b_v, c.b_o};
    /* per-query lengths with a 0, and the bottom-right causal rule
     * (j <= i + 1): row (0, 0) sees nothing; row (1, 2) sees keys 0..1. */
    const int64_t lens[] = {0, 5, 2, 5, 3, 1, 2, 4};
    attn_mask mask = {.valid_lens = lens,
                      .per_query = 1,
                      .causal = ATTN_CAUSAL_BOTTOM_RIGHT,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    assert_int_equal(run_blas(&c, &p, &mask, NULL), ATTN_OK);
    for (size_t b = 0; b < B; b++) {
        for (size_t t = 0; t < H; t++) {
            for (size_t i = 0; i < Nq; i++) {
                const double *w = c.w + ((b * H + t) * Nq + i) * Nk;
                size_t len = (size_t)lens[b * Nq + i];
                if (i + 2 < len)
                    len = i + 2;
                double sum = 0.0;
                for (size_t j = 0; j < Nk; j++) {
                    if (j < len)
                        assert_true(w[j] > 0.0);
                    else
                        assert_true(w[j] == 0.0);
                    sum += w[j];
                }
                assert_near(sum, len ? 1.0 : 0.0, 1e-12);
            }
        }
    }
    /* row (0, 0): zero weights in every head, output = b_o exactly */
    assert_true(c.out[0] == c.b_o[0] && c.out[1] == c.b_o[1]);

    mask.fully_masked = ATTN_FULLY_MASKED_UNIFORM;
    assert_int_equal(run_blas(&c, &p, &mask, NULL), ATTN_OK);
    assert_int_equal(run_ref(&c, &p, &mask, NULL), ATTN_OK);
    for (size_t t = 0; t < H; t++) {
        for (size_t j = 0; j < Nk; j++)
            assert_true(c.w[(t * Nq) * Nk + j] == 1.0 / (double)Nk);
    }
    assert_close(c.out, c.out_ref, B * Nq * d_out, 1e-12);
    mh_free(&c);
}

/* ------------------------------------------------------------ errors */

static void test_errors(void **state) {
    (void)state;
    const size_t B = 2, Nq = 3, Nk = 4, d = 2, h = 4, H = 2;
    mh_case c;
    mh_alloc(&c, (mh_sizes){B, Nq, Nk, d, d, d, h, H, h});
    attn_rng rng;
    attn_rng_seed(&rng, 3);
    fill(&rng, c.q, B * Nq * d);
    fill(&rng, c.k, B * Nk * d);
    fill(&rng, c.v, B * Nk * d);
    fill(&rng, c.W_q, h * d);
    fill(&rng, c.W_k, h * d);
    fill(&rng, c.W_v, h * d);
    fill(&rng, c.W_o, h * h);
    attn_multihead_params p = {c.W_q, c.W_k, c.W_v, c.W_o,
                               NULL,  NULL,  NULL,  NULL};
    attn_fault fault;
    for (int path = 0; path < 2; path++) {
        attn_status (*run)(mh_case *, const attn_multihead_params *,
                           const attn_mask *, attn_fault *) =
            path ? run_ref : run_blas;
        /* H must divide h */
        c.z.H = 3;
        assert_int_equal(run(&c, &p, NULL, &fault), ATTN_E_INVALID_ARG);
        c.z.H = H;
        /* a missing weight, a zero size */
        attn_multihead_params no_wo = p;
        no_wo.W_o = NULL;
        assert_int_equal(run(&c, &no_wo, NULL, &fault), ATTN_E_INVALID_ARG);
        c.z.d_out = 0;
        assert_int_equal(run(&c, &p, NULL, &fault), ATTN_E_INVALID_ARG);
        c.z.d_out = h;
        /* valid_lens out of range: fault->index into valid_lens */
        const int64_t bad_lens[] = {2, 5};
        attn_mask mask = {.valid_lens = bad_lens,
                          .per_query = 0,
                          .causal = ATTN_CAUSAL_NONE,
                          .fully_masked = ATTN_FULLY_MASKED_ZERO};
        assert_int_equal(run(&c, &p, &mask, &fault), ATTN_E_VALID_LEN);
        assert_int_equal(fault.index, 1);
        /* fully masked under "error": row b·Nq + i of example 1 */
        const int64_t lens[] = {3, 1, 2, 0, 4, 4};
        attn_mask err = {.valid_lens = lens,
                         .per_query = 1,
                         .causal = ATTN_CAUSAL_NONE,
                         .fully_masked = ATTN_FULLY_MASKED_ERROR};
        assert_int_equal(run(&c, &p, &err, &fault), ATTN_E_FULLY_MASKED);
        assert_int_equal(fault.index, 3);
        assert_int_equal(fault.by_causal, 0);
        /* ... and when only the causal rule empties it (Nk < Nq would be
         * needed for top-left; bottom-right with Nk = 2 < Nq = 3 blanks
         * query 0 of every example) */
        c.z.Nk = 2;
        attn_mask causal = {.valid_lens = NULL,
                            .per_query = 0,
                            .causal = ATTN_CAUSAL_BOTTOM_RIGHT,
                            .fully_masked = ATTN_FULLY_MASKED_ERROR};
        assert_int_equal(run(&c, &p, &causal, &fault), ATTN_E_FULLY_MASKED);
        assert_int_equal(fault.index, 0);
        assert_int_equal(fault.by_causal, 1);
        c.z.Nk = Nk;
        /* overflowing scores: query (0, 0) and key (0, 0) near 1e300 make
         * their score in head 0 inf or NaN; fault->index into
         * (B, H, Nq, Nk) = 0 */
        c.q[0] = c.q[1] = c.k[0] = c.k[1] = 1e300;
        assert_int_equal(run(&c, &p, NULL, &fault), ATTN_E_NONFINITE);
        assert_int_equal(fault.index, 0);
        fill(&rng, c.q, 2);
        fill(&rng, c.k, 2);
        /* overflowing output: row 0 of W_o at 1e308 times values 1e10;
         * fault->index into out = 0 */
        for (size_t i = 0; i < h; i++)
            c.W_o[i] = 1e308;
        for (size_t i = 0; i < B * Nk * d; i++)
            c.v[i] = 1e10;
        assert_int_equal(run(&c, &p, NULL, &fault), ATTN_E_NONFINITE);
        assert_int_equal(fault.index, 0);
        fill(&rng, c.v, B * Nk * d);
        fill(&rng, c.W_o, h * h);
        /* sizes whose products overflow size_t */
        assert_int_equal(attn_multihead_forward(c.out, c.w, NULL, c.q, c.k, c.v,
                                                &p, NULL, SIZE_MAX / 2, 3, 3, 2,
                                                2, 2, 4, 2, 4, &fault),
                         ATTN_E_OVERFLOW);
        assert_int_equal(attn_multihead_forward_ref(c.out, c.w, NULL, c.q, c.k,
                                                    c.v, &p, NULL, 1,
                                                    SIZE_MAX / 4, SIZE_MAX / 4,
                                                    1, 1, 1, 1, 1, 1, &fault),
                         ATTN_E_OVERFLOW);
        assert_int_equal(run(&c, &p, NULL, &fault), ATTN_OK);
    }
    mh_free(&c);
}

/* attn_multihead_workspace: 8·B·(Nq + 2·Nk)·h bytes, overflow checked. */
static void test_workspace(void **state) {
    (void)state;
    size_t bytes = 0;
    assert_int_equal(attn_multihead_workspace(&bytes, 2, 3, 5, 4), ATTN_OK);
    assert_int_equal(bytes, 8 * 2 * (3 + 2 * 5) * 4);
    assert_int_equal(attn_multihead_workspace(&bytes, 1, 1, 1, 1), ATTN_OK);
    assert_int_equal(bytes, 24);
    assert_int_equal(attn_multihead_workspace(&bytes, SIZE_MAX / 8, 1, 1, 1),
                     ATTN_E_OVERFLOW);
    assert_int_equal(attn_multihead_workspace(&bytes, 1, 1, SIZE_MAX / 2, 1),
                     ATTN_E_OVERFLOW);
    assert_int_equal(attn_multihead_workspace(NULL, 1, 1, 1, 1),
                     ATTN_E_INVALID_ARG);
}

/* ------------------------------------------------- seeded parameters */

/* attn_multihead_xavier equals, bit for bit, W_q, W_k, W_v, W_o drawn in
 * that order by an independent Python xoshiro256** (multihead_xavier.txt). */
static void test_xavier_vectors(void **state) {
    (void)state;
    FILE *f = fopen(XAVIER_VECTORS, "r");
    assert_non_null(f);
    vec_case vc;
    int rc;
    size_t cases = 0;
    while ((rc = vec_read_case(f, &vc)) == 1) {
        uint64_t seed = ((uint64_t)vec_data(&vc, "seed_hi")[0] << 32) |
                        (uint64_t)vec_data(&vc, "seed_lo")[0];
        const double *sz = vec_data(&vc, "sizes");
        size_t dq = (size_t)sz[0], dk = (size_t)sz[1], dv = (size_t)sz[2],
               h = (size_t)sz[3];
        double *W_q = alloc_doubles(h * dq), *W_k = alloc_doubles(h * dk);
        double *W_v = alloc_doubles(h * dv), *W_o = alloc_doubles(h * h);
        attn_rng rng;
        attn_rng_seed(&rng, seed);
        assert_int_equal(
            attn_multihead_xavier(W_q, W_k, W_v, W_o, &rng, dq, dk, dv, h),
            ATTN_OK);
        assert_close(W_q, vec_data(&vc, "W_q"), h * dq, 0.0);
        assert_close(W_k, vec_data(&vc, "W_k"), h * dk, 0.0);
        assert_close(W_v, vec_data(&vc, "W_v"), h * dv, 0.0);
        assert_close(W_o, vec_data(&vc, "W_o"), h * h, 0.0);
        free(W_q);
        free(W_k);
        free(W_v);
        free(W_o);
        vec_case_free(&vc);
        cases++;
    }
    fclose(f);
    assert_int_equal(rc, 0);
    assert_int_equal(cases, 3);

    attn_rng rng;
    attn_rng_seed(&rng, 0);
    double W[4];
    assert_int_equal(attn_multihead_xavier(W, W, W, W, &rng, 1, 0, 1, 2),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_multihead_xavier(W, W, NULL, W, &rng, 1, 1, 1, 2),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(
        attn_multihead_xavier(W, W, W, W, &rng, SIZE_MAX / 2, 1, 1, 4),
        ATTN_E_OVERFLOW);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_vectors),
        cmocka_unit_test(test_blas_matches_reference),
        cmocka_unit_test(test_identity_heads_are_dot_attention),
        cmocka_unit_test(test_self_attention),
        cmocka_unit_test(test_masks_per_head),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_workspace),
        cmocka_unit_test(test_xavier_vectors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
