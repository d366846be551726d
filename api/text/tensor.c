/*
 * tensor.c — the tensor codec (see tensor.h): JSON <-> shape + doubles.
 */
#include "tensor.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "entries.h"
#include "fastpath.h"
#include "numfmt.h"
#include "pointer.h"
#include "stream.h"
#include "suggest.h"

/* ------------------------------------------------------------ helpers */

/* A JSON integer, or a real with no fractional part. */
static int is_integral(const json_t *v) {
    if (json_is_integer(v))
        return 1;
    if (!json_is_real(v))
        return 0;
    double x = json_real_value(v);
    return isfinite(x) && x == floor(x);
}

/* Whether spec asks for integers (API_TENSOR_INTEGRAL). */
static int integers_only(const api_tensor_spec *spec) {
    return (spec->flags & API_TENSOR_INTEGRAL) != 0;
}

/* "[2, 3, 4]" into s (cap bytes). */
static const char *shape_text(char *s, size_t cap, const size_t *shape,
                              size_t rank) {
    size_t n = 0;
    s[n++] = '[';
    for (size_t i = 0; i < rank && n + 24 < cap; i++)
        n += (size_t)snprintf(s + n, cap - n, "%s%zu", i ? ", " : "", shape[i]);
    snprintf(s + n, cap - n, "]");
    return s;
}

static size_t max_rank(unsigned ranks) {
    size_t r = 0;
    for (size_t i = 0; i <= API_SHAPE_MAX; i++)
        if (ranks & API_RANK(i))
            r = i;
    return r;
}

/* "rank 3 (B, Nq, d) or 2 (Nq, d)" comes from the spec's shapes text. */
static int rank_error(const api_tensor_spec *spec, const char *pointer,
                      const size_t *shape, size_t rank, int known,
                      api_problem *p) {
    char got[160];
    long long expected[API_SHAPE_MAX];
    size_t er = max_rank(spec->ranks);
    for (size_t i = 0; i < er; i++)
        expected[i] = -1;
    if (known)
        api_fail(p, API_E_SHAPE_MISMATCH, pointer,
                 "%s must have shape %s; got rank %zu, shape %s", spec->name,
                 spec->shapes, rank, shape_text(got, sizeof got, shape, rank));
    else
        api_fail(p, API_E_SHAPE_MISMATCH, pointer,
                 "%s must have shape %s; got arrays nested more than %d deep",
                 spec->name, spec->shapes, API_SHAPE_MAX);
    api_problem_shapes_z(p, expected, er, known ? shape : NULL, rank);
    return -1;
}

/* --------------------------------------------- phase: unknown_field */

int api_tensor_check_keys(const json_t *v, const char *pointer,
                          api_problem *p) {
    static const char *const names[] = {"shape", "data"};
    if (!json_is_object(v))
        return 0;
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)v, key, value) {
        if (!strcmp(key, "shape") || !strcmp(key, "data"))
            continue;
        api_pointer ptr;
        api_pointer_init(&ptr, pointer);
        api_pointer_push_key(&ptr, key, strlen(key));
        char hint[API_SUGGEST_TEXT];
        return api_fail(p, API_E_UNKNOWN_FIELD, ptr.s,
                        "unknown field `%s` in the tensor %s: a tensor "
                        "object has only \"shape\" and \"data\"%s",
                        key, pointer,
                        api_did_you_mean(hint, key, strlen(key), names, 2));
    }
    return 0;
}

/* --------------------------------------------- phase: missing_field */

int api_tensor_check_missing(const json_t *v, const char *pointer,
                             api_problem *p) {
    static const char *const names[] = {"shape", "data"};
    if (!json_is_object(v))
        return 0;
    for (size_t i = 0; i < 2; i++) {
        const json_t *m = json_object_get(v, names[i]);
        if (m && !json_is_null(m))
            continue;
        api_pointer ptr;
        api_pointer_init(&ptr, pointer);
        api_pointer_push_key(&ptr, names[i], strlen(names[i]));
        return api_fail(p, API_E_MISSING_FIELD, ptr.s,
                        "the tensor object at %s needs \"%s\": write "
                        "{\"shape\": [d0, d1, ...], \"data\": [row-major "
                        "numbers]} or nested arrays",
                        pointer, names[i]);
    }
    return 0;
}

