/*
 * grade_entries.c — one graded field, entry by entry (grade_entries.h).
 */
#include "grade_entries.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fastpath.h"
#include "limit.h"
#include "numfmt.h"

/* Rows at every level have the first sibling's length, and entries at
 * the last level are not arrays. */
static int rectangular(api_grade_view *w, const json_t *a, size_t level,
                       api_pointer *ptr) {
    if (json_array_size(a) != w->shape[level]) {
        w->ragged_at = *ptr;
        w->ragged_level = level;
        return 0;
    }
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *e = json_array_get(a, i);
        int inner = level + 1 < w->rank;
        if (inner != json_is_array(e)) {
            api_pointer_push_index(ptr, i);
            w->ragged_at = *ptr;
            w->ragged_level = inner ? level + 1 : level;
            return 0;
        }
        if (!inner)
            continue;
        size_t mark = api_pointer_push_index(ptr, i);
        int ok = rectangular(w, e, level + 1, ptr);
        api_pointer_pop(ptr, mark);
        if (!ok)
            return 0;
    }
    return 1;
}

static const json_t **collect(const json_t *a, size_t level, size_t rank,
                              const json_t **dst) {
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *e = json_array_get(a, i);
        if (level + 1 < rank)
            dst = collect(e, level + 1, rank, dst);
        else
            *dst++ = e;
    }
    return dst;
}

/* Fill w from v (already type-checked: a {"shape", "data"} object has
 * integral dimensions ≥ 0 and len(data) = prod(shape)). Returns 0, or -1
 * when memory runs out. */
int api_grade_view_of(api_grade_view *w, const api_fastpath *doc,
                      const json_t *v, const char *pointer) {
    memset(w, 0, sizeof *w);
    const api_fastpath_array *fa = api_fastpath_find(doc, v);
    if (fa) { /* rectangular numbers, read without jansson */
        w->rank = fa->rank;
        memcpy(w->shape, fa->shape, sizeof fa->shape);
        w->count = fa->count;
        w->numbers = fa->data;
        return 0;
    }
    if (json_is_object(v)) {
        const json_t *shape = json_object_get(v, "shape");
        const json_t *data = json_object_get(v, "data");
        w->flat = 1;
        w->rank = json_array_size(shape);
        if (w->rank > API_SHAPE_MAX)
            w->rank = API_SHAPE_MAX; /* unequal to any reference anyway */
        for (size_t i = 0; i < w->rank; i++)
            w->shape[i] = (size_t)json_number_value(json_array_get(shape, i));
        const api_fastpath_array *fd = api_fastpath_find(doc, data);
        if (fd) { /* flat numbers, read without jansson */
            w->count = fd->count;
            w->numbers = fd->data;
            return 0;
        }
        w->count = json_array_size(data);
        w->leaves = malloc((w->count ? w->count : 1) * sizeof *w->leaves);
        if (!w->leaves)
            return -1;
        for (size_t i = 0; i < w->count; i++)
            w->leaves[i] = json_array_get(data, i);
        return 0;
    }
    const json_t *x = v;
    while (json_is_array(x) && w->rank < API_SHAPE_MAX) {
        w->shape[w->rank++] = json_array_size(x);
        x = json_array_get(x, 0);
    }
    if (json_is_array(x)) { /* deeper than any reference: first dims only */
        w->ragged = 0;
        w->count = 0;
        return 0;
    }
    w->count = 1;
    for (size_t i = 0; i < w->rank; i++)
        w->count *= w->shape[i];
    if (w->rank > 0) {
        api_pointer ptr;
        api_pointer_init(&ptr, pointer);
        if (!rectangular(w, v, 0, &ptr)) {
            w->ragged = 1;
            w->count = 0;
            return 0;
        }
    }
    w->leaves = malloc((w->count ? w->count : 1) * sizeof *w->leaves);
    if (!w->leaves)
        return -1;
    if (w->rank == 0)
        w->leaves[0] = v;
    else
        collect(v, 0, w->rank, w->leaves);
    return 0;
}

void api_grade_ref_view_of(api_grade_ref_view *w, const api_result *r,
                           const api_result_item *it) {
    memset(w, 0, sizeof *w);
    w->result = r;
    w->item = it;
    if (it->kind == API_ITEM_TENSOR) {
        w->rank = it->rank;
        memcpy(w->shape, it->shape, sizeof w->shape);
    } else if (it->kind == API_ITEM_RECORDS) {
        w->rank = 1;
        w->shape[0] = it->n_rows;
    }
    w->count = api_result_item_count(it);
}

int api_grade_same_shape(const api_grade_ref_view *a, const api_grade_view *b) {
    if (a->rank != b->rank)
        return 0;
    for (size_t i = 0; i < a->rank; i++)
        if (a->shape[i] != b->shape[i])
            return 0;
    return 1;
}

api_grade_got api_grade_got_json(const json_t *v) {
    return (api_grade_got){v, 0, 0};
}

