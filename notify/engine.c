/* The notification loop: one worker at a time receives from the listener,
 * dispatches by syscall number through the table, and answers.
 *
 * One receiver, not a pool waiting in RECV together: the kernel wakes every
 * thread waiting in SECCOMP_IOCTL_NOTIF_RECV for each notification (the
 * waits are not exclusive), so N idle receivers cost N wakeups per trapped
 * call, and the one that wins changes from call to call, bouncing the work
 * between CPUs. A single receiver with SYNC_WAKE_UP keeps the caller and the
 * sentry ping-ponging on one CPU (bench/: a trapped call 2-3x faster).
 *
 * A handler may block (a FIFO open waiting for its writer, a slow connect,
 * an approval). A watchdog thread (made with the first call) notices a
 * receiver that has been serving the same call for a tick
 * (WATCHDOG_TICK_NS) and hands the receiving role to a parked worker (or
 * starts one, up to max_workers); the slow one parks when it is done. So a
 * blocked handler stalls the others for at most two ticks, and costs
 * nothing while calls are fast. While the sandbox makes no trapped calls
 * the watchdog sleeps without a timeout. It also ends a
 * blocked handler's wait whose caller is gone, or has a signal to take
 * (notify/signal.c), as the caller's own interrupted wait would end. */
#include "config.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <seccomp.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>

#include "common/trace.h"
#include "common/util.h"
#include "notify/notify-internal.h"
#include "notify/notify.h"

/* a real-time signal nobody else uses; workers unblock only this one */
#define WAKE_SIGNAL (SIGRTMIN + 3)
/* threads that serve decided held calls again; each serves one at a time,
 * and a decision is quick to serve (one open or connect), so a few do */
#define RESUME_THREADS_MAX 4

/* How long a receiver may serve one call before another takes over
 * receiving: the longest a blocked handler delays the sandbox's other calls
 * (up to two ticks), and the watchdog's wakeup rate while calls arrive. */
#define WATCHDOG_TICK_NS 1000000L

struct notify_engine {
        int listener_fd;
        int hostproc_fd;
        void *userdata;
        void *contexts[NOTIFY_MAX_CONTEXTS];
        int (*thread_init)(void *userdata);
        const struct syscall_entry *dispatch[NOTIFY_NR_MAX];
        struct seccomp_notif_sizes sizes;
        bool sync_wakeup;
        /* the sandbox's filter waits killably once a call is received
         * (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV): see answer() */
        bool wait_killable;
        /* fds injected into a caller that has been woken while our copy is
         * still open (between the ADDFD ioctl and our close), and whether
         * an execve waits for them to be closed (notify_wait_injected) */
        _Atomic uint32_t open_copies;
        atomic_uint copy_waiters;
        bool stall_copies;    /* test hook: CORDON_TEST_STALL=fd-copy */
        bool execs_untrapped; /* notify_engine_config's */

        pthread_mutex_t lock;
        pthread_cond_t unpark;
        pthread_t *threads;
        unsigned n_threads, n_parked, max_workers;
        unsigned handoffs; /* receiving roles offered to parked workers */
        atomic_bool stopping;
        int stop_efd; /* written at stop: wakes workers in wait_for_stop */

        /* The receiver's state, odd while it serves a call. Written by the
         * receiver (and, to take the role away, by the watchdog with a
         * compare-and-swap); the watchdog's futex word. */
        _Atomic uint32_t serve_seq;
        atomic_bool watchdog_asleep; /* waiting without a timeout: wake it */
        pthread_t watchdog;
        bool have_watchdog;        /* under lock (made with the first call) */
        atomic_bool watchdog_made; /* have_watchdog, read without the lock */

        /* one per worker: a call it serves that may wait on the sandbox's
         * own processes (notify_block_begin), which the watchdog breaks
         * once its caller is gone */
        struct block_slot *slots;
        atomic_uint n_slots;
        atomic_uint n_blocking;

        _Atomic uint64_t counts[NOTIFY_NR_MAX];
        _Atomic uint64_t nsecs[NOTIFY_NR_MAX]; /* time served, RECV to reply */
        _Atomic uint64_t max_nsecs[NOTIFY_NR_MAX];
        _Atomic uint64_t failures;
        struct notify_umask_cache *umask_cache;

        /* held calls (notify_ask): decided ones wait here for a resume
         * thread; under lock */
        struct notify_approver approver;
        bool has_approver;
        pthread_cond_t resume_cond;
        struct notify_hold *resume_head, **resume_tail;
        pthread_t resume_threads[RESUME_THREADS_MAX];
        unsigned n_resume, n_resume_idle;
};

struct notify_hold {
        struct notify_engine *e;
        struct seccomp_notif *req; /* our copy of the notification (the kernel's size) */
        struct notify_ask q;       /* what was asked */
        bool approved;
        struct notify_hold *next;
};

/* A worker's call that may block on the sandbox's own processes (a FIFO
 * open waits for the other end). state: BLOCK_IDLE, BLOCK_WAITING (the
 * worker is in it, id is the call's), BLOCK_CHECKED (the watchdog is
 * looking at it: the worker does not leave until the watchdog is done, so
 * a knock never lands on the worker's next call). */
enum { BLOCK_IDLE, BLOCK_WAITING, BLOCK_CHECKED };
struct block_slot {
        _Atomic int state;
        atomic_bool knocked;
        _Atomic uint64_t id;
        _Atomic uint32_t pid;    /* the caller's tid */
        atomic_bool interrupted; /* knocked for the caller's signal */
        uint64_t seen;           /* notify_sig_check's, the watchdog's own */
        pthread_t thread;
};
/* this worker's slot; none in a resume thread or outside the engine */
static __thread struct block_slot *own_slot;
static __thread struct notify_engine *own_engine;

