/* cordon's syscall table: for every syscall it treats specially, what it
 * does (refuse with an errno, emulate, kill), the support level and why.
 * The seccomp filter is generated from these rows (notify/filter.c), the
 * dispatch uses them (notify/engine.c), and `cordon syscalls` prints them.
 * Syscalls not listed run natively. */
#include "config.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "sentry/sentry-internal.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
/* clang-format off */
#define NS_FLAGS                                                                                   \
        (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | \
         CLONE_NEWCGROUP | CLONE_NEWTIME)

#define REFUSE(n, e, why) {.name = n, .action = SC_ERRNO, .err = e, .support = SUPPORT_FULL, .note = why}
#define EMULATE(n, h, s, why) {.name = n, .action = SC_EMULATE, .handler = h, .support = s, .note = why}
#define REFUSE_IF(n, e, why, ...) \
        {.name = n, .action = SC_ERRNO, .err = e, .support = SUPPORT_FULL, .note = why, \
         .n_cond = ELEMENTSOF(((struct syscall_arg_cond[]){__VA_ARGS__})), .cond = {__VA_ARGS__}}
/* A path call the mount view already decides on its own when the policy has
 * no hidden rule: trapped only with --trap-all or such a rule (plan.c). */
#define PATHCALL(n, h, why) \
        {.name = n, .action = SC_EMULATE, .handler = h, .support = SUPPORT_FULL, .ctx = CTX_FS, \
         .flags = SC_F_PATH_POLICY, .note = why FAST}
#define FAST "; native unless --trap-all or a hidden rule (the mount view decides the same)"
/* A path call that changes the file system: trapped also for a write "ask"
 * rule, whose writes the sentry must see to ask before them. */
#define PATHWRITE(n, h, why) \
        {.name = n, .action = SC_EMULATE, .handler = h, .support = SUPPORT_FULL, .ctx = CTX_FS, \
         .flags = SC_F_PATH_POLICY | SC_F_PATH_WRITE, .note = why FASTW}
#define NATIVE_EXEC "; native when the view alone decides (no exec rule, Landlock, own binfmt_misc)"
#define FASTW "; native unless --trap-all, a hidden rule or a write ask rule (the mount view decides the same)"
/* A conditional row of open or openat (their flags: argument 1 and 2), in
 * force per rowflags (SC_F_PATH_FAST or SC_F_PATH_FAST_NOASK): trapped when
 * its one condition on the flags holds. */
#define OPENCOND(n, flags_arg, rowflags, why, ...) \
        {.name = n, .action = SC_EMULATE, .handler = fs_handle_open, .support = SUPPORT_FULL, .ctx = CTX_FS, \
         .flags = rowflags, .note = why, .n_cond = 1, .cond = {{.arg = flags_arg, __VA_ARGS__}}}
/* an int argument: the kernel reads the low 32 bits only */
#define LOW32 UINT64_C(0xffffffff)
/* S_ISUID | S_ISGID: a mode that sets either is decided by the sentry
 * (fs/binds.c: never outside the sandbox's own filesystems) */
#define SETID_BITS 06000
/* A row of a chmod-family call in force without --trap-all, a hidden rule or
 * a write ask rule (when its unconditional PATHWRITE row is left out): the
 * mode is a register, and only a setuid or setgid one is trapped. */
#define SETIDCOND(n, mode_arg, h, why) \
        {.name = n, .action = SC_EMULATE, .handler = h, .support = SUPPORT_FULL, .ctx = CTX_FS, \
         .flags = SC_F_PATH_FAST_NOASK, .note = why, .n_cond = 1, \
         .cond = {{.arg = mode_arg, .op = ARG_MASKED_ANY, .mask = SETID_BITS}}}
/* the open flags that make an open more than a read: any one set traps it
 * (020000000 is the kernel's __O_TMPFILE bit; glibc's __O_TMPFILE also has
 * O_DIRECTORY in it, which must not trap a directory open) */
#define OPEN_WRITES (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | 020000000)
/* clang-format on */

/* personality(2): READ_IMPLIES_EXEC would make every readable mapping the
 * process makes executable (its W^X gone); the other persona bits are
 * harmless here (PER_LINUX32 changes no syscall ABI: i386 and x32 calls are
 * still killed). Decided on the register alone, so CONTINUE is safe: the
 * kernel acts on the same value. The 0xffffffff query is answered natively. */
#define PER_READ_IMPLIES_EXEC 0x0400000u
static int handle_personality(struct notify_call *call, struct notify_verdict *ret)
{
        uint32_t persona = (uint32_t)call->req->data.args[0];
        if (persona != 0xffffffffu && (persona & PER_READ_IMPLIES_EXEC)) {
                ret->kind = VERDICT_ERROR;
                ret->error = EPERM;
                return 0;
        }
        ret->kind = VERDICT_CONTINUE;
        return 0;
}

/* umask(2): trapped only so the umask cache (notify/umask.c) learns that a
 * umask is about to change; the call itself is the kernel's. CONTINUE is
 * safe: nothing is decided, and the value is a register the kernel uses
 * as it is. */
static int handle_umask(struct notify_call *call, struct notify_verdict *ret)
{
        notify_umask_changing(call);
        ret->kind = VERDICT_CONTINUE;
        return 0;
}

/* chdir(2) and fchdir(2) where native write opens are on: trapped only so
 * that the cache of each thread's working directory (notify/umask.c, which
 * fs/open.c's open_native_write reads for a relative write open) learns a
 * directory is about to change; the call itself is the kernel's. CONTINUE
 * is safe: nothing is decided, and the path or fd is the kernel's to read
 * and check, in the child's view with its credentials, as when the call
 * is not trapped at all. */
static int handle_cwd_change(struct notify_call *call, struct notify_verdict *ret)
{
        notify_cwd_changing(call);
        ret->kind = VERDICT_CONTINUE;
        return 0;
}

/* The calls that change a thread's ids or capabilities: trapped only so
 * that the workers learn the sandbox's threads no longer all have the
 * command's identity (fs_creds_vary), and from then on take each trapped
 * thread's own; the call itself is the kernel's. CONTINUE is safe: nothing
 * is decided, and the kernel checks the arguments it reads itself. A
 * thread's credentials change only through these (execve keeps the ids:
 * no_new_privs ignores setuid bits), so until one is seen every thread has
 * the identity the workers start with. */
