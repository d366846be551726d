/*
 * grade.c — POST /grade: check a student's answer against the
 * answer attnd computes for the same request (docs/contract.md section 13).
 *
 *   {"endpoint": "/attention/dot", "request": {...}, "answer": {...},
 *    "rtol": 1e-5, "atol": 1e-8, "id"?, "points"?, "credit"?, "format"?}
 *   -> {"id"?, "pass": bool, "score", "points": {"earned", "possible"},
 *       "fields": {"<name>": result, ...}, "misconception"?}
 *
 * The endpoint's own handler answers the embedded request (invoke.h), so
 * the reference, and every error in the request (pointer prefixed with
 * /request), is exactly what the endpoint itself would give. For a GET
 * endpoint the request object holds its query parameters (numbers and
 * strings; null = absent).
 *
 * Fields are graded where the answer gives them, by the names the
 * endpoint answers with (answers.h); nested results are objects as in the
 * endpoint's answer ({"grads": {"queries": ...}}) and are reported with
 * dotted names ("grads.queries"). A tensor may be nested arrays or
 * {"shape", "data"}; a scalar (loss, w, scale) is a number, rank 0; NW's
 * history is graded as one field, an array of {"epoch", "w", "loss"}.
 * Each entry is compared under the field's comparison (compare.h: the
 * request's "compare", per field or for all; "rtol"/"atol" alone mean
 * relabs; by default relabs_or_rounded, which takes an answer rounded as
 * students write numbers); an api_grade_expected null (a masked score,
 * statistics of no score) matches only null; a non-number where a number
 * belongs (JSON has no NaN, so null stands for one) is a mismatch. Per field:
 *   {"pass", "score", "max_abs_err", "max_rel_err" (over entries whose expected
 *    value is not 0), "mismatches", "first_mismatch": {"pointer" (into
 *    this request, /answer/...), "expected", "got"} or null}
 * both maxima over the entries where both values are numbers (0 when
 * there are none; null when the difference overflows a double). A field
 * whose shape differs from the reference's (ragged arrays included) is
 *   {"pass": false, "score": 0, "error": "shape", "expected": [...],
 *    "got": [...], "pointer"?: the first ragged row}
 * where a ragged answer's "got" follows the first elements and gives -1
 * for the dimension whose rows differ in length or depth.
 *
 * Grading fills a typed grade (grade_result.h), scored by the request's
 * "credit" and "points" (each field 1 point unless "points" says
 * otherwise: a number is split equally over the graded fields, an object
 * gives the fields it names their points and the others 0), and written
 * in the request's "format": attnd's own JSON, or an LMS document
 * (grade_lms.h).
 *
 * With "fields", the answer members off the listed fields are passed
 * over and a listed field the answer lacks fails as {"error":
 * "missing"}; so does, without "fields", a field a "points" object names.
 * "show_expected": false quotes no reference value.
 *
 * Checks, first error wins: the grading request's own members
 * (unknown_field, missing_field, wrong_type: id a string or an integer,
 * points a number or an object, credit, format and visibility strings,
 * compare a string or an object, fields an array, show_expected a
 * boolean) → endpoint (invalid_value unless it names a computing route)
 * → fields (each a name the endpoint answers with) → the answer's
 * members against the endpoint's answer fields (unknown_field at
 * /answer/<field>, then missing_field and wrong_type of {"shape", "data"}
 * objects and nested results) → {"shape", "data"} sizes (a negative
 * dimension is invalid_value, len(data) ≠ prod(shape) shape_mismatch) →
 * rtol, atol, compare, credit, format, visibility (invalid_value) →
 * points (a number: invalid_value unless > 0; an object: each entry in
 * order wrong_type unless a number, invalid_value when negative or when
 * it names no field, at /points/<name>; then invalid_value at /points
 * unless they add up to a finite number > 0) → the embedded request, by
 * the endpoint's own rules (/request/...) → a name of "fields", a
 * "points" object or a "compare" map that the reference does not answer
 * (invalid_value at /fields/<i>, /points/<name>, /compare/<name>) → an
 * answer field the reference lacks (invalid_value at /answer/<field>,
 * saying what the request needs) → nothing to grade (invalid_value at
 * /answer).
 */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answers.h"
#include "call.h"
#include "compare.h"
#include "fastpath.h"
#include "fields.h"
#include "foreign_names.h"
#include "grade.h"
#include "grade_entries.h"
#include "grade_lms.h"
#include "invoke.h"
#include "misconceptions.h"
#include "numfmt.h"
#include "pointer.h"
#include "route.h"
#include "suggest.h"
#include "tensor.h"

/* ------------------------------------------------ the request members */

static const char *const members[] = {
    "endpoint", "request",    "answer",       "rtol",   "atol",
    "id",       "points",     "credit",       "format", "compare",
    "fields",   "visibility", "show_expected"};
#define N_MEMBERS (sizeof members / sizeof members[0])
#define MEMBER_LIST                                                            \
    "endpoint, request, answer, rtol, atol, id, points, credit, format, "      \
    "compare, fields, visibility, show_expected"

static int check_members(const json_t *body, api_problem *p) {
    const char *key;
    const json_t *v;
    /* unknown_field */
    json_object_foreach((json_t *)body, key, v) {
        int known = 0;
        for (size_t i = 0; i < N_MEMBERS && !known; i++)
            known = !strcmp(key, members[i]);
        if (known)
            continue;
        api_pointer ptr;
        api_pointer_init(&ptr, "");
        api_pointer_push_key(&ptr, key, strlen(key));
        const char *foreign = api_foreign_name(key, members, N_MEMBERS);
        if (foreign)
            return api_fail(p, API_E_UNKNOWN_FIELD, ptr.s,
                            "unknown field `%s` in /grade: `%s` %s. Known "
                            "fields: " MEMBER_LIST,
                            key, key, foreign);
        char hint[API_SUGGEST_TEXT];
        return api_fail(
            p, API_E_UNKNOWN_FIELD, ptr.s,
            "unknown field `%s` in /grade%s Known fields: " MEMBER_LIST, key,
            api_did_you_mean(hint, key, strlen(key), members, N_MEMBERS));
    }
    /* missing_field (null = absent) */
    for (size_t i = 0; i < 3; i++)
        if (json_is_null(json_object_get(body, members[i])) ||
            !json_object_get(body, members[i])) {
            char pointer[32];
            snprintf(pointer, sizeof pointer, "/%s", members[i]);
            return api_fail(p, API_E_MISSING_FIELD, pointer,
                            "/grade needs `%s`: {\"endpoint\": "
                            "\"/attention/dot\", \"request\": {...}, "
                            "\"answer\": {...}}",
                            members[i]);
        }
    /* wrong_type */
    v = json_object_get(body, "endpoint");
    if (!json_is_string(v))
        return api_fail(p, API_E_WRONG_TYPE, "/endpoint",
                        "endpoint must be a route's path such as "
                        "\"/attention/dot\"; got %s",
                        api_json_kind(v));
    v = json_object_get(body, "request");
    if (!json_is_object(v))
        return api_fail(p, API_E_WRONG_TYPE, "/request",
                        "request must be an object: the body you would send "
                        "to the endpoint (its query parameters for a GET "
                        "endpoint); got %s",
                        api_json_kind(v));
    v = json_object_get(body, "answer");
    if (!json_is_object(v))
        return api_fail(p, API_E_WRONG_TYPE, "/answer",
                        "answer must be an object of the fields to grade, "
                        "named as the endpoint answers them; got %s",
                        api_json_kind(v));
    for (size_t i = 3; i < 5; i++) {
        v = api_field_value(body, members[i]);
        if (v && !json_is_number(v)) {
            char pointer[32];
            snprintf(pointer, sizeof pointer, "/%s", members[i]);
            return api_fail(p, API_E_WRONG_TYPE, pointer,
                            "%s must be a number; got %s", members[i],
                            api_json_kind(v));
        }
    }
    v = api_field_value(body, "id");
    if (v && !json_is_string(v) && !json_is_integer(v))
        return api_fail(p, API_E_WRONG_TYPE, "/id",
                        "id names the submission: a string or an integer, "
                        "echoed in the answer; got %s",
                        api_json_kind(v));
    /* an LMS document repeats the id in every test's name */
    if (json_is_string(v) && json_string_length(v) > API_GRADE_ID_MAX)
        return api_fail(p, API_E_INVALID_VALUE, "/id",
                        "id names the submission in at most %d bytes (a "
                        "student number, a login); got %zu",
                        API_GRADE_ID_MAX, json_string_length(v));
    v = api_field_value(body, "points");
    if (v && !json_is_number(v) && !json_is_object(v))
        return api_fail(p, API_E_WRONG_TYPE, "/points",
                        "points is what the submission is worth: a number "
                        "(split equally over its graded fields) or an object "
                        "of points per field, {\"output\": 2}; got %s",
                        api_json_kind(v));
    static const struct {
        const char *name, *choices;
    } choices[] = {
        {"credit", "all_or_nothing, partial"},
        {"format", "attnd, gradescope, prairielearn"},
        {"visibility", "visible, hidden, after_due_date, after_published"},
    };
    for (size_t i = 0; i < sizeof choices / sizeof choices[0]; i++) {
        v = api_field_value(body, choices[i].name);
        if (v && !json_is_string(v)) {
            char pointer[32];
            snprintf(pointer, sizeof pointer, "/%s", choices[i].name);
            return api_fail(p, API_E_WRONG_TYPE, pointer,
                            "%s must be a string, one of %s; got %s",
                            choices[i].name, choices[i].choices,
                            api_json_kind(v));
        }
    }
    v = api_field_value(body, "compare");
    if (v && !json_is_string(v) && !json_is_object(v))
        return api_fail(p, API_E_WRONG_TYPE, "/compare",
                        "compare is a comparison (\"sigfig\", {\"mode\": "
                        "\"sigfig\", \"digits\": 4}) or an object of them by "
                        "field ({\"weights\": \"decdig\"}); got %s",
                        api_json_kind(v));
    v = api_field_value(body, "show_expected");
    if (v && !json_is_boolean(v))
        return api_fail(p, API_E_WRONG_TYPE, "/show_expected",
                        "show_expected is true (the default: a failed "
                        "field quotes the reference's value at its first "
                        "mismatch) or false; got %s",
                        api_json_kind(v));
    v = api_field_value(body, "fields");
    if (v && !json_is_array(v))
        return api_fail(p, API_E_WRONG_TYPE, "/fields",
                        "fields lists the fields the question grades by "
                        "their dotted names, [\"output\", \"weights\"]; got "
                        "%s",
                        api_json_kind(v));
    return 0;
}

