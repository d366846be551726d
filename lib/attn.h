/*
 * attn.h — libattn, the attention library behind attnd.
 *
 * Pure computation: no HTTP, no JSON, no printing, no exit. Every function
 * returns an attn_status; attn_status_str() gives its text.
 *
 * Conventions for every tensor argument:
 *   - doubles, row-major, outermost axis first, contiguous;
 *   - shape names B (batch), Nq (queries), Nk (keys = values), d (query/key
 *     features), dq/dk (when they may differ), dv (value features),
 *     h (hidden units), H (heads), n (training pairs), m (NW queries);
 *   - every size is >= 1, else ATTN_E_INVALID_ARG;
 *   - the caller owns every buffer; the library allocates only internal
 *     scratch (sized by the *_workspace functions) and frees it before return;
 *   - output buffers are written only on ATTN_OK (partial writes on error are
 *     possible and must be ignored by the caller).
 *
 * Formulas follow "Dive into Deep Learning" (d2l.ai), chapter "Attention
 * Mechanisms and Transformers", and PyTorch where the book is silent.
 */
#ifndef ATTN_H
#define ATTN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- status */

typedef enum {
    ATTN_OK = 0,
    ATTN_E_INVALID_ARG,  /* NULL buffer, zero size, scale/w/lr not finite > 0 */
    ATTN_E_OVERFLOW,     /* a size overflows size_t (or BLAS int) */
    ATTN_E_NOMEM,        /* internal scratch allocation failed */
    ATTN_E_VALID_LEN,    /* a valid_lens entry is < 0 or > Nk; fault->index */
    ATTN_E_FULLY_MASKED, /* policy ERROR and a query sees no key; fault set */
    ATTN_E_NONFINITE,    /* a result overflowed to inf or NaN */
    ATTN_E_ZERO_MASS, /* NW query with zero kernel mass; fault->index = query */
    ATTN_E_BAD_STEP,  /* NW fit step made w <= 0 or non-finite; fault->index =
                         epoch (from 1) */
    ATTN_E_TOO_FEW, /* NW needs more points (train_loo n < 2, bandwidth rule) */
    ATTN_E_DEADLINE /* the calling thread's deadline passed mid-call
                       (attn_deadline_set); the outputs are unspecified */
} attn_status;

/* Static English text for a status; never NULL ("unknown status" for
 * values outside the enum). */
const char *attn_status_str(attn_status s);

/* Where an error happened, for the caller to point at the faulty field.
 * Every fault argument may be NULL; when given, it is reset to {0} first.
 * index: flat index whose meaning each function documents.
 * by_causal: for ATTN_E_FULLY_MASKED, 1 when the row's valid_len alone
 * would leave keys visible and only the causal mask empties it.
 * by_mask: for ATTN_E_FULLY_MASKED, 0 when valid_lens and causal alone
 * empty the row (by_causal says which); ATTN_BY_ATTN_MASK when they leave
 * keys but the boolean or float attn_mask (with the key padding or not)
 * hides them all; ATTN_BY_KEY_PADDING when key_padding_mask alone does.
 * head: for ATTN_E_FULLY_MASKED from the multi-head functions, the head
 * t of the row (0 elsewhere). */
typedef struct {
    size_t index;
    int by_causal;
    int by_mask;
    size_t head;
} attn_fault;

#define ATTN_BY_ATTN_MASK 1
#define ATTN_BY_KEY_PADDING 2

/* -------------------------------------------------------------- deadline */

/* A time limit for the calls this thread makes from now on: once
 * attn_clock_seconds() passes `at`, the long loops of every call (over
 * examples, heads, query rows, epochs and bandwidth candidates, and the
 * threads a call starts) stop at their next check and the call returns
 * ATTN_E_DEADLINE. at = 0 clears it. A check costs one clock read; the
 * work between two checks is one row of a call, or one BLAS product. */
void attn_deadline_set(double at);

/* From now on, every thread's deadline has passed, set or not: the calls
 * in progress stop at their next check (a process that is stopping). */
void attn_deadline_cancel_all(void);

/* Seconds on CLOCK_MONOTONIC, the clock of attn_deadline_set. */
double attn_clock_seconds(void);

/* ------------------------------------------------------------ size maths */

/* *out = a * b, or ATTN_E_OVERFLOW (then *out is untouched). */
attn_status attn_size_mul(size_t *out, size_t a, size_t b);
/* *out = a + b, or ATTN_E_OVERFLOW. */
attn_status attn_size_add(size_t *out, size_t a, size_t b);
/* *out = product of dims[0..n-1] (1 for n == 0), or ATTN_E_OVERFLOW. */
attn_status attn_size_prod(size_t *out, const size_t *dims, size_t n);

/* ---------------------------------------------------------------- masks */

