/*
 * test_api_grade.c — POST /grade through api_handle().
 *
 * 1. Every successful data case of every computing route
 *    (tests/cases/<endpoint>/<case>, answers from the plain-Python
 *    reference) is graded as the student's answer to its own request: every
 *    field passes with the default tolerances, and with one entry moved
 *    far off that field alone fails, with mismatches 1 and the first
 *    mismatch at that entry's pointer.
 * 2. The tolerance rule at its boundary, max_rel_err skipping zero
 *    expected values, pointers of nested, flat, scalar and record answers,
 *    null and absent entries — on requests whose answers are exact (d2l's
 *    toy keys with one or two visible keys: weights 1 and 1/2).
 * Run from the repository root (tests/run.sh does).
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

#define CASES_DIR "tests/cases"

/* POST body (a JSON document) to path; the answer parsed (status in
 * *status). */
static json_t *post(const char *path, const json_t *body, int *status) {
    char *text = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
    api_request req = {.method = "POST",
                       .path = path,
                       .content_type = "application/json",
                       .body = text,
                       .body_len = strlen(text)};
    api_response res;
    api_handle(&req, &res);
    *status = res.status;
    json_error_t err;
    json_t *answer = json_loadb(res.body, res.body_len, 0, &err);
    if (!answer)
        fail_msg("answer is not JSON: %.*s", (int)res.body_len, res.body);
    api_response_free(&res);
    free(text);
    return answer;
}

static json_t *grade(const char *endpoint, json_t *request, json_t *answer,
                     int *status) {
    json_t *body = json_pack("{s:s,s:O,s:O}", "endpoint", endpoint, "request",
                             request, "answer", answer);
    json_t *res = post("/grade", body, status);
    json_decref(body);
    return res;
}

static json_t *grade_ok(const char *endpoint, json_t *request, json_t *answer) {
    int status;
    json_t *res = grade(endpoint, request, answer, &status);
    if (status != 200) {
        char *s = json_dumps(res, JSON_COMPACT);
        fail_msg("/grade %s: status %d: %s", endpoint, status, s);
    }
    return res;
}

/* ------------------------------------------- 1. every data case */

static int is_dir(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The first number of v in document order (its pointer appended to at),
 * or NULL. Skips diagnostics.warnings' row indices: not graded. */
static json_t *first_number(json_t *v, char *at, size_t cap) {
    size_t len = strlen(at);
    if (json_is_number(v))
        return v;
    if (json_is_array(v)) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            snprintf(at + len, cap - len, "/%zu", i);
            json_t *n = first_number(json_array_get(v, i), at, cap);
            if (n)
                return n;
        }
    } else if (json_is_object(v)) {
        const char *key;
        json_t *m;
        json_object_foreach(v, key, m) {
            if (!strcmp(key, "shape")) /* of a {"shape", "data"} answer */
                continue;
            snprintf(at + len, cap - len, "/%s", key);
            json_t *n = first_number(m, at, cap);
            if (n)
                return n;
        }
    }
    at[len] = '\0';
    return NULL;
}

/* Percent-decode s in place ('+' is a space, as the server reads it). */
static void url_decode(char *s) {
    char *w = s;
    for (; *s; s++) {
        unsigned hi, lo;
        if (*s == '%' && sscanf(s + 1, "%1x%1x", &hi, &lo) == 2) {
            *w++ = (char)(hi * 16 + lo);
            s += 2;
        } else {
            *w++ = *s == '+' ? ' ' : *s;
        }
    }
    *w = '\0';
}

/* The request object of a case: the body, or for a GET route the query
 * string's parameters as strings. */
