/*
 * test_api_lab.c — GET / (the lab page): one self-contained HTML document
 * built from api/fronts/lab/index.html with lab.css and lab.js inlined in place
 * of their <link> and <script src> (compared byte for byte with the source
 * files, read from disk here), nothing loaded from another origin, and the
 * route's methods.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api.h"
#include "buf.h"
#include "testfs.h"

static char *slurp(const char *path, size_t *len) {
    char *s = test_slurp(path, len);
    if (!s)
        fail_msg("cannot open %s (run from the repository root)", path);
    return s;
}

static size_t count(const char *s, size_t n, const char *needle) {
    size_t hits = 0, k = strlen(needle);
    for (const char *p = s; (p = memmem(p, n - (size_t)(p - s), needle, k));
         p += k)
        hits++;
    return hits;
}

static api_response get(const char *method, const char *path) {
    api_request req = {.method = method, .path = path};
    api_response res;
    api_handle(&req, &res);
    return res;
}

/* The served page is index.html with the two tags replaced by the files. */
static void test_page_is_the_sources_inlined(void **state) {
    (void)state;
    size_t hl, cl, jl;
    char *html = slurp("api/fronts/lab/index.html", &hl);
    char *css = slurp("api/fronts/lab/lab.css", &cl);
    char *js = slurp("api/fronts/lab/lab.js", &jl);
    static const char link[] = "<link rel=\"stylesheet\" href=\"lab.css\">";
    static const char script[] = "<script src=\"lab.js\"></script>";
    char *l = strstr(html, link), *s = strstr(html, script);
    assert_non_null(l);
    assert_non_null(s);

    api_buf want = {0};
    api_buf_append(&want, html, (size_t)(l - html));
    api_buf_puts(&want, "<style>\n");
    api_buf_append(&want, css, cl);
    api_buf_puts(&want, "</style>");
    api_buf_append(&want, l + strlen(link), (size_t)(s - l - strlen(link)));
    api_buf_puts(&want, "<script>\n");
    api_buf_append(&want, js, jl);
    api_buf_puts(&want, "</script>");
    api_buf_puts(&want, s + strlen(script));

    api_response res = get("GET", "/");
    assert_int_equal(res.status, 200);
    assert_string_equal(res.content_type, "text/html; charset=utf-8");
    assert_string_equal(res.route, "/");
    assert_int_equal(res.body_len, want.len);
    assert_memory_equal(res.body, want.data, want.len);
    api_response_free(&res);
    api_buf_free(&want);

    /* the inlined files cannot end their element early */
    assert_int_equal(count(css, cl, "</style"), 0);
    assert_int_equal(count(js, jl, "</script"), 0);
    assert_int_equal(count(js, jl, "<!--"), 0);
    free(html);
    free(css);
    free(js);
}

/* Nothing from another origin: the only absolute URL in the page is the
 * SVG namespace name (an identifier, never fetched). */
static void test_self_contained(void **state) {
    (void)state;
    api_response res = get("GET", "/");
    const char *b = res.body;
    size_t n = res.body_len;
    size_t urls = count(b, n, "http://") + count(b, n, "https://") +
                  count(b, n, "//cdn") + count(b, n, "@import") +
                  count(b, n, "@font-face");
    assert_int_equal(urls, count(b, n, "'http://www.w3.org/2000/svg'"));
    assert_int_equal(count(b, n, "<script"), 1);
    assert_int_equal(count(b, n, "<style>"), 1);
    assert_int_equal(count(b, n, "src=\"lab.js\""), 0);
    assert_int_equal(count(b, n, "href=\"lab.css\""), 0);
    /* the token field exists and is sent as a bearer token */
    assert_int_equal(count(b, n, "id=\"token\""), 1);
    assert_true(count(b, n, "'Bearer '") >= 1);
    api_response_free(&res);
}

static void test_methods(void **state) {
    (void)state;
    api_response res = get("POST", "/");
    assert_int_equal(res.status, 405);
    assert_string_equal(res.allow, "GET, HEAD, OPTIONS");
    assert_string_equal(res.content_type, "application/problem+json");
    api_response_free(&res);
    res = get("HEAD", "/");
    assert_int_equal(res.status, 200); /* the server drops the body */
    assert_string_equal(res.content_type, "text/html; charset=utf-8");
    api_response_free(&res);
    res = get("GET", "/index.html");
    assert_int_equal(res.status, 404);
    api_response_free(&res);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_page_is_the_sources_inlined),
        cmocka_unit_test(test_self_contained),
        cmocka_unit_test(test_methods),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
