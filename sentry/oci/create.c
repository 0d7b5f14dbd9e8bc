/* `create` and `run`: config.json made into what the container's sandbox
 * is (prepare: everything cordon cannot honour refused by name), its
 * sentry started, detached (for run, our child), the container's process
 * sent to it and held before its exec until `start`, the container's
 * state saved and the prestart and createRuntime hooks run. `run` then
 * starts, waits for and deletes the container through lifecycle.c. */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include "common/file.h"
#include "common/util.h"
#include "sentry/cgroup/cgroup.h"
#include "sentry/oci/oci.h"
#include "sentry/oci/runtime-internal.h"
#include "sentry/sandbox/sandbox.h"
#include "sentry/sentry.h"

static int mkdir_p(const char *path, mode_t mode)
{
        char buf[PATH_MAX];
        if (strlen(path) >= sizeof(buf))
                return -ENAMETOOLONG;
        strcpy(buf, path);
        for (char *p = buf + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                        return negative_errno();
                *p = '/';
        }
        if (mkdir(buf, mode) < 0 && errno != EEXIST)
                return negative_errno();
        return 0;
}

/* The view provides these itself (fs/view.c): the OCI mounts of the same
 * kind there are satisfied by it. A config's tmpfs on /tmp, /var/tmp, /run
 * or /root (podman's --tmpfs and --read-only) is made as configured, its
 * size and options with it: a container's root has no private writable
 * places of cordon's (fs_view_spec.root_readonly). */
static bool view_provides(const char *dest, const char *type)
{
        static const struct {
                const char *dest, *type;
        } provided[] = {
                {"/proc", "proc"},
        };
        for (size_t i = 0; i < ELEMENTSOF(provided); i++)
                if (streq(dest, provided[i].dest) && (!provided[i].type || streq(type, provided[i].type)))
                        return true;
        return false;
}

static bool lsm_enabled(const char *name)
{
        _cleanup_free_ char *lsm = NULL;
        if (read_file_text("/sys/kernel/security/lsm", &lsm) < 0)
                return streq(name, "apparmor") && access("/sys/module/apparmor/parameters/enabled", F_OK) == 0;
        return strstr(lsm, name) != NULL;
}

struct create_args {
        const char *id;
        const char *bundle;
        const char *pid_file;
        const char *console_socket;
        int preserve_fds;
        bool foreground; /* `run`: the sentry stays our child */
};

struct oci_prepared {
        struct oci_spec *spec;
        struct policy *policy;
        struct oci_sandbox sb;
        char *policy_text;
        json_t *pod_record; /* what the state keeps of pod.c's choices */
};

static void prepared_done(struct oci_prepared *p)
{
        oci_spec_free(p->spec);
        if (p->policy)
                policy_free(p->policy);
        free(p->sb.rlimits);
        free(p->sb.mounts);
        free(p->sb.mount_points);
        free(p->sb.engine_binds);
        free(p->sb.dev_mounts);
        free(p->sb.order);
        free(p->sb.seccomp.filter);
        free(p->policy_text);
        oci_pod_done(&p->sb);
        json_decref(p->pod_record);
        memset(p, 0, sizeof(*p));
}

/* The kernel's last capability (/proc/sys/kernel/cap_last_cap), or 63 when
 * it cannot be read (the kernel then refuses what it does not know). */
static int kernel_last_cap(void)
{
        _cleanup_free_ char *text = NULL;
        char *end;
        long v;
        if (read_file_text("/proc/sys/kernel/cap_last_cap", &text) < 0)
                return 63;
        errno = 0;
        v = strtol(text, &end, 10);
        if (errno || end == text || (*end != '\0' && *end != '\n') || v < 0 || v > 63)
                return 63;
        return (int)v;
}

/* process.capabilities into sb: each set as given, within the container's
 * user namespace (the identity issue's rule). Names the parser did not know
 * are in no set (c->ignored says them, as warnings), and so are those this
 * kernel does not know: neither can be granted, which the runtime spec
 * (1.1) says to log, not to fail on, as runc does. A capability on cordon's
 * refused list fails the create, naming the set and the capability, but
 * for NET_RAW, which containerd's and Docker's default sets hold: it is
 * held as runc holds it, because inside a user namespace it gives nothing
 * the sandbox could use to go round a layer. What it guards is raw and
 * packet sockets, which the filter refuses whatever a process holds
 * (sentry/syscalls.c: SOCK_RAW, SOCK_PACKET, every family from AF_PACKET
 * up), and SO_MARK, IP_TRANSPARENT and SO_BINDTODEVICE's rebinding, which
 * the kernel grants only over a network namespace the container's user
 * namespace owns: its own, with loopback alone. An engine's network (a
 * podman bridge, a pod's CNI namespace) and the gate's upstream sockets
 * belong to the host's user namespace, where the container holds nothing.
 * tests/escape/oci.sh tries each with NET_RAW held. 0 or -errno (said). */
