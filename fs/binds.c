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
#include <linux/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

#ifndef MOUNT_ATTR_IDMAP
#define MOUNT_ATTR_IDMAP 0x00100000
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif

struct binds_mount_attr {
        uint64_t attr_set, attr_clr, propagation, userns_fd;
};

int fs_bind_idmapped(int srcfd, int userns_fd, int *ret_fd)
{
        /* recursive, as init's own bind of a source is: a submount whose
         * filesystem cannot be idmapped makes the whole bind fail (closed) */
        _cleanup_close_ int fd = (int)syscall(SYS_open_tree, srcfd, "",
                                              OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
        if (fd < 0)
                return negative_errno();
        struct binds_mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                                     .userns_fd = (uint64_t)userns_fd};
        if (syscall(__NR_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0)
                return negative_errno();
        *ret_fd = TAKE_FD(fd);
        return 0;
}
