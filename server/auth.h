/*
 * auth.h — bearer-token authentication (RFC 6750): a request is allowed
 * when its Authorization header carries one of the tokens listed in a file.
 *
 * Only the SHA-256 digests of the tokens are kept in memory, and a
 * presented token is hashed and compared with every digest in constant
 * time, so neither the comparison's duration nor a memory dump reveals a
 * token. Tokens never appear in log lines or error messages.
 */
#ifndef SRV_AUTH_H
#define SRV_AUTH_H

#include <stddef.h>

typedef struct srv_auth srv_auth;

/* Longest token accepted in the file, bytes. */
#define SRV_AUTH_TOKEN_MAX 4096

/* What the Authorization header amounted to. */
typedef enum {
    SRV_AUTH_OK = 0,       /* a listed token */
    SRV_AUTH_MISSING,      /* no header, another scheme, or no token */
    SRV_AUTH_INVALID_TOKEN /* a bearer token that is not listed */
} srv_auth_result;

/* Longest label of a token, bytes. */
#define SRV_AUTH_LABEL_MAX 32

/* Read the tokens from path: one per line, optionally after a label and
 * blanks ("ta-alice 3q2+7w..."), which the access log names instead of
 * the token (unlabelled: "token1", "token2", ... in file order); leading
 * and trailing blanks (and a CR) are trimmed; blank lines and lines
 * starting with '#' are ignored. A label is 1..SRV_AUTH_LABEL_MAX
 * letters, digits, '-', '.', '_' or '@'. A token is 1..SRV_AUTH_TOKEN_MAX bytes
 * of RFC 6750's b64token alphabet (letters, digits, "-._~+/", then '=' padding
 * only at the end). Returns the authenticator (free with srv_auth_free), or
 * NULL after writing why into err (cap bytes; names the file and the line
 * number, never the line): unreadable file, no token in it, a malformed or
 * over-long line, or out of memory. */
srv_auth *srv_auth_load(const char *path, char *err, size_t cap);

/* Tokens loaded. */
size_t srv_auth_count(const srv_auth *auth);

/* Check an Authorization header value (NULL when absent): the scheme
 * "Bearer" (case-insensitive), one or more spaces, the token, optional
 * trailing blanks. On SRV_AUTH_OK, *label (label may be NULL) is the
 * token's label, owned by auth; else NULL. Thread-safe; the time taken
 * does not depend on which listed token, if any, matches, nor on how much
 * of one does. */
srv_auth_result srv_auth_check(const srv_auth *auth, const char *authorization,
                               const char **label);

/* Wipe and free; NULL is ignored. */
void srv_auth_free(srv_auth *auth);

#endif /* SRV_AUTH_H */