static int prepare_caps(const struct oci_caps *c, struct oci_sandbox *sb)
{
        static const char *const names[] = {"bounding", "effective", "permitted", "inheritable", "ambient"};
        const uint64_t *in[] = {&c->bounding, &c->effective, &c->permitted, &c->inheritable, &c->ambient};
        uint64_t *out[] = {&sb->cap_bounding, &sb->cap_effective, &sb->cap_permitted, &sb->cap_inheritable,
                           &sb->cap_ambient};
        int last = kernel_last_cap();
        for (char **w = c->ignored; w && *w; w++)
                oci_warn("%s", *w);
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                *out[i] = 0;
                for (int cap = 0; cap < 64; cap++) {
                        if (!(*in[i] & (UINT64_C(1) << cap)))
                                continue;
                        const char *name = policy_cap_name(cap), *refused = NULL;
                        int n;
                        if (cap > last) {
                                oci_warn("process.capabilities.%s: CAP_%s ignored: this kernel does not know it",
                                         names[i], name ? name : "?");
                                continue;
                        }
                        if (!name || policy_cap_parse(name, &n, &refused) < 0) {
                                oci_error("process.capabilities.%s: capability %d is not one cordon knows", names[i],
                                          cap);
                                return -EINVAL;
                        }
                        if (refused && cap != CAP_NET_RAW) {
                                oci_error("process.capabilities.%s: capability CAP_%s is refused: it gives %s",
                                          names[i], name, refused);
                                return -EPERM;
                        }
                        *out[i] |= UINT64_C(1) << cap;
                }
        }
        return 0;
}

/* linux.resources beyond the policy's limits (which policy.c folded into
 * the policy), handed to the cgroup room for the sentry's cgroup_create:
 * the sentry is forked from this process and keeps them. The cpuset lists
 * are checked against the host first, so that a bad one fails create
 * before anything exists. What cgroup v2 has no file for is said and left,
 * as runc leaves it. */
static int prepare_resources(const struct oci_resources *res)
{
        _cleanup_free_ char *err = NULL;
        if (cgroup_cpuset_check(res->cpus, res->mems, &err) < 0) {
                oci_error("%s", err);
                return -EINVAL;
        }
        struct cg_oci o;
        oci_resources_cg(res, &o);
        cgroup_set_oci(&o);
        return 0;
}

/* config.json → what the sandbox is made of; refuses, by name, what cordon
 * cannot honour. 0 or -errno (said). */
/* Whether the bundle's config is podman's --privileged (its annotation),
 * read apart from the parser, which stops at the config's first refused
 * field (a host device, a refused capability) without saying why it is
 * there. */
static bool podman_privileged(const char *bundle)
{
        _cleanup_free_ char *path = xasprintf("%s/config.json", bundle);
        json_error_t jerr;
        json_t *c = json_load_file(path, 0, &jerr);
        const char *v = json_string_value(
                json_object_get(json_object_get(c, "annotations"), "io.podman.annotations.privileged"));
        bool privileged = v && streq(v, "TRUE");
        json_decref(c);
        return privileged;
}

