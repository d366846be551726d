/*
 * conn_watch.c — header and body deadlines (see conn_watch.h). One list of
 * the open connections under one lock, walked by one thread every
 * WATCH_PERIOD_MS; the handlers only store into their record's atomics.
 */
#include "conn_watch.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "client_addr.h"

#define WATCH_PERIOD_MS 250
/* How often a computing connection is looked at for its client's hang-up:
 * a job whose client left stops within this (and its next deadline check
 * in lib/), so that 100 abandoned jobs cost well under a CPU-second. */
#define HANGUP_POLL_MS 10
/* Bytes a client may send behind a request still computing (pipelined
 * requests) before it counts as gone: past about this much the receive
 * window closes, so a close or reset can no longer reach the server and
 * a departed client would look present until its job ends. */
#define PIPELINED_MAX (16 * 1024)
/* Seconds an answer may take to be read, at the least rate that empties
 * the memory it holds in that time: a 40 MB answer must go at 136 KB/s,
 * a lab's few kilobytes at the minimum rate. */
#define ANSWER_HOLD_MAX_S 300
/* A connection waiting on its client for less than this is not let go
 * when connections run short: a head on its way arrives within a round
 * trip; an attacker who renews its connections faster pays a connect
 * for each. */
#define SPARE_MS 250
/* A gentle close (srv_conn_watch_linger): how long, how many at once, and
 * how much is read and dropped from one socket each period. */
#define LINGER_MS 2000
#define LINGER_MAX 64
#define LINGER_READ (256 * 1024)

enum { AWAIT_HEAD, AWAIT_BODY, BUSY, SENDING, CUT };

struct srv_watched {
    srv_watched *prev, *next;
    int fd;
    _Atomic int state;           /* AWAIT_HEAD, AWAIT_BODY, BUSY, CUT */
    _Atomic int64_t since_ms;    /* start of the current state */
    _Atomic int64_t deadline_ms; /* AWAIT_HEAD: the head's deadline */
    _Atomic uint64_t body_bytes; /* AWAIT_BODY: received so far */
    _Atomic uint64_t sent_bytes; /* SENDING: handed to the socket so far */
    _Atomic uint64_t held;       /* SENDING: bytes its answer holds */
    _Atomic int64_t window_ms;   /* SENDING: start of the window judged, or
                                    0 for a new answer */
    uint64_t window_bytes;       /* the watcher's: taken when it started */
    _Atomic int answered;        /* 408 once the watcher wrote it, until
                                    srv_conn_watch_answered takes it */
    int computing;               /* under the lock: look for a hang-up */
    srv_addr client;             /* its peer (an IPv6 peer's /64) */
    _Atomic int authenticated;   /* it carried a valid token */
    _Atomic unsigned served;     /* requests completed on it */
    atomic_int gone;             /* the client hung up while computing */
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
    uint64_t min_response_rate;
    char *reply; /* the 408, whole, or NULL: close without one */
    size_t reply_len;
    _Atomic unsigned long cut_heads, cut_bodies, cut_readers, hangups, let_go;
    unsigned computing;        /* records with computing set */
    int linger_fd[LINGER_MAX]; /* duplicates closing gently, or -1 */
    int64_t linger_until[LINGER_MAX];
    unsigned open;     /* records: the connections open */
    unsigned crowded;  /* more open than this: some are let go */
    unsigned relieved; /* ... down to this many */
    char *reply_503;   /* the answer to a body let go, or NULL */
    size_t reply_503_len;
    char *reply_share; /* to a connection over its address's share */
    size_t reply_share_len;
    struct pollfd *pfd; /* their sockets, gathered for one poll */
    size_t pfd_cap;
};

static int64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A whole response that closes its connection: status line, headers and
 * a problem+json body of status with detail (and Retry-After: 1 for a
 * 503). */
static char *make_reply(size_t *len, int status, const char *detail) {
    api_response res;
    memset(&res, 0, sizeof res);
    api_refuse(&res, NULL, status, "%s", detail);
    if (res.body == NULL)
        return NULL;
    size_t cap = res.body_len + 320;
    char *text = malloc(cap);
    if (text != NULL) {
        int n = snprintf(text, cap,
                         "HTTP/1.1 %s\r\n"
                         "Content-Type: %s\r\n"
                         "Content-Length: %zu\r\n"
                         "Connection: close\r\n%s"
                         "Access-Control-Allow-Origin: *\r\n"
                         "X-Content-Type-Options: nosniff\r\n"
                         "Cache-Control: no-store\r\n\r\n",
                         status == 503 ? "503 Service Unavailable"
                                       : "408 Request Timeout",
                         res.content_type, res.body_len,
                         status == 503 ? "Retry-After: 1\r\n" : "");
        memcpy(text + n, res.body, res.body_len);
        *len = (size_t)n + res.body_len;
    }
    api_response_free(&res);
    return text;
}

