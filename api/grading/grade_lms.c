/*
 * grade_lms.c — what the LMS documents share (grade_lms.h): the format
 * names, a submission's worth, test names and the one-line summaries.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "grade_lms.h"
#include "misconceptions.h"

int api_grade_format_parse(const char *s, size_t n, api_grade_format *fmt) {
    static const struct {
        const char *name;
        api_grade_format fmt;
    } names[] = {{"attnd", API_GRADE_FORMAT_ATTND},
                 {"gradescope", API_GRADE_FORMAT_GRADESCOPE},
                 {"prairielearn", API_GRADE_FORMAT_PRAIRIELEARN}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i].name) == n && !memcmp(names[i].name, s, n)) {
            *fmt = names[i].fmt;
            return 0;
        }
    return -1;
}

double api_grade_body_points(const json_t *body) {
    const json_t *points = json_object_get(body, "points");
    if (json_is_number(points) && isfinite(json_number_value(points)) &&
        json_number_value(points) > 0)
        return json_number_value(points);
    double sum = 0;
    if (json_is_object(points)) {
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)points, key, v) {
            double x = json_number_value(v);
            if (json_is_number(v) && isfinite(x) && x >= 0)
                sum += x;
        }
        if (sum > 0)
            return sum;
    }
    size_t fields = json_object_size(json_object_get(body, "answer"));
    return fields ? (double)fields : 1;
}

int api_grade_write_lms(api_grade_format fmt, const api_grade_item *items,
                        size_t n, api_buf *out) {
    switch (fmt) {
    case API_GRADE_FORMAT_GRADESCOPE:
        api_grade_write_gradescope(items, n, out);
        return 0;
    case API_GRADE_FORMAT_PRAIRIELEARN:
        api_grade_write_prairielearn(items, n, out);
        return 0;
    case API_GRADE_FORMAT_ATTND:
        break;
    }
    return -1;
}

void api_grade_put_test_name(api_buf *out, const api_grade_item *item,
                             const char *field) {
    api_buf name = {0};
    if (item->id) {
        api_buf_append(&name, item->id, item->id_len);
        if (field)
            api_buf_puts(&name, ": ");
    }
    if (field)
        api_buf_puts(&name, field);
    else if (!item->id)
        api_buf_puts(&name, "submission");
    if (name.failed)
        out->failed = 1;
    api_buf_json_string(out, name.data ? name.data : "", name.len);
    api_buf_free(&name);
}

/* x for a person: 3 significant digits. */
static void put_short(api_buf *out, double x) {
    char text[32];
    if (!isfinite(x)) {
        api_buf_puts(out, "overflow");
        return;
    }
    snprintf(text, sizeof text, "%.3g", x);
    api_buf_puts(out, text);
}

/* A number of points: up to 6 significant digits, no trailing zeros. */
static void put_points(api_buf *out, double x) {
    char text[32];
    snprintf(text, sizeof text, "%.6g", x);
    api_buf_puts(out, text);
}

static void put_bytes(api_buf *out, const api_buf *b) {
    if (b->failed)
        out->failed = 1;
    api_buf_append(out, b->data ? b->data : "", b->len);
}

static void put_shape(api_buf *out, const long long *dims, size_t rank) {
    api_buf_putc(out, '[');
    for (size_t i = 0; i < rank; i++) {
        if (i)
            api_buf_putc(out, ',');
        api_buf_int(out, dims[i]);
    }
    api_buf_putc(out, ']');
}

static void put_misconception(api_buf *out, const api_grade *g) {
    const api_misconception *m = g->misconception;
    api_buf_puts(out, "; misconception ");
    api_buf_puts(out, m->code);
    api_buf_puts(out, ": ");
    api_buf_puts(out, m->explanation);
}

void api_grade_field_summary(api_buf *out, const api_grade *g,
                             const api_grade_field *f) {
    if (f->kind == API_GRADE_MISSING) {
        api_buf_puts(out, "fail: the answer has no ");
        api_buf_puts(out, f->name);
    } else if (f->kind == API_GRADE_SHAPE) {
        long long want[API_SHAPE_MAX];
        for (size_t i = 0; i < f->expected_rank; i++)
            want[i] = (long long)f->expected_shape[i];
        api_buf_puts(out, "fail: shape ");
        put_shape(out, f->got_shape, f->got_rank);
        api_buf_puts(out, " where ");
        put_shape(out, want, f->expected_rank);
        api_buf_puts(out, " is expected");
        if (f->ragged_pointer) {
            api_buf_puts(out, " (rows differ at ");
            api_buf_puts(out, f->ragged_pointer);
            api_buf_putc(out, ')');
        }
    } else {
        if (f->pass) {
            api_buf_puts(out, "pass: ");
            api_buf_uint(out, f->entries);
            api_buf_puts(out,
                         f->entries == 1 ? " entry matches" : " entries match");
        } else {
            api_buf_puts(out, "fail: ");
            api_buf_uint(out, f->mismatches);
            api_buf_puts(out, " of ");
            api_buf_uint(out, f->entries);
            api_buf_puts(out, f->entries == 1 ? " entry differs"
                                              : " entries differ");
        }
        if (f->kind == API_GRADE_VALUES) {
            api_buf_puts(out, " (max abs err ");
            put_short(out, f->max_abs_err);
            api_buf_puts(out, ", max rel err ");
            put_short(out, f->max_rel_err);
            api_buf_putc(out, ')');
            if (f->rounded_to >= 0) {
                api_buf_puts(out, f->pass ? "; matches" : "; some entries match");
                api_buf_puts(out, " the reference rounded to ");
                api_buf_uint(out, (uint64_t)f->rounded_to);
                api_buf_puts(out, f->rounded_to == 1 ? " decimal" : " decimals");
            }
        }
        if (f->has_first) {
            api_buf_puts(out, "; first at ");
            put_bytes(out, &f->first_pointer);
            api_buf_puts(out, ": expected ");
            put_bytes(out, &f->first_expected);
            api_buf_puts(out, ", got ");
            put_bytes(out, &f->first_got);
        }
    }
    if (f->explained && g->misconception)
        put_misconception(out, g);
}

void api_grade_item_summary(api_buf *out, const api_grade_item *item) {
    const api_grade *g = item->grade;
    if (!g) {
        const api_problem *p = item->problem;
        api_buf_puts(out, "not graded: ");
        api_buf_puts(out, api_error_name(p->code));
        if (p->has_pointer) {
            api_buf_puts(out, " at ");
            api_buf_puts(out, p->pointer);
        }
        api_buf_puts(out, ": ");
        api_buf_puts(out, p->detail);
        return;
    }
    size_t passed = 0;
    for (size_t i = 0; i < g->n_fields; i++)
        passed += g->fields[i].pass != 0;
    api_buf_puts(out, g->pass ? "pass: " : "fail: ");
    api_buf_uint(out, passed);
    api_buf_puts(out, " of ");
    api_buf_uint(out, g->n_fields);
    api_buf_puts(out, g->n_fields == 1 ? " field passes, " : " fields pass, ");
    put_points(out, g->earned);
    api_buf_puts(out, " of ");
    put_points(out, g->possible);
    api_buf_puts(out, g->possible == 1 ? " point" : " points");
    if (!g->pass && g->misconception)
        put_misconception(out, g);
}
