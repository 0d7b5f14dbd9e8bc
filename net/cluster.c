/* In-cluster grants (DESIGN.md, "Networks"): a sandbox that lives in a
 * network namespace an engine prepared (a pod's) may reach the networks its
 * policy grants, each on its listed ports, by address. The gate connects
 * from that namespace (upstream.c) and injects the socket, as it does for a
 * listed name; nothing is granted to a sandbox in cordon's own namespace,
 * where such a connection would leave from the host's. No relay: a grant
 * names a network and ports, not a host whose TLS name could be checked. */
#include "config.h"

#include <fcntl.h>
#include <poll.h>

#include "common/util.h"
#include "net/net-internal.h"

struct net_cluster {
        struct net_cidr net;
        unsigned *ports;
        size_t n_ports;
};

int net_gate_set_cluster(struct net_gate *g, const struct net_cluster_rule *rules, size_t n)
{
        if (n == 0)
                return 0;
        g->cluster = xcalloc(n, sizeof(*g->cluster));
        for (size_t i = 0; i < n; i++) {
                g->cluster[i].net = rules[i].net;
                g->cluster[i].ports = xcalloc(rules[i].n_ports + 1, sizeof(unsigned));
                memcpy(g->cluster[i].ports, rules[i].ports, rules[i].n_ports * sizeof(unsigned));
                g->cluster[i].n_ports = rules[i].n_ports;
        }
        g->n_cluster = n;
        return 0;
}

void net_cluster_free(struct net_gate *g)
{
        for (size_t i = 0; i < g->n_cluster; i++)
                free(g->cluster[i].ports);
        free(g->cluster);
        free(g->cluster_domain);
        g->cluster_domain = NULL;
        g->cluster = NULL;
        g->n_cluster = 0;
}

static bool in_net(const struct net_cidr *c, int family, const uint8_t *addr)
{
        if (c->family != family)
                return false;
        unsigned full = c->prefix / 8, rest = c->prefix % 8;
        if (memcmp(c->addr, addr, full) != 0)
                return false;
        return rest == 0 || ((c->addr[full] ^ addr[full]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

bool net_cluster_in_network(const struct net_gate *g, int family, const uint8_t *addr)
{
        for (size_t i = 0; i < g->n_cluster; i++)
                if (in_net(&g->cluster[i].net, family, addr))
                        return true;
        return false;
}

bool net_cluster_granted(const struct net_gate *g, const struct sockaddr *sa, size_t len, unsigned port)
{
        /* only from a joined namespace: elsewhere the gate's sockets are the host's */
        if (!g->upstream || g->n_cluster == 0)
                return false;
        int family = sa->sa_family;
        const uint8_t *addr;
        if (family == AF_INET && len >= sizeof(struct sockaddr_in))
                addr = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
        else if (family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
                addr = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
                /* ::ffff:a.b.c.d is a.b.c.d on the wire */
                static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
                if (memcmp(addr, mapped, sizeof(mapped)) == 0) {
                        family = AF_INET;
                        addr += 12;
                }
        } else
                return false;
        for (size_t i = 0; i < g->n_cluster; i++) {
                if (!in_net(&g->cluster[i].net, family, addr))
                        continue;
                for (size_t k = 0; k < g->cluster[i].n_ports; k++)
                        if (g->cluster[i].ports[k] == port)
                                return true;
        }
        return false;
}

int net_cluster_connect(struct net_gate *g, unsigned pid, const char *dest, const struct sockaddr *sa, socklen_t len,
                        bool nonblock, bool *ret_inprogress)
{
        /* fail closed: a connection the audit log cannot record is not made */
        if (atomic_load(&g->audit_closed)) {
                net_audit(g, pid, "connect", dest, NULL, dest, false, REASON_AUDIT_FULL);
                return -EACCES;
        }
        int s = net_upstream_socket(g, sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0),
                                    IPPROTO_TCP);
        if (s < 0)
                return s;
        if (connect(s, sa, len) < 0) {
                int r = negative_errno();
                if (r == -EINPROGRESS && nonblock) {
                        /* a refusal comes within a round trip: said by connect() as the kernel would */
                        struct pollfd pw = {.fd = s, .events = POLLOUT};
                        int err = 0;
                        socklen_t el = sizeof(err);
                        if (poll(&pw, 1, 200) > 0 && getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err)
                                r = -err;
                        else
                                r = 0;
                        *ret_inprogress = r == 0 && !(pw.revents & POLLOUT);
                }
                if (r < 0) {
                        close(s);
                        net_audit(g, pid, "connect", dest, NULL, dest, true, REASON_CONNECT_FAILED);
                        return r;
                }
        }
        net_audit(g, pid, "connect", dest, NULL, dest, true, REASON_ALLOWED);
        return s;
}
