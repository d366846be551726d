/*
 * batch_scan.h — a batch body (POST /grade/batch, docs/batch.md) cut into
 * its submissions without parsing it: a JSON array's elements or JSON
 * Lines' lines, found by a cheap pass (strings tokenised, brackets
 * matched, nothing else checked), so that each submission is then parsed
 * on its own and the body never becomes one tree of values (a tree is
 * about ten times its text).
 *
 * What the pass finds is only where things are: a submission that is not
 * valid JSON is found all the same (its parse says what is wrong), and
 * for the array form the frame itself ('[', the commas, ']') is checked,
 * since no element after a broken frame can be found.
 */
#ifndef API_BATCH_SCAN_H
#define API_BATCH_SCAN_H

#include <stddef.h>
#include <stdint.h>

/* The two forms of a batch body. */
typedef enum {
    API_BATCH_ARRAY, /* application/json: [{...}, {...}] */
    API_BATCH_LINES  /* JSON Lines (application/x-ndjson): one per line */
} api_batch_form;

/* Where the next submission is looked for. Zeroed but for body, len and
 * form (api_batch_scan_start), then advanced by api_batch_scan_next. */
typedef struct {
    const char *body;
    size_t len;
    api_batch_form form;
    size_t at;   /* the next byte to read */
    size_t line; /* LINES: the line number of the byte at `at` (1-based) */
    size_t n;    /* submissions found so far */
    int started; /* ARRAY: the '[' has been read */
    int done;    /* ARRAY: the ']' has been read */
} api_batch_scanner;

/* One submission's text, and where the top-level members a batch reads
 * before parsing lie in it. */
typedef struct {
    size_t start, len; /* the submission's bytes: body[start .. start+len) */
    size_t line;       /* LINES: its line number; ARRAY: 0 */
    size_t index;      /* 0-based position in the batch */
    /* the value of its last top-level "request" member (an object), as
     * bytes of the body (request_len 0: none found, or the object is not
     * scanned to its end, or some top-level key holds an escape, which
     * could spell "request" differently: the raw bytes then say nothing) */
    size_t request_start, request_len;
    /* the value of its last top-level "id" member, likewise (id_len 0:
     * none found), for a line that is answered without parsing it */
    size_t id_start, id_len;
    /* the value of its last top-level "endpoint" member, likewise */
    size_t endpoint_start, endpoint_len;
    /* 1: the request member is the hint given to api_batch_scan_next,
     * byte for byte */
    int request_is_hint;
} api_batch_item;

/* Start scanning body[0 .. len) in the given form. */
void api_batch_scan_start(api_batch_scanner *s, const char *body, size_t len,
                          api_batch_form form);

/* What api_batch_scan_next found. */
enum {
    API_BATCH_ITEM = 0,   /* *item is the next submission */
    API_BATCH_END = 1,    /* no more submissions */
    API_BATCH_BROKEN = -1 /* ARRAY: the frame is broken at *where; no
                             submission can be found after it */
};

/* The next submission of s into *item. In LINES form every line that is
 * not blank (spaces, tabs, a '\r' before its '\n') is one, the last
 * without '\n' too. In ARRAY form each element of the top-level array is
 * one, whatever its value, handed out before the frame after it is
 * read; API_BATCH_BROKEN says where the frame breaks (*where: its byte,
 * *why: a static phrase for a detail: "expected ',' or ']' after an
 * element"), also before the first element ("the body is not a JSON
 * array") and for text after the closing ']'; the scan then stays
 * there. hint (may be
 * NULL) is a request member's bytes seen before: a "request" value equal
 * to it byte for byte is taken as found without scanning it again (the
 * common batch, one request template in every submission). */
int api_batch_scan_next(api_batch_scanner *s, api_batch_item *item,
                        const char *hint, size_t hint_len, size_t *where,
                        const char **why);

/* A hash of n bytes (64 bits, not cryptographic: equal bytes give equal
 * hashes; a cache still compares the bytes). */
uint64_t api_batch_hash(const void *bytes, size_t n);

#endif /* API_BATCH_SCAN_H */
