/*
 * result.h — what a computing route answers, before it is text: named
 * tensors with their shapes, named numbers and integers, NW's history
 * records and diagnostics' warning list, in the order of the answer. A
 * handler fills a result; encoders turn it into the answer each front
 * sends (docs/architecture.md "Typed results"):
 *   JSON     api_result_write_json (result_json.h), streamed when large;
 *   SVG      api_svg_write_result (svg.h), the weights as a heatmap;
 *   v2       the Open Inference Protocol front's outputs (kserve.c);
 *   /grade   compares an answer against the result's doubles (grade.c).
 * Nothing prints an answer in order to read it back.
 *
 * Names are dotted member paths ("grads.queries",
 * "diagnostics.scores.min"): an item's groups are the prefixes of its
 * name, and items of one group are added one after another. A member
 * whose own key holds dots (a PyTorch state_dict's
 * "layers.0.linear1.weight") is one member of a TENSORS item: the item's
 * name is the dotted path of the group ("grads.state_dict"), its members'
 * keys are written as they are.
 *
 * Ownership: names, columns and detail strings are static (or live in the
 * result); tensor data points into result->arena, which the result owns
 * from api_result_keep on and frees in api_result_free (or an encoder
 * hands it to a streamed answer, stream.h).
 */
#ifndef API_RESULT_H
#define API_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "buf.h"
#include "problem.h"
#include "tensor.h"

typedef enum {
    API_ITEM_TENSOR,  /* data (shape[0], …, shape[rank-1]), row-major */
    API_ITEM_NUMBER,  /* number, or null when is_null */
    API_ITEM_INTEGER, /* integer, printed exactly */
    API_ITEM_RECORDS, /* rows objects of the same numeric columns */
    API_ITEM_EVENTS,  /* a list only the JSON answer carries (warnings) */
    API_ITEM_TENSORS  /* an object of tensors under literal keys (JSON only) */
} api_item_kind;

/* One tensor of a TENSORS item: its key (written as it is, dots and all:
 * a key must need no JSON escape) and its data (shape[0], …,
 * shape[rank-1]), row-major; nan_as_null as for a TENSOR item. */
typedef struct {
    const char *key;
    const double *data;
    size_t shape[API_SHAPE_MAX];
    size_t rank;
    int nan_as_null;
} api_result_member;

/* One member of every record: row r's value is the double or size_t at
 * base + r · stride bytes. */
typedef struct {
    const char *name;
    size_t offset; /* bytes from a row's start */
    int integer;   /* 1: a size_t, else a double */
} api_record_column;

struct api_result_item;

/* Writes an EVENTS item's JSON value (no key) to out, from the item's
 * rows and args. */
typedef void (*api_events_writer)(api_buf *out,
                                  const struct api_result_item *it);

typedef struct api_result_item {
    const char *name; /* dotted member path */
    api_item_kind kind;
    /* TENSOR */
    const double *data;
    size_t shape[API_SHAPE_MAX];
    size_t rank;
    int nan_as_null; /* a NaN entry is null (masked scores) */
    int exact;       /* integral entries, printed whole whatever precision */
    /* NUMBER, INTEGER */
    double number;
    int is_null;
    uint64_t integer;
    /* RECORDS (and EVENTS: what write reads) */
    const void *rows;
    size_t n_rows, stride;
    const api_record_column *columns;
    size_t n_columns;
    /* EVENTS */
    api_events_writer write;
    size_t args[4];
    /* TENSORS: n_members members (memory that outlives the result) */
    const api_result_member *members;
    size_t n_members;
    /* the error when this item cannot be printed (NULL: the result's);
     * fail_text: the detail is the result's text (api_result_fail_text) */
    const char *fail_pointer, *fail_detail;
    int fail_text;
} api_result_item;

#define API_RESULT_ITEMS_MAX 48

