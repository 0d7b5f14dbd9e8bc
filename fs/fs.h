/* fs/: the sandbox's private view of the filesystem, and the handlers that
 * emulate path syscalls against it.
 *
 * Promises: every path the handlers resolve stays inside the view
 * (openat2 RESOLVE_IN_ROOT, or a worker confined to the view's root), and
 * a decision is taken on the sentry's own copy of child memory.
 *
 * Never: it includes net/ or any sentry/ room (only common/ and notify/'s
 * handler contract), and prints nothing: errors come back as -errno with
 * the path and the rule in a message buffer for the core to show. */
#pragma once

#include <stdatomic.h>

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

/* FS_MASKED: an OCI maskedPaths entry, shown empty and read-only by the
 * mount view (runc's /dev/null or empty tmpfs), not hidden: path calls are
 * not trapped for it, and it reads as what it is, an empty mask. */
enum fs_access { FS_HIDDEN, FS_READ, FS_READ_WRITE, FS_MASKED };
/* Whether the mount view shows an empty mask at a rule's path (hidden and
 * masked alike): nothing there to read, write or run. */
static inline bool fs_access_masks(enum fs_access a)
{
        return a == FS_HIDDEN || a == FS_MASKED;
}

struct fs_rule {
        const char *path; /* absolute path in the view */
        enum fs_access access;
        int exec; /* -1 unchanged, 0 no-exec, 1 exec allowed */
        /* "action": "ask": writes beneath (access read-write) and execs
         * beneath (exec 1) wait for a person's decision (notify_ask) */
        bool ask;
};

struct fs_ids;

struct fs_view_spec {
        const struct fs_bind *binds;
        size_t n_binds;
        const struct fs_rule *rules;
        size_t n_rules;
        const char *home;        /* private writable home, e.g. "/root" */
        int64_t writable_bytes;  /* size of the writable layer; <= 0: tmpfs default (half of RAM) */
        const char *resolv_conf; /* contents of the view's /etc/resolv.conf (NULL: the host's) */
        const char *hosts;       /* contents of the view's /etc/hosts (NULL: the host's) */
        /* contents of the view's /etc/ssl/certs/ca-certificates.crt (the
         * host's CAs and the sandbox's own, net/broker.c); NULL: the host's */
        const char *ca_bundle;
        /* A template root (policy source kind "template"): the view's root is
         * an overlay with the template as its read-only lower layer and its
         * upper layer in the writable layer. NULL: the built-in default. */
        /* NULL: init opens each bind's source itself, as the sandbox's
         * identity. Else one fd per bind, made by the sentry: a detached tree
         * of a bind the caller is entitled to (an OCI engine's, running as
         * root, from directories only root may enter, as runc would), or a
         * read-write bind's idmapped tree (fs_bind_idmapped); -1 for a bind
         * init opens itself. */
        const int *bind_fds;
        const char *template_path;
        int template_fd;      /* the template directory as the sentry opened (and hashed) it; -1 none */
        int template_tree_fd; /* fs_template_idmapped's detached mount of it, or -1 (see there) */
        /* a template root read-only too (an OCI root.readonly): its own
         * mount only, so /dev/shm and the binds mounted over it stay as
         * they are; no private /tmp, /var/tmp, /run or home is mounted
         * over it (runc's read-only root has none: the config's own
         * tmpfs mounts are the writable places) */
        bool root_readonly;
        /* An OCI container's root as runc runs it: no private upper layer;
         * the container writes into the template itself (an overlay's own
         * upper directory, or the plain directory) through
         * template_tree_fd, fs_template_idmapped's writable mount of it.
         * The private /tmp, /var/tmp, /run and home are not mounted over
         * it either: they are the template's. */
        bool root_write_through;
        /* An OCI config's own mounts under /dev (devpts at /dev/pts, tmpfs,
         * mqueue at /dev/mqueue), made as configured and in this order in
         * the view's /dev instead of cordon's devpts and its /dev/shm on the
         * writable layer (each of those stays when nothing replaces it);
         * dev_data: the tmpfs options of /dev itself. NULL / 0: cordon's. */
        const struct fs_dev_mount *dev_mounts;
        size_t n_dev_mounts;
        const char *dev_data;
        /* A detached tree the sentry cloned (an OCI engine's own /dev/shm
         * tmpfs, which a pod's containers share) attached at /dev/shm
         * instead of the writable layer's; -1: none */
        int shm_tree_fd;
        /* Directories made in the root where missing, before it is made
         * read-only: the mount points of what is mounted on it later (an
         * OCI config's tmpfs mounts). Best effort: the mount that follows
         * reports a point that could not be made. */
        const char *const *mount_points;
        size_t n_mount_points;
        /* A detached procfs (fs_proc_tree) mounted on the view's /proc
         * instead of one of the mounter's pid namespace: a namespace init
         * was born into but holds no capability over (a Kubernetes pod's,
         * shared by its containers); -1: init mounts its own. */
        int proc_tree_fd;
        /* The sandbox is born into a pid namespace its pod's other
         * containers share (shareProcessNamespace): Landlock does not scope
         * its signals to its own domain, so that it may signal them as a
         * pod's containers may (a sidecar's reload signal). The namespace
         * holds the pod's processes alone, and the kernel's check of ids
         * (one range per pod) still applies. */
        bool pid_shared;
};

