/*
 * test_api_route.c — the request layer's entry points: routing, methods,
 * content types and body limits (api_precheck and api_handle), the
 * operational routes, limits passed in api_limits, problem titles, and a
 * deterministic fuzz loop that mutates valid requests (every answer must
 * be well-formed JSON with a sane status; run under `make asan` too).
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
#include "attention.h"
#include "limit.h"
#include "problem.h"
#include "route.h"

static const char *DOT_BODY =
    "{\"queries\": [[[0.1, 0.2, 0.3, 0.4], [1, 0, 1, 0], [0, 0, 0, 1]], "
    "[[1, 1, 1, 1], [0.5, 0.5, 0.5, 0.5], [2, 0, 0, 0]]], "
    "\"keys\": [[[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], "
    "[1, 1, 1, 1]], [[1, 2, 3, 4], [4, 3, 2, 1], [0, 0, 0, 0], [1, 0, 1, 0], "
    "[0, 1, 0, 1]]], "
    "\"values\": {\"shape\": [2, 5, 3], \"data\": [1, 2, 3, 4, 5, 6, 7, 8, 9, "
    "10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, "
    "28, 29, 30]}, \"valid_lens\": [[1, 2, 5], [3, 0, 4]], \"causal\": "
    "\"bottom_right\", \"return_scores\": true}";

static api_response handle(const char *method, const char *path,
                           const char *query, const char *content_type,
                           const char *body, const api_limits *limits) {
    api_request req = {.method = method,
                       .path = path,
                       .query = query,
                       .content_type = content_type,
                       .body = body,
                       .body_len = body ? strlen(body) : 0,
                       .limits = limits};
    api_response res;
    api_handle(&req, &res);
    return res;
}

/* The problem's code (static buffer), or "" for a non-problem answer. */
static const char *code_of(const api_response *res) {
    static char code[64];
    code[0] = '\0';
    json_t *j = json_loadb(res->body, res->body_len, 0, NULL);
    const char *c = json_string_value(json_object_get(j, "code"));
    if (c)
        snprintf(code, sizeof code, "%s", c);
    json_decref(j);
    return code;
}

static void test_precheck(void **state) {
    (void)state;
    api_limits limits;
    api_limits_default(&limits);
    limits.max_body_bytes = 1000;
    api_request req = {.method = "POST",
                       .path = "/attention/dot",
                       .content_type = "application/json",
                       .limits = &limits};
    api_response res;
    assert_int_equal(api_precheck(&req, 999, &res), 0);
    assert_int_equal(api_precheck(&req, -1, &res), 0);
    assert_int_equal(api_precheck(&req, 1001, &res), 1);
    assert_int_equal(res.status, 413);
    assert_string_equal(res.content_type, "application/problem+json");
    assert_string_equal(code_of(&res), "payload_too_large");
    assert_string_equal(res.route, "/attention/dot");
    api_response_free(&res);

    req.content_type = "text/plain";
    assert_int_equal(api_precheck(&req, 1001, &res), 1);
    assert_int_equal(res.status, 415); /* 415 before 413 */
    api_response_free(&res);

    req.method = "GET";
    assert_int_equal(api_precheck(&req, 1001, &res), 1);
    assert_int_equal(res.status, 405);
    assert_string_equal(res.allow, "POST, OPTIONS");
    api_response_free(&res);

    req.path = "/nowhere";
    assert_int_equal(api_precheck(&req, 5, &res), 1);
    assert_int_equal(res.status, 404);
    assert_string_equal(res.route, "other");
    assert_null(res.allow);
    api_response_free(&res);

    /* GET routes ignore the content type */
    req.path = "/healthz";
    req.content_type = "text/plain";
    assert_int_equal(api_precheck(&req, 0, &res), 0);
    req.method = "HEAD";
    assert_int_equal(api_precheck(&req, 0, &res), 0);
    req.method = "POST";
    assert_int_equal(api_precheck(&req, 0, &res), 1);
    assert_int_equal(res.status, 405);
    assert_string_equal(res.allow, "GET, HEAD, OPTIONS");
    api_response_free(&res);
}

