/* sentry/cgroup/ private: the cgroup v1 backend, one group per controller
 * hierarchy (memory, pids, cpu, cpuacct, freezer) with the limits on the
 * ones that enforce them, plus a group without limits in the v2 hierarchy
 * for BPF, which takes the freezer's and cpuacct's parts where it can; and
 * the kill through the v1 freezer that gc shares. */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>

#include "common/util.h"
#include "sentry/cgroup/cgroup-internal.h"

const char *const cg_v1_names[_V1_MAX] = {
        [V1_MEMORY] = "memory",   [V1_PIDS] = "pids",       [V1_CPU] = "cpu",
        [V1_CPUACCT] = "cpuacct", [V1_FREEZER] = "freezer", [V1_CPUSET] = "cpuset",
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
        int64_t deadline = monotonic_ms() + timeout_ms;
        for (;;) {
                char buf[64];
                r = cg_ctl_read(dfd, "freezer.state", buf, sizeof(buf));
                if (r < 0)
                        return r;
                if (startswith(buf, "FROZEN"))
                        return 0;
                if (monotonic_ms() >= deadline)
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
        int64_t deadline = monotonic_ms() + KILL_TIMEOUT_MS;
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
                if (monotonic_ms() >= deadline)
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
        _cleanup_free_ char *err = NULL;
        if (cg_locate(NULL, cg, &parent) < 0) {
                cg->v2_why = xstrdup("no cgroup2 hierarchy is mounted that shows this process's group");
                return;
        }
        if (cg_parent_override() && cg_grp_open(cg, GRP_V2, parent, false, &err) < 0) {
                cg->v2_why = TAKE_PTR(err);
                return;
        }
        if (cg_make_group(cg, parent, name, &err) < 0) {
                cg->v2_why = TAKE_PTR(err);
                return;
        }
        cg->v2_at = (int)cg->n_dirs - 1;
}

/* Whether a v2 group has the core files that take the v1 freezer's and
 * cpuacct's parts: cgroup.kill, cgroup.freeze and cpu.stat. */
static bool v2_can_kill_freeze_count(int dfd)
{
        return faccessat(dfd, "cgroup.kill", F_OK, 0) == 0 && faccessat(dfd, "cgroup.freeze", F_OK, 0) == 0 &&
               faccessat(dfd, "cpu.stat", F_OK, 0) == 0;
}

/* Where controller c's limits go: with a cgroupsPath the engine's group G,
 * else the sandbox's own group. */
static const struct cg_dir *limit_dir(const struct cgroup *cg, size_t c)
{
        if (cg->grp[c].path)
                return &cg->grp[c];
        return cg->at[c] >= 0 ? &cg->dirs[cg->at[c]] : NULL;
}

static int v1_memory(struct cgroup *cg, const struct cg_limits *lim, const struct cg_oci *o, bool need,
                     char **ret_error)
{
        const char *what = lim && lim->memory_bytes != CG_UNSET ? "limits.memoryBytes" : "linux.resources.memory";
        int r;
        if (cg->at[V1_MEMORY] >= 0) {
                const struct cg_dir *d = &cg->dirs[cg->at[V1_MEMORY]];
                /* A new v1 memory group inherits oom_kill_disable from its
                 * parent; with it set, a sandbox at its limit would hang
                 * instead of having a process killed. Only the OCI
                 * disableOOMKiller asks for that, and with a cgroupsPath
                 * it is G's setting (the group at its limit) that counts. */
                bool off = o->disable_oom_killer && !cg->grp[V1_MEMORY].path;
                r = cg_ctl_write(d->fd, d->path, "memory.oom_control", off ? "1" : "0",
                                 off ? "linux.resources.memory.disableOOMKiller" : what, need ? ret_error : NULL);
                if (r < 0 && need)
                        return r;
        }
        const struct cg_dir *d = cg->grp[V1_MEMORY].path ? &cg->grp[V1_MEMORY] : NULL;
        if (d && need) {
                /* G decides at its limit: the OOM killer on, unless asked off
                 * (then the tasks at the limit wait; cordon's kill still ends
                 * them, SIGKILL wakes a task waiting there) */
                r = cg_ctl_write(d->fd, d->path, "memory.oom_control", o->disable_oom_killer ? "1" : "0",
                                 "linux.resources.memory.disableOOMKiller", o->disable_oom_killer ? ret_error : NULL);
                if (r < 0 && o->disable_oom_killer)
                        return r;
        }
        if (!need)
                return 0;
        d = limit_dir(cg, V1_MEMORY);
        if (lim && lim->memory_bytes != CG_UNSET) {
                /* memory+swap to the same value: swap cannot stretch the
                 * limit. Absent without swap accounting, where there is
                 * nothing to close. The kernel keeps memsw at or above the
                 * limit, so a raised limit (update) goes after it. */
                char val[32];
                int64_t memsw;
                snprintf(val, sizeof(val), "%" PRId64, lim->memory_bytes);
                bool swap_first = cg_ctl_read_i64(d->fd, "memory.memsw.limit_in_bytes", NULL, &memsw) == 0 &&
                                  memsw < lim->memory_bytes;
                if (swap_first &&
                    (r = cg_ctl_write(d->fd, d->path, "memory.memsw.limit_in_bytes", val, what, ret_error)) < 0)
                        return r;
                if ((r = cg_write_i64(d, "memory.limit_in_bytes", lim->memory_bytes, what, ret_error)) < 0)
                        return r;
                if (!swap_first && (r = cg_ctl_write_if_present(d->fd, d->path, "memory.memsw.limit_in_bytes", val,
                                                                what, ret_error)) < 0)
                        return r;
        }
        /* a reclaim hint and a tuning of the group's own reclaim; the
         * socket-buffer limit is a limit */
        if (o->memory_reservation > 0 && (r = cg_write_i64(d, "memory.soft_limit_in_bytes", o->memory_reservation,
                                                           "linux.resources.memory.reservation", ret_error)) < 0)
                return r;
        if (o->memory_swappiness >= 0 && (r = cg_write_i64(d, "memory.swappiness", o->memory_swappiness,
                                                           "linux.resources.memory.swappiness", ret_error)) < 0)
                return r;
        if (o->kernel_tcp > 0 && (r = cg_write_i64(d, "memory.kmem.tcp.limit_in_bytes", o->kernel_tcp,
                                                   "linux.resources.memory.kernelTCP", ret_error)) < 0)
                return r;
        return 0;
}

static int v1_cpu(struct cgroup *cg, const struct cg_limits *lim, const struct cg_oci *o, char **ret_error)
{
        const struct cg_dir *d = limit_dir(cg, V1_CPU);
        int64_t quota = 0, period = o->cpu_period;
        int r;
        if (lim && lim->cpu_millis != CG_UNSET) {
                if (o->cpu_quota > 0 &&
                    cgroup_cpu_millis((uint64_t)o->cpu_quota, (uint64_t)(o->cpu_period ?: CPU_PERIOD_USEC)) ==
                            lim->cpu_millis) {
                        quota = o->cpu_quota;
                        period = o->cpu_period ?: CPU_PERIOD_USEC;
                } else
                        cg_cpu_bandwidth(lim->cpu_millis, &quota, &period);
        }
        const char *what = quota ? (o->cpu_quota ? "linux.resources.cpu.quota" : "limits.cpuMillis")
                                 : "linux.resources.cpu.period";
        if (period && (r = cg_write_i64(d, "cpu.cfs_period_us", period, what, ret_error)) < 0)
                return r;
        if (quota && (r = cg_write_i64(d, "cpu.cfs_quota_us", quota, what, ret_error)) < 0)
                return r;
        if (o->cpu_shares > 0 &&
            (r = cg_write_i64(d, "cpu.shares", o->cpu_shares, "linux.resources.cpu.shares", ret_error)) < 0)
                return r;
        return 0;
}

/* cpuset.cpus and .mems as asked; the one not asked for, where empty (a
 * new group), from the parent, as a process cannot enter the group else */
static int v1_cpuset(struct cgroup *cg, const struct cg_oci *o, char **ret_error)
{
        const struct cg_dir *d = limit_dir(cg, V1_CPUSET);
        _cleanup_free_ char *parent = xstrdup(d->path);
        *strrchr(parent, '/') = '\0';
        /* the parents first: a list must lie within the parent's */
        int r = cg_cpuset_fill(parent, ret_error);
        if (r < 0)
                return r;
        if ((r = cg_cpuset_write(d, o, ret_error)) < 0)
                return r;
        return cg_cpuset_fill(d->path, ret_error);
}

/* Which hierarchies the limits need, and what each is called in messages. */
static void v1_need(const struct cg_limits *lim, const struct cg_oci *o, bool need[_V1_MAX],
                    const char *limit_name[_V1_MAX])
{
        need[V1_MEMORY] = (lim && lim->memory_bytes != CG_UNSET) || o->memory_reservation > 0 ||
                          o->memory_swappiness >= 0 || o->kernel_tcp > 0 || o->disable_oom_killer;
        need[V1_PIDS] = lim && lim->max_processes != CG_UNSET;
        need[V1_CPU] = (lim && lim->cpu_millis != CG_UNSET) || o->cpu_shares > 0 || o->cpu_period > 0;
        need[V1_CPUSET] = o->cpus || o->mems;
        limit_name[V1_MEMORY] = lim && lim->memory_bytes != CG_UNSET ? "limits.memoryBytes" : "linux.resources.memory";
        limit_name[V1_PIDS] = "limits.maxProcesses";
        limit_name[V1_CPU] = lim && lim->cpu_millis != CG_UNSET ? "limits.cpuMillis" : "linux.resources.cpu";
        limit_name[V1_CPUSET] = o->cpus ? "linux.resources.cpu.cpus" : "linux.resources.cpu.mems";
}

/* The limits, each in the group it goes to (limit_dir): create's, and
 * update's after it. A hierarchy a limit needs that the sandbox has no
 * group in (update of a container without a cgroupsPath: create asked for
 * nothing there, so none was made) is refused, naming the limit. */
static int v1_apply(struct cgroup *cg, const struct cg_limits *lim, const struct cg_oci *o, char **ret_error)
{
        bool need[_V1_MAX] = {false};
        const char *limit_name[_V1_MAX] = {NULL};
        int r;
        v1_need(lim, o, need, limit_name);
        for (size_t c = 0; c < _V1_MAX; c++)
                if (need[c] && !limit_dir(cg, c)) {
                        cg_set_error(ret_error,
                                     "%s cannot be changed: the container has no %s group (it was created without "
                                     "a limit there and without linux.cgroupsPath)",
                                     limit_name[c], cg_v1_names[c]);
                        return -EOPNOTSUPP;
                }
        if ((r = v1_memory(cg, lim, o, need[V1_MEMORY], ret_error)) < 0)
                return r;
        if (need[V1_PIDS] && (r = cg_write_i64(limit_dir(cg, V1_PIDS), "pids.max", lim->max_processes,
                                               limit_name[V1_PIDS], ret_error)) < 0)
                return r;
        if (need[V1_CPU] && (r = v1_cpu(cg, lim, o, ret_error)) < 0)
                return r;
        if (need[V1_CPUSET] && (r = v1_cpuset(cg, o, ret_error)) < 0)
                return r;
        return 0;
}

static int v1_create(struct cgroup *cg, const char *name, const struct cg_limits *lim, char **ret_error)
{
        const struct cg_oci *o = cg_oci();
        bool override = cg_parent_override() != NULL;
        char *own[_V1_MAX] = {NULL}, *where[_V1_MAX] = {NULL};
        bool need[_V1_MAX] = {false};
        const char *limit_name[_V1_MAX] = {NULL};
        int r = 0;
        v1_need(lim, o, need, limit_name);
        size_t found = 0;

        for (size_t c = 0; c < _V1_MAX; c++)
                if (cg_locate_own(cg_v1_names[c], &own[c]) >= 0)
                        found++;
        if (found == 0) {
                cg_set_error(ret_error, "cgroup v1 cannot be used: none of the memory, pids, cpu, cpuacct, freezer "
                                        "and cpuset controllers is mounted as a cgroup v1 hierarchy on this host (a "
                                        "cgroup v2 only host? use the v2 backend)");
                r = -EOPNOTSUPP;
                goto out;
        }
        /* every hierarchy a requested limit needs must be there, checked
         * before anything is created */
        for (size_t c = 0; c < _V1_MAX; c++) {
                if (!need[c] || own[c])
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
         * the usage only where no v2 group can (below). With a cgroupsPath
         * the limits go to G (see cgroup_set_parent), and in a cpu hierarchy
         * of its own and the cpuset one the container stays in G with the
         * sentry (a placement: one scheduler group for both, so the split
         * above does not arise). An OCI container (a cgroupsPath) is in G in
         * every hierarchy mounted, cpu and cpuset too whether or not create
         * limits them, as runc places it: `update` writes a CPU limit or a
         * placement there later (cgroup_update makes nothing). */
        bool cpu_tied = own[V1_CPU] && own[V1_CPUACCT] && streq(own[V1_CPU], own[V1_CPUACCT]);
        /* The v2 group first: where it can do the freezer's and cpuacct's
         * parts itself, neither v1 group is made (two mkdir and rmdir, two
         * joins per start). It holds exactly the sandbox's processes (init
         * is born in it and everything descends from init), kills them at
         * once (cgroup.kill, Linux 5.14: no fork escapes it, as none escapes
         * a frozen v1 group), freezes them (cgroup.freeze) and counts their
         * CPU time (cpu.stat's usage_usec, kept for every v2 group). With a
         * cgroupsPath the engine reads G's hierarchies: all are kept. */
        v1_add_v2_group(cg, name);
        bool v2_serves = !override && cg->v2_at >= 0 && v2_can_kill_freeze_count(cg->dirs[cg->v2_at].fd);
        for (size_t c = 0; c < _V1_MAX; c++) {
                cg->at[c] = -1;
                bool use = c == V1_CPU       ? need[V1_CPU] || override
                           : c == V1_CPUACCT ? !(cpu_tied && !need[V1_CPU] && !override) && !v2_serves
                           : c == V1_FREEZER ? !v2_serves
                           : c == V1_CPUSET  ? need[V1_CPUSET] || override
                                             : true;
                if (!own[c] || !use)
                        continue;
                bool shared = false;
                for (size_t e = 0; e < c && !shared; e++)
                        if (where[e] && streq(own[e], own[c])) {
                                /* co-mounted: one directory for both */
                                shared = true;
                                cg->at[c] = cg->at[e];
                                where[c] = xstrdup(where[e]);
                                if (override && cg->grp[e].path)
                                        r = cg_grp_open(cg, c, cg->grp[e].path, cg->place[e], ret_error);
                        }
                if (r < 0)
                        goto out;
                if (shared)
                        continue;
                bool place = override && ((c == V1_CPU && !cpu_tied) || c == V1_CPUSET);
                if (override) {
                        r = cg_locate(cg_v1_names[c], cg, &where[c]);
                        if (r < 0) {
                                cg_set_error(ret_error, "linux.cgroupsPath %s: cannot make it in the %s hierarchy: %s",
                                             cg_parent_override(), cg_v1_names[c], strerror(-r));
                                goto out;
                        }
                        if ((r = cg_grp_open(cg, c, where[c], place, ret_error)) < 0)
                                goto out;
                        if (place)
                                continue;
                } else
                        where[c] = xstrdup(own[c]);
                r = cg_make_group(cg, where[c], name, ret_error);
                if (r < 0)
                        goto out;
                cg->at[c] = (int)cg->n_dirs - 1;
        }
        if (!override && !need[V1_CPU] && cpu_tied && cg->v2_at < 0) {
                /* no v2 group to count the CPU time: the co-mounted group
                 * it is, scheduler group and all */
                r = cg_make_group(cg, own[V1_CPUACCT], name, ret_error);
                if (r < 0)
                        goto out;
                cg->at[V1_CPUACCT] = cg->at[V1_CPU] = (int)cg->n_dirs - 1;
        }

        /* a cpuset G asked nothing of starts with empty lists (a new v1
         * cpuset group does), which no task can join: the sentry enters it
         * next (enter_groups), so it gets its parent's, as runc copies them */
        if (override && !need[V1_CPUSET] && cg->grp[V1_CPUSET].path &&
            (r = cg_cpuset_fill(cg->grp[V1_CPUSET].path, ret_error)) < 0)
                goto out;
        r = v1_apply(cg, lim, o, ret_error);
out:
        for (size_t c = 0; c < _V1_MAX; c++) {
                free(own[c]);
                free(where[c]);
        }
        return r;
}

static int v1_kill_all(struct cgroup *cg)
{
        int fds[MAX_DIRS];
        for (size_t i = 0; i < cg->n_dirs; i++)
                fds[i] = cg->dirs[i].fd;
        int f = cg->at[V1_FREEZER];
        if (f < 0 && cg->v2_at >= 0) {
                /* no v1 freezer (v1_create): the v2 group, which holds the
                 * same processes, kills them all at once (cgroup.kill; or
                 * frozen, then killed pid by pid), and waits until it is
                 * empty; the v1 groups are swept and waited for below */
                int r = cg_v2_kill_dir(cg->dirs[cg->v2_at].fd, cg->dirs[cg->v2_at].path);
                if (r < 0)
                        return r;
        }
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

static int v1_limit_events(struct cgroup *cg, struct cg_stats *ret)
{
        struct cg_stats s = {-1, -1, -1, -1, -1, -1, -1, -1};
        int r, m = cg->at[V1_MEMORY], p = cg->at[V1_PIDS];
        if (m >= 0 && (r = cg_stat_value(cg->dirs[m].fd, "memory.oom_control", "oom_kill", 1, &s.oom_kills)) < 0)
                return r;
        if (p >= 0 && (r = cg_stat_value(cg->dirs[p].fd, "pids.events", "max", 1, &s.pids_max_events)) < 0)
                return r;
        *ret = s;
        return 0;
}

const struct cg_backend cg_backend_v1 = {
        .name = "v1",
        .create = v1_create,
        .apply = v1_apply,
        .kill_all = v1_kill_all,
        .freeze = v1_freeze,
        .stats = v1_stats,
        .limit_events = v1_limit_events,
};
