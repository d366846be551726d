/*
 * test_api_tensor.c — the tensor codec (api/text/tensor.c) and the small pieces
 * it stands on: JSON Pointer building, JSON string escaping, the growable
 * buffer, "did you mean" suggestions.
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

#include "buf.h"
#include "pointer.h"
#include "problem.h"
#include "suggest.h"
#include "tensor.h"

static const api_tensor_spec attn_spec = {"queries", API_RANK(2) | API_RANK(3),
                                          API_TENSOR_MASKED_SCORES,
                                          "(B, Nq, d) or (Nq, d)", 0};
static const api_tensor_spec lens_spec = {
    "valid_lens", API_RANK(0) | API_RANK(1) | API_RANK(2), API_TENSOR_INTEGRAL,
    "(B)", 0};

static json_t *parse(const char *text) {
    json_error_t err;
    json_t *j = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    if (!j)
        fail_msg("bad test JSON %s: %s", text, err.text);
    return j;
}

/* Run types + decode; returns the decode result and fills t / p. */
static int decode(const char *text, const api_tensor_spec *spec, size_t max,
                  api_tensor *t, api_problem *p) {
    json_t *j = parse(text);
    memset(p, 0, sizeof *p);
    int rc = api_tensor_check_keys(j, "/f", p);
    if (!rc)
        rc = api_tensor_check_missing(j, "/f", p);
    if (!rc)
        rc = api_tensor_check_types(NULL, j, spec, "/f", p);
    if (!rc)
        rc = api_tensor_decode(t, NULL, j, spec, "/f", max, p);
    json_decref(j); /* t->src is only used by the callers that keep j */
    return rc;
}

static void expect_error(const char *text, const api_tensor_spec *spec,
                         size_t max, api_error code, const char *pointer) {
    api_tensor t;
    api_problem p;
    int rc = decode(text, spec, max, &t, &p);
    if (rc != -1 || p.code != code || strcmp(p.pointer, pointer) != 0)
        fail_msg("%s: got %s at %s (%s), expected %s at %s", text,
                 api_error_name(p.code), p.pointer, p.detail,
                 api_error_name(code), pointer);
}

static void test_decode_nested(void **state) {
    (void)state;
    json_t *j = parse("[[[1, 2.5], [3, -4]], [[5e-1, 6], [7, 8]]]");
    api_tensor t;
    api_problem p = {0};
    assert_int_equal(api_tensor_check_types(NULL, j, &attn_spec, "/f", &p), 0);
    assert_int_equal(api_tensor_decode(&t, NULL, j, &attn_spec, "/f", 100, &p),
                     0);
    assert_int_equal(t.rank, 3);
    assert_int_equal(t.shape[0], 2);
    assert_int_equal(t.shape[1], 2);
    assert_int_equal(t.shape[2], 2);
    assert_int_equal(t.count, 8);
    double d[8];
    api_tensor_read(d, &t);
    const double want[8] = {1, 2.5, 3, -4, 0.5, 6, 7, 8};
    for (int i = 0; i < 8; i++)
        assert_true(d[i] == want[i]);
    json_decref(j);
}

static void test_decode_flat(void **state) {
    (void)state;
    json_t *j = parse("{\"shape\": [2, 3], \"data\": [1, 2, 3, 4, 5, 6.25]}");
    api_tensor t;
    api_problem p = {0};
    assert_int_equal(api_tensor_check_types(NULL, j, &attn_spec, "/f", &p), 0);
    assert_int_equal(api_tensor_decode(&t, NULL, j, &attn_spec, "/f", 6, &p),
                     0);
    assert_int_equal(t.rank, 2);
    assert_int_equal(t.count, 6);
    double d[6];
    api_tensor_read(d, &t);
    assert_true(d[5] == 6.25 && d[0] == 1);
    json_decref(j);
}

