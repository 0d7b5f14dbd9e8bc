/* The extended-attribute calls, emulated against the view. Sizes are
 * bounded as the kernel bounds them (XATTR_SIZE_MAX for a value,
 * XATTR_LIST_MAX for a list, XATTR_NAME_MAX for a name), so the child can
 * make the sentry allocate no more than the kernel would.
 *
 * POSIX ACLs (system.posix_acl_access, system.posix_acl_default) embed ids:
 * they are translated as the kernel translates them for the child's own
 * call (see acl_ids). Limitation: a v3 security.capability's root id is
 * passed as the sentry's namespace renders it. The sets are always trapped
 * (the name is in memory): security.capability only on the sandbox's own
 * filesystems (fs/binds.c), never in a bind. */
#include "config.h"

#include <fcntl.h>
#include <linux/xattr.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>

#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

#ifndef XATTR_SIZE_MAX
#define XATTR_SIZE_MAX 65536
#endif
#ifndef XATTR_LIST_MAX
#define XATTR_LIST_MAX 65536
#endif
#ifndef XATTR_NAME_MAX
#define XATTR_NAME_MAX 255
#endif

static int deny(struct notify_verdict *ret, int r)
{
        ret->kind = VERDICT_ERROR;
        ret->error = r == -ESRCH ? ENOENT : -r;
        return 0;
}

enum xop { X_GET, X_SET, X_LIST, X_REMOVE };

#define ACL_VERSION 2
#define ACL_USER    0x02
#define ACL_GROUP   0x08

static bool is_acl(const char *name)
{
        return streq(name, "system.posix_acl_access") || streq(name, "system.posix_acl_default");
}

/* The ids in a POSIX ACL value (a little-endian header {u32 version} and
 * entries {u16 tag, u16 perm, u32 id}; only ACL_USER and ACL_GROUP entries
 * carry an id). To the child: an id of the sandbox's map reads as its
 * inside id, any other -1, as the kernel renders an id unmapped in the
 * reader's namespace. From the child: a mapped id becomes its host id, -1
 * stays, anything else is EINVAL, as the kernel answers for an unmapped id;
 * without this the sentry would grant host users access. A malformed value is left for the kernel to refuse. */
static int acl_ids(const struct fs_context *ctx, unsigned char *v, size_t len, bool to_child)
{
        if (len < 4 || (len - 4) % 8 != 0 || v[0] != ACL_VERSION || v[1] || v[2] || v[3])
                return 0;
        for (size_t off = 4; off < len; off += 8) {
                uint16_t tag = (uint16_t)(v[off] | v[off + 1] << 8);
                if (tag != ACL_USER && tag != ACL_GROUP)
                        continue;
                uint32_t id = (uint32_t)v[off + 4] | (uint32_t)v[off + 5] << 8 | (uint32_t)v[off + 6] << 16 |
                              (uint32_t)v[off + 7] << 24;
                bool gid = tag == ACL_GROUP;
                if (to_child) {
                        /* mapped when the way back leads to the same host id */
                        uint32_t c = fs_id_to_child(&ctx->ids, gid, id), back;
                        id = fs_id_from_child(&ctx->ids, gid, c, &back) == 0 && back == id ? c : (uint32_t)-1;
                } else if (fs_id_from_child(&ctx->ids, gid, id, &id) < 0)
                        return -EINVAL;
                for (int b = 0; b < 4; b++)
                        v[off + 4 + b] = (unsigned char)(id >> (8 * b));
        }
        return 0;
}

/* The mode an access ACL amounts to when it names no user or group (only
 * the owner, group, mask and other entries), as the kernel's
 * posix_acl_equiv_mode: setting such an ACL is a chmod. 0 with *ret_perm
 * (the 0777 bits), or -EINVAL when it is more than a mode. */
static int acl_equiv_mode(const unsigned char *v, size_t len, mode_t *ret_perm)
{
        if (len < 4 || (len - 4) % 8 != 0 || v[0] != ACL_VERSION || v[1] || v[2] || v[3])
                return -EINVAL;
        mode_t mode = 0, mask = 0;
        bool has_mask = false;
        for (size_t off = 4; off < len; off += 8) {
                uint16_t tag = (uint16_t)(v[off] | v[off + 1] << 8), perm = (uint16_t)(v[off + 2] & 7);
                if (tag == 0x01)
                        mode |= (mode_t)perm << 6;
                else if (tag == 0x04)
                        mode |= (mode_t)perm << 3;
                else if (tag == 0x10)
                        mask = (mode_t)perm << 3, has_mask = true;
                else if (tag == 0x20)
                        mode |= perm;
                else
                        return -EINVAL;
        }
        *ret_perm = has_mask ? (mode & ~(mode_t)070) | mask : mode;
        return 0;
}

