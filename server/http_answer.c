/*
 * http_answer.c — answers handed to libmicrohttpd (http_internal.h): the
 * headers every answer carries, and the body whole, streamed or
 * compressed as it is sent, read at a pace a slow reader is seen at.
 */
#include "http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn_watch.h"
#include "cors.h"
#include "csp.h"
#include "http_internal.h"
#include "log.h"

const char *srv_http_header(struct MHD_Connection *conn, const char *name) {
    return MHD_lookup_connection_value(conn, MHD_HEADER_KIND, name);
}

enum MHD_Result srv_http_add_header_bytes(void *cls, enum MHD_ValueKind kind,
                                          const char *key, const char *value) {
    (void)kind;
    size_t *sum = cls;
    *sum += strlen(key) + 2 + (value ? strlen(value) : 0) + 2;
    return MHD_YES;
}

int srv_http_add_common_headers(struct MHD_Response *resp,
                                struct MHD_Connection *conn,
                                const srv_request *r, int vary_accept,
                                int vary_encoding) {
    int vary_origin = 0;
    const char *allow_origin =
        srv_cors_allow_origin(srv_http_header(conn, "Origin"), &vary_origin);
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
    return ok ? 0 : -1;
}

/* Cache-Control, and the ETag of an answer that has one: a browser may
 * keep it and ask again with If-None-Match (304 without computing);
 * every other answer is stored nowhere. */
static int add_cache_headers(struct MHD_Response *resp, const char *etag) {
    if (etag == NULL || etag[0] == '\0')
        return MHD_add_response_header(resp, "Cache-Control", "no-store") ==
               MHD_YES;
    return MHD_add_response_header(resp, "Cache-Control", "no-cache") ==
               MHD_YES &&
           MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, etag) == MHD_YES;
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

/* How the answer goes out compressed, for a client whose Accept-Encoding
 * takes gzip: a small body compressed here at once (*body and *len
 * replaced), a large or streamed one as it is sent (r->gz, its state
 * reserved from the memory budget first, else it goes out as it is); a
 * job's answer may come compressed already (compute_job). *vary_encoding
 * is set when the answer depends on Accept-Encoding. Returns 1 when the
 * answer goes out gzipped. */
static int choose_gzip(srv_request *r, struct MHD_Connection *conn,
                       const api_response *res, char **body, size_t *len,
                       int streamed, int *vary_encoding) {
    /* compressed on the compute thread that made it (compute_job) */
    int gzipped = res == &r->job_response && r->job_gzipped;
    /* raw tensor bytes hardly compress, and their length goes first */
    *vary_encoding = gzipped || (res->inference_header_length == 0 &&
                                 srv_gzip_eligible(streamed ? SIZE_MAX : *len));
    int wants_gzip =
        !gzipped && *vary_encoding &&
        srv_gzip_accepted(srv_http_header(conn, "Accept-Encoding"));
    /* HEAD too, so that its Content-Length is the one GET would send */
    if (!streamed && wants_gzip && *len < SRV_GZIP_WHOLE_MAX) {
        char *z;
        size_t zlen;
        int kept = res->route != NULL &&
                   (api_route_flags(res->route) & API_ROUTE_STATIC) != 0;
        if ((kept ? srv_gzip_kept(res->route, &z, &zlen, *body, *len)
                  : srv_gzip_compress(&z, &zlen, *body, *len)) == 0) {
            free(*body);
            *body = z;
            *len = zlen;
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
            srv_http_address_holds(r, SRV_GZIP_STREAM_BYTES);
        } else {
            api_budget_give(SRV_GZIP_STREAM_BYTES);
        }
    }
    return gzipped;
}

/* libmicrohttpd's response for body[0 .. len) (owned from here on), or
 * for r->stream when streamed: compressed as it is sent (r->gz), read
 * from the stream, handed over a piece at a time when large, else whole.
 * NULL when it cannot be made. */
static struct MHD_Response *make_response(srv_request *r, char *body,
                                          size_t len, int streamed) {
    struct MHD_Response *resp;
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
    return resp;
}

/* The headers of a refusal: WWW-Authenticate for a 401, and Retry-After
 * for rate_limited and overloaded (the gate's estimate, else a second).
 * Returns 1 when every header was added. */
