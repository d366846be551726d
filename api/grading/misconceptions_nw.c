/*
 * misconceptions_nw.c — the known wrong implementations of
 * /regression/nw (misconceptions.h): Nadaraya–Watson regression with the
 * Gaussian kernel exp(−½((x − xᵢ)w)²), loss Σ ½(ŷ − y)², grad_w =
 * ∂loss/∂w and gradient descent on w with leave-one-out training
 * predictions (d2l 11.2.4; seed notes §8–11; lib/nw.c).
 *
 * Every mistake is one attn_nw_variant (lib/nw_variants.h): how w
 * enters the kernel (w_eff = T(w)), how the loss is scaled, the sign of
 * the derivative, and leave-one-out. Its answer is:
 *   with fit   the trajectory run the mistaken way (attn_nw_fit_variant),
 *              from the w the route started at;
 *   then       the request again without fit, at w = T(final w), for
 *              predictions, weights, and the right loss and ∂loss/∂w_eff
 *              there, which the mistake scales (loss_scale; grad_sign ·
 *              loss_scale · T'(w)); w is the student's own, the final w.
 * Without fit and with T(w) = w the route's reference answer is rescaled
 * instead of computed again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "fields.h"
#include "invoke.h"
#include "misconceptions.h"
#include "mistake_request.h"
#include "nw_variants.h"
#include "tensor.h"

extern const api_route api_route_nw;

/* What a mistake changes (nw_variants.h), and for the loss, whether it
 * is the mean (loss_scale times 1/N, N the loss's target entries). */
typedef struct {
    attn_nw_variant v;
    int mean;
} nw_mistake;

/* The request as the route read it. */
typedef struct {
    int gaussian;
    int has_y_query;
    int has_fit;
    int rule_cv; /* w is "cv": chosen under the request's own kernel */
    size_t n, m, dv;
    int64_t epochs;
    double lr;
    attn_nw_fit_data data;
} nw_shape;

static int shape_of(nw_shape *s, api_call *call, const json_t *request) {
    memset(s, 0, sizeof *s);
    s->gaussian =
        !strcmp(api_field_string(request, "kernel", "gaussian"), "gaussian");
    s->has_y_query = api_field_value(request, "y_query") != NULL;
    const json_t *w = api_field_value(request, "w");
    s->rule_cv = json_is_string(w) && !strcmp(json_string_value(w), "cv");
    api_mistake_tensor t;
    if (api_mistake_tensor_shape(&t, call, request, "x_train") != 1)
        return -1;
    s->n = t.shape[0];
    if (api_mistake_tensor_shape(&t, call, request, "y_train") != 1)
        return -1;
    s->dv = t.rank == 2 ? t.shape[1] : 1;
    if (api_mistake_tensor_shape(&t, call, request, "x_query") != 1)
        return -1;
    s->m = t.shape[0];
    const json_t *fit = api_field_value(request, "fit");
    s->has_fit = fit != NULL;
    if (fit) {
        api_field_int(fit, "epochs", 5, &s->epochs);
        s->lr = api_field_number(fit, "lr", 0.5);
        s->data = strcmp(api_field_string(fit, "data", "train_loo"), "query")
                      ? ATTN_NW_FIT_TRAIN_LOO
                      : ATTN_NW_FIT_QUERY;
    }
    return 0;
}

/* The target entries of the fit's loss: n·dv (train_loo) or m·dv. */
static double fit_entries(const nw_shape *s) {
    return (double)(s->data == ATTN_NW_FIT_QUERY ? s->m : s->n) * (double)s->dv;
}

/* Column "w" of row 0 of the reference's history: where the fit
 * started. */
static int history_start(const api_result *reference, double *w0) {
    const api_result_item *h = api_result_find(reference, "history", 7);
    if (!h || h->kind != API_ITEM_RECORDS || h->n_rows == 0)
        return -1;
    for (size_t c = 0; c < h->n_columns; c++)
        if (!strcmp(h->columns[c].name, "w")) {
            *w0 = api_result_record_value(h, 0, c);
            return 0;
        }
    return -1;
}

/* The w the route started from: the request's number (default 1), else
 * the rule's, which the reference gives (history[0].w with fit, w
 * without). */
