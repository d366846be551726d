/*
 * test_srv_compute_pool.c — the compute pool's queue: the lanes in order
 * (interactive, then grading; bulk on workers of its own, at a lower
 * priority, never on every worker); one client's
 * jobs in arrival order, several clients' jobs in turn (round-robin over
 * the clients that have jobs waiting), the bound over all clients, and
 * every queued job run before the pool is freed.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "compute_pool.h"

/* What the jobs ran, in order; the first job (the gate) waits until it is
 * opened, so that the others queue behind it. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t opened = PTHREAD_COND_INITIALIZER;
static int open_gate;
static char ran[64];
static size_t n_ran;

static void gate_job(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lock);
    while (!open_gate)
        pthread_cond_wait(&opened, &lock);
    pthread_mutex_unlock(&lock);
}

static void record_job(void *arg) {
    pthread_mutex_lock(&lock);
    ran[n_ran++] = *(const char *)arg;
    pthread_mutex_unlock(&lock);
}

static srv_addr client(uint8_t last) {
    srv_addr a;
    memset(&a, 0, sizeof a);
    a.b[10] = a.b[11] = 0xff;
    a.b[12] = 127;
    a.b[15] = last;
    return a;
}

/* A pool of one worker, busy with the gate until `release`. */
static srv_compute_pool *blocked_pool(unsigned queue_max) {
    open_gate = 0;
    n_ran = 0;
    memset(ran, 0, sizeof ran);
    srv_compute_pool *p = srv_compute_pool_new(1, queue_max);
    assert_non_null(p);
    srv_addr x = client(9);
    assert_int_equal(
        srv_compute_pool_submit(p, gate_job, NULL, SRV_LANE_INTERACTIVE, &x),
        0);
    for (int i = 0; i < 1000 && srv_compute_pool_running(p) == 0; i++)
        usleep(1000);
    assert_int_equal(srv_compute_pool_running(p), 1);
    return p;
}

static void release(srv_compute_pool *p) {
    pthread_mutex_lock(&lock);
    open_gate = 1;
    pthread_cond_broadcast(&opened);
    pthread_mutex_unlock(&lock);
    srv_compute_pool_free(p); /* runs what is queued, then stops */
}

static void test_one_client_in_order(void **state) {
    (void)state;
    srv_compute_pool *p = blocked_pool(8);
    static const char names[] = "abcdefgh";
    srv_addr a = client(1);
    for (int i = 0; i < 8; i++)
        assert_int_equal(srv_compute_pool_submit(p, record_job,
                                                 (void *)&names[i],
                                                 SRV_LANE_INTERACTIVE, &a),
                         0);
    assert_int_equal(srv_compute_pool_waiting(p), 8);
    release(p);
    assert_string_equal(ran, "abcdefgh");
}

static void test_clients_in_turn(void **state) {
    (void)state;
    srv_compute_pool *p = blocked_pool(16);
    srv_addr a = client(1), b = client(2), c = client(3);
    /* A floods first, B and C come later, A again, and a job without a
     * client (its own lane) */
    static const char a1 = 'A', a2 = 'B', a3 = 'C', a4 = 'D', b1 = 'p',
                      b2 = 'q', c1 = 'x', n1 = '0';
    assert_int_equal(srv_compute_pool_submit(p, record_job, (void *)&a1,
                                             SRV_LANE_INTERACTIVE, &a),
                     0);
    assert_int_equal(srv_compute_pool_submit(p, record_job, (void *)&a2,
                                             SRV_LANE_INTERACTIVE, &a),
                     0);
    assert_int_equal(srv_compute_pool_submit(p, record_job, (void *)&a3,
                                             SRV_LANE_INTERACTIVE, &a),
                     0);
    assert_int_equal(srv_compute_pool_submit(p, record_job, (void *)&b1,
                                             SRV_LANE_INTERACTIVE, &b),
                     0);
    assert_int_equal(srv_compute_pool_submit(p, record_job, (void *)&c1,
                                             SRV_LANE_INTERACTIVE, &c),
                     0);
    assert_int_equal(srv_compute_pool_submit(p, record_job, (void *)&b2,
                                             SRV_LANE_INTERACTIVE, &b),
                     0);
    assert_int_equal(srv_compute_pool_submit(p, record_job, (void *)&a4,
                                             SRV_LANE_INTERACTIVE, &a),
                     0);
    assert_int_equal(srv_compute_pool_submit(p, record_job, (void *)&n1,
                                             SRV_LANE_INTERACTIVE, NULL),
                     0);
    release(p);
    /* turns: A B C none, then A B, then A, A */
    assert_string_equal(ran, "Apx0BqCD");
}

