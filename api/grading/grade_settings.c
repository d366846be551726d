/*
 * grade_settings.c — a grading request's own members (grader.h): which
 * endpoint, which fields, the comparison, credit, visibility and points,
 * each checked in the order grade.c's comment gives; and each field's
 * points once graded.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "foreign_names.h"
#include "grade.h"
#include "grade_variant.h"
#include "grader.h"
#include "suggest.h"

static const char *const members[] = {
    "endpoint",      "request",
    "answer",        "rtol",
    "atol",          "id",
    "points",        "credit",
    "format",        "compare",
    "fields",        "visibility",
    "show_expected", API_GRADE_VARIANT_MEMBERS};
#define N_MEMBERS (sizeof members / sizeof members[0])
#define MEMBER_LIST                                                            \
    "endpoint, request, answer, rtol, atol, id, points, credit, format, "      \
    "compare, fields, visibility, show_expected, problem, version, group"

/* The gradable route whose request has a field named key: the endpoint
 * body names when it is one, else the first in the table; NULL: none. */
static const api_route *request_field_of(const json_t *body, const char *key) {
    const api_route *named =
        api_route_find(json_string_value(json_object_get(body, "endpoint")));
    for (size_t r = 0; r <= api_route_count(); r++) {
        const api_route *route = r == 0 ? named : api_route_at(r - 1);
        if (route == NULL || !route->answer || route->request == NULL)
            continue;
        for (size_t i = 0; i < route->request->n; i++)
            if (!strcmp(route->request->fields[i].name, key))
                return route;
    }
    return NULL;
}

/* unknown_field: a member /grade does not take, with what it means when
 * it is another tool's name or a field of the graded request, else the
 * closest known one. */
static int check_unknown_members(const json_t *body, api_problem *p) {
    const char *key;
    const json_t *v;
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
        const api_route *owner = foreign ? NULL : request_field_of(body, key);
        if (owner)
            return api_fail(p, API_E_UNKNOWN_FIELD, ptr.s,
                            "unknown field `%s` in /grade: `%s` is a field of "
                            "%s's request, and goes inside `request`, as "
                            "{\"endpoint\", \"request\": {its fields}, "
                            "\"answer\"}. Known fields: " MEMBER_LIST,
                            key, key, owner->path);
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
    return 0;
}

/* missing_field (null = absent): endpoint, request and answer. */
static int check_missing_members(const json_t *body, api_problem *p) {
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
    return 0;
}

/* wrong_type of endpoint, request and answer. */
static int check_required_types(const json_t *body, api_problem *p) {
    const json_t *v = json_object_get(body, "endpoint");
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
    return 0;
}

/* wrong_type (null = absent) of rtol, atol, id and points, and the id's
 * length. */
static int check_tolerances_id_points(const json_t *body, api_problem *p) {
    const json_t *v;
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
    return 0;
}

/* wrong_type (null = absent) of credit, format, visibility, compare,
 * show_expected and fields. */
static int check_option_types(const json_t *body, api_problem *p) {
    const json_t *v;
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

int api_grader_check_members(const json_t *body, api_problem *p) {
    if (check_unknown_members(body, p) || check_missing_members(body, p) ||
        check_required_types(body, p) || check_tolerances_id_points(body, p))
        return -1;
    return check_option_types(body, p);
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

int api_grader_find_endpoint(const json_t *body, const api_route **route,
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

int api_grader_check_fields(grader *g, const json_t *body, api_problem *p) {
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
        if (!api_grader_gradable_name(g, json_string_value(e),
                                      json_string_length(e))) {
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

int api_grader_read_compare(grader *g, const json_t *body, api_problem *p) {
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
        if (!api_grader_gradable_name(g, key, strlen(key)))
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

int api_grader_read_visibility(const json_t *body, api_grade_visibility *out,
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

int api_grader_read_choices(const json_t *body, api_grade_credit *credit,
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

/* 1 when name is one field the endpoint answers with (not a group of
 * them): what a "points" object may name without "fields". */
static int field_name(const grader *g, const char *name) {
    size_t len = strlen(name);
    return api_grader_gradable_name(g, name, len) &&
           (!api_answers_is_group(g->table, name, len) ||
            api_grader_is_records(g->table, name, len) ||
            api_grader_is_events(g->table, name, len));
}

int api_grader_check_points(const grader *g, const json_t *body,
                            api_problem *p) {
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
        if (g->fields_list ? api_grader_listed_at(g, key, strlen(key)) < 0 ||
                                 !api_grader_gradable_name(g, key, strlen(key))
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

int api_grader_assign_points(grader *g, const json_t *body) {
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

void api_grader_copy_id(api_grade *grade, const json_t *body) {
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
