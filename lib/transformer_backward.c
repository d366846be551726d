/*
 * transformer_backward.c — gradients of the Transformer stacks of
 * transformer.c: the scalar loss Σ out ⊙ grad_out taken back through
 * every layer, last to first, and each layer's blocks, last to first,
 * from the tape the forward pass kept (nothing is recomputed but what
 * multi-head attention's own backward recomputes). Each block's residual
 * connection sends the gradient both through the sublayer and around it;
 * the norm sits after the sum (post-norm) or before the sublayer
 * (norm_first).
 */
#include "attn_internal.h"
#include "transformer_internal.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The derivative of the exact GELU x·Φ(x): Φ(x) + x·φ(x), as PyTorch's
 * GeluBackward writes it. */
static double gelu_grad(double x) {
    const double beta = M_2_SQRTPI * M_SQRT1_2 * 0.5; /* 1/√(2π) */
    double cdf = 0.5 * (1.0 + erf(x * M_SQRT1_2));
    double pdf = beta * exp(-0.5 * x * x);
    return cdf + x * pdf;
}

/* grad_W = dyᵀ·x (dout, din), grad_b = Σ_rows dy (dout), and
 * grad_x = dy·W (rows, din) unless NULL: the backward of attn_xf_linear. */
static void linear_backward(double *grad_x, double *grad_W, double *grad_b,
                            const double *dy, const double *x, const double *W,
                            size_t rows, size_t din, size_t dout) {
    if (grad_x)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows,
                    (int)din, (int)dout, 1.0, dy, (int)dout, W, (int)din, 0.0,
                    grad_x, (int)din);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)dout, (int)din,
                (int)rows, 1.0, dy, (int)dout, x, (int)din, 0.0, grad_W,
                (int)din);
    memset(grad_b, 0, dout * sizeof(double));
    for (size_t r = 0; r < rows; r++)
        for (size_t o = 0; o < dout; o++)
            grad_b[o] += dy[r * dout + o];
}

/* Scratch of one backward pass (attn_xf_workspace counts it). */
typedef struct {
    double *dcur;    /* dL/d(the block's output), then dL/d(its input) */
    double *dr;      /* dL/d(the residual sum) */
    double *da;      /* dL/d(the sublayer's input) */
    double *dln;     /* the norm's input gradient, norm_first */
    double *dk, *dv; /* multi-head attention's key and value gradients */
    double *dh;      /* dL/d(hidden), then dL/d(pre) (rows, F) */
} scratch;

/* The feed-forward block backward: dy (rows, E) -> da (rows, E) and the
 * four parameter gradients. */
static void ffn_backward(scratch *w, const double *dy, const double *a,
                         const double *hidden, const double *pre,
                         const double *const *p, double *const *g,
                         const attn_xf_config *cfg, size_t rows) {
    const size_t E = cfg->E, F = cfg->F, n = rows * F;
    linear_backward(w->dh, g[ATTN_XF_LIN2_W], g[ATTN_XF_LIN2_B], dy, hidden,
                    p[ATTN_XF_LIN2_W], rows, F, E);
    if (cfg->activation == ATTN_ACTIVATION_GELU) {
        for (size_t i = 0; i < n; i++)
            w->dh[i] *= gelu_grad(pre[i]);
    } else { /* ReLU: hidden > 0 exactly where pre > 0 */
        for (size_t i = 0; i < n; i++)
            w->dh[i] = hidden[i] > 0.0 ? w->dh[i] : 0.0;
    }
    linear_backward(w->da, g[ATTN_XF_LIN1_W], g[ATTN_XF_LIN1_B], w->dh, a,
                    p[ATTN_XF_LIN1_W], rows, E, F);
}

/* What one backward pass reads besides the layer's parameters: the
 * forward pass's inputs and tape, the masks, and its scratch. */
typedef struct {
    const attn_xf_config *cfg;
    const attn_xf_tape *tape;
    const double *x, *memory;
    const attn_mask *self_mask, *cross_mask;
    double *grad_memory; /* the decoder's, summed over its layers */
    scratch w;
} backward_pass;

/* Attention block k of layer l (self k = 0, cross k = 1) backward: dy
 * (rows, E) -> w.da, multi-head attention's own backward
 * (multihead_backward.c) with the key and value gradients summed back
 * into the input they came from (a for self-attention, the memory for
 * cross-attention). */
