/* Unit tests for the relays' plumbing (net/relay.c): the loopback pairs
 * made through the gate's one listener (the child's end and ours are each
 * other's peers, strangers who connect to the listener are turned away
 * without a byte, pairs made from many threads at once never cross), and
 * the pool of relay threads (many relays at once each carry their own
 * bytes to their own upstream, a ClientHello naming another host is
 * refused, and the threads end with the gate); and the gate's audit limit
 * (egress that cannot be recorded is refused). */
#include "config.h"

#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "common/util.h"
#include "net/net-internal.h"

#define HOST "up.relay.test"

static struct net_gate *new_gate(void)
{
        static const struct net_rule rules[] = {{.host = HOST, .port = 443}};
        struct net_gate_config cfg = {.sandbox_id = "unit", .rules = rules, .n_rules = 1, .audit_fd = -1};
        struct net_gate *g = NULL;
        ck_assert_int_eq(net_gate_new(&cfg, &g), 0);
        return g;
}

/* a minimal TLS ClientHello record naming host (as bench/micro/tcpc.c) */
static size_t make_hello(const char *host, uint8_t *h)
{
        size_t hl = strlen(host), o = 0;
        uint8_t body[400];
        body[o++] = 3, body[o++] = 3;
        memset(body + o, 0x5a, 32), o += 32;
        body[o++] = 0;
        body[o++] = 0, body[o++] = 2, body[o++] = 0x13, body[o++] = 0x01;
        body[o++] = 1, body[o++] = 0;
        size_t ext = 4 + 2 + 3 + hl;
        body[o++] = (uint8_t)(ext >> 8), body[o++] = (uint8_t)ext;
        body[o++] = 0, body[o++] = 0;
        body[o++] = (uint8_t)((hl + 5) >> 8), body[o++] = (uint8_t)(hl + 5);
        body[o++] = (uint8_t)((hl + 3) >> 8), body[o++] = (uint8_t)(hl + 3);
        body[o++] = 0;
        body[o++] = (uint8_t)(hl >> 8), body[o++] = (uint8_t)hl;
        memcpy(body + o, host, hl), o += hl;
        h[0] = 0x16, h[1] = 3, h[2] = 1, h[3] = (uint8_t)((o + 4) >> 8), h[4] = (uint8_t)(o + 4);
        h[5] = 1, h[6] = 0, h[7] = (uint8_t)(o >> 8), h[8] = (uint8_t)o;
        memcpy(h + 9, body, o);
        return 9 + o;
}

/* reads exactly n bytes within 5 s; how many came */
static size_t read_n(int fd, void *buf, size_t n)
{
        size_t got = 0;
        while (got < n) {
                struct pollfd p = {.fd = fd, .events = POLLIN};
                if (poll(&p, 1, 5000) <= 0)
                        break;
                ssize_t k = recv(fd, (char *)buf + got, n - got, 0);
                if (k <= 0)
                        break;
                got += (size_t)k;
        }
        return got;
}

static bool peers(int child, int ours)
{
        struct sockaddr_storage a, b;
        socklen_t al = sizeof(a), bl = sizeof(b);
        if (getsockname(child, (struct sockaddr *)&a, &al) < 0 || getpeername(ours, (struct sockaddr *)&b, &bl) < 0)
                return false;
        return al == bl && memcmp(&a, &b, al) == 0;
}

static void check_pair(int child, int ours)
{
        ck_assert(peers(child, ours));
        char c = 0;
        ck_assert_int_eq(send(child, "c", 1, MSG_NOSIGNAL), 1);
        ck_assert_uint_eq(read_n(ours, &c, 1), 1);
        ck_assert_int_eq(c, 'c');
        ck_assert_int_eq(send(ours, "o", 1, MSG_NOSIGNAL), 1);
        ck_assert_uint_eq(read_n(child, &c, 1), 1);
        ck_assert_int_eq(c, 'o');
}

START_TEST(test_pair_is_ours)
{
        struct net_gate *g = new_gate();
        for (int i = 0; i < 3; i++) {
                int child = -1, ours = -1;
                ck_assert_int_eq(net_relay_pair(g, AF_INET, i == 1, &child, &ours), 0);
                check_pair(child, ours);
                close(child);
                close(ours);
        }
        net_gate_free(g);
}
END_TEST

START_TEST(test_strangers_turned_away)
{
        struct net_gate *g = new_gate();
        int child = -1, ours = -1;
        ck_assert_int_eq(net_relay_pair(g, AF_INET, false, &child, &ours), 0);
        close(child);
        close(ours);
        /* the listener lives on: strangers on the host's loopback connect and send */
        int strangers[3];
        for (int i = 0; i < 3; i++) {
                strangers[i] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                ck_assert_int_ge(strangers[i], 0);
                ck_assert_int_eq(connect(strangers[i], (struct sockaddr *)&g->pair_addr[0], g->pair_len[0]), 0);
                ck_assert_int_eq(send(strangers[i], "stranger", 8, MSG_NOSIGNAL), 8);
        }
        ck_assert_int_eq(net_relay_pair(g, AF_INET, false, &child, &ours), 0);
        check_pair(child, ours);
        for (int i = 0; i < 3; i++) {
                char buf[16];
                struct pollfd p = {.fd = strangers[i], .events = POLLIN};
                ck_assert_int_eq(poll(&p, 1, 5000), 1);
                ssize_t k = recv(strangers[i], buf, sizeof(buf), 0);
                ck_assert(k == 0 || (k < 0 && errno == ECONNRESET)); /* nothing but the end */
                close(strangers[i]);
        }
        close(child);
        close(ours);
        net_gate_free(g);
}
END_TEST

