/*
 * fastpath.c — numeric arrays of tensor fields read without jansson (see
 * fastpath.h): a body loaded, and its placeholders resolved. One pass
 * over the root object's members (fastpath_scan.c): each value is either
 * read as a numeric array (a listed field, fastpath_array.c) or skipped
 * by bracket matching; then the body minus those arrays goes to jansson,
 * or, when it is small and flat, is built here (fastpath_flat.c).
 *
 * Why the answer cannot differ from jansson's on the original body: every
 * replaced region is a complete, valid JSON array sitting where jansson
 * expects a value (strings are tokenised exactly, so the scan agrees with
 * jansson on every valid prefix), and a string is a valid value there too;
 * the text around it is unchanged. So the new text parses iff the
 * original does, to the same document except those values. When it does
 * not parse, the original body is parsed again for jansson's own error.
 * A placeholder is a string: NUL, the load's serial number, '.', the
 * array's index. The fast path is not taken when any string of the body
 * holds \u0000, so no client string can pass for one; the serial keeps
 * the placeholders of nested loads (a request inside a request) apart.
 */
#include "fastpath.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "big_integers.h"
#include "fastpath_internal.h"
#include "json_tree.h"
#include "tensor_bytes.h"

static atomic_int enabled = 1;
static atomic_ullong serials;

void api_fastpath_enable(int on) {
    atomic_store(&enabled, on != 0);
}

/* json_loadb, once the gate admits the tree it would build; flat: a flat
 * object may be built without jansson's lexer (fastpath_flat.c). */
static json_t *load_gated(api_fastpath *fp, const char *text, size_t len,
                          size_t flags, const api_tree_gate *gate,
                          json_error_t *error, int flat) {
    if (gate != NULL &&
        gate->admit(gate->ctx, api_json_tree_bytes(text, len)) != 0) {
        fp->refused = 1;
        memset(error, 0, sizeof *error);
        return NULL;
    }
    json_t *root = flat ? api_fastpath_load_flat(text, len, flags) : NULL;
    if (root != NULL)
        return root;
    root = json_loadb(text, len, flags, error);
    if (root == NULL && api_json_error_is_big_integer(error)) {
        /* rare: read those literals as reals, as the contract asks */
        api_widening map;
        size_t wide_len;
        char *wide = api_json_widen_big_integers(text, len, &wide_len, &map);
        if (wide != NULL) {
            root = json_loadb(wide, wide_len, flags, error);
            if (root == NULL)
                api_widening_map_error(&map, error);
            api_widening_free(&map);
            free(wide);
        }
    }
    return root;
}

json_t *api_fastpath_load(api_fastpath *fp, const char *const *fields,
                          const char *body, size_t len, size_t flags,
                          const api_tree_gate *gate, json_error_t *error) {
    memset(fp, 0, sizeof *fp);
    if (!atomic_load(&enabled) || fields == NULL || !fields[0] ||
        !(flags & JSON_ALLOW_NUL) || body == NULL)
        return load_gated(fp, body ? body : "", len, flags, gate, error, 0);

    fastpath_region *regions = NULL;
    fp->cap_numbers = len / 16 + 16; /* most numbers take 16+ bytes */
    fp->numbers = malloc(fp->cap_numbers * sizeof *fp->numbers);
    long n =
        fp->numbers ? api_fastpath_scan(fp, fields, body, len, &regions) : -1;
    json_t *root = NULL;
    if (n > 0) {
        size_t text_len;
        fp->serial = atomic_fetch_add(&serials, 1);
        fp->text = api_fastpath_substitute(body, len, regions, (size_t)n,
                                           fp->serial, &text_len);
        if (fp->text)
            root = load_gated(fp, fp->text, text_len, flags, gate, error, 1);
    }
    free(regions);
    if (root == NULL && fp->refused) {
        api_fastpath_release(fp);
        fp->refused = 1;
        return NULL;
    }
    if (root == NULL) {
        api_fastpath_release(fp);
        return load_gated(fp, body, len, flags, gate, error, 1);
    }
    for (size_t i = 0; i < fp->n_arrays; i++) {
        fp->arrays[i].data = fp->numbers + fp->arrays[i].first;
        fp->arrays[i].doc = fp;
    }
    free(fp->text); /* jansson copied what it kept */
    fp->text = NULL;
    return root;
}

