/*
 * trace.h — "trace": true on the attention routes (dot, additive,
 * multihead): the answer gains a `trace` object holding every
 * intermediate of the forward pass, in the order it is computed, named as
 * the notes name the steps (docs/trace.md):
 *
 *   dot        QK, scaled, masked, weights, weighted_values
 *   additive   Q, K, features, scores, masked, weights, weighted_values
 *   multihead  Q, K, V, Q_heads, K_heads, V_heads, QK, scaled, masked,
 *              weights, weighted_values, concat, output
 *
 * Shapes as in attn.h (batched; an unbatched request drops the batch axis
 * as its other outputs do). The scores, weights and output are the
 * forward pass's own doubles, the rest are made by the library's trace
 * functions from the same calls (attn.h, "traces of the forward passes"),
 * so the answer is the same with and without a trace.
 *
 * A trace is paid for like the rest of the answer: its tensors are planned
 * in the request's one allocation (so the route's cost counts their
 * working set and answer bytes), the tensors it shares with the answer
 * (weights, output) are counted again as answer text, its work is added,
 * and each of its tensors is held to --max-elements.
 *
 * Use, in a route's handler: api_trace_init once the shapes are known;
 * api_trace_check_sizes with the derived sizes; api_trace_plan in the
 * route's plan (its cost function's and its allocation's) and
 * api_trace_cost after api_cost_of_plan; api_trace_take after the route's
 * own buffers; api_trace_scores as the forward's scores argument; the
 * route's api_trace_<route> right after a successful forward (before
 * diagnostics, which read a->scores); api_trace_answer last.
 */
#ifndef API_TRACE_H
#define API_TRACE_H

#include <jansson.h>

#include "attention.h"
#include "cost.h"

typedef enum {
    API_TRACE_DOT,
    API_TRACE_ADDITIVE,
    API_TRACE_MULTIHEAD
} api_trace_route;

typedef struct {
    int on; /* "trace": true */
    api_trace_route route;
    size_t h; /* additive's and multihead's hidden units */
    /* carved by api_trace_take when on: */
    double *scores; /* dot, multihead: scaled (B, H, Nq, Nk); additive:
                       scores (B, Nq, Nk) — the forward writes them */
    double *masked; /* the scores, the mask's hidden entries NaN (null) */
    double *QK;     /* dot (B, Nq, Nk) */
    double *Q, *K, *features;   /* additive (B, Nq, h), (B, Nk, h),
                                   (B, Nq, Nk, h) */
    attn_multihead_steps steps; /* multihead */
} api_trace;

/* 1 when the request asks for a trace ("trace": true; the field's type is
 * checked with the route's other fields). */
int api_trace_asked(const json_t *body);

/* Start t for route: on when body asks for it; h is the hidden units of
 * additive and multihead attention (ignored for dot). */
void api_trace_init(api_trace *t, api_trace_route route, const json_t *body,
                    size_t h);

/* Each trace tensor against max_elements: 413 payload_too_large naming
 * it ("trace.features"). No-op when off. Returns 0 or -1. */
int api_trace_check_sizes(const api_trace *t, const api_attention *a,
                          size_t max_elements, api_problem *p);

/* Plan the trace's buffers (none when off), after the route's own. */
void api_trace_plan(const api_trace *t, const api_attention *a,
                    api_arena *arena);

/* What the trace adds to a cost counted from a plan that includes
 * api_trace_plan: its work, the answer text of the tensors it shares
 * with the answer, and the library's scratch (additive). No-op when off. */
void api_trace_cost(const api_trace *t, const api_attention *a, api_cost *cost);

/* The numbers the trace puts into the answer, all its tensors' entries
 * (0 when it is off): for a route that counts its answer exactly
 * (api_cost_answer). */
uint64_t api_trace_answer_numbers(const api_trace *t, const api_attention *a);

/* Carve the planned buffers, in api_trace_plan's order. */
void api_trace_take(api_trace *t, const api_attention *a, api_arena *arena);

/* The scores buffer to hand the forward pass: the trace's when on, else
 * a->scores (NULL unless scores or diagnostics are asked for). */
double *api_trace_scores(const api_trace *t, const api_attention *a);

/* After a successful forward pass: a->scores (when asked for) gets the
 * scores the forward wrote into the trace, then the trace's own steps.
 * No-op when off. Returns the library's status (ATTN_E_DEADLINE, …). */
attn_status api_trace_dot(api_trace *t, api_attention *a);
attn_status api_trace_additive(api_trace *t, api_attention *a,
                               const double *W_q, const double *W_k);
attn_status api_trace_multihead(api_trace *t, api_attention *a,
                                const attn_multihead_params *params);

/* Add the trace's tensors to r as "trace.<name>" (no-op when off). */
void api_trace_answer(const api_trace *t, const api_attention *a,
                      api_result *r);

/* The "masked" step (the notes' 掩码): masked = scores plus a float
 * attn_mask (nothing added without one) where the masks let query i of
 * example b, head hd, see key j, NaN (printed null, −∞) elsewhere
 * (attn_mask_apply). scores, masked: (B, H, Nq, Nk); a per-head mask
 * (ATTN_MASK_PER_HEAD) gives head hd its slab b·H + hd. */
void api_trace_mask_scores(double *masked, const double *scores,
                           const attn_mask *mask, size_t B, size_t H, size_t Nq,
                           size_t Nk);

/* What "trace": true answers for NW (/regression/nw): distances (m, n),
 * scores (m, n) (attn_nw_trace), then the weights and predictions the
 * route answers (shared, counted again as answer text). */
typedef struct {
    int on;
    double *distances, *scores;
} api_trace_nw;

/* Plan distances and scores (none when off). */
void api_trace_nw_plan(int on, size_t m, size_t n, api_arena *arena);

/* Work m·n and the answer text of weights (m, n) and predictions (m, dv)
 * printed a second time. No-op when off. */
void api_trace_nw_cost(int on, size_t m, size_t n, size_t dv, api_cost *cost);

/* Carve the planned buffers. */
void api_trace_nw_take(api_trace_nw *t, size_t m, size_t n, api_arena *arena);

/* Add trace.distances, trace.scores (a −inf score null), trace.weights
 * and trace.predictions (the route's own buffers, shaped as the route
 * answers them: pred_shape of rank pred_rank). */
void api_trace_nw_answer(const api_trace_nw *t, api_result *r,
                         const double *weights, const double *pred, size_t m,
                         size_t n, const size_t *pred_shape, size_t pred_rank);

#endif /* API_TRACE_H */
