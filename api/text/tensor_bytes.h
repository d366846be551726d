/*
 * tensor_bytes.h — tensors as raw bytes: the Open Inference Protocol's
 * binary tensor data extension (Triton's docs/protocol/
 * extension_binary_data.md; docs/binary.md): little-endian, row-major,
 * no stride or padding, each entry in its datatype's native size, BOOL
 * one byte, 0 (false) or 1 (true).
 *
 * attnd computes in doubles: bytes in are widened to doubles exactly
 * (INT64 beyond 2^53 rounds to nearest, as its decimal text would);
 * doubles out are written as FP64 exactly, as FP32 rounded to nearest
 * (ties to even, IEEE 754), or as integers for integral outputs.
 */
#ifndef API_TENSOR_BYTES_H
#define API_TENSOR_BYTES_H

#include <stddef.h>

/* The datatypes of the extension attnd reads and writes. */
typedef enum {
    API_DT_NONE = 0, /* not a datatype attnd knows (or: JSON text) */
    API_DT_FP64,
    API_DT_FP32,
    API_DT_INT64,
    API_DT_INT32,
    API_DT_BOOL
} api_datatype;

/* The datatype named exactly s (len bytes: "FP64", "FP32", "INT64",
 * "INT32", "BOOL"), or API_DT_NONE. */
api_datatype api_datatype_parse(const char *s, size_t len);

/* The protocol's name of dt ("FP64"), or "" for API_DT_NONE. */
const char *api_datatype_name(api_datatype dt);

/* Bytes of one entry of dt: 8, 4, 8, 4, 1 (0 for API_DT_NONE). */
size_t api_datatype_size(api_datatype dt);

/* The index of the first of count BOOL bytes at src that is neither 0
 * nor 1, or count when every one is. */
size_t api_bytes_bad_bool(const unsigned char *src, size_t count);

/* Entry i of the tensor at src (count >= i + 1 entries of dt, src need
 * not be aligned) as a double. BOOL bytes must have been checked
 * (api_bytes_bad_bool): any byte other than 0 reads as 1. */
double api_bytes_at(const unsigned char *src, size_t i, api_datatype dt);

/* The count entries of dt at src as doubles into dst (dst holds count
 * doubles; the two do not overlap). */
void api_bytes_read(double *dst, const unsigned char *src, size_t count,
                    api_datatype dt);

/* The count doubles at src written as dt into dst (count ·
 * api_datatype_size(dt) bytes): FP64 exactly, FP32 rounded to nearest,
 * INT64 / INT32 truncated toward zero (for integral outputs, whose
 * entries are whole and in range). NaN (a masked score) is written as a
 * quiet NaN in FP64 and FP32. dt must not be BOOL or NONE. */
void api_bytes_write(unsigned char *dst, const double *src, size_t count,
                     api_datatype dt);

#endif /* API_TENSOR_BYTES_H */
