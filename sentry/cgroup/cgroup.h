/* sentry/cgroup/ (sentry/ private): the sandbox's control groups. One group
 * "cordon-<id>" beneath the sentry's own group in each hierarchy the backend
 * uses, with the limits the policy asks for, and the means to count, freeze
 * and kill what runs in it; behind one interface, a cgroup v2 backend (the
 * unified hierarchy) and a cgroup v1 one (a hierarchy per controller),
 * chosen once per group. Where the hierarchies are mounted and which group
 * the sentry is in are read from /proc/self/mountinfo and /proc/self/cgroup,
 * never assumed. This is the room's only public header.
 *
 * It promises: a limit that cannot be enforced is refused, never silently
 * dropped, and a refusal leaves nothing behind; a kill signals only the
 * processes in the group (each pid is pinned with a pidfd and found in the
 * group again before the signal; without pidfds, before Linux 5.3, the
 * group is frozen first where it can be).
 *
 * It never prints to the user: a failure comes back as -errno, with the
 * message in *ret_error (malloc'd) or *ret_why (static or owned by the
 * group) for the caller to show; the only output is trace_mark() lines
 * under CORDON_TRACE_STARTUP. It never touches a group that is not
 * cordon's: it makes, writes to, kills and removes only its own
 * "cordon-<id>" groups and their "run-<n>" groups, and gc removes only
 * directories so named on a cgroup filesystem. The writes elsewhere: v2
 * delegation, enabling a controller in the cgroup.subtree_control of the
 * group above the limited one, which is left enabled for the others
 * beneath it; and an OCI container's cgroupsPath group, which the engine
 * names for that container alone (cgroup_set_parent): its limits, the
 * sentry's pid, and its removal (only once empty) at the end. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum cg_mode {
        CG_AUTO, /* v2 where /sys/fs/cgroup is a cgroup2 hierarchy with the needed controllers, else v1 */
        CG_V1,   /* per-controller hierarchies: memory, pids, cpu(,cpuacct), freezer */
        CG_V2,   /* the unified hierarchy: /sys/fs/cgroup, or /sys/fs/cgroup/unified on a hybrid host */
};

#define CG_UNSET (-1)

struct cg_limits {
        int64_t memory_bytes;  /* CG_UNSET: none */
        int64_t max_processes; /* tasks (processes and threads) */
        int64_t cpu_millis;    /* 1000 = one CPU of bandwidth */
};

struct cg_stats {
        int64_t memory_peak_bytes; /* -1 when the host cannot tell */
        int64_t cpu_usage_usec;    /* -1 when unknown */
        int64_t oom_kills;         /* processes the kernel OOM-killed inside the group; -1 unknown */
        int64_t nr_periods;        /* CPU bandwidth periods, throttled periods, throttled time; -1 unknown */
        int64_t nr_throttled;
        int64_t throttled_usec;
        int64_t pids_current;
        int64_t pids_max_events; /* forks refused at the group's task limit (pids.events "max"); -1 unknown */
};

/* What an OCI container's linux.resources asks beyond struct cg_limits
 * (cgroup_set_oci, before cgroup_create): each narrows what the container
 * gets or tunes only its own group. Zero or NULL: not given. */
struct cg_oci {
        /* cpu.cfs_quota_us/cpu.cfs_period_us (v2 cpu.max) as given, written
         * instead of cg_limits.cpu_millis's own pair when that is what they
         * come to (cgroup_cpu_millis); a period alone is written as it is */
        int64_t cpu_quota, cpu_period;
        int64_t cpu_shares;         /* v1 cpu.shares, v2 cpu.weight (runc's conversion) */
        const char *cpus, *mems;    /* cpuset placement, lists as "0-3,8" (checked: cgroup_cpuset_check) */
        int64_t memory_reservation; /* v1 memory.soft_limit_in_bytes; v2: not written (memory.low would shield it) */
        int64_t memory_swappiness;  /* v1 memory.swappiness, 0..100; -1: not given; v2: none */
        int64_t kernel_tcp;         /* v1 memory.kmem.tcp.limit_in_bytes; v2 counts it in memory.max */
        bool disable_oom_killer;    /* v1 memory.oom_control; v2: none, as runc */
};
#define CG_OCI_NONE ((struct cg_oci){.memory_swappiness = -1})

struct cgroup;

/* Sets the linux.resources the next cgroup_create applies (copied; NULL:
 * none). */
void cgroup_set_oci(const struct cg_oci *oci);
/* Whether cgroup_set_oci asked for anything: then the sandbox must not
 * start without its group. */
