/*
 * transformer.c — POST /transformer/encoder and POST /transformer/decoder:
 * stacks of the Transformer's encoder or decoder layers (Vaswani et al.
 * 2017; d2l 11.7 "The Transformer Architecture"), as PyTorch's
 * nn.TransformerEncoder / nn.TransformerDecoder compute them in float64
 * with dropout 0 and batch_first=True (lib/transformer.c).
 *
 *   src (B, S, E) or unbatched (S, E)              encoder
 *   tgt (B, T, E), memory (B, S, E) or unbatched   decoder
 *   num_heads H (dividing E), num_layers L, d_model (= E), dim_feedforward
 *   F, norm_first, layer_norm_eps, activation ("relu", "gelu"),
 *   positional_encoding (d2l: X·sqrt(E) + P first)
 *   state_dict: PyTorch's keys "layers.<l>.<name>" and shapes, or seed to
 *   draw them from PyTorch's initial distributions (attn_xf_init)
 *   PyTorch's masks: src_mask (S, S) or (B·H, S, S), src_key_padding_mask
 *   (B, S); tgt_mask (T, T) or (B·H, T, T), memory_mask (T, S) or (B·H,
 *   T, S), tgt_key_padding_mask (B, T), memory_key_padding_mask (B, S)
 *   (booleans, true = NOT allowed, or numbers added to the scores, null =
 *   −∞; key padding booleans, true = padding), with
 *   causal (the self-attention's; encoder default false, decoder true),
 *   fully_masked, grad_output (the output's shape), trace
 *   -> {"output", "weights" (L, B, H, S, S) | "self_weights" (L, B, H, T,
 *       T) and "cross_weights" (L, B, H, T, S), "state_dict"? (drawn),
 *       "grads"?: {"src" | "tgt", "memory", "state_dict"}, "trace"?}
 * state_dict's keys hold dots, so the answer writes them as the members
 * of one TENSORS item (result.h); so is trace, a flat object whose keys
 * ("self_attention.Q") hold dots too.
 *
 * This file keeps PyTorch's names, the masks' specs and the handler; the
 * steps are in transformer_request.c, transformer_values.c,
 * transformer_alloc.c, transformer_compute.c and transformer_answer.c
 * (transformer_steps.h).
 */
#include "transformer.h"

#include <stdlib.h>
#include <string.h>

#include "transformer_steps.h"

/* ------------------------------------------------------ PyTorch's names */

/* transformer_steps.h */
const char *const api_xf_param_suffix[ATTN_XF_N_PARAMS] = {
    "self_attn.in_proj_weight",
    "self_attn.in_proj_bias",
    "self_attn.out_proj.weight",
    "self_attn.out_proj.bias",
    "multihead_attn.in_proj_weight",
    "multihead_attn.in_proj_bias",
    "multihead_attn.out_proj.weight",
    "multihead_attn.out_proj.bias",
    "linear1.weight",
    "linear1.bias",
    "linear2.weight",
    "linear2.bias",
    "norm1.weight",
    "norm1.bias",
    "norm2.weight",
    "norm2.bias",
    "norm3.weight",
    "norm3.bias"};
const char *const api_xf_param_shapes[ATTN_XF_N_PARAMS] = {
    "(3E, E)", "(3E)", "(E, E)", "(E)", "(3E, E)", "(3E)",
    "(E, E)",  "(E)",  "(F, E)", "(F)", "(E, F)",  "(E)",
    "(E)",     "(E)",  "(E)",    "(E)", "(E)",     "(E)"};

/* ------------------------------------------------------- PyTorch's masks */

const api_tensor_spec api_xf_src_mask_spec = {
    "src_mask", API_RANK(2) | API_RANK(3), 0,
    "(S, S) or (B*H, S, S), unbatched (S, S) or (H, S, S)", 3};
const api_tensor_spec api_xf_src_kpm_spec = {"src_key_padding_mask",
                                             API_RANK(1) | API_RANK(2), 0,
                                             "(B, S), unbatched (S)", 2};
const api_tensor_spec api_xf_tgt_mask_spec = {
    "tgt_mask", API_RANK(2) | API_RANK(3), 0,
    "(T, T) or (B*H, T, T), unbatched (T, T) or (H, T, T)", 3};
const api_tensor_spec api_xf_memory_mask_spec = {
    "memory_mask", API_RANK(2) | API_RANK(3), 0,
    "(T, S) or (B*H, T, S), unbatched (T, S) or (H, T, S)", 3};
const api_tensor_spec api_xf_tgt_kpm_spec = {"tgt_key_padding_mask",
                                             API_RANK(1) | API_RANK(2), 0,
                                             "(B, T), unbatched (T)", 2};
const api_tensor_spec api_xf_memory_kpm_spec = {"memory_key_padding_mask",
                                                API_RANK(1) | API_RANK(2), 0,
                                                "(B, S), unbatched (S)", 2};

/* ------------------------------------------------------------ handler */

/* The steps in the contract's order: decode (1–5), prepare (6–7),
 * compute (8), answer (9); state_dict's keys are freed once the inputs
 * are read, the allocation on any failure. */
int api_xf_handle(api_call *call, const api_xf_route *rt) {
    xf_request m;
    memset(&m, 0, sizeof m);
    m.rt = rt;
    int failed = api_xf_decode(call, &m) || api_xf_prepare(call, &m);
    free(m.keys);
    m.keys = NULL;
    if (failed) {
        api_arena_free(&m.arena);
        return -1;
    }
    attn_fault fault = {0};
    attn_status st = api_xf_compute(call, &m, &fault);
    if (api_xf_fault_problem(&m, st, &fault, &call->problem)) {
        api_arena_free(&m.arena);
        return -1;
    }
    api_xf_answer(call, &m);
    return 0;
}
