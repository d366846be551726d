/*
 * posenc.c — GET /encoding/positional: the sinusoidal positional
 * encoding (d2l 11.6.3; Vaswani et al. 2017, section 3.5; docs/contract.md
 * section 10): P[i, 2j] = sin(i / 10000^(2j/D)),  P[i, 2j+1] = cos(i /
 * 10000^(2j/D)), for positions i = 0 … num_steps − 1; an odd D ends with a sine
 * column.
 *
 * Query parameters: num_steps (integer ≥ 1, required), d (integer ≥ 1,
 * required), tensor_format ("nested" | "flat"), precision (1 … 17).
 *   -> {"P": (num_steps, d)}
 * Checked like body fields (docs/contract.md "Query parameters of GET routes"):
 * unknown -> unknown_field, absent -> missing_field, empty or not an
 * integer -> wrong_type, out of range -> invalid_value, pointer /<name>;
 * P over --max-elements -> 413 before tensor_format and precision.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "attn.h"
#include "call.h"
#include "limit.h"
#include "query.h"
#include "route.h"
#include "tensor.h"

enum { P_NUM_STEPS, P_D, P_TENSOR_FORMAT, P_PRECISION, P_COUNT };

typedef struct {
    size_t num_steps, d;
    api_tensor_format fmt;
} posenc_request;

/* missing_field for a required parameter that is absent. */
static int require(const api_query_param *q, api_problem *p) {
    if (q->value)
        return 0;
    char pointer[64];
    snprintf(pointer, sizeof pointer, "/%s", q->name);
    return api_fail(p, API_E_MISSING_FIELD, pointer,
                    "/encoding/positional needs the query parameter %s "
                    "(e.g. ?num_steps=60&d=32)",
                    q->name);
}

/* A dimension: an integer 1 … 2^63 − 1 (its product with the other is
 * bounded by --max-elements afterwards). */
static int dimension(const api_query_param *q, int big, int64_t v,
                     const char *what, api_problem *p, size_t *out) {
    if (!big && v >= 1 && (uint64_t)v <= SIZE_MAX) {
        *out = (size_t)v;
        return 0;
    }
    char pointer[64];
    snprintf(pointer, sizeof pointer, "/%s", q->name);
    return api_fail(p, API_E_INVALID_VALUE, pointer,
                    "%s is %s, an integer from 1 to 2^63 - 1 (and the size of "
                    "P within --max-elements)",
                    q->name, what);
}

/* shapes: the posenc_request (num_steps, d). One sin or cos per entry
 * of P (num_steps, d), the one allocation. */
static void cost_posenc(const api_call *call, const void *shapes,
                        api_cost *cost) {
    (void)call;
    const posenc_request *r = shapes;
    size_t dims[2] = {r->num_steps, r->d};
    api_arena arena = {0};
    api_arena_plan(&arena, r->num_steps * r->d);
    api_cost_of_plan(cost, 0, &arena,
                     api_work_mul(api_work_prod(dims, 2), API_WORK_EXP));
}

/* Checks in the contract's order over all parameters: missing, then types
 * (table order), then ranges (table order), the size of P, then
 * tensor_format and precision. */
static int read_params(const api_query_param *q, posenc_request *r,
                       api_call *call, api_problem *p) {
    int64_t steps = 0, d = 0, prec = 0;
    int big_steps = 0, big_d = 0, big_prec = 0;
    if (require(&q[P_NUM_STEPS], p) || require(&q[P_D], p))
        return -1;
    if ((big_steps = api_query_int(&q[P_NUM_STEPS], &steps, p)) < 0 ||
        (big_d = api_query_int(&q[P_D], &d, p)) < 0)
        return -1;
    if (q[P_PRECISION].value &&
        (big_prec = api_query_int(&q[P_PRECISION], &prec, p)) < 0)
        return -1;

    if (dimension(&q[P_NUM_STEPS], big_steps, steps,
                  "the number of positions (rows of P)", p, &r->num_steps) ||
        dimension(&q[P_D], big_d, d, "the encoding dimension (columns of P)", p,
                  &r->d))
        return -1;
    /* the size of P, then the cost (cost_posenc) */
    size_t dims[2] = {r->num_steps, r->d};
    if (api_limit_elements("P", dims, 2, call->limits->max_elements, p) ||
        api_route_charge(call, r))
        return -1;

    r->fmt = (api_tensor_format){0};
    const char *tf = q[P_TENSOR_FORMAT].value;
    if (tf && !strcmp(tf, "flat"))
        r->fmt.flat = 1;
    else if (tf && strcmp(tf, "nested") != 0)
        return api_fail(p, API_E_INVALID_VALUE, "/tensor_format",
                        "tensor_format is \"nested\" (default) or \"flat\"");
    if (q[P_PRECISION].value) {
        if (big_prec || prec < 1 || prec > 17)
            return api_fail(p, API_E_INVALID_VALUE, "/precision",
                            "precision is a number of significant digits, "
                            "1 … 17");
        r->fmt.precision = (int)prec;
    }
    return 0;
}

static int handle_posenc(api_call *call) {
    api_problem *p = &call->problem;
    api_query_param q[P_COUNT] = {
        [P_NUM_STEPS] = {"num_steps", NULL},
        [P_D] = {"d", NULL},
        [P_TENSOR_FORMAT] = {"tensor_format", NULL},
        [P_PRECISION] = {"precision", NULL},
    };
    char *storage = NULL;
    posenc_request r;
    memset(&r, 0, sizeof r);
    int rc = api_query_parse(&storage, call->req->query, q, P_COUNT, p);
    if (rc == 0)
        rc = read_params(q, &r, call, p);
    free(storage);
    if (rc)
        return -1;

    api_arena arena = {0};
    api_arena_plan(&arena, r.num_steps * r.d);
    if (api_arena_alloc(&arena))
        return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    double *P = api_arena_take(&arena, r.num_steps * r.d);

    double t0 = api_clock_ms();
    attn_status st = attn_posenc_sinusoidal(P, r.num_steps, r.d);
    call->compute_ms = api_clock_ms() - t0;
    if (st != ATTN_OK) {
        api_arena_free(&arena);
        return api_fail(p, API_E_INTERNAL, NULL,
                        "positional encoding failed: %s", attn_status_str(st));
    }

    size_t shape[2] = {r.num_steps, r.d};
    api_result *res = &call->result;
    api_result_init(res, &r.fmt, API_E_INTERNAL,
                    "an entry of P is not a finite number in [-1, 1]");
    api_result_keep(res, &arena);
    api_result_tensor(res, "P", P, shape, 2);
    return 0;
}

/* The route table's entry (route.h). */
static const api_answer_field answer_fields[] = {
    {"P", 2, 0, 0, API_ANSWER_ALWAYS},
};

static const api_answer_table answer = API_ANSWER_TABLE(answer_fields);

const api_route api_route_posenc = {
    .method = "GET",
    .path = "/encoding/positional",
    .handler = handle_posenc,
    .flags = API_ROUTE_COMPUTES,
    .answer = &answer,
    .cost = cost_posenc,
};
