/* linux.* of an OCI config but seccomp (seccomp.c): namespaces, id
 * mappings, resources, devices, sysctl, rootfsPropagation, mountLabel and
 * the newer fields cordon refuses. maskedPaths and readonlyPaths are read
 * here and normalised by config.c. */
#include "config.h"

#include <sched.h>
#include <sys/mount.h>

#include "common/util.h"
#include "sentry/cgroup/cgroup.h"
#include "sentry/oci/oci-internal.h"
#include "sentry/oci/oci.h"

static const struct oci_name ns_names[] = {
        {"pid", CLONE_NEWPID}, {"network", CLONE_NEWNET}, {"mount", CLONE_NEWNS},      {"ipc", CLONE_NEWIPC},
        {"uts", CLONE_NEWUTS}, {"user", CLONE_NEWUSER},   {"cgroup", CLONE_NEWCGROUP}, {"time", CLONE_NEWTIME},
};

/* ---- linux ---- */

static int parse_namespace(struct oci_parser *p, json_t *v, size_t idx, void *item, void *ctx)
{
        const struct oci_spec *s = ctx;
        struct oci_namespace *ns = item;
        int64_t type = 0;
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        if (!oci_member(v, "type"))
                return oci_fail_at(p, "type", "required key is missing");
        r = AT(p, v, "type", oci_get_name(p, it, ns_names, ELEMENTSOF(ns_names), "namespace type", &type));
        if (r < 0)
                return r;
        ns->type = (int)type;
        for (size_t j = 0; j < idx; j++)
                if (s->namespaces[j].type == ns->type)
                        return oci_fail_at(p, "type", "the same namespace is already listed at [%zu]", j);
        return AT(p, v, "path", oci_get_abs_path(p, it, &ns->path));
}

static int parse_namespaces(struct oci_parser *p, json_t *v, struct oci_spec *s)
{
        return oci_each(p, v, sizeof(*s->namespaces), &s->namespaces, &s->n_namespaces, parse_namespace, s);
}

static int parse_id_mapping(struct oci_parser *p, json_t *v, size_t i, void *item, void *ctx)
{
        struct oci_id_mapping *m = item;
        static const char *const keys[] = {"containerID", "hostID", "size"};
        uint32_t *vals[] = {&m->container_id, &m->host_id, &m->size};
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        for (size_t k = 0; k < ELEMENTSOF(keys); k++) {
                if (!oci_member(v, keys[k]))
                        return oci_fail_at(p, keys[k], "required key is missing");
                if ((r = AT(p, v, keys[k], oci_get_u32(p, it, vals[k]))) < 0)
                        return r;
        }
        if (m->size == 0)
                return oci_fail_at(p, "size", "must be at least 1");
        if ((uint64_t)m->container_id + m->size > UINT32_MAX + UINT64_C(1) ||
            (uint64_t)m->host_id + m->size > UINT32_MAX + UINT64_C(1))
                return oci_fail_at(p, "size", "the range goes past the last id (4294967295)");
        return 0;
}

static int parse_id_mappings(struct oci_parser *p, json_t *v, struct oci_id_mapping **ret, size_t *ret_n)
{
        size_t n;
        int r = oci_check_array(p, v, &n);
        if (r < 0)
                return r;
        /* the kernel takes at most 340 lines in uid_map (5 before 4.15) */
        if (n > 340)
                return oci_fail(p, "too many mappings (%zu, the kernel takes at most 340)", n);
        return oci_each(p, v, sizeof(**ret), ret, ret_n, parse_id_mapping, NULL);
}

static int get_mem(struct oci_parser *p, json_t *v, int64_t *ret)
{
        int64_t i;
        int r = oci_get_int(p, v, -1, INT64_MAX, &i);
        if (r < 0)
                return r;
        /* 0 and -1 both mean "no limit" to runc */
        *ret = i > 0 ? i : -1;
        return 0;
}

