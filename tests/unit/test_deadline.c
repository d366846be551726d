/*
 * test_deadline.c — the calling thread's time limit (attn.h "deadline"):
 * once it has passed, additive attention (its scores on several threads
 * and its backward pass), multi-head attention and Nadaraya–Watson
 * prediction and fitting, and a seeded Transformer's drawing, return
 * ATTN_E_DEADLINE; cleared, the same calls
 * succeed; a deadline in the future changes nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "attn.h"

enum { B = 2, NQ = 64, NK = 64, D = 4, DV = 3, H = 32 };

static double *filled(size_t n, double step) {
    double *x = malloc(n * sizeof *x);
    for (size_t i = 0; i < n; i++)
        x[i] = 0.01 * (double)(i % 17) * step - 0.05;
    return x;
}

static attn_status additive_limited(double deadline) {
    double *q = filled(B * NQ * D, 1), *k = filled(B * NK * D, 2),
           *v = filled(B * NK * DV, 3), *Wq = filled(H * D, 4),
           *Wk = filled(H * D, 5), *wv = filled(H, 6);
    double *out = malloc(B * NQ * DV * sizeof *out),
           *w = malloc(B * NQ * NK * sizeof *w);
    attn_deadline_set(deadline);
    attn_status st = attn_additive_forward(out, w, NULL, q, k, v, Wq, Wk, wv,
                                           NULL, B, NQ, NK, D, D, DV, H, NULL);
    free(q), free(k), free(v), free(Wq), free(Wk), free(wv), free(out);
    free(w);
    attn_deadline_set(0);
    return st;
}

static attn_status additive_backward_limited(double deadline) {
    double *q = filled(B * NQ * D, 1), *k = filled(B * NK * D, 2),
           *v = filled(B * NK * DV, 3), *Wq = filled(H * D, 4),
           *Wk = filled(H * D, 5), *wv = filled(H, 6),
           *go = filled(B * NQ * DV, 7);
    double *out = malloc(B * NQ * DV * sizeof *out),
           *w = malloc(B * NQ * NK * sizeof *w);
    attn_status st = attn_additive_forward(out, w, NULL, q, k, v, Wq, Wk, wv,
                                           NULL, B, NQ, NK, D, D, DV, H, NULL);
    assert_int_equal(st, ATTN_OK);
    double *gq = malloc(B * NQ * D * sizeof *gq),
           *gk = malloc(B * NK * D * sizeof *gk),
           *gv = malloc(B * NK * DV * sizeof *gv),
           *gWq = malloc(H * D * sizeof *gWq),
           *gWk = malloc(H * D * sizeof *gWk), *gwv = malloc(H * sizeof *gwv);
    attn_deadline_set(deadline);
    st = attn_additive_backward(gq, gk, gv, gWq, gWk, gwv, go, w, q, k, v, Wq,
                                Wk, wv, NULL, B, NQ, NK, D, D, DV, H, NULL);
    attn_deadline_set(0);
    free(q), free(k), free(v), free(Wq), free(Wk), free(wv), free(go);
    free(out), free(w), free(gq), free(gk), free(gv), free(gWq), free(gWk);
    free(gwv);
    return st;
}

static attn_status multihead_limited(double deadline) {
    enum { HEADS = 4, DOUT = 5 };
    double *q = filled(B * NQ * D, 1), *k = filled(B * NK * D, 2),
           *v = filled(B * NK * DV, 3);
    attn_multihead_params p = {filled(H * D, 4),
                               filled(H * D, 5),
                               filled(H * DV, 6),
                               filled(DOUT * H, 7),
                               NULL,
                               NULL,
                               NULL,
                               NULL};
    double *out = malloc(B * NQ * DOUT * sizeof *out),
           *w = malloc(B * HEADS * NQ * NK * sizeof *w);
    attn_deadline_set(deadline);
    attn_status st =
        attn_multihead_forward(out, w, NULL, q, k, v, &p, NULL, B, NQ, NK, D, D,
                               DV, H, HEADS, DOUT, NULL);
    attn_deadline_set(0);
    free(q), free(k), free(v), free(out), free(w);
    free((void *)p.W_q), free((void *)p.W_k), free((void *)p.W_v);
    free((void *)p.W_o);
    return st;
}

static attn_status nw_limited(double deadline) {
    enum { M = 50, N = 80 };
    double *xq = filled(M, 1), *xt = filled(N, 2), *yt = filled(N, 3);
    double *pred = malloc(M * sizeof *pred), *w = malloc(M * N * sizeof *w);
    attn_deadline_set(deadline);
    attn_status st = attn_nw_predict(pred, w, xq, xt, yt, ATTN_KERNEL_GAUSSIAN,
                                     1.0, M, N, 1, NULL);
    attn_deadline_set(0);
    free(xq), free(xt), free(yt), free(pred), free(w);
    return st;
}

/* Additive attention of one query and one key with h = 2^23 hidden
 * units: nearly all its time is the projections (2^23 rows of W_q and of
 * W_k) and their exponentials, a few hundred ms, none of it in the loop
 * over query rows. A deadline 20 ms ahead stops it inside those steps:
 * the seconds the call takes, which is about its whole length without
 * the checks there. */
