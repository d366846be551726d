/*
 * limit.c — derived-size and work limits (see limit.h).
 */
#include "limit.h"

#include <stdatomic.h>
#include <stdio.h>

#include "api.h"
#include "attn.h"
#include "budget.h"

uint64_t api_work_mul(uint64_t a, uint64_t b) {
    if (a && b > UINT64_MAX / a)
        return UINT64_MAX;
    return a * b;
}

uint64_t api_work_add(uint64_t a, uint64_t b) {
    return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

uint64_t api_work_prod(const size_t *dims, size_t n) {
    uint64_t w = 1;
    for (size_t i = 0; i < n; i++)
        w = api_work_mul(w, dims[i]);
    return w;
}

int api_limit_elements(const char *what, const size_t *dims, size_t n,
                       size_t max_elements, api_problem *p) {
    uint64_t count = api_work_prod(dims, n);
    if (count <= max_elements)
        return 0;
    char shape[160];
    size_t len = 0;
    shape[len++] = '(';
    for (size_t i = 0; i < n && len + 24 < sizeof shape; i++)
        len += (size_t)snprintf(shape + len, sizeof shape - len, "%s%zu",
                                i ? ", " : "", dims[i]);
    snprintf(shape + len, sizeof shape - len, ")");
    return api_fail(p, API_E_PAYLOAD_TOO_LARGE, NULL,
                    "the %s would have shape %s: %llu %s, over the limit of "
                    "%zu per tensor (--max-elements)",
                    what, shape, (unsigned long long)count,
                    api_plural(count, "element", "elements"), max_elements);
}

int api_limit_work(uint64_t work, uint64_t max_work, api_problem *p) {
    if (work <= max_work)
        return 0;
    return api_fail(p, API_E_PAYLOAD_TOO_LARGE, NULL,
                    "this request needs about %llu multiply-adds; the limit "
                    "is %llu (--max-work)",
                    (unsigned long long)work, (unsigned long long)max_work);
}

int api_limit_answer(uint64_t answer_bytes, uint64_t max_bytes,
                     size_t max_elements, api_problem *p) {
    if (answer_bytes <= max_bytes)
        return 0;
    char need[32], most[32];
    api_bytes_text(need, sizeof need, answer_bytes);
    api_bytes_text(most, sizeof most, max_bytes);
    return api_fail(p, API_E_PAYLOAD_TOO_LARGE, NULL,
                    "the answer would hold up to %s of text; an answer holds "
                    "at most twice the limit of %zu numbers per tensor "
                    "(--max-elements), %s: ask for fewer members "
                    "(return_weights: false, no return_scores, no trace; "
                    "parameters drawn from a seed are answered too, so give "
                    "them instead) or smaller shapes",
                    need, max_elements, most);
}

static _Thread_local unsigned deadline_s; /* the limit in force, for messages */
static atomic_int stopping;               /* api_cancel_computing was called */

void api_cancel_computing(void) {
    atomic_store(&stopping, 1);
    attn_deadline_cancel_all();
}

int api_limit_time(uint64_t work, unsigned timeout_s, api_problem *p) {
    if (timeout_s == 0 || (double)work / API_OPS_PER_SECOND_MAX <= timeout_s)
        return 0;
    return api_fail(p, API_E_PAYLOAD_TOO_LARGE, NULL,
                    "the estimated %llu operations would take more than the "
                    "server's time limit of %u s per request "
                    "(--compute-timeout) even at %.0f G operations per "
                    "second; ask for less work",
                    (unsigned long long)work, timeout_s,
                    API_OPS_PER_SECOND_MAX / 1e9);
}

static _Thread_local double deadline_at; /* attn_clock_seconds, 0: none */

void api_limit_deadline_start(unsigned timeout_s) {
    deadline_s = timeout_s;
    deadline_at = timeout_s ? attn_clock_seconds() + timeout_s : 0;
    attn_deadline_set(deadline_at);
}

static _Thread_local const atomic_int *abandoned; /* api_limit_watch */

void api_limit_watch(const atomic_int *flag) {
    abandoned = flag;
    attn_deadline_watch(flag);
}

const atomic_int *api_limit_abandoned(void) {
    return abandoned;
}

int api_limit_cut_short(void) {
    return (abandoned != NULL && atomic_load(abandoned)) ||
           atomic_load(&stopping);
}

int api_limit_time_is_up(void) {
    return api_limit_cut_short() ||
           (deadline_at > 0 && attn_clock_seconds() > deadline_at);
}

int api_limit_deadline_passed(api_problem *p) {
    if (abandoned != NULL && atomic_load(abandoned))
        return api_fail(p, API_E_OVERLOADED, NULL,
                        "the client closed the connection, so the "
                        "computation was stopped: its answer had no reader");
    if (atomic_load(&stopping))
        return api_fail(p, API_E_OVERLOADED, NULL,
                        "the server is stopping and its computations were "
                        "cut short; retry on another replica or after it "
                        "restarts");
    return api_fail(p, API_E_OVERLOADED, NULL,
                    "the computation ran past the server's time limit of %u "
                    "s per request (--compute-timeout) and was stopped; ask "
                    "for less work (smaller tensors, num_hiddens, epochs)",
                    deadline_s);
}
