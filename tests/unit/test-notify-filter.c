#include "config.h"

/* Unit tests for the policy -> filter path (notify/filter.c with the table of
 * sentry/syscalls.c): rows of (syscall, arch, arguments, expected SECCOMP_RET_*
 * value) evaluated on the generated filter without loading it, every table row
 * evaluated against an input built from its own conditions, the interpreter's
 * refusal of malformed programs, and one run with the filter loaded for real in
 * a child. */

#include <check.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common/util.h"
#include "notify/notify.h"
#include "sentry/prebuilt.h"
#include "sentry/sentry-internal.h"
#include "sentry/sentry.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_TIPC
#define AF_TIPC 30
#endif
#ifndef AF_BLUETOOTH
#define AF_BLUETOOTH 31
#endif
#ifndef SECCOMP_GET_ACTION_AVAIL
#define SECCOMP_GET_ACTION_AVAIL 2
#endif
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif

#define X32_SYSCALL_BIT 0x40000000u

#define ALLOW    SECCOMP_RET_ALLOW
#define NOTIF    SECCOMP_RET_USER_NOTIF
#define KILL     SECCOMP_RET_KILL_PROCESS
#define ERRNO(e) (SECCOMP_RET_ERRNO | (uint32_t)(e))
/* a row that must be refused (ERRNO with any errno, or a kill), not pinned to one errno */
#define DENIED UINT32_C(0xffffffff)

/* glibc's pthread_create (clone, not clone3) and fork flags */
#define PTHREAD_CLONE_FLAGS                                                                                \
        (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS | \
         CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)
#define FORK_CLONE_FLAGS (CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID | SIGCHLD)

/* Renders a SECCOMP_RET_* value for failure messages. */
static const char *ret_name(int64_t v, char *buf, size_t size)
{
        if (v < 0) {
                snprintf(buf, size, "error %" PRId64, v);
                return buf;
        }
        uint32_t action = (uint32_t)v & SECCOMP_RET_ACTION_FULL, data = (uint32_t)v & SECCOMP_RET_DATA;
        switch (action) {
        case SECCOMP_RET_ALLOW:
                snprintf(buf, size, "ALLOW");
                break;
        case SECCOMP_RET_USER_NOTIF:
                snprintf(buf, size, "USER_NOTIF");
                break;
        case SECCOMP_RET_KILL_PROCESS:
                snprintf(buf, size, "KILL_PROCESS");
                break;
        case SECCOMP_RET_KILL_THREAD:
                snprintf(buf, size, "KILL_THREAD");
                break;
        case SECCOMP_RET_TRAP:
                snprintf(buf, size, "TRAP(%u)", data);
                break;
        case SECCOMP_RET_ERRNO: {
                const char *n = strerrorname_np((int)data);
                snprintf(buf, size, "ERRNO(%s)", n ? n : "?");
                break;
        }
        default:
                snprintf(buf, size, "%#" PRIx64, v);
                break;
        }
        return buf;
}

static int nr_of(const char *name)
{
        int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, name);
        ck_assert_msg(nr != __NR_SCMP_ERROR, "libseccomp does not know syscall %s", name);
        return nr;
}

/* A table row's number: libseccomp's, or the row's own for syscalls newer
 * than libseccomp; when both exist they must agree. */
static int row_nr(const struct syscall_entry *e)
{
        int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, e->name);
        if (nr == __NR_SCMP_ERROR) {
                ck_assert_msg(e->nr > 0, "libseccomp does not know syscall %s and the row gives no number", e->name);
                return e->nr;
        }
        if (e->nr > 0)
                ck_assert_msg(e->nr == nr, "row %s says nr %d, libseccomp %d", e->name, e->nr, nr);
        return nr;
}

/* The filter generated from the real table. Each test runs in its own forked
 * process, so building it per test keeps tests independent. */
static struct sock_fprog build_selected3(bool paths, bool writes, bool native_exec);

static struct sock_fprog build_table_filter(void)
{
        size_t n_all, n = 0;
        const struct syscall_entry *all = sentry_syscall_table(&n_all);
        /* every row but those only in force with execs native (test_native_exec_rows) */
        struct syscall_entry *t = calloc(n_all, sizeof(*t));
        for (size_t i = 0; i < n_all; i++)
                if (!(all[i].flags & SC_F_EXEC_NATIVE))
                        t[n++] = all[i];
        struct sock_fprog prog = {0};
        const char *bad = NULL;
        int r = notify_filter_build(t, n, &prog, &bad);
        free(t);
        ck_assert_msg(r == 0, "notify_filter_build failed: %d (%s) at row %s", r, strerror(-r), bad ? bad : "?");
        ck_assert_uint_gt(prog.len, 0);
        ck_assert_ptr_nonnull(prog.filter);
        return prog;
}

static int64_t eval_raw(const struct sock_fprog *prog, uint32_t arch, int nr, const uint64_t args[6])
{
        struct seccomp_data d = {.nr = nr, .arch = arch, .instruction_pointer = 0x401000};
        memcpy(d.args, args, sizeof(d.args));
        return notify_filter_eval(prog, &d);
}

/* --- table-driven rows --- */

struct row {
        const char *name;
        uint32_t expect; /* the full SECCOMP_RET_* value, errno data included */
        uint64_t args[6];
        uint32_t arch;    /* 0: AUDIT_ARCH_X86_64 */
        uint32_t nr_bits; /* ORed into the number (x32) */
        const char *what; /* the arguments as written */
};

#define R(n, exp, ...)                                                                \
        {                                                                             \
                .name = n, .expect = exp, .args = {__VA_ARGS__}, .what = #__VA_ARGS__ \
        }
#define R_ARCH(n, exp, a, bits)                                                            \
        {                                                                                  \
                .name = n, .expect = exp, .arch = a, .nr_bits = bits, .what = #a " " #bits \
        }
#define U64(x) ((uint64_t)(x))
/* what the kernel sees for an int AT_FDCWD argument: sign-extended */
#define FDCWD U64((int64_t)AT_FDCWD)

