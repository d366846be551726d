/*
 * healthcheck.h — `attnd --healthcheck`: a dependency-free probe for
 * container HEALTHCHECK lines.
 */
#ifndef SRV_HEALTHCHECK_H
#define SRV_HEALTHCHECK_H

/* GET http://ADDR:port/healthz over a plain TCP socket (HTTP/1.0, no
 * keep-alive), where ADDR is bind, or the loopback address of its family
 * when bind is a wildcard (0.0.0.0, ::); when the answer does not begin
 * with "HTTP/" (a TLS server closes on a plain request), the same over TLS
 * without certificate checks (tls.h). Gives up after timeout_ms
 * milliseconds overall. Returns 0 when the status line says 200, else 1
 * (connection refused, timeout, any other status). */
int srv_healthcheck(const char *bind, unsigned port, int timeout_ms);

#endif /* SRV_HEALTHCHECK_H */
