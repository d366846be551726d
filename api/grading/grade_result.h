/*
 * grade_result.h — one graded answer as data (docs/grading.md): what
 * grade.c finds, field by field, and what every format writes from.
 *
 * Grading fills an api_grade; scoring (api_grade_score) turns its fields'
 * verdicts into scores and points; the encoders write it: attnd's own JSON
 * (api_grade_write, here) and the LMS documents (grade_lms.h). Keeping
 * the finding apart from the writing lets a batch hold many grades and
 * write them as one document.
 */
#ifndef API_GRADE_RESULT_H
#define API_GRADE_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "compare.h"
#include "problem.h"

struct api_misconception;

/* How a field was graded. */
typedef enum {
    API_GRADE_VALUES, /* numbers compared entry by entry (tensor, scalar,
                         records) */
    API_GRADE_SHAPE,  /* the shape differs from the reference's: no entry
                         compared */
    API_GRADE_EVENTS, /* diagnostics.warnings: entries equal or not */
    API_GRADE_MISSING /* a field the question grades ("fields") that the
                         answer does not give */
} api_grade_kind;

/* When Gradescope shows a test to the student (its "visibility"). */
typedef enum {
    API_VISIBLE, /* the default */
    API_HIDDEN,
    API_AFTER_DUE_DATE,
    API_AFTER_PUBLISHED
} api_grade_visibility;

/* How a field's verdict becomes its score (the request's "credit"). */
typedef enum {
    API_CREDIT_ALL_OR_NOTHING, /* 1 when the field passes, else 0 */
    API_CREDIT_PARTIAL         /* the fraction of its entries that match;
                                  a shape error scores 0 */
} api_grade_credit;

/* One graded field. */
typedef struct {
    char *name; /* dotted ("grads.queries"), malloc'd */
    api_grade_kind kind;
    int pass;
    /* API_GRADE_SHAPE: the reference's shape, and the answer's (along the
     * first elements when ragged, -1 for the dimension whose rows differ;
     * ragged_pointer, malloc'd, names the first such row, or NULL) */
    size_t expected_rank;
    size_t expected_shape[API_SHAPE_MAX];
    size_t got_rank;
    long long got_shape[API_SHAPE_MAX];
    char *ragged_pointer;
    /* API_GRADE_VALUES: both maxima over the entries where both values are
     * numbers (0 when none; not finite when a difference overflows a
     * double: written null); API_GRADE_EVENTS has no error sizes */
    double max_abs_err, max_rel_err;
    size_t mismatches;   /* entries that do not match */
    size_t entries;      /* entries compared (a record's members each) */
    api_compare compare; /* API_GRADE_VALUES: how entries were compared */
    /* the decimals the answer was rounded to: the most that an entry
     * matching only as the reference rounded (compare.h
     * API_MATCH_ROUNDED) shows (np.round(x, 6) drops trailing zeros, so
     * some show fewer), or -1 when none did */
    int rounded_to;
    /* a failed field's first mismatch is the reference rounded to fewer
     * decimals than the comparison takes: the decimals it shows, else -1 */
    int too_few_decimals;
    /* the first mismatch (has_first): its pointer into the grading request
     * and both values as JSON text, as the contract prints them */
    int has_first;
    api_buf first_pointer, first_expected, first_got;
    int explained; /* 1: the grade's misconception explains this field */
    /* scoring (api_grade_score) */
    double points; /* what the field is worth */
    double score;  /* in [0, 1] */
} api_grade_field;

/* What a copy check (copies.h) needs of a field graded entry by entry:
 * its comparison, and at most API_GRADE_SAMPLE_MAX of its entries,
 * evenly spaced and the same for every answer of the field's shape, as
 * the reference states them and as the answer gives them (NaN where the
 * answer's entry is not a number). */
#define API_GRADE_SAMPLE_MAX 256
typedef struct {
    char *name; /* malloc'd */
    api_compare compare;
    size_t count; /* the field's entries */
    size_t taken; /* of them, sampled: min(count, API_GRADE_SAMPLE_MAX) */
    double expected[API_GRADE_SAMPLE_MAX], got[API_GRADE_SAMPLE_MAX];
} api_grade_sample_field;

/* A variant's grade as a copy check sees it: whose variant it was drawn
 * for, and its fields graded entry by entry. */
