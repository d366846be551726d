/*
 * grade_walk.c — the answer walked in phases (grader.h): its names
 * against the endpoint's answer fields, its tensors' forms and sizes,
 * against the reference, and then each field graded into the grade.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fastpath.h"
#include "grade.h"
#include "grade_entries.h"
#include "grader.h"
#include "limit.h"
#include "suggest.h"

int api_grader_is_records(const api_answer_table *t, const char *name,
                          size_t len) {
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

int api_grader_is_events(const api_answer_table *t, const char *name,
                         size_t len) {
    return len == sizeof events_name - 1 && !memcmp(name, events_name, len) &&
           api_answers_is_group(t, "diagnostics", 11);
}

static int events_leaf(grader *g, enum phase ph, const char *name,
                       const json_t *v, api_pointer *ptr);

int api_grader_gradable_name(const grader *g, const char *name, size_t len) {
    if (len == 0 || len >= API_POINTER_MAX)
        return 0;
    if (api_answers_field(g->table, name, len) ||
        api_grader_is_records(g->table, name, len) ||
        api_grader_is_events(g->table, name, len) ||
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

long long api_grader_listed_at(const grader *g, const char *name, size_t len) {
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
           api_grader_listed_at(g, name, len) >= 0;
}

size_t api_grader_listed_rank(const grader *g, const char *field) {
    long long at = api_grader_listed_at(g, field, strlen(field));
    return at >= 0 ? (size_t)at : json_array_size(g->fields_list);
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
        int events = !f && !dotted && api_grader_is_events(g->table, name, len);
        int group = !f && !dotted && !events &&
                    api_answers_is_group(g->table, name, len);
        int records = group && api_grader_is_records(g->table, name, len);
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

const api_result_item *api_grader_reference_item(const grader *g,
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

api_compare api_grader_comparison_of(const grader *g, const char *name) {
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

api_grade_field *api_grader_new_field(grader *g, const char *name,
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

/* A field of a variant's sample (grade_result.h): the entries at
 * api_grade_sample_index of the reference, as the comparison takes them,
 * and of the answer. Returns 0, or -1 when memory runs out. */
static int keep_sample(api_grade_sample *s, const char *name,
                       api_compare compare, const api_grade_ref_view *want,
                       const api_grade_view *got) {
    if (s->n_fields == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 4;
        api_grade_sample_field *more =
            realloc(s->fields, cap * sizeof *s->fields);
        if (!more)
            return -1;
        s->fields = more;
        s->cap = cap;
    }
    api_grade_sample_field *f = &s->fields[s->n_fields];
    if (!(f->name = strdup(name)))
        return -1;
    s->n_fields++;
    f->compare = compare;
    f->count = want->count;
    f->taken =
        want->count < API_GRADE_SAMPLE_MAX ? want->count : API_GRADE_SAMPLE_MAX;
    int precision = api_result_item_precision(want->result, want->item);
    for (size_t k = 0; k < f->taken; k++) {
        size_t i = api_grade_sample_index(k, f->count);
        f->expected[k] = api_grade_as_answered(want->item->data[i], precision);
        api_grade_got e = api_grade_got_at(got, i);
        f->got[k] = e.fast                   ? e.x
                    : json_is_number(e.json) ? json_number_value(e.json)
                                             : NAN;
    }
    return 0;
}

/* Grade one field into a new field of g->grade, against ref (the
 * reference's item, or NULL when it has none). */
static int grade_against(grader *g, const char *name,
                         const api_result_item *ref, const json_t *v,
                         api_pointer *ptr) {
    api_grade_ref_view want;
    api_grade_view got;
    memset(&got, 0, sizeof got);
    if (!ref || api_grade_view_of(&got, g->doc, v, ptr->s)) {
        free(got.leaves);
        return api_fail(g->p, API_E_INTERNAL, NULL,
                        "the reference's %s could not be read", name);
    }
    api_grade_ref_view_of(&want, g->reference, ref);
    int shape_error = got.ragged || !api_grade_same_shape(&want, &got);
    api_grade_field *f = api_grader_new_field(
        g, name, shape_error ? API_GRADE_SHAPE : API_GRADE_VALUES);
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
    int rc = 0;
    api_grade_tally t;
    memset(&t, 0, sizeof t);
    t.rounded_to = -1;
    f->compare = api_grader_comparison_of(g, name);
    api_tensor shape_of_got = {.rank = got.rank, .flat = got.flat};
    memcpy(shape_of_got.shape, got.shape, sizeof got.shape);
    if (api_grade_compare_all(&f->compare, &t, &want, &got, 0)) {
        free(got.leaves);
        return api_limit_deadline_passed(g->p);
    }
    if (g->grade->sample && ref->kind == API_ITEM_TENSOR &&
        keep_sample(g->grade->sample, name, f->compare, &want, &got))
        rc = api_fail(g->p, API_E_INTERNAL, NULL, "out of memory");
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
    return rc;
}

