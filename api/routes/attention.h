/*
 * attention.h — what the attention routes (dot, additive, multihead)
 * share: the queries/keys/values triple, masking fields (valid_lens,
 * attn_mask, key_padding_mask, causal, fully_masked),
 * return_weights/return_scores, diagnostics and
 * grad_output, the rank-2 "unbatched" convention, the library's faults as
 * problems, and writing the answer.
 *
 * Shapes (docs/contract.md sections 1–3, 6): queries (B, Nq, dq), keys (B, Nk,
 * dk), values (B, Nk, dv); dq == dk (= d) for dot attention. Rank-2 input (Nq,
 * dq) ... is one unbatched example: B = 1 inside, and every output drops the
 * batch axis. valid_lens: (B) or (B, Nq); unbatched a scalar or (Nq). Output
 * (B, Nq, d_out) with d_out = dv except for multihead; weights (B, H, Nq, Nk)
 * with H = 1 (and no head axis on the wire) except for multihead.
 */
#ifndef API_ATTENTION_H
#define API_ATTENTION_H

#include <jansson.h>
#include <stdint.h>

#include "arena.h"
#include "attn.h"
#include "buf.h"
#include "call.h"
#include "diagnostics.h"
#include "fields.h"
#include "grads.h"
#include "mask_json.h"
#include "masks.h"
#include "problem.h"
#include "result.h"
#include "tensor.h"

/* valid_lens as every attention route accepts it. */
extern const api_tensor_spec api_attention_lens_spec;

/* queries (B, Nq, dq), keys (B, Nk, dk), values (B, Nk, dv), or each
 * unbatched, as the routes whose queries and keys may differ in features
 * take them (additive, multihead); in that order. */
extern const api_tensor_spec api_attention_queries_spec;
extern const api_tensor_spec api_attention_keys_spec;
extern const api_tensor_spec api_attention_values_spec;
extern const api_tensor_spec *const api_attention_qkv_specs[3];

/* The masking fields of a field table (fields.h), in the contract's
 * order: valid_lens, attn_mask, key_padding_mask, causal, fully_masked. */
/* clang-format off */
#define API_ATTENTION_MASK_FIELDS                                              \
    {"valid_lens", API_FIELD_TENSOR, 0, &api_attention_lens_spec, NULL},       \
    {"attn_mask", API_FIELD_MASK, 0, &api_attention_attn_mask_spec, NULL},     \
    {"key_padding_mask", API_FIELD_BOOL_MASK, 0,                               \
     &api_attention_key_padding_spec, NULL},                                   \
    {"causal", API_FIELD_BOOL_OR_STRING, 0, NULL, NULL},                       \
    {"fully_masked", API_FIELD_STRING, 0, NULL, NULL}
/* clang-format on */

/* The queries, keys and values of a field table, all required, with the
 * shared specs (api_attention_queries_spec, ...). */
/* clang-format off */
#define API_ATTENTION_QKV_FIELDS                                               \
    {"queries", API_FIELD_TENSOR, 1, &api_attention_queries_spec, NULL},       \
    {"keys", API_FIELD_TENSOR, 1, &api_attention_keys_spec, NULL},             \
    {"values", API_FIELD_TENSOR, 1, &api_attention_values_spec, NULL}
/* clang-format on */

/* The last rows of the dot, additive and multihead field tables, in the
 * contract's order: the options of the answer (diagnostics, gradients,
 * labels, trace, format, precision). */
/* clang-format off */
#define API_ATTENTION_ANSWER_FIELDS                                            \
    {"diagnostics", API_FIELD_BOOL, 0, NULL, NULL},                            \
    {"grad_output", API_FIELD_TENSOR, 0, &api_grad_output_spec, NULL},         \
    {"labels", API_FIELD_OBJECT, 0, NULL, &api_labels_schema},                 \
    {"trace", API_FIELD_BOOL, 0, NULL, NULL},                                  \
    {"tensor_format", API_FIELD_STRING, 0, NULL, NULL},                        \
    {"precision", API_FIELD_INTEGER, 0, NULL, NULL}
/* clang-format on */

