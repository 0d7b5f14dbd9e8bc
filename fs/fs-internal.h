/* fs/ private. */
#pragma once

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "fs/fs.h"

/* The mount API's values, spelled out: the build host's headers may
 * predate them (view.c, template.c, binds.c). */
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV  0x00000004
#define MOUNT_ATTR_NOEXEC 0x00000008
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef MOUNT_ATTR_IDMAP
#define MOUNT_ATTR_IDMAP 0x00100000
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
struct cordon_mount_attr {
        uint64_t attr_set, attr_clr, propagation, userns_fd;
};

/* Writes "what: strerror(-r)" into err (1024 bytes) and returns r: the
 * view's and the floor's set-up failures, which name their step and path. */
_printf_(3, 4) int fs_fail(int r, char *err, const char *fmt, ...);

/* Around the one operation a handler performs for the child: drop the
 * worker's remaining effective capability (CAP_SYS_PTRACE, needed to read
 * the child's memory and /proc entries) so that the operation is checked
 * exactly as the child's own call would be — in particular it cannot open
 * another sandbox process's /proc/PID/mem or environ that the child itself
 * could not — and take the trapped thread's own filesystem identity (fsuid,
 * fsgid, groups), which differs from thread to thread once a sandbox with a
 * range of ids switches users (su, a daemon dropping to its own user). */
int fs_as_child_begin(struct notify_call *call);
void fs_as_child_end(void);
/* Gives the worker its CAP_SYS_PTRACE back if an operation as the child
 * left it off (fs_as_child_end does not restore it): true if it did, and
 * a refused read of the trapped thread is worth trying again. notify/
 * calls it through notify_privileged (the hook fs_worker_init sets). */
bool fs_privileged(void);
/* Reopens fd, the sentry's duplicate of an fd the caller holds, through
 * the host's /proc/thread-self/fd with flags (O_CREAT, O_EXCL and
 * O_NOFOLLOW dropped), CAP_DAC_OVERRIDE effective for that open alone, as
 * the caller's own reopen of /proc/self/fd/N would be decided natively
 * where the file's owner is mapped. The caller makes sure it grants
 * nothing new: a pipe, regular file or terminal the caller holds open
 * with at least the access asked for (open.c, reopen_own_fd). The new fd
 * or -errno. */
int fs_reopen_held(int hostproc_fd, int fd, int flags);
/* Sets this worker's umask (its fs_struct is private) to um, the caller's,
 * for a create made as the child; no system call when it already is. */
void fs_set_umask(mode_t um);

/* mountinfo's octal escapes (\040 for a space) undone in place (view.c);
 * -EINVAL for a backslash that starts none. */
int fs_unescape_mountinfo(char *s);

/* The owner of fd as the sandbox's user namespace renders it, from the
 * proc agent (which stands in that namespace). -ENOSYS without an agent. */
int fs_agent_ids(struct fs_context *ctx, int fd, uint32_t *ret_uid, uint32_t *ret_gid);

/* Opens path (relative to dirfd when >= 0) in the proc agent. Returns the fd
 * or -errno; -ENOSYS when there is no agent. */
/* An O_PATH open (flags: O_DIRECTORY, O_NOFOLLOW) by a worker in the view
 * that does not go through a magic link itself: the worker's euid owns the
 * sandbox's user namespace, which would let it through links into
 * processes the child may not trace. One that meets a magic link is redone
 * by the proc agent, with the child's standing. The fd or -errno. */
int fs_view_open_path(struct notify_call *call, int dirfd, const char *path, int flags);
int fs_agent_open(struct fs_context *ctx, struct notify_call *call, int dirfd, const char *path, int flags, mode_t mode,
                  uint64_t resolve, mode_t um);
/* fchownat(fd, "", uid, gid, AT_EMPTY_PATH) by the agent with the trapped
 * thread's ids and capabilities (uid, gid: the sandbox's ids), where the
 * kernel applies CAP_CHOWN as it would to the thread's own call. */
int fs_agent_chown(struct notify_call *call, int fd, uint32_t uid, uint32_t gid);
/* The same for chmod (CAP_FOWNER, CAP_FSETID) and utimensat (CAP_FOWNER). */
int fs_agent_chmod(struct notify_call *call, int fd, mode_t mode);
int fs_agent_utimens(struct notify_call *call, int fd, const struct timespec *times);
/* faccessat2(fd, "", mode, AT_EMPTY_PATH | AT_EACCESS) the same way: the
 * check the kernel makes for the thread's own access(2), its capabilities
 * in the sandbox's namespace included (root's W_OK on a 0444 file of its
 * own). */
int fs_agent_access(struct notify_call *call, int fd, int mode);
/* removexattrat(fd, "", AT_EMPTY_PATH, name) the same way (-ENOSYS before
 * Linux 6.13, which has no call to remove an xattr through an O_PATH fd). */
