/*
 * format_gradescope.c — grades as Gradescope's autograder results.json
 * (grade_lms.h; the "Autograder Specifications" page of Gradescope's
 * autograder documentation, section "Output format"; schema in
 * tests/grading/schemas/gradescope_results.schema.json).
 *
 * Gradescope scores in points: a test's "score" is the points the field
 * earned (its points × its score), "max_score" its points, and the
 * top-level "score" their sum, which Gradescope takes as the
 * submission's score. Every test is "visible": an instructor who wants
 * them hidden until the due date sets that on the assignment.
 */
#include "grade_lms.h"

/* "output": text as a JSON string. */
static void put_output(api_buf *out, api_buf *text) {
    if (text->failed)
        out->failed = 1;
    api_buf_puts(out, ",\"output\":");
    api_buf_json_string(out, text->data ? text->data : "", text->len);
    text->len = 0;
}

static void put_test(api_buf *out, int *first, const api_grade_item *item,
                     const char *field, double score, double max_score,
                     api_buf *text) {
    if (!*first)
        api_buf_putc(out, ',');
    *first = 0;
    api_buf_puts(out, "{\"name\":");
    api_grade_put_test_name(out, item, field);
    api_buf_puts(out, ",\"score\":");
    api_grade_put_number(out, score);
    api_buf_puts(out, ",\"max_score\":");
    api_grade_put_number(out, max_score);
    put_output(out, text);
    api_buf_puts(out, ",\"visibility\":\"visible\"}");
}

void api_grade_write_gradescope(const api_grade_item *items, size_t n,
                                api_buf *out) {
    double earned = 0;
    api_buf lines = {0}, text = {0};
    for (size_t i = 0; i < n; i++) {
        if (items[i].grade)
            earned += items[i].grade->earned;
        if (i)
            api_buf_putc(&lines, '\n');
        if (items[i].id && n > 1) {
            api_buf_append(&lines, items[i].id, items[i].id_len);
            api_buf_puts(&lines, ": ");
        }
        api_grade_item_summary(&lines, &items[i]);
    }
    api_buf_puts(out, "{\"score\":");
    api_grade_put_number(out, earned);
    put_output(out, &lines);
    api_buf_puts(out, ",\"tests\":[");
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        const api_grade *g = items[i].grade;
        if (!g) {
            api_grade_item_summary(&text, &items[i]);
            put_test(out, &first, &items[i], NULL, 0, items[i].problem_points,
                     &text);
            continue;
        }
        for (size_t k = 0; k < g->n_fields; k++) {
            const api_grade_field *f = &g->fields[k];
            api_grade_field_summary(&text, g, f);
            put_test(out, &first, &items[i], f->name, f->points * f->score,
                     f->points, &text);
        }
    }
    api_buf_puts(out, "]}");
    api_buf_free(&lines);
    api_buf_free(&text);
}
