/* A template's idmapped mounts, made by the sentry as host root once the
 * sandbox's user namespace has its maps: the read-only lower layer of a
 * template root (a directory, or the layers of an engine's overlay), and an
 * OCI container's root written through to its engine (a plain directory's
 * writable clone, or an overlay over the engine's own upper directory).
 * Handed to init, which mounts them in its view (fs/view.c). */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/securebits.h>
#include <sys/fsuid.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>

#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

/* writable: the clone is an OCI container's root written through (see
 * fs_template_idmapped); else read-only, a layer beneath the sandbox's own */
static int idmapped_clone(int dirfd, int userns_fd, bool writable, int *ret_fd)
{
        /* not recursive: overlayfs would not show the template's submounts
         * either, and the digest refuses a tree that has any */
        int fd = (int)syscall(SYS_open_tree, dirfd, "", OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH);
        if (fd < 0)
                return negative_errno();
        struct cordon_mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                                  (writable ? 0 : MOUNT_ATTR_RDONLY),
                                      .userns_fd = (uint64_t)userns_fd};
        if (syscall(__NR_mount_setattr, fd, "", AT_EMPTY_PATH, &a, sizeof(a)) < 0) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        *ret_fd = fd;
        return 0;
}

/* mountinfo's octal escapes (\040 for a space) undone in place; a path
 * with overlayfs's own backslash escapes (':' or ',' in a layer's name) is
 * refused rather than guessed at. */
int fs_unescape_mountinfo(char *s)
{
        char *out = s;
        for (char *p = s; *p; p++) {
                if (*p != '\\') {
                        *out++ = *p;
                        continue;
                }
                if (p[1] < '0' || p[1] > '3' || p[2] < '0' || p[2] > '7' || p[3] < '0' || p[3] > '7')
                        return -EINVAL;
                *out++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
                p += 3;
        }
        *out = '\0';
        return 0;
}

#define MAX_OVL_LAYERS 128

/* The overlay mount options of the mount template_fd is the root of, from
 * mountinfo, into *ret_opts (freed by the caller). -EINVAL: no overlay's
 * root. */
static int overlay_mount_options(int template_fd, char **ret_opts)
{
        struct statx stx;
        if (statx(template_fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) < 0 || !(stx.stx_mask & STATX_MNT_ID))
                return -EINVAL;
        _cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
        if (!f)
                return negative_errno();
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        while (getline(&line, &cap, f) > 0) {
                unsigned long long id;
                char root[8];
                if (sscanf(line, "%llu %*u %*s %7s", &id, root) != 2 || id != stx.stx_mnt_id)
                        continue;
                char *sep = strstr(line, " - ");
                if (!streq(root, "/") || !sep || !startswith(sep, " - overlay "))
                        return -EINVAL;
                char *opts = strrchr(sep, ' ') + 1;
                opts[strcspn(opts, "\n")] = '\0';
                *ret_opts = xstrdup(opts);
                return 0;
        }
        return -EINVAL;
}

/* The directory a layer's path from mountinfo names. Followed: containers/
 * storage names lower layers through symlinks (overlay/l/ID); the paths are
 * the mount's own, as root wrote them when it mounted the template. A
 * relative one (containers/storage mounts with paths relative to its
 * driver's home when the options would not fit a page) from home_fd. */
