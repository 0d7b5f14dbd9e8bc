/* Resolution shared by the emulated path calls: a path argument is read
 * once, resolved by the kernel in the worker (chrooted in the view, as the
 * child), pinned, and checked against the policy's hidden rules on where it
 * resolved to. The call then acts on the pinned directory and name (or the
 * pinned object), never on the child's memory again. */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

#define OVERFLOW_ID 65534u

uint32_t fs_id_to_child(const struct fs_ids *m, bool gid, uint32_t host_id)
{
        uint32_t host = gid ? m->gid_host : m->uid_host, inside = gid ? m->gid_inside : m->uid_inside;
        if (host_id - host < m->count) /* unsigned: below host wraps past count */
                return inside + (host_id - host);
        return OVERFLOW_ID;
}

int fs_id_from_child(const struct fs_ids *m, bool gid, uint32_t child_id, uint32_t *ret)
{
        uint32_t host = gid ? m->gid_host : m->uid_host, inside = gid ? m->gid_inside : m->uid_inside;
        if (child_id == (uint32_t)-1) {
                *ret = (uint32_t)-1;
                return 0;
        }
        if (child_id - inside >= m->count)
                return -EINVAL;
        *ret = host + (child_id - inside);
        return 0;
}

/* Whether the view's /etc/mtab is the usual link to the mount table of
 * whoever reads it (it is the host's, read-only; a regular file there is
 * left alone). */
static bool mtab_is_proc_link(void)
{
        char target[64];
        ssize_t n = readlink("/etc/mtab", target, sizeof(target) - 1);
        if (n <= 0)
                return false;
        target[n] = '\0';
        return streq(target, "/proc/mounts") || streq(target, "/proc/self/mounts") ||
               streq(target, "../proc/self/mounts") || streq(target, "../proc/mounts");
}

static int call_ns_ids(void *userdata, pid_t *ret_nspid, pid_t *ret_nstgid)
{
        return notify_ns_ids(userdata, ret_nspid, ret_nstgid);
}

int fs_rewrite_self(struct notify_call *call, const char *path, bool exact, char *out, size_t size, bool *ret_changed)
{
        return fs_rewrite_self_with(path, exact, call_ns_ids, call, mtab_is_proc_link, out, size, ret_changed);
}

int fs_view_open_path(struct notify_call *call, int dirfd, const char *path, int flags)
{
        flags = (flags & (O_DIRECTORY | O_NOFOLLOW)) | O_PATH | O_CLOEXEC;
        if (notify_feature_absent("openat2")) {
                int fd = openat(dirfd, path, flags);
                return fd < 0 ? negative_errno() : fd;
        }
        struct open_how how = {.flags = (uint64_t)flags, .resolve = RESOLVE_NO_MAGICLINKS};
        long fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
        if (fd >= 0)
                return (int)fd;
        /* a magic link on the way (or a loop, which fails there the same),
         * or a directory the worker may not search, which a caller holding
         * CAP_DAC_OVERRIDE or CAP_FOWNER may (root walking into another
         * user's 0700 directory): redone by the agent with the caller's
         * ids and capabilities in the sandbox's namespace, where the
         * kernel applies them as to the caller's own walk */
        int err = errno; /* (fs_caller_overrides reads /proc: errno is not kept) */
        if (err == ELOOP || (err == EACCES && fs_caller_overrides(call)))
                return fs_agent_open(call->userdata, call, dirfd == AT_FDCWD ? -1 : dirfd, path, flags, 0, 0, 0);
        return -err;
}

/* Whether fd is on one of the view's mounts. A directory fd from outside
 * the view (handed in by the host, reached through a magic link) would start
 * a walk that the view's root never bounds: ".." only stops at the root if
 * the walk passes through it. */
bool fs_in_view(const struct fs_context *ctx, int fd)
{
        struct statx stx;
        if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) < 0 || !(stx.stx_mask & STATX_MNT_ID))
                return false;
        uint64_t id = stx.stx_mnt_id;
        return bsearch(&id, ctx->mount_ids, ctx->n_mount_ids, sizeof(uint64_t), fs_cmp_u64) != NULL;
}

int fs_view_path(int hostproc_fd, int fd, char *buf, size_t size)
{
        char link[64];
        snprintf(link, sizeof(link), "thread-self/fd/%d", fd);
        ssize_t n = readlinkat(hostproc_fd, link, buf, size - 1);
        if (n < 0)
                return negative_errno();
        if ((size_t)n >= size - 1)
                return -ENAMETOOLONG;
        buf[n] = '\0';
        if (buf[0] != '/')
                return -ENOENT; /* not a path at all (an anonymous inode) */
        return 0;
}

