/*
 * refusals.h — every refusal counted by its reason, for a teaching
 * assistant to see who is being turned away and why (docs/contract.md
 * sections 1 and 14): attnd_refused_total{reason} on GET /metrics, and a
 * log line naming the client. A refused request's access line carries
 * its reason itself (log.h); a connection refused before it sent a
 * request has no access line, so one is written here.
 *
 * Reasons are a fixed set, so the counter's labels stay bounded whatever
 * clients do.
 */
#ifndef SRV_REFUSALS_H
#define SRV_REFUSALS_H

#include <stddef.h>

typedef enum {
    SRV_REFUSED_NONE = 0,
    /* a connection past its address's share, answered 503 and closed */
    SRV_REFUSED_CONNECTIONS,
    /* a connection far past the share, closed at accept unanswered (a
     * flood costs no more than the refusal) */
    SRV_REFUSED_CONNECTIONS_CLOSED,
    SRV_REFUSED_RATE_LIMITED,   /* 429: the client's request rate */
    SRV_REFUSED_TOO_CONCURRENT, /* 429: the client's requests in flight */
    SRV_REFUSED_OVERLOADED,     /* 503: the server's requests in flight, or
                                   the api's own (time limit, stop) */
    SRV_REFUSED_ADDRESS_SHARE,  /* 503: the address holds its share of the
                                   memory budget */
    SRV_REFUSED_MEMORY,         /* 503: no room in the memory budget, for
                                   the body or for what the api holds */
    SRV_REFUSED_QUEUE_FULL,     /* 503: the compute queue is full */
    SRV_REFUSED_REASONS
} srv_refusal;

/* The reason's label: "connections_per_address", "rate_limited", ... */
const char *srv_refusal_name(srv_refusal reason);

/* Count one refusal. Thread-safe (a relaxed atomic). */
void srv_refused(srv_refusal reason);

/* A connection from client (address text) refused before it sent a
 * request: counted, and logged as an access line with no request, at
 * most one a second per reason (so that a flood does not flood the log):
 * the first refusal of a second is named with its client, after a line
 * without a client ("-") counting those refused since the line before,
 * which may come from several. status: what it was answered (503), or 0
 * when nothing was. */
void srv_refused_connection(srv_refusal reason, const char *client, int status);

/* The counter, one line per reason, as Prometheus text (with its HELP
 * and TYPE lines) into out (cap bytes). Returns the length written, or
 * the length needed when it did not fit (as snprintf). */
size_t srv_refusals_render(char *out, size_t cap);

#endif /* SRV_REFUSALS_H */