static int start_w(const json_t *request, const api_result *reference,
                   const nw_shape *s, double *w) {
    const json_t *given = api_field_value(request, "w");
    if (!given) {
        *w = 1.0;
        return 0;
    }
    if (json_is_number(given)) {
        *w = json_number_value(given);
        return 0;
    }
    if (s->has_fit)
        return history_start(reference, w);
    const api_result_item *it = api_result_find(reference, "w", 1);
    if (!it || it->kind != API_ITEM_NUMBER)
        return -1;
    *w = it->number;
    return 0;
}

/* The fit run the mistaken way into history (epochs rows): *w the final
 * w. Returns 0, or -1 (out of memory; the mistaken descent leaves w > 0
 * or overflows; the deadline). */
static int run_fit(api_call *call, const json_t *request, const nw_shape *s,
                   const attn_nw_variant *v, double w0, attn_nw_epoch *history,
                   double *w) {
    api_mistake_tensor t[4] = {0};
    const char *names[4] = {"x_train", "y_train", "x_query", "y_query"};
    for (int i = 0; i < (s->has_y_query ? 4 : 3); i++)
        api_mistake_tensor_read(&t[i], call, request, names[i]);
    double *xt = t[0].data, *yt = t[1].data, *xq = t[2].data, *yq = t[3].data;
    attn_status st = ATTN_E_NOMEM;
    attn_fault fault = {0};
    if (xt && yt && xq && (yq || !s->has_y_query))
        st = attn_nw_fit_variant(w, history, w0, s->lr, (size_t)s->epochs,
                                 s->data, xt, yt, xq, yq, s->n, s->m, s->dv, v,
                                 &fault);
    free(xt);
    free(yt);
    free(xq);
    free(yq);
    return st == ATTN_OK ? 0 : -1;
}

/* The request again without fit, at w = x, answered by the route. */
static int without_fit(api_call *call, const json_t *request, double x,
                       api_result *out) {
    json_t *altered = json_copy((json_t *)request);
    if (!altered)
        return -1;
    json_object_del(altered, "fit");
    int rc =
        json_object_set_new(altered, "w", json_real(x)) ||
        api_invoke_result(call, &api_route_nw, altered, call->doc, NULL, out);
    json_decref(altered);
    return rc ? -1 : 0;
}

/* history[e] as {"epoch", "w", "loss"}, as the route answers it */
static const api_record_column history_columns[] = {
    {"epoch", offsetof(attn_nw_epoch, epoch), 1},
    {"w", offsetof(attn_nw_epoch, w), 0},
    {"loss", offsetof(attn_nw_epoch, loss), 0},
};

/* Copy tensor item it (NULL: none) into arena and add it to dst under
 * its name. */
static void copy_tensor(api_result *dst, api_arena *arena,
                        const api_result_item *it) {
    if (!it || it->kind != API_ITEM_TENSOR)
        return;
    size_t count = api_result_item_count(it);
    double *data = api_arena_take(arena, count);
    memcpy(data, it->data, count * sizeof *data);
    api_result_tensor(dst, it->name, data, it->shape, it->rank);
}

