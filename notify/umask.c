/* The trapped thread's umask, cached so that a create does not cost a read
 * of /proc/TID/status every time (about 9 us of the ~20 us the sentry spends
 * on an emulated O_CREAT open, bench/); and, beside it, the identity of its
 * working directory (st_dev, st_ino, st_mode), so that a relative write open
 * left to the kernel does not cost a stat of /proc/TID/cwd every time (about
 * 3 us of the sentry's ~5, bench/README.md).
 *
 * The kernel keeps both the umask and the working directory in the fs_struct, which threads share unless
 * one was cloned without CLONE_FS or unshared it, and which processes share
 * across thread groups after clone(CLONE_FS). User space cannot name an
 * fs_struct, so the cache is keyed on what it can name: the thread (its tid).
 * An entry holds the value a /proc read gave for that thread and is used
 * again only while all of this holds:
 *
 *  - No umask(2) call has been seen since the read (for the working
 *    directory: no chdir(2) or fchdir(2)). Every such call is trapped
 *    (nothing is decided from it, answered CONTINUE) and drops the whole
 *    cache (a generation counter), whoever shares the caller's fs_struct.
 *    chdir and fchdir are the only calls that move a working directory
 *    elsewhere: setns and pivot_root are refused by the filter, and a copy
 *    of the mount namespace keeps it on the same superblock and inode. The
 *    filter traps fchdir only where native write opens are on (the rows of
 *    syscalls.c's fast mode), so only they may use the working directory's
 *    entry (notify.h).
 *  - The thread that read it is still alive: the entry keeps a pidfd of
 *    that very thread (PIDFD_THREAD), so a recycled tid is a miss, never the
 *    previous thread's umask.
 *  - No change is in flight. A trapped umask is applied by the kernel after
 *    the sentry answers, at some later moment: a read made by another thread
 *    in between sees the old value, and caching it would keep it after the
 *    change. So a umask call (and an execve from a thread that is not its
 *    group's leader: the kernel then gives that thread the leader's tid, and
 *    the two may not share an fs_struct) is "pending" until the sentry has
 *    proof it is over, and while anything is pending nothing is cached or
 *    used from the cache (every create reads /proc, as without a cache).
 *    Proof is one of: a later notification from the same thread (a thread
 *    makes one syscall at a time), the thread's exit (its pidfd polls
 *    readable), or /proc/TID/syscall showing it blocked in another syscall.
 *
 * execve otherwise keeps the umask, and fork/clone copy it into a new
 * thread, which starts with a miss. Credentials, setuid and namespaces do
 * not touch the fs_struct's umask (setns and new namespaces are refused by
 * the filter anyway).
 *
 * If a pending call cannot be tracked (a pidfd cannot be opened: out of fds,
 * or a thread that is not its group's leader before Linux 6.9; more than
 * PENDING_MAX at once), the cache switches itself off for the rest of the
 * run: slower, never wrong.
 *
 * One cache per engine (a sandbox's sentry has one); its pidfds are closed
 * when the engine stops. */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>

#include "common/util.h"
#include "notify/notify-internal.h"
#include "notify/notify.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#define PIDFD_THREAD_FLAG 0x80 /* PIDFD_THREAD (Linux 6.9) = O_EXCL */

#define SLOTS       64 /* threads cached at once: one pidfd each */
#define PENDING_MAX 16 /* umask/execve calls tracked at once */

struct slot {
        pid_t tid; /* 0: empty */
        int pidfd; /* that thread, so a recycled tid is told apart */
        uint64_t gen;
        int umask;    /* -1: not read */
        bool has_cwd; /* the working directory's identity below was read */
        dev_t cwd_dev;
        ino_t cwd_ino;
        mode_t cwd_mode;
};

struct pending {
        pid_t tid;
        int pidfd;
        int nr; /* the syscall it made: umask, execve or execveat */
};

struct notify_umask_cache {
        pthread_mutex_t lock;
        uint64_t gen;
        struct slot slots[SLOTS];
        struct pending pend[PENDING_MAX];
        atomic_uint n_pend; /* read without the lock by notify_umask_observe */
        bool off;           /* a change could not be tracked: no caching any more */
        uint64_t hits, misses;
        uint64_t cwd_hits, cwd_misses;
};

