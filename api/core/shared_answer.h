/*
 * shared_answer.h — a request's answer shared with identical requests
 * (answer_cache.h): the request's keys, its ETag, 304 for an
 * If-None-Match that names it, the answer kept or computed meanwhile, and
 * the answer computed here offered to the others.
 *
 * A route shares its answers when they are a function of the request: it
 * computes, and neither reads its body raw (the batch's, which is many
 * requests) nor takes tensors as bytes beside the JSON (the v2 front's).
 * Two keys find an answer: the canonical form of the parsed request
 * (members sorted, numbers by value), and the request's bytes as sent,
 * which api_answer_ready reads on an HTTP thread before anything is
 * parsed or queued.
 */
#ifndef API_SHARED_ANSWER_H
#define API_SHARED_ANSWER_H

#include <jansson.h>

#include "answer_cache.h"
#include "call.h"

/* One request's part in sharing. Zeroed: nothing shared. Whatever
 * happens, api_shared_end ends it. */
typedef struct {
    int keyed;               /* the route shares its answers */
    api_buf raw;             /* the key of the request's bytes */
    api_answer_entry *entry; /* the computation owed to the others */
    const api_request *req;  /* the request, for its If-None-Match */
    char etag[API_ETAG_TEXT];
} api_shared;

/* Before call's body is parsed (the server may free its bytes then): the
 * key of the request's bytes into s (zeroed), when its route shares
 * answers. */
void api_shared_raw(api_shared *s, const api_call *call);

/* For call, whose body root (NULL for a GET route) is parsed, after
 * api_shared_raw: 1 when res holds the answer (one kept or computed
 * meanwhile, or 304 for an If-None-Match that names its ETag: the caller
 * returns it), else 0 and the request computes, then calls
 * api_shared_end. */
int api_shared_begin(api_shared *s, const api_call *call, const json_t *root,
                     api_response *res);

/* The request computed res (NULL: it was deferred to a compute thread):
 * a 200 answer held whole is offered to identical requests under both
 * keys, and carries the ETag (304 when If-None-Match names it); every
 * other answer carries none. */
void api_shared_end(api_shared *s, api_response *res);

#endif /* API_SHARED_ANSWER_H */
