/* sentry/cgroup/ private: the helpers every part of the room uses: error
 * messages, control files read and written whole, the processes a group
 * lists and their killing by pidfd, a new group directory, and where the
 * hierarchies are (from /proc/self/mountinfo and /proc/self/cgroup). */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "common/util.h"
#include "sentry/cgroup/cgroup-internal.h"

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

/* ------------------------------------------------------------------------ */
/* small helpers */

_printf_(2, 3) void cg_set_error(char **ret_error, const char *fmt, ...)
{
        if (!ret_error)
                return;
        va_list ap;
        va_start(ap, fmt);
        *ret_error = xvasprintf(fmt, ap);
        va_end(ap);
}

/* True if word is one of the sep-separated items of list. */
bool cg_list_has(const char *list, char sep, const char *word)
{
        size_t n = strlen(word);
        for (const char *p = list; p && *p;) {
                const char *end = strchr(p, sep);
                size_t len = end ? (size_t)(end - p) : strlen(p);
                if (len == n && strncmp(p, word, n) == 0)
                        return true;
                p = end ? end + 1 : NULL;
        }
        return false;
}

static int parse_i64(const char *s, int64_t *ret)
{
        char *end;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        if (errno != 0 || end == s || (*end != '\0' && *end != '\n' && *end != ' '))
                return -EBADMSG;
        *ret = v;
        return 0;
}

/* ------------------------------------------------------------------------ */
/* control files */

/* Writes value to a control file in one write(2): the kernel takes each
 * write as one whole command, so it must not be split. what (may be NULL)
 * names the limit the write enforces, for the message. */
int cg_ctl_write(int dfd, const char *dir, const char *file, const char *value, const char *what, char **ret_error)
{
        int r;
        _cleanup_close_ int fd = openat(dfd, file, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) {
                r = negative_errno();
                cg_set_error(ret_error, "%s%s%s/%s: cannot open for writing: %s", what ?: "",
                             what ? " cannot be enforced: " : "", dir, file, strerror(-r));
                return r;
        }
        size_t len = strlen(value);
        ssize_t n;
        do
                n = write(fd, value, len);
        while (n < 0 && errno == EINTR);
        if (n < 0 || (size_t)n != len) {
                r = n < 0 ? negative_errno() : -EIO;
                cg_set_error(ret_error, "%s%s%s/%s: writing \"%s\" failed: %s", what ?: "",
                             what ? " cannot be enforced: " : "", dir, file, value, strerror(-r));
                return r;
        }
        return 0;
}

int cg_write_i64(const struct cg_dir *d, const char *file, int64_t v, const char *what, char **ret_error)
{
        char val[32];
        snprintf(val, sizeof(val), "%" PRId64, v);
        return cg_ctl_write(d->fd, d->path, file, val, what, ret_error);
}

int cg_cpuset_write(const struct cg_dir *d, const struct cg_oci *o, char **ret_error)
{
        int r;
        if (o->cpus &&
            (r = cg_ctl_write(d->fd, d->path, "cpuset.cpus", o->cpus, "linux.resources.cpu.cpus", ret_error)) < 0)
                return r;
        if (o->mems &&
            (r = cg_ctl_write(d->fd, d->path, "cpuset.mems", o->mems, "linux.resources.cpu.mems", ret_error)) < 0)
                return r;
        return 0;
}

/* As cg_ctl_write, for a file only some kernels or configurations have (swap
 * accounting, for one): where it is absent there is nothing to set. */
int cg_ctl_write_if_present(int dfd, const char *dir, const char *file, const char *value, const char *what,
                            char **ret_error)
{
        if (faccessat(dfd, file, F_OK, 0) < 0 && errno == ENOENT)
                return 0;
        return cg_ctl_write(dfd, dir, file, value, what, ret_error);
}

