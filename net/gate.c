/* The egress gate: connect(), sendto() and sendmsg() emulation.
 *
 * The sandbox's network namespace has only loopback, so nothing it sends can
 * leave by itself. The only way out is a connection the sentry makes from
 * the host's namespace: for a synthetic address the DNS stub handed out
 * (standing for one listed name), on the listed port, the gate resolves the
 * name itself, refuses the answer if any address is not public, connects to
 * the address it checked, and puts the connected socket in place of the
 * child's (same fd number). */
#include "config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>

#include "common/util.h"
#include "net/net-internal.h"

#define MAX_ADDRS 16
/* how long a non-blocking connect() waits for the upstream's answer before
 * it says EINPROGRESS (a refusal arrives within a round trip) */
#define NET_CONNECT_WAIT_MS 1000

const char net_resolv_conf[] = "# cordon: the sandbox's resolver is the sentry's DNS stub\n"
                               "nameserver " NET_STUB_ADDR "\n"
                               "options edns0 trust-ad\n";
const char net_hosts[] = "127.0.0.1\tlocalhost\n"
                         "127.0.1.1\tcordon\n"
                         "::1\tlocalhost ip6-localhost ip6-loopback\n";

struct resolve_req {
        char name[256];
        struct sockaddr_storage addrs[MAX_ADDRS];
        int n;
        int error;       /* 0 or -errno / EAI mapped to -ENOENT, -EAGAIN */
        bool overridden; /* answered by the policy's test hosts file */
        bool done;
        struct resolve_req *next;
};

/* --- the resolver thread --- */

/* The test hosts file: "NAME ADDRESS" lines, read again for every lookup so
 * a test can change an answer between two connects (rebinding). */
static int lookup_hosts_file(const char *file, struct resolve_req *req)
{
        _cleanup_fclose_ FILE *f = fopen(file, "re");
        if (!f)
                return -ENOENT;
        char line[512];
        int n = 0;
        while (fgets(line, sizeof(line), f) && n < MAX_ADDRS) {
                char name[256], addr[64];
                if (line[0] == '#' || sscanf(line, "%255s %63s", name, addr) != 2)
                        continue;
                if (strcasecmp(name, req->name) != 0)
                        continue;
                struct sockaddr_storage *ss = &req->addrs[n];
                memset(ss, 0, sizeof(*ss));
                struct sockaddr_in *in = (struct sockaddr_in *)ss;
                struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
                if (inet_pton(AF_INET, addr, &in->sin_addr) == 1)
                        in->sin_family = AF_INET;
                else if (inet_pton(AF_INET6, addr, &in6->sin6_addr) == 1)
                        in6->sin6_family = AF_INET6;
                else
                        continue;
                n++;
        }
        if (n == 0)
                return -ENOENT;
        req->n = n;
        req->overridden = true;
        return 0;
}

static void resolve_now(struct net_gate *g, struct resolve_req *req)
{
        if (g->test_hosts_file && lookup_hosts_file(g->test_hosts_file, req) == 0)
                return;
        struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
        int r = getaddrinfo(req->name, NULL, &hints, &res);
        if (r != 0) {
                req->error = r == EAI_AGAIN ? -EAGAIN : -ENOENT;
                return;
        }
        for (struct addrinfo *ai = res; ai && req->n < MAX_ADDRS; ai = ai->ai_next)
                if ((ai->ai_family == AF_INET || ai->ai_family == AF_INET6) && ai->ai_addrlen <= sizeof(req->addrs[0]))
                        memcpy(&req->addrs[req->n++], ai->ai_addr, ai->ai_addrlen);
        freeaddrinfo(res);
        if (req->n == 0)
                req->error = -ENOENT;
}

static void *resolver_main(void *arg)
{
        struct net_gate *g = arg;
        pthread_mutex_lock(&g->lock);
        for (;;) {
                while (!g->queue && !g->stopping)
                        pthread_cond_wait(&g->cond, &g->lock);
                if (g->stopping)
                        break;
                struct resolve_req *req = g->queue;
                g->queue = req->next;
                /* Resolved in a copy of our own: the asker may give up while
                 * we wait on a DNS server (the sandbox has ended), and its
                 * request is on its stack. */
                struct resolve_req work = *req;
                g->inflight = req;
                g->resolving = true;
                pthread_mutex_unlock(&g->lock);
                resolve_now(g, &work);
                pthread_mutex_lock(&g->lock);
                g->resolving = false;
                if (g->inflight == req) {
                        *req = work; /* out of the queue: its next is no more read */
                        req->done = true;
                        pthread_cond_broadcast(&g->cond);
                }
                g->inflight = NULL;
        }
        pthread_mutex_unlock(&g->lock);
        return NULL;
}

/* Resolves name in the resolver thread (the worker calling this is chrooted
 * in the view, whose resolver is the stub itself): resolve_begin hands the
 * request over and returns at once, so that the worker can do what does
 * not depend on the answer (gate_connect) while the resolver thread wakes
 * and works; resolve_wait, which must follow every resolve_begin (the
 * request is on the caller's stack), takes the answer. */
static void resolve_begin(struct net_gate *g, const char *name, struct resolve_req *req)
{
        memset(req, 0, sizeof(*req));
        snprintf(req->name, sizeof(req->name), "%s", name);
        if (!g->resolver_started) {
                req->error = -ENOENT; /* no listed name: never asked (net_gate_new) */
                req->done = true;
                return;
        }
        pthread_mutex_lock(&g->lock);
        req->next = NULL;
        struct resolve_req **tail = &g->queue;
        while (*tail)
                tail = &(*tail)->next;
        *tail = req;
        pthread_cond_broadcast(&g->cond);
        pthread_mutex_unlock(&g->lock);
}

