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
 */
#include "transformer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "grads.h"
#include "limit.h"
#include "mask_json.h"
#include "masks.h"
#include "pointer.h"
#include "route.h"
#include "suggest.h"

/* ------------------------------------------------------ PyTorch's names */

/* Each parameter's name inside a layer, in state_dict order (attn.h's
 * attn_xf_param order), and its shape for details. */
static const char *const param_suffix[ATTN_XF_N_PARAMS] = {
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
static const char *const param_shapes[ATTN_XF_N_PARAMS] = {
    "(3E, E)", "(3E)", "(E, E)", "(E)", "(3E, E)", "(3E)",
    "(E, E)",  "(E)",  "(F, E)", "(F)", "(E, F)",  "(E)",
    "(E)",     "(E)",  "(E)",    "(E)", "(E)",     "(E)"};

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
    const api_xf_route *rt;
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

/* Slots of n bytes. */
static size_t slots_of(size_t bytes) {
    return (bytes + 7) / 8;
}

/* ------------------------------------------------------- the schema */

/* The layers the state_dict schema is built for before num_layers is
 * checked: num_layers when it is a usable count, else one more than the
 * largest layer index among state_dict's keys (below the maximum). */
static size_t schema_layers(const json_t *body) {
    const json_t *v = api_field_value(body, "num_layers");
    if (json_is_number(v)) {
        double x = json_number_value(v);
        if (x >= 1 && x <= API_XF_LAYERS_MAX && x == floor(x))
            return (size_t)x;
    }
    const json_t *sd = api_field_value(body, "state_dict");
    size_t L = 1;
    const char *key;
    const json_t *item;
    json_object_foreach((json_t *)sd, key, item) {
        (void)item;
        if (strncmp(key, "layers.", 7) != 0)
            continue;
        char *end;
        unsigned long idx = strtoul(key + 7, &end, 10);
        if (end != key + 7 && *end == '.' && idx < API_XF_LAYERS_MAX &&
            idx + 1 > L)
            L = idx + 1;
    }
    return L;
}

/* The keys of L layers into m->keys (heap) and their schema fields. */
static int build_keys(xf_request *m, size_t L, api_field **fields) {
    const int dec = m->rt->decoder;
    m->n_used = dec ? 18 : 12;
    m->n_keys = L * m->n_used;
    m->keys = calloc(m->n_keys, sizeof *m->keys);
    *fields = calloc(m->n_keys, sizeof **fields);
    if (!m->keys || !*fields)
        return -1;
    size_t n = 0;
    for (size_t l = 0; l < L; l++)
        for (int t = 0; t < ATTN_XF_N_PARAMS; t++) {
            if (!attn_xf_param_used((attn_xf_param)t, dec))
                continue;
            xf_key *k = &m->keys[n];
            snprintf(k->name, sizeof k->name, "layers.%zu.%s", l,
                     param_suffix[t]);
            snprintf(k->pointer, sizeof k->pointer, "/state_dict/%s", k->name);
            size_t dims[2], rank;
            attn_xf_param_shape((attn_xf_param)t, 1, 1, dims, &rank);
            k->spec = (api_tensor_spec){k->name, API_RANK(rank), 0,
                                        param_shapes[t], 0};
            k->layer = l;
            k->param = (attn_xf_param)t;
            (*fields)[n] =
                (api_field){k->name, API_FIELD_TENSOR, 1, &k->spec, NULL};
            n++;
        }
    return 0;
}

/* An unknown state_dict key, told with every layer's names and the
 * closest key. */
static int unknown_key(xf_request *m, const json_t *sd, size_t L,
                       api_problem *p) {
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)sd, key, v) {
        (void)v;
        size_t i = 0;
        while (i < m->n_keys && strcmp(m->keys[i].name, key))
            i++;
        if (i < m->n_keys)
            continue;
        const char **names = malloc(m->n_keys * sizeof *names);
        char hint[API_SUGGEST_TEXT] = ".";
        if (names) {
            for (size_t j = 0; j < m->n_keys; j++)
                names[j] = m->keys[j].name;
            api_did_you_mean(hint, key, strlen(key), names, m->n_keys);
            free(names);
        }
        char list[512];
        const char *suffixes[ATTN_XF_N_PARAMS];
        size_t n = 0;
        for (int t = 0; t < ATTN_XF_N_PARAMS; t++)
            if (attn_xf_param_used((attn_xf_param)t, m->rt->decoder))
                suffixes[n++] = param_suffix[t];
        api_join_names(list, sizeof list, suffixes, n);
        api_pointer ptr;
        api_pointer_init(&ptr, "/state_dict");
        api_pointer_push_key(&ptr, key, strlen(key));
        memset(p, 0, sizeof *p);
        return api_fail(p, API_E_UNKNOWN_FIELD, ptr.s,
                        "unknown key `%.100s` in state_dict%s With "
                        "num_layers = %zu, PyTorch's nn.Transformer%s has the "
                        "keys layers.<l>.<name> for l = 0 … %zu and name one "
                        "of: %s",
                        key, hint, L, m->rt->decoder ? "Decoder" : "Encoder",
                        L - 1, list);
    }
    return -1; /* the problem generic checks found stays */
}

/* ---------------------------------------------------------- decoding */

/* shape_mismatch at pointer with expected/got. */
static int mismatch(api_problem *p, const char *pointer,
                    const long long *expected, size_t erank,
                    const api_tensor *got, const char *detail) {
    api_fail(p, API_E_SHAPE_MISMATCH, pointer, "%s", detail);
    api_problem_shapes_z(p, expected, erank, got->shape, got->rank);
    return -1;
}

