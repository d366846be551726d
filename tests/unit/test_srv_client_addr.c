/*
 * test_srv_client_addr.c — client addresses: parsing (both families,
 * brackets, ports, garbage), trusted-proxy networks (CIDR edges, malformed
 * lists), and the X-Forwarded-For walk (spoofed entries, chains of
 * proxies, several header lines, garbage).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "client_addr.h"

static srv_addr addr(const char *text) {
    srv_addr a;
    assert_int_equal(srv_addr_parse(&a, text, strlen(text)), 0);
    return a;
}

static void assert_addr(const srv_addr *a, const char *text) {
    char got[64];
    srv_addr_format(got, sizeof got, a);
    assert_string_equal(got, text);
}

static void test_parse(void **state) {
    (void)state;
    srv_addr a = addr("192.0.2.7");
    assert_true(srv_addr_is_v4(&a));
    static const uint8_t mapped[16] = {0, 0, 0,    0,    0,   0, 0, 0,
                                       0, 0, 0xff, 0xff, 192, 0, 2, 7};
    assert_memory_equal(a.b, mapped, 16);
    assert_addr(&a, "192.0.2.7");
    a = addr("  2001:db8::1\t");
    assert_false(srv_addr_is_v4(&a));
    assert_addr(&a, "2001:db8::1");
    a = addr("[2001:db8::2]");
    assert_addr(&a, "2001:db8::2");
    a = addr("[2001:db8::3]:8443");
    assert_addr(&a, "2001:db8::3");
    a = addr("198.51.100.4:5678");
    assert_addr(&a, "198.51.100.4");
    a = addr("::ffff:10.1.2.3"); /* the mapped form is the IPv4 address */
    assert_true(srv_addr_is_v4(&a));
    assert_addr(&a, "10.1.2.3");
    /* only the first n bytes count */
    assert_int_equal(srv_addr_parse(&a, "10.0.0.1garbage", 8), 0);
    assert_addr(&a, "10.0.0.1");

    static const char *bad[] = {"",
                                "   ",
                                "unknown",
                                "256.1.1.1",
                                "1.2.3",
                                "[::1",
                                "[::1]x",
                                "2001:db8::g",
                                "1.2.3.4/24",
                                "1.2.3.4 5.6.7.8",
                                ("0123456789012345678901234567890123456789"
                                 "01234567890123456789012345")};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(srv_addr_parse(&a, bad[i], strlen(bad[i])), -1);
}

static void test_from_sockaddr(void **state) {
    (void)state;
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    srv_addr a;
    ss.ss_family = AF_UNIX;
    assert_int_equal(srv_addr_from_sockaddr(&a, (struct sockaddr *)&ss), -1);
    assert_int_equal(srv_addr_from_sockaddr(&a, NULL), -1);
}