/* ------------------------------------------------ phase: wrong_type */

static int non_integral_error(const api_tensor_spec *spec, api_pointer *ptr,
                              api_problem *p) {
    return api_fail(p, API_E_WRONG_TYPE, ptr->s,
                    "%s entries must be integers; %s is not", spec->name,
                    ptr->s);
}

static int entry_type_error(const api_tensor_spec *spec, const json_t *e,
                            api_pointer *ptr, api_problem *p) {
    if (json_is_number(e))
        return non_integral_error(spec, ptr, p);
    if (json_is_null(e) && !integers_only(spec) &&
        (spec->flags & API_TENSOR_MASKED_SCORES))
        return api_fail(p, API_E_WRONG_TYPE, ptr->s,
                        "%s entries must be numbers; %s is null: attnd "
                        "prints a masked score as null, and takes masks as "
                        "valid_lens, causal or attn_mask (where null is "
                        "-inf); send finite numbers",
                        spec->name, ptr->s);
    return api_fail(p, API_E_WRONG_TYPE, ptr->s,
                    "%s entries must be numbers; %s is %s", spec->name, ptr->s,
                    api_json_kind(e));
}

/* Every entry of a nested array is a number (integral if asked) or an
 * array; depth is bounded so hostile nesting costs no stack. */
static int walk_types(const json_t *a, size_t depth,
                      const api_tensor_spec *spec, api_pointer *ptr,
                      api_problem *p) {
    size_t n = json_array_size(a);
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(a, i);
        if (json_is_number(e)) {
            if (!integers_only(spec) || is_integral(e))
                continue;
        } else if (json_is_array(e)) {
            if (depth >= API_SHAPE_MAX)
                continue; /* a rank error for api_tensor_decode */
            size_t mark = api_pointer_push_index(ptr, i);
            int rc = walk_types(e, depth + 1, spec, ptr, p);
            api_pointer_pop(ptr, mark);
            if (rc)
                return rc;
            continue;
        }
        api_pointer_push_index(ptr, i);
        return entry_type_error(spec, e, ptr, p);
    }
    return 0;
}

/* A fast-path array fits a tensor's shape. */
_Static_assert(API_FASTPATH_RANK_MAX == API_SHAPE_MAX,
               "the fast path reads arrays of a tensor's rank");

/* An array read by the fast path (fastpath.h) holds numbers only, so the
 * one type error left is a non-integral entry (the first, row-major, is
 * the first in document order). */
static int check_types_fast(const api_fastpath_array *fa,
                            const api_tensor_spec *spec, const char *pointer,
                            api_problem *p) {
    for (size_t i = 0; integers_only(spec) && i < fa->count; i++) {
        double x = api_fastpath_at(fa, i);
        if (isfinite(x) && x == floor(x))
            continue;
        api_tensor t = {.rank = fa->rank, .count = fa->count};
        memcpy(t.shape, fa->shape, sizeof t.shape);
        api_pointer ptr;
        api_tensor_entry_pointer(&ptr, pointer, &t, i);
        return non_integral_error(spec, &ptr, p);
    }
    return 0;
}

/* The same for the "data" of a {"shape", "data"} tensor (ptr at it),
 * whose numbers count in row-major order: a request of the tensor
 * protocol (the v2 front) may send its data nested, and its document says
 * so (api_fastpath.nested_data); elsewhere "data" is flat. */
static int check_flat_fast(const api_fastpath_array *fa,
                           const api_tensor_spec *spec, api_pointer *ptr,
                           api_problem *p) {
    if (fa->rank > 1 && !fa->doc->nested_data) {
        api_pointer_push_index(ptr, 0);
        return api_fail(p, API_E_WRONG_TYPE, ptr->s,
                        "\"data\" is flat (row-major numbers); %s is an "
                        "array",
                        ptr->s);
    }
    for (size_t i = 0; integers_only(spec) && i < fa->count; i++) {
        double x = api_fastpath_at(fa, i);
        if (isfinite(x) && x == floor(x))
            continue;
        api_pointer_push_index(ptr, i);
        return non_integral_error(spec, ptr, p);
    }
    return 0;
}

