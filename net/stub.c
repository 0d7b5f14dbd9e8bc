/* The sandbox's DNS stub: a thread of the sentry that serves 127.0.0.53:53
 * inside the sandbox's network namespace. Listed names get their synthetic
 * pool address; everything else NXDOMAIN, recorded. The answers never come
 * from the real resolver: a name's real addresses are looked up only when
 * the sandbox connects, and checked then. */
#include "config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/eventfd.h>

#include "common/util.h"
#include "net/net-internal.h"

#define STUB_TTL 60

static int find_rule(const struct net_gate *g, const char *name)
{
        for (size_t i = 0; i < g->n_rules; i++)
                if (streq(g->rules[i].host, name))
                        return (int)i;
        return -ENOENT;
}

/* Answers one query into out; returns the length to send, or -1 to drop. */
static ssize_t answer(struct net_gate *g, const uint8_t *q, size_t len, uint8_t *out, size_t outsize)
{
        struct dns_question dq;
        int r = dns_parse_query(q, len, &dq);
        if (r == -EOPNOTSUPP)
                return dns_build_error(q, len, DNS_NOTIMP, out, outsize);
        if (r < 0)
                return len >= 12 ? dns_build_error(q, len, DNS_FORMERR, out, outsize) : -1;
        /* a cluster name, answered in-cluster where the policy grants it */
        ssize_t cl = net_cluster_dns_answer(g, q, len, &dq, out, outsize);
        if (cl != -ENOENT)
                return cl;
        int idx = find_rule(g, dq.name);
        if (idx < 0) {
                net_audit(g, 0, "dns", dq.name, dq.name, NULL, false, REASON_DNS_BLOCKED);
                return dns_build_response(q, &dq, DNS_NXDOMAIN, NULL, NULL, 0, out, outsize);
        }
        struct in_addr a4;
        struct in6_addr a6;
        net_pool_ipv4((unsigned)idx, &a4);
        net_pool_ipv6((unsigned)idx, &a6);
        net_audit(g, 0, "dns", dq.name, dq.name, NULL, true, REASON_DNS_ANSWERED);
        return dns_build_response(q, &dq, DNS_NOERROR, dq.qtype == 1 ? &a4 : NULL, dq.qtype == 28 ? &a6 : NULL,
                                  STUB_TTL, out, outsize);
}

/* One TCP query: a 2-byte length, the query; the same back. Bounded by a
 * short receive timeout so a silent client cannot hold the stub. */
static void serve_tcp(struct net_gate *g, int c)
{
        struct timeval tv = {2, 0};
        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        uint8_t lenb[2], q[DNS_MAX_PACKET], out[DNS_MAX_PACKET + 2];
        if (read_full(c, lenb, 2) != 2)
                return;
        size_t n = (size_t)lenb[0] << 8 | lenb[1];
        if (n == 0 || n > sizeof(q) || read_full(c, q, n) != (ssize_t)n)
                return;
        ssize_t m = answer(g, q, n, out + 2, sizeof(out) - 2);
        if (m <= 0)
                return;
        out[0] = (uint8_t)(m >> 8);
        out[1] = (uint8_t)m;
        (void)write_all(c, out, (size_t)m + 2);
}

struct stub_args {
        struct net_gate *g;
        int netns_fd;
        int stop_fd;
        int ready_fd; /* eventfd, written once the stub listens or has failed (g->stub_err) */
        bool shared;  /* another sandbox's stub serves the namespace: only its cookie is read */
};

/* The cookie of the namespace this thread is in, read from a socket made
 * for it (Linux 5.14). */
static int read_netns_cookie(uint64_t *ret)
{
        _cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        socklen_t l = sizeof(*ret);
        if (s < 0)
                return negative_errno();
        if (getsockopt(s, SOL_SOCKET, 71 /* SO_NETNS_COOKIE */, ret, &l) < 0)
                return negative_errno();
        return 0;
}