bool cgroup_oci_asks(void);
/* Whether this host's limits go to cgroup v1 hierarchies (CG_AUTO's
 * choice), for the OCI front's warnings about fields only v1 has. */
bool cgroup_auto_is_v1(void);
/* The CPU bandwidth a quota and period (µs) come to in thousandths of a
 * CPU (the policy's cpuMillis), at least 1; 0 if period is 0. */
int64_t cgroup_cpu_millis(uint64_t quota, uint64_t period);
/* A CPU or memory-node list ("0-3,8", the kernel's syntax without
 * strides) as a bitmap of n_words 64-bit words: -EINVAL for bad syntax (or
 * an empty list), -ERANGE for a number past the bitmap. */
int cgroup_list_parse(const char *list, uint64_t *mask, size_t n_words);
/* Checks linux.resources.cpu.cpus and .mems (each may be NULL) against the
 * CPUs and memory nodes this host has online: -EINVAL with *ret_error
 * (malloc'd) naming the field, the value and what is missing. */
int cgroup_cpuset_check(const char *cpus, const char *mems, char **ret_error);

/* An OCI container's cgroupsPath (runc's cgroupfs reading: absolute from
 * each hierarchy's root, relative beneath the sentry's own group), the
 * engine's group G for the container, made if missing. The limits are
 * written in G itself, as runc writes them, so that what kubelet and
 * `crictl stats` read there is the container's; the groups cgroup_create
 * makes go beneath G, and the sentry itself moves into G (containerd's
 * shim reads the group of the pid it was given, the sentry's), so G's
 * limits bind the sentry's work for the container too. Two exceptions: the
 * pids hierarchy (the sentry's threads must not eat the container's task
 * limit) and, with disableOOMKiller, the memory one (a sentry frozen at the
 * container's limit could not end it). In the hierarchies of a placement
 * (cpu without cpuacct beside it, cpuset) the container stays in G with
 * the sentry. On cgroup v1, G is made in every hierarchy mounted, cpu and
 * cpuset too where nothing is limited there (a cpuset G gets its parent's
 * cpus and mems, as with runc), so that cgroup_update can write any limit
 * later. cgroup_destroy moves the sentry back and removes G and every
 * directory made on the way to it. -EINVAL for a path with "..", ":"
 * (systemd's form) or empty parts. */
int cgroup_set_parent(const char *path);
/* The cgroupsPath groups the sentry entered, NULL-terminated (for the state
 * file: gc removes them, empty, after a sentry that was killed). */
const char *const *cgroup_parent_dirs(const struct cgroup *cg);
/* Creates the sandbox's group "cordon-<id>" beneath the sentry's own group
 * in each hierarchy the backend uses, and applies the limits. When a
 * requested limit cannot be enforced on this host (controller missing,
 * not delegated, no write permission), nothing is left behind and it returns
 * -EOPNOTSUPP (or -errno) with *ret_error (malloc'd) naming the limit, the
 * path and why. */
int cgroup_create(enum cg_mode mode, const char *id, const struct cg_limits *lim, struct cgroup **ret,
                  char **ret_error);
/* `cordon-oci update`: new limits for a live sandbox's groups, from another
 * process, written as cgroup_create wrote them (the same writers, in the
 * same groups: the engine's cgroupsPath group where there is one, else the
 * sandbox's own). backend ("v1", "v2"), dirs and parents are what its state
 * file keeps (cgroup_backend, cgroup_dirs, cgroup_parent_dirs). Every limit
 * lim and o give is written; one that needs a hierarchy the sandbox has no
 * group in (v1, made without a limit there and without a cgroupsPath) is
 * refused, naming it, as is a value the kernel refuses. Makes and removes nothing. */
int cgroup_update(const char *backend, const char *const *dirs, const char *const *parents, const struct cg_limits *lim,
                  const struct cg_oci *o, char **ret_error);
/* Moves pid (and so everything it forks afterwards) into the group. Each
 * write to a cgroup.procs file takes the kernel's cgroup_threadgroup_rwsem
 * for writing, and where nothing else holds it that waits for an RCU grace
 * period (4-20 ms on a small VM): the fallback where cgroup_entry cannot be
 * used. */
int cgroup_attach(struct cgroup *cg, pid_t pid);

/* How a new process enters the group without that wait: it is cloned into
 * the cgroup v2 group (clone3 with CLONE_INTO_CGROUP, which takes the rwsem
 * for reading only), and moves itself into each cgroup v1 group by writing
 * "0" to that group's "tasks" file, which moves the calling thread alone and
 * so, on kernels with the "single thread migration" change (about
 * Linux 6.0; measured on 6.18), takes no global lock either. The files are opened by
 * the sentry (the kernel checks the opener's credentials), before the clone,
 * so the child inherits them. */
