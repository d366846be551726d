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
 *      srv_http_answer().
 */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <malloc.h>
#include <string.h>
#include <sys/resource.h>

#include "conn_watch.h"
#include "cors.h"
#include "framing.h"
#include "http_internal.h"
#include "log.h"
#include "metrics.h"
#include "roster.h"
#include "variant_secret.h"

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

void srv_http_release_places(srv_request *r) {
    srv_gate_release(r->srv->gate, &r->ticket);
    r->ticket.slot = UINT32_MAX;
    if (r->counted)
        atomic_fetch_sub(&r->srv->admitted, 1);
    r->counted = 0;
}

static void request_free(srv_request *r) {
    int trim = r->answer_charged >= TRIM_AFTER_BYTES;
    srv_http_release_places(r);
    atomic_fetch_sub(&r->srv->in_flight, 1);
    free(r->query);
    srv_http_body_free(r);
    api_stream_free(r->stream);
    srv_gzip_stream_free(r->gz);
    free(r->plain);
    api_budget_give(r->answer_charged);
    srv_http_address_holds(r, -(int64_t)(r->answer_charged + r->job_counted));
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
    /* the api's other 503s (the time limit, a stop) and 429s */
    if (r->refusal == SRV_REFUSED_NONE &&
        (r->status == MHD_HTTP_SERVICE_UNAVAILABLE ||
         r->status == MHD_HTTP_TOO_MANY_REQUESTS) &&
        !srv_gate_route_unlimited(r->route ? r->route : ""))
        r->refusal = SRV_REFUSED_OVERLOADED;
    srv_refused(r->refusal);
    srv_access rec = {
        .request_id = r->request_id[0] ? r->request_id : "-",
        .method = r->method[0] ? r->method : "-",
        .path = r->path[0] ? r->path : "-",
        .status = r->status,
        .bytes = r->bytes,
        .duration_ms = elapsed_ms(&r->start),
        .client = r->client[0] ? r->client : NULL,
        .token = r->token,
        .refused = r->refusal != SRV_REFUSED_NONE ? srv_refusal_name(r->refusal)
                                                  : NULL,
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

/* api_request.body_done: the api has parsed the body; free it before the
 * answer is computed, so that a large request does not hold its text and
 * its tensors at once. */
static void body_done(void *ctx) {
    srv_http_body_free(ctx);
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

void srv_http_fill_api_request(api_request *req, srv_request *r,
                               struct MHD_Connection *conn, const char *url) {
    memset(req, 0, sizeof *req);
    req->method = r->method;
    req->path = url;
    req->query = r->query;
    req->content_type = srv_http_header(conn, MHD_HTTP_HEADER_CONTENT_TYPE);
    req->accept = srv_http_header(conn, MHD_HTTP_HEADER_ACCEPT);
    req->if_none_match = srv_http_header(conn, MHD_HTTP_HEADER_IF_NONE_MATCH);
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
    req->variant_secret = srv_variant_secret();
    req->roster = srv_roster_of_daemon();
    req->grader = r->grader;
}

/* OPTIONS: a CORS preflight (Fetch standard), never behind a token. The
 * api names the route's methods (Allow) or answers 404 for an unknown path;
 * when it leaves OPTIONS to us, every method we serve is listed. */
#define PREFLIGHT_METHODS "GET, HEAD, POST, OPTIONS"

enum MHD_Result srv_http_answer_preflight(srv_request *r,
                                          struct MHD_Connection *conn,
                                          const char *url, int close_conn) {
    api_request req;
    api_response res;
    srv_http_fill_api_request(&req, r, conn, url);
    memset(&res, 0, sizeof res);
    if (api_precheck(&req, -1, &res) != 0 &&
        res.status != MHD_HTTP_NO_CONTENT) {
        enum MHD_Result rc = srv_http_answer(r, conn, &res, close_conn);
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
    int ok = srv_http_add_common_headers(resp, conn, r, 0, 0) == 0;
    ok &= MHD_add_response_header(resp, "Cache-Control", "no-store") == MHD_YES;
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

/* MHD_AccessHandlerCallback: called once with the headers, once per body
 * piece, and once more with *upload_data_size == 0 when the body is in. */
/* 503: r's address holds `held` bytes of the budget, over its share. */
static enum MHD_Result refuse_over_share(srv_request *r,
                                         struct MHD_Connection *conn,
                                         const char *url, uint64_t held,
                                         uint64_t share) {
    char detail[512];
    api_budget_share_refusal(detail, sizeof detail, held, share);
    return srv_http_answer_refused(r, conn, url, MHD_HTTP_SERVICE_UNAVAILABLE,
                                   SRV_REFUSED_ADDRESS_SHARE, detail, 0);
}

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
        return srv_http_on_headers(r, conn, url, method, version);
    }
    if (*upload_data_size > 0) {
        size_t n = *upload_data_size;
        *upload_data_size = 0;
        if (r->answered)
            return MHD_YES; /* discard what follows an early answer */
        return srv_http_on_body(r, upload_data, n);
    }
    if (r->answered)
        return MHD_YES;
    if (r->overflow)
        return srv_http_answer_too_large(r, conn, url);
    if (r->budget_refusal == BODY_OVER_SHARE) {
        api_budget_usage u;
        api_budget_stats(&u);
        return refuse_over_share(r, conn, url, r->share_held,
                                 u.total / ADDRESS_SHARE_DIVISOR);
    }
    if (r->budget_refusal)
        return srv_http_answer_no_room(r, conn, url, r->budget_refusal,
                                       r->body_seen, 0);
    if (r->early != EARLY_NONE)
        return srv_http_answer_early(r, conn, url, 0);
    if (r->refused != SRV_GATE_PASS)
        return srv_http_answer_refusal(r, conn, url, 0);

    if (atomic_load(&r->computed)) /* resumed: the pool has answered */
        return srv_http_answer_computed(r, conn);
    if (srv_conn_watch_busy(r->watched) != 0)
        return MHD_NO; /* cut for sending too slowly */
    unsigned flags = api_route_flags(api_route_of_path(url));
    uint64_t held, share;
    /* a route that computes nothing (a health probe, /metrics, the lab's
     * pages) is answered whatever the address holds */
    if ((flags & API_ROUTE_COMPUTES) &&
        srv_http_over_address_share(r, &held, &share))
        return refuse_over_share(r, conn, url, held, share);
    int run = srv_http_where_to_run(
        flags, r->body_len, srv_http_header(conn, MHD_HTTP_HEADER_ACCEPT));
    if (run == RUN_POOL)
        return srv_http_answer_kept_or_queue(r, conn, url);

    api_request req;
    api_response res;
    srv_http_fill_api_request(&req, r, conn, url);
    if (run == RUN_TRY) {
        req.inline_work_max = INLINE_WORK_MAX;
        req.body_done = NULL; /* the body stays for the pool */
    }
    memset(&res, 0, sizeof res);
    api_handle(&req, &res);
    if (res.deferred)
        return srv_http_compute_off_thread(r, conn, url);
    enum MHD_Result rc = srv_http_answer(r, conn, &res, 0);
    api_response_free(&res);
    srv_http_body_free(r);
    return rc;
}

/* Connections an address may open past its share of the slots, each only
 * to be answered 503 and closed (on_connection); past them, a new one is
 * closed unanswered at accept, so that a flood costs no more than a
 * refusal. */
#define ANSWERED_OVER_SHARE 16

/* A connection from peer refused before its request (refusals.h). */
static void refused_connection(srv_refusal reason, const struct sockaddr *peer,
                               int status) {
    char client[48] = "";
    srv_addr a;
    if (srv_addr_from_sockaddr(&a, peer) == 0)
        srv_addr_format(client, sizeof client, &a);
    srv_refused_connection(reason, client[0] ? client : NULL, status);
}

/* MHD_AcceptPolicyCallback: refuse a peer that holds its share of the
 * connection slots and ANSWERED_OVER_SHARE more (conn_slots.h). */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr,
                                 socklen_t addrlen) {
    (void)addrlen;
    srv_http *srv = cls;
    if (srv_conn_slots_admit(srv->slots, addr, ANSWERED_OVER_SHARE))
        return MHD_YES;
    refused_connection(SRV_REFUSED_CONNECTIONS_CLOSED, addr, 0);
    return MHD_NO;
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
        if (srv_conn_slots_over(srv->slots, ci->client_addr)) {
            /* logged first: the 503 may be written at once */
            refused_connection(SRV_REFUSED_CONNECTIONS, ci->client_addr, 503);
            srv_conn_watch_refuse(srv->watch, *socket_context);
        }
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

/* The address to listen on, opts->bind:opts->port, into *ss, with
 * MHD_USE_IPv6 added to *flags for an IPv6 one. Returns 0, or -1 after
 * logging why. */
static int bind_address(const srv_options *opts, struct sockaddr_storage *ss,
                        unsigned *flags) {
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *v4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, opts->bind, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)opts->port);
    } else if (inet_pton(AF_INET6, opts->bind, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)opts->port);
        *flags |= MHD_USE_IPv6;
    } else {
        srv_log_message("error", "cannot parse bind address '%s'", opts->bind);
        return -1;
    }
    return 0;
}

