/*
 * tensor.h — THE tensor codec: the only code that turns JSON numbers of a
 * tensor into doubles and doubles back into JSON text. Handlers see shapes
 * and double buffers only, so a faster parser or printer can replace this
 * file without touching them.
 *
 * Two wire forms, either one per field (docs/contract.md "Tensors"):
 *   nested arrays     [[1, 2], [3, 4]]                    shape (2, 2)
 *   flat object       {"shape": [2, 2], "data": [1, 2, 3, 4]}  (KServe v2)
 * Data is row-major, outermost axis first. A bare number is a rank-0
 * tensor where the field allows one (an unbatched scalar valid_lens).
 *
 * A request's values are read with its document (doc: api_call.doc,
 * fastpath.h), which holds the numbers of the arrays that the fast path
 * read in its place; NULL reads the values as jansson built them.
 *
 * Checks come in the contract's phases, one function per phase, so a
 * request validator can run a phase over every field before the next:
 *   api_tensor_check_keys    unknown_field  (keys of the flat object)
 *   api_tensor_check_missing missing_field  ("shape" or "data" absent/null)
 *   api_tensor_check_types   wrong_type     (non-number entries, ...)
 *   api_tensor_decode        rank and ragged_array, declared size over
 *                            max_elements (413), len(data) != prod(shape)
 *                            (shape_mismatch), a zero dimension
 *                            (invalid_value) — nothing is allocated
 *   api_tensor_read          copy the numbers into the caller's buffer
 */
#ifndef API_TENSOR_H
#define API_TENSOR_H

#include <jansson.h>
#include <stddef.h>

#include "buf.h"
#include "fastpath.h"
#include "problem.h"

/* What a request field accepts. */
typedef struct {
    const char *name;   /* field name for details: "queries" */
    unsigned ranks;     /* bit r set: rank r is allowed (API_RANK(3) | ...) */
    unsigned flags;     /* API_TENSOR_INTEGRAL, API_TENSOR_MASKED_SCORES */
    const char *shapes; /* shape names for details: "(B, Nq, d) or (Nq, d)" */
    unsigned batched_rank; /* the rank of its batched form, as the Open
                              Inference Protocol's metadata shows it
                              (kserve.h); 0: the highest rank allowed */
} api_tensor_spec;

#define API_RANK(r) (1u << (r))

/* api_tensor_spec.flags: */
/* entries must be integers or integral reals (valid_lens) */
#define API_TENSOR_INTEGRAL 1u
/* a tensor of a route that masks (the attention routes, /softmax/masked):
 * attnd prints a masked score as null, so a null entry is likely one sent
 * back, and the wrong_type detail says how to mask instead */
#define API_TENSOR_MASKED_SCORES 2u

/* A decoded (validated) tensor: its shape and where its numbers are. */
typedef struct {
    size_t rank;
    size_t shape[API_SHAPE_MAX];
    size_t count;      /* product of shape (1 for rank 0), <= max_elements */
    const json_t *src; /* borrowed: the nested value, or the flat "data" */
    int flat;          /* 1: src is a flat array of count numbers */
    /* borrowed: the numbers of src, when the fast path read them (they
     * live as long as the document) */
    const api_fastpath_array *fast;
} api_tensor;

/* unknown_field for a key of the flat object other than "shape" and
 * "data" (pointer at that key, closest name in the detail). v may be any
 * JSON value; only objects are looked at. Returns 0 or -1 (p set). */
int api_tensor_check_keys(const json_t *v, const char *pointer, api_problem *p);

/* missing_field when v is an object without "shape" or "data" (null counts
 * as absent). Returns 0 or -1 (p set). */
int api_tensor_check_missing(const json_t *v, const char *pointer,
                             api_problem *p);

/* wrong_type for: a value that is neither array, object nor (when rank 0
 * is allowed) number; an entry that is not a number or a nested array
 * (pointer at the entry); a non-integral entry when spec->flags has
 * API_TENSOR_INTEGRAL; a flat "shape" that is not an array of integers or
 * a "data" that is not an array of numbers (nested numbers that the fast
 * path read pass, row-major, when their document allows it:
 * api_fastpath.nested_data, fastpath.h). Nesting deeper than
 * API_SHAPE_MAX is left to api_tensor_decode (a rank error). Returns 0 or
 * -1 (p set). */
int api_tensor_check_types(const api_fastpath *doc, const json_t *v,
                           const api_tensor_spec *spec, const char *pointer,
                           api_problem *p);

/* The wrong_type check of a flat form's "shape", shared with masks
 * (mask_json.h): the "shape" of the object v must be an array of integers
 * (integral reals count); the pointer is ptr (v's) + "/shape", or its
 * first entry that is not one. ptr is as it was on success. Returns 0 or
 * -1 (p set). */
int api_tensor_check_shape_types(const json_t *v, api_pointer *ptr,
                                 api_problem *p);

