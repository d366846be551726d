/*
 * attention.c — the parts of an attention request that the attention
 * routes share (see attention.h).
 */
#include "attention.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "fields.h"
#include "limit.h"

const api_tensor_spec api_attention_lens_spec = {
    "valid_lens", API_RANK(0) | API_RANK(1) | API_RANK(2), API_TENSOR_INTEGRAL,
    "(B) or (B, Nq); unbatched a scalar or (Nq)", 1};

const api_tensor_spec api_attention_attn_mask_spec = {
    "attn_mask", API_RANK(2) | API_RANK(3), 0,
    "(Nq, Nk) or (B, Nq, Nk), on multihead also (B*H, Nq, Nk)", 3};

const api_tensor_spec api_attention_key_padding_spec = {
    "key_padding_mask", API_RANK(1) | API_RANK(2), 0, "(B, Nk), unbatched (Nk)",
    2};

const api_tensor_spec api_attention_queries_spec = {
    "queries", API_RANK(2) | API_RANK(3), API_TENSOR_MASKED_SCORES,
    "(B, Nq, dq) or unbatched (Nq, dq)", 0};
const api_tensor_spec api_attention_keys_spec = {
    "keys", API_RANK(2) | API_RANK(3), API_TENSOR_MASKED_SCORES,
    "(B, Nk, dk) or unbatched (Nk, dk)", 0};
const api_tensor_spec api_attention_values_spec = {
    "values", API_RANK(2) | API_RANK(3), API_TENSOR_MASKED_SCORES,
    "(B, Nk, dv) or unbatched (Nk, dv)", 0};
const api_tensor_spec *const api_attention_qkv_specs[3] = {
    &api_attention_queries_spec, &api_attention_keys_spec,
    &api_attention_values_spec};

int api_attention_decode_qkv(api_attention *a, const api_fastpath *doc,
                             const json_t *body,
                             const api_tensor_spec *const specs[3],
                             size_t max_elements, api_problem *p) {
    static const char *const names[3] = {"queries", "keys", "values"};
    api_tensor *t[3] = {&a->q, &a->k, &a->v};
    for (size_t i = 0; i < 3; i++) {
        int present;
        if (api_field_tensor(t[i], &present, doc, body, names[i], specs[i],
                             max_elements, p))
            return -1;
    }
    return 0;
}

int api_attention_decode_lens(api_attention *a, const api_fastpath *doc,
                              const json_t *body, size_t max_elements,
                              api_problem *p) {
    return api_field_tensor(&a->lens, &a->has_lens, doc, body, "valid_lens",
                            &api_attention_lens_spec, max_elements, p);
}

int api_attention_decode_masks(api_attention *a, const api_fastpath *doc,
                               const json_t *body, size_t max_elements,
                               api_problem *p) {
    const json_t *m = api_field_value(body, "attn_mask");
    const json_t *k = api_field_value(body, "key_padding_mask");
    a->masks.has_amask = m != NULL;
    a->masks.has_kpm = k != NULL;
    api_mask_kind kind;
    if (m && api_mask_decode(&a->masks.amask, &a->masks.kind, doc, m,
                             &api_attention_attn_mask_spec, "/attn_mask",
                             max_elements, p))
        return -1;
    if (k && api_mask_decode(&a->masks.kpm, &kind, doc, k,
                             &api_attention_key_padding_spec,
                             "/key_padding_mask", max_elements, p))
        return -1;
    return 0;
}

int api_attention_decode_grad(api_attention *a, const api_fastpath *doc,
                              const json_t *body, size_t max_elements,
                              api_problem *p) {
    return api_field_tensor(&a->grad, &a->has_grad, doc, body, "grad_output",
                            &api_grad_output_spec, max_elements, p);
}

int api_attention_decode_extras(api_attention *a, const api_fastpath *doc,
                                const json_t *body, size_t max_elements,
                                api_problem *p) {
    return api_attention_decode_lens(a, doc, body, max_elements, p) ||
                   api_attention_decode_masks(a, doc, body, max_elements, p) ||
                   api_attention_decode_grad(a, doc, body, max_elements, p)
               ? -1
               : 0;
}

