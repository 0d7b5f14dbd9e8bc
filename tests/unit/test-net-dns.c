/* Unit tests for the DNS stub's wire format (net/dns.c): queries built by
 * hand, byte by byte, that must parse (A and AAAA, with and without EDNS,
 * the longest label and name, trailing bytes) or be refused with the right
 * error (every malformation the parser guards against), and responses that
 * are decoded again by a small decoder written here, independently of
 * net/dns.c, and checked field by field. */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <ctype.h>

#include "common/util.h"
#include "net/net.h"

/* --- building queries --- */

struct pkt {
        uint8_t b[2048];
        size_t len;
};

static void put8(struct pkt *p, uint8_t v)
{
        ck_assert_uint_lt(p->len, sizeof(p->b));
        p->b[p->len++] = v;
}

static void put16(struct pkt *p, uint16_t v)
{
        put8(p, (uint8_t)(v >> 8));
        put8(p, (uint8_t)v);
}

static void put_bytes(struct pkt *p, const void *data, size_t n)
{
        for (size_t i = 0; i < n; i++)
                put8(p, ((const uint8_t *)data)[i]);
}

static void header(struct pkt *p, uint16_t id, uint16_t flags, uint16_t qd, uint16_t an, uint16_t ns, uint16_t ar)
{
        p->len = 0;
        put16(p, id);
        put16(p, flags);
        put16(p, qd);
        put16(p, an);
        put16(p, ns);
        put16(p, ar);
}

/* A dotted name as labels (no escapes; "" is the root). */
static void put_name(struct pkt *p, const char *name)
{
        const char *s = name;
        while (*s) {
                const char *dot = strchr(s, '.');
                size_t l = dot ? (size_t)(dot - s) : strlen(s);
                put8(p, (uint8_t)l);
                put_bytes(p, s, l);
                s += l;
                if (*s == '.')
                        s++;
        }
        put8(p, 0);
}

/* An OPT record: root owner, type 41, udp size, version 0, no DO. */
static void put_opt(struct pkt *p, uint16_t udp, const uint8_t *rdata, uint16_t rdlen)
{
        put8(p, 0);
        put16(p, 41);
        put16(p, udp);
        put16(p, 0);
        put16(p, 0);
        put16(p, rdlen);
        put_bytes(p, rdata, rdlen);
}

#define FLAG_RD 0x0100

/* A standard query for name/type, class IN, RD set, with EDNS or without. */
static void query(struct pkt *p, uint16_t id, const char *name, uint16_t qtype, bool edns)
{
        header(p, id, FLAG_RD, 1, 0, 0, edns ? 1 : 0);
        put_name(p, name);
        put16(p, qtype);
        put16(p, 1);
        if (edns)
                put_opt(p, 4096, NULL, 0);
}

static int parse(const struct pkt *p, struct dns_question *q)
{
        return dns_parse_query(p->b, p->len, q);
}

/* Parses p expecting err; the result must be left untouched. */
static void expect_error(const struct pkt *p, int err, const char *what)
{
        struct dns_question q, before;
        memset(&q, 0x77, sizeof(q));
        before = q;
        int r = parse(p, &q);
        ck_assert_msg(r == err, "%s: expected %d (%s), got %d", what, err, strerror(-err), r);
        ck_assert_msg(memcmp(&q, &before, sizeof(q)) == 0, "%s: result written on failure", what);
}

/* --- an independent decoder for responses --- */

struct decoded {
        uint16_t id, flags, qd, an, ns, ar;
        char qname[256];
        uint16_t qtype, qclass;
        /* the answer, when an == 1 */
        uint16_t an_ptr, an_type, an_class, an_rdlen;
        uint32_t an_ttl;
        uint8_t an_rdata[16];
        /* the OPT record, when ar == 1 */
        uint16_t opt_type, opt_udp, opt_rdlen;
        uint32_t opt_ttl;
        uint8_t opt_owner;
        size_t end;
};

static uint16_t g16(const uint8_t *b, size_t len, size_t off)
{
        ck_assert_uint_le(off + 2, len);
        return (uint16_t)((b[off] << 8) | b[off + 1]);
}

static uint32_t g32(const uint8_t *b, size_t len, size_t off)
{
        return ((uint32_t)g16(b, len, off) << 16) | g16(b, len, off + 2);
}

