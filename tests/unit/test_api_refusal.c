/*
 * test_api_refusal.c — the server's own refusals (api_refuse, api.h):
 * each status's code in the path's front's form, an error of HTTP itself
 * without a path, details cut as api_fail cuts them; and
 * api_route_method.
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
#include "problem.h"

/* A member of res's JSON body as a string ("" when it has none). */
static const char *member(const api_response *res, const char *name) {
    static char text[1024];
    text[0] = '\0';
    json_t *j = json_loadb(res->body, res->body_len, 0, NULL);
    const char *s = json_string_value(json_object_get(j, name));
    if (s != NULL)
        snprintf(text, sizeof text, "%s", s);
    json_decref(j);
    return text;
}

static void test_codes_of_statuses(void **state) {
    (void)state;
    static const struct {
        int status, answered;
        const char *code;
    } cases[] = {
        {401, 401, "unauthorized"},       {404, 404, "not_found"},
        {405, 405, "method_not_allowed"}, {413, 413, "payload_too_large"},
        {429, 429, "rate_limited"},       {503, 503, "overloaded"},
        {500, 500, "internal"},           {418, 500, "internal"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        api_response res;
        memset(&res, 0, sizeof res);
        api_refuse(&res, "/attention/dot", cases[i].status, "n=%d", 7);
        assert_int_equal(res.status, cases[i].answered);
        assert_string_equal(res.content_type, API_CT_PROBLEM);
        assert_string_equal(member(&res, "code"), cases[i].code);
        assert_string_equal(member(&res, "detail"), "n=7");
        api_response_free(&res);
    }
}

/* Under /v2 the refusal is the protocol's {"error"}, as the front writes
 * every error of its paths. */
static void test_front_form(void **state) {
    (void)state;
    api_response res;
    memset(&res, 0, sizeof res);
    api_refuse(&res, "/v2/models/attention_dot/infer", 503, "%s", "busy");
    assert_int_equal(res.status, 503);
    assert_string_equal(member(&res, "error"), "overloaded: busy");
    api_response_free(&res);
}

/* The same bytes as api_fail and api_front_respond_problem give, for a
 * detail that api_fail cuts in the middle of a UTF-8 sequence. */
static void test_detail_cut_as_api_fail(void **state) {
    (void)state;
    char detail[2 * API_DETAIL_MAX];
    size_t n = 0;
    detail[n++] = 'x';
    while (n + 2 < sizeof detail) { /* "é", two bytes, from an odd offset */
        detail[n++] = (char)0xC3;
        detail[n++] = (char)0xA9;
    }
    detail[n] = '\0';
    for (size_t cut = API_DETAIL_MAX - 3; cut <= API_DETAIL_MAX + 2; cut++) {
        char text[2 * API_DETAIL_MAX];
        memcpy(text, detail, cut);
        text[cut] = '\0';
        api_problem p;
        memset(&p, 0, sizeof p);
        api_fail(&p, API_E_OVERLOADED, NULL, "%s", text);
        api_response want, got;
        memset(&want, 0, sizeof want);
        memset(&got, 0, sizeof got);
        api_problem_respond(&want, &p);
        api_refuse(&got, "/attention/dot", 503, "%s", text);
        assert_int_equal(got.body_len, want.body_len);
        assert_memory_equal(got.body, want.body, want.body_len);
        api_response_free(&want);
        api_response_free(&got);
    }
}

/* Without a path: problem+json named after the status, detail whole. */
static void test_error_of_http(void **state) {
    (void)state;
    static const struct {
        int status;
        const char *code;
    } cases[] = {{400, "bad_request"},
                 {408, "request_timeout"},
                 {413, "payload_too_large"},
                 {414, "uri_too_long"},
                 {431, "header_fields_too_large"},
                 {501, "not_implemented"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        api_response res;
        memset(&res, 0, sizeof res);
        res.body = malloc(8); /* freed first */
        api_refuse(&res, NULL, cases[i].status, "%s", "why");
        assert_int_equal(res.status, cases[i].status);
        assert_string_equal(res.content_type, API_CT_PROBLEM);
        assert_string_equal(member(&res, "code"), cases[i].code);
        assert_string_equal(member(&res, "detail"), "why");
        api_response_free(&res);
    }
    char *long_detail = malloc(3000);
    assert_non_null(long_detail);
    memset(long_detail, 'a', 2999);
    long_detail[2999] = '\0';
    /* with a path, a status outside the contract's is internal, even one
     * of HTTP itself */
    api_response res;
    memset(&res, 0, sizeof res);
    api_refuse(&res, "/v2/models/attention_dot/infer", 408, "%s", "x");
    assert_string_equal(member(&res, "error"), "internal: x");
    api_response_free(&res);
    memset(&res, 0, sizeof res);
    api_refuse(&res, NULL, 408, "%s", long_detail);
    json_t *j = json_loadb(res.body, res.body_len, 0, NULL);
    assert_int_equal(strlen(json_string_value(json_object_get(j, "detail"))),
                     2999);
    json_decref(j);
    api_response_free(&res);
    free(long_detail);
}

static void test_route_method(void **state) {
    (void)state;
    assert_string_equal(api_route_method("/attention/dot"), "POST");
    assert_string_equal(api_route_method("/healthz"), "GET");
    assert_string_equal(api_route_method("/v2/models/attention_dot/infer"),
                        "POST");
    assert_null(api_route_method("/v2/models/no_such_model/infer"));
    assert_null(api_route_method("/nope"));
    assert_null(api_route_method(NULL));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_codes_of_statuses),
        cmocka_unit_test(test_front_form),
        cmocka_unit_test(test_detail_cut_as_api_fail),
        cmocka_unit_test(test_error_of_http),
        cmocka_unit_test(test_route_method),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