static int resolve_wait(struct net_gate *g, struct resolve_req *req)
{
        if (!g->resolver_started)
                return req->error;
        pthread_mutex_lock(&g->lock);
        while (!req->done && !g->stopping)
                pthread_cond_wait(&g->cond, &g->lock);
        bool done = req->done;
        if (!done) {
                /* the gate winds down: nobody is left to connect for, and
                 * this request goes with our stack, out of the resolver's
                 * hands (it drops an answer that comes) or out of its queue */
                if (g->inflight == req)
                        g->inflight = NULL;
                for (struct resolve_req **p = &g->queue; *p; p = &(*p)->next)
                        if (*p == req) {
                                *p = req->next;
                                break;
                        }
        }
        pthread_mutex_unlock(&g->lock);
        return done ? req->error : -ECANCELED;
}

/* --- socket options --- */

/* Options the child may have set on its socket before connecting, carried
 * over to the one that replaces it. */
static const struct {
        int level, name;
} carried_opts[NET_CARRIED_OPTS] = {
        {SOL_SOCKET, SO_KEEPALIVE}, {SOL_SOCKET, SO_REUSEADDR},      {SOL_SOCKET, SO_LINGER},
        {SOL_SOCKET, SO_RCVTIMEO},  {SOL_SOCKET, SO_SNDTIMEO},       {SOL_SOCKET, SO_OOBINLINE},
        {IPPROTO_TCP, TCP_NODELAY}, {IPPROTO_TCP, TCP_KEEPIDLE},     {IPPROTO_TCP, TCP_KEEPINTVL},
        {IPPROTO_TCP, TCP_KEEPCNT}, {IPPROTO_TCP, TCP_USER_TIMEOUT}, {IPPROTO_TCP, TCP_QUICKACK},
};

static void read_socket_options(int fd, struct net_sockopt ret[static NET_CARRIED_OPTS])
{
        for (size_t i = 0; i < NET_CARRIED_OPTS; i++) {
                ret[i].len = sizeof(ret[i].val);
                ret[i].ok = getsockopt(fd, carried_opts[i].level, carried_opts[i].name, ret[i].val, &ret[i].len) == 0;
        }
}

/* Carries the child's options (read_socket_options of its socket) over to
 * `to`. One whose value is what a fresh socket of the gate's has anyway
 * (g->opt_defaults, read once at start) is left alone: setting it would
 * change nothing, and each is a system call on the connect path (12 of
 * them for a socket the child did not touch). */
static void apply_socket_options(const struct net_gate *g, const struct net_sockopt opts[static NET_CARRIED_OPTS],
                                 int to)
{
        for (size_t i = 0; i < NET_CARRIED_OPTS; i++) {
                if (!opts[i].ok)
                        continue;
                const struct net_sockopt *d = &g->opt_defaults[i];
                if (d->ok && d->len == opts[i].len && memcmp(d->val, opts[i].val, d->len) == 0)
                        continue;
                (void)setsockopt(to, carried_opts[i].level, carried_opts[i].name, opts[i].val, opts[i].len);
        }
}

/* The child's SO_SNDTIMEO (read_socket_options) in ms, the bound of a
 * blocking connect(); -1: none (0 is "none" to the kernel too). */
static int send_timeout_ms(const struct net_sockopt opts[static NET_CARRIED_OPTS])
{
        for (size_t i = 0; i < NET_CARRIED_OPTS; i++) {
                if (carried_opts[i].level != SOL_SOCKET || carried_opts[i].name != SO_SNDTIMEO || !opts[i].ok ||
                    opts[i].len != sizeof(struct timeval))
                        continue;
                struct timeval tv;
                memcpy(&tv, opts[i].val, sizeof(tv));
                int64_t ms = (int64_t)tv.tv_sec * 1000 + (tv.tv_usec + 999) / 1000;
                if (ms > 0)
                        return ms > INT32_MAX ? INT32_MAX : (int)ms;
        }
        return -1;
}

/* --- the gate --- */

