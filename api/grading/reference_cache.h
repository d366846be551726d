/*
 * reference_cache.h — the references a batch (docs/batch.md) has
 * computed, kept for the other submissions of the same request: the
 * route's answer to it, and each mistake's answer of its catalogue
 * (misconceptions.h), so that a class of a thousand students answering
 * one exercise costs one reference and one answer per mistake.
 *
 * An entry is found by its key: the route and the canonical form of the
 * request (request_key.h). Since most batches repeat one request byte for
 * byte, an entry also remembers the raw bytes it was seen as (aliases:
 * pointers into the batch's body, which outlives the cache), found by
 * hash and memcmp before any canonical form is made.
 *
 * The cache holds at most max_bytes (results, keys and bookkeeping), each
 * entry reserved from the memory budget through the cache's own ledger
 * (budget.h) before it is kept, never waiting: when an entry does not
 * fit, the least recently used entries nobody holds are evicted, and when
 * it still does not fit, it is not kept (its submission uses it once and
 * frees it). Single-threaded: one batch, one thread.
 */
#ifndef API_REFERENCE_CACHE_H
#define API_REFERENCE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "budget.h"
#include "result.h"
#include "route.h"

/* What the cache holds at most, by default: a few hundred medium
 * requests' references with their mistakes. */
#define API_REFERENCE_CACHE_MAX ((uint64_t)64 << 20)

/* Most raw spellings one entry remembers. */
#define API_REFERENCE_ALIASES_MAX 16

/* What is known of one mistake of an entry's catalogue. */
enum {
    API_CACHED_UNKNOWN = 0, /* not asked yet (or not kept) */
    API_CACHED_ANSWERED,    /* wrong holds its answer */
    API_CACHED_NOT_APPLICABLE
};

typedef struct api_reference_entry {
    const api_route *route;
    unsigned char *key; /* the canonical form (malloc'd) */
    size_t key_len;
    uint64_t key_hash;
    api_result *reference; /* the route's answer (malloc'd) */
    size_t n_mistakes;     /* the route's catalogue */
    struct api_cached_mistake {
        int state;         /* API_CACHED_* */
        api_result *wrong; /* ANSWERED: malloc'd */
    } * mistakes;
    uint64_t bytes;   /* what it holds, reserved */
    unsigned held;    /* results lent out now: not evicted while > 0 */
    size_t n_aliases; /* raw spellings remembered */
    struct api_reference_entry *newer, *older; /* recency order */
    struct api_cache_node *nodes; /* its key's and aliases' table nodes */
} api_reference_entry;

typedef struct api_reference_cache api_reference_cache;

/* A new empty cache of at most max_bytes, reserving from the budget as
 * may_wait says (0: never wait; budget.h); NULL when memory runs out. */
api_reference_cache *api_reference_cache_new(uint64_t max_bytes, int may_wait);

/* Free every entry (none may be held) and give their reservation back. */
void api_reference_cache_free(api_reference_cache *c);

/* The entry of route whose raw spelling is bytes[0 .. len) (hash:
 * api_batch_hash of them), or NULL. */
api_reference_entry *
api_reference_cache_find_raw(api_reference_cache *c, const api_route *route,
                             uint64_t hash, const char *bytes, size_t len);

/* The entry of route whose canonical form is key[0 .. len), or NULL. */
api_reference_entry *api_reference_cache_find_key(api_reference_cache *c,
                                                  const api_route *route,
                                                  const unsigned char *key,
                                                  size_t len);

/* Remember bytes[0 .. len) (outliving the cache) as a raw spelling of e;
 * silently nothing once e has API_REFERENCE_ALIASES_MAX of them or when
 * memory runs out. */
void api_reference_cache_alias(api_reference_cache *c, api_reference_entry *e,
                               uint64_t hash, const char *bytes, size_t len);

/* Keep *reference (the route's answer to the request of canonical form
 * key[0 .. key_len), copied) as a new entry with n_mistakes unknown
 * mistakes, and bytes[0 .. len) as its first alias when len > 0. On
 * success the result's arena belongs to the entry (*reference is zeroed)
 * and the entry is returned; NULL when it is not kept (beyond the cap or
 * the budget, or out of memory), *reference untouched. */
api_reference_entry *
api_reference_cache_add(api_reference_cache *c, const api_route *route,
                        const unsigned char *key, size_t key_len, uint64_t hash,
                        const char *bytes, size_t len, api_result *reference,
                        size_t n_mistakes);

/* Keep what mistake i of e answered: state API_CACHED_ANSWERED with
 * *wrong (taken as add takes the reference: zeroed on success) or
 * API_CACHED_NOT_APPLICABLE (wrong NULL). Returns 0, or -1 when it is not
 * kept (*wrong untouched). */
int api_reference_cache_set_mistake(api_reference_cache *c,
                                    api_reference_entry *e, size_t i, int state,
                                    api_result *wrong);

/* Lend e's results out (held, most recently used) / give them back. */
void api_reference_cache_hold(api_reference_cache *c, api_reference_entry *e);
void api_reference_cache_drop(api_reference_entry *e);

/* 1 when e holds its reference and every mistake is answered or known
 * not to apply: the request's own values are not needed again. */
int api_reference_entry_complete(const api_reference_entry *e);

/* Counters, for tests and the bench. */
typedef struct {
    uint64_t bytes;   /* held now */
    size_t entries;   /* kept now */
    size_t evictions; /* entries evicted to make room */
    size_t refused;   /* results not kept (cap, budget, memory) */
    size_t raw_hits;  /* find_raw found an entry */
    size_t key_hits;  /* find_key found an entry */
} api_reference_cache_stats;

void api_reference_cache_stats_of(const api_reference_cache *c,
                                  api_reference_cache_stats *s);

#endif /* API_REFERENCE_CACHE_H */
