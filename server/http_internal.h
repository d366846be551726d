/*
 * http_internal.h — one request's state in the daemon and the steps that
 * server/http*.c share (nothing else includes this): http.c keeps the
 * daemon and libmicrohttpd's callbacks, http_head.c decides on the
 * request line and headers, http_body.c takes the body in (buffer,
 * budget, an address's share), http_compute.c runs a request on the
 * compute threads, and http_answer.c hands answers to libmicrohttpd.
 */
#ifndef SRV_HTTP_INTERNAL_H
#define SRV_HTTP_INTERNAL_H

#include <microhttpd.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "api.h"
#include "compute_pool.h"
#include "conn_slots.h"
#include "gate.h"
#include "gzip.h"
#include "refusals.h"
#include "request_id.h"

typedef struct srv_http srv_http; /* http.h */

/* libmicrohttpd's per-connection arena holds the request line, the header
 * block and the read buffer; it must fit a request at both limits of
 * http.h so that their 414/431 come from here, with our headers and
 * problem+json (larger ones still get libmicrohttpd's own 414/431). */
#define CONNECTION_MEMORY_BYTES (64 * 1024)
#define CONNECTION_LIMIT_MAX 1024
#define LISTEN_BACKLOG 1024
#define LOG_PATH_MAX 1024 /* bytes of the path kept for the access line */
#define DISCARD_FACTOR 4  /* see srv_http_on_body */
/* Bytes per read of an answer handed over piece by piece: the buffer
 * libmicrohttpd holds for each such answer, and the most printed (or
 * copied) in one call on an HTTP thread, about half a millisecond */
#define STREAM_BLOCK (64u * 1024)
#define GZIP_PIECE (32u * 1024) /* compressed bytes per read: about 1 ms */
/* Answers from this size are handed to libmicrohttpd a piece at a time,
 * so that a reader slower than --min-response-rate is seen; smaller ones
 * fit the socket's buffers whole and hold nothing of ours. */
#define WATCHED_ANSWER_BYTES (64u * 1024)
#define FORWARDED_FOR_MAX 8    /* X-Forwarded-For header lines read */
#define COMPUTE_QUEUE_MAX 128  /* requests waiting for a compute thread */
#define INLINE_BODY_BYTES 2048 /* see srv_http_where_to_run */
#define INLINE_WORK_MAX ((uint64_t)1 << 20) /* see srv_http_where_to_run */
/* a body beyond this is no click: its job runs in the bulk lane */
#define BULK_BODY_BYTES ((size_t)1 << 20)
/* The access log's and the metrics' status of a request whose client
 * left before its srv_http_answer (nginx's 499 "client closed request") */
#define SRV_STATUS_CLIENT_CLOSED 499

struct srv_http {
    struct MHD_Daemon *daemon;
    api_limits limits;
    unsigned port;
    MHD_socket quiesced_fd; /* listening socket after quiesce, else -1 */
    atomic_uint in_flight;  /* requests from their first byte: the drain */
    /* requests whose head is complete: what --max-connections caps, so
     * that half-sent heads (held by the connection share and the header
     * deadline) never take the class's places */
    atomic_uint admitted;
    /* 0 while starting: libmicrohttpd's messages are then real errors */
    atomic_int serving;
    /* 1 once draining: every answer closes its connection, so that no
     * client sends another request on it that the stop would cut off */
    atomic_int draining;
    atomic_int stopping;    /* 1 once the drain is over: queued jobs not run */
    srv_gate *gate;         /* borrowed; NULL: every request passes */
    srv_conn_slots *slots;  /* connections per peer address */
    srv_compute_pool *pool; /* computes, off the HTTP threads */
    srv_conn_watch *watch;  /* header and body deadlines */
    srv_netlist trusted;    /* proxies whose X-Forwarded-For is believed */
};

/* Answers that the request line and headers decide on their own. */
typedef enum {
    EARLY_NONE = 0,
    EARLY_URI_TOO_LONG,
    EARLY_HEADERS_TOO_LARGE,
    EARLY_BAD_FRAMING,
    EARLY_CODING_UNKNOWN,
    EARLY_PREFLIGHT
} early_answer;

/* Room for a content coding's name in a 415's detail. */
#define SRV_CODING_MAX 48