api_grade_got api_grade_got_at(const api_grade_view *w, size_t i) {
    return w->numbers ? (api_grade_got){NULL, w->numbers[i], 1}
                      : api_grade_got_json(w->leaves[i]);
}

/* Only the first mismatch is named, so its pointer is made once, after
 * the comparison (a pointer per entry would cost more than comparing). */
static void mismatch(api_grade_tally *t, size_t i, const char *member,
                     const api_grade_expected *e, api_grade_got g) {
    if (t->mismatches++ == 0) {
        t->have_first = 1;
        t->first_index = i;
        t->first_member = member;
        t->first_expected = *e;
        t->first_got = g;
    }
}

void api_grade_put_expected(api_buf *out, const api_grade_expected *e) {
    if (e->is_null)
        api_buf_puts(out, "null");
    else if (e->integer)
        api_buf_uint(out, (uint64_t)e->x);
    else
        api_buf_number(out, e->x, e->precision);
}

/* x as the endpoint's answer states it: rounded to precision digits (0:
 * exactly x), the double its printed text reads back as. */
double api_grade_as_answered(double x, int precision) {
    if (precision == 0)
        return x;
    char text[API_NUM_MAX];
    api_num_format(text, x, precision);
    return strtod(text, NULL);
}

/* One number or null under the comparison c: e is the reference's, g the
 * answer's (anything, or absent). */
static void compare_entry(const api_compare *c, api_grade_tally *t,
                          const api_grade_expected *e, api_grade_got g,
                          size_t i, const char *member) {
    t->entries++;
    if (e->is_null) { /* null: a masked score, no statistics */
        if (g.fast || !json_is_null(g.json))
            mismatch(t, i, member, e, g);
        return;
    }
    if (!g.fast && !json_is_number(g.json)) {
        mismatch(t, i, member, e, g);
        return;
    }
    double x = api_grade_as_answered(e->x, e->precision);
    double y = g.fast ? g.x : json_number_value(g.json);
    double err = fabs(y - x);
    if (err > t->max_abs)
        t->max_abs = err;
    if (x != 0) {
        double rel = err / fabs(x);
        if (rel > t->max_rel)
            t->max_rel = rel;
    }
    int quick = api_compare_quick(c, x, y);
    if (quick == 1)
        return;
    if (quick == 0) {
        mismatch(t, i, member, e, g);
        return;
    }
    /* rounded at no more places than a match before it: nothing to add */
    if (t->rounded_to >= 0 &&
        api_compare_rounded_at_most(c, x, y, t->rounded_to))
        return;
    int decimals = 0;
    api_match m = api_compare_entry(c, x, y, &decimals);
    if (m == API_MATCH_NO)
        mismatch(t, i, member, e, g);
    else if (m == API_MATCH_ROUNDED && decimals > t->rounded_to)
        t->rounded_to = decimals;
}

/* Entry i of the reference against g; a record's members are entries
 * each, at the entry's pointer + "/<member>". */
void api_grade_compare_entries(const api_compare *c, api_grade_tally *t,
                               const api_grade_ref_view *w, size_t i,
                               api_grade_got g) {
    const api_result_item *it = w->item;
    api_grade_expected e = {0, api_result_item_precision(w->result, it), 0, 0};
    switch (it->kind) {
    case API_ITEM_RECORDS:
        for (size_t col = 0; col < it->n_columns; col++) {
            const char *name = it->columns[col].name;
            e.x = api_result_record_value(it, i, col);
            e.integer = it->columns[col].integer;
            e.precision = e.integer ? 0 : w->result->fmt.precision;
            compare_entry(c, t, &e,
                          api_grade_got_json(json_is_object(g.json)
                                                 ? json_object_get(g.json, name)
                                                 : NULL),
                          i, name);
        }
        return;
    case API_ITEM_TENSOR:
        e.x = it->data[i];
        e.is_null = it->nan_as_null && isnan(e.x);
        break;
    case API_ITEM_NUMBER:
        e.x = it->number;
        e.is_null = it->is_null;
        break;
    case API_ITEM_INTEGER:
        e.x = (double)it->integer;
        e.integer = 1;
        e.precision = 0;
        break;
    case API_ITEM_EVENTS:
    case API_ITEM_TENSORS:
        return;
    }
    compare_entry(c, t, &e, g, i, NULL);
}

/* The entries of a tensor item, precision 0 and no null, against an
 * answer's numbers under a relabs comparison: the tally's largest errors
 * kept in registers, and an entry that does not pass at once
 * (api_compare_quick) handed to compare_entry with the tally brought up
 * to date. A class's answers are mostly right, and a batch compares
 * millions of entries, so the loop that passes them is most of grading's
 * own time. */
/* Entries compared in full between two looks at the time limit. */
#define TIME_CHECK_EVERY 256