/* A set the worker was refused (EPERM: another user's file) for a caller
 * holding CAP_FOWNER in the sandbox: an access ACL that amounts to a mode
 * is that chmod, which the proc agent applies with the caller's standing
 * (as for chmod itself; cp -a preserves modes this way). -ENOSYS when it
 * is not such a case (the refusal stands). */
static int set_by_agent(struct notify_call *call, const struct fs_target *t, const char *name, const void *value,
                        size_t size)
{
        mode_t perm;
        if (!streq(name, "system.posix_acl_access") || !fs_caller_overrides(call) ||
            acl_equiv_mode(value, size, &perm) < 0)
                return -ENOSYS;
        _cleanup_close_ int obj = t->fd >= 0 ? fcntl(t->fd, F_DUPFD_CLOEXEC, 3) : fs_target_pin(t);
        struct stat st;
        if (obj < 0 || fstat(obj, &st) < 0)
                return -ENOSYS;
        /* the kernel keeps the setuid, setgid and sticky bits of a file
         * whose ACL it turns into a mode; none is added here */
        return fs_agent_chmod(call, obj, (st.st_mode & 07000) | perm);
}

/* The xattr call op at at (through the magic link to a pinned object,
 * the following variant; on (dir, name), the l* one: name is not
 * followed), as the thread is. The result or -errno. */
static ssize_t xattr_at(enum xop op, const struct fs_at *at, const char *name, void *value, size_t size, int flags)
{
        bool nofollow = at->nofollow != 0;
        int r = fs_at_enter(at);
        if (r < 0)
                return r;
        ssize_t k = -EINVAL;
        switch (op) {
        case X_GET:
                k = nofollow ? lgetxattr(at->name, name, value, size) : getxattr(at->name, name, value, size);
                break;
        case X_SET:
                k = nofollow ? lsetxattr(at->name, name, value, size, flags)
                             : setxattr(at->name, name, value, size, flags);
                break;
        case X_LIST:
                k = nofollow ? llistxattr(at->name, value, size) : listxattr(at->name, value, size);
                break;
        case X_REMOVE:
                k = nofollow ? lremovexattr(at->name, name) : removexattr(at->name, name);
                break;
        }
        if (k < 0)
                k = -errno;
        fs_at_leave();
        return k;
}

/* Whether setting name on t's object is refused: a guarded name (a file
 * capability) anywhere but on the sandbox's own filesystems (fs/binds.c).
 * An object the call names without pinning it (lsetxattr) is judged by
 * what the name is now: a rename into its directory cannot bring in a
 * file of another mount. */
