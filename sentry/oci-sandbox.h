/* sentry/ private: what an OCI container asks of its sandbox beyond a
 * cordon policy (sentry/oci-runtime.c fills it from config.json; run.c and
 * initd.c apply it in the sandbox's init). Everything here only narrows
 * what the sandbox may do, except the identity, whose host ids are chosen
 * by cordon (oci_host_id) and never host root. */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A container's non-root uid or gid N runs as host id OCI_HOST_ID_BASE + N
 * (root in the container is host nobody, as for every cordon sandbox):
 * ids no host account uses, so a process that got out of the view would
 * meet the host's files as a stranger. */
#define OCI_HOST_ID_BASE 2147483648u
#define OCI_MAX_IDS      32 /* additional gids mapped */
#define OCI_MAX_PRESERVE 4  /* --preserve-fds (the set-up channel carries 8 fds: 3 stdio, the start gate) */

struct oci_sysctl; /* sentry/oci.h */

struct oci_limit {
        int resource;
        uint64_t soft, hard;
};

/* A mount the view does not already provide, made by init inside the
 * sandbox's own mount namespace after the view is built (tmpfs, mqueue). */
struct oci_extra_mount {
        const char *destination;
        const char *fstype;
        unsigned long flags;
        const char *data;
};

struct oci_sandbox {
        const char *hostname; /* NULL: "cordon" */
        bool set_user;        /* false: the sandbox's root (uid 0) */
        uint32_t uid, gid;
        uint32_t groups[OCI_MAX_IDS];
        size_t n_groups;
        struct oci_limit *rlimits;
        size_t n_rlimits;
        /* linux.seccomp compiled (len 0: none): installed in every run just
         * before its exec, on top of cordon's own filter */
        struct sock_fprog seccomp;
        unsigned seccomp_flags;
        struct oci_extra_mount *mounts;
        size_t n_mounts;
        /* linux.sysctl (names checked by the parser: namespaced, no ".."
         * or "/"), written by init in the sandbox's own namespaces */
        const struct oci_sysctl *sysctls;
        size_t n_sysctls;
        /* process.umask and process.oomScoreAdj, set by init and inherited
         * by every process of the container */
        bool has_umask, has_oom_score_adj;
        uint32_t umask;
        int oom_score_adj;
};

/* The host id for container id n (0 stays the sandbox's root identity). */
static inline uint32_t oci_host_id(uint32_t n, uint32_t root_host_id)
{
        return n == 0 ? root_host_id : OCI_HOST_ID_BASE + n;
}