int net_gate_new(const struct net_gate_config *cfg, struct net_gate **ret)
{
        struct net_gate *g = xcalloc(1, sizeof(*g));
        g->cfg = *cfg;
        g->sandbox_id = xstrdup(cfg->sandbox_id ? cfg->sandbox_id : "");
        g->n_rules = cfg->n_rules < NET_POOL_MAX ? cfg->n_rules : NET_POOL_MAX;
        g->rules = xcalloc(g->n_rules, sizeof(*g->rules));
        g->hosts = xcalloc(g->n_rules, sizeof(char *));
        for (size_t i = 0; i < g->n_rules; i++) {
                g->hosts[i] = xstrdup(cfg->rules[i].host);
                g->rules[i] = (struct net_rule){g->hosts[i], cfg->rules[i].port, cfg->rules[i].ask};
        }
        g->test_hosts_file = cfg->test_hosts_file ? xstrdup(cfg->test_hosts_file) : NULL;
        g->n_test_allow = cfg->n_test_allow;
        g->test_allow = xcalloc(g->n_test_allow, sizeof(*g->test_allow));
        if (g->n_test_allow > 0)
                memcpy(g->test_allow, cfg->test_allow, g->n_test_allow * sizeof(*g->test_allow));
        g->audit_fd = cfg->audit_fd;
        g->audit_log_bounded = cfg->audit_log_bounded;
        g->stub_udp = g->stub_tcp = g->stub_stop = g->stub_ready_fd = g->relay_stop = -1;
        g->pair_listen[0] = g->pair_listen[1] = g->relay_ep = -1;
        /* the carried options' values on a fresh socket of the host's
         * namespace, as the gate makes them (none known: all are copied) */
        int probe = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
        if (probe < 0)
                probe = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
        if (probe >= 0) {
                read_socket_options(probe, g->opt_defaults);
                close(probe);
        }
        pthread_mutex_init(&g->lock, NULL);
        pthread_cond_init(&g->cond, NULL);
        pthread_mutex_init(&g->audit_lock, NULL);
        pthread_mutex_init(&g->relay_lock, NULL);
        pthread_mutex_init(&g->ask_lock, NULL);
        pthread_cond_init(&g->relay_cond, NULL);
        pthread_mutex_init(&g->pair_lock, NULL);
        g->broker = cfg->broker;
        g->relay_stop = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        g->relay_ep = epoll_create1(EPOLL_CLOEXEC);
        struct epoll_event stop_ev = {.events = EPOLLIN, .data.u64 = 0}; /* the relays' ids start at 1 */
        if (g->relay_stop < 0 || g->relay_ep < 0 ||
            epoll_ctl(g->relay_ep, EPOLL_CTL_ADD, g->relay_stop, &stop_ev) < 0) {
                int e = negative_errno();
                net_gate_free(g);
                return e;
        }
        /* The resolver looks up only listed names (gate_connect): a policy
         * that lists none (the default) never needs it, and gets none. */
        if (g->n_rules > 0) {
                int r = pthread_create(&g->resolver, NULL, resolver_main, g);
                if (r != 0) {
                        net_gate_free(g);
                        return -r;
                }
                g->resolver_started = true;
        }
        *ret = g;
        return 0;
}

void net_gate_free(struct net_gate *g)
{
        if (!g)
                return;
        net_gate_stop_stub(g);
        net_upstream_free(g);
        net_cluster_free(g);
        /* relays still running (a stuck one, past the wait) keep the gate */
        bool relays_left = !net_relay_stop_all(g);
        pthread_mutex_lock(&g->lock);
        g->stopping = true;
        pthread_cond_broadcast(&g->cond);
        /* A lookup in flight ends only by its own timeout (a DNS server
         * that does not answer: many seconds). The resolver is left to it,
         * and the gate to the resolver: the sentry ends soon after. */
        bool abandoned = (g->resolver_started && g->resolving) || relays_left;
        pthread_mutex_unlock(&g->lock);
        if (abandoned)
                pthread_detach(g->resolver);
        else if (g->resolver_started)
                pthread_join(g->resolver, NULL);
        if (g->cfg.verbose) {
                fprintf(stderr, "cordon: egress:");
                bool any = false;
                for (int i = 0; i < REASON_COUNT; i++) {
                        uint64_t n = atomic_load(&g->counts[i]);
                        if (n) {
                                fprintf(stderr, " %s=%llu", net_reason_name((enum net_reason)i), (unsigned long long)n);
                                any = true;
                        }
                }
                fprintf(stderr, any ? "\n" : " no network activity\n");
        }
        if (abandoned)
                return;
        for (size_t i = 0; i < g->n_rules; i++)
                free(g->hosts[i]);
        free(g->hosts);
        free(g->rules);
        free(g->test_hosts_file);
        free(g->test_allow);
        free(g->sandbox_id);
        if (g->relay_stop >= 0)
                close(g->relay_stop);
        for (int i = 0; i < 2; i++)
                if (g->pair_listen[i] >= 0)
                        close(g->pair_listen[i]);
        if (g->relay_ep >= 0)
                close(g->relay_ep);
        pthread_mutex_destroy(&g->audit_lock);
        free(g);
}

static bool in_cidr(const struct net_cidr *c, const struct sockaddr *sa)
{
        const uint8_t *a;
        if (sa->sa_family == AF_INET && c->family == AF_INET)
                a = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
        else if (sa->sa_family == AF_INET6 && c->family == AF_INET6)
                a = (const uint8_t *)&((const struct sockaddr_in6 *)sa)->sin6_addr;
        else
                return false;
        for (unsigned b = 0; b < c->prefix; b++)
                if ((a[b / 8] ^ c->addr[b / 8]) & (0x80 >> (b % 8)))
                        return false;
        return true;
}

/* An address the gate may connect to: public, or (test only) inside one of
 * the policy's allowPrivateNetworks. */
static bool address_allowed(const struct net_gate *g, const struct sockaddr *sa, size_t len, bool *ret_override)
{
        int c = net_classify_sockaddr(sa, len);
        if (c == ADDR_PUBLIC)
                return true;
        for (size_t i = 0; i < g->n_test_allow; i++)
                if (in_cidr(&g->test_allow[i], sa)) {
                        *ret_override = true;
                        return true;
                }
        return false;
}

static size_t sockaddr_len(int family)
{
        return family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
}

static void set_port(struct sockaddr_storage *ss, unsigned port)
{
        if (ss->ss_family == AF_INET)
                ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
        else
                ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
}

/* Literally the sandbox's own loopback: 127/8, ::1 or ::ffff:127/8 (not the
 * other encodings the classifier also calls loopback, such as 6to4 or NAT64
 * forms, which a kernel would route elsewhere). */
static bool is_loopback(const struct sockaddr *sa, size_t len)
{
        if (sa->sa_family == AF_INET && len >= sizeof(struct sockaddr_in))
                return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
        if (sa->sa_family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
                const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
                return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
        }
        return false;
}

struct child_socket {
        int dup; /* our duplicate of the child's socket */
        int domain, type;
        bool nonblock;
        bool foreign; /* not of the sandbox's network namespace: made by the gate, or handed in */
};

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

