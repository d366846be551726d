/*
 * test_masks.c — PyTorch's pattern masks in libattn: a boolean or float
 * attn_mask (shared, per example, per example and head) and
 * key_padding_mask, with valid_lens and causal. Random patterns against a
 * plain reference written here (visible iff every mask admits, softmax of
 * scores + float mask), exact zeros, a pattern equal to a prefix giving
 * the prefix path's bits, the fully masked policies and their faults, the
 * multi-head paths against each other, and every backward pass against
 * finite differences.
 */
#include "backward_check.h"

#include <math.h>

/* ------------------------------------------------- random pattern masks */

/* Storage for one random mask over (B, H, Nq, Nk). */
typedef struct {
    attn_mask m;
    unsigned char *bools, *pad;
    double *floats;
    int64_t *lens;
    size_t slabs; /* entries of the attn_mask's leading axis */
} pattern;

/* A random mask: valid_lens none, (B) or (B, Nq); any causal rule; a
 * boolean or float attn_mask (or both, or neither) in a random layout
 * (PER_HEAD only when H > 1 is asked for); key_padding_mask or not. Keys
 * are hidden with probability p_hide, so rows are sometimes empty. */
static void draw_pattern(pattern *pt, attn_rng *rng, size_t B, size_t H,
                         size_t Nq, size_t Nk, attn_fully_masked policy,
                         double p_hide) {
    memset(pt, 0, sizeof *pt);
    pt->lens = calloc(B * Nq, sizeof *pt->lens);
    assert_non_null(pt->lens);
    pt->m = bw_random_mask(rng, pt->lens, B, Nq, Nk, policy);
    if (attn_rng_uniform(rng) < 0.5)
        pt->m.causal = ATTN_CAUSAL_NONE;
    double u = attn_rng_uniform(rng);
    pt->m.layout = u < 0.34   ? ATTN_MASK_SHARED
                   : u < 0.67 ? ATTN_MASK_PER_EXAMPLE
                              : ATTN_MASK_PER_HEAD;
    pt->slabs = pt->m.layout == ATTN_MASK_SHARED        ? 1
                : pt->m.layout == ATTN_MASK_PER_EXAMPLE ? B
                                                        : B * H;
    size_t n = pt->slabs * Nq * Nk;
    double which = attn_rng_uniform(rng);
    if (which < 0.7) {
        pt->bools = calloc(n, 1);
        assert_non_null(pt->bools);
        for (size_t t = 0; t < n; t++)
            pt->bools[t] = attn_rng_uniform(rng) < p_hide;
        pt->m.bool_mask = pt->bools;
    }
    if (which > 0.4) {
        pt->floats = bw_alloc(n);
        for (size_t t = 0; t < n; t++)
            pt->floats[t] = attn_rng_uniform(rng) < p_hide / 2
                                ? -INFINITY
                                : 4.0 * attn_rng_uniform(rng) - 2.0;
        pt->m.float_mask = pt->floats;
    }
    if (attn_rng_uniform(rng) < 0.5) {
        pt->pad = calloc(B * Nk, 1);
        assert_non_null(pt->pad);
        for (size_t t = 0; t < B * Nk; t++)
            pt->pad[t] = attn_rng_uniform(rng) < p_hide / 2;
        pt->m.key_padding_mask = pt->pad;
    }
}

static void free_pattern(pattern *pt) {
    free(pt->bools);
    free(pt->pad);
    free(pt->floats);
    free(pt->lens);
}

/* The reference's view of one entry: -inf when key j is hidden from query
 * i of head t of example b, else the float mask's addend (0 without). */
static double ref_addend(const pattern *pt, size_t b, size_t t, size_t H,
                         size_t i, size_t j, size_t Nq, size_t Nk) {
    const attn_mask *m = &pt->m;
    if (m->valid_lens) {
        int64_t vl =
            m->per_query ? m->valid_lens[b * Nq + i] : m->valid_lens[b];
        if ((int64_t)j >= vl)
            return -INFINITY;
    }
    if (m->causal == ATTN_CAUSAL_TOP_LEFT && j > i)
        return -INFINITY;
    if (m->causal == ATTN_CAUSAL_BOTTOM_RIGHT &&
        (double)j > (double)i + (double)Nk - (double)Nq)
        return -INFINITY;
    size_t slab = m->layout == ATTN_MASK_SHARED        ? 0
                  : m->layout == ATTN_MASK_PER_EXAMPLE ? b
                                                       : b * H + t;
    size_t at = (slab * Nq + i) * Nk + j;
    if (m->bool_mask && m->bool_mask[at])
        return -INFINITY;
    if (m->key_padding_mask && m->key_padding_mask[b * Nk + j])
        return -INFINITY;
    return m->float_mask ? m->float_mask[at] : 0.0;
}

