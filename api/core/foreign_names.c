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

static const foreign_name table[] = {
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
    {"bandwidth", "w",
     "is not a field: attnd takes `w`, the inverse bandwidth (w = 1/h), or "
     "a rule \"scott\", \"silverman\" or \"cv\""},
};

const char *api_foreign_name(const char *key, const char *const *names,
                             size_t n) {
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (strcmp(table[i].name, key))
            continue;
        for (size_t j = 0; j < n; j++)
            if (!strcmp(names[j], table[i].needs))
                return table[i].says;
        return NULL;
    }
    return NULL;
}
