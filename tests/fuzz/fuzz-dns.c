/* Fuzz target for the DNS stub's parser and response builder (net/dns.c).
 *
 * Every input is parsed as a query. A failure must leave the result
 * untouched and be one of the documented errors; the header-only error
 * response is then built for it. A success must give a sane question, and
 * every response built from it (NXDOMAIN, NODATA, an A or AAAA answer, and
 * each into a buffer of exactly the size needed and one byte short) is
 * decoded again here, independently of net/dns.c, and compared.
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

static uint16_t rd16(const uint8_t *p)
{
        return (uint16_t)((p[0] << 8) | p[1]);
}

/* Decodes the uncompressed name at pkt[off] into lower-case dotted text;
 * returns the offset past it. The response was built by us, so any
 * surprise here is a bug. */
static size_t decode_name(const uint8_t *pkt, size_t len, size_t off, char out[static 256])
{
        size_t n = 0;

        for (;;) {
                CHECK(off < len);
                uint8_t l = pkt[off++];
                if (l == 0)
                        break;
                CHECK(l <= 63);
                CHECK(off + l <= len);
                if (n > 0)
                        out[n++] = '.';
                CHECK(n + l < 256);
                for (size_t i = 0; i < l; i++) {
                        uint8_t c = pkt[off + i];
                        out[n++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
                }
                off += l;
        }
        out[n] = '\0';
        return off;
}

/* Builds one response into a buffer of exactly outsize bytes (so that the
 * address sanitizer sees any write past it). */
static ssize_t build(const uint8_t *query, const struct dns_question *q, enum dns_rcode rcode, const struct in_addr *a4,
                     const struct in6_addr *a6, size_t outsize, uint8_t **ret_out)
{
        uint8_t *out = xmalloc(outsize);
        ssize_t n = dns_build_response(query, q, rcode, a4, a6, 300, out, outsize);
        CHECK(n == -ENOBUFS || (n > 0 && (size_t)n <= outsize));
        *ret_out = out;
        return n;
}

static void check_response(const uint8_t *query, const struct dns_question *q, enum dns_rcode rcode,
                           const struct in_addr *a4, const struct in6_addr *a6)
{
        uint8_t *full = NULL, *exact = NULL, *shorter = NULL;
        char name[256];

        ssize_t n = build(query, q, rcode, a4, a6, DNS_MAX_PACKET, &full);
        CHECK(n >= 12);
        size_t len = (size_t)n;

        /* Header. */
        CHECK(rd16(full) == q->id);
        uint16_t flags = rd16(full + 2);
        CHECK(flags & 0x8000);              /* QR */
        CHECK(((flags >> 11) & 0xf) == 0);  /* opcode */
        CHECK(!!(flags & 0x0100) == q->rd); /* RD copied */
        CHECK((flags & 0xf) == rcode);
        CHECK(rd16(full + 4) == 1);
        CHECK(rd16(full + 6) == ((a4 || a6) ? 1 : 0));
        CHECK(rd16(full + 8) == 0);
        CHECK(rd16(full + 10) == (q->edns ? 1 : 0));

        /* Question: the query's bytes, naming what the parser returned. */
        CHECK(memcmp(full + 12, query + 12, q->question_end - 12) == 0);
        size_t off = decode_name(full, len, 12, name);
        CHECK(strcmp(name, q->name) == 0);
        CHECK(off + 4 == q->question_end);
        CHECK(rd16(full + off) == q->qtype);
        CHECK(rd16(full + off + 2) == 1);
        off += 4;

        if (a4 || a6) {
                size_t rdlen = a4 ? 4 : 16;
                CHECK(off + 12 + rdlen <= len);
                CHECK(rd16(full + off) == 0xc00c);
                CHECK(rd16(full + off + 2) == (a4 ? 1 : 28));
                CHECK(rd16(full + off + 4) == 1);
                CHECK(rd16(full + off + 6) == 0 && rd16(full + off + 8) == 300);
                CHECK(rd16(full + off + 10) == rdlen);
                CHECK(memcmp(full + off + 12, a4 ? (const void *)a4 : (const void *)a6, rdlen) == 0);
                off += 12 + rdlen;
        }
        if (q->edns) {
                static const uint8_t opt[11] = {0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0};
                CHECK(off + sizeof(opt) <= len);
                CHECK(memcmp(full + off, opt, sizeof(opt)) == 0);
                off += sizeof(opt);
        }
        CHECK(off == len);

        /* The same into exactly len bytes, and refused in one byte fewer. */
        CHECK(build(query, q, rcode, a4, a6, len, &exact) == n);
        CHECK(memcmp(exact, full, len) == 0);
        CHECK(build(query, q, rcode, a4, a6, len - 1, &shorter) == -ENOBUFS);

        free(full);
        free(exact);
        free(shorter);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct dns_question q, before;
        int r;

        memset(&q, 0x5a, sizeof(q));
        before = q;
        r = dns_parse_query(data, size, &q);
        CHECK(r == 0 || r == -EBADMSG || r == -EOPNOTSUPP);

        if (r < 0) {
                CHECK(memcmp(&q, &before, sizeof(q)) == 0);
                uint8_t *out = xmalloc(12);
                ssize_t n = dns_build_error(data, size, r == -EOPNOTSUPP ? DNS_NOTIMP : DNS_FORMERR, out, 12);
                if (size < 12 || (data[2] & 0x80)) {
                        CHECK(n == -EBADMSG);
                } else {
                        CHECK(n == 12);
                        CHECK(memcmp(out, data, 2) == 0);
                        CHECK(out[2] & 0x80);
                        CHECK((out[3] & 0xf) == (r == -EOPNOTSUPP ? DNS_NOTIMP : DNS_FORMERR));
                        for (size_t i = 4; i < 12; i++)
                                CHECK(out[i] == 0);
                }
                free(out);
                /* One byte short is refused without a write (the sanitizer watches). */
                if (n == 12) {
                        out = xmalloc(11);
                        CHECK(dns_build_error(data, size, DNS_FORMERR, out, 11) == -ENOBUFS);
                        free(out);
                }
                return 0;
        }

        /* A sane question. */
        size_t nlen = strnlen(q.name, sizeof(q.name));
        CHECK(nlen < sizeof(q.name) && nlen <= 253);
        for (size_t i = 0; i < nlen; i++) {
                char c = q.name[i];
                CHECK(c > 0x20 && c < 0x7f && !(c >= 'A' && c <= 'Z'));
                if (c == '.')
                        CHECK(i > 0 && i + 1 < nlen && q.name[i + 1] != '.');
        }
        CHECK(q.qclass == 1);
        CHECK(q.question_end >= 12 + 1 + 4 && q.question_end <= size);
        CHECK(q.question_end <= 12 + 255 + 4);
        CHECK(q.id == rd16(data));
        CHECK(q.rd == !!(data[2] & 0x01));

        struct in_addr a4;
        struct in6_addr a6;
        net_pool_ipv4((unsigned)(size % NET_POOL_MAX), &a4);
        net_pool_ipv6((unsigned)(size % NET_POOL_MAX), &a6);

        check_response(data, &q, DNS_NXDOMAIN, NULL, NULL);
        check_response(data, &q, DNS_REFUSED, NULL, NULL);
        check_response(data, &q, DNS_NOERROR, NULL, NULL);
        if (q.qtype == 1)
                check_response(data, &q, DNS_NOERROR, &a4, NULL);
        if (q.qtype == 28)
                check_response(data, &q, DNS_NOERROR, NULL, &a6);

        /* Misuse is refused, not half-built. */
        uint8_t out[DNS_MAX_PACKET];
        if (q.qtype != 1)
                CHECK(dns_build_response(data, &q, DNS_NOERROR, &a4, NULL, 1, out, sizeof(out)) == -EINVAL);
        if (q.qtype != 28)
                CHECK(dns_build_response(data, &q, DNS_NOERROR, NULL, &a6, 1, out, sizeof(out)) == -EINVAL);
        CHECK(dns_build_response(data, &q, DNS_NXDOMAIN, &a4, NULL, 1, out, sizeof(out)) == -EINVAL);
        return 0;
}
