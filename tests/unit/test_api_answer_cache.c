/*
 * test_api_answer_cache.c — identical requests computed once
 * (api/core/answer_cache.h): a kept answer is found by its key alone,
 * compared in full; requests waiting for an identical one computing get
 * its answer, or compute it themselves, unshared, when it gave none; the cache
 * stays within its bytes, least recently used first out, and within the memory
 * budget; ETags and If-None-Match follow RFC 9110.
 */
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

#include "answer_cache.h"

/* begin on a NUL-terminated key. */
static api_answer_outcome begin(const char *key, unsigned wait_ms,
                                api_answer_entry **e, char **body,
                                size_t *len) {
    api_answer a;
    api_answer_outcome o =
        api_answer_cache_begin(key, strlen(key), wait_ms, e, &a);
    *body = a.body;
    *len = o == API_ANSWER_HIT ? a.body_len : 0;
    return o;
}

/* finish with body[0 .. len) of JSON (NULL: no answer). */
static void finish(api_answer_entry *e, const char *body, size_t len) {
    api_answer a = {(char *)body, len, "application/json", "\"etag\""};
    api_answer_cache_finish(e, body != NULL ? &a : NULL);
}

static void test_kept_and_found(void **state) {
    (void)state;
    api_answer_cache_set(1 << 20);
    api_answer_entry *e;
    char *body;
    size_t len;
    assert_int_equal(begin("k1", 0, &e, &body, &len), API_ANSWER_MISS);
    assert_non_null(e);
    finish(e, "{\"output\":1}", 12);
    assert_int_equal(begin("k1", 0, &e, &body, &len), API_ANSWER_HIT);
    assert_int_equal(len, 12);
    assert_memory_equal(body, "{\"output\":1}", 12);
    free(body);
    /* a key that is a prefix, or another of the same length, is another */
    assert_int_equal(begin("k", 0, &e, &body, &len), API_ANSWER_MISS);
    finish(e, NULL, 0); /* it gave no answer */
    assert_int_equal(begin("k2", 0, &e, &body, &len), API_ANSWER_MISS);
    finish(e, NULL, 0);
    /* nothing is kept of an answer never given */
    assert_int_equal(begin("k", 0, &e, &body, &len), API_ANSWER_MISS);
    finish(e, NULL, 0);
    api_answer_cache_set(0); /* empty for the next test */
}

static void test_least_recently_used_out(void **state) {
    (void)state;
    char big[4096];
    memset(big, 'x', sizeof big);
    /* room for eight answers of about 3.1 KiB (an answer is kept when it
     * is at most an eighth of the cache) */
    api_answer_cache_set(8 * 3200);
    api_answer_entry *e;
    char *body;
    size_t len;
    const char *keys[] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"};
    for (int i = 0; i < 10; i++) {
        assert_int_equal(begin(keys[i], 0, &e, &body, &len), API_ANSWER_MISS);
        finish(e, big, 3000);
        if (i == 3) { /* "a" used again: it outlives "b" and "c" */
            assert_int_equal(begin("a", 0, &e, &body, &len), API_ANSWER_HIT);
            free(body);
        }
    }
    api_answer_cache_usage u;
    api_answer_cache_stats(&u);
    assert_true(u.bytes <= 8 * 3200);
    assert_int_equal(u.entries, 8);
    /* the newest and the one used again are kept; the oldest unused is not */
    assert_int_equal(begin("j", 0, &e, &body, &len), API_ANSWER_HIT);
    free(body);
    assert_int_equal(begin("a", 0, &e, &body, &len), API_ANSWER_HIT);
    free(body);
    assert_int_equal(begin("b", 0, &e, &body, &len), API_ANSWER_MISS);
    finish(e, NULL, 0);
    assert_int_equal(begin("c", 0, &e, &body, &len), API_ANSWER_MISS);
    finish(e, NULL, 0);
    /* an answer over an eighth of the cache is shared, never kept */
    assert_int_equal(begin("huge", 0, &e, &body, &len), API_ANSWER_MISS);
    finish(e, big, sizeof big);
    assert_int_equal(begin("huge", 0, &e, &body, &len), API_ANSWER_MISS);
    finish(e, NULL, 0);
    api_answer_cache_set(0);
    api_answer_cache_stats(&u);
    assert_int_equal(u.entries, 0);
    assert_int_equal(u.bytes, 0);
}

