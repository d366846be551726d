/*
 * rng.c — reproducible randomness, bit for bit as the wire contract states
 * (docs/contract.md section 7): xoshiro256** (Blackman & Vigna 2018) seeded by
 * splitmix64 (Steele, Lea & Flood 2014), 53-bit uniforms, Box–Muller
 * normals (Box & Muller 1958) and Xavier-uniform initialisation (Glorot &
 * Bengio 2010).
 */
#include "attn.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k) {
    return (x << k) | (x >> (64 - k));
}

void attn_rng_seed(attn_rng *rng, uint64_t seed) {
    uint64_t state = seed;
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&state);
}

uint64_t attn_rng_next(attn_rng *rng) {
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double attn_rng_uniform(attn_rng *rng) {
    return (double)(attn_rng_next(rng) >> 11) * 0x1.0p-53;
}

void attn_rng_normals(attn_rng *rng, double *out, size_t n) {
    const double two_pi = 6.283185307179586; /* 2π rounded to double */
    for (size_t i = 0; i < n; i += 2) {
        double u1, u2;
        do {
            u1 = attn_rng_uniform(rng);
            u2 = attn_rng_uniform(rng);
        } while (u1 == 0.0);
        double r = sqrt(-2.0 * log(u1));
        out[i] = r * cos(two_pi * u2);
        if (i + 1 < n)
            out[i + 1] = r * sin(two_pi * u2);
    }
}

void attn_rng_xavier(attn_rng *rng, double *W, size_t rows, size_t cols) {
    double a = sqrt(6.0 / ((double)cols + (double)rows));
    for (size_t t = 0; t < rows * cols; t++)
        W[t] = -a + 2.0 * a * attn_rng_uniform(rng);
}
