/*
 * nw.c — POST /regression/nw: Nadaraya–Watson kernel regression
 * as attention pooling (d2l 11.2; docs/contract.md section 4):
 *   ŷ(x) = Σᵢ α(x, xᵢ) yᵢ,  α = K((x − xᵢ)·w) / Σⱼ K((x − xⱼ)·w).
 *
 *   x_train (n)  y_train (n) or (n, dv)  x_query (m)  y_query (m)/(m, dv)?
 *   -> {"predictions": (m) or (m, dv), "weights": (m, n), "w": used,
 *       "loss"?, "grad_w"? (with y_query; grad_w for the Gaussian only),
 *       "history"? [{"epoch", "w", "loss"}] (with fit),
 *       "trace"? {"distances", "scores", "weights", "predictions"} (with
 *       "trace": true; after a fit, at the w it ends with; trace.h)}
 * w is a number > 0 or a bandwidth rule that picks w = 1/h from the
 * training pairs (attn_nw_bandwidth): "scott" and "silverman" (rules of
 * thumb on x_train), "cv" (least leave-one-out error with the request's
 * kernel). With fit, the rule's w is where the descent starts.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "arena.h"
#include "attn.h"
#include "call.h"
#include "fields.h"
#include "limit.h"
#include "route.h"
#include "tensor.h"
#include "trace.h"

static const api_tensor_spec x_train_spec = {"x_train", API_RANK(1), 0, "(n)",
                                             0};
static const api_tensor_spec y_train_spec = {
    "y_train", API_RANK(1) | API_RANK(2), 0, "(n) or (n, dv)", 1};
static const api_tensor_spec x_query_spec = {"x_query", API_RANK(1), 0, "(m)",
                                             0};
static const api_tensor_spec y_query_spec = {
    "y_query", API_RANK(1) | API_RANK(2), 0, "(m) or (m, dv)", 1};

static const api_field fit_fields[] = {
    {"epochs", API_FIELD_INTEGER, 0, NULL, NULL},
    {"lr", API_FIELD_NUMBER, 0, NULL, NULL},
    {"data", API_FIELD_STRING, 0, NULL, NULL},
};

static const api_schema fit_schema = {"fit", fit_fields,
                                      sizeof fit_fields / sizeof fit_fields[0]};

/* The contract's field table (docs/contract.md section 4), in its order. */
static const api_field fields[] = {
    {"x_train", API_FIELD_TENSOR, 1, &x_train_spec, NULL},
    {"y_train", API_FIELD_TENSOR, 1, &y_train_spec, NULL},
    {"x_query", API_FIELD_TENSOR, 1, &x_query_spec, NULL},
    {"kernel", API_FIELD_STRING, 0, NULL, NULL},
    {"w", API_FIELD_NUMBER_OR_STRING, 0, NULL, NULL},
    {"y_query", API_FIELD_TENSOR, 0, &y_query_spec, NULL},
    {"fit", API_FIELD_OBJECT, 0, NULL, &fit_schema},
    {"trace", API_FIELD_BOOL, 0, NULL, NULL},
    {"tensor_format", API_FIELD_STRING, 0, NULL, NULL},
    {"precision", API_FIELD_INTEGER, 0, NULL, NULL},
};

static const api_schema schema = {"/regression/nw", fields,
                                  sizeof fields / sizeof fields[0]};

static const struct {
    const char *name;
    attn_kernel kernel;
} kernels[] = {
    {"gaussian", ATTN_KERNEL_GAUSSIAN},
    {"constant", ATTN_KERNEL_CONSTANT},
    {"boxcar", ATTN_KERNEL_BOXCAR},
    {"epanechnikov", ATTN_KERNEL_EPANECHNIKOV},
    {"triangular", ATTN_KERNEL_TRIANGULAR},
};

static const struct {
    const char *name;
    attn_nw_bw_rule rule;
} rules[] = {
    {"scott", ATTN_NW_BW_SCOTT},
    {"silverman", ATTN_NW_BW_SILVERMAN},
    {"cv", ATTN_NW_BW_CV},
};

#define FIT_EPOCHS_MAX 100000

/* Leave-one-out evaluations "cv" may make: 200 grid points, then a
 * golden-section search between the best point's neighbours down to a
 * relative 1e-6; the widest bracket x's doubles allow (grid steps of
 * ln(2000 · range / gap) / 199 with range / gap below 2^2100) needs at
 * most 62 more. */
