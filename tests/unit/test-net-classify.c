/* Unit tests for address classification and the synthetic pool
 * (net/classify.c): a table of addresses of both families with the class
 * each must get (every range boundary on both sides, the cloud metadata
 * endpoints, and each IPv6 form that embeds an IPv4 address), the sockaddr
 * entry point's length and family checks, and pool round trips. */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <sys/un.h>

#include "common/util.h"
#include "net/net.h"

struct addr_case {
        const char *addr;
        enum addr_class class;
};

static const struct addr_case cases[] = {
        /* IPv4: unspecified, "this network" */
        {"0.0.0.0", ADDR_UNSPECIFIED},
        {"0.1.2.3", ADDR_UNSPECIFIED},
        {"0.255.255.255", ADDR_UNSPECIFIED},
        {"1.0.0.0", ADDR_PUBLIC},
        {"1.1.1.1", ADDR_PUBLIC},
        {"8.8.8.8", ADDR_PUBLIC},
        /* 10/8 */
        {"9.255.255.255", ADDR_PUBLIC},
        {"10.0.0.0", ADDR_PRIVATE},
        {"10.1.2.3", ADDR_PRIVATE},
        {"10.255.255.255", ADDR_PRIVATE},
        {"11.0.0.0", ADDR_PUBLIC},
        /* 100.64/10, and Alibaba's metadata inside it */
        {"100.63.255.255", ADDR_PUBLIC},
        {"100.64.0.0", ADDR_CGNAT},
        {"100.100.100.200", ADDR_METADATA},
        {"100.100.100.201", ADDR_CGNAT},
        {"100.127.255.255", ADDR_CGNAT},
        {"100.128.0.0", ADDR_PUBLIC},
        /* 127/8 */
        {"126.255.255.255", ADDR_PUBLIC},
        {"127.0.0.0", ADDR_LOOPBACK},
        {"127.0.0.1", ADDR_LOOPBACK},
        {"127.255.255.255", ADDR_LOOPBACK},
        {"128.0.0.0", ADDR_PUBLIC},
        /* 169.254/16 and the metadata endpoints in it */
        {"169.253.255.255", ADDR_PUBLIC},
        {"169.254.0.0", ADDR_LINK_LOCAL},
        {"169.254.169.253", ADDR_LINK_LOCAL},
        {"169.254.169.254", ADDR_METADATA},
        {"169.254.169.255", ADDR_LINK_LOCAL},
        {"169.254.170.2", ADDR_METADATA},
        {"169.254.170.23", ADDR_METADATA},
        {"169.254.255.255", ADDR_LINK_LOCAL},
        {"169.255.0.0", ADDR_PUBLIC},
        /* 172.16/12 */
        {"172.15.255.255", ADDR_PUBLIC},
        {"172.16.0.0", ADDR_PRIVATE},
        {"172.20.1.1", ADDR_PRIVATE},
        {"172.31.255.255", ADDR_PRIVATE},
        {"172.32.0.0", ADDR_PUBLIC},
        /* 192.0.0/24 (Oracle's metadata in it), TEST-NET-1, 6to4 relay, 192.168/16 */
        {"191.255.255.255", ADDR_PUBLIC},
        {"192.0.0.0", ADDR_RESERVED},
        {"192.0.0.8", ADDR_RESERVED},
        {"192.0.0.192", ADDR_METADATA},
        {"192.0.0.255", ADDR_RESERVED},
        {"192.0.1.0", ADDR_PUBLIC},
        {"192.0.2.0", ADDR_RESERVED},
        {"192.0.2.255", ADDR_RESERVED},
        {"192.0.3.0", ADDR_PUBLIC},
        {"192.88.98.255", ADDR_PUBLIC},
        {"192.88.99.1", ADDR_RESERVED},
        {"192.88.100.0", ADDR_PUBLIC},
        {"192.167.255.255", ADDR_PUBLIC},
        {"192.168.0.0", ADDR_PRIVATE},
        {"192.168.1.1", ADDR_PRIVATE},
        {"192.168.255.255", ADDR_PRIVATE},
        {"192.169.0.0", ADDR_PUBLIC},
        /* 198.18/15 benchmarking (and our pool), TEST-NET-2, TEST-NET-3 */
        {"198.17.255.255", ADDR_PUBLIC},
        {"198.18.0.0", ADDR_RESERVED},
        {"198.18.0.2", ADDR_RESERVED},
        {"198.19.255.255", ADDR_RESERVED},
        {"198.20.0.0", ADDR_PUBLIC},
        {"198.51.99.255", ADDR_PUBLIC},
        {"198.51.100.7", ADDR_RESERVED},
        {"198.51.101.0", ADDR_PUBLIC},
        {"203.0.112.255", ADDR_PUBLIC},
        {"203.0.113.0", ADDR_RESERVED},
        {"203.0.113.255", ADDR_RESERVED},
        {"203.0.114.0", ADDR_PUBLIC},
        /* multicast, 240/4, broadcast */
        {"223.255.255.255", ADDR_PUBLIC},
        {"224.0.0.0", ADDR_MULTICAST},
        {"224.0.0.251", ADDR_MULTICAST},
        {"239.255.255.250", ADDR_MULTICAST},
        {"239.255.255.255", ADDR_MULTICAST},
        {"240.0.0.0", ADDR_RESERVED},
        {"240.0.0.1", ADDR_RESERVED},
        {"255.255.255.254", ADDR_RESERVED},
        {"255.255.255.255", ADDR_BROADCAST},

        /* IPv6: unspecified, loopback */
        {"::", ADDR_UNSPECIFIED},
        {"::1", ADDR_LOOPBACK},
        {"::2", ADDR_UNSPECIFIED}, /* IPv4-compatible 0.0.0.2 */
        /* IPv4-mapped: the embedded class, RESERVED when that is public */
        {"::ffff:127.0.0.1", ADDR_LOOPBACK},
        {"::ffff:169.254.169.254", ADDR_METADATA},
        {"::ffff:10.0.0.1", ADDR_PRIVATE},
        {"::ffff:100.64.0.1", ADDR_CGNAT},
        {"::ffff:0.0.0.0", ADDR_UNSPECIFIED},
        {"::ffff:255.255.255.255", ADDR_BROADCAST},
        {"::ffff:224.0.0.1", ADDR_MULTICAST},
        {"::ffff:1.1.1.1", ADDR_RESERVED},
        {"::ffff:198.18.0.2", ADDR_RESERVED},
        /* IPv4-compatible and IPv4-translated: the same rule */
        {"::127.0.0.1", ADDR_LOOPBACK},
        {"::10.0.0.1", ADDR_PRIVATE},
        {"::8.8.8.8", ADDR_RESERVED},
        {"::ffff:0:127.0.0.1", ADDR_LOOPBACK},
        {"::ffff:0:8.8.8.8", ADDR_RESERVED},
        {"::1:0:0:1", ADDR_RESERVED}, /* neither form: unassigned ::/8 */
        /* NAT64 well-known prefix: the embedded class, PUBLIC when public */
        {"64:ff9b::a9fe:a9fe", ADDR_METADATA},
        {"64:ff9b::7f00:1", ADDR_LOOPBACK},
        {"64:ff9b::c0a8:101", ADDR_PRIVATE},
        {"64:ff9b::808:808", ADDR_PUBLIC},
        {"64:ff9b::1:808:808", ADDR_RESERVED}, /* not in the /96: unassigned */
        /* NAT64 local-use: PUBLIC only in the unambiguous /96 layout */
        {"64:ff9b:1::808:808", ADDR_PUBLIC},
        {"64:ff9b:1::a00:1", ADDR_PRIVATE},
        {"64:ff9b:1:7f00:1::808:808", ADDR_RESERVED},
        {"64:ff9b:1:1::a9fe:a9fe", ADDR_METADATA},
        /* 6to4 */
        {"2002:7f00:1::1", ADDR_LOOPBACK},
        {"2002:a00:1::1", ADDR_PRIVATE},
        {"2002:a9fe:a9fe::1", ADDR_METADATA},
        {"2002:c000:204::1", ADDR_RESERVED},
        {"2002:808:808::1", ADDR_PUBLIC},
        {"2002::1", ADDR_UNSPECIFIED},
        /* Teredo: client 192.0.2.45 (documentation), server 65.54.227.120 */
        {"2001:0:4136:e378:8000:63bf:3fff:fdd2", ADDR_RESERVED},
        {"2001:0:4136:e378::80ff:fefe", ADDR_LOOPBACK}, /* client 127.0.1.1 */
        {"2001:0:a00:1::f7f7:f7f7", ADDR_PRIVATE},      /* server 10.0.0.1, client 8.8.8.8 */
        {"2001:0:4136:e378::f7f7:f7f7", ADDR_RESERVED}, /* both public */
        {"2001:0:4136:e378::5601:5601", ADDR_METADATA}, /* client 169.254.169.254 */
        /* the rest of 2001::/23, documentation */
        {"2001:1::1", ADDR_RESERVED},
        {"2001:2::1", ADDR_RESERVED},
        {"2001:10::1", ADDR_RESERVED},
        {"2001:20::1", ADDR_RESERVED},
        {"2001:1ff:ffff::1", ADDR_RESERVED},
        {"2001:200::1", ADDR_PUBLIC},
        {"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_PUBLIC},
        {"2001:db8::", ADDR_RESERVED},
        {"2001:db8::1", ADDR_RESERVED},
        {"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_RESERVED},
        {"2001:db9::", ADDR_PUBLIC},
        {"3ffe:ffff::1", ADDR_PUBLIC},
        {"3fff::1", ADDR_RESERVED},
        {"3fff:fff:ffff::1", ADDR_RESERVED},
        {"3fff:1000::1", ADDR_PUBLIC},
        /* global unicast */
        {"2000::", ADDR_PUBLIC},
        {"2606:4700::1111", ADDR_PUBLIC},
        {"2001:4860:4860::8888", ADDR_PUBLIC},
        {"2a00:1450:4001:82a::200e", ADDR_PUBLIC},
        {"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_RESERVED},
        {"4000::1", ADDR_RESERVED},
        {"5f00::1", ADDR_RESERVED},
        /* discard, ULA and metadata in it, link-local, site-local, multicast */
        {"100::1", ADDR_RESERVED},
        {"100::ffff:ffff:ffff:ffff", ADDR_RESERVED},
        {"100:0:0:1::1", ADDR_RESERVED},
        {"fbff:ffff::1", ADDR_RESERVED},
        {"fc00::", ADDR_ULA},
        {"fc00::1", ADDR_ULA},
        {"fd00:ec2::254", ADDR_METADATA},
        {"fd00:ec2::253", ADDR_ULA},
        {"fd00:ec2::23", ADDR_METADATA},
        {"fd20:ce::254", ADDR_METADATA},
        {"fdc0:d0::2", ADDR_ULA},
        {"fdff::1", ADDR_ULA},
        {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_ULA},
        {"fe00::1", ADDR_RESERVED},
        {"fe7f:ffff::1", ADDR_RESERVED},
        {"fe80::", ADDR_LINK_LOCAL},
        {"fe80::1", ADDR_LINK_LOCAL},
        {"febf::1", ADDR_LINK_LOCAL},
        {"fec0::1", ADDR_RESERVED},
        {"feff:ffff::1", ADDR_RESERVED},
        {"ff00::", ADDR_MULTICAST},
        {"ff02::1", ADDR_MULTICAST},
        {"ff05::1:3", ADDR_MULTICAST},
        {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_MULTICAST},
};

/* Each row through the bare classifier and through a sockaddr. */
START_TEST(test_table)
{
        const struct addr_case *c = &cases[_i];
        struct in_addr a4;
        struct in6_addr a6;
        enum addr_class got;
        int r;

        if (inet_pton(AF_INET, c->addr, &a4) == 1) {
                got = net_classify_ipv4(a4.s_addr);
                struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(443), .sin_addr = a4};
                r = net_classify_sockaddr((struct sockaddr *)&sin, sizeof(sin));
        } else {
                ck_assert_msg(inet_pton(AF_INET6, c->addr, &a6) == 1, "bad test address %s", c->addr);
                got = net_classify_ipv6(&a6);
                struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6, .sin6_port = htons(443), .sin6_addr = a6};
                r = net_classify_sockaddr((struct sockaddr *)&sin6, sizeof(sin6));
        }
        ck_assert_msg(got == c->class, "%s: expected %s, got %s", c->addr, net_addr_class_name(c->class),
                      net_addr_class_name(got));
        ck_assert_int_eq(r, (int)got);
}
END_TEST

START_TEST(test_table_size)
{
        /* The brief asks for at least 80 rows; keep the table from shrinking. */
        ck_assert_uint_ge(ELEMENTSOF(cases), 80);
}
END_TEST

START_TEST(test_class_names)
{
        static const char *const names[] = {"public",    "unspecified", "loopback", "private",
                                            "cgnat",     "link-local",  "metadata", "ula",
                                            "multicast", "broadcast",   "reserved"};
        for (int c = ADDR_PUBLIC; c <= ADDR_RESERVED; c++)
                ck_assert_str_eq(net_addr_class_name((enum addr_class)c), names[c]);
        ck_assert_str_eq(net_addr_class_name((enum addr_class)99), "unknown");
}
END_TEST

START_TEST(test_sockaddr_lengths)
{
        struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(0x08080808)};
        struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6};
        struct sockaddr_un un = {.sun_family = AF_UNIX, .sun_path = "/tmp/x"};
        struct sockaddr_storage ss = {.ss_family = AF_INET};

        sin6.sin6_addr.s6_addr[15] = 1;

        ck_assert_int_eq(net_classify_sockaddr((struct sockaddr *)&sin, sizeof(sin)), ADDR_PUBLIC);
        ck_assert_int_eq(net_classify_sockaddr((struct sockaddr *)&sin, sizeof(sin) + 12), ADDR_PUBLIC);
        ck_assert_int_eq(net_classify_sockaddr((struct sockaddr *)&sin, sizeof(sin) - 1), -EINVAL);
        ck_assert_int_eq(net_classify_sockaddr((struct sockaddr *)&sin, 8), -EINVAL);
        ck_assert_int_eq(net_classify_sockaddr((struct sockaddr *)&sin, 2), -EINVAL);
        ck_assert_int_eq(net_classify_sockaddr((struct sockaddr *)&sin, 1), -EINVAL);
        ck_assert_int_eq(net_classify_sockaddr((struct sockaddr *)&sin, 0), -EINVAL);
        ck_assert_int_eq(net_classify_sockaddr(NULL, sizeof(sin)), -EINVAL);

        ck_assert_int_eq(net_classify_sockaddr((struct sockaddr *)&sin6, sizeof(sin6)), ADDR_LOOPBACK);
        ck_assert_int_eq(net_classify_sockaddr((struct sockaddr *)&sin6, sizeof(sin6) - 1), -EINVAL);
        /* The kernel takes 24 (RFC 2133, no scope id); we want the whole struct. */
        ck_assert_int_eq(net_classify_sockaddr((struct sockaddr *)&sin6, 24), -EINVAL);
        ck_assert_int_eq(net_classify_sockaddr((struct sockaddr *)&sin6, sizeof(struct sockaddr_in)), -EINVAL);

        ck_assert_int_eq(net_classify_sockaddr((struct sockaddr *)&un, sizeof(un)), -EAFNOSUPPORT);
        ck_assert_int_eq(net_classify_sockaddr((struct sockaddr *)&un, 2), -EAFNOSUPPORT);
        ck_assert_int_eq(net_classify_sockaddr((struct sockaddr *)&un, 1), -EINVAL);
        un.sun_family = AF_UNSPEC;
        ck_assert_int_eq(net_classify_sockaddr((struct sockaddr *)&un, sizeof(un)), -EAFNOSUPPORT);
        un.sun_family = AF_NETLINK;
        ck_assert_int_eq(net_classify_sockaddr((struct sockaddr *)&un, sizeof(un)), -EAFNOSUPPORT);

        /* A sockaddr_storage with the whole length: 0.0.0.0. */
        ck_assert_int_eq(net_classify_sockaddr((struct sockaddr *)&ss, sizeof(ss)), ADDR_UNSPECIFIED);

        /* Unaligned: the child's buffer may sit anywhere. */
        uint8_t raw[1 + sizeof(struct sockaddr_in6)];
        memcpy(raw + 1, &sin6, sizeof(sin6));
        ck_assert_int_eq(net_classify_sockaddr((struct sockaddr *)(raw + 1), sizeof(sin6)), ADDR_LOOPBACK);
}
END_TEST

