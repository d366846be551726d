/*
 * query.c — query-string parameters for GET routes (see query.h).
 */
#include "query.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pointer.h"
#include "suggest.h"

static int hexval(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Decode s[0 … n-1] in place-compatible fashion into dst (dst may equal s);
 * returns the decoded length. A '%' not followed by two hex digits stays. */
static size_t decode(char *dst, const char *s, size_t n) {
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '+') {
            dst[w++] = ' ';
        } else if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 &&
                   hexval(s[i + 2]) >= 0) {
            dst[w++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
            i += 2;
        } else {
            dst[w++] = s[i];
        }
    }
    return w;
}

int api_query_parse(char **storage, const char *query, api_query_param *params,
                    size_t n, api_problem *p) {
    *storage = NULL;
    for (size_t i = 0; i < n; i++)
        params[i].value = NULL;
    if (!query || !*query)
        return 0;
    size_t len = strlen(query);
    char *buf = malloc(len + 1);
    if (!buf)
        return api_fail(p, API_E_INTERNAL, NULL, "out of memory");
    *storage = buf;
    memcpy(buf, query, len + 1);
    /* Each pair is decoded in place; its value then ends with a NUL where
     * the '&' (or the end) was. Names may hold NUL bytes after decoding,
     * so they are compared with their lengths. */
    char *s = buf;
    while (s < buf + len) {
        char *amp = memchr(s, '&', (size_t)(buf + len - s));
        char *end = amp ? amp : buf + len;
        *end = '\0';
        if (end == s) {
            s = end + 1;
            continue;
        }
        char *eq = memchr(s, '=', (size_t)(end - s));
        char *name_end = eq ? eq : end;
        size_t name_len = decode(s, s, (size_t)(name_end - s));
        char *value = eq ? eq + 1 : end;
        size_t value_len = decode(value, value, (size_t)(end - value));
        value[value_len] = '\0';
        size_t k = 0;
        while (k < n && !(strlen(params[k].name) == name_len &&
                          !memcmp(params[k].name, s, name_len)))
            k++;
        if (k == n) {
            const char *names[16];
            size_t m = n < 16 ? n : 16;
            for (size_t i = 0; i < m; i++)
                names[i] = params[i].name;
            api_pointer ptr;
            api_pointer_init(&ptr, "");
            api_pointer_push_key(&ptr, s, name_len);
            char hint[API_SUGGEST_TEXT], known[256], whole[64];
            api_join_names(known, sizeof known, names, m);
            /* a name too long for a pointer leaves it at the root, "" */
            const char *named = ptr.s + 1;
            if (ptr.s[0] == '\0') {
                snprintf(whole, sizeof whole, "of %zu bytes", name_len);
                named = whole;
            }
            return api_fail(
                p, API_E_UNKNOWN_FIELD, ptr.s,
                "unknown query parameter %s%s Known parameters: "
                "%s",
                named, api_did_you_mean(hint, s, name_len, names, m), known);
        }
        /* "5%00x" must not read as "5": such a value is no number and no
         * allowed string */
        params[k].value =
            memchr(value, '\0', value_len) ? API_QUERY_NUL : value;
        s = end + 1;
    }
    return 0;
}

int api_query_number_syntax(const char *s, int *integer) {
    *integer = 1;
    if (*s == '-')
        s++;
    if (*s == '0')
        s++;
    else if (*s >= '1' && *s <= '9')
        while (*s >= '0' && *s <= '9')
            s++;
    else
        return 0;
    if (*s == '.') {
        *integer = 0;
        s++;
        if (!(*s >= '0' && *s <= '9'))
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        *integer = 0;
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!(*s >= '0' && *s <= '9'))
            return 0;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

static int not_a_number(const api_query_param *q, const char *want,
                        api_problem *p) {
    api_pointer ptr;
    api_pointer_init(&ptr, "");
    api_pointer_push_key(&ptr, q->name, strlen(q->name));
    return api_fail(p, API_E_WRONG_TYPE, ptr.s,
                    "query parameter %s must be %s; got \"%.40s\"", q->name,
                    want, q->value);
}

int api_query_number(const api_query_param *q, double *out, api_problem *p) {
    int integer;
    if (!api_query_number_syntax(q->value, &integer))
        return not_a_number(q, "a number such as 0.5", p);
    errno = 0;
    double x = strtod(q->value, NULL);
    *out = x;
    return isfinite(x) ? 0 : 1;
}

int api_query_int(const api_query_param *q, int64_t *out, api_problem *p) {
    int integer;
    if (!api_query_number_syntax(q->value, &integer))
        return not_a_number(q, "an integer", p);
    if (integer) {
        errno = 0;
        long long v = strtoll(q->value, NULL, 10);
        *out = v;
        return errno == ERANGE ? 1 : 0;
    }
    double x = strtod(q->value, NULL);
    if (isfinite(x) && x != floor(x))
        return not_a_number(q, "an integer (2 or 2.0)", p);
    if (!(x < 9223372036854775808.0)) {
        *out = INT64_MAX;
        return 1;
    }
    if (x < -9223372036854775808.0) {
        *out = INT64_MIN;
        return 1;
    }
    *out = (int64_t)x;
    return 0;
}