/* PyTorch's masks as every attention route accepts them (docs/contract.md
 * section 1, "Masking"): attn_mask (Nq, Nk), (B, Nq, Nk), or on multihead
 * (B·H, Nq, Nk) (unbatched (Nq, Nk) or (H, Nq, Nk)), booleans (true = NOT
 * allowed, nn.MultiheadAttention's polarity) or numbers added to the
 * scaled scores (null = −∞); key_padding_mask (B, Nk), unbatched (Nk),
 * booleans (true = padding). Field kinds API_FIELD_MASK and
 * API_FIELD_BOOL_MASK (fields.h). */
extern const api_tensor_spec api_attention_attn_mask_spec;
extern const api_tensor_spec api_attention_key_padding_spec;

typedef struct {
    api_tensor q, k, v, lens; /* decoded (shapes only until read) */
    api_tensor grad;          /* grad_output, when has_grad */
    api_masks masks;          /* attn_mask, key_padding_mask (masks.h) */
    int has_lens;
    int has_grad;
    int batched; /* 1: rank-3 input; 0: rank 2, B = 1 */
    size_t B, Nq, Nk, dq, dk, dv;
    size_t H;     /* heads: 1 unless the route sets it (multihead) */
    size_t d_out; /* output features: dv unless the route sets it */
    int heads;    /* 1: weights and diagnostics carry the H axis */
    /* Multihead self-attention: keys is queries, values is keys (the
     * tensors are copied, their buffers shared, their gradients summed) */
    int keys_defaulted, values_defaulted;
    attn_causal causal;
    attn_fully_masked fully_masked;
    int return_weights; /* default 1 */
    int return_scores;  /* default 0 */
    int diagnostics;    /* default 0 */
    api_tensor_format fmt;
    /* Carved from the request's arena by api_attention_take: */
    double *qd, *kd, *vd; /* inputs */
    int64_t *lens_d;      /* valid_lens as integers, or NULL */
    double *out;          /* (B, Nq, d_out) */
    double *weights;      /* (B, H, Nq, Nk) */
    double *scores;       /* (B, H, Nq, Nk) with scores or diagnostics */
    double *grad_out;     /* grad_output (B, Nq, d_out), or NULL */
    double *grad_q, *grad_k, *grad_v; /* the inputs' shapes, or NULL */
    api_diagnostics diag;             /* buffers carved when diagnostics */
    attn_mask mask;
} api_attention;

/* The tensor phase for queries, keys, values (specs[0 … 2], in that
 * order): fills a->q, a->k, a->v. Returns 0 or -1 (p set). */
int api_attention_decode_qkv(api_attention *a, const api_fastpath *doc,
                             const json_t *body,
                             const api_tensor_spec *const specs[3],
                             size_t max_elements, api_problem *p);

/* The tensor phase for valid_lens (absent is fine). */
int api_attention_decode_lens(api_attention *a, const api_fastpath *doc,
                              const json_t *body, size_t max_elements,
                              api_problem *p);

/* The tensor phase for attn_mask then key_padding_mask (absent is fine):
 * rank, ragged, size, len(data), zero (mask_json.h). */
int api_attention_decode_masks(api_attention *a, const api_fastpath *doc,
                               const json_t *body, size_t max_elements,
                               api_problem *p);

/* The tensor phase for grad_output (absent is fine): sets has_grad. */
int api_attention_decode_grad(api_attention *a, const api_fastpath *doc,
                              const json_t *body, size_t max_elements,
                              api_problem *p);

/* The tensor phase for the fields after the inputs, in table order:
 * valid_lens, the masks, grad_output (each as above). */
int api_attention_decode_extras(api_attention *a, const api_fastpath *doc,
                                const json_t *body, size_t max_elements,
                                api_problem *p);

/* Cross-field shapes of keys (against queries: rank, B, and d when
 * same_d) and values (against keys: rank, B, Nk): shape_mismatch at the
 * later field with expected/got. Sets batched, B, Nq, Nk, dq, dk, dv, and
 * H = 1, d_out = dv (a route with other values sets them afterwards). */
int api_attention_cross_qkv(api_attention *a, int same_d, api_problem *p);