/* Grade one field into a new field of g->grade. */
static int grade_field(grader *g, const char *name, const json_t *v,
                       api_pointer *ptr) {
    return grade_against(g, name, api_grader_reference_item(g, name), v, ptr);
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
    const api_result_item *ref = api_grader_reference_item(g, name);
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
    api_grade_field *f = api_grader_new_field(g, name, API_GRADE_EVENTS);
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
        if (api_grader_reference_item(g, name))
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
    const api_fastpath_array *fd = api_fastpath_find(g->doc, data);
    api_pointer_push_key(ptr, "data", 4);
    if (!json_is_array(data) && fd == NULL)
        return api_fail(g->p, API_E_WRONG_TYPE, ptr->s,
                        "\"data\" must be a flat array of row-major numbers; "
                        "got %s",
                        api_json_kind(data));
    /* the first entry that is an array (one the fast path read nested
     * has one at 0) */
    size_t nested = fd ? (fd->rank > 1 ? 0 : SIZE_MAX) : SIZE_MAX;
    for (size_t i = 0; !fd && i < json_array_size(data); i++)
        if (json_is_array(json_array_get(data, i))) {
            nested = i;
            break;
        }
    if (nested != SIZE_MAX) {
        api_pointer_push_index(ptr, nested);
        return api_fail(g->p, API_E_WRONG_TYPE, ptr->s,
                        "\"data\" is flat (row-major numbers); %s is an "
                        "array",
                        ptr->s);
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
    const api_fastpath_array *fd = api_fastpath_find(g->doc, data);
    size_t n = fd ? fd->count : json_array_size(data);
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
    int records = api_grader_is_records(g->table, name, strlen(name));
    switch (ph) {
    case PHASE_UNKNOWN:
        g->fields++;
        return records ? 0 : api_tensor_check_keys(v, ptr->s, g->p);
    case PHASE_MISSING:
        return records ? 0 : api_tensor_check_missing(v, ptr->s, g->p);
    case PHASE_TYPES:
        if (records && !json_is_array(v) && !api_fastpath_find(g->doc, v))
            return api_fail(g->p, API_E_WRONG_TYPE, ptr->s,
                            "%s is an array of objects, one per epoch, as the "
                            "endpoint answers it; got %s",
                            name, api_json_kind_in(g->doc, v));
        return json_is_object(v) ? flat_types(g, v, ptr) : 0;
    case PHASE_SIZES:
        return json_is_object(v) && !records ? flat_sizes(g, v, ptr) : 0;
    case PHASE_PRESENT: {
        if (api_grader_reference_item(g, name))
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

int api_grader_reference_member(const grader *g, const char *group,
                                const char *key, api_result_item *out) {
    const api_result_item *it = api_grader_reference_item(g, group);
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
            api_grader_reference_member(g, name, key, &known) == 1)
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
            int found = api_grader_reference_member(g, name, key, &m);
            const api_answer_field *f =
                api_answers_field(g->table, name, strlen(name));
            if (found == 0)
                rc = api_fail(g->p, API_E_INVALID_VALUE, ptr->s,
                              "the reference answer has no %s: %s answers it "
                              "only with %s in the request",
                              name, g->route->path,
                              f && f->needs ? f->needs : "other inputs");
            else if (found == 1) {
                const api_result_item *it = api_grader_reference_item(g, name);
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
            rc = api_grader_reference_member(g, name, key, &m) == 2
                     ? grade_against(g, full, &m, v, ptr)
                     : grade_against(g, full, NULL, v, ptr);
        }
        api_pointer_pop(ptr, mark);
        if (rc)
            return -1;
    }
    return 0;
}

int api_grader_run_phase(grader *g, enum phase ph, const json_t *answer) {
    char name[API_POINTER_MAX];
    name[0] = '\0';
    api_pointer ptr;
    api_pointer_init(&ptr, "/answer");
    return walk(g, ph, answer, name, 0, &ptr);
}

const json_t *api_grader_graded_value(const grader *g, const json_t *answer,
                                      const char *name) {
    size_t len = strlen(name);
    if (len == 0 || len >= API_POINTER_MAX)
        return NULL;
    int leaf = api_answers_field(g->table, name, len) ||
               api_grader_is_records(g->table, name, len) ||
               api_grader_is_events(g->table, name, len);
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