static int mismatch(api_problem *p, const char *pointer,
                    const long long *expected, size_t erank,
                    const api_tensor *got, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));

static int mismatch(api_problem *p, const char *pointer,
                    const long long *expected, size_t erank,
                    const api_tensor *got, const char *fmt, ...) {
    char detail[API_DETAIL_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    api_fail(p, API_E_SHAPE_MISMATCH, pointer, "%s", detail);
    api_problem_shapes_z(p, expected, erank, got->shape, got->rank);
    return -1;
}

int api_attention_cross_qkv(api_attention *a, int same_d, api_problem *p) {
    const api_tensor *q = &a->q, *k = &a->k, *v = &a->v;
    a->batched = q->rank == 3;
    size_t o = a->batched ? 1 : 0; /* offset of the first non-batch axis */
    a->B = a->batched ? q->shape[0] : 1;
    a->Nq = q->shape[o];
    a->dq = q->shape[o + 1];
    long long B = (long long)a->B;
    long long d = same_d ? (long long)a->dq : -1;

    /* keys: same rank and batch as queries; same d for dot attention */
    long long ek[3] = {B, -1, d};
    const long long *ekp = a->batched ? ek : ek + 1;
    if (k->rank != q->rank)
        return mismatch(p, "/keys", ekp, q->rank, k,
                        "keys has rank %zu but queries has rank %zu: all "
                        "attention tensors of one request share a rank (3 "
                        "batched, 2 unbatched)",
                        k->rank, q->rank);
    if (a->batched && k->shape[0] != a->B)
        return mismatch(p, "/keys", ekp, q->rank, k,
                        "keys has %zu %s but queries has %zu: the batch "
                        "sizes must agree",
                        k->shape[0],
                        api_plural(k->shape[0], "example", "examples"), a->B);
    a->Nk = k->shape[o];
    a->dk = k->shape[o + 1];
    if (same_d && a->dk != a->dq && a->Nk == a->dq)
        return mismatch(p, "/keys", ekp, q->rank, k,
                        "queries rows have %zu %s but keys rows have %zu, "
                        "and keys has %zu rows: keys looks transposed, (d, "
                        "Nk) instead of (Nk, d). Send one row per key "
                        "(keys.transpose(-2, -1) of what you sent): the "
                        "route takes the transpose itself, as d2l's "
                        "torch.bmm(queries, keys.transpose(1, 2))",
                        a->dq, api_plural(a->dq, "feature", "features"), a->dk,
                        a->Nk);
    if (same_d && a->dk != a->dq)
        return mismatch(p, "/keys", ekp, q->rank, k,
                        "queries rows have %zu %s but keys have %zu: dot "
                        "attention needs equal sizes; use "
                        "/attention/additive for different ones",
                        a->dq, api_plural(a->dq, "feature", "features"), a->dk);

    /* values: same rank and batch, one row per key */
    long long ev[3] = {B, (long long)a->Nk, -1};
    const long long *evp = a->batched ? ev : ev + 1;
    if (v->rank != q->rank)
        return mismatch(p, "/values", evp, q->rank, v,
                        "values has rank %zu but queries and keys have rank "
                        "%zu: all attention tensors of one request share a "
                        "rank",
                        v->rank, q->rank);
    if (a->batched && v->shape[0] != a->B)
        return mismatch(p, "/values", evp, q->rank, v,
                        "values has %zu %s but queries and keys have %zu",
                        v->shape[0],
                        api_plural(v->shape[0], "example", "examples"), a->B);
    if (v->shape[o] != a->Nk)
        return mismatch(p, "/values", evp, q->rank, v,
                        "values has %zu %s per example but keys has %zu: "
                        "each key needs exactly one value",
                        v->shape[o], api_plural(v->shape[o], "row", "rows"),
                        a->Nk);
    a->dv = v->shape[o + 1];
    a->H = 1;
    a->d_out = a->dv;
    return 0;
}

int api_attention_cross_lens(api_attention *a, size_t heads, api_problem *p) {
    if (!a->has_lens)
        return 0;
    const api_tensor *l = &a->lens;
    long long B = (long long)a->B, Nq = (long long)a->Nq;
    if (a->batched) {
        long long e2[2] = {B, Nq};
        if (l->rank == 1 && l->shape[0] == a->B)
            return 0;
        if (l->rank == 2 && l->shape[0] == a->B && l->shape[1] == a->Nq)
            return 0;
        if (l->rank == 1 && heads > 1 && a->B <= SIZE_MAX / heads &&
            l->shape[0] == a->B * heads)
            return mismatch(p, "/valid_lens", &B, 1, l,
                            "valid_lens has B·H = %zu lengths: d2l's "
                            "MultiHeadAttention repeats them per head "
                            "itself, and so does attnd; send one per "
                            "example, (B) = (%zu), or one per query, (B, "
                            "Nq) = (%zu, %zu)",
                            l->shape[0], a->B, a->B, a->Nq);
        return mismatch(p, "/valid_lens", e2, l->rank == 2 ? 2 : 1, l,
                        "valid_lens must have shape (B) = (%zu), one length "
                        "per example, or (B, Nq) = (%zu, %zu), one per query",
                        a->B, a->B, a->Nq);
    }
    if (l->rank == 0 || (l->rank == 1 && l->shape[0] == a->Nq))
        return 0;
    return mismatch(p, "/valid_lens", &Nq, 1, l,
                    "for unbatched input valid_lens is a scalar or has shape "
                    "(Nq) = (%zu)",
                    a->Nq);
}

int api_attention_cross_masks(api_attention *a, size_t heads, api_problem *p) {
    long long B = (long long)a->B, Nq = (long long)a->Nq, Nk = (long long)a->Nk;
    if (a->masks.has_amask) {
        const api_tensor *m = &a->masks.amask;
        size_t o = m->rank - 2; /* the leading axis, when rank 3 */
        int rows_ok = m->shape[o] == a->Nq && m->shape[o + 1] == a->Nk;
        size_t BH = heads && a->B <= SIZE_MAX / heads ? a->B * heads : 0;
        if (m->rank == 2 && rows_ok) {
            a->masks.layout = ATTN_MASK_SHARED;
        } else if (m->rank == 3 && rows_ok && heads && m->shape[0] == BH) {
            a->masks.layout = ATTN_MASK_PER_HEAD;
        } else if (m->rank == 3 && rows_ok && a->batched &&
                   m->shape[0] == a->B) {
            a->masks.layout = ATTN_MASK_PER_EXAMPLE;
        } else {
            long long lead = a->batched && heads && m->shape[0] != a->B
                                 ? (long long)BH
                             : a->batched ? B
                             : heads      ? (long long)heads
                                          : -1;
            long long e[3] = {lead, Nq, Nk};
            int three = m->rank == 3 && lead > 0;
            if (heads)
                return mismatch(
                    p, "/attn_mask", three ? e : e + 1, three ? 3 : 2, m,
                    "attn_mask must have shape (Nq, Nk) = (%zu, %zu), one "
                    "mask for every example and head, %s(B*H, Nq, Nk) = "
                    "(%zu, %zu, %zu), one per example and head (slab b*H + "
                    "t, as nn.MultiheadAttention's 3-D attn_mask)",
                    a->Nq, a->Nk,
                    a->batched ? "(B, Nq, Nk), one per example, or " : "", BH,
                    a->Nq, a->Nk);
            if (a->batched)
                return mismatch(p, "/attn_mask", three ? e : e + 1,
                                three ? 3 : 2, m,
                                "attn_mask must have shape (Nq, Nk) = (%zu, "
                                "%zu), one mask for every example, or (B, "
                                "Nq, Nk) = (%zu, %zu, %zu), one per example",
                                a->Nq, a->Nk, a->B, a->Nq, a->Nk);
            return mismatch(p, "/attn_mask", e + 1, 2, m,
                            "for unbatched input attn_mask has shape (Nq, "
                            "Nk) = (%zu, %zu)",
                            a->Nq, a->Nk);
        }
    }
    if (a->masks.has_kpm) {
        const api_tensor *k = &a->masks.kpm;
        long long e[2] = {B, Nk};
        if (a->batched &&
            !(k->rank == 2 && k->shape[0] == a->B && k->shape[1] == a->Nk))
            return mismatch(p, "/key_padding_mask", e, 2, k,
                            "key_padding_mask must have shape (B, Nk) = "
                            "(%zu, %zu): one flag per key of each example",
                            a->B, a->Nk);
        if (!a->batched && !(k->rank == 1 && k->shape[0] == a->Nk))
            return mismatch(p, "/key_padding_mask", e + 1, 1, k,
                            "for unbatched input key_padding_mask has shape "
                            "(Nk) = (%zu): one flag per key",
                            a->Nk);
    }
    return 0;
}

int api_attention_cross_grad(api_attention *a, api_problem *p) {
    if (!a->has_grad)
        return 0;
    return api_grads_cross(&a->grad, a->batched, a->B, a->Nq, a->d_out, p);
}

int api_attention_check_sizes(const api_attention *a, size_t max_elements,
                              api_problem *p) {
    size_t out[3] = {a->B, a->Nq, a->d_out};
    size_t w[4] = {a->B, a->H, a->Nq, a->Nk};
    if (api_limit_elements("output", out, 3, max_elements, p) ||
        api_limit_elements("weights", w, 4, max_elements, p))
        return -1;
    return 0;
}

void api_attention_read_flags(api_attention *a, const json_t *body) {
    a->return_weights = api_field_bool(body, "return_weights", 1);
    a->return_scores = api_field_bool(body, "return_scores", 0);
    a->diagnostics = api_field_bool(body, "diagnostics", 0);
}

int api_attention_read_mask(api_attention *a, const json_t *body,
                            api_problem *p) {
    a->causal = ATTN_CAUSAL_NONE;
    const json_t *c = api_field_value(body, "causal");
    if (json_is_true(c)) {
        a->causal = ATTN_CAUSAL_TOP_LEFT;
    } else if (json_is_string(c)) {
        const char *s = api_field_string(body, "causal", "");
        if (!strcmp(s, "top_left"))
            a->causal = ATTN_CAUSAL_TOP_LEFT;
        else if (!strcmp(s, "bottom_right"))
            a->causal = ATTN_CAUSAL_BOTTOM_RIGHT;
        else
            return api_fail(p, API_E_INVALID_VALUE, "/causal",
                            "causal is false, true (= \"top_left\": query i "
                            "sees keys j <= i) or \"bottom_right\" (j <= i + "
                            "Nk - Nq); got \"%.40s\"",
                            s);
    }
    a->fully_masked = ATTN_FULLY_MASKED_ZERO;
    const char *fm = api_field_string(body, "fully_masked", "zero");
    if (!strcmp(fm, "uniform"))
        a->fully_masked = ATTN_FULLY_MASKED_UNIFORM;
    else if (!strcmp(fm, "error"))
        a->fully_masked = ATTN_FULLY_MASKED_ERROR;
    else if (strcmp(fm, "zero") != 0)
        return api_fail(p, API_E_INVALID_VALUE, "/fully_masked",
                        "fully_masked is \"zero\" (default), \"uniform\" or "
                        "\"error\"; got \"%.40s\"",
                        fm);
    memset(&a->mask, 0, sizeof a->mask);
    a->mask.causal = a->causal;
    a->mask.fully_masked = a->fully_masked;
    api_masks_set(&a->mask, &a->masks);
    if (a->has_lens) {
        a->mask.valid_lens = a->lens_d;
        /* (B, Nq) batched and (Nq) unbatched: one length per query */
        a->mask.per_query = a->batched ? a->lens.rank == 2 : a->lens.rank == 1;
    }
    return 0;
}

/* Entries of the (B, H, Nq, Nk) weights; the sizes passed the limits. */
static size_t weight_count(const api_attention *a) {
    return a->B * a->H * a->Nq * a->Nk;
}

void api_attention_plan(const api_attention *a, api_arena *arena) {
    api_arena_plan(arena, a->q.count);
    if (!a->keys_defaulted)
        api_arena_plan(arena, a->k.count);
    if (!a->values_defaulted)
        api_arena_plan(arena, a->v.count);
    if (a->has_lens)
        api_arena_plan(arena, a->lens.count);
    api_arena_plan(arena, a->B * a->Nq * a->d_out);
    api_arena_plan(arena, weight_count(a));
    if (a->return_scores || a->diagnostics)
        api_arena_plan(arena, weight_count(a));
    if (a->diagnostics)
        api_arena_plan(arena, api_diagnostics_slots(a->B * a->H * a->Nq));
    if (a->has_grad) {
        api_arena_plan(arena, a->grad.count);
        api_arena_plan(arena, a->q.count);
        api_arena_plan(arena, a->k.count);
        api_arena_plan(arena, a->v.count);
    }
    api_masks_plan(&a->masks, arena);
}

uint64_t api_attention_answer_numbers(const api_attention *a) {
    size_t out[3] = {a->B, a->Nq, a->d_out};
    size_t w[4] = {a->B, a->H, a->Nq, a->Nk};
    uint64_t n = api_work_prod(out, 3);
    if (a->return_weights)
        n = api_work_add(n, api_work_prod(w, 4));
    if (a->return_scores)
        n = api_work_add(n, api_work_prod(w, 4));
    if (a->diagnostics)
        n = api_work_add(n, api_diagnostics_slots(a->B * a->H * a->Nq));
    if (a->has_grad)
        n = api_work_add(
            n, api_work_add(a->q.count, api_work_add(a->k.count, a->v.count)));
    return n;
}

size_t api_attention_input_slots(const api_attention *a) {
    size_t n = a->q.count;
    if (!a->keys_defaulted)
        n += a->k.count;
    if (!a->values_defaulted)
        n += a->v.count;
    if (a->has_lens)
        n += a->lens.count;
    n += api_masks_slots(&a->masks);
    return a->has_grad ? n + a->grad.count : n;
}

void api_attention_take(api_attention *a, api_arena *arena) {
    a->qd = api_arena_take(arena, a->q.count);
    api_tensor_read(a->qd, &a->q);
    a->kd = a->qd;
    if (!a->keys_defaulted) {
        a->kd = api_arena_take(arena, a->k.count);
        api_tensor_read(a->kd, &a->k);
    }
    a->vd = a->kd;
    if (!a->values_defaulted) {
        a->vd = api_arena_take(arena, a->v.count);
        api_tensor_read(a->vd, &a->v);
    }
    a->lens_d = NULL;
    if (a->has_lens) {
        /* The doubles are read into the slots, then converted in place
         * (the check comes in api_attention_check_lens). */
        double *tmp = api_arena_take(arena, a->lens.count);
        api_tensor_read(tmp, &a->lens);
        a->lens_d = (int64_t *)(void *)tmp;
        for (size_t i = 0; i < a->lens.count; i++) {
            double x = tmp[i];
            int64_t v = x < 0               ? -1
                        : x > (double)a->Nk ? (int64_t)a->Nk + 1
                                            : (int64_t)x;
            a->lens_d[i] = v;
        }
    }
    a->out = api_arena_take(arena, a->B * a->Nq * a->d_out);
    a->weights = api_arena_take(arena, weight_count(a));
    a->scores = a->return_scores || a->diagnostics
                    ? api_arena_take(arena, weight_count(a))
                    : NULL;
    if (a->diagnostics)
        api_diagnostics_take(&a->diag, arena, a->B, a->H, a->Nq, a->Nk);
    a->grad_out = a->grad_q = a->grad_k = a->grad_v = NULL;
    if (a->has_grad) {
        a->grad_out = api_arena_take(arena, a->grad.count);
        api_tensor_read(a->grad_out, &a->grad);
        a->grad_q = api_arena_take(arena, a->q.count);
        a->grad_k = api_arena_take(arena, a->k.count);
        a->grad_v = api_arena_take(arena, a->v.count);
    }
    api_masks_take(&a->masks, arena);
}

int api_attention_check_lens(const api_attention *a, api_problem *p) {
    if (!a->has_lens)
        return 0;
    for (size_t i = 0; i < a->lens.count; i++) {
        int64_t v = a->lens_d[i];
        if (v >= 0 && (uint64_t)v <= a->Nk)
            continue;
        api_pointer ptr;
        api_tensor_entry_pointer(&ptr, "/valid_lens", &a->lens, i);
        return api_fail(p, API_E_INVALID_VALUE, ptr.s,
                        "valid_lens entries count visible keys: each must be "
                        "between 0 and Nk = %zu; %s is %s",
                        a->Nk, ptr.s, v < 0 ? "negative" : "larger");
    }
    return 0;
}

/* A row that only attn_mask or key_padding_mask leaves without a key,
 * under "error": invalid_value at the mask's row. */
static int fully_masked_by_pattern(const api_attention *a,
                                   const attn_fault *fault, api_problem *p) {
    size_t b = fault->index / a->Nq, i = fault->index % a->Nq;
    char who[64];
    if (a->batched && a->heads)
        snprintf(who, sizeof who, "query %zu of example %zu, head %zu", i, b,
                 fault->head);
    else if (a->batched)
        snprintf(who, sizeof who, "query %zu of example %zu", i, b);
    else if (a->heads)
        snprintf(who, sizeof who, "query %zu, head %zu", i, fault->head);
    else
        snprintf(who, sizeof who, "query %zu", i);
    api_pointer ptr;
    if (fault->by_mask == ATTN_BY_KEY_PADDING) {
        if (a->batched)
            api_tensor_row_pointer(&ptr, "/key_padding_mask", &a->masks.kpm, b);
        else
            api_pointer_init(&ptr, "/key_padding_mask");
        return api_fail(p, API_E_INVALID_VALUE, ptr.s,
                        "%s sees no key: key_padding_mask marks every key "
                        "it may see as padding, and fully_masked is "
                        "\"error\"; use \"zero\" or \"uniform\" to allow it",
                        who);
    }
    size_t slab = a->masks.layout == ATTN_MASK_PER_HEAD ? b * a->H + fault->head
                  : a->masks.layout == ATTN_MASK_PER_EXAMPLE ? b
                                                             : 0;
    size_t row = a->masks.amask.rank == 3 ? slab * a->Nq + i : i;
    api_tensor_row_pointer(&ptr, "/attn_mask", &a->masks.amask, row);
    return api_fail(
        p, API_E_INVALID_VALUE, ptr.s,
        "%s sees no key: attn_mask%s leaves it none (%s) and fully_masked is "
        "\"error\"; use \"zero\" or \"uniform\" to allow it",
        who,
        a->has_lens || a->causal || a->masks.has_kpm
            ? " with valid_lens, causal and key_padding_mask"
            : "",
        a->masks.kind == API_MASK_BOOL ? "true = not allowed"
                                       : "null = -infinity");
}

int api_attention_fault(const api_attention *a, attn_status st,
                        const attn_fault *fault, api_problem *p) {
    switch (st) {
    case ATTN_OK:
        return 0;
    case ATTN_E_FULLY_MASKED: {
        size_t b = fault->index / a->Nq, i = fault->index % a->Nq;
        if (fault->by_mask)
            return fully_masked_by_pattern(a, fault, p);
        if (!a->has_lens || fault->by_causal)
            return api_fail(p, API_E_INVALID_VALUE, "/causal",
                            "query %zu%s sees no key under the causal mask "
                            "and fully_masked is \"error\"",
                            i, a->batched ? " of its example" : "");
        size_t entry = a->mask.per_query ? fault->index : b;
        api_pointer ptr;
        api_tensor_entry_pointer(&ptr, "/valid_lens", &a->lens, entry);
        return api_fail(p, API_E_INVALID_VALUE, ptr.s,
                        "query %zu of example %zu sees no key (valid_len 0%s) "
                        "and fully_masked is \"error\"; use \"zero\" or "
                        "\"uniform\" to allow it",
                        i, b, a->causal ? " or the causal mask" : "");
    }
    case ATTN_E_VALID_LEN: {
        api_pointer ptr;
        api_tensor_entry_pointer(&ptr, "/valid_lens", &a->lens, fault->index);
        return api_fail(p, API_E_INVALID_VALUE, ptr.s,
                        "valid_lens entries must be between 0 and Nk = %zu",
                        a->Nk);
    }
    case ATTN_E_NONFINITE:
        return api_fail(p, API_E_INVALID_VALUE, NULL,
                        "the result is not finite (a score or output "
                        "overflowed a double); scale the inputs down");
    case ATTN_E_DEADLINE:
        return api_limit_deadline_passed(p);
    default:
        return api_fail(p, API_E_INTERNAL, NULL, "attention failed: %s",
                        attn_status_str(st));
    }
}

/* Masked score entries print as null (a float attn_mask's −∞ too). */
static void null_masked_scores(api_attention *a) {
    for (size_t b = 0; b < a->B; b++)
        for (size_t t = 0; t < a->H; t++)
            for (size_t i = 0; i < a->Nq; i++) {
                double *row = a->scores + ((b * a->H + t) * a->Nq + i) * a->Nk;
                for (size_t j = 0; j < a->Nk; j++)
                    if (!attn_mask_visible_head(&a->mask, b, t, a->H, i, j,
                                                a->Nq, a->Nk))
                        row[j] = NAN;
            }
}

void api_attention_answer(api_attention *a, api_result *r, api_arena *arena,
                          const char *title) {
    size_t so[3] = {a->B, a->Nq, a->d_out}, sw[3] = {a->B, a->Nq, a->Nk};
    size_t swh[4] = {a->B, a->H, a->Nq, a->Nk};
    size_t o = a->batched ? 0 : 1; /* unbatched drops the batch axis */
    api_result_init(r, &a->fmt, API_E_INVALID_VALUE,
                    "the result is not finite (a value overflowed a "
                    "double); scale the inputs down");
    api_result_keep(r, arena);
    api_result_tensor(r, "output", a->out, so + o, 3 - o);
    if (a->return_weights)
        api_result_tensor(r, "weights", a->weights, a->heads ? swh + o : sw + o,
                          (a->heads ? 4 : 3) - o);
    if (a->return_scores) {
        null_masked_scores(a);
        api_result_tensor(r, "scores", a->scores, sw + o, 3 - o)->nan_as_null =
            1;
    }
    api_result_heatmap(r, title, a->weights, a->B, a->H, a->Nq, a->Nk);
}

void api_attention_diagnose(api_attention *a) {
    if (a->diagnostics)
        api_diagnostics_compute(&a->diag, a->scores, a->weights, &a->mask);
}

void api_attention_answer_extras(api_attention *a, api_result *r,
                                 const api_grad_entry *entries, size_t n) {
    if (a->diagnostics)
        api_diagnostics_result(r, &a->diag, a->heads, a->batched);
    for (size_t i = 0; entries && i < n; i++)
        api_result_tensor(r, entries[i].name, entries[i].data, entries[i].shape,
                          entries[i].rank);
}

uint64_t api_attention_work_dot(const api_attention *a) {
    size_t dims[3] = {a->B, a->Nq, a->Nk};
    return api_work_mul(api_work_prod(dims, 3), api_work_add(a->dq, a->dv));
}

int api_attention_check_fields(const api_fastpath *doc, const json_t *body,
                               const api_schema *schema,
                               const api_attention_params *params, int *given,
                               api_problem *p) {
    if (api_fields_unknown(body, schema, "", p) ||
        api_fields_missing(body, schema, "", p))
        return -1;
    int n = 0;
    for (int i = 0; i < params->n; i++)
        n += api_field_value(body, params->names[i]) != NULL;
    *given = n == params->n;
    char ptr[32];
    if (n == 0 && !api_field_value(body, params->alt)) {
        snprintf(ptr, sizeof ptr, "/%s", params->alt);
        return api_fail(p, API_E_MISSING_FIELD, ptr, "%s", params->none);
    }
    for (int i = 0; n > 0 && n < params->n && i < params->n; i++)
        if (!api_field_value(body, params->names[i])) {
            snprintf(ptr, sizeof ptr, "/%s", params->names[i]);
            return api_fail(p, API_E_MISSING_FIELD, ptr, "%s; %s is missing",
                            params->all, params->names[i]);
        }
    return api_fields_types(doc, body, schema, "", p) ? -1 : 0;
}

int api_attention_read_hiddens(const json_t *body, int given, size_t given_h,
                               int64_t *num_hiddens, size_t *h,
                               api_problem *p) {
    *num_hiddens = 0;
    if (api_field_int(body, "num_hiddens", 0, num_hiddens))
        return api_fail(p, API_E_INVALID_VALUE, "/num_hiddens",
                        "num_hiddens is the number of hidden units h, an "
                        "integer from 1 to 2^63 - 1");
    *h = given ? given_h : *num_hiddens > 0 ? (size_t)*num_hiddens : 1;
    return 0;
}

int api_attention_check_drawn(const json_t *body,
                              const api_attention_params *params, int given,
                              int64_t num_hiddens, int seed_big, int64_t seed,
                              api_problem *p) {
    if (given && api_field_value(body, "num_hiddens"))
        return api_fail(p, API_E_INVALID_VALUE, "/num_hiddens",
                        "give %s, or num_hiddens (and seed) to draw them — "
                        "not both",
                        params->list);
    if (!given && num_hiddens < 1)
        return api_fail(p, API_E_INVALID_VALUE, "/num_hiddens",
                        "num_hiddens is the number of hidden units h, at "
                        "least 1");
    if (given && api_field_value(body, "seed"))
        return api_fail(p, API_E_INVALID_VALUE, "/seed",
                        "seed draws the parameters; with %s given, leave it "
                        "out",
                        params->list);
    if (seed_big || seed < 0)
        return api_fail(p, API_E_INVALID_VALUE, "/seed",
                        "seed is an integer from 0 to 2^63 - 1");
    return 0;
}

int api_attention_handle(api_call *call, const api_attention_steps *steps,
                         void *req, size_t size, api_attention *a,
                         api_arena *arena) {
    memset(req, 0, size);
    if (steps->decode(call, req) || steps->prepare(call, req))
        return -1;
    attn_fault fault = {0};
    api_call_inputs_read(call);
    double t0 = api_clock_ms();
    attn_status st = steps->compute(req, &fault);
    if (st == ATTN_OK)
        api_attention_diagnose(a);
    call->compute_ms = api_clock_ms() - t0;
    if (api_attention_fault(a, st, &fault, &call->problem)) {
        api_arena_free(arena);
        return -1;
    }
    steps->answer(call, req);
    return 0;
}

void api_attention_answer_scale(const api_attention *a, api_result *r,
                                double scale) {
    api_result_item *it = api_result_number(r, "scale", scale);
    char detail[120];
    snprintf(detail, sizeof detail,
             "scale rounded to %d digits is beyond the largest double; use "
             "more digits",
             a->fmt.precision);
    api_result_fail_text(r, it, "/precision", detail);
}
