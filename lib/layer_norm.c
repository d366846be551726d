/*
 * layer_norm.c — layer normalisation over the last axis (Ba, Kiros &
 * Hinton 2016; d2l 11.7.3 "Residual Connection and Layer Normalization";
 * PyTorch nn.LayerNorm): biased variance, eps inside the square root, an
 * elementwise gain and bias. The forward keeps each row's mean and 1/std
 * for the backward.
 */
#include "attn_internal.h"

#include <math.h>
#include <string.h>

/* rows·E doubles must be addressable. */
static attn_status check_sizes(size_t rows, size_t E) {
    size_t n;
    if (attn_size_mul(&n, rows, E) != ATTN_OK ||
        attn_size_mul(&n, n, sizeof(double)) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    return ATTN_OK;
}

attn_status attn_layer_norm_forward(double *y, double *mean, double *rstd,
                                    const double *x, const double *gamma,
                                    const double *beta, size_t rows, size_t E,
                                    double eps, attn_fault *fault) {
    attn_fault_clear(fault);
    if (!y || !x || !gamma || !beta || !rows || !E || !isfinite(eps) || eps < 0)
        return ATTN_E_INVALID_ARG;
    attn_status st = check_sizes(rows, E);
    if (st != ATTN_OK)
        return st;
    for (size_t r = 0; r < rows; r++) {
        const double *xr = x + r * E;
        double *yr = y + r * E;
        /* two passes, as PyTorch's CPU kernel: the mean, then the squared
         * deviations from it (no E[x²] − E[x]² cancellation) */
        double m = 0.0;
        for (size_t c = 0; c < E; c++)
            m += xr[c];
        m /= (double)E;
        double var = 0.0;
        for (size_t c = 0; c < E; c++) {
            double d = xr[c] - m;
            var += d * d;
        }
        var /= (double)E;
        double s = 1.0 / sqrt(var + eps);
        if (!isfinite(s))
            return attn_fault_at(fault, r * E, ATTN_E_NONFINITE);
        for (size_t c = 0; c < E; c++)
            yr[c] = (xr[c] - m) * s * gamma[c] + beta[c];
        if (mean)
            mean[r] = m;
        if (rstd)
            rstd[r] = s;
    }
    return attn_check_finite(y, rows * E, fault);
}

attn_status attn_layer_norm_backward(double *grad_x, double *grad_gamma,
                                     double *grad_beta, const double *grad_y,
                                     const double *x, const double *mean,
                                     const double *rstd, const double *gamma,
                                     size_t rows, size_t E, attn_fault *fault) {
    attn_fault_clear(fault);
    if (!grad_x || !grad_gamma || !grad_beta || !grad_y || !x || !mean ||
        !rstd || !gamma || !rows || !E)
        return ATTN_E_INVALID_ARG;
    attn_status st = check_sizes(rows, E);
    if (st != ATTN_OK)
        return st;
    memset(grad_gamma, 0, E * sizeof(double));
    memset(grad_beta, 0, E * sizeof(double));
    for (size_t r = 0; r < rows; r++) {
        const double *xr = x + r * E, *dy = grad_y + r * E;
        double *dx = grad_x + r * E;
        const double m = mean[r], s = rstd[r];
        /* mean(g) and mean(g ⊙ x̂), g = dy ⊙ gamma; the parameter
         * gradients read dy before dx (which may alias it) is written */
        double sum_g = 0.0, sum_gx = 0.0;
        for (size_t c = 0; c < E; c++) {
            double xh = (xr[c] - m) * s;
            double g = dy[c] * gamma[c];
            sum_g += g;
            sum_gx += g * xh;
            grad_gamma[c] += dy[c] * xh;
            grad_beta[c] += dy[c];
        }
        const double mg = sum_g / (double)E, mgx = sum_gx / (double)E;
        for (size_t c = 0; c < E; c++) {
            double xh = (xr[c] - m) * s;
            dx[c] = s * (dy[c] * gamma[c] - mg - xh * mgx);
        }
    }
    const double *g[] = {grad_x, grad_gamma, grad_beta};
    const size_t n[] = {rows * E, E, E};
    for (size_t t = 0, base = 0; t < 3; base += n[t], t++) {
        st = attn_check_finite(g[t], n[t], fault);
        if (st != ATTN_OK) {
            if (fault)
                fault->index += base;
            return st;
        }
    }
    return ATTN_OK;
}