struct fs_dev_mount {
        const char *target;  /* "/dev/..." (normalised, no "..") */
        const char *fstype;  /* "devpts", "tmpfs" or "mqueue" */
        const char *source;  /* as mountinfo shows it ("shm"); NULL: fstype */
        unsigned long flags; /* MS_RDONLY, MS_NOEXEC, MS_*ATIME; nosuid always, nodev but on devpts */
        const char *data;
};

/* In the view (after fs_view_enter, by a process that holds CAP_SYS_ADMIN
 * over its mount namespace): /proc replaced by a procfs of the pid
 * namespace pidns_fd (an OCI container's own, nested in the sandbox's),
 * with the same masks and read-only /proc/sys. Needs procfs's pidns option
 * (Linux 6.15; fs_proc_pidns_supported). -errno with err filled in. */
int fs_view_proc_renew(int pidns_fd, char *err);
/* Whether this kernel's procfs takes the pidns option (a /proc of another
 * pid namespace than the mounter's). Runs in the child, which holds
 * CAP_SYS_ADMIN over its mount namespace; mounts nothing. */
bool fs_proc_pidns_supported(void);
/* tmpcopyup (fs/copyup.c): copies what the directory srcfd holds into
 * dstfd, the empty tmpfs just mounted over it (directories, files, symlinks
 * and fifos, with their modes, owners where the namespace maps them, and
 * times; never following a symlink). -errno, with the entry that failed
 * named in err. */
int fs_copyup(int srcfd, int dstfd, char *err, size_t errsize);
/* A mount of the view in an OCI config's order (fs_view_order). */
struct fs_mount_order {
        const char *path;          /* absolute, normalised, in the view */
        unsigned long propagation; /* MS_SHARED, MS_SLAVE, MS_PRIVATE, MS_UNBINDABLE (| MS_REC), or 0 */
};
/* In the view, by a process that holds CAP_SYS_ADMIN over its mount
 * namespace, once every mount is made: each of m, in order, that is a
 * mount point and not beneath one done before, is replaced by a copy of
 * its mount tree (the same filesystems, flags and submounts), so that
 * /proc/self/mountinfo, which lists mounts as they were made, shows them in
 * this order after any mount made before (an OCI config's order, after the
 * /proc that fs_view_proc_renew made last); paths that are no mount point
 * are skipped. Then the root gets root_propagation and each of m its own
 * propagation (0: left private). -errno with err filled in. */
int fs_view_order(const struct fs_mount_order *m, size_t n, unsigned long root_propagation, char *err);
/* A detached procfs of the pid namespace pidns_fd, for fs_view_spec's
 * proc_tree_fd: made by a caller that holds CAP_SYS_ADMIN over that
 * namespace, in a mount namespace where such a procfs may be made. The
 * mount fd, or -errno. */
int fs_proc_tree(int pidns_fd);

