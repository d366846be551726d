/*
 * batch_share.c — what the submissions of a batch share (batch_internal.h,
 * docs/batch.md): the batch's limits, and the references and mistakes'
 * answers of equal requests.
 *
 * The batch is one request: the operations its computations count are
 * held to its --max-work together, and its wall time to
 * --compute-timeout, so each computation runs with the limits of what is
 * left, and the first that does not fit stops the batch.
 *
 * The references come from a provider (grade.h) that looks in the
 * batch's cache (reference_cache.h) before it computes: a request seen
 * before, byte for byte or by its canonical form (request_key.h), gets
 * the reference and the mistakes' answers computed for it then, lent to
 * the grade without a copy.
 */
#include <math.h>
#include <string.h>

#include "batch_internal.h"
#include "invoke.h"
#include "limit.h"
#include "misconceptions.h"
#include "request_key.h"

/* ------------------------------------------------------------ limits */

double api_batch_elapsed_s(const batch *b) {
    return (api_clock_ms() - b->start_ms) / 1e3;
}

/* The limits a computation gets: the work not yet counted, the seconds
 * not yet spent (whole seconds, rounded up: the library's deadline), and
 * in a try on an HTTP thread the inline work not yet counted. */
static void limit_to_what_is_left(batch *b) {
    const api_limits *all = b->call->limits;
    b->left.max_work = all->max_work - b->work;
    if (all->compute_timeout_s > 0) {
        double rest = all->compute_timeout_s - api_batch_elapsed_s(b);
        b->left.compute_timeout_s = rest < 1 ? 1 : (unsigned)ceil(rest);
    }
    if (b->call->req->inline_work_max > 0)
        b->sub_req.inline_work_max =
            b->call->req->inline_work_max > b->work
                ? b->call->req->inline_work_max - b->work
                : 1;
}

/* After a computation that counted ops operations: count them when it
 * ran, or tell whether it failed for the batch's limits (not its own: a
 * request beyond --max-work by itself fails alone, as on /grade). */
static void count_work(batch *b, uint64_t ops, int failed) {
    const api_limits *all = b->call->limits;
    if (!failed) {
        b->work = api_work_add(b->work, ops);
        if (b->work > all->max_work) /* cannot happen: each fit what was left */
            b->work = all->max_work;
        return;
    }
    double needs_s = (double)ops / API_OPS_PER_SECOND_MAX;
    if (ops > b->left.max_work && ops <= all->max_work)
        b->stopped = OUT_OF_WORK;
    else if (all->compute_timeout_s > 0 &&
             (api_batch_elapsed_s(b) >= all->compute_timeout_s ||
              (needs_s > b->left.compute_timeout_s &&
               needs_s <= all->compute_timeout_s)))
        b->stopped = OUT_OF_TIME;
}

void api_batch_stopped_problem(const batch *b, api_problem *p) {
    const api_limits *all = b->call->limits;
    if (b->stopped == OUT_OF_WORK)
        api_fail(p, API_E_PAYLOAD_TOO_LARGE, NULL,
                 "not graded: the batch's references and mistakes together "
                 "need more than the %llu multiply-adds one request may "
                 "count (--max-work), which a batch shares; send this "
                 "submission and the ones after it in another batch",
                 (unsigned long long)all->max_work);
    else
        api_fail(p, API_E_OVERLOADED, NULL,
                 "not graded: the batch ran past the server's time limit "
                 "of %u s per request (--compute-timeout), which a batch "
                 "shares; send this submission and the ones after it in "
                 "another batch",
                 all->compute_timeout_s);
}

void api_batch_sub_call(batch *b, api_call *sub, api_ledger *ledger) {
    api_call *call = b->call;
    memset(sub, 0, sizeof *sub);
    *ledger = (api_ledger){0, call->ledger->may_wait, 0};
    sub->req = &b->sub_req;
    sub->route = call->route;
    sub->limits = &b->left;
    sub->ledger = ledger;
    sub->outer = call;
    sub->status = 200;
    sub->compute_ms = -1;
}

int api_batch_compute(batch *b, const api_route *route, const json_t *request,
                      const api_fastpath *doc, api_result *out) {
    api_call sub;
    api_ledger ledger;
    api_batch_sub_call(b, &sub, &ledger);
    sub.doc = doc;
    limit_to_what_is_left(b);
    int rc = api_invoke_result(&sub, route, request, doc, NULL, out);
    count_work(b, sub.cost.ops, rc != 0);
    b->counted.references_computed += rc == 0;
    api_ledger_settle(&ledger, 0);
    b->deferred |= ledger.deferred;
    return rc;
}

/* ------------------------------------------------- shared references */

/* Lend e's result r to api_grade_body as *dst (a shallow copy: its arena
 * stays the entry's). Returns 0, or -1 when no more can be lent. */
static int lend(batch *b, api_reference_entry *e, const api_result *r,
                api_result *dst) {
    if (b->n_lent == LENT_MAX)
        return -1;
    memcpy(dst, r, sizeof *dst);
    api_reference_cache_hold(b->cache, e);
    b->lent[b->n_lent].at = dst;
    b->lent[b->n_lent].entry = e;
    b->n_lent++;
    return 0;
}

