/* The sandbox's user namespace from the host's side: the uid and gid maps
 * the sentry writes into init, the user namespace an unprivileged sentry
 * enters first, init's clone (into its cgroup where the kernel allows), a
 * container's oom_score_adj, and the template's idmapped lower layer. */
#include "config.h"

#include <linux/sched.h>
#include <sys/mount.h>
#include <sys/syscall.h>

#include "sentry/sentry-internal.h"

static int write_file(const char *path, const char *text)
{
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return write_all(fd, text, strlen(text));
}

/* process.oomScoreAdj, written by the sentry into init before init forks
 * anything (every process of the container inherits it), as runc does
 * for the container's process. */
int set_oom_score_adj(pid_t pid, int value)
{
        char path[64], v[16];
        snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pid);
        snprintf(v, sizeof(v), "%d", value);
        return write_file(path, v);
}

/* The sandbox's map and the command's identity in it. Root: the range
 * (inside 0..65535); the command is root unless --user, the policy's user
 * or the OCI process.user says otherwise. Unprivileged: one id, the
 * caller's own at the same number (as bubblewrap keeps it), or the id
 * --user / process.user chose (--user 0: the caller is root inside). */
int sandbox_ids(const struct sandbox_plan *plan, const struct id_range *range, uid_t host_uid, gid_t host_gid,
                struct fs_ids *ret, uint32_t *ret_uid, uint32_t *ret_gid)
{
        const struct oci_sandbox *oci = plan->oci;
        bool chosen = plan->user_set || (oci && oci->set_user);
        uint32_t uid = plan->user_set ? plan->user_uid : oci && oci->set_user ? oci->uid : 0;
        uint32_t gid = plan->user_set ? plan->user_gid : oci && oci->set_user ? oci->gid : 0;
        if (range && range->count > 0) {
                if (uid >= range->count || gid >= range->count)
                        return -ERANGE;
                for (size_t i = 0; oci && oci->set_user && i < oci->n_groups; i++)
                        if (oci->groups[i] >= range->count)
                                return -ERANGE;
                *ret = (struct fs_ids){0, range->uid, 0, range->gid, range->count};
        } else {
                if (!chosen && !oci) {
                        uid = host_uid;
                        gid = host_gid;
                }
                *ret = (struct fs_ids){uid, host_uid, gid, host_gid, 1};
        }
        *ret_uid = uid;
        *ret_gid = gid;
        return 0;
}

/* Unprivileged, once the sentry's namespace is mapped: with the caller's
 * ranges the sandbox maps 0-65535 to the same numbers there (the caller
 * at its position, the command's ids); else its one id, the caller's ids
 * in the sentry's namespace being getuid() and getgid() there (one of
 * them a position when a tool mapped it and the other failed). -ERANGE:
 * a group of process.user outside the range (*ret_bad). */
int subid_ids(struct sandbox_plan *plan, const struct subid_range *s, uint32_t *ret_bad)
{
        const struct oci_sandbox *oci = plan->oci;
        if (!s->used) {
                plan->ids.uid_host = getuid();
                plan->ids.gid_host = getgid();
                return 0;
        }
        for (size_t i = 0; oci && oci->set_user && i < oci->n_groups; i++)
                if (oci->groups[i] >= SUBID_COUNT) {
                        *ret_bad = oci->groups[i];
                        return -ERANGE;
                }
        plan->ids = (struct fs_ids){0, 0, 0, 0, SUBID_COUNT};
        return 0;
}

/* The map INSIDE HOST COUNT; with the caller's ranges (split: its
 * position), cut at the caller: each line must lie within one line of the
 * sentry's namespace's map, which has the caller on a line of its own. */
static int write_map(pid_t pid, const char *file, uint32_t inside, uint32_t host, uint32_t count, const uint32_t *split)
{
        char path[64], map[128];
        snprintf(path, sizeof(path), "/proc/%d/%s", pid, file);
        if (!split || *split - inside >= count) {
                snprintf(map, sizeof(map), "%u %u %u\n", inside, host, count);
        } else {
                uint32_t at = *split - inside, n = 0;
                if (at > 0)
                        n += snprintf(map, sizeof(map), "%u %u %u\n", inside, host, at);
                n += snprintf(map + n, sizeof(map) - n, "%u %u 1\n", inside + at, host + at);
                if (at + 1 < count)
                        snprintf(map + n, sizeof(map) - n, "%u %u %u\n", inside + at + 1, host + at + 1,
                                 count - at - 1);
        }
        return write_file(path, map);
}

