/*
 * conn_slots.h — the connection slots one client address may hold,
 * counted from accept (docs/contract.md section 1, "Sharing one server").
 *
 * libmicrohttpd holds a connection from accept, while its request line and
 * headers trickle in, so a per-client cap that counts requests (gate.h)
 * sees a slow-header client only once its headers are complete: 200 such
 * connections from one address would hold 200 slots. Here the accept
 * policy refuses a new connection when its peer address already holds its
 * share; a connection counts from the moment it is set up until it
 * closes. Trusted proxies (--trusted-proxy) are exempt: behind one, every
 * student shares its address, and the gate counts them by X-Forwarded-For.
 *
 * The bytes of the memory budget an address's connections hold (bodies
 * being read, answers not yet sent; http.c counts them in and out) are
 * kept beside its connections, so that one client that does not read its
 * answers cannot hold the whole budget (http.c refuses its next request
 * past its share).
 */
#ifndef SRV_CONN_SLOTS_H
#define SRV_CONN_SLOTS_H

#include <stdint.h>
#include <sys/socket.h>

#include "client_addr.h"

typedef struct srv_conn_slots srv_conn_slots;

/* Slots for at most `connections` connections in all (the server's
 * limit), `per_address` of them per peer address (0: no per-address
 * limit); addresses in exempt (may be NULL; copied) have none. Returns
 * NULL when memory runs out. */
srv_conn_slots *srv_conn_slots_new(unsigned connections, unsigned per_address,
                                   const srv_netlist *exempt);

void srv_conn_slots_free(srv_conn_slots *s);

/* At accept: 1 when the peer may open one more connection, 0 when it
 * already holds its share and `extra` more (or sa is NULL or of another
 * family: 1); those extra ones are opened only to be answered (503, by
 * srv_conn_slots_over), past them a connection is closed unanswered. The
 * connection is counted only by srv_conn_slots_opened, so a refused or
 * failed accept leaves nothing behind; connections accepted at once on
 * several threads may pass the share by at most the number of threads. */
int srv_conn_slots_admit(srv_conn_slots *s, const struct sockaddr *sa,
                         unsigned extra);
/* 1 when sa's address holds more connections than its share (the one
 * just opened included): the server answers it 503 and closes it. */
int srv_conn_slots_over(srv_conn_slots *s, const struct sockaddr *sa);

/* A connection from sa is set up / has closed. */
void srv_conn_slots_opened(srv_conn_slots *s, const struct sockaddr *sa);
void srv_conn_slots_closed(srv_conn_slots *s, const struct sockaddr *sa);

/* Connections sa's address holds now. */
unsigned srv_conn_slots_held(srv_conn_slots *s, const struct sockaddr *sa);

/* sa's connections now hold `delta` bytes more (< 0: fewer) of the memory
 * budget. Nothing is counted for an address without a connection (or of
 * another family), and the count never goes below 0. */
void srv_conn_slots_add_bytes(srv_conn_slots *s, const struct sockaddr *sa,
                              int64_t delta);

/* The bytes sa's connections hold now: 0 for an exempt address, and for
 * every address without a per-address limit (per_address 0: the
 * operator says that addresses are shared, as behind a proxy or a NAT). */
uint64_t srv_conn_slots_bytes(srv_conn_slots *s, const struct sockaddr *sa);

#endif /* SRV_CONN_SLOTS_H */
