/*
 * test_api_grads.c — "grad_output" through api_handle (docs/contract.md section
 * 9): every entry of "grads" agrees with a central finite difference of L = Σ
 * grad_output ⊙ output, taken by perturbing that entry of the request body and
 * asking the route again (relative 1e-6; absolute 1e-9 below |g| = 1e-3).
 * Covers dot, additive and multihead attention with masks, fully masked rows
 * under "zero" and "uniform", unbatched input, drawn parameters (their
 * gradients equal those of the same parameters sent explicitly) and
 * self-attention (a defaulted tensor's gradient is added into its source).
 * Also: the work estimate triples with grad_output, checked against
 * docs/contract.md's formulas at the exact limit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <math.h>

#include "api.h"

#define EPS 1e-5
#define RTOL 1e-6
#define FLOOR 1e-3 /* below this |g|, the tolerance is RTOL · FLOOR */

/* POST body to route with limits (NULL: defaults); returns the status and
 * the parsed answer in *answer (caller decrefs). */
static int post(const char *route, const json_t *body, const api_limits *lim,
                json_t **answer) {
    char *text = json_dumps(body, JSON_COMPACT | JSON_REAL_PRECISION(17));
    assert_non_null(text);
    api_request req = {.method = "POST",
                       .path = route,
                       .content_type = "application/json",
                       .body = text,
                       .body_len = strlen(text),
                       .limits = lim};
    api_response res;
    api_handle(&req, &res);
    free(text);
    json_error_t err;
    *answer = json_loadb(res.body, res.body_len, 0, &err);
    if (!*answer)
        fail_msg("%s answered no JSON: %s", route, err.text);
    int status = res.status;
    api_response_free(&res);
    return status;
}

static json_t *post_ok(const char *route, const json_t *body) {
    json_t *answer;
    int status = post(route, body, NULL, &answer);
    if (status != 200) {
        char *s = json_dumps(answer, JSON_COMPACT);
        fail_msg("%s: status %d: %s", route, status, s);
    }
    return answer;
}

/* Leaves (numbers) of nested arrays, in row-major order. */
static void leaves(json_t *t, json_t **out, size_t *n, size_t cap) {
    if (json_is_array(t)) {
        for (size_t i = 0; i < json_array_size(t); i++)
            leaves(json_array_get(t, i), out, n, cap);
        return;
    }
    assert_true(json_is_number(t));
    assert_true(*n < cap);
    out[(*n)++] = t;
}

/* Σ grad_output ⊙ output for body (grad_output taken out first). */
static double loss(const char *route, json_t *body, json_t *go) {
    json_t *answer = post_ok(route, body);
    json_t *out[4096], *g[4096];
    size_t n = 0, m = 0;
    leaves(json_object_get(answer, "output"), out, &n, 4096);
    leaves(go, g, &m, 4096);
    assert_int_equal(n, m);
    double L = 0;
    for (size_t i = 0; i < n; i++)
        L += json_number_value(out[i]) * json_number_value(g[i]);
    json_decref(answer);
    return L;
}

static json_t *tensor(const double *x, const size_t *shape, size_t rank) {
    json_t *a = json_array();
    size_t step = 1;
    for (size_t i = 1; i < rank; i++)
        step *= shape[i];
    for (size_t i = 0; i < shape[0]; i++)
        json_array_append_new(
            a, rank == 1 ? json_real(x[i])
                         : tensor(x + i * step, shape + 1, rank - 1));
    return a;
}

/* A tensor of the given shape with entries from a fixed sequence in
 * (−1, 1) (a small LCG: reproducible, no two entries alike). */
static json_t *filled(unsigned *seed, size_t d0, size_t d1, size_t d2) {
    size_t shape[3] = {d0, d1, d2}, rank = d1 ? (d2 ? 3 : 2) : 1, n = d0;
    if (d1)
        n *= d1;
    if (d2)
        n *= d2;
    double *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1103515245u + 12345u;
        x[i] = ((*seed >> 8) % 20000) / 10000.0 - 1.0;
    }
    json_t *t = tensor(x, shape, rank);
    free(x);
    return t;
}

/* Compare every entry of answer.grads[name] for name in names with
 * central differences on body[name]. */
