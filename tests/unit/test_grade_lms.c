/*
 * test_grade_lms.c — the typed grade and its documents (grade.h,
 * grade_result.h, grade_lms.h): api_grade_run fills fields, scores and
 * points; api_grade_write is /grade's own answer; api_grade_write_lms
 * writes one Gradescope or PrairieLearn document for several submissions,
 * graded ones and problems.
 *
 * With "--write DIR" it writes those documents to DIR instead
 * (gradescope_batch.json, prairielearn_batch.json,
 * prairielearn_problems.json), for tests/grading/test_formats.py to check
 * against the published schemas. Run from the repository root.
 */
#include <math.h>
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
#include "budget.h"
#include "call.h"
#include "grade.h"
#include "misconceptions.h"

/* d2l's two keys: weights softmax([1, 2]/√2) */
#define REQUEST                                                                \
    "\"endpoint\": \"/attention/dot\", \"request\": {\"queries\": [[1, 2]], "  \
    "\"keys\": [[1, 0], [0, 1]], \"values\": [[1], [2]]}"
/* right to five digits */
#define RIGHT                                                                  \
    "{" REQUEST ", \"answer\": {\"output\": [[1.66976]], \"weights\": "        \
    "[[0.33024, 0.66976]]}, \"id\": \"ada\"}"
/* the scores not scaled by 1/√2: dot.no_scale */
#define NO_SCALE                                                               \
    "{" REQUEST ", \"answer\": {\"output\": [[1.7310585786300049]], "          \
    "\"weights\": [[0.2689414213699951, 0.7310585786300049]]}, \"id\": "       \
    "\"bo\", \"points\": {\"output\": 3, \"weights\": 1}}"
/* one weight right, one wrong; partial credit */
#define HALF                                                                   \
    "{" REQUEST ", \"answer\": {\"weights\": [[0.33024, 0.5]]}, \"id\": 7, "   \
    "\"credit\": \"partial\", \"points\": 4}"
#define MISSPELT "{" REQUEST ", \"answer\": {\"outptu\": [[1.67]]}}"

typedef struct {
    api_request req;
    api_limits limits;
    api_ledger ledger;
    api_call call;
} grading;

static void start(grading *g) {
    memset(g, 0, sizeof *g);
    g->req.method = "POST";
    g->req.path = "/grade";
    api_limits_default(&g->limits);
    g->ledger.may_wait = 1;
    g->call.req = &g->req;
    g->call.limits = &g->limits;
    g->call.ledger = &g->ledger;
    g->call.status = 200;
    g->call.compute_ms = -1;
}

/* api_grade_run on text; returns its rc, the problem in *problem. */
static int run(const char *text, api_grade *grade, api_problem *problem) {
    json_error_t err;
    json_t *body = json_loads(text, 0, &err);
    if (!body)
        fail_msg("bad test body: %s", err.text);
    grading g;
    start(&g);
    int rc = api_grade_run(&g.call, body, NULL, grade);
    *problem = g.call.problem;
    api_ledger_settle(&g.ledger, 0);
    json_decref(body);
    return rc;
}

static json_t *parse(const api_buf *b) {
    assert_false(b->failed);
    json_error_t err;
    json_t *j = json_loadb(b->data, b->len, 0, &err);
    if (!j)
        fail_msg("not JSON (%s): %.*s", err.text, (int)b->len, b->data);
    return j;
}

static double num(const json_t *obj, const char *key) {
    const json_t *v = json_object_get(obj, key);
    if (!json_is_number(v))
        fail_msg("%s is not a number", key);
    return json_number_value(v);
}

static const char *str(const json_t *obj, const char *key) {
    const json_t *v = json_object_get(obj, key);
    if (!json_is_string(v))
        fail_msg("%s is not a string", key);
    return json_string_value(v);
}

/* The four submissions: three graded, one a problem. */
typedef struct {
    api_grade right, no_scale, half;
    api_problem misspelt;
    api_grade_item items[4];
} batch;

static void grade_batch(batch *b) {
    api_problem p;
    memset(b, 0, sizeof *b);
    assert_int_equal(run(RIGHT, &b->right, &p), 0);
    assert_int_equal(run(NO_SCALE, &b->no_scale, &p), 0);
    assert_int_equal(run(HALF, &b->half, &p), 0);
    api_grade dummy;
    assert_int_equal(run(MISSPELT, &dummy, &b->misspelt), -1);
    assert_int_equal(dummy.n_fields, 0);
    const api_grade *grades[3] = {&b->right, &b->no_scale, &b->half};
    for (size_t i = 0; i < 3; i++) {
        b->items[i].grade = grades[i];
        b->items[i].id = grades[i]->id_text.data;
        b->items[i].id_len = grades[i]->id_text.len;
    }
    b->items[3].id = "cy";
    b->items[3].id_len = 2;
    b->items[3].problem = &b->misspelt;
    json_t *body = json_loads(MISSPELT, 0, NULL);
    b->items[3].problem_points = api_grade_body_points(body);
    json_decref(body);
}

