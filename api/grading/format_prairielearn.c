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
 */
#include "grade_lms.h"

static void put_string(api_buf *out, api_buf *text) {
    if (text->failed)
        out->failed = 1;
    api_buf_json_string(out, text->data ? text->data : "", text->len);
    text->len = 0;
}

void api_grade_write_prairielearn(const api_grade_item *items, size_t n,
                                  api_buf *out) {
    double earned = 0, possible = 0;
    size_t graded = 0, problems = 0;
    api_buf text = {0};
    for (size_t i = 0; i < n; i++) {
        if (items[i].grade) {
            earned += items[i].grade->earned;
            possible += items[i].grade->possible;
            graded++;
        } else {
            possible += items[i].problem_points;
            problems++;
        }
        if (i)
            api_buf_putc(&text, '\n');
        if (items[i].id && n > 1) {
            api_buf_append(&text, items[i].id, items[i].id_len);
            api_buf_puts(&text, ": ");
        }
        api_grade_item_summary(&text, &items[i]);
    }
    double score = possible > 0 ? earned / possible : 0;
    if (score > 1)
        score = 1;
    api_buf_puts(out, graded || n == 0 ? "{\"gradable\":true"
                                       : "{\"gradable\":false");
    api_buf_puts(out, ",\"score\":");
    api_grade_put_number(out, score);
    api_buf_puts(out, ",\"message\":");
    put_string(out, &text);
    api_buf_puts(out, ",\"tests\":[");
    int first = 1;
    for (size_t i = 0; i < n; i++) {
        const api_grade *g = items[i].grade;
        size_t count = g ? g->n_fields : 1;
        for (size_t k = 0; k < count; k++) {
            const api_grade_field *f = g ? &g->fields[k] : NULL;
            if (!first)
                api_buf_putc(out, ',');
            first = 0;
            api_buf_puts(out, "{\"name\":");
            api_grade_put_test_name(out, &items[i], f ? f->name : NULL);
            api_buf_puts(out, ",\"description\":");
            if (f) {
                api_buf_puts(&text, "the answer's ");
                api_buf_puts(&text, f->name);
                api_buf_puts(&text, ", against ");
                api_buf_puts(&text, g->endpoint);
                api_buf_puts(&text, "'s own answer");
            } else {
                api_buf_puts(&text, "the grading request of this submission");
            }
            put_string(out, &text);
            api_buf_puts(out, ",\"points\":");
            api_grade_put_number(out, f ? f->points * f->score : 0);
            api_buf_puts(out, ",\"max_points\":");
            api_grade_put_number(out, f ? f->points : items[i].problem_points);
            api_buf_puts(out, ",\"message\":");
            if (!f)
                api_buf_puts(&text, "not graded");
            else if (f->pass)
                api_buf_puts(&text, "pass");
            else
                api_buf_puts(&text, "fail");
            put_string(out, &text);
            api_buf_puts(out, ",\"output\":");
            if (f)
                api_grade_field_summary(&text, g, f);
            else
                api_grade_item_summary(&text, &items[i]);
            put_string(out, &text);
            api_buf_putc(out, '}');
        }
    }
    api_buf_putc(out, ']');
    if (problems) {
        api_buf_puts(out, ",\"format_errors\":[");
        first = 1;
        for (size_t i = 0; i < n; i++) {
            if (items[i].grade)
                continue;
            if (!first)
                api_buf_putc(out, ',');
            first = 0;
            if (items[i].id) {
                api_buf_append(&text, items[i].id, items[i].id_len);
                api_buf_puts(&text, ": ");
            }
            api_grade_item_summary(&text, &items[i]);
            put_string(out, &text);
        }
        api_buf_putc(out, ']');
    }
    api_buf_putc(out, '}');
    api_buf_free(&text);
}
