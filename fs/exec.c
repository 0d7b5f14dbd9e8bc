/* execve(2) and execveat(2), checked against the view before the kernel runs
 * them, and the table of approved executions that the sentry's exec tracer
 * (sentry/exectrace.c) checks each PTRACE_EVENT_EXEC against.
 *
 * Why two halves: the kernel cannot be handed an executable the way it can
 * be handed an fd (there is no "exec this file" injection), so after the
 * checks below the call is answered with CONTINUE and the kernel walks the
 * path again from the child's memory. A second thread may have rewritten the
 * path by then, or swapped the file behind it. The check here decides and
 * records what may run; the tracer, at the exec event (after the point of no
 * return, before the new image runs an instruction), compares what the
 * process really runs (/proc/PID/exe) with what was recorded, and kills it
 * otherwise. */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>

#include "common/trace.h"
#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

#ifndef SYS_faccessat2
#define SYS_faccessat2 439
#endif

/* the kernel's limit: a #! chain deeper than 4 interpreters fails with
 * ELOOP (EXEC_HEADER, the header size looked at, is in fs-internal.h) */
#define EXEC_MAX_DEPTH 4

/* --- the approvals shared with the tracer ---
 *
 * One slot per calling thread (keyed by its host tid, which is what the
 * tracer reads back with PTRACE_GETEVENTMSG at the exec event). The table is
 * a MAP_SHARED mapping made before the tracer is forked, with a robust
 * process-shared mutex: a tracer killed while holding it must not wedge the
 * handlers. Bounded: when every slot is taken (slots are left behind by
 * execs the kernel then failed), the oldest is reused; an exec whose
 * approval was evicted that way is killed by the tracer (fails closed). */

struct exec_slot {
        pid_t tid; /* 0: free */
        uint64_t seq;
        struct fs_exec_approval a;
};

struct fs_exec_table {
        pthread_mutex_t lock;
        uint64_t seq;
        /* slots at and above high are free: the scans stop there, so they
         * touch the table's first page or so, not all 64 KiB of it (each
         * page of the shared mapping is a fault, in the sentry and again in
         * the tracer: 16 of them cost the first exec ~60 us) */
        size_t high;
        struct exec_slot slot[FS_EXEC_SLOTS];
};

int fs_exec_table_new(struct fs_exec_table **ret)
{
        struct fs_exec_table *t = mmap(NULL, sizeof(*t), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (t == MAP_FAILED)
                return negative_errno();
        pthread_mutexattr_t ma;
        pthread_mutexattr_init(&ma);
        pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
        pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
        int r = pthread_mutex_init(&t->lock, &ma);
        pthread_mutexattr_destroy(&ma);
        if (r != 0) {
                munmap(t, sizeof(*t));
                return -r;
        }
        *ret = t;
        return 0;
}

void fs_exec_table_free(struct fs_exec_table *t)
{
        if (t)
                munmap(t, sizeof(*t));
}

static void table_lock(struct fs_exec_table *t)
{
        /* the slots are written whole under the lock; a holder that died
         * left at worst one stale slot, which fails closed */
        if (pthread_mutex_lock(&t->lock) == EOWNERDEAD)
                pthread_mutex_consistent(&t->lock);
        if (t->high > FS_EXEC_SLOTS)
                t->high = FS_EXEC_SLOTS;
}

void fs_exec_record(struct fs_exec_table *t, pid_t tid, const struct fs_exec_approval *a)
{
        table_lock(t);
        struct exec_slot *use = NULL, *oldest = &t->slot[0];
        for (size_t i = 0; i < t->high; i++) {
                struct exec_slot *s = &t->slot[i];
                if (s->tid == tid) {
                        use = s;
                        break;
                }
                if (!use && s->tid == 0)
                        use = s;
                if (s->seq < oldest->seq)
                        oldest = s;
        }
        if (!use)
                use = t->high < FS_EXEC_SLOTS ? &t->slot[t->high++] : oldest;
        use->tid = tid;
        use->seq = ++t->seq;
        use->a = *a;
        pthread_mutex_unlock(&t->lock);
}

int fs_exec_take(struct fs_exec_table *t, pid_t tid, struct fs_exec_approval *ret)
{
        int r = -ENOENT;
        table_lock(t);
        for (size_t i = 0; i < t->high; i++) {
                struct exec_slot *s = &t->slot[i];
                if (s->tid != tid || tid == 0)
                        continue;
                *ret = s->a;
                memset(s, 0, sizeof(*s));
                r = 0;
                break;
        }
        while (t->high > 0 && t->slot[t->high - 1].tid == 0)
                t->high--;
        pthread_mutex_unlock(&t->lock);
        return r;
}

/* --- the handler --- */

/* Whether fd is on one of the view's mounts (as in open.c): a dirfd from
 * outside the view would start a walk that the view's root never bounds. */
static bool in_view(const struct fs_context *ctx, int fd)
{
        struct statx stx;
        if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0 || !(stx.stx_mask & STATX_MNT_ID))
                return false;
        uint64_t id = stx.stx_mnt_id;
        return bsearch(&id, ctx->mount_ids, ctx->n_mount_ids, sizeof(uint64_t), fs_cmp_u64) != NULL;
}