static void test_options(void **state) {
    (void)state;
    api_response res =
        handle("OPTIONS", "/attention/additive", NULL, NULL, NULL, NULL);
    assert_int_equal(res.status, 204);
    assert_string_equal(res.allow, "POST, OPTIONS");
    assert_int_equal(res.body_len, 0);
    api_response_free(&res);
    res = handle("OPTIONS", "*", NULL, NULL, NULL, NULL);
    assert_int_equal(res.status, 204);
    assert_string_equal(res.allow, API_ALLOW_ANY);
    api_response_free(&res);
    /* a preflight on a path no route answers is 204 too, so that the
     * page's real request reaches its 404 */
    res = handle("OPTIONS", "/attention/dott", NULL, NULL, NULL, NULL);
    assert_int_equal(res.status, 204);
    assert_string_equal(res.allow, API_ALLOW_ANY);
    api_response_free(&res);
    res = handle("POST", "/attention/dott", NULL, NULL, NULL, NULL);
    assert_int_equal(res.status, 404);
    assert_non_null(strstr(res.body, "did you mean `/attention/dot`?"));
    api_response_free(&res);
}

static void test_content_types(void **state) {
    (void)state;
    static const struct {
        const char *type;
        int status;
    } cases[] = {
        {"application/json", 200},
        {"APPLICATION/JSON", 200},
        {" application/json ", 200},
        {"application/json;charset=utf-8", 200},
        {"application/json; charset=\"UTF-8\"", 200},
        {"application/json; foo=bar; charset=utf-8", 200},
        {"application/jsonx", 415},
        {"application/json; charset=utf-16", 415},
        {"application/json, text/plain", 415},
        {"text/json", 415},
        {"", 415},
        {NULL, 415},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        api_response res = handle("POST", "/attention/dot", NULL, cases[i].type,
                                  DOT_BODY, NULL);
        if (res.status != cases[i].status)
            fail_msg("Content-Type %s: %d, expected %d",
                     cases[i].type ? cases[i].type : "(none)", res.status,
                     cases[i].status);
        api_response_free(&res);
    }
}

static void test_response_metadata(void **state) {
    (void)state;
    api_response res = handle("POST", "/attention/dot", NULL,
                              "application/json", DOT_BODY, NULL);
    assert_int_equal(res.status, 200);
    assert_string_equal(res.route, "/attention/dot");
    assert_int_equal(res.vary_accept, 1);
    assert_true(res.compute_ms >= 0);
    assert_null(res.allow);
    api_response_free(&res);

    res =
        handle("POST", "/attention/dot", NULL, "application/json", "{}", NULL);
    assert_int_equal(res.status, 422);
    assert_true(res.compute_ms < 0);
    assert_int_equal(res.vary_accept, 1);
    api_response_free(&res);

    res = handle("HEAD", "/healthz", NULL, NULL, NULL, NULL);
    assert_int_equal(res.status, 200);
    assert_string_equal(res.route, "/healthz");
    assert_int_equal(res.vary_accept, 0);
    assert_true(res.compute_ms < 0);
    assert_string_equal(res.body, "{\"status\":\"ok\"}");
    api_response_free(&res);

    res =
        handle("GET", "/regression/nw/dataset", "n_train=3", NULL, NULL, NULL);
    assert_int_equal(res.status, 200);
    assert_true(res.compute_ms >= 0);
    api_response_free(&res);
}

