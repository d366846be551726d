/*
 * test_api_grade_batch.c — POST /grade/batch through api_handle(), and
 * its parts: the scan that cuts a body into submissions (batch_scan.h)
 * and the canonical form of a request (request_key.h).
 *
 * What is shared is counted through the batch's provider
 * (api_batch_last_stats, batch.h): references and mistakes' answers
 * computed, requests not parsed again.
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
#include "batch.h"
#include "batch_scan.h"
#include "buf.h"
#include "request_key.h"

#define NDJSON "application/x-ndjson"

/* d2l's toy: one query, two keys, d = 2 (scale 1/√2). */
#define REQ                                                                    \
    "{\"queries\":[[[1,0]]],\"keys\":[[[1,0],[0,1]]],"                         \
    "\"values\":[[[1,2],[3,4]]]}"
/* the same request: other member order, whitespace, 1.0 and 1e0 */
#define REQ_SPELLED_OTHERWISE                                                  \
    "{ \"values\" : [[[1e0,2],[3,4.0]]],\t \"keys\":[[[1.0,0],[0,1]]],"        \
    "\"queries\":[[[1,0e0]]] }"
/* another request */
#define REQ2                                                                   \
    "{\"queries\":[[[0,1]]],\"keys\":[[[1,0],[0,1]]],"                         \
    "\"values\":[[[1,2],[3,4]]]}"

static char right[128], unscaled[128], right2[128];

/* The outputs of REQ (scaled and not) and REQ2, printed exactly. */
static void answers(void) {
    double w = 1 / (1 + exp(-1 / sqrt(2))); /* softmax([1/√2, 0])[0] */
    snprintf(right, sizeof right, "{\"output\":[[[%.17g,%.17g]]]}",
             w + 3 * (1 - w), 2 * w + 4 * (1 - w));
    double u = 1 / (1 + exp(-1.0)); /* without 1/√d */
    snprintf(unscaled, sizeof unscaled, "{\"output\":[[[%.17g,%.17g]]]}",
             u + 3 * (1 - u), 2 * u + 4 * (1 - u));
    double v = 1 - w; /* REQ2 weighs the second key */
    snprintf(right2, sizeof right2, "{\"output\":[[[%.17g,%.17g]]]}",
             v + 3 * (1 - v), 2 * v + 4 * (1 - v));
}

/* One submission's text. */
static void sub(api_buf *b, const char *id, const char *request,
                const char *answer) {
    api_buf_puts(b, "{\"id\":");
    api_buf_puts(b, id);
    api_buf_puts(b, ",\"endpoint\":\"/attention/dot\",\"request\":");
    api_buf_puts(b, request);
    api_buf_puts(b, ",\"answer\":");
    api_buf_puts(b, answer);
    api_buf_putc(b, '}');
}

static api_response batch_with(const char *type, const char *body, size_t len,
                               const api_limits *limits) {
    api_request req = {.method = "POST",
                       .path = "/grade/batch",
                       .content_type = type,
                       .body = body,
                       .body_len = len,
                       .limits = limits};
    api_response res;
    api_handle(&req, &res);
    return res;
}

static api_response batch(const char *type, const char *body) {
    return batch_with(type, body, strlen(body), NULL);
}

/* The answer's lines, parsed: a JSON array of them for either form. */
static json_t *lines_of(const api_response *res, int ndjson) {
    json_t *all = json_array();
    if (!ndjson) {
        json_error_t err;
        json_t *a = json_loadb(res->body, res->body_len, 0, &err);
        if (!json_is_array(a))
            fail_msg("not a JSON array: %.*s", (int)res->body_len, res->body);
        json_array_extend(all, a);
        json_decref(a);
        return all;
    }
    const char *s = res->body, *end = res->body + res->body_len;
    if (res->body_len == 0 || end[-1] != '\n')
        fail_msg("JSON Lines must end with a newline: %.*s", (int)res->body_len,
                 res->body);
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        json_error_t err;
        json_t *line = json_loadb(s, (size_t)(nl - s), 0, &err);
        if (!json_is_object(line))
            fail_msg("line is not an object: %.*s", (int)(nl - s), s);
        json_array_append_new(all, line);
        s = nl + 1;
    }
    return all;
}