static const unsigned pool_indices[] = {0, 1, 2, 253, 254, 255, 256, 257, 1000, 65000 - 2, NET_POOL_MAX - 1};

static int lookup4(struct in_addr a)
{
        struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(443), .sin_addr = a};
        return net_pool_lookup((struct sockaddr *)&sin, sizeof(sin));
}

static int lookup6(const struct in6_addr *a)
{
        struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6, .sin6_port = htons(443), .sin6_addr = *a};
        return net_pool_lookup((struct sockaddr *)&sin6, sizeof(sin6));
}

static int lookup_str(const char *s)
{
        struct in_addr a4;
        struct in6_addr a6;
        if (inet_pton(AF_INET, s, &a4) == 1)
                return lookup4(a4);
        ck_assert_msg(inet_pton(AF_INET6, s, &a6) == 1, "bad test address %s", s);
        return lookup6(&a6);
}

START_TEST(test_pool_round_trip)
{
        unsigned i = pool_indices[_i];
        struct in_addr a4;
        struct in6_addr a6, mapped = {};
        char s4[INET_ADDRSTRLEN], s6[INET6_ADDRSTRLEN];

        net_pool_ipv4(i, &a4);
        net_pool_ipv6(i, &a6);
        inet_ntop(AF_INET, &a4, s4, sizeof(s4));
        inet_ntop(AF_INET6, &a6, s6, sizeof(s6));

        /* 198.18.0.0 + 2 + i and fdc0:d0::/96 + 2 + i */
        ck_assert_uint_eq(ntohl(a4.s_addr), ((198u << 24) | (18u << 16)) + 2 + i);
        static const uint8_t prefix[12] = {0xfd, 0xc0, 0x00, 0xd0};
        ck_assert_mem_eq(a6.s6_addr, prefix, 12);
        uint32_t low;
        memcpy(&low, a6.s6_addr + 12, 4);
        ck_assert_uint_eq(ntohl(low), i + 2);

        ck_assert_msg(lookup4(a4) == (int)i, "%s -> %d, expected %u", s4, lookup4(a4), i);
        ck_assert_msg(lookup6(&a6) == (int)i, "%s -> %d, expected %u", s6, lookup6(&a6), i);
        mapped.s6_addr[10] = mapped.s6_addr[11] = 0xff;
        memcpy(mapped.s6_addr + 12, &a4.s_addr, 4);
        ck_assert_int_eq(lookup6(&mapped), (int)i);

        /* Nothing in the pool is anywhere real. */
        ck_assert_int_eq(net_classify_ipv4(a4.s_addr), ADDR_RESERVED);
        ck_assert_int_eq(net_classify_ipv6(&a6), ADDR_ULA);
        ck_assert_int_eq(net_classify_ipv6(&mapped), ADDR_RESERVED);
}
END_TEST

