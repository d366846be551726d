/*
 * test_softmax.c — masked softmax, the masks behind it (valid_lens 1-D and
 * 2-D, both causal alignments, fully masked policies), and the library's
 * status text and size arithmetic that every kernel relies on.
 *
 * The oracle is written here from the definitions: key j is visible to query
 * i iff j < valid_len and the causal rule (j <= i, or j <= i + Nk - Nq in
 * signed arithmetic) admits it; the weights of a row are exp(s_j) / Σ exp(s_k)
 * over the visible keys, computed without a shift for moderate scores.
 */
#include "check.h"

#include "attn.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- oracle */

static int visible_by_rule(const attn_mask *mask, size_t b, size_t i, size_t j,
                           size_t Nq, size_t Nk) {
    if (mask && mask->valid_lens) {
        int64_t vl = mask->per_query ? mask->valid_lens[b * Nq + i]
                                     : mask->valid_lens[b];
        if ((int64_t)j >= vl)
            return 0;
    }
    long long ii = (long long)i, jj = (long long)j;
    long long shift = (long long)Nk - (long long)Nq;
    switch (mask ? mask->causal : ATTN_CAUSAL_NONE) {
    case ATTN_CAUSAL_TOP_LEFT:
        return jj <= ii;
    case ATTN_CAUSAL_BOTTOM_RIGHT:
        return jj <= ii + shift;
    default:
        return 1;
    }
}

/* Naive masked softmax (no max shift: only for |scores| < ~300). Fully
 * masked rows follow the ZERO / UNIFORM policies. */
static void naive_softmax(double *w, const double *s, const attn_mask *mask,
                          size_t B, size_t Nq, size_t Nk) {
    for (size_t b = 0; b < B; b++) {
        for (size_t i = 0; i < Nq; i++) {
            size_t row = (b * Nq + i) * Nk;
            double sum = 0.0;
            for (size_t j = 0; j < Nk; j++) {
                w[row + j] = visible_by_rule(mask, b, i, j, Nq, Nk)
                                 ? exp(s[row + j])
                                 : 0.0;
                sum += w[row + j];
            }
            for (size_t j = 0; j < Nk; j++) {
                if (sum > 0.0)
                    w[row + j] /= sum;
                else if (mask &&
                         mask->fully_masked == ATTN_FULLY_MASKED_UNIFORM)
                    w[row + j] = 1.0 / (double)Nk;
            }
        }
    }
}

/* Scores in (-3, 3) from a fixed generator. */
static void fill_scores(double *s, size_t n, uint64_t seed) {
    attn_rng rng;
    attn_rng_seed(&rng, seed);
    for (size_t t = 0; t < n; t++)
        s[t] = 6.0 * attn_rng_uniform(&rng) - 3.0;
}

/* Masked weights are exactly 0, and each row with a visible key sums to 1
 * (tolerance 1e-15 absolute: a sum of at most 8 terms). Returns the number
 * of rows with a visible key. */
static size_t check_mask_structure(const double *w, const attn_mask *mask,
                                   size_t B, size_t Nq, size_t Nk) {
    size_t live = 0;
    for (size_t b = 0; b < B; b++) {
        for (size_t i = 0; i < Nq; i++) {
            const double *wr = w + (b * Nq + i) * Nk;
            double sum = 0.0;
            size_t visible = 0;
            for (size_t j = 0; j < Nk; j++) {
                if (visible_by_rule(mask, b, i, j, Nq, Nk)) {
                    assert_true(wr[j] > 0.0);
                    sum += wr[j];
                    visible++;
                } else {
                    assert_true(wr[j] == 0.0);
                }
            }
            if (visible) {
                assert_true(fabs(sum - 1.0) <= 1e-15);
                live++;
            }
        }
    }
    return live;
}

/* Run the library and the oracle on fill_scores data; compare to 1e-15. */
static void run_against_oracle(const attn_mask *mask, size_t B, size_t Nq,
                               size_t Nk, uint64_t seed) {
    size_t n = B * Nq * Nk;
    double *s = malloc(n * sizeof *s), *w = malloc(n * sizeof *w);
    double *ref = malloc(n * sizeof *ref);
    assert_non_null(s);
    assert_non_null(w);
    assert_non_null(ref);
    fill_scores(s, n, seed);
    attn_fault fault;
    assert_int_equal(attn_softmax_masked(w, s, mask, B, Nq, Nk, &fault),
                     ATTN_OK);
    naive_softmax(ref, s, mask, B, Nq, Nk);
    assert_close(w, ref, n, 1e-15);
    free(s);
    free(w);
    free(ref);
}

