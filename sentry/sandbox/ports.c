/* Ports of a long-lived sandbox (`cordon sandbox port`): a TCP port the
 * sandbox listens on inside its own network namespace, reached from a host
 * address through the sentry. No extra daemon: the forwarder is threads of
 * the sandbox's sentry, and it ends with it.
 *
 *   host client ──▶ listening socket (host namespace, made by the serve loop)
 *                      │ accept (the ports thread)
 *                      ▼
 *                   connection thread: socket made in the sandbox's network
 *                   namespace, connected to 127.0.0.1:PORT there; bytes
 *                   copied both ways with splice(2) through a pipe each
 *
 * The ports thread joins the sandbox's network namespace once, at set-up,
 * before the sentry confines itself (setns is not in the sentry's filter);
 * threads it starts share its namespaces, so every socket a connection
 * thread makes is the sandbox's, and the only address it ever connects to
 * is that namespace's own loopback. The listening sockets are made by the
 * serve loop's thread, in the host's namespace, and handed over. After
 * confinement the forwarder needs socket, bind, listen, accept4, connect,
 * setsockopt, poll, pipe2, fcntl and splice: all but splice were allowed
 * for the gate and the DNS stub already, and splice only moves bytes
 * between fds the sentry already holds (sentry/confine.c says so in its
 * row).
 *
 * A forwarded connection costs about twice a direct one in CPU: two TCP
 * connections carry the bytes, and the forwarder holds neither endpoint
 * (the host client's socket, the sandbox server's). BPF sockmap cannot
 * skip either traversal with the two sockets the forwarder holds: the
 * classic sk_skb redirect between them measured at a third of this
 * splice copy's throughput on Linux 6.18, and putting the server's socket
 * in a map (a sock_ops program on the sandbox's cgroup) would change how
 * the sandbox's own socket behaves (net/relay.c, splice_pump, says how).
 *
 * Bounded: MAX_PORTS listeners, MAX_FWD_CONNS connections at once (more
 * are accepted and closed at once, recorded), a small stack per connection
 * thread. Each connection ends as one audit line (peer, bytes each way),
 * which the serve loop turns into an event. */
#include "config.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <time.h>

#include "sentry/sandbox/sandbox-internal.h"

#define MAX_PORTS     32
#define MAX_FWD_CONNS 256
#define PIPE_SIZE     (1 << 20)
#define CONN_STACK    (128 * 1024)

struct port {
        bool used, closing;
        int port;      /* inside the sandbox */
        int listen_fd; /* host namespace */
        char listen[80];
        int64_t accepted;
};

struct ports {
        pthread_mutex_t lock;
        pthread_cond_t cond;
        int wake_rd, wake_wr;
        int audit_wr;
        char id[17];
        bool stop, thread_on;
        int ready_err;
        int64_t epoch;
        pthread_t thread;
        struct port ports[MAX_PORTS];
        struct {
                int a, b; /* the host client's socket, the sandbox's; -1 */
                int port;
        } conns[MAX_FWD_CONNS];
        int n_conns;
        int netns_fd;
};

struct fwd {
        struct ports *pt;
        int client;
        int port;
        int slot;
        char peer[80], listen[80];
};

static void wake(struct ports *pt)
{
        char b = 1;
        (void)!write(pt->wake_wr, &b, 1);
}

static void addr_text(const struct sockaddr_storage *ss, char *buf, size_t size)
{
        char host[INET6_ADDRSTRLEN] = "?";
        int port = 0;
        if (ss->ss_family == AF_INET) {
                const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
                inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
                port = ntohs(a->sin_port);
                snprintf(buf, size, "%s:%d", host, port);
        } else if (ss->ss_family == AF_INET6) {
                const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
                inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
                port = ntohs(a->sin6_port);
                snprintf(buf, size, "[%s]:%d", host, port);
        } else
                snprintf(buf, size, "?");
}