struct notify_umask_cache *notify_umask_cache_new(void)
{
        struct notify_umask_cache *c = xcalloc(1, sizeof(*c));
        pthread_mutex_init(&c->lock, NULL);
        c->gen = 1;
        for (size_t i = 0; i < SLOTS; i++)
                c->slots[i] = (struct slot){.pidfd = -1, .umask = -1};
        return c;
}

void notify_umask_cache_free(struct notify_umask_cache *c)
{
        if (!c)
                return;
        for (size_t i = 0; i < SLOTS; i++)
                if (c->slots[i].pidfd >= 0)
                        close(c->slots[i].pidfd);
        for (unsigned i = 0; i < atomic_load(&c->n_pend); i++)
                close(c->pend[i].pidfd);
        pthread_mutex_destroy(&c->lock);
        free(c);
}

/* A pidfd that polls readable once the thread tid has exited: a thread
 * pidfd (Linux 6.9); before that, a process pidfd, which only a group leader
 * has (readable once its whole group is gone, and the leader's tid is not
 * free before). -errno for a non-leader on an older kernel. */
static int thread_pidfd(pid_t tid)
{
        int fd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD_FLAG);
        if (fd < 0 && errno == EINVAL)
                fd = (int)syscall(SYS_pidfd_open, tid, 0);
        return fd < 0 ? negative_errno() : fd;
}

static struct notify_umask_cache *cache_of(const struct notify_call *call)
{
        return call->engine ? notify_engine_umask_cache(call->engine) : NULL;
}

static bool pidfd_exited(int pidfd)
{
        struct pollfd p = {pidfd, POLLIN, 0};
        int r = poll(&p, 1, 0);
        /* an error is no proof of life: treat it as gone (a miss) */
        return r != 0;
}

/* Whether /proc/TID/syscall shows the thread blocked in a syscall other
 * than nr: then the call it made as nr is over (the number shown is the
 * one the thread is inside; a thread woken by the sentry's answer but not
 * yet through the call shows "running" or nr). "running", nr, an error (no
 * ptrace access) or anything unparsable: no proof. */
static bool blocked_elsewhere(int hostproc_fd, pid_t tid, int nr)
{
        char path[64], buf[64];
        snprintf(path, sizeof(path), "%d/syscall", (int)tid);
        _cleanup_close_ int fd = notify_proc_open(hostproc_fd, path, O_RDONLY);
        if (fd < 0)
                return false;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return false;
        buf[n] = '\0';
        if (buf[0] < '0' || buf[0] > '9')
                return false; /* "running", or -1: not inside a syscall */
        char *end;
        long now = strtol(buf, &end, 10);
        return end != buf && (*end == ' ' || *end == '\n') && now != nr;
}

static void pending_drop_locked(struct notify_umask_cache *c, unsigned i)
{
        unsigned n = atomic_load_explicit(&c->n_pend, memory_order_relaxed);
        close(c->pend[i].pidfd);
        c->pend[i] = c->pend[n - 1];
        atomic_store_explicit(&c->n_pend, n - 1, memory_order_release);
}

/* Drops the pending calls that are provably over. */
static void pending_resolve_locked(struct notify_umask_cache *c, int hostproc_fd)
{
        for (unsigned i = 0; i < atomic_load_explicit(&c->n_pend, memory_order_relaxed);) {
                if (pidfd_exited(c->pend[i].pidfd) || blocked_elsewhere(hostproc_fd, c->pend[i].tid, c->pend[i].nr))
                        pending_drop_locked(c, i);
                else
                        i++;
        }
}

/* Records that the caller's umask (or, for a non-leader's execve, what its
 * tid names) may change once this call is answered. */
static void pending_add(const struct notify_call *call)
{
        struct notify_umask_cache *c = cache_of(call);
        if (!c)
                return;
        pid_t tid = (pid_t)call->req->pid;
        int pidfd = thread_pidfd(tid);
        /* the pidfd is the caller's only if the call still waits now */
        bool alive = notify_id_valid(call) == 0;
        pthread_mutex_lock(&c->lock);
        c->gen++;
        unsigned n = atomic_load_explicit(&c->n_pend, memory_order_relaxed);
        if (!alive) {
                if (pidfd >= 0)
                        close(pidfd); /* gone: its change never happens */
        } else if (pidfd < 0 || n == PENDING_MAX) {
                if (pidfd >= 0)
                        close(pidfd);
                c->off = true;
        } else {
                c->pend[n] = (struct pending){tid, pidfd, (int)call->req->data.nr};
                atomic_store_explicit(&c->n_pend, n + 1, memory_order_release);
        }
        pthread_mutex_unlock(&c->lock);
}

