/* Landlock: a kernel-enforced floor beneath the view. The sandbox's init
 * builds a ruleset from the view's spec and restricts itself (and so the
 * command it forks) just before it hands control to the sentry:
 *
 *   read (files, directories)  the whole view, from its root
 *   execute                    the whole view, except beneath exec:false rules
 *   write (create, remove,     only the writable layer (/tmp, /var/tmp, /run,
 *   rename, write, truncate)   the home, /dev/shm), read-write binds and rules,
 *                              the writable device nodes and /dev/pts
 *   mknod of devices           nowhere
 *
 * Landlock checks the child's own (native) syscalls only. Opens the sentry
 * emulates are made by its workers, which Landlock does not restrict: this is
 * a floor should the filter or a fast path let a call run natively that
 * should not, not a second copy of the policy.
 *
 * Landlock rules only add rights beneath a path; they cannot take a right
 * back deeper down. So a rule that narrows inside a writable place (a
 * read-only path inside a read-write bind, an exec:false path inside /tmp) is
 * enforced by the mount flags and the sentry alone: Landlock there is the
 * coarser floor of its writable ancestor. exec:false beneath read-only parts
 * of the view (say /usr/local/bin, or a read-only bind) is expressed exactly,
 * by granting execute on every sibling along the way instead of on the
 * parent; that is only safe where nothing new can appear in those parents.
 *
 * Network rights (ABI 4) are not used: Landlock names TCP ports, not
 * addresses, so "own loopback only" cannot be said in it. The BPF egress
 * floor (net/floor.c) says it. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

#ifdef HAVE_LINUX_LANDLOCK_H
#include <linux/landlock.h>
#endif

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule       445
#define __NR_landlock_restrict_self  446
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

/* The uapi values, spelled out: the build host's headers may predate the
 * ABI the running kernel offers. */
#define LL_EXECUTE     (1ULL << 0)
#define LL_WRITE_FILE  (1ULL << 1)
#define LL_READ_FILE   (1ULL << 2)
#define LL_READ_DIR    (1ULL << 3)
#define LL_REMOVE_DIR  (1ULL << 4)
#define LL_REMOVE_FILE (1ULL << 5)
#define LL_MAKE_CHAR   (1ULL << 6)
#define LL_MAKE_DIR    (1ULL << 7)
#define LL_MAKE_REG    (1ULL << 8)
#define LL_MAKE_SOCK   (1ULL << 9)
#define LL_MAKE_FIFO   (1ULL << 10)
#define LL_MAKE_BLOCK  (1ULL << 11)
#define LL_MAKE_SYM    (1ULL << 12)
#define LL_REFER       (1ULL << 13) /* ABI 2 */
#define LL_TRUNCATE    (1ULL << 14) /* ABI 3 */

#define LL_SCOPE_ABSTRACT_UNIX (1ULL << 0) /* ABI 6 */
#define LL_SCOPE_SIGNAL        (1ULL << 1) /* ABI 6 */

#define LL_RULE_PATH_BENEATH 1

/* the rights that may be granted on a non-directory */
#define LL_FILE_RIGHTS (LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE)

#define LL_READ (LL_READ_FILE | LL_READ_DIR)
#define LL_WRITE                                                                                                    \
        (LL_WRITE_FILE | LL_REMOVE_DIR | LL_REMOVE_FILE | LL_MAKE_DIR | LL_MAKE_REG | LL_MAKE_SOCK | LL_MAKE_FIFO | \
         LL_MAKE_SYM | LL_REFER | LL_TRUNCATE)

/* Our own copy of the attribute structs: the kernel takes a larger struct
 * than it knows as long as the tail it does not know is zero. */
struct ll_ruleset_attr {
        uint64_t handled_access_fs;
        uint64_t handled_access_net;
        uint64_t scoped;
};

struct ll_path_beneath_attr {
        uint64_t allowed_access;
        int32_t parent_fd;
} __attribute__((packed));

/* Where most opens of a system's files lie (the default view binds the
 * host's /usr and /etc; a template has its own): read rules of their own,
 * so that the walk of an open stops there (see fs_landlock_apply). A path
 * the view lacks is skipped. */
