/*
 * pointer.c — RFC 6901 JSON Pointer building (see pointer.h).
 */
#include "pointer.h"

#include <stdio.h>
#include <string.h>

void api_pointer_init(api_pointer *p, const char *base) {
    p->len = p->whole = 0;
    p->truncated = 0;
    p->s[0] = '\0';
    if (base) {
        size_t n = strlen(base);
        p->whole = n;
        if (n >= API_POINTER_MAX) {
            p->truncated = 1; /* no segment of base is cut: the root */
            return;
        }
        memcpy(p->s, base, n + 1);
        p->len = n;
    }
}

/* One more segment of n bytes (escaped, "/" included), written by write
 * (into dst) only while every segment so far is written and it fits
 * whole. */
static size_t push(api_pointer *p, size_t n,
                   void (*write)(char *dst, const void *arg), const void *arg) {
    size_t mark = p->whole;
    p->whole += n;
    if (p->truncated || n >= API_POINTER_MAX - p->len) {
        p->truncated = 1;
        return mark;
    }
    write(p->s + p->len, arg);
    p->len += n;
    p->s[p->len] = '\0';
    return mark;
}

typedef struct {
    const char *key;
    size_t n;
} key_arg;

static void write_key(char *dst, const void *arg) {
    const key_arg *k = arg;
    *dst++ = '/';
    for (size_t i = 0; i < k->n; i++) {
        if (k->key[i] == '~' || k->key[i] == '/') {
            *dst++ = '~';
            *dst++ = k->key[i] == '~' ? '0' : '1';
        } else {
            *dst++ = k->key[i];
        }
    }
}

size_t api_pointer_push_key(api_pointer *p, const char *key, size_t n) {
    size_t escaped = 1 + n;
    for (size_t i = 0; i < n; i++)
        escaped += key[i] == '~' || key[i] == '/';
    key_arg k = {key, n};
    return push(p, escaped, write_key, &k);
}

static void write_text(char *dst, const void *arg) {
    const char *text = arg;
    memcpy(dst, text, strlen(text));
}

size_t api_pointer_push_index(api_pointer *p, size_t index) {
    char tmp[24];
    int n = snprintf(tmp, sizeof tmp, "/%zu", index);
    return push(p, (size_t)n, write_text, tmp);
}

void api_pointer_pop(api_pointer *p, size_t mark) {
    if (mark > p->whole)
        return;
    p->whole = mark;
    if (mark <= p->len) {
        /* back within what is written: every segment is there again */
        p->len = mark;
        p->s[mark] = '\0';
        p->truncated = 0;
    }
}

void api_pointer_join(char *dst, size_t cap, const char *prefix,
                      const char *pointer) {
    size_t np = strlen(prefix), n = strlen(pointer);
    if (np >= cap) /* no segment of prefix is cut: the root */
        np = n = 0;
    if (n > cap - 1 - np) {
        /* cut at a "/", which a key's own "/" never is (it is "~1") */
        n = cap - 1 - np;
        while (n > 0 && pointer[n] != '/')
            n--;
    }
    memmove(dst + np, pointer, n); /* first: dst may be pointer */
    memcpy(dst, prefix, np);
    dst[np + n] = '\0';
}
