/* Parses an OCI bundle's config.json (runtime-spec 1.0-1.2, as runc, crun,
 * podman and containerd write it) into struct oci_spec, strictly: a wrong
 * type or a bad value is an error naming its JSON path, and every field
 * cordon cannot honour is refused by name. What the spec says to do with
 * keys it does not define (ignore them) is what happens to keys this file
 * does not know; a key the spec defines is never ignored: it is parsed,
 * accepted with a comment saying why that is harmless, or refused.
 *
 * The decisions, field by field (the reasons are at each parser):
 *  - parsed into struct oci_spec: everything sentry/oci/oci.h has a field for;
 *    linux.sysctl only when namespaced and its namespace is listed;
 *    linux.devices only the standard null, zero, full, random, urandom
 *    and tty (cordon's /dev has them anyway; nothing is stored).
 *  - checked, then accepted without effect, because they grant nothing:
 *    linux.resources.devices (a cgroup list; /dev is cordon's and mknod is
 *    refused), hugepageLimits of 0 (Kubernetes sends them), memory
 *    reservation, swappiness, kernel, kernelTCP, useHierarchy and
 *    checkBeforeUpdate, seccomp flag WAIT_KILLABLE_RECV, process.user.username
 *    (Windows only), a bind mount's filesystem options (runc passes them
 *    to mount(2), which ignores them for a bind).
 *  - refused by name: process.ioPriority, scheduler, execCPUAffinity,
 *    commandLine; mount types other than bind, tmpfs, proc, sysfs, devpts,
 *    mqueue, cgroup and cgroup2; the mount options remount, idmap, the
 *    recursive attributes (rro, rnosuid, ...) and crun's copy-symlink,
 *    src-nofollow and dest-nofollow; idmapped mounts; other devices;
 *    sysctls outside a namespace the container has; resources cpu.cpus,
 *    mems, realtimeRuntime, realtimePeriod, idle and burst, blockIO,
 *    network, rdma, unified, disableOOMKiller, non-zero hugetlb limits;
 *    timeOffsets, intelRdt, personality, memoryPolicy, netDevices; seccomp SCMP_ACT_NOTIFY, listenerPath and
 *    listenerMetadata, SPEC_ALLOW, a docker profile's includes and
 *    excludes; the windows, solaris, vm and zos sections.
 *  - left to the runtime, which must apply or refuse them: the LSM labels
 *    (apparmorProfile, selinuxLabel, mountLabel), root.readonly, the
 *    non-bind mounts, capabilities above cordon's floor, joined namespaces
 *    that are the host's own.
 *
 * This file reads the document and its top-level sections (process,
 * mounts, root, hooks, annotations); linux.* is linux.c's, linux.seccomp
 * seccomp.c's, and the readers and error paths all three use are
 * parser.c's. Touches nothing on the host but the config.json it reads. */
#include "config.h"

#include <fcntl.h>
#include <jansson.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "common/util.h"
#include "sentry/oci/oci-internal.h"
#include "sentry/oci/oci.h"

/* A host path that may be relative to the bundle (root.path, a bind's
 * source). */
static int get_host_path(struct oci_parser *p, json_t *v, char **ret)
{
        _cleanup_free_ char *joined = NULL;
        const char *s;
        char *out = NULL;
        int r = oci_get_string(p, v, &s);
        if (r < 0)
                return r;
        if (s[0] == '\0')
                return oci_fail(p, "expected a path, got an empty string");
        if (s[0] != '/') {
                if (!p->bundle)
                        return oci_fail(p, "a relative path needs a bundle directory");
                joined = xasprintf("%s/%s", p->bundle, s);
                s = joined;
        }
        r = oci_normalise_path(p, s, &out);
        if (r < 0)
                return r;
        free(*ret);
        *ret = out;
        return 0;
}

/* ---- process ---- */

static int check_env(struct oci_parser *p, const char *s)
{
        char q[DOC_QUOTE_MAX];
        const char *eq = strchr(s, '=');
        if (!eq || eq == s)
                return oci_fail(p, "expected \"NAME=VALUE\", got %s", doc_quote(q, s, strlen(s)));
        return 0;
}

static const char *const cap_names[] = {
        "CAP_CHOWN",
        "CAP_DAC_OVERRIDE",
        "CAP_DAC_READ_SEARCH",
        "CAP_FOWNER",
        "CAP_FSETID",
        "CAP_KILL",
        "CAP_SETGID",
        "CAP_SETUID",
        "CAP_SETPCAP",
        "CAP_LINUX_IMMUTABLE",
        "CAP_NET_BIND_SERVICE",
        "CAP_NET_BROADCAST",
        "CAP_NET_ADMIN",
        "CAP_NET_RAW",
        "CAP_IPC_LOCK",
        "CAP_IPC_OWNER",
        "CAP_SYS_MODULE",
        "CAP_SYS_RAWIO",
        "CAP_SYS_CHROOT",
        "CAP_SYS_PTRACE",
        "CAP_SYS_PACCT",
        "CAP_SYS_ADMIN",
        "CAP_SYS_BOOT",
        "CAP_SYS_NICE",
        "CAP_SYS_RESOURCE",
        "CAP_SYS_TIME",
        "CAP_SYS_TTY_CONFIG",
        "CAP_MKNOD",
        "CAP_LEASE",
        "CAP_AUDIT_WRITE",
        "CAP_AUDIT_CONTROL",
        "CAP_SETFCAP",
        "CAP_MAC_OVERRIDE",
        "CAP_MAC_ADMIN",
        "CAP_SYSLOG",
        "CAP_WAKE_ALARM",
        "CAP_BLOCK_SUSPEND",
        "CAP_AUDIT_READ",
        "CAP_PERFMON",
        "CAP_BPF",
        "CAP_CHECKPOINT_RESTORE",
};

int oci_cap_from_name(const char *name)
{
        for (size_t i = 0; i < ELEMENTSOF(cap_names); i++)
                if (streq(cap_names[i], name))
                        return (int)i;
        return -1;
}

