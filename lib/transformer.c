/*
 * transformer.c — the Transformer's encoder and decoder layers and their
 * stacks (Vaswani et al. 2017; d2l 11.7 "The Transformer Architecture"),
 * forwarded as PyTorch 1.13's nn.TransformerEncoderLayer and
 * nn.TransformerDecoderLayer do with dropout 0: multi-head attention
 * (multihead.c) and the position-wise feed-forward network, each with a
 * residual connection and layer normalisation (layer_norm.c), after the
 * sublayer (post-norm) or before it (norm_first). Also the tape the
 * backward pass reads, PyTorch's initial distributions and d2l's
 * positional encoding of the input.
 */
#include "attn_internal.h"
#include "transformer_internal.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

int attn_xf_param_used(attn_xf_param t, int decoder) {
    if (t >= ATTN_XF_N_PARAMS)
        return 0;
    if (decoder)
        return 1;
    return !(t >= ATTN_XF_CA_IN_W && t <= ATTN_XF_CA_OUT_B) &&
           t != ATTN_XF_NORM3_W && t != ATTN_XF_NORM3_B;
}

void attn_xf_param_shape(attn_xf_param t, size_t E, size_t F, size_t dims[2],
                         size_t *rank) {
    *rank = 1;
    dims[1] = 1;
    switch (t) {
    case ATTN_XF_SA_IN_W:
    case ATTN_XF_CA_IN_W:
        *rank = 2;
        dims[0] = 3 * E;
        dims[1] = E;
        return;
    case ATTN_XF_SA_IN_B:
    case ATTN_XF_CA_IN_B:
        dims[0] = 3 * E;
        return;
    case ATTN_XF_SA_OUT_W:
    case ATTN_XF_CA_OUT_W:
        *rank = 2;
        dims[0] = E;
        dims[1] = E;
        return;
    case ATTN_XF_LIN1_W:
        *rank = 2;
        dims[0] = F;
        dims[1] = E;
        return;
    case ATTN_XF_LIN1_B:
        dims[0] = F;
        return;
    case ATTN_XF_LIN2_W:
        *rank = 2;
        dims[0] = E;
        dims[1] = F;
        return;
    default: /* out_proj.bias, linear2.bias, the norms */
        dims[0] = E;
        return;
    }
}

/* Blocks per layer. */
static size_t blocks(const attn_xf_config *cfg) {
    return cfg->decoder ? 3 : 2;
}

/* Index of the feed-forward block (the last). */
static size_t ffn_block(const attn_xf_config *cfg) {
    return blocks(cfg) - 1;
}

/* Sizes of one layer's slabs, in doubles: rows·E, rows, the self- and
 * cross-attention weights, rows·F. */
typedef struct {
    size_t re, r, self_w, cross_w, rf;
} slabs;