/* Reference softmax of one row of scores s (Nk) with the addends: the
 * policy for an empty row; returns 1 when the row is empty. */
static int ref_row(double *w, const double *s, const pattern *pt, size_t b,
                   size_t t, size_t H, size_t i, size_t Nq, size_t Nk) {
    double mx = -INFINITY;
    for (size_t j = 0; j < Nk; j++) {
        double a = ref_addend(pt, b, t, H, i, j, Nq, Nk);
        if (a != -INFINITY)
            mx = fmax(mx, s[j] + a);
    }
    if (mx == -INFINITY) {
        double fill = pt->m.fully_masked == ATTN_FULLY_MASKED_UNIFORM
                          ? 1.0 / (double)Nk
                          : 0.0;
        for (size_t j = 0; j < Nk; j++)
            w[j] = fill;
        return 1;
    }
    double sum = 0.0;
    for (size_t j = 0; j < Nk; j++) {
        double a = ref_addend(pt, b, t, H, i, j, Nq, Nk);
        w[j] = a == -INFINITY ? 0.0 : exp(s[j] + a - mx);
        sum += w[j];
    }
    for (size_t j = 0; j < Nk; j++)
        w[j] /= sum;
    return 0;
}

/* ------------------------------------------------ the masked softmax */

/* 300 random patterns (H = 1): weights within 1e-14 of the reference,
 * exactly 0 where hidden, attn_mask_visible agreeing; both policies, and
 * empty rows and every mask kind seen. */
static void test_softmax_random_patterns(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 7);
    size_t empty_rows = 0, with_float = 0, with_pad = 0, per_example = 0;
    for (int iter = 0; iter < 300; iter++) {
        size_t B = bw_size(&rng, 3), Nq = bw_size(&rng, 6),
               Nk = bw_size(&rng, 9);
        pattern pt;
        draw_pattern(&pt, &rng, B, 1, Nq, Nk, (attn_fully_masked)(iter % 2),
                     0.45);
        double *s = bw_alloc(B * Nq * Nk), *w = bw_alloc(B * Nq * Nk);
        double *want = bw_alloc(B * Nq * Nk);
        bw_normals(&rng, s, B * Nq * Nk, 3.0);
        assert_int_equal(attn_softmax_masked(w, s, &pt.m, B, Nq, Nk, NULL),
                         ATTN_OK);
        for (size_t b = 0; b < B; b++)
            for (size_t i = 0; i < Nq; i++) {
                size_t row = (b * Nq + i) * Nk;
                empty_rows += (size_t)ref_row(want + row, s + row, &pt, b, 0, 1,
                                              i, Nq, Nk);
                for (size_t j = 0; j < Nk; j++) {
                    int hidden =
                        ref_addend(&pt, b, 0, 1, i, j, Nq, Nk) == -INFINITY;
                    assert_int_equal(attn_mask_visible(&pt.m, b, i, j, Nq, Nk),
                                     !hidden);
                    if (hidden && pt.m.fully_masked == ATTN_FULLY_MASKED_ZERO)
                        assert_true(w[row + j] == 0.0);
                }
            }
        assert_close(w, want, B * Nq * Nk, 1e-14);
        /* in place gives the same bits */
        assert_int_equal(attn_softmax_masked(s, s, &pt.m, B, Nq, Nk, NULL),
                         ATTN_OK);
        assert_memory_equal(s, w, B * Nq * Nk * sizeof *w);
        with_float += pt.floats != NULL;
        with_pad += pt.pad != NULL;
        per_example += pt.m.layout != ATTN_MASK_SHARED;
        free(s);
        free(w);
        free(want);
        free_pattern(&pt);
    }
    assert_true(empty_rows > 20 && with_float > 50 && with_pad > 50 &&
                per_example > 50);
}

/* A boolean mask that hides the same keys as valid_lens (a prefix) gives
 * the prefix path's bits; a float mask of zeros is no mask. */