#define NW_CV_EVALS 262

/* Operations counted for one kernel value of a compact kernel (|u|, a
 * comparison, 1 − u²); the Gaussian's exp counts API_WORK_EXP. */
#define NW_COMPACT_KERNEL_OPS 3

typedef struct {
    api_tensor x_train, y_train, x_query, y_query;
    int has_y_query;
    size_t n, m, dv;
    attn_kernel kernel;
    double w;
    int has_rule; /* 1: w is chosen by bw_rule from the training pairs */
    attn_nw_bw_rule bw_rule;
    const char *rule_name; /* "scott", "silverman" or "cv" */
    int fit;
    int64_t epochs;
    double lr;
    attn_nw_fit_data data;
    api_tensor_format fmt;
} nw_request;

/* fit.data "query" needs y_query: missing_field at /y_query. */
static int check_fit_needs(const json_t *body, api_problem *p) {
    const json_t *fit = api_field_value(body, "fit");
    if (!json_is_object(fit))
        return 0;
    const char *data = api_field_string(fit, "data", "train_loo");
    if (!strcmp(data, "query") && !api_field_value(body, "y_query"))
        return api_fail(p, API_E_MISSING_FIELD, "/y_query",
                        "fit with \"data\": \"query\" learns w on (x_query, "
                        "y_query): give y_query, or use \"train_loo\"");
    return 0;
}

static int decode_tensors(nw_request *r, const api_fastpath *doc,
                          const json_t *body, size_t max, api_problem *p) {
    int present;
    if (api_field_tensor(&r->x_train, &present, doc, body, "x_train",
                         &x_train_spec, max, p) ||
        api_field_tensor(&r->y_train, &present, doc, body, "y_train",
                         &y_train_spec, max, p) ||
        api_field_tensor(&r->x_query, &present, doc, body, "x_query",
                         &x_query_spec, max, p) ||
        api_field_tensor(&r->y_query, &r->has_y_query, doc, body, "y_query",
                         &y_query_spec, max, p))
        return -1;
    return 0;
}

static int cross_shapes(nw_request *r, api_problem *p) {
    r->n = r->x_train.shape[0];
    r->m = r->x_query.shape[0];
    const api_tensor *yt = &r->y_train, *yq = &r->y_query;
    long long e[2] = {(long long)r->n, -1};
    if (yt->shape[0] != r->n) {
        api_fail(p, API_E_SHAPE_MISMATCH, "/y_train",
                 "y_train has %zu %s but x_train has %zu %s: one target "
                 "per training point",
                 yt->shape[0], api_plural(yt->shape[0], "row", "rows"), r->n,
                 api_plural(r->n, "point", "points"));
        api_problem_shapes_z(p, e, yt->rank, yt->shape, yt->rank);
        return -1;
    }
    r->dv = yt->rank == 2 ? yt->shape[1] : 1;
    if (!r->has_y_query)
        return 0;
    long long eq[2] = {(long long)r->m, (long long)r->dv};
    if (yq->rank != yt->rank || yq->shape[0] != r->m ||
        (yq->rank == 2 && yq->shape[1] != r->dv)) {
        if (yt->rank == 2)
            api_fail(p, API_E_SHAPE_MISMATCH, "/y_query",
                     "y_query holds one target per query, shaped like "
                     "y_train: (m, dv) = (%zu, %zu)",
                     r->m, r->dv);
        else
            api_fail(p, API_E_SHAPE_MISMATCH, "/y_query",
                     "y_query holds one target per query, shaped like "
                     "y_train: (m) = (%zu)",
                     r->m);
        api_problem_shapes_z(p, eq, yt->rank, yq->shape, yq->rank);
        return -1;
    }
    return 0;
}

/* w as a bandwidth rule's name: which rule, and whether it can be applied
 * to x_train (read into x_train). */