/* Bytes of an answer the client has taken: those handed to the socket
 * less those still in its send queue (TIOCOUTQ: not yet acknowledged), so
 * that a kernel buffer of megabytes does not make a slow reader look
 * fast. */
static uint64_t delivered(const srv_watched *c) {
    uint64_t sent = atomic_load(&c->sent_bytes);
    int queued = 0;
    if (ioctl(c->fd, TIOCOUTQ, &queued) != 0 || queued < 0)
        queued = 0;
    return sent > (uint64_t)queued ? sent - (uint64_t)queued : 0;
}

/* A reader too slow: in each window of header_ms since its answer was
 * ready, it must take min_response_rate on average. Windows, not the
 * average since the start, so that what the client's socket buffers took
 * at once (megabytes, unread) is credit for one window only. */
static int reader_overdue(const srv_conn_watch *w, srv_watched *c,
                          int64_t now) {
    int64_t start = atomic_load(&c->window_ms);
    if (start == 0) { /* a new answer (srv_conn_watch_sending) */
        start = atomic_load(&c->since_ms);
        atomic_store(&c->window_ms, start);
        c->window_bytes = 0;
    }
    int64_t elapsed = now - start;
    if (w->min_response_rate == 0 || elapsed < w->header_ms)
        return 0;
    uint64_t rate = w->min_response_rate;
    uint64_t emptying = atomic_load(&c->held) / ANSWER_HOLD_MAX_S;
    if (emptying > rate)
        rate = emptying;
    uint64_t taken = delivered(c);
    uint64_t in_window = taken > c->window_bytes ? taken - c->window_bytes : 0;
    if (in_window * 1000 < rate * (uint64_t)elapsed)
        return 1;
    atomic_store(&c->window_ms, now);
    c->window_bytes = taken;
    return 0;
}

/* Past its deadline: the head not complete in time, the body below the
 * rate once the header timeout has passed, or the answer taken too
 * slowly. */
static int overdue(const srv_conn_watch *w, srv_watched *c, int64_t now,
                   int *body) {
    int state = atomic_load(&c->state);
    *body = state == AWAIT_BODY;
    if (state == AWAIT_HEAD)
        return now > atomic_load(&c->deadline_ms);
    if (state == SENDING)
        return reader_overdue(w, c, now);
    if (state != AWAIT_BODY || w->min_rate == 0)
        return 0;
    int64_t elapsed = now - atomic_load(&c->since_ms);
    if (elapsed <= w->header_ms)
        return 0;
    return atomic_load(&c->body_bytes) * 1000 < w->min_rate * (uint64_t)elapsed;
}

/* 1 when the peer of fd has closed, reset or shut down its side: the
 * events a poll that asks for none but POLLRDHUP reports. */
