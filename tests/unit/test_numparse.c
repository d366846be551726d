/*
 * test_numparse.c — api_num_parse against glibc: every text is also read
 * the way jansson reads it (strtoll for integer literals, strtod for
 * reals, ERANGE as the error), and the doubles must agree bit for bit.
 * Texts: random bit patterns printed with "%.17g" and with the shortest
 * round-trip digits (api_num_format), random digit strings, and decimals
 * within a few units of the midpoint between two adjacent doubles (where
 * rounding is decided by the last digit), plus the grammar's edge cases.
 * NUMPARSE_ITERATIONS=n sets the random cases per test (default
 * 1,000,000); NUMPARSE_SEED=s fixes the seed (default: from the clock;
 * the seed is printed). Billions on demand, e.g.:
 *   NUMPARSE_ITERATIONS=1000000000 build/tests/test_numparse
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "numfmt.h"
#include "numparse.h"

/* ---- random numbers (splitmix64) ---------------------------------------- */

static uint64_t rng_state;

static uint64_t rng_next(void) {
    uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t rng_below(uint64_t n) {
    return rng_next() % n;
}

static double from_bits(uint64_t bits) {
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

static uint64_t to_bits(double x) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
}

/* A random finite double, every finite bit pattern equally likely. */
static double random_finite(void) {
    for (;;) {
        double x = from_bits(rng_next());
        if (isfinite(x))
            return x;
    }
}

static size_t iterations(void) {
    const char *s = getenv("NUMPARSE_ITERATIONS");
    return s ? (size_t)strtoull(s, NULL, 10) : 1000000;
}

/* ---- the reference: jansson's rules on glibc's conversions -------------- */

/* Reads text (NUL-terminated, already known to match the grammar) as
 * jansson does: no '.', 'e', 'E' -> strtoll (ERANGE: too big integer),
 * else strtod (ERANGE with ±HUGE_VAL: overflow). */
static api_num_kind reference(double *out, const char *text) {
    errno = 0;
    if (strpbrk(text, ".eE") == NULL) {
        long long v = strtoll(text, NULL, 10);
        if (errno == ERANGE)
            return API_NUM_BIG_INTEGER;
        *out = (double)v;
        return API_NUM_INTEGER;
    }
    double x = strtod(text, NULL);
    if (errno == ERANGE && isinf(x))
        return API_NUM_OVERFLOW;
    *out = x;
    return API_NUM_REAL;
}

static size_t failures;

/* Parses text from an exact-size copy (no terminator to lean on) and
 * compares kind, length and bits with the reference. */
static void check_text(const char *text) {
    size_t n = strlen(text);
    char *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    memcpy(copy, text, n);
    double got = 0, want = 0;
    size_t used = 12345;
    api_num_kind kg = api_num_parse(&got, &used, copy, n);
    api_num_kind kw = reference(&want, text);
    free(copy);
    int same = kg == kw && used == n;
    if (same && (kg == API_NUM_INTEGER || kg == API_NUM_REAL))
        same = to_bits(got) == to_bits(want);
    if (!same && failures++ < 10)
        print_message("# mismatch for \"%s\": kind %d used %zu bits "
                      "%016" PRIx64 "; strtod kind %d bits %016" PRIx64 "\n",
                      text, (int)kg, used, to_bits(got), (int)kw,
                      to_bits(want));
}

static void finish(const char *what, size_t n) {
    print_message("# %s: %zu texts, %zu mismatches\n", what, n, failures);
    size_t f = failures;
    failures = 0;
    assert_int_equal(f, 0);
}

/* ---- random texts -------------------------------------------------------- */

static void test_bit_patterns_17g(void **state) {
    (void)state;
    size_t n = iterations();
    char buf[64];
    for (size_t i = 0; i < n; i++) {
        snprintf(buf, sizeof buf, "%.17g", random_finite());
        check_text(buf);
    }
    finish("%.17g of random bit patterns", n);
}

static void test_bit_patterns_shortest(void **state) {
    (void)state;
    size_t n = iterations();
    char buf[API_NUM_MAX];
    for (size_t i = 0; i < n; i++) {
        double x = random_finite();
        api_num_format(buf, x, 0);
        check_text(buf);
        /* the round trip, except -0 (printed "0") and integers from 2^63
         * to 1e21 (printed without exponent: too big for jansson too) */
        double got;
        size_t used;
        api_num_kind k = api_num_parse(&got, &used, buf, strlen(buf));
        if (x != 0 && k != API_NUM_BIG_INTEGER) {
            if (to_bits(got) != to_bits(x) && failures++ < 10)
                print_message("# %s does not read back to %016" PRIx64 "\n",
                              buf, to_bits(x));
        }
    }
    finish("shortest digits of random bit patterns (and round trip)", n);
}

/* Random digit strings: 1 … 40 digits, a decimal point anywhere or none,
 * an exponent or none, a sign or none; leading zeros only as the grammar
 * allows ("0" alone before the point). */
static void random_decimal(char *buf) {
    char *w = buf;
    if (rng_below(2))
        *w++ = '-';
    size_t ndigits = 1 + rng_below(rng_below(4) ? 20 : 40);
    size_t point = rng_below(ndigits + 1); /* digits before the point */
    if (point == 0) {
        *w++ = '0';
    }
    for (size_t i = 0; i < ndigits; i++) {
        if (i == point && point > 0)
            *w++ = '.';
        else if (i == 0 && point == 0)
            *w++ = '.';
        char d = (char)('0' + rng_below(10));
        if (i == 0 && point > 0 && d == '0')
            d = '1' + (char)rng_below(9); /* no leading zero */
        *w++ = d;
    }
    if (point == ndigits && rng_below(3) == 0) {
        /* an integer literal, often near the int64 limits */
        if (rng_below(2)) {
            w = buf + (buf[0] == '-');
            w += sprintf(w, "92233720368547758%02d", (int)rng_below(20));
        }
    } else if (rng_below(2)) {
        *w++ = rng_below(2) ? 'e' : 'E';
        switch (rng_below(3)) {
        case 0:
            *w++ = '-';
            break;
        case 1:
            *w++ = '+';
            break;
        default:
            break;
        }
        w += sprintf(w, "%d", (int)rng_below(rng_below(2) ? 400 : 30));
    }
    *w = '\0';
}

static void test_random_digit_strings(void **state) {
    (void)state;
    size_t n = iterations();
    char buf[128];
    for (size_t i = 0; i < n; i++) {
        random_decimal(buf);
        check_text(buf);
    }
    finish("random digit strings", n);
}

/* Decimals near the midpoint of x and the next double up: the exact
 * midpoint (80-bit long double holds it) printed with 16 … 25
 * significant digits, then nudged by a few units in the last digit. */
static void test_near_midpoints(void **state) {
    (void)state;
    size_t n = iterations() / 4;
    char buf[96];
    for (size_t i = 0; i < n; i++) {
        double x = fabs(random_finite());
        double up = nextafter(x, INFINITY);
        if (!isfinite(up))
            continue;
        long double mid = ((long double)x + (long double)up) / 2;
        int digits = 16 + (int)rng_below(10);
        snprintf(buf, sizeof buf, "%.*Le", digits - 1, mid);
        char *e = strchr(buf, 'e');
        int nudge = (int)rng_below(5) - 2;
        for (char *c = e - 1; nudge != 0 && c >= buf; c--) {
            if (*c == '.')
                continue;
            int d = *c - '0' + nudge;
            nudge = d < 0 ? -1 : d > 9 ? 1 : 0;
            *c = (char)('0' + (d + 10) % 10);
        }
        if (buf[0] == '0' && buf[1] != '.')
            continue; /* the nudge carried into a leading zero */
        check_text(buf);
    }
    finish("decimals near midpoints", n);
}

/* ---- fixed cases --------------------------------------------------------- */

static void test_grammar(void **state) {
    (void)state;
    static const char *const invalid[] = {
        "",   "-",    "+1",    ".5",       "01",  "-01", "00",
        "1.", "1.e5", "1e",    "1e+",      "1E-", "-.5", "x",
        "-x", " 1",   "\"1\"", "Infinity", "NaN", "--1"};
    for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
        double x = 42;
        size_t used = 7;
        assert_int_equal(
            api_num_parse(&x, &used, invalid[i], strlen(invalid[i])),
            API_NUM_INVALID);
        assert_int_equal(used, 0);
        assert_true(x == 42);
    }
    /* the longest match, whatever follows */
    static const struct {
        const char *text;
        size_t used;
    } prefix[] = {{"1.5x", 3},  {"1]", 1},       {"-0,", 2},     {"2e3e4", 3},
                  {"0.5.5", 3}, {"7 ", 1},       {"1e5]", 3},    {"0x10", 1},
                  {"12-3", 2},  {"3.25E+2}", 7}, {"-0.0e-0,", 7}};
    for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++) {
        double x;
        size_t used;
        assert_int_not_equal(
            api_num_parse(&x, &used, prefix[i].text, strlen(prefix[i].text)),
            API_NUM_INVALID);
        assert_int_equal(used, prefix[i].used);
    }
    /* the length bounds the text: "12" cut to one byte is "1" */
    double x;
    size_t used;
    assert_int_equal(api_num_parse(&x, &used, "12", 1), API_NUM_INTEGER);
    assert_true(x == 1 && used == 1);
    assert_int_equal(api_num_parse(&x, &used, "1.5", 2), API_NUM_INVALID);
}

