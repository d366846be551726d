/*
 * dataset.c — the synthetic regression data of d2l 11.2.1 ("Generating the
 * Dataset"): y = 2 sin(x) + x^0.8 + noise, drawn from the library's own
 * generator so every seed gives the same numbers everywhere (docs/contract.md
 * section 5).
 */
#include "attn.h"

#include <math.h>
#include <stdlib.h>

static double truth(double x) {
    return 2.0 * sin(x) + pow(x, 0.8);
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

attn_status attn_nw_dataset(double *x_train, double *y_train, double *x_test,
                            double *y_truth, size_t n_train, double noise,
                            uint64_t seed) {
    if (!x_train || !y_train || !x_test || !y_truth || n_train == 0)
        return ATTN_E_INVALID_ARG;
    if (!isfinite(noise) || noise < 0.0)
        return ATTN_E_INVALID_ARG;
    attn_rng rng;
    attn_rng_seed(&rng, seed);
    /* 1. x = 5u in draw order, then sorted ascending */
    for (size_t i = 0; i < n_train; i++)
        x_train[i] = 5.0 * attn_rng_uniform(&rng);
    qsort(x_train, n_train, sizeof *x_train, cmp_double);
    /* 2. n_train normals z, then y = f(x) + noise·z */
    attn_rng_normals(&rng, y_train, n_train);
    for (size_t i = 0; i < n_train; i++)
        y_train[i] = truth(x_train[i]) + noise * y_train[i];
    /* 3. the test grid x = 0, 0.1, ..., 4.9 and its noiseless targets */
    for (size_t i = 0; i < ATTN_NW_DATASET_TEST; i++) {
        x_test[i] = (double)i / 10.0;
        y_truth[i] = truth(x_test[i]);
    }
    return ATTN_OK;
}
