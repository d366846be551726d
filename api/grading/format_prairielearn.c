/*
 * format_prairielearn.c — grades as PrairieLearn's external grader
 * results (grade_lms.h; PrairieLearn's "External Grading" documentation,
 * section "Grading results"; schema in
 * tests/grading/schemas/prairielearn_results.schema.json).
 *
 * PrairieLearn scores a submission in [0, 1] ("score") and shows each
 * test's "points" of "max_points". A submission that could not be graded
 * is a format error: with "gradable": false PrairieLearn neither awards
 * nor takes points and does not count the attempt, which is what a
 * malformed grading request deserves. A document of several submissions
 * is gradable when one of them was graded; the others' problems are
 * listed in "format_errors" and each is a test of 0 points.
 *
 * Students see "message", "output", "tests" and "format_errors"; advice
 * for the grader (a misconception's instructor text) goes in a top-level
 * member of its own, "instructor_notes", which PrairieLearn stores with
 * the results ("any additional data") and does not render.
 */
#include <math.h>

#include "grade_lms.h"

static double bounded(double x, double max) {
    if (!(x >= 0))
        return 0;
    return x > max ? max : x;
}

/* A top-level list of one text per submission that wants it (want),
 * each "id: " and line's text, cut at cap bytes. */
static void put_lines(api_buf *out, api_buf *text, const char *member,
                      const api_grade_item *items, size_t n,
                      int (*want)(const api_grade_item *),
                      void (*line)(api_buf *, const api_grade_item *),
                      size_t cap) {
    api_buf_puts(out, member);
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        if (!want(&items[i]))
            continue;
        if (!first)
            api_buf_putc(out, ',');
        first = 0;
        if (items[i].id) {
            api_buf_append(text, items[i].id, items[i].id_len);
            api_buf_puts(text, ": ");
        }
        line(text, &items[i]);
        api_lms_put_text(out, text, cap);
    }
    api_buf_putc(out, ']');
}

static int not_graded(const api_grade_item *item) {
    return !item->grade;
}

static int has_note(const api_grade_item *item) {
    return api_grade_item_note(item) != NULL;
}

/* The batch's score (0 to 1): the points earned over those there were
 * to earn, 1 only when every submission earned all it was worth; and
 * how many submissions were graded, answered with a problem, and carry a
 * note for the instructor (*graded, *problems, *notes, zeroed). */
static double score_of(const api_grade_item *items, size_t n, size_t *graded,
                       size_t *problems, size_t *notes) {
    api_points_sum earned = {0}, possible = {0};
    int all_full = 1; /* every submission earned all it was worth */
    for (size_t i = 0; i < n; i++) {
        const api_grade *g = items[i].grade;
        if (g) {
            api_points_add(&earned, g->earned);
            api_points_add(&possible, g->possible);
            all_full &= g->earned == g->possible;
            (*graded)++;
            *notes += api_grade_item_note(&items[i]) != NULL;
        } else {
            api_points_add(&possible, items[i].problem_points);
            all_full = 0;
            (*problems)++;
        }
    }
    double e = api_points_total(&earned), p = api_points_total(&possible);
    /* full marks only for points there were to earn: 0 of 0 is no 1 */
    double score = !(p > 0) ? 0 : all_full && *graded ? 1 : e / p;
    if (!(score >= 0)) /* NaN: both sums overflowed */
        score = 0;
    if (score > 1)
        score = 1;
    return score;
}

/* One test of the document: the field f of item's grade, or (f NULL)
 * the submission answered with a problem; text is scratch space. */
static void put_test(api_buf *out, api_buf *text, const api_grade_item *item,
                     const api_grade_field *f, const api_lms_limits *lim) {
    const api_grade *g = item->grade;
    double max = f ? f->points : item->problem_points;
    api_buf_puts(out, "{\"name\":");
    api_grade_put_test_name(out, item, f ? f->name : NULL, lim->name);
    if (!lim->bare) {
        api_buf_puts(out, ",\"description\":");
        if (f) {
            api_buf_puts(text, "the answer's ");
            api_buf_puts(text, f->name);
            api_buf_puts(text, ", against ");
            api_buf_puts(text, g->endpoint);
            api_buf_puts(text, "'s own answer");
        } else {
            api_buf_puts(text, "the grading request of this submission");
        }
        api_lms_put_text(out, text, lim->text);
    }
    api_buf_puts(out, ",\"points\":");
    api_grade_put_number(out, f ? bounded(f->points * f->score, max) : 0);
    api_buf_puts(out, ",\"max_points\":");
    api_grade_put_number(out, max);
    api_buf_puts(out, !f        ? ",\"message\":\"not graded\""
                      : f->pass ? ",\"message\":\"pass\""
                                : ",\"message\":\"fail\"");
    if (!lim->bare) {
        api_buf_puts(out, ",\"output\":");
        if (f)
            api_grade_field_summary(text, g, f);
        else
            api_grade_item_summary(text, item);
        api_lms_put_text(out, text, lim->text);
    }
    api_buf_putc(out, '}');
}

int api_grade_write_prairielearn(const api_grade_item *items, size_t n,
                                 const api_lms_limits *lim, api_buf *out) {
    size_t start = out->len;
    size_t graded = 0, problems = 0, notes = 0;
    api_buf text = {0};
    double score = score_of(items, n, &graded, &problems, &notes);
    api_buf_puts(out, graded || n == 0 ? "{\"gradable\":true"
                                       : "{\"gradable\":false");
    api_buf_puts(out, ",\"score\":");
    api_grade_put_number(out, score);
    api_buf_puts(out, ",\"message\":");
    api_lms_put_summary(out, items, n, lim, 0);
    api_buf_puts(out, ",\"tests\":[");
    int first = 1, over = 0;
    for (size_t i = 0; i < n && !over; i++) {
        const api_grade *g = items[i].grade;
        size_t count = g ? g->n_fields : 1;
        for (size_t k = 0; k < count; k++) {
            if (!first)
                api_buf_putc(out, ',');
            first = 0;
            put_test(out, &text, &items[i], g ? &g->fields[k] : NULL, lim);
        }
        over = out->len - start > API_LMS_DOC_MAX;
    }
    api_buf_putc(out, ']');
    if (problems && !over)
        put_lines(out, &text, ",\"format_errors\":[", items, n, not_graded,
                  api_grade_item_summary, lim->bare ? lim->name : lim->text);
    if (notes && !lim->bare && !over)
        put_lines(out, &text, ",\"instructor_notes\":[", items, n, has_note,
                  api_grade_item_note_line, lim->text);
    api_buf_putc(out, '}');
    if (text.failed)
        out->failed = 1;
    api_buf_free(&text);
    return over || out->len - start > API_LMS_DOC_MAX;
}
