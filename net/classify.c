/* Address classification and the synthetic pool: pure functions, no I/O.
 *
 * The gate connects only to what net_classify_*() calls ADDR_PUBLIC, so the
 * classifier is written to fail closed: every special-purpose range in the
 * IANA IPv4/IPv6 special-purpose registries that is not globally reachable
 * gets a non-public class, and any IPv6 address outside global unicast
 * (2000::/3) that is not listed is ADDR_RESERVED. A wrong non-public answer
 * costs a refused connection; a wrong public one is an SSRF.
 *
 * Embedded IPv4 addresses. Several IPv6 forms carry an IPv4 address that a
 * translator, tunnel or dual-stack socket may end up connecting to. The
 * rules, one per form:
 *   - IPv4-mapped ::ffff:0:0/96, IPv4-compatible ::/96 (other than :: and
 *     ::1) and IPv4-translated ::ffff:0:0:0/96: the embedded address's class
 *     when that is not public, ADDR_RESERVED otherwise. The gate resolves
 *     names itself and connects with the family of the address it got, so it
 *     never needs to connect to one of these; a public one is still refused.
 *   - NAT64 well-known 64:ff9b::/96: the embedded (last 32 bits) class when
 *     not public, else ADDR_PUBLIC: on an IPv6-only host with DNS64 these are
 *     how public IPv4 services are reached.
 *   - NAT64 local-use 64:ff9b:1::/48 (RFC 8215): the operator picks the
 *     prefix length, so where the IPv4 address sits is not knowable from the
 *     address. The last 32 bits (the /96 layout) decide when they are not
 *     public; ADDR_PUBLIC only when bits 48..95 are zero, where every other
 *     RFC 6052 layout would embed 0.x.x.x (not routable); else ADDR_RESERVED.
 *   - 6to4 2002::/16: the embedded (bits 16..47) class when not public, else
 *     ADDR_PUBLIC.
 *   - Teredo 2001::/32: the client's (bits 96..127, inverted) class, else
 *     the server's (bits 32..63), when not public; ADDR_RESERVED otherwise
 *     (like the rest of 2001::/23 it is not globally reachable, and no
 *     service the allow list names lives behind a Teredo tunnel). */
#include "config.h"

#include <arpa/inet.h>

#include "common/util.h"
#include "net/net.h"

/* An IPv4 prefix in host byte order. */
struct v4_range {
        uint32_t net;
        unsigned len;
        enum addr_class class;
};

#define V4(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (uint32_t)(d))

/* Cloud metadata and credential endpoints. They sit inside ranges that are
 * refused anyway (link-local, CGNAT, 192.0.0/24), but naming them lets the
 * audit record say what the connection was after. */
static const uint32_t v4_metadata[] = {
        V4(169, 254, 169, 254), /* AWS, GCP, Azure, OpenStack, DigitalOcean, ... */
        V4(169, 254, 170, 2),   /* AWS ECS task credentials */
        V4(169, 254, 170, 23),  /* AWS EKS pod identity agent */
        V4(100, 100, 100, 200), /* Alibaba Cloud */
        V4(192, 0, 0, 192),     /* Oracle Cloud */
};

/* First match wins; more specific prefixes come before the ranges that hold
 * them. Anything not listed is public. */
static const struct v4_range v4_ranges[] = {
        {V4(0, 0, 0, 0), 8, ADDR_UNSPECIFIED},        /* "this network": 0.0.0.0 reaches the host itself */
        {V4(10, 0, 0, 0), 8, ADDR_PRIVATE},           /* RFC 1918 */
        {V4(100, 64, 0, 0), 10, ADDR_CGNAT},          /* RFC 6598 shared address space */
        {V4(127, 0, 0, 0), 8, ADDR_LOOPBACK},         /* RFC 1122 */
        {V4(169, 254, 0, 0), 16, ADDR_LINK_LOCAL},    /* RFC 3927 */
        {V4(172, 16, 0, 0), 12, ADDR_PRIVATE},        /* RFC 1918 */
        {V4(192, 0, 0, 0), 24, ADDR_RESERVED},        /* IETF protocol assignments (RFC 6890) */
        {V4(192, 0, 2, 0), 24, ADDR_RESERVED},        /* TEST-NET-1 (RFC 5737) */
        {V4(192, 88, 99, 0), 24, ADDR_RESERVED},      /* 6to4 relay anycast (RFC 7526, deprecated) */
        {V4(192, 168, 0, 0), 16, ADDR_PRIVATE},       /* RFC 1918 */
        {V4(198, 18, 0, 0), 15, ADDR_RESERVED},       /* benchmarking (RFC 2544); also our synthetic pool */
        {V4(198, 51, 100, 0), 24, ADDR_RESERVED},     /* TEST-NET-2 */
        {V4(203, 0, 113, 0), 24, ADDR_RESERVED},      /* TEST-NET-3 */
        {V4(224, 0, 0, 0), 4, ADDR_MULTICAST},        /* RFC 5771 */
        {V4(255, 255, 255, 255), 32, ADDR_BROADCAST}, /* limited broadcast, before 240/4 */
        {V4(240, 0, 0, 0), 4, ADDR_RESERVED},         /* RFC 1112 "future use" */
};

