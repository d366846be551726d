/*
 * test_transformer.c — the Transformer stacks of lib/transformer*.c:
 * a post-norm layer's output rows are normalised, the seeded parameters
 * follow PyTorch's initial ranges, the backward pass of encoder and
 * decoder stacks (post-norm and norm_first, ReLU and GELU) against
 * central finite differences of the forward pass, and errors. Parity with
 * PyTorch itself is tests/torch/parity.py's.
 */
#include "check.h"

#include "attn.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A stack's parameters drawn from seed, laid out for attn_xf_forward. */
typedef struct {
    attn_xf_config cfg;
    double *buf, *gbuf, *tape_buf;
    double *p[4 * ATTN_XF_N_PARAMS], *g[4 * ATTN_XF_N_PARAMS];
    attn_xf_tape tape;
} stack;

static void stack_make(stack *s, const attn_xf_config *cfg, uint64_t seed) {
    memset(s, 0, sizeof *s);
    s->cfg = *cfg;
    size_t total = 0;
    for (size_t l = 0; l < cfg->L; l++)
        for (int t = 0; t < ATTN_XF_N_PARAMS; t++)
            if (attn_xf_param_used((attn_xf_param)t, cfg->decoder)) {
                size_t d[2], r;
                attn_xf_param_shape((attn_xf_param)t, cfg->E, cfg->F, d, &r);
                total += d[0] * d[1];
            }
    s->buf = malloc(total * sizeof(double));
    s->gbuf = malloc(total * sizeof(double));
    size_t at = 0;
    for (size_t l = 0; l < cfg->L; l++)
        for (int t = 0; t < ATTN_XF_N_PARAMS; t++)
            if (attn_xf_param_used((attn_xf_param)t, cfg->decoder)) {
                size_t d[2], r;
                attn_xf_param_shape((attn_xf_param)t, cfg->E, cfg->F, d, &r);
                s->p[l * ATTN_XF_N_PARAMS + t] = s->buf + at;
                s->g[l * ATTN_XF_N_PARAMS + t] = s->gbuf + at;
                at += d[0] * d[1];
            }
    attn_rng rng;
    attn_rng_seed(&rng, seed);
    assert_int_equal(attn_xf_init(s->p, &rng, cfg), ATTN_OK);
    /* norms and biases away from 1 and 0, so that every term counts */
    for (size_t i = 0; i < total; i++)
        s->buf[i] += 0.1 * sin(3.7 * (double)i);
    size_t n;
    assert_int_equal(attn_xf_tape_size(&n, cfg), ATTN_OK);
    s->tape_buf = malloc(n * sizeof(double));
    attn_xf_tape_layout(&s->tape, s->tape_buf, cfg);
}

static void stack_free(stack *s) {
    free(s->buf);
    free(s->gbuf);
    free(s->tape_buf);
}

/* Σ out ⊙ w of the stack on x (and memory). */
static double loss_of(stack *s, const double *x, const double *mem,
                      const double *w, const attn_mask *self) {
    size_t re = s->cfg.B * s->cfg.N * s->cfg.E;
    double *out = malloc(re * sizeof(double));
    assert_int_equal(attn_xf_forward(out, &s->tape, x, mem,
                                     (const double *const *)s->p, &s->cfg, self,
                                     NULL, NULL),
                     ATTN_OK);
    double l = 0.0;
    for (size_t i = 0; i < re; i++)
        l += out[i] * w[i];
    free(out);
    return l;
}

/* One layer, post-norm, norms weight 1 and bias 0: every output row has
 * mean 0 and biased variance var / (var + eps), just under 1. */
static void test_post_norm_rows(void **state) {
    (void)state;
    attn_xf_config cfg = {0, 1, 2, 3, 0, 4, 2, 6, 0, 1e-5, ATTN_ACTIVATION_RELU,
                          0};
    stack s;
    stack_make(&s, &cfg, 11);
    for (size_t k = 0; k < 2; k++) {
        for (size_t c = 0; c < 4; c++) {
            s.p[ATTN_XF_NORM1_W + 2 * k][c] = 1.0;
            s.p[ATTN_XF_NORM1_B + 2 * k][c] = 0.0;
        }
    }
    double x[24], out[24];
    for (size_t i = 0; i < 24; i++)
        x[i] = cos((double)i);
    assert_int_equal(attn_xf_forward(out, &s.tape, x, NULL,
                                     (const double *const *)s.p, &cfg, NULL,
                                     NULL, NULL),
                     ATTN_OK);
    for (size_t r = 0; r < 6; r++) {
        double m = 0, v = 0;
        for (size_t c = 0; c < 4; c++)
            m += out[r * 4 + c] / 4;
        for (size_t c = 0; c < 4; c++)
            v += (out[r * 4 + c] - m) * (out[r * 4 + c] - m) / 4;
        assert_near(m, 0.0, 1e-15);
        assert_true(v < 1.0 && v > 1.0 - 1e-3);
    }
    /* the weights of each head are rows of a softmax */
    for (size_t row = 0; row < 2 * 2 * 3; row++) {
        double sum = 0;
        for (size_t j = 0; j < 3; j++)
            sum += s.tape.weights[0][row * 3 + j];
        assert_near(sum, 1.0, 1e-15);
    }
    stack_free(&s);
}

