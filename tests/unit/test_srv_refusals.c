/*
 * test_srv_refusals.c — refusals counted by reason (server/refusals.h):
 * every reason has its line in attnd_refused_total, each refusal adds
 * one to its own reason and to no other, the labels are the fixed
 * names the docs list, and a flood of refused connections is logged as
 * a line a second naming its first client, then a count.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "refusals.h"

/* The count on reason's line of the rendered text, or -1. */
static long long count_of(const char *text, const char *reason) {
    char key[96];
    snprintf(key, sizeof key, "attnd_refused_total{reason=\"%s\"} ", reason);
    const char *at = strstr(text, key);
    return at ? strtoll(at + strlen(key), NULL, 10) : -1;
}

static void test_counted_by_reason(void **state) {
    (void)state;
    char text[2048];
    size_t n = srv_refusals_render(text, sizeof text);
    assert_true(n < sizeof text);
    assert_non_null(strstr(text, "# TYPE attnd_refused_total counter\n"));
    for (int r = SRV_REFUSED_NONE + 1; r < SRV_REFUSED_REASONS; r++)
        assert_int_equal(count_of(text, srv_refusal_name(r)), 0);
    srv_refused(SRV_REFUSED_RATE_LIMITED);
    srv_refused(SRV_REFUSED_RATE_LIMITED);
    srv_refused(SRV_REFUSED_QUEUE_FULL);
    srv_refused(SRV_REFUSED_NONE); /* not a refusal: counted nowhere */
    srv_refused_connection(SRV_REFUSED_CONNECTIONS, "192.0.2.7", 503);
    srv_refusals_render(text, sizeof text);
    assert_int_equal(count_of(text, "rate_limited"), 2);
    assert_int_equal(count_of(text, "queue_full"), 1);
    assert_int_equal(count_of(text, "connections_per_address"), 1);
    assert_int_equal(count_of(text, "too_concurrent"), 0);
    assert_int_equal(count_of(text, "none"), -1);
    /* a closed flood is counted in full, however few lines it logs */
    for (int i = 0; i < 50; i++)
        srv_refused_connection(SRV_REFUSED_CONNECTIONS_CLOSED, "192.0.2.7", 0);
    srv_refusals_render(text, sizeof text);
    assert_int_equal(count_of(text, "connections_closed"), 50);
    /* too small a buffer: the length it needs, as snprintf */
    char small[16];
    assert_true(srv_refusals_render(small, sizeof small) > sizeof small);
}

static void test_names(void **state) {
    (void)state;
    static const char *const want[] = {"connections_per_address",
                                       "connections_closed",
                                       "rate_limited",
                                       "too_concurrent",
                                       "overloaded",
                                       "address_share",
                                       "memory",
                                       "queue_full"};
    assert_int_equal(sizeof want / sizeof want[0], SRV_REFUSED_REASONS - 1);
    for (int r = SRV_REFUSED_NONE + 1; r < SRV_REFUSED_REASONS; r++)
        assert_string_equal(srv_refusal_name(r), want[r - 1]);
    assert_string_equal(srv_refusal_name(SRV_REFUSED_REASONS), "none");
}

/* The access lines srv_refused_connection writes (to stderr) while
 * `refuse` runs, into buf. */
static void captured(void (*refuse)(void), char *buf, size_t cap) {
    char path[] = "/tmp/attnd-refusals-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    int saved = dup(STDERR_FILENO);
    assert_true(saved >= 0);
    assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
    refuse();
    assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
    close(saved);
    ssize_t n = pread(fd, buf, cap - 1, 0);
    close(fd);
    buf[n > 0 ? n : 0] = 0;
}

static int lines_with(const char *text, const char *what) {
    int n = 0;
    for (const char *at = text; (at = strstr(at, what)) != NULL; at++)
        n++;
    return n;
}

static void closed_flood(void) {
    /* at the start of a second none of the earlier refusals fell in */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    time_t started = now.tv_sec;
    while (now.tv_sec == started) {
        usleep(1000);
        clock_gettime(CLOCK_MONOTONIC, &now);
    }
    for (int i = 0; i < 30; i++)
        srv_refused_connection(SRV_REFUSED_CONNECTIONS_CLOSED, "198.51.100.9",
                               0);
}

static void next_second(void) {
    sleep(1);
    srv_refused_connection(SRV_REFUSED_CONNECTIONS_CLOSED, "198.51.100.10", 0);
}

/* Connections closed at accept can get no answer: each is counted, and
 * the log has a line a second, naming the client of the first, then a
 * line counting the rest with client "-". */
static void test_closed_flood_logged(void **state) {
    (void)state;
    char text[4096];
    captured(closed_flood, text, sizeof text);
    /* the first refusal of a second flushes the count of earlier ones
     * (test_counted_by_reason's), then names its client; the 29 after it
     * write nothing */
    assert_int_equal(lines_with(text, " 198.51.100.9 "), 1);
    assert_non_null(
        strstr(text, " 198.51.100.9 - refused=connections_closed\n"));
    assert_int_equal(lines_with(text, "refused=connections_closed"),
                     1 + lines_with(text, " - - refused=connections_closed"));
    captured(next_second, text, sizeof text);
    assert_int_equal(lines_with(text, "refused=connections_closed"), 2);
    assert_non_null(strstr(text, " - - refused=connections_closed x29\n"));
    assert_non_null(
        strstr(text, " 198.51.100.10 - refused=connections_closed\n"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counted_by_reason),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_closed_flood_logged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
