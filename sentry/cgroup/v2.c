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
        _cleanup_close_ int pfd = cg_open_parent(parent, ret_error);
        if (pfd < 0)
                return pfd;

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
            (r = cg_stat_value(fd, "pids.current", NULL, 1, &s.pids_current)) < 0 ||
            (r = cg_stat_value(fd, "pids.events", "max", 1, &s.pids_max_events)) < 0)
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
