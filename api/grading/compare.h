/*
 * compare.h — how /grade compares one number of an answer with the
 * reference's (docs/grading.md "Comparisons"; docs/contract.md section 13).
 *
 * The modes are PrairieLearn's, as its number and matrix elements name
 * them (pl-number-input, pl-matrix-input: "relabs", "sigfig", "decdig"),
 * plus "ulp" for bit-level checks and the default, "relabs_or_rounded",
 * which also accepts an answer written rounded as students write numbers
 * (np.round(x, 6), a table printed to 4 decimals).
 *
 *   relabs             |got − exp| ≤ atol + rtol·|exp|       (numpy.isclose)
 *   sigfig             |got − exp| < 0.51·10^−n, n = digits − 1 − ⌊log10 |exp|⌋
 *                      (exp = 0: n = digits − 1)              (PrairieLearn)
 *   decdig             |got − exp| < 0.51·10^−digits          (PrairieLearn)
 *   ulp                got and exp at most ulps doubles apart
 *   relabs_or_rounded  relabs, or |got − exp| < 0.51·10^−k where k is the
 *                      number of decimals got shows (its shortest text, or
 *                      a float32 value's shortest float32 text, got then
 *                      that text's value), at least decimals: got is exp
 *                      rounded to k decimals
 *
 * A reference that is not finite (±inf) matches only itself, in every mode.
 */
#ifndef API_GRADE_COMPARE_H
#define API_GRADE_COMPARE_H

#include <jansson.h>
#include <stdint.h>

#include "buf.h"
#include "problem.h"

typedef enum {
    API_COMPARE_RELABS_OR_ROUNDED, /* the default */
    API_COMPARE_RELABS,
    API_COMPARE_SIGFIG,
    API_COMPARE_DECDIG,
    API_COMPARE_ULP
} api_compare_mode;

/* One comparison: its mode and the numbers that mode reads. */
typedef struct {
    api_compare_mode mode;
    double rtol, atol;    /* relabs, relabs_or_rounded */
    int digits;           /* sigfig, decdig: 1 … 17 */
    int decimals;         /* relabs_or_rounded: the fewest decimals a rounded
                             answer may show, 0 … 17 */
    double rounded_reach; /* 0.51·10^−decimals: the farthest a rounded
                             answer can be */
    uint64_t ulps;        /* ulp */
} api_compare;

/* What comparing one entry found. */
typedef enum {
    API_MATCH_NO = 0,
    API_MATCH_YES = 1,
    API_MATCH_ROUNDED = 2 /* relabs_or_rounded: a match only as the
                             reference rounded to *decimals */
} api_match;

/* The default: relabs_or_rounded, rtol 1e-5, atol 1e-8 (numpy's), at
 * least 4 decimals (np.round(x, 4)). */
api_compare api_compare_default(void);

/* relabs with rtol and atol: the grading request's "rtol"/"atol" given
 * without "compare". */
api_compare api_compare_relabs(double rtol, double atol);

/* Compare got with expected (both doubles; expected may be ±inf, got
 * anything). API_MATCH_ROUNDED sets *decimals to the decimals the match
 * was made at. */
api_match api_compare_entry(const api_compare *c, double expected, double got,
                            int *decimals);

/* The common cases of api_compare_entry, inline for the grading loop:
 * for relabs and relabs_or_rounded with a finite expected, 1 when got is
 * within relabs, 0 when it cannot match (relabs: outside; rounded:
 * farther than the widest rounding reaches); -1 otherwise: ask
 * api_compare_entry. */
static inline int api_compare_quick(const api_compare *c, double expected,
                                    double got) {
    if (c->mode != API_COMPARE_RELABS &&
        c->mode != API_COMPARE_RELABS_OR_ROUNDED)
        return -1;
    double size = expected < 0 ? -expected : expected;
    if (!(size <= 1.79769313486231570815e308)) /* ±inf, NaN */
        return -1;
    double err = got - expected;
    err = err < 0 ? -err : err;
    if (err <= c->atol + c->rtol * size)
        return 1;
    if (c->mode == API_COMPARE_RELABS || !(err < c->rounded_reach))
        return 0;
    return -1;
}

/* 1 when got matches expected under relabs_or_rounded as an answer
 * rounded, not within relabs, at no more than decimals places (c's own
 * decimals … 9): api_compare_entry would say API_MATCH_ROUNDED at that
 * many or fewer, and this need not find how many (the shortest text of
 * got, the slow part). 0: it cannot tell; ask api_compare_entry. A field
 * rounded to 6 places passes its entries this way once one has shown 6. */
int api_compare_rounded_at_most(const api_compare *c, double expected,
                                double got, int decimals);

/* The decimals the finite x shows as written, and that value into
 * *written: its shortest text (0.034123 shows 6, 1234.5 one, 1.2e-7
 * eight, 1.0 none), or, when x is a float32 value whose shortest float32
 * text shows fewer, that text (torch.round(t, decimals=4).tolist() gives
 * 0.3301999866962433 for the float32 0.3302: 4 decimals, written 0.3302). */
int api_compare_as_written(double x, double *written);

/* api_compare_as_written's decimals alone. */
int api_compare_decimals_shown(double x);

/* Read a comparison from v: a mode's name ("sigfig", with its default
 * numbers) or {"mode": name, numbers...}: relabs and relabs_or_rounded
 * take "rtol" and "atol" (numbers ≥ 0), relabs_or_rounded also
 * "decimals" (an integer 0 … 17), sigfig and decdig "digits" (1 … 17),
 * ulp "ulps" (an integer ≥ 0). Defaults: rtol 1e-5, atol 1e-8, decimals
 * 4, digits 4, ulps 4. Returns 0 with *out set, or -1 with p set at
 * pointer (the member's own pointer within it): wrong_type for a value of
 * the wrong kind, invalid_value for an unknown mode or number out of
 * range, unknown_field for a member the mode does not read. */
int api_compare_parse(const json_t *v, const char *pointer, api_compare *out,
                      api_problem *p);

/* 1 when v is a comparison (a string, or an object with "mode"), 0 when
 * it is something else (a per-field map, an error). */
int api_compare_is_one(const json_t *v);

/* Append a short description of c for a person: "relabs (rtol 1e-05,
 * atol 1e-08)", "sigfig (4 digits)". */
void api_compare_describe(const api_compare *c, api_buf *out);

#endif /* API_GRADE_COMPARE_H */
