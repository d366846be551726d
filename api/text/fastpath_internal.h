/*
 * fastpath_internal.h — the steps the fast path's files share
 * (text/fastpath*.c alone include this): fastpath_array.c reads one
 * numeric array and skips any other value, fastpath_scan.c finds the
 * listed arrays in a body and writes the text jansson gets instead,
 * fastpath_flat.c builds a small flat object without jansson's lexer, and
 * fastpath.c loads a body with them and resolves the placeholders.
 */
#ifndef API_FASTPATH_INTERNAL_H
#define API_FASTPATH_INTERNAL_H

#include <jansson.h>
#include <stddef.h>

struct api_fastpath;

/* A position in a text that is not NUL-terminated. */
typedef struct {
    const char *s;
    size_t len, pos;
} cursor;

/* RFC 8259 whitespace: space, tab, line feed, carriage return. */
static inline void skip_ws_run(cursor *c) {
    while (c->pos < c->len) {
        char ch = c->s[c->pos];
        if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r')
            break;
        c->pos++;
    }
}

/* Past any whitespace; inline for the usual case of none (compact JSON,
 * between every two numbers). */
static inline void skip_ws(cursor *c) {
    if (c->pos < c->len && (unsigned char)c->s[c->pos] > ' ')
        return;
    skip_ws_run(c);
}

static inline int at(const cursor *c, char ch) {
    return c->pos < c->len && c->s[c->pos] == ch;
}

/* Past the string that starts at the cursor's '"'. *escaped is set when it
 * holds a backslash. Returns 0, or -1 when it does not end, or when it
 * holds \u0000 (a client string that could pass for a placeholder). */
int api_fastpath_skip_string(cursor *c, int *escaped);

/* Past one value of any kind, by bracket matching; no validation (jansson
 * does that). Returns 0, or -1 at the end of the text or on \u0000. */
int api_fastpath_skip_value(cursor *c);

/* Read the array at the cursor ('[') when it is a plain numeric array:
 * numbers (those jansson accepts: within int64 or a finite double) at one
 * depth, no empty rows, every row as long as the first at its depth.
 * Integers within 2^53 only, so that each is exactly its double.
 * Returns 0 with the cursor past ']' and the array appended to fp, or -1
 * (cursor anywhere, fp unchanged) for anything else. */
int api_fastpath_read_array(struct api_fastpath *fp, cursor *c);

/* Where one read array stood in the body (fastpath_scan.c). */
typedef struct fastpath_region fastpath_region;

/* Scan body[0 .. len) (an object) for the numeric arrays at the paths of
 * fields (fastpath.h), reading them into fp and noting where they were in
 * *regions (the caller frees it, whatever the result). Returns the number
 * of regions, or -1 when the fast path does not apply (jansson gets the
 * original body). */
long api_fastpath_scan(struct api_fastpath *fp, const char *const *fields,
                       const char *body, size_t len, fastpath_region **regions);

/* A new text: the body with each of the n regions replaced by the
 * placeholder "\u0000<serial>.<index>", its length in *text_len; NULL
 * when memory runs out. */
char *api_fastpath_substitute(const char *body, size_t len,
                              const fastpath_region *regions, size_t n,
                              unsigned long long serial, size_t *text_len);

/* text as jansson would parse it when it is one object whose members are
 * strings, numbers, true, false, null or arrays of those (flags:
 * JSON_DECODE_ANY and JSON_ALLOW_NUL at most), else NULL: the same
 * members in the same order, a repeated key's last value in its first
 * place, a key holding NUL refused. */
json_t *api_fastpath_load_flat(const char *text, size_t len, size_t flags);

#endif /* API_FASTPATH_INTERNAL_H */
