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

#include <stdatomic.h>
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

/* A flag that cuts this thread's calls short from now on: once *flag is
 * non-zero (set by another thread), the long loops of every call stop at
 * their next check, as at a passed deadline, and the call returns
 * ATTN_E_DEADLINE. The caller keeps the flag alive until it clears it
 * (NULL) or the thread ends. A server sets it when the client that asked
 * for the work has gone, so that no CPU is spent on an answer nobody
 * reads. */
void attn_deadline_watch(const atomic_int *flag);

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

/* Attention pooling with given weights, out = weights · V, one
 * cblas_dgemm per example:
 *   weights: (B, Nq, Nk)  v: (B, Nk, dv) -> out: (B, Nq, dv), row-major.
 * Errors: ATTN_E_OVERFLOW when a dimension exceeds BLAS's int (nothing
 * written); ATTN_E_NONFINITE (fault->index into out) when an output
 * overflows (out written). Source: d2l 11.1 (attention pooling). */
attn_status attn_pool_values(double *out, const double *weights,
                             const double *v, size_t B, size_t Nq, size_t Nk,
                             size_t dv, attn_fault *fault);

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
    size_t epoch;  /* from 1 */
    double w;      /* w before this epoch's step */
    double loss;   /* loss at that w */
    double grad_w; /* ∂loss/∂w at that w (the step is −lr · grad_w) */
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

/* ------------------------------------- NumPy's legacy RandomState, exact */

/* NumPy's legacy generator, np.random.seed / rand / randn, bit for bit
 * (docs/contract.md section 7; lib/numpy_random.c cites numpy's sources):
 * MT19937 (Matsumoto & Nishimura 1998) as numpy's mt19937.c, its state
 * and position, and the cached second normal of the polar method
 * (numpy's aug_bitgen_t has_gauss, gauss). A plain struct: copy it to
 * fork a stream; one per thread. */
#define ATTN_NP_STATE_LEN 624
typedef struct {
    uint32_t key[ATTN_NP_STATE_LEN];
    /* key's words tempered, as the generator gives them out: all 624 at
     * once when key is regenerated, in a loop the compiler vectorises */
    uint32_t tempered[ATTN_NP_STATE_LEN];
    int pos; /* next word of tempered; ATTN_NP_STATE_LEN: regenerate first */
    int has_gauss;
    double gauss;
} attn_np_random;

/* np.random.seed(seed) for an integer seed 0 … 2^32 − 1: numpy's
 * _legacy_seeding passes a Python int to mt19937_seed (Knuth's
 * multiplier 1812433253, key[0] = seed, pos = 624), and RandomState.seed
 * then drops the cached normal. (An array seed goes through
 * init_by_array instead: not this function.) */
void attn_np_seed(attn_np_random *rs, uint32_t seed);

/* np.random.seed(init_key) for an array of key_length ≥ 1 integers
 * 0 … 2^32 − 1: numpy's _legacy_seeding passes a 1-d array to
 * mt19937_init_by_array (Matsumoto & Nishimura's init_by_array of
 * mt19937ar.c, 2002: seed 19650218, then the key mixed into the state
 * with the multipliers 1664525 and 1566083941, key[0] = 2^31), and
 * RandomState.seed drops the cached normal. */
void attn_np_seed_array(attn_np_random *rs, const uint32_t *init_key,
                        size_t key_length);

/* The next tempered 32-bit word (numpy's mt19937_next). */
uint32_t attn_np_next32(attn_np_random *rs);

/* np.random.random_sample() / rand(): a = next32 >> 5, b = next32 >> 6
 * (drawn in that order), (a · 2^26 + b) / 2^53, in [0, 1); numpy's
 * mt19937_next_double (randomkit's rk_double). */
double attn_np_random_sample(attn_np_random *rs);

/* One np.random.randn() value: legacy_gauss (numpy's
 * legacy-distributions.c). With a cached value, return it and clear the
 * cache; otherwise draw x1 = 2u − 1, x2 = 2u − 1 (u = random_sample) until
 * 0 < r2 = x1² + x2² < 1, f = sqrt(−2 ln r2 / r2), cache f·x1, return
 * f·x2. The cache spans calls: randn(3) then randn(1) is randn(4). */
double attn_np_gauss(attn_np_random *rs);

/* out[0 … n−1] = np.random.rand(n) (n random_sample draws; n may be 0). */
void attn_np_rand(attn_np_random *rs, double *out, size_t n);

