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
        api_points_sum total = {0};
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)points, key, v) {
            double x = json_number_value(v);
            if (json_is_number(v) && isfinite(x) && x >= 0)
                api_points_add(&total, x);
        }
        sum = api_points_total(&total);
    }
    if (json_is_object(points) && isfinite(sum) && sum > 0)
        return sum;
    size_t fields = json_object_size(json_object_get(body, "answer"));
    return fields ? (double)fields : 1;
}

static const char *const visibility_names[] = {
    [API_VISIBLE] = "visible",
    [API_HIDDEN] = "hidden",
    [API_AFTER_DUE_DATE] = "after_due_date",
    [API_AFTER_PUBLISHED] = "after_published"};

const char *api_grade_visibility_name(api_grade_visibility v) {
    return (unsigned)v < sizeof visibility_names / sizeof visibility_names[0]
               ? visibility_names[v]
               : "visible";
}

api_grade_visibility api_grade_body_visibility(const json_t *body) {
    const json_t *v = json_object_get(body, "visibility");
    if (json_is_string(v))
        for (size_t i = 0;
             i < sizeof visibility_names / sizeof visibility_names[0]; i++)
            if (strcmp(json_string_value(v), visibility_names[i]) == 0)
                return (api_grade_visibility)i;
    return API_VISIBLE;
}

/* From the fullest texts to the barest: the first level whose document
 * fits in API_LMS_DOC_MAX is written. Names are cut only after the texts
 * are short; a document of names, scores and points alone holds about
 * 20,000 tests. */
static const api_lms_limits levels[] = {
    {1024, 4096, API_LMS_DOC_MAX, 0},
    {1024, 1024, 100000, 0},
    {1024, 256, 20000, 0},
    {512, 64, 4000, 0},
    {1024, 0, 2000, 1},
    {128, 0, 1000, 1},
    {48, 0, 400, 1},
    {16, 0, 200, 1},
};

int api_grade_write_lms(api_grade_format fmt, const api_grade_item *items,
                        size_t n, api_buf *out) {
    if (fmt != API_GRADE_FORMAT_GRADESCOPE &&
        fmt != API_GRADE_FORMAT_PRAIRIELEARN)
        return -1;
    size_t start = out->len;
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++) {
        int over =
            fmt == API_GRADE_FORMAT_GRADESCOPE
                ? api_grade_write_gradescope(items, n, &levels[i], out)
                : api_grade_write_prairielearn(items, n, &levels[i], out);
        if (out->failed)
            return 0;
        if (!over && out->len - start <= API_LMS_DOC_MAX)
            return 0;
        out->len = start; /* too long: again, shorter */
        if (out->data)
            out->data[start] = '\0';
    }
    return -2;
}

/* s (n bytes of a text of whole bytes) cut to max, appended as plain
 * text with the marker. */
static void append_cut(api_buf *out, const char *s, size_t n, size_t whole,
                       size_t max) {
    if (whole <= max && n == whole) {
        api_buf_append(out, s ? s : "", n);
        return;
    }
    size_t keep = max < n ? max : n;
    while (keep > 0 && ((unsigned char)s[keep] & 0xC0) == 0x80)
        keep--; /* not inside a UTF-8 character */
    char tail[64];
    snprintf(tail, sizeof tail, "… (%zu more bytes)", whole - keep);
    api_buf_append(out, s ? s : "", keep);
    api_buf_puts(out, tail);
}

static void put_cut_of(api_buf *out, const char *s, size_t n, size_t whole,
                       size_t max) {
    if (whole <= max && n == whole) {
        api_buf_json_string(out, s ? s : "", n);
        return;
    }
    api_buf cut = {0};
    append_cut(&cut, s, n, whole, max);
    if (cut.failed)
        out->failed = 1;
    api_buf_json_string(out, cut.data ? cut.data : "", cut.len);
    api_buf_free(&cut);
}

void api_lms_put_cut(api_buf *out, const char *s, size_t n, size_t max) {
    put_cut_of(out, s, n, n, max);
}

/* A Gradescope submission's line when its tests are not visible: the
 * top-level output is, so it says no more than when they are shown. */
static void put_withheld(api_buf *out, const api_grade_item *item,
                         api_grade_visibility vis) {
    api_buf_puts(out, item->grade ? "graded" : "not graded");
    api_buf_puts(out, vis == API_HIDDEN ? "; its tests are hidden"
                      : vis == API_AFTER_DUE_DATE
                          ? "; its tests are shown after the due date"
                          : "; its tests are shown once grades are "
                            "published");
}

void api_lms_put_summary(api_buf *out, const api_grade_item *items, size_t n,
                         const api_lms_limits *lim, int withhold) {
    api_buf lines = {0}, line = {0}, cut = {0};
    if (lim->bare)
        api_buf_puts(&lines, "(each test's output and the notes for the "
                             "instructor are left out, to keep this "
                             "document within 1 MB)\n");
    size_t whole = lines.len; /* the summary's bytes, those not kept too */
    for (size_t i = 0; i < n; i++) {
        const api_grade_item *item = &items[i];
        api_grade_visibility vis =
            item->grade ? item->grade->visibility : item->problem_visibility;
        if (item->id && n > 1) {
            api_buf_append(&line, item->id, item->id_len);
            api_buf_puts(&line, ": ");
        }
        if (withhold && vis != API_VISIBLE)
            put_withheld(&line, item, vis);
        else
            api_grade_item_summary(&line, item);
        if (i)
            api_buf_putc(&cut, '\n');
        append_cut(&cut, line.data, line.len, line.len,
                   lim->bare ? lim->name : lim->text);
        whole += cut.len;
        if (lines.len <= lim->summary) /* past it, the rest is cut anyway */
            api_buf_append(&lines, cut.data ? cut.data : "", cut.len);
        line.len = cut.len = 0;
    }
    if (line.failed || lines.failed || cut.failed)
        out->failed = 1;
    put_cut_of(out, lines.data, lines.len, whole, lim->summary);
    api_buf_free(&lines);
    api_buf_free(&line);
    api_buf_free(&cut);
}