typedef enum {
    ATTN_CAUSAL_NONE = 0,
    ATTN_CAUSAL_TOP_LEFT, /* query i sees key j iff j <= i (PyTorch is_causal)
                           */
    ATTN_CAUSAL_BOTTOM_RIGHT /* query i sees key j iff j <= i + Nk - Nq (KV
                                cache) */
} attn_causal;

typedef enum {
    ATTN_FULLY_MASKED_ZERO = 0, /* all-zero weights (current PyTorch SDPA) */
    ATTN_FULLY_MASKED_UNIFORM,  /* 1/Nk over all keys (d2l's fill -1e6) */
    ATTN_FULLY_MASKED_ERROR     /* ATTN_E_FULLY_MASKED */
} attn_fully_masked;

/* Where a boolean or float attn_mask's (Nq, Nk) slabs come from (PyTorch
 * nn.MultiheadAttention's attn_mask layouts):
 *   SHARED       (Nq, Nk): one slab for every example (and head);
 *   PER_EXAMPLE  (B, Nq, Nk): slab b for example b;
 *   PER_HEAD     (B·H, Nq, Nk): slab b·H + t for head t of example b, the
 *                3-D attn_mask of nn.MultiheadAttention. Functions without
 *                heads have H = 1, where it is PER_EXAMPLE. */
typedef enum {
    ATTN_MASK_SHARED = 0,
    ATTN_MASK_PER_EXAMPLE,
    ATTN_MASK_PER_HEAD
} attn_mask_layout;

/* Which keys each query may see. Key j is visible to query i of example b
 * (head t) iff every mask given admits it:
 *   valid_lens: NULL (all visible), or (B) when per_query == 0, or (B, Nq)
 *               when per_query == 1; each entry in 0 ... Nk: j < valid_len;
 *   causal:     the rule of attn_causal;
 *   bool_mask:  NULL, or bytes laid out as `layout` says, nonzero = NOT
 *               allowed (nn.MultiheadAttention's polarity; the boolean
 *               attn_mask of torch.nn.functional.scaled_dot_product_attention
 *               is the opposite, True = takes part: pass its negation);
 *   float_mask: NULL, or doubles laid out as `layout` says, added to the
 *               scaled scores before the softmax (PyTorch's float
 *               attn_mask); -inf = NOT allowed. An entry that is NaN or
 *               +inf makes its score non-finite (ATTN_E_NONFINITE);
 *   key_padding_mask: NULL, or (B, Nk) bytes, nonzero = key j of example
 *               b is padding and NOT allowed (nn.MultiheadAttention's).
 * bool_mask and float_mask may both be given; `layout` is theirs.
 * A row with no visible key follows fully_masked, whichever masks empty it.
 * A zero-initialised attn_mask means "no mask, fully masked rows zero";
 * without bool_mask, float_mask and key_padding_mask every row's visible
 * keys are a prefix, the fast case. */
typedef struct {
    const int64_t *valid_lens;
    int per_query;
    attn_causal causal;
    attn_fully_masked fully_masked;
    const unsigned char *bool_mask;
    const double *float_mask;
    attn_mask_layout layout;
    const unsigned char *key_padding_mask;
} attn_mask;

/* ------------------------------------------------------- masked softmax */

/* Masked softmax over the last axis (d2l 11.3.1 "Masked Softmax Operation").
 *   scores: (B, Nq, Nk) -> weights: (B, Nq, Nk); weights may alias scores.
 * A float mask is added to the scores first (scores + float_mask).
 * Stable for every finite score (row maximum over visible keys subtracted);
 * masked weights are exactly 0; no fill value is used, so a visible score of
 * -1e300 still beats a masked key. Fully masked rows follow
 * mask->fully_masked. mask may be NULL (no mask); a PER_HEAD layout is
 * PER_EXAMPLE here (H = 1).
 * Errors: ATTN_E_INVALID_ARG; ATTN_E_OVERFLOW; ATTN_E_VALID_LEN (fault->index
 * = flat index into valid_lens); ATTN_E_FULLY_MASKED (fault->index = flat row
 * b*Nq + i, fault->by_causal, fault->by_mask); ATTN_E_NONFINITE (a visible
 * score, with its float mask entry added, is inf/NaN, fault->index into
 * scores; masked scores are never read). */
attn_status attn_softmax_masked(double *weights, const double *scores,
                                const attn_mask *mask, size_t B, size_t Nq,
                                size_t Nk, attn_fault *fault);

/* Validate the mask's enums (per_query, causal, fully_masked, layout) and
 * valid_lens (entries in 0 ... Nk); same errors as above. The pattern
 * masks' contents need no check. */
attn_status attn_mask_check(const attn_mask *mask, size_t B, size_t Nq,
                            size_t Nk, attn_fault *fault);

/* 1 if key j is visible to query i of example b under mask (NULL: all),
 * for functions without heads (H = 1). */