/* memory against tgt: the same rank, batch and features. */
static int cross_memory(const xf_request *m, api_problem *p) {
    const api_tensor *x = &m->x, *mem = &m->mem;
    const attn_xf_config *c = &m->cfg;
    long long e[3] = {(long long)c->B, -1, (long long)c->E};
    const long long *ep = m->batched ? e : e + 1;
    char detail[API_DETAIL_MAX];
    if (mem->rank != x->rank) {
        snprintf(detail, sizeof detail,
                 "memory has rank %zu but tgt has rank %zu: both are batched "
                 "(B, N, E) or both unbatched (N, E)",
                 mem->rank, x->rank);
        return mismatch(p, "/memory", ep, x->rank, mem, detail);
    }
    size_t o = m->batched ? 1 : 0;
    if ((m->batched && mem->shape[0] != c->B) || mem->shape[o + 1] != c->E) {
        snprintf(detail, sizeof detail,
                 "memory (the encoder's output) must be (B, S, E) with tgt's "
                 "B = %zu and d_model E = %zu",
                 c->B, c->E);
        return mismatch(p, "/memory", ep, x->rank, mem, detail);
    }
    return 0;
}

/* Every state_dict tensor against d_model E (the input's features) and
 * dim_feedforward F (layers.0.linear1.weight's rows). */
static int cross_state(const xf_request *m, api_problem *p) {
    const size_t E = m->cfg.E, F = m->cfg.F;
    for (size_t i = 0; i < m->n_keys; i++) {
        const xf_key *k = &m->keys[i];
        size_t dims[2], rank;
        attn_xf_param_shape(k->param, E, F, dims, &rank);
        int same = k->t.rank == rank;
        for (size_t d = 0; same && d < rank; d++)
            same = k->t.shape[d] == dims[d];
        if (same)
            continue;
        long long e[2] = {(long long)dims[0], (long long)dims[1]};
        char dims_text[64], text[API_DETAIL_MAX];
        if (rank == 2)
            snprintf(dims_text, sizeof dims_text, "(%zu, %zu)", dims[0],
                     dims[1]);
        else
            snprintf(dims_text, sizeof dims_text, "(%zu)", dims[0]);
        snprintf(text, sizeof text,
                 "state_dict's %s is %s = %s for d_model E = %zu (the "
                 "features of %s) and dim_feedforward F = %zu (the rows of "
                 "layers.0.linear1.weight)",
                 k->name, param_shapes[k->param], dims_text, E, m->rt->x_name,
                 F);
        return mismatch(p, k->pointer, e, rank, &k->t, text);
    }
    return 0;
}

/* The route's mask blocks: names, pointers and axes (1 for the encoder,
 * 2 for the decoder). */
static size_t init_masks(xf_request *m) {
    static const char *const ptr[3][2] = {
        {"/src_mask", "/src_key_padding_mask"},
        {"/tgt_mask", "/tgt_key_padding_mask"},
        {"/memory_mask", "/memory_key_padding_mask"}};
    const int dec = m->rt->decoder;
    xf_masks *s = &m->masks[0], *x = &m->masks[1];
    s->mask_spec = dec ? &api_xf_tgt_mask_spec : &api_xf_src_mask_spec;
    s->kpm_spec = dec ? &api_xf_tgt_kpm_spec : &api_xf_src_kpm_spec;
    s->mask_ptr = ptr[dec][0];
    s->kpm_ptr = ptr[dec][1];
    s->q_axis = s->k_axis = dec ? "T" : "S";
    if (!dec)
        return 1;
    x->mask_spec = &api_xf_memory_mask_spec;
    x->kpm_spec = &api_xf_memory_kpm_spec;
    x->mask_ptr = ptr[2][0];
    x->kpm_ptr = ptr[2][1];
    x->q_axis = "T";
    x->k_axis = "S";
    return 2;
}

/* The tensor phase of the masks, in table order: rank, ragged, size,
 * len(data), zero (mask_json.h; their types were checked with the
 * schema's). */
static int decode_masks(xf_request *m, const json_t *body, size_t max_elements,
                        api_problem *p) {
    size_t n = init_masks(m);
    for (size_t k = 0; k < n; k++) { /* attn_masks first, as the table */
        xf_masks *x = &m->masks[k];
        const json_t *v = api_field_value(body, x->mask_spec->name);
        x->m.has_amask = v != NULL;
        if (v && api_mask_decode(&x->m.amask, &x->m.kind, v, x->mask_spec,
                                 x->mask_ptr, max_elements, p))
            return -1;
    }
    for (size_t k = 0; k < n; k++) {
        xf_masks *x = &m->masks[k];
        const json_t *v = api_field_value(body, x->kpm_spec->name);
        api_mask_kind kind;
        x->m.has_kpm = v != NULL;
        if (v && api_mask_decode(&x->m.kpm, &kind, v, x->kpm_spec, x->kpm_ptr,
                                 max_elements, p))
            return -1;
    }
    return 0;
}

/* Cross-field shapes of one block's masks for Nq queries and Nk keys, H
 * heads (0 when num_heads is no count yet: only the 2-D form is then
 * checked); nn.MultiheadAttention's rule: a 3-D attn_mask is (B·H, Nq,
 * Nk), unbatched (H, Nq, Nk). Sets x->m.layout and x->Nk. */
