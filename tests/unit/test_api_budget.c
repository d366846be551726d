/*
 * test_api_budget.c — the server-wide memory budget (api.h, budget.h):
 * reservations that fit, never fit, or wait and then fit or time out; a
 * ledger settling to what an answer holds; the tree estimate against what
 * jansson really allocates; api_handle refusing a tree bomb (413) and
 * a request over the budget (413), and giving every byte back afterwards;
 * and a try on an HTTP thread (api_request.inline_work_max) deferred, not
 * refused, for more work than its bound or memory that does not fit now.
 */
#include <malloc.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "api.h"
#include "budget.h"
#include "json_tree.h"
#include "problem.h"

#define MiB ((uint64_t)1 << 20)

static uint64_t used(void) {
    api_budget_usage u;
    api_budget_stats(&u);
    return u.used;
}

static void test_take_and_give(void **state) {
    (void)state;
    api_budget_set(10 * MiB, 1, 50);
    assert_int_equal(api_budget_take(4 * MiB, 0), API_BUDGET_OK);
    assert_int_equal(api_budget_take(6 * MiB, 0), API_BUDGET_OK);
    assert_int_equal(used(), 10 * MiB);
    assert_int_equal(api_budget_take(1, 0), API_BUDGET_BUSY);
    assert_int_equal(api_budget_take(11 * MiB, 1), API_BUDGET_NEVER);
    api_budget_give(6 * MiB);
    assert_int_equal(api_budget_take(6 * MiB, 0), API_BUDGET_OK);
    api_budget_give(10 * MiB);
    assert_int_equal(used(), 0);
    api_budget_set(0, 1, 50);
}

static void *give_later(void *arg) {
    usleep(30 * 1000);
    api_budget_give(*(uint64_t *)arg);
    return NULL;
}

static void test_a_waiter_gets_room_or_times_out(void **state) {
    (void)state;
    api_budget_set(10 * MiB, 1, 2000);
    assert_int_equal(api_budget_take(8 * MiB, 0), API_BUDGET_OK);
    uint64_t back = 8 * MiB;
    pthread_t t;
    pthread_create(&t, NULL, give_later, &back);
    /* waits until the other thread gives its 8 MiB back */
    assert_int_equal(api_budget_take(5 * MiB, 1), API_BUDGET_OK);
    pthread_join(t, NULL);
    assert_int_equal(used(), 5 * MiB);
    /* no room comes: refused after the wait */
    api_budget_set(10 * MiB, 1, 40);
    assert_int_equal(api_budget_take(6 * MiB, 1), API_BUDGET_BUSY);
    api_budget_give(5 * MiB);
    api_budget_set(0, 1, 50);
}

static void test_ledger_keeps_what_the_answer_holds(void **state) {
    (void)state;
    api_budget_set(100 * MiB, 1, 50);
    api_ledger ledger = {0, 0, 0};
    api_problem p = {0};
    assert_int_equal(api_ledger_reserve(&ledger, 40 * MiB, "it", &p), 0);
    assert_int_equal(api_ledger_reserve(&ledger, 20 * MiB, "it", &p), 0);
    assert_int_equal(used(), 60 * MiB);
    assert_int_equal(api_ledger_settle(&ledger, 3 * MiB), 3 * MiB);
    assert_int_equal(used(), 3 * MiB);
    assert_int_equal(ledger.held, 0);
    api_budget_give(3 * MiB);
    /* over the whole budget: 413 naming it; over what is left: 503 */
    assert_int_equal(api_ledger_reserve(&ledger, 101 * MiB, "the tensors", &p),
                     -1);
    assert_int_equal(p.code, API_E_PAYLOAD_TOO_LARGE);
    assert_non_null(strstr(p.detail, "--memory-budget"));
    api_problem q = {0};
    assert_int_equal(api_ledger_reserve(&ledger, 90 * MiB, "it", &q), 0);
    assert_int_equal(api_ledger_reserve(&ledger, 20 * MiB, "it", &q), -1);
    assert_int_equal(q.code, API_E_NO_ROOM); /* 503 overloaded, as memory */
    assert_int_equal(api_error_status(q.code), 503);
    assert_string_equal(api_error_name(q.code), "overloaded");
    api_ledger_settle(&ledger, 0);
    assert_int_equal(used(), 0);
    api_budget_set(0, 1, 50);
}

