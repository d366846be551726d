/*
 * nw_trace.c — the steps of a Nadaraya–Watson prediction (d2l 11.2;
 * Nadaraya 1964, Watson 1964) before its weights, for a trace: the
 * distances x − xᵢ between each query and each training point, and the
 * scores the weights come from. The weights and predictions themselves
 * are attn_nw_predict's.
 */
#include "attn_internal.h"

#include <math.h>

attn_status attn_nw_trace(double *distances, double *scores,
                          const double *x_query, const double *x_train,
                          attn_kernel kernel, double w, size_t m, size_t n) {
    if (!distances || !scores || !x_query || !x_train || m == 0 || n == 0 ||
        !isfinite(w) || !(w > 0.0))
        return ATTN_E_INVALID_ARG;
    switch (kernel) {
    case ATTN_KERNEL_GAUSSIAN:
    case ATTN_KERNEL_CONSTANT:
    case ATTN_KERNEL_BOXCAR:
    case ATTN_KERNEL_EPANECHNIKOV:
    case ATTN_KERNEL_TRIANGULAR:
        break;
    default:
        return ATTN_E_INVALID_ARG;
    }
    size_t mn;
    if (attn_size_mul(&mn, m, n) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    for (size_t q = 0; q < m; q++) {
        if (attn_deadline_passed())
            return ATTN_E_DEADLINE;
        double *dq = distances + q * n, *sq = scores + q * n;
        for (size_t i = 0; i < n; i++) {
            /* the kernel's argument (x − xᵢ)·w, as attn_nw_predict
             * computes it */
            double d = x_query[q] - x_train[i];
            double u = attn_nw_scaled_difference(x_query[q], x_train[i], w);
            dq[i] = d;
            sq[i] = kernel == ATTN_KERNEL_GAUSSIAN
                        ? -0.5 * (u * u)
                        : attn_nw_kernel_value(kernel, u);
        }
    }
    return ATTN_OK;
}
