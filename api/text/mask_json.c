/*
 * mask_json.c — the JSON codec of boolean and float masks (see
 * mask_json.h): the kinds of the entries are checked and read here; the
 * shapes, nested or flat, by the tensor codec's own decoder (tensor.h),
 * told that a mask's entries are any value but an array.
 */
#include "mask_json.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pointer.h"

/* The kind of one entry: a boolean, a number or null (a float mask's), an
 * array, or anything else (-1). */
enum {
    KIND_BOOL = API_MASK_BOOL,
    KIND_FLOAT = API_MASK_FLOAT,
    KIND_ARRAY,
    KIND_OTHER = -1
};

static int entry_kind(const json_t *e) {
    if (json_is_boolean(e))
        return KIND_BOOL;
    if (json_is_number(e) || json_is_null(e))
        return KIND_FLOAT;
    return json_is_array(e) ? KIND_ARRAY : KIND_OTHER;
}

/* ------------------------------------------------ phase: wrong_type */

/* The first entry's kind and where it is, as the walk meets the entries
 * in document order. */
typedef struct {
    const api_tensor_spec *spec;
    int bool_only;
    int kind; /* -1 until the first entry */
    char first[API_POINTER_MAX];
    const json_t *first_value;
} kinds;

static const char *kind_text(const json_t *e) {
    if (json_is_true(e))
        return "true";
    if (json_is_false(e))
        return "false";
    if (json_is_null(e))
        return "null";
    return api_json_kind(e);
}

/* One leaf entry e at ptr. */
static int check_entry(kinds *k, const json_t *e, const api_pointer *ptr,
                       api_problem *p) {
    int kind = entry_kind(e);
    if (kind == KIND_OTHER || (k->bool_only && kind != KIND_BOOL)) {
        if (k->bool_only)
            return api_fail(p, API_E_WRONG_TYPE, ptr->s,
                            "%s entries are true (the key is padding and "
                            "ignored) or false; %s is %s",
                            k->spec->name, ptr->s, kind_text(e));
        return api_fail(p, API_E_WRONG_TYPE, ptr->s,
                        "%s entries are all booleans (true = not allowed) "
                        "or all numbers added to the scores (null = "
                        "-infinity); %s is %s",
                        k->spec->name, ptr->s, api_json_kind(e));
    }
    if (k->kind < 0) {
        k->kind = kind;
        snprintf(k->first, sizeof k->first, "%s", ptr->s);
        k->first_value = e;
        return 0;
    }
    if (kind == k->kind)
        return 0;
    return api_fail(p, API_E_WRONG_TYPE, ptr->s,
                    "%s mixes booleans and numbers: its first entry %s is "
                    "%s, so it is a %s mask, but %s is %s. A boolean mask "
                    "is all true/false (true = not allowed); a float mask "
                    "is all numbers, added to the scores, with null for "
                    "-infinity",
                    k->spec->name, k->first, kind_text(k->first_value),
                    k->kind == KIND_BOOL ? "boolean" : "float", ptr->s,
                    kind_text(e));
}

/* Nested arrays in document order; depth is bounded, a deeper array is
 * left to api_mask_decode (a rank error). */
static int walk_types(kinds *k, const json_t *a, size_t depth, api_pointer *ptr,
                      api_problem *p) {
    size_t n = json_array_size(a);
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(a, i);
        size_t mark = api_pointer_push_index(ptr, i);
        int rc = 0;
        if (json_is_array(e)) {
            if (depth < API_SHAPE_MAX)
                rc = walk_types(k, e, depth + 1, ptr, p);
        } else {
            rc = check_entry(k, e, ptr, p);
        }
        api_pointer_pop(ptr, mark);
        if (rc)
            return rc;
    }
    return 0;
}