int write_id_maps(pid_t pid, const struct fs_ids *ids, bool deny_setgroups, const struct subid_range *sub)
{
        char path[64];
        int r;
        if (deny_setgroups) {
                snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
                if ((r = write_file(path, "deny")) < 0)
                        return r;
        }
        bool split = sub && sub->used;
        if ((r = write_map(pid, "uid_map", ids->uid_inside, ids->uid_host, ids->count, split ? &sub->uid_pos : NULL)) <
            0)
                return r;
        return write_map(pid, "gid_map", ids->gid_inside, ids->gid_host, ids->count, split ? &sub->gid_pos : NULL);
}

/* Unprivileged: the sentry first enters a user namespace of its own, in
 * which it holds the capabilities it needs over the sandbox (chroot for its
 * workers, ptrace-level access to the sandbox's memory); on the host it
 * stays the invoking user. With the caller's /etc/subuid and /etc/subgid
 * ranges, newuidmap and newgidmap map it (subid.c): 0-65535 to the ranges
 * but uid_pos:gid_pos to the caller, so that the sandbox, nested in it,
 * maps 0-65535 to the same numbers and the workers' translation stays one
 * offset (zero). Else, or for what a tool failed to write, the sentry maps
 * the caller's one id to itself, as it may without privilege. */
int enter_own_userns(uid_t uid, gid_t gid, uint32_t uid_pos, uint32_t gid_pos, struct subid_range *s)
{
        struct subid_helper h;
        subid_prepare(uid, gid, uid_pos, gid_pos, s, &h);
        int r;
        /* unshare(CLONE_NEWUSER) needs a single-threaded caller (EINVAL
         * otherwise). The floor's preload thread has been joined, but
         * pthread_join returns when the kernel clears the thread's tid,
         * early in its exit, and the thread leaves the group a moment
         * later: seen as 1 run in 20 failing under load (fs-semantics.sh
         * unprivileged_proc_agent_every_run). So EINVAL is retried, for at
         * most 100 ms; an EINVAL with another cause still fails then. */
        int tries = 2000;
        while (unshare(CLONE_NEWUSER) < 0) {
                if (errno != EINVAL || --tries == 0) {
                        r = negative_errno();
                        (void)subid_finish(&h, false, s);
                        return r;
                }
                (void)clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){0, 50 * 1000}, NULL);
        }
        int written = subid_finish(&h, true, s);
        if (written == (SUBID_UID | SUBID_GID))
                return 0;
        char map[64];
        if (!(written & SUBID_GID)) {
                if ((r = write_file("/proc/self/setgroups", "deny")) < 0)
                        return r;
                snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
                if ((r = write_file("/proc/self/gid_map", map)) < 0)
                        return r;
        }
        if (written & SUBID_UID)
                return 0;
        snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
        return write_file("/proc/self/uid_map", map);
}

/* clone3 into the cgroup v2 group cgroup_fd (-1: none); where the kernel
 * or a seccomp filter around us refuses clone3 or CLONE_INTO_CGROUP (ENOSYS
 * before 5.3 and inside a sandbox; E2BIG or EINVAL before 5.7), clone as
 * before. *ret_into: the child was born in the group (and, on failure, that
 * clone3 into it was what failed); if not, the caller attaches it. */
pid_t clone_init(unsigned long flags, int cgroup_fd, int *ret_pidfd, bool *ret_into)
{
        *ret_into = false;
        if (cgroup_fd >= 0 && !notify_feature_absent("clone_into_cgroup")) {
                struct clone_args ca = {
                        .flags = flags | CLONE_INTO_CGROUP,
                        .pidfd = (uint64_t)(uintptr_t)ret_pidfd,
                        .exit_signal = SIGCHLD,
                        .cgroup = (uint64_t)cgroup_fd,
                };
                *ret_into = true;
                pid_t pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
                if (pid >= 0 || (errno != ENOSYS && errno != E2BIG && errno != EINVAL))
                        return pid;
                *ret_into = false;
        }
        return (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, ret_pidfd, NULL, NULL);
}

/* As host root: the template's lower layer, idmapped through the sandbox's
 * user namespace (its maps are written by now) so that host root's files
 * are the sandbox root's and overlayfs can copy them up. Made from the fd
 * the digest was computed on. */
int template_lower(struct sandbox_plan *plan, pid_t pid, char *err)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
        _cleanup_close_ int userns = open(path, O_RDONLY | O_CLOEXEC);
        if (userns < 0)
                return negative_errno();
        return fs_template_idmapped(plan->view.template_fd, userns, plan->view.root_write_through ? &plan->ids : NULL,
                                    err, &plan->view.template_tree_fd);
}
