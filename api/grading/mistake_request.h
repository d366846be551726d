/*
 * mistake_request.h — what the catalogues of mistakes
 * (misconceptions_<route>.c) share: a request's tensors read through the
 * codec, the request altered and answered by its route, and a mistaken
 * answer computed here.
 *
 * An altered request is a shallow copy of the route's request (its
 * tensors stay the same values, fast-path placeholders included); the
 * tensors a mistake puts in it are its own doubles, written as FP64
 * bytes and handed to the route as fast-path arrays (fastpath.h), so the
 * route reads exactly those doubles through its codec and no JSON number
 * is made for them.
 */
#ifndef API_MISTAKE_REQUEST_H
#define API_MISTAKE_REQUEST_H

#include <jansson.h>
#include <stddef.h>

#include "call.h"
#include "fastpath.h"
#include "result.h"
#include "route.h"

/* A request tensor's shape and its entries, row-major (malloc'd). */
typedef struct {
    size_t rank;
    size_t shape[API_SHAPE_MAX];
    size_t count;
    double *data;
} api_mistake_tensor;

/* Read the request's tensor field name (nested arrays, {"shape", "data"}
 * or a placeholder; a number is rank 0) into *t, which the caller frees
 * with api_mistake_tensor_free whatever is returned. The route has
 * accepted the request, so the field is a valid tensor. Returns 1 when
 * read, 0 when absent or null (*t empty), -1 when it cannot be decoded or
 * memory runs out. */
int api_mistake_tensor_read(api_mistake_tensor *t, api_call *call,
                            const json_t *request, const char *name);

/* As api_mistake_tensor_read, the shape only: t->data stays NULL. */
int api_mistake_tensor_shape(api_mistake_tensor *t, api_call *call,
                             const json_t *request, const char *name);

void api_mistake_tensor_free(api_mistake_tensor *t);

/* The most tensors one altered request adds. */
#define API_MISTAKE_TENSORS_MAX 8

/* A request being altered: begin it, change members, answer it (which
 * ends it, whatever happens). */
typedef struct {
    json_t *request; /* the shallow copy */
    api_fastpath fp; /* the altered request's document: the added
                        tensors' placeholders, built on the call's */
    unsigned char *bytes[API_MISTAKE_TENSORS_MAX]; /* their FP64 bytes */
    size_t n;
    int failed; /* memory ran out, or too many tensors */
} api_mistake_request;

/* Start altering request (the route's request object, borrowed: a value
 * of call->doc, on which m->fp is built). */
void api_mistake_request_begin(api_mistake_request *m, const api_call *call,
                               const json_t *request);

/* Set member name to value (a new reference, stolen even on failure). */
void api_mistake_request_set(api_mistake_request *m, const char *name,
                             json_t *value);

/* Remove member name (absent is fine). */
void api_mistake_request_del(api_mistake_request *m, const char *name);

/* Remove every mask of the attention routes and /softmax/masked:
 * valid_lens, causal, attn_mask and key_padding_mask (docs/contract.md,
 * Masking), so that every key is seen. */
void api_mistake_request_drop_masks(api_mistake_request *m);

/* 1 when request (accepted by such a route) masks keys: valid_lens,
 * attn_mask or key_padding_mask given, or causal other than false. */
int api_mistake_masks_keys(const json_t *request);

/* The mask forgotten (seed note 2, "the forgotten mask"): request
 * answered by route without its masks, every key seen, into *wrong as
 * api_mistake_request_answer does; API_MISTAKE_NOT_APPLICABLE when the
 * request masks nothing. */
int api_mistake_mask_ignored(api_call *call, const json_t *request,
                             const api_route *route, api_result *wrong);

/* Set member name to a tensor of the given shape whose count entries,
 * row-major, are data (copied): {"shape": [...], "data": placeholder}. */
void api_mistake_request_tensor(api_mistake_request *m, const char *name,
                                const double *data, const size_t *shape,
                                size_t rank);

/* Answer the altered request with route (api_invoke_result) into
 * *result (zeroed; freed by the caller with api_result_free), then free
 * what m holds. Returns API_MISTAKE_ANSWERED, or API_MISTAKE_FAILED when
 * memory ran out while altering or the route refused the altered request
 * (call->problem then holds its problem). */
int api_mistake_request_answer(api_mistake_request *m, api_call *call,
                               const api_route *route, api_result *result);

/* Start *wrong (zeroed) as a mistaken answer printed as reference's is,
 * keeping an arena of slots doubles, whose start is returned for the
 * caller to fill and add with api_result_tensor; NULL when memory runs
 * out (*wrong then holds nothing to free). */
double *api_mistake_result_start(api_result *wrong, const api_result *reference,
                                 size_t slots);

#endif /* API_MISTAKE_REQUEST_H */
