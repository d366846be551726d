/*
 * misconceptions.h — the named mistake behind a wrong answer
 * (docs/grading.md "Misconceptions").
 *
 * When a field of a graded answer fails, /grade computes the request again
 * as each known wrong implementation would, and names the mistake whose
 * answer the student's matches within the same tolerance. Each entry of
 * the catalogue is one mistake of one route: a stable code ("dot.no_scale"),
 * a one-line explanation for the student that points at the right formula,
 * advice for the grader when there is some, and a function that answers a
 * request as the mistaken implementation would.
 *
 * The catalogue is only consulted for fields that failed against the right
 * answer, so a right answer never gets a misconception; a mistake that
 * changes nothing for a request (no valid_lens for a masking mistake,
 * d == dv for 1/√dv) says so and is skipped.
 */
#ifndef API_MISCONCEPTIONS_H
#define API_MISCONCEPTIONS_H

#include <jansson.h>
#include <stddef.h>

#include "call.h"
#include "result.h"
#include "route.h"

/* What a mistake's answer function returns. */
enum {
    API_MISTAKE_ANSWERED = 0,       /* *wrong holds the mistaken answer */
    API_MISTAKE_NOT_APPLICABLE = 1, /* cannot arise, or changes nothing */
    API_MISTAKE_FAILED = -1         /* out of memory, or the route refused the
                                       altered request: the mistake is skipped */
};

/* What the mistakes of one search share: the search (grade_search.c)
 * gives each one a memo in call->memo and frees it after. A route's
 * mistakes keep in it what several of them compute alike from the one
 * request they all answer (misconceptions_dot.c: the route's scores,
 * masked and not), so that it is computed once per search; data is the
 * route's, free frees it. */
typedef struct api_mistake_memo {
    void *data;
    void (*free)(void *data);
} api_mistake_memo;

/* Free what m holds; m is then empty. */
void api_mistake_memo_free(api_mistake_memo *m);

typedef struct api_misconception {
    const char *code; /* stable, "<route>.<mistake>": "dot.no_scale" */
    /* For the student, one line: what was done, what to check in their
     * code, and the right formula with its source (d2l section, paper).
     * Never advice on how to grade: that is instructor's. */
    const char *explanation;
    /* For the grader, or NULL: how the question could be graded
     * differently (a request option that accepts the convention the
     * mistake follows). Written where students do not see it
     * (docs/misconceptions.md "Who reads what"). */
    const char *instructor;
    /* Answer request (the route's own request object, already accepted by
     * the route, whose right answer is reference) as the mistaken
     * implementation would, into *wrong (zeroed by the caller; freed by the
     * caller with api_result_free whatever is returned). wrong names its
     * items as the reference does; items the mistake does not change may be
     * left out. Tensors inside request may be fast-path placeholders
     * (fastpath.h): alter a request with json_copy (shallow, so they stay
     * the same values) and api_invoke_result it, or read its tensors with
     * the route's codec. call is the grading call (limits, ledger); its
     * problem may be overwritten. Returns API_MISTAKE_*. */
    int (*answer)(api_call *call, const json_t *request,
                  const api_result *reference, api_result *wrong);
} api_misconception;

/* The masking mistakes dot attention and masked softmax share, their
 * texts written once. */
#define API_EXPLAIN_MASK_IGNORED                                               \
    "the mask was left out, every key seen: masked softmax gives the keys "    \
    "beyond a query's valid_len (and after it under causal) weight 0 "         \
    "(d2l 11.3.1)"
#define API_EXPLAIN_NAN_ROWS                                                   \
    "a query that sees no key got NaN weights (masked scores −inf, then 0 "  \
    "/ 0): check the rows whose every key is masked; such a row gets the "     \
    "weights the exercise asks for, all 0 unless it says otherwise "           \
    "(d2l 11.3.1)"
#define API_EXPLAIN_MASKED_FILL_1E6                                            \
    "masked scores were set to −1e6 and still went through the softmax, "    \
    "as d2l's masked_softmax does: a masked key must get weight exactly 0, "   \
    "and a query that sees no key gets the weights the exercise asks for, "    \
    "all 0 unless it says otherwise; check how your code masks scores "        \
    "(d2l 11.3.1)"
#define API_INSTRUCTOR_MASKED_FILL_1E6                                         \
    "the answer follows d2l's masked_softmax, which gives a query that "       \
    "sees no key 1/Nk for every key: to accept that convention, grade with "   \
    "\"fully_masked\": \"uniform\" in the graded request; the mistake "        \
    "is then named only where the fill also moves weight onto masked keys"

/* The catalogue of one route, in the order its entries are tried (the
 * first of equally good matches is named): *n entries, or NULL with *n = 0
 * for a route without one. */
const api_misconception *api_misconceptions_of(const api_route *route,
                                               size_t *n);

/* How many mistakes each route's catalogue holds. Each entry is also a
 * row of docs/misconceptions.md's tables and a mistake that
 * tests/grading/catalogue_np.py computes in numpy (its <ROUTE>_CODES),
 * for tests/grading/mistakes_<route>.py to check that /grade names it:
 * a catalogue of another length than its count here does not compile
 * (misconceptions_<route>.c), so that an entry added or taken out is
 * added or taken out there too. */
#define API_MISCONCEPTIONS_DOT_N 15
#define API_MISCONCEPTIONS_ADDITIVE_N 3
#define API_MISCONCEPTIONS_MULTIHEAD_N 4
#define API_MISCONCEPTIONS_NW_N 7
#define API_MISCONCEPTIONS_SOFTMAX_N 3

/* Each route's own list (misconceptions_<route>.c), of
 * API_MISCONCEPTIONS_<ROUTE>_N entries. */
extern const api_misconception api_misconceptions_dot[];
extern const size_t api_misconceptions_dot_count;
extern const api_misconception api_misconceptions_additive[];
extern const size_t api_misconceptions_additive_count;
extern const api_misconception api_misconceptions_multihead[];
extern const size_t api_misconceptions_multihead_count;
extern const api_misconception api_misconceptions_nw[];
extern const size_t api_misconceptions_nw_count;
extern const api_misconception api_misconceptions_softmax[];
extern const size_t api_misconceptions_softmax_count;

#endif /* API_MISCONCEPTIONS_H */