static int hung_up(short revents) {
    return (revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

/* Poll the sockets of computing connections for HANGUP_POLL_MS, the lock
 * released meanwhile (records may come and go: a result is matched to
 * its record again by fd, and checked once more without waiting), and
 * mark those whose client has gone. Returns 0, or -1 when there was
 * nothing to poll. Called and returns with the lock held. */
static int poll_hangups(srv_conn_watch *w) {
    if (w->computing == 0)
        return -1;
    if (w->pfd_cap < w->computing) {
        struct pollfd *p = realloc(w->pfd, w->computing * sizeof *p);
        if (p == NULL)
            return -1;
        w->pfd = p;
        w->pfd_cap = w->computing;
    }
    nfds_t n = 0;
    for (srv_watched *c = w->head; c != NULL && n < w->pfd_cap; c = c->next)
        if (c->computing && !atomic_load(&c->gone))
            w->pfd[n++] = (struct pollfd){c->fd, POLLRDHUP, 0};
    if (n == 0)
        return -1;
    struct pollfd *pfd = w->pfd;
    pthread_mutex_unlock(&w->lock);
    int ready = poll(pfd, n, HANGUP_POLL_MS);
    pthread_mutex_lock(&w->lock);
    if (ready <= 0)
        return 0;
    for (nfds_t i = 0; i < n; i++) {
        if (!hung_up(pfd[i].revents))
            continue;
        for (srv_watched *c = w->head; c != NULL; c = c->next)
            if (c->fd == pfd[i].fd && c->computing && srv_conn_watch_gone(c)) {
                atomic_fetch_add(&w->hangups, 1);
                break;
            }
    }
    return 0;
}

/* Cut the connections past their head or body deadline, and give up on
 * computing connections that pile up more than PIPELINED_MAX unread
 * bytes. */
static void cut_overdue(srv_conn_watch *w) {
    int64_t now = now_ms();
    for (srv_watched *c = w->head; c != NULL && !w->stop; c = c->next) {
        if (c->computing && !atomic_load(&c->gone) && srv_conn_watch_gone(c))
            atomic_fetch_add(&w->hangups, 1);
        int body;
        int judged = atomic_load(&c->state);
        if (!overdue(w, c, now, &body))
            continue;
        if (judged == SENDING) {
            /* a reader too slow: no 408 can be written in the middle of
             * an answer; the connection is closed, which gives its
             * memory back */
            int seen = SENDING;
            if (atomic_compare_exchange_strong(&c->state, &seen, CUT)) {
                /* reset, not a close behind megabytes still queued for
                 * it: the kernel would go on sending them, at its pace,
                 * and hold them meanwhile */
                struct linger reset = {1, 0};
                setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
                shutdown(c->fd, SHUT_RDWR);
                atomic_fetch_add(&w->cut_readers, 1);
            }
            continue;
        }
        /* only from the state judged: the HTTP thread may have moved
         * on (and be writing) since */
        int seen = body ? AWAIT_BODY : AWAIT_HEAD;
        if (!atomic_compare_exchange_strong(&c->state, &seen, CUT))
            continue;
        if (w->reply != NULL && send(c->fd, w->reply, w->reply_len,
                                     MSG_DONTWAIT | MSG_NOSIGNAL) > 0)
            atomic_store(&c->answered, 408);
        /* libmicrohttpd sees the end of the stream and closes it */
        shutdown(c->fd, SHUT_RDWR);
        atomic_fetch_add(body ? &w->cut_bodies : &w->cut_heads, 1);
    }
}

/* A connection that could be let go when connections run short. */
typedef struct {
    srv_watched *c;
    int state;      /* AWAIT_HEAD or AWAIT_BODY, as judged */
    unsigned peers; /* such connections its address holds */
} spare;

static int by_address(const void *a, const void *b) {
    return memcmp(&((const spare *)a)->c->client,
                  &((const spare *)b)->c->client, sizeof(srv_addr));
}

/* The first to go: tokenless before authenticated, then connections that
 * never had a request answered before those that did (a student's idle
 * kept-alive connection has served it; one opened to hold a slot has
 * not), then the address that holds the most waiting connections, then
 * the longest waiting. */
static int by_turn(const void *a, const void *b) {
    const spare *x = a, *y = b;
    int ax = atomic_load(&x->c->authenticated),
        ay = atomic_load(&y->c->authenticated);
    if (ax != ay)
        return ax - ay;
    int served_x = atomic_load(&x->c->served) > 0,
        served_y = atomic_load(&y->c->served) > 0;
    if (served_x != served_y)
        return served_x - served_y;
    if (x->peers != y->peers)
        return x->peers > y->peers ? -1 : 1;
    int64_t sx = atomic_load(&x->c->since_ms),
            sy = atomic_load(&y->c->since_ms);
    return sx < sy ? -1 : sx > sy;
}

/* When more than `crowded` connections are open, let go of connections
 * that wait on their client (a head or a body on its way, or an idle
 * kept-alive connection), down to `relieved`, in by_turn's order: an
 * attacker who opens many slow connections from a few addresses loses
 * them first, and a class's browsers can still connect. A connection
 * waiting for less than SPARE_MS is spared, so that a head in flight is
 * not cut on its way. */
static void relieve(srv_conn_watch *w, int64_t now) {
    if (w->open <= w->crowded)
        return;
    spare *all = malloc(w->open * sizeof *all);
    if (all == NULL)
        return;
    size_t n = 0;
    for (srv_watched *c = w->head; c != NULL && n < w->open; c = c->next) {
        int state = atomic_load(&c->state);
        if ((state == AWAIT_HEAD || state == AWAIT_BODY) &&
            now - atomic_load(&c->since_ms) >= SPARE_MS)
            all[n++] = (spare){c, state, 0};
    }
    qsort(all, n, sizeof *all, by_address);
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i; j < n && by_address(&all[i], &all[j]) == 0; j++)
            ;
        for (size_t k = i; k < j; k++)
            all[k].peers = (unsigned)(j - i);
    }
    qsort(all, n, sizeof *all, by_turn);
    size_t go = w->open - w->relieved;
    for (size_t i = 0; i < n && go > 0; i++) {
        srv_watched *c = all[i].c;
        int seen = all[i].state;
        if (!atomic_compare_exchange_strong(&c->state, &seen, CUT))
            continue;
        /* a request on its way is answered; an idle connection, which
         * has none, is closed as an idle timeout closes it */
        if (seen == AWAIT_BODY && w->reply_503 != NULL &&
            send(c->fd, w->reply_503, w->reply_503_len,
                 MSG_DONTWAIT | MSG_NOSIGNAL) > 0)
            atomic_store(&c->answered, 503);
        shutdown(c->fd, SHUT_RDWR);
        atomic_fetch_add(&w->let_go, 1);
        go--;
    }
    free(all);
}

