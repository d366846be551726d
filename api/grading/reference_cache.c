/*
 * reference_cache.c — a batch's shared references (see
 * reference_cache.h).
 */
#include "reference_cache.h"

#include <stdlib.h>
#include <string.h>

/* One way to find an entry: its canonical key, or one raw spelling. */
typedef struct api_cache_node {
    uint64_t hash;
    int raw;           /* 1: bytes are a raw spelling (in the body) */
    const void *bytes; /* the key (the entry's) or the spelling */
    size_t len;
    api_reference_entry *entry;
    struct api_cache_node *next;       /* in its bucket */
    struct api_cache_node *entry_next; /* of the same entry */
} node;

struct api_reference_cache {
    uint64_t max_bytes;
    api_ledger ledger; /* what the entries hold, from the budget */
    node **buckets;
    size_t n_buckets; /* a power of two */
    size_t n_nodes;
    api_reference_entry *newest, *oldest;
    api_reference_cache_stats stats;
};

/* What a result holds: its struct and its arena. */
static uint64_t result_bytes(const api_result *r) {
    return sizeof *r + (uint64_t)r->arena.slots * 8;
}

api_reference_cache *api_reference_cache_new(uint64_t max_bytes, int may_wait) {
    api_reference_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->max_bytes = max_bytes;
    c->ledger.may_wait = may_wait;
    c->n_buckets = 64;
    c->buckets = calloc(c->n_buckets, sizeof *c->buckets);
    if (!c->buckets) {
        free(c);
        return NULL;
    }
    return c;
}

static void free_result(api_result *r) {
    if (r) {
        api_result_free(r);
        free(r);
    }
}

/* Give back bytes that make_room reserved. */
static void give_back(api_reference_cache *c, uint64_t bytes) {
    c->stats.bytes -= bytes;
    api_ledger_settle(&c->ledger, c->ledger.held - bytes);
}

static void unlink_node(api_reference_cache *c, node *n) {
    node **at = &c->buckets[n->hash & (c->n_buckets - 1)];
    while (*at && *at != n)
        at = &(*at)->next;
    if (*at)
        *at = n->next;
    c->n_nodes--;
}

/* Take e out of the table and the recency list and free it, giving its
 * reservation back. */
static void drop_entry(api_reference_cache *c, api_reference_entry *e) {
    for (node *n = e->nodes, *next; n; n = next) {
        next = n->entry_next;
        unlink_node(c, n);
        free(n);
    }
    if (e->newer)
        e->newer->older = e->older;
    else
        c->newest = e->older;
    if (e->older)
        e->older->newer = e->newer;
    else
        c->oldest = e->newer;
    free_result(e->reference);
    for (size_t i = 0; i < e->n_mistakes; i++)
        free_result(e->mistakes[i].wrong);
    free(e->mistakes);
    free(e->key);
    give_back(c, e->bytes);
    c->stats.entries--;
    free(e);
}

void api_reference_cache_free(api_reference_cache *c) {
    if (!c)
        return;
    while (c->oldest)
        drop_entry(c, c->oldest);
    api_ledger_settle(&c->ledger, 0);
    free(c->buckets);
    free(c);
}

/* Room for bytes more: evict the least recently used entries nobody
 * holds, then reserve them. Returns 0, or -1 when they do not fit. */
static int make_room(api_reference_cache *c, uint64_t bytes) {
    if (bytes > c->max_bytes)
        return -1;
    api_reference_entry *e = c->oldest;
    while (c->stats.bytes + bytes > c->max_bytes && e) {
        api_reference_entry *newer = e->newer;
        if (e->held == 0) {
            drop_entry(c, e);
            c->stats.evictions++;
        }
        e = newer;
    }
    if (c->stats.bytes + bytes > c->max_bytes)
        return -1;
    api_problem ignored = {0};
    if (api_ledger_reserve(&c->ledger, bytes, "the batch's shared references",
                           &ignored))
        return -1;
    c->stats.bytes += bytes;
    return 0;
}

/* Double the buckets when there are more nodes than buckets; a table
 * that cannot grow stays as it is (longer chains). */
static void grow(api_reference_cache *c) {
    if (c->n_nodes <= c->n_buckets)
        return;
    size_t n = c->n_buckets * 2;
    node **b = calloc(n, sizeof *b);
    if (!b)
        return;
    for (size_t i = 0; i < c->n_buckets; i++)
        for (node *x = c->buckets[i], *next; x; x = next) {
            next = x->next;
            x->next = b[x->hash & (n - 1)];
            b[x->hash & (n - 1)] = x;
        }
    free(c->buckets);
    c->buckets = b;
    c->n_buckets = n;
}

static int add_node(api_reference_cache *c, api_reference_entry *e, int raw,
                    uint64_t hash, const void *bytes, size_t len) {
    node *n = malloc(sizeof *n);
    if (!n)
        return -1;
    n->hash = hash;
    n->raw = raw;
    n->bytes = bytes;
    n->len = len;
    n->entry = e;
    n->next = c->buckets[hash & (c->n_buckets - 1)];
    c->buckets[hash & (c->n_buckets - 1)] = n;
    n->entry_next = e->nodes;
    e->nodes = n;
    c->n_nodes++;
    grow(c);
    return 0;
}

