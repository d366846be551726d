/*
 * numfmt_shortest.h — the shortest decimal that reads back to a given double
 * (Schubfach: R. Giulietti, "The Schubfach way to render doubles", 2020),
 * and the integer logarithms it is built on.
 */
#ifndef API_NUMFMT_SHORTEST_H
#define API_NUMFMT_SHORTEST_H

#include <stdint.h>

/* A positive decimal digits · 10^exponent; digits has no trailing zero. */
typedef struct {
    uint64_t digits; /* 1 … 17 decimal digits */
    int exponent;    /* −343 … 292 */
} api_num_decimal;

/* The decimal with the fewest significant digits that rounds (to nearest,
 * ties to even) back to x; among several of that length the one closest to
 * x, and of two equally close the one with an even last digit — the
 * choice ECMA-262 §6.1.6.1.20 Number::toString asks for.
 * x must be finite and > 0; anything else gives an unspecified result. */
api_num_decimal api_num_shortest(double x);

/* ⌊log10 2^q⌋ for −1100 ≤ q ≤ 1100 (checked over that range by the tests). */
static inline int api_num_floor_log10_pow2(int q) {
    return (q * 315653) >> 20; /* 315653 ≈ log10(2) · 2^20 */
}

/* ⌊log10 (¾ · 2^q)⌋ for −1100 ≤ q ≤ 1100. */
static inline int api_num_floor_log10_3q_pow2(int q) {
    return (q * 315653 - 131008) >> 20; /* 131008 ≈ −log10(¾) · 2^20 */
}

/* ⌊log2 10^e⌋ for −400 ≤ e ≤ 400. */
static inline int api_num_floor_log2_pow10(int e) {
    return (e * 1741647) >> 19; /* 1741647 ≈ log2(10) · 2^19 */
}

#endif /* API_NUMFMT_SHORTEST_H */
