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

/* "0 HOST 1" and, for an OCI identity, one line per other container id
 * (oci_host_id: never host root). */
static void id_map_text(char *buf, size_t size, uint32_t root_host, uint32_t id, const uint32_t *more, size_t n_more)
{
        size_t len = (size_t)snprintf(buf, size, "0 %u 1\n", root_host);
        uint32_t done[1 + OCI_MAX_IDS];
        size_t n_done = 0;
        for (size_t i = 0; i <= n_more && len < size; i++) {
                uint32_t c = i == 0 ? id : more[i - 1];
                bool dup = c == 0;
                for (size_t k = 0; k < n_done; k++)
                        dup = dup || done[k] == c;
                if (dup)
                        continue;
                done[n_done++] = c;
                len += (size_t)snprintf(buf + len, size - len, "%u %u 1\n", c, oci_host_id(c, root_host));
        }
}

int write_id_maps(pid_t pid, uid_t uid, gid_t gid, bool deny_setgroups, const struct oci_sandbox *oci)
{
        char path[64], map[4096];
        int r;
        if (deny_setgroups) {
                snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
                if ((r = write_file(path, "deny")) < 0)
                        return r;
        }
        bool ids = oci && oci->set_user;
        snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
        id_map_text(map, sizeof(map), uid, ids ? oci->uid : 0, NULL, 0);
        if ((r = write_file(path, map)) < 0)
                return r;
        snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
        id_map_text(map, sizeof(map), gid, ids ? oci->gid : 0, ids ? oci->groups : NULL, ids ? oci->n_groups : 0);
        return write_file(path, map);
}

/* Unprivileged: the sentry first enters a user namespace of its own, in
 * which it holds the capabilities it needs over the sandbox (chroot for its
 * workers, ptrace-level access to the sandbox's memory); on the host it
 * stays the invoking user. */
int enter_own_userns(uid_t uid, gid_t gid)
{
        /* unshare(CLONE_NEWUSER) needs a single-threaded caller (EINVAL
         * otherwise). The floor's preload thread has been joined, but
         * pthread_join returns when the kernel clears the thread's tid,
         * early in its exit, and the thread leaves the group a moment
         * later: seen as 1 run in 20 failing under load (fs-semantics.sh
         * unprivileged_proc_agent_every_run). So EINVAL is retried, for at
         * most 100 ms; an EINVAL with another cause still fails then. */
        int tries = 2000;
        while (unshare(CLONE_NEWUSER) < 0) {
                if (errno != EINVAL || --tries == 0)
                        return negative_errno();
                (void)clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){0, 50 * 1000}, NULL);
        }
        char map[64];
        int r;
        if ((r = write_file("/proc/self/setgroups", "deny")) < 0)
                return r;
        snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
        if ((r = write_file("/proc/self/uid_map", map)) < 0)
                return r;
        snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
        return write_file("/proc/self/gid_map", map);
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
int template_lower(struct sandbox_plan *plan, pid_t pid)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
        _cleanup_close_ int userns = open(path, O_RDONLY | O_CLOEXEC);
        if (userns < 0)
                return negative_errno();
        return fs_template_idmapped(plan->view.template_fd, userns, &plan->view.template_tree_fd);
}
