/*
 * numfmt_shortest.c — shortest round-trip decimal of a double, after
 * Giulietti's Schubfach ("The Schubfach way to render doubles", 2020).
 *
 * x = c · 2^q with integer c. The doubles that round to x fill the interval
 * R = [x − ½·2^q, x + ½·2^q] (ends included when c is even); when x is a
 * power of two above the smallest normal the lower half is ¼·2^q. In units
 * of 2^(q−2) the ends and x are the integers cbl, cbr and cb = 4c.
 * Choose k = ⌊log10 |R|⌋ (|R| = 2^q, or ¾ · 2^q for that irregular case), so
 * 10^k ≤ |R| < 10^(k+1): R holds at least one multiple of 10^k and at most
 * one of 10^(k+1). Let s = ⌊x / 10^k⌋. Then:
 *   1. if one of the multiples of 10^(k+1) around x (10·⌊s/10⌋ · 10^k and
 *      the next) lies in R, it is the unique shortest candidate;
 *   2. else one or both of s · 10^k and (s + 1) · 10^k lie in R: take the
 *      one inside, or of two the closer to x, ties to even s.
 * The comparisons need X = 4x / 10^k = cb · 2^q / 10^k (likewise for the
 * ends) only through ⌊X⌋ and whether X is an integer, so each is computed
 * as V = ⌊X⌋ rounded to odd (V = ⌊X⌋ | 1 when X is not an integer): for
 * every even integer L, V and X compare with L alike.
 * X is computed as (cb · 2^h) · g / 2^128 with g the 128-bit significand of
 * 10^−k (api/numfmt_pow10.h). g is exact for 0 ≤ −k ≤ 55; otherwise it is
 * at most one unit too large, so the product overshoots X by less than
 * cb · 2^h / 2^128 and only a fraction smaller than that is in doubt —
 * then an exact big-integer comparison decides (api/text/numfmt_exact.h).
 */
#include "numfmt_shortest.h"

#include "numfmt_exact.h"
#include "numfmt_pow10.h"

#include <string.h>

__extension__ typedef unsigned __int128 u128;

/* The rare case of round_odd: g · cp / 2^128 lies within cp / 2^128 above
 * the integer n, so X may be n, just below it or just above it. Decided
 * exactly by the sign of cx · 2^q − n · 10^k. */
__attribute__((noinline, cold)) static uint64_t
round_odd_exact(uint64_t cx, int q, int k, uint64_t n) {
    int sign;
    if (k >= 0) { /* cx · 2^(q−k) vs n · 5^k; q ≥ k here */
        sign = api_num_exact_cmp(cx, 0, q - k, n, k, 0);
    } else { /* cx · 5^m · 2^(q+m) vs n, m = −k */
        int m = -k;
        sign = q + m >= 0 ? api_num_exact_cmp(cx, m, q + m, n, 0, 0)
                          : api_num_exact_cmp(cx, m, 0, n, 0, -(q + m));
    }
    if (sign > 0)
        return n | 1;
    if (sign == 0)
        return n;
    return (n - 1) | 1; /* n − 1 < X < n */
}

/* X = cx · 2^q / 10^k rounded to odd: ⌊X⌋ when X is an integer, else
 * ⌊X⌋ | 1. g is the table entry of 10^−k, exact tells whether it is exact,
 * h = q + 1 + ⌊log2 10^−k⌋ ∈ [1, 4] so that X = (cx · 2^h) · g / 2^128. */
__attribute__((always_inline)) static inline uint64_t
round_odd(const uint64_t g[2], int exact, uint64_t cx, int h, int q, int k) {
    uint64_t cp = cx << h; /* < 2^59 */
    u128 lo = (u128)g[1] * cp;
    u128 hi = (u128)g[0] * cp + (uint64_t)(lo >> 64);
    uint64_t n = (uint64_t)(hi >> 64); /* ⌊g · cp / 2^128⌋ */
    uint64_t f_hi = (uint64_t)hi, f_lo = (uint64_t)lo; /* the fraction */
    /* Exact g: X = g · cp / 2^128. Otherwise g · cp / 2^128 = X + δ with
     * 0 < δ < cp / 2^128, so a fraction ≥ cp means n < X < n + 1. */
    if (__builtin_expect(!exact & (f_hi == 0) & (f_lo < cp), 0))
        return round_odd_exact(cx, q, k, n);
    return n | (uint64_t)((f_hi | f_lo) != 0);
}

api_num_decimal api_num_shortest(double x) {
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    uint64_t frac = bits & ((UINT64_C(1) << 52) - 1);
    int biased = (int)(bits >> 52) & 0x7ff;
    uint64_t c = biased ? frac | UINT64_C(1) << 52 : frac;
    int q = biased ? biased - 1075 : -1074;
    api_num_decimal dec;

    if (-52 <= q && q <= 0 && (c & ((UINT64_C(1) << -q) - 1)) == 0) {
        /* An integer below 2^53: R holds no other integer, so no shorter
         * decimal; the integer itself is the answer. */
        dec.digits = c >> -q;
        dec.exponent = 0;
    } else {
        uint64_t cb = c << 2, cbr = cb + 2, cbl;
        int k;
        if (frac != 0 || biased <= 1) {
            cbl = cb - 2;
            k = api_num_floor_log10_pow2(q);
        } else { /* x = 2^(q+52): the double below is only ¼ · 2^q away */
            cbl = cb - 1;
            k = api_num_floor_log10_3q_pow2(q);
        }
        int h = q + 1 + api_num_floor_log2_pow10(-k);
        const uint64_t *g = api_num_pow10[-k - API_NUM_POW10_MIN];
        int exact = -k >= 0 && -k <= API_NUM_POW10_EXACT_MAX;
        uint64_t vb = round_odd(g, exact, cb, h, q, k);
        uint64_t vbl = round_odd(g, exact, cbl, h, q, k);
        uint64_t vbr = round_odd(g, exact, cbr, h, q, k);
        uint64_t out = c & 1; /* 1: the ends of R are excluded */

        /* Both steps are evaluated and selected without branches: which one
         * applies is close to a coin toss for arbitrary doubles. */
        uint64_t s = vb >> 2, s10 = s / 10; /* s = ⌊x / 10^k⌋ */
        /* 1. the multiples of 10^(k+1) around x: s10 and s10 + 1 */
        int upin = vbl + out <= s10 * 40;
        int wpin = s10 * 40 + 40 + out <= vbr;
        /* 2. s · 10^k and (s + 1) · 10^k; mid is (s + ½) · 10^k, scaled */
        int uin = vbl + out <= s << 2;
        int win = (s << 2) + 4 + out <= vbr;
        uint64_t mid = (s << 2) + 2;
        int closer_up = vb > mid || (vb == mid && (s & 1) == 1);
        uint64_t step2 = s + (uint64_t)(uin != win ? win : closer_up);
        int step1 = upin != wpin;
        dec.digits = step1 ? s10 + (uint64_t)wpin : step2;
        dec.exponent = k + step1;
    }
    while (dec.digits % 10 == 0) {
        dec.digits /= 10;
        dec.exponent++;
    }
    return dec;
}