static void test_bound_over_all_clients(void **state) {
    (void)state;
    srv_compute_pool *p = blocked_pool(3);
    srv_addr a = client(1), b = client(2);
    static const char j = 'j';
    assert_int_equal(srv_compute_pool_submit(p, record_job, (void *)&j,
                                             SRV_LANE_INTERACTIVE, &a),
                     0);
    assert_int_equal(srv_compute_pool_submit(p, record_job, (void *)&j,
                                             SRV_LANE_INTERACTIVE, &b),
                     0);
    assert_int_equal(srv_compute_pool_submit(p, record_job, (void *)&j,
                                             SRV_LANE_INTERACTIVE, &a),
                     0);
    /* full: a fourth is refused, whoever sends it */
    assert_int_equal(srv_compute_pool_submit(p, record_job, (void *)&j,
                                             SRV_LANE_INTERACTIVE, &b),
                     -1);
    assert_int_equal(srv_compute_pool_waiting(p), 3);
    release(p);
    assert_string_equal(ran, "jjj");
}

static void test_queues_reused(void **state) {
    (void)state;
    /* client queues and slots come back once empty: many rounds through a queue
     * of two, from ever new clients */
    srv_compute_pool *p = srv_compute_pool_new(1, 2);
    assert_non_null(p);
    n_ran = 0;
    memset(ran, 0, sizeof ran);
    static const char j = 'k';
    int sent = 0;
    for (int round = 0; round < 40; round++) {
        srv_addr who = client((uint8_t)(round + 10));
        while (srv_compute_pool_submit(p, record_job, (void *)&j,
                                       SRV_LANE_INTERACTIVE, &who) != 0)
            usleep(100);
        sent++;
    }
    srv_compute_pool_free(p);
    assert_int_equal(n_ran, (size_t)sent);
}

/* ran without the jobs named in drop */
static void ran_without(char *out, const char *drop) {
    size_t n = 0;
    for (const char *c = ran; *c; c++)
        if (strchr(drop, *c) == NULL)
            out[n++] = *c;
    out[n] = 0;
}

/* A free worker takes interactive jobs first, then grading, whatever
 * order they came in; bulk jobs wait for the bulk worker. */
static void test_lanes_in_order(void **state) {
    (void)state;
    srv_compute_pool *p = blocked_pool(16);
    srv_addr a = client(1), b = client(2);
    /* the bulk worker busy too */
    assert_int_equal(
        srv_compute_pool_submit(p, gate_job, NULL, SRV_LANE_BULK, &a), 0);
    for (int i = 0;
         i < 1000 && srv_compute_pool_lane_running(p, SRV_LANE_BULK) == 0; i++)
        usleep(1000);
    static const char bulk1 = 'Z', bulk2 = 'Y', grade1 = 'g', click1 = '1',
                      click2 = '2';
    assert_int_equal(srv_compute_pool_submit(p, record_job, (void *)&bulk1,
                                             SRV_LANE_BULK, &a),
                     0);
    assert_int_equal(srv_compute_pool_submit(p, record_job, (void *)&grade1,
                                             SRV_LANE_GRADING, &a),
                     0);
    assert_int_equal(srv_compute_pool_submit(p, record_job, (void *)&bulk2,
                                             SRV_LANE_BULK, &b),
                     0);
    assert_int_equal(srv_compute_pool_submit(p, record_job, (void *)&click1,
                                             SRV_LANE_INTERACTIVE, &b),
                     0);
    assert_int_equal(srv_compute_pool_submit(p, record_job, (void *)&click2,
                                             SRV_LANE_INTERACTIVE, &a),
                     0);
    assert_int_equal(srv_compute_pool_lane_waiting(p, SRV_LANE_BULK), 2);
    assert_int_equal(srv_compute_pool_lane_waiting(p, SRV_LANE_GRADING), 1);
    assert_int_equal(srv_compute_pool_lane_waiting(p, SRV_LANE_INTERACTIVE), 2);
    assert_int_equal(srv_compute_pool_lane_running(p, SRV_LANE_INTERACTIVE),
                     1); /* the gate */
    assert_string_equal(srv_lane_name(SRV_LANE_BULK), "bulk");
    release(p);
    /* clients in turn within each lane; the two kinds of worker side by
     * side */
    char seen[64];
    ran_without(seen, "ZY");
    assert_string_equal(seen, "12g");
    ran_without(seen, "12g");
    assert_string_equal(seen, "ZY");
}

