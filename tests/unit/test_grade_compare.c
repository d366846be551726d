/*
 * test_grade_compare.c — the comparison modes of /grade (compare.h) at
 * their edges, and points summed as the decimals they are written as
 * (grade_result.h api_points_sum).
 *
 * The sigfig and decdig cases are PrairieLearn's own rule worked by hand:
 * sigfig 3 of 0.0123456 allows |got − exp| < 0.51·10^−4.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "compare.h"
#include "grade_result.h"

static api_compare parsed(const char *text) {
    json_error_t err;
    json_t *v = json_loads(text, JSON_DECODE_ANY, &err);
    assert_non_null(v);
    api_compare c;
    api_problem p;
    memset(&p, 0, sizeof p);
    assert_int_equal(api_compare_parse(v, "/compare", &c, &p), 0);
    json_decref(v);
    return c;
}

static api_match match(const api_compare *c, double expected, double got) {
    int decimals = -1;
    return api_compare_entry(c, expected, got, &decimals);
}

static void relabs_is_numpy_isclose(void **state) {
    (void)state;
    api_compare c = api_compare_relabs(1e-5, 1e-8);
    assert_int_equal(match(&c, 100, 100.001), API_MATCH_YES);
    assert_int_equal(match(&c, 100, 100.0011), API_MATCH_NO);
    assert_int_equal(match(&c, 0, 1e-8), API_MATCH_YES);
    assert_int_equal(match(&c, 0, 1.1e-8), API_MATCH_NO);
    /* np.round(x, 6) of -0.0341234567 misses by 4.57e-7 > 3.5e-7 */
    assert_int_equal(match(&c, -0.0341234567, -0.034123), API_MATCH_NO);
}

static void the_default_accepts_an_answer_rounded_as_written(void **state) {
    (void)state;
    api_compare c = api_compare_default();
    int decimals = -1;
    assert_int_equal(api_compare_entry(&c, -0.0341234567, -0.034123, &decimals),
                     API_MATCH_ROUNDED);
    assert_int_equal(decimals, 6);
    decimals = -1;
    assert_int_equal(api_compare_entry(&c, 0.33023845, 0.3302, &decimals),
                     API_MATCH_ROUNDED);
    assert_int_equal(decimals, 4);
    /* 0.00003 written as np.round(x, 4): 0, four decimals at least */
    assert_int_equal(match(&c, 0.00003, 0), API_MATCH_ROUNDED);
    /* fewer than 4 decimals is not accepted as rounding */
    assert_int_equal(match(&c, 0.3302, 0.33), API_MATCH_NO);
    assert_int_equal(match(&c, 1.66976, 1.67), API_MATCH_NO);
    /* the wrong digit at the 4th decimal */
    assert_int_equal(match(&c, 0.33023845, 0.3303), API_MATCH_NO);
    /* within relabs: a plain match, not a rounded one */
    assert_int_equal(match(&c, 1234.5678, 1234.57), API_MATCH_YES);
    /* {"decimals": 6} takes np.round(x, 4) no more */
    api_compare six = parsed("{\"mode\": \"relabs_or_rounded\", "
                             "\"decimals\": 6}");
    assert_int_equal(match(&six, 0.33023845, 0.3302), API_MATCH_NO);
    assert_int_equal(match(&six, -0.0341234567, -0.034123), API_MATCH_ROUNDED);
}

/* api_compare_rounded_at_most says 1 exactly when api_compare_entry
 * finds a rounded match at no more places than asked, for every answer
 * whose error is within that many places' half unit: random references of
 * many sizes, their answers rounded to 0 … 12 places (numpy's
 * np.round(x, k): rint(x·10^k)/10^k) and some nudged by an ulp or two. */
static void a_rounded_match_is_known_without_its_places(void **state) {
    (void)state;
    api_compare c = api_compare_default();
    uint64_t seed = 0x9e3779b97f4a7c15u;
    size_t shortcuts = 0, seen = 0;
    for (int n = 0; n < 400000; n++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        double unit = (double)(seed >> 11) / 9007199254740992.0;
        int size = (int)(seed % 9) - 6; /* 1e-6 … 1e2 */
        double expected = (2 * unit - 1) * pow(10, size);
        int places = (int)((seed >> 7) % 13);
        double k10 = pow(10, places);
        double got = rint(expected * k10) / k10;
        if ((seed >> 5) % 4 == 0)
            got = nextafter(got, (seed >> 9) % 2 ? 1e300 : -1e300);
        for (int at_most = 0; at_most <= 11; at_most++) {
            int decimals = -1;
            api_match m = api_compare_entry(&c, expected, got, &decimals);
            /* what api_compare_entry finds, seen from at_most places */
            int within = m == API_MATCH_ROUNDED && decimals <= at_most &&
                         at_most >= c.decimals && at_most <= 9 && got != 0 &&
                         fabs(got - expected) < 0.51 * pow(10, -at_most);
            int fast = api_compare_rounded_at_most(&c, expected, got, at_most);
            if (fast != within)
                fail_msg("expected %.17g, got %.17g, at most %d places: "
                         "api_compare_entry %d at %d places, the shortcut %d",
                         expected, got, at_most, (int)m, decimals, fast);
            seen += (size_t)within;
            shortcuts += (size_t)fast;
        }
    }
    assert_int_equal(shortcuts, seen);
    assert_true(seen > 40000); /* the shortcut was taken, and often */
}