/* Room for the gradable routes' paths (the table has 23 routes). */
#define GRADABLE_MAX 64

/* The paths of the routes /grade grades (those with an answer table), in
 * table order, at most cap of them, into paths; returns how many. */
static size_t gradable_paths(const char **paths, size_t cap) {
    size_t n = 0;
    for (size_t r = 0; r < api_route_count() && n < cap; r++)
        if (api_route_at(r)->answer)
            paths[n++] = api_route_at(r)->path;
    return n;
}

/* The gradable route endpoint names, or invalid_value at /endpoint with
 * the closest of them ("attention/dot": "/attention/dot") and their list,
 * read from the route table so that a new route is in it. */
static int find_endpoint(const json_t *body, const api_route **route,
                         const api_answer_table **table, api_problem *p) {
    const json_t *v = json_object_get(body, "endpoint");
    const char *path = json_string_value(v);
    size_t len = json_string_length(v);
    *route = strlen(path) == len ? api_route_find(path) : NULL;
    *table = *route ? (*route)->answer : NULL;
    if (*table)
        return 0;
    const char *paths[GRADABLE_MAX];
    size_t n = gradable_paths(paths, GRADABLE_MAX);
    char hint[API_SUGGEST_TEXT], list[512];
    api_join_names(list, sizeof list, paths, n);
    if (strlen(path) != len) /* printed, it would end at the NUL */
        return api_fail(p, API_E_INVALID_VALUE, "/endpoint",
                        "the endpoint holds a NUL byte (\\u0000), which no "
                        "route's path has. Grade one of: %s",
                        list);
    api_did_you_mean(hint, path, len, paths, n);
    return api_fail(p, API_E_INVALID_VALUE, "/endpoint",
                    "`%.100s` is not a route that computes an answer%s "
                    "Grade one of: %s",
                    path, hint, list);
}

/* ------------------------------------------------ walking the answer */

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
    /* GRADE: the fields that failed, for the misconceptions to explain */
    struct failed_field {
        char name[FAILED_NAME_MAX];
        char pointer[FAILED_NAME_MAX + 8]; /* "/answer/" + the name's path */
        const json_t *value;
        size_t field; /* its index in grade->fields */
    } failed[API_RESULT_ITEMS_MAX];
    size_t n_failed;
} grader;

/* NW history: a group whose members are members of every record. */
static int is_records(const api_answer_table *t, const char *name, size_t len) {
    for (size_t i = 0; i < t->n; i++) {
        const char *f = t->fields[i].name;
        if (t->fields[i].record == 1 && strlen(f) > len &&
            !memcmp(f, name, len) && f[len] == '.')
            return 1;
    }
    return 0;
}

static int unknown_answer_field(const grader *g, const char *name, size_t plen,
                                const char *key, const char *pointer) {
    char names[32][API_ANSWER_SEGMENT_MAX];
    const char *list[32];
    size_t n = api_answers_children(g->table, name, plen, names, 32);
    for (size_t i = 0; i < n; i++)
        list[i] = names[i];
    char known[512];
    api_join_names(known, sizeof known, list, n);
    char hint[API_SUGGEST_TEXT];
    api_did_you_mean(hint, key, strlen(key), list, n);
    if (plen == 0)
        return api_fail(g->p, API_E_UNKNOWN_FIELD, pointer,
                        "unknown field `%s` in the answer%s %s answers with: "
                        "%s",
                        key, hint, g->route->path, known);
    return api_fail(g->p, API_E_UNKNOWN_FIELD, pointer,
                    "unknown field `%s` in the answer's %s%s %s holds: %s", key,
                    name, hint, name, known);
}

static int leaf(grader *g, enum phase ph, const char *name, const json_t *v,
                api_pointer *ptr);

/* diagnostics.warnings: a list of events (diagnostics.h), not in the
 * answer table (it is no tensor for the v2 front), graded as a list. */
static const char events_name[] = "diagnostics.warnings";

static int is_events(const api_answer_table *t, const char *name, size_t len) {
    return len == sizeof events_name - 1 && !memcmp(name, events_name, len) &&
           api_answers_is_group(t, "diagnostics", 11);
}

static int events_leaf(grader *g, enum phase ph, const char *name,
                       const json_t *v, api_pointer *ptr);

/* 1 when name (len bytes) names something the endpoint answers with,
 * under the dotted names the grade reports: a field, a group of them
 * ("grads"), NW's history, diagnostics.warnings, or a key of a tensors
 * field ("state_dict.layers.0.linear1.weight"). */
static int gradable_name(const grader *g, const char *name, size_t len) {
    if (len == 0 || len >= API_POINTER_MAX)
        return 0;
    if (api_answers_field(g->table, name, len) ||
        is_records(g->table, name, len) || is_events(g->table, name, len) ||
        api_answers_is_group(g->table, name, len))
        return 1;
    for (size_t i = 0; i < g->table->n; i++) {
        const api_answer_field *f = &g->table->fields[i];
        size_t flen = strlen(f->name);
        if (f->record == API_ANSWER_TENSORS && len > flen + 1 &&
            !memcmp(name, f->name, flen) && name[flen] == '.')
            return 1;
    }
    return 0;
}

/* The index in "fields" of name (len bytes) or of the nearest group that
 * holds it ("grads" for "grads.queries"), or -1: one lookup per dot up to
 * the most a listed name has, however many the name has. */
static long long listed_at(const grader *g, const char *name, size_t len) {
    long long at = -1;
    size_t dots = 0;
    for (size_t k = 0; k <= len && dots <= API_GRADE_NAME_DOTS; k++) {
        if (k < len && name[k] != '.')
            continue;
        const json_t *v = json_object_getn(g->listed_index, name, k);
        if (v)
            at = json_integer_value(v); /* a longer one is nearer */
        dots++;
    }
    return at;
}

/* 1 when the answer's member name (len bytes) is graded: always without
 * "fields"; with it, when it is on the way to a listed field or inside
 * one. Members off every listed path are passed over, whatever they
 * hold: a student's file may carry more than the question grades. */
static int on_listed_path(const grader *g, const char *name, size_t len) {
    return !g->fields_list || json_object_getn(g->listed_ways, name, len) ||
           listed_at(g, name, len) >= 0;
}

/* The position in "fields" of the name on field's path (the order the
 * question lists its fields in), or the list's length. */
static size_t listed_rank(const grader *g, const char *field) {
    long long at = listed_at(g, field, strlen(field));
    return at >= 0 ? (size_t)at : json_array_size(g->fields_list);
}

/* The sets of "fields" (grader.listed_index, listed_ways). */
static int index_fields(grader *g, const json_t *list, api_problem *p) {
    g->listed_index = json_object();
    g->listed_ways = json_object();
    size_t i;
    const json_t *e;
    json_array_foreach(list, i, e) {
        const char *name = json_string_value(e);
        size_t len = json_string_length(e);
        if (!g->listed_index || !g->listed_ways ||
            (!json_object_getn(g->listed_index, name, len) &&
             json_object_setn_new(g->listed_index, name, len,
                                  json_integer((json_int_t)i))))
            return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
        for (size_t k = len; k-- > 0;)
            if (name[k] == '.' &&
                json_object_setn_new(g->listed_ways, name, k, json_true()))
                return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    }
    return 0;
}

/* "fields": a non-empty array of names the endpoint answers with. */
static int check_fields(grader *g, const json_t *body, api_problem *p) {
    const json_t *list = api_field_value(body, "fields");
    if (!list)
        return 0;
    if (json_array_size(list) == 0)
        return api_fail(p, API_E_INVALID_VALUE, "/fields",
                        "fields lists at least one field to grade, "
                        "[\"output\"]; leave it out to grade what the answer "
                        "gives");
    if (json_array_size(list) > API_GRADE_FIELDS_MAX)
        return api_fail(p, API_E_INVALID_VALUE, "/fields",
                        "fields lists at most %d names (a group such as "
                        "\"state_dict\" stands for all its keys); got %zu",
                        API_GRADE_FIELDS_MAX, json_array_size(list));
    size_t i, bytes = 0;
    const json_t *e;
    json_array_foreach(list, i, e) {
        char pointer[32];
        snprintf(pointer, sizeof pointer, "/fields/%zu", i);
        if (!json_is_string(e))
            return api_fail(p, API_E_WRONG_TYPE, pointer,
                            "fields are named by their dotted names, "
                            "\"grads.queries\"; got %s",
                            api_json_kind(e));
        const char *name = json_string_value(e);
        size_t len = json_string_length(e), dots = 0;
        for (size_t k = 0; k < len; k++)
            dots += name[k] == '.';
        bytes += len;
        if (dots > API_GRADE_NAME_DOTS)
            return api_fail(p, API_E_INVALID_VALUE, pointer,
                            "a name in fields has at most %d dots (no field "
                            "has more than 6); got %zu",
                            API_GRADE_NAME_DOTS, dots);
        if (bytes > API_GRADE_FIELDS_BYTES)
            return api_fail(p, API_E_INVALID_VALUE, pointer,
                            "the names in fields come to at most %d bytes in "
                            "all",
                            API_GRADE_FIELDS_BYTES);
        if (!gradable_name(g, json_string_value(e), json_string_length(e))) {
            char hint[API_SUGGEST_TEXT];
            const char *paths[GRADABLE_NAMES_MAX];
            size_t n = 0;
            for (size_t k = 0; k < g->table->n && n < GRADABLE_NAMES_MAX; k++)
                paths[n++] = g->table->fields[k].name;
            return api_fail(p, API_E_INVALID_VALUE, pointer,
                            "`%.100s` is not a field %s answers with%s",
                            api_string_text(e), g->route->path,
                            api_did_you_mean(hint, json_string_value(e),
                                             json_string_length(e), paths, n));
        }
    }
    g->fields_list = list;
    return index_fields(g, list, p);
}

