/* The DNS stub's wire format: parsing a query and building its response.
 * Pure functions, no I/O. The query comes from the sandbox and is untrusted:
 * every read is checked against len, nothing is allocated, and anything the
 * stub does not need is refused rather than interpreted.
 *
 * What is accepted: a standard query (QR 0, OPCODE 0) with exactly one
 * question of class IN, no answer or authority records, and at most one
 * additional record, which must be a well-formed EDNS(0) OPT record. Bytes
 * after the question (or after the OPT record) are ignored: the header's
 * counts say where the message ends, and some stubs pad. */
#include "config.h"

#include "common/util.h"
#include "net/net.h"

#define DNS_HEADER_SIZE 12
#define DNS_TYPE_A      1
#define DNS_TYPE_AAAA   28
#define DNS_TYPE_OPT    41
#define DNS_CLASS_IN    1
#define DNS_PTR_QNAME   0xc00c /* a compression pointer to offset 12, the question's name */
#define DNS_EDNS_SIZE   DNS_MAX_PACKET

/* Header flag bits (second 16-bit word). */
#define DNS_QR         0x8000
#define DNS_OPCODE(f)  (((f) >> 11) & 0xf)
#define DNS_AA         0x0400
#define DNS_RD         0x0100
#define DNS_RA         0x0080
#define DNS_RCODE_MASK 0x000f