static uint64_t g_sandbox_cookie(struct notify_call *call)
{
        return ((const struct net_gate *)call->userdata)->sandbox_netns_cookie;
}

static int inspect_socket(struct notify_call *call, int fd, struct child_socket *ret)
{
        int d = notify_dup_child_fd(call, fd);
        if (d < 0)
                return d;
        socklen_t l = sizeof(int);
        int domain = -1, type = -1;
        if (getsockopt(d, SOL_SOCKET, SO_DOMAIN, &domain, &l) < 0) {
                int r = errno == ENOTSOCK ? -ENOTSOCK : negative_errno();
                close(d);
                return r;
        }
        l = sizeof(int);
        (void)getsockopt(d, SOL_SOCKET, SO_TYPE, &type, &l);
        int fl = fcntl(d, F_GETFL);
        uint64_t cookie = 0;
        l = sizeof(cookie);
        bool foreign = true; /* unknown counts as foreign: fail closed */
        if (getsockopt(d, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &l) == 0)
                foreign = cookie != g_sandbox_cookie(call);
        *ret = (struct child_socket){
                .dup = d, .domain = domain, .type = type, .nonblock = fl >= 0 && (fl & O_NONBLOCK), .foreign = foreign};
        return 0;
}

/* A socket of another network namespace — the host's, as every socket the
 * gate installs is, or one handed in as stdin — must never be aimed
 * anywhere again: disconnected (AF_UNSPEC) and reconnected, it would reach
 * the host's loopback and interfaces. Its connect() gets what the kernel
 * gives a socket already connected or connecting; nothing else. */
static int refuse_reaim(struct net_gate *g, struct notify_call *call, const char *syscall_name,
                        const struct child_socket *cs, const char *dest, struct notify_verdict *ret)
{
        struct tcp_info ti;
        socklen_t l = sizeof(ti);
        int err = 0;
        socklen_t el = sizeof(err);
        int relay = net_relay_state(g, cs->dup, NULL, NULL);
        if (relay == 0)
                ret->error = EALREADY; /* the relay's upstream is still connecting */
        else if (relay < 0)
                ret->error = -relay; /* and failed: said as SO_ERROR would */
        else if (getsockopt(cs->dup, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err != 0)
                ret->error = err; /* a failed non-blocking connect reports its error, as the kernel's would */
        else if (getsockopt(cs->dup, IPPROTO_TCP, TCP_INFO, &ti, &l) == 0 && ti.tcpi_state == TCP_SYN_SENT)
                ret->error = EALREADY;
        else
                ret->error = EISCONN;
        if (ret->error == EISCONN || ret->error == EALREADY)
                net_audit(g, call->req->pid, syscall_name, dest, NULL, NULL, false, REASON_EGRESS_BLOCKED);
        return 0;
}

/* Connects to a listed name on behalf of the child. On success returns the
 * connected (or, non-blocking, connecting) socket and sets *ret_inprogress;
 * -EACCES with the reason for a refusal, or the connect error. */
static int gate_connect(struct net_gate *g, struct notify_call *call, const char *syscall_name, const char *dest,
                        unsigned index, unsigned port, int fd, const struct child_socket *cs, int *ret_cloexec,
                        bool *ret_inprogress)
{
        const struct net_rule *rule = &g->rules[index];
        unsigned pid = call->req->pid;
        /* fail closed: a connection whose record the audit log cannot take
         * is not made (nor its name resolved) */
        if (atomic_load(&g->audit_closed)) {
                net_audit(g, pid, syscall_name, dest, rule->host, NULL, false, REASON_AUDIT_FULL);
                return -EACCES;
        }
        if (port != rule->port) {
                net_audit(g, pid, syscall_name, dest, rule->host, NULL, false, REASON_PORT_BLOCKED);
                return -EACCES;
        }
        if (cs->type != SOCK_STREAM) {
                net_audit(g, pid, syscall_name, dest, rule->host, NULL, false, REASON_EGRESS_BLOCKED);
                return -EACCES;
        }
        /* What does not hang on the answer is done while the resolver
         * thread looks the name up (its wake-up alone is tens of µs): the
         * child's options read, its fd's close-on-exec flag (for inject),
         * and the loopback pair the child will get. Nothing here reaches
         * upstream or the child; on a refusal the pair is closed unseen. */
        struct resolve_req req;
        resolve_begin(g, rule->host, &req);
        struct net_sockopt opts[NET_CARRIED_OPTS];
        read_socket_options(cs->dup, opts);
        *ret_cloexec = notify_child_fd_cloexec(call, fd);
        _cleanup_close_ int child = -1, ours = -1;
        int pr = net_relay_pair(g, cs->domain, cs->nonblock, &child, &ours);
        if (pr < 0 && cs->domain == AF_INET6) /* a host without IPv6 loopback: an IPv4 pair, as an upstream might be */
                pr = net_relay_pair(g, AF_INET, cs->nonblock, &child, &ours);
        int r = resolve_wait(g, &req);
        if (r < 0) {
                net_audit(g, pid, syscall_name, dest, rule->host, NULL, false, REASON_RESOLVE_FAILED);
                return r == -EAGAIN ? -EAGAIN : -ENETUNREACH;
        }
        /* every address must be allowed: a name that also answers with a
         * private address is a rebinding or SSRF attempt, whichever we pick */
        bool override = false;
        char resolved[INET6_ADDRSTRLEN + 8] = "";
        for (int i = 0; i < req.n; i++) {
                set_port(&req.addrs[i], port);
                char a[80];
                net_format_sockaddr((struct sockaddr *)&req.addrs[i], sizeof(req.addrs[i]), a, sizeof(a));
                if (!address_allowed(g, (struct sockaddr *)&req.addrs[i], sizeof(req.addrs[i]), &override)) {
                        net_audit(g, pid, syscall_name, dest, rule->host, a, false, REASON_SSRF_BLOCKED);
                        return -EACCES;
                }
        }
        const struct sockaddr_storage *target = &req.addrs[0];
        net_format_sockaddr((const struct sockaddr *)target, sizeof(*target), resolved, sizeof(resolved));
        if (override || req.overridden)
                net_audit(g, pid, syscall_name, dest, rule->host, resolved, true, REASON_TEST_OVERRIDE);

        /* in the joined namespace where the sandbox lives in one (upstream.c);
         * non-blocking whatever the child's is, so that the child's end is
         * made ready while the handshake is on the wire (below) */
        _cleanup_close_ int s =
                net_upstream_socket(g, target->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, IPPROTO_TCP);
        if (s < 0)
                return s;
        apply_socket_options(g, opts, s);
        int state = 1; /* the relay's view of the upstream: connected */
        r = connect(s, (const struct sockaddr *)target, (socklen_t)sockaddr_len(target->ss_family)) < 0
                    ? negative_errno()
                    : 0;
        if (r == -EINPROGRESS) {
                r = 0;
                if (pr == 0)
                        apply_socket_options(g, opts, child);
                /* A blocking child's connect() returns when the handshake
                 * is done, as a blocking connect of ours would have (its
                 * SO_SNDTIMEO, carried over, bounds it: EINPROGRESS then,
                 * as the kernel says). A non-blocking one's waits here
                 * briefly: a refusal comes within a round trip, and the
                 * child's connect() reports it as the kernel's would, not
                 * as a reset later. */
                int timeout = cs->nonblock ? NET_CONNECT_WAIT_MS : send_timeout_ms(opts);
                struct pollfd pw = {.fd = s, .events = POLLOUT};
                int k;
                while ((k = poll(&pw, 1, timeout)) < 0 && errno == EINTR)
                        ;
                int err = 0;
                socklen_t el = sizeof(err);
                if (k > 0 && getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el) == 0 && err != 0)
                        r = -err;
                else if (k <= 0)
                        r = -EINPROGRESS;
                if (r == -EINPROGRESS && cs->nonblock) {
                        state = 0;
                        *ret_inprogress = true;
                } else if (r == 0 && cs->nonblock)
                        *ret_inprogress = true;
        } else if (r == 0 && pr == 0)
                apply_socket_options(g, opts, child);
        if (r < 0 && !(r == -EINPROGRESS && cs->nonblock)) {
                net_audit(g, pid, syscall_name, dest, rule->host, resolved, true, REASON_CONNECT_FAILED);
                return r;
        }
        net_audit(g, pid, syscall_name, dest, rule->host, resolved, true, REASON_ALLOWED);
        /* Every allowed connection runs through a relay (relay.c): the child
         * gets its end of a loopback pair, the relay checks the first
         * flight before anything goes upstream. */
        if (pr < 0)
                return pr;
        r = net_relay_start(g, child, TAKE_FD(ours), TAKE_FD(s), state, index, pid, dest, resolved,
                            (const struct sockaddr *)target, (socklen_t)sockaddr_len(target->ss_family));
        if (r < 0)
                return r;
        return TAKE_FD(child);
}

