/*
 * multihead.c — multi-head attention (d2l 11.5 "Multi-Head Attention";
 * Vaswani et al. 2017; PyTorch nn.MultiheadAttention): project queries,
 * keys and values to h features, split them into H contiguous heads of h/H,
 * run scaled dot-product attention per head, concatenate, project to d_out.
 * A BLAS path and a plain-loop reference with the same contract.
 */
#include "attn_internal.h"

#include <cblas.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Largest size cblas accepts for one dimension or leading dimension. */
#define BLAS_MAX ((size_t)INT_MAX)

/* Argument and size checks shared by both paths. On ATTN_OK, *ws_elems is
 * the scratch the BLAS path needs, in doubles. */
static attn_status
check_args(size_t *ws_elems, const double *out, const double *weights,
           const double *q, const double *k, const double *v,
           const attn_multihead_params *params, const attn_mask *mask, size_t B,
           size_t Nq, size_t Nk, size_t dq, size_t dk, size_t dv, size_t h,
           size_t H, size_t d_out, attn_fault *fault) {
    attn_fault_clear(fault);
    if (!out || !weights || !q || !k || !v || !params || !params->W_q ||
        !params->W_k || !params->W_v || !params->W_o)
        return ATTN_E_INVALID_ARG;
    if (!B || !Nq || !Nk || !dq || !dk || !dv || !h || !H || !d_out)
        return ATTN_E_INVALID_ARG;
    if (h % H != 0)
        return ATTN_E_INVALID_ARG;

    /* Every tensor the caller hands over or receives must be addressable. */
    const size_t shapes[][4] = {
        {B, Nq, dq, 1},   {B, Nk, dk, 1},    {B, Nk, dv, 1},
        {h, dq, 1, 1},    {h, dk, 1, 1},     {h, dv, 1, 1},
        {d_out, h, 1, 1}, {B, Nq, d_out, 1}, {B, H, Nq, Nk},
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        size_t n;
        if (attn_size_prod(&n, shapes[i], 4) != ATTN_OK ||
            attn_size_mul(&n, n, sizeof(double)) != ATTN_OK)
            return ATTN_E_OVERFLOW;
    }
    size_t bytes;
    attn_status st = attn_multihead_workspace(&bytes, B, Nq, Nk, h);
    if (st != ATTN_OK)
        return st;
    *ws_elems = bytes / sizeof(double);
    return attn_mask_check(mask, B, Nq, Nk, fault);
}

attn_status attn_multihead_workspace(size_t *bytes, size_t B, size_t Nq,
                                     size_t Nk, size_t h) {
    /* Q' (B, Nq, h), K' (B, Nk, h), V' (B, Nk, h). */
    size_t rows, n;
    if (!bytes)
        return ATTN_E_INVALID_ARG;
    if (attn_size_mul(&rows, Nk, 2) != ATTN_OK ||
        attn_size_add(&rows, rows, Nq) != ATTN_OK ||
        attn_size_mul(&rows, rows, B) != ATTN_OK ||
        attn_size_mul(&n, rows, h) != ATTN_OK ||
        attn_size_mul(&n, n, sizeof(double)) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    *bytes = n;
    return ATTN_OK;
}

void attn_multihead_project(double *y, const double *x, const double *W,
                            const double *b, size_t rows, size_t din,
                            size_t dout) {
    if (b) {
        for (size_t r = 0; r < rows; r++)
            memcpy(y + r * dout, b, dout * sizeof(double));
    }
    for (size_t r0 = 0; r0 < rows; r0 += BLAS_MAX) {
        size_t m = rows - r0 < BLAS_MAX ? rows - r0 : BLAS_MAX;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)m, (int)dout,
                    (int)din, 1.0, x + r0 * din, (int)din, W, (int)din,
                    b ? 1.0 : 0.0, y + r0 * dout, (int)dout);
    }
}

/* A head's softmax fault f (status st) as attn_multihead_forward reports
 * it: a fully masked row by its index in (B·Nq) and its head, a
 * non-finite weight by its index in weights, whose head slab starts at
 * slab. */
