/*
 * additive.c — additive (Bahdanau) attention (d2l 11.3.3; Bahdanau, Cho &
 * Bengio 2014): score(q, k) = w_vᵀ tanh(W_q q + W_k k). Queries and keys are
 * projected once each with cblas_dgemm; the scores are then summed pair by
 * pair, so the (B, Nq, Nk, h) features of the textbook's broadcast are never
 * stored. Each feature tanh(a + b) = n / (n + 2), n = e^2a e^2b - 1, comes
 * from the projections' exponentials (and their expm1, where n would
 * cancel): B·(Nq+Nk)·h exponentials instead of B·Nq·Nk·h tanh
 * (lib/vmath.c), unless a projection is too large for that (then tanh
 * itself). A plain-loop reference is kept beside it as the test oracle.
 */
#include "attn_internal.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>

/* Features (doubles) made at once in the forward pass: 32 KB, within a
 * core's L1 or L2 cache. A second thread is started for 2^18 features and
 * more (about 0.15 ms of features and their dot products). */
#define FEATURES_PER_BLOCK 4096
#define FEATURES_PER_THREAD ((size_t)1 << 18)
/* Projections turned into exponentials at once: about 5 ms, between two
 * looks at the deadline. */
#define EXP_PER_BLOCK ((size_t)1 << 20)

attn_status attn_additive_workspace(size_t *bytes, size_t B, size_t Nq,
                                    size_t Nk, size_t h) {
    if (!bytes || B == 0 || Nq == 0 || Nk == 0 || h == 0)
        return ATTN_E_INVALID_ARG;
    size_t nq, nk, rows, doubles;
    /* projected queries (B·Nq, h) and projected keys (B·Nk, h), and beside
     * them the exp and expm1 of twice each (the features' exponential
     * form) */
    if (attn_size_mul(&nq, B, Nq) != ATTN_OK ||
        attn_size_mul(&nk, B, Nk) != ATTN_OK ||
        attn_size_add(&rows, nq, nk) != ATTN_OK ||
        attn_size_mul(&doubles, rows, h) != ATTN_OK ||
        attn_size_mul(&doubles, doubles, 3) != ATTN_OK ||
        attn_size_mul(bytes, doubles, sizeof(double)) != ATTN_OK)
        return ATTN_E_OVERFLOW;
    return ATTN_OK;
}

/* Arguments, sizes (overflow-checked) and valid_lens, before any work. */
static attn_status additive_check(const double *out, const double *weights,
                                  const double *q, const double *k,
                                  const double *v, const double *W_q,
                                  const double *W_k, const double *w_v,
                                  const attn_mask *mask, size_t B, size_t Nq,
                                  size_t Nk, size_t dq, size_t dk, size_t dv,
                                  size_t h, attn_fault *fault) {
    attn_fault_clear(fault);
    if (!out || !weights || !q || !k || !v || !W_q || !W_k || !w_v)
        return ATTN_E_INVALID_ARG;
    if (B == 0 || Nq == 0 || Nk == 0 || dq == 0 || dk == 0 || dv == 0 || h == 0)
        return ATTN_E_INVALID_ARG;
    const size_t shapes[][3] = {{B, Nq, dq}, {B, Nk, dk}, {B, Nk, dv},
                                {1, h, dq},  {1, h, dk},  {B, Nq, Nk},
                                {B, Nq, dv}};
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        size_t n;
        if (attn_size_prod(&n, shapes[t], 3) != ATTN_OK)
            return ATTN_E_OVERFLOW;
    }
    size_t bytes;
    attn_status st = attn_additive_workspace(&bytes, B, Nq, Nk, h);
    if (st != ATTN_OK)
        return st;
    return attn_mask_check(mask, B, Nq, Nk, fault);
}

typedef struct {
    const double *pq, *pk, *w_v; /* (B·Nq, h), (B·Nk, h), (h) */
    const double *eq, *ek;       /* with exp_form: exp(2·projection) */
    const double *mq, *mk;       /* and expm1(2·projection) */
    double *s;                   /* (B, Nq, Nk) */
    size_t Nq, Nk, h;
    int exp_form; /* features from eq, ek, mq and mk */
    int nomem;    /* set when a range could not get its scratch */
    int expired;  /* set when a range stopped at the deadline */
} scores_job;

