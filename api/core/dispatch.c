/*
 * dispatch.c — the request layer's entry points (see api.h): route lookup,
 * method, content type, body size, JSON syntax and root type, in the
 * contract's order (docs/contract.md "Order of checks"), then the route's
 * handler. A front that frames a route's body its own way (a JSON header,
 * then bytes: front.h) takes over its Content-Type, its header's length
 * and what a syntax error in it means; no front is named here.
 */
#include "api.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "budget.h"
#include "call.h"
#include "content_type.h"
#include "fastpath.h"
#include "front.h"
#include "labels.h"
#include "limit.h"
#include "problem.h"
#include "result_json.h"
#include "route.h"
#include "shared_answer.h"
#include "stream.h"
#include "suggest.h"

void api_limits_default(api_limits *limits) {
    limits->max_body_bytes = (size_t)16 << 20;
    limits->max_elements = (size_t)16 << 20;
    limits->max_work = (uint64_t)1 << 33;
    limits->max_tree_bytes = (size_t)64 << 20;
}

double api_clock_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void api_call_inputs_read(api_call *call) {
    while (call->outer)
        call = call->outer;
    if (!call->body_held)
        return;
    call->body_held = 0;
    call->binary = NULL;
    call->binary_len = 0;
    if (call->req->body_done)
        call->req->body_done(call->req->body_ctx);
}

void api_response_free(api_response *res) {
    api_budget_give(res->charged);
    res->charged = 0;
    free(res->body);
    res->body = NULL;
    res->body_len = 0;
    api_stream_free(res->stream);
    res->stream = NULL;
}

const char *api_route_body_type(const api_route *r, const char *content_type) {
    for (const char *const *t = r->body_types; t && *t; t++)
        if (api_content_type_is(content_type, *t))
            return *t;
    return NULL;
}

/* "a, b or c": the body types of a raw-body route, for a 415's detail. */
static void join_body_types(const api_route *r, char *dst, size_t cap) {
    size_t n = 0, len = 0;
    while (r->body_types && r->body_types[n])
        n++;
    dst[0] = '\0';
    for (size_t i = 0; i < n && len < cap; i++)
        len += (size_t)snprintf(dst + len, cap - len, "%s%s",
                                i == 0       ? ""
                                : i + 1 == n ? " or "
                                             : ", ",
                                r->body_types[i]);
}

/* 404 for a path no route answers, naming the closest route's path. */
static int no_route(const char *path, api_problem *p) {
    const char *paths[API_ROUTES_MAX];
    size_t n = 0;
    for (; n < api_route_count() && n < API_ROUTES_MAX; n++)
        paths[n] = api_route_at(n)->path;
    char hint[API_SUGGEST_TEXT];
    api_did_you_mean(hint, path, strlen(path), paths, n);
    return api_fail(p, API_E_NOT_FOUND, NULL,
                    "no route %.200s%s The routes are listed at "
                    "/openapi.json",
                    path, hint);
}

/* The route and its method: 404 and 405. Returns 0 to go on (*route
 * set), 1 when res holds the answer to OPTIONS, -1 with p set. */
static int check_route(const api_request *req, const api_route **route,
                       api_response *res, api_problem *p) {
    const char *method = req->method ? req->method : "";
    *route = NULL;
    const api_route *r = api_route_find(req->path);
    /* a CORS preflight is answered on any path, known or not, so that the
     * page's real request gets its 404 and the page can read it */
    if (!strcmp(method, "OPTIONS") && !r) {
        res->status = 204;
        res->allow = API_ALLOW_ANY;
        return 1;
    }
    if (!r)
        return no_route(req->path ? req->path : "", p);
    *route = r;
    res->route = r->path;
    res->vary_accept = (r->flags & API_ROUTE_VARY_ACCEPT) != 0;
    if (!strcmp(method, "OPTIONS")) {
        res->status = 204;
        res->allow = api_route_allow(r);
        return 1;
    }
    int ok = !strcmp(method, r->method) ||
             (!strcmp(r->method, "GET") && !strcmp(method, "HEAD"));
    if (!ok) {
        res->allow = api_route_allow(r);
        return api_fail(p, API_E_METHOD_NOT_ALLOWED, NULL,
                        "%s answers %s; not %.20s", r->path, res->allow,
                        method);
    }
    return 0;
}

/* The body's Content-Type and Content-Encoding: 415. framing: the front
 * that frames r's JSON body, or NULL. Returns 0, or -1 with p set. */