static void test_decode_scalar_and_integers(void **state) {
    (void)state;
    json_t *j = parse("4");
    api_tensor t;
    api_problem p = {0};
    assert_int_equal(api_tensor_check_types(NULL, j, &lens_spec, "/f", &p), 0);
    assert_int_equal(api_tensor_decode(&t, NULL, j, &lens_spec, "/f", 10, &p),
                     0);
    assert_int_equal(t.rank, 0);
    assert_int_equal(t.count, 1);
    double d;
    api_tensor_read(&d, &t);
    assert_true(d == 4);
    json_decref(j);
    /* an integer beyond 2^53 is read as the nearest double */
    j = parse("[[9007199254740993, -9223372036854775807]]");
    assert_int_equal(api_tensor_decode(&t, NULL, j, &attn_spec, "/f", 10, &p),
                     0);
    double e[2];
    api_tensor_read(e, &t);
    assert_true(e[0] == 9007199254740992.0);
    assert_true(e[1] == -9223372036854775808.0);
    json_decref(j);
    /* integral reals pass an integer spec, fractions do not */
    expect_error("[2.0, 1.5]", &lens_spec, 10, API_E_WRONG_TYPE, "/f/1");
    expect_error("2.5", &lens_spec, 10, API_E_WRONG_TYPE, "/f");
    expect_error("{\"shape\": [2], \"data\": [1, 0.5]}", &lens_spec, 10,
                 API_E_WRONG_TYPE, "/f/data/1");
}

static void test_types(void **state) {
    (void)state;
    expect_error("\"abc\"", &attn_spec, 10, API_E_WRONG_TYPE, "/f");
    expect_error("3", &attn_spec, 10, API_E_WRONG_TYPE, "/f");
    expect_error("[[1, true]]", &attn_spec, 10, API_E_WRONG_TYPE, "/f/0/1");
    expect_error("[[1], [null]]", &attn_spec, 10, API_E_WRONG_TYPE, "/f/1/0");
    expect_error("[[1, {}]]", &attn_spec, 10, API_E_WRONG_TYPE, "/f/0/1");
    expect_error("{\"shape\": 3, \"data\": [1]}", &attn_spec, 10,
                 API_E_WRONG_TYPE, "/f/shape");
    expect_error("{\"shape\": [1, 1], \"data\": 1}", &attn_spec, 10,
                 API_E_WRONG_TYPE, "/f/data");
    expect_error("{\"shape\": [1, \"1\"], \"data\": [1]}", &attn_spec, 10,
                 API_E_WRONG_TYPE, "/f/shape/1");
    expect_error("{\"shape\": [1, 1], \"data\": [[1]]}", &attn_spec, 10,
                 API_E_WRONG_TYPE, "/f/data/0");
    expect_error("{\"shape\": [1, 1], \"data\": [1], \"dtype\": \"FP64\"}",
                 &attn_spec, 10, API_E_UNKNOWN_FIELD, "/f/dtype");
    expect_error("{\"shape\": [1, 1]}", &attn_spec, 10, API_E_MISSING_FIELD,
                 "/f/data");
    expect_error("{\"data\": [1], \"shape\": null}", &attn_spec, 10,
                 API_E_MISSING_FIELD, "/f/shape");
}

static void test_rank_and_ragged(void **state) {
    (void)state;
    expect_error("[1, 2]", &attn_spec, 10, API_E_SHAPE_MISMATCH, "/f");
    expect_error("[[[[1]]]]", &attn_spec, 10, API_E_SHAPE_MISMATCH, "/f");
    expect_error("[[[[[[[[[[1]]]]]]]]]]", &attn_spec, 10, API_E_SHAPE_MISMATCH,
                 "/f");
    expect_error("[[1, 2], [3]]", &attn_spec, 10, API_E_RAGGED_ARRAY, "/f/1");
    expect_error("[[1], [2, 3]]", &attn_spec, 10, API_E_RAGGED_ARRAY, "/f/1");
    expect_error("[[[1, 2]], [[3]]]", &attn_spec, 10, API_E_RAGGED_ARRAY,
                 "/f/1/0");
    expect_error("[[1, 2], 3]", &attn_spec, 10, API_E_RAGGED_ARRAY, "/f/1");
    expect_error("[[1, [2]]]", &attn_spec, 10, API_E_RAGGED_ARRAY, "/f/0/1");
    expect_error("[[1, 2], []]", &attn_spec, 10, API_E_RAGGED_ARRAY, "/f/1");
    expect_error("[[], [1]]", &attn_spec, 10, API_E_RAGGED_ARRAY, "/f/1");
    /* a wrong rank reports expected (-1 per dimension) and got */
    api_tensor t;
    api_problem p;
    assert_int_equal(decode("[[[[1, 2]]]]", &attn_spec, 10, &t, &p), -1);
    assert_true(p.has_expected && p.has_got);
    assert_int_equal(p.expected_rank, 3);
    assert_int_equal(p.expected[0], -1);
    assert_int_equal(p.got_rank, 4);
    assert_int_equal(p.got[3], 2);
}

