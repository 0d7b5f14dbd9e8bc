/* Fuzz target for the gate's ClientHello reader (net/hello.c), which reads
 * the first flight of every allowed connection, bytes the sandbox chooses.
 *
 * The whole input is a first flight: the reader must return one of its
 * documented answers; a complete answer names a lower-case DNS name; "need
 * more" asks for more than it was given and no more than the gate reads;
 * and every prefix of an input the reader accepts asks for more, or names
 * the same host (a name is never decided on part of a ClientHello).
 *
 * Built with -fsanitize=fuzzer for libFuzzer (make fuzz), or with
 * tests/fuzz/standalone.c to replay a corpus (tests/fuzz/run.sh). */
#include "config.h"

#include "common/util.h"
#include "net/net-internal.h"

#define CHECK(x)                                                                                  \
        do {                                                                                      \
                if (!(x)) {                                                                       \
                        fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #x); \
                        abort();                                                                  \
                }                                                                                 \
        } while (0)

static int run(const uint8_t *data, size_t size, char *sni)
{
        uint8_t *buf = xmalloc(size ? size : 1); /* exact size: reads past it are caught */
        memcpy(buf, data, size);
        size_t need = 0;
        int r = net_tls_client_hello(buf, size, sni, 256, &need);
        free(buf);
        CHECK(r == 0 || r == 1 || r == -EPROTONOSUPPORT || r == -EBADMSG || r == -ENOENT || r == -EEXIST ||
              r == -E2BIG);
        if (r == 1)
                CHECK(need > size && need <= NET_HELLO_BUF);
        if (r == 0) {
                size_t n = strlen(sni);
                CHECK(n > 0 && n <= 253);
                for (size_t i = 0; i < n; i++)
                        CHECK((sni[i] >= 'a' && sni[i] <= 'z') || (sni[i] >= '0' && sni[i] <= '9') || sni[i] == '-' ||
                              sni[i] == '.');
        }
        return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        if (size > NET_HELLO_BUF + 64)
                return 0;
        char sni[256];
        int r = run(data, size, sni);
        if (r == 0)
                for (size_t cut = 0; cut < size; cut += 1 + size / 64) {
                        char s2[256];
                        int k = run(data, cut, s2);
                        /* a prefix that already holds the whole ClientHello
                         * (more bytes followed it) names the same host */
                        CHECK(k == 1 || k == -EPROTONOSUPPORT || k == -EBADMSG || k == -E2BIG ||
                              (k == 0 && streq(s2, sni)));
                }
        return 0;
}