int api_tensor_check_shape_types(const json_t *v, api_pointer *ptr,
                                 api_problem *p) {
    const json_t *shape = json_object_get(v, "shape");
    size_t mark = api_pointer_push_key(ptr, "shape", 5);
    if (!json_is_array(shape))
        return api_fail(p, API_E_WRONG_TYPE, ptr->s,
                        "\"shape\" must be an array of integers; got %s",
                        api_json_kind(shape));
    for (size_t i = 0; i < json_array_size(shape); i++) {
        const json_t *d = json_array_get(shape, i);
        if (is_integral(d))
            continue;
        api_pointer_push_index(ptr, i);
        return api_fail(p, API_E_WRONG_TYPE, ptr->s,
                        "\"shape\" entries must be integers; %s is %s", ptr->s,
                        json_is_number(d) ? "not" : api_json_kind(d));
    }
    api_pointer_pop(ptr, mark);
    return 0;
}

int api_tensor_check_types(const api_fastpath *doc, const json_t *v,
                           const api_tensor_spec *spec, const char *pointer,
                           api_problem *p) {
    const api_fastpath_array *fa = api_fastpath_find(doc, v);
    if (fa)
        return check_types_fast(fa, spec, pointer, p);
    api_pointer ptr;
    api_pointer_init(&ptr, pointer);
    if (json_is_array(v))
        return walk_types(v, 1, spec, &ptr, p);
    if (json_is_number(v) && (spec->ranks & API_RANK(0))) {
        if (integers_only(spec) && !is_integral(v))
            return entry_type_error(spec, v, &ptr, p);
        return 0;
    }
    if (!json_is_object(v))
        return api_fail(p, API_E_WRONG_TYPE, pointer,
                        "%s must be a tensor %s: nested arrays of numbers or "
                        "{\"shape\", \"data\"}; got %s",
                        spec->name, spec->shapes, api_json_kind(v));
    const json_t *data = json_object_get(v, "data");
    if (api_tensor_check_shape_types(v, &ptr, p))
        return -1;
    api_pointer_push_key(&ptr, "data", 4);
    const api_fastpath_array *fd = api_fastpath_find(doc, data);
    if (fd) /* the v2 front's data, read without jansson: numbers only */
        return check_flat_fast(fd, spec, &ptr, p);
    if (!json_is_array(data))
        return api_fail(p, API_E_WRONG_TYPE, ptr.s,
                        "\"data\" must be a flat array of numbers; got %s",
                        api_json_kind(data));
    size_t n = json_array_size(data);
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(data, i);
        if (json_is_number(e) && (!integers_only(spec) || is_integral(e)))
            continue;
        api_pointer_push_index(&ptr, i);
        if (json_is_array(e))
            return api_fail(p, API_E_WRONG_TYPE, ptr.s,
                            "\"data\" is flat (row-major numbers); %s is an "
                            "array",
                            ptr.s);
        return entry_type_error(spec, e, &ptr, p);
    }
    return 0;
}

/* --------------------------------------------- phase: shapes and sizes */

/* Rows must match the first-child shape at every level, in document
 * order. level < rank; a is the row at ptr. */