static json_t *case_request(const char *dir, const char *method,
                            const json_t *meta) {
    char file[1200];
    if (!strcmp(method, "POST")) {
        snprintf(file, sizeof file, "%s/request.json", dir);
        return json_load_file(file, 0, NULL);
    }
    json_t *obj = json_object();
    const char *q = json_string_value(json_object_get(meta, "query"));
    char *copy = strdup(q ? q : "");
    for (char *save = NULL, *tok = strtok_r(copy, "&", &save); tok;
         tok = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq)
            continue;
        *eq = '\0';
        url_decode(tok);
        url_decode(eq + 1);
        json_object_set_new(obj, tok, json_string(eq + 1));
    }
    free(copy);
    return obj;
}

static void self_grade_case(const char *endpoint, const char *dir,
                            const char *method, size_t *graded) {
    char file[1200];
    snprintf(file, sizeof file, "%s/expected.json", dir);
    json_t *expected = json_load_file(file, 0, NULL);
    snprintf(file, sizeof file, "%s/meta.json", dir);
    json_t *meta = json_load_file(file, 0, NULL);
    int usable =
        expected &&
        json_integer_value(json_object_get(expected, "status")) == 200 &&
        !json_object_get(meta, "method") && !json_object_get(meta, "accept") &&
        !json_object_get(meta, "path") &&
        !json_object_get(meta, "content_type");
    json_t *request = usable ? case_request(dir, method, meta) : NULL;
    if (json_is_object(request)) {
        json_t *answer = json_deep_copy(json_object_get(expected, "body"));
        json_object_del(json_object_get(answer, "diagnostics"), "warnings");
        json_t *res = grade_ok(endpoint, request, answer);
        if (!json_is_true(json_object_get(res, "pass"))) {
            char *s = json_dumps(res, JSON_COMPACT);
            fail_msg("%s: its own reference answer fails: %.600s", dir, s);
        }
        /* one entry far off: that field alone fails, at that entry */
        char at[512] = "/answer";
        json_t *n = first_number(answer, at, sizeof at);
        if (n) {
            double x = json_number_value(n);
            if (json_is_integer(n))
                json_integer_set(n, (json_int_t)(x + 1 + fabs(x)));
            else
                json_real_set(n, x + 1 + fabs(x));
            json_decref(res);
            res = grade_ok(endpoint, request, answer);
            assert_false(json_is_true(json_object_get(res, "pass")));
            size_t failed = 0;
            const char *name;
            json_t *f;
            json_object_foreach(json_object_get(res, "fields"), name, f) {
                if (json_is_true(json_object_get(f, "pass")))
                    continue;
                failed++;
                const char *p = json_string_value(json_object_get(
                    json_object_get(f, "first_mismatch"), "pointer"));
                if (!p || strcmp(p, at) != 0 ||
                    json_integer_value(json_object_get(f, "mismatches")) != 1)
                    fail_msg("%s: moved %s, got %s", dir, at,
                             json_dumps(f, JSON_COMPACT));
            }
            assert_int_equal(failed, 1);
        }
        json_decref(res);
        json_decref(answer);
        (*graded)++;
    }
    json_decref(request);
    json_decref(meta);
    json_decref(expected);
}

static void test_every_case_grades_its_reference(void **state) {
    (void)state;
    DIR *d = opendir(CASES_DIR);
    assert_non_null(d);
    size_t graded = 0, endpoints = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char edir[600], file[800];
        snprintf(edir, sizeof edir, "%s/%s", CASES_DIR, e->d_name);
        snprintf(file, sizeof file, "%s/route", edir);
        FILE *f = e->d_name[0] != '.' ? fopen(file, "r") : NULL;
        char method[16], path[256];
        int ok = f && fscanf(f, "%15s %255s", method, path) == 2;
        if (f)
            fclose(f);
        /* the computing routes: not /grade itself, not the v2 front */
        if (!ok || !strcmp(path, "/grade") || !strncmp(path, "/v2", 3))
            continue;
        endpoints++;
        DIR *cd = opendir(edir);
        struct dirent *c;
        while (cd && (c = readdir(cd))) {
            char cdir[1100];
            snprintf(cdir, sizeof cdir, "%s/%s", edir, c->d_name);
            if (c->d_name[0] != '.' && is_dir(cdir))
                self_grade_case(path, cdir, method, &graded);
        }
        if (cd)
            closedir(cd);
    }
    closedir(d);
    print_message("# graded %zu reference answers of %zu routes\n", graded,
                  endpoints);
    assert_true(endpoints >= 7);
    assert_true(graded >= 100);
}

