/*
 * test_srv_auth.c — the token file (comments, blank lines, CR LF, blanks
 * around tokens, refusals with the line number but never the line) and the
 * Authorization check (scheme spelling, every listed token, prefixes and
 * extensions of a token, other schemes).
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

#include "auth.h"

static char path[64];

/* Write text to a fresh temporary file; its name is in path. */
static void write_file(const char *text, size_t n) {
    snprintf(path, sizeof path, "/tmp/attnd-auth-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, n), (ssize_t)n);
    close(fd);
}

static srv_auth *load(const char *text, char *err, size_t cap) {
    write_file(text, strlen(text));
    srv_auth *auth = srv_auth_load(path, err, cap);
    unlink(path);
    return auth;
}

static void test_file(void **state) {
    (void)state;
    char err[512] = "";
    srv_auth *auth = load("# tokens for the lab\n"
                          "\n"
                          "   \t\n"
                          "  alpha-Token_1.x~y+z/w==  \r\n"
                          "\t# indented comment\n"
                          "beta\r\n"
                          "gamma",
                          err, sizeof err);
    assert_non_null(auth);
    assert_int_equal(srv_auth_count(auth), 3);
    assert_int_equal(
        srv_auth_check(auth, "Bearer alpha-Token_1.x~y+z/w==", NULL),
        SRV_AUTH_OK);
    assert_int_equal(srv_auth_check(auth, "Bearer beta", NULL), SRV_AUTH_OK);
    assert_int_equal(srv_auth_check(auth, "Bearer gamma", NULL), SRV_AUTH_OK);
    /* unlabelled tokens are named by their place in the file */
    const char *label = "x";
    assert_int_equal(srv_auth_check(auth, "Bearer beta", &label), SRV_AUTH_OK);
    assert_string_equal(label, "token2");
    /* a comment is not a token */
    assert_int_equal(srv_auth_check(auth, "Bearer #", NULL),
                     SRV_AUTH_INVALID_TOKEN);
    srv_auth_free(auth);
}

/* "label token": the label is what the log names, never the token. */
static void test_labels(void **state) {
    (void)state;
    char err[512] = "";
    srv_auth *auth = load("ta-alice  s3cret-one\nplain\nbob@lab.example\tz9\n",
                          err, sizeof err);
    assert_non_null(auth);
    assert_int_equal(srv_auth_count(auth), 3);
    const char *label = NULL;
    assert_int_equal(srv_auth_check(auth, "Bearer s3cret-one", &label),
                     SRV_AUTH_OK);
    assert_string_equal(label, "ta-alice");
    assert_int_equal(srv_auth_check(auth, "Bearer plain", &label), SRV_AUTH_OK);
    assert_string_equal(label, "token2");
    assert_int_equal(srv_auth_check(auth, "Bearer z9", &label), SRV_AUTH_OK);
    assert_string_equal(label, "bob@lab.example");
    /* a label is no token */
    assert_int_equal(srv_auth_check(auth, "Bearer ta-alice", &label),
                     SRV_AUTH_INVALID_TOKEN);
    assert_null(label);
    srv_auth_free(auth);
    /* a token listed twice is named by its first line, whatever follows */
    auth = load("l0 tok0\nl1 same\nl2 same\nvictim tokV\n", err, sizeof err);
    assert_non_null(auth);
    assert_int_equal(srv_auth_check(auth, "Bearer same", &label), SRV_AUTH_OK);
    assert_string_equal(label, "l1");
    assert_int_equal(srv_auth_check(auth, "Bearer tokV", &label), SRV_AUTH_OK);
    assert_string_equal(label, "victim");
    srv_auth_free(auth);
    /* a label of other characters: the line's number, not its text */
    assert_null(load("who:me s3cret\n", err, sizeof err));
    assert_non_null(strstr(err, "line 1"));
    assert_null(strstr(err, "s3cret"));
}

static void test_refusals(void **state) {
    (void)state;
    char err[512];
    /* no token at all */
    assert_null(load("# only a comment\n\n", err, sizeof err));
    assert_non_null(strstr(err, "no token"));
    assert_null(load("", err, sizeof err));
    assert_non_null(strstr(err, "no token"));
    /* a line that is not a token: its number, not its text */
    assert_null(load("good\nsecret with blank\n", err, sizeof err));
    assert_non_null(strstr(err, "line 2"));
    assert_null(strstr(err, "secret"));
    assert_null(load("ok\n=leading-padding\n", err, sizeof err));
    assert_non_null(strstr(err, "line 2"));
    assert_null(load("pad=ding\n", err, sizeof err));
    assert_non_null(strstr(err, "line 1"));
    /* a NUL byte inside a line */
    write_file("tok\0en\n", 7);
    assert_null(srv_auth_load(path, err, sizeof err));
    unlink(path);
    assert_non_null(strstr(err, "line 1"));
    /* over-long */
    size_t n = SRV_AUTH_TOKEN_MAX + 1;
    char *big = malloc(n + 2);
    memset(big, 'a', n);
    big[n] = '\n';
    big[n + 1] = '\0';
    assert_null(load(big, err, sizeof err));
    assert_non_null(strstr(err, "line 1"));
    big[n - 1] = '\n'; /* exactly the maximum */
    big[n] = '\0';
    srv_auth *auth = load(big, err, sizeof err);
    assert_non_null(auth);
    big[n - 1] = '\0';
    char *header = malloc(n + 16);
    snprintf(header, n + 16, "Bearer %s", big);
    assert_int_equal(srv_auth_check(auth, header, NULL), SRV_AUTH_OK);
    free(header);
    free(big);
    srv_auth_free(auth);
    /* a label with a blank: said so, not "not a token" */
    assert_null(load("Ada Lovelace s3cret\n", err, sizeof err));
    assert_non_null(strstr(err, "line 1: more than a label then a token"));
    assert_null(strstr(err, "s3cret"));
    /* one label, two tokens: two students would be one client and one
     * name in the log */
    assert_null(load("alice aaaa\nbob bbbb\nalice cccc\n", err, sizeof err));
    assert_non_null(strstr(err, "line 3: the label alice is an earlier"));
    /* an unlabelled token's name taken by a label, either way round */
    assert_null(load("dddd\ntoken1 eeee\n", err, sizeof err));
    assert_non_null(strstr(err, "line 2: the label token1"));
    assert_null(load("token2 eeee\ndddd\n", err, sizeof err));
    assert_non_null(strstr(err, "line 2: the label token2"));
    /* unreadable */
    assert_null(srv_auth_load("/nonexistent/attnd-tokens", err, sizeof err));
    assert_non_null(strstr(err, "cannot read /nonexistent/attnd-tokens"));
}

static void test_check(void **state) {
    (void)state;
    char err[256];
    srv_auth *auth = load("s3cret-token\nother\n", err, sizeof err);
    assert_non_null(auth);
    struct {
        const char *header;
        srv_auth_result want;
    } cases[] = {
        {"Bearer s3cret-token", SRV_AUTH_OK},
        {"bearer s3cret-token", SRV_AUTH_OK},
        {"BEARER   s3cret-token  ", SRV_AUTH_OK},
        {"Bearer\ts3cret-token", SRV_AUTH_OK},
        {"Bearer other", SRV_AUTH_OK},
        {NULL, SRV_AUTH_MISSING},
        {"", SRV_AUTH_MISSING},
        {"Bearer", SRV_AUTH_MISSING},
        {"Bearer    ", SRV_AUTH_MISSING},
        {"Basic czNjcmV0LXRva2Vu", SRV_AUTH_MISSING},
        {"s3cret-token", SRV_AUTH_MISSING},
        {"Bearers3cret-token", SRV_AUTH_MISSING},
        {"Bearer s3cret-toke", SRV_AUTH_INVALID_TOKEN},
        {"Bearer s3cret-token2", SRV_AUTH_INVALID_TOKEN},
        {"Bearer S3CRET-TOKEN", SRV_AUTH_INVALID_TOKEN},
        {"Bearer s3cret-token other", SRV_AUTH_INVALID_TOKEN},
        {"Bearer othe", SRV_AUTH_INVALID_TOKEN},
        {"Bearer \"s3cret-token\"", SRV_AUTH_INVALID_TOKEN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        srv_auth_result got = srv_auth_check(auth, cases[i].header, NULL);
        if (got != cases[i].want)
            fail_msg("'%s': got %d, expected %d",
                     cases[i].header ? cases[i].header : "(none)", got,
                     cases[i].want);
    }
    srv_auth_free(auth);
    srv_auth_free(NULL);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file),
        cmocka_unit_test(test_labels),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