static const char *str(const json_t *v, const char *path) {
    char key[64];
    while (v && *path) {
        size_t n = strcspn(path, "/");
        snprintf(key, sizeof key, "%.*s", (int)n, path);
        v = json_object_get(v, key);
        path += n + (path[n] == '/');
    }
    const char *s = json_string_value(v);
    return s ? s : "(none)";
}

static int starts_with(const char *s, const char *prefix) {
    return s && !strncmp(s, prefix, strlen(prefix));
}

/* ------------------------------------------------------------ tests */

static void test_lines_in_order_with_ids(void **state) {
    (void)state;
    api_buf b = {0};
    sub(&b, "\"ada\"", REQ, right);
    api_buf_putc(&b, '\n');
    sub(&b, "7", REQ, unscaled);
    api_buf_puts(&b, "\n");
    sub(&b, "\"c\\u00e9\"", REQ, right);
    /* the last line without its newline */
    api_response res = batch(NDJSON, b.data);
    assert_int_equal(res.status, 200);
    assert_string_equal(res.content_type, "application/x-ndjson");
    assert_int_equal(res.item_problems, 0);
    json_t *lines = lines_of(&res, 1);
    assert_int_equal(json_array_size(lines), 3);
    json_t *l0 = json_array_get(lines, 0), *l1 = json_array_get(lines, 1);
    assert_string_equal(str(l0, "id"), "ada");
    assert_true(json_is_true(json_object_get(l0, "pass")));
    assert_int_equal(json_integer_value(json_object_get(l1, "id")), 7);
    assert_true(json_is_false(json_object_get(l1, "pass")));
    assert_string_equal(str(l1, "misconception/code"), "dot.no_scale");
    assert_string_equal(str(json_array_get(lines, 2), "id"), "c\xc3\xa9");
    /* each line starts with its id */
    assert_true(starts_with(res.body, "{\"id\":\"ada\",\"pass\":true,"));
    json_decref(lines);
    api_response_free(&res);
    api_buf_free(&b);
}

static void test_array_in_array_out(void **state) {
    (void)state;
    api_buf b = {0};
    api_buf_puts(&b, " [ ");
    sub(&b, "1", REQ, right);
    api_buf_puts(&b, " ,\n\t");
    sub(&b, "2", REQ, unscaled);
    api_buf_puts(&b, " ] \n");
    api_response res = batch("application/json; charset=utf-8", b.data);
    assert_int_equal(res.status, 200);
    assert_string_equal(res.content_type, "application/json");
    /* one submission per line */
    assert_true(starts_with(res.body, "[\n{\"id\":1,\"pass\":true,"));
    assert_non_null(strstr(res.body, "},\n{\"id\":2,\"pass\":false,"));
    assert_int_equal(res.body[res.body_len - 1], '\n');
    assert_memory_equal(res.body + res.body_len - 4, "}\n]\n", 4);
    json_t *lines = lines_of(&res, 0);
    assert_int_equal(json_array_size(lines), 2);
    json_decref(lines);
    api_response_free(&res);
    api_buf_free(&b);
}

