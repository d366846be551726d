/*
 * bandwidth.c — choosing the Nadaraya–Watson bandwidth h (w = 1/h) from the
 * training data: Scott's and Silverman's rules of thumb, and leave-one-out
 * least-squares cross-validation (Racine & Li 2004; statsmodels KernelReg
 * bw='cv_ls').
 */
#include "attn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CV_GRID 200          /* log-spaced candidates */
#define CV_GRID_LO_DIV 20.0  /* lowest candidate: smallest positive gap / 20 */
#define CV_GRID_HI_MUL 100.0 /* highest candidate: 100 · range */
#define CV_REL_TOL 1e-6      /* golden-section stop: bracket / midpoint */

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* K(u) for the compact and constant kernels (the Gaussian is handled in
 * shifted form by the caller). */
static double kernel_compact(attn_kernel kernel, double u) {
    double a = fabs(u);
    switch (kernel) {
    case ATTN_KERNEL_BOXCAR:
        return a < 1.0 ? 1.0 : 0.0;
    case ATTN_KERNEL_EPANECHNIKOV:
        return a < 1.0 ? 1.0 - u * u : 0.0;
    case ATTN_KERNEL_TRIANGULAR:
        return a < 1.0 ? 1.0 - a : 0.0;
    default:
        return 1.0;
    }
}

static int kernel_known(attn_kernel kernel) {
    switch (kernel) {
    case ATTN_KERNEL_GAUSSIAN:
    case ATTN_KERNEL_CONSTANT:
    case ATTN_KERNEL_BOXCAR:
    case ATTN_KERNEL_EPANECHNIKOV:
    case ATTN_KERNEL_TRIANGULAR:
        return 1;
    }
    return 0;
}

