/*
 * softmax.c — POST /softmax/masked: the masked softmax of scores
 * given by the caller (d2l 11.3.1 "Masked Softmax Operation"; docs/contract.md
 * section 10), with the same masking fields, errors and pointers as the
 * attention routes.
 *
 *   scores (B, Nq, Nk) or unbatched (Nq, Nk)
 *   valid_lens (B) or (B, Nq); unbatched a scalar or (Nq)
 *   attn_mask (Nq, Nk) or (B, Nq, Nk), booleans (true = not allowed) or
 *   numbers added to the scores (null = -inf); key_padding_mask (B, Nk)
 *   -> {"weights": scores' shape}
 * The softmax subtracts each row's largest visible score, so any finite
 * scores (±1e300 included) give finite weights; masked keys get exactly 0.
 */
#include <string.h>

#include "arena.h"
#include "attention.h"
#include "attn.h"
#include "call.h"
#include "fields.h"
#include "limit.h"
#include "route.h"
#include "tensor.h"

static const api_tensor_spec scores_spec = {
    "scores", API_RANK(2) | API_RANK(3), API_TENSOR_MASKED_SCORES,
    "(B, Nq, Nk) or unbatched (Nq, Nk)", 0};

/* The contract's field table (docs/contract.md section 10), in its order. */
static const api_field fields[] = {
    {"scores", API_FIELD_TENSOR, 1, &scores_spec, NULL},
    {"valid_lens", API_FIELD_TENSOR, 0, &api_attention_lens_spec, NULL},
    {"attn_mask", API_FIELD_MASK, 0, &api_attention_attn_mask_spec, NULL},
    {"key_padding_mask", API_FIELD_BOOL_MASK, 0,
     &api_attention_key_padding_spec, NULL},
    {"causal", API_FIELD_BOOL_OR_STRING, 0, NULL, NULL},
    {"fully_masked", API_FIELD_STRING, 0, NULL, NULL},
    {"labels", API_FIELD_OBJECT, 0, NULL, &api_labels_schema},
    {"tensor_format", API_FIELD_STRING, 0, NULL, NULL},
    {"precision", API_FIELD_INTEGER, 0, NULL, NULL},
};

static const api_schema schema = {"/softmax/masked", fields,
                                  sizeof fields / sizeof fields[0]};

/* valid_lens as integers for the mask, converted in place (the doubles
 * are read into the slots first). Out-of-range entries are clamped to -1
 * or Nk + 1 for api_attention_check_lens to report. */
static int64_t *read_lens(double *slots, const api_tensor *lens, size_t Nk) {
    api_tensor_read(slots, lens);
    int64_t *out = (int64_t *)(void *)slots;
    for (size_t i = 0; i < lens->count; i++) {
        double x = slots[i];
        out[i] = x < 0 ? -1 : x > (double)Nk ? (int64_t)Nk + 1 : (int64_t)x;
    }
    return out;
}

/* The request's allocation: the scores (the weights are computed in
 * their place), then valid_lens, then the masks. */
static void plan(const api_attention *a, api_arena *arena) {
    api_arena_plan(arena, a->B * a->Nq * a->Nk);
    if (a->has_lens)
        api_arena_plan(arena, a->lens.count);
    api_masks_plan(&a->masks, arena);
}

/* shapes: the decoded api_attention (B, Nq, Nk from the scores). One exp
 * per entry; every slot is read from the request. */
static void cost_softmax(const api_call *call, const void *shapes,
                         api_cost *cost) {
    (void)call;
    const api_attention *a = shapes;
    size_t dims[3] = {a->B, a->Nq, a->Nk};
    api_arena arena = {0};
    plan(a, &arena);
    api_cost_of_plan(cost, 0, &arena,
                     api_work_mul(api_work_prod(dims, 3), API_WORK_EXP));
    /* the answer is the weights, in the scores' place */
    cost->input_bytes = cost->working_bytes;
}

