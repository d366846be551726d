/*
 * ratelimit.c — the per-client table behind ratelimit.h: set-associative,
 * one mutex per set, keyed by a seeded hash so that nobody outside can aim
 * many addresses at one set.
 */
#include "ratelimit.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#define NSETS (SRV_RATELIMIT_SLOTS / SRV_RATELIMIT_WAYS)
#define RETRY_AFTER_MAX_S 86400u
#define NO_SLOT UINT32_MAX

typedef struct {
    srv_addr key;
    uint32_t generation; /* bumped whenever the slot changes owner */
    uint32_t in_flight;
    int used;
    double tokens;    /* left after the last refill */
    double updated_s; /* time of the last refill and admission */
} slot;

typedef struct {
    pthread_mutex_t lock;
    slot way[SRV_RATELIMIT_WAYS];
} set;

struct srv_ratelimit {
    double rate;  /* tokens per second; 0: no bucket */
    double burst; /* bucket capacity */
    unsigned max_concurrent;
    uint64_t seed;
    set sets[NSETS];
};

/* splitmix64's finaliser (Steele, Lea, Flood 2014): a bijective mix. */
static uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* The table key: the address itself for IPv4, its /64 for IPv6. */
static srv_addr client_key(const srv_addr *a) {
    srv_addr k = *a;
    if (!srv_addr_is_v4(a))
        memset(k.b + 8, 0, 8);
    return k;
}

static size_t set_of(const srv_ratelimit *rl, const srv_addr *key) {
    uint64_t hi, lo;
    memcpy(&hi, key->b, 8);
    memcpy(&lo, key->b + 8, 8);
    uint64_t h = mix64(rl->seed ^ hi);
    h = mix64(h ^ lo);
    return (size_t)(h % NSETS);
}

srv_ratelimit *srv_ratelimit_new(double rate_per_s, unsigned burst,
                                 unsigned max_concurrent) {
    srv_ratelimit *rl = calloc(1, sizeof *rl);
    if (rl == NULL)
        return NULL;
    rl->rate = rate_per_s > 0 ? rate_per_s : 0;
    rl->burst = burst >= 1 ? (double)burst : 1;
    rl->max_concurrent = max_concurrent;
    if (getrandom(&rl->seed, sizeof rl->seed, GRND_NONBLOCK) !=
        (ssize_t)sizeof rl->seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        rl->seed =
            mix64((uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec);
    }
    for (size_t i = 0; i < NSETS; i++)
        pthread_mutex_init(&rl->sets[i].lock, NULL);
    return rl;
}

/* Tokens e would hold at now_s (without storing them). */
static double tokens_at(const srv_ratelimit *rl, const slot *e, double now_s) {
    double t = e->tokens + (now_s - e->updated_s) * rl->rate;
    return t < rl->burst ? t : rl->burst;
}

/* The way a newcomer takes in s: a free one; else an idle client whose
 * bucket has refilled (forgetting it loses nothing); else the idle one
 * seen longest ago; else, with every way busy, the one seen longest ago. */
static size_t victim(const srv_ratelimit *rl, const set *s, double now_s) {
    size_t best = 0;
    int best_rank = -1;
    for (size_t w = 0; w < SRV_RATELIMIT_WAYS; w++) {
        const slot *e = &s->way[w];
        if (!e->used)
            return w;
        int idle = e->in_flight == 0;
        int rank =
            idle && (rl->rate == 0 || tokens_at(rl, e, now_s) >= rl->burst)
                ? 2
                : idle;
        if (rank > best_rank ||
            (rank == best_rank && e->updated_s < s->way[best].updated_s)) {
            best = w;
            best_rank = rank;
        }
    }
    return best;
}

srv_rl_verdict srv_ratelimit_admit(srv_ratelimit *rl, const srv_addr *client,
                                   double now_s, srv_rl_ticket *ticket,
                                   unsigned *retry_after_s) {
    srv_addr key = client_key(client);
    size_t si = set_of(rl, &key);
    set *s = &rl->sets[si];
    ticket->slot = NO_SLOT;
    ticket->generation = 0;
    *retry_after_s = 0;

    pthread_mutex_lock(&s->lock);
    size_t w = SRV_RATELIMIT_WAYS;
    for (size_t i = 0; i < SRV_RATELIMIT_WAYS; i++)
        if (s->way[i].used && memcmp(&s->way[i].key, &key, sizeof key) == 0) {
            w = i;
            break;
        }
    if (w == SRV_RATELIMIT_WAYS) {
        w = victim(rl, s, now_s);
        slot *e = &s->way[w];
        e->generation++;
        e->key = key;
        e->used = 1;
        e->in_flight = 0;
        e->tokens = rl->burst;
        e->updated_s = now_s;
    }
    slot *e = &s->way[w];
    if (now_s < e->updated_s)
        now_s = e->updated_s; /* clocks read before the lock, out of order */

    srv_rl_verdict verdict = SRV_RL_ADMIT;
    if (rl->max_concurrent > 0 && e->in_flight >= rl->max_concurrent) {
        verdict = SRV_RL_CONCURRENT;
        *retry_after_s = 1;
    } else if (rl->rate > 0) {
        e->tokens = tokens_at(rl, e, now_s);
        e->updated_s = now_s;
        if (e->tokens < 1.0) {
            verdict = SRV_RL_RATE;
            double wait = ceil((1.0 - e->tokens) / rl->rate);
            *retry_after_s = wait < 1                   ? 1u
                             : wait > RETRY_AFTER_MAX_S ? RETRY_AFTER_MAX_S
                                                        : (unsigned)wait;
        } else {
            e->tokens -= 1.0;
        }
    } else {
        e->updated_s = now_s;
    }
    if (verdict == SRV_RL_ADMIT) {
        e->in_flight++;
        ticket->slot = (uint32_t)(si * SRV_RATELIMIT_WAYS + w);
        ticket->generation = e->generation;
    }
    pthread_mutex_unlock(&s->lock);
    return verdict;
}

void srv_ratelimit_release(srv_ratelimit *rl, const srv_rl_ticket *ticket) {
    if (rl == NULL || ticket->slot == NO_SLOT ||
        ticket->slot >= SRV_RATELIMIT_SLOTS)
        return;
    set *s = &rl->sets[ticket->slot / SRV_RATELIMIT_WAYS];
    slot *e = &s->way[ticket->slot % SRV_RATELIMIT_WAYS];
    pthread_mutex_lock(&s->lock);
    if (e->generation == ticket->generation && e->in_flight > 0)
        e->in_flight--;
    pthread_mutex_unlock(&s->lock);
}

unsigned srv_ratelimit_clients(srv_ratelimit *rl) {
    unsigned n = 0;
    for (size_t i = 0; i < NSETS; i++) {
        pthread_mutex_lock(&rl->sets[i].lock);
        for (size_t w = 0; w < SRV_RATELIMIT_WAYS; w++)
            n += rl->sets[i].way[w].used != 0;
        pthread_mutex_unlock(&rl->sets[i].lock);
    }
    return n;
}

void srv_ratelimit_free(srv_ratelimit *rl) {
    if (rl == NULL)
        return;
    for (size_t i = 0; i < NSETS; i++)
        pthread_mutex_destroy(&rl->sets[i].lock);
    free(rl);
}
