/*
 * numfmt_pow10.h — table of 128-bit significands of powers of ten for the
 * shortest-digit search; the data is generated (api/numfmt_pow10_gen.py).
 */
#ifndef API_NUMFMT_POW10_H
#define API_NUMFMT_POW10_H

#include <stdint.h>

#define API_NUM_POW10_MIN (-292)
#define API_NUM_POW10_MAX 324
/* Entries with e in [0, API_NUM_POW10_EXACT_MAX] are exact (5^e < 2^128). */
#define API_NUM_POW10_EXACT_MAX 55

/* api_num_pow10[e − API_NUM_POW10_MIN] = {high 64 bits, low 64 bits} of
 * g(e) = 10^e · 2^r(e), r(e) = 127 − ⌊log2 10^e⌋, so 2^127 ≤ g < 2^128;
 * g is exact for 0 ≤ e ≤ 55, else ⌊10^e · 2^r⌋ + 1 (never below 10^e). */
extern const uint64_t api_num_pow10[API_NUM_POW10_MAX - API_NUM_POW10_MIN + 1]
                                   [2];

#endif /* API_NUMFMT_POW10_H */
