/*
 * fields.h — a request body's schema as a table of fields, and the
 * contract's validation phases run over it in table order:
 *   api_fields_unknown  unknown_field  (closest known name in the detail)
 *   api_fields_missing  missing_field  (null counts as absent)
 *   api_fields_types    wrong_type
 * Each phase covers the whole body (nested objects and tensor objects
 * included) before the next starts, so the first error by the contract's
 * order wins. Value ranges (invalid_value) and shapes are the handlers'.
 */
#ifndef API_FIELDS_H
#define API_FIELDS_H

#include <jansson.h>
#include <stdint.h>

#include "problem.h"
#include "tensor.h"

typedef enum {
    API_FIELD_TENSOR,           /* nested arrays or {"shape", "data"} */
    API_FIELD_NUMBER,           /* any JSON number */
    API_FIELD_INTEGER,          /* JSON integer or integral real (2.0) */
    API_FIELD_BOOL,             /* true / false */
    API_FIELD_STRING,           /* a string (allowed values: handler) */
    API_FIELD_BOOL_OR_STRING,   /* causal: false/true/"top_left"/... */
    API_FIELD_NUMBER_OR_STRING, /* NW w: a number or a rule's name */
    API_FIELD_OBJECT,           /* a nested object with its own schema */
    API_FIELD_STRINGS,          /* an array of strings (labels.h) */
    API_FIELD_MASK,             /* attn_mask: booleans, or numbers and null
                                   (mask_json.h); a tensor's two forms */
    API_FIELD_BOOL_MASK         /* key_padding_mask: booleans (mask_json.h) */
} api_field_kind;

struct api_schema;

typedef struct {
    const char *name;
    api_field_kind kind;
    int required;                    /* 1: absent or null -> missing_field */
    const api_tensor_spec *tensor;   /* API_FIELD_TENSOR, API_FIELD_*MASK */
    const struct api_schema *object; /* API_FIELD_OBJECT */
} api_field;

typedef struct api_schema {
    const char *what;        /* for details: "/attention/dot", "fit" */
    const api_field *fields; /* table order = the contract's field order */
    size_t n;
} api_schema;

/* The nested schema of the `labels` field (token labels of a heatmap's
 * axes), declared here so a route's field table can name it; labels.h
 * defines and reads it. */
extern const api_schema api_labels_schema;

/* 1 for the kinds that take a tensor's two forms: TENSOR and the masks. */
int api_field_is_tensor(const api_field *f);

/* Most fields a schema has. */
#define API_FIELDS_MAX 32

/* The top-level tensor fields of real numbers (integral tensors such as
 * valid_lens are left to jansson), in table order: the fields whose
 * numeric arrays the fast path reads (fastpath.h). Copies at most cap - 1
 * names into names, then a NULL; returns how many. */
size_t api_schema_real_tensors(const api_schema *s, const char **names,
                               size_t cap);

/* Run the phase over obj (an object at pointer base, "" for the root).
 * Return 0, or -1 with p set. */
int api_fields_unknown(const json_t *obj, const api_schema *s, const char *base,
                       api_problem *p);
int api_fields_missing(const json_t *obj, const api_schema *s, const char *base,
                       api_problem *p);
/* api_fields_types reads obj as a value of the document doc (fastpath.h:
 * api_call.doc). */
int api_fields_types(const api_fastpath *doc, const json_t *obj,
                     const api_schema *s, const char *base, api_problem *p);

/* All three phases in order. */
int api_fields_check(const api_fastpath *doc, const json_t *obj,
                     const api_schema *s, const char *base, api_problem *p);

/* The tensor phase for one top-level field: decode obj[name] (pointer
 * "/name"; obj a value of the document doc) with api_tensor_decode.
 * Returns 0 with *present = 1 (t filled) or *present = 0 (absent or null),
 * or -1 with p set. */
int api_field_tensor(api_tensor *t, int *present, const api_fastpath *doc,
                     const json_t *obj, const char *name,
                     const api_tensor_spec *spec, size_t max_elements,
                     api_problem *p);

/* Readers for fields that passed the type phase; absent or null gives the
 * default. */
const json_t *api_field_value(const json_t *obj, const char *name);
int api_field_bool(const json_t *obj, const char *name, int def);
double api_field_number(const json_t *obj, const char *name, double def);
/* A string containing \u0000 reads as API_FIELD_STRING_NUL, which equals
 * no allowed value. */
const char *api_field_string(const json_t *obj, const char *name,
                             const char *def);
#define API_FIELD_STRING_NUL "(a string containing \\u0000)"
/* The string v as a detail may quote it: its value, or
 * API_FIELD_STRING_NUL when it holds \u0000 (printed, it would end at the
 * NUL and read as another value: "FP64\u0000x" as FP64). v must be a
 * string. */
const char *api_string_text(const json_t *v);

/* An integer field into *out (JSON integers exactly; integral reals when
 * they fit). Returns 0, or -1 when an integral real lies outside int64
 * (then *out is INT64_MIN or INT64_MAX by sign, for the caller's range
 * check). */
int api_field_int(const json_t *obj, const char *name, int64_t def,
                  int64_t *out);

#endif /* API_FIELDS_H */