static attn_status attention_backward(backward_pass *r, size_t l, size_t k,
                                      const double *dy, const double *a,
                                      const double *const *p, double *const *g,
                                      attn_fault *f) {
    const attn_xf_config *cfg = r->cfg;
    const size_t B = cfg->B, N = cfg->N, E = cfg->E, re = B * N * E;
    const int cross = k == 1;
    const size_t Nk = cross ? cfg->S_mem : N;
    const double *kvin = cross ? r->memory : a;
    attn_multihead_params mp = attn_xf_mha_params(p, cross, E);
    double *gin = g[cross ? ATTN_XF_CA_IN_W : ATTN_XF_SA_IN_W];
    double *gib = g[cross ? ATTN_XF_CA_IN_B : ATTN_XF_SA_IN_B];
    attn_multihead_grads mg = {gin,
                               gin + E * E,
                               gin + 2 * E * E,
                               g[cross ? ATTN_XF_CA_OUT_W : ATTN_XF_SA_OUT_W],
                               gib,
                               gib + E,
                               gib + 2 * E,
                               g[cross ? ATTN_XF_CA_OUT_B : ATTN_XF_SA_OUT_B]};
    size_t ws = B * cfg->H * N * Nk;
    attn_status st = attn_multihead_backward(
        r->w.da, r->w.dk, r->w.dv, &mg, dy, r->tape->weights[k] + l * ws, a,
        kvin, kvin, &mp, cross ? r->cross_mask : r->self_mask, B, N, Nk, E, E,
        E, E, cfg->H, E, f);
    if (st != ATTN_OK)
        return st;
    if (cross) { /* keys and values are both the memory */
        for (size_t i = 0; i < B * cfg->S_mem * E; i++)
            r->grad_memory[i] += r->w.dk[i] + r->w.dv[i];
    } else { /* queries, keys and values are all a */
        for (size_t i = 0; i < re; i++)
            r->w.da[i] += r->w.dk[i] + r->w.dv[i];
    }
    return ATTN_OK;
}

/* Block k of layer l backward: w.dcur, the gradient reaching the block's
 * output, becomes the gradient reaching its input, through the sublayer
 * and around it (the residual connection), and the block's parameter
 * gradients are written. */
static attn_status block_backward(backward_pass *r, size_t l, size_t k,
                                  const double *const *p, double *const *g) {
    const attn_xf_config *cfg = r->cfg;
    const size_t R = cfg->B * cfg->N, re = R * cfg->E, rf = R * cfg->F;
    const size_t K = cfg->decoder ? 3 : 2;
    scratch *w = &r->w;
    const double *bx = attn_xf_block_x(r->tape, cfg, r->x, l, k);
    const double *a = attn_xf_block_input(r->tape, cfg, r->x, l, k);
    const double *mean = r->tape->mean[k] + l * R;
    const double *rstd = r->tape->rstd[k] + l * R;
    double *gw = g[ATTN_XF_NORM1_W + 2 * k];
    double *gb = g[ATTN_XF_NORM1_B + 2 * k];
    const double *gamma = p[ATTN_XF_NORM1_W + 2 * k];
    attn_fault f = {0};
    attn_status st;
    /* dy: the gradient reaching the sublayer's output */
    const double *dy = w->dcur;
    if (!cfg->norm_first) { /* out = norm(r), r = bx + y */
        st = attn_layer_norm_backward(w->dr, gw, gb, w->dcur,
                                      r->tape->resid[k] + l * re, mean, rstd,
                                      gamma, R, cfg->E, &f);
        if (st != ATTN_OK)
            return st;
        dy = w->dr;
    }
    if (k == K - 1) {
        ffn_backward(w, dy, a, r->tape->hidden + l * rf,
                     r->tape->pre ? r->tape->pre + l * rf : NULL, p, g, cfg, R);
    } else {
        st = attention_backward(r, l, k, dy, a, p, g, &f);
        if (st != ATTN_OK)
            return st;
    }
    if (!cfg->norm_first) {
        /* d bx = dr (around) + da (through the sublayer) */
        for (size_t i = 0; i < re; i++)
            w->dcur[i] = w->dr[i] + w->da[i];
    } else { /* out = bx + sub(norm(bx)) */
        st = attn_layer_norm_backward(w->dln, gw, gb, w->da, bx, mean, rstd,
                                      gamma, R, cfg->E, &f);
        if (st != ATTN_OK)
            return st;
        for (size_t i = 0; i < re; i++)
            w->dcur[i] += w->dln[i];
    }
    if (attn_check_finite(w->dcur, re, NULL) != ATTN_OK)
        return ATTN_E_NONFINITE;
    return ATTN_OK;
}