/* Reads a small control file whole, NUL-terminated. */
int cg_ctl_read(int dfd, const char *file, char *buf, size_t size)
{
        _cleanup_close_ int fd = openat(dfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        ssize_t n = read_full(fd, buf, size - 1);
        if (n < 0)
                return (int)n;
        if ((size_t)n == size - 1)
                return -EFBIG;
        buf[n] = '\0';
        return 0;
}

/* A number from a control file: the whole file (key NULL) or the value on
 * the line "key N". -ENOENT when the file or the key is not there. */
int cg_ctl_read_i64(int dfd, const char *file, const char *key, int64_t *ret)
{
        char buf[4096];
        int r = cg_ctl_read(dfd, file, buf, sizeof(buf));
        if (r < 0)
                return r;
        if (!key)
                return parse_i64(buf, ret);
        size_t n = strlen(key);
        for (const char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
                if (strncmp(p, key, n) == 0 && p[n] == ' ')
                        return parse_i64(p + n + 1, ret);
        return -ENOENT;
}

/* A statistic, or -1 when this host does not offer it. */
int cg_stat_value(int dfd, const char *file, const char *key, int64_t div, int64_t *ret)
{
        int64_t v;
        int r = cg_ctl_read_i64(dfd, file, key, &v);
        if (r == -ENOENT || r == -EBADMSG || r == -EOPNOTSUPP) {
                *ret = -1;
                return 0;
        }
        if (r < 0)
                return r;
        *ret = v / div;
        return 0;
}

static int cmp_pid(const void *a, const void *b)
{
        pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;
        return (x > y) - (x < y);
}

/* The pids listed in a group's cgroup.procs (at most PROCS_MAX of them), in
 * the order listed. A group that is gone reads as empty. */
static int procs_read(int dfd, pid_t **ret_pids, size_t *ret_n)
{
        _cleanup_free_ pid_t *pids = NULL;
        size_t n = 0, cap = 0;
        _cleanup_close_ int fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) {
                if (errno != ENOENT && errno != ENODEV)
                        return negative_errno();
        } else {
                char buf[4096];
                int64_t cur = -1;
                for (;;) {
                        ssize_t k = read(fd, buf, sizeof(buf));
                        if (k < 0 && errno == EINTR)
                                continue;
                        if (k < 0 && errno == ENODEV) /* removed while reading */
                                break;
                        if (k < 0)
                                return negative_errno();
                        /* k == 0 ends the file: flush the last number */
                        for (ssize_t i = 0; i <= k; i++) {
                                char c = i < k ? buf[i] : '\n';
                                if (c >= '0' && c <= '9') {
                                        cur = (cur < 0 ? 0 : cur) * 10 + (c - '0');
                                        if (cur > INT_MAX)
                                                return -EBADMSG;
                                        continue;
                                }
                                if (cur > 0 && n < PROCS_MAX) {
                                        if (n == cap) {
                                                cap = cap ? cap * 2 : 64;
                                                pids = xrealloc(pids, cap * sizeof(*pids));
                                        }
                                        pids[n++] = (pid_t)cur;
                                }
                                cur = -1;
                        }
                        if (k == 0)
                                break;
                }
        }
        *ret_pids = TAKE_PTR(pids);
        *ret_n = n;
        return 0;
}

/* SIGKILLs the processes listed in a group's cgroup.procs. Returns how many
 * were listed (0: the group is empty) or -errno.
 *
 * A pid read from cgroup.procs may exit and be reused by a process outside
 * the group before kill(2) reaches it, and the sentry runs as root. So each
 * pid is pinned with a pidfd first and the list read again: a pinned process
 * that is still alive when signalled held its pid the whole time, so if the
 * second read lists that pid, it is that process, and it is in the group.
 * Only without pidfds (Linux < 5.3) does it fall back to kill(2); the
 * callers freeze the group first where they can, so nothing in it exits. */
int cg_kill_listed(int dfd)
{
        _cleanup_free_ pid_t *listed = NULL;
        size_t n_listed;
        int r = procs_read(dfd, &listed, &n_listed);
        if (r < 0 || n_listed == 0)
                return r;

        for (size_t off = 0; off < n_listed; off += KILL_BATCH) {
                size_t m = n_listed - off < KILL_BATCH ? n_listed - off : KILL_BATCH;
                int pidfd[KILL_BATCH];
                for (size_t i = 0; i < m; i++) {
                        pidfd[i] = (int)syscall(SYS_pidfd_open, listed[off + i], 0);
                        if (pidfd[i] < 0 && errno == ENOSYS)
                                (void)kill(listed[off + i], SIGKILL);
                }
                _cleanup_free_ pid_t *again = NULL;
                size_t n_again = 0;
                r = procs_read(dfd, &again, &n_again);
                /* an empty list may come back as NULL, which qsort and
                 * bsearch must not be given (UBSan: nonnull) */
                if (r >= 0 && n_again > 0)
                        qsort(again, n_again, sizeof(*again), cmp_pid);
                for (size_t i = 0; i < m; i++) {
                        if (pidfd[i] < 0)
                                continue;
                        if (r >= 0 && n_again > 0 && bsearch(&listed[off + i], again, n_again, sizeof(*again), cmp_pid))
                                (void)syscall(SYS_pidfd_send_signal, pidfd[i], SIGKILL, NULL, 0);
                        close(pidfd[i]);
                }
                if (r < 0)
                        return r;
        }
        return n_listed > INT_MAX ? INT_MAX : (int)n_listed;
}

/* Opens the sentry's own group in a hierarchy (O_PATH), the parent of the
 * groups cordon makes there: the fd, or -errno with *ret_error set. */
int cg_open_parent(const char *parent, char **ret_error)
{
        int fd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                int r = negative_errno();
                cg_set_error(ret_error, "%s: cannot open the sentry's control group: %s", parent, strerror(-r));
                return r;
        }
        return fd;
}