static int read_rule(nw_request *r, const char *name, const char *kname,
                     const double *x_train, api_problem *p) {
    size_t k = 0, nr = sizeof rules / sizeof rules[0];
    while (k < nr && strcmp(rules[k].name, name) != 0)
        k++;
    if (k == nr)
        return api_fail(p, API_E_INVALID_VALUE, "/w",
                        "w is a number > 0 (the inverse bandwidth) or the "
                        "name of a bandwidth rule: \"scott\", \"silverman\" "
                        "or \"cv\"; got \"%.40s\"",
                        name);
    r->has_rule = 1;
    r->bw_rule = rules[k].rule;
    r->rule_name = rules[k].name;
    if (r->bw_rule == ATTN_NW_BW_CV && r->kernel == ATTN_KERNEL_CONSTANT)
        return api_fail(p, API_E_INVALID_VALUE, "/w",
                        "\"cv\" picks the bandwidth with the least "
                        "leave-one-out error, but the %s kernel ignores the "
                        "bandwidth: give a number, or another kernel",
                        kname);
    size_t i = 1;
    while (i < r->n && x_train[i] == x_train[0])
        i++;
    if (i == r->n)
        return api_fail(p, API_E_INVALID_VALUE, "/w",
                        "the bandwidth rule \"%s\" measures the spread of "
                        "x_train, which needs at least 2 distinct points; "
                        "x_train has %s",
                        rules[k].name,
                        r->n == 1 ? "one point" : "one value repeated");
    return 0;
}

/* Table order: kernel, w, fit, tensor_format, precision. x_train holds the
 * training points (a rule needs them). */
static int read_values(nw_request *r, const json_t *body, const double *x_train,
                       api_problem *p) {
    const char *kname = api_field_string(body, "kernel", "gaussian");
    size_t k = 0, nk = sizeof kernels / sizeof kernels[0];
    while (k < nk && strcmp(kernels[k].name, kname) != 0)
        k++;
    if (k == nk)
        return api_fail(p, API_E_INVALID_VALUE, "/kernel",
                        "kernel is \"gaussian\" (default), \"constant\", "
                        "\"boxcar\", \"epanechnikov\" or \"triangular\"; got "
                        "\"%.40s\"",
                        kname);
    r->kernel = kernels[k].kernel;

    const json_t *w = api_field_value(body, "w");
    if (json_is_string(w)) {
        if (read_rule(r, api_field_string(body, "w", ""), kname, x_train, p))
            return -1;
    } else {
        r->w = w ? json_number_value(w) : 1.0;
        if (!(isfinite(r->w) && r->w > 0))
            return api_fail(p, API_E_INVALID_VALUE, "/w",
                            "w scales distances, (x − xᵢ)·w: a finite "
                            "number > 0, or a bandwidth rule (\"scott\", "
                            "\"silverman\", \"cv\")");
    }

    const json_t *fit = api_field_value(body, "fit");
    r->fit = fit != NULL;
    if (fit) {
        if (r->kernel != ATTN_KERNEL_GAUSSIAN)
            return api_fail(p, API_E_INVALID_VALUE, "/fit",
                            "fit learns w by gradient descent, which needs "
                            "the gaussian kernel; got \"%s\"",
                            kname);
        if (api_field_int(fit, "epochs", 5, &r->epochs) || r->epochs < 1 ||
            r->epochs > FIT_EPOCHS_MAX)
            return api_fail(p, API_E_INVALID_VALUE, "/fit/epochs",
                            "fit.epochs is 1 … %d", FIT_EPOCHS_MAX);
        r->lr = api_field_number(fit, "lr", 0.5);
        if (!(isfinite(r->lr) && r->lr > 0))
            return api_fail(p, API_E_INVALID_VALUE, "/fit/lr",
                            "fit.lr is the step size, a finite number > 0");
        const char *data = api_field_string(fit, "data", "train_loo");
        if (!strcmp(data, "train_loo"))
            r->data = ATTN_NW_FIT_TRAIN_LOO;
        else if (!strcmp(data, "query"))
            r->data = ATTN_NW_FIT_QUERY;
        else
            return api_fail(p, API_E_INVALID_VALUE, "/fit/data",
                            "fit.data is \"train_loo\" (default: each "
                            "training x queries the others) or \"query\"");
        if (r->data == ATTN_NW_FIT_TRAIN_LOO && r->n < 2)
            return api_fail(p, API_E_INVALID_VALUE, "/x_train",
                            "fit on \"train_loo\" leaves one training pair "
                            "out at a time, so it needs at least 2; x_train "
                            "has %zu",
                            r->n);
    }
    return api_tensor_format_read(&r->fmt, body, p);
}

