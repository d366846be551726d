/*
 * numfmt.c — doubles printed as ECMAScript's Number.prototype.toString
 * (ECMA-262 §6.1.6.1.20 Number::toString): the shortest round-trip digits
 * (api/text/numfmt_shortest.h) in the fixed or exponent layout that JavaScript,
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

/* Number of decimal digits of 1 ≤ d < 10^19. */
static int digit_count(uint64_t d) {
    int bits = 64 - __builtin_clzll(d);
    int len = (bits * 1233) >> 12; /* ⌊bits · log10 2⌋ */
    return len + (d >= pow10_u64[len]);
}

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "print_decimal builds text in little-endian words"
#endif

__extension__ typedef unsigned __int128 u128;

#define ZEROS UINT64_C(0x3030303030303030) /* "00000000" */

/* The eight decimal digits of x < 10^8 as ASCII bytes of one word, the
 * most significant digit in the lowest byte (first in memory), leading
 * zeros included. Lane arithmetic: 4 + 4 digits in 32-bit lanes, then
 * 2-digit pairs in 16-bit lanes, then digits in bytes; y / 100 is
 * (y · 5243) >> 19 for y < 10^4 and z / 10 is (z · 103) >> 10 for z < 100. */
static inline uint64_t ascii8(uint32_t x) {
    uint64_t v = x / 10000 | (uint64_t)(x % 10000) << 32;
    uint64_t t = ((v * 5243) >> 19) & UINT64_C(0x0000007f0000007f);
    v = t | (v - t * 100) << 16;
    t = ((v * 103) >> 10) & UINT64_C(0x000f000f000f000f);
    v = t | (v - t * 10) << 8;
    return v + ZEROS;
}

/* Prints digits · 10^exponent (dec) by the four cases of Number::toString,
 * with n the position of the point: value = 0.d1d2…dk × 10^n. The digits
 * are built left-aligned in registers (bytes 0 … 15 in lo, byte 16 in hi,
 * zero bytes after the last digit) and written with a few wide stores that
 * never read back what was just written; every store ends within
 * API_NUM_MAX bytes. */
static size_t print_decimal(char *buf, int negative, api_num_decimal dec) {
    uint64_t d = dec.digits;
    int k = digit_count(d);
    int n = dec.exponent + k;
    u128 lo;
    uint64_t hi = 0;
    if (d < 100000000) { /* short: one word */
        lo = ascii8((uint32_t)d) >> (8 * (8 - k));
    } else { /* 17 digits with leading zeros: byte 0, bytes 1 … 16 (all) */
        uint64_t rest = d % UINT64_C(10000000000000000);
        u128 all = ascii8((uint32_t)(rest / 100000000)) |
                   (u128)ascii8((uint32_t)(rest % 100000000)) << 64;
        lo = (uint64_t)('0' + d / UINT64_C(10000000000000000)) | all << 8;
        hi = (uint64_t)(all >> 120);
        int z = 17 - k; /* leading zeros to drop, 0 … 8 */
        if (z > 0) {    /* shift counts stay below 128 */
            lo = (lo >> 8) >> (8 * (z - 1)) | (u128)hi << (128 - 8 * z);
            hi = 0;
        }
    }
    char *p = buf + negative;
    buf[0] = '-';
    size_t len;
    if (k <= n && n <= 21) { /* the digits, then n − k ≤ 20 zeros */
        if (k < 16)
            lo |= ((u128)ZEROS << 64 | ZEROS) << (8 * k);
        hi |= k <= 16 ? ZEROS : ZEROS << 8;
        memcpy(p, &lo, 16);
        memcpy(p + 16, &hi, 8);
        p[n] = '\0';
        len = (size_t)n;
    } else if (0 < n && n <= 21) { /* n < k ≤ 17: a point after n digits */
        if (n == 16) {             /* then k = 17 */
            hi = '.' | hi << 8;
        } else {
            u128 head_mask = ((u128)1 << (8 * n)) - 1;
            hi = (uint64_t)(lo >> 120) | hi << 8;
            lo = (lo & head_mask) | (u128)'.' << (8 * n) |
                 (lo & ~head_mask) << 8;
        }
        memcpy(p, &lo, 16);
        memcpy(p + 16, &hi, 8);
        len = (size_t)k + 1;
    } else if (-6 < n && n <= 0) { /* "0.", −n zeros, the digits */
        uint64_t prefix = (ZEROS & ~UINT64_C(0xff00)) | (uint64_t)'.' << 8;
        memcpy(p, &prefix, 8);
        memcpy(p + 2 - n, &lo, 16);
        memcpy(p + 2 - n + 16, &hi, 8);
        len = (size_t)(2 - n + k);
    } else { /* d[.ddd]e±(n−1) */
        memcpy(p + 1, &lo, 16);
        memcpy(p + 17, &hi, 8);
        p[0] = (char)lo;
        p[1] = '.';
        int e = n - 1, abs_e = e < 0 ? -e : e; /* ≤ 324 */
        int e_len = 1 + (abs_e >= 10) + (abs_e >= 100);
        uint16_t pair;
        memcpy(&pair, digit_pairs + 2 * (abs_e % 100), 2);
        uint64_t e_digits = (uint64_t)('0' + abs_e / 100) | (uint64_t)pair << 8;
        uint64_t tail = 'e' | (uint64_t)(e < 0 ? '-' : '+') << 8 |
                        (e_digits >> (8 * (3 - e_len))) << 16;
        int tail_len = 2 + e_len;
        int mantissa_len = k == 1 ? 1 : k + 1;
        memcpy(p + mantissa_len, &tail, 8);
        len = (size_t)(mantissa_len + tail_len);
    }
    return len + (size_t)negative;
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