static void test_fixed_values(void **state) {
    (void)state;
    static const char *const texts[] = {
        "0",
        "-0",
        "0.0",
        "-0.0",
        "-0e5",
        "0e99999999999999999999",
        "1",
        "-1",
        "9007199254740992",
        "9007199254740993",
        "9007199254740993.0",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551616",
        "1e308",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1.7976931348623159e308",
        "-1e309",
        "1e99999999999999999999",
        "2.2250738585072014e-308",
        "2.2250738585072011e-308",
        "4.9406564584124654e-324",
        "2.4703282292062328e-324",
        "2.4703282292062327e-324",
        "1e-324",
        "1e-400",
        "1e-99999999999999999999",
        "0.1",
        "0.3",
        "1e23",
        "8.41e21",
        "5e-324",
        "2.718281828459045",
        "3.141592653589793238462643383279",
        "0.000000000000000000000000000000000000001",
        "123456789012345678901234567890",
        "123456789012345678901234567890.5",
        "1234567890123456789e-10",
        "9999999999999999999e300",
        "9999999999999999999",
        "1e22",
        "1e-22",
        "9007199254740991e22",
        "9007199254740993e-22",
        "0.5e-0",
        "1E+2",
        "7.2057594037927933e16",
        "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203124",
        "1.00000000000000011102230246251565404236316680908203126"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        check_text(texts[i]);
    finish("fixed texts", sizeof texts / sizeof texts[0]);
    /* jansson's integer rule: "-0" is the integer 0, +0 as a double */
    double x;
    size_t used;
    assert_int_equal(api_num_parse(&x, &used, "-0", 2), API_NUM_INTEGER);
    assert_int_equal(to_bits(x), 0);
    assert_int_equal(api_num_parse(&x, &used, "-0.0", 4), API_NUM_REAL);
    assert_int_equal(to_bits(x), UINT64_C(1) << 63);
}

/* A literal longer than the stack copy goes through a heap copy. */
static void test_long_literal(void **state) {
    (void)state;
    char buf[1200];
    size_t n = 0;
    buf[n++] = '0';
    buf[n++] = '.';
    while (n < 1000)
        buf[n++] = '0';
    memcpy(buf + n, "17976931348623157e-290", 23);
    check_text(buf);
    memset(buf, '9', 900);
    strcpy(buf + 900, ".5e-700");
    check_text(buf);
    finish("long literals", 2);
}

int main(void) {
    const char *seed = getenv("NUMPARSE_SEED");
    rng_state = seed ? strtoull(seed, NULL, 10) : (uint64_t)time(NULL);
    printf("# NUMPARSE_SEED=%" PRIu64 "\n", rng_state);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grammar),
        cmocka_unit_test(test_fixed_values),
        cmocka_unit_test(test_long_literal),
        cmocka_unit_test(test_bit_patterns_17g),
        cmocka_unit_test(test_bit_patterns_shortest),
        cmocka_unit_test(test_random_digit_strings),
        cmocka_unit_test(test_near_midpoints),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