/* Estimated work of "w": "cv": NW_CV_EVALS leave-one-out evaluations of
 * n·n kernel terms, each a kernel value (API_WORK_EXP for the Gaussian's
 * exp, NW_COMPACT_KERNEL_OPS otherwise; an unknown kernel counts as the
 * Gaussian) and 1 + dv multiply-adds. "scott" and "silverman" sort x_train
 * once, which is not counted. */
static uint64_t estimate_cv_work(const nw_request *r, const json_t *body) {
    const char *w = api_field_string(body, "w", "");
    if (!json_is_string(api_field_value(body, "w")) || strcmp(w, "cv") != 0)
        return 0;
    const char *kname = api_field_string(body, "kernel", "gaussian");
    int compact = !strcmp(kname, "boxcar") || !strcmp(kname, "epanechnikov") ||
                  !strcmp(kname, "triangular") || !strcmp(kname, "constant");
    uint64_t term = api_work_add(compact ? NW_COMPACT_KERNEL_OPS : API_WORK_EXP,
                                 api_work_add(1, r->dv));
    return api_work_mul(api_work_mul(NW_CV_EVALS, api_work_mul(r->n, r->n)),
                        term);
}

/* Estimated work (docs/contract.md "Limits"): m·n kernel terms per
 * evaluation; a fit adds one evaluation of its data (n·n for train_loo,
 * m·n for query) per epoch; a "cv" bandwidth adds estimate_cv_work. Each
 * term of an evaluation counts as the Gaussian's exp (API_WORK_EXP) and
 * 1 + dv multiply-adds, as in cv: a fit of 290 points and 100000 epochs
 * (84 G terms, 94 s) is refused up front rather than cut at
 * --compute-timeout. */
static uint64_t estimate_work(const nw_request *r, const json_t *body) {
    uint64_t evals = r->has_y_query ? 2 : 1;
    const uint64_t term = api_work_add(API_WORK_EXP, api_work_add(1, r->dv));
    uint64_t work =
        api_work_mul(api_work_mul(api_work_mul(r->m, r->n), evals), term);
    work = api_work_add(work, estimate_cv_work(r, body));
    const json_t *fit = api_field_value(body, "fit");
    if (json_is_object(fit)) {
        int64_t epochs = 5;
        /* beyond int64 it is no count of work (refused at /fit/epochs) */
        if (api_field_int(fit, "epochs", 5, &epochs))
            epochs = 0;
        const char *data = api_field_string(fit, "data", "train_loo");
        uint64_t fit_m = !strcmp(data, "query") ? r->m : r->n;
        uint64_t fit_terms = api_work_mul(api_work_mul(fit_m, r->n),
                                          epochs > 0 ? (uint64_t)epochs : 0);
        work = api_work_add(work, api_work_mul(fit_terms, term));
    }
    return work;
}

/* The failed step of a fit (fault->index = its epoch, from 1): what it
 * was, and the largest lr that keeps w > 0 when a double can hold it. */
static int bad_step(const attn_nw_epoch *e, double lr, api_problem *p) {
    double next = e->w - lr * e->grad_w;
    if (!(e->grad_w > 0.0) || !isfinite(next))
        return api_fail(p, API_E_INVALID_VALUE, "/fit/lr",
                        "epoch %zu's step w - lr * dloss/dw = %.6g - %.6g * "
                        "%.6g is not finite: lower fit.lr",
                        e->epoch, e->w, lr, e->grad_w);
    double lr_max = e->w / e->grad_w;
    if (!(lr_max > 0.0))
        return api_fail(p, API_E_INVALID_VALUE, "/fit/lr",
                        "epoch %zu's step w - lr * dloss/dw = %.6g - %.6g * "
                        "%.6g makes w <= 0, and at this scale no double lr "
                        "is small enough: scale x_train and x_query to unit "
                        "size (w scales inversely)",
                        e->epoch, e->w, lr, e->grad_w);
    return api_fail(p, API_E_INVALID_VALUE, "/fit/lr",
                    "epoch %zu's step w - lr * dloss/dw = %.6g - %.6g * %.6g "
                    "makes w <= 0: an lr below %.3g keeps w > 0 (the fit is "
                    "plain gradient descent, d2l 11.2.4)",
                    e->epoch, e->w, lr, e->grad_w, lr_max);
}

