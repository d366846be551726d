/*
 * grade_entries.h — one graded field, entry by entry: the answer's value
 * and the reference's seen as tensors, compared under the field's
 * comparison (compare.h), and the values a grade quotes. Used by /grade
 * (grade.c) for a field's result and by the mistake search for whether a
 * mistake's answer matches the student's.
 */
#ifndef API_GRADE_ENTRIES_H
#define API_GRADE_ENTRIES_H

#include <jansson.h>
#include <stddef.h>

#include "buf.h"
#include "compare.h"
#include "pointer.h"
#include "result.h"

/* A field's value seen as a tensor: shape and entries in row-major order
 * (nested arrays, a {"shape", "data"} object, or one value of rank 0). */
typedef struct {
    size_t rank;
    size_t shape[API_SHAPE_MAX];
    int flat;              /* 1: entries are the flat "data" array's */
    size_t count;          /* entries */
    const json_t **leaves; /* malloc'd, count entries; or NULL when */
    const double *numbers; /* the fast path read them (fastpath.h) */
    int ragged;            /* 1: not rectangular; ragged_at says where */
    api_pointer ragged_at;
    size_t ragged_level; /* the dimension whose rows differ */
} api_grade_view;

/* The reference's value: one item of the endpoint's typed result
 * (result.h), its doubles compared as the endpoint's answer states them. */
typedef struct {
    const api_result *result;
    const api_result_item *item;
    size_t rank;
    size_t shape[API_SHAPE_MAX];
    size_t count;
} api_grade_ref_view;

/* One entry of the answer: a JSON value (NULL: absent), or a number the
 * fast path read. */
typedef struct {
    const json_t *json;
    double x;
    int fast;
} api_grade_got;

/* One expected entry: a number (printed with precision digits, as the
 * endpoint's answer prints it), an integer, or null. */
typedef struct {
    double x;
    int precision;
    int integer; /* 1: x is a whole number printed exactly */
    int is_null; /* a masked score, a statistic of no score */
} api_grade_expected;

/* What comparing a field's entries found. */
typedef struct {
    double max_abs, max_rel;
    size_t entries; /* compared */
    size_t mismatches;
    int rounded_to; /* the most decimals of a rounded match, or -1 */
    int have_first;
    size_t first_index;       /* the entry of the first mismatch */
    const char *first_member; /* its record member, or NULL */
    api_grade_expected first_expected;
    api_grade_got first_got;
} api_grade_tally;

/* Fill w from v, a value of the document doc (already type-checked: a
 * {"shape", "data"} object has integral dimensions ≥ 0 and len(data) =
 * prod(shape); pointer is v's, for where rows differ). w->leaves is malloc'd
 * (the caller frees it); numbers the fast path read point into them
 * (fastpath.h). Returns 0, or -1 when memory runs out. */
int api_grade_view_of(api_grade_view *w, const api_fastpath *doc,
                      const json_t *v, const char *pointer);

/* The reference's item it of r, as a view (nothing allocated). */
void api_grade_ref_view_of(api_grade_ref_view *w, const api_result *r,
                           const api_result_item *it);

/* 1 when a and b have the same rank and dimensions. */
int api_grade_same_shape(const api_grade_ref_view *a, const api_grade_view *b);

/* A JSON value as an entry, and entry i of w. */
api_grade_got api_grade_got_json(const json_t *v);
api_grade_got api_grade_got_at(const api_grade_view *w, size_t i);

/* Entry i of the reference against g, into t under c; a record's members
 * are entries each (t->first_member names the one that differs). */
void api_grade_compare_entries(const api_compare *c, api_grade_tally *t,
                               const api_grade_ref_view *w, size_t i,
                               api_grade_got g);

/* Every entry of the reference w against the answer's view got (of w's
 * shape), in order, as api_grade_compare_entries one by one would; with
 * first_only, only until the first mismatch. A tensor answered in numbers
 * the fast path read is compared in one tight loop, and only the entries
 * it cannot pass at once (api_compare_quick) take the entry's full
 * comparison. Returns 0, or -1 when the thread's time limit passed or
 * its client left (api_limit_time_is_up, asked every few hundred entries
 * compared in full, which an answer made to need them can make cost a
 * microsecond or more each): t then holds what was compared. */
int api_grade_compare_all(const api_compare *c, api_grade_tally *t,
                          const api_grade_ref_view *w,
                          const api_grade_view *got, int first_only);

/* x as the endpoint's answer states it: rounded to precision digits (0:
 * exactly x), the double its printed text reads back as. */
double api_grade_as_answered(double x, int precision);

/* The expected entry e as JSON (null, an integer, or a number at its
 * precision). */
void api_grade_put_expected(api_buf *out, const api_grade_expected *e);

/* A value as JSON, numbers printed as the contract prints them. */
void api_grade_put_value(api_buf *out, const json_t *v);

/* v as api_grade_put_value writes it, or, when that is longer than 200
 * bytes, cut there (whole UTF-8 characters) with "… (N more bytes)": a
 * string's own text, or the JSON text of an array or object, as a
 * string; so that no answer can make an LMS document pass its cap. */
void api_grade_put_quoted(api_buf *out, const json_t *v);

#endif /* API_GRADE_ENTRIES_H */
