/*
 * http.c — the libmicrohttpd glue. Per-request state lives in one
 * srv_request, created when the request line arrives (URI log callback),
 * filled while the body streams in, and freed when libmicrohttpd reports the
 * request complete, which is also when the access line is written.
 *
 * Request flow in on_request:
 *   1. first call (headers only): request target and header block limits,
 *      CORS preflight, then api_precheck, and for a known route and method
 *      the gate (429, 401, 503: gate.h), so that 404/405, the gate's
 *      refusals, 415 and 413 by Content-Length are answered in that order
 *      before any body byte (and instead of "100 Continue"), closing the
 *      connection; without a body these answers wait for step 3 and the
 *      connection stays open;
 *   2. body calls: append; a chunked body that outgrows --max-body-bytes
 *      is dropped from then on (libmicrohttpd 0.9 cannot answer mid-body);
 *   3. last call: the 413 for such a body (closing), or api_handle and
 *      answer().
 */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "compute_pool.h"
#include "conn_slots.h"
#include "conn_watch.h"
#include "cors.h"
#include "csp.h"
#include "framing.h"
#include "front.h"
#include "gate.h"
#include "gzip.h"
#include "log.h"
#include "metrics.h"
#include "problem.h"
#include "request_id.h"
#include "tls.h"

/* libmicrohttpd's per-connection arena holds the request line, the header
 * block and the read buffer; it must fit a request at both limits of
 * http.h so that their 414/431 come from here, with our headers and
 * problem+json (larger ones still get libmicrohttpd's own 414/431). */
#define CONNECTION_MEMORY_BYTES (64 * 1024)
#define CONNECTION_LIMIT_MAX 1024
#define LISTEN_BACKLOG 1024
#define LOG_PATH_MAX 1024 /* bytes of the path kept for the access line */
#define DISCARD_FACTOR 4  /* see on_body */
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
#define INLINE_BODY_BYTES 2048 /* see where_to_run */
#define INLINE_WORK_MAX ((uint64_t)1 << 20) /* see where_to_run */
/* The access log's and the metrics' status of a request whose client
 * left before its answer (nginx's 499 "client closed request") */
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
    const char *gate_route;   /* the route template the gate ruled on */
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
     * pool has answered (answer() then takes it over) */
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

static double elapsed_ms(const struct timespec *since) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - since->tv_sec) * 1e3 +
           (double)(now.tv_nsec - since->tv_nsec) / 1e6;
}

static srv_request *request_new(srv_http *srv, const char *uri) {
    srv_request *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->srv = srv;
    r->ticket.slot = UINT32_MAX;
    clock_gettime(CLOCK_MONOTONIC, &r->start);
    if (uri != NULL) {
        r->uri_len = strlen(uri);
        r->raw_uri = uri;
        const char *q = strchr(uri, '?');
        r->nul_in_path =
            srv_framing_path_has_nul(uri, q ? (size_t)(q - uri) : r->uri_len);
        if (q != NULL) {
            r->query = strdup(q + 1);
            if (r->query == NULL) {
                free(r);
                return NULL;
            }
        }
    }
    atomic_fetch_add(&srv->in_flight, 1);
    srv_metrics_request_started();
    return r;
}

/* A body from BODY_MAP_MIN bytes gets pages of its own, so that freeing it once
 * it is parsed gives the memory back at once instead of leaving a hole in the
 * heap, which keeps freed memory (main.c) and could not fit the larger buffers
 * that follow: a large request's peak memory is then its tensors, not its text
 * plus its tensors. */
#define BODY_MAP_MIN ((size_t)1 << 20)
/* Past its first HUGE_PAGE bytes, such a body goes on in huge pages
 * (transparent huge pages, where the kernel offers them on request),
 * aligned to their size: fresh pages must be faulted in and zeroed, and a
 * 7.7 MB body then takes 4 faults instead of 1,900 (6 ms on a virtual
 * machine measured here, against 1.5 ms). Its first HUGE_PAGE bytes stay
 * in small pages, so that a body is charged as its bytes arrive, at
 * SMALL_PAGE grain (two bytes of a body reserve a page, not 2 MiB); from
 * HUGE_PAGE bytes on, each huge page is charged whole once its first byte
 * arrives, which is at most as much again as the sender has sent. */
#define HUGE_PAGE ((size_t)2 << 20)
#define SMALL_PAGE ((size_t)4 << 10)

