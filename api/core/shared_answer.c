/*
 * shared_answer.c — a request's answer shared with identical requests
 * (see shared_answer.h).
 */
#include "shared_answer.h"

#include <stdlib.h>
#include <string.h>

#include "request_key.h"
#include "route.h"

/* A route whose answer is a function of its request, whatever the order
 * of its members: one that computes, but the batch's (many requests, read
 * raw), the v2 front's (tensors as bytes beside the JSON) and /grade's (a
 * body graded keeps its answer's member order, and refuses a member
 * given twice: API_ROUTE_UNIQUE_MEMBERS). */
static int shares_answers(const api_route *r) {
    return (r->flags & API_ROUTE_COMPUTES) &&
           !(r->flags & (API_ROUTE_RAW_BODY | API_ROUTE_TENSOR_PROTOCOL |
                         API_ROUTE_UNIQUE_MEMBERS));
}

/* What makes the answer besides the body: the method (a HEAD is its
 * GET), the path, the query, and the Accept of a route whose answer
 * depends on it; each with its NUL. */
static void put_head(api_buf *key, const api_route *r, const api_request *req) {
    const char *parts[] = {
        r->method, req->path ? req->path : "", req->query ? req->query : "",
        (r->flags & API_ROUTE_VARY_ACCEPT) && req->accept ? req->accept : ""};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        api_buf_append(key, parts[i], strlen(parts[i]) + 1);
}

/* The largest body keyed by its bytes: a class's click, which an HTTP
 * thread hashes in well under a millisecond; no larger answer's request
 * is worth the HTTP thread's time, and few would be kept. */
#define RAW_KEY_MAX ((size_t)1 << 20)

/* The key of the request's bytes as sent: its head, a tag no canonical
 * key has after its head ('\1'), then the body. -1 for a body over
 * RAW_KEY_MAX, or when memory runs out. */
static int raw_key(api_buf *key, const api_route *r, const api_request *req) {
    if (req->body_len > RAW_KEY_MAX)
        return -1;
    put_head(key, r, req);
    api_buf_putc(key, '\1');
    if (req->body_len > 0)
        api_buf_append(key, req->body, req->body_len);
    return key->failed ? -1 : 0;
}

/* res holds the kept answer a. */
static void answer_with(api_response *res, const api_route *r, api_answer *a) {
    res->status = 200;
    res->body = a->body;
    res->body_len = a->body_len;
    res->content_type = a->content_type;
    memcpy(res->etag, a->etag, sizeof res->etag);
    res->route = r->path;
    res->vary_accept = (r->flags & API_ROUTE_VARY_ACCEPT) != 0;
    res->compute_ms = 0;
    api_budget_force(a->body_len); /* held like any answer until sent */
    res->charged = a->body_len;
}

/* A key's bytes reserved from the memory budget while it is held (a try:
 * no room, no sharing). Returns 0, or -1 with key freed. */
static int reserve_key(api_buf *key) {
    if (api_budget_take(key->len, -1) == API_BUDGET_OK)
        return 0;
    api_buf_free(key);
    return -1;
}

int api_answer_ready(const api_request *req, api_response *res) {
    const api_route *r = api_route_find(req->path);
    const char *method = req->method ? req->method : "";
    if (r == NULL || !shares_answers(r) ||
        !(strcmp(method, r->method) == 0 ||
          (strcmp(method, "HEAD") == 0 && strcmp(r->method, "GET") == 0)))
        return 0;
    api_buf key = {0};
    api_answer a;
    if (raw_key(&key, r, req) != 0 || reserve_key(&key) != 0) {
        api_buf_free(&key);
        return 0;
    }
    int found = api_answer_cache_find(key.data, key.len, &a);
    api_budget_give(key.len);
    api_buf_free(&key);
    if (!found)
        return 0;
    memset(res, 0, sizeof *res);
    answer_with(res, r, &a);
    if (api_etag_matches(req->if_none_match, res->etag)) {
        api_response_free(res);
        memset(res, 0, sizeof *res);
        res->status = 304;
        res->compute_ms = -1;
        res->route = r->path;
        memcpy(res->etag, a.etag, sizeof res->etag);
    }
    return 1;
}

void api_shared_raw(api_shared *s, const api_call *call) {
    if (!shares_answers(call->route))
        return;
    if (raw_key(&s->raw, call->route, call->req) != 0 ||
        reserve_key(&s->raw) != 0)
        api_buf_free(&s->raw); /* shared by its canonical key alone */
}

/* res, a 200 answer named by s's ETag, becomes 304 when the request's
 * If-None-Match names it: the body and its reservation go. */
static void not_modified(const api_shared *s, const api_request *req,
                         api_response *res) {
    if (!api_etag_matches(req->if_none_match, s->etag))
        return;
    api_budget_give(res->charged);
    res->charged = 0;
    free(res->body);
    res->body = NULL;
    res->body_len = 0;
    res->content_type = NULL;
    res->status = 304;
}

int api_shared_begin(api_shared *s, const api_call *call, const json_t *root,
                     api_response *res) {
    const api_route *r = call->route;
    const api_request *req = call->req;
    if (!shares_answers(r))
        return 0;
    api_buf key = {0};
    put_head(&key, r, req);
    if ((root != NULL && api_request_key(&key, call->doc, root) != 0) ||
        key.failed) {
        api_buf_free(&key);
        return 0;
    }
    if (reserve_key(&key) != 0)
        return 0;
    s->keyed = 1;
    s->req = req;
    api_answer_etag(s->etag, key.data, key.len);
    /* a compute thread waits for an identical request computing, as long
     * as it might compute it itself; an HTTP thread never waits */
    unsigned wait_ms = req->may_wait > 0 && req->inline_work_max == 0
                           ? call->limits->compute_timeout_s * 1000u
                           : 0;
    api_answer a;
    api_answer_outcome o =
        api_answer_cache_begin(key.data, key.len, wait_ms, &s->entry, &a);
    api_budget_give(key.len);
    api_buf_free(&key);
    if (o != API_ANSWER_HIT)
        return 0;
    api_shared_end(s, NULL);
    answer_with(res, r, &a);
    not_modified(s, req, res);
    return 1;
}

void api_shared_end(api_shared *s, api_response *res) {
    int whole = res != NULL && res->status == 200 && res->body != NULL &&
                res->stream == NULL;
    if (whole && s->keyed) {
        api_answer a = {res->body, res->body_len, res->content_type, ""};
        memcpy(a.etag, s->etag, sizeof a.etag);
        api_answer_cache_finish(s->entry, &a);
        if (s->raw.len > 0)
            api_answer_cache_put(s->raw.data, s->raw.len, &a);
        memcpy(res->etag, s->etag, sizeof res->etag);
        not_modified(s, s->req, res);
    } else {
        api_answer_cache_finish(s->entry, NULL);
        if (res != NULL && res->status != 304)
            res->etag[0] = '\0';
    }
    s->entry = NULL;
    api_budget_give(s->raw.len);
    api_buf_free(&s->raw);
}
