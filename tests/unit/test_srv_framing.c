/*
 * test_srv_framing.c — the request-head framing rules (server/framing.h):
 * each rule of RFC 9112 that attnd enforces refuses its head with the
 * rule's detail, the well-framed heads pass with their length, and
 * absolute-form targets give their path. tests/http/framing.py sends the
 * same heads over a socket.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "framing.h"

/* Check the NULL-terminated name/value pairs as one HTTP/1.1 head. */
static srv_framing check(const char *version, const char *const *pairs) {
    srv_framing f;
    srv_framing_init(&f);
    for (; pairs[0]; pairs += 2)
        srv_framing_add(&f, pairs[0], pairs[1]);
    srv_framing_finish(&f, version);
    return f;
}

/* The head is refused, and the detail names `rule`. */
static void refused(const char *rule, const char *version,
                    const char *const *pairs) {
    srv_framing f = check(version, pairs);
    if (f.detail == NULL || strstr(f.detail, rule) == NULL)
        fail_msg("expected a refusal naming \"%s\"; got %s", rule,
                 f.detail ? f.detail : "none");
}

static void test_ambiguous_heads_are_refused(void **state) {
    (void)state;
    refused("together", "HTTP/1.1",
            (const char *const[]){"Host", "x", "Content-Length", "5",
                                  "Transfer-Encoding", "chunked", NULL});
    refused("more than once", "HTTP/1.1",
            (const char *const[]){"Host", "x", "Transfer-Encoding", "chunked",
                                  "transfer-encoding", "chunked", NULL});
    refused("different values", "HTTP/1.1",
            (const char *const[]){"Host", "x", "Content-Length", "5",
                                  "content-length", "6", NULL});
    static const char *const bad_lengths[] = {"",    " ",   "+5", "-5",  "5,5",
                                              "5 5", "0x5", "5a", "five"};
    for (size_t i = 0; i < sizeof bad_lengths / sizeof bad_lengths[0]; i++)
        refused("one decimal number", "HTTP/1.1",
                (const char *const[]){"Host", "x", "Content-Length",
                                      bad_lengths[i], NULL});
    refused("token character", "HTTP/1.1",
            (const char *const[]){"Host", "x", "Transfer-Encoding ", "chunked",
                                  NULL});
    refused("token character", "HTTP/1.1",
            (const char *const[]){"Host", "x", "", "y", NULL});
    /* libmicrohttpd's joined obs-fold: "Content-Length:\r\n 45" */
    refused("obs-fold", "HTTP/1.1",
            (const char *const[]){"Host", "x", "Content-Length45", "", NULL});
    refused("obs-fold", "HTTP/1.1",
            (const char *const[]){"Host", "x", "Transfer-Encodingchunked", "",
                                  NULL});
    refused("needs a Host", "HTTP/1.1",
            (const char *const[]){"Content-Length", "5", NULL});
    refused("needs a Host", NULL, (const char *const[]){NULL});
    refused("exactly one Host", "HTTP/1.1",
            (const char *const[]){"Host", "a", "host", "b", NULL});
}

static void test_well_framed_heads_pass(void **state) {
    (void)state;
    srv_framing f = check(
        "HTTP/1.1", (const char *const[]){"Host", "x", "Content-Length", " 45 ",
                                          "Content-Length", "45", NULL});
    assert_null(f.detail);
    assert_true(f.has_length);
    assert_int_equal(f.length, 45);
    f = check("HTTP/1.1",
              (const char *const[]){"Host", "x", "Transfer-Encoding", "chunked",
                                    NULL});
    assert_null(f.detail);
    assert_false(f.has_length);
    f = check("HTTP/1.0", (const char *const[]){NULL}); /* no Host needed */
    assert_null(f.detail);
    /* beyond int64, and beyond 2^64 (saturated): a length, too large */
    f = check("HTTP/1.1", (const char *const[]){"Host", "x", "Content-Length",
                                                "10000000000000000000", NULL});
    assert_null(f.detail);
    assert_true(f.length == 10000000000000000000ULL);
    f = check("HTTP/1.1",
              (const char *const[]){"Host", "x", "Content-Length",
                                    "99999999999999999999999", NULL});
    assert_null(f.detail);
    assert_true(f.length == UINT64_MAX);
    /* names that only begin like a framing field's are other fields */
    f = check("HTTP/1.1",
              (const char *const[]){"Host", "x", "Content-Type",
                                    "application/json", "Hostname", "y", NULL});
    assert_null(f.detail);
}

static void test_target_path(void **state) {
    (void)state;
    assert_string_equal(srv_framing_target_path("/attention/dot"),
                        "/attention/dot");
    assert_string_equal(srv_framing_target_path("http://x:8080/attention/dot"),
                        "/attention/dot");
    assert_string_equal(srv_framing_target_path("HTTPS://x/healthz"),
                        "/healthz");
    assert_string_equal(srv_framing_target_path("http://x"), "/");
    assert_string_equal(srv_framing_target_path("*"), "*");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ambiguous_heads_are_refused),
        cmocka_unit_test(test_well_framed_heads_pass),
        cmocka_unit_test(test_target_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