static void test_limits(void **state) {
    (void)state;
    api_limits limits;
    api_limits_default(&limits);
    assert_int_equal(limits.max_body_bytes, 16u << 20);
    assert_int_equal(limits.max_elements, 16u << 20);
    assert_true(limits.max_work == (uint64_t)1 << 33);

    limits.max_body_bytes = strlen(DOT_BODY) - 1;
    api_response res = handle("POST", "/attention/dot", NULL,
                              "application/json", DOT_BODY, &limits);
    assert_int_equal(res.status, 413);
    api_response_free(&res);

    /* keys (2, 5, 4) = 40 elements: one over the limit */
    api_limits_default(&limits);
    limits.max_elements = 39;
    res = handle("POST", "/attention/dot", NULL, "application/json", DOT_BODY,
                 &limits);
    assert_int_equal(res.status, 413);
    json_t *j = json_loadb(res.body, res.body_len, 0, NULL);
    assert_string_equal(json_string_value(json_object_get(j, "pointer")),
                        "/keys");
    json_decref(j);
    api_response_free(&res);

    /* work: B·Nq·Nk·(d + dv) = 2·3·5·(4 + 3) = 210 */
    api_limits_default(&limits);
    limits.max_work = 209;
    res = handle("POST", "/attention/dot", NULL, "application/json", DOT_BODY,
                 &limits);
    assert_int_equal(res.status, 413);
    j = json_loadb(res.body, res.body_len, 0, NULL);
    assert_null(json_object_get(j, "pointer"));
    json_decref(j);
    api_response_free(&res);
    limits.max_work = 210;
    res = handle("POST", "/attention/dot", NULL, "application/json", DOT_BODY,
                 &limits);
    assert_int_equal(res.status, 200);
    api_response_free(&res);

    /* additive with drawn parameters: the projections (B·Nq, h) are
     * bounded by max_elements like the parameters (W_q (h, 1) fits 64) */
    api_limits_default(&limits);
    limits.max_elements = 64;
    static const char additive[] =
        "{\"queries\": [[0], [1]], \"keys\": [[0], [1]], \"values\": [[0], "
        "[1]], \"num_hiddens\": 33, \"seed\": 1}";
    res = handle("POST", "/attention/additive", NULL, "application/json",
                 additive, &limits);
    assert_int_equal(res.status, 413);
    j = json_loadb(res.body, res.body_len, 0, NULL);
    assert_non_null(strstr(json_string_value(json_object_get(j, "detail")),
                           "projected queries"));
    json_decref(j);
    api_response_free(&res);
    /* h = 32: projections (2, 32) fit; the answer W_q, W_k, w_v, 96
     * numbers and the output, is within twice max_elements (128) */
    static const char additive32[] =
        "{\"queries\": [[0], [1]], \"keys\": [[0], [1]], \"values\": [[0], "
        "[1]], \"num_hiddens\": 32, \"seed\": 1, \"return_weights\": "
        "false}";
    res = handle("POST", "/attention/additive", NULL, "application/json",
                 additive32, &limits);
    assert_int_equal(res.status, 200);
    api_response_free(&res);
    /* one query of one feature, h = 48: every tensor fits 64, but the
     * drawn W_q, W_k, w_v are 144 numbers to print, over 128 */
    static const char additive48[] =
        "{\"queries\": [[1]], \"keys\": [[1]], \"values\": [[1]], "
        "\"num_hiddens\": 48}";
    res = handle("POST", "/attention/additive", NULL, "application/json",
                 additive48, &limits);
    assert_int_equal(res.status, 413);
    j = json_loadb(res.body, res.body_len, 0, NULL);
    assert_non_null(strstr(json_string_value(json_object_get(j, "detail")),
                           "--max-elements"));
    json_decref(j);
    api_response_free(&res);

    /* the dataset's n_train is bounded by max_elements too */
    api_limits_default(&limits);
    limits.max_elements = 10;
    res = handle("GET", "/regression/nw/dataset", "n_train=11", NULL, NULL,
                 &limits);
    assert_int_equal(res.status, 422); /* a parameter's range, not a body */
    api_response_free(&res);
    res = handle("GET", "/regression/nw/dataset", "n_train=10", NULL, NULL,
                 &limits);
    assert_int_equal(res.status, 413); /* x_test has 50 entries */
    api_response_free(&res);
}

/* Every route that computes an answer of its own counts its cost
 * (cost.h); the figures follow from the shapes. */
