/* sentry/oci/: the OCI front end, `cordon oci ...` (also run as
 * `cordon-oci`). This is the room's one public header.
 *
 * What the room promises:
 *  - runc's command line: its global options and the verbs create, run,
 *    start, state, kill, delete, list, ps, exec, update, pause, resume,
 *    features, spec and version, so that podman (through conmon), containerd
 *    (through its runc shim) and Kubernetes (a RuntimeClass) can run
 *    containers under cordon (sentry_oci());
 *  - a bundle's config.json (and an exec --process file) parsed strictly
 *    into the plain C below: a wrong type or value is an error naming its
 *    JSON path ("process.user.uid: expected an unsigned integer"), and the
 *    parse touches nothing on the host but the files it reads;
 *  - what maps onto cordon made from it: the container's cordon policy
 *    (oci_spec_policy) and its seccomp program (oci_seccomp_compile).
 *
 * What it never does: loosen cordon's own seccomp filter, view or egress
 * gate because a config asks. A config can only take more away (its
 * seccomp profile runs on top of cordon's filter, its limits and paths
 * narrow the policy where both speak). What cordon cannot honour is
 * refused, naming the field, never dropped silently.
 *
 * Two halves meet here: the parser (parser.c, config.c, linux.c,
 * seccomp.c, policy.c, sharing oci-internal.h) and the runtime
 * (runtime.c and the files runtime-internal.h lists), which knows the
 * parser through this header alone. The OCI runtime spec's config.json is
 * the reference for every field. */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sentry/policy/policy.h"
#include "sentry/sentry.h"

/* The annotation naming cordon's policy for a container: an absolute path
 * to a JSON policy file, or the policy inline (a value starting with '{').
 * Without it the container gets the built-in default: no egress at all.
 * (podman splits --annotation values as CSV: inline JSON needs quoting
 * there, a file path does not.) */
#define OCI_POLICY_ANNOTATION "dev.cordon.policy"

struct oci_mount {
        /* absolute, normalised, inside the container */
        char *destination;
        /* "bind" (also when options say bind/rbind), "tmpfs", "proc", "sysfs",
         * "devpts", "mqueue", "cgroup", "cgroup2" */
        char *type;
        /* bind: an absolute host path (a relative one is taken from the
         * bundle); others: as given, may be NULL */
        char *source;
        /* MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC,
         * MS_*ATIME, ... from options */
        unsigned long flags;
        /* MS_PRIVATE, MS_SLAVE, MS_SHARED, MS_UNBINDABLE (| MS_REC), or 0 */
        unsigned long propagation;
        /* the remaining options joined by ',' ("size=65536k,mode=755"), or NULL */
        char *data;
        /* tmpfs: fill it with what the image has at destination (runc/crun "tmpcopyup") */
        bool tmpcopyup;
};

struct oci_rlimit {
        int resource; /* RLIMIT_* */
        uint64_t soft, hard;
};

struct oci_user {
        uint32_t uid, gid;
        uint32_t *additional_gids;
        size_t n_additional_gids;
        bool has_umask;
        uint32_t umask;
};

/* Capability sets as masks of (1ULL << CAP_*). A well-formed name cordon
 * does not know ("CAP_TEST") is in no mask: it is dropped, and said in
 * ignored for the runtime to log as a warning (runtime-spec 1.1: a
 * capability that cannot be granted is logged, not fatal; runc >= 1.1 does
 * the same); a value that is not a "CAP_..." string is an error. */
struct oci_caps {
        uint64_t bounding, effective, inheritable, permitted, ambient;
        char **ignored; /* NULL-terminated warnings naming set, index and value; NULL: none */
};

struct oci_process {
        bool terminal;
        char **args; /* NULL-terminated, at least one */
        char **env;  /* NULL-terminated "K=V" (may be empty) */
        char *cwd;   /* absolute */
        struct oci_user user;
        struct oci_rlimit *rlimits;
        size_t n_rlimits;
        bool no_new_privileges;
        struct oci_caps caps;
        bool has_oom_score_adj;
        int oom_score_adj;
        unsigned console_height, console_width; /* 0: not given */
        /* LSM labels, as given (NULL: none). cordon loads no LSM policy of its
         * own: the runtime applies them where the host's LSM is enabled, or
         * refuses the container. */
        char *apparmor_profile;
        char *selinux_label;
};