/* One audit line for a connection (the serve loop makes it an event). */
static void record(struct ports *pt, const struct fwd *f, int64_t in, int64_t out, const char *error)
{
        char ts[32];
        event_iso_time(time(NULL), ts);
        json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:i, s:s, s:s, s:I, s:I, s:s, s:s}", "time", ts, "sandbox", pt->id,
                              "syscall", "accept", "direction", "inbound", "port", f->port, "listen", f->listen, "peer",
                              f->peer, "bytesIn", (json_int_t)in, "bytesOut", (json_int_t)out, "decision", "allow",
                              "reason", "port_forwarded");
        if (!o)
                return;
        if (error)
                json_object_set_new(o, "error", json_string(error));
        char *s = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        if (!s)
                return;
        size_t n = strlen(s);
        if (n < 4000) { /* one write below PIPE_BUF: lines of threads never mix */
                s[n] = '\n';
                (void)write_all(pt->audit_wr, s, n + 1);
        }
        free(s);
}

static void conn_forget(struct ports *pt, int slot)
{
        pthread_mutex_lock(&pt->lock);
        pt->conns[slot].a = pt->conns[slot].b = -1;
        pt->conns[slot].port = 0;
        bool was_full = pt->n_conns-- == MAX_FWD_CONNS;
        pthread_cond_broadcast(&pt->cond);
        pthread_mutex_unlock(&pt->lock);
        if (was_full)
                wake(pt); /* the listeners are polled again */
}

/* Copies both ways until both have ended (or either fails): *in counts the
 * client's bytes into the sandbox, *out the sandbox's back. */