static int nw_fault(const nw_request *r, attn_status st,
                    const attn_fault *fault, const attn_nw_epoch *history,
                    api_problem *p) {
    api_pointer ptr;
    switch (st) {
    case ATTN_OK:
        return 0;
    case ATTN_E_ZERO_MASS:
        api_tensor_entry_pointer(&ptr, "/x_query", &r->x_query, fault->index);
        return api_fail(p, API_E_INVALID_VALUE, ptr.s,
                        "query %zu has zero kernel mass: every training "
                        "point is outside the kernel's support; use a "
                        "smaller w or the gaussian kernel",
                        fault->index);
    case ATTN_E_BAD_STEP:
        return bad_step(&history[fault->index - 1], r->lr, p);
    case ATTN_E_TOO_FEW:
        return api_fail(p, API_E_INVALID_VALUE, "/x_train",
                        "fit on \"train_loo\" needs at least 2 training "
                        "pairs");
    case ATTN_E_NONFINITE:
        return api_fail(p, API_E_INVALID_VALUE, NULL,
                        "the result is not finite (a value overflowed a "
                        "double); scale the inputs down");
    case ATTN_E_DEADLINE:
        return api_limit_deadline_passed(p);
    default:
        return api_fail(p, API_E_INTERNAL, NULL, "regression failed: %s",
                        attn_status_str(st));
    }
}

/* A bandwidth rule's failure: the rule's arithmetic overflowed (x_train's
 * spread beyond a double, or a bandwidth whose inverse is not finite). */
static int bandwidth_fault(const nw_request *r, attn_status st,
                           api_problem *p) {
    switch (st) {
    case ATTN_OK:
        return 0;
    case ATTN_E_TOO_FEW: /* read_rule checked this first */
    case ATTN_E_NONFINITE:
        return api_fail(p, API_E_INVALID_VALUE, "/w",
                        "the bandwidth rule \"%s\" gives no finite w > 0 for "
                        "this x_train (its spread overflows a double or is "
                        "too small); give w as a number",
                        r->rule_name);
    case ATTN_E_DEADLINE:
        return api_limit_deadline_passed(p);
    default:
        return api_fail(p, API_E_INTERNAL, NULL, "bandwidth rule failed: %s",
                        attn_status_str(st));
    }
}

/* history[e] as {"epoch", "w", "loss"} */
static const api_record_column history_columns[] = {
    {"epoch", offsetof(attn_nw_epoch, epoch), 1},
    {"w", offsetof(attn_nw_epoch, w), 0},
    {"loss", offsetof(attn_nw_epoch, loss), 0},
};

/* The typed answer (result.h); loss, grad_w and history when computed. */
static void fill_answer(const nw_request *r, api_result *res, api_arena *arena,
                        const double *pred, const double *weights,
                        const double *loss, const double *grad_w,
                        const attn_nw_epoch *history) {
    size_t sp[2] = {r->m, r->dv}, sw[2] = {r->m, r->n};
    api_result_init(res, &r->fmt, API_E_INVALID_VALUE,
                    "the result is not finite (a value overflowed a "
                    "double); scale the inputs down");
    api_result_keep(res, arena);
    api_result_tensor(res, "predictions", pred, sp, r->y_train.rank);
    api_result_tensor(res, "weights", weights, sw, 2);
    api_result_number(res, "w", r->w);
    if (loss)
        api_result_number(res, "loss", *loss);
    if (grad_w)
        api_result_number(res, "grad_w", *grad_w);
    if (history)
        api_result_records(res, "history", history, (size_t)r->epochs,
                           sizeof *history, history_columns,
                           sizeof history_columns / sizeof history_columns[0]);
    /* Accept: image/svg+xml → the weights (m, n) as a heatmap */
    api_result_heatmap(res, "Nadaraya–Watson attention weights", weights, 1, 1,
                       r->m, r->n);
}

/* The epochs the history holds: fit's "epochs" when in range (read_values
 * refuses it otherwise), else none. */
static size_t history_epochs(const json_t *body) {
    int64_t epochs = 0;
    const json_t *fit = api_field_value(body, "fit");
    if (fit)
        api_field_int(fit, "epochs", 5, &epochs);
    return epochs < 1 || epochs > FIT_EPOCHS_MAX ? 0 : (size_t)epochs;
}

/* The request's allocation: the inputs x_train, y_train, x_query,
 * y_query, then predictions, weights and the history of epochs epochs
 * (*history_slots of the plan), then a trace's distances and scores
 * (trace.h). */