static int walk_ragged(const json_t *a, size_t level, const size_t *shape,
                       size_t rank, const api_tensor_spec *spec,
                       api_leaves leaves, api_pointer *ptr, api_problem *p) {
    size_t n = json_array_size(a);
    if (n != shape[level])
        return api_fail(p, API_E_RAGGED_ARRAY, ptr->s,
                        "%s is ragged: the row at %s has %zu %s but its "
                        "first sibling has %zu; every row of one level must "
                        "have the same length",
                        spec->name, ptr->s, n,
                        api_plural(n, "entry", "entries"), shape[level]);
    int leaf = level + 1 == rank;
    const char *a_leaf = leaves == API_LEAVES_MASK ? "an entry" : "a number";
    for (size_t i = 0; i < n; i++) {
        const json_t *e = json_array_get(a, i);
        int is_leaf =
            leaves == API_LEAVES_MASK ? !json_is_array(e) : json_is_number(e);
        if (leaf && is_leaf)
            continue;
        size_t mark = api_pointer_push_index(ptr, i);
        if (leaf || !json_is_array(e)) {
            if (!json_is_array(e) && !is_leaf)
                return entry_type_error(spec, e, ptr, p);
            return api_fail(p, API_E_RAGGED_ARRAY, ptr->s,
                            "%s is ragged: %s is %s where its first sibling "
                            "is %s",
                            spec->name, ptr->s, leaf ? "an array" : a_leaf,
                            leaf ? a_leaf : "an array");
        }
        if (walk_ragged(e, level + 1, shape, rank, spec, leaves, ptr, p))
            return -1;
        api_pointer_pop(ptr, mark);
    }
    return 0;
}

/* How a declared size beyond size_t is said: "more than 2^64", or, for
 * the rows of a mask before an empty one, "more than 18446744073709551615"
 * (SIZE_MAX). */
enum { SIZE_FITS = 0, SIZE_OVER_2_64 = 1, SIZE_OVER_SIZE_MAX = 2 };

/* Size (2.), zero-dimension (4.) checks shared by both forms; len(data)
 * (3.) sits between them for the flat form. overflow: a SIZE_* value. */
static int check_size(const api_tensor *t, const api_tensor_spec *spec,
                      const char *pointer, size_t max_elements, int overflow,
                      api_problem *p) {
    char shape[160], count[32];
    if (!overflow && t->count <= max_elements)
        return 0;
    if (overflow == SIZE_OVER_SIZE_MAX)
        snprintf(count, sizeof count, "more than %zu", SIZE_MAX);
    else if (overflow)
        snprintf(count, sizeof count, "more than 2^64");
    else
        snprintf(count, sizeof count, "%zu", t->count);
    return api_fail(p, API_E_PAYLOAD_TOO_LARGE, pointer,
                    "%s declares %s elements (shape %s); the limit is %zu "
                    "per tensor (--max-elements)",
                    spec->name, count,
                    shape_text(shape, sizeof shape, t->shape, t->rank),
                    max_elements);
}

static int check_zero(const api_tensor *t, const api_tensor_spec *spec,
                      const char *pointer, api_problem *p) {
    char shape[160];
    for (size_t i = 0; i < t->rank; i++)
        if (t->shape[i] == 0)
            return api_fail(p, API_E_INVALID_VALUE, pointer,
                            "%s has shape %s: every dimension must be at "
                            "least 1",
                            spec->name,
                            shape_text(shape, sizeof shape, t->shape, t->rank));
    return 0;
}

/* Whether the dimensions before a zero one overflow size_t: a tensor's
 * count is 0 then, but a mask with an empty row counts the rows before it
 * (the rows are not compared then, so they may be many). */
static int leading_overflow(const api_tensor *t) {
    size_t c = 1;
    for (size_t i = 0; i < t->rank && t->shape[i] != 0; i++) {
        if (c > SIZE_MAX / t->shape[i])
            return 1;
        c *= t->shape[i];
    }
    return 0;
}

/* count = product of the shape; returns 1 (SIZE_OVER_2_64) on 64-bit
 * overflow. */
static int shape_count(api_tensor *t) {
    size_t c = 1;
    int zero = 0;
    for (size_t i = 0; i < t->rank; i++)
        if (t->shape[i] == 0)
            zero = 1;
    for (size_t i = 0; i < t->rank; i++) {
        if (zero) {
            c = 0;
            break;
        }
        if (t->shape[i] && c > SIZE_MAX / t->shape[i])
            return 1;
        c *= t->shape[i];
    }
    t->count = c;
    return 0;
}