/* Room for Inference-Header-Content-Length's value(s): a length has at
 * most 20 digits; more is cut, and refused as not a length anyway. */
#define SRV_HEADER_LENGTH_MAX 64

typedef struct {
    srv_http *srv;
    struct timespec start;
    char *query;         /* raw query string, without '?'; NULL when absent */
    size_t uri_len;      /* bytes of the request target */
    int nul_in_path;     /* the target's path holds %00 (a NUL byte) */
    const char *raw_uri; /* the target in the head, as received */
    char coding[SRV_CODING_MAX]; /* a Content-Encoding attnd cannot decode,
                                    or "" */
    /* every Inference-Header-Content-Length line, joined with ", " (RFC
     * 9110 section 5.3): two of them are not a length, so a body that two
     * readers could split differently is refused */
    char header_length[SRV_HEADER_LENGTH_MAX];
    int header_lengths; /* how many lines */
    int started;        /* on_request has seen the headers */
    int has_body;       /* Content-Length > 0, or chunked */
    early_answer early; /* decided from the headers alone */
    int answered;       /* a response is queued */
    const char *route;  /* the answer's route template, for metrics */
    char method[16];
    char path[LOG_PATH_MAX + 1];
    char request_id[SRV_REQUEST_ID_MAX + 1];
    char *body;
    size_t body_len, body_cap;
    int body_mapped; /* body is a body_map of body_cap bytes, not malloc'd */
    unsigned long long body_seen; /* body bytes received, kept or not */
    int overflow;                 /* body_seen outgrew max_body_bytes */
    int status;          /* for the access line; 0 = no answer from us */
    size_t bytes;        /* response body bytes sent (0 for HEAD) */
    api_stream *stream;  /* a body printed as it is sent, or NULL */
    srv_gzip_stream *gz; /* compressing the answer as it is sent */
    char *plain;         /* the whole answer gz compresses, or NULL */
    size_t plain_len, plain_pos;
    srv_gate_verdict refused; /* the gate's refusal, or SRV_GATE_PASS */
    srv_refusal refusal;      /* why it was refused, for the log and
                                 attnd_refused_total (refusals.h) */
    char client[48];          /* the client's address as text, or "" */
    const char *token;        /* the label of the token it showed (auth.h),
                                 or NULL */
    const char *gate_route;   /* the route template the gate ruled on */
    int grader;               /* 1: it showed a grader's token */
    unsigned retry_after_s;   /* Retry-After of that refusal */
    srv_rl_ticket ticket;     /* the client's place, released at the end */
    /* handed to the compute pool while the connection is suspended */
    struct MHD_Connection *conn;
    api_request job_request;
    api_response job_response;
    atomic_int computed;  /* 1: job_response is the answer */
    srv_watched *watched; /* its connection's deadlines (conn_watch.h) */
    /* memory budget reservations (api.h): the body's buffer, and the
     * answers queued, held until they are sent; both are counted to the
     * peer's address as well (conn_slots.h), which peer holds */
    uint64_t body_charged, answer_charged;
    struct sockaddr_storage peer;
    int has_peer;
    /* job_response's reservation, counted to the address as soon as the
     * pool has answered (srv_http_answer() then takes it over) */
    uint64_t job_counted;
    int budget_refusal;  /* API_BUDGET_* of a chunked body that outgrew it */
    uint64_t share_held; /* what its address held, for BODY_OVER_SHARE */
    int close_after;     /* the framing is faulty though readable: close */
    int closing_early;   /* answered before its body was read: close gently */
    int abandoned;       /* its client left before its answer: 499 */
    int gzip_wanted;     /* its client takes gzip (a job's answer) */
    int counted;         /* counted in srv->admitted */
    int job_gzipped;     /* job_response's body is compressed already */
} srv_request;

/* An answer this large is more than a heap keeps free for the next
 * request (KEEP_FREE_BYTES, server/main.c): once it is freed, the heaps
 * give their free pages back to the system (malloc_trim), so that an
 * idle process does not stay at the peak of one large answer. */
#define TRIM_AFTER_BYTES ((uint64_t)256 << 20)

/* The X-Forwarded-For lines of a request, in the order they arrived; past
 * FORWARDED_FOR_MAX the last ones (the nearest hops) are kept. */
typedef struct {
    const char *value[FORWARDED_FOR_MAX];
    size_t n;
} forwarded_for;

