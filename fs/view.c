/* Assembles the view inside the child's mount namespace (the built-in
 * default, or a template's overlay) and pivots into it. Runs in the child
 * before it drops its capabilities; everything it mounts is then locked in
 * place by the lack of CAP_SYS_ADMIN and by the seccomp filter
 * (mount/umount/pivot_root refused). */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>

#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

/* The staging area: a tmpfs over /tmp in the child's own mount namespace
 * (the host's /tmp is untouched and never visible in the view). */
#define BASE    "/tmp"
#define NEWROOT BASE "/root"
/* what a mask shows: an empty file and an empty directory on one
 * read-only, nosuid, nodev, noexec bind of their own */
#define MASKS      BASE "/masks"
#define EMPTY_FILE MASKS "/file"
#define EMPTY_DIR  MASKS "/dir"
#define WRITABLE   BASE "/rw"
/* a template root: its lower layer, and the overlay's upper and work
 * directories inside the writable layer (so the disk limit covers them) */
#define LOWER    BASE "/lower"
#define UPPER    WRITABLE "/upper"
#define OVL_WORK WRITABLE "/work"
/* the default root's own small tmpfs: the overlay's upper and work */
#define SKEL BASE "/skel"

/* host system directories the default view shows read-only */
static const char *const system_dirs[] = {"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc"};

/* secrets under /etc replaced by an empty file or directory */
static const char *const etc_secrets[] = {
        "/etc/shadow",           "/etc/shadow-",     "/etc/gshadow", "/etc/gshadow-",
        "/etc/security/opasswd", "/etc/ssl/private", "/etc/ssh",     "/etc/sudoers",
        "/etc/sudoers.d",        "/etc/krb5.keytab", "/etc/cordon",  "/etc/machine-id",
};

/* host-revealing or host-writable /proc entries, masked as runc and
 * bubblewrap do; /proc/sys is made read-only */
static const char *const proc_masked[] = {
        "/proc/kcore",         "/proc/keys",        "/proc/key-users",     "/proc/timer_list", "/proc/sched_debug",
        "/proc/sysrq-trigger", "/proc/kallsyms",    "/proc/latency_stats", "/proc/kmsg",       "/proc/kpagecount",
        "/proc/kpageflags",    "/proc/kpagecgroup", "/proc/vmallocinfo",   "/proc/acpi",       "/proc/scsi",
        "/proc/asound",        "/proc/irq",         "/proc/bus",           "/proc/fs",         "/proc/driver",
        "/proc/firmware",      "/proc/pressure",    "/proc/config.gz",     "/proc/buddyinfo",  "/proc/pagetypeinfo",
        "/proc/slabinfo",
};

static const char *const dev_nodes[] = {"null", "zero", "full", "random", "urandom", "tty"};

const char *fs_view_hidden_by(const struct fs_view_spec *spec, const char *path)
{
        /* any hidden rule at or above path, whatever a longer rule says:
         * the mask over the hidden directory covers everything beneath it
         * in the mount view (setup_rule finds nothing there to open) */
        for (size_t i = 0; i < spec->n_rules; i++)
                if (fs_access_masks(spec->rules[i].access) && path_beneath(path, spec->rules[i].path))
                        return spec->rules[i].path;
        for (size_t i = 0; !spec->template_path && i < ELEMENTSOF(etc_secrets); i++)
                if (path_beneath(path, etc_secrets[i]))
                        return etc_secrets[i];
        for (size_t i = 0; i < ELEMENTSOF(proc_masked); i++)
                if (path_beneath(path, proc_masked[i]))
                        return proc_masked[i];
        return NULL;
}

int fs_fail(int r, char *err, const char *fmt, ...)
{
        char what[768];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        snprintf(err, 1024, "%s: %s", what, strerror(-r));
        return r;
}

static int mount_setattr_path(const char *path, bool recursive, uint64_t set)
{
        struct cordon_mount_attr a = {.attr_set = set};
        if (syscall(__NR_mount_setattr, AT_FDCWD, path, recursive ? AT_RECURSIVE : 0, &a, sizeof(a)) < 0)
                return negative_errno();
        return 0;
}

static int mkdir_p(const char *path, mode_t mode)
{
        char buf[4096];
        if (strlen(path) >= sizeof(buf))
                return -ENAMETOOLONG;
        strcpy(buf, path);
        for (char *p = buf + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(buf, mode) < 0 && errno != EEXIST)
                        return negative_errno();
                *p = '/';
        }
        if (mkdir(buf, mode) < 0 && errno != EEXIST)
                return negative_errno();
        return 0;
}

static int touch(const char *path, mode_t mode)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd < 0)
                return negative_errno();
        close(fd);
        return 0;
}

/* Bind-mounts host path src onto dst inside the new root (dst already has
 * NEWROOT prepended and exists), recursively, then sets attrs on the whole
 * subtree. mount_setattr's AT_RECURSIVE is what makes submounts read-only
 * too; a plain MS_REMOUNT would leave them writable. */
static int bind_path(const char *src, const char *dst, uint64_t attrs)
{
        if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL) < 0)
                return negative_errno();
        if (attrs)
                return mount_setattr_path(dst, true, attrs);
        return 0;
}

/* Resolves a path inside the new root without following anything out of it,
 * creating missing components (directories, or a file for the last one when
 * is_file) so it can be mounted over. Returns an O_PATH fd. */