/* A malformed submission fails alone, its pointer inside it. */
static void test_malformed_submissions_fail_alone(void **state) {
    (void)state;
    api_buf b = {0};
    sub(&b, "\"good1\"", REQ, right);
    api_buf_puts(&b, "\n{\"id\": \"broken\", \"endpoint\": \n");
    api_buf_puts(&b, "{\"endpoint\":\"/attention/dot\",\"request\":" REQ
                     ",\"answer\":{\"output\":1}}\n");
    sub(&b, "\"typo\"", REQ, "{\"outptu\":[[[1,2]]]}");
    api_buf_putc(&b, '\n');
    sub(&b, "\"badreq\"",
        "{\"queries\":[[[1,0]]],\"keys\":[[[1,0],[0,1]]],\"values\":"
        "[[[1,2],[3,4]]],\"scale\":\"big\"}",
        right);
    api_buf_puts(&b, "\n[1,2]\n{\"id\":[1],\"endpoint\":\"/attention/dot\"}\n");
    sub(&b, "\"good2\"", REQ, right);
    api_buf_putc(&b, '\n');
    api_response res = batch(NDJSON, b.data);
    assert_int_equal(res.status, 200);
    assert_int_equal(res.item_problems, 6);
    json_t *lines = lines_of(&res, 1);
    assert_int_equal(json_array_size(lines), 8);
    static const struct {
        const char *id, *code, *pointer;
    } want[] = {
        {"good1", NULL, NULL},
        {NULL, "invalid_json", NULL},
        {NULL, "missing_field", "/id"},
        {"typo", "unknown_field", "/answer/outptu"},
        {"badreq", "wrong_type", "/request/scale"},
        {NULL, "wrong_type", ""},
        {NULL, "wrong_type", "/id"},
        {"good2", NULL, NULL},
    };
    for (size_t i = 0; i < 8; i++) {
        json_t *l = json_array_get(lines, i);
        json_t *id = json_object_get(l, "id");
        if (want[i].id)
            assert_string_equal(json_string_value(id), want[i].id);
        else
            assert_true(json_is_null(id));
        json_t *p = json_object_get(l, "problem");
        if (!want[i].code) {
            assert_null(p);
            assert_true(json_is_true(json_object_get(l, "pass")));
            continue;
        }
        assert_string_equal(str(p, "code"), want[i].code);
        assert_string_equal(str(p, "type"), "about:blank");
        assert_true(json_integer_value(json_object_get(p, "status")) >= 400);
        if (want[i].pointer)
            assert_string_equal(str(p, "pointer"), want[i].pointer);
        else
            assert_null(json_object_get(p, "pointer"));
    }
    /* the line that is not JSON says where it is */
    assert_non_null(strstr(str(json_array_get(lines, 1), "problem/detail"),
                           "line 2 of the body: the submission is not valid "
                           "JSON"));
    json_decref(lines);
    api_response_free(&res);
    api_buf_free(&b);
}

/* A raw NUL byte fails its line alone (JSON text has none). */
static void test_nul_byte(void **state) {
    (void)state;
    api_buf b = {0};
    sub(&b, "1", REQ, right);
    api_buf_puts(&b, "\n{\"id\":2,\"x\":\"");
    api_buf_append(&b, "\0", 1);
    api_buf_puts(&b, "\"}\n");
    sub(&b, "3", REQ, right);
    api_response res = batch_with(NDJSON, b.data, b.len, NULL);
    assert_int_equal(res.status, 200);
    assert_int_equal(res.item_problems, 1);
    json_t *lines = lines_of(&res, 1);
    assert_int_equal(json_array_size(lines), 3);
    assert_string_equal(str(json_array_get(lines, 1), "problem/code"),
                        "invalid_json");
    assert_non_null(
        strstr(str(json_array_get(lines, 1), "problem/detail"), "NUL"));
    json_decref(lines);
    api_response_free(&res);
    api_buf_free(&b);
}

static void test_crlf_and_blank_lines(void **state) {
    (void)state;
    api_buf b = {0};
    api_buf_puts(&b, "\r\n   \r\n");
    sub(&b, "1", REQ, right);
    api_buf_puts(&b, "\r\n\r\n\t\n");
    sub(&b, "2", REQ, right);
    api_buf_puts(&b, "\r\n\r\n");
    api_response res = batch("application/jsonl", b.data);
    assert_int_equal(res.status, 200);
    assert_string_equal(res.content_type, "application/x-ndjson");
    json_t *lines = lines_of(&res, 1);
    assert_int_equal(json_array_size(lines), 2);
    assert_int_equal(res.item_problems, 0);
    json_decref(lines);
    api_response_free(&res);
    api_buf_free(&b);
}

/* Five submissions of one request, spelled two ways, and one of another:
 * two references; the unscaled answers share the mistakes' answers. */