static void decode(const uint8_t *b, size_t len, struct decoded *d)
{
        size_t off = 12, n = 0;

        memset(d, 0, sizeof(*d));
        d->id = g16(b, len, 0);
        d->flags = g16(b, len, 2);
        d->qd = g16(b, len, 4);
        d->an = g16(b, len, 6);
        d->ns = g16(b, len, 8);
        d->ar = g16(b, len, 10);
        ck_assert_uint_eq(d->qd, 1);
        ck_assert_uint_le(d->an, 1);
        ck_assert_uint_le(d->ar, 1);

        for (;;) {
                ck_assert_uint_lt(off, len);
                uint8_t l = b[off++];
                if (l == 0)
                        break;
                ck_assert_uint_le(l, 63);
                ck_assert_uint_le(off + l, len);
                if (n)
                        d->qname[n++] = '.';
                for (size_t i = 0; i < l; i++)
                        d->qname[n++] = (char)tolower(b[off + i]);
                off += l;
        }
        d->qtype = g16(b, len, off);
        d->qclass = g16(b, len, off + 2);
        off += 4;
        if (d->an) {
                d->an_ptr = g16(b, len, off);
                d->an_type = g16(b, len, off + 2);
                d->an_class = g16(b, len, off + 4);
                d->an_ttl = g32(b, len, off + 6);
                d->an_rdlen = g16(b, len, off + 10);
                ck_assert_uint_le(d->an_rdlen, 16);
                ck_assert_uint_le(off + 12 + d->an_rdlen, len);
                memcpy(d->an_rdata, b + off + 12, d->an_rdlen);
                off += 12 + d->an_rdlen;
        }
        if (d->ar) {
                ck_assert_uint_lt(off, len);
                d->opt_owner = b[off];
                d->opt_type = g16(b, len, off + 1);
                d->opt_udp = g16(b, len, off + 3);
                d->opt_ttl = g32(b, len, off + 5);
                d->opt_rdlen = g16(b, len, off + 9);
                off += 11 + d->opt_rdlen;
        }
        d->end = off;
        ck_assert_uint_eq(d->end, len);
}

/* Flags every response of ours has: QR, AA, RA, opcode 0, and the rcode. */
static void check_flags(const struct decoded *d, bool rd, unsigned rcode)
{
        ck_assert_uint_eq(d->flags & 0x8000, 0x8000);
        ck_assert_uint_eq((d->flags >> 11) & 0xf, 0);
        ck_assert_uint_eq(d->flags & 0x0400, 0x0400);
        ck_assert_uint_eq(d->flags & 0x0200, 0); /* TC */
        ck_assert_uint_eq(!!(d->flags & 0x0100), rd);
        ck_assert_uint_eq(d->flags & 0x0080, 0x0080);
        ck_assert_uint_eq(d->flags & 0xf, rcode);
}

/* --- parsing: accepted --- */

START_TEST(test_parse_a)
{
        struct pkt p;
        struct dns_question q;

        query(&p, 0xbeef, "API.Example.COM", 1, false);
        ck_assert_int_eq(parse(&p, &q), 0);
        ck_assert_str_eq(q.name, "api.example.com");
        ck_assert_uint_eq(q.qtype, 1);
        ck_assert_uint_eq(q.qclass, 1);
        ck_assert_uint_eq(q.id, 0xbeef);
        ck_assert(q.rd);
        ck_assert(!q.edns);
        ck_assert_uint_eq(q.question_end, 12 + 17 + 4);
        ck_assert_uint_eq(q.question_end, p.len);
}
END_TEST

START_TEST(test_parse_aaaa_edns)
{
        struct pkt p;
        struct dns_question q;
        /* A client cookie option (code 10, 8 bytes), as dig sends. */
        static const uint8_t cookie[] = {0, 10, 0, 8, 1, 2, 3, 4, 5, 6, 7, 8};

        header(&p, 7, 0, 1, 0, 0, 1);
        put_name(&p, "api.example.com");
        put16(&p, 28);
        put16(&p, 1);
        size_t qend = p.len;
        put_opt(&p, 1232, cookie, sizeof(cookie));
        ck_assert_int_eq(parse(&p, &q), 0);
        ck_assert_str_eq(q.name, "api.example.com");
        ck_assert_uint_eq(q.qtype, 28);
        ck_assert(!q.rd);
        ck_assert(q.edns);
        ck_assert_uint_eq(q.question_end, qend);

        query(&p, 8, "api.example.com", 28, false);
        ck_assert_int_eq(parse(&p, &q), 0);
        ck_assert(!q.edns);
        query(&p, 9, "api.example.com", 1, true);
        ck_assert_int_eq(parse(&p, &q), 0);
        ck_assert(q.edns);
        ck_assert_uint_eq(q.qtype, 1);
}
END_TEST