/* Bytes mapped for a body of len bytes. */
static size_t body_map_len(size_t len) {
    return (len + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
}

/* Bytes of the memory budget a body holds once `received` bytes are in
 * (mapped: whether it lies in pages of its own; cap: its heap buffer). */
static size_t body_charge(size_t received, int mapped, size_t cap) {
    size_t small = (received + SMALL_PAGE - 1) / SMALL_PAGE * SMALL_PAGE;
    if (!mapped)
        return small < cap ? small : cap;
    return received <= HUGE_PAGE ? small : body_map_len(received);
}

/* body_map_len(len) bytes at a HUGE_PAGE boundary, or MAP_FAILED; huge
 * pages past the first HUGE_PAGE bytes. */
static void *body_map(size_t len) {
    size_t n = body_map_len(len);
    char *p = mmap(NULL, n + HUGE_PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return MAP_FAILED;
    size_t head = (HUGE_PAGE - (uintptr_t)p % HUGE_PAGE) % HUGE_PAGE;
    if (head)
        munmap(p, head);
    munmap(p + head + n, HUGE_PAGE - head);
    /* advice: without it, small pages; the first stay small whatever the
     * system's default (body_charge) */
    madvise(p + head, HUGE_PAGE, MADV_NOHUGEPAGE);
    if (n > HUGE_PAGE)
        madvise(p + head + HUGE_PAGE, n - HUGE_PAGE, MADV_HUGEPAGE);
    return p + head;
}

static char *body_alloc(srv_request *r, size_t len) {
    if (len >= BODY_MAP_MIN) {
        void *p = body_map(len);
        r->body_mapped = p != MAP_FAILED;
        return p == MAP_FAILED ? NULL : p;
    }
    r->body_mapped = 0;
    return malloc(len);
}

/* A chunked body's buffer, grown to cap bytes (contents kept): on the
 * heap while small, in pages of its own from BODY_MAP_MIN on, like a body
 * of a declared length. NULL when memory runs out (the old one stays). */
static char *body_grow(srv_request *r, size_t cap) {
    if (cap < BODY_MAP_MIN)
        return realloc(r->body, cap);
    void *p;
    if (r->body_mapped) {
        /* one mapping while its first HUGE_PAGE bytes are all it has
         * (body_map), which then grows in small pages; else moved */
        p = mremap(r->body, body_map_len(r->body_cap), body_map_len(cap),
                   MREMAP_MAYMOVE);
        if (p == MAP_FAILED && (p = body_map(cap)) != MAP_FAILED) {
            memcpy(p, r->body, r->body_len);
            munmap(r->body, body_map_len(r->body_cap));
        }
    } else {
        p = body_map(cap);
        if (p != MAP_FAILED) {
            if (r->body_len)
                memcpy(p, r->body, r->body_len);
            free(r->body);
            r->body_mapped = 1;
        }
    }
    return p == MAP_FAILED ? NULL : p;
}

/* What the request's connection holds of the memory budget changed by
 * delta bytes: counted to its peer's address (conn_slots.h). */
static void address_holds(srv_request *r, int64_t delta) {
    if (r->has_peer)
        srv_conn_slots_add_bytes(r->srv->slots,
                                 (const struct sockaddr *)&r->peer, delta);
}

static void body_free(srv_request *r) {
    api_budget_give(r->body_charged);
    address_holds(r, -(int64_t)r->body_charged);
    r->body_charged = 0;
    if (r->body_mapped)
        munmap(r->body, body_map_len(r->body_cap));
    else
        free(r->body);
    r->body = NULL;
    r->body_len = r->body_cap = 0;
    r->body_mapped = 0;
}

/* An answer this large is more than a heap keeps free for the next
 * request (KEEP_FREE_BYTES, server/main.c): once it is freed, the heaps
 * give their free pages back to the system (malloc_trim), so that an
 * idle process does not stay at the peak of one large answer. */
#define TRIM_AFTER_BYTES ((uint64_t)256 << 20)

/* The request's places among those --max-connections and
 * --max-concurrent-per-client count are given back: once its answer is
 * made, or when it ends without one. An answer being sent holds memory,
 * which the budget and --min-response-rate bound, not a place: readers
 * that take their answers slowly cannot keep the class from computing. */
static void release_places(srv_request *r) {
    srv_gate_release(r->srv->gate, &r->ticket);
    r->ticket.slot = UINT32_MAX;
    if (r->counted)
        atomic_fetch_sub(&r->srv->admitted, 1);
    r->counted = 0;
}

static void request_free(srv_request *r) {
    int trim = r->answer_charged >= TRIM_AFTER_BYTES;
    release_places(r);
    atomic_fetch_sub(&r->srv->in_flight, 1);
    free(r->query);
    body_free(r);
    api_stream_free(r->stream);
    srv_gzip_stream_free(r->gz);
    free(r->plain);
    api_budget_give(r->answer_charged);
    address_holds(r, -(int64_t)(r->answer_charged + r->job_counted));
    /* a computed answer never sent: the connection closed after the pool
     * resumed it (a stop, or the client gone) */
    api_response_free(&r->job_response);
    free(r);
    if (trim)
        malloc_trim(0);
}

/* MHD_OPTION_URI_LOG_CALLBACK: the raw request target, before the path is
 * decoded and the query split off; its result becomes the request state. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn) {
    (void)conn;
    return request_new(cls, uri);
}

/* MHD_OPTION_NOTIFY_COMPLETED: the response is sent (or the connection
 * died); write the access line and free the state. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)cls;
    (void)toe;
    srv_request *r = *con_cls;
    if (r == NULL)
        return;
    *con_cls = NULL;
    /* answered before its body was read: no reset ahead of the answer */
    if (r->closing_early) {
        const union MHD_ConnectionInfo *fd =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        if (fd != NULL)
            srv_conn_watch_linger(r->srv->watch, fd->connect_fd);
    }
    /* the watcher's 408 is this request's answer */
    int cut = srv_conn_watch_answered(r->watched);
    if (r->status == 0 && cut) {
        r->status = cut;
        if (r->route == NULL && r->path[0])
            r->route = api_route_of_path(r->path);
    }
    /* nginx's 499: the client closed the connection before the answer */
    if (r->abandoned) {
        r->status = SRV_STATUS_CLIENT_CLOSED;
        if (r->route == NULL && r->path[0])
            r->route = api_route_of_path(r->path);
    }
    srv_conn_watch_idle(r->watched); /* a kept-alive connection's next head */
    srv_access rec = {
        .request_id = r->request_id[0] ? r->request_id : "-",
        .method = r->method[0] ? r->method : "-",
        .path = r->path[0] ? r->path : "-",
        .status = r->status,
        .bytes = r->bytes,
        .duration_ms = elapsed_ms(&r->start),
    };
    srv_log_access(&rec);
    srv_metrics_sample sample = {
        .route = r->route,
        .method = r->method,
        .status = r->status,
        .request_bytes = r->body_seen,
        .response_bytes = r->bytes,
        .duration_s = rec.duration_ms / 1e3,
    };
    srv_metrics_request_finished(&sample);
    request_free(r);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
static void mhd_log(void *cls, const char *fmt, va_list ap) {
    srv_http *srv = cls;
    /* While serving, libmicrohttpd reports client behaviour (resets,
     * timeouts, malformed requests) that the access log already shows;
     * only start-up failures are ours to report. */
    if (atomic_load(&srv->serving))
        return;
    char msg[512];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    srv_log_message("error", "libmicrohttpd: %s", msg);
}

static const char *header(struct MHD_Connection *conn, const char *name) {
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

static enum MHD_Result add_header_bytes(void *cls, enum MHD_ValueKind kind,
                                        const char *key, const char *value) {
    (void)kind;
    size_t *sum = cls;
    *sum += strlen(key) + 2 + (value ? strlen(value) : 0) + 2;
    return MHD_YES;
}

/* Headers every response carries (docs/contract.md "Cross-origin use and
 * headers"). vary_accept and vary_encoding add Accept and Accept-Encoding to
 * Vary. Returns 0, -1 when one could not be added (out of memory). */
static int add_common_headers(struct MHD_Response *resp,
                              struct MHD_Connection *conn, const srv_request *r,
                              int vary_accept, int vary_encoding) {
    int vary_origin = 0;
    const char *allow_origin =
        srv_cors_allow_origin(header(conn, "Origin"), &vary_origin);
    char vary[64] = "";
    if (vary_origin)
        strcat(vary, "Origin");
    if (vary_accept)
        strcat(vary, vary[0] ? ", Accept" : "Accept");
    if (vary_encoding)
        strcat(vary, vary[0] ? ", Accept-Encoding" : "Accept-Encoding");
    int ok = 1;
    if (allow_origin != NULL)
        ok &= MHD_add_response_header(resp, "Access-Control-Allow-Origin",
                                      allow_origin) == MHD_YES;
    ok &= MHD_add_response_header(resp, "Access-Control-Expose-Headers",
                                  SRV_CORS_EXPOSE_HEADERS) == MHD_YES;
    if (vary[0])
        ok &= MHD_add_response_header(resp, "Vary", vary) == MHD_YES;
    ok &=
        MHD_add_response_header(resp, "X-Request-Id", r->request_id) == MHD_YES;
    ok &= MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff") ==
          MHD_YES;
    ok &= MHD_add_response_header(resp, "Cache-Control", "no-store") == MHD_YES;
    return ok ? 0 : -1;
}

/* MHD_ContentReaderCallback of a streamed answer: the next piece. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
    (void)pos;
    srv_request *r = cls;
    ssize_t n = api_stream_read(r->stream, buf, max);
    if (n > 0) {
        r->bytes += (size_t)n;
        return srv_conn_watch_sent(r->watched, (size_t)n) == 0
                   ? n
                   : MHD_CONTENT_READER_END_WITH_ERROR;
    }
    return n == 0 ? MHD_CONTENT_READER_END_OF_STREAM
                  : MHD_CONTENT_READER_END_WITH_ERROR;
}

/* srv_gzip_source of a compressed answer: its plain bytes, from the
 * stream or the whole body. */
static ssize_t gzip_source(void *cls, char *dst, size_t max) {
    srv_request *r = cls;
    if (r->stream != NULL)
        return api_stream_read(r->stream, dst, max);
    size_t n = r->plain_len - r->plain_pos;
    if (n > max)
        n = max;
    memcpy(dst, r->plain + r->plain_pos, n);
    r->plain_pos += n;
    return (ssize_t)n;
}

/* MHD_ContentReaderCallback of an answer compressed as it is sent. */
static ssize_t gzip_read(void *cls, uint64_t pos, char *buf, size_t max) {
    (void)pos;
    srv_request *r = cls;
    /* a small piece at a time: compressing runs on the HTTP thread, and
     * other connections on it (health probes) wait for each piece */
    if (max > GZIP_PIECE)
        max = GZIP_PIECE;
    ssize_t n = srv_gzip_stream_read(r->gz, buf, max);
    if (n > 0) {
        r->bytes += (size_t)n;
        return srv_conn_watch_sent(r->watched, (size_t)n) == 0
                   ? n
                   : MHD_CONTENT_READER_END_WITH_ERROR;
    }
    return n == 0 ? MHD_CONTENT_READER_END_OF_STREAM
                  : MHD_CONTENT_READER_END_WITH_ERROR;
}

/* MHD_ContentReaderCallback of an answer held whole (r->plain): handed
 * over a piece at a time, so that how fast its reader takes it is seen
 * (srv_conn_watch_sent). */
static ssize_t buffer_read(void *cls, uint64_t pos, char *buf, size_t max) {
    srv_request *r = cls;
    if (pos >= r->plain_len)
        return MHD_CONTENT_READER_END_OF_STREAM;
    size_t n = r->plain_len - (size_t)pos;
    if (n > max)
        n = max;
    memcpy(buf, r->plain + pos, n);
    r->bytes += n;
    return srv_conn_watch_sent(r->watched, n) == 0
               ? (ssize_t)n
               : MHD_CONTENT_READER_END_WITH_ERROR;
}

/* Send res (its body is taken over and res->body set to NULL). With
 * close_conn the connection closes after the response, for answers given
 * before the request body was read. */
static enum MHD_Result answer(srv_request *r, struct MHD_Connection *conn,
                              api_response *res, int close_conn) {
    if (srv_conn_watch_busy(r->watched) != 0)
        return MHD_NO; /* cut for being slow: it closes unanswered */
    /* the answer's reservation is held until the request is freed */
    r->answer_charged += res->charged;
    if (res == &r->job_response)
        r->job_counted = 0; /* counted to the address already */
    else
        address_holds(r, (int64_t)res->charged);
    res->charged = 0;
    char *body = res->body;
    size_t len = res->body_len;
    res->body = NULL;
    int streamed = res->stream != NULL;
    /* compressed on the compute thread that made it (compute_job) */
    int gzipped = res == &r->job_response && r->job_gzipped;
    /* raw tensor bytes hardly compress, and their length goes first */
    int vary_encoding =
        gzipped || (res->inference_header_length == 0 &&
                    srv_gzip_eligible(streamed ? SIZE_MAX : len));
    int wants_gzip = !gzipped && vary_encoding &&
                     srv_gzip_accepted(header(conn, "Accept-Encoding"));
    /* HEAD too, so that its Content-Length is the one GET would send */
    if (!streamed && wants_gzip && len < SRV_GZIP_WHOLE_MAX) {
        char *z;
        size_t zlen;
        if (srv_gzip_compress(&z, &zlen, body, len) == 0) {
            free(body);
            body = z;
            len = zlen;
            gzipped = 1;
        }
    } else if (wants_gzip &&
               api_budget_take(SRV_GZIP_STREAM_BYTES, 0) == API_BUDGET_OK) {
        /* large: compressed as it is sent, its state reserved first (else
         * the answer goes out as it is) */
        r->gz = srv_gzip_stream_new(gzip_source, r);
        gzipped = r->gz != NULL;
        if (gzipped) {
            r->answer_charged += SRV_GZIP_STREAM_BYTES;
            address_holds(r, SRV_GZIP_STREAM_BYTES);
        } else {
            api_budget_give(SRV_GZIP_STREAM_BYTES);
        }
    }
    struct MHD_Response *resp;
    if (streamed) { /* r owns the stream until on_completed */
        r->stream = res->stream;
        res->stream = NULL;
    }
    if (r->gz != NULL) {
        if (!streamed) { /* r owns the plain text until on_completed */
            r->plain = body;
            r->plain_len = len;
        }
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK,
                                                 gzip_read, r, NULL);
    } else if (streamed) {
        /* known when every part still to print is raw bytes: then a
         * Content-Length, not chunks */
        long long known = api_stream_length(r->stream);
        resp = MHD_create_response_from_callback(
            known >= 0 ? (uint64_t)known : MHD_SIZE_UNKNOWN, STREAM_BLOCK,
            stream_read, r, NULL);
    } else if (len >= WATCHED_ANSWER_BYTES) {
        /* r owns the text until on_completed */
        r->plain = body;
        r->plain_len = len;
        resp = MHD_create_response_from_callback(len, STREAM_BLOCK, buffer_read,
                                                 r, NULL);
    } else {
        resp = MHD_create_response_from_buffer_with_free_callback(len, body,
                                                                  &free);
        if (resp == NULL)
            free(body);
    }
    if (resp == NULL)
        return MHD_NO;
    int ok =
        add_common_headers(resp, conn, r, res->vary_accept, vary_encoding) == 0;
    if (res->content_type != NULL)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                      res->content_type) == MHD_YES;
    if (res->allow != NULL)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW,
                                      res->allow) == MHD_YES;
    if (res->accept_encoding != NULL)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_ACCEPT_ENCODING,
                                      res->accept_encoding) == MHD_YES;
    if (gzipped)
        ok &= MHD_add_response_header(resp, "Content-Encoding", "gzip") ==
              MHD_YES;
    if (res->inference_header_length > 0) {
        char length[24];
        snprintf(length, sizeof length, "%zu", res->inference_header_length);
        ok &= MHD_add_response_header(resp, "Inference-Header-Content-Length",
                                      length) == MHD_YES;
    }
    if (res->compute_ms >= 0) {
        char timing[sizeof "compute;dur=" + SRV_MS_TEXT_MAX];
        memcpy(timing, "compute;dur=", sizeof "compute;dur=" - 1);
        srv_format_ms(timing + sizeof "compute;dur=" - 1, res->compute_ms);
        ok &= MHD_add_response_header(resp, "Server-Timing", timing) == MHD_YES;
    }
    if (res->status == MHD_HTTP_UNAUTHORIZED) {
        const char *www = srv_gate_www_authenticate(r->refused);
        ok &= MHD_add_response_header(resp, "WWW-Authenticate",
                                      www != NULL ? www : "Bearer") == MHD_YES;
    }
    /* rate_limited and overloaded: when to try again (the gate's estimate,
     * else a second) */
    if (r->retry_after_s > 0 || res->status == MHD_HTTP_TOO_MANY_REQUESTS ||
        (res->status == MHD_HTTP_SERVICE_UNAVAILABLE &&
         res->content_type != NULL &&
         strcmp(res->content_type, "application/problem+json") == 0)) {
        char retry[16];
        snprintf(retry, sizeof retry, "%u",
                 r->retry_after_s > 0 ? r->retry_after_s : 1);
        ok &= MHD_add_response_header(resp, "Retry-After", retry) == MHD_YES;
    }
    /* the lab page: its own origin only, its inline code by hash */
    const char *csp = srv_csp_lab();
    if (csp != NULL && res->status == MHD_HTTP_OK && res->route != NULL &&
        strcmp(res->route, "/") == 0)
        ok &= MHD_add_response_header(resp, "Content-Security-Policy", csp) ==
              MHD_YES;
    if (close_conn && r->has_body)
        r->closing_early = 1;
    if (close_conn || r->close_after || atomic_load(&r->srv->draining))
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION,
                                      "close") == MHD_YES;
    enum MHD_Result rc = MHD_NO;
    if (ok)
        rc = MHD_queue_response(conn, (unsigned)res->status, resp);
    MHD_destroy_response(resp);
    if (rc == MHD_YES) {
        /* at --min-response-rate, and fast enough for what it holds */
        srv_conn_watch_sending(r->watched, r->answer_charged);
        release_places(r);
        r->answered = 1;
        r->status = res->status;
        r->route = res->route;
        r->bytes =
            strcmp(r->method, "HEAD") == 0 || streamed || r->gz || r->plain
                ? 0 /* counted as they are handed over */
                : len;
    }
    return rc;
}

