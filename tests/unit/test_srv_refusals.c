/*
 * test_srv_refusals.c — refusals counted by reason (server/refusals.h):
 * every reason has its line in attnd_refused_total, each refusal adds
 * one to its own reason and to no other, and the labels are the fixed
 * names the docs list.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counted_by_reason),
        cmocka_unit_test(test_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
