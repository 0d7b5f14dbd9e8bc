/* sentry/cgroup/ private: what the room's files share (cgroup.c, util.c,
 * v1.c, v2.c): the group and its backend table, the room's bounds and
 * timeouts, and the helpers util.c, v1.c and v2.c give the others. Not for
 * other rooms: cgroup.h is the contract. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "common/util.h"
#include "sentry/cgroup/cgroup.h"

#define GROUP_PREFIX      "cordon-"
#define ID_MAX            64
#define MAX_DIRS          7    /* v1: memory, pids, cpu, cpuacct, freezer, cpuset; + the v2 group for BPF */
#define MADE_MAX          64   /* directories made on the way to a cgroupsPath, all hierarchies */
#define KILL_TIMEOUT_MS   5000 /* until a killed group is empty */
#define FREEZE_TIMEOUT_MS 5000 /* until cgroup_freeze() sees the group frozen */
#define KILL_FREEZE_MS    1000 /* the freeze before a kill: best effort, then kill anyway */
#define RMDIR_TIMEOUT_MS  2000 /* rmdir retried on EBUSY while killed processes exit */
#define POLL_MS           5
#define CPU_PERIOD_USEC   100000    /* the kernel's default CFS period */
#define CPU_PERIOD_MAX    1000000   /* the kernel's largest period (1 s) */
#define CPU_QUOTA_MIN     1000      /* the kernel's smallest quota (1 ms) */
#define PROCS_MAX         (1 << 20) /* pids taken from one read of cgroup.procs */
#define KILL_BATCH        64        /* pidfds held at once */

/* ------------------------------------------------------------------------ */
/* the group and its backends */

enum v1_ctrl {
        V1_MEMORY,
        V1_PIDS,
        V1_CPU,
        V1_CPUACCT,
        V1_FREEZER,
        V1_CPUSET,
        _V1_MAX,
};
#define GRP_V2 _V1_MAX /* struct cgroup's grp[]: the v1 controllers, then v2 */

/* "memory", "pids", "cpu", "cpuacct", "freezer", "cpuset": the v1 hierarchies' names (v1.c) */
extern const char *const cg_v1_names[_V1_MAX];

struct cg_dir {
        char *path; /* for messages, the state file and rmdir */
        int fd;     /* O_PATH: every control file is opened relative to it */
};

struct cgroup;

/* One per cgroup version; chosen once in cgroup_create(). */
struct cg_backend {
        const char *name;
        int (*create)(struct cgroup *cg, const char *name, const struct cg_limits *lim, char **ret_error);
        /* the limits written to the groups create made (create's last step, and cgroup_update) */
        int (*apply)(struct cgroup *cg, const struct cg_limits *lim, const struct cg_oci *o, char **ret_error);
        int (*kill_all)(struct cgroup *cg);
        int (*freeze)(struct cgroup *cg, bool frozen);
        int (*stats)(struct cgroup *cg, struct cg_stats *ret);
        /* oom_kills and pids_max_events only, the rest -1 (cgroup_limit_events) */
        int (*limit_events)(struct cgroup *cg, struct cg_stats *ret);
};

/* v2.c and v1.c */
extern const struct cg_backend cg_backend_v2;
extern const struct cg_backend cg_backend_v1;

struct cgroup {
        const struct cg_backend *backend;
        size_t n_dirs;
        struct cg_dir dirs[MAX_DIRS];
        const char *paths[MAX_DIRS + 1]; /* cgroup_dirs(): NULL-terminated view of dirs[].path */
        int at[_V1_MAX];                 /* index into dirs[] per controller, -1 when absent (v2: all 0) */
        int v2_at;                       /* index of the group in the cgroup v2 hierarchy, -1 when none */
        char *v2_why;                    /* why there is none (malloc'd), for cordon run -v */
        bool has_runs;                   /* cgroup_run_create made a run's group (under the v2 one) */
        /* cgroupsPath (cg_parent_override): the engine's group G in each
         * hierarchy used, by controller (GRP_V2: the cgroup v2 one), where
         * the limits are written; path NULL where none. home: the group the
         * sentry came from, where it moved itself into G; place: the
         * container stays in G itself (no group of cordon's beneath), so
         * the sentry must be in G before the clone */
        struct cg_dir grp[_V1_MAX + 1];
        char *home[_V1_MAX + 1];
        bool place[_V1_MAX + 1];
        /* the directories cg_locate made on the way to each G, in the order made */
        char *made[MADE_MAX];
        size_t n_made;
        const char *parent_list[_V1_MAX + 1 + MADE_MAX + 1]; /* cgroup_parent_dirs() */
};