/* Visit the members of the answer object obj (group name[0 .. plen),
 * plen 0 at the top) for one phase. name has room for
 * API_POINTER_MAX bytes. */
static int tensors_walk(grader *g, enum phase ph, const json_t *obj,
                        const char *name, api_pointer *ptr);

static int walk(grader *g, enum phase ph, const json_t *obj, char *name,
                size_t plen, api_pointer *ptr) {
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        size_t klen = strlen(key);
        if (plen + 1 + klen + 1 > API_POINTER_MAX)
            klen = API_POINTER_MAX - plen - 2; /* cannot name a field */
        size_t len = plen;
        if (plen)
            name[len++] = '.';
        memcpy(name + len, key, klen);
        len += klen;
        name[len] = '\0';
        if (!on_listed_path(g, name, len)) {
            name[plen] = '\0';
            continue;
        }
        size_t mark = api_pointer_push_key(ptr, key, strlen(key));
        int rc = 0;
        /* members are named one level at a time, as the endpoint answers
         * them: "grads": {"queries": ...}, never "grads.queries" */
        int dotted = memchr(key, '.', klen) != NULL;
        const api_answer_field *f =
            dotted ? NULL : api_answers_field(g->table, name, len);
        int events = !f && !dotted && is_events(g->table, name, len);
        int group = !f && !dotted && !events &&
                    api_answers_is_group(g->table, name, len);
        int records = group && is_records(g->table, name, len);
        if (events) {
            rc = json_is_null(v) ? 0 : events_leaf(g, ph, name, v, ptr);
        } else if (!f && !group) {
            /* with "fields", a name no listed field has (a misspelt
             * member of a listed group) is passed over like any other
             * off the list, and the field meant is missing */
            name[plen] = '\0';
            if (ph == PHASE_UNKNOWN && !g->fields_list)
                rc = unknown_answer_field(g, name, plen, key, ptr->s);
        } else if (json_is_null(v)) {
            /* null means absent, as everywhere in a request */
        } else if (f && f->record == API_ANSWER_TENSORS) {
            if (json_is_object(v))
                rc = tensors_walk(g, ph, v, name, ptr);
            else if (ph == PHASE_TYPES)
                rc = api_fail(g->p, API_E_WRONG_TYPE, ptr->s,
                              "%s is an object of tensors under their "
                              "literal keys, as the endpoint answers it; "
                              "got %s",
                              name, api_json_kind(v));
        } else if (f || records) {
            rc = leaf(g, ph, name, v, ptr);
        } else if (json_is_object(v)) {
            rc = walk(g, ph, v, name, len, ptr);
        } else if (ph == PHASE_TYPES) {
            rc = api_fail(g->p, API_E_WRONG_TYPE, ptr->s,
                          "%s is an object of results, as the endpoint "
                          "answers it; got %s",
                          name, api_json_kind(v));
        }
        name[plen] = '\0';
        api_pointer_pop(ptr, mark);
        if (rc)
            return -1;
    }
    return 0;
}

/* ----------------------------------------------------------- grading */

/* The reference's item of the dotted name, or NULL when it has none. */
static const api_result_item *reference_item(const grader *g,
                                             const char *name) {
    return api_result_find(g->reference, name, strlen(name));
}

/* A failed field, for the misconceptions to explain (fields beyond
 * API_RESULT_ITEMS_MAX, which no answer has, are not explained). */
static void remember_failed(grader *g, const char *name, const json_t *v,
                            const api_pointer *ptr) {
    if (g->n_failed == API_RESULT_ITEMS_MAX ||
        strlen(name) >= FAILED_NAME_MAX || ptr->len >= FAILED_NAME_MAX + 8)
        return;
    struct failed_field *f = &g->failed[g->n_failed++];
    memcpy(f->name, name, strlen(name) + 1);
    memcpy(f->pointer, ptr->s, ptr->len + 1);
    f->value = v;
    f->field = g->grade->n_fields - 1;
}

/* The comparison of the dotted field name: compare_map's entry for it or
 * for the nearest group that holds it ("grads" for "grads.queries"),
 * else the request's. The map was read once already (read_compare); a
 * name is looked up at most once per dot in it, whatever the map holds. */
static api_compare comparison_of(const grader *g, const char *name) {
    api_compare c = g->compare;
    if (!g->compare_map)
        return c;
    for (size_t len = strlen(name); len > 0;) {
        const json_t *v = json_object_getn(g->compare_map, name, len);
        api_problem ignored;
        if (v && !json_is_null(v) &&
            api_compare_parse(v, "", &c, &ignored) == 0)
            return c;
        while (len > 0 && name[len - 1] != '.')
            len--;
        if (len > 0)
            len--; /* the group before the dot */
    }
    return g->compare;
}

/* A new field of the grade, or internal "out of memory". */
static api_grade_field *new_field(grader *g, const char *name,
                                  api_grade_kind kind) {
    api_grade_field *f =
        api_grade_add_field(g->grade, name, strlen(name), kind);
    if (!f)
        api_fail(g->p, API_E_INTERNAL, NULL, "out of memory");
    else
        f->rounded_to = f->too_few_decimals = -1;
    return f;
}

/* The decimals the first mismatch shows when it is the reference rounded
 * to fewer decimals than the comparison takes (0.33 for 0.3302, where at
 * least 4 are taken), else -1: the student's text then says to give more. */
static int too_few_decimals(const api_compare *c, const api_grade_tally *t) {
    const api_grade_expected *e = &t->first_expected;
    if (c->mode != API_COMPARE_RELABS_OR_ROUNDED || e->is_null)
        return -1;
    api_grade_got g = t->first_got;
    if (!g.fast && !json_is_number(g.json))
        return -1;
    double y = g.fast ? g.x : json_number_value(g.json);
    double x = api_grade_as_answered(e->x, e->precision);
    if (!isfinite(x) || !isfinite(y))
        return -1;
    int shown = api_compare_as_written(y, &y);
    if (shown >= c->decimals || !(fabs(y - x) < 0.51 * pow(10, -shown)))
        return -1;
    return shown;
}

/* Grade one field into a new field of g->grade, against ref (the
 * reference's item, or NULL when it has none). */
static int grade_against(grader *g, const char *name,
                         const api_result_item *ref, const json_t *v,
                         api_pointer *ptr) {
    api_grade_ref_view want;
    api_grade_view got;
    memset(&got, 0, sizeof got);
    if (!ref || api_grade_view_of(&got, v, ptr->s)) {
        free(got.leaves);
        return api_fail(g->p, API_E_INTERNAL, NULL,
                        "the reference's %s could not be read", name);
    }
    api_grade_ref_view_of(&want, g->reference, ref);
    int shape_error = got.ragged || !api_grade_same_shape(&want, &got);
    api_grade_field *f =
        new_field(g, name, shape_error ? API_GRADE_SHAPE : API_GRADE_VALUES);
    if (!f) {
        free(got.leaves);
        return -1;
    }
    if (shape_error) {
        g->all_pass = 0;
        remember_failed(g, name, v, ptr);
        f->expected_rank = want.rank;
        memcpy(f->expected_shape, want.shape, sizeof want.shape);
        f->got_rank = got.rank;
        for (size_t i = 0; i < got.rank; i++)
            f->got_shape[i] = got.ragged && i == got.ragged_level
                                  ? -1
                                  : (long long)got.shape[i];
        if (got.ragged) {
            f->ragged_pointer = strdup(got.ragged_at.s);
            if (!f->ragged_pointer) {
                free(got.leaves);
                return api_fail(g->p, API_E_INTERNAL, NULL, "out of memory");
            }
        }
        free(got.leaves);
        return 0;
    }
    api_grade_tally t;
    memset(&t, 0, sizeof t);
    t.rounded_to = -1;
    f->compare = comparison_of(g, name);
    api_tensor shape_of_got = {.rank = got.rank, .flat = got.flat};
    memcpy(shape_of_got.shape, got.shape, sizeof got.shape);
    for (size_t i = 0; i < want.count; i++)
        api_grade_compare_entries(&f->compare, &t, &want, i,
                                  api_grade_got_at(&got, i));
    f->pass = t.mismatches == 0;
    f->rounded_to = t.rounded_to;
    g->all_pass &= f->pass;
    if (!f->pass)
        remember_failed(g, name, v, ptr);
    f->max_abs_err = t.max_abs;
    f->max_rel_err = t.max_rel;
    f->mismatches = t.mismatches;
    f->entries = t.entries;
    if (t.have_first) {
        api_pointer at;
        api_tensor_entry_pointer(&at, ptr->s, &shape_of_got, t.first_index);
        if (t.first_member)
            api_pointer_push_key(&at, t.first_member, strlen(t.first_member));
        f->has_first = 1;
        api_buf_append(&f->first_pointer, at.s, at.len);
        api_grade_put_expected(&f->first_expected, &t.first_expected);
        if (t.first_got.fast)
            api_buf_number(&f->first_got, t.first_got.x, 0);
        else
            api_grade_put_quoted(&f->first_got, t.first_got.json);
        f->too_few_decimals = too_few_decimals(&f->compare, &t);
    }
    free(got.leaves);
    return 0;
}

/* Grade one field into a new field of g->grade. */
static int grade_field(grader *g, const char *name, const json_t *v,
                       api_pointer *ptr) {
    return grade_against(g, name, reference_item(g, name), v, ptr);
}