int attn_mask_visible(const attn_mask *mask, size_t b, size_t i, size_t j,
                      size_t Nq, size_t Nk);

/* The same for head t of H (a PER_HEAD mask differs per head). */
int attn_mask_visible_head(const attn_mask *mask, size_t b, size_t t, size_t H,
                           size_t i, size_t j, size_t Nq, size_t Nk);

/* The scores the softmax sees: masked[b, t, i, j] = scores[b, t, i, j] +
 * float_mask (0 without one) where key j is visible, -inf where it is not.
 *   scores: (B, H, Nq, Nk) -> masked: (B, H, Nq, Nk), may alias scores;
 *   H = 1 for functions without heads. mask may be NULL (a copy).
 * Errors: ATTN_E_INVALID_ARG (NULL buffer, zero size, as attn_mask_check);
 * ATTN_E_OVERFLOW; ATTN_E_VALID_LEN. */
attn_status attn_mask_apply(double *masked, const double *scores,
                            const attn_mask *mask, size_t B, size_t H,
                            size_t Nq, size_t Nk, attn_fault *fault);

/* -------------------------------------------- scaled dot-product attention */

/* 1/sqrt(d), the default scale (d2l 11.3.2, Vaswani et al. 2017). */
double attn_dot_default_scale(size_t d);

/* Scaled dot-product attention: out = softmax(mask(Q Kᵀ · scale)) V.
 *   q: (B, Nq, d)  k: (B, Nk, d)  v: (B, Nk, dv)
 *   -> out: (B, Nq, dv), weights: (B, Nq, Nk),
 *      scores: (B, Nq, Nk) or NULL — Q Kᵀ · scale before masking.
 * scale: finite > 0 (attn_dot_default_scale(d) for the textbook's).
 * Q Kᵀ and weights·V go through cblas_dgemm per example.
 * Errors: as attn_softmax_masked; ATTN_E_INVALID_ARG for scale;
 * ATTN_E_NONFINITE when a visible score (fault->index into scores) or an
 * output (fault->index into out) overflows. Source: d2l 11.3.2. */
attn_status attn_dot_forward(double *out, double *weights, double *scores,
                             const double *q, const double *k, const double *v,
                             const attn_mask *mask, double scale, size_t B,
                             size_t Nq, size_t Nk, size_t d, size_t dv,
                             attn_fault *fault);

/* Plain-loop reference of attn_dot_forward (test oracle); same contract. */
attn_status attn_dot_forward_ref(double *out, double *weights, double *scores,
                                 const double *q, const double *k,
                                 const double *v, const attn_mask *mask,
                                 double scale, size_t B, size_t Nq, size_t Nk,
                                 size_t d, size_t dv, attn_fault *fault);

/* ------------------------------------------------- additive attention */

/* Scratch bytes attn_additive_forward will allocate, or ATTN_E_OVERFLOW. */
attn_status attn_additive_workspace(size_t *bytes, size_t B, size_t Nq,
                                    size_t Nk, size_t h);

/* Additive (Bahdanau) attention: score(q, k) = w_vᵀ tanh(W_q q + W_k k).
 *   q: (B, Nq, dq)  k: (B, Nk, dk)  v: (B, Nk, dv)
 *   W_q: (h, dq)  W_k: (h, dk)  w_v: (h)   (nn.Linear weight layout)
 *   -> out: (B, Nq, dv), weights: (B, Nq, Nk), scores: (B, Nq, Nk) or NULL.
 * Projections go through one dgemm each; the (B, Nq, Nk, h) features are
 * never materialised (extra memory is attn_additive_workspace()).
 * Errors: as attn_dot_forward. Source: d2l 11.3.3; Bahdanau et al. 2014. */
attn_status attn_additive_forward(double *out, double *weights, double *scores,
                                  const double *q, const double *k,
                                  const double *v, const double *W_q,
                                  const double *W_k, const double *w_v,
                                  const attn_mask *mask, size_t B, size_t Nq,
                                  size_t Nk, size_t dq, size_t dk, size_t dv,
                                  size_t h, attn_fault *fault);

/* Plain-loop reference of attn_additive_forward (test oracle). */
attn_status attn_additive_forward_ref(
    double *out, double *weights, double *scores, const double *q,
    const double *k, const double *v, const double *W_q, const double *W_k,
    const double *w_v, const attn_mask *mask, size_t B, size_t Nq, size_t Nk,
    size_t dq, size_t dk, size_t dv, size_t h, attn_fault *fault);

/* ------------------------------------ Nadaraya–Watson kernel regression */

