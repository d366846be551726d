/*
 * fastpath.h — a request body's big numeric arrays read straight into
 * double buffers, with jansson parsing only the rest.
 *
 * Turning 7.7 MB of numbers into one json_t each costs jansson ~170 ms
 * (docs/performance.md); the numbers themselves need ~20 ms. So, for the
 * paths a route lists (its tensor fields, "queries"; for the fronts, paths
 * into the body such as "request/queries", or "inputs", any index, "data"),
 * a value that is a plain array of numbers (nested,
 * rectangular, no empty rows, at most API_FASTPATH_RANK_MAX deep) is read
 * here with api_num_parse, and jansson gets the body with that value
 * replaced by a placeholder string. The api_fastpath is the document's
 * other half, and travels with it (api_call.doc, call.h): whatever reads
 * such a value asks api_fastpath_find(doc, v) whether it is a placeholder
 * and then reads shape and numbers from here: the tensor codec
 * (tensor.c), api_json_kind_in (an array, in messages), and the fronts
 * for their own members (grade.c, kserve.c). No state is kept beside the
 * document: a value read without its document is the string it is.
 *
 * The answer is always the one jansson alone gives — the same document,
 * the same doubles, the same errors: anything unusual (a non-number entry,
 * ragged rows, an integer beyond int64, a string holding \u0000 that
 * could pass for a placeholder, a syntax error anywhere, more than 65,536
 * arrays to read, which would cost more here than jansson's tree of them)
 * leaves the value or the whole body to jansson.
 * tests/fuzz/fuzz_fastpath.c and tests/unit/test_api_fastpath.c compare
 * both paths.
 */
#ifndef API_FASTPATH_H
#define API_FASTPATH_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* The deepest array read (a tensor's rank: API_SHAPE_MAX, problem.h). */
#define API_FASTPATH_RANK_MAX 8

/* One array read by the fast path. */
typedef struct {
    size_t rank;                         /* 1 … API_FASTPATH_RANK_MAX */
    size_t shape[API_FASTPATH_RANK_MAX]; /* every dimension ≥ 1 */
    size_t count;                        /* product of shape */
    size_t first;       /* index of its first number in numbers */
    int integers;       /* 1: every number was written as an integer ("3", not
                           "3.0"): jansson would have made json_integer values */
    const double *data; /* count numbers, row-major; owned by the
                           api_fastpath; NULL for an array of bytes */
    /* an array of bytes (api_fastpath_adopt_bytes): count entries of
     * datatype bytes_type (api_datatype, tensor_bytes.h) at bytes, owned
     * by the caller; read them with api_fastpath_at / api_fastpath_read */
    const unsigned char *bytes;
    int bytes_type;
    const json_t *placeholder;      /* an adopted array's own placeholder */
    const struct api_fastpath *doc; /* the document it was read into */
} api_fastpath_array;

/* The state of one body: what was read, and the text jansson parsed.
 * A zeroed api_fastpath is ready for api_fastpath_load. */
typedef struct api_fastpath {
    double *numbers; /* every array's numbers, one after another */
    size_t n_numbers, cap_numbers;
    api_fastpath_array *arrays;
    size_t n_arrays, cap_arrays;
    char *text; /* the body with placeholders (NULL when not used) */
    unsigned long long serial; /* names this load's placeholders */
    /* a document built on another (api_fastpath_begin: a request made
     * from parts of the body), whose placeholders it resolves too */
    const struct api_fastpath *outer;
    int refused; /* the tree gate said no */
    int adopted; /* begun by api_fastpath_begin: arrays of bytes */
    /* 1: the body of a request of the tensor protocol (the v2 front),
     * whose "data" may be nested: a nested array read here counts as
     * flat "data" in row-major order (tensor.h). Set by the caller after
     * the load. */
    int nested_data;
} api_fastpath;

/* Asked before jansson parses a text, with the bytes its tree would take
 * (api_json_tree_bytes, budget.h): admit returns 0 to parse it, anything
 * else to give up (the caller records why). */
typedef struct {
    int (*admit)(void *ctx, uint64_t tree_bytes);
    void *ctx;
} api_tree_gate;

/* Parse body[0 .. len) exactly as
 *   json_loadb(body, len, flags, error)
 * does (same result, same error), reading the numeric arrays at the paths
 * of fields into fp on the way (flags must include JSON_ALLOW_NUL for
 * that; otherwise this is json_loadb). fields is NULL-terminated, each a
 * path of member names joined by '/' ("*": any member or array index; at
 * most 4 segments, 256 paths): the route's (api_route_fast_fields,
 * route.h), whose readers resolve placeholders; NULL or an empty list
 * gives plain json_loadb. gate (NULL: none) is asked before each text is
 * given to jansson: the body with placeholders, and the body itself when
 * that fails; when it refuses, the load returns NULL with fp->refused set
 * and error->text empty. Returns the new reference or NULL (error
 * filled). Until api_fastpath_release, api_fastpath_find(fp, v) resolves
 * the placeholders in the returned document. */
json_t *api_fastpath_load(api_fastpath *fp, const char *const *fields,
                          const char *body, size_t len, size_t flags,
                          const api_tree_gate *gate, json_error_t *error);

/* Free what fp holds; fp is zeroed, and resolves nothing. Call after the
 * document, and every document built on it, is no longer used. */
void api_fastpath_release(api_fastpath *fp);

/* The array that v stands for, when v is a placeholder of doc or of a
 * document it is built on (outer); NULL for every other value (including
 * NULL) and when doc is NULL. */
const api_fastpath_array *api_fastpath_find(const api_fastpath *doc,
                                            const json_t *v);

/* Entry i (row-major) of fa as a double, whether fa holds numbers read
 * from text or bytes. */
double api_fastpath_at(const api_fastpath_array *fa, size_t i);

/* fa's count entries as doubles into dst: a copy of the numbers, or the
 * bytes converted (api_bytes_read) — straight into the caller's tensor. */
void api_fastpath_read(double *dst, const api_fastpath_array *fa);

/* Start fp as a document without a text: its arrays are those
 * api_fastpath_adopt_bytes adds, and it resolves outer's placeholders too
 * (NULL: none), for a request built from parts of outer's document and
 * new tensors. outer must outlive fp. Release it with
 * api_fastpath_release. */
void api_fastpath_begin(api_fastpath *fp, const api_fastpath *outer);

/* Add a flat tensor given as raw bytes to fp (begun with
 * api_fastpath_begin): count entries of datatype bytes_type (api_datatype)
 * at bytes, checked by the caller (BOOL bytes included) and outliving fp;
 * its array has rank 1, like "data" of {"shape", "data"}. Returns a new
 * reference to its placeholder: a value that api_fastpath_find resolves
 * by identity, so that no client string can pass for it; NULL when
 * memory runs out. */
json_t *api_fastpath_adopt_bytes(api_fastpath *fp, const unsigned char *bytes,
                                 int bytes_type, size_t count);

/* Where the JSON object at the start of body[0 .. len) ends (after
 * leading whitespace, by bracket matching, strings tokenised, nothing
 * else checked), or 0 when the text does not start with a complete
 * object. For messages: a v2 body whose binary tensor data follows a JSON
 * header of another length than it says. */
size_t api_json_object_end(const char *body, size_t len);

/* Process-wide switch, on by default; off makes api_fastpath_load plain
 * json_loadb. For comparisons in tests and benchmarks. */
void api_fastpath_enable(int on);

#endif /* API_FASTPATH_H */
