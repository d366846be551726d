/*
 * test_srv_metrics.c — the request counters behind GET /metrics: labels
 * (route templates by pointer or by text, "other" for anything else;
 * methods outside GET, HEAD, POST, OPTIONS as "other"; statuses 200..599
 * only), histogram buckets at their exact bounds (le is inclusive, as in
 * Prometheus), the duration sum, the in-flight gauge, byte counters, exact
 * totals from concurrent threads, and the text's line grammar (Prometheus
 * text format 0.0.4). The counters are process-wide, so every check
 * compares two renderings.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>
#include <regex.h>

#include "api.h"
#include "metrics.h"

/* The value of one series (name with its labels exactly as rendered), 0
 * when the rendering has no such line. */
static double series(const char *text, const char *name) {
    size_t n = strlen(name);
    for (const char *p = text; *p != '\0';) {
        const char *eol = strchr(p, '\n');
        if (eol == NULL)
            eol = p + strlen(p);
        if ((size_t)(eol - p) > n && strncmp(p, name, n) == 0 && p[n] == ' ')
            return strtod(p + n + 1, NULL);
        p = *eol ? eol + 1 : eol;
    }
    return 0;
}

static char *render(void) {
    size_t len = 0;
    char *t = srv_metrics_render(&len);
    assert_non_null(t);
    assert_int_equal(strlen(t), len);
    return t;
}

/* value of name in the current rendering minus its value in before */
static double delta(const char *before, const char *name) {
    char *now = render();
    double d = series(now, name) - series(before, name);
    free(now);
    return d;
}

static void finish(const char *route, const char *method, int status,
                   uint64_t in, uint64_t out, double seconds) {
    srv_metrics_sample s = {route, method, status, in, out, seconds};
    srv_metrics_request_started();
    srv_metrics_request_finished(&s);
}

/* the api's pointer for a template */
static const char *template_of(const char *path) {
    for (size_t i = 0; api_route_template(i) != NULL; i++)
        if (strcmp(api_route_template(i), path) == 0)
            return api_route_template(i);
    fail_msg("no route %s", path);
    return NULL;
}

static int setup(void **state) {
    (void)state;
    srv_metrics_init();
    return 0;
}

static void test_routes(void **state) {
    (void)state;
    char *before = render();
    char copy[] = "/attention/dot"; /* the same text, another pointer */
    finish(template_of("/attention/dot"), "POST", 200, 10, 20, 0.001);
    finish(copy, "POST", 200, 10, 20, 0.001);
    finish(template_of("/v2/models/{model}/infer"), "POST", 422, 0, 0, 0);
    finish("/attention/dot/", "POST", 404, 0, 0, 0);
    finish("/wp-login.php", "POST", 404, 0, 0, 0);
    finish(NULL, "POST", 404, 0, 0, 0);
    assert_int_equal(delta(before,
                           "attnd_requests_total{route=\"/attention/dot\","
                           "method=\"POST\",status=\"200\"}"),
                     2);
    assert_int_equal(delta(before,
                           "attnd_requests_total{route=\"/v2/models/{model}/"
                           "infer\",method=\"POST\",status=\"422\"}"),
                     1);
    assert_int_equal(delta(before, "attnd_requests_total{route=\"other\","
                                   "method=\"POST\",status=\"404\"}"),
                     3);
    char *now = render();
    assert_null(strstr(now, "wp-login"));
    assert_null(strstr(now, "/attention/dot/\""));
    free(now);
    free(before);
}

