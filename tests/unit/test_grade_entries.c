/*
 * test_grade_entries.c — one graded field's entries (api/grading/
 * grade_entries.h): api_grade_compare_all, whose tight loop passes most
 * entries at once, tallies exactly what comparing entry by entry
 * (api_grade_compare_entries) tallies, for answers right, rounded,
 * wrong, not finite and at every size; with first_only it stops at the
 * first mismatch; and it stops when the client has gone.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compare.h"
#include "grade_entries.h"
#include "limit.h"
#include "result.h"

#define N 4096

static uint64_t state = 0x2545f4914f6cdd1du;

static double uniform(void) { /* 0 … 1 */
    state = state * 6364136223846793005u + 1442695040888963407u;
    return (double)(state >> 11) / 9007199254740992.0;
}

/* A reference of n entries of many sizes, and an answer to it of each
 * kind a class hands in: right, np.round(x, 4 or 6), nudged within and
 * beyond relabs, wrong, and a few not finite. */
static void make(double *want, double *got, size_t n) {
    for (size_t i = 0; i < n; i++) {
        double x = (2 * uniform() - 1) * pow(10, (int)(uniform() * 8) - 5);
        want[i] = x;
        int kind = (int)(uniform() * 8);
        double k10 = kind == 1 ? 1e4 : 1e6;
        switch (kind) {
        case 0:
            got[i] = x;
            break;
        case 1:
        case 2:
            got[i] = rint(x * k10) / k10;
            break;
        case 3:
            got[i] = x * (1 + 3e-6);
            break;
        case 4:
            got[i] = x * (1 + 3e-5);
            break;
        case 5:
            got[i] = x + 1e-3;
            break;
        case 6:
            got[i] = uniform() < 0.01 ? NAN : -x;
            break;
        default:
            got[i] = x == 0 ? 0 : nextafter(x, 0);
        }
    }
}

static void same_tally(const api_grade_tally *a, const api_grade_tally *b) {
    assert_int_equal(a->entries, b->entries);
    assert_int_equal(a->mismatches, b->mismatches);
    assert_int_equal(a->rounded_to, b->rounded_to);
    assert_true(a->max_abs == b->max_abs);
    assert_true(a->max_rel == b->max_rel);
    assert_int_equal(a->have_first, b->have_first);
    assert_int_equal(a->first_index, b->first_index);
}

/* r (freed by the caller) holding want as its "output", and the views
 * of want and of the answer got (n entries each) that grading compares. */
static void views_of(api_result *r, const double *want, const double *got,
                     size_t n, api_grade_ref_view *w, api_grade_view *view) {
    static const api_tensor_format fmt;
    api_result_init(r, &fmt, API_E_INTERNAL, "x");
    size_t shape[1] = {n};
    api_grade_ref_view_of(w, r, api_result_tensor(r, "output", want, shape, 1));
    memset(view, 0, sizeof *view);
    view->rank = 1;
    view->shape[0] = view->count = n;
    view->numbers = got;
}

/* The tally of w against got entry by entry (first_only: until the
 * first mismatch), as grading did before the tight loop. */
static api_grade_tally one_by_one(const api_compare *c,
                                  const api_grade_ref_view *w,
                                  const api_grade_view *got, int first_only) {
    api_grade_tally t;
    memset(&t, 0, sizeof t);
    t.rounded_to = -1;
    for (size_t i = 0; i < w->count && !(first_only && t.mismatches); i++)
        api_grade_compare_entries(c, &t, w, i, api_grade_got_at(got, i));
    return t;
}

static void the_loop_tallies_as_entry_by_entry(void **state_) {
    (void)state_;
    static double want[N], got[N];
    api_compare modes[] = {api_compare_default(),
                           api_compare_relabs(1e-5, 1e-8),
                           api_compare_relabs(0, 0)};
    for (int round = 0; round < 40; round++) {
        size_t n = round < 20 ? (size_t)round : N;
        make(want, got, n);
        if (round % 3 == 0) /* an answer that is all right but rounded */
            for (size_t i = 0; i < n; i++)
                got[i] = rint(want[i] * 1e6) / 1e6;
        api_result r;
        api_grade_ref_view w;
        api_grade_view view;
        views_of(&r, want, got, n, &w, &view);
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++)
            for (int first_only = 0; first_only <= 1; first_only++) {
                api_grade_tally t;
                memset(&t, 0, sizeof t);
                t.rounded_to = -1;
                assert_int_equal(
                    api_grade_compare_all(&modes[m], &t, &w, &view, first_only),
                    0);
                api_grade_tally expected =
                    one_by_one(&modes[m], &w, &view, first_only);
                if (first_only) { /* what matters to the mistake search */
                    assert_int_equal(t.mismatches != 0,
                                     expected.mismatches != 0);
                    if (!t.mismatches)
                        same_tally(&t, &expected);
                } else {
                    same_tally(&t, &expected);
                }
            }
        api_result_free(&r);
    }
}

/* An answer whose every entry needs the full comparison stops once its
 * client has gone. */
static void a_client_gone_stops_the_comparison(void **state_) {
    (void)state_;
    static double want[N], got[N];
    for (size_t i = 0; i < N; i++) {
        want[i] = 0.001 + (double)i * 1e-7;
        got[i] = want[i] + 2e-6; /* beyond relabs, within a rounding */
    }
    api_result r;
    api_grade_ref_view w;
    api_grade_view view;
    views_of(&r, want, got, N, &w, &view);
    api_compare c = api_compare_default();
    api_grade_tally t;
    memset(&t, 0, sizeof t);
    t.rounded_to = -1;
    atomic_int gone = 1;
    api_limit_watch(&gone);
    assert_int_equal(api_grade_compare_all(&c, &t, &w, &view, 0), -1);
    assert_true(t.entries < N);
    atomic_store(&gone, 0);
    memset(&t, 0, sizeof t);
    t.rounded_to = -1;
    assert_int_equal(api_grade_compare_all(&c, &t, &w, &view, 0), 0);
    assert_int_equal(t.entries, N);
    api_limit_watch(NULL);
    api_result_free(&r);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_loop_tallies_as_entry_by_entry),
        cmocka_unit_test(a_client_gone_stops_the_comparison),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
