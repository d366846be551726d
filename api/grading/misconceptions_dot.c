/*
 * misconceptions_dot.c — the known wrong implementations of
 * /attention/dot (misconceptions.h; the table in docs/misconceptions.md).
 *
 * A mistake the route can express (another scale, another valid_lens or
 * causal, keys for values) is the request altered and answered by the
 * route. The others are computed here from what the route gives: the
 * scaled scores Q Kᵀ · scale (B, Nq, Nk) of return_scores, masked entries
 * NaN, and the values (B, Nk, dv) through the codec; then the mistaken
 * weights (B, Nq, Nk) and output = weights · values (B, Nq, dv), both
 * without the batch axis for unbatched input as the route answers them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "fields.h"
#include "invoke.h"
#include "misconceptions.h"
#include "mistake_request.h"

extern const api_route api_route_dot;

/* ------------------------------------------------------------ shapes */

/* The request's sizes: queries (B, Nq, d), keys (B, Nk, d), values (B,
 * Nk, dv), batched = rank 3. */
typedef struct {
    size_t B, Nq, Nk, d, dv;
    int batched;
} dot_shapes;

static int shapes_of(api_call *call, const json_t *request, dot_shapes *s) {
    api_mistake_tensor q, k, v;
    int ok = api_mistake_tensor_shape(&q, call, request, "queries") == 1 &&
             api_mistake_tensor_shape(&k, call, request, "keys") == 1 &&
             api_mistake_tensor_shape(&v, call, request, "values") == 1;
    if (!ok)
        return -1;
    s->batched = q.rank == 3;
    size_t o = s->batched ? 1 : 0;
    s->B = s->batched ? q.shape[0] : 1;
    s->Nq = q.shape[o];
    s->d = q.shape[o + 1];
    s->Nk = k.shape[o];
    s->dv = v.shape[o + 1];
    return 0;
}

/* ------------------------------------------------ the route, altered */

/* The request again with scale set to x (a shallow copy: its tensors stay
 * the same values), answered by the route. */
static int with_scale(api_call *call, const json_t *request, double x,
                      api_result *wrong) {
    json_t *altered = json_copy((json_t *)request);
    if (!altered || json_object_set_new(altered, "scale", json_real(x))) {
        json_decref(altered);
        return API_MISTAKE_FAILED;
    }
    int rc = api_invoke_result(call, &api_route_dot, altered, call->doc, NULL,
                               wrong);
    json_decref(altered);
    return rc ? API_MISTAKE_FAILED : API_MISTAKE_ANSWERED;
}

/* 1 when the request sets its own scale: then no scaling mistake can
 * have been made in it. */
static int has_scale(const json_t *request) {
    const json_t *s = json_object_get(request, "scale");
    return s && !json_is_null(s);
}

/* The causal alignment asked: 0 none, 1 top-left (true, "top_left"),
 * 2 bottom-right. */
static int causal_of(const json_t *request) {
    const json_t *c = api_field_value(request, "causal");
    if (json_is_true(c))
        return 1;
    const char *s = json_string_value(c);
    if (s && !strcmp(s, "top_left"))
        return 1;
    if (s && !strcmp(s, "bottom_right"))
        return 2;
    return 0;
}

/* ---------------------------------------- computed from the scores */

/* What the computed mistakes start from: the route's answer to the
 * request with return_scores (masked scores NaN) and its right weights,
 * and the values. */
typedef struct {
    api_result res;
    const api_result_item *output, *weights, *scores;
    api_mistake_tensor values;
    size_t B, Nq, Nk, dv;
    const char *fully_masked; /* the request's policy: zero, uniform, error */
    int borrowed; /* 1: a copy of the search's memo, which owns it */
} scored;

static void scored_free(scored *s) {
    if (!s->borrowed) {
        api_result_free(&s->res);
        api_mistake_tensor_free(&s->values);
    }
    memset(s, 0, sizeof *s);
}

/* The search's memo of the scores (api_mistake_memo), masked and not:
 * five mistakes start from the masked ones. */
typedef struct {
    scored s[2];
    int have[2];
} scored_memo;

static void scored_memo_free(void *data) {
    scored_memo *m = data;
    for (int k = 0; k < 2; k++)
        if (m->have[k]) {
            m->s[k].borrowed = 0;
            scored_free(&m->s[k]);
        }
    free(m);
}