static void sigfig_and_decdig_are_prairielearns(void **state) {
    (void)state;
    api_compare sf = parsed("{\"mode\": \"sigfig\", \"digits\": 3}");
    assert_int_equal(match(&sf, 0.0123456, 0.0123), API_MATCH_YES);
    assert_int_equal(match(&sf, 0.0123456, 0.0124), API_MATCH_NO);
    assert_int_equal(match(&sf, 123456, 123000), API_MATCH_YES);
    assert_int_equal(match(&sf, 123456, 124000), API_MATCH_NO);
    assert_int_equal(match(&sf, 0, 0.001), API_MATCH_YES); /* n = 2 */
    assert_int_equal(match(&sf, 0, 0.006), API_MATCH_NO);
    /* a tiny reference whose half unit underflows still matches itself */
    assert_int_equal(match(&sf, 5e-324, 5e-324), API_MATCH_YES);
    api_compare dd = parsed("\"decdig\""); /* 4 digits */
    assert_int_equal(match(&dd, 0.123456, 0.1235), API_MATCH_YES);
    assert_int_equal(match(&dd, 0.123456, 0.1236), API_MATCH_NO);
    assert_int_equal(match(&dd, 1e6 + 0.00004, 1e6), API_MATCH_YES);
}

static void ulp_counts_doubles(void **state) {
    (void)state;
    api_compare u = parsed("{\"mode\": \"ulp\", \"ulps\": 2}");
    double x = 0.1;
    double up2 = nextafter(nextafter(x, 1), 1);
    assert_int_equal(match(&u, x, up2), API_MATCH_YES);
    assert_int_equal(match(&u, x, nextafter(up2, 1)), API_MATCH_NO);
    /* across zero: −0 and +0 are one, the smallest subnormals 2 apart */
    assert_int_equal(match(&u, -0.0, 0.0), API_MATCH_YES);
    assert_int_equal(match(&u, -5e-324, 5e-324), API_MATCH_YES);
    assert_int_equal(match(&u, -1e-323, 1e-323), API_MATCH_NO);
}

static void only_infinity_matches_infinity(void **state) {
    (void)state;
    const char *modes[] = {"\"relabs\"", "\"relabs_or_rounded\"", "\"sigfig\"",
                           "\"decdig\"", "\"ulp\""};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        api_compare c = parsed(modes[i]);
        assert_int_equal(match(&c, INFINITY, 99), API_MATCH_NO);
        assert_int_equal(match(&c, -INFINITY, -1e308), API_MATCH_NO);
        assert_int_equal(match(&c, 1e308, INFINITY), API_MATCH_NO);
        assert_int_equal(match(&c, NAN, NAN), API_MATCH_NO);
        assert_int_equal(match(&c, INFINITY, INFINITY), API_MATCH_YES);
    }
}

static void bad_comparisons_are_named_where_they_are(void **state) {
    (void)state;
    static const struct {
        const char *text, *pointer;
        api_error code;
    } cases[] = {
        {"\"sigfog\"", "/compare", API_E_INVALID_VALUE},
        {"3", "/compare", API_E_WRONG_TYPE},
        {"{\"mode\": 3}", "/compare/mode", API_E_WRONG_TYPE},
        {"{\"mode\": \"sigfig\", \"digits\": 0}", "/compare/digits",
         API_E_INVALID_VALUE},
        {"{\"mode\": \"sigfig\", \"digits\": 2.5}", "/compare/digits",
         API_E_WRONG_TYPE},
        {"{\"mode\": \"sigfig\", \"rtol\": 1}", "/compare/rtol",
         API_E_UNKNOWN_FIELD},
        {"{\"mode\": \"relabs\", \"rtol\": -1}", "/compare/rtol",
         API_E_INVALID_VALUE},
        {"{\"mode\": \"ulp\", \"ulps\": -1}", "/compare/ulps",
         API_E_INVALID_VALUE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        json_t *v = json_loads(cases[i].text, JSON_DECODE_ANY, NULL);
        assert_non_null(v);
        api_compare c;
        api_problem p;
        memset(&p, 0, sizeof p);
        assert_int_equal(api_compare_parse(v, "/compare", &c, &p), -1);
        assert_int_equal(p.code, cases[i].code);
        assert_string_equal(p.pointer, cases[i].pointer);
        json_decref(v);
    }
}

static double total(const double *xs, size_t n) {
    api_points_sum s;
    memset(&s, 0, sizeof s);
    for (size_t i = 0; i < n; i++)
        api_points_add(&s, xs[i]);
    return api_points_total(&s);
}

static void points_add_up_as_written(void **state) {
    (void)state;
    double tenths[] = {0.1, 0.2};
    assert_true(total(tenths, 2) == 0.3); /* not 0.30000000000000004 */
    double sevenths[7];
    for (size_t i = 0; i < 7; i++)
        sevenths[i] = 1.0 / 7;
    /* 0.14285714285714285 seven times, as written: 0.99999999999999995,
     * which is the double 1 */
    assert_true(total(sevenths, 7) == 1.0);
    double mixed[] = {3, 0.25, 1e-3, 0};
    assert_true(total(mixed, 4) == 3.251);
    double huge[] = {1e308, 1e308};
    assert_true(isinf(total(huge, 2)));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(relabs_is_numpy_isclose),
        cmocka_unit_test(the_default_accepts_an_answer_rounded_as_written),
        cmocka_unit_test(a_rounded_match_is_known_without_its_places),
        cmocka_unit_test(sigfig_and_decdig_are_prairielearns),
        cmocka_unit_test(ulp_counts_doubles),
        cmocka_unit_test(only_infinity_matches_infinity),
        cmocka_unit_test(bad_comparisons_are_named_where_they_are),
        cmocka_unit_test(points_add_up_as_written),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
