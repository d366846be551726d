/*
 * jspan.h — walking JSON text that attnd itself wrote, without parsing it
 * into values: each value is a span of the text (its kind and bytes), so
 * an answer's tensors can be copied on as they were printed. Used where a
 * route's answer is re-shaped for another front (kserve.c), where
 * parsing a million printed numbers back only to print them again would
 * cost more than computing them.
 *
 * The text is RFC 8259 JSON as attnd writes it: a value's extent is found
 * by counting brackets outside strings, and the members of an object or
 * array are checked only as they are iterated. Strings are skipped by
 * their escapes but not decoded (keys are compared as written, which for
 * attnd's own keys is the same). Nesting depth is bounded by
 * JSPAN_DEPTH_MAX.
 */
#ifndef API_JSPAN_H
#define API_JSPAN_H

#include <stddef.h>

typedef enum {
    JSPAN_OBJECT,
    JSPAN_ARRAY,
    JSPAN_STRING, /* span includes the quotes */
    JSPAN_NUMBER,
    JSPAN_LITERAL /* true, false, null */
} api_jspan_kind;

typedef struct {
    const char *s; /* first byte of the value */
    size_t n;      /* bytes */
    api_jspan_kind kind;
} api_jspan;

#define JSPAN_DEPTH_MAX 64

/* The value that starts at text (after optional whitespace) and ends
 * before end, into *v. Returns a pointer just past it, or NULL when no
 * value starts there or its brackets or quotes do not close before end. */
const char *api_jspan_value(const char *text, const char *end, api_jspan *v);

/* Members of an object or elements of an array, in order. */
typedef struct {
    const char *p, *end;
    int first;
} api_jspan_iter;

/* Start iterating the object or array span v. */
void api_jspan_iter_start(api_jspan_iter *it, const api_jspan *v);

/* The next object member (key without its quotes, and value) or array
 * element (key NULL). Returns 1, 0 at the end, -1 for malformed text. */
int api_jspan_next(api_jspan_iter *it, api_jspan *key, api_jspan *value);

/* The member of object obj whose key is exactly name, into *value.
 * Returns 1 when found. */
int api_jspan_member(const api_jspan *obj, const char *name, api_jspan *value);

/* 1 when the span's bytes are exactly s. */
int api_jspan_is(const api_jspan *v, const char *s);

#endif /* API_JSPAN_H */
