/*
 * test_api_cases.c — replays every data case under tests/cases through
 * api_handle() and compares the answer with expected.json (the rules are in
 * tests/cases/README.md). Run from the repository root (tests/run.sh does).
 */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <jansson.h>

#include "api.h"
#include "testfs.h"

#define CASES_DIR "tests/cases"
/* Number tolerances; a case's expected.json may set its own "atol" and
 * "rtol" (README.md). */
static double RTOL, ATOL;

typedef struct {
    char name[256];
    char dir[1024];
    char method[16];
    char path[256];
} api_case;

static json_t *load_json(const char *dir, const char *file) {
    char path[1100];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    struct stat st;
    if (stat(path, &st) != 0)
        return NULL;
    json_error_t err;
    json_t *j = json_load_file(path, JSON_DECODE_ANY, &err);
    if (!j)
        fail_msg("%s: %s", path, err.text);
    return j;
}

/* Structural comparison; on the first difference writes where and returns
 * 0. Numbers: |got - exp| <= ATOL + RTOL·|exp|; objects need the same
 * keys; arrays the same lengths. */
static int same(const json_t *exp, const json_t *got, char *where, size_t cap) {
    size_t len = strlen(where);
    if (json_is_number(exp)) {
        if (!json_is_number(got)) {
            snprintf(where + len, cap - len, ": expected a number");
            return 0;
        }
        double e = json_number_value(exp), g = json_number_value(got);
        if (fabs(g - e) <= ATOL + RTOL * fabs(e))
            return 1;
        snprintf(where + len, cap - len, ": expected %.17g, got %.17g", e, g);
        return 0;
    }
    if (json_typeof(exp) != json_typeof(got) &&
        !(json_is_boolean(exp) && json_is_boolean(got))) {
        snprintf(where + len, cap - len, ": type differs");
        return 0;
    }
    if (json_is_array(exp)) {
        if (json_array_size(exp) != json_array_size(got)) {
            snprintf(where + len, cap - len, ": length %zu, expected %zu",
                     json_array_size(got), json_array_size(exp));
            return 0;
        }
        for (size_t i = 0; i < json_array_size(exp); i++) {
            snprintf(where + len, cap - len, "/%zu", i);
            if (!same(json_array_get(exp, i), json_array_get(got, i), where,
                      cap))
                return 0;
        }
        where[len] = '\0';
        return 1;
    }
    if (json_is_object(exp)) {
        const char *key;
        json_t *v;
        json_object_foreach((json_t *)got, key, v) {
            if (!json_object_get(exp, key)) {
                snprintf(where + len, cap - len, "/%s: unexpected member", key);
                return 0;
            }
        }
        json_object_foreach((json_t *)exp, key, v) {
            snprintf(where + len, cap - len, "/%s", key);
            const json_t *g = json_object_get(got, key);
            if (!g) {
                snprintf(where + strlen(where), cap - strlen(where),
                         ": missing");
                return 0;
            }
            if (!same(v, g, where, cap))
                return 0;
        }
        where[len] = '\0';
        return 1;
    }
    if (json_equal((json_t *)exp, (json_t *)got))
        return 1;
    snprintf(where + len, cap - len, ": values differ");
    return 0;
}

static void check_problem(const api_case *c, const json_t *exp_body,
                          const json_t *body, int status) {
    static const char *const optional[] = {"pointer", "expected", "got"};
    assert_string_equal(json_string_value(json_object_get(body, "type")),
                        "about:blank");
    assert_true(json_is_string(json_object_get(body, "title")));
    assert_int_equal((int)json_number_value(json_object_get(body, "status")),
                     status);
    const char *detail = json_string_value(json_object_get(body, "detail"));
    assert_non_null(detail);
    assert_true(strlen(detail) > 10);
    const char *code = json_string_value(json_object_get(body, "code"));
    const char *want = json_string_value(json_object_get(exp_body, "code"));
    if (!code || strcmp(code, want) != 0)
        fail_msg("%s: code %s, expected %s (detail: %s)", c->name,
                 code ? code : "(none)", want, detail);
    for (size_t i = 0; i < 3; i++) {
        const json_t *e = json_object_get(exp_body, optional[i]);
        const json_t *g = json_object_get(body, optional[i]);
        if (!e && !g)
            continue;
        if (!e || !g || !json_equal((json_t *)e, (json_t *)g)) {
            char *es = e ? json_dumps(e, JSON_ENCODE_ANY) : NULL;
            char *gs = g ? json_dumps(g, JSON_ENCODE_ANY) : NULL;
            fail_msg("%s: %s is %s, expected %s (detail: %s)", c->name,
                     optional[i], gs ? gs : "absent", es ? es : "absent",
                     detail);
        }
    }
}

static double api_case_number(const json_t *obj, const char *key, double def) {
    const json_t *v = json_object_get(obj, key);
    return json_is_number(v) ? json_number_value(v) : def;
}