static void plan(const nw_request *r, size_t epochs, int trace,
                 api_arena *arena, size_t *history_slots) {
    *history_slots = epochs * ((sizeof(attn_nw_epoch) + 7) / 8);
    api_arena_plan(arena, r->n);
    api_arena_plan(arena, r->n * r->dv);
    api_arena_plan(arena, r->m);
    api_arena_plan(arena, r->has_y_query ? r->m * r->dv : 0);
    api_arena_plan(arena, r->m * r->dv);
    api_arena_plan(arena, r->m * r->n);
    api_arena_plan(arena, *history_slots);
    api_trace_nw_plan(trace, r->m, r->n, arena);
}

/* shapes: the nw_request, tensors decoded; the body gives "w" and "fit"
 * (estimate_work). */
static void cost_nw(const api_call *call, const void *shapes, api_cost *cost) {
    const nw_request *r = shapes;
    size_t history_slots;
    api_arena arena = {0};
    int trace = api_trace_asked(call->body);
    plan(r, history_epochs(call->body), trace, &arena, &history_slots);
    size_t inputs =
        r->n * (1 + r->dv) + r->m * (r->has_y_query ? 1 + r->dv : 1);
    api_cost_of_plan(cost, inputs, &arena, estimate_work(r, call->body));
    api_trace_nw_cost(trace, r->m, r->n, r->dv, cost);
}

/* The request's one allocation, carved: its inputs (read from the
 * request), predictions, weights, the history of a fit and a trace's
 * buffers; then what the passes answer besides them. */
typedef struct {
    api_arena arena;
    double *x_train, *y_train, *x_query, *y_query, *pred, *weights;
    attn_nw_epoch *history; /* NULL without fit */
    api_trace_nw trace;
    double loss, grad_w;
} nw_buffers;

/* Step 5: one allocation (plan's order), the inputs read into it.
 * Returns 0, or -1 with p set and nothing held. */
static int prepare(nw_buffers *b, const nw_request *r, const json_t *body,
                   api_problem *p) {
    size_t epochs = history_epochs(body), history_slots = 0;
    api_arena *arena = &b->arena;
    plan(r, epochs, b->trace.on, arena, &history_slots);
    if (api_arena_alloc(arena))
        return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    b->x_train = api_arena_take(arena, r->n);
    b->y_train = api_arena_take(arena, r->n * r->dv);
    b->x_query = api_arena_take(arena, r->m);
    b->y_query = r->has_y_query ? api_arena_take(arena, r->m * r->dv) : NULL;
    b->pred = api_arena_take(arena, r->m * r->dv);
    b->weights = api_arena_take(arena, r->m * r->n);
    b->history = epochs ? api_arena_take(arena, history_slots) : NULL;
    api_trace_nw_take(&b->trace, r->m, r->n, arena);
    api_tensor_read(b->x_train, &r->x_train);
    api_tensor_read(b->y_train, &r->y_train);
    api_tensor_read(b->x_query, &r->x_query);
    if (b->y_query)
        api_tensor_read(b->y_query, &r->y_query);
    return 0;
}

/* Step 7: w from its rule, fit w (gaussian), then predict (and loss) at
 * it, timed in call->compute_ms. Returns -1 with p set when the rule
 * cannot choose w (bandwidth_fault; the time then unset), else 0 with
 * *st the passes' status. */
static int compute(api_call *call, nw_request *r, nw_buffers *b,
                   attn_fault *fault, attn_status *st, api_problem *p) {
    double h;
    int gaussian = r->kernel == ATTN_KERNEL_GAUSSIAN;
    api_call_inputs_read(call);
    double t0 = api_clock_ms();
    *st = ATTN_OK;
    if (r->has_rule) {
        *st = attn_nw_bandwidth(&h, &r->w, b->x_train, b->y_train, r->kernel,
                                r->bw_rule, r->n, r->dv);
        if (bandwidth_fault(r, *st, p))
            return -1;
    }
    if (r->fit)
        *st = attn_nw_fit(&r->w, b->history, r->w, r->lr, (size_t)r->epochs,
                          r->data, b->x_train, b->y_train, b->x_query,
                          b->y_query, r->n, r->m, r->dv, fault);
    if (*st == ATTN_OK)
        *st = attn_nw_predict(b->pred, b->weights, b->x_query, b->x_train,
                              b->y_train, r->kernel, r->w, r->m, r->n, r->dv,
                              fault);
    if (*st == ATTN_OK && b->trace.on) /* at the w predicted with */
        *st = attn_nw_trace(b->trace.distances, b->trace.scores, b->x_query,
                            b->x_train, r->kernel, r->w, r->m, r->n);
    if (*st == ATTN_OK && b->y_query)
        *st = attn_nw_loss(&b->loss, gaussian ? &b->grad_w : NULL, b->x_query,
                           b->y_query, b->x_train, b->y_train, r->kernel, r->w,
                           r->m, r->n, r->dv, fault);
    call->compute_ms = api_clock_ms() - t0;
    return 0;
}