/* ------------------------------------------------------ status and sizes */

static void test_status_text(void **state) {
    (void)state;
    const attn_status all[] = {ATTN_OK,          ATTN_E_INVALID_ARG,
                               ATTN_E_OVERFLOW,  ATTN_E_NOMEM,
                               ATTN_E_VALID_LEN, ATTN_E_FULLY_MASKED,
                               ATTN_E_NONFINITE, ATTN_E_ZERO_MASS,
                               ATTN_E_BAD_STEP,  ATTN_E_TOO_FEW};
    size_t n = sizeof all / sizeof all[0];
    for (size_t a = 0; a < n; a++) {
        const char *text = attn_status_str(all[a]);
        assert_non_null(text);
        assert_true(text[0] != '\0');
        assert_string_not_equal(text, "unknown status");
        for (size_t b = 0; b < a; b++)
            assert_string_not_equal(text, attn_status_str(all[b]));
    }
    assert_string_equal(attn_status_str((attn_status)999), "unknown status");
    assert_string_equal(attn_status_str((attn_status)-1), "unknown status");
}

static void test_size_arithmetic(void **state) {
    (void)state;
    size_t out = 7;
    assert_int_equal(attn_size_mul(&out, 6, 7), ATTN_OK);
    assert_int_equal(out, 42);
    assert_int_equal(attn_size_mul(&out, 0, SIZE_MAX), ATTN_OK);
    assert_int_equal(out, 0);
    assert_int_equal(attn_size_mul(&out, SIZE_MAX, 1), ATTN_OK);
    assert_true(out == SIZE_MAX);
    out = 7;
    assert_int_equal(attn_size_mul(&out, SIZE_MAX / 2 + 1, 2), ATTN_E_OVERFLOW);
    assert_int_equal(out, 7); /* untouched on overflow */
    assert_int_equal(attn_size_mul(&out, (size_t)1 << 32, (size_t)1 << 32),
                     ATTN_E_OVERFLOW);

    assert_int_equal(attn_size_add(&out, SIZE_MAX - 1, 1), ATTN_OK);
    assert_true(out == SIZE_MAX);
    out = 7;
    assert_int_equal(attn_size_add(&out, SIZE_MAX, 1), ATTN_E_OVERFLOW);
    assert_int_equal(out, 7);

    const size_t dims[] = {2, 3, 4, 5};
    assert_int_equal(attn_size_prod(&out, dims, 4), ATTN_OK);
    assert_int_equal(out, 120);
    assert_int_equal(attn_size_prod(&out, dims, 0), ATTN_OK);
    assert_int_equal(out, 1);
    const size_t big[] = {(size_t)1 << 21, (size_t)1 << 21, (size_t)1 << 21,
                          (size_t)1 << 21};
    out = 7;
    assert_int_equal(attn_size_prod(&out, big, 4), ATTN_E_OVERFLOW);
    assert_int_equal(out, 7);
    /* a zero anywhere makes the product 0, even after a huge prefix */
    const size_t with_zero[] = {SIZE_MAX, SIZE_MAX, 0};
    assert_int_equal(attn_size_prod(&out, with_zero, 3), ATTN_OK);
    assert_int_equal(out, 0);
}

/* ----------------------------------------------------------- softmax */

static void test_softmax_no_mask(void **state) {
    (void)state;
    /* hand-checked row: softmax(0, ln 2, ln 3) = (1, 2, 3) / 6 */
    const double s[] = {0.0, log(2.0), log(3.0)};
    const double want[] = {1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0};
    double w[3];
    attn_fault fault;
    assert_int_equal(attn_softmax_masked(w, s, NULL, 1, 1, 3, &fault), ATTN_OK);
    assert_close(w, want, 3, 1e-15);
    /* adding a constant changes nothing (tolerance 1e-15) */
    const double shifted[] = {100.0, 100.0 + log(2.0), 100.0 + log(3.0)};
    assert_int_equal(attn_softmax_masked(w, shifted, NULL, 1, 1, 3, NULL),
                     ATTN_OK);
    assert_close(w, want, 3, 1e-15);
    /* a zeroed mask is no mask */
    attn_mask none;
    memset(&none, 0, sizeof none);
    run_against_oracle(&none, 3, 4, 5, 1);
    run_against_oracle(NULL, 2, 1, 7, 2);
}