static void run_case(void **state) {
    const api_case *c = *state;
    size_t body_len = 0;
    char path[1100];
    snprintf(path, sizeof path, "%s/request.json", c->dir);
    char *body = test_slurp(path, &body_len);
    json_t *meta = load_json(c->dir, "meta.json");
    json_t *expected = load_json(c->dir, "expected.json");
    assert_non_null(expected);
    ATOL = api_case_number(expected, "atol", 1e-15);
    RTOL = api_case_number(expected, "rtol", 1e-12);

    api_request req = {0};
    req.method = c->method;
    req.path = c->path;
    req.content_type = "application/json";
    if (meta) {
        const json_t *v;
        if ((v = json_object_get(meta, "method")))
            req.method = json_string_value(v);
        if ((v = json_object_get(meta, "path")))
            req.path = json_string_value(v);
        if ((v = json_object_get(meta, "query")))
            req.query = json_string_value(v);
        if ((v = json_object_get(meta, "content_type")))
            req.content_type = json_string_value(v); /* null: no header */
        if ((v = json_object_get(meta, "accept")))
            req.accept = json_string_value(v);
    }
    req.body = body;
    req.body_len = body ? body_len : 0;

    api_response res;
    api_handle(&req, &res);
    int status = (int)json_integer_value(json_object_get(expected, "status"));
    if (res.status != status)
        fail_msg("%s: status %d, expected %d: %.*s", c->name, res.status,
                 status, (int)(res.body_len > 400 ? 400 : res.body_len),
                 res.body ? res.body : "");
    const json_t *allow = json_object_get(expected, "allow");
    if (allow) {
        assert_non_null(res.allow);
        assert_string_equal(res.allow, json_string_value(allow));
    }
    json_error_t err;
    json_t *got = json_loadb(res.body, res.body_len, 0, &err);
    if (!got) /* attnd prints integral doubles below 1e21 in full
               * (123456789012345680000), beyond what a json_int_t holds */
        got = json_loadb(res.body, res.body_len, JSON_DECODE_INT_AS_REAL, &err);
    if (!got)
        fail_msg("%s: the answer is not JSON: %s", c->name, err.text);
    const json_t *exp_body = json_object_get(expected, "body");
    const char *want_error =
        json_string_value(json_object_get(exp_body, "error"));
    if (status >= 400 && want_error) {
        /* the Open Inference Protocol's {"error": "message"} */
        assert_string_equal(res.content_type, "application/json");
        const char *msg = json_string_value(json_object_get(got, "error"));
        if (!msg || json_object_size(got) != 1 ||
            strncmp(msg, want_error, strlen(want_error)) != 0)
            fail_msg("%s: %.*s, expected {\"error\": \"%s...\"}", c->name,
                     (int)(res.body_len > 400 ? 400 : res.body_len), res.body,
                     want_error);
    } else if (status >= 400) {
        assert_string_equal(res.content_type, "application/problem+json");
        check_problem(c, exp_body, got, status);
    } else {
        assert_string_equal(res.content_type, "application/json");
        char where[512] = "";
        if (!same(exp_body, got, where, sizeof where))
            fail_msg("%s: body%s", c->name, where);
    }
    json_decref(got);
    api_response_free(&res);
    json_decref(expected);
    json_decref(meta);
    free(body);
}

int main(void) {
    char **endpoints;
    size_t n_endpoints = test_list(CASES_DIR, 1, &endpoints);
    size_t n = 0, cap = 64;
    api_case *cases = malloc(cap * sizeof *cases);
    for (size_t i = 0; i < n_endpoints; i++) {
        char edir[512], route_file[600];
        snprintf(edir, sizeof edir, "%s/%s", CASES_DIR, endpoints[i]);
        snprintf(route_file, sizeof route_file, "%s/route", edir);
        size_t len;
        char *route = test_slurp(route_file, &len);
        char method[16] = "", path[256] = "";
        if (!route || sscanf(route, "%15s %255s", method, path) != 2) {
            fprintf(stderr, "%s: no route file\n", edir);
            return 1;
        }
        free(route);
        char **names;
        size_t m = test_list(edir, 1, &names);
        for (size_t j = 0; j < m; j++) {
            if (n == cap)
                cases = realloc(cases, (cap *= 2) * sizeof *cases);
            api_case *c = &cases[n++];
            snprintf(c->name, sizeof c->name, "%s/%s", endpoints[i], names[j]);
            snprintf(c->dir, sizeof c->dir, "%s/%s", edir, names[j]);
            snprintf(c->method, sizeof c->method, "%s", method);
            snprintf(c->path, sizeof c->path, "%s", path);
            free(names[j]);
        }
        free(names);
        free(endpoints[i]);
    }
    free(endpoints);
    if (n == 0) {
        fprintf(stderr, "no cases under %s (run from the repository root)\n",
                CASES_DIR);
        return 1;
    }
    struct CMUnitTest *tests = calloc(n, sizeof *tests);
    for (size_t i = 0; i < n; i++) {
        tests[i].name = cases[i].name;
        tests[i].test_func = run_case;
        tests[i].initial_state = &cases[i];
    }
    int rc = _cmocka_run_group_tests("api_cases", tests, n, NULL, NULL);
    free(tests);
    free(cases);
    return rc;
}
