/*
 * answer_cache.c — identical requests computed once (see answer_cache.h).
 *
 * One mutex guards a chained hash table of entries and the list of kept
 * answers, newest first. An entry is pending while its first request
 * computes it; requests that wait for it sleep on one condition variable
 * and read its outcome from the entry itself, which lives until the last
 * of them has looked (an entry taken out of the table while some wait is
 * freed by the last waiter). Only kept answers are in the list, and only
 * they hold bytes of the budget.
 */
#include "answer_cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api.h"
#include "version.h"

#define BUCKETS 4096 /* a power of two */

/* An answer larger than this (or than an eighth of the cache) is not
 * kept: a cache of a few answers would be no cache. */
#define ENTRY_MAX ((uint64_t)4 << 20)

typedef enum { PENDING, DONE, FAILED } entry_state;

struct api_answer_entry {
    uint64_t hash;
    char *key;
    size_t key_len;
    char *body;
    size_t body_len;
    const char *content_type;
    char etag[API_ETAG_TEXT]; /* the answer's, "" when it has none */
    entry_state state;
    unsigned waiters;
    int listed;       /* in the table (its key finds it) */
    uint64_t charged; /* bytes of the budget it holds, when kept */
    struct api_answer_entry *chain, *newer, *older;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t settled = PTHREAD_COND_INITIALIZER;
static api_answer_entry *buckets[BUCKETS];
static api_answer_entry *newest, *oldest; /* kept answers */
static uint64_t max_bytes, kept_bytes, kept_entries;
static uint64_t hits, shared, computed;

/* FNV-1a, 64 bits, from seed. */
static uint64_t fnv(uint64_t seed, const char *s, size_t n) {
    uint64_t h = seed;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
    return h;
}

void api_answer_etag(char etag[API_ETAG_TEXT], const char *key, size_t len) {
    static const char version[] = ATTND_VERSION;
    uint64_t a = fnv(1469598103934665603ULL, version, sizeof version);
    uint64_t b = fnv(0x9e3779b97f4a7c15ULL, version, sizeof version);
    a = fnv(a, key, len);
    b = fnv(b ^ (uint64_t)len, key, len);
    snprintf(etag, API_ETAG_TEXT, "\"%016llx%016llx\"", (unsigned long long)a,
             (unsigned long long)b);
}

int api_etag_matches(const char *header, const char *etag) {
    if (header == NULL)
        return 0;
    size_t n = strlen(etag);
    for (const char *p = header; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (*p == '*')
            return 1;
        if (p[0] == 'W' && p[1] == '/')
            p += 2; /* weak comparison: the opaque tags alone */
        if (strncmp(p, etag, n) == 0 &&
            (p[n] == '\0' || p[n] == ',' || p[n] == ' ' || p[n] == '\t'))
            return 1;
        while (*p && *p != ',')
            p++;
    }
    return 0;
}

static api_answer_entry **slot_of(uint64_t hash) {
    return &buckets[hash & (BUCKETS - 1)];
}

static api_answer_entry *find(uint64_t hash, const char *key, size_t len) {
    for (api_answer_entry *e = *slot_of(hash); e != NULL; e = e->chain)
        if (e->hash == hash && e->key_len == len &&
            memcmp(e->key, key, len) == 0)
            return e;
    return NULL;
}

static void free_entry(api_answer_entry *e) {
    free(e->key);
    free(e->body);
    free(e);
}

/* Out of the table and, when kept, out of the list and the budget; freed
 * now, or by its last waiter. */
static void unlist(api_answer_entry *e) {
    if (e->listed) {
        api_answer_entry **p = slot_of(e->hash);
        while (*p != e)
            p = &(*p)->chain;
        *p = e->chain;
        e->listed = 0;
    }
    if (e->charged > 0) {
        if (e->newer != NULL)
            e->newer->older = e->older;
        else
            newest = e->older;
        if (e->older != NULL)
            e->older->newer = e->newer;
        else
            oldest = e->newer;
        kept_bytes -= e->charged;
        kept_entries--;
        api_budget_give(e->charged);
        e->charged = 0;
    }
    if (e->waiters == 0)
        free_entry(e);
}

/* A kept answer moves to the front: it was just used. */
static void touch(api_answer_entry *e) {
    if (e->charged == 0 || newest == e)
        return;
    e->newer->older = e->older;
    if (e->older != NULL)
        e->older->newer = e->newer;
    else
        oldest = e->newer;
    e->newer = NULL;
    e->older = newest;
    newest->newer = e;
    newest = e;
}

/* Keep e's answer at the front of the list when it fits. */
static void keep(api_answer_entry *e) {
    uint64_t size = e->body_len + e->key_len + sizeof *e;
    uint64_t entry_max = max_bytes / 8 < ENTRY_MAX ? max_bytes / 8 : ENTRY_MAX;
    if (size > entry_max || api_budget_take(size, -1) != API_BUDGET_OK)
        return;
    while (kept_bytes + size > max_bytes && oldest != NULL)
        unlist(oldest);
    e->charged = size;
    kept_bytes += size;
    kept_entries++;
    e->newer = NULL;
    e->older = newest;
    if (newest != NULL)
        newest->newer = e;
    newest = e;
    if (oldest == NULL)
        oldest = e;
}

void api_answer_cache_set(uint64_t bytes) {
    pthread_mutex_lock(&lock);
    max_bytes = bytes;
    while (kept_bytes > max_bytes && oldest != NULL)
        unlist(oldest);
    pthread_mutex_unlock(&lock);
}

/* A copy of e's answer into the caller's out-parameters. Returns 0, or -1
 * when memory runs out. */
static int copy_answer(const api_answer_entry *e, api_answer *out) {
    out->body = malloc(e->body_len ? e->body_len : 1);
    if (out->body == NULL)
        return -1;
    memcpy(out->body, e->body, e->body_len);
    out->body_len = e->body_len;
    out->content_type = e->content_type;
    memcpy(out->etag, e->etag, sizeof out->etag);
    return 0;
}

static void deadline_after(struct timespec *t, unsigned ms) {
    clock_gettime(CLOCK_REALTIME, t);
    t->tv_sec += ms / 1000;
    t->tv_nsec += (long)(ms % 1000) * 1000000L;
    if (t->tv_nsec >= 1000000000L) {
        t->tv_sec++;
        t->tv_nsec -= 1000000000L;
    }
}

/* Wait for the pending e to settle (the lock held). Returns its state, or
 * PENDING when the deadline came first. */
static entry_state wait_for(api_answer_entry *e, const struct timespec *until) {
    e->waiters++;
    int rc = 0;
    while (e->state == PENDING && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&settled, &lock, until);
    e->waiters--;
    return e->state;
}

api_answer_outcome api_answer_cache_begin(const char *key, size_t len,
                                          unsigned wait_ms,
                                          api_answer_entry **entry,
                                          api_answer *out) {
    *entry = NULL;
    out->body = NULL;
    uint64_t hash = fnv(1469598103934665603ULL, key, len);
    struct timespec until;
    deadline_after(&until, wait_ms);
    pthread_mutex_lock(&lock);
    api_answer_outcome outcome = API_ANSWER_BYPASS;
    for (;;) {
        api_answer_entry *e = find(hash, key, len);
        if (e == NULL) { /* the first: it computes, others wait for it */
            e = calloc(1, sizeof *e);
            char *copy = e != NULL ? malloc(len ? len : 1) : NULL;
            if (copy == NULL) {
                free(e);
                break;
            }
            memcpy(copy, key, len);
            *e = (api_answer_entry){.hash = hash,
                                    .key = copy,
                                    .key_len = len,
                                    .state = PENDING,
                                    .listed = 1,
                                    .chain = *slot_of(hash)};
            *slot_of(hash) = e;
            *entry = e;
            outcome = API_ANSWER_MISS;
            break;
        }
        if (e->state == DONE) {
            if (copy_answer(e, out) == 0) {
                touch(e);
                hits++;
                outcome = API_ANSWER_HIT;
            }
            break;
        }
        if (wait_ms == 0)
            break; /* an HTTP thread never waits: it computes */
        entry_state settled_as = wait_for(e, &until);
        if (settled_as == DONE && copy_answer(e, out) == 0) {
            shared++;
            outcome = API_ANSWER_HIT;
        }
        if (!e->listed && e->waiters == 0)
            free_entry(e); /* its last waiter frees it */
        /* answered; or it gave no answer (an error, an answer too large
         * to share), or the wait was in vain: each waiter computes it
         * itself, at once, not one after another */
        break;
    }
    pthread_mutex_unlock(&lock);
    return outcome;
}

void api_answer_cache_finish(api_answer_entry *e, const api_answer *answer) {
    if (e == NULL)
        return;
    char *copy =
        answer != NULL ? malloc(answer->body_len ? answer->body_len : 1) : NULL;
    if (copy != NULL)
        memcpy(copy, answer->body, answer->body_len);
    pthread_mutex_lock(&lock);
    if (copy != NULL) {
        computed++;
        e->body = copy;
        e->body_len = answer->body_len;
        e->content_type = answer->content_type;
        memcpy(e->etag, answer->etag, sizeof e->etag);
        e->state = DONE;
        if (max_bytes > 0)
            keep(e);
    } else {
        e->state = FAILED;
    }
    pthread_cond_broadcast(&settled);
    if (e->charged == 0) /* not kept: no later request finds it */
        unlist(e);
    pthread_mutex_unlock(&lock);
}

void api_answer_cache_put(const char *key, size_t len,
                          const api_answer *answer) {
    api_answer_entry *e;
    api_answer found;
    api_answer_outcome o = api_answer_cache_begin(key, len, 0, &e, &found);
    if (o == API_ANSWER_MISS) {
        api_answer_cache_finish(e, answer);
        /* not a computation: it was counted under its own key */
        pthread_mutex_lock(&lock);
        computed--;
        pthread_mutex_unlock(&lock);
    } else if (o == API_ANSWER_HIT) {
        pthread_mutex_lock(&lock);
        hits--; /* a store, not a request answered */
        pthread_mutex_unlock(&lock);
        free(found.body);
    }
}

int api_answer_cache_find(const char *key, size_t len, api_answer *out) {
    out->body = NULL;
    uint64_t hash = fnv(1469598103934665603ULL, key, len);
    pthread_mutex_lock(&lock);
    api_answer_entry *e = find(hash, key, len);
    int found = e != NULL && e->state == DONE && copy_answer(e, out) == 0;
    if (found) {
        touch(e);
        hits++;
    }
    pthread_mutex_unlock(&lock);
    return found;
}

void api_answer_cache_stats(api_answer_cache_usage *u) {
    pthread_mutex_lock(&lock);
    *u = (api_answer_cache_usage){kept_entries, kept_bytes, hits, shared,
                                  computed};
    pthread_mutex_unlock(&lock);
}