/* The search's memo of scores, made when new; NULL outside a search, when
 * memory runs out, or when the memo holds another route's. */
static scored_memo *memo_of(api_call *call) {
    api_mistake_memo *memo = call->memo;
    if (!memo || (memo->data && memo->free != scored_memo_free))
        return NULL;
    if (!memo->data && (memo->data = calloc(1, sizeof(scored_memo))))
        memo->free = scored_memo_free;
    return memo->data;
}

/* Fill s from the route's answer to request with return_scores and
 * return_weights; masked = 0 leaves every mask out, for the
 * scores of every key. In a search, the memo's (computed by the first
 * mistake that asks, borrowed by the others). Returns 0, or -1 (s
 * freed); free s with scored_free either way. */
static int scored_of(api_call *call, const json_t *request, int masked,
                     scored *s) {
    memset(s, 0, sizeof *s);
    scored_memo *memo = memo_of(call);
    if (memo && memo->have[masked]) { /* computed once per search */
        *s = memo->s[masked];
        return 0;
    }
    s->fully_masked = api_field_string(request, "fully_masked", "zero");
    api_mistake_request m;
    api_mistake_request_begin(&m, call, request);
    api_mistake_request_set(&m, "return_scores", json_true());
    api_mistake_request_set(&m, "return_weights", json_true());
    api_mistake_request_del(&m, "grad_output");
    api_mistake_request_del(&m, "diagnostics");
    if (!masked)
        api_mistake_request_drop_masks(&m);
    if (api_mistake_request_answer(&m, call, &api_route_dot, &s->res) !=
        API_MISTAKE_ANSWERED) {
        scored_free(s);
        return -1;
    }
    s->output = api_result_find(&s->res, "output", 6);
    s->weights = api_result_find(&s->res, "weights", 7);
    s->scores = api_result_find(&s->res, "scores", 6);
    if (!s->output || !s->weights || !s->scores ||
        api_mistake_tensor_read(&s->values, call, request, "values") != 1) {
        scored_free(s);
        return -1;
    }
    size_t r = s->scores->rank; /* 3, or 2 unbatched */
    s->B = r == 3 ? s->scores->shape[0] : 1;
    s->Nq = s->scores->shape[r - 2];
    s->Nk = s->scores->shape[r - 1];
    s->dv = s->output->shape[s->output->rank - 1];
    if (memo) { /* the memo owns it from now on */
        scored *kept = &memo->s[masked];
        *kept = *s;
        kept->borrowed = 1;
        /* its items are the memo's copy's, not s's, which the caller drops */
        kept->output = api_result_find(&kept->res, "output", 6);
        kept->weights = api_result_find(&kept->res, "weights", 7);
        kept->scores = api_result_find(&kept->res, "scores", 6);
        memo->have[masked] = 1;
        *s = *kept;
    }
    return 0;
}

/* *wrong = {"output": w · values, "weights": w}, w (B, Nq, Nk) the
 * mistaken weights, in the shapes the route answered s with. Returns
 * API_MISTAKE_ANSWERED or API_MISTAKE_FAILED. */
static int answer_weights(const scored *s, const api_result *reference,
                          const double *w, api_result *wrong) {
    size_t nw = s->B * s->Nq * s->Nk, no = s->B * s->Nq * s->dv;
    double *data = api_mistake_result_start(wrong, reference, nw + no);
    if (!data)
        return API_MISTAKE_FAILED;
    double *weights = data, *out = data + nw;
    memcpy(weights, w, nw * sizeof *w);
    /* a non-finite output is the mistake's answer as it is */
    attn_fault fault;
    if (attn_pool_values(out, w, s->values.data, s->B, s->Nq, s->Nk, s->dv,
                         &fault) == ATTN_E_OVERFLOW)
        return API_MISTAKE_FAILED;
    api_result_tensor(wrong, "output", out, s->output->shape, s->output->rank);
    api_result_tensor(wrong, "weights", weights, s->weights->shape,
                      s->weights->rank);
    return API_MISTAKE_ANSWERED;
}

/* Softmax of the n entries x[0], x[stride], … whose use[] is 1 (stable:
 * the largest is subtracted) into w at the same places; the others get 0.
 * With none used, every entry gets `empty`. */
