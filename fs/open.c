/* The open family, emulated against the view: the sentry opens the file as
 * the child (see worker.c) and injects the fd with ADDFD|SEND. */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

struct open_args {
        int dirfd;
        uint64_t path_addr;
        struct open_how how;
        bool is_openat2;
};

/* Reads openat2's struct open_how the way the kernel does
 * (copy_struct_from_user): too small is EINVAL, larger than ours is fine
 * only if the extra bytes are zero, else E2BIG. */
static int read_open_how(struct notify_call *call, uint64_t addr, uint64_t size, struct open_how *ret)
{
        if (size < OPEN_HOW_SIZE_VER0)
                return -EINVAL;
        if (size > OPEN_HOW_SIZE_MAX)
                return -E2BIG;
        char buf[OPEN_HOW_SIZE_MAX];
        int r = notify_read_mem(call, addr, buf, (size_t)size);
        if (r < 0)
                return r;
        return fs_open_how_from_bytes(buf, (size_t)size, ret);
}

static int decode(struct notify_call *call, struct open_args *a)
{
        const struct seccomp_data *d = &call->req->data;
        memset(a, 0, sizeof(*a));
        a->dirfd = AT_FDCWD;
        switch (d->nr) {
        case SYS_open:
                a->path_addr = d->args[0];
                a->how.flags = (uint32_t)d->args[1];
                a->how.mode = (uint32_t)d->args[2];
                break;
        case SYS_creat:
                a->path_addr = d->args[0];
                a->how.flags = O_CREAT | O_WRONLY | O_TRUNC;
                a->how.mode = (uint32_t)d->args[1];
                break;
        case SYS_openat:
                a->dirfd = (int)d->args[0];
                a->path_addr = d->args[1];
                a->how.flags = (uint32_t)d->args[2];
                a->how.mode = (uint32_t)d->args[3];
                break;
        case SYS_openat2:
                a->dirfd = (int)d->args[0];
                a->path_addr = d->args[1];
                a->is_openat2 = true;
                return read_open_how(call, d->args[2], d->args[3], &a->how);
        default:
                return -ENOSYS;
        }
        /* open(2) and openat(2) ignore mode unless creating */
        if (!(a->how.flags & (O_CREAT | __O_TMPFILE)))
                a->how.mode = 0;
        return 0;
}

/* The caller's controlling terminal as a path in the view, for /dev/tty. */
static int controlling_tty(struct notify_call *call, char *out, size_t size)
{
        char path[64], stat[1024];
        snprintf(path, sizeof(path), "%u/stat", call->req->pid);
        _cleanup_close_ int fd = notify_proc_open(call->hostproc_fd, path, O_RDONLY);
        if (fd < 0)
                return negative_errno();
        ssize_t n = read_full(fd, stat, sizeof(stat) - 1);
        if (n <= 0)
                return -EIO;
        stat[n] = '\0';
        const char *p = strrchr(stat, ')'); /* comm may contain anything but the last ')' */
        if (!p)
                return -EIO;
        int ppid, pgrp, session, tty_nr;
        char state;
        if (sscanf(p + 1, " %c %d %d %d %d", &state, &ppid, &pgrp, &session, &tty_nr) != 5)
                return -EIO;
        unsigned maj = major((dev_t)tty_nr), min = minor((dev_t)tty_nr);
        if (tty_nr == 0 || maj < 136 || maj > 143)
                return -ENXIO; /* no controlling terminal (or not one of the view's ptys) */
        snprintf(out, size, "/dev/pts/%u", (maj - 136) * 256 + min);
        return 0;
}

static int do_open(int dirfd, const char *path, const struct open_args *a)
{
        /* O_CLOEXEC for the sentry's copy; the child's flag is given to ADDFD.
         * O_NOCTTY: the sentry must never acquire the child's terminal. */
        if (a->is_openat2) {
                struct open_how how = a->how;
                how.flags |= O_CLOEXEC | O_NOCTTY;
                long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
                return fd < 0 ? negative_errno() : (int)fd;
        }
        int fd = openat(dirfd, path, (int)(a->how.flags | O_CLOEXEC | O_NOCTTY), (mode_t)a->how.mode);
        return fd < 0 ? negative_errno() : fd;
}