void fs_target_done(struct fs_target *t)
{
        if (t->dirfd >= 0)
                close(t->dirfd);
        if (t->fd >= 0)
                close(t->fd);
        t->dirfd = t->fd = -1;
}

void fs_target_at(const struct fs_target *t, int hostproc_fd, struct fs_at *ret)
{
        if (t->fd >= 0) {
                snprintf(ret->buf, sizeof(ret->buf), "thread-self/fd/%d", t->fd);
                ret->dirfd = hostproc_fd;
                ret->name = ret->buf;
                ret->nofollow = 0;
        } else {
                ret->dirfd = t->dirfd;
                ret->name = t->name;
                ret->nofollow = AT_SYMLINK_NOFOLLOW;
        }
}

int fs_at_enter(const struct fs_at *at)
{
        return fchdir(at->dirfd) < 0 ? negative_errno() : 0;
}

void fs_at_leave(void)
{
        /* the thread's root is the view's: "/" is always there */
        (void)!chdir("/");
}

/* Whether the hidden rules hide dir + "/" + name (name without its
 * trailing slashes; NULL: dir itself). */
static bool hidden_at(const struct fs_context *ctx, const char *dir, const char *name)
{
        if (!ctx->n_rules)
                return false;
        if (fs_rules_hide(ctx->rules, ctx->n_rules, dir))
                return true;
        if (!name)
                return false;
        char full[PATH_MAX + NAME_MAX + 2];
        size_t nl = strlen(name);
        while (nl > 0 && name[nl - 1] == '/')
                nl--;
        snprintf(full, sizeof(full), "%s%s%.*s", dir, streq(dir, "/") ? "" : "/", (int)nl, name);
        return fs_rules_hide(ctx->rules, ctx->n_rules, full);
}

/* 0 if fd is not in a hidden place, -ENOENT if it is; anything without a
 * path (a pipe, a socket) is not. A location that cannot be learned (a
 * path longer than PATH_MAX) fails closed with that error. */
static int check_fd(struct notify_call *call, int fd)
{
        const struct fs_context *ctx = call->userdata;
        if (!ctx->n_rules)
                return 0;
        char vp[PATH_MAX];
        int r = fs_view_path(call->hostproc_fd, fd, vp, sizeof(vp));
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        return hidden_at(ctx, vp, NULL) ? -ENOENT : 0;
}

/* Pins the object t names (following a final symlink when follow) and
 * checks where it is. plain: t's directory was reached along its text and
 * dir/name already checked (open_plain_dir); then an object reached from
 * it by name without a symlink is at dir/name, and needs no other check of
 * where it is. As the child. */
static int pin_object(struct notify_call *call, struct fs_target *t, bool follow, bool plain)
{
        const struct fs_context *ctx = call->userdata;
        int fd = -1;
        if (plain) {
                struct open_how how = {.flags = O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW),
                                       .resolve = RESOLVE_NO_SYMLINKS};
                fd = (int)syscall(SYS_openat2, t->dirfd, t->name, &how, sizeof(how));
        }
        bool at_name = fd >= 0; /* dir/name itself, already checked */
        if (!at_name && (fd = fs_view_open_path(call, t->dirfd, t->name, follow ? 0 : O_NOFOLLOW)) < 0)
                return fd;
        t->fd = fd;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        if (S_ISDIR(st.st_mode) && !fs_in_view(ctx, fd))
                return -EACCES; /* a directory outside the view, through a magic link */
        return at_name ? 0 : check_fd(call, fd);
}

/* A walk that passes through a hidden directory and comes back out with
 * ".." ("hidden/../x") must fail as it would if the directory were absent:
 * each prefix that a ".." follows is pinned and checked. As the child. */
static int check_dotdot(struct notify_call *call, int base, const char *dir)
{
        char prefix[PATH_MAX];
        for (const char *c = dir; (c = strstr(c, "..")) != NULL; c += 2) {
                bool starts = c == dir || c[-1] == '/';
                bool ends = c[2] == '\0' || c[2] == '/';
                if (!starts || !ends || c == dir)
                        continue;
                snprintf(prefix, sizeof(prefix), "%.*s", (int)(c - dir), dir);
                _cleanup_close_ int fd = fs_view_open_path(call, base >= 0 ? base : AT_FDCWD, prefix, 0);
                if (fd < 0)
                        return fd;
                int r = check_fd(call, fd);
                if (r < 0)
                        return r;
        }
        return 0;
}

static bool dot_name(const char *name)
{
        size_t n = strcspn(name, "/");
        return (n == 1 && name[0] == '.') || (n == 2 && name[0] == '.' && name[1] == '.') || name[0] == '/';
}