/* attn_xf_init: PyTorch's ranges, constants for the norms and the
 * attention biases. */
static void test_init_ranges(void **state) {
    (void)state;
    attn_xf_config cfg = {1, 2, 1, 2, 2, 8, 2, 5, 0, 1e-5, ATTN_ACTIVATION_RELU,
                          0};
    stack s;
    memset(&s, 0, sizeof s);
    double *bufs[2 * ATTN_XF_N_PARAMS];
    for (size_t i = 0; i < 2 * ATTN_XF_N_PARAMS; i++) {
        bufs[i] = malloc(24 * 8 * sizeof(double));
        s.p[i] = bufs[i];
    }
    attn_rng rng;
    attn_rng_seed(&rng, 3);
    assert_int_equal(attn_xf_init(s.p, &rng, &cfg), ATTN_OK);
    const double a_in = sqrt(6.0 / 32.0), a_e = 1 / sqrt(8.0),
                 a_f = 1 / sqrt(5.0);
    for (size_t l = 0; l < 2; l++) {
        double *const *p = s.p + l * ATTN_XF_N_PARAMS;
        for (size_t i = 0; i < 24 * 8; i++) {
            assert_true(fabs(p[ATTN_XF_SA_IN_W][i]) <= a_in);
            assert_true(fabs(p[ATTN_XF_CA_IN_W][i]) <= a_in);
        }
        for (size_t i = 0; i < 24; i++)
            assert_true(p[ATTN_XF_SA_IN_B][i] == 0.0);
        for (size_t i = 0; i < 64; i++)
            assert_true(fabs(p[ATTN_XF_SA_OUT_W][i]) <= a_e);
        for (size_t i = 0; i < 40; i++) {
            assert_true(fabs(p[ATTN_XF_LIN1_W][i]) <= a_e);
            assert_true(fabs(p[ATTN_XF_LIN2_W][i]) <= a_f);
        }
        for (size_t c = 0; c < 8; c++) {
            assert_true(p[ATTN_XF_NORM3_W][c] == 1.0);
            assert_true(p[ATTN_XF_NORM3_B][c] == 0.0);
            assert_true(p[ATTN_XF_SA_OUT_B][c] == 0.0);
        }
    }
    /* the layers are drawn one after the other: they differ */
    assert_true(s.p[ATTN_XF_SA_IN_W][0] !=
                s.p[ATTN_XF_N_PARAMS + ATTN_XF_SA_IN_W][0]);
    for (size_t i = 0; i < 2 * ATTN_XF_N_PARAMS; i++)
        free(bufs[i]);
}

/* Gradients of Σ out ⊙ w against central differences (h = 1e-6, 1e-7
 * relative to max(1, |grad|)) for every input entry and a stride of
 * parameter entries. */