static int prepare(const char *bundle, struct oci_prepared *p)
{
        _cleanup_free_ char *err = NULL;
        int r = oci_spec_load(bundle, &p->spec, &err);
        if (r < 0) {
                if (podman_privileged(bundle))
                        oci_error("%s (this is podman's --privileged, which asks for the host's devices and every "
                                  "capability: not supported by cordon, which gives a container neither; run it "
                                  "without --privileged, with --cap-add for what it needs)",
                                  err ? err : strerror(-r));
                else
                        oci_error("%s", err ? err : strerror(-r));
                return r;
        }
        struct oci_spec *s = p->spec;
        if (!s->has_process) {
                oci_error("%s/config.json: process: a container needs a process to run", bundle);
                return -EINVAL;
        }
        /* namespaces given by path: a prepared network, a pod's (pod.c) */
        r = oci_pod_prepare(s, &p->sb, &p->pod_record);
        if (r < 0)
                return r;
        if (s->process.apparmor_profile && lsm_enabled("apparmor")) {
                oci_error("process.apparmorProfile %s: cordon cannot apply AppArmor profiles; run without one "
                          "(cordon's own layers confine the container)",
                          s->process.apparmor_profile);
                return -EOPNOTSUPP;
        }
        if ((s->process.selinux_label || s->mount_label) && lsm_enabled("selinux")) {
                oci_error("process.selinuxLabel / linux.mountLabel: cordon cannot apply SELinux labels");
                return -EOPNOTSUPP;
        }
        /* createContainer: runc runs it in the container's namespaces
         * before pivot_root, a host binary as the container's root with
         * every capability there and no seccomp filter. cordon's container
         * has its view, filter and Landlock from its first process on, and
         * running a host binary in its mount namespace would load the
         * image's own ELF interpreter and libraries unconfined. */
        if (s->n_hooks[OCI_HOOK_CREATE_CONTAINER]) {
                oci_error("hooks.createContainer: not supported: it runs a host binary in the container's namespaces "
                          "before its root is entered, unconfined (runc runs it before pivot_root, as the "
                          "container's root with every capability and no seccomp filter), while cordon confines "
                          "every process of the container from its first; use a createRuntime or prestart hook "
                          "(the runtime's namespaces) or a startContainer hook (inside the container)");
                return -EOPNOTSUPP;
        }

        r = oci_spec_policy(s, &p->policy, &err);
        if (r < 0) {
                oci_error("%s", err ? err : strerror(-r));
                return r;
        }
        const char *pol = oci_annotation(s, OCI_POLICY_ANNOTATION);
        p->policy_text = xstrdup(pol && pol[0] == '{' ? pol : "{}");

        /* A namespace the config does not list is the host's, for runc
         * (podman's --network host, --pid host, a hostNetwork or hostPID
         * pod). cordon never shares the host's, and a container given its
         * own instead fails later and obscurely (a service on the host's
         * localhost refuses it; the host's processes are not there): the
         * create is refused, naming the field, as for the other refused
         * parts of a config. Nothing is made before prepare. */
        static const struct {
                int type;
                const char *name, *asks;
        } host[] = {{CLONE_NEWNET, "network", "the host's network (podman --network host, a hostNetwork pod)"},
                    {CLONE_NEWPID, "pid", "the host's processes (podman --pid host, a hostPID pod)"},
                    {CLONE_NEWIPC, "ipc", "the host's IPC (podman --ipc host, a hostIPC pod)"},
                    {CLONE_NEWUTS, "uts", "the host's hostname (podman --uts host)"},
                    {CLONE_NEWNS, "mount", "the host's mounts"}};
        for (size_t i = 0; i < ELEMENTSOF(host); i++) {
                bool listed = false;
                for (size_t j = 0; j < s->n_namespaces; j++)
                        listed = listed || s->namespaces[j].type == host[i].type;
                if (!listed) {
                        oci_error("%s/config.json: linux.namespaces: no \"%s\" namespace, which asks for %s: not "
                                  "supported by cordon, which never shares a namespace of the host's (each container "
                                  "has its own, or its pod's)",
                                  bundle, host[i].name, host[i].asks);
                        return -EOPNOTSUPP;
                }
        }

        struct oci_sandbox *sb = &p->sb;
        sb->hostname = s->hostname;
        sb->cwd = s->process.cwd;
        if (s->cgroups_path && s->cgroups_path[0]) {
                /* runc's cgroupfs form; systemd's "slice:prefix:name" is
                 * --systemd-cgroup's, refused in do_create */
                if (strchr(s->cgroups_path, ':') || strstr(s->cgroups_path, "..") || strstr(s->cgroups_path, "//")) {
                        oci_error("linux.cgroupsPath %s: expected a cgroupfs path (/parent/name), without \"..\" "
                                  "(the systemd form slice:prefix:name needs --systemd-cgroup, which cordon "
                                  "refuses)",
                                  s->cgroups_path);
                        return -EINVAL;
                }
                sb->cgroups_path = s->cgroups_path;
        }
        r = prepare_resources(&s->resources);
        if (r < 0)
                return r;
        sb->root_readonly = s->root_readonly;
        /* An engine's own id mapping of an overlay root (podman --userns,
         * --uidmap): its layers are mapped (or chowned) for that range,
         * and podman unmounts the idmapped lower layers once its overlay
         * is made, so cordon, which writes the root through as runc does
         * without a user namespace (the container's root is 0 on disk),
         * would find them gone or owned by ids it does not map. Refused
         * plainly rather than failing later on a missing layer; a plain
         * directory root keeps cordon's own range as before. */
        bool mapped = false;
        for (size_t i = 0; i < s->n_uid_mappings; i++)
                mapped = mapped || s->uid_mappings[i].host_id != s->uid_mappings[i].container_id;
        struct statfs rootfs;
        if (mapped && statfs(s->root_path, &rootfs) == 0 && rootfs.f_type == OVERLAYFS_SUPER_MAGIC) {
                oci_error("%s/config.json: linux.uidMappings: container id %u is host id %u: an engine's own id "
                          "mapping of its overlay root (podman --userns=auto, --uidmap) is not supported by cordon, "
                          "which runs every container in its own range of host ids and writes its root as runc "
                          "without a user namespace does: run it without --userns or --uidmap",
                          bundle, s->uid_mappings[0].container_id, s->uid_mappings[0].host_id);
                return -EOPNOTSUPP;
        }
        const struct oci_user *u = &s->process.user;
        if (u->uid || u->gid || u->n_additional_gids) {
                if (geteuid() != 0) {
                        oci_error("process.user %u:%u: without root, cordon can map only the container's root", u->uid,
                                  u->gid);
                        return -EOPNOTSUPP;
                }
                if (u->uid >= 0x7fffffffu || u->gid >= 0x7fffffffu || u->n_additional_gids > OCI_MAX_IDS) {
                        oci_error("process.user: uid and gid must be below 2147483647, with at most %d "
                                  "additionalGids",
                                  OCI_MAX_IDS);
                        return -EINVAL;
                }
                sb->set_user = true;
                sb->runs_switch = oci_runs_switch(&s->process);
                sb->uid = u->uid;
                sb->gid = u->gid;
                for (size_t i = 0; i < u->n_additional_gids; i++) {
                        if (u->additional_gids[i] >= 0x7fffffffu) {
                                oci_error("process.user.additionalGids[%zu]: must be below 2147483647", i);
                                return -EINVAL;
                        }
                        sb->groups[sb->n_groups++] = u->additional_gids[i];
                }
        }
        r = prepare_caps(&s->process.caps, sb);
        if (r < 0)
                return r;
        sb->rlimits = xcalloc(s->process.n_rlimits + 1, sizeof(struct oci_limit));
        for (size_t i = 0; i < s->process.n_rlimits; i++) {
                if (s->process.rlimits[i].resource == RLIMIT_CORE)
                        oci_warn("process.rlimits[%zu]: RLIMIT_CORE ignored: a container's core limit is one byte, "
                                 "which dumps nowhere (at 0 a host core_pattern pipe would still take the dump)",
                                 i);
                sb->rlimits[sb->n_rlimits++] = (struct oci_limit){
                        s->process.rlimits[i].resource, s->process.rlimits[i].soft, s->process.rlimits[i].hard};
        }
        if (s->seccomp) {
                r = oci_seccomp_compile(s->seccomp, &sb->seccomp, &err);
                if (r < 0) {
                        oci_error("linux.seccomp: %s", err ? err : strerror(-r));
                        return r;
                }
                sb->seccomp_flags = s->seccomp->flags;
        }
        sb->sysctls = s->sysctls;
        sb->n_sysctls = s->n_sysctls;
        sb->has_umask = s->process.user.has_umask;
        sb->umask = s->process.user.umask;
        sb->has_oom_score_adj = s->process.has_oom_score_adj;
        sb->oom_score_adj = s->process.oom_score_adj;
        sb->mounts = xcalloc(s->n_mounts + 1, sizeof(struct oci_extra_mount));
        sb->mount_points = xcalloc(s->n_mounts + 1, sizeof(char *));
        sb->engine_binds = xcalloc(s->n_mounts + 1, sizeof(char *));
        sb->dev_mounts = xcalloc(s->n_mounts + 1, sizeof(struct fs_dev_mount));
        sb->order = xcalloc(s->n_mounts + 1, sizeof(struct fs_mount_order));
        sb->rootfs_propagation = s->rootfs_propagation;
        for (size_t i = 0; i < s->n_mounts; i++) {
                const struct oci_mount *m = &s->mounts[i];
                const char *d = m->destination;
                bool bind = streq(m->type, "bind");
                /* every mount in the config's order (mountinfo shows them so,
                 * as runc makes them), each with its propagation */
                sb->order[sb->n_order++] = (struct fs_mount_order){d, m->propagation};
                if (streq(d, "/dev") && streq(m->type, "tmpfs")) {
                        sb->dev_data = m->data; /* the view's /dev, with these options */
                        continue;
                }
                if (startswith(d, "/dev/") && !bind) {
                        /* made in the view's /dev as configured (fs/view.c
                         * says why each is safe): devpts is a new instance,
                         * mqueue the sandbox's own ipc namespace's */
                        bool ok = streq(m->type, "tmpfs") || (streq(m->type, "devpts") && streq(d, "/dev/pts")) ||
                                  (streq(m->type, "mqueue") && streq(d, "/dev/mqueue"));
                        if (!ok) {
                                oci_error("mounts[%zu]: %s of type %s is not supported by cordon (under /dev: tmpfs, "
                                          "devpts at /dev/pts and mqueue at /dev/mqueue)",
                                          i, d, m->type);
                                return -EOPNOTSUPP;
                        }
                        /* a joined ipc namespace (a pod's) belongs to the pod's
                         * sandbox container's user namespace, not this one's,
                         * and mqueue refuses a mounter without CAP_SYS_ADMIN
                         * there: its queues are still the pod's (mq_open) */
                        if (streq(m->type, "mqueue") && sb->join[OCI_JOIN_IPC].path) {
                                oci_debug("mounts[%zu]: mqueue %s: not mounted (the pod's ipc namespace is joined)", i,
                                          d);
                                continue;
                        }
                        sb->dev_mounts[sb->n_dev_mounts++] =
                                (struct fs_dev_mount){d, m->type, m->source, m->flags, m->data};
                        continue;
                }
                if (bind && streq(d, "/dev/shm")) {
                        /* The engine's own shm tmpfs (podman's, sized by
                         * --shm-size, 64 MB by default; a pod's, which
                         * containerd and podman bind into each of the
                         * pod's containers): attached as it is, so that a
                         * pod's containers share POSIX shared memory as
                         * under runc, and its size is the engine's. It is
                         * the container's own (or its pod's, one trust
                         * unit): no other container's, and nothing on it
                         * runs (noexec, nosuid, nodev). A source that is
                         * no tmpfs leaves cordon's own /dev/shm. */
                        struct statfs fs;
                        if (m->source && statfs(m->source, &fs) == 0 && fs.f_type == TMPFS_MAGIC)
                                sb->shm_source = m->source;
                        continue;
                }
                if (view_provides(d, m->type))
                        continue;
                if (bind) {
                        /* a bind of the policy (oci_spec_policy) */
                        sb->engine_binds[sb->n_engine_binds++] = d;
                        continue;
                }
                if (streq(m->type, "tmpfs") || streq(m->type, "mqueue")) {
                        sb->mount_points[sb->n_mounts] = d;
                        sb->mounts[sb->n_mounts++] = (struct oci_extra_mount){
                                d, m->type, m->flags & (MS_RDONLY | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME), m->data,
                                m->tmpcopyup};
                        continue;
                }
                if (streq(m->type, "sysfs") && streq(d, "/sys")) {
                        /* sysfs would show the host's devices and kernel: the
                         * container gets an empty read-only /sys instead */
                        sb->mount_points[sb->n_mounts] = d;
                        sb->mounts[sb->n_mounts++] =
                                (struct oci_extra_mount){d, "tmpfs", MS_RDONLY | MS_NOEXEC, "size=4k,mode=755"};
                        continue;
                }
                if ((streq(m->type, "cgroup") || streq(m->type, "cgroup2")) && startswith(d, "/sys/")) {
                        oci_debug("mounts: %s %s: not provided (the container's /sys is empty)", m->type, d);
                        continue;
                }
                oci_error("mounts: %s of type %s is not supported by cordon (bind, tmpfs, mqueue, and proc, "
                          "devpts, sysfs at their usual places are)",
                          d, m->type);
                return -EOPNOTSUPP;
        }
        return 0;
}

