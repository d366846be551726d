/*
 * numfmt_exact.h — exact comparison of products of small powers of two and
 * five, the slow and rare tiebreak of the shortest-digit search.
 */
#ifndef API_NUMFMT_EXACT_H
#define API_NUMFMT_EXACT_H

#include <stdint.h>

/* Largest exponent api_num_exact_cmp accepts for 2 and for 5; enough for
 * every double (2^−1074 … 2^1024, 10^−324 … 10^308). */
#define API_NUM_EXACT_MAX_POW2 1100
#define API_NUM_EXACT_MAX_POW5 400

/* Compares a · 5^a5 · 2^a2 with b · 5^b5 · 2^b2 exactly (big-integer
 * arithmetic on the stack, no allocation). Exponents must lie in
 * [0, API_NUM_EXACT_MAX_POW5] and [0, API_NUM_EXACT_MAX_POW2]; outside that
 * range the result is unspecified. Returns −1, 0 or +1 as the left side is
 * smaller, equal or larger. */
int api_num_exact_cmp(uint64_t a, int a5, int a2, uint64_t b, int b5, int b2);

#endif /* API_NUMFMT_EXACT_H */