static int check_body_type(const api_request *req, const api_route *r,
                           const api_front *framing, api_response *res,
                           api_problem *p) {
    int json_body = (r->flags & API_ROUTE_JSON_BODY) != 0;
    int raw_body = (r->flags & API_ROUTE_RAW_BODY) != 0;
    if (raw_body && api_route_body_type(r, req->content_type) == NULL) {
        char types[256];
        join_body_types(r, types, sizeof types);
        return api_fail(p, API_E_UNSUPPORTED_MEDIA_TYPE, NULL,
                        "send the body as Content-Type: %s (UTF-8); got %.100s",
                        types, req->content_type ? req->content_type : "none");
    }
    if (framing) {
        if (framing->check_body_type(req, p) != 0)
            return -1;
    } else if (json_body &&
               !api_content_type_is(req->content_type, API_CT_JSON))
        return api_fail(p, API_E_UNSUPPORTED_MEDIA_TYPE, NULL,
                        "send the body as Content-Type: application/json "
                        "(UTF-8); got %.100s",
                        req->content_type ? req->content_type : "none");
    if ((json_body || raw_body) && req->content_encoding &&
        strcasecmp(req->content_encoding, "identity") != 0) {
        res->accept_encoding = "identity";
        return api_fail(p, API_E_UNSUPPORTED_MEDIA_TYPE, NULL,
                        "the body is sent with Content-Encoding: %.40s, "
                        "which attnd does not decode; send it uncompressed "
                        "(answers are still compressed for Accept-Encoding: "
                        "gzip)",
                        req->content_encoding);
    }
    return 0;
}

/* The front that frames the JSON body of route r, or NULL (none does, or
 * r takes no JSON body). */
static const api_front *framing_of(const api_route *r) {
    return (r->flags & API_ROUTE_JSON_BODY) ? api_front_framing(r) : NULL;
}

/* Header-level checks shared by api_precheck and api_handle: 404, 405,
 * 415, 413, and a front's framing of the body (its JSON header's length).
 * Returns 0 to go on (*route set), 1 when res holds the answer to
 * OPTIONS, -1 with p set. */
static int check_headers(const api_request *req, const api_limits *limits,
                         long long content_length, const api_route **route,
                         api_response *res, api_problem *p) {
    int rc = check_route(req, route, res, p);
    if (rc != 0)
        return rc;
    const api_route *r = *route;
    int json_body = (r->flags & API_ROUTE_JSON_BODY) != 0;
    int raw_body = (r->flags & API_ROUTE_RAW_BODY) != 0;
    /* a route that takes no body refuses one by its length, before a byte
     * of it is read or held (docs/contract.md, "Sharing one server") */
    if (!json_body && !raw_body && content_length > 0)
        return api_fail(p, API_E_PAYLOAD_TOO_LARGE, NULL,
                        "%s %s takes no body, and this one has %lld byte%s; "
                        "send the request without one",
                        r->method, r->path, content_length,
                        content_length == 1 ? "" : "s");
    const api_front *framing = framing_of(r);
    if (check_body_type(req, r, framing, res, p) != 0)
        return -1;
    size_t header_len;
    if (framing &&
        framing->header_length(req, content_length, &header_len, p) != 0)
        return -1;
    if (content_length >= 0 &&
        (unsigned long long)content_length > limits->max_body_bytes)
        return api_fail(p, API_E_PAYLOAD_TOO_LARGE, NULL,
                        "the body has %lld bytes; the limit is %zu "
                        "(--max-body-bytes)%s",
                        content_length, limits->max_body_bytes,
                        raw_body ? ", for a batch as for every request: send "
                                   "the submissions in several batches, or "
                                   "grade the file with `attnd grade`, which "
                                   "has no body limit (docs/batch.md)"
                                 : "");
    return 0;
}

static void start_response(api_response *res) {
    memset(res, 0, sizeof *res);
    res->compute_ms = -1;
    res->route = "other";
}

/* The request's limits, or the defaults (filled into *defaults). */
static const api_limits *limits_of(const api_request *req,
                                   api_limits *defaults) {
    if (req->limits)
        return req->limits;
    api_limits_default(defaults);
    return defaults;
}

int api_precheck(const api_request *req, long long content_length,
                 api_response *res) {
    api_limits defaults;
    const api_limits *limits = limits_of(req, &defaults);
    start_response(res);
    api_problem p = {0};
    const api_route *route;
    int rc = check_headers(req, limits, content_length, &route, res, &p);
    if (rc == 0)
        return 0;
    if (rc < 0)
        api_front_respond_problem(res, &p, req->path);
    return 1;
}