/* ------------------------------------------- 2. the rules, exactly */

/* d2l's toy keys and values with valid_lens [1, 2]: outputs
 * [[0, 1, 2, 3]] and [[2, 3, 4, 5]], exact. */
static json_t *exact_request(void) {
    json_t *keys = json_array(), *values = json_array();
    for (int b = 0; b < 2; b++) {
        json_t *kb = json_array(), *vb = json_array();
        for (int i = 0; i < 10; i++) {
            json_array_append_new(kb, json_pack("[f,f]", 1.0, 1.0));
            json_array_append_new(vb, json_pack("[i,i,i,i]", 4 * i, 4 * i + 1,
                                                4 * i + 2, 4 * i + 3));
        }
        json_array_append_new(keys, kb);
        json_array_append_new(values, vb);
    }
    return json_pack("{s:[[[f,f]],[[f,f]]],s:o,s:o,s:[i,i]}", "queries", 0.3,
                     -1.2, 2.0, 0.5, "keys", keys, "values", values,
                     "valid_lens", 1, 2);
}

static json_t *field(json_t *res, const char *name) {
    json_t *f = json_object_get(json_object_get(res, "fields"), name);
    if (!f)
        fail_msg("no field %s in %s", name, json_dumps(res, JSON_COMPACT));
    return f;
}

static double num(json_t *obj, const char *key) {
    return json_number_value(json_object_get(obj, key));
}

static void test_tolerance_boundary(void **state) {
    (void)state;
    json_t *request = exact_request();
    /* expected 4 at [1][0][2]: tol = 0.5 + 0.25·4 = 1.5; 5.5 is on it */
    double cases[2][2] = {{5.5, 1}, {5.5000000001, 0}};
    for (int c = 0; c < 2; c++) {
        json_t *body = json_pack(
            "{s:s,s:O,s:{s:[[[i,i,i,i]],[[i,i,f,i]]]},s:f,s:f}", "endpoint",
            "/attention/dot", "request", request, "answer", "output", 0, 1, 2,
            3, 2, 3, cases[c][0], 5, "rtol", 0.25, "atol", 0.5);
        int status;
        json_t *res = post("/grade", body, &status);
        assert_int_equal(status, 200);
        json_t *f = field(res, "output");
        assert_int_equal(json_is_true(json_object_get(f, "pass")),
                         (int)cases[c][1]);
        assert_int_equal(json_is_true(json_object_get(res, "pass")),
                         (int)cases[c][1]);
        assert_true(num(f, "max_abs_err") == cases[c][0] - 4);
        assert_true(num(f, "max_rel_err") == (cases[c][0] - 4) / 4);
        json_decref(res);
        json_decref(body);
    }
    json_decref(request);
}

static void test_rel_err_skips_zero_expected(void **state) {
    (void)state;
    json_t *request = exact_request();
    /* [0][0][0] expects 0 and gets 0.5 (abs error 0.5, no relative one);
     * [1][0][3] expects 5 and gets 5.1 (relative 0.02) */
    json_t *answer = json_pack("{s:[[[f,i,i,i]],[[i,i,i,f]]]}", "output", 0.5,
                               1, 2, 3, 2, 3, 4, 5.1);
    json_t *res = grade_ok("/attention/dot", request, answer);
    json_t *f = field(res, "output");
    assert_true(num(f, "max_abs_err") == 0.5);
    assert_true(fabs(num(f, "max_rel_err") - 0.1 / 5) < 1e-15);
    assert_int_equal(json_integer_value(json_object_get(f, "mismatches")), 2);
    json_t *first = json_object_get(f, "first_mismatch");
    assert_string_equal(json_string_value(json_object_get(first, "pointer")),
                        "/answer/output/0/0/0");
    assert_true(num(first, "expected") == 0);
    assert_true(num(first, "got") == 0.5);
    json_decref(res);
    json_decref(answer);
    json_decref(request);
}