/* A listed name whose rule says "ask": the connection waits for a person
 * before the gate resolves or connects anything. Asked only for what the
 * gate would otherwise allow (the rule's port, a stream socket); decided on
 * our copy (the rule the pool address stands for, and the port), and the
 * gate then connects to the address it resolves and checks itself, as for
 * any listed name. 1 go on, 0 *ret set (held or refused), -errno. */
static int ask_egress(struct notify_call *call, const char *syscall_name, const struct net_rule *rule, unsigned port,
                      const void *bytes, size_t n_bytes, struct notify_verdict *ret)
{
        if (!rule->ask || port != rule->port)
                return 1;
        struct notify_ask q = {0};
        snprintf(q.capability, sizeof(q.capability), "egress");
        snprintf(q.target, sizeof(q.target), "%s:%u", rule->host, port);
        snprintf(q.syscall, sizeof(q.syscall), "%s", syscall_name);
        q.n_bytes = n_bytes < sizeof(q.bytes) ? n_bytes : sizeof(q.bytes);
        if (q.n_bytes)
                memcpy(q.bytes, bytes, q.n_bytes);
        return notify_ask(call, &q, ret);
}

/* Puts s in place of the child's fd, with the close-on-exec flag the
 * child's had (cloexec: notify_child_fd_cloexec's answer), and sets the
 * answer. */
static int inject(struct notify_call *call, int fd, int s, int cloexec, bool inprogress, int64_t value,
                  struct notify_verdict *ret)
{
        int r = notify_install_fd(call, s, fd, cloexec > 0 ? O_CLOEXEC : 0);
        close(s);
        if (r < 0) {
                ret->error = r == -ENOENT ? EINTR : -r;
                return 0;
        }
        if (inprogress) {
                ret->error = EINPROGRESS;
                return 0;
        }
        ret->kind = VERDICT_VALUE;
        ret->value = value;
        return 0;
}