START_TEST(test_pool_examples)
{
        ck_assert_int_eq(lookup_str("198.18.0.2"), 0);
        ck_assert_int_eq(lookup_str("198.18.0.3"), 1);
        ck_assert_int_eq(lookup_str("198.18.1.1"), 255);
        ck_assert_int_eq(lookup_str("198.18.1.2"), 256);
        ck_assert_int_eq(lookup_str("fdc0:d0::2"), 0);
        ck_assert_int_eq(lookup_str("fdc0:d0::102"), 256);
        ck_assert_int_eq(lookup_str("fdc0:d0::1000"), 4094);
        ck_assert_int_eq(lookup_str("fdc0:d0::1:1"), -ENOENT); /* 65535: past the end */
        ck_assert_int_eq(lookup_str("::ffff:198.18.0.2"), 0);
        ck_assert_int_eq(lookup_str("::ffff:198.18.1.2"), 256);
        /* The last one and the first past the end. */
        ck_assert_int_eq(lookup_str("198.18.253.233"), NET_POOL_MAX - 1);
        ck_assert_int_eq(lookup_str("198.18.253.234"), -ENOENT);
        ck_assert_int_eq(lookup_str("fdc0:d0::fdea"), -ENOENT);
        ck_assert_int_eq(lookup_str("fdc0:d0::fde9"), NET_POOL_MAX - 1);
}
END_TEST

