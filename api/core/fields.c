/*
 * fields.c — schema-driven validation phases (see fields.h).
 */
#include "fields.h"

#include <math.h>
#include <string.h>

#include "foreign_names.h"
#include "mask_json.h"
#include "pointer.h"
#include "suggest.h"

static const api_field *find(const api_schema *s, const char *name) {
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->fields[i].name, name))
            return &s->fields[i];
    return NULL;
}

int api_field_is_tensor(const api_field *f) {
    return f->kind == API_FIELD_TENSOR || f->kind == API_FIELD_MASK ||
           f->kind == API_FIELD_BOOL_MASK;
}

/* pointer = base + "/" + name */
static void child(api_pointer *ptr, const char *base, const char *name) {
    api_pointer_init(ptr, base);
    api_pointer_push_key(ptr, name, strlen(name));
}

const json_t *api_field_value(const json_t *obj, const char *name) {
    const json_t *v = json_object_get(obj, name);
    return json_is_null(v) ? NULL : v;
}

/* api_field_value of each field of s (at most API_FIELDS_MAX) into vals,
 * from one pass over obj's members (a member matches a name of exactly its
 * bytes, as json_object_get finds it): a small body has a few members and
 * a schema a dozen fields, whose lookups, three per phase, were about a
 * seventh of a small request's instructions in the api. */
static void field_values(const json_t *obj, const api_schema *s,
                         const json_t *vals[API_FIELDS_MAX]) {
    size_t n = s->n < API_FIELDS_MAX ? s->n : API_FIELDS_MAX;
    memset(vals, 0, API_FIELDS_MAX * sizeof *vals);
    const char *key;
    size_t key_len;
    json_t *v;
    json_object_keylen_foreach((json_t *)obj, key, key_len, v) {
        for (size_t i = 0; i < n; i++) {
            const char *name = s->fields[i].name;
            if (strlen(name) == key_len && memcmp(name, key, key_len) == 0) {
                vals[i] = json_is_null(v) ? NULL : v;
                break;
            }
        }
    }
}

/* Field i's value: from vals, or looked up past API_FIELDS_MAX. */
static const json_t *value_of(const json_t *obj, const api_field *f, size_t i,
                              const json_t *const vals[API_FIELDS_MAX]) {
    return i < API_FIELDS_MAX ? vals[i] : api_field_value(obj, f->name);
}

/* ------------------------------------------------------ unknown_field */

static int unknown_key(const api_schema *s, const char *key, const char *base,
                       api_problem *p) {
    api_pointer ptr;
    child(&ptr, base, key);
    const char *names[32];
    size_t n = s->n < 32 ? s->n : 32;
    for (size_t i = 0; i < n; i++)
        names[i] = s->fields[i].name;
    char known[512];
    api_join_names(known, sizeof known, names, n);
    const char *foreign = api_foreign_name(key, names, n);
    if (foreign)
        return api_fail(p, API_E_UNKNOWN_FIELD, ptr.s,
                        "unknown field `%s` in %s: `%s` %s. Known fields: %s",
                        key, s->what, key, foreign, known);
    char hint[API_SUGGEST_TEXT];
    return api_fail(p, API_E_UNKNOWN_FIELD, ptr.s,
                    "unknown field `%s` in %s%s Known fields: %s", key, s->what,
                    api_did_you_mean(hint, key, strlen(key), names, n), known);
}

int api_fields_unknown(const json_t *obj, const api_schema *s, const char *base,
                       api_problem *p) {
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        if (!find(s, key))
            return unknown_key(s, key, base, p);
    }
    const json_t *vals[API_FIELDS_MAX];
    field_values(obj, s, vals);
    for (size_t i = 0; i < s->n; i++) {
        const api_field *f = &s->fields[i];
        v = value_of(obj, f, i, vals);
        if (!v)
            continue;
        api_pointer ptr;
        child(&ptr, base, f->name);
        if (api_field_is_tensor(f) && api_tensor_check_keys(v, ptr.s, p))
            return -1;
        if (f->kind == API_FIELD_OBJECT && json_is_object(v) &&
            api_fields_unknown(v, f->object, ptr.s, p))
            return -1;
    }
    return 0;
}