static uint16_t get16(const uint8_t *p)
{
        return (uint16_t)((p[0] << 8) | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
        p[0] = (uint8_t)(v >> 8);
        p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
        put16(p, (uint16_t)(v >> 16));
        put16(p + 2, (uint16_t)v);
}

/* A byte allowed in a label: printable ASCII other than space and '.'. The
 * allow list holds only LDH names, so refusing the rest refuses nothing it
 * could match, and keeps what the audit log records unambiguous (a '.' in a
 * label would make two different names print alike). */
static bool label_byte_ok(uint8_t c)
{
        return c > 0x20 && c < 0x7f && c != '.';
}

/* Reads the uncompressed name at pkt[*off], writes it lower-cased in dotted
 * form into name (256 bytes), and advances *off past it. */
static int parse_name(const uint8_t *pkt, size_t len, size_t *off, char name[static 256])
{
        size_t p = *off, wire = 0, n = 0;

        for (;;) {
                if (p >= len)
                        return -EBADMSG;
                uint8_t l = pkt[p++];
                wire++;
                if (l == 0)
                        break;
                /* 0xc0 is a compression pointer, 0x40 and 0x80 extended
                 * label types (RFC 6891 retired them): none belongs here. */
                if (l & 0xc0)
                        return -EBADMSG;
                wire += l;
                if (wire + 1 > 255) /* the root label still has to fit */
                        return -EBADMSG;
                if (l > len - p)
                        return -EBADMSG;
                if (n > 0)
                        name[n++] = '.';
                for (size_t i = 0; i < l; i++) {
                        uint8_t c = pkt[p + i];
                        if (!label_byte_ok(c))
                                return -EBADMSG;
                        name[n++] = (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
                }
                p += l;
        }
        /* wire <= 255 makes n <= 253: the text and its NUL fit. */
        name[n] = '\0';
        *off = p;
        return 0;
}

/* Checks the OPT record at pkt[*off]: root owner, type 41, EDNS version 0,
 * and an option list that exactly fills its RDATA. */
static int parse_opt(const uint8_t *pkt, size_t len, size_t *off)
{
        size_t p = *off;

        /* owner (1) + type (2) + udp size (2) + ext rcode, version, flags (4) + rdlength (2) */
        if (len - p < 11)
                return -EBADMSG;
        if (pkt[p] != 0 || get16(pkt + p + 1) != DNS_TYPE_OPT)
                return -EBADMSG;
        /* A version we do not speak: FORMERR makes the client retry without EDNS. */
        if (pkt[p + 6] != 0)
                return -EBADMSG;
        size_t rdlen = get16(pkt + p + 9);
        p += 11;
        if (rdlen > len - p)
                return -EBADMSG;
        size_t end = p + rdlen;
        while (p < end) {
                if (end - p < 4)
                        return -EBADMSG;
                size_t optlen = get16(pkt + p + 2);
                p += 4;
                if (optlen > end - p)
                        return -EBADMSG;
                p += optlen;
        }
        *off = p;
        return 0;
}

int dns_parse_query(const uint8_t *pkt, size_t len, struct dns_question *ret)
{
        struct dns_question q = {};
        size_t off = DNS_HEADER_SIZE;
        int r;

        if (!pkt || len < DNS_HEADER_SIZE)
                return -EBADMSG;

        uint16_t flags = get16(pkt + 2);
        /* Never answer a response: two resolvers could bounce errors forever. */
        if (flags & DNS_QR)
                return -EBADMSG;
        if (DNS_OPCODE(flags) != 0)
                return -EOPNOTSUPP;
        if (get16(pkt + 4) != 1 || get16(pkt + 6) != 0 || get16(pkt + 8) != 0)
                return -EBADMSG;
        uint16_t arcount = get16(pkt + 10);
        if (arcount > 1)
                return -EBADMSG;

        q.id = get16(pkt);
        q.rd = flags & DNS_RD;

        r = parse_name(pkt, len, &off, q.name);
        if (r < 0)
                return r;
        if (len - off < 4)
                return -EBADMSG;
        q.qtype = get16(pkt + off);
        q.qclass = get16(pkt + off + 2);
        off += 4;
        q.question_end = off;

        if (arcount == 1) {
                r = parse_opt(pkt, len, &off);
                if (r < 0)
                        return r;
                q.edns = true;
        }

        /* Checked last, so that a malformed packet is always FORMERR. */
        if (q.qclass != DNS_CLASS_IN)
                return -EOPNOTSUPP;

        *ret = q;
        return 0;
}

ssize_t dns_build_response(const uint8_t *query, const struct dns_question *q, enum dns_rcode rcode,
                           const struct in_addr *addr4, const struct in6_addr *addr6, uint32_t ttl, uint8_t *out,
                           size_t outsize)
{
        size_t qlen, rdlen = 0, need, p;
        uint16_t type = 0;
        const void *rdata = NULL;

        if (!query || !q || !out)
                return -EINVAL;
        /* The question as dns_parse_query() found it: a name (1..255 bytes)
         * and type and class. Anything else is not from the parser. */
        if (q->question_end < DNS_HEADER_SIZE + 1 + 4 || q->question_end > DNS_HEADER_SIZE + 255 + 4)
                return -EINVAL;
        if ((unsigned)rcode > DNS_RCODE_MASK)
                return -EINVAL;
        if (addr4 && addr6)
                return -EINVAL;
        if (addr4 || addr6) {
                /* An answer only for NOERROR and only of the type asked for. */
                type = addr4 ? DNS_TYPE_A : DNS_TYPE_AAAA;
                if (rcode != DNS_NOERROR || q->qtype != type)
                        return -EINVAL;
                rdata = addr4 ? (const void *)addr4 : (const void *)addr6;
                rdlen = addr4 ? 4 : 16;
        }

        qlen = q->question_end - DNS_HEADER_SIZE;
        need = DNS_HEADER_SIZE + qlen;
        if (rdata)
                need += 2 + 2 + 2 + 4 + 2 + rdlen; /* pointer, type, class, TTL, rdlength, rdata */
        if (q->edns)
                need += 11;
        if (need > outsize)
                return -ENOBUFS;

        uint16_t flags = DNS_QR | DNS_AA | DNS_RA | ((uint16_t)rcode & DNS_RCODE_MASK);
        if (q->rd)
                flags |= DNS_RD;
        put16(out, q->id);
        put16(out + 2, flags);
        put16(out + 4, 1);
        put16(out + 6, rdata ? 1 : 0);
        put16(out + 8, 0);
        put16(out + 10, q->edns ? 1 : 0);
        memcpy(out + DNS_HEADER_SIZE, query + DNS_HEADER_SIZE, qlen);
        p = DNS_HEADER_SIZE + qlen;

        if (rdata) {
                put16(out + p, DNS_PTR_QNAME);
                put16(out + p + 2, type);
                put16(out + p + 4, DNS_CLASS_IN);
                put32(out + p + 6, ttl);
                put16(out + p + 10, (uint16_t)rdlen);
                memcpy(out + p + 12, rdata, rdlen);
                p += 12 + rdlen;
        }
        if (q->edns) {
                out[p] = 0; /* root */
                put16(out + p + 1, DNS_TYPE_OPT);
                put16(out + p + 3, DNS_EDNS_SIZE);
                put32(out + p + 5, 0); /* extended rcode 0, version 0, no DO */
                put16(out + p + 9, 0); /* no options */
                p += 11;
        }
        return (ssize_t)p;
}

ssize_t dns_build_error(const uint8_t *query, size_t len, enum dns_rcode rcode, uint8_t *out, size_t outsize)
{
        if (!query || len < DNS_HEADER_SIZE)
                return -EBADMSG;
        uint16_t qflags = get16(query + 2);
        /* Never answer a response (see dns_parse_query()). */
        if (qflags & DNS_QR)
                return -EBADMSG;
        if ((unsigned)rcode > DNS_RCODE_MASK || !out)
                return -EINVAL;
        if (outsize < DNS_HEADER_SIZE)
                return -ENOBUFS;

        /* The opcode is echoed (RFC 1035 4.1.1), so NOTIMP names what was not implemented. */
        uint16_t flags =
                DNS_QR | DNS_RA | (qflags & (0xf << 11)) | (qflags & DNS_RD) | ((uint16_t)rcode & DNS_RCODE_MASK);
        memcpy(out, query, 2);
        put16(out + 2, flags);
        memset(out + 4, 0, 8);
        return DNS_HEADER_SIZE;
}