int fs_agent_removexattr(struct notify_call *call, int fd, const char *name);
/* A change to a directory's entries, redone by the agent with the trapped
 * thread's ids and capabilities in the sandbox's namespace where the
 * worker (no capability) was refused: the kernel then decides it as the
 * thread's own call (CAP_DAC_OVERRIDE on a 0555 directory the sandbox's
 * root owns, CAP_FOWNER in a sticky one), and never for a directory whose
 * owner the namespace does not map. name (and name2) are the last
 * components the resolution pinned in dirfd (and dirfd2); for symlink,
 * name2 is the link's content. -ENOSYS without an agent. */
enum fs_dirop {
        FS_DIROP_MKNOD,   /* mknodat(dirfd, name, mode, dev), the caller's umask */
        FS_DIROP_MKDIR,   /* mkdirat(dirfd, name, mode), the caller's umask */
        FS_DIROP_SYMLINK, /* symlinkat(name2, dirfd, name) */
        FS_DIROP_UNLINK,  /* unlinkat(dirfd, name, flags) */
        FS_DIROP_RENAME,  /* renameat2(dirfd, name, dirfd2, name2, flags) */
        FS_DIROP_LINK,    /* linkat(dirfd, name, dirfd2, name2, 0): the name not followed */
};
int fs_agent_dirop(struct notify_call *call, enum fs_dirop op, int dirfd, const char *name, int dirfd2,
                   const char *name2, mode_t mode, dev_t dev, int flags);

/* Whether the trapped thread holds CAP_DAC_OVERRIDE or CAP_FOWNER (in its
 * namespace): a refused open is then worth redoing in the agent. */
bool fs_caller_overrides(struct notify_call *call);

/* --- binds.c: what may be made outside the sandbox's own filesystems --- */

/* Whether dev is one of ctx->private_devs. */
bool fs_private_dev(const struct fs_context *ctx, dev_t dev);
/* Whether fd's file is on one of them (false when it cannot be looked at);
 * *ret_type (when not NULL): its S_IFMT bits. */
bool fs_on_private_layer(const struct fs_context *ctx, int fd, mode_t *ret_type);
/* Whether a chmod (or a create) giving mode to an object of type (S_IFMT
 * bits) is refused (EPERM): S_ISUID, or S_ISGID on anything but a
 * directory, outside the private layer (private false). */
bool fs_setid_refused(mode_t type, mode_t mode, bool private);
/* The same for mknod's mode (type and permission bits): also any device,
 * the whiteout 0:0 included, outside the private layer. */
bool fs_mknod_refused(mode_t mode, bool private);
/* Whether an xattr of this name may be set only on the private layer
 * (security.capability). */
bool fs_xattr_guarded(const char *name);

/* --- resolve.c: one path argument of a path call, resolved in the view --- */

/* /proc/self and friends name the caller; rewritten to its pid in its pid
 * namespace (see resolve.c). exact: whether the bare prefix ("/proc/self"
 * with nothing after it) is rewritten too (only when the call follows it). */
int fs_rewrite_self(struct notify_call *call, const char *path, bool exact, char *out, size_t size, bool *ret_changed);
/* Whether fd is on one of the view's mounts. */
bool fs_in_view(const struct fs_context *ctx, int fd);

/* fs_resolve() flags */
enum {
        FS_FOLLOW = 1u << 0,    /* the call follows a final symlink */
        FS_EMPTY_OK = 1u << 1,  /* AT_EMPTY_PATH: "" names the dirfd itself */
        FS_NEED = 1u << 2,      /* the call acts on an existing object: pin it */
        FS_NULL_OK = 1u << 3,   /* a NULL path names the dirfd (utimensat, futimesat) */
        FS_DIRFD_ANY = 1u << 4, /* with FS_EMPTY_OK: the dirfd may be any open file (dup it) */
};

/* Where a call acts, pinned: either the object itself (fd, an O_PATH or
 * the child's own file), or the last component name in the directory dirfd.
 * Both were checked against the policy's hidden rules on their resolved
 * location, so a rename elsewhere cannot move what the call reaches. */
struct fs_target {
        int dirfd;           /* the parent directory (O_PATH), or -1 */
        int fd;              /* the object, when pinned; else -1 */
        char name[PATH_MAX]; /* the last component, trailing slashes kept; "/" for the root */
        char path[PATH_MAX]; /* the path as the child gave it (after the /proc/self rewrite) */
        bool empty;          /* AT_EMPTY_PATH with "" (or a NULL path): fd is the child's dirfd */
};

/* An O_PATH fd of t's object (the fd it holds, else its name, not
 * followed), for an operation redone by the agent: the fd or -errno. */
int fs_target_pin(const struct fs_target *t);

#define FS_TARGET_INIT                \
        {                             \
                .dirfd = -1, .fd = -1 \
        }

void fs_target_done(struct fs_target *t);

/* Reads the path at addr once, resolves it against the child's dirfd in the
 * view as the child would (the worker's chroot and credentials), checks the
 * hidden rules on the resolved location and the notification's validity.
 * Returns 0 or the -errno the call fails with. */