static void check_backward(const attn_xf_config *cfg) {
    stack s;
    stack_make(&s, cfg, 5);
    const size_t re = cfg->B * cfg->N * cfg->E;
    const size_t rm = cfg->B * cfg->S_mem * cfg->E;
    double *x = malloc(re * sizeof(double)), *w = malloc(re * sizeof(double));
    double *mem = rm ? malloc(rm * sizeof(double)) : NULL;
    double *gx = malloc(re * sizeof(double));
    double *gm = rm ? malloc(rm * sizeof(double)) : NULL;
    for (size_t i = 0; i < re; i++) {
        x[i] = sin(1.3 * (double)i + 0.2);
        w[i] = cos(0.7 * (double)i);
    }
    for (size_t i = 0; i < rm; i++)
        mem[i] = cos(2.3 * (double)i);
    attn_mask causal = {0};
    causal.causal = ATTN_CAUSAL_TOP_LEFT;
    const attn_mask *self = cfg->decoder ? &causal : NULL;
    size_t n = 0;
    assert_int_equal(attn_xf_forward(gx, &s.tape, x, mem,
                                     (const double *const *)s.p, cfg, self,
                                     NULL, NULL),
                     ATTN_OK);
    assert_int_equal(attn_xf_backward(gx, gm, s.g, w, &s.tape, x, mem,
                                      (const double *const *)s.p, cfg, self,
                                      NULL, NULL),
                     ATTN_OK);
    const double h = 1e-6;
    for (size_t i = 0; i < re; i++, n++) {
        double keep = x[i];
        x[i] = keep + h;
        double lp = loss_of(&s, x, mem, w, self);
        x[i] = keep - h;
        double lm = loss_of(&s, x, mem, w, self);
        x[i] = keep;
        assert_near(gx[i], (lp - lm) / (2 * h), 1e-7);
    }
    for (size_t i = 0; i < rm; i++, n++) {
        double keep = mem[i];
        mem[i] = keep + h;
        double lp = loss_of(&s, x, mem, w, self);
        mem[i] = keep - h;
        double lm = loss_of(&s, x, mem, w, self);
        mem[i] = keep;
        assert_near(gm[i], (lp - lm) / (2 * h), 1e-7);
    }
    for (size_t l = 0; l < cfg->L; l++)
        for (int t = 0; t < ATTN_XF_N_PARAMS; t++) {
            double *p = s.p[l * ATTN_XF_N_PARAMS + t];
            double *g = s.g[l * ATTN_XF_N_PARAMS + t];
            if (!p)
                continue;
            size_t d[2], r;
            attn_xf_param_shape((attn_xf_param)t, cfg->E, cfg->F, d, &r);
            for (size_t i = 0; i < d[0] * d[1]; i += 3, n++) {
                double keep = p[i];
                p[i] = keep + h;
                double lp = loss_of(&s, x, mem, w, self);
                p[i] = keep - h;
                double lm = loss_of(&s, x, mem, w, self);
                p[i] = keep;
                assert_near(g[i], (lp - lm) / (2 * h), 1e-7);
            }
        }
    assert_true(n > 100);
    free(x);
    free(w);
    free(mem);
    free(gx);
    free(gm);
    stack_free(&s);
}

static void test_backward_encoder(void **state) {
    (void)state;
    for (int nf = 0; nf < 2; nf++) {
        attn_xf_config cfg = {0,
                              2,
                              2,
                              3,
                              0,
                              4,
                              2,
                              5,
                              nf,
                              1e-5,
                              nf ? ATTN_ACTIVATION_GELU : ATTN_ACTIVATION_RELU,
                              0};
        check_backward(&cfg);
    }
}

static void test_backward_decoder(void **state) {
    (void)state;
    for (int nf = 0; nf < 2; nf++) {
        attn_xf_config cfg = {1,
                              2,
                              2,
                              3,
                              4,
                              4,
                              2,
                              5,
                              nf,
                              1e-5,
                              nf ? ATTN_ACTIVATION_RELU : ATTN_ACTIVATION_GELU,
                              0};
        check_backward(&cfg);
    }
}

static void test_errors(void **state) {
    (void)state;
    attn_xf_config cfg = {0, 1, 1, 2, 0, 4, 2, 3, 0, 1e-5, ATTN_ACTIVATION_RELU,
                          0};
    stack s;
    stack_make(&s, &cfg, 1);
    double x[8] = {0}, out[8];
    const double *const *p = (const double *const *)s.p;
    attn_xf_config bad = cfg;
    bad.H = 3; /* does not divide E = 4 */
    assert_int_equal(
        attn_xf_forward(out, &s.tape, x, NULL, p, &bad, NULL, NULL, NULL),
        ATTN_E_INVALID_ARG);
    bad = cfg;
    bad.eps = -1;
    assert_int_equal(
        attn_xf_forward(out, &s.tape, x, NULL, p, &bad, NULL, NULL, NULL),
        ATTN_E_INVALID_ARG);
    bad = cfg;
    bad.decoder = 1; /* no memory, no cross-attention parameters */
    bad.S_mem = 2;
    assert_int_equal(
        attn_xf_forward(out, &s.tape, x, NULL, p, &bad, NULL, NULL, NULL),
        ATTN_E_INVALID_ARG);
    bad = cfg;
    bad.L = SIZE_MAX / 2;
    size_t n;
    assert_int_equal(attn_xf_tape_size(&n, &bad), ATTN_E_OVERFLOW);
    double *keep = s.p[ATTN_XF_LIN2_B];
    s.p[ATTN_XF_LIN2_B] = NULL;
    assert_int_equal(
        attn_xf_forward(out, &s.tape, x, NULL, p, &cfg, NULL, NULL, NULL),
        ATTN_E_INVALID_ARG);
    s.p[ATTN_XF_LIN2_B] = keep;
    /* an overflowing input is named by its layer */
    x[0] = 1e308;
    x[1] = -1e308;
    attn_fault f;
    attn_status st =
        attn_xf_forward(out, &s.tape, x, NULL, p, &cfg, NULL, NULL, &f);
    assert_int_equal(st, ATTN_E_NONFINITE);
    assert_int_equal(f.index, 0);
    stack_free(&s);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_post_norm_rows),
        cmocka_unit_test(test_init_ranges),
        cmocka_unit_test(test_backward_encoder),
        cmocka_unit_test(test_backward_decoder),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