struct many {
        struct net_gate *g;
        int family;
        int bad;
};

static void *pairs_thread(void *arg)
{
        struct many *m = arg;
        for (int i = 0; i < 40; i++) {
                int child = -1, ours = -1;
                if (net_relay_pair(m->g, m->family, false, &child, &ours) < 0) {
                        m->bad++;
                        continue;
                }
                char c = 0;
                if (!peers(child, ours) || send(child, "x", 1, MSG_NOSIGNAL) != 1 || read_n(ours, &c, 1) != 1 ||
                    c != 'x')
                        m->bad++;
                close(child);
                close(ours);
        }
        return NULL;
}

START_TEST(test_concurrent_pairs)
{
        struct net_gate *g = new_gate();
        int fams[] = {AF_INET, AF_INET6};
        for (size_t f = 0; f < 2; f++) {
                int probe = socket(fams[f], SOCK_STREAM | SOCK_CLOEXEC, 0);
                struct sockaddr_in6 lo6 = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
                bool ok = probe >= 0 && (fams[f] == AF_INET || bind(probe, (struct sockaddr *)&lo6, sizeof(lo6)) == 0);
                if (probe >= 0)
                        close(probe);
                if (!ok)
                        continue; /* no IPv6 loopback here */
                struct many m[8];
                pthread_t t[8];
                for (int i = 0; i < 8; i++) {
                        m[i] = (struct many){g, fams[f], 0};
                        ck_assert_int_eq(pthread_create(&t[i], NULL, pairs_thread, &m[i]), 0);
                }
                for (int i = 0; i < 8; i++) {
                        pthread_join(t[i], NULL);
                        ck_assert_int_eq(m[i].bad, 0);
                }
        }
        net_gate_free(g);
}
END_TEST

/* a relay for a child end and an upstream of our own (a unix stream pair):
 * returns the child's end, *ret_up our side of the upstream */
static int start_relay(struct net_gate *g, int *ret_up)
{
        int child = -1, ours = -1, up[2];
        ck_assert_int_eq(net_relay_pair(g, AF_INET, false, &child, &ours), 0);
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, up), 0);
        ck_assert_int_eq(net_relay_start(g, child, ours, up[0], 1, 0, 1, HOST ":443", "192.0.2.1:443", NULL, 0), 0);
        *ret_up = up[1];
        return child;
}

START_TEST(test_pool_relays_their_own)
{
        struct net_gate *g = new_gate();
        enum { N = 16 };
        int child[N], up[N];
        for (int i = 0; i < N; i++)
                child[i] = start_relay(g, &up[i]);
        uint8_t hello[512];
        size_t hl = make_hello(HOST, hello);
        /* the first flights, all at once; then each upstream sees its own */
        for (int i = 0; i < N; i++) {
                uint8_t m[600];
                memcpy(m, hello, hl);
                int n = snprintf((char *)m + hl, 32, "ping-%02d", i);
                ck_assert_int_eq(send(child[i], m, hl + (size_t)n, MSG_NOSIGNAL), (ssize_t)(hl + (size_t)n));
        }
        for (int i = N - 1; i >= 0; i--) {
                uint8_t m[600];
                char want[16];
                snprintf(want, sizeof(want), "ping-%02d", i);
                ck_assert_uint_eq(read_n(up[i], m, hl + 7), hl + 7);
                ck_assert(memcmp(m, hello, hl) == 0);
                ck_assert(memcmp(m + hl, want, 7) == 0);
                snprintf(want, sizeof(want), "pong-%02d", i);
                ck_assert_int_eq(send(up[i], want, 7, MSG_NOSIGNAL), 7);
                char got[8] = "";
                ck_assert_uint_eq(read_n(child[i], got, 7), 7);
                ck_assert(memcmp(got, want, 7) == 0);
        }
        for (int i = 0; i < N; i++) {
                close(child[i]);
                close(up[i]);
        }
        /* the relays and their threads end with the gate */
        ck_assert(net_relay_stop_all(g));
        ck_assert_uint_eq(g->n_relays, 0);
        ck_assert_uint_eq(g->n_threads, 0);
        net_gate_free(g);
}
END_TEST