/* At most this many unknown capabilities are named one by one; the rest
 * are counted in one more line (the sets may hold OCI_MAX_ENTRIES each). */
#define OCI_CAPS_IGNORED_MAX 16

struct cap_set_ctx {
        uint64_t *mask;
        struct oci_caps *caps;
        size_t n_ignored, n_more;
};

/* "CAP_" and at least one of [A-Z0-9_]: the shape of every capability name
 * the kernel has or will have. */
static bool cap_name_well_formed(const char *s)
{
        return startswith(s, "CAP_") && s[4] != '\0' &&
               strspn(s + 4, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == strlen(s + 4);
}

static void add_ignored(struct oci_caps *c, char *msg)
{
        size_t n = 0;
        while (c->ignored && c->ignored[n])
                n++;
        c->ignored = xrealloc(c->ignored, (n + 2) * sizeof(char *));
        c->ignored[n] = msg;
        c->ignored[n + 1] = NULL;
}

static int cap_at(struct oci_parser *p, json_t *e, size_t i, void *item, void *ctx)
{
        struct cap_set_ctx *c = ctx;
        char q[DOC_QUOTE_MAX];
        const char *s;
        int cap, r = oci_get_string(p, e, &s);
        if (r < 0)
                return r;
        cap = oci_cap_from_name(s);
        if (cap >= 0) {
                *c->mask |= UINT64_C(1) << cap;
                return 0;
        }
        if (!cap_name_well_formed(s))
                return oci_fail(p, "expected a capability name (CAP_...), got %s", doc_quote(q, s, strlen(s)));
        /* Not granted: it is in no mask, so no set of the container's
         * process can hold it (the runtime drops every bounding capability
         * outside the mask, up to the kernel's last, and raises nothing
         * else). Said rather than refused, as the runtime spec asks. */
        if (c->n_ignored >= OCI_CAPS_IGNORED_MAX) {
                c->n_more++;
                return 0;
        }
        add_ignored(c->caps, xasprintf("%s: unknown capability %s ignored (it grants nothing)", p->path.text,
                                       doc_quote(q, s, strlen(s))));
        c->n_ignored++;
        return 0;
}

static int get_cap_set(struct oci_parser *p, json_t *v, struct cap_set_ctx *c, uint64_t *ret)
{
        uint64_t mask = 0;
        c->mask = &mask;
        int r = oci_each(p, v, 0, NULL, NULL, cap_at, c);
        if (r < 0)
                return r;
        *ret = mask;
        return 0;
}

static int parse_caps(struct oci_parser *p, json_t *v, struct oci_caps *c)
{
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        strv_free(c->ignored);
        *c = (struct oci_caps){0};
        struct cap_set_ctx ctx = {.caps = c};
        if ((r = AT(p, v, "bounding", get_cap_set(p, it, &ctx, &c->bounding))) < 0 ||
            (r = AT(p, v, "effective", get_cap_set(p, it, &ctx, &c->effective))) < 0 ||
            (r = AT(p, v, "inheritable", get_cap_set(p, it, &ctx, &c->inheritable))) < 0 ||
            (r = AT(p, v, "permitted", get_cap_set(p, it, &ctx, &c->permitted))) < 0 ||
            (r = AT(p, v, "ambient", get_cap_set(p, it, &ctx, &c->ambient))) < 0)
                return r;
        if (ctx.n_more > 0)
                add_ignored(c, xasprintf("%s: %zu more unknown capabilities ignored", p->path.text, ctx.n_more));
        return 0;
}

static const struct oci_name rlimit_names[] = {
        {"RLIMIT_AS", RLIMIT_AS},
        {"RLIMIT_CORE", RLIMIT_CORE},
        {"RLIMIT_CPU", RLIMIT_CPU},
        {"RLIMIT_DATA", RLIMIT_DATA},
        {"RLIMIT_FSIZE", RLIMIT_FSIZE},
        {"RLIMIT_LOCKS", RLIMIT_LOCKS},
        {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},
        {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE},
        {"RLIMIT_NICE", RLIMIT_NICE},
        {"RLIMIT_NOFILE", RLIMIT_NOFILE},
        {"RLIMIT_NPROC", RLIMIT_NPROC},
        {"RLIMIT_RSS", RLIMIT_RSS},
        {"RLIMIT_RTPRIO", RLIMIT_RTPRIO},
        {"RLIMIT_RTTIME", RLIMIT_RTTIME},
        {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
        {"RLIMIT_STACK", RLIMIT_STACK},
};

static int parse_rlimit(struct oci_parser *p, json_t *v, size_t idx, void *item, void *ctx)
{
        const struct oci_process *proc = ctx;
        struct oci_rlimit *rl = item;
        int64_t resource = -1;
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        if (!oci_member(v, "type"))
                return oci_fail_at(p, "type", "required key is missing");
        r = AT(p, v, "type", oci_get_name(p, it, rlimit_names, ELEMENTSOF(rlimit_names), "resource limit", &resource));
        if (r < 0)
                return r;
        rl->resource = (int)resource;
        if (!oci_member(v, "soft"))
                return oci_fail_at(p, "soft", "required key is missing");
        if (!oci_member(v, "hard"))
                return oci_fail_at(p, "hard", "required key is missing");
        if ((r = AT(p, v, "soft", oci_get_u64(p, it, &rl->soft))) < 0 ||
            (r = AT(p, v, "hard", oci_get_u64(p, it, &rl->hard))) < 0)
                return r;
        if (rl->soft > rl->hard)
                return oci_fail_at(p, "soft", "is above the hard limit (%" PRIu64 " > %" PRIu64 ")", rl->soft,
                                   rl->hard);
        for (size_t j = 0; j < idx; j++)
                if (proc->rlimits[j].resource == rl->resource)
                        return oci_fail_at(p, "type", "the same limit is already set by rlimits[%zu]", j);
        return 0;
}

static int parse_rlimits(struct oci_parser *p, json_t *v, struct oci_process *proc)
{
        return oci_each(p, v, sizeof(*proc->rlimits), &proc->rlimits, &proc->n_rlimits, parse_rlimit, proc);
}

static int gid_at(struct oci_parser *p, json_t *e, size_t i, void *item, void *ctx)
{
        return oci_get_u32(p, e, item);
}

static int parse_gids(struct oci_parser *p, json_t *v, struct oci_user *u)
{
        return oci_each(p, v, sizeof(uint32_t), &u->additional_gids, &u->n_additional_gids, gid_at, NULL);
}

static int get_umask(struct oci_parser *p, json_t *v, struct oci_user *u)
{
        int r = oci_get_u32(p, v, &u->umask);
        if (r < 0)
                return r;
        if (u->umask > 0777)
                return oci_fail(p, "expected a umask of at most 0777 (511), got %" PRIu32, u->umask);
        u->has_umask = true;
        return 0;
}

static int parse_user(struct oci_parser *p, json_t *v, struct oci_user *u)
{
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        /* uid and gid are required by the spec; Go writes 0 for root and
         * then leaves them out with omitempty in some clients, so absent is 0. */
        if ((r = AT(p, v, "uid", oci_get_u32(p, it, &u->uid))) < 0 ||
            (r = AT(p, v, "gid", oci_get_u32(p, it, &u->gid))) < 0 ||
            (r = AT(p, v, "umask", get_umask(p, it, u))) < 0 ||
            (r = AT(p, v, "additionalGids", parse_gids(p, it, u))) < 0)
                return r;
        /* "username" is for Windows containers; a Linux runtime never reads it. */
        return AT(p, v, "username", oci_get_string(p, it, &(const char *){NULL}));
}

static int get_console_size(struct oci_parser *p, json_t *v, struct oci_process *proc)
{
        uint32_t h = 0, w = 0;
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        if ((r = AT(p, v, "height", oci_get_u32(p, it, &h))) < 0 || (r = AT(p, v, "width", oci_get_u32(p, it, &w))) < 0)
                return r;
        if (h > UINT16_MAX || w > UINT16_MAX)
                return oci_fail(p, "a terminal is at most 65535 by 65535, got %" PRIu32 "x%" PRIu32, h, w);
        proc->console_height = h;
        proc->console_width = w;
        return 0;
}

static int get_oom_score_adj(struct oci_parser *p, json_t *v, struct oci_process *proc)
{
        int64_t i;
        int r = oci_get_int(p, v, -1000, 1000, &i);
        if (r < 0)
                return r;
        proc->oom_score_adj = (int)i;
        proc->has_oom_score_adj = true;
        return 0;
}

static int get_cwd(struct oci_parser *p, json_t *v, struct oci_process *proc)
{
        return oci_get_abs_path(p, v, &proc->cwd);
}

static int get_args(struct oci_parser *p, json_t *v, struct oci_process *proc)
{
        int r = oci_get_strv(p, v, NULL, &proc->args);
        if (r < 0)
                return r;
        if (!proc->args[0])
                return oci_fail(p, "must name the program to run (an empty array)");
        if (proc->args[0][0] == '\0')
                return oci_fail(p, "the program to run is an empty string");
        return 0;
}

static int parse_process_obj(struct oci_parser *p, json_t *v, struct oci_process *proc)
{
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;

        if ((r = AT(p, v, "terminal", oci_get_bool(p, it, &proc->terminal))) < 0 ||
            (r = AT(p, v, "consoleSize", get_console_size(p, it, proc))) < 0 ||
            (r = AT(p, v, "user", parse_user(p, it, &proc->user))) < 0 ||
            (r = AT(p, v, "args", get_args(p, it, proc))) < 0 ||
            (r = AT(p, v, "env", oci_get_strv(p, it, check_env, &proc->env))) < 0 ||
            (r = AT(p, v, "cwd", get_cwd(p, it, proc))) < 0 ||
            (r = AT(p, v, "capabilities", parse_caps(p, it, &proc->caps))) < 0 ||
            (r = AT(p, v, "rlimits", parse_rlimits(p, it, proc))) < 0 ||
            (r = AT(p, v, "noNewPrivileges", oci_get_bool(p, it, &proc->no_new_privileges))) < 0 ||
            (r = AT(p, v, "oomScoreAdj", get_oom_score_adj(p, it, proc))) < 0 ||
            (r = AT(p, v, "apparmorProfile", oci_dup_string(p, it, &proc->apparmor_profile))) < 0 ||
            (r = AT(p, v, "selinuxLabel", oci_dup_string(p, it, &proc->selinux_label))) < 0)
                return r;

        /* An empty label is the same as none. */
        if (proc->apparmor_profile && !proc->apparmor_profile[0])
                proc->apparmor_profile = (free(proc->apparmor_profile), NULL);
        if (proc->selinux_label && !proc->selinux_label[0])
                proc->selinux_label = (free(proc->selinux_label), NULL);

        /* Newer fields that would change how the process is scheduled or
         * placed: cordon's limits own that, and a silently dropped request
         * would misreport the container. */
        if ((r = oci_refuse_set(p, v, "ioPriority", "I/O priority classes")) < 0 ||
            (r = oci_refuse_set(p, v, "scheduler", "scheduling policies")) < 0 ||
            (r = oci_refuse_set(p, v, "execCPUAffinity", "CPU affinity at exec")) < 0)
                return r;
        /* "commandLine" is Windows' single-string args: not for Linux. */
        if ((r = oci_refuse_set(p, v, "commandLine", "a Windows command line (use \"args\")")) < 0)
                return r;

        if (!proc->args)
                return oci_fail_at(p, "args", "required key is missing");
        if (!proc->cwd)
                return oci_fail_at(p, "cwd", "required key is missing");
        if (!proc->env)
                proc->env = xcalloc(1, sizeof(char *));
        return 0;
}

void oci_process_done(struct oci_process *p)
{
        if (!p)
                return;
        strv_free(p->args);
        strv_free(p->env);
        free(p->cwd);
        free(p->user.additional_gids);
        free(p->rlimits);
        free(p->apparmor_profile);
        free(p->selinux_label);
        strv_free(p->caps.ignored);
        memset(p, 0, sizeof(*p));
}

/* ---- mounts ---- */

struct mount_opt {
        const char *name;
        bool clear;         /* removes flag instead of setting it */
        unsigned long flag; /* MS_* */
        unsigned long prop; /* propagation */
};

static const struct mount_opt mount_opts[] = {
        {"defaults", false, 0, 0},
        {"ro", false, MS_RDONLY, 0},
        {"rw", true, MS_RDONLY, 0},
        {"suid", true, MS_NOSUID, 0},
        {"nosuid", false, MS_NOSUID, 0},
        {"dev", true, MS_NODEV, 0},
        {"nodev", false, MS_NODEV, 0},
        {"exec", true, MS_NOEXEC, 0},
        {"noexec", false, MS_NOEXEC, 0},
        {"sync", false, MS_SYNCHRONOUS, 0},
        {"async", true, MS_SYNCHRONOUS, 0},
        {"dirsync", false, MS_DIRSYNC, 0},
        {"mand", false, MS_MANDLOCK, 0},
        {"nomand", true, MS_MANDLOCK, 0},
        {"atime", true, MS_NOATIME, 0},
        {"noatime", false, MS_NOATIME, 0},
        {"diratime", true, MS_NODIRATIME, 0},
        {"nodiratime", false, MS_NODIRATIME, 0},
        {"relatime", false, MS_RELATIME, 0},
        {"norelatime", true, MS_RELATIME, 0},
        {"strictatime", false, MS_STRICTATIME, 0},
        {"nostrictatime", true, MS_STRICTATIME, 0},
        {"lazytime", false, MS_LAZYTIME, 0},
        {"nolazytime", true, MS_LAZYTIME, 0},
        {"silent", false, MS_SILENT, 0},
        {"loud", true, MS_SILENT, 0},
        {"iversion", false, MS_I_VERSION, 0},
        {"noiversion", true, MS_I_VERSION, 0},
        {"bind", false, MS_BIND, 0},
        {"rbind", false, MS_BIND | MS_REC, 0},
        {"private", false, 0, MS_PRIVATE},
        {"rprivate", false, 0, MS_PRIVATE | MS_REC},
        {"shared", false, 0, MS_SHARED},
        {"rshared", false, 0, MS_SHARED | MS_REC},
        {"slave", false, 0, MS_SLAVE},
        {"rslave", false, 0, MS_SLAVE | MS_REC},
        {"unbindable", false, 0, MS_UNBINDABLE},
        {"runbindable", false, 0, MS_UNBINDABLE | MS_REC},
};

/* Options runc or crun understand that cordon does not implement. */
static const struct {
        const char *name;
        const char *why;
} refused_mount_opts[] = {
        {"remount", "remounting an existing mount"},
        {"idmap", "idmapped mounts"},
        {"ridmap", "idmapped mounts"},
        {"rro", "recursive mount attributes"},
        {"rrw", "recursive mount attributes"},
        {"rnosuid", "recursive mount attributes"},
        {"rsuid", "recursive mount attributes"},
        {"rnodev", "recursive mount attributes"},
        {"rdev", "recursive mount attributes"},
        {"rnoexec", "recursive mount attributes"},
        {"rexec", "recursive mount attributes"},
        {"rnoatime", "recursive mount attributes"},
        {"ratime", "recursive mount attributes"},
        {"rrelatime", "recursive mount attributes"},
        {"rnorelatime", "recursive mount attributes"},
        {"rstrictatime", "recursive mount attributes"},
        {"rnostrictatime", "recursive mount attributes"},
        {"rnodiratime", "recursive mount attributes"},
        {"rdiratime", "recursive mount attributes"},
        {"copy-symlink", "crun's copy-symlink"},
        {"src-nofollow", "crun's src-nofollow"},
        {"dest-nofollow", "crun's dest-nofollow"},
};

static const char *const mount_types[] = {"bind", "tmpfs", "proc", "sysfs", "devpts", "mqueue", "cgroup", "cgroup2"};

static int parse_mount_options(struct oci_parser *p, json_t *v, struct oci_mount *m)
{
        _cleanup_free_ char *data = NULL;
        size_t n, data_len = 0;
        int r = oci_check_array(p, v, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                size_t saved = doc_path_push_index(&p->path, i);
                const char *o = NULL;
                char q[DOC_QUOTE_MAX];
                bool known = false;

                r = oci_get_string(p, json_array_get(v, i), &o);
                if (r >= 0 && (o[0] == '\0' || strchr(o, ',')))
                        r = oci_fail(p, "expected one mount option, got %s", doc_quote(q, o, strlen(o)));
                for (size_t k = 0; r >= 0 && k < ELEMENTSOF(mount_opts); k++)
                        if (streq(mount_opts[k].name, o)) {
                                known = true;
                                if (mount_opts[k].clear)
                                        m->flags &= ~mount_opts[k].flag;
                                else
                                        m->flags |= mount_opts[k].flag;
                                if (mount_opts[k].prop)
                                        m->propagation = mount_opts[k].prop;
                        }
                for (size_t k = 0; r >= 0 && k < ELEMENTSOF(refused_mount_opts); k++)
                        if (streq(refused_mount_opts[k].name, o))
                                r = oci_fail(p, "mount option %s is not supported by cordon (%s)",
                                             doc_quote(q, o, strlen(o)), refused_mount_opts[k].why);
                if (r >= 0 && !known && streq(o, "tmpcopyup")) {
                        m->tmpcopyup = true;
                        known = true;
                }
                /* crun's "notmpcopyup" and podman's "nocopyup" ask for the
                 * default (an empty tmpfs). */
                if (r >= 0 && !known && (streq(o, "notmpcopyup") || streq(o, "nocopyup"))) {
                        m->tmpcopyup = false;
                        known = true;
                }
                if (r >= 0 && !known) {
                        size_t len = strlen(o);
                        if (data_len + len + 2 > OCI_PATH_MAX)
                                r = oci_fail(p, "the filesystem options are too long (the limit is %d bytes)",
                                             OCI_PATH_MAX - 1);
                        else {
                                data = xrealloc(data, data_len + len + 2);
                                if (data_len > 0)
                                        data[data_len++] = ',';
                                memcpy(data + data_len, o, len + 1);
                                data_len += len;
                        }
                }
                doc_path_pop(&p->path, saved);
                if (r < 0)
                        return r;
        }
        free(m->data);
        m->data = TAKE_PTR(data);
        return 0;
}

static int parse_mount(struct oci_parser *p, json_t *v, size_t i, void *item, void *ctx)
{
        struct oci_mount *m = item;
        const char *type = NULL;
        char q[DOC_QUOTE_MAX];
        json_t *src;
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;

        if (!oci_member(v, "destination"))
                return oci_fail_at(p, "destination", "required key is missing");
        if ((r = AT(p, v, "destination", oci_get_abs_path(p, it, &m->destination))) < 0 ||
            (r = AT(p, v, "type", oci_get_string(p, it, &type))) < 0 ||
            (r = AT(p, v, "options", parse_mount_options(p, it, m))) < 0)
                return r;
        if ((r = oci_refuse_set(p, v, "uidMappings", "idmapped mounts")) < 0 ||
            (r = oci_refuse_set(p, v, "gidMappings", "idmapped mounts")) < 0)
                return r;

        /* runc: a mount is a bind when its options say so, whatever its
         * type ("none", "bind", or left out). */
        if (m->flags & MS_BIND)
                m->type = xstrdup("bind");
        else if (!type || type[0] == '\0' || streq(type, "none"))
                return oci_fail_at(p, "type", "%s without a \"bind\" or \"rbind\" option names no filesystem",
                                   type && type[0] ? "\"none\"" : "a mount with no type");
        else {
                bool known = false;
                for (size_t k = 0; k < ELEMENTSOF(mount_types); k++)
                        known = known || streq(mount_types[k], type);
                if (!known)
                        return oci_fail_at(
                                p, "type",
                                "filesystem %s is not supported by cordon (bind, tmpfs, proc, sysfs, devpts, "
                                "mqueue, cgroup and cgroup2 are)",
                                doc_quote(q, type, strlen(type)));
                m->type = xstrdup(type);
                if (streq(type, "bind"))
                        m->flags |= MS_BIND;
        }

        src = oci_member(v, "source");
        if (streq(m->type, "bind")) {
                if (!src)
                        return oci_fail_at(p, "source", "required key is missing (a bind mount needs a host path)");
                if ((r = AT(p, v, "source", get_host_path(p, it, &m->source))) < 0)
                        return r;
                /* A bind carries no filesystem data: the options cordon does
                 * not know are left out, as runc passes them to a bind's
                 * mount(2), which ignores them (runtime-tools' binds carry a
                 * tmpfs's "mode=755,size=1k"). Nothing is granted by them. */
                m->data = (free(m->data), NULL);
        } else if (src) {
                if ((r = AT(p, v, "source", oci_dup_string(p, it, &m->source))) < 0)
                        return r;
        }
        if (m->tmpcopyup && !streq(m->type, "tmpfs"))
                return oci_fail_at(p, "options", "\"tmpcopyup\" is only for tmpfs mounts");
        return 0;
}

static void mount_done(struct oci_mount *m)
{
        free(m->destination);
        free(m->type);
        free(m->source);
        free(m->data);
}

static int parse_mounts(struct oci_parser *p, json_t *v, struct oci_spec *s)
{
        return oci_each(p, v, sizeof(*s->mounts), &s->mounts, &s->n_mounts, parse_mount, NULL);
}

/* ---- root, hooks, annotations ---- */

static int parse_root(struct oci_parser *p, json_t *v, struct oci_spec *s)
{
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        if (!oci_member(v, "path"))
                return oci_fail_at(p, "path", "required key is missing");
        if ((r = AT(p, v, "path", get_host_path(p, it, &s->root_path))) < 0 ||
            (r = AT(p, v, "readonly", oci_get_bool(p, it, &s->root_readonly))) < 0)
                return r;
        return 0;
}

static int get_timeout(struct oci_parser *p, json_t *v, struct oci_hook *h)
{
        int64_t t;
        int r = oci_get_int(p, v, 1, INT32_MAX, &t);
        if (r < 0)
                return r;
        h->timeout = (int)t;
        return 0;
}

static int parse_hook(struct oci_parser *p, json_t *v, size_t i, void *item, void *ctx)
{
        struct oci_hook *h = item;
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        if (!oci_member(v, "path"))
                return oci_fail_at(p, "path", "required key is missing");
        if ((r = AT(p, v, "path", oci_get_abs_path(p, it, &h->path))) < 0 ||
            (r = AT(p, v, "args", oci_get_strv(p, it, NULL, &h->args))) < 0 ||
            (r = AT(p, v, "env", oci_get_strv(p, it, check_env, &h->env))) < 0 ||
            (r = AT(p, v, "timeout", get_timeout(p, it, h))) < 0)
                return r;
        return 0;
}

static const char *const hook_names[OCI_HOOK_KINDS] = {
        [OCI_HOOK_PRESTART] = "prestart",
        [OCI_HOOK_CREATE_RUNTIME] = "createRuntime",
        [OCI_HOOK_CREATE_CONTAINER] = "createContainer",
        [OCI_HOOK_START_CONTAINER] = "startContainer",
        [OCI_HOOK_POSTSTART] = "poststart",
        [OCI_HOOK_POSTSTOP] = "poststop",
};

static int parse_hook_list(struct oci_parser *p, json_t *v, struct oci_spec *s, int kind)
{
        return oci_each(p, v, sizeof(struct oci_hook), &s->hooks[kind], &s->n_hooks[kind], parse_hook, NULL);
}

static int parse_hooks(struct oci_parser *p, json_t *v, struct oci_spec *s)
{
        int r = oci_check_object(p, v);
        if (r < 0)
                return r;
        for (int k = 0; k < OCI_HOOK_KINDS; k++)
                if ((r = AT(p, v, hook_names[k], parse_hook_list(p, it, s, k))) < 0)
                        return r;
        return 0;
}

static int annotation_at(struct oci_parser *p, const char *key, json_t *value, void *ctx)
{
        struct oci_spec *s = ctx;
        const char *val;
        int r;

        if (key[0] == '\0')
                return oci_fail(p, "an annotation key must not be empty");
        r = oci_get_string(p, value, &val);
        if (r < 0)
                return r;
        s->annotations = xrealloc(s->annotations, (s->n_annotations + 1) * sizeof(*s->annotations));
        s->annotations[s->n_annotations++] = (struct oci_annotation){xstrdup(key), xstrdup(val)};
        return 0;
}

static int parse_annotations(struct oci_parser *p, json_t *v, struct oci_spec *s)
{
        return oci_each_member(p, v, annotation_at, s);
}

/* maskedPaths and readonlyPaths: each absolute and normalised in place. */
static int normalise_path_list(struct oci_parser *p, const char *key, char **list)
{
        for (size_t i = 0; list && list[i]; i++) {
                size_t saved = doc_path_push_key(&p->path, key), s2 = doc_path_push_index(&p->path, i);
                char *out = NULL;
                int r = oci_normalise_path(p, list[i], &out);
                doc_path_pop(&p->path, s2);
                doc_path_pop(&p->path, saved);
                if (r < 0)
                        return r;
                free(list[i]);
                list[i] = out;
        }
        return 0;
}

/* ---- the document ---- */

static int check_version(struct oci_parser *p, json_t *v, struct oci_spec *s)
{
        char q[DOC_QUOTE_MAX];
        int r = oci_dup_string(p, v, &s->oci_version);
        if (r < 0)
                return r;
        /* Every 1.x is compatible by the spec's own rules (SemVer); 0.x
         * drafts and a future 2 are not. */
        if (!startswith(s->oci_version, "1."))
                return oci_fail(p, "unsupported OCI runtime-spec version %s (cordon reads 1.x)",
                                doc_quote(q, s->oci_version, strlen(s->oci_version)));
        return 0;
}

static int get_process(struct oci_parser *p, json_t *v, struct oci_spec *s)
{
        s->has_process = true;
        return parse_process_obj(p, v, &s->process);
}

static int parse_spec(struct oci_parser *p, json_t *root, struct oci_spec *s)
{
        json_t *v = root, *linux_obj;
        int r;

        if (!oci_member(root, "ociVersion"))
                return oci_fail_at(p, "ociVersion", "required key is missing");
        if (!oci_member(root, "root"))
                return oci_fail_at(p, "root",
                                   "required key is missing (cordon runs Linux containers from a root "
                                   "filesystem)");
        if ((r = AT(p, v, "ociVersion", check_version(p, it, s))) < 0 ||
            (r = AT(p, v, "root", parse_root(p, it, s))) < 0 || (r = AT(p, v, "process", get_process(p, it, s))) < 0 ||
            (r = AT(p, v, "hostname", oci_dup_string(p, it, &s->hostname))) < 0 ||
            (r = AT(p, v, "domainname", oci_dup_string(p, it, &s->domainname))) < 0 ||
            (r = AT(p, v, "mounts", parse_mounts(p, it, s))) < 0 ||
            (r = AT(p, v, "hooks", parse_hooks(p, it, s))) < 0 ||
            (r = AT(p, v, "annotations", parse_annotations(p, it, s))) < 0 ||
            (r = AT(p, v, "linux", oci_parse_linux(p, it, s))) < 0)
                return r;

        /* Other platforms' sections: cordon runs Linux processes only. */
        static const char *const other[] = {"windows", "solaris", "vm", "zos"};
        for (size_t i = 0; i < ELEMENTSOF(other); i++)
                if ((r = oci_refuse_set(p, root, other[i], "cordon runs Linux containers only")) < 0)
                        return r;

        linux_obj = oci_member(root, "linux");
        if (!s->masked_paths)
                s->masked_paths = xcalloc(1, sizeof(char *));
        if (!s->readonly_paths)
                s->readonly_paths = xcalloc(1, sizeof(char *));
        {
                size_t saved = linux_obj ? doc_path_push_key(&p->path, "linux") : p->path.len;
                r = normalise_path_list(p, "maskedPaths", s->masked_paths);
                if (r >= 0)
                        r = normalise_path_list(p, "readonlyPaths", s->readonly_paths);
                doc_path_pop(&p->path, saved);
                if (r < 0)
                        return r;
        }

        /* runc refuses these combinations; so does cordon, with the path. */
        /* (a joined uts namespace counts, as for runc: a pod's containers
         * carry the pod's hostname, which the pod's namespace has already) */
        if (s->hostname && s->hostname[0] && !oci_has_ns(s, CLONE_NEWUTS))
                return oci_fail_at(p, "hostname", "setting a hostname needs a new uts namespace in linux.namespaces");
        if (s->domainname && s->domainname[0] && !oci_has_ns(s, CLONE_NEWUTS))
                return oci_fail_at(p, "domainname",
                                   "setting a domainname needs a new uts namespace in linux.namespaces");
        if ((s->n_uid_mappings || s->n_gid_mappings) && !oci_has_ns(s, CLONE_NEWUSER)) {
                size_t saved = doc_path_push_key(&p->path, "linux");
                r = oci_fail_at(p, s->n_uid_mappings ? "uidMappings" : "gidMappings",
                                "id mappings need a user namespace in linux.namespaces");
                doc_path_pop(&p->path, saved);
                return r;
        }
        return 0;
}

void oci_spec_free(struct oci_spec *s)
{
        if (!s)
                return;
        free(s->oci_version);
        free(s->bundle);
        free(s->root_path);
        free(s->hostname);
        free(s->domainname);
        oci_process_done(&s->process);
        for (size_t i = 0; i < s->n_mounts; i++)
                mount_done(&s->mounts[i]);
        free(s->mounts);
        for (size_t i = 0; i < s->n_namespaces; i++)
                free(s->namespaces[i].path);
        free(s->namespaces);
        free(s->uid_mappings);
        free(s->gid_mappings);
        free(s->cgroups_path);
        free(s->resources.cpus);
        free(s->resources.mems);
        strv_free(s->masked_paths);
        strv_free(s->readonly_paths);
        for (size_t i = 0; i < s->n_sysctls; i++) {
                free(s->sysctls[i].key);
                free(s->sysctls[i].value);
        }
        free(s->sysctls);
        free(s->mount_label);
        oci_seccomp_free(s->seccomp);
        for (int k = 0; k < OCI_HOOK_KINDS; k++) {
                for (size_t i = 0; i < s->n_hooks[k]; i++) {
                        free(s->hooks[k][i].path);
                        strv_free(s->hooks[k][i].args);
                        strv_free(s->hooks[k][i].env);
                }
                free(s->hooks[k]);
        }
        for (size_t i = 0; i < s->n_annotations; i++) {
                free(s->annotations[i].key);
                free(s->annotations[i].value);
        }
        free(s->annotations);
        free(s);
}

static void oci_spec_freep(struct oci_spec **s)
{
        oci_spec_free(*s);
}

/* jansson's message quotes the text near the error, which may be any bytes. */
static void sanitise(char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
                        *s = '?';
}

/* jansson refuses integers above INT64_MAX, which Go writes for uint64
 * fields (RLIM_INFINITY is 18446744073709551615; a seccomp argument may
 * have its top bit set). Such a literal, outside strings, becomes the
 * string OCI_U64_MARK "digits", which only oci_get_u64() accepts: a field
 * that wants a signed integer still refuses it. NULL: nothing to widen. */
/* buf[start] is a digit that begins a number: true when the literal is an
 * integer above INT64_MAX and at most UINT64_MAX; *ret_end is past it. */
static bool big_literal(const char *buf, size_t len, size_t start, size_t *ret_end)
{
        size_t i = start, n;

        while (i < len && buf[i] >= '0' && buf[i] <= '9')
                i++;
        *ret_end = i;
        n = i - start;
        if (n < 19 || n > 20 || (i < len && (buf[i] == '.' || buf[i] == 'e' || buf[i] == 'E')))
                return false;
        if (n == 19)
                return memcmp(buf + start, "9223372036854775807", 19) > 0;
        return memcmp(buf + start, "18446744073709551615", 20) <= 0;
}

static char *widen_u64(const char *buf, size_t len, size_t *ret_len)
{
        _cleanup_free_ char *out = NULL;
        size_t o = 0, copied = 0;
        bool in_string = false;

        for (size_t i = 0; i < len;) {
                size_t start = i, end;

                if (in_string) {
                        if (buf[i] == '\\')
                                i++;
                        else if (buf[i] == '"')
                                in_string = false;
                        i++;
                        continue;
                }
                if (buf[i] == '"') {
                        in_string = true;
                        i++;
                        continue;
                }
                /* a digit that starts a number (not one inside -12, 1.5 or 1e30) */
                if (buf[i] < '0' || buf[i] > '9' ||
                    (i > 0 && ((buf[i - 1] >= '0' && buf[i - 1] <= '9') || strchr("-.eE+", buf[i - 1])))) {
                        i++;
                        continue;
                }
                if (!big_literal(buf, len, start, &end)) {
                        i = end;
                        continue;
                }
                /* room for what lies before, the quoted mark and the digits */
                out = xrealloc(out, o + (start - copied) + strlen(OCI_U64_MARK_JSON) + (end - start) + 3);
                memcpy(out + o, buf + copied, start - copied);
                o += start - copied;
                o += (size_t)sprintf(out + o, "\"%s%.*s\"", OCI_U64_MARK_JSON, (int)(end - start), buf + start);
                copied = i = end;
        }
        if (!out)
                return NULL;
        out = xrealloc(out, o + (len - copied) + 1);
        memcpy(out + o, buf + copied, len - copied);
        *ret_len = o + (len - copied);
        return TAKE_PTR(out);
}

static int set_error(char **ret_error, char *msg)
{
        if (ret_error)
                *ret_error = msg;
        else
                free(msg);
        return -EINVAL;
}

static json_t *load_json(const char *buf, size_t len, const char *origin, char **ret_error, int *ret)
{
        _cleanup_free_ char *wide = NULL;
        size_t wide_len = 0;
        json_error_t jerr;
        json_t *root;

        if (len > OCI_MAX_BYTES) {
                *ret = -EFBIG;
                if (ret_error)
                        *ret_error = xasprintf("%s: larger than %d MiB (%zu bytes)", origin, OCI_MAX_BYTES >> 20, len);
                return NULL;
        }
        wide = widen_u64(buf, len, &wide_len);
        root = json_loadb(wide ? wide : buf, wide ? wide_len : len,
                          JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL | JSON_DECODE_ANY, &jerr);
        if (!root) {
                sanitise(jerr.text);
                *ret = set_error(ret_error, xasprintf("%s:%d:%d: %s", origin, jerr.line, jerr.column, jerr.text));
                return NULL;
        }
        if (!json_is_object(root)) {
                *ret = set_error(ret_error, xasprintf("%s: expected a JSON object at the top level, got %s", origin,
                                                      oci_json_kind(root)));
                json_decref(root);
                return NULL;
        }
        return root;
}

int oci_spec_parse(const char *buf, size_t len, const char *bundle, struct oci_spec **ret, char **ret_error)
{
        _cleanup_(oci_spec_freep) struct oci_spec *s = NULL;
        _cleanup_(json_decrefp) json_t *root = NULL;
        _cleanup_free_ char *origin = NULL, *abs_bundle = NULL;
        struct oci_parser p = {0};
        int r = 0;

        if (bundle && bundle[0] != '/') {
                _cleanup_free_ char *cwd = getcwd(NULL, 0);
                if (!cwd)
                        return set_error(ret_error, xasprintf("%s: cannot make the bundle path absolute: %s", bundle,
                                                              strerror(errno)));
                abs_bundle = xasprintf("%s/%s", cwd, bundle);
        } else if (bundle)
                abs_bundle = xstrdup(bundle);
        origin = abs_bundle ? xasprintf("%s/config.json", abs_bundle) : xstrdup("config.json");
        p.origin = origin;

        root = load_json(buf, len, origin, ret_error, &r);
        if (!root)
                return r;

        s = xcalloc(1, sizeof(*s));
        s->resources = OCI_RESOURCES_UNSET;
        if (abs_bundle) {
                char *norm = NULL;
                p.bundle = abs_bundle;
                r = oci_normalise_path(&p, abs_bundle, &norm);
                if (r < 0)
                        goto fail;
                s->bundle = norm;
                p.bundle = s->bundle;
        }
        r = parse_spec(&p, root, s);
        if (r < 0)
                goto fail;
        *ret = TAKE_PTR(s);
        return 0;
fail:
        if (ret_error)
                *ret_error = p.error ? TAKE_PTR(p.error) : xasprintf("%s: invalid configuration", origin);
        free(p.error);
        return r;
}

int oci_process_parse(const char *buf, size_t len, struct oci_process *ret, char **ret_error)
{
        _cleanup_(json_decrefp) json_t *root = NULL;
        struct oci_parser p = {.origin = "process"};
        struct oci_process proc = {0};
        int r = 0;

        root = load_json(buf, len, p.origin, ret_error, &r);
        if (!root)
                return r;
        r = parse_process_obj(&p, root, &proc);
        if (r < 0) {
                oci_process_done(&proc);
                if (ret_error)
                        *ret_error = p.error ? TAKE_PTR(p.error) : xasprintf("process: invalid process");
                free(p.error);
                return r;
        }
        *ret = proc;
        return 0;
}

int oci_resources_parse(const char *buf, size_t len, const char *origin, struct oci_resources *ret, char **ret_error)
{
        _cleanup_(json_decrefp) json_t *root = NULL;
        struct oci_parser p = {.origin = origin};
        struct oci_resources res = OCI_RESOURCES_UNSET;
        int r = 0;

        root = load_json(buf, len, p.origin, ret_error, &r);
        if (!root)
                return r;
        r = oci_parse_resources(&p, root, &res);
        if (r < 0) {
                oci_resources_done(&res);
                if (ret_error)
                        *ret_error = p.error ? TAKE_PTR(p.error) : xasprintf("%s: invalid resources", origin);
                free(p.error);
                return r;
        }
        *ret = res;
        return 0;
}

void oci_resources_done(struct oci_resources *r)
{
        if (!r)
                return;
        free(r->cpus);
        free(r->mems);
        r->cpus = r->mems = NULL;
}

int oci_spec_load(const char *bundle, struct oci_spec **ret, char **ret_error)
{
        _cleanup_free_ char *path = NULL, *buf = NULL, *real = NULL;
        _cleanup_close_ int fd = -1;
        struct stat st;
        ssize_t n;

        /* The bundle as the kernel resolves it: "--bundle ../b" or a
         * symlinked bundle are fine for runc, and the paths built on it
         * (root.path, relative bind sources) must not carry a "..". */
        real = realpath(bundle, NULL);
        if (!real) {
                int r = negative_errno();
                if (ret_error)
                        *ret_error = xasprintf("%s: cannot resolve the bundle directory: %s", bundle, strerror(-r));
                return r;
        }
        bundle = real;
        path = xasprintf("%s/config.json", bundle);
        /* O_NONBLOCK: a FIFO would otherwise block the open before fstat()
         * could refuse it. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                int r = negative_errno();
                if (ret_error)
                        *ret_error = xasprintf("%s: cannot open: %s", path, strerror(-r));
                return r;
        }
        if (fstat(fd, &st) < 0) {
                int r = negative_errno();
                if (ret_error)
                        *ret_error = xasprintf("%s: cannot stat: %s", path, strerror(-r));
                return r;
        }
        if (!S_ISREG(st.st_mode)) {
                if (ret_error)
                        *ret_error = xasprintf("%s: not a regular file", path);
                return -EINVAL;
        }
        if (st.st_size > OCI_MAX_BYTES) {
                if (ret_error)
                        *ret_error = xasprintf("%s: larger than %d MiB (%lld bytes)", path, OCI_MAX_BYTES >> 20,
                                               (long long)st.st_size);
                return -EFBIG;
        }
        /* one byte past the limit: the file may have grown since fstat() */
        buf = xmalloc(OCI_MAX_BYTES + 1);
        n = read_full(fd, buf, OCI_MAX_BYTES + 1);
        if (n < 0) {
                if (ret_error)
                        *ret_error = xasprintf("%s: cannot read: %s", path, strerror((int)-n));
                return (int)n;
        }
        return oci_spec_parse(buf, (size_t)n, bundle, ret, ret_error);
}

const char *oci_annotation(const struct oci_spec *s, const char *key)
{
        for (size_t i = 0; s && i < s->n_annotations; i++)
                if (streq(s->annotations[i].key, key))
                        return s->annotations[i].value;
        return NULL;
}