static void test_valid_lens_per_example(void **state) {
    (void)state;
    /* B = 2, Nq = 3, Nk = 5: example 0 sees 2 keys, example 1 sees 4 */
    const int64_t lens[] = {2, 4};
    attn_mask mask = {.valid_lens = lens,
                      .per_query = 0,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    double s[2 * 3 * 5], w[2 * 3 * 5];
    fill_scores(s, 30, 3);
    assert_int_equal(attn_softmax_masked(w, s, &mask, 2, 3, 5, NULL), ATTN_OK);
    assert_int_equal(check_mask_structure(w, &mask, 2, 3, 5), 6);
    for (size_t i = 0; i < 3; i++) {
        assert_true(w[i * 5 + 1] > 0.0 && w[i * 5 + 2] == 0.0);
        assert_true(w[15 + i * 5 + 3] > 0.0 && w[15 + i * 5 + 4] == 0.0);
    }
    run_against_oracle(&mask, 2, 3, 5, 4);
}

static void test_valid_lens_per_query(void **state) {
    (void)state;
    /* (B, Nq) = (2, 3), flattened per example, then per query */
    const int64_t lens[] = {1, 2, 3, 5, 4, 1};
    attn_mask mask = {.valid_lens = lens,
                      .per_query = 1,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    double s[2 * 3 * 5], w[2 * 3 * 5];
    fill_scores(s, 30, 5);
    assert_int_equal(attn_softmax_masked(w, s, &mask, 2, 3, 5, NULL), ATTN_OK);
    check_mask_structure(w, &mask, 2, 3, 5);
    for (size_t row = 0; row < 6; row++) {
        size_t nonzero = 0;
        for (size_t j = 0; j < 5; j++)
            nonzero += w[row * 5 + j] != 0.0;
        assert_int_equal(nonzero, (size_t)lens[row]);
    }
    run_against_oracle(&mask, 2, 3, 5, 6);
}

static void test_causal_top_left(void **state) {
    (void)state;
    attn_mask mask = {.valid_lens = NULL,
                      .per_query = 0,
                      .causal = ATTN_CAUSAL_TOP_LEFT,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    /* Nq < Nk: query i sees keys 0 ... i */
    double s[3 * 5], w[3 * 5];
    fill_scores(s, 15, 7);
    assert_int_equal(attn_softmax_masked(w, s, &mask, 1, 3, 5, NULL), ATTN_OK);
    check_mask_structure(w, &mask, 1, 3, 5);
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < 5; j++)
            assert_int_equal(w[i * 5 + j] != 0.0, j <= i);
    }
    /* Nq > Nk: queries 2 ... 4 see all 3 keys */
    double s2[5 * 3], w2[5 * 3];
    fill_scores(s2, 15, 8);
    assert_int_equal(attn_softmax_masked(w2, s2, &mask, 1, 5, 3, NULL),
                     ATTN_OK);
    assert_int_equal(check_mask_structure(w2, &mask, 1, 5, 3), 5);
    for (size_t i = 0; i < 5; i++) {
        for (size_t j = 0; j < 3; j++)
            assert_int_equal(w2[i * 3 + j] != 0.0, j <= i);
    }
    run_against_oracle(&mask, 2, 4, 6, 9);
    run_against_oracle(&mask, 2, 6, 4, 10);
}

static void test_causal_bottom_right(void **state) {
    (void)state;
    attn_mask mask = {.valid_lens = NULL,
                      .per_query = 0,
                      .causal = ATTN_CAUSAL_BOTTOM_RIGHT,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    /* Nq = 3, Nk = 5: query i sees keys 0 ... i + 2 (the last query sees
     * every key, as with a KV cache) */
    double s[3 * 5], w[3 * 5];
    fill_scores(s, 15, 11);
    assert_int_equal(attn_softmax_masked(w, s, &mask, 1, 3, 5, NULL), ATTN_OK);
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < 5; j++)
            assert_int_equal(w[i * 5 + j] != 0.0, j <= i + 2);
    }
    /* Nq = 5, Nk = 3: query i sees keys j <= i - 2; queries 0 and 1 none */
    double s2[5 * 3], w2[5 * 3];
    fill_scores(s2, 15, 12);
    assert_int_equal(attn_softmax_masked(w2, s2, &mask, 1, 5, 3, NULL),
                     ATTN_OK);
    assert_int_equal(check_mask_structure(w2, &mask, 1, 5, 3), 3);
    for (size_t j = 0; j < 6; j++)
        assert_true(w2[j] == 0.0);
    assert_true(w2[2 * 3 + 0] == 1.0); /* one visible key: weight exactly 1 */
    /* Nq == Nk: same as top-left */
    attn_mask top = mask;
    top.causal = ATTN_CAUSAL_TOP_LEFT;
    double s3[4 * 4], w3[4 * 4], w4[4 * 4];
    fill_scores(s3, 16, 13);
    assert_int_equal(attn_softmax_masked(w3, s3, &mask, 1, 4, 4, NULL),
                     ATTN_OK);
    assert_int_equal(attn_softmax_masked(w4, s3, &top, 1, 4, 4, NULL), ATTN_OK);
    assert_memory_equal(w3, w4, sizeof w3);
    run_against_oracle(&mask, 2, 4, 7, 14);
    run_against_oracle(&mask, 2, 7, 4, 15);
}

