/*
 * test_numfmt.c — api_num_format against independent references: glibc's
 * correctly rounded printf and strtod (the slow retry method, asked at the
 * printed length and one digit less), an exact search over the full
 * decimal expansion of x ("%.780e" is exact in glibc), printf for integers,
 * and big-integer checks of the power-of-ten table and the integer
 * logarithms.
 * NUMFMT_ITERATIONS=n sets the number of random bit patterns (default
 * 2,000,000); NUMFMT_SEED=s fixes the seed (default: from the clock);
 * NUMFMT_TEST=pattern runs only the matching tests, e.g. for billions:
 *   NUMFMT_TEST=test_random_bit_patterns NUMFMT_ITERATIONS=1000000000 \
 *     build/tests/test_numfmt
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "numfmt.h"
#include "numfmt_exact.h"
#include "numfmt_pow10.h"
#include "numfmt_shortest.h"

/* ---- random numbers (splitmix64) ---------------------------------------- */

static uint64_t rng_state;

static uint64_t rng_next_r(uint64_t *state) {
    uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t rng_next(void) {
    return rng_next_r(&rng_state);
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

/* A random finite double, every bit pattern equally likely. */
static double random_finite_r(uint64_t *state) {
    for (;;) {
        double x = from_bits(rng_next_r(state));
        if (isfinite(x))
            return x;
    }
}

static double random_finite(void) {
    return random_finite_r(&rng_state);
}

static long env_long(const char *name, long fallback) {
    const char *s = getenv(name);
    return s && *s ? strtol(s, NULL, 10) : fallback;
}

/* ---- the reference layout ------------------------------------------------ */

/* Number::toString's four cases, for significant digits d (k of them, no
 * trailing zero) and point position n: value = 0.d × 10^n. */
static void reference_layout(char *out, int negative, const char *d, int n) {
    int k = (int)strlen(d);
    char *p = out;
    if (negative)
        *p++ = '-';
    if (k <= n && n <= 21)
        p += sprintf(p, "%s%.*s", d, n - k, "000000000000000000000");
    else if (0 < n && n <= 21)
        p += sprintf(p, "%.*s.%s", n, d, d + n);
    else if (-6 < n && n <= 0)
        p += sprintf(p, "0.%.*s%s", -n, "000000", d);
    else
        p += sprintf(p, "%c%s%se%+d", d[0], k > 1 ? "." : "", d + 1, n - 1);
    *p = '\0';
}

static void strip_zeros(char *digits) {
    size_t len = strlen(digits);
    while (len > 1 && digits[len - 1] == '0')
        digits[--len] = '\0';
}

/* Splits printed text into sign, significant digits and point position n
 * (value = 0.digits × 10^n); 0 when the text is not a nonzero decimal. */
static int parse_printed(const char *s, int *negative, char *digits, int *n) {
    char all[48];
    int len = 0, point = -1;
    *negative = *s == '-';
    s += *negative;
    for (; (*s >= '0' && *s <= '9') || *s == '.'; s++) {
        if (*s == '.') {
            if (point >= 0)
                return 0;
            point = len;
        } else if (len < 40) {
            all[len++] = *s;
        } else {
            return 0;
        }
    }
    all[len] = '\0';
    int lead = (int)strspn(all, "0");
    if (lead == len)
        return 0;
    *n = (point >= 0 ? point : len) - lead;
    if (*s == 'e')
        *n += atoi(s + 1);
    else if (*s != '\0')
        return 0;
    strcpy(digits, all + lead);
    strip_zeros(digits);
    return 1;
}

/* ---- reference shortest digits ------------------------------------------ */

/* "%.{p-1}e" of x > 0: its p digits and point position. */
static void rounded_digits(char *digits, int *n, double x, int p) {
    char tmp[48];
    snprintf(tmp, sizeof tmp, "%.*e", p - 1, x);
    int len = 0;
    const char *c = tmp;
    for (; *c != 'e'; c++)
        if (*c != '.')
            digits[len++] = *c;
    digits[len] = '\0';
    *n = atoi(c + 1) + 1;
}

static int round_trips(const char *digits, int n, double x) {
    char tmp[64];
    snprintf(tmp, sizeof tmp, "0.%se%d", digits, n);
    return strtod(tmp, NULL) == x;
}

/* Shortest digits of x > 0 by Number::toString's definition, from the exact
 * expansion of x: for each length p the two p-digit neighbours of x; the
 * first length where one reads back wins, the closer of two, ties even. */
static void exact_shortest(char *digits, int *n, double x) {
    char full[800];
    char exact[800];
    snprintf(full, sizeof full, "%.780e", x);
    int len = 0;
    const char *c = full;
    for (; *c != 'e'; c++)
        if (*c != '.')
            exact[len++] = *c;
    exact[len] = '\0';
    int n0 = atoi(c + 1) + 1;
    for (int p = 1; p <= 17; p++) {
        const char *rest = exact + p;
        if (strspn(rest, "0") == strlen(rest)) { /* x has ≤ p digits */
            memcpy(digits, exact, (size_t)p);
            digits[p] = '\0';
            *n = n0;
            strip_zeros(digits);
            return;
        }
        char low[24], up[24];
        memcpy(low, exact, (size_t)p);
        low[p] = '\0';
        memcpy(up, low, (size_t)p + 1);
        int nup = n0, i = p - 1;
        while (i >= 0 && up[i] == '9')
            up[i--] = '0';
        if (i >= 0) {
            up[i]++;
        } else { /* 99…9 + 1 = 100…0 */
            up[0] = '1';
            nup++;
        }
        int low_in = round_trips(low, n0, x), up_in = round_trips(up, nup, x);
        if (!low_in && !up_in)
            continue;
        int take_up;
        if (low_in && up_in) {
            if (rest[0] != '5')
                take_up = rest[0] > '5';
            else if (strspn(rest + 1, "0") != strlen(rest + 1))
                take_up = 1;
            else
                take_up = (low[p - 1] - '0') % 2 == 1; /* tie: even */
        } else {
            take_up = up_in;
        }
        strcpy(digits, take_up ? up : low);
        *n = take_up ? nup : n0;
        strip_zeros(digits);
        return;
    }
    fail_msg("no 17-digit decimal reads back as %a", x);
}

/* The expected text for x: sign, exact shortest digits, layout. */
static void expected_text(char *out, double x) {
    if (x == 0) {
        strcpy(out, "0");
        return;
    }
    char digits[24];
    int n;
    exact_shortest(digits, &n, fabs(x));
    reference_layout(out, x < 0, digits, n);
}

/* ---- known strings ------------------------------------------------------ */

static void check_text(double x, int precision, const char *want) {
    char buf[API_NUM_MAX];
    size_t len = api_num_format(buf, x, precision);
    if (strcmp(buf, want) != 0 || len != strlen(want))
        fail_msg("x=%.17g (%a) precision %d: got \"%s\" (length %zu), want "
                 "\"%s\"",
                 x, x, precision, buf, len, want);
}

static void test_known_strings(void **state) {
    (void)state;
    check_text(7.6, 0, "7.6");
    check_text(0.1, 0, "0.1");
    check_text(0.3, 0, "0.3");
    check_text(0.1 + 0.2, 0, "0.30000000000000004");
    check_text(1e21, 0, "1e+21");
    check_text(1e-7, 0, "1e-7");
    check_text(123e-20, 0, "1.23e-18");
    check_text(5e-324, 0, "5e-324");
    check_text(-5e-324, 0, "-5e-324");
    check_text(1.7976931348623157e308, 0, "1.7976931348623157e+308");
    check_text(2.2250738585072014e-308, 0, "2.2250738585072014e-308");
    check_text(2, 0, "2");
    check_text(-2, 0, "-2");
    check_text(0.0, 0, "0");
    check_text(-0.0, 0, "0");
    check_text(1e-6, 0, "0.000001");
    check_text(1.5e-6, 0, "0.0000015");
    check_text(0.000001234, 0, "0.000001234");
    check_text(0.0000001234, 0, "1.234e-7");
    check_text(123456789012345680000.0, 0, "123456789012345680000");
    check_text(1e20, 0, "100000000000000000000");
    check_text(1e22, 0, "1e+22");
    check_text(1.5e300, 0, "1.5e+300");
    check_text(-1.5e-300, 0, "-1.5e-300");
    check_text(100, 0, "100");
    check_text(1234.5678, 0, "1234.5678");
    check_text(9007199254740992.0, 0, "9007199254740992");
    check_text(9007199254740994.0, 0, "9007199254740994");
    check_text(18014398509481984.0, 0, "18014398509481984");
    check_text(4.35, 0, "4.35");
    check_text(8.9e-323, 0, "9e-323"); /* 1 digit reads back, not 8.9 */
    check_text(1.0 / 3, 0, "0.3333333333333333");
    check_text(2.0 / 3, 0, "0.6666666666666666");
    check_text(5e-7, 0, "5e-7");
    check_text(0x1p-1022, 0, "2.2250738585072014e-308");
    check_text(0x1p-1074 * 2, 0, "1e-323");
    check_text(0x1p63, 0, "9223372036854776000");
    check_text(0x1p64, 0, "18446744073709552000");
    check_text(0x1p1023, 0, "8.98846567431158e+307");
    check_text(INFINITY, 0, "null");
    check_text(NAN, 0, "null");
    check_text(-INFINITY, 3, "null");
}

static void test_precision_strings(void **state) {
    (void)state;
    check_text(1.4774782878985795, 3, "1.48");
    check_text(1.4774782878985795, 1, "1");
    check_text(1.4774782878985795, 17, "1.4774782878985795");
    check_text(1.4774782878985795, 16, "1.477478287898579"); /* …57949 */
    check_text(0.1 + 0.2, 16, "0.3");
    check_text(0.1 + 0.2, 17, "0.30000000000000004");
    check_text(2.5, 1, "2"); /* exact tie: to even */
    check_text(3.5, 1, "4");
    check_text(0.125, 2, "0.12");
    check_text(0.375, 2, "0.38");
    check_text(1.45, 2, "1.4"); /* 1.45 is 1.4499999999999999556 */
    check_text(1.55, 2, "1.6"); /* 1.55 is 1.5500000000000000444 */
    check_text(-0.0004999, 2, "-0.0005");
    check_text(999.96, 4, "1000");
    check_text(999.96, 5, "999.96");
    check_text(123456, 2, "120000");
    check_text(1.7976931348623157e308, 1, "null"); /* 2e308 overflows */
    check_text(1.7976931348623157e308, 2, "null");
    check_text(1.7976931348623157e308, 3, "null");
    check_text(1.7976931348623157e308, 12, "1.79769313486e+308");
    check_text(5e-324, 1, "5e-324");
    check_text(7.4e-323, 1, "7e-323");
    check_text(-0.0, 5, "0");
    check_text(1e21, 3, "1e+21");
    check_text(9.6e-7, 1, "0.000001");
    check_text(2, 0, "2");
    check_text(2, 18, "2"); /* out of range: shortest */
}

/* ---- randomized: every bit pattern class --------------------------------- */

/* Checks that buf is the Number::toString text of x ≠ 0 (shortest digits):
 * 1. it parses, and its layout is the one for its own digits and point;
 * 2. it reads back as x;
 * 3. at its length k the correctly rounded digits of x ("%.{k−1}e") are
 *    exactly its digits (so it is the closest k-digit decimal);
 * 4. the correctly rounded k−1 digits do not read back as x, so no shorter
 *    decimal does (for x not a power of two, the rounding interval is
 *    symmetric and a precision that reads back stays good when raised).
 * The k−1 digits come from the k digits: last digit ≤ 4 rounds down, ≥ 6
 * up; only a 5 needs another "%.{k−2}e". Returns 0 when all hold, else
 * writes the reason to why. */
static int check_printed(const char *buf, double x, char *why, size_t whylen) {
    char again[64], digits[48], ref[24];
    int negative, n, rn;
    if (!parse_printed(buf, &negative, digits, &n) || negative != (x < 0)) {
        snprintf(why, whylen, "\"%s\" does not parse", buf);
        return 1;
    }
    reference_layout(again, negative, digits, n);
    if (strcmp(again, buf) != 0) {
        snprintf(why, whylen, "\"%s\" laid out, want \"%s\"", buf, again);
        return 1;
    }
    if (strtod(buf, NULL) != x) {
        snprintf(why, whylen, "\"%s\" does not read back", buf);
        return 1;
    }
    int k = (int)strlen(digits);
    double ax = fabs(x);
    rounded_digits(ref, &rn, ax, k);
    if (strncmp(ref, digits, (size_t)k) != 0 || rn != n) {
        snprintf(why, whylen, "\"%s\": digits %s×10^%d, rounded %s×10^%d", buf,
                 digits, n, ref, rn);
        return 1;
    }
    if (k > 1) {
        char last = ref[k - 1];
        if (last == '5') {
            rounded_digits(ref, &rn, ax, k - 1);
        } else {
            ref[k - 1] = '\0';
            int i = k - 2;
            if (last > '5') { /* round the k−1 digits up */
                while (i >= 0 && ref[i] == '9')
                    ref[i--] = '0';
                if (i >= 0) {
                    ref[i]++;
                } else {
                    ref[0] = '1';
                    rn++;
                }
            }
        }
        if (round_trips(ref, rn, ax)) {
            snprintf(why, whylen, "\"%s\": %d digits %s also read back", buf,
                     k - 1, ref);
            return 1;
        }
    }
    return 0;
}

/* Prints x with precision 0 and checks the text; 0 when right. */
static int check_shortest_random(double x, char *why, size_t whylen) {
    char buf[API_NUM_MAX];
    size_t len = api_num_format(buf, x, 0);
    if (len != strlen(buf) || len > 25) {
        snprintf(why, whylen, "length %zu for \"%s\"", len, buf);
        return 1;
    }
    return check_printed(buf, x, why, whylen);
}

/* Every integer below 10^6 (so every 4-digit group and 2-digit pair the
 * digit writer forms), their negatives and i · 10^15, against printf. */
static void test_all_small_integers(void **state) {
    (void)state;
    long failures = 0;
    for (long i = 1; i < 1000000; i++) {
        char want[32], got[API_NUM_MAX];
        snprintf(want, sizeof want, "%ld", i);
        api_num_format(got, (double)i, 0);
        int bad = strcmp(want, got) != 0;
        snprintf(want, sizeof want, "-%ld", i);
        api_num_format(got, -(double)i, 0);
        bad |= strcmp(want, got) != 0;
        snprintf(want, sizeof want, "%ld000000000000000", i); /* i · 10^15 */
        api_num_format(got, (double)i * 1e15, 0);
        bad |= strcmp(want, got) != 0;
        if (bad && failures++ < 10)
            print_error("i = %ld: got \"%s\", want \"%s\"\n", i, got, want);
    }
    assert_int_equal(failures, 0);
}

/* One share of the random bit patterns, run on its own thread. */
typedef struct {
    uint64_t state; /* the worker's random stream */
    long count;     /* patterns to check */
    long failures;
} bit_pattern_share;

static void *check_bit_patterns(void *arg) {
    bit_pattern_share *share = arg;
    char why[200];
    for (long i = 0; i < share->count; i++) {
        double x = random_finite_r(&share->state);
        if ((to_bits(x) & ((UINT64_C(1) << 52) - 1)) == 0)
            continue; /* powers of two: exact test below */
        if (check_shortest_random(x, why, sizeof why) && share->failures++ < 10)
            fprintf(stderr, "# x = %a: %s\n", x, why);
    }
    return NULL;
}

/* NUMFMT_ITERATIONS patterns (default 2,000,000) on NUMFMT_THREADS threads
 * (default 2, the machine's cores). */
static void test_random_bit_patterns(void **state) {
    (void)state;
    long iterations = env_long("NUMFMT_ITERATIONS", 2000000);
    long threads = env_long("NUMFMT_THREADS", 2);
    if (threads < 1 || threads > 64)
        threads = 1;
    bit_pattern_share shares[64];
    pthread_t ids[64];
    for (long t = 0; t < threads; t++) {
        shares[t].state = rng_next();
        shares[t].count = iterations / threads + (t < iterations % threads);
        shares[t].failures = 0;
        assert_int_equal(
            pthread_create(&ids[t], NULL, check_bit_patterns, &shares[t]), 0);
    }
    long failures = 0;
    for (long t = 0; t < threads; t++) {
        pthread_join(ids[t], NULL);
        failures += shares[t].failures;
    }
    print_message("# %ld random bit patterns on %ld threads, %ld failures\n",
                  iterations, threads, failures);
    assert_int_equal(failures, 0);
}

/* Random doubles in the ranges attention results live in: (−1, 1) and
 * moderate magnitudes, where the digits are mostly 16 or 17 long. */
static void test_random_moderate(void **state) {
    (void)state;
    long failures = 0;
    char why[200];
    for (long i = 0; i < 300000; i++) {
        double u = (double)(rng_next() >> 11) * 0x1p-53;
        double x = i % 2 ? u * 2 - 1 : ldexp(u + 0.5, (int)(i % 121) - 60);
        if (x == 0)
            continue;
        if (check_shortest_random(x, why, sizeof why) && failures++ < 10)
            print_error("x = %a: %s\n", x, why);
    }
    assert_int_equal(failures, 0);
}

/* ---- exact reference on the hard classes --------------------------------- */

static long exact_failures;

static void check_exact(double x) {
    char want[64], got[API_NUM_MAX];
    expected_text(want, x);
    api_num_format(got, x, 0);
    if (strcmp(want, got) != 0 && exact_failures++ < 10)
        print_error("x = %a: got \"%s\", want \"%s\"\n", x, got, want);
}

static void test_exact_powers_of_two(void **state) {
    (void)state;
    exact_failures = 0;
    for (int e = -1074; e <= 1023; e++) {
        check_exact(ldexp(1, e));
        check_exact(-ldexp(1, e));
        check_exact(nextafter(ldexp(1, e), 0));
        check_exact(nextafter(ldexp(1, e), INFINITY));
    }
    assert_int_equal(exact_failures, 0);
}

static void test_exact_subnormals(void **state) {
    (void)state;
    exact_failures = 0;
    for (uint64_t c = 1; c <= 20000; c++)
        check_exact(from_bits(c));
    for (uint64_t c = 0; c <= 2000; c++) { /* top of the subnormals */
        check_exact(from_bits((UINT64_C(1) << 52) - 1 - c));
        check_exact(from_bits((UINT64_C(1) << 52) + c));
    }
    assert_int_equal(exact_failures, 0);
}

/* Large integers c · 2^q divisible by 5^k: there 4x / 10^k can be an
 * integer, and the inexact table entries need the exact tiebreak. */
static void test_exact_integers(void **state) {
    (void)state;
    exact_failures = 0;
    uint64_t p5 = 1;
    for (int k = 1; k <= 22; k++) {
        p5 *= 5;
        for (int j = 0; j < 16; j++) {
            uint64_t m = 1 + rng_next() % ((UINT64_C(1) << 53) / p5);
            uint64_t c = m * p5;
            for (int q = -10; q <= 971; q += 1 + (int)(rng_next() % 97)) {
                double x = ldexp((double)c, q);
                if (isfinite(x))
                    check_exact(x);
            }
        }
    }
    for (int e = 0; e <= 308; e++) { /* also 1e23 and friends */
        char s[16];
        snprintf(s, sizeof s, "1e%d", e);
        check_exact(strtod(s, NULL));
        snprintf(s, sizeof s, "1e-%d", e);
        check_exact(strtod(s, NULL));
        snprintf(s, sizeof s, "9e%d", e);
        if (e < 308)
            check_exact(strtod(s, NULL));
    }
    assert_int_equal(exact_failures, 0);
    char why[200];
    long failures = 0;
    for (uint64_t i = 1; i <= 100000; i++) { /* small integers, fast path */
        double x = (double)(i * 9973 % 1000003) * (i % 3 ? 1 : 1000);
        if (check_shortest_random(x, why, sizeof why) && failures++ < 10)
            print_error("x = %a: %s\n", x, why);
    }
    assert_int_equal(failures, 0);
}

static void test_exact_random(void **state) {
    (void)state;
    exact_failures = 0;
    for (int i = 0; i < 20000; i++)
        check_exact(random_finite());
    assert_int_equal(exact_failures, 0);
}

/* ---- precision ------------------------------------------------------------
 */

/* Precision p: the text must be the shortest text of y, the double that
 * "%.{p−1}e" of x reads back as ("null" when y overflows). */
static void test_random_precision(void **state) {
    (void)state;
    long failures = 0;
    char why[200];
    for (long i = 0; i < 300000; i++) {
        double x = i % 3 ? random_finite()
                         : (double)(rng_next() >> 11) * 0x1p-53 * 2 - 1;
        if (i % 5 == 0) /* short decimals, where ties and p ≥ len matter */
            x = (double)(int64_t)(rng_next() % 2000001 - 1000000) *
                pow(10, (double)(int)(rng_next() % 40) - 20);
        int precision = 1 + (int)(i % 17);
        char tmp[48], got[API_NUM_MAX];
        snprintf(tmp, sizeof tmp, "%.*e", precision - 1, x);
        double y = strtod(tmp, NULL);
        api_num_format(got, x, precision);
        int bad;
        if (isinf(y)) {
            bad = strcmp(got, "null") != 0;
            snprintf(why, sizeof why, "\"%s\", want null", got);
        } else if (y == 0) {
            bad = strcmp(got, "0") != 0;
            snprintf(why, sizeof why, "\"%s\", want 0", got);
        } else {
            bad = check_printed(got, y, why, sizeof why);
        }
        if (bad && failures++ < 10)
            print_error("x = %a precision %d: %s\n", x, precision, why);
    }
    assert_int_equal(failures, 0);
}

/* ---- the building blocks --------------------------------------------------
 */

/* Little big integers, independent of the library's: 32-bit limbs. */
typedef struct {
    uint32_t w[80];
    int n;
} big;

static void big_from(big *x, uint64_t hi, uint64_t lo) {
    memset(x, 0, sizeof *x);
    x->w[0] = (uint32_t)lo;
    x->w[1] = (uint32_t)(lo >> 32);
    x->w[2] = (uint32_t)hi;
    x->w[3] = (uint32_t)(hi >> 32);
    x->n = 4;
    while (x->n > 0 && x->w[x->n - 1] == 0)
        x->n--;
}

static void big_times(big *x, uint32_t f, int times) {
    while (times-- > 0) {
        uint64_t carry = 0;
        for (int i = 0; i < x->n; i++) {
            uint64_t t = (uint64_t)x->w[i] * f + carry;
            x->w[i] = (uint32_t)t;
            carry = t >> 32;
        }
        if (carry)
            x->w[x->n++] = (uint32_t)carry;
    }
}

static int big_compare(const big *x, const big *y) {
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    for (int i = x->n - 1; i >= 0; i--)
        if (x->w[i] != y->w[i])
            return x->w[i] < y->w[i] ? -1 : 1;
    return 0;
}

/* Sign of m · 2^e2 − 10^e10 (m = hi · 2^64 + lo), any signs of e2, e10. */
static int cmp_pow2_pow10(uint64_t hi, uint64_t lo, int e2, int e10) {
    big left, right;
    big_from(&left, hi, lo);
    big_from(&right, 0, 1);
    big_times(e2 >= 0 ? &left : &right, 2, abs(e2));
    big_times(e10 >= 0 ? &right : &left, 10, abs(e10));
    return big_compare(&left, &right);
}

static void test_integer_logarithms(void **state) {
    (void)state;
    for (int q = -1100; q <= 1100; q++) {
        int k = api_num_floor_log10_pow2(q); /* 10^k ≤ 2^q < 10^(k+1) */
        assert_true(cmp_pow2_pow10(0, 1, q, k) >= 0);
        assert_true(cmp_pow2_pow10(0, 1, q, k + 1) < 0);
        k = api_num_floor_log10_3q_pow2(q); /* 10^k ≤ 3 · 2^(q−2) < … */
        assert_true(cmp_pow2_pow10(0, 3, q - 2, k) >= 0);
        assert_true(cmp_pow2_pow10(0, 3, q - 2, k + 1) < 0);
    }
    for (int e = -400; e <= 400; e++) {
        int f = api_num_floor_log2_pow10(e); /* 2^f ≤ 10^e < 2^(f+1) */
        assert_true(cmp_pow2_pow10(0, 1, f, e) <= 0);
        assert_true(cmp_pow2_pow10(0, 1, f + 1, e) > 0);
    }
    /* The scale h stays in [1, 4] for every binary exponent. */
    for (int q = -1074; q <= 971; q++) {
        int k1 = api_num_floor_log10_pow2(q),
            k2 = api_num_floor_log10_3q_pow2(q);
        int h1 = q + 1 + api_num_floor_log2_pow10(-k1),
            h2 = q + 1 + api_num_floor_log2_pow10(-k2);
        assert_in_range(h1, 1, 4);
        assert_in_range(h2, 1, 4);
        assert_true(-k1 >= API_NUM_POW10_MIN && -k1 <= API_NUM_POW10_MAX);
        assert_true(-k2 >= API_NUM_POW10_MIN && -k2 <= API_NUM_POW10_MAX);
    }
}

static void test_pow10_table(void **state) {
    (void)state;
    for (int e = API_NUM_POW10_MIN; e <= API_NUM_POW10_MAX; e++) {
        const uint64_t *g = api_num_pow10[e - API_NUM_POW10_MIN];
        assert_true(g[0] >> 63 == 1); /* 2^127 ≤ g */
        int r = 127 - api_num_floor_log2_pow10(e);
        /* g · 2^−r vs 10^e: equal when exact, else just above. */
        int above = cmp_pow2_pow10(g[0], g[1], -r, e);
        uint64_t lo1 = g[1] - 1, hi1 = g[0] - (g[1] == 0);
        int below = cmp_pow2_pow10(hi1, lo1, -r, e);
        if (e >= 0 && e <= API_NUM_POW10_EXACT_MAX) {
            assert_int_equal(above, 0);
        } else {
            if (above <= 0 || below >= 0)
                fail_msg("table entry for 10^%d is not ⌊β⌋ + 1", e);
        }
    }
}

/* api_num_exact_cmp against 128-bit arithmetic where that suffices. */
static void test_exact_cmp(void **state) {
    (void)state;
    __extension__ typedef unsigned __int128 u128;
    for (int i = 0; i < 200000; i++) {
        uint64_t a = rng_next() >> 32, b = rng_next() >> 32;
        int a5 = (int)(rng_next() % 11), b5 = (int)(rng_next() % 11);
        int a2 = (int)(rng_next() % 41), b2 = (int)(rng_next() % 41);
        if (i % 2) { /* equal (or off by one) values written differently */
            int t5 = (int)(rng_next() % 4), t2 = (int)(rng_next() % 4);
            t5 = t5 < a5 ? t5 : a5;
            t2 = t2 < a2 ? t2 : a2;
            b = a;
            for (int j = 0; j < t5; j++)
                b *= 5;
            b <<= t2;
            b += rng_next() % 3 == 0;
            b5 = a5 - t5;
            b2 = a2 - t2;
        }
        u128 x = a, y = b;
        for (int j = 0; j < a5; j++)
            x *= 5;
        for (int j = 0; j < b5; j++)
            y *= 5;
        x <<= a2;
        y <<= b2;
        int want = x < y ? -1 : x > y;
        assert_int_equal(api_num_exact_cmp(a, a5, a2, b, b5, b2), want);
    }
    /* Extremes: 5^400 and 2^1100 sized operands. */
    /* 2^928 < 5^400 < 2^929 */
    assert_int_equal(api_num_exact_cmp(1, 400, 0, 1, 0, 928), 1);
    assert_int_equal(api_num_exact_cmp(1, 400, 0, 1, 0, 929), -1);
    assert_int_equal(api_num_exact_cmp(UINT64_MAX, 0, 1100, 1, 0, 1164), -1);
    assert_int_equal(api_num_exact_cmp(0, 3, 3, 0, 0, 0), 0);
}

static void test_shortest_decimal(void **state) {
    (void)state;
    api_num_decimal d = api_num_shortest(1.7976931348623157e308);
    assert_int_equal(d.digits, 17976931348623157);
    assert_int_equal(d.exponent, 292);
    d = api_num_shortest(5e-324);
    assert_int_equal(d.digits, 5);
    assert_int_equal(d.exponent, -324);
    d = api_num_shortest(1200);
    assert_int_equal(d.digits, 12);
    assert_int_equal(d.exponent, 2);
    d = api_num_shortest(0.1);
    assert_int_equal(d.digits, 1);
    assert_int_equal(d.exponent, -1);
}

int main(void) {
    rng_state = (uint64_t)env_long("NUMFMT_SEED", (long)time(NULL));
    print_message("# NUMFMT_SEED=%" PRIu64 "\n", rng_state);
    const char *only = getenv("NUMFMT_TEST");
    if (only && *only)
        cmocka_set_test_filter(only);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_strings),
        cmocka_unit_test(test_precision_strings),
        cmocka_unit_test(test_integer_logarithms),
        cmocka_unit_test(test_pow10_table),
        cmocka_unit_test(test_exact_cmp),
        cmocka_unit_test(test_shortest_decimal),
        cmocka_unit_test(test_exact_powers_of_two),
        cmocka_unit_test(test_exact_subnormals),
        cmocka_unit_test(test_exact_integers),
        cmocka_unit_test(test_exact_random),
        cmocka_unit_test(test_all_small_integers),
        cmocka_unit_test(test_random_moderate),
        cmocka_unit_test(test_random_precision),
        cmocka_unit_test(test_random_bit_patterns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