static int add_refusal_headers(struct MHD_Response *resp, const srv_request *r,
                               const api_response *res) {
    int ok = 1;
    if (res->status == MHD_HTTP_UNAUTHORIZED) {
        const char *www = srv_gate_www_authenticate(r->refused);
        ok &= MHD_add_response_header(resp, "WWW-Authenticate",
                                      www != NULL ? www : "Bearer") == MHD_YES;
    }
    if (r->retry_after_s > 0 || res->status == MHD_HTTP_TOO_MANY_REQUESTS ||
        (res->status == MHD_HTTP_SERVICE_UNAVAILABLE &&
         res->content_type != NULL &&
         strcmp(res->content_type, "application/problem+json") == 0)) {
        char retry[16];
        snprintf(retry, sizeof retry, "%u",
                 r->retry_after_s > 0 ? r->retry_after_s : 1);
        ok &= MHD_add_response_header(resp, "Retry-After", retry) == MHD_YES;
    }
    return ok;
}

/* Every header of the answer res to r: the common ones (CORS, security),
 * its content's, Server-Timing, a refusal's, the lab page's
 * Content-Security-Policy and Connection: close. Returns 1 when every
 * header was added. */
static int add_answer_headers(struct MHD_Response *resp,
                              struct MHD_Connection *conn, srv_request *r,
                              const api_response *res, int vary_encoding,
                              int gzipped, int close_conn) {
    int ok = srv_http_add_common_headers(resp, conn, r, res->vary_accept,
                                         vary_encoding) == 0;
    ok &= add_cache_headers(resp, res->etag);
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
    ok &= add_refusal_headers(resp, r, res);
    /* the lab page: its own origin only, its inline code by hash */
    const char *csp = srv_csp_lab();
    if (csp != NULL && res->status == MHD_HTTP_OK && res->route != NULL &&
        strcmp(res->route, "/") == 0)
        ok &= MHD_add_response_header(resp, "Content-Security-Policy", csp) ==
              MHD_YES;
    if (close_conn || r->close_after || atomic_load(&r->srv->draining))
        ok &= MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION,
                                      "close") == MHD_YES;
    return ok;
}

enum MHD_Result srv_http_answer(srv_request *r, struct MHD_Connection *conn,
                                api_response *res, int close_conn) {
    if (srv_conn_watch_busy(r->watched) != 0)
        return MHD_NO; /* cut for being slow: it closes unanswered */
    if (res->no_room && r->refusal == SRV_REFUSED_NONE)
        r->refusal = SRV_REFUSED_MEMORY; /* the api's own wait for room */
    /* the answer's reservation is held until the request is freed */
    r->answer_charged += res->charged;
    if (res == &r->job_response)
        r->job_counted = 0; /* counted to the address already */
    else
        srv_http_address_holds(r, (int64_t)res->charged);
    res->charged = 0;
    char *body = res->body;
    size_t len = res->body_len;
    res->body = NULL;
    int streamed = res->stream != NULL;
    int vary_encoding;
    int gzipped =
        choose_gzip(r, conn, res, &body, &len, streamed, &vary_encoding);
    if (streamed) { /* r owns the stream until on_completed */
        r->stream = res->stream;
        res->stream = NULL;
    }
    struct MHD_Response *resp = make_response(r, body, len, streamed);
    if (resp == NULL)
        return MHD_NO;
    int ok = add_answer_headers(resp, conn, r, res, vary_encoding, gzipped,
                                close_conn);
    if (close_conn && r->has_body)
        r->closing_early = 1;
    enum MHD_Result rc = MHD_NO;
    if (ok)
        rc = MHD_queue_response(conn, (unsigned)res->status, resp);
    MHD_destroy_response(resp);
    if (rc == MHD_YES) {
        /* at --min-response-rate, and fast enough for what it holds */
        srv_conn_watch_sending(r->watched, r->answer_charged);
        srv_http_release_places(r);
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

enum MHD_Result srv_http_answer_problem(srv_request *r,
                                        struct MHD_Connection *conn, int status,
                                        const char *detail, int close_conn) {
    api_response res;
    memset(&res, 0, sizeof res);
    res.compute_ms = -1;
    api_refuse(&res, NULL, status, "%s", detail);
    if (res.body == NULL)
        return MHD_NO;
    enum MHD_Result rc = srv_http_answer(r, conn, &res, close_conn);
    api_response_free(&res);
    return rc;
}
