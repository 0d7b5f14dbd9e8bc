/* The gate's upstream sockets in a joined network namespace. A sandbox that
 * lives in a namespace an engine prepared (a CNI pod network, a podman
 * network: DESIGN.md, "Networks") has its allowed connections made from
 * that namespace, so that the pod's address, routes, NetworkPolicies and
 * egress gateways apply to them, not the host's. A network namespace is a
 * per-thread attribute and a socket keeps the one it was made in: one
 * thread of the gate joins the namespace (while the sentry may still
 * setns, before its own filter) and makes each upstream socket there on
 * request; threads share the fd table, so the number is the answer. */
#include "config.h"

#include <fcntl.h>
#include <sched.h>

#include "common/util.h"
#include "net/net-internal.h"

struct net_upstream {
        pthread_t thread;
        pthread_mutex_t lock; /* the fields below */
        pthread_mutex_t one;  /* one request at a time */
        pthread_cond_t cond;
        int netns_fd;
        int setup; /* 1 while joining; then 0 or -errno */
        bool stop, asked, answered;
        int family, type, protocol;
        int result; /* the socket, or -errno */
};

static void *upstream_main(void *arg)
{
        struct net_upstream *u = arg;
        int r = setns(u->netns_fd, CLONE_NEWNET) < 0 ? negative_errno() : 0;
        pthread_mutex_lock(&u->lock);
        u->setup = r;
        pthread_cond_broadcast(&u->cond);
        while (r == 0) {
                while (!u->asked && !u->stop)
                        pthread_cond_wait(&u->cond, &u->lock);
                if (u->stop)
                        break;
                u->asked = false;
                int s = socket(u->family, u->type, u->protocol);
                u->result = s < 0 ? negative_errno() : s;
                u->answered = true;
                pthread_cond_broadcast(&u->cond);
        }
        pthread_mutex_unlock(&u->lock);
        return NULL;
}

int net_gate_upstream_netns(struct net_gate *g, int netns_fd)
{
        struct net_upstream *u = xcalloc(1, sizeof(*u));
        pthread_mutex_init(&u->lock, NULL);
        pthread_mutex_init(&u->one, NULL);
        pthread_cond_init(&u->cond, NULL);
        u->setup = 1;
        u->netns_fd = fcntl(netns_fd, F_DUPFD_CLOEXEC, 3);
        int r = u->netns_fd < 0 ? negative_errno() : -pthread_create(&u->thread, NULL, upstream_main, u);
        if (r == 0) {
                pthread_mutex_lock(&u->lock);
                while (u->setup == 1)
                        pthread_cond_wait(&u->cond, &u->lock);
                r = u->setup;
                pthread_mutex_unlock(&u->lock);
                if (r < 0)
                        pthread_join(u->thread, NULL);
        }
        if (u->netns_fd >= 0)
                close(u->netns_fd);
        if (r < 0) {
                free(u);
                return r;
        }
        g->upstream = u;
        return 0;
}

int net_upstream_socket(struct net_gate *g, int family, int type, int protocol)
{
        struct net_upstream *u = g->upstream;
        if (!u) {
                int s = socket(family, type, protocol);
                return s < 0 ? negative_errno() : s;
        }
        pthread_mutex_lock(&u->one);
        pthread_mutex_lock(&u->lock);
        int r = -ECANCELED;
        if (!u->stop) {
                u->family = family;
                u->type = type;
                u->protocol = protocol;
                u->asked = true;
                u->answered = false;
                pthread_cond_broadcast(&u->cond);
                while (!u->answered && !u->stop)
                        pthread_cond_wait(&u->cond, &u->lock);
                r = u->answered ? u->result : -ECANCELED;
                u->answered = false;
        }
        pthread_mutex_unlock(&u->lock);
        pthread_mutex_unlock(&u->one);
        return r;
}

void net_upstream_free(struct net_gate *g)
{
        struct net_upstream *u = g ? g->upstream : NULL;
        if (!u)
                return;
        pthread_mutex_lock(&u->lock);
        u->stop = true;
        pthread_cond_broadcast(&u->cond);
        pthread_mutex_unlock(&u->lock);
        pthread_join(u->thread, NULL);
        pthread_mutex_destroy(&u->lock);
        pthread_mutex_destroy(&u->one);
        pthread_cond_destroy(&u->cond);
        free(u);
        g->upstream = NULL;
}
