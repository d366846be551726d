/*
 * test_srv_gate.c — admission: the open-route table with and without
 * --metrics-public, 429 before 401 before 503, health probes outside every
 * limit, X-Forwarded-For only from trusted proxies, refused requests
 * holding no place, graders' tokens, and the refusal bodies (problem+json with
 * code, status and title; {"error"} under /v2) and WWW-Authenticate values.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "gate.h"

static struct sockaddr_in peer(const char *ip) {
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    assert_int_equal(inet_pton(AF_INET, ip, &sa.sin_addr), 1);
    return sa;
}

static srv_auth *tokens(const char *text) {
    char path[] = "/tmp/attnd-gate-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    char err[256];
    srv_auth *auth = srv_auth_load(path, err, sizeof err);
    unlink(path);
    assert_non_null(auth);
    return auth;
}

/* Admit one request; the ticket is released at once unless kept. */
static srv_gate_verdict ask(srv_gate *g, const char *route, const char *ip,
                            const char *authorization, unsigned in_flight,
                            double now, srv_rl_ticket *keep) {
    struct sockaddr_in sa = peer(ip);
    srv_gate_request req = {.route = route,
                            .peer = (const struct sockaddr *)&sa,
                            .authorization = authorization,
                            .in_flight = in_flight,
                            .now_s = now};
    srv_rl_ticket t;
    unsigned retry;
    const char *label;
    srv_gate_verdict v = srv_gate_admit(g, &req, &t, &retry, &label);
    if (v == SRV_GATE_PASS)
        assert_int_equal(retry, 0);
    else
        assert_int_equal(t.slot, UINT32_MAX); /* a refusal holds nothing */
    if (keep != NULL)
        *keep = t;
    else
        srv_gate_release(g, &t);
    return v;
}

static void test_open_routes(void **state) {
    (void)state;
    srv_gate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.auth = tokens("right\n");
    srv_gate *g = srv_gate_new(&cfg);
    assert_non_null(g);
    assert_true(srv_gate_active(g));
    static const char *open[] = {
        "/",        "/healthz",      "/v2/health/live",
        "/version", "/openapi.json", "/v2/health/ready"};
    for (size_t i = 0; i < sizeof open / sizeof open[0]; i++) {
        assert_true(srv_gate_route_open(g, open[i]));
        assert_int_equal(ask(g, open[i], "192.0.2.1", NULL, 1, 0, NULL),
                         SRV_GATE_PASS);
    }
    static const char *closed[] = {"/attention/dot",
                                   "/regression/nw/dataset",
                                   "/metrics",
                                   "/v2",
                                   "/v2/models/attention_dot/infer",
                                   "/healthz/x",
                                   "/v2/healthz"};
    for (size_t i = 0; i < sizeof closed / sizeof closed[0]; i++) {
        assert_false(srv_gate_route_open(g, closed[i]));
        assert_int_equal(ask(g, closed[i], "192.0.2.1", NULL, 1, 0, NULL),
                         SRV_GATE_UNAUTHORIZED);
        assert_int_equal(
            ask(g, closed[i], "192.0.2.1", "Bearer wrong", 1, 0, NULL),
            SRV_GATE_INVALID_TOKEN);
        assert_int_equal(
            ask(g, closed[i], "192.0.2.1", "Bearer right", 1, 0, NULL),
            SRV_GATE_PASS);
    }
    srv_gate_free(g);

    cfg.auth = tokens("right\n");
    cfg.metrics_public = 1;
    g = srv_gate_new(&cfg);
    assert_true(srv_gate_route_open(g, "/metrics"));
    assert_int_equal(ask(g, "/metrics", "192.0.2.1", NULL, 1, 0, NULL),
                     SRV_GATE_PASS);
    assert_int_equal(ask(g, "/attention/dot", "192.0.2.1", NULL, 1, 0, NULL),
                     SRV_GATE_UNAUTHORIZED);
    srv_gate_free(g);

    /* no auth: everything passes, whatever the header says */
    memset(&cfg, 0, sizeof cfg);
    g = srv_gate_new(&cfg);
    assert_false(srv_gate_active(g));
    assert_int_equal(
        ask(g, "/attention/dot", "192.0.2.1", "Bearer x", 1000, 0, NULL),
        SRV_GATE_PASS);
    srv_gate_free(g);

    assert_true(srv_gate_route_unlimited("/healthz"));
    assert_true(srv_gate_route_unlimited("/v2/health/ready"));
    assert_true(srv_gate_route_unlimited("/metrics"));
    assert_false(srv_gate_route_unlimited("/"));
    assert_false(srv_gate_route_unlimited("/attention/dot"));
    assert_false(srv_gate_route_unlimited(NULL));
}