static void softmax_some(double *w, const double *x, const int *use, size_t n,
                         size_t stride, double empty) {
    double max = -INFINITY;
    int any = 0;
    for (size_t j = 0; j < n; j++)
        if (use[j * stride] && (!any || x[j * stride] > max)) {
            max = x[j * stride];
            any = 1;
        }
    double sum = 0;
    for (size_t j = 0; j < n; j++) {
        double e = any && use[j * stride] ? exp(x[j * stride] - max) : 0;
        w[j * stride] = e;
        sum += e;
    }
    for (size_t j = 0; j < n; j++)
        w[j * stride] = any ? w[j * stride] / sum : empty;
}

/* Buffers of n doubles and n flags (both malloc'd, or both NULL). */
static int buffers(size_t n, double **w, int **use) {
    *w = malloc(n * sizeof **w);
    *use = malloc(n * sizeof **use);
    if (*w && *use)
        return 0;
    free(*w);
    free(*use);
    *w = NULL;
    *use = NULL;
    return -1;
}

/* ----------------------------------------------------------- mistakes */

static int no_scale(api_call *call, const json_t *request,
                    const api_result *reference, api_result *wrong) {
    const api_result_item *s = api_result_find(reference, "scale", 5);
    if (has_scale(request) || !s || s->number == 1)
        return API_MISTAKE_NOT_APPLICABLE;
    return with_scale(call, request, 1, wrong);
}

static int scale_1_over_d(api_call *call, const json_t *request,
                          const api_result *reference, api_result *wrong) {
    (void)reference;
    dot_shapes s;
    if (has_scale(request))
        return API_MISTAKE_NOT_APPLICABLE;
    if (shapes_of(call, request, &s))
        return API_MISTAKE_FAILED;
    if (s.d == 1) /* 1/d = 1/√d */
        return API_MISTAKE_NOT_APPLICABLE;
    return with_scale(call, request, 1.0 / (double)s.d, wrong);
}

static int scale_sqrt_dv(api_call *call, const json_t *request,
                         const api_result *reference, api_result *wrong) {
    (void)reference;
    dot_shapes s;
    if (has_scale(request))
        return API_MISTAKE_NOT_APPLICABLE;
    if (shapes_of(call, request, &s))
        return API_MISTAKE_FAILED;
    if (s.dv == s.d)
        return API_MISTAKE_NOT_APPLICABLE;
    return with_scale(call, request, 1 / sqrt((double)s.dv), wrong);
}

/* Weights (b, :, j) = softmax over the queries i that see key j of
 * scores (b, i, j); a key no query sees gets 0 from every query. */
static int softmax_over_queries(api_call *call, const json_t *request,
                                const api_result *reference,
                                api_result *wrong) {
    scored s;
    if (scored_of(call, request, 1, &s))
        return API_MISTAKE_FAILED;
    size_t n = s.B * s.Nq * s.Nk;
    double *w;
    int *use;
    if (buffers(n, &w, &use)) {
        scored_free(&s);
        return API_MISTAKE_FAILED;
    }
    for (size_t i = 0; i < n; i++)
        use[i] = !isnan(s.scores->data[i]);
    for (size_t b = 0; b < s.B; b++)
        for (size_t j = 0; j < s.Nk; j++) {
            size_t at = b * s.Nq * s.Nk + j; /* (b, 0, j), stride Nk */
            softmax_some(w + at, s.scores->data + at, use + at, s.Nq, s.Nk, 0);
        }
    int rc = answer_weights(&s, reference, w, wrong);
    free(w);
    free(use);
    scored_free(&s);
    return rc;
}

/* d2l's masked_softmax (11.3.1): masked scores replaced by fill, then a
 * softmax over every key. It differs from leaving them out only in a row
 * with masked keys that has no visible key (uniform weights, unless the
 * request's fully_masked is "uniform" too) or whose largest visible score
 * lies so far below fill that exp(fill − max) is not 0 (beyond −745 a
 * double's exp is 0); other rows keep the right weights. */