#define CG_ENTRY_MAX 7
struct cgroup_entry {
        int v2_fd;                      /* the v2 group's directory for CLONE_INTO_CGROUP, or -1 */
        size_t n_tasks;                 /* v1 groups */
        int tasks_fd[CG_ENTRY_MAX];     /* each one's "tasks", opened O_WRONLY */
        const char *path[CG_ENTRY_MAX]; /* its directory, for messages (owned by the cgroup) */
};
#define CGROUP_ENTRY_NULL ((struct cgroup_entry){.v2_fd = -1})
/* Opens them. Everything the group has is covered: the v2 group (if any) by
 * v2_fd, every other directory by a tasks fd. On failure *ret_path names
 * the group. */
int cgroup_entry_open(const struct cgroup *cg, struct cgroup_entry *ret, const char **ret_path);
/* Closes them (also in the child, once it has joined). Accepts
 * CGROUP_ENTRY_NULL and an entry already closed. */
void cgroup_entry_close(struct cgroup_entry *e);
/* In the new process, before it forks or runs anything it does not
 * control: moves the calling thread into each v1 group. The caller must be
 * single-threaded, so that the thread is the whole process. On failure
 * *ret_path names the group. */
int cgroup_entry_join(const struct cgroup_entry *e, const char **ret_path);
/* SIGKILLs every process in the group and waits (bounded, about 5 s) until
 * it is empty. v2: cgroup.kill where present; v1: freeze, kill, thaw. */
int cgroup_kill_all(struct cgroup *cg);
int cgroup_freeze(struct cgroup *cg, bool frozen);
int cgroup_stats(struct cgroup *cg, struct cg_stats *ret);
/* Only what says a limit was reached: oom_kills and pids_max_events, read as
 * cgroup_stats reads them; every other field -1. Two files where
 * cgroup_stats reads five to eight: the end of every run reads these. */
int cgroup_limit_events(struct cgroup *cg, struct cg_stats *ret);
/* "v2" or "v1" */
const char *cgroup_backend(const struct cgroup *cg);
/* The directories of the group, NULL-terminated (for the state file and gc). */
const char *const *cgroup_dirs(const struct cgroup *cg);
/* An O_RDONLY fd on the group's directory in the cgroup v2 hierarchy, where
 * BPF cgroup programs attach (the v2 backend's own group; with the v1
 * backend, a group without limits made in the v2 hierarchy beside the v1
 * ones). -EOPNOTSUPP with *ret_why (static or owned by cg) when the sandbox
 * has none: no cgroup2 mount, or no permission to create a group there. */
int cgroup_open_v2(const struct cgroup *cg, const char **ret_why);
/* For `cordon check`: whether a sandbox could get a group in the cgroup v2
 * hierarchy (one is mounted that shows this process's group, and that group
 * is writable). 0, or -errno with *ret_why (static) saying why not. */
int cgroup_v2_probe(const char **ret_why);
/* The path of that directory, or NULL. */
const char *cgroup_v2_path(const struct cgroup *cg);
/* Kills what is left, removes the directories, frees. Accepts NULL. */
int cgroup_destroy(struct cgroup *cg);

/* A run's own group "run-<num>" beneath the sandbox's group in the cgroup v2
 * hierarchy: created, with an O_WRONLY fd on its cgroup.procs in
 * *ret_procs_fd for the run's first process to move itself in (write "0").
 * -EOPNOTSUPP when the sandbox has no v2 group. */
int cgroup_run_create(struct cgroup *cg, int num, int *ret_procs_fd);
/* SIGKILLs every process in the run's group, whatever session or process
 * group it made (cgroup.kill; on kernels without it, frozen and killed pid
 * by pid, bounded); with wait, waits (bounded, about 5 s) until the group is
 * empty. 0 if the group is gone. */
int cgroup_run_kill(struct cgroup *cg, int num, bool wait);
/* Removes the run's group if it is empty (a run may leave processes behind:
 * then it stays, and goes with the sandbox's group). */
int cgroup_run_remove(struct cgroup *cg, int num);

/* For `cordon gc`: kills every process in a leftover group directory (of
 * either version) and removes it. -ENOENT if already gone. */
int cgroup_remove_dir(const char *dir);
/* Lists leftover "cordon-*" group directories beneath the sentry's own
 * groups, in all hierarchies; calls fn for each. */
int cgroup_foreach_leftover(int (*fn)(const char *dir, const char *id, void *userdata), void *userdata);