static int open_in_root(int rootfd, const char *path, bool create, bool is_file)
{
        int fd = fs_open_in_root(rootfd, path, O_PATH);
        if (fd >= 0 || fd != -ENOENT || !create)
                return fd;

        /* walk from the root, creating what is missing */
        char buf[4096];
        if (strlen(path) >= sizeof(buf))
                return -ENAMETOOLONG;
        strcpy(buf, path);
        _cleanup_close_ int cur = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
        if (cur < 0)
                return negative_errno();
        char *save = NULL;
        char *comp = strtok_r(buf, "/", &save);
        while (comp) {
                char *next = strtok_r(NULL, "/", &save);
                bool last = next == NULL;
                /* each step is one plain component, beneath cur (RESOLVE_IN_ROOT
                 * relative to cur would treat cur as the root) */
                int nfd = fs_open_beneath_one(cur, comp, O_PATH, false);
                if (nfd == -ENOENT) {
                        if (last && is_file) {
                                int f = openat(cur, comp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
                                if (f < 0)
                                        return negative_errno();
                                close(f);
                        } else if (mkdirat(cur, comp, 0755) < 0 && errno != EEXIST)
                                return negative_errno();
                        nfd = fs_open_beneath_one(cur, comp, O_PATH, false);
                }
                if (nfd < 0)
                        return nfd;
                close(cur);
                cur = nfd;
                comp = next;
        }
        return TAKE_FD(cur);
}

static void fd_path(int fd, char *buf, size_t size)
{
        snprintf(buf, size, "/proc/self/fd/%d", fd);
}

/* Sets attributes on the mount now on top of path (an fd opened before the
 * mount still names the covered one, so the path is resolved again). */
static int setattr_in_root(int rootfd, const char *path, bool recursive, uint64_t set, uint64_t clr)
{
        _cleanup_close_ int fd = open_in_root(rootfd, path, false, false);
        if (fd < 0)
                return fd;
        struct cordon_mount_attr a = {.attr_set = set, .attr_clr = clr};
        if (syscall(__NR_mount_setattr, fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0), &a, sizeof(a)) < 0)
                return negative_errno();
        return 0;
}

/* What the masks are cloned from: the staging area's empty file and
 * directory while the view is built (-1: by path), or, once it is gone,
 * masks the view already has (fs_view_proc_renew). */
struct mask_src {
        int file, dir;
};

/* Hides a path in the view by mounting an empty read-only file or directory
 * over it (missing paths are left alone): a clone of the mask mount, which
 * brings its read-only, nosuid, nodev and noexec flags along. No filesystem
 * is made per mask, and none is torn down at the end (a tmpfs per masked
 * directory cost every start and every teardown). */