static const char *copy_both(int client, int inside, int64_t *in, int64_t *out)
{
        int p[2][2] = {{-1, -1}, {-1, -1}};
        const char *err = NULL;
        for (int k = 0; k < 2; k++) {
                if (pipe2(p[k], O_CLOEXEC | O_NONBLOCK) < 0) {
                        err = "no pipe for the connection";
                        goto done;
                }
                (void)fcntl(p[k][1], F_SETPIPE_SZ, PIPE_SIZE);
        }
        int src[2] = {client, inside}, dst[2] = {inside, client};
        size_t pending[2] = {0, 0};
        /* full: the last splice into the pipe found no room (its slots
         * can fill before its bytes do): the source is not polled again
         * until some of it has gone out, so a readable source never spins */
        bool eof[2] = {false, false}, shut[2] = {false, false}, full[2] = {false, false};
        int64_t *count[2] = {in, out};
        while (!(shut[0] && shut[1])) {
                /* each way: in while there is room, out while there is
                 * something; poll only once neither moves */
                bool moved = false;
                for (int k = 0; k < 2 && !(shut[0] && shut[1]); k++) {
                        if (shut[k])
                                continue;
                        if (!eof[k] && !full[k]) {
                                ssize_t r = splice(src[k], NULL, p[k][1], NULL, PIPE_SIZE,
                                                   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
                                if (r > 0) {
                                        pending[k] += (size_t)r;
                                        moved = true;
                                } else if (r == 0)
                                        eof[k] = true; /* a half close: passed on once the pipe is empty */
                                else if (errno == EAGAIN)
                                        full[k] = pending[k] > 0;
                                else if (errno != EINTR) {
                                        /* a reset: the connection is over both ways */
                                        shut[0] = shut[1] = true;
                                        break;
                                }
                        }
                        if (pending[k] > 0) {
                                ssize_t r = splice(p[k][0], NULL, dst[k], NULL, pending[k],
                                                   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
                                if (r > 0) {
                                        pending[k] -= (size_t)r;
                                        *count[k] += r;
                                        full[k] = false;
                                        moved = true;
                                } else if (r < 0 && errno != EAGAIN && errno != EINTR) {
                                        /* the receiver is gone: nothing more goes either way */
                                        shut[0] = shut[1] = true;
                                        break;
                                }
                        }
                        if (eof[k] && pending[k] == 0) {
                                (void)shutdown(dst[k], SHUT_WR);
                                shut[k] = true;
                        }
                }
                if (moved || (shut[0] && shut[1]))
                        continue;
                struct pollfd pf[4];
                nfds_t n = 0;
                for (int k = 0; k < 2; k++) {
                        if (shut[k])
                                continue;
                        if (!eof[k] && !full[k])
                                pf[n++] = (struct pollfd){src[k], POLLIN, 0};
                        if (pending[k] > 0)
                                pf[n++] = (struct pollfd){dst[k], POLLOUT, 0};
                }
                if (poll(pf, n, -1) < 0 && errno != EINTR) {
                        err = "poll failed";
                        break;
                }
        }
done:
        for (int k = 0; k < 2; k++)
                for (int j = 0; j < 2; j++)
                        if (p[k][j] >= 0)
                                close(p[k][j]);
        return err;
}

static void *conn_main(void *arg)
{
        struct fwd *f = arg;
        struct ports *pt = f->pt;
        int64_t in = 0, out = 0;
        const char *err = NULL;
        /* in the sandbox's network namespace: this thread shares the ports
         * thread's, so the socket is the sandbox's own */
        int inside = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        pthread_mutex_lock(&pt->lock);
        pt->conns[f->slot].b = inside;
        bool stop = pt->stop;
        pthread_mutex_unlock(&pt->lock);
        if (inside < 0)
                err = "no socket in the sandbox";
        else if (stop)
                err = "the sandbox is ending";
        else {
                /* a connect that hangs (a full backlog) gives up, and the
                 * sandbox's end shuts it down before that */
                struct timeval tv = {10, 0};
                (void)setsockopt(inside, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
                struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)f->port)};
                sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                if (connect(inside, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                        err = errno == ECONNREFUSED ? "nothing listens on the port in the sandbox"
                                                    : "cannot connect in the sandbox";
        }
        if (!err) {
                int one = 1;
                (void)setsockopt(inside, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                (void)setsockopt(f->client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
                (void)fcntl(inside, F_SETFL, O_NONBLOCK);
                (void)fcntl(f->client, F_SETFL, O_NONBLOCK);
                err = copy_both(f->client, inside, &in, &out);
        }
        record(pt, f, in, out, err);
        conn_forget(pt, f->slot);
        if (inside >= 0)
                close(inside);
        close(f->client);
        free(f);
        return NULL;
}

/* A connection accepted on port p: its thread, or closed at once (too
 * many, or no thread), recorded. Takes the lock itself: nothing that can
 * block (the audit pipe) is done while it is held. */
static void conn_start(struct ports *pt, struct port *p, int c, const struct sockaddr_storage *peer)
{
        struct fwd *f = xcalloc(1, sizeof(*f));
        f->pt = pt;
        f->client = c;
        f->slot = -1;
        addr_text(peer, f->peer, sizeof(f->peer));
        const char *err = NULL;
        pthread_mutex_lock(&pt->lock);
        f->port = p->port;
        snprintf(f->listen, sizeof(f->listen), "%s", p->listen);
        p->accepted++;
        for (int i = 0; i < MAX_FWD_CONNS; i++)
                if (pt->conns[i].a < 0 && pt->conns[i].port == 0) {
                        f->slot = i;
                        break;
                }
        if (f->slot < 0)
                err = "too many connections at once";
        else {
                pt->conns[f->slot].a = c;
                pt->conns[f->slot].b = -1;
                pt->conns[f->slot].port = p->port;
                pt->n_conns++;
                pthread_attr_t attr;
                pthread_t t;
                pthread_attr_init(&attr);
                pthread_attr_setstacksize(&attr, CONN_STACK);
                pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
                if (pthread_create(&t, &attr, conn_main, f) != 0) {
                        pt->conns[f->slot].a = -1;
                        pt->conns[f->slot].port = 0;
                        pt->n_conns--;
                        err = "no thread for the connection";
                }
                pthread_attr_destroy(&attr);
        }
        pthread_mutex_unlock(&pt->lock);
        if (err) {
                record(pt, f, 0, 0, err);
                close(c);
                free(f);
        }
}

static void *ports_main(void *arg)
{
        struct ports *pt = arg;
        /* the sandbox's network namespace, for this thread and those it
         * starts (before the sentry's filter, which has no setns) */
        int r = setns(pt->netns_fd, CLONE_NEWNET) < 0 ? -errno : 0;
        close(TAKE_FD(pt->netns_fd));
        pthread_mutex_lock(&pt->lock);
        pt->ready_err = r < 0 ? r : 1;
        pthread_cond_broadcast(&pt->cond);
        pthread_mutex_unlock(&pt->lock);
        if (r < 0)
                return NULL;
        int backoff = -1;
        for (;;) {
                struct pollfd pf[MAX_PORTS + 1];
                int idx[MAX_PORTS + 1];
                nfds_t n = 0;
                pthread_mutex_lock(&pt->lock);
                for (int i = 0; i < MAX_PORTS; i++) {
                        struct port *p = &pt->ports[i];
                        if (p->used && p->closing) {
                                close(p->listen_fd);
                                *p = (struct port){.listen_fd = -1};
                        }
                }
                pt->epoch++;
                pthread_cond_broadcast(&pt->cond);
                if (pt->stop) {
                        pthread_mutex_unlock(&pt->lock);
                        break;
                }
                pf[n] = (struct pollfd){pt->wake_rd, POLLIN, 0};
                idx[n++] = -1;
                /* at the bound, new connections wait in the listeners'
                 * backlogs (and then in their clients' retries) until one
                 * ends, rather than being accepted and dropped */
                bool full = pt->n_conns >= MAX_FWD_CONNS;
                for (int i = 0; i < MAX_PORTS && backoff < 0 && !full; i++)
                        if (pt->ports[i].used) {
                                pf[n] = (struct pollfd){pt->ports[i].listen_fd, POLLIN, 0};
                                idx[n++] = i;
                        }
                pthread_mutex_unlock(&pt->lock);
                int timeout = backoff;
                backoff = -1;
                if (poll(pf, n, timeout) < 0)
                        continue;
                if (pf[0].revents) {
                        char buf[64];
                        while (read(pt->wake_rd, buf, sizeof(buf)) > 0)
                                ;
                }
                for (nfds_t i = 1; i < n; i++) {
                        if (!pf[i].revents)
                                continue;
                        /* only this thread closes a listener (at the loop's
                         * top): its fd stays valid here without the lock */
                        struct port *p = &pt->ports[idx[i]];
                        for (int k = 0; k < 64; k++) {
                                pthread_mutex_lock(&pt->lock);
                                bool stop = pt->n_conns >= MAX_FWD_CONNS || p->closing || pt->stop;
                                pthread_mutex_unlock(&pt->lock);
                                if (stop)
                                        break;
                                struct sockaddr_storage peer = {0};
                                socklen_t len = sizeof(peer);
                                int c = accept4(p->listen_fd, (struct sockaddr *)&peer, &len, SOCK_CLOEXEC);
                                if (c < 0) {
                                        /* out of fds or memory: the listener
                                         * would stay readable; wait a little */
                                        if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                                                backoff = 100;
                                        break;
                                }
                                conn_start(pt, p, c, &peer);
                        }
                }
        }
        return NULL;
}

int ports_begin(struct serve *srv, int netns_fd)
{
        struct ports *pt = xcalloc(1, sizeof(*pt));
        pthread_mutex_init(&pt->lock, NULL);
        pthread_cond_init(&pt->cond, NULL);
        snprintf(pt->id, sizeof(pt->id), "%s", srv->id);
        for (int i = 0; i < MAX_PORTS; i++)
                pt->ports[i].listen_fd = -1;
        for (int i = 0; i < MAX_FWD_CONNS; i++)
                pt->conns[i].a = pt->conns[i].b = -1;
        int w[2];
        pt->audit_wr = fcntl(srv->audit_wr, F_DUPFD_CLOEXEC, 3);
        pt->netns_fd = fcntl(netns_fd, F_DUPFD_CLOEXEC, 3);
        if (pt->audit_wr < 0 || pt->netns_fd < 0 || pipe2(w, O_CLOEXEC | O_NONBLOCK) < 0) {
                int r = negative_errno();
                if (pt->audit_wr >= 0)
                        close(pt->audit_wr);
                if (pt->netns_fd >= 0)
                        close(pt->netns_fd);
                free(pt);
                return r;
        }
        pt->wake_rd = w[0];
        pt->wake_wr = w[1];
        int r = -pthread_create(&pt->thread, NULL, ports_main, pt);
        if (r < 0) {
                close(pt->netns_fd);
                goto fail;
        }
        pthread_mutex_lock(&pt->lock);
        while (pt->ready_err == 0)
                pthread_cond_wait(&pt->cond, &pt->lock);
        r = pt->ready_err;
        pthread_mutex_unlock(&pt->lock);
        if (r < 0) {
                pthread_join(pt->thread, NULL);
                goto fail;
        }
        pt->thread_on = true;
        srv->ports = pt;
        return 0;
fail:
        close(pt->wake_rd);
        close(pt->wake_wr);
        close(pt->audit_wr);
        free(pt);
        return r;
}

/* Waits (bounded) until the ports thread has passed the top of its loop
 * once more: a port marked closing is closed by then. Lock held. */
static void ports_sync(struct ports *pt)
{
        int64_t want = pt->epoch + 1;
        wake(pt);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 2;
        while (pt->epoch < want && pt->thread_on)
                if (pthread_cond_timedwait(&pt->cond, &pt->lock, &until) == ETIMEDOUT)
                        break;
}

void ports_stop(struct serve *srv)
{
        struct ports *pt = srv->ports;
        if (!pt)
                return;
        srv->ports = NULL;
        pthread_mutex_lock(&pt->lock);
        pt->stop = true;
        for (int i = 0; i < MAX_PORTS; i++)
                if (pt->ports[i].used)
                        pt->ports[i].closing = true;
        /* every copy unblocks: its sockets are shut down both ways */
        for (int i = 0; i < MAX_FWD_CONNS; i++) {
                if (pt->conns[i].a >= 0)
                        (void)shutdown(pt->conns[i].a, SHUT_RDWR);
                if (pt->conns[i].b >= 0)
                        (void)shutdown(pt->conns[i].b, SHUT_RDWR);
        }
        pthread_mutex_unlock(&pt->lock);
        wake(pt);
        if (pt->thread_on)
                pthread_join(pt->thread, NULL);
        pt->thread_on = false;
        pthread_mutex_lock(&pt->lock);
        for (int i = 0; i < MAX_PORTS; i++)
                if (pt->ports[i].used)
                        close(pt->ports[i].listen_fd);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 5;
        while (pt->n_conns > 0)
                if (pthread_cond_timedwait(&pt->cond, &pt->lock, &until) == ETIMEDOUT)
                        break;
        int left = pt->n_conns;
        pthread_mutex_unlock(&pt->lock);
        if (left > 0)
                return; /* their threads still hold it: left to the sentry's exit */
        close(pt->wake_rd);
        close(pt->wake_wr);
        close(pt->audit_wr);
        pthread_mutex_destroy(&pt->lock);
        pthread_cond_destroy(&pt->cond);
        free(pt);
}

/* "ADDR:PORT" or "[ADDR6]:PORT" into *ss: 0, or -EINVAL. */
static int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
        char host[64];
        const char *colon;
        if (s[0] == '[') {
                const char *close = strchr(s, ']');
                if (!close || close[1] != ':' || (size_t)(close - s - 1) >= sizeof(host))
                        return -EINVAL;
                memcpy(host, s + 1, (size_t)(close - s - 1));
                host[close - s - 1] = '\0';
                colon = close + 1;
        } else {
                colon = strrchr(s, ':');
                if (!colon || (size_t)(colon - s) >= sizeof(host))
                        return -EINVAL;
                memcpy(host, s, (size_t)(colon - s));
                host[colon - s] = '\0';
        }
        char *end;
        long port = strtol(colon + 1, &end, 10);
        if (!colon[1] || *end || port < 0 || port > 65535)
                return -EINVAL;
        memset(ss, 0, sizeof(*ss));
        struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
        struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
        if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
                a4->sin_family = AF_INET;
                a4->sin_port = htons((uint16_t)port);
                *len = sizeof(*a4);
        } else if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
                a6->sin6_family = AF_INET6;
                a6->sin6_port = htons((uint16_t)port);
                *len = sizeof(*a6);
        } else
                return -EINVAL;
        return 0;
}

static bool is_loopback(const struct sockaddr_storage *ss)
{
        if (ss->ss_family == AF_INET)
                return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
        return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

static json_t *port_json(const struct port *p, int conns)
{
        return json_pack("{s:i, s:s, s:I, s:i}", "port", p->port, "listen", p->listen, "accepted",
                         (json_int_t)p->accepted, "connections", conns);
}

/* Exposes port at addr (NULL: 127.0.0.1:0): the port's record, or an
 * error with its code. */
int ports_expose(struct serve *srv, int port, const char *addr, json_t **ret, char *why, size_t size,
                 const char **ret_code)
{
        struct ports *pt = srv->ports;
        *ret_code = NULL;
        if (!pt) {
                snprintf(why, size, "sandbox %s has no port forwarder (its network is not its own)", srv->id);
                return -EOPNOTSUPP;
        }
        if (port < 1 || port > 65535) {
                snprintf(why, size, "port %d is out of range (1-65535)", port);
                return -EINVAL;
        }
        struct sockaddr_storage ss;
        socklen_t len;
        if (parse_listen(addr ? addr : "127.0.0.1:0", &ss, &len) < 0) {
                snprintf(why, size, "listen address '%s' is not ADDR:PORT (an IPv4 address, or [IPv6]:PORT)", addr);
                return -EINVAL;
        }
        pthread_mutex_lock(&pt->lock);
        int slot = -1;
        for (int i = 0; i < MAX_PORTS; i++) {
                if (pt->ports[i].used && !pt->ports[i].closing && pt->ports[i].port == port) {
                        snprintf(why, size, "port %d of sandbox %s is already exposed at %s", port, srv->id,
                                 pt->ports[i].listen);
                        *ret_code = SANDBOX_ERR_CONFLICT;
                        pthread_mutex_unlock(&pt->lock);
                        return -EEXIST;
                }
                if (!pt->ports[i].used && slot < 0)
                        slot = i;
        }
        pthread_mutex_unlock(&pt->lock);
        if (slot < 0) {
                snprintf(why, size, "sandbox %s already exposes %d ports", srv->id, MAX_PORTS);
                *ret_code = SANDBOX_ERR_QUOTA;
                return -ENOSPC;
        }
        /* made here, by the serve loop's thread: in the host's namespace */
        _cleanup_close_ int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        int one = 1;
        if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
            bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 128) < 0) {
                int r = negative_errno();
                snprintf(why, size, "cannot listen on %s: %s", addr ? addr : "127.0.0.1:0",
                         r == -EADDRINUSE ? "the address is in use" : strerror(-r));
                if (r == -EADDRINUSE)
                        *ret_code = SANDBOX_ERR_CONFLICT;
                return r;
        }
        struct sockaddr_storage got = {0};
        socklen_t glen = sizeof(got);
        if (getsockname(fd, (struct sockaddr *)&got, &glen) < 0)
                got = ss;
        pthread_mutex_lock(&pt->lock);
        struct port *p = &pt->ports[slot];
        if (p->used) { /* cannot happen: only this thread fills slots */
                pthread_mutex_unlock(&pt->lock);
                snprintf(why, size, "internal error: port slot taken");
                return -EBUSY;
        }
        *p = (struct port){.used = true, .port = port, .listen_fd = TAKE_FD(fd)};
        addr_text(&got, p->listen, sizeof(p->listen));
        json_t *o = port_json(p, 0);
        pthread_mutex_unlock(&pt->lock);
        wake(pt);
        if (!is_loopback(&got))
                json_object_set_new(o, "warning",
                                    json_pack("s", "the port is reachable from outside this host: every client "
                                                   "that can reach the address reaches the sandbox's server"));
        *ret = o;
        return 0;
}

