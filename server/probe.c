/*
 * probe.c — the probe listener (see probe.h): every request is decided
 * and answered from its head alone, on the listener's own thread; nothing
 * here waits for anything the main port holds (its compute pool, memory
 * budget, connection slots or access log).
 */
#include "probe.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "conn_watch.h"
#include "framing.h"
#include "log.h"
#include "metrics.h"
#include "ratelimit.h"
#include "refusals.h"
#include "request_id.h"

#define PROBE_METHODS "GET, HEAD"
/* Room for the paths the probe port answers, as the 404 names them. */
#define PATHS_MAX 256
/* Bytes of a probe's head (request line and headers) kept in memory. */
#define PROBE_MEMORY_BYTES (16 * 1024)
/* Connections waiting to be accepted: a flood of connects must not fill
 * it before a probe is taken (a dropped SYN waits a second to be sent
 * again). */
#define PROBE_BACKLOG 1024

struct srv_probe {
    struct MHD_Daemon *daemon;
    srv_conn_watch *watch; /* head deadlines, connections let go */
    srv_ratelimit *rl;     /* SRV_PROBE_RATE per address */
    srv_gate *gate;        /* borrowed; NULL: no token anywhere */
    api_limits limits;
    unsigned port;
    char paths[PATHS_MAX]; /* "/healthz, /v2/health/live, ..." */
};

/* One request on the probe port, from its first byte to completion. */
typedef struct {
    struct timespec start;
    char *query;        /* raw query without '?', or NULL */
    const char *method; /* NULL until the head is in */
    const char *route;  /* api_response.route, for the metrics */
    int status;         /* 0 until an answer is queued */
    uint64_t bytes;     /* body bytes of the answer (0 for HEAD) */
    char request_id[SRV_REQUEST_ID_MAX + 1];
    srv_watched *watched; /* its connection's record (conn_watch.h) */
} probe_request;

/* MHD_OPTION_URI_LOG_CALLBACK: the request's first byte; its state, with
 * the query, which the access handler does not see raw. */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn) {
    (void)cls;
    (void)conn;
    probe_request *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    clock_gettime(CLOCK_MONOTONIC, &r->start);
    const char *q = uri != NULL ? strchr(uri, '?') : NULL;
    if (q != NULL)
        r->query = strdup(q + 1); /* NULL when memory runs out: no query */
    srv_metrics_request_started();
    return r;
}

/* MHD_OPTION_NOTIFY_COMPLETED: count the request and free its state. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe) {
    (void)cls;
    (void)conn;
    (void)toe;
    probe_request *r = *con_cls;
    if (r == NULL)
        return;
    *con_cls = NULL;
    int cut = srv_conn_watch_answered(r->watched); /* a 408 of its head */
    if (r->status == 0 && cut)
        r->status = cut;
    srv_conn_watch_idle(r->watched); /* a kept-alive connection's next head */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    srv_metrics_sample sample = {
        .route = r->route,
        .method = r->method,
        .status = r->status,
        .request_bytes = 0, /* bodies are never read here */
        .response_bytes = r->bytes,
        .duration_s = (double)(now.tv_sec - r->start.tv_sec) +
                      (double)(now.tv_nsec - r->start.tv_nsec) / 1e9,
    };
    srv_metrics_request_finished(&sample);
    free(r->query);
    free(r);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
static void mhd_log(void *cls, const char *fmt, va_list ap) {
    (void)cls;
    (void)fmt;
    (void)ap;
    /* libmicrohttpd reports client behaviour (resets, timeouts) here;
     * failing to start is reported by srv_probe_start */
}

