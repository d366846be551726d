/*
 * test_api_stream.c — streamed answers (api/text/stream.h) through api_handle:
 * with stream_ok, a large answer (POST or GET) comes as
 * api_response.stream, and reading
 * it in pieces of any size (1 byte, a prime, 4 KiB, 1 MiB) gives exactly
 * the bytes of the same request answered whole; small answers, errors and
 * SVG heatmaps are never streamed; body_done is called once, after the
 * body is parsed; a stream freed at any point leaks nothing and never
 * hangs (the sanitizer and valgrind runs check that). Answers of the v2
 * front with outputs as raw bytes (written straight into the reader's
 * pieces, entries cut anywhere) are the same bytes too, of the length
 * api_stream_length announces.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "api.h"
#include "buf.h"

/* A nested (rows, cols) matrix of sin(k · step) as JSON text into b. */
static void matrix(api_buf *b, size_t rows, size_t cols, double step) {
    api_buf_putc(b, '[');
    for (size_t i = 0; i < rows; i++) {
        api_buf_puts(b, i ? ",[" : "[");
        for (size_t j = 0; j < cols; j++) {
            if (j)
                api_buf_putc(b, ',');
            assert_int_equal(
                api_buf_number(b, sin((double)(i * cols + j) * step), 0), 0);
        }
        api_buf_putc(b, ']');
    }
    api_buf_putc(b, ']');
}

/* A dot request with B examples of Nq = Nk = n, d = dv = 4, then extra
 * (",..." fields or ""). */
static char *dot_request(size_t B, size_t n, const char *extra) {
    api_buf b = {0};
    const char *names[] = {"queries", "keys", "values"};
    api_buf_putc(&b, '{');
    for (size_t t = 0; t < 3; t++) {
        api_buf_puts(&b, t ? ",\"" : "\"");
        api_buf_puts(&b, names[t]);
        api_buf_puts(&b, "\":[");
        for (size_t e = 0; e < B; e++) {
            if (e)
                api_buf_putc(&b, ',');
            matrix(&b, n, 4, 0.37 + 0.11 * (double)t + 0.05 * (double)e);
        }
        api_buf_putc(&b, ']');
    }
    api_buf_puts(&b, extra);
    api_buf_putc(&b, '}');
    size_t len;
    return api_buf_release(&b, &len);
}

static int body_done_calls;
static void count_body_done(void *ctx) {
    (void)ctx;
    body_done_calls++;
}

/* The answer to body at route, read whole (stream_ok 0) or from the
 * stream in pieces of `piece` bytes (stream_ok 1); *streamed says which
 * it was. Returns the malloc'd bytes, length in *len, status in *status. */
static char *answer(const char *route, const char *body, int stream_ok,
                    size_t piece, int *streamed, size_t *len, int *status) {
    api_request req = {.method = "POST",
                       .path = route,
                       .content_type = "application/json",
                       .body = body,
                       .body_len = strlen(body),
                       .stream_ok = stream_ok};
    req.body_done = count_body_done;
    api_response res;
    body_done_calls = 0;
    api_handle(&req, &res);
    assert_int_equal(body_done_calls, 1);
    *status = res.status;
    *streamed = res.stream != NULL;
    if (!res.stream) {
        char *out = res.body;
        *len = res.body_len;
        res.body = NULL;
        api_response_free(&res);
        return out;
    }
    assert_null(res.body);
    api_buf all = {0};
    char *chunk = malloc(piece);
    assert_non_null(chunk);
    ssize_t n;
    while ((n = api_stream_read(res.stream, chunk, piece)) > 0) {
        assert_true((size_t)n <= piece);
        api_buf_append(&all, chunk, (size_t)n);
    }
    assert_int_equal(n, 0);
    assert_int_equal(api_stream_read(res.stream, chunk, piece), 0);
    free(chunk);
    api_response_free(&res);
    return api_buf_release(&all, len);
}