START_TEST(test_parse_edges)
{
        struct pkt p;
        struct dns_question q;
        char label63[64], name255[256];

        /* The root, for any type. */
        query(&p, 1, "", 2, false);
        ck_assert_int_eq(parse(&p, &q), 0);
        ck_assert_str_eq(q.name, "");
        ck_assert_uint_eq(q.question_end, 12 + 1 + 4);

        /* A 63-byte label. */
        memset(label63, 'A', 63);
        label63[63] = '\0';
        query(&p, 1, label63, 1, false);
        ck_assert_int_eq(parse(&p, &q), 0);
        ck_assert_uint_eq(strlen(q.name), 63);
        ck_assert_int_eq(q.name[0], 'a');

        /* A name of 255 bytes on the wire: 3 x (1+63) + (1+61) + 1, 253 as text. */
        snprintf(name255, sizeof(name255), "%.63s.%.63s.%.63s.%.61s", label63, label63, label63, label63);
        query(&p, 1, name255, 1, false);
        ck_assert_uint_eq(p.len, 12 + 255 + 4);
        ck_assert_int_eq(parse(&p, &q), 0);
        ck_assert_uint_eq(strlen(q.name), 253);

        /* Other types and any printable byte but '.' and space. */
        query(&p, 1, "_dmarc.x-y.example", 16, false);
        ck_assert_int_eq(parse(&p, &q), 0);
        ck_assert_str_eq(q.name, "_dmarc.x-y.example");
        query(&p, 1, "a*b~c!", 255, false);
        ck_assert_int_eq(parse(&p, &q), 0);
        ck_assert_str_eq(q.name, "a*b~c!");

        /* Only ASCII letters are lowered. */
        query(&p, 1, "[Z]@", 1, false);
        ck_assert_int_eq(parse(&p, &q), 0);
        ck_assert_str_eq(q.name, "[z]@");
}
END_TEST

/* Bytes after the question, or after the OPT record, are ignored (some
 * stubs pad); the question still ends where it ends. */
START_TEST(test_parse_trailing)
{
        struct pkt p;
        struct dns_question q;

        query(&p, 1, "api.example.com", 1, false);
        size_t qend = p.len;
        put_bytes(&p, "\xde\xad\xbe\xef\x00\xc0\x0c", 7);
        ck_assert_int_eq(parse(&p, &q), 0);
        ck_assert_uint_eq(q.question_end, qend);
        ck_assert(!q.edns);

        query(&p, 1, "api.example.com", 1, true);
        put_bytes(&p, "\x01\x02\x03", 3);
        ck_assert_int_eq(parse(&p, &q), 0);
        ck_assert_uint_eq(q.question_end, qend);
        ck_assert(q.edns);
}
END_TEST

/* --- parsing: refused --- */

