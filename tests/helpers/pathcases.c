/* pathcases: a table of path-syscall cases, run in a scratch tree, for
 * comparing cordon's emulation with the kernel (tests/integration/fs-semantics.sh).
 *
 *   pathcases ROOT
 *
 * ROOT is an empty directory, given by its absolute path as the run sees it
 * (the tree's absolute symlinks point into it), but for an optional
 * "notmine", a directory of another user's, which the not-owner cases act
 * on (else they act on ROOT, which is then to be someone else's). The helper drops every
 * capability first, so that a native run as uid 0 of a user namespace
 * (unshare -Ur) meets the same permission checks as the sandbox's command.
 * Each case prints one line:
 *
 *   NAME: SYSCALL = RET ERRNO [mode=... size=... nlink=... uid=... gid=... type=...]
 *
 * with ROOT replaced by "$ROOT" in anything printed. Inode numbers and
 * times are not printed (they differ between trees), except the times a
 * case set itself. Every call is the raw syscall, so each row of cordon's
 * table is exercised, not libc's choice of syscall. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "host-root.h"

#ifndef SYS_faccessat2
#define SYS_faccessat2 439
#endif
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE  (1 << 1)
#define RENAME_WHITEOUT  (1 << 2)
#endif

static const char *root;

static const char *ename(int e)
{
        const char *n = strerrorname_np(e);
        return n ? n : "E?";
}

static const char *type_of(mode_t m)
{
        switch (m & S_IFMT) {
        case S_IFREG:
                return "reg";
        case S_IFDIR:
                return "dir";
        case S_IFLNK:
                return "lnk";
        case S_IFIFO:
                return "fifo";
        case S_IFSOCK:
                return "sock";
        case S_IFCHR:
                return "chr";
        case S_IFBLK:
                return "blk";
        }
        return "?";
}

/* text with ROOT replaced, for printing */
static void unroot(const char *in, char *out, size_t size)
{
        size_t rl = strlen(root), o = 0;
        while (*in && o + 8 < size) {
                if (strncmp(in, root, rl) == 0) {
                        o += (size_t)snprintf(out + o, size - o, "$ROOT");
                        in += rl;
                } else
                        out[o++] = *in++;
        }
        out[o] = '\0';
}

static void line(const char *name, const char *call, long r, int err, const char *extra)
{
        printf("%s: %s = %ld %s%s%s\n", name, call, r, r < 0 ? ename(err) : "-", extra && *extra ? " " : "",
               extra ? extra : "");
}

/* A size, with the length of ROOT taken out of an absolute symlink's into
 * the tree (its content is ROOT plus two bytes: "/f" or "/d"). */
static const char *size_text(long long size, bool link, char *buf, size_t bufsize)
{
        if (link && size == (long long)strlen(root) + 2)
                snprintf(buf, bufsize, "$ROOT+2");
        else
                snprintf(buf, bufsize, "%lld", size);
        return buf;
}

static void st_text(const struct stat *st, char *buf, size_t size)
{
        /* a directory's size is its filesystem's business; the rest must match */
        char sz[32];
        snprintf(buf, size, "mode=0%o size=%s nlink=%lu uid=%u gid=%u type=%s", (unsigned)st->st_mode,
                 S_ISDIR(st->st_mode) ? "-" : size_text((long long)st->st_size, S_ISLNK(st->st_mode), sz, sizeof(sz)),
                 (unsigned long)st->st_nlink, (unsigned)st->st_uid, (unsigned)st->st_gid, type_of(st->st_mode));
}

/* a stat-like call: prints the fields when it worked */
static void show_stat(const char *name, const char *call, long r, int err, const struct stat *st)
{
        char extra[256] = "";
        if (r == 0)
                st_text(st, extra, sizeof(extra));
        line(name, call, r, err, extra);
}

/* the lstat of path afterwards, as part of a case's line */
static void show_after(const char *name, const char *call, long r, int err, const char *path)
{
        struct stat st;
        char extra[300] = "after: ";
        if (lstat(path, &st) == 0)
                st_text(&st, extra + 7, sizeof(extra) - 7);
        else
                snprintf(extra + 7, sizeof(extra) - 7, "absent (%s)", ename(errno));
        line(name, call, r, err, extra);
}

#define CALL(expr) (errno = 0, r = (long)(expr), e = errno)

static char longpath[5001];
static char longcomp[301];

static void mkfile(const char *p, const char *content, mode_t mode)
{
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
        if (fd < 0) {
                fprintf(stderr, "pathcases: create %s: %m\n", p);
                exit(2);
        }
        if (write(fd, content, strlen(content)) < 0)
                exit(2);
        close(fd);
}

static void setup(void)
{
        char p[PATH_MAX];
        mkfile("f", "hello", 0644);
        mkfile("g", "other file", 0600);
        if (mkdir("d", 0755) < 0 || mkdir("d/sub", 0700) < 0 || mkdir("e", 0755) < 0)
                exit(2);
        mkfile("d/g", "in d", 0640);
        snprintf(p, sizeof(p), "%s/f", root);
        if (symlink("f", "lf") < 0 || symlink(p, "la") < 0 || symlink("nonexistent", "ldang") < 0 ||
            symlink("lloop2", "lloop1") < 0 || symlink("lloop1", "lloop2") < 0 || symlink("lself", "lself") < 0 ||
            symlink("d", "ld") < 0 || symlink("../f", "d/lup") < 0 || symlink("/etc/passwd", "letc") < 0 ||
            symlink("/../../../etc/passwd", "letcdots") < 0)
                exit(2);
        snprintf(p, sizeof(p), "%s/d", root);
        if (symlink(p, "lda") < 0)
                exit(2);
        memset(longpath, 'a', sizeof(longpath) - 1);
        for (size_t i = 50; i < sizeof(longpath) - 1; i += 51)
                longpath[i] = '/';
        memset(longcomp, 'b', sizeof(longcomp) - 1);
}