static void test_route_costs(void **state) {
    (void)state;
    for (size_t i = 0; i < api_route_count(); i++) {
        const api_route *r = api_route_at(i);
        int own_answer = (r->flags & API_ROUTE_COMPUTES) && r->answer;
        if (own_answer && !r->cost)
            fail_msg("%s computes but counts no cost", r->path);
    }
    /* dot, B=2 Nq=3 Nk=5 d=4 dv=3 with diagnostics off: inputs q, k, v;
     * output (2,3,3), weights (2,3,5) */
    api_attention a;
    memset(&a, 0, sizeof a);
    a.B = 2, a.Nq = 3, a.Nk = 5, a.dq = a.dk = 4, a.dv = a.d_out = 3, a.H = 1;
    a.q.count = 24, a.k.count = 40, a.v.count = 30;
    a.return_weights = 1;
    api_cost c;
    api_call call;
    memset(&call, 0, sizeof call);
    api_route_find("/attention/dot")->cost(&call, &a, &c);
    assert_int_equal(c.ops, 2 * 3 * 5 * (4 + 3));
    assert_int_equal(c.input_bytes, 8 * (24 + 40 + 30));
    assert_int_equal(c.working_bytes, 8 * (24 + 40 + 30 + 18 + 30));
    assert_int_equal(c.answer_bytes,
                     API_COST_NUMBER_TEXT * (18 + 30) + API_COST_ANSWER_FRAME);
    /* with grad_output: three times the work, grads and grad_output */
    a.has_grad = 1;
    a.grad.count = 18;
    api_route_find("/attention/dot")->cost(&call, &a, &c);
    assert_int_equal(c.ops, 3 * 2 * 3 * 5 * (4 + 3));
    assert_int_equal(c.input_bytes, 8 * (24 + 40 + 30 + 18));
    assert_int_equal(c.working_bytes,
                     8 * (24 + 40 + 30 + 18 + 30 + 18 + 24 + 40 + 30));
    /* with a float attn_mask (B, Nq, Nk): 8 bytes an entry; a boolean
     * one and key_padding_mask (B, Nk): a byte an entry, in whole slots */
    a.has_grad = 0;
    a.masks.has_amask = 1;
    a.masks.kind = API_MASK_FLOAT;
    a.masks.amask.count = 30;
    api_route_find("/attention/dot")->cost(&call, &a, &c);
    assert_int_equal(c.input_bytes, 8 * (24 + 40 + 30 + 30));
    assert_int_equal(c.working_bytes, 8 * (24 + 40 + 30 + 18 + 30 + 30));
    a.masks.kind = API_MASK_BOOL;
    a.masks.has_kpm = 1;
    a.masks.kpm.count = 10;
    api_route_find("/attention/dot")->cost(&call, &a, &c);
    assert_int_equal(c.input_bytes, 8 * (24 + 40 + 30 + (30 / 8 + 1) + 2));
    api_route_find("/softmax/masked")->cost(&call, &a, &c);
    assert_int_equal(c.input_bytes, 8 * (2 * 3 * 5 + (30 / 8 + 1) + 2));
    a.masks.has_amask = a.masks.has_kpm = 0;

    /* additive, B=1 Nq=2 Nk=3 dq=dk=2 dv=1, h=4 drawn (the shapes struct
     * cost_additive documents: the attention, h, given): the projections,
     * their exponentials and the features count; the working set holds
     * lib's scratch, 3·B·(Nq+Nk)·h doubles (attn_additive_workspace);
     * the answer holds the drawn W_q, W_k, w_v */
    struct {
        const api_attention *a;
        size_t h;
        int given;
    } add = {&a, 4, 0};
    memset(&a, 0, sizeof a);
    a.B = 1, a.Nq = 2, a.Nk = 3, a.dq = a.dk = 2, a.dv = a.d_out = 1, a.H = 1;
    a.q.count = 4, a.k.count = 6, a.v.count = 3;
    a.return_weights = 1;
    api_route_find("/attention/additive")->cost(&call, &add, &c);
    /* and 64 for each of the 4·(2 + 2 + 1) parameters drawn */
    assert_int_equal(c.ops, 1 * 4 * (2 * 2 + 3 * 2) + 1 * 2 * 3 * (4 * 4 + 1) +
                                1 * (2 + 3) * 4 * 20 +
                                4 * (2 + 2 + 1) * API_WORK_DRAW);
    assert_int_equal(c.input_bytes, 8 * (4 + 6 + 3));
    assert_int_equal(c.working_bytes,
                     8 * (4 + 6 + 3 + 2 + 6 + 4 * (2 + 2 + 1)) +
                         8 * 3 * (2 + 3) * 4);
    assert_int_equal(c.answer_bytes, API_COST_NUMBER_TEXT * (2 + 6 + 20) +
                                         API_COST_ANSWER_FRAME);
    /* with grad_output (2): the backward's scratch is smaller than the
     * forward's; the answer adds the inputs' and the parameters' grads */
    a.has_grad = 1;
    a.grad.count = 2;
    api_route_find("/attention/additive")->cost(&call, &add, &c);
    assert_int_equal(c.working_bytes,
                     8 * (4 + 6 + 3 + 2 + 6 + 2 + 4 + 6 + 3 + 2 * 20) +
                         8 * 3 * (2 + 3) * 4);
    assert_int_equal(c.answer_bytes,
                     API_COST_NUMBER_TEXT * (2 + 6 + 4 + 6 + 3 + 20 + 20) +
                         API_COST_ANSWER_FRAME);
    /* return_weights false: the weights are computed but not answered */
    a.has_grad = 0;
    a.return_weights = 0;
    api_route_find("/attention/additive")->cost(&call, &add, &c);
    assert_int_equal(c.answer_bytes,
                     API_COST_NUMBER_TEXT * (2 + 20) + API_COST_ANSWER_FRAME);
    /* the answer's bound: two tensors of --max-elements numbers */
    assert_true(api_cost_answer_max(100) ==
                2 * 100 * API_COST_NUMBER_TEXT + API_COST_ANSWER_FRAME);

    /* the dataset: (n_train + 50) points, one sin each */
    size_t n = 10;
    api_route_find("/regression/nw/dataset")->cost(&call, &n, &c);
    assert_int_equal(c.ops, (10 + 50) * 20);
    assert_int_equal(c.working_bytes, 8 * (2 * 10 + 2 * 50));
    assert_int_equal(c.input_bytes, 0);
    api_limits limits;
    api_limits_default(&limits);
    limits.max_work = (10 + 50) * 20 - 1;
    api_response res = handle("GET", "/regression/nw/dataset", "n_train=10",
                              NULL, NULL, &limits);
    assert_int_equal(res.status, 413);
    api_response_free(&res);
    limits.max_work++;
    res = handle("GET", "/regression/nw/dataset", "n_train=10", NULL, NULL,
                 &limits);
    assert_int_equal(res.status, 200);
    api_response_free(&res);
}

