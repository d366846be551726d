/*
 * answer_cache.h — identical requests computed once (docs/contract.md
 * section 14, "identical requests"). Every answer attnd computes is a
 * function of its request and attnd's version alone, so 300 students
 * sending the textbook's worked example need one computation, not 300:
 *
 *   - the key is what makes an answer: the method, the path, the query,
 *     the Accept of a route whose answer depends on it, and the body in
 *     canonical form (members sorted, numbers by value: request_key.h);
 *   - while one request computes, an identical one that may wait (on a
 *     compute thread) waits for its answer instead of computing it again;
 *   - answers up to a size are kept, least recently used first out, in a
 *     bounded cache whose bytes are reserved from the memory budget;
 *   - the ETag of an answer is a 128-bit hash of its key and the version,
 *     known before anything is computed, so If-None-Match is answered 304
 *     at once.
 *
 * Keys are compared in full, so two requests share an answer only when
 * their keys are equal, whatever their hashes.
 */
#ifndef API_ANSWER_CACHE_H
#define API_ANSWER_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "api.h" /* API_ETAG_TEXT, api_answer_cache_set */

/* The ETag of key[0 .. len) under this version, into etag. */
void api_answer_etag(char etag[API_ETAG_TEXT], const char *key, size_t len);

/* 1 when the If-None-Match value `header` names etag (or is "*"): a list
 * of entity tags, weak ones compared weakly (RFC 9110 section 13.1.2). */
int api_etag_matches(const char *header, const char *etag);

/* One computation in the making: its key, owned by the cache. */
typedef struct api_answer_entry api_answer_entry;

/* An answer: its body (malloc'd where it is given back to a caller), its
 * type (static) and its ETag ("" for none). */
typedef struct {
    char *body;
    size_t body_len;
    const char *content_type;
    char etag[API_ETAG_TEXT];
} api_answer;

typedef enum {
    API_ANSWER_BYPASS, /* compute it; nothing is shared */
    API_ANSWER_HIT,    /* *out is a copy of the answer (the caller's) */
    API_ANSWER_MISS    /* compute it, then api_answer_cache_finish(*entry) */
} api_answer_outcome;

/* Look key[0 .. len) up. HIT: *out is the answer (out->body the
 * caller's). MISS: this caller computes it and must call
 * api_answer_cache_finish with *entry, whatever happens; identical
 * requests wait for it meanwhile. wait_ms > 0: while another computes the
 * same key, wait up to that long for its answer (a compute thread); 0:
 * never wait (an HTTP thread). BYPASS, to compute it here without
 * sharing: memory ran out, it did not wait, or the one it waited for gave
 * no answer to share (an error, a streamed answer) or took too long. */
api_answer_outcome api_answer_cache_begin(const char *key, size_t len,
                                          unsigned wait_ms,
                                          api_answer_entry **entry,
                                          api_answer *out);

/* The computation of entry is over: answer (copied) is its answer, kept
 * when it fits, or NULL: it gave none (an error, a streamed answer), and
 * those waiting for it compute it themselves. entry is no longer the
 * caller's. */
void api_answer_cache_finish(api_answer_entry *entry, const api_answer *answer);

/* Keep answer under a second key too (the request's bytes as sent, which
 * api_answer_cache_find reads before any parsing), when it fits. */
void api_answer_cache_put(const char *key, size_t len,
                          const api_answer *answer);

/* A kept answer of key[0 .. len) into *out (out->body the caller's):
 * 1, or 0 when there is none (nothing waits, nothing is registered). */
int api_answer_cache_find(const char *key, size_t len, api_answer *out);

#endif /* API_ANSWER_CACHE_H */
