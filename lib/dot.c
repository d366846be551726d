/*
 * dot.c — scaled dot-product attention (d2l 11.3.2; Vaswani et al. 2017,
 * "Attention Is All You Need"): out = softmax(mask(Q Kᵀ · scale)) V, with
 * both products through cblas_dgemm per example (for large calls in blocks
 * of rows, the softmax of each block on a second thread while BLAS works on
 * the next), and a plain-loop reference kept beside it as the test oracle.
 */
#include "attn_internal.h"

#include <cblas.h>
#include <math.h>
#include <pthread.h>

double attn_dot_default_scale(size_t d) {
    return 1.0 / sqrt((double)d);
}

/* Arguments, sizes (overflow-checked) and valid_lens, before any work. */
static attn_status dot_check(const double *out, const double *weights,
                             const double *q, const double *k, const double *v,
                             const attn_mask *mask, double scale, size_t B,
                             size_t Nq, size_t Nk, size_t d, size_t dv,
                             attn_fault *fault) {
    attn_fault_clear(fault);
    if (!out || !weights || !q || !k || !v)
        return ATTN_E_INVALID_ARG;
    if (B == 0 || Nq == 0 || Nk == 0 || d == 0 || dv == 0)
        return ATTN_E_INVALID_ARG;
    if (!isfinite(scale) || !(scale > 0.0))
        return ATTN_E_INVALID_ARG;
    const size_t shapes[][3] = {
        {B, Nq, d}, {B, Nk, d}, {B, Nk, dv}, {B, Nq, Nk}, {B, Nq, dv}};
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        size_t n;
        if (attn_size_prod(&n, shapes[t], 3) != ATTN_OK)
            return ATTN_E_OVERFLOW;
    }
    return attn_mask_check(mask, B, Nq, Nk, fault);
}

/* From this many scores on, the forward pass is pipelined: the caller's
 * thread runs the products on BLAS, a second thread the softmax of the
 * rows whose scores are ready (about 1 ms of softmax). */
#define PIPELINE_SCORES ((size_t)1 << 18)
/* Scores per piece of the pipeline: a block of rows of one example (512 KB,
 * row blocks big enough for dgemm to run at full speed). */
#define PIECE_SCORES ((size_t)1 << 16)

typedef struct {
    double *weights;
    const double *s;
    const attn_mask *mask;
    size_t Nq, Nk, rows_per_piece, pieces_per_example, pieces;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t scored;    /* pieces whose scores are made (the caller) */
    size_t softmaxed; /* pieces whose weights are made (the helper) */
    int stop;         /* the caller gives up: no more pieces come */
    attn_status st;   /* the helper's failure, first in row order */
    attn_fault fault;
} pipeline;

/* Rows [*begin, *end) of (B·Nq) in piece t. */
static void piece_rows(const pipeline *p, size_t t, size_t *begin,
                       size_t *end) {
    size_t b = t / p->pieces_per_example;
    size_t i = t % p->pieces_per_example * p->rows_per_piece;
    size_t n = p->Nq - i < p->rows_per_piece ? p->Nq - i : p->rows_per_piece;
    *begin = b * p->Nq + i;
    *end = *begin + n;
}

/* The helper: the softmax of each piece once its scores are made. */
static void *softmax_pieces(void *arg) {
    pipeline *p = arg;
    for (size_t t = 0; t < p->pieces; t++) {
        pthread_mutex_lock(&p->mu);
        while (p->scored <= t && !p->stop)
            pthread_cond_wait(&p->cv, &p->mu);
        int stop = p->stop;
        pthread_mutex_unlock(&p->mu);
        if (stop)
            return NULL;
        size_t begin, end;
        piece_rows(p, t, &begin, &end);
        attn_fault fault = {0};
        attn_status st = attn_softmax_rows(p->weights, p->s, p->mask, p->Nq,
                                           p->Nk, begin, end, &fault);
        pthread_mutex_lock(&p->mu);
        if (st != ATTN_OK) {
            p->st = st;
            p->fault = fault;
            p->softmaxed = p->pieces; /* nothing more comes */
        } else {
            p->softmaxed = t + 1;
        }
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
        if (st != ATTN_OK)
            return NULL;
    }
    return NULL;
}

/* Steps 1 to 4 of attn_dot_forward for large calls, in pieces of rows:
 * while the caller multiplies the next piece's Q Kᵀ (and then each
 * finished piece's weights · V), the helper takes the softmax of the
 * pieces whose scores are ready; BLAS keeps the one thread it had. The
 * same operations on the same rows as one after the other, so the same
 * results and the same first failure. Returns -1 when no thread could be
 * started (nothing is done then). */