static const struct row rows[] = {
        /* the view: path syscalls go to the sentry */
        R("openat", NOTIF, FDCWD, 0x1000, O_RDONLY),
        R("open", NOTIF, 0x1000, O_RDONLY),
        R("openat2", NOTIF, FDCWD, 0x1000, 0x2000, 24),
        R("creat", NOTIF, 0x1000, 0644),
        /* exec: checked by the sentry, verified at the exec event */
        R("execve", NOTIF, 0x1000, 0x2000, 0x3000),
        R("execveat", NOTIF, FDCWD, 0x1000, 0x2000, 0x3000, 0),
        R("execveat", NOTIF, 3, 0x1000, 0x2000, 0x3000, 0x1000 /* AT_EMPTY_PATH */),

        /* everything not listed runs natively */
        R("read", ALLOW, 0, 0x1000, 10),
        R("write", ALLOW, 1, 0x1000, 10),
        R("mmap", ALLOW, 0, 4096, 3, 0x22, U64(-1), 0),
        R("getpid", ALLOW),
        R("close", ALLOW, 3),

        /* refused outright, with the table's errno */
        R("mount", ERRNO(EPERM), 0x1000, 0x2000, 0x3000, 0, 0),
        R("umount2", ERRNO(EPERM), 0x1000, 0),
        R("pivot_root", ERRNO(EPERM), 0x1000, 0x2000),
        R("chroot", ERRNO(EPERM), 0x1000),
        R("ptrace", ERRNO(EPERM), 16 /* PTRACE_ATTACH */, 1),
        R("bpf", ERRNO(EPERM), 0, 0x1000, 72),
        R("perf_event_open", ERRNO(EPERM), 0x1000, 0, U64(-1), U64(-1), 0),
        R("userfaultfd", ERRNO(EPERM), 0),
        R("keyctl", ERRNO(EPERM), 0),
        R("add_key", ERRNO(EPERM), 0x1000, 0x2000, 0, 0, U64(-4)),
        R("request_key", ERRNO(EPERM), 0x1000, 0x2000, 0, 0),
        R("kexec_load", ERRNO(EPERM), 0, 0, 0, 0),
        R("init_module", ERRNO(EPERM), 0x1000, 100, 0x2000),
        R("finit_module", ERRNO(EPERM), 3, 0x2000, 0),
        R("open_by_handle_at", ERRNO(EPERM), 3, 0x1000, O_RDONLY),
        R("iopl", ERRNO(EPERM), 3),
        R("ioperm", ERRNO(EPERM), 0x3f8, 8, 1),
        R("reboot", ERRNO(EPERM), 0xfee1dead, 672274793, 0x1234567),
        R("swapon", ERRNO(EPERM), 0x1000, 0),
        R("acct", ERRNO(EPERM), 0x1000),
        R("settimeofday", ERRNO(EPERM), 0x1000, 0),
        R("clock_settime", ERRNO(EPERM), 0, 0x1000),
        R("setns", ERRNO(EPERM), 3, 0),
        R("process_vm_readv", ERRNO(EPERM), 1, 0x1000, 1, 0x2000, 1, 0),
        R("process_vm_writev", ERRNO(EPERM), 1, 0x1000, 1, 0x2000, 1, 0),
        R("io_uring_setup", ERRNO(ENOSYS), 8, 0x1000),
        R("io_uring_enter", ERRNO(ENOSYS), 3, 1, 0, 0, 0, 0),
        R("io_uring_register", ERRNO(ENOSYS), 3, 0, 0x1000, 1),
        R("clone3", ERRNO(ENOSYS), 0x1000, 88),

        /* namespaces: any namespace bit refuses, other bits pass */
        R("unshare", ERRNO(EPERM), CLONE_NEWUSER),
        R("unshare", ERRNO(EPERM), CLONE_NEWNS | CLONE_FILES),
        R("unshare", ERRNO(EPERM), CLONE_NEWNET),
        R("unshare", ERRNO(EPERM), CLONE_NEWPID),
        R("unshare", ERRNO(EPERM), CLONE_NEWUTS),
        R("unshare", ERRNO(EPERM), CLONE_NEWIPC),
        R("unshare", ERRNO(EPERM), CLONE_NEWCGROUP),
        R("unshare", ERRNO(EPERM), CLONE_NEWTIME),
        R("unshare", ERRNO(EPERM), U64(0xffffffff00000000) | CLONE_NEWUSER),
        R("unshare", ALLOW, CLONE_FILES),
        R("unshare", ALLOW, CLONE_FS),
        R("unshare", ALLOW, CLONE_FS | CLONE_FILES | CLONE_SYSVSEM),
        R("unshare", ALLOW, 0),
        R("clone", ERRNO(EPERM), SIGCHLD | CLONE_NEWPID, 0, 0, 0, 0),
        R("clone", ERRNO(EPERM), PTHREAD_CLONE_FLAGS | CLONE_NEWUSER, 0x7000, 0x1000, 0x2000, 0x3000),
        R("clone", ALLOW, PTHREAD_CLONE_FLAGS, 0x7000, 0x1000, 0x2000, 0x3000),
        R("clone", ALLOW, FORK_CLONE_FLAGS, 0, 0, 0x2000, 0),
        R("clone", ALLOW, CLONE_VM | CLONE_VFORK | SIGCHLD, 0x7000, 0, 0, 0),

        /* terminals: the command is an int, the kernel reads the low 32 bits */
        R("ioctl", ERRNO(EPERM), 0, TIOCSTI, 0x1000),
        R("ioctl", ERRNO(EPERM), 0, U64(0xdeadbeef00000000) | TIOCSTI, 0x1000),
        R("ioctl", ERRNO(EPERM), 0, TIOCLINUX, 0x1000),
        R("ioctl", ERRNO(EPERM), 0, U64(0xffffffff00000000) | TIOCLINUX, 0x1000),
        R("ioctl", ALLOW, 0, TCGETS, 0x1000),
        R("ioctl", ALLOW, 3, FIONREAD, 0x1000),
        R("ioctl", ALLOW, TIOCSTI, TCGETS, TIOCSTI), /* TIOCSTI elsewhere than the command */

        /* seccomp: nested filters yes, nested listeners no */
        R("seccomp", ERRNO(EPERM), SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, 0x1000),
        R("seccomp", ERRNO(EPERM), SECCOMP_SET_MODE_FILTER,
          SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC, 0x1000),
        R("seccomp", ERRNO(EPERM), U64(0x100000000) | SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER,
          0x1000),
        R("seccomp", ERRNO(EPERM), SECCOMP_SET_MODE_FILTER, U64(0xffffffff00000000) | SECCOMP_FILTER_FLAG_NEW_LISTENER,
          0x1000),
        R("seccomp", ALLOW, SECCOMP_SET_MODE_FILTER, 0, 0x1000),
        R("seccomp", ALLOW, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, 0x1000),
        R("seccomp", ALLOW, SECCOMP_GET_ACTION_AVAIL, 0, 0x1000),
        R("seccomp", ALLOW, SECCOMP_GET_ACTION_AVAIL, SECCOMP_FILTER_FLAG_NEW_LISTENER, 0x1000),

        /* sockets: unix, inet, inet6 and netlink-route only */
        R("socket", ALLOW, AF_INET, SOCK_STREAM, 0),
        R("socket", ALLOW, AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0),
        R("socket", ALLOW, AF_UNIX, SOCK_STREAM, 0),
        R("socket", ALLOW, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0),
        R("socket", ALLOW, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE),
        R("socket", ALLOW, AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_ROUTE),
        R("socket", ERRNO(EAFNOSUPPORT), AF_PACKET, SOCK_RAW, 0x300),
        R("socket", ERRNO(EAFNOSUPPORT), AF_VSOCK, SOCK_STREAM, 0),
        R("socket", ERRNO(EAFNOSUPPORT), AF_BLUETOOTH, SOCK_RAW, 0),
        R("socket", ERRNO(EAFNOSUPPORT), AF_KEY, SOCK_RAW, 2),
        R("socket", ERRNO(EAFNOSUPPORT), AF_NETLINK, SOCK_RAW, NETLINK_AUDIT),
        R("socket", ERRNO(EAFNOSUPPORT), AF_NETLINK, SOCK_DGRAM, NETLINK_KOBJECT_UEVENT),
        R("socket", ERRNO(EAFNOSUPPORT), AF_APPLETALK, SOCK_DGRAM, 0),
        R("socket", ERRNO(EAFNOSUPPORT), AF_X25, SOCK_SEQPACKET, 0),
        R("socket", ERRNO(EPERM), AF_INET, SOCK_RAW, 1 /* IPPROTO_ICMP */),
        R("socket", ERRNO(EPERM), AF_INET6, SOCK_RAW | SOCK_NONBLOCK, 58 /* IPPROTO_ICMPV6 */),
        R("socket", ERRNO(EPERM), AF_INET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 255),
        /* an int argument with garbage in the upper half: the kernel would
         * see AF_INET, the filter must not be fooled into allowing more */
        R("socket", ERRNO(EAFNOSUPPORT), U64(0x100000002), SOCK_STREAM, 0),
        R("socket", ERRNO(EAFNOSUPPORT), U64(0xffffffff00000011), SOCK_RAW, 0),
        /* netlink with garbage above NETLINK_ROUTE fails closed */
        R("socket", ERRNO(EAFNOSUPPORT), AF_NETLINK, SOCK_RAW, U64(0x100000000)),
        /* (PF_INET, SOCK_PACKET) is turned into a PF_PACKET socket by the
         * kernel (net/socket.c, __sock_create): the packet family by another
         * name must be refused like AF_PACKET itself */
        R("socket", ERRNO(EAFNOSUPPORT), AF_INET, SOCK_PACKET, 0x300),

        /* socketpair(2) creates its sockets through the same family code as
         * socket(2) (module autoload included) before it asks the family for
         * a pair, and AF_TIPC does make pairs: only AF_UNIX pairs are safe */
        R("socketpair", ALLOW, AF_UNIX, SOCK_STREAM, 0, 0x1000),
        R("socketpair", ALLOW, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, 0x1000),
        R("socketpair", DENIED, AF_TIPC, SOCK_RDM, 0, 0x1000),
        R("socketpair", DENIED, AF_VSOCK, SOCK_STREAM, 0, 0x1000),
        R("socketpair", DENIED, AF_PACKET, SOCK_DGRAM, 0, 0x1000),
        R("socketpair", DENIED, AF_NETLINK, SOCK_RAW, NETLINK_AUDIT, 0x1000),

        /* other ABIs: anything but x86_64 kills, and so do x32 numbers */
        R_ARCH("getpid", KILL, AUDIT_ARCH_I386, 0),
        R_ARCH("openat", KILL, AUDIT_ARCH_I386, 0),
        R_ARCH("read", KILL, AUDIT_ARCH_I386, 0),
        R_ARCH("getpid", KILL, AUDIT_ARCH_AARCH64, 0),
        R_ARCH("getpid", KILL, 0xdeadbeef, 0),
        R_ARCH("getpid", KILL, AUDIT_ARCH_X86_64, X32_SYSCALL_BIT),
        R_ARCH("openat", KILL, AUDIT_ARCH_X86_64, X32_SYSCALL_BIT),
        R_ARCH("mount", KILL, AUDIT_ARCH_X86_64, X32_SYSCALL_BIT),
};