static void test_prefix_pattern_same_bits(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 11);
    const size_t B = 3, Nq = 5, Nk = 67; /* past the 4 lanes of vmath */
    int64_t lens[] = {67, 30, 1};
    unsigned char *bools = calloc(B * Nq * Nk, 1);
    double *zeros = bw_alloc(Nq * Nk);
    double *s = bw_alloc(B * Nq * Nk), *w1 = bw_alloc(B * Nq * Nk),
           *w2 = bw_alloc(B * Nq * Nk), *w3 = bw_alloc(B * Nq * Nk);
    assert_non_null(bools);
    bw_normals(&rng, s, B * Nq * Nk, 5.0);
    for (size_t b = 0; b < B; b++)
        for (size_t i = 0; i < Nq; i++)
            for (size_t j = 0; j < Nk; j++)
                bools[(b * Nq + i) * Nk + j] = (int64_t)j >= lens[b];
    attn_mask by_lens = {.valid_lens = lens};
    attn_mask by_bool = {0};
    by_bool.bool_mask = bools;
    by_bool.layout = ATTN_MASK_PER_EXAMPLE;
    attn_mask by_zero = {0};
    by_zero.float_mask = zeros;
    assert_int_equal(attn_softmax_masked(w1, s, &by_lens, B, Nq, Nk, NULL),
                     ATTN_OK);
    assert_int_equal(attn_softmax_masked(w2, s, &by_bool, B, Nq, Nk, NULL),
                     ATTN_OK);
    assert_memory_equal(w1, w2, B * Nq * Nk * sizeof *w1);
    assert_int_equal(attn_softmax_masked(w1, s, NULL, B, Nq, Nk, NULL),
                     ATTN_OK);
    assert_int_equal(attn_softmax_masked(w3, s, &by_zero, B, Nq, Nk, NULL),
                     ATTN_OK);
    assert_memory_equal(w1, w3, B * Nq * Nk * sizeof *w1);
    free(bools);
    free(zeros);
    free(s);
    free(w1);
    free(w2);
    free(w3);
}

/* The policies on rows that only a pattern empties: zero, uniform, and
 * error with the row, by_mask and by_causal. */
static void test_policies(void **state) {
    (void)state;
    /* B = 2, Nq = 2, Nk = 3, scores all 0 */
    const double s[12] = {0};
    double w[12];
    /* example 1, query 0: every key hidden by the boolean mask */
    const unsigned char bools[12] = {0, 1, 0, 0, 0, 0, 1, 1, 1, 0, 0, 1};
    attn_mask m = {0};
    m.bool_mask = bools;
    m.layout = ATTN_MASK_PER_EXAMPLE;
    assert_int_equal(attn_softmax_masked(w, s, &m, 2, 2, 3, NULL), ATTN_OK);
    const double zero[12] = {0.5, 0, 0.5, 1. / 3, 1. / 3, 1. / 3,
                             0,   0, 0,   0.5,    0.5,    0};
    assert_memory_equal(w, zero, sizeof w);
    m.fully_masked = ATTN_FULLY_MASKED_UNIFORM;
    assert_int_equal(attn_softmax_masked(w, s, &m, 2, 2, 3, NULL), ATTN_OK);
    assert_true(w[6] == 1. / 3 && w[7] == 1. / 3 && w[8] == 1. / 3);
    m.fully_masked = ATTN_FULLY_MASKED_ERROR;
    attn_fault f;
    assert_int_equal(attn_softmax_masked(w, s, &m, 2, 2, 3, &f),
                     ATTN_E_FULLY_MASKED);
    assert_int_equal(f.index, 2);
    assert_int_equal(f.by_mask, ATTN_BY_ATTN_MASK);
    assert_int_equal(f.by_causal, 0);
    /* a float mask's -inf counts the same */
    const double fl[6] = {0, -INFINITY, 1, -INFINITY, -INFINITY, -INFINITY};
    attn_mask mf = {0};
    mf.float_mask = fl;
    mf.fully_masked = ATTN_FULLY_MASKED_ERROR;
    assert_int_equal(attn_softmax_masked(w, s, &mf, 1, 2, 3, &f),
                     ATTN_E_FULLY_MASKED);
    assert_int_equal(f.index, 1);
    assert_int_equal(f.by_mask, ATTN_BY_ATTN_MASK);
    mf.fully_masked = ATTN_FULLY_MASKED_ZERO;
    assert_int_equal(attn_softmax_masked(w, s, &mf, 1, 2, 3, NULL), ATTN_OK);
    assert_near(w[0], 1.0 / (1.0 + exp(1.0)), 1e-15);
    assert_true(w[1] == 0.0 && w[3] == 0.0 && w[4] == 0.0 && w[5] == 0.0);
    /* key padding alone: by_mask says so; valid_lens 0: by_mask 0 */
    const unsigned char pad[6] = {0, 0, 0, 1, 1, 1};
    int64_t lens[2] = {0, 3};
    attn_mask mp = {.valid_lens = lens,
                    .fully_masked = ATTN_FULLY_MASKED_ERROR};
    mp.key_padding_mask = pad;
    assert_int_equal(attn_softmax_masked(w, s, &mp, 2, 2, 3, &f),
                     ATTN_E_FULLY_MASKED);
    assert_int_equal(f.index, 0);
    assert_int_equal(f.by_mask, 0);
    lens[0] = 3;
    assert_int_equal(attn_softmax_masked(w, s, &mp, 2, 2, 3, &f),
                     ATTN_E_FULLY_MASKED);
    assert_int_equal(f.index, 2);
    assert_int_equal(f.by_mask, ATTN_BY_KEY_PADDING);
    /* causal empties row 0 (Nq 2 > Nk 1 bottom-right) before the mask */
    const unsigned char none[2] = {0, 0};
    attn_mask mc = {0};
    mc.causal = ATTN_CAUSAL_BOTTOM_RIGHT;
    mc.fully_masked = ATTN_FULLY_MASKED_ERROR;
    mc.bool_mask = none;
    assert_int_equal(attn_softmax_masked(w, s, &mc, 1, 2, 1, &f),
                     ATTN_E_FULLY_MASKED);
    assert_int_equal(f.index, 0);
    assert_int_equal(f.by_causal, 1);
    assert_int_equal(f.by_mask, 0);
    /* a NaN or +inf in the float mask makes the score non-finite */
    const double bad[3] = {0, NAN, 0};
    attn_mask mn = {0};
    mn.float_mask = bad;
    assert_int_equal(attn_softmax_masked(w, s, &mn, 1, 1, 3, &f),
                     ATTN_E_NONFINITE);
    assert_int_equal(f.index, 1);
    /* an unknown layout */
    attn_mask ml = {0};
    ml.layout = (attn_mask_layout)7;
    assert_int_equal(attn_softmax_masked(w, s, &ml, 1, 1, 3, NULL),
                     ATTN_E_INVALID_ARG);
}

