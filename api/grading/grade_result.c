/*
 * grade_result.c — the typed grade: its fields, its scores, and attnd's
 * own JSON for it (grade_result.h, docs/grading.md).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grade_result.h"
#include "misconceptions.h"
#include "numfmt_shortest.h"

api_grade_field *api_grade_add_field(api_grade *g, const char *name, size_t n,
                                     api_grade_kind kind) {
    char *copy = malloc(n + 1);
    if (copy && g->n_fields == g->fields_cap) { /* room doubles */
        size_t cap = g->fields_cap ? 2 * g->fields_cap : 8;
        api_grade_field *grown = realloc(g->fields, cap * sizeof *g->fields);
        if (grown) {
            g->fields = grown;
            g->fields_cap = cap;
        }
    }
    if (!copy || g->n_fields == g->fields_cap) {
        free(copy);
        return NULL;
    }
    memcpy(copy, name, n);
    copy[n] = '\0';
    api_grade_field *f = &g->fields[g->n_fields++];
    memset(f, 0, sizeof *f);
    f->name = copy;
    f->kind = kind;
    return f;
}

static double field_score(api_grade_credit credit, const api_grade_field *f) {
    if (credit == API_CREDIT_ALL_OR_NOTHING || f->kind == API_GRADE_SHAPE ||
        f->kind == API_GRADE_MISSING)
        return f->pass ? 1.0 : 0.0;
    if (f->entries == 0)
        return 1.0;
    size_t matched =
        f->mismatches < f->entries ? f->entries - f->mismatches : 0;
    return (double)matched / (double)f->entries;
}

void api_points_add(api_points_sum *s, double x) {
    s->plain += x;
    if (s->inexact || x == 0)
        return;
    if (!(x > 0) || !isfinite(x)) {
        s->inexact = 1;
        return;
    }
    api_num_decimal d = api_num_shortest(x);
    uint64_t digits = d.digits;
    int e = d.exponent;
    /* bring both to the smaller exponent */
    while (e > s->exponent && s->digits != 0) {
        if (digits > UINT64_MAX / 20) {
            s->inexact = 1;
            return;
        }
        digits *= 10;
        e--;
    }
    while (s->exponent > e) {
        if (s->digits > UINT64_MAX / 20) {
            s->inexact = 1;
            return;
        }
        s->digits *= 10;
        s->exponent--;
    }
    if (s->digits == 0)
        s->exponent = e;
    if (digits > (UINT64_MAX >> 1) - s->digits) {
        s->inexact = 1;
        return;
    }
    s->digits += digits;
}

double api_points_total(const api_points_sum *s) {
    if (s->inexact)
        return (double)s->plain;
    if (s->digits == 0)
        return 0;
    char text[48];
    snprintf(text, sizeof text, "%llue%d", (unsigned long long)s->digits,
             s->exponent);
    return strtod(text, NULL);
}

void api_grade_score(api_grade *g) {
    api_points_sum possible = {0}, earned = {0};
    double scores = 0; /* Σ score */
    int all_full = 1;  /* every field scores 1 */
    for (size_t i = 0; i < g->n_fields; i++) {
        api_grade_field *f = &g->fields[i];
        f->score = field_score(g->credit, f);
        scores += f->score;
        all_full &= f->score == 1.0;
        api_points_add(&possible, f->points);
        if (f->score == 1.0)
            api_points_add(&earned, f->points);
        else if (f->score > 0)
            earned.inexact = 1; /* part of a field: summed below */
    }
    if (g->total_points > 0) {
        g->possible = g->total_points;
        double n = (double)g->n_fields;
        g->earned =
            all_full || n == 0 ? g->possible : g->possible * (scores / n);
    } else {
        g->possible = g->rubric_points > 0 ? g->rubric_points
                                           : api_points_total(&possible);
        if (all_full) {
            g->earned = g->possible;
        } else if (!earned.inexact) {
            g->earned = api_points_total(&earned); /* whole fields only */
        } else {
            long double sum = 0;
            for (size_t i = 0; i < g->n_fields; i++)
                sum += (long double)g->fields[i].points * g->fields[i].score;
            g->earned = (double)sum;
        }
    }
    if (!(g->earned >= 0)) /* NaN too */
        g->earned = 0;
    if (g->earned > g->possible)
        g->earned = g->possible;
    g->score = g->possible > 0 ? g->earned / g->possible : 0;
    /* rounding must not take a full score below 1 or a sum past it, nor
     * a field that lost points up to a full one (points of 1e-300 beside
     * 1: the loss is below what a double tells from 1) */
    int lost = 0;
    for (size_t i = 0; i < g->n_fields; i++)
        lost |= g->fields[i].score < 1 &&
                (g->total_points > 0 || g->fields[i].points > 0);
    if (g->pass)
        g->score = 1;
    else if (!(g->score <= 1))
        g->score = 1;
    if (lost && g->score >= 1)
        g->score = nextafter(1.0, 0.0);
    if (lost && g->earned >= g->possible)
        g->earned = nextafter(g->possible, 0.0);
}

void api_grade_put_number(api_buf *out, double x) {
    if (!isfinite(x) || api_buf_number(out, x, 0))
        api_buf_puts(out, "null");
}

static void put_shape(api_buf *out, const size_t *shape, size_t rank) {
    api_buf_putc(out, '[');
    for (size_t i = 0; i < rank; i++) {
        if (i)
            api_buf_putc(out, ',');
        api_buf_uint(out, shape[i]);
    }
    api_buf_putc(out, ']');
}

static void put_text(api_buf *out, const api_buf *text) {
    if (text->failed)
        out->failed = 1;
    api_buf_append(out, text->data ? text->data : "", text->len);
}

