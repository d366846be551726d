/*
 * buf.c — growable byte buffer for response bodies (see buf.h).
 */
#include "buf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numfmt.h"
#include "utf8.h"

int api_buf_reserve(api_buf *b, size_t extra) {
    if (b->failed)
        return -1;
    if (extra > SIZE_MAX - b->len - 1) {
        b->failed = 1;
        return -1;
    }
    size_t need = b->len + extra + 1;
    if (need <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    if (b->before_grow != NULL && b->before_grow(b->grow_ctx, b->cap, cap)) {
        b->failed = 1;
        return -1;
    }
    char *data = realloc(b->data, cap);
    if (!data) {
        b->failed = 1;
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

void api_buf_append(api_buf *b, const char *s, size_t n) {
    if (api_buf_reserve(b, n) != 0)
        return;
    if (n)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void api_buf_puts(api_buf *b, const char *s) {
    api_buf_append(b, s, strlen(s));
}

void api_buf_putc(api_buf *b, char c) {
    api_buf_append(b, &c, 1);
}

void api_buf_int(api_buf *b, long long v) {
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%lld", v);
    api_buf_append(b, tmp, (size_t)n);
}

void api_buf_ints(api_buf *b, const long long *v, size_t n) {
    api_buf_putc(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i)
            api_buf_putc(b, ',');
        api_buf_int(b, v[i]);
    }
    api_buf_putc(b, ']');
}

void api_buf_uint(api_buf *b, uint64_t v) {
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%llu", (unsigned long long)v);
    api_buf_append(b, tmp, (size_t)n);
}

int api_buf_number(api_buf *b, double x, int precision) {
    if (!isfinite(x))
        return -1;
    if (api_buf_reserve(b, API_NUM_MAX) != 0)
        return 0; /* failed is set; the caller sees it at the end */
    size_t len = api_num_format(b->data + b->len, x, precision);
    if (b->data[b->len] == 'n') { /* "null": rounding overflowed */
        b->data[b->len] = '\0';
        return -1;
    }
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

void api_buf_json_string(api_buf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    const unsigned char *u = (const unsigned char *)s;
    api_buf_putc(b, '"');
    size_t run = 0; /* start of the pending run of bytes copied as they are */
    for (size_t i = 0; i < n;) {
        unsigned char c = u[i];
        if (c >= 0x80) {
            size_t len = api_utf8_len(u + i, n - i);
            if (len) {
                i += len;
                continue;
            }
            api_buf_append(b, s + run, i - run);
            api_buf_puts(b, "\\ufffd"); /* replacement character */
            run = ++i;
            continue;
        }
        if (c >= 0x20 && c != '"' && c != '\\') {
            i++;
            continue;
        }
        api_buf_append(b, s + run, i - run);
        run = ++i;
        char esc[7] = {'\\', 0};
        switch (c) {
        case '"':
            esc[1] = '"';
            break;
        case '\\':
            esc[1] = '\\';
            break;
        case '\n':
            esc[1] = 'n';
            break;
        case '\r':
            esc[1] = 'r';
            break;
        case '\t':
            esc[1] = 't';
            break;
        case '\b':
            esc[1] = 'b';
            break;
        case '\f':
            esc[1] = 'f';
            break;
        default:
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            api_buf_append(b, esc, 6);
            continue;
        }
        api_buf_append(b, esc, 2);
    }
    api_buf_append(b, s + run, n - run);
    api_buf_putc(b, '"');
}

char *api_buf_release(api_buf *b, size_t *len) {
    if (b->holes)
        b->holes_ops->flatten(b);
    if (b->failed) {
        api_buf_free(b);
        *len = 0;
        return NULL;
    }
    if (!b->data) {
        if (api_buf_reserve(b, 0) != 0) {
            *len = 0;
            return NULL;
        }
        b->data[0] = '\0';
    }
    char *data = b->data;
    *len = b->len;
    memset(b, 0, sizeof *b);
    return data;
}

void api_buf_free(api_buf *b) {
    if (b->holes)
        b->holes_ops->discard(b);
    free(b->data);
    memset(b, 0, sizeof *b);
}