struct oci_namespace {
        int type;   /* CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWUSER,
                       CLONE_NEWCGROUP, CLONE_NEWTIME */
        char *path; /* join this one instead of creating: NULL for a new one */
};

struct oci_id_mapping {
        uint32_t container_id, host_id, size;
};

/* linux.seccomp, compiled with libseccomp (oci_seccomp_compile). Actions are
 * SCMP_ACT_* values (SCMP_ACT_ERRNO(n) already carries errnoRet). */
struct oci_seccomp_arg {
        unsigned index;
        uint64_t value, value_two;
        int op; /* enum scmp_compare */
};
struct oci_seccomp_rule {
        char **names; /* NULL-terminated */
        uint32_t action;
        struct oci_seccomp_arg *args;
        size_t n_args;
};
struct oci_seccomp {
        uint32_t default_action;
        uint32_t *arches; /* SCMP_ARCH_* */
        size_t n_arches;
        struct oci_seccomp_rule *rules;
        size_t n_rules;
        unsigned flags; /* SECCOMP_FILTER_FLAG_* from "flags" */
};

struct oci_hook {
        char *path;
        char **args; /* NULL-terminated; may be NULL */
        char **env;  /* NULL-terminated; may be NULL */
        int timeout; /* seconds; 0: none */
};
enum oci_hook_kind {
        OCI_HOOK_PRESTART,
        OCI_HOOK_CREATE_RUNTIME,
        OCI_HOOK_CREATE_CONTAINER,
        OCI_HOOK_START_CONTAINER,
        OCI_HOOK_POSTSTART,
        OCI_HOOK_POSTSTOP,
        OCI_HOOK_KINDS
};

struct oci_resources {
        int64_t memory_limit;       /* bytes; -1: not given (also for 0 or -1 in the file: unlimited) */
        int64_t memory_swap;        /* -1: not given */
        int64_t pids_limit;         /* -1: not given */
        int64_t cpu_quota;          /* µs per period; -1: not given */
        uint64_t cpu_period;        /* µs; 0: not given */
        uint64_t cpu_shares;        /* 0: not given */
        char *cpus, *mems;          /* cpuset lists, syntax checked; NULL: not given (also "") */
        int64_t memory_reservation; /* bytes; -1: not given */
        int64_t memory_swappiness;  /* 0..100; -1: not given */
        int64_t kernel_tcp;         /* bytes; -1: not given */
        bool disable_oom_killer;
};

/* Nothing given: every field at its "not given" value. */
#define OCI_RESOURCES_UNSET                               \
        ((struct oci_resources){.memory_limit = -1,       \
                                .memory_swap = -1,        \
                                .pids_limit = -1,         \
                                .cpu_quota = -1,          \
                                .memory_reservation = -1, \
                                .memory_swappiness = -1,  \
                                .kernel_tcp = -1})

struct oci_annotation {
        char *key, *value;
};

/* linux.sysctl (struct oci_sysctl, sentry/sentry.h): only keys that belong to a namespace the container has
 * (net.*, kernel.shm*, kernel.msg*, kernel.sem, fs.mqueue.*, and
 * kernel.hostname/domainname) pass the parser, and only when linux.namespaces
 * lists that namespace. When it is joined by path the runtime must refuse
 * a path that is the host's own namespace (runc compares it with
 * /proc/self/ns/...), as the parser opens nothing. */

