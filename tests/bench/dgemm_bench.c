/*
 * dgemm_bench.c — the compute ceiling for attention: OpenBLAS dgemm
 * GFLOP/s at exactly the products scaled dot-product attention makes,
 * per batch example b (row-major, as lib/dot.c calls them):
 *   scores_b  (Nq, Nk) = Q_b (Nq, d) · K_bᵀ (d, Nk)
 *   out_b     (Nq, dv) = W_b (Nq, Nk) · V_b (Nk, dv)
 * so 2·B·Nq·Nk·(d + dv) floating-point operations per pass.
 *   usage: dgemm_bench B Nq Nk d dv THREADS [passes, default 30]
 * Prints one line: "dgemm B=.. threads=T median_ms=.. best_ms=..
 * gflops=.." (GFLOP/s from the median pass).
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double *filled(size_t n, unsigned seed) {
    double *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        x[i] = (double)(seed >> 8) / 16777216.0 - 0.5;
    }
    return x;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: dgemm_bench B Nq Nk d dv THREADS [passes]\n");
        return 2;
    }
    size_t B = strtoul(argv[1], NULL, 10), Nq = strtoul(argv[2], NULL, 10);
    size_t Nk = strtoul(argv[3], NULL, 10), d = strtoul(argv[4], NULL, 10);
    size_t dv = strtoul(argv[5], NULL, 10);
    int threads = atoi(argv[6]);
    int passes = argc > 7 ? atoi(argv[7]) : 30;
    if (passes < 1)
        passes = 30;
#ifdef OPENBLAS_VERSION
    openblas_set_num_threads(threads);
#endif
    double *q = filled(B * Nq * d, 1), *k = filled(B * Nk * d, 2);
    double *v = filled(B * Nk * dv, 3), *s = filled(B * Nq * Nk, 4);
    double *out = filled(B * Nq * dv, 5);
    double *ms = malloc((size_t)passes * sizeof *ms);
    for (int p = -2; p < passes; p++) { /* two warm-up passes */
        double t0 = now_ms();
        for (size_t b = 0; b < B; b++) {
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)Nq,
                        (int)Nk, (int)d, 1.0, q + b * Nq * d, (int)d,
                        k + b * Nk * d, (int)d, 0.0, s + b * Nq * Nk, (int)Nk);
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)Nq,
                        (int)dv, (int)Nk, 1.0, s + b * Nq * Nk, (int)Nk,
                        v + b * Nk * dv, (int)dv, 0.0, out + b * Nq * dv,
                        (int)dv);
        }
        if (p >= 0)
            ms[p] = now_ms() - t0;
    }
    qsort(ms, (size_t)passes, sizeof *ms, cmp_double);
    double flop = 2.0 * (double)B * (double)Nq * (double)Nk * (double)(d + dv);
    double median = ms[passes / 2];
    printf("dgemm B=%zu Nq=%zu Nk=%zu d=%zu dv=%zu threads=%d median_ms=%.3f "
           "best_ms=%.3f gflops=%.2f\n",
           B, Nq, Nk, d, dv, threads, median, ms[0], flop / median / 1e6);
    free(q);
    free(k);
    free(v);
    free(s);
    free(out);
    free(ms);
    return 0;
}
