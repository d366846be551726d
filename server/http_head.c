/*
 * http_head.c — what the request line and headers decide (http_internal.h):
 * the framing of RFC 9112, the client's address, the gate's admission,
 * and the answers given before any body byte.
 */
#include "http.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "conn_watch.h"
#include "framing.h"
#include "http_internal.h"

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

enum MHD_Result srv_http_answer_early(srv_request *r,
                                      struct MHD_Connection *conn,
                                      const char *url, int close_conn) {
    switch (r->early) {
    case EARLY_URI_TOO_LONG:
        return srv_http_answer_problem(
            r, conn, MHD_HTTP_URI_TOO_LONG,
            "the request target is longer than 8192 bytes", close_conn);
    case EARLY_HEADERS_TOO_LARGE:
        return srv_http_answer_problem(
            r, conn, MHD_HTTP_REQUEST_HEADER_FIELDS_TOO_LARGE,
            "the request header block is larger than 16384 bytes", close_conn);
    case EARLY_BAD_FRAMING:
        return srv_http_answer_problem(
            r, conn, MHD_HTTP_BAD_REQUEST,
            "Transfer-Encoding must end with chunked, "
            "written as the bare word (RFC 9112 section "
            "6.3)",
            1);
    case EARLY_CODING_UNKNOWN:
        return srv_http_answer_problem(
            r, conn, MHD_HTTP_NOT_IMPLEMENTED,
            "chunked is the only transfer coding understood "
            "here (RFC 9112 section 6.1)",
            1);
    case EARLY_PREFLIGHT:
        return srv_http_answer_preflight(r, conn, url, close_conn);
    case EARLY_NONE:
        break;
    }
    return MHD_NO;
}

enum MHD_Result srv_http_add_forwarded_for(void *cls, enum MHD_ValueKind kind,
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
    MHD_get_connection_values(conn, MHD_HEADER_KIND,
                              &srv_http_add_forwarded_for, &ff);
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    srv_gate_request in = {
        .route = route,
        .peer = ci != NULL ? ci->client_addr : NULL,
        .forwarded_for = ff.value,
        .n_forwarded_for = ff.n,
        .authorization = srv_http_header(conn, MHD_HTTP_HEADER_AUTHORIZATION),
        .in_flight = atomic_load(&r->srv->admitted),
        .now_s = (double)now.tv_sec + (double)now.tv_nsec / 1e9,
    };
    r->gate_route = route;
    r->refused =
        srv_gate_admit(gate, &in, &r->ticket, &r->retry_after_s, &r->token);
    r->grader = r->refused == SRV_GATE_PASS &&
                srv_gate_is_grader(gate, in.authorization);
    /* a token shown: its connection is let go last (conn_watch.h) */
    if (r->refused == SRV_GATE_PASS && in.authorization != NULL &&
        srv_gate_config_of(gate)->auth != NULL &&
        !srv_gate_route_open(gate, route))
        srv_conn_watch_authenticated(r->watched);
}

enum MHD_Result srv_http_answer_refusal(srv_request *r,
                                        struct MHD_Connection *conn,
                                        const char *url, int close_conn) {
    api_response res;
    memset(&res, 0, sizeof res);
    srv_gate_respond(r->srv->gate, &res, r->refused, url, r->retry_after_s,
                     r->token);
    res.route = r->gate_route; /* a refusal still counts for its route */
    r->refusal = r->refused == SRV_GATE_RATE_LIMITED ? SRV_REFUSED_RATE_LIMITED
                 : r->refused == SRV_GATE_TOO_CONCURRENT
                     ? SRV_REFUSED_TOO_CONCURRENT
                 : r->refused == SRV_GATE_OVERLOADED ? SRV_REFUSED_OVERLOADED
                                                     : SRV_REFUSED_NONE;
    if (res.body == NULL)
        return MHD_NO;
    enum MHD_Result rc = srv_http_answer(r, conn, &res, close_conn);
    api_response_free(&res);
    return rc;
}

/* s into dst (cap bytes), cut to fit: snprintf's "%s" without its cost. */
static void copy_cut(char *dst, size_t cap, const char *s) {
    size_t n = strnlen(s, cap - 1);
    memcpy(dst, s, n);
    dst[n] = '\0';
}

/* The client of a request, as the per-client limits name it
 * (client_addr.h): the peer, or what trusted proxies recorded in
 * X-Forwarded-For. Returns 0, -1 when the peer is not IP. */
int srv_http_client_of(srv_http *srv, struct MHD_Connection *conn,
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
    MHD_get_connection_values(conn, MHD_HEADER_KIND,
                              &srv_http_add_forwarded_for, &ff);
    *client = srv_client_addr(&peer, &srv->trusted, ff.value, ff.n);
    return 0;
}

/* Note what the request line and the connection say of r: its method
 * and path (cut to fit), its peer, its watch and its request id. */
static void note_request(srv_request *r, struct MHD_Connection *conn,
                         const char *url, const char *method) {
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
    srv_request_id_make(r->request_id, srv_http_header(conn, "X-Request-Id"));
    srv_addr client;
    if (srv_http_client_of(r->srv, conn, &client) == 0)
        srv_addr_format(r->client, sizeof r->client, &client);
}

/* The framing of the head (framing.h) into *framing: its headers'
 * lengths and codings, a NUL byte hidden in the head or the path.
 * framing->detail says why it is ambiguous, else NULL. */