/* Streamed in every piece size, the bytes of the whole answer. */
static void check_same(const char *route, const char *body, int expect_stream) {
    size_t whole_len;
    int streamed, status;
    char *whole = answer(route, body, 0, 0, &streamed, &whole_len, &status);
    assert_false(streamed);
    const size_t pieces[] = {1, 13, 4096, 1 << 20};
    for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) {
        if (pieces[k] == 1 && whole_len > (1 << 21))
            continue; /* byte at a time: only for the smaller answers */
        size_t len;
        int status2;
        char *got =
            answer(route, body, 1, pieces[k], &streamed, &len, &status2);
        assert_int_equal(streamed, expect_stream);
        assert_int_equal(status2, status);
        assert_int_equal(len, whole_len);
        assert_memory_equal(got, whole, len);
        free(got);
    }
    printf("# %s: %zu bytes, status %d, %s\n", route, whole_len, status,
           expect_stream ? "streamed" : "whole");
    free(whole);
}

static void test_dot_streamed(void **state) {
    (void)state;
    /* 2 · 130 · 130 = 33,800 weights: just above the streaming size */
    char *body = dot_request(2, 130, "");
    check_same("/attention/dot", body, 1);
    free(body);
    body = dot_request(2, 130,
                       ",\"causal\":true,\"return_scores\":true,"
                       "\"tensor_format\":\"flat\",\"precision\":5,"
                       "\"diagnostics\":true");
    check_same("/attention/dot", body, 1);
    free(body);
}

/* Many blocks (api/text/stream.c prints 16,384 entries at a time, on two
 * threads): 2 · 400 · 400 = 320,000 weights and scores, 40 blocks, more
 * than the printer may run ahead, in every piece size. */
static void test_many_blocks(void **state) {
    (void)state;
    char *body = dot_request(2, 400, ",\"return_scores\":true");
    check_same("/attention/dot", body, 1);
    free(body);
}

static void test_additive_and_multihead_streamed(void **state) {
    (void)state;
    char *body = dot_request(2, 130, ",\"seed\":3,\"num_hiddens\":4");
    check_same("/attention/additive", body, 1);
    free(body);
    body = dot_request(
        1, 190,
        ",\"num_heads\":2,\"num_hiddens\":4,\"seed\":1,\"valid_lens\":[100]");
    check_same("/attention/multihead", body, 1);
    free(body);
}

static void test_softmax_and_nw_streamed(void **state) {
    (void)state;
    api_buf b = {0};
    api_buf_puts(&b, "{\"scores\":[");
    matrix(&b, 200, 200, 0.01);
    api_buf_puts(&b, "],\"valid_lens\":[150]}");
    size_t len;
    char *body = api_buf_release(&b, &len);
    check_same("/softmax/masked", body, 1);
    free(body);

    api_buf_puts(&b, "{\"x_train\":");
    matrix(&b, 1, 200, 0.05);
    api_buf_puts(&b, ",\"y_train\":");
    matrix(&b, 1, 200, 0.07);
    api_buf_puts(&b, ",\"x_query\":");
    matrix(&b, 1, 200, 0.03);
    api_buf_puts(&b, ",\"w\":2}");
    body = api_buf_release(&b, &len);
    /* the rows of the matrices are the 1-D tensors the route takes */
    char *fixed = body;
    for (char *p; (p = strstr(fixed, ":[[")); fixed = p + 1) {
        p[1] = ' ';
        char *end = strstr(p, "]]");
        end[1] = ' ';
    }
    check_same("/regression/nw", body, 1);
    free(body);
}

/* GET answers of a query string: the same rule. */
static void check_get_same(const char *route, const char *query) {
    const size_t pieces[] = {0, 13, 4096, 1 << 20}; /* 0: whole */
    char *whole = NULL;
    size_t whole_len = 0;
    for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) {
        api_request req = {.method = "GET",
                           .path = route,
                           .query = query,
                           .stream_ok = pieces[k] != 0};
        api_response res;
        api_handle(&req, &res);
        assert_int_equal(res.status, 200);
        if (pieces[k] == 0) {
            assert_null(res.stream);
            whole = res.body;
            whole_len = res.body_len;
            res.body = NULL;
            api_response_free(&res);
            continue;
        }
        assert_non_null(res.stream);
        api_buf all = {0};
        char *chunk = malloc(pieces[k]);
        assert_non_null(chunk);
        ssize_t n;
        while ((n = api_stream_read(res.stream, chunk, pieces[k])) > 0)
            api_buf_append(&all, chunk, (size_t)n);
        free(chunk);
        api_response_free(&res);
        size_t len;
        char *got = api_buf_release(&all, &len);
        assert_int_equal(len, whole_len);
        assert_memory_equal(got, whole, len);
        free(got);
    }
    printf("# GET %s?%s: %zu bytes, streamed\n", route, query, whole_len);
    free(whole);
}

