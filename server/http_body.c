/*
 * http_body.c — a request's body as it arrives (http_internal.h): held in
 * a buffer that grows by mapping, charged to the memory budget as it
 * arrives and to its address's share, and refused with 413 past
 * --max-body-bytes.
 */
#include "http.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "conn_watch.h"
#include "http_internal.h"

/* A body from BODY_MAP_MIN bytes gets pages of its own, so that freeing it once
 * it is parsed gives the memory back at once instead of leaving a hole in the
 * heap, which keeps freed memory (main.c) and could not fit the larger buffers
 * that follow: a large request's peak memory is then its tensors, not its text
 * plus its tensors. */
#define BODY_MAP_MIN ((size_t)1 << 20)

/* Past its first HUGE_PAGE bytes, such a body goes on in huge pages
 * (transparent huge pages, where the kernel offers them on request),
 * aligned to their size: fresh pages must be faulted in and zeroed, and a
 * 7.7 MB body then takes 4 faults instead of 1,900 (6 ms on a virtual
 * machine measured here, against 1.5 ms). Its first HUGE_PAGE bytes stay
 * in small pages, so that a body is charged as its bytes arrive, at
 * SMALL_PAGE grain (two bytes of a body reserve a page, not 2 MiB); from
 * HUGE_PAGE bytes on, each huge page is charged whole once its first byte
 * arrives, which is at most as much again as the sender has sent. */
#define HUGE_PAGE ((size_t)2 << 20)
#define SMALL_PAGE ((size_t)4 << 10)