int api_tensor_decode_nested(api_tensor *t, const json_t *v,
                             const api_tensor_spec *spec, api_leaves leaves,
                             const char *pointer, size_t max_elements,
                             api_problem *p) {
    const json_t *x = v;
    int empty = 0;
    t->rank = 0;
    while (json_is_array(x)) {
        if (t->rank == API_SHAPE_MAX)
            return rank_error(spec, pointer, t->shape, t->rank, 0, p);
        size_t n = json_array_size(x);
        t->shape[t->rank++] = n;
        if (n == 0) {
            empty = 1;
            break;
        }
        x = json_array_get(x, 0);
    }
    if (leaves == API_LEAVES_NUMBERS && !empty && !json_is_number(x)) {
        api_pointer ptr;
        api_pointer_init(&ptr, pointer);
        for (size_t i = 0; i < t->rank; i++)
            api_pointer_push_index(&ptr, 0);
        return entry_type_error(spec, x, &ptr, p);
    }
    /* An empty row hides the rank: accept it when some allowed rank is at
     * least as deep, so [] reaches the zero-dimension check. */
    unsigned deeper = spec->ranks & ~(API_RANK(t->rank) - 1u);
    if (empty ? deeper == 0 : !(spec->ranks & API_RANK(t->rank)))
        return rank_error(spec, pointer, t->shape, t->rank, 1, p);
    /* a mask's rows are compared only when none is empty */
    if (t->rank > 0 && !(leaves == API_LEAVES_MASK && empty)) {
        api_pointer ptr;
        api_pointer_init(&ptr, pointer);
        if (walk_ragged(v, 0, t->shape, t->rank, spec, leaves, &ptr, p))
            return -1;
    }
    int overflow = shape_count(t);
    if (leaves == API_LEAVES_MASK && empty && leading_overflow(t))
        overflow = SIZE_OVER_SIZE_MAX;
    if (check_size(t, spec, pointer, max_elements, overflow, p) ||
        check_zero(t, spec, pointer, p))
        return -1;
    t->src = v;
    t->flat = 0;
    return 0;
}

static int decode_flat(api_tensor *t, const api_fastpath *doc, const json_t *v,
                       const api_tensor_spec *spec, const char *pointer,
                       size_t max_elements, api_problem *p) {
    const json_t *shape = json_object_get(v, "shape");
    const json_t *data = json_object_get(v, "data");
    const api_fastpath_array *fd = api_fastpath_find(doc, data);
    if (!json_is_array(shape) || (!json_is_array(data) && !fd))
        return api_fail(p, API_E_WRONG_TYPE, pointer,
                        "%s needs \"shape\" and \"data\" arrays", spec->name);
    size_t rank = json_array_size(shape);
    if (rank > API_SHAPE_MAX)
        return rank_error(spec, pointer, t->shape, rank, 0, p);
    int overflow = 0;
    t->rank = rank;
    for (size_t i = 0; i < rank; i++) {
        const json_t *d = json_array_get(shape, i);
        double x = json_number_value(d);
        if (!json_is_number(d) ||
            (json_is_integer(d) ? json_integer_value(d) < 0 : x < 0)) {
            api_pointer ptr;
            api_pointer_init(&ptr, pointer);
            api_pointer_push_key(&ptr, "shape", 5);
            api_pointer_push_index(&ptr, i);
            return api_fail(p, API_E_INVALID_VALUE, ptr.s,
                            "dimensions are counts: %s must be at least 0 "
                            "(and the whole shape at least 1)",
                            ptr.s);
        }
        if (json_is_integer(d))
            t->shape[i] = (size_t)json_integer_value(d);
        else if (x >= 18446744073709551616.0)
            overflow = 1, t->shape[i] = SIZE_MAX;
        else
            t->shape[i] = (size_t)x;
    }
    if (!(spec->ranks & API_RANK(rank)))
        return rank_error(spec, pointer, t->shape, rank, 1, p);
    overflow |= shape_count(t);
    if (check_size(t, spec, pointer, max_elements, overflow, p))
        return -1;
    size_t n = fd ? fd->count : json_array_size(data);
    if (n != t->count) {
        api_pointer ptr;
        api_pointer_init(&ptr, pointer);
        api_pointer_push_key(&ptr, "data", 4);
        char text[160];
        api_fail(p, API_E_SHAPE_MISMATCH, ptr.s,
                 "%s has shape %s, so \"data\" needs %zu %s; it has %zu",
                 spec->name, shape_text(text, sizeof text, t->shape, rank),
                 t->count, api_plural(t->count, "number", "numbers"), n);
        long long e = (long long)t->count, g = (long long)n;
        api_problem_shapes(p, &e, 1, &g, 1);
        return -1;
    }
    if (check_zero(t, spec, pointer, p))
        return -1;
    t->src = data;
    t->flat = 1;
    t->fast = fd;
    return 0;
}