START_TEST(test_row)
{
        const struct row *w = &rows[_i];
        struct sock_fprog prog = build_table_filter();
        uint32_t arch = w->arch ? w->arch : AUDIT_ARCH_X86_64;
        int nr = (int)((uint32_t)nr_of(w->name) | w->nr_bits);
        int64_t got = eval_raw(&prog, arch, nr, w->args);
        char gb[64], eb[64];
        if (w->expect == DENIED) {
                uint32_t action = got >= 0 ? (uint32_t)got & SECCOMP_RET_ACTION_FULL : SECCOMP_RET_ALLOW;
                ck_assert_msg(got >= 0 && (action == SECCOMP_RET_ERRNO || action == SECCOMP_RET_KILL_PROCESS),
                              "row %d: %s(%s): got %s, expected a refusal", _i, w->name, w->what,
                              ret_name(got, gb, sizeof(gb)));
                free(prog.filter);
                return;
        }
        ck_assert_msg(got == (int64_t)w->expect, "row %d: %s(%s) [arch %#x nr %#x]: got %s, expected %s", _i, w->name,
                      w->what, arch, (unsigned)nr, ret_name(got, gb, sizeof(gb)), ret_name(w->expect, eb, sizeof(eb)));
        free(prog.filter);
}
END_TEST

/* open and openat with each of flags must come out as want. */
static void expect_open_flags(const struct sock_fprog *prog, const uint64_t *flags, size_t n, int64_t want, int trap)
{
        for (size_t i = 0; i < n; i++) {
                const uint64_t a_at[6] = {(uint64_t)AT_FDCWD, 0x1000, flags[i]}, a_open[6] = {0x1000, flags[i]};
                ck_assert_msg(eval_raw(prog, AUDIT_ARCH_X86_64, nr_of("openat"), a_at) == want,
                              "openat flags %#llx with trap_paths=%d", (unsigned long long)flags[i], trap);
                ck_assert_msg(eval_raw(prog, AUDIT_ARCH_X86_64, nr_of("open"), a_open) == want,
                              "open flags %#llx with trap_paths=%d", (unsigned long long)flags[i], trap);
        }
}

/* The path rows are in the filter only when the run needs them: without
 * --trap-all or a hidden rule, stat and friends, read-only opens and
 * exclusive creates run natively and the opens that write, truncate or
 * create without O_EXCL are still trapped;
 * with it, every path call is. */
START_TEST(test_path_rows_selected)
{
        size_t n_all;
        (void)sentry_syscall_table(&n_all);
        static const char *const paths[] = {"stat",       "newfstatat", "statx",     "faccessat2",
                                            "readlinkat", "mkdirat",    "unlinkat",  "renameat2",
                                            "linkat",     "symlinkat",  "fchownat",  "utimensat",
                                            "truncate",   "getxattr",   "listxattr", "inotify_add_watch"};
        for (int trap = 0; trap < 2; trap++) {
                struct syscall_entry *t = calloc(n_all, sizeof(*t));
                size_t n = sentry_syscall_select(trap, t, n_all);
                ck_assert_uint_le(n, n_all);
                if (trap) /* all but the conditional rows of open, openat (8), the chmod family (3),
                           * linkat (1) and renameat2 (1), the clone and unshare rows of
                           * native execs (2), and the noting chdir and fchdir rows (2) */
                        ck_assert_uint_eq(n, n_all - 17);
                struct sock_fprog prog = {0};
                const char *bad = NULL;
                ck_assert_int_eq(notify_filter_build(t, n, &prog, &bad), 0);
                const uint64_t args[6] = {0};
                for (size_t i = 0; i < ELEMENTSOF(paths); i++) {
                        int64_t got = eval_raw(&prog, AUDIT_ARCH_X86_64, nr_of(paths[i]), args);
                        ck_assert_msg(got == (trap ? NOTIF : ALLOW), "%s with trap_paths=%d: 0x%llx", paths[i], trap,
                                      (unsigned long long)got);
                }
                /* chdir is trapped either way (emulated, or only noted for the
                 * working directory's cache); fchdir only to be noted, where
                 * native write opens may read that cache */
                ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, nr_of("chdir"), args), NOTIF);
                ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, nr_of("fchdir"), args), trap ? ALLOW : NOTIF);
                /* linkat(fd, "", AT_EMPTY_PATH) is the sentry's either way */
                const uint64_t empty[6] = {3, 0, AT_FDCWD, 0, AT_EMPTY_PATH};
                ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, nr_of("linkat"), empty), NOTIF);
                /* so is renameat2 with RENAME_WHITEOUT (a device node, never in a bind) */
                const uint64_t whiteout[6] = {AT_FDCWD, 0, AT_FDCWD, 0, RENAME_WHITEOUT};
                ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, nr_of("renameat2"), whiteout), NOTIF);
                /* read-only opens: native unless trapping paths; any open that
                 * writes, creates or truncates, openat2 and creat: always
                 * emulated; refusals always hold */
                static const uint64_t ro[] = {O_RDONLY, O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW,
                                              O_RDONLY | O_NONBLOCK | O_NOCTTY, O_PATH,
                                              O_RDONLY | 0xffffffff00000000ULL /* upper half: ignored */};
                /* exclusive creates: native unless trapping paths (they
                 * cannot open an existing file) */
                static const uint64_t excl[] = {O_RDONLY | O_CREAT | O_EXCL, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
                                                O_WRONLY | O_CREAT | O_EXCL | O_TRUNC | O_APPEND};
                static const uint64_t wr[] = {O_WRONLY, O_RDWR, O_WRONLY | O_RDWR, O_RDONLY | O_CREAT,
                                              O_RDONLY | O_TRUNC, O_TMPFILE | O_RDWR, O_WRONLY | O_APPEND,
                                              O_WRONLY | O_CREAT | O_TRUNC,
                                              /* O_EXCL without O_CREAT opens what exists */
                                              O_WRONLY | O_EXCL, O_RDWR | O_EXCL | O_TRUNC, O_TMPFILE | O_RDWR | O_EXCL,
                                              O_RDWR | O_CREAT | 0xffffffff00000000ULL};
                expect_open_flags(&prog, ro, ELEMENTSOF(ro), trap ? NOTIF : ALLOW, trap);
                expect_open_flags(&prog, excl, ELEMENTSOF(excl), trap ? NOTIF : ALLOW, trap);
                expect_open_flags(&prog, wr, ELEMENTSOF(wr), NOTIF, trap);
                ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, nr_of("openat2"), args), NOTIF);
                ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, nr_of("creat"), args), NOTIF);
                ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, nr_of("mount"), args), SECCOMP_RET_ERRNO | EPERM);
                free(prog.filter);
                free(t);
        }
}
END_TEST

/* A setuid or setgid mode is the sentry's to decide whatever the policy (never in a bind,
 * fs/binds.c): such a mode is trapped where the call is otherwise native (upper halves
 * ignored: the kernel reads a umode_t); the xattr sets always are (the name is in memory). */