static int masked_fill(api_call *call, const json_t *request,
                       const api_result *reference, api_result *wrong,
                       double fill) {
    scored s;
    if (scored_of(call, request, 1, &s))
        return API_MISTAKE_FAILED;
    size_t n = s.B * s.Nq * s.Nk;
    double *w, *x;
    int *use;
    if (buffers(n, &w, &use) || !(x = malloc(s.Nk * sizeof *x))) {
        free(w);
        free(use);
        scored_free(&s);
        return API_MISTAKE_FAILED;
    }
    memcpy(w, s.weights->data, n * sizeof *w);
    int uniform = !strcmp(s.fully_masked, "uniform");
    size_t affected = 0;
    for (size_t r = 0; r < s.B * s.Nq; r++) {
        const double *row = s.scores->data + r * s.Nk;
        size_t masked = 0;
        double max = -INFINITY;
        for (size_t j = 0; j < s.Nk; j++) {
            masked += isnan(row[j]);
            if (!isnan(row[j]) && row[j] > max)
                max = row[j];
        }
        int none_visible = masked == s.Nk;
        if (masked == 0 || (none_visible && uniform) ||
            (!none_visible && fill - max < -745.2))
            continue;
        for (size_t j = 0; j < s.Nk; j++) {
            x[j] = isnan(row[j]) ? fill : row[j];
            use[j] = 1;
        }
        softmax_some(w + r * s.Nk, x, use, s.Nk, 1, 0);
        affected++;
    }
    int rc = affected ? answer_weights(&s, reference, w, wrong)
                      : API_MISTAKE_NOT_APPLICABLE;
    free(x);
    free(w);
    free(use);
    scored_free(&s);
    return rc;
}

static int masked_fill_1e6(api_call *call, const json_t *request,
                           const api_result *reference, api_result *wrong) {
    return masked_fill(call, request, reference, wrong, -1e6);
}

static int masked_fill_1e9(api_call *call, const json_t *request,
                           const api_result *reference, api_result *wrong) {
    return masked_fill(call, request, reference, wrong, -1e9);
}

/* The request again with valid_lens (B, Nq) = lens (B·Nq entries,
 * row-major), answered by the route. */
static int with_lens(api_call *call, const json_t *request, const double *lens,
                     size_t B, size_t Nq, api_result *wrong) {
    api_mistake_request m;
    api_mistake_request_begin(&m, call, request);
    size_t shape[2] = {B, Nq};
    api_mistake_request_tensor(&m, "valid_lens", lens, shape, 2);
    return api_mistake_request_answer(&m, call, &api_route_dot, wrong);
}

/* valid_lens (B) read as valid_lens.repeat(Nq): flattened query row r =
 * b·Nq + q gets valid_lens[r mod B] instead of valid_lens[b]. */
static int valid_lens_per_query(api_call *call, const json_t *request,
                                const api_result *reference,
                                api_result *wrong) {
    (void)reference;
    dot_shapes s;
    api_mistake_tensor lens;
    if (shapes_of(call, request, &s))
        return API_MISTAKE_FAILED;
    int got = api_mistake_tensor_read(&lens, call, request, "valid_lens");
    if (got != 1 || !s.batched || lens.rank != 1 || s.B == 1) {
        api_mistake_tensor_free(&lens);
        return got < 0 ? API_MISTAKE_FAILED : API_MISTAKE_NOT_APPLICABLE;
    }
    double *read = malloc(s.B * s.Nq * sizeof *read);
    int changed = 0;
    for (size_t r = 0; read && r < s.B * s.Nq; r++) {
        read[r] = lens.data[r % s.B];
        changed |= read[r] != lens.data[r / s.Nq];
    }
    int rc = !read      ? API_MISTAKE_FAILED
             : !changed ? API_MISTAKE_NOT_APPLICABLE
                        : with_lens(call, request, read, s.B, s.Nq, wrong);
    free(read);
    api_mistake_tensor_free(&lens);
    return rc;
}

/* valid_lens (B, Nq) flattened in column-major order (valid_lens.T
 * .reshape(-1)) and read back row by row: query row r = b·Nq + q gets
 * valid_lens[r mod B][r div B] instead of valid_lens[b][q] (the
 * transpose itself when B = Nq). */
static int valid_lens_transposed(api_call *call, const json_t *request,
                                 const api_result *reference,
                                 api_result *wrong) {
    (void)reference;
    dot_shapes s;
    api_mistake_tensor lens;
    if (shapes_of(call, request, &s))
        return API_MISTAKE_FAILED;
    int got = api_mistake_tensor_read(&lens, call, request, "valid_lens");
    if (got != 1 || !s.batched || lens.rank != 2 || s.B == 1 || s.Nq == 1) {
        api_mistake_tensor_free(&lens);
        return got < 0 ? API_MISTAKE_FAILED : API_MISTAKE_NOT_APPLICABLE;
    }
    double *read = malloc(s.B * s.Nq * sizeof *read);
    int changed = 0;
    for (size_t r = 0; read && r < s.B * s.Nq; r++) {
        read[r] = lens.data[(r % s.B) * s.Nq + r / s.B];
        changed |= read[r] != lens.data[r];
    }
    int rc = !read      ? API_MISTAKE_FAILED
             : !changed ? API_MISTAKE_NOT_APPLICABLE
                        : with_lens(call, request, read, s.B, s.Nq, wrong);
    free(read);
    api_mistake_tensor_free(&lens);
    return rc;
}

