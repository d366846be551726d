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
#define GAUSS_CUTOFF 64.0    /* Gaussian weights below e^-64 are 0 */

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

/* K(u); the Gaussian as exp(-(u² - shift)/2), see loo_sorted. Its
 * weights below e^-64 ≈ 1.6e-28 count as 0: beside the nearest point's
 * weight 1 they move ŷ by less than 1.6e-28·n·max|yⱼ − ŷ|, and dropping
 * them lets each point stop after the neighbours within about 11.3·h. */
static double kernel_at(attn_kernel kernel, double u, double shift) {
    double a = fabs(u);
    switch (kernel) {
    case ATTN_KERNEL_GAUSSIAN: {
        double e = (u * u - shift) / 2.0;
        return e < GAUSS_CUTOFF ? exp(-e) : 0.0;
    }
    case ATTN_KERNEL_BOXCAR:
        return a < 1.0 ? 1.0 : 0.0;
    case ATTN_KERNEL_EPANECHNIKOV:
        return a < 1.0 ? 1.0 - u * u : 0.0;
    case ATTN_KERNEL_TRIANGULAR:
        return a < 1.0 ? 1.0 - a : 0.0;
    case ATTN_KERNEL_CONSTANT:
        break;
    }
    return 1.0;
}

/* The training pairs sorted by x (ties by original index), in one block
 * after the sort keys: xs: (n)  ys: (n, dv)  pred: (dv) scratch
 * orig: (n) original index of each. */
typedef struct {
    double *xs, *ys, *pred;
    size_t *orig;
    void *block;
} sorted_pairs;

typedef struct {
    double x;
    size_t i;
} keyed;

static int cmp_double(const void *pa, const void *pb) {
    double a = *(const double *)pa, b = *(const double *)pb;
    return (a > b) - (a < b);
}

static int cmp_keyed(const void *pa, const void *pb) {
    const keyed *a = pa, *b = pb;
    if (a->x != b->x)
        return a->x < b->x ? -1 : 1;
    return (a->i > b->i) - (a->i < b->i);
}

/* Fills sp; ATTN_E_OVERFLOW or ATTN_E_NOMEM. Free sp->block. */
static attn_status sort_pairs(sorted_pairs *sp, const double *x,
                              const double *y, size_t n, size_t dv) {
    /* keyed (n), then doubles xs (n), ys (n·dv), pred (dv), then orig (n) */
    size_t elems, bytes, tail;
    if (attn_size_mul(&elems, n, dv) != ATTN_OK ||
        attn_size_add(&elems, elems, n) != ATTN_OK ||
        attn_size_add(&elems, elems, dv) != ATTN_OK ||
        attn_size_mul(&elems, elems, sizeof(double)) != ATTN_OK ||
        attn_size_mul(&bytes, n, sizeof(keyed)) != ATTN_OK ||
        attn_size_mul(&tail, n, sizeof(size_t)) != ATTN_OK ||
        attn_size_add(&bytes, bytes, elems) != ATTN_OK ||
        attn_size_add(&bytes, bytes, tail) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    keyed *k = malloc(bytes);
    if (!k)
        return ATTN_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        k[i].x = x[i];
        k[i].i = i;
    }
    qsort(k, n, sizeof *k, cmp_keyed);
    sp->block = k;
    sp->xs = (double *)(k + n);
    sp->ys = sp->xs + n;
    sp->pred = sp->ys + n * dv;
    sp->orig = (size_t *)(sp->pred + dv);
    for (size_t i = 0; i < n; i++) {
        size_t from = k[i].i;
        sp->xs[i] = k[i].x;
        memcpy(sp->ys + i * dv, y + from * dv, dv * sizeof(double));
        sp->orig[i] = from;
    }
    return ATTN_OK;
}

/* Adds point j's weight for query point i to *mass and sp->pred; returns
 * 0 when the weight is 0 (then every point further away has 0 too). */
static int add_neighbour(const sorted_pairs *sp, attn_kernel kernel, double w,
                         double shift, size_t i, size_t j, size_t dv,
                         double *mass) {
    double kj = kernel_at(kernel, (sp->xs[i] - sp->xs[j]) * w, shift);
    if (kj == 0.0)
        return 0;
    *mass += kj;
    const double *yj = sp->ys + j * dv;
    for (size_t c = 0; c < dv; c++)
        sp->pred[c] += kj * yj[c];
    return 1;
}