START_TEST(test_parse_header_errors)
{
        struct pkt p;

        query(&p, 1, "api.example.com", 1, false);
        for (size_t l = 0; l < 12; l++) {
                struct pkt t = p;
                t.len = l;
                expect_error(&t, -EBADMSG, "truncated header");
        }
        ck_assert_int_eq(dns_parse_query(NULL, 0, &(struct dns_question){}), -EBADMSG);

        /* QR=1: a response, never answered. */
        p.b[2] |= 0x80;
        expect_error(&p, -EBADMSG, "QR=1");

        /* Opcodes other than QUERY: IQUERY, STATUS, NOTIFY, UPDATE. */
        static const unsigned opcodes[] = {1, 2, 4, 5, 15};
        for (size_t i = 0; i < ELEMENTSOF(opcodes); i++) {
                query(&p, 1, "api.example.com", 1, false);
                p.b[2] = (uint8_t)((p.b[2] & 0x87) | (opcodes[i] << 3));
                expect_error(&p, -EOPNOTSUPP, "opcode");
        }

        /* Counts. */
        static const struct {
                size_t off;
                uint16_t v;
                const char *what;
        } counts[] = {
                {4, 0, "QDCOUNT 0"}, {4, 2, "QDCOUNT 2"},  {4, 0xffff, "QDCOUNT 65535"},  {6, 1, "ANCOUNT 1"},
                {8, 1, "NSCOUNT 1"}, {10, 2, "ARCOUNT 2"}, {10, 0xffff, "ARCOUNT 65535"},
        };
        for (size_t i = 0; i < ELEMENTSOF(counts); i++) {
                query(&p, 1, "api.example.com", 1, false);
                p.b[counts[i].off] = (uint8_t)(counts[i].v >> 8);
                p.b[counts[i].off + 1] = (uint8_t)counts[i].v;
                expect_error(&p, -EBADMSG, counts[i].what);
        }
}
END_TEST

