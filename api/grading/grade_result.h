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

#include "buf.h"
#include "problem.h"

struct api_misconception;

/* How a field was graded. */
typedef enum {
    API_GRADE_VALUES, /* numbers compared entry by entry (tensor, scalar,
                         records) */
    API_GRADE_SHAPE,  /* the shape differs from the reference's: no entry
                         compared */
    API_GRADE_EVENTS  /* diagnostics.warnings: entries equal or not */
} api_grade_kind;

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
    size_t mismatches; /* entries that do not match */
    size_t entries;    /* entries compared (a record's members each) */
    /* the first mismatch (has_first): its pointer into the grading request
     * and both values as JSON text, as the contract prints them */
    int has_first;
    api_buf first_pointer, first_expected, first_got;
    int explained; /* 1: the grade's misconception explains this field */
    /* scoring (api_grade_score) */
    double points; /* what the field is worth */
    double score;  /* in [0, 1] */
} api_grade_field;

/* One graded answer. Zeroed, it is empty; free it with api_grade_free. */
typedef struct {
    /* the request's "id", as JSON text (a string literal or an integer)
     * and as plain text for LMS test names; has_id 0: none given */
    int has_id;
    api_buf id_json, id_text;
    int pass;                /* every field passed */
    api_grade_field *fields; /* malloc'd, in the answer's order */
    size_t n_fields;
    /* pass 0: the catalogue's mistake that explains the most failed
     * fields (misconceptions.h), or NULL when none explains any */
    const struct api_misconception *misconception;
    char endpoint[64]; /* the graded route's path, for LMS descriptions */
    api_grade_credit credit;
    /* api_grade_score: sum of points·score, sum of points, their ratio */
    double earned, possible, score;
} api_grade;

/* Append a field named name (n bytes) to g, zeroed but for its name and
 * kind. Returns it, or NULL when memory runs out (g unchanged). */
api_grade_field *api_grade_add_field(api_grade *g, const char *name, size_t n,
                                     api_grade_kind kind);

/* Score g: each field's score from its verdict and g->credit
 * (all_or_nothing: pass; partial: (entries − mismatches) / entries, 1 for
 * no entries, 0 for a shape error), then earned = Σ points·score,
 * possible = Σ points and score = earned / possible (0 when possible is
 * 0, which the request checks rule out). The fields' points are set by
 * the caller first. */
void api_grade_score(api_grade *g);

/* Append g as attnd's JSON answer to POST /grade (docs/grading.md):
 *   {"id"?, "pass", "score", "points": {"earned", "possible"},
 *    "fields": {name: {"pass", "score", ...}}, "misconception"?}
 * misconception is written only when pass is false: {code, explanation,
 * fields} or null. Memory failures set out->failed. */
void api_grade_write(const api_grade *g, api_buf *out);

/* Release what g holds and zero it. */
void api_grade_free(api_grade *g);

/* Append x as the contract prints numbers (shortest round trip), null
 * when it is not finite. */
void api_grade_put_number(api_buf *out, double x);

#endif /* API_GRADE_RESULT_H */