static int handle_setid(struct notify_call *call, struct notify_verdict *ret)
{
        /* -1 everywhere changes nothing (setresuid(-1, -1, -1), which some
         * programs make by the dozen, and setfsuid(-1), a query); nor, while
         * every thread still has the command's identity, does an id set to
         * the command's own (make's children run setresuid(-1, euid, -1)
         * and setresgid(-1, egid, -1) before each job): all of real,
         * effective, saved and fs ids are then that one id, so setting any
         * of them to it changes no id and no capability. Once identities
         * vary this question is moot. */
        const struct seccomp_data *d = &call->req->data;
        int n = d->nr == SYS_setreuid || d->nr == SYS_setregid                                                 ? 2
                : d->nr == SYS_setresuid || d->nr == SYS_setresgid                                             ? 3
                : d->nr == SYS_setfsuid || d->nr == SYS_setfsgid || d->nr == SYS_setuid || d->nr == SYS_setgid ? 1
                                                                                                               : 0;
        bool gid = d->nr == SYS_setregid || d->nr == SYS_setresgid || d->nr == SYS_setfsgid || d->nr == SYS_setgid;
        uint32_t cuid, cgid, own = UINT32_MAX;
        if (fs_command_ids(call->userdata, &cuid, &cgid) == 0)
                own = gid ? cgid : cuid;
        bool noop = n > 0;
        for (int i = 0; i < n; i++)
                noop = noop && ((uint32_t)d->args[i] == UINT32_MAX || (uint32_t)d->args[i] == own);
        if (!noop)
                fs_creds_vary(call);
        ret->kind = VERDICT_CONTINUE;
        return 0;
}

/* clone(2) of a thread without CLONE_FS, or unshare(CLONE_FS), trapped only
 * when execs run natively (see their rows). CONTINUE is safe: nothing is decided, the flags
 * are a register the kernel uses as they are (the row's condition leaves
 * the namespace flags to the refusing row). */
static int handle_clone_unshared_fs(struct notify_call *call, struct notify_verdict *ret)
{
        notify_umask_untrackable(call);
        ret->kind = VERDICT_CONTINUE;
        return 0;
}

/* setrlimit(2) and prlimit64(2) on RLIMIT_CORE. Every process of the
 * sandbox has the one-byte limit init set (see the rows), and nothing may
 * change it (sentry_core_limit): a read runs natively; a set is answered here and never reaches
 * the kernel (a value checked here could be swapped by another thread
 * before the kernel read it again). It fails as natively, EINVAL for a soft
 * limit above the hard one and EPERM for a hard limit above the present one
 * (raising it needs CAP_SYS_RESOURCE); any other set asks for no more than
 * no core dumps, which holds, so it succeeds and sets nothing, with the
 * one-byte limit given as the old value when asked for. A set aimed at a
 * pid that does not exist succeeds too. */
static int handle_core_limit(struct notify_call *call, struct notify_verdict *ret)
{
        const struct seccomp_data *d = &call->req->data;
        bool prlimit = d->nr == SYS_prlimit64;
        uint64_t new_addr = d->args[prlimit ? 2 : 1], old_addr = prlimit ? d->args[3] : 0;
        if (new_addr == 0 && prlimit) {
                ret->kind = VERDICT_CONTINUE; /* a read: nothing is set */
                return 0;
        }
        uint64_t want[2]; /* struct rlimit64, and x86_64's struct rlimit: soft, hard */
        int r = notify_read_mem(call, new_addr, want, sizeof(want));
        if (r < 0) {
                ret->error = -r;
                return 0;
        }
        if (want[0] > want[1]) {
                ret->error = EINVAL;
                return 0;
        }
        uint64_t limit = sentry_core_limit();
        if (want[1] > limit) {
                ret->error = EPERM;
                return 0;
        }
        if (old_addr != 0) {
                const uint64_t old[2] = {limit, limit};
                if ((r = notify_write_mem(call, old_addr, old, sizeof(old))) < 0) {
                        ret->error = -r;
                        return 0;
                }
        }
        ret->kind = VERDICT_VALUE;
        ret->value = 0;
        return 0;
}

#define SETID(n) EMULATE(n, handle_setid, SUPPORT_FULL, "runs natively after the sentry notes that identities vary")