static void check_grads(const char *route, json_t *body,
                        const char *const *names, size_t n_names) {
    json_t *go = json_incref(json_object_get(body, "grad_output"));
    json_t *answer = post_ok(route, body);
    json_t *grads = json_object_get(answer, "grads");
    assert_non_null(grads);
    assert_int_equal(json_object_size(grads), n_names);
    json_object_del(body, "grad_output");
    double worst = 0;
    const char *worst_at = "";
    size_t worst_i = 0;
    for (size_t f = 0; f < n_names; f++) {
        json_t *x[4096], *g[4096];
        size_t n = 0, m = 0;
        leaves(json_object_get(body, names[f]), x, &n, 4096);
        json_t *gf = json_object_get(grads, names[f]);
        if (!gf)
            fail_msg("%s: no grads.%s", route, names[f]);
        leaves(gf, g, &m, 4096);
        assert_int_equal(n, m);
        for (size_t i = 0; i < n; i++) {
            double x0 = json_number_value(x[i]);
            json_real_set(x[i], x0 + EPS);
            double up = loss(route, body, go);
            json_real_set(x[i], x0 - EPS);
            double down = loss(route, body, go);
            json_real_set(x[i], x0);
            double fd = (up - down) / (2 * EPS);
            double gi = json_number_value(g[i]);
            double err = fabs(fd - gi) / fmax(fabs(gi), FLOOR);
            if (err > worst) {
                worst = err;
                worst_at = names[f];
                worst_i = i;
            }
        }
    }
    if (worst > RTOL)
        fail_msg("%s: grads.%s[%zu] differs from the central difference by "
                 "%.3g (relative)",
                 route, worst_at, worst_i, worst);
    print_message("# %s: worst relative difference %.3g (grads.%s[%zu])\n",
                  route, worst, worst_at, worst_i);
    json_object_set_new(body, "grad_output", go);
    json_decref(answer);
}

static const char *const QKV[] = {"queries", "keys", "values"};

/* ---------------------------------------------------------------- dot */

static json_t *dot_body(unsigned seed, size_t B, size_t Nq, size_t Nk, size_t d,
                        size_t dv) {
    json_t *b = json_object();
    json_object_set_new(b, "queries", filled(&seed, B, Nq, d));
    json_object_set_new(b, "keys", filled(&seed, B, Nk, d));
    json_object_set_new(b, "values", filled(&seed, B, Nk, dv));
    json_object_set_new(b, "grad_output", filled(&seed, B, Nq, dv));
    return b;
}

static void test_dot_masked(void **state) {
    (void)state;
    json_t *b = dot_body(1, 2, 3, 4, 3, 2);
    json_object_set_new(b, "valid_lens",
                        json_pack("[[i,i,i],[i,i,i]]", 2, 0, 4, 3, 1, 4));
    json_object_set_new(b, "causal", json_string("bottom_right"));
    json_object_set_new(b, "scale", json_real(0.8));
    check_grads("/attention/dot", b, QKV, 3);
    json_decref(b);
}

static void test_dot_uniform_rows_unbatched(void **state) {
    (void)state;
    json_t *b = dot_body(2, 1, 3, 4, 2, 3);
    /* unbatched: drop the batch axis of every tensor */
    const char *names[] = {"queries", "keys", "values", "grad_output"};
    for (int i = 0; i < 4; i++)
        json_object_set(b, names[i],
                        json_array_get(json_object_get(b, names[i]), 0));
    json_object_set_new(b, "valid_lens", json_pack("[i,i,i]", 0, 2, 4));
    json_object_set_new(b, "fully_masked", json_string("uniform"));
    check_grads("/attention/dot", b, QKV, 3);
    json_decref(b);
}

/* ----------------------------------------------------------- additive */

static void test_additive_masked(void **state) {
    (void)state;
    unsigned seed = 3;
    json_t *b = dot_body(4, 2, 3, 4, 2, 2);
    json_object_set_new(b, "keys", filled(&seed, 2, 4, 3)); /* dk 3 */
    json_object_set_new(b, "W_q", filled(&seed, 5, 2, 0));
    json_object_set_new(b, "W_k", filled(&seed, 5, 3, 0));
    json_object_set_new(b, "w_v", filled(&seed, 5, 0, 0));
    json_object_set_new(b, "valid_lens", json_pack("[i,i]", 3, 0));
    json_object_set_new(b, "causal", json_true());
    const char *names[] = {"queries", "keys", "values", "W_q", "W_k", "w_v"};
    check_grads("/attention/additive", b, names, 6);
    json_decref(b);
}

/* Drawn parameters: their gradients equal those of the same parameters
 * sent explicitly (bit for bit: the answer prints round-trip digits), and
 * those agree with finite differences. */