static int parse_memory(struct oci_parser *p, json_t *v, struct oci_resources *res)
{
        int64_t ignored;
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        if ((r = AT(p, v, "limit", get_mem(p, it, &res->memory_limit))) < 0 ||
            (r = AT(p, v, "swap", get_mem(p, it, &res->memory_swap))) < 0)
                return r;
        /* The reservation (a reclaim hint), the swappiness (the group's own
         * reclaim) and kernelTCP (a limit on socket buffers) are written as
         * runc writes them on cgroup v1 (sentry/cgroup/); on v2, where runc
         * has no file for the last two either, they are left to the host
         * with a warning. "kernel" is deprecated (cgroup v1 only, refused by
         * the kernel since 5.16) and runc ignores it too; its value is still
         * checked. */
        if ((r = AT(p, v, "reservation", get_mem(p, it, &res->memory_reservation))) < 0 ||
            (r = AT(p, v, "kernel", oci_get_int(p, it, -1, INT64_MAX, &ignored))) < 0 ||
            (r = AT(p, v, "kernelTCP", get_mem(p, it, &res->kernel_tcp))) < 0 ||
            (r = AT(p, v, "swappiness", oci_get_int(p, it, -1, 100, &res->memory_swappiness))) < 0 ||
            (r = AT(p, v, "useHierarchy", oci_get_bool(p, it, &(bool){false}))) < 0 ||
            (r = AT(p, v, "checkBeforeUpdate", oci_get_bool(p, it, &(bool){false}))) < 0)
                return r;
        /* On cgroup v1, tasks at the limit then wait for memory instead of
         * one being killed: what runc does. The sentry stays outside that
         * memory group so it can still end them (sentry/cgroup/). */
        if ((r = AT(p, v, "disableOOMKiller", oci_get_bool(p, it, &res->disable_oom_killer))) < 0)
                return r;
        if (res->memory_swap > 0 && res->memory_limit > 0 && res->memory_swap < res->memory_limit)
                return oci_fail_at(p, "swap",
                                   "is below the memory limit (%" PRId64 " < %" PRId64 "): swap counts memory "
                                   "plus swap",
                                   res->memory_swap, res->memory_limit);
        return 0;
}

/* A cpuset list: its syntax here; whether the host has those CPUs or
 * nodes, at create (cgroup_cpuset_check). "" means not given, as to runc. */
static int get_cpu_list(struct oci_parser *p, json_t *v, char **ret)
{
        const char *s;
        char q[DOC_QUOTE_MAX];
        uint64_t mask[64];
        int r = oci_get_string(p, v, &s);
        if (r < 0 || !s[0])
                return r;
        r = cgroup_list_parse(s, mask, ELEMENTSOF(mask));
        if (r == -ERANGE)
                return oci_fail(p, "%s: a CPU or node number past 4095", doc_quote(q, s, strlen(s)));
        if (r < 0)
                return oci_fail(p, "%s: expected a list of numbers and ranges such as \"0-3,8\"",
                                doc_quote(q, s, strlen(s)));
        free(*ret);
        *ret = xstrdup(s);
        return 0;
}

static int parse_cpu(struct oci_parser *p, json_t *v, struct oci_resources *res)
{
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        if ((r = AT(p, v, "shares", oci_get_u64(p, it, &res->cpu_shares))) < 0 ||
            (r = AT(p, v, "quota", oci_get_int(p, it, -1, INT64_MAX, &res->cpu_quota))) < 0 ||
            (r = AT(p, v, "period", oci_get_u64(p, it, &res->cpu_period))) < 0)
                return r;
        if (res->cpu_quota == 0)
                res->cpu_quota = -1;
        if (res->cpu_period > 0 && (res->cpu_period < 1000 || res->cpu_period > 1000000))
                return oci_fail_at(p, "period", "must be between 1000 and 1000000 microseconds, got %" PRIu64,
                                   res->cpu_period);
        if (res->cpu_quota > 0 && res->cpu_quota < 1000)
                return oci_fail_at(p, "quota", "must be at least 1000 microseconds, got %" PRId64, res->cpu_quota);
        if (res->cpu_shares > 262144)
                return oci_fail_at(p, "shares", "must be at most 262144, got %" PRIu64, res->cpu_shares);
        /* A placement only narrows the CPUs and memory nodes the container
         * may use: written to its cpuset group (sentry/cgroup/). */
        if ((r = AT(p, v, "cpus", get_cpu_list(p, it, &res->cpus))) < 0 ||
            (r = AT(p, v, "mems", get_cpu_list(p, it, &res->mems))) < 0)
                return r;
        /* Real-time budgets are not cordon's to grant: a container that
         * asks for them must not run believing it has them. */
        if ((r = oci_refuse_set(p, v, "realtimeRuntime", "real-time CPU time")) < 0 ||
            (r = oci_refuse_set(p, v, "realtimePeriod", "real-time CPU time")) < 0 ||
            (r = oci_refuse_set(p, v, "idle", "SCHED_IDLE cgroups")) < 0 ||
            (r = oci_refuse_set(p, v, "burst", "CPU burst")) < 0)
                return r;
        return 0;
}