static void test_order_and_limits(void **state) {
    (void)state;
    srv_gate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.rate_per_s = 1;
    cfg.burst = 2;
    cfg.max_in_flight = 3;
    cfg.auth = tokens("right\n");
    srv_gate *g = srv_gate_new(&cfg);
    assert_true(srv_gate_active(g));
    /* the bucket counts requests without a token too (a guesser is slowed
     * down as much as anyone), and 429 comes before 401 */
    assert_int_equal(ask(g, "/attention/dot", "192.0.2.9", NULL, 1, 0, NULL),
                     SRV_GATE_UNAUTHORIZED);
    assert_int_equal(
        ask(g, "/attention/dot", "192.0.2.9", "Bearer no", 1, 0, NULL),
        SRV_GATE_INVALID_TOKEN);
    assert_int_equal(ask(g, "/attention/dot", "192.0.2.9", NULL, 1, 0, NULL),
                     SRV_GATE_RATE_LIMITED);
    /* the lab page counts against no client, but against the cap on all
     * in flight */
    assert_int_equal(ask(g, "/", "192.0.2.9", NULL, 3, 0, NULL), SRV_GATE_PASS);
    assert_int_equal(ask(g, "/", "192.0.2.9", NULL, 4, 0, NULL),
                     SRV_GATE_OVERLOADED);
    /* health probes are never limited, not even over the cap */
    for (int i = 0; i < 10; i++)
        assert_int_equal(ask(g, "/healthz", "192.0.2.9", NULL, 99, 0, NULL),
                         SRV_GATE_PASS);
    /* the server-wide cap: 3 in flight allowed, the 4th refused; a wrong
     * token is told so first */
    assert_int_equal(
        ask(g, "/attention/dot", "192.0.2.10", "Bearer right", 3, 0, NULL),
        SRV_GATE_PASS);
    assert_int_equal(
        ask(g, "/attention/dot", "192.0.2.10", "Bearer right", 4, 0, NULL),
        SRV_GATE_OVERLOADED);
    assert_int_equal(ask(g, "/attention/dot", "192.0.2.11", NULL, 4, 0, NULL),
                     SRV_GATE_UNAUTHORIZED);
    /* time refills */
    assert_int_equal(
        ask(g, "/attention/dot", "192.0.2.9", "Bearer right", 1, 1.0, NULL),
        SRV_GATE_PASS);
    assert_int_equal(srv_gate_config_of(g)->burst, 2);
    srv_gate_free(g);

    /* burst defaults to the rate rounded up */
    memset(&cfg, 0, sizeof cfg);
    cfg.rate_per_s = 2.5;
    g = srv_gate_new(&cfg);
    assert_int_equal(srv_gate_config_of(g)->burst, 3);
    int passed = 0;
    while (ask(g, "/attention/dot", "192.0.2.1", NULL, 1, 0, NULL) ==
               SRV_GATE_PASS &&
           passed < 100)
        passed++;
    assert_int_equal(passed, 3);
    srv_gate_free(g);

    /* per-client cap: a refused request (here by the token) gives its place
     * back at once; an admitted one holds it until released */
    memset(&cfg, 0, sizeof cfg);
    cfg.max_concurrent = 1;
    cfg.auth = tokens("right\nother\n");
    g = srv_gate_new(&cfg);
    srv_rl_ticket held;
    assert_int_equal(ask(g, "/attention/dot", "192.0.2.1", NULL, 1, 0, &held),
                     SRV_GATE_UNAUTHORIZED);
    assert_int_equal(
        ask(g, "/attention/dot", "192.0.2.1", "Bearer right", 1, 0, &held),
        SRV_GATE_PASS);
    assert_int_equal(
        ask(g, "/attention/dot", "192.0.2.1", "Bearer right", 2, 0, NULL),
        SRV_GATE_TOO_CONCURRENT);
    /* another token is another client */
    assert_int_equal(
        ask(g, "/attention/dot", "192.0.2.1", "Bearer other", 2, 0, NULL),
        SRV_GATE_PASS);
    srv_gate_release(g, &held);
    assert_int_equal(
        ask(g, "/attention/dot", "192.0.2.1", "Bearer right", 1, 0, NULL),
        SRV_GATE_PASS);
    srv_gate_free(g);
}

