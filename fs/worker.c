/* A sentry worker thread's identity: its own fs context rooted in the view,
 * and the child's filesystem credentials. Credentials on Linux are per
 * thread at the syscall level; glibc's wrappers broadcast set*id and
 * setgroups to every thread, so the raw syscalls are used on purpose. */
#include "config.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/syscall.h>

#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

/* This thread's permitted set, as fs_worker_init left it: only this thread
 * changes its own credentials (raw capset), so switching the effective set
 * needs no capget each time (two system calls per emulated call saved). */
static __thread struct {
        bool known;
        uint32_t permitted[2];
} own_caps;

int fs_worker_init(void *userdata)
{
        const struct fs_context *ctx = userdata;

        /* A worker may be started by another worker and inherit its reduced
         * effective set and its fs context: take the permitted set back
         * first, then confine this thread afresh. */
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
        struct __user_cap_data_struct d[2];
        if (syscall(SYS_capget, &h, d) < 0)
                return negative_errno();
        d[0].effective = d[0].permitted;
        d[1].effective = d[1].permitted;
        if (syscall(SYS_capset, &h, d) < 0)
                return negative_errno();

        /* A private fs_struct: chroot and umask below touch this thread only. */
        if (unshare(CLONE_FS) < 0)
                return negative_errno();
        if (fchdir(ctx->root_fd) < 0)
                return negative_errno();
        /* The view's root becomes this thread's root: absolute paths and
         * absolute symlinks resolve inside it, and ".." stops at it, by the
         * kernel's own path walk (no hand-written canonicaliser). */
        if (chroot(".") < 0)
                return negative_errno();
        if (chdir("/") < 0)
                return negative_errno();

        if (!ctx->keep_groups && syscall(SYS_setgroups, 0, NULL) < 0)
                return negative_errno();
        syscall(SYS_setfsgid, ctx->fsgid);
        syscall(SYS_setfsuid, ctx->fsuid);
        if ((gid_t)syscall(SYS_setfsgid, -1) != ctx->fsgid || (uid_t)syscall(SYS_setfsuid, -1) != ctx->fsuid)
                return -EPERM;

        /* Keep only CAP_SYS_PTRACE effective: it lets this thread read the
         * caller's memory and /proc/TID entries; it grants nothing on file
         * permission checks, which are now the child's. The permitted set
         * is left as is so no other thread is affected. */
        if (syscall(SYS_capget, &h, d) < 0)
                return negative_errno();
        d[0].effective = (1U << CAP_SYS_PTRACE) & d[0].permitted;
        d[1].effective = 0;
        d[0].inheritable = d[1].inheritable = 0;
        if (syscall(SYS_capset, &h, d) < 0)
                return negative_errno();
        own_caps.permitted[0] = d[0].permitted;
        own_caps.permitted[1] = d[1].permitted;
        own_caps.known = true;
        return 0;
}

static int set_effective(uint32_t low)
{
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
        struct __user_cap_data_struct d[2] = {0};
        if (own_caps.known) {
                /* a permitted set that had shrunk meanwhile would make the
                 * capset below fail (EPERM): fail closed, never wider */
                d[0].permitted = own_caps.permitted[0];
                d[1].permitted = own_caps.permitted[1];
        } else if (syscall(SYS_capget, &h, d) < 0)
                return negative_errno();
        d[0].effective = low & d[0].permitted;
        d[1].effective = 0;
        if (syscall(SYS_capset, &h, d) < 0)
                return negative_errno();
        return 0;
}

int fs_as_child_begin(void)
{
        return set_effective(0);
}

void fs_as_child_end(void)
{
        /* cannot fail: the permitted set still holds CAP_SYS_PTRACE */
        (void)set_effective(1U << CAP_SYS_PTRACE);
}