/* A problem+json answer made here, for limits the api never sees (the
 * request target and header block, the framing); written by the api. */
static enum MHD_Result answer_problem(srv_request *r,
                                      struct MHD_Connection *conn, int status,
                                      const char *detail, int close_conn) {
    api_response res;
    memset(&res, 0, sizeof res);
    res.compute_ms = -1;
    api_problem_respond_http(&res, status, detail);
    if (res.body == NULL)
        return MHD_NO;
    enum MHD_Result rc = answer(r, conn, &res, close_conn);
    api_response_free(&res);
    return rc;
}

/* api_request.body_done: the api has parsed the body; free it before the
 * answer is computed, so that a large request does not hold its text and
 * its tensors at once. */
static void body_done(void *ctx) {
    body_free(ctx);
}

/* MHD_KeyValueIterator over the headers: the first content coding other
 * than identity in any Content-Encoding line (a list, blanks around each
 * coding; an empty value counts as a coding), copied into cls
 * (SRV_CODING_MAX bytes). */
static enum MHD_Result find_coding(void *cls, enum MHD_ValueKind kind,
                                   const char *key, const char *value) {
    (void)kind;
    char *coding = cls;
    if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_ENCODING) != 0)
        return MHD_YES;
    const char *s = value != NULL ? value : "";
    if (s[strspn(s, " \t")] == '\0') {
        snprintf(coding, SRV_CODING_MAX, "(empty)");
        return MHD_NO;
    }
    for (;;) {
        s += strspn(s, " \t,");
        if (*s == '\0')
            return MHD_YES;
        size_t n = strcspn(s, ","), len = n;
        while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
            len--;
        if (!(len == 8 && strncasecmp(s, "identity", 8) == 0)) {
            snprintf(coding, SRV_CODING_MAX, "%.*s", (int)len, s);
            return MHD_NO;
        }
        s += n;
    }
}