static void test_causal_and_valid_lens(void **state) {
    (void)state;
    /* AND of both: example 0 (len 2) under top-left, Nq = 4, Nk = 4 */
    const int64_t lens[] = {2, 4};
    attn_mask mask = {.valid_lens = lens,
                      .per_query = 0,
                      .causal = ATTN_CAUSAL_TOP_LEFT,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    double s[2 * 4 * 4], w[2 * 4 * 4];
    fill_scores(s, 32, 16);
    assert_int_equal(attn_softmax_masked(w, s, &mask, 2, 4, 4, NULL), ATTN_OK);
    check_mask_structure(w, &mask, 2, 4, 4);
    for (size_t i = 0; i < 4; i++) {
        for (size_t j = 0; j < 4; j++)
            assert_int_equal(w[i * 4 + j] != 0.0, j <= i && j < 2);
    }
    const int64_t per_query[] = {3, 1, 2, 6, 0, 5};
    attn_mask br = {.valid_lens = per_query,
                    .per_query = 1,
                    .causal = ATTN_CAUSAL_BOTTOM_RIGHT,
                    .fully_masked = ATTN_FULLY_MASKED_UNIFORM};
    run_against_oracle(&br, 2, 3, 6, 17);
    attn_mask tl = br;
    tl.causal = ATTN_CAUSAL_TOP_LEFT;
    run_against_oracle(&tl, 2, 3, 6, 18);
}

static void test_fully_masked_policies(void **state) {
    (void)state;
    /* B = 2, Nq = 2, Nk = 3; example 0 has valid_len 0 */
    const int64_t lens[] = {0, 2};
    double s[2 * 2 * 3], w[2 * 2 * 3];
    fill_scores(s, 12, 19);
    attn_fault fault;

    attn_mask zero = {.valid_lens = lens,
                      .per_query = 0,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    assert_int_equal(attn_softmax_masked(w, s, &zero, 2, 2, 3, &fault),
                     ATTN_OK);
    for (size_t t = 0; t < 6; t++)
        assert_true(w[t] == 0.0);
    assert_int_equal(check_mask_structure(w, &zero, 2, 2, 3), 2);

    attn_mask uniform = zero;
    uniform.fully_masked = ATTN_FULLY_MASKED_UNIFORM;
    assert_int_equal(attn_softmax_masked(w, s, &uniform, 2, 2, 3, &fault),
                     ATTN_OK);
    for (size_t t = 0; t < 6; t++)
        assert_true(w[t] == 1.0 / 3.0);
    assert_true(w[6 + 2] == 0.0 && w[9 + 2] == 0.0);

    attn_mask error = zero;
    error.fully_masked = ATTN_FULLY_MASKED_ERROR;
    fault.index = 99;
    fault.by_causal = 99;
    assert_int_equal(attn_softmax_masked(w, s, &error, 2, 2, 3, &fault),
                     ATTN_E_FULLY_MASKED);
    assert_int_equal(fault.index, 0);
    assert_int_equal(fault.by_causal, 0);

    /* per-query lengths: the first empty row is b = 1, i = 1 -> 1*3 + 1 */
    const int64_t per_query[] = {1, 1, 1, 1, 0, 1};
    attn_mask pq = {.valid_lens = per_query,
                    .per_query = 1,
                    .causal = ATTN_CAUSAL_NONE,
                    .fully_masked = ATTN_FULLY_MASKED_ERROR};
    double s2[2 * 3 * 2], w2[2 * 3 * 2];
    fill_scores(s2, 12, 20);
    assert_int_equal(attn_softmax_masked(w2, s2, &pq, 2, 3, 2, &fault),
                     ATTN_E_FULLY_MASKED);
    assert_int_equal(fault.index, 4);
    assert_int_equal(fault.by_causal, 0);

    /* only the causal rule empties it: bottom-right with Nq = 3 > Nk = 2,
     * valid_len 2 -> row 0 of example 0, by_causal */
    const int64_t full[] = {2, 2};
    attn_mask causal = {.valid_lens = full,
                        .per_query = 0,
                        .causal = ATTN_CAUSAL_BOTTOM_RIGHT,
                        .fully_masked = ATTN_FULLY_MASKED_ERROR};
    assert_int_equal(attn_softmax_masked(w2, s2, &causal, 2, 3, 2, &fault),
                     ATTN_E_FULLY_MASKED);
    assert_int_equal(fault.index, 0);
    assert_int_equal(fault.by_causal, 1);
    /* no valid_lens at all: still by_causal */
    causal.valid_lens = NULL;
    assert_int_equal(attn_softmax_masked(w2, s2, &causal, 2, 3, 2, &fault),
                     ATTN_E_FULLY_MASKED);
    assert_int_equal(fault.by_causal, 1);
    /* both empty it: the valid_len is to blame */
    const int64_t both[] = {0, 0, 0, 2, 2, 2};
    attn_mask blame = {.valid_lens = both,
                       .per_query = 1,
                       .causal = ATTN_CAUSAL_BOTTOM_RIGHT,
                       .fully_masked = ATTN_FULLY_MASKED_ERROR};
    assert_int_equal(attn_softmax_masked(w2, s2, &blame, 2, 3, 2, &fault),
                     ATTN_E_FULLY_MASKED);
    assert_int_equal(fault.index, 0);
    assert_int_equal(fault.by_causal, 0);
    /* the same rows under ZERO and UNIFORM */
    causal.fully_masked = ATTN_FULLY_MASKED_ZERO;
    assert_int_equal(attn_softmax_masked(w2, s2, &causal, 2, 3, 2, &fault),
                     ATTN_OK);
    assert_true(w2[0] == 0.0 && w2[1] == 0.0 && w2[2] == 1.0 && w2[3] == 0.0);
    causal.fully_masked = ATTN_FULLY_MASKED_UNIFORM;
    assert_int_equal(attn_softmax_masked(w2, s2, &causal, 2, 3, 2, &fault),
                     ATTN_OK);
    assert_true(w2[0] == 0.5 && w2[1] == 0.5 && w2[6] == 0.5);
}

static void test_valid_lens_out_of_range(void **state) {
    (void)state;
    double s[2 * 3 * 5], w[2 * 3 * 5];
    fill_scores(s, 30, 21);
    attn_fault fault;

    const int64_t negative[] = {-1, 2};
    attn_mask mask = {.valid_lens = negative,
                      .per_query = 0,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    assert_int_equal(attn_softmax_masked(w, s, &mask, 2, 3, 5, &fault),
                     ATTN_E_VALID_LEN);
    assert_int_equal(fault.index, 0);
    assert_int_equal(attn_mask_check(&mask, 2, 3, 5, &fault), ATTN_E_VALID_LEN);
    assert_int_equal(fault.index, 0);

    const int64_t too_long[] = {5, 6};
    mask.valid_lens = too_long;
    assert_int_equal(attn_softmax_masked(w, s, &mask, 2, 3, 5, &fault),
                     ATTN_E_VALID_LEN);
    assert_int_equal(fault.index, 1);

    const int64_t per_query[] = {0, 1, 5, 2, 3, 7};
    attn_mask pq = {.valid_lens = per_query,
                    .per_query = 1,
                    .causal = ATTN_CAUSAL_TOP_LEFT,
                    .fully_masked = ATTN_FULLY_MASKED_ERROR};
    assert_int_equal(attn_softmax_masked(w, s, &pq, 2, 3, 5, &fault),
                     ATTN_E_VALID_LEN); /* checked before any row */
    assert_int_equal(fault.index, 5);
    assert_int_equal(attn_mask_check(&pq, 2, 3, 5, &fault), ATTN_E_VALID_LEN);
    assert_int_equal(fault.index, 5);

    const int64_t huge[] = {INT64_MIN, INT64_MAX};
    mask.valid_lens = huge;
    assert_int_equal(attn_mask_check(&mask, 2, 3, 5, &fault), ATTN_E_VALID_LEN);
    assert_int_equal(fault.index, 0);

    const int64_t edges[] = {0, 5};
    mask.valid_lens = edges;
    assert_int_equal(attn_mask_check(&mask, 2, 3, 5, &fault), ATTN_OK);
    assert_int_equal(attn_mask_check(NULL, 2, 3, 5, &fault), ATTN_OK);
}

static void test_extreme_scores(void **state) {
    (void)state;
    double w[4];
    /* ±1e300 and ±1e308 stay finite: exact one-hot or exact halves */
    const double big[] = {1e300, -1e300, 0.0};
    assert_int_equal(attn_softmax_masked(w, big, NULL, 1, 1, 3, NULL), ATTN_OK);
    assert_true(w[0] == 1.0 && w[1] == 0.0 && w[2] == 0.0);
    const double edge[] = {-1e308, 1e308, 1e308, -1e308};
    assert_int_equal(attn_softmax_masked(w, edge, NULL, 1, 1, 4, NULL),
                     ATTN_OK);
    assert_true(w[0] == 0.0 && w[1] == 0.5 && w[2] == 0.5 && w[3] == 0.0);
    const double all_low[] = {-1e308, -1e308, -1e308, -1e308};
    assert_int_equal(attn_softmax_masked(w, all_low, NULL, 1, 1, 4, NULL),
                     ATTN_OK);
    for (size_t j = 0; j < 4; j++)
        assert_true(w[j] == 0.25);
    const double largest[] = {1.7976931348623157e308, -1.7976931348623157e308};
    assert_int_equal(attn_softmax_masked(w, largest, NULL, 1, 1, 2, NULL),
                     ATTN_OK);
    assert_true(w[0] == 1.0 && w[1] == 0.0);

    /* a visible score far below -1e6 still beats masked keys */
    const int64_t one[] = {1};
    attn_mask mask = {.valid_lens = one,
                      .per_query = 0,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    const double low[] = {-1e7, 5.0, 0.0};
    assert_int_equal(attn_softmax_masked(w, low, &mask, 1, 1, 3, NULL),
                     ATTN_OK);
    assert_true(w[0] == 1.0 && w[1] == 0.0 && w[2] == 0.0);
    const double lowest[] = {-1e300, 1e300, 1e300};
    assert_int_equal(attn_softmax_masked(w, lowest, &mask, 1, 1, 3, NULL),
                     ATTN_OK);
    assert_true(w[0] == 1.0 && w[1] == 0.0 && w[2] == 0.0);
    /* two visible scores near -1e6 keep their relative weight (1e-15) */
    const int64_t two[] = {2};
    mask.valid_lens = two;
    const double near[] = {-2e6, -2e6 + log(3.0), 1e6};
    assert_int_equal(attn_softmax_masked(w, near, &mask, 1, 1, 3, NULL),
                     ATTN_OK);
    const double want[] = {0.25, 0.75, 0.0};
    assert_close(w, want, 3, 1e-9); /* log(3) at -2e6 keeps ~1e-10 */
    assert_true(w[2] == 0.0);

    /* Nk = 1: weight exactly 1 */
    const double single[] = {-1e300};
    assert_int_equal(attn_softmax_masked(w, single, NULL, 1, 1, 1, NULL),
                     ATTN_OK);
    assert_true(w[0] == 1.0);
}

static void test_nonfinite_scores(void **state) {
    (void)state;
    double w[3];
    attn_fault fault;
    const double inf_row[] = {0.0, INFINITY, 1.0};
    assert_int_equal(attn_softmax_masked(w, inf_row, NULL, 1, 1, 3, &fault),
                     ATTN_E_NONFINITE);
    assert_int_equal(fault.index, 1);
    const double nan_row[] = {0.0, 1.0, NAN};
    assert_int_equal(attn_softmax_masked(w, nan_row, NULL, 1, 1, 3, &fault),
                     ATTN_E_NONFINITE);
    assert_int_equal(fault.index, 2);
    /* masked scores are never read */
    const int64_t two[] = {2};
    attn_mask mask = {.valid_lens = two,
                      .per_query = 0,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    const double masked_inf[] = {0.0, 0.0, -INFINITY};
    assert_int_equal(attn_softmax_masked(w, masked_inf, &mask, 1, 1, 3, &fault),
                     ATTN_OK);
    assert_true(w[0] == 0.5 && w[1] == 0.5 && w[2] == 0.0);
}

/* Enough scores (2 · 300 · 512 = 307,200) that the rows are shared out
 * over the cores (two halves on two): each row has the bits of that row
 * done alone, and of several failures the first in row order is the one
 * reported. */
static void test_large_over_threads(void **state) {
    (void)state;
    enum { B = 2, NQ = 300, NK = 512, N = B * NQ * NK };
    double *s = malloc(N * sizeof *s), *w = malloc(N * sizeof *w);
    int64_t *lens = malloc(B * NQ * sizeof *lens);
    assert_true(s && w && lens);
    fill_scores(s, N, 23);
    for (size_t r = 0; r < B * NQ; r++)
        lens[r] = (int64_t)((r * 37) % (NK + 1)); /* some 0: uniform rows */
    attn_mask mask = {.valid_lens = lens,
                      .per_query = 1,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_UNIFORM};
    assert_int_equal(attn_softmax_masked(w, s, &mask, B, NQ, NK, NULL),
                     ATTN_OK);
    double alone[NK];
    for (size_t r = 0; r < B * NQ; r++) {
        attn_mask one = {.valid_lens = &lens[r],
                         .per_query = 0,
                         .causal = ATTN_CAUSAL_NONE,
                         .fully_masked = ATTN_FULLY_MASKED_UNIFORM};
        assert_int_equal(
            attn_softmax_masked(alone, s + r * NK, &one, 1, 1, NK, NULL),
            ATTN_OK);
        assert_memory_equal(alone, w + r * NK, sizeof alone);
    }

    /* failures in both halves: the earlier row is reported */
    attn_fault fault;
    mask.fully_masked = ATTN_FULLY_MASKED_ERROR;
    lens[0] = lens[1] = 1; /* rows 0 and 1 would be empty: no longer */
    for (size_t r = 2; r < B * NQ; r++)
        lens[r] = NK;
    lens[555] = 0;              /* fully masked, in the second half */
    s[250 * NK + 7] = NAN;      /* not finite, in the first half */
    s[590 * NK + 3] = INFINITY; /* not finite, later in the second */
    assert_int_equal(attn_softmax_masked(w, s, &mask, B, NQ, NK, &fault),
                     ATTN_E_NONFINITE);
    assert_int_equal(fault.index, 250 * NK + 7);
    s[250 * NK + 7] = 0.0;
    assert_int_equal(attn_softmax_masked(w, s, &mask, B, NQ, NK, &fault),
                     ATTN_E_FULLY_MASKED);
    assert_int_equal(fault.index, 555);
    assert_int_equal(fault.by_causal, 0);
    free(s);
    free(w);
    free(lens);
}

static void test_in_place(void **state) {
    (void)state;
    const int64_t lens[] = {3, 1, 4, 2};
    attn_mask mask = {.valid_lens = lens,
                      .per_query = 1,
                      .causal = ATTN_CAUSAL_BOTTOM_RIGHT,
                      .fully_masked = ATTN_FULLY_MASKED_UNIFORM};
    double s[2 * 2 * 4], w[2 * 2 * 4], inplace[2 * 2 * 4];
    fill_scores(s, 16, 22);
    memcpy(inplace, s, sizeof s);
    assert_int_equal(attn_softmax_masked(w, s, &mask, 2, 2, 4, NULL), ATTN_OK);
    assert_int_equal(
        attn_softmax_masked(inplace, inplace, &mask, 2, 2, 4, NULL), ATTN_OK);
    assert_memory_equal(w, inplace, sizeof w);
}

static void test_invalid_arguments(void **state) {
    (void)state;
    double s[4] = {0}, w[4];
    assert_int_equal(attn_softmax_masked(NULL, s, NULL, 1, 1, 4, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_softmax_masked(w, NULL, NULL, 1, 1, 4, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_softmax_masked(w, s, NULL, 0, 1, 4, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_softmax_masked(w, s, NULL, 1, 0, 4, NULL),
                     ATTN_E_INVALID_ARG);
    assert_int_equal(attn_softmax_masked(w, s, NULL, 1, 1, 0, NULL),
                     ATTN_E_INVALID_ARG);
    /* the sizes overflow before any element is touched */
    assert_int_equal(attn_softmax_masked(w, s, NULL, SIZE_MAX / 2, 3, 1, NULL),
                     ATTN_E_OVERFLOW);
    assert_int_equal(attn_softmax_masked(w, s, NULL, (size_t)1 << 33,
                                         (size_t)1 << 33, 1, NULL),
                     ATTN_E_OVERFLOW);
    attn_mask bad = {.valid_lens = NULL,
                     .per_query = 0,
                     .causal = (attn_causal)3,
                     .fully_masked = ATTN_FULLY_MASKED_ZERO};
    assert_int_equal(attn_softmax_masked(w, s, &bad, 1, 1, 4, NULL),
                     ATTN_E_INVALID_ARG);
    bad.causal = ATTN_CAUSAL_NONE;
    bad.fully_masked = (attn_fully_masked)7;
    assert_int_equal(attn_softmax_masked(w, s, &bad, 1, 1, 4, NULL),
                     ATTN_E_INVALID_ARG);
    bad.fully_masked = ATTN_FULLY_MASKED_ZERO;
    bad.per_query = 2;
    assert_int_equal(attn_softmax_masked(w, s, &bad, 1, 1, 4, NULL),
                     ATTN_E_INVALID_ARG);
}

/* attn_mask_visible and the softmax's zero pattern agree with the rule on
 * 300 random masks drawn from the library's generator. */
static void test_visible_matches_rule(void **state) {
    (void)state;
    attn_rng rng;
    attn_rng_seed(&rng, 23);
    size_t checked = 0;
    for (int round = 0; round < 300; round++) {
        size_t B = 1 + (size_t)(attn_rng_uniform(&rng) * 3);
        size_t Nq = 1 + (size_t)(attn_rng_uniform(&rng) * 6);
        size_t Nk = 1 + (size_t)(attn_rng_uniform(&rng) * 6);
        int per_query = attn_rng_uniform(&rng) < 0.5;
        int with_lens = attn_rng_uniform(&rng) < 0.75;
        int64_t lens[3 * 6];
        size_t count = per_query ? B * Nq : B;
        for (size_t t = 0; t < count; t++)
            lens[t] = (int64_t)(attn_rng_uniform(&rng) * (double)(Nk + 1));
        attn_mask mask = {.valid_lens = with_lens ? lens : NULL,
                          .per_query = per_query,
                          .causal = (attn_causal)(attn_rng_next(&rng) % 3),
                          .fully_masked =
                              (attn_fully_masked)(attn_rng_next(&rng) % 2)};
        for (size_t b = 0; b < B; b++)
            for (size_t i = 0; i < Nq; i++)
                for (size_t j = 0; j < Nk; j++) {
                    assert_int_equal(attn_mask_visible(&mask, b, i, j, Nq, Nk),
                                     visible_by_rule(&mask, b, i, j, Nq, Nk));
                    checked++;
                }
        run_against_oracle(&mask, B, Nq, Nk, 1000 + (uint64_t)round);
    }
    assert_int_equal(attn_mask_visible(NULL, 0, 0, 0, 1, 1), 1);
    print_message("# %zu (b, i, j) visibility checks\n", checked);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_text),
        cmocka_unit_test(test_size_arithmetic),
        cmocka_unit_test(test_softmax_no_mask),
        cmocka_unit_test(test_valid_lens_per_example),
        cmocka_unit_test(test_valid_lens_per_query),
        cmocka_unit_test(test_causal_top_left),
        cmocka_unit_test(test_causal_bottom_right),
        cmocka_unit_test(test_causal_and_valid_lens),
        cmocka_unit_test(test_fully_masked_policies),
        cmocka_unit_test(test_valid_lens_out_of_range),
        cmocka_unit_test(test_extreme_scores),
        cmocka_unit_test(test_nonfinite_scores),
        cmocka_unit_test(test_large_over_threads),
        cmocka_unit_test(test_in_place),
        cmocka_unit_test(test_invalid_arguments),
        cmocka_unit_test(test_visible_matches_rule),
    };
    return cmocka_run_group_tests_name("softmax", tests, NULL, NULL);
}
