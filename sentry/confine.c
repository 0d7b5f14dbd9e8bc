/* The sentry's own seccomp filter (DESIGN.md, "The layers of defence"): once
 * the sandbox is set up, everything the sentry still does is serving
 * notifications, relaying a terminal, running the egress gate and cleaning
 * up. A handler fed by hostile input (a path, a sockaddr, a DNS packet) that
 * a bug turned into code execution should find no more than that: no exec,
 * no new namespaces or mounts, no module or BPF loading, no tracing, no new
 * processes. The filter is an allow-list; each row says why the sentry needs
 * the call. Anything else fails with EPERM, and exec kills the sentry (and
 * with it the sandbox, which never runs unsupervised).
 *
 * It applies to every thread at once (TSYNC) and to threads started later
 * (the engine grows its workers on demand; they inherit it). */
#include "config.h"

#include <linux/sched.h>
#include <seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "common/allowlist.h"
#include "common/util.h"
#include "sentry/prebuilt.h"
#include "sentry/sentry-internal.h"

struct allow {
        const char *name;
        const char *why;
};

/* clang-format off */
static const struct allow allowed[] = {
        /* memory and threads of the sentry itself */
        {"brk", "malloc"}, {"mmap", "malloc, thread stacks"}, {"munmap", "malloc"}, {"mremap", "realloc"},
        {"mprotect", "thread stack guards"}, {"madvise", "malloc trimming, thread exit"},
        {"futex", "locks between workers"}, {"set_robust_list", "new threads"}, {"rseq", "new threads"},
        {"get_robust_list", "glibc"}, {"sched_yield", "locks"}, {"sched_getaffinity", "glibc sysconf"},
        {"membarrier", "glibc"},
        {"exit", "a worker ends"}, {"exit_group", "the sentry ends"},
        {"gettid", "logging, thread ids"}, {"getpid", "glibc"}, {"getppid", "glibc"},
        {"getpgrp", "whether cordon is its terminal's foreground job (tty_begin: raw mode for the relay)"},
        {"getuid", "glibc"}, {"geteuid", "glibc"}, {"getgid", "glibc"}, {"getegid", "glibc"},
        {"getresuid", "glibc"}, {"getresgid", "glibc"}, {"getgroups", "glibc"},
        {"rt_sigprocmask", "threads block signals"}, {"rt_sigaction", "glibc"}, {"rt_sigreturn", "signals"},
        {"sigaltstack", "thread exit"}, {"tgkill", "pthread_kill, abort"}, {"tkill", "abort"},
        {"clock_gettime", "timeouts"}, {"clock_nanosleep", "waiting for a child to die"},
        {"restart_syscall", "a sleep or timed poll resumed after the sentry was stopped and continued"},
        {"nanosleep", "waiting"}, {"gettimeofday", "timestamps"}, {"time", "timestamps"},
        {"getrandom", "DNS ids, random ids"}, {"uname", "glibc"}, {"prctl", "thread names, dumpable"},
        {"arch_prctl", "glibc"}, {"getrlimit", "glibc"}, {"prlimit64", "glibc"}, {"getrusage", "stats"},
        {"sysinfo", "glibc"},

        /* file descriptors: the notify fd, pipes, sockets, /proc */
        {"read", "notify replies, /proc, signalfd, the terminal"}, {"write", "the terminal, audit log"},
        {"pread64", "/proc/TID/mem fallback"}, {"pwrite64", "/proc/TID/mem writes"},
        {"readv", "glibc"}, {"writev", "glibc stdio"}, {"close", "everything"}, {"close_range", "glibc"},
        {"dup", "fds for injection"}, {"dup2", "glibc"}, {"dup3", "fds for injection"},
        {"fcntl", "flags of fds and sockets"}, {"ioctl", "seccomp notify ioctls, termios, FIONREAD"},
        {"lseek", "/proc files"}, {"poll", "the main loop, the gate"}, {"ppoll", "glibc poll"},
        {"epoll_create1", "glibc resolver, the relays' set"}, {"epoll_ctl", "glibc resolver, the relays' set"},
        {"epoll_wait", "glibc resolver, idle relay threads"},
        {"eventfd2", "engine wake-ups"}, {"pipe2", "engine wake-ups"}, {"signalfd4", "the main loop"},
        {"timerfd_create", "timeouts"}, {"timerfd_settime", "timeouts"}, {"timerfd_gettime", "timeouts"},
        {"flock", "state locks"},

        /* the child: memory, fds, signals, exit */
        {"process_vm_readv", "reading a path or sockaddr out of the child"},
        {"process_vm_writev", "writing a result struct into the child"},
        {"pidfd_open", "signalling the sandbox without pid races"},
        {"pidfd_send_signal", "signals to the sandbox"}, {"pidfd_getfd", "the child's socket or dirfd"},
        {"kill", "signals to the sandbox"}, {"waitid", "reaping init"}, {"wait4", "reaping init"},

        /* the view, as the child (fs/): the worker performs each emulated call */
        {"openat", "emulated open; /proc; state files"}, {"open", "glibc"}, {"openat2", "emulated openat2"},
        {"newfstatat", "emulated stat"}, {"fstat", "fds"}, {"stat", "glibc"}, {"lstat", "glibc"},
        {"statx", "emulated statx, mount ids"}, {"statfs", "emulated statfs"}, {"fstatfs", "emulated statfs"},
        {"faccessat", "emulated access"}, {"faccessat2", "emulated access"}, {"access", "glibc"},
        {"readlink", "glibc"}, {"readlinkat", "emulated readlink, fd paths"},
        {"getdents64", "state and cgroup walks"}, {"getdents", "directory walks (the older call sanitizer runtimes use)"},
        {"getcwd", "glibc"},
        {"mkdirat", "emulated mkdir; state dirs"}, {"mkdir", "state dirs"}, {"mknodat", "emulated mknod"},
        {"unlinkat", "emulated unlink; state cleanup"}, {"unlink", "state cleanup"}, {"rmdir", "cgroup and state cleanup"},
        {"renameat2", "emulated rename"}, {"renameat", "emulated rename"}, {"rename", "glibc"},
        {"linkat", "emulated link"}, {"symlinkat", "emulated symlink"},
        {"fchmodat", "emulated chmod"}, {"fchmod", "emulated chmod"}, {"fchmodat2", "emulated chmod"},
        {"fchownat", "emulated chown"}, {"fchown", "emulated chown"},
        {"utimensat", "emulated utimes"}, {"truncate", "emulated truncate"}, {"ftruncate", "emulated truncate"},
        {"getxattr", "emulated xattrs"}, {"lgetxattr", "emulated xattrs"}, {"fgetxattr", "emulated xattrs"},
        {"setxattr", "emulated xattrs"}, {"lsetxattr", "emulated xattrs"}, {"fsetxattr", "emulated xattrs"},
        {"listxattr", "emulated xattrs"}, {"llistxattr", "emulated xattrs"}, {"flistxattr", "emulated xattrs"},
        {"removexattr", "emulated xattrs"}, {"lremovexattr", "emulated xattrs"}, {"fremovexattr", "emulated xattrs"},
        {"inotify_add_watch", "emulated inotify watches"}, {"umask", "the child's umask for creating calls"},
        {"fchdir", "a new worker enters the view"}, {"chdir", "a new worker enters the view"},
        {"chroot", "a new worker enters the view (its own fs context only)"},
        {"unshare", "a new worker's private fs context (CLONE_FS only, see the rule)"},
        {"setfsuid", "a new worker takes the child's identity"}, {"setfsgid", "a new worker takes the child's identity"},
        {"setgroups", "a new worker drops groups"}, {"capget", "a worker drops capabilities"},
        {"capset", "a worker drops capabilities"},

        /* a long-lived sandbox's sentry (`cordon sandbox`: sentry/sandbox/serve.c,
         * snapshot.c): its state files are synced, and a snapshot is
         * restored by a thread confined to the view as the sandbox's user
         * (libarchive makes symlinks with the older call) */
        {"fdatasync", "events and metadata of a long-lived sandbox"},
        {"symlink", "a snapshot's symlinks, restored in the view"},

        /* the egress gate and the DNS stub (net/) */
        {"socket", "the gate's upstream sockets, the resolver (families: see the rule)"},
        {"connect", "the gate connects upstream"}, {"bind", "resolver"}, {"getsockname", "the gate"},
        {"getpeername", "the gate"}, {"getsockopt", "the gate copies socket options"},
        {"setsockopt", "the gate copies socket options"}, {"sendto", "DNS"}, {"recvfrom", "DNS"},
        {"sendmsg", "fd passing to the proc agent, DNS"}, {"recvmsg", "fd passing, DNS"},
        {"sendmmsg", "glibc resolver"}, {"recvmmsg", "glibc resolver"}, {"accept4", "the DNS stub's TCP, the relays' pairs"},
        {"listen", "the DNS stub's TCP, a sandbox's exposed ports, the relays' pairs"}, {"shutdown", "the gate"},
        /* also a sandbox's exposed ports (sentry/sandbox/ports.c): bytes
         * moved between fds the sentry already holds; no new object, no
         * new reach */
        {"splice", "the gate's relays copy an allowed connection between its sockets in the kernel; an exposed "
                   "port's connections likewise"},
};
/* clang-format on */