static void test_references_are_shared(void **state) {
    (void)state;
    api_batch_stats st;
    /* the mistakes' answers one failed answer of REQ costs */
    api_buf b = {0};
    sub(&b, "0", REQ, unscaled);
    api_response res = batch(NDJSON, b.data);
    api_response_free(&res);
    api_batch_last_stats(&st);
    size_t mistakes = st.mistakes_computed;
    assert_true(mistakes >= 1);
    assert_int_equal(st.references_computed, 1);
    b.len = 0;
    sub(&b, "1", REQ, right);
    api_buf_putc(&b, '\n');
    sub(&b, "2", REQ, unscaled);
    api_buf_putc(&b, '\n');
    sub(&b, "3", REQ_SPELLED_OTHERWISE, right);
    api_buf_putc(&b, '\n');
    sub(&b, "4", REQ_SPELLED_OTHERWISE, unscaled);
    api_buf_putc(&b, '\n');
    sub(&b, "5", REQ2, right2);
    api_buf_putc(&b, '\n');
    sub(&b, "6", REQ, unscaled);
    api_buf_putc(&b, '\n');
    res = batch(NDJSON, b.data);
    assert_int_equal(res.status, 200);
    assert_int_equal(res.item_problems, 0);
    api_batch_last_stats(&st);
    assert_int_equal(st.submissions, 6);
    assert_int_equal(st.references_computed, 2);
    /* three failed answers of one request: its mistakes once */
    assert_int_equal(st.mistakes_computed, mistakes);
    assert_int_equal(st.cache.entries, 2);
    assert_true(st.cache.key_hits >= 1); /* REQ_SPELLED_OTHERWISE */
    /* the last one's request was known with all its mistakes */
    assert_true(st.requests_elided >= 1);
    json_t *lines = lines_of(&res, 1);
    for (size_t i = 0; i < 6; i++) {
        json_t *l = json_array_get(lines, i);
        int fails = i == 1 || i == 3 || i == 5;
        assert_int_equal(json_is_true(json_object_get(l, "pass")), !fails);
        if (fails)
            assert_string_equal(str(l, "misconception/code"), "dot.no_scale");
    }
    json_decref(lines);
    api_response_free(&res);
    api_buf_free(&b);
}

/* A request that is elided still reports an error in its answer as the
 * first grading did, and a submission that gives "request" twice is
 * refused alone (a later copy must not replace the request graded). */
static void test_known_requests_grade_as_the_first(void **state) {
    (void)state;
    api_buf b = {0};
    sub(&b, "1", REQ, unscaled); /* computes the reference and mistakes */
    api_buf_putc(&b, '\n');
    sub(&b, "2", REQ, "{\"weights\":[[[2]]]}"); /* a shape error: a result */
    api_buf_putc(&b, '\n');
    sub(&b, "3", REQ, "{\"outptu\":1}");
    api_buf_putc(&b, '\n');
    api_buf_puts(&b,
                 "{\"id\":4,\"endpoint\":\"/attention/dot\",\"request\":" REQ
                 ",\"request\":" REQ2 ",\"answer\":");
    api_buf_puts(&b, right2);
    api_buf_puts(&b, "}\n");
    api_response res = batch(NDJSON, b.data);
    assert_int_equal(res.status, 200);
    json_t *lines = lines_of(&res, 1);
    json_t *l1 = json_array_get(lines, 1);
    assert_true(json_is_false(json_object_get(l1, "pass")));
    assert_string_equal(str(l1, "fields/weights/error"), "shape");
    assert_string_equal(str(json_array_get(lines, 2), "problem/pointer"),
                        "/answer/outptu");
    json_t *l3 = json_array_get(lines, 3);
    assert_string_equal(str(l3, "problem/code"), "invalid_json");
    assert_non_null(strstr(str(l3, "problem/detail"), "twice"));
    assert_int_equal(res.item_problems, 2);
    json_decref(lines);
    api_response_free(&res);
    api_buf_free(&b);
}

/* The batch's references are held to its --max-work together. */
static void test_work_is_the_batch_s(void **state) {
    (void)state;
    api_buf one = {0};
    sub(&one, "1", REQ, right);
    api_response res = batch(NDJSON, one.data);
    api_batch_stats st;
    api_batch_last_stats(&st);
    api_response_free(&res);
    api_buf_free(&one);
    uint64_t ops = st.work; /* one reference */
    assert_true(ops > 0);

    api_limits limits;
    api_limits_default(&limits);
    limits.max_work = ops + ops / 2; /* one fits, two do not */
    api_buf b = {0};
    sub(&b, "\"a\"", REQ, right);
    api_buf_putc(&b, '\n');
    sub(&b, "\"b\"", REQ2, right2);
    api_buf_putc(&b, '\n');
    sub(&b, "\"c\"", REQ, right); /* shared: no work, but after the stop */
    api_buf_putc(&b, '\n');
    res = batch_with(NDJSON, b.data, b.len, &limits);
    assert_int_equal(res.status, 200);
    assert_int_equal(res.item_problems, 2);
    json_t *lines = lines_of(&res, 1);
    assert_true(
        json_is_true(json_object_get(json_array_get(lines, 0), "pass")));
    for (size_t i = 1; i < 3; i++) {
        json_t *l = json_array_get(lines, i);
        assert_string_equal(str(l, "id"), i == 1 ? "b" : "c");
        assert_string_equal(str(l, "problem/code"), "payload_too_large");
        assert_non_null(strstr(str(l, "problem/detail"), "not graded"));
        assert_non_null(strstr(str(l, "problem/detail"), "--max-work"));
    }
    json_decref(lines);
    api_response_free(&res);

    /* a request beyond --max-work by itself fails alone, as on /grade */
    limits.max_work = ops - 1;
    res = batch_with(NDJSON, b.data, b.len, &limits);
    assert_int_equal(res.item_problems, 3);
    lines = lines_of(&res, 1);
    for (size_t i = 0; i < 3; i++) {
        const char *detail = str(json_array_get(lines, i), "problem/detail");
        assert_null(strstr(detail, "not graded"));
        assert_non_null(strstr(detail, "--max-work"));
    }
    json_decref(lines);
    api_response_free(&res);
    api_buf_free(&b);
}

