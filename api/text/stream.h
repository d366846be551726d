/*
 * stream.h — a large answer printed while it is sent, not before.
 *
 * A large dot answer is 25.6 MB of text for 9.4 MB of doubles. Held whole,
 * the text alone is more than the tensors behind it. So an encoder may let
 * its response buffer leave the entries of large tensors as holes
 * (api_tensor_encode does this when allowed) and hand the buffer of doubles
 * to the response; api_stream_read then yields the same bytes, a range of
 * entries at a time, as the connection takes them.
 *
 * Lifecycle, in an encoder of a typed result (the dispatcher's JSON, the
 * v2 front's outputs):
 *   api_stream_allow(&call->out, &result.arena, call->req);  before writing
 *   ... api_tensor_encode(&call->out, ...) ...            may leave holes
 *   api_stream_hand_over(&call->out, &result.arena);      instead of
 *                                                         api_arena_free
 * then api_handle turns a buffer with holes into api_response.stream.
 */
#ifndef API_STREAM_H
#define API_STREAM_H

#include <stddef.h>
#include <sys/types.h>

#include "api.h"
#include "arena.h"
#include "buf.h"
#include "entries.h"

/* The fewest entries of a tensor left as a hole: smaller ones are printed
 * at once (api_tensor_encode). */
#define API_STREAM_DEFER_MIN ((size_t)1 << 15)

/* Let out leave holes for tensors that lie inside arena's allocation, when
 * req asks for it (req->stream_ok). Without this call nothing is left. */
void api_stream_allow(api_buf *out, const api_arena *arena,
                      const api_request *req);

/* 1 when a tensor of count doubles at data may be left as a hole in out. */
int api_stream_may_defer(const api_buf *out, const double *data, size_t count);

/* Leave e's entries as a hole at out's current end. Returns 0, or -1 when
 * memory runs out (out->failed is set). */
int api_stream_defer(api_buf *out, const api_tensor_entries *e);

/* 1 when out has holes. */
int api_stream_has_holes(const api_buf *out);

/* End of the handler: out keeps the arena's allocation when its holes
 * point into it; otherwise the arena is freed. The arena is zeroed. */
void api_stream_hand_over(api_buf *out, api_arena *arena);

/* Free out's holes and any allocation it keeps (api_buf_free calls it). */
void api_stream_holes_free(api_buf *out);

/* Print out's holes in place, leaving a plain buffer (api_buf_release
 * does this). Returns 0, or -1 (out->failed set) when memory runs out. */
int api_stream_flatten(api_buf *out);

/* Take out's text, holes and kept allocation into a new stream (out is
 * left empty). NULL when memory runs out (out is then freed). */
api_stream *api_stream_take(api_buf *out);

/* The bytes s holds at most while it is read: its text, the allocation
 * its holes point into, and the blocks printed ahead. 0 for NULL. */
size_t api_stream_held_bytes(const api_stream *s);

/* api_stream_read and api_stream_free are in api.h (the server's side). */

#endif /* API_STREAM_H */
