/*
 * transformer_decoder.c — POST /transformer/decoder: a stack of
 * num_layers decoder layers over tgt attending to memory (the encoder's
 * output), as PyTorch's nn.TransformerDecoder of
 * nn.TransformerDecoderLayer (batch_first=True, dropout 0); d2l 11.7.5
 * "Decoder" in training, whose self-attention is causal. The field table
 * and the route's entry; the handler is transformer.c's.
 */
#include "route.h"
#include "transformer.h"

static const api_tensor_spec tgt_spec = {"tgt", API_RANK(2) | API_RANK(3), 0,
                                         "(B, T, E) or unbatched (T, E)", 0};
static const api_tensor_spec memory_spec = {
    "memory", API_RANK(2) | API_RANK(3), 0, "(B, S, E) or unbatched (S, E)", 0};

/* The state_dict's keys depend on num_layers: transformer.c checks them
 * against a table made per request. */
static const api_schema state_dict_schema = {"state_dict", NULL, 0};

/* The contract's field table (docs/contract.md), in its order. */
static const api_field fields[] = {
    {"tgt", API_FIELD_TENSOR, 1, &tgt_spec, NULL},
    {"memory", API_FIELD_TENSOR, 1, &memory_spec, NULL},
    {"num_heads", API_FIELD_INTEGER, 1, NULL, NULL},
    {"num_layers", API_FIELD_INTEGER, 1, NULL, NULL},
    {"d_model", API_FIELD_INTEGER, 0, NULL, NULL},
    {"dim_feedforward", API_FIELD_INTEGER, 0, NULL, NULL},
    {"norm_first", API_FIELD_BOOL, 0, NULL, NULL},
    {"layer_norm_eps", API_FIELD_NUMBER, 0, NULL, NULL},
    {"activation", API_FIELD_STRING, 0, NULL, NULL},
    {"positional_encoding", API_FIELD_BOOL, 0, NULL, NULL},
    {"state_dict", API_FIELD_OBJECT, 0, NULL, &state_dict_schema},
    {"seed", API_FIELD_INTEGER, 0, NULL, NULL},
    {"tgt_mask", API_FIELD_MASK, 0, &api_xf_tgt_mask_spec, NULL},
    {"memory_mask", API_FIELD_MASK, 0, &api_xf_memory_mask_spec, NULL},
    {"tgt_key_padding_mask", API_FIELD_BOOL_MASK, 0, &api_xf_tgt_kpm_spec,
     NULL},
    {"memory_key_padding_mask", API_FIELD_BOOL_MASK, 0, &api_xf_memory_kpm_spec,
     NULL},
    {"causal", API_FIELD_BOOL, 0, NULL, NULL},
    {"fully_masked", API_FIELD_STRING, 0, NULL, NULL},
    {"grad_output", API_FIELD_TENSOR, 0, &api_grad_output_spec, NULL},
    {"trace", API_FIELD_BOOL, 0, NULL, NULL},
    {"tensor_format", API_FIELD_STRING, 0, NULL, NULL},
    {"precision", API_FIELD_INTEGER, 0, NULL, NULL},
};

static const api_schema schema = {"/transformer/decoder", fields,
                                  sizeof fields / sizeof fields[0]};

static const api_xf_route decoder = {
    .decoder = 1,
    .schema = &schema,
    .x_name = "tgt",
    .x_spec = &tgt_spec,
    .memory_spec = &memory_spec,
    .causal_default = 1,
};

static int handle_decoder(api_call *call) {
    return api_xf_handle(call, &decoder);
}

/* The members of the answer, which /grade grades (answers.h): the
 * state_dicts and the trace are objects of tensors under literal keys,
 * graded key by key as "grads.state_dict.layers.0.linear1.weight",
 * "trace.self_attention.Q". */
#define ANSWER_DRAWN "seed instead of a given state_dict"
static const api_answer_field answer_fields[] = {
    {"output", 3, 0, 0, API_ANSWER_ALWAYS},
    {"self_weights", 5, 0, 0, API_ANSWER_ALWAYS},
    {"cross_weights", 5, 0, 0, API_ANSWER_ALWAYS},
    {"state_dict", 0, 0, API_ANSWER_TENSORS, ANSWER_DRAWN},
    {"grads.tgt", 3, 0, 0, API_ANSWER_GRADS},
    {"grads.memory", 3, 0, 0, API_ANSWER_GRADS},
    {"grads.state_dict", 0, 0, API_ANSWER_TENSORS, API_ANSWER_GRADS},
    {"trace", 0, 0, API_ANSWER_TENSORS, API_ANSWER_TRACE},
};
static const api_answer_table answer = API_ANSWER_TABLE(answer_fields);

const api_route api_route_transformer_decoder = {
    .method = "POST",
    .path = "/transformer/decoder",
    .handler = handle_decoder,
    .flags = API_ROUTE_JSON_BODY | API_ROUTE_VARY_ACCEPT | API_ROUTE_COMPUTES,
    .request = &schema,
    .answer = &answer,
    .cost = api_xf_cost,
};