/* The request asked for causal alignment `asked` (causal_of), answered
 * with `as` ("top_left" or "bottom_right"); the two agree when Nq = Nk. */
static int causal_as(api_call *call, const json_t *request, int asked,
                     const char *as, api_result *wrong) {
    dot_shapes s;
    if (causal_of(request) != asked)
        return API_MISTAKE_NOT_APPLICABLE;
    if (shapes_of(call, request, &s))
        return API_MISTAKE_FAILED;
    if (s.Nq == s.Nk)
        return API_MISTAKE_NOT_APPLICABLE;
    api_mistake_request m;
    api_mistake_request_begin(&m, call, request);
    api_mistake_request_set(&m, "causal", json_string(as));
    return api_mistake_request_answer(&m, call, &api_route_dot, wrong);
}

static int causal_top_left(api_call *call, const json_t *request,
                           const api_result *reference, api_result *wrong) {
    (void)reference;
    return causal_as(call, request, 2, "top_left", wrong);
}

static int causal_bottom_right(api_call *call, const json_t *request,
                               const api_result *reference, api_result *wrong) {
    (void)reference;
    return causal_as(call, request, 1, "bottom_right", wrong);
}

/* The softmax over the keys the masks hide (valid_lens, causal and
 * PyTorch's), the visible ones left out. A row the mask hid nothing of is then
 * fully masked and follows fully_masked ("zero": 0, "uniform": 1/Nk; "error"
 * would have refused the request, so the mistake cannot give an answer). */
static int mask_inverted(api_call *call, const json_t *request,
                         const api_result *reference, api_result *wrong) {
    if (!api_mistake_masks_keys(request))
        return API_MISTAKE_NOT_APPLICABLE;
    scored s, all;
    if (scored_of(call, request, 1, &s))
        return API_MISTAKE_FAILED;
    if (scored_of(call, request, 0, &all)) {
        scored_free(&s);
        return API_MISTAKE_FAILED;
    }
    size_t n = s.B * s.Nq * s.Nk;
    double *w;
    int *use;
    int rc = API_MISTAKE_FAILED;
    if (buffers(n, &w, &use) == 0) {
        rc = API_MISTAKE_ANSWERED;
        double empty =
            !strcmp(s.fully_masked, "uniform") ? 1.0 / (double)s.Nk : 0;
        for (size_t r = 0; r < s.B * s.Nq; r++) {
            size_t visible = 0;
            for (size_t j = 0; j < s.Nk; j++) {
                use[r * s.Nk + j] = isnan(s.scores->data[r * s.Nk + j]);
                visible += use[r * s.Nk + j];
            }
            if (visible == 0 && !strcmp(s.fully_masked, "error"))
                rc = API_MISTAKE_NOT_APPLICABLE;
            softmax_some(w + r * s.Nk, all.scores->data + r * s.Nk,
                         use + r * s.Nk, s.Nk, 1, empty);
        }
        if (rc == API_MISTAKE_ANSWERED)
            rc = answer_weights(&s, reference, w, wrong);
    }
    free(w);
    free(use);
    scored_free(&all);
    scored_free(&s);
    return rc;
}

/* output = weights · keys: the request again with values = keys (the
 * same value, so the same doubles); grad_output, whose shape follows the
 * values', is left out. */