static void test_netlist(void **state) {
    (void)state;
    srv_netlist list;
    assert_int_equal(srv_netlist_parse(&list, "10.0.0.0/8, 192.0.2.1,fd00::/8 ,"
                                              "198.51.100.77/25"),
                     0);
    assert_int_equal(list.n, 4);
    struct {
        const char *a;
        int in;
    } cases[] = {
        {"10.0.0.0", 1},        {"10.255.255.255", 1}, {"11.0.0.0", 0},
        {"9.255.255.255", 0},   {"192.0.2.1", 1},      {"192.0.2.2", 0},
        {"fd00::1", 1},         {"fdff:ffff::", 1},    {"fe00::1", 0},
        {"198.51.100.0", 1},    {"198.51.100.127", 1}, {"198.51.100.128", 0},
        {"::ffff:10.9.8.7", 1}, {"2001:db8::1", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        srv_addr a = addr(cases[i].a);
        if (srv_netlist_contains(&list, &a) != cases[i].in)
            fail_msg("%s: expected %s", cases[i].a,
                     cases[i].in ? "inside" : "outside");
    }
    /* /0 holds every address of its family, and only of its family */
    assert_int_equal(srv_netlist_parse(&list, "0.0.0.0/0"), 0);
    srv_addr v4 = addr("203.0.113.9"), v6 = addr("2001:db8::9");
    assert_true(srv_netlist_contains(&list, &v4));
    assert_false(srv_netlist_contains(&list, &v6));
    assert_int_equal(srv_netlist_parse(&list, "::/0"), 0);
    assert_true(srv_netlist_contains(&list, &v6));
    /* the empty list trusts nobody */
    assert_int_equal(srv_netlist_parse(&list, ""), 0);
    assert_int_equal(list.n, 0);
    assert_false(srv_netlist_contains(&list, &v4));

    static const char *bad[] = {",",
                                "10.0.0.0/33",
                                "::/129",
                                "10.0.0.0/",
                                "10.0.0.0/x",
                                "a.b.c.d",
                                "1.2.3.4,,5.6.7.8",
                                "1.2.3.4,",
                                "10.0.0.0/8/8",
                                "10.0.0.0/0008"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (srv_netlist_parse(&list, bad[i]) != -1)
            fail_msg("'%s' was accepted", bad[i]);
    char many[1024] = "";
    for (int i = 0; i <= SRV_NETLIST_MAX; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "%s10.0.%d.1",
                 i ? "," : "", i);
    assert_int_equal(srv_netlist_parse(&list, many), -1);
}

/* The client for a peer and X-Forwarded-For lines, as text. */
static void client_is(const char *want, const char *peer, const char *trusted,
                      const char *const *xff, size_t n) {
    srv_netlist list;
    assert_int_equal(srv_netlist_parse(&list, trusted), 0);
    srv_addr p = addr(peer);
    srv_addr c = srv_client_addr(&p, &list, xff, n);
    char got[64];
    srv_addr_format(got, sizeof got, &c);
    if (strcmp(got, want) != 0)
        fail_msg("peer %s, trusted '%s', %zu lines: got %s, expected %s", peer,
                 trusted, n, got, want);
}

static void test_forwarded_for(void **state) {
    (void)state;
    const char *one[] = {"203.0.113.9"};
    /* an untrusted peer's header is ignored */
    client_is("198.51.100.1", "198.51.100.1", "127.0.0.1", one, 1);
    client_is("198.51.100.1", "198.51.100.1", "", one, 1);
    /* a trusted proxy names the client */
    client_is("203.0.113.9", "127.0.0.1", "127.0.0.1", one, 1);
    /* without the header, the proxy itself */
    client_is("127.0.0.1", "127.0.0.1", "127.0.0.1", NULL, 0);
    /* a client that sends its own X-Forwarded-For cannot pick its address:
     * the proxy appends the real one, the rightmost untrusted entry */
    const char *spoofed[] = {"10.0.0.1, 1.1.1.1, 203.0.113.9"};
    client_is("203.0.113.9", "127.0.0.1", "127.0.0.1,10.0.0.0/8", spoofed, 1);
    /* a chain of trusted proxies is skipped */
    const char *chain[] = {"198.51.100.23, 10.1.1.1,10.2.2.2"};
    client_is("198.51.100.23", "127.0.0.1", "127.0.0.1,10.0.0.0/8", chain, 1);
    /* several header lines read as one list, in order */
    const char *lines[] = {"198.51.100.7", "10.0.0.2"};
    client_is("198.51.100.7", "127.0.0.1", "127.0.0.0/8,10.0.0.0/8", lines, 2);
    /* all trusted: the leftmost */
    const char *inner[] = {"10.0.0.3, 10.0.0.4"};
    client_is("10.0.0.3", "127.0.0.1", "127.0.0.1,10.0.0.0/8", inner, 1);
    /* garbage: only the hops before it are believed */
    const char *junk[] = {"203.0.113.1, unknown"};
    client_is("127.0.0.1", "127.0.0.1", "127.0.0.1", junk, 1);
    const char *junk2[] = {"unknown, 10.0.0.9"};
    client_is("10.0.0.9", "127.0.0.1", "127.0.0.1,10.0.0.0/8", junk2, 1);
    const char *trailing[] = {"203.0.113.1,"};
    client_is("127.0.0.1", "127.0.0.1", "127.0.0.1", trailing, 1);
    /* IPv6 with brackets and ports, and a v6 proxy */
    const char *v6[] = {"[2001:db8::5]:4711"};
    client_is("2001:db8::5", "::1", "::1", v6, 1);
    const char *v4port[] = {"203.0.113.5:1234"};
    client_is("203.0.113.5", "::1", "::1/128", v4port, 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_from_sockaddr),
        cmocka_unit_test(test_netlist),
        cmocka_unit_test(test_forwarded_for),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