START_TEST(test_setid_rows_selected)
{
        static const struct {
                int nr, mode_arg;
                uint64_t a0, a1, a2;
        } c[] = {{SYS_chmod, 1, 0x1000},
                 {SYS_fchmodat, 2, FDCWD, 0x1000},
                 {452 /* fchmodat2 */, 2, FDCWD, 0x1000},
                 {SYS_fchmod, 1, 3},
                 {SYS_open, 2, 0x1000, O_WRONLY | O_CREAT | O_EXCL},
                 {SYS_openat, 3, FDCWD, 0x1000, O_RDWR | O_CREAT | O_EXCL}};
        size_t n_all;
        (void)sentry_syscall_table(&n_all);
        for (int m = 0; m < 3; m++) { /* selections: none, write ask rules, trap-all */
                struct syscall_entry *t = calloc(n_all, sizeof(*t));
                struct sock_fprog prog = {0};
                const char *bad = NULL;
                size_t n = sentry_syscall_select_rows(m == 2, m == 1, false, t, n_all);
                ck_assert_int_eq(notify_filter_build(t, n, &prog, &bad), 0);
                for (size_t i = 0; i < ELEMENTSOF(c); i++)
                        for (int setid = 0; setid < 2; setid++) {
                                uint64_t args[6] = {c[i].a0, c[i].a1, c[i].a2}, hi = U64(0xffffffff00000000);
                                args[c[i].mode_arg] = (setid ? (i % 2 ? 02000 : 04755) : 0755) | hi;
                                bool native = !setid && (m == 0 || c[i].nr == SYS_fchmod);
                                int64_t got = eval_raw(&prog, AUDIT_ARCH_X86_64, c[i].nr, args);
                                ck_assert_msg(got == (native ? ALLOW : NOTIF), "nr %d mode %#llx selection %d", c[i].nr,
                                              (unsigned long long)args[c[i].mode_arg], m);
                        }
                static const char *const sets[] = {"setxattr", "lsetxattr", "fsetxattr"};
                for (size_t i = 0; i < ELEMENTSOF(sets); i++)
                        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, nr_of(sets[i]), (uint64_t[6]){0}), NOTIF);
                free(prog.filter);
                free(t);
        }
}
END_TEST

/* A write "ask" rule traps the path calls that change the file system and
 * leaves those that only read native: the sentry asks before writes, and
 * reads never ask. */
START_TEST(test_write_rows_selected)
{
        size_t n_all;
        (void)sentry_syscall_table(&n_all);
        static const char *const writes[] = {"mkdirat",  "unlinkat",    "renameat2",    "linkat",   "symlinkat",
                                             "fchmodat", "fchownat",    "utimensat",    "truncate", "lsetxattr",
                                             "setxattr", "removexattr", "lremovexattr", "rmdir",    "rename"};
        static const char *const reads[] = {"stat",     "newfstatat", "statx",      "faccessat2",        "readlinkat",
                                            "getxattr", "listxattr",  "getdents64", "inotify_add_watch", "chdir"};
        struct syscall_entry *t = calloc(n_all, sizeof(*t));
        size_t n = sentry_syscall_select_rows(false, true, false, t, n_all);
        struct sock_fprog prog = {0};
        const char *bad = NULL;
        ck_assert_int_eq(notify_filter_build(t, n, &prog, &bad), 0);
        const uint64_t args[6] = {0};
        for (size_t i = 0; i < ELEMENTSOF(writes); i++)
                ck_assert_msg(eval_raw(&prog, AUDIT_ARCH_X86_64, nr_of(writes[i]), args) == NOTIF,
                              "%s must be trapped under a write ask rule", writes[i]);
        for (size_t i = 0; i < ELEMENTSOF(reads); i++)
                ck_assert_msg(eval_raw(&prog, AUDIT_ARCH_X86_64, nr_of(reads[i]), args) == ALLOW,
                              "%s must stay native under a write ask rule", reads[i]);
        /* a read-only openat stays native; one that writes asks */
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, nr_of("openat"), args), ALLOW);
        const uint64_t wargs[6] = {AT_FDCWD, 0, O_WRONLY | O_CREAT};
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, nr_of("openat"), wargs), NOTIF);
        /* an exclusive create makes a file: asked about too */
        const uint64_t xargs[6] = {AT_FDCWD, 0, O_RDWR | O_CREAT | O_EXCL};
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, nr_of("openat"), xargs), NOTIF);
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, nr_of("creat"), args), NOTIF);
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, nr_of("execve"), args), NOTIF);
        free(prog.filter);
        free(t);
}
END_TEST

/* The x32 and foreign-arch rows above must at the very least deny; this
 * states the weaker property separately, so that a libseccomp which refuses
 * x32 in another way than KILL_PROCESS is told apart from one that allows. */
START_TEST(test_other_abis_denied)
{
        struct sock_fprog prog = build_table_filter();
        static const char *names[] = {"getpid", "read", "write", "openat", "mmap", "exit_group"};
        uint64_t args[6] = {0};
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                int nr = nr_of(names[i]);
                char b[64];
                int64_t x32 = eval_raw(&prog, AUDIT_ARCH_X86_64, (int)(X32_SYSCALL_BIT | (uint32_t)nr), args);
                ck_assert_msg(x32 >= 0 && ((uint32_t)x32 & SECCOMP_RET_ACTION_FULL) != SECCOMP_RET_ALLOW,
                              "x32 %s is not denied: %s", names[i], ret_name(x32, b, sizeof(b)));
                int64_t i386 = eval_raw(&prog, AUDIT_ARCH_I386, nr, args);
                ck_assert_msg(i386 == KILL, "i386 nr %d: %s", nr, ret_name(i386, b, sizeof(b)));
                /* and the same numbers natively are allowed, so the above is about the ABI */
                int64_t native = eval_raw(&prog, AUDIT_ARCH_X86_64, nr, args);
                ck_assert_msg(native == ALLOW || native == NOTIF, "native %s: %s", names[i],
                              ret_name(native, b, sizeof(b)));
        }
        free(prog.filter);
}
END_TEST

/* --- every table row, from an input built from its own conditions --- */

static uint32_t declared(const struct syscall_entry *e)
{
        switch (e->action) {
        case SC_ALLOW:
                return SECCOMP_RET_ALLOW;
        case SC_ERRNO:
                return SECCOMP_RET_ERRNO | ((uint32_t)e->err & SECCOMP_RET_DATA);
        case SC_EMULATE:
                return SECCOMP_RET_USER_NOTIF;
        case SC_KILL:
                return SECCOMP_RET_KILL_PROCESS;
        }
        ck_abort_msg("row %s: unknown action %d", e->name, (int)e->action);
        return 0;
}

/* Argument values that satisfy one condition. `bit` picks the bit of an
 * ARG_MASKED_ANY mask; `garbage` sets every bit the condition ignores. */
static uint64_t satisfying(const struct syscall_arg_cond *c, uint64_t bit, bool garbage)
{
        uint64_t mask = c->mask;
        switch (c->op) {
        case ARG_EQ:
                if (mask == 0)
                        return c->datum;
                return garbage ? (c->datum & mask) | ~mask : c->datum & mask;
        case ARG_MASKED_EQ:
                return garbage ? (c->datum & mask) | ~mask : c->datum & mask;
        case ARG_MASKED_ANY:
                return garbage ? bit | ~(mask | c->datum) : bit;
        case ARG_NE:
                return garbage ? ~c->datum : c->datum + 1;
        case ARG_GE:
                return garbage ? UINT64_MAX : c->datum;
        }
        ck_abort_msg("unknown arg op %d", (int)c->op);
        return 0;
}

static void check_row_input(const struct sock_fprog *prog, size_t i, const struct syscall_entry *e, uint64_t bit,
                            bool garbage)
{
        uint64_t args[6] = {0};
        for (unsigned c = 0; c < e->n_cond; c++) {
                ck_assert_uint_lt(e->cond[c].arg, 6);
                args[e->cond[c].arg] = satisfying(&e->cond[c], bit, garbage);
        }
        int64_t got = eval_raw(prog, AUDIT_ARCH_X86_64, row_nr(e), args);
        char gb[64], eb[64];
        ck_assert_msg(got == (int64_t)declared(e),
                      "table row %zu (%s, \"%s\") with args {%#" PRIx64 ", %#" PRIx64 ", %#" PRIx64 "}%s: got %s, "
                      "declared %s",
                      i, e->name, e->note, args[0], args[1], args[2], garbage ? " (ignored bits set)" : "",
                      ret_name(got, gb, sizeof(gb)), ret_name(declared(e), eb, sizeof(eb)));
}