static int parse_pids(struct oci_parser *p, json_t *v, struct oci_resources *res)
{
        int64_t limit;
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        if (!oci_member(v, "limit"))
                return 0;
        r = AT(p, v, "limit", oci_get_int(p, it, -1, INT64_MAX, &limit));
        if (r < 0)
                return r;
        res->pids_limit = limit > 0 ? limit : -1;
        return 0;
}

/* linux.resources.devices is a cgroup allow/deny list. It grants no device
 * node: the container's /dev is cordon's own fixed list (DESIGN.md, "The
 * view"), and mknod is refused by cordon's filter, so an "allow" here opens
 * nothing that is not already there. Only its shape is checked. */
static int parse_device_rule(struct oci_parser *p, json_t *v, size_t i, void *item, void *ctx)
{
        const char *s;
        char q[DOC_QUOTE_MAX];
        bool allow;
        int64_t num;
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        if (!oci_member(v, "allow"))
                return oci_fail_at(p, "allow", "required key is missing");
        if ((r = AT(p, v, "allow", oci_get_bool(p, it, &allow))) < 0 ||
            (r = AT(p, v, "major", oci_get_int(p, it, -1, INT64_MAX, &num))) < 0 ||
            (r = AT(p, v, "minor", oci_get_int(p, it, -1, INT64_MAX, &num))) < 0)
                return r;
        if ((r = AT(p, v, "type", oci_get_string(p, it, &s))) < 0)
                return r;
        if (oci_member(v, "type") && !streq(s, "a") && !streq(s, "b") && !streq(s, "c"))
                return oci_fail_at(p, "type", "expected \"a\", \"b\" or \"c\", got %s", doc_quote(q, s, strlen(s)));
        if ((r = AT(p, v, "access", oci_get_string(p, it, &s))) < 0)
                return r;
        if (oci_member(v, "access") && (s[0] == '\0' || strspn(s, "rwm") != strlen(s)))
                return oci_fail_at(p, "access", "expected letters from \"rwm\", got %s", doc_quote(q, s, strlen(s)));
        return 0;
}

static int parse_device_rules(struct oci_parser *p, json_t *v)
{
        return oci_each(p, v, 0, NULL, NULL, parse_device_rule, NULL);
}

/* Kubernetes sends a hugetlb limit for every page size, 0 when the pod
 * asked for none. A limit of 0 asks for nothing cordon would have to
 * grant; a real one would be a limit cordon does not enforce. */
static int parse_hugepage_limit(struct oci_parser *p, json_t *e, size_t i, void *item, void *ctx)
{
        const char *size;
        uint64_t limit = 0;
        int r = oci_check_object(p, e);

        if (r >= 0)
                r = AT(p, e, "pageSize", oci_get_string(p, it, &size));
        if (r >= 0)
                r = AT(p, e, "limit", oci_get_u64(p, it, &limit));
        if (r >= 0 && limit != 0)
                r = oci_fail_at(p, "limit", "not supported by cordon: hugetlb limits other than 0");
        return r;
}

static int parse_hugepage_limits(struct oci_parser *p, json_t *v)
{
        return oci_each(p, v, 0, NULL, NULL, parse_hugepage_limit, NULL);
}

int oci_parse_resources(struct oci_parser *p, json_t *v, struct oci_resources *res)
{
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        if ((r = AT(p, v, "memory", parse_memory(p, it, res))) < 0 ||
            (r = AT(p, v, "cpu", parse_cpu(p, it, res))) < 0 || (r = AT(p, v, "pids", parse_pids(p, it, res))) < 0 ||
            (r = AT(p, v, "devices", parse_device_rules(p, it))) < 0 ||
            (r = AT(p, v, "hugepageLimits", parse_hugepage_limits(p, it))) < 0)
                return r;
        /* Block I/O weights would claim more of a disk than the group's
         * siblings get (its throttles are not written either); a net_cls
         * class id could match the host's own traffic rules and net_prio
         * would raise the container's traffic over others'; "unified" is
         * any v2 file, relaxations included. Refused, not dropped. */
        if ((r = oci_refuse_set(p, v, "blockIO", "block I/O weights and throttles")) < 0 ||
            (r = oci_refuse_set(p, v, "network", "net_cls/net_prio (cgroup v1)")) < 0 ||
            (r = oci_refuse_set(p, v, "rdma", "RDMA limits")) < 0 ||
            (r = oci_refuse_set(p, v, "unified", "raw cgroup v2 files")) < 0)
                return r;
        return 0;
}

/* The standard character devices cordon's /dev has anyway; podman and
 * containerd list some of them under linux.devices. */