/* attn_mask_apply: scores + float mask where visible, -inf elsewhere. */
static void test_apply(void **state) {
    (void)state;
    const double s[4] = {1, 2, 3, 4};
    const double fl[4] = {0.5, -INFINITY, -1, 0};
    const unsigned char pad[2] = {0, 1};
    double out[4];
    attn_mask m = {0};
    m.float_mask = fl;
    m.layout = ATTN_MASK_PER_HEAD; /* B = 1, H = 2: slabs 0 and 1 */
    m.key_padding_mask = pad;
    /* (B, H, Nq, Nk) = (1, 2, 1, 2) */
    assert_int_equal(attn_mask_apply(out, s, &m, 1, 2, 1, 2, NULL), ATTN_OK);
    assert_true(out[0] == 1.5 && out[1] == -INFINITY && out[2] == 2.0 &&
                out[3] == -INFINITY);
    assert_int_equal(attn_mask_apply(out, s, NULL, 1, 1, 2, 2, NULL), ATTN_OK);
    assert_memory_equal(out, s, sizeof s);
}

/* ------------------------------------------------ dot and multi-head */

/* Dot attention under random patterns: out and weights within 1e-13 of
 * the reference softmax of Q Kᵀ · scale + float mask times V. */
static void test_dot_random_patterns(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 21);
    for (int iter = 0; iter < 120; iter++) {
        size_t B = bw_size(&rng, 3), Nq = bw_size(&rng, 6),
               Nk = bw_size(&rng, 7), d = bw_size(&rng, 4),
               dv = bw_size(&rng, 3);
        pattern pt;
        draw_pattern(&pt, &rng, B, 1, Nq, Nk, (attn_fully_masked)(iter % 2),
                     0.4);
        double *q = bw_alloc(B * Nq * d), *k = bw_alloc(B * Nk * d),
               *v = bw_alloc(B * Nk * dv);
        double *out = bw_alloc(B * Nq * dv), *w = bw_alloc(B * Nq * Nk),
               *s = bw_alloc(B * Nq * Nk);
        double *want_w = bw_alloc(B * Nq * Nk), *want_o = bw_alloc(B * Nq * dv);
        bw_normals(&rng, q, B * Nq * d, 1.0);
        bw_normals(&rng, k, B * Nk * d, 1.0);
        bw_normals(&rng, v, B * Nk * dv, 1.0);
        double scale = attn_dot_default_scale(d);
        assert_int_equal(attn_dot_forward(out, w, s, q, k, v, &pt.m, scale, B,
                                          Nq, Nk, d, dv, NULL),
                         ATTN_OK);
        for (size_t b = 0; b < B; b++)
            for (size_t i = 0; i < Nq; i++) {
                double row[8];
                for (size_t j = 0; j < Nk; j++) {
                    double acc = 0.0;
                    for (size_t c = 0; c < d; c++)
                        acc +=
                            q[(b * Nq + i) * d + c] * k[(b * Nk + j) * d + c];
                    row[j] = acc * scale;
                }
                ref_row(want_w + (b * Nq + i) * Nk, row, &pt, b, 0, 1, i, Nq,
                        Nk);
                for (size_t c = 0; c < dv; c++) {
                    double acc = 0.0;
                    for (size_t j = 0; j < Nk; j++)
                        acc += want_w[(b * Nq + i) * Nk + j] *
                               v[(b * Nk + j) * dv + c];
                    want_o[(b * Nq + i) * dv + c] = acc;
                }
            }
        assert_close(w, want_w, B * Nq * Nk, 1e-13);
        assert_close(out, want_o, B * Nq * dv, 1e-13);
        free(q), free(k), free(v), free(out), free(w), free(s);
        free(want_w), free(want_o);
        free_pattern(&pt);
    }
}