static void free_batch(batch *b) {
    api_grade_free(&b->right);
    api_grade_free(&b->no_scale);
    api_grade_free(&b->half);
}

/* api_grade_run: verdicts, misconception, points and scores. */
static void test_run_scores(void **state) {
    (void)state;
    batch b;
    grade_batch(&b);
    assert_true(b.right.pass);
    assert_int_equal(b.right.n_fields, 2);
    assert_true(b.right.score == 1 && b.right.earned == 2 &&
                b.right.possible == 2);
    assert_null(b.right.misconception);

    assert_false(b.no_scale.pass);
    assert_non_null(b.no_scale.misconception);
    assert_string_equal(b.no_scale.misconception->code, "dot.no_scale");
    assert_true(b.no_scale.fields[0].explained &&
                b.no_scale.fields[1].explained);
    assert_true(b.no_scale.fields[0].points == 3 &&
                b.no_scale.fields[1].points == 1);
    assert_true(b.no_scale.score == 0 && b.no_scale.possible == 4);

    /* partial: weights [0.33024, 0.5], one entry of two matches */
    assert_int_equal(b.half.n_fields, 1);
    assert_int_equal(b.half.fields[0].entries, 2);
    assert_int_equal(b.half.fields[0].mismatches, 1);
    assert_true(b.half.fields[0].score == 0.5);
    assert_true(b.half.earned == 2 && b.half.possible == 4 &&
                b.half.score == 0.5);

    assert_int_equal(b.misspelt.code, API_E_UNKNOWN_FIELD);
    assert_string_equal(b.misspelt.pointer, "/answer/outptu");
    assert_true(b.items[3].problem_points == 1);
    free_batch(&b);
}

/* api_grade_write: the id first, then pass, score and points. */
static void test_write_attnd(void **state) {
    (void)state;
    batch b;
    grade_batch(&b);
    api_buf out = {0};
    api_grade_write(&b.half, &out);
    assert_true(out.len > 30);
    assert_memory_equal(out.data,
                        "{\"id\":7,\"pass\":false,\"score\":0.5,"
                        "\"points\":{\"earned\":2,\"possible\":4},",
                        60);
    json_t *j = parse(&out);
    json_t *w = json_object_get(json_object_get(j, "fields"), "weights");
    assert_true(num(w, "score") == 0.5);
    assert_true(json_is_null(json_object_get(j, "misconception")));
    json_decref(j);
    api_buf_free(&out);
    free_batch(&b);
}

/* One Gradescope document for the four: a test per field named
 * "<id>: <field>", the problem a test of 0, scores in points. */
static void test_gradescope_batch(void **state) {
    (void)state;
    batch b;
    grade_batch(&b);
    api_buf out = {0};
    assert_int_equal(
        api_grade_write_lms(API_GRADE_FORMAT_GRADESCOPE, b.items, 4, &out), 0);
    json_t *j = parse(&out);
    /* 2 (ada) + 0 (bo) + 2 (7) + 0 (cy) */
    assert_true(num(j, "score") == 4);
    json_t *tests = json_object_get(j, "tests");
    assert_int_equal(json_array_size(tests), 2 + 2 + 1 + 1);
    json_t *t = json_array_get(tests, 0);
    assert_string_equal(str(t, "name"), "ada: output");
    assert_true(num(t, "score") == 1 && num(t, "max_score") == 1);
    assert_string_equal(str(t, "visibility"), "visible");
    assert_true(!strncmp(str(t, "output"), "pass: 1 entry matches", 21));
    t = json_array_get(tests, 2);
    assert_string_equal(str(t, "name"), "bo: output");
    assert_true(num(t, "score") == 0 && num(t, "max_score") == 3);
    assert_non_null(strstr(str(t, "output"), "misconception dot.no_scale: "));
    assert_non_null(strstr(str(t, "output"),
                           "first at /answer/output/0/0: expected "
                           "1.6697615493266569, got 1.731058578630005"));
    t = json_array_get(tests, 4);
    assert_string_equal(str(t, "name"), "7: weights");
    assert_true(num(t, "score") == 2 && num(t, "max_score") == 4);
    assert_non_null(strstr(str(t, "output"), "fail: 1 of 2 entries differ"));
    t = json_array_get(tests, 5);
    assert_string_equal(str(t, "name"), "cy");
    assert_true(num(t, "score") == 0 && num(t, "max_score") == 1);
    assert_true(!strncmp(str(t, "output"),
                         "not graded: unknown_field at /answer/outptu: "
                         "unknown field `outptu` in the answer; did you mean "
                         "`output`? /attention/dot answers with: output, ",
                         136));
    const char *lines = str(j, "output");
    assert_true(!strncmp(lines,
                         "ada: pass: 2 of 2 fields pass, 2 of 2 points\n"
                         "bo: fail: 0 of 2 fields pass, 0 of 4 points; "
                         "misconception dot.no_scale: ",
                         97));
    json_decref(j);
    api_buf_free(&out);
    free_batch(&b);
}