/* A computing route's typed result as the answer Accept asks for: its
 * heatmap (image/svg+xml, when it has one) or JSON, streamed when large.
 * Returns 0 (call->out holds it) or -1 (call->problem). */
static int encode_result(api_call *call) {
    api_result *r = &call->result;
    int rc;
    api_labels labels; /* checked for JSON answers too (labels.h) */
    if (r->heatmap.title && api_labels_read(&labels, call->body, r->heatmap.Nq,
                                            r->heatmap.Nk, &call->problem)) {
        api_result_free(r);
        return -1;
    }
    const api_front *front =
        r->heatmap.title ? api_front_for_heatmap(call) : NULL;
    if (front) {
        rc = api_result_check(r, &call->problem);
        if (rc == 0)
            rc = front->respond_heatmap(call, r);
        api_result_free(r);
        return rc;
    }
    api_stream_allow(&call->out, &r->arena, call->req);
    rc = api_result_write_json(r, &call->out, &call->problem);
    api_stream_hand_over(&call->out, &r->arena);
    api_result_free(r);
    return rc;
}

/* The tree gate of a body (fastpath.h): the JSON tree jansson would build
 * is bounded by --max-tree-bytes and reserved from the memory budget
 * before it is built. */
typedef struct {
    api_call *call;
    api_ledger tree; /* the reservation of the tree being parsed */
} tree_check;

static int admit_tree(void *ctx, uint64_t bytes) {
    tree_check *t = ctx;
    return api_ledger_admit_tree(
        &t->tree, bytes, t->call->limits->max_tree_bytes, "the body's",
        " (four times --max-body-bytes)", "the JSON tree of the body",
        &t->call->problem);
}

/* What res holds once made: the stream's text and tensors, or the body. */
static uint64_t held_bytes(const api_response *res) {
    return res->stream ? api_stream_held_bytes(res->stream) : res->body_len;
}

/* A zeroed call, but for its result's items, which are zeroed as they are
 * added (result.c): 11 KB less to clear per request. */
static void start_call(api_call *call) {
    size_t at = offsetof(api_call, result) + sizeof call->result.items;
    memset(call, 0, offsetof(api_call, result));
    memset((char *)call + at, 0, sizeof *call - at);
}

/* The JSON text of a JSON-body route's request parsed into call->body
 * (*root, which the caller frees, as fast): the whole body, or the header
 * that the route's front frames before other bytes, which call->binary
 * then points to. Returns 0, or -1 with call->problem set (a body that is
 * not JSON, or not an object). */
static int read_body(api_call *call, tree_check *tree, api_fastpath *fast,
                     json_t **root) {
    const api_request *req = call->req;
    const api_front *framing = framing_of(call->route);
    /* the JSON text: the whole body, or the header before the bytes
     * (check_headers has checked its length) */
    size_t json_len = req->body_len;
    if (framing)
        framing->header_length(req, (long long)req->body_len, &json_len,
                               &call->problem);
    if (json_len < req->body_len) {
        call->binary = (const unsigned char *)req->body + json_len;
        call->binary_len = req->body_len - json_len;
        call->body_held = 1; /* until the route has read the tensors */
    }
    /* JSON text never holds a raw NUL byte (RFC 8259: control characters
     * are escaped in strings and are not whitespace); jansson 2.14 loses
     * one that follows a character it had to read back (the end of a
     * number), so "123\0" would parse as 123. */
    const char *nul = req->body ? memchr(req->body, '\0', json_len) : NULL;
    if (nul) {
        api_fail(&call->problem, API_E_INVALID_JSON, NULL,
                 "the body is not valid JSON: a raw NUL byte at byte "
                 "%zu (%s)",
                 (size_t)(nul - req->body),
                 api_json_nul_hint(req->body, (size_t)(nul - req->body)));
        if (framing)
            framing->explain_not_json(req, json_len, 1, &call->problem);
        return -1;
    }
    json_error_t error;
    api_tree_gate gate = {admit_tree, tree};
    size_t flags = JSON_DECODE_ANY | JSON_ALLOW_NUL;
    if (call->route->flags & API_ROUTE_UNIQUE_MEMBERS)
        flags |= JSON_REJECT_DUPLICATES;
    *root = api_fastpath_load(fast, api_route_fast_fields(call->route),
                              req->body, json_len, flags, &gate, &error);
    /* the Open Inference Protocol's "data" may be nested */
    fast->nested_data = (call->route->flags & API_ROUTE_TENSOR_PROTOCOL) != 0;
    int rc = 0;
    if (!*root) {
        if (!fast->refused) { /* else admit_tree said why */
            api_problem_from_json_error(&call->problem, &error, req->body,
                                        json_len);
            if (framing)
                framing->explain_not_json(req, json_len, 0, &call->problem);
        }
        rc = -1;
    } else if (!json_is_object(*root))
        rc = api_fail(&call->problem, API_E_WRONG_TYPE, "",
                      "the body must be a JSON object {...}; got %s",
                      api_json_kind(*root));
    call->body = *root;
    call->doc = fast;
    /* the text is not read again; bytes after it are, by the handler, and
     * go with the request */
    if (req->body_done && call->binary_len == 0)
        req->body_done(req->body_ctx);
    return rc;
}