/* Creates "cordon-<id>" in a parent group and adds it to cg. */
int cg_make_group(struct cgroup *cg, const char *parent, const char *name, char **ret_error)
{
        int r;
        _cleanup_close_ int pfd = cg_open_parent(parent, ret_error);
        if (pfd < 0)
                return pfd;
        if (mkdirat(pfd, name, 0755) < 0) {
                r = negative_errno();
                cg_set_error(ret_error, "creating the control group %s/%s failed: %s%s", parent, name, strerror(-r),
                             r == -EEXIST ? " (a leftover of an earlier sandbox with this id? `cordon gc` removes it)"
                                          : "");
                return r;
        }
        int fd = openat(pfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) {
                r = negative_errno();
                (void)unlinkat(pfd, name, AT_REMOVEDIR);
                cg_set_error(ret_error, "%s/%s: cannot open the new control group: %s", parent, name, strerror(-r));
                return r;
        }
        cg->dirs[cg->n_dirs].path = xasprintf("%s/%s", parent, name);
        cg->dirs[cg->n_dirs].fd = fd;
        cg->paths[cg->n_dirs] = cg->dirs[cg->n_dirs].path;
        cg->n_dirs++;
        return 0;
}

/* ------------------------------------------------------------------------ */
/* where the hierarchies are */

static bool has_dotdot(const char *path)
{
        for (const char *p = strstr(path, ".."); p; p = strstr(p + 1, ".."))
                if ((p == path || p[-1] == '/') && (p[2] == '/' || p[2] == '\0'))
                        return true;
        return false;
}

/* /proc/self/cgroup and /proc/self/mountinfo, read once per process: a start
 * looked each hierarchy up in them a dozen times over (gc's scan for
 * leftovers, the backend's choice, each group's parent), some 25 opens and
 * reads. What they say about this process does not change while it sets a
 * sandbox up: cordon never moves itself, and a mount made meanwhile beside
 * the cgroup hierarchies is nothing cordon would use. */
static FILE *self_fopen(const char *path)
{
        static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
        static struct {
                const char *path;
                char *text;
                size_t len;
        } cache[] = {{"/proc/self/cgroup", NULL, 0}, {"/proc/self/mountinfo", NULL, 0}};
        for (size_t i = 0; i < ELEMENTSOF(cache); i++) {
                if (!streq(path, cache[i].path))
                        continue;
                pthread_mutex_lock(&lock);
                if (!cache[i].text) {
                        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
                        size_t size = 0, len = 0;
                        char *text = NULL;
                        for (ssize_t n = 1; fd >= 0 && n > 0; len += (size_t)n) {
                                if (len + 4096 > size)
                                        text = xrealloc(text, size = size * 2 + 8192);
                                do
                                        n = read(fd, text + len, size - len);
                                while (n < 0 && errno == EINTR);
                                if (n < 0) {
                                        free(TAKE_PTR(text));
                                        break;
                                }
                        }
                        if (len > 0) {
                                cache[i].text = text;
                                cache[i].len = len;
                        } else
                                free(text); /* unreadable or empty: not kept, read each time */
                }
                FILE *f = cache[i].text ? fmemopen(cache[i].text, cache[i].len, "r") : fopen(path, "re");
                pthread_mutex_unlock(&lock);
                return f;
        }
        return fopen(path, "re");
}