static int listed(const char *const *paths, const char *path) {
    for (; *paths; paths++)
        if (!strcmp(*paths, path))
            return 1;
    return 0;
}

/* /grade's fast-path paths are every route's: under request/, tensor
 * fields of real numbers that no route has as a field of another kind
 * (the endpoint's own decoder reads each placeholder); under answer/,
 * tensor members of answers. The v2 front's are its inputs' data. */
static void test_front_fast_paths(void **state) {
    (void)state;
    const char *const *paths = api_route_fast_fields(api_route_find("/grade"));
    size_t n = 0, data = 0;
    for (const char *const *p = paths; *p; p++, n++) {
        if (!strncmp(*p, "answer/", 7))
            continue;
        assert_memory_equal(*p, "request/", 8);
        char name[64];
        snprintf(name, sizeof name, "%s", *p + 8);
        char *slash = strchr(name, '/'); /* f/data: {"shape", "data"} */
        if (slash != NULL) {
            assert_string_equal(slash, "/data");
            *slash = '\0';
            data++;
        }
        for (size_t i = 0; i < api_route_count(); i++) {
            const api_schema *s = api_route_at(i)->request;
            for (size_t j = 0; s && j < s->n; j++)
                if (!strcmp(s->fields[j].name, name) &&
                    (s->fields[j].kind != API_FIELD_TENSOR ||
                     (s->fields[j].tensor->flags & API_TENSOR_INTEGRAL)))
                    fail_msg("%s: %s has a field %s that is not a tensor of "
                             "real numbers",
                             *p, api_route_at(i)->path, name);
        }
    }
    /* the fast path's most (fastpath.h): every member path fits, and the
     * "data" paths take the room that is left */
    assert_true(n - data < 256 && n <= 256);
    assert_true(listed(paths, "request/queries/data"));
    static const char *const expected[] = {
        "request/queries", "request/keys",       "request/values",
        "request/W_q",     "request/x_train",    "request/scores",
        "answer/output",   "answer/weights",     "answer/grads/queries",
        "answer/P",        "answer/predictions", "answer/diagnostics/entropy"};
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        if (!listed(paths, expected[i]))
            fail_msg("/grade's fast paths lack %s", expected[i]);
    assert_false(listed(paths, "request/valid_lens")); /* integers */
    assert_false(listed(paths, "answer/history/w"));   /* records */
    const char *const *v2 =
        api_route_fast_fields(api_route_find("/v2/models/attention_dot/infer"));
    assert_string_equal(v2[0], "inputs/*/data");
    assert_null(v2[1]);
}