/* res from the call's answer (rc 0: call->out, which keeps its share of
 * the ledger while it is held) or its problem, in the path's front's form. */
static void respond(api_call *call, int rc, api_ledger *ledger,
                    api_response *res) {
    if (rc == 0) {
        res->status = call->status;
        res->content_type =
            call->content_type ? call->content_type : API_CT_JSON;
        res->compute_ms = call->compute_ms;
        res->inference_header_length = call->inference_header_length;
        res->item_problems = call->item_problems;
        if (api_stream_has_holes(&call->out) && !call->out.failed)
            res->stream = api_stream_take(&call->out);
        else
            res->body = api_buf_release(&call->out, &res->body_len);
        if (res->stream || res->body) {
            /* the answer keeps its reservation while it is held */
            res->charged = api_ledger_settle(ledger, held_bytes(res));
            return;
        }
        api_fail(&call->problem, API_E_INTERNAL, NULL,
                 "out of memory while writing the answer");
    }
    api_buf_free(&call->out);
    api_ledger_settle(ledger, 0);
    if (call->problem.code == API_E_NONE)
        api_fail(&call->problem, API_E_INTERNAL, NULL, "unexpected failure");
    res->compute_ms = -1;
    api_front_respond_problem(res, &call->problem, call->req->path);
}

static void handle(const api_request *req, api_response *res) {
    api_limits defaults;
    const api_limits *limits = limits_of(req, &defaults);
    start_response(res);
    api_call call;
    start_call(&call);
    call.req = req;
    call.limits = limits;
    call.status = 200;
    call.compute_ms = -1;
    /* a try on an HTTP thread never waits: no room is for a compute thread */
    int may_wait = req->inline_work_max > 0 ? -1 : req->may_wait;
    api_ledger ledger = {0, may_wait, 0};
    call.ledger = &ledger;
    tree_check tree = {&call, {0, may_wait, 0}};
    const api_route *route;
    int rc = check_headers(req, limits, (long long)req->body_len, &route, res,
                           &call.problem);
    if (rc > 0)
        return;
    call.route = route;
    json_t *root = NULL;
    api_fastpath fast = {0}; /* numeric arrays read without jansson */
    /* identical requests' answer (shared_answer.h): the key of the body's
     * bytes is taken before read_body lets the server free them */
    api_shared shared = {0};
    if (rc == 0)
        api_shared_raw(&shared, &call);
    if (rc == 0 && (route->flags & API_ROUTE_JSON_BODY))
        rc = read_body(&call, &tree, &fast, &root);
    if (rc == 0 && api_shared_begin(&shared, &call, root, res)) {
        json_decref(root);
        api_fastpath_release(&fast);
        api_ledger_settle(&tree.tree, 0);
        api_ledger_settle(&ledger, 0);
        return;
    }
    if (rc == 0)
        rc = route->handler(&call);
    if (rc == 0 && call.result.n > 0)
        rc = encode_result(&call);
    api_limit_deadline_start(0);
    api_result_free(&call.result);
    json_decref(root);
    api_fastpath_release(&fast);
    api_ledger_settle(&tree.tree, 0);
    if (ledger.deferred || tree.tree.deferred) {
        api_shared_end(&shared, NULL);
        api_buf_free(&call.out);
        api_ledger_settle(&ledger, 0);
        start_response(res);
        res->deferred = 1;
        return;
    }
    respond(&call, rc, &ledger, res);
    api_shared_end(&shared, res);
}

void api_handle(const api_request *req, api_response *res) {
    /* a request handled inside another (a route run by /grade) keeps the
     * outer one's flag */
    const atomic_int *outer = api_limit_abandoned();
    api_limit_watch(req->abandoned != NULL ? req->abandoned : outer);
    handle(req, res);
    api_limit_watch(outer);
}