/* The batch's time is held to --compute-timeout: distinct requests of
 * ~4 M entries each, more than a second of them on any machine; once the
 * second has run out, every later submission is a 503 problem line. */
static void test_time_is_the_batch_s(void **state) {
    (void)state;
    api_limits limits;
    api_limits_default(&limits);
    limits.compute_timeout_s = 1;
    api_buf b = {0};
    for (int i = 0; i < 200; i++) {
        char line[200];
        snprintf(line, sizeof line,
                 "{\"id\":%d,\"endpoint\":\"/encoding/positional\","
                 "\"request\":{\"num_steps\":%d,\"d\":1024},"
                 "\"answer\":{\"P\":[[0]]}}\n",
                 i, 4096 + i);
        api_buf_puts(&b, line);
    }
    double t0 = api_clock_ms();
    api_response res = batch_with(NDJSON, b.data, b.len, &limits);
    double ms = api_clock_ms() - t0;
    assert_int_equal(res.status, 200);
    assert_true(ms < 5000); /* stopped, not run to its end */
    json_t *lines = lines_of(&res, 1);
    assert_int_equal(json_array_size(lines), 200);
    size_t first = 200;
    for (size_t i = 0; i < 200; i++) {
        json_t *l = json_array_get(lines, i);
        json_t *p = json_object_get(l, "problem");
        if (first == 200 && p)
            first = i;
        if (first == 200) { /* graded: P has the wrong shape */
            assert_true(json_is_false(json_object_get(l, "pass")));
            continue;
        }
        assert_int_equal(json_integer_value(json_object_get(l, "id")),
                         (json_int_t)i);
        assert_string_equal(str(p, "code"), "overloaded");
        assert_non_null(strstr(str(p, "detail"), "--compute-timeout"));
        assert_non_null(strstr(str(p, "detail"), "not graded"));
    }
    assert_true(first < 200);
    assert_int_equal(res.item_problems, 200 - first);
    json_decref(lines);
    api_response_free(&res);
    api_buf_free(&b);
}