/* MHD_KeyValueIterator over the headers: each Inference-Header-Content-
 * Length value appended to the srv_request's header_length. */
static enum MHD_Result join_header_length(void *cls, enum MHD_ValueKind kind,
                                          const char *key, const char *value) {
    (void)kind;
    srv_request *r = cls;
    if (strcasecmp(key, "Inference-Header-Content-Length") != 0)
        return MHD_YES;
    size_t n = strlen(r->header_length);
    int len =
        snprintf(r->header_length + n, sizeof r->header_length - n, "%s%s",
                 r->header_lengths++ ? ", " : "", value != NULL ? value : "");
    if (len < 0 || (size_t)len >= sizeof r->header_length - n) {
        /* cut: never read as a shorter length */
        snprintf(r->header_length, sizeof r->header_length,
                 "(over %d characters)", SRV_HEADER_LENGTH_MAX - 1);
        return MHD_NO;
    }
    return MHD_YES;
}

static void fill_api_request(api_request *req, srv_request *r,
                             struct MHD_Connection *conn, const char *url) {
    memset(req, 0, sizeof *req);
    req->method = r->method;
    req->path = url;
    req->query = r->query;
    req->content_type = header(conn, MHD_HTTP_HEADER_CONTENT_TYPE);
    req->accept = header(conn, MHD_HTTP_HEADER_ACCEPT);
    r->coding[0] = '\0';
    MHD_get_connection_values(conn, MHD_HEADER_KIND, &find_coding, r->coding);
    req->content_encoding = r->coding[0] ? r->coding : NULL;
    r->header_length[0] = '\0';
    r->header_lengths = 0;
    MHD_get_connection_values(conn, MHD_HEADER_KIND, &join_header_length, r);
    req->inference_header_length = r->header_lengths ? r->header_length : NULL;
    req->body = r->body_len > 0 ? r->body : NULL;
    req->body_len = r->body_len;
    req->limits = &r->srv->limits;
    req->body_done = body_done;
    req->body_ctx = r;
    /* A large answer is streamed (chunked, no Content-Length), and
     * compressed as it is sent for a client that takes gzip; HEAD needs
     * the length of the plain answer. */
    req->stream_ok = strcmp(r->method, "HEAD") != 0;
}

/* OPTIONS: a CORS preflight (Fetch standard), never behind a token. The
 * api names the route's methods (Allow) or answers 404 for an unknown path;
 * when it leaves OPTIONS to us, every method we serve is listed. */
#define PREFLIGHT_METHODS "GET, HEAD, POST, OPTIONS"
static enum MHD_Result answer_preflight(srv_request *r,
                                        struct MHD_Connection *conn,
                                        const char *url, int close_conn) {
    api_request req;
    api_response res;
    fill_api_request(&req, r, conn, url);
    memset(&res, 0, sizeof res);
    if (api_precheck(&req, -1, &res) != 0 &&
        res.status != MHD_HTTP_NO_CONTENT) {
        enum MHD_Result rc = answer(r, conn, &res, close_conn);
        api_response_free(&res);
        return rc;
    }
    const char *methods = res.allow != NULL ? res.allow : PREFLIGHT_METHODS;
    r->route = res.route;
    api_response_free(&res);
    struct MHD_Response *resp =
        MHD_create_response_from_buffer_with_free_callback(0, NULL, NULL);
    if (resp == NULL)
        return MHD_NO;
    int ok = add_common_headers(resp, conn, r, 0, 0) == 0;
    ok &= MHD_add_response_header(resp, "Access-Control-Allow-Methods",
                                  methods) == MHD_YES;
    ok &= MHD_add_response_header(resp, "Access-Control-Allow-Headers",
                                  SRV_CORS_ALLOW_HEADERS) == MHD_YES;
    ok &= MHD_add_response_header(resp, "Access-Control-Max-Age",
                                  SRV_CORS_MAX_AGE) == MHD_YES;
    ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, methods) ==
          MHD_YES;
    if (close_conn)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION,
                                      "close") == MHD_YES;
    enum MHD_Result rc = MHD_NO;
    if (ok && srv_conn_watch_busy(r->watched) == 0)
        rc = MHD_queue_response(conn, MHD_HTTP_NO_CONTENT, resp);
    MHD_destroy_response(resp);
    if (rc == MHD_YES) {
        r->answered = 1;
        r->status = MHD_HTTP_NO_CONTENT;
    }
    return rc;
}

/* The head's lines for srv_framing, and where each name and value lies
 * (srv_framing_head_hides). */
typedef struct {
    srv_framing *framing;
    srv_span *spans; /* room for cap */
    size_t n, cap;
} framing_walk;

static enum MHD_Result add_framing(void *cls, enum MHD_ValueKind kind,
                                   const char *key, size_t key_size,
                                   const char *value, size_t value_size) {
    (void)kind;
    framing_walk *w = cls;
    srv_framing_add(w->framing, key, value);
    if (w->n + 2 <= w->cap) {
        w->spans[w->n++] = (srv_span){key, key_size};
        w->spans[w->n++] = (srv_span){value, value != NULL ? value_size : 0};
    }
    return MHD_YES;
}

/* Whether the head of r hides bytes behind a NUL: in the target (a raw NUL
 * cuts it: "GET /openapi.json" NUL ".html") or in a header value. */
static int head_hides_nul(srv_request *r, struct MHD_Connection *conn,
                          const char *method, const char *version,
                          framing_walk *w) {
    const union MHD_ConnectionInfo *info =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
    if (info == NULL || w->n + 3 > w->cap)
        return 0;
    /* where the request line ends: the nearest header name after the
     * version (a folded line's parts lie elsewhere) */
    const char *next_line = NULL;
    for (size_t i = 0; i < w->n; i += 2) {
        const char *k = w->spans[i].start;
        if (k != NULL && k > version && k < method + info->header_size &&
            (next_line == NULL || k < next_line))
            next_line = k;
    }
    if (srv_framing_request_line_nul(method, r->raw_uri, r->uri_len, version,
                                     next_line))
        return 1;
    w->spans[w->n++] = (srv_span){method, strlen(method)};
    w->spans[w->n++] = (srv_span){r->raw_uri, r->raw_uri ? r->uri_len : 0};
    w->spans[w->n++] = (srv_span){version, strlen(version)};
    return srv_framing_head_hides(method, info->header_size, w->spans, w->n);
}

/* 1 when te is the one transfer coding "chunked" (what libmicrohttpd
 * decodes). */
static int only_chunked(const char *te) {
    while (*te == ' ' || *te == '\t')
        te++;
    size_t n = strlen(te);
    while (n > 0 && (te[n - 1] == ' ' || te[n - 1] == '\t'))
        n--;
    return n == 7 && strncasecmp(te, "chunked", 7) == 0;
}

/* 1 when the last transfer coding in te is "chunked" (RFC 9112 section
 * 6.1), which is what lets the body's end be found. */
static int ends_with_chunked(const char *te) {
    const char *last = strrchr(te, ',');
    last = last != NULL ? last + 1 : te;
    while (*last == ' ' || *last == '\t')
        last++;
    size_t n = strlen(last);
    while (n > 0 && (last[n - 1] == ' ' || last[n - 1] == '\t'))
        n--;
    return n == 7 && strncasecmp(last, "chunked", 7) == 0;
}

/* Send the answer the headers decided (r->early). close_conn: the body
 * is still unread. */
static enum MHD_Result answer_early(srv_request *r, struct MHD_Connection *conn,
                                    const char *url, int close_conn) {
    switch (r->early) {
    case EARLY_URI_TOO_LONG:
        return answer_problem(r, conn, MHD_HTTP_URI_TOO_LONG,
                              "the request target is longer than 8192 bytes",
                              close_conn);
    case EARLY_HEADERS_TOO_LARGE:
        return answer_problem(
            r, conn, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE,
            "the request header block is larger than 16384 bytes", close_conn);
    case EARLY_BAD_FRAMING:
        return answer_problem(r, conn, MHD_HTTP_BAD_REQUEST,
                              "Transfer-Encoding must end with chunked, "
                              "written as the bare word (RFC 9112 section "
                              "6.3)",
                              1);
    case EARLY_CODING_UNKNOWN:
        return answer_problem(r, conn, MHD_HTTP_NOT_IMPLEMENTED,
                              "chunked is the only transfer coding understood "
                              "here (RFC 9112 section 6.1)",
                              1);
    case EARLY_PREFLIGHT:
        return answer_preflight(r, conn, url, close_conn);
    case EARLY_NONE:
        break;
    }
    return MHD_NO;
}