/* One client address may hold at most this fraction of the memory
 * budget in bodies and unsent answers, while more than half of the
 * budget is taken, before its next request or more of its body is
 * refused: a client that does not read its answers, or sends bodies
 * slowly, leaves the rest to the others (docs/contract.md, "Sharing one
 * server"); while half is free, no one needs it back. A request is
 * checked before it computes, so the requests of one address computing
 * at once may pass the share by their own answers. */
#define ADDRESS_SHARE_DIVISOR 4

/* r->budget_refusal of a body refused because its address holds its
 * share (besides API_BUDGET_NEVER and _BUSY) */
#define BODY_OVER_SHARE 3

/* Where a request is computed: on the HTTP thread when its route does
 * not compute, or when the work is bounded by a body of at most
 * INLINE_BODY_BYTES (at most ~1000 numbers: a few million multiply-adds,
 * about a millisecond), for which the hand-over would cost more than the
 * computing (about a fifth of the small dot's requests per second). Other
 * routes with such a body are tried on the HTTP thread with their work
 * bounded by INLINE_WORK_MAX estimated operations (a quarter of a
 * millisecond or less), and go to the compute pool when the route counts
 * more (a fit, a "cv" bandwidth, many hidden units) or when their memory
 * does not fit at once (api_request.inline_work_max): the hand-over was a
 * fifth of the small NW request's CPU time. Larger bodies go to the pool. */
enum { RUN_INLINE, RUN_TRY, RUN_POOL };

/* The request's places among those --max-connections and
 * --max-concurrent-per-client count are given back: once its answer is
 * made, or when it ends without one. An answer being sent holds memory,
 * which the budget and --min-response-rate bound, not a place: readers
 * that take their answers slowly cannot keep the class from computing. */
void srv_http_release_places(srv_request *r);

/* req filled from r and the connection for api_handle: method, path,
 * query, Content-Type, Accept, content coding, the v2 header's length,
 * the body so far and the limits. */
void srv_http_fill_api_request(api_request *req, srv_request *r,
                               struct MHD_Connection *conn, const char *url);

/* OPTIONS: a CORS preflight (Fetch standard), never behind a token. The
 * api names the route's methods (Allow) or answers 404 for an unknown
 * path; when it leaves OPTIONS to us, every method we serve is listed. */
enum MHD_Result srv_http_answer_preflight(srv_request *r,
                                          struct MHD_Connection *conn,
                                          const char *url, int close_conn);

/* The body's buffer for len bytes: on the heap, or from BODY_MAP_MIN on
 * in pages of its own (mapped); NULL when memory runs out. */
char *srv_http_body_alloc(srv_request *r, size_t len);

/* What the request's connection holds of the memory budget changed by
 * delta bytes: counted to its peer's address (conn_slots.h). */
void srv_http_address_holds(srv_request *r, int64_t delta);

/* The body's buffer given back, and what it held of the budget and of its
 * address's share. */
void srv_http_body_free(srv_request *r);

/* The 413 for a body that outgrew --max-body-bytes after body_seen bytes:
 * the api's own problem, with the connection closed after it. */
enum MHD_Result srv_http_answer_too_large(srv_request *r,
                                          struct MHD_Connection *conn,
                                          const char *url);

/* 1 when the request's address already holds more than its share of
 * the budget, its own body left out (*held and *share then set), and
 * more than half of the budget is taken; else 0, and always for an
 * exempt address (a trusted proxy), without a per-address limit
 * (--max-connections-per-address 0) or without a budget. */
int srv_http_over_address_share(srv_request *r, uint64_t *held,
                                uint64_t *share);

/* Append one piece of the body. Once it outgrows the limit (a chunked body:
 * a declared length was checked up front) the buffer is freed and the rest
 * is read and dropped: libmicrohttpd 0.9 can queue a response only before
 * the body or after all of it. A sender that keeps going past
 * DISCARD_FACTOR times the limit is cut off. */
enum MHD_Result srv_http_on_body(srv_request *r, const char *data, size_t n);

/* The request header name's value, or NULL. */
const char *srv_http_header(struct MHD_Connection *conn, const char *name);

