/*
 * test_api_question.c — a question folder's files checked and its
 * settings added to a batch (api/question.h): question.json's members,
 * request.json parsed as its endpoint's body, the messages that name the
 * file, the memory budget left as it was, and the batch body built in
 * both of its forms.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api.h"
#include "question.h"

static uint64_t budget_used(void) {
    api_budget_usage u;
    api_budget_stats(&u);
    return u.used;
}

/* api_question_settings on text; returns its result, *why freed into
 * why_text (cap bytes; "" when none). */
static int settings(const char *text, const api_limits *limits, char **members,
                    const char **route, char *why_text, size_t cap) {
    char *why = NULL;
    uint64_t before = budget_used();
    int rc =
        api_question_settings(text, text != NULL ? strlen(text) : 0,
                              "q/question.json", limits, members, route, &why);
    assert_int_equal(budget_used(), before);
    snprintf(why_text, cap, "%s", why != NULL ? why : "");
    free(why);
    return rc;
}

static void test_settings(void **state) {
    (void)state;
    api_limits limits;
    api_limits_default(&limits);
    char *members;
    const char *route;
    char why[1024];
    assert_int_equal(settings("{\"endpoint\": \"/attention/dot\", "
                              "\"points\": 2}",
                              &limits, &members, &route, why, sizeof why),
                     0);
    assert_string_equal(members, "{\"endpoint\":\"/attention/dot\","
                                 "\"points\":2}");
    assert_string_equal(route, "/attention/dot");
    assert_string_equal(why, "");
    free(members);
    /* no endpoint: each submission gives its own */
    assert_int_equal(settings("{}", &limits, &members, &route, why, sizeof why),
                     0);
    assert_string_equal(members, "{}");
    assert_null(route);
    free(members);
    /* refused, each with its message */
    static const struct {
        const char *text, *why;
    } cases[] = {
        {"{\"fieldz\": []}",
         "q/question.json: unknown member `fieldz`; did you mean `fields`? "
         "A question's settings are: endpoint, fields, compare, points, "
         "credit, visibility, show_expected, rtol, atol, problem, version"},
        {"{\"request\": {}}",
         "q/question.json: `request` is not a question's setting: the "
         "request the students answer is request.json, beside it"},
        {"{\"id\": 1}", "q/question.json: `id` is not a question's setting: "
                        "each submission on stdin gives its own"},
        {"[1]", "q/question.json holds an array, not a JSON object {...}"},
        {"{\"a\":", "q/question.json is not valid JSON: unexpected token "
                    "near end of file (line 1, column 5)"},
        {NULL, "q/question.json is not valid JSON: unexpected token near "
               "end of file (line 1, column 0)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(
            settings(cases[i].text, &limits, &members, &route, why, sizeof why),
            -1);
        assert_null(members);
        assert_string_equal(why, cases[i].why);
    }
    char *why_text = NULL;
    assert_int_equal(api_question_settings("{\"a\":\0}", 7, "f", &limits,
                                           &members, &route, &why_text),
                     -1);
    assert_string_equal(why_text,
                        "f is not valid JSON: a raw NUL byte at byte 5 (JSON "
                        "allows none outside strings)");
    free(why_text);
    /* a tree over its bound */
    limits.max_tree_bytes = 64;
    assert_int_equal(settings("{\"a\": [{}, {}, {}, {}, {}, {}, {}, {}]}",
                              &limits, &members, &route, why, sizeof why),
                     -1);
    assert_non_null(strstr(why, "q/question.json would take about 0 MiB of "
                                "memory as a tree of values"));
}

static void test_request(void **state) {
    (void)state;
    api_limits limits;
    api_limits_default(&limits);
    const char *dot = "{\"queries\": [[1, 2]], \"keys\": [[1, 0]], "
                      "\"values\": [[1]]}";
    char *why = NULL;
    uint64_t before = budget_used();
    assert_int_equal(api_question_request(dot, strlen(dot), "r.json",
                                          "/attention/dot", &limits, &why),
                     0);
    assert_null(why);
    assert_int_equal(
        api_question_request(dot, strlen(dot), "r.json", NULL, &limits, &why),
        0);
    assert_int_equal(
        api_question_request("3", 1, "r.json", "/attention/dot", &limits, &why),
        -1);
    assert_string_equal(why,
                        "r.json holds an integer, not a JSON object {...}");
    free(why);
    assert_int_equal(budget_used(), before);
}

/* api_question_batch, counted and then written: the same length. */
static char *batch(const char *body, const char *content_type,
                   const char *settings_text, int *rc) {
    size_t counted = 0, written = 0;
    *rc = api_question_batch(NULL, &counted, body, strlen(body), content_type,
                             settings_text, strlen(settings_text));
    if (*rc != 0)
        return NULL;
    char *out = malloc(counted + 1);
    assert_non_null(out);
    assert_int_equal(api_question_batch(out, &written, body, strlen(body),
                                        content_type, settings_text,
                                        strlen(settings_text)),
                     0);
    assert_int_equal(written, counted);
    out[written] = '\0';
    return out;
}

static void test_batch(void **state) {
    (void)state;
    int rc;
    char *out = batch("{\"id\":1}\n{ }\n\nnot json\n[1]\n  {\"a\":2}  \n",
                      "application/x-ndjson", "\"x\":1", &rc);
    assert_string_equal(out, "{\"id\":1,\"x\":1}\n{ \"x\":1}\n\nnot json\n[1]\n"
                             "  {\"a\":2,\"x\":1}  \n");
    free(out);
    out = batch("[{\"a\":1}, {}, 3]", "application/json", "\"x\":1", &rc);
    assert_string_equal(out, "[{\"a\":1,\"x\":1}, {\"x\":1}, 3]");
    free(out);
    assert_null(batch("{}", "text/plain", "\"x\":1", &rc));
    assert_int_equal(rc, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_settings),
        cmocka_unit_test(test_request),
        cmocka_unit_test(test_batch),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