/* Leave-one-out squared error on sorted pairs (see attn_nw_loo_sse). A
 * kernel weight only falls with the distance, so each point walks outwards
 * from itself and stops at the first zero weight: small h visits few
 * neighbours. */
static attn_status loo_sorted(double *sse, const sorted_pairs *sp,
                              attn_kernel kernel, double w, size_t n, size_t dv,
                              attn_fault *fault) {
    double total = 0.0;
    for (size_t i = 0; i < n; i++) {
        /* 1. The Gaussian's weights are exp(-(u_j² - min u²)/2): the
         *    nearest other point (a sorted neighbour) has weight 1, so the
         *    mass never underflows to 0 however small h is. */
        double shift = 0.0;
        if (kernel == ATTN_KERNEL_GAUSSIAN) {
            double left = i > 0 ? (sp->xs[i] - sp->xs[i - 1]) * w : INFINITY;
            double right =
                i + 1 < n ? (sp->xs[i + 1] - sp->xs[i]) * w : INFINITY;
            shift = left < right ? left * left : right * right;
        }
        /* 2. ŷ₋ᵢ = Σ_{j≠i} K_j y_j / Σ_{j≠i} K_j, nearest first */
        double mass = 0.0;
        for (size_t c = 0; c < dv; c++)
            sp->pred[c] = 0.0;
        for (size_t j = i; j-- > 0;) {
            if (!add_neighbour(sp, kernel, w, shift, i, j, dv, &mass))
                break;
        }
        for (size_t j = i + 1; j < n; j++) {
            if (!add_neighbour(sp, kernel, w, shift, i, j, dv, &mass))
                break;
        }
        if (!(mass > 0.0)) {
            if (fault)
                fault->index = sp->orig[i];
            return ATTN_E_ZERO_MASS;
        }
        /* 3. squared errors */
        const double *yi = sp->ys + i * dv;
        for (size_t c = 0; c < dv; c++) {
            double err = yi[c] - sp->pred[c] / mass;
            total += err * err;
        }
    }
    if (!isfinite(total))
        return ATTN_E_NONFINITE;
    *sse = total;
    return ATTN_OK;
}

