/*
 * multihead_backward.c — gradients of multi-head attention (d2l 11.5;
 * Vaswani et al. 2017; PyTorch nn.MultiheadAttention), the forward pass of
 * multihead.c run backwards: output projection, per-head scaled
 * dot-product attention on strided column slices, input projections, every
 * product through cblas_dgemm. The per-head (Nq, Nk) gradient lives in one
 * buffer reused by every head; nothing of size (B, H, Nq, Nk) is allocated.
 */
#include "attn_internal.h"
#include "backward_internal.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

attn_status attn_multihead_backward_workspace(size_t *bytes, size_t B,
                                              size_t Nq, size_t Nk, size_t h) {
    if (!bytes || B == 0 || Nq == 0 || Nk == 0 || h == 0)
        return ATTN_E_INVALID_ARG;
    /* Q' (B, Nq, h), K', V' (B, Nk, h), their gradients of the same sizes
     * (the query side doubles as the concatenated heads), and dL/dS of one
     * head, (Nq, Nk) */
    size_t rows, n, ds;
    if (attn_size_mul(&rows, Nk, 2) != ATTN_OK ||
        attn_size_add(&rows, rows, Nq) != ATTN_OK ||
        attn_size_mul(&rows, rows, B) != ATTN_OK ||
        attn_size_mul(&n, rows, h) != ATTN_OK ||
        attn_size_mul(&n, n, 2) != ATTN_OK ||
        attn_size_mul(&ds, Nq, Nk) != ATTN_OK ||
        attn_size_add(&n, n, ds) != ATTN_OK ||
        attn_size_mul(bytes, n, sizeof(double)) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    return ATTN_OK;
}

/* Arguments, sizes (overflow-checked) and the mask, before any work. */
static attn_status multihead_backward_check(
    const double *grad_q, const double *grad_k, const double *grad_v,
    const attn_multihead_grads *gp, const double *grad_out,
    const double *weights, const double *q, const double *k, const double *v,
    const attn_multihead_params *p, const attn_mask *mask, size_t B, size_t Nq,
    size_t Nk, size_t dq, size_t dk, size_t dv, size_t h, size_t H,
    size_t d_out, attn_fault *fault) {
    attn_fault_clear(fault);
    if (!grad_q || !grad_k || !grad_v || !gp || !grad_out || !weights || !q ||
        !k || !v || !p)
        return ATTN_E_INVALID_ARG;
    if (!p->W_q || !p->W_k || !p->W_v || !p->W_o || !gp->W_q || !gp->W_k ||
        !gp->W_v || !gp->W_o)
        return ATTN_E_INVALID_ARG;
    /* a bias gradient is required exactly where the bias is given */
    if ((p->b_q && !gp->b_q) || (p->b_k && !gp->b_k) || (p->b_v && !gp->b_v) ||
        (p->b_o && !gp->b_o))
        return ATTN_E_INVALID_ARG;
    if (!B || !Nq || !Nk || !dq || !dk || !dv || !h || !H || !d_out)
        return ATTN_E_INVALID_ARG;
    if (h % H != 0)
        return ATTN_E_INVALID_ARG;
    const size_t shapes[][5] = {
        {B, Nq, dq, 1, 8},   {B, Nk, dk, 1, 8},    {B, Nk, dv, 1, 8},
        {h, dq, 1, 1, 8},    {h, dk, 1, 1, 8},     {h, dv, 1, 1, 8},
        {d_out, h, 1, 1, 8}, {B, Nq, d_out, 1, 8}, {B, H, Nq, Nk, 8},
    };
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        size_t n;
        if (attn_size_prod(&n, shapes[t], 5) != ATTN_OK)
            return ATTN_E_OVERFLOW;
    }
    size_t bytes;
    attn_status st = attn_multihead_backward_workspace(&bytes, B, Nq, Nk, h);
    if (st != ATTN_OK)
        return st;
    const size_t dims[] = {B * Nq, B * Nk, Nq, Nk, dq, dk, dv, h, d_out};
    for (size_t t = 0; t < sizeof dims / sizeof dims[0]; t++) {
        if (!attn_blas_dim_ok(dims[t]))
            return ATTN_E_OVERFLOW;
    }
    return attn_backward_check_mask_heads(mask, B, H, Nq, Nk, fault);
}

/* Forward y = x·Wᵀ + b (x: (rows, din), W: (dout, din), b: (dout) or
 * NULL) -> y (rows, dout). */
