/*
 * foreign_names.c — PyTorch's and d2l's names for what attnd spells
 * otherwise or lacks (see foreign_names.h).
 */
#include "foreign_names.h"

#include <string.h>

typedef struct {
    const char *name;  /* the foreign name */
    const char *needs; /* the advice fits routes with this field */
    const char *says;  /* follows "`name` " */
} foreign_name;

/* W_q and seed on /attention/dot (the one route with `scale`), not on
 * additive, whose W_v is its w_v misspelt */
#define ON_PARAMETER_ROUTES                                                    \
    "belongs to /attention/multihead and /attention/additive, which have "     \
    "parameters; dot attention has none"

/* `output` sent to a route: what it is, and where an answer goes */
#define ANSWER_MEMBER                                                          \
    "is a member of attnd's answers, not a request field; to grade an "        \
    "answer, POST /grade {\"endpoint\", \"request\", \"answer\"} "             \
    "(docs/grading.md)"

/* `output` at the top of a /grade body */
#define ON_GRADE                                                               \
    "is a member of the answer: it goes inside `answer`, as {\"endpoint\", "   \
    "\"request\", \"answer\": {its members}}"

/* dropout and batch_first on the Transformer blocks */
#define TRANSFORMER_EVAL                                                       \
    "is not offered: attnd computes the blocks as PyTorch does in eval "       \
    "mode, with no dropout"
#define TRANSFORMER_BATCH_FIRST                                                \
    "is not needed: attnd's blocks are always batch first, (B, S, E), or "     \
    "unbatched (S, E), as with batch_first=True"

/* numpy.allclose's and math.isclose's tolerances, on /grade */
#define GRADE_TOLERANCES                                                       \
    "is not a field: /grade takes `compare`, {\"mode\": \"relabs\", "          \
    "\"rtol\": 1e-5, \"atol\": 1e-8} as numpy.allclose, or sigfig, decdig, "   \
    "ulp (docs/grading.md, Comparisons); `rtol` and `atol` alone mean relabs"
#define GRADE_DIGITS                                                           \
    "is not a field: /grade takes `compare`, {\"mode\": \"sigfig\", "          \
    "\"digits\": 3} for significant digits or {\"mode\": \"decdig\", "         \
    "\"digits\": 3} for digits after the point (docs/grading.md, "             \
    "Comparisons)"

