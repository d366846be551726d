/*
 * conn_slots.c — connection slots per client address (see conn_slots.h).
 * One list of the addresses holding connections, searched linearly: it
 * holds one entry per distinct address connected now (a class, or one
 * proxy), at most the server's connection limit, with the connections
 * and the budget's bytes it holds.
 */
#include "conn_slots.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    srv_addr addr;
    unsigned held;  /* connections */
    uint64_t bytes; /* of the memory budget */
} slot_entry;

struct srv_conn_slots {
    pthread_mutex_t lock;
    unsigned per_address;
    srv_netlist exempt;
    slot_entry *entries; /* n in use, cap allocated */
    size_t n, cap;
};

srv_conn_slots *srv_conn_slots_new(unsigned connections, unsigned per_address,
                                   const srv_netlist *exempt) {
    srv_conn_slots *s = calloc(1, sizeof *s);
    if (s == NULL)
        return NULL;
    s->cap = connections ? connections : 1;
    s->entries = calloc(s->cap, sizeof *s->entries);
    if (s->entries == NULL) {
        free(s);
        return NULL;
    }
    pthread_mutex_init(&s->lock, NULL);
    s->per_address = per_address;
    if (exempt != NULL)
        s->exempt = *exempt;
    return s;
}

void srv_conn_slots_free(srv_conn_slots *s) {
    if (s == NULL)
        return;
    pthread_mutex_destroy(&s->lock);
    free(s->entries);
    free(s);
}

/* The entry of a, or NULL. Called with the lock held. */
static slot_entry *find(srv_conn_slots *s, const srv_addr *a) {
    for (size_t i = 0; i < s->n; i++)
        if (!memcmp(&s->entries[i].addr, a, sizeof *a))
            return &s->entries[i];
    return NULL;
}

int srv_conn_slots_admit(srv_conn_slots *s, const struct sockaddr *sa,
                         unsigned extra) {
    srv_addr a;
    if (s->per_address == 0 || srv_addr_from_sockaddr(&a, sa) ||
        srv_netlist_contains(&s->exempt, &a))
        return 1;
    pthread_mutex_lock(&s->lock);
    const slot_entry *e = find(s, &a);
    int ok = e == NULL || e->held < s->per_address + extra;
    pthread_mutex_unlock(&s->lock);
    return ok;
}

int srv_conn_slots_over(srv_conn_slots *s, const struct sockaddr *sa) {
    srv_addr a;
    if (s->per_address == 0 || srv_addr_from_sockaddr(&a, sa) ||
        srv_netlist_contains(&s->exempt, &a))
        return 0;
    return srv_conn_slots_held(s, sa) > s->per_address;
}

void srv_conn_slots_opened(srv_conn_slots *s, const struct sockaddr *sa) {
    srv_addr a;
    if (srv_addr_from_sockaddr(&a, sa))
        return;
    pthread_mutex_lock(&s->lock);
    slot_entry *e = find(s, &a);
    if (e == NULL && s->n < s->cap) {
        e = &s->entries[s->n++];
        e->addr = a;
        e->held = 0;
        e->bytes = 0;
    }
    if (e != NULL)
        e->held++;
    pthread_mutex_unlock(&s->lock);
}

void srv_conn_slots_closed(srv_conn_slots *s, const struct sockaddr *sa) {
    srv_addr a;
    if (srv_addr_from_sockaddr(&a, sa))
        return;
    pthread_mutex_lock(&s->lock);
    slot_entry *e = find(s, &a);
    if (e != NULL && --e->held == 0)
        *e = s->entries[--s->n]; /* the last entry takes its place */
    pthread_mutex_unlock(&s->lock);
}

unsigned srv_conn_slots_held(srv_conn_slots *s, const struct sockaddr *sa) {
    srv_addr a;
    if (srv_addr_from_sockaddr(&a, sa))
        return 0;
    pthread_mutex_lock(&s->lock);
    const slot_entry *e = find(s, &a);
    unsigned held = e ? e->held : 0;
    pthread_mutex_unlock(&s->lock);
    return held;
}

void srv_conn_slots_add_bytes(srv_conn_slots *s, const struct sockaddr *sa,
                              int64_t delta) {
    srv_addr a;
    if (delta == 0 || srv_addr_from_sockaddr(&a, sa))
        return;
    pthread_mutex_lock(&s->lock);
    slot_entry *e = find(s, &a);
    if (e != NULL) {
        if (delta > 0)
            e->bytes += (uint64_t)delta;
        else
            e->bytes -=
                e->bytes < (uint64_t)-delta ? e->bytes : (uint64_t)-delta;
    }
    pthread_mutex_unlock(&s->lock);
}

uint64_t srv_conn_slots_bytes(srv_conn_slots *s, const struct sockaddr *sa) {
    srv_addr a;
    if (s->per_address == 0 || srv_addr_from_sockaddr(&a, sa) ||
        srv_netlist_contains(&s->exempt, &a))
        return 0;
    pthread_mutex_lock(&s->lock);
    const slot_entry *e = find(s, &a);
    uint64_t bytes = e ? e->bytes : 0;
    pthread_mutex_unlock(&s->lock);
    return bytes;
}