/* The kernel's open flags (VALID_OPEN_FLAGS), which open and openat keep
 * (ignoring the rest) and openat2 insists on */
#define OPEN_FLAGS_KNOWN                                                                                           \
        (O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_DSYNC | FASYNC | O_DIRECT | \
         O_LARGEFILE | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC | O_PATH | __O_TMPFILE | O_SYNC)

/* The child's open, performed by the worker in the view without following
 * a magic link (/proc/PID/cwd, /root, /fd/N, /exe, reached through a
 * symlink or a relative walk): the kernel lets the sentry's threads through
 * such a link by a rule the child does not have (their euid owns the
 * sandbox's user namespace, which grants every capability in it, the
 * effective set notwithstanding), so a link into a process the child may
 * not trace would lead somewhere the child's own open could not go.
 * -ELOOP for those (and for real loops); the caller redoes them in the
 * proc agent, which has the child's standing. open and openat keep their
 * semantics through openat2: unknown flag bits dropped, O_LARGEFILE
 * forced, the mode masked, as the kernel does for them. */
static int do_open_view(int dirfd, const char *path, const struct open_args *a)
{
        if (notify_feature_absent("openat2"))
                return do_open(dirfd, path, a); /* (a test's forced fallback: links followed) */
        struct open_how how = a->how;
        if (!a->is_openat2) {
                how.flags = (how.flags & OPEN_FLAGS_KNOWN) | O_LARGEFILE;
                how.mode &= 07777;
                how.resolve = 0;
        }
        how.flags |= O_CLOEXEC | O_NOCTTY;
        how.resolve |= RESOLVE_NO_MAGICLINKS;
        long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
        return fd < 0 ? negative_errno() : (int)fd;
}

int fs_cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/* fstat of a freshly opened fd (a negative *fd, an open error, is left as
 * it is); on failure the fd is closed and -errno returned. */
static int stat_or_close(int *fd, struct stat *st)
{
        if (*fd < 0 || fstat(*fd, st) == 0)
                return 0;
        int r = negative_errno();
        close(*fd);
        *fd = -1;
        return r;
}

static int open_in_agent(struct notify_call *call, int at, const char *path, const struct open_args *a, int um)
{
        return fs_agent_open(call->userdata, call, at == AT_FDCWD ? -1 : at, path, (int)a->how.flags,
                             (mode_t)a->how.mode, a->is_openat2 ? a->how.resolve : 0, (mode_t)um);
}

/* The caller's own fd that path names, as /proc/TGID/fd/N or
 * /proc/TGID/task/TID/fd/N with TGID the caller's (how /dev/stdin,
 * /dev/stdout, /dev/stderr and /dev/fd/N are rewritten): N, or -1. */
static int own_fd_link(struct notify_call *call, const char *path)
{
        unsigned long pid, tid, n;
        int end = 0;
        if (sscanf(path, "/proc/%lu/fd/%lu%n", &pid, &n, &end) != 2 || path[end] != '\0') {
                end = 0;
                if (sscanf(path, "/proc/%lu/task/%lu/fd/%lu%n", &pid, &tid, &n, &end) != 3 || path[end] != '\0')
                        return -1;
        }
        pid_t nspid, nstgid;
        if (n > INT_MAX || notify_ns_ids(call, &nspid, &nstgid) < 0 || pid != (unsigned long)nstgid)
                return -1;
        return (int)n;
}

/* own_fd_link for path as opened from dfd (-1 for an absolute path):
 * a relative spelling from a directory of the view's procfs (`cd
 * /dev/fd; echo x > 1`) is joined to that directory's path. */
static int own_fd_at(struct notify_call *call, int dfd, const char *path)
{
        const struct fs_context *ctx = call->userdata;
        if (path[0] == '/')
                return own_fd_link(call, path);
        struct stat st;
        char dir[PATH_MAX], joined[PATH_MAX];
        if (dfd < 0 || fstat(dfd, &st) < 0 || st.st_dev != ctx->proc_dev ||
            fs_view_path(call->hostproc_fd, dfd, dir, sizeof(dir)) < 0 ||
            (size_t)snprintf(joined, sizeof(joined), "%s/%s", dir, path) >= sizeof(joined))
                return -1;
        return own_fd_link(call, joined);
}