static const foreign_name table[] = {
    {"tolerance", "rtol", GRADE_TOLERANCES},
    {"tol", "rtol", GRADE_TOLERANCES},
    {"rel_tol", "rtol", GRADE_TOLERANCES},
    {"abs_tol", "rtol", GRADE_TOLERANCES},
    {"comparison", "compare", GRADE_TOLERANCES},
    {"mode", "compare", GRADE_TOLERANCES},
    {"digits", "compare", GRADE_DIGITS},
    {"sigfigs", "compare", GRADE_DIGITS},
    {"sig_figs", "compare", GRADE_DIGITS},
    {"decimals", "compare", GRADE_DIGITS},
    {"is_causal", "causal",
     "is PyTorch's name; attnd calls it `causal` (true, \"top_left\" or "
     "\"bottom_right\")"},
    {"need_weights", "return_weights",
     "is PyTorch's name; attnd calls it `return_weights`"},
    {"temperature", "scale",
     "is not a field: attnd takes `scale`, the factor on the scores, so "
     "scale = 1/temperature"},
    {"embed_dim", "num_hiddens",
     "is PyTorch's name; attnd calls the projection size `num_hiddens` (h)"},
    {"dropout", "queries",
     "is not offered: attnd computes attention as PyTorch does in eval mode, "
     "with no dropout"},
    {"dropout_p", "queries",
     "is not offered: attnd computes attention as PyTorch does in eval mode, "
     "with no dropout"},
    {"attn_mask", "valid_lens",
     "is not offered on this route: mask keys with `valid_lens` (a prefix "
     "of the keys per example or per query) or `causal`"},
    {"key_padding_mask", "valid_lens",
     "is not offered on this route: give each example's number of real "
     "keys as `valid_lens`"},
    {"attn_mask", "src_mask",
     "is nn.MultiheadAttention's name; the encoder takes it as PyTorch's "
     "nn.TransformerEncoder does: `src_mask`, and key padding as "
     "`src_key_padding_mask`"},
    {"attn_mask", "tgt_mask",
     "is nn.MultiheadAttention's name; the decoder takes it as PyTorch's "
     "nn.TransformerDecoder does: `tgt_mask` for its self-attention, "
     "`memory_mask` for the cross-attention"},
    {"key_padding_mask", "src_key_padding_mask",
     "is nn.MultiheadAttention's name; the encoder calls it "
     "`src_key_padding_mask`, as nn.TransformerEncoder does"},
    {"key_padding_mask", "tgt_key_padding_mask",
     "is nn.MultiheadAttention's name; the decoder takes "
     "`tgt_key_padding_mask` and `memory_key_padding_mask`, as "
     "nn.TransformerDecoder does"},
    {"mask", "valid_lens",
     "is not a field: attnd takes PyTorch's `attn_mask` (a boolean one is "
     "true where a key is NOT allowed, as nn.MultiheadAttention; "
     "scaled_dot_product_attention's is the opposite) and "
     "`key_padding_mask`, and `valid_lens` and `causal`"},
    {"average_attn_weights", "num_heads",
     "is not offered: attnd always answers each head's weights, (B, H, Nq, "
     "Nk); average them over H yourself"},
    {"batch_first", "queries",
     "is not needed: attnd's tensors are always batch first, (B, N, d), or "
     "unbatched (N, d)"},
    /* nn.TransformerEncoderLayer's and nn.TransformerDecoderLayer's
     * arguments, as a student copying their constructor sends them */
    {"dropout", "src", TRANSFORMER_EVAL},
    {"dropout", "tgt", TRANSFORMER_EVAL},
    {"batch_first", "src", TRANSFORMER_BATCH_FIRST},
    {"batch_first", "tgt", TRANSFORMER_BATCH_FIRST},
    {"valid_lens", "src",
     "is d2l's way of masking padding; the encoder takes PyTorch's "
     "`src_key_padding_mask` (B, S), true at the padded positions"},
    {"valid_lens", "tgt",
     "is d2l's way of masking padding; the decoder takes PyTorch's "
     "`tgt_key_padding_mask` (B, T) and `memory_key_padding_mask` (B, S), "
     "true at the padded positions"},
    /* what GET /regression/nw/dataset answers, sent on to /regression/nw */
    {"x_test", "x_query",
     "is the dataset's (and d2l's) name for the query points; "
     "/regression/nw takes them as `x_query`"},
    {"y_truth", "x_query",
     "is the dataset's (and d2l's) name for the true values at the query "
     "points; send them as `y_query` to get the loss"},
    {"nhead", "num_heads",
     "is PyTorch's name; attnd calls the number of heads `num_heads`"},
    {"bandwidth", "w",
     "is not a field: attnd takes `w`, the inverse bandwidth (w = 1/h), or "
     "a rule \"scott\", \"silverman\" or \"cv\""},
    {"sigma", "w",
     "is not a field: the Gaussian kernel's width sigma is the bandwidth "
     "h, and attnd takes its inverse, `w` = 1/sigma (d2l 11.2: "
     "exp(-((x - x_i) w)^2 / 2)), or a rule \"scott\", \"silverman\" or "
     "\"cv\""},
    {"h", "w",
     "is not a field: attnd takes the bandwidth h as its inverse, `w` = "
     "1/h (d2l 11.2: exp(-((x - x_i) w)^2 / 2))"},
    /* PyTorch's short names and its nn.MultiheadAttention arguments */
    {"Q", "queries", "is not a field: attnd calls the queries `queries`"},
    {"K", "keys", "is not a field: attnd calls the keys `keys`"},
    {"V", "values", "is not a field: attnd calls the values `values`"},
    {"q", "queries", "is not a field: attnd calls the queries `queries`"},
    {"k", "keys", "is not a field: attnd calls the keys `keys`"},
    {"v", "values", "is not a field: attnd calls the values `values`"},
    {"num_heads", "queries",
     "belongs to /attention/multihead, which splits the projections into "
     "heads"},
    {"seed", "scale", ON_PARAMETER_ROUTES},
    {"W_q", "scale", ON_PARAMETER_ROUTES},
    {"W_k", "scale", ON_PARAMETER_ROUTES},
    {"W_v", "scale", ON_PARAMETER_ROUTES},
    {"W_o", "scale", ON_PARAMETER_ROUTES},
    {"kdim", "num_heads",
     "is not needed: attnd reads dk and dv from the shapes of keys and "
     "values"},
    {"vdim", "num_heads",
     "is not needed: attnd reads dk and dv from the shapes of keys and "
     "values"},
    {"in_proj_weight", "W_o",
     "is nn.MultiheadAttention's packed (3h, d) weight: send its row "
     "blocks apart, W_q = in_proj_weight[:h], W_k = in_proj_weight[h:2h], "
     "W_v = in_proj_weight[2h:], each in nn.Linear's layout as it is"},
    {"in_proj_bias", "W_o",
     "is nn.MultiheadAttention's packed (3h) bias: send b_q = "
     "in_proj_bias[:h], b_k = in_proj_bias[h:2h], b_v = in_proj_bias[2h:]"},
    {"in_proj_weight", "state_dict",
     "is a key of each layer's attention: it goes inside `state_dict`, as "
     "\"layers.0.self_attn.in_proj_weight\", with PyTorch's names "
     "(docs/transformer.md)"},
    {"out_proj.weight", "W_o",
     "is nn.MultiheadAttention's out_proj.weight: send it as `W_o`, as it "
     "is"},
    {"out_proj.bias", "b_o",
     "is nn.MultiheadAttention's out_proj.bias: send it as `b_o`"},
    {"bias", "b_q",
     "is PyTorch's switch; attnd takes the biases themselves, `b_q`, `b_k`, "
     "`b_v` and `b_o`, with given W_q, W_k, W_v and W_o (absent: no bias)"},
};