static void test_additive_seeded_equals_explicit(void **state) {
    (void)state;
    json_t *b = dot_body(5, 2, 2, 3, 3, 2);
    json_object_set_new(b, "num_hiddens", json_integer(4));
    json_object_set_new(b, "seed", json_integer(17));
    json_t *seeded = post_ok("/attention/additive", b);
    json_t *params = json_object_get(seeded, "params");
    json_object_del(b, "num_hiddens");
    json_object_del(b, "seed");
    json_object_update(b, params);
    json_t *explicit = post_ok("/attention/additive", b);
    assert_true(json_equal(json_object_get(seeded, "grads"),
                           json_object_get(explicit, "grads")));
    assert_true(json_equal(json_object_get(seeded, "output"),
                           json_object_get(explicit, "output")));
    const char *names[] = {"queries", "keys", "values", "W_q", "W_k", "w_v"};
    check_grads("/attention/additive", b, names, 6);
    json_decref(seeded);
    json_decref(explicit);
    json_decref(b);
}

/* ---------------------------------------------------------- multihead */

static void test_multihead_biases_masks(void **state) {
    (void)state;
    unsigned seed = 6;
    json_t *b = json_object();
    json_object_set_new(b, "queries", filled(&seed, 2, 3, 4));
    json_object_set_new(b, "keys", filled(&seed, 2, 4, 3));
    json_object_set_new(b, "values", filled(&seed, 2, 4, 2));
    json_object_set_new(b, "num_heads", json_integer(3));
    json_object_set_new(b, "W_q", filled(&seed, 6, 4, 0));
    json_object_set_new(b, "W_k", filled(&seed, 6, 3, 0));
    json_object_set_new(b, "W_v", filled(&seed, 6, 2, 0));
    json_object_set_new(b, "W_o", filled(&seed, 5, 6, 0));
    json_object_set_new(b, "b_q", filled(&seed, 6, 0, 0));
    json_object_set_new(b, "b_k", filled(&seed, 6, 0, 0));
    json_object_set_new(b, "b_v", filled(&seed, 6, 0, 0));
    json_object_set_new(b, "b_o", filled(&seed, 5, 0, 0));
    json_object_set_new(b, "valid_lens",
                        json_pack("[[i,i,i],[i,i,i]]", 1, 0, 4, 2, 3, 4));
    json_object_set_new(b, "causal", json_string("bottom_right"));
    json_object_set_new(b, "grad_output", filled(&seed, 2, 3, 5));
    const char *names[] = {"queries", "keys", "values", "W_q", "W_k", "W_v",
                           "W_o",     "b_q",  "b_k",    "b_v", "b_o"};
    check_grads("/attention/multihead", b, names, 11);
    json_decref(b);
}

/* Self-attention from drawn parameters, unbatched: grads.queries is the
 * derivative through queries, keys and values at once; the drawn weights
 * sent explicitly give the same answer. */
static void test_multihead_self_attention_seeded(void **state) {
    (void)state;
    unsigned seed = 7;
    json_t *b = json_object();
    json_object_set_new(b, "queries", filled(&seed, 4, 3, 0));
    json_object_set_new(b, "num_heads", json_integer(2));
    json_object_set_new(b, "num_hiddens", json_integer(4));
    json_object_set_new(b, "seed", json_integer(3));
    json_object_set_new(b, "causal", json_true());
    json_object_set_new(b, "grad_output", filled(&seed, 4, 4, 0));
    json_t *seeded = post_ok("/attention/multihead", b);
    json_t *grads = json_object_get(seeded, "grads");
    assert_null(json_object_get(grads, "keys"));
    assert_null(json_object_get(grads, "values"));
    json_object_del(b, "num_hiddens");
    json_object_del(b, "seed");
    json_object_update(b, json_object_get(seeded, "params"));
    json_t *explicit = post_ok("/attention/multihead", b);
    assert_true(json_equal(grads, json_object_get(explicit, "grads")));
    const char *names[] = {"queries", "W_q", "W_k", "W_v", "W_o"};
    check_grads("/attention/multihead", b, names, 5);
    json_decref(seeded);
    json_decref(explicit);
    json_decref(b);
}

/* keys given, values defaulted to keys: grads.keys carries both paths;
 * some biases only. */