static int mask_path_from(int rootfd, const char *path, const struct mask_src *src)
{
        _cleanup_close_ int fd = open_in_root(rootfd, path, false, false);
        if (fd == -ENOENT)
                return 0;
        if (fd < 0)
                return fd;
        struct stat st;
        if (fstat(fd, &st) < 0)
                return negative_errno();
        int from = S_ISDIR(st.st_mode) ? src->dir : src->file;
        _cleanup_close_ int mask =
                from >= 0 ? (int)syscall(SYS_open_tree, from, "", OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH)
                          : (int)syscall(SYS_open_tree, AT_FDCWD, S_ISDIR(st.st_mode) ? EMPTY_DIR : EMPTY_FILE,
                                         OPEN_TREE_CLONE | O_CLOEXEC);
        if (mask < 0)
                return negative_errno();
        if (syscall(SYS_move_mount, mask, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                return negative_errno();
        return 0;
}

static int mask_path(int rootfd, const char *path)
{
        static const struct mask_src staging = {-1, -1};
        return mask_path_from(rootfd, path, &staging);
}

/* A directory at the top of the new root to mount on: created, or a
 * template's own (a directory, never a symlink: the mount would land where
 * the link points). */
static int make_mountpoint(const char *path, mode_t mode)
{
        if (mkdir(path, mode) == 0)
                return 0;
        if (errno != EEXIST)
                return negative_errno();
        struct stat st;
        if (lstat(path, &st) < 0)
                return negative_errno();
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/* One of an OCI config's mounts under /dev (fs_view_spec.dev_mounts), its
 * mount point made in the view's /dev tmpfs. Safe as configured: devpts
 * made in a user namespace is always a new instance (never the host's
 * ptys, whatever "newinstance" says), mqueue shows the queues of the
 * sandbox's own ipc namespace, and a tmpfs is empty; each is nosuid, and
 * nodev but for devpts, whose ptys are its devices. */
static int setup_dev_mount(const struct fs_dev_mount *m, char *err)
{
        char path[PATH_MAX];
        int r;
        if (!startswith(m->target, "/dev/") || strstr(m->target, "/..") ||
            snprintf(path, sizeof(path), "%s%s", NEWROOT, m->target) >= (int)sizeof(path))
                return fs_fail(-EINVAL, err, "mount on %s: not a path under /dev", m->target);
        /* parents first: mkdir -p inside the view's fresh /dev */
        for (char *q = path + strlen(NEWROOT "/dev/"); *q; q++) {
                if (*q != '/')
                        continue;
                *q = '\0';
                r = make_mountpoint(path, 0755);
                *q = '/';
                if (r < 0)
                        return fs_fail(r, err, "mkdir the parents of %s", m->target);
        }
        if ((r = make_mountpoint(path, 0755)) < 0)
                return fs_fail(r, err, "mkdir %s", m->target);
        bool pts = streq(m->fstype, "devpts");
        unsigned long flags = (m->flags & (MS_RDONLY | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME | MS_RELATIME |
                                           MS_STRICTATIME | MS_SYNCHRONOUS | MS_DIRSYNC | MS_LAZYTIME)) |
                              MS_NOSUID | (pts ? 0 : MS_NODEV);
        if (mount(m->source ? m->source : m->fstype, path, m->fstype, flags, m->data) < 0)
                return fs_fail(negative_errno(), err, "mount %s on %s (%s)", m->fstype, m->target,
                               m->data ? m->data : "no options");
        return 0;
}

static int setup_dev(int rootfd, const struct fs_view_spec *spec, char *err)
{
        const char *dev = NEWROOT "/dev";
        int r;
        if ((r = make_mountpoint(dev, 0755)) < 0)
                return fs_fail(r, err, "mkdir %s", "/dev");
        /* an OCI config's options (its mode and size): read-only all the
         * same below, so nothing but these mounts' own contents is there */
        const char *data = spec->dev_data ? spec->dev_data : "mode=0755,size=64k";
        if (mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, data) < 0)
                return fs_fail(negative_errno(), err, "mount tmpfs on %s (%s)", "/dev", data);
        char path[128], src[64];
        for (size_t i = 0; i < ELEMENTSOF(dev_nodes); i++) {
                snprintf(path, sizeof(path), "%s/%s", dev, dev_nodes[i]);
                snprintf(src, sizeof(src), "/dev/%s", dev_nodes[i]);
                if ((r = touch(path, 0666)) < 0)
                        return fs_fail(r, err, "create /dev/%s", dev_nodes[i]);
                /* A user namespace cannot mknod: the host's node, bound.
                 * Read-only: the device still reads and writes (a read-only
                 * mount refuses writes to files, not to devices), but the
                 * node's owner, mode, times and xattrs are the host's and
                 * stay so (EROFS), even where the host left a node owned by
                 * the uid the sandbox runs as (runsc leaves /dev/null to
                 * nobody, which is the sandbox's root when cordon runs as
                 * root). */
                if ((r = bind_path(src, path, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC)) < 0)
                        return fs_fail(r, err, "bind %s", src);
        }
        bool own_pts = true, own_shm = spec->shm_tree_fd < 0;
        for (size_t i = 0; i < spec->n_dev_mounts; i++) {
                own_pts = own_pts && !streq(spec->dev_mounts[i].target, "/dev/pts");
                own_shm = own_shm && !streq(spec->dev_mounts[i].target, "/dev/shm");
        }
        snprintf(path, sizeof(path), "%s/pts", dev);
        /* a private devpts instance: the child's ptys are its own */
        if (own_pts && (mkdir(path, 0755) < 0 || mount("devpts", path, "devpts", MS_NOSUID | MS_NOEXEC,
                                                       "newinstance,ptmxmode=0666,mode=620") < 0))
                return fs_fail(negative_errno(), err, "mount devpts on /dev/pts");
        snprintf(path, sizeof(path), "%s/shm", dev);
        if (own_shm) {
                if (mkdir(path, 01777) < 0)
                        return fs_fail(negative_errno(), err, "mkdir /dev/shm");
                if (mount(WRITABLE "/shm", path, NULL, MS_BIND, NULL) < 0)
                        return fs_fail(negative_errno(), err, "bind the writable layer on /dev/shm");
                if ((r = setattr_in_root(rootfd, "/dev/shm", false, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0)) < 0)
                        return fs_fail(r, err, "nosuid,nodev on /dev/shm");
        } else if (spec->shm_tree_fd >= 0) {
                /* the engine's tmpfs, attached (it belongs to no mount
                 * namespace of ours to bind from): nothing on it runs,
                 * carries set-id bits or is a device */
                if (mkdir(path, 01777) < 0 ||
                    syscall(SYS_move_mount, spec->shm_tree_fd, "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                        return fs_fail(negative_errno(), err, "attach the engine's /dev/shm");
                if ((r = setattr_in_root(rootfd, "/dev/shm", false,
                                         MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, 0)) < 0)
                        return fs_fail(r, err, "nosuid,nodev,noexec on /dev/shm");
        }
        for (size_t i = 0; i < spec->n_dev_mounts; i++)
                if ((r = setup_dev_mount(&spec->dev_mounts[i], err)) < 0)
                        return r;
        static const char *const links[][2] = {
                {"ptmx", "pts/ptmx"},          {"fd", "/proc/self/fd"},       {"stdin", "/proc/self/fd/0"},
                {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"},
        };
        for (size_t i = 0; i < ELEMENTSOF(links); i++) {
                snprintf(path, sizeof(path), "%s/%s", dev, links[i][0]);
                if (symlink(links[i][1], path) < 0)
                        return fs_fail(negative_errno(), err, "symlink /dev/%s", links[i][0]);
        }
        if ((r = mount_setattr_path(dev, false, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC)) < 0)
                return fs_fail(r, err, "make /dev read-only");
        return 0;
}

bool fs_proc_pidns_supported(void)
{
        /* a procfs context that is never mounted: an unknown key is EINVAL */
        _cleanup_close_ int fc = (int)syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC);
        if (fc < 0)
                return false;
        return syscall(SYS_fsconfig, fc, FSCONFIG_SET_STRING, "pidns", "/proc/self/ns/pid", 0) == 0;
}

/* A detached procfs of the pid namespace pidns_fd (made while a procfs is
 * still mounted in the view: the kernel refuses a new one where none is
 * fully visible). */
static int proc_of(int pidns_fd)
{
        _cleanup_close_ int fc = (int)syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC);
        if (fc < 0)
                return negative_errno();
        /* "proc" as its source, as mount(2) names it (the new API's
         * default is "none", and tools look for "proc") */
        if (syscall(SYS_fsconfig, fc, FSCONFIG_SET_STRING, "source", "proc", 0) < 0 ||
            syscall(SYS_fsconfig, fc, FSCONFIG_SET_FD, "pidns", NULL, pidns_fd) < 0 ||
            syscall(SYS_fsconfig, fc, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return negative_errno();
        _cleanup_close_ int mfd = (int)syscall(SYS_fsmount, fc, FSMOUNT_CLOEXEC,
                                               MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
        if (mfd < 0)
                return negative_errno();
        return TAKE_FD(mfd);
}

/* The masks and the read-only /proc/sys over a procfs just mounted. */
static int finish_proc(int rootfd, const struct mask_src *src, char *err)
{
        int r;
        for (size_t i = 0; i < ELEMENTSOF(proc_masked); i++)
                if ((r = mask_path_from(rootfd, proc_masked[i], src)) < 0)
                        return fs_fail(r, err, "mask %s", proc_masked[i]);
        _cleanup_close_ int sys = open_in_root(rootfd, "/proc/sys", false, false);
        if (sys >= 0) {
                /* bound onto itself by fd (/proc/self may not be ours here:
                 * fs_view_proc_renew's procfs does not show its caller) */
                _cleanup_close_ int tree = (int)syscall(SYS_open_tree, sys, "",
                                                        OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
                if (tree < 0 ||
                    syscall(SYS_move_mount, tree, "", sys, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                        return fs_fail(negative_errno(), err, "bind /proc/sys");
                if ((r = setattr_in_root(rootfd, "/proc/sys", true,
                                         MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                                         0)) < 0)
                        return fs_fail(r, err, "make /proc/sys read-only");
        }
        return 0;
}

int fs_proc_tree(int pidns_fd)
{
        return proc_of(pidns_fd);
}

static int setup_proc(int rootfd, int tree_fd, char *err)
{
        static const struct mask_src staging = {-1, -1};
        const char *proc = NEWROOT "/proc";
        int r;
        if ((r = make_mountpoint(proc, 0555)) < 0)
                return fs_fail(r, err, "mkdir /proc");
        /* a procfs made for us (a pod's shared pid namespace, over which
         * init holds no capability): it gets the same masks below */
        if (tree_fd >= 0) {
                if (syscall(SYS_move_mount, tree_fd, "", AT_FDCWD, proc, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                        return fs_fail(negative_errno(), err, "mount the pod's procfs on /proc");
                return finish_proc(rootfd, &staging, err);
        }
        /* the child is pid 1 of its own pid namespace: this proc shows only the sandbox */
        if (mount("proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                return fs_fail(negative_errno(), err, "mount proc on /proc");
        return finish_proc(rootfd, &staging, err);
}

int fs_view_proc_renew(int pidns_fd, char *err)
{
        _cleanup_close_ int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0)
                return fs_fail(negative_errno(), err, "open the view's root");
        /* mask sources: clones of masks the old /proc has (the staging
         * area they came from is gone with the pivot), a file and a
         * directory, each the mount on top of its path */
        struct mask_src src = {-1, -1};
        for (size_t i = 0; i < ELEMENTSOF(proc_masked) && (src.file < 0 || src.dir < 0); i++) {
                _cleanup_close_ int fd = open_in_root(rootfd, proc_masked[i], false, false);
                struct stat st;
                if (fd < 0 || fstat(fd, &st) < 0)
                        continue;
                int *slot = S_ISDIR(st.st_mode) ? &src.dir : &src.file;
                if (*slot < 0)
                        *slot = (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH);
        }
        _cleanup_close_ int mf = src.file, md = src.dir;
        if (mf < 0 || md < 0)
                return fs_fail(-ENOENT, err, "no mask under the view's /proc to clone");
        _cleanup_close_ int mfd = proc_of(pidns_fd);
        if (mfd < 0)
                return fs_fail(mfd, err, "make the container's procfs");
        /* the old procfs (its pid namespace is not the container's) goes
         * with its masks; the new one gets the same */
        if (umount2("/proc", MNT_DETACH) < 0)
                return fs_fail(negative_errno(), err, "detach the sandbox's /proc");
        if (syscall(SYS_move_mount, mfd, "", AT_FDCWD, "/proc", MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return fs_fail(negative_errno(), err, "mount the container's procfs on /proc");
        return finish_proc(rootfd, &src, err);
}

static bool is_mount_root(int fd)
{
        struct statx stx;
        return fd >= 0 && statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx) == 0 &&
               (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) && (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

int fs_view_order(const struct fs_mount_order *m, size_t n, unsigned long root_propagation, char *err)
{
        _cleanup_free_ bool *done = xcalloc(n + 1, sizeof(bool));
        for (size_t i = 0; i < n; i++) {
                bool beneath = false;
                for (size_t k = 0; k < i && !beneath; k++)
                        beneath = done[k] && path_beneath(m[i].path, m[k].path);
                /* the path itself, not where a symlink there leads (the view
                 * is the sandbox's own tree: nothing outside it is reachable
                 * from here whatever the path) */
                _cleanup_close_ int fd = open(m[i].path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                if (beneath || !is_mount_root(fd))
                        continue;
                /* the copy's mounts are new ones, listed after every mount
                 * made so far; the original tree goes (nothing holds it but
                 * the fds of cordon's own set-up, which still work) */
                _cleanup_close_ int tree =
                        (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | O_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
                if (tree < 0)
                        return fs_fail(negative_errno(), err, "copy the mounts at %s", m[i].path);
                if (umount2(m[i].path, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
                        return fs_fail(negative_errno(), err, "detach the mounts at %s", m[i].path);
                if (syscall(SYS_move_mount, tree, "", AT_FDCWD, m[i].path, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                        return fs_fail(negative_errno(), err, "mount the copy at %s", m[i].path);
                done[i] = true;
        }
        /* Propagation as asked. A shared mount here has peers only in the
         * sandbox's own mount namespace (the view was built in a private
         * copy of the host's tree, and nothing of cordon's copies that
         * namespace again), and the sandbox can neither mount nor unmount:
         * no mount event crosses to or from the host either way. */
        if (root_propagation && mount(NULL, "/", NULL, root_propagation, NULL) < 0)
                return fs_fail(negative_errno(), err, "rootfsPropagation of /");
        for (size_t i = 0; i < n; i++)
                if (m[i].propagation) {
                        _cleanup_close_ int fd = open(m[i].path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
                        if (is_mount_root(fd) && mount(NULL, m[i].path, NULL, m[i].propagation, NULL) < 0)
                                return fs_fail(negative_errno(), err, "propagation of %s", m[i].path);
                }
        return 0;
}

/* srcfd: the bind source, opened before the staging tmpfs covered /tmp */
/* Replaces a file of the view (e.g. /etc/resolv.conf) with our content:
 * bound read-only over it when it is a file; when it is a symlink into the
 * writable layer (/run/systemd/resolve/stub-resolv.conf), written there;
 * when absent, left absent on the host's tree, and created (in the private
 * upper layer) in a template root when create is set. */
static int overlay_file(int rootfd, const char *path, const char *staging, const char *content, bool create, char *err)
{
        int r;
        int fd = open(staging, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
        if (fd < 0)
                return fs_fail(negative_errno(), err, "staging %s", staging);
        r = write_all(fd, content, strlen(content));
        close(fd);
        if (r < 0)
                return fs_fail(r, err, "staging %s", staging);

        _cleanup_close_ int target = open_in_root(rootfd, path, false, false);
        if (target >= 0) {
                struct stat st;
                if (fstat(target, &st) < 0 || !S_ISREG(st.st_mode))
                        return fs_fail(-EINVAL, err, "%s in the view is not a regular file", path);
                char p[64];
                fd_path(target, p, sizeof(p));
                if (mount(staging, p, NULL, MS_BIND, NULL) < 0)
                        return fs_fail(negative_errno(), err, "bind our %s", path);
                if ((r = setattr_in_root(rootfd, path, false,
                                         MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                                         0)) < 0)
                        return fs_fail(r, err, "make our %s read-only", path);
                return 0;
        }
        if (target != -ENOENT)
                return fs_fail(target, err, "%s in the view", path);
        /* a dangling symlink: follow it by hand, one level, into the writable layer */
        char link[PATH_MAX], dst[PATH_MAX + 64];
        snprintf(dst, sizeof(dst), "%s%s", NEWROOT, path);
        ssize_t n = readlink(dst, link, sizeof(link) - 1);
        if (n < 0 && create) {
                /* a template without one: ours goes in its (private) upper layer */
                _cleanup_close_ int made = open_in_root(rootfd, path, true, true);
                if (made == -EACCES || made == -EPERM || made == -EOVERFLOW)
                        return 0; /* a template /etc the sandbox may not write (owned by an id
                                     it does not map): left without one, as a host without one */
                if (made < 0)
                        return fs_fail(made, err, "create %s in the view", path);
                char p[64];
                fd_path(made, p, sizeof(p));
                if (mount(staging, p, NULL, MS_BIND, NULL) < 0)
                        return fs_fail(negative_errno(), err, "bind our %s", path);
                if ((r = setattr_in_root(rootfd, path, false,
                                         MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
                                         0)) < 0)
                        return fs_fail(r, err, "make our %s read-only", path);
                return 0;
        }
        if (n < 0)
                return 0; /* the host has no such file: leave the view without one */
        link[n] = '\0';
        if (!startswith(link, "/run/") || strstr(link, "/.."))
                return fs_fail(-EINVAL, err, "%s is a symlink to %s, outside the writable layer", path, link);
        snprintf(dst, sizeof(dst), "%s%s", NEWROOT, link);
        char *slash = strrchr(dst, '/');
        *slash = '\0';
        if ((r = mkdir_p(dst, 0755)) < 0)
                return fs_fail(r, err, "mkdir for %s", link);
        *slash = '/';
        fd = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
                return fs_fail(negative_errno(), err, "write %s", link);
        r = write_all(fd, content, strlen(content));
        close(fd);
        return r < 0 ? fs_fail(r, err, "write %s", link) : 0;
}

static int setup_bind(int rootfd, const struct fs_bind *b, int srcfd, bool detached, char *err)
{
        struct stat st;
        if (fstat(srcfd, &st) < 0)
                return fs_fail(negative_errno(), err, "bind source %s", b->source);
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
                return fs_fail(-EINVAL, err, "bind source %s (only directories and regular files)", b->source);
        _cleanup_close_ int fd = open_in_root(rootfd, b->target, true, !S_ISDIR(st.st_mode));
        if (fd < 0)
                return fs_fail(fd, err, "bind target %s", b->target);
        char p[64];
        fd_path(fd, p, sizeof(p));
        uint64_t attrs = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (b->read_only ? MOUNT_ATTR_RDONLY : 0);
        char src[64];
        fd_path(srcfd, src, sizeof(src));
        /* a detached tree the sentry cloned (spec->bind_fds) is attached,
         * not copied: it belongs to no mount namespace of ours to bind from */
        if (detached ? syscall(SYS_move_mount, srcfd, "", fd, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0
                     : mount(src, p, NULL, MS_BIND | MS_REC, NULL) < 0)
                return fs_fail(negative_errno(), err, "bind %s to %s", b->source, b->target);
        int r = setattr_in_root(rootfd, b->target, true, attrs, 0);
        if (r < 0)
                return fs_fail(r, err, "bind %s to %s", b->source, b->target);
        return 0;
}

static int setup_rule(int rootfd, const struct fs_rule *rule, char *err)
{
        int r;
        if (fs_access_masks(rule->access)) {
                if ((r = mask_path(rootfd, rule->path)) < 0)
                        return fs_fail(r, err, "hide %s", rule->path);
                return 0;
        }
        _cleanup_close_ int fd = open_in_root(rootfd, rule->path, false, false);
        if (fd == -ENOENT)
                return 0; /* nothing there to restrict */
        if (fd < 0)
                return fs_fail(fd, err, "rule path %s", rule->path);
        char p[64];
        fd_path(fd, p, sizeof(p));
        /* A bind of the path onto itself makes it a mount we can set flags
         * on. Not for the root, which is a mount already: a bind over it
         * would cover the tree rootfd walks, and the rules after this one
         * (a read-write /tmp under a read-only root) would land beneath. */
        if (!streq(rule->path, "/") && mount(p, p, NULL, MS_BIND | MS_REC, NULL) < 0)
                return fs_fail(negative_errno(), err, "rule path %s", rule->path);
        uint64_t set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
        if (rule->access == FS_READ)
                set |= MOUNT_ATTR_RDONLY;
        if (rule->exec == 0)
                set |= MOUNT_ATTR_NOEXEC;
        uint64_t clr = 0;
        if (rule->exec == 1)
                clr |= MOUNT_ATTR_NOEXEC;
        if (rule->access == FS_READ_WRITE)
                clr |= MOUNT_ATTR_RDONLY;
        if ((r = setattr_in_root(rootfd, rule->path, true, set, clr)) < 0)
                return fs_fail(r, err, "apply rule on %s", rule->path);
        return 0;
}

static int build_view(const struct fs_view_spec *spec, const int *srcfds, int lowerfd, char *err, int *ret_layer_fd);

/* Opens the template's directory in the child's own mount namespace (an fd
 * from the sentry's namespace cannot be a layer here: overlayfs clones the
 * layer's mount, which must be in the mounter's namespace) and checks that
 * it is the directory the sentry opened and hashed, not one put in its
 * place since. */
static int open_template(const struct fs_view_spec *spec, char *err)
{
        int fd = open(spec->template_path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return fs_fail(negative_errno(), err, "template %s", spec->template_path);
        struct stat a, b;
        if (fstat(fd, &a) < 0 || fstat(spec->template_fd, &b) < 0) {
                int r = negative_errno();
                close(fd);
                return fs_fail(r, err, "template %s", spec->template_path);
        }
        if (a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
                close(fd);
                return fs_fail(-ESTALE, err, "template %s was replaced after cordon checked it", spec->template_path);
        }
        return fd;
}

/* Mounts the template's overlay on NEWROOT: the template read-only below,
 * the upper and work directories in the size-capped writable layer above,
 * so the sandbox's changes land there and nowhere else. */
static int mount_template_root(const struct fs_view_spec *spec, int lowerfd, char *err)
{
        int r;
        if (spec->root_write_through) {
                /* the container's root itself, as runc runs it */
                if (spec->template_tree_fd >= 0) {
                        /* the sentry's writable idmapped mount (nosuid, nodev) */
                        if (syscall(SYS_move_mount, spec->template_tree_fd, "", AT_FDCWD, NEWROOT,
                                    MOVE_MOUNT_F_EMPTY_PATH) < 0)
                                return fs_fail(negative_errno(), err, "attach the root %s (written through)",
                                               spec->template_path);
                        return 0;
                }
                /* without root (no idmap to make): the caller's own
                 * directory, which the sandbox's root is the caller in */
                char p[64];
                fd_path(lowerfd, p, sizeof(p));
                if (mount(p, NEWROOT, NULL, MS_BIND, NULL) < 0)
                        return fs_fail(negative_errno(), err, "bind the root %s", spec->template_path);
                if ((r = mount_setattr_path(NEWROOT, false, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) < 0)
                        return fs_fail(r, err, "nosuid,nodev on the root %s", spec->template_path);
                return 0;
        }
        if (mkdir(LOWER, 0755) < 0)
                return fs_fail(negative_errno(), err, "staging directory %s", LOWER);
        if (spec->template_tree_fd >= 0) {
                /* the sentry's idmapped copy, from the very fd it hashed */
                if (syscall(SYS_move_mount, spec->template_tree_fd, "", AT_FDCWD, LOWER, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                        return fs_fail(negative_errno(), err, "attach the template %s (idmapped)", spec->template_path);
        } else {
                char p[64];
                fd_path(lowerfd, p, sizeof(p));
                if (mount(p, LOWER, NULL, MS_BIND, NULL) < 0)
                        return fs_fail(negative_errno(), err, "bind the template %s", spec->template_path);
                if ((r = mount_setattr_path(LOWER, false, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) <
                    0)
                        return fs_fail(r, err, "make the template %s read-only", spec->template_path);
        }
        /* the root directory's mode is the upper's: keep the template's */
        struct stat st;
        if (stat(LOWER, &st) < 0)
                return fs_fail(negative_errno(), err, "template %s", spec->template_path);
        if (mkdir(UPPER, 0755) < 0 || chmod(UPPER, st.st_mode & 07777) < 0 || mkdir(OVL_WORK, 0700) < 0)
                return fs_fail(negative_errno(), err, "overlay directories in the writable layer");
        /* userxattr: the overlay's own bookkeeping (opaque directories) in
         * user.overlay.* xattrs, the only kind the sandbox's namespace may set */
        static const char opts[] = "lowerdir=" LOWER ",upperdir=" UPPER ",workdir=" OVL_WORK ",userxattr";
        if (mount("overlay", NEWROOT, "overlay", MS_NOSUID | MS_NODEV, opts) < 0) {
                r = negative_errno();
                return fs_fail(r, err, "mount overlayfs for the template root %s (%s)%s", spec->template_path, opts,
                               r == -EPERM || r == -ENODEV || r == -EINVAL
                                       ? "; this kernel may not allow overlayfs in a user namespace (Linux 5.11 and "
                                         "later do), and cordon has no copy-up fallback"
                                       : "");
        }
        return 0;
}

/* The default view's root holds only mount points and is read-only once
 * built. It is an overlay over an empty lower directory, its upper on a
 * small tmpfs of its own, rather than that tmpfs itself: tmpfs keeps no
 * negative dentries (every lookup of a name it lacks, "/nonexistent" or a
 * program probing "/foo", allocates, misses and frees a dentry: 2.4 us
 * against 0.9 us on the host's root), while overlayfs caches the miss like
 * any disk filesystem. Nothing else changes: the same directories and links
 * are made in it, and it is made read-only at the end as before. */
/* The default root's top level, made in the overlay's upper directory
 * before the overlay is mounted: the system directories' mount points and
 * merged-/usr links, /dev, /proc and the writable places' mount points
 * (those the view would otherwise make through the overlay: the same
 * entries, modes and owner, made with plain tmpfs calls rather than the
 * overlay's create path and its lookups of the empty lower layer). What is
 * made here is only what build_view would make there anyway; it makes what
 * is missing as before (a home elsewhere than /root, a root that fell back
 * to a plain tmpfs). Bit i of the result: system_dirs[i] is a directory
 * of the host's (its mount point made); ~0: none made (fall back). */
static unsigned default_root_skeleton(const struct fs_view_spec *spec, int upperfd)
{
        unsigned dirs = 0;
        for (size_t i = 0; i < ELEMENTSOF(system_dirs); i++) {
                const char *d = system_dirs[i];
                struct stat st;
                if (lstat(d, &st) < 0)
                        continue;
                if (S_ISLNK(st.st_mode)) {
                        char target[4096];
                        ssize_t n = readlink(d, target, sizeof(target) - 1);
                        if (n < 0)
                                return ~0u;
                        target[n] = '\0';
                        if (symlinkat(target, upperfd, d + 1) < 0)
                                return ~0u;
                } else if (S_ISDIR(st.st_mode)) {
                        if (mkdirat(upperfd, d + 1, 0755) < 0)
                                return ~0u;
                        dirs |= 1u << i;
                }
        }
        if (mkdirat(upperfd, "dev", 0755) < 0 || mkdirat(upperfd, "proc", 0555) < 0)
                return ~0u;
        /* the writable places' mount points, as open_in_root makes them
         * (0755 each); a home elsewhere is left to it */
        if (spec->root_write_through || spec->root_readonly)
                return dirs;
        bool root_home = !spec->home || streq(spec->home, "/root");
        static const char *const points[] = {"tmp", "var", "var/tmp", "run", "root"};
        for (size_t i = 0; i < ELEMENTSOF(points); i++) {
                if (!root_home && streq(points[i], "root"))
                        continue;
                if (mkdirat(upperfd, points[i], 0755) < 0 && errno != EEXIST)
                        return ~0u;
        }
        return dirs;
}

/* *ret_skel: default_root_skeleton's answer where the overlay is mounted
 * over it, else ~0 (nothing made: build_view makes it all) */
static int mount_default_root(const struct fs_view_spec *spec, char *err, unsigned *ret_skel)
{
        *ret_skel = ~0u;
        if (mkdir(SKEL, 0755) < 0 || mount("tmpfs", SKEL, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") < 0)
                return fs_fail(negative_errno(), err, "mount the root's tmpfs %s", SKEL);
        if (mkdir(SKEL "/lower", 0555) < 0 || mkdir(SKEL "/upper", 0755) < 0 || mkdir(SKEL "/work", 0700) < 0)
                return fs_fail(negative_errno(), err, "overlay directories in %s", SKEL);
        unsigned skel = ~0u;
        {
                _cleanup_close_ int upperfd = open(SKEL "/upper", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (upperfd >= 0)
                        skel = default_root_skeleton(spec, upperfd);
        }
        if (skel == ~0u)
                return fs_fail(-EIO, err, "the root's skeleton in %s", SKEL "/upper");
        /* userxattr: as for a template root, the overlay's bookkeeping in
         * the user.overlay.* xattrs the sandbox's namespace may set */
        static const char opts[] = "lowerdir=" SKEL "/lower,upperdir=" SKEL "/upper,workdir=" SKEL "/work,userxattr";
        /* A kernel that refuses overlayfs here (before Linux 5.11 in a
         * user namespace) gets the plain tmpfs root: the same view, only
         * slower on missing names. */
        if (mount("overlay", NEWROOT, "overlay", MS_NOSUID | MS_NODEV, opts) == 0) {
                *ret_skel = skel;
                return 0;
        }
        if (mount("tmpfs", NEWROOT, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") < 0)
                return fs_fail(negative_errno(), err, "mount root tmpfs");
        return 0;
}

int fs_view_enter(const struct fs_view_spec *spec, char *err, size_t errsize, int *ret_layer_fd)
{
        int r;
        (void)errsize; /* fs_fail() writes at most 1024 bytes; callers pass that */

        /* Bind sources are host paths: open them before anything is mounted
         * over the host's tree (the staging tmpfs covers the host's /tmp). */
        if (spec->n_binds > 64)
                return fs_fail(-E2BIG, err, "%zu binds (at most 64)", spec->n_binds);
        _cleanup_close_ int lowerfd = -1;
        if (spec->template_path && spec->template_tree_fd < 0 && (lowerfd = open_template(spec, err)) < 0)
                return lowerfd;
        int srcfds[64];
        for (size_t i = 0; i < spec->n_binds; i++) {
                srcfds[i] = spec->bind_fds && spec->bind_fds[i] >= 0 ? fcntl(spec->bind_fds[i], F_DUPFD_CLOEXEC, 3)
                                                                     : open(spec->binds[i].source, O_PATH | O_CLOEXEC);
                if (srcfds[i] < 0) {
                        r = fs_fail(negative_errno(), err, "bind source %s", spec->binds[i].source);
                        while (i-- > 0)
                                close(srcfds[i]);
                        return r;
                }
        }
        r = build_view(spec, srcfds, lowerfd, err, ret_layer_fd);
        for (size_t i = 0; i < spec->n_binds; i++)
                close(srcfds[i]);
        return r;
}

static int build_view(const struct fs_view_spec *spec, const int *srcfds, int lowerfd, char *err, int *ret_layer_fd)
{
        int r;
        bool template = spec->template_path != NULL;

        /* nothing we mount may propagate back to the host */
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return fs_fail(negative_errno(), err, "make / private");
        if (mount("tmpfs", BASE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700,size=1m") < 0)
                return fs_fail(negative_errno(), err, "mount staging tmpfs on %s", BASE);
        if (mkdir(NEWROOT, 0755) < 0 || mkdir(MASKS, 0755) < 0 || mkdir(EMPTY_DIR, 0555) < 0)
                return fs_fail(negative_errno(), err, "staging directories");
        if ((r = touch(EMPTY_FILE, 0444)) < 0)
                return fs_fail(r, err, "staging empty file");
        if (mount(MASKS, MASKS, NULL, MS_BIND, NULL) < 0 ||
            (r = mount_setattr_path(MASKS, false,
                                    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)) < 0)
                return fs_fail(r < 0 ? r : negative_errno(), err, "read-only mask mount %s", MASKS);

        /* The writable layer: one tmpfs, capped at writable_bytes, whose
         * subdirectories are the private /tmp, /var/tmp, /run, home and
         * /dev/shm (and a template root's upper layer), so that one limit
         * covers every place the sandbox can write. */
        char opts[64];
        if (spec->writable_bytes > 0)
                snprintf(opts, sizeof(opts), "mode=0755,size=%lld", (long long)spec->writable_bytes);
        else
                snprintf(opts, sizeof(opts), "mode=0755");
        if (mkdir(WRITABLE, 0755) < 0 || mount("tmpfs", WRITABLE, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
                return fs_fail(negative_errno(), err, "mount the writable layer (tmpfs %s)", opts);

        unsigned skel = ~0u; /* the default root's top level, made already */
        if (template) {
                if ((r = mount_template_root(spec, lowerfd, err)) < 0)
                        return r;
        } else if ((r = mount_default_root(spec, err, &skel)) < 0)
                return r;

        _cleanup_close_ int rootfd = open(NEWROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0)
                return fs_fail(negative_errno(), err, "open new root");

        char dst[256];
        /* the default view: the host's system directories; a template is
         * its own system */
        for (size_t i = 0; !template && i < ELEMENTSOF(system_dirs); i++) {
                const char *d = system_dirs[i];
                struct stat st;
                if (lstat(d, &st) < 0)
                        continue; /* not on this host (e.g. /libx32) */
                snprintf(dst, sizeof(dst), "%s%s", NEWROOT, d);
                if (skel != ~0u) {
                        /* made in the skeleton: only the binds are left */
                        if (!(skel & (1u << i)))
                                continue;
                        r = bind_path(d, dst, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
                        if (r < 0)
                                return fs_fail(r, err, "bind %s read-only", d);
                        continue;
                }
                if (S_ISLNK(st.st_mode)) {
                        /* merged /usr: /bin -> usr/bin; recreate the link */
                        char target[4096];
                        ssize_t n = readlink(d, target, sizeof(target) - 1);
                        if (n < 0)
                                return fs_fail(negative_errno(), err, "readlink %s", d);
                        target[n] = '\0';
                        if (symlink(target, dst) < 0)
                                return fs_fail(negative_errno(), err, "symlink %s", d);
                        continue;
                }
                if (!S_ISDIR(st.st_mode))
                        continue;
                if (mkdir(dst, 0755) < 0)
                        return fs_fail(negative_errno(), err, "mkdir %s", d);
                r = bind_path(d, dst, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
                if (r < 0)
                        return fs_fail(r, err, "bind %s read-only", d);
        }
        for (size_t i = 0; !template && i < ELEMENTSOF(etc_secrets); i++)
                if ((r = mask_path(rootfd, etc_secrets[i])) < 0)
                        return fs_fail(r, err, "mask %s", etc_secrets[i]);

        const char *home = spec->home ? spec->home : "/root";
        const struct {
                const char *target, *sub;
                mode_t mode;
        } writable[] = {
                {"/tmp", "tmp", 01777}, {"/var/tmp", "var-tmp", 01777}, {"/run", "run", 0755},
                {home, "home", 0700},   {NULL, "shm", 01777},
        };
        for (size_t i = 0; i < ELEMENTSOF(writable); i++) {
                char sub[128];
                snprintf(sub, sizeof(sub), "%s/%s", WRITABLE, writable[i].sub);
                if (mkdir(sub, writable[i].mode) < 0 || chmod(sub, writable[i].mode) < 0)
                        return fs_fail(negative_errno(), err, "writable layer directory %s", writable[i].sub);
                /* /dev/shm: bound by setup_dev; a root written through has
                 * its own; an OCI read-only root is read-only everywhere but
                 * the config's own mounts, as under runc (podman --read-only
                 * asks for its tmpfs mounts there itself) */
                if (!writable[i].target || spec->root_write_through || spec->root_readonly)
                        continue;
                /* resolved inside the root: a template's own /var may be a
                 * symlink, which must not take the mount outside it */
                _cleanup_close_ int fd = open_in_root(rootfd, writable[i].target, true, false);
                struct stat st;
                if (fd < 0)
                        return fs_fail(fd, err, "mkdir %s%s", writable[i].target,
                                       fd == -ELOOP ? " (a symlink in the root there leads to no directory in it)"
                                                    : "");
                if (fstat(fd, &st) < 0)
                        return fs_fail(negative_errno(), err, "%s in the view", writable[i].target);
                if (!S_ISDIR(st.st_mode))
                        return fs_fail(-ENOTDIR, err, "%s in the view", writable[i].target);
                char p[64];
                fd_path(fd, p, sizeof(p));
                if (mount(sub, p, NULL, MS_BIND, NULL) < 0)
                        return fs_fail(negative_errno(), err, "bind the writable layer on %s", writable[i].target);
                /* a bind does not inherit the source mount's flags */
                if ((r = setattr_in_root(rootfd, writable[i].target, false, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0)) <
                    0)
                        return fs_fail(r, err, "nosuid,nodev on %s", writable[i].target);
        }

        if ((r = setup_dev(rootfd, spec, err)) < 0)
                return r;
        /* the resolver the sandbox sees: the sentry's DNS stub. Where the
         * template has no such file, an empty one is made to mount it on
         * (in a root written through, on the engine's disk: as runc makes
         * one for the engine's own bind there, which cordon's replaces) */
        bool make = template;
        if (spec->resolv_conf &&
            (r = overlay_file(rootfd, "/etc/resolv.conf", BASE "/resolv.conf", spec->resolv_conf, make, err)) < 0)
                return r;
        if (spec->hosts && (r = overlay_file(rootfd, "/etc/hosts", BASE "/hosts", spec->hosts, make, err)) < 0)
                return r;
        if (spec->ca_bundle && (r = overlay_file(rootfd, "/etc/ssl/certs/ca-certificates.crt", BASE "/ca-bundle",
                                                 spec->ca_bundle, make, err)) < 0)
                return r;
        if ((r = setup_proc(rootfd, spec->proc_tree_fd, err)) < 0)
                return r;
        for (size_t i = 0; i < spec->n_binds; i++)
                if ((r = setup_bind(rootfd, &spec->binds[i], srcfds[i], spec->bind_fds && spec->bind_fds[i] >= 0,
                                    err)) < 0)
                        return r;
        for (size_t i = 0; i < spec->n_rules; i++)
                if ((r = setup_rule(rootfd, &spec->rules[i], err)) < 0)
                        return r;

        /* resolved inside the root, as the writable places above */
        for (size_t i = 0; i < spec->n_mount_points; i++) {
                int fd = open_in_root(rootfd, spec->mount_points[i], true, false);
                if (fd >= 0)
                        close(fd);
        }
        /* the default root holds only mount points: read-only; a template's
         * root is its writable overlay */
        if ((!template || spec->root_readonly) &&
            (r = mount_setattr_path(NEWROOT, false, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)) < 0)
                return fs_fail(r, err, "make the view's root read-only");

        /* the writable layer's own root (its tmpfs, with a template root's
         * upper directory in it), which the view does not show: opened
         * before the pivot detaches it, for snapshots of the upper layer */
        _cleanup_close_ int layerfd = -1;
        if (ret_layer_fd && (layerfd = open(WRITABLE, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
                return fs_fail(negative_errno(), err, "open the writable layer %s", WRITABLE);
        if (chdir(NEWROOT) < 0)
                return fs_fail(negative_errno(), err, "chdir to new root");
        /* pivot_root(".", ".") stacks the old root on top of the new one;
         * detaching it leaves no path to the host's tree. */
        if (syscall(SYS_pivot_root, ".", ".") < 0)
                return fs_fail(negative_errno(), err, "pivot_root");
        if (umount2(".", MNT_DETACH) < 0)
                return fs_fail(negative_errno(), err, "detach the host's root");
        if (chdir("/") < 0)
                return fs_fail(negative_errno(), err, "chdir /");
        if (ret_layer_fd)
                *ret_layer_fd = TAKE_FD(layerfd);
        return 0;
}