/* jansson's allocations, counted as glibc's malloc lays them out (a
 * chunk of the request plus its 8-byte header, in 16-byte steps, at
 * least 32), whichever allocator runs the test (AddressSanitizer's has
 * other overheads). */
static size_t counted;

static size_t chunk_of(size_t n) {
    size_t chunk = (n + 8 + 15) / 16 * 16;
    return chunk < 32 ? 32 : chunk;
}

static void *counting_malloc(size_t n) {
    size_t *p = malloc(n + 16);
    if (p == NULL)
        return NULL;
    p[0] = chunk_of(n);
    counted += p[0];
    return p + 2;
}

static void counting_free(void *ptr) {
    if (ptr == NULL)
        return;
    size_t *p = (size_t *)ptr - 2;
    counted -= p[0];
    free(p);
}

/* The estimate bounds what jansson allocates for text, within 2x. */
static void estimate_bounds(const char *text) {
    json_set_alloc_funcs(counting_malloc, counting_free);
    counted = 0;
    json_error_t error;
    json_t *root = json_loads(text, JSON_DECODE_ANY, &error);
    size_t real = counted;
    assert_non_null(root);
    json_decref(root);
    json_set_alloc_funcs(malloc, free);
    uint64_t estimate = api_json_tree_bytes(text, strlen(text));
    if (estimate < real || estimate > 2 * real + 4096)
        fail_msg("estimate %llu for %zu real bytes",
                 (unsigned long long)estimate, real);
}

/* Bytes malloc holds now. */
static size_t heap_bytes(void) {
    struct mallinfo2 m = mallinfo2();
    return m.uordblks + m.hblkhd;
}

/* n copies of unit in an array. */
static char *array_of(const char *unit, size_t n) {
    size_t len = strlen(unit);
    char *s = malloc(n * (len + 1) + 3);
    char *p = s;
    *p++ = '[';
    for (size_t i = 0; i < n; i++) {
        memcpy(p, unit, len);
        p += len;
        *p++ = ',';
    }
    p[-1] = ']';
    *p = '\0';
    return s;
}

static void test_tree_estimate_bounds_jansson(void **state) {
    (void)state;
    const char *units[] = {"{}",          "[]",     "1",
                           "-2.5e-3",     "\"ab\"", "{\"key\":1}",
                           "[1,2,[3,4]]", "true",   "{\"a\":{\"b\":[null]}}"};
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        char *text = array_of(units[i], 100000);
        estimate_bounds(text);
        free(text);
    }
}

static void test_tree_bomb_refused_before_parsing(void **state) {
    (void)state;
    /* 16 MiB of {} in a tensor field: 5.6 million objects */
    size_t n = (16u << 20) / 3;
    char *objects = array_of("{}", n);
    size_t len = strlen(objects) + 16;
    char *body = malloc(len);
    snprintf(body, len, "{\"queries\":%s}", objects);
    free(objects);
    api_limits limits;
    api_limits_default(&limits);
    limits.max_body_bytes = 32u << 20;
    api_request req = {.method = "POST",
                       .path = "/attention/dot",
                       .content_type = "application/json",
                       .body = body,
                       .body_len = strlen(body),
                       .limits = &limits};
    api_response res;
    size_t before = heap_bytes();
    api_handle(&req, &res);
    assert_int_equal(res.status, 413);
    assert_non_null(strstr(res.body, "as a tree"));
    /* nothing near the 1.3 GB tree was allocated */
    assert_true(heap_bytes() < before + (64u << 20));
    api_response_free(&res);
    free(body);
}

static const char *DOT =
    "{\"queries\":[[[1,0]]],\"keys\":[[[1,0],[0,1]]],\"values\":[[[1],[2]]]}";