/* Bytes mapped for a body of len bytes. */
static size_t body_map_len(size_t len) {
    return (len + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
}

/* Bytes of the memory budget a body holds once `received` bytes are in
 * (mapped: whether it lies in pages of its own; cap: its heap buffer). */
static size_t body_charge(size_t received, int mapped, size_t cap) {
    size_t small = (received + SMALL_PAGE - 1) / SMALL_PAGE * SMALL_PAGE;
    if (!mapped)
        return small < cap ? small : cap;
    return received <= HUGE_PAGE ? small : body_map_len(received);
}

/* body_map_len(len) bytes at a HUGE_PAGE boundary, or MAP_FAILED; huge
 * pages past the first HUGE_PAGE bytes. */
static void *body_map(size_t len) {
    size_t n = body_map_len(len);
    char *p = mmap(NULL, n + HUGE_PAGE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return MAP_FAILED;
    size_t head = (HUGE_PAGE - (uintptr_t)p % HUGE_PAGE) % HUGE_PAGE;
    if (head)
        munmap(p, head);
    munmap(p + head + n, HUGE_PAGE - head);
    /* advice: without it, small pages; the first stay small whatever the
     * system's default (body_charge) */
    madvise(p + head, HUGE_PAGE, MADV_NOHUGEPAGE);
    if (n > HUGE_PAGE)
        madvise(p + head + HUGE_PAGE, n - HUGE_PAGE, MADV_HUGEPAGE);
    return p + head;
}

char *srv_http_body_alloc(srv_request *r, size_t len) {
    if (len >= BODY_MAP_MIN) {
        void *p = body_map(len);
        r->body_mapped = p != MAP_FAILED;
        return p == MAP_FAILED ? NULL : p;
    }
    r->body_mapped = 0;
    return malloc(len);
}

/* A chunked body's buffer, grown to cap bytes (contents kept): on the
 * heap while small, in pages of its own from BODY_MAP_MIN on, like a body
 * of a declared length. NULL when memory runs out (the old one stays). */
static char *body_grow(srv_request *r, size_t cap) {
    if (cap < BODY_MAP_MIN)
        return realloc(r->body, cap);
    void *p;
    if (r->body_mapped) {
        /* one mapping while its first HUGE_PAGE bytes are all it has
         * (body_map), which then grows in small pages; else moved */
        p = mremap(r->body, body_map_len(r->body_cap), body_map_len(cap),
                   MREMAP_MAYMOVE);
        if (p == MAP_FAILED && (p = body_map(cap)) != MAP_FAILED) {
            memcpy(p, r->body, r->body_len);
            munmap(r->body, body_map_len(r->body_cap));
        }
    } else {
        p = body_map(cap);
        if (p != MAP_FAILED) {
            if (r->body_len)
                memcpy(p, r->body, r->body_len);
            free(r->body);
            r->body_mapped = 1;
        }
    }
    return p == MAP_FAILED ? NULL : p;
}

void srv_http_address_holds(srv_request *r, int64_t delta) {
    if (r->has_peer)
        srv_conn_slots_add_bytes(r->srv->slots,
                                 (const struct sockaddr *)&r->peer, delta);
}

void srv_http_body_free(srv_request *r) {
    api_budget_give(r->body_charged);
    srv_http_address_holds(r, -(int64_t)r->body_charged);
    r->body_charged = 0;
    if (r->body_mapped)
        munmap(r->body, body_map_len(r->body_cap));
    else
        free(r->body);
    r->body = NULL;
    r->body_len = r->body_cap = 0;
    r->body_mapped = 0;
}

enum MHD_Result srv_http_answer_too_large(srv_request *r,
                                          struct MHD_Connection *conn,
                                          const char *url) {
    api_request req;
    api_response res;
    srv_http_fill_api_request(&req, r, conn, url);
    req.body = NULL;
    req.body_len = 0;
    memset(&res, 0, sizeof res);
    long long seen = r->body_seen > (unsigned long long)INT64_MAX
                         ? INT64_MAX
                         : (long long)r->body_seen;
    if (api_precheck(&req, seen, &res) == 0)
        return srv_http_answer_problem(r, conn, MHD_HTTP_CONTENT_TOO_LARGE,
                                       "the request body is larger than "
                                       "--max-body-bytes",
                                       1);
    enum MHD_Result rc = srv_http_answer(r, conn, &res, 1);
    api_response_free(&res);
    return rc;
}

int srv_http_over_address_share(srv_request *r, uint64_t *held,
                                uint64_t *share) {
    api_budget_usage u;
    api_budget_stats(&u);
    if (u.total == 0 || !r->has_peer || u.used <= u.total / 2)
        return 0;
    *share = u.total / ADDRESS_SHARE_DIVISOR;
    uint64_t all =
        srv_conn_slots_bytes(r->srv->slots, (const struct sockaddr *)&r->peer);
    *held = all > r->body_charged ? all - r->body_charged : 0;
    return *held > *share;
}

enum MHD_Result srv_http_on_body(srv_request *r, const char *data, size_t n) {
    size_t limit = r->srv->limits.max_body_bytes;
    r->body_seen += n;
    if (srv_conn_watch_body(r->watched, n) != 0)
        return MHD_NO; /* cut for sending too slowly */
    if (r->overflow || r->budget_refusal) {
        return r->body_seen / DISCARD_FACTOR > limit ? MHD_NO : MHD_YES;
    }
    if (n > limit - r->body_len) {
        r->overflow = 1;
        srv_http_body_free(r);
        return MHD_YES;
    }
    size_t cap = r->body_cap;
    if (r->body_len + n > cap) {
        cap = cap ? cap : 64 * 1024;
        while (cap < r->body_len + n)
            cap = cap > limit / 2 ? limit : cap * 2;
    }
    /* reserved as it arrives (body_charge) */
    uint64_t held = body_charge(r->body_len + n,
                                r->body_mapped || cap >= BODY_MAP_MIN, cap);
    uint64_t share_held, share;
    if (held > r->body_charged &&
        srv_http_over_address_share(r, &share_held, &share)) {
        r->budget_refusal = BODY_OVER_SHARE; /* answered once it is read */
        r->share_held = share_held;
        srv_http_body_free(r);
        return MHD_YES;
    }
    if (held > r->body_charged) {
        int room = api_budget_take(held - r->body_charged, 0);
        if (room != API_BUDGET_OK) {
            r->budget_refusal = room; /* answered once it is read */
            srv_http_body_free(r);
            return MHD_YES;
        }
        srv_http_address_holds(r, (int64_t)(held - r->body_charged));
        r->body_charged = held;
    }
    if (r->body_len + n > r->body_cap) {
        char *grown = body_grow(r, cap);
        if (grown == NULL)
            return MHD_NO;
        r->body = grown;
        r->body_cap = cap;
    }
    memcpy(r->body + r->body_len, data, n);
    r->body_len += n;
    return MHD_YES;
}
