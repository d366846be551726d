/*
 * test_tensor_bytes.c — tensors as little-endian bytes (api/text/
 * tensor_bytes.h): each datatype read and written against bytes written
 * out by hand, FP32's rounding (to nearest, ties to even, overflow to
 * infinity left to the caller), unaligned entries, BOOL's check, and the
 * fast path's arrays of bytes resolved by identity, not by their text.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <math.h>

#include "fastpath.h"
#include "tensor_bytes.h"

static void test_datatype_names(void **state) {
    (void)state;
    const char *names[] = {"FP64", "FP32", "INT64", "INT32", "BOOL"};
    const size_t sizes[] = {8, 4, 8, 4, 1};
    for (int i = 0; i < 5; i++) {
        api_datatype dt = api_datatype_parse(names[i], strlen(names[i]));
        assert_int_equal(dt, API_DT_FP64 + i);
        assert_string_equal(api_datatype_name(dt), names[i]);
        assert_int_equal(api_datatype_size(dt), sizes[i]);
    }
    assert_int_equal(api_datatype_parse("fp64", 4), API_DT_NONE);
    assert_int_equal(api_datatype_parse("UINT32", 6), API_DT_NONE);
    assert_int_equal(api_datatype_parse("FP6", 3), API_DT_NONE);
    assert_int_equal(api_datatype_parse("FP64 ", 5), API_DT_NONE);
}

/* Bytes as the wire has them, whatever the host: least significant first. */
static void test_read_each_datatype(void **state) {
    (void)state;
    /* 1.5 = 0x3FF8000000000000; -2.0 = 0xC000000000000000 */
    const unsigned char fp64[] = {0, 0, 0, 0, 0, 0, 0xF8, 0x3F,
                                  0, 0, 0, 0, 0, 0, 0,    0xC0};
    /* 0.1f = 0x3DCCCCCD */
    const unsigned char fp32[] = {0xCD, 0xCC, 0xCC, 0x3D};
    /* -3 and 2^53 + 1 (rounds to 2^53, ties to even) */
    const unsigned char int64[] = {0xFD, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                   0xFF, 0xFF, 1,    0,    0,    0,
                                   0,    0,    0x20, 0};
    const unsigned char int32[] = {0, 0, 0, 0x80, 0xFF, 0xFF, 0xFF, 0x7F};
    const unsigned char bools[] = {0, 1, 1};
    double out[3];
    api_bytes_read(out, fp64, 2, API_DT_FP64);
    assert_true(out[0] == 1.5 && out[1] == -2.0);
    api_bytes_read(out, fp32, 1, API_DT_FP32);
    assert_true(out[0] == (double)0.1f && out[0] != 0.1);
    api_bytes_read(out, int64, 2, API_DT_INT64);
    assert_true(out[0] == -3.0 && out[1] == 9007199254740992.0);
    api_bytes_read(out, int32, 2, API_DT_INT32);
    assert_true(out[0] == -2147483648.0 && out[1] == 2147483647.0);
    api_bytes_read(out, bools, 3, API_DT_BOOL);
    assert_true(out[0] == 0.0 && out[1] == 1.0 && out[2] == 1.0);
}

static void test_unaligned_entries(void **state) {
    (void)state;
    unsigned char buf[1 + 3 * 8];
    const double x[3] = {0.25, -7.0, 1e300};
    api_bytes_write(buf + 1, x, 3, API_DT_FP64);
    for (size_t i = 0; i < 3; i++)
        assert_true(api_bytes_at(buf + 1, i, API_DT_FP64) == x[i]);
    double back[3];
    api_bytes_read(back, buf + 1, 3, API_DT_FP64);
    assert_memory_equal(back, x, sizeof x);
}

static void test_write_fp32_rounds_to_nearest_even(void **state) {
    (void)state;
    /* 1 + 2^-24 is halfway between 1 and 1 + 2^-23: ties to even, 1;
     * 1 + 3·2^-24 is halfway between 1 + 2^-23 and 1 + 2^-22: to the
     * even one, 1 + 2^-22; 1 + 2^-24 + 2^-50 is past halfway: up */
    const double x[4] = {1 + 0x1p-24, 1 + 3 * 0x1p-24, 1 + 0x1p-24 + 0x1p-50,
                         NAN};
    unsigned char b[16];
    api_bytes_write(b, x, 4, API_DT_FP32);
    assert_true(api_bytes_at(b, 0, API_DT_FP32) == 1.0);
    assert_true(api_bytes_at(b, 1, API_DT_FP32) == 1 + 0x1p-22);
    assert_true(api_bytes_at(b, 2, API_DT_FP32) == 1 + 0x1p-23);
    assert_true(isnan(api_bytes_at(b, 3, API_DT_FP32)));
    /* 1.0f = 0x3F800000, least significant byte first */
    const unsigned char one[4] = {0, 0, 0x80, 0x3F};
    assert_memory_equal(b, one, 4);
}

static void test_write_integers(void **state) {
    (void)state;
    const double x[2] = {5, 16777216};
    unsigned char b8[16], b4[8];
    api_bytes_write(b8, x, 2, API_DT_INT64);
    api_bytes_write(b4, x, 2, API_DT_INT32);
    const unsigned char want8[16] = {5, 0, 0, 0, 0, 0, 0, 0,
                                     0, 0, 0, 1, 0, 0, 0, 0};
    const unsigned char want4[8] = {5, 0, 0, 0, 0, 0, 0, 1};
    assert_memory_equal(b8, want8, 16);
    assert_memory_equal(b4, want4, 8);
}

static void test_bad_bool(void **state) {
    (void)state;
    const unsigned char ok[3] = {0, 1, 0}, bad[4] = {1, 0, 2, 1};
    assert_int_equal(api_bytes_bad_bool(ok, 3), 3);
    assert_int_equal(api_bytes_bad_bool(bad, 4), 2);
    assert_int_equal(api_bytes_bad_bool(bad, 0), 0);
}

/* An array of bytes resolves through its own placeholder only: a string
 * with the same text is not it. */
static void test_fastpath_adopt_by_identity(void **state) {
    (void)state;
    const float x[3] = {0.5f, -1.0f, 3.0f};
    api_fastpath fp;
    api_fastpath_begin(&fp, NULL);
    json_t *placeholder =
        api_fastpath_adopt_bytes(&fp, (const unsigned char *)x, API_DT_FP32, 3);
    assert_non_null(placeholder);
    const api_fastpath_array *a = api_fastpath_find(&fp, placeholder);
    assert_non_null(a);
    assert_int_equal(a->count, 3);
    assert_int_equal(a->rank, 1);
    assert_int_equal(a->integers, 0);
    assert_true(api_fastpath_at(a, 1) == -1.0);
    double out[3];
    api_fastpath_read(out, a);
    assert_true(out[0] == 0.5 && out[2] == 3.0);
    json_t *lookalike = json_string(json_string_value(placeholder));
    assert_null(api_fastpath_find(&fp, lookalike));
    json_decref(lookalike);
    json_decref(placeholder); /* fp keeps its own reference */
    assert_non_null(api_fastpath_find(&fp, a->placeholder));
    api_fastpath_release(&fp);
    json_t *after = json_string("x");
    assert_null(api_fastpath_find(&fp, after));
    json_decref(after);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_datatype_names),
        cmocka_unit_test(test_read_each_datatype),
        cmocka_unit_test(test_unaligned_entries),
        cmocka_unit_test(test_write_fp32_rounds_to_nearest_even),
        cmocka_unit_test(test_write_integers),
        cmocka_unit_test(test_bad_bool),
        cmocka_unit_test(test_fastpath_adopt_by_identity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