/* An array read by the fast path has a known shape and even rows, so of
 * decode_nested's checks rank, size and zero remain (the last never
 * fails: the fast path takes no empty rows). */
static int decode_fast(api_tensor *t, const json_t *v,
                       const api_fastpath_array *fa,
                       const api_tensor_spec *spec, const char *pointer,
                       size_t max_elements, api_problem *p) {
    t->rank = fa->rank;
    memcpy(t->shape, fa->shape, sizeof t->shape);
    if (!(spec->ranks & API_RANK(t->rank)))
        return rank_error(spec, pointer, t->shape, t->rank, 1, p);
    int overflow = shape_count(t);
    if (check_size(t, spec, pointer, max_elements, overflow, p) ||
        check_zero(t, spec, pointer, p))
        return -1;
    t->src = v;
    t->flat = 0;
    t->fast = fa;
    return 0;
}

int api_tensor_decode(api_tensor *t, const api_fastpath *doc, const json_t *v,
                      const api_tensor_spec *spec, const char *pointer,
                      size_t max_elements, api_problem *p) {
    memset(t, 0, sizeof *t);
    const api_fastpath_array *fa = api_fastpath_find(doc, v);
    if (fa)
        return decode_fast(t, v, fa, spec, pointer, max_elements, p);
    if (json_is_object(v))
        return decode_flat(t, doc, v, spec, pointer, max_elements, p);
    if (json_is_array(v) || json_is_number(v))
        return api_tensor_decode_nested(t, v, spec, API_LEAVES_NUMBERS, pointer,
                                        max_elements, p);
    return api_fail(p, API_E_WRONG_TYPE, pointer,
                    "%s must be a tensor %s; got %s", spec->name, spec->shapes,
                    api_json_kind(v));
}

/* ------------------------------------------------------------ reading */

static double *fill(double *dst, const json_t *v, size_t level, size_t rank) {
    if (level == rank) {
        *dst = json_number_value(v);
        return dst + 1;
    }
    size_t n = json_array_size(v);
    if (level + 1 == rank) {
        for (size_t i = 0; i < n; i++)
            dst[i] = json_number_value(json_array_get(v, i));
        return dst + n;
    }
    for (size_t i = 0; i < n; i++)
        dst = fill(dst, json_array_get(v, i), level + 1, rank);
    return dst;
}

void api_tensor_read(double *dst, const api_tensor *t) {
    if (t->fast)
        api_fastpath_read(dst, t->fast);
    else if (t->flat)
        fill(dst, t->src, 0, 1);
    else
        fill(dst, t->src, 0, t->rank);
}

void api_tensor_entry_pointer(api_pointer *ptr, const char *base,
                              const api_tensor *t, size_t index) {
    api_pointer_init(ptr, base);
    if (t->flat) {
        api_pointer_push_key(ptr, "data", 4);
        api_pointer_push_index(ptr, index);
        return;
    }
    size_t idx[API_SHAPE_MAX];
    for (size_t i = t->rank; i-- > 0;) {
        idx[i] = t->shape[i] ? index % t->shape[i] : 0;
        index = t->shape[i] ? index / t->shape[i] : 0;
    }
    for (size_t i = 0; i < t->rank; i++)
        api_pointer_push_index(ptr, idx[i]);
}

void api_tensor_row_pointer(api_pointer *ptr, const char *base,
                            const api_tensor *t, size_t row) {
    size_t last = t->shape[t->rank - 1];
    api_tensor_entry_pointer(ptr, base, t, row * last);
    if (!t->flat) { /* drop the last index: the row itself */
        char *slash = strrchr(ptr->s, '/');
        if (slash)
            *slash = '\0';
    }
}

