/*
 * dataset.c — GET /regression/nw/dataset: the textbook's synthetic
 * regression data (d2l 11.2.1; docs/contract.md section 5).
 *
 * Query parameters: n_train (integer 1 … 1000000, default 50), noise
 * (number 0 … 1e6, default 0.5), seed (integer 0 … 2^63 − 1, default 0),
 * tensor_format ("nested" | "flat"), precision (1 … 17).
 *   -> {"x_train": (n_train), "y_train": (n_train), "x_test": (50),
 *       "y_truth": (50), "n_train", "noise", "seed"}   (the last three echo
 *       the values used)
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "attn.h"
#include "call.h"
#include "limit.h"
#include "query.h"
#include "route.h"
#include "tensor.h"

#define N_TRAIN_MAX 1000000
#define NOISE_MAX 1e6

enum { P_N_TRAIN, P_NOISE, P_SEED, P_TENSOR_FORMAT, P_PRECISION, P_COUNT };

/* Checks in the contract's order: unknown names, then types (table order),
 * then ranges (table order; n_train's range is bounded by --max-elements
 * too). */
static int read_params(const api_query_param *q, int64_t *n_train,
                       double *noise, int64_t *seed, api_tensor_format *fmt,
                       size_t max_elements, api_problem *p) {
    int big_n = 0, big_noise = 0, big_seed = 0, big_prec = 0;
    int64_t prec = 0;
    *n_train = 50;
    *noise = 0.5;
    *seed = 0;
    if (q[P_N_TRAIN].value &&
        (big_n = api_query_int(&q[P_N_TRAIN], n_train, p)) < 0)
        return -1;
    if (q[P_NOISE].value &&
        (big_noise = api_query_number(&q[P_NOISE], noise, p)) < 0)
        return -1;
    if (q[P_SEED].value && (big_seed = api_query_int(&q[P_SEED], seed, p)) < 0)
        return -1;
    if (q[P_PRECISION].value &&
        (big_prec = api_query_int(&q[P_PRECISION], &prec, p)) < 0)
        return -1;

    /* a --max-elements below N_TRAIN_MAX bounds it further: a parameter's
     * range, so 422 (413 is for what a request sends) */
    size_t n_max = N_TRAIN_MAX < max_elements ? N_TRAIN_MAX : max_elements;
    if (big_n || *n_train < 1 || (uint64_t)*n_train > n_max)
        return api_fail(
            p, API_E_INVALID_VALUE, "/n_train",
            "n_train is the number of training points, 1 … %zu%s", n_max,
            n_max < N_TRAIN_MAX ? " on this server (--max-elements)" : "");
    size_t nt = ATTN_NW_DATASET_TEST;
    if (api_limit_elements("x_test", &nt, 1, max_elements, p))
        return -1;
    if (big_noise || !(*noise >= 0 && *noise <= NOISE_MAX))
        return api_fail(p, API_E_INVALID_VALUE, "/noise",
                        "noise is the standard deviation of the added "
                        "Gaussian noise, 0 … 1e6");
    if (big_seed || *seed < 0)
        return api_fail(p, API_E_INVALID_VALUE, "/seed",
                        "seed is an integer from 0 to 2^63 - 1");
    *fmt = (api_tensor_format){0};
    const char *tf = q[P_TENSOR_FORMAT].value;
    if (tf && !strcmp(tf, "flat"))
        fmt->flat = 1;
    else if (tf && strcmp(tf, "nested") != 0)
        return api_fail(p, API_E_INVALID_VALUE, "/tensor_format",
                        "tensor_format is \"nested\" (default) or \"flat\"");
    if (q[P_PRECISION].value) {
        if (big_prec || prec < 1 || prec > 17)
            return api_fail(p, API_E_INVALID_VALUE, "/precision",
                            "precision is a number of significant digits, "
                            "1 … 17");
        fmt->precision = (int)prec;
    }
    return 0;
}

