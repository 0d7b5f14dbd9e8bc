/* The approver: pending requests, their expiry, remembered answers, the
 * terminal prompt of `cordon run --approve-interactive`, and the record
 * of every decision (sentry/approvals.h).
 *
 * Threads: notification workers call ask() (and then go back to serving:
 * the call itself stays pending in the kernel, see notify_ask), the
 * credential broker's relay threads approvals_ask() (each then waits for
 * its own answer); the serve
 * loop calls approvals_decide() for `sandbox approve|deny`; a timer thread
 * expires requests; a prompt thread asks on the terminal. All state is
 * under one mutex; a decided hold is handed to the engine
 * (notify_hold_decide), or a callback called, after the lock is released. */
#include "config.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <strings.h>
#include <termios.h>
#include <time.h>

#include "common/docparse.h"
#include "common/util.h"
#include "sentry/approvals/approvals.h"

/* a line written to a pipe in one write(2) up to PIPE_BUF never interleaves
 * with another writer's: targets are cut to fit */
#define LINE_TARGET_MAX 1024

/* Who waits for a request's answer: a call held in the kernel (hold), or
 * a caller of approvals_ask (cb). */
struct answer {
        struct notify_hold *hold;
        struct approvals_callback cb;
};

struct pending {
        char id[24];
        struct notify_ask q;
        struct answer to;
        struct timespec deadline; /* CLOCK_MONOTONIC */
        time_t requested, expires;
        bool prompted;
        struct pending *next;
};

struct remembered {
        char capability[16];
        char *target;
};

struct approvals {
        struct approvals_config cfg;
        struct notify_approver approver;
        pthread_mutex_t lock;
        pthread_cond_t cond; /* on CLOCK_MONOTONIC: a new request, a decision, stop */
        struct pending *head;
        size_t n_pending;
        uint64_t next_id;
        struct remembered remembered[APPROVALS_MAX_REMEMBERED];
        size_t n_remembered;
        bool closed, stop;
        pthread_t timer, prompter;
        bool timer_started, prompter_started;
        atomic_bool prompting;
        atomic_uint no_approver_notes;
        json_t *queue; /* events for the serve loop (approvals_take_events), under lock */
        size_t queue_dropped;
};

/* events kept for the serve loop between two of its turns */
#define QUEUE_MAX 65536