/* Equal JSON values, numbers by value (1 and 1.0 are equal). */
static int same_value(const json_t *a, const json_t *b) {
    if (json_is_number(a) || json_is_number(b))
        return json_is_number(a) && json_is_number(b) &&
               json_number_value(a) == json_number_value(b);
    if (json_is_array(a) && json_is_array(b)) {
        if (json_array_size(a) != json_array_size(b))
            return 0;
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!same_value(json_array_get(a, i), json_array_get(b, i)))
                return 0;
        return 1;
    }
    if (json_is_object(a) && json_is_object(b)) {
        if (json_object_size(a) != json_object_size(b))
            return 0;
        const char *key;
        const json_t *m;
        json_object_foreach((json_t *)a, key, m) {
            if (!same_value(m, json_object_get(b, key)))
                return 0;
        }
        return 1;
    }
    return json_equal(a, b);
}

/* Grade the events list v against the reference's into a new field
 * {"pass", "mismatches", "first_mismatch"}: entries compared in order,
 * each equal or not (codes and row indices have no tolerance). The
 * reference's list exists only as its writer's JSON (result.h), at most
 * API_DIAG_MAX_WARNINGS + 1 small entries, so it is written and read
 * here. */
static int grade_events(grader *g, const char *name, const json_t *v,
                        const api_pointer *ptr) {
    const api_result_item *ref = reference_item(g, name);
    api_buf text = {0};
    if (ref && ref->kind == API_ITEM_EVENTS)
        ref->write(&text, ref);
    json_t *want = text.failed || !text.data
                       ? NULL
                       : json_loadb(text.data, text.len, 0, NULL);
    api_buf_free(&text);
    if (!json_is_array(want)) {
        json_decref(want);
        return api_fail(g->p, API_E_INTERNAL, NULL,
                        "the reference's %s could not be read", name);
    }
    size_t n_want = json_array_size(want), n_got = json_array_size(v);
    size_t n = n_want > n_got ? n_want : n_got, mismatches = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(want, i), *x = json_array_get(v, i);
        if (e && x && same_value(e, x))
            continue;
        if (mismatches++ == 0)
            first = i;
    }
    api_grade_field *f = new_field(g, name, API_GRADE_EVENTS);
    if (!f) {
        json_decref(want);
        return -1;
    }
    f->pass = mismatches == 0;
    f->mismatches = mismatches;
    f->entries = n;
    if (mismatches) {
        api_pointer at = *ptr;
        api_pointer_push_index(&at, first);
        f->has_first = 1;
        api_buf_append(&f->first_pointer, at.s, at.len);
        api_grade_put_value(&f->first_expected, json_array_get(want, first));
        api_grade_put_quoted(&f->first_got, json_array_get(v, first));
    }
    g->all_pass &= mismatches == 0;
    json_decref(want);
    return 0;
}

static int events_leaf(grader *g, enum phase ph, const char *name,
                       const json_t *v, api_pointer *ptr) {
    switch (ph) {
    case PHASE_UNKNOWN:
        g->fields++;
        return 0;
    case PHASE_TYPES:
        if (json_is_array(v))
            return 0;
        return api_fail(g->p, API_E_WRONG_TYPE, ptr->s,
                        "%s is an array of {\"code\", \"row\"} objects, as "
                        "the endpoint answers it; got %s",
                        name, api_json_kind(v));
    case PHASE_PRESENT:
        if (reference_item(g, name))
            return 0;
        return api_fail(g->p, API_E_INVALID_VALUE, ptr->s,
                        "the reference answer has no %s: %s answers it only "
                        "with %s in the request",
                        name, g->route->path, API_ANSWER_DIAG);
    case PHASE_GRADE:
        return grade_events(g, name, v, ptr);
    case PHASE_MISSING:
    case PHASE_SIZES:
        break;
    }
    return 0;
}

/* ------------------------------------------------ phases at one field */

/* The wrong_type checks of a {"shape", "data"} answer: shape an array of
 * integers, data an array (its entries are graded, not type-checked). */
static int flat_types(const grader *g, const json_t *v, api_pointer *ptr) {
    const json_t *shape = json_object_get(v, "shape");
    size_t mark = api_pointer_push_key(ptr, "shape", 5);
    if (!json_is_array(shape))
        return api_fail(g->p, API_E_WRONG_TYPE, ptr->s,
                        "\"shape\" must be an array of integers; got %s",
                        api_json_kind(shape));
    for (size_t i = 0; i < json_array_size(shape); i++) {
        const json_t *d = json_array_get(shape, i);
        double x = json_number_value(d);
        if (json_is_integer(d) ||
            (json_is_real(d) && isfinite(x) && x == floor(x)))
            continue;
        api_pointer_push_index(ptr, i);
        return api_fail(g->p, API_E_WRONG_TYPE, ptr->s,
                        "\"shape\" entries must be integers; %s is %s", ptr->s,
                        json_is_number(d) ? "not" : api_json_kind(d));
    }
    api_pointer_pop(ptr, mark);
    const json_t *data = json_object_get(v, "data");
    if (!json_is_array(data)) {
        api_pointer_push_key(ptr, "data", 4);
        return api_fail(g->p, API_E_WRONG_TYPE, ptr->s,
                        "\"data\" must be a flat array of row-major numbers; "
                        "got %s",
                        api_json_kind(data));
    }
    api_pointer_pop(ptr, mark);
    return 0;
}

/* Dimensions ≥ 0 and len(data) = prod(shape), as for a request tensor. */
static int flat_sizes(const grader *g, const json_t *v, api_pointer *ptr) {
    const json_t *shape = json_object_get(v, "shape");
    const json_t *data = json_object_get(v, "data");
    size_t count = 1;
    int overflow = 0;
    for (size_t i = 0; i < json_array_size(shape); i++) {
        double x = json_number_value(json_array_get(shape, i));
        if (x < 0) {
            api_pointer_push_key(ptr, "shape", 5);
            api_pointer_push_index(ptr, i);
            return api_fail(g->p, API_E_INVALID_VALUE, ptr->s,
                            "dimensions are counts: %s must be at least 0",
                            ptr->s);
        }
        if (x >= 18446744073709551616.0 ||
            (x > 0 && (size_t)x > SIZE_MAX / (count ? count : 1)))
            overflow = 1;
        else
            count *= (size_t)x;
    }
    size_t n = json_array_size(data);
    if (overflow || count != n) {
        api_pointer_push_key(ptr, "data", 4);
        api_fail(g->p, API_E_SHAPE_MISMATCH, ptr->s,
                 "the answer's shape holds %s%zu %s but \"data\" has %zu",
                 overflow ? "more than " : "", overflow ? SIZE_MAX : count,
                 api_plural(overflow ? SIZE_MAX : count, "number", "numbers"),
                 n);
        long long e = overflow ? -1 : (long long)count, got = (long long)n;
        api_problem_shapes(g->p, &e, 1, &got, 1);
        return -1;
    }
    return 0;
}

static int leaf(grader *g, enum phase ph, const char *name, const json_t *v,
                api_pointer *ptr) {
    int records = is_records(g->table, name, strlen(name));
    switch (ph) {
    case PHASE_UNKNOWN:
        g->fields++;
        return records ? 0 : api_tensor_check_keys(v, ptr->s, g->p);
    case PHASE_MISSING:
        return records ? 0 : api_tensor_check_missing(v, ptr->s, g->p);
    case PHASE_TYPES:
        if (records && !json_is_array(v) && !api_fastpath_find(v))
            return api_fail(g->p, API_E_WRONG_TYPE, ptr->s,
                            "%s is an array of objects, one per epoch, as the "
                            "endpoint answers it; got %s",
                            name, api_json_kind(v));
        return json_is_object(v) ? flat_types(g, v, ptr) : 0;
    case PHASE_SIZES:
        return json_is_object(v) && !records ? flat_sizes(g, v, ptr) : 0;
    case PHASE_PRESENT: {
        if (reference_item(g, name))
            return 0;
        const api_answer_field *f =
            api_answers_field(g->table, name, strlen(name));
        if (!f) /* a records group: its members say what they need */
            for (size_t i = 0; i < g->table->n && !f; i++)
                if (!strncmp(g->table->fields[i].name, name, strlen(name)))
                    f = &g->table->fields[i];
        return api_fail(g->p, API_E_INVALID_VALUE, ptr->s,
                        "the reference answer has no %s: %s answers it only "
                        "with %s in the request",
                        name, g->route->path,
                        f && f->needs ? f->needs : "other inputs");
    }
    case PHASE_GRADE:
        return grade_field(g, name, v, ptr);
    }
    return 0;
}

/* The member key of the reference's TENSORS item group as a TENSOR item
 * in *out (pointing into the reference). Returns 0: no such item (the
 * request did not ask for the group), 1: no such key, 2: found. */
static int reference_member(const grader *g, const char *group, const char *key,
                            api_result_item *out) {
    const api_result_item *it = reference_item(g, group);
    if (!it || it->kind != API_ITEM_TENSORS)
        return 0;
    for (size_t i = 0; i < it->n_members; i++) {
        const api_result_member *m = &it->members[i];
        if (strcmp(m->key, key) != 0)
            continue;
        memset(out, 0, sizeof *out);
        out->name = group;
        out->kind = API_ITEM_TENSOR;
        out->data = m->data;
        out->rank = m->rank;
        memcpy(out->shape, m->shape, sizeof out->shape);
        out->nan_as_null = m->nan_as_null;
        return 2;
    }
    return 1;
}

/* The members of a tensors field (answers.h: an object of tensors under
 * literal keys, dots and all), each a field of its own named
 * "<name>.<key>": "grads.state_dict.layers.0.linear1.weight",
 * "trace.self_attention.Q". Which keys there are depends on the request
 * (num_layers, norm_first, ...), so a key the reference lacks is found
 * once the reference is computed: invalid_value at it, naming the keys. */