/* One PrairieLearn document: score in [0, 1] over all the points,
 * format_errors for the problem; problems alone are not gradable. */
static void test_prairielearn_batch(void **state) {
    (void)state;
    batch b;
    grade_batch(&b);
    api_buf out = {0};
    assert_int_equal(
        api_grade_write_lms(API_GRADE_FORMAT_PRAIRIELEARN, b.items, 4, &out),
        0);
    json_t *j = parse(&out);
    assert_true(json_is_true(json_object_get(j, "gradable")));
    /* (2 + 0 + 2 + 0) / (2 + 4 + 4 + 1) */
    assert_true(fabs(num(j, "score") - 4.0 / 11.0) < 1e-15);
    json_t *tests = json_object_get(j, "tests");
    assert_int_equal(json_array_size(tests), 6);
    json_t *t = json_array_get(tests, 3);
    assert_string_equal(str(t, "name"), "bo: weights");
    assert_true(num(t, "points") == 0 && num(t, "max_points") == 1);
    assert_string_equal(str(t, "message"), "fail");
    json_t *errors = json_object_get(j, "format_errors");
    assert_int_equal(json_array_size(errors), 1);
    assert_true(!strncmp(json_string_value(json_array_get(errors, 0)),
                         "cy: not graded: unknown_field at /answer/outptu",
                         47));
    json_decref(j);
    api_buf_free(&out);

    /* the problem alone */
    assert_int_equal(api_grade_write_lms(API_GRADE_FORMAT_PRAIRIELEARN,
                                         &b.items[3], 1, &out),
                     0);
    j = parse(&out);
    assert_true(json_is_false(json_object_get(j, "gradable")));
    assert_int_equal(json_array_size(json_object_get(j, "format_errors")), 1);
    json_decref(j);
    api_buf_free(&out);
    /* attnd is no LMS document */
    assert_int_equal(
        api_grade_write_lms(API_GRADE_FORMAT_ATTND, b.items, 4, &out), -1);
    assert_int_equal(out.len, 0);
    free_batch(&b);
}

/* api_grade_body_points: what an ungradable body says it is worth. */
static void test_body_points(void **state) {
    (void)state;
    const char *bodies[] = {"{\"points\": 5}",
                            "{\"points\": {\"a\": 2, \"b\": -1, \"c\": 1.5}}",
                            "{\"answer\": {\"a\": 1, \"b\": 2, \"c\": 3}}",
                            "{\"points\": -3}", "[]"};
    const double want[] = {5, 3.5, 3, 1, 1};
    for (size_t i = 0; i < 5; i++) {
        json_t *j = json_loads(bodies[i], 0, NULL);
        assert_true(api_grade_body_points(j) == want[i]);
        json_decref(j);
    }
}

static int write_to(const char *dir) {
    batch b;
    grade_batch(&b);
    struct {
        const char *file;
        api_grade_format fmt;
        size_t from, n;
    } docs[] = {
        {"gradescope_batch.json", API_GRADE_FORMAT_GRADESCOPE, 0, 4},
        {"prairielearn_batch.json", API_GRADE_FORMAT_PRAIRIELEARN, 0, 4},
        {"gradescope_problems.json", API_GRADE_FORMAT_GRADESCOPE, 3, 1},
        {"prairielearn_problems.json", API_GRADE_FORMAT_PRAIRIELEARN, 3, 1}};
    int rc = 0;
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++) {
        api_buf out = {0};
        api_grade_write_lms(docs[i].fmt, b.items + docs[i].from, docs[i].n,
                            &out);
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, docs[i].file);
        FILE *f = fopen(path, "w");
        if (!f || fwrite(out.data, 1, out.len, f) != out.len)
            rc = 1;
        if (f)
            fclose(f);
        api_buf_free(&out);
    }
    free_batch(&b);
    return rc;
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "--write"))
        return write_to(argv[2]);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_run_scores),
        cmocka_unit_test(test_write_attnd),
        cmocka_unit_test(test_gradescope_batch),
        cmocka_unit_test(test_prairielearn_batch),
        cmocka_unit_test(test_body_points),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