static int handle_softmax_masked(api_call *call) {
    api_problem *p = &call->problem;
    const json_t *body = call->body;
    const api_fastpath *doc = call->doc;
    size_t max_elements = call->limits->max_elements;
    /* The masking state lives in the attention routes' struct, so that
     * valid_lens, causal and fully_masked are read, checked and blamed
     * exactly as there; only B, Nq, Nk and the lens are used here. */
    api_attention a;
    memset(&a, 0, sizeof a);
    api_tensor scores;
    int present;

    /* 1. unknown_field, missing_field, wrong_type over the whole body */
    if (api_fields_check(doc, body, &schema, "", p))
        return -1;
    /* 2. tensors in table order: rank, ragged, size, len(data), zero */
    if (api_field_tensor(&scores, &present, doc, body, "scores", &scores_spec,
                         max_elements, p) ||
        api_attention_decode_lens(&a, doc, body, max_elements, p) ||
        api_attention_decode_masks(&a, doc, body, max_elements, p))
        return -1;
    /* 3. cross-field shape of valid_lens */
    a.batched = scores.rank == 3;
    size_t drop = a.batched ? 0 : 1; /* unbatched: no batch axis */
    a.B = a.batched ? scores.shape[0] : 1;
    a.Nq = scores.shape[1 - drop];
    a.Nk = scores.shape[2 - drop];
    if (api_attention_cross_lens(&a, 0, p) ||
        api_attention_cross_masks(&a, 0, p))
        return -1;
    /* 4. derived size and the cost (cost_softmax) */
    size_t dims[3] = {a.B, a.Nq, a.Nk};
    if (api_limit_elements("weights", dims, 3, max_elements, p) ||
        api_route_charge(call, &a))
        return -1;

    /* 5. one allocation: the weights are computed in place of the scores */
    api_arena arena = {0};
    plan(&a, &arena);
    if (api_arena_alloc(&arena))
        return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    double *weights = api_arena_take(&arena, scores.count);
    api_tensor_read(weights, &scores);
    if (a.has_lens)
        a.lens_d =
            read_lens(api_arena_take(&arena, a.lens.count), &a.lens, a.Nk);
    api_masks_take(&a.masks, &arena);

    /* 6. remaining values, in table order */
    int rc = api_attention_check_lens(&a, p) ||
             api_attention_read_mask(&a, body, p) ||
             api_tensor_format_read(&a.fmt, body, p);

    /* 7. compute */
    if (rc == 0) {
        attn_fault fault = {0};
        double t0 = api_clock_ms();
        attn_status st = attn_softmax_masked(weights, weights, &a.mask, a.B,
                                             a.Nq, a.Nk, &fault);
        call->compute_ms = api_clock_ms() - t0;
        rc = api_attention_fault(&a, st, &fault, p);
    }

    /* 8. answer: {"weights": ...}, or its heatmap for Accept:
     * image/svg+xml (result.h) */
    if (rc) {
        api_arena_free(&arena);
        return -1;
    }
    api_result *res = &call->result;
    api_result_init(res, &a.fmt, API_E_INTERNAL,
                    "a weight is not a finite number in [0, 1]");
    api_result_keep(res, &arena);
    api_result_tensor(res, "weights", weights, dims + drop, 3 - drop);
    api_result_heatmap(res, "Masked softmax weights", weights, a.B, 1, a.Nq,
                       a.Nk);
    return 0;
}

/* The route table's entry (route.h). */
static const api_answer_field answer_fields[] = {
    {"weights", 3, 0, 0, API_ANSWER_ALWAYS},
};

static const api_answer_table answer = API_ANSWER_TABLE(answer_fields);

const api_route api_route_softmax_masked = {
    .method = "POST",
    .path = "/softmax/masked",
    .handler = handle_softmax_masked,
    .flags = API_ROUTE_JSON_BODY | API_ROUTE_VARY_ACCEPT | API_ROUTE_COMPUTES |
             API_ROUTE_WORK_OF_BODY,
    .request = &schema,
    .answer = &answer,
    .cost = cost_softmax,
};
