/*
 * gate.h — admission of a request whose route is known: after 404 and 405,
 * before 415 (docs/contract.md section 1, "Order of checks"). In turn, each
 * only when configured:
 *   1. per-client fairness (ratelimit.h), a client being a listed token or
 *      else an address: 429 rate_limited;
 *   2. the bearer token (auth.h): 401 unauthorized;
 *   3. the server-wide cap on requests in flight: 503 overloaded.
 * Which routes stay open when a token is required (docs/contract.md section 14)
 * and which routes no limit counts (health probes, so that an orchestrator
 * never restarts a busy but healthy server) are facts of each route's
 * entry in the api's route table (api_route_flags). Refusals are written
 * by the api as the path's front writes errors: problem+json, or
 * {"error": "..."} under /v2 (docs/contract.md section 12).
 */
#ifndef SRV_GATE_H
#define SRV_GATE_H

#include <stddef.h>
#include <sys/socket.h>

#include "api.h"
#include "auth.h"
#include "client_addr.h"
#include "ratelimit.h"

typedef struct srv_gate srv_gate;

typedef struct {
    double rate_per_s;       /* per client; 0: no rate limit */
    unsigned burst;          /* bucket capacity; 0: ceil(rate), at least 1 */
    unsigned max_concurrent; /* per client in flight; 0: no cap */
    unsigned max_in_flight;  /* server-wide; 0: no cap */
    srv_netlist trusted;     /* proxies whose X-Forwarded-For is believed */
    srv_auth *auth;          /* taken over by the gate; NULL: no token */
    /* graders' tokens (--grading-token-file), taken over by the gate:
     * each also passes where auth asks for a token; NULL: none */
    srv_auth *grading;
    int metrics_public; /* 1: GET /metrics needs no token */
} srv_gate_config;

/* What admission decided. */
typedef enum {
    SRV_GATE_PASS = 0,
    SRV_GATE_RATE_LIMITED,   /* 429: the client's bucket is empty */
    SRV_GATE_TOO_CONCURRENT, /* 429: the client has too many in flight */
    SRV_GATE_UNAUTHORIZED,   /* 401: no bearer token */
    SRV_GATE_INVALID_TOKEN,  /* 401: a bearer token that is not listed */
    SRV_GATE_OVERLOADED      /* 503: the server has too many in flight */
} srv_gate_verdict;

/* The parts of a request admission looks at. Strings are borrowed. */
typedef struct {
    const char *route;                /* route template, e.g. "/healthz" */
    const struct sockaddr *peer;      /* the connection's peer */
    const char *const *forwarded_for; /* X-Forwarded-For values, in order */
    size_t n_forwarded_for;
    const char *authorization; /* Authorization header, or NULL */
    unsigned in_flight;        /* server-wide requests whose head is complete,
                                  this one included */
    double now_s;              /* monotonic clock, seconds */
} srv_gate_request;

/* A gate for cfg (copied; cfg->auth is taken over even on failure).
 * Returns NULL when memory runs out. */
srv_gate *srv_gate_new(const srv_gate_config *cfg);

/* Decide on req. On SRV_GATE_PASS *ticket holds the client's place (give
 * it back with srv_gate_release when the request completes, whatever its
 * answer); on a refusal it names nothing and *retry_after_s is the
 * Retry-After value (seconds, >= 1) for 429 and 503, else 0. *token_label
 * is the label of the listed token the request showed (auth.h, owned by
 * the gate), else NULL. The rate limit and the cap in flight count per
 * client: the listed token when one was shown (srv_client_of_token), else
 * the address (srv_client_addr). Thread-safe. */
srv_gate_verdict srv_gate_admit(srv_gate *g, const srv_gate_request *req,
                                srv_rl_ticket *ticket, unsigned *retry_after_s,
                                const char **token_label);

/* 1 when authorization (an Authorization header, or NULL) carries a
 * grader's token (--grading-token-file): its request may grade and hand
 * out students' variants (api_request.grader). Thread-safe; constant
 * time as srv_auth_check. */
int srv_gate_is_grader(const srv_gate *g, const char *authorization);

/* The request behind ticket has completed. Safe on an empty ticket. */
void srv_gate_release(srv_gate *g, const srv_rl_ticket *ticket);

/* 1 when route needs no token even with auth on: GET /, /healthz,
 * /v2/health/..., /openapi.json, /version, and /metrics when metrics_public
 * (OPTIONS preflights never reach the gate). */
int srv_gate_route_open(const srv_gate *g, const char *route);

/* 1 when no limit counts route: /healthz, /v2/health/..., /metrics. */
int srv_gate_route_unlimited(const char *route);

/* Fill res (zeroed by the caller) with the answer to refusal v for a
 * request to path: status, content type and a malloc'd body, owned by
 * res (api_response_free). Problem+json (code rate_limited, unauthorized
 * or overloaded) with a detail that names the limit, or {"error": detail}
 * for paths under /v2. A body that cannot be allocated leaves body NULL.
 * A 429's detail says "with your token" when token_label (srv_gate_admit's)
 * is not NULL, else "from your address". The detail never contains what
 * the client sent. */
void srv_gate_respond(const srv_gate *g, api_response *res, srv_gate_verdict v,
                      const char *path, unsigned retry_after_s,
                      const char *token_label);

/* The WWW-Authenticate value for a 401 verdict (RFC 6750 section 3):
 * "Bearer", or with error="invalid_token" when a wrong token was sent;
 * NULL for other verdicts. */
const char *srv_gate_www_authenticate(srv_gate_verdict v);

/* 1 when some check is configured (tokens, a per-client limit or the
 * in-flight cap); 0 when every request would pass, so that the caller may
 * skip gathering what admission looks at. */
int srv_gate_active(const srv_gate *g);

/* The configuration in force (burst filled in when it defaulted). */
const srv_gate_config *srv_gate_config_of(const srv_gate *g);

/* Free g and what it took over; NULL is ignored. */
void srv_gate_free(srv_gate *g);

#endif /* SRV_GATE_H */
