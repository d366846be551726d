/*
 * format_gradescope.c — grades as Gradescope's autograder results.json
 * (grade_lms.h; the "Autograder Specifications" page of Gradescope's
 * autograder documentation, section "Output format"; schema in
 * tests/grading/schemas/gradescope_results.schema.json).
 *
 * Gradescope scores in points: a test's "score" is the points the field
 * earned (its points × its score), "max_score" its points, and the
 * top-level "score" their sum, which Gradescope takes as the
 * submission's score. Each test carries its submission's "visibility"
 * (the grading request's, "visible" by default); a submission whose
 * tests are not visible has no details in the top-level "output" either,
 * which students always see. Advice for the grader (a misconception's
 * instructor text) is a test of its own, 0 of 0 points and "hidden",
 * which Gradescope shows instructors only.
 */
#include <float.h>
#include <math.h>

#include "grade_lms.h"

/* x in [0, max], finite (max is finite: grade.c and the body's points
 * make it so). */
static double bounded(double x, double max) {
    if (!(x >= 0))
        return 0;
    return x > max ? max : x;
}

static void put_test(api_buf *out, int *first, const api_grade_item *item,
                     const char *field, double score, double max_score,
                     api_buf *text, api_grade_visibility vis,
                     const api_lms_limits *lim) {
    if (!*first)
        api_buf_putc(out, ',');
    *first = 0;
    api_buf_puts(out, "{\"name\":");
    api_grade_put_test_name(out, item, field, lim->name);
    api_buf_puts(out, ",\"score\":");
    api_grade_put_number(out, bounded(score, max_score));
    api_buf_puts(out, ",\"max_score\":");
    api_grade_put_number(out, max_score);
    if (!lim->bare) {
        api_buf_puts(out, ",\"output\":");
        api_lms_put_text(out, text, lim->text);
    }
    text->len = 0;
    if (!lim->bare || vis != API_VISIBLE) { /* visible is the default */
        api_buf_puts(out, ",\"visibility\":\"");
        api_buf_puts(out, api_grade_visibility_name(vis));
        api_buf_putc(out, '"');
    }
    api_buf_putc(out, '}');
}

int api_grade_write_gradescope(const api_grade_item *items, size_t n,
                               const api_lms_limits *lim, api_buf *out) {
    size_t start = out->len;
    api_points_sum earned = {0};
    api_buf text = {0};
    for (size_t i = 0; i < n; i++)
        if (items[i].grade)
            api_points_add(&earned, items[i].grade->earned);
    double total = api_points_total(&earned);
    if (!isfinite(total))
        total = DBL_MAX;
    api_buf_puts(out, "{\"score\":");
    api_grade_put_number(out, total < 0 ? 0 : total);
    api_buf_puts(out, ",\"output\":");
    api_lms_put_summary(out, items, n, lim, 1);
    api_buf_puts(out, ",\"tests\":[");
    int first = 1, over = 0;
    for (size_t i = 0; i < n && !over; i++) {
        const api_grade *g = items[i].grade;
        if (!g) {
            if (!lim->bare)
                api_grade_item_summary(&text, &items[i]);
            put_test(out, &first, &items[i], NULL, 0, items[i].problem_points,
                     &text, items[i].problem_visibility, lim);
        } else {
            for (size_t k = 0; k < g->n_fields; k++) {
                const api_grade_field *f = &g->fields[k];
                if (!lim->bare)
                    api_grade_field_summary(&text, g, f);
                put_test(out, &first, &items[i], f->name, f->points * f->score,
                         f->points, &text, g->visibility, lim);
            }
            if (!lim->bare && api_grade_item_note(&items[i])) {
                api_grade_item_note_line(&text, &items[i]);
                put_test(out, &first, &items[i], API_LMS_NOTES_TEST, 0, 0,
                         &text, API_HIDDEN, lim);
            }
        }
        over = out->len - start > API_LMS_DOC_MAX;
    }
    api_buf_puts(out, "]}");
    if (text.failed)
        out->failed = 1;
    api_buf_free(&text);
    return over || out->len - start > API_LMS_DOC_MAX;
}
