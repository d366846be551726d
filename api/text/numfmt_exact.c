/*
 * numfmt_exact.c — exact comparison of m · 5^i · 2^j for the shortest-digit
 * search, with little-endian arrays of 32-bit limbs.
 */
#include "numfmt_exact.h"

#include <string.h>

/* 64 bits of m, ⌈400 · log2 5⌉ = 929 bits of 5^i, 1100 bits of 2^j. */
#define LIMBS ((64 + 929 + API_NUM_EXACT_MAX_POW2) / 32 + 2)

typedef struct {
    uint32_t limb[LIMBS];
    int n; /* limbs in use; limb[n − 1] != 0 unless n == 0 */
} bignum;

static void big_set(bignum *x, uint64_t m) {
    memset(x->limb, 0, sizeof x->limb);
    x->limb[0] = (uint32_t)m;
    x->limb[1] = (uint32_t)(m >> 32);
    x->n = x->limb[1] ? 2 : x->limb[0] ? 1 : 0;
}

static void big_mul_small(bignum *x, uint32_t f) {
    uint64_t carry = 0;
    for (int i = 0; i < x->n; i++) {
        uint64_t t = (uint64_t)x->limb[i] * f + carry;
        x->limb[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry)
        x->limb[x->n++] = (uint32_t)carry;
}

static void big_mul_pow5(bignum *x, int e) {
    for (; e >= 13; e -= 13)
        big_mul_small(x, 1220703125u); /* 5^13 < 2^32 */
    uint32_t f = 1;
    while (e-- > 0)
        f *= 5;
    big_mul_small(x, f);
}

static void big_shl(bignum *x, int bits) {
    if (x->n == 0)
        return;
    int words = bits / 32, shift = bits % 32;
    if (shift) {
        uint32_t carry = 0;
        for (int i = 0; i < x->n; i++) {
            uint32_t v = x->limb[i];
            x->limb[i] = v << shift | carry;
            carry = v >> (32 - shift);
        }
        if (carry)
            x->limb[x->n++] = carry;
    }
    if (words) {
        memmove(x->limb + words, x->limb, (size_t)x->n * sizeof x->limb[0]);
        memset(x->limb, 0, (size_t)words * sizeof x->limb[0]);
        x->n += words;
    }
}

static int big_cmp(const bignum *x, const bignum *y) {
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    for (int i = x->n - 1; i >= 0; i--)
        if (x->limb[i] != y->limb[i])
            return x->limb[i] < y->limb[i] ? -1 : 1;
    return 0;
}

int api_num_exact_cmp(uint64_t a, int a5, int a2, uint64_t b, int b5, int b2) {
    /* Cancel the common factors first: the numbers stay smaller. */
    int c5 = a5 < b5 ? a5 : b5, c2 = a2 < b2 ? a2 : b2;
    a5 -= c5, b5 -= c5, a2 -= c2, b2 -= c2;
    bignum x, y;
    big_set(&x, a);
    big_mul_pow5(&x, a5);
    big_shl(&x, a2);
    big_set(&y, b);
    big_mul_pow5(&y, b5);
    big_shl(&y, b2);
    return big_cmp(&x, &y);
}