static const struct syscall_entry table[] = {
        /* --- the view: path syscalls the sentry performs itself --- */
        /* open and openat: every one emulated with --trap-all or a hidden
         * rule; otherwise only those that write, create or truncate (the
         * flags are a register). A read-only open is the child's own, in its
         * mount namespace, with its credentials, Landlock's read floor (the
         * whole view, nothing else) and the view's masks: what the handler
         * would decide without a hidden rule. The kernel also gives what the
         * handler reproduces by hand: /proc files rendered for their opener,
         * /proc/self and /dev/tty as the caller's. Write opens stay trapped:
         * another process's /proc/PID/mem (fs/open.c) and the view's
         * read-only parts are the sentry's to refuse. */
        {.name = "open",
         .action = SC_EMULATE,
         .handler = fs_handle_open,
         .support = SUPPORT_FULL,
         .ctx = CTX_FS,
         .flags = SC_F_PATH_POLICY,
         .note = "opened by the sentry as the child, fd injected (all opens: --trap-all or a hidden rule)"},
        {.name = "openat",
         .action = SC_EMULATE,
         .handler = fs_handle_open,
         .support = SUPPORT_FULL,
         .ctx = CTX_FS,
         .flags = SC_F_PATH_POLICY,
         .note = "as open"},
        /* Without a write ask rule an exclusive create (O_CREAT|O_EXCL:
         * mkstemp, git's objects, lock files) is native too: it makes a new
         * file or fails, never opens an existing one (not even through a
         * symlink), so it cannot reach another process's /proc/PID/mem,
         * and where it may create is the view's and Landlock's to say, as
         * for mkdir. Two rows each: writes without O_CREAT, and O_CREAT
         * without O_EXCL; the kernel reads the int flags' low 32 bits. */
        OPENCOND("open", 1, SC_F_PATH_FAST_NOASK,
                 "writing or truncating opens emulated; read-only ones and exclusive creates native (the view decides)",
                 .op = ARG_MASKED_ANY, .mask = OPEN_WRITES & ~O_CREAT, .datum = O_CREAT),
        OPENCOND("open", 1, SC_F_PATH_FAST_NOASK, "as open: a create without O_EXCL emulated", .op = ARG_MASKED_EQ,
                 .mask = O_CREAT | O_EXCL, .datum = O_CREAT),
        OPENCOND("openat", 2, SC_F_PATH_FAST_NOASK, "as open", .op = ARG_MASKED_ANY, .mask = OPEN_WRITES & ~O_CREAT,
                 .datum = O_CREAT),
        OPENCOND("openat", 2, SC_F_PATH_FAST_NOASK, "as open: a create without O_EXCL emulated", .op = ARG_MASKED_EQ,
                 .mask = O_CREAT | O_EXCL, .datum = O_CREAT),
        /* ... but not an exclusive create whose mode is setuid or setgid:
         * where such a file may be made is the sentry's to decide (never in
         * a bind, fs/binds.c); the mode is a register */
        {.name = "open",
         .action = SC_EMULATE,
         .handler = fs_handle_open,
         .support = SUPPORT_FULL,
         .ctx = CTX_FS,
         .flags = SC_F_PATH_FAST_NOASK,
         .note = "as open: a create with a setuid or setgid mode emulated (only on the sandbox's own filesystems)",
         .n_cond = 2,
         .cond = {{.arg = 1, .op = ARG_MASKED_EQ, .mask = O_CREAT, .datum = O_CREAT},
                  {.arg = 2, .op = ARG_MASKED_ANY, .mask = SETID_BITS}}},
        {.name = "openat",
         .action = SC_EMULATE,
         .handler = fs_handle_open,
         .support = SUPPORT_FULL,
         .ctx = CTX_FS,
         .flags = SC_F_PATH_FAST_NOASK,
         .note = "as open: a create with a setuid or setgid mode emulated",
         .n_cond = 2,
         .cond = {{.arg = 2, .op = ARG_MASKED_EQ, .mask = O_CREAT, .datum = O_CREAT},
                  {.arg = 3, .op = ARG_MASKED_ANY, .mask = SETID_BITS}}},
        /* under a write ask rule every open that writes, creates or
         * truncates is trapped (and asked about) */
        OPENCOND("open", 1, SC_F_PATH_FAST,
                 "with a write ask rule: writing, creating or truncating opens emulated; read-only ones native",
                 .op = ARG_MASKED_ANY, .mask = OPEN_WRITES),
        OPENCOND("openat", 2, SC_F_PATH_FAST, "as open", .op = ARG_MASKED_ANY, .mask = OPEN_WRITES),
        EMULATE("openat2", fs_handle_open, SUPPORT_FULL, "open_how copied once; RESOLVE_* honoured by the kernel"),
        EMULATE("creat", fs_handle_open, SUPPORT_FULL, "as open(O_CREAT|O_WRONLY|O_TRUNC)"),
        PATHCALL("stat", fs_handle_stat, "stat by the worker as the child, ids translated"),
        PATHCALL("lstat", fs_handle_stat, "as stat, the last symlink not followed"),
        PATHCALL("newfstatat", fs_handle_stat, "as stat; \"\" with AT_EMPTY_PATH stats the fd (glibc's fstat)"),
        PATHCALL("statx", fs_handle_statx, "as stat, struct statx"),
        PATHCALL("access", fs_handle_access, "checked by the worker with the child's ids"),
        PATHCALL("faccessat", fs_handle_access, "as access"),
        PATHCALL("faccessat2", fs_handle_access, "as access; AT_EACCESS, AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH"),
        PATHCALL("readlink", fs_handle_readlink, "/proc/self and /proc/thread-self read as the caller's pids"),
        PATHCALL("readlinkat", fs_handle_readlink, "as readlink"),
        EMULATE("umask", handle_umask, SUPPORT_FULL,
                "runs natively after the sentry notes it: cached umasks are dropped until it is applied"),
        SETID("setuid"),
        SETID("setgid"),
        SETID("setreuid"),
        SETID("setregid"),
        SETID("setresuid"),
        SETID("setresgid"),
        SETID("setfsuid"),
        SETID("setfsgid"),
        SETID("setgroups"),
        SETID("capset"),
        PATHWRITE("mkdir", fs_handle_mkdir, "made by the worker as the child, the caller's umask"),
        PATHWRITE("mkdirat", fs_handle_mkdir, "as mkdir"),
        /* always trapped: natively Landlock refuses device nodes (and the
         * whiteout 0:0 overlayfs uses) with EACCES where the kernel and the
         * sentry answer EPERM; mknod is rare, so it costs nothing to serve */
        {.name = "mknod",
         .action = SC_EMULATE,
         .handler = fs_handle_mknod,
         .support = SUPPORT_FULL,
         .ctx = CTX_FS,
         .note = "FIFOs, sockets, regular files, whiteouts; devices EPERM"},
        {.name = "mknodat",
         .action = SC_EMULATE,
         .handler = fs_handle_mknod,
         .support = SUPPORT_FULL,
         .ctx = CTX_FS,
         .note = "as mknod"},
        PATHWRITE("unlink", fs_handle_unlink, "the name unlinked in its pinned directory"),
        PATHWRITE("unlinkat", fs_handle_unlink, "as unlink; AT_REMOVEDIR"),
        PATHWRITE("rmdir", fs_handle_unlink, "as unlinkat(AT_REMOVEDIR)"),
        PATHWRITE("rename", fs_handle_rename, "both names pinned in their directories"),
        PATHWRITE("renameat", fs_handle_rename, "as rename"),
        PATHWRITE("renameat2", fs_handle_rename, "as rename; NOREPLACE, EXCHANGE, WHITEOUT"),
        PATHWRITE("link", fs_handle_link, "a file outside the view fails (EXDEV)"),
        PATHWRITE("linkat", fs_handle_link, "as link; AT_SYMLINK_FOLLOW, AT_EMPTY_PATH"),
        PATHWRITE("symlink", fs_handle_symlink, "target stored as given, resolved in the view when followed"),
        PATHWRITE("symlinkat", fs_handle_symlink, "as symlink"),
        PATHWRITE("chmod", fs_handle_chmod, "by the worker as the child"),
        PATHWRITE("fchmodat", fs_handle_chmod, "as chmod"),
        {.name = "fchmodat2",
         .nr = 452,
         .action = SC_EMULATE,
         .handler = fs_handle_chmod,
         .ctx = CTX_FS,
         .support = SUPPORT_FULL,
         .flags = SC_F_PATH_POLICY | SC_F_PATH_WRITE,
         .note = "as chmod; AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH" FASTW},
        /* setuid and setgid modes are the sentry's to decide, whatever the
         * policy: never outside the sandbox's own filesystems (a bind's host
         * owner may be root); other modes run natively as above */
        SETIDCOND("chmod", 1, fs_handle_chmod,
                  "a setuid or setgid mode emulated (only on the sandbox's own filesystems)"),
        SETIDCOND("fchmodat", 2, fs_handle_chmod, "as chmod"),
        /* linkat(fd, "", AT_EMPTY_PATH) of a file the sentry opened (an
         * O_TMPFILE: opens with it are emulated) is refused natively
         * (ENOENT: the kernel lets only its opener's credentials, or
         * CAP_DAC_READ_SEARCH, link an fd), where natively its own opener
         * links it: served by the sentry, on the open file itself
         * (paths.c). The flag is a register. */
        {.name = "linkat",
         .action = SC_EMULATE,
         .handler = fs_handle_link,
         .support = SUPPORT_FULL,
         .ctx = CTX_FS,
         .flags = SC_F_PATH_FAST_NOASK,
         .note = "with AT_EMPTY_PATH emulated (an O_TMPFILE the sentry opened)",
         .n_cond = 1,
         .cond = {{.arg = 4, .op = ARG_MASKED_ANY, .mask = AT_EMPTY_PATH}}},
        /* RENAME_WHITEOUT leaves a whiteout (character device 0:0) where
         * the source was, and the kernel lets anyone make one: in a bind
         * it would be a device node on the host, which the sentry refuses
         * (paths.c, as mknod's whiteout). The flag is a register. */
        {.name = "renameat2",
         .action = SC_EMULATE,
         .handler = fs_handle_rename,
         .support = SUPPORT_FULL,
         .ctx = CTX_FS,
         .flags = SC_F_PATH_FAST_NOASK,
         .note = "with RENAME_WHITEOUT emulated (never in a bind)",
         .n_cond = 1,
         .cond = {{.arg = 4, .op = ARG_MASKED_ANY, .mask = RENAME_WHITEOUT}}},
        {.name = "fchmodat2",
         .nr = 452,
         .action = SC_EMULATE,
         .handler = fs_handle_chmod,
         .ctx = CTX_FS,
         .support = SUPPORT_FULL,
         .flags = SC_F_PATH_FAST_NOASK,
         .note = "as chmod",
         .n_cond = 1,
         .cond = {{.arg = 2, .op = ARG_MASKED_ANY, .mask = SETID_BITS}}},
        {.name = "fchmod",
         .action = SC_EMULATE,
         .handler = fs_handle_fchmod,
         .ctx = CTX_FS,
         .support = SUPPORT_FULL,
         .note = "native but for a setuid or setgid mode: on the fd taken across, only on the sandbox's own "
                 "filesystems",
         .n_cond = 1,
         .cond = {{.arg = 1, .op = ARG_MASKED_ANY, .mask = SETID_BITS}}},
        PATHWRITE("chown", fs_handle_chown, "ids translated from the child's namespace (unmapped: EINVAL)"),
        PATHWRITE("lchown", fs_handle_chown, "as chown, the last symlink not followed"),
        PATHWRITE("fchownat", fs_handle_chown, "as chown; AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH"),
        PATHWRITE("utimes", fs_handle_utimes, "times copied once"),
        PATHWRITE("utimensat", fs_handle_utimes, "as utimes; a NULL path is futimens on the fd"),
        PATHWRITE("futimesat", fs_handle_utimes, "as utimes"),
        PATHWRITE("truncate", fs_handle_truncate, "on the pinned file"),
        PATHCALL("statfs", fs_handle_statfs, "of the pinned file's filesystem"),
        PATHCALL("getxattr", fs_handle_xattr, "sizes bounded as the kernel's; ACL ids not translated"),
        PATHCALL("lgetxattr", fs_handle_xattr, "as getxattr, the last symlink not followed"),
        /* always trapped: the name is in memory, and security.capability
         * (host-wide capabilities, written through a bind owned by host
         * root) is refused outside the sandbox's own filesystems */
        {.name = "setxattr",
         .action = SC_EMULATE,
         .handler = fs_handle_xattr,
         .ctx = CTX_FS,
         .support = SUPPORT_FULL,
         .note = "value copied once, at most XATTR_SIZE_MAX; security.capability only on the sandbox's own "
                 "filesystems"},
        {.name = "lsetxattr",
         .action = SC_EMULATE,
         .handler = fs_handle_xattr,
         .ctx = CTX_FS,
         .support = SUPPORT_FULL,
         .note = "as setxattr, the last symlink not followed"},
        {.name = "fsetxattr",
         .action = SC_EMULATE,
         .handler = fs_handle_xattr,
         .ctx = CTX_FS,
         .support = SUPPORT_FULL,
         .note = "as setxattr, on the fd taken across"},
        PATHCALL("listxattr", fs_handle_xattr, "at most XATTR_LIST_MAX"),
        PATHCALL("llistxattr", fs_handle_xattr, "as listxattr, the last symlink not followed"),
        PATHWRITE("removexattr", fs_handle_xattr, "by the worker as the child"),
        PATHWRITE("lremovexattr", fs_handle_xattr, "as removexattr, the last symlink not followed"),
        PATHCALL("getdents64", fs_handle_getdents, "a hidden path's name is dropped from its parent's listing"),
        PATHCALL("getdents", fs_handle_getdents, "as getdents64, in the old record format"),
        PATHCALL("inotify_add_watch", fs_handle_inotify_add_watch, "added on a duplicate of the child's inotify fd"),
        /* without --trap-all, a hidden rule or a write ask rule, only noted
         * (handle_cwd_change): the view decides the same */
        {.name = "chdir",
         .action = SC_EMULATE,
         .handler = handle_cwd_change,
         .support = SUPPORT_FULL,
         .flags = SC_F_PATH_FAST_NOASK,
         .note = "noted for the working directory's per-thread cache (relative write opens), then run by the "
                 "kernel; only without --trap-all, a hidden rule or a write ask rule"},
        {.name = "fchdir",
         .action = SC_EMULATE,
         .handler = handle_cwd_change,
         .support = SUPPORT_FULL,
         .flags = SC_F_PATH_FAST_NOASK,
         .note = "as chdir"},
        {.name = "chdir",
         .action = SC_EMULATE,
         .handler = fs_handle_chdir,
         .ctx = CTX_FS,
         .support = SUPPORT_PARTIAL,
         .flags = SC_F_PATH_POLICY,
         .note = "resolved and checked by the worker, then CONTINUE: only the kernel sets a cwd" FAST},

        /* --- exec: checked by the sentry, performed by the kernel, verified
         * after the fact (the kernel cannot be handed a file to execute: the
         * handler answers CONTINUE and the exec tracer compares
         * /proc/PID/exe with what it approved at the exec event) --- */
        {.name = "execve",
         .action = SC_EMULATE,
         .handler = fs_handle_exec,
         .support = SUPPORT_FULL,
         .flags = SC_F_EXEC,
         .note = "x bit, noexec, x86_64 ELF or #! chain checked as the child; image verified at the exec "
                 "event" NATIVE_EXEC},
        {.name = "execveat",
         .action = SC_EMULATE,
         .handler = fs_handle_exec,
         .support = SUPPORT_FULL,
         .flags = SC_F_EXEC,
         .note = "as execve; dirfd, AT_EMPTY_PATH (fexecve) and AT_SYMLINK_NOFOLLOW honoured" NATIVE_EXEC},

        /* --- the egress gate: calls that name a destination --- */
        {.name = "connect",
         .action = SC_EMULATE,
         .handler = net_handle_connect,
         .ctx = CTX_NET,
         .support = SUPPORT_FULL,
         .note = "own loopback passes; a listed name is connected by the sentry; else EACCES"},
        {.name = "sendto",
         .action = SC_EMULATE,
         .handler = net_handle_sendto,
         .ctx = CTX_NET,
         .support = SUPPORT_FULL,
         .note = "with an address (without one it runs natively); TCP fast open",
         .n_cond = 1,
         .cond = {{.arg = 4, .op = ARG_NE, .datum = 0}}},
        {.name = "getpeername",
         .action = SC_EMULATE,
         .handler = net_handle_getpeername,
         .ctx = CTX_NET,
         .support = SUPPORT_FULL,
         .note = "a connection through the gate's relay names its upstream; any other runs natively"},
        {.name = "sendmsg",
         .action = SC_EMULATE,
         .handler = net_handle_sendmsg,
         .ctx = CTX_NET,
         .support = SUPPORT_PARTIAL,
         .note = "an address in msg_name is checked; TCP fast open refused"},
        {.name = "sendmmsg",
         .action = SC_EMULATE,
         .handler = net_handle_sendmsg,
         .ctx = CTX_NET,
         .support = SUPPORT_PARTIAL,
         .note = "as sendmsg, for each message"},

        {.name = "ioctl",
         .action = SC_EMULATE,
         .handler = net_handle_sockioctl,
         .ctx = CTX_NET,
         .support = SUPPORT_FULL,
         .note = "socket ioctls (0x89xx): refused on a gate socket (the host's interfaces)",
         .n_cond = 1,
         .cond = {{.arg = 1, .op = ARG_MASKED_EQ, .mask = 0xffffff00, .datum = 0x8900}}},

        /* --- process personality --- */
        {.name = "personality",
         .action = SC_EMULATE,
         .handler = handle_personality,
         .support = SUPPORT_FULL,
         .note = "READ_IMPLIES_EXEC refused (EPERM): it would make readable mappings executable",
         .n_cond = 1,
         .cond = {{.arg = 0, .op = ARG_MASKED_EQ, .mask = PER_READ_IMPLIES_EXEC, .datum = PER_READ_IMPLIES_EXEC}}},

        /* --- mounts and roots: the view is fixed once the child runs --- */
        REFUSE("mount", EPERM, "the view is assembled by cordon before the child runs"),
        REFUSE("umount2", EPERM, "would uncover masked paths"),
        REFUSE("pivot_root", EPERM, "the view's root is fixed"),
        REFUSE("chroot", EPERM, "the view's root is fixed"),
        REFUSE("fsopen", EPERM, "new mount API"),
        REFUSE("fsconfig", EPERM, "new mount API"),
        REFUSE("fsmount", EPERM, "new mount API"),
        REFUSE("fspick", EPERM, "new mount API"),
        REFUSE("move_mount", EPERM, "new mount API"),
        REFUSE("open_tree", EPERM, "new mount API"),
        REFUSE("mount_setattr", EPERM, "would make read-only mounts writable"),
        {.name = "open_tree_attr",
         .nr = 467,
         .action = SC_ERRNO,
         .err = EPERM,
         .support = SUPPORT_FULL,
         .note = "new mount API (Linux 6.15)"},
        REFUSE("open_by_handle_at", EPERM, "opens by inode handle, bypassing the view (the shocker escape)"),
        REFUSE("name_to_handle_at", EOPNOTSUPP, "pairs with open_by_handle_at"),

        /* --- namespaces: a new one would escape the sentry's view of the child --- */
        REFUSE("setns", EPERM, "no joining other namespaces"),
        REFUSE_IF("unshare", EPERM, "no new namespaces (user namespaces expose kernel attack surface)",
                  {.arg = 0, .op = ARG_MASKED_ANY, .mask = NS_FLAGS}),
        /* With native execs only: as the clone row below, a thread that
         * unshares its fs_struct */
        {.name = "unshare",
         .action = SC_EMULATE,
         .handler = handle_clone_unshared_fs,
         .support = SUPPORT_FULL,
         .flags = SC_F_EXEC_NATIVE,
         .note = "an fs_struct of its own switches the umask cache off (native execs only)",
         .n_cond = 1,
         .cond = {{.arg = 0, .op = ARG_MASKED_EQ, .mask = CLONE_FS | NS_FLAGS, .datum = CLONE_FS}}},
        REFUSE_IF("clone", EPERM, "fork/threads allowed; new namespaces refused",
                  {.arg = 0, .op = ARG_MASKED_ANY, .mask = NS_FLAGS}),
        REFUSE("clone3", ENOSYS, "flags live in memory the filter cannot read; libc falls back to clone"),
        /* With native execs only: a thread that does not share its
         * creator's fs_struct (CLONE_THREAD without CLONE_FS) could exec
         * and take its leader's tid with another umask, which the trapped
         * exec would have told the umask cache (notify/umask.c). Rare: the
         * cache is switched off for the run instead. */
        {.name = "clone",
         .action = SC_EMULATE,
         .handler = handle_clone_unshared_fs,
         .support = SUPPORT_FULL,
         .flags = SC_F_EXEC_NATIVE,
         .note = "a thread with its own fs_struct switches the umask cache off (native execs only)",
         .n_cond = 1,
         /* no namespace flag either: those the clone row above refuses */
         .cond = {{.arg = 0, .op = ARG_MASKED_EQ, .mask = CLONE_THREAD | CLONE_FS | NS_FLAGS, .datum = CLONE_THREAD}}},

        /* --- other processes and the kernel --- */
        REFUSE("ptrace", EPERM, "no tracing: it could rewrite a checked syscall"),
        REFUSE("process_vm_readv", EPERM, "no cross-process memory access"),
        REFUSE("process_vm_writev", EPERM, "no cross-process memory access"),
        REFUSE("pidfd_getfd", EPERM, "no stealing another process's fds"),
        REFUSE("kcmp", EPERM, "reveals kernel pointers ordering"),
        REFUSE("kexec_load", EPERM, "host kernel"),
        REFUSE("kexec_file_load", EPERM, "host kernel"),
        REFUSE("init_module", EPERM, "host kernel"),
        REFUSE("finit_module", EPERM, "host kernel"),
        REFUSE("delete_module", EPERM, "host kernel"),
        REFUSE("bpf", EPERM, "kernel attack surface"),
        REFUSE("perf_event_open", EPERM, "kernel attack surface and side channels"),
        REFUSE("userfaultfd", EPERM, "used to widen kernel race windows"),
        REFUSE("io_uring_setup", ENOSYS, "io_uring performs syscalls the filter never sees"),
        REFUSE("io_uring_enter", ENOSYS, "io_uring performs syscalls the filter never sees"),
        REFUSE("io_uring_register", ENOSYS, "io_uring performs syscalls the filter never sees"),
        REFUSE("keyctl", EPERM, "the kernel keyring is not namespaced"),
        REFUSE("add_key", EPERM, "the kernel keyring is not namespaced"),
        REFUSE("request_key", EPERM, "the kernel keyring is not namespaced"),
        REFUSE("iopl", EPERM, "raw I/O ports"),
        REFUSE("ioperm", EPERM, "raw I/O ports"),
        REFUSE("reboot", EPERM, "host power"),
        REFUSE("swapon", EPERM, "host swap"),
        REFUSE("swapoff", EPERM, "host swap"),
        REFUSE("acct", EPERM, "host process accounting"),
        REFUSE("settimeofday", EPERM, "host clock"),
        REFUSE("clock_settime", EPERM, "host clock"),
        REFUSE("clock_adjtime", EPERM, "host clock"),
        REFUSE("adjtimex", EPERM, "host clock"),
        REFUSE("syslog", EPERM, "host kernel log"),
        REFUSE("quotactl", EPERM, "host quotas"),
        REFUSE("quotactl_fd", EPERM, "host quotas"),
        REFUSE("lookup_dcookie", EPERM, "host profiling"),
        REFUSE("fanotify_init", EPERM, "filesystem-wide monitoring"),
        REFUSE("vhangup", EPERM, "terminal of others"),
        REFUSE("uselib", EPERM, "obsolete"),
        REFUSE("modify_ldt", EPERM,
               "a process's own segment descriptors: 16-bit code's (Wine), whose kernel side has had privilege "
               "escalations"),
        REFUSE("nfsservctl", EPERM, "obsolete"),

        /* --- seccomp: a nested listener answering CONTINUE would override ours --- */
        REFUSE_IF("seccomp", EPERM, "filters may be added, but not with their own listener",
                  {.arg = 0, .op = ARG_EQ, .mask = LOW32, .datum = SECCOMP_SET_MODE_FILTER},
                  {.arg = 1,
                   .op = ARG_MASKED_EQ,
                   .mask = SECCOMP_FILTER_FLAG_NEW_LISTENER,
                   .datum = SECCOMP_FILTER_FLAG_NEW_LISTENER}),

        /* --- core dumps: init sets RLIMIT_CORE to one byte, below which the
         * kernel writes no core file and, for a core_pattern pipe (a host
         * program, run as host root), skips the dump; at zero it would pipe
         * the sandbox's memory to that program. So the limit stays (see
         * handle_core_limit). The resource is an unsigned int: its low 32
         * bits. --- */
        {.name = "setrlimit",
         .action = SC_EMULATE,
         .handler = handle_core_limit,
         .support = SUPPORT_FULL,
         .note = "RLIMIT_CORE: a set fails as natively or succeeds and sets nothing (the one-byte limit stays)",
         .n_cond = 1,
         .cond = {{.arg = 0, .op = ARG_EQ, .mask = LOW32, .datum = RLIMIT_CORE}}},
        {.name = "prlimit64",
         .action = SC_EMULATE,
         .handler = handle_core_limit,
         .support = SUPPORT_FULL,
         .note = "RLIMIT_CORE: a read native, a set as setrlimit's",
         .n_cond = 1,
         .cond = {{.arg = 1, .op = ARG_EQ, .mask = LOW32, .datum = RLIMIT_CORE}}},

        /* --- terminals: no typing into someone else's input queue --- */
        REFUSE_IF("ioctl", EPERM, "TIOCSTI would inject input into a terminal",
                  {.arg = 1, .op = ARG_EQ, .mask = LOW32, .datum = TIOCSTI}),
        REFUSE_IF("ioctl", EPERM, "TIOCLINUX can inject input on a virtual console",
                  {.arg = 1, .op = ARG_EQ, .mask = LOW32, .datum = TIOCLINUX}),
        /* a line discipline other than the terminal's own loads its module
         * host-wide where the host autoloads them (dev.tty.ldisc_autoload),
         * and n_hdlc's and n_gsm's have had privilege escalations; the
         * discipline is behind a pointer, so every attach is refused, with
         * the kernel's own error for a discipline it will not load
         * (TIOCGETD, the query, runs) */
        REFUSE_IF("ioctl", EPERM, "TIOCSETD would attach a line discipline (its module loaded host-wide)",
                  {.arg = 1, .op = ARG_EQ, .mask = LOW32, .datum = TIOCSETD}),

        /* --- sockets: only unix, inet, inet6 and netlink-route families --- */
        REFUSE_IF("socket", EAFNOSUPPORT, "families 17 and up (packet, vsock to the hypervisor, bluetooth, ...)",
                  {.arg = 0, .op = ARG_GE, .datum = 17}),
        REFUSE_IF("socket", EAFNOSUPPORT, "AF_AX25 .. AF_ROSE", {.arg = 0, .op = ARG_EQ, .datum = 3}),
        REFUSE_IF("socket", EAFNOSUPPORT, "AF_IPX", {.arg = 0, .op = ARG_EQ, .datum = 4}),
        REFUSE_IF("socket", EAFNOSUPPORT, "AF_APPLETALK", {.arg = 0, .op = ARG_EQ, .datum = 5}),
        REFUSE_IF("socket", EAFNOSUPPORT, "AF_NETROM", {.arg = 0, .op = ARG_EQ, .datum = 6}),
        REFUSE_IF("socket", EAFNOSUPPORT, "AF_BRIDGE", {.arg = 0, .op = ARG_EQ, .datum = 7}),
        REFUSE_IF("socket", EAFNOSUPPORT, "AF_ATMPVC", {.arg = 0, .op = ARG_EQ, .datum = 8}),
        REFUSE_IF("socket", EAFNOSUPPORT, "AF_X25", {.arg = 0, .op = ARG_EQ, .datum = 9}),
        REFUSE_IF("socket", EAFNOSUPPORT, "AF_ROSE", {.arg = 0, .op = ARG_EQ, .datum = 11}),
        REFUSE_IF("socket", EAFNOSUPPORT, "AF_DECnet", {.arg = 0, .op = ARG_EQ, .datum = 12}),
        REFUSE_IF("socket", EAFNOSUPPORT, "AF_NETBEUI", {.arg = 0, .op = ARG_EQ, .datum = 13}),
        REFUSE_IF("socket", EAFNOSUPPORT, "AF_SECURITY", {.arg = 0, .op = ARG_EQ, .datum = 14}),
        REFUSE_IF("socket", EAFNOSUPPORT, "AF_KEY (IPsec keys)", {.arg = 0, .op = ARG_EQ, .datum = 15}),
        REFUSE_IF("socket", EAFNOSUPPORT, "netlink other than NETLINK_ROUTE (audit, uevent, ...)",
                  {.arg = 0, .op = ARG_EQ, .datum = AF_NETLINK}, {.arg = 2, .op = ARG_NE, .datum = 0}),
        REFUSE_IF("socket", EPERM, "raw IPv4 sockets", {.arg = 0, .op = ARG_EQ, .datum = AF_INET},
                  {.arg = 1, .op = ARG_MASKED_EQ, .mask = 0xf, .datum = SOCK_RAW}),
        REFUSE_IF("socket", EAFNOSUPPORT, "SOCK_PACKET on AF_INET: the legacy packet-socket interface",
                  {.arg = 0, .op = ARG_EQ, .datum = AF_INET},
                  {.arg = 1, .op = ARG_MASKED_EQ, .mask = 0xf, .datum = SOCK_PACKET}),
        /* IPv4 and IPv6: TCP, UDP and ping sockets only. The other kinds
         * (SCTP, DCCP, MPTCP, SMC, L2TP, UDP-Lite) are kernel code most
         * programs never reach, and on a host with modules a socket of one
         * loads its module for the whole host (net-pf-2-proto-132: DCCP's
         * and SCTP's have had their privilege escalations). Refused with
         * the kernel's own errors for a kind it lacks. The family is
         * compared whole: with any high bit set it is refused above. */
        REFUSE_IF("socket", EPROTONOSUPPORT, "IPv4 streams other than TCP (SCTP, MPTCP, SMC)",
                  {.arg = 0, .op = ARG_EQ, .datum = AF_INET},
                  {.arg = 1, .op = ARG_MASKED_EQ, .mask = 0xf, .datum = SOCK_STREAM},
                  {.arg = 2, .op = ARG_GE, .datum = IPPROTO_TCP + 1}),
        REFUSE_IF("socket", EPROTONOSUPPORT, "IPv6 streams other than TCP (SCTP, MPTCP, SMC)",
                  {.arg = 0, .op = ARG_EQ, .datum = AF_INET6},
                  {.arg = 1, .op = ARG_MASKED_EQ, .mask = 0xf, .datum = SOCK_STREAM},
                  {.arg = 2, .op = ARG_GE, .datum = IPPROTO_TCP + 1}),
        REFUSE_IF("socket", EPROTONOSUPPORT, "IPv4 datagrams other than UDP and ping (L2TP, UDP-Lite)",
                  {.arg = 0, .op = ARG_EQ, .datum = AF_INET},
                  {.arg = 1, .op = ARG_MASKED_EQ, .mask = 0xf, .datum = SOCK_DGRAM},
                  {.arg = 2, .op = ARG_GE, .datum = IPPROTO_UDP + 1}),
        REFUSE_IF("socket", EPROTONOSUPPORT, "IPv6 datagrams other than UDP and ping (L2TP, UDP-Lite)",
                  {.arg = 0, .op = ARG_EQ, .datum = AF_INET6},
                  {.arg = 1, .op = ARG_MASKED_EQ, .mask = 0xf, .datum = SOCK_DGRAM},
                  {.arg = 2, .op = ARG_GE, .datum = IPPROTO_ICMPV6 + 1}),
        REFUSE_IF("socket", ESOCKTNOSUPPORT, "IPv4 SOCK_RDM", {.arg = 0, .op = ARG_EQ, .datum = AF_INET},
                  {.arg = 1, .op = ARG_MASKED_EQ, .mask = 0xf, .datum = SOCK_RDM}),
        REFUSE_IF("socket", ESOCKTNOSUPPORT, "IPv6 SOCK_RDM", {.arg = 0, .op = ARG_EQ, .datum = AF_INET6},
                  {.arg = 1, .op = ARG_MASKED_EQ, .mask = 0xf, .datum = SOCK_RDM}),
        REFUSE_IF("socket", ESOCKTNOSUPPORT, "IPv4 SOCK_SEQPACKET (SCTP)", {.arg = 0, .op = ARG_EQ, .datum = AF_INET},
                  {.arg = 1, .op = ARG_MASKED_EQ, .mask = 0xf, .datum = SOCK_SEQPACKET}),
        REFUSE_IF("socket", ESOCKTNOSUPPORT, "IPv6 SOCK_SEQPACKET (SCTP)", {.arg = 0, .op = ARG_EQ, .datum = AF_INET6},
                  {.arg = 1, .op = ARG_MASKED_EQ, .mask = 0xf, .datum = SOCK_SEQPACKET}),
        REFUSE_IF("socket", ESOCKTNOSUPPORT, "IPv4 SOCK_DCCP", {.arg = 0, .op = ARG_EQ, .datum = AF_INET},
                  {.arg = 1, .op = ARG_MASKED_EQ, .mask = 0xf, .datum = SOCK_DCCP}),
        REFUSE_IF("socket", ESOCKTNOSUPPORT, "IPv6 SOCK_DCCP", {.arg = 0, .op = ARG_EQ, .datum = AF_INET6},
                  {.arg = 1, .op = ARG_MASKED_EQ, .mask = 0xf, .datum = SOCK_DCCP}),
        /* An IPv6 routing header (IPV6_RTHDR; IPV6_2292RTHDR, its RFC 2292
         * name) makes a socket's packets go to the header's first address
         * instead of the one it is connected to, and the kernel lets any
         * user set one of type 2 (Mobile IPv6) or 4 (segment routing) on
         * its sockets, the gate's upstream ones included: a sandbox would
         * send its connection's segments to an address the gate never
         * checked (a metadata service, an internal router). Refused on
         * every socket; the IPv4 form (IP_OPTIONS with a source route)
         * needs CAP_NET_RAW over the socket's network namespace, which no
         * sandbox holds over the host's or an engine's (escape-probe
         * egress-gate-sockopts). Level and name are ints to the kernel:
         * compared on their low 32 bits. */
        REFUSE_IF("setsockopt", EPERM, "IPv6 routing headers (IPV6_RTHDR): source routing",
                  {.arg = 1, .op = ARG_MASKED_EQ, .mask = 0xffffffff, .datum = IPPROTO_IPV6},
                  {.arg = 2, .op = ARG_MASKED_EQ, .mask = 0xffffffff, .datum = IPV6_RTHDR}),
        REFUSE_IF("setsockopt", EPERM, "IPv6 routing headers (IPV6_2292RTHDR): source routing",
                  {.arg = 1, .op = ARG_MASKED_EQ, .mask = 0xffffffff, .datum = IPPROTO_IPV6},
                  {.arg = 2, .op = ARG_MASKED_EQ, .mask = 0xffffffff, .datum = IPV6_2292RTHDR}),
        REFUSE_IF("socketpair", EAFNOSUPPORT,
                  "unix pairs only: the pair is made by the family's own code (AF_TIPC makes them)",
                  {.arg = 0, .op = ARG_NE, .datum = AF_UNIX}),
        REFUSE_IF("socket", EPERM, "raw IPv6 sockets", {.arg = 0, .op = ARG_EQ, .datum = AF_INET6},
                  {.arg = 1, .op = ARG_MASKED_EQ, .mask = 0xf, .datum = SOCK_RAW}),
};

