/*
 * conn_watch.h — deadlines for clients that send slowly: the request line
 * and headers must arrive within --header-timeout of accept (or of the
 * end of the previous request on a keep-alive connection, plus the idle
 * --timeout), and a body at --min-body-rate on average once that long has
 * passed (docs/contract.md section 1, "Sharing one server").
 *
 * libmicrohttpd's own --timeout counts idleness, so a client that sends a
 * byte every few seconds holds its connection, and its memory, for ever.
 * A watcher thread looks at every connection a few times a second; one
 * past its deadline gets a 408 problem+json written on its socket (plain
 * HTTP only: over TLS the bytes would have to be encrypted by the
 * library) and the socket is shut down, after which libmicrohttpd closes
 * the connection on its own thread as for any client that went away.
 * Nothing is written while libmicrohttpd may be writing: only while a
 * connection waits for its head or its body.
 */
#ifndef SRV_CONN_WATCH_H
#define SRV_CONN_WATCH_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct srv_conn_watch srv_conn_watch;

/* One connection's record, from srv_conn_watch_open to _close. */
typedef struct srv_watched srv_watched;

/* Start the watcher. connections: the server's connection limit (past
 * seven eighths of it open, connections that wait on their client are
 * let go down to three quarters: srv_conn_watch_authenticated);
 * header_timeout_s ≥ 1; idle_timeout_s: libmicrohttpd's --timeout;
 * min_body_rate and min_response_rate in bytes/s, 0: no rate; write_408:
 * 1 on plain HTTP. NULL when memory or a thread cannot be had. */
srv_conn_watch *srv_conn_watch_start(unsigned connections,
                                     unsigned header_timeout_s,
                                     unsigned idle_timeout_s,
                                     size_t min_body_rate,
                                     size_t min_response_rate, int write_408);

/* Stop the thread and free w (every record must be closed). NULL is
 * fine. */
void srv_conn_watch_stop(srv_conn_watch *w);

/* A connection on socket fd was accepted: it waits for its head. NULL when
 * memory runs out (the connection is then not watched). */
srv_watched *srv_conn_watch_open(srv_conn_watch *w, int fd);

/* The connection is closing: no more checks; c is freed. NULL is fine. */
void srv_conn_watch_close(srv_conn_watch *w, srv_watched *c);

/* The calls below return 0, or -1 once the watcher has cut the
 * connection: the caller must then answer nothing (return MHD_NO). A NULL
 * record is never cut. */

/* Its headers are in; a body follows (has_body) or not. */
int srv_conn_watch_head_done(srv_watched *c, int has_body);

/* n more body bytes arrived. */
int srv_conn_watch_body(srv_watched *c, size_t n);

/* The body is in, or an answer is about to be queued: no deadline until
 * the request completes. Call before queueing any response. */
int srv_conn_watch_busy(srv_watched *c);

/* Its answer is queued: from now on the client must take it at
 * min_response_rate on average over each window of header_timeout_s,
 * counted in bytes it has acknowledged (those handed over,
 * srv_conn_watch_sent, less those still in the socket's send queue), so
 * that what its socket buffers took at once counts for one window only,
 * and at least the `held` bytes of memory its answer holds over
 * ANSWER_HOLD_MAX_S (conn_watch.c), so that no answer holds the memory
 * budget for hours at just above the rate; a slower reader's
 * connection is shut down, so that an answer nobody reads does not hold
 * its memory for ever. */
void srv_conn_watch_sending(srv_watched *c, uint64_t held);
/* n more bytes of the answer were handed to the socket. Returns 0, or -1
 * once the watcher has cut the connection. */
int srv_conn_watch_sent(srv_watched *c, size_t n);
/* The request completed: on a kept-alive connection the next head may
 * come, within the idle timeout and the header timeout. */
void srv_conn_watch_idle(srv_watched *c);

/* The connection's request goes to a compute thread (its connection is
 * suspended, which libmicrohttpd then does not poll): from now on the
 * watcher looks for the client's hang-up (POLLRDHUP, POLLHUP or POLLERR:
 * a close, a reset, or a shutdown of its sending side, whatever bytes it
 * left unread), within HANGUP_POLL_MS. A client that sends more than
 * PIPELINED_MAX bytes behind its request meanwhile counts as gone too:
 * past about that, the receive window is closed and its close could no
 * longer be seen. Returns the flag it then sets, for
 * api_request.abandoned, alive until the connection closes; NULL for a
 * NULL record. */
const atomic_int *srv_conn_watch_computing(srv_conn_watch *w, srv_watched *c);
/* A connection over its address's share (conn_slots.h), just accepted:
 * answered 503 overloaded with Retry-After: 1 (plain HTTP), so that the
 * client sees why, and closed. */
void srv_conn_watch_refuse(srv_conn_watch *w, srv_watched *c);
/* Close the connection on socket fd gently once libmicrohttpd closes it:
 * its answer was written before the request's body was read, and closing
 * a socket with bytes unread sends a reset, which can reach the client
 * before it reads the answer (RFC 9112 section 9.6). The watcher keeps a
 * duplicate of fd, shuts down its sending side, reads and drops what the
 * client still sends for up to LINGER_MS, and closes it at the client's
 * end of stream or then. At most LINGER_MAX at once: past them, fd is left
 * to close at once. Call before libmicrohttpd closes fd. */
void srv_conn_watch_linger(srv_conn_watch *w, int fd);
/* A request on c carried a valid token. When connections run short,
 * the watcher lets go of connections that wait on their client (a head
 * or a body on its way, an idle kept-alive connection), tokenless ones
 * first, then those of the address that holds the most such connections,
 * the longest waiting first; a body let go is answered 503 with
 * Retry-After: 1. So the tokenless, and a few addresses, cannot hold the
 * slots a class needs to connect. */
void srv_conn_watch_authenticated(srv_watched *c);
/* The compute thread is done with it: no more looking. */
void srv_conn_watch_computed(srv_conn_watch *w, srv_watched *c);
/* 1 once the client of a computing connection has gone: seen by the
 * watcher, or now (a poll of the socket that does not wait). 0 for a
 * NULL record. */
int srv_conn_watch_gone(srv_watched *c);
/* The status the watcher answered on c's socket (408, or 503 for a body
 * let go), once: later calls
 * return 0, as does a connection it never answered. So that the answer
 * counts in the metrics and the access log exactly once: for the request
 * it cut, or, when it cut a head before any request was seen, for the
 * connection. NULL gives 0. */
int srv_conn_watch_answered(srv_watched *c);

/* Connections closed by a deadline since start: heads, bodies, slow
 * readers; computing connections whose client was seen to leave; and
 * connections let go when connections ran short. */
void srv_conn_watch_counts(srv_conn_watch *w, unsigned long *heads,
                           unsigned long *bodies, unsigned long *readers,
                           unsigned long *hangups, unsigned long *let_go);

#endif /* SRV_CONN_WATCH_H */