/* Scores of the query rows [begin, end) of (B·Nq): for each, the features
 * of a block of keys at once (about 32 KB), then their scores as one
 * matrix-vector product. */
static void additive_scores(void *ctx, size_t begin, size_t end) {
    scores_job *job = ctx;
    size_t Nq = job->Nq, Nk = job->Nk, h = job->h;
    size_t block = FEATURES_PER_BLOCK / h ? FEATURES_PER_BLOCK / h : 1;
    block = block < Nk ? block : Nk;
    double *feat = malloc(block * h * sizeof *feat + block);
    if (!feat) {
        job->nomem = 1; /* one int, only ever set to 1 */
        return;
    }
    unsigned char *cancels = (unsigned char *)(feat + block * h); /* block */
    for (size_t row = begin; row < end; row++) {
        if (attn_deadline_passed()) {
            job->expired = 1; /* one int, only ever set to 1 */
            break;
        }
        size_t b = row / Nq;
        const double *pqi = job->pq + row * h;
        double *si = job->s + row * Nk;
        for (size_t j0 = 0; j0 < Nk; j0 += block) {
            size_t n = Nk - j0 < block ? Nk - j0 : block;
            const double *pkj = job->pk + (b * Nk + j0) * h;
            if (job->exp_form) {
                size_t qi = row * h, kj = (b * Nk + j0) * h;
                attn_tanh_add_exp_rows(feat, cancels, pqi, job->eq + qi,
                                       job->mq + qi, pkj, job->ek + kj,
                                       job->mk + kj, n, h);
                for (size_t r = 0; r < n; r++)
                    if (cancels[r])
                        attn_tanh_add_cancel_row(feat + r * h, pqi, pkj + r * h,
                                                 h);
            } else {
                attn_tanh_add_rows(feat, pqi, pkj, n, h);
            }
            cblas_dgemv(CblasRowMajor, CblasNoTrans, (int)n, (int)h, 1.0, feat,
                        (int)h, job->w_v, 1, 0.0, si + j0, 1);
        }
    }
    free(feat);
}

/* 1 when every projection is within ±ATTN_TANH_EXP_MAX (NaN is not). */
static int exp_form_fits(const double *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!(fabs(x[i]) <= ATTN_TANH_EXP_MAX))
            return 0;
    return 1;
}

/* e = exp(2x) and m = expm1(2x), for attn_tanh_add_exp_rows. */
static void to_exp_form(double *e, double *m, const double *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        e[i] = 2.0 * x[i]; /* exact */
    attn_exp_expm1_n(e, m, e, n);
}

attn_status attn_additive_project(double *p, double *e, double *m,
                                  int *exp_form, const double *q,
                                  const double *k, const double *W_q,
                                  const double *W_k, size_t B, size_t Nq,
                                  size_t Nk, size_t dq, size_t dk, size_t h) {
    /* 1. projections: p = [q W_qᵀ (B·Nq, h) | k W_kᵀ (B·Nk, h)], in
     *    blocks that stop at the deadline */
    if (attn_project_rows(p, q, W_q, B * Nq, dq, h) != ATTN_OK ||
        attn_project_rows(p + B * Nq * h, k, W_k, B * Nk, dk, h) != ATTN_OK)
        return ATTN_E_DEADLINE;
    /* 2. their exponentials, when every projection allows them (made in
     *    blocks, the deadline checked between them) */
    size_t np = B * (Nq + Nk) * h;
    *exp_form = exp_form_fits(p, np);
    for (size_t i0 = 0; *exp_form && i0 < np; i0 += EXP_PER_BLOCK) {
        if (attn_deadline_passed())
            return ATTN_E_DEADLINE;
        size_t n = np - i0 < EXP_PER_BLOCK ? np - i0 : EXP_PER_BLOCK;
        to_exp_form(e + i0, m + i0, p + i0, n);
    }
    return ATTN_OK;
}

