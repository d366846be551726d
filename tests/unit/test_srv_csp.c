/*
 * test_srv_csp.c — the lab page's Content-Security-Policy: hashes of
 * inline scripts and styles against SHA-256 values computed independently
 * (Python's hashlib, base64), newline normalisation, external scripts and
 * look-alike tags left out, a policy that does not fit, and the built-in
 * page: one script hash and one style hash, stable across builds of it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "csp.h"

/* base64(sha256(s)) from hashlib, for the strings named */
#define H_ALERT "bhHHL3z2vDgxUt0W3dWQOrprscmda2Y5pLsLg4GF+pI="  /* alert(1) */
#define H_A_LF_B "fhj3NzEbLcOy8mndeDlrA1HxT7Zu+oefdoyyMYGIPHg=" /* a\nb */
#define H_STYLE "6BtAJHRccEFconKgYZxx3ALoONCc3uWtAQ7oTAu9LLs="  /* below */
#define H_EMPTY "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="  /* "" */
#define H_XYZ "bUIexLYjrzvdR60dYaYp6rjBH3vxmh5ZV2tfLu3nvvw="    /* x\ny\nz */

static const char *TAIL =
    "; style-src-attr 'unsafe-inline'; img-src 'self' data: blob:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'self'";

static void expect(const char *html, const char *scripts, const char *styles) {
    char want[SRV_CSP_MAX], got[SRV_CSP_MAX];
    snprintf(want, sizeof want,
             "default-src 'self'; script-src 'self'%s; style-src 'self'%s%s",
             scripts, styles, TAIL);
    assert_int_equal(srv_csp_build(got, sizeof got, html, strlen(html)), 0);
    assert_string_equal(got, want);
}

static void test_hashes(void **state) {
    (void)state;
    expect("<html><body>no code</body></html>", "", "");
    expect("<script>alert(1)</script>", " 'sha256-" H_ALERT "'", "");
    expect("<p><SCRIPT type=\"module\">alert(1)</Script>"
           "<style>\nbody { color: red; }\n</style>",
           " 'sha256-" H_ALERT "'", " 'sha256-" H_STYLE "'");
    /* the browser hashes the text after CR LF / CR became LF */
    expect("<script>a\r\nb</script><script>x\ry\r\nz</script>",
           " 'sha256-" H_A_LF_B "' 'sha256-" H_XYZ "'", "");
    expect("<script></script>", " 'sha256-" H_EMPTY "'", "");
    /* an external script is not inline; <scripts> is another element */
    expect("<script src=\"lab.js\"></script><scripts>alert(1)</scripts>", "",
           "");
    /* an element that never closes is not hashed */
    expect("<script>alert(1)", "", "");
}

static void test_too_small(void **state) {
    (void)state;
    char out[64];
    const char *html = "<script>alert(1)</script>";
    assert_int_equal(srv_csp_build(out, sizeof out, html, strlen(html)), -1);
    assert_int_equal(srv_csp_build(out, 0, html, strlen(html)), -1);
}

static void test_lab_page(void **state) {
    (void)state;
    assert_int_equal(srv_csp_init(), 0);
    const char *policy = srv_csp_lab();
    assert_non_null(policy);
    /* the page inlines one script and one stylesheet */
    const char *script = strstr(policy, "script-src 'self' 'sha256-");
    const char *style = strstr(policy, "; style-src 'self' 'sha256-");
    assert_non_null(script);
    assert_non_null(style);
    assert_null(strstr(script + 1, "script-src 'self' 'sha256-"));
    assert_non_null(strstr(policy, "default-src 'self'"));
    assert_null(strstr(policy, "unsafe-eval"));
    /* 'unsafe-inline' only for style attributes */
    const char *inl = strstr(policy, "'unsafe-inline'");
    assert_non_null(inl);
    assert_null(strstr(inl + 1, "'unsafe-inline'"));
    assert_true(inl - policy > 15 &&
                strncmp(inl - 15, "style-src-attr ", 15) == 0);
    /* built twice, the same */
    char first[SRV_CSP_MAX];
    snprintf(first, sizeof first, "%s", policy);
    assert_int_equal(srv_csp_init(), 0);
    assert_string_equal(srv_csp_lab(), first);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hashes),
        cmocka_unit_test(test_too_small),
        cmocka_unit_test(test_lab_page),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
