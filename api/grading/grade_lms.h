/*
 * grade_lms.h — grades as the documents learning-management systems read
 * (docs/grading.md "LMS formats"): Gradescope's autograder results.json
 * and PrairieLearn's external-grader results. One document holds one
 * submission (POST /grade with "format") or many (a batch, the offline
 * grader): each graded field is one test, named by the field, prefixed
 * by the submission's id when it has one ("ada: output").
 *
 * A submission that could not be graded (a malformed grading request) is
 * a problem: in either format it is one test worth 0 of what the
 * submission would have been worth, with the problem as its text; in
 * PrairieLearn's also a format error (a document of problems only is
 * "gradable": false). Over HTTP a malformed single /grade stays a
 * problem+json 4xx: these forms are for documents of many submissions.
 */
#ifndef API_GRADE_LMS_H
#define API_GRADE_LMS_H

#include <jansson.h>
#include <stddef.h>

#include "buf.h"
#include "grade_result.h"
#include "problem.h"

/* The request's "format". */
typedef enum {
    API_GRADE_FORMAT_ATTND,       /* attnd's own answer (grade_result.h) */
    API_GRADE_FORMAT_GRADESCOPE,  /* Gradescope autograder results.json */
    API_GRADE_FORMAT_PRAIRIELEARN /* PrairieLearn external grader results */
} api_grade_format;

/* The format named by s (n bytes): "attnd", "gradescope" or
 * "prairielearn". Returns 0, or -1 for any other text (*fmt unchanged). */
int api_grade_format_parse(const char *s, size_t n, api_grade_format *fmt);

/* One submission of an LMS document: grade, or (grade NULL) problem. */
typedef struct {
    const char *id; /* the submission's id as text (id_len bytes), or NULL */
    size_t id_len;
    const api_grade *grade;     /* graded and scored (api_grade_score) */
    const api_problem *problem; /* why it could not be graded */
    double problem_points;      /* a problem's worth: its test's max points
                                   (api_grade_body_points gives an estimate) */
    api_grade_visibility problem_visibility; /* a problem's test's
                                   (api_grade_body_visibility); a grade's
                                   tests take grade->visibility */
} api_grade_item;

/* What the grading request body says its submission is worth, for a
 * submission that could not be graded: a number "points" as given; an
 * object's non-negative finite numbers added; otherwise 1 per member of
 * an "answer" object (1 point a field, the default), at least 1. Always
 * finite. */
double api_grade_body_points(const json_t *body);

/* The body's "visibility" when it is one of Gradescope's names, else
 * API_VISIBLE: for a submission that could not be graded. */
api_grade_visibility api_grade_body_visibility(const json_t *body);

/* Gradescope's name of v: "visible", "hidden", "after_due_date",
 * "after_published". */
const char *api_grade_visibility_name(api_grade_visibility v);

/* The most bytes an LMS document takes: PrairieLearn's limit for its
 * results file (1 MB), applied to Gradescope's results.json too. */
#define API_LMS_DOC_MAX 1000000

/* How much of each text a document keeps; a longer text is cut at a
 * UTF-8 boundary and ends "… (N more bytes)". api_grade_write_lms tries
 * ever smaller limits until the document fits in API_LMS_DOC_MAX; the
 * scores and points are written in full at every level. */
typedef struct {
    size_t name;    /* a test's name */
    size_t text;    /* a test's output and description, a line of the
                       summary, an instructor note, a format error */
    size_t summary; /* the document's "output" (Gradescope) or "message"
                       (PrairieLearn), all its lines */
    int bare;       /* 1: tests without their texts (and no instructor
                       notes); the summary says so */
} api_lms_limits;

