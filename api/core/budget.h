/*
 * budget.h — one request's share of the server-wide memory budget
 * (docs/contract.md, "Sharing one server"; the budget itself: api.h).
 *
 * Everything a request holds in memory is reserved before it is taken:
 *   - its body's text, by the server, from its Content-Length (or as a
 *     chunked body grows);
 *   - the JSON tree jansson would build, from a cheap pass over the text
 *     (api_json_tree_bytes, json_tree.h), before jansson builds it;
 *   - its route's cost (cost.h: input, working set and answer), once its
 *     shapes are known and before it computes (api_route_charge);
 *   - its answer for as long as it is held, a slow reader included: what
 *     the answer really holds (api_response.charged) stays reserved until
 *     the server frees it.
 * A request's reservations are kept in its ledger, which the dispatcher
 * reconciles when the answer is made.
 */
#ifndef API_BUDGET_H
#define API_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "problem.h"

/* What one request has reserved, and whether it may wait for room. */
typedef struct {
    uint64_t held; /* bytes reserved through this ledger */
    /* 1: may wait in the budget's queue (api_request); 0: no room now is
     * 503; -1: a try on an HTTP thread (api_request.inline_work_max): no
     * room now sets deferred instead */
    int may_wait;
    /* the request is to be handled again on a compute thread: no room now
     * in a try, or its work beyond inline_work_max (api_route_charge) */
    int deferred;
} api_ledger;

/* Reserve bytes for what the request is about to hold (what: "the JSON
 * tree of the body", "its tensors, working set and answer"): 413
 * payload_too_large when it exceeds the whole budget, 503 overloaded when
 * it does not fit now and waiting (if allowed) did not make room (in a
 * try: ledger->deferred set as well). Returns 0 (ledger->held grown) or -1
 * with p set. A NULL ledger reserves nothing. */
int api_ledger_reserve(api_ledger *ledger, uint64_t bytes, const char *what,
                       api_problem *p);

/* A tree gate's step (fastpath.h) for a JSON text whose tree would take
 * `bytes` (json_tree.h), the text replacing any before it in tree: more
 * than max (> 0) is 413 payload_too_large, "<whose> JSON would take about
 * N MiB of memory as a tree of values, over the limit of M MiB<limit_note>:
 * it holds too many values outside arrays of numbers; ..." (whose: "the
 * body's"; limit_note: "" or " (four times --max-body-bytes)"); else the
 * bytes are reserved in tree as `what` (api_ledger_reserve). Returns 0,
 * or -1 with p set. */
int api_ledger_admit_tree(api_ledger *tree, uint64_t bytes, size_t max,
                          const char *whose, const char *limit_note,
                          const char *what, api_problem *p);

/* Keep `keep` bytes of what ledger holds and give the rest back; returns
 * what is kept. When keep is more than is held, the difference is taken
 * without waiting and even beyond the budget (an answer is never thrown
 * away once made). */
uint64_t api_ledger_settle(api_ledger *ledger, uint64_t keep);

/* bytes as text with a unit that keeps three digits, into buf (cap
 * bytes): "812 KiB", "44.3 MiB", "1.5 GiB". No error. */
void api_bytes_text(char *buf, size_t cap, uint64_t bytes);

#endif /* API_BUDGET_H */