/* Rows with a condition: what the sentry needs of a call, not all of it. */
static int allow_some(scmp_filter_ctx ctx, const char **ret_bad)
{
        int r;
        /* threads only: the sentry makes no process after set-up (a fork
         * would be a second, unsupervised program). glibc's pthread_create
         * tries clone3 first, whose flags the filter cannot read: ENOSYS
         * sends it to clone, whose flags it can. */
        *ret_bad = "clone";
        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                             SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_THREAD, CLONE_THREAD));
        if (r < 0)
                return r;
#ifdef CORDON_SANITIZERS
        /* Test builds only (--enable-sanitizers): LeakSanitizer's check at
         * exit stops the world from a helper task made with CLONE_VM but
         * not CLONE_THREAD, which then ptraces the sentry's threads. A fork
         * (no CLONE_VM) stays refused. */
        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_VM, CLONE_VM));
        if (r < 0)
                return r;
        if ((r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(ptrace), 0)) < 0)
                return r;
#endif
        *ret_bad = "clone3";
        if ((r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0)) < 0)
                return r;
        /* a worker's private fs context, nothing else (no namespaces) */
        *ret_bad = "unshare";
        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(unshare), 1, SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)CLONE_FS));
        if (r < 0)
                return r;
        /* an OCI container's sentry: its first thread into the view's mount
         * namespace and back (run.c, main_loop_in_view); no other kind */
        *ret_bad = "setns";
        r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(setns), 1, SCMP_A1(SCMP_CMP_EQ, (scmp_datum_t)CLONE_NEWNS));
        if (r < 0)
                return r;
        /* sockets: unix (the agent, the stub's peers), IPv4/IPv6 (the gate,
         * the resolver), netlink route (getaddrinfo's AI_ADDRCONFIG) */
        static const int families[] = {AF_UNIX, AF_INET, AF_INET6, AF_NETLINK};
        for (size_t i = 0; i < ELEMENTSOF(families); i++) {
                *ret_bad = "socket";
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(socket), 1,
                                     SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)families[i]));
                if (r < 0)
                        return r;
        }
        /* the classic goal of an exploit: kill rather than refuse */
        *ret_bad = "execve";
        if ((r = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(execve), 0)) < 0)
                return r;
        *ret_bad = "execveat";
        if ((r = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(execveat), 0)) < 0)
                return r;
        *ret_bad = NULL;
        return 0;
}