static void test_batch_level_problems(void **state) {
    (void)state;
    static const struct {
        const char *type, *body;
        int status;
        const char *code;
    } cases[] = {
        {NDJSON, "", 422, "invalid_value"},
        {NDJSON, "\n \r\n\n", 422, "invalid_value"},
        {"application/json", "[]", 422, "invalid_value"},
        {"application/json", " [ ] ", 422, "invalid_value"},
        {"application/json", "", 422, "invalid_value"},
        {"application/json", "{\"id\":1}", 422, "wrong_type"},
        {"application/json", "42", 422, "wrong_type"},
        {"application/json", "nope", 400, "invalid_json"},
        {"application/json", "[{\"id\":1", 400, "invalid_json"},
        {"text/plain", "{}", 415, "unsupported_media_type"},
        {NULL, "{}", 415, "unsupported_media_type"},
        {"application/x-ndjson; charset=utf-16", "{}", 415,
         "unsupported_media_type"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        api_response res = batch(cases[i].type, cases[i].body);
        if (res.status != cases[i].status ||
            !strstr(res.body ? res.body : "", cases[i].code))
            fail_msg("case %zu (%s): %d %.*s", i, cases[i].body, res.status,
                     (int)res.body_len, res.body);
        assert_string_equal(res.content_type, "application/problem+json");
        if (cases[i].status == 422 && i < 5)
            assert_non_null(strstr(res.body, "\"pointer\":\"\""));
        if (cases[i].status == 415)
            assert_non_null(strstr(res.body, "application/x-ndjson"));
        api_response_free(&res);
    }
}

/* ?format=: one LMS document of the whole batch, its problems as tests
 * worth nothing. */
static void test_lms_document(void **state) {
    (void)state;
    api_buf b = {0};
    sub(&b, "\"ada\"", REQ, right);
    api_buf_putc(&b, '\n');
    sub(&b, "\"bo\"", REQ, unscaled);
    api_buf_puts(&b, "\n{\"id\":\"cy\"}\nnot json\n");
    api_request req = {.method = "POST",
                       .path = "/grade/batch",
                       .query = "format=gradescope",
                       .content_type = NDJSON,
                       .body = b.data,
                       .body_len = b.len};
    api_response res;
    api_handle(&req, &res);
    assert_int_equal(res.status, 200);
    assert_string_equal(res.content_type, "application/json");
    assert_int_equal(res.item_problems, 2);
    json_t *doc = json_loadb(res.body, res.body_len, 0, NULL);
    assert_non_null(doc);
    assert_true(json_number_value(json_object_get(doc, "score")) == 1);
    json_t *tests = json_object_get(doc, "tests");
    assert_int_equal(json_array_size(tests), 4);
    static const char *const names[] = {"ada: output", "bo: output", "cy",
                                        "submission"};
    for (size_t i = 0; i < 4; i++)
        assert_string_equal(str(json_array_get(tests, i), "name"), names[i]);
    assert_non_null(strstr(str(json_array_get(tests, 2), "output"),
                           "not graded: missing_field at /endpoint"));
    json_decref(doc);
    api_response_free(&res);

    req.query = "format=moodle";
    api_handle(&req, &res);
    assert_int_equal(res.status, 422);
    assert_non_null(strstr(res.body, "\"pointer\":\"/format\""));
    api_response_free(&res);
    req.query = "formt=gradescope";
    api_handle(&req, &res);
    assert_int_equal(res.status, 422);
    assert_non_null(strstr(res.body, "unknown_field"));
    api_response_free(&res);
    api_buf_free(&b);
}

/* An array whose frame breaks after good elements: those are graded, then
 * one problem line says where it breaks. */
static void test_broken_array_frame(void **state) {
    (void)state;
    api_buf b = {0};
    api_buf_putc(&b, '[');
    sub(&b, "1", REQ, right);
    api_buf_putc(&b, ',');
    sub(&b, "2", REQ, right);
    api_buf_puts(&b, " x ");
    sub(&b, "3", REQ, right);
    api_buf_putc(&b, ']');
    api_response res = batch("application/json", b.data);
    assert_int_equal(res.status, 200);
    assert_int_equal(res.item_problems, 1);
    json_t *lines = lines_of(&res, 0);
    assert_int_equal(json_array_size(lines), 3);
    json_t *p = json_object_get(json_array_get(lines, 2), "problem");
    assert_string_equal(str(p, "code"), "invalid_json");
    assert_non_null(strstr(str(p, "detail"), "expected ',' or ']'"));
    json_decref(lines);
    api_response_free(&res);
    api_buf_free(&b);
}

/* The scan: brackets and quotes inside strings, escapes, nesting. */
static void test_scan(void **state) {
    (void)state;
    const char *body = "[{\"id\":\"a]\\\"}\",\"request\":{\"x\":\"}\"},"
                       "\"endpoint\":\"/e\"}, 3 ,\"s,]\" ,[[1],[2]]]";
    api_batch_scanner s;
    api_batch_scan_start(&s, body, strlen(body), API_BATCH_ARRAY);
    api_batch_item it;
    size_t where;
    const char *why;
    assert_int_equal(api_batch_scan_next(&s, &it, NULL, 0, &where, &why),
                     API_BATCH_ITEM);
    assert_int_equal(it.start, 1);
    assert_memory_equal(body + it.request_start, "{\"x\":\"}\"}", 9);
    assert_int_equal(it.request_len, 9);
    assert_memory_equal(body + it.id_start, "\"a]\\\"}\"", 7);
    assert_memory_equal(body + it.endpoint_start, "\"/e\"", 4);
    assert_int_equal(body[it.start + it.len - 1], '}');
    const char *rest[] = {"3", "\"s,]\"", "[[1],[2]]"};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(api_batch_scan_next(&s, &it, NULL, 0, &where, &why),
                         API_BATCH_ITEM);
        assert_int_equal(it.len, strlen(rest[i]));
        assert_memory_equal(body + it.start, rest[i], it.len);
    }
    assert_int_equal(api_batch_scan_next(&s, &it, NULL, 0, &where, &why),
                     API_BATCH_END);

    /* a key with an escape says nothing of where "request" is */
    const char *esc = "{\"\\u0072equest\":{},\"request\":{\"a\":1}}\n";
    api_batch_scan_start(&s, esc, strlen(esc), API_BATCH_LINES);
    assert_int_equal(api_batch_scan_next(&s, &it, NULL, 0, &where, &why),
                     API_BATCH_ITEM);
    assert_int_equal(it.request_len, 0);

    /* a hint equal to the request is taken as it */
    const char *two = "{\"request\":{\"a\":[1,2]},\"id\":1}\n"
                      "{\"request\":{\"a\":[1,2]},\"id\":2}";
    api_batch_scan_start(&s, two, strlen(two), API_BATCH_LINES);
    assert_int_equal(api_batch_scan_next(&s, &it, NULL, 0, &where, &why),
                     API_BATCH_ITEM);
    assert_int_equal(it.request_is_hint, 0);
    const char *hint = two + it.request_start;
    size_t hint_len = it.request_len;
    assert_int_equal(api_batch_scan_next(&s, &it, hint, hint_len, &where, &why),
                     API_BATCH_ITEM);
    assert_int_equal(it.request_is_hint, 1);
    assert_int_equal(it.line, 2);
    assert_memory_equal(two + it.id_start, "2", 1);
}

