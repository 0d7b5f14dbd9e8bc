/* The first flight of a connection through the gate: a TLS ClientHello, read
 * far enough to know the one server name it asks for (RFC 8446 4.1.2, RFC
 * 6066 3). OpenSSL parses a ClientHello only inside a handshake it serves,
 * and a connection the gate passes through is not one; this reader is
 * small, bounded (NET_HELLO_MAX bytes, records of at most 2^14 + 256), and
 * a fuzz target (tests/fuzz/fuzz-hello.c). It decides nothing but what the
 * bytes say: the gate compares the name with the rule's host. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "net/net-internal.h"

#define RECORD_HEADER 5
#define RECORD_MAX    (16384 + 256)

static unsigned be16(const uint8_t *p)
{
        return (unsigned)p[0] << 8 | p[1];
}

/* The server_name extension's body: one host_name entry, a DNS name. */
static int parse_server_name(const uint8_t *p, size_t n, char *sni, size_t sni_size)
{
        if (n < 2 || be16(p) != n - 2)
                return -EBADMSG;
        p += 2;
        n -= 2;
        bool found = false;
        while (n > 0) {
                if (n < 3)
                        return -EBADMSG;
                unsigned type = p[0], len = be16(p + 1);
                if (len > n - 3)
                        return -EBADMSG;
                if (type == 0) { /* host_name: RFC 6066 allows one */
                        if (found)
                                return -EEXIST;
                        found = true;
                        if (len == 0 || len >= sni_size || len > 253)
                                return -EBADMSG;
                        for (unsigned i = 0; i < len; i++) {
                                char c = (char)p[3 + i];
                                if (c >= 'A' && c <= 'Z')
                                        c = (char)(c - 'A' + 'a');
                                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.'))
                                        return -EBADMSG;
                                sni[i] = c;
                        }
                        sni[len] = '\0';
                }
                p += 3 + len;
                n -= 3 + len;
        }
        return found ? 0 : -ENOENT;
}

/* The ClientHello body (after the 4-byte handshake header). */
static int parse_body(const uint8_t *p, size_t n, char *sni, size_t sni_size)
{
        size_t o = 2 + 32; /* legacy_version, random */
        if (n < o + 1)
                return -EBADMSG;
        if (p[o] > 32) /* legacy_session_id */
                return -EBADMSG;
        o += 1 + p[o];
        if (n < o + 2)
                return -EBADMSG;
        size_t cs = be16(p + o); /* cipher_suites */
        if (cs == 0 || cs % 2 || n < o + 2 + cs + 1)
                return -EBADMSG;
        o += 2 + cs;
        size_t comp = p[o]; /* legacy_compression_methods */
        if (comp == 0 || n < o + 1 + comp)
                return -EBADMSG;
        o += 1 + comp;
        if (o == n)
                return -ENOENT; /* no extensions: no server name */
        if (n < o + 2 || be16(p + o) != n - o - 2)
                return -EBADMSG;
        o += 2;
        int r = -ENOENT;
        /* RFC 8446 4.2: no extension type twice; the types seen, coarsely
         * (a set of the 64 most common is enough to refuse a second
         * server_name, which is what matters here) */
        uint64_t seen = 0;
        while (o < n) {
                if (n - o < 4)
                        return -EBADMSG;
                unsigned type = be16(p + o), len = be16(p + o + 2);
                if (len > n - o - 4)
                        return -EBADMSG;
                if (type < 64) {
                        if (seen & (UINT64_C(1) << type))
                                return type == 0 ? -EEXIST : -EBADMSG;
                        seen |= UINT64_C(1) << type;
                }
                if (type == 0 && (r = parse_server_name(p + o + 4, len, sni, sni_size)) < 0)
                        return r;
                o += 4 + len;
        }
        return r;
}

int net_tls_client_hello(const uint8_t *buf, size_t len, char *sni, size_t sni_size, size_t *ret_need)
{
        /* the handshake message, gathered from the records' fragments */
        uint8_t msg[NET_HELLO_MAX];
        size_t have = 0, want = 0, o = 0;
        *ret_need = 0;
        if (len == 0) {
                *ret_need = RECORD_HEADER;
                return 1;
        }
        if (buf[0] != 0x16)
                return -EPROTONOSUPPORT; /* not a handshake record: not TLS */
        for (;;) {
                if (len - o < RECORD_HEADER) {
                        if (len > o && buf[o] != 0x16)
                                return -EBADMSG;
                        *ret_need = o + RECORD_HEADER;
                        return 1;
                }
                const uint8_t *h = buf + o;
                /* a handshake record of TLS 1.0 to 1.3 (the record version
                 * of a ClientHello is 0x0301 or 0x0303) */
                if (h[0] != 0x16)
                        return o == 0 ? -EPROTONOSUPPORT : -EBADMSG;
                if (h[1] != 3 || h[2] > 4)
                        return o == 0 ? -EPROTONOSUPPORT : -EBADMSG;
                size_t rl = be16(h + 3);
                if (rl == 0 || rl > RECORD_MAX)
                        return -EBADMSG;
                if (len - o - RECORD_HEADER < rl) {
                        *ret_need = o + RECORD_HEADER + rl;
                        return *ret_need > NET_HELLO_MAX + 64 * RECORD_HEADER ? -E2BIG : 1;
                }
                size_t take = rl;
                if (want && take > want - have)
                        return -EBADMSG; /* another message after the ClientHello in its record */
                if (have + take > sizeof(msg))
                        return -E2BIG;
                memcpy(msg + have, h + RECORD_HEADER, take);
                have += take;
                o += RECORD_HEADER + rl;
                if (!want && have >= 4) {
                        if (msg[0] != 1) /* client_hello */
                                return -EPROTONOSUPPORT;
                        want = 4 + ((size_t)msg[1] << 16 | (size_t)msg[2] << 8 | msg[3]);
                        if (want > sizeof(msg))
                                return -E2BIG;
                        if (have > want)
                                return -EBADMSG;
                }
                if (want && have == want)
                        return parse_body(msg + 4, want - 4, sni, sni_size);
        }
}