/* ------------------------------------------------------ missing_field */

int api_fields_missing(const json_t *obj, const api_schema *s, const char *base,
                       api_problem *p) {
    const json_t *vals[API_FIELDS_MAX];
    field_values(obj, s, vals);
    for (size_t i = 0; i < s->n; i++) {
        const api_field *f = &s->fields[i];
        if (!f->required || value_of(obj, f, i, vals))
            continue;
        api_pointer ptr;
        child(&ptr, base, f->name);
        return api_fail(p, API_E_MISSING_FIELD, ptr.s,
                        "%s needs the field `%s`%s", s->what, f->name,
                        json_is_null(json_object_get(obj, f->name))
                            ? " (null means absent)"
                            : "");
    }
    for (size_t i = 0; i < s->n; i++) {
        const api_field *f = &s->fields[i];
        const json_t *v = value_of(obj, f, i, vals);
        if (!v)
            continue;
        api_pointer ptr;
        child(&ptr, base, f->name);
        if (api_field_is_tensor(f) && api_tensor_check_missing(v, ptr.s, p))
            return -1;
        if (f->kind == API_FIELD_OBJECT && json_is_object(v) &&
            api_fields_missing(v, f->object, ptr.s, p))
            return -1;
    }
    return 0;
}

/* --------------------------------------------------------- wrong_type */

static int integral(const json_t *v) {
    if (json_is_integer(v))
        return 1;
    double x = json_real_value(v);
    return json_is_real(v) && isfinite(x) && x == floor(x);
}

static int type_error(const char *pointer, const char *name, const char *want,
                      const api_fastpath *doc, const json_t *v,
                      api_problem *p) {
    return api_fail(p, API_E_WRONG_TYPE, pointer, "%s must be %s; got %s", name,
                    want, api_json_kind_in(doc, v));
}

/* The pointer /fit/epochs as the name "fit.epochs" (schema names need no
 * RFC 6901 escapes). */
static void dotted_name(char out[API_POINTER_MAX], const char *pointer) {
    size_t n = 0;
    for (const char *c = pointer + (*pointer == '/');
         *c && n + 1 < API_POINTER_MAX; c++)
        out[n++] = *c == '/' ? '.' : *c;
    out[n] = '\0';
}

int api_fields_types(const api_fastpath *doc, const json_t *obj,
                     const api_schema *s, const char *base, api_problem *p) {
    const json_t *vals[API_FIELDS_MAX];
    field_values(obj, s, vals);
    for (size_t i = 0; i < s->n; i++) {
        const api_field *f = &s->fields[i];
        const json_t *v = value_of(obj, f, i, vals);
        if (!v)
            continue;
        api_pointer ptr;
        child(&ptr, base, f->name);
        /* a nested field is named by its path: fit.epochs */
        char name[API_POINTER_MAX];
        dotted_name(name, ptr.s);
        switch (f->kind) {
        case API_FIELD_TENSOR:
            if (api_tensor_check_types(doc, v, f->tensor, ptr.s, p))
                return -1;
            break;
        case API_FIELD_NUMBER:
            if (!json_is_number(v))
                return type_error(ptr.s, name, "a number", doc, v, p);
            break;
        case API_FIELD_INTEGER:
            if (!json_is_number(v))
                return type_error(ptr.s, name, "an integer", doc, v, p);
            if (!integral(v))
                return api_fail(p, API_E_WRONG_TYPE, ptr.s,
                                "%s must be an integer (2 or 2.0); got a "
                                "number with a fraction",
                                name);
            break;
        case API_FIELD_BOOL:
            if (!json_is_boolean(v))
                return type_error(ptr.s, name, "true or false", doc, v, p);
            break;
        case API_FIELD_STRING:
            if (!json_is_string(v))
                return type_error(ptr.s, name, "a string", doc, v, p);
            break;
        case API_FIELD_BOOL_OR_STRING:
            if (!json_is_boolean(v) && !json_is_string(v))
                return type_error(ptr.s, name, "true, false or a string", doc,
                                  v, p);
            break;
        case API_FIELD_NUMBER_OR_STRING:
            if (!json_is_number(v) && !json_is_string(v))
                return type_error(ptr.s, name, "a number or a string", doc, v,
                                  p);
            break;
        case API_FIELD_STRINGS:
            if (!json_is_array(v))
                return type_error(ptr.s, name, "an array of strings", doc, v,
                                  p);
            for (size_t k = 0; k < json_array_size(v); k++)
                if (!json_is_string(json_array_get(v, k))) {
                    api_pointer_push_index(&ptr, k);
                    return api_fail(p, API_E_WRONG_TYPE, ptr.s,
                                    "%s must be an array of strings; entry "
                                    "%zu is %s",
                                    name, k,
                                    api_json_kind(json_array_get(v, k)));
                }
            break;
        case API_FIELD_MASK:
        case API_FIELD_BOOL_MASK:
            if (api_mask_check_types(doc, v, f->tensor,
                                     f->kind == API_FIELD_BOOL_MASK, ptr.s, p))
                return -1;
            break;
        case API_FIELD_OBJECT:
            if (!json_is_object(v))
                return type_error(ptr.s, name, "an object", doc, v, p);
            if (api_fields_types(doc, v, f->object, ptr.s, p))
                return -1;
            break;
        }
    }
    return 0;
}

