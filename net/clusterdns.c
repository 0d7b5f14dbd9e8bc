/* Cluster DNS names (DESIGN.md, "Networks"): with networkPolicy.
 * clusterDomain set, the stub answers a name under it with the address the
 * cluster's own DNS server gives (the server the engine's resolv.conf
 * names, asked from the pod's namespace, where the stub listens), and only
 * when that address lies in a network the policy grants (clusterRules);
 * else the name does not exist for the sandbox. The answer is built anew
 * (one address), never the server's bytes passed on. */
#include "config.h"

#include <arpa/inet.h>
#include <poll.h>

#include "common/util.h"
#include "net/net-internal.h"

#define CLUSTER_DNS_TIMEOUT_MS 2000
#define CLUSTER_DNS_TTL        30

int net_gate_set_cluster_dns(struct net_gate *g, const char *domain, const char *server)
{
        struct sockaddr_storage ss = {0};
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        if (inet_pton(AF_INET, server, &in->sin_addr) == 1) {
                in->sin_family = AF_INET;
                in->sin_port = htons(53);
        } else if (inet_pton(AF_INET6, server, &in6->sin6_addr) == 1) {
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons(53);
        } else
                return -EINVAL;
        free(g->cluster_domain);
        g->cluster_domain = xstrdup(domain);
        g->cluster_dns = ss;
        return 0;
}

static bool under(const char *name, const char *domain)
{
        size_t n = strlen(name), d = strlen(domain);
        return n > d + 1 && name[n - d - 1] == '.' && strcasecmp(name + n - d, domain) == 0;
}

/* Past a (possibly compressed) name at *p in pkt[0..len): false if malformed. */
static bool skip_name(const uint8_t *pkt, size_t len, size_t *p)
{
        for (int labels = 0; labels < 128; labels++) {
                if (*p >= len)
                        return false;
                uint8_t l = pkt[*p];
                if ((l & 0xc0) == 0xc0) {
                        *p += 2;
                        return *p <= len;
                }
                if (l & 0xc0)
                        return false;
                *p += 1u + l;
                if (l == 0)
                        return *p <= len;
        }
        return false;
}

/* The first address of type qtype in the answer section whose network is
 * granted (1), none granted but some given (0), none at all (-ENOENT), or
 * a malformed answer (-EBADMSG). */
static int granted_address(const struct net_gate *g, const uint8_t *pkt, size_t len, uint16_t qtype, uint8_t ret[16])
{
        if (len < 12)
                return -EBADMSG;
        unsigned qd = (unsigned)pkt[4] << 8 | pkt[5], an = (unsigned)pkt[6] << 8 | pkt[7];
        size_t p = 12;
        for (unsigned i = 0; i < qd; i++)
                if (!skip_name(pkt, len, &p) || (p += 4) > len)
                        return -EBADMSG;
        bool any = false;
        for (unsigned i = 0; i < an; i++) {
                if (!skip_name(pkt, len, &p) || p + 10 > len)
                        return -EBADMSG;
                uint16_t type = (uint16_t)(pkt[p] << 8 | pkt[p + 1]);
                uint16_t rdlen = (uint16_t)(pkt[p + 8] << 8 | pkt[p + 9]);
                p += 10;
                if (p + rdlen > len)
                        return -EBADMSG;
                size_t alen = qtype == 1 ? 4 : 16;
                if (type == qtype && rdlen == alen) {
                        any = true;
                        if (net_cluster_in_network(g, qtype == 1 ? AF_INET : AF_INET6, pkt + p)) {
                                memcpy(ret, pkt + p, alen);
                                return 1;
                        }
                }
                p += rdlen;
        }
        return any ? 0 : -ENOENT;
}

ssize_t net_cluster_dns_answer(struct net_gate *g, const uint8_t *q, size_t len, const struct dns_question *dq,
                               uint8_t *out, size_t outsize)
{
        if (!g->cluster_domain || !g->upstream || !under(dq->name, g->cluster_domain))
                return -ENOENT;
        if (dq->qtype != 1 && dq->qtype != 28)
                return dns_build_response(q, dq, DNS_NOERROR, NULL, NULL, 0, out, outsize);
        /* asked from this thread's namespace: the stub's, the pod's */
        int family = g->cluster_dns.ss_family;
        _cleanup_close_ int s = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        socklen_t sl = family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
        uint8_t resp[4096];
        ssize_t n = -1;
        if (s >= 0 && connect(s, (const struct sockaddr *)&g->cluster_dns, sl) == 0 &&
            send(s, q, len, 0) == (ssize_t)len) {
                int64_t deadline = net_now_ms() + CLUSTER_DNS_TIMEOUT_MS;
                for (;;) {
                        int64_t left = deadline - net_now_ms();
                        struct pollfd pfd = {.fd = s, .events = POLLIN};
                        if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
                                break;
                        n = recv(s, resp, sizeof(resp), 0);
                        /* its answer to this query: the id, the answer bit */
                        if (n >= 12 && resp[0] == q[0] && resp[1] == q[1] && (resp[2] & 0x80))
                                break;
                        n = -1;
                }
        }
        if (n < 12) {
                net_audit(g, 0, "dns", dq->name, dq->name, NULL, false, REASON_RESOLVE_FAILED);
                return dns_build_response(q, dq, DNS_SERVFAIL, NULL, NULL, 0, out, outsize);
        }
        uint8_t addr[16];
        int r = (resp[3] & 0x0f) == 0 ? granted_address(g, resp, (size_t)n, dq->qtype, addr) : -ENOENT;
        if (r <= 0) {
                /* outside every granted network (or no such name): it does not exist here */
                net_audit(g, 0, "dns", dq->name, dq->name, NULL, false,
                          r == 0 ? REASON_SSRF_BLOCKED : REASON_DNS_BLOCKED);
                return dns_build_response(q, dq, DNS_NXDOMAIN, NULL, NULL, 0, out, outsize);
        }
        char text[INET6_ADDRSTRLEN];
        inet_ntop(dq->qtype == 1 ? AF_INET : AF_INET6, addr, text, sizeof(text));
        net_audit(g, 0, "dns", dq->name, dq->name, text, true, REASON_DNS_ANSWERED);
        return dns_build_response(q, dq, DNS_NOERROR, dq->qtype == 1 ? (const struct in_addr *)addr : NULL,
                                  dq->qtype == 28 ? (const struct in6_addr *)addr : NULL, CLUSTER_DNS_TTL, out,
                                  outsize);
}
