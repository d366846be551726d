/*
 * fastpath_flat.c — a small flat object built without jansson's lexer
 * (see fastpath_internal.h).
 *
 * A small body is mostly jansson's lexer, about 150 instructions a byte:
 * half of a small request's time in the api. A text that is one object
 * whose members are strings, numbers, true, false, null or arrays of those
 * (so a small request once its arrays are placeholders, valid_lens
 * included) is built here instead, with the values jansson makes of it;
 * anything else is left to jansson.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fastpath_internal.h"

/* The string at c (its '"') when it holds printable ASCII and the escape
 * \u0000 alone (a placeholder's): its bytes, \u0000 as NUL, into out
 * (cap bytes). Returns the length, or -1 (jansson reads it). */
static long flat_string(cursor *c, char *out, size_t cap) {
    size_t n = 0;
    for (size_t i = c->pos + 1; i < c->len; i++) {
        unsigned char ch = (unsigned char)c->s[i];
        if (ch == '"') {
            c->pos = i + 1;
            return (long)n;
        }
        if (n == cap)
            return -1;
        if (ch == '\\') {
            if (i + 6 > c->len || memcmp(c->s + i + 1, "u0000", 5) != 0)
                return -1;
            out[n++] = '\0';
            i += 5;
        } else if (ch >= 0x20 && ch < 0x7F) {
            out[n++] = (char)ch;
        } else {
            return -1;
        }
    }
    return -1;
}

/* The number at c as jansson's lexer reads it: an integer literal (no
 * fraction, no exponent) is json_integer of strtoll, unless beyond int64;
 * any other is json_real of strtod, unless it overflows. NULL: jansson
 * reads it (and says what is wrong). */
static json_t *flat_number(cursor *c) {
    const char *s = c->s;
    size_t i = c->pos, n = c->len;
    int integer = 1;
    if (i < n && s[i] == '-')
        i++;
    if (i < n && s[i] == '0') {
        i++;
        if (i < n && s[i] >= '0' && s[i] <= '9')
            return NULL;
    } else if (i < n && s[i] >= '1' && s[i] <= '9') {
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    } else {
        return NULL;
    }
    if (i < n && s[i] == '.') {
        integer = 0;
        if (++i >= n || s[i] < '0' || s[i] > '9')
            return NULL;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        integer = 0;
        if (++i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= n || s[i] < '0' || s[i] > '9')
            return NULL;
        while (i < n && s[i] >= '0' && s[i] <= '9')
            i++;
    }
    char text[64];
    size_t len = i - c->pos;
    if (len >= sizeof text)
        return NULL;
    memcpy(text, s + c->pos, len);
    text[len] = '\0';
    char *end;
    errno = 0;
    json_t *v;
    if (integer) {
        long long x = strtoll(text, &end, 10);
        v = errno == ERANGE ? NULL : json_integer(x);
    } else {
        double x = strtod(text, &end);
        v = (x == HUGE_VAL || x == -HUGE_VAL) && errno == ERANGE ? NULL
                                                                 : json_real(x);
    }
    if (v != NULL && end != text + len) { /* another locale's strtod */
        json_decref(v);
        v = NULL;
    }
    c->pos = i;
    return v;
}

/* The value at c: a string, number, true, false or null; NULL for
 * anything else (an object, an array, what jansson would refuse). */
static json_t *flat_value(cursor *c) {
    static const struct {
        const char *word;
        size_t len;
    } words[] = {{"true", 4}, {"false", 5}, {"null", 4}};
    if (c->pos >= c->len)
        return NULL;
    char ch = c->s[c->pos];
    if (ch == '"') {
        char buf[256];
        long n = flat_string(c, buf, sizeof buf);
        return n < 0 ? NULL : json_stringn(buf, (size_t)n);
    }
    if (ch == '-' || (ch >= '0' && ch <= '9'))
        return flat_number(c);
    for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) {
        size_t n = words[w].len;
        if (c->len - c->pos < n || memcmp(c->s + c->pos, words[w].word, n))
            continue;
        /* jansson reads a whole run of letters as one word */
        if (c->pos + n < c->len && ((c->s[c->pos + n] | 0x20) >= 'a' &&
                                    (c->s[c->pos + n] | 0x20) <= 'z'))
            return NULL;
        c->pos += n;
        return w == 0 ? json_true() : w == 1 ? json_false() : json_null();
    }
    return NULL;
}

/* The array at c ('[') when its entries are such values (valid_lens):
 * json_array of them, as jansson makes it; else NULL. */
static json_t *flat_array(cursor *c) {
    json_t *a = json_array();
    if (a == NULL)
        return NULL;
    c->pos++;
    skip_ws(c);
    if (at(c, ']')) {
        c->pos++;
        return a;
    }
    for (;;) {
        json_t *v = flat_value(c);
        if (v == NULL || json_array_append_new(a, v) != 0)
            break;
        skip_ws(c);
        if (at(c, ']')) {
            c->pos++;
            return a;
        }
        if (!at(c, ','))
            break;
        c->pos++;
        skip_ws(c);
    }
    json_decref(a);
    return NULL;
}

json_t *api_fastpath_load_flat(const char *text, size_t len, size_t flags) {
    if ((flags & ~(size_t)(JSON_DECODE_ANY | JSON_ALLOW_NUL)) != 0)
        return NULL;
    cursor c = {text, len, 0};
    skip_ws(&c);
    if (!at(&c, '{'))
        return NULL;
    c.pos++;
    json_t *obj = json_object();
    if (obj == NULL)
        return NULL;
    skip_ws(&c);
    if (at(&c, '}')) {
        c.pos++;
    } else {
        for (;;) {
            char key[256];
            long n = at(&c, '"') ? flat_string(&c, key, sizeof key - 1) : -1;
            if (n < 0 || memchr(key, '\0', (size_t)n) != NULL)
                goto give_up;
            key[n] = '\0';
            skip_ws(&c);
            if (!at(&c, ':'))
                goto give_up;
            c.pos++;
            skip_ws(&c);
            json_t *v = at(&c, '[') ? flat_array(&c) : flat_value(&c);
            if (v == NULL ||
                json_object_setn_new_nocheck(obj, key, (size_t)n, v) != 0)
                goto give_up;
            skip_ws(&c);
            if (at(&c, ',')) {
                c.pos++;
                skip_ws(&c);
                continue;
            }
            if (!at(&c, '}'))
                goto give_up;
            c.pos++;
            break;
        }
    }
    skip_ws(&c);
    if (c.pos == c.len)
        return obj;
give_up:
    json_decref(obj);
    return NULL;
}
