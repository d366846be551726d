/*
 * request_key.h — the canonical form of a request, so that a batch
 * (docs/batch.md) computes one reference for every submission whose
 * request means the same: members in sorted order, numbers by value (1,
 * 1.0 and 1e0 are one number; -0 and 0 are not, since a route may tell
 * them apart), whitespace and escapes irrelevant, tensors read by the
 * fast path (fastpath.h) the same as the nested arrays they were.
 *
 * The form is bytes, not text, made to be compared, never read back:
 *   object  'o' count, then per member (sorted by bytes) its key, value
 *   array   'a' count, values
 *   string  's' length, bytes (as decoded)
 *   number  'i' int64 when it is an integer that fits (an integral real
 *           included: the routes take 2.0 for 2), else 'd' its double
 *   true 't', false 'f', null 'z'
 * with counts and lengths as 8 bytes. Equal forms mean jansson holds
 * equal values, up to an integer and its real spelling (the routes'
 * fields read both alike, fields.h).
 */
#ifndef API_REQUEST_KEY_H
#define API_REQUEST_KEY_H

#include <jansson.h>

#include "buf.h"
#include "fastpath.h"

/* Append the canonical form of v, a value of the document doc (fastpath.h:
 * an array the fast path read is keyed by its numbers, as jansson's
 * would be; doc NULL: v as jansson built it), to out. Returns 0, or -1
 * when memory runs out (out->failed) or v nests deeper than jansson
 * parses. */
int api_request_key(api_buf *out, const api_fastpath *doc, const json_t *v);

#endif /* API_REQUEST_KEY_H */