/* The X-Forwarded-For lines of a request, in the order they arrived; past
 * FORWARDED_FOR_MAX the last ones (the nearest hops) are kept. */
typedef struct {
    const char *value[FORWARDED_FOR_MAX];
    size_t n;
} forwarded_for;

static enum MHD_Result add_forwarded_for(void *cls, enum MHD_ValueKind kind,
                                         const char *key, const char *value) {
    (void)kind;
    forwarded_for *ff = cls;
    if (value == NULL || strcasecmp(key, "X-Forwarded-For") != 0)
        return MHD_YES;
    if (ff->n == FORWARDED_FOR_MAX) {
        memmove(ff->value, ff->value + 1,
                (FORWARDED_FOR_MAX - 1) * sizeof ff->value[0]);
        ff->n--;
    }
    ff->value[ff->n++] = value;
    return MHD_YES;
}

/* Ask the gate about a request for a known route and method (route: its
 * template); sets r->refused, r->retry_after_s and r->ticket. */
static void admit(srv_request *r, struct MHD_Connection *conn,
                  const char *route) {
    srv_gate *gate = r->srv->gate;
    if (gate == NULL)
        return;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    forwarded_for ff = {.n = 0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, &add_forwarded_for, &ff);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    srv_gate_request in = {
        .route = route,
        .peer = ci != NULL ? ci->client_addr : NULL,
        .forwarded_for = ff.value,
        .n_forwarded_for = ff.n,
        .authorization = header(conn, MHD_HTTP_HEADER_AUTHORIZATION),
        .in_flight = atomic_load(&r->srv->admitted),
        .now_s = (double)now.tv_sec + (double)now.tv_nsec / 1e9,
    };
    r->gate_route = route;
    r->refused = srv_gate_admit(gate, &in, &r->ticket, &r->retry_after_s);
    /* a token shown: its connection is let go last (conn_watch.h) */
    if (r->refused == SRV_GATE_PASS && in.authorization != NULL &&
        srv_gate_config_of(gate)->auth != NULL &&
        !srv_gate_route_open(gate, route))
        srv_conn_watch_authenticated(r->watched);
}

/* Send the gate's refusal (r->refused). */
static enum MHD_Result answer_refusal(srv_request *r,
                                      struct MHD_Connection *conn,
                                      const char *url, int close_conn) {
    api_response res;
    memset(&res, 0, sizeof res);
    srv_gate_respond(r->srv->gate, &res, r->refused, url, r->retry_after_s);
    res.route = r->gate_route; /* a refusal still counts for its route */
    if (res.body == NULL)
        return MHD_NO;
    enum MHD_Result rc = answer(r, conn, &res, close_conn);
    api_response_free(&res);
    return rc;
}

static enum MHD_Result answer_no_room(srv_request *r,
                                      struct MHD_Connection *conn,
                                      const char *url, int room, uint64_t bytes,
                                      int close_conn);

/* s into dst (cap bytes), cut to fit: snprintf's "%s" without its cost. */
static void copy_cut(char *dst, size_t cap, const char *s) {
    size_t n = strnlen(s, cap - 1);
    memcpy(dst, s, n);
    dst[n] = '\0';
}

/* Headers are in. What they decide is answered at once when a body is on
 * its way (the client need not send it, and the connection then closes),
 * else on the last call, which keeps the connection open. */
static enum MHD_Result on_headers(srv_request *r, struct MHD_Connection *conn,
                                  const char *url, const char *method,
                                  const char *version) {
    copy_cut(r->method, sizeof r->method, method);
    copy_cut(r->path, sizeof r->path, url);
    atomic_fetch_add(&r->srv->admitted, 1);
    r->counted = 1;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *peer = ci != NULL ? ci->client_addr : NULL;
    if (peer != NULL &&
        (peer->sa_family == AF_INET || peer->sa_family == AF_INET6)) {
        memcpy(&r->peer, peer,
               peer->sa_family == AF_INET ? sizeof(struct sockaddr_in)
                                          : sizeof(struct sockaddr_in6));
        r->has_peer = 1;
    }
    const union MHD_ConnectionInfo *sc =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    r->watched = sc != NULL ? sc->socket_context : NULL;
    srv_request_id_make(r->request_id, header(conn, "X-Request-Id"));
    /* an ambiguous head: nothing after it may be read as a request */
    srv_framing framing;
    srv_framing_init(&framing);
    /* two spans per line, and the request line's three */
    size_t lines =
        (size_t)MHD_get_connection_values(conn, MHD_HEADER_KIND, NULL, NULL);
    framing_walk walk = {&framing, NULL, 0, 2 * lines + 3};
    walk.spans = malloc(walk.cap * sizeof *walk.spans);
    if (walk.spans == NULL)
        walk.cap = 0;
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, &add_framing, &walk);
    if (!framing.detail && head_hides_nul(r, conn, method, version, &walk))
        framing.detail = SRV_FRAMING_NUL_IN_HEAD;
    free(walk.spans);
    if (r->nul_in_path && !framing.detail)
        framing.detail = "the request target's path holds %00, a NUL byte, "
                         "which no path may contain (RFC 3986 section 7.3)";
    srv_framing_finish(&framing, version);
    if (framing.detail != NULL)
        return answer_problem(r, conn, MHD_HTTP_BAD_REQUEST, framing.detail, 1);
    /* -1: no length (chunked, or no body); beyond int64: too large */
    long long length = !framing.has_length ? -1
                       : framing.length > (unsigned long long)INT64_MAX
                           ? INT64_MAX
                           : (long long)framing.length;
    const char *te = header(conn, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    int chunked = te != NULL && ends_with_chunked(te);
    r->has_body = length > 0 || chunked;
    /* HTTP/1.0 has no chunked coding: read the body, then close (RFC
     * 9112 section 6.1) */
    r->close_after = te != NULL && strcmp(version, "HTTP/1.0") == 0;
    if (srv_conn_watch_head_done(r->watched, r->has_body) != 0)
        return MHD_NO; /* too late: cut by the header deadline */

    size_t header_bytes = 0;
    MHD_get_connection_values(conn, MHD_HEADER_KIND, &add_header_bytes,
                              &header_bytes);
    if (te != NULL && !chunked)
        r->early = EARLY_BAD_FRAMING; /* body length unknowable: close */
    else if (te != NULL && only_chunked(te) && strcasecmp(te, "chunked") != 0)
        /* "chunked " : libmicrohttpd decodes only the bare word and would
         * wait for a body it never sees the end of */
        r->early = EARLY_BAD_FRAMING;
    else if (te != NULL && !only_chunked(te))
        r->early = EARLY_CODING_UNKNOWN; /* e.g. "gzip, chunked": close */
    else if (r->uri_len > SRV_MAX_URI_BYTES)
        r->early = EARLY_URI_TOO_LONG;
    else if (header_bytes > SRV_MAX_HEADER_BYTES)
        r->early = EARLY_HEADERS_TOO_LARGE;
    else if (strcmp(method, MHD_HTTP_METHOD_OPTIONS) == 0)
        r->early = EARLY_PREFLIGHT;
    if (r->early == EARLY_BAD_FRAMING || r->early == EARLY_CODING_UNKNOWN)
        return answer_early(r, conn, url, 1);
    if (r->early != EARLY_NONE)
        return r->has_body ? answer_early(r, conn, url, 1) : MHD_YES;
    int gated = r->srv->gate != NULL && srv_gate_active(r->srv->gate);
    if (!r->has_body && !gated)
        return MHD_YES; /* api_handle makes the same checks on the last call */

    api_request req;
    api_response res;
    fill_api_request(&req, r, conn, url);
    memset(&res, 0, sizeof res);
    int stop = api_precheck(&req, length, &res) != 0;
    unsigned route_flags = api_route_flags(res.route);
    if (gated && (!stop || (res.status != MHD_HTTP_NOT_FOUND &&
                            res.status != MHD_HTTP_METHOD_NOT_ALLOWED))) {
        admit(r, conn, res.route);
        if (r->refused != SRV_GATE_PASS) {
            api_response_free(&res);
            return r->has_body ? answer_refusal(r, conn, url, 1) : MHD_YES;
        }
    }
    if (!r->has_body) {
        api_response_free(&res);
        return MHD_YES; /* api_handle makes the same checks on the last call */
    }
    if (stop) {
        enum MHD_Result rc = answer(r, conn, &res, 1);
        api_response_free(&res);
        return rc;
    }
    api_response_free(&res);
    /* a chunked body to a route that takes none: refused unread, as one
     * of a declared length is (api_precheck) */
    if (length < 0 &&
        !(route_flags & (API_ROUTE_JSON_BODY | API_ROUTE_RAW_BODY)))
        return answer_problem(r, conn, MHD_HTTP_CONTENT_TOO_LARGE,
                              "this route takes no body, and this request "
                              "sends one (chunked); send it without one",
                              1);
    if (length > 0 &&
        (unsigned long long)length <= r->srv->limits.max_body_bytes) {
        /* a body that can never fit is refused now; one that can is
         * reserved as its bytes arrive (on_body), so that heads which
         * announce large bodies and send nothing hold nothing */
        api_budget_usage u;
        api_budget_stats(&u);
        if (u.total > 0 && (uint64_t)length > u.total)
            return answer_no_room(r, conn, url, API_BUDGET_NEVER,
                                  (uint64_t)length, 1);
        r->body = body_alloc(r, (size_t)length);
        if (r->body == NULL)
            return MHD_NO;
        r->body_cap = (size_t)length;
    }
    return MHD_YES;
}

