/*
 * gzip.h — response compression: Accept-Encoding negotiation (RFC 9110
 * section 12.5.3) and gzip framing (RFC 1952) through zlib at a fast level.
 */
#ifndef SRV_GZIP_H
#define SRV_GZIP_H

#include <stddef.h>
#include <sys/types.h>

/* Bodies shorter than this (bytes) are sent as they are, by default
 * (--gzip-min-bytes). */
#define SRV_GZIP_MIN_BYTES 1024

/* Compress bodies of at least min_bytes from now on; 0 turns compression
 * off. Call before serving (the default is SRV_GZIP_MIN_BYTES). */
void srv_gzip_set_min_bytes(size_t min_bytes);

/* 1 when a body of len bytes is compressed for a client that accepts
 * gzip, and so when its answer varies with Accept-Encoding. */
int srv_gzip_eligible(size_t len);

/* 1 when the Accept-Encoding value (NULL when absent) accepts gzip: "gzip"
 * or "x-gzip" listed with q > 0, or "*" with q > 0 and gzip not listed;
 * "gzip;q=0" refuses it. Case-insensitive; malformed members are skipped. */
int srv_gzip_accepted(const char *accept_encoding);

/* Compress in[0 .. len) at zlib level 1 into a new malloc'd buffer *out of
 * *out_len bytes, owned by the caller (free()). Returns 0, or -1 (nothing
 * allocated) when memory runs out or the result is not smaller than in. */
int srv_gzip_compress(char **out, size_t *out_len, const char *in, size_t len);

/* As srv_gzip_compress, for a document that is the same bytes every time
 * (api.h, API_ROUTE_STATIC), named by `key` (its route's name, a static
 * string compared by address): the first answer is compressed and kept,
 * later ones get a copy of what was kept, so that loading the lab page
 * costs a copy, not a compression (a room of 300 loads it at once). Bytes
 * other than the ones kept under key are compressed each time. */
int srv_gzip_kept(const char *key, char **out, size_t *out_len, const char *in,
                  size_t len);

/* Answers from this many bytes are compressed as they are sent
 * (srv_gzip_stream), not whole: a whole copy would double what a large
 * answer holds, and compressing it would hold an HTTP thread for seconds
 * (a 350 MB answer: 4 s). Below it they are compressed whole and keep
 * their Content-Length. */
#define SRV_GZIP_WHOLE_MAX ((size_t)1 << 20)

/* Where a stream's plain bytes come from: the next at most max of them
 * into dst; returns how many (> 0), 0 at the end, -1 on an error. */
typedef ssize_t (*srv_gzip_source)(void *ctx, char *dst, size_t max);

typedef struct srv_gzip_stream srv_gzip_stream;
/* What one stream holds, about: zlib's state at level 1 (a 32 KiB window
 * and hash tables, 256 KiB) and 64 KiB of plain input, rounded up; the
 * server reserves it in the memory budget before it starts one. */
#define SRV_GZIP_STREAM_BYTES ((size_t)384 << 10)

/* A gzip stream over source (level 1, RFC 1952 framing). NULL when memory
 * runs out. */
srv_gzip_stream *srv_gzip_stream_new(srv_gzip_source source, void *ctx);

/* The next compressed bytes, at most max of them, into dst: how many
 * (> 0), 0 once the stream has ended, -1 on an error of the source or of
 * zlib. One call reads at most 64 KiB from the source, so that its work
 * is bounded in plain bytes, however well they compress (a sync flush
 * then gives what deflate holds). */
ssize_t srv_gzip_stream_read(srv_gzip_stream *z, char *dst, size_t max);

/* NULL is fine. */
void srv_gzip_stream_free(srv_gzip_stream *z);

#endif /* SRV_GZIP_H */
