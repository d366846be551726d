/*
 * transformer_answer.c — a Transformer request's typed result (step 9 of
 * the contract's order of checks; result.h): output, the blocks'
 * weights, the drawn state_dict, the gradients, and the trace, whose
 * members are named as PyTorch's modules and lie in the request's
 * allocation.
 */
#include "transformer_steps.h"

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

/* transformer_steps.h */
void api_xf_answer(api_call *call, xf_request *m) {
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
