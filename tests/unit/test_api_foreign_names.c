/*
 * test_api_foreign_names.c — the answer members that foreign_names.c names
 * as such, held to the routes' answer tables (answers.h): every name it
 * lists is the top-level member of some route's answer, and every
 * top-level member of an answer is listed, or is a request field of some
 * route, or is one of the few left out on purpose (below). A member added
 * to an answer fails here until it is placed; and each listed name is
 * said as an answer's member, inside `answer` on /grade.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "foreign_names.h"
#include "route.h"

/* Members left out of the list, whose unknown_field keeps its "did you
 * mean": the dataset's answer (x_test and y_truth have advice of their own
 * on /regression/nw; n_train and noise echo its query), the positional
 * encoding's P, and the decoder's self_weights and cross_weights. */
static const char *const left_out[] = {
    "x_test", "y_truth",      "n_train",      "noise",
    "P",      "self_weights", "cross_weights"};

/* A set of names, each kept as its own text. */
typedef struct {
    char name[256][64];
    size_t n;
} names;

static int has(const names *s, const char *name, size_t len) {
    for (size_t i = 0; i < s->n; i++)
        if (strlen(s->name[i]) == len && !strncmp(s->name[i], name, len))
            return 1;
    return 0;
}

static void add(names *s, const char *name, size_t len) {
    if (has(s, name, len))
        return;
    assert_true(s->n < 256 && len < 64);
    memcpy(s->name[s->n], name, len);
    s->name[s->n++][len] = '\0';
}

static void add_all(names *s, const char *const *list, size_t n) {
    for (size_t i = 0; i < n; i++)
        add(s, list[i], strlen(list[i]));
}

/* The names the test compares: foreign_names.c's list, the top-level
 * members of every route's answer ("grads" of "grads.queries"), the
 * fields of every route's request, and those left out above. */
static names listed, answered, taken, omitted;

static int gather(void **state) {
    (void)state;
    size_t n;
    const char *const *members = api_foreign_answer_members(&n);
    add_all(&listed, members, n);
    add_all(&omitted, left_out, sizeof left_out / sizeof left_out[0]);
    for (size_t i = 0; i < api_route_count(); i++) {
        const api_route *r = api_route_at(i);
        for (size_t j = 0; r->answer && j < r->answer->n; j++) {
            const char *name = r->answer->fields[j].name;
            add(&answered, name, strcspn(name, "."));
        }
        for (size_t j = 0; r->request && j < r->request->n; j++) {
            const char *name = r->request->fields[j].name;
            add(&taken, name, strlen(name));
        }
    }
    return 0;
}

static void test_listed_members_are_answered(void **state) {
    (void)state;
    assert_true(listed.n > 0);
    for (size_t i = 0; i < listed.n; i++)
        if (!has(&answered, listed.name[i], strlen(listed.name[i])))
            fail_msg("foreign_names.c lists `%s`, which no route's answer "
                     "table has",
                     listed.name[i]);
}

static void test_every_member_is_placed(void **state) {
    (void)state;
    assert_true(answered.n > 0);
    for (size_t i = 0; i < answered.n; i++) {
        const char *name = answered.name[i];
        size_t len = strlen(name);
        if (!has(&listed, name, len) && !has(&taken, name, len) &&
            !has(&omitted, name, len))
            fail_msg("an answer has `%s`, which foreign_names.c does not "
                     "list and no route takes: list it there, or leave it "
                     "out here and say why",
                     name);
    }
    /* nothing is left out that the list holds or a route takes */
    for (size_t i = 0; i < omitted.n; i++) {
        const char *name = omitted.name[i];
        size_t len = strlen(name);
        assert_true(has(&answered, name, len));
        assert_false(has(&listed, name, len));
        assert_false(has(&taken, name, len));
    }
}

static void test_members_said_as_such(void **state) {
    (void)state;
    static const char *const grade[] = {"endpoint", "request", "answer"};
    static const char *const dot[] = {"queries", "keys", "values"};
    for (size_t i = 0; i < listed.n; i++) {
        const char *on_grade = api_foreign_name(listed.name[i], grade, 3);
        const char *elsewhere = api_foreign_name(listed.name[i], dot, 3);
        assert_non_null(on_grade);
        assert_non_null(elsewhere);
        assert_non_null(strstr(on_grade, "it goes inside `answer`"));
        assert_non_null(strstr(elsewhere, "is a member of attnd's answers"));
    }
    assert_null(api_foreign_name("x_test", dot, 3));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_listed_members_are_answered),
        cmocka_unit_test(test_every_member_is_placed),
        cmocka_unit_test(test_members_said_as_such),
    };
    return cmocka_run_group_tests(tests, gather, NULL);
}