json_t *ports_json(struct serve *srv)
{
        json_t *list = json_array();
        struct ports *pt = srv->ports;
        if (!pt)
                return list;
        pthread_mutex_lock(&pt->lock);
        for (int i = 0; i < MAX_PORTS; i++) {
                const struct port *p = &pt->ports[i];
                if (!p->used || p->closing)
                        continue;
                int conns = 0;
                for (int k = 0; k < MAX_FWD_CONNS; k++)
                        conns += pt->conns[k].a >= 0 && pt->conns[k].port == p->port;
                json_array_append_new(list, port_json(p, conns));
        }
        pthread_mutex_unlock(&pt->lock);
        return list;
}

int ports_close(struct serve *srv, int port)
{
        struct ports *pt = srv->ports;
        if (!pt)
                return -ENOENT;
        pthread_mutex_lock(&pt->lock);
        int found = -ENOENT;
        for (int i = 0; i < MAX_PORTS; i++)
                if (pt->ports[i].used && !pt->ports[i].closing && pt->ports[i].port == port) {
                        pt->ports[i].closing = true;
                        found = 0;
                }
        /* its connections end too */
        for (int i = 0; found == 0 && i < MAX_FWD_CONNS; i++)
                if (pt->conns[i].port == port) {
                        if (pt->conns[i].a >= 0)
                                (void)shutdown(pt->conns[i].a, SHUT_RDWR);
                        if (pt->conns[i].b >= 0)
                                (void)shutdown(pt->conns[i].b, SHUT_RDWR);
                }
        if (found == 0)
                ports_sync(pt);
        pthread_mutex_unlock(&pt->lock);
        return found;
}