/* A request computing "slow": others wait for its answer. */
typedef struct {
    const char *key;
    api_answer_outcome outcome;
    char body[64];
} waiter;

static void *wait_for_it(void *arg) {
    waiter *w = arg;
    api_answer_entry *e;
    char *body = NULL;
    size_t len = 0;
    w->outcome = begin(w->key, 5000, &e, &body, &len);
    if (w->outcome == API_ANSWER_HIT) {
        memcpy(w->body, body, len < 63 ? len : 63);
        free(body);
    } else if (w->outcome == API_ANSWER_BYPASS) {
        /* the first gave no answer: this one computes it, unshared */
        strcpy(w->body, "computed here");
    }
    return NULL;
}

static void test_identical_requests_wait(void **state) {
    (void)state;
    api_answer_cache_set(0); /* nothing kept: sharing alone */
    api_answer_cache_usage before, after;
    api_answer_cache_stats(&before);
    api_answer_entry *e;
    char *body;
    size_t len;
    assert_int_equal(begin("slow", 0, &e, &body, &len), API_ANSWER_MISS);
    /* an HTTP thread does not wait: it computes it too */
    api_answer_entry *other;
    assert_int_equal(begin("slow", 0, &other, &body, &len), API_ANSWER_BYPASS);
    assert_null(other);
    waiter w[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].key = "slow";
        pthread_create(&t[i], NULL, wait_for_it, &w[i]);
    }
    usleep(100 * 1000);
    finish(e, "{\"output\":7}", 12);
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        assert_int_equal(w[i].outcome, API_ANSWER_HIT);
        assert_string_equal(w[i].body, "{\"output\":7}");
    }
    api_answer_cache_stats(&after);
    assert_int_equal(after.shared - before.shared, 4);
    assert_int_equal(after.computed - before.computed, 1);
    /* kept nowhere: the next one computes */
    assert_int_equal(begin("slow", 0, &e, &body, &len), API_ANSWER_MISS);
    /* the one computing fails: a waiter computes it itself */
    memset(&w[0], 0, sizeof w[0]);
    w[0].key = "slow";
    pthread_create(&t[0], NULL, wait_for_it, &w[0]);
    usleep(100 * 1000);
    finish(e, NULL, 0);
    pthread_join(t[0], NULL);
    assert_int_equal(w[0].outcome, API_ANSWER_BYPASS);
    assert_string_equal(w[0].body, "computed here");
}

static void test_waiting_is_bounded(void **state) {
    (void)state;
    api_answer_entry *e, *late;
    char *body;
    size_t len;
    assert_int_equal(begin("stuck", 0, &e, &body, &len), API_ANSWER_MISS);
    /* waits 50 ms, then computes it itself, sharing nothing */
    assert_int_equal(begin("stuck", 50, &late, &body, &len), API_ANSWER_BYPASS);
    assert_null(late);
    finish(e, NULL, 0);
}

static void test_etags(void **state) {
    (void)state;
    char a[API_ETAG_TEXT], b[API_ETAG_TEXT], c[API_ETAG_TEXT];
    api_answer_etag(a, "key", 3);
    api_answer_etag(b, "key", 3);
    api_answer_etag(c, "kez", 3);
    assert_string_equal(a, b);
    assert_string_not_equal(a, c);
    assert_int_equal(strlen(a), API_ETAG_TEXT - 1);
    assert_true(a[0] == '"' && a[API_ETAG_TEXT - 2] == '"');
    char list[128];
    snprintf(list, sizeof list, "\"0000\", W/%s", a);
    assert_true(api_etag_matches(list, a));
    assert_true(api_etag_matches("*", a));
    assert_true(api_etag_matches(a, a));
    assert_false(api_etag_matches(c, a));
    assert_false(api_etag_matches(NULL, a));
    assert_false(api_etag_matches("", a));
    /* a tag that only starts like it is another */
    snprintf(list, sizeof list, "%.*sff\"", API_ETAG_TEXT - 2, a);
    assert_false(api_etag_matches(list, a));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_and_found),
        cmocka_unit_test(test_least_recently_used_out),
        cmocka_unit_test(test_identical_requests_wait),
        cmocka_unit_test(test_waiting_is_bounded),
        cmocka_unit_test(test_etags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