static const char *header(struct MHD_Connection *conn, const char *name) {
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

/* 1 when the head announces a body: a Transfer-Encoding, or a
 * Content-Length other than 0 (libmicrohttpd refuses a malformed one). */
static int has_body(struct MHD_Connection *conn) {
    if (header(conn, MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL)
        return 1;
    const char *cl = header(conn, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl == NULL)
        return 0;
    while (*cl == '0')
        cl++;
    return *cl != '\0';
}

/* Queue res (its body taken over) with the headers every answer of attnd
 * carries that matter to a probe; close_conn: the connection closes after
 * it (a body is still unread). */
static enum MHD_Result answer(probe_request *r, struct MHD_Connection *conn,
                              api_response *res, int close_conn,
                              const char *www_authenticate) {
    char *body = res->body;
    size_t len = res->body_len;
    res->body = NULL;
    struct MHD_Response *resp =
        MHD_create_response_from_buffer_with_free_callback(len, body, &free);
    if (resp == NULL) {
        free(body);
        return MHD_NO;
    }
    int ok = 1;
    if (res->content_type != NULL)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                                      res->content_type) == MHD_YES;
    if (res->allow != NULL)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW,
                                      res->allow) == MHD_YES;
    if (www_authenticate != NULL)
        ok &= MHD_add_response_header(resp, "WWW-Authenticate",
                                      www_authenticate) == MHD_YES;
    ok &=
        MHD_add_response_header(resp, "X-Request-Id", r->request_id) == MHD_YES;
    ok &= MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff") ==
          MHD_YES;
    ok &= MHD_add_response_header(resp, "Cache-Control", "no-store") == MHD_YES;
    if (res->status == MHD_HTTP_TOO_MANY_REQUESTS)
        ok &= MHD_add_response_header(resp, "Retry-After", "1") == MHD_YES;
    if (close_conn)
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION,
                                      "close") == MHD_YES;
    enum MHD_Result rc = MHD_NO;
    if (ok && srv_conn_watch_busy(r->watched) == 0)
        rc = MHD_queue_response(conn, (unsigned)res->status, resp);
    MHD_destroy_response(resp);
    if (rc == MHD_YES) {
        r->status = res->status;
        r->route = res->route;
        r->bytes = strcmp(r->method, MHD_HTTP_METHOD_HEAD) == 0 ? 0 : len;
    }
    return rc;
}

/* 1 when the client of conn has asked more than SRV_PROBE_RATE a second
 * (a token bucket of SRV_PROBE_BURST): every probe is answered from the
 * listener's one thread, so the CPU of a flood of pipelined /metrics is
 * charged to the address that sends it. */
static int too_often(srv_probe *p, struct MHD_Connection *conn) {
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    srv_addr client;
    if (p->rl == NULL || ci == NULL ||
        srv_addr_from_sockaddr(&client, ci->client_addr) != 0)
        return 0;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    srv_rl_ticket ticket;
    unsigned retry_after_s;
    srv_rl_verdict v = srv_ratelimit_admit(
        p->rl, &client, (double)now.tv_sec + (double)now.tv_nsec / 1e9, &ticket,
        &retry_after_s);
    srv_ratelimit_release(p->rl, &ticket);
    return v != SRV_RL_ADMIT;
}

/* Decide on a request from its head and answer it; body: the head
 * announces a body, still unread. */
/* The main port's token rule for route: -1 when the request passes, else
 * the MHD_Result of its refusal, answered. */
static int gate(srv_probe *p, probe_request *r, struct MHD_Connection *conn,
                const char *route, const char *path) {
    if (p->gate == NULL)
        return -1;
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    srv_gate_request in = {
        .route = route,
        .peer = ci != NULL ? ci->client_addr : NULL,
        .authorization = header(conn, MHD_HTTP_HEADER_AUTHORIZATION),
        .in_flight = 1,
    };
    srv_rl_ticket ticket;
    unsigned retry_after_s;
    const char *token;
    srv_gate_verdict v =
        srv_gate_admit(p->gate, &in, &ticket, &retry_after_s, &token);
    srv_gate_release(p->gate, &ticket); /* nothing held: answered now */
    if (v == SRV_GATE_PASS)
        return -1;
    api_response res;
    memset(&res, 0, sizeof res);
    res.compute_ms = -1;
    srv_gate_respond(p->gate, &res, v, path, retry_after_s, token);
    res.route = route;
    if (res.body == NULL)
        return MHD_NO;
    enum MHD_Result rc = answer(r, conn, &res, 0, srv_gate_www_authenticate(v));
    api_response_free(&res);
    return (int)rc;
}

