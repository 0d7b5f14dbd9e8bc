/* sentry/cgroup/ private: the cgroup v1 backend, one group per controller
 * hierarchy (memory, pids, cpu, cpuacct, freezer) with the limits on the
 * ones that enforce them, plus a group without limits in the v2 hierarchy
 * for BPF; and the kill through the v1 freezer that gc shares. */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>

#include "common/util.h"
#include "sentry/cgroup/cgroup-internal.h"

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
        struct cg_stats s = {-1, -1, -1, -1, -1, -1, -1, -1};
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
        /* the v1 pids controller has pids.events too (Linux 4.6), counting
         * the forks it refused because of this group's pids.max */
        if (p >= 0 && ((r = cg_stat_value(cg->dirs[p].fd, "pids.current", NULL, 1, &s.pids_current)) < 0 ||
                       (r = cg_stat_value(cg->dirs[p].fd, "pids.events", "max", 1, &s.pids_max_events)) < 0))
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