/* The mistake's answer (see the top of this file). */
static int answer_as(api_call *call, const json_t *request,
                     const api_result *reference, const nw_mistake *mk,
                     api_result *wrong) {
    nw_shape s;
    double w;
    if (shape_of(&s, call, request) || start_w(request, reference, &s, &w))
        return API_MISTAKE_FAILED;
    attn_nw_variant v = mk->v;
    size_t epochs = s.has_fit ? (size_t)s.epochs : 0;
    attn_nw_epoch *history = NULL;
    if (s.has_fit) {
        if (mk->mean)
            v.loss_scale = mk->v.loss_scale / fit_entries(&s);
        history = malloc(epochs * sizeof *history);
        if (!history || run_fit(call, request, &s, &v, w, history, &w)) {
            free(history);
            return API_MISTAKE_FAILED;
        }
    }
    /* predictions, weights, loss and ∂loss/∂w_eff at the final w */
    api_result again;
    memset(&again, 0, sizeof again);
    const api_result *at = reference;
    if (s.has_fit || v.map != ATTN_NW_W_RIGHT) {
        if (without_fit(call, request, attn_nw_w_eff(v.map, w), &again)) {
            free(history);
            return API_MISTAKE_FAILED;
        }
        at = &again;
    }
    /* unchanged when the reference is only rescaled: left out */
    const api_result_item *pred =
        at == reference ? NULL : api_result_find(at, "predictions", 11);
    const api_result_item *weights =
        at == reference ? NULL : api_result_find(at, "weights", 7);
    const api_result_item *loss = api_result_find(at, "loss", 4);
    const api_result_item *grad = api_result_find(at, "grad_w", 6);
    api_arena arena = {0};
    if (pred)
        api_arena_plan(&arena, api_result_item_count(pred));
    if (weights)
        api_arena_plan(&arena, api_result_item_count(weights));
    api_arena_plan(&arena, epochs * ((sizeof(attn_nw_epoch) + 7) / 8));
    int rc = API_MISTAKE_FAILED;
    if (!api_arena_alloc(&arena)) {
        attn_nw_epoch *rows =
            epochs ? api_arena_take(&arena, epochs * ((sizeof *rows + 7) / 8))
                   : NULL;
        api_result_init(wrong, &at->fmt, API_E_INVALID_VALUE,
                        "the mistaken answer is not finite");
        api_result_keep(wrong, &arena);
        copy_tensor(wrong, &wrong->arena, pred);
        copy_tensor(wrong, &wrong->arena, weights);
        api_result_number(wrong, "w", w);
        double scale = mk->mean
                           ? mk->v.loss_scale / ((double)s.m * (double)s.dv)
                           : v.loss_scale;
        if (loss && loss->kind == API_ITEM_NUMBER)
            api_result_number(wrong, "loss", scale * loss->number);
        if (grad && grad->kind == API_ITEM_NUMBER)
            api_result_number(wrong, "grad_w",
                              v.grad_sign * scale *
                                  attn_nw_w_eff_slope(v.map, w) * grad->number);
        if (rows) {
            memcpy(rows, history, epochs * sizeof *rows);
            api_result_records(
                wrong, "history", rows, epochs, sizeof *rows, history_columns,
                sizeof history_columns / sizeof history_columns[0]);
        }
        rc = API_MISTAKE_ANSWERED;
    }
    api_result_free(&again);
    free(history);
    return rc;
}

/* ------------------------------------------------------------ entries */

static const nw_mistake right = {{ATTN_NW_W_RIGHT, 1.0, 1.0, 1}, 0};

/* A kernel mistake: Gaussian only, and not under "cv", which would pick
 * its own w for the mistaken kernel. */
static int kernel_mistake(api_call *call, const json_t *request,
                          const api_result *reference, attn_nw_w_map map,
                          api_result *wrong) {
    nw_shape s;
    double w;
    if (shape_of(&s, call, request) || start_w(request, reference, &s, &w))
        return API_MISTAKE_FAILED;
    if (!s.gaussian || s.rule_cv || (!s.has_fit && attn_nw_w_eff(map, w) == w))
        return API_MISTAKE_NOT_APPLICABLE;
    nw_mistake mk = right;
    mk.v.map = map;
    return answer_as(call, request, reference, &mk, wrong);
}

static int w_not_squared(api_call *call, const json_t *request,
                         const api_result *reference, api_result *wrong) {
    return kernel_mistake(call, request, reference, ATTN_NW_W_NOT_SQUARED,
                          wrong);
}

static int no_half_in_kernel(api_call *call, const json_t *request,
                             const api_result *reference, api_result *wrong) {
    return kernel_mistake(call, request, reference, ATTN_NW_W_NO_HALF, wrong);
}

static int no_half_in_loss(api_call *call, const json_t *request,
                           const api_result *reference, api_result *wrong) {
    nw_shape s;
    if (shape_of(&s, call, request))
        return API_MISTAKE_FAILED;
    if (!s.has_y_query && !s.has_fit)
        return API_MISTAKE_NOT_APPLICABLE; /* no loss answered or used */
    nw_mistake mk = right;
    mk.v.loss_scale = 2.0;
    return answer_as(call, request, reference, &mk, wrong);
}

/* The loss as a mean over its target entries, times loss_scale: ½ the
 * mean (loss_scale 1), or PyTorch's MSELoss, the mean without ½ (2). */
static int mean_loss_scaled(api_call *call, const json_t *request,
                            const api_result *reference, double loss_scale,
                            api_result *wrong) {
    nw_shape s;
    if (shape_of(&s, call, request))
        return API_MISTAKE_FAILED;
    int query_loss = s.has_y_query && s.m * s.dv > 1;
    int fit_loss = s.has_fit && fit_entries(&s) > 1;
    if (!query_loss && !fit_loss)
        return API_MISTAKE_NOT_APPLICABLE; /* one entry: mean = sum */
    nw_mistake mk = right;
    mk.mean = 1;
    mk.v.loss_scale = loss_scale;
    return answer_as(call, request, reference, &mk, wrong);
}