static const char *const read_waypoints[] = {
        "/usr",       "/usr/bin",     "/usr/lib",     "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64", "/usr/libexec", "/usr/include", "/usr/share",
        "/usr/local", "/etc",         "/opt",         "/var",
};

/* bounds the walk towards an exec:false path */
#define MAX_DEPTH 32

struct ll_builder {
        int ruleset_fd;
        uint64_t handled;
        /* writable places, absolute paths in the view */
        const char **writable;
        size_t n_writable;
        char *err;
};

int fs_landlock_abi(void)
{
        long abi = syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        if (abi < 0)
                return errno == ENOSYS ? -ENOSYS : negative_errno();
        return (int)abi;
}

/* Grants rights beneath path (as far as the kernel handles them, and only
 * the file rights on a file). A path the view lacks is skipped: there is
 * nothing there to grant on. */
static int grant(struct ll_builder *b, const char *path, uint64_t rights)
{
        _cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT)
                        return 0;
                return fs_fail(negative_errno(), b->err, "Landlock: open %s", path);
        }
        struct stat st;
        if (fstat(fd, &st) < 0)
                return fs_fail(negative_errno(), b->err, "Landlock: stat %s", path);
        rights &= b->handled;
        if (!S_ISDIR(st.st_mode))
                rights &= LL_FILE_RIGHTS;
        if (rights == 0)
                return 0;
        struct ll_path_beneath_attr attr = {.allowed_access = rights, .parent_fd = fd};
        if (syscall(__NR_landlock_add_rule, b->ruleset_fd, LL_RULE_PATH_BENEATH, &attr, 0) < 0)
                return fs_fail(negative_errno(), b->err, "Landlock: rule for %s", path);
        return 0;
}

static bool is_writable(const struct ll_builder *b, const char *path)
{
        for (size_t i = 0; i < b->n_writable; i++)
                if (path_beneath(path, b->writable[i]))
                        return true;
        return false;
}

/* Grants rights beneath dir except beneath the denied paths: on dir itself
 * when no denied path lies beneath it, else on each entry of dir in turn.
 * Where dir is writable, new entries could appear that the per-entry rules
 * would not cover, so it gets the rights whole (the mount flags then hold
 * alone, as the header says). */