static int tensors_walk(grader *g, enum phase ph, const json_t *obj,
                        const char *name, api_pointer *ptr) {
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        char full[API_POINTER_MAX];
        snprintf(full, sizeof full, "%s.%s", name, key);
        if (!on_listed_path(g, full, strlen(full)))
            continue;
        api_result_item known;
        if (g->fields_list && ph >= PHASE_PRESENT &&
            reference_member(g, name, key, &known) == 1)
            continue; /* as a misspelt member of a listed group (walk) */
        size_t mark = api_pointer_push_key(ptr, key, strlen(key));
        int rc = 0;
        if (json_is_null(v)) {
            /* absent */
        } else if (ph == PHASE_UNKNOWN) {
            g->fields++;
            rc = api_tensor_check_keys(v, ptr->s, g->p);
        } else if (ph == PHASE_MISSING) {
            rc = api_tensor_check_missing(v, ptr->s, g->p);
        } else if (ph == PHASE_TYPES) {
            rc = json_is_object(v) ? flat_types(g, v, ptr) : 0;
        } else if (ph == PHASE_SIZES) {
            rc = json_is_object(v) ? flat_sizes(g, v, ptr) : 0;
        } else if (ph == PHASE_PRESENT) {
            api_result_item m;
            int found = reference_member(g, name, key, &m);
            const api_answer_field *f =
                api_answers_field(g->table, name, strlen(name));
            if (found == 0)
                rc = api_fail(g->p, API_E_INVALID_VALUE, ptr->s,
                              "the reference answer has no %s: %s answers it "
                              "only with %s in the request",
                              name, g->route->path,
                              f && f->needs ? f->needs : "other inputs");
            else if (found == 1) {
                const api_result_item *it = reference_item(g, name);
                char list[512] = "";
                size_t at = 0;
                for (size_t i = 0; i < it->n_members && at < sizeof list; i++)
                    at += (size_t)snprintf(list + at, sizeof list - at, "%s%s",
                                           i ? ", " : "", it->members[i].key);
                rc = api_fail(g->p, API_E_INVALID_VALUE, ptr->s,
                              "the reference answer's %s has no key `%.100s` "
                              "for this request; its keys: %s",
                              name, key, list);
            }
        } else if (ph == PHASE_GRADE) {
            api_result_item m;
            rc = reference_member(g, name, key, &m) == 2
                     ? grade_against(g, full, &m, v, ptr)
                     : grade_against(g, full, NULL, v, ptr);
        }
        api_pointer_pop(ptr, mark);
        if (rc)
            return -1;
    }
    return 0;
}

static int run_phase(grader *g, enum phase ph, const json_t *answer) {
    char name[API_POINTER_MAX];
    name[0] = '\0';
    api_pointer ptr;
    api_pointer_init(&ptr, "/answer");
    return walk(g, ph, answer, name, 0, &ptr);
}

/* --------------------------------------------------- GET endpoints */

/* RFC 3986 section 2.3 unreserved characters pass; every other byte is
 * percent-encoded. */
static void put_query_text(api_buf *q, const char *s, size_t n) {
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
            (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
            c == '~') {
            api_buf_putc(q, (char)c);
        } else {
            api_buf_putc(q, '%');
            api_buf_putc(q, hex[c >> 4]);
            api_buf_putc(q, hex[c & 15]);
        }
    }
}

/* The query string a GET endpoint gets for the request object's members:
 * numbers as the contract prints them, strings and booleans as text;
 * null leaves a parameter out; arrays and objects -> wrong_type. */
static int build_query(api_buf *q, const json_t *request, api_problem *p) {
    const char *key;
    const json_t *v;
    int first = 1;
    json_object_foreach((json_t *)request, key, v) {
        if (json_is_null(v))
            continue;
        if (json_is_array(v) || json_is_object(v) || api_fastpath_find(v)) {
            api_pointer ptr; /* the caller prefixes /request */
            api_pointer_init(&ptr, "");
            api_pointer_push_key(&ptr, key, strlen(key));
            return api_fail(p, API_E_WRONG_TYPE, ptr.s,
                            "query parameters are numbers or strings; %s is "
                            "%s",
                            key, api_json_kind(v));
        }
        if (!first)
            api_buf_putc(q, '&');
        first = 0;
        put_query_text(q, key, strlen(key));
        api_buf_putc(q, '=');
        if (json_is_integer(v))
            api_buf_int(q, (long long)json_integer_value(v));
        else if (json_is_real(v)) { /* "1e+300": the + percent-encoded */
            char text[API_NUM_MAX];
            size_t n = api_num_format(text, json_real_value(v), 0);
            put_query_text(q, text, n);
        } else if (json_is_string(v))
            put_query_text(q, json_string_value(v), json_string_length(v));
        else
            api_buf_puts(q, json_is_true(v) ? "true" : "false");
    }
    return 0;
}

/* ---------------------------------------------------- misconceptions */

/* 1 when a mistake's answer (result) explains the failed field ff: the
 * mistake's item of that name has the answer's shape, every entry of it
 * matches the answer's under the field's own comparison (so a mistake
 * whose answer is not finite there explains nothing: JSON carries no
 * infinity), where the reference fails some; and its largest error is
 * no larger than the reference's (a field of the wrong shape was never
 * close). A mistake that only comes as close as a failing reference,
 * under a tolerance its own size has widened, explains nothing. */
static int field_matches(const grader *g, const api_result *result,
                         const struct failed_field *ff) {
    const api_grade_field *graded = &g->grade->fields[ff->field];
    const api_result_item *it =
        api_result_find(result, ff->name, strlen(ff->name));
    if (!it || it->kind == API_ITEM_EVENTS)
        return 0;
    api_grade_ref_view want;
    api_grade_view got;
    if (api_grade_view_of(&got, ff->value, ff->pointer)) {
        free(got.leaves);
        return 0;
    }
    api_grade_ref_view_of(&want, result, it);
    int match = !got.ragged && api_grade_same_shape(&want, &got);
    api_compare c = graded->kind == API_GRADE_VALUES
                        ? graded->compare
                        : comparison_of(g, ff->name);
    api_grade_tally t;
    memset(&t, 0, sizeof t);
    t.rounded_to = -1;
    for (size_t i = 0; match && i < want.count && t.mismatches == 0; i++)
        api_grade_compare_entries(&c, &t, &want, i, api_grade_got_at(&got, i));
    free(got.leaves);
    if (!match || t.mismatches != 0)
        return 0;
    if (graded->kind != API_GRADE_VALUES)
        return 1;
    /* closer than the reference; a reference error that overflowed
     * (not finite) is farther than any finite one */
    return !isfinite(graded->max_abs_err) || t.max_abs <= graded->max_abs_err;
}

/* The mistake search's work and time: SEARCH_SHARE references' worth,
 * at least SEARCH_FLOOR operations and SEARCH_FLOOR_MS milliseconds
 * (find_misconception). */
#define SEARCH_SHARE 4
#define SEARCH_FLOOR ((uint64_t)1 << 24)
#define SEARCH_FLOOR_MS 100.0

/* The catalogue's mistake (misconceptions.h) that explains the most
 * failed fields (the first of equals) into g->grade->misconception, and
 * the fields it explains marked; NULL when none explains any. */
static void find_misconception(grader *g, api_call *call,
                               const api_grade_references *refs,
                               const json_t *request) {
    if (g->n_failed == 0)
        return; /* only missing fields failed: no mistake explains those */
    size_t n = 0;
    const api_misconception *list = api_misconceptions_of(g->route, &n);
    const api_misconception *best = NULL;
    unsigned char explains[API_RESULT_ITEMS_MAX] = {0};
    size_t best_count = 0;
    api_problem saved = call->problem;
    /* The mistakes of one answer together do at most SEARCH_SHARE times
     * the reference's work (or SEARCH_FLOOR operations, which every
     * classroom exercise fits whole), and never more than one request may
     * (--max-work): a wrong answer to a large request costs its sender a
     * few references, not the whole catalogue's. Each is priced at the
     * most one has counted so far
     * (the reference's to begin with), and the search stops before one
     * that would not fit, naming the best of those tried; so it does
     * before one that, at the longest time one has taken, would take the
     * search past SEARCH_SHARE times the reference's time. A mistake
     * computed outside a route (a fit run the mistaken way, a softmax
     * along the other axis) counts no operations of its own, so each that
     * answers is counted at least at the price; one that does not apply
     * counts what it did. Time is bounded likewise: the search stops
     * before a mistake that, at the longest time one has taken (the
     * reference's to begin with), would end beyond --compute-timeout from
     * the start of the grade. */
    uint64_t spent = 0, price = g->reference_ops;
    uint64_t budget = g->reference_ops > SEARCH_FLOOR / SEARCH_SHARE
                          ? SEARCH_SHARE * g->reference_ops
                          : SEARCH_FLOOR;
    if (call->limits && call->limits->max_work &&
        call->limits->max_work < budget)
        budget = call->limits->max_work;
    double timeout_ms = call->limits && call->limits->compute_timeout_s
                            ? 1000.0 * call->limits->compute_timeout_s
                            : 0;
    double slowest = g->reference_ms;
    double search_started = api_clock_ms();
    double search_ms = SEARCH_SHARE * g->reference_ms > SEARCH_FLOOR_MS
                           ? SEARCH_SHARE * g->reference_ms
                           : SEARCH_FLOOR_MS;
    for (size_t m = 0; m < n; m++) {
        if (budget && (spent > budget || price > budget - spent))
            break;
        double now = api_clock_ms();
        if (timeout_ms > 0 && now - g->started_ms + slowest > timeout_ms)
            break;
        if (now - search_started + slowest > search_ms)
            break;
        uint64_t before = call->cost.ops;
        api_result wrong;
        memset(&wrong, 0, sizeof wrong);
        int rc = refs ? refs->mistake(refs->ctx, call, &list[m], request,
                                      g->reference, &wrong)
                      : list[m].answer(call, request, g->reference, &wrong);
        if (rc == API_MISTAKE_ANSWERED) {
            unsigned char these[API_RESULT_ITEMS_MAX] = {0};
            size_t count = 0;
            for (size_t f = 0; f < g->n_failed; f++) {
                these[f] =
                    (unsigned char)field_matches(g, &wrong, &g->failed[f]);
                count += these[f];
            }
            if (count > best_count) {
                best = &list[m];
                best_count = count;
                memcpy(explains, these, sizeof explains);
            }
        }
        if (refs)
            refs->release(refs->ctx, &wrong);
        else
            api_result_free(&wrong);
        uint64_t ops = call->cost.ops - before;
        spent += ops > price || rc == API_MISTAKE_NOT_APPLICABLE ? ops : price;
        if (ops > price)
            price = ops;
        if (api_clock_ms() - now > slowest)
            slowest = api_clock_ms() - now;
    }
    call->problem = saved;
    g->grade->misconception = best;
    for (size_t f = 0; best && f < g->n_failed; f++)
        if (explains[f])
            g->grade->fields[g->failed[f].field].explained = 1;
}