static int read_sockaddr(struct notify_call *call, uint64_t addr, uint64_t len, struct sockaddr_storage *ret,
                         size_t *ret_len)
{
        if ((int64_t)(int32_t)len < 0 || (uint32_t)len > sizeof(*ret))
                return -EINVAL;
        memset(ret, 0, sizeof(*ret));
        int r = notify_read_mem(call, addr, ret, (uint32_t)len);
        if (r < 0)
                return r;
        *ret_len = (uint32_t)len;
        /* the kernel takes a sockaddr_in6 without its scope id (24 bytes) */
        if (ret->ss_family == AF_INET6 && len >= 24 && len < sizeof(struct sockaddr_in6))
                *ret_len = sizeof(struct sockaddr_in6);
        return 0;
}

/* A destination the child named: its own loopback passes, a pool address is
 * the gate's business, anything else is a raw address and refused. */
enum dest_kind { DEST_LOOPBACK, DEST_POOL, DEST_LITERAL, DEST_UNSPEC };

static enum dest_kind classify_dest(const struct net_gate *g, const struct sockaddr_storage *ss, size_t len,
                                    int *ret_index, unsigned *ret_port)
{
        /* not an inet address: on a unix or netlink socket it names something
         * inside the sandbox's own namespaces; on an inet socket the kernel
         * refuses it */
        if (len < sizeof(sa_family_t) || (ss->ss_family != AF_INET && ss->ss_family != AF_INET6))
                return DEST_UNSPEC;
        int idx = net_pool_lookup((const struct sockaddr *)ss, len);
        if (ss->ss_family == AF_INET && len >= sizeof(struct sockaddr_in))
                *ret_port = ntohs(((const struct sockaddr_in *)ss)->sin_port);
        else if (ss->ss_family == AF_INET6 && len >= sizeof(struct sockaddr_in6))
                *ret_port = ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
        if (idx >= 0 && (size_t)idx < g->n_rules) {
                *ret_index = idx;
                return DEST_POOL;
        }
        /* a pool address the stub never handed out is just a raw address */
        if (is_loopback((const struct sockaddr *)ss, len))
                return DEST_LOOPBACK;
        return DEST_LITERAL;
}

/* A destination as the child named it: our one copy of its sockaddr, what
 * kind it is, and its text for the audit log. */
struct target {
        struct sockaddr_storage ss;
        size_t len;
        enum dest_kind kind;
        int index; /* rule index, for DEST_POOL */
        unsigned port;
        char text[96];
};

static int read_target(struct net_gate *g, struct notify_call *call, uint64_t addr, uint64_t len, struct target *t)
{
        int r = read_sockaddr(call, addr, len, &t->ss, &t->len);
        if (r < 0)
                return r;
        t->index = -1;
        t->port = 0;
        t->kind = classify_dest(g, &t->ss, t->len, &t->index, &t->port);
        net_format_sockaddr((struct sockaddr *)&t->ss, t->len, t->text, sizeof(t->text));
        return 0;
}

/* Inspects the socket a call names. Returns 1 with *cs filled, 0 when the
 * verdict is already set (not a socket: CONTINUE, the kernel answers
 * ENOTSOCK; or an error). */
static int socket_of_call(struct notify_call *call, int fd, struct child_socket *cs, struct notify_verdict *ret)
{
        int r = inspect_socket(call, fd, cs);
        if (r == -ENOTSOCK) {
                /* CONTINUE is safe: the kernel refuses a socket call on what is
                 * not a socket, whatever the address */
                ret->kind = VERDICT_CONTINUE;
                return 0;
        }
        if (r < 0) {
                ret->error = -r;
                return 0;
        }
        return 1;
}

/* Emulates connect(2) for the egress gate. */
int net_handle_connect(struct notify_call *call, struct notify_verdict *ret)
{
        struct net_gate *g = call->userdata;
        const struct seccomp_data *d = &call->req->data;
        int fd = (int)d->args[0];
        struct target t;
        int r = read_target(g, call, d->args[1], d->args[2], &t);
        if (r < 0) {
                ret->error = -r;
                return 0;
        }
        /* The socket first, whatever the address says: what it is (our
         * duplicate of it), not child memory, decides whether it may be
         * aimed at all. */
        struct child_socket cs;
        if (!socket_of_call(call, fd, &cs, ret)) {
                if (ret->kind == VERDICT_CONTINUE && (t.kind == DEST_POOL || t.kind == DEST_LITERAL)) {
                        ret->kind = VERDICT_ERROR; /* an inet address on a non-socket: say so ourselves */
                        ret->error = ENOTSOCK;
                }
                return 0;
        }
        _cleanup_close_ int dup = cs.dup;
        if (notify_id_valid(call) < 0) {
                ret->error = EINTR;
                return 0;
        }
        if (cs.foreign)
                return refuse_reaim(g, call, "connect", &cs, t.text, ret);

        switch (t.kind) {
        case DEST_UNSPEC:
        case DEST_LOOPBACK:
                /* CONTINUE is safe: the socket belongs to the sandbox's network
                 * namespace (checked above on the socket itself), which has
                 * only loopback. Whatever address the kernel reads when it
                 * runs the call — ours or one a racing thread wrote since —
                 * leads to the sandbox's own loopback, to a unix or netlink
                 * peer inside its own namespaces, or nowhere (ENETUNREACH). */
                ret->kind = VERDICT_CONTINUE;
                return 0;
        case DEST_LITERAL:
                /* an address the policy grants in the pod's network (cluster.c) */
                if (net_cluster_granted(g, (const struct sockaddr *)&t.ss, t.len, t.port))
                        break;
                net_audit(g, call->req->pid, "connect", t.text, NULL, NULL, false, REASON_IP_LITERAL);
                ret->error = EACCES;
                return 0;
        case DEST_POOL:
                break;
        }
        if (cs.domain != AF_INET && cs.domain != AF_INET6) {
                ret->error = EAFNOSUPPORT; /* an inet address on another family's socket */
                return 0;
        }
        if (cs.type != SOCK_STREAM) {
                /* CONTINUE is safe: a datagram socket of the sandbox's namespace
                 * sends nothing on connect(), and that namespace has no route
                 * to the pool (or anywhere else): the kernel answers
                 * ENETUNREACH. glibc does this for every candidate address when
                 * it sorts them. */
                ret->kind = VERDICT_CONTINUE;
                return 0;
        }
        struct sockaddr_storage peer;
        socklen_t pl = sizeof(peer);
        if (getpeername(cs.dup, (struct sockaddr *)&peer, &pl) == 0) {
                ret->error = EISCONN;
                return 0;
        }
        bool inprogress = false;
        if (t.kind == DEST_LITERAL) {
                int c = net_cluster_connect(g, call->req->pid, t.text, (const struct sockaddr *)&t.ss, (socklen_t)t.len,
                                            cs.nonblock, &inprogress);
                if (c < 0) {
                        ret->error = -c;
                        return 0;
                }
                return inject(call, fd, c, notify_child_fd_cloexec(call, fd), inprogress, 0, ret);
        }
        if ((r = ask_egress(call, "connect", &g->rules[t.index], t.port, NULL, 0, ret)) <= 0)
                return r;
        int cloexec = 0;
        int s = gate_connect(g, call, "connect", t.text, (unsigned)t.index, t.port, fd, &cs, &cloexec, &inprogress);
        if (s < 0) {
                ret->error = -s;
                return 0;
        }
        return inject(call, fd, s, cloexec, inprogress, 0, ret);
}

