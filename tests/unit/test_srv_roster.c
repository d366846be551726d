/*
 * test_srv_roster.c — a class's roster file (server/roster.h): ids and
 * groups in file order and sorted for the api, comments and blank lines
 * passed over, and each refusal naming its line: a header, an empty
 * group, an id that cannot name a file, a student twice, a group named
 * as a student, no student.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "roster.h"

/* Read text as a roster file: 0 with *r, or -1 with err. */
static int read_text(const char *text, srv_roster *r, char *err, size_t cap) {
    char path[] = "/tmp/attnd-roster-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    int rc = srv_roster_read(path, r, err, cap);
    unlink(path);
    return rc;
}

static void test_read(void **state) {
    (void)state;
    srv_roster r;
    char err[512];
    assert_int_equal(read_text("# id,group\n\nzoe\n  ada , t1 # a note\n"
                               "bob,t1\r\nS01\ns01\n",
                               &r, err, sizeof err),
                     0);
    assert_int_equal(r.n, 5);
    assert_string_equal(r.ids[1], "ada");
    assert_string_equal(r.groups[1], "t1");
    assert_null(r.groups[0]);
    /* sorted for the api (strcmp: capitals first), groups beside */
    const char *sorted[] = {"S01", "ada", "bob", "s01", "zoe"};
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(r.api.ids[i], sorted[i]);
    assert_string_equal(r.api.groups[2], "t1");
    assert_null(r.api.groups[4]);
    srv_roster_free(&r);
}

static void test_refusals(void **state) {
    (void)state;
    static const struct {
        const char *text, *says;
    } cases[] = {
        {"student_id,group\nada\n", ":1: 'student_id' looks like a header"},
        {"ada,\n", ":1: nothing after the comma"},
        {"ada\n../x\n", ":2: '../x' is not an id"},
        {"ada\nbob\n\nada\n",
         ":4: the student ada is listed twice (also at line 1)"},
        {"ada\n# x\nbob,ada\n",
         ":3: the group ada of bob is also a student's id"},
        {"# nobody\n\n", "lists no student"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        srv_roster r;
        char err[512];
        assert_int_equal(read_text(cases[i].text, &r, err, sizeof err), -1);
        if (!strstr(err, cases[i].says))
            fail_msg("%s: got \"%s\"", cases[i].says, err);
        assert_int_equal(r.n, 0);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_read),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
