/*
 * conn_watch.c — header and body deadlines (see conn_watch.h). One list of
 * the open connections under one lock, walked by one thread every
 * WATCH_PERIOD_MS; the handlers only store into their record's atomics.
 */
#include "conn_watch.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "api.h"
#include "problem.h"

#define WATCH_PERIOD_MS 250

enum { AWAIT_HEAD, AWAIT_BODY, BUSY, CUT };

struct srv_watched {
    srv_watched *prev, *next;
    int fd;
    _Atomic int state;           /* AWAIT_HEAD, AWAIT_BODY, BUSY, CUT */
    _Atomic int64_t since_ms;    /* start of the current state */
    _Atomic int64_t deadline_ms; /* AWAIT_HEAD: the head's deadline */
    _Atomic uint64_t body_bytes; /* AWAIT_BODY: received so far */
    _Atomic int answered;        /* 408 once the watcher wrote it, until
                                    srv_conn_watch_answered takes it */
    int64_t next_head_ms;        /* a kept-alive connection's time for its next
                                    head: the idle timeout and the header timeout */
};

struct srv_conn_watch {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    int stop;
    srv_watched *head;
    int64_t header_ms, idle_ms;
    uint64_t min_rate;
    char *reply; /* the 408, whole, or NULL: close without one */
    size_t reply_len;
    _Atomic unsigned long cut_heads, cut_bodies;
};

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The whole 408 response: status line, headers and problem+json body. */
static char *make_reply(size_t *len) {
    api_response res;
    memset(&res, 0, sizeof res);
    api_problem_respond_http(&res, 408,
                             "the request was not sent in time: its headers "
                             "must arrive within --header-timeout and its "
                             "body at --min-body-rate at least");
    if (res.body == NULL)
        return NULL;
    size_t cap = res.body_len + 256;
    char *text = malloc(cap);
    if (text != NULL) {
        int n = snprintf(text, cap,
                         "HTTP/1.1 408 Request Timeout\r\n"
                         "Content-Type: %s\r\n"
                         "Content-Length: %zu\r\n"
                         "Connection: close\r\n"
                         "Access-Control-Allow-Origin: *\r\n"
                         "X-Content-Type-Options: nosniff\r\n"
                         "Cache-Control: no-store\r\n\r\n",
                         res.content_type, res.body_len);
        memcpy(text + n, res.body, res.body_len);
        *len = (size_t)n + res.body_len;
    }
    api_response_free(&res);
    return text;
}

/* Past its deadline: the head not complete in time, or the body below the
 * rate once the header timeout has passed. */
static int overdue(const srv_conn_watch *w, srv_watched *c, int64_t now,
                   int *body) {
    int state = atomic_load(&c->state);
    *body = state == AWAIT_BODY;
    if (state == AWAIT_HEAD)
        return now > atomic_load(&c->deadline_ms);
    if (state != AWAIT_BODY || w->min_rate == 0)
        return 0;
    int64_t elapsed = now - atomic_load(&c->since_ms);
    if (elapsed <= w->header_ms)
        return 0;
    return atomic_load(&c->body_bytes) * 1000 < w->min_rate * (uint64_t)elapsed;
}

static void *watch(void *arg) {
    srv_conn_watch *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += WATCH_PERIOD_MS * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&w->wake, &w->lock, &until);
        int64_t now = now_ms();
        for (srv_watched *c = w->head; c != NULL && !w->stop; c = c->next) {
            int body;
            if (!overdue(w, c, now, &body))
                continue;
            /* only from the state judged: the HTTP thread may have moved
             * on (and be writing) since */
            int seen = body ? AWAIT_BODY : AWAIT_HEAD;
            if (!atomic_compare_exchange_strong(&c->state, &seen, CUT))
                continue;
            if (w->reply != NULL &&
                send(c->fd, w->reply, w->reply_len,
                     MSG_DONTWAIT | MSG_NOSIGNAL) > 0)
                atomic_store(&c->answered, 408);
            /* libmicrohttpd sees the end of the stream and closes it */
            shutdown(c->fd, SHUT_RDWR);
            atomic_fetch_add(body ? &w->cut_bodies : &w->cut_heads, 1);
        }
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