/* Sentry side, when it runs as host root: a detached, read-only, idmapped
 * copy of the template directory template_fd in which the template's owners
 * appear through the sandbox's user namespace (userns_fd): host root's files
 * as the sandbox's root. Without it, overlayfs in the sandbox's namespace
 * cannot copy a root-owned file up (the owner has no id there). Hand the fd
 * to the child as fs_view_spec.template_tree_fd. -errno on failure (for
 * instance a filesystem that does not support idmapped mounts).
 * write_through (the sandbox's id map; NULL: read-only): the same, but
 * writable, for fs_view_spec.root_write_through: a plain directory's clone,
 * or for an overlay's root (podman's, containerd's) an overlay over the
 * engine's own upper and work directories; err (1024 bytes) then says why
 * it could not be made. */
int fs_template_idmapped(int template_fd, int userns_fd, const struct fs_ids *write_through, char *err, int *ret_fd);

/* Sentry side, as host root: a detached, recursive, idmapped copy of a
 * read-write bind's source srcfd (fs/binds.c), through userns_fd, a user
 * namespace whose maps tie the source's owner to the sandbox root's host
 * ids. Hand it to the child as the bind's fs_view_spec.bind_fds entry.
 * -errno when the filesystem (or one beneath) refuses idmapped mounts. */
int fs_bind_idmapped(int srcfd, int userns_fd, int *ret_fd);
/* The same on a detached tree the caller cloned already (an OCI engine's
 * bind, open_tree'd with the engine's standing): idmapped in place. */
int fs_bind_tree_idmap(int treefd, int userns_fd);

/* Runs in the child, inside its new user, mount and pid namespaces and while
 * it still holds its capabilities there: assembles the view (the template's
 * overlay, or the default: host system directories read-only, /etc minus
 * secrets), then on either root private /tmp and home, a minimal /dev, its
 * own /proc with host-revealing entries masked, the binds and the rules;
 * then pivots into it and detaches the host's tree. On failure
 * returns -errno and writes which step and path failed into err. With
 * ret_layer_fd, also an O_PATH fd on the writable layer's root, which the
 * view does not show: "upper" there is a template root's overlay upper
 * directory (snapshots read it), "tmp", "var-tmp", "run", "home", "shm" the
 * private directories. */
int fs_view_enter(const struct fs_view_spec *spec, char *err, size_t errsize, int *ret_layer_fd);
/* Gives the caller's user namespace its own, empty binfmt_misc (Linux
 * 6.7+), so that the host's registered formats never apply in it; called
 * by init with its privileges, in its own mount namespace made private, at
 * is a directory there to mount on for a moment (with keep_mounted, left
 * mounted there for the caller to detach with the tree it is in). 0, or
 * -errno (-EEXIST: the instance seen has handlers, so it is not the
 * sandbox's). */
int fs_binfmt_isolate(const char *at, bool keep_mounted);
/* What hides path (absolute, normalised, in the view) from the sandbox: a
 * hidden rule's path at or above it, or one of the view's own masks (the
 * secrets under /etc in the default view, the masked /proc entries); NULL
 * when nothing does. Such a path shows an empty mask in the mount view, and
 * must never be taken for the directory it names (a working directory). */
const char *fs_view_hidden_by(const struct fs_view_spec *spec, const char *path);

/* "sha256:" and 64 hex digits and a NUL */
#define FS_DIGEST_SIZE 72

/* Computes the digest of the tree under dirfd (fs/digest.c defines the exact
 * format): a stable walk, never following symlinks nor crossing mounts,
 * sorted by path, over every entry's path, type, mode, size, symlink target
 * and contents. Writes "sha256:<hex>" into ret_digest. On failure returns
 * -errno and writes which path and what failed into err. */
int fs_digest_tree(int dirfd, char *err, size_t errsize, char ret_digest[FS_DIGEST_SIZE]);
/* --- Walks cordon makes for itself (walk.c) --- */

/* Opens the one component name below dirfd (flags as for openat, O_CLOEXEC
 * added) without following a symlink or leaving dirfd; with same_mount, not
 * into another mount either. openat2 RESOLVE_BENEATH|NO_SYMLINKS, or where
 * the kernel lacks openat2 an O_NOFOLLOW open with the same refusals. */