/* Multi-head: the BLAS path against the plain-loop reference (whose
 * softmax is its own) under PER_HEAD and other patterns, weights checked
 * head by head against the reference softmax of the scores. */
static void test_multihead_random_patterns(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 31);
    size_t per_head = 0;
    for (int iter = 0; iter < 80; iter++) {
        size_t B = bw_size(&rng, 2), Nq = bw_size(&rng, 5),
               Nk = bw_size(&rng, 6), H = bw_size(&rng, 3),
               dh = bw_size(&rng, 3);
        size_t h = H * dh, dq = bw_size(&rng, 4), dk = bw_size(&rng, 4),
               dv = bw_size(&rng, 4), d_out = bw_size(&rng, 3);
        pattern pt;
        draw_pattern(&pt, &rng, B, H, Nq, Nk, (attn_fully_masked)(iter % 2),
                     0.4);
        per_head += pt.m.layout == ATTN_MASK_PER_HEAD && H > 1;
        double *q = bw_alloc(B * Nq * dq), *k = bw_alloc(B * Nk * dk),
               *v = bw_alloc(B * Nk * dv);
        double *Wq = bw_alloc(h * dq), *Wk = bw_alloc(h * dk),
               *Wv = bw_alloc(h * dv), *Wo = bw_alloc(d_out * h);
        size_t nw = B * H * Nq * Nk;
        double *out = bw_alloc(B * Nq * d_out), *w = bw_alloc(nw),
               *s = bw_alloc(nw), *out_r = bw_alloc(B * Nq * d_out),
               *w_r = bw_alloc(nw), *want = bw_alloc(nw);
        bw_normals(&rng, q, B * Nq * dq, 1.0);
        bw_normals(&rng, k, B * Nk * dk, 1.0);
        bw_normals(&rng, v, B * Nk * dv, 1.0);
        bw_normals(&rng, Wq, h * dq, 0.7);
        bw_normals(&rng, Wk, h * dk, 0.7);
        bw_normals(&rng, Wv, h * dv, 0.7);
        bw_normals(&rng, Wo, d_out * h, 0.7);
        attn_multihead_params p = {Wq, Wk, Wv, Wo, NULL, NULL, NULL, NULL};
        assert_int_equal(attn_multihead_forward(out, w, s, q, k, v, &p, &pt.m,
                                                B, Nq, Nk, dq, dk, dv, h, H,
                                                d_out, NULL),
                         ATTN_OK);
        assert_int_equal(attn_multihead_forward_ref(out_r, w_r, NULL, q, k, v,
                                                    &p, &pt.m, B, Nq, Nk, dq,
                                                    dk, dv, h, H, d_out, NULL),
                         ATTN_OK);
        assert_close(out, out_r, B * Nq * d_out, 1e-12);
        assert_close(w, w_r, nw, 1e-13);
        for (size_t b = 0; b < B; b++)
            for (size_t t = 0; t < H; t++)
                for (size_t i = 0; i < Nq; i++) {
                    size_t row = ((b * H + t) * Nq + i) * Nk;
                    ref_row(want + row, s + row, &pt, b, t, H, i, Nq, Nk);
                    for (size_t j = 0; j < Nk; j++)
                        assert_int_equal(attn_mask_visible_head(&pt.m, b, t, H,
                                                                i, j, Nq, Nk),
                                         ref_addend(&pt, b, t, H, i, j, Nq,
                                                    Nk) != -INFINITY);
                }
        assert_close(w, want, nw, 1e-14);
        free(q), free(k), free(v), free(Wq), free(Wk), free(Wv), free(Wo);
        free(out), free(w), free(s), free(out_r), free(w_r), free(want);
        free_pattern(&pt);
    }
    assert_true(per_head > 5);
}

