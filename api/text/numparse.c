/*
 * numparse.c — JSON number text to double (see numparse.h): the grammar
 * scan collects up to 19 significant digits w and a decimal exponent q,
 * then Clinger's exact path, Eisel–Lemire, or strtod turn w · 10^q into
 * the correctly rounded double.
 */
#include "numparse.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt_pow10.h"

#if FLT_EVAL_METHOD != 0
#error "Clinger's fast path needs double arithmetic in double precision"
#endif

#define SIG_MAX 19 /* significant digits that always fit: 10^19 - 1 < 2^64 */
#define TWO_POW_53 (UINT64_C(1) << 53)
#define TWO_POW_63 (UINT64_C(1) << 63)
/* The exponent literal stops growing here: far beyond every double, and
 * beyond any shift that fraction digits of a body in memory can undo. */
#define EXP_SATURATE INT64_C(1000000000000000)
/* w · 10^q for w < 10^19 rounds to zero at and below Q_ZERO (10^-324 <
 * 2^-1075), and overflows above Q_MAX for any w ≥ 1 (10^309 > DBL_MAX). */
#define Q_ZERO (-343)
#define Q_MAX 308

/* 10^0 … 10^22: exactly representable, so one rounding in Clinger's path. */
static const double exact_pow10[23] = {
    1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
    1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int is_digit(char c) {
    return (unsigned char)(c - '0') < 10;
}

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "eight_digits reads text in little-endian words"
#endif

/* 1 when the 8 bytes at p are all ASCII digits. Byte by byte: adding 0x46
 * sets the top bit of a byte above '9', subtracting 0x30 borrows into it
 * for a byte below '0' (a borrow or carry only ever comes from a byte
 * that already failed). */
static int are_eight_digits(const char *p) {
    uint64_t x;
    memcpy(&x, p, 8);
    return !(((x + UINT64_C(0x4646464646464646)) |
              (x - UINT64_C(0x3030303030303030))) &
             UINT64_C(0x8080808080808080));
}

/* The value of 8 ASCII digits at p (the first one most significant), in
 * three multiply steps instead of eight: byte k of x holds digit d_k.
 *   1. x·10 + (x >> 8): byte 2j holds the pair 10·d_2j + d_2j+1 (≤ 99);
 *   2. the pairs at bytes 0 and 4 times (100 + 10^6·2^32), plus those at
 *      bytes 2 and 6 times (1 + 10^4·2^32): the upper 32 bits collect
 *      pair0·10^6 + pair1·10^4 + pair2·100 + pair3, and the lower 32 bits
 *      (pair0·100 + pair1 ≤ 9999) never carry into them. */
static uint64_t eight_digits(const char *p) {
    const uint64_t pairs_0_4 = UINT64_C(0x000000ff000000ff);
    uint64_t x;
    memcpy(&x, p, 8);
    x -= UINT64_C(0x3030303030303030);
    x = x * 10 + (x >> 8);
    x = ((x & pairs_0_4) * (100 + (UINT64_C(1000000) << 32)) +
         ((x >> 16) & pairs_0_4) * (1 + (UINT64_C(10000) << 32))) >>
        32;
    return x;
}

static double with_sign(double x, int negative) {
    return negative ? -x : x;
}

/* ⌊q · log2 10⌋ by a fixed-point product: 217706 / 2^16 is log2 10 to
 * within 2^-17, exact for |q| < 643 (checked with exact arithmetic when
 * this was written; only [API_NUM_POW10_MIN, Q_MAX] is used). */
static int floor_log2_pow10(int q) {
    return (q * 217706) >> 16;
}

/* Eisel–Lemire (Lemire 2021, section 5) for w ≠ 0 and q in
 * [API_NUM_POW10_MIN, Q_MAX]; the sign is the caller's.
 * g = api_num_pow10[q] is 10^q · 2^r in [2^127, 2^128), exact or one unit
 * too large. With w normalised to w' = w · 2^l (top bit set), the 192-bit
 * product P = w' · g is at most w' < 2^64 above the exact w' · 10^q · 2^r.
 * Its top 128 bits z decide the double: the 54 bits under z's leading one
 * are the 53-bit significand and the rounding bit; the bits below (R) say
 * whether the exact value lies above the rounding point (R > 0) or on it.
 * With only the high word of g, z is below the exact top bits by less than
 * 2^64 units of its low word, and above them by less than one; with both
 * words, within one unit either way. The answer is certain when no
 * rounding boundary lies in that interval around z:
 *   first product:  R's bits in the high word not all ones, and R ≠ 0;
 *   both products:  R ≠ 0.
 * Otherwise (the exact value may sit on a boundary: ties, exact values),
 * and for results in the subnormal range, the answer is left to strtod.
 * Returns 1 with *bits = the magnitude's IEEE-754 bits, 0 for strtod, or
 * -1 when the value rounds to infinity. */
static int eisel_lemire(uint64_t *bits, uint64_t w, int q) {
    const uint64_t *g = api_num_pow10[q - API_NUM_POW10_MIN];
    int l = __builtin_clzll(w);
    uint64_t wn = w << l;
    unsigned __int128 z = (unsigned __int128)wn * g[0];
    uint64_t hi = (uint64_t)(z >> 64), lo = (uint64_t)z;
    int upper = (int)(hi >> 63);
    int shift = 9 + upper; /* hi >> shift keeps 54 bits */
    uint64_t mask = (UINT64_C(1) << shift) - 1;
    if ((hi & mask) == mask || ((hi & mask) == 0 && lo == 0)) {
        unsigned __int128 z2 = (unsigned __int128)wn * g[1];
        uint64_t carry_in = (uint64_t)(z2 >> 64);
        lo += carry_in;
        hi += lo < carry_in;
        upper = (int)(hi >> 63);
        shift = 9 + upper;
        mask = (UINT64_C(1) << shift) - 1;
        if ((hi & mask) == 0 && lo == 0)
            return 0;
    }
    uint64_t m = hi >> shift; /* 54 bits: significand and rounding bit */
    int biased = 63 + upper + floor_log2_pow10(q) - l + 1023;
    if (biased <= 0)
        return 0; /* subnormal: fewer significand bits, another rounding */
    m = (m + (m & 1)) >> 1;
    if (m >> 53) { /* rounded up to 2^53 */
        m >>= 1;
        biased++;
    }
    if (biased >= 2047)
        return -1;
    *bits = ((uint64_t)biased << 52) | (m & ((UINT64_C(1) << 52) - 1));
    return 1;
}

/* strtod on a NUL-terminated copy of s[0 .. n) (the text around a number
 * need not be terminated). */
static api_num_kind read_with_strtod(double *out, const char *s, size_t n) {
    char small[128];
    char *copy = n < sizeof small ? small : malloc(n + 1);
    if (copy == NULL)
        return API_NUM_INVALID;
    memcpy(copy, s, n);
    copy[n] = '\0';
    errno = 0;
    double x = strtod(copy, NULL);
    int overflow = errno == ERANGE && isinf(x);
    if (copy != small)
        free(copy);
    if (overflow)
        return API_NUM_OVERFLOW;
    *out = x;
    return API_NUM_REAL;
}

/* The parts of a number literal that decide its value: w holds its first
 * SIG_MAX significant digits, so that w · 10^q is the value when nsig ≤
 * SIG_MAX; integer: no fraction and no exponent. */
typedef struct {
    uint64_t w;
    int nsig;
    int64_t q;
    int integer;
} decimal;

/* 1. The digits of the unsigned literal at p (a digit), its fraction and
 * its exponent into d. Returns the end of the literal, or NULL when the
 * grammar fails (a leading zero, "1.", "1e"). Inline: this is the loop
 * every number of a tensor goes through. */
static inline const char *read_decimal(decimal *d, const char *p,
                                       const char *end) {
    uint64_t w = 0;
    int nsig = 0;
    int64_t q = 0;
    d->integer = 1;
    if (*p == '0') {
        p++;
        if (p < end && is_digit(*p))
            return NULL; /* leading zero */
    } else {
        for (; end - p >= 8 && nsig <= SIG_MAX - 8 && are_eight_digits(p);
             p += 8, nsig += 8)
            w = w * 100000000 + eight_digits(p);
        for (; p < end && is_digit(*p); p++, nsig++) {
            if (nsig < SIG_MAX)
                w = w * 10 + (uint64_t)(*p - '0');
            else
                q++;
        }
    }
    if (p < end && *p == '.') {
        d->integer = 0;
        p++;
        if (p == end || !is_digit(*p))
            return NULL;
        for (; p < end && *p == '0' && nsig == 0; p++)
            q--; /* zeros before the first significant digit */
        for (; end - p >= 8 && nsig <= SIG_MAX - 8 && are_eight_digits(p);
             p += 8, nsig += 8, q -= 8)
            w = w * 100000000 + eight_digits(p);
        for (; p < end && is_digit(*p); p++, nsig++) {
            if (nsig < SIG_MAX) {
                w = w * 10 + (uint64_t)(*p - '0');
                q--;
            }
        }
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        d->integer = 0;
        p++;
        int exp_negative = 0;
        if (p < end && (*p == '+' || *p == '-'))
            exp_negative = *p++ == '-';
        if (p == end || !is_digit(*p))
            return NULL;
        int64_t e = 0;
        for (; p < end && is_digit(*p); p++)
            if (e < EXP_SATURATE)
                e = e * 10 + (*p - '0');
        q += exp_negative ? -e : e;
    }
    d->w = w;
    d->nsig = nsig;
    d->q = q;
    return p;
}

/* 3. The real d (the literal s[0 .. used), for strtod) into *out:
 * Clinger's exact path, Eisel–Lemire, or strtod. */
static inline api_num_kind read_real(double *out, const decimal *d,
                                     int negative, const char *s, size_t used) {
    uint64_t w = d->w;
    int64_t q = d->q;
    if (w == 0) {
        *out = with_sign(0.0, negative);
        return API_NUM_REAL;
    }
    if (d->nsig > SIG_MAX)
        return read_with_strtod(out, s, used);
    if (w <= TWO_POW_53 && q >= -22 && q <= 22) {
        double x = (double)w;
        x = q < 0 ? x / exact_pow10[-q] : x * exact_pow10[q];
        *out = with_sign(x, negative);
        return API_NUM_REAL;
    }
    if (q > Q_MAX)
        return API_NUM_OVERFLOW;
    if (q <= Q_ZERO) {
        *out = with_sign(0.0, negative);
        return API_NUM_REAL;
    }
    if (q < API_NUM_POW10_MIN)
        return read_with_strtod(out, s, used);
    uint64_t bits;
    int rc = eisel_lemire(&bits, w, (int)q);
    if (rc < 0)
        return API_NUM_OVERFLOW;
    if (rc == 0)
        return read_with_strtod(out, s, used);
    bits |= (uint64_t)negative << 63;
    memcpy(out, &bits, sizeof *out);
    return API_NUM_REAL;
}

api_num_kind api_num_parse(double *out, size_t *used, const char *s,
                           size_t len) {
    const char *p = s, *end = s + len;
    int negative = p < end && *p == '-';
    p += negative;
    *used = 0;
    if (p == end || !is_digit(*p))
        return API_NUM_INVALID;
    decimal d;
    p = read_decimal(&d, p, end);
    if (p == NULL)
        return API_NUM_INVALID;
    *used = (size_t)(p - s);

    /* 2. integer literals are int64 values, as jansson stores them */
    if (d.integer) {
        if (d.nsig > SIG_MAX ||
            (d.nsig == SIG_MAX && d.w > TWO_POW_63 - 1 + (uint64_t)negative))
            return API_NUM_BIG_INTEGER;
        int64_t v = negative ? (int64_t)(0 - d.w) : (int64_t)d.w;
        *out = (double)v;
        return API_NUM_INTEGER;
    }
    return read_real(out, &d, negative, s, *used);
}