/* The 413 for a body that outgrew --max-body-bytes after body_seen bytes:
 * the api's own problem, with the connection closed after it. */
static enum MHD_Result
answer_too_large(srv_request *r, struct MHD_Connection *conn, const char *url) {
    api_request req;
    api_response res;
    fill_api_request(&req, r, conn, url);
    req.body = NULL;
    req.body_len = 0;
    memset(&res, 0, sizeof res);
    long long seen = r->body_seen > (unsigned long long)INT64_MAX
                         ? INT64_MAX
                         : (long long)r->body_seen;
    if (api_precheck(&req, seen, &res) == 0)
        return answer_problem(r, conn, MHD_HTTP_CONTENT_TOO_LARGE,
                              "the request body is larger than "
                              "--max-body-bytes",
                              1);
    enum MHD_Result rc = answer(r, conn, &res, 1);
    api_response_free(&res);
    return rc;
}

/* One client address may hold at most this fraction of the memory
 * budget in bodies and unsent answers, while more than half of the
 * budget is taken, before its next request or more of its body is
 * refused: a client that does not read its answers, or sends bodies
 * slowly, leaves the rest to the others (docs/contract.md, "Sharing one
 * server"); while half is free, no one needs it back. A request is
 * checked before it computes, so the requests of one address computing
 * at once may pass the share by their own answers. */
#define ADDRESS_SHARE_DIVISOR 4

/* 1 when the request's address already holds more than its share of
 * the budget, its own body left out (*held and *share then set), and
 * more than half of the budget is taken; else 0, and always for an
 * exempt address (a trusted proxy), without a per-address limit
 * (--max-connections-per-address 0) or without a budget. */
static int over_address_share(srv_request *r, uint64_t *held, uint64_t *share) {
    api_budget_usage u;
    api_budget_stats(&u);
    if (u.total == 0 || !r->has_peer || u.used <= u.total / 2)
        return 0;
    *share = u.total / ADDRESS_SHARE_DIVISOR;
    uint64_t all =
        srv_conn_slots_bytes(r->srv->slots, (const struct sockaddr *)&r->peer);
    *held = all > r->body_charged ? all - r->body_charged : 0;
    return *held > *share;
}

/* r->budget_refusal of a body refused because its address holds its
 * share (besides API_BUDGET_NEVER and _BUSY) */
#define BODY_OVER_SHARE 3

/* Append one piece of the body. Once it outgrows the limit (a chunked body:
 * a declared length was checked up front) the buffer is freed and the rest
 * is read and dropped: libmicrohttpd 0.9 can queue a response only before
 * the body or after all of it. A sender that keeps going past
 * DISCARD_FACTOR times the limit is cut off. */
static enum MHD_Result on_body(srv_request *r, const char *data, size_t n) {
    size_t limit = r->srv->limits.max_body_bytes;
    r->body_seen += n;
    if (srv_conn_watch_body(r->watched, n) != 0)
        return MHD_NO; /* cut for sending too slowly */
    if (r->overflow || r->budget_refusal) {
        return r->body_seen / DISCARD_FACTOR > limit ? MHD_NO : MHD_YES;
    }
    if (n > limit - r->body_len) {
        r->overflow = 1;
        body_free(r);
        return MHD_YES;
    }
    size_t cap = r->body_cap;
    if (r->body_len + n > cap) {
        cap = cap ? cap : 64 * 1024;
        while (cap < r->body_len + n)
            cap = cap > limit / 2 ? limit : cap * 2;
    }
    /* reserved as it arrives (body_charge) */
    uint64_t held = body_charge(r->body_len + n,
                                r->body_mapped || cap >= BODY_MAP_MIN, cap);
    uint64_t share_held, share;
    if (held > r->body_charged && over_address_share(r, &share_held, &share)) {
        r->budget_refusal = BODY_OVER_SHARE; /* answered once it is read */
        r->share_held = share_held;
        body_free(r);
        return MHD_YES;
    }
    if (held > r->body_charged) {
        int room = api_budget_take(held - r->body_charged, 0);
        if (room != API_BUDGET_OK) {
            r->budget_refusal = room; /* answered once it is read */
            body_free(r);
            return MHD_YES;
        }
        address_holds(r, (int64_t)(held - r->body_charged));
        r->body_charged = held;
    }
    if (r->body_len + n > r->body_cap) {
        char *grown = body_grow(r, cap);
        if (grown == NULL)
            return MHD_NO;
        r->body = grown;
        r->body_cap = cap;
    }
    memcpy(r->body + r->body_len, data, n);
    r->body_len += n;
    return MHD_YES;
}

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

static int where_to_run(unsigned flags, size_t body_len, const char *accept) {
    if (!(flags & API_ROUTE_COMPUTES))
        return RUN_INLINE;
    if (body_len > INLINE_BODY_BYTES)
        return RUN_POOL;
    /* a picture's size is not the work's: a few weights may draw
     * megabytes of SVG, which are drawn on a compute thread */
    if ((flags & API_ROUTE_VARY_ACCEPT) && accept != NULL &&
        strcasestr(accept, "image/svg") != NULL)
        return RUN_POOL;
    return flags & API_ROUTE_WORK_OF_BODY ? RUN_INLINE : RUN_TRY;
}

/* A queued job answered 503 overloaded with detail, without computing. */
static void refuse_job(srv_request *r, const char *detail) {
    api_problem p;
    memset(&p, 0, sizeof p);
    api_fail(&p, API_E_OVERLOADED, NULL, "%s", detail);
    r->job_response.compute_ms = -1;
    r->job_response.route = api_route_of_path(r->job_request.path);
    api_front_respond_problem(&r->job_response, &p, r->job_request.path);
}

/* A job's answer for a client that takes gzip, compressed here on the
 * compute thread when it is compressed whole (below SRV_GZIP_WHOLE_MAX),
 * not on the HTTP thread that sends it; the compressed copy is never
 * larger than the plain body, whose reservation covers it. */
static void compress_job_answer(srv_request *r) {
    api_response *res = &r->job_response;
    if (!r->gzip_wanted || res->stream != NULL || res->body == NULL ||
        res->inference_header_length > 0 || !srv_gzip_eligible(res->body_len) ||
        res->body_len >= SRV_GZIP_WHOLE_MAX)
        return;
    char *z;
    size_t zlen;
    if (srv_gzip_compress(&z, &zlen, res->body, res->body_len) != 0)
        return;
    free(res->body);
    res->body = z;
    res->body_len = zlen;
    r->job_gzipped = 1;
}

/* A compute pool job: the answer, then the connection resumed, after
 * which r belongs to the HTTP thread again (it may complete and free r at
 * once). A request whose client left while it waited is answered without
 * computing (the answer goes nowhere). */