typedef enum {
    ATTN_KERNEL_GAUSSIAN = 0, /* K(u) = exp(-u²/2) */
    ATTN_KERNEL_CONSTANT,     /* K(u) = 1 (average pooling) */
    ATTN_KERNEL_BOXCAR,       /* K(u) = 1 if |u| < 1 else 0 */
    ATTN_KERNEL_EPANECHNIKOV, /* K(u) = max(1 - u², 0) */
    ATTN_KERNEL_TRIANGULAR    /* K(u) = max(1 - |u|, 0) */
} attn_kernel;

/* Nadaraya–Watson prediction (d2l 11.2; seed §6):
 *   ŷ(x) = Σᵢ α(x, xᵢ) yᵢ,  α(x, xᵢ) = K((x − xᵢ)·w) / Σⱼ K((x − xⱼ)·w).
 *   x_query: (m)  x_train: (n)  y_train: (n, dv)  (dv = 1 for a vector y)
 *   -> pred: (m, dv), weights: (m, n).
 * w: finite > 0. The Gaussian is computed as a stable softmax of
 * -((x − xᵢ)w)²/2, so a huge w never gives 0/0.
 * Errors: ATTN_E_INVALID_ARG; ATTN_E_OVERFLOW; ATTN_E_ZERO_MASS (fault->index
 * = query index); ATTN_E_NONFINITE (fault->index = query index). */
attn_status attn_nw_predict(double *pred, double *weights,
                            const double *x_query, const double *x_train,
                            const double *y_train, attn_kernel kernel, double w,
                            size_t m, size_t n, size_t dv, attn_fault *fault);

/* Loss Σ_q Σ_c ½(ŷ − y)² and its analytic derivative ∂loss/∂w for the
 * Gaussian kernel (seed §10–11):
 *   ∂sᵢ/∂w = −(x − xᵢ)² w,  ∂αᵢ/∂w = αᵢ(∂sᵢ/∂w − Σⱼ αⱼ ∂sⱼ/∂w),
 *   ∂loss/∂w = Σ (ŷ − y) Σᵢ ∂αᵢ/∂w yᵢ.
 *   x_query: (m)  y_query: (m, dv)  x_train: (n)  y_train: (n, dv)
 *   -> *loss, *grad_w (grad_w may be NULL; then any kernel is allowed).
 * Errors: as attn_nw_predict; ATTN_E_INVALID_ARG for grad_w with a
 * non-Gaussian kernel. */
attn_status attn_nw_loss(double *loss, double *grad_w, const double *x_query,
                         const double *y_query, const double *x_train,
                         const double *y_train, attn_kernel kernel, double w,
                         size_t m, size_t n, size_t dv, attn_fault *fault);

typedef enum {
    ATTN_NW_FIT_TRAIN_LOO =
        0,            /* each x_train[i] queries the other n−1 pairs (d2l) */
    ATTN_NW_FIT_QUERY /* fit on (x_query, y_query) against the training pairs */
} attn_nw_fit_data;

typedef struct {
    size_t epoch; /* from 1 */
    double w;     /* w before this epoch's step */
    double loss;  /* loss at that w */
} attn_nw_epoch;

/* Gradient descent on w for the Gaussian kernel (d2l 11.2.4; seed §9):
 *   w ← w − lr · ∂loss/∂w, `epochs` times, starting from w0.
 *   history: (epochs) entries; *w_out = w after the last step.
 * ATTN_NW_FIT_QUERY needs x_query (m), y_query (m, dv); TRAIN_LOO ignores
 * them (may be NULL) and needs n >= 2 (else ATTN_E_TOO_FEW).
 * Errors: as attn_nw_loss; ATTN_E_BAD_STEP (fault->index = epoch, from 1)
 * when a step makes w <= 0 or non-finite. */
attn_status attn_nw_fit(double *w_out, attn_nw_epoch *history, double w0,
                        double lr, size_t epochs, attn_nw_fit_data data,
                        const double *x_train, const double *y_train,
                        const double *x_query, const double *y_query, size_t n,
                        size_t m, size_t dv, attn_fault *fault);

/* ------------------------------------------------ reproducible randomness */

/* xoshiro256** (Blackman & Vigna 2018) seeded by four splitmix64 outputs. */
typedef struct {
    uint64_t s[4];
} attn_rng;

void attn_rng_seed(attn_rng *rng, uint64_t seed);
uint64_t attn_rng_next(attn_rng *rng);
/* (next() >> 11) · 2⁻⁵³, in [0, 1). */
double attn_rng_uniform(attn_rng *rng);
/* n standard normals by Box–Muller pairs (cos first, then sin); a pair with
 * u1 == 0 is redrawn; an odd n drops the pair's second value. */
void attn_rng_normals(attn_rng *rng, double *out, size_t n);
/* Xavier-uniform (Glorot & Bengio 2010) for an (rows, cols) = (out, in)
 * matrix, row-major: a = sqrt(6 / (in + out)), entry = −a + 2a·uniform(). */
void attn_rng_xavier(attn_rng *rng, double *W, size_t rows, size_t cols);