static api_reference_entry *find(api_reference_cache *c, const api_route *route,
                                 int raw, uint64_t hash, const void *bytes,
                                 size_t len) {
    for (node *n = c->buckets[hash & (c->n_buckets - 1)]; n; n = n->next)
        if (n->hash == hash && n->raw == raw && n->len == len &&
            n->entry->route == route && !memcmp(n->bytes, bytes, len))
            return n->entry;
    return NULL;
}

api_reference_entry *
api_reference_cache_find_raw(api_reference_cache *c, const api_route *route,
                             uint64_t hash, const char *bytes, size_t len) {
    api_reference_entry *e = find(c, route, 1, hash, bytes, len);
    c->stats.raw_hits += e != NULL;
    return e;
}

/* FNV-1a of the canonical form (made once per distinct spelling). */
static uint64_t key_hash(const unsigned char *key, size_t len) {
    uint64_t h = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < len; i++)
        h = (h ^ key[i]) * 0x100000001B3ull;
    return h;
}

api_reference_entry *api_reference_cache_find_key(api_reference_cache *c,
                                                  const api_route *route,
                                                  const unsigned char *key,
                                                  size_t len) {
    api_reference_entry *e = find(c, route, 0, key_hash(key, len), key, len);
    c->stats.key_hits += e != NULL;
    return e;
}

void api_reference_cache_alias(api_reference_cache *c, api_reference_entry *e,
                               uint64_t hash, const char *bytes, size_t len) {
    if (e->n_aliases >= API_REFERENCE_ALIASES_MAX || len == 0 ||
        make_room(c, sizeof(node)))
        return;
    if (add_node(c, e, 1, hash, bytes, len)) {
        give_back(c, sizeof(node));
        return;
    }
    e->bytes += sizeof(node);
    e->n_aliases++;
}

api_reference_entry *
api_reference_cache_add(api_reference_cache *c, const api_route *route,
                        const unsigned char *key, size_t key_len, uint64_t hash,
                        const char *bytes, size_t len, api_result *reference,
                        size_t n_mistakes) {
    uint64_t need =
        sizeof(api_reference_entry) + key_len + result_bytes(reference) +
        n_mistakes * sizeof(struct api_cached_mistake) + 2 * sizeof(node);
    if (make_room(c, need)) {
        c->stats.refused++;
        return NULL;
    }
    api_reference_entry *e = calloc(1, sizeof *e);
    if (e) {
        e->key = malloc(key_len ? key_len : 1);
        e->reference = calloc(1, sizeof *e->reference);
        e->mistakes = calloc(n_mistakes ? n_mistakes : 1, sizeof *e->mistakes);
    }
    if (!e || !e->key || !e->reference || !e->mistakes) {
        if (e) {
            free(e->key);
            free(e->reference);
            free(e->mistakes);
            free(e);
        }
        give_back(c, need);
        c->stats.refused++;
        return NULL;
    }
    e->route = route;
    memcpy(e->key, key, key_len);
    e->key_len = key_len;
    e->key_hash = key_hash(key, key_len);
    e->n_mistakes = n_mistakes;
    e->bytes = need;
    /* newest first */
    e->older = c->newest;
    if (c->newest)
        c->newest->newer = e;
    else
        c->oldest = e;
    c->newest = e;
    c->stats.entries++;
    if (add_node(c, e, 0, e->key_hash, e->key, key_len) ||
        (len > 0 && add_node(c, e, 1, hash, bytes, len))) {
        drop_entry(c, e); /* gives need back */
        c->stats.refused++;
        return NULL;
    }
    e->n_aliases = len > 0;
    memcpy(e->reference, reference, sizeof *reference);
    memset(reference, 0, sizeof *reference);
    return e;
}

int api_reference_cache_set_mistake(api_reference_cache *c,
                                    api_reference_entry *e, size_t i, int state,
                                    api_result *wrong) {
    if (i >= e->n_mistakes)
        return -1;
    if (state == API_CACHED_NOT_APPLICABLE) {
        e->mistakes[i].state = state;
        return 0;
    }
    uint64_t need = result_bytes(wrong);
    /* e is held by the caller: make_room does not evict it */
    if (make_room(c, need)) {
        c->stats.refused++;
        return -1;
    }
    api_result *r = malloc(sizeof *r);
    if (!r) {
        give_back(c, need);
        c->stats.refused++;
        return -1;
    }
    memcpy(r, wrong, sizeof *r);
    memset(wrong, 0, sizeof *wrong);
    e->mistakes[i].state = API_CACHED_ANSWERED;
    e->mistakes[i].wrong = r;
    e->bytes += need;
    return 0;
}

void api_reference_cache_hold(api_reference_cache *c, api_reference_entry *e) {
    e->held++;
    if (c->newest == e)
        return;
    /* move to the front of the recency list */
    if (e->newer)
        e->newer->older = e->older;
    if (e->older)
        e->older->newer = e->newer;
    else
        c->oldest = e->newer;
    e->newer = NULL;
    e->older = c->newest;
    c->newest->newer = e;
    c->newest = e;
}

void api_reference_cache_drop(api_reference_entry *e) {
    if (e->held > 0)
        e->held--;
}

int api_reference_entry_complete(const api_reference_entry *e) {
    for (size_t i = 0; i < e->n_mistakes; i++)
        if (e->mistakes[i].state == API_CACHED_UNKNOWN)
            return 0;
    return 1;
}

void api_reference_cache_stats_of(const api_reference_cache *c,
                                  api_reference_cache_stats *s) {
    *s = c->stats;
}
