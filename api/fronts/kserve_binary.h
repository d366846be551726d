/*
 * kserve_binary.h — the binary tensor data extension of the Open Inference
 * Protocol front, as Triton's HTTP/REST protocol defines it
 * (docs/protocol/extension_binary_data.md in triton-inference-server/
 * server; docs/binary.md):
 *
 *   request   Inference-Header-Content-Length: N; the body's first N bytes
 *             are the JSON inference request, the rest the inputs' bytes,
 *             one after another in the order of "inputs", each input with
 *             "parameters": {"binary_data_size": bytes} instead of "data";
 *   outputs   "binary_data": true on a requested output, or
 *             "binary_data_output": true in the request's parameters (an
 *             output's own setting wins): that output comes as bytes;
 *             attnd's own parameter "datatype" on a requested output, or
 *             "output_datatype" for all, picks FP64 (the default for real
 *             outputs), FP32, INT64 (the default for integral ones) or
 *             INT32, in JSON as in bytes;
 *   response  with any output as bytes: Content-Type
 *             application/octet-stream, Inference-Header-Content-Length,
 *             the JSON header whose binary outputs carry "parameters":
 *             {"binary_data_size": bytes}, then their bytes in order.
 *
 * Bytes are little-endian, row-major, packed (tensor_bytes.h). Every size
 * is checked against the shape, the datatype, the body and the limits
 * before a byte is read; the bytes are then read straight into the
 * route's tensors (api_fastpath_adopt_bytes).
 */
#ifndef API_KSERVE_BINARY_H
#define API_KSERVE_BINARY_H

#include <jansson.h>
#include <stddef.h>

#include "problem.h"
#include "result.h"
#include "tensor_bytes.h"

/* Where one input's bytes are. */
typedef struct {
    int binary;                 /* 0: the input has JSON data */
    const unsigned char *bytes; /* where its bytes start */
    size_t size;                /* its binary_data_size */
    api_datatype datatype;
    size_t count; /* its entries: the placeholder's length */
} kserve_binary_input;

/* The envelope's checks of the extension's members, with the pointer of
 * the first fault (in the contract's phases: wrong_type here, then
 * invalid_value): each input's parameters.binary_data_size (an integer
 * >= 0, not beside "data"), the request's binary_data_output (a boolean)
 * and output_datatype, each requested output's binary_data and datatype.
 * Returns 0 or -1 (p set). */
int kserve_binary_check_types(const json_t *request, api_problem *p);
int kserve_binary_check_values(const json_t *request, api_problem *p);

/* 1 when inputs[i] sends its tensor as bytes (binary_data_size given). */
int kserve_binary_is_input(const json_t *input);

/* Lay the bytes after the JSON header (binary[0 .. len)) over the inputs
 * of request (n of them, checked by the envelope) into in[0 .. n), in
 * this order of checks: an input with bytes to come and none after the
 * JSON (400: send Inference-Header-Content-Length); each input whose
 * shape is valid and within max_elements must have a binary_data_size of
 * its entries times its datatype's size (422 shape_mismatch at its
 * binary_data_size); the sizes must add up to len exactly (400: the body
 * is cut short, or has bytes no input claims); BOOL bytes are 0 or 1,
 * FP64 and FP32 entries finite (422 invalid_value at the input). A shape
 * the route would refuse is left to the route, whose error then comes
 * first. Returns 0 or -1 (p set). */
int kserve_binary_inputs(const json_t *request, const unsigned char *binary,
                         size_t len, size_t max_elements,
                         kserve_binary_input *in, size_t n, api_problem *p);

/* How one output is sent. */
typedef struct {
    int binary;            /* 1: as bytes after the header */
    api_datatype datatype; /* FP64, FP32, INT64 or INT32 */
    char asked_at[64];     /* the pointer of the datatype asked for, or
                              "" when it is the output's natural one */
} kserve_output_form;

/* The form of an output of the route's answer: its requested-output
 * object (NULL when the request lists no outputs) over the request's
 * parameters; integral: the output holds integers (its natural datatype
 * INT64, else FP64). out_index is its index in "outputs" (for
 * pointers). */
void kserve_output_form_of(kserve_output_form *f, const json_t *request,
                           const json_t *requested, size_t out_index,
                           int integral);

/* 0 when every entry of the item (column for RECORDS) is representable
 * in f->datatype: a real output takes FP64 or FP32 (finite in FP32; a
 * masked score's NaN stays NaN), an integral one any, INT32 within its
 * range; else -1 with invalid_value at f->asked_at, naming the output. */
int kserve_output_fits(const kserve_output_form *f, const api_result_item *it,
                       size_t column, const char *name, int integral,
                       api_problem *p);

/* The output's entries (column for RECORDS) as bytes of f->datatype at
 * out's end: large tensors are left as holes of the streamed answer.
 * *size gets the bytes written. Returns 0, or -1 when memory runs out
 * (p set). */
int kserve_output_write_bytes(api_buf *out, const kserve_output_form *f,
                              const api_result_item *it, size_t column,
                              size_t *size, api_problem *p);

#endif /* API_KSERVE_BINARY_H */