/* A row empty in one head only, under "error": the head is named, in the
 * forward and the backward pass alike. */
static void test_multihead_fault_head(void **state) {
    (void)state;
    const size_t B = 2, Nq = 2, Nk = 2, H = 2, h = 2;
    double q[8] = {1, 0, 0, 1, 1, 1, 0, 1};
    double W[4] = {1, 0, 0, 1};
    double out[8], w[16], g[8], gW[4][4];
    unsigned char bools[16] = {0};
    bools[(3 * Nq + 1) * Nk + 0] = 1; /* example 1, head 1, query 1 */
    bools[(3 * Nq + 1) * Nk + 1] = 1;
    attn_mask m = {0};
    m.bool_mask = bools;
    m.layout = ATTN_MASK_PER_HEAD;
    m.fully_masked = ATTN_FULLY_MASKED_ERROR;
    attn_multihead_params p = {W, W, W, W, NULL, NULL, NULL, NULL};
    attn_fault f;
    assert_int_equal(attn_multihead_forward(out, w, NULL, q, q, q, &p, &m, B,
                                            Nq, Nk, 2, 2, 2, h, H, 2, &f),
                     ATTN_E_FULLY_MASKED);
    assert_int_equal(f.index, 1 * Nq + 1);
    assert_int_equal(f.head, 1);
    assert_int_equal(f.by_mask, ATTN_BY_ATTN_MASK);
    assert_int_equal(attn_multihead_forward_ref(out, w, NULL, q, q, q, &p, &m,
                                                B, Nq, Nk, 2, 2, 2, h, H, 2,
                                                &f),
                     ATTN_E_FULLY_MASKED);
    assert_int_equal(f.index, 3);
    assert_int_equal(f.head, 1);
    attn_multihead_grads gp = {gW[0], gW[1], gW[2], gW[3],
                               NULL,  NULL,  NULL,  NULL};
    assert_int_equal(attn_multihead_backward(g, g, g, &gp, q, w, q, q, q, &p,
                                             &m, B, Nq, Nk, 2, 2, 2, h, H, 2,
                                             &f),
                     ATTN_E_FULLY_MASKED);
    assert_int_equal(f.index, 3);
    assert_int_equal(f.head, 1);
    /* under "zero" the row is 0 in head 1 only */
    m.fully_masked = ATTN_FULLY_MASKED_ZERO;
    assert_int_equal(attn_multihead_forward(out, w, NULL, q, q, q, &p, &m, B,
                                            Nq, Nk, 2, 2, 2, h, H, 2, NULL),
                     ATTN_OK);
    assert_true(w[(3 * Nq + 1) * Nk] == 0.0 && w[(3 * Nq + 1) * Nk + 1] == 0.0);
    assert_near(w[(2 * Nq + 1) * Nk] + w[(2 * Nq + 1) * Nk + 1], 1.0, 1e-15);
}

/* ------------------------------------------------ backward passes */

typedef struct {
    size_t B, H, Nq, Nk, d, dv, h;
    const attn_mask *m;
    double *q, *k, *v, *dO, *out, *w, *Wq, *Wk, *Wv, *Wo, *bq, *bo;
} fd_case;

static double dot_loss(void *ctx) {
    fd_case *c = ctx;
    assert_int_equal(attn_dot_forward(c->out, c->w, NULL, c->q, c->k, c->v,
                                      c->m, attn_dot_default_scale(c->d), c->B,
                                      c->Nq, c->Nk, c->d, c->dv, NULL),
                     ATTN_OK);
    return bw_dot(c->dO, c->out, c->B * c->Nq * c->dv);
}

