/* An OCI tmpfs mount's "tmpcopyup" (runc's and crun's, podman's default for
 * --tmpfs): the image's files at the mount point copied into the fresh
 * tmpfs, so that the mount starts with what the directory held. Runs in
 * init, in the view, while it still holds its capabilities: everything it
 * reads is the container's own image and everything it writes is the new
 * tmpfs, so nothing of the host is reached either way. Never follows a
 * symlink (each is copied as one) and never leaves the two trees (every
 * call is relative to a directory fd, O_NOFOLLOW). */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "common/util.h"
#include "fs/fs.h"

/* deeper than any image needs; a bound on the recursion */
#define COPYUP_MAX_DEPTH 128

/* owner, mode and times of st onto fd (path "" with AT_EMPTY_PATH); an
 * owner the namespace does not map stays init's (as a copy by an
 * unprivileged runc would leave it) */
static void copy_attrs(int fd, const struct stat *st, bool symlink)
{
        (void)!fchownat(fd, "", st->st_uid, st->st_gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW);
        if (symlink)
                return;
        (void)fchmod(fd, st->st_mode & 07777);
        struct timespec t[2] = {st->st_atim, st->st_mtim};
        (void)futimens(fd, t);
}

static int copy_file(int src, int dst, const char *name, const struct stat *st)
{
        _cleanup_close_ int in = openat(src, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (in < 0)
                return negative_errno();
        _cleanup_close_ int out = openat(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (out < 0)
                return negative_errno();
        int64_t n = copy_all(in, out);
        if (n < 0)
                return (int)n;
        copy_attrs(out, st, false);
        return 0;
}

static int copy_dir(int src, int dst, int depth, char *err, size_t errsize)
{
        if (depth > COPYUP_MAX_DEPTH)
                return -ELOOP;
        int dfd = fcntl(src, F_DUPFD_CLOEXEC, 3);
        if (dfd < 0)
                return negative_errno();
        DIR *d = fdopendir(dfd);
        if (!d) {
                int r = negative_errno();
                close(dfd);
                return r;
        }
        int r = 0;
        struct dirent *e;
        while (r >= 0 && (errno = 0, e = readdir(d))) {
                const char *name = e->d_name;
                struct stat st;
                if (streq(name, ".") || streq(name, ".."))
                        continue;
                if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        r = negative_errno();
                        break;
                }
                if (S_ISDIR(st.st_mode)) {
                        if (mkdirat(dst, name, 0700) < 0) {
                                r = negative_errno();
                                break;
                        }
                        _cleanup_close_ int s2 = openat(src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        _cleanup_close_ int d2 = openat(dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                        if (s2 < 0 || d2 < 0)
                                r = negative_errno();
                        else if ((r = copy_dir(s2, d2, depth + 1, err, errsize)) >= 0)
                                copy_attrs(d2, &st, false);
                } else if (S_ISREG(st.st_mode)) {
                        r = copy_file(src, dst, name, &st);
                } else if (S_ISLNK(st.st_mode)) {
                        char target[PATH_MAX];
                        ssize_t n = readlinkat(src, name, target, sizeof(target) - 1);
                        if (n < 0) {
                                r = negative_errno();
                                break;
                        }
                        target[n] = '\0';
                        if (symlinkat(target, dst, name) < 0) {
                                r = negative_errno();
                                break;
                        }
                        (void)!fchownat(dst, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
                } else if (S_ISFIFO(st.st_mode)) {
                        if (mkfifoat(dst, name, st.st_mode & 0777) < 0)
                                r = negative_errno();
                }
                /* device nodes and sockets are not copied: the tmpfs would
                 * not open the former (the sandbox's own filesystem, nodev)
                 * and the latter name no listener */
                if (r < 0 && !err[0])
                        snprintf(err, errsize, "%s", name);
        }
        if (r >= 0 && errno != 0)
                r = negative_errno();
        closedir(d);
        return r;
}

int fs_copyup(int srcfd, int dstfd, char *err, size_t errsize)
{
        /* the tmpfs's own root keeps the mode its options gave it */
        err[0] = '\0';
        return copy_dir(srcfd, dstfd, 0, err, errsize);
}