/* The textbook's NW dataset (d2l 11.2.1; seed §4): n_train uniforms,
 * x = 5u sorted ascending; then n_train normals z;
 * y_train = f(x) + noise·z with f(x) = 2 sin(x) + x^0.8;
 * x_test[i] = i/10 for i = 0 … 49; y_truth = f(x_test).
 *   -> x_train, y_train: (n_train); x_test, y_truth: (50).
 * Errors: ATTN_E_INVALID_ARG (n_train == 0, noise not finite or < 0). */
#define ATTN_NW_DATASET_TEST 50
attn_status attn_nw_dataset(double *x_train, double *y_train, double *x_test,
                            double *y_truth, size_t n_train, double noise,
                            uint64_t seed);

/* ------------------------------------------------- multi-head attention */

/* Parameters of multi-head attention in nn.Linear weight layout (row o of a
 * weight maps the inputs to output feature o):
 *   W_q: (h, dq)  W_k: (h, dk)  W_v: (h, dv)  W_o: (d_out, h)
 *   b_q, b_k, b_v: (h) or NULL   b_o: (d_out) or NULL (no bias). */
typedef struct {
    const double *W_q, *W_k, *W_v, *W_o;
    const double *b_q, *b_k, *b_v, *b_o;
} attn_multihead_params;

/* Scratch bytes attn_multihead_forward allocates — the projections Q'
 * (B, Nq, h), K' and V' (B, Nk, h): 8·B·(Nq + 2·Nk)·h — or ATTN_E_OVERFLOW;
 * ATTN_E_INVALID_ARG when bytes is NULL. */
attn_status attn_multihead_workspace(size_t *bytes, size_t B, size_t Nq,
                                     size_t Nk, size_t h);

/* Multi-head attention (d2l 11.5; Vaswani et al. 2017; PyTorch
 * nn.MultiheadAttention):
 *   Q' = q·W_qᵀ + b_q,  K' = k·W_kᵀ + b_k,  V' = v·W_vᵀ + b_v   (…, h);
 *   head t uses features t·h/H … (t+1)·h/H − 1 of each (contiguous split);
 *   head_t = softmax(mask(Q'_t K'_tᵀ · scale)) V'_t, scale = 1/sqrt(h/H);
 *   out = concat(head_0 … head_{H−1})·W_oᵀ + b_o.
 *   q: (B, Nq, dq)  k: (B, Nk, dk)  v: (B, Nk, dv)
 *   -> out: (B, Nq, d_out), weights: (B, H, Nq, Nk) per head (never
 *      averaged), scores: (B, H, Nq, Nk) or NULL — Q'_t K'_tᵀ · scale
 *      before masking.
 * mask (NULL: none) applies to every head, as for attn_softmax_masked,
 * except that a PER_HEAD bool_mask or float_mask gives head t of example
 * b its slab b·H + t (nn.MultiheadAttention's 3-D attn_mask).
 * Projections and per-head products go through cblas_dgemm; extra memory
 * is attn_multihead_workspace().
 * Errors: ATTN_E_INVALID_ARG (NULL buffer or weight, a zero size, H not
 * dividing h); ATTN_E_OVERFLOW (a size product, or a dimension beyond
 * BLAS's int); ATTN_E_NOMEM; ATTN_E_VALID_LEN (fault->index into
 * valid_lens); ATTN_E_FULLY_MASKED (fault->index = b·Nq + i, the row of
 * valid_lens' (B, Nq) view, fault->by_causal, fault->by_mask, fault->head
 * = the row's head); ATTN_E_NONFINITE (a visible
 * score: fault->index into (B, H, Nq, Nk); else an output: fault->index
 * into out). */
attn_status attn_multihead_forward(
    double *out, double *weights, double *scores, const double *q,
    const double *k, const double *v, const attn_multihead_params *params,
    const attn_mask *mask, size_t B, size_t Nq, size_t Nk, size_t dq, size_t dk,
    size_t dv, size_t h, size_t H, size_t d_out, attn_fault *fault);

/* Plain-loop reference of attn_multihead_forward (test oracle); same
 * contract, allocates (B, Nq, h) more. */
attn_status attn_multihead_forward_ref(
    double *out, double *weights, double *scores, const double *q,
    const double *k, const double *v, const attn_multihead_params *params,
    const attn_mask *mask, size_t B, size_t Nq, size_t Nk, size_t dq, size_t dk,
    size_t dv, size_t h, size_t H, size_t d_out, attn_fault *fault);

/* Seeded parameters (API section 7): Xavier-uniform W_q (h, dq), W_k
 * (h, dk), W_v (h, dv), W_o (h, h) drawn in that order from rng by
 * attn_rng_xavier; d_out = h, no biases.
 * Errors: ATTN_E_INVALID_ARG (NULL, zero size); ATTN_E_OVERFLOW. */