attn_status attn_nw_loo_sse(double *sse, const double *x_train,
                            const double *y_train, attn_kernel kernel, double h,
                            size_t n, size_t dv, attn_fault *fault) {
    size_t elems;
    if (!sse || !x_train || !y_train || !n || !dv || !kernel_known(kernel))
        return ATTN_E_INVALID_ARG;
    if (!isfinite(h) || h <= 0.0)
        return ATTN_E_INVALID_ARG;
    if (attn_size_mul(&elems, n, dv) != ATTN_OK ||
        attn_size_mul(&elems, elems, sizeof(double)) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    if (n < 2)
        return ATTN_E_TOO_FEW;
    const double w = 1.0 / h;
    if (!isfinite(w))
        return ATTN_E_NONFINITE;

    double total = 0.0;
    for (size_t i = 0; i < n; i++) {
        /* The Gaussian's weights are exp(-(u_j² - min u²)/2): the nearest
         * other point has weight 1, so the mass never underflows to 0. */
        double shift = 0.0;
        if (kernel == ATTN_KERNEL_GAUSSIAN) {
            shift = INFINITY;
            for (size_t j = 0; j < n; j++) {
                double u = (x_train[i] - x_train[j]) * w;
                if (j != i && u * u < shift)
                    shift = u * u;
            }
        }
        double mass = 0.0;
        for (size_t j = 0; j < n; j++) {
            if (j == i)
                continue;
            double u = (x_train[i] - x_train[j]) * w;
            mass += kernel == ATTN_KERNEL_GAUSSIAN ? exp(-(u * u - shift) / 2.0)
                                                   : kernel_compact(kernel, u);
        }
        if (!(mass > 0.0)) {
            if (fault)
                fault->index = i;
            return ATTN_E_ZERO_MASS;
        }
        for (size_t c = 0; c < dv; c++) {
            double acc = 0.0;
            for (size_t j = 0; j < n; j++) {
                if (j == i)
                    continue;
                double u = (x_train[i] - x_train[j]) * w;
                double kj = kernel == ATTN_KERNEL_GAUSSIAN
                                ? exp(-(u * u - shift) / 2.0)
                                : kernel_compact(kernel, u);
                acc += kj * y_train[j * dv + c];
            }
            double err = y_train[i * dv + c] - acc / mass;
            total += err * err;
        }
    }
    if (!isfinite(total))
        return ATTN_E_NONFINITE;
    *sse = total;
    return ATTN_OK;
}

/* numpy.quantile(x, p) with the default "linear" method on sorted x. */
static double quantile_linear(const double *sorted, size_t n, double p) {
    double pos = (double)(n - 1) * p;
    size_t lo = (size_t)floor(pos);
    if (lo >= n - 1)
        return sorted[n - 1];
    double t = pos - (double)lo, a = sorted[lo], b = sorted[lo + 1];
    /* numpy's _lerp: from the nearer end for t >= 0.5. */
    return t >= 0.5 ? b - (b - a) * (1.0 - t) : a + (b - a) * t;
}

/* Scott (1.059) or Silverman (0.9) times A·n^(-1/5) on sorted x. */
static double rule_of_thumb(const double *sorted, size_t n, double factor) {
    double mean = 0.0, ss = 0.0;
    for (size_t i = 0; i < n; i++)
        mean += sorted[i];
    mean /= (double)n;
    for (size_t i = 0; i < n; i++)
        ss += (sorted[i] - mean) * (sorted[i] - mean);
    double sd = sqrt(ss / (double)(n - 1));
    double iqr =
        quantile_linear(sorted, n, 0.75) - quantile_linear(sorted, n, 0.25);
    double A = iqr > 0.0 && iqr / 1.349 < sd ? iqr / 1.349 : sd;
    return factor * A * pow((double)n, -0.2);
}

/* LOO score at h, +inf when some point has zero kernel mass or the sum
 * overflows (such an h is never chosen). */
static double cv_score(const double *x, const double *y, attn_kernel kernel,
                       double h, size_t n, size_t dv) {
    double sse;
    if (attn_nw_loo_sse(&sse, x, y, kernel, h, n, dv, NULL) != ATTN_OK)
        return INFINITY;
    return sse;
}

/* The LOO-minimising h on sorted-x statistics gap (smallest positive) and
 * range; *h_out = +inf when no candidate is usable. */
static void cv_search(double *h_out, const double *x, const double *y,
                      attn_kernel kernel, double gap, double range, size_t n,
                      size_t dv) {
    /* 1. 200 log-spaced candidates over [gap/20, 100·range]; the first
     *    smallest score wins ties. */
    const double lo = gap / CV_GRID_LO_DIV, hi = CV_GRID_HI_MUL * range;
    const double step = log(hi / lo) / (CV_GRID - 1);
    double grid[CV_GRID];
    size_t best = 0;
    double best_f = INFINITY;
    for (size_t k = 0; k < CV_GRID; k++) {
        grid[k] = k == CV_GRID - 1 ? hi : lo * exp(step * (double)k);
        double f = cv_score(x, y, kernel, grid[k], n, dv);
        if (f < best_f) {
            best_f = f;
            best = k;
        }
    }
    if (!isfinite(best_f)) {
        *h_out = INFINITY;
        return;
    }

    /* 2. Golden-section search between the best candidate's neighbours
     *    until the bracket is within CV_REL_TOL of its midpoint; the best
     *    h evaluated anywhere is returned. */
    const double invphi = (sqrt(5.0) - 1.0) / 2.0;
    double a = grid[best > 0 ? best - 1 : 0];
    double b = grid[best + 1 < CV_GRID ? best + 1 : CV_GRID - 1];
    double best_h = grid[best];
    double c = b - invphi * (b - a), d = a + invphi * (b - a);
    double fc = cv_score(x, y, kernel, c, n, dv);
    double fd = cv_score(x, y, kernel, d, n, dv);
    while (b - a > CV_REL_TOL * 0.5 * (a + b)) {
        if (fc < best_f) {
            best_f = fc;
            best_h = c;
        }
        if (fd < best_f) {
            best_f = fd;
            best_h = d;
        }
        if (fc <= fd) {
            b = d;
            d = c;
            fd = fc;
            c = b - invphi * (b - a);
            fc = cv_score(x, y, kernel, c, n, dv);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + invphi * (b - a);
            fd = cv_score(x, y, kernel, d, n, dv);
        }
    }
    if (fc < best_f) {
        best_f = fc;
        best_h = c;
    }
    if (fd < best_f)
        best_h = d;
    *h_out = best_h;
}

attn_status attn_nw_bandwidth(double *h, double *w, const double *x_train,
                              const double *y_train, attn_kernel kernel,
                              attn_nw_bw_rule rule, size_t n, size_t dv) {
    size_t bytes;
    if (!h || !w || !x_train || !n || !kernel_known(kernel))
        return ATTN_E_INVALID_ARG;
    if (rule != ATTN_NW_BW_SCOTT && rule != ATTN_NW_BW_SILVERMAN &&
        rule != ATTN_NW_BW_CV)
        return ATTN_E_INVALID_ARG;
    if (rule == ATTN_NW_BW_CV &&
        (!y_train || !dv || kernel == ATTN_KERNEL_CONSTANT))
        return ATTN_E_INVALID_ARG;
    if (attn_size_mul(&bytes, n, sizeof(double)) != ATTN_OK ||
        (rule == ATTN_NW_BW_CV &&
         (attn_size_mul(&bytes, n, dv) != ATTN_OK ||
          attn_size_mul(&bytes, bytes, sizeof(double)) != ATTN_OK)))
        return ATTN_E_OVERFLOW;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x_train[i]))
            return ATTN_E_INVALID_ARG;
    }

    double *sorted = malloc(n * sizeof(double));
    if (!sorted)
        return ATTN_E_NOMEM;
    memcpy(sorted, x_train, n * sizeof(double));
    qsort(sorted, n, sizeof(double), cmp_double);
    double range = sorted[n - 1] - sorted[0];
    double gap = INFINITY;
    for (size_t i = 1; i < n; i++) {
        double g = sorted[i] - sorted[i - 1];
        if (g > 0.0 && g < gap)
            gap = g;
    }

    attn_status st = ATTN_OK;
    double bw = 0.0;
    if (!(range > 0.0)) {
        st = ATTN_E_TOO_FEW; /* fewer than 2 distinct points */
    } else if (!isfinite(range)) {
        st = ATTN_E_NONFINITE;
    } else if (rule == ATTN_NW_BW_CV) {
        if (gap / CV_GRID_LO_DIV > 0.0 && isfinite(CV_GRID_HI_MUL * range))
            cv_search(&bw, x_train, y_train, kernel, gap, range, n, dv);
        else
            st = ATTN_E_NONFINITE; /* the candidate grid is not representable */
    } else {
        bw = rule_of_thumb(sorted, n, rule == ATTN_NW_BW_SCOTT ? 1.059 : 0.9);
    }
    free(sorted);
    if (st != ATTN_OK)
        return st;
    if (!isfinite(bw) || !(bw > 0.0) || !isfinite(1.0 / bw) ||
        !(1.0 / bw > 0.0))
        return ATTN_E_NONFINITE;
    *h = bw;
    *w = 1.0 / bw;
    return ATTN_OK;
}
