/*
 * attention.h — what /attention/dot and /attention/additive share: the
 * queries/keys/values triple, masking fields (valid_lens, causal,
 * fully_masked), return_weights/return_scores, the rank-2 "unbatched"
 * convention, the library's faults as problems, and writing the answer.
 *
 * Shapes (API.md sections 1–3): queries (B, Nq, dq), keys (B, Nk, dk),
 * values (B, Nk, dv); dq == dk (= d) for dot attention. Rank-2 input
 * (Nq, dq) ... is one unbatched example: B = 1 inside, and every output
 * drops the batch axis. valid_lens: (B) or (B, Nq); unbatched a scalar or
 * (Nq).
 */
#ifndef API_ATTENTION_H
#define API_ATTENTION_H

#include <jansson.h>
#include <stdint.h>

#include "arena.h"
#include "attn.h"
#include "buf.h"
#include "problem.h"
#include "tensor.h"

/* valid_lens as every attention route accepts it. */
extern const api_tensor_spec api_attention_lens_spec;

typedef struct {
    api_tensor q, k, v, lens; /* decoded (shapes only until read) */
    int has_lens;
    int batched; /* 1: rank-3 input; 0: rank 2, B = 1 */
    size_t B, Nq, Nk, dq, dk, dv;
    attn_causal causal;
    attn_fully_masked fully_masked;
    int return_weights; /* default 1 */
    int return_scores;  /* default 0 */
    api_tensor_format fmt;
    /* Carved from the request's arena by api_attention_take: */
    double *qd, *kd, *vd; /* inputs */
    int64_t *lens_d;      /* valid_lens as integers, or NULL */
    double *out;          /* (B, Nq, dv) */
    double *weights;      /* (B, Nq, Nk) */
    double *scores;       /* (B, Nq, Nk) or NULL */
    attn_mask mask;
} api_attention;

/* The tensor phase for queries, keys, values (specs[0 … 2], in that
 * order): fills a->q, a->k, a->v. Returns 0 or -1 (p set). */
int api_attention_decode_qkv(api_attention *a, const json_t *body,
                             const api_tensor_spec *const specs[3],
                             size_t max_elements, api_problem *p);

/* The tensor phase for valid_lens (absent is fine). */
int api_attention_decode_lens(api_attention *a, const json_t *body,
                              size_t max_elements, api_problem *p);

/* Cross-field shapes of keys (against queries: rank, B, and d when
 * same_d) and values (against keys: rank, B, Nk): shape_mismatch at the
 * later field with expected/got. Sets batched, B, Nq, Nk, dq, dk, dv. */
int api_attention_cross_qkv(api_attention *a, int same_d, api_problem *p);

/* Cross-field shape of valid_lens: (B) or (B, Nq); unbatched () or (Nq). */
int api_attention_cross_lens(api_attention *a, api_problem *p);

/* Derived sizes: output (B, Nq, dv) and weights (B, Nq, Nk), counted even
 * with return_weights false, over max_elements -> 413. */
int api_attention_check_sizes(const api_attention *a, size_t max_elements,
                              api_problem *p);

/* Read return_weights (default true) and return_scores (default false);
 * types are already checked, so this cannot fail. */
void api_attention_read_flags(api_attention *a, const json_t *body);

/* Plan the arena slots for inputs, valid_lens, output, weights and scores. */
void api_attention_plan(const api_attention *a, api_arena *arena);

/* Carve the planned buffers and read the inputs into them. */
void api_attention_take(api_attention *a, api_arena *arena);

/* valid_lens entries must lie in 0 … Nk: invalid_value at the entry
 * (/valid_lens/i, /valid_lens/b/q, or /valid_lens/data/i for the flat
 * form). Returns 0 or -1. */
int api_attention_check_lens(const api_attention *a, api_problem *p);

/* Read causal and fully_masked (unknown strings -> invalid_value at the
 * field), then set up a->mask from them and valid_lens. Returns 0 or -1. */
int api_attention_read_mask(api_attention *a, const json_t *body,
                            api_problem *p);

/* Turn a library failure into the contract's problem: fully masked row
 * under "error" -> invalid_value at its valid_lens entry (or /causal);
 * non-finite result -> invalid_value; anything else -> internal. */
int api_attention_fault(const api_attention *a, attn_status st,
                        const attn_fault *fault, api_problem *p);

/* Write "output", "weights" (when asked) and "scores" (when asked; masked
 * entries null) as members of an open JSON object, each preceded by a
 * comma except the first. Returns 0, or -1 when a value is not finite
 * (p set to invalid_value). */
int api_attention_write(api_attention *a, api_buf *out, api_problem *p);

/* Multiply-adds of Q Kᵀ and weights·V: B·Nq·Nk·(d + dv), saturating. */
uint64_t api_attention_work_dot(const api_attention *a);

#endif /* API_ATTENTION_H */