static void test_pointers_of_each_form(void **state) {
    (void)state;
    json_t *request = exact_request();
    json_object_set_new(request, "return_scores", json_true());
    /* flat output wrong at data 6 ([1][0][2]); scores: masked entries are
     * null (key 1 of example 0 is masked; example 1 sees keys 0 and 1) */
    json_t *data = json_pack("[i,i,i,i,i,i,i,i]", 0, 1, 2, 3, 2, 3, 9, 5);
    json_t *scores = json_array();
    for (int b = 0; b < 2; b++) {
        json_t *row = json_array();
        for (int j = 0; j < 10; j++)
            json_array_append_new(row, j <= b ? json_null() : json_null());
        json_array_append_new(scores, json_pack("[o]", row));
    }
    /* the visible scores are q·k/sqrt(2): -0.9/sqrt(2) and 2.5/sqrt(2) */
    json_array_set_new(json_array_get(json_array_get(scores, 0), 0), 0,
                       json_real(-0.9 / sqrt(2.0)));
    json_array_set_new(json_array_get(json_array_get(scores, 1), 0), 0,
                       json_real(2.5 / sqrt(2.0)));
    json_array_set_new(json_array_get(json_array_get(scores, 1), 0), 1,
                       json_real(2.5 / sqrt(2.0)));
    json_t *answer =
        json_pack("{s:{s:[i,i,i],s:o},s:o,s:f}", "output", "shape", 2, 1, 4,
                  "data", data, "scores", scores, "scale", 0.5);
    json_t *res = grade_ok("/attention/dot", request, answer);
    json_t *first = json_object_get(field(res, "output"), "first_mismatch");
    assert_string_equal(json_string_value(json_object_get(first, "pointer")),
                        "/answer/output/data/6");
    json_t *s = field(res, "scores");
    if (!json_is_true(json_object_get(s, "pass")))
        fail_msg("scores: %s", json_dumps(s, JSON_COMPACT));
    first = json_object_get(field(res, "scale"), "first_mismatch");
    assert_string_equal(json_string_value(json_object_get(first, "pointer")),
                        "/answer/scale");
    assert_true(fabs(num(first, "expected") - 1 / sqrt(2.0)) < 1e-15);
    /* a number where a masked score is null: a mismatch at that entry */
    json_array_set_new(json_array_get(json_array_get(scores, 1), 0), 9,
                       json_real(0));
    json_decref(res);
    res = grade_ok("/attention/dot", request, answer);
    s = field(res, "scores");
    assert_int_equal(json_integer_value(json_object_get(s, "mismatches")), 1);
    first = json_object_get(s, "first_mismatch");
    assert_string_equal(json_string_value(json_object_get(first, "pointer")),
                        "/answer/scores/1/0/9");
    assert_true(json_is_null(json_object_get(first, "expected")));
    assert_true(num(first, "got") == 0);
    json_decref(res);
    json_decref(answer);
    json_decref(request);
}