/* The detached sentry: as `cordon sandbox create` makes it, with the OCI
 * container's identity. Returns its pid; *ret_sid the sandbox id. */
static int start_sentry(struct oci_prepared *p, bool foreground, pid_t *ret_pid, char ret_sid[17])
{
        struct run_options o = {.tty = TTY_NEVER, .cgroup_mode = CG_AUTO, .cwd = "/"};
        run_limits_unset(&o.limits);
        o.policy = p->policy;
        /* with o.oci set the sandbox gets no built-in limits (sentry_run):
         * as under runc, only what config.json's linux.resources says */
        o.oci = &p->sb;
        int memfd = memfd_create("cordon-oci-create", MFD_CLOEXEC);
        if (memfd < 0) {
                oci_error("create: %s", strerror(errno));
                return -errno;
        }
        struct serve_config cfg = {.policy_text = p->policy_text, .oci = true};
        int status;
        int r = sandbox_spawn_sentry(&o, &cfg, !foreground, memfd, ret_pid, ret_sid, &status);
        if (r == -ECHILD) {
                char buf[3000] = "";
                ssize_t n = pread(memfd, buf, sizeof(buf) - 1, 0);
                close(memfd);
                buf[n > 0 ? n : 0] = '\0';
                /* one line for the log: the sentry's own messages, joined */
                for (char *q = buf; *q; q++)
                        if (*q == '\n')
                                *q = q[1] ? ' ' : '\0';
                oci_error("the container's sandbox could not be created: %s",
                          buf[0] ? buf : "its sentry exited during set-up");
                return -EIO;
        }
        close(memfd);
        if (r < 0)
                oci_error("create: %s", strerror(-r));
        return r;
}