static bool v4_in(uint32_t a, uint32_t net, unsigned len)
{
        uint32_t mask = len == 0 ? 0 : UINT32_MAX << (32 - len);
        return (a & mask) == net;
}

enum addr_class net_classify_ipv4(uint32_t addr_be)
{
        uint32_t a = ntohl(addr_be);

        for (size_t i = 0; i < ELEMENTSOF(v4_metadata); i++)
                if (a == v4_metadata[i])
                        return ADDR_METADATA;
        for (size_t i = 0; i < ELEMENTSOF(v4_ranges); i++)
                if (v4_in(a, v4_ranges[i].net, v4_ranges[i].len))
                        return v4_ranges[i].class;
        return ADDR_PUBLIC;
}

/* Reads 32 bits of an IPv6 address starting at byte off, in host order. */
static uint32_t v6_u32(const struct in6_addr *a, size_t off)
{
        const uint8_t *b = a->s6_addr;
        return ((uint32_t)b[off] << 24) | ((uint32_t)b[off + 1] << 16) | ((uint32_t)b[off + 2] << 8) | b[off + 3];
}

/* True if the first len bits of a equal those of prefix (len a multiple of 8
 * or not: the last partial byte is masked). */
static bool v6_in(const struct in6_addr *a, const uint8_t prefix[static 16], unsigned len)
{
        unsigned full = len / 8, rest = len % 8;

        if (memcmp(a->s6_addr, prefix, full) != 0)
                return false;
        if (rest == 0)
                return true;
        uint8_t mask = (uint8_t)(0xff << (8 - rest));
        return (a->s6_addr[full] & mask) == (prefix[full] & mask);
}

static bool all_zero(const uint8_t *p, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (p[i] != 0)
                        return false;
        return true;
}

/* The class of an embedded IPv4 address (host order) when it is not public,
 * else if_public. */
static enum addr_class embedded(uint32_t v4, enum addr_class if_public)
{
        enum addr_class c = net_classify_ipv4(htonl(v4));
        return c != ADDR_PUBLIC ? c : if_public;
}