START_TEST(test_table_row)
{
        size_t n;
        const struct syscall_entry *t = sentry_syscall_table(&n);
        ck_assert_uint_lt((size_t)_i, n);
        const struct syscall_entry *e = &t[_i];
        /* a row in force only with execs native is checked in that filter */
        struct sock_fprog prog =
                e->flags & SC_F_EXEC_NATIVE ? build_selected3(false, false, true) : build_table_filter();

        /* the row is well formed */
        ck_assert_ptr_nonnull(e->name);
        ck_assert_ptr_nonnull(e->note);
        ck_assert_uint_le(e->n_cond, ELEMENTSOF(e->cond));
        if (e->action == SC_ERRNO)
                ck_assert_msg(e->err > 0 && e->err < 4096, "row %s: errno %d", e->name, e->err);
        if (e->action == SC_EMULATE)
                ck_assert_msg(e->handler != NULL, "row %s emulates without a handler", e->name);

        uint64_t fan = 0;
        for (unsigned c = 0; c < e->n_cond; c++)
                if (e->cond[c].op == ARG_MASKED_ANY) {
                        ck_assert_msg(e->cond[c].mask != 0, "row %s: ARG_MASKED_ANY with an empty mask", e->name);
                        fan = e->cond[c].mask;
                }

        if (!fan) {
                check_row_input(&prog, (size_t)_i, e, 0, false);
                check_row_input(&prog, (size_t)_i, e, 0, true);
        } else {
                /* "any bit": every single bit of the mask must trigger the row */
                for (unsigned b = 0; b < 64; b++) {
                        uint64_t bit = UINT64_C(1) << b;
                        if (!(fan & bit))
                                continue;
                        check_row_input(&prog, (size_t)_i, e, bit, false);
                        check_row_input(&prog, (size_t)_i, e, bit, true);
                }
        }
        free(prog.filter);
}
END_TEST

/* Conditional rows only apply when their conditions hold: with ordinary
 * arguments (no namespace flag, a unix socket, ioctl command 0, seccomp
 * strict mode ...), each conditional syscall is let through. */
START_TEST(test_conditional_rows_not_unconditional)
{
        size_t n;
        const struct syscall_entry *t = sentry_syscall_table(&n);
        struct sock_fprog prog = build_table_filter();
        for (size_t i = 0; i < n; i++) {
                if (t[i].n_cond == 0)
                        continue;
                bool also_unconditional = false;
                for (size_t j = 0; j < n; j++)
                        if (t[j].n_cond == 0 && streq(t[j].name, t[i].name))
                                also_unconditional = true;
                if (also_unconditional)
                        continue;
                uint64_t args[6] = {0};
                /* a value no condition of this syscall is satisfied by */
                if (streq(t[i].name, "socket") || streq(t[i].name, "socketpair")) {
                        args[0] = AF_UNIX;
                        args[1] = SOCK_STREAM;
                }
                int64_t got = eval_raw(&prog, AUDIT_ARCH_X86_64, row_nr(&t[i]), args);
                char b[64];
                ck_assert_msg(got == ALLOW, "%s with harmless arguments: %s", t[i].name, ret_name(got, b, sizeof(b)));
        }
        free(prog.filter);
}
END_TEST

/* --- building from custom tables --- */

static int dummy_handler(struct notify_call *call, struct notify_verdict *ret)
{
        return 0;
}

START_TEST(test_build_custom)
{
        static const struct syscall_entry table[] = {
                {.name = "mkdirat", .action = SC_EMULATE, .handler = dummy_handler, .note = "t"},
                {.name = "getppid", .action = SC_KILL, .note = "t"},
                {.name = "getuid", .action = SC_ALLOW, .note = "documentation only"},
                {.name = "dup", .action = SC_ERRNO, .err = EMFILE, .note = "t"},
                {.name = "kill",
                 .action = SC_ERRNO,
                 .err = EPERM,
                 .n_cond = 2,
                 .note = "t",
                 .cond = {{.arg = 0, .op = ARG_EQ, .mask = 0xffffffff, .datum = 1},
                          {.arg = 1, .op = ARG_EQ, .datum = SIGKILL}}},
        };
        struct sock_fprog prog;
        const char *bad = NULL;
        int r = notify_filter_build(table, ELEMENTSOF(table), &prog, &bad);
        ck_assert_msg(r == 0, "build: %d at %s", r, bad ? bad : "?");
        uint64_t a[6] = {0};
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, __NR_mkdirat, a), NOTIF);
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, __NR_getppid, a), KILL);
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, __NR_getuid, a), ALLOW);
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, __NR_dup, a), ERRNO(EMFILE));
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, __NR_openat, a), ALLOW);
        uint64_t k1[6] = {U64(0x700000001), SIGKILL};
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, __NR_kill, k1), ERRNO(EPERM));
        uint64_t k2[6] = {1, SIGTERM};
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, __NR_kill, k2), ALLOW);
        uint64_t k3[6] = {1, U64(0x100000000) | SIGKILL}; /* unmasked: all 64 bits compared */
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, __NR_kill, k3), ALLOW);
        free(prog.filter);
}
END_TEST

START_TEST(test_build_unknown_syscall)
{
        static const struct syscall_entry table[] = {
                {.name = "getpid", .action = SC_ERRNO, .err = EPERM, .note = "t"},
                {.name = "no_such_syscall_xyz", .action = SC_ERRNO, .err = EPERM, .note = "t"},
        };
        struct sock_fprog prog = {0};
        const char *bad = NULL;
        int r = notify_filter_build(table, ELEMENTSOF(table), &prog, &bad);
        ck_assert_int_eq(r, -ENOSYS);
        ck_assert_ptr_nonnull(bad);
        ck_assert_str_eq(bad, "no_such_syscall_xyz");
}
END_TEST

/* A syscall newer than libseccomp is named by the row's own number. */
START_TEST(test_build_own_number)
{
        static const struct syscall_entry table[] = {
                {.name = "cordon_test_future_syscall", .nr = 499, .action = SC_ERRNO, .err = EPERM, .note = "t"},
        };
        struct sock_fprog prog = {0};
        const char *bad = NULL;
        int r = notify_filter_build(table, ELEMENTSOF(table), &prog, &bad);
        ck_assert_msg(r == 0, "build: %d at %s", r, bad ? bad : "?");
        uint64_t a[6] = {0};
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, 499, a), ERRNO(EPERM));
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, 498, a), ALLOW);
        free(prog.filter);
}
END_TEST

START_TEST(test_build_two_fanouts)
{
        static const struct syscall_entry table[] = {
                {.name = "unshare",
                 .action = SC_ERRNO,
                 .err = EPERM,
                 .n_cond = 2,
                 .note = "t",
                 .cond = {{.arg = 0, .op = ARG_MASKED_ANY, .mask = CLONE_NEWUSER | CLONE_NEWNS},
                          {.arg = 1, .op = ARG_MASKED_ANY, .mask = 3}}},
        };
        struct sock_fprog prog = {0};
        const char *bad = NULL;
        int r = notify_filter_build(table, ELEMENTSOF(table), &prog, &bad);
        ck_assert_int_eq(r, -EINVAL);
        ck_assert_ptr_nonnull(bad);
        ck_assert_str_eq(bad, "unshare");
}
END_TEST

/* A refusing row that cannot match anything must be an error, not a row
 * that silently disappears from the filter (failing open). */
START_TEST(test_build_empty_fanout_refused)
{
        static const struct syscall_entry table[] = {
                {.name = "unshare",
                 .action = SC_ERRNO,
                 .err = EPERM,
                 .n_cond = 1,
                 .note = "t",
                 .cond = {{.arg = 0, .op = ARG_MASKED_ANY, .mask = 0}}},
        };
        struct sock_fprog prog = {0};
        const char *bad = NULL;
        int r = notify_filter_build(table, ELEMENTSOF(table), &prog, &bad);
        if (r == 0) {
                uint64_t a[6] = {CLONE_NEWUSER};
                int64_t got = eval_raw(&prog, AUDIT_ARCH_X86_64, __NR_unshare, a);
                free(prog.filter);
                char b[64];
                ck_abort_msg("an ARG_MASKED_ANY row with mask 0 was accepted and vanished from the filter "
                             "(unshare(CLONE_NEWUSER) -> %s)",
                             ret_name(got, b, sizeof(b)));
        }
        ck_assert_int_eq(r, -EINVAL);
        ck_assert_ptr_nonnull(bad);
        ck_assert_str_eq(bad, "unshare");
}
END_TEST