/* Read and drop what lingering sockets were sent; close those whose
 * client has ended its stream, or whose time is up. */
static void drain_lingering(srv_conn_watch *w, int64_t now) {
    static char sink[64 * 1024]; /* the watcher's thread alone */
    for (int i = 0; i < LINGER_MAX; i++) {
        int fd = w->linger_fd[i];
        if (fd < 0)
            continue;
        size_t taken = 0;
        ssize_t n = 1;
        while (taken < LINGER_READ &&
               (n = recv(fd, sink, sizeof sink, MSG_DONTWAIT)) > 0)
            taken += (size_t)n;
        int ended = n == 0 || (n < 0 && errno != EAGAIN &&
                               errno != EWOULDBLOCK && errno != EINTR);
        if (ended || now >= w->linger_until[i]) {
            close(fd);
            w->linger_fd[i] = -1;
        }
    }
}

void srv_conn_watch_linger(srv_conn_watch *w, int fd) {
    pthread_mutex_lock(&w->lock);
    for (int i = 0; i < LINGER_MAX; i++) {
        if (w->linger_fd[i] >= 0)
            continue;
        int copy = dup(fd);
        if (copy >= 0) {
            shutdown(copy, SHUT_WR); /* the answer is all: FIN after it */
            w->linger_fd[i] = copy;
            w->linger_until[i] = now_ms() + LINGER_MS;
        }
        break;
    }
    pthread_mutex_unlock(&w->lock);
}