int fs_resolve(struct notify_call *call, int child_dirfd, uint64_t addr, unsigned flags, struct fs_target *ret)
{
        const struct fs_context *ctx = call->userdata;
        char raw[PATH_MAX];
        ssize_t len;
        if (addr == 0 && (flags & FS_NULL_OK))
                len = 0;
        else {
                len = notify_read_string(call, addr, raw, sizeof(raw));
                if (len < 0)
                        return (int)len;
        }
        if (len == 0) {
                if (!(flags & (FS_EMPTY_OK | FS_NULL_OK)) || (addr != 0 && !(flags & FS_EMPTY_OK)))
                        return -ENOENT;
                /* the dirfd itself: the child holds it already, nothing is
                 * walked, so there is nothing to check but that it exists */
                int fd = notify_open_dirfd(call, child_dirfd);
                if (fd < 0)
                        return fd;
                ret->fd = fd;
                ret->empty = true;
                int r = check_fd(call, fd);
                if (r < 0)
                        return r;
                return notify_id_valid(call);
        }

        bool changed;
        int r = fs_rewrite_self(call, raw, flags & FS_FOLLOW, ret->path, sizeof(ret->path), &changed);
        if (r < 0)
                return r;
        if (!changed)
                memcpy(ret->path, raw, (size_t)len + 1);

        _cleanup_close_ int base = -1;
        if (ret->path[0] != '/') {
                base = notify_open_dirfd(call, child_dirfd);
                if (base < 0)
                        return base;
                struct stat st;
                if (fstat(base, &st) == 0 && S_ISDIR(st.st_mode) && !fs_in_view(ctx, base))
                        return -EACCES;
        }
        /* everything decided from here on is our own copy */
        if (notify_id_valid(call) < 0)
                return -ENOENT;
        return fs_resolve_at(call, base, flags, ret);
}

/* The directory dir names, opened with no symlink followed (nor any magic
 * link), when dir is absolute with no "." or ".." component: then the walk
 * went exactly along the text, and the text (its slashes collapsed, into vp)
 * is where the directory is in the view, as fs_view_path would read it from
 * the fd, without that readlink (a d_path walk) on every call the hidden
 * rules make the sentry check. -1 where that does not hold (a symlink on the
 * way, a dot, no openat2, any error): the caller then walks as usual. As the
 * child. */
