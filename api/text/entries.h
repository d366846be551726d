/*
 * entries.h — a run of a tensor's entries as JSON text, printed in pieces:
 * the tensor codec (tensor.h) prints a whole tensor with it, and the
 * streamed answer (stream.h) prints a large tensor a range at a time.
 */
#ifndef API_ENTRIES_H
#define API_ENTRIES_H

#include <stddef.h>

#include "buf.h"
#include "problem.h" /* API_SHAPE_MAX */

/* A run of a tensor's entries as api_tensor_encode prints them: the
 * separators between entries depend only on the entry's index, so any
 * range can be printed on its own (api/text/stream.c prints a large answer a
 * range at a time). inner[k] is the number of entries in one block of
 * nesting level k + 1; depth is how many levels close between rows (rank
 * - 1 nested, 0 flat). */
typedef struct {
    const double *data;
    size_t count;
    size_t depth;
    size_t inner[API_SHAPE_MAX];
    int precision, nan_as_null;
    int fp32; /* each entry rounded to float32 first (a v2 FP32 output) */
    /* api_datatype (tensor_bytes.h): raw little-endian entries of that
     * datatype instead of text (0: JSON text) */
    int bytes_type;
} api_tensor_entries;

/* Print entries [begin, end) of e (begin > 0: with the separator before
 * entry begin), on several threads when the range is large; or, for
 * bytes_type, write them as raw bytes (no separators). Returns 0, or -1
 * when an entry cannot be printed (see api_tensor_encode). */
int api_tensor_print(api_buf *out, const api_tensor_entries *e, size_t begin,
                     size_t end);

#endif /* API_ENTRIES_H */