/* Cross-field shape of valid_lens: (B) or (B, Nq); unbatched () or (Nq).
 * shape_mismatch with expected/got otherwise; with heads > 1
 * (multihead's H, when known) a (B·H) one, d2l's valid_lens repeated per
 * head inside its MultiHeadAttention (d2l 11.5.2), is told to send (B). */
int api_attention_cross_lens(api_attention *a, size_t heads, api_problem *p);

/* Cross-field shapes of attn_mask and key_padding_mask (after
 * api_attention_cross_qkv): attn_mask (Nq, Nk) is shared, (B, Nq, Nk) per
 * example, and with heads > 0 (multihead's H, when known) (B·H, Nq, Nk)
 * per example and head, unbatched (H, Nq, Nk); key_padding_mask (B, Nk),
 * unbatched (Nk). shape_mismatch with expected/got otherwise. Sets
 * a->masks.layout. */
int api_attention_cross_masks(api_attention *a, size_t heads, api_problem *p);

/* Cross-field shape of grad_output: the output's, (B, Nq, d_out) or
 * unbatched (Nq, d_out) (grads.h). No-op without grad_output. */
int api_attention_cross_grad(api_attention *a, api_problem *p);

/* Derived sizes: output (B, Nq, d_out) and weights (B, H, Nq, Nk), counted
 * even with return_weights false, over max_elements -> 413. */
int api_attention_check_sizes(const api_attention *a, size_t max_elements,
                              api_problem *p);

/* Read return_weights (default true), return_scores and diagnostics
 * (default false); types are already checked, so this cannot fail. */
void api_attention_read_flags(api_attention *a, const json_t *body);

/* Plan the arena slots for inputs (one buffer for a defaulted tensor and
 * its source), valid_lens, output, weights, scores (return_scores or
 * diagnostics), the diagnostics' rows, grad_output and the inputs'
 * gradients, the masks. */
void api_attention_plan(const api_attention *a, api_arena *arena);

/* The numbers an answer of these shapes and flags prints (cost.h,
 * api_cost_answer): the output, the weights with return_weights, the
 * scores with return_scores, the diagnostics' rows and, with grad_output,
 * the inputs' gradients; saturating. The route adds its own members
 * (drawn parameters, their gradients). */
uint64_t api_attention_answer_numbers(const api_attention *a);

/* Carve the planned buffers and read the inputs (and grad_output) into
 * them. */
void api_attention_take(api_attention *a, api_arena *arena);

/* Slots of the plan that hold the request's own tensors: queries, keys
 * and values (unless defaulted), valid_lens, grad_output and the masks
 * (cost.h). */
size_t api_attention_input_slots(const api_attention *a);

/* valid_lens entries must lie in 0 … Nk: invalid_value at the entry
 * (/valid_lens/i, /valid_lens/b/q, or /valid_lens/data/i for the flat
 * form). Returns 0 or -1. */
int api_attention_check_lens(const api_attention *a, api_problem *p);

/* Read causal and fully_masked (unknown strings -> invalid_value at the
 * field), then set up a->mask from them, valid_lens and the masks read by
 * api_attention_take. Returns 0 or -1. */
int api_attention_read_mask(api_attention *a, const json_t *body,
                            api_problem *p);

/* Turn a library failure into the contract's problem: fully masked row
 * under "error" -> invalid_value at its valid_lens entry (or /causal, or
 * the attn_mask row, or the key_padding_mask row, whichever empties it);
 * non-finite result -> invalid_value; anything else -> internal. */
int api_attention_fault(const api_attention *a, attn_status st,
                        const attn_fault *fault, api_problem *p);

/* Start the typed answer r (result.h) in the request's format: "output",
 * "weights" (when asked) and "scores" (when asked; masked entries null),
 * r keeping arena (the tensors lie in it; arena is zeroed), and the
 * weights (B, H, Nq, Nk) as the heatmap titled title (a static string).
 * A value that is not finite fails the answer with invalid_value. */
void api_attention_answer(api_attention *a, api_result *r, api_arena *arena,
                          const char *title);

