/*
 * test_api_diagnostics.c — api/routes/diagnostics.c on hand-made rows whose
 * answers are worked out by hand (docs/contract.md section 8): entropy in nats,
 * peak weight and its lowest index, the three warnings and their thresholds,
 * fully masked rows under every policy, the request-wide score statistics
 * (population std, masked scores never read), and the written object: row
 * index paths for (B, Nq), (B, H, Nq) and unbatched shapes, truncation
 * after 100 warnings, integers printed exactly under "precision".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <math.h>

#include "diagnostics.h"
#include "result_json.h"

/* |got − want| <= tol, reporting both values. */
#define near(got, want, tol)                                                   \
    do {                                                                       \
        double got_ = (got), want_ = (want);                                   \
        if (!(fabs(got_ - want_) <= (tol)))                                    \
            fail_msg("%s = %.17g, want %.17g (tolerance %g)", #got, got_,      \
                     want_, (double)(tol));                                    \
    } while (0)

/* A diagnostics object with buffers for B·H·Nq rows. */
typedef struct {
    api_arena arena;
    api_diagnostics d;
} fixture;

static void setup(fixture *f, size_t B, size_t H, size_t Nq, size_t Nk) {
    memset(f, 0, sizeof *f);
    api_arena_plan(&f->arena, api_diagnostics_slots(B * H * Nq));
    assert_int_equal(api_arena_alloc(&f->arena), 0);
    api_diagnostics_take(&f->d, &f->arena, B, H, Nq, Nk);
    assert_non_null(f->d.warning);
}

static json_t *written(const fixture *f, int heads, int batched, int precision,
                       int flat) {
    api_buf out = {0};
    api_tensor_format fmt = {flat, precision, 0};
    api_result r;
    api_problem p = {0};
    api_result_init(&r, &fmt, API_E_INVALID_VALUE, NULL);
    api_diagnostics_result(&r, &f->d, heads, batched);
    assert_int_equal(api_result_write_json(&r, &out, &p), 0);
    json_error_t err;
    json_t *j = json_loadb(out.data, out.len, 0, &err);
    if (!j)
        fail_msg("not JSON (%s): %.*s", err.text, (int)out.len, out.data);
    api_buf_free(&out);
    json_t *d = json_incref(json_object_get(j, "diagnostics"));
    json_decref(j);
    assert_non_null(d);
    return d;
}

static double num(const json_t *j) {
    assert_true(json_is_number(j));
    return json_number_value(j);
}

/* Three rows of four keys, every key visible:
 *   [0.5, 0.25, 0.25, 0]     entropy 1.5 ln 2, no warning (< 0.99 ln 4)
 *   [1/4, 1/4, 1/4, 1/4]     entropy ln 4: near_uniform
 *   [0.995, 0.005, 0, 0]     saturated */
static void test_rows_by_hand(void **state) {
    (void)state;
    fixture f;
    setup(&f, 1, 1, 3, 4);
    const double w[12] = {0.5,  0.25, 0.25,  0.0,   0.25, 0.25,
                          0.25, 0.25, 0.995, 0.005, 0.0,  0.0};
    const double s[12] = {1, 2, 3, 4, 0, 0, 0, 0, -1, 1, 2, 3};
    api_diagnostics_compute(&f.d, s, w, NULL);
    near(f.d.entropy[0], 1.5 * log(2.0), 1e-15);
    near(f.d.entropy[1], log(4.0), 1e-15);
    near(f.d.entropy[2], -(0.995 * log(0.995) + 0.005 * log(0.005)), 1e-15);
    near(f.d.max_weight[0], 0.5, 0);
    near(f.d.argmax[0], 0, 0);
    near(f.d.argmax[1], 0, 0); /* four-way tie: lowest */
    near(f.d.argmax[2], 0, 0);
    assert_int_equal(f.d.warning[0], API_DIAG_NONE);
    assert_int_equal(f.d.warning[1], API_DIAG_NEAR_UNIFORM);
    assert_int_equal(f.d.warning[2], API_DIAG_SATURATED);
    /* 12 scores: sum 15, mean 1.25; squares about the mean:
     * (0.0625 + 0.5625 + 3.0625 + 7.5625) + 4 · 1.5625
     * + (5.0625 + 0.0625 + 0.5625 + 3.0625) = 26.25 → std sqrt(26.25/12) */
    assert_int_equal(f.d.n_scores, 12);
    near(f.d.min, -1, 0);
    near(f.d.max, 4, 0);
    near(f.d.mean, 1.25, 1e-15);
    near(f.d.std, sqrt(26.25 / 12.0), 1e-15);
    api_arena_free(&f.arena);
}