/* MHD_KeyValueIterator: cls (a size_t) grows by each header's bytes. */
enum MHD_Result srv_http_add_header_bytes(void *cls, enum MHD_ValueKind kind,
                                          const char *key, const char *value);

/* Headers every response carries (docs/contract.md "Cross-origin use and
 * headers"). vary_accept and vary_encoding add Accept and Accept-Encoding to
 * Vary. Returns 0, -1 when one could not be added (out of memory). */
int srv_http_add_common_headers(struct MHD_Response *resp,
                                struct MHD_Connection *conn,
                                const srv_request *r, int vary_accept,
                                int vary_encoding);

/* Send res (its body is taken over and res->body set to NULL). With
 * close_conn the connection closes after the response, for answers given
 * before the request body was read. */
enum MHD_Result srv_http_answer(srv_request *r, struct MHD_Connection *conn,
                                api_response *res, int close_conn);

/* A problem+json answer made here, for limits the api never sees (the
 * request target and header block, the framing); written by the api. */
enum MHD_Result srv_http_answer_problem(srv_request *r,
                                        struct MHD_Connection *conn, int status,
                                        const char *detail, int close_conn);

/* Send the answer the headers decided (r->early). close_conn: the body
 * is still unread. */
enum MHD_Result srv_http_answer_early(srv_request *r,
                                      struct MHD_Connection *conn,
                                      const char *url, int close_conn);

/* The client of a request, as the per-client limits name it
 * (client_addr.h): the peer, or what trusted proxies recorded in
 * X-Forwarded-For. Returns 0, -1 when the peer is not IP. */
int srv_http_client_of(srv_http *srv, struct MHD_Connection *conn,
                       srv_addr *client);

/* MHD_KeyValueIterator: each X-Forwarded-For line into cls (a
 * forwarded_for), the last FORWARDED_FOR_MAX kept. */
enum MHD_Result srv_http_add_forwarded_for(void *cls, enum MHD_ValueKind kind,
                                           const char *key, const char *value);

/* Send the gate's refusal (r->refused). */
enum MHD_Result srv_http_answer_refusal(srv_request *r,
                                        struct MHD_Connection *conn,
                                        const char *url, int close_conn);

/* Headers are in. What they decide is answered at once when a body is on
 * its way (the client need not send it, and the connection then closes),
 * else on the last call, which keeps the connection open. */
enum MHD_Result srv_http_on_headers(srv_request *r, struct MHD_Connection *conn,
                                    const char *url, const char *method,
                                    const char *version);

/* RUN_INLINE, RUN_TRY or RUN_POOL for a request of the route's flags,
 * body_len and Accept: small requests run on the HTTP thread, the rest on
 * the compute threads. */
int srv_http_where_to_run(unsigned flags, size_t body_len, const char *accept);

/* A refusal (api_refuse) answered here, for a request the api has not
 * seen: status 503 overloaded (with Retry-After 1) or 413, and detail;
 * reason names it in the log and the metrics (a 413 is no refusal of
 * capacity: SRV_REFUSED_NONE). */
enum MHD_Result srv_http_answer_refused(srv_request *r,
                                        struct MHD_Connection *conn,
                                        const char *url, int status,
                                        srv_refusal reason, const char *detail,
                                        int close_conn);

/* The body of `bytes` bytes finds no room in the memory budget (room:
 * API_BUDGET_NEVER or _BUSY). */
enum MHD_Result srv_http_answer_no_room(srv_request *r,
                                        struct MHD_Connection *conn,
                                        const char *url, int room,
                                        uint64_t bytes, int close_conn);

/* Suspend the connection and queue its request to the compute pool, in
 * its client's lane (the pool serves the clients in turn); a full queue
 * is 503 overloaded at once. */
enum MHD_Result srv_http_compute_off_thread(srv_request *r,
                                            struct MHD_Connection *conn,
                                            const char *url);

/* An identical request's answer kept (api_answer_ready) sent at once,
 * without parsing or queueing; else srv_http_compute_off_thread. */
enum MHD_Result srv_http_answer_kept_or_queue(srv_request *r,
                                              struct MHD_Connection *conn,
                                              const char *url);

/* The pool's answer, sent from the HTTP thread after the resume. */
enum MHD_Result srv_http_answer_computed(srv_request *r,
                                         struct MHD_Connection *conn);

#endif /* SRV_HTTP_INTERNAL_H */