static double additive_wide_seconds(double ahead) {
    const size_t h = (size_t)1 << 23;
    double q = 0.5, k = -0.25, v = 1.0, out, w;
    double *Wq = filled(h, 4), *Wk = filled(h, 5), *wv = filled(h, 6);
    double t0 = attn_clock_seconds();
    attn_deadline_set(ahead > 0 ? t0 + ahead : 0);
    attn_status st = attn_additive_forward(&out, &w, NULL, &q, &k, &v, Wq, Wk,
                                           wv, NULL, 1, 1, 1, 1, 1, 1, h, NULL);
    double took = attn_clock_seconds() - t0;
    attn_deadline_set(0);
    free(Wq), free(Wk), free(wv);
    assert_int_equal(st, ahead > 0 ? ATTN_E_DEADLINE : ATTN_OK);
    return took;
}

static void test_a_deadline_stops_the_projections(void **state) {
    (void)state;
    double whole = additive_wide_seconds(0);
    double stopped = additive_wide_seconds(0.02);
    print_message("# h = 2^23: %.0f ms whole, %.0f ms with a deadline 20 ms "
                  "ahead\n",
                  1e3 * whole, 1e3 * stopped);
    assert_true(stopped < 0.02 + 0.5 * (whole - 0.02));
}

/* A seeded Transformer's parameters drawn (attn_xf_init): 2 encoder
 * layers of E = 8, F = 16. */
static attn_status xf_init_limited(double deadline) {
    attn_xf_config cfg = {.L = 2,
                          .B = 1,
                          .N = 2,
                          .E = 8,
                          .H = 2,
                          .F = 16,
                          .eps = 1e-5,
                          .activation = ATTN_ACTIVATION_RELU};
    double *p[2 * ATTN_XF_N_PARAMS] = {0};
    for (size_t l = 0; l < cfg.L; l++)
        for (int t = 0; t < ATTN_XF_N_PARAMS; t++)
            if (attn_xf_param_used((attn_xf_param)t, 0)) {
                size_t d[2], r;
                attn_xf_param_shape((attn_xf_param)t, cfg.E, cfg.F, d, &r);
                p[l * ATTN_XF_N_PARAMS + t] =
                    malloc(d[0] * d[1] * sizeof(double));
            }
    attn_rng rng;
    attn_rng_seed(&rng, 7);
    attn_deadline_set(deadline);
    attn_status st = attn_xf_init(p, &rng, &cfg);
    attn_deadline_set(0);
    for (size_t i = 0; i < 2 * ATTN_XF_N_PARAMS; i++)
        free(p[i]);
    return st;
}

/* 1 s after the clock's origin: long past. */
#define PAST 1.0

static void test_a_passed_deadline_stops_the_call(void **state) {
    (void)state;
    assert_int_equal(additive_limited(PAST), ATTN_E_DEADLINE);
    assert_int_equal(additive_backward_limited(PAST), ATTN_E_DEADLINE);
    assert_int_equal(multihead_limited(PAST), ATTN_E_DEADLINE);
    assert_int_equal(nw_limited(PAST), ATTN_E_DEADLINE);
    assert_int_equal(xf_init_limited(PAST), ATTN_E_DEADLINE);
}

static void test_no_deadline_or_a_later_one_changes_nothing(void **state) {
    (void)state;
    double later = attn_clock_seconds() + 3600;
    assert_int_equal(additive_limited(0), ATTN_OK);
    assert_int_equal(additive_limited(later), ATTN_OK);
    assert_int_equal(additive_backward_limited(later), ATTN_OK);
    assert_int_equal(multihead_limited(later), ATTN_OK);
    assert_int_equal(nw_limited(later), ATTN_OK);
    assert_int_equal(xf_init_limited(later), ATTN_OK);
    assert_string_equal(attn_status_str(ATTN_E_DEADLINE),
                        "the time limit passed");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_passed_deadline_stops_the_call),
        cmocka_unit_test(test_no_deadline_or_a_later_one_changes_nothing),
        cmocka_unit_test(test_a_deadline_stops_the_projections),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