/* out[0 … n−1] = np.random.randn(n), and np.random.randn(d0, d1) in
 * row-major order for n = d0·d1 (n attn_np_gauss draws; n may be 0). */
void attn_np_randn(attn_np_random *rs, double *out, size_t n);

/* ------------------------------------- the seed note's self-attention */

/* Self-attention as the seed note's self_attention(x, d_k) computes it
 * (note 2, section 4.6; d2l 11.6.1): Q = x W_Q, K = x W_K, V = x W_V, then
 * out = softmax(mask(Q Kᵀ · scale)) V by attn_dot_forward.
 *   x: (B, N, d_model)  W_Q, W_K, W_V: (d_model, d_k), (in, out) layout
 *   (the transpose of nn.Linear's weight: Q = x @ W_Q)
 *   -> q, k, v: (B, N, d_k), the projections (kept for the backward);
 *      out: (B, N, d_k), weights: (B, N, N);
 *      qk: (B, N, N) or NULL — Q Kᵀ before the scale;
 *      scores: (B, N, N) or NULL — Q Kᵀ · scale before masking.
 * scale: finite > 0 (the note's 1/sqrt(d_k) is attn_dot_default_scale(d_k)).
 * The projections are one cblas_dgemm each over the B·N rows of x.
 * Errors: ATTN_E_INVALID_ARG; ATTN_E_OVERFLOW (a size, or B·N beyond
 * BLAS's int); ATTN_E_NONFINITE when a projection overflows; otherwise as
 * attn_dot_forward (fault->index as it gives it). */
attn_status attn_self_forward(double *out, double *weights, double *qk,
                              double *scores, double *q, double *k, double *v,
                              const double *x, const double *W_Q,
                              const double *W_K, const double *W_V,
                              const attn_mask *mask, double scale, size_t B,
                              size_t N, size_t d_model, size_t d_k,
                              attn_fault *fault);

/* Scratch bytes attn_self_backward allocates besides attn_dot_backward's:
 * dL/dQ, dL/dK, dL/dV, 3·B·N·d_k doubles; or ATTN_E_OVERFLOW. */
attn_status attn_self_backward_workspace(size_t *bytes, size_t B, size_t N,
                                         size_t d_k);

/* Gradients of attn_self_forward, given its inputs, its q, k, v and
 * weights, and grad_out = dL/d(out) (B, N, d_k):
 *   dQ, dK, dV by attn_dot_backward, then
 *   grad_W_Q = xᵀ dQ (d_model, d_k) over all B·N rows (and K, V alike),
 *   grad_x = dQ W_Qᵀ + dK W_Kᵀ + dV W_Vᵀ (B, N, d_model).
 * Errors: as attn_self_forward and attn_dot_backward; ATTN_E_NOMEM. */
attn_status attn_self_backward(
    double *grad_x, double *grad_W_Q, double *grad_W_K, double *grad_W_V,
    const double *grad_out, const double *weights, const double *x,
    const double *W_Q, const double *W_K, const double *W_V, const double *q,
    const double *k, const double *v, const attn_mask *mask, double scale,
    size_t B, size_t N, size_t d_model, size_t d_k, attn_fault *fault);

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
 *     work; ATTN_E_DEADLINE while looking for them (pattern masks);
 * ATTN_E_NONFINITE when a gradient overflows: fault->index = flat offset of the
 * first non-finite value in the gradients laid end to end in argument order
 * (bias gradients that are not computed count for nothing). */

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

/* ------------------------------------------ traces of the forward passes */

/* What a trace of a forward pass adds to its answer (docs/trace.md): the
 * intermediates a forward function computes but does not return. Each is
 * made by the same calls the forward function makes, so it holds the
 * doubles the forward's scores, weights and output were computed from;
 * those three the caller takes from the forward itself. Sizes and buffers
 * as for the forward; every buffer must be given. */

/* Q Kᵀ, unscaled (the notes' 点积 step; d2l 11.3.2): attn_dot_forward's
 * step 1 with alpha 1 in place of the scale, by cblas_dgemm on the same
 * rows (per example, or per block of rows where the forward pipelines), so
 * that with a scale that is a power of two the forward's scores are
 * exactly QK · scale.
 *   q: (B, Nq, d)  k: (B, Nk, d) -> QK: (B, Nq, Nk).
 * Errors: ATTN_E_INVALID_ARG (NULL, zero size); ATTN_E_OVERFLOW (a size
 * product, or a dimension beyond BLAS's int); ATTN_E_DEADLINE. */
