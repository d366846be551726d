/*
 * client_addr.c — client addresses, trusted-proxy networks and the
 * X-Forwarded-For walk (see client_addr.h).
 */
#include "client_addr.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ADDR_TEXT_MAX 64 /* longest entry read: bracketed IPv6 with a port */

static const uint8_t v4_mapped_prefix[12] = {0, 0, 0, 0, 0,    0,
                                             0, 0, 0, 0, 0xff, 0xff};

static void set_v4(srv_addr *out, const struct in_addr *v4) {
    memcpy(out->b, v4_mapped_prefix, 12);
    memcpy(out->b + 12, &v4->s_addr, 4);
}

static int is_blank(char c) {
    return c == ' ' || c == '\t';
}

int srv_addr_parse(srv_addr *out, const char *s, size_t n) {
    while (n > 0 && is_blank(*s))
        s++, n--;
    while (n > 0 && is_blank(s[n - 1]))
        n--;
    if (n == 0 || n >= ADDR_TEXT_MAX)
        return -1;
    char text[ADDR_TEXT_MAX];
    memcpy(text, s, n);
    text[n] = '\0';
    char *start = text;
    if (*start == '[') { /* [v6] or [v6]:port */
        char *close = strchr(start, ']');
        if (close == NULL || (close[1] != '\0' && close[1] != ':'))
            return -1;
        *close = '\0';
        start++;
    } else {
        char *colon = strchr(start, ':');
        if (colon != NULL && strchr(colon + 1, ':') == NULL)
            *colon = '\0'; /* a.b.c.d:port */
    }
    struct in_addr v4;
    struct in6_addr v6;
    if (inet_pton(AF_INET, start, &v4) == 1) {
        set_v4(out, &v4);
        return 0;
    }
    if (inet_pton(AF_INET6, start, &v6) == 1) {
        memcpy(out->b, v6.s6_addr, 16);
        return 0;
    }
    return -1;
}

int srv_addr_from_sockaddr(srv_addr *out, const struct sockaddr *sa) {
    if (sa == NULL)
        return -1;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        set_v4(out, &in->sin_addr);
        return 0;
    }
    if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        memcpy(out->b, in6->sin6_addr.s6_addr, 16);
        return 0;
    }
    return -1;
}

int srv_addr_is_v4(const srv_addr *a) {
    return memcmp(a->b, v4_mapped_prefix, 12) == 0;
}

void srv_addr_format(char *out, size_t cap, const srv_addr *a) {
    if (cap == 0)
        return;
    const char *ok;
    if (srv_addr_is_v4(a))
        ok = inet_ntop(AF_INET, a->b + 12, out, (socklen_t)cap);
    else
        ok = inet_ntop(AF_INET6, a->b, out, (socklen_t)cap);
    if (ok == NULL)
        snprintf(out, cap, "?");
}

/* 1 when the first prefix bits of a and b agree. */
static int same_prefix(const srv_addr *a, const srv_addr *b, unsigned prefix) {
    unsigned whole = prefix / 8, rest = prefix % 8;
    if (memcmp(a->b, b->b, whole) != 0)
        return 0;
    if (rest == 0)
        return 1;
    uint8_t mask = (uint8_t)(0xff << (8 - rest));
    return (a->b[whole] & mask) == (b->b[whole] & mask);
}

/* One list entry, s[0 .. n): "ADDR" or "ADDR/BITS". */
static int parse_net(srv_addr *net, unsigned *prefix, const char *s, size_t n) {
    const char *slash = memchr(s, '/', n);
    size_t addr_len = slash != NULL ? (size_t)(slash - s) : n;
    if (srv_addr_parse(net, s, addr_len) != 0)
        return -1;
    unsigned max = srv_addr_is_v4(net) ? 32 : 128;
    unsigned bits = max;
    if (slash != NULL) {
        const char *p = slash + 1, *end = s + n;
        while (end > p && is_blank(end[-1]))
            end--;
        if (p == end || end - p > 3)
            return -1;
        bits = 0;
        for (; p < end; p++) {
            if (*p < '0' || *p > '9')
                return -1;
            bits = bits * 10 + (unsigned)(*p - '0');
        }
        if (bits > max)
            return -1;
    }
    *prefix = bits + (128 - max); /* IPv4 bits follow the 96-bit prefix */
    return 0;
}

int srv_netlist_parse(srv_netlist *out, const char *list) {
    out->n = 0;
    const char *p = list;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t n = comma != NULL ? (size_t)(comma - p) : strlen(p);
        size_t blank = 0;
        while (blank < n && is_blank(p[blank]))
            blank++;
        if (blank < n) {
            if (out->n == SRV_NETLIST_MAX ||
                parse_net(&out->net[out->n], &out->prefix[out->n], p, n) != 0)
                return -1;
            out->n++;
        } else if (comma != NULL || out->n > 0) {
            return -1; /* an empty entry between commas */
        }
        if (comma == NULL)
            return 0;
        p = comma + 1;
    }
}

int srv_netlist_contains(const srv_netlist *list, const srv_addr *a) {
    for (size_t i = 0; i < list->n; i++)
        if (same_prefix(a, &list->net[i], list->prefix[i]))
            return 1;
    return 0;
}

srv_addr srv_client_addr(const srv_addr *peer, const srv_netlist *trusted,
                         const char *const *forwarded_for, size_t n_values) {
    srv_addr client = *peer;
    if (!srv_netlist_contains(trusted, &client))
        return client;
    /* right to left: the last value's last entry is the nearest hop */
    for (size_t v = n_values; v-- > 0;) {
        const char *value = forwarded_for[v];
        const char *end = value + strlen(value);
        while (end > value) {
            const char *start = end;
            while (start > value && start[-1] != ',')
                start--;
            srv_addr hop;
            if (srv_addr_parse(&hop, start, (size_t)(end - start)) != 0)
                return client; /* garbage: believe only the hops so far */
            client = hop;
            if (!srv_netlist_contains(trusted, &client))
                return client;
            end = start > value ? start - 1 : value;
        }
    }
    return client;
}

srv_addr srv_client_of_token(const char *label) {
    srv_addr a;
    uint64_t h[2] = {1469598103934665603ULL, 1099511628211ULL};
    for (const unsigned char *c = (const unsigned char *)label; *c; c++)
        for (int i = 0; i < 2; i++)
            h[i] = (h[i] ^ *c) * 1099511628211ULL;
    memcpy(a.b, h, sizeof a.b);
    a.b[0] = 0xfd;
    return a;
}