/* /proc/self, /proc/thread-self and /dev/fd name the caller; seen from a
 * worker they would name nothing (the sentry is not in the sandbox's pid
 * namespace). The minimal rewrite of open.c's rewrite_self, for the
 * spellings fexecve and scripts use. */
static int rewrite_self(struct notify_call *call, const char *path, char *out, size_t size, bool *ret_changed)
{
        static const struct {
                const char *prefix;
                const char *tail;
                bool thread;
        } rules[] = {
                {"/proc/self", "", false},
                {"/proc/thread-self", "", true},
                {"/dev/fd", "/fd", false},
        };
        *ret_changed = false;
        for (size_t i = 0; i < ELEMENTSOF(rules); i++) {
                size_t n = strlen(rules[i].prefix);
                if (strncmp(path, rules[i].prefix, n) != 0 || (path[n] != '\0' && path[n] != '/'))
                        continue;
                pid_t nspid, nstgid;
                int r = notify_ns_ids(call, &nspid, &nstgid);
                if (r < 0)
                        return r;
                int k = rules[i].thread ? snprintf(out, size, "/proc/%d/task/%d%s", (int)nstgid, (int)nspid, path + n)
                                        : snprintf(out, size, "/proc/%d%s%s", (int)nstgid, rules[i].tail, path + n);
                if (k < 0 || (size_t)k >= size)
                        return -ENAMETOOLONG;
                *ret_changed = true;
                return 0;
        }
        return 0;
}

/* Resolves path (relative to dirfd) in the view, as the child, to an O_PATH
 * fd of the file the kernel would execute: symlinks followed unless nofollow
 * (then a symlink is ELOOP, as execveat gives). Returns the fd or -errno. */
static int resolve(struct notify_call *call, int dirfd, const char *path, bool nofollow)
{
        char rewritten[PATH_MAX];
        bool changed;
        int r = rewrite_self(call, path, rewritten, sizeof(rewritten), &changed);
        if (r < 0)
                return r;
        const char *p = changed ? rewritten : path;

        _cleanup_close_ int dfd = -1;
        if (p[0] != '/') {
                dfd = notify_open_dirfd(call, dirfd);
                if (dfd < 0)
                        return dfd;
                if (!in_view(call->userdata, dfd))
                        return -EACCES;
        }
        r = fs_as_child_begin(call);
        if (r < 0)
                return r;
        int fd = fs_view_open_path(call, p[0] == '/' ? AT_FDCWD : dfd, p, nofollow ? O_NOFOLLOW : 0);
        fs_as_child_end();
        if (fd < 0)
                return fd;
        struct stat st;
        if (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode)) {
                close(fd);
                return -ELOOP;
        }
        return fd;
}

/* The kernel's conditions for executing fd (an O_PATH fd of the file),
 * checked as the child: a regular file, execute permission, not on a noexec
 * mount. Fills ret_hdr with up to EXEC_HEADER bytes of its start, *ret_len 0
 * when the child may execute but not read it (the tracer then checks the
 * image's machine itself, with its own access). 0 or -errno for the child. */