static int keys_as_values(api_call *call, const json_t *request,
                          const api_result *reference, api_result *wrong) {
    (void)reference;
    api_mistake_tensor k, v;
    int rk = api_mistake_tensor_read(&k, call, request, "keys");
    int rv = api_mistake_tensor_read(&v, call, request, "values");
    int same = rk == 1 && rv == 1 && k.rank == v.rank &&
               !memcmp(k.shape, v.shape, sizeof k.shape) &&
               !memcmp(k.data, v.data, k.count * sizeof *k.data);
    api_mistake_tensor_free(&k);
    api_mistake_tensor_free(&v);
    if (rk != 1 || rv != 1)
        return API_MISTAKE_FAILED;
    if (same)
        return API_MISTAKE_NOT_APPLICABLE;
    api_mistake_request m;
    api_mistake_request_begin(&m, call, request);
    api_mistake_request_set(&m, "values",
                            json_incref(json_object_get(request, "keys")));
    api_mistake_request_del(&m, "grad_output");
    return api_mistake_request_answer(&m, call, &api_route_dot, wrong);
}

/* Weights exp(score) for the visible keys and 0 for masked ones, never
 * divided by their sum; not applicable when an exp overflows (no JSON
 * answer holds it). */
static int weights_unnormalised(api_call *call, const json_t *request,
                                const api_result *reference,
                                api_result *wrong) {
    scored s;
    if (scored_of(call, request, 1, &s))
        return API_MISTAKE_FAILED;
    size_t n = s.B * s.Nq * s.Nk;
    double *w = malloc(n * sizeof *w);
    int finite = 1;
    for (size_t i = 0; w && i < n; i++) {
        double x = s.scores->data[i];
        w[i] = isnan(x) ? 0 : exp(x);
        finite &= isfinite(w[i]);
    }
    int rc = !w        ? API_MISTAKE_FAILED
             : !finite ? API_MISTAKE_NOT_APPLICABLE
                       : answer_weights(&s, reference, w, wrong);
    free(w);
    scored_free(&s);
    return rc;
}

/* The mask forgotten (mistake_request.h). */
static int mask_ignored(api_call *call, const json_t *request,
                        const api_result *reference, api_result *wrong) {
    (void)reference;
    return api_mistake_mask_ignored(call, request, &api_route_dot, wrong);
}

/* Masked scores set to −inf before a plain softmax: a query that sees no
 * key divides 0 by 0, and its weights and output are NaN (null in JSON;
 * seed note 2, "NaN rows"). Other rows are the right ones. Only when some
 * row is fully masked and fully_masked is not "error" (which refuses
 * such a request). */
static int nan_rows(api_call *call, const json_t *request,
                    const api_result *reference, api_result *wrong) {
    if (!api_mistake_masks_keys(request))
        return API_MISTAKE_NOT_APPLICABLE;
    scored s;
    if (scored_of(call, request, 1, &s))
        return API_MISTAKE_FAILED;
    size_t rows = s.B * s.Nq, nw = rows * s.Nk, no = rows * s.dv;
    double *data = api_mistake_result_start(wrong, reference, nw + no);
    if (!data) {
        scored_free(&s);
        return API_MISTAKE_FAILED;
    }
    double *weights = data, *out = data + nw;
    memcpy(weights, s.weights->data, nw * sizeof *weights);
    memcpy(out, s.output->data, no * sizeof *out);
    size_t empty = 0;
    for (size_t r = 0; r < rows; r++) {
        size_t visible = 0;
        for (size_t j = 0; j < s.Nk; j++)
            visible += !isnan(s.scores->data[r * s.Nk + j]);
        if (visible)
            continue;
        empty++;
        for (size_t j = 0; j < s.Nk; j++)
            weights[r * s.Nk + j] = NAN;
        for (size_t c = 0; c < s.dv; c++)
            out[r * s.dv + c] = NAN;
    }
    api_result_item *o = api_result_tensor(wrong, "output", out,
                                           s.output->shape, s.output->rank);
    api_result_item *w = api_result_tensor(wrong, "weights", weights,
                                           s.weights->shape, s.weights->rank);
    if (o)
        o->nan_as_null = 1;
    if (w)
        w->nan_as_null = 1;
    scored_free(&s);
    return empty ? API_MISTAKE_ANSWERED : API_MISTAKE_NOT_APPLICABLE;
}