srv_conn_watch *srv_conn_watch_start(unsigned header_timeout_s,
                                     unsigned idle_timeout_s,
                                     size_t min_body_rate, int write_408) {
    srv_conn_watch *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    w->header_ms = (int64_t)header_timeout_s * 1000;
    w->idle_ms = (int64_t)idle_timeout_s * 1000;
    w->min_rate = min_body_rate;
    if (write_408)
        w->reply = make_reply(&w->reply_len);
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    if (pthread_create(&w->thread, NULL, watch, w) != 0) {
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->wake);
        free(w->reply);
        free(w);
        return NULL;
    }
    return w;
}

void srv_conn_watch_stop(srv_conn_watch *w) {
    if (w == NULL)
        return;
    pthread_mutex_lock(&w->lock);
    w->stop = 1;
    pthread_cond_signal(&w->wake);
    pthread_mutex_unlock(&w->lock);
    pthread_join(w->thread, NULL);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->wake);
    free(w->reply);
    free(w);
}

srv_watched *srv_conn_watch_open(srv_conn_watch *w, int fd) {
    srv_watched *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->fd = fd;
    int64_t now = now_ms();
    atomic_init(&c->state, AWAIT_HEAD);
    atomic_init(&c->since_ms, now);
    atomic_init(&c->deadline_ms, now + w->header_ms);
    atomic_init(&c->body_bytes, 0);
    atomic_init(&c->answered, 0);
    c->next_head_ms = w->idle_ms + w->header_ms;
    pthread_mutex_lock(&w->lock);
    c->next = w->head;
    if (w->head != NULL)
        w->head->prev = c;
    w->head = c;
    pthread_mutex_unlock(&w->lock);
    return c;
}

void srv_conn_watch_close(srv_conn_watch *w, srv_watched *c) {
    if (c == NULL)
        return;
    pthread_mutex_lock(&w->lock);
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        w->head = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    pthread_mutex_unlock(&w->lock);
    free(c);
}

/* Move c to state unless the watcher has cut it. Returns 0, or -1 when it
 * has (the connection is closing: nothing more may be written). */
static int enter(srv_watched *c, int state) {
    int seen = atomic_load(&c->state);
    while (seen != CUT &&
           !atomic_compare_exchange_weak(&c->state, &seen, state))
        ;
    return seen == CUT ? -1 : 0;
}

int srv_conn_watch_head_done(srv_watched *c, int has_body) {
    if (c == NULL)
        return 0;
    atomic_store(&c->since_ms, now_ms());
    atomic_store(&c->body_bytes, 0);
    return enter(c, has_body ? AWAIT_BODY : BUSY);
}

int srv_conn_watch_body(srv_watched *c, size_t n) {
    if (c == NULL)
        return 0;
    atomic_fetch_add(&c->body_bytes, n);
    return atomic_load(&c->state) == CUT ? -1 : 0;
}

int srv_conn_watch_busy(srv_watched *c) {
    return c != NULL ? enter(c, BUSY) : 0;
}

void srv_conn_watch_idle(srv_watched *c) {
    if (c == NULL)
        return;
    int64_t now = now_ms();
    atomic_store(&c->since_ms, now);
    atomic_store(&c->deadline_ms, now + c->next_head_ms);
    enter(c, AWAIT_HEAD);
}

int srv_conn_watch_answered(srv_watched *c) {
    return c != NULL ? atomic_exchange(&c->answered, 0) : 0;
}

void srv_conn_watch_counts(srv_conn_watch *w, unsigned long *heads,
                           unsigned long *bodies) {
    *heads = atomic_load(&w->cut_heads);
    *bodies = atomic_load(&w->cut_bodies);
}