attn_status attn_dot_products(double *QK, const double *q, const double *k,
                              size_t B, size_t Nq, size_t Nk, size_t d);

/* The intermediates of attn_multihead_forward, with dh = h/H:
 *   Q: (B, Nq, h)  K, V: (B, Nk, h)        Q' = q·W_qᵀ + b_q, K', V'
 *   Q_heads: (B, H, Nq, dh)  K_heads, V_heads: (B, H, Nk, dh)
 *                                          head t = features t·dh … of each
 *   QK: (B, H, Nq, Nk)                     Q'_t K'_tᵀ, before the scale
 *   weighted_values: (B, H, Nq, dh)        weights_t · V'_t
 *   concat: (B, Nq, h)                     the heads side by side. */
typedef struct {
    double *Q, *K, *V;
    double *Q_heads, *K_heads, *V_heads;
    double *QK;
    double *weighted_values;
    double *concat;
} attn_multihead_steps;

/* Fill *t for the forward pass that gave weights (B, H, Nq, Nk) from q,
 * k, v and params (attn_multihead_forward's arguments; W_o and b_o are not
 * used): the projections by the forward's own calls (bias rows, then one
 * dgemm with beta 1), per head Q'_t K'_tᵀ by one dgemm on the forward's
 * strided columns with alpha 1, and weights_t · V'_t by the forward's
 * step 4 call, into concat's columns of head t. No scratch.
 * Errors: ATTN_E_INVALID_ARG (NULL buffer or weight, a zero size, H not
 * dividing h); ATTN_E_OVERFLOW; ATTN_E_DEADLINE. Source: d2l 11.5. */
attn_status attn_multihead_trace(const attn_multihead_steps *t,
                                 const double *weights, const double *q,
                                 const double *k, const double *v,
                                 const attn_multihead_params *params, size_t B,
                                 size_t Nq, size_t Nk, size_t dq, size_t dk,
                                 size_t dv, size_t h, size_t H);

/* Split x (B, N, h) into heads (B, H, N, h/H): head t is the contiguous
 * columns t·h/H … (t+1)·h/H − 1 (d2l 11.5's transpose_qkv). H divides h;
 * no error. */
void attn_heads_split(double *heads, const double *x, size_t B, size_t N,
                      size_t h, size_t H);

/* Scratch bytes attn_additive_trace allocates: the projections and the
 * exp and expm1 of twice each, 24·B·(Nq + Nk)·h, and Nk bytes;
 * ATTN_E_INVALID_ARG (NULL, zero size), ATTN_E_OVERFLOW. */
attn_status attn_additive_trace_workspace(size_t *bytes, size_t B, size_t Nq,
                                          size_t Nk, size_t h);

/* The intermediates of attn_additive_forward (d2l 11.3.3; Bahdanau et al.
 * 2014):
 *   Q: (B, Nq, h) = q·W_qᵀ,  K: (B, Nk, h) = k·W_kᵀ,
 *   features: (B, Nq, Nk, h) = tanh(Q[b, i] + K[b, j]),
 * so that the forward's scores are features · w_v. The forward's own
 * dgemm calls, its choice of the exponential form (every projection
 * within ±ATTN_TANH_EXP_MAX) or tanh, and its per-feature functions.
 *   q: (B, Nq, dq)  k: (B, Nk, dk)  W_q: (h, dq)  W_k: (h, dk).
 * Errors: ATTN_E_INVALID_ARG (NULL, zero size); ATTN_E_OVERFLOW;
 * ATTN_E_NOMEM; ATTN_E_DEADLINE. */
attn_status attn_additive_trace(double *Q, double *K, double *features,
                                const double *q, const double *k,
                                const double *W_q, const double *W_k, size_t B,
                                size_t Nq, size_t Nk, size_t dq, size_t dk,
                                size_t h);

/* The steps of attn_nw_predict before its weights (d2l 11.2):
 *   distances: (m, n) = x_query[q] − x_train[i];
 *   scores: (m, n) = −((x_query[q] − x_train[i])·w)²/2 for the Gaussian,
 *     whose weights are their softmax over i (attn_nw_predict computes it
 *     from the differences to the row's largest score, so its weights stay
 *     finite where a score is −inf); for the other kernels K((x_query[q]
 *     − x_train[i])·w), the kernel values, whose weights are the scores
 *     over their row's sum.
 * The argument (x_query[q] − x_train[i])·w is computed as
 * attn_nw_predict computes it (x·w − xᵢ·w when the points are more than
 * DBL_MAX apart). A distance beyond ±DBL_MAX is ±inf, and a Gaussian
 * score whose square overflows is −inf; no error for either.
 * Errors: ATTN_E_INVALID_ARG (NULL, zero size, w not finite > 0, unknown
 * kernel); ATTN_E_OVERFLOW; ATTN_E_DEADLINE. */