static void *watch(void *arg) {
    srv_conn_watch *w = arg;
    pthread_mutex_lock(&w->lock);
    int64_t last_cut = now_ms();
    while (!w->stop) {
        /* while jobs compute, their sockets are polled; else a nap */
        if (poll_hangups(w) != 0) {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += WATCH_PERIOD_MS * 1000000L;
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            pthread_cond_timedwait(&w->wake, &w->lock, &until);
        }
        if (now_ms() - last_cut >= WATCH_PERIOD_MS) {
            last_cut = now_ms();
            cut_overdue(w);
            relieve(w, last_cut);
            drain_lingering(w, last_cut);
        }
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

srv_conn_watch *srv_conn_watch_start(unsigned connections,
                                     unsigned header_timeout_s,
                                     unsigned idle_timeout_s,
                                     size_t min_body_rate,
                                     size_t min_response_rate, int write_408) {
    srv_conn_watch *w = calloc(1, sizeof *w);
    if (w == NULL)
        return NULL;
    w->header_ms = (int64_t)header_timeout_s * 1000;
    w->idle_ms = (int64_t)idle_timeout_s * 1000;
    w->min_rate = min_body_rate;
    w->min_response_rate = min_response_rate;
    if (write_408) {
        w->reply = make_reply(&w->reply_len, 408,
                              "the request was not sent in time: its headers "
                              "must arrive within --header-timeout and its "
                              "body at --min-body-rate at least");
        w->reply_503 = make_reply(
            &w->reply_503_len, 503,
            "the server's connections are nearly all taken, and this one "
            "was waiting for the rest of its request from an address that "
            "holds more such connections than any other: it was let go so "
            "that others can connect; retry after 1 s");
        w->reply_share = make_reply(
            &w->reply_share_len, 503,
            "your address already holds all the connections one address may "
            "hold (--max-connections-per-address); close one, or reuse the "
            "ones it has (keep-alive), and retry after 1 s");
    }
    for (int i = 0; i < LINGER_MAX; i++)
        w->linger_fd[i] = -1;
    w->crowded = connections - connections / 8;
    w->relieved = connections - connections / 4;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    if (pthread_create(&w->thread, NULL, watch, w) != 0) {
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->wake);
        free(w->reply);
        free(w->reply_503);
        free(w->reply_share);
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
    for (int i = 0; i < LINGER_MAX; i++)
        if (w->linger_fd[i] >= 0)
            close(w->linger_fd[i]);
    pthread_mutex_destroy(&w->lock);
    pthread_cond_destroy(&w->wake);
    free(w->reply);
    free(w->reply_503);
    free(w->reply_share);
    free(w->pfd);
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
    atomic_init(&c->sent_bytes, 0);
    atomic_init(&c->window_ms, 0);
    atomic_init(&c->held, 0);
    atomic_init(&c->answered, 0);
    atomic_init(&c->gone, 0);
    c->next_head_ms = w->idle_ms + w->header_ms;
    struct sockaddr_storage peer;
    socklen_t peer_len = sizeof peer;
    if (getpeername(fd, (struct sockaddr *)&peer, &peer_len) != 0 ||
        srv_addr_from_sockaddr(&c->client, (struct sockaddr *)&peer) != 0)
        memset(&c->client, 0, sizeof c->client);
    else if (!srv_addr_is_v4(&c->client))
        memset(c->client.b + 8, 0, 8); /* one host's /64 */
    atomic_init(&c->authenticated, 0);
    atomic_init(&c->served, 0);
    pthread_mutex_lock(&w->lock);
    w->open++;
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
    if (c->computing)
        w->computing--;
    w->open--;
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

void srv_conn_watch_sending(srv_watched *c, uint64_t held) {
    if (c == NULL)
        return;
    atomic_store(&c->held, held);
    atomic_store(&c->since_ms, now_ms());
    atomic_store(&c->sent_bytes, 0);
    atomic_store(&c->window_ms, 0);
    enter(c, SENDING);
}

int srv_conn_watch_sent(srv_watched *c, size_t n) {
    if (c == NULL)
        return 0;
    atomic_fetch_add(&c->sent_bytes, n);
    return atomic_load(&c->state) == CUT ? -1 : 0;
}

void srv_conn_watch_idle(srv_watched *c) {
    if (c == NULL)
        return;
    atomic_fetch_add(&c->served, 1);
    int64_t now = now_ms();
    atomic_store(&c->since_ms, now);
    atomic_store(&c->deadline_ms, now + c->next_head_ms);
    enter(c, AWAIT_HEAD);
}

int srv_conn_watch_answered(srv_watched *c) {
    return c != NULL ? atomic_exchange(&c->answered, 0) : 0;
}

const atomic_int *srv_conn_watch_computing(srv_conn_watch *w, srv_watched *c) {
    if (c == NULL)
        return NULL;
    pthread_mutex_lock(&w->lock);
    if (!c->computing) {
        c->computing = 1;
        w->computing++;
        pthread_cond_signal(&w->wake); /* from its nap to polling */
    }
    pthread_mutex_unlock(&w->lock);
    return &c->gone;
}

void srv_conn_watch_computed(srv_conn_watch *w, srv_watched *c) {
    if (c == NULL)
        return;
    pthread_mutex_lock(&w->lock);
    if (c->computing) {
        c->computing = 0;
        w->computing--;
    }
    pthread_mutex_unlock(&w->lock);
}

void srv_conn_watch_refuse(srv_conn_watch *w, srv_watched *c) {
    if (c == NULL)
        return;
    int seen = AWAIT_HEAD;
    if (!atomic_compare_exchange_strong(&c->state, &seen, CUT))
        return;
    if (w->reply_share != NULL &&
        send(c->fd, w->reply_share, w->reply_share_len,
             MSG_DONTWAIT | MSG_NOSIGNAL) > 0)
        atomic_store(&c->answered, 503);
    shutdown(c->fd, SHUT_RDWR);
}

void srv_conn_watch_authenticated(srv_watched *c) {
    if (c != NULL)
        atomic_store(&c->authenticated, 1);
}

int srv_conn_watch_gone(srv_watched *c) {
    if (c == NULL)
        return 0;
    if (atomic_load(&c->gone))
        return 1;
    struct pollfd p = {c->fd, POLLRDHUP, 0};
    int unread;
    if ((poll(&p, 1, 0) == 1 && hung_up(p.revents)) ||
        (ioctl(c->fd, FIONREAD, &unread) == 0 && unread > PIPELINED_MAX)) {
        atomic_store(&c->gone, 1);
        return 1;
    }
    return 0;
}

void srv_conn_watch_counts(srv_conn_watch *w, unsigned long *heads,
                           unsigned long *bodies, unsigned long *readers,
                           unsigned long *hangups, unsigned long *let_go) {
    *let_go = atomic_load(&w->let_go);
    *heads = atomic_load(&w->cut_heads);
    *bodies = atomic_load(&w->cut_bodies);
    *readers = atomic_load(&w->cut_readers);
    *hangups = atomic_load(&w->hangups);
}
