/* The namespaces an OCI container joins instead of creating (struct
 * oci_sandbox's join[]: a CNI pod network, a podman network, a pod's ipc,
 * uts and shared pid namespace): opened again by the sentry, checked to be still the namespace
 * the OCI front checked, and entered by the sentry's main thread for the
 * clone of init alone, which inherits them; the thread then returns to its
 * own. */
#include "config.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>

#include "sentry/sentry-internal.h"

static const struct {
        int type;
        const char *name;
} join_kinds[OCI_JOIN_KINDS] = {
        [OCI_JOIN_NET] = {CLONE_NEWNET, "net"},
        [OCI_JOIN_IPC] = {CLONE_NEWIPC, "ipc"},
        [OCI_JOIN_UTS] = {CLONE_NEWUTS, "uts"},
        /* for the clone's children only (pid_for_children): init is born
         * into the pod's process namespace, not pid 1 of one of its own */
        [OCI_JOIN_PID] = {CLONE_NEWPID, "pid"},
};

void join_leave(int saved[OCI_JOIN_KINDS])
{
        for (size_t k = 0; k < OCI_JOIN_KINDS; k++) {
                if (saved[k] < 0)
                        continue;
                /* back to the sentry's own (the host's): what it makes from
                 * here on, but the gate's upstream sockets, lives there */
                if (setns(saved[k], join_kinds[k].type) < 0)
                        abort(); /* a sentry left in a sandbox's namespace must not go on */
                close(saved[k]);
                saved[k] = -1;
        }
}

int join_kind_of_sysctl(const char *key)
{
        if (startswith(key, "net."))
                return OCI_JOIN_NET;
        if (streq(key, "kernel.hostname") || streq(key, "kernel.domainname"))
                return OCI_JOIN_UTS;
        return OCI_JOIN_IPC; /* the parser let only namespaced keys through */
}

static int write_sysctl(const char *key, const char *value)
{
        char path[300];
        if (snprintf(path, sizeof(path), "/proc/sys/%s", key) >= (int)sizeof(path))
                return -ENAMETOOLONG;
        for (char *p = path + strlen("/proc/sys/"); *p; p++)
                if (*p == '.')
                        *p = '/';
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        return write_all(fd, value, strlen(value));
}

/* In the joined namespaces, by the sentry (host root, which the engine's
 * namespaces' owner is; init holds no capability there): linux.sysctl's
 * keys of those namespaces, as runc writes them, and, for a joined network
 * namespace, ports below 1024 opened to its users. The sandbox's root has
 * no capability in the user namespace that owns a namespace an engine made,
 * so without it a server could not bind port 80 as it does under runc; the
 * namespace is the container's (or its pod's) alone, the sysctl is that
 * namespace's (looked up in this thread's, after the setns), and docker does
 * the same for its containers. A key the kernel refuses fails the start. */
static int joined_sysctls(const struct oci_sandbox *oci, const int saved[OCI_JOIN_KINDS], char *why, size_t size)
{
        if (saved[OCI_JOIN_NET] >= 0)
                (void)write_sysctl("net.ipv4.ip_unprivileged_port_start", "0");
        for (size_t i = 0; i < oci->n_sysctls; i++) {
                const struct oci_sysctl *c = &oci->sysctls[i];
                if (saved[join_kind_of_sysctl(c->key)] < 0)
                        continue;
                int r = write_sysctl(c->key, c->value);
                if (r < 0) {
                        snprintf(why, size, "linux.sysctl: %s: %s", c->key, strerror(-r));
                        return r;
                }
        }
        return 0;
}

/* j's path opened again: the namespace the front checked, not whatever
 * the path names now (a pid reused, a file replaced). The fd, or -errno
 * (-ESTALE: another namespace). */
static int join_open(const struct oci_join *j)
{
        _cleanup_close_ int fd = open(j->path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0)
                return negative_errno();
        if ((uint64_t)st.st_dev != j->dev || (uint64_t)st.st_ino != j->ino)
                return -ESTALE;
        return TAKE_FD(fd);
}

static const char *join_strerror(int r)
{
        return r == -ESTALE ? "it is no longer the namespace that was checked" : strerror(-r);
}

int join_enter(const struct oci_sandbox *oci, unsigned long *flags, int saved[OCI_JOIN_KINDS], char *why, size_t size)
{
        for (size_t k = 0; k < OCI_JOIN_KINDS; k++)
                saved[k] = -1;
        if (!oci)
                return 0;
        for (size_t k = 0; k < OCI_JOIN_KINDS; k++) {
                const struct oci_join *j = &oci->join[k];
                if (!j->path)
                        continue;
                char self[64];
                snprintf(self, sizeof(self), "/proc/thread-self/ns/%s", join_kinds[k].name);
                _cleanup_close_ int fd = join_open(j);
                int r = fd < 0 ? fd : 0;
                if (r == 0 && (saved[k] = open(self, O_RDONLY | O_CLOEXEC)) < 0)
                        r = negative_errno();
                if (r == 0 && setns(fd, join_kinds[k].type) < 0) {
                        r = negative_errno();
                        close(saved[k]);
                        saved[k] = -1;
                }
                if (r < 0) {
                        snprintf(why, size, "cannot join the %s namespace %s: %s", join_kinds[k].name, j->path,
                                 join_strerror(r));
                        join_leave(saved);
                        return r;
                }
                *flags &= ~(unsigned long)join_kinds[k].type;
        }
        int r = joined_sysctls(oci, saved, why, size);
        if (r < 0)
                join_leave(saved);
        return r;
}

/* A pod's shared pid namespace is owned by the pod sandbox container's
 * user namespace, in which init (in its own) holds no capability, so init
 * cannot mount a procfs of it. The sentry (host root, in the host's mount
 * namespace, where the kernel's check that a procfs reveals nothing more
 * than one already visible does not apply) makes one for init to mount in
 * the view, where it is masked as init's own would be. It shows the pod's
 * processes only, which the pod's containers share by the pod's choice. */
int join_proc_tree(struct sandbox_plan *plan, char *why, size_t size)
{
        const struct oci_join *j = plan->oci ? &plan->oci->join[OCI_JOIN_PID] : NULL;
        if (!j || !j->path)
                return 0;
        _cleanup_close_ int fd = join_open(j);
        int r = fd < 0 ? fd : fs_proc_tree(fd);
        if (r < 0) {
                snprintf(why, size, "cannot make a procfs of the pod's pid namespace %s: %s", j->path,
                         join_strerror(r));
                return r;
        }
        plan->view.proc_tree_fd = r;
        plan->view.pid_shared = true;
        return 0;
}

/* A sandbox in a network namespace an engine prepared needs the floor: the
 * emulation lets a connect or send to loopback (or with no address) run
 * natively, which is safe in cordon's own namespace (nothing but loopback
 * there) but not where routes lead out, as a racing thread may rewrite the
 * address the kernel then reads. The floor refuses such a call in the
 * kernel; without it the start is refused, not weakened. */
int join_require_floor(const struct sandbox_state *st, unsigned debug_off)
{
        bool joined = st->plan->oci && st->plan->oci->net_prepared;
        if (!joined || st->floor_on || (debug_off & DEBUG_OFF_EGRESS_FLOOR))
                return 0;
        fprintf(stderr,
                "cordon: the container joins a network namespace with routes beyond loopback, which needs the "
                "kernel egress floor, and it is absent (%s); refusing to start\n",
                st->floor_why);
        return -EOPNOTSUPP;
}