static const struct {
        const char *path;
        int64_t major, minor;
} std_devices[] = {
        {"/dev/null", 1, 3},   {"/dev/zero", 1, 5},    {"/dev/full", 1, 7},
        {"/dev/random", 1, 8}, {"/dev/urandom", 1, 9}, {"/dev/tty", 5, 0},
};

static int parse_device(struct oci_parser *p, json_t *v, size_t idx, void *item, void *ctx)
{
        _cleanup_free_ char *path = NULL;
        const char *type = NULL;
        char q[DOC_QUOTE_MAX];
        int64_t major = -1, minor = -1, num;
        uint32_t u;
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        if (!oci_member(v, "path"))
                return oci_fail_at(p, "path", "required key is missing");
        if (!oci_member(v, "type"))
                return oci_fail_at(p, "type", "required key is missing");
        if ((r = AT(p, v, "path", oci_get_abs_path(p, it, &path))) < 0 ||
            (r = AT(p, v, "type", oci_get_string(p, it, &type))) < 0 ||
            (r = AT(p, v, "major", oci_get_int(p, it, 0, INT64_MAX, &major))) < 0 ||
            (r = AT(p, v, "minor", oci_get_int(p, it, 0, INT64_MAX, &minor))) < 0 ||
            /* podman writes the type bits too (020666 for a character device) */
            (r = AT(p, v, "fileMode", oci_get_int(p, it, 0, 0177777, &num))) < 0 ||
            (r = AT(p, v, "uid", oci_get_u32(p, it, &u))) < 0 || (r = AT(p, v, "gid", oci_get_u32(p, it, &u))) < 0)
                return r;
        if (!streq(type, "c") && !streq(type, "u") && !streq(type, "b") && !streq(type, "p"))
                return oci_fail_at(p, "type", "expected \"c\", \"u\", \"b\" or \"p\", got %s",
                                   doc_quote(q, type, strlen(type)));
        for (size_t i = 0; i < ELEMENTSOF(std_devices); i++)
                if ((streq(type, "c") || streq(type, "u")) && streq(path, std_devices[i].path) &&
                    major == std_devices[i].major && minor == std_devices[i].minor)
                        return 0;
        return oci_fail(p,
                        "device %s is not supported by cordon: a container's /dev holds only null, zero, full, "
                        "random, urandom, tty, ptmx and pts",
                        doc_quote(q, path, strlen(path)));
}

static int parse_devices(struct oci_parser *p, json_t *v)
{
        return oci_each(p, v, 0, NULL, NULL, parse_device, NULL);
}

bool oci_has_new_ns(const struct oci_spec *s, int type)
{
        for (size_t i = 0; i < s->n_namespaces; i++)
                if (s->namespaces[i].type == type)
                        return s->namespaces[i].path == NULL;
        return false;
}

bool oci_has_ns(const struct oci_spec *s, int type)
{
        for (size_t i = 0; i < s->n_namespaces; i++)
                if (s->namespaces[i].type == type)
                        return true;
        return false;
}

/* runc's rule (libcontainer/configs/validate): a sysctl is allowed only
 * when it belongs to a namespace the container has; anything else would
 * write the host's setting. A joined namespace (podman hands every
 * container a network namespace it made, by path) passes here: whether the
 * path is the host's own namespace can only be told by opening it, which is
 * the runtime's check (sentry/oci/oci.h, struct oci_sysctl). */
static const char *sysctl_namespace(const char *key, int *ret_type)
{
        static const char *const ipc[] = {"kernel.msgmax", "kernel.msgmnb", "kernel.msgmni", "kernel.sem",
                                          "kernel.shmall", "kernel.shmmax", "kernel.shmmni", "kernel.shm_rmid_forced"};
        for (size_t i = 0; i < ELEMENTSOF(ipc); i++)
                if (streq(key, ipc[i])) {
                        *ret_type = CLONE_NEWIPC;
                        return "ipc";
                }
        if (startswith(key, "fs.mqueue.")) {
                *ret_type = CLONE_NEWIPC;
                return "ipc";
        }
        if (startswith(key, "net.")) {
                *ret_type = CLONE_NEWNET;
                return "network";
        }
        if (streq(key, "kernel.hostname") || streq(key, "kernel.domainname")) {
                *ret_type = CLONE_NEWUTS;
                return "uts";
        }
        return NULL;
}

