/*
 * pointer.h — JSON Pointers (RFC 6901) into the request body, built up as a
 * validator walks it: "/queries/1/0", "/fit/lr", "" for the root.
 */
#ifndef API_POINTER_H
#define API_POINTER_H

#include <stddef.h>

/* Bytes an api_pointer holds, NUL included. A longer pointer (only possible
 * with absurdly long object keys) is cut at a UTF-8 boundary and marked
 * truncated. */
#define API_POINTER_MAX 1024

typedef struct {
    char s[API_POINTER_MAX]; /* NUL-terminated */
    size_t len;
    int truncated;
} api_pointer;

/* Start at the root pointer "" (or at `base`, which is already escaped). */
void api_pointer_init(api_pointer *p, const char *base);

/* Append "/" + key with RFC 6901 section 3 escaping ('~' -> "~0",
 * '/' -> "~1"); key is n bytes. Returns the length before the push, for
 * api_pointer_pop. */
size_t api_pointer_push_key(api_pointer *p, const char *key, size_t n);

/* Append "/" + decimal index. Returns the length before the push. */
size_t api_pointer_push_index(api_pointer *p, size_t index);

/* Go back to a length returned by a push. */
void api_pointer_pop(api_pointer *p, size_t len);

#endif /* API_POINTER_H */
