/*
 * grader.h — the state of one grade and the steps of /grade that its
 * files share (grading/ alone includes this): grade_settings.c reads the
 * grading request's members, grade_walk.c walks the answer and grades
 * each field, grade_search.c looks for the mistake behind a wrong answer,
 * and grade.c runs them in the order of checks (grade.c's comment).
 */
#ifndef API_GRADER_H
#define API_GRADER_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "answers.h"
#include "call.h"
#include "compare.h"
#include "grade_lms.h"
#include "grade_result.h"
#include "pointer.h"
#include "problem.h"
#include "result.h"
#include "route.h"

struct api_grade_references; /* grade.h */

/* The answer is walked once per phase, each a kind of check, so that the
 * first error by grade.c's order of checks is the one answered. */
enum phase {
    PHASE_UNKNOWN, /* names against the endpoint's answer fields */
    PHASE_MISSING, /* {"shape", "data"} members present */
    PHASE_TYPES,   /* nested results are objects, shape and data arrays */
    PHASE_SIZES,   /* {"shape", "data"}: dimensions ≥ 0, len(data) */
    PHASE_PRESENT, /* the reference has every field given */
    PHASE_GRADE    /* compare and write the results */
};

/* The most names a "did you mean" among a route's fields weighs. */
#define GRADABLE_NAMES_MAX 64

/* The longest answer field name (answers.h names are far shorter). */
#define FAILED_NAME_MAX 96

/* One grade in the making: what the request set, the reference, and the
 * fields graded so far. */
typedef struct {
    const api_answer_table *table;
    const api_route *route;
    const api_result *reference; /* the endpoint's answer (PRESENT, GRADE) */
    api_compare compare;         /* for the fields compare_map does not name */
    const json_t *compare_map;   /* "compare" by field, or NULL */
    const json_t *fields_list;   /* "fields", or NULL: grade what is given */
    /* "fields" as sets, so that no lookup walks the list: each listed
     * name → its first index, and each group on the way to one → true
     * (both owned; NULL without "fields") */
    json_t *listed_index, *listed_ways;
    size_t fields;          /* graded fields seen */
    int all_pass;           /* GRADE: every field passed */
    api_grade *grade;       /* GRADE: the fields' results go here */
    uint64_t reference_ops; /* what computing the reference counted */
    double reference_ms;    /* and how long it took (ms) */
    double started_ms;      /* when the grade began (api_clock_ms) */
    api_problem *p;
    const api_fastpath *doc; /* the grading request's document (call.h) */
    /* 1: the mistake search tries every mistake even once one explains
     * every failed field: a batch's shared request, whose entry is then
     * complete and spares later equal requests their parse */
    int search_all;
    /* GRADE: the fields that failed, for the misconceptions to explain */
    struct failed_field {
        char name[FAILED_NAME_MAX];
        char pointer[FAILED_NAME_MAX + 8]; /* "/answer/" + the name's path */
        const json_t *value;
        size_t field; /* its index in grade->fields */
    } failed[API_RESULT_ITEMS_MAX];
    size_t n_failed;
} grader;

/* The grading request's own members: unknown_field (with the closest
 * name, or where a misplaced one belongs), missing_field, and wrong_type
 * for each member's kind (grade.c's order of checks). */
int api_grader_check_members(const json_t *body, api_problem *p);

/* The gradable route endpoint names, or invalid_value at /endpoint with
 * the closest of them ("attention/dot": "/attention/dot") and their list,
 * read from the route table so that a new route is in it. */
int api_grader_find_endpoint(const json_t *body, const api_route **route,
                             const api_answer_table **table, api_problem *p);

/* "fields": a non-empty array of names the endpoint answers with. */
int api_grader_check_fields(grader *g, const json_t *body, api_problem *p);