static int dot_pipelined(attn_status *st, double *out, double *weights,
                         double *s, const double *q, const double *k,
                         const double *v, const attn_mask *mask, double scale,
                         size_t B, size_t Nq, size_t Nk, size_t d, size_t dv,
                         attn_fault *fault) {
    pipeline p = {.weights = weights, .s = s, .mask = mask, .Nq = Nq, .Nk = Nk};
    p.rows_per_piece = PIECE_SCORES / Nk ? PIECE_SCORES / Nk : 1;
    p.pieces_per_example = (Nq + p.rows_per_piece - 1) / p.rows_per_piece;
    p.pieces = B * p.pieces_per_example;
    p.st = ATTN_OK;
    if (pthread_mutex_init(&p.mu, NULL) != 0)
        return -1;
    if (pthread_cond_init(&p.cv, NULL) != 0) {
        pthread_mutex_destroy(&p.mu);
        return -1;
    }
    pthread_t helper;
    if (pthread_create(&helper, NULL, softmax_pieces, &p) != 0) {
        pthread_cond_destroy(&p.cv);
        pthread_mutex_destroy(&p.mu);
        return -1;
    }
    /* 1. the scores of every piece, in order, each handed over when made */
    for (size_t t = 0; t < p.pieces; t++) {
        size_t begin, end;
        piece_rows(&p, t, &begin, &end);
        size_t b = begin / Nq;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)(end - begin),
                    (int)Nk, (int)d, scale, q + begin * d, (int)d,
                    k + b * Nk * d, (int)d, 0.0, s + begin * Nk, (int)Nk);
        pthread_mutex_lock(&p.mu);
        p.scored = t + 1;
        int failed = p.st != ATTN_OK;
        pthread_cond_broadcast(&p.cv);
        pthread_mutex_unlock(&p.mu);
        if (failed)
            break;
    }
    /* 4. out = weights · V for each piece whose weights are made */
    attn_status got = ATTN_OK;
    for (size_t t = 0; t < p.pieces && got == ATTN_OK; t++) {
        pthread_mutex_lock(&p.mu);
        while (p.softmaxed <= t)
            pthread_cond_wait(&p.cv, &p.mu);
        got = p.st;
        pthread_mutex_unlock(&p.mu);
        if (got != ATTN_OK)
            break;
        size_t begin, end;
        piece_rows(&p, t, &begin, &end);
        size_t b = begin / Nq;
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
                    (int)(end - begin), (int)dv, (int)Nk, 1.0,
                    weights + begin * Nk, (int)Nk, v + b * Nk * dv, (int)dv,
                    0.0, out + begin * dv, (int)dv);
    }
    pthread_mutex_lock(&p.mu);
    p.stop = 1;
    pthread_cond_broadcast(&p.cv);
    pthread_mutex_unlock(&p.mu);
    pthread_join(helper, NULL);
    pthread_cond_destroy(&p.cv);
    pthread_mutex_destroy(&p.mu);
    if (got != ATTN_OK) {
        if (fault)
            *fault = p.fault;
        *st = got;
        return 0;
    }
    *st = attn_check_finite(out, B * Nq * dv, fault);
    return 0;
}

attn_status attn_dot_forward(double *out, double *weights, double *scores,
                             const double *q, const double *k, const double *v,
                             const attn_mask *mask, double scale, size_t B,
                             size_t Nq, size_t Nk, size_t d, size_t dv,
                             attn_fault *fault) {
    attn_status st =
        dot_check(out, weights, q, k, v, mask, scale, B, Nq, Nk, d, dv, fault);
    if (st != ATTN_OK)
        return st;
    if (!attn_blas_dim_ok(Nq) || !attn_blas_dim_ok(Nk) ||
        !attn_blas_dim_ok(d) || !attn_blas_dim_ok(dv))
        return ATTN_E_OVERFLOW;
    const int nq = (int)Nq, nk = (int)Nk, nd = (int)d;
    double *s = scores ? scores : weights;
    if (B * Nq * Nk >= PIPELINE_SCORES &&
        dot_pipelined(&st, out, weights, s, q, k, v, mask, scale, B, Nq, Nk, d,
                      dv, fault) == 0)
        return st;

    /* 1. s_b = Q_b K_bᵀ · scale, one (Nq, d) x (d, Nk) product per example */
    for (size_t b = 0; b < B; b++)
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nq, nk, nd, scale,
                    q + b * Nq * d, nd, k + b * Nk * d, nd, 0.0,
                    s + b * Nq * Nk, nk);

    /* 2. mask and 3. stable softmax (rejects non-finite visible scores) */
    st = attn_softmax_masked(weights, s, mask, B, Nq, Nk, fault);
    if (st != ATTN_OK)
        return st;

    /* 4. out_b = weights_b V_b, (Nq, Nk) x (Nk, dv) per example */
    return attn_pool_values(out, weights, v, B, Nq, Nk, dv, fault);
}

attn_status attn_dot_forward_ref(double *out, double *weights, double *scores,
                                 const double *q, const double *k,
                                 const double *v, const attn_mask *mask,
                                 double scale, size_t B, size_t Nq, size_t Nk,
                                 size_t d, size_t dv, attn_fault *fault) {
    attn_status st =
        dot_check(out, weights, q, k, v, mask, scale, B, Nq, Nk, d, dv, fault);
    if (st != ATTN_OK)
        return st;
    double *s = scores ? scores : weights;

    /* 1. s[b, i, j] = (q[b, i, :] · k[b, j, :]) · scale */
    for (size_t b = 0; b < B; b++) {
        for (size_t i = 0; i < Nq; i++) {
            const double *qi = q + (b * Nq + i) * d;
            for (size_t j = 0; j < Nk; j++) {
                const double *kj = k + (b * Nk + j) * d;
                double acc = 0.0;
                for (size_t c = 0; c < d; c++)
                    acc += qi[c] * kj[c];
                s[(b * Nq + i) * Nk + j] = acc * scale;
            }
        }
    }

    /* 2. mask and 3. stable softmax */
    st = attn_softmax_masked(weights, s, mask, B, Nq, Nk, fault);
    if (st != ATTN_OK)
        return st;

    /* 4. out[b, i, :] = Σ_j weights[b, i, j] v[b, j, :] */
    return attn_pool_values_ref(out, weights, v, B, Nq, Nk, dv, fault);
}
