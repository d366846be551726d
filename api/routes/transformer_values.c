/*
 * transformer_values.c — the values of a Transformer request that size
 * its work, and the sizes they derive (step 4 of the contract's order of
 * checks): num_heads, num_layers, d_model, dim_feedforward, the layers'
 * options, the seed, the masking options, trace and the output format,
 * each invalid_value in table order; then the derived tensors against
 * --max-elements.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fields.h"
#include "limit.h"
#include "transformer.h"
#include "transformer_steps.h"

/* The integer field name in lo … hi, or invalid_value with why. */
static int int_in(const json_t *body, const char *name, int64_t def, int64_t lo,
                  int64_t hi, int64_t *out, const char *why, api_problem *p) {
    int big = api_field_int(body, name, def, out);
    if (!big && *out >= lo && *out <= hi)
        return 0;
    char pointer[64];
    snprintf(pointer, sizeof pointer, "/%s", name);
    return api_fail(p, API_E_INVALID_VALUE, pointer, "%s", why);
}

/* The values that size the layers: num_heads H (dividing E), num_layers
 * L, d_model (E, when given), dim_feedforward F (given by state_dict's
 * shapes, or read). */
static int check_dimensions(xf_request *m, const json_t *body, api_problem *p) {
    attn_xf_config *c = &m->cfg;
    int64_t v;
    char why[API_DETAIL_MAX];
    if (int_in(body, "num_heads", 0, 1, (int64_t)c->E, &v,
               "num_heads is the number of heads H, from 1 to d_model, "
               "dividing d_model",
               p))
        return -1;
    c->H = (size_t)v;
    if (c->E % c->H != 0)
        return api_fail(p, API_E_INVALID_VALUE, "/num_heads",
                        "num_heads must divide d_model E = %zu: each head "
                        "gets E / H features",
                        c->E);
    snprintf(why, sizeof why,
             "num_layers is the number of layers L, from 1 "
             "to %d",
             API_XF_LAYERS_MAX);
    if (int_in(body, "num_layers", 0, 1, API_XF_LAYERS_MAX, &v, why, p))
        return -1;
    c->L = (size_t)v;
    if (api_field_value(body, "d_model") &&
        (api_field_int(body, "d_model", 0, &v) || v < 0 || (size_t)v != c->E))
        return api_fail(p, API_E_INVALID_VALUE, "/d_model",
                        "d_model is the feature size E of %s, %zu here; "
                        "leave it out or give %zu",
                        m->rt->x_name, c->E, c->E);
    if (m->given) {
        if (api_field_value(body, "dim_feedforward") &&
            (api_field_int(body, "dim_feedforward", 0, &v) || v < 0 ||
             (size_t)v != c->F))
            return api_fail(p, API_E_INVALID_VALUE, "/dim_feedforward",
                            "dim_feedforward is F, the rows of state_dict's "
                            "layers.0.linear1.weight: %zu; leave it out or "
                            "give %zu",
                            c->F, c->F);
    } else {
        if (int_in(body, "dim_feedforward", 2048, 1, INT32_MAX, &v,
                   "dim_feedforward is the feed-forward network's hidden "
                   "size F, at least 1 (PyTorch's default 2048)",
                   p))
            return -1;
        c->F = (size_t)v;
    }
    return 0;
}

/* The layers' options: norm_first, layer_norm_eps, activation,
 * positional_encoding, then seed (only to draw the parameters). */
static int check_layer_options(xf_request *m, const json_t *body,
                               api_problem *p) {
    attn_xf_config *c = &m->cfg;
    c->norm_first = api_field_bool(body, "norm_first", 0);
    c->eps = api_field_number(body, "layer_norm_eps", 1e-5);
    if (!isfinite(c->eps) || !(c->eps > 0))
        return api_fail(p, API_E_INVALID_VALUE, "/layer_norm_eps",
                        "layer_norm_eps is added to the variance under the "
                        "square root: a finite number > 0 (PyTorch's default "
                        "1e-5; with 0 a row of equal features divides 0 by "
                        "0)");
    const char *act = api_field_string(body, "activation", "relu");
    if (!strcmp(act, "relu"))
        c->activation = ATTN_ACTIVATION_RELU;
    else if (!strcmp(act, "gelu"))
        c->activation = ATTN_ACTIVATION_GELU;
    else
        return api_fail(p, API_E_INVALID_VALUE, "/activation",
                        "activation is \"relu\" (default) or \"gelu\" (the "
                        "exact erf form, as PyTorch's)");
    m->pe = api_field_bool(body, "positional_encoding", 0);
    if (m->given && api_field_value(body, "seed"))
        return api_fail(p, API_E_INVALID_VALUE, "/seed",
                        "seed draws the parameters; with state_dict given, "
                        "leave it out");
    if (!m->given && int_in(body, "seed", 0, 0, INT64_MAX, &m->seed,
                            "seed is an integer from 0 to 2^63 - 1", p))
        return -1;
    return 0;
}

/* The masking options (causal, fully_masked), trace and the output
 * format. */
static int check_answer_options(xf_request *m, const json_t *body,
                                api_problem *p) {
    m->causal = api_field_bool(body, "causal", m->rt->causal_default);
    const char *fm = api_field_string(body, "fully_masked", "zero");
    if (!strcmp(fm, "zero"))
        m->fully_masked = ATTN_FULLY_MASKED_ZERO;
    else if (!strcmp(fm, "uniform"))
        m->fully_masked = ATTN_FULLY_MASKED_UNIFORM;
    else if (!strcmp(fm, "error"))
        m->fully_masked = ATTN_FULLY_MASKED_ERROR;
    else
        return api_fail(p, API_E_INVALID_VALUE, "/fully_masked",
                        "fully_masked is \"zero\" (default), \"uniform\" or "
                        "\"error\"");
    m->trace = api_field_bool(body, "trace", 0);
    return api_tensor_format_read(&m->fmt, body, p);
}

/* transformer_steps.h */
int api_xf_check_values(xf_request *m, const json_t *body, api_problem *p) {
    return check_dimensions(m, body, p) || check_layer_options(m, body, p) ||
                   check_answer_options(m, body, p)
               ? -1
               : 0;
}

/* transformer_steps.h */
int api_xf_check_sizes(const xf_request *m, size_t max_elements,
                       api_problem *p) {
    const attn_xf_config *c = &m->cfg;
    size_t w[5] = {c->L, c->B, c->H, c->N, c->N};
    size_t cw[5] = {c->L, c->B, c->H, c->N, c->S_mem};
    size_t in[2] = {3 * c->E, c->E}, l1[2] = {c->F, c->E};
    size_t hidden[4] = {c->L, c->B, c->N, c->F};
    if (api_limit_elements(m->rt->decoder ? "self_weights" : "weights", w, 5,
                           max_elements, p) ||
        (m->rt->decoder &&
         api_limit_elements("cross_weights", cw, 5, max_elements, p)) ||
        (!m->given &&
         (api_limit_elements("self_attn.in_proj_weight", in, 2, max_elements,
                             p) ||
          api_limit_elements("linear1.weight", l1, 2, max_elements, p))) ||
        api_limit_elements("ffn_hidden", hidden, 4, max_elements, p))
        return -1;
    return 0;
}
