/*
 * test_srv_gzip_stream.c — a gzip stream's work per call is bounded in
 * plain bytes (server/gzip.h): over a source of 8 MiB of one repeated
 * byte, which compresses about a thousand to one, each call of
 * srv_gzip_stream_read takes at most 64 KiB from the source and still
 * gives some output, and what the calls give together gunzips back to the
 * 8 MiB.
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

#define PLAIN_BYTES ((size_t)8 << 20)
#define CALL_MAX_IN ((size_t)64 << 10)
#define OUT_PIECE 32768

/* A source of `left` bytes of 'a', handed out as much as is asked for at a
 * time; `pulled` counts what it gave since the counter was last reset. */
typedef struct {
    size_t left;
    size_t pulled;
    size_t reads;
} repeated;

static ssize_t repeated_read(void *ctx, char *dst, size_t max) {
    repeated *s = ctx;
    size_t n = max < s->left ? max : s->left;
    memset(dst, 'a', n);
    s->left -= n;
    s->pulled += n;
    s->reads++;
    return (ssize_t)n;
}

static void read_is_bounded_and_round_trips(void **state) {
    (void)state;
    repeated src = {PLAIN_BYTES, 0, 0};
    srv_gzip_stream *z = srv_gzip_stream_new(repeated_read, &src);
    assert_non_null(z);

    size_t cap = (size_t)1 << 20, len = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    char piece[OUT_PIECE];
    size_t calls = 0, most = 0;
    for (;;) {
        src.pulled = 0;
        ssize_t n = srv_gzip_stream_read(z, piece, sizeof piece);
        assert_true(n >= 0);
        /* never more than 64 KiB of plain bytes in one call */
        assert_in_range(src.pulled, 0, CALL_MAX_IN);
        if (src.pulled > most)
            most = src.pulled;
        if (n == 0)
            break;
        calls++;
        assert_true((size_t)n <= sizeof piece);
        if (len + (size_t)n > cap) {
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
        memcpy(out + len, piece, (size_t)n);
        len += (size_t)n;
        assert_true(calls < PLAIN_BYTES); /* it ends */
    }
    /* the source was read to its end, and a call after the end gives 0 */
    assert_int_equal(src.left, 0);
    assert_int_equal(srv_gzip_stream_read(z, piece, sizeof piece), 0);
    srv_gzip_stream_free(z);
    /* each call gave bytes until the end: at least one call per 64 KiB */
    assert_true(calls >= PLAIN_BYTES / CALL_MAX_IN);
    assert_int_equal(most, CALL_MAX_IN);
    assert_true(len > 0 && len < PLAIN_BYTES / 100);

    /* the concatenated pieces are one gzip member of the 8 MiB */
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
    char *plain = malloc(PLAIN_BYTES + 1);
    assert_non_null(plain);
    zs.next_in = (Bytef *)out;
    zs.avail_in = (uInt)len;
    zs.next_out = (Bytef *)plain;
    zs.avail_out = (uInt)(PLAIN_BYTES + 1);
    assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
    assert_int_equal(zs.total_out, PLAIN_BYTES);
    assert_int_equal(zs.avail_in, 0);
    inflateEnd(&zs);
    size_t wrong = 0;
    for (size_t i = 0; i < PLAIN_BYTES; i++)
        wrong += plain[i] != 'a';
    assert_int_equal(wrong, 0);
    free(plain);
    free(out);
}

/* The same with a source that gives less than it is asked for (4 KiB at a
 * time): still at most one read, of at most 64 KiB, per call. */
static ssize_t short_read(void *ctx, char *dst, size_t max) {
    return repeated_read(ctx, dst, max < 4096 ? max : 4096);
}

static void short_reads_round_trip(void **state) {
    (void)state;
    repeated src = {(size_t)1 << 20, 0, 0};
    srv_gzip_stream *z = srv_gzip_stream_new(short_read, &src);
    assert_non_null(z);
    char piece[OUT_PIECE];
    size_t total = 0, len = 0;
    char *out = malloc((size_t)1 << 20);
    assert_non_null(out);
    for (;;) {
        src.pulled = 0;
        src.reads = 0;
        ssize_t n = srv_gzip_stream_read(z, piece, sizeof piece);
        assert_true(n >= 0);
        assert_in_range(src.reads, 0, 1);
        total += src.pulled;
        if (n == 0)
            break;
        assert_true(len + (size_t)n <= (size_t)1 << 20);
        memcpy(out + len, piece, (size_t)n);
        len += (size_t)n;
    }
    srv_gzip_stream_free(z);
    assert_int_equal(total, (size_t)1 << 20);
    uLongf back_len = (uLongf)1 << 21;
    char *back = malloc(back_len);
    assert_non_null(back);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
    zs.next_in = (Bytef *)out;
    zs.avail_in = (uInt)len;
    zs.next_out = (Bytef *)back;
    zs.avail_out = (uInt)back_len;
    assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
    assert_int_equal(zs.total_out, (size_t)1 << 20);
    inflateEnd(&zs);
    free(back);
    free(out);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(read_is_bounded_and_round_trips),
        cmocka_unit_test(short_reads_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