static void compute_job(void *arg) {
    srv_request *r = arg;
    uint64_t held, share;
    /* whatever it left unread behind its request (conn_watch.h) */
    if (srv_conn_watch_gone(r->watched))
        refuse_job(r, "the client closed the connection before its request "
                      "was computed");
    else if (atomic_load(&r->srv->stopping)) /* the drain's grace is over */
        refuse_job(r, "the server is stopping; retry on another replica or "
                      "after it restarts");
    else if (over_address_share(r, &held, &share)) {
        /* checked again here: the answers of this address's jobs that
         * ran while this one waited count now */
        char detail[512];
        api_budget_share_refusal(detail, sizeof detail, held, share);
        refuse_job(r, detail);
    } else
        api_handle(&r->job_request, &r->job_response);
    compress_job_answer(r);
    /* its client left while it waited or computed: nobody reads this */
    r->abandoned = srv_conn_watch_gone(r->watched);
    r->job_counted = r->job_response.charged;
    address_holds(r, (int64_t)r->job_counted);
    atomic_store(&r->computed, 1);
    MHD_resume_connection(r->conn);
}

/* A problem of the api's (code, detail) answered here, for a request the
 * api has not seen: 503 overloaded (with Retry-After 1) or 413. */
static enum MHD_Result answer_refused(srv_request *r,
                                      struct MHD_Connection *conn,
                                      const char *url, api_error code,
                                      const char *detail, int close_conn) {
    api_problem p;
    memset(&p, 0, sizeof p);
    api_fail(&p, code, NULL, "%s", detail);
    api_response res;
    memset(&res, 0, sizeof res);
    res.compute_ms = -1;
    res.route = api_route_of_path(url);
    api_front_respond_problem(&res, &p, url);
    if (code == API_E_OVERLOADED)
        r->retry_after_s = 1;
    enum MHD_Result rc = res.body ? answer(r, conn, &res, close_conn) : MHD_NO;
    api_response_free(&res);
    body_free(r);
    return rc;
}

/* The body of `bytes` bytes finds no room in the memory budget (room:
 * API_BUDGET_NEVER or _BUSY). */
static enum MHD_Result answer_no_room(srv_request *r,
                                      struct MHD_Connection *conn,
                                      const char *url, int room, uint64_t bytes,
                                      int close_conn) {
    char detail[512];
    api_budget_refusal(detail, sizeof detail, room, "the body", bytes);
    return answer_refused(r, conn, url,
                          room == API_BUDGET_NEVER ? API_E_PAYLOAD_TOO_LARGE
                                                   : API_E_OVERLOADED,
                          detail, close_conn);
}

/* The client of a request, as the per-client limits name it
 * (client_addr.h): the peer, or what trusted proxies recorded in
 * X-Forwarded-For. Returns 0, -1 when the peer is not IP. */
static int client_of(srv_http *srv, struct MHD_Connection *conn,
                     srv_addr *client) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    srv_addr peer;
    if (ci == NULL || srv_addr_from_sockaddr(&peer, ci->client_addr) != 0)
        return -1;
    if (srv->trusted.n == 0 || !srv_netlist_contains(&srv->trusted, &peer)) {
        *client = peer;
        return 0;
    }
    forwarded_for ff = {.n = 0};
    MHD_get_connection_values(conn, MHD_HEADER_KIND, &add_forwarded_for, &ff);
    *client = srv_client_addr(&peer, &srv->trusted, ff.value, ff.n);
    return 0;
}

/* Suspend the connection and queue its request to the compute pool, in
 * its client's lane (the pool serves the clients in turn); a full queue
 * is 503 overloaded at once. */
static enum MHD_Result compute_off_thread(srv_request *r,
                                          struct MHD_Connection *conn,
                                          const char *url) {
    fill_api_request(&r->job_request, r, conn, url);
    r->job_request.may_wait = 1; /* a compute thread may wait for memory */
    /* stopped when its client leaves */
    r->job_request.abandoned =
        srv_conn_watch_computing(r->srv->watch, r->watched);
    r->gzip_wanted = srv_gzip_accepted(header(conn, "Accept-Encoding"));
    memset(&r->job_response, 0, sizeof r->job_response);
    r->conn = conn;
    srv_addr client;
    int known = client_of(r->srv, conn, &client) == 0;
    MHD_suspend_connection(conn);
    if (srv_compute_pool_submit(r->srv->pool, compute_job, r,
                                known ? &client : NULL) == 0)
        return MHD_YES;
    MHD_resume_connection(conn);
    srv_conn_watch_computed(r->srv->watch, r->watched);
    char detail[160];
    snprintf(detail, sizeof detail,
             "the server is busy: %u requests are already waiting to be "
             "computed; retry after 1 s",
             COMPUTE_QUEUE_MAX);
    return answer_refused(r, conn, url, API_E_OVERLOADED, detail, 0);
}

/* The pool's answer, sent from the HTTP thread after the resume. */
static enum MHD_Result answer_computed(srv_request *r,
                                       struct MHD_Connection *conn) {
    srv_conn_watch_computed(r->srv->watch, r->watched);
    enum MHD_Result rc = answer(r, conn, &r->job_response, 0);
    api_response_free(&r->job_response);
    body_free(r);
    return rc;
}

/* MHD_AccessHandlerCallback: called once with the headers, once per body
 * piece, and once more with *upload_data_size == 0 when the body is in. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
                                  const char *url, const char *method,
                                  const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls) {
    srv_request *r = *con_cls;
    url = srv_framing_target_path(url);
    if (r == NULL) {
        r = request_new(cls, NULL);
        if (r == NULL)
            return MHD_NO;
        *con_cls = r;
    }
    if (!r->started) {
        r->started = 1;
        return on_headers(r, conn, url, method, version);
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (r->answered)
            return MHD_YES; /* discard what follows an early answer */
        return on_body(r, upload_data, n);
    }
    if (r->answered)
        return MHD_YES;
    if (r->overflow)
        return answer_too_large(r, conn, url);
    if (r->budget_refusal == BODY_OVER_SHARE) {
        char detail[512];
        api_budget_usage u;
        api_budget_stats(&u);
        api_budget_share_refusal(detail, sizeof detail, r->share_held,
                                 u.total / ADDRESS_SHARE_DIVISOR);
        return answer_refused(r, conn, url, API_E_OVERLOADED, detail, 0);
    }
    if (r->budget_refusal)
        return answer_no_room(r, conn, url, r->budget_refusal, r->body_seen, 0);
    if (r->early != EARLY_NONE)
        return answer_early(r, conn, url, 0);
    if (r->refused != SRV_GATE_PASS)
        return answer_refusal(r, conn, url, 0);

    if (atomic_load(&r->computed)) /* resumed: the pool has answered */
        return answer_computed(r, conn);
    if (srv_conn_watch_busy(r->watched) != 0)
        return MHD_NO; /* cut for sending too slowly */
    unsigned flags = api_route_flags(api_route_of_path(url));
    uint64_t held, share;
    /* a route that computes nothing (a health probe, /metrics, the lab's
     * pages) is answered whatever the address holds */
    if ((flags & API_ROUTE_COMPUTES) && over_address_share(r, &held, &share)) {
        char detail[512];
        api_budget_share_refusal(detail, sizeof detail, held, share);
        return answer_refused(r, conn, url, API_E_OVERLOADED, detail, 0);
    }
    int run =
        where_to_run(flags, r->body_len, header(conn, MHD_HTTP_HEADER_ACCEPT));
    if (run == RUN_POOL)
        return compute_off_thread(r, conn, url);

    api_request req;
    api_response res;
    fill_api_request(&req, r, conn, url);
    if (run == RUN_TRY) {
        req.inline_work_max = INLINE_WORK_MAX;
        req.body_done = NULL; /* the body stays for the pool */
    }
    memset(&res, 0, sizeof res);
    api_handle(&req, &res);
    if (res.deferred)
        return compute_off_thread(r, conn, url);
    enum MHD_Result rc = answer(r, conn, &res, 0);
    api_response_free(&res);
    body_free(r);
    return rc;
}

/* Connections an address may open past its share of the slots, each only
 * to be answered 503 and closed (on_connection); past them, a new one is
 * closed unanswered at accept, so that a flood costs no more than a
 * refusal. */
#define ANSWERED_OVER_SHARE 16

/* MHD_AcceptPolicyCallback: refuse a peer that holds its share of the
 * connection slots and ANSWERED_OVER_SHARE more (conn_slots.h). */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr,
                                 socklen_t addrlen) {
    (void)addrlen;
    srv_http *srv = cls;
    return srv_conn_slots_admit(srv->slots, addr, ANSWERED_OVER_SHARE) ? MHD_YES
                                                                       : MHD_NO;
}