static int handle_nw(api_call *call) {
    api_problem *p = &call->problem;
    const json_t *body = call->body;
    const api_fastpath *doc = call->doc;
    size_t max_elements = call->limits->max_elements;
    nw_request r;
    memset(&r, 0, sizeof r);

    /* 1. unknown_field, missing_field (fit on "query" needs y_query),
     * wrong_type */
    if (api_fields_unknown(body, &schema, "", p) ||
        api_fields_missing(body, &schema, "", p) || check_fit_needs(body, p) ||
        api_fields_types(doc, body, &schema, "", p))
        return -1;
    /* 2. tensors in table order; 3. cross-field shapes */
    if (decode_tensors(&r, doc, body, max_elements, p) || cross_shapes(&r, p))
        return -1;
    /* 4. derived sizes and work */
    size_t sw[2] = {r.m, r.n}, sp[2] = {r.m, r.dv};
    nw_buffers b;
    memset(&b, 0, sizeof b);
    b.trace = (api_trace_nw){api_trace_asked(body), NULL, NULL};
    if (api_limit_elements("weights", sw, 2, max_elements, p) ||
        api_limit_elements("predictions", sp, 2, max_elements, p) ||
        api_route_charge(call, &r)) /* cost_nw */
        return -1;
    /* 5. one allocation, inputs read */
    if (prepare(&b, &r, body, p))
        return -1;
    /* 6. remaining values */
    if (read_values(&r, body, b.x_train, p)) {
        api_arena_free(&b.arena);
        return -1;
    }
    /* 7. compute; 8. answer */
    attn_fault fault = {0};
    attn_status st;
    if (compute(call, &r, &b, &fault, &st, p) ||
        nw_fault(&r, st, &fault, b.history, p)) {
        api_arena_free(&b.arena);
        return -1;
    }
    int gaussian = r.kernel == ATTN_KERNEL_GAUSSIAN;
    fill_answer(&r, &call->result, &b.arena, b.pred, b.weights,
                b.y_query ? &b.loss : NULL,
                b.y_query && gaussian ? &b.grad_w : NULL, b.history);
    api_trace_nw_answer(&b.trace, &call->result, b.weights, b.pred, r.m, r.n,
                        sp, r.y_train.rank);
    return 0;
}

/* The route table's entry (route.h). */
static const api_answer_field answer_fields[] = {
    {"predictions", 1, 0, 0, API_ANSWER_ALWAYS},
    {"weights", 2, 0, 0, API_ANSWER_ALWAYS},
    {"w", 0, 0, 0, API_ANSWER_ALWAYS},
    {"loss", 0, 0, 0, "y_query"},
    {"grad_w", 0, 0, 0, "y_query with the gaussian kernel"},
    {"history.epoch", 1, 0, 1, "fit"},
    {"history.w", 1, 0, 1, "fit"},
    {"history.loss", 1, 0, 1, "fit"},
    {"trace.distances", 2, 0, 0, API_ANSWER_TRACE},
    {"trace.scores", 2, 0, 0, API_ANSWER_TRACE},
    {"trace.weights", 2, 0, 0, API_ANSWER_TRACE},
    {"trace.predictions", 1, 0, 0, API_ANSWER_TRACE},
};

static const api_answer_table answer = API_ANSWER_TABLE(answer_fields);

const api_route api_route_nw = {
    .method = "POST",
    .path = "/regression/nw",
    .handler = handle_nw,
    .flags = API_ROUTE_JSON_BODY | API_ROUTE_VARY_ACCEPT | API_ROUTE_COMPUTES,
    .request = &schema,
    .answer = &answer,
    .model = "regression_nw",
    .cost = cost_nw,
};
