/* An "ask" grant's requests put to a person (DESIGN.md, "Credentials"):
 * a request that matches its grant in every other way waits, on its relay
 * thread, until the gate's asker (sentry/approvals, handed down as a
 * struct net_asker) answers; only an approval lets the secret go in. The
 * asker answers through a ticket both sides hold a reference to, so that a
 * relay that stops waiting (the sandbox ends, the client hangs up) never
 * leaves the asker an answer to a thread that is gone. */
#include "config.h"

#include <poll.h>
#include <sys/eventfd.h>

#include "common/util.h"
#include "net/net-internal.h"

enum { ANSWER_WAITING, ANSWER_APPROVED, ANSWER_DENIED, ANSWER_EXPIRED };

struct ticket {
        atomic_int refs;
        atomic_int answer;
        atomic_bool gone; /* the relay stopped waiting */
        int efd;          /* written once the answer is in */
};

static void ticket_unref(struct ticket *t)
{
        if (atomic_fetch_sub(&t->refs, 1) != 1)
                return;
        close(t->efd);
        free(t);
}

static void ticket_done(void *arg, bool approved, const char *decision)
{
        struct ticket *t = arg;
        atomic_store(&t->answer, approved                     ? ANSWER_APPROVED
                                 : streq(decision, "expired") ? ANSWER_EXPIRED
                                                              : ANSWER_DENIED);
        uint64_t one = 1;
        (void)!write(t->efd, &one, sizeof(one));
        ticket_unref(t);
}

static bool ticket_alive(void *arg)
{
        return !atomic_load(&((struct ticket *)arg)->gone);
}

void net_gate_set_asker(struct net_gate *g, const struct net_asker *a)
{
        pthread_mutex_lock(&g->ask_lock);
        g->asker = a ? *a : (struct net_asker){0};
        pthread_mutex_unlock(&g->ask_lock);
}

/* Waits for the answer, the gate's stop or the client's hang-up. */
static int wait_answer(struct net_relay *r, struct ticket *t)
{
        for (;;) {
                int a = atomic_load(&t->answer);
                if (a != ANSWER_WAITING)
                        return a;
                /* POLLRDHUP only on the client: the bytes it sends meanwhile
                 * (a pipelined request) wait in its socket, but a client
                 * that closed is no longer asking */
                struct pollfd p[3] = {{.fd = t->efd, .events = POLLIN},
                                      {.fd = r->g->relay_stop, .events = POLLIN},
                                      {.fd = r->child, .events = POLLRDHUP}};
                int k = poll(p, 3, 1000);
                if (k < 0 && errno != EINTR)
                        return ANSWER_DENIED;
                if (k > 0 && (p[1].revents || p[2].revents))
                        return ANSWER_DENIED;
        }
}

enum net_reason net_broker_ask(struct net_relay *r, const struct broker_grant *bg, const char *method, const char *url,
                               size_t url_len, const uint8_t *bytes, size_t n_bytes)
{
        if (!r) /* offline (the fuzz target): nobody to ask */
                return REASON_CRED_DENIED;
        struct notify_ask *q = xcalloc(1, sizeof(*q));
        snprintf(q->capability, sizeof(q->capability), "credential");
        /* what a person approves, and what --remember matches later calls
         * on: the grant, the method and the request's target as sent */
        snprintf(q->target, sizeof(q->target), "%s %s https://%s%.*s", bg->g.env, method, bg->g.host,
                 (int)(url_len < 4000 ? url_len : 4000), url);
        snprintf(q->syscall, sizeof(q->syscall), "https request");
        q->pid = r->pid;
        q->n_bytes = n_bytes < sizeof(q->bytes) ? n_bytes : sizeof(q->bytes);
        memcpy(q->bytes, bytes, q->n_bytes);

        struct ticket *t = xcalloc(1, sizeof(*t));
        t->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (t->efd < 0) {
                free(t);
                free(q);
                return REASON_CRED_DENIED; /* fail closed */
        }
        atomic_store(&t->refs, 2); /* the relay's and the asker's */
        pthread_mutex_lock(&r->g->ask_lock);
        if (r->g->asker.ask)
                r->g->asker.ask(r->g->asker.userdata, q, ticket_done, ticket_alive, t);
        else
                ticket_done(t, false, "denied");
        pthread_mutex_unlock(&r->g->ask_lock);
        free(q);
        int a = wait_answer(r, t);
        atomic_store(&t->gone, true);
        ticket_unref(t);
        return a == ANSWER_APPROVED  ? REASON_ALLOWED
               : a == ANSWER_EXPIRED ? REASON_CRED_ASK_EXPIRED
                                     : REASON_CRED_DENIED;
}
