/* The confined thread's helpers (transfers and snapshots): entering the
 * sandbox's view as the sandbox's own user with no capability left
 * (xfer_confine), and opening a path there that is resolved inside the view,
 * never through a magic link (xfer_open). */
#include "config.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#ifdef HAVE_LINUX_OPENAT2_H
#include <linux/openat2.h>
#endif

#include "fs/fs.h"
#include "sentry/sandbox/sandbox-internal.h"

int xfer_confine(const struct fs_context *ctx)
{
        int r = fs_worker_init((void *)ctx);
        if (r < 0)
                return r;
        /* not even CAP_SYS_PTRACE: /proc/PID/root and /proc/PID/fd magic
         * links of the sandbox's processes are then out of reach */
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
        struct __user_cap_data_struct d[2];
        if (syscall(SYS_capget, &h, d) < 0)
                return negative_errno();
        d[0].effective = d[1].effective = 0;
        if (syscall(SYS_capset, &h, d) < 0)
                return negative_errno();
        umask(022);
        return 0;
}

/* Opens path in the (chrooted) view: symlinks are followed inside it, magic
 * links never. */
int xfer_open(const char *path, int flags, mode_t mode)
{
#if defined(HAVE_LINUX_OPENAT2_H) && defined(SYS_openat2)
        struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
                               .mode = (flags & O_CREAT) ? mode : 0,
                               .resolve = RESOLVE_NO_MAGICLINKS};
        long fd = notify_feature_absent("openat2") ? (errno = ENOSYS, -1)
                                                   : syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
        if (fd >= 0)
                return (int)fd;
        if (errno != ENOSYS)
                return negative_errno();
#endif
        int fd2 = open(path, flags | O_CLOEXEC, mode);
        return fd2 < 0 ? negative_errno() : fd2;
}