static void project(double *y, const double *x, const double *W,
                    const double *b, size_t rows, size_t din, size_t dout) {
    if (b) {
        for (size_t r = 0; r < rows; r++)
            memcpy(y + r * dout, b, dout * sizeof(double));
    }
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)dout,
                (int)din, 1.0, x, (int)din, W, (int)din, b ? 1.0 : 0.0, y,
                (int)dout);
}

/* Backward of project() given dy (rows, dout): grad_W = dyᵀ·x (dout, din);
 * grad_x = dy·W (rows, din) unless grad_x is NULL; grad_b (dout) = column
 * sums of dy unless grad_b is NULL. */
static void project_backward(double *grad_x, double *grad_W, double *grad_b,
                             const double *dy, const double *x, const double *W,
                             size_t rows, size_t din, size_t dout) {
    if (grad_x)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows,
                    (int)din, (int)dout, 1.0, dy, (int)dout, W, (int)din, 0.0,
                    grad_x, (int)din);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)dout, (int)din,
                (int)rows, 1.0, dy, (int)dout, x, (int)din, 0.0, grad_W,
                (int)din);
    if (grad_b) {
        memset(grad_b, 0, dout * sizeof(double));
        for (size_t r = 0; r < rows; r++) {
            for (size_t o = 0; o < dout; o++)
                grad_b[o] += dy[r * dout + o];
        }
    }
}

/* Steps 4-6 of attn_multihead_backward for one head t, every matrix of
 * the head a column slice of row stride h: from dhead_t (Gt, (Nq, dh)) to
 * dQ'_t (written over Gt, read no more), dK'_t and dV'_t (Nk, dh),
 * through the head's weights W (Nq, Nk) under its mask mt. dS (Nq, Nk)
 * is scratch. */
static void head_backward(double *Gt, double *dKt, double *dVt, double *dS,
                          const double *W, const double *Qt, const double *Kt,
                          const double *Vt, const attn_mask *mt, size_t Nq,
                          size_t Nk, size_t dh, size_t h, double scale) {
    const int nq = (int)Nq, nk = (int)Nk, ndh = (int)dh, nh = (int)h;
    /* 4. forward "head_t = weights_t·V'_t":
     *    dV'_t = weights_tᵀ dhead_t, dW = dhead_t V'_tᵀ */
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nk, ndh, nq, 1.0, W,
                nk, Gt, nh, 0.0, dVt, nh);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nq, nk, ndh, 1.0, Gt,
                nh, Vt, nh, 0.0, dS, nk);

    /* 5. forward "weights_t = masked_softmax(s_t)" under the
     *    head's mask: dS = W ⊙ (dW − rowsum(dW ⊙ W)) */
    attn_softmax_backward_example(dS, dS, W, mt, 0, Nq, Nk);

    /* 6. forward "s_t = Q'_t K'_tᵀ · scale":
     *    dQ'_t = scale · dS K'_t (into Gt: dhead_t was last read in
     *    step 4), dK'_t = scale · dSᵀ Q'_t */
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nq, ndh, nk, scale,
                dS, nk, Kt, nh, 0.0, Gt, nh);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, nk, ndh, nq, scale, dS,
                nk, Qt, nh, 0.0, dKt, nh);
}

/* attn_grads_finite over every gradient attn_multihead_backward wrote
 * (a bias's only where the bias is given). */
static attn_status
grads_finite(const double *grad_q, const double *grad_k, const double *grad_v,
             const attn_multihead_grads *gp, const attn_multihead_params *p,
             size_t B, size_t Nq, size_t Nk, size_t dq, size_t dk, size_t dv,
             size_t h, size_t d_out, attn_fault *fault) {
    const double *g[] = {grad_q,
                         grad_k,
                         grad_v,
                         gp->W_q,
                         gp->W_k,
                         gp->W_v,
                         gp->W_o,
                         p->b_q ? gp->b_q : NULL,
                         p->b_k ? gp->b_k : NULL,
                         p->b_v ? gp->b_v : NULL,
                         p->b_o ? gp->b_o : NULL};
    const size_t n[] = {B * Nq * dq, B * Nk * dk, B * Nk * dv, h * dq,
                        h * dk,      h * dv,      d_out * h,   h,
                        h,           h,           d_out};
    return attn_grads_finite(g, n, sizeof n / sizeof n[0], fault);
}