static void test_sizes(void **state) {
    (void)state;
    /* over max_elements, declared or actual */
    expect_error("[[1, 2, 3], [4, 5, 6]]", &attn_spec, 5,
                 API_E_PAYLOAD_TOO_LARGE, "/f");
    expect_error("{\"shape\": [1, 200000, 200000], \"data\": []}", &attn_spec,
                 (size_t)16 << 20, API_E_PAYLOAD_TOO_LARGE, "/f");
    /* 2^32 · 2^32 · 2 overflows 64 bits: still 413, never a wrap */
    expect_error("{\"shape\": [4294967296, 4294967296, 2], \"data\": [1]}",
                 &attn_spec, (size_t)16 << 20, API_E_PAYLOAD_TOO_LARGE, "/f");
    expect_error("{\"shape\": [1e300, 1], \"data\": [1]}", &attn_spec,
                 (size_t)16 << 20, API_E_PAYLOAD_TOO_LARGE, "/f");
    /* 413 comes before len(data) and before a zero dimension */
    expect_error("{\"shape\": [0, 4294967296, 4294967296, 5], \"data\": [1]}",
                 &attn_spec, 10, API_E_SHAPE_MISMATCH, "/f");
    /* exactly at the limit passes */
    api_tensor t;
    api_problem p;
    assert_int_equal(decode("[[1, 2, 3], [4, 5, 6]]", &attn_spec, 6, &t, &p),
                     0);
    /* len(data) mismatch with expected/got */
    assert_int_equal(decode("{\"shape\": [2, 2], \"data\": [1, 2, 3]}",
                            &attn_spec, 10, &t, &p),
                     -1);
    assert_int_equal(p.code, API_E_SHAPE_MISMATCH);
    assert_string_equal(p.pointer, "/f/data");
    assert_int_equal(p.expected[0], 4);
    assert_int_equal(p.got[0], 3);
    /* zero dimensions and [] */
    expect_error("[]", &attn_spec, 10, API_E_INVALID_VALUE, "/f");
    expect_error("[[]]", &attn_spec, 10, API_E_INVALID_VALUE, "/f");
    expect_error("[[], []]", &attn_spec, 10, API_E_INVALID_VALUE, "/f");
    expect_error("{\"shape\": [3, 0], \"data\": []}", &attn_spec, 10,
                 API_E_INVALID_VALUE, "/f");
    expect_error("{\"shape\": [3, -1], \"data\": []}", &attn_spec, 10,
                 API_E_INVALID_VALUE, "/f/shape/1");
    /* rank 0 where not allowed, via the flat form */
    expect_error("{\"shape\": [], \"data\": [1]}", &attn_spec, 10,
                 API_E_SHAPE_MISMATCH, "/f");
}

static void test_entry_pointer(void **state) {
    (void)state;
    api_tensor t = {0};
    api_pointer ptr;
    t.rank = 3;
    t.shape[0] = 2, t.shape[1] = 3, t.shape[2] = 4;
    api_tensor_entry_pointer(&ptr, "/q", &t, 1 * 12 + 2 * 4 + 3);
    assert_string_equal(ptr.s, "/q/1/2/3");
    t.flat = 1;
    api_tensor_entry_pointer(&ptr, "/q", &t, 23);
    assert_string_equal(ptr.s, "/q/data/23");
    t.flat = 0;
    t.rank = 0;
    api_tensor_entry_pointer(&ptr, "/valid_lens", &t, 0);
    assert_string_equal(ptr.s, "/valid_lens");
}

