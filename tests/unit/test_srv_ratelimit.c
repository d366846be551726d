/*
 * test_srv_ratelimit.c — the per-client table on a clock the test drives:
 * token-bucket admissions and Retry-After against the bucket's arithmetic
 * done by hand, independent clients, IPv6 /64 grouping, the per-client
 * in-flight cap, bounded memory under a flood of addresses (a busy client
 * keeps its place), and concurrent use from several threads.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ratelimit.h"

static srv_addr addr(const char *text) {
    srv_addr a;
    assert_int_equal(srv_addr_parse(&a, text, strlen(text)), 0);
    return a;
}

/* An IPv4 address numbered i (10.x.y.z). */
static srv_addr nth(uint32_t i) {
    char text[32];
    snprintf(text, sizeof text, "10.%u.%u.%u", (i >> 16) & 255, (i >> 8) & 255,
             i & 255);
    return addr(text);
}

static srv_rl_verdict admit(srv_ratelimit *rl, const srv_addr *a, double t,
                            srv_rl_ticket *ticket, unsigned *retry) {
    return srv_ratelimit_admit(rl, a, t, ticket, retry);
}

static void test_bucket(void **state) {
    (void)state;
    /* 1 request/s, bursts of 3 */
    srv_ratelimit *rl = srv_ratelimit_new(1.0, 3, 0);
    assert_non_null(rl);
    srv_addr a = addr("192.0.2.1");
    srv_rl_ticket t;
    unsigned retry;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(admit(rl, &a, 100.0, &t, &retry), SRV_RL_ADMIT);
        assert_int_equal(retry, 0);
        srv_ratelimit_release(rl, &t);
    }
    /* empty: 1 token takes 1 s */
    assert_int_equal(admit(rl, &a, 100.0, &t, &retry), SRV_RL_RATE);
    assert_int_equal(retry, 1);
    assert_int_equal(t.slot, UINT32_MAX);
    /* 0.5 s later: 0.5 tokens, 0.5 s to go, rounded up */
    assert_int_equal(admit(rl, &a, 100.5, &t, &retry), SRV_RL_RATE);
    assert_int_equal(retry, 1);
    /* refusals take nothing: at 101.0 one token is there */
    assert_int_equal(admit(rl, &a, 101.0, &t, &retry), SRV_RL_ADMIT);
    srv_ratelimit_release(rl, &t);
    assert_int_equal(admit(rl, &a, 101.0, &t, &retry), SRV_RL_RATE);
    /* a long pause refills to the burst, not beyond */
    int admitted = 0;
    while (admit(rl, &a, 1000.0, &t, &retry) == SRV_RL_ADMIT) {
        srv_ratelimit_release(rl, &t);
        admitted++;
    }
    assert_int_equal(admitted, 3);
    srv_ratelimit_free(rl);

    /* 0.25/s, burst 1: after 1 s, 0.25 tokens, (1 - 0.25) / 0.25 = 3 s */
    rl = srv_ratelimit_new(0.25, 1, 0);
    assert_int_equal(admit(rl, &a, 0.0, &t, &retry), SRV_RL_ADMIT);
    assert_int_equal(admit(rl, &a, 1.0, &t, &retry), SRV_RL_RATE);
    assert_int_equal(retry, 3);
    /* at 3.5 s: 0.875 tokens, 0.5 s to go, rounded up */
    assert_int_equal(admit(rl, &a, 3.5, &t, &retry), SRV_RL_RATE);
    assert_int_equal(retry, 1);
    assert_int_equal(admit(rl, &a, 4.0, &t, &retry), SRV_RL_ADMIT);
    /* a clock read before another thread's (out of order) is no refund */
    assert_int_equal(admit(rl, &a, 3.0, &t, &retry), SRV_RL_RATE);
    assert_int_equal(retry, 4);
    srv_ratelimit_free(rl);

    /* 0.5/s: the Retry-After the integration test expects */
    rl = srv_ratelimit_new(0.5, 1, 0);
    assert_int_equal(admit(rl, &a, 7.0, &t, &retry), SRV_RL_ADMIT);
    assert_int_equal(admit(rl, &a, 7.01, &t, &retry), SRV_RL_RATE);
    assert_int_equal(retry, 2);
    srv_ratelimit_free(rl);
}

static void test_clients_apart(void **state) {
    (void)state;
    srv_ratelimit *rl = srv_ratelimit_new(1.0, 2, 0);
    srv_addr a = addr("127.0.0.1"), b = addr("127.0.0.2");
    srv_rl_ticket t;
    unsigned retry;
    for (int i = 0; i < 20; i++) /* a floods */
        (void)admit(rl, &a, 5.0, &t, &retry);
    assert_int_equal(admit(rl, &a, 5.0, &t, &retry), SRV_RL_RATE);
    assert_int_equal(admit(rl, &b, 5.0, &t, &retry), SRV_RL_ADMIT);
    assert_int_equal(admit(rl, &b, 5.0, &t, &retry), SRV_RL_ADMIT);
    assert_int_equal(admit(rl, &b, 5.0, &t, &retry), SRV_RL_RATE);

    /* one IPv6 /64 is one client; the next /64 another */
    srv_addr h1 = addr("2001:db8:0:1::1"), h2 = addr("2001:db8:0:1:ffff::2"),
             other = addr("2001:db8:0:2::1");
    assert_int_equal(admit(rl, &h1, 5.0, &t, &retry), SRV_RL_ADMIT);
    assert_int_equal(admit(rl, &h2, 5.0, &t, &retry), SRV_RL_ADMIT);
    assert_int_equal(admit(rl, &h1, 5.0, &t, &retry), SRV_RL_RATE);
    assert_int_equal(admit(rl, &other, 5.0, &t, &retry), SRV_RL_ADMIT);
    /* IPv4 addresses next to each other are not grouped */
    srv_addr c = addr("127.0.0.3");
    assert_int_equal(admit(rl, &c, 5.0, &t, &retry), SRV_RL_ADMIT);
    srv_ratelimit_free(rl);
}