static void key_of(api_buf *k, const char *text) {
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    assert_non_null(v);
    k->len = 0;
    assert_int_equal(api_request_key(k, NULL, v), 0);
    json_decref(v);
}

/* Canonical forms: equal for equal meanings, apart for others. */
static void test_request_key(void **state) {
    (void)state;
    static const struct {
        const char *a, *b;
        int equal;
    } cases[] = {
        {"{\"a\":1,\"b\":[1.5,2]}", "{ \"b\" : [15e-1, 2.0], \"a\" : 1e0 }", 1},
        {"{\"s\":\"\\u00e9\"}", "{\"s\":\"\xc3\xa9\"}", 1},
        {"{\"a\":1}", "{\"a\":2}", 0},
        {"{\"a\":0}", "{\"a\":-0.0}", 0},
        {"{\"a\":[1]}", "{\"a\":[[1]]}", 0},
        {"{\"a\":\"1\"}", "{\"a\":1}", 0},
        {"{\"a\":null}", "{}", 0},
        {"{\"ab\":1}", "{\"a\":1,\"b\":1}", 0},
        {"{\"a\":true}", "{\"a\":false}", 0},
        {"{\"a\":9007199254740993}", "{\"a\":9007199254740992}", 0},
    };
    api_buf x = {0}, y = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        key_of(&x, cases[i].a);
        key_of(&y, cases[i].b);
        int equal = x.len == y.len && !memcmp(x.data, y.data, x.len);
        if (equal != cases[i].equal)
            fail_msg("%s vs %s: %s", cases[i].a, cases[i].b,
                     equal ? "equal" : "different");
    }
    api_buf_free(&x);
    api_buf_free(&y);
}

int main(void) {
    answers();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_in_order_with_ids),
        cmocka_unit_test(test_array_in_array_out),
        cmocka_unit_test(test_malformed_submissions_fail_alone),
        cmocka_unit_test(test_nul_byte),
        cmocka_unit_test(test_crlf_and_blank_lines),
        cmocka_unit_test(test_references_are_shared),
        cmocka_unit_test(test_known_requests_grade_as_the_first),
        cmocka_unit_test(test_work_is_the_batch_s),
        cmocka_unit_test(test_time_is_the_batch_s),
        cmocka_unit_test(test_batch_level_problems),
        cmocka_unit_test(test_broken_array_frame),
        cmocka_unit_test(test_lms_document),
        cmocka_unit_test(test_scan),
        cmocka_unit_test(test_request_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