/* Free what new_server made. */
static void free_server(srv_http *srv) {
    srv_conn_slots_free(srv->slots);
    srv_metrics_show_pool(NULL);
    srv_compute_pool_free(srv->pool);
    srv_conn_watch_stop(srv->watch);
    free(srv);
}

/* The server's state before it listens: its limits and gate, the
 * connection slots (connections in all, a share per address), the
 * compute pool and the connection watch. NULL when memory runs out. */
static srv_http *new_server(const srv_options *opts, const api_limits *limits,
                            srv_gate *gate, const srv_tls_keys *tls,
                            unsigned connections) {
    srv_http *srv = calloc(1, sizeof *srv);
    if (srv == NULL)
        return NULL;
    srv->limits = *limits;
    srv->gate = gate;
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
        free_server(srv);
        return NULL;
    }
    srv_metrics_show_pool(srv->pool);
    srv->quiesced_fd = MHD_INVALID_SOCKET;
    atomic_init(&srv->in_flight, 0);
    atomic_init(&srv->admitted, 0);
    atomic_init(&srv->serving, 0);
    atomic_init(&srv->draining, 0);
    atomic_init(&srv->stopping, 0);
    return srv;
}

/* libmicrohttpd's daemon for srv on ss (flags as bind_address left
 * them), HTTPS with tls when it holds a certificate, opts->threads
 * workers; NULL when it cannot start (errno says why). */