static void test_multihead_values_default_to_keys(void **state) {
    (void)state;
    unsigned seed = 8;
    json_t *b = json_object();
    json_object_set_new(b, "queries", filled(&seed, 1, 2, 3));
    json_object_set_new(b, "keys", filled(&seed, 1, 3, 2));
    json_object_set_new(b, "num_heads", json_integer(2));
    json_object_set_new(b, "W_q", filled(&seed, 4, 3, 0));
    json_object_set_new(b, "W_k", filled(&seed, 4, 2, 0));
    json_object_set_new(b, "W_v", filled(&seed, 4, 2, 0));
    json_object_set_new(b, "W_o", filled(&seed, 3, 4, 0));
    json_object_set_new(b, "b_v", filled(&seed, 4, 0, 0));
    json_object_set_new(b, "grad_output", filled(&seed, 1, 2, 3));
    const char *names[] = {"queries", "keys", "W_q", "W_k",
                           "W_v",     "W_o",  "b_v"};
    check_grads("/attention/multihead", b, names, 7);
    json_decref(b);
}

/* ---------------------------------------------------- work estimates */

/* At max_work = estimate the request runs; one less is 413. With
 * grad_output the estimate is three times as large. */
static void check_work_limit(const char *route, json_t *body, uint64_t work) {
    api_limits lim;
    api_limits_default(&lim);
    json_t *answer;
    json_t *go = json_incref(json_object_get(body, "grad_output"));
    for (int with_grad = 0; with_grad < 2; with_grad++) {
        if (with_grad)
            json_object_set(body, "grad_output", go);
        else
            json_object_del(body, "grad_output");
        uint64_t w = with_grad ? 3 * work : work;
        lim.max_work = w;
        assert_int_equal(post(route, body, &lim, &answer), 200);
        assert_int_equal(json_object_get(answer, "grads") != NULL, with_grad);
        json_decref(answer);
        lim.max_work = w - 1;
        assert_int_equal(post(route, body, &lim, &answer), 413);
        json_decref(answer);
    }
    json_decref(go);
}

static void test_work_tripled(void **state) {
    (void)state;
    /* dot: B·Nq·Nk·(d + dv) = 2·3·4·(3 + 2) */
    json_t *b = dot_body(9, 2, 3, 4, 3, 2);
    check_work_limit("/attention/dot", b, 2 * 3 * 4 * 5);
    /* additive: B·h·(Nq·dq + Nk·dk) + B·Nq·Nk·(4h + dv) and the
     * projections' exponentials B·(Nq + Nk)·h·20, h = 5 */
    unsigned seed = 10;
    json_object_set_new(b, "W_q", filled(&seed, 5, 3, 0));
    json_object_set_new(b, "W_k", filled(&seed, 5, 3, 0));
    json_object_set_new(b, "w_v", filled(&seed, 5, 0, 0));
    check_work_limit("/attention/additive", b,
                     2 * 5 * (3 * 3 + 4 * 3) + 2 * 3 * 4 * (4 * 5 + 2) +
                         2 * (3 + 4) * 5 * 20);
    json_decref(b);
    /* multihead: B·h·(Nq·dq + Nk·dk + Nk·dv) + B·Nq·d_out·h + 2·B·Nq·Nk·h
     * with B 2, Nq 3, Nk 4, dq 3, dk 2, dv 1, h 4, d_out 5 */
    b = json_object();
    json_object_set_new(b, "queries", filled(&seed, 2, 3, 3));
    json_object_set_new(b, "keys", filled(&seed, 2, 4, 2));
    json_object_set_new(b, "values", filled(&seed, 2, 4, 1));
    json_object_set_new(b, "num_heads", json_integer(2));
    json_object_set_new(b, "W_q", filled(&seed, 4, 3, 0));
    json_object_set_new(b, "W_k", filled(&seed, 4, 2, 0));
    json_object_set_new(b, "W_v", filled(&seed, 4, 1, 0));
    json_object_set_new(b, "W_o", filled(&seed, 5, 4, 0));
    json_object_set_new(b, "grad_output", filled(&seed, 2, 3, 5));
    check_work_limit("/attention/multihead", b,
                     2 * 4 * (3 * 3 + 4 * 2 + 4 * 1) + 2 * 3 * 5 * 4 +
                         2 * 2 * 3 * 4 * 4);
    json_decref(b);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dot_masked),
        cmocka_unit_test(test_dot_uniform_rows_unbatched),
        cmocka_unit_test(test_additive_masked),
        cmocka_unit_test(test_additive_seeded_equals_explicit),
        cmocka_unit_test(test_multihead_biases_masks),
        cmocka_unit_test(test_multihead_self_attention_seeded),
        cmocka_unit_test(test_multihead_values_default_to_keys),
        cmocka_unit_test(test_work_tripled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