void api_lms_put_text(api_buf *out, api_buf *text, size_t max) {
    if (text->failed)
        out->failed = 1;
    api_lms_put_cut(out, text->data, text->len, max);
    text->len = 0;
}

/* The catalogue's instructor text of g's misconception, or NULL. */
static const char *misconception_note(const api_grade *g) {
    if (!g || g->pass || !g->misconception)
        return NULL;
    return g->misconception->instructor;
}

const char *api_grade_item_note(const api_grade_item *item) {
    const api_grade *g = item->grade;
    if (g && g->copy_note.len > 0)
        return g->copy_note.data;
    return misconception_note(g);
}

void api_grade_item_note_line(api_buf *out, const api_grade_item *item) {
    const api_grade *g = item->grade;
    const char *note = misconception_note(g);
    if (note) {
        api_buf_puts(out, "misconception ");
        api_buf_puts(out, g->misconception->code);
        api_buf_puts(out, ": ");
        api_buf_puts(out, note);
    }
    if (g && g->copy_note.len > 0) {
        if (note)
            api_buf_puts(out, "; ");
        api_buf_append(out, g->copy_note.data, g->copy_note.len);
    }
}

void api_grade_put_test_name(api_buf *out, const api_grade_item *item,
                             const char *field, size_t max) {
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
    if (name.len <= max) {
        api_buf_json_string(out, name.data ? name.data : "", name.len);
    } else { /* ids differ at either end: keep both */
        size_t head = max / 2, tail = name.len - (max - head);
        while (head > 0 && ((unsigned char)name.data[head] & 0xC0) == 0x80)
            head--;
        while (tail < name.len &&
               ((unsigned char)name.data[tail] & 0xC0) == 0x80)
            tail++;
        char mark[64];
        snprintf(mark, sizeof mark, "… (%zu bytes cut) …", tail - head);
        api_buf cut = {0};
        api_buf_append(&cut, name.data, head);
        api_buf_puts(&cut, mark);
        api_buf_append(&cut, name.data + tail, name.len - tail);
        if (cut.failed)
            out->failed = 1;
        api_buf_json_string(out, cut.data ? cut.data : "", cut.len);
        api_buf_free(&cut);
    }
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

/* "earned of possible": up to 6 significant digits, no trailing zeros,
 * and more where 6 would print a short score as full marks (1e16 − 2
 * of 1e16 is not "1e+16 of 1e+16"). */
static void put_points(api_buf *out, double earned, double possible) {
    char a[32], b[32];
    for (int digits = 6;; digits++) {
        snprintf(a, sizeof a, "%.*g", digits, earned);
        snprintf(b, sizeof b, "%.*g", digits, possible);
        if (earned == possible || strcmp(a, b) != 0 || digits == 17)
            break;
    }
    api_buf_puts(out, a);
    api_buf_puts(out, " of ");
    api_buf_puts(out, b);
}

static void put_bytes(api_buf *out, const api_buf *b) {
    if (b->failed)
        out->failed = 1;
    api_buf_append(out, b->data ? b->data : "", b->len);
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
        api_buf_ints(out, f->got_shape, f->got_rank);
        api_buf_puts(out, " where ");
        api_buf_ints(out, want, f->expected_rank);
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
        /* error sizes, unless no number differs (the entries that do
         * are not numbers, or nulls where numbers belong) */
        if (f->kind == API_GRADE_VALUES && !g->hide_expected &&
            (f->pass || f->max_abs_err != 0)) {
            api_buf_puts(out, " (max abs err ");
            put_short(out, f->max_abs_err);
            api_buf_puts(out, ", max rel err ");
            put_short(out, f->max_rel_err);
            api_buf_putc(out, ')');
        }
        if (f->kind == API_GRADE_VALUES && f->pass && f->rounded_to >= 0) {
            api_buf_puts(out, "; matches the reference rounded to ");
            api_buf_uint(out, (uint64_t)f->rounded_to);
            api_buf_puts(out, f->rounded_to == 1 ? " decimal" : " decimals");
        }
        if (f->has_first) {
            api_buf_puts(out, "; first at ");
            put_bytes(out, &f->first_pointer);
            if (!g->hide_expected) {
                api_buf_puts(out, ": expected ");
                put_bytes(out, &f->first_expected);
                api_buf_puts(out, ", got ");
            } else {
                api_buf_puts(out, ": got ");
            }
            put_bytes(out, &f->first_got);
        }
        if (f->too_few_decimals >= 0 && !g->hide_expected) {
            api_buf_puts(out, "; that is the reference rounded to ");
            api_buf_uint(out, (uint64_t)f->too_few_decimals);
            api_buf_puts(out,
                         f->too_few_decimals == 1 ? " decimal" : " decimals");
            api_buf_puts(out, ": give at least ");
            api_buf_uint(out, (uint64_t)f->compare.decimals);
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
    put_points(out, g->earned, g->possible);
    api_buf_puts(out, g->possible == 1 ? " point" : " points");
    if (!g->pass && g->misconception)
        put_misconception(out, g);
}