/* ------------------------------------------------------------ handler */

static int read_tolerance(const json_t *body, const char *name, double def,
                          double *out, api_problem *p) {
    *out = api_field_number(body, name, def);
    if (isfinite(*out) && *out >= 0)
        return 0;
    char pointer[16];
    snprintf(pointer, sizeof pointer, "/%s", name);
    return api_fail(p, API_E_INVALID_VALUE, pointer,
                    "%s is a tolerance, a number ≥ 0 (a value matches when "
                    "|got − expected| ≤ atol + rtol·|expected|)",
                    name);
}

/* "compare", with "rtol" and "atol": g->compare for every field, and
 * g->compare_map for the fields it names. Without "compare", rtol/atol
 * given mean relabs with them (as before comparisons had modes), neither
 * the default (compare.h). With a comparison, rtol/atol belong inside it. */
static int read_compare(grader *g, const json_t *body, api_problem *p) {
    double rtol, atol;
    if (read_tolerance(body, "rtol", 1e-5, &rtol, p) ||
        read_tolerance(body, "atol", 1e-8, &atol, p))
        return -1;
    int tolerances = api_field_value(body, "rtol") != NULL ||
                     api_field_value(body, "atol") != NULL;
    g->compare =
        tolerances ? api_compare_relabs(rtol, atol) : api_compare_default();
    const json_t *v = api_field_value(body, "compare");
    if (!v)
        return 0;
    if (api_compare_is_one(v)) {
        if (tolerances)
            return api_fail(p, API_E_INVALID_VALUE,
                            api_field_value(body, "rtol") ? "/rtol" : "/atol",
                            "with compare, tolerances go inside it: "
                            "{\"mode\": \"relabs\", \"rtol\": 1e-5, "
                            "\"atol\": 1e-8}");
        return api_compare_parse(v, "/compare", &g->compare, p);
    }
    const char *key;
    const json_t *m;
    json_object_foreach((json_t *)v, key, m) {
        api_pointer ptr;
        api_pointer_init(&ptr, "/compare");
        api_pointer_push_key(&ptr, key, strlen(key));
        if (!gradable_name(g, key, strlen(key)))
            return api_fail(p, API_E_INVALID_VALUE, ptr.s,
                            "`%.100s` is not a field %s answers with: "
                            "compare is one comparison ({\"mode\": ...}) or "
                            "an object of them by dotted field name",
                            key, g->route->path);
        api_compare ignored;
        if (!json_is_null(m) && api_compare_parse(m, ptr.s, &ignored, p))
            return -1;
    }
    g->compare_map = v;
    return 0;
}

/* Calls visit(g, name, ctx) on each field of the reference, named as the
 * grade names its fields (an item, or "<item>.<key>" for each key of a
 * tensors item), in the reference's order, but for a number the
 * reference leaves null; stops at the first that returns non-zero. */
static int reference_fields(grader *g,
                            int (*visit)(grader *, const char *, void *),
                            void *ctx) {
    for (size_t i = 0; i < g->reference->n; i++) {
        const api_result_item *it = &g->reference->items[i];
        if (it->kind == API_ITEM_NUMBER && it->is_null)
            continue; /* the reference gives nothing here either */
        if (it->kind != API_ITEM_TENSORS) {
            if (visit(g, it->name, ctx))
                return -1;
            continue;
        }
        for (size_t m = 0; m < it->n_members; m++) {
            char full[API_POINTER_MAX];
            if ((size_t)snprintf(full, sizeof full, "%s.%s", it->name,
                                 it->members[m].key) < sizeof full &&
                visit(g, full, ctx))
                return -1;
        }
    }
    return 0;
}

/* A missing field of the dotted name when "fields" covers it (itself or
 * a group that holds it) and the answer graded nothing under it (graded:
 * the names graded). */
static int missing_if_listed(grader *g, const char *name, void *graded) {
    if (listed_at(g, name, strlen(name)) < 0 || json_object_get(graded, name) ||
        !gradable_name(g, name, strlen(name)))
        return 0;
    if (!new_field(g, name, API_GRADE_MISSING))
        return -1;
    g->all_pass = 0;
    return 0;
}

/* With "fields": each field of the reference that a listed name covers
 * and the answer gave nothing for (left out or null) is a missing field,
 * failing and scoring 0. A listed group ("grads", "state_dict") stands
 * for every field the reference has under it, so each member a student
 * leaves out is missing on its own, and every student's grade has the
 * same fields whatever they handed in. */
static int add_missing(grader *g) {
    json_t *graded = json_object();
    int rc = graded ? 0 : -1;
    for (size_t k = 0; rc == 0 && k < g->grade->n_fields; k++)
        rc = json_object_set_new(graded, g->grade->fields[k].name, json_true());
    if (rc == 0)
        rc = reference_fields(g, missing_if_listed, graded);
    json_decref(graded);
    if (rc && g->p->code == API_E_NONE)
        api_fail(g->p, API_E_INTERNAL, NULL, "out of memory");
    return rc;
}

/* Fields by their rank in "fields", then in the reference's order. */
typedef struct {
    size_t rank, place, at;
} field_order;

static int by_rank(const void *a, const void *b) {
    const field_order *x = a, *y = b;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->place != y->place)
        return x->place < y->place ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* places: each reference field's name → its place in the reference. */
static int number_field(grader *g, const char *name, void *places) {
    (void)g;
    return json_object_set_new(places, name,
                               json_integer(json_object_size(places)));
}

/* The grade's fields in the order "fields" lists them, and those under
 * one listed group in the reference's order: every student's document
 * reads alike, whatever order their answer gave. */
static int order_as_listed(grader *g) {
    size_t n = g->grade->n_fields;
    field_order *order = malloc(n * sizeof *order + 1);
    api_grade_field *sorted = malloc(n * sizeof *sorted + 1);
    json_t *places = json_object();
    if (!order || !sorted || !places ||
        reference_fields(g, number_field, places)) {
        free(order);
        free(sorted);
        json_decref(places);
        return api_fail(g->p, API_E_INTERNAL, NULL, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        const char *name = g->grade->fields[i].name;
        const json_t *place = json_object_get(places, name);
        order[i] = (field_order){
            listed_rank(g, name),
            place ? (size_t)json_integer_value(place) : SIZE_MAX, i};
    }
    qsort(order, n, sizeof *order, by_rank);
    for (size_t i = 0; i < n; i++)
        sorted[i] = g->grade->fields[order[i].at];
    memcpy(g->grade->fields, sorted, n * sizeof *sorted);
    free(order);
    free(sorted);
    json_decref(places);
    return 0;
}

/* "visibility": Gradescope's, for every test of the submission. */
static int read_visibility(const json_t *body, api_grade_visibility *out,
                           api_problem *p) {
    static const char *const names[] = {"visible", "hidden", "after_due_date",
                                        "after_published"};
    const char *v = api_field_string(body, "visibility", "visible");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(v, names[i])) {
            *out = (api_grade_visibility)i;
            return 0;
        }
    return api_fail(p, API_E_INVALID_VALUE, "/visibility",
                    "visibility is Gradescope's: visible (the default), "
                    "hidden, after_due_date or after_published; got "
                    "\"%.64s\"",
                    v);
}

/* The reference: from the batch's shared ones, or computed here. */
static int reference_of(api_call *call, const api_grade_references *refs,
                        const api_route *route, const json_t *request,
                        const char *query, api_result *reference) {
    if (refs)
        return refs->answer(refs->ctx, call, route, request, query, reference);
    return api_invoke_result(call, route, request, query, reference);
}

static void reference_done(const api_grade_references *refs,
                           api_result *reference) {
    if (refs)
        refs->release(refs->ctx, reference);
    else
        api_result_free(reference);
}

/* "credit" and "format": invalid_value for a name of neither. */
static int read_choices(const json_t *body, api_grade_credit *credit,
                        api_grade_format *format, api_problem *p) {
    const char *c = api_field_string(body, "credit", "all_or_nothing");
    if (!strcmp(c, "all_or_nothing"))
        *credit = API_CREDIT_ALL_OR_NOTHING;
    else if (!strcmp(c, "partial"))
        *credit = API_CREDIT_PARTIAL;
    else
        return api_fail(p, API_E_INVALID_VALUE, "/credit",
                        "credit is all_or_nothing (a field scores 1 when it "
                        "passes, else 0) or partial (the fraction of its "
                        "entries that match); got \"%.64s\"",
                        c);
    const json_t *v = api_field_value(body, "format");
    if (v && api_grade_format_parse(json_string_value(v), json_string_length(v),
                                    format))
        return api_fail(p, API_E_INVALID_VALUE, "/format",
                        "format is attnd (the default), gradescope (an "
                        "autograder's results.json) or prairielearn (an "
                        "external grader's results); got \"%.64s\"",
                        api_string_text(v));
    return 0;
}

/* The answer's value of the dotted field name, when it is a field the
 * answer grades (given, not null), else NULL. */