typedef struct {
    api_result_item items[API_RESULT_ITEMS_MAX];
    size_t n;
    int overflow;          /* more items than API_RESULT_ITEMS_MAX added */
    api_tensor_format fmt; /* the request's tensor_format and precision */
    api_arena arena;       /* owns the tensors' memory (api_result_keep) */
    /* what an item that cannot be printed answers, unless it says */
    api_error fail_code;
    const char *fail_detail;
    /* the heatmap an image/svg+xml answer draws (title NULL: none) */
    struct {
        const char *title;
        const double *weights; /* (B, H, Nq, Nk) */
        size_t B, H, Nq, Nk;
    } heatmap;
    char text[256];        /* one item's formatted fail detail */
    api_result_item spare; /* what an item beyond the maximum fills */
} api_result;

/* Start an empty result printed as fmt says; an item that cannot be
 * printed answers code and detail (a static string). */
void api_result_init(api_result *r, const api_tensor_format *fmt,
                     api_error fail_code, const char *fail_detail);

/* Take over arena's allocation (arena is zeroed): the tensors added point
 * into it. */
void api_result_keep(api_result *r, api_arena *arena);

/* Add a tensor of the given shape (copied); its data must outlive r. */
api_result_item *api_result_tensor(api_result *r, const char *name,
                                   const double *data, const size_t *shape,
                                   size_t rank);

/* Add a number (NaN or ±inf cannot be printed: the item's error). */
api_result_item *api_result_number(api_result *r, const char *name, double x);

/* Add null where a number would be (no statistic to give). */
api_result_item *api_result_null(api_result *r, const char *name);

/* Add an integer. */
api_result_item *api_result_integer(api_result *r, const char *name,
                                    uint64_t x);

/* Add n_rows records of stride bytes each, starting at rows. */
api_result_item *api_result_records(api_result *r, const char *name,
                                    const void *rows, size_t n_rows,
                                    size_t stride,
                                    const api_record_column *columns,
                                    size_t n_columns);

/* Add a list written by write(out, item) from rows (memory that outlives
 * r, such as the arena's) and args[0..3] (JSON only; /grade and the v2
 * front leave it out). */
api_result_item *api_result_events(api_result *r, const char *name,
                                   api_events_writer write, const void *rows,
                                   const size_t args[4]);

/* Add an object of n tensors under their own keys (members and what
 * they point to must outlive r, as the arena's do), written by the JSON
 * answer only; /grade and the v2 front leave it out. */
api_result_item *api_result_tensors(api_result *r, const char *name,
                                    const api_result_member *members, size_t n);

/* The heatmap an image/svg+xml answer draws: weights (B, H, Nq, Nk). */
void api_result_heatmap(api_result *r, const char *title, const double *weights,
                        size_t B, size_t H, size_t Nq, size_t Nk);

/* Make text (copied into r, cut to fit) the detail item it fails with,
 * for a detail that names a value ("rounded to 3 digits"). */
void api_result_fail_text(api_result *r, api_result_item *it,
                          const char *pointer, const char *text);

/* The item named exactly name (len bytes), or NULL. */
const api_result_item *api_result_find(const api_result *r, const char *name,
                                       size_t len);

/* Entries of a TENSOR item (1 for NUMBER and INTEGER, n_rows for
 * RECORDS, 0 for EVENTS and TENSORS). */
size_t api_result_item_count(const api_result_item *it);

/* Row i's value in column c of a RECORDS item, as a double. */
double api_result_record_value(const api_result_item *it, size_t i, size_t c);

/* Precision an item's doubles print with: the result's, or 0 (shortest,
 * exact) for integral tensors. */
int api_result_item_precision(const api_result *r, const api_result_item *it);

/* 0 when item it prints, else -1 with its error in p (invalid_value, or
 * the result's code). */
int api_result_check_item(const api_result *r, const api_result_item *it,
                          api_problem *p);

/* Every item, in order: the first that cannot be printed fails, as the
 * JSON encoder would. Also fails when more items were added than fit
 * (internal). Returns 0 or -1 (p set). */
int api_result_check(const api_result *r, api_problem *p);

/* Free the arena the result keeps; r is left empty. */
void api_result_free(api_result *r);

#endif /* API_RESULT_H */