/* A listed token is its own client: a room behind one address, a token a
 * student, is as many buckets as tokens, and a token is one bucket from
 * wherever it comes; without a token the address is the client. */
static void test_tokens_are_clients(void **state) {
    (void)state;
    srv_gate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.rate_per_s = 1;
    cfg.burst = 2;
    cfg.max_concurrent = 1;
    cfg.auth = tokens("s001 aaaa\ns002 bbbb\n");
    srv_gate *g = srv_gate_new(&cfg);
    const char *nat = "198.51.100.7", *route = "/attention/dot";
    for (int i = 0; i < 2; i++) {
        assert_int_equal(ask(g, route, nat, "Bearer aaaa", 1, 0, NULL),
                         SRV_GATE_PASS);
        assert_int_equal(ask(g, route, nat, "Bearer bbbb", 1, 0, NULL),
                         SRV_GATE_PASS);
    }
    assert_int_equal(ask(g, route, nat, "Bearer aaaa", 1, 0, NULL),
                     SRV_GATE_RATE_LIMITED);
    /* the same token from another address: the same bucket */
    assert_int_equal(ask(g, route, "192.0.2.1", "Bearer bbbb", 1, 0, NULL),
                     SRV_GATE_RATE_LIMITED);
    /* the address's own bucket is untouched by its tokens' requests; a
     * wrong token is charged to it */
    assert_int_equal(ask(g, route, nat, "Bearer nope", 1, 0, NULL),
                     SRV_GATE_INVALID_TOKEN);
    assert_int_equal(ask(g, route, nat, NULL, 1, 0, NULL),
                     SRV_GATE_UNAUTHORIZED);
    assert_int_equal(ask(g, route, nat, NULL, 1, 0, NULL),
                     SRV_GATE_RATE_LIMITED);
    /* documents served as they are (the lab page, /openapi.json,
     * /version) count against no client, so that a room behind one
     * address loads the page at once, whatever token it shows */
    for (int i = 0; i < 20; i++) {
        assert_int_equal(ask(g, "/", nat, NULL, 1, 0, NULL), SRV_GATE_PASS);
        assert_int_equal(
            ask(g, "/openapi.json", nat, "Bearer nope", 1, 0, NULL),
            SRV_GATE_PASS);
        assert_int_equal(ask(g, "/version", nat, "Bearer bbbb", 1, 0, NULL),
                         SRV_GATE_PASS);
    }
    /* the cap in flight is per token too */
    srv_rl_ticket held;
    assert_int_equal(ask(g, route, nat, "Bearer aaaa", 1, 5.0, &held),
                     SRV_GATE_PASS);
    assert_int_equal(ask(g, route, nat, "Bearer aaaa", 2, 5.0, NULL),
                     SRV_GATE_TOO_CONCURRENT);
    assert_int_equal(ask(g, route, nat, "Bearer bbbb", 2, 5.0, NULL),
                     SRV_GATE_PASS);
    srv_gate_release(g, &held);
    /* the refusal says whose limit it is */
    api_response res;
    memset(&res, 0, sizeof res);
    srv_gate_respond(g, &res, SRV_GATE_RATE_LIMITED, route, 1, "s001");
    assert_non_null(res.body);
    assert_non_null(strstr(res.body, "too many requests with your token: the "
                                     "limit is 1 per second with bursts of 2"));
    api_response_free(&res);
    memset(&res, 0, sizeof res);
    srv_gate_respond(g, &res, SRV_GATE_TOO_CONCURRENT, route, 1, NULL);
    assert_non_null(strstr(res.body, "too many requests from your address at "
                                     "once: the limit is 1 in flight"));
    api_response_free(&res);
    srv_gate_free(g);
}

