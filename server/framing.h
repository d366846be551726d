/*
 * framing.h — RFC 9112's rules on a request head that decide where the
 * message ends, checked before any byte of the body is read.
 *
 * A request whose end two parties could find in different places lets a
 * second request hide inside the first (request smuggling): a proxy in
 * front reads one message, attnd another. So every ambiguous head is
 * refused with 400 and its connection closed (docs/contract.md section 1,
 * "HTTP behaviour"; RFC 9112 sections 3.2, 5.1, 6.1–6.3):
 *   - a field name with whitespace or another character that is not a
 *     token character ("Transfer-Encoding : chunked");
 *   - Transfer-Encoding together with Content-Length;
 *   - Transfer-Encoding more than once;
 *   - a Content-Length that is not one decimal number (a list, a sign,
 *     letters, empty, an obs-fold's leftovers), or repeated with differing
 *     values;
 *   - HTTP/1.1 without exactly one Host, or a Host that is not a host
 *     name or address with an optional :port ("bad host").
 * And an absolute-form target is routed by its path.
 * What libmicrohttpd answers itself before attnd sees the head is listed
 * in docs/operations.md.
 */
#ifndef SRV_FRAMING_H
#define SRV_FRAMING_H

#include <stddef.h>

/* The framing of a request head, read one header line at a time. */
typedef struct {
    const char *detail; /* why it is refused (400), or NULL when it is not */
    int has_length;     /* a valid Content-Length was given */
    unsigned long long length;      /* its value (saturated at 2^64 - 1) */
    size_t lengths, codings, hosts; /* lines of each seen */
} srv_framing;

/* Start checking a head. */
void srv_framing_init(srv_framing *f);

/* One header line as received (NUL-terminated name and value; a NULL
 * value counts as empty). The first broken rule is kept in f->detail. */
void srv_framing_add(srv_framing *f, const char *name, const char *value);

/* The rules about the whole head, for HTTP version `version` ("HTTP/1.1";
 * NULL counts as 1.1). Afterwards f->detail, when not NULL, is a static
 * string naming the rule and its RFC section. */
void srv_framing_finish(srv_framing *f, const char *version);

/* Whether the first len bytes of a request target (its path) hold the
 * escape %00: decoded, it would cut the path short ("/openapi.json%00.html"
 * would be served as "/openapi.json"). */
int srv_framing_path_has_nul(const char *target, size_t len);

/* The detail for a request head that hides bytes behind a NUL. */
#define SRV_FRAMING_NUL_IN_HEAD                                                \
    "the request line or a header value holds a NUL byte (RFC 9110 section "   \
    "5.5, RFC 9112 section 3)"

/* Where a part of the head lies: [start, start + len). */
typedef struct {
    const char *start;
    size_t len;
} srv_span;

/* Whether the head head[0 .. size) hides bytes behind a NUL. libmicrohttpd
 * keeps a head in its read buffer and cuts each part (method, target,
 * version, each name and value) at its first NUL, writing NULs over the
 * separators and line ends; so every byte of the head outside the parts
 * it read (spans[0 .. n)) is a NUL, CR, LF, SP, HT or ':' unless a part
 * went on past a NUL ("Content-Length: 2" NUL " 53"). Returns 0 when some
 * span lies outside the head (a folded line's value is copied
 * elsewhere): nothing can be told then. */
int srv_framing_head_hides(const char *head, size_t size, const srv_span *spans,
                           size_t n);

/* Whether the request line holds a NUL byte that libmicrohttpd reads past
 * or cuts a part at ("GET /healthz" NUL " HTTP/1.1" reaches attnd as
 * "/healthz"). In its read buffer libmicrohttpd writes one NUL over the SP
 * after the method and one over the SP before the version, and one or two
 * over the line end; so the method's end, the target (target_len bytes, as
 * strlen gives them) and the version must follow each other with exactly
 * those, blanks after the method aside, and no more than two NULs may lie
 * between the version's end and next_line, the nearest header name (NULL
 * when there is none: then the line's end is not checked; nor is a NUL
 * just before a bare LF, which reads as CR LF). method, target
 * and version are the pointers libmicrohttpd gives; when they do not lie
 * in this order in one buffer, nothing can be told and 0 is returned. */
int srv_framing_request_line_nul(const char *method, const char *target,
                                 size_t target_len, const char *version,
                                 const char *next_line);

/* The path of a request target: itself in origin form ("/attention/dot"),
 * the path of an absolute-form target ("http://host:8080/attention/dot"
 * -> "/attention/dot"; "http://host" -> "/"), which a server must accept
 * (RFC 9112 section 3.2.2). A pointer into target, or a static "/". */
const char *srv_framing_target_path(const char *target);

#endif /* SRV_FRAMING_H */
