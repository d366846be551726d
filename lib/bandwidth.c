/*
 * bandwidth.c — choosing the Nadaraya–Watson bandwidth h (w = 1/h) from the
 * training data: Scott's and Silverman's rules of thumb, and leave-one-out
 * least-squares cross-validation (Racine & Li 2004; statsmodels KernelReg
 * bw='cv_ls').
 */
#include "attn.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CV_GRID 200          /* log-spaced candidates */
#define CV_GRID_LO_DIV 20.0  /* lowest candidate: smallest positive gap / 20 */
#define CV_GRID_HI_MUL 100.0 /* highest candidate: 100 · range */
#define CV_REL_TOL 1e-6      /* golden-section stop: bracket / midpoint */
#define CV_EDGE_MARGIN 1e-12 /* relative: the answer's room from an edge */
#define CV_EDGES_NEAR 8      /* distinct distances tried beside a candidate */
#define CV_EDGE_EVALS 8      /* extra evaluations those may take in all */
#define CV_EVALS 262         /* at most 200 + 62 LOO evaluations in all */
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

/* The weight of a pair at distance d ≥ 0 for bandwidth h > 0, u = d/h.
 * A compact kernel's support is decided on d < h itself, which is the
 * same as fl(d/h) < 1 and never depends on how 1/h rounds; inside it the
 * weight is > 0 (u ≤ 1 − 2⁻⁵³). The Gaussian is exp(-(u² − u₀²)/2), u₀ =
 * d0/h the nearest other point's (see loo_sorted), with the exponent as
 * ((d − d0)·inv)·((d + d0)·inv)/2, inv = 1/h (a smooth kernel does not
 * care how it rounds; divided by h when 1/h overflows), so that the weight
 * is 1 at d0 exactly and never exp(inf − inf) for tiny h. Its weights below
 * e^-64 ≈ 1.6e-28 count as 0: beside the nearest point's weight 1 they
 * move ŷ by less than 1.6e-28·n·max|yⱼ − ŷ|, and dropping them lets each
 * point stop after the neighbours within about 11.3·h. */
static double pair_weight(attn_kernel kernel, double d, double d0, double h,
                          double inv) {
    switch (kernel) {
    case ATTN_KERNEL_GAUSSIAN: {
        if (d == d0)
            return 1.0;
        double e = isfinite(inv) ? 0.5 * ((d - d0) * inv) * ((d + d0) * inv)
                                 : 0.5 * ((d - d0) / h) * ((d + d0) / h);
        return e < GAUSS_CUTOFF ? exp(-e) : 0.0;
    }
    case ATTN_KERNEL_BOXCAR:
        return d < h ? 1.0 : 0.0;
    case ATTN_KERNEL_EPANECHNIKOV:
        if (d < h) {
            double u = d / h;
            return 1.0 - u * u;
        }
        return 0.0;
    case ATTN_KERNEL_TRIANGULAR:
        return d < h ? 1.0 - d / h : 0.0;
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

/* Fills sp, with x scaled by 2^-e (exactly, unless a scaled value is
 * subnormal); ATTN_E_OVERFLOW or ATTN_E_NOMEM. Free sp->block. */
static attn_status sort_pairs(sorted_pairs *sp, const double *x,
                              const double *y, size_t n, size_t dv, int e) {
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
        sp->xs[i] = ldexp(k[i].x, -e);
        memcpy(sp->ys + i * dv, y + from * dv, dv * sizeof(double));
        sp->orig[i] = from;
    }
    return ATTN_OK;
}

/* 2 when some |x| exceeds DBL_MAX/4, else 0: with x scaled by 2^-2 no
 * distance between two points, nor the sum of two, overflows. */
static int overflow_exponent(const double *x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (fabs(x[i]) > DBL_MAX / 4)
            return 2;
    }
    return 0;
}

/* Adds point j's weight for point i to *mass and sp->pred; returns 0 when
 * the weight is 0 (then every point further away has 0 too). */