attn_status attn_nw_loo_sse(double *sse, const double *x_train,
                            const double *y_train, attn_kernel kernel, double h,
                            size_t n, size_t dv, attn_fault *fault) {
    if (fault) {
        fault->index = 0;
        fault->by_causal = 0;
    }
    if (!sse || !x_train || !y_train || !n || !dv || !kernel_known(kernel))
        return ATTN_E_INVALID_ARG;
    if (!isfinite(h) || h <= 0.0)
        return ATTN_E_INVALID_ARG;
    size_t elems;
    if (attn_size_mul(&elems, n, dv) != ATTN_OK ||
        attn_size_mul(&elems, elems, sizeof(double)) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    if (n < 2)
        return ATTN_E_TOO_FEW;
    const double w = 1.0 / h;
    if (!isfinite(w))
        return ATTN_E_NONFINITE;
    sorted_pairs sp;
    attn_status st = sort_pairs(&sp, x_train, y_train, n, dv);
    if (st != ATTN_OK)
        return st;
    st = loo_sorted(sse, &sp, kernel, w, n, dv, fault);
    free(sp.block);
    return st;
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
static double cv_score(const sorted_pairs *sp, attn_kernel kernel, double h,
                       size_t n, size_t dv) {
    double sse, w = 1.0 / h;
    if (!isfinite(w) || loo_sorted(&sse, sp, kernel, w, n, dv, NULL) != ATTN_OK)
        return INFINITY;
    return sse;
}

/* The LOO-minimising h given x's smallest positive gap and its range;
 * +inf when no candidate is usable. */
static double cv_search(const sorted_pairs *sp, attn_kernel kernel, double gap,
                        double range, size_t n, size_t dv) {
    /* 1. 200 log-spaced candidates over [gap/20, 100·range]; the first
     *    smallest score wins ties. */
    const double lo = gap / CV_GRID_LO_DIV, hi = CV_GRID_HI_MUL * range;
    const double step = log(hi / lo) / (CV_GRID - 1);
    double grid[CV_GRID];
    size_t best = 0;
    double best_f = INFINITY;
    for (size_t k = 0; k < CV_GRID; k++) {
        grid[k] = k == CV_GRID - 1 ? hi : lo * exp(step * (double)k);
        double f = cv_score(sp, kernel, grid[k], n, dv);
        if (f < best_f) {
            best_f = f;
            best = k;
        }
    }
    if (!isfinite(best_f))
        return INFINITY;

    /* 2. Golden-section search between the best candidate's neighbours
     *    until the bracket is within CV_REL_TOL of its midpoint; the best
     *    h evaluated anywhere is returned. */
    const double invphi = (sqrt(5.0) - 1.0) / 2.0;
    double a = grid[best > 0 ? best - 1 : 0];
    double b = grid[best + 1 < CV_GRID ? best + 1 : CV_GRID - 1];
    double best_h = grid[best];
    double c = b - invphi * (b - a), d = a + invphi * (b - a);
    double fc = cv_score(sp, kernel, c, n, dv);
    double fd = cv_score(sp, kernel, d, n, dv);
    for (;;) {
        if (fc < best_f) {
            best_f = fc;
            best_h = c;
        }
        if (fd < best_f) {
            best_f = fd;
            best_h = d;
        }
        if (!(b - a > CV_REL_TOL * 0.5 * (a + b)))
            break;
        if (fc <= fd) {
            b = d;
            d = c;
            fd = fc;
            c = b - invphi * (b - a);
            fc = cv_score(sp, kernel, c, n, dv);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + invphi * (b - a);
            fd = cv_score(sp, kernel, d, n, dv);
        }
    }
    return best_h;
}

/* The CV bandwidth (sorted copies of the pairs, then the search). */
static attn_status cv_bandwidth(double *bw, const double *x, const double *y,
                                attn_kernel kernel, double gap, double range,
                                size_t n, size_t dv) {
    if (!(gap / CV_GRID_LO_DIV > 0.0) || !isfinite(CV_GRID_HI_MUL * range))
        return ATTN_E_NONFINITE; /* the candidates are not representable */
    sorted_pairs sp;
    attn_status st = sort_pairs(&sp, x, y, n, dv);
    if (st != ATTN_OK)
        return st;
    *bw = cv_search(&sp, kernel, gap, range, n, dv);
    free(sp.block);
    return ATTN_OK;
}

attn_status attn_nw_bandwidth(double *h, double *w, const double *x_train,
                              const double *y_train, attn_kernel kernel,
                              attn_nw_bw_rule rule, size_t n, size_t dv) {
    if (!h || !w || !x_train || !n || !kernel_known(kernel))
        return ATTN_E_INVALID_ARG;
    if (rule != ATTN_NW_BW_SCOTT && rule != ATTN_NW_BW_SILVERMAN &&
        rule != ATTN_NW_BW_CV)
        return ATTN_E_INVALID_ARG;
    if (rule == ATTN_NW_BW_CV &&
        (!y_train || !dv || kernel == ATTN_KERNEL_CONSTANT))
        return ATTN_E_INVALID_ARG;
    size_t bytes;
    if (attn_size_mul(&bytes, n, sizeof(double)) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x_train[i]))
            return ATTN_E_INVALID_ARG;
    }

    /* 1. x sorted: range, smallest positive gap, quartiles */
    double *sorted = malloc(bytes);
    if (!sorted)
        return ATTN_E_NOMEM;
    memcpy(sorted, x_train, bytes);
    qsort(sorted, n, sizeof(double), cmp_double);
    double range = sorted[n - 1] - sorted[0];
    double gap = INFINITY;
    for (size_t i = 1; i < n; i++) {
        double g = sorted[i] - sorted[i - 1];
        if (g > 0.0 && g < gap)
            gap = g;
    }

    /* 2. the rule */
    attn_status st = ATTN_OK;
    double bw = 0.0;
    if (!(range > 0.0))
        st = ATTN_E_TOO_FEW; /* fewer than 2 distinct points */
    else if (!isfinite(range))
        st = ATTN_E_NONFINITE;
    else if (rule == ATTN_NW_BW_CV)
        st = cv_bandwidth(&bw, x_train, y_train, kernel, gap, range, n, dv);
    else
        bw = rule_of_thumb(sorted, n, rule == ATTN_NW_BW_SCOTT ? 1.059 : 0.9);
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
