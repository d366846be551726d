/*
 * test_srv_gzip_kept.c — documents served as they are keep their
 * compressed form (server/gzip.h, srv_gzip_kept): the second answer is a
 * copy of the first's gzip, both gunzip to the document, and other bytes
 * under the same name are compressed for themselves, never answered with
 * what was kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <zlib.h>

#include <cmocka.h>

#include "gzip.h"

/* gz[0 .. len) gunzipped, into a new malloc'd buffer of *plain_len. */
static char *gunzip(const char *gz, size_t len, size_t *plain_len) {
    size_t cap = 1 << 20;
    char *plain = malloc(cap);
    assert_non_null(plain);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
    zs.next_in = (Bytef *)(uintptr_t)gz;
    zs.avail_in = (uInt)len;
    zs.next_out = (Bytef *)plain;
    zs.avail_out = (uInt)cap;
    assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
    *plain_len = zs.total_out;
    inflateEnd(&zs);
    return plain;
}

static void kept_and_copied(void **state) {
    (void)state;
    static const char page_route[] = "/";
    size_t len = 200000;
    char *page = malloc(len);
    assert_non_null(page);
    for (size_t i = 0; i < len; i++)
        page[i] = "<p>attention</p>\n"[i % 17];
    char *first, *second;
    size_t first_len, second_len;
    assert_int_equal(srv_gzip_kept(page_route, &first, &first_len, page, len),
                     0);
    assert_int_equal(srv_gzip_kept(page_route, &second, &second_len, page, len),
                     0);
    assert_true(first != second); /* each answer owns its copy */
    assert_int_equal(first_len, second_len);
    assert_memory_equal(first, second, first_len);
    size_t back_len;
    char *back = gunzip(second, second_len, &back_len);
    assert_int_equal(back_len, len);
    assert_memory_equal(back, page, len);
    free(back);
    free(first);
    free(second);

    /* other bytes under the same name: their own compression */
    page[len / 2] = '#';
    char *other;
    size_t other_len;
    assert_int_equal(srv_gzip_kept(page_route, &other, &other_len, page, len),
                     0);
    back = gunzip(other, other_len, &back_len);
    assert_int_equal(back_len, len);
    assert_memory_equal(back, page, len);
    free(back);
    free(other);
    free(page);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kept_and_copied),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
