/*
 * transformer_encoder.c — POST /transformer/encoder: a stack of
 * num_layers encoder layers over src, as PyTorch's nn.TransformerEncoder
 * of nn.TransformerEncoderLayer (batch_first=True, dropout 0); d2l 11.7.4
 * "Encoder". The field table and the route's entry; the handler is
 * transformer.c's.
 */
#include "route.h"
#include "transformer.h"

static const api_tensor_spec src_spec = {"src", API_RANK(2) | API_RANK(3), 0,
                                         "(B, S, E) or unbatched (S, E)", 0};

/* The state_dict's keys depend on num_layers: transformer.c checks them
 * against a table made per request. */
static const api_schema state_dict_schema = {"state_dict", NULL, 0};

/* The contract's field table (docs/contract.md), in its order. */
static const api_field fields[] = {
    {"src", API_FIELD_TENSOR, 1, &src_spec, NULL},
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
    {"src_mask", API_FIELD_MASK, 0, &api_xf_src_mask_spec, NULL},
    {"src_key_padding_mask", API_FIELD_BOOL_MASK, 0, &api_xf_src_kpm_spec,
     NULL},
    {"causal", API_FIELD_BOOL, 0, NULL, NULL},
    {"fully_masked", API_FIELD_STRING, 0, NULL, NULL},
    {"grad_output", API_FIELD_TENSOR, 0, &api_grad_output_spec, NULL},
    {"trace", API_FIELD_BOOL, 0, NULL, NULL},
    {"tensor_format", API_FIELD_STRING, 0, NULL, NULL},
    {"precision", API_FIELD_INTEGER, 0, NULL, NULL},
};

static const api_schema schema = {"/transformer/encoder", fields,
                                  sizeof fields / sizeof fields[0]};

static const api_xf_route encoder = {
    .decoder = 0,
    .schema = &schema,
    .x_name = "src",
    .x_spec = &src_spec,
    .memory_spec = NULL,
    .causal_default = 0,
};

static int handle_encoder(api_call *call) {
    return api_xf_handle(call, &encoder);
}

/* The members of the answer, which /grade grades (answers.h): the
 * state_dicts and the trace are objects of tensors under literal keys,
 * graded key by key as "grads.state_dict.layers.0.linear1.weight",
 * "trace.self_attention.Q". */
#define ANSWER_DRAWN "seed instead of a given state_dict"
static const api_answer_field answer_fields[] = {
    {"output", 3, 0, 0, API_ANSWER_ALWAYS},
    {"weights", 5, 0, 0, API_ANSWER_ALWAYS},
    {"state_dict", 0, 0, API_ANSWER_TENSORS, ANSWER_DRAWN},
    {"grads.src", 3, 0, 0, API_ANSWER_GRADS},
    {"grads.state_dict", 0, 0, API_ANSWER_TENSORS, API_ANSWER_GRADS},
    {"trace", 0, 0, API_ANSWER_TENSORS, API_ANSWER_TRACE},
};
static const api_answer_table answer = API_ANSWER_TABLE(answer_fields);

const api_route api_route_transformer_encoder = {
    .method = "POST",
    .path = "/transformer/encoder",
    .handler = handle_encoder,
    .flags = API_ROUTE_JSON_BODY | API_ROUTE_VARY_ACCEPT | API_ROUTE_COMPUTES,
    .request = &schema,
    .answer = &answer,
    .cost = api_xf_cost,
};