/* A bit both required set and required clear makes that bit's rule match
 * nothing: refused as well. And the clear bits do what they say: with
 * O_CREAT as the bit that must be clear, O_WRONLY traps alone and not with
 * O_CREAT. */
START_TEST(test_build_fanout_clear_bits)
{
        struct syscall_entry table[] = {
                {.name = "openat",
                 .action = SC_ERRNO,
                 .err = EPERM,
                 .n_cond = 1,
                 .note = "t",
                 .cond = {{.arg = 2, .op = ARG_MASKED_ANY, .mask = O_WRONLY | O_RDWR, .datum = O_RDWR}}},
        };
        struct sock_fprog prog = {0};
        const char *bad = NULL;
        ck_assert_int_eq(notify_filter_build(table, ELEMENTSOF(table), &prog, &bad), -EINVAL);
        ck_assert_str_eq(bad, "openat");
        table[0].cond[0].mask = O_WRONLY | O_RDWR;
        table[0].cond[0].datum = O_CREAT;
        ck_assert_int_eq(notify_filter_build(table, ELEMENTSOF(table), &prog, &bad), 0);
        const uint64_t w[6] = {0, 0, O_WRONLY}, rw[6] = {0, 0, O_RDWR | O_TRUNC}, wc[6] = {0, 0, O_WRONLY | O_CREAT},
                       r[6] = {0, 0, O_RDONLY};
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, __NR_openat, w), SECCOMP_RET_ERRNO | EPERM);
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, __NR_openat, rw), SECCOMP_RET_ERRNO | EPERM);
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, __NR_openat, wc), ALLOW);
        ck_assert_int_eq(eval_raw(&prog, AUDIT_ARCH_X86_64, __NR_openat, r), ALLOW);
        free(prog.filter);
}
END_TEST

/* The sandbox's filter for one combination of the options that select
 * rows, compiled now. */
static struct sock_fprog build_selected3(bool paths, bool writes, bool native_exec)
{
        size_t n_all;
        (void)sentry_syscall_table(&n_all);
        struct syscall_entry *t = calloc(n_all, sizeof(*t));
        size_t n = sentry_syscall_select_rows(paths, writes, native_exec, t, n_all);
        struct sock_fprog prog = {0};
        const char *bad = NULL;
        ck_assert_int_eq(notify_filter_build(t, n, &prog, &bad), 0);
        free(t);
        return prog;
}

static struct sock_fprog build_selected(bool paths, bool writes)
{
        return build_selected3(paths, writes, false);
}

/* Execs native (no exec rule, the view's floors in force: sentry/init.c):
 * execve and execveat leave the filter, and a thread clone without CLONE_FS
 * or an unshare(CLONE_FS) is trapped instead (the umask cache's one case
 * the trapped exec covered);
 * the rest of the filter is the same. With execs trapped that clone is
 * native. Namespace flags are refused in both. */
START_TEST(test_native_exec_rows)
{
        for (int writes = 0; writes < 2; writes++) {
                struct sock_fprog trapped = build_selected3(false, writes, false);
                struct sock_fprog native = build_selected3(false, writes, true);
                const uint64_t none[6] = {0};
                const uint64_t thread_nofs[6] = {CLONE_VM | CLONE_THREAD | CLONE_SIGHAND};
                const uint64_t thread_fs[6] = {CLONE_VM | CLONE_FS | CLONE_THREAD | CLONE_SIGHAND};
                const uint64_t thread_ns[6] = {CLONE_VM | CLONE_THREAD | CLONE_SIGHAND | CLONE_NEWNET};
                const uint64_t fork_ns[6] = {SIGCHLD | CLONE_NEWUSER};
                ck_assert_int_eq(eval_raw(&trapped, AUDIT_ARCH_X86_64, nr_of("execve"), none), NOTIF);
                ck_assert_int_eq(eval_raw(&trapped, AUDIT_ARCH_X86_64, nr_of("execveat"), none), NOTIF);
                ck_assert_int_eq(eval_raw(&native, AUDIT_ARCH_X86_64, nr_of("execve"), none), ALLOW);
                ck_assert_int_eq(eval_raw(&native, AUDIT_ARCH_X86_64, nr_of("execveat"), none), ALLOW);
                ck_assert_int_eq(eval_raw(&trapped, AUDIT_ARCH_X86_64, nr_of("clone"), thread_nofs), ALLOW);
                ck_assert_int_eq(eval_raw(&native, AUDIT_ARCH_X86_64, nr_of("clone"), thread_nofs), NOTIF);
                ck_assert_int_eq(eval_raw(&native, AUDIT_ARCH_X86_64, nr_of("clone"), thread_fs), ALLOW);
                ck_assert_int_eq(eval_raw(&native, AUDIT_ARCH_X86_64, nr_of("clone"), none), ALLOW);
                const uint64_t unshare_fs[6] = {CLONE_FS}, unshare_files[6] = {CLONE_FILES};
                ck_assert_int_eq(eval_raw(&trapped, AUDIT_ARCH_X86_64, nr_of("unshare"), unshare_fs), ALLOW);
                ck_assert_int_eq(eval_raw(&native, AUDIT_ARCH_X86_64, nr_of("unshare"), unshare_fs), NOTIF);
                ck_assert_int_eq(eval_raw(&native, AUDIT_ARCH_X86_64, nr_of("unshare"), unshare_files), ALLOW);
                for (int v = 0; v < 2; v++) {
                        const struct sock_fprog *p = v ? &native : &trapped;
                        ck_assert_int_eq(eval_raw(p, AUDIT_ARCH_X86_64, nr_of("clone"), thread_ns),
                                         SECCOMP_RET_ERRNO | EPERM);
                        ck_assert_int_eq(eval_raw(p, AUDIT_ARCH_X86_64, nr_of("clone"), fork_ns),
                                         SECCOMP_RET_ERRNO | EPERM);
                        /* the rest as before: a write open still emulated, i386 still killed */
                        const uint64_t wr[6] = {(uint64_t)AT_FDCWD, 0, O_WRONLY};
                        ck_assert_int_eq(eval_raw(p, AUDIT_ARCH_X86_64, nr_of("openat"), wr), NOTIF);
                        ck_assert_int_eq(eval_raw(p, AUDIT_ARCH_I386, 11 /* i386 execve */, none), KILL);
                }
                free(trapped.filter);
                free(native.filter);
        }
}
END_TEST

/* The filters cordon links from build time (sentry/filters.gen.c, linked
 * into this test too) are exactly what the run would compile now: for each
 * combination of the options that select rows, and the sentry's own. */
START_TEST(test_prebuilt_filters_match)
{
        ck_assert_msg(sentry_prebuilt_sandbox != NULL && sentry_prebuilt_confine != NULL,
                      "the build-time filters are not linked into this test");
        for (int paths = 0; paths < 2; paths++)
                for (int writes = 0; writes < 2; writes++)
                        for (int nexec = 0; nexec < 2; nexec++) {
                                struct sock_fprog pre = {0};
                                if (paths && nexec) {
                                        /* never asked for: every exec is trapped with the paths */
                                        ck_assert(!sentry_prebuilt_sandbox(paths, writes, nexec, &pre));
                                        continue;
                                }
                                struct sock_fprog fresh = build_selected3(paths, writes, nexec);
                                ck_assert(sentry_prebuilt_sandbox(paths, writes, nexec, &pre));
                                ck_assert_msg(pre.len == fresh.len && memcmp(pre.filter, fresh.filter,
                                                                             fresh.len * sizeof(*fresh.filter)) == 0,
                                              "trap_paths=%d trap_writes=%d native_exec=%d: the build-time filter "
                                              "(%u insns) differs from a fresh compile (%u)",
                                              paths, writes, nexec, pre.len, fresh.len);
                                free(fresh.filter);
                                free(pre.filter);
                        }
        struct sock_fprog fresh = {0}, pre = {0};
        ck_assert_int_eq(sentry_confine_build_fresh(&fresh, NULL), 0);
        ck_assert(sentry_prebuilt_confine(&pre));
        ck_assert_uint_eq(pre.len, fresh.len);
        ck_assert_mem_eq(pre.filter, fresh.filter, fresh.len * sizeof(*fresh.filter));
        free(fresh.filter);
        free(pre.filter);
}
END_TEST