/* A pipe pattern skips the dump at the sandbox's one-byte limit, and a file
 * pattern is written in the crashing process's own view, where that limit
 * writes nothing. A socket pattern ("@", Linux 6.16) connects to a host
 * service whatever the limit, and so does a pipe where the limit is 0 (see
 * sentry_core_limit): nothing a process or its runtime can set keeps its
 * memory from that host program, so a sandbox cannot be started (fail
 * closed). */
static int core_pattern_contained(const char *pattern, char *why, size_t size)
{
        if (pattern[0] == '|' && sentry_core_limit() == 0) {
                snprintf(why, size,
                         "kernel.core_pattern is a pipe (%s) and cordon was started with a hard core limit of 0, "
                         "which it cannot raise to the one byte at which the kernel skips the pipe: a crash in the "
                         "sandbox would send its memory to that host program, so cordon refuses to start (start it "
                         "with a hard core limit of 1 or more: ulimit -H -c unlimited)",
                         pattern);
                return -EPERM;
        }
        if (pattern[0] == '@') {
                snprintf(why, size,
                         "kernel.core_pattern is a socket (%s): a crash in the sandbox would send its memory to that "
                         "host service whatever the core limit, so cordon refuses to start (set a file or '|' pipe "
                         "pattern: sysctl kernel.core_pattern=core)",
                         pattern);
                return -EPERM;
        }
        return 0;
}

