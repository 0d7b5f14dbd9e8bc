/* Binds and what may be made in them. A read-write bind of a root-started
 * sandbox is an idmapped copy of its source (the source's owner appears as
 * the sandbox's root, so that what the sandbox writes there is the owner's
 * on the host); and nothing setuid, setgid, file-capable or device-like is
 * ever made outside the sandbox's own filesystems (its writable layer and
 * a template's overlay): the host could run or open it there. The decisions
 * the filter cannot make from registers are made here, on the object the
 * call pins, and the call is then performed by the worker on exactly that
 * object (never handed back to the kernel to re-read a path). */
#include "config.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

int fs_bind_idmapped(int srcfd, int userns_fd, int *ret_fd)
{
        /* recursive, as init's own bind of a source is: a submount whose
         * filesystem cannot be idmapped makes the whole bind fail (closed) */
        _cleanup_close_ int fd = (int)syscall(SYS_open_tree, srcfd, "",
                                              OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
        if (fd < 0)
                return negative_errno();
        struct cordon_mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                                      .userns_fd = (uint64_t)userns_fd};
        if (syscall(__NR_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0)
                return negative_errno();
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int fs_bind_tree_idmap(int treefd, int userns_fd)
{
        struct cordon_mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                                      .userns_fd = (uint64_t)userns_fd};
        if (syscall(__NR_mount_setattr, treefd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0)
                return negative_errno();
        return 0;
}

int fs_private_layer_init(struct fs_context *ctx, int layer_fd, bool root_written_through)
{
        struct stat root, layer;
        struct statfs sf;
        if (fstat(ctx->root_fd, &root) < 0 || fstat(layer_fd, &layer) < 0 || fstatfs(ctx->root_fd, &sf) < 0)
                return negative_errno();
        /* the writable layer's tmpfs (/tmp, /var/tmp, /run, home, /dev/shm)
         * and the view's root: a template's overlay, whose upper layer is in
         * that tmpfs, or the built-in view's read-only tmpfs of mount points */
        ctx->private_devs[0] = layer.st_dev;
        ctx->n_private_devs = 1;
        /* An OCI root written through (fs/template.c) is the engine's. The
         * overlay the sentry made over the engine's upper directory is a
         * filesystem of its own, nothing else is on it, and what is made
         * there stays in the engine's storage, which only root may enter:
         * setuid files are kept there as runc keeps them (SECURITY.md). A
         * plain directory's filesystem is the host's, shared with binds
         * and whatever else lives there, and the directory may be anywhere
         * (a bundle in /tmp): never the sandbox's own. */
        if (!root_written_through || sf.f_type == OVERLAYFS_SUPER_MAGIC)
                ctx->private_devs[ctx->n_private_devs++] = root.st_dev;
        return 0;
}

bool fs_private_dev(const struct fs_context *ctx, dev_t dev)
{
        for (size_t i = 0; i < ctx->n_private_devs; i++)
                if (ctx->private_devs[i] == dev)
                        return true;
        return false;
}

bool fs_setid_refused(mode_t type, mode_t mode, bool private)
{
        if (private)
                return false;
        /* A setgid directory is allowed: it makes nothing executable, only
         * hands its group to what is made in it (which the kernel already
         * does when a directory is made in one), and shared trees and git's
         * core.sharedRepository depend on it. A setuid bit on a directory
         * means nothing on Linux and is refused with the rest. */
        if (mode & S_ISUID)
                return true;
        return (mode & S_ISGID) && !S_ISDIR(type);
}

bool fs_mknod_refused(mode_t mode, bool private)
{
        mode_t type = mode & S_IFMT;
        if (type == S_IFBLK || type == S_IFCHR)
                /* a device number other than the whiteout's is refused
                 * everywhere by the handler; the whiteout (0:0) names no
                 * device, but the host would list it as one */
                return !private;
        return fs_setid_refused(type ? type : S_IFREG, mode, private);
}

bool fs_xattr_guarded(const char *name)
{
        /* A file capability written through an idmapped bind whose owner is
         * host root would carry root id 0 on disk: capabilities in the
         * host's namespace for whoever execs it there. */
        return streq(name, "security.capability");
}

/* Whether fd's file is on one of the sandbox's own filesystems; a file that
 * cannot be looked at counts as outside (fails closed). */
bool fs_on_private_layer(const struct fs_context *ctx, int fd, mode_t *ret_type)
{
        struct stat st;
        if (fstat(fd, &st) < 0)
                return false;
        if (ret_type)
                *ret_type = st.st_mode & S_IFMT;
        return fs_private_dev(ctx, st.st_dev);
}

/* Emulates fchmod(2), trapped only when the mode sets S_ISUID or S_ISGID:
 * the fd is taken across once (pidfd_getfd), so a second thread that dup2s
 * another file onto the number changes nothing the decision did not see;
 * the chmod is made on that copy, as the child. */
int fs_handle_fchmod(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        mode_t mode = (mode_t)d->args[1];
        _cleanup_close_ int fd = notify_dup_child_fd(call, (int)d->args[0]);
        ret->kind = VERDICT_ERROR;
        if (fd < 0) {
                ret->error = -fd;
                return 0;
        }
        if (notify_id_valid(call) < 0) {
                ret->error = ENOENT;
                return 0;
        }
        /* an O_PATH file: fchmod fails on it (EBADF) before looking */
        int flags = fcntl(fd, F_GETFL);
        if (flags >= 0 && (flags & O_PATH)) {
                ret->error = EBADF;
                return 0;
        }
        mode_t type = 0;
        bool private = fs_on_private_layer(call->userdata, fd, &type);
        if (fs_setid_refused(type, mode, private)) {
                ret->error = EPERM;
                return 0;
        }
        int r = fs_as_child_begin(call);
        if (r < 0)
                return r;
        r = fchmod(fd, mode) < 0 ? -errno : 0;
        fs_as_child_end();
        if (r == -EPERM && fs_caller_overrides(call)) {
                /* another user's file: CAP_FOWNER, the agent's to apply (as chmod) */
                int ar = fs_agent_chmod(call, fd, mode);
                if (ar != -ENOSYS)
                        r = ar;
        }
        if (r < 0) {
                ret->error = -r;
                return 0;
        }
        ret->kind = VERDICT_VALUE;
        ret->value = 0;
        return 0;
}