/* ------------------------------------------------------------------------ */
/* helpers: sleep_ms here, the rest in util.c (the clock: common/util.h) */

static inline void sleep_ms(int ms)
{
        struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

_printf_(2, 3) void cg_set_error(char **ret_error, const char *fmt, ...);
bool cg_list_has(const char *list, char sep, const char *word);

/* control files, relative to a group's O_PATH fd; what and ret_error may be NULL */
int cg_ctl_write(int dfd, const char *dir, const char *file, const char *value, const char *what, char **ret_error);
int cg_ctl_write_if_present(int dfd, const char *dir, const char *file, const char *value, const char *what,
                            char **ret_error);
/* cg_ctl_write of a number to d's file */
int cg_write_i64(const struct cg_dir *d, const char *file, int64_t v, const char *what, char **ret_error);
/* linux.resources.cpu.cpus and .mems as asked (either may be absent) */
int cg_cpuset_write(const struct cg_dir *d, const struct cg_oci *o, char **ret_error);
int cg_ctl_read(int dfd, const char *file, char *buf, size_t size);
int cg_ctl_read_i64(int dfd, const char *file, const char *key, int64_t *ret);
int cg_stat_value(int dfd, const char *file, const char *key, int64_t div, int64_t *ret);
/* SIGKILLs what the group's cgroup.procs lists: how many were listed, or -errno */
int cg_kill_listed(int dfd);
/* opens the sentry's own group, the parent: an O_PATH fd or -errno */
int cg_open_parent(const char *parent, char **ret_error);
/* makes the group "name" in parent and adds it to cg->dirs[] */
int cg_make_group(struct cgroup *cg, const char *parent, const char *name, char **ret_error);

/* where the hierarchies are (ctrl NULL: the cgroup v2 one); without own,
 * ret_dir (may be NULL) is the hierarchy's mount point */
int cg_find_mount(const char *ctrl, const char *own, char **ret_dir);
/* the sentry's own group, or with cgroup_set_parent the engine's group,
 * made (with each missing directory on the way, listed in cg->made) where
 * cg is given */
int cg_locate(const char *ctrl, struct cgroup *cg, char **ret_dir);
/* the same, ignoring cgroup_set_parent: the sentry's own group's directory */
int cg_locate_own(const char *ctrl, char **ret_dir);
/* cgroup_set_parent's path, or NULL */
const char *cg_parent_override(void);
/* cgroup_set_oci's resources (CG_OCI_NONE when none were set) */
const struct cg_oci *cg_oci(void);
/* opens G (path) as cg->grp[i], and notes whether it is a placement */
int cg_grp_open(struct cgroup *cg, size_t i, const char *path, bool place, char **ret_error);
/* v1 cpuset: fills an empty cpuset.cpus or cpuset.mems of dir and of each
 * ancestor from its parent (a new v1 cpuset group starts empty, and no
 * process can enter it then) */
int cg_cpuset_fill(const char *dir, char **ret_error);
bool cg_v1_mounted(const char *ctrl);
bool cg_v1_bound(const char *ctrl);

void cg_cpu_bandwidth(int64_t millis, int64_t *ret_quota, int64_t *ret_period);

/* ------------------------------------------------------------------------ */
/* killing and freezing one directory: the backends, a run's group and gc */

/* v2.c */
int cg_v2_freeze_dir(int dfd, const char *dir, bool frozen, int timeout_ms);
int cg_v2_kill_dir(int dfd, const char *dir);
/* v1.c: freezer_fd -1 where none of the groups is a freezer group */
int cg_v1_kill_dirs(const int *fds, size_t n, int freezer_fd, const char *freezer_dir);
