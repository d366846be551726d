/*
 * request_id.h — the X-Request-Id of each request: the client's value when
 * it is a sane token, else a fresh 16-hex-digit id unique within the process.
 */
#ifndef SRV_REQUEST_ID_H
#define SRV_REQUEST_ID_H

#include <stddef.h>

/* Longest client id echoed, bytes; longer ones are replaced. */
#define SRV_REQUEST_ID_MAX 128

/* Seed the generator from getrandom(2) (the clock if that fails). Call once
 * before any thread calls srv_request_id_make. */
void srv_request_id_init(void);

/* Write the id for a request into out (at least SRV_REQUEST_ID_MAX + 1
 * bytes): client (may be NULL) when it is 1..SRV_REQUEST_ID_MAX bytes of
 * visible ASCII ('!'..'~'), else 16 lowercase hex digits. Generated ids are
 * a bijective mix of an atomic counter with a random key, so they never
 * repeat within a process (2^64 ids) and do not reveal the request count.
 * Thread-safe. */
void srv_request_id_make(char *out, const char *client);

#endif /* SRV_REQUEST_ID_H */