static void test_ops(void **state) {
    (void)state;
    api_response res = handle("GET", "/v2/health/live", NULL, NULL, NULL, NULL);
    assert_int_equal(res.status, 200);
    assert_string_equal(res.body, "{\"live\":true}");
    api_response_free(&res);

    res = handle("GET", "/v2/health/ready", NULL, NULL, NULL, NULL);
    assert_int_equal(res.status, 200);
    assert_string_equal(res.body, "{\"ready\":true}");
    api_response_free(&res);
    api_set_ready(0);
    res = handle("GET", "/v2/health/ready", NULL, NULL, NULL, NULL);
    assert_int_equal(res.status, 503);
    assert_string_equal(res.content_type, "application/json");
    assert_string_equal(res.body, "{\"ready\":false}");
    api_response_free(&res);
    api_set_ready(1);
    res = handle("GET", "/v2/health/ready", NULL, NULL, NULL, NULL);
    assert_int_equal(res.status, 200);
    api_response_free(&res);

    api_set_threads(7, 2);
    res = handle("GET", "/version", NULL, NULL, NULL, NULL);
    assert_int_equal(res.status, 200);
    json_t *j = json_loadb(res.body, res.body_len, 0, NULL);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "name")), "attnd");
    assert_string_equal(json_string_value(json_object_get(j, "api_version")),
                        "1");
    assert_true(json_string_length(json_object_get(j, "version")) > 0);
    assert_int_equal(json_integer_value(json_object_get(j, "threads")), 7);
    json_t *blas = json_object_get(j, "blas");
    assert_true(json_is_string(json_object_get(blas, "name")));
    assert_true(json_is_string(json_object_get(blas, "version")));
    assert_true(json_is_string(json_object_get(blas, "config")));
    assert_true(json_integer_value(json_object_get(blas, "threads")) >= 1);
    json_decref(j);
    api_response_free(&res);
}

static void test_problem_table(void **state) {
    (void)state;
    assert_string_equal(api_status_title(413), "Content Too Large");
    assert_string_equal(api_status_title(422), "Unprocessable Content");
    assert_string_equal(api_status_title(405), "Method Not Allowed");
    assert_int_equal(api_error_status(API_E_INVALID_JSON), 400);
    assert_int_equal(api_error_status(API_E_UNAUTHORIZED), 401);
    assert_int_equal(api_error_status(API_E_RATE_LIMITED), 429);
    assert_int_equal(api_error_status(API_E_OVERLOADED), 503);
    assert_int_equal(api_error_status(API_E_INTERNAL), 500);
    assert_int_equal(api_error_status(API_E_RAGGED_ARRAY), 422);

    /* the server's own problems go through the same writer */
    api_problem p = {0};
    assert_int_equal(api_fail(&p, API_E_OVERLOADED, NULL, "busy: %d", 3), -1);
    api_fail(&p, API_E_INTERNAL, "/x", "ignored: the first error wins");
    api_response res = {0};
    api_problem_respond(&res, &p);
    assert_int_equal(res.status, 503);
    assert_string_equal(res.body,
                        "{\"type\":\"about:blank\",\"title\":\"Service "
                        "Unavailable\",\"status\":503,\"code\":\"overloaded\","
                        "\"detail\":\"busy: 3\"}");
    api_response_free(&res);
}