static int check_file(struct notify_call *call, int fd, struct stat *ret_st, unsigned char *ret_hdr, size_t *ret_len)
{
        if (fstat(fd, ret_st) < 0)
                return negative_errno();
        if (!S_ISREG(ret_st->st_mode))
                return -EACCES;
        struct statvfs vfs;
        if (fstatvfs(fd, &vfs) < 0)
                return negative_errno();
        if (vfs.f_flag & ST_NOEXEC)
                return -EACCES;

        int r = fs_as_child_begin(call);
        if (r < 0)
                return r;
        /* AT_EACCESS: checked with the fsuid/fsgid this worker took from
         * the child, not with the sentry's real ids. faccessat2 (5.8) is
         * older than the ADDFD cordon requires (5.9): no fallback needed. */
        if (syscall(SYS_faccessat2, fd, "", X_OK, AT_EMPTY_PATH | AT_EACCESS) < 0) {
                r = negative_errno();
                fs_as_child_end();
                return r;
        }
        /* read through our own fd's magic link, as the child: a file the
         * child may execute but not read stays unread */
        char link[64];
        snprintf(link, sizeof(link), "thread-self/fd/%d", fd);
        int rfd = openat(call->hostproc_fd, link, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        fs_as_child_end();
        *ret_len = 0;
        if (rfd >= 0) {
                ssize_t n = pread(rfd, ret_hdr, EXEC_HEADER, 0);
                close(rfd);
                if (n < 0)
                        return -EIO;
                *ret_len = (size_t)n;
        }
        return 0;
}

/* Follows the file and its #! chain as the kernel will; fills *ret with the
 * identity of the file and of the image that will run. 0 or -errno for the
 * child. Takes ownership of fd. */
static int check_chain(struct notify_call *call, int fd, struct fs_exec_approval *ret)
{
        _cleanup_close_ int cur = fd;
        struct fs_exec_approval a = {0};
        for (unsigned depth = 0;; depth++) {
                if (depth > EXEC_MAX_DEPTH)
                        return -ELOOP;
                struct stat st;
                unsigned char hdr[EXEC_HEADER];
                size_t len;
                int r = check_file(call, cur, &st, hdr, &len);
                if (r < 0)
                        return r;
                struct fs_exec_id id = {(uint64_t)st.st_dev, (uint64_t)st.st_ino};
                if (depth == 0)
                        a.file = id;
                a.run = id;
                a.depth = depth;
                if (len == 0 && st.st_size > 0) {
                        /* executable, not readable by the child: its kind is
                         * left to the tracer, which reads the running image */
                        a.unread = true;
                        break;
                }
                enum fs_exec_kind k = fs_exec_classify(hdr, len);
                if (k == FS_EXEC_NATIVE_ELF)
                        break;
                if (k != FS_EXEC_SCRIPT)
                        return -ENOEXEC; /* foreign or malformed ELF, binfmt_misc formats, empty or text files */
                char interp[PATH_MAX];
                r = fs_exec_script_interpreter(hdr, len, interp, sizeof(interp));
                if (r < 0)
                        return r;
                /* the kernel opens the interpreter relative to the caller's
                 * cwd, following symlinks */
                int next = resolve(call, AT_FDCWD, interp, false);
                if (next < 0)
                        return next;
                close(cur);
                cur = next;
        }
        *ret = a;
        return 0;
}

/* Has the exec tracer seize thread tid (sentry/exectrace.c), which must be
 * traced when its exec happens. One request at a time on the channel (a
 * sentry serves one sandbox: one lock for the process). 0 or -errno. */
static int tracer_seize(const struct fs_context *ctx, pid_t tid)
{
        static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
        int res = -EIO;
        pthread_mutex_lock(&lock);
        if (write(ctx->exec_channel, &tid, sizeof(tid)) == sizeof(tid) &&
            read(ctx->exec_channel, &res, sizeof(res)) != sizeof(res))
                res = -EIO;
        pthread_mutex_unlock(&lock);
        return res;
}

/* Emulates execve(2) and execveat(2): checks the file against the view and
 * records it for the exec tracer; the kernel then performs the exec. */
int fs_handle_exec(struct notify_call *call, struct notify_verdict *ret)
{
        trace_mark("sentry: execve trapped");
        const struct seccomp_data *d = &call->req->data;
        int dirfd = AT_FDCWD, flags = 0;
        uint64_t addr;
        if (d->nr == SYS_execve)
                addr = d->args[0];
        else if (d->nr == SYS_execveat) {
                dirfd = (int)d->args[0];
                addr = d->args[1];
                flags = (int)d->args[4];
        } else {
                ret->error = ENOSYS;
                return 0;
        }
        /* before anything can let the exec happen: a non-leader's exec
         * moves it to the leader's tid, which the umask cache keys on */
        notify_exec_starting(call);
        if (flags & ~(AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW)) {
                ret->error = EINVAL;
                return 0;
        }

        char path[PATH_MAX];
        ssize_t len = notify_read_string(call, addr, path, sizeof(path));
        if (len < 0) {
                ret->error = (int)-len;
                return 0;
        }
        int fd;
        if (len == 0) {
                if (!(flags & AT_EMPTY_PATH)) {
                        ret->error = ENOENT;
                        return 0;
                }
                /* fexecve: the file dirfd holds (a directory, the cwd for
                 * AT_FDCWD, fails the regular-file check below) */
                fd = notify_open_dirfd(call, dirfd);
        } else
                fd = resolve(call, dirfd, path, flags & AT_SYMLINK_NOFOLLOW);
        if (fd < 0) {
                ret->error = -fd;
                return 0;
        }

        const struct fs_context *ctx = call->userdata;
        /* where the file the kernel will run lies in the view, for an
         * "ask" rule: decided on our own fd of it, not on the string */
        char vp[PATH_MAX] = "";
        int vr = ctx->ask_exec ? fs_view_path(call->hostproc_fd, fd, vp, sizeof(vp)) : 0;

        struct fs_exec_approval a;
        int r = check_chain(call, fd, &a);
        if (r < 0) {
                ret->error = -r;
                return 0;
        }
        if (ctx->exec) {
                /* traced from here to its exec event, where the tracer lets
                 * go of it again: a process that does not exec never stops
                 * for the tracer, not at its forks, signals or exit */
                r = tracer_seize(ctx, (pid_t)call->req->pid);
                if (r < 0) {
                        /* untraced, its exec would go unverified: refused */
                        ret->error = r == -ESRCH ? ENOENT : EPERM;
                        return 0;
                }
        }
        /* the call still pending: the file checked and the tid seized were
         * the caller's */
        if (notify_id_valid(call) < 0) {
                ret->error = ENOENT;
                return 0;
        }
        if (ctx->ask_exec) {
                if (vr < 0) {
                        ret->error = EACCES; /* a file whose place cannot be named: fails closed */
                        return 0;
                }
                if (fs_rules_ask(ctx->rules, ctx->n_rules, "exec", vp)) {
                        /* held here, the thread does not exec until a person
                         * says yes; an approval serves the call again, and
                         * only the same file (by place, then by identity at
                         * the exec event: the tracer) may run */
                        r = fs_ask(call, "exec", vp, ret);
                        if (r <= 0)
                                return r;
                }
        }
        if (ctx->exec)
                fs_exec_record(ctx->exec, (pid_t)call->req->pid, &a);
        notify_wait_injected(call);
        /* CONTINUE, although the decision read child memory (the path): the
         * kernel cannot be handed a file to execute, so it walks the path
         * again and may find another file there (the buffer rewritten by a
         * second thread, the file renamed over). That is why the approval
         * was just recorded: the exec tracer stops the process at its exec
         * event, before the new image runs, and kills it unless
         * /proc/PID/exe is the image approved here for this thread (and a
         * native x86_64 ELF). Without the tracer (--allow-unverified-exec,
         * said plainly at start), the kernel's own checks (execute
         * permission, noexec mounts, the view's mount namespace) still hold
         * on whatever it finds; only the architecture check and the audit
         * binding to the checked file are lost. */
        ret->kind = VERDICT_CONTINUE;
        return 0;
}