attn_status attn_additive_forward(double *out, double *weights, double *scores,
                                  const double *q, const double *k,
                                  const double *v, const double *W_q,
                                  const double *W_k, const double *w_v,
                                  const attn_mask *mask, size_t B, size_t Nq,
                                  size_t Nk, size_t dq, size_t dk, size_t dv,
                                  size_t h, attn_fault *fault) {
    attn_status st = additive_check(out, weights, q, k, v, W_q, W_k, w_v, mask,
                                    B, Nq, Nk, dq, dk, dv, h, fault);
    if (st != ATTN_OK)
        return st;
    const size_t dims[] = {B * Nq, B * Nk, Nk, dq, dk, dv, h};
    for (size_t t = 0; t < sizeof dims / sizeof dims[0]; t++) {
        if (!attn_blas_dim_ok(dims[t]))
            return ATTN_E_OVERFLOW;
    }
    size_t bytes;
    attn_additive_workspace(&bytes, B, Nq, Nk, h); /* checked above */
    double *pq = malloc(bytes);
    if (!pq)
        return ATTN_E_NOMEM;
    double *pk = pq + B * Nq * h;
    double *s = scores ? scores : weights;

    /* 1. the projections pq, pk and their exponential form */
    size_t np = B * (Nq + Nk) * h; /* pk follows pq, then eq, ek, mq, mk */
    double *eq = pq + np, *mq = eq + np;
    int exp_form;
    if (attn_additive_project(pq, eq, mq, &exp_form, q, k, W_q, W_k, B, Nq, Nk,
                              dq, dk, h) != ATTN_OK) {
        free(pq);
        return ATTN_E_DEADLINE;
    }

    /* 2. s[b, i, j] = Σ_c w_v[c] tanh(pq[b, i, c] + pk[b, j, c]), the
     *    queries shared out over the cores when there are many features;
     *    from the projections' exponentials when they allow it */
    scores_job job = {pq, pk, w_v, eq, eq + B * Nq * h, mq, mq + B * Nq * h,
                      s,  Nq, Nk,  h,  exp_form,        0,  0};
    size_t per_query = Nk * h;
    attn_parallel_for(B * Nq, FEATURES_PER_THREAD / per_query + 1,
                      additive_scores, &job);
    free(pq);
    if (job.nomem)
        return ATTN_E_NOMEM;
    if (job.expired)
        return ATTN_E_DEADLINE;

    /* 3. mask and stable softmax (rejects non-finite visible scores) */
    st = attn_softmax_masked(weights, s, mask, B, Nq, Nk, fault);
    if (st != ATTN_OK)
        return st;

    /* 4. out_b = weights_b V_b, (Nq, Nk) x (Nk, dv) */
    return attn_pool_values(out, weights, v, B, Nq, Nk, dv, fault);
}

attn_status attn_additive_forward_ref(
    double *out, double *weights, double *scores, const double *q,
    const double *k, const double *v, const double *W_q, const double *W_k,
    const double *w_v, const attn_mask *mask, size_t B, size_t Nq, size_t Nk,
    size_t dq, size_t dk, size_t dv, size_t h, attn_fault *fault) {
    attn_status st = additive_check(out, weights, q, k, v, W_q, W_k, w_v, mask,
                                    B, Nq, Nk, dq, dk, dv, h, fault);
    if (st != ATTN_OK)
        return st;
    double *s = scores ? scores : weights;

    /* 1.-2. s[b, i, j] = Σ_c w_v[c] tanh(W_q[c, :] · q_i + W_k[c, :] · k_j),
     * every projection recomputed per pair (no scratch) */
    for (size_t b = 0; b < B; b++) {
        for (size_t i = 0; i < Nq; i++) {
            const double *qi = q + (b * Nq + i) * dq;
            for (size_t j = 0; j < Nk; j++) {
                const double *kj = k + (b * Nk + j) * dk;
                double acc = 0.0;
                for (size_t c = 0; c < h; c++) {
                    double fq = 0.0, fk = 0.0;
                    for (size_t t = 0; t < dq; t++)
                        fq += W_q[c * dq + t] * qi[t];
                    for (size_t t = 0; t < dk; t++)
                        fk += W_k[c * dk + t] * kj[t];
                    acc += w_v[c] * tanh(fq + fk);
                }
                s[(b * Nq + i) * Nk + j] = acc;
            }
        }
    }

    /* 3. mask and stable softmax */
    st = attn_softmax_masked(weights, s, mask, B, Nq, Nk, fault);
    if (st != ATTN_OK)
        return st;

    /* 4. out[b, i, :] = Σ_j weights[b, i, j] v[b, j, :] */
    return attn_pool_values_ref(out, weights, v, B, Nq, Nk, dv, fault);
}