/* Emulates sendto(2) with a destination address (the filter lets those
 * without one run natively). */
int net_handle_sendto(struct notify_call *call, struct notify_verdict *ret)
{
        struct net_gate *g = call->userdata;
        const struct seccomp_data *d = &call->req->data;
        int fd = (int)d->args[0];
        unsigned flags = (unsigned)d->args[3];
        struct target t;
        int r = read_target(g, call, d->args[4], d->args[5], &t);
        if (r < 0) {
                ret->error = -r;
                return 0;
        }
        struct child_socket cs;
        if (!socket_of_call(call, fd, &cs, ret))
                return 0;
        _cleanup_close_ int dup = cs.dup;
        if (cs.foreign) {
                /* a socket of another namespace never sends to an address of the
                 * sandbox's choosing (see refuse_reaim) */
                net_audit(g, call->req->pid, "sendto", t.text, NULL, NULL, false, REASON_EGRESS_BLOCKED);
                ret->error = EACCES;
                return 0;
        }
        if (t.kind == DEST_LOOPBACK || t.kind == DEST_UNSPEC) {
                /* CONTINUE is safe, as for connect(): the socket is of the
                 * sandbox's namespace, where nothing but its own loopback is
                 * reachable. */
                ret->kind = VERDICT_CONTINUE;
                return 0;
        }
        if (t.kind == DEST_LITERAL) {
                net_audit(g, call->req->pid, "sendto", t.text, NULL, NULL, false, REASON_IP_LITERAL);
                ret->error = EACCES;
                return 0;
        }
        if (!(flags & MSG_FASTOPEN)) {
                /* UDP to a listed name: UDP goes nowhere but the DNS stub */
                net_audit(g, call->req->pid, "sendto", t.text, g->rules[t.index].host, NULL, false,
                          REASON_EGRESS_BLOCKED);
                ret->error = EACCES;
                return 0;
        }
        /* TCP fast open: connect, then send the data ourselves */
        if (g->rules[t.index].ask && cs.type == SOCK_STREAM) {
                /* the request's first bytes, for the person who decides
                 * (a summary only: what is sent is read again below) */
                unsigned char head[NOTIFY_ASK_BYTES_MAX];
                size_t hn = d->args[2] < sizeof(head) ? (size_t)d->args[2] : sizeof(head);
                if (hn && notify_read_mem(call, d->args[1], head, hn) < 0)
                        hn = 0;
                if ((r = ask_egress(call, "sendto", &g->rules[t.index], t.port, head, hn, ret)) <= 0)
                        return r;
        }
        bool inprogress = false;
        int cloexec = 0;
        int s = gate_connect(g, call, "sendto", t.text, (unsigned)t.index, t.port, fd, &cs, &cloexec, &inprogress);
        if (s < 0) {
                ret->error = -s;
                return 0;
        }
        int64_t sent = 0;
        if (!inprogress) {
                size_t n = d->args[2] < 65536 ? (size_t)d->args[2] : 65536;
                _cleanup_free_ char *buf = xmalloc(n ? n : 1);
                r = notify_read_mem(call, d->args[1], buf, n);
                if (r < 0) {
                        close(s);
                        ret->error = -r;
                        return 0;
                }
                ssize_t w = send(s, buf, n, MSG_NOSIGNAL | (flags & MSG_DONTWAIT));
                sent = w < 0 ? 0 : w;
        }
        return inject(call, fd, s, cloexec, inprogress, sent, ret);
}

/* x86_64 struct msghdr: the name pointer and its length come first */
struct msghdr_head {
        uint64_t name;
        uint32_t namelen;
};

/* Checks one message's address. *foreign caches what the socket is across
 * the messages of one sendmmsg (-1: not inspected yet). Returns 0 to let the
 * message pass, -1 with the verdict set. */