static attn_status slab_sizes(slabs *s, const attn_xf_config *cfg) {
    if (!cfg || !cfg->L || !cfg->B || !cfg->N || !cfg->E || !cfg->H ||
        !cfg->F || (cfg->decoder && !cfg->S_mem))
        return ATTN_E_INVALID_ARG;
    size_t sw[5] = {cfg->B, cfg->H, cfg->N, cfg->N, 1};
    size_t cw[5] = {cfg->B, cfg->H, cfg->N, cfg->decoder ? cfg->S_mem : 1, 1};
    if (attn_size_mul(&s->r, cfg->B, cfg->N) != ATTN_OK ||
        attn_size_mul(&s->re, s->r, cfg->E) != ATTN_OK ||
        attn_size_mul(&s->rf, s->r, cfg->F) != ATTN_OK ||
        attn_size_prod(&s->self_w, sw, 5) != ATTN_OK ||
        attn_size_prod(&s->cross_w, cw, 5) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    if (!cfg->decoder)
        s->cross_w = 0;
    return ATTN_OK;
}

/* The tape's per-layer doubles. */
static attn_status layer_doubles(size_t *n, const attn_xf_config *cfg) {
    slabs s;
    attn_status st = slab_sizes(&s, cfg);
    if (st != ATTN_OK)
        return st;
    size_t K = blocks(cfg), t, acc = 0;
    /* norm, resid, sub: 3·K·re; mean, rstd: 2·K·r */
    if (attn_size_mul(&t, s.re, 3 * K) != ATTN_OK ||
        attn_size_add(&acc, acc, t) != ATTN_OK ||
        attn_size_mul(&t, s.r, 2 * K) != ATTN_OK ||
        attn_size_add(&acc, acc, t) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    size_t att = 0;
    if (attn_size_add(&att, s.self_w, s.cross_w) != ATTN_OK ||
        attn_size_mul(&att, att, cfg->keep_scores ? 2 : 1) != ATTN_OK ||
        attn_size_add(&acc, acc, att) != ATTN_OK ||
        attn_size_mul(&t, s.rf,
                      cfg->activation == ATTN_ACTIVATION_GELU ? 2 : 1) !=
            ATTN_OK ||
        attn_size_add(&acc, acc, t) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    *n = acc;
    return ATTN_OK;
}

attn_status attn_xf_tape_size(size_t *doubles, const attn_xf_config *cfg) {
    size_t per;
    if (!doubles)
        return ATTN_E_INVALID_ARG;
    attn_status st = layer_doubles(&per, cfg);
    if (st != ATTN_OK)
        return st;
    size_t n, bytes;
    if (attn_size_mul(&n, per, cfg->L) != ATTN_OK ||
        attn_size_mul(&bytes, n, sizeof(double)) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    *doubles = n;
    return ATTN_OK;
}

/* Carve n doubles from *at. */
static double *carve(double **at, size_t n) {
    double *p = *at;
    *at += n;
    return p;
}

void attn_xf_tape_layout(attn_xf_tape *tape, double *buf,
                         const attn_xf_config *cfg) {
    slabs s;
    memset(tape, 0, sizeof *tape);
    if (slab_sizes(&s, cfg) != ATTN_OK)
        return;
    const size_t L = cfg->L, K = blocks(cfg);
    double *at = buf;
    for (size_t k = 0; k < K; k++) {
        tape->norm[k] = carve(&at, L * s.re);
        tape->resid[k] = carve(&at, L * s.re);
        tape->sub[k] = carve(&at, L * s.re);
        tape->mean[k] = carve(&at, L * s.r);
        tape->rstd[k] = carve(&at, L * s.r);
    }
    tape->weights[0] = carve(&at, L * s.self_w);
    if (cfg->decoder)
        tape->weights[1] = carve(&at, L * s.cross_w);
    if (cfg->keep_scores) {
        tape->scores[0] = carve(&at, L * s.self_w);
        if (cfg->decoder)
            tape->scores[1] = carve(&at, L * s.cross_w);
    }
    tape->hidden = carve(&at, L * s.rf);
    if (cfg->activation == ATTN_ACTIVATION_GELU)
        tape->pre = carve(&at, L * s.rf);
}

const double *attn_xf_layer_output(const attn_xf_tape *tape,
                                   const attn_xf_config *cfg, size_t l) {
    size_t k = ffn_block(cfg), re = cfg->B * cfg->N * cfg->E;
    return (cfg->norm_first ? tape->resid[k] : tape->norm[k]) + l * re;
}

const double *attn_xf_layer_input(const attn_xf_tape *tape,
                                  const attn_xf_config *cfg, const double *x,
                                  size_t l) {
    return l == 0 ? x : attn_xf_layer_output(tape, cfg, l - 1);
}

const double *attn_xf_block_x(const attn_xf_tape *tape,
                              const attn_xf_config *cfg, const double *x,
                              size_t l, size_t k) {
    size_t re = cfg->B * cfg->N * cfg->E;
    if (k == 0)
        return attn_xf_layer_input(tape, cfg, x, l);
    return (cfg->norm_first ? tape->resid[k - 1] : tape->norm[k - 1]) + l * re;
}

const double *attn_xf_block_input(const attn_xf_tape *tape,
                                  const attn_xf_config *cfg, const double *x,
                                  size_t l, size_t k) {
    size_t re = cfg->B * cfg->N * cfg->E;
    return cfg->norm_first ? tape->norm[k] + l * re
                           : attn_xf_block_x(tape, cfg, x, l, k);
}

attn_status attn_xf_check(const attn_xf_config *cfg, const double *x,
                          const double *memory, const double *const *params) {
    slabs s;
    if (!x || !params || !cfg)
        return ATTN_E_INVALID_ARG;
    attn_status st = slab_sizes(&s, cfg);
    if (st != ATTN_OK)
        return st;
    if (cfg->E % cfg->H != 0 || !isfinite(cfg->eps) || cfg->eps < 0 ||
        (cfg->activation != ATTN_ACTIVATION_RELU &&
         cfg->activation != ATTN_ACTIVATION_GELU) ||
        (cfg->decoder && !memory))
        return ATTN_E_INVALID_ARG;
    size_t n;
    if (attn_xf_tape_size(&n, cfg) != ATTN_OK ||
        attn_xf_workspace(&n, cfg) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    /* every dimension handed to cblas */
    size_t rm = cfg->decoder ? cfg->B * cfg->S_mem : 0;
    const size_t dims[] = {s.r, rm, cfg->E, cfg->F, 3 * cfg->E};
    for (size_t t = 0; t < sizeof dims / sizeof dims[0]; t++)
        if (!attn_blas_dim_ok(dims[t]))
            return ATTN_E_OVERFLOW;
    for (size_t l = 0; l < cfg->L; l++)
        for (int t = 0; t < ATTN_XF_N_PARAMS; t++)
            if (attn_xf_param_used((attn_xf_param)t, cfg->decoder) &&
                !params[l * ATTN_XF_N_PARAMS + t])
                return ATTN_E_INVALID_ARG;
    return ATTN_OK;
}

attn_status attn_xf_workspace(size_t *bytes, const attn_xf_config *cfg) {
    slabs s;
    if (!bytes)
        return ATTN_E_INVALID_ARG;
    attn_status st = slab_sizes(&s, cfg);
    if (st != ATTN_OK)
        return st;
    size_t Nk = cfg->decoder && cfg->S_mem > cfg->N ? cfg->S_mem : cfg->N;
    size_t kv, n, mh_f, mh_b, t;
    /* the backward's own buffers: dcur, dr, dq, dln (rows·E each), dk and
     * dv (B·max(N, S_mem)·E each), dh (rows·F); then the larger of
     * multi-head attention's forward and backward scratch */
    if (attn_size_mul(&kv, cfg->B, Nk) != ATTN_OK ||
        attn_size_mul(&kv, kv, cfg->E) != ATTN_OK ||
        attn_size_mul(&n, s.re, 4) != ATTN_OK ||
        attn_size_mul(&t, kv, 2) != ATTN_OK ||
        attn_size_add(&n, n, t) != ATTN_OK ||
        attn_size_add(&n, n, s.rf) != ATTN_OK ||
        attn_size_mul(&n, n, sizeof(double)) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    st = attn_multihead_workspace(&mh_f, cfg->B, cfg->N, Nk, cfg->E);
    if (st != ATTN_OK)
        return st;
    st = attn_multihead_backward_workspace(&mh_b, cfg->B, cfg->N, Nk, cfg->E);
    if (st != ATTN_OK)
        return st;
    if (attn_size_add(bytes, n, mh_f > mh_b ? mh_f : mh_b) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    return ATTN_OK;
}

void attn_xf_linear(double *y, const double *x, const double *W,
                    const double *b, size_t rows, size_t din, size_t dout) {
    for (size_t r = 0; r < rows; r++)
        memcpy(y + r * dout, b, dout * sizeof(double));
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)dout,
                (int)din, 1.0, x, (int)din, W, (int)din, 1.0, y, (int)dout);
}

attn_multihead_params attn_xf_mha_params(const double *const *p, int cross,
                                         size_t E) {
    const double *W = p[cross ? ATTN_XF_CA_IN_W : ATTN_XF_SA_IN_W];
    const double *b = p[cross ? ATTN_XF_CA_IN_B : ATTN_XF_SA_IN_B];
    attn_multihead_params m = {W,
                               W + E * E,
                               W + 2 * E * E,
                               p[cross ? ATTN_XF_CA_OUT_W : ATTN_XF_SA_OUT_W],
                               b,
                               b + E,
                               b + 2 * E,
                               p[cross ? ATTN_XF_CA_OUT_B : ATTN_XF_SA_OUT_B]};
    return m;
}

/* The exact GELU, as PyTorch's CPU kernel writes it. */
static double gelu(double x) {
    return x * 0.5 * (1.0 + erf(x * M_SQRT1_2));
}

/* The feed-forward block: pre = a·W1ᵀ + b1, hidden = act(pre),
 * y = hidden·W2ᵀ + b2 (pre NULL for ReLU: computed in hidden). */
static void ffn_forward(double *y, double *hidden, double *pre, const double *a,
                        const double *const *p, const attn_xf_config *cfg,
                        size_t rows) {
    const size_t E = cfg->E, F = cfg->F, n = rows * F;
    double *z = pre ? pre : hidden;
    attn_xf_linear(z, a, p[ATTN_XF_LIN1_W], p[ATTN_XF_LIN1_B], rows, E, F);
    if (cfg->activation == ATTN_ACTIVATION_GELU) {
        for (size_t i = 0; i < n; i++)
            hidden[i] = gelu(pre[i]);
    } else {
        for (size_t i = 0; i < n; i++)
            hidden[i] = hidden[i] > 0.0 ? hidden[i] : 0.0;
    }
    attn_xf_linear(y, hidden, p[ATTN_XF_LIN2_W], p[ATTN_XF_LIN2_B], rows, F, E);
}

/* The norm of block k: its weight and bias. */
static const double *norm_w(const double *const *p, size_t k) {
    return p[ATTN_XF_NORM1_W + 2 * k];
}
static const double *norm_b(const double *const *p, size_t k) {
    return p[ATTN_XF_NORM1_B + 2 * k];
}

attn_status attn_xf_forward(double *out, const attn_xf_tape *tape,
                            const double *x, const double *memory,
                            const double *const *params,
                            const attn_xf_config *cfg,
                            const attn_mask *self_mask,
                            const attn_mask *cross_mask, attn_fault *fault) {
    attn_fault_clear(fault);
    if (!out || !tape)
        return ATTN_E_INVALID_ARG;
    attn_status st = attn_xf_check(cfg, x, memory, params);
    if (st != ATTN_OK)
        return st;
    slabs s;
    slab_sizes(&s, cfg); /* checked */
    const size_t B = cfg->B, N = cfg->N, E = cfg->E, R = s.r, K = blocks(cfg);
    for (size_t l = 0; l < cfg->L; l++) {
        const double *const *p = params + l * ATTN_XF_N_PARAMS;
        for (size_t k = 0; k < K; k++) {
            if (attn_deadline_passed())
                return ATTN_E_DEADLINE;
            const double *bx = attn_xf_block_x(tape, cfg, x, l, k);
            double *n = tape->norm[k] + l * s.re;
            double *r = tape->resid[k] + l * s.re;
            double *y = tape->sub[k] + l * s.re;
            double *mean = tape->mean[k] + l * s.r;
            double *rstd = tape->rstd[k] + l * s.r;
            attn_fault f = {0};
            if (cfg->norm_first) {
                st = attn_layer_norm_forward(n, mean, rstd, bx, norm_w(p, k),
                                             norm_b(p, k), R, E, cfg->eps, &f);
                if (st != ATTN_OK)
                    return attn_fault_at(fault, l, st);
            }
            const double *a = cfg->norm_first ? n : bx;
            if (k == ffn_block(cfg)) {
                ffn_forward(y, tape->hidden + l * s.rf,
                            tape->pre ? tape->pre + l * s.rf : NULL, a, p, cfg,
                            R);
            } else {
                const int cross = k == 1;
                const size_t Nk = cross ? cfg->S_mem : N;
                const size_t w = cross ? s.cross_w : s.self_w;
                const double *kv = cross ? memory : a;
                attn_multihead_params mp = attn_xf_mha_params(p, cross, E);
                st = attn_multihead_forward(
                    y, tape->weights[k] + l * w,
                    tape->scores[k] ? tape->scores[k] + l * w : NULL, a, kv, kv,
                    &mp, cross ? cross_mask : self_mask, B, N, Nk, E, E, E, E,
                    cfg->H, E, &f);
                if (st != ATTN_OK) {
                    if (st == ATTN_E_NONFINITE)
                        return attn_fault_at(fault, l, st);
                    if (fault)
                        *fault = f;
                    return st;
                }
            }
            for (size_t i = 0; i < s.re; i++)
                r[i] = bx[i] + y[i];
            if (!cfg->norm_first) {
                st = attn_layer_norm_forward(n, mean, rstd, r, norm_w(p, k),
                                             norm_b(p, k), R, E, cfg->eps, &f);
                if (st != ATTN_OK)
                    return attn_fault_at(fault, l, st);
            }
            if (attn_check_finite(cfg->norm_first ? r : n, s.re, NULL) !=
                ATTN_OK)
                return attn_fault_at(fault, l, ATTN_E_NONFINITE);
        }
    }
    memcpy(out, attn_xf_layer_output(tape, cfg, cfg->L - 1),
           s.re * sizeof(double));
    return ATTN_OK;
}

/* ------------------------------------------------- seeded parameters */

/* n draws of U(−a, a) into W. */
static void uniform(attn_rng *rng, double *W, size_t n, double a) {
    for (size_t i = 0; i < n; i++)
        W[i] = -a + 2.0 * a * attn_rng_uniform(rng);
}

static void fill(double *W, size_t n, double v) {
    for (size_t i = 0; i < n; i++)
        W[i] = v;
}

attn_status attn_xf_init(double *const *params, attn_rng *rng,
                         const attn_xf_config *cfg) {
    slabs s;
    if (!params || !rng || !cfg)
        return ATTN_E_INVALID_ARG;
    attn_status st = slab_sizes(&s, cfg);
    if (st != ATTN_OK)
        return st;
    const size_t E = cfg->E, F = cfg->F;
    for (size_t l = 0; l < cfg->L; l++) {
        double *const *p = params + l * ATTN_XF_N_PARAMS;
        for (int t = 0; t < ATTN_XF_N_PARAMS; t++) {
            if (!attn_xf_param_used((attn_xf_param)t, cfg->decoder))
                continue;
            if (!p[t])
                return ATTN_E_INVALID_ARG;
            /* many layers of large weights take seconds to draw */
            if (attn_deadline_passed())
                return ATTN_E_DEADLINE;
            size_t dims[2], rank;
            attn_xf_param_shape((attn_xf_param)t, E, F, dims, &rank);
            size_t n = dims[0] * dims[1];
            switch ((attn_xf_param)t) {
            case ATTN_XF_SA_IN_W:
            case ATTN_XF_CA_IN_W: /* xavier_uniform_ over (3E, E) */
                attn_rng_xavier(rng, p[t], 3 * E, E);
                break;
            case ATTN_XF_SA_OUT_W:
            case ATTN_XF_CA_OUT_W: /* kaiming_uniform_(a = √5): 1/√fan_in */
            case ATTN_XF_LIN1_W:
            case ATTN_XF_LIN1_B:
                uniform(rng, p[t], n, 1.0 / sqrt((double)E));
                break;
            case ATTN_XF_LIN2_W:
            case ATTN_XF_LIN2_B:
                uniform(rng, p[t], n, 1.0 / sqrt((double)F));
                break;
            case ATTN_XF_NORM1_W:
            case ATTN_XF_NORM2_W:
            case ATTN_XF_NORM3_W:
                fill(p[t], n, 1.0);
                break;
            default: /* in_proj_bias, out_proj.bias, the norms' biases */
                fill(p[t], n, 0.0);
                break;
            }
        }
    }
    return ATTN_OK;
}

/* ------------------------------------------- positional encoding first */

attn_status attn_xf_embed(double *out, double *P, double *embedded,
                          const double *x, size_t B, size_t N, size_t E) {
    size_t n;
    if (!out || !P || !x || !B || !N || !E)
        return ATTN_E_INVALID_ARG;
    if (attn_size_mul(&n, B, N) != ATTN_OK ||
        attn_size_mul(&n, n, E) != ATTN_OK ||
        attn_size_mul(&n, n, sizeof(double)) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    attn_status st = attn_posenc_sinusoidal(P, N, E);
    if (st != ATTN_OK)
        return st;
    const double scale = sqrt((double)E);
    for (size_t b = 0; b < B; b++)
        for (size_t i = 0; i < N * E; i++) {
            double e = x[b * N * E + i] * scale;
            if (embedded)
                embedded[b * N * E + i] = e;
            out[b * N * E + i] = e + P[i];
        }
    return ATTN_OK;
}
