/*
 * posenc.c — sinusoidal positional encoding (d2l 11.6.3 "Positional
 * Encoding"; Vaswani et al. 2017, section 3.5).
 */
#include "attn.h"

#include <math.h>

attn_status attn_posenc_sinusoidal(double *P, size_t num_steps, size_t D) {
    size_t n;
    if (!P || !num_steps || !D)
        return ATTN_E_INVALID_ARG;
    if (attn_size_mul(&n, num_steps, D) != ATTN_OK ||
        attn_size_mul(&n, n, sizeof(double)) != ATTN_OK)
        return ATTN_E_OVERFLOW;

    /* Column pair (2j, 2j+1) shares the frequency 1 / 10000^(2j/D); an odd
     * D ends with the sine of the last pair. */
    for (size_t c = 0; c < D; c += 2) {
        double divisor = pow(10000.0, (double)c / (double)D);
        for (size_t i = 0; i < num_steps; i++) {
            double angle = (double)i / divisor;
            P[i * D + c] = sin(angle);
            if (c + 1 < D)
                P[i * D + c + 1] = cos(angle);
        }
    }
    return ATTN_OK;
}