static void test_records_and_absent_members(void **state) {
    (void)state;
    /* the contract's NW example, one epoch on the query data: history
     * [{"epoch": 1, "w": 0.5, "loss": 1.1590361819101205}] */
    json_t *request = json_pack(
        "{s:[i,i,i],s:[i,i,i],s:[f],s:f,s:[i],s:{s:i,s:f,s:s}}", "x_train", 1,
        2, 4, "y_train", 0, 3, 1, "x_query", 2.5, "w", 0.5, "y_query", 3, "fit",
        "epochs", 1, "lr", 0.1, "data", "query");
    json_t *answer = json_pack("{s:[{s:i,s:f}],s:f}", "history", "epoch", 1,
                               "w", 0.5, "w", 0.5906346162164808);
    json_t *res = grade_ok("/regression/nw", request, answer);
    json_t *h = field(res, "history");
    assert_int_equal(json_integer_value(json_object_get(h, "mismatches")), 1);
    json_t *first = json_object_get(h, "first_mismatch");
    assert_string_equal(json_string_value(json_object_get(first, "pointer")),
                        "/answer/history/0/loss");
    assert_true(fabs(num(first, "expected") - 1.1590361819101205) < 1e-12);
    assert_true(json_is_null(json_object_get(first, "got")));
    assert_true(json_is_true(json_object_get(field(res, "w"), "pass")));
    assert_true(fabs(num(field(res, "w"), "max_abs_err")) < 1e-12);
    json_decref(res);
    json_decref(answer);
    json_decref(request);
}

static void test_errors_point_into_the_grading_request(void **state) {
    (void)state;
    json_t *request = exact_request();
    /* valid_lens 11 > Nk: the endpoint's invalid_value, under /request */
    json_array_set_new(json_object_get(request, "valid_lens"), 1,
                       json_integer(11));
    json_t *answer = json_pack("{s:i}", "scale", 1);
    int status;
    json_t *res = grade("/attention/dot", request, answer, &status);
    assert_int_equal(status, 422);
    assert_string_equal(json_string_value(json_object_get(res, "pointer")),
                        "/request/valid_lens/1");
    assert_string_equal(json_string_value(json_object_get(res, "code")),
                        "invalid_value");
    json_decref(res);
    json_decref(answer);
    json_decref(request);
}

/* A member is named one level at a time, as the endpoint answers it:
 * "diagnostics.entropy" at the top level is not a field (else the same
 * field could be graded twice, under one key printed twice). */
static void test_dotted_names_are_unknown(void **state) {
    (void)state;
    json_t *request = exact_request();
    json_object_set_new(request, "diagnostics", json_true());
    json_t *answer = json_pack("{s:{s:[f]},s:[f]}", "diagnostics", "entropy",
                               1.0, "diagnostics.entropy", 2.0);
    int status;
    json_t *res = grade("/attention/dot", request, answer, &status);
    assert_int_equal(status, 422);
    assert_string_equal(json_string_value(json_object_get(res, "code")),
                        "unknown_field");
    assert_string_equal(json_string_value(json_object_get(res, "pointer")),
                        "/answer/diagnostics.entropy");
    json_decref(res);
    json_decref(answer);
    json_decref(request);
}

/* A GET endpoint's real-valued parameter reaches it as the number it is:
 * 1e+300's "+" is percent-encoded, not read back as a space. */
static void test_get_query_numbers_keep_their_exponent(void **state) {
    (void)state;
    json_t *request = json_pack("{s:f,s:i}", "num_steps", 1e300, "d", 3);
    json_t *answer = json_pack("{s:[[f]]}", "P", 0.0);
    int status;
    json_t *res = grade("/encoding/positional", request, answer, &status);
    assert_int_equal(status, 422);
    assert_string_equal(json_string_value(json_object_get(res, "pointer")),
                        "/request/num_steps");
    const char *detail = json_string_value(json_object_get(res, "detail"));
    if (strstr(detail, "1e 300"))
        fail_msg("the exponent's sign was lost: %s", detail);
    json_decref(res);
    json_decref(answer);
    json_decref(request);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_case_grades_its_reference),
        cmocka_unit_test(test_tolerance_boundary),
        cmocka_unit_test(test_rel_err_skips_zero_expected),
        cmocka_unit_test(test_pointers_of_each_form),
        cmocka_unit_test(test_records_and_absent_members),
        cmocka_unit_test(test_errors_point_into_the_grading_request),
        cmocka_unit_test(test_dotted_names_are_unknown),
        cmocka_unit_test(test_get_query_numbers_keep_their_exponent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
