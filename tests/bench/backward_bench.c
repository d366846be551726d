/*
 * backward_bench.c — compute time of attn_dot_backward against
 * attn_dot_forward at B = 4, Nq = Nk = 256, d = dv = 64 (valid_lens (B)
 * of 256, 200, 128, 64, so the masked paths run too). Prints the median of
 * each over many repetitions and the backward / forward ratio; the budget is
 * a ratio of at most 3. A measurement, not a test: it always exits 0 unless
 * a call fails.
 *   usage: backward_bench [repetitions]   (default 200)
 */
#include "attn.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { B = 4, NQ = 256, NK = 256, D = 64, DV = 64 };

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, size_t n) {
    qsort(t, n, sizeof *t, cmp_double);
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
}

int main(int argc, char **argv) {
    size_t reps = argc > 1 ? (size_t)strtoul(argv[1], NULL, 10) : 200;
    if (reps == 0)
        reps = 1;
    double *q = malloc(sizeof(double) * B * NQ * D);
    double *k = malloc(sizeof(double) * B * NK * D);
    double *v = malloc(sizeof(double) * B * NK * DV);
    double *dO = malloc(sizeof(double) * B * NQ * DV);
    double *out = malloc(sizeof(double) * B * NQ * DV);
    double *w = malloc(sizeof(double) * B * NQ * NK);
    double *gq = malloc(sizeof(double) * B * NQ * D);
    double *gk = malloc(sizeof(double) * B * NK * D);
    double *gv = malloc(sizeof(double) * B * NK * DV);
    double *t_fwd = malloc(sizeof(double) * reps);
    double *t_bwd = malloc(sizeof(double) * reps);
    if (!q || !k || !v || !dO || !out || !w || !gq || !gk || !gv || !t_fwd ||
        !t_bwd) {
        fprintf(stderr, "backward_bench: out of memory\n");
        return 1;
    }
    attn_rng rng;
    attn_rng_seed(&rng, 7);
    attn_rng_normals(&rng, q, B * NQ * D);
    attn_rng_normals(&rng, k, B * NK * D);
    attn_rng_normals(&rng, v, B * NK * DV);
    attn_rng_normals(&rng, dO, B * NQ * DV);
    const int64_t lens[B] = {256, 200, 128, 64};
    const attn_mask mask = {.valid_lens = lens,
                            .per_query = 0,
                            .causal = ATTN_CAUSAL_NONE,
                            .fully_masked = ATTN_FULLY_MASKED_ZERO};
    const double scale = attn_dot_default_scale(D);

    for (size_t r = 0; r < reps + 5; r++) { /* 5 warm-up rounds */
        double t0 = now_ms();
        attn_status st = attn_dot_forward(out, w, NULL, q, k, v, &mask, scale,
                                          B, NQ, NK, D, DV, NULL);
        double t1 = now_ms();
        if (st == ATTN_OK)
            st = attn_dot_backward(gq, gk, gv, dO, w, q, k, v, &mask, scale, B,
                                   NQ, NK, D, DV, NULL);
        double t2 = now_ms();
        if (st != ATTN_OK) {
            fprintf(stderr, "backward_bench: %s\n", attn_status_str(st));
            return 1;
        }
        if (r >= 5) {
            t_fwd[r - 5] = t1 - t0;
            t_bwd[r - 5] = t2 - t1;
        }
    }
    double f = median(t_fwd, reps), b = median(t_bwd, reps);
    printf("dot attention B=%d Nq=%d Nk=%d d=%d dv=%d, %zu repetitions "
           "(median)\n",
           B, NQ, NK, D, DV, reps);
    printf("  forward  %8.3f ms\n  backward %8.3f ms\n", f, b);
    printf("  backward/forward ratio %.2f (budget <= 3: %s)\n", b / f,
           b / f <= 3.0 ? "within" : "OVER");

    free(q), free(k), free(v), free(dO), free(out), free(w);
    free(gq), free(gk), free(gv), free(t_fwd), free(t_bwd);
    return 0;
}