attn_status attn_multihead_xavier(double *W_q, double *W_k, double *W_v,
                                  double *W_o, attn_rng *rng, size_t dq,
                                  size_t dk, size_t dv, size_t h);

/* ------------------------------------------- sinusoidal positional encoding */

/* P[i, 2j] = sin(i / 10000^(2j/D)), P[i, 2j+1] = cos(i / 10000^(2j/D))
 * (d2l 11.6.3; Vaswani et al. 2017 §3.5); an odd D ends with a sine column.
 *   -> P: (num_steps, D).
 * Errors: ATTN_E_INVALID_ARG (NULL, zero size); ATTN_E_OVERFLOW. */
attn_status attn_posenc_sinusoidal(double *P, size_t num_steps, size_t D);

/* -------------------------------------------------- NW bandwidth choice */

typedef enum {
    ATTN_NW_BW_SCOTT = 0, /* h = 1.059·A·n^(−1/5) */
    ATTN_NW_BW_SILVERMAN, /* h = 0.9·A·n^(−1/5) */
    ATTN_NW_BW_CV         /* leave-one-out least squares */
} attn_nw_bw_rule;

/* Leave-one-out squared error of NW regression at bandwidth h:
 *   sse = Σᵢ Σ_c (y[i, c] − ŷ₋ᵢ(xᵢ)[c])², ŷ₋ᵢ the NW prediction at xᵢ from
 *   the other n − 1 pairs with kernel argument u = (xᵢ − xⱼ)/h.
 *   x_train: (n)  y_train: (n, dv)  -> *sse.
 * A compact kernel's support is |xᵢ − xⱼ| < h, decided on the distance and
 * h themselves (not on how 1/h rounds); inside it u = |xᵢ − xⱼ|/h. The
 * Gaussian is shifted by the nearest other point, so its mass is never 0;
 * its weights below e^-64 of the nearest one's are dropped. Any finite
 * h > 0 works, as do x near ±DBL_MAX (x and h are then scaled by 1/4,
 * which changes no u). Works on a sorted copy of the pairs (allocated,
 * n·(dv + 4) doubles) and visits only the neighbours with a non-zero
 * weight.
 * Errors: ATTN_E_INVALID_ARG (NULL, zero size, h not finite > 0, unknown
 * kernel); ATTN_E_OVERFLOW; ATTN_E_NOMEM; ATTN_E_TOO_FEW (n < 2);
 * ATTN_E_ZERO_MASS (a compact kernel leaves xᵢ no other point:
 * fault->index = i; fault may be NULL); ATTN_E_NONFINITE (the sum
 * overflows). */
attn_status attn_nw_loo_sse(double *sse, const double *x_train,
                            const double *y_train, attn_kernel kernel, double h,
                            size_t n, size_t dv, attn_fault *fault);

/* Bandwidth h and w = 1/h for attn_nw_predict from the training pairs.
 *   x_train: (n)  y_train: (n, dv), used by ATTN_NW_BW_CV only (else may
 *   be NULL)  -> *h, *w.
 * Scott / Silverman (Scott 1992; Silverman 1986 eq. 3.31): A = min(sample
 * std (n − 1 divisor), IQR/1.349), quartiles linearly interpolated as
 * numpy.quantile's default; A = std when the IQR is 0. Computed on x
 * scaled by a power of two to unit size (the same roundings, no square or
 * sum under- or overflowing), so any x whose h and w are doubles works:
 * spacing 1e-300 or 1e300, values near ±DBL_MAX.
 * CV (Racine & Li 2004; statsmodels KernelReg reg_type='lc', bw='cv_ls'):
 * attn_nw_loo_sse minimised over 200 log-spaced h in [smallest positive
 * gap of x / 20, 100·(max x − min x)] (first minimum on ties), then refined
 * by golden-section search between the best point's neighbours until the
 * bracket is within 1e-6 of its midpoint; the best h evaluated is returned.
 * The candidates are computed in long double and rounded (correctly but
 * for about 1 in 400, one ulp off), on x scaled by a power of two when
 * |x| < 0.5 or > 2^1000, so that data spaced 1e-300 or 1e306 apart is
 * searched as at unit scale (an answer beyond doubles is
 * ATTN_E_NONFINITE). For a compact kernel the LOO error changes only
 * where h crosses a pair distance; when one lies within a few ulps of a
 * candidate (where rounding decides the side), the support on each side
 * is scored, at a point away from the distance, so the result is no worse
 * than the exact grid's best point (the boxcar's exactly, the others' up
 * to that 1e-12 step). The answer is then kept at least
 * 1e-12·h from every pair distance (within its plateau: for the boxcar
 * with the same error), so that reading it back as 1/w gives the same
 * support. An h at which a compact kernel leaves some xᵢ with zero mass is
 * never chosen (the largest candidate always covers every point).
 * Costs about 230 LOO evaluations, never more than 262 (200 candidates,
 * at most 62 golden-section steps; the edge checks above take at most 9
 * more, and golden section ends early rather than exceed 262), of up to
 * n² kernel terms (an exp each for the Gaussian): n = 1000 takes about
 * 1 s for the Gaussian, 0.3 s for the compact kernels on one core.
 * Errors: ATTN_E_INVALID_ARG (NULL, n == 0, non-finite x, unknown kernel or
 * rule; for CV: y_train NULL, dv == 0, kernel CONSTANT); ATTN_E_OVERFLOW;
 * ATTN_E_NOMEM; ATTN_E_TOO_FEW (fewer than 2 distinct x); ATTN_E_NONFINITE
 * (h or w not finite > 0 — h beyond DBL_MAX, or h so small that 1/h
 * overflows — or no CV candidate usable). */