void notify_umask_changing(const struct notify_call *call)
{
        pending_add(call);
}

void notify_cwd_changing(const struct notify_call *call)
{
        pending_add(call);
}

void notify_exec_starting(const struct notify_call *call)
{
        /* A leader's execve keeps its tid and its fs_struct; only a
         * non-leader takes over the leader's tid. pidfd_open without
         * PIDFD_THREAD succeeds for leaders only. */
        int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)call->req->pid, 0);
        if (pidfd >= 0) {
                close(pidfd);
                if (notify_id_valid(call) == 0)
                        return;
        }
        pending_add(call);
}

void notify_umask_untrackable(const struct notify_call *call)
{
        struct notify_umask_cache *c = cache_of(call);
        if (!c)
                return;
        pthread_mutex_lock(&c->lock);
        c->gen++;
        c->off = true;
        pthread_mutex_unlock(&c->lock);
}

void notify_umask_observe(const struct notify_call *call)
{
        struct notify_umask_cache *c = cache_of(call);
        if (!c || atomic_load_explicit(&c->n_pend, memory_order_acquire) == 0)
                return; /* the normal run: one load per notification */
        pid_t tid = (pid_t)call->req->pid;
        pthread_mutex_lock(&c->lock);
        /* a thread makes one syscall at a time: its new call means the
         * pending one is done (or the tid was recycled: its owner is gone) */
        for (unsigned i = 0; i < atomic_load_explicit(&c->n_pend, memory_order_relaxed);)
                if (c->pend[i].tid == tid)
                        pending_drop_locked(c, i); /* all: a re-served exec adds its tid twice */
                else
                        i++;
        pthread_mutex_unlock(&c->lock);
}

/* The umask from /proc/TID/status. Its Umask line is the second (after
 * Name:, at most 15 bytes of comm, escaped to at most 30), so one short read
 * finds it; the whole file is read only if it did not. */
static int read_umask(const struct notify_call *call)
{
        char path[64], buf[256];
        snprintf(path, sizeof(path), "%u/status", call->req->pid);
        ssize_t n = notify_proc_read(call->hostproc_fd, path, buf, sizeof(buf));
        if (n < 0)
                return (int)n;
        /* at the start of a line: the thread's name (the Name: line, set by
         * the child) could contain "Umask:" */
        const char *p = strstr(buf, "\nUmask:");
        if (!p || !strchr(p + 1, '\n'))
                return notify_umask_uncached(call);
        return (int)(strtol(p + 7, NULL, 8) & 0777);
}

/* What a slot holds besides its thread: the umask, or the working
 * directory's identity. */
struct entry {
        int umask;
        dev_t cwd_dev;
        ino_t cwd_ino;
        mode_t cwd_mode;
};

static bool slot_has(const struct slot *s, bool cwd)
{
        return cwd ? s->has_cwd : s->umask >= 0;
}

/* Whether the caller's slot holds a trusted value of the kind asked for:
 * then *ret has it. Else *ret_gen is the generation a read about to start
 * must still find for its value to be kept (0: not to be kept). */
static bool lookup(struct notify_umask_cache *c, const struct notify_call *call, bool cwd, struct entry *ret,
                   uint64_t *ret_gen)
{
        pid_t tid = (pid_t)call->req->pid;
        struct slot *s = &c->slots[(unsigned)tid % SLOTS];
        pthread_mutex_lock(&c->lock);
        if (atomic_load_explicit(&c->n_pend, memory_order_relaxed))
                pending_resolve_locked(c, call->hostproc_fd);
        bool cacheable = !c->off && atomic_load_explicit(&c->n_pend, memory_order_relaxed) == 0;
        if (cacheable && s->tid == tid && s->gen == c->gen && slot_has(s, cwd) && !pidfd_exited(s->pidfd)) {
                *ret = (struct entry){s->umask, s->cwd_dev, s->cwd_ino, s->cwd_mode};
                if (cwd)
                        c->cwd_hits++;
                else
                        c->hits++;
                pthread_mutex_unlock(&c->lock);
                return true;
        }
        if (cwd)
                c->cwd_misses++;
        else
                c->misses++;
        *ret_gen = cacheable ? c->gen : 0;
        pthread_mutex_unlock(&c->lock);
        return false;
}