int sentry_core_dumps_contained(char *why, size_t size)
{
        /* the host's pattern (the sysctl is not namespaced), read before any
         * view exists; no such sysctl (a kernel without core dumps): the
         * limit holds for what exists. Any other failure to read it fails
         * closed: the pattern could be a socket. */
        char pattern[256] = "";
        _cleanup_close_ int fd = open("/proc/sys/kernel/core_pattern", O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, pattern, sizeof(pattern) - 1) : 0;
        if ((fd < 0 && errno != ENOENT) || n < 0) {
                snprintf(why, size,
                         "cannot read kernel.core_pattern (%m): a crash in the sandbox could send its memory to a "
                         "host program, so cordon refuses to start");
                return -EPERM;
        }
        pattern[n] = '\0';
        pattern[strcspn(pattern, "\n")] = '\0';
        int r = core_pattern_contained(pattern, why, size);
        /* test hook: a pattern judged as well as the host's, which can only
         * add a refusal (the runners must not set the host's to one that
         * refuses: every other runner's sandboxes would stop starting) */
        const char *test = getenv("CORDON_TEST_CORE_PATTERN");
        if (r == 0 && test)
                r = core_pattern_contained(test, why, size);
        return r;
}

const struct syscall_entry *sentry_syscall_table(size_t *ret_n)
{
        *ret_n = ELEMENTSOF(table);
        return table;
}