/* ------------------------------------------------------------ writing */

int api_tensor_format_read(api_tensor_format *fmt, const json_t *obj,
                           api_problem *p) {
    *fmt = (api_tensor_format){0};
    const json_t *tf = json_object_get(obj, "tensor_format");
    if (json_is_string(tf)) {
        const char *s = json_string_value(tf);
        if (strlen(s) != json_string_length(tf))
            s = ""; /* "flat\u0000" is not "flat" */
        if (!strcmp(s, "flat"))
            fmt->flat = 1;
        else if (strcmp(s, "nested") != 0)
            return api_fail(p, API_E_INVALID_VALUE, "/tensor_format",
                            "tensor_format is \"nested\" (default) or "
                            "\"flat\" ({\"shape\", \"data\"} objects)");
    }
    const json_t *pr = json_object_get(obj, "precision");
    if (json_is_number(pr)) {
        double x = json_number_value(pr);
        if (!(x >= 1 && x <= 17))
            return api_fail(p, API_E_INVALID_VALUE, "/precision",
                            "precision is a number of significant digits, "
                            "1 … 17 (leave it out for the shortest exact "
                            "form)");
        fmt->precision = (int)x;
    }
    return 0;
}

/* Entries that cannot fail to print: finite (or NaN printed as null), and
 * small enough that rounding to any precision stays a double. */
static int printable(const api_tensor_entries *e) {
    for (size_t i = 0; i < e->count; i++) {
        double v = e->fp32 ? (double)(float)e->data[i] : e->data[i];
        if (!(fabs(v) <= 1e308) && !(e->nan_as_null && isnan(v)))
            return 0;
    }
    return 1;
}

/* Entries [0, count), printed now or, when out allows it, later. */
static int put_entries(api_buf *out, const double *x, size_t count,
                       const size_t *shape, size_t depth,
                       const api_tensor_format *fmt, int nan_as_null) {
    api_tensor_entries e = {x,           count,     depth, {0}, fmt->precision,
                            nan_as_null, fmt->fp32, 0};
    size_t block = 1;
    for (size_t k = depth + 1; k-- > 1;) {
        block *= shape[k];
        e.inner[k - 1] = block;
    }
    if (count >= API_STREAM_DEFER_MIN && api_stream_may_defer(out, x, count) &&
        printable(&e))
        return api_stream_defer(out, &e);
    return api_tensor_print(out, &e, 0, count);
}

int api_tensor_encode(api_buf *out, const double *data, const size_t *shape,
                      size_t rank, const api_tensor_format *fmt,
                      int nan_as_null) {
    size_t count = 1;
    for (size_t i = 0; i < rank; i++)
        count *= shape[i];
    if (rank == 0)
        return put_entries(out, data, 1, shape, 0, fmt, nan_as_null);
    if (fmt->flat) {
        api_buf_puts(out, "{\"shape\":[");
        for (size_t i = 0; i < rank; i++) {
            if (i)
                api_buf_putc(out, ',');
            api_buf_uint(out, shape[i]);
        }
        api_buf_puts(out, "],\"data\":[");
        if (put_entries(out, data, count, shape, 0, fmt, nan_as_null))
            return -1;
        api_buf_puts(out, "]}");
        return 0;
    }
    for (size_t i = 0; i < rank; i++)
        api_buf_putc(out, '[');
    if (put_entries(out, data, count, shape, rank - 1, fmt, nan_as_null))
        return -1;
    for (size_t i = 0; i < rank; i++)
        api_buf_putc(out, ']');
    return 0;
}

int api_tensor_encode_bytes(api_buf *out, const double *data, size_t count,
                            int dt) {
    api_tensor_entries e = {.data = data, .count = count, .bytes_type = dt};
    if (count >= API_STREAM_DEFER_MIN && api_stream_may_defer(out, data, count))
        return api_stream_defer(out, &e);
    api_tensor_print(out, &e, 0, count);
    return out->failed ? -1 : 0;
}