static void test_get_streamed(void **state) {
    (void)state;
    check_get_same("/encoding/positional", "num_steps=300&d=128");
    check_get_same("/encoding/positional",
                   "num_steps=257&d=129&tensor_format=flat&precision=4");
    check_get_same("/regression/nw/dataset", "n_train=40000&seed=3");
}

static void test_never_streamed(void **state) {
    (void)state;
    /* small */
    check_same("/attention/dot",
               "{\"queries\":[[1,0]],\"keys\":[[1,0],[0,1]],"
               "\"values\":[[1],[2]]}",
               0);
    /* scores of 1.6e308 that print as 2e308 at one digit: the contract's
     * error, whether or not the request allowed streaming */
    api_buf b = {0};
    const char *rows[] = {"[1e150,0,0,0]", "[1e150,0,0,0]", "[1,1,1,1]"};
    const char *names[] = {"{\"queries\":[", ",\"keys\":[", ",\"values\":["};
    for (size_t t = 0; t < 3; t++) {
        api_buf_puts(&b, names[t]);
        for (size_t i = 0; i < 200; i++) {
            api_buf_puts(&b, i ? "," : "");
            api_buf_puts(&b, rows[t]);
        }
        api_buf_putc(&b, ']');
    }
    api_buf_puts(&b, ",\"scale\":1.6e8,\"return_scores\":true,"
                     "\"precision\":1}");
    size_t len;
    char *body = api_buf_release(&b, &len);
    check_same("/attention/dot", body, 0);
    free(body);
    /* an error found in the work */
    body =
        dot_request(1, 200, ",\"valid_lens\":[0],\"fully_masked\":\"error\"");
    check_same("/attention/dot", body, 0);
    free(body);
}

static void test_svg_not_streamed(void **state) {
    (void)state;
    char *body = dot_request(1, 190, "");
    api_request req = {.method = "POST",
                       .path = "/attention/dot",
                       .content_type = "application/json",
                       .accept = "image/svg+xml",
                       .body = body,
                       .body_len = strlen(body),
                       .stream_ok = 1};
    api_response res;
    api_handle(&req, &res);
    assert_int_equal(res.status, 200);
    assert_null(res.stream);
    assert_non_null(res.body);
    assert_string_equal(res.content_type, "image/svg+xml");
    api_response_free(&res);
    free(body);
}

/* The streamed answer to a dot request with body. */
static api_response streamed_dot(const char *body) {
    api_request req = {.method = "POST",
                       .path = "/attention/dot",
                       .content_type = "application/json",
                       .body = body,
                       .body_len = strlen(body),
                       .stream_ok = 1};
    api_response res;
    api_handle(&req, &res);
    assert_non_null(res.stream);
    return res;
}

static void test_freed_half_read(void **state) {
    (void)state;
    char *body = dot_request(2, 200, "");
    api_response res = streamed_dot(body);
    char chunk[1000];
    assert_int_equal(api_stream_read(res.stream, chunk, sizeof chunk), 1000);
    assert_memory_equal(chunk, "{\"output\":[[[", 13);
    api_response_free(&res);
    assert_null(res.stream);
    api_response_free(&res); /* twice is fine */
    free(body);
}

/* Freed after 0, 1, 4, 13, 40 or 121 pieces of 64 KiB (the size the HTTP
 * library asks for; the answer is about 100 of them), when the second
 * thread printing blocks ahead may be printing, waiting for room or done:
 * nothing hangs or leaks, and what was read is the start of the whole
 * answer. */
static void test_freed_at_any_point(void **state) {
    (void)state;
    char *body = dot_request(2, 400, "");
    size_t whole_len;
    int streamed, status;
    char *whole =
        answer("/attention/dot", body, 0, 0, &streamed, &whole_len, &status);
    enum { PIECE = 65536 };
    char *chunk = malloc(PIECE);
    assert_non_null(chunk);
    for (size_t pieces = 0; pieces < 200; pieces = pieces * 3 + 1) {
        api_response res = streamed_dot(body);
        size_t at = 0;
        for (size_t k = 0; k < pieces; k++) {
            ssize_t n = api_stream_read(res.stream, chunk, PIECE);
            assert_true(n >= 0);
            if (n == 0) { /* the end, read whole */
                assert_int_equal(at, whole_len);
                break;
            }
            assert_true(at + (size_t)n <= whole_len);
            assert_memory_equal(chunk, whole + at, (size_t)n);
            at += (size_t)n;
        }
        api_response_free(&res);
    }
    free(chunk);
    free(whole);
    free(body);
}

