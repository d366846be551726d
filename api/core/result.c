/*
 * result.c — a route's typed answer: building it, finding its items and
 * checking that each prints (see result.h).
 */
#include "result.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include "numfmt.h"

void api_result_init(api_result *r, const api_tensor_format *fmt,
                     api_error fail_code, const char *fail_detail) {
    /* all but the items, which add() zeroes as they are taken: 11 KB less
     * to clear per request */
    _Static_assert(offsetof(api_result, items) == 0, "items come first");
    memset((char *)r + sizeof r->items, 0, sizeof *r - sizeof r->items);
    r->fmt = *fmt;
    r->fail_code = fail_code;
    r->fail_detail = fail_detail;
}

void api_result_keep(api_result *r, api_arena *arena) {
    api_arena_free(&r->arena);
    r->arena = *arena;
    memset(arena, 0, sizeof *arena);
}

static api_result_item *add(api_result *r, const char *name,
                            api_item_kind kind) {
    if (r->n == API_RESULT_ITEMS_MAX) { /* api_result_check fails it */
        r->overflow = 1;
        memset(&r->spare, 0, sizeof r->spare);
        return &r->spare;
    }
    api_result_item *it = &r->items[r->n++];
    memset(it, 0, sizeof *it);
    it->name = name;
    it->kind = kind;
    return it;
}

api_result_item *api_result_tensor(api_result *r, const char *name,
                                   const double *data, const size_t *shape,
                                   size_t rank) {
    api_result_item *it = add(r, name, API_ITEM_TENSOR);
    it->data = data;
    it->rank = rank < API_SHAPE_MAX ? rank : API_SHAPE_MAX;
    memcpy(it->shape, shape, it->rank * sizeof *shape);
    return it;
}

api_result_item *api_result_number(api_result *r, const char *name, double x) {
    api_result_item *it = add(r, name, API_ITEM_NUMBER);
    it->number = x;
    return it;
}

api_result_item *api_result_null(api_result *r, const char *name) {
    api_result_item *it = add(r, name, API_ITEM_NUMBER);
    it->is_null = 1;
    return it;
}

api_result_item *api_result_integer(api_result *r, const char *name,
                                    uint64_t x) {
    api_result_item *it = add(r, name, API_ITEM_INTEGER);
    it->integer = x;
    return it;
}

api_result_item *api_result_records(api_result *r, const char *name,
                                    const void *rows, size_t n_rows,
                                    size_t stride,
                                    const api_record_column *columns,
                                    size_t n_columns) {
    api_result_item *it = add(r, name, API_ITEM_RECORDS);
    it->rows = rows;
    it->n_rows = n_rows;
    it->stride = stride;
    it->columns = columns;
    it->n_columns = n_columns;
    return it;
}

api_result_item *api_result_events(api_result *r, const char *name,
                                   api_events_writer write, const void *rows,
                                   const size_t args[4]) {
    api_result_item *it = add(r, name, API_ITEM_EVENTS);
    it->write = write;
    it->rows = rows;
    memcpy(it->args, args, sizeof it->args);
    return it;
}

api_result_item *api_result_tensors(api_result *r, const char *name,
                                    const api_result_member *members,
                                    size_t n) {
    api_result_item *it = add(r, name, API_ITEM_TENSORS);
    it->members = members;
    it->n_members = n;
    return it;
}

void api_result_heatmap(api_result *r, const char *title, const double *weights,
                        size_t B, size_t H, size_t Nq, size_t Nk) {
    r->heatmap.title = title;
    r->heatmap.weights = weights;
    r->heatmap.B = B;
    r->heatmap.H = H;
    r->heatmap.Nq = Nq;
    r->heatmap.Nk = Nk;
}

void api_result_fail_text(api_result *r, api_result_item *it,
                          const char *pointer, const char *text) {
    size_t n = strlen(text);
    if (n >= sizeof r->text)
        n = sizeof r->text - 1;
    memcpy(r->text, text, n);
    r->text[n] = '\0';
    it->fail_pointer = pointer;
    it->fail_text = 1;
}

const api_result_item *api_result_find(const api_result *r, const char *name,
                                       size_t len) {
    for (size_t i = 0; i < r->n; i++)
        if (strlen(r->items[i].name) == len &&
            !memcmp(r->items[i].name, name, len))
            return &r->items[i];
    return NULL;
}

