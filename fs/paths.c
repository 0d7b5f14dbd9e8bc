/* The path calls other than open, emulated against the view: each reads its
 * path(s) once (resolve.c), acts as the child in the worker on what the
 * resolution pinned, translates ids between the sentry's user namespace and
 * the child's, and writes results into the child's memory. */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/time.h>

#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef SYS_faccessat2
#define SYS_faccessat2 439
#endif
#ifndef AT_STATX_SYNC_TYPE
#define AT_STATX_SYNC_TYPE 0x6000
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE  (1 << 1)
#define RENAME_WHITEOUT  (1 << 2)
#endif

static int deny(struct notify_verdict *ret, int r)
{
        ret->kind = VERDICT_ERROR;
        ret->error = r < 0 ? -r : r;
        return 0;
}

/* the result of a call made for the child: -errno becomes the child's
 * errno, anything else its return value */
static int result(struct notify_verdict *ret, long r)
{
        if (r < 0)
                return deny(ret, (int)r);
        ret->kind = VERDICT_VALUE;
        ret->value = r;
        return 0;
}

static const struct fs_context *fsctx(const struct notify_call *call)
{
        return call->userdata;
}

/* The caller's umask on this worker thread (its fs context is its own). */
static int take_umask(struct notify_call *call)
{
        int um = notify_umask(call);
        if (um < 0)
                return -ESRCH;
        fs_set_umask((mode_t)um);
        return 0;
}

#define OVERFLOW_ID 65534u

/* The owner of a stat result as the child sees it. The sentry's namespace
 * shows an id it does not map as the overflow id 65534; when that is also
 * the child's own id (an unprivileged cordon, in its own user namespace,
 * run by uid 65534) the two cannot be told apart from here, and the proc
 * agent, which stands in the child's namespace, is asked instead. */
static void ids_to_child(struct notify_call *call, const struct fs_target *t, uint32_t *uid, uint32_t *gid)
{
        struct fs_context *ctx = call->userdata;
        bool ambiguous = (*uid == OVERFLOW_ID && fs_id_to_child(&ctx->ids, false, OVERFLOW_ID) != OVERFLOW_ID) ||
                         (*gid == OVERFLOW_ID && fs_id_to_child(&ctx->ids, true, OVERFLOW_ID) != OVERFLOW_ID);
        if (ambiguous && ctx->keep_groups) {
                int fd = t->fd >= 0 ? t->fd : openat(t->dirfd, t->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                uint32_t au, ag;
                int r = fd >= 0 ? fs_agent_ids(ctx, fd, &au, &ag) : -EBADF;
                if (fd >= 0 && fd != t->fd)
                        close(fd);
                if (r == 0) {
                        *uid = au;
                        *gid = ag;
                        return;
                }
        }
        *uid = fs_id_to_child(&ctx->ids, false, *uid);
        *gid = fs_id_to_child(&ctx->ids, true, *gid);
}

/* Emulates stat(2), lstat(2) and newfstatat(2) against the view. */
int fs_handle_stat(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        int dirfd = AT_FDCWD, flags = 0;
        uint64_t path, buf;
        switch (d->nr) {
        case SYS_stat:
                path = d->args[0], buf = d->args[1];
                break;
        case SYS_lstat:
                path = d->args[0], buf = d->args[1], flags = AT_SYMLINK_NOFOLLOW;
                break;
        default: /* newfstatat */
                dirfd = (int)d->args[0], path = d->args[1], buf = d->args[2], flags = (int)d->args[3];
                if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH | AT_STATX_SYNC_TYPE))
                        return deny(ret, -EINVAL);
                break;
        }
        unsigned rf = FS_NEED | (flags & AT_SYMLINK_NOFOLLOW ? 0 : FS_FOLLOW);
        if (flags & AT_EMPTY_PATH)
                rf |= FS_EMPTY_OK | FS_NULL_OK;
        _cleanup_(fs_target_done) struct fs_target t = FS_TARGET_INIT;
        int r = fs_resolve(call, dirfd, path, rf, &t);
        if (r < 0)
                return deny(ret, r);
        struct stat st;
        if ((r = fs_as_child_begin(call)) < 0)
                return r;
        if (t.fd >= 0)
                r = fstatat(t.fd, "", &st, AT_EMPTY_PATH);
        else
                r = fstatat(t.dirfd, t.name, &st, AT_SYMLINK_NOFOLLOW);
        r = r < 0 ? -errno : 0;
        fs_as_child_end();
        if (fs_pin_for_caller(call, r, &t)) {
                if ((r = fs_as_child_begin(call)) < 0)
                        return r;
                r = fstatat(t.fd, "", &st, AT_EMPTY_PATH) < 0 ? -errno : 0;
                fs_as_child_end();
        }
        if (r < 0)
                return deny(ret, r);
        uint32_t uid = st.st_uid, gid = st.st_gid;
        ids_to_child(call, &t, &uid, &gid);
        st.st_uid = uid;
        st.st_gid = gid;
        r = notify_write_mem(call, buf, &st, sizeof(st));
        return r < 0 ? deny(ret, r == -ESRCH ? -ENOENT : r) : result(ret, 0);
}