static int open_plain_dir(const char *dir, char *vp, size_t size)
{
        if (dir[0] != '/' || notify_feature_absent("openat2"))
                return -1;
        size_t n = 0;
        for (const char *c = dir; *c;) {
                while (*c == '/')
                        c++;
                if (!*c)
                        break;
                size_t len = strcspn(c, "/");
                if ((len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.') || n + 1 + len >= size)
                        return -1;
                vp[n++] = '/';
                memcpy(vp + n, c, len);
                n += len;
                c += len;
        }
        if (n == 0)
                vp[n++] = '/';
        vp[n] = '\0';
        struct open_how how = {.flags = O_PATH | O_DIRECTORY | O_CLOEXEC, .resolve = RESOLVE_NO_SYMLINKS};
        long fd = syscall(SYS_openat2, AT_FDCWD, dir, &how, sizeof(how));
        return fd < 0 ? -1 : (int)fd;
}

int fs_resolve_at(struct notify_call *call, int base, unsigned flags, struct fs_target *ret)
{
        const struct fs_context *ctx = call->userdata;
        const char *p = ret->path;
        int r;

        /* split into the directory part and the last component (with its
         * trailing slashes, which the kernel interprets on the call) */
        size_t n = strlen(p), end = n;
        while (end > 0 && p[end - 1] == '/')
                end--;
        char dir[PATH_MAX];
        if (end == 0) {
                snprintf(dir, sizeof(dir), "/");
                snprintf(ret->name, sizeof(ret->name), "/");
        } else {
                size_t start = end;
                while (start > 0 && p[start - 1] != '/')
                        start--;
                if (start == 0)
                        snprintf(dir, sizeof(dir), ".");
                else
                        snprintf(dir, sizeof(dir), "%.*s", (int)start, p);
                snprintf(ret->name, sizeof(ret->name), "%s", p + start);
        }

        /* a relative walk starts where the child stands: that must not be
         * in a hidden directory either (a cwd the kernel entered after our
         * chdir check, see paths.c) */
        if (base >= 0 && (r = check_fd(call, base)) < 0)
                return r;
        r = fs_as_child_begin(call);
        if (r < 0)
                return r;
        char vp[PATH_MAX];
        int pfd = ctx->n_rules && base < 0 ? open_plain_dir(dir, vp, sizeof(vp)) : -1;
        bool vp_known = pfd >= 0;
        if (pfd < 0)
                pfd = fs_view_open_path(call, base >= 0 ? base : AT_FDCWD, dir, O_DIRECTORY);
        if (pfd < 0) {
                r = pfd;
                goto out;
        }
        ret->dirfd = pfd;
        if (!fs_in_view(ctx, pfd)) {
                r = -EACCES;
                goto out;
        }
        bool dots = dot_name(ret->name);
        if (ctx->n_rules && (r = check_dotdot(call, base, dir)) < 0)
                goto out;
        if (ctx->n_rules) {
                if (!vp_known && (r = fs_view_path(call->hostproc_fd, pfd, vp, sizeof(vp))) < 0)
                        goto out;
                if (hidden_at(ctx, vp, dots ? NULL : ret->name)) {
                        r = -ENOENT;
                        goto out;
                }
        }
        bool slash = ret->name[strcspn(ret->name, "/")] == '/' && ret->name[0] != '/';
        if ((flags & FS_NEED) && ((flags & FS_FOLLOW) || dots || slash))
                r = pin_object(call, ret, (flags & FS_FOLLOW) || slash, vp_known && !dots && !slash);
        else if (slash && ctx->n_rules) {
                /* "name/" makes the kernel follow name: check where it leads */
                int fd = fs_view_open_path(call, pfd, ret->name, 0);
                if (fd >= 0) {
                        r = check_fd(call, fd);
                        close(fd);
                }
        }
out:
        fs_as_child_end();
        return r;
}

int fs_pin_for_caller(struct notify_call *call, int r, struct fs_target *t)
{
        if (r != -EACCES || t->fd >= 0 || t->dirfd < 0 || !fs_caller_overrides(call))
                return 0;
        int fd = fs_view_open_path(call, t->dirfd, t->name, O_NOFOLLOW);
        if (fd < 0)
                return 0;
        t->fd = fd;
        return 1;
}

int fs_check_symlink_chain(struct notify_call *call, const struct fs_target *t)
{
        int dirfd = fcntl(t->dirfd, F_DUPFD_CLOEXEC, 3);
        if (dirfd < 0)
                return negative_errno();
        char name[PATH_MAX];
        snprintf(name, sizeof(name), "%s", t->name);
        int r = 0;
        for (int hops = 0; hops < 40; hops++) {
                char target[PATH_MAX];
                r = fs_as_child_begin(call);
                if (r < 0)
                        break;
                struct stat st;
                ssize_t n = -1;
                /* A link on procfs (/proc/PID/fd/N, /dev/stdout's end) is
                 * not followed by its text: a magic link leads to the open
                 * file itself, which may be outside the view (a file of
                 * cordon's caller as stdout) or no path at all. Nothing can
                 * be created on procfs nor through a magic link, and the
                 * open's result is checked against the rules after the
                 * open: the chain ends here. */
                if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) &&
                    st.st_dev != ((const struct fs_context *)call->userdata)->proc_dev)
                        n = readlinkat(dirfd, name, target, sizeof(target) - 1);
                fs_as_child_end();
                if (n <= 0)
                        break; /* not a symlink (or gone): the last hop was checked */
                target[n] = '\0';
                struct fs_target next = FS_TARGET_INIT;
                memcpy(next.path, target, (size_t)n + 1);
                r = fs_resolve_at(call, target[0] == '/' ? -1 : dirfd, 0, &next);
                if (r < 0) {
                        fs_target_done(&next);
                        break;
                }
                close(dirfd);
                dirfd = next.dirfd;
                next.dirfd = -1;
                snprintf(name, sizeof(name), "%s", next.name);
                fs_target_done(&next);
        }
        close(dirfd);
        return r;
}

#define MAX_VIEW_MOUNTS 1024

/* (fs.h) Read by the sentry once the view is final, from the host's
 * /proc, not by init. */
uint64_t *fs_read_mount_ids(pid_t init_pid, size_t *ret_n)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)init_pid);
        /* in one read, not procfs's 1 KiB blocks: each read renders the
         * table again up to where it left off (declared before the stream,
         * which uses it until it is closed) */
        char buf[16384];
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        if (!f)
                return NULL;
        setvbuf(f, buf, _IOFBF, sizeof(buf));
        _cleanup_free_ uint64_t *ids = xmalloc(MAX_VIEW_MOUNTS * sizeof(uint64_t));
        char line[4096];
        size_t n = 0;
        while (fgets(line, sizeof(line), f)) {
                unsigned long long id;
                if (sscanf(line, "%llu", &id) != 1)
                        continue;
                if (n == MAX_VIEW_MOUNTS) {
                        errno = E2BIG;
                        return NULL;
                }
                ids[n++] = id;
        }
        if (n == 0) {
                errno = EIO;
                return NULL;
        }
        qsort(ids, n, sizeof(uint64_t), fs_cmp_u64);
        *ret_n = n;
        return TAKE_PTR(ids);
}