size_t api_result_item_count(const api_result_item *it) {
    switch (it->kind) {
    case API_ITEM_TENSOR: {
        size_t count = 1;
        for (size_t i = 0; i < it->rank; i++)
            count *= it->shape[i];
        return count;
    }
    case API_ITEM_RECORDS:
        return it->n_rows;
    case API_ITEM_EVENTS:
    case API_ITEM_TENSORS:
        return 0;
    default:
        return 1;
    }
}

double api_result_record_value(const api_result_item *it, size_t i, size_t c) {
    const unsigned char *at = (const unsigned char *)it->rows + i * it->stride +
                              it->columns[c].offset;
    if (it->columns[c].integer) {
        size_t v;
        memcpy(&v, at, sizeof v);
        return (double)v;
    }
    double x;
    memcpy(&x, at, sizeof x);
    return x;
}

/* 1 when entry x prints under precision: finite (or NaN where null is
 * meant) and not rounded beyond the largest double. */
static int printable(double x, int precision, int nan_as_null) {
    if (fabs(x) <= 1e308) /* rounding to any precision stays a double */
        return 1;
    if (isnan(x))
        return nan_as_null;
    if (!isfinite(x))
        return 0;
    char text[API_NUM_MAX];
    api_num_format(text, x, precision);
    return text[0] != 'n'; /* "null": rounding overflowed */
}

int api_result_item_precision(const api_result *r, const api_result_item *it) {
    return it->exact ? 0 : r->fmt.precision;
}

static int item_prints(const api_result *r, const api_result_item *it) {
    int k = api_result_item_precision(r, it);
    switch (it->kind) {
    case API_ITEM_TENSOR: {
        size_t count = api_result_item_count(it), i = 0;
        const double *x = it->data;
        /* entries within ±1e308 print whatever the rounding: four at a
         * time, without a branch each (most answers are all such) */
        for (; i + 4 <= count; i += 4)
            if (!((fabs(x[i]) <= 1e308) & (fabs(x[i + 1]) <= 1e308) &
                  (fabs(x[i + 2]) <= 1e308) & (fabs(x[i + 3]) <= 1e308)))
                break;
        for (; i < count; i++)
            if (!printable(x[i], k, it->nan_as_null))
                return 0;
        return 1;
    }
    case API_ITEM_NUMBER:
        return it->is_null || printable(it->number, k, 0);
    case API_ITEM_RECORDS:
        for (size_t i = 0; i < it->n_rows; i++)
            for (size_t c = 0; c < it->n_columns; c++)
                if (!it->columns[c].integer &&
                    !printable(api_result_record_value(it, i, c), k, 0))
                    return 0;
        return 1;
    case API_ITEM_TENSORS:
        for (size_t m = 0; m < it->n_members; m++) {
            const api_result_member *t = &it->members[m];
            size_t count = 1;
            for (size_t i = 0; i < t->rank; i++)
                count *= t->shape[i];
            for (size_t i = 0; i < count; i++)
                if (!printable(t->data[i], k, t->nan_as_null))
                    return 0;
        }
        return 1;
    default:
        return 1;
    }
}

int api_result_check_item(const api_result *r, const api_result_item *it,
                          api_problem *p) {
    if (item_prints(r, it))
        return 0;
    if (it->fail_detail || it->fail_text)
        return api_fail(p, API_E_INVALID_VALUE, it->fail_pointer, "%s",
                        it->fail_text ? r->text : it->fail_detail);
    return api_fail(p, r->fail_code, NULL, "%s",
                    r->fail_detail ? r->fail_detail
                                   : "the result is not finite");
}

int api_result_check(const api_result *r, api_problem *p) {
    if (r->overflow)
        return api_fail(p, API_E_INTERNAL, NULL,
                        "the answer has more than %d members",
                        API_RESULT_ITEMS_MAX);
    for (size_t i = 0; i < r->n; i++)
        if (api_result_check_item(r, &r->items[i], p))
            return -1;
    return 0;
}

void api_result_free(api_result *r) {
    api_arena_free(&r->arena);
    r->n = 0;
}