static struct MHD_Daemon *start_daemon(srv_http *srv, const srv_options *opts,
                                       const srv_tls_keys *tls, unsigned flags,
                                       struct sockaddr_storage *ss,
                                       unsigned connections) {
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

    return MHD_start_daemon(
        flags, (uint16_t)opts->port, &on_accept, srv, &on_request, srv,
        MHD_OPTION_EXTERNAL_LOGGER, &mhd_log, srv, MHD_OPTION_ARRAY,
        tls_options, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)ss,
        MHD_OPTION_ARRAY, pool_options, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned int)opts->timeout_s, MHD_OPTION_CONNECTION_LIMIT, connections,
        MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONNECTION_MEMORY_BYTES,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, (unsigned int)LISTEN_BACKLOG,
        MHD_OPTION_URI_LOG_CALLBACK, &on_uri, srv, MHD_OPTION_NOTIFY_COMPLETED,
        &on_completed, srv, MHD_OPTION_NOTIFY_CONNECTION, &on_connection, srv,
        MHD_OPTION_END);
}

srv_http *srv_http_start(const srv_options *opts, const api_limits *limits,
                         srv_gate *gate, const srv_tls_keys *tls) {
    /* MHD_USE_TURBO: read, write and accept before polling where that
     * is likely to work; 15% less CPU per small request (tests/bench).
     * MHD_USE_POLL, not epoll: with libmicrohttpd 0.9.75's epoll, about
     * one in five clients that close mid-upload stays in CLOSE_WAIT with
     * its body buffer until --timeout (64 of 300 in tests/load); poll
     * sees every close, at the same CPU per request. */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
                     MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_USE_TURBO |
                     MHD_ALLOW_SUSPEND_RESUME;
    struct sockaddr_storage ss;
    if (bind_address(opts, &ss, &flags) != 0)
        return NULL;
    unsigned connections = srv_http_connection_limit();
    srv_http *srv = new_server(opts, limits, gate, tls, connections);
    if (srv == NULL)
        return NULL;
    srv->daemon = start_daemon(srv, opts, tls, flags, &ss, connections);
    if (srv->daemon == NULL) {
        int in_use = errno == EADDRINUSE;
        srv_log_message("error", "cannot listen on %s port %u%s", opts->bind,
                        opts->port,
                        in_use ? ": the port is in use; stop what holds it, "
                                 "or pick another with --port N (make run "
                                 "PORT=N), or --port 0 for a free one"
                               : "");
        free_server(srv);
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
    srv_metrics_show_pool(NULL);
    srv_compute_pool_free(srv->pool);
    srv->pool = NULL;
    MHD_stop_daemon(srv->daemon);
    if (srv->quiesced_fd != MHD_INVALID_SOCKET)
        close(srv->quiesced_fd);
    srv_conn_slots_free(srv->slots);
    srv_conn_watch_stop(srv->watch);
    free(srv);
}