/* Graders' tokens (--grading-token-file): one passes where
 * --auth-token-file asks for a token, and makes its request a grader's;
 * a student's listed token passes and is no grader's; a wrong one is
 * refused. */
static void test_graders(void **state) {
    (void)state;
    srv_gate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.auth = tokens("student-1 studenttoken0123456789\n");
    cfg.grading = tokens("ta-ada gradertoken0123456789\n");
    srv_gate *g = srv_gate_new(&cfg);
    assert_non_null(g);
    assert_true(srv_gate_active(g));
    const char *grader = "Bearer gradertoken0123456789";
    const char *student = "Bearer studenttoken0123456789";
    assert_int_equal(ask(g, "/grade/batch", "10.0.0.1", grader, 1, 0, NULL),
                     SRV_GATE_PASS);
    assert_int_equal(ask(g, "/grade/batch", "10.0.0.1", student, 1, 0, NULL),
                     SRV_GATE_PASS);
    assert_int_equal(ask(g, "/grade/batch", "10.0.0.1",
                         "Bearer gradertoken0123456788", 1, 0, NULL),
                     SRV_GATE_INVALID_TOKEN);
    assert_true(srv_gate_is_grader(g, grader));
    assert_false(srv_gate_is_grader(g, student));
    assert_false(srv_gate_is_grader(g, NULL));
    srv_gate_free(g);

    /* graders' tokens alone: the gate is on, every request passes, and
     * only a grader's token makes a grader */
    memset(&cfg, 0, sizeof cfg);
    cfg.grading = tokens("gradertoken0123456789\n");
    g = srv_gate_new(&cfg);
    assert_true(srv_gate_active(g));
    assert_int_equal(ask(g, "/variants", "10.0.0.1", NULL, 1, 0, NULL),
                     SRV_GATE_PASS);
    assert_true(srv_gate_is_grader(g, grader));
    assert_false(srv_gate_is_grader(g, "Bearer gradertoken012345678"));
    srv_gate_free(g);
}

static void test_forwarded(void **state) {
    (void)state;
    srv_gate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.rate_per_s = 1;
    cfg.burst = 1;
    assert_int_equal(srv_netlist_parse(&cfg.trusted, "127.0.0.1"), 0);
    srv_gate *g = srv_gate_new(&cfg);
    struct sockaddr_in proxy = peer("127.0.0.1"), other = peer("192.0.2.8");
    const char *alice[] = {"198.51.100.1"}, *bob[] = {"198.51.100.2"};
    srv_gate_request req = {.route = "/attention/dot",
                            .peer = (const struct sockaddr *)&proxy,
                            .forwarded_for = alice,
                            .n_forwarded_for = 1};
    srv_rl_ticket t;
    unsigned retry;
    const char *label;
    /* behind the trusted proxy, alice and bob have a bucket each */
    assert_int_equal(srv_gate_admit(g, &req, &t, &retry, &label),
                     SRV_GATE_PASS);
    assert_int_equal(srv_gate_admit(g, &req, &t, &retry, &label),
                     SRV_GATE_RATE_LIMITED);
    assert_int_equal(retry, 1);
    req.forwarded_for = bob;
    assert_int_equal(srv_gate_admit(g, &req, &t, &retry, &label),
                     SRV_GATE_PASS);
    /* an untrusted peer naming bob is itself the client */
    req.peer = (const struct sockaddr *)&other;
    assert_int_equal(srv_gate_admit(g, &req, &t, &retry, &label),
                     SRV_GATE_PASS);
    assert_int_equal(srv_gate_admit(g, &req, &t, &retry, &label),
                     SRV_GATE_RATE_LIMITED);
    /* without a peer address the limits cannot apply; the rest still do */
    req.peer = NULL;
    assert_int_equal(srv_gate_admit(g, &req, &t, &retry, &label),
                     SRV_GATE_PASS);
    srv_gate_free(g);
}