static void test_methods_and_statuses(void **state) {
    (void)state;
    char *before = render();
    const char *hz = template_of("/healthz");
    finish(hz, "GET", 200, 0, 15, 0);
    finish(hz, "HEAD", 200, 0, 0, 0);
    finish(hz, "OPTIONS", 204, 0, 0, 0);
    finish(hz, "DELETE", 405, 0, 0, 0);
    finish(hz, "get", 405, 0, 0, 0); /* methods are case-sensitive */
    finish(hz, NULL, 400, 0, 0, 0);
    finish(hz, "GET", 599, 0, 0, 0);
    /* not answered or not a final HTTP status: bytes count, requests not */
    finish(hz, "GET", 0, 7, 0, 0);
    finish(hz, "GET", 199, 0, 0, 0);
    finish(hz, "GET", 600, 0, 0, 0);
    const char *p = "attnd_requests_total{route=\"/healthz\",method=";
    char name[160];
    struct {
        const char *labels;
        int want;
    } cases[] = {
        {"\"GET\",status=\"200\"}", 1},     {"\"HEAD\",status=\"200\"}", 1},
        {"\"OPTIONS\",status=\"204\"}", 1}, {"\"other\",status=\"405\"}", 2},
        {"\"other\",status=\"400\"}", 1},   {"\"GET\",status=\"599\"}", 1},
        {"\"GET\",status=\"0\"}", 0},       {"\"GET\",status=\"199\"}", 0},
        {"\"GET\",status=\"600\"}", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(name, sizeof name, "%s%s", p, cases[i].labels);
        if (delta(before, name) != cases[i].want)
            fail_msg("%s moved by %g, expected %d", name, delta(before, name),
                     cases[i].want);
    }
    assert_int_equal(delta(before, "attnd_request_duration_seconds_count{"
                                   "route=\"/healthz\"}"),
                     7);
    assert_int_equal(delta(before, "attnd_request_bytes_total"), 7);
    assert_int_equal(delta(before, "attnd_response_bytes_total"), 15);
    free(before);
}

static void test_buckets(void **state) {
    (void)state;
    char *before = render();
    const char *r = template_of("/encoding/positional");
    finish(r, "GET", 200, 0, 0, 0.001);  /* exactly a bound: le="0.001" */
    finish(r, "GET", 200, 0, 0, 0.0011); /* the next one up */
    finish(r, "GET", 200, 0, 0, 31);     /* past the last bound */
    finish(r, "GET", 200, 0, 0, -1);     /* a clock step back: 0 */
    const char *b = "attnd_request_duration_seconds_bucket{route=\"/encoding/"
                    "positional\",le=";
    char name[160];
    struct {
        const char *le;
        int want;
    } cases[] = {{"\"0.0001\"}", 1}, {"\"0.0005\"}", 1}, {"\"0.001\"}", 2},
                 {"\"0.0025\"}", 3}, {"\"30\"}", 3},     {"\"+Inf\"}", 4}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(name, sizeof name, "%s%s", b, cases[i].le);
        if (delta(before, name) != cases[i].want)
            fail_msg("%s moved by %g, expected %d", name, delta(before, name),
                     cases[i].want);
    }
    double sum = delta(before, "attnd_request_duration_seconds_sum{route=\"/"
                               "encoding/positional\"}");
    assert_true(sum > 31.0021 - 1e-6 && sum < 31.0021 + 1e-6);
    free(before);
}

static void test_in_flight(void **state) {
    (void)state;
    char *before = render();
    srv_metrics_request_started();
    srv_metrics_request_started();
    srv_metrics_request_started();
    assert_int_equal(delta(before, "attnd_in_flight_requests"), 3);
    srv_metrics_sample s = {NULL, "GET", 0, 0, 0, 0};
    for (int i = 0; i < 3; i++)
        srv_metrics_request_finished(&s);
    assert_int_equal(delta(before, "attnd_in_flight_requests"), 0);
    free(before);
}

#define THREADS 4
#define PER_THREAD 20000

static void *hammer(void *arg) {
    const char *route = arg;
    for (int i = 0; i < PER_THREAD; i++)
        finish(route, i % 2 ? "POST" : "GET", 200, 3, 5, 0.0002);
    return NULL;
}

static void test_threads(void **state) {
    (void)state;
    char *before = render();
    pthread_t t[THREADS];
    const char *r = template_of("/regression/nw");
    for (int i = 0; i < THREADS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, hammer, (void *)r), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    const double n = THREADS * PER_THREAD;
    assert_true(delta(before, "attnd_requests_total{route=\"/regression/nw\","
                              "method=\"POST\",status=\"200\"}") == n / 2);
    assert_true(delta(before, "attnd_requests_total{route=\"/regression/nw\","
                              "method=\"GET\",status=\"200\"}") == n / 2);
    assert_true(delta(before, "attnd_request_duration_seconds_bucket{route=\"/"
                              "regression/nw\",le=\"0.00025\"}") == n);
    assert_true(delta(before, "attnd_request_bytes_total") == 3 * n);
    assert_true(delta(before, "attnd_response_bytes_total") == 5 * n);
    assert_true(delta(before, "attnd_in_flight_requests") == 0);
    free(before);
}

/* Every line is a HELP or TYPE comment or a sample "name{labels} value";
 * each family has one HELP and one TYPE, before its samples; many series
 * (every status of a route) grow the buffer. */
static void test_grammar(void **state) {
    (void)state;
    const char *r = template_of("/softmax/masked");
    for (int s = 200; s <= 599; s++)
        finish(r, "POST", s, 0, 0, 0);
    char *t = render();
    regex_t sample, comment;
    assert_int_equal(
        regcomp(&sample,
                "^attnd_[a-z_]+(\\{[a-z_]+=\"[^\"\\\\]*\""
                "(,[a-z_]+=\"[^\"\\\\]*\")*\\})? [0-9]+(\\.[0-9]+)?$",
                REG_EXTENDED | REG_NOSUB),
        0);
    assert_int_equal(regcomp(&comment,
                             "^# (HELP attnd_[a-z_]+ .+|TYPE attnd_[a-z_]+ "
                             "(counter|gauge|histogram))$",
                             REG_EXTENDED | REG_NOSUB),
                     0);
    const char *ours = "attnd_requests_total{route=\"/softmax/masked\","
                       "method=\"POST\",status=";
    size_t lines = 0, helps = 0, types = 0, statuses = 0;
    char *save = NULL;
    for (char *line = strtok_r(t, "\n", &save); line != NULL;
         line = strtok_r(NULL, "\n", &save)) {
        lines++;
        int ok =
            regexec(line[0] == '#' ? &comment : &sample, line, 0, NULL, 0) == 0;
        if (!ok)
            fail_msg("line %zu is not exposition text: %s", lines, line);
        helps += strncmp(line, "# HELP ", 7) == 0;
        types += strncmp(line, "# TYPE ", 7) == 0;
        statuses += strncmp(line, ours, strlen(ours)) == 0;
    }
    /* requests, durations, in flight, request and response bytes, the
     * memory budget's five, the refusals and the shared answers (the
     * lanes only with a pool: srv_metrics_show_pool) */
    assert_int_equal(helps, 12);
    assert_int_equal(types, 12);
    assert_int_equal(statuses, 400);
    regfree(&sample);
    regfree(&comment);
    free(t);
}

/* GET /metrics through the api: the server's text, then the build line. */
static void test_served(void **state) {
    (void)state;
    api_request req = {.method = "GET", .path = "/metrics"};
    api_response res;
    api_handle(&req, &res);
    assert_int_equal(res.status, 200);
    assert_string_equal(res.content_type,
                        "text/plain; version=0.0.4; charset=utf-8");
    assert_string_equal(res.route, "/metrics");
    assert_non_null(strstr(res.body, "# TYPE attnd_requests_total counter\n"));
    const char *build = strstr(res.body, "attnd_build_info{version=\"");
    assert_non_null(build);
    assert_non_null(strstr(build, "\",blas=\""));
    assert_string_equal(res.body + res.body_len - 5, "\"} 1\n");
    api_response_free(&res);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_routes),
        cmocka_unit_test(test_methods_and_statuses),
        cmocka_unit_test(test_buckets),
        cmocka_unit_test(test_in_flight),
        cmocka_unit_test(test_threads),
        cmocka_unit_test(test_grammar),
        cmocka_unit_test(test_served),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
