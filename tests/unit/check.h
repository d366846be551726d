/*
 * check.h — numeric assertions shared by the unit tests (cmocka). Every
 * comparison states its tolerance; a failure reports the worst element,
 * its index and both values at the caller's file:line.
 */
#ifndef CHECK_H
#define CHECK_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>

/* The scaled difference |got − want| / max(1, |want|): relative for
 * |want| >= 1, absolute below. NaN or inf anywhere counts as infinite. */
static inline double check_diff(double got, double want) {
    double d = fabs(got - want) / fmax(1.0, fabs(want));
    return isnan(d) ? INFINITY : d;
}

/* Worst check_diff over n elements; *at gets its index. */
static inline double check_worst(const double *got, const double *want,
                                 size_t n, size_t *at) {
    double worst = 0.0;
    *at = 0;
    for (size_t i = 0; i < n; i++) {
        double d = check_diff(got[i], want[i]);
        if (d > worst) {
            worst = d;
            *at = i;
        }
    }
    return worst;
}

static inline void check_close(const double *got, const double *want, size_t n,
                               double tol, const char *what, const char *file,
                               int line) {
    size_t at;
    double worst = check_worst(got, want, n, &at);
    if (worst <= tol)
        return;
    print_error("%s: worst difference %.3g > tol %.3g at [%zu]: got %.17g, "
                "want %.17g\n",
                what, worst, tol, at, got[at], want[at]);
    _fail(file, line);
}

/* Every |got[i] − want[i]| <= tol · max(1, |want[i]|). */
#define assert_close(got, want, n, tol)                                        \
    check_close((got), (want), (n), (tol), #got, __FILE__, __LINE__)

/* One scalar, same rule. */
#define assert_near(got, want, tol)                                            \
    do {                                                                       \
        const double got_ = (got), want_ = (want);                             \
        check_close(&got_, &want_, 1, (tol), #got, __FILE__, __LINE__);        \
    } while (0)

#endif /* CHECK_H */
