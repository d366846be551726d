/*
 * transformer.h — what POST /transformer/encoder and POST
 * /transformer/decoder share (transformer.c, whose steps are listed in
 * transformer_steps.h): the request's hyper-parameters, PyTorch's
 * state_dict (given, or drawn from a seed), grad_output, trace, and the
 * answer. Each route's entry, field table
 * and input tensors are in its own file (transformer_encoder.c,
 * transformer_decoder.c).
 */
#ifndef API_TRANSFORMER_H
#define API_TRANSFORMER_H

#include "call.h"
#include "cost.h"
#include "fields.h"
#include "grads.h"
#include "tensor.h"

/* Most layers a stack may have (num_layers). */
#define API_XF_LAYERS_MAX 64

/* PyTorch's masks on the blocks' attentions, as nn.TransformerEncoder
 * and nn.TransformerDecoder take them (batch_first): src_mask (S, S) or
 * (B·H, S, S) and src_key_padding_mask (B, S) on the encoder's
 * self-attention; tgt_mask (T, T) or (B·H, T, T) and tgt_key_padding_mask
 * (B, T) on the decoder's self-attention, memory_mask (T, S) or (B·H, T,
 * S) and memory_key_padding_mask (B, S) on its cross-attention. An
 * attn_mask is booleans (true = NOT allowed) or numbers added to the
 * scores (null = −∞); a key padding mask booleans (true = padding). Field
 * kinds API_FIELD_MASK and API_FIELD_BOOL_MASK (fields.h). */
extern const api_tensor_spec api_xf_src_mask_spec, api_xf_src_kpm_spec;
extern const api_tensor_spec api_xf_tgt_mask_spec, api_xf_memory_mask_spec;
extern const api_tensor_spec api_xf_tgt_kpm_spec, api_xf_memory_kpm_spec;

/* One of the two routes. */
typedef struct api_xf_route {
    int decoder;              /* 0: encoder, 1: decoder */
    const api_schema *schema; /* its field table (state_dict's object is
                                 an empty schema; the keys depend on
                                 num_layers and are checked per request) */
    const char *x_name;       /* "src" or "tgt" */
    const api_tensor_spec *x_spec;
    const api_tensor_spec *memory_spec; /* decoder: "memory" */
    int causal_default; /* the self-attention's causal default */
} api_xf_route;

/* The handler of both routes, for the route rt. Returns 0 (call->result
 * filled) or -1 (call->problem). */
int api_xf_handle(api_call *call, const api_xf_route *rt);

/* The cost function of both routes (cost.h); shapes is the handler's
 * decoded request. */
void api_xf_cost(const api_call *call, const void *shapes, api_cost *cost);

#endif /* API_TRANSFORMER_H */