/* Append the document of fmt (GRADESCOPE or PRAIRIELEARN) for items[0 ..
 * n) to out, at most API_LMS_DOC_MAX bytes:
 *   Gradescope:   {"score": Σ points earned, "output": one line per
 *                  submission, "tests": [{"name", "score", "max_score",
 *                  "output", "visibility": the submission's}, ...]}; a
 *                  graded submission whose misconception has instructor
 *                  text adds a test of 0 points, "visibility": "hidden",
 *                  named "<id>: notes for the instructor", holding it
 *   PrairieLearn: {"gradable": some submission was graded (n = 0: true),
 *                  "score": Σ earned / Σ possible in [0, 1], "message",
 *                  "tests": [{"name", "description", "points",
 *                  "max_points", "message", "output"}, ...],
 *                  "format_errors"?: one line per problem,
 *                  "instructor_notes"?: one line per submission whose
 *                  misconception has instructor text}
 * The sums are taken as the points print (api_points_sum), so that they
 * add back exactly; every score and points value is finite, in [0, its
 * maximum]. Returns 0; -1 for API_GRADE_FORMAT_ATTND (nothing written);
 * -2 when even the barest document (every text cut) would pass
 * API_LMS_DOC_MAX (too many tests: out is left as it was). Memory
 * failures set out->failed. */
int api_grade_write_lms(api_grade_format fmt, const api_grade_item *items,
                        size_t n, api_buf *out);

/* The two writers api_grade_write_lms chooses between
 * (format_gradescope.c, format_prairielearn.c), at the given limits.
 * Each returns 0, or 1 as soon as what it wrote since it started passes
 * API_LMS_DOC_MAX (the document is then unfinished). */
int api_grade_write_gradescope(const api_grade_item *items, size_t n,
                               const api_lms_limits *lim, api_buf *out);
int api_grade_write_prairielearn(const api_grade_item *items, size_t n,
                                 const api_lms_limits *lim, api_buf *out);

/* ---------------------------------------- text the two formats share */

/* A test's name: "<id>: <field>", or the field alone without an id
 * (field NULL: the id alone, or "submission"). As a JSON string; a name
 * longer than max bytes keeps its first and last max/2 bytes or so (ids
 * often differ at the end) with "… (N bytes cut) …" between them. */
void api_grade_put_test_name(api_buf *out, const api_grade_item *item,
                             const char *field, size_t max);

/* The name of the Gradescope test that holds instructor notes. */
#define API_LMS_NOTES_TEST "notes for the instructor"

/* s (n bytes) as a JSON string: whole when n <= max, else its first
 * bytes, at most max, ending at a UTF-8 boundary, then "… (N more
 * bytes)". */
void api_lms_put_cut(api_buf *out, const char *s, size_t n, size_t max);

/* The document's summary as a JSON string: one line per submission
 * (api_grade_item_summary), each cut to lim->text (lim->name when bare),
 * all of them to lim->summary. withhold (Gradescope, whose top-level
 * output every student sees): a submission whose tests are not visible
 * gets a line that says only when they are shown. A submission's line
 * starts "<id>: " when the document holds several and it has an id. */
void api_lms_put_summary(api_buf *out, const api_grade_item *items, size_t n,
                         const api_lms_limits *lim, int withhold);

/* text as api_lms_put_cut writes it; then text is emptied (its failure
 * passed on to out). */
void api_lms_put_text(api_buf *out, api_buf *text, size_t max);

/* The instructor's text about the item: a copy's note (copies.h), else
 * the instructor text of its misconception (misconceptions.h) for a
 * failed grade whose mistake has one; else NULL. Never part of what a
 * student sees. */
const char *api_grade_item_note(const api_grade_item *item);

/* The notes as one line: "misconception <code>: <instructor text>",
 * then "; " and the copy's note when there is one. */
void api_grade_item_note_line(api_buf *out, const api_grade_item *item);

/* One line for a person about field f of g (plain text, no newline):
 *   pass: 4 entries match (max abs err 1.55e-06, max rel err 9.28e-07)
 *   fail: 2 of 2 entries differ (max abs err 0.000238, max rel err
 *     0.000722); first at /answer/weights/0/0: expected 0.33023845, got
 *     0.33; misconception dot.no_scale: <explanation>
 *   fail: shape [2,4] where [2,1,4] is expected
 * The misconception is added to the fields it explains. */
void api_grade_field_summary(api_buf *out, const api_grade *g,
                             const api_grade_field *f);

/* One line about the whole submission:
 *   pass: 2 of 2 fields pass, 2 of 2 points
 *   fail: 1 of 2 fields pass, 1 of 2 points; misconception <code>: ...
 * or, for a problem, "not graded: <code> at <pointer>: <detail>". */
void api_grade_item_summary(api_buf *out, const api_grade_item *item);

#endif /* API_GRADE_LMS_H */