/* Each filter is a tree over the syscall numbers: no number walks a chain
 * of the rows. The kernel walks the filter for every number when it loads
 * it (its constant-action cache) and again at every uncached call; with
 * libseccomp's default chain a number without a row of its own passed every
 * row (100-200 instructions), and the loads took 0.25-0.35 ms. */
static unsigned longest_walk(const struct sock_fprog *prog)
{
        unsigned longest = 0;
        for (int nr = 0; nr < 512; nr++) {
                struct seccomp_data d = {.nr = nr, .arch = AUDIT_ARCH_X86_64, .instruction_pointer = 0x401000};
                unsigned steps = 0;
                ck_assert_int_ge(notify_filter_eval_steps(prog, &d, &steps), 0);
                if (steps > longest)
                        longest = steps;
        }
        return longest;
}

START_TEST(test_filters_are_trees)
{
        for (int paths = 0; paths < 2; paths++)
                for (int writes = 0; writes < 2; writes++) {
                        struct sock_fprog prog = build_selected(paths, writes);
                        unsigned w = longest_walk(&prog);
                        /* the arch and x32 checks, ~log2 of the rows, and
                         * the argument checks of the longest row */
                        ck_assert_msg(w <= 56, "trap_paths=%d trap_writes=%d: a walk of %u of %u instructions", paths,
                                      writes, w, prog.len);
                        free(prog.filter);
                }
        struct sock_fprog confine = {0};
        ck_assert_int_eq(sentry_confine_build_fresh(&confine, NULL), 0);
        unsigned w = longest_walk(&confine);
        ck_assert_msg(w <= 56, "the sentry's own filter: a walk of %u of %u instructions", w, confine.len);
        free(confine.filter);
}
END_TEST

/* --- the interpreter --- */

#define LD_NR  BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))

struct program_case {
        const char *what;
        struct sock_filter insns[6];
        unsigned len;
};

static const struct program_case malformed[] = {
        {"empty program", {RET(ALLOW)}, 0},
        {"falls off the end", {LD_NR}, 1},
        {"jump past the end", {LD_NR, BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 200, 200), RET(ALLOW)}, 3},
        {"ja past the end", {BPF_STMT(BPF_JMP | BPF_JA, 5), RET(ALLOW)}, 2},
        {"ja backwards (k wraps the pc)", {BPF_STMT(BPF_JMP | BPF_JA, 0xffffffff), RET(ALLOW)}, 2},
        /* the kernel only has forward jumps; a wrapped one lands on the RET */
        {"ja backwards onto a return",
         {BPF_STMT(BPF_JMP | BPF_JA, 1), RET(ALLOW), BPF_STMT(BPF_JMP | BPF_JA, 0xfffffffe)},
         3},
        {"byte load (seccomp accepts words only)", {BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0), RET(ALLOW)}, 2},
        {"misaligned load", {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2), RET(BPF_A)}, 2},
        {"load past seccomp_data", {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, sizeof(struct seccomp_data)), RET(ALLOW)}, 2},
        {"load at 2^32-4 (offset + 4 wraps)", {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0xfffffffc), RET(ALLOW)}, 2},
        {"load at 2^32-64", {BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 0xffffffc0), RET(ALLOW)}, 2},
        {"scratch memory index out of range", {BPF_STMT(BPF_LD | BPF_MEM, BPF_MEMWORDS), RET(ALLOW)}, 2},
        {"store out of range", {BPF_STMT(BPF_ST, BPF_MEMWORDS + 100), RET(ALLOW)}, 2},
        {"unknown opcode", {BPF_STMT(0xffff, 0), RET(ALLOW)}, 2},
        {"indirect load (not for seccomp)", {BPF_STMT(BPF_LD | BPF_W | BPF_IND, 0), RET(ALLOW)}, 2},
};

START_TEST(test_malformed)
{
        const struct program_case *c = &malformed[_i];
        struct sock_fprog prog = {.len = (unsigned short)c->len, .filter = (struct sock_filter *)c->insns};
        struct seccomp_data d = {.nr = __NR_getpid, .arch = AUDIT_ARCH_X86_64};
        alarm(5); /* without Check's fork (CK_FORK=no), a wrapped jump must not hang the run */
        int64_t r = notify_filter_eval(&prog, &d);
        alarm(0);
        ck_assert_msg(r < 0, "malformed program (%s) evaluated to %" PRId64 " instead of an error", c->what, r);
}
END_TEST

/* The positive control for the interpreter: tiny well-formed programs. */
START_TEST(test_interpreter_wellformed)
{
        struct sock_filter insns[] = {
                LD_NR,
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getpid, 0, 1),
                RET(ERRNO(EPERM)),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]) + 4), /* high half */
                BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x80000000, 0, 2),
                BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xff),
                BPF_STMT(BPF_RET | BPF_A, 0),
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
                BPF_STMT(BPF_ST, 3),
                BPF_STMT(BPF_LDX | BPF_MEM, 3),
                BPF_STMT(BPF_MISC | BPF_TXA, 0),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
                RET(KILL),
                BPF_STMT(BPF_JMP | BPF_JA, 1),
                RET(KILL),
                RET(ALLOW),
        };
        struct sock_fprog prog = {.len = ELEMENTSOF(insns), .filter = insns};
        struct seccomp_data d = {.nr = __NR_getpid, .arch = AUDIT_ARCH_X86_64};
        ck_assert_int_eq(notify_filter_eval(&prog, &d), ERRNO(EPERM));
        d.nr = __NR_getppid;
        d.args[1] = UINT64_C(0x800000ab00000000);
        ck_assert_int_eq(notify_filter_eval(&prog, &d), 0xab);
        d.args[1] = 0;
        ck_assert_int_eq(notify_filter_eval(&prog, &d), ALLOW);
        d.arch = AUDIT_ARCH_I386;
        ck_assert_int_eq(notify_filter_eval(&prog, &d), KILL);
}
END_TEST

/* --- the filter loaded for real --- */

enum {
        STEP_UNSHARE_USER,
        STEP_UNSHARE_FILES,
        STEP_IO_URING,
        STEP_CLONE3,
        STEP_MOUNT,
        STEP_SOCKET_PACKET,
        STEP_SOCKET_RAW,
        STEP_SOCKET_INET,
        STEP_TIOCSTI,
        STEP_SECCOMP_LISTENER,
        STEP_KEYCTL,
        STEP_OPENAT,
        STEP_GETPID,
        STEP_FORK,
        STEP_X32,
        STEP_I386,
        _STEP_MAX,
};

static const char *const step_names[_STEP_MAX] = {
        [STEP_UNSHARE_USER] = "unshare(CLONE_NEWUSER)",
        [STEP_UNSHARE_FILES] = "unshare(CLONE_FILES)",
        [STEP_IO_URING] = "io_uring_setup",
        [STEP_CLONE3] = "clone3",
        [STEP_MOUNT] = "mount",
        [STEP_SOCKET_PACKET] = "socket(AF_PACKET)",
        [STEP_SOCKET_RAW] = "socket(AF_INET, SOCK_RAW)",
        [STEP_SOCKET_INET] = "socket(AF_INET, SOCK_DGRAM)",
        [STEP_TIOCSTI] = "ioctl(TIOCSTI)",
        [STEP_SECCOMP_LISTENER] = "seccomp(NEW_LISTENER)",
        [STEP_KEYCTL] = "keyctl",
        [STEP_OPENAT] = "openat (listener closed)",
        [STEP_GETPID] = "getpid",
        [STEP_FORK] = "fork + exit",
        [STEP_X32] = "x32 getpid (status of a grandchild)",
        [STEP_I386] = "int 0x80 getpid (status of a grandchild)",
};

/* -errno, or the (non-negative) result */
static int64_t sys_result(long r)
{
        return r < 0 ? -(int64_t)errno : r;
}