static int sysctl_at(struct oci_parser *p, const char *key, json_t *value, void *ctx)
{
        struct oci_spec *s = ctx;
        const char *val, *ns;
        char q[DOC_QUOTE_MAX];
        int type = 0, r;

        /* dots and slashes are both separators in /proc/sys; a ".." or
         * empty component would name another file */
        if (key[0] == '\0' || strstr(key, "..") || strchr(key, '/') || key[0] == '.' || key[strlen(key) - 1] == '.')
                return oci_fail(p, "not a sysctl name");
        if (!(ns = sysctl_namespace(key, &type)))
                return oci_fail(p, "sysctl %s is not namespaced: setting it would change the host",
                                doc_quote(q, key, strlen(key)));
        if (!oci_has_ns(s, type))
                return oci_fail(p, "sysctl %s needs the container to have a %s namespace",
                                doc_quote(q, key, strlen(key)), ns);
        r = oci_get_string(p, value, &val);
        if (r < 0)
                return r;
        s->sysctls = xrealloc(s->sysctls, (s->n_sysctls + 1) * sizeof(*s->sysctls));
        s->sysctls[s->n_sysctls++] = (struct oci_sysctl){xstrdup(key), xstrdup(val)};
        return 0;
}

static int parse_sysctls(struct oci_parser *p, json_t *v, struct oci_spec *s)
{
        return oci_each_member(p, v, sysctl_at, s);
}

static int parse_rootfs_propagation(struct oci_parser *p, json_t *v, struct oci_spec *s)
{
        /* Applied to the view's root as runc applies it (fs_view_order).
         * The view is a tree of the sandbox's own mount namespace, built in
         * a private copy of the host's: shared makes peers only of its own
         * mounts, and slave has no master there, so neither carries a mount
         * event to or from the host. */
        static const struct oci_name props[] = {
                {"private", MS_PRIVATE},       {"rprivate", MS_PRIVATE | MS_REC},
                {"slave", MS_SLAVE},           {"rslave", MS_SLAVE | MS_REC},
                {"shared", MS_SHARED},         {"rshared", MS_SHARED | MS_REC},
                {"unbindable", MS_UNBINDABLE}, {"runbindable", MS_UNBINDABLE | MS_REC},
        };
        int64_t v64;
        int r = oci_get_name(p, v, props, ELEMENTSOF(props), "root propagation", &v64);
        if (r < 0)
                return r;
        s->rootfs_propagation = (unsigned long)v64;
        return 0;
}

int oci_parse_linux(struct oci_parser *p, json_t *v, struct oci_spec *s)
{
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        /* namespaces first: sysctl is checked against them */
        if ((r = AT(p, v, "namespaces", parse_namespaces(p, it, s))) < 0 ||
            (r = AT(p, v, "uidMappings", parse_id_mappings(p, it, &s->uid_mappings, &s->n_uid_mappings))) < 0 ||
            (r = AT(p, v, "gidMappings", parse_id_mappings(p, it, &s->gid_mappings, &s->n_gid_mappings))) < 0 ||
            (r = AT(p, v, "resources", oci_parse_resources(p, it, &s->resources))) < 0 ||
            (r = AT(p, v, "cgroupsPath", oci_dup_string(p, it, &s->cgroups_path))) < 0 ||
            (r = AT(p, v, "devices", parse_devices(p, it))) < 0 ||
            (r = AT(p, v, "sysctl", parse_sysctls(p, it, s))) < 0 ||
            (r = AT(p, v, "maskedPaths", oci_get_strv(p, it, NULL, &s->masked_paths))) < 0 ||
            (r = AT(p, v, "readonlyPaths", oci_get_strv(p, it, NULL, &s->readonly_paths))) < 0 ||
            (r = AT(p, v, "rootfsPropagation", parse_rootfs_propagation(p, it, s))) < 0 ||
            (r = AT(p, v, "mountLabel", oci_dup_string(p, it, &s->mount_label))) < 0 ||
            (r = AT(p, v, "seccomp", oci_parse_seccomp(p, it, &s->seccomp))) < 0)
                return r;
        if (s->mount_label && !s->mount_label[0])
                s->mount_label = (free(s->mount_label), NULL);

        if ((r = oci_refuse_set(p, v, "timeOffsets", "time namespace offsets")) < 0 ||
            (r = oci_refuse_set(p, v, "intelRdt", "Intel RDT")) < 0 ||
            (r = oci_refuse_set(p, v, "personality", "execution domains")) < 0 ||
            (r = oci_refuse_set(p, v, "memoryPolicy", "NUMA memory policies")) < 0 ||
            (r = oci_refuse_set(p, v, "netDevices", "moving network devices into the container")) < 0)
                return r;
        return 0;
}