START_TEST(test_pool_misses)
{
        static const char *const misses[] = {
                "198.18.0.0",
                "198.18.0.1",
                "198.17.255.255",
                "198.19.0.2",
                "198.18.255.255",
                "8.8.8.8",
                "127.0.0.1",
                "0.0.0.0",
                "fdc0:d0::",
                "fdc0:d0::1",
                "fdc0:d0::ffff:ffff",
                "fdc0:d0:0:0:0:1::2",
                "fdc0:d1::2",
                "fdc1:d0::2",
                "::ffff:198.18.0.1",
                "::ffff:198.19.0.2",
                "::198.18.0.2",
                "64:ff9b::c612:2",
                "2002:c612:2::",
                "::1",
                "::",
                "fe80::2",
        };
        for (size_t k = 0; k < ELEMENTSOF(misses); k++)
                ck_assert_msg(lookup_str(misses[k]) == -ENOENT, "%s is not in the pool", misses[k]);

        /* Out of range indices give an address that is not in the pool. */
        struct in_addr a4;
        struct in6_addr a6;
        net_pool_ipv4(NET_POOL_MAX, &a4);
        net_pool_ipv6(NET_POOL_MAX, &a6);
        ck_assert_int_eq(lookup4(a4), -ENOENT);
        ck_assert_int_eq(lookup6(&a6), -ENOENT);
        net_pool_ipv4(65535, &a4);
        net_pool_ipv6(UINT32_MAX, &a6);
        ck_assert_int_eq(lookup4(a4), -ENOENT);
        ck_assert_int_eq(lookup6(&a6), -ENOENT);
}
END_TEST