START_TEST(test_parse_name_errors)
{
        struct pkt p;
        char label64[65], name256[300];

        /* Truncated anywhere in the name or the type and class. */
        query(&p, 1, "api.example.com", 1, false);
        for (size_t l = 12; l < p.len; l++) {
                struct pkt t = p;
                t.len = l;
                expect_error(&t, -EBADMSG, "truncated question");
        }

        /* A 64-byte label: its length byte is 0x40, an extended label type. */
        memset(label64, 'a', 64);
        label64[64] = '\0';
        query(&p, 1, label64, 1, false);
        expect_error(&p, -EBADMSG, "label of 64");

        /* 256 bytes on the wire: 3 x (1+63) + (1+62) + 1. */
        snprintf(name256, sizeof(name256), "%.63s.%.63s.%.63s.%.62s", label64, label64, label64, label64);
        query(&p, 1, name256, 1, false);
        expect_error(&p, -EBADMSG, "name of 256");
        /* Many short labels past 255. */
        header(&p, 1, 0, 1, 0, 0, 0);
        for (int i = 0; i < 128; i++)
                put_bytes(&p, "\x01x", 2);
        put8(&p, 0);
        put16(&p, 1);
        put16(&p, 1);
        expect_error(&p, -EBADMSG, "128 labels");

        /* Compression pointers: to the header, to itself, after a label. */
        header(&p, 1, 0, 1, 0, 0, 0);
        put16(&p, 0xc00c);
        put16(&p, 1);
        put16(&p, 1);
        expect_error(&p, -EBADMSG, "pointer");
        header(&p, 1, 0, 1, 0, 0, 0);
        put_bytes(&p,
                  "\x03"
                  "api",
                  4);
        put16(&p, 0xc00c);
        put16(&p, 1);
        put16(&p, 1);
        expect_error(&p, -EBADMSG, "pointer after a label");
        header(&p, 1, 0, 1, 0, 0, 0);
        put_bytes(&p,
                  "\x03"
                  "api\x80\x00",
                  6);
        put16(&p, 1);
        put16(&p, 1);
        expect_error(&p, -EBADMSG, "label type 0x80");

        /* Bytes a listed name never has. */
        static const struct {
                const char *wire;
                size_t len;
                const char *what;
        } bad[] = {
                {"\x03"
                 "a\0b",
                 4, "NUL in a label"},
                {"\x03"
                 "a.b",
                 4, "dot in a label"},
                {"\x03"
                 "a b",
                 4, "space in a label"},
                {"\x03"
                 "a\x7f"
                 "b",
                 4, "DEL in a label"},
                {"\x03"
                 "a\x80"
                 "b",
                 4, "high byte in a label"},
                {"\x03"
                 "a\n"
                 "b",
                 4, "newline in a label"},
                {"\x02"
                 "\xc3\xa9",
                 3, "UTF-8 in a label"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                header(&p, 1, 0, 1, 0, 0, 0);
                put_bytes(&p,
                          "\x07"
                          "example",
                          8);
                put_bytes(&p, bad[i].wire, bad[i].len);
                put8(&p, 0);
                put16(&p, 1);
                put16(&p, 1);
                expect_error(&p, -EBADMSG, bad[i].what);
        }
}
END_TEST

START_TEST(test_parse_class_errors)
{
        struct pkt p;
        static const uint16_t classes[] = {3 /* CH */, 4 /* HS */, 254 /* NONE */, 255 /* ANY */, 0};

        for (size_t i = 0; i < ELEMENTSOF(classes); i++) {
                header(&p, 1, 0, 1, 0, 0, 0);
                put_name(&p, "version.bind");
                put16(&p, 16);
                put16(&p, classes[i]);
                expect_error(&p, -EOPNOTSUPP, "class");
        }
        /* A malformed packet is FORMERR even when its class is not IN. */
        header(&p, 1, 0, 1, 0, 0, 1);
        put_name(&p, "version.bind");
        put16(&p, 16);
        put16(&p, 3);
        expect_error(&p, -EBADMSG, "class CH with a missing OPT");
}
END_TEST

START_TEST(test_parse_additional_errors)
{
        struct pkt p;
        static const uint8_t short_opt[] = {0, 10, 0, 8, 1, 2, 3, 4};

        /* ARCOUNT 1 with nothing there, or a truncated OPT. */
        query(&p, 1, "api.example.com", 1, true);
        size_t full = p.len;
        for (size_t l = full - 11; l < full; l++) {
                struct pkt t = p;
                t.len = l;
                expect_error(&t, -EBADMSG, "truncated OPT");
        }

        /* A record that is not OPT: an A record, a TSIG-like one. */
        header(&p, 1, 0, 1, 0, 0, 1);
        put_name(&p, "api.example.com");
        put16(&p, 1);
        put16(&p, 1);
        put16(&p, 0xc00c);
        put16(&p, 1);
        put16(&p, 1);
        put16(&p, 0);
        put16(&p, 60);
        put16(&p, 4);
        put_bytes(&p, "\x01\x02\x03\x04", 4);
        expect_error(&p, -EBADMSG, "A record in additional");

        header(&p, 1, 0, 1, 0, 0, 1);
        put_name(&p, "api.example.com");
        put16(&p, 1);
        put16(&p, 1);
        put8(&p, 0);
        put16(&p, 250); /* TSIG */
        put16(&p, 255);
        put16(&p, 0);
        put16(&p, 0);
        put16(&p, 0);
        expect_error(&p, -EBADMSG, "TSIG in additional");

        /* OPT with an owner that is not the root. */
        header(&p, 1, 0, 1, 0, 0, 1);
        put_name(&p, "api.example.com");
        put16(&p, 1);
        put16(&p, 1);
        put_bytes(&p, "\x01x\x00", 3);
        put16(&p, 41);
        put16(&p, 4096);
        put16(&p, 0);
        put16(&p, 0);
        put16(&p, 0);
        expect_error(&p, -EBADMSG, "OPT owner not root");

        /* RDATA longer than the packet; an option longer than the RDATA; a
         * partial option header. */
        query(&p, 1, "api.example.com", 1, true);
        p.b[p.len - 1] = 4;
        expect_error(&p, -EBADMSG, "OPT rdlength past the end");

        header(&p, 1, 0, 1, 0, 0, 1);
        put_name(&p, "api.example.com");
        put16(&p, 1);
        put16(&p, 1);
        put_opt(&p, 4096, short_opt, sizeof(short_opt));
        expect_error(&p, -EBADMSG, "option past the RDATA");

        header(&p, 1, 0, 1, 0, 0, 1);
        put_name(&p, "api.example.com");
        put16(&p, 1);
        put16(&p, 1);
        put_opt(&p, 4096, short_opt, 3);
        expect_error(&p, -EBADMSG, "partial option header");

        /* EDNS version 1. */
        query(&p, 1, "api.example.com", 1, true);
        p.b[p.len - 11 + 6] = 1;
        expect_error(&p, -EBADMSG, "EDNS version 1");
}
END_TEST

/* --- responses --- */

static ssize_t respond(const struct pkt *p, const struct dns_question *q, enum dns_rcode rcode,
                       const struct in_addr *a4, const struct in6_addr *a6, uint8_t *out, size_t outsize)
{
        return dns_build_response(p->b, q, rcode, a4, a6, 300, out, outsize);
}

START_TEST(test_response_nxdomain)
{
        struct pkt p;
        struct dns_question q;
        uint8_t out[DNS_MAX_PACKET];
        struct decoded d;

        query(&p, 0x1234, "Blocked.Example.NET", 1, false);
        ck_assert_int_eq(parse(&p, &q), 0);
        ssize_t n = respond(&p, &q, DNS_NXDOMAIN, NULL, NULL, out, sizeof(out));
        ck_assert_int_eq(n, (ssize_t)p.len);
        decode(out, (size_t)n, &d);
        ck_assert_uint_eq(d.id, 0x1234);
        check_flags(&d, true, DNS_NXDOMAIN);
        ck_assert_uint_eq(d.an, 0);
        ck_assert_uint_eq(d.ns, 0);
        ck_assert_uint_eq(d.ar, 0);
        ck_assert_str_eq(d.qname, "blocked.example.net");
        ck_assert_uint_eq(d.qtype, 1);
        ck_assert_uint_eq(d.qclass, 1);
        /* The question is echoed byte for byte, case included (0x20 bits). */
        ck_assert_mem_eq(out + 12, p.b + 12, q.question_end - 12);

        n = respond(&p, &q, DNS_REFUSED, NULL, NULL, out, sizeof(out));
        decode(out, (size_t)n, &d);
        check_flags(&d, true, DNS_REFUSED);
}
END_TEST

START_TEST(test_response_a)
{
        struct pkt p;
        struct dns_question q;
        uint8_t out[DNS_MAX_PACKET];
        struct decoded d;
        struct in_addr a4;

        net_pool_ipv4(3, &a4);
        query(&p, 42, "API.example.com", 1, false);
        ck_assert_int_eq(parse(&p, &q), 0);
        ssize_t n = respond(&p, &q, DNS_NOERROR, &a4, NULL, out, sizeof(out));
        ck_assert_int_eq(n, (ssize_t)(p.len + 16));
        decode(out, (size_t)n, &d);
        ck_assert_uint_eq(d.id, 42);
        check_flags(&d, true, DNS_NOERROR);
        ck_assert_uint_eq(d.an, 1);
        ck_assert_uint_eq(d.ar, 0);
        ck_assert_uint_eq(d.an_ptr, 0xc00c);
        ck_assert_uint_eq(d.an_type, 1);
        ck_assert_uint_eq(d.an_class, 1);
        ck_assert_uint_eq(d.an_ttl, 300);
        ck_assert_uint_eq(d.an_rdlen, 4);
        ck_assert_mem_eq(d.an_rdata, "\xc6\x12\x00\x05", 4); /* 198.18.0.5 */

        /* TTL in full 32 bits. */
        n = dns_build_response(p.b, &q, DNS_NOERROR, &a4, NULL, 0x89abcdef, out, sizeof(out));
        decode(out, (size_t)n, &d);
        ck_assert_uint_eq(d.an_ttl, 0x89abcdef);
}
END_TEST

START_TEST(test_response_aaaa)
{
        struct pkt p;
        struct dns_question q;
        uint8_t out[DNS_MAX_PACKET];
        struct decoded d;
        struct in6_addr a6, expect;

        net_pool_ipv6(0, &a6);
        ck_assert_int_eq(inet_pton(AF_INET6, "fdc0:d0::2", &expect), 1);
        header(&p, 99, 0, 1, 0, 0, 0);
        put_name(&p, "api.example.com");
        put16(&p, 28);
        put16(&p, 1);
        ck_assert_int_eq(parse(&p, &q), 0);
        ssize_t n = respond(&p, &q, DNS_NOERROR, NULL, &a6, out, sizeof(out));
        ck_assert_int_eq(n, (ssize_t)(p.len + 28));
        decode(out, (size_t)n, &d);
        check_flags(&d, false, DNS_NOERROR);
        ck_assert_uint_eq(d.an, 1);
        ck_assert_uint_eq(d.an_type, 28);
        ck_assert_uint_eq(d.an_rdlen, 16);
        ck_assert_mem_eq(d.an_rdata, expect.s6_addr, 16);
}
END_TEST

START_TEST(test_response_nodata)
{
        struct pkt p;
        struct dns_question q;
        uint8_t out[DNS_MAX_PACKET];
        struct decoded d;

        query(&p, 5, "api.example.com", 28, false);
        ck_assert_int_eq(parse(&p, &q), 0);
        ssize_t n = respond(&p, &q, DNS_NOERROR, NULL, NULL, out, sizeof(out));
        ck_assert_int_eq(n, (ssize_t)p.len);
        decode(out, (size_t)n, &d);
        check_flags(&d, true, DNS_NOERROR);
        ck_assert_uint_eq(d.an, 0);
        ck_assert_uint_eq(d.qtype, 28);
}
END_TEST

START_TEST(test_response_edns)
{
        struct pkt p;
        struct dns_question q;
        uint8_t out[DNS_MAX_PACKET];
        struct decoded d;
        struct in_addr a4;

        net_pool_ipv4(0, &a4);
        query(&p, 6, "api.example.com", 1, true);
        ck_assert_int_eq(parse(&p, &q), 0);

        static const enum dns_rcode rcodes[] = {DNS_NOERROR, DNS_NXDOMAIN, DNS_REFUSED, DNS_SERVFAIL};
        for (size_t i = 0; i < ELEMENTSOF(rcodes); i++) {
                bool answer = rcodes[i] == DNS_NOERROR;
                ssize_t n = respond(&p, &q, rcodes[i], answer ? &a4 : NULL, NULL, out, sizeof(out));
                ck_assert_int_eq(n, (ssize_t)(q.question_end + (answer ? 16 : 0) + 11));
                decode(out, (size_t)n, &d);
                check_flags(&d, true, rcodes[i]);
                ck_assert_uint_eq(d.an, answer ? 1 : 0);
                ck_assert_uint_eq(d.ar, 1);
                ck_assert_uint_eq(d.opt_owner, 0);
                ck_assert_uint_eq(d.opt_type, 41);
                ck_assert_uint_eq(d.opt_udp, 1232);
                ck_assert_uint_eq(d.opt_ttl, 0);
                ck_assert_uint_eq(d.opt_rdlen, 0);
        }
}
END_TEST

START_TEST(test_response_bounds)
{
        struct pkt p;
        struct dns_question q;
        uint8_t out[DNS_MAX_PACKET + 16];
        struct in_addr a4;
        struct in6_addr a6;

        net_pool_ipv4(0, &a4);
        net_pool_ipv6(0, &a6);
        query(&p, 6, "api.example.com", 1, true);
        ck_assert_int_eq(parse(&p, &q), 0);
        size_t need = q.question_end + 16 + 11;

        /* Every size short of the need is refused, and nothing is written
         * at or past outsize. */
        for (size_t size = 0; size < need; size++) {
                memset(out, 0xee, sizeof(out));
                ck_assert_int_eq(respond(&p, &q, DNS_NOERROR, &a4, NULL, out, size), -ENOBUFS);
                for (size_t k = size; k < sizeof(out); k++)
                        ck_assert_uint_eq(out[k], 0xee);
        }
        memset(out, 0xee, sizeof(out));
        ck_assert_int_eq(respond(&p, &q, DNS_NOERROR, &a4, NULL, out, need), (ssize_t)need);
        for (size_t k = need; k < sizeof(out); k++)
                ck_assert_uint_eq(out[k], 0xee);

        /* Misuse: an answer of the other type, two answers, an answer with an error. */
        ck_assert_int_eq(respond(&p, &q, DNS_NOERROR, NULL, &a6, out, sizeof(out)), -EINVAL);
        ck_assert_int_eq(respond(&p, &q, DNS_NOERROR, &a4, &a6, out, sizeof(out)), -EINVAL);
        ck_assert_int_eq(respond(&p, &q, DNS_NXDOMAIN, &a4, NULL, out, sizeof(out)), -EINVAL);
        ck_assert_int_eq(respond(&p, &q, (enum dns_rcode)16, NULL, NULL, out, sizeof(out)), -EINVAL);
        struct dns_question bogus = q;
        bogus.question_end = 5;
        ck_assert_int_eq(respond(&p, &bogus, DNS_NXDOMAIN, NULL, NULL, out, sizeof(out)), -EINVAL);
        bogus.question_end = 12 + 260;
        ck_assert_int_eq(respond(&p, &bogus, DNS_NXDOMAIN, NULL, NULL, out, sizeof(out)), -EINVAL);
}
END_TEST

/* The largest response: a 255-byte name, AAAA, EDNS. */
START_TEST(test_response_largest)
{
        struct pkt p;
        struct dns_question q;
        uint8_t out[DNS_MAX_PACKET];
        struct decoded d;
        struct in6_addr a6;
        char label63[64], name255[256];

        memset(label63, 'q', 63);
        label63[63] = '\0';
        snprintf(name255, sizeof(name255), "%.63s.%.63s.%.63s.%.61s", label63, label63, label63, label63);
        net_pool_ipv6(NET_POOL_MAX - 1, &a6);
        query(&p, 6, name255, 28, true);
        ck_assert_int_eq(parse(&p, &q), 0);
        ssize_t n = respond(&p, &q, DNS_NOERROR, NULL, &a6, out, sizeof(out));
        ck_assert_int_eq(n, 12 + 259 + 28 + 11);
        ck_assert_int_le(n, 512);
        decode(out, (size_t)n, &d);
        ck_assert_str_eq(d.qname, name255);
        ck_assert_mem_eq(d.an_rdata, a6.s6_addr, 16);
}
END_TEST

START_TEST(test_build_error)
{
        struct pkt p;
        uint8_t out[32];

        /* FORMERR for a packet whose question is broken: header only. */
        header(&p, 0xabcd, FLAG_RD, 1, 0, 0, 0);
        put16(&p, 0xc00c);
        ck_assert_int_eq(parse(&p, &(struct dns_question){}), -EBADMSG);
        memset(out, 0xee, sizeof(out));
        ck_assert_int_eq(dns_build_error(p.b, p.len, DNS_FORMERR, out, sizeof(out)), 12);
        ck_assert_mem_eq(out, "\xab\xcd\x81\x81\0\0\0\0\0\0\0\0", 12);
        ck_assert_uint_eq(out[12], 0xee);

        /* NOTIMP echoes the opcode. */
        query(&p, 0x0102, "api.example.com", 1, false);
        p.b[2] = (uint8_t)((p.b[2] & 0x87) | (5 << 3)); /* UPDATE */
        ck_assert_int_eq(parse(&p, &(struct dns_question){}), -EOPNOTSUPP);
        ck_assert_int_eq(dns_build_error(p.b, p.len, DNS_NOTIMP, out, 12), 12);
        ck_assert_mem_eq(out, "\x01\x02\xa9\x84\0\0\0\0\0\0\0\0", 12);

        /* Short, a response, no room. */
        ck_assert_int_eq(dns_build_error(p.b, 11, DNS_FORMERR, out, sizeof(out)), -EBADMSG);
        ck_assert_int_eq(dns_build_error(p.b, 0, DNS_FORMERR, out, sizeof(out)), -EBADMSG);
        p.b[2] |= 0x80;
        ck_assert_int_eq(dns_build_error(p.b, p.len, DNS_FORMERR, out, sizeof(out)), -EBADMSG);
        p.b[2] &= 0x7f;
        memset(out, 0xee, sizeof(out));
        ck_assert_int_eq(dns_build_error(p.b, p.len, DNS_FORMERR, out, 11), -ENOBUFS);
        ck_assert_uint_eq(out[0], 0xee);
}
END_TEST

static Suite *dns_suite(void)
{
        Suite *s = suite_create("net-dns");
        TCase *tc;

        tc = tcase_create("parse");
        tcase_add_test(tc, test_parse_a);
        tcase_add_test(tc, test_parse_aaaa_edns);
        tcase_add_test(tc, test_parse_edges);
        tcase_add_test(tc, test_parse_trailing);
        tcase_add_test(tc, test_parse_header_errors);
        tcase_add_test(tc, test_parse_name_errors);
        tcase_add_test(tc, test_parse_class_errors);
        tcase_add_test(tc, test_parse_additional_errors);
        suite_add_tcase(s, tc);

        tc = tcase_create("respond");
        tcase_add_test(tc, test_response_nxdomain);
        tcase_add_test(tc, test_response_a);
        tcase_add_test(tc, test_response_aaaa);
        tcase_add_test(tc, test_response_nodata);
        tcase_add_test(tc, test_response_edns);
        tcase_add_test(tc, test_response_bounds);
        tcase_add_test(tc, test_response_largest);
        tcase_add_test(tc, test_build_error);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(dns_suite());
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