static char *encode(const double *x, const size_t *shape, size_t rank, int flat,
                    int precision, int nulls, int *rc) {
    api_buf b = {0};
    api_tensor_format fmt = {flat, precision, 0};
    *rc = api_tensor_encode(&b, x, shape, rank, &fmt, nulls);
    size_t len;
    return api_buf_release(&b, &len);
}

static void test_encode(void **state) {
    (void)state;
    const double x[6] = {1, 2.5, -0.0, 1e-7, 1e21, 0.1};
    size_t s23[2] = {2, 3}, s6[1] = {6};
    int rc;
    char *s = encode(x, s23, 2, 0, 0, 0, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(s, "[[1,2.5,0],[1e-7,1e+21,0.1]]");
    free(s);
    s = encode(x, s23, 2, 1, 0, 0, &rc);
    assert_string_equal(s,
                        "{\"shape\":[2,3],\"data\":[1,2.5,0,1e-7,1e+21,0.1]}");
    free(s);
    s = encode(x, s6, 1, 0, 0, 0, &rc);
    assert_string_equal(s, "[1,2.5,0,1e-7,1e+21,0.1]");
    free(s);
    s = encode(x + 1, NULL, 0, 0, 0, 0, &rc);
    assert_string_equal(s, "2.5");
    free(s);
    const double third[2] = {1.0 / 3, 2.0 / 3};
    size_t s2[1] = {2};
    s = encode(third, s2, 1, 0, 3, 0, &rc);
    assert_string_equal(s, "[0.333,0.667]");
    free(s);
    /* NaN is null only where asked; inf never prints */
    const double bad[2] = {NAN, 1};
    s = encode(bad, s2, 1, 0, 0, 1, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(s, "[null,1]");
    free(s);
    s = encode(bad, s2, 1, 0, 0, 0, &rc);
    assert_int_equal(rc, -1);
    free(s);
    /* 1.8e308 at one digit is 2e308: beyond the largest double */
    const double big[2] = {1, 1.7976931348623157e308};
    s = encode(big, s2, 1, 0, 1, 1, &rc);
    assert_int_equal(rc, -1);
    free(s);
    s = encode(big, s2, 1, 0, 17, 1, &rc);
    assert_int_equal(rc, 0);
    assert_string_equal(s, "[1,1.7976931348623157e+308]");
    free(s);
    const double inf[2] = {1, INFINITY};
    s = encode(inf, s2, 1, 0, 0, 1, &rc);
    assert_int_equal(rc, -1);
    free(s);
}

/* Printed numbers read back to the same doubles (through jansson, as a
 * client would), over many rows so the chunked writer is exercised. */
static void test_encode_round_trip(void **state) {
    (void)state;
    enum { N = 3 * 5000 };
    double *x = malloc(N * sizeof *x);
    uint64_t r = 88172645463325252ull;
    for (int i = 0; i < N; i++) {
        uint64_t bits;
        do {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            bits = r;
            memcpy(&x[i], &bits, sizeof bits);
        } while (!isfinite(x[i]));
    }
    size_t shape[2] = {3, 5000};
    int rc;
    char *s = encode(x, shape, 2, 0, 0, 0, &rc);
    assert_int_equal(rc, 0);
    json_error_t err;
    /* integers from 2^63 to 1e21 print without exponent (ECMAScript), so
     * read integers as reals, as a JavaScript client would */
    json_t *j = json_loads(s, JSON_DECODE_INT_AS_REAL, &err);
    if (!j)
        fail_msg("%s near byte %d: %.60s", err.text, err.position,
                 s + (err.position > 30 ? err.position - 30 : 0));
    api_tensor t;
    api_problem p = {0};
    assert_int_equal(
        api_tensor_decode(&t, NULL, j, &attn_spec, "/f", (size_t)1 << 20, &p),
        0);
    double *y = malloc(N * sizeof *y);
    api_tensor_read(y, &t);
    int worst = -1;
    for (int i = 0; i < N && worst < 0; i++)
        if (memcmp(&x[i], &y[i], sizeof x[i]) != 0 && !(x[i] == 0 && y[i] == 0))
            worst = i;
    if (worst >= 0)
        fail_msg("entry %d: %.17g printed and read back as %.17g", worst,
                 x[worst], y[worst]);
    json_decref(j);
    free(s);
    free(x);
    free(y);
}

/* A tensor large enough to be printed by several threads gives the same
 * text as its rows printed one by one and bracketed by hand. */
static void test_encode_parallel_matches_rows(void **state) {
    (void)state;
    enum { B = 3, R = 301, C = 299, N = B * R * C };
    double *x = malloc(N * sizeof *x);
    for (int i = 0; i < N; i++)
        x[i] = (i % 7 == 3) ? NAN : (i - N / 2) * 0.001 + 1.0 / (i + 1);
    size_t shape[3] = {B, R, C};
    int rc;
    char *got = encode(x, shape, 3, 0, 0, 1, &rc);
    assert_int_equal(rc, 0);
    api_buf want = {0};
    api_tensor_format fmt = {0, 0, 0};
    size_t row[1] = {C};
    api_buf_putc(&want, '[');
    for (int b = 0; b < B; b++) {
        api_buf_puts(&want, b ? ",[" : "[");
        for (int r = 0; r < R; r++) {
            if (r)
                api_buf_putc(&want, ',');
            assert_int_equal(
                api_tensor_encode(&want, x + (b * R + r) * C, row, 1, &fmt, 1),
                0);
        }
        api_buf_putc(&want, ']');
    }
    api_buf_putc(&want, ']');
    assert_int_equal(strlen(got), want.len);
    assert_string_equal(got, want.data);
    free(got);
    /* the flat form of the same entries */
    got = encode(x, shape, 3, 1, 0, 1, &rc);
    assert_int_equal(rc, 0);
    static const char head[] = "{\"shape\":[3,301,299],\"data\":[";
    assert_memory_equal(got, head, sizeof head - 1);
    json_t *j = json_loads(got, 0, NULL);
    assert_non_null(j);
    assert_int_equal(json_array_size(json_object_get(j, "data")), N);
    json_decref(j);
    free(got);
    /* a non-finite entry in a later thread's part still fails the whole */
    x[N - 5] = INFINITY;
    got = encode(x, shape, 3, 0, 0, 1, &rc);
    assert_int_equal(rc, -1);
    free(got);
    api_buf_free(&want);
    free(x);
}

static void test_format_read(void **state) {
    (void)state;
    api_tensor_format fmt;
    api_problem p = {0};
    json_t *j = parse("{\"tensor_format\": \"flat\", \"precision\": 5.0}");
    assert_int_equal(api_tensor_format_read(&fmt, j, &p), 0);
    assert_int_equal(fmt.flat, 1);
    assert_int_equal(fmt.precision, 5);
    json_decref(j);
    j = parse("{\"precision\": 18}");
    assert_int_equal(api_tensor_format_read(&fmt, j, &p), -1);
    assert_string_equal(p.pointer, "/precision");
    json_decref(j);
    memset(&p, 0, sizeof p);
    j = parse("{\"tensor_format\": \"flat\\u0000\"}");
    assert_int_equal(api_tensor_format_read(&fmt, j, &p), -1);
    assert_string_equal(p.pointer, "/tensor_format");
    json_decref(j);
}

static void test_pointer(void **state) {
    (void)state;
    api_pointer p;
    api_pointer_init(&p, "");
    size_t mark = api_pointer_push_key(&p, "a/b~c", 5);
    assert_string_equal(p.s, "/a~1b~0c");
    api_pointer_push_index(&p, 12);
    assert_string_equal(p.s, "/a~1b~0c/12");
    api_pointer_pop(&p, mark);
    assert_string_equal(p.s, "");
    /* a segment that does not fit whole is left out, and so is every
     * segment under it: the pointer names the member holding it */
    char key[3000];
    for (size_t i = 0; i + 1 < sizeof key; i += 2)
        memcpy(key + i, "\xc3\xa9", 2); /* é */
    size_t outer = api_pointer_push_key(&p, "a", 1);
    size_t cut = api_pointer_push_key(&p, key, sizeof key - 1);
    size_t inner = api_pointer_push_index(&p, 3);
    assert_true(p.truncated);
    assert_string_equal(p.s, "/a");
    api_pointer_pop(&p, inner);
    size_t again = api_pointer_push_key(&p, "b", 1); /* still under key */
    assert_string_equal(p.s, "/a");
    api_pointer_pop(&p, again);
    api_pointer_pop(&p, cut);
    assert_false(p.truncated);
    api_pointer_push_key(&p, "b", 1);
    assert_string_equal(p.s, "/a/b");
    api_pointer_pop(&p, outer);
    assert_string_equal(p.s, "");
    /* 1023 bytes escaped: "/" and a key of 1021 bytes and "~" (as "~0")
     * is one more than fits, and is left out whole, never cut to "~" */
    memset(key, 'k', 1021);
    key[1021] = '~';
    api_pointer_push_key(&p, key, 1022);
    assert_true(p.truncated);
    assert_string_equal(p.s, "");
    api_pointer_pop(&p, 0);
    /* 1023 bytes in all fit (the NUL is the 1024th) */
    memset(key, 'k', 1022);
    api_pointer_push_key(&p, key, 1022);
    assert_false(p.truncated);
    assert_int_equal(p.len, 1023);
    /* a prefix joined in place keeps the segments that fit whole */
    char joined[API_POINTER_MAX];
    memcpy(joined, "/a/b", 5);
    api_pointer_join(joined, sizeof joined, "/request", joined);
    assert_string_equal(joined, "/request/a/b");
    api_pointer_join(joined, sizeof joined, "/parameters", p.s);
    assert_string_equal(joined, "/parameters"); /* "/k…k" is 1023 bytes */
}

static void test_json_string(void **state) {
    (void)state;
    api_buf b = {0};
    api_buf_json_string(&b, "a\"b\\c\n\x01\x7f", 8);
    api_buf_json_string(&b, "\xff\xc3\xa9\xe2\x82", 5); /* bad, é, cut */
    api_buf_json_string(&b, "x\0y", 3);
    assert_false(b.failed);
    assert_string_equal(b.data, "\"a\\\"b\\\\c\\n\\u0001\x7f\""
                                "\"\\ufffd\xc3\xa9\\ufffd\\ufffd\""
                                "\"x\\u0000y\"");
    /* whatever goes in, a JSON parser reads the result back */
    api_buf a = {0};
    api_buf_putc(&a, '[');
    api_buf_json_string(&a, "\xff\xfe\xed\xa0\x80\xf4\x90\x80\x80\xc0\xaf", 11);
    api_buf_putc(&a, ']');
    json_error_t err;
    json_t *j = json_loadb(a.data, a.len, 0, &err);
    if (!j)
        fail_msg("%s: %s", a.data, err.text);
    assert_int_equal(json_string_length(json_array_get(j, 0)), 11 * 3);
    json_decref(j);
    api_buf_free(&a);
    api_buf_free(&b);
}

static void test_suggest(void **state) {
    (void)state;
    static const char *const names[] = {"queries", "keys", "values",
                                        "valid_lens", "causal"};
    assert_string_equal(api_suggest("valid_len", 9, names, 5), "valid_lens");
    assert_string_equal(api_suggest("Queries", 7, names, 5), "queries");
    assert_string_equal(api_suggest("casual", 6, names, 5), "causal");
    assert_int_equal(api_edit_distance("kitten", 6, "sitting", 7), 3);
    assert_int_equal(api_edit_distance("", 0, "abc", 3), 3);
    assert_int_equal(api_edit_distance("same", 4, "SAME", 4), 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_nested),
        cmocka_unit_test(test_decode_flat),
        cmocka_unit_test(test_decode_scalar_and_integers),
        cmocka_unit_test(test_types),
        cmocka_unit_test(test_rank_and_ragged),
        cmocka_unit_test(test_sizes),
        cmocka_unit_test(test_entry_pointer),
        cmocka_unit_test(test_encode),
        cmocka_unit_test(test_encode_round_trip),
        cmocka_unit_test(test_encode_parallel_matches_rows),
        cmocka_unit_test(test_format_read),
        cmocka_unit_test(test_pointer),
        cmocka_unit_test(test_json_string),
        cmocka_unit_test(test_suggest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