const api_misconception api_misconceptions_dot[] = {
    {"dot.no_scale",
     "the scores were not scaled: softmax(Q Kᵀ / √d) divides by √d, the "
     "square root of the query and key size (d2l 11.3.2; Vaswani et al. "
     "2017, eq. 1)",
     NULL, no_scale},
    {"dot.scale_1_over_d",
     "the scores were divided by d: softmax(Q Kᵀ / √d) divides by √d, the "
     "square root of the query and key size, which keeps their variance 1 "
     "(d2l 11.3.2; Vaswani et al. 2017, eq. 1)",
     NULL, scale_1_over_d},
    {"dot.scale_sqrt_dv",
     "the scores were divided by √dv, the value size: softmax(Q Kᵀ / √d) "
     "divides by √d, the size of the queries and keys that Q Kᵀ sums over "
     "(d2l 11.3.2; Vaswani et al. 2017, eq. 1)",
     NULL, scale_sqrt_dv},
    {"dot.softmax_over_queries",
     "the softmax was taken over the queries: each query's weights are a "
     "softmax over the keys, softmax(Q Kᵀ / √d) along the last axis, so "
     "each row of weights sums to 1 (d2l 11.3.2)",
     NULL, softmax_over_queries},
    {"dot.mask_ignored", API_EXPLAIN_MASK_IGNORED, NULL, mask_ignored},
    {"dot.nan_rows", API_EXPLAIN_NAN_ROWS, NULL, nan_rows},
    {"dot.masked_fill_1e6", API_EXPLAIN_MASKED_FILL_1E6,
     API_INSTRUCTOR_MASKED_FILL_1E6, masked_fill_1e6},
    {"dot.masked_fill_1e9",
     "masked scores were set to −1e9 and still went through the softmax: "
     "a masked key must get weight exactly 0, and a query that sees no key "
     "gets the weights the exercise asks for, all 0 unless it says "
     "otherwise; check how your code masks scores (d2l 11.3.1)",
     "a fill of −1e9 gives a query that sees no key 1/Nk for every key, as "
     "d2l's masked_softmax does: to accept that convention, grade with "
     "\"fully_masked\": \"uniform\" in the graded request",
     masked_fill_1e9},
    {"dot.valid_lens_per_query",
     "valid_lens (B) was read per query row, valid_lens.repeat(Nq) (row "
     "b·Nq + q got valid_lens[(b·Nq + q) mod B]): each example's length "
     "applies to all its queries, repeat_interleave(valid_lens, Nq) "
     "(d2l 11.3.1)",
     NULL, valid_lens_per_query},
    {"dot.valid_lens_transposed",
     "valid_lens (B, Nq) was read in column-major order, valid_lens.T "
     ".reshape(-1) (row r = b·Nq + q got valid_lens[r mod B][r div B]): "
     "valid_lens[b][q] is the length of query q of example b (d2l 11.3.1)",
     NULL, valid_lens_transposed},
    {"dot.causal_top_left",
     "the causal mask was aligned top-left (query i sees keys j ≤ i) where "
     "\"bottom_right\" was asked: query i sees keys j ≤ i + Nk − Nq "
     "(PyTorch causal_lower_right; docs/contract.md, Masking)",
     NULL, causal_top_left},
    {"dot.causal_bottom_right",
     "the causal mask was aligned bottom-right (query i sees keys j ≤ i + "
     "Nk − Nq) where top-left was asked: causal = true is PyTorch's "
     "is_causal, query i sees keys j ≤ i (PyTorch "
     "scaled_dot_product_attention; Vaswani et al. 2017, 3.2.3)",
     NULL, causal_bottom_right},
    {"dot.mask_inverted",
     "the mask was inverted, the masked keys attended to and the visible "
     "ones left out: query q of example b sees the keys j < valid_len "
     "(and j ≤ q under causal) (d2l 11.3.1)",
     NULL, mask_inverted},
    {"dot.keys_as_values",
     "the weights averaged the keys: output = softmax(Q Kᵀ / √d) V "
     "averages the values (d2l 11.3.2; Vaswani et al. 2017, eq. 1)",
     NULL, keys_as_values},
    {"dot.weights_unnormalised",
     "the weights were exp(score), not normalised: softmax divides each "
     "exp(score) by their sum over the query's visible keys, so each row "
     "of weights sums to 1 (d2l 11.3.1)",
     NULL, weights_unnormalised},
};
const size_t api_misconceptions_dot_count =
    sizeof api_misconceptions_dot / sizeof api_misconceptions_dot[0];
_Static_assert(sizeof api_misconceptions_dot /
                       sizeof api_misconceptions_dot[0] ==
                   API_MISCONCEPTIONS_DOT_N,
               "the dot catalogue's length is not API_MISCONCEPTIONS_DOT_N "
               "(misconceptions.h): change it with docs/misconceptions.md "
               "and tests/grading/catalogue_np.py");