size_t sentry_syscall_select_rows(bool trap_paths, bool trap_writes, bool native_exec, struct syscall_entry *ret,
                                  size_t size)
{
        size_t n_all, n = 0;
        const struct syscall_entry *all = sentry_syscall_table(&n_all);
        for (size_t i = 0; i < n_all && n < size; i++) {
                if ((all[i].flags & SC_F_EXEC) && native_exec)
                        continue;
                if ((all[i].flags & SC_F_EXEC_NATIVE) && !native_exec)
                        continue;
                /* the conditional open rows stand in for the unconditional
                 * ones exactly when those are left out */
                if (all[i].flags & SC_F_PATH_FAST) {
                        if (!trap_paths && trap_writes)
                                ret[n++] = all[i];
                } else if (all[i].flags & SC_F_PATH_FAST_NOASK) {
                        if (!trap_paths && !trap_writes)
                                ret[n++] = all[i];
                } else if (!(all[i].flags & SC_F_PATH_POLICY) || trap_paths ||
                           (trap_writes && (all[i].flags & SC_F_PATH_WRITE)))
                        ret[n++] = all[i];
        }
        return n;
}

size_t sentry_syscall_select(bool trap_paths, struct syscall_entry *ret, size_t size)
{
        return sentry_syscall_select_rows(trap_paths, false, false, ret, size);
}