typedef struct {
    char *variant; /* the student's (or group's) id, malloc'd */
    api_grade_sample_field *fields;
    size_t n_fields, cap;
} api_grade_sample;

/* Entry k (< API_GRADE_SAMPLE_MAX) of the sample of a field of count
 * entries: k·count / taken. */
size_t api_grade_sample_index(size_t k, size_t count);

/* One graded answer. Zeroed, it is empty; free it with api_grade_free. */
typedef struct {
    /* the request's "id", as JSON text (a string literal or an integer)
     * and as plain text for LMS test names; has_id 0: none given */
    int has_id;
    api_buf id_json, id_text;
    int pass;                /* every field passed */
    api_grade_field *fields; /* malloc'd, in the answer's order */
    size_t n_fields, fields_cap;
    /* pass 0: the catalogue's mistake that explains the most failed
     * fields (misconceptions.h), or NULL when none explains any */
    const struct api_misconception *misconception;
    char endpoint[64]; /* the graded route's path, for LMS descriptions */
    api_grade_credit credit;
    api_grade_visibility visibility;
    int hide_expected; /* "show_expected": false: no reference value is
                          quoted (the first mismatch's "expected") */
    /* the request's "points" when a number (split equally over the
     * fields), else 0 */
    double total_points;
    /* with a "points" object: the values fields take their points from,
     * added exactly (a group's split over its fields adds back to it) */
    double rubric_points;
    /* api_grade_score: points earned, points possible, their ratio */
    double earned, possible, score;
    /* a variant's grade, when the grader asked for a sample (grade.h):
     * malloc'd, or NULL */
    api_grade_sample *sample;
    /* for the instructor alone (never a student's text): a copy found by
     * the batch (copies.h), one line, or empty */
    api_buf copy_note;
} api_grade;

/* Append a field named name (n bytes) to g, zeroed but for its name and
 * kind. Returns it, or NULL when memory runs out (g unchanged). */
api_grade_field *api_grade_add_field(api_grade *g, const char *name, size_t n,
                                     api_grade_kind kind);

/* Score g: each field's score from its verdict and g->credit
 * (all_or_nothing: pass; partial: (entries − mismatches) / entries, 1 for
 * no entries, 0 for a shape error or a missing field), then the points.
 * They add back exactly to what was given: with total_points, possible is
 * total_points and earned total_points · (Σ score) / n (exactly
 * total_points when every field scores 1); otherwise possible is
 * rubric_points when set, else the sum of the fields' points, and earned the
 * sum of points · score, each sum taken in decimal as the points were written
 * (0.1 + 0.2 is 0.3), and exactly possible when every field scores 1. earned is
 * kept in [0, possible] and score = earned / possible in [0, 1] (0 when
 * possible is 0, which the request checks rule out); all are finite when the
 * points are. The fields' points are set by the caller first. */
void api_grade_score(api_grade *g);

/* A sum of points taken as the decimals they print as (shortest round
 * trip), so that 0.1 and 0.2 add up to 0.3 and seven sevenths of 1 to 1
 * when the terms are the same: an exact integer of digits · 10^exponent
 * while it fits in 63 bits, the plain (long double) sum past that or for
 * a term that is not finite and ≥ 0 (inexact). Zeroed, it is 0. */
typedef struct {
    uint64_t digits;
    int exponent;
    int inexact;
    long double plain;
} api_points_sum;

/* Add x to s. */
void api_points_add(api_points_sum *s, double x);

/* The sum, correctly rounded from the exact decimal when exact. */
double api_points_total(const api_points_sum *s);

/* Append g as attnd's JSON answer to POST /grade (docs/grading.md):
 *   {"id"?, "pass", "score", "points": {"earned", "possible"},
 *    "fields": {name: {"pass", "score", ...}}, "misconception"?}
 * misconception is written only when pass is false: {code, explanation,
 * "instructor_note"?, fields} or null, the note (the catalogue's
 * instructor text) only when the mistake has one. Memory failures set
 * out->failed. */
void api_grade_write(const api_grade *g, api_buf *out);

/* Release what g holds and zero it. */
void api_grade_free(api_grade *g);

/* Append x as the contract prints numbers (shortest round trip), null
 * when it is not finite. */
void api_grade_put_number(api_buf *out, double x);

#endif /* API_GRADE_RESULT_H */