int fs_open_beneath_one(int dirfd, const char *name, int flags, bool same_mount);
/* Opens path inside rootfd as its root (openat2 RESOLVE_IN_ROOT|NO_MAGICLINKS).
 * Without openat2: a component walk that follows no symlink (ELOOP) and
 * refuses ".." (EXDEV), so never leaves the root but reaches less. */
int fs_open_in_root(int rootfd, const char *path, int flags);

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
/* The same, with the text of the caller's /proc/self/mountinfo as it has
 * read it already (the view final since), or NULL to read it. */
int fs_landlock_apply_table(const struct fs_view_spec *spec, const char *mountinfo, char *err, size_t errsize);
/* Whether the ruleset fs_landlock_apply builds from spec grants no write
 * right on /proc or anything beneath it (no writable place is /proc, holds
 * it or lies beneath it): then a native write open there is refused by
 * Landlock, whatever path the kernel reads (fs_context.native_writes). */
bool fs_landlock_proc_unwritable(const struct fs_view_spec *spec);
/* Whether path (absolute, in the view) is one of the device nodes, or
 * beneath the pty directory, that the ruleset grants writing under /dev. */
bool fs_landlock_dev_writable(const char *path);

/* The sandbox's id map as the sentry sees it: child uids uid_inside ..
 * uid_inside+count-1 are host uids uid_host.., and the same for gids. A
 * root-started sandbox maps its range of 65,536 ids (inside 0 on); an
 * unprivileged one the caller's single id. */
struct fs_ids {
        uint32_t uid_inside, uid_host, gid_inside, gid_host, count;
};

/* What the fs handlers need from the sentry. */
struct fs_context {
        int root_fd;    /* the view's root (the child's /proc/PID/root), O_PATH */
        uid_t fsuid;    /* the command's uid as seen from the sentry's namespace */
        dev_t proc_dev; /* st_dev of the view's /proc: files there are opened by the proc agent */
        dev_t dev_dev;  /* st_dev of the view's /dev (its fd and std* links lead to /proc) */
        /* Write opens the filter traps in its fast mode (no hidden rule, no
         * write ask rule, no --trap-all) may run natively, Landlock's write
         * floor in force with the truncate right handled (ABI 3) and no
         * write right on /proc (fs_landlock_proc_unwritable): see
         * open_native_write in open.c */
        bool native_writes;
        /* the view's root is a template's, writable by the mount view but
         * not by Landlock (which cannot grant a directory without its
         * subtree): a write open of a name directly in it stays emulated */
        bool root_writable;
        dev_t root_dev;
        ino_t root_ino;
        gid_t fsgid;
        struct fs_ids ids; /* the sandbox's id map */
        uint64_t caps;     /* what its root holds inside its namespace (CAP_* bits) */
        /* set once a thread of the sandbox changed its ids or capabilities
         * (fs_creds_vary): workers then read each trapped thread's */
        atomic_bool creds_vary;
        bool keep_groups; /* unprivileged: setgroups is denied to us and to the
                             child alike, so both keep the user's groups */
        /* the view's mount ids, sorted: a relative walk must start on one */
        uint64_t *mount_ids;
        size_t n_mount_ids;
        /* the policy's path rules (hidden ones are enforced on the resolved
         * location of every emulated path call) */
        const struct fs_rule *rules;
        size_t n_rules;
        /* the proc agent (agent.c); agent_pid 0 when not started */
        pid_t agent_pid;
        int agent_sock;
        pthread_mutex_t agent_lock;
        /* approved executions, shared with the exec tracer (exec.c); NULL
         * when exec is not verified after the fact */
        struct fs_exec_table *exec;
        /* with exec: the tracer's channel, where the handler asks it to
         * seize a thread before letting its execve run */
        int exec_channel;
        /* the rules have "ask" for writes / for execs (fs_rules_ask) */
        bool ask_write, ask_exec;
        /* the sandbox's own filesystems (fs_private_layer_init): the only
         * places where setuid, setgid, file-capable and device files may be
         * made (fs/binds.c) */
        dev_t private_devs[2];
        size_t n_private_devs;
};

/* A set*id or capset call was trapped: from now on the workers take each
 * trapped thread's own identity (fs_as_child_begin), not the command's. */