static void put_first(api_buf *out, const api_grade_field *f,
                      int hide_expected) {
    api_buf_puts(out, ",\"first_mismatch\":");
    if (!f->has_first) {
        api_buf_puts(out, "null");
        return;
    }
    api_buf_puts(out, "{\"pointer\":");
    api_buf_json_string(out, f->first_pointer.data ? f->first_pointer.data : "",
                        f->first_pointer.len);
    if (!hide_expected) {
        api_buf_puts(out, ",\"expected\":");
        put_text(out, &f->first_expected);
    }
    api_buf_puts(out, ",\"got\":");
    put_text(out, &f->first_got);
    api_buf_putc(out, '}');
}

/* "name": {"pass", "score", ...} in the field's kind's form. */
static void put_field(api_buf *out, const api_grade_field *f,
                      int hide_expected) {
    api_buf_json_string(out, f->name, strlen(f->name));
    api_buf_puts(out, f->pass ? ":{\"pass\":true" : ":{\"pass\":false");
    api_buf_puts(out, ",\"score\":");
    api_grade_put_number(out, f->score);
    switch (f->kind) {
    case API_GRADE_SHAPE:
        api_buf_puts(out, ",\"error\":\"shape\",\"expected\":");
        put_shape(out, f->expected_shape, f->expected_rank);
        api_buf_puts(out, ",\"got\":");
        api_buf_ints(out, f->got_shape, f->got_rank);
        if (f->ragged_pointer) {
            api_buf_puts(out, ",\"pointer\":");
            api_buf_json_string(out, f->ragged_pointer,
                                strlen(f->ragged_pointer));
        }
        break;
    case API_GRADE_MISSING:
        api_buf_puts(out, ",\"error\":\"missing\"");
        break;
    case API_GRADE_VALUES:
        /* hidden: an error's size and the answer's sign give the
         * reference away (got − err), so both are null */
        api_buf_puts(out, ",\"max_abs_err\":");
        if (hide_expected)
            api_buf_puts(out, "null");
        else
            api_grade_put_number(out, f->max_abs_err);
        api_buf_puts(out, ",\"max_rel_err\":");
        if (hide_expected)
            api_buf_puts(out, "null");
        else
            api_grade_put_number(out, f->max_rel_err);
        if (f->rounded_to >= 0) {
            api_buf_puts(out, ",\"rounded_to\":");
            api_buf_uint(out, (uint64_t)f->rounded_to);
        }
        /* fall through */
    case API_GRADE_EVENTS:
        api_buf_puts(out, ",\"mismatches\":");
        api_buf_uint(out, f->mismatches);
        put_first(out, f, hide_expected);
        break;
    }
    api_buf_putc(out, '}');
}

void api_grade_write(const api_grade *g, api_buf *out) {
    api_buf_putc(out, '{');
    if (g->has_id) {
        api_buf_puts(out, "\"id\":");
        put_text(out, &g->id_json);
        api_buf_putc(out, ',');
    }
    api_buf_puts(out, g->pass ? "\"pass\":true" : "\"pass\":false");
    api_buf_puts(out, ",\"score\":");
    api_grade_put_number(out, g->score);
    api_buf_puts(out, ",\"points\":{\"earned\":");
    api_grade_put_number(out, g->earned);
    api_buf_puts(out, ",\"possible\":");
    api_grade_put_number(out, g->possible);
    api_buf_puts(out, "},\"fields\":{");
    for (size_t i = 0; i < g->n_fields; i++) {
        if (i)
            api_buf_putc(out, ',');
        put_field(out, &g->fields[i], g->hide_expected);
    }
    api_buf_putc(out, '}');
    if (!g->pass) {
        api_buf_puts(out, ",\"misconception\":");
        const api_misconception *m = g->misconception;
        if (!m) {
            api_buf_puts(out, "null");
        } else {
            api_buf_puts(out, "{\"code\":");
            api_buf_json_string(out, m->code, strlen(m->code));
            api_buf_puts(out, ",\"explanation\":");
            api_buf_json_string(out, m->explanation, strlen(m->explanation));
            if (m->instructor) {
                api_buf_puts(out, ",\"instructor_note\":");
                api_buf_json_string(out, m->instructor, strlen(m->instructor));
            }
            api_buf_puts(out, ",\"fields\":[");
            int first = 1;
            for (size_t i = 0; i < g->n_fields; i++) {
                if (!g->fields[i].explained)
                    continue;
                if (!first)
                    api_buf_putc(out, ',');
                first = 0;
                api_buf_json_string(out, g->fields[i].name,
                                    strlen(g->fields[i].name));
            }
            api_buf_puts(out, "]}");
        }
    }
    api_buf_putc(out, '}');
}

size_t api_grade_sample_index(size_t k, size_t count) {
    size_t taken = count < API_GRADE_SAMPLE_MAX ? count : API_GRADE_SAMPLE_MAX;
    return (size_t)((unsigned __int128)k * count / taken);
}

void api_grade_free(api_grade *g) {
    for (size_t i = 0; i < g->n_fields; i++) {
        api_grade_field *f = &g->fields[i];
        free(f->name);
        free(f->ragged_pointer);
        api_buf_free(&f->first_pointer);
        api_buf_free(&f->first_expected);
        api_buf_free(&f->first_got);
    }
    free(g->fields);
    if (g->sample) {
        for (size_t i = 0; i < g->sample->n_fields; i++)
            free(g->sample->fields[i].name);
        free(g->sample->fields);
        free(g->sample->variant);
        free(g->sample);
    }
    api_buf_free(&g->copy_note);
    api_buf_free(&g->id_json);
    api_buf_free(&g->id_text);
    memset(g, 0, sizeof *g);
}
