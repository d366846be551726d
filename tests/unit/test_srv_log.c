/*
 * test_srv_log.c — durations in the access log and Server-Timing
 * (srv_format_ms): three decimals, rounded to the nearest microsecond, the
 * text "%.3f" gives wherever the value is not within a hair of a tie, and
 * printf's own text for what is not a duration.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "log.h"

static void check_ms(double ms, const char *want) {
    char got[SRV_MS_TEXT_MAX];
    size_t n = srv_format_ms(got, ms);
    assert_string_equal(got, want);
    assert_int_equal(n, strlen(want));
}

static void test_known(void **state) {
    (void)state;
    check_ms(0.0, "0.000");
    check_ms(0.0004, "0.000");
    check_ms(0.0006, "0.001");
    check_ms(0.05, "0.050");
    check_ms(1.0, "1.000");
    check_ms(12.3456, "12.346");
    check_ms(999.9996, "1000.000");
    check_ms(1234567.891, "1234567.891");
    check_ms(-1.0, "-1.000"); /* not a duration: printf's text */
    check_ms(NAN, "nan");
    check_ms(INFINITY, "inf");
}

/* Against snprintf("%.3f") over many magnitudes, skipping values whose
 * thousandfold lies within 1e-6 of a half (ties may round either way). */
static void test_like_printf(void **state) {
    (void)state;
    uint64_t s = 1;
    size_t compared = 0;
    for (int i = 0; i < 200000; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        double unit = (double)(s >> 11) * 0x1p-53;
        double ms = unit * pow(10.0, (double)(i % 10) - 3.0);
        double scaled = ms * 1000.0;
        if (fabs(scaled - floor(scaled) - 0.5) < 1e-6)
            continue;
        char want[64], got[SRV_MS_TEXT_MAX];
        snprintf(want, sizeof want, "%.3f", ms);
        srv_format_ms(got, ms);
        assert_string_equal(got, want);
        compared++;
    }
    assert_true(compared > 199000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known),
        cmocka_unit_test(test_like_printf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
