/* The extended-attribute calls, emulated against the view. Sizes are
 * bounded as the kernel bounds them (XATTR_SIZE_MAX for a value,
 * XATTR_LIST_MAX for a list, XATTR_NAME_MAX for a name), so the child can
 * make the sentry allocate no more than the kernel would.
 *
 * Limitation: values that embed ids (system.posix_acl_*, v3
 * security.capability) are passed as the sentry's namespace renders them,
 * not translated into the child's. */
#include "config.h"

#include <fcntl.h>
#include <linux/xattr.h>
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

/* Emulates getxattr(2), setxattr(2), listxattr(2), removexattr(2) and
 * their l* variants against the view. */
int fs_handle_xattr(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        enum xop op;
        bool follow =
                d->nr == SYS_getxattr || d->nr == SYS_setxattr || d->nr == SYS_listxattr || d->nr == SYS_removexattr;
        if (d->nr == SYS_getxattr || d->nr == SYS_lgetxattr)
                op = X_GET;
        else if (d->nr == SYS_setxattr || d->nr == SYS_lsetxattr)
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
        int r = fs_resolve(call, AT_FDCWD, d->args[0], FS_NEED | (follow ? FS_FOLLOW : 0), &t);
        if (r < 0)
                return deny(ret, r);
        struct fs_at at;
        fs_target_at(&t, call->hostproc_fd, &at);
        /* through the magic link to a pinned object, the following variant;
         * on (dir, name), the l* one: name is not followed */
        bool nofollow = at.nofollow != 0;
        if ((r = fs_as_child_begin()) < 0)
                return r;
        ssize_t k;
        r = fs_at_enter(&at);
        if (r < 0)
                k = r;
        else {
                switch (op) {
                case X_GET:
                        k = nofollow ? lgetxattr(at.name, name, value, size) : getxattr(at.name, name, value, size);
                        break;
                case X_SET:
                        k = nofollow ? lsetxattr(at.name, name, value, size, flags)
                                     : setxattr(at.name, name, value, size, flags);
                        break;
                case X_LIST:
                        k = nofollow ? llistxattr(at.name, value, size) : listxattr(at.name, value, size);
                        break;
                case X_REMOVE:
                        k = nofollow ? lremovexattr(at.name, name) : removexattr(at.name, name);
                        break;
                }
                if (k < 0)
                        k = -errno;
                fs_at_leave();
        }
        fs_as_child_end();
        if (k < 0)
                return deny(ret, (int)k);
        if ((op == X_GET || op == X_LIST) && size && k > 0) {
                r = notify_write_mem(call, valaddr, value, (size_t)k);
                if (r < 0)
                        return deny(ret, r);
        }
        ret->kind = VERDICT_VALUE;
        ret->value = k;
        return 0;
}