/* The sentry's own group in a hierarchy, from /proc/self/cgroup: the v1 line
 * "N:a,b:/path" listing ctrl, or with ctrl NULL the v2 line "0::/path". */
static int own_group(const char *ctrl, char **ret_path)
{
        _cleanup_fclose_ FILE *f = self_fopen("/proc/self/cgroup");
        if (!f)
                return negative_errno();
        _cleanup_free_ char *line = NULL;
        size_t size = 0;
        while (getline(&line, &size, f) > 0) {
                line[strcspn(line, "\n")] = '\0';
                char *ctrls = strchr(line, ':');
                char *path = ctrls ? strchr(ctrls + 1, ':') : NULL;
                if (!path || path[1] != '/')
                        continue;
                *ctrls++ = '\0';
                *path++ = '\0';
                bool match = ctrl ? !streq(line, "0") && cg_list_has(ctrls, ',', ctrl) : streq(line, "0") && !*ctrls;
                if (match && has_dotdot(path))
                        return -ENOENT; /* outside our cgroup namespace's root: not reachable through a mount */
                if (match) {
                        *ret_path = xstrdup(path);
                        return 0;
                }
        }
        return -ENOENT;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape_octal(char *s)
{
        char *w = s;
        for (char *p = s; *p; p++) {
                if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' &&
                    p[3] <= '7') {
                        *w++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
                        p += 3;
                } else
                        *w++ = *p;
        }
        *w = '\0';
}

/* Finds the mount of a hierarchy in /proc/self/mountinfo: fstype "cgroup"
 * with ctrl among its super options, or "cgroup2" for ctrl NULL. With own
 * (a path from /proc/self/cgroup) it returns the directory of that group
 * beneath a mount that shows it; without, whether one is mounted and
 * (ret_dir not NULL) its mount point. */
int cg_find_mount(const char *ctrl, const char *own, char **ret_dir)
{
        _cleanup_fclose_ FILE *f = self_fopen("/proc/self/mountinfo");
        if (!f)
                return negative_errno();
        _cleanup_free_ char *line = NULL;
        size_t size = 0;
        while (getline(&line, &size, f) > 0) {
                line[strcspn(line, "\n")] = '\0';
                /* id parent major:minor root mountpoint options [optional...] - fstype source superoptions */
                char *field[6], *save = NULL, *tok;
                size_t n = 0;
                while (n < 6 && (tok = strtok_r(n == 0 ? line : NULL, " ", &save)))
                        field[n++] = tok;
                if (n < 6)
                        continue;
                while ((tok = strtok_r(NULL, " ", &save)) && !streq(tok, "-"))
                        ;
                char *fstype = strtok_r(NULL, " ", &save);
                char *source = fstype ? strtok_r(NULL, " ", &save) : NULL;
                char *super = source ? strtok_r(NULL, " ", &save) : NULL;
                if (!super)
                        continue;
                if (ctrl ? !(streq(fstype, "cgroup") && cg_list_has(super, ',', ctrl)) : !streq(fstype, "cgroup2"))
                        continue;
                char *root = field[3], *mnt = field[4];
                unescape_octal(root);
                unescape_octal(mnt);
                if (!own) {
                        if (ret_dir)
                                *ret_dir = xstrdup(mnt);
                        return 0;
                }
                /* the group must lie beneath the mount's root to be reachable through it */
                const char *rel;
                if (streq(root, "/"))
                        rel = own;
                else if (startswith(own, root) && (own[strlen(root)] == '/' || own[strlen(root)] == '\0'))
                        rel = own + strlen(root);
                else
                        continue;
                if (streq(rel, "/"))
                        rel = "";
                *ret_dir = xasprintf("%s%s", streq(mnt, "/") && *rel ? "" : mnt, rel);
                return 0;
        }
        return -ENOENT;
}