/* the common path set: every stat-like call goes over it */
static const char *const paths[] = {
        "f",
        "d",
        "d/",
        "f/",
        "lf",
        "lf/",
        "la",
        "ldang",
        "lloop1",
        "lself",
        "ld",
        "ld/",
        "lda",
        "lda/g",
        "d/lup",
        "d/../f",
        "d/./g",
        "d//g",
        "nonexist",
        "nonexist/x",
        "f/x",
        "letc",
        "letcdots",
        "/etc/passwd",
        "/../../etc/passwd",
        ".",
        "..d",
        "d/sub",
        "LONGPATH",
        "LONGCOMP",
        "",
        /* the caller's own /proc entries (nothing printed names a pid) */
        "/proc/self/status",
        "/proc/self/",
        "/proc/thread-self/comm",
        "/proc/self/fd/",
        "/proc/self/fd",
        "/proc/thread-self/fd",
        "/proc/self/cwd",
        "/proc/self/cwd/f",
        "/proc/thread-self/cwd/lf",
        "/dev/stdin/",
        "/dev/fd/",
};

static const char *arg(const char *p)
{
        if (strcmp(p, "LONGPATH") == 0)
                return longpath;
        if (strcmp(p, "LONGCOMP") == 0)
                return longcomp;
        return p;
}

static void stat_cases(void)
{
        char name[128];
        long r;
        int e;
        struct stat st;
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
                const char *p = arg(paths[i]);
                snprintf(name, sizeof(name), "stat[%s]", paths[i]);
                CALL(syscall(SYS_stat, p, &st));
                show_stat(name, "stat", r, e, &st);
                snprintf(name, sizeof(name), "lstat[%s]", paths[i]);
                CALL(syscall(SYS_lstat, p, &st));
                show_stat(name, "lstat", r, e, &st);
                snprintf(name, sizeof(name), "fstatat-nofollow[%s]", paths[i]);
                CALL(syscall(SYS_newfstatat, AT_FDCWD, p, &st, AT_SYMLINK_NOFOLLOW));
                show_stat(name, "newfstatat", r, e, &st);
                struct statx stx;
                char sz[32];
                snprintf(name, sizeof(name), "statx[%s]", paths[i]);
                CALL(syscall(SYS_statx, AT_FDCWD, p, 0, STATX_BASIC_STATS, &stx));
                char extra[256] = "";
                if (r == 0)
                        snprintf(extra, sizeof(extra), "mode=0%o nlink=%u uid=%u gid=%u size=%s", stx.stx_mode,
                                 stx.stx_nlink, stx.stx_uid, stx.stx_gid,
                                 S_ISDIR(stx.stx_mode)
                                         ? "-"
                                         : size_text((long long)stx.stx_size, S_ISLNK(stx.stx_mode), sz, sizeof(sz)));
                line(name, "statx", r, e, extra);
                snprintf(name, sizeof(name), "access-r[%s]", paths[i]);
                CALL(syscall(SYS_access, p, R_OK));
                line(name, "access", r, e, NULL);
                snprintf(name, sizeof(name), "faccessat-wx[%s]", paths[i]);
                CALL(syscall(SYS_faccessat, AT_FDCWD, p, W_OK | X_OK));
                line(name, "faccessat", r, e, NULL);
                snprintf(name, sizeof(name), "faccessat2-nofollow[%s]", paths[i]);
                CALL(syscall(SYS_faccessat2, AT_FDCWD, p, R_OK, AT_SYMLINK_NOFOLLOW | AT_EACCESS));
                line(name, "faccessat2", r, e, NULL);
                char buf[PATH_MAX], shown[PATH_MAX + 128];
                snprintf(name, sizeof(name), "readlink[%s]", paths[i]);
                CALL(syscall(SYS_readlink, p, buf, sizeof(buf) - 1));
                shown[0] = '\0';
                if (r >= 0) {
                        buf[r] = '\0';
                        char u[PATH_MAX];
                        unroot(buf, u, sizeof(u));
                        if (strncmp(buf, root, strlen(root)) == 0) /* its length is ROOT's plus the rest */
                                snprintf(sz, sizeof(sz), "$ROOT+%ld", r - (long)strlen(root));
                        else
                                snprintf(sz, sizeof(sz), "%ld", r);
                        snprintf(shown, sizeof(shown), "(%s bytes) -> %s", sz, u);
                        r = 0;
                }
                line(name, "readlink", r, e, shown);
                struct statfs sfs;
                snprintf(name, sizeof(name), "statfs[%s]", paths[i]);
                CALL(syscall(SYS_statfs, p, &sfs));
                snprintf(extra, sizeof(extra), "type=0x%lx", r == 0 ? (unsigned long)sfs.f_type : 0UL);
                line(name, "statfs", r, e, r == 0 ? extra : NULL);
        }
        /* fd-relative and empty paths */
        int fd = open("f", O_RDONLY | O_CLOEXEC), dfd = open("d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int pfd = open("lf", O_PATH | O_NOFOLLOW | O_CLOEXEC);
        CALL(syscall(SYS_newfstatat, fd, "", &st, AT_EMPTY_PATH));
        show_stat("fstatat-empty-fd", "newfstatat", r, e, &st);
        CALL(syscall(SYS_newfstatat, fd, "", &st, 0));
        show_stat("fstatat-empty-no-flag", "newfstatat", r, e, &st);
        CALL(syscall(SYS_newfstatat, pfd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW));
        show_stat("fstatat-empty-opath-symlink", "newfstatat", r, e, &st);
        CALL(syscall(SYS_newfstatat, dfd, "g", &st, 0));
        show_stat("fstatat-dirfd-rel", "newfstatat", r, e, &st);
        CALL(syscall(SYS_newfstatat, dfd, "../f", &st, 0));
        show_stat("fstatat-dirfd-dotdot", "newfstatat", r, e, &st);
        CALL(syscall(SYS_newfstatat, fd, "x", &st, 0));
        show_stat("fstatat-filefd-rel", "newfstatat", r, e, &st);
        CALL(syscall(SYS_newfstatat, 999, "x", &st, 0));
        show_stat("fstatat-badfd-rel", "newfstatat", r, e, &st);
        CALL(syscall(SYS_newfstatat, AT_FDCWD, "f", &st, 0x40000));
        show_stat("fstatat-badflag", "newfstatat", r, e, &st);
        CALL(syscall(SYS_newfstatat, AT_FDCWD, (char *)8, &st, 0));
        show_stat("fstatat-efault-path", "newfstatat", r, e, &st);
        CALL(syscall(SYS_newfstatat, AT_FDCWD, "f", (void *)8, 0));
        line("fstatat-efault-buf", "newfstatat", r, e, NULL);
        struct statx stx;
        CALL(syscall(SYS_statx, fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx));
        line("statx-empty-fd", "statx", r, e, NULL);
        CALL(syscall(SYS_statx, AT_FDCWD, "f", 0x6000, STATX_BASIC_STATS, &stx));
        line("statx-bad-sync", "statx", r, e, NULL);
        CALL(syscall(SYS_faccessat2, fd, "", R_OK, AT_EMPTY_PATH));
        line("faccessat2-empty", "faccessat2", r, e, NULL);
        CALL(syscall(SYS_faccessat2, AT_FDCWD, "f", R_OK, 0x1));
        line("faccessat2-badflag", "faccessat2", r, e, NULL);
        CALL(syscall(SYS_access, "f", 0100));
        line("access-badmode", "access", r, e, NULL);
        char buf[8];
        CALL(syscall(SYS_readlink, "lf", buf, 0));
        line("readlink-size0", "readlink", r, e, NULL);
        CALL(syscall(SYS_readlinkat, AT_FDCWD, "ldang", buf, 3));
        snprintf(buf + (r > 0 ? r : 0), 2, "%s", "");
        line("readlinkat-truncated", "readlinkat", r, e, r > 0 ? buf : NULL);
        CALL(syscall(SYS_readlinkat, dfd, "lup", buf, sizeof(buf) - 1));
        line("readlinkat-dirfd", "readlinkat", r, e, NULL);
        CALL(syscall(SYS_readlink, "lf", (void *)8, 10));
        line("readlink-efault", "readlink", r, e, NULL);
        close(fd);
        close(dfd);
        close(pfd);
}