static bool conditional(const char *name)
{
        return streq(name, "socket") || streq(name, "unshare") || streq(name, "setns");
}

int sentry_confine_build(struct sock_fprog *ret, const char **ret_bad)
{
        /* compiled at build time from the same rows (sentry/gen-filters.c) */
        if (sentry_prebuilt_confine && sentry_prebuilt_confine(ret)) {
                if (ret_bad)
                        *ret_bad = NULL;
                return 0;
        }
        return sentry_confine_build_fresh(ret, ret_bad);
}

int sentry_confine_build_fresh(struct sock_fprog *ret, const char **ret_bad)
{
        const char *bad = NULL;
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
        if (!ctx)
                return -ENOMEM;
        int r = seccomp_ctx_tree(ctx); /* its load took ~345 us as a chain */
        /* the unconditional rows (socket and unshare get theirs in allow_some) */
        for (size_t i = 0; i < ELEMENTSOF(allowed) && r >= 0; i++) {
                if (conditional(allowed[i].name))
                        continue;
                int nr = seccomp_syscall_resolve_name(allowed[i].name);
                if (nr == __NR_SCMP_ERROR)
                        continue;
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
                if (r < 0)
                        bad = allowed[i].name;
        }
        if (r >= 0)
                r = allow_some(ctx, &bad);
        if (r >= 0 && (r = notify_filter_export(ctx, ret)) < 0)
                bad = "(compile)";
        seccomp_release(ctx);
        if (ret_bad)
                *ret_bad = r < 0 ? bad : NULL;
        return r < 0 ? r : 0;
}

int sentry_confine_load(const struct sock_fprog *prog)
{
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return negative_errno();
        /* every thread now and later; fail rather than leave one unconfined
         * (a positive return is the id of a thread that could not be synced) */
        long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, prog);
        if (r < 0)
                return negative_errno();
        return r > 0 ? -ESRCH : 0;
}

int sentry_confine(const char **ret_bad)
{
        struct sock_fprog prog = {0};
        int r = sentry_confine_build(&prog, ret_bad);
        if (r < 0)
                return r;
        r = sentry_confine_load(&prog);
        free(prog.filter);
        if (r < 0 && ret_bad)
                *ret_bad = "(load)";
        return r;
}

size_t sentry_confine_rows(void)
{
        return ELEMENTSOF(allowed) + 2; /* + the clone and exec rows */
}