static void head_fault(attn_fault *fault, attn_status st, const attn_fault *f,
                       size_t b, size_t hd, size_t Nq, size_t slab) {
    if (fault && st == ATTN_E_FULLY_MASKED) {
        fault->index = b * Nq + f->index;
        fault->by_causal = f->by_causal;
        fault->by_mask = f->by_mask;
        fault->head = hd;
    } else if (fault && st == ATTN_E_NONFINITE) {
        fault->index = slab + f->index;
    }
}

attn_status attn_multihead_forward(
    double *out, double *weights, double *scores, const double *q,
    const double *k, const double *v, const attn_multihead_params *params,
    const attn_mask *mask, size_t B, size_t Nq, size_t Nk, size_t dq, size_t dk,
    size_t dv, size_t h, size_t H, size_t d_out, attn_fault *fault) {
    size_t ws_elems;
    attn_status st = check_args(&ws_elems, out, weights, q, k, v, params, mask,
                                B, Nq, Nk, dq, dk, dv, h, H, d_out, fault);
    if (st != ATTN_OK)
        return st;
    /* Sizes handed to cblas as int (projection rows are chunked). */
    const size_t dims[] = {Nq, Nk, dq, dk, dv, h, d_out};
    for (size_t t = 0; t < sizeof dims / sizeof dims[0]; t++) {
        if (!attn_blas_dim_ok(dims[t]))
            return ATTN_E_OVERFLOW;
    }

    double *ws = malloc(ws_elems * sizeof(double));
    if (!ws)
        return ATTN_E_NOMEM;
    double *Qp = ws;              /* (B, Nq, h); later the concatenated heads */
    double *Kp = Qp + B * Nq * h; /* (B, Nk, h) */
    double *Vp = Kp + B * Nk * h; /* (B, Nk, h) */
    const size_t dh = h / H;
    const double scale = 1.0 / sqrt((double)dh);

    /* 1. Projections Q' = q·W_qᵀ + b_q, K' = k·W_kᵀ + b_k, V' = v·W_vᵀ + b_v */
    attn_multihead_project(Qp, q, params->W_q, params->b_q, B * Nq, dq, h);
    attn_multihead_project(Kp, k, params->W_k, params->b_k, B * Nk, dk, h);
    attn_multihead_project(Vp, v, params->W_v, params->b_v, B * Nk, dv, h);

    for (size_t b = 0; b < B && st == ATTN_OK; b++) {
        if (attn_deadline_passed()) {
            st = ATTN_E_DEADLINE;
            break;
        }
        double *Qb = Qp + b * Nq * h;
        const double *Kb = Kp + b * Nk * h;
        const double *Vb = Vp + b * Nk * h;
        for (size_t hd = 0; hd < H; hd++) {
            size_t slab = (b * H + hd) * Nq * Nk;
            double *w = weights + slab;
            double *s = scores ? scores + slab : w;
            /* 2. Head scores (Nq, Nk) = Q'_hd K'_hdᵀ · scale; the head's
             *    features are columns hd·dh ... of Q', K' (row stride h). */
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)Nq,
                        (int)Nk, (int)dh, scale, Qb + hd * dh, (int)h,
                        Kb + hd * dh, (int)h, 0.0, s, (int)Nk);
            /* 3. Masked softmax over keys: valid_lens, causal and the key
             *    padding are the same for every head, a PER_HEAD attn_mask
             *    is the head's own. */
            attn_mask mb = attn_mask_slice(mask, b, hd, H, Nq, Nk);
            attn_fault f = {0};
            st = attn_softmax_masked(w, s, &mb, 1, Nq, Nk, &f);
            if (st != ATTN_OK) {
                head_fault(fault, st, &f, b, hd, Nq, slab);
                break;
            }
            /* 4. Head output weights·V'_hd (Nq, dh) goes into the head's
             *    own columns of Q', which step 2 no longer needs: Q'
             *    becomes the concatenation of the heads. */
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)Nq,
                        (int)dh, (int)Nk, 1.0, w, (int)Nk, Vb + hd * dh, (int)h,
                        0.0, Qb + hd * dh, (int)h);
        }
    }

    /* 5. out = concat·W_oᵀ + b_o */
    if (st == ATTN_OK) {
        attn_multihead_project(out, Qp, params->W_o, params->b_o, B * Nq, h,
                               d_out);
        st = attn_check_finite(out, B * Nq * d_out, fault);
    }
    free(ws);
    return st;
}

