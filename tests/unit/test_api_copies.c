/*
 * test_api_copies.c — the copy check across variants (api/grading/
 * copies.h): a copy of another variant's right answer is named with its
 * source, within the comparison and not beyond it; a right answer, a
 * group's shared variant, an answer of too few distinct numbers, an
 * error outside the sample and another problem's answer are never named;
 * a right answer is named before an answer, and an answer its grade
 * stands by before a suspect's; answers alike on purpose are compared
 * with a bounded number of others, and a stop function ends the check.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "compare.h"
#include "copies.h"

#define ENTRIES 12

/* A one-field sample of variant name: reference base + k/7 (k < ENTRIES),
 * and the answer given. */
static api_grade_sample *sample(const char *name, double base,
                                const double *answer) {
    api_grade_sample *s = calloc(1, sizeof *s);
    s->variant = strdup(name);
    s->fields = calloc(1, sizeof *s->fields);
    s->n_fields = 1;
    api_grade_sample_field *f = &s->fields[0];
    f->name = strdup("output");
    f->compare = api_compare_relabs(1e-5, 1e-8);
    f->count = f->taken = ENTRIES;
    for (size_t k = 0; k < ENTRIES; k++) {
        f->expected[k] = base + (double)k / 7;
        f->got[k] = answer ? answer[k] : f->expected[k];
    }
    return s;
}

static void reference_of(double base, double *out, double scale) {
    for (size_t k = 0; k < ENTRIES; k++)
        out[k] = (base + (double)k / 7) * scale;
}

static void free_sample(api_grade_sample *s) {
    free(s->fields[0].name);
    free(s->fields);
    free(s->variant);
    free(s);
}

/* Run the check on n entries; returns the matches (malloc'd). */
static api_copy_match *check(const api_copy_entry *e, size_t n, size_t *found,
                             size_t *checked) {
    api_copy_match *m = NULL;
    api_copy_cut cut;
    assert_int_equal(
        api_copies_find(e, n, NULL, NULL, &m, found, checked, &cut), 0);
    assert_int_equal(cut, API_COPY_WHOLE);
    return m;
}

static void test_copy_named_with_its_source(void **state) {
    (void)state;
    double ada[ENTRIES], nudged[ENTRIES], far[ENTRIES];
    reference_of(1.0, ada, 1);
    reference_of(1.0, nudged, 1 + 4e-6); /* within rtol 1e-5 */
    reference_of(1.0, far, 1 + 4e-5);    /* beyond it */
    api_copy_entry e[] = {
        {sample("ada", 1.0, NULL), 0, 0},  /* right */
        {sample("bob", 2.0, ada), 1, 0},   /* ada's answer */
        {sample("cy", 3.0, nudged), 1, 0}, /* ada's, nudged */
        {sample("dee", 4.0, far), 1, 0},   /* too far to be ada's */
    };
    size_t found, checked;
    api_copy_match *m = check(e, 4, &found, &checked);
    assert_int_equal(checked, 3);
    assert_int_equal(found, 2);
    assert_int_equal(m[0].who, 1);
    assert_int_equal(m[0].source, 0);
    assert_int_equal(m[0].of_reference, 1);
    assert_true(m[0].max_abs == 0);
    assert_int_equal(m[0].entries, ENTRIES);
    assert_int_equal(m[1].who, 2);
    assert_int_equal(m[1].source, 0);
    assert_true(m[1].max_abs > 0 && m[1].max_abs < 1e-4);
    free(m);
    for (size_t i = 0; i < 4; i++)
        free_sample((api_grade_sample *)e[i].sample);
}

static void test_never_named(void **state) {
    (void)state;
    double ada[ENTRIES], zeros[ENTRIES] = {0}, slip[ENTRIES];
    reference_of(1.0, ada, 1);
    reference_of(5.0, slip, 1);
    slip[ENTRIES - 1] += 0.5; /* its own reference, one entry off */
    api_copy_entry e[] = {
        {sample("ada", 1.0, NULL), 0, 0},
        /* a right answer that happens to be checked: not a suspect */
        {sample("bob", 2.0, NULL), 0, 0},
        /* the same variant (a group): ada's answer is its own */
        {sample("ada", 1.0, ada), 1, 0},
        /* zeros, twice: answers two students reach apart */
        {sample("cy", 3.0, zeros), 1, 0},
        {sample("dee", 4.0, zeros), 1, 0},
        /* an answer of another problem */
        {sample("eve", 9.0, ada), 1, 1},
        /* a slip on its own variant matches no one */
        {sample("fay", 5.0, slip), 1, 0},
    };
    size_t n = sizeof e / sizeof e[0], found, checked;
    api_copy_match *m = check(e, n, &found, &checked);
    assert_int_equal(found, 0);
    free(m);
    for (size_t i = 0; i < n; i++)
        free_sample((api_grade_sample *)e[i].sample);
}