int api_fields_check(const api_fastpath *doc, const json_t *obj,
                     const api_schema *s, const char *base, api_problem *p) {
    if (api_fields_unknown(obj, s, base, p) ||
        api_fields_missing(obj, s, base, p) ||
        api_fields_types(doc, obj, s, base, p))
        return -1;
    return 0;
}

/* ------------------------------------------------------------ tensors */

int api_field_tensor(api_tensor *t, int *present, const api_fastpath *doc,
                     const json_t *obj, const char *name,
                     const api_tensor_spec *spec, size_t max_elements,
                     api_problem *p) {
    const json_t *v = api_field_value(obj, name);
    *present = v != NULL;
    if (!v) {
        memset(t, 0, sizeof *t);
        return 0;
    }
    api_pointer ptr;
    child(&ptr, "", name);
    return api_tensor_decode(t, doc, v, spec, ptr.s, max_elements, p);
}

/* ------------------------------------------------------------ readers */

int api_field_bool(const json_t *obj, const char *name, int def) {
    const json_t *v = api_field_value(obj, name);
    return v ? json_is_true(v) : def;
}

double api_field_number(const json_t *obj, const char *name, double def) {
    const json_t *v = api_field_value(obj, name);
    return json_is_number(v) ? json_number_value(v) : def;
}

const char *api_field_string(const json_t *obj, const char *name,
                             const char *def) {
    const json_t *v = api_field_value(obj, name);
    return json_is_string(v) ? api_string_text(v) : def;
}

const char *api_string_text(const json_t *v) {
    const char *s = json_string_value(v);
    /* "flat\u0000" must not pass for "flat": such a string matches no
     * allowed value, and the detail says why */
    if (strlen(s) != json_string_length(v))
        return API_FIELD_STRING_NUL;
    return s;
}

int api_field_int(const json_t *obj, const char *name, int64_t def,
                  int64_t *out) {
    const json_t *v = api_field_value(obj, name);
    *out = def;
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
    } else if (json_is_real(v)) {
        double x = json_real_value(v);
        /* int64 holds [-2^63, 2^63); 2^63 itself is the first real out */
        if (x >= 9223372036854775808.0) {
            *out = INT64_MAX;
            return -1;
        }
        if (x < -9223372036854775808.0) {
            *out = INT64_MIN;
            return -1;
        }
        *out = (int64_t)x;
    }
    return 0;
}

size_t api_schema_real_tensors(const api_schema *s, const char **names,
                               size_t cap) {
    size_t n = 0;
    for (size_t i = 0; s && i < s->n && n + 1 < cap; i++)
        if (s->fields[i].kind == API_FIELD_TENSOR &&
            !(s->fields[i].tensor->flags & API_TENSOR_INTEGRAL))
            names[n++] = s->fields[i].name;
    if (cap)
        names[n] = NULL;
    return n;
}