/* Emulates statx(2) against the view. */
int fs_handle_statx(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        int dirfd = (int)d->args[0], flags = (int)d->args[2];
        unsigned mask = (unsigned)d->args[3];
        if ((flags & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE ||
            (flags & ~(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH | AT_STATX_SYNC_TYPE)) ||
            (mask & STATX__RESERVED))
                return deny(ret, -EINVAL);
        unsigned rf = FS_NEED | (flags & AT_SYMLINK_NOFOLLOW ? 0 : FS_FOLLOW);
        if (flags & AT_EMPTY_PATH)
                rf |= FS_EMPTY_OK | FS_NULL_OK;
        _cleanup_(fs_target_done) struct fs_target t = FS_TARGET_INIT;
        int r = fs_resolve(call, dirfd, d->args[1], rf, &t);
        if (r < 0)
                return deny(ret, r);
        struct statx stx;
        int sync = flags & (AT_STATX_SYNC_TYPE | AT_NO_AUTOMOUNT);
        if ((r = fs_as_child_begin(call)) < 0)
                return r;
        if (t.fd >= 0)
                r = statx(t.fd, "", AT_EMPTY_PATH | sync, mask, &stx);
        else
                r = statx(t.dirfd, t.name, AT_SYMLINK_NOFOLLOW | sync, mask, &stx);
        r = r < 0 ? -errno : 0;
        fs_as_child_end();
        if (fs_pin_for_caller(call, r, &t)) {
                if ((r = fs_as_child_begin(call)) < 0)
                        return r;
                r = statx(t.fd, "", AT_EMPTY_PATH | sync, mask, &stx) < 0 ? -errno : 0;
                fs_as_child_end();
        }
        if (r < 0)
                return deny(ret, r);
        ids_to_child(call, &t, &stx.stx_uid, &stx.stx_gid);
        r = notify_write_mem(call, d->args[4], &stx, sizeof(stx));
        return r < 0 ? deny(ret, r == -ESRCH ? -ENOENT : r) : result(ret, 0);
}

/* Whether fd is the caller's own /proc/PID/fd (or /proc/PID/task/TID/fd)
 * directory: the kernel grants a thread group every access to its own
 * (proc_fd_permission), which the worker, not of the group, is refused. */
static bool own_fd_dir(struct notify_call *call, int fd)
{
        const struct fs_context *ctx = fsctx(call);
        struct stat st;
        if (fstat(fd, &st) < 0 || st.st_dev != ctx->proc_dev || !S_ISDIR(st.st_mode))
                return false;
        char vp[PATH_MAX];
        pid_t nspid, nstgid;
        if (fs_view_path(call->hostproc_fd, fd, vp, sizeof(vp)) < 0 || notify_ns_ids(call, &nspid, &nstgid) < 0)
                return false;
        char own[64];
        int n = snprintf(own, sizeof(own), "/proc/%d/", (int)nstgid);
        if (strncmp(vp, own, (size_t)n) != 0)
                return false;
        const char *rest = vp + n;
        if (streq(rest, "fd"))
                return true;
        /* task/TID/fd: /proc/TGID/task lists only that group's threads */
        if (!startswith(rest, "task/"))
                return false;
        rest += 5;
        size_t digits = strspn(rest, "0123456789");
        return digits > 0 && streq(rest + digits, "/fd");
}

/* Emulates access(2), faccessat(2) and faccessat2(2) against the view. The
 * worker's filesystem ids are the child's; the child's real and effective
 * ids are the same (its namespace maps one id), so AT_EACCESS is always
 * right for the worker, whose own real id is the sentry's. */
int fs_handle_access(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        int dirfd = AT_FDCWD, mode, flags = 0;
        uint64_t path;
        if (d->nr == SYS_access)
                path = d->args[0], mode = (int)d->args[1];
        else {
                dirfd = (int)d->args[0], path = d->args[1], mode = (int)d->args[2];
                if (d->nr == SYS_faccessat2)
                        flags = (int)d->args[3];
        }
        if ((mode & ~S_IRWXO) || (flags & ~(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH)))
                return deny(ret, -EINVAL);
        unsigned rf = FS_NEED | (flags & AT_SYMLINK_NOFOLLOW ? 0 : FS_FOLLOW);
        if (flags & AT_EMPTY_PATH)
                rf |= FS_EMPTY_OK;
        _cleanup_(fs_target_done) struct fs_target t = FS_TARGET_INIT;
        int r = fs_resolve(call, dirfd, path, rf, &t);
        if (r < 0)
                return deny(ret, r);
        if ((r = fs_as_child_begin(call)) < 0)
                return r;
        long k;
        if (t.fd >= 0)
                k = syscall(SYS_faccessat2, t.fd, "", mode, AT_EMPTY_PATH | AT_EACCESS);
        else
                k = syscall(SYS_faccessat2, t.dirfd, t.name, mode, AT_SYMLINK_NOFOLLOW | AT_EACCESS);
        r = k < 0 ? -errno : 0;
        fs_as_child_end();
        if (r == -EACCES) {
                int fd = t.fd >= 0 ? t.fd : openat(t.dirfd, t.name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (fd >= 0 && own_fd_dir(call, fd))
                        r = 0;
                if (fd >= 0 && fd != t.fd)
                        close(fd);
        }
        if (r == -EACCES && fs_caller_overrides(call)) {
                /* the worker checks with no capability: a caller holding
                 * CAP_DAC_OVERRIDE has the check redone by the agent with
                 * its standing in the sandbox's namespace (see chown) */
                _cleanup_close_ int obj = fs_target_pin(&t);
                int ar = obj >= 0 ? fs_agent_access(call, obj, mode) : obj;
                if (ar == 0 || ar == -EACCES)
                        r = ar;
        }
        return result(ret, r);
}

/* Emulates readlink(2) and readlinkat(2) against the view. */
int fs_handle_readlink(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        int dirfd = AT_FDCWD;
        uint64_t path, buf;
        int size;
        if (d->nr == SYS_readlink)
                path = d->args[0], buf = d->args[1], size = (int)d->args[2];
        else
                dirfd = (int)d->args[0], path = d->args[1], buf = d->args[2], size = (int)d->args[3];
        if (size <= 0)
                return deny(ret, -EINVAL);
        _cleanup_(fs_target_done) struct fs_target t = FS_TARGET_INIT;
        int r = fs_resolve(call, dirfd, path, FS_NEED | FS_EMPTY_OK, &t);
        if (r < 0)
                return deny(ret, r);
        char link[PATH_MAX];
        ssize_t n;
        /* /proc/self and /proc/thread-self read as the caller's pids in its
         * namespace (read by the sentry they would name the sentry) */
        if (streq(t.path, "/proc/self") || streq(t.path, "/proc/thread-self")) {
                pid_t nspid, nstgid;
                r = notify_ns_ids(call, &nspid, &nstgid);
                if (r < 0)
                        return deny(ret, -ENOENT);
                if (streq(t.path, "/proc/self"))
                        n = snprintf(link, sizeof(link), "%d", (int)nstgid);
                else
                        n = snprintf(link, sizeof(link), "%d/task/%d", (int)nstgid, (int)nspid);
        } else {
                if ((r = fs_as_child_begin(call)) < 0)
                        return r;
                if (t.fd >= 0) {
                        /* "." / ".." / "name/": never a symlink; the empty
                         * path: the dirfd is an O_PATH symlink or it is not */
                        struct stat st;
                        if (fstat(t.fd, &st) == 0 && !S_ISLNK(st.st_mode)) {
                                errno = t.empty ? ENOENT : EINVAL;
                                n = -1;
                        } else
                                n = readlinkat(t.fd, "", link, sizeof(link));
                } else
                        n = readlinkat(t.dirfd, t.name, link, sizeof(link));
                r = n < 0 ? -errno : 0;
                fs_as_child_end();
                if (fs_pin_for_caller(call, r, &t)) {
                        if ((r = fs_as_child_begin(call)) < 0)
                                return r;
                        n = readlinkat(t.fd, "", link, sizeof(link));
                        r = n < 0 ? -errno : 0;
                        fs_as_child_end();
                }
                if (r < 0)
                        return deny(ret, r);
        }
        if (n > size)
                n = size;
        r = notify_write_mem(call, buf, link, (size_t)n);
        return r < 0 ? deny(ret, r == -ESRCH ? -ENOENT : r) : result(ret, n);
}

/* The worker makes and removes names with no capability: where that is
 * refused and the caller holds CAP_DAC_OVERRIDE or CAP_FOWNER in its
 * namespace (root writing in a 0555 directory of its own, removing
 * another user's file in a sticky one), the agent redoes the change on
 * the same pinned directories with the caller's standing, so that the
 * kernel decides as it decides the caller's own call: capabilities count
 * only for directories whose owner the sandbox's namespace maps. r stays
 * when there is nothing to redo. */
static int redo_as_caller(struct notify_call *call, int r, enum fs_dirop op, const struct fs_target *t,
                          const struct fs_target *t2, const char *name2, mode_t mode, dev_t dev, int flags)
{
        if ((r != -EACCES && r != -EPERM) || t->dirfd < 0 || (t2 && t2->dirfd < 0) || !fs_caller_overrides(call))
                return r;
        int ar = fs_agent_dirop(call, op, t->dirfd, t->name, t2 ? t2->dirfd : -1, t2 ? t2->name : name2, mode, dev,
                                flags);
        return ar == -ENOSYS || ar == -EINVAL ? r : ar;
}

/* Emulates mkdir(2) and mkdirat(2) against the view. */
int fs_handle_mkdir(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        int dirfd = AT_FDCWD;
        uint64_t path;
        mode_t mode;
        if (d->nr == SYS_mkdir)
                path = d->args[0], mode = (mode_t)d->args[1];
        else
                dirfd = (int)d->args[0], path = d->args[1], mode = (mode_t)d->args[2];
        _cleanup_(fs_target_done) struct fs_target t = FS_TARGET_INIT;
        int r = fs_resolve(call, dirfd, path, 0, &t);
        if (r < 0)
                return deny(ret, r);
        if ((r = fs_ask_write(call, &t, NULL, ret)) <= 0)
                return r;
        if (take_umask(call) < 0)
                return deny(ret, -ESRCH);
        if ((r = fs_as_child_begin(call)) < 0)
                return r;
        r = mkdirat(t.dirfd, t.name, mode) < 0 ? -errno : 0;
        fs_as_child_end();
        r = redo_as_caller(call, r, FS_DIROP_MKDIR, &t, NULL, NULL, mode, 0, 0);
        return result(ret, r);
}

/* Emulates mknod(2) and mknodat(2) against the view: FIFOs, sockets,
 * regular files and whiteouts; devices are refused as the child's own call
 * would be (no CAP_MKNOD), whatever they name; a whiteout or a setuid or
 * setgid node only on the sandbox's own filesystems. */
int fs_handle_mknod(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        int dirfd = AT_FDCWD;
        uint64_t path;
        mode_t mode;
        dev_t dev;
        if (d->nr == SYS_mknod)
                path = d->args[0], mode = (mode_t)d->args[1], dev = (dev_t)(uint32_t)d->args[2];
        else
                dirfd = (int)d->args[0], path = d->args[1], mode = (mode_t)d->args[2],
                dev = (dev_t)(uint32_t)d->args[3];
        _cleanup_(fs_target_done) struct fs_target t = FS_TARGET_INIT;
        int r = fs_resolve(call, dirfd, path, 0, &t);
        if (r < 0)
                return deny(ret, r);
        if ((r = fs_ask_write(call, &t, NULL, ret)) <= 0)
                return r;
        /* a whiteout (character device 0:0) names no device: the kernel
         * lets anyone make one, and so do we, on the sandbox's own
         * filesystems (fs/binds.c), as any setuid or setgid file */
        if (S_ISBLK(mode) || (S_ISCHR(mode) && dev != 0))
                return deny(ret, -EPERM);
        if (fs_mknod_refused(mode, fs_on_private_layer(fsctx(call), t.dirfd, NULL)))
                return deny(ret, -EPERM);
        if (take_umask(call) < 0)
                return deny(ret, -ESRCH);
        if ((r = fs_as_child_begin(call)) < 0)
                return r;
        r = mknodat(t.dirfd, t.name, mode, dev) < 0 ? -errno : 0;
        fs_as_child_end();
        r = redo_as_caller(call, r, FS_DIROP_MKNOD, &t, NULL, NULL, mode, dev, 0);
        return result(ret, r);
}

/* Emulates unlink(2), rmdir(2) and unlinkat(2) against the view. */
int fs_handle_unlink(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        int dirfd = AT_FDCWD, flags = 0;
        uint64_t path;
        if (d->nr == SYS_unlink)
                path = d->args[0];
        else if (d->nr == SYS_rmdir)
                path = d->args[0], flags = AT_REMOVEDIR;
        else {
                dirfd = (int)d->args[0], path = d->args[1], flags = (int)d->args[2];
                if (flags & ~AT_REMOVEDIR)
                        return deny(ret, -EINVAL);
        }
        _cleanup_(fs_target_done) struct fs_target t = FS_TARGET_INIT;
        int r = fs_resolve(call, dirfd, path, 0, &t);
        if (r < 0)
                return deny(ret, r);
        if ((r = fs_ask_write(call, &t, NULL, ret)) <= 0)
                return r;
        if ((r = fs_as_child_begin(call)) < 0)
                return r;
        r = unlinkat(t.dirfd, t.name, flags) < 0 ? -errno : 0;
        fs_as_child_end();
        r = redo_as_caller(call, r, FS_DIROP_UNLINK, &t, NULL, NULL, 0, 0, flags);
        return result(ret, r);
}

/* Emulates rename(2), renameat(2) and renameat2(2) (all flags) against the
 * view: both names are pinned in their directories and checked before the
 * kernel renames one into the other. */
int fs_handle_rename(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        int olddir = AT_FDCWD, newdir = AT_FDCWD;
        unsigned flags = 0;
        uint64_t oldp, newp;
        if (d->nr == SYS_rename)
                oldp = d->args[0], newp = d->args[1];
        else {
                olddir = (int)d->args[0], oldp = d->args[1], newdir = (int)d->args[2], newp = d->args[3];
                if (d->nr == SYS_renameat2)
                        flags = (unsigned)d->args[4];
        }
        if ((flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT)) ||
            ((flags & RENAME_NOREPLACE) && (flags & RENAME_EXCHANGE)) ||
            ((flags & RENAME_WHITEOUT) && (flags & RENAME_EXCHANGE)))
                return deny(ret, -EINVAL);
        _cleanup_(fs_target_done) struct fs_target from = FS_TARGET_INIT;
        _cleanup_(fs_target_done) struct fs_target to = FS_TARGET_INIT;
        int r = fs_resolve(call, olddir, oldp, 0, &from);
        if (r < 0)
                return deny(ret, r);
        r = fs_resolve(call, newdir, newp, 0, &to);
        if (r < 0)
                return deny(ret, r);
        if ((r = fs_ask_write(call, &from, &to, ret)) <= 0)
                return r;
        /* RENAME_WHITEOUT leaves a whiteout (character device 0:0) at the
         * source, which the kernel lets anyone make: as mknod's whiteout,
         * only on the sandbox's own filesystems, never a device node in a
         * bind's host directory (fs/binds.c) */
        if ((flags & RENAME_WHITEOUT) && fs_mknod_refused(S_IFCHR, fs_on_private_layer(fsctx(call), from.dirfd, NULL)))
                return deny(ret, -EPERM);
        if ((r = fs_as_child_begin(call)) < 0)
                return r;
        r = renameat2(from.dirfd, from.name, to.dirfd, to.name, flags) < 0 ? -errno : 0;
        fs_as_child_end();
        r = redo_as_caller(call, r, FS_DIROP_RENAME, &from, &to, NULL, 0, 0, (int)flags);
        return result(ret, r);
}

/* Emulates link(2) and linkat(2) against the view. A link to a file
 * outside the view fails as the kernel fails links across mounts. */
int fs_handle_link(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        int olddir = AT_FDCWD, newdir = AT_FDCWD, flags = 0;
        uint64_t oldp, newp;
        if (d->nr == SYS_link)
                oldp = d->args[0], newp = d->args[1];
        else {
                olddir = (int)d->args[0], oldp = d->args[1], newdir = (int)d->args[2], newp = d->args[3];
                flags = (int)d->args[4];
                if (flags & ~(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
                        return deny(ret, -EINVAL);
        }
        unsigned rf = FS_NEED | (flags & AT_SYMLINK_FOLLOW ? FS_FOLLOW : 0) | (flags & AT_EMPTY_PATH ? FS_EMPTY_OK : 0);
        _cleanup_(fs_target_done) struct fs_target from = FS_TARGET_INIT;
        _cleanup_(fs_target_done) struct fs_target to = FS_TARGET_INIT;
        int r = fs_resolve(call, olddir, oldp, rf, &from);
        if (r < 0)
                return deny(ret, r);
        r = fs_resolve(call, newdir, newp, 0, &to);
        if (r < 0)
                return deny(ret, r);
        if ((r = fs_ask_write(call, &from, &to, ret)) <= 0)
                return r;
        if ((r = fs_as_child_begin(call)) < 0)
                return r;
        if (from.fd >= 0) {
                /* the pinned object itself, through our own fd's procfs
                 * link; for linkat(fd, "", AT_EMPTY_PATH) the child's open
                 * file. Not linkat(fd, "") here: the kernel lets only the
                 * file's opener's credentials (or CAP_DAC_READ_SEARCH)
                 * link an fd so, and this worker's are neither the
                 * child's nor, for an O_TMPFILE a sentry thread opened,
                 * surely that thread's. Nothing more than the child's own
                 * linkat of /proc/self/fd/N with AT_SYMLINK_FOLLOW can
                 * do, which the kernel allows it; across mounts EXDEV. */
                struct fs_at at;
                fs_target_at(&from, call->hostproc_fd, &at);
                r = linkat(at.dirfd, at.name, to.dirfd, to.name, AT_SYMLINK_FOLLOW);
        } else
                r = linkat(from.dirfd, from.name, to.dirfd, to.name, 0);
        r = r < 0 ? -errno : 0;
        fs_as_child_end();
        if (!from.empty && !(flags & AT_SYMLINK_FOLLOW))
                /* by name in its pinned directory, not followed: a name
                 * followed again by the agent could have been made to
                 * lead elsewhere since it was checked (a hidden file) */
                r = redo_as_caller(call, r, FS_DIROP_LINK, &from, &to, NULL, 0, 0, 0);
        return result(ret, r);
}

/* Emulates symlink(2) and symlinkat(2) against the view. The target is
 * stored, not resolved: following it later is resolved in the view. */
int fs_handle_symlink(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        int newdir = AT_FDCWD;
        uint64_t target, newp;
        if (d->nr == SYS_symlink)
                target = d->args[0], newp = d->args[1];
        else
                target = d->args[0], newdir = (int)d->args[1], newp = d->args[2];
        char content[PATH_MAX];
        ssize_t n = notify_read_string(call, target, content, sizeof(content));
        if (n < 0)
                return deny(ret, (int)n);
        if (n == 0)
                return deny(ret, -ENOENT);
        _cleanup_(fs_target_done) struct fs_target t = FS_TARGET_INIT;
        int r = fs_resolve(call, newdir, newp, 0, &t);
        if (r < 0)
                return deny(ret, r);
        if ((r = fs_ask_write(call, &t, NULL, ret)) <= 0)
                return r;
        if ((r = fs_as_child_begin(call)) < 0)
                return r;
        r = symlinkat(content, t.dirfd, t.name) < 0 ? -errno : 0;
        fs_as_child_end();
        r = redo_as_caller(call, r, FS_DIROP_SYMLINK, &t, NULL, content, 0, 0, 0);
        return result(ret, r);
}

/* Whether giving t's object mode (with S_ISUID or S_ISGID) is refused
 * (fs/binds.c). A pinned object is judged itself; a name (only with
 * AT_SYMLINK_NOFOLLOW) by what it names now, on its mount (a rename into
 * its directory cannot bring in a file of another mount), and as no
 * directory: another entry of the same directory could take its place. */
static bool setid_refused(const struct fs_context *ctx, const struct fs_target *t, mode_t mode)
{
        if (t->fd >= 0) {
                mode_t type = 0;
                bool private = fs_on_private_layer(ctx, t->fd, &type);
                return fs_setid_refused(type, mode, private);
        }
        struct stat st;
        if (fstatat(t->dirfd, t->name, &st, AT_SYMLINK_NOFOLLOW) < 0)
                return true;
        return fs_setid_refused(S_IFREG, mode, fs_private_dev(ctx, st.st_dev));
}

/* Emulates chmod(2), fchmodat(2) and fchmodat2(2) against the view; a
 * setuid or setgid mode only on the sandbox's own filesystems. */
int fs_handle_chmod(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        int dirfd = AT_FDCWD, flags = 0;
        uint64_t path;
        mode_t mode;
        if (d->nr == SYS_chmod)
                path = d->args[0], mode = (mode_t)d->args[1];
        else {
                dirfd = (int)d->args[0], path = d->args[1], mode = (mode_t)d->args[2];
                if (d->nr == SYS_fchmodat2)
                        flags = (int)d->args[3];
                if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
                        return deny(ret, -EINVAL);
        }
        unsigned rf =
                FS_NEED | (flags & AT_SYMLINK_NOFOLLOW ? 0 : FS_FOLLOW) | (flags & AT_EMPTY_PATH ? FS_EMPTY_OK : 0);
        _cleanup_(fs_target_done) struct fs_target t = FS_TARGET_INIT;
        int r = fs_resolve(call, dirfd, path, rf, &t);
        if (r < 0)
                return deny(ret, r);
        if ((r = fs_ask_write(call, &t, NULL, ret)) <= 0)
                return r;
        if ((mode & (S_ISUID | S_ISGID)) && setid_refused(fsctx(call), &t, mode))
                return deny(ret, -EPERM);
        struct fs_at at;
        fs_target_at(&t, call->hostproc_fd, &at);
        if ((r = fs_as_child_begin(call)) < 0)
                return r;
        long k;
        if (at.nofollow)
                k = syscall(SYS_fchmodat2, at.dirfd, at.name, mode, AT_SYMLINK_NOFOLLOW);
        else
                k = fchmodat(at.dirfd, at.name, mode, 0);
        r = k < 0 ? -errno : 0;
        fs_as_child_end();
        if (r == -EPERM && fs_caller_overrides(call)) {
                /* another user's file: CAP_FOWNER, the agent's to apply (see chown) */
                _cleanup_close_ int obj = fs_target_pin(&t);
                int ar = obj >= 0 ? fs_agent_chmod(call, obj, mode) : obj;
                if (ar != -ENOSYS)
                        r = ar;
        }
        return result(ret, r);
}

/* Emulates chown(2), lchown(2) and fchownat(2) against the view, with the
 * ids translated from the child's namespace. */
int fs_handle_chown(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        int dirfd = AT_FDCWD, flags = 0;
        uint64_t path;
        uint32_t uid, gid;
        if (d->nr == SYS_chown || d->nr == SYS_lchown) {
                path = d->args[0], uid = (uint32_t)d->args[1], gid = (uint32_t)d->args[2];
                flags = d->nr == SYS_lchown ? AT_SYMLINK_NOFOLLOW : 0;
        } else {
                dirfd = (int)d->args[0], path = d->args[1], uid = (uint32_t)d->args[2], gid = (uint32_t)d->args[3];
                flags = (int)d->args[4];
                if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
                        return deny(ret, -EINVAL);
        }
        uint32_t huid, hgid;
        unsigned rf =
                FS_NEED | (flags & AT_SYMLINK_NOFOLLOW ? 0 : FS_FOLLOW) | (flags & AT_EMPTY_PATH ? FS_EMPTY_OK : 0);
        _cleanup_(fs_target_done) struct fs_target t = FS_TARGET_INIT;
        int r = fs_resolve(call, dirfd, path, rf, &t);
        if (r < 0)
                return deny(ret, r);
        if ((r = fs_ask_write(call, &t, NULL, ret)) <= 0)
                return r;
        if (fs_id_from_child(&fsctx(call)->ids, false, uid, &huid) < 0 ||
            fs_id_from_child(&fsctx(call)->ids, true, gid, &hgid) < 0)
                return deny(ret, -EINVAL);
        if ((r = fs_as_child_begin(call)) < 0)
                return r;
        if (t.fd >= 0)
                r = fchownat(t.fd, "", huid, hgid, AT_EMPTY_PATH);
        else
                r = fchownat(t.dirfd, t.name, huid, hgid, AT_SYMLINK_NOFOLLOW);
        r = r < 0 ? -errno : 0;
        fs_as_child_end();
        if (r == -EPERM) {
                /* The worker holds no capability: a caller holding CAP_CHOWN
                 * in its namespace has the chown redone by the agent, on the
                 * very object resolved here, with the caller's standing in
                 * that namespace (so only files it maps are its to give). */
                _cleanup_close_ int obj = fs_target_pin(&t);
                if (obj >= 0) {
                        int ar = fs_agent_chown(call, obj, uid, gid);
                        if (ar != -ENOSYS)
                                r = ar;
                }
        }
        return result(ret, r);
}

int fs_target_pin(const struct fs_target *t)
{
        int fd = t->fd >= 0 ? fcntl(t->fd, F_DUPFD_CLOEXEC, 3)
                            : openat(t->dirfd, t->name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

/* Emulates utimes(2), utimensat(2) and futimesat(2) against the view; a
 * NULL path means the dirfd itself (futimens). */
int fs_handle_utimes(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        int dirfd = AT_FDCWD, flags = 0;
        uint64_t path, times;
        bool timeval = d->nr != SYS_utimensat;
        if (d->nr == SYS_utimes)
                path = d->args[0], times = d->args[1];
        else {
                dirfd = (int)d->args[0], path = d->args[1], times = d->args[2];
                if (d->nr == SYS_utimensat)
                        flags = (int)d->args[3];
        }
        if (flags & ~(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
                return deny(ret, -EINVAL);
        struct timespec ts[2], *tsp = NULL;
        if (times) {
                if (timeval) {
                        struct timeval tv[2];
                        int r = notify_read_mem(call, times, tv, sizeof(tv));
                        if (r < 0)
                                return deny(ret, r == -ESRCH ? -ENOENT : r);
                        for (int i = 0; i < 2; i++) {
                                if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
                                        return deny(ret, -EINVAL);
                                ts[i].tv_sec = tv[i].tv_sec;
                                ts[i].tv_nsec = tv[i].tv_usec * 1000;
                        }
                } else {
                        int r = notify_read_mem(call, times, ts, sizeof(ts));
                        if (r < 0)
                                return deny(ret, r == -ESRCH ? -ENOENT : r);
                }
                tsp = ts;
        }
        if (path == 0 && d->nr != SYS_utimes) {
                /* the dirfd itself, as an open file (not O_PATH: the
                 * kernel refuses those here, and so do we) */
                if (dirfd == AT_FDCWD)
                        return deny(ret, -EFAULT);
                if (flags)
                        return deny(ret, -EINVAL);
                _cleanup_close_ int fd = notify_dup_child_fd(call, dirfd);
                if (fd < 0)
                        return deny(ret, fd);
                if (notify_id_valid(call) < 0)
                        return deny(ret, -ENOENT);
                int r = fs_as_child_begin(call);
                if (r < 0)
                        return r;
                r = futimens(fd, tsp) < 0 ? -errno : 0;
                fs_as_child_end();
                if ((r == -EPERM || r == -EACCES) && fs_caller_overrides(call)) {
                        int ar = fs_agent_utimens(call, fd, tsp); /* as below */
                        if (ar != -ENOSYS)
                                r = ar;
                }
                return result(ret, r);
        }
        unsigned rf =
                FS_NEED | (flags & AT_SYMLINK_NOFOLLOW ? 0 : FS_FOLLOW) | (flags & AT_EMPTY_PATH ? FS_EMPTY_OK : 0);
        _cleanup_(fs_target_done) struct fs_target t = FS_TARGET_INIT;
        int r = fs_resolve(call, dirfd, path, rf, &t);
        if (r < 0)
                return deny(ret, r);
        if ((r = fs_ask_write(call, &t, NULL, ret)) <= 0)
                return r;
        struct fs_at at;
        fs_target_at(&t, call->hostproc_fd, &at);
        if ((r = fs_as_child_begin(call)) < 0)
                return r;
        r = utimensat(at.dirfd, at.name, tsp, at.nofollow) < 0 ? -errno : 0;
        fs_as_child_end();
        if ((r == -EPERM || r == -EACCES) && fs_caller_overrides(call)) {
                /* another user's file: CAP_FOWNER, the agent's to apply (see chown) */
                _cleanup_close_ int obj = fs_target_pin(&t);
                int ar = obj >= 0 ? fs_agent_utimens(call, obj, tsp) : obj;
                if (ar != -ENOSYS)
                        r = ar;
        }
        return result(ret, r);
}

/* Emulates truncate(2) against the view. */
int fs_handle_truncate(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        int64_t length = (int64_t)d->args[1];
        if (length < 0)
                return deny(ret, -EINVAL);
        _cleanup_(fs_target_done) struct fs_target t = FS_TARGET_INIT;
        int r = fs_resolve(call, AT_FDCWD, d->args[0], FS_NEED | FS_FOLLOW, &t);
        if (r < 0)
                return deny(ret, r);
        if ((r = fs_ask_write(call, &t, NULL, ret)) <= 0)
                return r;
        struct fs_at at;
        fs_target_at(&t, call->hostproc_fd, &at);
        if ((r = fs_as_child_begin(call)) < 0)
                return r;
        r = fs_at_enter(&at);
        if (r >= 0) {
                r = truncate(at.name, (off_t)length) < 0 ? -errno : 0;
                fs_at_leave();
        }
        fs_as_child_end();
        struct stat st, ast;
        if ((r == -EACCES || r == -EPERM) && t.fd >= 0 && t.dirfd >= 0 && fstat(t.fd, &st) == 0 &&
            S_ISREG(st.st_mode) && fs_caller_overrides(call)) {
                /* another user's file, which root's CAP_DAC_OVERRIDE may
                 * write: opened for writing by the agent with the caller's
                 * standing, by its name not followed (non-blocking, should
                 * a FIFO have taken its place), and truncated only if that
                 * is the very file pinned; a symlink's target stays
                 * refused */
                _cleanup_close_ int wfd = fs_agent_open(call->userdata, call, t.dirfd, t.name,
                                                        O_WRONLY | O_NOFOLLOW | O_NONBLOCK, 0, 0, 0);
                if (wfd >= 0 && fstat(wfd, &ast) == 0 && ast.st_dev == st.st_dev && ast.st_ino == st.st_ino)
                        r = ftruncate(wfd, (off_t)length) < 0 ? -errno : 0;
        }
        return result(ret, r);
}

/* Emulates statfs(2) against the view. */
int fs_handle_statfs(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        _cleanup_(fs_target_done) struct fs_target t = FS_TARGET_INIT;
        int r = fs_resolve(call, AT_FDCWD, d->args[0], FS_NEED | FS_FOLLOW, &t);
        if (r < 0)
                return deny(ret, r);
        struct statfs sfs;
        if ((r = fs_as_child_begin(call)) < 0)
                return r;
        r = fstatfs(t.fd, &sfs) < 0 ? -errno : 0;
        fs_as_child_end();
        if (r < 0)
                return deny(ret, r);
        r = notify_write_mem(call, d->args[1], &sfs, sizeof(sfs));
        return r < 0 ? deny(ret, r == -ESRCH ? -ENOENT : r) : result(ret, 0);
}

/* Emulates inotify_add_watch(2) against the view: the watch is added by the
 * worker on a duplicate of the child's own inotify fd, so the child's
 * instance receives the events and the watch descriptor is its own. */
int fs_handle_inotify_add_watch(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        uint32_t mask = (uint32_t)d->args[2];
        _cleanup_close_ int ifd = notify_dup_child_fd(call, (int)d->args[0]);
        if (ifd < 0)
                return deny(ret, ifd);
        _cleanup_(fs_target_done) struct fs_target t = FS_TARGET_INIT;
        int r = fs_resolve(call, AT_FDCWD, d->args[1], FS_NEED | (mask & IN_DONT_FOLLOW ? 0 : FS_FOLLOW), &t);
        if (r < 0)
                return deny(ret, r);
        struct fs_at at;
        fs_target_at(&t, call->hostproc_fd, &at);
        if (!at.nofollow)
                mask &= ~(uint32_t)IN_DONT_FOLLOW; /* the magic link must be followed to the object */
        if ((r = fs_as_child_begin(call)) < 0)
                return r;
        long wd = -ENOTDIR;
        r = fs_at_enter(&at);
        if (r >= 0) {
                wd = inotify_add_watch(ifd, at.name, mask);
                if (wd < 0)
                        wd = -errno;
                fs_at_leave();
        } else
                wd = r;
        fs_as_child_end();
        return result(ret, wd);
}

/* Emulates chdir(2) against the view: the path is resolved, pinned and
 * checked (a directory, searchable by the child, not hidden) by the worker;
 * the kernel then changes the child's cwd itself.
 *
 * CONTINUE is safe here although the kernel re-reads the path from the
 * child's memory: the kernel alone can change a process's cwd, and its own
 * walk runs in the child's mount namespace with the child's credentials, so
 * the view bounds it exactly as it bounds our walk (no host path can become
 * the cwd). What a path swapped after our check could reach is a hidden
 * path — which the view masks with an empty read-only mount as a second
 * layer, and every call made relative to the new cwd is emulated and
 * checked again. */
int fs_handle_chdir(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        _cleanup_(fs_target_done) struct fs_target t = FS_TARGET_INIT;
        int r = fs_resolve(call, AT_FDCWD, d->args[0], FS_NEED | FS_FOLLOW, &t);
        if (r < 0)
                return deny(ret, r);
        struct stat st;
        if ((r = fs_as_child_begin(call)) < 0)
                return r;
        if (fstat(t.fd, &st) < 0)
                r = -errno;
        else if (!S_ISDIR(st.st_mode))
                r = -ENOTDIR;
        else if (syscall(SYS_faccessat2, t.fd, "", X_OK, AT_EMPTY_PATH | AT_EACCESS) < 0)
                r = -errno;
        fs_as_child_end();
        if (r == -EACCES && fs_caller_overrides(call)) {
                /* the search right root's CAP_DAC_OVERRIDE gives, checked
                 * by the agent with the caller's standing (see access) */
                int ar = fs_agent_access(call, t.fd, X_OK);
                if (ar == 0 || ar == -EACCES)
                        r = ar;
        }
        if (r < 0)
                return deny(ret, r);
        ret->kind = VERDICT_CONTINUE;
        return 0;
}
