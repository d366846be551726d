/*
 * gate.c — admission in the contract's order, and the refusals' details
 * (see gate.h).
 */
#include "gate.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct srv_gate {
    srv_gate_config cfg;
    srv_ratelimit *rl; /* NULL when no per-client limit is set */
};

srv_gate *srv_gate_new(const srv_gate_config *cfg) {
    srv_gate *g = calloc(1, sizeof *g);
    if (g == NULL) {
        srv_auth_free(cfg->auth);
        srv_auth_free(cfg->grading);
        return NULL;
    }
    g->cfg = *cfg;
    if (g->cfg.rate_per_s > 0 && g->cfg.burst == 0) {
        double b = ceil(g->cfg.rate_per_s);
        g->cfg.burst = b < 1 ? 1u : b > 1e6 ? 1000000u : (unsigned)b;
    }
    if (g->cfg.rate_per_s > 0 || g->cfg.max_concurrent > 0) {
        g->rl = srv_ratelimit_new(g->cfg.rate_per_s, g->cfg.burst,
                                  g->cfg.max_concurrent);
        if (g->rl == NULL) {
            srv_gate_free(g);
            return NULL;
        }
    }
    return g;
}

int srv_gate_route_open(const srv_gate *g, const char *route) {
    unsigned flags = api_route_flags(route);
    return (flags & API_ROUTE_OPEN) != 0 ||
           ((flags & API_ROUTE_OPEN_IF_METRICS_PUBLIC) &&
            g->cfg.metrics_public);
}

int srv_gate_route_unlimited(const char *route) {
    return (api_route_flags(route) & API_ROUTE_UNLIMITED) != 0;
}

srv_gate_verdict srv_gate_admit(srv_gate *g, const srv_gate_request *req,
                                srv_rl_ticket *ticket, unsigned *retry_after_s,
                                const char **token_label) {
    ticket->slot = UINT32_MAX;
    ticket->generation = 0;
    *retry_after_s = 0;
    *token_label = NULL;
    unsigned flags = api_route_flags(req->route);
    int unlimited = (flags & API_ROUTE_UNLIMITED) != 0;
    /* the token first, so that a refusal's log line names its label */
    srv_auth_result auth = SRV_AUTH_OK;
    if (g->cfg.auth != NULL && !srv_gate_route_open(g, req->route))
        auth = srv_auth_check(g->cfg.auth, req->authorization, token_label);
    else if (g->cfg.auth != NULL && req->authorization != NULL)
        /* an open route: a listed token still says who asked (the log
         * line's label); a wrong one is not refused */
        (void)srv_auth_check(g->cfg.auth, req->authorization, token_label);
    /* a grader's token is a token too, and names its grader */
    if (*token_label == NULL && g->cfg.grading != NULL &&
        req->authorization != NULL &&
        srv_auth_check(g->cfg.grading, req->authorization, token_label) ==
            SRV_AUTH_OK)
        auth = SRV_AUTH_OK;
    /* a document served as it is costs a copy of bytes kept compressed:
     * no per-client limit counts it, the cap on all in flight does */
    int per_client = !unlimited && !(flags & API_ROUTE_STATIC);
    srv_addr peer;
    if (g->rl != NULL && per_client &&
        srv_addr_from_sockaddr(&peer, req->peer) == 0) {
        srv_addr client = srv_client_addr(
            &peer, &g->cfg.trusted, req->forwarded_for, req->n_forwarded_for);
        /* a listed token is its client: a room behind one NAT, a token a
         * student, is as many clients as tokens; a missing or wrong token
         * is charged to the address, which slows down guessing */
        if (auth == SRV_AUTH_OK && *token_label != NULL)
            client = srv_client_of_token(*token_label);
        switch (srv_ratelimit_admit(g->rl, &client, req->now_s, ticket,
                                    retry_after_s)) {
        case SRV_RL_ADMIT:
            break;
        case SRV_RL_RATE:
            return SRV_GATE_RATE_LIMITED;
        case SRV_RL_CONCURRENT:
            return SRV_GATE_TOO_CONCURRENT;
        }
    }
    srv_gate_verdict v = SRV_GATE_PASS;
    if (auth == SRV_AUTH_MISSING)
        v = SRV_GATE_UNAUTHORIZED;
    else if (auth == SRV_AUTH_INVALID_TOKEN)
        v = SRV_GATE_INVALID_TOKEN;
    if (v == SRV_GATE_PASS && g->cfg.max_in_flight > 0 && !unlimited &&
        req->in_flight > g->cfg.max_in_flight) {
        v = SRV_GATE_OVERLOADED;
        *retry_after_s = 1;
    }
    if (v != SRV_GATE_PASS) {
        srv_ratelimit_release(g->rl, ticket);
        ticket->slot = UINT32_MAX;
    }
    return v;
}

void srv_gate_release(srv_gate *g, const srv_rl_ticket *ticket) {
    if (g != NULL)
        srv_ratelimit_release(g->rl, ticket);
}

const char *srv_gate_www_authenticate(srv_gate_verdict v) {
    if (v == SRV_GATE_UNAUTHORIZED)
        return "Bearer";
    if (v == SRV_GATE_INVALID_TOKEN)
        return "Bearer error=\"invalid_token\"";
    return NULL;
}

void srv_gate_respond(const srv_gate *g, api_response *res, srv_gate_verdict v,
                      const char *path, unsigned retry_after_s,
                      const char *token_label) {
    res->compute_ms = -1;
    /* who was limited: the token, or else the address (srv_gate_admit) */
    const char *whose =
        token_label != NULL ? "with your token" : "from your address";
    switch (v) {
    case SRV_GATE_RATE_LIMITED:
        api_refuse(res, path, 429,
                   "too many requests %s: the limit is %g per second with "
                   "bursts of %u; retry after %u s",
                   whose, g->cfg.rate_per_s, g->cfg.burst, retry_after_s);
        break;
    case SRV_GATE_TOO_CONCURRENT:
        api_refuse(res, path, 429,
                   "too many requests %s at once: the limit is %u in flight; "
                   "retry when one has been answered",
                   whose, g->cfg.max_concurrent);
        break;
    case SRV_GATE_UNAUTHORIZED:
        api_refuse(res, path, 401,
                   "this server needs a token: send the header "
                   "Authorization: Bearer <token> (ask whoever runs it)");
        break;
    case SRV_GATE_INVALID_TOKEN:
        api_refuse(res, path, 401,
                   "the bearer token is not one this server accepts");
        break;
    case SRV_GATE_OVERLOADED:
        api_refuse(res, path, 503,
                   "the server is busy: more than %u requests are in flight; "
                   "retry after %u s",
                   g->cfg.max_in_flight, retry_after_s);
        break;
    case SRV_GATE_PASS:
        api_refuse(res, path, 500, "admitted request refused");
        break;
    }
}

int srv_gate_active(const srv_gate *g) {
    return g->cfg.auth != NULL || g->cfg.grading != NULL || g->rl != NULL ||
           g->cfg.max_in_flight > 0;
}

int srv_gate_is_grader(const srv_gate *g, const char *authorization) {
    const char *label;
    return g != NULL && g->cfg.grading != NULL && authorization != NULL &&
           srv_auth_check(g->cfg.grading, authorization, &label) == SRV_AUTH_OK;
}

const srv_gate_config *srv_gate_config_of(const srv_gate *g) {
    return &g->cfg;
}

void srv_gate_free(srv_gate *g) {
    if (g == NULL)
        return;
    srv_ratelimit_free(g->rl);
    srv_auth_free(g->cfg.auth);
    srv_auth_free(g->cfg.grading);
    free(g);
}
