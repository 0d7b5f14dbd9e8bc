/* fs/: the sandbox's private view of the filesystem, and the handlers that
 * emulate path syscalls against it. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "notify/notify.h"

struct fs_bind {
        const char *source; /* host path */
        const char *target; /* absolute path in the view */
        bool read_only;
};

enum fs_access { FS_HIDDEN, FS_READ, FS_READ_WRITE };

struct fs_rule {
        const char *path; /* absolute path in the view */
        enum fs_access access;
        int exec; /* -1 unchanged, 0 no-exec, 1 exec allowed */
};

struct fs_view_spec {
        const struct fs_bind *binds;
        size_t n_binds;
        const struct fs_rule *rules;
        size_t n_rules;
        const char *home;        /* private writable home, e.g. "/root" */
        int64_t writable_bytes;  /* size of the writable layer; <= 0: tmpfs default (half of RAM) */
        const char *resolv_conf; /* contents of the view's /etc/resolv.conf (NULL: the host's) */
        const char *hosts;       /* contents of the view's /etc/hosts (NULL: the host's) */
};

/* Runs in the child, inside its new user, mount and pid namespaces and while
 * it still holds its capabilities there: assembles the default view (host
 * system directories read-only, /etc minus secrets, private /tmp and home,
 * minimal /dev, its own /proc with host-revealing entries masked, the binds
 * and rules), then pivots into it and detaches the host's tree. On failure
 * returns -errno and writes which step and path failed into err. */
int fs_view_enter(const struct fs_view_spec *spec, char *err, size_t errsize);

/* --- Landlock (landlock.c): a kernel floor beneath the view --- */

/* The running kernel's Landlock ABI version (1..), or -ENOSYS (not built
 * in), -EOPNOTSUPP (disabled at boot) or another -errno. */
int fs_landlock_abi(void);
/* Restricts the calling process and its future children with a Landlock
 * ruleset matching the view: read and execute across it (no execute beneath
 * exec:false rules, where Landlock can say so), write only in its writable
 * places. Runs in the child inside the view, after no_new_privs. Returns the
 * ABI enforced (> 0); 0 when the kernel cannot enforce it usefully (no
 * Landlock, disabled, ABI 1), with the reason in err; -errno with err filled
 * when Landlock is there but the ruleset could not be applied, which the
 * caller must treat as fatal (fail closed). err: at least 1024 bytes. */
int fs_landlock_apply(const struct fs_view_spec *spec, char *err, size_t errsize);

/* What the fs handlers need from the sentry. */
struct fs_context {
        int root_fd;    /* the view's root (the child's /proc/PID/root), O_PATH */
        uid_t fsuid;    /* the child's uid as seen from the sentry's namespace */
        dev_t proc_dev; /* st_dev of the view's /proc: files there are opened by the proc agent */
        gid_t fsgid;
        bool keep_groups; /* unprivileged: setgroups is denied to us and to the
                             child alike, so both keep the user's groups */
        /* the view's mount ids, sorted: a relative walk must start on one */
        uint64_t *mount_ids;
        size_t n_mount_ids;
        /* the proc agent (agent.c); agent_pid 0 when not started */
        pid_t agent_pid;
        int agent_sock;
        pthread_mutex_t agent_lock;
};

/* qsort/bsearch comparator for mount ids */
int fs_cmp_u64(const void *a, const void *b);

/* Starts the proc agent in the sandbox's user namespace (userns_fd): /proc
 * files that render ids for their opener are opened there, so the command
 * reads its own ids. Call while single-threaded (before the engine). */
int fs_agent_start(struct fs_context *ctx, int userns_fd);
void fs_agent_stop(struct fs_context *ctx);

/* notify worker thread_init: gives the calling thread its own fs context,
 * chroots it into the view, and takes the child's filesystem identity (fsuid,
 * fsgid, no groups, no capability but CAP_SYS_PTRACE for /proc and memory
 * access) so that every open it makes is checked as the child's would be.
 * userdata is a struct fs_context. */
int fs_worker_init(void *userdata);

/* Emulates open(2), creat(2), openat(2) and openat2(2) against the view. */
int fs_handle_open(struct notify_call *call, struct notify_verdict *ret);