attn_status attn_nw_bandwidth(double *h, double *w, const double *x_train,
                              const double *y_train, attn_kernel kernel,
                              attn_nw_bw_rule rule, size_t n, size_t dv);

/* ------------------------------------------- backward passes (gradients) */

/* Shared by every *_backward function below:
 *   - inputs are the forward pass's inputs and mask unchanged, its weights
 *     (not recomputed, not checked) and grad_out = dL/dout (the output's
 *     shape); each gradient output grad_X = dL/dX has X's shape and is
 *     overwritten (not accumulated into);
 *   - masked keys contribute zero; a fully masked row is a constant: no
 *     gradient reaches its scores, and its values receive 0 under
 *     ATTN_FULLY_MASKED_ZERO or 1/Nk of the row's grad_out under
 *     ATTN_FULLY_MASKED_UNIFORM;
 *   - errors: ATTN_E_INVALID_ARG (NULL buffer, zero size, as the forward);
 *     ATTN_E_OVERFLOW (a size product, or a dimension, including B·Nq and
 *     B·Nk, beyond BLAS's int); ATTN_E_NOMEM; ATTN_E_VALID_LEN
 *     (fault->index into valid_lens); ATTN_E_FULLY_MASKED under
 *     ATTN_FULLY_MASKED_ERROR (fault->index = b·Nq + i, fault->by_causal,
 *     fault->by_mask, fault->head for multi-head), all found before any
 *     work; ATTN_E_DEADLINE while looking for them (pattern masks); ATTN_E_NONFINITE when a gradient
 *     overflows: fault->index = flat offset of the first non-finite value
 *     in the gradients laid end to end in argument order (bias gradients
 *     that are not computed count for nothing). */

/* Masked softmax backward (d2l 11.3.1): for each row, over its visible
 * keys, grad_scores = weights ⊙ (grad_weights − Σ_j grad_weights ⊙
 * weights); masked keys and fully masked rows get exactly 0 (the gradient
 * of a float mask is that of its scores).
 *   grad_weights, weights: (B, Nq, Nk) -> grad_scores: (B, Nq, Nk);
 *   grad_scores may alias grad_weights. */
attn_status
attn_softmax_masked_backward(double *grad_scores, const double *grad_weights,
                             const double *weights, const attn_mask *mask,
                             size_t B, size_t Nq, size_t Nk, attn_fault *fault);

/* Scratch bytes attn_dot_backward allocates: one example's dL/dS,
 * 8·Nq·Nk; ATTN_E_INVALID_ARG (NULL, zero size), ATTN_E_OVERFLOW. */
attn_status attn_dot_backward_workspace(size_t *bytes, size_t Nq, size_t Nk);

/* Gradients of attn_dot_forward (d2l 11.3.2), per example:
 *   grad_v = Wᵀ dO,  dS = softmax_backward(dO Vᵀ),
 *   grad_q = scale · dS K,  grad_k = scale · dSᵀ Q   (four cblas_dgemm).
 *   grad_out: (B, Nq, dv)  weights: (B, Nq, Nk)  q: (B, Nq, d)
 *   k: (B, Nk, d)  v: (B, Nk, dv)
 *   -> grad_q: (B, Nq, d), grad_k: (B, Nk, d), grad_v: (B, Nk, dv).
 * scale: the forward's, finite > 0. Errors: as above. */
attn_status attn_dot_backward(double *grad_q, double *grad_k, double *grad_v,
                              const double *grad_out, const double *weights,
                              const double *q, const double *k, const double *v,
                              const attn_mask *mask, double scale, size_t B,
                              size_t Nq, size_t Nk, size_t d, size_t dv,
                              attn_fault *fault);

/* Scratch bytes attn_additive_backward allocates: projected queries and
 * keys and their gradients, 16·B·(Nq + Nk)·h, plus one example's dL/dS,
 * 8·Nq·Nk; never (B, Nq, Nk, h). ATTN_E_INVALID_ARG, ATTN_E_OVERFLOW. */