static enum MHD_Result decide(srv_probe *p, probe_request *r,
                              struct MHD_Connection *conn, const char *path,
                              int body) {
    api_response res;
    memset(&res, 0, sizeof res);
    res.compute_ms = -1;
    const char *route = api_route_of_path(path);
    if (too_often(p, conn)) {
        srv_refused(SRV_REFUSED_RATE_LIMITED);
        api_refuse(&res, path, MHD_HTTP_TOO_MANY_REQUESTS,
                   "the probe port answers at most %d requests a second "
                   "from one address (bursts of %d); retry after 1 s",
                   SRV_PROBE_RATE, SRV_PROBE_BURST);
        res.route = route != NULL ? route : "other";
    } else if (route == NULL ||
               !(api_route_flags(route) & API_ROUTE_UNLIMITED)) {
        api_refuse(&res, path, MHD_HTTP_NOT_FOUND, /* /v2: {"error"} */
                   "the probe port answers GET and HEAD of %s only; every "
                   "other route is on the main port",
                   p->paths);
        res.route = "other";
    } else if (strcmp(r->method, MHD_HTTP_METHOD_GET) != 0 &&
               strcmp(r->method, MHD_HTTP_METHOD_HEAD) != 0) {
        api_refuse(&res, path, MHD_HTTP_METHOD_NOT_ALLOWED,
                   "%s answers GET and HEAD only", route);
        res.allow = PROBE_METHODS;
        res.route = route;
    } else if (body) {
        /* an error of HTTP itself: problem+json whatever the path */
        api_refuse(&res, NULL, MHD_HTTP_CONTENT_TOO_LARGE,
                   "a probe takes no body, and this request sends one; "
                   "send it without one");
        res.route = route;
    }
    if (res.status != 0) {
        if (res.body == NULL)
            return MHD_NO;
        enum MHD_Result rc = answer(r, conn, &res, body, NULL);
        api_response_free(&res);
        return rc;
    }

    /* /metrics behind the main port's token rule (health is open) */
    int gated = gate(p, r, conn, route, path);
    if (gated >= 0)
        return (enum MHD_Result)gated;

    api_request req;
    memset(&req, 0, sizeof req);
    req.method = r->method;
    req.path = path;
    req.query = r->query;
    req.accept = header(conn, MHD_HTTP_HEADER_ACCEPT);
    req.limits = &p->limits;
    api_handle(&req, &res);
    enum MHD_Result rc = answer(r, conn, &res, 0, NULL);
    api_response_free(&res);
    return rc;
}

/* MHD_AccessHandlerCallback. A request without a body is answered on the
 * last call, so that its connection may be kept alive; one with a body on
 * the first (the head is in), unread, and its connection closes. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
                                  const char *url, const char *method,
                                  const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **con_cls) {
    (void)version;
    (void)upload_data;
    probe_request *r = *con_cls;
    if (r == NULL)
        return MHD_NO; /* out of memory at the first byte */
    if (r->method == NULL) {
        r->method = method;
        srv_request_id_make(r->request_id, header(conn, "X-Request-Id"));
        const union MHD_ConnectionInfo *sc =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
        r->watched = sc != NULL ? sc->socket_context : NULL;
        if (srv_conn_watch_head_done(r->watched, 0) != 0)
            return MHD_NO; /* too late: cut by the head deadline */
        if (has_body(conn))
            return decide(cls, r, conn, srv_framing_target_path(url), 1);
        return MHD_YES;
    }
    if (*upload_data_size > 0 || r->status != 0) {
        *upload_data_size = 0; /* what follows an answer is discarded */
        return MHD_YES;
    }
    return decide(cls, r, conn, srv_framing_target_path(url), 0);
}

/* MHD_OPTION_NOTIFY_CONNECTION: a connection is watched from set-up to
 * close, its record kept as the connection's socket context. */
static void on_connection(void *cls, struct MHD_Connection *conn,
                          void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
    srv_probe *p = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *fd =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context =
            fd != NULL ? srv_conn_watch_open(p->watch, fd->connect_fd) : NULL;
    } else {
        srv_conn_watch_close(p->watch, *socket_context);
        *socket_context = NULL;
    }
}

/* "/healthz, /v2/health/live, ..." into p->paths: the routes of the api's
 * table that no limit counts, each once. */