/* ------------------------------------------------ plain-loop reference */

/* y (rows, dout) = x (rows, din) · Wᵀ + b, by loops. */
static void project_ref(double *y, const double *x, const double *W,
                        const double *b, size_t rows, size_t din, size_t dout) {
    for (size_t r = 0; r < rows; r++) {
        for (size_t o = 0; o < dout; o++) {
            double acc = b ? b[o] : 0.0;
            for (size_t c = 0; c < din; c++)
                acc += x[r * din + c] * W[o * din + c];
            y[r * dout + o] = acc;
        }
    }
}

/* 1 when valid_lens alone leaves query i of example b some key. */
static int valid_len_positive(const attn_mask *mask, size_t b, size_t i,
                              size_t Nq) {
    if (!mask || !mask->valid_lens)
        return 1;
    return (mask->per_query ? mask->valid_lens[b * Nq + i]
                            : mask->valid_lens[b]) > 0;
}

/* The float attn_mask's entry for (b, t, i, j), 0 without one. */
static double float_mask_at(const attn_mask *mask, size_t b, size_t t, size_t H,
                            size_t i, size_t j, size_t Nq, size_t Nk) {
    if (!mask || !mask->float_mask)
        return 0.0;
    size_t slab = mask->layout == ATTN_MASK_PER_HEAD      ? b * H + t
                  : mask->layout == ATTN_MASK_PER_EXAMPLE ? b
                                                          : 0;
    return mask->float_mask[(slab * Nq + i) * Nk + j];
}

/* Softmax of one score row s (Nk) of head t over the keys visible to
 * (b, i) into w, the float mask added; the fully masked policy, finiteness
 * of visible scores. *bad gets the key of a non-finite visible score. */
static attn_status softmax_row_ref(double *w, const double *s,
                                   const attn_mask *mask, size_t b, size_t t,
                                   size_t H, size_t i, size_t Nq, size_t Nk,
                                   size_t *bad) {
    double mx = -INFINITY;
    size_t visible = 0;
    for (size_t j = 0; j < Nk; j++) {
        if (!attn_mask_visible_head(mask, b, t, H, i, j, Nq, Nk))
            continue;
        double x = s[j] + float_mask_at(mask, b, t, H, i, j, Nq, Nk);
        if (!isfinite(x)) {
            *bad = j;
            return ATTN_E_NONFINITE;
        }
        visible++;
        mx = x > mx ? x : mx;
    }
    if (visible == 0) {
        attn_fully_masked policy = mask ? mask->fully_masked : 0;
        if (policy == ATTN_FULLY_MASKED_ERROR)
            return ATTN_E_FULLY_MASKED;
        for (size_t j = 0; j < Nk; j++)
            w[j] = policy == ATTN_FULLY_MASKED_UNIFORM ? 1.0 / (double)Nk : 0.0;
        return ATTN_OK;
    }
    double sum = 0.0;
    for (size_t j = 0; j < Nk; j++) {
        w[j] = attn_mask_visible_head(mask, b, t, H, i, j, Nq, Nk)
                   ? exp(s[j] + float_mask_at(mask, b, t, H, i, j, Nq, Nk) - mx)
                   : 0.0;
        sum += w[j];
    }
    for (size_t j = 0; j < Nk; j++)
        w[j] /= sum;
    return ATTN_OK;
}