static int mean_loss(api_call *call, const json_t *request,
                     const api_result *reference, api_result *wrong) {
    return mean_loss_scaled(call, request, reference, 1.0, wrong);
}

static int mse_loss(api_call *call, const json_t *request,
                    const api_result *reference, api_result *wrong) {
    return mean_loss_scaled(call, request, reference, 2.0, wrong);
}

static int grad_sign(api_call *call, const json_t *request,
                     const api_result *reference, api_result *wrong) {
    nw_shape s;
    if (shape_of(&s, call, request))
        return API_MISTAKE_FAILED;
    const api_result_item *g = api_result_find(reference, "grad_w", 6);
    if (!s.has_fit && !(g && g->kind == API_ITEM_NUMBER && g->number != 0))
        return API_MISTAKE_NOT_APPLICABLE;
    nw_mistake mk = right;
    mk.v.grad_sign = -1.0;
    return answer_as(call, request, reference, &mk, wrong);
}

static int fit_without_leave_one_out(api_call *call, const json_t *request,
                                     const api_result *reference,
                                     api_result *wrong) {
    nw_shape s;
    if (shape_of(&s, call, request))
        return API_MISTAKE_FAILED;
    if (!s.has_fit || s.data != ATTN_NW_FIT_TRAIN_LOO)
        return API_MISTAKE_NOT_APPLICABLE;
    nw_mistake mk = right;
    mk.v.loo = 0;
    return answer_as(call, request, reference, &mk, wrong);
}

const api_misconception api_misconceptions_nw[] = {
    {"nw.w_not_squared",
     "w multiplied the squared distance, exp(−½(x − xᵢ)²·w): w scales the "
     "distance inside the square, exp(−½((x − xᵢ)w)²) (d2l 11.2.4; seed "
     "notes §8)",
     NULL, w_not_squared},
    {"nw.no_half_in_kernel",
     "the ½ was left out of the Gaussian's exponent, exp(−((x − xᵢ)w)²): the "
     "kernel is exp(−½((x − xᵢ)w)²) (d2l 11.2.4; seed notes §8)",
     NULL, no_half_in_kernel},
    {"nw.no_half_in_loss",
     "the loss was Σ(ŷ − y)², twice the right one, and so was its gradient: "
     "the loss is Σ ½(ŷ − y)², with ∂loss/∂w = Σ (ŷ − y) ∂ŷ/∂w (seed notes "
     "§11)",
     NULL, no_half_in_loss},
    {"nw.mean_loss",
     "the loss was the mean over the targets, not the sum: the loss is "
     "Σ ½(ŷ − y)², summed over every query and target entry (d2l 11.2.4 "
     "sums the losses; seed notes §11)",
     NULL, mean_loss},
    {"nw.mse_loss",
     "the loss was PyTorch's nn.MSELoss(), mean((ŷ − y)²): the mean, not "
     "the sum, and without the ½; the loss is Σ ½(ŷ − y)², summed over "
     "every query and target entry (seed notes §11; d2l 11.2.4 sums the "
     "losses)",
     NULL, mse_loss},
    {"nw.grad_sign",
     "∂loss/∂w had the wrong sign, so a fit climbed the loss: ∂loss/∂w = "
     "Σ (ŷ − y) ∂ŷ/∂w with ∂sᵢ/∂w = −(x − xᵢ)² w, and the step is w ← w − "
     "lr·∂loss/∂w (seed notes §9, §11)",
     NULL, grad_sign},
    {"nw.fit_without_leave_one_out",
     "the fit's training predictions kept each point's own kernel term, so "
     "w only grows: each training x is predicted from the other n − 1 "
     "pairs (d2l 11.2.4)",
     NULL, fit_without_leave_one_out},
};
const size_t api_misconceptions_nw_count =
    sizeof api_misconceptions_nw / sizeof api_misconceptions_nw[0];
_Static_assert(sizeof api_misconceptions_nw / sizeof api_misconceptions_nw[0] ==
                   API_MISCONCEPTIONS_NW_N,
               "the nw catalogue's length is not API_MISCONCEPTIONS_NW_N "
               "(misconceptions.h): change it with docs/misconceptions.md "
               "and tests/grading/catalogue_np.py");