START_TEST(test_other_name_refused)
{
        struct net_gate *g = new_gate();
        int up = -1;
        int child = start_relay(g, &up);
        uint8_t hello[512];
        size_t hl = make_hello("other.relay.test", hello);
        ck_assert_int_eq(send(child, hello, hl, MSG_NOSIGNAL), (ssize_t)hl);
        /* the child's end is reset, and nothing reached the upstream */
        char buf[600];
        struct pollfd p = {.fd = child, .events = POLLIN};
        ck_assert_int_eq(poll(&p, 1, 5000), 1);
        ssize_t k = recv(child, buf, sizeof(buf), 0);
        ck_assert(k == 0 || (k < 0 && errno == ECONNRESET));
        p = (struct pollfd){.fd = up, .events = POLLIN};
        ck_assert_int_eq(poll(&p, 1, 5000), 1);
        ck_assert_int_eq(recv(up, buf, sizeof(buf), 0), 0);
        close(child);
        close(up);
        net_gate_free(g);
}
END_TEST

/* Egress that cannot be recorded must not happen: at its record limit the
 * gate closes (one audit_full note), refusals are counted only, and the
 * allowed records of connections already under way still go in. */
START_TEST(test_audit_limit_closes_the_gate)
{
        static const struct net_rule rules[] = {{.host = HOST, .port = 443}};
        int fd = memfd_create("audit", MFD_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        struct net_gate_config cfg = {.sandbox_id = "unit", .rules = rules, .n_rules = 1, .audit_fd = fd};
        struct net_gate *g = NULL;
        ck_assert_int_eq(net_gate_new(&cfg, &g), 0);
        for (int i = 0; i < NET_AUDIT_MAX_RECORDS - NET_AUDIT_KEPT; i++)
                net_audit(g, 1, "connect", "203.0.113.9:443", NULL, NULL, false, REASON_IP_LITERAL);
        ck_assert(!net_gate_audit_closed(g));
        net_audit(g, 1, "connect", "203.0.113.9:443", NULL, NULL, false, REASON_IP_LITERAL);
        ck_assert(net_gate_audit_closed(g));
        for (int i = 0; i < 5000; i++)
                net_audit(g, 1, "connect", "203.0.113.9:443", NULL, NULL, false, REASON_IP_LITERAL);
        net_audit(g, 1, "connect", "198.18.0.2:443", HOST, "192.0.2.1:443", true, REASON_ALLOWED);
        /* the file: every record before the limit, the note, the allowed one */
        off_t size = lseek(fd, 0, SEEK_END);
        char *map = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
        ck_assert(map != MAP_FAILED);
        size_t lines = 0, notes = 0;
        for (char *p = map; p < map + size; p = memchr(p, '\n', (size_t)(map + size - p)) + 1) {
                lines++;
                char *nl = memchr(p, '\n', (size_t)(map + size - p));
                if (memmem(p, (size_t)(nl - p), "\"audit_full\"", 12))
                        notes++;
        }
        ck_assert_uint_eq(notes, 1);
        ck_assert_uint_eq(lines, NET_AUDIT_MAX_RECORDS - NET_AUDIT_KEPT + 2);
        ck_assert_ptr_nonnull(memmem(map, (size_t)size, "\"egress_allowed\"", 16));
        munmap(map, (size_t)size);
        /* told from outside (a sandbox's events file is full): closed too */
        struct net_gate *g2 = new_gate();
        ck_assert(!net_gate_audit_closed(g2));
        net_gate_audit_full(g2);
        ck_assert(net_gate_audit_closed(g2));
        net_gate_free(g2);
        net_gate_free(g);
        close(fd);
}
END_TEST

/* A sandbox's audit goes to its events file, whose share closes the gate
 * when it is used up (net_gate_audit_full): the gate sets no record limit
 * of its own there, or a long-lived sandbox's egress would end at its
 * 99,000th connection with room left in its share. */
START_TEST(test_audit_log_bounded_has_no_record_limit)
{
        static const struct net_rule rules[] = {{.host = HOST, .port = 443}};
        int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        struct net_gate_config cfg = {
                .sandbox_id = "unit", .rules = rules, .n_rules = 1, .audit_fd = fd, .audit_log_bounded = true};
        struct net_gate *g = NULL;
        ck_assert_int_eq(net_gate_new(&cfg, &g), 0);
        for (int i = 0; i < NET_AUDIT_MAX_RECORDS + 10; i++)
                net_audit(g, 1, "connect", "198.18.0.2:443", HOST, "192.0.2.1:443", true, REASON_ALLOWED);
        ck_assert(!net_gate_audit_closed(g));
        net_gate_audit_full(g);
        ck_assert(net_gate_audit_closed(g));
        net_gate_free(g);
        close(fd);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("net-relay");
        TCase *tc = tcase_create("relay");
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_pair_is_ours);
        tcase_add_test(tc, test_strangers_turned_away);
        tcase_add_test(tc, test_concurrent_pairs);
        tcase_add_test(tc, test_pool_relays_their_own);
        tcase_add_test(tc, test_other_name_refused);
        tcase_add_test(tc, test_audit_limit_closes_the_gate);
        tcase_add_test(tc, test_audit_log_bounded_has_no_record_limit);
        suite_add_tcase(s, tc);
        SRunner *sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}