static double mh_loss(void *ctx) {
    fd_case *c = ctx;
    attn_multihead_params p = {c->Wq, c->Wk, c->Wv, c->Wo,
                               c->bq, NULL,  NULL,  c->bo};
    assert_int_equal(attn_multihead_forward(c->out, c->w, NULL, c->q, c->k,
                                            c->v, &p, c->m, c->B, c->Nq, c->Nk,
                                            c->d, c->d, c->dv, c->h, c->H,
                                            c->dv, NULL),
                     ATTN_OK);
    return bw_dot(c->dO, c->out, c->B * c->Nq * c->dv);
}

/* Dot and multi-head gradients under random patterns (empty rows under
 * zero and uniform included) within 1e-6 of finite differences; the
 * softmax backward exactly 0 where hidden. */
static void test_backward_fd(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 41);
    double worst = 0.0;
    for (int iter = 0; iter < 60; iter++) {
        fd_case c = {0};
        c.B = bw_size(&rng, 2), c.Nq = bw_size(&rng, 4),
        c.Nk = bw_size(&rng, 5);
        c.H = bw_size(&rng, 2), c.d = bw_size(&rng, 3), c.dv = bw_size(&rng, 3);
        c.h = c.H * bw_size(&rng, 2);
        int heads = iter % 2;
        pattern pt;
        draw_pattern(&pt, &rng, c.B, heads ? c.H : 1, c.Nq, c.Nk,
                     (attn_fully_masked)(iter / 2 % 2), 0.35);
        c.m = &pt.m;
        size_t nq = c.B * c.Nq, nk = c.B * c.Nk;
        c.q = bw_alloc(nq * c.d), c.k = bw_alloc(nk * c.d);
        c.v = bw_alloc(nk * c.dv), c.dO = bw_alloc(nq * c.dv);
        c.out = bw_alloc(nq * c.dv);
        c.w = bw_alloc(c.B * c.H * c.Nq * c.Nk);
        bw_normals(&rng, c.q, nq * c.d, 1.0);
        bw_normals(&rng, c.k, nk * c.d, 1.0);
        bw_normals(&rng, c.v, nk * c.dv, 1.0);
        bw_normals(&rng, c.dO, nq * c.dv, 1.0);
        double *gq = bw_alloc(nq * c.d), *gk = bw_alloc(nk * c.d),
               *gv = bw_alloc(nk * c.dv);
        if (!heads) {
            dot_loss(&c);
            assert_int_equal(attn_dot_backward(gq, gk, gv, c.dO, c.w, c.q, c.k,
                                               c.v, c.m,
                                               attn_dot_default_scale(c.d), c.B,
                                               c.Nq, c.Nk, c.d, c.dv, NULL),
                             ATTN_OK);
            assert_grad_fd(gq, c.q, nq * c.d, dot_loss, &c, &worst);
            assert_grad_fd(gk, c.k, nk * c.d, dot_loss, &c, &worst);
            assert_grad_fd(gv, c.v, nk * c.dv, dot_loss, &c, &worst);
        } else {
            c.Wq = bw_alloc(c.h * c.d), c.Wk = bw_alloc(c.h * c.d);
            c.Wv = bw_alloc(c.h * c.dv), c.Wo = bw_alloc(c.dv * c.h);
            c.bq = bw_alloc(c.h), c.bo = bw_alloc(c.dv);
            bw_normals(&rng, c.Wq, c.h * c.d, 0.7);
            bw_normals(&rng, c.Wk, c.h * c.d, 0.7);
            bw_normals(&rng, c.Wv, c.h * c.dv, 0.7);
            bw_normals(&rng, c.Wo, c.dv * c.h, 0.7);
            bw_normals(&rng, c.bq, c.h, 0.7);
            bw_normals(&rng, c.bo, c.dv, 0.7);
            double *gWq = bw_alloc(c.h * c.d), *gWk = bw_alloc(c.h * c.d),
                   *gWv = bw_alloc(c.h * c.dv), *gWo = bw_alloc(c.dv * c.h),
                   *gbq = bw_alloc(c.h), *gbo = bw_alloc(c.dv);
            mh_loss(&c);
            attn_multihead_params p = {c.Wq, c.Wk, c.Wv, c.Wo,
                                       c.bq, NULL, NULL, c.bo};
            attn_multihead_grads gp = {gWq, gWk,  gWv,  gWo,
                                       gbq, NULL, NULL, gbo};
            assert_int_equal(
                attn_multihead_backward(gq, gk, gv, &gp, c.dO, c.w, c.q, c.k,
                                        c.v, &p, c.m, c.B, c.Nq, c.Nk, c.d, c.d,
                                        c.dv, c.h, c.H, c.dv, NULL),
                ATTN_OK);
            assert_grad_fd(gq, c.q, nq * c.d, mh_loss, &c, &worst);
            assert_grad_fd(gk, c.k, nk * c.d, mh_loss, &c, &worst);
            assert_grad_fd(gv, c.v, nk * c.dv, mh_loss, &c, &worst);
            assert_grad_fd(gWq, c.Wq, c.h * c.d, mh_loss, &c, &worst);
            assert_grad_fd(gWk, c.Wk, c.h * c.d, mh_loss, &c, &worst);
            assert_grad_fd(gWv, c.Wv, c.h * c.dv, mh_loss, &c, &worst);
            assert_grad_fd(gWo, c.Wo, c.dv * c.h, mh_loss, &c, &worst);
            assert_grad_fd(gbq, c.bq, c.h, mh_loss, &c, &worst);
            assert_grad_fd(gbo, c.bo, c.dv, mh_loss, &c, &worst);
            free(gWq), free(gWk), free(gWv), free(gWo), free(gbq), free(gbo);
            free(c.Wq), free(c.Wk), free(c.Wv), free(c.Wo), free(c.bq);
            free(c.bo);
        }
        free(gq), free(gk), free(gv);
        free(c.q), free(c.k), free(c.v), free(c.dO), free(c.out), free(c.w);
        free_pattern(&pt);
    }
    print_message("# worst relative error against finite differences: %.3g\n",
                  worst);
}