/* Absurd inputs still get well-formed, bounded answers. */
static void test_hostile_inputs(void **state) {
    (void)state;
    size_t n = 100000;
    char *body = malloc(n + 64);
    /* a 100 kB field name: the pointer is cut, the answer is still JSON */
    strcpy(body, "{\"");
    memset(body + 2, 'k', n);
    strcpy(body + 2 + n, "\": 1}");
    api_response res =
        handle("POST", "/attention/dot", NULL, "application/json", body, NULL);
    assert_int_equal(res.status, 422);
    assert_string_equal(code_of(&res), "unknown_field");
    assert_true(res.body_len < 4096);
    api_response_free(&res);
    /* deep nesting inside a valid document depth: a rank error */
    strcpy(body, "{\"queries\": ");
    size_t len = strlen(body);
    for (int i = 0; i < 1000; i++)
        body[len++] = '[';
    body[len++] = '1';
    for (int i = 0; i < 1000; i++)
        body[len++] = ']';
    strcpy(body + len, ", \"keys\": [[1]], \"values\": [[1]]}");
    res =
        handle("POST", "/attention/dot", NULL, "application/json", body, NULL);
    assert_int_equal(res.status, 422);
    assert_string_equal(code_of(&res), "shape_mismatch");
    api_response_free(&res);
    /* an unknown query parameter with bytes that are not UTF-8 */
    res = handle("GET", "/regression/nw/dataset", "%FF%FE=1", NULL, NULL, NULL);
    assert_int_equal(res.status, 422);
    json_t *j = json_loadb(res.body, res.body_len, 0, NULL);
    assert_non_null(j);
    json_decref(j);
    api_response_free(&res);
    free(body);
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Mutations of valid requests: flipped, inserted, deleted bytes and cut
 * bodies. Every answer is one of the contract's statuses with a JSON body
 * (problem+json carrying a code for errors). */
static void test_fuzz_mutations(void **state) {
    (void)state;
    static const char *const bodies[3] = {
        NULL, /* DOT_BODY */
        "{\"x_train\": [1, 2, 4], \"y_train\": [0, 3, 1], \"x_query\": [2.5], "
        "\"w\": 0.5, \"y_query\": [3], \"fit\": {\"epochs\": 2, \"lr\": 0.1, "
        "\"data\": \"query\"}}",
        "{\"queries\": [[0.5, 1]], \"keys\": [[1, 2], [3, 4]], \"values\": "
        "[[1], [2]], \"num_hiddens\": 3, \"seed\": 5, \"valid_lens\": 1}",
    };
    static const char *const paths[3] = {"/attention/dot", "/regression/nw",
                                         "/attention/additive"};
    static const char alphabet[] = "{}[]\",:0123456789.eE-+ \\u\0nultrfasx";
    char buf[2048];
    int statuses[600] = {0};
    for (int iter = 0; iter < 6000; iter++) {
        int k = iter % 3;
        const char *src = bodies[k] ? bodies[k] : DOT_BODY;
        size_t len = strlen(src);
        memcpy(buf, src, len);
        int edits = 1 + (int)(next_random() % 4);
        for (int e = 0; e < edits; e++) {
            size_t pos = (size_t)(next_random() % (len + 1));
            char c = alphabet[next_random() % (sizeof alphabet - 1)];
            switch (next_random() % 4) {
            case 0: /* replace */
                if (pos < len)
                    buf[pos] = c;
                break;
            case 1: /* insert */
                if (len + 1 < sizeof buf) {
                    memmove(buf + pos + 1, buf + pos, len - pos);
                    buf[pos] = c;
                    len++;
                }
                break;
            case 2: /* delete */
                if (pos < len) {
                    memmove(buf + pos, buf + pos + 1, len - pos - 1);
                    len--;
                }
                break;
            default: /* cut */
                len = pos;
                break;
            }
        }
        api_request req = {.method = "POST",
                           .path = paths[k],
                           .content_type = "application/json",
                           .body = buf,
                           .body_len = len};
        api_response res;
        api_handle(&req, &res);
        int s = res.status;
        if (s != 200 && s != 400 && s != 413 && s != 422)
            fail_msg("iteration %d: status %d for %.*s", iter, s, (int)len,
                     buf);
        json_error_t err;
        json_t *j = json_loadb(res.body, res.body_len, 0, &err);
        if (!j)
            fail_msg("iteration %d: answer not JSON (%s): %.*s", iter, err.text,
                     (int)res.body_len, res.body);
        if (s != 200 && !json_is_string(json_object_get(j, "code")))
            fail_msg("iteration %d: problem without code", iter);
        json_decref(j);
        statuses[s]++;
        api_response_free(&res);
    }
    /* the mutations reach every layer */
    assert_true(statuses[200] > 0);
    assert_true(statuses[400] > 0);
    assert_true(statuses[422] > 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_precheck),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_content_types),
        cmocka_unit_test(test_response_metadata),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_route_costs),
        cmocka_unit_test(test_front_fast_paths),
        cmocka_unit_test(test_ops),
        cmocka_unit_test(test_problem_table),
        cmocka_unit_test(test_hostile_inputs),
        cmocka_unit_test(test_fuzz_mutations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