static int cross_masks(const xf_request *m, xf_masks *x, size_t Nq, size_t Nk,
                       size_t H, api_problem *p) {
    const size_t B = m->cfg.B;
    x->Nk = Nk;
    char detail[API_DETAIL_MAX];
    if (x->m.has_amask) {
        const api_tensor *t = &x->m.amask;
        size_t o = t->rank - 2;
        int rows_ok = t->shape[o] == Nq && t->shape[o + 1] == Nk;
        size_t BH = H && B <= SIZE_MAX / H ? B * H : 0;
        if (t->rank == 2 && rows_ok) {
            x->m.layout = ATTN_MASK_SHARED;
        } else if (t->rank == 3 && rows_ok && BH && t->shape[0] == BH) {
            x->m.layout = ATTN_MASK_PER_HEAD;
        } else {
            long long e[3] = {BH ? (long long)BH : -1, (long long)Nq,
                              (long long)Nk};
            int three = t->rank == 3 && BH;
            snprintf(detail, sizeof detail,
                     "%s must have shape (%s, %s) = (%zu, %zu), one mask for "
                     "every example and head, or %s = (%zu, %zu, %zu), one "
                     "per example and head (slab b*H + h, as "
                     "nn.MultiheadAttention's 3-D attn_mask)",
                     x->mask_spec->name, x->q_axis, x->k_axis, Nq, Nk,
                     m->batched ? "(B*H, Nq, Nk)" : "(H, Nq, Nk)", BH, Nq, Nk);
            return mismatch(p, x->mask_ptr, three ? e : e + 1, three ? 3 : 2, t,
                            detail);
        }
    }
    if (x->m.has_kpm) {
        const api_tensor *t = &x->m.kpm;
        long long e[2] = {(long long)B, (long long)Nk};
        int good = m->batched
                       ? t->rank == 2 && t->shape[0] == B && t->shape[1] == Nk
                       : t->rank == 1 && t->shape[0] == Nk;
        if (!good) {
            if (m->batched)
                snprintf(detail, sizeof detail,
                         "%s must have shape (B, %s) = (%zu, %zu): one flag "
                         "per key of each example (true = padding)",
                         x->kpm_spec->name, x->k_axis, B, Nk);
            else
                snprintf(detail, sizeof detail,
                         "for unbatched input %s has shape (%s) = (%zu): one "
                         "flag per key (true = padding)",
                         x->kpm_spec->name, x->k_axis, Nk);
            return mismatch(p, x->kpm_ptr, m->batched ? e : e + 1,
                            m->batched ? 2 : 1, t, detail);
        }
    }
    return 0;
}

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

