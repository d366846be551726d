/*
 * pointer.h — JSON Pointers (RFC 6901) into the request body, built up as a
 * validator walks it: "/queries/1/0", "/fit/lr", "" for the root.
 */
#ifndef API_POINTER_H
#define API_POINTER_H

#include <stddef.h>

/* Bytes an api_pointer holds, NUL included. A longer pointer (only possible
 * with keys of about a kilobyte) keeps the segments that fit whole: it
 * names the deepest member that can be named, which holds the one meant,
 * and so still resolves in the request (RFC 6901 section 4), never a key
 * cut short or a "~" without its digit. */
#define API_POINTER_MAX 1024

typedef struct {
    char s[API_POINTER_MAX]; /* NUL-terminated: the segments that fit */
    size_t len;              /* bytes of s */
    size_t whole;  /* bytes the pointer would have without the bound */
    int truncated; /* 1: s leaves out segments (len < whole) */
} api_pointer;

/* Start at the root pointer "" (or at `base`, which is already escaped). */
void api_pointer_init(api_pointer *p, const char *base);

/* Append "/" + key with RFC 6901 section 3 escaping ('~' -> "~0",
 * '/' -> "~1"); key is n bytes. Returns a mark for api_pointer_pop (the
 * pointer's whole length before the push). */
size_t api_pointer_push_key(api_pointer *p, const char *key, size_t n);

/* Append "/" + decimal index. Returns a mark, as api_pointer_push_key. */
size_t api_pointer_push_index(api_pointer *p, size_t index);

/* Go back to the pointer before the push that returned mark. */
void api_pointer_pop(api_pointer *p, size_t mark);

/* prefix + pointer (both escaped: "/parameters" + "/attn_mask/0") into
 * dst (cap bytes, at most API_POINTER_MAX), as many of pointer's
 * segments as fit whole after prefix, as a push would keep them. dst may
 * be pointer itself. No error. */
void api_pointer_join(char *dst, size_t cap, const char *prefix,
                      const char *pointer);

#endif /* API_POINTER_H */
