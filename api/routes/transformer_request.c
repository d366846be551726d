/*
 * transformer_request.c — a Transformer request decoded (steps 1–5 of
 * the contract's order of checks): the request's own schema, whose
 * state_dict holds PyTorch's keys for its number of layers, then the
 * tensors (the input, memory, state_dict's, the masks, grad_output) and
 * their cross-field shapes; the values and the charge close it
 * (transformer_values.c, api_xf_cost).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fields.h"
#include "grads.h"
#include "mask_json.h"
#include "pointer.h"
#include "route.h"
#include "suggest.h"
#include "transformer.h"
#include "transformer_steps.h"

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
                     api_xf_param_suffix[t]);
            snprintf(k->pointer, sizeof k->pointer, "/state_dict/%s", k->name);
            size_t dims[2], rank;
            attn_xf_param_shape((attn_xf_param)t, 1, 1, dims, &rank);
            k->spec = (api_tensor_spec){k->name, API_RANK(rank), 0,
                                        api_xf_param_shapes[t], 0};
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
                suffixes[n++] = api_xf_param_suffix[t];
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
                 k->name, api_xf_param_shapes[k->param], dims_text, E,
                 m->rt->x_name, F);
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
static int decode_masks(xf_request *m, const api_fastpath *doc,
                        const json_t *body, size_t max_elements,
                        api_problem *p) {
    size_t n = init_masks(m);
    for (size_t k = 0; k < n; k++) { /* attn_masks first, as the table */
        xf_masks *x = &m->masks[k];
        const json_t *v = api_field_value(body, x->mask_spec->name);
        x->m.has_amask = v != NULL;
        if (v && api_mask_decode(&x->m.amask, &x->m.kind, doc, v, x->mask_spec,
                                 x->mask_ptr, max_elements, p))
            return -1;
    }
    for (size_t k = 0; k < n; k++) {
        xf_masks *x = &m->masks[k];
        const json_t *v = api_field_value(body, x->kpm_spec->name);
        api_mask_kind kind;
        x->m.has_kpm = v != NULL;
        if (v && api_mask_decode(&x->m.kpm, &kind, doc, v, x->kpm_spec,
                                 x->kpm_ptr, max_elements, p))
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

/* Step 1 against the request's own schema, state_dict's keys for L
 * layers (build_keys): unknown_field (a state_dict key told with the
 * layers' names), missing_field with the parameters rule (state_dict or
 * seed), types. Sets m->given. Returns 0, or -1 with p set. */
static int check_fields(xf_request *m, const api_fastpath *doc,
                        const json_t *body, size_t L, api_problem *p) {
    const api_xf_route *rt = m->rt;
    const json_t *sd = api_field_value(body, "state_dict");
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
    if (!failed && api_fields_types(doc, body, &schema, "", p))
        failed = 1;
    free(sd_fields);
    return failed ? -1 : 0;
}

/* Step 2, the tensors in table order: the input, memory, state_dict's
 * (when given), the masks, grad_output. Returns 0, or -1 with p set. */
static int decode_tensors(xf_request *m, const api_fastpath *doc,
                          const json_t *body, size_t max_elements,
                          api_problem *p) {
    const api_xf_route *rt = m->rt;
    const json_t *sd = api_field_value(body, "state_dict");
    int present;
    if (api_field_tensor(&m->x, &present, doc, body, rt->x_name, rt->x_spec,
                         max_elements, p) ||
        (rt->decoder && api_field_tensor(&m->mem, &present, doc, body, "memory",
                                         rt->memory_spec, max_elements, p)))
        return -1;
    for (size_t i = 0; m->given && i < m->n_keys; i++) {
        xf_key *k = &m->keys[i];
        if (api_tensor_decode(&k->t, doc, api_field_value(sd, k->name),
                              &k->spec, k->pointer, max_elements, p))
            return -1;
    }
    if (decode_masks(m, doc, body, max_elements, p) ||
        api_field_tensor(&m->grad, &m->has_grad, doc, body, "grad_output",
                         &api_grad_output_spec, max_elements, p))
        return -1;
    return 0;
}

/* Step 3, the cross-field shapes: the sizes B, N, E (and S_mem) from the
 * input, memory against it, F from layers.0.linear1.weight and every
 * state_dict tensor against E and F, the masks, grad_output. Returns 0,
 * or -1 with p set. */
static int cross_shapes(xf_request *m, const json_t *body, size_t L,
                        api_problem *p) {
    const api_xf_route *rt = m->rt;
    attn_xf_config *c = &m->cfg;
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
    return 0;
}

/* transformer_steps.h */
int api_xf_decode(api_call *call, xf_request *m) {
    api_problem *p = &call->problem;
    const json_t *body = call->body;
    const api_fastpath *doc = call->doc;
    size_t max_elements = call->limits->max_elements;
    /* 1. unknown_field, missing_field (with the parameters rule), types */
    size_t L = schema_layers(body);
    if (check_fields(m, doc, body, L, p) ||
        /* 2. tensors in table order */
        decode_tensors(m, doc, body, max_elements, p) ||
        /* 3. cross-field shapes */
        cross_shapes(m, body, L, p) ||
        /* 4. the values that size the work, then sizes and work (charged) */
        api_xf_check_values(m, body, p) ||
        api_xf_check_sizes(m, max_elements, p))
        return -1;
    m->cfg.keep_scores = m->trace;
    return api_route_charge(call, m); /* api_xf_cost */
}