void fs_creds_vary(struct notify_call *call);
/* The command's own uid and gid inside the sandbox's namespace (what every
 * thread has until one changes it): 0, or -ERANGE when unmapped. */
int fs_command_ids(const struct fs_context *ctx, uint32_t *ret_uid, uint32_t *ret_gid);

/* Fills ctx->private_devs from ctx->root_fd and the writable layer's root
 * (layer_fd); root_written_through: the view's root is an OCI root written
 * through (fs_view_spec.root_write_through). 0 or -errno. */
int fs_private_layer_init(struct fs_context *ctx, int layer_fd, bool root_written_through);

/* qsort/bsearch comparator for mount ids */
int fs_cmp_u64(const void *a, const void *b);
/* The mount ids of the view of process pid (its mountinfo's first column,
 * at most 1,024), sorted: what the workers tell a walk that starts outside
 * the view by (fs_context.mount_ids; defence in depth behind the sentry's
 * check of the fds it passes in). NULL with errno set on failure. */
uint64_t *fs_read_mount_ids(pid_t pid, size_t *ret_n);

/* The proc agent: a process in the sandbox's user namespace, where /proc
 * files that render ids for their opener are opened, so the command reads
 * its own ids; and in its net, ipc and uts namespaces, which /proc/sys
 * files show. Forked early (fs_agent_fork, while the sentry waits for
 * init's view, single-threaded: no lock of another thread is copied), it
 * waits for fs_agent_begin to hand it the namespaces (ns_fds: user, net,
 * ipc, uts) and ctx->root_fd, which it joins, and becomes the first id of
 * ctx->ids (set before the fork). may_setgroups: it drops its
 * supplementary groups (a privileged sentry's sandbox). */
int fs_agent_fork(struct fs_context *ctx, bool may_setgroups);
int fs_agent_begin(struct fs_context *ctx, const int ns_fds[4]);
void fs_agent_stop(struct fs_context *ctx);
/* Sends the agent SIGKILL without waiting, so that its exit overlaps the
 * rest of a teardown; fs_agent_stop reaps it later. For when the sandbox is
 * gone and no handler can need it. */
void fs_agent_kill(struct fs_context *ctx);

/* notify worker thread_init: gives the calling thread its own fs context,
 * chroots it into the view, and takes the child's filesystem identity (fsuid,
 * fsgid, no groups, no capability but CAP_SYS_PTRACE for /proc and memory
 * access) so that every open it makes is checked as the child's would be.
 * userdata is a struct fs_context. */
int fs_worker_init(void *userdata);

/* Emulates open(2), creat(2), openat(2) and openat2(2) against the view. */
int fs_handle_open(struct notify_call *call, struct notify_verdict *ret);

/* Whether a rule hides path (absolute, in the view): the longest rule whose
 * path is path or one of its ancestors decides, and it is FS_HIDDEN. */
bool fs_rules_hide(const struct fs_rule *rules, size_t n, const char *path);
/* Whether any rule is FS_HIDDEN: such a policy needs every path call trapped. */
bool fs_rules_have_hidden(const struct fs_rule *rules, size_t n);
/* The rule that decides path (absolute, in the view): the longest whose
 * path is path or one of its ancestors; NULL when none. */
const struct fs_rule *fs_rules_match(const struct fs_rule *rules, size_t n, const char *path);
/* Whether a write to path, or an exec of it (capability "write" or
 * "exec"), waits for a person: the deciding rule asks, and grants that
 * (read-write for a write, exec 1 for an exec). */
bool fs_rules_ask(const struct fs_rule *rules, size_t n, const char *capability, const char *path);

/* Ids between the sentry's user namespace and the child's, through the
 * sandbox's map (gid: the gid half). Results the sentry reads (stat) go to
 * the child: a mapped id shows as its inside id, any other as the overflow
 * id 65534, as the kernel shows an unmapped id. Ids the child passes
 * (chown): -1 stays -1 (no change), a mapped one becomes its host id, any
 * other is -EINVAL, as the kernel answers for an id with no mapping. */
uint32_t fs_id_to_child(const struct fs_ids *m, bool gid, uint32_t host_id);
int fs_id_from_child(const struct fs_ids *m, bool gid, uint32_t child_id, uint32_t *ret);

