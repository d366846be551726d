/*
 * numpy_random.c — NumPy's legacy RandomState (np.random.seed, rand,
 * random_sample, randn), to the bit, so code written against
 * np.random.seed(n) can be reproduced exactly (docs/contract.md section 7).
 *
 * Sources, numpy 1.17+ (the behaviour is frozen: "legacy" means NumPy
 * promises never to change these streams):
 *   - numpy/random/_mt19937.pyx, MT19937._legacy_seeding: a Python int seed
 *     in 0 … 2^32 − 1 goes to mt19937_seed(state, seed);
 *   - numpy/random/src/mt19937/mt19937.c: mt19937_seed (Knuth's
 *     multiplier 1812433253, the reference init_genrand; pos = 624 so the
 *     first draw regenerates), mt19937_gen (Matsumoto & Nishimura 1998);
 *   - numpy/random/src/mt19937/mt19937.h: mt19937_next (tempering) and
 *     mt19937_next_double, (a·2^26 + b) / 2^53 with a = next >> 5 and
 *     b = next >> 6 (randomkit's rk_double);
 *   - numpy/random/src/legacy/legacy-distributions.c: legacy_gauss, the
 *     polar method (Marsaglia & Bray 1964) that returns f·x2 and keeps
 *     f·x1 for the next call (has_gauss, gauss);
 *   - numpy/random/mtrand.pyx, RandomState.seed: _legacy_seeding, then
 *     _reset_gauss (the cached value is dropped).
 */
#include "attn.h"

#include <math.h>

/* numpy's x1·x1 + x2·x2 is two roundings of products and one of the sum;
 * a fused multiply-add would round once and change r2's last bit (and
 * every normal after it). GCC contracts nothing under -std=c11; clang
 * contracts within an expression unless told. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

enum {
    MT_N = ATTN_NP_STATE_LEN,
    MT_M = 397,
};

#define MT_MATRIX_A 0x9908b0dfu
#define MT_UPPER_MASK 0x80000000u
#define MT_LOWER_MASK 0x7fffffffu

void attn_np_seed(attn_np_random *rs, uint32_t seed) {
    for (int pos = 0; pos < MT_N; pos++) {
        rs->key[pos] = seed;
        seed = 1812433253u * (seed ^ (seed >> 30)) + (uint32_t)pos + 1u;
    }
    rs->pos = MT_N;
    rs->has_gauss = 0;
    rs->gauss = 0.0;
}

void attn_np_seed_array(attn_np_random *rs, const uint32_t *init_key,
                        size_t key_length) {
    uint32_t *mt = rs->key;
    size_t i = 1, j = 0;
    attn_np_seed(rs, 19650218u);
    for (size_t k = MT_N > key_length ? MT_N : key_length; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525u)) +
                init_key[j] + (uint32_t)j; /* non linear */
        i++;
        j++;
        if (i >= MT_N) {
            mt[0] = mt[MT_N - 1];
            i = 1;
        }
        if (j >= key_length)
            j = 0;
    }
    for (size_t k = MT_N - 1; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941u)) -
                (uint32_t)i; /* non linear */
        i++;
        if (i >= MT_N) {
            mt[0] = mt[MT_N - 1];
            i = 1;
        }
    }
    mt[0] = 0x80000000u; /* MSB is 1, assuring a non-zero initial array */
}

/* The next 624 words of the state (mt19937_gen), and each tempered
 * (mt19937_next's tempering, one word at a time there). */
static void regenerate(attn_np_random *rs) {
    uint32_t *key = rs->key, y;
    int i;
    for (i = 0; i < MT_N - MT_M; i++) {
        y = (key[i] & MT_UPPER_MASK) | (key[i + 1] & MT_LOWER_MASK);
        key[i] = key[i + MT_M] ^ (y >> 1) ^ (-(y & 1u) & MT_MATRIX_A);
    }
    for (; i < MT_N - 1; i++) {
        y = (key[i] & MT_UPPER_MASK) | (key[i + 1] & MT_LOWER_MASK);
        key[i] = key[i + (MT_M - MT_N)] ^ (y >> 1) ^ (-(y & 1u) & MT_MATRIX_A);
    }
    y = (key[MT_N - 1] & MT_UPPER_MASK) | (key[0] & MT_LOWER_MASK);
    key[MT_N - 1] = key[MT_M - 1] ^ (y >> 1) ^ (-(y & 1u) & MT_MATRIX_A);
    for (i = 0; i < MT_N; i++) {
        y = key[i];
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c5680u;
        y ^= (y << 15) & 0xefc60000u;
        y ^= y >> 18;
        rs->tempered[i] = y;
    }
    rs->pos = 0;
}

static inline uint32_t next32(attn_np_random *rs) {
    if (rs->pos >= MT_N)
        regenerate(rs);
    return rs->tempered[rs->pos++];
}

uint32_t attn_np_next32(attn_np_random *rs) {
    return next32(rs);
}

static inline double random_sample(attn_np_random *rs) {
    /* the two draws in this order: C leaves the order of two calls in one
     * expression unspecified, numpy's int32_t a, b declaration does not */
    uint32_t a = next32(rs) >> 5;
    uint32_t b = next32(rs) >> 6;
    return ((double)a * 67108864.0 + (double)b) / 9007199254740992.0;
}

double attn_np_random_sample(attn_np_random *rs) {
    return random_sample(rs);
}

/* One pair of the polar method: *second (f·x2) is what legacy_gauss
 * returns, *first (f·x1) what it keeps for the next call. */
static void gauss_pair(attn_np_random *rs, double *second, double *first) {
    double f, x1, x2, r2;
    do {
        x1 = 2.0 * random_sample(rs) - 1.0;
        x2 = 2.0 * random_sample(rs) - 1.0;
        double s1 = x1 * x1, s2 = x2 * x2;
        r2 = s1 + s2;
    } while (r2 >= 1.0 || r2 == 0.0);
    f = sqrt(-2.0 * log(r2) / r2);
    *second = f * x2;
    *first = f * x1;
}

double attn_np_gauss(attn_np_random *rs) {
    if (rs->has_gauss) {
        double cached = rs->gauss;
        rs->has_gauss = 0;
        rs->gauss = 0.0;
        return cached;
    }
    double out;
    gauss_pair(rs, &out, &rs->gauss);
    rs->has_gauss = 1;
    return out;
}

void attn_np_rand(attn_np_random *rs, double *out, size_t n) {
    for (size_t i = 0; i < n; i++)
        out[i] = random_sample(rs);
}

void attn_np_randn(attn_np_random *rs, double *out, size_t n) {
    size_t i = 0;
    if (n > 0 && rs->has_gauss)
        out[i++] = attn_np_gauss(rs); /* the one kept */
    /* whole pairs, as legacy_gauss returns them two calls at a time */
    for (; i + 1 < n; i += 2)
        gauss_pair(rs, &out[i], &out[i + 1]);
    if (i < n)
        out[i] = attn_np_gauss(rs); /* and keeps the pair's other */
}
