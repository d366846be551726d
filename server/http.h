/*
 * http.h — attnd's HTTP/1.1 front on libmicrohttpd: accepts connections on a
 * worker-thread pool, gathers each request body, hands the request to the
 * api layer, and sends its answer with the headers every response carries
 * (CORS, X-Request-Id, Server-Timing, nosniff, no-store, gzip, the lab
 * page's Content-Security-Policy), after the admission gate (gate.h);
 * over TLS when given a certificate. Contract: docs/contract.md section 1,
 * "Cross-origin use and headers" and "HTTP behaviour".
 */
#ifndef SRV_HTTP_H
#define SRV_HTTP_H

#include "api.h"
#include "gate.h"
#include "options.h"
#include "tls.h"

/* Longest request target (path and query) answered normally, bytes; longer
 * → 414. Largest header block (sum of "name: value\r\n"), bytes; larger →
 * 431 (RFC 9110 section 15.5.15, RFC 6585 section 5). */
#define SRV_MAX_URI_BYTES 8192
#define SRV_MAX_HEADER_BYTES 16384

typedef struct srv_http srv_http;

/* Connections libmicrohttpd accepts at once: 1024, or fewer when the
 * descriptor limit (RLIMIT_NOFILE) is lower, keeping room for the
 * process's own files. Past it new connections wait in the listen backlog
 * or are refused, without an answer; --max-connections must stay below it
 * so that its 503 comes first. */
unsigned srv_http_connection_limit(void);

/* Listen on opts->bind:opts->port with opts->threads workers and serve until
 * srv_http_stop. limits is copied. gate (NULL: admit everything) decides
 * on every request for a known route and method; tls (NULL, or cert_pem
 * NULL: plain HTTP) turns on HTTPS. Both are borrowed and must outlive the
 * server. The CORS policy must be installed (srv_cors_init) first, and the
 * lab page's policy (srv_csp_init) for it to be sent. Returns NULL, after
 * logging why, when the address cannot be bound or memory runs out. */
srv_http *srv_http_start(const srv_options *opts, const api_limits *limits,
                         srv_gate *gate, const srv_tls_keys *tls);

/* The TCP port actually bound (the chosen one when opts->port was 0). */
unsigned srv_http_port(const srv_http *srv);

/* Stop accepting connections (new ones are refused); open connections keep
 * being served. Returns 0, or -1 when the listening socket could not be
 * released. */
int srv_http_quiesce(srv_http *srv);

/* Requests currently between their first byte and their last response
 * byte (idle keep-alive connections do not count). */
unsigned srv_http_in_flight(const srv_http *srv);

/* Open client connections, busy or idle (0 when libmicrohttpd cannot
 * tell). */
unsigned srv_http_connections(const srv_http *srv);

/* Close every connection, join the workers and free srv. NULL is ignored. */
void srv_http_stop(srv_http *srv);

#endif /* SRV_HTTP_H */