static bool guarded(const struct fs_context *ctx, const struct fs_target *t, const char *name)
{
        if (!fs_xattr_guarded(name))
                return false;
        if (t->fd >= 0)
                return !fs_on_private_layer(ctx, t->fd, NULL);
        struct stat st;
        return fstatat(t->dirfd, t->name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !fs_private_dev(ctx, st.st_dev);
}

/* The target of fsetxattr(2): the caller's fd, taken across once
 * (pidfd_getfd), so that the call acts on the file that was decided on
 * even if another thread dup2s something else onto the number. */
static int fd_target(struct notify_call *call, int child_fd, struct fs_target *ret)
{
        int fd = notify_dup_child_fd(call, child_fd);
        if (fd < 0)
                return fd;
        ret->fd = fd;
        ret->empty = true;
        return notify_id_valid(call) < 0 ? -ENOENT : 0;
}

/* Emulates getxattr(2), setxattr(2), fsetxattr(2), listxattr(2),
 * removexattr(2) and their l* variants against the view. */
int fs_handle_xattr(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        enum xop op;
        bool follow =
                d->nr == SYS_getxattr || d->nr == SYS_setxattr || d->nr == SYS_listxattr || d->nr == SYS_removexattr;
        bool by_fd = d->nr == SYS_fsetxattr;
        if (d->nr == SYS_getxattr || d->nr == SYS_lgetxattr)
                op = X_GET;
        else if (d->nr == SYS_setxattr || d->nr == SYS_lsetxattr || by_fd)
                op = X_SET;
        else if (d->nr == SYS_listxattr || d->nr == SYS_llistxattr)
                op = X_LIST;
        else
                op = X_REMOVE;
        char name[XATTR_NAME_MAX + 1];
        uint64_t valaddr = 0;
        size_t size = 0;
        int flags = 0;
        if (op != X_LIST) {
                ssize_t n = notify_read_string(call, d->args[1], name, sizeof(name));
                if (n == -ENAMETOOLONG || n == 0)
                        return deny(ret, -ERANGE);
                if (n < 0)
                        return deny(ret, (int)n);
                valaddr = d->args[2];
                size = (size_t)d->args[3];
        } else {
                valaddr = d->args[1];
                size = (size_t)d->args[2];
        }
        _cleanup_free_ char *value = NULL;
        switch (op) {
        case X_SET:
                flags = (int)d->args[4];
                if (flags & ~(XATTR_CREATE | XATTR_REPLACE))
                        return deny(ret, -EINVAL);
                if (size > XATTR_SIZE_MAX)
                        return deny(ret, -E2BIG);
                if (size) {
                        value = xmalloc(size);
                        int r = notify_read_mem(call, valaddr, value, size);
                        if (r < 0)
                                return deny(ret, r);
                        if (is_acl(name) && (r = acl_ids(call->userdata, (unsigned char *)value, size, false)) < 0)
                                return deny(ret, r);
                }
                break;
        case X_GET:
                if (size > XATTR_SIZE_MAX)
                        size = XATTR_SIZE_MAX;
                if (size)
                        value = xmalloc(size);
                break;
        case X_LIST:
                if (size > XATTR_LIST_MAX)
                        size = XATTR_LIST_MAX;
                if (size)
                        value = xmalloc(size);
                break;
        case X_REMOVE:
                break;
        }

        _cleanup_(fs_target_done) struct fs_target t = FS_TARGET_INIT;
        int r = by_fd ? fd_target(call, (int)d->args[0], &t)
                      : fs_resolve(call, AT_FDCWD, d->args[0], FS_NEED | (follow ? FS_FOLLOW : 0), &t);
        if (r < 0)
                return deny(ret, r);
        if (by_fd) {
                /* an O_PATH file: fsetxattr fails on it (EBADF) before looking */
                int fl = fcntl(t.fd, F_GETFL);
                if (fl >= 0 && (fl & O_PATH))
                        return deny(ret, -EBADF);
        }
        if (op == X_SET && guarded(call->userdata, &t, name))
                return deny(ret, -EPERM);
        if ((op == X_SET || op == X_REMOVE) && (r = fs_ask_write(call, &t, NULL, ret)) <= 0)
                return r;
        if (by_fd) {
                if ((r = fs_as_child_begin(call)) < 0)
                        return r;
                r = fsetxattr(t.fd, name, value, size, flags) < 0 ? -errno : 0;
                fs_as_child_end();
                if (r == -EPERM) {
                        int ar = set_by_agent(call, &t, name, value, size);
                        if (ar != -ENOSYS)
                                r = ar;
                }
                if (r < 0)
                        return deny(ret, r);
                ret->kind = VERDICT_VALUE;
                ret->value = 0;
                return 0;
        }
        struct fs_at at;
        fs_target_at(&t, call->hostproc_fd, &at);
        /* through the magic link to a pinned object, the following variant;
         * on (dir, name), the l* one: name is not followed */
        if ((r = fs_as_child_begin(call)) < 0)
                return r;
        ssize_t k = xattr_at(op, &at, name, value, size, flags);
        fs_as_child_end();
        if ((op == X_GET || op == X_LIST) && fs_pin_for_caller(call, (int)k, &t)) {
                /* a name in another user's 0700 directory, for root: on the
                 * object pinned as the caller (resolve.c) */
                fs_target_at(&t, call->hostproc_fd, &at);
                if ((r = fs_as_child_begin(call)) < 0)
                        return r;
                k = xattr_at(op, &at, name, value, size, flags);
                fs_as_child_end();
        }
        if (k == -EPERM && op == X_SET) {
                int ar = set_by_agent(call, &t, name, value, size);
                if (ar != -ENOSYS)
                        k = ar;
        } else if (k == -EPERM && op == X_REMOVE && is_acl(name) && fs_caller_overrides(call)) {
                /* an ACL dropped from another user's file (cp -a does so
                 * on directories): CAP_FOWNER, the agent's to apply */
                _cleanup_close_ int obj = fs_target_pin(&t);
                int ar = obj >= 0 ? fs_agent_removexattr(call, obj, name) : obj;
                if (ar != -ENOSYS)
                        k = ar;
        }
        if (k < 0)
                return deny(ret, (int)k);
        if (op == X_GET && size && k > 0 && is_acl(name))
                (void)acl_ids(call->userdata, (unsigned char *)value, (size_t)k, true);
        if ((op == X_GET || op == X_LIST) && size && k > 0) {
                r = notify_write_mem(call, valaddr, value, (size_t)k);
                if (r < 0)
                        return deny(ret, r);
        }
        ret->kind = VERDICT_VALUE;
        ret->value = k;
        return 0;
}
