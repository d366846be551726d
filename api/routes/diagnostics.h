/*
 * diagnostics.h — "diagnostics": true on the attention routes (docs/contract.md
 * section 8): how peaked or flat each query's attention is, and which rows
 * deserve a look.
 *
 * Rows are (B, H, Nq), row-major, outermost axis first (H = 1 for dot and
 * additive attention); each row has Nk scores and weights. For every row:
 *   entropy     −Σ_j w_j ln w_j over the visible keys, in nats (0 ln 0 = 0)
 *   max_weight  the largest weight, argmax its key (lowest index on ties)
 *   a fully masked row (no visible key) has entropy 0, max_weight 0 and
 *   argmax −1 whatever fully_masked says, so "uniform" rows are not
 *   mistaken for attention that looked at every key.
 * Over the whole request: min, max, mean and population standard deviation
 * of the unmasked scores (every head of every example together).
 * Warnings, in row order, one per row at most:
 *   fully_masked   the row sees no key
 *   saturated      max_weight > 0.99
 *   near_uniform   >= 2 visible keys and entropy >= 0.99 · ln(visible)
 * at most API_DIAG_MAX_WARNINGS, then {"code": "truncated", "count": n}.
 */
#ifndef API_DIAGNOSTICS_H
#define API_DIAGNOSTICS_H

#include <stddef.h>

#include "arena.h"
#include "attn.h"
#include "buf.h"
#include "result.h"
#include "tensor.h"

/* Warnings listed before the "truncated" entry. */
#define API_DIAG_MAX_WARNINGS 100

/* A row's warning (at most one applies). */
typedef enum {
    API_DIAG_NONE = 0,
    API_DIAG_SATURATED,
    API_DIAG_NEAR_UNIFORM,
    API_DIAG_FULLY_MASKED
} api_diag_warning;

typedef struct {
    size_t B, H, Nq, Nk;
    size_t rows;            /* B·H·Nq */
    double *entropy;        /* (B, H, Nq), nats */
    double *max_weight;     /* (B, H, Nq) */
    double *argmax;         /* (B, H, Nq), key index or −1 (integral) */
    unsigned char *warning; /* (B, H, Nq), api_diag_warning */
    size_t n_scores;        /* unmasked scores seen (0: stats are absent) */
    double min, max, mean, std;
} api_diagnostics;

/* Arena slots (8 bytes each) api_diagnostics_take needs for `rows` rows. */
size_t api_diagnostics_slots(size_t rows);

/* Carve the per-row buffers for B·H·Nq rows of Nk keys from a planned
 * arena (api_diagnostics_slots(B·H·Nq) slots). */
void api_diagnostics_take(api_diagnostics *d, api_arena *arena, size_t B,
                          size_t H, size_t Nq, size_t Nk);

/* Fill d from a finished forward pass.
 *   scores: (B, H, Nq, Nk), before masking (masked entries are not read)
 *   weights: (B, H, Nq, Nk), the softmax of the visible scores
 *   mask: the forward's (NULL: every key visible); the same for every head
 * Cannot fail; non-finite statistics (scores near the largest double)
 * surface when they are written. */
void api_diagnostics_compute(api_diagnostics *d, const double *scores,
                             const double *weights, const attn_mask *mask);

/* Add d to r (result.h) as the "diagnostics" group:
 *   scores: {"min", "max", "mean", "std"} (each null when no score is
 *   unmasked); entropy, max_weight, argmax: (B, Nq) when heads is 0 (H must
 *   be 1), (B, H, Nq) when heads is 1, the batch axis dropped when batched
 *   is 0; warnings: [{"code", "row"}] with row [b, q], [b, h, q], or
 *   without b for unbatched input, at most API_DIAG_MAX_WARNINGS of them,
 *   then {"code": "truncated", "count": n}.
 * Numbers follow the result's format (precision included) except the
 * integers: argmax, row indices and the truncated count print exactly.
 * d's buffers must outlive r (they lie in the arena r keeps). */
void api_diagnostics_result(api_result *r, const api_diagnostics *d, int heads,
                            int batched);

#endif /* API_DIAGNOSTICS_H */