/* The softmax backward under a pattern: exactly 0 where hidden and on
 * empty rows, the Jacobian's product elsewhere; under "error" an empty
 * row is found before any work. */
static void test_softmax_backward_pattern(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 51);
    for (int iter = 0; iter < 100; iter++) {
        size_t B = bw_size(&rng, 2), Nq = bw_size(&rng, 4),
               Nk = bw_size(&rng, 6), n;
        pattern pt;
        draw_pattern(&pt, &rng, B, 1, Nq, Nk, (attn_fully_masked)(iter % 2),
                     0.4);
        n = B * Nq * Nk;
        double *s = bw_alloc(n), *w = bw_alloc(n), *gw = bw_alloc(n),
               *gs = bw_alloc(n);
        bw_normals(&rng, s, n, 2.0);
        bw_normals(&rng, gw, n, 1.0);
        assert_int_equal(attn_softmax_masked(w, s, &pt.m, B, Nq, Nk, NULL),
                         ATTN_OK);
        assert_int_equal(
            attn_softmax_masked_backward(gs, gw, w, &pt.m, B, Nq, Nk, NULL),
            ATTN_OK);
        for (size_t b = 0; b < B; b++)
            for (size_t i = 0; i < Nq; i++) {
                size_t row = (b * Nq + i) * Nk;
                double dot = 0.0;
                size_t seen = 0;
                for (size_t j = 0; j < Nk; j++)
                    if (attn_mask_visible(&pt.m, b, i, j, Nq, Nk)) {
                        dot += gw[row + j] * w[row + j];
                        seen++;
                    }
                for (size_t j = 0; j < Nk; j++) {
                    if (!seen || !attn_mask_visible(&pt.m, b, i, j, Nq, Nk))
                        assert_true(gs[row + j] == 0.0);
                    else
                        assert_near(gs[row + j],
                                    w[row + j] * (gw[row + j] - dot), 1e-15);
                }
                if (!seen) {
                    pt.m.fully_masked = ATTN_FULLY_MASKED_ERROR;
                    attn_fault f;
                    assert_int_equal(attn_softmax_masked_backward(
                                         gs, gw, w, &pt.m, B, Nq, Nk, &f),
                                     ATTN_E_FULLY_MASKED);
                    assert_true(f.index <= b * Nq + i);
                    pt.m.fully_masked = (attn_fully_masked)(iter % 2);
                }
            }
        free(s), free(w), free(gw), free(gs);
        free_pattern(&pt);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_softmax_random_patterns),
        cmocka_unit_test(test_prefix_pattern_same_bits),
        cmocka_unit_test(test_policies),
        cmocka_unit_test(test_apply),
        cmocka_unit_test(test_dot_random_patterns),
        cmocka_unit_test(test_multihead_random_patterns),
        cmocka_unit_test(test_multihead_fault_head),
        cmocka_unit_test(test_backward_fd),
        cmocka_unit_test(test_softmax_backward_pattern),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
