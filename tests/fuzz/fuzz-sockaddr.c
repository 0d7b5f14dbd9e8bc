/* Fuzz target for address classification and the synthetic pool
 * (net/classify.c), the code that judges a sockaddr copied out of the
 * sandbox's memory.
 *
 * The whole input is a sockaddr of that length: its classification must be
 * a valid class or the documented error for its family and length, and a
 * pool lookup must agree with the pool's own addresses. The first 4 and 16
 * bytes are also classified as bare addresses, and the IPv6 forms that embed
 * an IPv4 address are checked against the IPv4 classifier and the rules
 * documented in classify.c; nothing outside 2000::/3 may be public.
 *
 * Built with -fsanitize=fuzzer for libFuzzer (make fuzz), or with
 * tests/fuzz/standalone.c to replay a corpus (tests/fuzz/run.sh). */
#include "config.h"

#include <arpa/inet.h>

#include "common/util.h"
#include "net/net.h"

#define CHECK(x)                                                                                  \
        do {                                                                                      \
                if (!(x)) {                                                                       \
                        fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #x); \
                        abort();                                                                  \
                }                                                                                 \
        } while (0)

static bool valid_class(int c)
{
        return c >= ADDR_PUBLIC && c <= ADDR_RESERVED && !streq(net_addr_class_name((enum addr_class)c), "unknown");
}

static uint32_t be32_at(const uint8_t *p)
{
        return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static enum addr_class v4_class(uint32_t host_order)
{
        return net_classify_ipv4(htonl(host_order));
}

static void check_sockaddr(const uint8_t *data, size_t size)
{
        /* An exact-size, suitably aligned copy: reads past size are caught. */
        uint8_t *buf = xmalloc(size);
        memcpy(buf, data, size);
        const struct sockaddr *sa = (const struct sockaddr *)buf;

        int c = net_classify_sockaddr(sa, size);
        int p = net_pool_lookup(sa, size);
        if (size < sizeof(sa_family_t)) {
                CHECK(c == -EINVAL && p == -EINVAL);
                free(buf);
                return;
        }
        sa_family_t family;
        memcpy(&family, buf, sizeof(family));

        if (family == AF_INET && size < sizeof(struct sockaddr_in)) {
                CHECK(c == -EINVAL && p == -EINVAL);
        } else if (family == AF_INET6 && size < sizeof(struct sockaddr_in6)) {
                CHECK(c == -EINVAL && p == -EINVAL);
        } else if (family == AF_INET) {
                struct sockaddr_in sin;
                memcpy(&sin, buf, sizeof(sin));
                CHECK(valid_class(c));
                CHECK(c == (int)net_classify_ipv4(sin.sin_addr.s_addr));
                CHECK(p == -ENOENT || (p >= 0 && p < NET_POOL_MAX));
                if (p >= 0) {
                        struct in_addr a;
                        net_pool_ipv4((unsigned)p, &a);
                        CHECK(a.s_addr == sin.sin_addr.s_addr);
                        CHECK(c == ADDR_RESERVED);
                }
        } else if (family == AF_INET6) {
                struct sockaddr_in6 sin6;
                memcpy(&sin6, buf, sizeof(sin6));
                CHECK(valid_class(c));
                CHECK(c == (int)net_classify_ipv6(&sin6.sin6_addr));
                CHECK(p == -ENOENT || (p >= 0 && p < NET_POOL_MAX));
                if (p >= 0) {
                        struct in6_addr a6;
                        struct in_addr a4;
                        net_pool_ipv6((unsigned)p, &a6);
                        net_pool_ipv4((unsigned)p, &a4);
                        if (memcmp(&a6, &sin6.sin6_addr, 16) == 0) {
                                CHECK(c == ADDR_ULA);
                        } else {
                                static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};
                                CHECK(memcmp(sin6.sin6_addr.s6_addr, mapped, 12) == 0);
                                CHECK(memcmp(sin6.sin6_addr.s6_addr + 12, &a4, 4) == 0);
                                CHECK(c == ADDR_RESERVED);
                        }
                }
        } else {
                CHECK(c == -EAFNOSUPPORT);
                CHECK(p == -ENOENT);
        }
        free(buf);
}

static void check_ipv6(const uint8_t b[16])
{
        struct in6_addr a;
        memcpy(&a, b, 16);
        enum addr_class c = net_classify_ipv6(&a);
        CHECK(valid_class((int)c));

        uint32_t low = be32_at(b + 12);
        static const uint8_t zero[16] = {0};
        static const uint8_t mapped[12] = {[10] = 0xff, [11] = 0xff};
        static const uint8_t nat64[12] = {0x00, 0x64, 0xff, 0x9b};
        static const uint8_t nat64_local[6] = {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01};

        /* Public only in global unicast, 64:ff9b::/96 and the /96 layout
         * of 64:ff9b:1::/48. */
        if (c == ADDR_PUBLIC)
                CHECK((b[0] & 0xe0) == 0x20 || memcmp(b, nat64, 12) == 0 ||
                      (memcmp(b, nat64_local, 6) == 0 && memcmp(b + 6, zero, 6) == 0));
        if (memcmp(b, mapped, 12) == 0 || (memcmp(b, zero, 12) == 0 && low > 1)) {
                enum addr_class c4 = v4_class(low);
                CHECK(c == (c4 != ADDR_PUBLIC ? c4 : ADDR_RESERVED));
        }
        if (memcmp(b, nat64, 12) == 0)
                CHECK(c == v4_class(low));
        if (b[0] == 0x20 && b[1] == 0x02) {
                enum addr_class c4 = v4_class(be32_at(b + 2));
                CHECK(c == c4);
        }
        if (be32_at(b) == 0x20010000) {
                CHECK(c != ADDR_PUBLIC);
                enum addr_class client = v4_class(~low);
                if (client != ADDR_PUBLIC)
                        CHECK(c == client);
        }
        if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
                CHECK(c == ADDR_LINK_LOCAL);
        if ((b[0] & 0xfe) == 0xfc)
                CHECK(c == ADDR_ULA || c == ADDR_METADATA);
        if (b[0] == 0xff)
                CHECK(c == ADDR_MULTICAST);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        check_sockaddr(data, size);

        if (size >= 4) {
                uint32_t be;
                memcpy(&be, data, 4);
                enum addr_class c = net_classify_ipv4(be);
                CHECK(valid_class((int)c));
                uint8_t hi = data[0];
                if (hi == 10 || hi == 127 || hi == 0 || hi >= 224)
                        CHECK(c != ADDR_PUBLIC);
        }
        if (size >= 16)
                check_ipv6(data);
        return 0;
}
