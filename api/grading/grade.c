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
 * students write numbers); an expected null (a masked score,
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
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "fastpath.h"
#include "grade.h"
#include "grade_variant.h"
#include "grader.h"
#include "invoke.h"
#include "numfmt.h"

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
static int build_query(api_buf *q, const api_fastpath *doc,
                       const json_t *request, api_problem *p) {
    const char *key;
    const json_t *v;
    int first = 1;
    json_object_foreach((json_t *)request, key, v) {
        if (json_is_null(v))
            continue;
        if (json_is_array(v) || json_is_object(v) ||
            api_fastpath_find(doc, v)) {
            api_pointer ptr; /* the caller prefixes /request */
            api_pointer_init(&ptr, "");
            api_pointer_push_key(&ptr, key, strlen(key));
            return api_fail(p, API_E_WRONG_TYPE, ptr.s,
                            "query parameters are numbers or strings; %s is "
                            "%s",
                            key, api_json_kind_in(doc, v));
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
    if (api_grader_listed_at(g, name, strlen(name)) < 0 ||
        json_object_get(graded, name) ||
        !api_grader_gradable_name(g, name, strlen(name)))
        return 0;
    if (!api_grader_new_field(g, name, API_GRADE_MISSING))
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
            api_grader_listed_rank(g, name),
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

/* The reference: from the batch's shared ones, or computed here. */
static int reference_of(api_call *call, const api_grade_references *refs,
                        const api_route *route, const json_t *request,
                        const char *query, api_result *reference) {
    if (refs)
        return refs->answer(refs->ctx, call, route, request, query, reference);
    return api_invoke_result(call, route, request, call->doc, query, reference);
}

static void reference_done(const api_grade_references *refs,
                           api_result *reference) {
    if (refs)
        refs->release(refs->ctx, reference);
    else
        api_result_free(reference);
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
        if (api_grader_graded_value(g, answer, key))
            continue;
        if (!api_grader_new_field(g, key, API_GRADE_MISSING))
            return -1;
        g->all_pass = 0;
    }
    return 0;
}

/* 1 when the reference answers the dotted name: an item of that name, a
 * group with an item under it ("grads"), or a key of a tensors item
 * ("state_dict.layers.0.linear1.weight"). */
static int reference_has(const grader *g, const char *name) {
    size_t len = strlen(name);
    if (api_grader_reference_item(g, name))
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
            return api_grader_reference_member(g, f->name, name + flen + 1,
                                               &m) == 2;
    }
    return 0;
}

/* invalid_value at pointer: the reference does not answer name. */
static int not_answered(const grader *g, const char *pointer,
                        const char *name) {
    for (size_t i = 0; i < g->table->n; i++) {
        const api_answer_field *f = &g->table->fields[i];
        size_t flen = strlen(f->name);
        const api_result_item *it = api_grader_reference_item(g, f->name);
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

/* The endpoint's own typed answer to request (for a GET endpoint, to the
 * query built from it) into *reference (zeroed), g->reference pointed at
 * it and what it cost noted. Returns 0, or -1 with g->p set, its pointer
 * under /request. */
static int compute_reference(grader *g, api_call *call,
                             const api_grade_references *references,
                             const json_t *request, api_result *reference) {
    api_problem *p = g->p;
    int rc;
    uint64_t ops_before = call->cost.ops;
    double ms_before = api_clock_ms();
    if ((g->route->flags & API_ROUTE_JSON_BODY)) {
        rc = reference_of(call, references, g->route, request, NULL, reference);
    } else {
        api_buf query = {0};
        rc = build_query(&query, call->doc, request, p);
        if (rc == 0 && query.failed)
            rc = api_fail(p, API_E_INTERNAL, NULL, "out of memory");
        if (rc == 0)
            rc = reference_of(call, references, g->route, NULL,
                              query.data ? query.data : "", reference);
        api_buf_free(&query);
    }
    if (rc) {
        api_invoke_prefix_pointer(p, "/request");
        return -1;
    }
    g->reference = reference;
    g->reference_ops = call->cost.ops - ops_before;
    g->reference_ms = api_clock_ms() - ms_before;
    return 0;
}

/* The grade of body concluded once its fields are graded into out: the
 * verdict, the mistake behind a failure, the fields in the order listed,
 * the id, each field's points and the scores. Returns 0, or -1 with g->p
 * set. */
static int conclude(grader *g, api_call *call,
                    const api_grade_references *references, const json_t *body,
                    const json_t *request, api_grade *out) {
    int rc = 0;
    out->pass = g->all_pass;
    snprintf(out->endpoint, sizeof out->endpoint, "%s", g->route->path);
    if (!g->all_pass)
        api_grader_find_misconception(g, call, references, request);
    if (g->fields_list && order_as_listed(g))
        rc = -1;
    api_grader_copy_id(out, body);
    if (rc == 0)
        rc = api_grader_assign_points(g, body);
    api_grade_score(out);
    if (out->id_json.failed || out->id_text.failed)
        rc = api_fail(g->p, API_E_INTERNAL, NULL, "out of memory");
    return rc;
}

/* api_grade_run with g and variant zeroed; what they hold is released by
 * the caller. */
static int grade_run(grader *g, api_call *call, const json_t *body,
                     const api_grade_references *references, api_grade *out,
                     api_grade_variant *variant) {
    api_problem *p = &call->problem;
    g->p = p;
    g->doc = call->doc;
    g->started_ms = api_clock_ms();
    api_grade_format format = API_GRADE_FORMAT_ATTND;

    /* 1. the grading request's own members, then which route it grades */
    if (api_grader_check_members(body, p) ||
        api_grader_find_endpoint(body, &g->route, &g->table, p) ||
        api_grader_check_fields(g, body, p))
        return -1;
    /* 2. the answer against the route's answer fields, phase by phase */
    const json_t *answer = json_object_get(body, "answer");
    if (api_grader_run_phase(g, PHASE_UNKNOWN, answer) ||
        api_grader_run_phase(g, PHASE_MISSING, answer) ||
        api_grader_run_phase(g, PHASE_TYPES, answer) ||
        api_grader_run_phase(g, PHASE_SIZES, answer))
        return -1;
    out->hide_expected = json_is_false(api_field_value(body, "show_expected"));
    if (api_grader_read_compare(g, body, p) ||
        api_grader_read_choices(body, &out->credit, &format, p) ||
        api_grader_read_visibility(body, &out->visibility, p) ||
        api_grader_check_points(g, body, p))
        return -1;

    /* 3. the reference: the endpoint's own typed answer to the request,
     *    or to the student's variant when the request is a problem's */
    if (api_grade_variant_draw(call, body, variant))
        return -1;
    const json_t *request =
        variant->request ? variant->request : json_object_get(body, "request");
    g->search_all = references && !variant->request;
    if (variant->request) {
        call->doc = g->doc = &variant->doc;
        if (references && references->sample &&
            !(out->sample = calloc(1, sizeof *out->sample)))
            return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
        if (out->sample && !(out->sample->variant = strdup(variant->student)))
            return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    }
    api_result reference;
    memset(&reference, 0, sizeof reference);
    if (compute_reference(g, call, references, request, &reference))
        return -1;

    /* 4. every field named or given is in the reference; then grade them,
     *    name the mistake behind a failure, and score */
    int rc = check_named(g, body);
    if (rc == 0)
        rc = api_grader_run_phase(g, PHASE_PRESENT, answer);
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
        rc = api_grader_run_phase(g, PHASE_GRADE, answer);
    }
    if (rc == 0)
        rc = g->fields_list ? add_missing(g)
                            : add_missing_points(g, body, answer);
    if (rc == 0)
        rc = conclude(g, call, references, body, request, out);
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
    api_grade_variant variant;
    memset(&variant, 0, sizeof variant);
    const api_fastpath *doc = call->doc;
    int rc = grade_run(&g, call, body, references, out, &variant);
    call->doc = doc;
    api_grade_variant_free(&variant);
    json_decref(g.listed_index);
    json_decref(g.listed_ways);
    if (rc)
        api_grade_free(out);
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

int api_grade_write_body(api_call *call, const api_grade *grade,
                         const json_t *body, api_buf *out) {
    if (api_grade_write_as(grade, api_grade_requested_format(body), out))
        return api_fail(&call->problem, API_E_PAYLOAD_TOO_LARGE, NULL,
                        "the grade's document would be more than %d bytes "
                        "even with every text cut (too many tests): grade "
                        "fewer fields at once",
                        API_LMS_DOC_MAX);
    return 0;
}

int api_grade_body(api_call *call, const json_t *body,
                   const api_grade_references *references, api_buf *out) {
    api_grade grade;
    if (api_grade_run(call, body, references, &grade))
        return -1;
    int rc = api_grade_write_body(call, &grade, body, out);
    api_grade_free(&grade);
    return rc;
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
    /* then, while there is room, the "data" of the {"shape", "data"} form,
     * in requests and in answers */
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
        for (size_t i = 0; i < route->answer->n; i++) {
            const api_answer_field *f = &route->answer->fields[i];
            if (f->rank > 0 && !f->record && strncmp(f->name, "trace.", 6)) {
                char data[API_POINTER_MAX];
                snprintf(data, sizeof data, "%s/data", f->name);
                add_fast_path(&n, "answer", data);
            }
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
    .flags = API_ROUTE_JSON_BODY | API_ROUTE_COMPUTES |
             API_ROUTE_UNIQUE_MEMBERS | API_ROUTE_LANE_GRADING,
    .fast_paths = grade_fast_paths,
};