/* ATTN_E_NONFINITE when a parameter gradient g of one layer holds a
 * non-finite entry, else ATTN_OK. */
static attn_status layer_grads_finite(double *const *g,
                                      const attn_xf_config *cfg) {
    for (int t = 0; t < ATTN_XF_N_PARAMS; t++) {
        if (!attn_xf_param_used((attn_xf_param)t, cfg->decoder))
            continue;
        size_t dims[2], rank;
        attn_xf_param_shape((attn_xf_param)t, cfg->E, cfg->F, dims, &rank);
        if (attn_check_finite(g[t], dims[0] * dims[1], NULL) != ATTN_OK)
            return ATTN_E_NONFINITE;
    }
    return ATTN_OK;
}

/* Layer l backward, its blocks last to first. */
static attn_status layer_backward(backward_pass *r, size_t l,
                                  const double *const *params,
                                  double *const *grads) {
    const double *const *p = params + l * ATTN_XF_N_PARAMS;
    double *const *g = grads + l * ATTN_XF_N_PARAMS;
    for (size_t k = r->cfg->decoder ? 3 : 2; k-- > 0;) {
        if (attn_deadline_passed())
            return ATTN_E_DEADLINE;
        attn_status st = block_backward(r, l, k, p, g);
        if (st != ATTN_OK)
            return st;
    }
    return layer_grads_finite(g, r->cfg);
}

attn_status attn_xf_backward(double *grad_x, double *grad_memory,
                             double *const *grads, const double *grad_out,
                             const attn_xf_tape *tape, const double *x,
                             const double *memory, const double *const *params,
                             const attn_xf_config *cfg,
                             const attn_mask *self_mask,
                             const attn_mask *cross_mask, attn_fault *fault) {
    attn_fault_clear(fault);
    if (!grad_x || !grads || !grad_out || !tape ||
        (cfg && cfg->decoder && !grad_memory))
        return ATTN_E_INVALID_ARG;
    attn_status st = attn_xf_check(cfg, x, memory, params);
    if (st != ATTN_OK)
        return st;
    for (size_t l = 0; l < cfg->L; l++)
        for (int t = 0; t < ATTN_XF_N_PARAMS; t++)
            if (attn_xf_param_used((attn_xf_param)t, cfg->decoder) &&
                !grads[l * ATTN_XF_N_PARAMS + t])
                return ATTN_E_INVALID_ARG;
    const size_t B = cfg->B, N = cfg->N, E = cfg->E, F = cfg->F;
    const size_t R = B * N, re = R * E, rf = R * F;
    const size_t Nk_max = cfg->decoder && cfg->S_mem > N ? cfg->S_mem : N;
    const size_t kv = B * Nk_max * E, rm = cfg->decoder ? B * cfg->S_mem : 0;
    double *buf = malloc((4 * re + 2 * kv + rf) * sizeof(double));
    if (!buf)
        return ATTN_E_NOMEM;
    backward_pass r = {cfg,
                       tape,
                       x,
                       memory,
                       self_mask,
                       cross_mask,
                       grad_memory,
                       {buf, buf + re, buf + 2 * re, buf + 3 * re, buf + 4 * re,
                        buf + 4 * re + kv, buf + 4 * re + 2 * kv}};
    memcpy(r.w.dcur, grad_out, re * sizeof(double));
    if (cfg->decoder)
        memset(grad_memory, 0, rm * E * sizeof(double));
    for (size_t l = cfg->L; l-- > 0 && st == ATTN_OK;) {
        st = layer_backward(&r, l, params, grads);
        if (st == ATTN_E_NONFINITE)
            attn_fault_at(fault, l, st);
    }
    if (st == ATTN_OK && cfg->decoder &&
        attn_check_finite(grad_memory, rm * E, NULL) != ATTN_OK)
        st = attn_fault_at(fault, 0, ATTN_E_NONFINITE);
    if (st == ATTN_OK)
        memcpy(grad_x, r.w.dcur, re * sizeof(double));
    free(buf);
    return st;
}