static int bind_stub(int type)
{
        int s = socket(AF_INET, type | SOCK_CLOEXEC, 0);
        if (s < 0)
                return negative_errno();
        int one = 1;
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(53)};
        inet_pton(AF_INET, NET_STUB_ADDR, &a.sin_addr);
        if (bind(s, (struct sockaddr *)&a, sizeof(a)) < 0 || (type == SOCK_STREAM && listen(s, 16) < 0)) {
                int r = negative_errno();
                close(s);
                return r;
        }
        return s;
}

static void *stub_main(void *arg)
{
        struct stub_args a = *(struct stub_args *)arg;
        free(arg);
        struct net_gate *g = a.g;

        /* This thread alone joins the sandbox's network namespace (a
         * per-thread attribute): the sockets it makes live there. Its
         * loopback, where the stub listens, is brought up here too, beside
         * init's set-up rather than in it. The outcome, and the step that
         * failed, are kept for net_gate_stub_ready (read after the eventfd). */
        int err = 0;
        if (setns(a.netns_fd, CLONE_NEWNET) < 0) {
                err = negative_errno();
                g->stub_step = "join the sandbox's network namespace";
        } else if (a.shared) {
                /* a pod's namespace, whose sandbox container's stub listens
                 * at NET_STUB_ADDR already (with the same policy, so the
                 * same synthetic addresses): this gate needs only to tell
                 * the namespace's sockets from its own */
                uint64_t cookie = 0;
                g->stub_step = "read the namespace's cookie (SO_NETNS_COOKIE, Linux 5.14)";
                err = read_netns_cookie(&cookie);
                if (err == 0 && cookie == 0)
                        err = -ENOPROTOOPT;
                g->sandbox_netns_cookie = cookie;
                g->stub_err = err;
                close(a.netns_fd);
                (void)!write(a.ready_fd, &(uint64_t){1}, sizeof(uint64_t));
                return NULL;
        } else if ((err = net_loopback_up()) < 0)
                g->stub_step = "bring up the sandbox's loopback";
        if (err == 0) {
                g->stub_udp = bind_stub(SOCK_DGRAM);
                g->stub_tcp = bind_stub(SOCK_STREAM);
                /* the namespace's identity, to tell the sandbox's own sockets
                 * from the gate's (Linux 5.14) */
                uint64_t cookie = 0;
                socklen_t l = sizeof(cookie);
                if (g->stub_udp >= 0 && getsockopt(g->stub_udp, SOL_SOCKET, 71 /* SO_NETNS_COOKIE */, &cookie, &l) == 0)
                        g->sandbox_netns_cookie = cookie;
                err = g->stub_udp < 0 ? g->stub_udp : g->stub_tcp < 0 ? g->stub_tcp : 0;
                g->stub_step = "listen on " NET_STUB_ADDR ":53";
                if (err == 0 && g->sandbox_netns_cookie == 0) {
                        err = -ENOPROTOOPT;
                        g->stub_step = "read the namespace's cookie (SO_NETNS_COOKIE, Linux 5.14)";
                }
        }
        g->stub_err = err;
        close(a.netns_fd);
        (void)!write(a.ready_fd, &(uint64_t){1}, sizeof(uint64_t));
        if (err < 0)
                return NULL;

        uint8_t q[DNS_MAX_PACKET], out[DNS_MAX_PACKET];
        for (;;) {
                struct pollfd p[3] = {{g->stub_udp, POLLIN, 0}, {g->stub_tcp, POLLIN, 0}, {a.stop_fd, POLLIN, 0}};
                if (poll(p, 3, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (p[2].revents)
                        break;
                if (p[0].revents & POLLIN) {
                        struct sockaddr_storage from;
                        socklen_t fl = sizeof(from);
                        ssize_t n = recvfrom(g->stub_udp, q, sizeof(q), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
                        if (n > 0) {
                                ssize_t m = answer(g, q, (size_t)n, out, sizeof(out));
                                if (m > 0)
                                        (void)sendto(g->stub_udp, out, (size_t)m, MSG_DONTWAIT,
                                                     (struct sockaddr *)&from, fl);
                        }
                }
                if (p[1].revents & POLLIN) {
                        int c = accept4(g->stub_tcp, NULL, NULL, SOCK_CLOEXEC);
                        if (c >= 0) {
                                serve_tcp(g, c);
                                close(c);
                        }
                }
        }
        /* closed here, on this thread, beside the rest of the teardown
         * (~0.2 ms: the sockets are the sandbox network namespace's) */
        close(TAKE_FD(g->stub_udp));
        close(TAKE_FD(g->stub_tcp));
        return NULL;
}

int net_gate_start_stub(struct net_gate *g, int netns_fd)
{
        return net_gate_start_stub_shared(g, netns_fd, false);
}

int net_gate_start_stub_shared(struct net_gate *g, int netns_fd, bool shared)
{
        struct stub_args *a = xcalloc(1, sizeof(*a));
        a->g = g;
        a->shared = shared;
        a->netns_fd = fcntl(netns_fd, F_DUPFD_CLOEXEC, 3);
        a->ready_fd = eventfd(0, EFD_CLOEXEC);
        a->stop_fd = eventfd(0, EFD_CLOEXEC);
        if (a->netns_fd < 0 || a->ready_fd < 0 || a->stop_fd < 0) {
                int r = negative_errno();
                if (a->netns_fd >= 0)
                        close(a->netns_fd);
                if (a->ready_fd >= 0)
                        close(a->ready_fd);
                if (a->stop_fd >= 0)
                        close(a->stop_fd);
                free(a);
                return r;
        }
        int ready = a->ready_fd;
        g->stub_stop = a->stop_fd;
        int r = pthread_create(&g->stub, NULL, stub_main, a);
        if (r != 0) {
                close(a->netns_fd);
                close(ready);
                close(g->stub_stop);
                g->stub_stop = -1;
                free(a);
                return -r;
        }
        g->stub_started = true;
        g->stub_ready_fd = ready;
        return 0;
}

int net_gate_stub_ready(struct net_gate *g, const char **ret_step)
{
        if (ret_step)
                *ret_step = "start its thread";
        if (g->stub_ready_fd < 0)
                return g->stub_started ? 0 : -ESRCH;
        uint64_t v = 0;
        ssize_t n;
        do
                n = read(g->stub_ready_fd, &v, sizeof(v));
        while (n < 0 && errno == EINTR);
        close(g->stub_ready_fd);
        g->stub_ready_fd = -1;
        if (n != (ssize_t)sizeof(v))
                return -EIO;
        if (g->stub_err < 0 && ret_step)
                *ret_step = g->stub_step;
        return g->stub_err;
}

void net_gate_wind_down(struct net_gate *g)
{
        if (!g)
                return;
        if (g->stub_started)
                (void)!write(g->stub_stop, &(uint64_t){1}, sizeof(uint64_t));
        if (g->relay_stop >= 0) /* and every relay: the sandbox's connections end with it */
                (void)!write(g->relay_stop, &(uint64_t){1}, sizeof(uint64_t));
        /* a worker waiting for a lookup gives up now (it could not be
         * woken out of that wait to end with the engine) */
        pthread_mutex_lock(&g->lock);
        g->stopping = true;
        pthread_cond_broadcast(&g->cond);
        pthread_mutex_unlock(&g->lock);
}

void net_gate_stop_stub(struct net_gate *g)
{
        if (g->stub_ready_fd >= 0) {
                close(g->stub_ready_fd);
                g->stub_ready_fd = -1;
        }
        if (!g->stub_started)
                return;
        uint64_t one = 1;
        (void)!write(g->stub_stop, &one, sizeof(one));
        pthread_join(g->stub, NULL);
        g->stub_started = false;
        close(g->stub_stop);
        g->stub_stop = -1;
        if (g->stub_udp >= 0)
                close(g->stub_udp);
        if (g->stub_tcp >= 0)
                close(g->stub_tcp);
}