attn_status attn_nw_trace(double *distances, double *scores,
                          const double *x_query, const double *x_train,
                          attn_kernel kernel, double w, size_t m, size_t n);
/* ------------------------------------------------- layer normalisation */

/* Layer normalisation over the last axis (Ba et al. 2016; d2l 11.7.3;
 * PyTorch nn.LayerNorm): per row of E features,
 *   mean = Σ x / E,  var = Σ (x − mean)² / E  (biased, as PyTorch),
 *   rstd = 1 / sqrt(var + eps),  y = (x − mean)·rstd·gamma + beta.
 *   x: (rows, E)  gamma, beta: (E)
 *   -> y: (rows, E) (may alias x), mean, rstd: (rows) or NULL (kept for
 *      attn_layer_norm_backward).
 * Errors: ATTN_E_INVALID_ARG (NULL x, y, gamma or beta, a zero size, eps
 * not finite or < 0); ATTN_E_OVERFLOW; ATTN_E_NONFINITE (an output, or
 * var + eps == 0: fault->index into y). */
attn_status attn_layer_norm_forward(double *y, double *mean, double *rstd,
                                    const double *x, const double *gamma,
                                    const double *beta, size_t rows, size_t E,
                                    double eps, attn_fault *fault);

/* Gradients of attn_layer_norm_forward given dL/dy, with x̂ = (x − mean)·rstd
 * and g = dy ⊙ gamma per row:
 *   grad_x = rstd·(g − mean(g) − x̂·mean(g ⊙ x̂)),
 *   grad_gamma = Σ_rows dy ⊙ x̂,  grad_beta = Σ_rows dy.
 *   grad_y, x: (rows, E)  mean, rstd: (rows) from the forward  gamma: (E)
 *   -> grad_x: (rows, E) (may alias grad_y), grad_gamma, grad_beta: (E),
 *      overwritten.
 * Errors: ATTN_E_INVALID_ARG (NULL, zero size); ATTN_E_OVERFLOW;
 * ATTN_E_NONFINITE (fault->index into grad_x, grad_gamma, grad_beta laid
 * end to end). */
attn_status attn_layer_norm_backward(double *grad_x, double *grad_gamma,
                                     double *grad_beta, const double *grad_y,
                                     const double *x, const double *mean,
                                     const double *rstd, const double *gamma,
                                     size_t rows, size_t E, attn_fault *fault);

/* ------------------------------------------------------ Transformer blocks */

/* The encoder and decoder layers of the Transformer (Vaswani et al. 2017;
 * d2l 11.7 "The Transformer Architecture"), computed as PyTorch's
 * nn.TransformerEncoderLayer / nn.TransformerDecoderLayer forward them in
 * float64 with dropout 0 and batch_first=True, stacked as
 * nn.TransformerEncoder / nn.TransformerDecoder (no final norm).
 *
 * A layer is K blocks (encoder K = 2: self-attention, feed-forward;
 * decoder K = 3: self-attention, cross-attention over memory,
 * feed-forward). Block k of a layer with input x computes
 *   post-norm (default):  y = sub_k(x),        r = x + y,  out = norm_k(r)
 *   norm_first:           n = norm_k(x), y = sub_k(n), r = x + y, out = r
 * where sub is multi-head attention (attn_multihead_forward, PyTorch's
 * packed in_proj split into W_q, W_k, W_v rows) or the position-wise
 * feed-forward network y = act(a·W1ᵀ + b1)·W2ᵀ + b2 (d2l 11.7.2), and
 * norm is attn_layer_norm_forward. */

typedef enum {
    ATTN_ACTIVATION_RELU = 0, /* max(0, x) (PyTorch's default) */
    ATTN_ACTIVATION_GELU /* x·Φ(x) = x/2·(1 + erf(x/√2)), exact form */
} attn_activation;