/* open() as the kernel would do it for the caller, where it may wait: a
 * FIFO's open waits for its other end, which only the sandbox's own
 * processes can bring. Natively a killed opener's wait just ends; here the
 * worker would wait on for nobody, and open the FIFO once a peer comes (a
 * reader would pair with a writer killed long before, and read an
 * end-of-file at once). So the wait is broken (EINTR) once the caller is
 * gone (notify_block_begin), and a stray interruption is tried again.
 * A signal the caller would take ends the wait as natively
 * (notify_block_interrupted).
 * Every open but O_PATH's goes through it, O_NONBLOCK's too: the begin
 * first has a killed opener's wait left, which a non-blocking peer would
 * pair with as well. */
static int open_may_block(struct notify_call *call, int dirfd, const char *path, const struct open_args *a,
                          int (*op)(int, const char *, const struct open_args *))
{
        if (a->how.flags & O_PATH)
                return op(dirfd, path, a);
        notify_block_begin(call);
        int fd;
        while ((fd = op(dirfd, path, a)) == -EINTR && notify_id_valid(call) == 0) {
                if (notify_block_interrupted(call)) {
                        /* the caller has a signal to take: its handler
                         * runs, then the open is restarted or fails with
                         * EINTR, as the kernel's own wait would end */
                        fd = -NOTIFY_ERESTARTSYS;
                        break;
                }
        }
        notify_block_end(call);
        return fd;
}

/* The caller's reopen of its own fd n through /proc (open of /dev/stdout
 * and friends), refused where the caller's user namespace does not map
 * the file's owner: a pipe or file that cordon's caller made on the host
 * (`cordon run ... 2>log`), whose reopen natively succeeds. Redone by the
 * sentry on its duplicate of that very open file, only where it grants
 * nothing the caller does not already hold: a pipe, a regular file or a
 * terminal (no other device: an open can have effects of its own, a new
 * pty from ptmx), not on procfs, open with every access asked for (write
 * for O_TRUNC too, which ftruncate on the held fd could do as well), not
 * O_PATH. Offset and status flags are the new open's own, as natively.
 * Returns the new fd, or err (the first open's error) where this does not
 * apply. */