/* The path syscalls other than open (paths.c, xattr.c). */
int fs_handle_stat(struct notify_call *call, struct notify_verdict *ret);
int fs_handle_statx(struct notify_call *call, struct notify_verdict *ret);
int fs_handle_access(struct notify_call *call, struct notify_verdict *ret);
int fs_handle_readlink(struct notify_call *call, struct notify_verdict *ret);
int fs_handle_mkdir(struct notify_call *call, struct notify_verdict *ret);
int fs_handle_mknod(struct notify_call *call, struct notify_verdict *ret);
int fs_handle_unlink(struct notify_call *call, struct notify_verdict *ret);
int fs_handle_rename(struct notify_call *call, struct notify_verdict *ret);
int fs_handle_link(struct notify_call *call, struct notify_verdict *ret);
int fs_handle_symlink(struct notify_call *call, struct notify_verdict *ret);
int fs_handle_chmod(struct notify_call *call, struct notify_verdict *ret);
/* fchmod(2) with S_ISUID or S_ISGID in the mode (fs/binds.c). */
int fs_handle_fchmod(struct notify_call *call, struct notify_verdict *ret);
int fs_handle_chown(struct notify_call *call, struct notify_verdict *ret);
int fs_handle_utimes(struct notify_call *call, struct notify_verdict *ret);
int fs_handle_truncate(struct notify_call *call, struct notify_verdict *ret);
int fs_handle_statfs(struct notify_call *call, struct notify_verdict *ret);
int fs_handle_xattr(struct notify_call *call, struct notify_verdict *ret);
int fs_handle_inotify_add_watch(struct notify_call *call, struct notify_verdict *ret);
int fs_handle_chdir(struct notify_call *call, struct notify_verdict *ret);
/* getdents64(2)/getdents(2) with hidden entries dropped (dirents.c). */
int fs_handle_getdents(struct notify_call *call, struct notify_verdict *ret);
/* --- exec (exec.c) --- */

/* A file as the tracer can compare it with /proc/PID/exe. */
struct fs_exec_id {
        uint64_t dev;
        uint64_t ino;
};

/* What the exec handler approved for one thread's execve/execveat. */
struct fs_exec_approval {
        struct fs_exec_id file; /* the file named by the call */
        struct fs_exec_id run;  /* the image that runs: file, or the end of its #! chain */
        unsigned depth;         /* #! interpreters followed */
        bool unread;            /* run is executable but unreadable by the child: its machine is unchecked */
};

/* The approvals, in memory shared with a forked tracer (MAP_SHARED, a robust
 * process-shared lock). Create before forking the tracer. */
struct fs_exec_table;
int fs_exec_table_new(struct fs_exec_table **ret);
void fs_exec_table_free(struct fs_exec_table *t);
/* At most this many approvals are held; beyond, the oldest is reused (an
 * exec whose approval was reused that way is killed: fails closed). */
#define FS_EXEC_SLOTS 1024
/* Records a's approval for thread tid, replacing the one it had. */
void fs_exec_record(struct fs_exec_table *t, pid_t tid, const struct fs_exec_approval *a);
/* Takes (and removes) the approval recorded for thread tid (host tid, the
 * one PTRACE_GETEVENTMSG gives at PTRACE_EVENT_EXEC). 0 or -ENOENT. */
int fs_exec_take(struct fs_exec_table *t, pid_t tid, struct fs_exec_approval *ret);

enum fs_exec_kind {
        FS_EXEC_NATIVE_ELF,  /* ELFCLASS64, little-endian, EM_X86_64, executable or shared object */
        FS_EXEC_FOREIGN_ELF, /* i386, x32, aarch64, ...: refused */
        FS_EXEC_BAD_ELF,     /* ELF magic, unparsable header */
        FS_EXEC_SCRIPT,      /* #! */
        FS_EXEC_OTHER,
};
/* Classifies a file by its first bytes (libelf for ELF headers). */
enum fs_exec_kind fs_exec_classify(const void *buf, size_t len);

/* Emulates execve(2) and execveat(2): the file (and its #! interpreters) is
 * checked as the child and recorded in ctx->exec; the kernel then execs. */
int fs_handle_exec(struct notify_call *call, struct notify_verdict *ret);