static int check_msg(struct net_gate *g, struct notify_call *call, int fd, uint64_t msghdr_addr,
                     const char *syscall_name, int *foreign, struct notify_verdict *ret)
{
        struct msghdr_head h;
        int r = notify_read_mem(call, msghdr_addr, &h, sizeof(h));
        if (r < 0) {
                ret->error = -r;
                return -1;
        }
        if (h.name == 0 || h.namelen == 0)
                return 0; /* no address: a connected socket */
        struct target t;
        r = read_target(g, call, h.name, h.namelen, &t);
        if (r < 0) {
                ret->error = -r;
                return -1;
        }
        if (t.kind == DEST_LOOPBACK || t.kind == DEST_UNSPEC) {
                /* an address of the sandbox's own: fine on a socket of its own
                 * namespace; a socket of another namespace may not be aimed */
                if (*foreign < 0) {
                        struct child_socket cs;
                        r = inspect_socket(call, fd, &cs);
                        if (r == -ENOTSOCK)
                                return 0;
                        if (r < 0) {
                                ret->error = -r;
                                return -1;
                        }
                        close(cs.dup);
                        *foreign = cs.foreign;
                }
                if (!*foreign)
                        return 0;
        }
        net_audit(g, call->req->pid, syscall_name, t.text, t.kind == DEST_POOL ? g->rules[t.index].host : NULL, NULL,
                  false, t.kind == DEST_POOL ? REASON_EGRESS_BLOCKED : REASON_IP_LITERAL);
        ret->error = EACCES;
        return -1;
}

/* Emulates sendmsg(2) and sendmmsg(2): only messages without an address, or
 * to the sandbox's own loopback, or on non-inet sockets, pass. */
int net_handle_sendmsg(struct notify_call *call, struct notify_verdict *ret)
{
        struct net_gate *g = call->userdata;
        const struct seccomp_data *d = &call->req->data;
        int foreign = -1;
        if (d->nr == SYS_sendmsg) {
                if (check_msg(g, call, (int)d->args[0], d->args[1], "sendmsg", &foreign, ret) < 0)
                        return 0;
        } else {
                unsigned vlen = (unsigned)d->args[2];
                if (vlen > 1024)
                        vlen = 1024; /* the kernel caps at UIO_MAXIOV too */
                for (unsigned i = 0; i < vlen; i++)
                        if (check_msg(g, call, (int)d->args[0],
                                      d->args[1] + (uint64_t)i * 64 /* sizeof(struct mmsghdr) */, "sendmmsg", &foreign,
                                      ret) < 0)
                                return 0;
        }
        /* CONTINUE is safe: every address we read was the sandbox's own
         * loopback on a socket of its own namespace, or none. If a racing
         * thread has changed one since, the kernel can still deliver only
         * inside that namespace (no route out). A socket of another
         * namespace is either a gate socket (connected TCP, which ignores
         * msg_name and can never be disconnected: connect() is refused on it)
         * or a stream socket handed in as stdio (cordon refuses any other). */
        ret->kind = VERDICT_CONTINUE;
        return 0;
}

/* Emulates getpeername(2) for the gate's relays. */
int net_handle_getpeername(struct notify_call *call, struct notify_verdict *ret)
{
        struct net_gate *g = call->userdata;
        const struct seccomp_data *d = &call->req->data;
        struct child_socket cs;
        int r = inspect_socket(call, (int)d->args[0], &cs);
        struct sockaddr_storage peer;
        socklen_t pl = 0;
        if (r == 0) {
                if (cs.foreign)
                        (void)net_relay_state(g, cs.dup, &peer, &pl);
                close(cs.dup);
        }
        if (pl == 0) {
                /* CONTINUE is safe: getpeername decides nothing and only
                 * reports on the socket; the kernel answers for anything
                 * that is not a relay (errors included) */
                ret->kind = VERDICT_CONTINUE;
                return 0;
        }
        /* as the kernel: at most *addrlen bytes of the address, and its
         * full length in *addrlen */
        uint32_t len;
        if ((r = notify_read_mem(call, d->args[2], &len, sizeof(len))) < 0) {
                ret->error = -r;
                return 0;
        }
        if ((int32_t)len < 0) {
                ret->error = EINVAL;
                return 0;
        }
        uint32_t n = len < pl ? len : pl;
        if ((n && (r = notify_write_mem(call, d->args[1], &peer, n)) < 0) ||
            (r = notify_write_mem(call, d->args[2], &(uint32_t){pl}, sizeof(uint32_t))) < 0) {
                ret->error = -r;
                return 0;
        }
        ret->kind = VERDICT_VALUE;
        ret->value = 0;
        return 0;
}

/* Emulates the socket ioctls (0x89xx): on a socket of another network
 * namespace (a gate socket) they would describe the host's interfaces. */
int net_handle_sockioctl(struct notify_call *call, struct notify_verdict *ret)
{
        struct net_gate *g = call->userdata;
        struct child_socket cs;
        int r = inspect_socket(call, (int)call->req->data.args[0], &cs);
        if (r == -ENOTSOCK || r == -EBADF) {
                /* CONTINUE is safe: the command is a register; the kernel
                 * refuses a socket ioctl on what is not a socket */
                ret->kind = VERDICT_CONTINUE;
                return 0;
        }
        if (r < 0) {
                ret->error = -r;
                return 0;
        }
        close(cs.dup);
        if (cs.foreign) {
                net_audit(g, call->req->pid, "ioctl", NULL, NULL, NULL, false, REASON_EGRESS_BLOCKED);
                ret->error = EPERM;
                return 0;
        }
        /* CONTINUE is safe: a socket of the sandbox's own namespace (checked
         * on the socket itself); the command is a register */
        ret->kind = VERDICT_CONTINUE;
        return 0;
}