static void test_error_outside_the_sample(void **state) {
    (void)state;
    /* a failed grade whose sample matches its own reference: its error
     * lies in entries the sample left out, and it is not checked */
    api_copy_entry e[] = {{sample("ada", 1.0, NULL), 1, 0},
                          {sample("bob", 1.0 + 1e-12, NULL), 0, 0}};
    size_t found, checked;
    api_copy_match *m = check(e, 2, &found, &checked);
    assert_int_equal(checked, 0);
    assert_int_equal(found, 0);
    free(m);
    free_sample((api_grade_sample *)e[0].sample);
    free_sample((api_grade_sample *)e[1].sample);
}

static void test_source_preferred(void **state) {
    (void)state;
    /* ada answered her variant rounded; bob copied ada's text, cy copied
     * bob's: cy's answer is ada's (not her reference), and ada, who
     * passed, is named before bob, a suspect */
    double ada[ENTRIES], answer[ENTRIES];
    reference_of(0.001, ada, 1);
    for (size_t k = 0; k < ENTRIES; k++)
        answer[k] = ada[k] + 3e-7; /* beyond rtol of a small reference */
    answer[0] = 0.0013;            /* away from 0.001: no reference match */
    api_grade_sample *sa = sample("ada", 0.001, answer);
    api_copy_entry e[] = {{sample("bob", 2.0, answer), 1, 0},
                          {sample("cy", 3.0, answer), 1, 0},
                          {sa, 0, 0}};
    size_t found, checked;
    api_copy_match *m = check(e, 3, &found, &checked);
    assert_int_equal(found, 2);
    for (size_t k = 0; k < found; k++) {
        assert_int_equal(m[k].source, 2);
        assert_int_equal(m[k].of_reference, 0);
    }
    free(m);
    for (size_t i = 0; i < 3; i++)
        free_sample((api_grade_sample *)e[i].sample);
}

/* Stops the check once it has been asked *left times. */
static int stop_after(void *ctx) {
    int *left = ctx;
    return (*left)-- <= 0;
}

/* 200 suspects whose answers share their sum and differ only in their
 * last two entries: each would be compared with all 199 others, so each
 * is compared with 32 and the check says it was crowded; a stop function
 * ends it where it says. */
static void test_alike_answers_are_bounded(void **state) {
    (void)state;
    enum { N = 200 };
    api_copy_entry e[N];
    char name[16];
    for (size_t i = 0; i < N; i++) {
        double answer[ENTRIES];
        for (size_t k = 0; k < ENTRIES; k++)
            answer[k] = 0.5 + (double)k / 7;
        double a = 0.25 + 0.001 * (double)i;
        answer[ENTRIES - 2] = a;
        answer[ENTRIES - 1] = 3.0 - a; /* the same sum for all */
        snprintf(name, sizeof name, "s%03zu", i);
        e[i] = (api_copy_entry){sample(name, 10.0 + (double)i, answer), 1, 0};
    }
    api_copy_match *m = NULL;
    size_t found, checked;
    api_copy_cut cut;
    assert_int_equal(
        api_copies_find(e, N, NULL, NULL, &m, &found, &checked, &cut), 0);
    assert_int_equal(checked, N);
    assert_int_equal(found, 0);
    assert_int_equal(cut, API_COPY_CROWDED);
    free(m);
    int left = 5;
    assert_int_equal(
        api_copies_find(e, N, stop_after, &left, &m, &found, &checked, &cut),
        0);
    assert_int_equal(checked, 5);
    assert_int_equal(cut, API_COPY_STOPPED);
    free(m);
    for (size_t i = 0; i < N; i++)
        free_sample((api_grade_sample *)e[i].sample);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy_named_with_its_source),
        cmocka_unit_test(test_never_named),
        cmocka_unit_test(test_error_outside_the_sample),
        cmocka_unit_test(test_source_preferred),
        cmocka_unit_test(test_alike_answers_are_bounded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