int api_mask_check_types(const api_fastpath *doc, const json_t *v,
                         const api_tensor_spec *spec, int bool_only,
                         const char *pointer, api_problem *p) {
    kinds k = {spec, bool_only, -1, "", NULL};
    api_pointer ptr;
    api_pointer_init(&ptr, pointer);
    if (json_is_array(v))
        return walk_types(&k, v, 1, &ptr, p);
    if (!json_is_object(v))
        return api_fail(p, API_E_WRONG_TYPE, pointer,
                        "%s must be a mask %s: nested arrays of %s, or "
                        "{\"shape\", \"data\"}; got %s",
                        spec->name, spec->shapes,
                        bool_only ? "true/false"
                                  : "true/false or of numbers (null = "
                                    "-infinity)",
                        api_json_kind_in(doc, v));
    const json_t *data = json_object_get(v, "data");
    if (api_tensor_check_shape_types(v, &ptr, p))
        return -1;
    api_pointer_push_key(&ptr, "data", 4);
    if (!json_is_array(data))
        return api_fail(p, API_E_WRONG_TYPE, ptr.s,
                        "\"data\" must be a flat array of the mask's "
                        "entries; got %s",
                        api_json_kind_in(doc, data));
    for (size_t i = 0; i < json_array_size(data); i++) {
        const json_t *e = json_array_get(data, i);
        size_t m = api_pointer_push_index(&ptr, i);
        if (json_is_array(e))
            return api_fail(p, API_E_WRONG_TYPE, ptr.s,
                            "\"data\" is flat (row-major entries); %s is an "
                            "array",
                            ptr.s);
        if (check_entry(&k, e, &ptr, p))
            return -1;
        api_pointer_pop(&ptr, m);
    }
    return 0;
}

/* --------------------------------------------- phase: shapes and sizes */

/* The first entry of a decoded mask (count >= 1). */
static const json_t *first_entry(const api_tensor *t) {
    const json_t *x = t->src;
    if (t->flat)
        return json_array_get(x, 0);
    while (json_is_array(x))
        x = json_array_get(x, 0);
    return x;
}

int api_mask_decode(api_tensor *t, api_mask_kind *kind, const api_fastpath *doc,
                    const json_t *v, const api_tensor_spec *spec,
                    const char *pointer, size_t max_elements, api_problem *p) {
    memset(t, 0, sizeof *t);
    /* the flat form's checks are the tensor codec's: they never look at
     * the entries of "data" */
    int rc = json_is_object(v)
                 ? api_tensor_decode(t, doc, v, spec, pointer, max_elements, p)
                 : api_tensor_decode_nested(t, v, spec, API_LEAVES_MASK,
                                            pointer, max_elements, p);
    if (rc)
        return -1;
    *kind = json_is_boolean(first_entry(t)) ? API_MASK_BOOL : API_MASK_FLOAT;
    return 0;
}

/* ------------------------------------------------------------ reading */

/* The leaves of nested rows a (level < rank) into f(ctx, leaf), row-major. */
typedef void (*leaf_fn)(void *ctx, size_t at, const json_t *leaf);

static size_t walk_leaves(const json_t *a, leaf_fn f, void *ctx, size_t at) {
    size_t n = json_array_size(a);
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(a, i);
        if (json_is_array(e)) {
            at = walk_leaves(e, f, ctx, at);
        } else {
            f(ctx, at++, e);
        }
    }
    return at;
}

static void put_bool(void *ctx, size_t at, const json_t *leaf) {
    ((unsigned char *)ctx)[at] = json_is_true(leaf) ? 1 : 0;
}

static void put_float(void *ctx, size_t at, const json_t *leaf) {
    ((double *)ctx)[at] =
        json_is_null(leaf) ? -INFINITY : json_number_value(leaf);
}

void api_mask_read_bool(unsigned char *dst, const api_tensor *t) {
    walk_leaves(t->src, put_bool, dst, 0);
}

void api_mask_read_float(double *dst, const api_tensor *t) {
    walk_leaves(t->src, put_float, dst, 0);
}
