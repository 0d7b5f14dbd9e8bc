/* Path walks that cordon itself makes inside a tree it must not leave (the
 * view during set-up, a template being hashed, the view's devpts): openat2
 * with RESOLVE_* where the kernel has it, else one component at a time with
 * O_NOFOLLOW. The fallback is stricter, never looser: it follows no symlink
 * at all and refuses "..", so it cannot leave the tree, but a path that
 * reaches its target through a symlink inside the tree fails with ELOOP. */
#include "config.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "common/util.h"
#include "fs/fs.h"
#include "notify/notify.h"

static bool openat2_usable(void)
{
        return !notify_feature_absent("openat2");
}

/* one plain component (no '/', not "..") below dirfd, following nothing */
static int step(int dirfd, const char *name, int flags)
{
        if (!*name || strchr(name, '/') || streq(name, ".."))
                return -EXDEV;
        int fd = openat(dirfd, name, flags | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        /* O_PATH|O_NOFOLLOW opens a symlink itself where RESOLVE_NO_SYMLINKS
         * would have refused it; refuse it here too unless asked for */
        struct stat st;
        if (!(flags & O_NOFOLLOW) && (flags & O_PATH) && (fstat(fd, &st) < 0 || S_ISLNK(st.st_mode))) {
                close(fd);
                return -ELOOP;
        }
        return fd;
}

static int mount_id(int fd, uint64_t *ret)
{
        struct statx sx;
        if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) < 0)
                return negative_errno();
        if (!(sx.stx_mask & STATX_MNT_ID))
                return -EOPNOTSUPP;
        *ret = sx.stx_mnt_id;
        return 0;
}

int fs_open_beneath_one(int dirfd, const char *name, int flags, bool same_mount)
{
        if (openat2_usable()) {
                struct open_how how = {
                        .flags = (uint64_t)(flags | O_CLOEXEC),
                        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
                                   (same_mount ? RESOLVE_NO_XDEV : 0),
                };
                int fd = (int)syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
                if (fd >= 0 || errno != ENOSYS)
                        return fd < 0 ? negative_errno() : fd;
        }
        int fd = step(dirfd, name, flags);
        if (fd < 0 || !same_mount || streq(name, "."))
                return fd;
        /* RESOLVE_NO_XDEV: the name must not be a mount point (or cross one) */
        uint64_t a, b;
        int r = mount_id(dirfd, &a);
        if (r >= 0)
                r = mount_id(fd, &b);
        if (r >= 0 && a != b)
                r = -EXDEV;
        if (r < 0) {
                close(fd);
                return r;
        }
        return fd;
}

int fs_open_in_root(int rootfd, const char *path, int flags)
{
        if (openat2_usable()) {
                struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
                                       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
                /* A ".." walked under RESOLVE_IN_ROOT fails with EAGAIN when any
                 * rename or mount on the host raced with it and asks to be
                 * retried; on a busy host, with other sandboxes mounting, that
                 * happens. */
                int fd, tries = 0;
                do
                        fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
                while (fd < 0 && errno == EAGAIN && ++tries < 100);
                if (fd >= 0 || errno != ENOSYS)
                        return fd < 0 ? negative_errno() : fd;
        }
        char buf[4096];
        if (strlen(path) >= sizeof(buf))
                return -ENAMETOOLONG;
        strcpy(buf, path);
        _cleanup_close_ int cur = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
        if (cur < 0)
                return negative_errno();
        bool walked = false;
        char *save = NULL;
        char *comp = strtok_r(buf, "/", &save);
        while (comp) {
                char *next = strtok_r(NULL, "/", &save);
                while (next && streq(next, "."))
                        next = strtok_r(NULL, "/", &save);
                if (streq(comp, ".")) {
                        comp = next;
                        continue;
                }
                int nfd = step(cur, comp, next ? O_PATH | O_DIRECTORY : flags);
                struct stat st;
                if (nfd == -ENOTDIR && next && fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
                        return -ELOOP; /* a symlink where a directory was needed */
                if (nfd < 0)
                        return nfd;
                close(cur);
                cur = nfd;
                walked = true;
                comp = next;
        }
        if (walked || (flags & O_PATH))
                return TAKE_FD(cur);
        /* the path named the root itself: reopen it with the caller's flags */
        int fd = openat(cur, ".", flags | O_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}