static const json_t *graded_value(const grader *g, const json_t *answer,
                                  const char *name) {
    size_t len = strlen(name);
    if (len == 0 || len >= API_POINTER_MAX)
        return NULL;
    int leaf = api_answers_field(g->table, name, len) ||
               is_records(g->table, name, len) ||
               is_events(g->table, name, len);
    const char *key = NULL; /* a tensors field's literal key (answers.h) */
    for (size_t i = 0; !leaf && i < g->table->n; i++) {
        const api_answer_field *f = &g->table->fields[i];
        size_t flen = strlen(f->name);
        if (f->record == API_ANSWER_TENSORS && len > flen + 1 &&
            !memcmp(name, f->name, flen) && name[flen] == '.') {
            leaf = 1;
            key = name + flen + 1;
            len = flen;
        }
    }
    if (!leaf)
        return NULL;
    const json_t *v = answer;
    for (const char *seg = name; seg < name + len;) {
        const char *dot = strchr(seg, '.');
        size_t n = dot ? (size_t)(dot - seg) : strlen(seg);
        if (!json_is_object(v))
            return NULL;
        v = json_object_getn(v, seg, n);
        if (!dot)
            break;
        seg = dot + 1;
    }
    if (key)
        v = json_is_object(v) ? json_object_get(v, key) : NULL;
    return json_is_null(v) ? NULL : v;
}

/* 1 when name is one field the endpoint answers with (not a group of
 * them): what a "points" object may name without "fields". */
static int field_name(const grader *g, const char *name) {
    size_t len = strlen(name);
    return gradable_name(g, name, len) &&
           (!api_answers_is_group(g->table, name, len) ||
            is_records(g->table, name, len) || is_events(g->table, name, len));
}

/* Without "fields", each field a "points" object names and the answer
 * leaves out is a missing field: the rubric is the whole total, so a
 * student who hands in less still gets the rest graded. */
static int add_missing_points(grader *g, const json_t *body,
                              const json_t *answer) {
    const json_t *points = api_field_value(body, "points");
    if (g->fields_list || !json_is_object(points))
        return 0;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)points, key, v) {
        if (graded_value(g, answer, key))
            continue;
        if (!new_field(g, key, API_GRADE_MISSING))
            return -1;
        g->all_pass = 0;
    }
    return 0;
}

/* The checks of "points" (the order-of-checks comment above). */
static int check_points(const grader *g, const json_t *body, api_problem *p) {
    const json_t *points = api_field_value(body, "points");
    if (!points)
        return 0;
    if (json_is_number(points)) {
        double x = json_number_value(points);
        /* a share of a subnormal number would round to 0 */
        if (isfinite(x) && x >= DBL_MIN)
            return 0;
        return api_fail(p, API_E_INVALID_VALUE, "/points",
                        "points is what the submission is worth, a number "
                        "> 0 (at least %g), split equally over its graded "
                        "fields",
                        DBL_MIN);
    }
    double total = 0;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)points, key, v) {
        api_pointer ptr;
        api_pointer_init(&ptr, "/points");
        api_pointer_push_key(&ptr, key, strlen(key));
        if (!json_is_number(v))
            return api_fail(p, API_E_WRONG_TYPE, ptr.s,
                            "points of a field are a number ≥ 0; got %s",
                            api_json_kind(v));
        double x = json_number_value(v);
        if (!(isfinite(x) && (x == 0 || x >= DBL_MIN)))
            return api_fail(p, API_E_INVALID_VALUE, ptr.s,
                            "points of a field are 0 or a number of at "
                            "least %g",
                            DBL_MIN);
        if (g->fields_list ? listed_at(g, key, strlen(key)) < 0 ||
                                 !gradable_name(g, key, strlen(key))
                           : !field_name(g, key))
            return api_fail(p, API_E_INVALID_VALUE, ptr.s,
                            "`%.100s` is not a field %s%s: points name "
                            "fields by their dotted names, as the grade's "
                            "\"fields\" does (\"output\", \"grads.queries\")",
                            key,
                            g->fields_list ? "that \"fields\" lists, or one "
                                             "of a group it lists"
                                           : "the endpoint answers with",
                            g->fields_list ? ""
                                           : " (a group such as grads "
                                             "takes points when \"fields\" "
                                             "lists it)");
        total += x;
    }
    if (!isfinite(total))
        return api_fail(p, API_E_INVALID_VALUE, "/points",
                        "the points add up to more than a number holds "
                        "(%g and more): give each field a finite share",
                        DBL_MAX);
    if (total > 0)
        return 0;
    return api_fail(p, API_E_INVALID_VALUE, "/points",
                    "the points add up to 0: give at least one graded field "
                    "points > 0 (fields not named are worth 0)");
}

/* Each field's points: 1 without "points"; a number split equally; an
 * object's own value for the fields it names, 0 for the others. */
/* The key of the points object that the dotted field name takes its
 * points from: its own name, else the nearest group on its path ("grads"
 * for "grads.queries"), into key; 0 when none. */
static int points_key(const json_t *points, const char *name,
                      char key[API_POINTER_MAX]) {
    for (size_t len = strlen(name); len > 0 && len < API_POINTER_MAX;) {
        if (json_is_number(json_object_getn(points, name, len))) {
            memcpy(key, name, len);
            key[len] = '\0';
            return 1;
        }
        while (len > 0 && name[len - 1] != '.')
            len--;
        if (len > 0)
            len--; /* the group before the dot */
    }
    return 0;
}

/* Each field's points: 1 without "points"; a number split equally over
 * the fields; an object's value for a field, or for a group that holds
 * it, split equally over the fields that take it. Returns 0, or -1 (the
 * problem set) when memory runs out. */
static int assign_points(grader *g, const json_t *body) {
    api_grade *grade = g->grade;
    const json_t *points = api_field_value(body, "points");
    grade->total_points =
        json_is_number(points) ? json_number_value(points) : 0;
    if (!json_is_object(points)) {
        for (size_t i = 0; i < grade->n_fields; i++)
            grade->fields[i].points =
                points ? grade->total_points / (double)grade->n_fields : 1;
        return 0;
    }
    json_t *takers = json_object(); /* key → how many fields take it */
    char key[API_POINTER_MAX];
    for (size_t i = 0; takers && i < grade->n_fields; i++) {
        if (!points_key(points, grade->fields[i].name, key))
            continue;
        json_int_t n = json_integer_value(json_object_get(takers, key));
        if (json_object_set_new(takers, key, json_integer(n + 1))) {
            json_decref(takers);
            takers = NULL;
        }
    }
    if (!takers)
        return api_fail(g->p, API_E_INTERNAL, NULL, "out of memory");
    for (size_t i = 0; i < grade->n_fields; i++) {
        api_grade_field *f = &grade->fields[i];
        f->points =
            points_key(points, f->name, key)
                ? json_number_value(json_object_get(points, key)) /
                      (double)json_integer_value(json_object_get(takers, key))
                : 0;
    }
    api_points_sum rubric = {0};
    const char *k;
    json_t *n;
    json_object_foreach(takers, k, n)
        api_points_add(&rubric, json_number_value(json_object_get(points, k)));
    grade->rubric_points = api_points_total(&rubric);
    json_decref(takers);
    return 0;
}

/* The request's "id" into grade, as JSON and as text. */
static void copy_id(api_grade *grade, const json_t *body) {
    const json_t *id = api_field_value(body, "id");
    if (!id)
        return;
    grade->has_id = 1;
    if (json_is_string(id)) {
        api_buf_json_string(&grade->id_json, json_string_value(id),
                            json_string_length(id));
        api_buf_append(&grade->id_text, json_string_value(id),
                       json_string_length(id));
    } else {
        api_buf_int(&grade->id_json, (long long)json_integer_value(id));
        api_buf_int(&grade->id_text, (long long)json_integer_value(id));
    }
}

/* 1 when the reference answers the dotted name: an item of that name, a
 * group with an item under it ("grads"), or a key of a tensors item
 * ("state_dict.layers.0.linear1.weight"). */
static int reference_has(const grader *g, const char *name) {
    size_t len = strlen(name);
    if (reference_item(g, name))
        return 1;
    for (size_t i = 0; i < g->reference->n; i++) {
        const char *item = g->reference->items[i].name;
        if (strlen(item) > len && !memcmp(item, name, len) && item[len] == '.')
            return 1;
    }
    for (size_t i = 0; i < g->table->n; i++) {
        const api_answer_field *f = &g->table->fields[i];
        size_t flen = strlen(f->name);
        api_result_item m;
        if (f->record == API_ANSWER_TENSORS && len > flen + 1 &&
            !memcmp(name, f->name, flen) && name[flen] == '.')
            return reference_member(g, f->name, name + flen + 1, &m) == 2;
    }
    return 0;
}

/* invalid_value at pointer: the reference does not answer name. */
static int not_answered(const grader *g, const char *pointer,
                        const char *name) {
    for (size_t i = 0; i < g->table->n; i++) {
        const api_answer_field *f = &g->table->fields[i];
        size_t flen = strlen(f->name);
        const api_result_item *it = reference_item(g, f->name);
        if (f->record != API_ANSWER_TENSORS || strlen(name) <= flen + 1 ||
            memcmp(name, f->name, flen) || name[flen] != '.' || !it)
            continue;
        char list[512] = "";
        size_t at = 0;
        for (size_t k = 0; k < it->n_members && at < sizeof list; k++)
            at += (size_t)snprintf(list + at, sizeof list - at, "%s%s",
                                   k ? ", " : "", it->members[k].key);
        return api_fail(g->p, API_E_INVALID_VALUE, pointer,
                        "the reference answer's %s has no key `%.100s` for "
                        "this request; its keys: %s",
                        f->name, name + flen + 1, list);
    }
    size_t len = strlen(name);
    const api_answer_field *f = api_answers_field(g->table, name, len);
    for (size_t i = 0; !f && i < g->table->n; i++) /* a group's member */
        if (!strncmp(g->table->fields[i].name, name, len) &&
            g->table->fields[i].name[len] == '.' && g->table->fields[i].needs)
            f = &g->table->fields[i];
    return api_fail(g->p, API_E_INVALID_VALUE, pointer,
                    "the reference answer has no `%.100s` for this request: "
                    "%s answers it only with %s in the request",
                    name, g->route->path,
                    f && f->needs ? f->needs : "other inputs");
}

/* Every name "fields", a "points" object and a "compare" map give is
 * answered by this request's reference: a misspelt key of a Transformer's
 * state_dict, a layer the request does not have, grads without
 * grad_output would otherwise be missing for every student, or a
 * comparison quietly unused. */