/* The top-level members of attnd's answers (answers.h) that a request
 * may bring back: on /grade (the one route with a field `answer`) they go
 * inside the answer; on any other route that does not take one as a field
 * (/softmax/masked takes `scores`) it is what attnd answers, and not a
 * misspelt field, whatever edit distance says (`output` is not
 * `grad_output`). No row of the table above has their names.
 * tests/unit/test_api_foreign_names.c holds this list to the routes'
 * answer tables. */
static const char *const answer_members[] = {
    "output",      "weights", "scores", "params", "grads",
    "predictions", "history", "loss",   "grad_w",
};

static int has_name(const char *const *names, size_t n, const char *name) {
    for (size_t j = 0; j < n; j++)
        if (!strcmp(names[j], name))
            return 1;
    return 0;
}

const char *const *api_foreign_answer_members(size_t *n) {
    *n = sizeof answer_members / sizeof answer_members[0];
    return answer_members;
}

const char *api_foreign_name(const char *key, const char *const *names,
                             size_t n) {
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(table[i].name, key))
            continue;
        if (has_name(names, n, table[i].needs))
            return table[i].says;
        /* a later entry of the same name may fit this route */
    }
    size_t n_members;
    const char *const *members = api_foreign_answer_members(&n_members);
    if (has_name(members, n_members, key))
        return has_name(names, n, "answer") ? ON_GRADE : ANSWER_MEMBER;
    return NULL;
}