/* ret_master: for `run` with process.terminal and no --console-socket,
 * the terminal's master, which run relays to its own stdio as runc does
 * (-1: none). */
static int do_create(const struct create_args *a, pid_t *ret_sentry, int *ret_master)
{
        if (oci_G.systemd_cgroup) {
                oci_error("--systemd-cgroup cannot be honoured: cordon makes and owns each container's cgroup "
                          "itself (under its own cordon group), not a systemd unit; configure the cgroupfs manager "
                          "(podman --cgroup-manager=cgroupfs, containerd SystemdCgroup = false)");
                return -EOPNOTSUPP;
        }
        if (!oci_container_id_valid(a->id)) {
                oci_error("invalid container id '%s': only letters, digits, '_', '-', '.' and '+' are allowed", a->id);
                return -EINVAL;
        }
        if (a->preserve_fds < 0 || a->preserve_fds > OCI_MAX_PRESERVE) {
                oci_error("--preserve-fds %d: cordon passes at most %d extra fds", a->preserve_fds, OCI_MAX_PRESERVE);
                return -EINVAL;
        }
        for (int i = 0; i < a->preserve_fds; i++)
                if (fcntl(3 + i, F_GETFD) < 0) {
                        oci_error("--preserve-fds %d: fd %d is not open", a->preserve_fds, 3 + i);
                        return -EBADF;
                }
        char bundle[PATH_MAX];
        if (!realpath(a->bundle ? a->bundle : ".", bundle)) {
                oci_error("bundle %s: %s", a->bundle ? a->bundle : ".", strerror(errno));
                return -errno;
        }
        int r = mkdir_p(oci_G.root, 0711);
        if (r < 0) {
                oci_error("--root %s: %s", oci_G.root, strerror(-r));
                return r;
        }
        _cleanup_close_ int rootfd = open(oci_G.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0 || mkdirat(rootfd, a->id, 0700) < 0) {
                r = negative_errno();
                if (r == -EEXIST)
                        oci_error("container with id %s already exists", a->id);
                else
                        oci_error("--root %s: cannot make the container's directory: %s", oci_G.root, strerror(-r));
                return r;
        }
        struct container c = {.id = xstrdup(a->id), .dirfd = -1};
        c.dirfd = openat(rootfd, a->id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (c.dirfd < 0 || flock(c.dirfd, LOCK_EX) < 0) {
                oci_error("%s/%s: %s", oci_G.root, a->id, strerror(errno));
                oci_container_remove(&c);
                oci_container_close(&c);
                return -EIO;
        }
        c.state = json_pack("{s:s, s:b}", "id", a->id, "incomplete", 1);
        (void)oci_container_save(&c);

        struct oci_prepared p = {0};
        r = prepare(bundle, &p);
        const struct oci_process *pr = p.spec ? &p.spec->process : NULL;
        if (r == 0 && pr->terminal && !a->console_socket && !a->foreground) {
                oci_error("cannot allocate tty if cordon-oci will detach without setting console socket");
                r = -EINVAL;
        }
        pid_t spid = 0;
        char sid[17] = "";
        if (r == 0)
                r = start_sentry(&p, a->foreground, &spid, sid);
        if (r < 0) {
                prepared_done(&p);
                oci_container_remove(&c);
                oci_container_close(&c);
                return r;
        }
        char created[64];
        oci_now_rfc3339(created, sizeof(created));
        json_t *ann = json_object();
        for (size_t i = 0; i < p.spec->n_annotations; i++)
                json_object_set_new(ann, p.spec->annotations[i].key, json_string(p.spec->annotations[i].value));
        json_decref(c.state);
        c.state = json_pack("{s:s, s:s, s:s, s:s, s:o, s:s, s:I, s:I, s:b, s:{s:o, s:o, s:o}, s:i}", "id", a->id,
                            "bundle", bundle, "rootfs", p.spec->root_path, "created", created, "annotations", ann,
                            "sandbox", sid, "sentryPid", (json_int_t)spid, "sentryStart",
                            (json_int_t)oci_pid_start_time(spid), "started", 0, "hooks", "prestart",
                            oci_hooks_json(p.spec, OCI_HOOK_PRESTART), "createRuntime",
                            oci_hooks_json(p.spec, OCI_HOOK_CREATE_RUNTIME), "poststart",
                            oci_hooks_json(p.spec, OCI_HOOK_POSTSTART), "owner", (int)geteuid());
        json_object_set_new(json_object_get(c.state, "hooks"), "poststop", oci_hooks_json(p.spec, OCI_HOOK_POSTSTOP));
        json_object_set_new(json_object_get(c.state, "hooks"), "startContainer",
                            oci_hooks_json(p.spec, OCI_HOOK_START_CONTAINER));
        if (p.pod_record)
                json_object_set_new(c.state, "pod", TAKE_PTR(p.pod_record));
        /* a non-root process.user: init stays root, and the container's
         * process takes its identity as any run does (runs_switch); its
         * startContainer hooks' runs too (hooks.c) */
        json_t *identity = NULL;
        if (p.sb.runs_switch) {
                const uint64_t caps[5] = {p.sb.cap_bounding, p.sb.cap_effective, p.sb.cap_permitted,
                                          p.sb.cap_inheritable, p.sb.cap_ambient};
                identity = json_object();
                oci_request_identity(identity, p.sb.uid, p.sb.gid, p.sb.groups, p.sb.n_groups, caps);
                json_object_set(c.state, "runIdentity", identity);
        }
        json_object_set_new(c.state, "resources", oci_resources_json(&p.spec->resources)); /* for update */
        r = oci_container_save(&c);
        if (r < 0)
                oci_error("%s/%s/state.json: %s", oci_G.root, a->id, strerror(-r));

        /* the container's process, held before its exec until `start` */
        _cleanup_close_ int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        int fds[EXEC_MAX_FDS];
        size_t n_fds = oci_client_fds(fds, nul, a->preserve_fds);
        json_t *req = oci_process_request(pr, true, pr->terminal);
        if (a->preserve_fds)
                json_object_set_new(req, "preserveFds", json_integer(a->preserve_fds));
        if (identity)
                json_object_update(req, identity);
        json_decref(identity);
        /* the process's word on its set-up comes back on this socket */
        int rep[2] = {-1, -1};
        if (r == 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, rep) < 0) {
                oci_error("create: %s", strerror(errno));
                r = -errno;
        }
        fds[n_fds++] = rep[1];
        json_object_set_new(req, "report", json_true());
        int back[1] = {-1};
        if (r == 0)
                r = oci_sentry_request(sid, "create", req, fds, n_fds, NULL, back, 1);
        else
                json_decref(req);
        if (rep[1] >= 0)
                close(rep[1]);
        if (r == 0 && pr->terminal) {
                if (back[0] < 0) {
                        oci_error("create: no terminal came back from the container's sentry");
                        r = -EIO;
                } else if (!a->console_socket && ret_master)
                        *ret_master = TAKE_FD(back[0]); /* a foreground run's own (see there) */
                else if ((r = oci_send_console(a->console_socket, back[0])) < 0)
                        oci_error("--console-socket %s: cannot send the terminal: %s", a->console_socket, strerror(-r));
        }
        if (back[0] >= 0)
                close(back[0]);
        if (r == 0) {
                r = oci_container_hooks(&c, "prestart", "prestart", "created");
                if (r == 0)
                        r = oci_container_hooks(&c, "createRuntime", "createRuntime", "created");
        }
        if (r == 0)
                r = oci_await_setup(rep[0], "create");
        if (rep[0] >= 0)
                close(rep[0]);
        if (r == 0 && a->pid_file && (r = oci_write_pid_file(a->pid_file, spid)) < 0)
                oci_error("--pid-file %s: %s", a->pid_file, strerror(-r));
        if (r < 0) {
                (void)oci_container_terminate(&c);
                if (!a->foreground)
                        (void)waitpid(spid, NULL, WNOHANG);
                else
                        (void)waitpid(spid, NULL, 0);
                oci_container_remove(&c);
        }
        prepared_done(&p);
        oci_container_close(&c);
        if (r == 0 && ret_sentry)
                *ret_sentry = spid;
        return r;
}