static int check_named(const grader *g, const json_t *body) {
    size_t i;
    const json_t *e;
    char pointer[API_POINTER_MAX + 16];
    json_array_foreach(g->fields_list, i, e) {
        snprintf(pointer, sizeof pointer, "/fields/%zu", i);
        if (!reference_has(g, json_string_value(e)))
            return not_answered(g, pointer, json_string_value(e));
    }
    static const char *const maps[] = {"points", "compare"};
    for (size_t m = 0; m < 2; m++) {
        const json_t *map = api_field_value(body, maps[m]);
        if (!json_is_object(map) || (m == 1 && api_compare_is_one(map)))
            continue;
        const char *key;
        const json_t *v;
        json_object_foreach((json_t *)map, key, v) {
            if (json_is_null(v) || reference_has(g, key))
                continue;
            api_pointer ptr;
            api_pointer_init(&ptr, m == 0 ? "/points" : "/compare");
            api_pointer_push_key(&ptr, key, strlen(key));
            return not_answered(g, ptr.s, key);
        }
    }
    return 0;
}

/* api_grade_run with g zeroed; what g holds is released by the caller. */
static int grade_run(grader *g, api_call *call, const json_t *body,
                     const api_grade_references *references, api_grade *out) {
    api_problem *p = &call->problem;
    g->p = p;
    g->started_ms = api_clock_ms();
    api_grade_format format = API_GRADE_FORMAT_ATTND;

    /* 1. the grading request's own members, then which route it grades */
    if (check_members(body, p) ||
        find_endpoint(body, &g->route, &g->table, p) ||
        check_fields(g, body, p))
        return -1;
    /* 2. the answer against the route's answer fields, phase by phase */
    const json_t *answer = json_object_get(body, "answer");
    if (run_phase(g, PHASE_UNKNOWN, answer) ||
        run_phase(g, PHASE_MISSING, answer) ||
        run_phase(g, PHASE_TYPES, answer) || run_phase(g, PHASE_SIZES, answer))
        return -1;
    out->hide_expected = json_is_false(api_field_value(body, "show_expected"));
    if (read_compare(g, body, p) ||
        read_choices(body, &out->credit, &format, p) ||
        read_visibility(body, &out->visibility, p) || check_points(g, body, p))
        return -1;

    /* 3. the reference: the endpoint's own typed answer to the request */
    const json_t *request = json_object_get(body, "request");
    api_result reference;
    memset(&reference, 0, sizeof reference);
    int rc;
    uint64_t ops_before = call->cost.ops;
    double ms_before = api_clock_ms();
    if ((g->route->flags & API_ROUTE_JSON_BODY)) {
        rc =
            reference_of(call, references, g->route, request, NULL, &reference);
    } else {
        api_buf query = {0};
        rc = build_query(&query, request, p);
        if (rc == 0 && query.failed)
            rc = api_fail(p, API_E_INTERNAL, NULL, "out of memory");
        if (rc == 0)
            rc = reference_of(call, references, g->route, NULL,
                              query.data ? query.data : "", &reference);
        api_buf_free(&query);
    }
    if (rc) {
        api_invoke_prefix_pointer(p, "/request");
        return -1;
    }
    g->reference = &reference;
    g->reference_ops = call->cost.ops - ops_before;
    g->reference_ms = api_clock_ms() - ms_before;

    /* 4. every field named or given is in the reference; then grade them,
     *    name the mistake behind a failure, and score */
    rc = check_named(g, body);
    if (rc == 0)
        rc = run_phase(g, PHASE_PRESENT, answer);
    /* nothing to grade: no field given, none listed, none in a rubric
     * (checked last, so that a question's settings and request are
     * judged whole by an empty answer: attnd grade --question) */
    if (rc == 0 && g->fields == 0 && !g->fields_list &&
        !json_is_object(api_field_value(body, "points")))
        rc = api_fail(p, API_E_INVALID_VALUE, "/answer",
                      "answer has no field to grade: give some of the "
                      "fields %s answers with (null means absent)",
                      g->route->path);
    if (rc == 0) {
        g->grade = out;
        g->all_pass = 1;
        rc = run_phase(g, PHASE_GRADE, answer);
    }
    if (rc == 0)
        rc = g->fields_list ? add_missing(g)
                            : add_missing_points(g, body, answer);
    if (rc == 0) {
        out->pass = g->all_pass;
        snprintf(out->endpoint, sizeof out->endpoint, "%s", g->route->path);
        if (!g->all_pass)
            find_misconception(g, call, references, request);
        if (g->fields_list && order_as_listed(g))
            rc = -1;
        copy_id(out, body);
        if (rc == 0)
            rc = assign_points(g, body);
        api_grade_score(out);
        if (out->id_json.failed || out->id_text.failed)
            rc = api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    }
    reference_done(references, &reference);
    if (rc) {
        api_grade_free(out);
        return -1;
    }
    return 0;
}

int api_grade_run(api_call *call, const json_t *body,
                  const api_grade_references *references, api_grade *out) {
    grader g;
    memset(&g, 0, sizeof g);
    memset(out, 0, sizeof *out);
    int rc = grade_run(&g, call, body, references, out);
    json_decref(g.listed_index);
    json_decref(g.listed_ways);
    return rc;
}

api_grade_format api_grade_requested_format(const json_t *body) {
    api_grade_format format = API_GRADE_FORMAT_ATTND;
    const json_t *v = api_field_value(body, "format");
    if (json_is_string(v))
        api_grade_format_parse(json_string_value(v), json_string_length(v),
                               &format);
    return format;
}

int api_grade_write_as(const api_grade *grade, api_grade_format format,
                       api_buf *out) {
    if (format == API_GRADE_FORMAT_ATTND) {
        api_grade_write(grade, out);
        return 0;
    }
    api_grade_item item = {
        .id = grade->has_id ? grade->id_text.data : NULL,
        .id_len = grade->id_text.len,
        .grade = grade,
    };
    if (item.id == NULL && grade->has_id)
        item.id = ""; /* an empty string id */
    return api_grade_write_lms(format, &item, 1, out) == -2 ? -1 : 0;
}

int api_grade_body(api_call *call, const json_t *body,
                   const api_grade_references *references, api_buf *out) {
    api_grade grade;
    if (api_grade_run(call, body, references, &grade))
        return -1;
    int rc = api_grade_write_as(&grade, api_grade_requested_format(body), out);
    api_grade_free(&grade);
    if (rc)
        return api_fail(&call->problem, API_E_PAYLOAD_TOO_LARGE, NULL,
                        "the grade's document would be more than %d bytes "
                        "even with every text cut (too many tests): grade "
                        "fewer fields at once",
                        API_LMS_DOC_MAX);
    return 0;
}

static int handle_grade(api_call *call) {
    return api_grade_body(call, call->body, NULL, &call->out);
}

/* ------------------------------------------------------ the fast path */

extern const api_route api_route_grade;

/* The most paths the fast path takes (fastpath.h). */
#define FAST_PATHS_MAX 256

static char fast_text[FAST_PATHS_MAX][API_POINTER_MAX];
static const char *fast_paths[FAST_PATHS_MAX + 1];
static pthread_once_t fast_once = PTHREAD_ONCE_INIT;

/* prefix/name into fast_paths, once (an answer name's dots become '/'). */
static void add_fast_path(size_t *n, const char *prefix, const char *name) {
    char text[API_POINTER_MAX];
    snprintf(text, sizeof text, "%s/%s", prefix, name);
    for (char *c = text; *c; c++)
        if (*c == '.')
            *c = '/';
    for (size_t i = 0; i < *n; i++)
        if (!strcmp(fast_paths[i], text))
            return;
    if (*n == FAST_PATHS_MAX)
        return;
    memcpy(fast_text[*n], text, sizeof text);
    fast_paths[*n] = fast_text[*n];
    (*n)++;
}

/* The endpoint is not known before the body is parsed, so the paths are
 * those of every gradable route: request/<f> for each tensor field of
 * real numbers, which the endpoint's own decoders read (a test holds that
 * no route has a field of that name of another kind), and answer/<a/b>
 * for each tensor member of an answer, which api_grade_view_of reads. */
static void derive_fast_paths(void) {
    size_t n = 0;
    for (size_t r = 0; r < api_route_count(); r++) {
        const api_route *route = api_route_at(r);
        if (!route->answer || route == &api_route_grade)
            continue;
        const char *names[API_FIELDS_MAX + 1];
        size_t k =
            api_schema_real_tensors(route->request, names, API_FIELDS_MAX + 1);
        for (size_t i = 0; i < k; i++)
            add_fast_path(&n, "request", names[i]);
        for (size_t i = 0; i < route->answer->n; i++) {
            const api_answer_field *f = &route->answer->fields[i];
            /* a trace's many members take one path (api/routes/trace.h) */
            if (f->rank > 0 && !f->record)
                add_fast_path(&n, "answer",
                              strncmp(f->name, "trace.", 6) ? f->name
                                                            : "trace.*");
        }
    }
    /* then, while there is room, the "data" of the {"shape", "data"} form */
    for (size_t r = 0; r < api_route_count(); r++) {
        const api_route *route = api_route_at(r);
        if (!route->answer || route == &api_route_grade)
            continue;
        const char *names[API_FIELDS_MAX + 1];
        size_t k =
            api_schema_real_tensors(route->request, names, API_FIELDS_MAX + 1);
        for (size_t i = 0; i < k; i++) {
            char data[API_POINTER_MAX];
            snprintf(data, sizeof data, "%s/data", names[i]);
            add_fast_path(&n, "request", data);
        }
    }
    fast_paths[n] = NULL;
}

static const char *const *grade_fast_paths(void) {
    pthread_once(&fast_once, derive_fast_paths);
    return fast_paths;
}

/* The route table's entry (route.h). */
const api_route api_route_grade = {
    .method = "POST",
    .path = "/grade",
    .handler = handle_grade,
    .flags =
        API_ROUTE_JSON_BODY | API_ROUTE_COMPUTES | API_ROUTE_UNIQUE_MEMBERS,
    .fast_paths = grade_fast_paths,
};