attn_status attn_additive_backward_workspace(size_t *bytes, size_t B, size_t Nq,
                                             size_t Nk, size_t h);

/* Gradients of attn_additive_forward (d2l 11.3.3; Bahdanau et al. 2014):
 * with t = tanh(W_q q_i + W_k k_j) per pair and dS = softmax_backward(dO
 * Vᵀ), grad_w_v = Σ dS_ij t, and dS_ij w_v ⊙ (1 − t²) summed into the
 * projected queries' and keys' gradients, which go back through W_q, W_k
 * by cblas_dgemm.
 *   grad_out: (B, Nq, dv)  weights: (B, Nq, Nk)  q: (B, Nq, dq)
 *   k: (B, Nk, dk)  v: (B, Nk, dv)  W_q: (h, dq)  W_k: (h, dk)  w_v: (h)
 *   -> grad_q, grad_k, grad_v, grad_W_q, grad_W_k, grad_w_v of the same
 *      shapes. Errors: as above. */
attn_status attn_additive_backward(
    double *grad_q, double *grad_k, double *grad_v, double *grad_W_q,
    double *grad_W_k, double *grad_w_v, const double *grad_out,
    const double *weights, const double *q, const double *k, const double *v,
    const double *W_q, const double *W_k, const double *w_v,
    const attn_mask *mask, size_t B, size_t Nq, size_t Nk, size_t dq, size_t dk,
    size_t dv, size_t h, attn_fault *fault);

/* Gradients of the multi-head parameters, shaped as attn_multihead_params:
 *   W_q: (h, dq)  W_k: (h, dk)  W_v: (h, dv)  W_o: (d_out, h)
 *   b_q, b_k, b_v: (h)  b_o: (d_out) — each bias gradient is written only
 *   when that bias is given (then it must not be NULL), else ignored. */
typedef struct {
    double *W_q, *W_k, *W_v, *W_o;
    double *b_q, *b_k, *b_v, *b_o;
} attn_multihead_grads;

/* Scratch bytes attn_multihead_backward allocates: the projections and
 * their gradients, 16·B·(Nq + 2·Nk)·h, plus one head's dL/dS, 8·Nq·Nk;
 * never (B, H, Nq, Nk). ATTN_E_INVALID_ARG, ATTN_E_OVERFLOW. */
attn_status attn_multihead_backward_workspace(size_t *bytes, size_t B,
                                              size_t Nq, size_t Nk, size_t h);

/* Gradients of attn_multihead_forward (d2l 11.5; PyTorch
 * nn.MultiheadAttention): projections recomputed, then back through the
 * output projection, each head's scaled dot-product attention (scale
 * 1/sqrt(h/H)) and the input projections, all by cblas_dgemm.
 *   grad_out: (B, Nq, d_out)  weights: (B, H, Nq, Nk)  q: (B, Nq, dq)
 *   k: (B, Nk, dk)  v: (B, Nk, dv)  params: as the forward's
 *   -> grad_q, grad_k, grad_v of the inputs' shapes, *grad_params.
 * For self-attention (k or v the same buffer as q) the caller adds the
 * gradients of the shared tensor. Errors: as above; also
 * ATTN_E_INVALID_ARG when H does not divide h or a bias is given without
 * its gradient buffer. */
attn_status attn_multihead_backward(
    double *grad_q, double *grad_k, double *grad_v,
    const attn_multihead_grads *grad_params, const double *grad_out,
    const double *weights, const double *q, const double *k, const double *v,
    const attn_multihead_params *params, const attn_mask *mask, size_t B,
    size_t Nq, size_t Nk, size_t dq, size_t dk, size_t dv, size_t h, size_t H,
    size_t d_out, attn_fault *fault);

/* ------------------------------------------------------ the BLAS behind it */

/* The BLAS library libattn was built against, for version and metrics
 * answers. All strings are static and never NULL:
 *   name     "OpenBLAS", or "cblas" for another CBLAS;
 *   version  OpenBLAS's version text as its header gives it, spaces
 *            included (" OpenBLAS 0.3.21 "), or "" for another CBLAS;
 *   config   OpenBLAS's build configuration (openblas_get_config()), or
 *            "" for another CBLAS.
 * No error. */
typedef struct {
    const char *name;
    const char *version;
    const char *config;
} attn_blas_info;

attn_blas_info attn_blas_about(void);

/* Ask BLAS to use n >= 1 threads for one call. Returns the number it
 * uses from now on, or -1 when the library offers no such setting (it
 * then runs as it was built). Not thread-safe: call before computing. */
int attn_blas_set_threads(int n);

/* The threads BLAS uses per call, or -1 when the library cannot say. */
int attn_blas_threads(void);

#ifdef __cplusplus
}
#endif
#endif /* ATTN_H */