static void test_handle_charges_and_gives_back(void **state) {
    (void)state;
    api_request req = {.method = "POST",
                       .path = "/attention/dot",
                       .content_type = "application/json",
                       .body = DOT,
                       .body_len = strlen(DOT)};
    api_response res;
    /* a budget smaller than this request's charge: 413 naming it */
    api_budget_set(4096, 1, 50);
    api_handle(&req, &res);
    assert_int_equal(res.status, 413);
    assert_non_null(strstr(res.body, "--memory-budget"));
    api_response_free(&res);
    assert_int_equal(used(), 0);
    /* room enough: answered, the answer holding its own bytes */
    api_budget_set(64 * MiB, 1, 50);
    api_handle(&req, &res);
    assert_int_equal(res.status, 200);
    assert_int_equal(res.charged, res.body_len);
    assert_int_equal(used(), res.body_len);
    api_response_free(&res);
    assert_int_equal(used(), 0);
    api_budget_set(0, 1, 50);
}

static uint64_t refusals(void) {
    api_budget_usage u;
    api_budget_stats(&u);
    return u.refusals;
}

static const char *NW = "{\"x_train\":[1,2,4],\"y_train\":[0,3,1],"
                        "\"x_query\":[2.5],\"w\":0.5}";
#define NW_FIT                                                                 \
    "{\"x_train\":[1,2,4,5,6,7,8,9,10,11],\"y_train\":[0,3,1,2,3,4,5,6,7,8],"  \
    "\"x_query\":[2.5],\"w\":0.5,\"fit\":{\"epochs\":100000}}"

static void test_a_try_defers_long_work_and_no_room(void **state) {
    (void)state;
    api_request req = {.method = "POST",
                       .path = "/regression/nw",
                       .content_type = "application/json",
                       .body = NW,
                       .body_len = strlen(NW),
                       .inline_work_max = 1 << 20};
    api_response res;
    /* little work, room enough: answered as without the bound */
    api_handle(&req, &res);
    assert_int_equal(res.status, 200);
    assert_int_equal(res.deferred, 0);
    api_response_free(&res);
    /* 100000 epochs: deferred, nothing held, nothing answered */
    req.body = NW_FIT;
    req.body_len = strlen(NW_FIT);
    api_handle(&req, &res);
    assert_int_equal(res.deferred, 1);
    assert_int_equal(res.status, 0);
    assert_null(res.body);
    assert_int_equal(used(), 0);
    /* the same through /grade: the route it runs is bounded too */
    const char *grade = "{\"endpoint\":\"/regression/nw\",\"request\":" NW_FIT
                        ",\"answer\":{\"w\":0.5}}";
    api_request g = req;
    g.path = "/grade";
    g.body = grade;
    g.body_len = strlen(grade);
    api_handle(&g, &res);
    assert_int_equal(res.deferred, 1);
    assert_null(res.body);
    g.inline_work_max = 0; /* on a compute thread: computed */
    api_handle(&g, &res);
    assert_int_equal(res.deferred, 0);
    assert_int_equal(res.status, 200);
    api_response_free(&res);
    /* no room now: deferred, and no refusal counted */
    req.body = NW;
    req.body_len = strlen(NW);
    api_budget_set(64 * MiB, 1, 50);
    assert_int_equal(api_budget_take(64 * MiB, 0), API_BUDGET_OK);
    uint64_t refused = refusals();
    api_handle(&req, &res);
    assert_int_equal(res.deferred, 1);
    assert_int_equal(refusals(), refused);
    assert_int_equal(used(), 64 * MiB);
    /* without the bound (an HTTP thread's dot): 503 at once, counted */
    req.inline_work_max = 0;
    api_handle(&req, &res);
    assert_int_equal(res.deferred, 0);
    assert_int_equal(res.status, 503);
    assert_int_equal(refusals(), refused + 1);
    api_response_free(&res);
    api_budget_give(64 * MiB);
    assert_int_equal(used(), 0);
    api_budget_set(0, 1, 50);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_take_and_give),
        cmocka_unit_test(test_a_waiter_gets_room_or_times_out),
        cmocka_unit_test(test_ledger_keeps_what_the_answer_holds),
        cmocka_unit_test(test_tree_estimate_bounds_jansson),
        cmocka_unit_test(test_tree_bomb_refused_before_parsing),
        cmocka_unit_test(test_handle_charges_and_gives_back),
        cmocka_unit_test(test_a_try_defers_long_work_and_no_room),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
