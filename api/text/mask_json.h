/*
 * mask_json.h — the JSON codec of PyTorch's masks (attn_mask,
 * key_padding_mask), the one tensor kind whose entries are not all
 * numbers: booleans (true = the key is NOT allowed, as
 * nn.MultiheadAttention reads a boolean mask), or numbers added to the
 * scores with null for −∞ (JSON has no −Infinity; attnd prints masked
 * scores as null too). Either tensor form, nested arrays or {"shape",
 * "data"} (tensor.h), in the phases of the contract's order of checks:
 *   api_mask_check_types  wrong_type (an entry of another kind than the
 *                         first entry's, an entry that is no boolean,
 *                         number or null)
 *   api_mask_decode       rank, ragged_array, size, len(data), zero
 *   api_mask_read_*       the entries into the caller's buffer
 * Unknown and missing members of the flat form are tensor.h's
 * api_tensor_check_keys and api_tensor_check_missing.
 */
#ifndef API_MASK_JSON_H
#define API_MASK_JSON_H

#include <jansson.h>

#include "problem.h"
#include "tensor.h"

typedef enum {
    API_MASK_BOOL = 0, /* true / false */
    API_MASK_FLOAT     /* numbers, null = −∞ */
} api_mask_kind;

/* wrong_type for: a value that is neither array nor object; a flat
 * "shape" that is not an array of integers, a "data" that is not an
 * array, or an array inside "data"; an entry that is not a boolean, a
 * number or null; with bool_only, an entry that is not a boolean; and an
 * entry whose kind (boolean, or number/null) differs from the first
 * entry's in document order, pointer at that entry. The detail names
 * spec->name and spec->shapes. Returns 0 or -1 (p set). */
int api_mask_check_types(const api_fastpath *doc, const json_t *v,
                         const api_tensor_spec *spec, int bool_only,
                         const char *pointer, api_problem *p);

/* The shape checks of api_tensor_decode (rank in spec->ranks, ragged
 * rows, declared size over max_elements -> 413, len(data), a zero
 * dimension), on a value that passed api_mask_check_types. Fills t
 * (t->src, t->flat as tensor.h) and *kind, and returns 0, or -1 (p set).
 * Allocates nothing. */
int api_mask_decode(api_tensor *t, api_mask_kind *kind, const api_fastpath *doc,
                    const json_t *v, const api_tensor_spec *spec,
                    const char *pointer, size_t max_elements, api_problem *p);

/* t->count entries, row-major, of a decoded boolean mask into dst: 1 for
 * true, 0 for false. */
void api_mask_read_bool(unsigned char *dst, const api_tensor *t);

/* t->count entries of a decoded float mask into dst: the numbers, −∞ for
 * null. */
void api_mask_read_float(double *dst, const api_tensor *t);

#endif /* API_MASK_JSON_H */
