/*
 * compute_bench.c — what attnd's compute phase for dot attention is made
 * of, in-process: attn_dot_forward (what Server-Timing reports) against
 * its two dgemm products alone and attn_softmax_masked alone, on the same
 * buffers in one run.
 *   usage: compute_bench B Nq Nk d dv THREADS [passes, default 20]
 * Prints the median milliseconds of each, the GFLOP/s of the forward pass
 * and of the products (2·B·Nq·Nk·(d + dv) operations), and the share the
 * softmax takes.
 */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "attn.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *ms, int n) {
    qsort(ms, (size_t)n, sizeof *ms, cmp_double);
    return ms[n / 2];
}

static double *gaussian(size_t n, unsigned seed) {
    double *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++) {
        double u = 0;
        for (int k = 0; k < 12; k++) { /* Irwin–Hall: close to N(0, 1) */
            seed = seed * 1103515245u + 12345u;
            u += (double)(seed >> 8) / 16777216.0;
        }
        x[i] = u - 6.0;
    }
    return x;
}

int main(int argc, char **argv) {
    if (argc < 7) {
        fprintf(stderr, "usage: compute_bench B Nq Nk d dv THREADS [passes]\n");
        return 2;
    }
    size_t B = strtoul(argv[1], NULL, 10), Nq = strtoul(argv[2], NULL, 10);
    size_t Nk = strtoul(argv[3], NULL, 10), d = strtoul(argv[4], NULL, 10);
    size_t dv = strtoul(argv[5], NULL, 10);
    int threads = atoi(argv[6]);
    int passes = argc > 7 ? atoi(argv[7]) : 20;
    if (passes < 1)
        passes = 20;
#ifdef OPENBLAS_VERSION
    openblas_set_num_threads(threads);
#endif
    double *q = gaussian(B * Nq * d, 1), *k = gaussian(B * Nk * d, 2);
    double *v = gaussian(B * Nk * dv, 3);
    double *s = malloc(B * Nq * Nk * sizeof *s);
    double *w = malloc(B * Nq * Nk * sizeof *w);
    double *out = malloc(B * Nq * dv * sizeof *out);
    double *fwd = malloc((size_t)passes * sizeof *fwd);
    double *gemm = malloc((size_t)passes * sizeof *gemm);
    double *soft = malloc((size_t)passes * sizeof *soft);
    double scale = 1.0 / sqrt((double)d);
    attn_mask mask = {0};
    for (int p = -2; p < passes; p++) {
        attn_fault fault;
        double t0 = now_ms();
        attn_status st = attn_dot_forward(out, w, NULL, q, k, v, &mask, scale,
                                          B, Nq, Nk, d, dv, &fault);
        double t1 = now_ms();
        for (size_t b = 0; b < B; b++) {
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)Nq,
                        (int)Nk, (int)d, scale, q + b * Nq * d, (int)d,
                        k + b * Nk * d, (int)d, 0.0, s + b * Nq * Nk, (int)Nk);
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)Nq,
                        (int)dv, (int)Nk, 1.0, w + b * Nq * Nk, (int)Nk,
                        v + b * Nk * dv, (int)dv, 0.0, out + b * Nq * dv,
                        (int)dv);
        }
        double t2 = now_ms();
        attn_softmax_masked(w, s, &mask, B, Nq, Nk, &fault);
        double t3 = now_ms();
        if (st != ATTN_OK) {
            fprintf(stderr, "attn_dot_forward: %s\n", attn_status_str(st));
            return 1;
        }
        if (p >= 0) {
            fwd[p] = t1 - t0;
            gemm[p] = t2 - t1;
            soft[p] = t3 - t2;
        }
    }
    double flop = 2.0 * (double)B * (double)Nq * (double)Nk * (double)(d + dv);
    double f = median(fwd, passes), g = median(gemm, passes);
    double sm = median(soft, passes);
    printf("compute B=%zu Nq=%zu Nk=%zu d=%zu dv=%zu threads=%d "
           "forward_ms=%.3f dgemm_ms=%.3f softmax_ms=%.3f forward_gflops=%.2f "
           "dgemm_gflops=%.2f softmax_share=%.0f%%\n",
           B, Nq, Nk, d, dv, threads, f, g, sm, flop / f / 1e6, flop / g / 1e6,
           100 * sm / f);
    return 0;
}