/* run's signals, forwarded as `kill` does (relay_terminal's callback) */
static void forward_kill(int sig, void *id)
{
        char num[16], *kill_argv[] = {(char *)"kill", id, num, NULL};
        snprintf(num, sizeof(num), "%d", sig);
        (void)oci_cmd_kill(3, kill_argv);
}

int oci_cmd_create(int argc, char **argv, bool run)
{
        static const struct option opts[] = {
                {"bundle", required_argument, NULL, 'b'},
                {"pid-file", required_argument, NULL, 'P'},
                {"console-socket", required_argument, NULL, 's'},
                {"preserve-fds", required_argument, NULL, 'F'},
                {"no-pivot", no_argument, NULL, 'n'},
                {"no-new-keyring", no_argument, NULL, 'k'},
                {"detach", no_argument, NULL, 'd'},
                {"keep", no_argument, NULL, 'K'},
                {"no-subreaper", no_argument, NULL, 'S'},
                {0},
        };
        struct create_args a = {0};
        bool detach = false, keep = false;
        int ch;
        optind = 1;
        opterr = 0;
        while ((ch = getopt_long(argc, argv, "+b:dP:s:", opts, NULL)) != -1) {
                switch (ch) {
                case 'b':
                        a.bundle = optarg;
                        break;
                case 'P':
                        a.pid_file = optarg;
                        break;
                case 's':
                        a.console_socket = optarg;
                        break;
                case 'F': {
                        char *end;
                        long n = strtol(optarg, &end, 10);
                        if (*end || n < 0 || n > 1024) {
                                oci_error("--preserve-fds %s: expected a small number", optarg);
                                return EXIT_USAGE;
                        }
                        a.preserve_fds = (int)n;
                        break;
                }
                case 'n':
                        /* no pivot_root is cordon's business: the view is
                         * always entered with one, and the host's tree detached */
                        oci_debug("--no-pivot: ignored; cordon always pivots into the container's view");
                        break;
                case 'k':
                        break; /* keyctl is refused in the sandbox anyway: no keyring to share */
                case 'd':
                        detach = true;
                        break;
                case 'K':
                        keep = true;
                        break;
                case 'S':
                        break;
                default:
                        oci_error("%s: unknown option %s", run ? "run" : "create", argv[optind - 1]);
                        return EXIT_USAGE;
                }
        }
        if (optind != argc - 1) {
                oci_error("%s: usage: %s [options] ID", run ? "run" : "create", run ? "run" : "create");
                return EXIT_USAGE;
        }
        a.id = argv[optind];
        if (!run)
                return do_create(&a, NULL, NULL) == 0 ? 0 : 1;

        /* run = create + start (+ wait and delete unless --detach) */
        a.foreground = !detach;
        pid_t spid = 0;
        _cleanup_close_ int master = -1;
        if (do_create(&a, &spid, &master) < 0)
                return 1;
        /* the terminal's size before the process runs, as runc sets it */
        if (master >= 0)
                oci_terminal_size(master);
        char *start_argv[] = {(char *)"start", (char *)a.id, NULL};
        if (oci_cmd_start(2, start_argv) != 0) {
                char *del[] = {(char *)"delete", (char *)"--force", (char *)a.id, NULL};
                (void)oci_cmd_delete(3, del);
                return 1;
        }
        if (detach)
                return 0;
        oci_catch_signals();
        /* the container's terminal on ours, until its process ends */
        if (master >= 0)
                oci_relay_terminal(master, forward_kill, (void *)a.id);
        int status = 0;
        for (;;) {
                pid_t w = waitpid(spid, &status, 0);
                if (w == spid)
                        break;
                if (w < 0 && errno != EINTR) {
                        status = (EXIT_SANDBOX << 8);
                        break;
                }
                if (oci_pending_signal) {
                        char num[16];
                        snprintf(num, sizeof(num), "%d", (int)oci_pending_signal);
                        oci_pending_signal = 0;
                        char *kill_argv[] = {(char *)"kill", (char *)a.id, num, NULL};
                        (void)oci_cmd_kill(3, kill_argv);
                }
        }
        if (!keep) {
                char *del[] = {(char *)"delete", (char *)"--force", (char *)a.id, NULL};
                (void)oci_cmd_delete(3, del);
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