/* The values (invalid_value), in table order. */
static int check_values(xf_request *m, const json_t *body, api_problem *p) {
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

/* Derived tensors over --max-elements: the weights, the drawn
 * parameters, and with a trace its largest tensors. */
static int check_sizes(const xf_request *m, size_t max_elements,
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

/* Steps 1–5 of the contract's order of checks. */
static int decode(api_call *call, xf_request *m) {
    const api_xf_route *rt = m->rt;
    api_problem *p = &call->problem;
    const json_t *body = call->body;
    size_t max_elements = call->limits->max_elements;
    attn_xf_config *c = &m->cfg;

    /* the schema of this request: state_dict's keys for its layers */
    const json_t *sd = api_field_value(body, "state_dict");
    size_t L = schema_layers(body);
    api_field *sd_fields = NULL;
    api_field fields[API_FIELDS_MAX];
    size_t nf = rt->schema->n;
    memcpy(fields, rt->schema->fields, nf * sizeof *fields);
    if (build_keys(m, L, &sd_fields)) {
        free(sd_fields);
        return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    }
    const api_schema sd_schema = {"state_dict", sd_fields, m->n_keys};
    for (size_t i = 0; i < nf; i++)
        if (!strcmp(fields[i].name, "state_dict"))
            fields[i].object = &sd_schema;
    const api_schema schema = {rt->schema->what, fields, nf};

    /* 1. unknown_field, missing_field (with the parameters rule), types */
    int failed = 0;
    if (api_fields_unknown(body, &schema, "", p)) {
        failed = 1;
        if (p->code == API_E_UNKNOWN_FIELD &&
            !strncmp(p->pointer, "/state_dict/", 12) &&
            !strchr(p->pointer + 12, '/') && json_is_object(sd))
            unknown_key(m, sd, L, p);
    }
    m->given = sd != NULL;
    if (!failed && api_fields_missing(body, &schema, "", p))
        failed = 1;
    if (!failed && !sd && !api_field_value(body, "seed"))
        failed = api_fail(p, API_E_MISSING_FIELD, "/state_dict",
                          "the layers' parameters: give state_dict (PyTorch's "
                          "keys and shapes, {k: v.tolist() for k, v in "
                          "model.state_dict().items()}) or seed to draw "
                          "them") != 0;
    if (!failed && api_fields_types(body, &schema, "", p))
        failed = 1;
    free(sd_fields);
    if (failed)
        return -1;

    /* 2. tensors in table order */
    int present;
    if (api_field_tensor(&m->x, &present, body, rt->x_name, rt->x_spec,
                         max_elements, p) ||
        (rt->decoder && api_field_tensor(&m->mem, &present, body, "memory",
                                         rt->memory_spec, max_elements, p)))
        return -1;
    for (size_t i = 0; m->given && i < m->n_keys; i++) {
        xf_key *k = &m->keys[i];
        if (api_tensor_decode(&k->t, api_field_value(sd, k->name), &k->spec,
                              k->pointer, max_elements, p))
            return -1;
    }
    if (decode_masks(m, body, max_elements, p) ||
        api_field_tensor(&m->grad, &m->has_grad, body, "grad_output",
                         &api_grad_output_spec, max_elements, p))
        return -1;

    /* 3. cross-field shapes */
    m->batched = m->x.rank == 3;
    size_t o = m->batched ? 1 : 0;
    c->decoder = rt->decoder;
    c->L = L;
    c->B = m->batched ? m->x.shape[0] : 1;
    c->N = m->x.shape[o];
    c->E = m->x.shape[o + 1];
    c->S_mem = rt->decoder ? m->mem.shape[m->mem.rank - 2] : 0;
    if (rt->decoder && cross_memory(m, p))
        return -1;
    if (m->given) {
        /* F: the rows of layers.0.linear1.weight, (F, E) */
        for (size_t i = 0; i < m->n_keys; i++)
            if (m->keys[i].param == ATTN_XF_LIN1_W) {
                c->F = m->keys[i].t.shape[0];
                break;
            }
        if (cross_state(m, p))
            return -1;
    }
    /* a 3-D mask is per head, (B·H, Nq, Nk), once num_heads is a count */
    int64_t heads = 0;
    if (api_field_int(body, "num_heads", 0, &heads) || heads < 1 ||
        (uint64_t)heads > c->E)
        heads = 0;
    if (cross_masks(m, &m->masks[0], c->N, c->N, (size_t)heads, p) ||
        (rt->decoder &&
         cross_masks(m, &m->masks[1], c->N, c->S_mem, (size_t)heads, p)))
        return -1;
    if (m->has_grad &&
        api_grads_cross(&m->grad, m->batched, c->B, c->N, c->E, p))
        return -1;

    /* 4. the values that size the work, then sizes and work (charged) */
    if (check_values(m, body, p) || check_sizes(m, max_elements, p))
        return -1;
    c->keep_scores = m->trace;
    return api_route_charge(call, m); /* api_xf_cost */
}

/* ------------------------------------------------- the allocation */

/* Entries of parameter t. */
static size_t param_count(const attn_xf_config *c, attn_xf_param t) {
    size_t dims[2], rank;
    attn_xf_param_shape(t, c->E, c->F, dims, &rank);
    return dims[0] * dims[1];
}

/* Entries of one layer's parameters. */
static size_t layer_params(const attn_xf_config *c) {
    size_t n = 0;
    for (int t = 0; t < ATTN_XF_N_PARAMS; t++)
        if (attn_xf_param_used((attn_xf_param)t, c->decoder))
            n += param_count(c, (attn_xf_param)t);
    return n;
}

/* Slots of one attention block's trace buffers (Nk keys). */
static void plan_trace_attn(api_arena *a, const attn_xf_config *c, size_t Nk) {
    size_t L = c->L, rq = c->L * c->B * c->N * c->E;
    size_t rk = L * c->B * Nk * c->E, qk = L * c->B * c->H * c->N * Nk;
    const size_t n[10] = {rq, rk, rk, rq, rk, rk, qk, qk, rq, rq};
    for (size_t i = 0; i < 10; i++)
        api_arena_plan(a, n[i]);
}

/* The request's one allocation, inputs first (cost.h): src or tgt,
 * memory, grad_output, given parameters; then the drawn parameters, the
 * gradients, the parameter tables, the encoded input, output, tape,
 * input gradients, trace buffers and the answer's member tables and keys.
 * Returns the input slots. */
static size_t plan(const xf_request *m, api_arena *a, size_t tape_doubles) {
    const attn_xf_config *c = &m->cfg;
    const size_t re = c->B * c->N * c->E, rm = c->B * c->S_mem * c->E;
    const size_t params = c->L * layer_params(c);
    const size_t tables = c->L * ATTN_XF_N_PARAMS;
    api_arena_plan(a, re);
    api_arena_plan(a, rm);
    api_arena_plan(a, m->has_grad ? re : 0);
    api_arena_plan(a, m->given ? params : 0);
    api_masks_plan(&m->masks[0].m, a);
    api_masks_plan(&m->masks[1].m, a);
    size_t inputs = a->slots;
    api_arena_plan(a, m->given ? 0 : params);
    api_arena_plan(a, m->has_grad ? params : 0);
    api_arena_plan(a, tables);
    api_arena_plan(a, tables);
    api_arena_plan(a, m->pe ? re : 0);
    api_arena_plan(a, m->pe ? c->N * c->E : 0);
    api_arena_plan(a, m->pe && m->trace ? re : 0);
    api_arena_plan(a, re);
    api_arena_plan(a, tape_doubles);
    api_arena_plan(a, m->has_grad ? re : 0);
    api_arena_plan(a, m->has_grad ? rm : 0);
    if (m->trace) {
        plan_trace_attn(a, c, c->N);
        if (c->decoder)
            plan_trace_attn(a, c, c->S_mem);
    }
    size_t member = slots_of(sizeof(api_result_member));
    size_t keys = c->L * m->n_used;
    api_arena_plan(a, m->given ? 0 : keys * member);
    api_arena_plan(a, m->has_grad ? keys * member : 0);
    api_arena_plan(a, m->trace ? TRACE_MEMBERS_MAX * member : 0);
    api_arena_plan(a, keys * slots_of(KEY_MAX));
    return inputs;
}

/* Multiply-adds of one forward pass: per layer, the self-attention's
 * four projections and heads, the cross-attention's, the feed-forward
 * network, about ten per entry for each norm and residual, an erf per
 * hidden entry for GELU; the positional encoding's sines. */
static uint64_t forward_work(const attn_xf_config *c, int pe) {
    uint64_t R = api_work_mul(c->B, c->N), E = c->E;
    uint64_t RE2 = api_work_mul(R, api_work_mul(E, E));
    uint64_t self_heads = api_work_mul(api_work_mul(R, c->N), 2 * E);
    uint64_t layer = api_work_add(api_work_mul(RE2, 4), self_heads);
    if (c->decoder) {
        uint64_t Rm = api_work_mul(c->B, c->S_mem);
        uint64_t kv = api_work_mul(Rm, api_work_mul(E, E));
        uint64_t heads = api_work_mul(api_work_mul(R, c->S_mem), 2 * E);
        layer = api_work_add(layer, api_work_mul(RE2, 2));
        layer = api_work_add(layer, api_work_add(api_work_mul(kv, 2), heads));
    }
    uint64_t RF = api_work_mul(R, c->F);
    layer = api_work_add(layer, api_work_mul(api_work_mul(RF, E), 2));
    if (c->activation == ATTN_ACTIVATION_GELU)
        layer = api_work_add(layer, api_work_mul(RF, API_WORK_EXP));
    layer = api_work_add(
        layer, api_work_mul(api_work_mul(R, E), 10 * (c->decoder ? 3 : 2)));
    uint64_t work = api_work_mul(layer, c->L);
    if (pe)
        work = api_work_add(work,
                            api_work_mul(api_work_mul(c->N, E), API_WORK_EXP));
    return work;
}

void api_xf_cost(const api_call *call, const void *shapes, api_cost *cost) {
    (void)call;
    const xf_request *m = shapes;
    size_t tape = 0, ws = 0;
    attn_xf_tape_size(&tape, &m->cfg);
    attn_xf_workspace(&ws, &m->cfg);
    api_arena arena = {0};
    size_t inputs = plan(m, &arena, tape);
    uint64_t work = api_grads_work(forward_work(&m->cfg, m->pe), m->has_grad);
    if (m->trace) /* the attention intermediates recomputed */
        work = api_work_add(work, forward_work(&m->cfg, 0));
    api_cost_of_plan(cost, inputs, &arena, work);
    /* the library's own scratch (multi-head attention's, the backward's) */
    cost->working_bytes = api_work_add(cost->working_bytes, ws);
}

/* Carve one attention block's trace buffers. */
static void take_trace_attn(xf_trace_attn *t, api_arena *a,
                            const attn_xf_config *c, size_t Nk) {
    size_t L = c->L, rq = c->L * c->B * c->N * c->E;
    size_t rk = L * c->B * Nk * c->E, qk = L * c->B * c->H * c->N * Nk;
    t->Q = api_arena_take(a, rq);
    t->K = api_arena_take(a, rk);
    t->V = api_arena_take(a, rk);
    t->Q_heads = api_arena_take(a, rq);
    t->K_heads = api_arena_take(a, rk);
    t->V_heads = api_arena_take(a, rk);
    t->QK = api_arena_take(a, qk);
    t->masked = api_arena_take(a, qk);
    t->wv = api_arena_take(a, rq);
    t->concat = api_arena_take(a, rq);
}

/* Steps 6–7: the allocation, the inputs read, the parameters read or
 * drawn. */
static int prepare(api_call *call, xf_request *m) {
    attn_xf_config *c = &m->cfg;
    const size_t re = c->B * c->N * c->E, rm = c->B * c->S_mem * c->E;
    const size_t tables = c->L * ATTN_XF_N_PARAMS;
    size_t tape = 0;
    attn_xf_tape_size(&tape, c);
    plan(m, &m->arena, tape);
    if (api_arena_alloc(&m->arena))
        return api_fail(&call->problem, API_E_INTERNAL, NULL, "out of memory");
    api_arena *a = &m->arena;
    m->xd = api_arena_take(a, re);
    m->memd = api_arena_take(a, rm);
    m->grad_out = api_arena_take(a, m->has_grad ? re : 0);
    double *given = api_arena_take(a, m->given ? c->L * layer_params(c) : 0);
    api_masks_take(&m->masks[0].m, a);
    api_masks_take(&m->masks[1].m, a);
    double *params =
        m->given ? given : api_arena_take(a, c->L * layer_params(c));
    double *grads = api_arena_take(a, m->has_grad ? c->L * layer_params(c) : 0);
    m->param = api_arena_take(a, tables);
    m->gparam = api_arena_take(a, tables);
    m->x0 = m->pe ? api_arena_take(a, re) : m->xd;
    m->P = api_arena_take(a, m->pe ? c->N * c->E : 0);
    m->embedded = api_arena_take(a, m->pe && m->trace ? re : 0);
    m->out = api_arena_take(a, re);
    m->tape_buf = api_arena_take(a, tape);
    m->grad_x = api_arena_take(a, m->has_grad ? re : 0);
    m->grad_mem = api_arena_take(a, m->has_grad ? rm : 0);
    if (m->trace) {
        take_trace_attn(&m->tr[0], a, c, c->N);
        if (c->decoder)
            take_trace_attn(&m->tr[1], a, c, c->S_mem);
    }
    size_t member = slots_of(sizeof(api_result_member)),
           keys = c->L * m->n_used;
    m->sd_members = api_arena_take(a, m->given ? 0 : keys * member);
    m->grad_members = api_arena_take(a, m->has_grad ? keys * member : 0);
    m->trace_members =
        api_arena_take(a, m->trace ? TRACE_MEMBERS_MAX * member : 0);
    m->key_text = api_arena_take(a, keys * slots_of(KEY_MAX));
    attn_xf_tape_layout(&m->tape, m->tape_buf, c);

    /* the parameter tables: params[l][t] and their gradients */
    size_t at = 0, k = 0;
    for (size_t l = 0; l < c->L; l++)
        for (int t = 0; t < ATTN_XF_N_PARAMS; t++) {
            size_t i = l * ATTN_XF_N_PARAMS + (size_t)t;
            m->param[i] = m->gparam[i] = NULL;
            if (!attn_xf_param_used((attn_xf_param)t, c->decoder))
                continue;
            m->param[i] = params + at;
            m->gparam[i] = grads ? grads + at : NULL;
            at += param_count(c, (attn_xf_param)t);
            snprintf(m->key_text + k * KEY_MAX, KEY_MAX, "layers.%zu.%s", l,
                     param_suffix[t]);
            k++;
        }

    api_tensor_read(m->xd, &m->x);
    if (c->decoder)
        api_tensor_read(m->memd, &m->mem);
    if (m->has_grad)
        api_tensor_read(m->grad_out, &m->grad);
    if (m->given) {
        for (size_t i = 0; i < m->n_keys; i++) {
            const xf_key *key = &m->keys[i];
            api_tensor_read(
                m->param[key->layer * ATTN_XF_N_PARAMS + key->param], &key->t);
        }
    } else {
        attn_rng rng;
        attn_rng_seed(&rng, (uint64_t)m->seed);
        attn_xf_init(m->param, &rng, c);
    }
    api_call_inputs_read(call);
    memset(&m->self_mask, 0, sizeof m->self_mask);
    memset(&m->cross_mask, 0, sizeof m->cross_mask);
    m->self_mask.causal = m->causal ? ATTN_CAUSAL_TOP_LEFT : ATTN_CAUSAL_NONE;
    m->self_mask.fully_masked = m->fully_masked;
    m->cross_mask.fully_masked = m->fully_masked;
    api_masks_set(&m->self_mask, &m->masks[0].m);
    api_masks_set(&m->cross_mask, &m->masks[1].m);
    return 0;
}

/* ---------------------------------------------------------- computing */

/* The trace's attention intermediates of every layer, and "masked":
 * the scaled scores plus a float mask, the entries the masks hide as NaN
 * (printed null). */
static attn_status trace_attention(xf_request *m) {
    const attn_xf_config *c = &m->cfg;
    size_t nblocks = c->decoder ? 2 : 1;
    for (size_t k = 0; k < nblocks; k++) {
        const size_t Nk = k ? c->S_mem : c->N;
        const size_t rq = c->B * c->N * c->E, rk = c->B * Nk * c->E;
        const size_t qk = c->B * c->H * c->N * Nk;
        const attn_mask *mask = k ? &m->cross_mask : &m->self_mask;
        xf_trace_attn *t = &m->tr[k];
        for (size_t l = 0; l < c->L; l++) {
            const double *const *p =
                (const double *const *)m->param + l * ATTN_XF_N_PARAMS;
            const double *q = attn_xf_block_input(&m->tape, c, m->x0, l, k);
            const double *kv = k ? m->memd : q;
            /* PyTorch's packed in_proj (3E, E): rows W_q, W_k, W_v */
            const size_t E = c->E;
            const double *W_in = p[k ? ATTN_XF_CA_IN_W : ATTN_XF_SA_IN_W];
            const double *b_in = p[k ? ATTN_XF_CA_IN_B : ATTN_XF_SA_IN_B];
            const attn_multihead_params params = {
                .W_q = W_in,
                .W_k = W_in + E * E,
                .W_v = W_in + 2 * E * E,
                .b_q = b_in,
                .b_k = b_in + E,
                .b_v = b_in + 2 * E,
            };
            const attn_multihead_steps steps = {
                .Q = t->Q + l * rq,
                .K = t->K + l * rk,
                .V = t->V + l * rk,
                .Q_heads = t->Q_heads + l * rq,
                .K_heads = t->K_heads + l * rk,
                .V_heads = t->V_heads + l * rk,
                .QK = t->QK + l * qk,
                .weighted_values = t->wv + l * rq,
                .concat = t->concat + l * rq,
            };
            attn_status st = attn_multihead_trace(
                &steps, m->tape.weights[k] + l * qk, q, kv, kv, &params, c->B,
                c->N, Nk, E, E, E, E, c->H);
            if (st != ATTN_OK)
                return st;
            double *out = t->masked + l * qk;
            st = attn_mask_apply(out, m->tape.scores[k] + l * qk, mask, c->B,
                                 c->H, c->N, Nk, NULL);
            if (st != ATTN_OK)
                return st;
            for (size_t i = 0; i < qk; i++) /* hidden: −∞, printed null */
                if (out[i] == -INFINITY)
                    out[i] = NAN;
        }
    }
    return ATTN_OK;
}

/* Step 8: positional encoding, the forward pass, the backward pass with
 * grad_output (through the encoding: ∂(x·√E + P)/∂x = √E) and the trace. */
static attn_status compute(api_call *call, xf_request *m, attn_fault *fault) {
    const attn_xf_config *c = &m->cfg;
    const size_t re = c->B * c->N * c->E;
    const double *const *params = (const double *const *)m->param;
    double t0 = api_clock_ms();
    attn_status st = ATTN_OK;
    if (m->pe)
        st = attn_xf_embed(m->x0, m->P, m->embedded, m->xd, c->B, c->N, c->E);
    if (st == ATTN_OK)
        st = attn_xf_forward(m->out, &m->tape, m->x0,
                             c->decoder ? m->memd : NULL, params, c,
                             &m->self_mask, &m->cross_mask, fault);
    if (st == ATTN_OK && m->has_grad) {
        st = attn_xf_backward(m->grad_x, c->decoder ? m->grad_mem : NULL,
                              m->gparam, m->grad_out, &m->tape, m->x0,
                              c->decoder ? m->memd : NULL, params, c,
                              &m->self_mask, &m->cross_mask, fault);
        if (st == ATTN_OK && m->pe) {
            const double scale = sqrt((double)c->E);
            for (size_t i = 0; i < re; i++)
                m->grad_x[i] *= scale;
        }
    }
    if (st == ATTN_OK && m->trace)
        st = trace_attention(m);
    call->compute_ms = api_clock_ms() - t0;
    return st;
}

/* The pointer of row `row` (the entries before the last axis) of t. */
static void row_pointer(api_pointer *ptr, const char *base, const api_tensor *t,
                        size_t row) {
    size_t last = t->shape[t->rank - 1];
    api_tensor_entry_pointer(ptr, base, t, row * last);
    if (!t->flat) { /* drop the last index: the row itself */
        char *slash = strrchr(ptr->s, '/');
        if (slash)
            *slash = '\0';
    }
}

/* A row that the masks leave without a key under fully_masked "error":
 * invalid_value at the key padding mask's row or the attn_mask's row of
 * the block whose mask empties it (the self-attention's when its mask
 * hides every key of the row, else the cross-attention's). */
static int fully_masked_problem(const xf_request *m, const attn_fault *fault,
                                api_problem *p) {
    const attn_xf_config *c = &m->cfg;
    const size_t b = fault->index / c->N, i = fault->index % c->N;
    const size_t t = fault->head;
    size_t k = 0;
    if (c->decoder) {
        int seen = 0;
        for (size_t j = 0; j < c->N && !seen; j++)
            seen = attn_mask_visible_head(&m->self_mask, b, t, c->H, i, j, c->N,
                                          c->N);
        k = seen ? 1 : 0;
    }
    const xf_masks *x = &m->masks[k];
    char who[96];
    if (m->batched)
        snprintf(who, sizeof who, "query %zu of example %zu, head %zu", i, b,
                 t);
    else
        snprintf(who, sizeof who, "query %zu, head %zu", i, t);
    const char *block = k ? "cross-attention" : "self-attention";
    api_pointer ptr;
    if (fault->by_mask == ATTN_BY_KEY_PADDING && x->m.has_kpm) {
        if (m->batched)
            row_pointer(&ptr, x->kpm_ptr, &x->m.kpm, b);
        else
            api_pointer_init(&ptr, x->kpm_ptr);
        return api_fail(p, API_E_INVALID_VALUE, ptr.s,
                        "%s sees no key in the %s: %s marks every key it may "
                        "see as padding, and fully_masked is \"error\"; use "
                        "\"zero\" or \"uniform\" to allow it",
                        who, block, x->kpm_spec->name);
    }
    if (x->m.has_amask) {
        size_t slab = x->m.layout == ATTN_MASK_PER_HEAD ? b * c->H + t : 0;
        size_t row = x->m.amask.rank == 3 ? slab * c->N + i : i;
        row_pointer(&ptr, x->mask_ptr, &x->m.amask, row);
        return api_fail(p, API_E_INVALID_VALUE, ptr.s,
                        "%s sees no key in the %s: %s%s leaves it none (%s) "
                        "and fully_masked is \"error\"; use \"zero\" or "
                        "\"uniform\" to allow it",
                        who, block, x->mask_spec->name,
                        x->m.has_kpm && !k && m->causal
                            ? " with causal and the key padding mask"
                        : x->m.has_kpm    ? " with the key padding mask"
                        : !k && m->causal ? " with causal"
                                          : "",
                        x->m.kind == API_MASK_BOOL ? "true = not allowed"
                                                   : "null = -infinity");
    }
    return api_fail(
        p, API_E_INVALID_VALUE, x->m.has_kpm ? x->kpm_ptr : "/causal",
        "%s sees no key in the %s and fully_masked is \"error\"", who, block);
}

/* The library's failure as the contract's problem. */
static int fault_problem(const xf_request *m, attn_status st,
                         const attn_fault *fault, api_problem *p) {
    switch (st) {
    case ATTN_OK:
        return 0;
    case ATTN_E_FULLY_MASKED:
        return fully_masked_problem(m, fault, p);
    case ATTN_E_NONFINITE:
        return api_fail(p, API_E_INVALID_VALUE, NULL,
                        "the result is not finite (a value overflowed a "
                        "double in layer %zu); scale the inputs down",
                        fault->index);
    case ATTN_E_DEADLINE:
        return api_limit_deadline_passed(p);
    default:
        return api_fail(p, API_E_INTERNAL, NULL, "the Transformer failed: %s",
                        attn_status_str(st));
    }
}

/* ------------------------------------------------------------ answer */

/* shape[] = (lead…, B?, rest…): the lead axes (L, or none), the batch
 * axis unless unbatched, then the rest. Returns the rank. */
static size_t shape_of(size_t *shape, const xf_request *m, int with_L,
                       const size_t *rest, size_t n_rest) {
    size_t r = 0;
    if (with_L)
        shape[r++] = m->cfg.L;
    if (m->batched)
        shape[r++] = m->cfg.B;
    for (size_t i = 0; i < n_rest; i++)
        shape[r++] = rest[i];
    return r;
}

/* Member n of a TENSORS item: key, data, shape (with L?, B?, rest). */
static void member(api_result_member *mm, const xf_request *m, const char *key,
                   const double *data, int with_L, const size_t *rest,
                   size_t n_rest) {
    mm->key = key;
    mm->data = data;
    mm->rank = shape_of(mm->shape, m, with_L, rest, n_rest);
}

/* The state_dict-shaped members: each used parameter's key (the arena's
 * text) and tensor (tables[l][t]). */
static void state_members(api_result_member *out, const xf_request *m,
                          double *const *tables) {
    const attn_xf_config *c = &m->cfg;
    size_t k = 0;
    for (size_t l = 0; l < c->L; l++)
        for (int t = 0; t < ATTN_XF_N_PARAMS; t++) {
            if (!attn_xf_param_used((attn_xf_param)t, c->decoder))
                continue;
            api_result_member *mm = &out[k];
            mm->key = m->key_text + k * KEY_MAX;
            mm->data = tables[l * ATTN_XF_N_PARAMS + (size_t)t];
            attn_xf_param_shape((attn_xf_param)t, c->E, c->F, mm->shape,
                                &mm->rank);
            k++;
        }
}

/* The trace's members, in computation order (trace names of the plan). */
static size_t trace_members(const xf_request *m) {
    const attn_xf_config *c = &m->cfg;
    const attn_xf_tape *tp = &m->tape;
    api_result_member *mm = m->trace_members;
    size_t n = 0;
    const size_t NE[2] = {c->N, c->E}, NF[2] = {c->N, c->F};
    if (m->pe) {
        mm[n].key = "positional";
        mm[n].data = m->P;
        mm[n].rank = 2;
        mm[n].shape[0] = c->N;
        mm[n].shape[1] = c->E;
        n++;
        member(&mm[n++], m, "embedded_scaled", m->embedded, 0, NE, 2);
    }
    member(&mm[n++], m, "input", m->x0, 0, NE, 2);
    static const char *const norm[3] = {"norm_1", "norm_2", "norm_3"};
    static const char *const resid[3] = {"residual_1", "residual_2",
                                         "residual_3"};
    static const char *const attn_names[2][13] = {
        {"self_attention.Q", "self_attention.K", "self_attention.V",
         "self_attention.Q_heads", "self_attention.K_heads",
         "self_attention.V_heads", "self_attention.QK", "self_attention.scaled",
         "self_attention.masked", "self_attention.weights",
         "self_attention.weighted_values", "self_attention.concat",
         "self_attention.output"},
        {"cross_attention.Q", "cross_attention.K", "cross_attention.V",
         "cross_attention.Q_heads", "cross_attention.K_heads",
         "cross_attention.V_heads", "cross_attention.QK",
         "cross_attention.scaled", "cross_attention.masked",
         "cross_attention.weights", "cross_attention.weighted_values",
         "cross_attention.concat", "cross_attention.output"}};
    const size_t K = c->decoder ? 3 : 2, dh = c->E / c->H;
    for (size_t k = 0; k < K; k++) {
        if (c->norm_first)
            member(&mm[n++], m, norm[k], tp->norm[k], 1, NE, 2);
        if (k + 1 < K) {
            const size_t Nk = k ? c->S_mem : c->N;
            const xf_trace_attn *t = &m->tr[k];
            const char *const *nm = attn_names[k];
            const size_t kE[2] = {Nk, c->E}, hq[3] = {c->H, c->N, dh},
                         hk[3] = {c->H, Nk, dh}, hw[3] = {c->H, c->N, Nk};
            member(&mm[n++], m, nm[0], t->Q, 1, NE, 2);
            member(&mm[n++], m, nm[1], t->K, 1, kE, 2);
            member(&mm[n++], m, nm[2], t->V, 1, kE, 2);
            member(&mm[n++], m, nm[3], t->Q_heads, 1, hq, 3);
            member(&mm[n++], m, nm[4], t->K_heads, 1, hk, 3);
            member(&mm[n++], m, nm[5], t->V_heads, 1, hk, 3);
            member(&mm[n++], m, nm[6], t->QK, 1, hw, 3);
            member(&mm[n++], m, nm[7], tp->scores[k], 1, hw, 3);
            member(&mm[n++], m, nm[8], t->masked, 1, hw, 3);
            mm[n - 1].nan_as_null = 1;
            member(&mm[n++], m, nm[9], tp->weights[k], 1, hw, 3);
            member(&mm[n++], m, nm[10], t->wv, 1, hq, 3);
            member(&mm[n++], m, nm[11], t->concat, 1, NE, 2);
            member(&mm[n++], m, nm[12], tp->sub[k], 1, NE, 2);
        } else {
            member(&mm[n++], m, "ffn_hidden", tp->hidden, 1, NF, 2);
            member(&mm[n++], m, "ffn_output", tp->sub[k], 1, NE, 2);
        }
        member(&mm[n++], m, resid[k], tp->resid[k], 1, NE, 2);
        if (!c->norm_first)
            member(&mm[n++], m, norm[k], tp->norm[k], 1, NE, 2);
    }
    return n;
}

/* Step 9: the typed result (result.h), which keeps the allocation. */
static void answer_result(api_call *call, xf_request *m) {
    const attn_xf_config *c = &m->cfg;
    api_result *r = &call->result;
    api_result_init(r, &m->fmt, API_E_INVALID_VALUE,
                    "the result is not finite (a value overflowed a double); "
                    "scale the inputs down");
    api_result_keep(r, &m->arena);
    size_t shape[API_SHAPE_MAX];
    const size_t NE[2] = {c->N, c->E}, SE[2] = {c->S_mem, c->E};
    const size_t self_w[3] = {c->H, c->N, c->N},
                 cross_w[3] = {c->H, c->N, c->S_mem};
    size_t rank = shape_of(shape, m, 0, NE, 2);
    api_result_tensor(r, "output", m->out, shape, rank);
    rank = shape_of(shape, m, 1, self_w, 3);
    api_result_tensor(r, c->decoder ? "self_weights" : "weights",
                      m->tape.weights[0], shape, rank);
    if (c->decoder) {
        rank = shape_of(shape, m, 1, cross_w, 3);
        api_result_tensor(r, "cross_weights", m->tape.weights[1], shape, rank);
    }
    const size_t keys = c->L * m->n_used;
    if (!m->given) {
        state_members(m->sd_members, m, m->param);
        api_result_tensors(r, "state_dict", m->sd_members, keys);
    }
    if (m->has_grad) {
        rank = shape_of(shape, m, 0, NE, 2);
        api_result_tensor(r, c->decoder ? "grads.tgt" : "grads.src", m->grad_x,
                          shape, rank);
        if (c->decoder) {
            rank = shape_of(shape, m, 0, SE, 2);
            api_result_tensor(r, "grads.memory", m->grad_mem, shape, rank);
        }
        state_members(m->grad_members, m, m->gparam);
        api_result_tensors(r, "grads.state_dict", m->grad_members, keys);
    }
    if (m->trace)
        api_result_tensors(r, "trace", m->trace_members, trace_members(m));
    api_result_heatmap(r,
                       c->decoder ? "Decoder self-attention weights"
                                  : "Encoder self-attention weights",
                       m->tape.weights[0], c->L * c->B, c->H, c->N, c->N);
}

int api_xf_handle(api_call *call, const api_xf_route *rt) {
    xf_request m;
    memset(&m, 0, sizeof m);
    m.rt = rt;
    int failed = decode(call, &m) || prepare(call, &m);
    free(m.keys);
    m.keys = NULL;
    if (failed) {
        api_arena_free(&m.arena);
        return -1;
    }
    attn_fault fault = {0};
    attn_status st = compute(call, &m, &fault);
    if (fault_problem(&m, st, &fault, &call->problem)) {
        api_arena_free(&m.arena);
        return -1;
    }
    answer_result(call, &m);
    return 0;
}