/* MHD_OPTION_NOTIFY_CONNECTION: count a connection from set-up to close. */
/* Its deadlines are watched from set-up to close as well (conn_watch.h),
 * the record kept as the connection's socket context. */
static void on_connection(void *cls, struct MHD_Connection *conn,
                          void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
    srv_http *srv = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fd =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context =
            fd != NULL ? srv_conn_watch_open(srv->watch, fd->connect_fd) : NULL;
    } else {
        /* a 408 to a head that never became a request: counted here */
        int cut = srv_conn_watch_answered(*socket_context);
        if (cut) {
            srv_metrics_sample sample = {.status = cut};
            srv_metrics_request_started();
            srv_metrics_request_finished(&sample);
        }
        srv_conn_watch_close(srv->watch, *socket_context);
        *socket_context = NULL;
    }
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (ci == NULL)
        return;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        srv_conn_slots_opened(srv->slots, ci->client_addr);
        /* past its share: told why (503), then closed */
        if (srv_conn_slots_over(srv->slots, ci->client_addr))
            srv_conn_watch_refuse(srv->watch, *socket_context);
    } else {
        srv_conn_slots_closed(srv->slots, ci->client_addr);
    }
}

unsigned srv_http_connection_limit(void) {
    struct rlimit rl;
    unsigned limit = CONNECTION_LIMIT_MAX;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        rl.rlim_cur < (rlim_t)limit + 64)
        limit = rl.rlim_cur > 96 ? (unsigned)rl.rlim_cur - 64 : 32;
    return limit;
}

srv_http *srv_http_start(const srv_options *opts, const api_limits *limits,
                         srv_gate *gate, const srv_tls_keys *tls) {
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    /* MHD_USE_TURBO: read, write and accept before polling where that
     * is likely to work; 15% less CPU per small request (tests/bench).
     * MHD_USE_POLL, not epoll: with libmicrohttpd 0.9.75's epoll, about
     * one in five clients that close mid-upload stays in CLOSE_WAIT with
     * its body buffer until --timeout (64 of 300 in tests/load); poll
     * sees every close, at the same CPU per request. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
                     MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_USE_TURBO |
                     MHD_ALLOW_SUSPEND_RESUME;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, opts->bind, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)opts->port);
    } else if (inet_pton(AF_INET6, opts->bind, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)opts->port);
        flags |= MHD_USE_IPv6;
    } else {
        srv_log_message("error", "cannot parse bind address '%s'", opts->bind);
        return NULL;
    }
    srv_http *srv = calloc(1, sizeof *srv);
    if (srv == NULL)
        return NULL;
    srv->limits = *limits;
    srv->gate = gate;
    unsigned connections = srv_http_connection_limit();
    unsigned per_address = opts->max_connections_per_address;
    if (per_address == SRV_PER_ADDRESS_AUTO)
        per_address = connections / 8 > 0 ? connections / 8 : 1;
    (void)srv_netlist_parse(&srv->trusted, opts->trusted_proxy); /* checked */
    srv->slots = srv_conn_slots_new(connections, per_address, &srv->trusted);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    srv->pool = srv_compute_pool_new(cores > 0 ? (unsigned)cores : 1,
                                     COMPUTE_QUEUE_MAX);
    srv->watch = srv_conn_watch_start(connections, opts->header_timeout_s,
                                      opts->timeout_s, opts->min_body_rate,
                                      opts->min_response_rate,
                                      tls == NULL || tls->cert_pem == NULL);
    if (srv->slots == NULL || srv->pool == NULL || srv->watch == NULL) {
        srv_conn_slots_free(srv->slots);
        srv_compute_pool_free(srv->pool);
        srv_conn_watch_stop(srv->watch);
        free(srv);
        return NULL;
    }
    srv->quiesced_fd = MHD_INVALID_SOCKET;
    atomic_init(&srv->in_flight, 0);
    atomic_init(&srv->admitted, 0);
    atomic_init(&srv->serving, 0);
    atomic_init(&srv->draining, 0);
    atomic_init(&srv->stopping, 0);

    /* HTTPS: libmicrohttpd's GnuTLS back end; the PEM text stays ours */
    struct MHD_OptionItem tls_options[] = {
        {MHD_OPTION_HTTPS_MEM_CERT, 0, NULL},
        {MHD_OPTION_HTTPS_MEM_KEY, 0, NULL},
        {MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)SRV_TLS_PRIORITIES},
        {MHD_OPTION_END, 0, NULL},
    };
    if (tls != NULL && tls->cert_pem != NULL) {
        flags |= MHD_USE_TLS;
        tls_options[0].ptr_value = tls->cert_pem;
        tls_options[1].ptr_value = tls->key_pem;
    } else {
        tls_options[0].option = MHD_OPTION_END;
    }

    /* one thread: the internal polling thread alone, no pool option (a
     * pool of 0 or 1 only makes libmicrohttpd warn) */
    struct MHD_OptionItem pool_options[] = {
        {MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)opts->threads, NULL},
        {MHD_OPTION_END, 0, NULL},
    };
    if (opts->threads <= 1)
        pool_options[0].option = MHD_OPTION_END;

    srv->daemon = MHD_start_daemon(
        flags, (uint16_t)opts->port, &on_accept, srv, &on_request, srv,
        MHD_OPTION_EXTERNAL_LOGGER, &mhd_log, srv, MHD_OPTION_ARRAY,
        tls_options, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_ARRAY, pool_options, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned int)opts->timeout_s, MHD_OPTION_CONNECTION_LIMIT, connections,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY_BYTES,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)LISTEN_BACKLOG,
        MHD_OPTION_URI_LOG_CALLBACK, &on_uri, srv, MHD_OPTION_NOTIFY_COMPLETED,
        &on_completed, srv, MHD_OPTION_NOTIFY_CONNECTION, &on_connection, srv,
        MHD_OPTION_END);
    if (srv->daemon == NULL) {
        int in_use = errno == EADDRINUSE;
        srv_log_message("error", "cannot listen on %s port %u%s", opts->bind,
                        opts->port,
                        in_use ? ": the port is in use; stop what holds it, "
                                 "or pick another with --port N (make run "
                                 "PORT=N), or --port 0 for a free one"
                               : "");
        srv_conn_slots_free(srv->slots);
        srv_compute_pool_free(srv->pool);
        srv_conn_watch_stop(srv->watch);
        free(srv);
        return NULL;
    }
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_BIND_PORT);
    srv->port = info != NULL ? info->port : opts->port;
    atomic_store(&srv->serving, 1);
    return srv;
}

unsigned srv_http_port(const srv_http *srv) {
    return srv->port;
}

int srv_http_quiesce(srv_http *srv) {
    if (srv->quiesced_fd != MHD_INVALID_SOCKET)
        return 0;
    atomic_store(&srv->draining, 1);
    srv->quiesced_fd = MHD_quiesce_daemon(srv->daemon);
    if (srv->quiesced_fd == MHD_INVALID_SOCKET)
        return -1;
    /* Stop listening now, so that new clients are refused at once instead
     * of waiting in the backlog; the descriptor itself is closed after the
     * workers are gone (srv_http_stop), so its number cannot be reused
     * under them. */
    shutdown(srv->quiesced_fd, SHUT_RDWR);
    return 0;
}

unsigned srv_http_in_flight(const srv_http *srv) {
    return atomic_load(&srv->in_flight);
}

unsigned srv_http_connections(const srv_http *srv) {
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(srv->daemon, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info != NULL ? info->num_connections : 0;
}

void srv_http_stop(srv_http *srv) {
    if (srv == NULL)
        return;
    /* every job finishes and resumes its connection before the daemon
     * stops (libmicrohttpd must not stop with connections suspended):
     * those running stop at their next check, those queued are answered
     * 503 without computing */
    atomic_store(&srv->stopping, 1);
    api_cancel_computing();
    srv_compute_pool_free(srv->pool);
    srv->pool = NULL;
    MHD_stop_daemon(srv->daemon);
    if (srv->quiesced_fd != MHD_INVALID_SOCKET)
        close(srv->quiesced_fd);
    srv_conn_slots_free(srv->slots);
    srv_conn_watch_stop(srv->watch);
    free(srv);
}