static int compare_numbers(const api_compare *c, api_grade_tally *t,
                           const double *want, const double *got, size_t n,
                           int first_only) {
    double max_abs = t->max_abs, max_rel = t->max_rel;
    double atol = c->atol, rtol = c->rtol;
    size_t passed = 0, in_full = 0;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        double x = want[i], y = got[i];
        double size = fabs(x), err = fabs(y - x);
        if (err > max_abs)
            max_abs = err;
        if (x != 0 && err / size > max_rel)
            max_rel = err / size;
        if (size <= DBL_MAX && err <= atol + rtol * size) {
            passed++;
            continue;
        }
        t->max_abs = max_abs;
        t->max_rel = max_rel;
        api_grade_expected e = {x, 0, 0, 0};
        compare_entry(c, t, &e, (api_grade_got){NULL, y, 1}, i, NULL);
        if (first_only && t->mismatches)
            break;
        if (++in_full % TIME_CHECK_EVERY == 0 && api_limit_time_is_up()) {
            rc = -1;
            break;
        }
    }
    t->max_abs = max_abs;
    t->max_rel = max_rel;
    t->entries += passed;
    return rc;
}

int api_grade_compare_all(const api_compare *c, api_grade_tally *t,
                          const api_grade_ref_view *w,
                          const api_grade_view *got, int first_only) {
    const api_result_item *it = w->item;
    if (it->kind == API_ITEM_TENSOR && got->numbers && !it->nan_as_null &&
        api_result_item_precision(w->result, it) == 0 &&
        (c->mode == API_COMPARE_RELABS ||
         c->mode == API_COMPARE_RELABS_OR_ROUNDED))
        return compare_numbers(c, t, it->data, got->numbers, w->count,
                               first_only);
    for (size_t i = 0; i < w->count && !(first_only && t->mismatches); i++) {
        api_grade_compare_entries(c, t, w, i, api_grade_got_at(got, i));
        if ((i + 1) % TIME_CHECK_EVERY == 0 && api_limit_time_is_up())
            return -1;
    }
    return 0;
}

/* A value as JSON, numbers printed as the contract prints them. */
void api_grade_put_value(api_buf *out, const json_t *v) {
    if (v == NULL || json_is_null(v)) {
        api_buf_puts(out, "null");
    } else if (json_is_number(v)) {
        if (api_buf_number(out, json_number_value(v), 0))
            api_buf_puts(out, "null");
    } else if (json_is_string(v)) {
        api_buf_json_string(out, json_string_value(v), json_string_length(v));
    } else if (json_is_boolean(v)) {
        api_buf_puts(out, json_is_true(v) ? "true" : "false");
    } else if (json_is_array(v)) {
        api_buf_putc(out, '[');
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                api_buf_putc(out, ',');
            api_grade_put_value(out, json_array_get(v, i));
        }
        api_buf_putc(out, ']');
    } else {
        const char *key;
        const json_t *m;
        int first = 1;
        api_buf_putc(out, '{');
        json_object_foreach((json_t *)v, key, m) {
            if (!first)
                api_buf_putc(out, ',');
            first = 0;
            api_buf_json_string(out, key, strlen(key));
            api_buf_putc(out, ':');
            api_grade_put_value(out, m);
        }
        api_buf_putc(out, '}');
    }
}

/* The longest text of a student's value quoted in a grade: a longer one is
 * cut, so that no answer can make an LMS document pass its size cap
 * (PrairieLearn keeps results of at most 1 MB). */
#define QUOTE_MAX 200

/* The first bytes of s (n of them) as a JSON string, cut at QUOTE_MAX
 * bytes (whole UTF-8 characters) with "… (N more bytes)". */
static void put_cut(api_buf *out, const char *s, size_t n) {
    size_t keep = QUOTE_MAX;
    while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
        keep--; /* not inside a UTF-8 character */
    char tail[64];
    snprintf(tail, sizeof tail, "… (%zu more bytes)", n - keep);
    api_buf cut = {0};
    api_buf_append(&cut, s, keep);
    api_buf_puts(&cut, tail);
    if (cut.failed)
        out->failed = 1;
    else
        api_buf_json_string(out, cut.data, cut.len);
    api_buf_free(&cut);
}

/* v as api_grade_put_value writes it, or, when that is longer than QUOTE_MAX
 * bytes, cut (put_cut): a string's own text, or the JSON text of an array or
 * object, as a string. */
void api_grade_put_quoted(api_buf *out, const json_t *v) {
    if (json_is_string(v) && json_string_length(v) > QUOTE_MAX) {
        put_cut(out, json_string_value(v), json_string_length(v));
        return;
    }
    api_buf text = {0};
    api_grade_put_value(&text, v);
    if (text.failed)
        out->failed = 1;
    else if (text.len <= QUOTE_MAX)
        api_buf_append(out, text.data ? text.data : "", text.len);
    else
        put_cut(out, text.data, text.len);
    api_buf_free(&text);
}