/* Thresholds: max weight exactly 0.99 is not saturated; entropy just
 * under 0.99 ln(visible) is not near_uniform; one visible key cannot be
 * near_uniform (it is saturated: weight 1). */
static void test_thresholds(void **state) {
    (void)state;
    fixture f;
    setup(&f, 1, 1, 3, 2);
    /* two keys: entropy(p) = 0.99 ln 2 at p ≈ 0.4412 (solved below) */
    double lo = 0.0, hi = 0.5;
    for (int i = 0; i < 200; i++) {
        double p = (lo + hi) / 2;
        double e = -(p * log(p) + (1 - p) * log(1 - p));
        if (e < 0.99 * log(2.0))
            lo = p;
        else
            hi = p;
    }
    const double w[6] = {0.99, 0.01, lo, 1 - lo, 1.0, 0.0};
    const double s[6] = {0};
    const int64_t lens[3] = {2, 2, 1}; /* row 2 sees key 0 only */
    attn_mask mask = {.valid_lens = lens,
                      .per_query = 1,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    /* per_query lens are (B, Nq) = (1, 3) */
    api_diagnostics_compute(&f.d, s, w, &mask);
    assert_int_equal(f.d.warning[0], API_DIAG_NONE); /* 0.99 is not > 0.99 */
    assert_true(f.d.entropy[1] < 0.99 * log(2.0));
    assert_int_equal(f.d.warning[1], API_DIAG_NONE);
    assert_int_equal(f.d.warning[2], API_DIAG_SATURATED);
    near(f.d.entropy[2], 0, 0);
    /* hi is on the other side of the threshold */
    const double w2[6] = {0.5, 0.5, hi, 1 - hi, 1.0, 0.0};
    api_diagnostics_compute(&f.d, s, w2, &mask);
    assert_int_equal(f.d.warning[0], API_DIAG_NEAR_UNIFORM);
    assert_int_equal(f.d.warning[1], API_DIAG_NEAR_UNIFORM);
    api_arena_free(&f.arena);
}

/* A fully masked row is entropy 0, max_weight 0, argmax −1 and
 * fully_masked whatever its weights say (1/Nk under "uniform"); masked
 * scores are never read (NaN and a huge value there change nothing). */
static void test_fully_masked_rows_and_masked_scores(void **state) {
    (void)state;
    fixture f;
    setup(&f, 2, 1, 2, 3);
    const double third = 1.0 / 3.0;
    const double w[12] = {third, third, third, 0.2,   0.8,   0.0,
                          1.0,   0.0,   0.0,   third, third, third};
    const double s[12] = {NAN, 1e300,    -7,  1,   3,   NAN,
                          2,   INFINITY, NAN, NAN, NAN, NAN};
    const int64_t lens[4] = {0, 2, 1, 0};
    attn_mask mask = {.valid_lens = lens,
                      .per_query = 1,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_UNIFORM};
    api_diagnostics_compute(&f.d, s, w, &mask);
    const double entropy[4] = {0, -(0.2 * log(0.2) + 0.8 * log(0.8)), 0, 0};
    const double peak[4] = {0, 0.8, 1, 0};
    const double arg[4] = {-1, 1, 0, -1};
    const unsigned char warn[4] = {API_DIAG_FULLY_MASKED, API_DIAG_NONE,
                                   API_DIAG_SATURATED, API_DIAG_FULLY_MASKED};
    for (int r = 0; r < 4; r++) {
        near(f.d.entropy[r], entropy[r], 1e-15);
        near(f.d.max_weight[r], peak[r], 0);
        near(f.d.argmax[r], arg[r], 0);
        assert_int_equal(f.d.warning[r], warn[r]);
    }
    /* visible scores: 1, 3 and 2 */
    assert_int_equal(f.d.n_scores, 3);
    near(f.d.min, 1, 0);
    near(f.d.max, 3, 0);
    near(f.d.mean, 2, 0);
    near(f.d.std, sqrt(2.0 / 3.0), 1e-15);
    api_arena_free(&f.arena);
}

/* Causal masks count visible keys per row (bottom_right, Nq 2, Nk 3:
 * row 0 sees keys 0–1, row 1 all three): [0.5, 0.5] over 2 visible keys
 * is near_uniform (it would not be over 3: ln 2 < 0.99 ln 3). */
static void test_causal_visible_counts(void **state) {
    (void)state;
    fixture f;
    setup(&f, 1, 1, 2, 3);
    const double t = 1.0 / 3.0;
    const double w[6] = {0.5, 0.5, 0.0, t, t, t};
    const double s[6] = {1, 2, 99, 3, 4, 5};
    attn_mask mask = {.valid_lens = NULL,
                      .per_query = 0,
                      .causal = ATTN_CAUSAL_BOTTOM_RIGHT,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    api_diagnostics_compute(&f.d, s, w, &mask);
    assert_int_equal(f.d.warning[0], API_DIAG_NEAR_UNIFORM);
    assert_int_equal(f.d.warning[1], API_DIAG_NEAR_UNIFORM);
    assert_int_equal(f.d.n_scores, 5);
    near(f.d.mean, 3, 0);
    near(f.d.max, 5, 0);
    near(f.d.std, sqrt(2.0), 1e-15);
    api_arena_free(&f.arena);
}

/* Eight rows of two keys in (b, h, q) order (B = H = Nq = 2):
 *   (0,0,0) [0.6, 0.4]      entropy 0.673 < 0.99 ln 2 = 0.686: none
 *   (0,0,1) [0.999, 0.001]  saturated
 *   (0,1,0) [0.3, 0.7]      none
 *   (0,1,1) [0.5, 0.5]      near_uniform
 *   (1,·,0)                 fully masked (valid_lens[1][0] = 0, every head)
 *   (1,0,1) [0.3, 0.7], (1,1,1) [0.2, 0.8]   none */
static const double head_w[16] = {0.6, 0.4, 0.999, 0.001, 0.3, 0.7, 0.5, 0.5,
                                  0.5, 0.5, 0.3,   0.7,   0.5, 0.5, 0.2, 0.8};
static const double head_s[16] = {0};

static void assert_row(const json_t *warning, const char *code,
                       const long long *row, size_t n) {
    assert_string_equal(json_string_value(json_object_get(warning, "code")),
                        code);
    const json_t *r = json_object_get(warning, "row");
    assert_int_equal(json_array_size(r), n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(json_integer_value(json_array_get(r, i)), row[i]);
}

static const json_t *at3(const json_t *t, size_t i, size_t j, size_t k) {
    return json_array_get(json_array_get(json_array_get(t, i), j), k);
}

static void test_write_multihead_rows(void **state) {
    (void)state;
    fixture f;
    setup(&f, 2, 2, 2, 2);
    const int64_t lens[4] = {2, 2, 0, 2}; /* (B, Nq) */
    attn_mask mask = {.valid_lens = lens,
                      .per_query = 1,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    api_diagnostics_compute(&f.d, head_s, head_w, &mask);
    json_t *d = written(&f, 1, 1, 0, 0);
    const json_t *ent = json_object_get(d, "entropy");
    assert_int_equal(json_array_size(ent), 2);
    assert_int_equal(json_array_size(json_array_get(ent, 1)), 2);
    assert_int_equal(json_array_size(json_array_get(json_array_get(ent, 1), 1)),
                     2);
    near(num(at3(ent, 0, 1, 1)), log(2.0), 1e-15);
    near(num(at3(ent, 1, 0, 0)), 0, 0);
    const json_t *arg = json_object_get(d, "argmax");
    assert_int_equal(json_integer_value(at3(arg, 1, 0, 0)), -1);
    assert_int_equal(json_integer_value(at3(arg, 1, 1, 0)), -1);
    assert_int_equal(json_integer_value(at3(arg, 0, 1, 0)), 1);
    assert_int_equal(json_integer_value(at3(arg, 0, 1, 1)), 0);
    near(num(at3(json_object_get(d, "max_weight"), 0, 0, 1)), 0.999, 0);
    const json_t *warn = json_object_get(d, "warnings");
    assert_int_equal(json_array_size(warn), 4);
    assert_row(json_array_get(warn, 0), "saturated", (long long[]){0, 0, 1}, 3);
    assert_row(json_array_get(warn, 1), "near_uniform", (long long[]){0, 1, 1},
               3);
    assert_row(json_array_get(warn, 2), "fully_masked", (long long[]){1, 0, 0},
               3);
    assert_row(json_array_get(warn, 3), "fully_masked", (long long[]){1, 1, 0},
               3);
    /* nothing visible is all zeros here: statistics of eight zeros */
    const json_t *sc = json_object_get(d, "scores");
    near(num(json_object_get(sc, "std")), 0, 0);
    json_decref(d);
    api_arena_free(&f.arena);
}

/* The same first four rows as one unbatched example: rows [h, q], shapes
 * (H, Nq); and as dot attention's (B, Nq) = (2, 2): rows [b, q]. */
static void test_write_unbatched_and_dot_rows(void **state) {
    (void)state;
    fixture f;
    setup(&f, 1, 2, 2, 2);
    api_diagnostics_compute(&f.d, head_s, head_w, NULL);
    json_t *d = written(&f, 1, 0, 0, 0);
    assert_int_equal(json_array_size(json_object_get(d, "max_weight")), 2);
    assert_true(json_is_number(json_array_get(
        json_array_get(json_object_get(d, "max_weight"), 1), 1)));
    const json_t *warn = json_object_get(d, "warnings");
    assert_int_equal(json_array_size(warn), 2);
    assert_row(json_array_get(warn, 0), "saturated", (long long[]){0, 1}, 2);
    assert_row(json_array_get(warn, 1), "near_uniform", (long long[]){1, 1}, 2);
    json_decref(d);
    api_arena_free(&f.arena);

    setup(&f, 2, 1, 2, 2);
    api_diagnostics_compute(&f.d, head_s, head_w, NULL);
    d = written(&f, 0, 1, 0, 0);
    warn = json_object_get(d, "warnings");
    assert_int_equal(json_array_size(warn), 2);
    assert_row(json_array_get(warn, 0), "saturated", (long long[]){0, 1}, 2);
    assert_row(json_array_get(warn, 1), "near_uniform", (long long[]){1, 1}, 2);
    assert_int_equal(json_array_size(json_object_get(d, "entropy")), 2);
    json_decref(d);

    /* one unbatched dot example: rows [q], entropy (Nq) */
    api_arena_free(&f.arena);
    setup(&f, 1, 1, 4, 2);
    api_diagnostics_compute(&f.d, head_s, head_w, NULL);
    d = written(&f, 0, 0, 0, 0);
    assert_int_equal(json_array_size(json_object_get(d, "entropy")), 4);
    assert_true(
        json_is_number(json_array_get(json_object_get(d, "argmax"), 3)));
    warn = json_object_get(d, "warnings");
    assert_row(json_array_get(warn, 0), "saturated", (long long[]){1}, 1);
    assert_row(json_array_get(warn, 1), "near_uniform", (long long[]){3}, 1);
    json_decref(d);
    api_arena_free(&f.arena);
}

/* 130 uniform rows: 100 near_uniform warnings, then truncated with 30. */
static void test_truncated_after_100(void **state) {
    (void)state;
    fixture f;
    setup(&f, 1, 1, 130, 2);
    double *w = malloc(260 * sizeof *w), *s = calloc(260, sizeof *s);
    for (int i = 0; i < 260; i++)
        w[i] = 0.5;
    api_diagnostics_compute(&f.d, s, w, NULL);
    json_t *d = written(&f, 0, 1, 0, 0);
    const json_t *warn = json_object_get(d, "warnings");
    assert_int_equal(json_array_size(warn), 101);
    assert_row(json_array_get(warn, 99), "near_uniform", (long long[]){0, 99},
               2);
    const json_t *last = json_array_get(warn, 100);
    assert_string_equal(json_string_value(json_object_get(last, "code")),
                        "truncated");
    assert_int_equal(json_integer_value(json_object_get(last, "count")), 30);
    assert_null(json_object_get(last, "row"));
    json_decref(d);
    free(w);
    free(s);
    api_arena_free(&f.arena);
}

/* "precision": 1 rounds the statistics, entropy and max_weight, never the
 * argmax indices; "flat" writes the row tensors as {"shape", "data"};
 * with no visible score the statistics are null. */
static void test_precision_flat_and_null_stats(void **state) {
    (void)state;
    fixture f;
    setup(&f, 1, 1, 1, 13);
    double w[13] = {0}, s[13];
    for (int j = 0; j < 13; j++)
        s[j] = j;
    w[12] = 0.66;
    w[0] = 0.34;
    api_diagnostics_compute(&f.d, s, w, NULL);
    json_t *d = written(&f, 0, 1, 1, 1);
    const json_t *arg = json_object_get(d, "argmax");
    assert_int_equal(
        json_integer_value(json_array_get(json_object_get(arg, "shape"), 1)),
        1);
    assert_int_equal(
        json_integer_value(json_array_get(json_object_get(arg, "data"), 0)),
        12);
    const json_t *mw = json_object_get(d, "max_weight");
    near(num(json_array_get(json_object_get(mw, "data"), 0)), 0.7, 0);
    const json_t *sc = json_object_get(d, "scores");
    near(num(json_object_get(sc, "mean")), 6, 0);
    /* std of 0 … 12 = sqrt(14) = 3.74 → 4 at one digit */
    near(num(json_object_get(sc, "std")), 4, 0);
    json_decref(d);

    const int64_t none[1] = {0};
    attn_mask mask = {.valid_lens = none,
                      .per_query = 0,
                      .causal = ATTN_CAUSAL_NONE,
                      .fully_masked = ATTN_FULLY_MASKED_ZERO};
    api_diagnostics_compute(&f.d, s, w, &mask);
    d = written(&f, 0, 1, 0, 0);
    sc = json_object_get(d, "scores");
    assert_int_equal(json_object_size(sc), 4);
    assert_true(json_is_null(json_object_get(sc, "min")));
    assert_true(json_is_null(json_object_get(sc, "std")));
    assert_row(json_array_get(json_object_get(d, "warnings"), 0),
               "fully_masked", (long long[]){0, 0}, 2);
    json_decref(d);
    api_arena_free(&f.arena);
}

/* Statistics that overflow a double make the answer fail with the
 * result's error (the routes': 422 invalid_value). */
static void test_nonfinite_statistics_fail(void **state) {
    (void)state;
    fixture f;
    setup(&f, 1, 1, 1, 2);
    const double w[2] = {0.5, 0.5}, s[2] = {1e308, -1e308};
    api_diagnostics_compute(&f.d, s, w, NULL);
    assert_false(isfinite(f.d.std));
    api_buf out = {0};
    api_tensor_format fmt = {0, 0, 0};
    api_result r;
    api_problem p = {0};
    api_result_init(&r, &fmt, API_E_INVALID_VALUE, "not finite");
    api_diagnostics_result(&r, &f.d, 0, 1);
    assert_int_equal(api_result_check(&r, &p), -1);
    assert_int_equal(api_result_write_json(&r, &out, &p), -1);
    assert_int_equal(p.code, API_E_INVALID_VALUE);
    assert_string_equal(p.detail, "not finite");
    api_buf_free(&out);
    api_arena_free(&f.arena);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_by_hand),
        cmocka_unit_test(test_thresholds),
        cmocka_unit_test(test_fully_masked_rows_and_masked_scores),
        cmocka_unit_test(test_causal_visible_counts),
        cmocka_unit_test(test_write_multihead_rows),
        cmocka_unit_test(test_write_unbatched_and_dot_rows),
        cmocka_unit_test(test_truncated_after_100),
        cmocka_unit_test(test_precision_flat_and_null_stats),
        cmocka_unit_test(test_nonfinite_statistics_fail),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