attn_status attn_multihead_forward_ref(
    double *out, double *weights, double *scores, const double *q,
    const double *k, const double *v, const attn_multihead_params *params,
    const attn_mask *mask, size_t B, size_t Nq, size_t Nk, size_t dq, size_t dk,
    size_t dv, size_t h, size_t H, size_t d_out, attn_fault *fault) {
    size_t ws_elems;
    attn_status st = check_args(&ws_elems, out, weights, q, k, v, params, mask,
                                B, Nq, Nk, dq, dk, dv, h, H, d_out, fault);
    if (st != ATTN_OK)
        return st;

    double *Qp = malloc(ws_elems * sizeof(double));
    double *concat = malloc(B * Nq * h * sizeof(double));
    if (!Qp || !concat) {
        free(Qp);
        free(concat);
        return ATTN_E_NOMEM;
    }
    double *Kp = Qp + B * Nq * h;
    double *Vp = Kp + B * Nk * h;
    const size_t dh = h / H;
    const double scale = 1.0 / sqrt((double)dh);

    project_ref(Qp, q, params->W_q, params->b_q, B * Nq, dq, h);
    project_ref(Kp, k, params->W_k, params->b_k, B * Nk, dk, h);
    project_ref(Vp, v, params->W_v, params->b_v, B * Nk, dv, h);

    for (size_t b = 0; b < B && st == ATTN_OK; b++) {
        for (size_t hd = 0; hd < H && st == ATTN_OK; hd++) {
            for (size_t i = 0; i < Nq && st == ATTN_OK; i++) {
                size_t row = (b * H + hd) * Nq + i;
                double *w = weights + row * Nk;
                double *s = scores ? scores + row * Nk : w;
                const double *qi = Qp + (b * Nq + i) * h + hd * dh;
                for (size_t j = 0; j < Nk; j++) {
                    const double *kj = Kp + (b * Nk + j) * h + hd * dh;
                    double acc = 0.0;
                    for (size_t c = 0; c < dh; c++)
                        acc += qi[c] * kj[c];
                    s[j] = acc * scale;
                }
                size_t bad = 0;
                st = softmax_row_ref(w, s, mask, b, hd, H, i, Nq, Nk, &bad);
                if (st == ATTN_E_NONFINITE && fault)
                    fault->index = row * Nk + bad;
                if (st == ATTN_E_FULLY_MASKED && fault) {
                    fault->index = b * Nq + i;
                    fault->head = hd;
                    fault->by_causal = 0;
                    fault->by_mask = 0;
                    if (attn_mask_has_pattern(mask)) {
                        attn_mask_row r;
                        attn_mask_row_of(&r, mask, b, hd, H, i, Nq, Nk,
                                         &fault->by_causal);
                        attn_mask_row_count(&r, Nk, &fault->by_mask);
                    } else {
                        fault->by_causal = valid_len_positive(mask, b, i, Nq);
                    }
                }
                if (st != ATTN_OK)
                    break;
                double *ci = concat + (b * Nq + i) * h + hd * dh;
                for (size_t c = 0; c < dh; c++) {
                    double acc = 0.0;
                    for (size_t j = 0; j < Nk; j++)
                        acc += w[j] * Vp[(b * Nk + j) * h + hd * dh + c];
                    ci[c] = acc;
                }
            }
        }
    }
    if (st == ATTN_OK) {
        project_ref(out, concat, params->W_o, params->b_o, B * Nq, h, d_out);
        st = attn_check_finite(out, B * Nq * d_out, fault);
    }
    free(Qp);
    free(concat);
    return st;
}

/* ------------------------------------------------- seeded parameters */

attn_status attn_multihead_xavier(double *W_q, double *W_k, double *W_v,
                                  double *W_o, attn_rng *rng, size_t dq,
                                  size_t dk, size_t dv, size_t h) {
    if (!W_q || !W_k || !W_v || !W_o || !rng || !dq || !dk || !dv || !h)
        return ATTN_E_INVALID_ARG;
    const size_t shapes[][2] = {{h, dq}, {h, dk}, {h, dv}, {h, h}};
    for (size_t i = 0; i < 4; i++) {
        size_t n;
        if (attn_size_prod(&n, shapes[i], 2) != ATTN_OK ||
            attn_size_mul(&n, n, sizeof(double)) != ATTN_OK)
            return ATTN_E_OVERFLOW;
    }
    attn_rng_xavier(rng, W_q, h, dq);
    attn_rng_xavier(rng, W_k, h, dk);
    attn_rng_xavier(rng, W_v, h, dv);
    attn_rng_xavier(rng, W_o, h, h);
    return ATTN_OK;
}
