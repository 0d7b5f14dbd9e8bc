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
        /* A template root (policy source kind "template"): the view's root is
         * an overlay with the template as its read-only lower layer and its
         * upper layer in the writable layer. NULL: the built-in default. */
        const char *template_path;
        int template_fd;      /* the template directory as the sentry opened (and hashed) it; -1 none */
        int template_tree_fd; /* fs_template_idmapped's detached mount of it, or -1 (see there) */
};

/* Sentry side, when it runs as host root: a detached, read-only, idmapped
 * copy of the template directory template_fd in which the template's owners
 * appear through the sandbox's user namespace (userns_fd): host root's files
 * as the sandbox's root. Without it, overlayfs in the sandbox's namespace
 * cannot copy a root-owned file up (the owner has no id there). Hand the fd
 * to the child as fs_view_spec.template_tree_fd. -errno on failure (for
 * instance a filesystem that does not support idmapped mounts). */
int fs_template_idmapped(int template_fd, int userns_fd, int *ret_fd);

/* Runs in the child, inside its new user, mount and pid namespaces and while
 * it still holds its capabilities there: assembles the view (the template's
 * overlay, or the default: host system directories read-only, /etc minus
 * secrets), then on either root private /tmp and home, a minimal /dev, its
 * own /proc with host-revealing entries masked, the binds and the rules;
 * then pivots into it and detaches the host's tree. On failure
 * returns -errno and writes which step and path failed into err. */
int fs_view_enter(const struct fs_view_spec *spec, char *err, size_t errsize);

/* "sha256:" and 64 hex digits and a NUL */
#define FS_DIGEST_SIZE 72

/* Computes the digest of the tree under dirfd (fs/digest.c defines the exact
 * format): a stable walk, never following symlinks nor crossing mounts,
 * sorted by path, over every entry's path, type, mode, size, symlink target
 * and contents. Writes "sha256:<hex>" into ret_digest. On failure returns
 * -errno and writes which path and what failed into err. */
int fs_digest_tree(int dirfd, char *err, size_t errsize, char ret_digest[FS_DIGEST_SIZE]);

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
