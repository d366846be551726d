/*
 * grade_search.c — the catalogue's mistake behind a wrong answer
 * (grader.h, misconceptions.h): each mistake's answer computed in turn,
 * within a bounded search, and the one that explains the most failed
 * fields named.
 */
#include <math.h>
#include <string.h>

#include "grade.h"
#include "grade_entries.h"
#include "grader.h"
#include "misconceptions.h"

/* 1 when a mistake's answer (result) explains the failed field ff: the
 * mistake's item of that name has the answer's shape, every entry of it
 * matches the answer's under the field's own comparison (so a mistake
 * whose answer is not finite there explains nothing: JSON carries no
 * infinity), where the reference fails some; and its largest error is
 * no larger than the reference's (a field of the wrong shape was never
 * close). A mistake that only comes as close as a failing reference,
 * under a tolerance its own size has widened, explains nothing. */
static int field_matches(const grader *g, const api_result *result,
                         const struct failed_field *ff) {
    const api_grade_field *graded = &g->grade->fields[ff->field];
    const api_result_item *it =
        api_result_find(result, ff->name, strlen(ff->name));
    if (!it || it->kind == API_ITEM_EVENTS)
        return 0;
    api_grade_ref_view want;
    api_grade_view got;
    if (api_grade_view_of(&got, g->doc, ff->value, ff->pointer)) {
        free(got.leaves);
        return 0;
    }
    api_grade_ref_view_of(&want, result, it);
    int match = !got.ragged && api_grade_same_shape(&want, &got);
    api_compare c = graded->kind == API_GRADE_VALUES
                        ? graded->compare
                        : api_grader_comparison_of(g, ff->name);
    api_grade_tally t;
    memset(&t, 0, sizeof t);
    t.rounded_to = -1;
    /* out of time: no match (the search stops at its own bound) */
    if (match && api_grade_compare_all(&c, &t, &want, &got, 1))
        match = 0;
    free(got.leaves);
    if (!match || t.mismatches != 0)
        return 0;
    if (graded->kind != API_GRADE_VALUES)
        return 1;
    /* closer than the reference; a reference error that overflowed
     * (not finite) is farther than any finite one */
    return !isfinite(graded->max_abs_err) || t.max_abs <= graded->max_abs_err;
}

/* The mistake search's work and time: SEARCH_SHARE references' worth,
 * at least SEARCH_FLOOR operations and SEARCH_FLOOR_MS milliseconds
 * (api_grader_find_misconception). */
#define SEARCH_SHARE 4
#define SEARCH_FLOOR ((uint64_t)1 << 24)
#define SEARCH_FLOOR_MS 100.0

/* The bounds of one search, and what it has spent so far. */
typedef struct {
    uint64_t spent;    /* operations counted by the mistakes tried */
    uint64_t price;    /* the most one has counted (the reference's first) */
    uint64_t budget;   /* operations the search may count (0: no bound) */
    double timeout_ms; /* --compute-timeout from the grade's start (0: none) */
    double slowest;    /* the longest one has taken (ms) */
    double started_ms; /* when the search began (api_clock_ms) */
    double search_ms;  /* the search's own time (ms) */
} search_bounds;

/* The mistakes of one answer together do at most SEARCH_SHARE times
 * the reference's work (or SEARCH_FLOOR operations, which every
 * classroom exercise fits whole), and never more than one request may
 * (--max-work): a wrong answer to a large request costs its sender a
 * few references, not the whole catalogue's. Each is priced at the
 * most one has counted so far
 * (the reference's to begin with), and the search stops before one
 * that would not fit, naming the best of those tried; so it does
 * before one that, at the longest time one has taken, would take the
 * search past SEARCH_SHARE times the reference's time. A mistake
 * computed outside a route (a fit run the mistaken way, a softmax
 * along the other axis) counts no operations of its own, so each that
 * answers is counted at least at the price; one that does not apply
 * counts what it did. Time is bounded likewise: the search stops
 * before a mistake that, at the longest time one has taken (the
 * reference's to begin with), would end beyond --compute-timeout from
 * the start of the grade. */