/* A v2 infer request of the dot model: queries and keys (1, n, 4),
 * values (1, n, dv) as nested JSON data, then extra (",..." or ""). */
static char *v2_dot_request(size_t n, size_t dv, const char *extra) {
    api_buf b = {0};
    const char *names[] = {"queries", "keys", "values"};
    api_buf_puts(&b, "{\"inputs\":[");
    for (size_t t = 0; t < 3; t++) {
        size_t cols = t == 2 ? dv : 4;
        char head[160];
        snprintf(head, sizeof head,
                 "%s{\"name\":\"%s\",\"shape\":[1,%zu,%zu],"
                 "\"datatype\":\"FP64\",\"data\":",
                 t ? "," : "", names[t], n, cols);
        api_buf_puts(&b, head);
        matrix(&b, n, cols, 0.37 + 0.11 * (double)t);
        api_buf_putc(&b, '}');
    }
    api_buf_putc(&b, ']');
    api_buf_puts(&b, extra);
    api_buf_putc(&b, '}');
    size_t len;
    return api_buf_release(&b, &len);
}

static void test_binary_outputs_streamed(void **state) {
    (void)state;
    /* every output as FP64 or FP32 bytes (output and weights both left as
     * holes at the same place, then the scale's bytes), and one output as
     * bytes beside one in the JSON header */
    const char *forms[] = {
        ",\"parameters\":{\"binary_data_output\":true}",
        ",\"parameters\":{\"binary_data_output\":true,"
        "\"output_datatype\":\"FP32\"}",
        ",\"outputs\":[{\"name\":\"weights\",\"parameters\":"
        "{\"binary_data\":true,\"datatype\":\"FP32\"}},"
        "{\"name\":\"output\"}]",
    };
    const size_t pieces[] = {1, 3, 5, 7, 13, 4096, 65537, 1 << 20};
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        char *body = v2_dot_request(200, 200, forms[f]);
        size_t whole_len;
        int streamed, status;
        char *whole = answer("/v2/models/attention_dot/infer", body, 0, 0,
                             &streamed, &whole_len, &status);
        assert_int_equal(status, 200);
        for (size_t k = 0; k < sizeof pieces / sizeof pieces[0]; k++) {
            api_request req = {.method = "POST",
                               .path = "/v2/models/attention_dot/infer",
                               .content_type = "application/json",
                               .body = body,
                               .body_len = strlen(body),
                               .stream_ok = 1};
            api_response res;
            api_handle(&req, &res);
            assert_int_equal(res.status, 200);
            assert_non_null(res.stream);
            assert_true(res.inference_header_length > 0);
            assert_int_equal(api_stream_length(res.stream), whole_len);
            api_buf all = {0};
            char *chunk = malloc(pieces[k]);
            assert_non_null(chunk);
            ssize_t n;
            while ((n = api_stream_read(res.stream, chunk, pieces[k])) > 0) {
                assert_true((size_t)n <= pieces[k]);
                /* a piece is full unless it is the last */
                assert_true((size_t)n == pieces[k] ||
                            all.len + (size_t)n == whole_len);
                api_buf_append(&all, chunk, (size_t)n);
            }
            assert_int_equal(n, 0);
            free(chunk);
            api_response_free(&res);
            size_t len;
            char *got = api_buf_release(&all, &len);
            assert_int_equal(len, whole_len);
            assert_memory_equal(got, whole, len);
            free(got);
        }
        printf("# v2 binary form %zu: %zu bytes, streamed\n", f, whole_len);
        free(whole);
        free(body);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dot_streamed),
        cmocka_unit_test(test_many_blocks),
        cmocka_unit_test(test_additive_and_multihead_streamed),
        cmocka_unit_test(test_softmax_and_nw_streamed),
        cmocka_unit_test(test_get_streamed),
        cmocka_unit_test(test_never_streamed),
        cmocka_unit_test(test_svg_not_streamed),
        cmocka_unit_test(test_freed_half_read),
        cmocka_unit_test(test_freed_at_any_point),
        cmocka_unit_test(test_binary_outputs_streamed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