/* Keeps what a read found, if nothing changed while it ran (no umask,
 * chdir, fchdir or exec began since lookup gave g). pidfd is the caller's
 * thread, opened before the read; it is taken (kept or closed). */
static void fill(struct notify_umask_cache *c, const struct notify_call *call, uint64_t g, int pidfd, bool cwd,
                 const struct entry *e)
{
        pid_t tid = (pid_t)call->req->pid;
        struct slot *s = &c->slots[(unsigned)tid % SLOTS];
        pthread_mutex_lock(&c->lock);
        if (!c->off && c->gen == g && atomic_load_explicit(&c->n_pend, memory_order_relaxed) == 0) {
                /* the same thread's slot of this generation keeps the other
                 * value it holds (and its own pidfd); any other is replaced */
                if (!(s->tid == tid && s->gen == g && !pidfd_exited(s->pidfd))) {
                        if (s->pidfd >= 0)
                                close(s->pidfd);
                        *s = (struct slot){.tid = tid, .pidfd = pidfd, .gen = g, .umask = -1};
                        pidfd = -1;
                }
                if (cwd) {
                        s->has_cwd = true;
                        s->cwd_dev = e->cwd_dev;
                        s->cwd_ino = e->cwd_ino;
                        s->cwd_mode = e->cwd_mode;
                } else
                        s->umask = e->umask;
        }
        pthread_mutex_unlock(&c->lock);
        if (pidfd >= 0)
                close(pidfd);
}

int notify_umask(const struct notify_call *call)
{
        struct notify_umask_cache *c = cache_of(call);
        if (!c)
                return read_umask(call);
        struct entry e;
        uint64_t g;
        if (lookup(c, call, false, &e, &g))
                return e.umask;
        /* the pidfd first: if the call is still valid after the read, the
         * pidfd and the read are both of the thread that asked */
        int pidfd = g ? thread_pidfd((pid_t)call->req->pid) : -1;
        int um = read_umask(call);
        if (um < 0 || pidfd < 0 || notify_id_valid(call) < 0) {
                if (pidfd >= 0)
                        close(pidfd);
                return um;
        }
        e.umask = um;
        fill(c, call, g, pidfd, false, &e);
        return um;
}

int notify_stat_cwd(const struct notify_call *call, struct stat *ret)
{
        struct notify_umask_cache *c = cache_of(call);
        if (!c)
                return notify_stat_dirfd(call, AT_FDCWD, ret);
        struct entry e;
        uint64_t g;
        if (lookup(c, call, true, &e, &g)) {
                *ret = (struct stat){.st_dev = e.cwd_dev, .st_ino = e.cwd_ino, .st_mode = e.cwd_mode};
                return 0;
        }
        int pidfd = g ? thread_pidfd((pid_t)call->req->pid) : -1;
        struct stat st;
        int r = notify_stat_dirfd(call, AT_FDCWD, &st);
        if (r < 0 || pidfd < 0 || notify_id_valid(call) < 0) {
                if (pidfd >= 0)
                        close(pidfd);
                if (r == 0)
                        *ret = (struct stat){.st_dev = st.st_dev, .st_ino = st.st_ino, .st_mode = st.st_mode};
                return r;
        }
        e = (struct entry){.cwd_dev = st.st_dev, .cwd_ino = st.st_ino, .cwd_mode = st.st_mode};
        fill(c, call, g, pidfd, true, &e);
        *ret = (struct stat){.st_dev = st.st_dev, .st_ino = st.st_ino, .st_mode = st.st_mode};
        return 0;
}

void notify_umask_get_stats(const struct notify_engine *e, struct notify_umask_stats *ret)
{
        struct notify_umask_cache *c = notify_engine_umask_cache(e);
        pthread_mutex_lock(&c->lock);
        *ret = (struct notify_umask_stats){
                .hits = c->hits,
                .misses = c->misses,
                .cwd_hits = c->cwd_hits,
                .cwd_misses = c->cwd_misses,
                .pending = atomic_load_explicit(&c->n_pend, memory_order_relaxed),
                .off = c->off,
        };
        pthread_mutex_unlock(&c->lock);
}
