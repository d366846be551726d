/*
 * client_addr.h — who the client is: the peer address of the connection,
 * or, when that peer is a trusted reverse proxy, the address the proxies
 * recorded in X-Forwarded-For. Addresses are kept in one 16-byte form
 * (IPv4 as IPv4-mapped IPv6, RFC 4291 section 2.5.5.2), so one table and
 * one comparison serve both families.
 */
#ifndef SRV_CLIENT_ADDR_H
#define SRV_CLIENT_ADDR_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* An IPv6 address, network byte order; IPv4 a.b.c.d is ::ffff:a.b.c.d. */
typedef struct {
    uint8_t b[16];
} srv_addr;

/* Most networks a trusted-proxy list may hold. */
#define SRV_NETLIST_MAX 32

/* A list of networks (address and prefix length in bits of the 16-byte
 * form: an IPv4 /24 is stored as /120). */
typedef struct {
    size_t n;
    srv_addr net[SRV_NETLIST_MAX];
    unsigned prefix[SRV_NETLIST_MAX];
} srv_netlist;

/* Parse a numeric address: "192.0.2.7", "2001:db8::1", or either with
 * surrounding blanks, IPv6 optionally in brackets ("[::1]"), IPv4
 * optionally with a ":port" (as some proxies write X-Forwarded-For).
 * s is n bytes, not necessarily NUL-terminated. Returns 0, -1 when it is
 * not an address. */
int srv_addr_parse(srv_addr *out, const char *s, size_t n);

/* The address of a connected peer (AF_INET or AF_INET6). Returns 0, -1 for
 * another family or NULL. */
int srv_addr_from_sockaddr(srv_addr *out, const struct sockaddr *sa);

/* 1 when a is an IPv4-mapped address (the peer spoke IPv4). */
int srv_addr_is_v4(const srv_addr *a);

/* Text form into out (at least 46 bytes): dotted quad for IPv4, RFC 5952
 * for IPv6. */
void srv_addr_format(char *out, size_t cap, const srv_addr *a);

/* Parse a comma-separated list of addresses and CIDR networks
 * ("10.0.0.0/8, 192.0.2.1, fd00::/8"); a bare address is a /32 or /128.
 * Host bits beyond the prefix are ignored. Returns 0, or -1 when an entry
 * is malformed, the prefix is out of range, or there are more than
 * SRV_NETLIST_MAX entries (an empty list is valid: it trusts nobody). */
int srv_netlist_parse(srv_netlist *out, const char *list);

/* 1 when a lies in one of the list's networks. */
int srv_netlist_contains(const srv_netlist *list, const srv_addr *a);

/* The client behind peer. When peer is not in trusted, peer itself.
 * Otherwise X-Forwarded-For is read right to left (each proxy appends the
 * address it received the request from), over the header values in the
 * order they arrived, skipping addresses that are themselves trusted: the
 * first untrusted one is the client (so a client cannot forge its address
 * by sending its own X-Forwarded-For: only what trusted proxies appended is
 * believed). When every address is trusted, the leftmost; when an entry is
 * not an address, the last trusted hop before it. */
srv_addr srv_client_addr(const srv_addr *peer, const srv_netlist *trusted,
                         const char *const *forwarded_for, size_t n_values);

/* The client that showed the listed token labelled label (auth.h): a
 * name in the unique-local range fd00::/8, which no peer of a lab has,
 * made of two FNV-1a hashes of the label (the rate limit keys an IPv6
 * client by its /64: 56 bits of the first hash, so two labels of a
 * class share a bucket with a chance of about n^2 / 2^57). Tokens are clients,
 * so that a class behind one NAT, one token a student, is many clients to the
 * rate limit and to the compute queue's fairness (docs/class.md, "Who is a
 * client"). label must be a NUL-terminated string. */
srv_addr srv_client_of_token(const char *label);

#endif /* SRV_CLIENT_ADDR_H */