/* Shape checks in the contract's order, allocating nothing:
 *  1. rank not in spec->ranks -> shape_mismatch at pointer (expected: -1
 *     per dimension of the largest allowed rank; got: the shape); nested
 *     rows of different lengths or depths -> ragged_array at the first row
 *     (document order) whose length differs from its first sibling's; a
 *     negative flat dimension -> invalid_value at pointer/shape/i;
 *  2. declared size (64-bit overflow included) over max_elements -> 413
 *     payload_too_large at pointer;
 *  3. flat len(data) != prod(shape) -> shape_mismatch at pointer/data
 *     (expected [prod], got [len]);
 *  4. a zero dimension or [] -> invalid_value at pointer.
 * Expects api_tensor_check_types to have passed (re-checks what it needs
 * for memory safety). Fills t and returns 0, or returns -1 (p set). */
int api_tensor_decode(api_tensor *t, const api_fastpath *doc, const json_t *v,
                      const api_tensor_spec *spec, const char *pointer,
                      size_t max_elements, api_problem *p);

/* What the leaves of nested arrays are, for api_tensor_decode_nested. */
typedef enum {
    API_LEAVES_NUMBERS, /* a tensor's: numbers */
    API_LEAVES_MASK     /* a mask's: any value but an array (booleans,
                           numbers and null, whose kinds
                           api_mask_check_types has checked: mask_json.h) */
} api_leaves;

/* api_tensor_decode's checks of nested arrays v (not a fast-path
 * placeholder) in the same order and words, for leaves of either kind.
 * With API_LEAVES_MASK: the first leaf's kind is not checked, a row that
 * holds an array where its first sibling holds a leaf is ragged with "an
 * entry" (not "a number"), and rows are compared only when none of the
 * first rows is empty (an empty row is the zero-dimension error). Fills t
 * and returns 0, or returns -1 (p set). */
int api_tensor_decode_nested(api_tensor *t, const json_t *v,
                             const api_tensor_spec *spec, api_leaves leaves,
                             const char *pointer, size_t max_elements,
                             api_problem *p);

/* Copy t->count numbers, row-major, into dst (the caller's buffer of at
 * least t->count doubles). JSON integers are converted to the nearest
 * double. */
void api_tensor_read(double *dst, const api_tensor *t);

/* The RFC 6901 pointer of entry `index` (row-major flat index) of t as the
 * request wrote it: base/data/index for the flat form, base/i0/i1/... for
 * nested arrays, base itself for a rank-0 value. */
void api_tensor_entry_pointer(api_pointer *ptr, const char *base,
                              const api_tensor *t, size_t index);

/* The RFC 6901 pointer of row `row` of t (the entries before its last
 * axis, row-major; t of rank >= 1) as the request wrote it: base/i0/...
 * without the last index for nested arrays; for the flat form, which has
 * no rows, the pointer of the row's first entry (base/data/index). */
void api_tensor_row_pointer(api_pointer *ptr, const char *base,
                            const api_tensor *t, size_t row);

/* How response tensors and numbers are printed (docs/contract.md "Responses").
 */
typedef struct {
    int flat;      /* 1: {"shape": [...], "data": [...]}; 0: nested arrays */
    int precision; /* 0: shortest round trip; 1 … 17 significant digits */
    int fp32;      /* 1: each entry rounded to float32 first (a v2 output asked
                      for as FP32: the text reads back as that float) */
} api_tensor_format;

/* Read the request's "tensor_format" ("nested" default, or "flat") and
 * "precision" (integer 1 … 17, absent = shortest) from obj; null = absent.
 * Types are assumed checked; out-of-range values -> invalid_value at
 * /tensor_format or /precision. Returns 0 or -1 (p set). */
int api_tensor_format_read(api_tensor_format *fmt, const json_t *obj,
                           api_problem *p);

/* Write the tensor data (shape (shape[0], …, shape[rank-1]), row-major) to
 * out in fmt's form; rank 0 writes one number. nan_as_null: a NaN entry
 * prints as null (masked scores); otherwise, and for ±inf always, a
 * non-finite entry, or one that rounding to fmt->precision digits takes
 * beyond the largest double, stops the writing and returns -1 (out is then
 * partial and must be discarded). Large tensors are printed by several
 * threads. When out allows it (api_stream_allow) and the tensor is large
 * and printable, its entries are left as a hole that api/text/stream.c prints
 * later, in the same bytes. Returns 0 on success. */
int api_tensor_encode(api_buf *out, const double *data, const size_t *shape,
                      size_t rank, const api_tensor_format *fmt,
                      int nan_as_null);

/* Write count doubles at data to out as raw little-endian bytes of
 * datatype dt (api_bytes_write, tensor_bytes.h): count ·
 * api_datatype_size(dt) bytes, left as a hole that api/text/stream.c
 * fills later when out allows it and the tensor is large. The entries
 * must be representable in dt (the caller checks). Returns 0, or -1 when
 * memory runs out (out->failed). */
int api_tensor_encode_bytes(api_buf *out, const double *data, size_t count,
                            int dt);

#endif /* API_TENSOR_H */