static void start_search(search_bounds *s, const grader *g,
                         const api_call *call) {
    s->spent = 0;
    s->price = g->reference_ops;
    s->budget = g->reference_ops > SEARCH_FLOOR / SEARCH_SHARE
                    ? SEARCH_SHARE * g->reference_ops
                    : SEARCH_FLOOR;
    if (call->limits && call->limits->max_work &&
        call->limits->max_work < s->budget)
        s->budget = call->limits->max_work;
    s->timeout_ms = call->limits && call->limits->compute_timeout_s
                        ? 1000.0 * call->limits->compute_timeout_s
                        : 0;
    s->slowest = g->reference_ms;
    s->started_ms = api_clock_ms();
    s->search_ms = SEARCH_SHARE * g->reference_ms > SEARCH_FLOOR_MS
                       ? SEARCH_SHARE * g->reference_ms
                       : SEARCH_FLOOR_MS;
}

/* After a mistake tried from now (api_clock_ms) that counted ops and
 * returned rc: what it spent, and the price and time of the next. */
static void count_tried(search_bounds *s, uint64_t ops, int rc, double now) {
    s->spent +=
        ops > s->price || rc == API_MISTAKE_NOT_APPLICABLE ? ops : s->price;
    if (ops > s->price)
        s->price = ops;
    if (api_clock_ms() - now > s->slowest)
        s->slowest = api_clock_ms() - now;
}

/* The failed fields the mistake's answer wrong explains, marked in
 * these (field_matches); returns how many. */
static size_t count_explained(const grader *g, const api_result *wrong,
                              unsigned char *these) {
    size_t count = 0;
    for (size_t f = 0; f < g->n_failed; f++) {
        these[f] = (unsigned char)field_matches(g, wrong, &g->failed[f]);
        count += these[f];
    }
    return count;
}

void api_grader_find_misconception(grader *g, api_call *call,
                                   const api_grade_references *refs,
                                   const json_t *request) {
    if (g->n_failed == 0)
        return; /* only missing fields failed: no mistake explains those */
    size_t n = 0;
    const api_misconception *list = api_misconceptions_of(g->route, &n);
    const api_misconception *best = NULL;
    unsigned char explains[API_RESULT_ITEMS_MAX] = {0};
    size_t best_count = 0;
    api_problem saved = call->problem;
    api_mistake_memo memo = {0};
    struct api_mistake_memo *outer_memo = call->memo;
    call->memo = &memo;
    search_bounds s;
    start_search(&s, g, call);
    for (size_t m = 0; m < n; m++) {
        if (s.budget && (s.spent > s.budget || s.price > s.budget - s.spent))
            break;
        double now = api_clock_ms();
        if (s.timeout_ms > 0 && now - g->started_ms + s.slowest > s.timeout_ms)
            break;
        if (now - s.started_ms + s.slowest > s.search_ms)
            break;
        uint64_t before = call->cost.ops;
        api_result wrong;
        memset(&wrong, 0, sizeof wrong);
        int rc = refs ? refs->mistake(refs->ctx, call, &list[m], request,
                                      g->reference, &wrong)
                      : list[m].answer(call, request, g->reference, &wrong);
        if (rc == API_MISTAKE_ANSWERED) {
            unsigned char these[API_RESULT_ITEMS_MAX] = {0};
            size_t count = count_explained(g, &wrong, these);
            if (count > best_count) {
                best = &list[m];
                best_count = count;
                memcpy(explains, these, sizeof explains);
            }
        }
        if (refs)
            refs->release(refs->ctx, &wrong);
        else
            api_result_free(&wrong);
        count_tried(&s, call->cost.ops - before, rc, now);
        /* every failed field explained: a later mistake could only tie,
         * and the first of equals is the one named */
        if (best_count == g->n_failed && !g->search_all)
            break;
    }
    call->memo = outer_memo;
    api_mistake_memo_free(&memo);
    call->problem = saved;
    g->grade->misconception = best;
    for (size_t f = 0; best && f < g->n_failed; f++)
        if (explains[f])
            g->grade->fields[g->failed[f].field].explained = 1;
}