static int add_neighbour(const sorted_pairs *sp, attn_kernel kernel, double h,
                         double inv, double d0, size_t i, size_t j, size_t dv,
                         double *mass) {
    double kj = pair_weight(kernel, fabs(sp->xs[i] - sp->xs[j]), d0, h, inv);
    if (kj == 0.0)
        return 0;
    *mass += kj;
    const double *yj = sp->ys + j * dv;
    for (size_t c = 0; c < dv; c++)
        sp->pred[c] += kj * yj[c];
    return 1;
}

/* Leave-one-out squared error on sorted pairs at bandwidth h (see
 * attn_nw_loo_sse). A kernel weight only falls with the distance, so each
 * point walks outwards from itself and stops at the first zero weight:
 * small h visits few neighbours. */
static attn_status loo_sorted(double *sse, const sorted_pairs *sp,
                              attn_kernel kernel, double h, size_t n, size_t dv,
                              attn_fault *fault) {
    const double inv = 1.0 / h;
    double total = 0.0;
    for (size_t i = 0; i < n; i++) {
        /* 1. The Gaussian's weights are relative to the nearest other
         *    point (a sorted neighbour, at distance d0), whose weight is 1,
         *    so the mass never underflows to 0 however small h is. */
        double d0 = INFINITY;
        if (kernel == ATTN_KERNEL_GAUSSIAN) {
            if (i > 0)
                d0 = sp->xs[i] - sp->xs[i - 1];
            if (i + 1 < n && sp->xs[i + 1] - sp->xs[i] < d0)
                d0 = sp->xs[i + 1] - sp->xs[i];
        }
        /* 2. ŷ₋ᵢ = Σ_{j≠i} K_j y_j / Σ_{j≠i} K_j, nearest first */
        double mass = 0.0;
        for (size_t c = 0; c < dv; c++)
            sp->pred[c] = 0.0;
        for (size_t j = i; j-- > 0;) {
            if (!add_neighbour(sp, kernel, h, inv, d0, i, j, dv, &mass))
                break;
        }
        for (size_t j = i + 1; j < n; j++) {
            if (!add_neighbour(sp, kernel, h, inv, d0, i, j, dv, &mass))
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
    /* x and h scaled alike by a power of two leave every u = d/h as it is */
    const int e = overflow_exponent(x_train, n);
    sorted_pairs sp;
    attn_status st = sort_pairs(&sp, x_train, y_train, n, dv, e);
    if (st != ATTN_OK)
        return st;
    st = loo_sorted(sse, &sp, kernel, ldexp(h, -e), n, dv, fault);
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

/* Scott (1.059) or Silverman (0.9) times A·n^(-1/5) on sorted x, which
 * is scaled in place by 2^-e, e the exponent of the largest |x| (so that
 * it lies in [0.5, 1)). The scaling is exact (values 2^1022 times smaller
 * than the largest may lose bits, far below A) and every rounding is that
 * of the unscaled formula, but the sum for the mean cannot overflow and no
 * squared deviation can overflow or underflow: x spaced 1e-300 or 1e300
 * apart, or near ±DBL_MAX, give A as at unit scale. h = 2^e·h', which is
 * inf or below DBL_MIN only when h itself is not a normal double. */
static double rule_of_thumb(double *sorted, size_t n, double factor) {
    int e;
    (void)frexp(fmax(fabs(sorted[0]), fabs(sorted[n - 1])), &e);
    for (size_t i = 0; i < n; i++)
        sorted[i] = ldexp(sorted[i], -e);
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
    return ldexp(factor * A * pow((double)n, -0.2), e);
}

/* ------------------------------------------------ cross-validation */

/* One search: the sorted pairs, the kernel, and the LOO evaluations made
 * so far (at most CV_EVALS: the callers' work estimates count on it). */
typedef struct {
    const sorted_pairs *sp;
    attn_kernel kernel;
    size_t n, dv, evals;
} cv_search_t;

/* LOO score at h, +inf when h is 0 or inf (a candidate outside doubles),
 * some point has zero kernel mass, or the sum overflows (such an h is
 * never chosen). */
static double cv_score(cv_search_t *cs, double h) {
    double sse;
    if (!(h > 0.0) || !isfinite(h))
        return INFINITY;
    cs->evals++;
    if (loo_sorted(&sse, cs->sp, cs->kernel, h, cs->n, cs->dv, NULL) != ATTN_OK)
        return INFINITY;
    return sse;
}

/* The candidates h_k = lo·(hi/lo)^(k/199), lo = gap/20, hi = 100·range,
 * k = 0..199, as the contract defines them: the ends rounded once, the
 * others computed in long double, which on x86-64 rounds all but about 1
 * in 400 of them correctly and the rest by one ulp (lo·exp(step·k) in
 * double missed 5 in 6, by up to 31 ulps), and where neither lo, hi nor
 * hi/lo can under- or overflow. A candidate outside doubles is 0 or inf
 * (never usable). Returns a bound on |grid[k]/h_k − 1| against the exact
 * points of the exact gap and range (those given are rounded differences). */
static double cv_grid(double grid[CV_GRID], double gap, double range) {
    const long double llo = logl((long double)gap) - logl(CV_GRID_LO_DIV);
    const long double lhi = logl((long double)range) + logl(CV_GRID_HI_MUL);
    const long double lo = (long double)gap / CV_GRID_LO_DIV;
    const long double hi = (long double)range * CV_GRID_HI_MUL;
    const long double ratio = hi / lo;
    const int direct = lo > 0.0L && isfinite(ratio);
    const long double span = direct ? logl(ratio) : lhi - llo;
    for (size_t k = 1; k + 1 < CV_GRID; k++) {
        long double t = span * (long double)k / (long double)(CV_GRID - 1);
        grid[k] = (double)(direct ? lo * expl(t) : expl(llo + t));
    }
    grid[0] = gap / CV_GRID_LO_DIV;
    grid[CV_GRID - 1] = (double)hi;
    /* expl's argument is off by a few ulps of its size */
    const long double size = direct ? span : fabsl(llo) + fabsl(lhi);
    return 2.0 * DBL_EPSILON + (double)(8.0L * LDBL_EPSILON * (size + 4.0L));
}

/* Pair distances xs[j] − xs[i] (j > i) only grow with j, rounding being
 * monotone: the first j in (i, n) with xs[j] − xs[i] >= t, or n. */
static size_t first_at_least(const double *xs, size_t n, size_t i, double t) {
    size_t lo = i + 1, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (xs[mid] - xs[i] >= t)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* The largest pair distance below h (*below, -1 when none) and the
 * smallest at or above it (*above, inf when none): a compact kernel has
 * the same pairs in its support for every h' in (below, above], so the
 * boxcar's error is the same there, the others' continuous in h'. */
static void edges_around(double *below, double *above, const double *xs,
                         size_t n, double h) {
    *below = -1.0;
    *above = INFINITY;
    for (size_t i = 0; i + 1 < n; i++) {
        size_t j = first_at_least(xs, n, i, h);
        if (j < n && xs[j] - xs[i] < *above)
            *above = xs[j] - xs[i];
        if (j - 1 > i && xs[j - 1] - xs[i] > *below)
            *below = xs[j - 1] - xs[i];
    }
}

/* The distinct pair distances in [lo, hi], ascending, the smallest max of
 * them; returns how many. */
static size_t distances_in(double *out, size_t max, const double *xs, size_t n,
                           double lo, double hi) {
    size_t m = 0;
    for (size_t i = 0; i + 1 < n; i++) {
        for (size_t j = first_at_least(xs, n, i, lo); j < n; j++) {
            double d = xs[j] - xs[i];
            if (d > hi)
                break;
            size_t at = 0;
            while (at < m && out[at] < d)
                at++;
            if ((at < m && out[at] == d) || at == max)
                continue;
            if (m == max)
                m--;
            memmove(out + at + 1, out + at, (m - at) * sizeof *out);
            out[at] = d;
            m++;
        }
    }
    return m;
}

/* A point of the plateau (below, above] at least 2·CV_EDGE_MARGIN·ref
 * from both ends, next to above when near_above, else next to below; its
 * middle when it is narrower than that. */
static double plateau_point(double below, double above, double ref,
                            int near_above) {
    const double m = 2.0 * CV_EDGE_MARGIN * ref;
    const double lo = below + m, hi = above - m;
    if (!(lo < hi))
        return below + (above - below) / 2.0;
    return near_above ? hi : lo;
}

/* The score of candidate g, and in *at the h it was taken at: g itself
 * unless a compact kernel has a pair distance within eps (relative) of g.
 * Such a distance may lie on the other side of g than of the contract's
 * exact point (g being rounded, as the distances are), and an h at it
 * depends on how u = d/h or the answer's w round: then each plateau of the
 * support that meets [g(1 − eps), g(1 + eps)] is scored instead, at a point
 * away from its ends (plateau_point), and the best taken (the first on
 * ties), while the search has extra evaluations left (*extra). */
static double grid_score(double *at, cv_search_t *cs, double g, double eps,
                         size_t *extra) {
    const double *xs = cs->sp->xs;
    double near[CV_EDGES_NEAR];
    size_t m = 0;
    *at = g;
    if (cs->kernel != ATTN_KERNEL_GAUSSIAN && g > 0.0 && isfinite(g) &&
        *extra > 0) {
        size_t max = *extra < CV_EDGES_NEAR ? *extra : CV_EDGES_NEAR;
        m = distances_in(near, max, xs, cs->n, g - g * eps, g + g * eps);
    }
    if (m == 0)
        return cv_score(cs, g);
    *extra -= m;
    double below, above, best = INFINITY;
    for (size_t e = 0; e <= m; e++) {
        double t;
        if (e == 0) { /* (largest distance < near[0], near[0]] */
            edges_around(&below, &above, xs, cs->n, near[0]);
            t = plateau_point(below, near[0], g, 1);
        } else if (e < m) {
            t = plateau_point(near[e - 1], near[e], g, 0);
        } else { /* (near[m - 1], smallest distance beyond it] */
            edges_around(&below, &above, xs, cs->n,
                         nextafter(near[m - 1], INFINITY));
            t = plateau_point(near[m - 1], above, g, 0);
        }
        double f = cv_score(cs, t);
        if (f < best) {
            best = f;
            *at = t;
        }
    }
    return best;
}

/* h moved off a plateau edge (compact kernels): when a pair distance is
 * within CV_EDGE_MARGIN·h of h, the support at h could differ from that at
 * 1/w or at the h a reader computes from w; h then moves to plateau_point
 * of its plateau, kept if its score is no worse than f (the boxcar's is
 * the same: the same pairs, the same sums). */
static double off_edge(cv_search_t *cs, double h, double f) {
    double below, above;
    edges_around(&below, &above, cs->sp->xs, cs->n, h);
    const double m = CV_EDGE_MARGIN * h;
    const int near_below = below >= 0.0 && h - below < m;
    const int near_above = above - h < m;
    if (!near_below && !near_above)
        return h;
    double t = plateau_point(below, above, h, near_above && !near_below);
    return cv_score(cs, t) <= f ? t : h;
}

/* The LOO-minimising h given x's smallest positive gap and its range;
 * +inf when no candidate is usable. */
static double cv_search(cv_search_t *cs, double gap, double range) {
    /* 1. 200 log-spaced candidates over [gap/20, 100·range]; the first
     *    smallest score wins ties. */
    double grid[CV_GRID];
    const double eps = cv_grid(grid, gap, range) + DBL_EPSILON;
    const int compact = cs->kernel != ATTN_KERNEL_GAUSSIAN;
    size_t best = 0, extra = compact ? CV_EDGE_EVALS : 0;
    double best_f = INFINITY, best_h = 0.0;
    for (size_t k = 0; k < CV_GRID; k++) {
        double at, f = grid_score(&at, cs, grid[k], eps, &extra);
        if (f < best_f) {
            best_f = f;
            best_h = at;
            best = k;
        }
    }
    if (!isfinite(best_f))
        return INFINITY;

    /* 2. Golden-section search between the best candidate's neighbours
     *    (those that are doubles) until the bracket is within CV_REL_TOL
     *    of its midpoint (at most 62 steps: widest bracket the doubles
     *    allow, minimum at its low end), or the evaluations run out (only
     *    after extra ones, and only for such brackets); the best h
     *    evaluated anywhere is kept. One evaluation is left for step 3. */
    const size_t last = CV_EVALS - (compact ? 1 : 0);
    const double invphi = (sqrt(5.0) - 1.0) / 2.0;
    double a = best > 0 && grid[best - 1] > 0.0 ? grid[best - 1] : grid[best];
    double b = best + 1 < CV_GRID && isfinite(grid[best + 1]) ? grid[best + 1]
                                                              : grid[best];
    double c = b - invphi * (b - a), d = a + invphi * (b - a);
    double fc = cv_score(cs, c);
    double fd = cv_score(cs, d);
    for (;;) {
        if (fc < best_f) {
            best_f = fc;
            best_h = c;
        }
        if (fd < best_f) {
            best_f = fd;
            best_h = d;
        }
        if (!(b - a > CV_REL_TOL * (0.5 * a + 0.5 * b)) || cs->evals >= last)
            break;
        if (fc <= fd) {
            b = d;
            d = c;
            fd = fc;
            c = b - invphi * (b - a);
            fc = cv_score(cs, c);
        } else {
            a = c;
            c = d;
            fc = fd;
            d = a + invphi * (b - a);
            fd = cv_score(cs, d);
        }
    }

    /* 3. the answer away from the support's edges */
    if (compact)
        best_h = off_edge(cs, best_h, best_f);
    return best_h;
}

/* The CV bandwidth: the pairs sorted and x scaled by 2^-e, up to unit
 * size when every |x| < 0.5 (tiny data is searched as at unit scale, its
 * candidates never subnormal), down below 2^1000 when some |x| is larger
 * (100·range < 2^1008: every candidate of the contract's grid is a double,
 * and no distance, nor the sum of two, overflows); the search; h scaled
 * back, inf or subnormal only when the answer is. The scaling is exact
 * (but for values 2^1022 times smaller than the largest) and leaves every
 * u = d/h, hence every score, as it is. */
static attn_status cv_bandwidth(double *bw, const double *x, const double *y,
                                attn_kernel kernel, double big, size_t n,
                                size_t dv) {
    int e;
    (void)frexp(big, &e); /* big in [2^(e-1), 2^e) */
    if (e > 1000)
        e -= 1000;
    else if (e > 0)
        e = 0;
    sorted_pairs sp;
    attn_status st = sort_pairs(&sp, x, y, n, dv, e);
    if (st != ATTN_OK)
        return st;
    double gap = INFINITY, range = sp.xs[n - 1] - sp.xs[0];
    for (size_t i = 1; i < n; i++) {
        double g = sp.xs[i] - sp.xs[i - 1];
        if (g > 0.0 && g < gap)
            gap = g;
    }
    cv_search_t cs = {&sp, kernel, n, dv, 0};
    *bw = ldexp(cv_search(&cs, gap, range), e);
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

    /* 1. x sorted: at least 2 distinct points */
    double *sorted = malloc(bytes);
    if (!sorted)
        return ATTN_E_NOMEM;
    memcpy(sorted, x_train, bytes);
    qsort(sorted, n, sizeof(double), cmp_double);

    /* 2. the rule */
    attn_status st = ATTN_OK;
    double bw = 0.0;
    if (!(sorted[n - 1] > sorted[0]))
        st = ATTN_E_TOO_FEW; /* fewer than 2 distinct points */
    else if (rule == ATTN_NW_BW_CV)
        st = cv_bandwidth(&bw, x_train, y_train, kernel,
                          fmax(fabs(sorted[0]), fabs(sorted[n - 1])), n, dv);
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