/* The refusal for v to path, parsed. */
static json_t *respond(const srv_gate *g, srv_gate_verdict v, const char *path,
                       unsigned retry, api_response *res) {
    memset(res, 0, sizeof *res);
    srv_gate_respond(g, res, v, path, retry, NULL);
    assert_non_null(res->body);
    json_error_t error;
    json_t *body = json_loadb(res->body, res->body_len, 0, &error);
    if (body == NULL)
        fail_msg("not JSON: %.*s", (int)res->body_len, res->body);
    return body;
}

static void test_bodies(void **state) {
    (void)state;
    srv_gate_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.rate_per_s = 0.5;
    cfg.burst = 4;
    cfg.max_concurrent = 2;
    cfg.max_in_flight = 64;
    srv_gate *g = srv_gate_new(&cfg);
    struct {
        srv_gate_verdict v;
        int status;
        const char *code, *title, *names; /* names: the limit in the detail */
    } cases[] = {
        {SRV_GATE_RATE_LIMITED, 429, "rate_limited", "Too Many Requests",
         "0.5 per second with bursts of 4; retry after 2 s"},
        {SRV_GATE_TOO_CONCURRENT, 429, "rate_limited", "Too Many Requests",
         "2 in flight"},
        {SRV_GATE_UNAUTHORIZED, 401, "unauthorized", "Unauthorized",
         "Authorization: Bearer <token>"},
        {SRV_GATE_INVALID_TOKEN, 401, "unauthorized", "Unauthorized",
         "not one this server accepts"},
        {SRV_GATE_OVERLOADED, 503, "overloaded", "Service Unavailable",
         "more than 64 requests"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        api_response res;
        json_t *body = respond(g, cases[i].v, "/attention/dot", 2, &res);
        assert_int_equal(res.status, cases[i].status);
        assert_string_equal(res.content_type, "application/problem+json");
        assert_string_equal(json_string_value(json_object_get(body, "code")),
                            cases[i].code);
        assert_string_equal(json_string_value(json_object_get(body, "title")),
                            cases[i].title);
        assert_int_equal(json_integer_value(json_object_get(body, "status")),
                         cases[i].status);
        assert_string_equal(json_string_value(json_object_get(body, "type")),
                            "about:blank");
        const char *detail = json_string_value(json_object_get(body, "detail"));
        assert_non_null(detail);
        if (strstr(detail, cases[i].names) == NULL)
            fail_msg("detail '%s' does not say '%s'", detail, cases[i].names);
        json_decref(body);
        api_response_free(&res);

        /* the Open Inference Protocol's own error body */
        static const char *v2[] = {"/v2", "/v2/models/attention_dot/infer"};
        for (size_t k = 0; k < 2; k++) {
            body = respond(g, cases[i].v, v2[k], 2, &res);
            assert_int_equal(res.status, cases[i].status);
            assert_string_equal(res.content_type, "application/json");
            assert_int_equal(json_object_size(body), 1);
            const char *error =
                json_string_value(json_object_get(body, "error"));
            assert_non_null(error);
            assert_non_null(strstr(error, cases[i].names));
            json_decref(body);
            api_response_free(&res);
        }
        /* "/v2x" is not under /v2 */
        body = respond(g, cases[i].v, "/v2x", 2, &res);
        assert_string_equal(res.content_type, "application/problem+json");
        json_decref(body);
        api_response_free(&res);
    }
    assert_string_equal(srv_gate_www_authenticate(SRV_GATE_UNAUTHORIZED),
                        "Bearer");
    assert_string_equal(srv_gate_www_authenticate(SRV_GATE_INVALID_TOKEN),
                        "Bearer error=\"invalid_token\"");
    assert_null(srv_gate_www_authenticate(SRV_GATE_RATE_LIMITED));
    assert_null(srv_gate_www_authenticate(SRV_GATE_PASS));
    srv_gate_free(g);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_open_routes),
        cmocka_unit_test(test_order_and_limits),
        cmocka_unit_test(test_tokens_are_clients),
        cmocka_unit_test(test_graders),
        cmocka_unit_test(test_forwarded),
        cmocka_unit_test(test_bodies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