int fs_resolve(struct notify_call *call, int child_dirfd, uint64_t addr, unsigned flags, struct fs_target *ret);
/* The same for a path already read into ret->path (relative ones against
 * base, an O_PATH directory; absolute ones with base -1). */
int fs_resolve_at(struct notify_call *call, int base, unsigned flags, struct fs_target *ret);

/* For a call that follows a final symlink and may create what it names
 * (open with O_CREAT): follows t's name hop by hop while it is a symlink,
 * checking each hop's directory and name like fs_resolve, so a dangling
 * link cannot create inside a hidden directory. 0 or -errno. */
int fs_check_symlink_chain(struct notify_call *call, const struct fs_target *t);
/* After r, a call that only reads what t names: where the worker could not
 * look the name up in t's pinned directory (r is -EACCES: no search right
 * there, which a caller holding CAP_DAC_OVERRIDE has, as root in another
 * user's 0700 directory), the object is pinned at that name, not followed,
 * by the walk redone as the caller (fs_view_open_path: the agent, with the
 * caller's ids and capabilities in the sandbox's namespace). The name was
 * checked against the rules with its directory. 1 with t->fd set, else 0.
 * Not as the child (it reads /proc). */
int fs_pin_for_caller(struct notify_call *call, int r, struct fs_target *t);

/* The place a *at() call acts on for t: the pinned object through the
 * worker's own /proc/thread-self/fd/N (a magic link the kernel follows to
 * exactly that object) with at_flags 0, or (dirfd, name) with
 * AT_SYMLINK_NOFOLLOW. buf holds the name when it is built. */
struct fs_at {
        int dirfd;
        const char *name;
        int nofollow; /* AT_SYMLINK_NOFOLLOW or 0 */
        char buf[64];
};
void fs_target_at(const struct fs_target *t, int hostproc_fd, struct fs_at *ret);

/* For the calls that take no dirfd (xattrs, truncate, inotify): makes
 * at->dirfd the worker's cwd (its fs context is its own) so that at->name
 * names the object; fs_at_leave returns to the view's root. */
int fs_at_enter(const struct fs_at *at);
void fs_at_leave(void);

/* The path of fd in the view (the worker is chrooted there, so the kernel's
 * d_path is relative to the view's root). */
int fs_view_path(int hostproc_fd, int fd, char *buf, size_t size);

/* --- exec-classify.c: what a file is, from its first bytes --- */

/* The kernel's BINPRM_BUF_SIZE: how much of a file's start exec looks at. */
#define EXEC_HEADER 256

/* The interpreter of a #! script (hdr: the file's first len bytes), parsed
 * as fs/binfmt_script.c does, into out. -ENOEXEC when there is none or it
 * does not end within the header; -ENAMETOOLONG when it does not fit. */
int fs_exec_script_interpreter(const unsigned char *hdr, size_t len, char *out, size_t size);

/* --- child-input.c: what the child hands in, read without the child --- */

/* The kernel's bounds on openat2's size argument. */
#ifndef OPEN_HOW_SIZE_VER0
#define OPEN_HOW_SIZE_VER0 24
#endif
#define OPEN_HOW_SIZE_MAX 4096

/* openat2's struct open_how from the size bytes at buf, the way the kernel
 * reads it (copy_struct_from_user): -EINVAL when smaller than the first
 * version, -E2BIG when larger than a page or than ours with a non-zero
 * tail. */
struct open_how;
int fs_open_how_from_bytes(const void *buf, size_t size, struct open_how *ret);

/* Supplies the caller's tid and tgid in its pid namespace (notify_ns_ids for
 * a real call). 0 or -errno. */
typedef int (*fs_ns_ids_fn)(void *userdata, pid_t *ret_nspid, pid_t *ret_nstgid);

/* fs_rewrite_self() with its two lookups made parameters: ns_ids is called
 * only when a rule applies, mtab_link (whether the view's /etc/mtab links
 * to the mount table) only for /etc/mtab. */
int fs_rewrite_self_with(const char *path, bool exact, fs_ns_ids_fn ns_ids, void *userdata, bool (*mtab_link)(void),
                         char *out, size_t size, bool *ret_changed);

/* --- ask.c: writes and execs beneath an "ask" rule --- */

/* Where t acts, as a path in the view (the pinned object's, else its
 * directory's and the name). 0 or -errno. */
int fs_target_view_path(struct notify_call *call, const struct fs_target *t, char *buf, size_t size);
/* notify_ask() for capability on path: 1 go on, 0 *ret set, -errno. */
int fs_ask(struct notify_call *call, const char *capability, const char *path, struct notify_verdict *ret);
/* For a call that changes t (and t2, the second name of a rename or link,
 * or NULL): asks when an "ask" rule decides either place. 1 go on, 0 *ret
 * set (held or refused), -errno. */
int fs_ask_write(struct notify_call *call, const struct fs_target *t, const struct fs_target *t2,
                 struct notify_verdict *ret);