/* One layer's parameters, in nn.TransformerDecoderLayer's state_dict
 * order (an encoder layer has no CA_* and no NORM3_*):
 *   *_IN_W (3E, E) = [W_q; W_k; W_v] rows, *_IN_B (3E), *_OUT_W (E, E),
 *   *_OUT_B (E), LIN1_W (F, E), LIN1_B (F), LIN2_W (E, F), LIN2_B (E),
 *   NORM*_W, NORM*_B (E). */
typedef enum {
    ATTN_XF_SA_IN_W = 0,
    ATTN_XF_SA_IN_B,
    ATTN_XF_SA_OUT_W,
    ATTN_XF_SA_OUT_B,
    ATTN_XF_CA_IN_W,
    ATTN_XF_CA_IN_B,
    ATTN_XF_CA_OUT_W,
    ATTN_XF_CA_OUT_B,
    ATTN_XF_LIN1_W,
    ATTN_XF_LIN1_B,
    ATTN_XF_LIN2_W,
    ATTN_XF_LIN2_B,
    ATTN_XF_NORM1_W,
    ATTN_XF_NORM1_B,
    ATTN_XF_NORM2_W,
    ATTN_XF_NORM2_B,
    ATTN_XF_NORM3_W,
    ATTN_XF_NORM3_B,
    ATTN_XF_N_PARAMS
} attn_xf_param;

/* 1 when parameter t belongs to an encoder layer (decoder 0) or a
 * decoder layer (decoder 1). */
int attn_xf_param_used(attn_xf_param t, int decoder);

/* Shape of parameter t: *rank (1 or 2) and dims[0 … rank-1], for d_model
 * E and dim_feedforward F. */
void attn_xf_param_shape(attn_xf_param t, size_t E, size_t F, size_t dims[2],
                         size_t *rank);

/* The sizes and options of one stack. N: rows of each example of the
 * stack's input (src's S for the encoder, tgt's T for the decoder);
 * S_mem: memory rows (decoder; ignored by the encoder). */
typedef struct {
    int decoder; /* 0: encoder layers (K = 2), 1: decoder layers (K = 3) */
    size_t L;    /* num_layers */
    size_t B, N, S_mem;
    size_t E; /* d_model */
    size_t H; /* num_heads, dividing E */
    size_t F; /* dim_feedforward */
    int norm_first;
    double eps; /* layer_norm_eps, finite >= 0 */
    attn_activation activation;
    int keep_scores; /* 1: keep each attention's scores (for a trace) */
} attn_xf_config;

/* What the forward pass keeps for the backward pass and a trace, each an
 * array with a leading L axis (layer l's slab at l × the slab size):
 *   norm[k], resid[k], sub[k]: (L, B, N, E) — block k's normalised value,
 *     residual sum and sublayer output (sub[K-1] is the FFN's output);
 *   mean[k], rstd[k]: (L, B, N) — the statistics of norm[k];
 *   weights[k], scores[k] for the attention blocks (k = 0, and k = 1 in a
 *     decoder): (L, B, H, N, N) self, (L, B, H, N, S_mem) cross; scores
 *     (Q'K'ᵀ·scale before masking) only with keep_scores, else NULL;
 *   hidden: (L, B, N, F) = act(a·W1ᵀ + b1);
 *   pre: (L, B, N, F) = a·W1ᵀ + b1 for GELU, NULL for ReLU.
 * Unused entries (k ≥ K) are NULL. */
typedef struct {
    double *norm[3], *resid[3], *sub[3];
    double *mean[3], *rstd[3];
    double *weights[2], *scores[2];
    double *hidden, *pre;
} attn_xf_tape;

/* The doubles the tape of cfg takes, or ATTN_E_OVERFLOW;
 * ATTN_E_INVALID_ARG for NULL or a zero size. */
attn_status attn_xf_tape_size(size_t *doubles, const attn_xf_config *cfg);

/* Lay tape over buf (attn_xf_tape_size doubles, caller-owned). */
void attn_xf_tape_layout(attn_xf_tape *tape, double *buf,
                         const attn_xf_config *cfg);

/* Layer l's output inside the tape (B, N, E): norm[K-1] (post-norm) or
 * resid[K-1] (norm_first). */
const double *attn_xf_layer_output(const attn_xf_tape *tape,
                                   const attn_xf_config *cfg, size_t l);

/* Layer l's input: x for l = 0, else layer l − 1's output. */
const double *attn_xf_layer_input(const attn_xf_tape *tape,
                                  const attn_xf_config *cfg, const double *x,
                                  size_t l);

/* The input of block k's sublayer in layer l (B, N, E): the block's input
 * (post-norm) or norm[k] (norm_first). */