static void list_paths(srv_probe *p) {
    size_t n = 0;
    p->paths[0] = '\0';
    for (size_t i = 0; api_route_template(i) != NULL; i++) {
        const char *t = api_route_template(i);
        if (!(api_route_flags(t) & API_ROUTE_UNLIMITED))
            continue;
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            seen |= strcmp(api_route_template(j), t) == 0;
        if (seen)
            continue;
        int w = snprintf(p->paths + n, sizeof p->paths - n, "%s%s",
                         n > 0 ? ", " : "", t);
        if (w < 0 || (size_t)w >= sizeof p->paths - n)
            break;
        n += (size_t)w;
    }
}

srv_probe *srv_probe_start(const char *bind, unsigned port,
                           const api_limits *limits, srv_gate *gate) {
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    /* one internal polling thread with poll(2), as the main port's
     * (http.c explains why not epoll); no TLS: probes come from the node
     * or the cluster network */
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
                     MHD_USE_ITC | MHD_USE_ERROR_LOG;
    struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
    if (inet_pton(AF_INET, bind, &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons((uint16_t)port);
    } else if (inet_pton(AF_INET6, bind, &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons((uint16_t)port);
        flags |= MHD_USE_IPv6;
    } else {
        srv_log_message("error", "cannot parse bind address '%s'", bind);
        return NULL;
    }
    srv_probe *p = calloc(1, sizeof *p);
    if (p == NULL) {
        srv_log_message("error", "out of memory starting the probe listener");
        return NULL;
    }
    p->gate = gate;
    p->limits = *limits;
    list_paths(p);
    /* no body is ever read here, and answers are small: no rates */
    p->watch =
        srv_conn_watch_start(SRV_PROBE_CONNECTIONS, SRV_PROBE_HEAD_TIMEOUT_S,
                             SRV_PROBE_TIMEOUT_S, 0, 0, 1);
    p->rl = srv_ratelimit_new(SRV_PROBE_RATE, SRV_PROBE_BURST, 0);
    if (p->watch == NULL || p->rl == NULL) {
        srv_log_message("error", "out of memory starting the probe listener");
        srv_conn_watch_stop(p->watch);
        srv_ratelimit_free(p->rl);
        free(p);
        return NULL;
    }
    p->daemon = MHD_start_daemon(
        flags, (uint16_t)port, NULL, NULL, &on_request, p,
        MHD_OPTION_EXTERNAL_LOGGER, &mhd_log, p, MHD_OPTION_SOCK_ADDR,
        (struct sockaddr *)&ss, MHD_OPTION_CONNECTION_TIMEOUT,
        (unsigned int)SRV_PROBE_TIMEOUT_S, MHD_OPTION_CONNECTION_LIMIT,
        (unsigned int)SRV_PROBE_CONNECTIONS, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
        (size_t)PROBE_MEMORY_BYTES, MHD_OPTION_LISTEN_BACKLOG_SIZE,
        (unsigned int)PROBE_BACKLOG, MHD_OPTION_URI_LOG_CALLBACK, &on_uri, p,
        MHD_OPTION_NOTIFY_COMPLETED, &on_completed, p,
        MHD_OPTION_NOTIFY_CONNECTION, &on_connection, p,
        MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)SRV_PROBE_PER_ADDRESS,
        MHD_OPTION_END);
    if (p->daemon == NULL) {
        srv_conn_watch_stop(p->watch);
        srv_ratelimit_free(p->rl);
        int in_use = errno == EADDRINUSE;
        srv_log_message("error", "cannot listen for probes on %s port %u%s",
                        bind, port,
                        in_use ? ": the port is in use; pick another with "
                                 "--probe-port N"
                               : "");
        free(p);
        return NULL;
    }
    const union MHD_DaemonInfo *info =
        MHD_get_daemon_info(p->daemon, MHD_DAEMON_INFO_BIND_PORT);
    p->port = info != NULL ? info->port : port;
    return p;
}

unsigned srv_probe_port(const srv_probe *p) {
    return p->port;
}

void srv_probe_stop(srv_probe *p) {
    if (p == NULL)
        return;
    MHD_stop_daemon(p->daemon);
    srv_conn_watch_stop(p->watch);
    srv_ratelimit_free(p->rl);
    free(p);
}