/* shapes: n_train (a size_t). x_train, y_train (n_train) and x_test,
 * y_truth (ATTN_NW_DATASET_TEST) in one allocation, one sin (and one
 * noise draw) per point. */
static void cost_dataset(const api_call *call, const void *shapes,
                         api_cost *cost) {
    (void)call;
    size_t n = *(const size_t *)shapes, nt = ATTN_NW_DATASET_TEST;
    api_arena arena = {0};
    api_arena_plan(&arena, 2 * n + 2 * nt);
    api_cost_of_plan(cost, 0, &arena, api_work_mul(n + nt, API_WORK_EXP));
}

static int handle_dataset(api_call *call) {
    api_problem *p = &call->problem;
    api_query_param q[P_COUNT] = {
        [P_N_TRAIN] = {"n_train", NULL},
        [P_NOISE] = {"noise", NULL},
        [P_SEED] = {"seed", NULL},
        [P_TENSOR_FORMAT] = {"tensor_format", NULL},
        [P_PRECISION] = {"precision", NULL},
    };
    char *storage = NULL;
    int64_t n_train, seed;
    double noise;
    api_tensor_format fmt;
    int rc = api_query_parse(&storage, call->req->query, q, P_COUNT, p);
    if (rc == 0)
        rc = read_params(q, &n_train, &noise, &seed, &fmt,
                         call->limits->max_elements, p);
    free(storage);
    if (rc)
        return -1;

    size_t n = (size_t)n_train, nt = ATTN_NW_DATASET_TEST;
    if (api_route_charge(call, &n)) /* cost_dataset */
        return -1;
    api_arena arena = {0};
    api_arena_plan(&arena, 2 * n + 2 * nt);
    if (api_arena_alloc(&arena))
        return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    double *x_train = api_arena_take(&arena, n);
    double *y_train = api_arena_take(&arena, n);
    double *x_test = api_arena_take(&arena, nt);
    double *y_truth = api_arena_take(&arena, nt);

    double t0 = api_clock_ms();
    attn_status st = attn_nw_dataset(x_train, y_train, x_test, y_truth, n,
                                     noise, (uint64_t)seed);
    call->compute_ms = api_clock_ms() - t0;
    if (st != ATTN_OK) {
        api_arena_free(&arena);
        return api_fail(p, API_E_INTERNAL, NULL, "dataset failed: %s",
                        attn_status_str(st));
    }

    api_result *res = &call->result;
    api_result_init(res, &fmt, API_E_INVALID_VALUE,
                    "the result is not finite; lower noise");
    api_result_keep(res, &arena);
    api_result_tensor(res, "x_train", x_train, &n, 1);
    api_result_tensor(res, "y_train", y_train, &n, 1);
    api_result_tensor(res, "x_test", x_test, &nt, 1);
    api_result_tensor(res, "y_truth", y_truth, &nt, 1);
    api_result_integer(res, "n_train", n);
    api_result_number(res, "noise", noise)->exact = 1; /* as it was asked */
    api_result_integer(res, "seed", (uint64_t)seed);
    return 0;
}

/* The route table's entry (route.h). */
static const api_answer_field answer_fields[] = {
    {"x_train", 1, 0, 0, API_ANSWER_ALWAYS},
    {"y_train", 1, 0, 0, API_ANSWER_ALWAYS},
    {"x_test", 1, 0, 0, API_ANSWER_ALWAYS},
    {"y_truth", 1, 0, 0, API_ANSWER_ALWAYS},
    {"n_train", 0, 1, 0, API_ANSWER_ALWAYS},
    {"noise", 0, 0, 0, API_ANSWER_ALWAYS},
    {"seed", 0, 1, 0, API_ANSWER_ALWAYS},
};

static const api_answer_table answer = API_ANSWER_TABLE(answer_fields);

const api_route api_route_dataset = {
    .method = "GET",
    .path = "/regression/nw/dataset",
    .handler = handle_dataset,
    .flags = API_ROUTE_COMPUTES,
    .answer = &answer,
    .cost = cost_dataset,
};
