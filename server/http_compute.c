/*
 * http_compute.c — a request run on the compute threads (http_internal.h):
 * where it runs, its queue place, and its answer or refusal handed back
 * to the connection.
 */
#include "http.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn_watch.h"
#include "http_internal.h"

int srv_http_where_to_run(unsigned flags, size_t body_len, const char *accept) {
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
    r->job_response.compute_ms = -1;
    r->job_response.route = api_route_of_path(r->job_request.path);
    api_refuse(&r->job_response, r->job_request.path,
               MHD_HTTP_SERVICE_UNAVAILABLE, "%s", detail);
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
    else if (srv_http_over_address_share(r, &held, &share)) {
        /* checked again here: the answers of this address's jobs that
         * ran while this one waited count now */
        char detail[512];
        api_budget_share_refusal(detail, sizeof detail, held, share);
        refuse_job(r, detail);
        r->refusal = SRV_REFUSED_ADDRESS_SHARE;
    } else
        api_handle(&r->job_request, &r->job_response);
    compress_job_answer(r);
    /* its client left while it waited or computed: nobody reads this */
    r->abandoned = srv_conn_watch_gone(r->watched);
    r->job_counted = r->job_response.charged;
    srv_http_address_holds(r, (int64_t)r->job_counted);
    atomic_store(&r->computed, 1);
    MHD_resume_connection(r->conn);
}

enum MHD_Result srv_http_answer_refused(srv_request *r,
                                        struct MHD_Connection *conn,
                                        const char *url, int status,
                                        srv_refusal reason, const char *detail,
                                        int close_conn) {
    r->refusal = reason;
    api_response res;
    memset(&res, 0, sizeof res);
    res.compute_ms = -1;
    res.route = api_route_of_path(url);
    api_refuse(&res, url, status, "%s", detail);
    if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
        r->retry_after_s = 1;
    enum MHD_Result rc =
        res.body ? srv_http_answer(r, conn, &res, close_conn) : MHD_NO;
    api_response_free(&res);
    srv_http_body_free(r);
    return rc;
}

enum MHD_Result srv_http_answer_no_room(srv_request *r,
                                        struct MHD_Connection *conn,
                                        const char *url, int room,
                                        uint64_t bytes, int close_conn) {
    char detail[512];
    api_budget_refusal(detail, sizeof detail, room, "the body", bytes);
    int never = room == API_BUDGET_NEVER;
    return srv_http_answer_refused(
        r, conn, url,
        never ? MHD_HTTP_CONTENT_TOO_LARGE : MHD_HTTP_SERVICE_UNAVAILABLE,
        never ? SRV_REFUSED_NONE : SRV_REFUSED_MEMORY, detail, close_conn);
}

/* The compute lane of a request of the route's flags and body_len
 * (compute_pool.h): the route's own, else interactive but for a body
 * beyond BULK_BODY_BYTES, which is no click. */
static srv_lane lane_of(unsigned flags, size_t body_len) {
    if (flags & API_ROUTE_LANE_BULK)
        return SRV_LANE_BULK;
    if (flags & API_ROUTE_LANE_GRADING)
        return SRV_LANE_GRADING;
    return body_len > BULK_BODY_BYTES ? SRV_LANE_BULK : SRV_LANE_INTERACTIVE;
}

enum MHD_Result srv_http_compute_off_thread(srv_request *r,
                                            struct MHD_Connection *conn,
                                            const char *url) {
    srv_http_fill_api_request(&r->job_request, r, conn, url);
    r->job_request.may_wait = 1; /* a compute thread may wait for memory */
    /* stopped when its client leaves */
    r->job_request.abandoned =
        srv_conn_watch_computing(r->srv->watch, r->watched);
    r->gzip_wanted =
        srv_gzip_accepted(srv_http_header(conn, "Accept-Encoding"));
    memset(&r->job_response, 0, sizeof r->job_response);
    r->conn = conn;
    srv_addr client;
    int known = srv_http_client_of(r->srv, conn, &client) == 0;
    if (r->token != NULL) { /* behind one NAT, a token is the client */
        client = srv_client_of_token(r->token);
        known = 1;
    }
    MHD_suspend_connection(conn);
    if (srv_compute_pool_submit(
            r->srv->pool, compute_job, r,
            lane_of(api_route_flags(api_route_of_path(url)), r->body_len),
            known ? &client : NULL) == 0)
        return MHD_YES;
    MHD_resume_connection(conn);
    srv_conn_watch_computed(r->srv->watch, r->watched);
    char detail[160];
    snprintf(detail, sizeof detail,
             "the server is busy: %u requests are already waiting to be "
             "computed; retry after 1 s",
             COMPUTE_QUEUE_MAX);
    return srv_http_answer_refused(r, conn, url, MHD_HTTP_SERVICE_UNAVAILABLE,
                                   SRV_REFUSED_QUEUE_FULL, detail, 0);
}

enum MHD_Result srv_http_answer_kept_or_queue(srv_request *r,
                                              struct MHD_Connection *conn,
                                              const char *url) {
    api_request req;
    api_response res;
    srv_http_fill_api_request(&req, r, conn, url);
    if (!api_answer_ready(&req, &res))
        return srv_http_compute_off_thread(r, conn, url);
    enum MHD_Result rc = srv_http_answer(r, conn, &res, 0);
    api_response_free(&res);
    srv_http_body_free(r);
    return rc;
}

enum MHD_Result srv_http_answer_computed(srv_request *r,
                                         struct MHD_Connection *conn) {
    srv_conn_watch_computed(r->srv->watch, r->watched);
    enum MHD_Result rc = srv_http_answer(r, conn, &r->job_response, 0);
    api_response_free(&r->job_response);
    srv_http_body_free(r);
    return rc;
}
