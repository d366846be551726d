/*
 * test_api_transformer.c — POST /transformer/encoder and /decoder in
 * process: the work estimate is docs/transformer.md's formula to the
 * operation (--max-work refuses one below it), a request whose tensors
 * and kept activations do not fit the memory budget is refused before
 * anything is allocated (and the budget is whole afterwards), and the
 * answer's TENSORS items: state_dict keys written with their dots, in
 * either tensor form, masked trace entries null.
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

#include "api.h"
#include "limit.h"

#define MiB ((uint64_t)1 << 20)

/* POST body to path under limits; the answer parsed (caller decrefs) and
 * its status in *status. */
static json_t *post(const char *path, const char *body,
                    const api_limits *limits, int *status) {
    api_request req = {.method = "POST",
                       .path = path,
                       .content_type = "application/json",
                       .body = body,
                       .body_len = strlen(body),
                       .limits = limits};
    api_response res;
    api_handle(&req, &res);
    *status = res.status;
    json_t *j = json_loadb(res.body, res.body_len, 0, NULL);
    api_response_free(&res);
    assert_non_null(j);
    return j;
}

/* B = 1, S = 3, E = 4, H = 2, F = 8, L = 2 encoder: per layer
 * 4·R·E² + 2·R·S·E + 2·R·E·F + 10·2·R·E with R = 3 rows:
 * 192 + 72 + 192 + 240 = 696, so 1392; tripled with grad_output, one
 * forward more with a trace; and the drawn parameters. */
static void test_work_is_the_formula(void **state) {
    (void)state;
    static const char *const bodies[3] = {
        "{\"src\": [[1, 0, 2, -1], [0, 1, 1, 0], [2, 2, 0, 1]], "
        "\"num_heads\": 2, \"num_layers\": 2, \"dim_feedforward\": 8, "
        "\"seed\": 1}",
        "{\"src\": [[1, 0, 2, -1], [0, 1, 1, 0], [2, 2, 0, 1]], "
        "\"num_heads\": 2, \"num_layers\": 2, \"dim_feedforward\": 8, "
        "\"seed\": 1, \"grad_output\": [[1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, "
        "1]]}",
        "{\"src\": [[1, 0, 2, -1], [0, 1, 1, 0], [2, 2, 0, 1]], "
        "\"num_heads\": 2, \"num_layers\": 2, \"dim_feedforward\": 8, "
        "\"seed\": 1, \"trace\": true}"};
    /* and each drawn parameter, 2 layers of 172 (E = 4, F = 8: 48 + 12
     * in-projection, 16 + 4 out-projection, 32 + 8 and 32 + 4 the
     * feed-forward network, 2 · 8 the norms), API_WORK_DRAW each */
    const uint64_t drawn = 2 * 172 * API_WORK_DRAW;
    const uint64_t ops[3] = {1392 + drawn, 3 * 1392 + drawn, 2 * 1392 + drawn};
    for (int i = 0; i < 3; i++) {
        api_limits limits;
        api_limits_default(&limits);
        int status;
        limits.max_work = ops[i] - 1;
        json_t *j = post("/transformer/encoder", bodies[i], &limits, &status);
        assert_int_equal(status, 413);
        assert_non_null(strstr(json_string_value(json_object_get(j, "detail")),
                               "--max-work"));
        json_decref(j);
        limits.max_work = ops[i];
        j = post("/transformer/encoder", bodies[i], &limits, &status);
        assert_int_equal(status, 200);
        json_decref(j);
    }
}

/* 8 layers of F = 2048 on (64, 64): the drawn parameters alone are
 * 8 · (3·64·64 + 64·64 + 2·64·2048 + …) doubles, about 18 MiB, and the
 * kept hidden layers 8 MiB more: refused (413) under a 16 MiB budget,
 * answered under 256 MiB, and every byte given back. */