const double *attn_xf_block_input(const attn_xf_tape *tape,
                                  const attn_xf_config *cfg, const double *x,
                                  size_t l, size_t k);

/* Scratch bytes attn_xf_forward and attn_xf_backward allocate at most, or
 * ATTN_E_OVERFLOW. */
attn_status attn_xf_workspace(size_t *bytes, const attn_xf_config *cfg);

/* The stack's forward pass.
 *   x: (B, N, E)  memory: (B, S_mem, E) (decoder; NULL for the encoder)
 *   params: L arrays of ATTN_XF_N_PARAMS pointers, params[l][t] for the
 *   parameters the layer uses (attn_xf_param_used)
 *   self_mask: the self-attention's mask (NULL: none; a decoder's causal
 *   self-attention is ATTN_CAUSAL_TOP_LEFT here), cross_mask: the
 *   cross-attention's (NULL: none)
 *   -> out: (B, N, E), the last layer's output; tape filled.
 * Checks the deadline between blocks (and multi-head attention inside).
 * Errors: ATTN_E_INVALID_ARG (NULL, zero size, H not dividing E, eps not
 * finite >= 0, unknown activation); ATTN_E_OVERFLOW; ATTN_E_NOMEM;
 * ATTN_E_VALID_LEN, ATTN_E_FULLY_MASKED (as attn_multihead_forward);
 * ATTN_E_NONFINITE (a value overflowed, fault->index = l); ATTN_E_DEADLINE.
 * Source: PyTorch 1.13 TransformerEncoderLayer/DecoderLayer.forward. */
attn_status attn_xf_forward(double *out, const attn_xf_tape *tape,
                            const double *x, const double *memory,
                            const double *const *params,
                            const attn_xf_config *cfg,
                            const attn_mask *self_mask,
                            const attn_mask *cross_mask, attn_fault *fault);

/* Gradients of the scalar loss Σ out ⊙ grad_out through the stack, from
 * the tape of the forward pass on the same inputs.
 *   grad_out: (B, N, E)
 *   -> grad_x: (B, N, E), grad_memory: (B, S_mem, E) (decoder; NULL for
 *      the encoder), grads[l][t] of params[l][t]'s shape for each used
 *      parameter, overwritten.
 * Errors: as attn_xf_forward (fault->index = l for ATTN_E_NONFINITE). */
attn_status attn_xf_backward(double *grad_x, double *grad_memory,
                             double *const *grads, const double *grad_out,
                             const attn_xf_tape *tape, const double *x,
                             const double *memory, const double *const *params,
                             const attn_xf_config *cfg,
                             const attn_mask *self_mask,
                             const attn_mask *cross_mask, attn_fault *fault);

/* Seeded parameters with PyTorch's initial distributions, drawn from rng
 * (attn_rng_uniform, U(−a, a) = −a + 2a·u) in state_dict order, one layer
 * after another, each layer drawn on its own (nn.TransformerEncoder
 * deep-copies one layer, so PyTorch's layers start identical):
 *   *_IN_W xavier_uniform (a = sqrt(6 / (E + 3E))); *_IN_B, *_OUT_B 0;
 *   *_OUT_W U(±1/sqrt(E)) (kaiming_uniform, a = sqrt(5));
 *   LIN1_W, LIN1_B U(±1/sqrt(E)); LIN2_W, LIN2_B U(±1/sqrt(F));
 *   NORM*_W 1, NORM*_B 0 (no draws for constants).
 *   params: L arrays of ATTN_XF_N_PARAMS writable pointers (used ones
 *   non-NULL).
 * Errors: ATTN_E_INVALID_ARG (NULL, zero size); ATTN_E_DEADLINE (the
 * thread's deadline passed, checked before each parameter: the drawn
 * ones are then partly filled). */
attn_status attn_xf_init(double *const *params, attn_rng *rng,
                         const attn_xf_config *cfg);

/* Positional encoding first, as d2l's TransformerEncoder/Decoder
 * (d2l 11.7.4): embedded = x·sqrt(E), P = attn_posenc_sinusoidal(N, E),
 * out = embedded + P (broadcast over B).
 *   x: (B, N, E) -> P: (N, E), embedded: (B, N, E) or NULL, out: (B, N, E).
 * Errors: ATTN_E_INVALID_ARG; ATTN_E_OVERFLOW. */
attn_status attn_xf_embed(double *out, double *P, double *embedded,
                          const double *x, size_t B, size_t N, size_t E);

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
