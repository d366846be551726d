/*
 * log.h — attnd's stderr log: one access line per request (text or JSON
 * lines) and the occasional operational message. Each line is written with a
 * single write(2), so lines from concurrent workers never interleave.
 */
#ifndef SRV_LOG_H
#define SRV_LOG_H

#include <stddef.h>

#include "options.h"

/* One finished request. Strings are borrowed; path may hold any bytes. */
typedef struct {
    const char *request_id;
    const char *method;
    const char *path;
    int status;
    size_t bytes;       /* response body length, bytes */
    double duration_ms; /* from the first header callback to completion */
    /* who: the client's address (the peer, or what trusted proxies
     * recorded: client_addr.h), NULL: unknown; the label of the token it
     * showed (auth.h), NULL: none. Never the token itself. */
    const char *client;
    const char *token;
    /* the refusal's reason (refusals.h), NULL: not refused; for a line
     * about connections, how many it stands for (0 counts as 1) */
    const char *refused;
    unsigned long long refused_count;
} srv_access;

/* Choose the access log format; call once before serving. */
void srv_log_init(srv_log_format format);

/* Write one access line: text
 *   2025-01-31T12:00:00.123Z 0a1b2c3d4e5f6071 POST /attention/dot 200
 * 812B 1.234ms 192.0.2.7 ta-alice
 * ("-" for an unknown client or no token; a refusal adds
 * " refused=rate_limited", and a line standing for several connections
 * " refused=connections_closed x12") or JSON
 *   {"time":"...","request_id":"...","method":"POST","path":"/attention/dot",
 *    "status":200,"bytes":812,"duration_ms":1.234,"client":"192.0.2.7",
 *    "token":"ta-alice"}
 * (client and token null when unknown or none; "refused" and, for
 * several connections, "refused_count" when refused).
 * Bytes outside printable ASCII are escaped (\xHH in text; JSON escapes, with
 * U+FFFD for invalid UTF-8). */
void srv_log_access(const srv_access *rec);

/* ms with three decimals, rounded to the nearest microsecond (the text of
 * "%.3f" but perhaps at a tie), into buf (SRV_MS_TEXT_MAX bytes), without
 * printf's floating-point path, which cost a small request more than the
 * rest of its log line; a negative or non-finite ms is printf's. Returns
 * the length. */
#define SRV_MS_TEXT_MAX 32
size_t srv_format_ms(char *buf, double ms);

/* Write one message line: the message itself for level "info", else
 * "attnd: <level>: <message>"; in json mode {"time","level","msg"}.
 * Never fails; over-long messages are cut. */
void srv_log_message(const char *level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#endif /* SRV_LOG_H */
