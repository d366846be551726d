/*
 * buf.h — a growable byte buffer that response bodies are written into.
 *
 * Responses are written straight into one buffer (no json_t trees for big
 * tensors). A failed allocation sets `failed` once; every later write is a
 * no-op, so writers check only at the end.
 */
#ifndef API_BUF_H
#define API_BUF_H

#include <stddef.h>
#include <stdint.h>

struct api_holes;
typedef struct api_buf api_buf;

/* What a buffer with holes (stream.h) does with them when it is released
 * or freed: the buffer knows no more of holes than these two functions. */
typedef struct {
    int (*flatten)(api_buf *b);  /* print every hole in place */
    void (*discard)(api_buf *b); /* free the holes, leave the text */
} api_holes_ops;

struct api_buf {
    char *data; /* malloc'd, NUL-terminated when len < cap; NULL before use */
    size_t len; /* bytes written (without the NUL) */
    size_t cap; /* bytes allocated */
    int failed; /* 1 once an allocation failed: contents are unusable */
    struct api_holes *holes; /* tensors printed later (stream.h), or NULL */
    const api_holes_ops *holes_ops; /* set with holes */
    /* called before the buffer grows from cap to new_cap bytes (NULL:
     * never), so that what it will hold can be reserved first (a memory
     * budget); non-zero refuses the growth, and the buffer fails */
    int (*before_grow)(void *ctx, size_t cap, size_t new_cap);
    void *grow_ctx;
};

/* A zeroed api_buf is empty and ready; no init function is needed. */

/* Make room for at least `extra` more bytes (plus a NUL). Returns 0, or -1
 * (and sets failed) when memory runs out or the size would overflow. */
int api_buf_reserve(api_buf *b, size_t extra);

/* Append n bytes of s. */
void api_buf_append(api_buf *b, const char *s, size_t n);

/* Append a NUL-terminated string. */
void api_buf_puts(api_buf *b, const char *s);

/* Append one byte. */
void api_buf_putc(api_buf *b, char c);

/* Append a signed / unsigned 64-bit integer in decimal. */
void api_buf_int(api_buf *b, long long v);

/* Append the n integers v as a JSON array, "[2,1,4]" (a shape). */
void api_buf_ints(api_buf *b, const long long *v, size_t n);
void api_buf_uint(api_buf *b, uint64_t v);

/* Append a finite double as the wire contract prints numbers (numfmt.h):
 * shortest round trip, or rounded to `precision` significant digits
 * (1 … 17; 0 = shortest). Returns 0, or -1 for inf/NaN or a value that
 * rounding to `precision` digits takes beyond the largest double (nothing
 * written). */
int api_buf_number(api_buf *b, double x, int precision);

/* Append s (n bytes, may contain NUL) as a JSON string literal with the
 * quotes (RFC 8259 section 7: '"', '\\' and control characters escaped;
 * valid UTF-8 copied; each byte of an invalid sequence becomes \ufffd, so
 * the output is always valid UTF-8). */
void api_buf_json_string(api_buf *b, const char *s, size_t n);

/* Give the bytes away (holes, stream.h, printed in place first): returns data
 * (caller frees; never NULL unless failed) and leaves b empty. *len receives
 * the length. */
char *api_buf_release(api_buf *b, size_t *len);

/* Free the bytes (and any holes, stream.h) and zero b. */
void api_buf_free(api_buf *b);

#endif /* API_BUF_H */