static void create_cases(void)
{
        long r;
        int e;
        umask(022);
        CALL(syscall(SYS_mkdir, "m1", 0777));
        show_after("mkdir-new", "mkdir", r, e, "m1");
        CALL(syscall(SYS_mkdir, "m2/", 0700));
        show_after("mkdir-trailing-slash", "mkdir", r, e, "m2");
        CALL(syscall(SYS_mkdir, "d", 0777));
        line("mkdir-exists", "mkdir", r, e, NULL);
        CALL(syscall(SYS_mkdir, "ldang", 0777));
        line("mkdir-dangling", "mkdir", r, e, NULL);
        CALL(syscall(SYS_mkdir, "nonexist/x", 0777));
        line("mkdir-noparent", "mkdir", r, e, NULL);
        CALL(syscall(SYS_mkdir, "f/x", 0777));
        line("mkdir-notdir", "mkdir", r, e, NULL);
        CALL(syscall(SYS_mkdir, longcomp, 0777));
        line("mkdir-longcomp", "mkdir", r, e, NULL);
        umask(077);
        CALL(syscall(SYS_mkdirat, AT_FDCWD, "m3", 0777));
        show_after("mkdirat-umask077", "mkdirat", r, e, "m3");
        umask(022);
        int dfd = open("d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CALL(syscall(SYS_mkdirat, dfd, "m4", 0751));
        show_after("mkdirat-dirfd", "mkdirat", r, e, "d/m4");
        CALL(syscall(SYS_mknod, "p1", S_IFIFO | 0666, 0));
        show_after("mknod-fifo", "mknod", r, e, "p1");
        CALL(syscall(SYS_mknod, "s1", S_IFSOCK | 0644, 0));
        show_after("mknod-sock", "mknod", r, e, "s1");
        CALL(syscall(SYS_mknod, "r1", 0640, 0));
        show_after("mknod-regular-0", "mknod", r, e, "r1");
        CALL(syscall(SYS_mknodat, AT_FDCWD, "r2", S_IFREG | 0600, 0));
        show_after("mknodat-regular", "mknodat", r, e, "r2");
        CALL(syscall(SYS_mknod, "c1", S_IFCHR | 0600, makedev(1, 3)));
        show_after("mknod-chr", "mknod", r, e, "c1");
        CALL(syscall(SYS_mknod, "b1", S_IFBLK | 0600, makedev(8, 0)));
        show_after("mknod-blk", "mknod", r, e, "b1");
        CALL(syscall(SYS_mknod, "w1", S_IFCHR | 0600, 0));
        line("mknod-whiteout", "mknod", r, e, NULL);
        CALL(syscall(SYS_mknod, "f", S_IFIFO | 0600, 0));
        line("mknod-exists", "mknod", r, e, NULL);
        CALL(syscall(SYS_mknod, "x1", S_IFDIR | 0600, 0));
        line("mknod-dir", "mknod", r, e, NULL);
        CALL(syscall(SYS_symlink, "f", "sl1"));
        show_after("symlink-new", "symlink", r, e, "sl1");
        CALL(syscall(SYS_symlink, "f", "sl1"));
        line("symlink-exists", "symlink", r, e, NULL);
        CALL(syscall(SYS_symlink, "", "sl2"));
        line("symlink-empty-target", "symlink", r, e, NULL);
        CALL(syscall(SYS_symlinkat, "../../x", dfd, "sl3"));
        show_after("symlinkat-dirfd", "symlinkat", r, e, "d/sl3");
        CALL(syscall(SYS_symlink, "f", "nonexist/sl"));
        line("symlink-noparent", "symlink", r, e, NULL);
        CALL(syscall(SYS_symlink, "f", "sl4/"));
        line("symlink-trailing-slash", "symlink", r, e, NULL);
        close(dfd);
}

/* An openat that may create: its result (an fd shown as 0) and the lstat
 * of what it names afterwards. */
static void open_case(const char *name, int flags, mode_t mode, const char *path, const char *after)
{
        long r;
        int e;
        CALL(syscall(SYS_openat, AT_FDCWD, arg(path), flags | O_CLOEXEC, mode));
        if (r >= 0) {
                close((int)r);
                r = 0;
        }
        show_after(name, "openat", r, e, after ? after : path);
}

/* Exclusive creates run natively on the fast path, the other creating
 * opens are emulated: both must answer as the kernel does. */
static void open_create_cases(void)
{
        umask(022);
        open_case("open-excl-new", O_RDWR | O_CREAT | O_EXCL, 0666, "o1", NULL);
        open_case("open-excl-exists", O_RDWR | O_CREAT | O_EXCL, 0666, "f", NULL);
        open_case("open-excl-dir", O_WRONLY | O_CREAT | O_EXCL, 0666, "d", NULL);
        open_case("open-excl-dangling", O_WRONLY | O_CREAT | O_EXCL, 0666, "ldang", NULL);
        open_case("open-excl-symlink", O_WRONLY | O_CREAT | O_EXCL, 0666, "lf", NULL);
        open_case("open-excl-selfloop", O_WRONLY | O_CREAT | O_EXCL, 0666, "lself", NULL);
        open_case("open-excl-trailing-slash", O_WRONLY | O_CREAT | O_EXCL, 0666, "o2/", "o2");
        open_case("open-excl-noparent", O_WRONLY | O_CREAT | O_EXCL, 0666, "nonexist/x", NULL);
        open_case("open-excl-notdir", O_WRONLY | O_CREAT | O_EXCL, 0666, "f/x", NULL);
        open_case("open-excl-through-link-dir", O_WRONLY | O_CREAT | O_EXCL, 0600, "ld/o3", "d/o3");
        open_case("open-excl-longcomp", O_WRONLY | O_CREAT | O_EXCL, 0666, "LONGCOMP", NULL);
        open_case("open-excl-proc", O_RDWR | O_CREAT | O_EXCL, 0600, "/proc/self/mem", "/proc/self/mem");
        open_case("open-excl-trunc", O_WRONLY | O_CREAT | O_EXCL | O_TRUNC, 0640, "o4", NULL);
        umask(077);
        open_case("open-excl-umask077", O_RDWR | O_CREAT | O_EXCL, 0666, "o5", NULL);
        umask(022);
        open_case("open-creat-new", O_WRONLY | O_CREAT | O_TRUNC, 0644, "o6", NULL);
        open_case("open-creat-exists", O_WRONLY | O_CREAT | O_TRUNC, 0600, "g", NULL);
        open_case("open-creat-dangling", O_WRONLY | O_CREAT, 0600, "ldang", "nonexistent");
        open_case("open-excl-noncreat", O_WRONLY | O_EXCL, 0600, "o6", NULL);
        unlink("nonexistent");
}

static void link_cases(void)
{
        long r;
        int e;
        CALL(syscall(SYS_link, "f", "hl1"));
        show_after("link-file", "link", r, e, "f");
        CALL(syscall(SYS_link, "d", "hl2"));
        line("link-dir", "link", r, e, NULL);
        CALL(syscall(SYS_link, "lf", "hl3"));
        show_after("link-symlink-nofollow", "link", r, e, "hl3");
        CALL(syscall(SYS_linkat, AT_FDCWD, "lf", AT_FDCWD, "hl4", AT_SYMLINK_FOLLOW));
        show_after("linkat-follow", "linkat", r, e, "hl4");
        CALL(syscall(SYS_linkat, AT_FDCWD, "ldang", AT_FDCWD, "hl5", AT_SYMLINK_FOLLOW));
        line("linkat-follow-dangling", "linkat", r, e, NULL);
        CALL(syscall(SYS_link, "f", "g"));
        line("link-exists", "link", r, e, NULL);
        CALL(syscall(SYS_linkat, AT_FDCWD, "f", AT_FDCWD, "hl6", 0x8000));
        line("linkat-badflag", "linkat", r, e, NULL);
        CALL(syscall(SYS_link, "nonexist", "hl7"));
        line("link-noent", "link", r, e, NULL);
}

static void rename_cases(void)
{
        long r;
        int e;
        mkfile("ra", "aaa", 0644);
        mkfile("rb", "bbbbbb", 0644);
        CALL(syscall(SYS_rename, "ra", "rc"));
        show_after("rename-file", "rename", r, e, "rc");
        CALL(syscall(SYS_rename, "rc", "rb"));
        show_after("rename-over", "rename", r, e, "rb");
        CALL(syscall(SYS_rename, "nonexist", "rd"));
        line("rename-noent", "rename", r, e, NULL);
        CALL(syscall(SYS_rename, "d", "d/sub/x"));
        line("rename-into-self", "rename", r, e, NULL);
        CALL(syscall(SYS_rename, "m1", "f"));
        line("rename-dir-over-file", "rename", r, e, NULL);
        CALL(syscall(SYS_rename, "f", "d"));
        line("rename-file-over-dir", "rename", r, e, NULL);
        CALL(syscall(SYS_rename, "m1", "d"));
        line("rename-dir-over-nonempty", "rename", r, e, NULL);
        CALL(syscall(SYS_rename, "m3", "m2"));
        show_after("rename-dir-over-empty", "rename", r, e, "m2");
        CALL(syscall(SYS_rename, "lf", "lf2"));
        show_after("rename-symlink", "rename", r, e, "lf2");
        CALL(syscall(SYS_rename, "lf2", "lf"));
        line("rename-symlink-back", "rename", r, e, NULL);
        CALL(syscall(SYS_rename, "f/", "x"));
        line("rename-file-slash", "rename", r, e, NULL);
        CALL(syscall(SYS_rename, ".", "x"));
        line("rename-dot", "rename", r, e, NULL);
        int dfd = open("d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CALL(syscall(SYS_renameat, dfd, "g", AT_FDCWD, "dg"));
        show_after("renameat-dirfd", "renameat", r, e, "dg");
        CALL(syscall(SYS_renameat, AT_FDCWD, "dg", dfd, "g"));
        line("renameat-back", "renameat", r, e, NULL);
        mkfile("xa", "1", 0644);
        mkfile("xb", "22", 0600);
        CALL(syscall(SYS_renameat2, AT_FDCWD, "xa", AT_FDCWD, "xb", RENAME_NOREPLACE));
        line("renameat2-noreplace-exists", "renameat2", r, e, NULL);
        CALL(syscall(SYS_renameat2, AT_FDCWD, "xa", AT_FDCWD, "xc", RENAME_NOREPLACE));
        show_after("renameat2-noreplace-new", "renameat2", r, e, "xc");
        CALL(syscall(SYS_renameat2, AT_FDCWD, "xc", AT_FDCWD, "xb", RENAME_EXCHANGE));
        show_after("renameat2-exchange", "renameat2", r, e, "xb");
        CALL(syscall(SYS_renameat2, AT_FDCWD, "xc", AT_FDCWD, "xz", RENAME_EXCHANGE));
        line("renameat2-exchange-noent", "renameat2", r, e, NULL);
        CALL(syscall(SYS_renameat2, AT_FDCWD, "xc", AT_FDCWD, "xd", RENAME_WHITEOUT));
        line("renameat2-whiteout", "renameat2", r, e, NULL);
        CALL(syscall(SYS_renameat2, AT_FDCWD, "xc", AT_FDCWD, "xd", RENAME_NOREPLACE | RENAME_EXCHANGE));
        line("renameat2-bad-combo", "renameat2", r, e, NULL);
        CALL(syscall(SYS_renameat2, AT_FDCWD, "xc", AT_FDCWD, "xd", 8));
        line("renameat2-bad-flag", "renameat2", r, e, NULL);
        close(dfd);
}

static void remove_cases(void)
{
        long r;
        int e;
        CALL(syscall(SYS_unlink, "r1"));
        show_after("unlink-file", "unlink", r, e, "r1");
        CALL(syscall(SYS_unlink, "d"));
        line("unlink-dir", "unlink", r, e, NULL);
        CALL(syscall(SYS_unlink, "nonexist"));
        line("unlink-noent", "unlink", r, e, NULL);
        CALL(syscall(SYS_unlink, "hl3"));
        show_after("unlink-symlink", "unlink", r, e, "f");
        CALL(syscall(SYS_unlink, "f/"));
        line("unlink-file-slash", "unlink", r, e, NULL);
        CALL(syscall(SYS_rmdir, "m2"));
        show_after("rmdir-empty", "rmdir", r, e, "m2");
        CALL(syscall(SYS_rmdir, "d"));
        line("rmdir-nonempty", "rmdir", r, e, NULL);
        CALL(syscall(SYS_rmdir, "f"));
        line("rmdir-file", "rmdir", r, e, NULL);
        CALL(syscall(SYS_rmdir, "."));
        line("rmdir-dot", "rmdir", r, e, NULL);
        CALL(syscall(SYS_rmdir, "m1/.."));
        line("rmdir-dotdot", "rmdir", r, e, NULL);
        CALL(syscall(SYS_rmdir, "ld"));
        line("rmdir-symlink", "rmdir", r, e, NULL);
        CALL(syscall(SYS_rmdir, "ld/"));
        line("rmdir-symlink-slash", "rmdir", r, e, NULL);
        CALL(syscall(SYS_unlinkat, AT_FDCWD, "m1", AT_REMOVEDIR));
        show_after("unlinkat-removedir", "unlinkat", r, e, "m1");
        CALL(syscall(SYS_unlinkat, AT_FDCWD, "s1", 0x100));
        line("unlinkat-badflag", "unlinkat", r, e, NULL);
        CALL(syscall(SYS_unlinkat, AT_FDCWD, "s1", 0));
        show_after("unlinkat-sock", "unlinkat", r, e, "s1");
}

static void attr_cases(void)
{
        long r;
        int e;
        CALL(syscall(SYS_chmod, "g", 0604));
        show_after("chmod-file", "chmod", r, e, "g");
        CALL(syscall(SYS_chmod, "lf", 0640));
        show_after("chmod-follow", "chmod", r, e, "f");
        CALL(syscall(SYS_chmod, "ldang", 0640));
        line("chmod-dangling", "chmod", r, e, NULL);
        CALL(syscall(SYS_fchmodat, AT_FDCWD, "d/sub", 0751));
        show_after("fchmodat", "fchmodat", r, e, "d/sub");
        CALL(syscall(SYS_fchmodat2, AT_FDCWD, "lf", 0600, AT_SYMLINK_NOFOLLOW));
        line("fchmodat2-nofollow-symlink", "fchmodat2", r, e, NULL);
        /* another user's directory (the harness's notmine, else the tree's root) */
        const char *notmine = access("notmine", F_OK) == 0 ? "notmine" : ".";
        CALL(syscall(SYS_chmod, notmine, 0777));
        line("chmod-not-owner", "chmod", r, e, NULL);
        CALL(syscall(SYS_chown, "g", 0, 0));
        show_after("chown-self", "chown", r, e, "g");
        CALL(syscall(SYS_chown, "g", -1, -1));
        line("chown-nochange", "chown", r, e, NULL);
        /* 70000: past a root-started sandbox's range of 65,536 ids too */
        CALL(syscall(SYS_chown, "g", 70000, -1));
        line("chown-unmapped-uid", "chown", r, e, NULL);
        CALL(syscall(SYS_chown, "g", -1, 70000));
        line("chown-unmapped-gid", "chown", r, e, NULL);
        CALL(syscall(SYS_lchown, "lf", 0, 0));
        show_after("lchown", "lchown", r, e, "lf");
        CALL(syscall(SYS_fchownat, AT_FDCWD, "ldang", 0, 0, AT_SYMLINK_NOFOLLOW));
        line("fchownat-nofollow-dangling", "fchownat", r, e, NULL);
        CALL(syscall(SYS_fchownat, AT_FDCWD, "ldang", 0, 0, 0));
        line("fchownat-follow-dangling", "fchownat", r, e, NULL);
        CALL(syscall(SYS_chown, notmine, 0, 0));
        line("chown-not-owner", "chown", r, e, NULL);

        struct timespec ts[2] = {{1000000000, 5}, {1200000000, 7}};
        struct stat st;
        char extra[128];
        CALL(syscall(SYS_utimensat, AT_FDCWD, "g", ts, 0));
        stat("g", &st);
        snprintf(extra, sizeof(extra), "atime=%lld.%ld mtime=%lld.%ld", (long long)st.st_atim.tv_sec,
                 st.st_atim.tv_nsec, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
        line("utimensat", "utimensat", r, e, extra);
        CALL(syscall(SYS_utimensat, AT_FDCWD, "lf", ts, AT_SYMLINK_NOFOLLOW));
        lstat("lf", &st);
        snprintf(extra, sizeof(extra), "mtime=%lld", (long long)st.st_mtim.tv_sec);
        line("utimensat-nofollow", "utimensat", r, e, extra);
        int fd = open("f", O_RDONLY | O_CLOEXEC);
        ts[1].tv_sec = 1300000000;
        CALL(syscall(SYS_utimensat, fd, NULL, ts, 0));
        fstat(fd, &st);
        snprintf(extra, sizeof(extra), "mtime=%lld", (long long)st.st_mtim.tv_sec);
        line("utimensat-null-path", "utimensat", r, e, extra);
        CALL(syscall(SYS_utimensat, AT_FDCWD, NULL, ts, 0));
        line("utimensat-null-cwd", "utimensat", r, e, NULL);
        CALL(syscall(SYS_utimensat, fd, NULL, ts, AT_SYMLINK_NOFOLLOW));
        line("utimensat-null-flags", "utimensat", r, e, NULL);
        struct timespec bad[2] = {{0, 2000000000L}, {0, 0}};
        CALL(syscall(SYS_utimensat, AT_FDCWD, "g", bad, 0));
        line("utimensat-bad-nsec", "utimensat", r, e, NULL);
        CALL(syscall(SYS_utimensat, AT_FDCWD, notmine, ts, 0));
        line("utimensat-not-owner", "utimensat", r, e, NULL);
        struct timeval tv[2] = {{1100000000, 3}, {1110000000, 4}};
        CALL(syscall(SYS_utimes, "g", tv));
        stat("g", &st);
        snprintf(extra, sizeof(extra), "mtime=%lld.%ld", (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
        line("utimes", "utimes", r, e, extra);
        tv[0].tv_usec = 1000000;
        CALL(syscall(SYS_utimes, "g", tv));
        line("utimes-bad-usec", "utimes", r, e, NULL);
        tv[0].tv_usec = 0;
        CALL(syscall(SYS_futimesat, AT_FDCWD, "g", tv));
        line("futimesat", "futimesat", r, e, NULL);
        CALL(syscall(SYS_futimesat, fd, NULL, tv));
        line("futimesat-null", "futimesat", r, e, NULL);
        close(fd);

        CALL(syscall(SYS_truncate, "g", 3L));
        show_after("truncate", "truncate", r, e, "g");
        CALL(syscall(SYS_truncate, "lf", 2L));
        show_after("truncate-follow", "truncate", r, e, "f");
        CALL(syscall(SYS_truncate, "d", 0L));
        line("truncate-dir", "truncate", r, e, NULL);
        CALL(syscall(SYS_truncate, "g", -1L));
        line("truncate-negative", "truncate", r, e, NULL);
        CALL(syscall(SYS_truncate, "/etc/passwd", 0L));
        line("truncate-not-writable", "truncate", r, e, NULL);
}

static void xattr_cases(void)
{
        long r;
        int e;
        char buf[256];
        CALL(syscall(SYS_setxattr, "g", "user.t", "value", 5, 0));
        line("setxattr", "setxattr", r, e, NULL);
        CALL(syscall(SYS_setxattr, "g", "user.t", "value", 5, XATTR_CREATE));
        line("setxattr-create-exists", "setxattr", r, e, NULL);
        CALL(syscall(SYS_setxattr, "g", "user.u", "v", 1, XATTR_REPLACE));
        line("setxattr-replace-absent", "setxattr", r, e, NULL);
        CALL(syscall(SYS_setxattr, "g", "user.t", "v", 1, 4));
        line("setxattr-badflag", "setxattr", r, e, NULL);
        CALL(syscall(SYS_setxattr, "g", "user.t", "v", 70000, 0));
        line("setxattr-too-big", "setxattr", r, e, NULL);
        CALL(syscall(SYS_setxattr, "g", "", "v", 1, 0));
        line("setxattr-empty-name", "setxattr", r, e, NULL);
        char lname[300];
        memset(lname, 'n', sizeof(lname) - 1);
        lname[sizeof(lname) - 1] = '\0';
        memcpy(lname, "user.", 5);
        CALL(syscall(SYS_setxattr, "g", lname, "v", 1, 0));
        line("setxattr-long-name", "setxattr", r, e, NULL);
        CALL(syscall(SYS_lsetxattr, "lf", "user.t", "v", 1, 0));
        line("lsetxattr-symlink", "lsetxattr", r, e, NULL);
        CALL(syscall(SYS_setxattr, "lf", "user.s", "via", 3, 0));
        line("setxattr-follow", "setxattr", r, e, NULL);
        CALL(syscall(SYS_getxattr, "g", "user.t", NULL, 0));
        line("getxattr-size", "getxattr", r, e, NULL);
        memset(buf, 0, sizeof(buf));
        CALL(syscall(SYS_getxattr, "g", "user.t", buf, sizeof(buf)));
        line("getxattr", "getxattr", r, e, r > 0 ? buf : NULL);
        CALL(syscall(SYS_getxattr, "g", "user.t", buf, 2));
        line("getxattr-small", "getxattr", r, e, NULL);
        CALL(syscall(SYS_getxattr, "g", "user.none", buf, sizeof(buf)));
        line("getxattr-absent", "getxattr", r, e, NULL);
        CALL(syscall(SYS_getxattr, "lf", "user.s", buf, sizeof(buf)));
        line("getxattr-follow", "getxattr", r, e, NULL);
        CALL(syscall(SYS_lgetxattr, "lf", "user.s", buf, sizeof(buf)));
        line("lgetxattr-symlink", "lgetxattr", r, e, NULL);
        CALL(syscall(SYS_getxattr, "g", "user.t", (void *)8, sizeof(buf)));
        line("getxattr-efault", "getxattr", r, e, NULL);
        CALL(syscall(SYS_getxattr, "nonexist", "user.t", buf, sizeof(buf)));
        line("getxattr-noent", "getxattr", r, e, NULL);
        CALL(syscall(SYS_listxattr, "g", buf, sizeof(buf)));
        line("listxattr", "listxattr", r, e, NULL);
        CALL(syscall(SYS_listxattr, "g", NULL, 0));
        line("listxattr-size", "listxattr", r, e, NULL);
        CALL(syscall(SYS_listxattr, "g", buf, 1));
        line("listxattr-small", "listxattr", r, e, NULL);
        CALL(syscall(SYS_llistxattr, "lf", buf, sizeof(buf)));
        line("llistxattr-symlink", "llistxattr", r, e, NULL);
        CALL(syscall(SYS_removexattr, "g", "user.t"));
        line("removexattr", "removexattr", r, e, NULL);
        CALL(syscall(SYS_removexattr, "g", "user.t"));
        line("removexattr-absent", "removexattr", r, e, NULL);
        CALL(syscall(SYS_lremovexattr, "lf", "user.s"));
        line("lremovexattr-symlink", "lremovexattr", r, e, NULL);
        CALL(syscall(SYS_removexattr, "lf", "user.s"));
        line("removexattr-follow", "removexattr", r, e, NULL);
        CALL(syscall(SYS_getxattr, "/etc/passwd", "user.t", buf, sizeof(buf)));
        line("getxattr-host-file", "getxattr", r, e, NULL);
}

static void misc_cases(void)
{
        long r;
        int e;
        int in = inotify_init1(IN_CLOEXEC);
        CALL(syscall(SYS_inotify_add_watch, in, "d", IN_CREATE));
        line("inotify-dir", "inotify_add_watch", r, e, NULL);
        CALL(syscall(SYS_inotify_add_watch, in, "f", IN_MODIFY));
        line("inotify-file", "inotify_add_watch", r, e, NULL);
        CALL(syscall(SYS_inotify_add_watch, in, "f", IN_MODIFY | IN_ONLYDIR));
        line("inotify-onlydir", "inotify_add_watch", r, e, NULL);
        CALL(syscall(SYS_inotify_add_watch, in, "nonexist", IN_MODIFY));
        line("inotify-noent", "inotify_add_watch", r, e, NULL);
        CALL(syscall(SYS_inotify_add_watch, in, "ldang", IN_MODIFY | IN_DONT_FOLLOW));
        line("inotify-dontfollow", "inotify_add_watch", r, e, NULL);
        CALL(syscall(SYS_inotify_add_watch, 999, "d", IN_CREATE));
        line("inotify-badfd", "inotify_add_watch", r, e, NULL);
        /* the watch reports an event made afterwards */
        mkfile("d/newfile", "x", 0644);
        char ev[512];
        ssize_t n = read(in, ev, sizeof(ev));
        char extra[600] = "";
        if (n >= (ssize_t)sizeof(struct inotify_event)) {
                struct inotify_event *ie = (struct inotify_event *)ev;
                snprintf(extra, sizeof(extra), "wd=%d mask=0x%x name=%s", ie->wd, ie->mask, ie->len ? ie->name : "");
        }
        line("inotify-event", "read", n > 0 ? 0 : -1, errno, extra);
        close(in);

        int here = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        char cwd[PATH_MAX], u[PATH_MAX + 32];
        CALL(syscall(SYS_chdir, "d/sub"));
        if (!getcwd(cwd, sizeof(cwd)))
                snprintf(cwd, sizeof(cwd), "?");
        unroot(cwd, u, sizeof(u));
        line("chdir", "chdir", r, e, u);
        CALL(syscall(SYS_chdir, "../../ld/"));
        if (!getcwd(cwd, sizeof(cwd)))
                snprintf(cwd, sizeof(cwd), "?");
        unroot(cwd, u, sizeof(u));
        line("chdir-symlink", "chdir", r, e, u);
        if (fchdir(here) < 0)
                exit(2);
        CALL(syscall(SYS_chdir, "f"));
        line("chdir-file", "chdir", r, e, NULL);
        CALL(syscall(SYS_chdir, "nonexist"));
        line("chdir-noent", "chdir", r, e, NULL);
        CALL(syscall(SYS_chmod, "e", 0600));
        CALL(syscall(SYS_chdir, "e"));
        line("chdir-no-search", "chdir", r, e, NULL);
        struct stat st;
        CALL(syscall(SYS_stat, "e/x", &st));
        line("stat-no-search", "stat", r, e, NULL);
        CALL(syscall(SYS_chmod, "e", 0755));
        if (fchdir(here) < 0)
                exit(2);
        close(here);
        /* the root's "..", and an absolute path through it */
        CALL(syscall(SYS_chdir, "/"));
        CALL(syscall(SYS_stat, "..", &st));
        struct stat rst;
        stat("/", &rst);
        line("dotdot-at-root-is-root", "stat", r, e,
             st.st_ino == rst.st_ino && st.st_dev == rst.st_dev ? "same" : "differs");
        if (chdir(root) < 0)
                exit(2);
        /* permission: a file nobody may read, for a caller without capabilities */
        mkfile("secret0", "x", 0000);
        CALL(syscall(SYS_access, "secret0", R_OK));
        line("access-mode-000", "access", r, e, NULL);
        CALL(syscall(SYS_getxattr, "secret0", "user.t", NULL, 0));
        line("getxattr-mode-000", "getxattr", r, e, NULL);
}

static void drop_caps(void)
{
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
        struct __user_cap_data_struct d[2] = {{0}};
        if (syscall(SYS_capset, &h, d) < 0) {
                fprintf(stderr, "pathcases: capset: %m\n");
                exit(2);
        }
}

int main(int argc, char **argv)
{
        if (argc != 2 || argv[1][0] != '/') {
                fprintf(stderr, "usage: pathcases ABSOLUTE-EMPTY-DIR\n");
                return 2;
        }
        root = argv[1];
        if (host_root()) {
                fprintf(stderr, "pathcases: refusing to run as the host's root, which owns the files some cases "
                                "try to change (/etc/passwd); run it as another uid or under unshare -Ur\n");
                return 2;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        drop_caps();
        umask(022);
        if (chdir(root) < 0) {
                fprintf(stderr, "pathcases: chdir %s: %m\n", root);
                return 2;
        }
        setup();
        stat_cases();
        create_cases();
        open_create_cases();
        link_cases();
        rename_cases();
        attr_cases();
        xattr_cases();
        remove_cases();
        misc_cases();
        return 0;
}