START_TEST(test_pool_lengths)
{
        struct in_addr a4;
        struct in6_addr a6;
        net_pool_ipv4(7, &a4);
        net_pool_ipv6(7, &a6);
        struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr = a4};
        struct sockaddr_in6 sin6 = {.sin6_family = AF_INET6, .sin6_addr = a6};
        struct sockaddr_un un = {.sun_family = AF_UNIX};

        ck_assert_int_eq(net_pool_lookup((struct sockaddr *)&sin, sizeof(sin)), 7);
        ck_assert_int_eq(net_pool_lookup((struct sockaddr *)&sin, sizeof(sin) - 1), -EINVAL);
        ck_assert_int_eq(net_pool_lookup((struct sockaddr *)&sin, 0), -EINVAL);
        ck_assert_int_eq(net_pool_lookup((struct sockaddr *)&sin6, sizeof(sin6)), 7);
        ck_assert_int_eq(net_pool_lookup((struct sockaddr *)&sin6, sizeof(sin6) - 1), -EINVAL);
        ck_assert_int_eq(net_pool_lookup((struct sockaddr *)&sin6, sizeof(sin)), -EINVAL);
        ck_assert_int_eq(net_pool_lookup((struct sockaddr *)&un, sizeof(un)), -ENOENT);
        ck_assert_int_eq(net_pool_lookup((struct sockaddr *)&un, 1), -EINVAL);
        ck_assert_int_eq(net_pool_lookup(NULL, sizeof(sin)), -EINVAL);
}
END_TEST

static Suite *classify_suite(void)
{
        Suite *s = suite_create("net-classify");
        TCase *tc;

        tc = tcase_create("classify");
        tcase_add_loop_test(tc, test_table, 0, (int)ELEMENTSOF(cases));
        tcase_add_test(tc, test_table_size);
        tcase_add_test(tc, test_class_names);
        tcase_add_test(tc, test_sockaddr_lengths);
        suite_add_tcase(s, tc);

        tc = tcase_create("pool");
        tcase_add_loop_test(tc, test_pool_round_trip, 0, (int)ELEMENTSOF(pool_indices));
        tcase_add_test(tc, test_pool_examples);
        tcase_add_test(tc, test_pool_misses);
        tcase_add_test(tc, test_pool_lengths);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(classify_suite());
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