/* "compare", with "rtol" and "atol": g->compare for every field, and
 * g->compare_map for the fields it names. Without "compare", rtol/atol
 * given mean relabs with them (as before comparisons had modes), neither
 * the default (compare.h). With a comparison, rtol/atol belong inside it. */
int api_grader_read_compare(grader *g, const json_t *body, api_problem *p);

/* "visibility": Gradescope's, for every test of the submission. */
int api_grader_read_visibility(const json_t *body, api_grade_visibility *out,
                               api_problem *p);

/* "credit" and "format": invalid_value for a name of neither. */
int api_grader_read_choices(const json_t *body, api_grade_credit *credit,
                            api_grade_format *format, api_problem *p);

/* The checks of "points" (grade.c's order of checks). */
int api_grader_check_points(const grader *g, const json_t *body,
                            api_problem *p);

/* Each field's points: 1 without "points"; a number split equally over
 * the fields; an object's value for a field, or for a group that holds
 * it, split equally over the fields that take it. Returns 0, or -1 (the
 * problem set) when memory runs out. */
int api_grader_assign_points(grader *g, const json_t *body);

/* The request's "id" into grade, as JSON and as text. */
void api_grader_copy_id(api_grade *grade, const json_t *body);

/* NW history: a group whose members are members of every record. */
int api_grader_is_records(const api_answer_table *t, const char *name,
                          size_t len);

/* diagnostics.warnings: a list of events (diagnostics.h), not in the
 * answer table, graded as a list. */
int api_grader_is_events(const api_answer_table *t, const char *name,
                         size_t len);

/* 1 when name (len bytes) names something the endpoint answers with,
 * under the dotted names the grade reports: a field, a group of them
 * ("grads"), NW's history, diagnostics.warnings, or a key of a tensors
 * field ("state_dict.layers.0.linear1.weight"). */
int api_grader_gradable_name(const grader *g, const char *name, size_t len);

/* The index in "fields" of name (len bytes) or of the nearest group that
 * holds it ("grads" for "grads.queries"), or -1: one lookup per dot up to
 * the most a listed name has, however many the name has. */
long long api_grader_listed_at(const grader *g, const char *name, size_t len);

/* The position in "fields" of the name on field's path (the order the
 * question lists its fields in), or the list's length. */
size_t api_grader_listed_rank(const grader *g, const char *field);

/* The reference's item of the dotted name, or NULL when it has none. */
const api_result_item *api_grader_reference_item(const grader *g,
                                                 const char *name);

/* The comparison of the dotted field name: compare_map's entry for it or
 * for the nearest group that holds it ("grads" for "grads.queries"),
 * else the request's. The map was read once already (read_compare); a
 * name is looked up at most once per dot in it, whatever the map holds. */
api_compare api_grader_comparison_of(const grader *g, const char *name);

/* A new field of the grade, or internal "out of memory". */
api_grade_field *api_grader_new_field(grader *g, const char *name,
                                      api_grade_kind kind);

/* The member key of the reference's TENSORS item group as a TENSOR item
 * in *out (pointing into the reference). Returns 0: no such item (the
 * request did not ask for the group), 1: no such key, 2: found. */
int api_grader_reference_member(const grader *g, const char *group,
                                const char *key, api_result_item *out);

/* Walk answer once in phase ph: 0, or -1 with g->p set at the first
 * error (PHASE_GRADE: each field graded into g->grade). */
int api_grader_run_phase(grader *g, enum phase ph, const json_t *answer);

/* The answer's value of the dotted field name, when it is a field the
 * answer grades (given, not null), else NULL. */
const json_t *api_grader_graded_value(const grader *g, const json_t *answer,
                                      const char *name);

/* The catalogue's mistake (misconceptions.h) that explains the most
 * failed fields (the first of equals) into g->grade->misconception, and
 * the fields it explains marked; NULL when none explains any. */
void api_grader_find_misconception(grader *g, api_call *call,
                                   const struct api_grade_references *refs,
                                   const json_t *request);

#endif /* API_GRADER_H */