static void read_framing(srv_request *r, struct MHD_Connection *conn,
                         const char *method, const char *version,
                         srv_framing *framing) {
    srv_framing_init(framing);
    /* two spans per line, and the request line's three */
    size_t lines =
        (size_t)MHD_get_connection_values(conn, MHD_HEADER_KIND, NULL, NULL);
    framing_walk walk = {framing, NULL, 0, 2 * lines + 3};
    walk.spans = malloc(walk.cap * sizeof *walk.spans);
    if (walk.spans == NULL)
        walk.cap = 0;
    MHD_get_connection_values_n(conn, MHD_HEADER_KIND, &add_framing, &walk);
    if (!framing->detail && head_hides_nul(r, conn, method, version, &walk))
        framing->detail = SRV_FRAMING_NUL_IN_HEAD;
    free(walk.spans);
    if (r->nul_in_path && !framing->detail)
        framing->detail = "the request target's path holds %00, a NUL byte, "
                          "which no path may contain (RFC 3986 section 7.3)";
    srv_framing_finish(framing, version);
}

/* What the head alone answers (r->early), in the order of checks: a
 * Transfer-Encoding (te, NULL when none) that hides the body's length or
 * names a coding not understood, a request target or header block over
 * its limit, a preflight; EARLY_NONE otherwise. */
static void decide_early(srv_request *r, struct MHD_Connection *conn,
                         const char *method, const char *te, int chunked) {
    size_t header_bytes = 0;
    MHD_get_connection_values(conn, MHD_HEADER_KIND, &srv_http_add_header_bytes,
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
}

/* Make room for a body the api takes (length: declared, or -1 for
 * chunked; route_flags: its route's): a chunked body to a route that
 * takes none is refused unread, as one of a declared length is
 * (api_precheck); a declared length that can never fit the memory budget
 * is refused now; one that can gets its buffer, reserved as its bytes
 * arrive (srv_http_on_body), so that heads which announce large bodies
 * and send nothing hold nothing. */
static enum MHD_Result make_room(srv_request *r, struct MHD_Connection *conn,
                                 const char *url, long long length,
                                 unsigned route_flags) {
    if (length < 0 &&
        !(route_flags & (API_ROUTE_JSON_BODY | API_ROUTE_RAW_BODY)))
        return srv_http_answer_problem(
            r, conn, MHD_HTTP_CONTENT_TOO_LARGE,
            "this route takes no body, and this request "
            "sends one (chunked); send it without one",
            1);
    if (length > 0 &&
        (unsigned long long)length <= r->srv->limits.max_body_bytes) {
        api_budget_usage u;
        api_budget_stats(&u);
        if (u.total > 0 && (uint64_t)length > u.total)
            return srv_http_answer_no_room(r, conn, url, API_BUDGET_NEVER,
                                           (uint64_t)length, 1);
        r->body = srv_http_body_alloc(r, (size_t)length);
        if (r->body == NULL)
            return MHD_NO;
        r->body_cap = (size_t)length;
    }
    return MHD_YES;
}

enum MHD_Result srv_http_on_headers(srv_request *r, struct MHD_Connection *conn,
                                    const char *url, const char *method,
                                    const char *version) {
    note_request(r, conn, url, method);
    /* an ambiguous head: nothing after it may be read as a request */
    srv_framing framing;
    read_framing(r, conn, method, version, &framing);
    if (framing.detail != NULL)
        return srv_http_answer_problem(r, conn, MHD_HTTP_BAD_REQUEST,
                                       framing.detail, 1);
    /* -1: no length (chunked, or no body); beyond int64: too large */
    long long length = !framing.has_length ? -1
                       : framing.length > (unsigned long long)INT64_MAX
                           ? INT64_MAX
                           : (long long)framing.length;
    const char *te = srv_http_header(conn, MHD_HTTP_HEADER_TRANSFER_ENCODING);
    int chunked = te != NULL && ends_with_chunked(te);
    r->has_body = length > 0 || chunked;
    /* HTTP/1.0 has no chunked coding: read the body, then close (RFC
     * 9112 section 6.1) */
    r->close_after = te != NULL && strcmp(version, "HTTP/1.0") == 0;
    if (srv_conn_watch_head_done(r->watched, r->has_body) != 0)
        return MHD_NO; /* too late: cut by the header deadline */

    decide_early(r, conn, method, te, chunked);
    if (r->early == EARLY_BAD_FRAMING || r->early == EARLY_CODING_UNKNOWN)
        return srv_http_answer_early(r, conn, url, 1);
    if (r->early != EARLY_NONE)
        return r->has_body ? srv_http_answer_early(r, conn, url, 1) : MHD_YES;
    int gated = r->srv->gate != NULL && srv_gate_active(r->srv->gate);
    if (!r->has_body && !gated)
        return MHD_YES; /* api_handle makes the same checks on the last call */

    api_request req;
    api_response res;
    srv_http_fill_api_request(&req, r, conn, url);
    memset(&res, 0, sizeof res);
    int stop = api_precheck(&req, length, &res) != 0;
    unsigned route_flags = api_route_flags(res.route);
    if (gated && (!stop || (res.status != MHD_HTTP_NOT_FOUND &&
                            res.status != MHD_HTTP_METHOD_NOT_ALLOWED))) {
        admit(r, conn, res.route);
        if (r->refused != SRV_GATE_PASS) {
            api_response_free(&res);
            return r->has_body ? srv_http_answer_refusal(r, conn, url, 1)
                               : MHD_YES;
        }
    }
    if (!r->has_body) {
        api_response_free(&res);
        return MHD_YES; /* api_handle makes the same checks on the last call */
    }
    if (stop) {
        enum MHD_Result rc = srv_http_answer(r, conn, &res, 1);
        api_response_free(&res);
        return rc;
    }
    api_response_free(&res);
    return make_room(r, conn, url, length, route_flags);
}
