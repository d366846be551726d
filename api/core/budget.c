/*
 * budget.c — the server-wide memory budget (api.h) and one request's
 * ledger of it (budget.h).
 *
 * One counter under one lock: a reservation is a few instructions, and
 * requests reserve two or three times each. A reservation that does not
 * fit waits on a condition variable, at most max_waiters of them at a
 * time and each at most max_wait_ms, woken whenever memory comes back.
 */
#include "budget.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <time.h>

#include "api.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t room = PTHREAD_COND_INITIALIZER;
static uint64_t total;   /* 0: no budget */
static uint64_t used;    /* reserved now */
static uint64_t peak;    /* most reserved at once */
static unsigned waiting; /* reservations waiting for room */
static unsigned max_waiters = 1;
static unsigned max_wait_ms = 1000;
static uint64_t refusals; /* 503s for want of room */

void api_budget_set(uint64_t total_bytes, unsigned waiters, unsigned wait_ms) {
    pthread_mutex_lock(&lock);
    total = total_bytes;
    max_waiters = waiters;
    max_wait_ms = wait_ms;
    pthread_mutex_unlock(&lock);
}

/* The monotonic time wait_ms from now, for pthread_cond_timedwait on a
 * condition variable with the default (realtime) clock. */
static struct timespec deadline_in(unsigned wait_ms) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += wait_ms / 1000;
    ts.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

int api_budget_take(uint64_t bytes, int may_wait) {
    pthread_mutex_lock(&lock);
    int rc = API_BUDGET_OK;
    if (total == 0) {
        used += bytes;
    } else if (bytes > total) {
        rc = API_BUDGET_NEVER;
    } else if (bytes <= total - (used < total ? used : total)) {
        used += bytes;
    } else if (may_wait <= 0 || waiting >= max_waiters) {
        rc = API_BUDGET_BUSY;
    } else {
        struct timespec until = deadline_in(max_wait_ms);
        waiting++;
        int timed_out = 0;
        while (!timed_out && used <= total && bytes > total - used)
            timed_out =
                pthread_cond_timedwait(&room, &lock, &until) == ETIMEDOUT;
        waiting--;
        if (used <= total && bytes <= total - used)
            used += bytes;
        else
            rc = API_BUDGET_BUSY;
    }
    if (rc == API_BUDGET_BUSY && may_wait >= 0)
        refusals++;
    if (used > peak)
        peak = used;
    pthread_mutex_unlock(&lock);
    return rc;
}

void api_budget_force(uint64_t bytes) {
    pthread_mutex_lock(&lock);
    used += bytes;
    if (used > peak)
        peak = used;
    pthread_mutex_unlock(&lock);
}

void api_budget_give(uint64_t bytes) {
    if (bytes == 0)
        return;
    pthread_mutex_lock(&lock);
    used = bytes < used ? used - bytes : 0;
    pthread_cond_broadcast(&room);
    pthread_mutex_unlock(&lock);
}

void api_budget_stats(api_budget_usage *u) {
    pthread_mutex_lock(&lock);
    u->total = total;
    u->used = used;
    u->peak = peak;
    u->waiting = waiting;
    u->refusals = refusals;
    pthread_mutex_unlock(&lock);
}

void api_bytes_text(char *buf, size_t cap, uint64_t bytes) {
    if (bytes < ((uint64_t)1 << 20))
        snprintf(buf, cap, "%.0f KiB", (double)bytes / 1024.0);
    else if (bytes < ((uint64_t)1 << 30))
        snprintf(buf, cap, "%.1f MiB", (double)bytes / 1048576.0);
    else
        snprintf(buf, cap, "%.1f GiB", (double)bytes / 1073741824.0);
}

void api_budget_refusal(char *buf, size_t cap, int verdict, const char *what,
                        uint64_t bytes) {
    api_budget_usage u;
    api_budget_stats(&u);
    char need[32], whole[32], taken[32];
    api_bytes_text(need, sizeof need, bytes);
    api_bytes_text(whole, sizeof whole, u.total);
    api_bytes_text(taken, sizeof taken, u.used);
    if (verdict == API_BUDGET_NEVER)
        snprintf(buf, cap,
                 "%s would take %s of memory, more than the server's whole "
                 "memory budget of %s (--memory-budget): ask for smaller "
                 "tensors, or ask the operator for a larger budget",
                 what, need, whole);
    else
        snprintf(buf, cap,
                 "%s needs %s of memory, and %s of the server's memory "
                 "budget of %s (--memory-budget) is taken by the requests "
                 "in progress, this one's earlier parts included; retry "
                 "after 1 s",
                 what, need, taken, whole);
}

int api_ledger_reserve(api_ledger *ledger, uint64_t bytes, const char *what,
                       api_problem *p) {
    if (ledger == NULL || bytes == 0)
        return 0;
    int rc = api_budget_take(bytes, ledger->may_wait);
    if (rc == API_BUDGET_OK) {
        ledger->held += bytes;
        return 0;
    }
    if (rc == API_BUDGET_BUSY && ledger->may_wait < 0)
        ledger->deferred = 1;
    char detail[512];
    api_budget_refusal(detail, sizeof detail, rc, what, bytes);
    return api_fail(
        p, rc == API_BUDGET_NEVER ? API_E_PAYLOAD_TOO_LARGE : API_E_NO_ROOM,
        NULL, "%s", detail);
}

uint64_t api_ledger_settle(api_ledger *ledger, uint64_t keep) {
    if (ledger == NULL)
        return 0;
    if (keep <= ledger->held)
        api_budget_give(ledger->held - keep);
    else
        api_budget_force(keep - ledger->held);
    ledger->held = 0;
    return keep;
}

void api_budget_share_refusal(char *buf, size_t cap, uint64_t held,
                              uint64_t share) {
    api_budget_usage u;
    api_budget_stats(&u);
    char h[32], s[32], whole[32];
    api_bytes_text(h, sizeof h, held);
    api_bytes_text(s, sizeof s, share);
    api_bytes_text(whole, sizeof whole, u.total);
    snprintf(buf, cap,
             "your connections hold %s of the server's memory budget of %s "
             "in answers not yet sent and bodies not yet received, beyond "
             "one client's share of %s while more than half of the budget "
             "is taken: read those answers (or finish those bodies), then "
             "retry",
             h, whole, s);
}

int api_ledger_admit_tree(api_ledger *tree, uint64_t bytes, size_t max,
                          const char *whose, const char *limit_note,
                          const char *what, api_problem *p) {
    api_ledger_settle(tree, 0); /* a second text replaces the first */
    if (max > 0 && bytes > max)
        return api_fail(p, API_E_PAYLOAD_TOO_LARGE, NULL,
                        "%s JSON would take about %llu MiB of memory as a "
                        "tree of values, over the limit of %zu MiB%s: it "
                        "holds too many values outside arrays of numbers; "
                        "send each tensor as (nested) arrays of numbers or as "
                        "{\"shape\", \"data\"}",
                        whose, (unsigned long long)(bytes >> 20), max >> 20,
                        limit_note);
    return api_ledger_reserve(tree, bytes, what, p);
}