/* Runs fn in a grandchild and returns its wait status (or -errno). */
static int64_t status_of(void (*fn)(void))
{
        pid_t p = fork();
        if (p < 0)
                return -errno;
        if (p == 0) {
                fn();
                _exit(0);
        }
        int st;
        while (waitpid(p, &st, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return st;
}

static void do_nothing(void) {}

static void do_x32_getpid(void)
{
        (void)syscall(X32_SYSCALL_BIT | __NR_getpid);
}

static void do_i386_getpid(void)
{
        long ret = 20; /* i386 __NR_getpid */
        __asm__ volatile("int $0x80" : "+a"(ret) : : "memory");
        _exit(ret > 0 ? 0 : 1);
}

static void child_with_filter(const struct sock_fprog *prog, int out, pid_t expected_pid)
{
        int64_t res[_STEP_MAX];
        for (size_t i = 0; i < ELEMENTSOF(res); i++)
                res[i] = INT64_MIN;

        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                _exit(10);
        int lfd = notify_filter_install(prog, NULL);
        if (lfd < 0)
                _exit(11);
        /* nobody serves the listener: with it closed, notified calls fail with ENOSYS */
        close(lfd);

        /* From here on: no open(), no stdio, no allocation that might open. */
        res[STEP_UNSHARE_USER] = sys_result(unshare(CLONE_NEWUSER));
        res[STEP_UNSHARE_FILES] = sys_result(unshare(CLONE_FILES));
        char params[120] = {0};
        res[STEP_IO_URING] = sys_result(syscall(__NR_io_uring_setup, 4, params));
        res[STEP_CLONE3] = sys_result(syscall(__NR_clone3, params, 88));
        res[STEP_MOUNT] = sys_result(syscall(__NR_mount, "none", "/mnt", "tmpfs", 0, NULL));
        long s = syscall(__NR_socket, AF_PACKET, SOCK_RAW, 0);
        res[STEP_SOCKET_PACKET] = sys_result(s);
        s = syscall(__NR_socket, AF_INET, SOCK_RAW, 1);
        res[STEP_SOCKET_RAW] = sys_result(s);
        s = syscall(__NR_socket, AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        res[STEP_SOCKET_INET] = sys_result(s);
        if (s >= 0)
                close((int)s);
        char c = 'x';
        res[STEP_TIOCSTI] = sys_result(syscall(__NR_ioctl, 0, TIOCSTI, &c));
        struct sock_filter allow = RET(ALLOW);
        struct sock_fprog nested = {1, &allow};
        res[STEP_SECCOMP_LISTENER] =
                sys_result(syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &nested));
        res[STEP_KEYCTL] = sys_result(syscall(__NR_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3, 0));
        res[STEP_OPENAT] = sys_result(syscall(__NR_openat, AT_FDCWD, "/", O_RDONLY | O_CLOEXEC));
        res[STEP_GETPID] = syscall(__NR_getpid) == expected_pid ? 0 : -1;
        res[STEP_FORK] = status_of(do_nothing);
        res[STEP_X32] = status_of(do_x32_getpid);
        res[STEP_I386] = status_of(do_i386_getpid);

        (void)!write(out, res, sizeof(res));
        _exit(0);
}

START_TEST(test_loaded_filter)
{
        struct notify_features f;
        ck_assert_int_eq(notify_probe_features(&f), 0);
        if (!f.user_notif) {
                /* the table's EMULATE rows need a listener to load at all */
                fprintf(stderr, "test_loaded_filter: no seccomp user notification here, not loading\n");
                return;
        }

        /* whether this kernel runs i386 syscalls at all (ia32 emulation) */
        int64_t i386_native = status_of(do_i386_getpid);
        bool have_i386 = i386_native >= 0 && WIFEXITED(i386_native) && WEXITSTATUS(i386_native) == 0;

        struct sock_fprog prog = build_table_filter();
        int p[2];
        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        pid_t me = fork();
        ck_assert_int_ge(me, 0);
        if (me == 0) {
                close(p[0]);
                alarm(20);
                child_with_filter(&prog, p[1], getpid());
        }
        close(p[1]);
        int64_t res[_STEP_MAX];
        alarm(25);
        ssize_t n = read_full(p[0], res, sizeof(res));
        int st;
        ck_assert_int_eq(waitpid(me, &st, 0), me);
        alarm(0);
        close(p[0]);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "filtered child: status %#x", st);
        ck_assert_int_eq(n, (ssize_t)sizeof(res));

        struct {
                int step;
                int64_t want; /* -errno */
        } expect[] = {
                {STEP_UNSHARE_USER, -EPERM},
                {STEP_IO_URING, -ENOSYS},
                {STEP_CLONE3, -ENOSYS},
                {STEP_MOUNT, -EPERM},
                {STEP_SOCKET_PACKET, -EAFNOSUPPORT},
                {STEP_SOCKET_RAW, -EPERM},
                {STEP_TIOCSTI, -EPERM},
                {STEP_SECCOMP_LISTENER, -EPERM},
                {STEP_KEYCTL, -EPERM},
                {STEP_OPENAT, -ENOSYS},
                {STEP_GETPID, 0},
                {STEP_UNSHARE_FILES, 0},
        };
        for (size_t i = 0; i < ELEMENTSOF(expect); i++) {
                int64_t got = res[expect[i].step];
                ck_assert_msg(got == expect[i].want, "%s under the filter: got %" PRId64 " (%s), expected %" PRId64,
                              step_names[expect[i].step], got, got < 0 ? strerror((int)-got) : "ok", expect[i].want);
        }
        ck_assert_msg(res[STEP_SOCKET_INET] >= 0, "socket(AF_INET, SOCK_DGRAM) under the filter: %s",
                      strerror((int)-res[STEP_SOCKET_INET]));
        int64_t fs = res[STEP_FORK];
        ck_assert_msg(fs >= 0 && WIFEXITED(fs) && WEXITSTATUS(fs) == 0, "fork under the filter: %" PRId64, fs);
        int64_t xs = res[STEP_X32];
        ck_assert_msg(xs >= 0 && WIFSIGNALED(xs) && WTERMSIG(xs) == SIGSYS,
                      "an x32 syscall under the filter must kill with SIGSYS, status %#" PRIx64, xs);
        if (have_i386) {
                int64_t is = res[STEP_I386];
                ck_assert_msg(is >= 0 && WIFSIGNALED(is) && WTERMSIG(is) == SIGSYS,
                              "an i386 syscall under the filter must kill with SIGSYS, status %#" PRIx64, is);
        }
        free(prog.filter);
}
END_TEST

static Suite *filter_suite(void)
{
        Suite *s = suite_create("notify-filter");
        TCase *tc;
        size_t n;
        (void)sentry_syscall_table(&n);

        tc = tcase_create("rows");
        tcase_add_loop_test(tc, test_row, 0, (int)ELEMENTSOF(rows));
        tcase_add_test(tc, test_other_abis_denied);
        tcase_add_test(tc, test_path_rows_selected);
        tcase_add_test(tc, test_write_rows_selected);
        tcase_add_test(tc, test_setid_rows_selected);
        suite_add_tcase(s, tc);

        tc = tcase_create("table");
        tcase_add_loop_test(tc, test_table_row, 0, (int)n);
        tcase_add_test(tc, test_conditional_rows_not_unconditional);
        suite_add_tcase(s, tc);

        tc = tcase_create("build");
        tcase_add_test(tc, test_build_custom);
        tcase_add_test(tc, test_build_unknown_syscall);
        tcase_add_test(tc, test_build_own_number);
        tcase_add_test(tc, test_build_two_fanouts);
        tcase_add_test(tc, test_build_empty_fanout_refused);
        tcase_add_test(tc, test_build_fanout_clear_bits);
        tcase_add_test(tc, test_prebuilt_filters_match);
        tcase_add_test(tc, test_native_exec_rows);
        tcase_add_test(tc, test_filters_are_trees);
        suite_add_tcase(s, tc);

        tc = tcase_create("interpreter");
        tcase_set_timeout(tc, 3);
        tcase_add_loop_test(tc, test_malformed, 0, (int)ELEMENTSOF(malformed));
        tcase_add_test(tc, test_interpreter_wellformed);
        suite_add_tcase(s, tc);

        tc = tcase_create("loaded");
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_loaded_filter);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        /* Only the "loaded" case needs the kernel's seccomp; it checks for
         * user notification itself. The rest is pure evaluation. */
        SRunner *sr = srunner_create(filter_suite());
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
