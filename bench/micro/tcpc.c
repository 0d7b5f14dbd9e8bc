/* TCP client for the egress benchmark (the upstream is bench/lib/upstream.py).
 *
 *   tcpc HOST PORT connect N      N x (connect, 1-byte ping-pong, close)
 *   tcpc HOST PORT download BYTES the upstream sends BYTES
 *   tcpc HOST PORT upload BYTES   we send BYTES, the upstream acknowledges
 *
 * HOST is resolved once (getaddrinfo: inside cordon that is the sentry's DNS
 * stub). Prints "@metric us_per_connect V" or "@metric MB_per_s V".
 *
 * Each connection opens with a minimal TLS ClientHello naming HOST (the
 * upstream skips it): cordon's gate lets through only connections whose
 * first flight is one, natively it costs the same bytes. */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static struct addrinfo *ai;

static int dial(void)
{
        int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                perror("tcpc: socket");
                exit(1);
        }
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
                perror("tcpc: connect");
                exit(1);
        }
        return fd;
}

static void xwrite(int fd, const void *b, size_t n)
{
        const char *p = b;
        while (n) {
                ssize_t w = write(fd, p, n);
                if (w < 0 && errno == EINTR)
                        continue;
                if (w <= 0) {
                        perror("tcpc: write");
                        exit(1);
                }
                p += w;
                n -= (size_t)w;
        }
}

static char hello[512];
static size_t hello_len;

/* A TLS 1.2+ ClientHello record: no session, one cipher suite, null
 * compression, one extension: server_name with host. */
static void make_hello(const char *host)
{
        size_t hl = strlen(host);
        uint8_t body[400];
        size_t o = 0;
        body[o++] = 3, body[o++] = 3;
        memset(body + o, 0x5a, 32), o += 32;
        body[o++] = 0;                                                    /* session id */
        body[o++] = 0, body[o++] = 2, body[o++] = 0x13, body[o++] = 0x01; /* TLS_AES_128_GCM_SHA256 */
        body[o++] = 1, body[o++] = 0;                                     /* null compression */
        size_t ext = 4 + 2 + 3 + hl;
        body[o++] = (uint8_t)(ext >> 8), body[o++] = (uint8_t)ext;
        body[o++] = 0, body[o++] = 0; /* server_name */
        body[o++] = (uint8_t)((hl + 5) >> 8), body[o++] = (uint8_t)(hl + 5);
        body[o++] = (uint8_t)((hl + 3) >> 8), body[o++] = (uint8_t)(hl + 3);
        body[o++] = 0; /* host_name */
        body[o++] = (uint8_t)(hl >> 8), body[o++] = (uint8_t)hl;
        memcpy(body + o, host, hl), o += hl;
        uint8_t *h = (uint8_t *)hello;
        h[0] = 0x16, h[1] = 3, h[2] = 1, h[3] = (uint8_t)((o + 4) >> 8), h[4] = (uint8_t)(o + 4);
        h[5] = 1, h[6] = 0, h[7] = (uint8_t)(o >> 8), h[8] = (uint8_t)o;
        memcpy(h + 9, body, o);
        hello_len = 9 + o;
}

/* The hello, then the mode's bytes, in one write. */
static void open_with(int fd, const void *b, size_t n)
{
        char m[600];
        memcpy(m, hello, hello_len);
        memcpy(m + hello_len, b, n);
        xwrite(fd, m, hello_len + n);
}

static void xread1(int fd, char want)
{
        char c;
        ssize_t r;
        do
                r = read(fd, &c, 1);
        while (r < 0 && errno == EINTR);
        if (r != 1 || c != want) {
                fprintf(stderr, "tcpc: bad reply from upstream (%zd)\n", r);
                exit(1);
        }
}

int main(int argc, char **argv)
{
        if (argc != 5) {
                fprintf(stderr, "usage: tcpc HOST PORT connect|download|upload N\n");
                return 2;
        }
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
        int r = getaddrinfo(argv[1], argv[2], &hints, &ai);
        if (r) {
                fprintf(stderr, "tcpc: %s: %s\n", argv[1], gai_strerror(r));
                return 1;
        }
        long long n = atoll(argv[4]);
        if (strlen(argv[1]) > 200) {
                fprintf(stderr, "tcpc: host name too long\n");
                return 2;
        }
        make_hello(argv[1]);
        static char buf[1 << 18];
        if (!strcmp(argv[3], "connect")) {
                /* one untimed connection first (the stub's and the gate's caches) */
                int fd = dial();
                open_with(fd, "P", 1);
                xread1(fd, 'p');
                close(fd);
                uint64_t t0 = now_ns();
                for (long long i = 0; i < n; i++) {
                        fd = dial();
                        open_with(fd, "P", 1);
                        xread1(fd, 'p');
                        close(fd);
                }
                printf("@metric us_per_connect %.1f\n", (double)(now_ns() - t0) / 1000.0 / (double)n);
        } else if (!strcmp(argv[3], "download")) {
                uint64_t t0 = now_ns();
                int fd = dial();
                char hdr[9] = "S";
                uint64_t len = (uint64_t)n;
                memcpy(hdr + 1, &len, 8);
                open_with(fd, hdr, 9);
                long long got = 0;
                for (;;) {
                        ssize_t k = read(fd, buf, sizeof(buf));
                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k < 0) {
                                perror("tcpc: read");
                                return 1;
                        }
                        if (k == 0)
                                break;
                        got += k;
                }
                close(fd);
                if (got != n) {
                        fprintf(stderr, "tcpc: got %lld of %lld bytes\n", got, n);
                        return 1;
                }
                printf("@metric MB_per_s %.1f\n", (double)n / 1e6 / ((double)(now_ns() - t0) / 1e9));
        } else if (!strcmp(argv[3], "upload")) {
                memset(buf, 'x', sizeof(buf));
                uint64_t t0 = now_ns();
                int fd = dial();
                open_with(fd, "K", 1);
                for (long long left = n; left > 0;) {
                        size_t k = left > (long long)sizeof(buf) ? sizeof(buf) : (size_t)left;
                        xwrite(fd, buf, k);
                        left -= (long long)k;
                }
                shutdown(fd, SHUT_WR);
                xread1(fd, 'k');
                close(fd);
                printf("@metric MB_per_s %.1f\n", (double)n / 1e6 / ((double)(now_ns() - t0) / 1e9));
        } else {
                fprintf(stderr, "tcpc: unknown mode %s\n", argv[3]);
                return 2;
        }
        freeaddrinfo(ai);
        return 0;
}
