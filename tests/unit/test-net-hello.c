/* Unit tests for the gate's ClientHello reader (net/hello.c): ClientHellos
 * built here field by field, that must name their host (one record, split
 * over records, upper case folded) or be refused with the right answer (not
 * TLS, two names, no name, a repeated extension, a bad name, lengths that
 * do not add up), and every prefix of a good one asks for more. */
#include "config.h"

#include <check.h>

#include "common/util.h"
#include "net/net-internal.h"

struct buf {
        uint8_t b[4096];
        size_t n;
};

static void put(struct buf *p, const void *d, size_t n)
{
        ck_assert_uint_le(p->n + n, sizeof(p->b));
        memcpy(p->b + p->n, d, n);
        p->n += n;
}

static void put16(struct buf *p, unsigned v)
{
        uint8_t b[2] = {(uint8_t)(v >> 8), (uint8_t)v};
        put(p, b, 2);
}

/* an extension list: server_name entries for names[], then extra bytes */
static void sni_ext(struct buf *e, const char *const *names, size_t n)
{
        struct buf l = {0};
        for (size_t i = 0; i < n; i++) {
                uint8_t t = 0;
                put(&l, &t, 1);
                put16(&l, (unsigned)strlen(names[i]));
                put(&l, names[i], strlen(names[i]));
        }
        put16(e, 0);
        put16(e, (unsigned)l.n + 2);
        put16(e, (unsigned)l.n);
        put(e, l.b, l.n);
}

/* A ClientHello with the extensions exts, cut into records of at most
 * record_max bytes. */
static void hello(struct buf *out, const struct buf *exts, size_t record_max)
{
        struct buf body = {0}, msg = {0};
        uint8_t rnd[32] = {0}, z = 0, one = 1;
        put16(&body, 0x0303);
        put(&body, rnd, 32);
        put(&body, &z, 1); /* session id */
        put16(&body, 2);
        put16(&body, 0x1301); /* one cipher suite */
        put(&body, &one, 1);
        put(&body, &z, 1); /* null compression */
        if (exts) {
                put16(&body, (unsigned)exts->n);
                put(&body, exts->b, exts->n);
        }
        uint8_t h[4] = {1, (uint8_t)(body.n >> 16), (uint8_t)(body.n >> 8), (uint8_t)body.n};
        put(&msg, h, 4);
        put(&msg, body.b, body.n);
        out->n = 0;
        for (size_t o = 0; o < msg.n; o += record_max) {
                size_t k = msg.n - o < record_max ? msg.n - o : record_max;
                uint8_t r[3] = {0x16, 3, 1};
                put(out, r, 3);
                put16(out, (unsigned)k);
                put(out, msg.b + o, k);
        }
}

static int parse(const struct buf *b, char *sni)
{
        size_t need;
        return net_tls_client_hello(b->b, b->n, sni, 256, &need);
}

START_TEST(test_one_name)
{
        struct buf e = {0}, h;
        const char *names[] = {"API.Example.com"};
        sni_ext(&e, names, 1);
        hello(&h, &e, 16384);
        char sni[256];
        ck_assert_int_eq(parse(&h, sni), 0);
        ck_assert_str_eq(sni, "api.example.com");
        /* every prefix asks for more, and never more than the gate reads */
        for (size_t cut = 0; cut < h.n; cut++) {
                size_t need;
                ck_assert_int_eq(net_tls_client_hello(h.b, cut, sni, 256, &need), 1);
                ck_assert_uint_gt(need, cut);
                ck_assert_uint_le(need, NET_HELLO_BUF);
        }
        /* split over records of 7 bytes */
        hello(&h, &e, 7);
        ck_assert_int_eq(parse(&h, sni), 0);
        ck_assert_str_eq(sni, "api.example.com");
}
END_TEST

START_TEST(test_refused)
{
        struct buf e = {0}, h;
        char sni[256];
        const char *two[] = {"api.example.com", "evil.example.com"};
        sni_ext(&e, two, 2);
        hello(&h, &e, 16384);
        ck_assert_int_eq(parse(&h, sni), -EEXIST);

        e.n = 0;
        const char *one[] = {"api.example.com"};
        sni_ext(&e, one, 1);
        sni_ext(&e, one, 1); /* the extension twice */
        hello(&h, &e, 16384);
        ck_assert_int_eq(parse(&h, sni), -EEXIST);

        hello(&h, NULL, 16384); /* no extensions */
        ck_assert_int_eq(parse(&h, sni), -ENOENT);

        e.n = 0;
        const char *bad[] = {"api example.com"};
        sni_ext(&e, bad, 1);
        hello(&h, &e, 16384);
        ck_assert_int_eq(parse(&h, sni), -EBADMSG);

        struct buf http = {0};
        put(&http, "GET / HTTP/1.1\r\n\r\n", 18);
        ck_assert_int_eq(parse(&http, sni), -EPROTONOSUPPORT);

        /* a length that does not add up: the extensions' total one byte short */
        e.n = 0;
        sni_ext(&e, one, 1);
        hello(&h, &e, 16384);
        size_t ext_len_at = 5 + 4 + 2 + 32 + 1 + 2 + 2 + 2;
        h.b[ext_len_at + 1]--;
        ck_assert_int_eq(parse(&h, sni), -EBADMSG);

        /* a record that is not a handshake after the first */
        hello(&h, &e, 16384);
        size_t first = h.n;
        hello(&h, &e, 20);
        (void)first;
        h.b[5 + 20] = 0x17;
        ck_assert_int_eq(parse(&h, sni), -EBADMSG);
}
END_TEST

static Suite *hello_suite(void)
{
        Suite *s = suite_create("net-hello");
        TCase *tc = tcase_create("clienthello");
        tcase_add_test(tc, test_one_name);
        tcase_add_test(tc, test_refused);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(hello_suite());
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