static int reopen_own_fd(struct notify_call *call, int n, const struct open_args *a, int err)
{
        const struct fs_context *ctx = call->userdata;
        int want = (int)(a->how.flags & O_ACCMODE);
        if (want == O_ACCMODE || (a->how.flags & (O_DIRECTORY | O_PATH)) || (a->how.flags & __O_TMPFILE) == __O_TMPFILE)
                return err;
        if ((a->how.flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
                return -EEXIST;
        _cleanup_close_ int held = notify_dup_child_fd(call, n);
        struct stat st;
        if (held < 0 || fstat(held, &st) < 0 || st.st_dev == ctx->proc_dev)
                return err;
        bool tty = S_ISCHR(st.st_mode) && major(st.st_rdev) != 5 && isatty(held);
        if (!S_ISFIFO(st.st_mode) && !S_ISREG(st.st_mode) && !tty)
                return err;
        int hf = fcntl(held, F_GETFL);
        if (hf < 0 || (hf & O_PATH))
                return err;
        bool held_r = (hf & O_ACCMODE) == O_RDONLY || (hf & O_ACCMODE) == O_RDWR;
        bool held_w = (hf & O_ACCMODE) == O_WRONLY || (hf & O_ACCMODE) == O_RDWR;
        bool want_r = want == O_RDONLY || want == O_RDWR;
        bool want_w = want == O_WRONLY || want == O_RDWR || (a->how.flags & O_TRUNC);
        if ((want_r && !held_r) || (want_w && !held_w))
                return err;
        if (notify_id_valid(call) < 0)
                return -ENOENT;
        int fd = fs_reopen_held(call->hostproc_fd, held, (int)a->how.flags);
        return fd < 0 ? err : fd;
}

/* Whether fd, a procfs file opened for writing, may be: any but a "mem"
 * file of another process (/proc/PID/mem or /proc/PID/task/TID/mem). Its
 * own memory a process may write through procfs (JITs and debuggers of
 * themselves do). An unknown location fails closed. */
static bool proc_mem_writable(struct notify_call *call, int fd)
{
        char vp[PATH_MAX];
        if (fs_view_path(call->hostproc_fd, fd, vp, sizeof(vp)) < 0)
                return false;
        unsigned long pid, tid;
        int end = 0;
        if (sscanf(vp, "/proc/%lu/mem%n", &pid, &end) != 1 || vp[end] != '\0') {
                end = 0;
                if (sscanf(vp, "/proc/%lu/task/%lu/mem%n", &pid, &tid, &end) != 2 || vp[end] != '\0')
                        return true; /* not a mem file */
        }
        pid_t nspid, nstgid;
        if (notify_ns_ids(call, &nspid, &nstgid) < 0)
                return false;
        return pid == (unsigned long)nstgid;
}

/* An open that may change a file (write access, O_CREAT, O_TRUNC,
 * O_TMPFILE) when the policy has write "ask" rules: decided on where the
 * pinned directory and name lead, and performed on exactly that: the
 * existing object is reopened through our own O_PATH fd of it (never
 * walked again by name), a new file is created in the pinned directory
 * without following a symlink there. Returns 1 with *ret_fd (the open's
 * result, an fd or -errno), 0 when the usual open applies (procfs,
 * /dev/tty: never beneath an ask rule's reach), 2 when *ret is set (held
 * for a person, or refused), or -errno when the sentry failed. */
static int open_decided(struct notify_call *call, const struct open_args *a, const struct fs_target *t, bool setid,
                        struct notify_verdict *ret, int *ret_fd)
{
        const struct fs_context *ctx = call->userdata;
        bool nofollow = (a->how.flags & O_NOFOLLOW) || (a->is_openat2 && (a->how.resolve & RESOLVE_NO_SYMLINKS));
        int r = fs_as_child_begin(call);
        if (r < 0)
                return r;
        _cleanup_close_ int obj = fs_view_open_path(call, t->dirfd, t->name, nofollow ? O_NOFOLLOW : 0);
        int oerr = obj < 0 ? -obj : 0;
        struct stat st;
        bool dangling = false;
        if (obj < 0 && oerr == ENOENT && !nofollow)
                dangling = fstatat(t->dirfd, t->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
        fs_as_child_end();

        char vp[PATH_MAX];
        if (obj >= 0) {
                if (fstat(obj, &st) < 0)
                        return negative_errno();
                if (S_ISLNK(st.st_mode) || st.st_dev == ctx->proc_dev ||
                    (S_ISCHR(st.st_mode) && st.st_rdev == makedev(5, 0)))
                        return 0; /* ELOOP, procfs and the terminal: the usual open */
                if ((a->how.flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)) {
                        ret->error = EEXIST;
                        return 2;
                }
                /* O_TMPFILE makes its file in the directory obj */
                if (setid && (a->how.flags & __O_TMPFILE) == __O_TMPFILE && !fs_on_private_layer(ctx, obj, NULL)) {
                        ret->error = EPERM;
                        return 2;
                }
                r = fs_view_path(call->hostproc_fd, obj, vp, sizeof(vp));
        } else {
                if (oerr != ENOENT || !(a->how.flags & O_CREAT))
                        return 0; /* fails as the usual open fails */
                if (dangling) {
                        /* O_CREAT through a dangling symlink creates wherever it
                         * points, which the pinned name does not say: with ask
                         * rules in force (or a setuid or setgid mode), refused
                         * rather than guessed */
                        ret->error = setid ? EPERM : EACCES;
                        return 2;
                }
                if (setid && !fs_on_private_layer(ctx, t->dirfd, NULL)) {
                        ret->error = EPERM;
                        return 2;
                }
                r = fs_target_view_path(call, t, vp, sizeof(vp));
        }
        if (r < 0) {
                ret->error = r == -ENOENT ? EACCES : -r;
                return 2;
        }
        if (fs_rules_ask(ctx->rules, ctx->n_rules, "write", vp)) {
                r = fs_ask(call, "write", vp, ret);
                if (r <= 0)
                        return r < 0 ? r : 2;
        }

        struct open_args pinned = *a;
        int at;
        char link[64];
        const char *name;
        if (obj >= 0) {
                /* the object that was decided on, reopened; O_CREAT and
                 * O_EXCL have nothing left to do (it exists) */
                snprintf(link, sizeof(link), "thread-self/fd/%d", obj);
                at = call->hostproc_fd;
                name = link;
                pinned.how.flags &= ~(uint64_t)(O_CREAT | O_EXCL | O_NOFOLLOW);
                pinned.how.resolve = 0;
        } else {
                /* a new name in the pinned directory: a symlink put there
                 * since makes it fail (ELOOP/EEXIST), never lead elsewhere */
                at = t->dirfd;
                name = t->name;
                pinned.how.flags |= O_NOFOLLOW;
                pinned.how.resolve &= ~(uint64_t)RESOLVE_IN_ROOT;
        }
        if ((r = fs_as_child_begin(call)) < 0)
                return r;
        *ret_fd = open_may_block(call, at, name, &pinned, do_open);
        fs_as_child_end();
        return 1;
}

/* Whether path has an empty, "." or ".." component (a spelling whose
 * destination the prefixes below cannot tell). */
static bool path_has_dots(const char *path)
{
        for (const char *c = path; *c;) {
                while (*c == '/')
                        c++;
                const char *e = strchrnul(c, '/');
                if ((e - c == 1 && c[0] == '.') || (e - c == 2 && c[0] == '.' && c[1] == '.'))
                        return true;
                if (e[0] == '/' && e[1] == '/')
                        return true;
                c = e;
        }
        return false;
}

/* Whether a write open the fast-mode filter trapped may be left to the
 * kernel (CONTINUE), with no fd injected: the round trip then costs a
 * notification and no ADDFD (whose wakeup of the caller is never a same-CPU
 * one, and cost git's file writes 40-58 us each on the reference host).
 *
 * What the emulated open decides for a write open in this mode (no hidden
 * rule, no write ask rule, so neither applies) is: /proc files opened by the
 * proc agent, another process's /proc/PID/mem refused, the view's /dev/fd
 * and /dev/std* links served through the agent, /dev/tty as the caller's,
 * and otherwise the mount view and the child's credentials. The kernel's own
 * open gives the last two the same. For the rest, only names that cannot
 * reach /proc, or a node Landlock does not grant, are left to it: an
 * absolute path beneath neither /proc nor /etc/mtab (the distributions'
 * link to it), and under /dev only the nodes Landlock grants, with no
 * ".", ".." or empty component; or a relative one, so spelled and not
 * so beginning, from a directory on neither procfs nor the view's /dev.
 * A name directly in a template root stays emulated too: the mount view
 * lets it be written there, Landlock does not (fs_context.root_writable).
 *
 * CONTINUE lets the kernel read the path again, and another thread may have
 * changed it by then: safe because every place it can lead to is bounded by
 * Landlock's write floor (fs_context.native_writes: writes, creates and
 * truncates only in the writable places, writable device nodes and /dev/pts,
 * none of them /proc or beneath it), which the emulated open's own checks
 * equal or exceed there. A changed path, or a symlink of the sandbox's own
 * into /proc, gets Landlock's EACCES, never another process's memory. The
 * flags are registers the kernel uses as read. openat2 (its flags are in
 * memory), O_TMPFILE and a setuid or setgid create stay emulated. */
static bool open_native_write(struct notify_call *call, const struct open_args *a, const char *path)
{
        const struct fs_context *ctx = call->userdata;
        if (!ctx->native_writes || a->is_openat2 || (a->how.flags & __O_TMPFILE) == __O_TMPFILE ||
            ((a->how.flags & O_CREAT) && (a->how.mode & (S_ISUID | S_ISGID))) || path_has_dots(path))
                return false;
        const char *rooted = path[0] == '/' ? path + 1 : path; /* as from the root, for a relative one too */
        if (path_beneath(rooted, "proc") || path_beneath(rooted, "etc/mtab"))
                return false;
        /* under /dev only the nodes Landlock grants writing: the rest are the
         * view's links into /proc or nodes the view lets anyone write
         * (random, urandom, an OCI /dev/console), which Landlock would
         * refuse (a relative spelling stays emulated) */
        if (path_beneath(rooted, "dev") && (path[0] != '/' || !fs_landlock_dev_writable(path)))
                return false;
        /* one name, directly in the directory it starts from */
        const char *slash = strchrnul(rooted, '/');
        bool one_name = slash[strspn(slash, "/")] == '\0';
        if (path[0] == '/')
                return !(ctx->root_writable && one_name);
        /* the working directory's identity is cached per thread (chdir
         * and fchdir are trapped in this mode to drop it, notify/umask.c);
         * another dirfd is stat()ed each time */
        struct stat st;
        int r = a->dirfd == AT_FDCWD ? notify_stat_cwd(call, &st) : notify_stat_dirfd(call, a->dirfd, &st);
        if (r < 0 || !S_ISDIR(st.st_mode))
                return false;
        if (ctx->root_writable && one_name && st.st_dev == ctx->root_dev && st.st_ino == ctx->root_ino)
                return false;
        return st.st_dev != ctx->proc_dev && st.st_dev != ctx->dev_dev;
}

/* Whether path, relative, names one of the view's /dev links to the
 * caller's fds (fd/N, stdin, stdout, stderr) from the view's /dev itself
 * (`cd /dev; echo x > fd/3`): the worker would follow them to its own
 * /proc/self, which the sandbox's procfs does not show, so the open is
 * rewritten as the absolute spelling, which names the same place. */
static bool dev_relative(struct notify_call *call, int dirfd, const char *path)
{
        const struct fs_context *ctx = call->userdata;
        if (path[0] == '/' || (strncmp(path, "fd", 2) != 0 && strncmp(path, "std", 3) != 0))
                return false;
        struct stat st;
        if (notify_stat_dirfd(call, dirfd, &st) < 0 || st.st_dev != ctx->dev_dev || !S_ISDIR(st.st_mode))
                return false;
        _cleanup_close_ int dfd = notify_open_dirfd(call, dirfd);
        char vp[PATH_MAX];
        return dfd >= 0 && fs_view_path(call->hostproc_fd, dfd, vp, sizeof(vp)) == 0 && streq(vp, "/dev");
}

/* Emulates open(2), creat(2), openat(2) and openat2(2) against the view. */
int fs_handle_open(struct notify_call *call, struct notify_verdict *ret)
{
        /* a kernel without openat2 answers ENOSYS before reading anything;
         * so does the view when a test forces openat2 absent */
        if (call->req->data.nr == SYS_openat2 && notify_feature_absent("openat2")) {
                ret->error = ENOSYS;
                return 0;
        }
        struct open_args a;
        int r = decode(call, &a);
        if (r < 0) {
                ret->error = -r;
                return 0;
        }

        if (a.how.flags & O_PATH) {
                if (a.is_openat2) {
                        /* openat2's flags live in the child's memory: letting the
                         * kernel re-read them is not allowed, and the kernel
                         * cannot inject an O_PATH file (ADDFD's fget refuses
                         * FMODE_PATH). ENOSYS sends callers to openat, below. */
                        ret->error = ENOSYS;
                        return 0;
                }
                /* CONTINUE is safe here: the decision reads only registers (the
                 * flags of open/openat), no child memory. An O_PATH fd grants
                 * no data access; the kernel walks the path in the child's
                 * mount namespace with the child's credentials, so the view
                 * bounds it exactly as it bounds our own open; and anything
                 * that reads or writes through it (openat relative to it, a
                 * /proc/self/fd reopen) is trapped and emulated again. The
                 * kernel cannot inject O_PATH files, so this is the only way
                 * to serve them. */
                ret->kind = VERDICT_CONTINUE;
                return 0;
        }

        char path[PATH_MAX];
        ssize_t len = notify_read_string(call, a.path_addr, path, sizeof(path));
        if (len < 0) {
                ret->error = (int)-len;
                return 0;
        }
        if (len == 0) {
                ret->error = ENOENT;
                return 0;
        }
        if (open_native_write(call, &a, path)) {
                ret->kind = VERDICT_CONTINUE;
                return 0;
        }

        char rewritten[PATH_MAX];
        bool changed;
        if (dev_relative(call, a.dirfd, path)) {
                /* spelled as from /dev, which it is */
                char abs[PATH_MAX];
                if ((size_t)snprintf(abs, sizeof(abs), "/dev/%s", path) >= sizeof(abs)) {
                        ret->error = ENAMETOOLONG;
                        return 0;
                }
                memcpy(path, abs, sizeof(path));
        }
        r = fs_rewrite_self(call, path, !(a.how.flags & O_NOFOLLOW), rewritten, sizeof(rewritten), &changed);
        if (r < 0) {
                ret->error = -r;
                return 0;
        }
        const char *p = changed ? rewritten : path;

        _cleanup_close_ int dfd = -1;
        if (p[0] != '/') {
                dfd = notify_open_dirfd(call, a.dirfd);
                if (dfd < 0) {
                        ret->error = -dfd;
                        return 0;
                }
                if (!fs_in_view(call->userdata, dfd)) {
                        ret->error = EACCES;
                        return 0;
                }
        }

        /* the caller's umask matters only when a file may be created: it
         * costs a read of /proc/TID/status, so only then */
        int um = 022;
        if (a.how.flags & (O_CREAT | __O_TMPFILE)) {
                um = notify_umask(call);
                if (um < 0) {
                        ret->error = ESRCH;
                        return 0;
                }
                fs_set_umask((mode_t)um);
        }

        /* Everything we decide on is now our own copy; make sure the pid we
         * read /proc for is still the thread that asked. */
        if (notify_id_valid(call) < 0) {
                ret->error = ENOENT;
                return 0;
        }

        const struct fs_context *ctx = call->userdata;
        bool proc_path = startswith(p, "/proc/") || streq(p, "/proc");
        /* A create with S_ISUID or S_ISGID is decided on where the file
         * would be made, and made there (open_decided): only on the
         * sandbox's own filesystems (fs/binds.c). Where open_decided leaves
         * the open to the usual path (procfs, a magic link on the way), the
         * bits are dropped from the mode, so that no such file can be made
         * anywhere else. The filter traps every such create. */
        bool setid = (a.how.flags & (O_CREAT | __O_TMPFILE)) && (a.how.mode & (S_ISUID | S_ISGID));
        /* glibc's __O_TMPFILE carries O_DIRECTORY: all of its bits, not any */
        bool writes = (a.how.flags & O_ACCMODE) != O_RDONLY || (a.how.flags & (O_CREAT | O_TRUNC)) ||
                      (a.how.flags & __O_TMPFILE) == __O_TMPFILE;
        int fd = -1;
        bool decided = false;
        if (ctx->n_rules || setid) {
                /* a hidden path fails as if absent: its directory is pinned
                 * and checked with the name (where O_CREAT would create),
                 * and the opened file's own location is checked below */
                _cleanup_(fs_target_done) struct fs_target t = FS_TARGET_INIT;
                snprintf(t.path, sizeof(t.path), "%s", p);
                r = fs_resolve_at(call, p[0] == '/' ? -1 : dfd, 0, &t);
                if (r >= 0 && (a.how.flags & O_CREAT) && !(a.how.flags & O_NOFOLLOW))
                        r = fs_check_symlink_chain(call, &t);
                if (r < 0) {
                        ret->error = -r;
                        return 0;
                }
                if ((ctx->ask_write && writes && !proc_path) || (setid && !proc_path)) {
                        r = open_decided(call, &a, &t, setid, ret, &fd);
                        if (r < 0)
                                return r;
                        if (r == 2)
                                return 0;
                        decided = r == 1;
                }
        }
        if (setid && !decided)
                a.how.mode &= ~(uint64_t)(S_ISUID | S_ISGID);
        int at = p[0] == '/' ? AT_FDCWD : dfd;
        /* /proc files render ids for their opener: they are opened as the
         * sandbox's own user namespace, by the proc agent. A path spelled
         * under /proc goes there at once; any other that lands on procfs
         * (through a symlink or a relative walk) is redone there. */
        if (decided)
                ; /* opened above, on what was decided */
        else if (proc_path) {
                fd = open_in_agent(call, at, p, &a, um);
        } else {
                r = fs_as_child_begin(call);
                if (r < 0)
                        return r;
                fd = open_may_block(call, at, p, &a, do_open_view);
                fs_as_child_end();
                if (fd == -ELOOP)
                        /* a magic link on the way (or a loop, which fails
                         * there the same): opened with the child's standing */
                        fd = open_in_agent(call, at, p, &a, um);
                else if ((fd == -EACCES || fd == -EPERM) && fs_caller_overrides(call))
                        /* The worker acts with no capability. A caller that
                         * holds CAP_DAC_OVERRIDE or CAP_FOWNER in its
                         * namespace (the sandbox's root) has the open redone
                         * by the agent, which stands in that namespace with
                         * the caller's ids and capabilities: the kernel then
                         * applies them exactly as to the caller's own call,
                         * to files whose owner the namespace maps and to no
                         * other (never the host's). */
                        fd = open_in_agent(call, at, p, &a, um);
        }
        int n;
        if (!decided && fd == -EACCES && (n = own_fd_at(call, p[0] == '/' ? -1 : dfd, p)) >= 0)
                fd = reopen_own_fd(call, n, &a, fd);
        struct stat st;
        if ((r = stat_or_close(&fd, &st)) < 0)
                return r;
        if (!proc_path && fd >= 0 && st.st_dev == ctx->proc_dev) {
                close(fd);
                fd = open_in_agent(call, at, p, &a, um);
                if ((r = stat_or_close(&fd, &st)) < 0)
                        return r;
        }
        bool dev_tty = fd >= 0 && S_ISCHR(st.st_mode) && st.st_rdev == makedev(5, 0);
        if (dev_tty || fd == -ENXIO) {
                struct stat tst;
                bool tty = dev_tty ||
                           (fstatat(at, p, &tst, 0) == 0 && S_ISCHR(tst.st_mode) && tst.st_rdev == makedev(5, 0));
                if (tty) {
                        /* /dev/tty means the opener's controlling terminal, not the sentry's */
                        if (fd >= 0)
                                close(fd);
                        char ctty[64];
                        r = controlling_tty(call, ctty, sizeof(ctty));
                        if (r >= 0 && (r = fs_as_child_begin(call)) >= 0) {
                                fd = do_open(AT_FDCWD, ctty, &a);
                                fs_as_child_end();
                        } else
                                fd = r;
                        if ((r = stat_or_close(&fd, &st)) < 0)
                                return r;
                }
        }
        if (fd < 0) {
                ret->error = -fd;
                return 0;
        }
        if (ctx->n_rules) {
                char vp[PATH_MAX];
                if (fs_view_path(call->hostproc_fd, fd, vp, sizeof(vp)) == 0 &&
                    fs_rules_hide(ctx->rules, ctx->n_rules, vp)) {
                        close(fd);
                        ret->error = ENOENT;
                        return 0;
                }
        }
        if ((a.how.flags & O_ACCMODE) != O_RDONLY && st.st_dev == ctx->proc_dev && !proc_mem_writable(call, fd)) {
                /* another process's memory, written through procfs: the
                 * filter refuses ptrace and process_vm_writev, and this is
                 * the same power (the kernel allows it for a parent, and
                 * for anyone of the same uid without Yama) */
                close(fd);
                ret->error = EACCES;
                return 0;
        }
        if (S_ISDIR(st.st_mode) && !fs_in_view(call->userdata, fd)) {
                /* a directory outside the view, reached through a magic link */
                close(fd);
                ret->error = EACCES;
                return 0;
        }
        ret->kind = VERDICT_FD;
        ret->fd = fd;
        ret->fd_flags = (a.how.flags & O_CLOEXEC) ? O_CLOEXEC : 0;
        return 0;
}