static int grant_except(struct ll_builder *b, const char *dir, uint64_t rights, const char *const *denied,
                        size_t n_denied, unsigned depth)
{
        bool split = false;
        for (size_t i = 0; i < n_denied; i++) {
                if (path_beneath(dir, denied[i]))
                        return 0; /* denied whole */
                if (path_beneath(denied[i], dir))
                        split = true;
        }
        if (!split || depth >= MAX_DEPTH || is_writable(b, dir))
                return grant(b, dir, rights);

        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT || errno == ENOTDIR
                               ? 0
                               : fs_fail(negative_errno(), b->err, "Landlock: list %s", dir);
        DIR *d = fdopendir(fd);
        if (!d)
                return fs_fail(negative_errno(), b->err, "Landlock: list %s", dir);
        fd = -1; /* owned by d */
        int r = 0;
        struct dirent *de;
        while (r >= 0 && (de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                char child[PATH_MAX];
                if (snprintf(child, sizeof(child), "%s/%s", streq(dir, "/") ? "" : dir, de->d_name) >=
                    (int)sizeof(child))
                        continue;
                struct stat st;
                if (lstat(child, &st) < 0 || S_ISLNK(st.st_mode))
                        continue; /* a symlink leads to a place with rules of its own */
                r = grant_except(b, child, rights, denied, n_denied, depth + 1);
        }
        closedir(d);
        return r;
}

static void freep_strv(char ***p)
{
        if (!*p)
                return;
        for (char **q = *p; *q; q++)
                free(*q);
        free(*p);
}

/* The mount table of the view (init's, once the view is built): each mount
 * point and whether the mount is read-only. */
struct ro_mounts {
        char **point;
        bool *ro;
        size_t n;
};

static void mounts_free(struct ro_mounts *m)
{
        for (size_t i = 0; i < m->n; i++)
                free(m->point[i]);
        free(m->point);
        free(m->ro);
}

/* table: the text of /proc/self/mountinfo as the caller read it, or NULL
 * to read it here */
static int mounts_read(struct ro_mounts *m, const char *table, char *err)
{
        _cleanup_fclose_ FILE *f =
                table ? fmemopen((void *)table, strlen(table), "r") : fopen("/proc/self/mountinfo", "re");
        if (!f)
                return fs_fail(negative_errno(), err, "Landlock: read /proc/self/mountinfo");
        _cleanup_free_ char *line = NULL;
        size_t cap = 0, mcap = 0;
        while (getline(&line, &cap, f) > 0) {
                /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ... */
                char *save = NULL, *fld[6];
                size_t k = 0;
                for (char *t = strtok_r(line, " ", &save); t && k < 6; t = strtok_r(NULL, " ", &save))
                        fld[k++] = t;
                if (k < 6)
                        continue;
                if (m->n == mcap) {
                        mcap = mcap ? 2 * mcap : 64;
                        m->point = xrealloc(m->point, mcap * sizeof(char *));
                        m->ro = xrealloc(m->ro, mcap * sizeof(bool));
                }
                /* a mount point that does not unescape counts as
                 * read-write: no truncate beneath it (fails closed) */
                bool named = fs_unescape_mountinfo(fld[4]) == 0;
                m->point[m->n] = xstrdup(fld[4]);
                m->ro[m->n] = named && (streq(fld[5], "ro") || startswith(fld[5], "ro,"));
                m->n++;
        }
        return 0;
}

/* LL_TRUNCATE where it may be granted alongside a read waypoint's rights,
 * else 0. Landlock's open check asks for the truncate right too on every
 * open (to remember it in the file), so a walk from a read-only file never
 * finds all it asks for and climbs to the root whatever the read waypoints
 * say: 1.2 us of a 2.9 us open of /etc/passwd here. Granting truncate is
 * harmless where every mount at and beneath the waypoint is read-only (a
 * truncate there fails with EROFS, and Landlock denies the sandbox any
 * mount or remount that would change it) or a writable place (granted
 * truncate anyway); anywhere else it stays withheld. */
static uint64_t waypoint_truncate(const struct ll_builder *b, const struct ro_mounts *m, const char *path)
{
        if (!(b->handled & LL_TRUNCATE) || m->n == 0)
                return 0;
        /* the mount path is on: the last (topmost) of the longest mount
         * points it lies beneath */
        size_t best = SIZE_MAX, best_len = 0;
        for (size_t i = 0; i < m->n; i++) {
                size_t len = strlen(m->point[i]);
                if (path_beneath(path, m->point[i]) && (best == SIZE_MAX || len >= best_len)) {
                        best = i;
                        best_len = len;
                }
        }
        if (best == SIZE_MAX || !m->ro[best])
                return 0;
        for (size_t i = 0; i < m->n; i++)
                if (path_beneath(m->point[i], path) && !m->ro[i] && !is_writable(b, m->point[i]))
                        return 0;
        return LL_TRUNCATE;
}

/* "/NAME" for each directory at the top of a template root the sandbox may
 * write (see fs_landlock_apply); NULL-terminated, *ret_n entries. */
static char **template_top_dirs(const struct fs_view_spec *spec, size_t *ret_n)
{
        static const char *const never[] = {"proc", "dev", "sys"};
        size_t n = 0, cap = 16;
        char **v = xcalloc(cap + 1, sizeof(char *));
        DIR *d = opendir("/");
        struct dirent *e;
        while (d && (e = readdir(d))) {
                if (e->d_type != DT_DIR || streq(e->d_name, ".") || streq(e->d_name, ".."))
                        continue;
                bool skip = false;
                for (size_t i = 0; i < ELEMENTSOF(never); i++)
                        skip = skip || streq(e->d_name, never[i]);
                char path[NAME_MAX + 2];
                snprintf(path, sizeof(path), "/%s", e->d_name);
                for (size_t i = 0; i < spec->n_binds; i++)
                        skip = skip || (spec->binds[i].read_only && streq(spec->binds[i].target, path));
                for (size_t i = 0; i < spec->n_rules; i++)
                        skip = skip || (spec->rules[i].access != FS_READ_WRITE && streq(spec->rules[i].path, path));
                if (skip)
                        continue;
                if (n == cap) {
                        cap *= 2;
                        v = xrealloc(v, (cap + 1) * sizeof(char *));
                }
                v[n++] = xstrdup(path);
                v[n] = NULL;
        }
        if (d)
                closedir(d);
        *ret_n = n;
        return v;
}

/* the device nodes anyone may write, and the sandbox's own ptys: the only
 * write rights Landlock grants beneath /dev */
static const char *const dev_writable[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts"};

bool fs_landlock_dev_writable(const char *path)
{
        for (size_t i = 0; i < ELEMENTSOF(dev_writable); i++)
                if (path_beneath(path, dev_writable[i]))
                        return true;
        return false;
}

/* The writable places of spec that fs_landlock_apply grants writing (the
 * writable layer, read-write binds and rules; a template's top-level
 * directories are added there), into ret (room for N_LAYER + n_binds +
 * n_rules): their number. */
#define N_LAYER 5
static size_t writable_places(const struct fs_view_spec *spec, const char **ret)
{
        size_t n = 0;
        const char *home = spec->home ? spec->home : "/root";
        const char *layer[N_LAYER] = {"/tmp", "/var/tmp", "/run", home, "/dev/shm"};
        for (size_t i = 0; i < ELEMENTSOF(layer); i++)
                ret[n++] = layer[i];
        for (size_t i = 0; i < spec->n_binds; i++)
                if (!spec->binds[i].read_only)
                        ret[n++] = spec->binds[i].target;
        for (size_t i = 0; i < spec->n_rules; i++)
                if (spec->rules[i].access == FS_READ_WRITE)
                        ret[n++] = spec->rules[i].path;
        return n;
}

bool fs_landlock_proc_unwritable(const struct fs_view_spec *spec)
{
        /* a template's top-level directories never include /proc */
        _cleanup_free_ const char **w = xcalloc(N_LAYER + spec->n_binds + spec->n_rules, sizeof(char *));
        size_t n = writable_places(spec, w);
        for (size_t i = 0; i < n; i++)
                if (path_beneath(w[i], "/proc") || path_beneath("/proc", w[i]))
                        return false;
        return true;
}

int fs_landlock_apply(const struct fs_view_spec *spec, char *err, size_t errsize)
{
        return fs_landlock_apply_table(spec, NULL, err, errsize);
}

int fs_landlock_apply_table(const struct fs_view_spec *spec, const char *mountinfo, char *err, size_t errsize)
{
        (void)errsize; /* fs_fail() writes at most 1024 bytes; callers pass that */
        int abi = fs_landlock_abi();
        if (abi == -ENOSYS || abi == -EOPNOTSUPP) {
                snprintf(err, 1024, "%s",
                         abi == -ENOSYS ? "the kernel has no Landlock (built without CONFIG_SECURITY_LANDLOCK)"
                                        : "Landlock is disabled at boot (not in the lsm= list)");
                return 0;
        }
        if (abi < 0)
                return fs_fail(abi, err, "Landlock: probing the ABI");
        if (abi < 2) {
                /* ABI 1 refuses every rename or link across directories in a
                 * restricted process (it cannot grant LL_REFER): mv, git and
                 * package managers would break. */
                snprintf(err, 1024, "Landlock ABI %d is too old (renames across directories need ABI 2, Linux 5.19)",
                         abi);
                return 0;
        }

        uint64_t handled = LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_READ_DIR | LL_REMOVE_DIR | LL_REMOVE_FILE |
                           LL_MAKE_CHAR | LL_MAKE_DIR | LL_MAKE_REG | LL_MAKE_SOCK | LL_MAKE_FIFO | LL_MAKE_BLOCK |
                           LL_MAKE_SYM | LL_REFER;
        if (abi >= 3)
                handled |= LL_TRUNCATE;
        struct ll_ruleset_attr attr = {.handled_access_fs = handled};
        /* no signals to, and no abstract unix sockets of, processes outside
         * the sandbox's Landlock domain (signals: but to its pod's other
         * containers in a pid namespace they share, see pid_shared) */
        if (abi >= 6)
                attr.scoped = LL_SCOPE_ABSTRACT_UNIX | (spec->pid_shared ? 0 : LL_SCOPE_SIGNAL);
        int rfd = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof(attr), 0);
        if (rfd < 0)
                return fs_fail(negative_errno(), err, "Landlock: create the ruleset (ABI %d)", abi);
        _cleanup_close_ int ruleset_fd = rfd;

        /* A template root is itself writable (its overlay's upper layer is
         * the sandbox's): each of its top-level directories is, but /proc,
         * /dev and /sys, and what a read-only bind or rule names there.
         * Landlock cannot grant a directory without its subtree, so a new
         * top-level entry cannot be made (the mount view would allow it). */
        _cleanup_(freep_strv) char **top = NULL;
        size_t n_top = 0;
        if (spec->template_path)
                top = template_top_dirs(spec, &n_top);
        _cleanup_free_ const char **writable = xcalloc(N_LAYER + spec->n_binds + spec->n_rules + n_top, sizeof(char *));
        struct ll_builder b = {.ruleset_fd = ruleset_fd, .handled = handled, .err = err, .writable = writable};
        b.n_writable = writable_places(spec, writable);
        for (size_t i = 0; i < n_top; i++)
                b.writable[b.n_writable++] = top[i];

        _cleanup_free_ const char **noexec = xcalloc(spec->n_rules + 1, sizeof(char *));
        size_t n_noexec = 0;
        for (size_t i = 0; i < spec->n_rules; i++)
                if (spec->rules[i].exec == 0 && !fs_access_masks(spec->rules[i].access))
                        noexec[n_noexec++] = spec->rules[i].path;

        int r = grant(&b, "/", LL_READ);
        /* A template root's own top level: entries may be made, removed and
         * renamed there, as the mount view allows (an OCI container's
         * `mkdir /app`, `ln -s`, a package's rename into /). Landlock
         * cannot grant a directory without what lies beneath it, so these
         * rights reach every subtree, where the mounts decide as for the
         * sentry's own calls: /proc makes nothing, /sys and read-only binds
         * and rules are read-only mounts, and the writable places have the
         * rights already. Writing, truncating and device nodes are not
         * among them: a file directly in the root is opened for writing by
         * the sentry (fs/open.c), and /proc's files stay unwritable. */
        if (r >= 0 && spec->template_path)
                r = grant(&b, "/",
                          LL_MAKE_DIR | LL_MAKE_REG | LL_MAKE_SYM | LL_MAKE_FIFO | LL_MAKE_SOCK | LL_REMOVE_DIR |
                                  LL_REMOVE_FILE | LL_REFER);
        /* The same read right again where a walk would otherwise climb on:
         * Landlock checks an open by walking from the file towards the root
         * until a rule grants what is asked, so with the one rule at "/"
         * every open walked the whole way, across each mount (an open at
         * depth 7 cost 2.2 us natively, 3.4 us under the ruleset; a rule two
         * levels up halves the difference). Nothing is granted that "/"
         * does not already grant. */
        _cleanup_(mounts_free) struct ro_mounts mt = {0};
        if (r >= 0 && (b.handled & LL_TRUNCATE))
                r = mounts_read(&mt, mountinfo, err);
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(read_waypoints); i++)
                r = grant(&b, read_waypoints[i], LL_READ | waypoint_truncate(&b, &mt, read_waypoints[i]));
        for (size_t i = 0; r >= 0 && i < spec->n_binds; i++)
                r = grant(&b, spec->binds[i].target, LL_READ | waypoint_truncate(&b, &mt, spec->binds[i].target));
        if (r >= 0)
                r = grant_except(&b, "/", LL_EXECUTE, noexec, n_noexec, 0);
        /* an exec:true rule beneath an exec:false one */
        for (size_t i = 0; r >= 0 && i < spec->n_rules; i++)
                if (spec->rules[i].exec == 1 && !fs_access_masks(spec->rules[i].access))
                        r = grant(&b, spec->rules[i].path, LL_EXECUTE);
        for (size_t i = 0; r >= 0 && i < b.n_writable; i++)
                r = grant(&b, b.writable[i], LL_WRITE | LL_READ); /* read: a waypoint, as above */
        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(dev_writable); i++)
                r = grant(&b, dev_writable[i], LL_WRITE_FILE | LL_TRUNCATE);
        if (r < 0)
                return r;

        /* fails closed: from here on a failure is the sandbox's failure */
        if (syscall(__NR_landlock_restrict_self, ruleset_fd, 0) < 0)
                return fs_fail(negative_errno(), err, "Landlock: restrict_self");
        return abi;
}