/* cgroupsPath (OCI): where the groups go instead of beneath the sentry's
 * own: absolute, from each hierarchy's root; relative, beneath the
 * sentry's own group (runc's reading). */
static char *parent_override;

int cgroup_set_parent(const char *path)
{
        if (!path || !path[0] || strlen(path) > 1024 || has_dotdot(path) || strstr(path, "//") || strchr(path, ':'))
                return -EINVAL;
        for (const char *p = path; *p; p++)
                if (*p == '\n' || (p[0] == '/' && p[1] == '.' && (p[2] == '/' || p[2] == '\0')))
                        return -EINVAL;
        free(parent_override);
        parent_override = xstrdup(path);
        size_t n = strlen(parent_override);
        while (n > 1 && parent_override[n - 1] == '/')
                parent_override[--n] = '\0';
        return 0;
}

const char *cg_parent_override(void)
{
        return parent_override;
}

/* linux.resources beyond the policy's limits: process-wide, as the
 * cgroupsPath is (one container per sentry) */
static struct cg_oci oci_resources = {.memory_swappiness = -1};
static char *oci_cpus, *oci_mems;

void cgroup_set_oci(const struct cg_oci *oci)
{
        free(oci_cpus);
        free(oci_mems);
        oci_resources = oci ? *oci : CG_OCI_NONE;
        oci_cpus = oci && oci->cpus ? xstrdup(oci->cpus) : NULL;
        oci_mems = oci && oci->mems ? xstrdup(oci->mems) : NULL;
        oci_resources.cpus = oci_cpus;
        oci_resources.mems = oci_mems;
}

bool cgroup_oci_asks(void)
{
        const struct cg_oci *o = &oci_resources;
        return o->cpu_quota > 0 || o->cpu_period > 0 || o->cpu_shares > 0 || o->cpus || o->mems ||
               o->memory_reservation > 0 || o->memory_swappiness >= 0 || o->kernel_tcp > 0 || o->disable_oom_killer;
}

const struct cg_oci *cg_oci(void)
{
        return &oci_resources;
}

/* Makes each missing directory of path (the mount's own and the existing
 * ones give EEXIST), noting in cg->made those it made, as runc makes a
 * cgroupsPath. A directory removed meanwhile (another container's delete
 * taking the empty parent it made) is made again, a few times over. */
static int mkdir_path(char *path, struct cgroup *cg)
{
        for (int attempt = 0; attempt < 4; attempt++) {
                int e = 0;
                for (char *p = path + 1;; p++) {
                        if (*p != '/' && *p != '\0')
                                continue;
                        char c = *p;
                        *p = '\0';
                        e = mkdir(path, 0755) < 0 ? errno : 0;
                        if (!e && cg->n_made < MADE_MAX)
                                cg->made[cg->n_made++] = xstrdup(path);
                        else if (!e) {
                                (void)rmdir(path);
                                e = ENAMETOOLONG;
                        }
                        *p = c;
                        if ((e && e != EEXIST) || !c)
                                break;
                }
                if (e != ENOENT)
                        return e && e != EEXIST ? -e : 0;
        }
        return -ENOENT;
}

int cg_locate(const char *ctrl, struct cgroup *cg, char **ret_dir)
{
        if (!parent_override)
                return cg_locate_own(ctrl, ret_dir);
        _cleanup_free_ char *own = NULL;
        if (parent_override[0] != '/') {
                int r = own_group(ctrl, &own);
                if (r < 0)
                        return r;
                char *joined = xasprintf("%s/%s", streq(own, "/") ? "" : own, parent_override);
                free(own);
                own = joined;
        } else
                own = xstrdup(parent_override);
        int r = cg_find_mount(ctrl, own, ret_dir);
        if (r < 0 || !ret_dir || !*ret_dir || !cg)
                return r;
        r = mkdir_path(*ret_dir, cg);
        if (r < 0)
                free(TAKE_PTR(*ret_dir));
        return r;
}