void ports_request(struct sandbox_state *st, int conn, json_t *req)
{
        struct serve *srv = st->serve;
        const char *op = json_string_value(json_object_get(req, "op"));
        json_t *jport = json_object_get(req, "port");
        bool paused = streq(srv->status, "paused");
        if (streq(op, "ports")) {
                (void)control_send(conn, json_pack("{s:o, s:s}", "ports", ports_json(srv), "status", srv->status), NULL,
                                   0);
                return;
        }
        if (!json_is_integer(jport)) {
                control_reply_error(conn, "%s: \"port\" must be an integer (a TCP port inside the sandbox)", op);
                return;
        }
        json_int_t port = json_integer_value(jport);
        if (port < 1 || port > 65535) {
                control_reply_error(conn, "%s: port %lld is out of range (1-65535)", op, (long long)port);
                return;
        }
        if (streq(op, "unport")) {
                if (ports_close(srv, (int)port) < 0) {
                        control_reply_error_code(conn, SANDBOX_ERR_NOT_FOUND, "port %lld of sandbox %s is not exposed",
                                                 (long long)port, srv->id);
                        return;
                }
                event_append(srv, "port_closed", json_pack("{s:i}", "port", (int)port));
                (void)control_send(conn, json_pack("{s:b}", "ok", 1), NULL, 0);
                return;
        }
        json_t *jl = json_object_get(req, "listen");
        if (jl && !json_is_null(jl) && !json_is_string(jl)) {
                control_reply_error(conn, "port: \"listen\" must be a string ADDR:PORT");
                return;
        }
        char why[256];
        const char *code = NULL;
        json_t *rec = NULL;
        int r = ports_expose(srv, (int)port, json_string_value(jl), &rec, why, sizeof(why), &code);
        if (r < 0) {
                if (code)
                        control_reply_error_code(conn, code, "port: %s", why);
                else
                        control_reply_error(conn, "port: %s", why);
                return;
        }
        event_append(srv, "port_exposed",
                     json_pack("{s:i, s:s}", "port", (int)port, "listen",
                               json_string_value(json_object_get(rec, "listen"))));
        if (paused)
                json_object_set_new(rec, "note",
                                    json_string("the sandbox is paused: connections are accepted and wait until it "
                                                "is resumed"));
        json_object_set_new(rec, "status", json_string(srv->status));
        (void)control_send(conn, rec, NULL, 0);
}

/* The policy's "ports", exposed before the sandbox is announced: 0 with
 * *ret (the records, for the "created" event), or -errno with why (the
 * sandbox does not start: an address the policy asked for is not had). */
int ports_expose_policy(struct sandbox_state *st, json_t **ret, char *why, size_t size)
{
        const struct policy *pol = st->policy;
        json_t *list = json_array();
        for (size_t i = 0; pol && i < pol->n_ports; i++) {
                json_t *rec = NULL;
                const char *code = NULL;
                char w[256];
                int r = ports_expose(st->serve, pol->ports[i].port, pol->ports[i].listen, &rec, w, sizeof(w), &code);
                if (r < 0) {
                        snprintf(why, size, "the policy's ports[%zu]: %s", i, w);
                        json_decref(list);
                        return r;
                }
                json_array_append_new(list, rec);
        }
        *ret = list;
        return 0;
}
