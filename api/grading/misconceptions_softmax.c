/*
 * misconceptions_softmax.c — the known wrong implementations of
 * /softmax/masked (misconceptions.h; the table in docs/misconceptions.md):
 * the masked softmax of scores (B, Nq, Nk), or unbatched (Nq, Nk), along
 * the keys (d2l 11.3.1).
 *
 * Leaving the mask out is the request altered and answered by the route.
 * The others start from the route's right weights, whose rows are all 0
 * exactly where a query sees no key (fully_masked "zero", the default;
 * a row that sees a key sums to 1), or from the scores and valid_lens
 * read through the codec.
 */
#include <math.h>
#include <string.h>

#include "fields.h"
#include "misconceptions.h"
#include "mistake_request.h"

extern const api_route api_route_softmax_masked;

/* The route's weights in reference (rank 2 or 3, last axis Nk). */
static const api_result_item *weights_of(const api_result *reference,
                                         size_t *rows, size_t *Nk) {
    const api_result_item *w = api_result_find(reference, "weights", 7);
    if (!w || w->kind != API_ITEM_TENSOR || w->rank < 2)
        return NULL;
    *Nk = w->shape[w->rank - 1];
    *rows = *Nk ? api_result_item_count(w) / *Nk : 0;
    return w;
}

/* The mask forgotten (mistake_request.h): a plain softmax over every
 * key. */
static int mask_ignored(api_call *call, const json_t *request,
                        const api_result *reference, api_result *wrong) {
    (void)reference;
    return api_mistake_mask_ignored(call, request, &api_route_softmax_masked,
                                    wrong);
}

/* Masked scores −inf, then a plain softmax: a query that sees no key
 * divides 0 by 0, and its weights are NaN (null in JSON; seed note 2,
 * "NaN rows"); other rows are right. Only under fully_masked "zero",
 * where such rows are the all-zero rows of the right weights. */
static int nan_rows(api_call *call, const json_t *request,
                    const api_result *reference, api_result *wrong) {
    (void)call;
    if (!api_mistake_masks_keys(request) ||
        strcmp(api_field_string(request, "fully_masked", "zero"), "zero"))
        return API_MISTAKE_NOT_APPLICABLE;
    size_t rows, Nk;
    const api_result_item *right = weights_of(reference, &rows, &Nk);
    if (!right)
        return API_MISTAKE_FAILED;
    double *w = api_mistake_result_start(wrong, reference, rows * Nk);
    if (!w)
        return API_MISTAKE_FAILED;
    memcpy(w, right->data, rows * Nk * sizeof *w);
    size_t empty = 0;
    for (size_t r = 0; r < rows && Nk; r++) {
        size_t j = 0;
        while (j < Nk && w[r * Nk + j] == 0)
            j++;
        if (j < Nk)
            continue;
        empty++;
        for (j = 0; j < Nk; j++)
            w[r * Nk + j] = NAN;
    }
    api_result_item *it =
        api_result_tensor(wrong, "weights", w, right->shape, right->rank);
    if (it)
        it->nan_as_null = 1;
    return empty ? API_MISTAKE_ANSWERED : API_MISTAKE_NOT_APPLICABLE;
}

/* d2l's masked_softmax(X, valid_lens) (11.3.1): the scores of keys j ≥
 * valid_len replaced by −1e6, then a softmax over every key, so a query
 * that sees no key gets 1/Nk, and one whose visible scores all lie below
 * about −1e6 + 745 puts weight on the masked keys. Only for requests that
 * mask as that function does, by valid_lens alone: (B) one length per
 * example, (B, Nq) one per query; unbatched a number or (Nq). */
static int masked_fill_1e6(api_call *call, const json_t *request,
                           const api_result *reference, api_result *wrong) {
    const json_t *causal = api_field_value(request, "causal");
    if (!api_field_value(request, "valid_lens") ||
        (causal && !json_is_false(causal)) ||
        api_field_value(request, "attn_mask") ||
        api_field_value(request, "key_padding_mask"))
        return API_MISTAKE_NOT_APPLICABLE;
    size_t rows, Nk;
    const api_result_item *right = weights_of(reference, &rows, &Nk);
    if (!right)
        return API_MISTAKE_FAILED;
    api_mistake_tensor scores = {0}, lens = {0};
    int rc = API_MISTAKE_FAILED;
    if (api_mistake_tensor_read(&scores, call, request, "scores") != 1 ||
        api_mistake_tensor_read(&lens, call, request, "valid_lens") != 1 ||
        scores.count != rows * Nk)
        goto done;
    /* one length per query: (B, Nq), or (Nq) for unbatched scores */
    size_t Nq = scores.shape[scores.rank - 2];
    int per_query = lens.rank == scores.rank - 1;
    double *w = api_mistake_result_start(wrong, reference, rows * Nk);
    if (!w)
        goto done;
    size_t changed = 0;
    for (size_t r = 0; r < rows; r++) {
        double len = lens.data[per_query ? r : r / Nq];
        const double *s = scores.data + r * Nk;
        double *row = w + r * Nk, max = -INFINITY, sum = 0;
        for (size_t j = 0; j < Nk; j++) {
            row[j] = (double)j < len ? s[j] : -1e6;
            max = row[j] > max ? row[j] : max;
        }
        for (size_t j = 0; j < Nk; j++)
            sum += row[j] = exp(row[j] - max);
        for (size_t j = 0; j < Nk; j++) {
            row[j] /= sum;
            changed += row[j] != right->data[r * Nk + j];
        }
    }
    api_result_tensor(wrong, "weights", w, right->shape, right->rank);
    rc = changed ? API_MISTAKE_ANSWERED : API_MISTAKE_NOT_APPLICABLE;
done:
    api_mistake_tensor_free(&scores);
    api_mistake_tensor_free(&lens);
    return rc;
}

const api_misconception api_misconceptions_softmax[] = {
    {"softmax.mask_ignored", API_EXPLAIN_MASK_IGNORED, NULL, mask_ignored},
    {"softmax.nan_rows", API_EXPLAIN_NAN_ROWS, NULL, nan_rows},
    {"softmax.masked_fill_1e6", API_EXPLAIN_MASKED_FILL_1E6,
     API_INSTRUCTOR_MASKED_FILL_1E6, masked_fill_1e6},
};
const size_t api_misconceptions_softmax_count =
    sizeof api_misconceptions_softmax / sizeof api_misconceptions_softmax[0];
_Static_assert(
    sizeof api_misconceptions_softmax / sizeof api_misconceptions_softmax[0] ==
        API_MISCONCEPTIONS_SOFTMAX_N,
    "the softmax catalogue's length is not API_MISCONCEPTIONS_SOFTMAX_N "
    "(misconceptions.h): change it with docs/misconceptions.md "
    "and tests/grading/catalogue_np.py");
