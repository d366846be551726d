/*
 * transformer_steps.h — one Transformer request's state and the steps
 * the files of POST /transformer/encoder and /transformer/decoder share
 * (only the files named here include it): transformer.c keeps
 * PyTorch's names, the masks' specs and the handler, transformer_request.c
 * decodes the request (its state_dict schema, tensors and cross-field
 * shapes), transformer_values.c checks the values that size the work,
 * transformer_alloc.c plans, charges and carves the one allocation,
 * transformer_compute.c runs the blocks and turns a failure into the
 * contract's problem, and transformer_answer.c writes the typed result.
 */
#ifndef API_TRANSFORMER_STEPS_H
#define API_TRANSFORMER_STEPS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "attn.h"
#include "call.h"
#include "masks.h"
#include "problem.h"
#include "result.h"
#include "tensor.h"

struct api_xf_route; /* transformer.h */

/* Each parameter's name inside a layer, in state_dict order (attn.h's
 * attn_xf_param order), and its shape for details. */
extern const char *const api_xf_param_suffix[ATTN_XF_N_PARAMS];
extern const char *const api_xf_param_shapes[ATTN_XF_N_PARAMS];

/* Longest key: "layers.63.multihead_attn.out_proj.weight" and its
 * pointer under /state_dict (no '/' or '~' to escape). */
#define KEY_MAX 64

/* One state_dict key of the request, while it is decoded. */
typedef struct {
    char name[KEY_MAX];
    char pointer[KEY_MAX + 16];
    api_tensor_spec spec;
    api_tensor t;
    size_t layer;
    attn_xf_param param;
} xf_key;

/* The masks of one attention block (0: self, 1: cross), as PyTorch's
 * nn.MultiheadAttention takes them inside the layer: attn_mask (Nq, Nk)
 * shared, or (B·H, Nq, Nk) per example and head (slab b·H + t), and
 * key_padding_mask (B, Nk). */
typedef struct {
    const api_tensor_spec *mask_spec, *kpm_spec;
    const char *mask_ptr, *kpm_ptr; /* "/src_mask", ... */
    const char *q_axis, *k_axis;    /* the axes' letters: "S", "T" */
    api_masks m;                    /* the masks, decoded then read (masks.h) */
    size_t Nk;
} xf_masks;

/* The trace of one attention block: its own tensors (the rest are the
 * tape's). */
typedef struct {
    double *Q, *K, *V, *Q_heads, *K_heads, *V_heads, *QK, *masked, *wv, *concat;
} xf_trace_attn;

/* One request, decoded, then computed. */
typedef struct {
    const struct api_xf_route *rt;
    api_tensor x, mem, grad;
    int has_grad, batched, given, trace, pe;
    attn_xf_config cfg;
    size_t n_used; /* parameters per layer: 12 (encoder) or 18 */
    int64_t seed;
    int causal;
    attn_fully_masked fully_masked;
    api_tensor_format fmt;
    xf_key *keys; /* L·n_used keys, state_dict's order (heap, decode only) */
    size_t n_keys;
    api_arena arena;
    /* carved from the arena */
    double *xd, *memd, *grad_out, *x0, *P, *embedded, *out, *tape_buf;
    double *grad_x, *grad_mem;
    double **param, **gparam; /* L·ATTN_XF_N_PARAMS each */
    attn_xf_tape tape;
    xf_trace_attn tr[2];
    api_result_member *sd_members, *grad_members, *trace_members;
    char *key_text; /* L·n_used keys of KEY_MAX bytes */
    attn_mask self_mask, cross_mask;
    xf_masks masks[2]; /* the self- and cross-attention's */
} xf_request;

/* Members a trace has at most: 3 before the layers, 13 per attention
 * block and 2 after it, 4 for the feed-forward block. */
#define TRACE_MEMBERS_MAX (3 + 2 * 15 + 4)

/* Steps 1–5 of the contract's order of checks (transformer_request.c):
 * fields against the request's own schema (state_dict's keys for its
 * layers), tensors, cross-field shapes, the values, sizes and work
 * (charged, api_xf_cost). m->rt is set; m->keys is left on the heap for
 * the caller to free, also on failure. Returns 0, or -1 with
 * call->problem set. */
int api_xf_decode(api_call *call, xf_request *m);

/* The values (invalid_value), in table order: num_heads, num_layers,
 * d_model, dim_feedforward, norm_first, layer_norm_eps, activation,
 * positional_encoding, seed, causal, fully_masked, trace and the output
 * format (transformer_values.c). Sets m->cfg's H, L, F and the flags.
 * Returns 0, or -1 with p set. */
int api_xf_check_values(xf_request *m, const json_t *body, api_problem *p);

/* Derived tensors over max_elements (413): the weights, the drawn
 * parameters, and with a trace its largest tensors. Returns 0 or -1. */
int api_xf_check_sizes(const xf_request *m, size_t max_elements,
                       api_problem *p);

/* Steps 6–7 (transformer_alloc.c): the one allocation carved, the
 * inputs read, the parameters read or drawn, the masks set. Returns 0,
 * or -1 with call->problem set (out of memory); the caller frees
 * m->arena either way. */
int api_xf_prepare(api_call *call, xf_request *m);

/* Step 8 (transformer_compute.c): positional encoding, the forward pass,
 * the backward pass with grad_output and the trace; times it in
 * call->compute_ms. Returns the library's status, *fault filled on
 * failure. */
attn_status api_xf_compute(api_call *call, xf_request *m, attn_fault *fault);

/* The library's failure st as the contract's problem: a fully masked
 * row under "error" -> invalid_value at the mask row that empties it,
 * non-finite -> invalid_value, deadline -> its problem, else internal.
 * Returns 0 for ATTN_OK, else -1 with p set. */
int api_xf_fault_problem(const xf_request *m, attn_status st,
                         const attn_fault *fault, api_problem *p);

/* Step 9 (transformer_answer.c): the typed result (result.h), which
 * takes over m->arena. */
void api_xf_answer(api_call *call, xf_request *m);

#endif /* API_TRANSFORMER_STEPS_H */