/* The nice value of the thread that ran the job, into *(int *)arg. */
static void nice_job(void *arg) {
    errno = 0;
    *(int *)arg = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    pthread_mutex_lock(&lock);
    ran[n_ran++] = 'n';
    pthread_mutex_unlock(&lock);
}

/* Bulk jobs run 10 nice values below the other lanes' jobs (capped at
 * 19), so that the kernel serves the class first. */
static void test_bulk_runs_nicer(void **state) {
    (void)state;
    n_ran = 0;
    memset(ran, 0, sizeof ran);
    srv_compute_pool *p = srv_compute_pool_new(2, 8);
    assert_non_null(p);
    srv_addr a = client(1);
    int click = -100, batch = -100;
    assert_int_equal(
        srv_compute_pool_submit(p, nice_job, &click, SRV_LANE_INTERACTIVE, &a),
        0);
    assert_int_equal(
        srv_compute_pool_submit(p, nice_job, &batch, SRV_LANE_BULK, &a), 0);
    srv_compute_pool_free(p); /* runs both, then stops */
    assert_int_equal(n_ran, 2);
    int own = getpriority(PRIO_PROCESS, 0);
    assert_int_equal(click, own);
    assert_int_equal(batch, own + 10 > 19 ? 19 : own + 10);
}

/* A pool of two workers in which client 1 has two slow jobs (gates) in
 * lane `gates`, one of them running, and client 2's job in lane
 * `click_lane` has run meanwhile: the gate still holds its worker. */
static srv_compute_pool *gates_then_a_click(srv_lane gates,
                                            srv_lane click_lane) {
    open_gate = 0;
    n_ran = 0;
    memset(ran, 0, sizeof ran);
    srv_compute_pool *p = srv_compute_pool_new(2, 8);
    assert_non_null(p);
    srv_addr a = client(1), b = client(2);
    for (int k = 0; k < 2; k++)
        assert_int_equal(srv_compute_pool_submit(p, gate_job, NULL, gates, &a),
                         0);
    for (int i = 0; i < 1000 && srv_compute_pool_lane_running(p, gates) == 0;
         i++)
        usleep(1000);
    usleep(50000); /* time for the second to start too, if it could */
    static const char click = 'c';
    assert_int_equal(
        srv_compute_pool_submit(p, record_job, (void *)&click, click_lane, &b),
        0);
    for (int i = 0; i < 2000 && n_ran == 0; i++)
        usleep(1000);
    assert_string_equal(ran, "c");
    return p;
}

/* Bulk jobs never hold every worker: with two workers and two slow bulk
 * jobs, a click is run while the first bulk job still runs, and the
 * second bulk job waits for the bulk lane's one thread. */
static void test_bulk_leaves_a_worker(void **state) {
    (void)state;
    srv_compute_pool *p =
        gates_then_a_click(SRV_LANE_BULK, SRV_LANE_INTERACTIVE);
    assert_int_equal(srv_compute_pool_lane_running(p, SRV_LANE_BULK), 1);
    assert_int_equal(srv_compute_pool_lane_waiting(p, SRV_LANE_BULK), 1);
    release(p);
}

/* One client's jobs never hold every worker of the interactive and
 * grading lanes (at most half of them): with two workers and two slow
 * jobs of one client, one runs, the other waits, and another client's
 * job runs meanwhile. */
static void test_one_client_half_the_workers(void **state) {
    (void)state;
    srv_compute_pool *p =
        gates_then_a_click(SRV_LANE_INTERACTIVE, SRV_LANE_GRADING);
    assert_int_equal(srv_compute_pool_lane_running(p, SRV_LANE_INTERACTIVE), 1);
    assert_int_equal(srv_compute_pool_lane_waiting(p, SRV_LANE_INTERACTIVE), 1);
    release(p); /* the gate opens: the second runs once the first is done */
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_client_in_order),
        cmocka_unit_test(test_clients_in_turn),
        cmocka_unit_test(test_bound_over_all_clients),
        cmocka_unit_test(test_queues_reused),
        cmocka_unit_test(test_lanes_in_order),
        cmocka_unit_test(test_bulk_leaves_a_worker),
        cmocka_unit_test(test_bulk_runs_nicer),
        cmocka_unit_test(test_one_client_half_the_workers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
