/* The sandbox's control groups: one group "cordon-<id>" beneath the
 * sentry's own group in each hierarchy the backend uses, with the limits the
 * policy asks for, and the means to count, freeze and kill what runs in it.
 *
 * Two backends sit behind struct cg_backend, chosen once per group in
 * cgroup_create(): cgroup v2 (one unified hierarchy: /sys/fs/cgroup on a
 * pure v2 host, /sys/fs/cgroup/unified on a hybrid one) and cgroup v1 (one
 * hierarchy per controller: memory, pids, cpu, cpuacct, freezer). Where the
 * hierarchies are mounted and which group the sentry is in are read from
 * /proc/self/mountinfo and /proc/self/cgroup, never assumed.
 *
 * A limit that cannot be enforced is refused, never silently dropped: the
 * caller gets -EOPNOTSUPP (or the kernel's errno) and a message naming the
 * limit, the path and why, and nothing is left behind.
 *
 * The helpers the backends and the interface share are in util.c. */
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
        int64_t deadline = now_ms() + RMDIR_TIMEOUT_MS;
        for (;;) {
                if (unlinkat(dfd, name, AT_REMOVEDIR) == 0)
                        return 0;
                if (errno != EBUSY || now_ms() >= deadline)
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
/* killing and freezing one v2 directory: the backends, a run's group and gc */

/* v2: freezes or thaws, and waits (bounded) until cgroup.events agrees. */
int cg_v2_freeze_dir(int dfd, const char *dir, bool frozen, int timeout_ms)
{
        int r = cg_ctl_write(dfd, dir, "cgroup.freeze", frozen ? "1" : "0", NULL, NULL);
        if (r == -ENOENT)
                return -EOPNOTSUPP; /* Linux < 5.2: no v2 freezer */
        if (r < 0)
                return r;
        int64_t deadline = now_ms() + timeout_ms;
        for (;;) {
                int64_t v;
                r = cg_ctl_read_i64(dfd, "cgroup.events", "frozen", &v);
                if (r < 0)
                        return r;
                if (v == (frozen ? 1 : 0))
                        return 0;
                if (now_ms() >= deadline)
                        return -ETIMEDOUT;
                sleep_ms(POLL_MS);
        }
}

/* v2: kills everything in the group (and beneath it) and waits until
 * cgroup.events says it is no longer populated. */
int cg_v2_kill_dir(int dfd, const char *dir)
{
        int r = cg_ctl_write(dfd, dir, "cgroup.kill", "1", NULL, NULL);
        bool by_pid = r == -ENOENT;
        if (r < 0 && !by_pid)
                return r;
        bool frozen = false;
        if (by_pid) {
                /* Linux < 5.14: no cgroup.kill. Freeze first so nothing in
                 * the group forks or exits while it is killed pid by pid;
                 * SIGKILL still reaches frozen v2 tasks. */
                frozen = cg_v2_freeze_dir(dfd, dir, true, KILL_FREEZE_MS) >= 0;
        }
        int64_t deadline = now_ms() + KILL_TIMEOUT_MS;
        for (;;) {
                int64_t populated;
                r = cg_ctl_read_i64(dfd, "cgroup.events", "populated", &populated);
                if (r == -ENOENT || r == -ENODEV) {
                        r = 0; /* the group is gone */
                        break;
                }
                if (r < 0 || populated == 0)
                        break;
                if (by_pid) {
                        r = cg_kill_listed(dfd);
                        if (r < 0)
                                break;
                }
                if (now_ms() >= deadline) {
                        r = -ETIMEDOUT;
                        break;
                }
                sleep_ms(POLL_MS);
        }
        if (frozen)
                (void)cg_ctl_write(dfd, dir, "cgroup.freeze", "0", NULL, NULL);
        return r < 0 ? r : 0;
}

/* ------------------------------------------------------------------------ */
/* limits: what each one is called in the policy, so messages can name it */

struct limit_req {
        const char *name; /* as in the policy */
        const char *ctrl;
        bool wanted;
};

/* ------------------------------------------------------------------------ */
/* cgroup v2 */

static int v2_create(struct cgroup *cg, const char *name, const struct cg_limits *lim, char **ret_error)
{
        _cleanup_free_ char *parent = NULL;
        int r = cg_locate(NULL, &parent);
        if (r < 0) {
                cg_set_error(ret_error,
                             "cgroup v2 cannot be used: no cgroup2 hierarchy is mounted that shows this process's "
                             "group (see /proc/self/cgroup and /proc/self/mountinfo)");
                return -EOPNOTSUPP;
        }
        _cleanup_close_ int pfd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (pfd < 0) {
                r = negative_errno();
                cg_set_error(ret_error, "%s: cannot open the sentry's control group: %s", parent, strerror(-r));
                return r;
        }

        struct limit_req req[] = {
                {"limits.memoryBytes", "memory", lim && lim->memory_bytes != CG_UNSET},
                {"limits.maxProcesses", "pids", lim && lim->max_processes != CG_UNSET},
                {"limits.cpuMillis", "cpu", lim && lim->cpu_millis != CG_UNSET},
        };

        /* Every requested controller is checked, and enabled for the
         * children of the sentry's group, before anything is created, so a
         * refusal leaves nothing behind. */
        char controllers[1024] = "", subtree[1024] = "";
        bool any = false;
        for (size_t i = 0; i < ELEMENTSOF(req); i++)
                any |= req[i].wanted;
        if (any) {
                r = cg_ctl_read(pfd, "cgroup.controllers", controllers, sizeof(controllers));
                if (r >= 0)
                        r = cg_ctl_read(pfd, "cgroup.subtree_control", subtree, sizeof(subtree));
                if (r < 0) {
                        cg_set_error(ret_error, "%s: cannot read cgroup.controllers or cgroup.subtree_control: %s",
                                     parent, strerror(-r));
                        return r;
                }
                controllers[strcspn(controllers, "\n")] = '\0';
                subtree[strcspn(subtree, "\n")] = '\0';
        }
        for (size_t i = 0; i < ELEMENTSOF(req); i++) {
                if (!req[i].wanted || cg_list_has(controllers, ' ', req[i].ctrl))
                        continue;
                cg_set_error(ret_error,
                             "%s cannot be enforced: the %s controller is not available in the cgroup v2 hierarchy at "
                             "%s (%s)",
                             req[i].name, req[i].ctrl, parent,
                             cg_v1_bound(req[i].ctrl) ? "it is bound to a cgroup v1 hierarchy on this host"
                                                      : "it is not delegated to this group");
                return -EOPNOTSUPP;
        }
        for (size_t i = 0; i < ELEMENTSOF(req); i++) {
                if (!req[i].wanted || cg_list_has(subtree, ' ', req[i].ctrl))
                        continue;
                /* Enabling a controller for the children of the sentry's own
                 * group is what delegation means in v2; it is left enabled,
                 * as other sandboxes beneath the same group may rely on it. */
                char cmd[32];
                snprintf(cmd, sizeof(cmd), "+%s", req[i].ctrl);
                r = cg_ctl_write(pfd, parent, "cgroup.subtree_control", cmd, NULL, NULL);
                if (r < 0) {
                        cg_set_error(ret_error,
                                     "%s cannot be enforced: enabling the %s controller in %s/cgroup.subtree_control "
                                     "failed: %s%s",
                                     req[i].name, req[i].ctrl, parent, strerror(-r),
                                     r == -EBUSY
                                             ? " (that group holds processes itself, and cgroup v2 gives controllers "
                                               "only to the children of groups without processes: the \"no "
                                               "internal processes\" rule; run cordon in a group of its own)"
                                             : "");
                        return r;
                }
        }

        r = cg_make_group(cg, parent, name, ret_error);
        if (r < 0)
                return r;
        for (size_t c = 0; c < _V1_MAX; c++)
                cg->at[c] = 0;
        cg->v2_at = 0;

        const struct cg_dir *d = &cg->dirs[0];
        char val[64];
        if (req[0].wanted) {
                snprintf(val, sizeof(val), "%" PRId64, lim->memory_bytes);
                r = cg_ctl_write(d->fd, d->path, "memory.max", val, req[0].name, ret_error);
                if (r < 0)
                        return r;
                /* without this, swap would let the sandbox use more than the
                 * limit; absent without swap accounting, with nothing to close */
                r = cg_ctl_write_if_present(d->fd, d->path, "memory.swap.max", "0", req[0].name, ret_error);
                if (r < 0)
                        return r;
        }
        if (req[1].wanted) {
                snprintf(val, sizeof(val), "%" PRId64, lim->max_processes);
                r = cg_ctl_write(d->fd, d->path, "pids.max", val, req[1].name, ret_error);
                if (r < 0)
                        return r;
        }
        if (req[2].wanted) {
                int64_t quota, period;
                cg_cpu_bandwidth(lim->cpu_millis, &quota, &period);
                snprintf(val, sizeof(val), "%" PRId64 " %" PRId64, quota, period);
                r = cg_ctl_write(d->fd, d->path, "cpu.max", val, req[2].name, ret_error);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int v2_kill_all(struct cgroup *cg)
{
        return cg_v2_kill_dir(cg->dirs[0].fd, cg->dirs[0].path);
}

static int v2_freeze(struct cgroup *cg, bool frozen)
{
        return cg_v2_freeze_dir(cg->dirs[0].fd, cg->dirs[0].path, frozen, FREEZE_TIMEOUT_MS);
}

static int v2_stats(struct cgroup *cg, struct cg_stats *ret)
{
        int fd = cg->dirs[0].fd, r;
        struct cg_stats s;
        if ((r = cg_stat_value(fd, "memory.peak", NULL, 1, &s.memory_peak_bytes)) < 0 ||
            (r = cg_stat_value(fd, "memory.events", "oom_kill", 1, &s.oom_kills)) < 0 ||
            (r = cg_stat_value(fd, "cpu.stat", "usage_usec", 1, &s.cpu_usage_usec)) < 0 ||
            (r = cg_stat_value(fd, "cpu.stat", "nr_periods", 1, &s.nr_periods)) < 0 ||
            (r = cg_stat_value(fd, "cpu.stat", "nr_throttled", 1, &s.nr_throttled)) < 0 ||
            (r = cg_stat_value(fd, "cpu.stat", "throttled_usec", 1, &s.throttled_usec)) < 0 ||
            (r = cg_stat_value(fd, "pids.current", NULL, 1, &s.pids_current)) < 0)
                return r;
        *ret = s;
        return 0;
}

const struct cg_backend cg_backend_v2 = {
        .name = "v2",
        .create = v2_create,
        .kill_all = v2_kill_all,
        .freeze = v2_freeze,
        .stats = v2_stats,
};

const char *const cg_v1_names[_V1_MAX] = {
        [V1_MEMORY] = "memory",   [V1_PIDS] = "pids",       [V1_CPU] = "cpu",
        [V1_CPUACCT] = "cpuacct", [V1_FREEZER] = "freezer",
};

/* ------------------------------------------------------------------------ */
/* killing and freezing v1 directories: the backend and gc */

/* v1: writes freezer.state and, for FROZEN, waits (bounded) until the
 * kernel reports it (it passes through FREEZING). */
static int v1_freezer_set(int dfd, const char *dir, bool frozen, int timeout_ms)
{
        int r = cg_ctl_write(dfd, dir, "freezer.state", frozen ? "FROZEN" : "THAWED", NULL, NULL);
        if (r < 0 || !frozen)
                return r;
        int64_t deadline = now_ms() + timeout_ms;
        for (;;) {
                char buf[64];
                r = cg_ctl_read(dfd, "freezer.state", buf, sizeof(buf));
                if (r < 0)
                        return r;
                if (startswith(buf, "FROZEN"))
                        return 0;
                if (now_ms() >= deadline)
                        return -ETIMEDOUT;
                sleep_ms(POLL_MS);
        }
}

/* v1: kills every process listed in any of the groups, freezing first
 * through the freezer group (freezer_fd, -1 if none) so nothing forks or
 * exits in between, then thawing, since a frozen v1 task does not die until
 * thawed. Waits (bounded) until every group is empty. */
int cg_v1_kill_dirs(const int *fds, size_t n, int freezer_fd, const char *freezer_dir)
{
        int r = 0;
        if (freezer_fd >= 0) {
                /* best effort: a task stuck in uninterruptible sleep can keep
                 * the group FREEZING; the kill goes ahead regardless */
                (void)v1_freezer_set(freezer_fd, freezer_dir, true, KILL_FREEZE_MS);
                for (size_t i = 0; i < n && r >= 0; i++)
                        r = cg_kill_listed(fds[i]);
                int t = v1_freezer_set(freezer_fd, freezer_dir, false, 0);
                if (r >= 0 && t < 0 && t != -ENOENT && t != -ENODEV)
                        r = t;
                if (r < 0)
                        return r;
        }
        int64_t deadline = now_ms() + KILL_TIMEOUT_MS;
        for (;;) {
                int listed = 0;
                for (size_t i = 0; i < n; i++) {
                        r = cg_kill_listed(fds[i]);
                        if (r < 0)
                                return r;
                        listed += r;
                }
                if (listed == 0)
                        return 0;
                if (now_ms() >= deadline)
                        return -ETIMEDOUT;
                sleep_ms(POLL_MS);
        }
}

/* ------------------------------------------------------------------------ */
/* cgroup v1 */

/* On a hybrid host the limits live in the v1 hierarchies, but BPF cgroup
 * programs (the kernel egress floor, net/floor.c) attach only to cgroup v2
 * groups. A process is in exactly one group per hierarchy, so the sandbox
 * also gets a group of its own in the v2 hierarchy (where one is mounted and
 * writable): it carries no limits, is attached, killed and removed with the
 * others. Where there is none, the floor is reported absent, not fatal: no
 * limit depends on it. */
static void v1_add_v2_group(struct cgroup *cg, const char *name)
{
        _cleanup_free_ char *parent = NULL;
        if (cg_locate(NULL, &parent) < 0) {
                cg->v2_why = xstrdup("no cgroup2 hierarchy is mounted that shows this process's group");
                return;
        }
        _cleanup_free_ char *err = NULL;
        if (cg_make_group(cg, parent, name, &err) < 0) {
                cg->v2_why = TAKE_PTR(err);
                return;
        }
        cg->v2_at = (int)cg->n_dirs - 1;
}

static int v1_create(struct cgroup *cg, const char *name, const struct cg_limits *lim, char **ret_error)
{
        char *where[_V1_MAX] = {NULL};
        bool need[_V1_MAX] = {
                [V1_MEMORY] = lim && lim->memory_bytes != CG_UNSET,
                [V1_PIDS] = lim && lim->max_processes != CG_UNSET,
                [V1_CPU] = lim && lim->cpu_millis != CG_UNSET,
        };
        static const char *const limit_name[_V1_MAX] = {
                [V1_MEMORY] = "limits.memoryBytes",
                [V1_PIDS] = "limits.maxProcesses",
                [V1_CPU] = "limits.cpuMillis",
        };
        int r = 0;
        size_t found = 0;

        for (size_t c = 0; c < _V1_MAX; c++)
                if (cg_locate(cg_v1_names[c], &where[c]) >= 0)
                        found++;
        if (found == 0) {
                cg_set_error(ret_error, "cgroup v1 cannot be used: none of the memory, pids, cpu, cpuacct and freezer "
                                        "controllers is mounted as a cgroup v1 hierarchy on this host (a cgroup v2 "
                                        "only host? use the v2 backend)");
                r = -EOPNOTSUPP;
                goto out;
        }
        /* every hierarchy a requested limit needs must be there, checked
         * before anything is created */
        for (size_t c = 0; c < _V1_MAX; c++) {
                if (!need[c] || where[c])
                        continue;
                cg_set_error(ret_error,
                             "%s cannot be enforced: the %s controller is not available as a cgroup v1 hierarchy on "
                             "this host%s",
                             limit_name[c], cg_v1_names[c],
                             cg_v1_mounted(cg_v1_names[c])
                                     ? " that shows this process's group"
                                     : " (it is not mounted; on a cgroup v2 host use the v2 backend)");
                r = -EOPNOTSUPP;
                goto out;
        }
        /* A group in every available hierarchy (memory and cpuacct give
         * the statistics, freezer a race-free kill, and every one is a place
         * processes are tracked), but the cpu controller's only where a CPU
         * limit needs it. A cpu group is a scheduler group of its own, and
         * with the sandbox in one and the sentry's receiving worker outside
         * it the scheduler places the two apart more often: floor.c's
         * supervisor, answering an emulated open with ADDFD then SEND, took
         * 10.5 us per call, and 24 with its child alone in a cpu group (a
         * migration to the other CPU and back per call). cpu and cpuacct are
         * often co-mounted ("cpu,cpuacct"): one directory, which then holds
         * the usage only where no v2 group can (below). */
        bool cpu_tied = where[V1_CPU] && where[V1_CPUACCT] && streq(where[V1_CPU], where[V1_CPUACCT]);
        for (size_t c = 0; c < _V1_MAX; c++) {
                cg->at[c] = -1;
                if (!where[c] || (!need[V1_CPU] && (c == V1_CPU || (c == V1_CPUACCT && cpu_tied))))
                        continue;
                for (size_t e = 0; e < c; e++)
                        if (where[e] && streq(where[e], where[c]))
                                cg->at[c] = cg->at[e];
                if (cg->at[c] >= 0)
                        continue;
                r = cg_make_group(cg, where[c], name, ret_error);
                if (r < 0)
                        goto out;
                cg->at[c] = (int)cg->n_dirs - 1;
        }
        v1_add_v2_group(cg, name);
        if (!need[V1_CPU] && cpu_tied && cg->v2_at < 0) {
                /* no v2 group to count the CPU time: the co-mounted group
                 * it is, scheduler group and all */
                r = cg_make_group(cg, where[V1_CPUACCT], name, ret_error);
                if (r < 0)
                        goto out;
                cg->at[V1_CPUACCT] = cg->at[V1_CPU] = (int)cg->n_dirs - 1;
        }

        char val[64];
        if (cg->at[V1_MEMORY] >= 0) {
                const struct cg_dir *d = &cg->dirs[cg->at[V1_MEMORY]];
                /* A new v1 memory group inherits oom_kill_disable from its
                 * parent; with it set, a sandbox at its limit would hang
                 * instead of having a process killed. */
                r = cg_ctl_write(d->fd, d->path, "memory.oom_control", "0", limit_name[V1_MEMORY],
                                 need[V1_MEMORY] ? ret_error : NULL);
                if (r < 0 && need[V1_MEMORY])
                        goto out;
                r = 0;
        }
        if (need[V1_MEMORY]) {
                const struct cg_dir *d = &cg->dirs[cg->at[V1_MEMORY]];
                snprintf(val, sizeof(val), "%" PRId64, lim->memory_bytes);
                r = cg_ctl_write(d->fd, d->path, "memory.limit_in_bytes", val, limit_name[V1_MEMORY], ret_error);
                if (r < 0)
                        goto out;
                /* memory+swap to the same value: swap cannot stretch the
                 * limit. Absent without swap accounting, where there is
                 * nothing to close. */
                r = cg_ctl_write_if_present(d->fd, d->path, "memory.memsw.limit_in_bytes", val, limit_name[V1_MEMORY],
                                            ret_error);
                if (r < 0)
                        goto out;
        }
        if (need[V1_PIDS]) {
                const struct cg_dir *d = &cg->dirs[cg->at[V1_PIDS]];
                snprintf(val, sizeof(val), "%" PRId64, lim->max_processes);
                r = cg_ctl_write(d->fd, d->path, "pids.max", val, limit_name[V1_PIDS], ret_error);
                if (r < 0)
                        goto out;
        }
        if (need[V1_CPU]) {
                const struct cg_dir *d = &cg->dirs[cg->at[V1_CPU]];
                int64_t quota, period;
                cg_cpu_bandwidth(lim->cpu_millis, &quota, &period);
                snprintf(val, sizeof(val), "%" PRId64, period);
                r = cg_ctl_write(d->fd, d->path, "cpu.cfs_period_us", val, limit_name[V1_CPU], ret_error);
                if (r < 0)
                        goto out;
                snprintf(val, sizeof(val), "%" PRId64, quota);
                r = cg_ctl_write(d->fd, d->path, "cpu.cfs_quota_us", val, limit_name[V1_CPU], ret_error);
                if (r < 0)
                        goto out;
        }
out:
        for (size_t c = 0; c < _V1_MAX; c++)
                free(where[c]);
        return r;
}

static int v1_kill_all(struct cgroup *cg)
{
        int fds[MAX_DIRS];
        for (size_t i = 0; i < cg->n_dirs; i++)
                fds[i] = cg->dirs[i].fd;
        int f = cg->at[V1_FREEZER];
        return cg_v1_kill_dirs(fds, cg->n_dirs, f >= 0 ? cg->dirs[f].fd : -1, f >= 0 ? cg->dirs[f].path : NULL);
}

static int v1_freeze(struct cgroup *cg, bool frozen)
{
        int f = cg->at[V1_FREEZER];
        /* no v1 freezer: a hybrid host's v2 group (v1_add_v2_group) holds
         * the same processes and has a freezer of its own */
        if (f < 0 && cg->v2_at >= 0)
                return cg_v2_freeze_dir(cg->dirs[cg->v2_at].fd, cg->dirs[cg->v2_at].path, frozen, FREEZE_TIMEOUT_MS);
        if (f < 0)
                return -EOPNOTSUPP;
        return v1_freezer_set(cg->dirs[f].fd, cg->dirs[f].path, frozen, FREEZE_TIMEOUT_MS);
}

static int v1_stats(struct cgroup *cg, struct cg_stats *ret)
{
        struct cg_stats s = {-1, -1, -1, -1, -1, -1, -1};
        int r, m = cg->at[V1_MEMORY], a = cg->at[V1_CPUACCT], c = cg->at[V1_CPU], p = cg->at[V1_PIDS];
        if (m >= 0 &&
            ((r = cg_stat_value(cg->dirs[m].fd, "memory.max_usage_in_bytes", NULL, 1, &s.memory_peak_bytes)) < 0 ||
             (r = cg_stat_value(cg->dirs[m].fd, "memory.oom_control", "oom_kill", 1, &s.oom_kills)) < 0))
                return r;
        if (a >= 0 && (r = cg_stat_value(cg->dirs[a].fd, "cpuacct.usage", NULL, 1000, &s.cpu_usage_usec)) < 0)
                return r;
        /* v2 counts every group's CPU time, controller or not */
        if (a < 0 && cg->v2_at >= 0 &&
            (r = cg_stat_value(cg->dirs[cg->v2_at].fd, "cpu.stat", "usage_usec", 1, &s.cpu_usage_usec)) < 0)
                return r;
        if (c >= 0 && ((r = cg_stat_value(cg->dirs[c].fd, "cpu.stat", "nr_periods", 1, &s.nr_periods)) < 0 ||
                       (r = cg_stat_value(cg->dirs[c].fd, "cpu.stat", "nr_throttled", 1, &s.nr_throttled)) < 0 ||
                       (r = cg_stat_value(cg->dirs[c].fd, "cpu.stat", "throttled_time", 1000, &s.throttled_usec)) < 0))
                return r;
        if (p >= 0 && (r = cg_stat_value(cg->dirs[p].fd, "pids.current", NULL, 1, &s.pids_current)) < 0)
                return r;
        *ret = s;
        return 0;
}

const struct cg_backend cg_backend_v1 = {
        .name = "v1",
        .create = v1_create,
        .kill_all = v1_kill_all,
        .freeze = v1_freeze,
        .stats = v1_stats,
};

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
        free(cg->v2_why);
        free(cg);
}

/* Removes the directories of a group that never held a process. */
static void cgroup_unmake(struct cgroup *cg)
{
        for (size_t i = cg->n_dirs; i-- > 0;)
                (void)rmdir_retry(AT_FDCWD, cg->dirs[i].path);
        cgroup_free(cg);
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
        cg->v2_at = -1;
        _cleanup_free_ char *name = xasprintf(GROUP_PREFIX "%s", id);
        r = cg->backend->create(cg, name, lim, ret_error);
        if (r < 0) {
                /* nothing is attached yet: the new directories are empty */
                cgroup_unmake(cg);
                return r;
        }
        *ret = cg;
        return 0;
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
        if (cg_locate(NULL, &dir) < 0) {
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
 * back to the run's process group (see control.c). */

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
                if (cg_locate(c < _V1_MAX ? cg_v1_names[c] : NULL, &dir) < 0)
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