struct oci_spec {
        char *oci_version;
        char *bundle;    /* absolute */
        char *root_path; /* absolute (root.path relative to the bundle made absolute) */
        bool root_readonly;
        char *hostname; /* NULL: not given */
        char *domainname;
        bool has_process;
        struct oci_process process;
        struct oci_mount *mounts;
        size_t n_mounts;
        struct oci_namespace *namespaces;
        size_t n_namespaces;
        struct oci_id_mapping *uid_mappings, *gid_mappings;
        size_t n_uid_mappings, n_gid_mappings;
        struct oci_resources resources;
        char *cgroups_path;    /* NULL: not given */
        char **masked_paths;   /* NULL-terminated (may be empty) */
        char **readonly_paths; /* NULL-terminated (may be empty) */
        struct oci_sysctl *sysctls;
        size_t n_sysctls;
        char *mount_label; /* linux.mountLabel (SELinux), NULL: none */
        /* linux.rootfsPropagation: MS_SHARED, MS_SLAVE, MS_PRIVATE or
         * MS_UNBINDABLE (| MS_REC); 0: not given */
        unsigned long rootfs_propagation;
        struct oci_seccomp *seccomp; /* NULL: none */
        struct oci_hook *hooks[OCI_HOOK_KINDS];
        size_t n_hooks[OCI_HOOK_KINDS];
        struct oci_annotation *annotations;
        size_t n_annotations;
};

/* Reads BUNDLE/config.json (BUNDLE resolved with realpath(3) first, so
 * s->bundle is canonical). 0, or -errno (-EINVAL: a bad document) with
 * *ret_error a malloc'd message naming the file and the JSON path. */
int oci_spec_load(const char *bundle, struct oci_spec **ret, char **ret_error);
/* The same from memory; bundle (absolute, or taken from the current
 * directory; without "..") makes relative paths absolute. NULL: relative
 * paths in the document are errors. */
int oci_spec_parse(const char *buf, size_t len, const char *bundle, struct oci_spec **ret, char **ret_error);
void oci_spec_free(struct oci_spec *s);
/* `exec --process FILE`: a process object alone. */
int oci_process_parse(const char *buf, size_t len, struct oci_process *ret, char **ret_error);
void oci_process_done(struct oci_process *p);
/* `update --resources`: a LinuxResources document alone (what
 * linux.resources holds), parsed by create's rules (what create refuses is
 * refused, errors name the field after origin); *ret starts from
 * OCI_RESOURCES_UNSET. oci_resources_done frees the lists. */
int oci_resources_parse(const char *buf, size_t len, const char *origin, struct oci_resources *ret, char **ret_error);
void oci_resources_done(struct oci_resources *r);
/* The value of annotation key, or NULL. */
const char *oci_annotation(const struct oci_spec *s, const char *key);

/* The cordon policy a container runs under: the OCI_POLICY_ANNOTATION
 * policy (or the default; one naming its own source is refused), with the
 * root as its template source (no digest), binds from "bind" mounts (except
 * those onto /dev/shm, /dev/pts, /dev/mqueue, /etc/resolv.conf and
 * /etc/hosts, which cordon provides itself; other targets under /dev or
 * /proc are refused), linux.maskedPaths as hidden rules, linux.readonlyPaths
 * as read-only rules (rules sorted parents first), and linux.resources as
 * limits (where the policy also sets one, the stricter wins). Not in the
 * policy: root.readonly (see policy.c: a rule on "/" cannot leave the
 * tmpfs mounts writable), the non-bind mounts. 0, or -errno with
 * *ret_error. */
int oci_spec_policy(const struct oci_spec *s, struct policy **ret, char **ret_error);

/* linux.seccomp as a classic BPF program for the native architecture
 * (ret->filter malloc'd), applied in addition to cordon's own filter.
 * Refuses SCMP_ACT_NOTIFY (cordon's filter owns the listener). Syscall
 * names libseccomp does not know are skipped, as runc does. */
int oci_seccomp_compile(const struct oci_seccomp *s, struct sock_fprog *ret, char **ret_error);

/* `cordon oci VERB ...`, or the program run as `cordon-oci`: runc's command
 * line (runtime.c); argv[0] is the program or "oci". Returns the exit
 * status. */
int sentry_oci(int argc, char **argv);