/* The watchdog looks at blocked calls every this many ticks. */
#define BLOCK_CHECK_TICKS 10
/* How long a call waits for an abandoned one to leave its wait. */
#define BLOCK_LEAVE_NS (100 * 1000 * 1000L)

static void wake_handler(int sig)
{
        (void)sig;
}

static uint64_t now_ns(void);

/* Knocks (WAKE_SIGNAL: EINTR) on each worker whose blocked call's caller is
 * gone (killed while the worker waited): its wait can never be answered,
 * and what it waits for must not happen for nobody (a FIFO opened by a
 * writer that was killed would pair with the next reader). With wait, also
 * waits (bounded) until each knocked call has left its wait. With signals
 * (the watchdog), also on each whose caller has a signal to take
 * (notify/signal.c), marked interrupted: natively its wait would end. */
static void knock_abandoned(struct notify_engine *e, bool wait, bool signals)
{
        unsigned n = atomic_load(&e->n_slots);
        for (unsigned i = 0; i < n && i < e->max_workers; i++) {
                struct block_slot *b = &e->slots[i];
                if (b == own_slot)
                        continue;
                int want = BLOCK_WAITING;
                while (!atomic_compare_exchange_weak(&b->state, &want, BLOCK_CHECKED)) {
                        if (want != BLOCK_CHECKED && want != BLOCK_WAITING)
                                break; /* idle */
                        want = BLOCK_WAITING;
                        sched_yield(); /* another checker has it: after it */
                }
                if (want != BLOCK_WAITING)
                        continue;
                uint64_t id = atomic_load(&b->id);
                /* read before the validity check: a valid call after it
                 * proves the status was the caller's (not a recycled tid's) */
                int sig = signals ? notify_sig_check(e->hostproc_fd, (pid_t)atomic_load(&b->pid), &b->seen) : 0;
                bool gone = ioctl(e->listener_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0;
                if (gone || sig > 0) {
                        if (!gone)
                                atomic_store(&b->interrupted, true);
                        atomic_store(&b->knocked, true);
                        pthread_kill(b->thread, WAKE_SIGNAL);
                }
                atomic_store(&b->state, BLOCK_WAITING);
                if (!gone || !wait)
                        continue;
                uint64_t until = now_ns() + BLOCK_LEAVE_NS;
                while (atomic_load(&b->state) != BLOCK_IDLE && atomic_load(&b->id) == id && now_ns() < until)
                        sched_yield();
        }
}

void notify_block_begin(const struct notify_call *call)
{
        struct block_slot *b = own_slot;
        if (!b || call->engine != own_engine)
                return;
        /* A call of a caller that is gone may still wait on the same
         * object (the FIFO a reader killed just now was opening): it leaves
         * its wait before this one starts, so the two never pair. Only
         * where some call waits: one load otherwise. */
        if (atomic_load(&own_engine->n_blocking) > 0)
                knock_abandoned(own_engine, true, false);
        atomic_store(&b->id, call->req->id);
        atomic_store(&b->pid, call->req->pid);
        atomic_store(&b->interrupted, false);
        b->seen = 0; /* the watchdog looks only at a waiting slot */
        atomic_store(&b->state, BLOCK_WAITING);
        atomic_fetch_add(&own_engine->n_blocking, 1);
        /* a watchdog asleep with no call in sight must start looking */
        if (atomic_load(&own_engine->watchdog_asleep))
                syscall(SYS_futex, &own_engine->serve_seq, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

void notify_block_end(const struct notify_call *call)
{
        struct block_slot *b = own_slot;
        if (!b || call->engine != own_engine)
                return;
        int want = BLOCK_WAITING;
        while (!atomic_compare_exchange_weak(&b->state, &want, BLOCK_IDLE)) {
                want = BLOCK_WAITING;
                sched_yield(); /* the watchdog is checking this call: a moment */
        }
        atomic_fetch_sub(&own_engine->n_blocking, 1);
        /* A knock sent while the call was checked is pending by now: a
         * system call's return delivers it here, not as an EINTR in the
         * next call this worker serves. */
        if (atomic_exchange(&b->knocked, false))
                sched_yield();
}

bool notify_block_interrupted(const struct notify_call *call)
{
        struct block_slot *b = own_slot;
        return b && call->engine == own_engine && atomic_load(&b->interrupted);
}

static int reply(struct notify_engine *e, struct seccomp_notif_resp *resp)
{
        if (ioctl(e->listener_fd, SECCOMP_IOCTL_NOTIF_SEND, resp) < 0) {
                /* ENOENT: the thread was killed (or, without the killable
                 * wait, interrupted) while we worked; nobody to answer. */
                return negative_errno();
        }
        return 0;
}

static uint64_t now_ns(void)
{
        struct timespec ts;
        /* the vDSO: no system call, no allocation */
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* One call as a worker serves it. */
struct serving {
        uint64_t t0;   /* when RECV returned it */
        uint32_t seq;  /* e->serve_seq while serving it (odd) */
        bool receiver; /* still the receiver once it is answered */
        bool done;     /* served() has run */
};

/* The worker is done with its call: counts the time it took and gives up
 * the serving mark. Called once per call, just before the ioctl that wakes
 * the caller, whose next call may come at once (on this CPU, with
 * SYNC_WAKE_UP). */
static void served(struct notify_engine *e, const struct seccomp_notif *req, struct serving *sv)
{
        if (!sv || sv->done)
                return; /* !sv: a resume thread, which never receives */
        sv->done = true;
        int nr = req->data.nr;
        if (nr >= 0 && nr < NOTIFY_NR_MAX) {
                uint64_t dt = now_ns() - sv->t0;
                atomic_fetch_add_explicit(&e->nsecs[nr], dt, memory_order_relaxed);
                uint64_t m = atomic_load_explicit(&e->max_nsecs[nr], memory_order_relaxed);
                while (dt > m && !atomic_compare_exchange_weak_explicit(&e->max_nsecs[nr], &m, dt, memory_order_relaxed,
                                                                        memory_order_relaxed))
                        ;
        }
        /* Fails when the watchdog took the receiving role away (this call
         * was slow): another worker receives now, and this one parks. */
        uint32_t want = sv->seq;
        sv->receiver = atomic_compare_exchange_strong(&e->serve_seq, &want, sv->seq + 1);
}

static void copy_closed(struct notify_engine *e)
{
        if (atomic_fetch_sub(&e->open_copies, 1) == 1 && atomic_load(&e->copy_waiters) > 0)
                syscall(SYS_futex, &e->open_copies, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

void notify_wait_injected(const struct notify_call *call)
{
        struct notify_engine *e = call->engine;
        uint32_t n;
        if (!e || atomic_load(&e->open_copies) == 0)
                return;
        /* counted before the load: a close that empties the count after
         * it either sees us (and wakes) or changed the word before our
         * wait (which then returns at once) */
        atomic_fetch_add(&e->copy_waiters, 1);
        while ((n = atomic_load(&e->open_copies)) != 0)
                syscall(SYS_futex, &e->open_copies, FUTEX_WAIT_PRIVATE, n, NULL, NULL, 0);
        atomic_fetch_sub(&e->copy_waiters, 1);
}

static void answer(struct notify_engine *e, const struct seccomp_notif *req, struct seccomp_notif_resp *resp,
                   struct notify_verdict *v, struct serving *sv)
{
        memset(resp, 0, e->sizes.seccomp_notif_resp);
        resp->id = req->id;

        switch (v->kind) {
        case VERDICT_ERROR:
                resp->error = -(v->error > 0 ? v->error : EACCES);
                break;
        case VERDICT_VALUE:
                resp->val = v->value;
                break;
        case VERDICT_CONTINUE:
                resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
                break;
        case VERDICT_HELD:
                /* the approver holds it: answered by a resume thread once
                 * decided (notify_hold_decide), never here; serve_one gives
                 * up the serving mark */
                return;
        case VERDICT_FD: {
                struct seccomp_notif_addfd addfd = {
                        .id = req->id,
                        .flags = SECCOMP_ADDFD_FLAG_SEND,
                        .srcfd = (__u32)v->fd,
                        .newfd = 0,
                        .newfd_flags = v->fd_flags,
                };
                /* ADDFD with SEND installs the fd and completes the call in
                 * one step: no window in which a signal could restart the
                 * call with the fd left behind.
                 *
                 * ADDFD, then SEND with the fd's number, is not faster here
                 * (bench/README.md, "The trapped round trip", issue #22):
                 * with both CPUs busy it is 2-4 us slower (a context switch
                 * more on each side); with one idle, where the one step
                 * costs 55-60 us (the caller, woken for the install with
                 * complete(), never a same-CPU wakeup, moves to the idle
                 * CPU), two steps gave 35-43 us here, not the bare floor's
                 * 14, for a reason not found yet.
                 *
                 * The caller runs again before our copy is closed. A file
                 * still open for writing here makes an execve of it fail
                 * with ETXTBSY (cp f /tmp/t && /tmp/t), so an execve waits
                 * until no copy is open (notify_wait_injected). The receiver
                 * closes its copy before it receives again, so only copies
                 * held by another worker (a handoff, a resume thread) can
                 * make it wait, and only as long as that close takes. */
                if (e->stall_copies)
                        /* long enough for the watchdog to hand the receiving
                         * role to another worker */
                        (void)clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){0, 4 * WATCHDOG_TICK_NS}, NULL);
                served(e, req, sv);
                atomic_fetch_add(&e->open_copies, 1);
                /* With execs untrapped nothing makes an execve wait for
                 * our copy: a file open for writing is answered in two
                 * steps, our copy closed in between (the caller is still
                 * blocked then, and can exec nothing before the reply).
                 * Only where the filter waits killably
                 * (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV): once the call
                 * is received, only a fatal signal can then end the
                 * caller's wait, which takes the process and its fd table
                 * with it, so no handler runs and no restart repeats the
                 * call between the install and the answer with the first
                 * fd left in the table, unknown to the program. Without it
                 * (before Linux 5.19, or forced off by a test) the one step
                 * stays, and an exec of such a file right after its open
                 * may meet our copy for a moment (ETXTBSY): a transient
                 * failure rather than a leaked fd. */
                int fl = e->execs_untrapped && e->wait_killable ? fcntl(v->fd, F_GETFL) : -1;
                if (fl >= 0 && (fl & O_ACCMODE) != O_RDONLY)
                        addfd.flags = 0;
                int r = ioctl(e->listener_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
                if (r < 0 && errno == EINVAL && addfd.flags) {
                        /* before 5.14: no SEND flag; two steps it is, our
                         * copy closed before the reply */
                        addfd.flags = 0;
                        r = ioctl(e->listener_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &addfd);
                }
                int err = errno;
                if (e->stall_copies)
                        (void)clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){0, 200 * 1000 * 1000}, NULL);
                close(v->fd);
                v->fd = -1;
                copy_closed(e);
                if (addfd.flags == 0) {
                        if (r >= 0) {
                                resp->val = r;
                                (void)reply(e, resp);
                        } else if (err != ENOENT) {
                                resp->error = -err;
                                (void)reply(e, resp);
                        }
                } else if (r < 0 && err != ENOENT && err != EINPROGRESS) {
                        /* e.g. EMFILE: the child's fd table is full */
                        resp->error = -err;
                        (void)reply(e, resp);
                }
                return;
        }
        }
        served(e, req, sv);
        (void)reply(e, resp);
}

static void serve_one(struct notify_engine *e, struct seccomp_notif *req, struct seccomp_notif_resp *resp,
                      struct serving *sv, const struct notify_ask *approved)
{
        struct notify_verdict v = {.kind = VERDICT_ERROR, .error = EACCES, .fd = -1};
        const struct syscall_entry *entry = NULL;

        if (req->data.arch == AUDIT_ARCH_X86_64 && req->data.nr >= 0 && req->data.nr < NOTIFY_NR_MAX)
                entry = e->dispatch[req->data.nr];

        if (!entry || !entry->handler) {
                /* the filter only notifies what the table emulates */
                v.error = ENOSYS;
        } else {
                atomic_fetch_add_explicit(&e->counts[req->data.nr], 1, memory_order_relaxed);
                struct notify_call call = {
                        .req = req,
                        .listener_fd = e->listener_fd,
                        .hostproc_fd = e->hostproc_fd,
                        .userdata = entry->ctx < NOTIFY_MAX_CONTEXTS ? e->contexts[entry->ctx] : NULL,
                        .engine = e,
                        .approved = approved,
                };
                /* a fresh call proves the thread's previous one over; a
                 * held call served again is the same call */
                if (!approved)
                        notify_umask_observe(&call);
                int r = entry->handler(&call, &v);
                if (approved && v.kind == VERDICT_HELD) {
                        /* cannot happen (notify_ask never holds an approved
                         * call again); fail closed rather than leave it */
                        v = (struct notify_verdict){.kind = VERDICT_ERROR, .error = EACCES, .fd = -1};
                }
                if (r < 0) {
                        atomic_fetch_add_explicit(&e->failures, 1, memory_order_relaxed);
                        if (v.kind == VERDICT_FD && v.fd >= 0)
                                close(v.fd);
                        v = (struct notify_verdict){.kind = VERDICT_ERROR, .error = -r, .fd = -1};
                }
        }
        answer(e, req, resp, &v, sv);
        trace_mark("sentry: call answered");
        served(e, req, sv); /* once on every path; a no-op if answer() did */
}

static void *worker_main(void *arg);

/* Called with e->lock held. */
static int spawn_worker_locked(struct notify_engine *e)
{
        if (atomic_load(&e->stopping))
                return -ESHUTDOWN;
        if (e->n_threads >= e->max_workers)
                return -EAGAIN;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setstacksize(&attr, 256 * 1024);
        pthread_t t;
        int r = pthread_create(&t, &attr, worker_main, e);
        pthread_attr_destroy(&attr);
        if (r != 0)
                return -r;
        e->threads[e->n_threads++] = t;
        return 0;
}

static void futex_wake_all(_Atomic uint32_t *word)
{
        syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* Waits for the receiving role (a handoff); false when the engine stops. */
static bool take_role(struct notify_engine *e)
{
        bool ok = false;
        pthread_mutex_lock(&e->lock);
        while (!atomic_load(&e->stopping) && e->handoffs == 0) {
                e->n_parked++;
                pthread_cond_wait(&e->unpark, &e->lock);
                e->n_parked--;
        }
        if (!atomic_load(&e->stopping)) {
                e->handoffs--;
                ok = true;
        }
        pthread_mutex_unlock(&e->lock);
        return ok;
}

/* Blocks the process-directed signals (they belong to the sentry's main
 * thread) but WAKE_SIGNAL, which breaks a receive or a sleep at stop. */
static void only_wake_signal(void)
{
        sigset_t mask;
        sigfillset(&mask);
        sigdelset(&mask, WAKE_SIGNAL);
        pthread_sigmask(SIG_SETMASK, &mask, NULL);
}

/* Whether no task uses the filter any more (the sandbox is gone): the
 * listener then polls POLLHUP, and every receive fails with ENOENT at once,
 * so a receiver that kept trying would spin at full speed until the engine
 * stops, taking the CPU from init's exit and from the sentry's teardown. */
static bool listener_dead(struct notify_engine *e)
{
        struct pollfd p = {.fd = e->listener_fd, .events = POLLIN};
        return poll(&p, 1, 0) == 1 && (p.revents & POLLHUP);
}

/* Nothing can arrive any more: sleep until notify_engine_stop writes the
 * stop eventfd (a signal landing just before the poll would be lost, and
 * the stop would wait for its next knock, half a millisecond later). */
static void wait_for_stop(struct notify_engine *e)
{
        while (!atomic_load(&e->stopping)) {
                struct pollfd p = {.fd = e->stop_efd, .events = POLLIN};
                (void)poll(&p, 1, e->stop_efd >= 0 ? -1 : 1);
        }
}

static void watchdog_start(struct notify_engine *e);

static void *worker_main(void *arg)
{
        struct notify_engine *e = arg;

        only_wake_signal();
        if (e->thread_init && e->thread_init(e->userdata) < 0) {
                /* A worker that cannot confine itself must not serve: fail closed. */
                static const char msg[] = "cordon: a sentry worker could not enter the sandbox view; stopping\n";
                (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
                abort();
        }

        unsigned slot = atomic_fetch_add(&e->n_slots, 1);
        if (slot < e->max_workers) {
                own_slot = &e->slots[slot];
                own_slot->thread = pthread_self();
                own_engine = e;
        }

        /* allocated once per worker: nothing is allocated per call */
        _cleanup_free_ struct seccomp_notif *req = xcalloc(1, e->sizes.seccomp_notif);
        _cleanup_free_ struct seccomp_notif_resp *resp = xcalloc(1, e->sizes.seccomp_notif_resp);

        while (take_role(e)) {
                /* the receiver: until stopped, or a slow call costs it the role */
                while (!atomic_load(&e->stopping)) {
                        memset(req, 0, e->sizes.seccomp_notif);
                        if (ioctl(e->listener_fd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
                                if (errno == ENOENT && listener_dead(e)) {
                                        wait_for_stop(e);
                                        return NULL;
                                }
                                if (errno == EINTR || errno == ENOENT)
                                        continue; /* woken to stop, or the caller went away first */
                                return NULL;      /* EBADF etc.: the listener is gone */
                        }
                        if (!atomic_load(&e->watchdog_made))
                                watchdog_start(e);
                        struct serving sv = {.t0 = now_ns()};
                        /* only the receiver moves serve_seq from even to odd */
                        sv.seq = atomic_load(&e->serve_seq) + 1;
                        atomic_store(&e->serve_seq, sv.seq);
                        if (atomic_load(&e->watchdog_asleep)) {
                                /* the first call after a quiet spell */
                                atomic_store(&e->watchdog_asleep, false);
                                futex_wake_all(&e->serve_seq);
                        }
                        serve_one(e, req, resp, &sv, NULL);
                        if (!sv.receiver)
                                break; /* another worker receives now: park */
                }
        }
        return NULL;
}

/* The watchdog is made by the receiver of the first trapped call, before
 * it serves it (that call may be the one that blocks): a sandbox that makes
 * none (a cold start of /bin/true) never pays its thread's start and end
 * (about 0.05-0.1 ms of CPU each here); the first call pays the start. Not
 * after the stop. Until it exists no call is being served, so there is
 * nothing for it to watch. Where it cannot be made (out of threads) the
 * call is served without one, as at the cap of workers: a handler that
 * blocks then holds the others until it ends; the next call tries again.
 * It runs with the receiver's narrowed credentials and view, which it does
 * not use (it compares and knocks, and reads the host's /proc through
 * hostproc_fd); a worker it starts takes its own back (fs_worker_init). */
static void *watchdog_main(void *arg);

static void watchdog_start(struct notify_engine *e)
{
        pthread_mutex_lock(&e->lock);
        if (!e->have_watchdog && !atomic_load(&e->stopping)) {
                /* the watchdog only sleeps and compares: the workers' small
                 * stack (the libraries' static TLS lives there too, so not
                 * smaller) */
                pthread_attr_t attr;
                pthread_attr_init(&attr);
                pthread_attr_setstacksize(&attr, 256 * 1024);
                if (pthread_create(&e->watchdog, &attr, watchdog_main, e) == 0) {
                        e->have_watchdog = true;
                        atomic_store(&e->watchdog_made, true);
                }
                pthread_attr_destroy(&attr);
        }
        pthread_mutex_unlock(&e->lock);
}

/* Takes the receiving role from a receiver that has served one call for a
 * whole tick (a handler that blocks) and offers it to a parked or new
 * worker. Sleeps without a timeout while no call is being served. */
static void *watchdog_main(void *arg)
{
        struct notify_engine *e = arg;
        only_wake_signal();
        uint32_t last = atomic_load(&e->serve_seq);
        unsigned ticks = 0;
        while (!atomic_load(&e->stopping)) {
                /* a tick, cut short by the stop (a signal could land just
                 * before a sleep, and the stop would wait out the tick) */
                if (e->stop_efd >= 0) {
                        struct pollfd p = {.fd = e->stop_efd, .events = POLLIN};
                        (void)ppoll(&p, 1, &(struct timespec){0, WATCHDOG_TICK_NS}, NULL);
                } else
                        (void)clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){0, WATCHDOG_TICK_NS}, NULL);
                if (atomic_load(&e->n_blocking) > 0 && ++ticks % BLOCK_CHECK_TICKS == 0)
                        knock_abandoned(e, false, true);
                uint32_t v = atomic_load(&e->serve_seq);
                if (v == last && (v & 1)) {
                        /* the same call for a tick: hand the role on */
                        pthread_mutex_lock(&e->lock);
                        if (atomic_compare_exchange_strong(&e->serve_seq, &v, v + 1)) {
                                e->handoffs++;
                                if (e->n_parked > 0)
                                        pthread_cond_signal(&e->unpark);
                                else
                                        /* at the cap (or out of threads) calls
                                         * queue in the kernel until a worker
                                         * parks and takes the handoff */
                                        (void)spawn_worker_locked(e);
                        }
                        pthread_mutex_unlock(&e->lock);
                } else if (v == last) {
                        /* no call for a whole tick: sleep until one comes
                         * (the receiver wakes us), or until stop */
                        atomic_store(&e->watchdog_asleep, true);
                        if (!atomic_load(&e->stopping)) {
                                /* blocked calls are still looked at, every
                                 * BLOCK_CHECK_TICKS ticks */
                                bool blocked = atomic_load(&e->n_blocking) > 0;
                                struct timespec to = {0, BLOCK_CHECK_TICKS * WATCHDOG_TICK_NS};
                                syscall(SYS_futex, &e->serve_seq, FUTEX_WAIT_PRIVATE, v, blocked ? &to : NULL, NULL, 0);
                                if (blocked)
                                        knock_abandoned(e, false, true);
                        }
                        atomic_store(&e->watchdog_asleep, false);
                }
                last = atomic_load(&e->serve_seq);
        }
        return NULL;
}

/* --- held calls --- */

static void hold_free(struct notify_hold *h)
{
        if (!h)
                return;
        free(h->req);
        free(h);
}

/* Serves one decided hold: a denial is answered EACCES; an approval serves
 * the call again, with what was approved, on this thread (which entered
 * the view as the workers did). */
static void serve_held(struct notify_engine *e, struct notify_hold *h, struct seccomp_notif_resp *resp)
{
        if (!h->approved) {
                memset(resp, 0, e->sizes.seccomp_notif_resp);
                resp->id = h->req->id;
                resp->error = -EACCES;
                (void)reply(e, resp); /* ENOENT: the caller is gone; nothing to answer */
                return;
        }
        if (ioctl(e->listener_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &h->req->id) < 0)
                return; /* killed while it waited: nothing to perform */
        serve_one(e, h->req, resp, NULL, &h->q);
}

static void *resume_main(void *arg)
{
        struct notify_engine *e = arg;
        sigset_t mask;
        sigfillset(&mask);
        pthread_sigmask(SIG_SETMASK, &mask, NULL);
        if (e->thread_init && e->thread_init(e->userdata) < 0) {
                static const char msg[] = "cordon: a sentry resume thread could not enter the sandbox view; stopping\n";
                (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
                abort();
        }
        _cleanup_free_ struct seccomp_notif_resp *resp = xcalloc(1, e->sizes.seccomp_notif_resp);
        pthread_mutex_lock(&e->lock);
        for (;;) {
                while (!e->resume_head && !atomic_load(&e->stopping))
                        pthread_cond_wait(&e->resume_cond, &e->lock);
                struct notify_hold *h = e->resume_head;
                if (!h)
                        break; /* stopping, nothing left */
                e->resume_head = h->next;
                if (!e->resume_head)
                        e->resume_tail = &e->resume_head;
                e->n_resume_idle--;
                pthread_mutex_unlock(&e->lock);
                serve_held(e, h, resp);
                hold_free(h);
                pthread_mutex_lock(&e->lock);
                e->n_resume_idle++;
        }
        pthread_mutex_unlock(&e->lock);
        return NULL;
}

void notify_hold_decide(struct notify_hold *h, bool approved)
{
        struct notify_engine *e = h->e;
        h->approved = approved;
        h->next = NULL;
        pthread_mutex_lock(&e->lock);
        *e->resume_tail = h;
        e->resume_tail = &h->next;
        if (e->n_resume_idle == 0 && e->n_resume < RESUME_THREADS_MAX && !atomic_load(&e->stopping)) {
                pthread_attr_t attr;
                pthread_attr_init(&attr);
                pthread_attr_setstacksize(&attr, 256 * 1024);
                if (pthread_create(&e->resume_threads[e->n_resume], &attr, resume_main, e) == 0) {
                        e->n_resume++;
                        e->n_resume_idle++;
                }
                pthread_attr_destroy(&attr);
                /* none could start and none runs: the hold waits for the
                 * next decision's try, or is answered at stop */
        }
        pthread_cond_signal(&e->resume_cond);
        pthread_mutex_unlock(&e->lock);
}

bool notify_hold_alive(const struct notify_hold *h)
{
        __u64 id = h->req->id;
        return ioctl(h->e->listener_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

/* The caller's command line, arguments joined by spaces, bounded. */
static void read_cmdline(const struct notify_call *call, char *buf, size_t size)
{
        char path[32];
        snprintf(path, sizeof(path), "%u/cmdline", call->req->pid);
        buf[0] = '\0';
        _cleanup_close_ int fd = notify_proc_open(call->hostproc_fd, path, O_RDONLY);
        if (fd < 0)
                return;
        ssize_t n = read(fd, buf, size - 1);
        if (n <= 0)
                return;
        while (n > 0 && buf[n - 1] == '\0')
                n--;
        for (ssize_t i = 0; i < n; i++)
                if (buf[i] == '\0')
                        buf[i] = ' ';
        buf[n] = '\0';
}

int notify_ask(struct notify_call *call, struct notify_ask *q, struct notify_verdict *ret)
{
        struct notify_engine *e = call->engine;
        q->pid = call->req->pid;
        if (!q->syscall[0]) {
                char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, call->req->data.nr);
                snprintf(q->syscall, sizeof(q->syscall), "%s", name ? name : "?");
                free(name);
        }
        if (call->approved) {
                /* served again after an approval: exactly that request, as
                 * resolved now, passes; anything else is not what a person
                 * said yes to */
                if (streq(call->approved->capability, q->capability) && streq(call->approved->target, q->target))
                        return 1;
                if (e && e->has_approver && e->approver.mismatch)
                        e->approver.mismatch(e->approver.userdata, call->approved, q);
                ret->kind = VERDICT_ERROR;
                ret->error = EACCES;
                return 0;
        }
        read_cmdline(call, q->cmdline, sizeof(q->cmdline));
        if (!e || !e->has_approver) {
                ret->kind = VERDICT_ERROR;
                ret->error = EACCES;
                return 0;
        }
        struct notify_hold *h = xcalloc(1, sizeof(*h));
        h->e = e;
        h->req = xcalloc(1, e->sizes.seccomp_notif);
        memcpy(h->req, call->req, e->sizes.seccomp_notif);
        h->q = *q;
        int r = e->approver.ask(e->approver.userdata, &h->q, h);
        if (r == 0) {
                /* the approver owns h now, and may have decided it already */
                ret->kind = VERDICT_HELD;
                return 0;
        }
        hold_free(h);
        if (r > 0)
                return 1;
        ret->kind = VERDICT_ERROR;
        ret->error = EACCES;
        return 0;
}

static struct seccomp_notif_sizes kernel_sizes;
static pthread_once_t kernel_sizes_once = PTHREAD_ONCE_INIT;
static int kernel_sizes_error;
static bool kernel_wait_killable;

static void ask_kernel_sizes(void)
{
        if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &kernel_sizes) < 0) {
                kernel_sizes_error = errno;
                return;
        }
        /* The kernel's structs may be larger than ours; never smaller. */
        if (kernel_sizes.seccomp_notif < sizeof(struct seccomp_notif))
                kernel_sizes.seccomp_notif = sizeof(struct seccomp_notif);
        if (kernel_sizes.seccomp_notif_resp < sizeof(struct seccomp_notif_resp))
                kernel_sizes.seccomp_notif_resp = sizeof(struct seccomp_notif_resp);
        /* Whether the kernel knows SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV:
         * it checks the flags before it reads the program, so with no
         * program it answers EFAULT where it knows the flag and EINVAL
         * where it does not; nothing is installed either way. A listener
         * made by notify_filter_install has the flag exactly where the
         * kernel knows it (and neither is so when a test forces the
         * feature absent); any other answer (EPERM once the sentry is
         * confined, ENOSYS under valgrind) counts as not known. */
        errno = 0;
        (void)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                      SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, NULL);
        kernel_wait_killable = errno == EFAULT;
}

int notify_engine_prepare(void)
{
        pthread_once(&kernel_sizes_once, ask_kernel_sizes);
        return -kernel_sizes_error;
}

int notify_engine_start(const struct notify_engine_config *cfg, int listener_fd, struct notify_engine **ret)
{
        _cleanup_close_ int lfd = listener_fd;
        int prepared = notify_engine_prepare();
        if (prepared < 0)
                return prepared;
        struct notify_engine *e = xcalloc(1, sizeof(*e));
        e->listener_fd = -1;
        e->hostproc_fd = -1;
        e->stop_efd = -1;
        e->sizes = kernel_sizes;

        e->hostproc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (e->hostproc_fd < 0) {
                int r = negative_errno();
                free(e);
                return r;
        }
        e->umask_cache = notify_umask_cache_new();

        for (size_t i = 0; i < cfg->n_table; i++) {
                const struct syscall_entry *t = &cfg->table[i];
                if (t->action != SC_EMULATE)
                        continue;
                int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, t->name);
                if (nr == __NR_SCMP_ERROR && t->nr > 0)
                        nr = t->nr;
                if (nr < 0 || nr >= NOTIFY_NR_MAX) {
                        close(e->hostproc_fd);
                        notify_umask_cache_free(e->umask_cache);
                        free(e);
                        return -ENOSYS;
                }
                e->dispatch[nr] = t;
        }

        /* Linux 6.6: the answering CPU wakes the waiting thread directly,
         * which cuts the round trip several-fold. Optional: older kernels
         * answer ENOTTY/EINVAL and we run without it. */
        __u64 flags = SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP;
        e->sync_wakeup = !notify_feature_absent("sync_wakeup") && ioctl(lfd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, flags) == 0;
        /* as notify_filter_install decides, for answer()'s two steps */
        e->wait_killable = kernel_wait_killable && !notify_feature_absent("wait_killable_recv");

        struct sigaction sa = {.sa_handler = wake_handler};
        sigemptyset(&sa.sa_mask);
        sigaction(WAKE_SIGNAL, &sa, NULL); /* no SA_RESTART: it must break the receive */

        e->userdata = cfg->userdata;
        memcpy(e->contexts, cfg->contexts, sizeof(e->contexts));
        e->thread_init = cfg->thread_init;
        e->max_workers = cfg->max_workers ? cfg->max_workers : 64;
        /* Test hook: a worker injecting an fd first holds the call until
         * another worker receives, then keeps its copy open for 200 ms, so
         * a test can show an execve waits for that copy. It only
         * delays; it changes no decision. */
        const char *stall = getenv("CORDON_TEST_STALL");
        e->stall_copies = stall && streq(stall, "fd-copy");
        e->execs_untrapped = cfg->execs_untrapped;
        e->threads = xcalloc(e->max_workers, sizeof(pthread_t));
        e->slots = xcalloc(e->max_workers, sizeof(struct block_slot));
        pthread_mutex_init(&e->lock, NULL);
        pthread_cond_init(&e->unpark, NULL);
        pthread_cond_init(&e->resume_cond, NULL);
        e->resume_tail = &e->resume_head;
        if (cfg->approver) {
                e->approver = *cfg->approver;
                e->has_approver = true;
        }
        e->listener_fd = TAKE_FD(lfd);
        e->stop_efd = eventfd(0, EFD_CLOEXEC); /* -1: wait_for_stop polls every ms instead */

        /* one receiver; the rest park, ready for a handoff */
        unsigned start = cfg->min_workers ? cfg->min_workers : 2;
        if (start > e->max_workers)
                start = e->max_workers;
        pthread_mutex_lock(&e->lock);
        e->handoffs = 1;
        for (unsigned i = 0; i < start; i++) {
                int r = spawn_worker_locked(e);
                if (r < 0 && i == 0) {
                        pthread_mutex_unlock(&e->lock);
                        notify_engine_stop(e);
                        return r;
                }
        }
        pthread_mutex_unlock(&e->lock);
        /* the watchdog starts with the first call (watchdog_start) */
        *ret = e;
        return 0;
}

struct notify_umask_cache *notify_engine_umask_cache(const struct notify_engine *e)
{
        return e->umask_cache;
}

bool notify_engine_sync_wakeup(const struct notify_engine *e)
{
        return e->sync_wakeup;
}

bool notify_engine_wait_killable(const struct notify_engine *e)
{
        return e->wait_killable;
}

uint64_t notify_engine_count(const struct notify_engine *e, int nr)
{
        if (nr < 0 || nr >= NOTIFY_NR_MAX)
                return 0;
        return atomic_load(&((struct notify_engine *)e)->counts[nr]);
}

void notify_engine_call_stats(const struct notify_engine *e, int nr, struct notify_call_stats *ret)
{
        struct notify_engine *m = (struct notify_engine *)e;
        *ret = (struct notify_call_stats){0};
        if (nr < 0 || nr >= NOTIFY_NR_MAX)
                return;
        ret->count = atomic_load(&m->counts[nr]);
        ret->total_ns = atomic_load(&m->nsecs[nr]);
        ret->max_ns = atomic_load(&m->max_nsecs[nr]);
}

void notify_engine_stop_begin(struct notify_engine *e)
{
        if (!e)
                return;
        /* Set under the lock: no worker spawns another once it is set, so
         * n_threads read afterwards is final. */
        pthread_mutex_lock(&e->lock);
        bool again = atomic_exchange(&e->stopping, true);
        unsigned n = e->n_threads;
        bool watchdog = e->have_watchdog; /* final too */
        pthread_cond_broadcast(&e->unpark);
        pthread_mutex_unlock(&e->lock);
        if (again)
                return;
        /* Every thread told at once, before any is waited for: a worker in
         * a receive (the signal), asleep for want of calls (the eventfd) or
         * parked (the broadcast), the watchdog in its tick (the eventfd) or
         * its sleep without a timeout (the word). Told and joined one after
         * another, the receiver's wake waited for the watchdog's exit. */
        if (e->stop_efd >= 0)
                (void)!write(e->stop_efd, &(uint64_t){1}, sizeof(uint64_t));
        if (watchdog) {
                atomic_fetch_add(&e->serve_seq, 2);
                futex_wake_all(&e->serve_seq);
                pthread_kill(e->watchdog, WAKE_SIGNAL);
        }
        for (unsigned i = 0; i < n; i++)
                pthread_kill(e->threads[i], WAKE_SIGNAL);
}

void notify_engine_stop(struct notify_engine *e)
{
        if (!e)
                return;
        notify_engine_stop_begin(e);
        pthread_mutex_lock(&e->lock);
        unsigned n = e->n_threads; /* final: stopping is set */
        bool watchdog = e->have_watchdog;
        pthread_mutex_unlock(&e->lock);
        if (watchdog)
                pthread_join(e->watchdog, NULL);
        for (unsigned i = 0; i < n; i++) {
                /* A worker may have been about to enter the receive when
                 * the first knock (notify_engine_stop_begin's) landed; keep
                 * knocking until it has gone. The join returns as soon as
                 * it has (a fixed sleep between knocks cost every run's
                 * teardown half a millisecond per worker). */
                for (int tries = 0; tries < 2000; tries++) {
                        if (tries > 0 && pthread_kill(e->threads[i], WAKE_SIGNAL) != 0)
                                break;
                        struct timespec until;
                        clock_gettime(CLOCK_MONOTONIC, &until);
                        until.tv_nsec += 500000;
                        if (until.tv_nsec >= 1000000000) {
                                until.tv_sec++;
                                until.tv_nsec -= 1000000000;
                        }
                        if (pthread_clockjoin_np(e->threads[i], NULL, CLOCK_MONOTONIC, &until) == 0)
                                goto joined;
                }
                pthread_detach(e->threads[i]);
joined:;
        }
        /* resume threads serve what is queued, then end (the approver has
         * decided every hold before the engine stops) */
        pthread_mutex_lock(&e->lock);
        unsigned nr = e->n_resume;
        pthread_cond_broadcast(&e->resume_cond);
        pthread_mutex_unlock(&e->lock);
        bool detached = false;
        for (unsigned i = 0; i < nr; i++) {
                /* bounded: a resumed call that blocks (a FIFO whose reader
                 * died with the sandbox) must not hold the end up */
                int tries = 0;
                while (pthread_tryjoin_np(e->resume_threads[i], NULL) != 0 && ++tries < 2000)
                        nanosleep(&(struct timespec){0, 500000}, NULL);
                if (tries >= 2000) {
                        pthread_detach(e->resume_threads[i]);
                        detached = true;
                }
        }
        if (detached)
                return; /* a detached thread still uses e: leave it allocated */
        for (struct notify_hold *h = e->resume_head, *next; h; h = next) {
                next = h->next;
                hold_free(h);
        }
        pthread_cond_destroy(&e->resume_cond);
        if (e->listener_fd >= 0)
                close(e->listener_fd);
        if (e->stop_efd >= 0)
                close(e->stop_efd);
        if (e->hostproc_fd >= 0)
                close(e->hostproc_fd);
        notify_umask_cache_free(e->umask_cache);
        pthread_mutex_destroy(&e->lock);
        pthread_cond_destroy(&e->unpark);
        free(e->threads);
        free(e->slots);
        free(e);
}
