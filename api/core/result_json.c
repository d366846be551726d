/*
 * result_json.c — the JSON encoder of typed results (see result_json.h).
 */
#include "result_json.h"

#include <string.h>

/* Length of the group part of a dotted name ("grads.queries" -> 5; "w" ->
 * 0). */
static size_t group_len(const char *name) {
    const char *dot = strrchr(name, '.');
    return dot ? (size_t)(dot - name) : 0;
}

/* Segments of a (n bytes) that b (m bytes) shares, as a byte count ending
 * on a segment boundary. */
static size_t common_groups(const char *a, size_t n, const char *b, size_t m) {
    size_t k = 0, last = 0;
    while (k < n && k < m && a[k] == b[k]) {
        k++;
        if (a[k - 1] == '.')
            last = k - 1;
    }
    if ((k == n || a[k] == '.') && (k == m || b[k] == '.'))
        return k;
    return last;
}

static size_t count_dots(const char *s, size_t n) {
    size_t d = 0;
    for (size_t i = 0; i < n; i++)
        d += s[i] == '.';
    return d;
}

/* Row i of a RECORDS item as {"column": value, ...}. */
static void write_record(const api_result *r, const api_result_item *it,
                         size_t i, api_buf *out) {
    api_buf_putc(out, '{');
    for (size_t c = 0; c < it->n_columns; c++) {
        api_buf_puts(out, c ? ",\"" : "\"");
        api_buf_puts(out, it->columns[c].name);
        api_buf_puts(out, "\":");
        if (it->columns[c].integer) {
            api_buf_uint(out, (uint64_t)api_result_record_value(it, i, c));
        } else {
            api_buf_number(out, api_result_record_value(it, i, c),
                           r->fmt.precision);
        }
    }
    api_buf_putc(out, '}');
}

static int write_value(const api_result *r, const api_result_item *it,
                       api_buf *out) {
    api_tensor_format fmt = r->fmt;
    fmt.precision = api_result_item_precision(r, it);
    switch (it->kind) {
    case API_ITEM_TENSOR:
        return api_tensor_encode(out, it->data, it->shape, it->rank, &fmt,
                                 it->nan_as_null);
    case API_ITEM_NUMBER:
        if (it->is_null) {
            api_buf_puts(out, "null");
            return 0;
        }
        return api_buf_number(out, it->number, fmt.precision);
    case API_ITEM_INTEGER:
        api_buf_uint(out, it->integer);
        return 0;
    case API_ITEM_RECORDS:
        api_buf_putc(out, '[');
        for (size_t i = 0; i < it->n_rows; i++) {
            if (i)
                api_buf_putc(out, ',');
            write_record(r, it, i, out);
        }
        api_buf_putc(out, ']');
        return 0;
    case API_ITEM_EVENTS:
        it->write(out, it);
        return 0;
    case API_ITEM_TENSORS:
        api_buf_putc(out, '{');
        for (size_t m = 0; m < it->n_members; m++) {
            const api_result_member *t = &it->members[m];
            api_buf_puts(out, m ? ",\"" : "\"");
            api_buf_puts(out, t->key); /* no character to escape (route's) */
            api_buf_puts(out, "\":");
            if (api_tensor_encode(out, t->data, t->shape, t->rank, &fmt,
                                  t->nan_as_null))
                return -1;
        }
        api_buf_putc(out, '}');
        return 0;
    }
    return -1;
}

int api_result_write_json(const api_result *r, api_buf *out, api_problem *p) {
    if (r->overflow)
        return api_result_check(r, p);
    const char *open = ""; /* the group path now open ("grads") */
    size_t open_n = 0;
    int first = 1; /* nothing written yet in the innermost open object */
    api_buf_putc(out, '{');
    for (size_t i = 0; i < r->n; i++) {
        const api_result_item *it = &r->items[i];
        if (api_result_check_item(r, it, p))
            return -1;
        const char *name = it->name;
        size_t g = group_len(name);
        size_t keep = common_groups(open, open_n, name, g);
        /* close the groups the item is not in */
        size_t closing =
            open_n > keep ? count_dots(open + keep, open_n - keep) + (keep == 0)
                          : 0;
        for (; closing > 0; closing--) {
            api_buf_putc(out, '}');
            first = 0;
        }
        /* open the groups it is in, one segment at a time */
        size_t at = keep;
        while (at < g) {
            size_t start = at + (at > 0 && name[at] == '.');
            size_t end = start;
            while (end < g && name[end] != '.')
                end++;
            api_buf_puts(out, first ? "\"" : ",\"");
            api_buf_append(out, name + start, end - start);
            api_buf_puts(out, "\":{");
            first = 1;
            at = end;
        }
        open = name;
        open_n = g;
        /* the member itself */
        api_buf_puts(out, first ? "\"" : ",\"");
        api_buf_puts(out, name + g + (g > 0));
        api_buf_puts(out, "\":");
        if (write_value(r, it, out)) /* checked above: not reached */
            return api_fail(p, API_E_INTERNAL, NULL, "%s could not be written",
                            name);
        first = 0;
    }
    for (size_t k = open_n ? count_dots(open, open_n) + 1 : 0; k > 0; k--)
        api_buf_putc(out, '}');
    api_buf_putc(out, '}');
    return 0;
}