void api_fastpath_release(api_fastpath *fp) {
    for (size_t i = 0; fp->adopted && i < fp->n_arrays; i++)
        json_decref((json_t *)fp->arrays[i].placeholder);
    free(fp->numbers);
    free(fp->arrays);
    free(fp->text);
    memset(fp, 0, sizeof *fp);
}

/* Decimal digits of s[*i ..) up to a byte that is not one; -1 when there
 * are none or too many. */
static int read_decimal(unsigned long long *v, const char *s, size_t n,
                        size_t *i) {
    size_t start = *i;
    *v = 0;
    for (; *i < n && s[*i] >= '0' && s[*i] <= '9'; (*i)++)
        *v = *v * 10 + (unsigned long long)(s[*i] - '0');
    return *i == start || *i - start > 19 ? -1 : 0;
}

size_t api_json_object_end(const char *body, size_t len) {
    cursor c = {body, len, 0};
    skip_ws(&c);
    if (c.pos >= len || body[c.pos] != '{' || api_fastpath_skip_value(&c) != 0)
        return 0;
    return c.pos;
}

void api_fastpath_begin(api_fastpath *fp, const api_fastpath *outer) {
    memset(fp, 0, sizeof *fp);
    fp->serial = atomic_fetch_add(&serials, 1);
    fp->outer = outer;
    fp->adopted = 1;
}

json_t *api_fastpath_adopt_bytes(api_fastpath *fp, const unsigned char *bytes,
                                 int bytes_type, size_t count) {
    if (fp->n_arrays == fp->cap_arrays) {
        size_t cap = fp->cap_arrays ? 2 * fp->cap_arrays : 8;
        api_fastpath_array *grown =
            realloc(fp->arrays, cap * sizeof *fp->arrays);
        if (grown == NULL)
            return NULL;
        fp->arrays = grown;
        fp->cap_arrays = cap;
    }
    /* the text says what it is to a reader that prints it; find() goes by
     * the value's address */
    json_t *placeholder = json_string("(binary tensor data)");
    if (placeholder == NULL)
        return NULL;
    api_fastpath_array *a = &fp->arrays[fp->n_arrays++];
    memset(a, 0, sizeof *a);
    a->rank = 1;
    a->shape[0] = count;
    a->count = count;
    a->integers = bytes_type == API_DT_INT64 || bytes_type == API_DT_INT32 ||
                  bytes_type == API_DT_BOOL;
    a->bytes = bytes;
    a->bytes_type = bytes_type;
    a->doc = fp;
    /* fp keeps a reference until it is released, so that no other value
     * takes the address while it resolves */
    a->placeholder = json_incref(placeholder);
    return placeholder;
}

double api_fastpath_at(const api_fastpath_array *fa, size_t i) {
    return fa->bytes ? api_bytes_at(fa->bytes, i, (api_datatype)fa->bytes_type)
                     : fa->data[i];
}

void api_fastpath_read(double *dst, const api_fastpath_array *fa) {
    if (fa->bytes)
        api_bytes_read(dst, fa->bytes, fa->count, (api_datatype)fa->bytes_type);
    else
        memcpy(dst, fa->data, fa->count * sizeof *dst);
}

const api_fastpath_array *api_fastpath_find(const api_fastpath *doc,
                                            const json_t *v) {
    if (doc == NULL || !json_is_string(v))
        return NULL;
    for (const api_fastpath *fp = doc; fp != NULL; fp = fp->outer)
        for (size_t i = 0; fp->adopted && i < fp->n_arrays; i++)
            if (fp->arrays[i].placeholder == v)
                return &fp->arrays[i];
    const char *s = json_string_value(v);
    size_t n = json_string_length(v), i = 1;
    unsigned long long serial, index;
    if (n < 4 || s[0] != '\0' || read_decimal(&serial, s, n, &i) || i == n ||
        s[i++] != '.' || read_decimal(&index, s, n, &i) || i != n)
        return NULL;
    for (const api_fastpath *fp = doc; fp != NULL; fp = fp->outer)
        if (fp->serial == serial && !fp->adopted)
            return index < fp->n_arrays ? &fp->arrays[index] : NULL;
    return NULL;
}