static const uint8_t p_mapped[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
static const uint8_t p_translated[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
static const uint8_t p_nat64[16] = {0x00, 0x64, 0xff, 0x9b};
static const uint8_t p_nat64_local[16] = {0x00, 0x64, 0xff, 0x9b, 0x00, 0x01};
static const uint8_t p_teredo[16] = {0x20, 0x01, 0x00, 0x00}; /* 2001::/32 */
static const uint8_t p_ietf[16] = {0x20, 0x01, 0x00, 0x00};   /* 2001::/23, IETF protocol assignments */
static const uint8_t p_doc[16] = {0x20, 0x01, 0x0d, 0xb8};    /* 2001:db8::/32 documentation */
static const uint8_t p_doc2[16] = {0x3f, 0xff};               /* 3fff::/20 documentation (RFC 9637) */
static const uint8_t p_6to4[16] = {0x20, 0x02};               /* 2002::/16 */
static const uint8_t p_global[16] = {0x20};                   /* 2000::/3 */
static const uint8_t p_discard[16] = {0x01, 0x00};            /* 100::/64 (RFC 6666) */
static const uint8_t p_ula[16] = {0xfc};                      /* fc00::/7 */
static const uint8_t p_link_local[16] = {0xfe, 0x80};         /* fe80::/10 */
static const uint8_t p_site_local[16] = {0xfe, 0xc0};         /* fec0::/10, deprecated (RFC 3879) */
static const uint8_t p_multicast[16] = {0xff};                /* ff00::/8 */

/* Cloud metadata endpoints reachable over IPv6 (all inside fc00::/7). */
static const uint8_t v6_metadata[][16] = {
        {0xfd, 0x00, 0x0e, 0xc2, [14] = 0x02, [15] = 0x54}, /* fd00:ec2::254, AWS IMDS */
        {0xfd, 0x00, 0x0e, 0xc2, [15] = 0x23},              /* fd00:ec2::23, AWS EKS pod identity agent */
        {0xfd, 0x20, 0x00, 0xce, [14] = 0x02, [15] = 0x54}, /* fd20:ce::254, GCP metadata server */
};

enum addr_class net_classify_ipv6(const struct in6_addr *a)
{
        const uint8_t *b = a->s6_addr;

        if (all_zero(b, 15)) {
                if (b[15] == 0)
                        return ADDR_UNSPECIFIED;
                if (b[15] == 1)
                        return ADDR_LOOPBACK;
        }
        if (all_zero(b, 12)) /* IPv4-compatible (deprecated, RFC 4291) */
                return embedded(v6_u32(a, 12), ADDR_RESERVED);
        if (v6_in(a, p_mapped, 96) || v6_in(a, p_translated, 96))
                return embedded(v6_u32(a, 12), ADDR_RESERVED);

        if (v6_in(a, p_nat64, 96))
                return embedded(v6_u32(a, 12), ADDR_PUBLIC);
        if (v6_in(a, p_nat64_local, 48)) {
                enum addr_class c = embedded(v6_u32(a, 12), ADDR_PUBLIC);
                if (c != ADDR_PUBLIC)
                        return c;
                return all_zero(b + 6, 6) ? ADDR_PUBLIC : ADDR_RESERVED;
        }

        if (v6_in(a, p_teredo, 32)) {
                enum addr_class c = embedded(~v6_u32(a, 12), ADDR_PUBLIC);
                if (c != ADDR_PUBLIC)
                        return c;
                return embedded(v6_u32(a, 4), ADDR_RESERVED);
        }
        if (v6_in(a, p_ietf, 23)) /* ORCHID, benchmarking, anycast services, ... */
                return ADDR_RESERVED;
        if (v6_in(a, p_doc, 32) || v6_in(a, p_doc2, 20))
                return ADDR_RESERVED;
        if (v6_in(a, p_6to4, 16))
                return embedded(v6_u32(a, 2), ADDR_PUBLIC);
        if (v6_in(a, p_global, 3))
                return ADDR_PUBLIC;

        if (v6_in(a, p_ula, 7)) {
                for (size_t i = 0; i < ELEMENTSOF(v6_metadata); i++)
                        if (memcmp(b, v6_metadata[i], 16) == 0)
                                return ADDR_METADATA;
                return ADDR_ULA;
        }
        if (v6_in(a, p_link_local, 10))
                return ADDR_LINK_LOCAL;
        if (v6_in(a, p_site_local, 10))
                return ADDR_RESERVED;
        if (v6_in(a, p_multicast, 8))
                return ADDR_MULTICAST;
        if (v6_in(a, p_discard, 64))
                return ADDR_RESERVED;
        /* Unassigned space outside global unicast: nothing to connect to. */
        return ADDR_RESERVED;
}

/* Checks family and length; copies out of sa, which (coming from a child's
 * memory or a fuzzer) need not be aligned. */
static int sockaddr_family(const struct sockaddr *sa, size_t len, sa_family_t *ret_family)
{
        sa_family_t family;

        if (!sa || len < sizeof(sa_family_t))
                return -EINVAL;
        memcpy(&family, (const uint8_t *)sa + offsetof(struct sockaddr, sa_family), sizeof(family));
        if (family == AF_INET && len < sizeof(struct sockaddr_in))
                return -EINVAL;
        if (family == AF_INET6 && len < sizeof(struct sockaddr_in6))
                return -EINVAL;
        *ret_family = family;
        return 0;
}

int net_classify_sockaddr(const struct sockaddr *sa, size_t len)
{
        sa_family_t family;
        int r;

        r = sockaddr_family(sa, len, &family);
        if (r < 0)
                return r;
        if (family == AF_INET) {
                struct sockaddr_in sin;
                memcpy(&sin, sa, sizeof(sin));
                return (int)net_classify_ipv4(sin.sin_addr.s_addr);
        }
        if (family == AF_INET6) {
                struct sockaddr_in6 sin6;
                memcpy(&sin6, sa, sizeof(sin6));
                return (int)net_classify_ipv6(&sin6.sin6_addr);
        }
        return -EAFNOSUPPORT;
}

const char *net_addr_class_name(enum addr_class c)
{
        switch (c) {
        case ADDR_PUBLIC:
                return "public";
        case ADDR_UNSPECIFIED:
                return "unspecified";
        case ADDR_LOOPBACK:
                return "loopback";
        case ADDR_PRIVATE:
                return "private";
        case ADDR_CGNAT:
                return "cgnat";
        case ADDR_LINK_LOCAL:
                return "link-local";
        case ADDR_METADATA:
                return "metadata";
        case ADDR_ULA:
                return "ula";
        case ADDR_MULTICAST:
                return "multicast";
        case ADDR_BROADCAST:
                return "broadcast";
        case ADDR_RESERVED:
                return "reserved";
        }
        return "unknown";
}

/* --- the synthetic pool --- */

/* 198.18.0.0/15 (benchmarking) and fdc0:d0::/96 (a ULA prefix): no real
 * service is there, and the classifier refuses both, so a pool address that
 * somehow reached the real network would go nowhere. Offsets 0 and 1 are
 * skipped so that no name is the network's .0 or a router's customary .1. */
#define POOL_V4_BASE V4(198, 18, 0, 0)
#define POOL_FIRST   2u
static const uint8_t pool_v6_prefix[12] = {0xfd, 0xc0, 0x00, 0xd0};

/* An index out of range yields the pool's base address (offset 0), which
 * net_pool_lookup() does not map back to any name: a caller's bug then fails
 * closed as a refused connection. */
static uint32_t pool_offset(unsigned index)
{
        return index < NET_POOL_MAX ? POOL_FIRST + index : 0;
}

void net_pool_ipv4(unsigned index, struct in_addr *ret)
{
        ret->s_addr = htonl(POOL_V4_BASE + pool_offset(index));
}

void net_pool_ipv6(unsigned index, struct in6_addr *ret)
{
        uint32_t off = pool_offset(index);

        memcpy(ret->s6_addr, pool_v6_prefix, sizeof(pool_v6_prefix));
        ret->s6_addr[12] = (uint8_t)(off >> 24);
        ret->s6_addr[13] = (uint8_t)(off >> 16);
        ret->s6_addr[14] = (uint8_t)(off >> 8);
        ret->s6_addr[15] = (uint8_t)off;
}

/* The index for offset off from a pool base, or -ENOENT. */
static int pool_index(uint32_t off)
{
        if (off < POOL_FIRST || off - POOL_FIRST >= NET_POOL_MAX)
                return -ENOENT;
        return (int)(off - POOL_FIRST);
}

int net_pool_lookup(const struct sockaddr *sa, size_t len)
{
        sa_family_t family;
        int r;

        r = sockaddr_family(sa, len, &family);
        if (r < 0)
                return r;
        if (family == AF_INET) {
                struct sockaddr_in sin;
                memcpy(&sin, sa, sizeof(sin));
                uint32_t a = ntohl(sin.sin_addr.s_addr);
                /* Unsigned wrap-around makes addresses below the base huge. */
                return pool_index(a - POOL_V4_BASE);
        }
        if (family == AF_INET6) {
                struct sockaddr_in6 sin6;
                memcpy(&sin6, sa, sizeof(sin6));
                if (memcmp(sin6.sin6_addr.s6_addr, pool_v6_prefix, sizeof(pool_v6_prefix)) == 0)
                        return pool_index(v6_u32(&sin6.sin6_addr, 12));
                /* A dual-stack socket connecting to a pool IPv4 address. */
                if (memcmp(sin6.sin6_addr.s6_addr, p_mapped, 12) == 0)
                        return pool_index(v6_u32(&sin6.sin6_addr, 12) - POOL_V4_BASE);
                return -ENOENT;
        }
        return -ENOENT;
}
