/*
 * jspan.c — spans of JSON text (see jspan.h).
 */
#include "jspan.h"

#include <string.h>

static const char *skip_ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
        p++;
    return p;
}

/* Past the end of the string that starts at p (a '"'), or NULL. */
static const char *skip_string(const char *p, const char *end) {
    for (p++; p < end; p++) {
        if (*p == '\\')
            p++;
        else if (*p == '"')
            return p + 1;
    }
    return NULL;
}

/* Past the array that starts at p when it holds no array, object or
 * string (an array of numbers: its first ']' closes it, and memchr scans
 * fast), else NULL. */
static const char *skip_flat_array(const char *p, const char *end) {
    const char *close = memchr(p + 1, ']', (size_t)(end - p - 1));
    if (!close)
        return NULL;
    size_t n = (size_t)(close - p - 1);
    if (memchr(p + 1, '[', n) || memchr(p + 1, '{', n) || memchr(p + 1, '"', n))
        return NULL;
    return close + 1;
}

/* Past the object or array that starts at p, found by counting brackets
 * outside strings (the members are checked when they are iterated). */
static const char *skip_nested(const char *p, const char *end) {
    size_t depth = 0;
    for (; p < end; p++) {
        char c = *p;
        const char *flat;
        if (c == '"') {
            if (!(p = skip_string(p, end)))
                return NULL;
            p--;
        } else if (c == '[' && (flat = skip_flat_array(p, end))) {
            if (depth == 0)
                return flat;
            p = flat - 1;
        } else if (c == '[' || c == '{') {
            if (++depth > JSPAN_DEPTH_MAX)
                return NULL;
        } else if (c == ']' || c == '}') {
            if (--depth == 0)
                return p + 1;
        }
    }
    return NULL;
}

static const char *value_at(const char *p, const char *end, api_jspan *v) {
    p = skip_ws(p, end);
    if (p >= end)
        return NULL;
    v->s = p;
    const char *q = p;
    if (*p == '{' || *p == '[') {
        v->kind = *p == '{' ? JSPAN_OBJECT : JSPAN_ARRAY;
        q = skip_nested(p, end);
        if (!q || q[-1] != (*p == '{' ? '}' : ']'))
            return NULL;
    } else if (*p == '"') {
        v->kind = JSPAN_STRING;
        if (!(q = skip_string(p, end)))
            return NULL;
    } else if (*p == '-' || (*p >= '0' && *p <= '9')) {
        v->kind = JSPAN_NUMBER;
        while (q < end && ((*q >= '0' && *q <= '9') || *q == '.' || *q == 'e' ||
                           *q == 'E' || *q == '-' || *q == '+'))
            q++;
    } else {
        v->kind = JSPAN_LITERAL;
        while (q < end && *q >= 'a' && *q <= 'z')
            q++;
        if (q == p)
            return NULL;
    }
    v->n = (size_t)(q - p);
    return q;
}

const char *api_jspan_value(const char *text, const char *end, api_jspan *v) {
    return value_at(text, end, v);
}

void api_jspan_iter_start(api_jspan_iter *it, const api_jspan *v) {
    it->p = v->s + 1;          /* past '{' or '[' */
    it->end = v->s + v->n - 1; /* at '}' or ']' */
    it->first = 1;
}

int api_jspan_next(api_jspan_iter *it, api_jspan *key, api_jspan *value) {
    const char *p = skip_ws(it->p, it->end);
    if (p >= it->end)
        return 0;
    if (!it->first) {
        if (*p != ',')
            return -1;
        p = skip_ws(p + 1, it->end);
    }
    it->first = 0;
    if (key) {
        const char *q =
            p < it->end && *p == '"' ? skip_string(p, it->end) : NULL;
        if (!q)
            return -1;
        key->s = p + 1;
        key->n = (size_t)(q - p - 2);
        key->kind = JSPAN_STRING;
        p = skip_ws(q, it->end);
        if (p >= it->end || *p++ != ':')
            return -1;
    }
    p = api_jspan_value(p, it->end, value);
    if (!p)
        return -1;
    it->p = p;
    return 1;
}

int api_jspan_is(const api_jspan *v, const char *s) {
    return strlen(s) == v->n && !memcmp(v->s, s, v->n);
}

int api_jspan_member(const api_jspan *obj, const char *name, api_jspan *value) {
    if (obj->kind != JSPAN_OBJECT)
        return 0;
    api_jspan_iter it;
    api_jspan key;
    api_jspan_iter_start(&it, obj);
    while (api_jspan_next(&it, &key, value) == 1)
        if (api_jspan_is(&key, name))
            return 1;
    return 0;
}