static void test_memory_budget(void **state) {
    (void)state;
    char *body = malloc(64 * 64 * 8 + 256);
    size_t n = (size_t)sprintf(body, "{\"src\": [");
    for (int i = 0; i < 64; i++) {
        n += (size_t)sprintf(body + n, "%s[", i ? "," : "");
        for (int c = 0; c < 64; c++)
            n += (size_t)sprintf(body + n, "%s%d", c ? "," : "", (i + c) % 5);
        n += (size_t)sprintf(body + n, "]");
    }
    sprintf(body + n, "], \"num_heads\": 4, \"num_layers\": 8, "
                      "\"dim_feedforward\": 2048, \"seed\": 2}");
    api_limits limits;
    api_limits_default(&limits);
    int status;
    api_budget_set(16 * MiB, 1, 50);
    json_t *j = post("/transformer/encoder", body, &limits, &status);
    assert_int_equal(status, 413);
    assert_string_equal(json_string_value(json_object_get(j, "code")),
                        "payload_too_large");
    json_decref(j);
    api_budget_usage u;
    api_budget_stats(&u);
    assert_int_equal(u.used, 0);
    api_budget_set(256 * MiB, 1, 50);
    j = post("/transformer/encoder", body, &limits, &status);
    assert_int_equal(status, 200);
    assert_int_equal(json_array_size(json_object_get(j, "output")), 64);
    json_decref(j);
    api_budget_stats(&u);
    assert_int_equal(u.used, 0);
    api_budget_set(0, 1, 50);
    free(body);
}

/* The decoder's answer: state_dict and grads.state_dict are objects
 * keyed "layers.0.self_attn.in_proj_weight" …, flat with tensor_format
 * flat; the trace's masked scores are null above the diagonal. */
static void test_tensors_items(void **state) {
    (void)state;
    api_limits limits;
    api_limits_default(&limits);
    int status;
    json_t *j = post(
        "/transformer/decoder",
        "{\"tgt\": [[1, 0], [0, 1], [1, 1]], \"memory\": [[2, 0], [0, 2]], "
        "\"num_heads\": 2, \"num_layers\": 1, \"dim_feedforward\": 3, "
        "\"seed\": 5, \"grad_output\": [[1, 0], [0, 1], [1, 1]], \"trace\": "
        "true, \"tensor_format\": \"flat\"}",
        &limits, &status);
    assert_int_equal(status, 200);
    json_t *sd = json_object_get(j, "state_dict");
    assert_int_equal(json_object_size(sd), 18);
    json_t *w = json_object_get(sd, "layers.0.multihead_attn.in_proj_weight");
    assert_non_null(w);
    json_t *shape = json_object_get(w, "shape");
    assert_int_equal(json_integer_value(json_array_get(shape, 0)), 6);
    assert_int_equal(json_integer_value(json_array_get(shape, 1)), 2);
    assert_int_equal(json_array_size(json_object_get(w, "data")), 12);
    json_t *g = json_object_get(json_object_get(j, "grads"), "state_dict");
    assert_int_equal(json_object_size(g), 18);
    assert_non_null(json_object_get(g, "layers.0.norm3.bias"));
    assert_non_null(json_object_get(json_object_get(j, "grads"), "memory"));
    json_t *trace = json_object_get(j, "trace");
    json_t *masked = json_object_get(trace, "self_attention.masked");
    json_t *data = json_object_get(masked, "data"); /* (L, H, T, T) */
    assert_int_equal(json_array_size(data), 1 * 2 * 3 * 3);
    assert_true(json_is_null(json_array_get(data, 1)));     /* (0, 0, 0, 1) */
    assert_true(json_is_number(json_array_get(data, 3)));   /* (0, 0, 1, 0) */
    assert_true(json_is_null(json_array_get(data, 9 + 5))); /* head 1 */
    json_decref(j);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_work_is_the_formula),
        cmocka_unit_test(test_memory_budget),
        cmocka_unit_test(test_tensors_items),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
