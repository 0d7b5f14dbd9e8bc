/* sentry/cgroup/ private: the cgroup v2 backend, one group in the unified
 * hierarchy (/sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid host)
 * that carries every limit; and the killing and freezing of one v2
 * directory, which the v1 backend's v2 group, a run's group and gc share. */
#include "config.h"

#include <fcntl.h>
#include <inttypes.h>

#include "common/util.h"
#include "sentry/cgroup/cgroup-internal.h"

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
        int64_t deadline = monotonic_ms() + timeout_ms;
        for (;;) {
                int64_t v;
                r = cg_ctl_read_i64(dfd, "cgroup.events", "frozen", &v);
                if (r < 0)
                        return r;
                if (v == (frozen ? 1 : 0))
                        return 0;
                if (monotonic_ms() >= deadline)
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
        int64_t deadline = monotonic_ms() + KILL_TIMEOUT_MS;
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
                if (monotonic_ms() >= deadline) {
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

/* cpu.max: the config's own quota and period where the policy's CPU limit
 * is what they come to, else the policy's; a period alone as given. */
static int v2_cpu(const struct cg_dir *d, const struct cg_limits *lim, const struct cg_oci *o, char **ret_error)
{
        int64_t quota = 0, period = o->cpu_period;
        char val[64];
        int r;
        if (lim && lim->cpu_millis != CG_UNSET) {
                period = o->cpu_period ?: CPU_PERIOD_USEC;
                if (o->cpu_quota > 0 && cgroup_cpu_millis((uint64_t)o->cpu_quota, (uint64_t)period) == lim->cpu_millis)
                        quota = o->cpu_quota;
                else
                        cg_cpu_bandwidth(lim->cpu_millis, &quota, &period);
        }
        if (quota || period) {
                if (quota)
                        snprintf(val, sizeof(val), "%" PRId64 " %" PRId64, quota, period);
                else
                        snprintf(val, sizeof(val), "max %" PRId64, period);
                r = cg_ctl_write(d->fd, d->path, "cpu.max", val,
                                 o->cpu_quota || o->cpu_period ? "linux.resources.cpu.quota" : "limits.cpuMillis",
                                 ret_error);
                if (r < 0)
                        return r;
        }
        /* runc's conversion of shares (2..262144) to a weight (1..10000) */
        if (o->cpu_shares > 0) {
                int64_t shares = o->cpu_shares < 2 ? 2 : o->cpu_shares > 262144 ? 262144 : o->cpu_shares;
                r = cg_write_i64(d, "cpu.weight", 1 + ((shares - 2) * 9999) / 262142, "linux.resources.cpu.shares",
                                 ret_error);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The limits, in the group they go to: with a cgroupsPath the engine's G,
 * else the sandbox's own (create, and update after it). */
static int v2_apply(struct cgroup *cg, const struct cg_limits *lim, const struct cg_oci *o, char **ret_error)
{
        const struct cg_dir *d = cg->grp[GRP_V2].path ? &cg->grp[GRP_V2] : &cg->dirs[0];
        int r;
        if (lim && lim->memory_bytes != CG_UNSET) {
                if ((r = cg_write_i64(d, "memory.max", lim->memory_bytes, "limits.memoryBytes", ret_error)) < 0)
                        return r;
                /* without this, swap would let the sandbox use more than the
                 * limit; absent without swap accounting, with nothing to close */
                r = cg_ctl_write_if_present(d->fd, d->path, "memory.swap.max", "0", "limits.memoryBytes", ret_error);
                if (r < 0)
                        return r;
        }
        if (lim && lim->max_processes != CG_UNSET &&
            (r = cg_write_i64(d, "pids.max", lim->max_processes, "limits.maxProcesses", ret_error)) < 0)
                return r;
        if (((lim && lim->cpu_millis != CG_UNSET) || o->cpu_shares > 0 || o->cpu_period > 0) &&
            (r = v2_cpu(d, lim, o, ret_error)) < 0)
                return r;
        /* a v2 cpuset left empty uses its parent's: only what is asked */
        return cg_cpuset_write(d, o, ret_error);
}

static int v2_create(struct cgroup *cg, const char *name, const struct cg_limits *lim, char **ret_error)
{
        const struct cg_oci *o = cg_oci();
        _cleanup_free_ char *parent = NULL;
        int r = cg_locate(NULL, cg, &parent);
        if (r < 0) {
                if (cg_parent_override() && r != -ENOENT)
                        cg_set_error(ret_error, "linux.cgroupsPath %s: cannot make it in the cgroup v2 hierarchy: %s",
                                     cg_parent_override(), strerror(-r));
                else
                        cg_set_error(ret_error,
                                     "cgroup v2 cannot be used: no cgroup2 hierarchy is mounted that shows this "
                                     "process's group (see /proc/self/cgroup and /proc/self/mountinfo)");
                return r == -ENOENT ? -EOPNOTSUPP : r;
        }
        /* With a cgroupsPath the limits go to G itself (see
         * cgroup_set_parent), so its parent is the group whose children
         * get the controllers; else the sandbox's own group beneath the
         * sentry's. G's own subtree_control stays empty, so that the
         * sentry may be in G beside the sandbox's group (the "no internal
         * processes" rule binds only a group that gives its children
         * controllers). */
        _cleanup_free_ char *ctl = xstrdup(parent);
        if (cg_parent_override()) {
                if ((r = cg_grp_open(cg, GRP_V2, parent, false, ret_error)) < 0)
                        return r;
                char *slash = strrchr(ctl, '/');
                if (slash && slash != ctl)
                        *slash = '\0';
        }
        _cleanup_close_ int pfd = cg_open_parent(ctl, ret_error);
        if (pfd < 0)
                return pfd;

        struct limit_req req[] = {
                {"limits.memoryBytes", "memory", lim && lim->memory_bytes != CG_UNSET},
                {"limits.maxProcesses", "pids", lim && lim->max_processes != CG_UNSET},
                {"limits.cpuMillis", "cpu",
                 (lim && lim->cpu_millis != CG_UNSET) || o->cpu_shares > 0 || o->cpu_period > 0},
                {o->cpus ? "linux.resources.cpu.cpus" : "linux.resources.cpu.mems", "cpuset", o->cpus || o->mems},
        };

        /* Every requested controller is checked, and enabled for the
         * children of that group, before anything is created, so a
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
                        cg_set_error(ret_error, "%s: cannot read cgroup.controllers or cgroup.subtree_control: %s", ctl,
                                     strerror(-r));
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
                             req[i].name, req[i].ctrl, ctl,
                             cg_v1_bound(req[i].ctrl) ? "it is bound to a cgroup v1 hierarchy on this host"
                                                      : "it is not delegated to this group");
                return -EOPNOTSUPP;
        }
        for (size_t i = 0; i < ELEMENTSOF(req); i++) {
                if (!req[i].wanted || cg_list_has(subtree, ' ', req[i].ctrl))
                        continue;
                /* Enabling a controller for the children of that group is
                 * what delegation means in v2; it is left enabled, as other
                 * sandboxes beneath the same group may rely on it. */
                char cmd[32];
                snprintf(cmd, sizeof(cmd), "+%s", req[i].ctrl);
                r = cg_ctl_write(pfd, ctl, "cgroup.subtree_control", cmd, NULL, NULL);
                if (r < 0) {
                        cg_set_error(ret_error,
                                     "%s cannot be enforced: enabling the %s controller in %s/cgroup.subtree_control "
                                     "failed: %s%s",
                                     req[i].name, req[i].ctrl, ctl, strerror(-r),
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

        return v2_apply(cg, lim, o, ret_error);
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
            (r = cg_stat_value(fd, "pids.current", NULL, 1, &s.pids_current)) < 0 ||
            (r = cg_stat_value(fd, "pids.events", "max", 1, &s.pids_max_events)) < 0)
                return r;
        *ret = s;
        return 0;
}

static int v2_limit_events(struct cgroup *cg, struct cg_stats *ret)
{
        int fd = cg->dirs[0].fd, r;
        struct cg_stats s = {-1, -1, -1, -1, -1, -1, -1, -1};
        if ((r = cg_stat_value(fd, "memory.events", "oom_kill", 1, &s.oom_kills)) < 0 ||
            (r = cg_stat_value(fd, "pids.events", "max", 1, &s.pids_max_events)) < 0)
                return r;
        *ret = s;
        return 0;
}

const struct cg_backend cg_backend_v2 = {
        .name = "v2",
        .create = v2_create,
        .apply = v2_apply,
        .kill_all = v2_kill_all,
        .freeze = v2_freeze,
        .stats = v2_stats,
        .limit_events = v2_limit_events,
};
