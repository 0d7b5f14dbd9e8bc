/* Small whole files read into memory (common/file.h). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/file.h"
#include "common/util.h"

#define FILE_TEXT_MAX (16u << 20)

int read_file_text(const char *path, char **ret)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        return read_fd_text(fd, ret);
}

int read_fd_text(int fd, char **ret)
{
        size_t cap = 4096, len = 0;
        _cleanup_free_ char *buf = xmalloc(cap);
        for (;;) {
                /* reads of 4 KiB or more: a procfs table (mountinfo)
                 * renders itself on from where each read stopped */
                if (cap - len <= 4096) {
                        if (cap >= FILE_TEXT_MAX)
                                return -EFBIG;
                        cap *= 2;
                        buf = xrealloc(buf, cap);
                }
                ssize_t n = read(fd, buf + len, cap - len - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        return 0;
}

bool dir_is_runtime_state(int dirfd)
{
        struct statfs sf;
        if (fstatfs(dirfd, &sf) == 0 && (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC))
                return true;
        char link[64], path[4096];
        snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
        ssize_t n = readlink(link, path, sizeof(path) - 1);
        if (n <= 0)
                return false; /* unknown: sync, as for any other state */
        path[n] = '\0';
        const char *xdg = getenv("XDG_RUNTIME_DIR");
        /* an $XDG_RUNTIME_DIR of "/" or a relative one names no runtime dir */
        return path_beneath(path, "/run") || (xdg && xdg[0] == '/' && xdg[1] && path_beneath(path, xdg));
}
