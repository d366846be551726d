/*
 * request_key.c — the canonical form of a request (see request_key.h).
 */
#include "request_key.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fastpath.h"

/* jansson's own nesting limit (JSON_PARSER_MAX_DEPTH): no parsed value
 * is deeper. */
#define KEY_DEPTH_MAX 2048

static void put_u64(api_buf *out, uint64_t x) {
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(x >> (8 * i));
    api_buf_append(out, (const char *)b, 8);
}

static void put_tagged(api_buf *out, char tag, uint64_t x) {
    api_buf_putc(out, tag);
    put_u64(out, x);
}

/* A number by value: 'i' for an integral value that an int64 holds (not
 * -0.0, which the routes may tell from 0), else 'd' and its bits. */
static void put_double(api_buf *out, double x) {
    if (x >= -9223372036854775808.0 && x < 9223372036854775808.0 &&
        x == (double)(int64_t)x && !(x == 0 && signbit(x))) {
        put_tagged(out, 'i', (uint64_t)(int64_t)x);
        return;
    }
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    put_tagged(out, 'd', bits);
}

/* The nested arrays a fast-path array stands for, from level on. */
static void put_fast(api_buf *out, const api_fastpath_array *fa, size_t level,
                     size_t *at) {
    put_tagged(out, 'a', fa->shape[level]);
    for (size_t i = 0; i < fa->shape[level]; i++) {
        if (level + 1 < fa->rank)
            put_fast(out, fa, level + 1, at);
        else
            put_double(out, api_fastpath_at(fa, (*at)++));
    }
}

typedef struct {
    const char *key;
    size_t len;
    const json_t *value;
} member;

static int by_key(const void *a, const void *b) {
    const member *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->key, y->key, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int put_value(api_buf *out, const api_fastpath *doc, const json_t *v,
                     size_t depth);

static int put_object(api_buf *out, const api_fastpath *doc, const json_t *v,
                      size_t depth) {
    size_t n = json_object_size(v);
    member *m = malloc((n ? n : 1) * sizeof *m);
    if (!m) {
        out->failed = 1;
        return -1;
    }
    size_t k = 0;
    const char *key;
    size_t len;
    json_t *value;
    json_object_keylen_foreach((json_t *)v, key, len, value) {
        m[k].key = key;
        m[k].len = len;
        m[k].value = value;
        k++;
    }
    qsort(m, k, sizeof *m, by_key);
    put_tagged(out, 'o', k);
    int rc = 0;
    for (size_t i = 0; i < k && rc == 0; i++) {
        put_tagged(out, 's', m[i].len);
        api_buf_append(out, m[i].key, m[i].len);
        rc = put_value(out, doc, m[i].value, depth + 1);
    }
    free(m);
    return rc;
}

static int put_value(api_buf *out, const api_fastpath *doc, const json_t *v,
                     size_t depth) {
    if (depth > KEY_DEPTH_MAX)
        return -1;
    const api_fastpath_array *fa = api_fastpath_find(doc, v);
    if (fa) {
        size_t at = 0;
        put_fast(out, fa, 0, &at);
        return out->failed ? -1 : 0;
    }
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        return put_object(out, doc, v, depth);
    case JSON_ARRAY:
        put_tagged(out, 'a', json_array_size(v));
        for (size_t i = 0; i < json_array_size(v); i++)
            if (put_value(out, doc, json_array_get(v, i), depth + 1))
                return -1;
        break;
    case JSON_STRING:
        put_tagged(out, 's', json_string_length(v));
        api_buf_append(out, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
        put_tagged(out, 'i', (uint64_t)json_integer_value(v));
        break;
    case JSON_REAL:
        put_double(out, json_real_value(v));
        break;
    case JSON_TRUE:
        api_buf_putc(out, 't');
        break;
    case JSON_FALSE:
        api_buf_putc(out, 'f');
        break;
    case JSON_NULL:
        api_buf_putc(out, 'z');
        break;
    }
    return out->failed ? -1 : 0;
}

int api_request_key(api_buf *out, const api_fastpath *doc, const json_t *v) {
    return put_value(out, doc, v, 0);
}
