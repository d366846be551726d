/*
 * pointer.c — RFC 6901 JSON Pointer building (see pointer.h).
 */
#include "pointer.h"

#include <stdio.h>
#include <string.h>

void api_pointer_init(api_pointer *p, const char *base) {
    p->len = 0;
    p->truncated = 0;
    p->s[0] = '\0';
    if (base) {
        size_t n = strlen(base);
        if (n >= API_POINTER_MAX) {
            n = API_POINTER_MAX - 1;
            p->truncated = 1;
        }
        memcpy(p->s, base, n);
        p->len = n;
        p->s[n] = '\0';
    }
}

/* Append raw bytes, cutting at a UTF-8 boundary when full. */
static void put(api_pointer *p, const char *s, size_t n) {
    if (p->truncated)
        return;
    if (n >= API_POINTER_MAX - p->len) {
        n = API_POINTER_MAX - 1 - p->len;
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
            n--; /* s[n] would start the cut: keep whole characters */
        p->truncated = 1;
    }
    memcpy(p->s + p->len, s, n);
    p->len += n;
    p->s[p->len] = '\0';
}

size_t api_pointer_push_key(api_pointer *p, const char *key, size_t n) {
    size_t before = p->len;
    put(p, "/", 1);
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        if (key[i] != '~' && key[i] != '/')
            continue;
        put(p, key + run, i - run);
        put(p, key[i] == '~' ? "~0" : "~1", 2);
        run = i + 1;
    }
    put(p, key + run, n - run);
    return before;
}

size_t api_pointer_push_index(api_pointer *p, size_t index) {
    size_t before = p->len;
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "/%zu", index);
    put(p, tmp, (size_t)n);
    return before;
}

void api_pointer_pop(api_pointer *p, size_t len) {
    if (len > p->len)
        return;
    p->len = len;
    p->s[len] = '\0';
    p->truncated = 0;
}
