/*
 * ratelimit.h — per-client fairness: a token bucket per client address
 * (rate r requests per second, capacity `burst`) and a cap on each
 * client's requests in flight. The bookkeeping is a fixed-size table
 * (SRV_RATELIMIT_SLOTS entries, allocated once), so a flood of distinct
 * addresses costs no memory: a new client takes the slot of an idle one.
 *
 * Token bucket (RFC 2697's single-rate meter, one colour): a client starts
 * with `burst` tokens; tokens grow at r per second up to `burst`; a request
 * takes one, and is refused (429) when less than one is left. IPv6 clients
 * are counted per /64, the block a single host is usually given
 * (RFC 6177), so hopping addresses within it buys nothing.
 */
#ifndef SRV_RATELIMIT_H
#define SRV_RATELIMIT_H

#include <stdint.h>

#include "client_addr.h"

/* Clients tracked at once. 8-way sets: a client competes for a slot only
 * with the few that hash to the same set. */
#define SRV_RATELIMIT_SLOTS 4096
#define SRV_RATELIMIT_WAYS 8

typedef struct srv_ratelimit srv_ratelimit;

/* Handed out with each admitted request; give it back to
 * srv_ratelimit_release when the request completes. */
typedef struct {
    uint32_t slot;       /* UINT32_MAX: nothing to release */
    uint32_t generation; /* the slot's owner at admission */
} srv_rl_ticket;

typedef enum {
    SRV_RL_ADMIT = 0,
    SRV_RL_RATE,      /* bucket empty */
    SRV_RL_CONCURRENT /* too many requests of this client in flight */
} srv_rl_verdict;

/* A limiter. rate_per_s: tokens per second (0: no rate limit; then burst
 * is unused). burst: bucket capacity in requests (>= 1 when rate_per_s >
 * 0). max_concurrent: requests in flight per client (0: no cap). Returns
 * NULL when memory runs out; the caller frees it with srv_ratelimit_free.
 */
srv_ratelimit *srv_ratelimit_new(double rate_per_s, unsigned burst,
                                 unsigned max_concurrent);

/* Admit one request of client at time now_s (seconds on a monotonic
 * clock, non-decreasing per client). The concurrency cap is checked
 * first, so a refused request takes no token. On SRV_RL_ADMIT *ticket is
 * filled and *retry_after_s is 0; otherwise *ticket names nothing and
 * *retry_after_s is the whole seconds until the request would be admitted
 * (for the bucket: ceil((1 - tokens) / rate); for the concurrency cap,
 * which frees when another request ends, 1). Thread-safe. */
srv_rl_verdict srv_ratelimit_admit(srv_ratelimit *rl, const srv_addr *client,
                                   double now_s, srv_rl_ticket *ticket,
                                   unsigned *retry_after_s);

/* The request behind ticket has completed: its client has one fewer in
 * flight. A ticket whose slot has since gone to another client (evicted
 * while busy, which only a table full of busy clients forces) is ignored.
 * Safe on a ticket that names nothing. Thread-safe. */
void srv_ratelimit_release(srv_ratelimit *rl, const srv_rl_ticket *ticket);

/* Clients currently holding a slot (for tests and diagnostics). */
unsigned srv_ratelimit_clients(srv_ratelimit *rl);

/* Free rl; NULL is ignored. No request may be in flight. */
void srv_ratelimit_free(srv_ratelimit *rl);

#endif /* SRV_RATELIMIT_H */
