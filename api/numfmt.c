/*
 * numfmt.c — doubles printed as ECMAScript's Number.prototype.toString
 * (ECMA-262 §6.1.6.1.20 Number::toString): the shortest round-trip digits
 * (api/numfmt_shortest.h) in the fixed or exponent layout that JavaScript,
 * and so JSON.stringify, uses; optionally rounded to k significant digits.
 */
#include "numfmt.h"

#include "numfmt_shortest.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const uint64_t pow10_u64[20] = {
    UINT64_C(1),
    UINT64_C(10),
    UINT64_C(100),
    UINT64_C(1000),
    UINT64_C(10000),
    UINT64_C(100000),
    UINT64_C(1000000),
    UINT64_C(10000000),
    UINT64_C(100000000),
    UINT64_C(1000000000),
    UINT64_C(10000000000),
    UINT64_C(100000000000),
    UINT64_C(1000000000000),
    UINT64_C(10000000000000),
    UINT64_C(100000000000000),
    UINT64_C(1000000000000000),
    UINT64_C(10000000000000000),
    UINT64_C(100000000000000000),
    UINT64_C(1000000000000000000),
    UINT64_C(10000000000000000000),
};

static const char digit_pairs[201] = "00010203040506070809"
                                     "10111213141516171819"
                                     "20212223242526272829"
                                     "30313233343536373839"
                                     "40414243444546474849"
                                     "50515253545556575859"
                                     "60616263646566676869"
                                     "70717273747576777879"
                                     "80818283848586878889"
                                     "90919293949596979899";

/* Number of decimal digits of d ≥ 1. */
static int digit_count(uint64_t d) {
    int bits = 64 - __builtin_clzll(d);
    int len = (bits * 1233) >> 12; /* ⌊bits · log10 2⌋ */
    return len + (d >= pow10_u64[len]);
}

/* Writes the len decimal digits of d < 10^17 to out[0 … len−1]. */
static void write_digits(char *out, uint64_t d, int len) {
    char *p = out + len;
    if (d >= 100000000) { /* the low eight digits in 32-bit arithmetic */
        uint32_t low = (uint32_t)(d % 100000000);
        d /= 100000000;
        for (int i = 0; i < 4; i++) {
            p -= 2;
            memcpy(p, digit_pairs + 2 * (low % 100), 2);
            low /= 100;
        }
    }
    uint32_t high = (uint32_t)d; /* < 10^9 */
    while (high >= 100) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * (high % 100), 2);
        high /= 100;
    }
    if (high >= 10) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * high, 2);
    } else {
        *--p = (char)('0' + high);
    }
}

/* Lays out k digits with decimal point position n (value = 0.digits · 10^n)
 * by the four cases of Number::toString. Returns the length written. */
static size_t layout(char *buf, int negative, const char *digits, int k,
                     int n) {
    char *p = buf;
    if (negative)
        *p++ = '-';
    if (k <= n && n <= 21) {
        memcpy(p, digits, (size_t)k); /* the digits, then n − k zeros */
        p += k;
        memset(p, '0', (size_t)(n - k));
        p += n - k;
    } else if (0 < n && n <= 21) {
        memcpy(p, digits, (size_t)n); /* a point after n digits */
        p += n;
        *p++ = '.';
        memcpy(p, digits + n, (size_t)(k - n));
        p += k - n;
    } else if (-6 < n && n <= 0) {
        *p++ = '0'; /* "0.", −n zeros, the digits */
        *p++ = '.';
        memset(p, '0', (size_t)-n);
        p += -n;
        memcpy(p, digits, (size_t)k);
        p += k;
    } else {
        *p++ = digits[0]; /* d[.ddd]e±(n−1) */
        if (k > 1) {
            *p++ = '.';
            memcpy(p, digits + 1, (size_t)(k - 1));
            p += k - 1;
        }
        *p++ = 'e';
        int e = n - 1;
        *p++ = e < 0 ? '-' : '+';
        if (e < 0)
            e = -e;
        if (e >= 100) {
            *p++ = (char)('0' + e / 100);
            e %= 100;
            memcpy(p, digit_pairs + 2 * e, 2);
            p += 2;
        } else if (e >= 10) {
            memcpy(p, digit_pairs + 2 * e, 2);
            p += 2;
        } else {
            *p++ = (char)('0' + e);
        }
    }
    *p = '\0';
    return (size_t)(p - buf);
}

static size_t print_decimal(char *buf, int negative, api_num_decimal dec) {
    char digits[24];
    int k = digit_count(dec.digits);
    write_digits(digits, dec.digits, k);
    return layout(buf, negative, digits, k, dec.exponent + k);
}

static size_t print_null(char *buf) {
    memcpy(buf, "null", 5);
    return 4;
}

/* x > 0 finite rounded to precision significant digits as "%.{p}g" does
 * (the exact binary value, ties to even), read back by strtod, shortest. */
static size_t print_rounded_slow(char *buf, int negative, double x,
                                 int precision) {
    char tmp[40];
    snprintf(tmp, sizeof tmp, "%.*e", precision - 1, x);
    double y = strtod(tmp, NULL);
    if (!isfinite(y))
        return print_null(buf);
    return print_decimal(buf, negative, api_num_shortest(y));
}

/* Same result as print_rounded_slow, from the shortest digits dec of x:
 * 1. dec has at most p digits: the p-digit rounding r of x is at least as
 *    close to x as dec, so it lies in x's rounding interval (symmetric unless
 *    x is a power of two) and reads back as x; print dec.
 * 2. dec has more than p ≤ 15 digits: rounding dec and rounding x to p digits
 *    agree unless dec itself is the (p+1)-digit midpoint ending in 5 (any
 *    other midpoint between x and dec would be a shorter or closer candidate
 *    than dec). A decimal of ≤ 15 digits in the normal range reads back as a
 *    double whose shortest form is that decimal (DBL_DIG = 15), so print r.
 * Everything else (powers of two, ties, p ≥ 16, results near the ends of the
 * normal range) takes the slow path. */
static size_t print_rounded(char *buf, int negative, double x, int precision) {
    api_num_decimal dec = api_num_shortest(x);
    int len = digit_count(dec.digits);
    if (len <= precision) {
        uint64_t bits;
        memcpy(&bits, &x, sizeof bits);
        int power_of_two =
            (bits & ((UINT64_C(1) << 52) - 1)) == 0 && (bits >> 52) > 1;
        if (!power_of_two)
            return print_decimal(buf, negative, dec);
    } else if (precision <= 15 &&
               !(len == precision + 1 && dec.digits % 10 == 5)) {
        int drop = len - precision;
        uint64_t unit = pow10_u64[drop];
        api_num_decimal r = {dec.digits / unit, dec.exponent + drop};
        if (dec.digits % unit >= unit / 2) /* > half: no tie reaches here */
            r.digits++;
        while (r.digits % 10 == 0) {
            r.digits /= 10;
            r.exponent++;
        }
        int top = r.exponent + digit_count(r.digits) - 1; /* r < 10^(top+1) */
        if (top > -307 && top < 308)
            return print_decimal(buf, negative, r);
    }
    return print_rounded_slow(buf, negative, x, precision);
}

size_t api_num_format(char *buf, double x, int precision) {
    if (!isfinite(x))
        return print_null(buf);
    if (x == 0) {
        memcpy(buf, "0", 2);
        return 1;
    }
    int negative = x < 0;
    double ax = fabs(x);
    if (precision >= 1 && precision <= 17)
        return print_rounded(buf, negative, ax, precision);
    return print_decimal(buf, negative, api_num_shortest(ax));
}