static void test_concurrency(void **state) {
    (void)state;
    srv_ratelimit *rl = srv_ratelimit_new(0, 0, 2); /* no rate, 2 at once */
    srv_addr a = addr("198.51.100.1"), b = addr("198.51.100.2");
    srv_rl_ticket t1, t2, t3;
    unsigned retry;
    assert_int_equal(admit(rl, &a, 1.0, &t1, &retry), SRV_RL_ADMIT);
    assert_int_equal(admit(rl, &a, 1.0, &t2, &retry), SRV_RL_ADMIT);
    assert_int_equal(admit(rl, &a, 1.0, &t3, &retry), SRV_RL_CONCURRENT);
    assert_int_equal(retry, 1);
    assert_int_equal(admit(rl, &b, 1.0, &t3, &retry), SRV_RL_ADMIT);
    srv_ratelimit_release(rl, &t3);
    srv_ratelimit_release(rl, &t1);
    assert_int_equal(admit(rl, &a, 1.0, &t1, &retry), SRV_RL_ADMIT);
    assert_int_equal(admit(rl, &a, 1.0, &t3, &retry), SRV_RL_CONCURRENT);
    /* releasing twice frees one place only */
    srv_ratelimit_release(rl, &t1);
    srv_ratelimit_release(rl, &t1); /* stale: counted already */
    srv_rl_ticket none = {UINT32_MAX, 0};
    srv_ratelimit_release(rl, &none);
    assert_int_equal(admit(rl, &a, 1.0, &t1, &retry), SRV_RL_ADMIT);
    srv_ratelimit_free(rl);

    /* the cap comes first: a refused request takes no token */
    rl = srv_ratelimit_new(1.0, 1, 1);
    assert_int_equal(admit(rl, &a, 1.0, &t1, &retry), SRV_RL_ADMIT);
    assert_int_equal(admit(rl, &a, 2.0, &t2, &retry), SRV_RL_CONCURRENT);
    srv_ratelimit_release(rl, &t1);
    assert_int_equal(admit(rl, &a, 2.0, &t2, &retry), SRV_RL_ADMIT);
    srv_ratelimit_free(rl);
}

static void test_bounded(void **state) {
    (void)state;
    srv_ratelimit *rl = srv_ratelimit_new(1.0, 1, 1);
    srv_addr busy = addr("203.0.113.50");
    srv_rl_ticket held, t;
    unsigned retry;
    assert_int_equal(admit(rl, &busy, 0.0, &held, &retry), SRV_RL_ADMIT);
    /* 200000 addresses, one request each, then gone */
    for (uint32_t i = 0; i < 200000; i++) {
        srv_addr a = nth(i);
        assert_int_equal(admit(rl, &a, 0.5 + i * 1e-6, &t, &retry),
                         SRV_RL_ADMIT);
        srv_ratelimit_release(rl, &t);
    }
    assert_true(srv_ratelimit_clients(rl) <= SRV_RATELIMIT_SLOTS);
    assert_true(srv_ratelimit_clients(rl) >= SRV_RATELIMIT_SLOTS / 2);
    /* the busy client kept its slot (idle ones went first): still at its
     * cap of one in flight, and its bucket still empty after release */
    assert_int_equal(admit(rl, &busy, 0.6, &t, &retry), SRV_RL_CONCURRENT);
    srv_ratelimit_release(rl, &held);
    assert_int_equal(admit(rl, &busy, 0.6, &t, &retry), SRV_RL_RATE);
    srv_ratelimit_free(rl);
}

/* Threads: each admits and releases its own client many times; with a cap
 * of 1 in flight per client every admission must succeed. */
typedef struct {
    srv_ratelimit *rl;
    uint32_t id;
    int refused;
} worker;

static void *work(void *arg) {
    worker *w = arg;
    srv_addr a = nth(w->id);
    for (int i = 0; i < 20000; i++) {
        srv_rl_ticket t;
        unsigned retry;
        if (srv_ratelimit_admit(w->rl, &a, 1.0, &t, &retry) != SRV_RL_ADMIT)
            w->refused++;
        srv_ratelimit_release(w->rl, &t);
    }
    return NULL;
}

static void test_threads(void **state) {
    (void)state;
    srv_ratelimit *rl = srv_ratelimit_new(0, 0, 1);
    pthread_t th[4];
    worker w[4];
    for (int i = 0; i < 4; i++) {
        w[i] = (worker){rl, (uint32_t)i, 0};
        assert_int_equal(pthread_create(&th[i], NULL, work, &w[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        assert_int_equal(w[i].refused, 0);
    }
    srv_ratelimit_free(rl);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bucket),
        cmocka_unit_test(test_clients_apart),
        cmocka_unit_test(test_concurrency),
        cmocka_unit_test(test_bounded),
        cmocka_unit_test(test_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