int cg_grp_open(struct cgroup *cg, size_t i, const char *path, bool place, char **ret_error)
{
        int fd = cg_open_parent(path, ret_error);
        if (fd < 0)
                return fd;
        cg->grp[i].path = xstrdup(path);
        cg->grp[i].fd = fd;
        cg->place[i] = place;
        return 0;
}

/* dir's cpuset.<what>, empty ("") when unset */
static int cpuset_read(const char *dir, const char *what, char *buf, size_t size)
{
        _cleanup_free_ char *file = xasprintf("%s/cpuset.%s", dir, what);
        _cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        ssize_t n = read_full(fd, buf, size - 1);
        if (n < 0)
                return (int)n;
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return 0;
}

int cg_cpuset_fill(const char *dir, char **ret_error)
{
        static const char *const what[] = {"cpus", "mems"};
        for (size_t w = 0; w < ELEMENTSOF(what); w++) {
                char buf[4096];
                int r = cpuset_read(dir, what[w], buf, sizeof(buf));
                if (r < 0) {
                        cg_set_error(ret_error, "%s/cpuset.%s: cannot read: %s", dir, what[w], strerror(-r));
                        return r;
                }
                if (buf[0])
                        continue;
                /* the hierarchy's root is never empty: this ends there */
                _cleanup_free_ char *parent = xstrdup(dir);
                char *slash = strrchr(parent, '/');
                if (!slash || slash == parent)
                        return -EINVAL;
                *slash = '\0';
                if ((r = cg_cpuset_fill(parent, ret_error)) < 0 ||
                    (r = cpuset_read(parent, what[w], buf, sizeof(buf))) < 0)
                        return r;
                _cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
                char file[16];
                snprintf(file, sizeof(file), "cpuset.%s", what[w]);
                if (dfd < 0)
                        return negative_errno();
                if ((r = cg_ctl_write(dfd, dir, file, buf, NULL, ret_error)) < 0)
                        return r;
        }
        return 0;
}

/* The directory of the sentry's own group in a hierarchy (ctrl NULL: v2). */
int cg_locate_own(const char *ctrl, char **ret_dir)
{
        _cleanup_free_ char *own = NULL;
        int r = own_group(ctrl, &own);
        if (r < 0)
                return r;
        return cg_find_mount(ctrl, own, ret_dir);
}

bool cg_v1_mounted(const char *ctrl)
{
        return cg_find_mount(ctrl, NULL, NULL) == 0;
}

/* True if ctrl is bound to a cgroup v1 hierarchy, mounted here or not
 * (/proc/cgroups gives it a hierarchy id); v2 cannot have it then. */
bool cg_v1_bound(const char *ctrl)
{
        if (cg_v1_mounted(ctrl))
                return true;
        _cleanup_fclose_ FILE *f = fopen("/proc/cgroups", "re");
        char line[256];
        while (f && fgets(line, sizeof(line), f)) {
                char name[64];
                int hierarchy, groups, enabled;
                if (sscanf(line, "%63s %d %d %d", name, &hierarchy, &groups, &enabled) == 4 && streq(name, ctrl))
                        return hierarchy != 0;
        }
        return false;
}

/* ------------------------------------------------------------------------ */
/* limits */

/* CPU bandwidth as quota/period = millis/1000. The default period is 100 ms;
 * the kernel's smallest quota is 1 ms, so below 10 millis the period grows to
 * its largest (1 s) to keep the ratio exact rather than round the limit up. */
void cg_cpu_bandwidth(int64_t millis, int64_t *ret_quota, int64_t *ret_period)
{
        if (millis * (CPU_PERIOD_USEC / 1000) >= CPU_QUOTA_MIN) {
                *ret_period = CPU_PERIOD_USEC;
                *ret_quota = millis * (CPU_PERIOD_USEC / 1000);
        } else {
                *ret_period = CPU_PERIOD_MAX;
                *ret_quota = millis * (CPU_PERIOD_MAX / 1000);
        }
}