static void iso_time(time_t t, char buf[32])
{
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void now_text(char buf[40])
{
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        char t[32];
        iso_time(ts.tv_sec, t);
        snprintf(buf, 40, "%.19s.%03ldZ", t, ts.tv_nsec / 1000000);
}

/* The request's first bytes as text: printable ASCII as is, the rest \xNN. */
static void bytes_text(const struct notify_ask *q, char *out, size_t size)
{
        size_t o = 0;
        for (size_t i = 0; i < q->n_bytes && o + 5 < size; i++) {
                unsigned char c = q->bytes[i];
                if (c >= 0x20 && c < 0x7f && c != '\\')
                        out[o++] = (char)c;
                else
                        o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
        }
        out[o] = '\0';
}

static json_t *summary_json(const struct notify_ask *q)
{
        json_t *s = json_pack("{s:s, s:I, s:s%}", "syscall", q->syscall, "pid", (json_int_t)q->pid, "cmdline",
                              q->cmdline, strnlen(q->cmdline, sizeof(q->cmdline)));
        if (!s)
                return json_object();
        if (q->n_bytes) {
                char b[NOTIFY_ASK_BYTES_MAX * 4 + 1];
                bytes_text(q, b, sizeof(b));
                json_object_set_new(s, "bytes", json_string(b));
        }
        return s;
}

static json_t *target_json(const struct notify_ask *q)
{
        size_t n = strnlen(q->target, sizeof(q->target));
        return json_stringn(q->target, n > LINE_TARGET_MAX ? LINE_TARGET_MAX : n);
}

/* Writes j as one line to fd (steals j). */
static void write_line(int fd, json_t *j)
{
        if (fd < 0 || !j) {
                json_decref(j);
                return;
        }
        char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
        json_decref(j);
        if (!text)
                return;
        size_t len = strlen(text);
        text[len] = '\n'; /* json_dumps's NUL becomes the newline */
        (void)write_all(fd, text, len + 1);
        free(text);
}

/* Queues an event (steals ev; lock held) and wakes the serve loop. The
 * loop writes it: never a pipe the loop itself drains, which it could fill
 * while it decides (a deadlock). */
static void queue_event(struct approvals *ap, json_t *ev)
{
        if (!ev)
                return;
        if (!ap->cfg.events || json_array_size(ap->queue) >= QUEUE_MAX) {
                ap->queue_dropped += ap->cfg.events;
                json_decref(ev);
                return;
        }
        json_array_append_new(ap->queue, ev);
        if (ap->cfg.wake_events_fd >= 0)
                (void)!write(ap->cfg.wake_events_fd, "e", 1); /* non-blocking: full means woken already */
}

/* One decision, to the audit log and (a sandbox) its events. Called with
 * the lock held, so lines keep the order decisions were made in. */
static void record(struct approvals *ap, const char *id, const struct notify_ask *q, const char *decision,
                   const char *who, bool remember)
{
        bool allowed = streq(decision, "approved") || streq(decision, "remembered");
        char ts[40];
        now_text(ts);
        json_t *a = json_pack("{s:s, s:s, s:I, s:s, s:s, s:o, s:s, s:s, s:s, s:s}", "time", ts, "sandbox",
                              ap->cfg.sandbox_id ? ap->cfg.sandbox_id : "", "pid", (json_int_t)q->pid, "syscall",
                              q->syscall, "capability", q->capability, "target", target_json(q), "request",
                              id ? id : "", "decision", allowed ? "allow" : "deny", "reason",
                              streq(decision, "approved")     ? "approval_approved"
                              : streq(decision, "remembered") ? "approval_remembered"
                              : streq(decision, "expired")    ? "approval_expired"
                              : streq(decision, "mismatch")   ? "approval_mismatch"
                                                              : "approval_denied",
                              "decidedBy", who);
        if (ap->cfg.events)
                queue_event(ap, json_pack("{s:s, s:o}", "type", "audit", "record", a));
        else
                write_line(ap->cfg.audit_fd, a);
        json_t *ev = json_pack("{s:s, s:s, s:s, s:o, s:s, s:s, s:o, s:b}", "type", "approval_decided", "request",
                               id ? id : "", "capability", q->capability, "target", target_json(q), "decision",
                               decision, "decidedBy", who, "summary", summary_json(q), "remember", remember);
        queue_event(ap, ev);
}

static void note_no_approver(struct approvals *ap, const struct notify_ask *q)
{
        /* `cordon run` without --approve-interactive: say so, a bounded
         * number of times, where the person running it looks */
        if (atomic_fetch_add(&ap->no_approver_notes, 1) < 20)
                fprintf(stderr,
                        "cordon: %s %.*s needs a person's approval and nobody can be asked "
                        "(--approve-interactive not given): denied\n",
                        q->capability, 512, q->target);
}

static bool remembered_locked(struct approvals *ap, const struct notify_ask *q)
{
        for (size_t i = 0; i < ap->n_remembered; i++)
                if (streq(ap->remembered[i].capability, q->capability) && streq(ap->remembered[i].target, q->target))
                        return true;
        return false;
}

static void remember_locked(struct approvals *ap, const struct notify_ask *q)
{
        if (remembered_locked(ap, q) || ap->n_remembered >= APPROVALS_MAX_REMEMBERED)
                return;
        struct remembered *r = &ap->remembered[ap->n_remembered++];
        snprintf(r->capability, sizeof(r->capability), "%s", q->capability);
        r->target = xstrdup(q->target);
}

static void *timer_main(void *arg);

/* Gives a decision to whoever waits (never with the lock held: a hold's
 * engine and a callback take their own locks). decision is record()'s. */
static void answer_send(const struct answer *a, const char *decision)
{
        bool approved = streq(decision, "approved") || streq(decision, "remembered");
        if (a->hold)
                notify_hold_decide(a->hold, approved);
        else if (a->cb.done)
                a->cb.done(a->cb.arg, approved, decision);
}

static bool answer_alive(const struct answer *a)
{
        if (a->hold)
                return notify_hold_alive(a->hold);
        return !a->cb.alive || a->cb.alive(a->cb.arg);
}

/* 1 allowed now, 0 pending (to is kept and answered later), -EACCES denied
 * now (to is not kept: the caller answers it). */
static int ask_core(struct approvals *ap, const struct notify_ask *q, const struct answer *to)
{
        pthread_mutex_lock(&ap->lock);
        if (ap->closed) {
                record(ap, NULL, q, "denied", "terminate", false);
                pthread_mutex_unlock(&ap->lock);
                return -EACCES;
        }
        if (remembered_locked(ap, q)) {
                record(ap, NULL, q, "remembered", "remembered", false);
                pthread_mutex_unlock(&ap->lock);
                return 1;
        }
        if (!ap->cfg.events && ap->cfg.tty_fd < 0) {
                record(ap, NULL, q, "denied", "no-approver", false);
                pthread_mutex_unlock(&ap->lock);
                note_no_approver(ap, q);
                return -EACCES;
        }
        if (ap->n_pending >= APPROVALS_MAX_PENDING) {
                record(ap, NULL, q, "denied", "too-many-pending", false);
                pthread_mutex_unlock(&ap->lock);
                return -EACCES;
        }
        /* the thread that expires requests, at the first one: most runs
         * never ask, and a thread less is a faster start. Without it a
         * request could never expire: refused instead. */
        if (!ap->timer_started) {
                sigset_t all, old;
                sigfillset(&all);
                pthread_sigmask(SIG_SETMASK, &all, &old);
                ap->timer_started = pthread_create(&ap->timer, NULL, timer_main, ap) == 0;
                pthread_sigmask(SIG_SETMASK, &old, NULL);
                if (!ap->timer_started) {
                        record(ap, NULL, q, "denied", "no-timer", false);
                        pthread_mutex_unlock(&ap->lock);
                        return -EACCES;
                }
        }
        struct pending *p = xcalloc(1, sizeof(*p));
        snprintf(p->id, sizeof(p->id), "q%llu", (unsigned long long)++ap->next_id);
        p->q = *q;
        p->to = *to;
        p->requested = time(NULL);
        clock_gettime(CLOCK_MONOTONIC, &p->deadline);
        int64_t ms = ap->cfg.timeout_ms > 0 ? ap->cfg.timeout_ms : 300000;
        p->deadline.tv_sec += (time_t)(ms / 1000);
        p->deadline.tv_nsec += (long)(ms % 1000) * 1000000;
        if (p->deadline.tv_nsec >= 1000000000) {
                p->deadline.tv_sec++;
                p->deadline.tv_nsec -= 1000000000;
        }
        p->expires = p->requested + (time_t)((ms + 999) / 1000);
        struct pending **tail = &ap->head;
        while (*tail)
                tail = &(*tail)->next;
        *tail = p;
        ap->n_pending++;
        char exp[32];
        iso_time(p->expires, exp);
        queue_event(ap, json_pack("{s:s, s:s, s:s, s:o, s:o, s:s, s:I}", "type", "approval_required", "request", p->id,
                                  "capability", q->capability, "target", target_json(q), "summary", summary_json(q),
                                  "expiresAt", exp, "timeoutMs", (json_int_t)ms));
        pthread_cond_broadcast(&ap->cond);
        pthread_mutex_unlock(&ap->lock);
        return 0;
}

static int ask(void *userdata, const struct notify_ask *q, struct notify_hold *hold)
{
        return ask_core(userdata, q, &(struct answer){.hold = hold});
}

void approvals_ask(struct approvals *ap, const struct notify_ask *q, const struct approvals_callback *cb)
{
        struct answer to = {.cb = *cb};
        int r = ask_core(ap, q, &to);
        if (r != 0)
                answer_send(&to, r > 0 ? "remembered" : "denied");
}

static void mismatch(void *userdata, const struct notify_ask *approved, const struct notify_ask *now)
{
        struct approvals *ap = userdata;
        (void)approved;
        pthread_mutex_lock(&ap->lock);
        /* the call, served again after its approval, resolved to another
         * target (its path buffer or the file system changed meanwhile) */
        record(ap, NULL, now, "mismatch", "sentry", false);
        pthread_mutex_unlock(&ap->lock);
}

/* Unlinks p (lock held). */
static void unlink_locked(struct approvals *ap, struct pending *p)
{
        for (struct pending **pp = &ap->head; *pp; pp = &(*pp)->next)
                if (*pp == p) {
                        *pp = p->next;
                        ap->n_pending--;
                        return;
                }
}

int approvals_decide(struct approvals *ap, const char *id, bool approve, bool remember, const char *who, char *err,
                     size_t errsize)
{
        struct answer holds[APPROVALS_MAX_PENDING];
        size_t n = 0;
        pthread_mutex_lock(&ap->lock);
        struct pending *p = ap->head;
        while (p && !streq(p->id, id))
                p = p->next;
        if (!p) {
                pthread_mutex_unlock(&ap->lock);
                snprintf(err, errsize, "no pending request %s (already decided, expired, or never made)", id);
                return -ENOENT;
        }
        unlink_locked(ap, p);
        record(ap, p->id, &p->q, approve ? "approved" : "denied", who, approve && remember);
        holds[n++] = p->to;
        if (approve && remember) {
                /* for the sandbox's lifetime (never the policy file): later
                 * identical calls pass, and so do those already waiting */
                remember_locked(ap, &p->q);
                for (struct pending *o = ap->head, *next; o; o = next) {
                        next = o->next;
                        if (!streq(o->q.capability, p->q.capability) || !streq(o->q.target, p->q.target))
                                continue;
                        unlink_locked(ap, o);
                        record(ap, o->id, &o->q, "remembered", who, false);
                        holds[n++] = o->to;
                        free(o);
                }
        }
        free(p);
        pthread_cond_broadcast(&ap->cond);
        pthread_mutex_unlock(&ap->lock);
        for (size_t i = 0; i < n; i++)
                answer_send(&holds[i], approve ? "approved" : "denied");
        return 0;
}

static int cmp_ts(const struct timespec *a, const struct timespec *b)
{
        if (a->tv_sec != b->tv_sec)
                return a->tv_sec < b->tv_sec ? -1 : 1;
        return a->tv_nsec < b->tv_nsec ? -1 : a->tv_nsec > b->tv_nsec;
}

/* A request whose caller is gone (killed, its run cancelled, its
 * connection closed) is dropped rather than left listed until it expires;
 * lock held. Whether one was, with *ret the answer to send (it finds
 * nobody). */
static bool drop_gone_locked(struct approvals *ap, struct answer *ret)
{
        for (struct pending *p = ap->head; p; p = p->next) {
                if (answer_alive(&p->to))
                        continue;
                unlink_locked(ap, p);
                record(ap, p->id, &p->q, "denied", "caller-gone", false);
                *ret = p->to;
                free(p);
                return true;
        }
        return false;
}

static void *timer_main(void *arg)
{
        struct approvals *ap = arg;
        pthread_mutex_lock(&ap->lock);
        while (!ap->stop) {
                struct answer gone;
                if (drop_gone_locked(ap, &gone)) {
                        pthread_mutex_unlock(&ap->lock);
                        answer_send(&gone, "denied");
                        pthread_mutex_lock(&ap->lock);
                        continue;
                }
                struct pending *first = NULL;
                for (struct pending *p = ap->head; p; p = p->next)
                        if (!first || cmp_ts(&p->deadline, &first->deadline) < 0)
                                first = p;
                if (!first) {
                        pthread_cond_wait(&ap->cond, &ap->lock);
                        continue;
                }
                struct timespec now;
                clock_gettime(CLOCK_MONOTONIC, &now);
                if (cmp_ts(&now, &first->deadline) < 0) {
                        /* at the deadline, or in a second to look for callers gone */
                        struct timespec until = now;
                        until.tv_sec += 1;
                        if (cmp_ts(&first->deadline, &until) < 0)
                                until = first->deadline;
                        pthread_cond_timedwait(&ap->cond, &ap->lock, &until);
                        continue;
                }
                unlink_locked(ap, first);
                record(ap, first->id, &first->q, "expired", "timeout", false);
                struct answer h = first->to;
                free(first);
                pthread_cond_broadcast(&ap->cond);
                pthread_mutex_unlock(&ap->lock);
                answer_send(&h, "expired");
                pthread_mutex_lock(&ap->lock);
        }
        pthread_mutex_unlock(&ap->lock);
        return NULL;
}

/* --- the terminal (cordon run --approve-interactive) --- */

static void tty_write(struct approvals *ap, const char *s)
{
        (void)write_all(ap->cfg.tty_fd, s, strlen(s));
}

static void wake_relay(struct approvals *ap)
{
        if (ap->cfg.wake_fd >= 0)
                (void)!write(ap->cfg.wake_fd, "w", 1);
}

static bool still_pending(struct approvals *ap, const char *id)
{
        pthread_mutex_lock(&ap->lock);
        struct pending *p = ap->head;
        while (p && !streq(p->id, id))
                p = p->next;
        pthread_mutex_unlock(&ap->lock);
        return p != NULL;
}

/* Reads one answer line from the terminal until the request is decided
 * elsewhere (expired) or the approver stops. Returns 'y', 'n', 'a', or 0. */
static int read_answer(struct approvals *ap, const char *id)
{
        struct termios t;
        bool echo = tcgetattr(ap->cfg.tty_fd, &t) == 0 && (t.c_lflag & ECHO);
        char line[32];
        size_t len = 0;
        for (;;) {
                if (ap->stop || !still_pending(ap, id))
                        return 0;
                struct pollfd p = {ap->cfg.tty_fd, POLLIN, 0};
                int k = poll(&p, 1, 200);
                if (k < 0 && errno != EINTR)
                        return 0;
                if (k <= 0)
                        continue;
                if (p.revents & (POLLHUP | POLLERR | POLLNVAL))
                        return 0;
                char c;
                ssize_t n = read(ap->cfg.tty_fd, &c, 1);
                if (n == 0)
                        return 0;
                if (n < 0)
                        continue;
                if (c == '\r' || c == '\n') {
                        if (!echo)
                                tty_write(ap, "\r\n");
                        line[len] = '\0';
                        if (!strcasecmp(line, "y") || !strcasecmp(line, "yes"))
                                return 'y';
                        if (!strcasecmp(line, "n") || !strcasecmp(line, "no"))
                                return 'n';
                        if (!strcasecmp(line, "a") || !strcasecmp(line, "always"))
                                return 'a';
                        tty_write(ap, "cordon: answer y (allow once), n (deny) or always (allow for this run): ");
                        len = 0;
                        continue;
                }
                if (c == 0x7f || c == '\b') {
                        if (len > 0) {
                                len--;
                                if (!echo)
                                        tty_write(ap, "\b \b");
                        }
                        continue;
                }
                if (c == 0x03) /* ^C in a raw terminal: a refusal, not a kill */
                        return 'n';
                if ((unsigned char)c < 0x20 || len + 1 >= sizeof(line))
                        continue;
                line[len++] = c;
                if (!echo)
                        (void)write_all(ap->cfg.tty_fd, &c, 1);
        }
}

static void *prompter_main(void *arg)
{
        struct approvals *ap = arg;
        for (;;) {
                pthread_mutex_lock(&ap->lock);
                struct pending *p = NULL;
                while (!ap->stop) {
                        for (p = ap->head; p && p->prompted; p = p->next)
                                ;
                        if (p)
                                break;
                        pthread_cond_wait(&ap->cond, &ap->lock);
                }
                if (ap->stop) {
                        pthread_mutex_unlock(&ap->lock);
                        break;
                }
                p->prompted = true;
                char id[24];
                snprintf(id, sizeof(id), "%s", p->id);
                struct notify_ask q = p->q;
                time_t expires = p->expires;
                pthread_mutex_unlock(&ap->lock);

                /* the relay of our stdin to the sandbox's terminal stops
                 * reading first, so the answer comes here, not there */
                atomic_store(&ap->prompting, true);
                wake_relay(ap);
                nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
                /* the target and the command line are the sandbox's: escaped,
                 * so an escape or a carriage return in a file name cannot
                 * redraw the prompt to ask about something else */
                _cleanup_free_ char *target = doc_printable(q.target), *cmdline = doc_printable(q.cmdline);
                _cleanup_free_ char *text = xasprintf("\r\ncordon: approval needed [%s]: %s %.*s\r\n"
                                                      "cordon:   %s by pid %u: %.*s\r\n"
                                                      "cordon: allow? [y]es / [n]o / [a]lways (expires in %lld s): ",
                                                      id, q.capability, 1024, target, q.syscall, q.pid, 200, cmdline,
                                                      (long long)(expires - time(NULL)));
                tty_write(ap, text);
                int answer = read_answer(ap, id);
                if (answer) {
                        char err[160];
                        if (approvals_decide(ap, id, answer != 'n', answer == 'a', "terminal", err, sizeof(err)) < 0)
                                tty_write(ap, "cordon: too late: the request has expired\r\n");
                        else
                                tty_write(ap, answer == 'n'   ? "cordon: denied\r\n"
                                              : answer == 'a' ? "cordon: allowed, and remembered for this run\r\n"
                                                              : "cordon: allowed once\r\n");
                } else if (!ap->stop)
                        tty_write(ap, "\r\ncordon: no answer in time: denied (expired)\r\n");
                atomic_store(&ap->prompting, false);
                wake_relay(ap);
        }
        return NULL;
}

int approvals_new(const struct approvals_config *cfg, struct approvals **ret)
{
        struct approvals *ap = xcalloc(1, sizeof(*ap));
        ap->cfg = *cfg;
        ap->queue = json_array();
        ap->approver = (struct notify_approver){.ask = ask, .mismatch = mismatch, .userdata = ap};
        pthread_mutex_init(&ap->lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&ap->cond, &ca);
        pthread_condattr_destroy(&ca);
        /* the timer starts with the first request (ask) */
        if (cfg->tty_fd >= 0) {
                int r = pthread_create(&ap->prompter, NULL, prompter_main, ap);
                if (r != 0) {
                        approvals_free(ap);
                        return -r;
                }
                ap->prompter_started = true;
        }
        *ret = ap;
        return 0;
}

const struct notify_approver *approvals_approver(struct approvals *ap)
{
        return &ap->approver;
}

void approvals_close(struct approvals *ap, const char *who)
{
        if (!ap)
                return;
        struct answer holds[APPROVALS_MAX_PENDING];
        size_t n = 0;
        pthread_mutex_lock(&ap->lock);
        ap->closed = true;
        ap->stop = true;
        for (struct pending *p = ap->head, *next; p; p = next) {
                next = p->next;
                record(ap, p->id, &p->q, "denied", who, false);
                holds[n++] = p->to;
                free(p);
        }
        ap->head = NULL;
        ap->n_pending = 0;
        pthread_cond_broadcast(&ap->cond);
        pthread_mutex_unlock(&ap->lock);
        for (size_t i = 0; i < n; i++)
                answer_send(&holds[i], "denied");
        if (ap->timer_started) {
                pthread_join(ap->timer, NULL);
                ap->timer_started = false;
        }
        if (ap->prompter_started) {
                pthread_join(ap->prompter, NULL);
                ap->prompter_started = false;
        }
}

json_t *approvals_pending_json(struct approvals *ap)
{
        json_t *all = json_array();
        if (!ap)
                return all;
        pthread_mutex_lock(&ap->lock);
        for (struct pending *p = ap->head; p; p = p->next) {
                char req[32], exp[32];
                iso_time(p->requested, req);
                iso_time(p->expires, exp);
                json_array_append_new(all, json_pack("{s:s, s:s, s:o, s:o, s:s, s:s}", "request", p->id, "capability",
                                                     p->q.capability, "target", target_json(&p->q), "summary",
                                                     summary_json(&p->q), "requestedAt", req, "expiresAt", exp));
        }
        pthread_mutex_unlock(&ap->lock);
        return all;
}

json_t *approvals_take_events(struct approvals *ap)
{
        pthread_mutex_lock(&ap->lock);
        json_t *q = ap->queue;
        ap->queue = json_array();
        if (ap->queue_dropped) {
                json_array_append_new(q, json_pack("{s:s, s:I}", "type", "approval_events_dropped", "count",
                                                   (json_int_t)ap->queue_dropped));
                ap->queue_dropped = 0;
        }
        pthread_mutex_unlock(&ap->lock);
        return q;
}

bool approvals_prompting(struct approvals *ap)
{
        return ap && atomic_load(&ap->prompting);
}

void approvals_free(struct approvals *ap)
{
        if (!ap)
                return;
        approvals_close(ap, "terminate");
        for (size_t i = 0; i < ap->n_remembered; i++)
                free(ap->remembered[i].target);
        json_decref(ap->queue);
        pthread_cond_destroy(&ap->cond);
        pthread_mutex_destroy(&ap->lock);
        free(ap);
}