static void share_release(void *ctx, api_result *result) {
    batch *b = ctx;
    for (size_t i = 0; i < b->n_lent; i++)
        if (b->lent[i].at == result) {
            api_reference_cache_drop(b->lent[i].entry);
            b->lent[i] = b->lent[--b->n_lent];
            memset(result, 0, sizeof *result);
            return;
        }
    api_result_free(result); /* computed for this submission alone */
}

/* The reference of the submission's request: its entry's when the
 * request was seen before (raw bytes first, then the canonical form),
 * else computed and kept. */
static int share_answer(void *ctx, api_call *call, const api_route *route,
                        const json_t *request, const char *query,
                        api_result *reference) {
    batch *b = ctx;
    b->entry = NULL;
    api_reference_entry *e = NULL;
    /* a student's variant (grade_variant.h) is drawn for that student
     * alone: neither the submission's bytes (the problem, the same for
     * every student) nor another's request can stand for it */
    if (request != b->request && !b->elided) {
        limit_to_what_is_left(b);
        uint64_t before = call->cost.ops;
        int rc = api_invoke_result(call, route, request, call->doc, query,
                                   reference);
        count_work(b, call->cost.ops - before, rc != 0);
        b->counted.references_computed += rc == 0;
        return rc;
    }
    if (b->raw_len > 0)
        e = api_reference_cache_find_raw(b->cache, route, b->raw_hash, b->raw,
                                         b->raw_len);
    api_buf key = {0};
    int keyed = 0;
    if (!e && b->request) {
        keyed = api_request_key(&key, call->doc, b->request) == 0 && key.data;
        if (keyed)
            e = api_reference_cache_find_key(
                b->cache, route, (unsigned char *)key.data, key.len);
        if (e)
            api_reference_cache_alias(b->cache, e, b->raw_hash, b->raw,
                                      b->raw_len);
    }
    if (e && lend(b, e, e->reference, reference) == 0) {
        b->entry = e;
        api_buf_free(&key);
        return 0;
    }
    if (b->elided) { /* its request is {}: nothing to compute it from */
        b->lost = 1;
        api_buf_free(&key);
        return api_fail(&call->problem, API_E_INTERNAL, NULL,
                        "the shared reference is lost");
    }
    limit_to_what_is_left(b);
    uint64_t before = call->cost.ops;
    int rc =
        api_invoke_result(call, route, request, call->doc, query, reference);
    count_work(b, call->cost.ops - before, rc != 0);
    if (rc == 0) {
        b->counted.references_computed++;
        size_t n_mistakes = 0;
        api_misconceptions_of(route, &n_mistakes);
        e = keyed && !e && b->n_lent < LENT_MAX
                ? api_reference_cache_add(
                      b->cache, route, (unsigned char *)key.data, key.len,
                      b->raw_hash, b->raw, b->raw_len, reference, n_mistakes)
                : NULL;
        if (e) {
            lend(b, e, e->reference, reference); /* none is lent yet */
            b->entry = e;
        }
    }
    api_buf_free(&key);
    return rc;
}

/* A mistake's answer to the submission's request: its entry's when known,
 * else computed (and kept when the entry is). */
static int share_mistake(void *ctx, api_call *call, const api_misconception *m,
                         const json_t *request, const api_result *reference,
                         api_result *wrong) {
    batch *b = ctx;
    api_reference_entry *e = b->entry;
    size_t n = 0, i = 0;
    if (e) {
        const api_misconception *list = api_misconceptions_of(e->route, &n);
        i = (size_t)(m - list);
        if (m < list || i >= n)
            e = NULL; /* not this route's: computed alone */
    }
    if (e && e->mistakes[i].state == API_CACHED_NOT_APPLICABLE)
        return API_MISTAKE_NOT_APPLICABLE;
    if (e && e->mistakes[i].state == API_CACHED_ANSWERED &&
        lend(b, e, e->mistakes[i].wrong, wrong) == 0)
        return API_MISTAKE_ANSWERED;
    if (b->elided) { /* its request is {}: nothing to compute it from */
        b->lost = 1;
        return API_MISTAKE_FAILED;
    }
    limit_to_what_is_left(b);
    uint64_t before = call->cost.ops;
    int rc = m->answer(call, request, reference, wrong);
    count_work(b, call->cost.ops - before, rc == API_MISTAKE_FAILED);
    if (rc == API_MISTAKE_ANSWERED)
        b->counted.mistakes_computed++;
    if (e && rc == API_MISTAKE_NOT_APPLICABLE)
        api_reference_cache_set_mistake(b->cache, e, i,
                                        API_CACHED_NOT_APPLICABLE, NULL);
    if (e && rc == API_MISTAKE_ANSWERED && b->n_lent < LENT_MAX &&
        api_reference_cache_set_mistake(b->cache, e, i, API_CACHED_ANSWERED,
                                        wrong) == 0)
        lend(b, e, e->mistakes[i].wrong, wrong);
    return rc;
}

api_grade_references api_batch_references(batch *b) {
    api_grade_references refs = {share_answer, share_mistake, share_release, b,
                                 0};
    return refs;
}