/* After a successful forward pass with diagnostics: compute them from
 * scores and weights (before api_attention_answer, which nulls masked
 * scores). No-op without diagnostics. */
void api_attention_diagnose(api_attention *a);

/* Add "diagnostics" when asked (diagnostics.h) and, when entries is
 * not NULL, its n entries ("grads.queries", ...) to r. */
void api_attention_answer_extras(api_attention *a, api_result *r,
                                 const api_grad_entry *entries, size_t n);

/* Multiply-adds of Q Kᵀ and weights·V: B·Nq·Nk·(d + dv), saturating
 * (the forward pass alone; see api_grads_work). */
uint64_t api_attention_work_dot(const api_attention *a);

/* The parameters a route takes given or drawn (additive, multihead,
 * self): all of the weights names[0 … n-1], or none of them and the
 * field alt ("num_hiddens", "d_k") that sizes the drawn ones. */
typedef struct {
    const char *const *names;
    int n;
    const char *alt;
    const char *none; /* the detail when neither is given */
    const char *all;  /* "give all three of …, or none of them and …" */
    const char *list; /* the weights as details name them: "W_q, W_k and w_v" */
} api_attention_params;

/* Step 1 of a route whose parameters are given or drawn: unknown_field,
 * missing_field (with the parameters' rule: missing_field at /alt when
 * neither, at the first weight missing when some are given), then
 * wrong_type, over the whole body (fields.h). *given is 1 when all the
 * weights are given. Returns 0, or -1 with p set. */
int api_attention_check_fields(const api_fastpath *doc, const json_t *body,
                               const api_schema *schema,
                               const api_attention_params *params, int *given,
                               api_problem *p);

/* num_hiddens, the hidden units h of parameters drawn: invalid_value
 * when beyond int64 (there is no size to check it against). *h is the
 * given weights' given_h, else num_hiddens when it is positive, else 1
 * (api_attention_check_drawn refuses it later, in table order). Returns
 * 0, or -1 with p set. */
int api_attention_read_hiddens(const json_t *body, int given, size_t given_h,
                               int64_t *num_hiddens, size_t *h, api_problem *p);

/* Step 5's checks of parameters given or drawn from num_hiddens and seed
 * (additive, multihead), in table order: num_hiddens with given weights,
 * num_hiddens below 1 to draw them, seed with given weights, seed out of
 * range (seed_big: beyond int64); each invalid_value at its field.
 * Returns 0, or -1 with p set. */
int api_attention_check_drawn(const json_t *body,
                              const api_attention_params *params, int given,
                              int64_t num_hiddens, int seed_big, int64_t seed,
                              api_problem *p);

/* The steps of an attention route's handler, each taking the route's
 * own request (req), in the contract's order of checks. */
typedef struct {
    /* 1–5: fields, tensors, cross-field shapes, sizes and work (charged),
     * the values before the allocation. Returns 0 or -1 (call->problem). */
    int (*decode)(api_call *call, void *req);
    /* 6–7: the one allocation, the values read into it. Returns 0, or -1
     * with call->problem set and nothing held. */
    int (*prepare)(api_call *call, void *req);
    /* 8: the library's passes (timed by api_attention_handle). */
    attn_status (*compute)(void *req, attn_fault *fault);
    /* 9: the typed result (result.h), which takes the allocation. */
    void (*answer)(api_call *call, void *req);
} api_attention_steps;

/* Run steps on req (size bytes, zeroed first), whose api_attention is a
 * and whose allocation is arena: decode, prepare, then, once the inputs are
 * read (api_call_inputs_read), compute and the diagnostics, timed in
 * call->compute_ms; a library failure becomes the contract's problem
 * (api_attention_fault) and frees arena; else answer. Returns 0
 * (call->result filled) or -1 (call->problem set). */
int api_attention_handle(api_call *call, const api_attention_steps *steps,
                         void *req, size_t size, api_attention *a,
                         api_arena *arena);

/* Add "scale" to r: a value that rounds beyond the largest double at the
 * answer's precision fails it with invalid_value at /precision. */
void api_attention_answer_scale(const api_attention *a, api_result *r,
                                double scale);

#endif /* API_ATTENTION_H */
