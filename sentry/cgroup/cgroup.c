/* sentry/cgroup/: the interface cgroup.h promises, over the backend
 * cgroup_create() chooses once per group (v2.c: the unified hierarchy;
 * v1.c: one hierarchy per controller): a group's creation and removal, the
 * entry of processes into it, its kill, freeze and statistics through the
 * backend, the runs' own groups beneath its v2 group, and what `cordon gc`
 * uses to find and remove leftovers. The helpers both backends use are in
 * util.c.
 *
 * A limit that cannot be enforced is refused, never silently dropped: the
 * caller gets -EOPNOTSUPP (or the kernel's errno) and a message naming the
 * limit, the path and why, and nothing is left behind. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>

#include "common/trace.h"
#include "common/util.h"
#include "sentry/cgroup/cgroup-internal.h"

#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* ------------------------------------------------------------------------ */
/* small helpers */

/* Ids become path components: only [0-9a-f-], so never "/", "." or "..". */
static bool id_valid(const char *id)
{
        size_t n = id ? strlen(id) : 0;
        if (n == 0 || n > ID_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f') || id[i] == '-'))
                        return false;
        return true;
}

/* rmdir, retried while the group is still busy with exiting processes. */
static int rmdir_retry(int dfd, const char *name)
{
        int64_t deadline = monotonic_ms() + RMDIR_TIMEOUT_MS;
        for (;;) {
                if (unlinkat(dfd, name, AT_REMOVEDIR) == 0)
                        return 0;
                if (errno != EBUSY || monotonic_ms() >= deadline)
                        return errno == ENOENT ? 0 : negative_errno();
                sleep_ms(POLL_MS * 2);
        }
}

/* ------------------------------------------------------------------------ */
/* limits, checked before anything is created */

static int check_limits(const struct cg_limits *lim, char **ret_error)
{
        if (!lim)
                return 0;
        if (lim->memory_bytes != CG_UNSET && lim->memory_bytes <= 0) {
                cg_set_error(ret_error, "limits.memoryBytes: must be positive, got %" PRId64, lim->memory_bytes);
                return -EINVAL;
        }
        if (lim->max_processes != CG_UNSET && lim->max_processes <= 0) {
                cg_set_error(ret_error, "limits.maxProcesses: must be positive, got %" PRId64, lim->max_processes);
                return -EINVAL;
        }
        if (lim->cpu_millis != CG_UNSET && (lim->cpu_millis <= 0 || lim->cpu_millis > INT64_MAX / 1000)) {
                cg_set_error(ret_error, "limits.cpuMillis: out of range, got %" PRId64, lim->cpu_millis);
                return -EINVAL;
        }
        return 0;
}

/* ------------------------------------------------------------------------ */
/* the interface */

/* CG_AUTO: v2 on a pure v2 host (/sys/fs/cgroup is itself cgroup2, or no v1
 * hierarchy of ours is mounted at all but a cgroup2 one is); v1 otherwise,
 * which on a hybrid host is where the resource controllers are. */
static const struct cg_backend *choose_backend(enum cg_mode mode)
{
        switch (mode) {
        case CG_V1:
                return &cg_backend_v1;
        case CG_V2:
                return &cg_backend_v2;
        case CG_AUTO:
                break;
        }
        struct statfs s;
        if (statfs("/sys/fs/cgroup", &s) == 0 && s.f_type == CGROUP2_SUPER_MAGIC)
                return &cg_backend_v2;
        for (size_t c = 0; c < _V1_MAX; c++)
                if (cg_v1_mounted(cg_v1_names[c]))
                        return &cg_backend_v1;
        return cg_find_mount(NULL, NULL, NULL) == 0 ? &cg_backend_v2 : &cg_backend_v1;
}

static void cgroup_free(struct cgroup *cg)
{
        if (!cg)
                return;
        for (size_t i = 0; i < cg->n_dirs; i++) {
                free(cg->dirs[i].path);
                if (cg->dirs[i].fd >= 0)
                        close(cg->dirs[i].fd);
        }
        for (size_t i = 0; i <= _V1_MAX; i++) {
                free(cg->grp[i].path);
                if (cg->grp[i].fd >= 0)
                        close(cg->grp[i].fd);
                free(cg->home[i]);
        }
        for (size_t i = 0; i < cg->n_made; i++)
                free(cg->made[i]);
        free(cg->v2_why);
        free(cg);
}

static void leave_groups(struct cgroup *cg);

/* Removes the directories made on the way to a cgroupsPath, deepest
 * first; one that another container has meanwhile made a group in stays
 * (rmdir refuses a directory that is not empty). */
static void remove_made(struct cgroup *cg)
{
        for (size_t i = cg->n_made; i-- > 0;)
                (void)rmdir(cg->made[i]);
}

/* Removes the directories of a group that never held a process, and what
 * was made on the way to its cgroupsPath: a refused create leaves nothing. */
static void cgroup_unmake(struct cgroup *cg)
{
        for (size_t i = cg->n_dirs; i-- > 0;)
                (void)rmdir_retry(AT_FDCWD, cg->dirs[i].path);
        leave_groups(cg);
        remove_made(cg);
        cgroup_free(cg);
}

static int write_pid(const char *dir, pid_t pid)
{
        _cleanup_free_ char *procs = xasprintf("%s/cgroup.procs", dir);
        _cleanup_close_ int fd = open(procs, O_WRONLY | O_CLOEXEC);
        char val[32];
        int n = snprintf(val, sizeof(val), "%d", (int)pid);
        if (fd < 0 || write(fd, val, (size_t)n) != n)
                return negative_errno();
        return 0;
}

/* cgroupsPath: the sentry into G in each hierarchy, where the engine reads
 * the container's use (see cgroup_set_parent), but for pids and, with the
 * OOM killer disabled, memory. Not fatal where refused (a v2 G with
 * controllers enabled for its children may hold no process): the engine's
 * stats then miss the container, its limits bind all the same; but where
 * the container stays in G (a placement) it must be there. */
static int enter_groups(struct cgroup *cg, char **ret_error)
{
        for (size_t i = 0; i <= _V1_MAX; i++) {
                if (!cg->grp[i].path || i == V1_PIDS)
                        continue;
                /* at the limit with the OOM killer disabled every task of
                 * the group that charges memory waits for memory to be
                 * freed: the sentry, which must be able to end them, stays
                 * outside */
                if (i == V1_MEMORY && cg_oci()->disable_oom_killer)
                        continue;
                _cleanup_free_ char *home = NULL;
                const char *ctrl = i == GRP_V2 ? NULL : cg_v1_names[i];
                if (cg_locate_own(ctrl, &home) < 0 || streq(home, cg->grp[i].path))
                        continue;
                int r = write_pid(cg->grp[i].path, getpid());
                if (r == 0)
                        cg->home[i] = TAKE_PTR(home);
                else if (cg->place[i]) {
                        cg_set_error(ret_error,
                                     "linux.cgroupsPath: cannot move into %s, where the container's %s "
                                     "limits are: %s",
                                     cg->grp[i].path, ctrl ?: "cgroup v2", strerror(-r));
                        return r;
                }
        }
        size_t n = 0;
        for (size_t i = 0; i <= _V1_MAX; i++) {
                bool dup = !cg->grp[i].path;
                for (size_t k = 0; k < n && !dup; k++)
                        dup = streq(cg->parent_list[k], cg->grp[i].path);
                if (!dup)
                        cg->parent_list[n++] = cg->grp[i].path;
        }
        for (size_t i = cg->n_made; i-- > 0;) {
                bool dup = false;
                for (size_t k = 0; k < n && !dup; k++)
                        dup = streq(cg->parent_list[k], cg->made[i]);
                if (!dup)
                        cg->parent_list[n++] = cg->made[i];
        }
        cg->parent_list[n] = NULL;
        return 0;
}

const char *const *cgroup_parent_dirs(const struct cgroup *cg)
{
        return cg->parent_list;
}

/* cgroup_destroy's end: the sentry back where it came from, and the
 * engine's groups for the container removed (as runc's delete), with what
 * was made on the way to them. */
static void leave_groups(struct cgroup *cg)
{
        for (size_t i = 0; i <= _V1_MAX; i++)
                if (cg->home[i])
                        (void)write_pid(cg->home[i], getpid());
        for (size_t i = 0; i <= _V1_MAX; i++)
                if (cg->grp[i].path)
                        (void)rmdir(cg->grp[i].path);
}

bool cgroup_auto_is_v1(void)
{
        return choose_backend(CG_AUTO) == &cg_backend_v1;
}

int cgroup_create(enum cg_mode mode, const char *id, const struct cg_limits *lim, struct cgroup **ret, char **ret_error)
{
        if (!ret)
                return -EINVAL;
        if (!id_valid(id)) {
                cg_set_error(ret_error, "invalid sandbox id for a control group name (1 to %d of [0-9a-f-])", ID_MAX);
                return -EINVAL;
        }
        int r = check_limits(lim, ret_error);
        if (r < 0)
                return r;

        struct cgroup *cg = xcalloc(1, sizeof(*cg));
        cg->backend = choose_backend(mode);
        for (size_t c = 0; c < _V1_MAX; c++)
                cg->at[c] = -1;
        for (size_t i = 0; i <= _V1_MAX; i++)
                cg->grp[i].fd = -1;
        cg->v2_at = -1;
        _cleanup_free_ char *name = xasprintf(GROUP_PREFIX "%s", id);
        r = cg->backend->create(cg, name, lim, ret_error);
        if (r < 0) {
                /* nothing is attached yet: the new directories are empty */
                cgroup_unmake(cg);
                return r;
        }
        if (cg_parent_override() && (r = enter_groups(cg, ret_error)) < 0) {
                cgroup_unmake(cg);
                return r;
        }
        *ret = cg;
        return 0;
}

/* The hierarchy path lies in: the controller index (the first of a
 * co-mounted pair), GRP_V2 for the cgroup v2 one, or -1. */
static int hierarchy_of(const char *path)
{
        struct statfs sf;
        if (path[0] != '/' || statfs(path, &sf) < 0)
                return -1;
        for (int c = 0; c <= _V1_MAX; c++) {
                _cleanup_free_ char *mnt = NULL;
                if (c < _V1_MAX ? sf.f_type != CGROUP_SUPER_MAGIC : sf.f_type != CGROUP2_SUPER_MAGIC)
                        continue;
                if (cg_find_mount(c < _V1_MAX ? cg_v1_names[c] : NULL, NULL, &mnt) < 0 || !mnt)
                        continue;
                if (startswith(path, mnt) && path[strlen(mnt)] == '/')
                        return c;
        }
        return -1;
}

int cgroup_update(const char *backend, const char *const *dirs, const char *const *parents, const struct cg_limits *lim,
                  const struct cg_oci *o, char **ret_error)
{
        int r = check_limits(lim, ret_error);
        if (r < 0)
                return r;
        struct cgroup *cg = xcalloc(1, sizeof(*cg));
        cg->backend = streq(backend, "v2") ? &cg_backend_v2 : streq(backend, "v1") ? &cg_backend_v1 : NULL;
        for (size_t c = 0; c < _V1_MAX; c++)
                cg->at[c] = -1;
        for (size_t i = 0; i <= _V1_MAX; i++)
                cg->grp[i].fd = -1;
        cg->v2_at = -1;
        if (!cg->backend) {
                cg_set_error(ret_error, "the container has no control groups (backend %s)", backend);
                r = -EOPNOTSUPP;
                goto out;
        }
        /* The sandbox's own groups, by hierarchy: only the "cordon-" ones
         * create made (the state file lists nothing else; checked anyway,
         * as this writes limits). */
        for (size_t i = 0; dirs && dirs[i] && cg->n_dirs < MAX_DIRS; i++) {
                const char *base = strrchr(dirs[i], '/');
                int h = hierarchy_of(dirs[i]);
                if (h < 0 || !base || !startswith(base + 1, GROUP_PREFIX))
                        continue;
                int fd = open(dirs[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (fd < 0)
                        continue; /* gone with a controller's group: nothing to write there */
                cg->dirs[cg->n_dirs] = (struct cg_dir){.path = xstrdup(dirs[i]), .fd = fd};
                if (h == GRP_V2)
                        cg->v2_at = (int)cg->n_dirs;
                else
                        for (size_t c = 0; c < _V1_MAX; c++) {
                                _cleanup_free_ char *mnt = NULL, *own = NULL;
                                if (cg_find_mount(cg_v1_names[c], NULL, &mnt) == 0 && mnt && startswith(dirs[i], mnt) &&
                                    dirs[i][strlen(mnt)] == '/')
                                        cg->at[c] = (int)cg->n_dirs;
                        }
                cg->n_dirs++;
        }
        if (cg->backend == &cg_backend_v2) {
                if (cg->v2_at < 0) {
                        cg_set_error(ret_error, "the container's cgroup v2 group is gone");
                        r = -ESRCH;
                        goto out;
                }
                /* v2 keeps every controller in its one group (dirs[0]) */
                if (cg->v2_at != 0) {
                        struct cg_dir t = cg->dirs[0];
                        cg->dirs[0] = cg->dirs[cg->v2_at];
                        cg->dirs[cg->v2_at] = t;
                        cg->v2_at = 0;
                }
                for (size_t c = 0; c < _V1_MAX; c++)
                        cg->at[c] = 0;
        }
        /* The engine's group G in each hierarchy (cgroupsPath), where the
         * limits went: the deepest of the groups listed there, as the
         * others are the directories made on the way to it. */
        for (size_t i = 0; parents && parents[i]; i++) {
                int h = hierarchy_of(parents[i]);
                if (h < 0)
                        continue;
                for (size_t c = 0; c <= _V1_MAX; c++) {
                        _cleanup_free_ char *mnt = NULL;
                        bool in = c == (size_t)h;
                        if (!in && h != GRP_V2 && c < _V1_MAX)
                                in = cg_find_mount(cg_v1_names[c], NULL, &mnt) == 0 && mnt &&
                                     startswith(parents[i], mnt) && parents[i][strlen(mnt)] == '/';
                        if (!in || (cg->grp[c].path && strlen(cg->grp[c].path) >= strlen(parents[i])))
                                continue;
                        if (cg->grp[c].path) {
                                free(cg->grp[c].path);
                                close(cg->grp[c].fd);
                                cg->grp[c] = (struct cg_dir){.fd = -1};
                        }
                        if ((r = cg_grp_open(cg, c, parents[i], false, ret_error)) < 0)
                                goto out;
                }
        }
        r = cg->backend->apply(cg, lim, o, ret_error);
out:
        cgroup_free(cg);
        return r;
}

int cgroup_attach(struct cgroup *cg, pid_t pid)
{
        if (!cg || pid <= 0)
                return -EINVAL;
        char val[32];
        snprintf(val, sizeof(val), "%d", (int)pid);
        for (size_t i = 0; i < cg->n_dirs; i++) {
                int r = cg_ctl_write(cg->dirs[i].fd, cg->dirs[i].path, "cgroup.procs", val, NULL, NULL);
                if (r < 0)
                        return r;
                if (trace_on) {
                        char what[128];
                        snprintf(what, sizeof(what), "cgroup attach: %s", cg->dirs[i].path);
                        trace_mark(what);
                }
        }
        return 0;
}

int cgroup_entry_open(const struct cgroup *cg, struct cgroup_entry *ret, const char **ret_path)
{
        if (!cg || !ret)
                return -EINVAL;
        struct cgroup_entry e = CGROUP_ENTRY_NULL;
        int r = 0;
        for (size_t i = 0; i < cg->n_dirs && r >= 0; i++) {
                if ((int)i == cg->v2_at) {
                        /* CLONE_INTO_CGROUP takes an O_PATH fd as it is */
                        e.v2_fd = fcntl(cg->dirs[i].fd, F_DUPFD_CLOEXEC, 3);
                        if (e.v2_fd < 0) {
                                r = negative_errno();
                                if (ret_path)
                                        *ret_path = cg->dirs[i].path;
                        }
                        continue;
                }
                int fd = openat(cg->dirs[i].fd, "tasks", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0) {
                        r = negative_errno();
                        if (ret_path)
                                *ret_path = cg->dirs[i].path;
                        break;
                }
                e.tasks_fd[e.n_tasks] = fd;
                e.path[e.n_tasks] = cg->dirs[i].path;
                e.n_tasks++;
        }
        if (r < 0) {
                cgroup_entry_close(&e);
                return r;
        }
        *ret = e;
        return 0;
}

void cgroup_entry_close(struct cgroup_entry *e)
{
        if (!e)
                return;
        if (e->v2_fd >= 0)
                close(TAKE_FD(e->v2_fd));
        for (size_t i = 0; i < e->n_tasks; i++)
                if (e->tasks_fd[i] >= 0)
                        close(TAKE_FD(e->tasks_fd[i]));
        e->n_tasks = 0;
}

int cgroup_entry_join(const struct cgroup_entry *e, const char **ret_path)
{
        for (size_t i = 0; i < e->n_tasks; i++) {
                ssize_t n;
                do
                        n = write(e->tasks_fd[i], "0", 1);
                while (n < 0 && errno == EINTR);
                if (n != 1) {
                        if (ret_path)
                                *ret_path = e->path[i];
                        return n < 0 ? negative_errno() : -EIO;
                }
        }
        return 0;
}

int cgroup_kill_all(struct cgroup *cg)
{
        if (!cg)
                return -EINVAL;
        return cg->backend->kill_all(cg);
}

int cgroup_freeze(struct cgroup *cg, bool frozen)
{
        if (!cg)
                return -EINVAL;
        return cg->backend->freeze(cg, frozen);
}

int cgroup_stats(struct cgroup *cg, struct cg_stats *ret)
{
        if (!cg || !ret)
                return -EINVAL;
        return cg->backend->stats(cg, ret);
}

int cgroup_limit_events(struct cgroup *cg, struct cg_stats *ret)
{
        if (!cg || !ret)
                return -EINVAL;
        return cg->backend->limit_events(cg, ret);
}

const char *cgroup_backend(const struct cgroup *cg)
{
        return cg ? cg->backend->name : NULL;
}

const char *const *cgroup_dirs(const struct cgroup *cg)
{
        return cg ? cg->paths : NULL;
}

int cgroup_open_v2(const struct cgroup *cg, const char **ret_why)
{
        if (!cg)
                return -EINVAL;
        if (cg->v2_at < 0) {
                if (ret_why)
                        *ret_why = cg->v2_why ?: "the sandbox has no cgroup v2 group";
                return -EOPNOTSUPP;
        }
        /* the kept fd is O_PATH, which bpf(BPF_PROG_ATTACH) does not take */
        int fd = openat(cg->dirs[cg->v2_at].fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
                if (ret_why)
                        *ret_why = "cannot open the sandbox's cgroup v2 group";
                return negative_errno();
        }
        return fd;
}

int cgroup_v2_probe(const char **ret_why)
{
        _cleanup_free_ char *dir = NULL;
        if (cg_locate(NULL, NULL, &dir) < 0) {
                *ret_why = "no cgroup2 hierarchy is mounted that shows this process's group";
                return -ENOENT;
        }
        if (access(dir, W_OK) < 0) {
                int r = negative_errno();
                *ret_why = "this user cannot create groups in its cgroup v2 group";
                return r;
        }
        return 0;
}

const char *cgroup_v2_path(const struct cgroup *cg)
{
        return cg && cg->v2_at >= 0 ? cg->dirs[cg->v2_at].path : NULL;
}

static void remove_run_groups(int dfd);

int cgroup_destroy(struct cgroup *cg)
{
        if (!cg)
                return 0;
        /* The usual end: init reaped, and with it its pid namespace, so the
         * groups are empty and an rmdir of each is all there is to do. The
         * kernel refuses to remove a group that holds a process (EBUSY, in
         * either version), so a successful rmdir is the proof that nothing
         * was left; only a refusal needs the kill (freeze, kill, thaw, and
         * wait, about half a millisecond even on empty v1 groups). */
        bool busy = false;
        for (size_t i = cg->n_dirs; i-- > 0 && !busy;) {
                /* a run's own group, under the sandbox's v2 one (listed only
                 * where runs had groups: `cordon run` makes none) */
                if (cg->has_runs && (int)i == cg->v2_at)
                        remove_run_groups(cg->dirs[i].fd);
                if (unlinkat(AT_FDCWD, cg->dirs[i].path, AT_REMOVEDIR) == 0 || errno == ENOENT) {
                        free(cg->dirs[i].path);
                        close(cg->dirs[i].fd);
                        cg->n_dirs--;
                } else
                        busy = true;
        }
        int r = 0;
        if (busy) {
                /* what was removed is no longer any controller's */
                for (size_t c = 0; c < _V1_MAX; c++)
                        if (cg->at[c] >= (int)cg->n_dirs)
                                cg->at[c] = -1;
                if (cg->v2_at >= (int)cg->n_dirs)
                        cg->v2_at = -1;
                r = cg->backend->kill_all(cg);
                for (size_t i = cg->n_dirs; i-- > 0;) {
                        remove_run_groups(cg->dirs[i].fd);
                        int q = rmdir_retry(AT_FDCWD, cg->dirs[i].path);
                        if (q < 0 && r >= 0)
                                r = q;
                }
        }
        leave_groups(cg);
        remove_made(cg);
        cgroup_free(cg);
        return r < 0 ? r : 0;
}

/* ------------------------------------------------------------------------ */
/* a run's own group */

/* Each run of a long-lived sandbox gets a group "run-<n>" beneath the
 * sandbox's group in the cgroup v2 hierarchy. A process cannot leave its
 * group from inside the sandbox (no cgroupfs in the view; writing
 * cgroup.procs needs the sentry's fd), so every process the run ever forks,
 * whatever session or process group it makes for itself (setsid, a double
 * fork, nohup), is found there, and cgroup.kill ends exactly the run's
 * processes and nothing of another run. Only v2: it carries no limits (they
 * stay on the sandbox's group, which counts its subgroups), and a v1
 * hierarchy would list the run's processes apart from its parent's, where
 * cgroup_kill_all must still find them. Without a v2 group the caller falls
 * back to the run's process group (see sentry/sandbox/runs.c). */

static int run_name(int num, char buf[32])
{
        if (num <= 0)
                return -EINVAL;
        snprintf(buf, 32, "run-%d", num);
        return 0;
}

int cgroup_run_create(struct cgroup *cg, int num, int *ret_procs_fd)
{
        char name[32];
        if (!cg || !ret_procs_fd || run_name(num, name) < 0)
                return -EINVAL;
        if (cg->v2_at < 0)
                return -EOPNOTSUPP;
        int dfd = cg->dirs[cg->v2_at].fd;
        cg->has_runs = true;
        if (mkdirat(dfd, name, 0755) < 0 && errno != EEXIST)
                return negative_errno();
        _cleanup_close_ int gfd = openat(dfd, name, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (gfd < 0)
                return negative_errno();
        /* opened here, by the sentry: the kernel checks a migration against
         * the credentials and cgroup namespace the file was opened with, so
         * the run's first process (which holds no right to the cgroupfs) can
         * move itself in with it, before it runs anything of its own */
        int fd = openat(gfd, "cgroup.procs", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0) {
                int r = negative_errno();
                (void)unlinkat(dfd, name, AT_REMOVEDIR);
                return r;
        }
        *ret_procs_fd = fd;
        return 0;
}

int cgroup_run_kill(struct cgroup *cg, int num, bool wait)
{
        char name[32];
        if (!cg || run_name(num, name) < 0)
                return -EINVAL;
        if (cg->v2_at < 0)
                return -EOPNOTSUPP;
        _cleanup_close_ int gfd = openat(cg->dirs[cg->v2_at].fd, name, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (gfd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        /* without wait, cgroup.kill alone: the run's exit comes back from
         * init as usual, and a wait here would hold the serve loop (for
         * seconds where a v1 freezer keeps the killed tasks frozen) */
        _cleanup_free_ char *path = xasprintf("%s/%s", cg->dirs[cg->v2_at].path, name);
        if (wait)
                return cg_v2_kill_dir(gfd, path);
        int r = cg_ctl_write(gfd, path, "cgroup.kill", "1", NULL, NULL);
        if (r == -ENOENT)
                r = cg_v2_kill_dir(gfd, path); /* Linux < 5.14: freeze, kill pid by pid */
        return r;
}

int cgroup_run_remove(struct cgroup *cg, int num)
{
        char name[32];
        if (!cg || run_name(num, name) < 0)
                return -EINVAL;
        if (cg->v2_at < 0)
                return 0;
        /* not retried: a run may leave processes behind it (a detached
         * server), and its group stays until they end or the sandbox does */
        if (unlinkat(cg->dirs[cg->v2_at].fd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
                return negative_errno();
        return 0;
}

/* Removes the (killed, so emptying) run groups beneath a sandbox's group
 * dfd, so that the group itself can be removed. */
static void remove_run_groups(int dfd)
{
        int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
        if (!d) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        struct dirent *de;
        while ((de = readdir(d)))
                if (de->d_type == DT_DIR && startswith(de->d_name, "run-"))
                        (void)rmdir_retry(dirfd(d), de->d_name);
        closedir(d);
}

int cgroup_remove_dir(const char *dir)
{
        /* gc acts on paths read from state files: only an absolute path to a
         * cgroup directory named like ours, nothing else, is ever removed */
        if (!dir || dir[0] != '/' || strlen(dir) >= PATH_MAX)
                return -EINVAL;
        const char *base = strrchr(dir, '/') + 1;
        if (!startswith(base, GROUP_PREFIX) || !id_valid(base + strlen(GROUP_PREFIX)))
                return -EINVAL;
        _cleanup_free_ char *parent = base - dir > 1 ? strndup(dir, (size_t)(base - dir - 1)) : xstrdup("/");
        if (!parent)
                oom();

        _cleanup_close_ int pfd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (pfd < 0)
                return errno == ENOTDIR ? -EINVAL : negative_errno();
        _cleanup_close_ int fd = openat(pfd, base, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return errno == ENOTDIR || errno == ELOOP ? -EINVAL : negative_errno();
        struct statfs s;
        if (fstatfs(fd, &s) < 0)
                return negative_errno();

        int r;
        if (s.f_type == CGROUP2_SUPER_MAGIC)
                r = cg_v2_kill_dir(fd, dir);
        else if (s.f_type == CGROUP_SUPER_MAGIC) {
                /* freeze through this directory only if it is a freezer group */
                bool freezer = faccessat(fd, "freezer.state", F_OK, 0) == 0;
                r = cg_v1_kill_dirs(&fd, 1, freezer ? fd : -1, dir);
        } else
                return -EINVAL;
        if (r < 0)
                return r;
        remove_run_groups(fd);
        return rmdir_retry(pfd, base);
}

/* Calls fn for each "cordon-<id>" directory in one hierarchy's group. */
static int foreach_in(const char *dir, int (*fn)(const char *dir, const char *id, void *userdata), void *userdata)
{
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : negative_errno();
        DIR *d = fdopendir(fd);
        if (!d)
                return negative_errno();
        fd = -1; /* owned by d */
        /* names first, then the callbacks, which may remove what is listed */
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if ((de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) || !startswith(de->d_name, GROUP_PREFIX) ||
                    !id_valid(de->d_name + strlen(GROUP_PREFIX)))
                        continue;
                names = xrealloc(names, (n + 1) * sizeof(*names));
                names[n++] = xstrdup(de->d_name);
        }
        closedir(d);
        int r = 0, count = 0;
        for (size_t i = 0; i < n; i++) {
                if (r >= 0) {
                        _cleanup_free_ char *path = xasprintf("%s/%s", dir, names[i]);
                        r = fn(path, names[i] + strlen(GROUP_PREFIX), userdata);
                        count++;
                }
                free(names[i]);
        }
        free(names);
        return r < 0 ? r : count;
}

int cgroup_foreach_leftover(int (*fn)(const char *dir, const char *id, void *userdata), void *userdata)
{
        if (!fn)
                return -EINVAL;
        char *seen[_V1_MAX + 1] = {NULL};
        size_t n = 0;
        for (size_t c = 0; c <= _V1_MAX; c++) {
                char *dir = NULL;
                if (cg_locate(c < _V1_MAX ? cg_v1_names[c] : NULL, NULL, &dir) < 0)
                        continue;
                bool dup = false;
                for (size_t i = 0; i < n; i++)
                        dup |= streq(seen[i], dir);
                if (dup)
                        free(dir);
                else
                        seen[n++] = dir;
        }
        int r = 0, count = 0;
        for (size_t i = 0; i < n; i++) {
                if (r >= 0) {
                        r = foreach_in(seen[i], fn, userdata);
                        if (r > 0)
                                count += r;
                }
                free(seen[i]);
        }
        return r < 0 ? r : count;
}
