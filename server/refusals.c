/*
 * refusals.c — refusals counted by reason and logged (see refusals.h).
 */
#include "refusals.h"

#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "log.h"

static const char *const names[SRV_REFUSED_REASONS] = {
    [SRV_REFUSED_NONE] = "none",
    [SRV_REFUSED_CONNECTIONS] = "connections_per_address",
    [SRV_REFUSED_CONNECTIONS_CLOSED] = "connections_closed",
    [SRV_REFUSED_RATE_LIMITED] = "rate_limited",
    [SRV_REFUSED_TOO_CONCURRENT] = "too_concurrent",
    [SRV_REFUSED_OVERLOADED] = "overloaded",
    [SRV_REFUSED_ADDRESS_SHARE] = "address_share",
    [SRV_REFUSED_MEMORY] = "memory",
    [SRV_REFUSED_QUEUE_FULL] = "queue_full",
};

static atomic_ullong counts[SRV_REFUSED_REASONS];

/* Per reason: the second of its last line about connections, and how
 * many it refused since that line. */
static atomic_llong logged_s[SRV_REFUSED_REASONS];
static atomic_ullong unlogged[SRV_REFUSED_REASONS];

const char *srv_refusal_name(srv_refusal reason) {
    return reason > SRV_REFUSED_NONE && reason < SRV_REFUSED_REASONS
               ? names[reason]
               : names[SRV_REFUSED_NONE];
}

void srv_refused(srv_refusal reason) {
    if (reason > SRV_REFUSED_NONE && reason < SRV_REFUSED_REASONS)
        atomic_fetch_add_explicit(&counts[reason], 1, memory_order_relaxed);
}

/* One access line about refused connections: from client (NULL: from
 * several), `count` of them. */
static void log_connections(srv_refusal reason, const char *client, int status,
                            unsigned long long count) {
    srv_access rec = {
        .request_id = "-",
        .method = "-",
        .path = "-",
        .status = status,
        .client = client,
        .refused = names[reason],
        .refused_count = count,
    };
    srv_log_access(&rec);
}

void srv_refused_connection(srv_refusal reason, const char *client,
                            int status) {
    if (reason <= SRV_REFUSED_NONE || reason >= SRV_REFUSED_REASONS)
        return;
    srv_refused(reason);
    /* a line a second at most: one flood, one line */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long second = (long long)now.tv_sec + 1; /* 0: never logged */
    long long last = atomic_load(&logged_s[reason]);
    if (last == second ||
        !atomic_compare_exchange_strong(&logged_s[reason], &last, second)) {
        atomic_fetch_add(&unlogged[reason], 1);
        return;
    }
    /* those refused since the last line, from whichever clients, then
     * this one, named */
    unsigned long long before = atomic_exchange(&unlogged[reason], 0);
    if (before > 0)
        log_connections(reason, NULL, status, before);
    log_connections(reason, client, status, 1);
}

size_t srv_refusals_render(char *out, size_t cap) {
    size_t len = 0;
    int n = snprintf(out, cap,
                     "# HELP attnd_refused_total Connections and requests "
                     "refused, by reason (docs/operations.md).\n"
                     "# TYPE attnd_refused_total counter\n");
    len += n > 0 ? (size_t)n : 0;
    for (int r = SRV_REFUSED_NONE + 1; r < SRV_REFUSED_REASONS; r++) {
        n = snprintf(out + (len < cap ? len : cap), len < cap ? cap - len : 0,
                     "attnd_refused_total{reason=\"%s\"} %llu\n", names[r],
                     (unsigned long long)atomic_load_explicit(
                         &counts[r], memory_order_relaxed));
        len += n > 0 ? (size_t)n : 0;
    }
    return len;
}
