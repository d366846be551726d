/*
 * tls.h — HTTPS: the server's certificate and key, read and checked once at
 * start for libmicrohttpd's GnuTLS back end, and a minimal TLS client for
 * `attnd --healthcheck` against a server that speaks only TLS.
 */
#ifndef SRV_TLS_H
#define SRV_TLS_H

#include <stddef.h>

/* TLS versions offered (GnuTLS priority string): 1.2 and 1.3 only
 * (RFC 8996 retires 1.0 and 1.1). */
#define SRV_TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

/* The PEM text of a certificate chain (leaf first) and its private key,
 * NUL-terminated, malloc'd; both NULL when TLS is off. */
typedef struct {
    char *cert_pem;
    char *key_pem;
} srv_tls_keys;

/* Read cert_path and key_path (PEM, the key unencrypted) into keys and
 * check that GnuTLS accepts the pair (the key matches the leaf
 * certificate). Returns 0; or -1 after writing why into err (cap bytes,
 * naming the file; never key material): a file that cannot be read, is
 * empty or larger than 1 MiB, or a pair GnuTLS rejects (its message
 * included). warn (cap bytes) receives a warning, or "" when there is none:
 * the leaf certificate has expired or is not yet valid. */
int srv_tls_load(srv_tls_keys *keys, const char *cert_path,
                 const char *key_path, char *err, char *warn, size_t cap);

/* Wipe the key and free both; the struct is left zeroed. Safe when
 * nothing was loaded. */
void srv_tls_keys_free(srv_tls_keys *keys);

/* Over the connected socket fd (non-blocking): TLS handshake without
 * certificate verification (the probe asks its own server on a loopback
 * or local address whether it is alive, not who it is), send request[0 ..
 * n), read up to want bytes of the answer into reply. Gives up at
 * deadline_ms (CLOCK_MONOTONIC milliseconds). Returns the bytes read (>=
 * 0; fewer than want when the peer closed first), or -1 when the handshake
 * or a transfer failed. Does not close fd. */
long srv_tls_probe(int fd, const char *request, size_t n, char *reply,
                   size_t want, long long deadline_ms);

#endif /* SRV_TLS_H */