static int open_layer(int home_fd, const char *path)
{
        if (path[0] != '/' && home_fd < 0)
                return -ENOENT;
        int fd = openat(path[0] == '/' ? AT_FDCWD : home_fd, path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? negative_errno() : fd;
}

/* Runs FSCONFIG_CMD_CREATE of an overlay as root, but with fs ids that the
 * layers' idmap maps (the sandbox root's host ids, which are on-disk 0): the
 * overlay does its own work in the upper layer (its work directory,
 * whiteouts, copy-up's temporary files) with its creator's credentials, and
 * host root has no id through that idmap (EOVERFLOW, and the kernel mounts
 * the overlay read-only). SECBIT_NO_SETUID_FIXUP keeps the capabilities the
 * fs ids' change would otherwise drop (copy-up chowns, whiteouts are device
 * nodes, trusted.overlay.* needs CAP_SYS_ADMIN). Creds are per thread: the
 * sentry's other threads keep theirs; this one's are restored. */
static int overlay_create_as(int fsfd, uid_t fsuid, gid_t fsgid)
{
        int bits = prctl(PR_GET_SECUREBITS);
        if (bits < 0 || prctl(PR_SET_SECUREBITS, (unsigned long)bits | SECBIT_NO_SETUID_FIXUP) < 0)
                return negative_errno();
        (void)setfsgid(fsgid);
        (void)setfsuid(fsuid);
        int r = 0;
        if (syscall(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                r = negative_errno();
        (void)setfsuid(0);
        (void)setfsgid(0);
        if (prctl(PR_SET_SECUREBITS, (unsigned long)bits) < 0 && r == 0)
                r = negative_errno();
        return r;
}

/* The engine's upper and work directories (paths from mountinfo: each
 * followed, as the kernel followed them when the engine mounted) beneath one
 * writable idmapped clone of their common parent, *ret_parent: the fds of
 * each as an entry of that clone, checked to be the very directories the
 * paths name (a name that is a symlink there is not followed). */
static int overlay_writable_layers(const char *upper, const char *work, int userns_fd, char *err, int *ret_parent,
                                   int *ret_upper, int *ret_work)
{
        const char *path[2] = {upper, work};
        int fd[2] = {-1, -1}, parent[2] = {-1, -1}, in[2] = {-1, -1}, clone = -1;
        struct stat st[2], pst[2];
        int r = 0;
        for (int i = 0; i < 2 && r == 0; i++)
                if ((fd[i] = open(path[i], O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 || fstat(fd[i], &st[i]) < 0 ||
                    (parent[i] = openat(fd[i], "..", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0 ||
                    fstat(parent[i], &pst[i]) < 0)
                        r = fs_fail(negative_errno(), err, "%s %s", i ? "workdir" : "upperdir", path[i]);
        if (r == 0 && (pst[0].st_dev != pst[1].st_dev || pst[0].st_ino != pst[1].st_ino))
                r = fs_fail(-EXDEV, err,
                            "upperdir %s and workdir %s are not in one directory (a writable idmapped mount of their "
                            "parent reaches both)",
                            upper, work);
        if (r == 0 && (r = idmapped_clone(parent[0], userns_fd, true, &clone)) < 0)
                fs_fail(r, err, "a writable idmapped mount of %s/..", upper);
        for (int i = 0; i < 2 && r == 0; i++) {
                /* the name as the kernel resolved it (the path's last
                 * component may have been a symlink) */
                char link[PATH_MAX], p[64];
                snprintf(p, sizeof(p), "/proc/self/fd/%d", fd[i]);
                ssize_t len = readlink(p, link, sizeof(link) - 1);
                link[len > 0 ? len : 0] = '\0';
                const char *base = strrchr(link, '/');
                base = base ? base + 1 : link;
                struct stat s;
                if (!base[0] || (in[i] = openat(clone, base, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
                    fstat(in[i], &s) < 0 || s.st_dev != st[i].st_dev || s.st_ino != st[i].st_ino)
                        r = fs_fail(-ESTALE, err, "%s %s: not found again beneath its parent",
                                    i ? "workdir" : "upperdir", path[i]);
        }
        /* Our own work directory, beneath the engine's: overlayfs cleans
         * its work directory's "work" at mount, which would pull the one
         * the engine's mounted overlay uses from under it (and fails when
         * that is marked volatile, podman's --rm containers). Made as host
         * root through the engine's path (the idmap has no id for root);
         * the engine removes it with the rest of its work directory. */
        int wfd = -1;
        if (r == 0 && mkdirat(fd[1], "cordon", 0700) < 0 && errno != EEXIST)
                r = fs_fail(negative_errno(), err, "workdir %s/cordon", work);
        if (r == 0 && (wfd = openat(in[1], "cordon", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
                r = fs_fail(negative_errno(), err, "workdir %s/cordon", work);
        for (int i = 0; i < 2; i++) {
                if (fd[i] >= 0)
                        close(fd[i]);
                if (parent[i] >= 0)
                        close(parent[i]);
        }
        if (in[1] >= 0)
                close(in[1]);
        if (r < 0) {
                if (in[0] >= 0)
                        close(in[0]);
                if (clone >= 0)
                        close(clone);
                return r;
        }
        *ret_parent = clone;
        *ret_upper = in[0];
        *ret_work = wfd;
        return 0;
}

/* An overlayfs template (the rootfs podman and containerd mount for a
 * container) cannot be idmapped itself: overlayfs does not allow it. Its
 * layers can. This stacks idmapped clones of the template's upper and
 * lower directories into a new overlay with the same content, as a
 * detached mount.
 *
 * Read-only (w == NULL): the view's lower layer; the container's writes go
 * to the sandbox's own writable layer.
 *
 * Written through (w set, an OCI container's root as runc runs it): the
 * engine's upper and work directories are the new overlay's upper and work,
 * reached through one writable idmapped clone of their common parent (an
 * overlay needs both on one mount: podman's overlay/ID/{diff,work},
 * containerd's snapshots/N/{fs,work}); the lower layers stay read-only
 * clones. The overlay is mounted in the host's user namespace, so its own
 * bookkeeping is in trusted.overlay.* xattrs and 0:0 whiteout devices, as
 * the engine's overlay writes and reads them (podman diff, commit). The
 * container's process, in its user namespace, writes through the idmap: its
 * root's files land on disk as 0, its uid 1000's as 1000, and an id it does
 * not map cannot be written at all (EOVERFLOW).
 *
 * The engine keeps its own overlay on the same upper mounted (podman's
 * merged directory, containerd's rootfs). Linux 6.18 with index=off (the
 * default: /sys/module/overlay/parameters/index is N) allows a second
 * overlay on an upper in use and only warns in the kernel log ("upperdir is
 * in-use as upperdir/workdir of another mount, accessing files from both
 * mounts will result in undefined behavior"); index=on would refuse (EBUSY)
 * and create fails. What the container writes is on disk at once, so
 * podman diff (which reads the upper directory itself) sees it while the
 * container runs; the engine's own merged mount may keep stale cached
 * entries for it until it is remounted (after the container exits, podman
 * cp and commit mount it afresh), which is what the kernel's "undefined"
 * covers: reads of old or new content, never a write outside the upper. */
struct write_through {
        uid_t fsuid; /* the host ids on-disk 0 maps to through userns_fd */
        gid_t fsgid;
        char *err; /* why it could not be set up (1024 bytes) */
};
static int overlay_template_idmapped(int template_fd, int userns_fd, const struct write_through *w, int *ret_fd)
{
        _cleanup_free_ char *opts = NULL;
        int r = overlay_mount_options(template_fd, &opts);
        if (r < 0)
                return r;
        char *upper = NULL, *lower = NULL, *work = NULL, *save = NULL;
        const char *kept[16];
        size_t n_kept = 0;
        for (char *o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
                if (startswith(o, "upperdir="))
                        upper = o + 9;
                else if (startswith(o, "lowerdir="))
                        lower = o + 9;
                else if (startswith(o, "workdir="))
                        work = o + 8;
                /* how the engine's overlay reads and writes the upper
                 * directory, which ours must do alike */
                else if (n_kept < ELEMENTSOF(kept) &&
                         (startswith(o, "redirect_dir=") || startswith(o, "metacopy=") || startswith(o, "index=") ||
                          startswith(o, "xino=") || startswith(o, "uuid=") || streq(o, "userxattr")))
                        kept[n_kept++] = o;
        }
        if (w && (!upper || !work))
                return fs_fail(-EROFS, w->err,
                               "an overlay without an upper directory (read-only to its engine) cannot be written "
                               "through");
        if (!lower || strstr(lower, "::")) {
                /* data-only layers (Linux 6.5's "::", composefs images)
                 * hold content that metacopy files above redirect to: a
                 * plain stack of them would show it at the wrong place */
                if (w)
                        fs_fail(-EOPNOTSUPP, w->err,
                                "an overlay with data-only lower layers (\"::\") is not supported");
                return w ? -EOPNOTSUPP : -EINVAL;
        }
        char *layers[MAX_OVL_LAYERS];
        size_t n = 0;
        /* read-only: the engine's upper directory is the top lower layer */
        if (!w && upper)
                layers[n++] = upper;
        for (char *l = strtok_r(lower, ":", &save); l; l = strtok_r(NULL, ":", &save)) {
                if (n == MAX_OVL_LAYERS) {
                        if (w)
                                fs_fail(-E2BIG, w->err, "more than %d lower layers (overlayfs's limit is 500)",
                                        MAX_OVL_LAYERS);
                        return -E2BIG;
                }
                layers[n++] = l;
        }
        for (size_t i = 0; i < n; i++)
                if ((r = fs_unescape_mountinfo(layers[i])) < 0)
                        return w ? fs_fail(r, w->err, "lower layer %s: a name with ':' or ','", layers[i]) : r;
        if (w && (r = fs_unescape_mountinfo(upper)) < 0)
                return w ? fs_fail(r, w->err, "upperdir %s: a name with ':' or ','", upper) : r;
        if (work && (r = fs_unescape_mountinfo(work)) < 0)
                return w ? fs_fail(r, w->err, "workdir %s: a name with ':' or ','", work) : r;
        /* containers/storage's home: the upper directory's grandparent
         * (overlay/ID/diff), where its relative lower paths start */
        _cleanup_close_ int home_fd = -1;
        if (upper && upper[0] == '/') {
                _cleanup_free_ char *h = xasprintf("%s/../..", upper);
                home_fd = open(h, O_PATH | O_DIRECTORY | O_CLOEXEC);
        }

        int fds[MAX_OVL_LAYERS];
        size_t n_fds = 0;
        _cleanup_free_ char *spec = xstrdup("");
        for (size_t i = 0; i < n && r == 0; i++) {
                _cleanup_close_ int dfd = open_layer(home_fd, layers[i]);
                if (dfd < 0) {
                        r = dfd;
                        if (w)
                                fs_fail(r, w->err, "lower layer %s", layers[i]);
                        break;
                }
                if ((r = idmapped_clone(dfd, userns_fd, false, &fds[n_fds])) < 0) {
                        if (w)
                                fs_fail(r, w->err, "an idmapped mount of the lower layer %s", layers[i]);
                        break;
                }
                /* a detached mount is reached by overlayfs through its fd */
                char *next = xasprintf("%s%s/proc/self/fd/%d", spec, i ? ":" : "", fds[n_fds]);
                n_fds++;
                free(spec);
                spec = next;
        }
        int fsfd = -1, mfd = -1, parent = -1, upper_fd = -1, work_fd = -1;
        if (r == 0 && w)
                r = overlay_writable_layers(upper, work, userns_fd, w->err, &parent, &upper_fd, &work_fd);
        if (r == 0 && !w && n_fds == 1) {
                mfd = TAKE_FD(fds[0]);
                n_fds = 0;
        } else if (r == 0) {
                char up[64], wk[64];
                snprintf(up, sizeof(up), "/proc/self/fd/%d", upper_fd);
                snprintf(wk, sizeof(wk), "/proc/self/fd/%d", work_fd);
                fsfd = (int)syscall(SYS_fsopen, "overlay", FSOPEN_CLOEXEC);
                if (fsfd < 0 || syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "lowerdir", spec, 0) < 0 ||
                    (w && (syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "upperdir", up, 0) < 0 ||
                           syscall(SYS_fsconfig, fsfd, FSCONFIG_SET_STRING, "workdir", wk, 0) < 0)))
                        r = negative_errno();
                for (size_t i = 0; w && r == 0 && i < n_kept; i++) {
                        char *eq = strchr(kept[i], '=');
                        _cleanup_free_ char *key =
                                xasprintf("%.*s", eq ? (int)(eq - kept[i]) : (int)strlen(kept[i]), kept[i]);
                        if (syscall(SYS_fsconfig, fsfd, eq ? FSCONFIG_SET_STRING : FSCONFIG_SET_FLAG, key,
                                    eq ? eq + 1 : NULL, 0) < 0)
                                r = negative_errno();
                }
                if (r == 0)
                        r = w ? overlay_create_as(fsfd, w->fsuid, w->fsgid)
                              : (syscall(SYS_fsconfig, fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0 ? negative_errno()
                                                                                                     : 0);
                if (r == 0 &&
                    (mfd = (int)syscall(SYS_fsmount, fsfd, FSMOUNT_CLOEXEC,
                                        (w ? 0 : MOUNT_ATTR_RDONLY) | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) < 0)
                        r = negative_errno();
                if (r < 0 && w)
                        fs_fail(r, w->err, "mount overlayfs with the upper directory %s written through%s", upper,
                                r == -EBUSY ? " (the engine's overlay holds it with index=on)"
                                            : " (the kernel log may say why)");
                /* overlayfs mounts read-only, with only a line in the kernel
                 * log, when it cannot set up its work directory */
                struct statvfs sv;
                if (r == 0 && w && (fstatvfs(mfd, &sv) < 0 || (sv.f_flag & ST_RDONLY))) {
                        r = fs_fail(-EROFS, w->err,
                                    "overlayfs mounted the upper directory %s read-only (the kernel log says why)",
                                    upper);
                        close(mfd);
                        mfd = -1;
                }
        }
        if (fsfd >= 0)
                close(fsfd);
        /* the overlay holds its own references: the container never gets
         * the writable clone of the engine's parent directory */
        if (parent >= 0)
                close(parent);
        if (upper_fd >= 0)
                close(upper_fd);
        if (work_fd >= 0)
                close(work_fd);
        for (size_t i = 0; i < n_fds; i++)
                close(fds[i]);
        if (r < 0)
                return r;
        *ret_fd = mfd;
        return 0;
}

int fs_template_idmapped(int template_fd, int userns_fd, const struct fs_ids *write_through, char *err, int *ret_fd)
{
        err[0] = '\0';
        if (!write_through) {
                int r = idmapped_clone(template_fd, userns_fd, false, ret_fd);
                if (r == -EINVAL && overlay_template_idmapped(template_fd, userns_fd, NULL, ret_fd) == 0)
                        return 0;
                return r;
        }
        /* the host ids of the container's root, which the idmap makes the
         * files' on-disk 0 */
        uint32_t uid, gid;
        if (fs_id_from_child(write_through, false, 0, &uid) < 0 || fs_id_from_child(write_through, true, 0, &gid) < 0)
                return fs_fail(-EOVERFLOW, err, "the container's user namespace does not map root");
        struct write_through w = {.fsuid = uid, .fsgid = gid, .err = err};
        /* a plain directory (runc's bundles): the root itself, written
         * through a writable idmapped clone, nosuid and nodev */
        int r = idmapped_clone(template_fd, userns_fd, true, ret_fd);
        if (r != -EINVAL)
                return r < 0 ? fs_fail(r, err, "a writable idmapped mount of it") : 0;
        r = overlay_template_idmapped(template_fd, userns_fd, &w, ret_fd);
        if (r < 0 && !err[0])
                fs_fail(r, err,
                        "a writable idmapped mount of it (its filesystem does not support idmapped mounts, "
                        "and it is no overlay's root)");
        return r;
}