attn_status attn_multihead_backward(
    double *grad_q, double *grad_k, double *grad_v,
    const attn_multihead_grads *grad_params, const double *grad_out,
    const double *weights, const double *q, const double *k, const double *v,
    const attn_multihead_params *params, const attn_mask *mask, size_t B,
    size_t Nq, size_t Nk, size_t dq, size_t dk, size_t dv, size_t h, size_t H,
    size_t d_out, attn_fault *fault) {
    const attn_multihead_grads *gp = grad_params;
    const attn_multihead_params *p = params;
    attn_status st = multihead_backward_check(
        grad_q, grad_k, grad_v, gp, grad_out, weights, q, k, v, p, mask, B, Nq,
        Nk, dq, dk, dv, h, H, d_out, fault);
    if (st != ATTN_OK)
        return st;
    size_t bytes;
    attn_multihead_backward_workspace(&bytes, B, Nq, Nk, h); /* checked */
    double *ws = malloc(bytes);
    if (!ws)
        return ATTN_E_NOMEM;
    double *Qp = ws;                /* Q' (B, Nq, h) */
    double *Kp = Qp + B * Nq * h;   /* K' (B, Nk, h) */
    double *Vp = Kp + B * Nk * h;   /* V' (B, Nk, h) */
    double *G = Vp + B * Nk * h;    /* (B, Nq, h): concat, then dL/dconcat,
                                       then dL/dQ' head by head */
    double *dKp = G + B * Nq * h;   /* dL/dK' (B, Nk, h) */
    double *dVp = dKp + B * Nk * h; /* dL/dV' (B, Nk, h) */
    double *dS = dVp + B * Nk * h;  /* one head's dL/dS (Nq, Nk) */
    const size_t dh = h / H;
    const double scale = 1.0 / sqrt((double)dh);
    const int nq = (int)Nq, nk = (int)Nk, ndh = (int)dh, nh = (int)h;

    /* 1. forward "Q' = q·W_qᵀ + b_q, K' = k·W_kᵀ + b_k, V' = v·W_vᵀ + b_v",
     *    recomputed */
    project(Qp, q, p->W_q, p->b_q, B * Nq, dq, h);
    project(Kp, k, p->W_k, p->b_k, B * Nk, dk, h);
    project(Vp, v, p->W_v, p->b_v, B * Nk, dv, h);

    /* 2. forward "head_t = weights_t·V'_t, concatenated", recomputed from
     *    the given weights into G */
    for (size_t b = 0; b < B; b++) {
        for (size_t hd = 0; hd < H; hd++) {
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nq, ndh, nk,
                        1.0, weights + (b * H + hd) * Nq * Nk, nk,
                        Vp + b * Nk * h + hd * dh, nh, 0.0,
                        G + b * Nq * h + hd * dh, nh);
        }
    }

    /* 3. forward "out = concat·W_oᵀ + b_o":
     *    grad_W_o = dOᵀ concat, grad_b_o = Σ_rows dO, then
     *    G = dL/dconcat = dO W_o (concat is no longer needed) */
    project_backward(NULL, gp->W_o, p->b_o ? gp->b_o : NULL, grad_out, G,
                     p->W_o, B * Nq, h, d_out);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)(B * Nq), nh,
                (int)d_out, 1.0, grad_out, (int)d_out, p->W_o, nh, 0.0, G, nh);

    for (size_t b = 0; b < B; b++) {
        for (size_t hd = 0; hd < H; hd++) {
            const size_t qo = b * Nq * h + hd * dh, kv = b * Nk * h + hd * dh;
            attn_mask mt = attn_mask_slice(mask, b, hd, H, Nq, Nk);
            head_backward(G + qo, dKp + kv, dVp + kv, dS,
                          weights + (b * H + hd) * Nq * Nk, Qp + qo, Kp + kv,
                          Vp + kv, &mt, Nq, Nk, dh, h, scale);
        }
    }

    /* 7. back through step 1: grad_x = dP W, grad_W = dPᵀ x, grad_b = Σ dP */
    project_backward(grad_q, gp->W_q, p->b_q ? gp->b_q : NULL, G, q, p->W_q,
                     B * Nq, dq, h);
    project_backward(grad_k, gp->W_k, p->b_k ? gp->b_k : NULL, dKp, k, p->W_k,
                     B * Nk, dk, h);
    project_backward(grad_v, gp->W_v, p->b_v ? gp->b_v : NULL, dVp, v, p->W_v,
                     B * Nk, dv, h);
    free(ws);

    return grads_finite(grad_q, grad_k, grad_v, gp, p, B, Nq, Nk, dq, dk, dv, h,
                        d_out, fault);
}
