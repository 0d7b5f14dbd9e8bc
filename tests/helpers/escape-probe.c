/* escape-probe: adversarial attempts to leave a cordon sandbox, run from
 * inside it by tests/escape/run.sh.
 *
 *   escape-probe ATTEMPT [ARGS...]
 *
 * Each attempt tries one escape and prints exactly one line:
 *
 *   escape ATTEMPT: blocked (<how>)          exit 0
 *   escape ATTEMPT: GOT THROUGH (<what>)     exit 1
 *   escape ATTEMPT: probe error (<why>)      exit 2
 *
 * An attempt never prints what it managed to read (a secret that got
 * through is described, never shown). Raw syscall numbers are used where
 * libc has no wrapper, so that the probe tests the kernel interface and
 * the seccomp filter, not libc's behaviour. `escape-probe list` prints the
 * attempts. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/keyctl.h>
#include <linux/magic.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/perf_event.h>
#include <linux/reboot.h>
#include <linux/seccomp.h>
#include <linux/vm_sockets.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "host-root.h"

#ifndef __NR_open_tree
#define __NR_open_tree 428
#endif
#ifndef __NR_move_mount
#define __NR_move_mount 429
#endif
#ifndef __NR_fsopen
#define __NR_fsopen 430
#endif
#ifndef __NR_fsconfig
#define __NR_fsconfig 431
#endif
#ifndef __NR_fsmount
#define __NR_fsmount 432
#endif
#ifndef __NR_fspick
#define __NR_fspick 433
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef __NR_open_tree_attr
#define __NR_open_tree_attr 467
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef TIOCSTI
#define TIOCSTI 0x5412
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef VMADDR_CID_HOST
#define VMADDR_CID_HOST 2
#endif
#ifndef NETLINK_AUDIT
#define NETLINK_AUDIT 9
#endif
#ifndef ST_NOSUID
#define ST_NOSUID 2
#endif

struct probe_mount_attr {
        uint64_t attr_set, attr_clr, propagation, userns_fd;
};

struct probe_clone_args {
        uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};

/* ------------------------------------------------------------------ */
/* reporting */

static const char *attempt = "?";
static bool reported;

static const char *en(int e)
{
        const char *n = strerrorname_np(e);
        static char buf[32];
        if (n)
                return n;
        snprintf(buf, sizeof(buf), "errno %d", e);
        return buf;
}

__attribute__((format(printf, 2, 0))) static void vreport(const char *verdict, const char *fmt, va_list ap)
{
        char what[1024];
        vsnprintf(what, sizeof(what), fmt, ap);
        /* one line, whatever an errno text or a path contains */
        for (char *p = what; *p; p++)
                if (*p == '\n' || *p == '\r')
                        *p = ' ';
        if (!reported)
                printf("escape %s: %s (%s)\n", attempt, verdict, what);
        reported = true;
        fflush(stdout);
}

__attribute__((format(printf, 1, 2))) static int blocked(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vreport("blocked", fmt, ap);
        va_end(ap);
        return 0;
}

__attribute__((format(printf, 1, 2))) static int through(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vreport("GOT THROUGH", fmt, ap);
        va_end(ap);
        return 1;
}

__attribute__((format(printf, 1, 2))) static int probe_error(const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vreport("probe error", fmt, ap);
        va_end(ap);
        return 2;
}

/* A growing description of the steps of one attempt. */
struct notes {
        char text[900];
        size_t len;
};

__attribute__((format(printf, 2, 3))) static void note(struct notes *n, const char *fmt, ...)
{
        if (n->len >= sizeof(n->text) - 1)
                return;
        if (n->len > 0)
                n->len += (size_t)snprintf(n->text + n->len, sizeof(n->text) - n->len, "; ");
        if (n->len >= sizeof(n->text) - 1)
                return;
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(n->text + n->len, sizeof(n->text) - n->len, fmt, ap);
        va_end(ap);
        if (k > 0)
                n->len += (size_t)k;
        if (n->len > sizeof(n->text) - 1)
                n->len = sizeof(n->text) - 1;
}

/* Reads at most size-1 bytes of a file into buf; returns bytes read or -errno. */
static ssize_t read_file(const char *path, char *buf, size_t size)
{
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        size_t got = 0;
        while (got < size - 1) {
                ssize_t k = read(fd, buf + got, size - 1 - got);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        int e = errno;
                        close(fd);
                        return got > 0 ? (ssize_t)got : -e;
                }
                if (k == 0)
                        break;
                got += (size_t)k;
        }
        buf[got] = '\0';
        close(fd);
        return (ssize_t)got;
}

static ssize_t read_fd_all(int fd, char *buf, size_t size)
{
        size_t got = 0;
        while (got < size - 1) {
                ssize_t k = read(fd, buf + got, size - 1 - got);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return got > 0 ? (ssize_t)got : -errno;
                }
                if (k == 0)
                        break;
                got += (size_t)k;
        }
        buf[got] = '\0';
        return (ssize_t)got;
}

/* One "expect failure" step: r < 0 is blocked (errno noted), else through. */
static bool step_fails(struct notes *n, const char *what, long r)
{
        if (r < 0) {
                note(n, "%s: %s", what, en(errno));
                return true;
        }
        note(n, "%s returned %ld", what, r);
        return false;
}

static int finish(struct notes *n, bool all_blocked)
{
        return all_blocked ? blocked("%s", n->text) : through("%s", n->text);
}

/* A child that just waits to be killed, for the cross-process attempts. */
static pid_t spawn_sleeper(void)
{
        pid_t p = fork();
        if (p == 0) {
                prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
                for (;;)
                        pause();
        }
        return p;
}

static void reap(pid_t p)
{
        if (p > 0) {
                kill(p, SIGKILL);
                while (waitpid(p, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
}

/* ------------------------------------------------------------------ */
/* mounts and roots */

static int a_mount(int argc, char **argv)
{
        if (mount("tmpfs", "/tmp", "tmpfs", 0, "size=1m") < 0)
                return blocked("mount tmpfs on /tmp: %s", en(errno));
        return through("mount tmpfs on /tmp succeeded");
}

static int a_umount_shadow(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = step_fails(&n, "umount2(/etc/shadow, MNT_DETACH)", umount2("/etc/shadow", MNT_DETACH));
        ok &= step_fails(&n, "umount2(/etc, MNT_DETACH)", umount2("/etc", MNT_DETACH));
        char buf[4096];
        ssize_t k = read_file("/etc/shadow", buf, sizeof(buf));
        if (k > 0) {
                note(&n, "/etc/shadow has %zd bytes of content", k);
                ok = false;
        } else {
                note(&n, "/etc/shadow read: %s", k == 0 ? "empty (masked)" : en((int)-k));
        }
        return finish(&n, ok);
}

static int a_pivot_root(int argc, char **argv)
{
        mkdir("/tmp/pr-new", 0755);
        mkdir("/tmp/pr-new/old", 0755);
        long r = syscall(SYS_pivot_root, "/tmp/pr-new", "/tmp/pr-new/old");
        if (r < 0)
                return blocked("pivot_root: %s", en(errno));
        return through("pivot_root succeeded");
}

static int a_chroot(int argc, char **argv)
{
        if (chroot("/tmp") < 0)
                return blocked("chroot(/tmp): %s", en(errno));
        return through("chroot(/tmp) succeeded");
}

static int a_fsopen(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        long fsfd = syscall(__NR_fsopen, "tmpfs", 0);
        if (fsfd >= 0) {
                note(&n, "fsopen(tmpfs) gave fd %ld", fsfd);
                ok = false;
                long c = syscall(__NR_fsconfig, fsfd, 6 /* FSCONFIG_CMD_CREATE */, NULL, NULL, 0);
                long m = c < 0 ? -1 : syscall(__NR_fsmount, fsfd, 0, 0);
                note(&n, "fsconfig %s, fsmount %s", c < 0 ? en(errno) : "ok", m < 0 ? en(errno) : "gave a mount fd");
                if (m >= 0) {
                        long mv = syscall(__NR_move_mount, m, "", AT_FDCWD, "/tmp", MOVE_MOUNT_F_EMPTY_PATH);
                        note(&n, "move_mount onto /tmp %s", mv < 0 ? en(errno) : "succeeded");
                }
        } else {
                note(&n, "fsopen(tmpfs): %s", en(errno));
        }
        /* each call of the new mount API, with harmless arguments */
        ok &= step_fails(&n, "fspick(/usr)", syscall(__NR_fspick, AT_FDCWD, "/usr", 0));
        ok &= step_fails(&n, "fsmount(bad fd)", syscall(__NR_fsmount, 1000, 0, 0));
        ok &= step_fails(&n, "move_mount(/usr -> /tmp)",
                         syscall(__NR_move_mount, AT_FDCWD, "/usr", AT_FDCWD, "/tmp", 0));
        ok &= step_fails(&n, "fsconfig(bad fd)", syscall(__NR_fsconfig, 1000, 6, NULL, NULL, 0));
        return finish(&n, ok);
}

static int a_open_tree(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        long fd = syscall(__NR_open_tree, AT_FDCWD, "/usr", OPEN_TREE_CLONE | O_CLOEXEC);
        if (fd >= 0) {
                ok = false;
                long mv = syscall(__NR_move_mount, fd, "", AT_FDCWD, "/tmp", MOVE_MOUNT_F_EMPTY_PATH);
                note(&n, "open_tree(/usr, CLONE) gave a detached mount; move_mount onto /tmp %s",
                     mv < 0 ? en(errno) : "succeeded");
                close((int)fd);
        } else {
                note(&n, "open_tree(/usr, OPEN_TREE_CLONE): %s", en(errno));
        }
        /* open_tree_attr (Linux 6.15): a clone with attributes changed */
        struct probe_mount_attr a = {.attr_clr = MOUNT_ATTR_RDONLY};
        long fd2 = syscall(__NR_open_tree_attr, AT_FDCWD, "/usr", OPEN_TREE_CLONE | O_CLOEXEC, &a, sizeof(a));
        if (fd2 >= 0) {
                ok = false;
                note(&n, "open_tree_attr(/usr, CLONE, clear RDONLY) gave a writable detached mount");
                close((int)fd2);
        } else {
                note(&n, "open_tree_attr(/usr, CLONE, clear RDONLY): %s", en(errno));
        }
        return finish(&n, ok);
}

static int a_mount_setattr(int argc, char **argv)
{
        struct notes n = {0};
        struct probe_mount_attr a = {.attr_clr = MOUNT_ATTR_RDONLY};
        bool ok = step_fails(&n, "mount_setattr(/usr, clear RDONLY)",
                             syscall(__NR_mount_setattr, AT_FDCWD, "/usr", AT_RECURSIVE, &a, sizeof(a)));
        char p[64];
        snprintf(p, sizeof(p), "/usr/.cordon-escape-%d", (int)getpid());
        int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0) {
                close(fd);
                unlink(p);
                note(&n, "created a file in /usr (removed again)");
                ok = false;
        } else {
                note(&n, "create in /usr: %s", en(errno));
        }
        return finish(&n, ok);
}

/* ------------------------------------------------------------------ */
/* namespaces */

static int a_unshare_user(int argc, char **argv)
{
        if (unshare(CLONE_NEWUSER) < 0)
                return blocked("unshare(CLONE_NEWUSER): %s", en(errno));
        return through("unshare(CLONE_NEWUSER) succeeded: a fresh user namespace with full capabilities");
}

static int a_unshare_mount(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = step_fails(&n, "unshare(CLONE_NEWNS)", unshare(CLONE_NEWNS));
        ok &= step_fails(&n, "unshare(CLONE_NEWUSER|CLONE_NEWNS)", unshare(CLONE_NEWUSER | CLONE_NEWNS));
        ok &= step_fails(&n, "unshare(CLONE_NEWNET)", unshare(CLONE_NEWNET));
        ok &= step_fails(&n, "unshare(CLONE_NEWPID)", unshare(CLONE_NEWPID));
        return finish(&n, ok);
}

static int a_clone_user(int argc, char **argv)
{
        long r = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), NULL, NULL, NULL, 0);
        if (r == 0)
                _exit(0);
        if (r < 0)
                return blocked("raw clone(CLONE_NEWUSER): %s", en(errno));
        waitpid((pid_t)r, NULL, 0);
        return through("raw clone(CLONE_NEWUSER) created a child in a new user namespace");
}

static int a_clone3_user(int argc, char **argv)
{
        struct probe_clone_args ca = {.flags = CLONE_NEWUSER, .exit_signal = SIGCHLD};
        long r = syscall(__NR_clone3, &ca, sizeof(ca));
        if (r == 0)
                _exit(0);
        if (r < 0)
                return errno == ENOSYS ? blocked("clone3(CLONE_NEWUSER): ENOSYS")
                                       : blocked("clone3(CLONE_NEWUSER): %s (expected ENOSYS)", en(errno));
        waitpid((pid_t)r, NULL, 0);
        return through("clone3(CLONE_NEWUSER) created a child in a new user namespace");
}

static int a_setns(int argc, char **argv)
{
        static const char *const nss[] = {"user", "mnt", "pid", "net", "ipc", "uts", "cgroup", "time"};
        struct notes n = {0};
        bool ok = true;
        int tried = 0;
        for (size_t i = 0; i < sizeof(nss) / sizeof(nss[0]); i++) {
                char p[64];
                snprintf(p, sizeof(p), "/proc/1/ns/%s", nss[i]);
                int fd = open(p, O_RDONLY | O_CLOEXEC);
                if (fd < 0) {
                        snprintf(p, sizeof(p), "/proc/self/ns/%s", nss[i]);
                        fd = open(p, O_RDONLY | O_CLOEXEC);
                }
                if (fd < 0) {
                        note(&n, "open %s: %s", nss[i], en(errno));
                        continue;
                }
                tried++;
                if (setns(fd, 0) == 0) {
                        note(&n, "setns(%s) succeeded", p);
                        ok = false;
                } else {
                        note(&n, "setns(%s): %s", p, en(errno));
                }
                close(fd);
        }
        /* a pidfd of ourselves, all namespaces at once */
        long pfd = syscall(__NR_pidfd_open, getpid(), 0);
        if (pfd >= 0) {
                if (setns((int)pfd, CLONE_NEWNS | CLONE_NEWUSER) == 0) {
                        note(&n, "setns(pidfd) succeeded");
                        ok = false;
                } else {
                        note(&n, "setns(pidfd): %s", en(errno));
                }
                close((int)pfd);
        }
        if (tried == 0 && pfd < 0 && ok)
                note(&n, "no namespace file could be opened");
        return finish(&n, ok);
}

/* ------------------------------------------------------------------ */
/* other processes */

static int a_ptrace_attach(int argc, char **argv)
{
        pid_t c = spawn_sleeper();
        if (c < 0)
                return probe_error("fork: %s", en(errno));
        long r = ptrace(PTRACE_ATTACH, c, NULL, NULL);
        int e = errno;
        reap(c);
        if (r < 0)
                return blocked("ptrace(PTRACE_ATTACH, sibling): %s", en(e));
        return through("ptrace(PTRACE_ATTACH) on a sibling succeeded");
}

static int a_ptrace_traceme(int argc, char **argv)
{
        int pfd[2];
        if (pipe(pfd) < 0)
                return probe_error("pipe: %s", en(errno));
        pid_t c = fork();
        if (c == 0) {
                long r = ptrace(PTRACE_TRACEME, 0, NULL, NULL);
                int e = r < 0 ? errno : 0;
                (void)!write(pfd[1], &e, sizeof(e));
                _exit(0);
        }
        close(pfd[1]);
        int e = -1;
        ssize_t k = read(pfd[0], &e, sizeof(e));
        close(pfd[0]);
        waitpid(c, NULL, 0);
        if (k != sizeof(e))
                return probe_error("child reported nothing");
        if (e)
                return blocked("ptrace(PTRACE_TRACEME): %s", en(e));
        return through("ptrace(PTRACE_TRACEME) succeeded");
}

static int a_process_vm_readv(int argc, char **argv)
{
        static char marker[] = "cordon-marker";
        pid_t c = spawn_sleeper();
        if (c < 0)
                return probe_error("fork: %s", en(errno));
        char buf[sizeof(marker)] = {0};
        struct iovec l = {buf, sizeof(buf)}, r = {marker, sizeof(marker)};
        ssize_t k = process_vm_readv(c, &l, 1, &r, 1, 0);
        int e = errno;
        struct iovec w = {buf, sizeof(buf)};
        ssize_t kw = process_vm_writev(c, &w, 1, &r, 1, 0);
        int ew = errno;
        reap(c);
        if (k < 0 && kw < 0)
                return blocked("process_vm_readv: %s; process_vm_writev: %s", en(e), en(ew));
        return through("process_vm_readv %zd, process_vm_writev %zd bytes of a sibling", k, kw);
}

static int a_pidfd_getfd(int argc, char **argv)
{
        pid_t c = spawn_sleeper();
        if (c < 0)
                return probe_error("fork: %s", en(errno));
        long pfd = syscall(__NR_pidfd_open, c, 0);
        if (pfd < 0) {
                int e = errno;
                reap(c);
                return blocked("pidfd_open: %s", en(e));
        }
        long fd = syscall(__NR_pidfd_getfd, pfd, 1, 0);
        int e = errno;
        reap(c);
        if (fd < 0)
                return blocked("pidfd_getfd: %s", en(e));
        return through("pidfd_getfd took fd 1 of a sibling");
}

/* init (pid 1 of the sandbox) is a fork of the host-side cordon: its memory
 * still holds cordon's host environment and its socket to the sentry. */
static int a_proc_mem_init(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        int fd = open("/proc/1/mem", O_RDWR | O_CLOEXEC);
        if (fd >= 0) {
                note(&n, "opened init's /proc/1/mem read-write (could rewrite pid 1)");
                ok = false;
                close(fd);
        } else {
                note(&n, "open /proc/1/mem O_RDWR: %s", en(errno));
        }
        fd = open("/proc/1/mem", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                note(&n, "opened init's /proc/1/mem read-only");
                ok = false;
                close(fd);
        } else {
                note(&n, "open /proc/1/mem O_RDONLY: %s", en(errno));
        }
        static const char *const others[] = {"/proc/1/fd/3", "/proc/1/fd/4", "/proc/1/map_files", "/proc/1/stack",
                                             "/proc/1/syscall"};
        for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
                fd = open(others[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
                if (fd >= 0) {
                        char buf[512];
                        ssize_t k = read(fd, buf, sizeof(buf));
                        struct stat st;
                        fstat(fd, &st);
                        /* a directory is listable only with ptrace access */
                        if (S_ISDIR(st.st_mode)) {
                                DIR *d = fdopendir(fd);
                                int entries = 0;
                                struct dirent *de;
                                while (d && (de = readdir(d)))
                                        entries += de->d_name[0] != '.';
                                if (d)
                                        closedir(d);
                                else
                                        close(fd);
                                if (entries > 0) {
                                        note(&n, "listed %s (%d entries)", others[i], entries);
                                        ok = false;
                                } else {
                                        note(&n, "%s: empty", others[i]);
                                }
                                continue;
                        }
                        if (k > 0) {
                                note(&n, "read %zd bytes of %s", k, others[i]);
                                ok = false;
                        } else {
                                note(&n, "%s: opened, read %s", others[i], k == 0 ? "empty" : en(errno));
                        }
                        close(fd);
                } else {
                        note(&n, "%s: %s", others[i], en(errno));
                }
        }
        return finish(&n, ok);
}

/* ------------------------------------------------------------------ */
/* the shocker escape */

/* Core dumps: a crash must dump nowhere, above all not to a host
 * core_pattern pipe (a host program run as root: the runner sets one for
 * this attempt). The sandbox's RLIMIT_CORE is one byte, at which the kernel
 * skips such a pipe; at zero it would pipe the dump all the same. Each way
 * of lowering it is tried in a child that then crashes: the child must not
 * have dumped (WCOREDUMP) and the limit must still read one byte. */
struct core_way {
        const char *name;
        long (*lower)(void);
};
static long core_glibc(void)
{
        struct rlimit rl = {0, 0};
        return setrlimit(RLIMIT_CORE, &rl);
}
static long core_raw_setrlimit(void)
{
        struct rlimit rl = {0, 0};
        return syscall(SYS_setrlimit, RLIMIT_CORE, &rl);
}
static long core_prlimit(void)
{
        uint64_t rl[2] = {0, 0};
        return syscall(SYS_prlimit64, 0, RLIMIT_CORE, rl, NULL);
}
static long core_prlimit_old(void)
{
        uint64_t rl[2] = {0, 0}, old[2] = {7, 7};
        long r = syscall(SYS_prlimit64, 0, RLIMIT_CORE, rl, old);
        return r == 0 && (old[0] != 1 || old[1] != 1) ? 99 : r;
}
static long core_prlimit_highbits(void)
{
        /* the kernel reads the resource's low 32 bits */
        uint64_t rl[2] = {0, 0};
        return syscall(SYS_prlimit64, (long)getpid(), (1UL << 32) | RLIMIT_CORE, rl, NULL);
}
static long core_setrlimit_highbits(void)
{
        struct rlimit rl = {0, 0};
        return syscall(SYS_setrlimit, (1UL << 32) | RLIMIT_CORE, &rl);
}
static long core_raise(void)
{
        struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};
        return setrlimit(RLIMIT_CORE, &rl);
}

static int a_core_dump(int argc, char **argv)
{
        (void)argc;
        (void)argv;
        static const struct core_way ways[] = {
                {"no change", NULL},
                {"setrlimit(0)", core_glibc},
                {"raw setrlimit(0)", core_raw_setrlimit},
                {"prlimit64(0)", core_prlimit},
                {"prlimit64(0) with old", core_prlimit_old},
                {"prlimit64(pid, 1<<32|CORE, 0)", core_prlimit_highbits},
                {"raw setrlimit(1<<32|CORE, 0)", core_setrlimit_highbits},
                {"setrlimit(unlimited)", core_raise},
        };
        struct notes n = {0};
        bool all = true;
        for (size_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
                int pfd[2];
                if (pipe2(pfd, O_CLOEXEC) < 0)
                        return probe_error("pipe: %s", en(errno));
                pid_t p = fork();
                if (p < 0)
                        return probe_error("fork: %s", en(errno));
                if (p == 0) {
                        long r = ways[i].lower ? ways[i].lower() : 0;
                        int e = errno;
                        struct rlimit now = {0, 0};
                        getrlimit(RLIMIT_CORE, &now);
                        char msg[160];
                        int k = snprintf(msg, sizeof(msg), "%s: %ld%s%s, limit %llu/%llu", ways[i].name, r,
                                         r < 0 ? " " : "", r < 0 ? en(e) : "", (unsigned long long)now.rlim_cur,
                                         (unsigned long long)now.rlim_max);
                        (void)!write(pfd[1], msg, (size_t)k);
                        signal(SIGSEGV, SIG_DFL);
                        raise(SIGSEGV);
                        _exit(3);
                }
                close(pfd[1]);
                char msg[200];
                ssize_t k = read_fd_all(pfd[0], msg, sizeof(msg));
                close(pfd[0]);
                int st = 0;
                while (waitpid(p, &st, 0) < 0 && errno == EINTR)
                        ;
                bool dumped = WIFSIGNALED(st) && WCOREDUMP(st);
                note(&n, "%s%s", k > 0 ? msg : ways[i].name, dumped ? ": CORE DUMPED" : ": no dump");
                if (dumped)
                        all = false;
        }
        return finish(&n, all);
}

static int a_open_by_handle(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        struct {
                struct file_handle fh;
                unsigned char bytes[128];
        } h;
        memset(&h, 0, sizeof(h));
        h.fh.handle_bytes = 128;
        int mount_id = -1;
        int type = 1; /* FILEID_INO32_GEN, what ext4 uses */
        if (name_to_handle_at(AT_FDCWD, "/", &h.fh, &mount_id, 0) == 0) {
                note(&n, "name_to_handle_at(/) worked (type %d, %u bytes)", h.fh.handle_type, h.fh.handle_bytes);
                type = h.fh.handle_type;
        } else {
                note(&n, "name_to_handle_at(/): %s", en(errno));
        }
        /* /etc is a bind of the host's root file system on most hosts */
        struct {
                struct file_handle fh;
                unsigned char bytes[128];
        } he;
        memset(&he, 0, sizeof(he));
        he.fh.handle_bytes = 128;
        if (name_to_handle_at(AT_FDCWD, "/etc", &he.fh, &mount_id, 0) == 0) {
                note(&n, "name_to_handle_at(/etc) worked");
                type = he.fh.handle_type;
        } else {
                note(&n, "name_to_handle_at(/etc): %s", en(errno));
        }
        /* guess: inode 2 (the root directory of ext2/3/4), generation 0 */
        static const char *const mounts[] = {"/etc", "/usr", "/"};
        for (size_t i = 0; i < sizeof(mounts) / sizeof(mounts[0]); i++) {
                int mfd = open(mounts[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (mfd < 0)
                        continue;
                struct {
                        struct file_handle fh;
                        uint32_t ino, gen;
                } g = {.fh = {.handle_bytes = 8, .handle_type = type}, .ino = 2, .gen = 0};
                long fd = syscall(SYS_open_by_handle_at, mfd, &g.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd >= 0) {
                        note(&n, "open_by_handle_at(inode 2 via %s) opened the file system's root", mounts[i]);
                        ok = false;
                        close((int)fd);
                } else {
                        note(&n, "open_by_handle_at(inode 2 via %s): %s", mounts[i], en(errno));
                }
                close(mfd);
        }
        return finish(&n, ok);
}

/* ------------------------------------------------------------------ */
/* kernel attack surface and host-wide state */

static int a_io_uring(int argc, char **argv)
{
        unsigned char params[120] = {0}; /* struct io_uring_params */
        long fd = syscall(SYS_io_uring_setup, 8, params);
        if (fd >= 0) {
                close((int)fd);
                return through("io_uring_setup gave a ring");
        }
        int e = errno;
        long r2 = syscall(SYS_io_uring_enter, 0, 1, 0, 0, NULL, 0);
        int e2 = errno;
        long r3 = syscall(SYS_io_uring_register, 0, 0, NULL, 0);
        int e3 = errno;
        return blocked("io_uring_setup: %s; io_uring_enter: %s; io_uring_register: %s", en(e), r2 < 0 ? en(e2) : "ok?",
                       r3 < 0 ? en(e3) : "ok?");
}

static int a_bpf(int argc, char **argv)
{
        struct bpf_insn prog[] = {
                {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0},
                {.code = BPF_JMP | BPF_EXIT},
        };
        union bpf_attr attr;
        memset(&attr, 0, sizeof(attr));
        attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
        attr.insn_cnt = 2;
        attr.insns = (uint64_t)(uintptr_t)prog;
        attr.license = (uint64_t)(uintptr_t) "GPL";
        long fd = syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
        if (fd >= 0) {
                close((int)fd);
                return through("bpf(BPF_PROG_LOAD) loaded a program");
        }
        int e = errno;
        memset(&attr, 0, sizeof(attr));
        attr.map_type = BPF_MAP_TYPE_ARRAY;
        attr.key_size = 4;
        attr.value_size = 4;
        attr.max_entries = 1;
        long m = syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
        if (m >= 0) {
                close((int)m);
                return through("bpf(BPF_MAP_CREATE) created a map (BPF_PROG_LOAD: %s)", en(e));
        }
        return blocked("bpf(BPF_PROG_LOAD): %s; bpf(BPF_MAP_CREATE): %s", en(e), en(errno));
}

/* bpf-pins PATH...: the host's bpffs, the egress floor's pins' directory and
 * its pins (net/floor.c), named from outside: the sandbox must not see them
 * (no /sys in its view) nor take a pinned program (bpf() refused). */
static int a_bpf_pins(int argc, char **argv)
{
        char seen[512] = "";
        size_t n = 0;
        for (int i = 2; i < argc; i++) {
                int fd = open(argv[i], O_RDONLY | O_CLOEXEC);
                if (fd >= 0) {
                        close(fd);
                        return through("open(%s) succeeded", argv[i]);
                }
                int e = errno;
                union bpf_attr attr;
                memset(&attr, 0, sizeof(attr));
                attr.pathname = (uint64_t)(uintptr_t)argv[i];
                long pfd = syscall(SYS_bpf, BPF_OBJ_GET, &attr, sizeof(attr));
                if (pfd >= 0) {
                        close((int)pfd);
                        return through("bpf(BPF_OBJ_GET, %s) took the pinned object", argv[i]);
                }
                if (n < sizeof(seen))
                        n += (size_t)snprintf(seen + n, sizeof(seen) - n, "%s%s: open %s, BPF_OBJ_GET %s",
                                              i > 2 ? "; " : "", argv[i], en(e), en(errno));
        }
        return blocked("%s", seen);
}

static int a_perf_event(int argc, char **argv)
{
        struct perf_event_attr pa;
        memset(&pa, 0, sizeof(pa));
        pa.type = PERF_TYPE_SOFTWARE;
        pa.size = sizeof(pa);
        pa.config = PERF_COUNT_SW_CPU_CLOCK;
        pa.disabled = 1;
        pa.exclude_kernel = 1;
        pa.exclude_hv = 1;
        long fd = syscall(SYS_perf_event_open, &pa, 0, -1, -1, 0);
        if (fd >= 0) {
                close((int)fd);
                return through("perf_event_open on ourselves succeeded");
        }
        return blocked("perf_event_open: %s", en(errno));
}

static int a_userfaultfd(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = step_fails(&n, "userfaultfd(O_CLOEXEC)", syscall(SYS_userfaultfd, O_CLOEXEC));
        ok &= step_fails(&n, "userfaultfd(UFFD_USER_MODE_ONLY)", syscall(SYS_userfaultfd, O_CLOEXEC | 1));
        int fd = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
        if (fd >= 0) {
                note(&n, "/dev/userfaultfd opened");
                ok = false;
                close(fd);
        } else {
                note(&n, "/dev/userfaultfd: %s", en(errno));
        }
        return finish(&n, ok);
}

static int a_keyctl(int argc, char **argv)
{
        struct notes n = {0};
        char buf[256];
        bool ok = step_fails(&n, "keyctl(GET_KEYRING_ID, session)",
                             syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
        ok &= step_fails(&n, "keyctl(READ, session keyring)",
                         syscall(SYS_keyctl, KEYCTL_READ, KEY_SPEC_SESSION_KEYRING, buf, sizeof(buf)));
        ok &= step_fails(&n, "keyctl(READ, user keyring)",
                         syscall(SYS_keyctl, KEYCTL_READ, KEY_SPEC_USER_KEYRING, buf, sizeof(buf)));
        ok &= step_fails(&n, "keyctl(JOIN_SESSION_KEYRING)", syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL));
        return finish(&n, ok);
}

static int a_add_key(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = step_fails(&n, "add_key(user, process keyring)",
                             syscall(SYS_add_key, "user", "cordon-escape", "x", 1, KEY_SPEC_PROCESS_KEYRING));
        ok &= step_fails(&n, "request_key(user)",
                         syscall(SYS_request_key, "user", "cordon-escape", NULL, KEY_SPEC_PROCESS_KEYRING));
        return finish(&n, ok);
}

/* modify_ldt: an LDT entry of one's own, kernel code (and PTI's LDT
 * mapping) that only 16-bit code needs, with a history of privilege
 * escalations. Natively a 64-bit process may write one. */
static int a_modify_ldt(int argc, char **argv)
{
        (void)argc;
        (void)argv;
        struct notes n = {0};
        struct {
                unsigned int entry_number;
                unsigned int base_addr;
                unsigned int limit;
                unsigned int flags; /* seg_32bit:1 contents:2 read_exec_only:1 limit_in_pages:1 ... */
        } desc = {.entry_number = 0, .base_addr = 0, .limit = 0xfff, .flags = 1};
        bool ok = step_fails(&n, "modify_ldt(1, a data segment)", syscall(SYS_modify_ldt, 1, &desc, sizeof(desc)));
        char buf[16];
        ok &= step_fails(&n, "modify_ldt(0, read)", syscall(SYS_modify_ldt, 0, buf, sizeof(buf)));
        return finish(&n, ok);
}

static int a_kexec(int argc, char **argv)
{
        struct notes n = {0};
        /* no segments: a successful call would only unload a staged kernel */
        bool ok = step_fails(&n, "kexec_load(no segments)", syscall(SYS_kexec_load, 0, 0, NULL, 0));
        ok &= step_fails(&n, "kexec_file_load(bad fds)", syscall(SYS_kexec_file_load, -1, -1, 0, "", 0));
        return finish(&n, ok);
}

static int a_init_module(int argc, char **argv)
{
        struct notes n = {0};
        static const char not_elf[64] = "not an ELF module";
        bool ok = step_fails(&n, "init_module(garbage)", syscall(SYS_init_module, not_elf, sizeof(not_elf), ""));
        int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        ok &= step_fails(&n, "finit_module(/dev/null)", syscall(SYS_finit_module, fd, "", 0));
        if (fd >= 0)
                close(fd);
        ok &= step_fails(&n, "delete_module(cordon_none)", syscall(SYS_delete_module, "cordon_none", O_NONBLOCK));
        return finish(&n, ok);
}

static int a_iopl(int argc, char **argv)
{
        if (syscall(SYS_iopl, 3) == 0) {
                syscall(SYS_iopl, 0);
                return through("iopl(3) granted raw port access");
        }
        return blocked("iopl(3): %s", en(errno));
}

static int a_ioperm(int argc, char **argv)
{
        if (syscall(SYS_ioperm, 0x80, 1, 1) == 0) {
                syscall(SYS_ioperm, 0x80, 1, 0);
                return through("ioperm(0x80) granted port access");
        }
        return blocked("ioperm(0x80, 1, 1): %s", en(errno));
}

static int a_reboot(int argc, char **argv)
{
        /* an invalid command: the kernel checks CAP_SYS_BOOT before it looks at
         * the command, so EINVAL means the capability check was passed */
        long r = syscall(SYS_reboot, LINUX_REBOOT_MAGIC1, LINUX_REBOOT_MAGIC2, 0x0bad0bad, NULL);
        if (r < 0 && errno == EINVAL)
                return through("reboot() passed the CAP_SYS_BOOT check (EINVAL on an invalid command)");
        if (r < 0)
                return blocked("reboot(invalid command): %s", en(errno));
        return through("reboot() returned %ld", r);
}

static int a_swapon(int argc, char **argv)
{
        /* CAP_SYS_ADMIN is checked before the path is looked up */
        long r = syscall(SYS_swapon, "/tmp/cordon-no-such-swap", 0);
        if (r < 0 && errno == EPERM)
                return blocked("swapon: EPERM");
        if (r < 0 && errno != ENOENT)
                return blocked("swapon: %s", en(errno));
        return through("swapon passed the CAP_SYS_ADMIN check (%s)", r < 0 ? en(errno) : "succeeded");
}

static int a_acct(int argc, char **argv)
{
        /* CAP_SYS_PACCT is checked before the path is looked up */
        long r = syscall(SYS_acct, "/tmp/cordon-no-such-acct");
        if (r < 0 && errno != ENOENT)
                return blocked("acct: %s", en(errno));
        return through("acct passed the CAP_SYS_PACCT check (%s)", r < 0 ? en(errno) : "succeeded");
}

static int a_settimeofday(int argc, char **argv)
{
        /* an invalid time: never changes the clock, EINVAL if it reached the kernel */
        struct timeval tv = {.tv_sec = 1, .tv_usec = 5000000};
        long r = syscall(SYS_settimeofday, &tv, NULL);
        if (r == 0)
                return through("settimeofday succeeded");
        return blocked("settimeofday: %s", en(errno));
}

static int a_clock_settime(int argc, char **argv)
{
        struct notes n = {0};
        struct timespec ts = {.tv_sec = 1, .tv_nsec = 2000000000L}; /* invalid: never applied */
        bool ok = step_fails(&n, "clock_settime(REALTIME, invalid)", syscall(SYS_clock_settime, CLOCK_REALTIME, &ts));
        /* adjtimex/clock_adjtime with a mode: CAP_SYS_TIME is checked before the
         * (invalid) tick value, so EINVAL means the capability check passed */
        struct timex tx;
        memset(&tx, 0, sizeof(tx));
        tx.modes = ADJ_TICK;
        tx.tick = 1;
        long r = syscall(SYS_adjtimex, &tx);
        if (r < 0 && errno == EINVAL) {
                note(&n, "adjtimex(ADJ_TICK) passed the CAP_SYS_TIME check");
                ok = false;
        } else {
                ok &= step_fails(&n, "adjtimex(ADJ_TICK, invalid)", r);
        }
        memset(&tx, 0, sizeof(tx));
        tx.modes = ADJ_TICK;
        tx.tick = 1;
        r = syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx);
        if (r < 0 && errno == EINVAL) {
                note(&n, "clock_adjtime(ADJ_TICK) passed the CAP_SYS_TIME check");
                ok = false;
        } else {
                ok &= step_fails(&n, "clock_adjtime(ADJ_TICK, invalid)", r);
        }
        return finish(&n, ok);
}

static int a_syslog(int argc, char **argv)
{
        char buf[4096];
        long r = syscall(SYS_syslog, 3 /* SYSLOG_ACTION_READ_ALL */, buf, (int)sizeof(buf));
        if (r > 0)
                return through("syslog(READ_ALL) returned %ld bytes of the host's kernel log", r);
        if (r == 0)
                return through("syslog(READ_ALL) was allowed (empty log)");
        int e = errno;
        int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd >= 0) {
                ssize_t k = read(fd, buf, sizeof(buf));
                close(fd);
                if (k > 0)
                        return through("/dev/kmsg readable (%zd bytes)", k);
        }
        ssize_t k = read_file("/proc/kmsg", buf, sizeof(buf));
        if (k > 0)
                return through("/proc/kmsg readable");
        return blocked("syslog(READ_ALL): %s; /dev/kmsg: %s; /proc/kmsg: %s", en(e), fd < 0 ? en(errno) : "empty",
                       k == 0 ? "empty (masked)" : en((int)-k));
}

/* ------------------------------------------------------------------ */
/* seccomp: a nested listener */

static int a_seccomp_listener(int argc, char **argv)
{
        struct sock_filter insns[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
        struct sock_fprog prog = {.len = 1, .filter = insns};
        long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
        if (fd >= 0)
                return through("seccomp(NEW_LISTENER) gave a nested listener fd %ld", fd);
        int e = errno;
        /* the same with the op's upper 32 bits set (the kernel reads an int) */
        long fd2 = syscall(SYS_seccomp, (1UL << 32) | SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
        if (fd2 >= 0)
                return through("seccomp(op|1<<32, NEW_LISTENER) gave a nested listener fd %ld", fd2);
        int e2 = errno;
        long fd3 = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                           (1UL << 32) | SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_TSYNC, &prog);
        if (fd3 >= 0)
                return through("seccomp(NEW_LISTENER|TSYNC, flags|1<<32) gave a nested listener fd %ld", fd3);
        return blocked("seccomp(SET_MODE_FILTER, NEW_LISTENER): %s; op with high bits: %s; flags with high bits: %s",
                       en(e), en(e2), en(errno));
}

/* ------------------------------------------------------------------ */
/* terminals */

static int a_tiocsti(int argc, char **argv)
{
        struct notes n = {0};
        bool tty = isatty(0);
        note(&n, "fd 0 %s a tty", tty ? "is" : "is not");
        char c = '#';
        bool ok = step_fails(&n, "ioctl(0, TIOCSTI)", ioctl(0, TIOCSTI, &c));
        ok &= step_fails(&n, "ioctl(0, 0xffffffff00005412)", syscall(SYS_ioctl, 0, 0xffffffff00005412UL, &c));
        ok &= step_fails(&n, "ioctl(0, 0x100005412)", syscall(SYS_ioctl, 0, 0x100005412UL, &c));
        int tfd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (tfd >= 0) {
                ok &= step_fails(&n, "ioctl(/dev/tty, TIOCSTI)", ioctl(tfd, TIOCSTI, &c));
                close(tfd);
        } else {
                note(&n, "/dev/tty: %s", en(errno));
        }
        if (!ok) {
                /* eat what we typed so it does not reach a shell */
                tcflush(0, TCIFLUSH);
        }
        return finish(&n, ok);
}

static int a_tioclinux(int argc, char **argv)
{
        struct notes n = {0};
        char sub = 6; /* TIOCL_GETSHIFTSTATE: a read-only subcode */
        bool ok = step_fails(&n, "ioctl(0, TIOCLINUX)", ioctl(0, TIOCLINUX, &sub));
        sub = 6;
        ok &= step_fails(&n, "ioctl(0, TIOCLINUX|1<<32)", syscall(SYS_ioctl, 0, (1UL << 32) | TIOCLINUX, &sub));
        return finish(&n, ok);
}

/* A terminal's line discipline: attaching one loads its module host-wide
 * where the host autoloads them (dev.tty.ldisc_autoload, on by default),
 * and n_hdlc and n_gsm have had privilege escalations (CVE-2017-2636,
 * CVE-2023-6546). The sandbox's own pty is used; n_null is built into
 * this kernel, so natively the attach succeeds. */
static int a_tiocsetd(int argc, char **argv)
{
        struct notes n = {0};
        int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (m < 0)
                return blocked("/dev/ptmx: %s (no terminal to attach to)", en(errno));
        int ldisc = 27; /* N_NULL */
        bool ok = step_fails(&n, "ioctl(ptmx, TIOCSETD, N_NULL)", ioctl(m, TIOCSETD, &ldisc));
        ldisc = 13; /* N_HDLC */
        ok &= step_fails(&n, "ioctl(ptmx, TIOCSETD, N_HDLC)", ioctl(m, TIOCSETD, &ldisc));
        ldisc = 27;
        ok &= step_fails(&n, "ioctl(ptmx, TIOCSETD|1<<32, N_NULL)",
                         syscall(SYS_ioctl, m, (1UL << 32) | TIOCSETD, &ldisc));
        int now = -1;
        if (ioctl(m, TIOCGETD, &now) == 0)
                note(&n, "line discipline now %d", now);
        close(m);
        return finish(&n, ok);
}

/* ------------------------------------------------------------------ */
/* other syscall ABIs */

static int run_in_child(long (*fn)(void), const char *what)
{
        int pfd[2];
        if (pipe(pfd) < 0)
                return probe_error("pipe: %s", en(errno));
        pid_t c = fork();
        if (c < 0)
                return probe_error("fork: %s", en(errno));
        if (c == 0) {
                close(pfd[0]);
                long r = fn();
                (void)!write(pfd[1], &r, sizeof(r));
                _exit(0);
        }
        close(pfd[1]);
        long r = 0;
        ssize_t k = read(pfd[0], &r, sizeof(r));
        close(pfd[0]);
        int status;
        while (waitpid(c, &status, 0) < 0 && errno == EINTR)
                ;
        if (WIFSIGNALED(status))
                return blocked("%s: the child was killed by %s", what, sigabbrev_np(WTERMSIG(status)) ?: "a signal");
        if (k != sizeof(r))
                return probe_error("%s: the child reported nothing", what);
        if (r > 0)
                return through("%s returned pid %ld", what, r);
        if (r == -ENOSYS || r == -EPERM)
                return blocked("%s: %s", what, en((int)-r));
        return blocked("%s: returned %ld", what, r);
}

static long x32_getpid(void)
{
        long r = syscall(0x40000000L | __NR_getpid);
        return r < 0 ? -errno : r;
}

static long i386_getpid(void)
{
        long ret;
        __asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory", "rcx", "r11");
        return ret;
}

static int a_x32(int argc, char **argv)
{
        return run_in_child(x32_getpid, "x32 getpid (0x40000000|39)");
}
static int a_i386(int argc, char **argv)
{
        return run_in_child(i386_getpid, "i386 getpid (int $0x80, eax=20)");
}

/* ------------------------------------------------------------------ */
/* privileges */

static int a_caps(int argc, char **argv)
{
        char st[8192];
        ssize_t k = read_file("/proc/self/status", st, sizeof(st));
        if (k <= 0)
                return probe_error("read /proc/self/status: %s", k == 0 ? "empty" : en((int)-k));
        /* The sandbox's root holds, inside its own user namespace, at most
         * the default set container engines grant (CHOWN DAC_OVERRIDE
         * FOWNER FSETID KILL SETGID SETUID SETPCAP NET_BIND_SERVICE
         * SYS_CHROOT SETFCAP = 0x800405fb): one bit more is an escape.
         * Nothing inheritable or ambient, ever. */
        static const struct {
                const char *key;
                const char *want;
                unsigned long long allowed; /* a capability set: at most these bits */
        } checks[] = {
                {"CapInh:", "0000000000000000", 0},
                {"CapPrm:", NULL, 0x800405fbULL},
                {"CapEff:", NULL, 0x800405fbULL},
                {"CapBnd:", NULL, 0x800405fbULL},
                {"CapAmb:", "0000000000000000", 0},
                {"NoNewPrivs:", "1", 0},
                {"Seccomp:", "2", 0},
        };
        struct notes n = {0};
        bool ok = true;
        for (size_t i = 0; i < sizeof(checks) / sizeof(checks[0]); i++) {
                const char *p = strstr(st, checks[i].key);
                if (!p) {
                        note(&n, "%s missing", checks[i].key);
                        ok = false;
                        continue;
                }
                p += strlen(checks[i].key);
                while (*p == ' ' || *p == '\t')
                        p++;
                size_t len = strcspn(p, "\n");
                char val[64];
                snprintf(val, sizeof(val), "%.*s", (int)(len < 63 ? len : 63), p);
                if (!checks[i].want) {
                        unsigned long long v = strtoull(val, NULL, 16);
                        if (v & ~checks[i].allowed) {
                                note(&n, "%s %s (more than the default set %016llx)", checks[i].key, val,
                                     checks[i].allowed);
                                ok = false;
                        }
                } else if (strcmp(val, checks[i].want) != 0) {
                        note(&n, "%s %s (want %s)", checks[i].key, val, checks[i].want);
                        ok = false;
                } else if (i >= 5) {
                        note(&n, "%s %s", checks[i].key, val);
                }
        }
        if (ok)
                note(&n, "no capability beyond the default set, none inheritable or ambient");
        int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
        if (nnp != 1) {
                note(&n, "PR_GET_NO_NEW_PRIVS=%d", nnp);
                ok = false;
        }
        return finish(&n, ok);
}

static int a_setuid_nosuid(int argc, char **argv)
{
        static const char *const suid[] = {
                "/usr/bin/su",     "/usr/bin/passwd", "/usr/bin/mount", "/usr/bin/umount",
                "/usr/bin/newgrp", "/usr/bin/chsh",   "/usr/bin/chfn",  "/usr/bin/gpasswd",
                "/usr/bin/sudo",   "/usr/bin/pkexec", "/bin/su",        "/usr/lib/dbus-1.0/dbus-daemon-launch-helper"};
        struct notes n = {0};
        bool ok = true;
        int found = 0, nosuid = 0;
        for (size_t i = 0; i < sizeof(suid) / sizeof(suid[0]); i++) {
                struct stat s;
                if (stat(suid[i], &s) < 0 || !(s.st_mode & S_ISUID))
                        continue;
                found++;
                struct statvfs v;
                if (statvfs(suid[i], &v) < 0) {
                        note(&n, "statvfs %s: %s", suid[i], en(errno));
                        ok = false;
                        continue;
                }
                if (v.f_flag & ST_NOSUID) {
                        nosuid++;
                } else {
                        note(&n, "%s is setuid on a mount without nosuid", suid[i]);
                        ok = false;
                }
        }
        static const char *const dirs[] = {"/usr/bin", "/usr/sbin", "/bin", "/sbin", "/tmp",
                                           "/var/tmp", "/dev/shm",  "/run", "/root", "/helpers"};
        for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
                struct statvfs v;
                if (statvfs(dirs[i], &v) < 0)
                        continue;
                if (!(v.f_flag & ST_NOSUID)) {
                        note(&n, "%s is not nosuid", dirs[i]);
                        ok = false;
                }
        }
        note(&n, "%d setuid binaries in the view, %d on nosuid mounts", found, nosuid);
        int nnp = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
        note(&n, "no_new_privs=%d", nnp);
        if (nnp != 1)
                ok = false;
        /* a setuid-root program would run with our euid: su needs root to
         * proceed, so its failure message shows it did not get it */
        return finish(&n, ok);
}

static int a_sethostname(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = step_fails(&n, "sethostname", sethostname("escaped", 7));
        ok &= step_fails(&n, "setdomainname", setdomainname("escaped", 7));
        return finish(&n, ok);
}

static int a_setuid_regain(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        /* raw syscalls: only this (single-threaded) process is affected */
        long r = syscall(SYS_setresuid, 1000, 1000, 1000);
        if (r < 0) {
                note(&n, "setresuid(1000): %s", en(errno));
        } else {
                note(&n, "setresuid(1000) ok");
                long back = syscall(SYS_setresuid, 0, 0, 0);
                if (back == 0) {
                        note(&n, "regained uid 0 after dropping it");
                        ok = false;
                } else {
                        note(&n, "setresuid(0) afterwards: %s", en(errno));
                }
        }
        r = syscall(SYS_setresgid, 1000, 1000, 1000);
        note(&n, "setresgid(1000): %s", r < 0 ? en(errno) : "ok");
        r = syscall(SYS_setgroups, 1, (gid_t[]){0});
        if (r == 0) {
                note(&n, "setgroups([0]) succeeded");
                ok = false;
        } else {
                note(&n, "setgroups([0]): %s", en(errno));
        }
        return finish(&n, ok);
}

/* ------------------------------------------------------------------ */
/* files outside the view */

/* Tries to open and read path; a successful read of anything is recorded. */
static bool try_read(struct notes *n, const char *label, const char *path)
{
        char buf[4096];
        ssize_t k = read_file(path, buf, sizeof(buf));
        if (k >= 0) {
                note(n, "%s: opened and read %zd bytes", label, k);
                return false;
        }
        note(n, "%s: %s", label, en((int)-k));
        return true;
}

static const char *need_arg(int argc, char **argv, int i)
{
        return argc > i ? argv[i] : NULL;
}

static int a_read_secret(int argc, char **argv)
{
        const char *secret = need_arg(argc, argv, 2);
        if (!secret)
                return probe_error("usage: read-secret HOST_PATH");
        struct notes n = {0};
        bool ok = try_read(&n, "open by its host path", secret);
        char parent[PATH_MAX];
        snprintf(parent, sizeof(parent), "%s", secret);
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent) {
                *slash = '\0';
                struct stat s;
                if (stat(parent, &s) == 0) {
                        note(&n, "its directory exists in the view");
                        ok = false;
                } else {
                        note(&n, "stat of its directory: %s", en(errno));
                }
        }
        struct stat s;
        if (lstat(secret, &s) == 0) {
                note(&n, "lstat found it");
                ok = false;
        }
        return finish(&n, ok);
}

static int a_proc1_root(int argc, char **argv)
{
        const char *secret = need_arg(argc, argv, 2);
        if (!secret)
                return probe_error("usage: proc1-root HOST_PATH");
        struct notes n = {0};
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "/proc/1/root%s", secret);
        bool ok = try_read(&n, "/proc/1/root/<path>", p);
        snprintf(p, sizeof(p), "/proc/1/root/../../../../..%s", secret);
        ok &= try_read(&n, "/proc/1/root/../../..<path>", p);
        snprintf(p, sizeof(p), "/proc/1/task/1/root/..%s", secret);
        ok &= try_read(&n, "/proc/1/task/1/root/..<path>", p);
        return finish(&n, ok);
}

static int a_proc_self_root(int argc, char **argv)
{
        const char *secret = need_arg(argc, argv, 2);
        if (!secret)
                return probe_error("usage: proc-self-root HOST_PATH");
        struct notes n = {0};
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "/proc/self/root/../..%s", secret);
        bool ok = try_read(&n, "/proc/self/root/../../<path>", p);
        snprintf(p, sizeof(p), "/proc/thread-self/root/../..%s", secret);
        ok &= try_read(&n, "/proc/thread-self/root/../../<path>", p);
        snprintf(p, sizeof(p), "/dev/fd/../root/../..%s", secret);
        ok &= try_read(&n, "/dev/fd/../root/../..<path>", p);
        /* a pid we find by listing, not /proc/self */
        snprintf(p, sizeof(p), "/proc/%d/root/../..%s", (int)getpid(), secret);
        ok &= try_read(&n, "/proc/<ourpid>/root/../..<path>", p);
        return finish(&n, ok);
}

static int a_proc1_cwd(int argc, char **argv)
{
        const char *secret = need_arg(argc, argv, 2);
        if (!secret)
                return probe_error("usage: proc1-cwd HOST_PATH");
        struct notes n = {0};
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "/proc/1/cwd%s", secret);
        bool ok = try_read(&n, "/proc/1/cwd/<path>", p);
        snprintf(p, sizeof(p), "/proc/1/cwd/../../../..%s", secret);
        ok &= try_read(&n, "/proc/1/cwd/../../..<path>", p);
        snprintf(p, sizeof(p), "/proc/self/cwd/../../../..%s", secret);
        ok &= try_read(&n, "/proc/self/cwd/../../..<path>", p);
        return finish(&n, ok);
}

static int a_symlink_tmp(int argc, char **argv)
{
        const char *secret = need_arg(argc, argv, 2);
        if (!secret)
                return probe_error("usage: symlink-tmp HOST_PATH");
        struct notes n = {0};
        unlink("/tmp/esc-link1");
        unlink("/tmp/esc-link2");
        if (symlink(secret, "/tmp/esc-link1") < 0)
                return probe_error("symlink in /tmp: %s", en(errno));
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "/proc/1/root/../../../..%s", secret);
        if (symlink(p, "/tmp/esc-link2") < 0)
                return probe_error("symlink in /tmp: %s", en(errno));
        bool ok = try_read(&n, "/tmp/link -> host path", "/tmp/esc-link1");
        ok &= try_read(&n, "/tmp/link -> /proc/1/root/../..<path>", "/tmp/esc-link2");
        /* relative to a directory fd, and a link to a link */
        int dfd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
                int fd = openat(dfd, "esc-link1", O_RDONLY | O_CLOEXEC);
                if (fd >= 0) {
                        note(&n, "openat(/tmp fd, link) opened it");
                        ok = false;
                        close(fd);
                } else {
                        note(&n, "openat(/tmp fd, link): %s", en(errno));
                }
                close(dfd);
        }
        return finish(&n, ok);
}

static int a_dotdot_tmp(int argc, char **argv)
{
        const char *secret = need_arg(argc, argv, 2);
        if (!secret)
                return probe_error("usage: dotdot-tmp HOST_PATH");
        struct notes n = {0};
        if (chdir("/tmp") < 0)
                return probe_error("chdir /tmp: %s", en(errno));
        char p[PATH_MAX];
        snprintf(p, sizeof(p), "../../../../../../../..%s", secret);
        bool ok = try_read(&n, "cwd /tmp, ../../..<path>", p);
        int dfd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
                int fd = openat(dfd, p, O_RDONLY | O_CLOEXEC);
                if (fd >= 0) {
                        note(&n, "openat(/tmp fd, ../..<path>) opened it");
                        ok = false;
                        close(fd);
                } else {
                        note(&n, "openat(/tmp fd, ../..<path>): %s", en(errno));
                }
                close(dfd);
        }
        /* a directory fd of "/" and ".." from it */
        int rfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rfd >= 0) {
                int fd = openat(rfd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (fd >= 0) {
                        struct stat a, b;
                        fstat(fd, &a);
                        fstat(rfd, &b);
                        if (a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
                                note(&n, "\"..\" of the root is another directory");
                                ok = false;
                        } else {
                                note(&n, "\"..\" of / is /");
                        }
                        close(fd);
                }
                close(rfd);
        }
        return finish(&n, ok);
}

static long openat2_call(int dfd, const char *path, uint64_t flags, uint64_t resolve)
{
        struct open_how how = {.flags = flags, .resolve = resolve};
        return syscall(__NR_openat2, dfd, path, &how, sizeof(how));
}

static int a_openat2(int argc, char **argv)
{
        const char *secret = need_arg(argc, argv, 2);
        if (!secret)
                return probe_error("usage: openat2 HOST_PATH");
        struct notes n = {0};
        bool ok = true;
        char p[PATH_MAX];
        struct {
                const char *label;
                const char *dir;
                const char *prefix; /* put before the host path */
                uint64_t resolve;
        } tries[] = {
                {"IN_ROOT from AT_FDCWD", NULL, "", RESOLVE_IN_ROOT},
                {"IN_ROOT from /tmp, ../..", "/tmp", "../../../..", RESOLVE_IN_ROOT},
                {"no resolve flags from /tmp, ../..", "/tmp", "../../../..", 0},
                {"from /proc/1, root/../..", "/proc/1", "root/../../..", 0},
                {"IN_ROOT from /proc/1/root", "/proc/1/root", "", RESOLVE_IN_ROOT},
                {"BENEATH from /, ../..", "/", "../..", RESOLVE_BENEATH},
        };
        for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
                int dfd = AT_FDCWD;
                if (tries[i].dir) {
                        dfd = open(tries[i].dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                        if (dfd < 0) {
                                note(&n, "%s: open dir: %s", tries[i].label, en(errno));
                                continue;
                        }
                }
                snprintf(p, sizeof(p), "%s%s", tries[i].prefix, secret);
                long fd = openat2_call(dfd, p, O_RDONLY | O_CLOEXEC, tries[i].resolve);
                if (fd >= 0) {
                        note(&n, "%s: opened it", tries[i].label);
                        ok = false;
                        close((int)fd);
                } else {
                        note(&n, "%s: %s", tries[i].label, en(errno));
                }
                if (dfd >= 0)
                        close(dfd);
        }
        /* an open_how larger than the kernel's, with a non-zero tail */
        struct {
                struct open_how how;
                uint64_t extra;
        } big = {.how = {.flags = O_RDONLY}, .extra = 1};
        long fd = syscall(__NR_openat2, AT_FDCWD, secret, &big, sizeof(big));
        if (fd >= 0) {
                note(&n, "oversized open_how: opened it");
                ok = false;
                close((int)fd);
        } else {
                note(&n, "oversized open_how: %s", en(errno));
        }
        return finish(&n, ok);
}

static int a_kcore(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        static const char *const files[] = {"/proc/kcore",      "/proc/kallsyms",    "/proc/kmsg",
                                            "/proc/keys",       "/proc/timer_list",  "/proc/sched_debug",
                                            "/proc/kpageflags", "/proc/vmallocinfo", "/proc/slabinfo"};
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                int fd = open(files[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
                if (fd < 0) {
                        note(&n, "%s: %s", files[i], en(errno));
                        continue;
                }
                char buf[256];
                ssize_t k = read(fd, buf, sizeof(buf));
                close(fd);
                if (k > 0) {
                        note(&n, "%s has content", files[i]);
                        ok = false;
                } else {
                        note(&n, "%s: %s", files[i], k == 0 ? "empty" : en(errno));
                }
        }
        return finish(&n, ok);
}

static int a_kallsyms(int argc, char **argv)
{
        char buf[4096];
        ssize_t k = read_file("/proc/kallsyms", buf, sizeof(buf));
        if (k > 0) {
                bool addrs = false;
                for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
                        if (strtoull(line, NULL, 16) != 0)
                                addrs = true;
                return through("/proc/kallsyms has %zd+ bytes of symbols%s", k, addrs ? " with kernel addresses" : "");
        }
        return blocked("/proc/kallsyms: %s", k == 0 ? "empty (masked)" : en((int)-k));
}

static int a_sysrq(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        /* opened, never written: a real write could reboot the host */
        int fd = open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
                struct stat st;
                fstat(fd, &st);
                /* the mask is an empty regular file; the real one is size 0 too,
                 * so tell them apart by the file system */
                struct statvfs v;
                fstatvfs(fd, &v);
                note(&n, "/proc/sysrq-trigger opened for writing");
                ok = false;
                close(fd);
        } else {
                note(&n, "open /proc/sysrq-trigger O_WRONLY: %s", en(errno));
        }
        fd = open("/proc/sys/kernel/sysrq", O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
                note(&n, "/proc/sys/kernel/sysrq opened for writing");
                ok = false;
                close(fd);
        } else {
                note(&n, "/proc/sys/kernel/sysrq O_WRONLY: %s", en(errno));
        }
        return finish(&n, ok);
}

static int a_sys(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        static const char *const paths[] = {"/sys", "/sys/kernel", "/sys/fs/cgroup", "/sys/firmware",
                                            "/proc/sys/fs/binfmt_misc/register"};
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
                struct stat st;
                if (stat(paths[i], &st) == 0) {
                        if (S_ISDIR(st.st_mode)) {
                                DIR *d = opendir(paths[i]);
                                int entries = 0;
                                struct dirent *de;
                                while (d && (de = readdir(d)))
                                        entries += de->d_name[0] != '.';
                                if (d)
                                        closedir(d);
                                if (entries > 0) {
                                        note(&n, "%s exists with %d entries", paths[i], entries);
                                        ok = false;
                                        continue;
                                }
                        } else if (i == 4) {
                                int fd = open(paths[i], O_WRONLY | O_CLOEXEC);
                                if (fd >= 0) {
                                        note(&n, "%s writable", paths[i]);
                                        ok = false;
                                        close(fd);
                                        continue;
                                }
                        } else {
                                note(&n, "%s exists", paths[i]);
                                ok = false;
                                continue;
                        }
                        note(&n, "%s: present but empty/unwritable", paths[i]);
                } else {
                        note(&n, "%s: %s", paths[i], en(errno));
                }
        }
        /* mounting sysfs ourselves */
        mkdir("/tmp/sysmnt", 0755);
        if (mount("sysfs", "/tmp/sysmnt", "sysfs", 0, NULL) == 0) {
                note(&n, "mounted sysfs");
                ok = false;
        } else {
                note(&n, "mount sysfs: %s", en(errno));
        }
        return finish(&n, ok);
}

static int a_proc_sys_write(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        static const char *const paths[] = {"/proc/sys/kernel/hostname", "/proc/sys/kernel/core_pattern",
                                            "/proc/sys/kernel/modprobe", "/proc/sys/vm/drop_caches",
                                            "/proc/sys/net/ipv4/ip_forward"};
        for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
                /* opened for writing, nothing written: the open is what must fail */
                int fd = open(paths[i], O_WRONLY | O_CLOEXEC);
                if (fd >= 0) {
                        note(&n, "%s opened for writing", paths[i]);
                        ok = false;
                        close(fd);
                } else {
                        note(&n, "%s: %s", paths[i], en(errno));
                }
        }
        return finish(&n, ok);
}

static int a_dev_nodes(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        static const char *const nodes[] = {"/dev/mem",       "/dev/kmem",      "/dev/port",       "/dev/sda",
                                            "/dev/vda",       "/dev/xvda",      "/dev/nvme0n1",    "/dev/kvm",
                                            "/dev/fuse",      "/dev/net/tun",   "/dev/console",    "/dev/tty0",
                                            "/dev/loop0",     "/dev/dm-0",      "/dev/vsock",      "/dev/vhost-vsock",
                                            "/dev/vhost-net", "/dev/cpu/0/msr", "/dev/userfaultfd"};
        int missing = 0;
        for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
                struct stat st;
                if (stat(nodes[i], &st) < 0) {
                        missing++;
                        continue;
                }
                int fd = open(nodes[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
                note(&n, "%s exists (open: %s)", nodes[i], fd >= 0 ? "OK" : en(errno));
                if (fd >= 0)
                        close(fd);
                ok = false;
        }
        note(&n, "%d of %zu host device nodes absent", missing, sizeof(nodes) / sizeof(nodes[0]));
        DIR *d = opendir("/dev");
        if (d) {
                struct dirent *de;
                char list[256] = "";
                while ((de = readdir(d))) {
                        if (de->d_name[0] == '.')
                                continue;
                        if (strlen(list) + strlen(de->d_name) + 2 < sizeof(list)) {
                                strcat(list, " ");
                                strcat(list, de->d_name);
                        }
                }
                closedir(d);
                note(&n, "/dev:%s", list);
        }
        return finish(&n, ok);
}

static int a_mknod(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        unlink("/tmp/esc-sda");
        unlink("/tmp/esc-mem");
        if (mknod("/tmp/esc-sda", S_IFBLK | 0600, makedev(8, 0)) == 0) {
                int fd = open("/tmp/esc-sda", O_RDONLY | O_CLOEXEC);
                note(&n, "mknod block 8:0 in /tmp succeeded (open: %s)", fd >= 0 ? "OK" : en(errno));
                if (fd >= 0)
                        close(fd);
                ok = false;
        } else {
                note(&n, "mknod block 8:0: %s", en(errno));
        }
        if (mknod("/tmp/esc-mem", S_IFCHR | 0600, makedev(1, 1)) == 0) {
                note(&n, "mknod char 1:1 (/dev/mem) in /tmp succeeded");
                ok = false;
        } else {
                note(&n, "mknod char 1:1: %s", en(errno));
        }
        if (mknod("/dev/shm/esc-sda", S_IFBLK | 0600, makedev(8, 0)) == 0) {
                note(&n, "mknod block in /dev/shm succeeded");
                ok = false;
        } else {
                note(&n, "mknod in /dev/shm: %s", en(errno));
        }
        return finish(&n, ok);
}

/* ------------------------------------------------------------------ */
/* writes to read-only places */

static bool try_create(struct notes *n, const char *path)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd >= 0) {
                close(fd);
                unlink(path);
                note(n, "created %s (removed again)", path);
                return false;
        }
        note(n, "create %s: %s", path, en(errno));
        return true;
}

static int a_write_usr(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = try_create(&n, "/usr/bin/cordon-escape-x");
        ok &= try_create(&n, "/usr/lib/cordon-escape-x");
        ok &= step_fails(&n, "mkdir /usr/cordon-escape-d", mkdir("/usr/cordon-escape-d", 0755));
        ok &= step_fails(&n, "utimes /usr/bin/env", utimes("/usr/bin/env", NULL));
        /* a read-only fd reopened read-write through /proc/self/fd */
        int pfd = open("/usr/bin/env", O_RDONLY | O_CLOEXEC);
        if (pfd >= 0) {
                char p[64];
                snprintf(p, sizeof(p), "/proc/self/fd/%d", pfd);
                int fd = open(p, O_RDWR | O_CLOEXEC);
                if (fd >= 0) {
                        note(&n, "reopened /usr/bin/env read-write via /proc/self/fd");
                        ok = false;
                        close(fd);
                } else {
                        note(&n, "reopen /usr/bin/env O_RDWR via /proc/self/fd: %s", en(errno));
                }
                close(pfd);
        }
        return finish(&n, ok);
}

static int a_write_etc(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        /* opened for appending, nothing written */
        int fd = open("/etc/passwd", O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd >= 0) {
                note(&n, "/etc/passwd opened for writing");
                ok = false;
                close(fd);
        } else {
                note(&n, "open /etc/passwd O_WRONLY: %s", en(errno));
        }
        ok &= try_create(&n, "/etc/cordon-escape-x");
        ok &= step_fails(&n, "rename /etc/hostname", rename("/etc/hostname", "/etc/hostname.x"));
        ok &= step_fails(&n, "link /etc/passwd -> /tmp", link("/etc/passwd", "/tmp/esc-passwd"));
        ok &= step_fails(&n, "chmod /etc/passwd", chmod("/etc/passwd", 0666));
        return finish(&n, ok);
}

static int a_write_root(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = try_create(&n, "/x");
        ok &= step_fails(&n, "mkdir /x", mkdir("/x", 0755));
        ok &= step_fails(&n, "symlink /x", symlink("/tmp", "/x"));
        ok &= step_fails(&n, "rename /tmp -> /x", rename("/tmp", "/x"));
        if (access("/helpers", F_OK) == 0)
                ok &= try_create(&n, "/helpers/cordon-escape-x");
        return finish(&n, ok);
}

/* ------------------------------------------------------------------ */
/* leaks from the host */

static int a_fd_leak(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        int open_fds = 0;
        for (int fd = 3; fd < 1024; fd++) {
                if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) {
                        char p[64], target[256] = "?";
                        snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
                        ssize_t k = readlink(p, target, sizeof(target) - 1);
                        if (k >= 0)
                                target[k] = '\0';
                        if (open_fds++ < 6)
                                note(&n, "fd %d is open (%s)", fd, target);
                        ok = false;
                }
        }
        /* and beyond 1024, cheaply: the kernel's next free fd */
        int nfd = fcntl(0, F_DUPFD_CLOEXEC, 1024);
        if (nfd > 1024) {
                note(&n, "fd 1024 is open");
                ok = false;
        }
        if (nfd >= 0)
                close(nfd);
        if (ok)
                note(&n, "fds 3..1024 are all EBADF");
        return finish(&n, ok);
}

static bool environ_has(const char *path, const char *name, ssize_t *ret_len)
{
        char buf[65536];
        ssize_t k = read_file(path, buf, sizeof(buf));
        *ret_len = k;
        if (k <= 0)
                return false;
        size_t nl = strlen(name);
        for (ssize_t i = 0; i < k;) {
                const char *e = buf + i;
                if (strncmp(e, name, nl) == 0 && e[nl] == '=')
                        return true;
                i += (ssize_t)strnlen(e, (size_t)(k - i)) + 1;
        }
        return false;
}

static int a_env_leak(int argc, char **argv)
{
        const char *name = need_arg(argc, argv, 2);
        if (!name)
                return probe_error("usage: env-leak VARNAME");
        struct notes n = {0};
        bool ok = true;
        if (getenv(name)) {
                note(&n, "getenv(%s) is set", name);
                ok = false;
        } else {
                note(&n, "getenv(%s) is NULL", name);
        }
        ssize_t k;
        if (environ_has("/proc/self/environ", name, &k)) {
                note(&n, "/proc/self/environ has it");
                ok = false;
        } else {
                note(&n, "/proc/self/environ: %s", k < 0 ? en((int)-k) : "lacks it");
        }
        /* pid 1 is a fork of the host-side cordon, without an exec: its
         * environment block is cordon's own host environment */
        if (environ_has("/proc/1/environ", name, &k)) {
                note(&n, "/proc/1/environ (init, a fork of host cordon) has it");
                ok = false;
        } else if (k > 0) {
                note(&n, "/proc/1/environ readable (%zd bytes), lacks it", k);
        } else {
                note(&n, "/proc/1/environ: %s", k == 0 ? "empty" : en((int)-k));
        }
        char st[8192];
        DIR *d = opendir("/proc");
        struct dirent *de;
        while (d && (de = readdir(d))) {
                if (de->d_name[0] < '1' || de->d_name[0] > '9' || strcmp(de->d_name, "1") == 0)
                        continue;
                char p[300];
                snprintf(p, sizeof(p), "/proc/%s/environ", de->d_name);
                if (environ_has(p, name, &k)) {
                        note(&n, "%s has it", p);
                        ok = false;
                }
        }
        if (d)
                closedir(d);
        (void)st;
        return finish(&n, ok);
}

/* The runner starts cordon with stdin opened on the host directory that
 * holds the secret. stdin/stdout/stderr cross into the sandbox by design;
 * a directory among them must not become a way out of the view. */
static int a_stdio_dir(int argc, char **argv)
{
        struct stat st;
        if (fstat(0, &st) < 0)
                return blocked("stdin: %s", en(errno));
        if (!S_ISDIR(st.st_mode))
                return blocked("stdin is not the host directory (mode 0%o)", (unsigned)(st.st_mode & S_IFMT));
        struct notes n = {0};
        bool ok = true;
        note(&n, "stdin is a host directory");
        int fd = openat(0, "secret", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                char buf[256];
                ssize_t k = read_fd_all(fd, buf, sizeof(buf));
                close(fd);
                note(&n, "openat(0, \"secret\") read %zd bytes of the host secret", k);
                ok = false;
        } else {
                note(&n, "openat(0, \"secret\"): %s", en(errno));
        }
        fd = openat(0, "../../../../etc/hostname", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                char buf[256];
                ssize_t k = read_fd_all(fd, buf, sizeof(buf));
                close(fd);
                note(&n, "openat(0, ../../../../etc/hostname) read the host's (%zd bytes)", k);
                ok = false;
        } else {
                note(&n, "openat(0, ../../../../etc/hostname): %s", en(errno));
        }
        int up = openat(0, "../../../..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (up >= 0) {
                DIR *d = fdopendir(up);
                int entries = 0;
                struct dirent *de;
                while (d && (de = readdir(d)))
                        entries += de->d_name[0] != '.';
                if (d)
                        closedir(d);
                else
                        close(up);
                note(&n, "openat(0, ../../../..) listed the host's root (%d entries)", entries);
                ok = false;
        }
        /* natively: a cwd outside the view */
        if (fchdir(0) == 0) {
                struct stat s2;
                if (stat("secret", &s2) == 0) {
                        note(&n, "fchdir(0) put our cwd outside the view (stat secret works)");
                        ok = false;
                }
        } else {
                note(&n, "fchdir(0): %s", en(errno));
        }
        return finish(&n, ok);
}

/* ------------------------------------------------------------------ */
/* host processes */

static int count_pids(char *list, size_t size)
{
        DIR *d = opendir("/proc");
        if (!d)
                return -errno;
        int count = 0;
        struct dirent *de;
        list[0] = '\0';
        while ((de = readdir(d))) {
                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                count++;
                if (strlen(list) + strlen(de->d_name) + 2 < size) {
                        strcat(list, " ");
                        strcat(list, de->d_name);
                }
        }
        closedir(d);
        return count;
}

static int a_kill_host(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        for (int i = 2; i < argc; i++) {
                pid_t p = (pid_t)atoi(argv[i]);
                if (p <= 1)
                        continue;
                if (kill(p, 0) == 0) {
                        char path[64];
                        snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)p);
                        char cmd[256];
                        ssize_t k = read_file(path, cmd, sizeof(cmd));
                        note(&n, "kill(%d, 0) found a process (%s)", (int)p, k > 0 ? cmd : "?");
                        ok = false;
                } else {
                        note(&n, "kill(host pid %d, 0): %s", (int)p, en(errno));
                }
        }
        /* signal 0 only: finds every process we could signal */
        if (kill(-1, 0) == 0) {
                char list[256];
                int c = count_pids(list, sizeof(list));
                note(&n, "kill(-1, 0) found processes to signal (sandbox pids:%s)", list);
                /* only the sandbox's own processes (init is exempt, we are alone) */
                if (c > 3)
                        ok = false;
        } else {
                note(&n, "kill(-1, 0): %s", en(errno));
        }
        return finish(&n, ok);
}

static int a_proc_pids(int argc, char **argv)
{
        char list[256];
        int c = count_pids(list, sizeof(list));
        if (c < 0)
                return probe_error("opendir /proc: %s", en(-c));
        if (c > 4)
                return through("/proc shows %d processes:%s", c, list);
        return blocked("/proc shows %d processes:%s", c, list);
}

static int a_proc1_cmdline(int argc, char **argv)
{
        char buf[4096];
        ssize_t k = read_file("/proc/1/cmdline", buf, sizeof(buf));
        if (k <= 0)
                return blocked("/proc/1/cmdline: %s", k == 0 ? "empty" : en((int)-k));
        const char *argv0 = buf;
        const char *base = strrchr(argv0, '/') ? strrchr(argv0, '/') + 1 : argv0;
        if (strstr(base, "cordon"))
                return blocked("pid 1 is cordon's init (argv[0] %s)", base);
        return through("pid 1 is %s, not cordon's init", base);
}

static int a_sysv_ipc(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        if (argc < 4)
                return probe_error("usage: sysv-ipc SHMID SHMKEY");
        int id = atoi(argv[2]);
        key_t key = (key_t)strtol(argv[3], NULL, 0);
        struct shmid_ds ds;
        if (shmctl(id, IPC_STAT, &ds) == 0) {
                note(&n, "shmctl(host shm id %d, IPC_STAT) found it", id);
                ok = false;
        } else {
                note(&n, "shmctl(host shm id %d): %s", id, en(errno));
        }
        int got = shmget(key, 0, 0);
        if (got >= 0) {
                note(&n, "shmget(host key 0x%x) found it", (unsigned)key);
                ok = false;
        } else {
                note(&n, "shmget(host key): %s", en(errno));
        }
        void *at = shmat(id, NULL, SHM_RDONLY);
        if (at != (void *)-1) {
                note(&n, "shmat(host shm) attached");
                shmdt(at);
                ok = false;
        } else {
                note(&n, "shmat: %s", en(errno));
        }
        return finish(&n, ok);
}

/* ------------------------------------------------------------------ */
/* network */

/* Non-blocking connect with a deadline; 0 connected, else -errno. */
static int connect_timeout(int fd, const struct sockaddr *sa, socklen_t len, int ms)
{
        int fl = fcntl(fd, F_GETFL);
        fcntl(fd, F_SETFL, fl | O_NONBLOCK);
        if (connect(fd, sa, len) == 0)
                return 0;
        if (errno != EINPROGRESS)
                return -errno;
        struct pollfd p = {fd, POLLOUT, 0};
        int r = poll(&p, 1, ms);
        if (r == 0)
                return -ETIMEDOUT;
        if (r < 0)
                return -errno;
        int err = 0;
        socklen_t el = sizeof(err);
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el);
        return -err;
}

static int a_net_tcp_host(int argc, char **argv)
{
        if (argc < 3)
                return probe_error("usage: net-tcp-host PORT");
        int port = atoi(argv[2]);
        struct notes n = {0};
        bool ok = true;
        struct sockaddr_in a4 = {
                .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return blocked("socket(AF_INET): %s", en(errno));
        int r = connect_timeout(fd, (struct sockaddr *)&a4, sizeof(a4), 2000);
        close(fd);
        if (r == 0) {
                note(&n, "connected to the host's 127.0.0.1:%d", port);
                ok = false;
        } else {
                note(&n, "connect 127.0.0.1:%d: %s", port, en(-r));
        }
        struct sockaddr_in6 a6 = {.sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port)};
        /* ::ffff:127.0.0.1 */
        a6.sin6_addr.s6_addr[10] = 0xff;
        a6.sin6_addr.s6_addr[11] = 0xff;
        a6.sin6_addr.s6_addr[12] = 127;
        a6.sin6_addr.s6_addr[15] = 1;
        fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0) {
                r = connect_timeout(fd, (struct sockaddr *)&a6, sizeof(a6), 2000);
                close(fd);
                if (r == 0) {
                        note(&n, "connected to ::ffff:127.0.0.1:%d", port);
                        ok = false;
                } else {
                        note(&n, "connect [::ffff:127.0.0.1]:%d: %s", port, en(-r));
                }
                /* ::1 */
                memset(&a6.sin6_addr, 0, sizeof(a6.sin6_addr));
                a6.sin6_addr.s6_addr[15] = 1;
                fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd >= 0) {
                        r = connect_timeout(fd, (struct sockaddr *)&a6, sizeof(a6), 2000);
                        close(fd);
                        if (r == 0) {
                                note(&n, "connected to [::1]:%d", port);
                                ok = false;
                        } else {
                                note(&n, "connect [::1]:%d: %s", port, en(-r));
                        }
                }
        }
        /* the interfaces the sandbox sees */
        char buf[4096], path[64];
        snprintf(path, sizeof(path), "/proc/%d/net/dev", (int)getpid());
        ssize_t k = read_file(path, buf, sizeof(buf));
        if (k > 0) {
                int ifs = 0;
                char names[128] = "";
                for (char *line = strchr(buf, '\n'); line && (line = strchr(line + 1, '\n'));) {
                        char *c = strchr(line + 1, ':');
                        if (!c)
                                break;
                        char *s = line + 1;
                        while (*s == ' ')
                                s++;
                        ifs++;
                        if (strlen(names) + (size_t)(c - s) + 2 < sizeof(names))
                                snprintf(names + strlen(names), sizeof(names) - strlen(names), " %.*s", (int)(c - s),
                                         s);
                }
                note(&n, "interfaces:%s", names);
                if (ifs > 1)
                        ok = false;
        }
        return finish(&n, ok);
}

static int a_net_abstract(int argc, char **argv)
{
        if (argc < 3)
                return probe_error("usage: net-abstract NAME");
        const char *name = argv[2];
        struct sockaddr_un un = {.sun_family = AF_UNIX};
        size_t nl = strlen(name);
        if (nl + 1 > sizeof(un.sun_path))
                return probe_error("name too long");
        memcpy(un.sun_path + 1, name, nl);
        socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + nl);
        struct notes n = {0};
        bool ok = true;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return probe_error("socket(AF_UNIX): %s", en(errno));
        int r = connect_timeout(fd, (struct sockaddr *)&un, len, 2000);
        close(fd);
        if (r == 0) {
                note(&n, "connected to the host's abstract socket @%s", name);
                ok = false;
        } else {
                note(&n, "connect @%s: %s", name, en(-r));
        }
        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd >= 0) {
                if (sendto(fd, "x", 1, MSG_DONTWAIT, (struct sockaddr *)&un, len) == 1) {
                        note(&n, "sendto @%s delivered", name);
                        ok = false;
                } else {
                        note(&n, "sendto @%s: %s", name, en(errno));
                }
                close(fd);
        }
        /* the host's abstract sockets, as listed by the kernel */
        char buf[65536], path[64];
        snprintf(path, sizeof(path), "/proc/%d/net/unix", (int)getpid());
        ssize_t k = read_file(path, buf, sizeof(buf));
        if (k > 0 && strstr(buf, name)) {
                note(&n, "/proc/net/unix lists @%s", name);
                ok = false;
        }
        return finish(&n, ok);
}

/* Unix sockets by path: the runner's own (outside the view) and the host's
 * well-known daemons. Connecting to any of them is a way out. */
static int a_unix_path(int argc, char **argv)
{
        static const char *const known[] = {
                "/run/dbus/system_bus_socket",
                "/var/run/dbus/system_bus_socket",
                "/run/systemd/private",
                "/run/systemd/journal/stdout",
                "/run/systemd/notify",
                "/var/run/docker.sock",
                "/run/docker.sock",
                "/run/containerd/containerd.sock",
                "/run/podman/podman.sock",
                "/var/run/crio/crio.sock",
                "/tmp/.X11-unix/X0",
                "/run/user/0/bus",
                "/var/lib/lxd/unix.socket",
                "/run/snapd.socket",
        };
        struct notes n = {0};
        bool ok = true;
        int absent = 0;
        for (int i = 1; i < argc + (int)(sizeof(known) / sizeof(known[0])); i++) {
                const char *p;
                if (i < argc) {
                        if (i == 1)
                                continue;
                        p = argv[i];
                } else {
                        p = known[i - argc];
                }
                struct sockaddr_un un = {.sun_family = AF_UNIX};
                if (strlen(p) >= sizeof(un.sun_path))
                        continue;
                strcpy(un.sun_path, p);
                int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd < 0)
                        return probe_error("socket(AF_UNIX): %s", en(errno));
                int r = connect_timeout(fd, (struct sockaddr *)&un, sizeof(un), 2000);
                close(fd);
                if (r == 0) {
                        note(&n, "connected to %s", p);
                        ok = false;
                } else if (r == -ENOENT && i >= argc) {
                        absent++;
                } else {
                        note(&n, "%s: %s", p, en(-r));
                }
        }
        note(&n, "%d well-known host sockets absent", absent);
        return finish(&n, ok);
}

static int a_af_packet(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = step_fails(&n, "socket(AF_PACKET, SOCK_RAW)", socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)));
        ok &= step_fails(&n, "socket(AF_PACKET, SOCK_DGRAM)", socket(AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL)));
        ok &= step_fails(&n, "socket(AF_PACKET|1<<32)",
                         syscall(SYS_socket, (1UL << 32) | AF_PACKET, SOCK_RAW, htons(ETH_P_ALL)));
        return finish(&n, ok);
}

static int a_af_vsock(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        long fd = syscall(SYS_socket, AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                note(&n, "socket(AF_VSOCK): %s", en(errno));
                fd = syscall(SYS_socket, (1UL << 32) | AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd < 0)
                        note(&n, "socket(AF_VSOCK|1<<32): %s", en(errno));
        }
        if (fd >= 0) {
                note(&n, "created an AF_VSOCK socket");
                ok = false;
                struct sockaddr_vm vm = {.svm_family = AF_VSOCK, .svm_cid = VMADDR_CID_HOST, .svm_port = 22};
                int r = connect_timeout((int)fd, (struct sockaddr *)&vm, sizeof(vm), 2000);
                note(&n, "connect to CID 2 (host) port 22: %s", r == 0 ? "CONNECTED" : en(-r));
                close((int)fd);
        }
        return finish(&n, ok);
}

static int a_netlink_audit(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = step_fails(&n, "socket(AF_NETLINK, NETLINK_AUDIT)",
                             socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT));
        ok &= step_fails(&n, "socket(AF_NETLINK, NETLINK_KOBJECT_UEVENT)",
                         socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT));
        ok &= step_fails(&n, "socket(AF_NETLINK, protocol NETLINK_AUDIT|1<<32)",
                         syscall(SYS_socket, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, (1UL << 32) | NETLINK_AUDIT));
        return finish(&n, ok);
}

/* IPv4 and IPv6 sockets of kinds other than TCP, UDP and ping: kernel
 * code most programs never reach, and on a host with modules one socket
 * loads its module host-wide (DCCP's and SCTP's have had privilege
 * escalations). Each must fail; TCP and UDP must still be made. */
static int a_socket_kinds(int argc, char **argv)
{
        (void)argc;
        (void)argv;
        struct notes n = {0};
        bool ok = true;
        static const struct {
                const char *name;
                int family, type;
                long protocol;
        } tries[] = {
                {"SCTP stream", AF_INET, SOCK_STREAM, 132},
                {"SCTP seqpacket", AF_INET, SOCK_SEQPACKET, 132},
                {"SCTP over IPv6", AF_INET6, SOCK_STREAM, 132},
                {"DCCP", AF_INET, 6 /* SOCK_DCCP */, 33},
                {"DCCP over IPv6", AF_INET6, 6, 33},
                {"MPTCP", AF_INET, SOCK_STREAM, 262},
                {"MPTCP over IPv6", AF_INET6, SOCK_STREAM | SOCK_NONBLOCK, 262},
                {"SMC", AF_INET, SOCK_STREAM, 256},
                {"L2TP/IP", AF_INET, SOCK_DGRAM, 115},
                {"UDP-Lite", AF_INET, SOCK_DGRAM, 136},
                {"UDP-Lite over IPv6", AF_INET6, SOCK_DGRAM, 136},
                {"RDM", AF_INET, SOCK_RDM, 0},
                {"TCP|1<<32 protocol", AF_INET, SOCK_STREAM, (1L << 32) | 132},
        };
        for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
                long fd = syscall(SYS_socket, tries[i].family, tries[i].type | SOCK_CLOEXEC, tries[i].protocol);
                if (fd >= 0) {
                        note(&n, "%s: MADE", tries[i].name);
                        ok = false;
                        close((int)fd);
                } else
                        note(&n, "%s: %s", tries[i].name, en(errno));
        }
        int tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
        int udp = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (tcp < 0 || udp < 0)
                return probe_error("TCP or UDP socket refused: %s", en(errno));
        close(tcp);
        close(udp);
        return finish(&n, ok);
}

/* The filter compares the family as 64 bits; socket(2) reads an int. */
static int a_socket_highbits(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        static const struct {
                const char *name;
                int family, type, protocol;
        } tries[] = {
                {"NETLINK_AUDIT", AF_NETLINK, SOCK_RAW, NETLINK_AUDIT},
                {"NETLINK_KOBJECT_UEVENT", AF_NETLINK, SOCK_RAW, NETLINK_KOBJECT_UEVENT},
                {"NETLINK_GENERIC", AF_NETLINK, SOCK_RAW, NETLINK_GENERIC},
                {"NETLINK_SOCK_DIAG", AF_NETLINK, SOCK_RAW, NETLINK_SOCK_DIAG},
                {"NETLINK_NETFILTER", AF_NETLINK, SOCK_RAW, NETLINK_NETFILTER},
                {"NETLINK_XFRM", AF_NETLINK, SOCK_RAW, NETLINK_XFRM},
                {"AF_KEY", AF_KEY, SOCK_RAW, 2},
                {"AF_APPLETALK", AF_APPLETALK, SOCK_DGRAM, 0},
                {"AF_X25", AF_X25, SOCK_SEQPACKET, 0},
                {"AF_AX25", AF_AX25, SOCK_SEQPACKET, 0},
                {"raw IPv4", AF_INET, SOCK_RAW, IPPROTO_ICMP},
                {"raw IPv6", AF_INET6, SOCK_RAW, IPPROTO_ICMPV6},
        };
        char made[400] = "";
        for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]); i++) {
                long fd = syscall(SYS_socket, (1UL << 32) | (unsigned)tries[i].family, tries[i].type | SOCK_CLOEXEC,
                                  tries[i].protocol);
                if (fd >= 0) {
                        ok = false;
                        if (strlen(made) + strlen(tries[i].name) + 3 < sizeof(made)) {
                                strcat(made, made[0] ? ", " : "");
                                strcat(made, tries[i].name);
                        }
                        close((int)fd);
                } else {
                        /* errno tells which layer refused: the filter's EAFNOSUPPORT/EPERM or the kernel's */
                        note(&n, "%s: %s", tries[i].name, en(errno));
                }
        }
        if (!ok) {
                struct notes m = {0};
                note(&m, "family|1<<32 passed the filter and created: %s", made);
                note(&m, "%s", n.text);
                return through("%s", m.text);
        }
        return finish(&n, ok);
}

static int a_raw_socket(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = step_fails(&n, "socket(AF_INET, SOCK_RAW, ICMP)", socket(AF_INET, SOCK_RAW, IPPROTO_ICMP));
        ok &= step_fails(&n, "socket(AF_INET, SOCK_RAW|SOCK_NONBLOCK, RAW)",
                         socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK, IPPROTO_RAW));
        ok &= step_fails(&n, "socket(AF_INET6, SOCK_RAW, ICMPV6)", socket(AF_INET6, SOCK_RAW, IPPROTO_ICMPV6));
        ok &= step_fails(&n, "socket(AF_INET, type SOCK_RAW|1<<32)",
                         syscall(SYS_socket, AF_INET, (1UL << 32) | SOCK_RAW, IPPROTO_ICMP));
        return finish(&n, ok);
}

/* What CAP_NET_RAW gives beyond raw and packet sockets: a socket's mark
 * (policy routing, netfilter marks), transparent binding to addresses the
 * host does not have, and moving a socket bound to a device to another.
 * The kernel grants these only over a network namespace the holder's user
 * namespace owns, so a container that holds NET_RAW (cordon-oci keeps it,
 * as runc does) must get none in a network an engine prepared, which the
 * host's user namespace owns. Run there; in the container's own namespace
 * (loopback only) all are its to set, and harmless. */
static int a_net_raw_opts(int argc, char **argv)
{
        (void)argc;
        (void)argv;
        struct notes n = {0};
        int tcp = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int udp6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (tcp < 0 || udp6 < 0)
                return probe_error("TCP or UDP socket refused: %s", en(errno));
        int one = 1, mark = 0x1234;
        bool ok = step_fails(&n, "SO_MARK", setsockopt(tcp, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)));
        ok &= step_fails(&n, "IP_TRANSPARENT", setsockopt(tcp, SOL_IP, IP_TRANSPARENT, &one, sizeof(one)));
        ok &= step_fails(&n, "IPV6_TRANSPARENT", setsockopt(udp6, SOL_IPV6, IPV6_TRANSPARENT, &one, sizeof(one)));
        ok &= step_fails(&n, "SO_MARK on UDP/IPv6", setsockopt(udp6, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)));
        /* a socket's first SO_BINDTODEVICE is anyone's; moving one already
         * bound (to lo here) to another device, or to none, is NET_RAW's */
        if (setsockopt(tcp, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3) < 0)
                return probe_error("SO_BINDTODEVICE lo, the first (anyone's): %s", en(errno));
        ok &= step_fails(&n, "SO_BINDTODEVICE rebind (lo to none)",
                         setsockopt(tcp, SOL_SOCKET, SO_BINDTODEVICE, "", 1));
        close(tcp);
        close(udp6);
        return finish(&n, ok);
}

/* ------------------------------------------------------------------ */
/* races against the emulated open */

#define OK_FILE      "/tmp/esc-ok"
#define OK_CONTENT   "cordon-escape-ok\n"
#define RACE_OPENS   20000
#define RACE_SECONDS 10

static char race_buf[PATH_MAX];
static char race_a[PATH_MAX], race_b[PATH_MAX], race_c[PATH_MAX];
static atomic_bool race_stop;

static void *flip_buffer(void *arg)
{
        size_t la = strlen(race_a) + 1, lb = strlen(race_b) + 1;
        while (!atomic_load(&race_stop)) {
                memcpy(race_buf, race_a, la);
                for (volatile int i = 0; i < 50; i++)
                        ;
                memcpy(race_buf, race_b, lb);
                for (volatile int i = 0; i < 50; i++)
                        ;
        }
        return NULL;
}

static void *flip_link(void *arg)
{
        while (!atomic_load(&race_stop)) {
                unlink("/tmp/esc-link.new");
                if (symlink(race_a, "/tmp/esc-link.new") == 0)
                        rename("/tmp/esc-link.new", "/tmp/esc-link");
                unlink("/tmp/esc-link.new");
                if (symlink(race_b, "/tmp/esc-link.new") == 0)
                        rename("/tmp/esc-link.new", "/tmp/esc-link");
                unlink("/tmp/esc-link.new");
                if (symlink(race_a, "/tmp/esc-link.new") == 0)
                        rename("/tmp/esc-link.new", "/tmp/esc-link");
                unlink("/tmp/esc-link.new");
                if (symlink(race_c, "/tmp/esc-link.new") == 0)
                        rename("/tmp/esc-link.new", "/tmp/esc-link");
        }
        return NULL;
}

static int write_ok_file(void)
{
        int fd = open(OK_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return -errno;
        ssize_t k = write(fd, OK_CONTENT, strlen(OK_CONTENT));
        close(fd);
        return k == (ssize_t)strlen(OK_CONTENT) ? 0 : -EIO;
}

static int race(const char *path_to_open, void *(*flipper)(void *), const char *what)
{
        pthread_t t;
        atomic_store(&race_stop, false);
        if (pthread_create(&t, NULL, flipper, NULL) != 0)
                return probe_error("pthread_create");
        struct timespec t0, now;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        long opens = 0, ok_opens = 0, other = 0, fails = 0;
        int first_err = 0;
        for (int i = 0; i < RACE_OPENS; i++) {
                int fd = open(path_to_open ? path_to_open : race_buf, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
                opens++;
                if (fd < 0) {
                        fails++;
                        if (!first_err)
                                first_err = errno;
                } else {
                        char buf[256];
                        ssize_t k = read_fd_all(fd, buf, sizeof(buf));
                        close(fd);
                        if (k >= 0 && strcmp(buf, OK_CONTENT) == 0)
                                ok_opens++;
                        else
                                other++;
                }
                if ((i & 255) == 0) {
                        clock_gettime(CLOCK_MONOTONIC, &now);
                        if (now.tv_sec - t0.tv_sec >= RACE_SECONDS)
                                break;
                }
        }
        atomic_store(&race_stop, true);
        pthread_join(t, NULL);
        if (other > 0)
                return through("%s: %ld of %ld opens returned a file other than %s", what, other, opens, OK_FILE);
        if (ok_opens == 0)
                return probe_error("%s: no open of %s succeeded in %ld tries (%s)", what, OK_FILE, opens,
                                   first_err ? en(first_err) : "?");
        return blocked("%s: %ld opens, %ld of %s, %ld failed (%s), none reached the secret", what, opens, ok_opens,
                       OK_FILE, fails, first_err ? en(first_err) : "none");
}

static int a_toctou_open(int argc, char **argv)
{
        const char *secret = need_arg(argc, argv, 2);
        if (!secret)
                return probe_error("usage: toctou-open HOST_PATH");
        int r = write_ok_file();
        if (r < 0)
                return probe_error("write %s: %s", OK_FILE, en(-r));
        snprintf(race_a, sizeof(race_a), "%s", OK_FILE);
        snprintf(race_b, sizeof(race_b), "%s", secret);
        snprintf(race_buf, sizeof(race_buf), "%s", OK_FILE);
        return race(NULL, flip_buffer, "path buffer flipped during open");
}

static int a_symlink_race(int argc, char **argv)
{
        const char *secret = need_arg(argc, argv, 2);
        if (!secret)
                return probe_error("usage: symlink-race HOST_PATH");
        int r = write_ok_file();
        if (r < 0)
                return probe_error("write %s: %s", OK_FILE, en(-r));
        snprintf(race_a, sizeof(race_a), "%s", OK_FILE);
        /* the host path itself, and the same through init's root */
        snprintf(race_b, sizeof(race_b), "%s", secret);
        snprintf(race_c, sizeof(race_c), "/proc/1/root/../../..%s", secret);
        unlink("/tmp/esc-link");
        if (symlink(OK_FILE, "/tmp/esc-link") < 0)
                return probe_error("symlink: %s", en(errno));
        return race("/tmp/esc-link", flip_link, "symlink flipped during open");
}

/* ------------------------------------------------------------------ */
/* the emulated path calls: these run under a policy that hides a directory
 * the runner binds in (HIDDEN_DIR, holding "file"), so every path call is
 * trapped and must answer ENOENT for anything under it, however spelled. */

/* One path call that must fail with ENOENT: a success, or any other error
 * that shows the object is there, counts as through. */
static bool must_be_absent(struct notes *n, const char *what, long r, int *tries)
{
        (*tries)++;
        if (r < 0 && errno == ENOENT)
                return true;
        /* init's /proc entries are not the command's to walk: refused
         * before the hidden path is reached */
        if (r < 0 && errno == EACCES && strncmp(what + strcspn(what, " ") + 1, "/proc/1/", 8) == 0)
                return true;
        note(n, "%s: %s", what, r < 0 ? en(errno) : "succeeded");
        return false;
}

static int a_hidden_paths(int argc, char **argv)
{
        const char *dir = need_arg(argc, argv, 2);
        if (!dir)
                return probe_error("usage: hidden-paths HIDDEN_DIR");
        struct notes n = {0};
        bool ok = true;
        int tries = 0;
        char parent[PATH_MAX], base[NAME_MAX + 1];
        snprintf(parent, sizeof(parent), "%s", dir);
        char *slash = strrchr(parent, '/');
        if (!slash || slash == parent)
                return probe_error("HIDDEN_DIR must be /a/b");
        *slash = '\0';
        snprintf(base, sizeof(base), "%s", slash + 1);
        char paths[12][2 * PATH_MAX + 32];
        int np = 0;
        snprintf(paths[np++], sizeof(paths[0]), "%s/file", dir);
        snprintf(paths[np++], sizeof(paths[0]), "%s/../%s/file", dir, base);
        snprintf(paths[np++], sizeof(paths[0]), "%s/./%s//file", parent, base);
        snprintf(paths[np++], sizeof(paths[0]), "/proc/self/root%s/file", dir);
        snprintf(paths[np++], sizeof(paths[0]), "/proc/1/root/../..%s/file", dir);
        snprintf(paths[np++], sizeof(paths[0]), "/proc/thread-self/root%s/file", dir);
        snprintf(paths[np++], sizeof(paths[0]), "/tmp/hp-link");
        snprintf(paths[np++], sizeof(paths[0]), "/tmp/hp-dirlink/file");
        snprintf(paths[np++], sizeof(paths[0]), "/tmp/hp-rel/file");
        snprintf(paths[np++], sizeof(paths[0]), "%s", dir);
        snprintf(paths[np++], sizeof(paths[0]), "%s/", dir);
        snprintf(paths[np++], sizeof(paths[0]), "%s/../%s", dir, base);
        char target[PATH_MAX];
        snprintf(target, sizeof(target), "%s/file", dir);
        unlink("/tmp/hp-link");
        unlink("/tmp/hp-dirlink");
        unlink("/tmp/hp-rel");
        if (symlink(target, "/tmp/hp-link") < 0 || symlink(dir, "/tmp/hp-dirlink") < 0)
                return probe_error("symlink in /tmp: %s", en(errno));
        char rel[PATH_MAX];
        snprintf(rel, sizeof(rel), "../..%s", dir); /* /tmp/../.. then the path */
        if (symlink(rel, "/tmp/hp-rel") < 0)
                return probe_error("symlink in /tmp: %s", en(errno));
        for (int i = 0; i < np; i++) {
                const char *p = paths[i];
                char what[sizeof(paths[0]) + 32], buf[256];
                struct stat st;
                struct statx stx;
#define TRY(name, expr)                                               \
        do {                                                          \
                snprintf(what, sizeof(what), "%s %.4096s", name, p);  \
                errno = 0;                                            \
                ok &= must_be_absent(&n, what, (long)(expr), &tries); \
        } while (0)
                TRY("stat", syscall(SYS_stat, p, &st));
                TRY("newfstatat", syscall(SYS_newfstatat, AT_FDCWD, p, &st, 0));
                TRY("statx", syscall(SYS_statx, AT_FDCWD, p, 0, STATX_BASIC_STATS, &stx));
                TRY("access", syscall(SYS_access, p, F_OK));
                TRY("getxattr", syscall(SYS_getxattr, p, "user.x", buf, sizeof(buf)));
                TRY("listxattr", syscall(SYS_listxattr, p, buf, sizeof(buf)));
                TRY("open", syscall(SYS_openat, AT_FDCWD, p, O_RDONLY | O_CLOEXEC | O_NONBLOCK));
                TRY("chmod", syscall(SYS_chmod, p, 0777));
                TRY("truncate", syscall(SYS_truncate, p, 0L));
                TRY("statfs", syscall(SYS_statfs, p, buf));
                if (i != 6) /* /tmp/hp-link itself is ours: readlink and lstat see it */
                        TRY("readlink", syscall(SYS_readlink, p, buf, sizeof(buf)));
                if (i < 6 || i >= 9)
                        TRY("lstat", syscall(SYS_lstat, p, &st));
#undef TRY
        }
        /* relative to a directory fd on the parent, and from inside it */
        int pfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (pfd >= 0) {
                char rp[NAME_MAX + 8];
                snprintf(rp, sizeof(rp), "%s/file", base);
                struct stat st;
                errno = 0;
                ok &= must_be_absent(&n, "fstatat(parentfd, name/file)", syscall(SYS_newfstatat, pfd, rp, &st, 0),
                                     &tries);
                errno = 0;
                ok &= must_be_absent(&n, "fstatat(parentfd, name)", syscall(SYS_newfstatat, pfd, base, &st, 0), &tries);
                if (fchdir(pfd) == 0) {
                        errno = 0;
                        ok &= must_be_absent(&n, "stat(name/file) from the parent", syscall(SYS_stat, rp, &st), &tries);
                        errno = 0;
                        ok &= must_be_absent(&n, "chdir(name)", syscall(SYS_chdir, base), &tries);
                }
                close(pfd);
        }
        note(&n, "%d calls over %d spellings", tries, np);
        if (ok)
                return blocked("%d path calls on the hidden path (.., //, /proc/self/root, /proc/1/root, "
                               "symlinks absolute, relative and to the directory, a parent dirfd): all ENOENT",
                               tries);
        return finish(&n, false);
}

/* A directory swapped under a path between check and use: /tmp/rr/a is, in
 * turn, a real directory (holding an own file) and a symlink to the hidden
 * directory, renamed into place by a racing thread, while the main thread
 * stats, chmods, sets an xattr on and unlinks /tmp/rr/a/file. Any call
 * that acts on the hidden file got through (the runner also checks the
 * host's file afterwards). */
static char rr_hidden[PATH_MAX];

static void *flip_dir(void *arg)
{
        (void)arg;
        /* /tmp/rr/a and /tmp/rr/lnk trade places atomically: "a" is always
         * there, the real directory or the symlink to the hidden one */
        while (!atomic_load(&race_stop))
                syscall(SYS_renameat2, AT_FDCWD, "/tmp/rr/a", AT_FDCWD, "/tmp/rr/lnk", 2 /* RENAME_EXCHANGE */);
        return NULL;
}

static int a_rename_race(int argc, char **argv)
{
        const char *dir = need_arg(argc, argv, 2);
        if (!dir)
                return probe_error("usage: rename-race HIDDEN_DIR");
        snprintf(rr_hidden, sizeof(rr_hidden), "%s", dir);
        mkdir("/tmp/rr", 0755);
        mkdir("/tmp/rr/a", 0755);
        unlink("/tmp/rr/lnk");
        if (symlink(rr_hidden, "/tmp/rr/lnk") < 0)
                return probe_error("symlink: %s", en(errno));
        int fd = open("/tmp/rr/a/file", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0 || write(fd, "own", 3) != 3)
                return probe_error("create /tmp/rr/a/file: %s", en(errno));
        close(fd);
        atomic_store(&race_stop, false);
        pthread_t t;
        if (pthread_create(&t, NULL, flip_dir, NULL) != 0)
                return probe_error("pthread_create");
        long calls = 0, own = 0, absent = 0, other = 0, reached = 0;
        int first_other = 0;
        char reached_what[128] = "";
        struct timespec t0, now;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < 40000; i++) {
                struct stat st;
                long r;
                const char *what;
                switch (i % 5) {
                case 0:
                        what = "stat";
                        r = syscall(SYS_stat, "/tmp/rr/a/file", &st);
                        break;
                case 1:
                        what = "chmod";
                        r = syscall(SYS_chmod, "/tmp/rr/a/file", 0600);
                        st.st_size = 3;
                        break;
                case 2:
                        what = "setxattr";
                        r = syscall(SYS_setxattr, "/tmp/rr/a/file", "user.esc", "x", 1, 0);
                        st.st_size = 3;
                        if (r < 0 && errno == EOPNOTSUPP)
                                r = 0; /* the private /tmp may not take user xattrs */
                        break;
                case 3:
                        what = "lstat";
                        r = syscall(SYS_lstat, "/tmp/rr/a/file", &st);
                        break;
                default:
                        what = "unlink";
                        r = syscall(SYS_unlink, "/tmp/rr/a/file");
                        st.st_size = 3;
                        if (r == 0) {
                                /* ours was removed: put it back (the racing
                                 * thread may have moved the directory) */
                                int k = -1;
                                for (int j = 0; k < 0 && j < 1000; j++)
                                        k = open(j % 2 ? "/tmp/rr/lnk/file" : "/tmp/rr/a/file",
                                                 O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
                                if (k >= 0) {
                                        (void)!write(k, "own", 3);
                                        close(k);
                                }
                        }
                        break;
                }
                calls++;
                if (r == 0 && st.st_size == 3)
                        own++;
                else if (r == 0) {
                        reached++;
                        if (!reached_what[0])
                                snprintf(reached_what, sizeof(reached_what), "%s returned a file of %lld bytes", what,
                                         (long long)st.st_size);
                } else if (errno == ENOENT)
                        absent++;
                else {
                        other++;
                        if (!first_other)
                                first_other = errno;
                }
                if ((i & 255) == 0) {
                        clock_gettime(CLOCK_MONOTONIC, &now);
                        if (now.tv_sec - t0.tv_sec >= RACE_SECONDS)
                                break;
                }
        }
        atomic_store(&race_stop, true);
        pthread_join(t, NULL);
        if (reached > 0)
                return through("%ld of %ld calls through the swapped directory reached another file (%s)", reached,
                               calls, reached_what);
        /* the hidden directory must look absent: any other answer (EROFS
         * from its read-only mask, say) means the call got there */
        if (other > 0)
                return through("%ld of %ld calls through the swapped directory answered %s, not ENOENT: they "
                               "reached the hidden directory",
                               other, calls, en(first_other));
        if (own == 0)
                return probe_error("no call reached the own file in %ld tries", calls);
        return blocked("%ld stat/chmod/setxattr/lstat/unlink calls while the directory was swapped for a symlink "
                       "to the hidden one: %ld on the own file, %ld ENOENT, %ld other (%s), none reached the hidden "
                       "file",
                       calls, own, absent, other, first_other ? en(first_other) : "none");
}

/* chdir is checked by the sentry and then done by the kernel, which reads
 * the path again (CONTINUE): a second thread flips the path buffer between
 * an own directory and the hidden one. Landing in the hidden directory is
 * possible by design; what must hold is that nothing can be done from there:
 * every call relative to that cwd fails with ENOENT. */
static char cd_buf[PATH_MAX];
static char cd_a[PATH_MAX], cd_b[PATH_MAX];

static void *flip_cd(void *arg)
{
        (void)arg;
        size_t la = strlen(cd_a) + 1, lb = strlen(cd_b) + 1;
        while (!atomic_load(&race_stop)) {
                memcpy(cd_buf, cd_b, lb);
                memcpy(cd_buf, cd_a, la);
        }
        return NULL;
}

static int a_chdir_race(int argc, char **argv)
{
        const char *dir = need_arg(argc, argv, 2);
        if (!dir)
                return probe_error("usage: chdir-race HIDDEN_DIR");
        mkdir("/tmp/cdr", 0755);
        snprintf(cd_a, sizeof(cd_a), "/tmp/cdr");
        snprintf(cd_b, sizeof(cd_b), "%s", dir);
        memcpy(cd_buf, cd_a, strlen(cd_a) + 1);
        atomic_store(&race_stop, false);
        pthread_t t;
        if (pthread_create(&t, NULL, flip_cd, NULL) != 0)
                return probe_error("pthread_create");
        long tries = 0, own = 0, refused = 0, landed = 0, acted = 0;
        char what[128] = "";
        struct timespec t0, now;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < 20000; i++) {
                tries++;
                if (syscall(SYS_chdir, cd_buf) < 0) {
                        refused++;
                        continue;
                }
                char cwd[PATH_MAX];
                if (!getcwd(cwd, sizeof(cwd)) || strcmp(cwd, dir) != 0) {
                        own++;
                        continue;
                }
                landed++;
                struct stat st;
                char buf[64];
                int fd;
                if (syscall(SYS_stat, ".", &st) == 0 || syscall(SYS_stat, "file", &st) == 0)
                        snprintf(what, sizeof(what), "stat relative to the hidden cwd");
                else if ((fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
                        close(fd);
                        snprintf(what, sizeof(what), "open(\".\") of the hidden cwd");
                } else if ((fd = open("file", O_RDONLY | O_CLOEXEC)) >= 0) {
                        close(fd);
                        snprintf(what, sizeof(what), "open of a file in the hidden cwd");
                } else if (syscall(SYS_newfstatat, AT_FDCWD, "", &st, AT_EMPTY_PATH) == 0)
                        snprintf(what, sizeof(what), "fstatat(AT_FDCWD, \"\", AT_EMPTY_PATH)");
                else if (syscall(SYS_listxattr, ".", buf, sizeof(buf)) >= 0)
                        snprintf(what, sizeof(what), "listxattr(\".\")");
                if (what[0]) {
                        acted++;
                        break;
                }
                if (chdir("/") < 0)
                        break;
                if ((i & 255) == 0) {
                        clock_gettime(CLOCK_MONOTONIC, &now);
                        if (now.tv_sec - t0.tv_sec >= RACE_SECONDS)
                                break;
                }
        }
        atomic_store(&race_stop, true);
        pthread_join(t, NULL);
        if (acted)
                return through("after %ld chdirs, %ld landed in the hidden directory and %s succeeded", tries, landed,
                               what);
        if (own == 0)
                return probe_error("no chdir reached the own directory in %ld tries", tries);
        return blocked("%ld chdirs with the path flipped: %ld into the own directory, %ld refused, %ld landed in the "
                       "hidden directory (the kernel re-read the path) and nothing could be done from there",
                       tries, own, refused, landed);
}

/* Hard links to files the sandbox must not reach: the host's secret (not
 * in the view), the hidden file by every spelling, and the host's own
 * files in the view's read-only layers (a link would pin them in the
 * writable layer). */
static int a_hidden_link(int argc, char **argv)
{
        const char *dir = need_arg(argc, argv, 2), *secret = need_arg(argc, argv, 3);
        if (!dir || !secret)
                return probe_error("usage: hidden-link HIDDEN_DIR HOST_SECRET");
        struct notes n = {0};
        bool ok = true;
        char p[PATH_MAX];
        const char *srcs[6];
        char b0[PATH_MAX], b1[PATH_MAX], b2[PATH_MAX], b3[PATH_MAX];
        snprintf(b0, sizeof(b0), "%s/file", dir);
        snprintf(b1, sizeof(b1), "/proc/self/root%s/file", dir);
        snprintf(b2, sizeof(b2), "/proc/1/root/../../..%s", secret);
        snprintf(b3, sizeof(b3), "%s", secret);
        srcs[0] = b0, srcs[1] = b1, srcs[2] = b2, srcs[3] = b3, srcs[4] = "/etc/passwd", srcs[5] = "/tmp/hl-sym";
        unlink("/tmp/hl-sym");
        if (symlink(b0, "/tmp/hl-sym") < 0)
                return probe_error("symlink: %s", en(errno));
        int tries = 0;
        for (int i = 0; i < 6; i++) {
                for (int follow = 0; follow < 2; follow++) {
                        snprintf(p, sizeof(p), "/tmp/hl-%d-%d", i, follow);
                        unlink(p);
                        errno = 0;
                        long r = syscall(SYS_linkat, AT_FDCWD, srcs[i], AT_FDCWD, p, follow ? AT_SYMLINK_FOLLOW : 0);
                        tries++;
                        if (i == 5 && !follow) {
                                /* a link to our own symlink is fine; what it points to is checked on use */
                                struct stat st;
                                if (r == 0 && stat(p, &st) == 0) {
                                        note(&n, "link to the symlink then stat: reached it");
                                        ok = false;
                                }
                                continue;
                        }
                        if (r == 0) {
                                note(&n, "linkat %s (%s): linked", srcs[i], follow ? "follow" : "nofollow");
                                ok = false;
                        }
                }
        }
        errno = 0;
        if (syscall(SYS_rename, b0, "/tmp/hl-moved") == 0) {
                note(&n, "rename of the hidden file out: done");
                ok = false;
        }
        if (ok)
                return blocked("%d hard links (hidden file direct, via /proc/self/root, via a symlink with "
                               "AT_SYMLINK_FOLLOW; the host secret direct and via /proc/1/root; /etc/passwd of a "
                               "read-only layer) and a rename out: all refused",
                               tries);
        return finish(&n, false);
}

/* ------------------------------------------------------------------ */
/* egress: these run under a policy that allows upstream.cordon.test:443
 * (the runner's upstream, in a network namespace of its own, at the address
 * the runner passes as UPSTREAM, "a.b.c.d:443"); the gate is in force. The
 * runner also listens on the host (its loopback and its interface
 * addresses) on PORT and records anything that arrives there. */

#define EGRESS_NAME "upstream.cordon.test"

/* "a.b.c.d:port", "[v6]:port" or a bare address (port defport). */
static int parse_addr(const char *s, unsigned defport, struct sockaddr_storage *ss, socklen_t *len)
{
        char host[INET6_ADDRSTRLEN + 8];
        unsigned port = defport;
        const char *c = strrchr(s, ':');
        memset(ss, 0, sizeof(*ss));
        if (s[0] == '[') {
                const char *e = strchr(s, ']');
                if (!e || (size_t)(e - s - 1) >= sizeof(host))
                        return -EINVAL;
                memcpy(host, s + 1, (size_t)(e - s - 1));
                host[e - s - 1] = '\0';
                if (e[1] == ':')
                        port = (unsigned)atoi(e + 2);
        } else if (c && strchr(s, ':') == c) { /* exactly one ':': address:port */
                size_t l = (size_t)(c - s);
                if (l >= sizeof(host))
                        return -EINVAL;
                memcpy(host, s, l);
                host[l] = '\0';
                port = (unsigned)atoi(c + 1);
        } else {
                snprintf(host, sizeof(host), "%s", s);
        }
        struct sockaddr_in *in = (struct sockaddr_in *)ss;
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
        if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
                in->sin_family = AF_INET;
                in->sin_port = htons((uint16_t)port);
                *len = sizeof(*in);
                return 0;
        }
        if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons((uint16_t)port);
                *len = sizeof(*in6);
                return 0;
        }
        return -EINVAL;
}

static const char *fmt_addr(const struct sockaddr *sa, char *buf, size_t size)
{
        char a[INET6_ADDRSTRLEN];
        if (sa->sa_family == AF_INET) {
                const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
                inet_ntop(AF_INET, &in->sin_addr, a, sizeof(a));
                snprintf(buf, size, "%s:%u", a, ntohs(in->sin_port));
        } else if (sa->sa_family == AF_INET6) {
                const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
                inet_ntop(AF_INET6, &in6->sin6_addr, a, sizeof(a));
                snprintf(buf, size, "[%s]:%u", a, ntohs(in6->sin6_port));
        } else {
                snprintf(buf, size, "family %d", sa->sa_family);
        }
        return buf;
}

static const char *peer_of(int fd, char *buf, size_t size)
{
        struct sockaddr_storage ss;
        socklen_t l = sizeof(ss);
        if (getpeername(fd, (struct sockaddr *)&ss, &l) < 0) {
                snprintf(buf, size, "getpeername: %s", en(errno));
                return buf;
        }
        return fmt_addr((struct sockaddr *)&ss, buf, size);
}

/* The synthetic IPv4 address the sandbox's resolver gives the listed name. */
static int egress_synthetic(struct sockaddr_in *ret)
{
        struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
        int r = getaddrinfo(EGRESS_NAME, "443", &hints, &res);
        if (r != 0)
                return r == EAI_SYSTEM ? -errno : -ENOENT;
        memcpy(ret, res->ai_addr, sizeof(*ret));
        freeaddrinfo(res);
        return 0;
}

/* A TCP socket connected through the gate to the upstream; checks that its
 * peer is upstream. Returns the fd or a negative errno (-EPROTO: another peer). */
static int gate_socket(const char *upstream, char *why, size_t whysize)
{
        struct sockaddr_in syn;
        int r = egress_synthetic(&syn);
        if (r < 0) {
                snprintf(why, whysize, "getaddrinfo(%s) failed", EGRESS_NAME);
                return r;
        }
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                snprintf(why, whysize, "socket: %s", en(errno));
                return -errno;
        }
        r = connect_timeout(fd, (struct sockaddr *)&syn, sizeof(syn), 5000);
        if (r < 0) {
                snprintf(why, whysize, "connect to %s through the gate: %s", EGRESS_NAME, en(-r));
                close(fd);
                return r;
        }
        char peer[80];
        peer_of(fd, peer, sizeof(peer));
        if (strcmp(peer, upstream) != 0) {
                snprintf(why, whysize, "the gate's socket has peer %s, not the upstream %s", peer, upstream);
                close(fd);
                return -EPROTO;
        }
        int fl = fcntl(fd, F_GETFL);
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        return fd;
}

/* Reads a banner line with a deadline; true if something arrived. */
static bool read_banner(int fd, char *buf, size_t size, int ms)
{
        struct pollfd p = {fd, POLLIN, 0};
        buf[0] = '\0';
        if (poll(&p, 1, ms) <= 0)
                return false;
        ssize_t k = recv(fd, buf, size - 1, MSG_DONTWAIT);
        if (k <= 0)
                return false;
        buf[k] = '\0';
        buf[strcspn(buf, "\r\n")] = '\0';
        return true;
}

/* How the refused tries failed: errno -> count, for a short summary. */
struct tally {
        int err[8], count[8], n, total;
};

static void tally_add(struct tally *t, int e)
{
        t->total++;
        for (int i = 0; i < t->n; i++)
                if (t->err[i] == e) {
                        t->count[i]++;
                        return;
                }
        if (t->n < 8) {
                t->err[t->n] = e;
                t->count[t->n++] = 1;
        }
}

static void tally_note(struct notes *n, const char *what, const struct tally *t)
{
        char b[200] = "";
        for (int i = 0; i < t->n; i++)
                snprintf(b + strlen(b), sizeof(b) - strlen(b), "%s%s x%d", i ? ", " : "", en(t->err[i]), t->count[i]);
        note(n, "%s: %d refused (%s)", what, t->total, t->n ? b : "-");
}

/* TCP connect and (udp) UDP sendto to one destination; false if either
 * reached it (described in n); refusals are counted in tcp and udp. */
static bool egress_try(struct notes *n, const char *dest, unsigned defport, struct tally *tcp, struct tally *udp)
{
        struct sockaddr_storage ss;
        socklen_t len;
        if (parse_addr(dest, defport, &ss, &len) < 0) {
                note(n, "%s: unparsable", dest);
                return true;
        }
        char d[80];
        fmt_addr((struct sockaddr *)&ss, d, sizeof(d));
        bool ok = true;
        int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                tally_add(tcp, errno);
        } else {
                int r = connect_timeout(fd, (struct sockaddr *)&ss, len, 1500);
                if (r == 0) {
                        char b[128], p[80];
                        peer_of(fd, p, sizeof(p));
                        bool got = read_banner(fd, b, sizeof(b), 1000);
                        note(n, "%s: CONNECTED (peer %s%s%s)", d, p, got ? ", read " : "", got ? b : "");
                        ok = false;
                } else {
                        tally_add(tcp, -r);
                }
                close(fd);
        }
        if (udp) {
                fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                if (fd >= 0) {
                        ssize_t k = sendto(fd, "cordon-escape", 13, MSG_DONTWAIT, (struct sockaddr *)&ss, len);
                        if (k >= 0) {
                                note(n, "udp %s: SENT", d);
                                ok = false;
                        } else {
                                tally_add(udp, errno);
                        }
                        close(fd);
                }
        }
        return ok;
}

/* The host's loopback in every spelling: the sandbox's own loopback has
 * nothing on PORT, so any connection made there reached another namespace. */
static int a_egress_loopback(int argc, char **argv)
{
        const char *port = need_arg(argc, argv, 2);
        if (!port)
                return probe_error("usage: egress-loopback PORT");
        static const char *const dests[] = {
                "127.0.0.1",          "127.0.0.2", "127.0.0.53", "127.255.255.254",  "[::1]",
                "[::ffff:127.0.0.1]", "0.0.0.0",   "[::]",       "[::ffff:0.0.0.0]", "[::127.0.0.1]"};
        struct notes n = {0};
        struct tally tcp = {0};
        bool ok = true;
        for (size_t i = 0; i < sizeof(dests) / sizeof(dests[0]); i++)
                ok &= egress_try(&n, dests[i], (unsigned)atoi(port), &tcp, NULL);
        /* UDP to the same: the sandbox's loopback takes them (the runner's
         * host listeners say whether any arrived on the host) */
        int sent = 0, refused = 0;
        for (size_t i = 0; i < sizeof(dests) / sizeof(dests[0]); i++) {
                struct sockaddr_storage ss;
                socklen_t len;
                if (parse_addr(dests[i], (unsigned)atoi(port), &ss, &len) < 0)
                        continue;
                int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                if (fd < 0)
                        continue;
                if (sendto(fd, "cordon-escape", 13, MSG_DONTWAIT, (struct sockaddr *)&ss, len) >= 0)
                        sent++;
                else
                        refused++;
                close(fd);
        }
        tally_note(&n, "TCP connects to the loopback spellings", &tcp);
        note(&n, "UDP: %d sent within the sandbox, %d refused", sent, refused);
        return finish(&n, ok);
}

/* Metadata, private, 6to4/NAT64/Teredo/mapped forms, and the host's own
 * interface addresses (ARGS, with the runner listening on PORT). */
static int a_egress_literals(int argc, char **argv)
{
        const char *port = need_arg(argc, argv, 2);
        if (!port)
                return probe_error("usage: egress-literals PORT [HOST_ADDRESS...]");
        unsigned p = (unsigned)atoi(port);
        static const char *const dests[] = {
                "169.254.169.254:80",
                "169.254.169.254:443",
                "10.0.0.1:443",
                "100.100.100.200:80",
                "[fd00:ec2::254]:80",
                "[::ffff:169.254.169.254]:80",
                "[::ffff:10.0.0.1]:443",
                "[::169.254.169.254]:80",
                "[2002:a9fe:a9fe::]:80",
                "[64:ff9b::a9fe:a9fe]:80",
                "[64:ff9b:1::a9fe:a9fe]:80",
                "[2001:0:4136:e378:8000:63bf:5601:5601]:80", /* Teredo, client 169.254.169.254 */
                "2002:7f00:1::",
                "64:ff9b::7f00:1",
                "64:ff9b:1::7f00:1",
                "2001:0:4136:e378:8000:63bf:80ff:fffe", /* Teredo, client 127.0.0.1 */
                "198.18.0.1",                           /* the pool's own range, not a handed-out address */
                "[fdc0:d0::1]:443",
        };
        struct notes n = {0};
        struct tally tcp = {0}, udp = {0};
        bool ok = true;
        for (size_t i = 0; i < sizeof(dests) / sizeof(dests[0]); i++)
                ok &= egress_try(&n, dests[i], p, &tcp, &udp);
        for (int i = 3; i < argc; i++)
                ok &= egress_try(&n, argv[i], p, &tcp, &udp);
        note(&n,
             "%zu destinations (metadata, private, mapped, 6to4, NAT64, Teredo, the pool's range) and %d host "
             "address(es)",
             sizeof(dests) / sizeof(dests[0]), argc > 3 ? argc - 3 : 0);
        tally_note(&n, "TCP connects", &tcp);
        tally_note(&n, "UDP sendtos", &udp);
        return finish(&n, ok);
}

/* A thread flips the connect() address between the upstream's synthetic
 * address and a forbidden one while the main thread connects: every
 * connection made must be to the upstream. */
static _Atomic uint64_t egress_race_sa[2]; /* a struct sockaddr_in, as two words */
static uint64_t egress_race_alt[2][2];

static void *egress_flip(void *arg)
{
        (void)arg;
        uint64_t *a = egress_race_alt[0], *b = egress_race_alt[1];
        while (!atomic_load(&race_stop)) {
                atomic_store(&egress_race_sa[0], a[0]);
                for (volatile int i = 0; i < 20; i++)
                        ;
                atomic_store(&egress_race_sa[0], b[0]);
                for (volatile int i = 0; i < 20; i++)
                        ;
                /* torn: the port of one with the address of the other, in two halves */
                uint32_t *w = (uint32_t *)&egress_race_sa[0];
                __atomic_store_n(&w[0], (uint32_t)a[0], __ATOMIC_SEQ_CST);
                __atomic_store_n(&w[1], (uint32_t)(b[0] >> 32), __ATOMIC_SEQ_CST);
                for (volatile int i = 0; i < 20; i++)
                        ;
        }
        return NULL;
}

static int egress_race_one(struct notes *n, const struct sockaddr_in *good, const struct sockaddr_in *bad,
                           const char *upstream, const char *label, bool *ok)
{
        memcpy(egress_race_alt[0], good, sizeof(*good));
        memcpy(egress_race_alt[1], bad, sizeof(*bad));
        memcpy((void *)egress_race_sa, good, sizeof(*good));
        atomic_store(&race_stop, false);
        pthread_t t;
        if (pthread_create(&t, NULL, egress_flip, NULL) != 0)
                return -EAGAIN;
        long tries = 0, upstream_ok = 0, wrong = 0, fails = 0;
        int first_err = 0;
        char wrong_peer[80] = "";
        struct timespec t0, now;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        struct timeval tv = {2, 0};
        for (int i = 0; i < 2000; i++) {
                int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd < 0)
                        break;
                setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
                tries++;
                if (connect(fd, (struct sockaddr *)egress_race_sa, sizeof(struct sockaddr_in)) == 0) {
                        char p[80];
                        peer_of(fd, p, sizeof(p));
                        if (strcmp(p, upstream) == 0) {
                                upstream_ok++;
                        } else {
                                wrong++;
                                snprintf(wrong_peer, sizeof(wrong_peer), "%s", p);
                        }
                } else {
                        fails++;
                        if (!first_err || errno != EACCES)
                                first_err = errno;
                }
                close(fd);
                if ((i & 63) == 0) {
                        clock_gettime(CLOCK_MONOTONIC, &now);
                        if (now.tv_sec - t0.tv_sec >= 6) /* three runs within the probe's 25 s alarm */
                                break;
                }
        }
        atomic_store(&race_stop, true);
        pthread_join(t, NULL);
        note(n, "%s: %ld connects, %ld to the upstream, %ld failed (%s)%s%s", label, tries, upstream_ok, fails,
             first_err ? en(first_err) : "none", wrong ? ", CONNECTED ELSEWHERE: " : "", wrong ? wrong_peer : "");
        if (wrong)
                *ok = false;
        return (int)upstream_ok;
}

static int a_egress_race(int argc, char **argv)
{
        const char *port = need_arg(argc, argv, 2), *upstream = need_arg(argc, argv, 3);
        if (!port || !upstream)
                return probe_error("usage: egress-race PORT UPSTREAM_ADDR:443");
        struct sockaddr_in syn;
        if (egress_synthetic(&syn) < 0)
                return probe_error("getaddrinfo(%s) failed: is the policy in force?", EGRESS_NAME);
        struct sockaddr_in meta = {.sin_family = AF_INET, .sin_port = htons(443)};
        inet_pton(AF_INET, "169.254.169.254", &meta.sin_addr);
        struct sockaddr_in lo = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
        inet_pton(AF_INET, "127.0.0.1", &lo.sin_addr);
        struct sockaddr_in syn_port = syn;
        syn_port.sin_port = lo.sin_port;
        struct notes n = {0};
        bool ok = true;
        int up = 0;
        up += egress_race_one(&n, &syn, &meta, upstream, "flipped with 169.254.169.254:443", &ok);
        up += egress_race_one(&n, &syn, &lo, upstream, "flipped with the host's loopback server", &ok);
        up += egress_race_one(&n, &syn, &syn_port, upstream, "flipped with the synthetic address on that port", &ok);
        if (ok && up == 0)
                return probe_error("no connect reached the upstream: %s", n.text);
        return finish(&n, ok);
}

/* The gate hands the sandbox a socket the sentry made in the host's network
 * namespace. Once connected it can only talk to the upstream; but a TCP
 * socket can be disconnected (connect with AF_UNSPEC) and used again. */
static int a_egress_unspec_reconnect(int argc, char **argv)
{
        const char *port = need_arg(argc, argv, 2), *upstream = need_arg(argc, argv, 3);
        if (!port || !upstream)
                return probe_error("usage: egress-unspec-reconnect PORT UPSTREAM_ADDR:443");
        struct notes n = {0};
        bool ok = true;
        char why[200];
        struct sockaddr unspec = {.sa_family = AF_UNSPEC};
        struct sockaddr_in lo = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port))};
        inet_pton(AF_INET, "127.0.0.1", &lo.sin_addr);

        /* connect() again */
        int fd = gate_socket(upstream, why, sizeof(why));
        if (fd < 0)
                return probe_error("%s", why);
        note(&n, "gate socket to %s", upstream);
        if (connect(fd, &unspec, sizeof(unspec)) == 0)
                note(&n, "connect(AF_UNSPEC) disconnected it");
        else
                note(&n, "connect(AF_UNSPEC): %s", en(errno));
        int r = connect_timeout(fd, (struct sockaddr *)&lo, sizeof(lo), 2000);
        if (r == 0) {
                char b[128];
                bool got = read_banner(fd, b, sizeof(b), 1000);
                note(&n, "then connect 127.0.0.1:%s: CONNECTED%s%s", port, got ? ", read " : "", got ? b : "");
                ok = false;
        } else {
                note(&n, "then connect 127.0.0.1:%s: %s", port, en(-r));
        }
        close(fd);

        /* TCP fast open (sendto with an address) instead of connect */
        fd = gate_socket(upstream, why, sizeof(why));
        if (fd >= 0) {
                (void)connect(fd, &unspec, sizeof(unspec));
                ssize_t k = sendto(fd, "x", 1, MSG_FASTOPEN, (struct sockaddr *)&lo, sizeof(lo));
                char b[128];
                if (k >= 0 || errno == EINPROGRESS) {
                        char p[80];
                        struct pollfd pw = {fd, POLLOUT, 0};
                        poll(&pw, 1, 1000);
                        peer_of(fd, p, sizeof(p));
                        bool got = read_banner(fd, b, sizeof(b), 1000);
                        if (got || strncmp(p, "getpeername", 11) != 0) {
                                note(&n, "disconnected, sendto(MSG_FASTOPEN, 127.0.0.1:%s): CONNECTED%s%s%s%s", port,
                                     strncmp(p, "getpeername", 11) != 0 ? " to " : "",
                                     strncmp(p, "getpeername", 11) != 0 ? p : "", got ? ", read " : "", got ? b : "");
                                ok = false;
                        } else {
                                note(&n, "disconnected, sendto(MSG_FASTOPEN, 127.0.0.1:%s): %s, no peer", port,
                                     k >= 0 ? "sent" : en(errno));
                        }
                } else {
                        note(&n, "disconnected, sendto(MSG_FASTOPEN, 127.0.0.1:%s): %s", port, en(errno));
                }
                close(fd);
        }
        return finish(&n, ok);
}

/* ... or made to listen: a listener in the host's namespace. It listens on
 * the host's loopback only (never on the host's interfaces). */
static int a_egress_unspec_listen(int argc, char **argv)
{
        const char *upstream = need_arg(argc, argv, 2);
        if (!upstream)
                return probe_error("usage: egress-unspec-listen UPSTREAM_ADDR:443");
        struct notes n = {0};
        bool ok = true;
        char why[200];
        int fd = gate_socket(upstream, why, sizeof(why));
        if (fd < 0)
                return probe_error("%s", why);
        struct sockaddr unspec = {.sa_family = AF_UNSPEC};
        if (connect(fd, &unspec, sizeof(unspec)) == 0)
                note(&n, "gate socket disconnected with connect(AF_UNSPEC)");
        else
                note(&n, "connect(AF_UNSPEC): %s", en(errno));
        struct sockaddr_in lo = {.sin_family = AF_INET};
        inet_pton(AF_INET, "127.0.0.1", &lo.sin_addr);
        if (bind(fd, (struct sockaddr *)&lo, sizeof(lo)) < 0) {
                note(&n, "bind 127.0.0.1:0: %s", en(errno));
        } else if (listen(fd, 4) < 0) {
                note(&n, "listen: %s", en(errno));
        } else {
                struct sockaddr_in me;
                socklen_t ml = sizeof(me);
                getsockname(fd, (struct sockaddr *)&me, &ml);
                /* is the listener in the sandbox's own namespace? its own
                 * loopback would reach it */
                int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                int r = connect_timeout(c, (struct sockaddr *)&me, sizeof(me), 1000);
                close(c);
                if (r == 0) {
                        note(&n, "listening on 127.0.0.1:%u inside the sandbox's own namespace", ntohs(me.sin_port));
                } else {
                        note(&n, "LISTENING on 127.0.0.1:%u in another network namespace (the sandbox's loopback: %s)",
                             ntohs(me.sin_port), en(-r));
                        ok = false;
                }
        }
        close(fd);
        return finish(&n, ok);
}

/* Interface enumeration (SIOCGIFCONF) works in the socket's namespace: on
 * the gate's socket it must not list the host's interfaces. */
static int list_ifaces(int fd, char *names, size_t size)
{
        struct ifreq ifr[32];
        struct ifconf ifc = {.ifc_len = sizeof(ifr), .ifc_req = ifr};
        names[0] = '\0';
        if (ioctl(fd, SIOCGIFCONF, &ifc) < 0)
                return -errno;
        int count = ifc.ifc_len / (int)sizeof(struct ifreq), other = 0;
        for (int i = 0; i < count; i++) {
                if (strcmp(ifr[i].ifr_name, "lo") != 0)
                        other++;
                if (strlen(names) + strlen(ifr[i].ifr_name) + 2 < size) {
                        strcat(names, names[0] ? "," : "");
                        strcat(names, ifr[i].ifr_name);
                }
        }
        return other;
}

static int a_egress_gate_ifconf(int argc, char **argv)
{
        const char *upstream = need_arg(argc, argv, 2);
        if (!upstream)
                return probe_error("usage: egress-gate-ifconf UPSTREAM_ADDR:443");
        struct notes n = {0};
        bool ok = true;
        char why[200], names[256];
        int own = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int r = list_ifaces(own, names, sizeof(names));
        note(&n, "a socket of the sandbox's: %s%s", r < 0 ? en(-r) : "interfaces ", r < 0 ? "" : names);
        close(own);
        int fd = gate_socket(upstream, why, sizeof(why));
        if (fd < 0)
                return probe_error("%s", why);
        r = list_ifaces(fd, names, sizeof(names));
        if (r < 0) {
                note(&n, "SIOCGIFCONF on the gate's socket: %s", en(-r));
        } else if (r > 0) {
                note(&n, "SIOCGIFCONF on the gate's socket lists %d interface(s) the sandbox does not have: %s", r,
                     names);
                ok = false;
        } else {
                note(&n, "SIOCGIFCONF on the gate's socket: %s", names);
        }
        close(fd);
        return finish(&n, ok);
}

/* The gate's upstream socket, which the sandbox holds once its connect is
 * served, belongs to a network namespace the host's user namespace owns
 * (the host's, or the one an engine prepared): what CAP_NET_RAW or
 * CAP_NET_ADMIN would grant on it (a mark for policy routing, transparent
 * binds, moving it from a device it is bound to) is refused there whatever
 * the sandbox holds in its own namespace (an OCI container keeps NET_RAW).
 * A first SO_BINDTODEVICE is anyone's: only noted. */
static int a_egress_gate_sockopts(int argc, char **argv)
{
        const char *upstream = need_arg(argc, argv, 2);
        if (!upstream)
                return probe_error("usage: egress-gate-sockopts UPSTREAM_ADDR:443");
        char why[200];
        int fd = gate_socket(upstream, why, sizeof(why));
        if (fd < 0)
                return probe_error("%s", why);
        struct notes n = {0};
        int one = 1, mark = 0x1234;
        bool ok = step_fails(&n, "SO_MARK", setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)));
        ok &= step_fails(&n, "IP_TRANSPARENT", setsockopt(fd, SOL_IP, IP_TRANSPARENT, &one, sizeof(one)));
        /* loose source routing: the packets' first hop becomes the first
         * address of the route (an internal router, the metadata address)
         * instead of the address the gate checked */
        static const uint8_t lsrr[8] = {IPOPT_NOP, IPOPT_LSRR, 7, 4, 169, 254, 169, 254};
        ok &= step_fails(&n, "IP_OPTIONS (LSRR via 169.254.169.254)",
                         setsockopt(fd, SOL_IP, IP_OPTIONS, lsrr, sizeof(lsrr)));
        ok &= step_fails(&n, "IP_OPTIONS|1<<32",
                         syscall(SYS_setsockopt, fd, SOL_IP, (1UL << 32) | IP_OPTIONS, lsrr, sizeof(lsrr)));
        if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3) == 0) {
                note(&n, "SO_BINDTODEVICE lo (a first bind, anyone's): set");
                ok &= step_fails(&n, "SO_BINDTODEVICE rebind (lo to none)",
                                 setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, "", 1));
        } else {
                note(&n, "SO_BINDTODEVICE lo: %s", en(errno));
        }
        close(fd);
        return finish(&n, ok);
}

/* An IPv6 routing header sends a socket's packets to its first address,
 * not the one connected to; the kernel lets any user set a segment
 * routing one (type 4). The filter refuses IPV6_RTHDR and its RFC 2292
 * name on every socket, high bits in the level or name included. */
static int a_ipv6_rthdr(int argc, char **argv)
{
        (void)argc;
        (void)argv;
        struct notes n = {0};
        int udp = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        int tcp = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (udp < 0 || tcp < 0)
                return probe_error("IPv6 socket refused: %s", en(errno));
        /* a valid segment routing header of one segment, fd00:ec2::254 */
        uint8_t srh[24] = {0, 2, 4, 0, 0, 0, 0, 0, 0xfd, 0, 0x0e, 0xc2};
        srh[23] = 0x54;
        srh[22] = 0x02;
        bool ok = step_fails(&n, "UDP IPV6_RTHDR type 4", setsockopt(udp, IPPROTO_IPV6, IPV6_RTHDR, srh, sizeof(srh)));
        ok &= step_fails(&n, "TCP IPV6_RTHDR type 4", setsockopt(tcp, IPPROTO_IPV6, IPV6_RTHDR, srh, sizeof(srh)));
        ok &= step_fails(&n, "IPV6_2292RTHDR", setsockopt(udp, IPPROTO_IPV6, IPV6_2292RTHDR, srh, sizeof(srh)));
        ok &= step_fails(&n, "level|1<<32",
                         syscall(SYS_setsockopt, udp, (1UL << 32) | IPPROTO_IPV6, IPV6_RTHDR, srh, sizeof(srh)));
        ok &= step_fails(&n, "name|1<<32",
                         syscall(SYS_setsockopt, tcp, IPPROTO_IPV6, (1UL << 32) | IPV6_RTHDR, srh, sizeof(srh)));
        close(udp);
        close(tcp);
        return finish(&n, ok);
}

/* Synthetic addresses that stand for no listed name (the policy lists one,
 * or none): the pool is larger than the list. Datagrams first (refused
 * without a connection anywhere), then TCP on a port no rule names. The
 * sentry must refuse them all and live on: if it dies, so does this probe,
 * and the runner sees no result line. */
static int a_egress_pool_oob(int argc, char **argv)
{
        static const char *const dests[] = {"198.18.0.3",     "198.18.0.200", "198.18.200.0",
                                            "198.18.252.255", "[fdc0:d0::3]", "[fdc0:d0::fd00]"};
        struct notes n = {0};
        struct tally tcp = {0}, udp = {0};
        bool ok = true;
        for (size_t i = 0; i < sizeof(dests) / sizeof(dests[0]); i++) {
                struct sockaddr_storage ss;
                socklen_t len;
                if (parse_addr(dests[i], 53, &ss, &len) < 0)
                        return probe_error("unparsable %s", dests[i]);
                int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                if (fd < 0)
                        continue;
                if (sendto(fd, "x", 1, MSG_DONTWAIT, (struct sockaddr *)&ss, len) >= 0) {
                        note(&n, "udp %s: SENT", dests[i]);
                        ok = false;
                } else {
                        tally_add(&udp, errno);
                }
                close(fd);
        }
        for (size_t i = 0; i < sizeof(dests) / sizeof(dests[0]); i++)
                ok &= egress_try(&n, dests[i], 61703, &tcp, NULL);
        /* ENOSYS is the kernel's answer once the supervisor's listener is
         * gone: the sentry died under these calls */
        bool died = false;
        for (int i = 0; i < udp.n; i++)
                died |= udp.err[i] == ENOSYS;
        for (int i = 0; i < tcp.n; i++)
                died |= tcp.err[i] == ENOSYS;
        if (died) {
                struct notes m = {0};
                note(&m, "THE SENTRY DIED (trapped calls answer ENOSYS: no supervisor) and the sandbox runs on");
                tally_note(&m, "UDP sendtos (port 53)", &udp);
                tally_note(&m, "TCP connects (port 61703)", &tcp);
                return through("%s", m.text);
        }
        note(&n, "%zu synthetic addresses of no rule; the sentry lives", sizeof(dests) / sizeof(dests[0]));
        tally_note(&n, "UDP sendtos (port 53)", &udp);
        tally_note(&n, "TCP connects (port 61703)", &tcp);
        return finish(&n, ok);
}

/* ------------------------------------------------------------------ */
/* exec: the executed file is the one checked */

#define I386_FILE  "/tmp/esc-i386"
#define TRUE_COPY  "/tmp/esc-true"
#define EXEC_RACES 5000

/* A minimal i386 ELF that exits 42 through int $0x80 (no libc, no
 * interpreter): the kernel runs it where it has IA32 emulation; cordon must
 * refuse it before the kernel loads it. Its first syscall would also meet
 * the seccomp filter's architecture check (SIGSYS): either way, an exit of
 * 42 or a death by SIGSYS means it was executed. */
static int write_i386(const char *path)
{
        static const unsigned char code[] = {0xb8, 0x01, 0x00, 0x00, 0x00, 0xbb, 0x2a, 0x00, 0x00, 0x00, 0xcd, 0x80};
        unsigned char f[52 + 32 + sizeof(code)] = {0x7f, 'E', 'L', 'F', 1 /* ELFCLASS32 */, 1, 1};
        uint32_t base = 0x08048000, entry = base + 52 + 32, size = sizeof(f);
        uint16_t h16[] = {2 /* ET_EXEC */, 3 /* EM_386 */};
        memcpy(f + 16, h16, sizeof(h16));
        uint32_t h32[] = {1 /* version */, entry, 52 /* phoff */, 0 /* shoff */, 0 /* flags */};
        memcpy(f + 20, h32, sizeof(h32));
        uint16_t h16b[] = {52 /* ehsize */, 32 /* phentsize */, 1 /* phnum */, 0, 0, 0};
        memcpy(f + 40, h16b, sizeof(h16b));
        uint32_t ph[] = {1 /* PT_LOAD */, 0, base, base, size, size, 5 /* R|X */, 0x1000};
        memcpy(f + 52, ph, sizeof(ph));
        memcpy(f + 84, code, sizeof(code));
        unlink(path);
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
        if (fd < 0)
                return -errno;
        ssize_t k = write(fd, f, sizeof(f));
        close(fd);
        return k == (ssize_t)sizeof(f) ? 0 : -EIO;
}

/* A private copy of /bin/true (a file the race below can rename). */
static int copy_true(const char *path)
{
        char buf[65536];
        int in = open("/bin/true", O_RDONLY | O_CLOEXEC);
        if (in < 0)
                return -errno;
        unlink(path);
        int out = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
        if (out < 0) {
                close(in);
                return -errno;
        }
        ssize_t k;
        int r = 0;
        while ((k = read(in, buf, sizeof(buf))) > 0)
                if (write(out, buf, (size_t)k) != k) {
                        r = -EIO;
                        break;
                }
        close(in);
        close(out);
        return k < 0 ? -errno : r;
}

/* How one exec attempt ended, seen from its parent. EXEC_SIGSYS: the
 * foreign program was loaded and its first syscall met the filter's
 * architecture check; a way through where the exec check is in force
 * (--trap-all: "checked" given to the probe), the filter's own refusal where
 * execs run natively and the view decides them. */
enum exec_end { EXEC_OK, EXEC_REFUSED, EXEC_OTHER_ERR, EXEC_KILLED, EXEC_RAN_FORBIDDEN, EXEC_SIGSYS, EXEC_WEIRD };

/*/* whether the probe was told the exec check is in force ("checked" after the attempt) */
static bool exec_checked(int argc, char **argv)
{
        return argc > 2 && strcmp(argv[2], "checked") == 0;
}

/* The child's _exit code when execve returned: 100 + errno. */
static enum exec_end exec_end_of(int status, int *ret_err)
{
        if (WIFEXITED(status)) {
                int c = WEXITSTATUS(status);
                if (c == 0)
                        return EXEC_OK;
                if (c == 42)
                        return EXEC_RAN_FORBIDDEN;
                if (c >= 100) {
                        *ret_err = c - 100;
                        return c - 100 == ENOEXEC ? EXEC_REFUSED : EXEC_OTHER_ERR;
                }
                return EXEC_WEIRD;
        }
        if (WIFSIGNALED(status)) {
                if (WTERMSIG(status) == SIGKILL)
                        return EXEC_KILLED;
                if (WTERMSIG(status) == SIGSYS)
                        return EXEC_SIGSYS;
        }
        return EXEC_WEIRD;
}

/* vfork+execve(path) (or execveat(fd, "", AT_EMPTY_PATH) when fd >= 0):
 * the child shares our memory, so a flipping thread of ours rewrites the
 * very buffer its execve reads. */
static int spawn_exec(const char *path, int fd)
{
        char *const argv[] = {"esc-exec", NULL};
        char *const envp[] = {NULL};
        pid_t p = vfork();
        if (p == 0) {
                if (fd >= 0)
                        syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
                else
                        syscall(SYS_execve, path, argv, envp);
                _exit(100 + (errno < 100 ? errno : 99));
        }
        if (p < 0)
                return -errno;
        int status;
        while (waitpid(p, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return status;
}

static int a_exec_i386(int argc, char **argv)
{
        int r = write_i386(I386_FILE);
        if (r < 0)
                return probe_error("write %s: %s", I386_FILE, en(-r));
        int status = spawn_exec(I386_FILE, -1);
        if (status < 0)
                return probe_error("vfork: %s", en(-status));
        int err = 0;
        switch (exec_end_of(status, &err)) {
        case EXEC_SIGSYS:
                if (!exec_checked(argc, argv))
                        return blocked("execve of an i386 ELF, execs native: loaded, killed by SIGSYS at its "
                                       "first syscall (the filter's architecture check)");
                return through("execve of an i386 ELF: it ran (killed by SIGSYS at its first syscall)");
        case EXEC_REFUSED:
                return blocked("execve of an i386 ELF: ENOEXEC before the kernel loaded it");
        case EXEC_KILLED:
                return blocked("execve of an i386 ELF: killed by the exec tracer before it ran");
        case EXEC_RAN_FORBIDDEN:
                return through("execve of an i386 ELF: it ran and its i386 syscall was served (exit 42)");
        case EXEC_OK:
        case EXEC_OTHER_ERR:
        case EXEC_WEIRD:
                break;
        }
        return probe_error("execve of an i386 ELF: unexpected end (status 0x%x, %s)", status, err ? en(err) : "-");
}

static char exec_buf[PATH_MAX];
static char exec_a[PATH_MAX], exec_b[PATH_MAX];
static atomic_bool exec_stop;

static void *flip_exec_buffer(void *arg)
{
        size_t la = strlen(exec_a) + 1, lb = strlen(exec_b) + 1;
        while (!atomic_load(&exec_stop)) {
                memcpy(exec_buf, exec_a, la);
                for (volatile int i = 0; i < 200; i++)
                        ;
                memcpy(exec_buf, exec_b, lb);
                for (volatile int i = 0; i < 200; i++)
                        ;
        }
        return NULL;
}

/* A thread flips the path buffer of execve between an allowed binary and an
 * i386 ELF (refused by the exec check; the kernel itself would run it). A
 * check that read the allowed name lets the kernel re-read the buffer: the
 * tracer must then kill the process at its exec event. */
static int a_exec_flip(int argc, char **argv)
{
        int r = write_i386(I386_FILE);
        if (r < 0)
                return probe_error("write %s: %s", I386_FILE, en(-r));
        r = copy_true(TRUE_COPY);
        if (r < 0)
                return probe_error("copy /bin/true: %s", en(-r));
        snprintf(exec_a, sizeof(exec_a), "%s", TRUE_COPY);
        snprintf(exec_b, sizeof(exec_b), "%s", I386_FILE);
        snprintf(exec_buf, sizeof(exec_buf), "%s", TRUE_COPY);
        pthread_t t;
        atomic_store(&exec_stop, false);
        if (pthread_create(&t, NULL, flip_exec_buffer, NULL) != 0)
                return probe_error("pthread_create");
        long n[EXEC_WEIRD + 1] = {0}, tries = 0;
        int first_other = 0;
        struct timespec t0, now;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < EXEC_RACES; i++) {
                int status = spawn_exec(exec_buf, -1);
                if (status < 0)
                        break;
                tries++;
                int err = 0;
                enum exec_end e = exec_end_of(status, &err);
                n[e]++;
                if (e == EXEC_OTHER_ERR && !first_other)
                        first_other = err;
                if ((i & 63) == 0) {
                        clock_gettime(CLOCK_MONOTONIC, &now);
                        if (now.tv_sec - t0.tv_sec >= RACE_SECONDS)
                                break;
                }
        }
        atomic_store(&exec_stop, true);
        pthread_join(t, NULL);
        bool checked = exec_checked(argc, argv);
        if (checked) {
                n[EXEC_RAN_FORBIDDEN] += n[EXEC_SIGSYS];
                n[EXEC_SIGSYS] = 0;
        }
        if (n[EXEC_RAN_FORBIDDEN] > 0)
                return through(
                        "execve path flipped: the i386 ELF ran %ld times in %ld execs (%ld killed by the tracer)",
                        n[EXEC_RAN_FORBIDDEN], tries, n[EXEC_KILLED]);
        if (n[EXEC_OK] == 0)
                return probe_error("execve path flipped: the allowed binary never ran in %ld tries", tries);
        return blocked("execve path flipped: %ld execs: %ld ran the allowed binary, %ld refused (ENOEXEC), %ld killed "
                       "by the tracer at the exec event, %ld killed at their first i386 syscall (execs native), %ld "
                       "other errors (%s), %ld odd ends, no i386 syscall served",
                       tries, n[EXEC_OK], n[EXEC_REFUSED], n[EXEC_KILLED], n[EXEC_SIGSYS], n[EXEC_OTHER_ERR],
                       first_other ? en(first_other) : "none", n[EXEC_WEIRD]);
}

/* The i386 ELF opened, then an allowed binary renamed over its name: the
 * fd's link (/proc/self/fd/N) still names the path, which now holds the
 * allowed file. A check that followed the name instead of the fd would
 * approve what the kernel does not run. Both fexecve spellings. */
static int a_exec_fd_swap(int argc, char **argv)
{
        int r = write_i386(I386_FILE);
        if (r < 0)
                return probe_error("write %s: %s", I386_FILE, en(-r));
        r = copy_true(TRUE_COPY);
        if (r < 0)
                return probe_error("copy /bin/true: %s", en(-r));
        int fd = open(I386_FILE, O_RDONLY); /* no O_CLOEXEC: /proc/self/fd must survive the exec */
        if (fd < 0)
                return probe_error("open %s: %s", I386_FILE, en(errno));
        if (rename(TRUE_COPY, I386_FILE) < 0)
                return probe_error("rename: %s", en(errno));
        struct notes nt = {0};
        bool ok = true;
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        for (int how = 0; how < 2; how++) {
                const char *what = how ? "execveat(fd, \"\", AT_EMPTY_PATH)" : "execve(/proc/self/fd/N)";
                int status = spawn_exec(path, how ? fd : -1);
                int err = 0;
                if (status < 0)
                        return probe_error("vfork: %s", en(-status));
                switch (exec_end_of(status, &err)) {
                case EXEC_REFUSED:
                        note(&nt, "%s: ENOEXEC", what);
                        break;
                case EXEC_KILLED:
                        note(&nt, "%s: killed by the exec tracer", what);
                        break;
                case EXEC_SIGSYS:
                        if (!exec_checked(argc, argv)) {
                                note(&nt, "%s: the fd's i386 ELF loaded, killed at its first syscall", what);
                                break;
                        }
                        note(&nt, "%s: the i386 ELF RAN (SIGSYS)", what);
                        ok = false;
                        break;
                case EXEC_RAN_FORBIDDEN:
                        note(&nt, "%s: the i386 ELF RAN", what);
                        ok = false;
                        break;
                case EXEC_OK:
                        /* the allowed name ran instead of the fd's file:
                         * wrong, though not an escape */
                        note(&nt, "%s: ran the file now at the name, not the fd's", what);
                        ok = false;
                        break;
                case EXEC_OTHER_ERR:
                        note(&nt, "%s: %s", what, en(err));
                        break;
                case EXEC_WEIRD:
                        return probe_error("%s: status 0x%x", what, status);
                }
        }
        close(fd);
        return finish(&nt, ok);
}

/* ------------------------------------------------------------------ */

/* ------------------------------------------------------------------ */
/* other processes, written to (issue #9) */

/* process_vm_writev into a forked sibling and into init. EFAULT means the
 * kernel granted access and only the address was wrong: that counts as
 * through, as an attacker would have used a right address. */
static int a_process_vm_writev(int argc, char **argv)
{
        static char marker[] = "cordon-marker";
        struct notes n = {0};
        bool ok = true;
        pid_t c = spawn_sleeper();
        if (c < 0)
                return probe_error("fork: %s", en(errno));
        char buf[sizeof(marker)] = "overwritten!";
        struct iovec l = {buf, sizeof(buf)}, r = {marker, sizeof(marker)};
        const pid_t targets[] = {c, 1};
        const char *const names[] = {"sibling", "pid 1"};
        for (size_t i = 0; i < 2; i++) {
                ssize_t k = process_vm_writev(targets[i], &l, 1, &r, 1, 0);
                if (k >= 0 || errno == EFAULT) {
                        note(&n, "process_vm_writev(%s) %s", names[i],
                             k >= 0 ? "wrote" : "passed the access check (EFAULT)");
                        ok = false;
                } else {
                        note(&n, "process_vm_writev(%s): %s", names[i], en(errno));
                }
        }
        reap(c);
        return finish(&n, ok);
}

/* Opens /proc/PID/mem read-write and writes one byte at ADDR; false if it
 * worked (or the open did). */
static bool mem_write_fails(struct notes *n, pid_t p, void *addr, const char *who)
{
        /* every way an open may ask for write access: the filter traps
         * some forms and lets others (an exclusive create) run natively */
        static const struct {
                int flags;
                const char *name;
        } forms[] = {{O_RDWR, "O_RDWR"},
                     {O_WRONLY | O_CREAT, "O_WRONLY|O_CREAT"},
                     {O_WRONLY | O_CREAT | O_TRUNC, "O_WRONLY|O_CREAT|O_TRUNC"},
                     {O_RDWR | O_CREAT | O_EXCL, "O_RDWR|O_CREAT|O_EXCL"},
                     {O_WRONLY | O_EXCL, "O_WRONLY|O_EXCL"}};
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/mem", (int)p);
        bool ok = true;
        for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
                int fd = open(path, forms[i].flags | O_CLOEXEC, 0600);
                if (fd < 0) {
                        note(n, "%s %s %s: %s", who, path, forms[i].name, en(errno));
                        continue;
                }
                char b = 'X';
                ssize_t k = pwrite(fd, &b, 1, (off_t)(uintptr_t)addr);
                note(n, "%s %s opened %s, pwrite %s", who, path, forms[i].name, k == 1 ? "wrote" : en(errno));
                close(fd);
                ok = false;
        }
        return ok;
}

/* Writes through /proc/PID/mem to init, to a sibling and to every pid the
 * sandbox's /proc shows (the sentry's is not among them). */
static int a_proc_mem_write(int argc, char **argv)
{
        static char marker[] = "cordon-marker";
        struct notes n = {0};
        bool ok = true;
        pid_t c = spawn_sleeper();
        if (c < 0)
                return probe_error("fork: %s", en(errno));
        ok &= mem_write_fails(&n, 1, marker, "init");
        ok &= mem_write_fails(&n, c, marker, "sibling");
        DIR *d = opendir("/proc");
        struct dirent *de;
        int others = 0;
        while (d && (de = readdir(d))) {
                pid_t p = (pid_t)atoi(de->d_name);
                if (p <= 1 || p == c || p == getpid())
                        continue;
                others++;
                ok &= mem_write_fails(&n, p, marker, "visible");
        }
        if (d)
                closedir(d);
        note(&n, "%d other pids visible", others);
        reap(c);
        return finish(&n, ok);
}

/* Write opens may be left to the kernel once the sentry has read their
 * path (fs/open.c, open_native_write): the kernel reads it again. One thread
 * flips the path between a file of the writable layer and a sibling's
 * /proc/PID/mem, another flips the working directory between /tmp and the
 * sibling's /proc/PID (for a relative "mem"), and a symlink in /tmp names the
 * sibling's mem outright: no write open may land on procfs. */
static char memrace_buf[64], memrace_a[64], memrace_b[64], memrace_dir[64];
static void *memrace_path_flipper(void *arg)
{
        (void)arg;
        /* each spelling held for a while, so that the sentry's read and the
         * kernel's see each one about as often */
        for (unsigned k = 0; !atomic_load(&race_stop); k++) {
                memcpy(memrace_buf, k & 1 ? memrace_b : memrace_a, sizeof(memrace_buf));
                for (volatile int spin = 0; spin < 2000; spin++)
                        ;
        }
        return NULL;
}

static void *memrace_cwd_flipper(void *arg)
{
        (void)arg;
        while (!atomic_load(&race_stop)) {
                (void)!chdir(memrace_dir);
                (void)!chdir("/tmp/esc-memrace");
        }
        return NULL;
}

/* one racing round: opens path (or the flipped buffer) for writing until
 * RACE_OPENS or RACE_SECONDS; the number of fds that landed on procfs */
static long memrace_round(const char *path, void *(*flipper)(void *), long *ret_opens, long *ret_ok)
{
        pthread_t t;
        atomic_store(&race_stop, false);
        if (pthread_create(&t, NULL, flipper, NULL) != 0)
                return -1;
        struct timespec t0, now;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        long landed = 0;
        for (int i = 0; i < RACE_OPENS; i++) {
                int fd = open(path ? path : memrace_buf, (i & 1 ? O_WRONLY | O_CREAT | O_TRUNC : O_RDWR) | O_CLOEXEC,
                              0600);
                ++*ret_opens;
                if (fd >= 0) {
                        struct statfs sf;
                        if (fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC)
                                landed++;
                        else
                                ++*ret_ok;
                        close(fd);
                }
                if ((i & 255) == 0) {
                        clock_gettime(CLOCK_MONOTONIC, &now);
                        if (now.tv_sec - t0.tv_sec >= RACE_SECONDS)
                                break;
                }
        }
        atomic_store(&race_stop, true);
        pthread_join(t, NULL);
        return landed;
}

static int a_proc_mem_write_race(int argc, char **argv)
{
        (void)argc;
        (void)argv;
        pid_t c = spawn_sleeper();
        if (c < 0)
                return probe_error("fork: %s", en(errno));
        if (mkdir("/tmp/esc-memrace", 0700) < 0 && errno != EEXIST)
                return probe_error("mkdir /tmp/esc-memrace: %s", en(errno));
        int fd = open("/tmp/esc-memrace/mem", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0)
                return probe_error("create /tmp/esc-memrace/mem: %s", en(errno));
        close(fd);
        snprintf(memrace_a, sizeof(memrace_a), "/tmp/esc-memrace/mem");
        snprintf(memrace_b, sizeof(memrace_b), "/proc/%d/mem", (int)c);
        snprintf(memrace_dir, sizeof(memrace_dir), "/proc/%d", (int)c);
        memcpy(memrace_buf, memrace_a, sizeof(memrace_buf));
        char link[] = "/tmp/esc-memrace/link";
        unlink(link);
        if (symlink(memrace_b, link) < 0)
                return probe_error("symlink: %s", en(errno));
        int errs[3];
        static const int flags[3] = {O_WRONLY, O_WRONLY | O_TRUNC, O_RDWR | O_CREAT};
        long link_opened = 0;
        for (int i = 0; i < 3; i++) {
                fd = open(link, flags[i] | O_CLOEXEC, 0600);
                errs[i] = fd < 0 ? errno : 0;
                if (fd >= 0) {
                        link_opened++;
                        close(fd);
                }
        }
        long opens_p = 0, ok_p = 0, opens_c = 0, ok_c = 0;
        long landed_p = memrace_round(NULL, memrace_path_flipper, &opens_p, &ok_p);
        long landed_c = memrace_round("mem", memrace_cwd_flipper, &opens_c, &ok_c);
        (void)!chdir("/");
        reap(c);
        if (landed_p < 0 || landed_c < 0)
                return probe_error("pthread_create");
        if (link_opened || landed_p || landed_c)
                return through("a sibling's /proc/PID/mem opened for writing: through a symlink %ld of 3, "
                               "flipped path %ld of %ld, flipped cwd %ld of %ld",
                               link_opened, landed_p, opens_p, landed_c, opens_c);
        if (ok_p == 0 || ok_c == 0)
                return probe_error("the writable file never opened (path %ld of %ld, cwd %ld of %ld)", ok_p, opens_p,
                                   ok_c, opens_c);
        return blocked("symlink to a sibling's mem: %s, %s, %s; flipped path: %ld opens, %ld of the file, none "
                       "on procfs; flipped cwd: %ld opens, %ld of the file, none on procfs",
                       en(errs[0]), en(errs[1]), en(errs[2]), opens_p, ok_p, opens_c, ok_c);
}

/* ptrace of a forked child, of a true sibling (a second child attaching the
 * first), and of the parent, each with PTRACE_ATTACH and PTRACE_SEIZE. */
static long ptrace_both(pid_t p, char *what, size_t size)
{
        /* SEIZE first: it stops nothing, so a native run (where it works)
         * leaves the target running; ATTACH (which queues a SIGSTOP) only
         * when SEIZE was refused, then a SIGCONT in case it was not */
        long s = ptrace(PTRACE_SEIZE, p, NULL, NULL);
        int es = errno;
        if (s == 0) {
                snprintf(what, size, "SEIZE succeeded");
                return 1;
        }
        long a = ptrace(PTRACE_ATTACH, p, NULL, NULL);
        int ea = errno;
        if (a == 0)
                kill(p, SIGCONT);
        snprintf(what, size, "SEIZE %s, ATTACH %s", en(es), a == 0 ? "succeeded" : en(ea));
        return a == 0;
}

static int a_ptrace_sibling(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        char what[160];
        pid_t c = spawn_sleeper();
        if (c < 0)
                return probe_error("fork: %s", en(errno));
        if (ptrace_both(c, what, sizeof(what)))
                ok = false;
        note(&n, "child: %s", what);
        reap(c);

        c = spawn_sleeper();
        int pfd[2];
        if (c < 0 || pipe(pfd) < 0)
                return probe_error("fork/pipe: %s", en(errno));
        pid_t a = fork();
        if (a == 0) {
                char w[160];
                long r = ptrace_both(c, w, sizeof(w));
                (void)!write(pfd[1], &r, sizeof(r));
                (void)!write(pfd[1], w, sizeof(w));
                _exit(0);
        }
        close(pfd[1]);
        long r = 0;
        memset(what, 0, sizeof(what));
        if (read(pfd[0], &r, sizeof(r)) != sizeof(r) || read(pfd[0], what, sizeof(what)) <= 0)
                snprintf(what, sizeof(what), "the attacker reported nothing");
        close(pfd[0]);
        while (waitpid(a, NULL, 0) < 0 && errno == EINTR)
                ;
        reap(c);
        what[sizeof(what) - 1] = '\0';
        if (r)
                ok = false;
        note(&n, "sibling: %s", what);

        pid_t pp = getppid();
        if (ptrace_both(pp, what, sizeof(what)))
                ok = false;
        note(&n, "parent (pid %d): %s", (int)pp, what);
        return finish(&n, ok);
}

/* Is the page at p mapped executable? */
static int mapped_exec(void *p)
{
        FILE *f = fopen("/proc/self/maps", "re");
        if (!f)
                return -errno;
        char line[512];
        int r = -ENOENT;
        while (fgets(line, sizeof(line), f)) {
                unsigned long lo, hi;
                char perms[8];
                if (sscanf(line, "%lx-%lx %7s", &lo, &hi, perms) == 3 && (uintptr_t)p >= lo && (uintptr_t)p < hi) {
                        r = perms[2] == 'x';
                        break;
                }
        }
        fclose(f);
        return r;
}

static long per_linux32_i386(void)
{
        if (personality(PER_LINUX32 | ADDR_LIMIT_32BIT) < 0)
                return -errno;
        return i386_getpid();
}

/* personality(2): READ_IMPLIES_EXEC must not make a PROT_READ mapping
 * executable, and PER_LINUX32 must not open the i386 ABI. */
static int a_personality(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        int cur = personality(0xffffffff);
        note(&n, "personality now 0x%x", cur);
        int r = personality(READ_IMPLIES_EXEC);
        note(&n, "personality(READ_IMPLIES_EXEC): %s", r < 0 ? en(errno) : "accepted");
        void *m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
                return probe_error("mmap: %s", en(errno));
        int x = mapped_exec(m);
        if (x == 1) {
                note(&n, "a PROT_READ mapping is executable");
                ok = false;
        } else {
                note(&n, "PROT_READ mapping %s", x == 0 ? "not executable" : en(-x));
        }
        munmap(m, 4096);
        r = personality(PER_LINUX32);
        note(&n, "personality(PER_LINUX32): %s", r < 0 ? en(errno) : "accepted");
        r = personality(PER_LINUX32 | ADDR_LIMIT_32BIT);
        note(&n, "personality(PER_LINUX32|ADDR_LIMIT_32BIT): %s", r < 0 ? en(errno) : "accepted");
        if (cur >= 0)
                personality((unsigned long)cur);
        /* the i386 ABI, after PER_LINUX32, in a child (it is killed if refused) */
        int pfd[2];
        if (pipe(pfd) < 0)
                return probe_error("pipe: %s", en(errno));
        pid_t c = fork();
        if (c == 0) {
                long v = per_linux32_i386();
                (void)!write(pfd[1], &v, sizeof(v));
                _exit(0);
        }
        close(pfd[1]);
        long v = 0;
        ssize_t k = read(pfd[0], &v, sizeof(v));
        close(pfd[0]);
        int status = 0;
        while (waitpid(c, &status, 0) < 0 && errno == EINTR)
                ;
        if (WIFSIGNALED(status))
                note(&n, "int $0x80 after PER_LINUX32: killed by %s", sigabbrev_np(WTERMSIG(status)) ?: "a signal");
        else if (k == sizeof(v) && v > 0) {
                note(&n, "int $0x80 after PER_LINUX32 returned pid %ld", v);
                ok = false;
        } else
                note(&n, "int $0x80 after PER_LINUX32: %ld", v);
        return finish(&n, ok);
}

/* ------------------------------------------------------------------ */
/* another sandbox (issue #9): the runner starts sandbox 1 with
 * `escape-probe hold-secrets`, then this attempt runs in sandbox 2 */

/* Sandbox 1's side: a secret in /tmp and /dev/shm, an abstract socket, a
 * SysV segment; then waits to be killed. Not an attempt (not listed). */
static int hold_secrets(int argc, char **argv)
{
        if (argc < 6)
                return 2;
        const char *file = argv[2], *secret = argv[3], *abstract = argv[4];
        key_t key = (key_t)strtol(argv[5], NULL, 0);
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "/tmp/%s", file);
        FILE *f = fopen(path, "we");
        if (!f || fputs(secret, f) < 0 || fclose(f) != 0)
                return 2;
        snprintf(path, sizeof(path), "/dev/shm/%s", file);
        f = fopen(path, "we");
        if (f) {
                fputs(secret, f);
                fclose(f);
        }
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        size_t len = strlen(abstract);
        if (len > sizeof(sa.sun_path) - 1)
                len = sizeof(sa.sun_path) - 1;
        memcpy(sa.sun_path + 1, abstract, len);
        if (s >= 0)
                (void)!(bind(s, (struct sockaddr *)&sa,
                             (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)) == 0 &&
                        listen(s, 4) == 0);
        (void)shmget(key, 4096, IPC_CREAT | 0666);
        /* the runner waits for this line in the scratch directory */
        if (argc > 6) {
                f = fopen(argv[6], "we");
                if (f) {
                        fprintf(f, "%d\n", (int)getpid());
                        fclose(f);
                }
        }
        alarm(120);
        for (;;)
                pause();
}

/* Sandbox 2's side: args HOSTPID FILE ABSTRACT SHMKEY. */
static int a_other_sandbox(int argc, char **argv)
{
        struct notes n = {0};
        bool ok = true;
        if (argc < 6)
                return probe_error("usage: other-sandbox HOSTPID FILE ABSTRACT SHMKEY");
        pid_t host = (pid_t)atoi(argv[2]);
        const char *file = argv[3], *abstract = argv[4];
        key_t key = (key_t)strtol(argv[5], NULL, 0);
        char path[PATH_MAX], buf[256];
        /* /proc/PID/root of every visible pid, and of the host pid */
        int tried = 0;
        DIR *d = opendir("/proc");
        struct dirent *de;
        while (d && (de = readdir(d))) {
                if (de->d_name[0] < '0' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/root/tmp/%s", de->d_name, file);
                tried++;
                if (read_file(path, buf, sizeof(buf)) >= 0) {
                        note(&n, "read %s", path);
                        ok = false;
                }
        }
        if (d)
                closedir(d);
        note(&n, "/proc/*/root/tmp of %d visible pids: none had it", tried);
        static const char *const under[] = {"tmp", "dev/shm"};
        for (size_t i = 0; i < 2; i++) {
                snprintf(path, sizeof(path), "/proc/%d/root/%s/%s", (int)host, under[i], file);
                ssize_t k = read_file(path, buf, sizeof(buf));
                if (k >= 0) {
                        note(&n, "read %s", path);
                        ok = false;
                } else {
                        note(&n, "/proc/HOSTPID/root/...: %s", en((int)-k));
                }
        }
        static const char *const dirs[] = {"/tmp", "/dev/shm", "/var/tmp"};
        for (size_t i = 0; i < 3; i++) {
                snprintf(path, sizeof(path), "%s/%s", dirs[i], file);
                ssize_t k = read_file(path, buf, sizeof(buf));
                if (k >= 0) {
                        note(&n, "read %s", path);
                        ok = false;
                } else {
                        note(&n, "%s: %s", path, en((int)-k));
                }
        }
        int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s >= 0) {
                struct sockaddr_un sa = {.sun_family = AF_UNIX};
                size_t len = strlen(abstract);
                if (len > sizeof(sa.sun_path) - 1)
                        len = sizeof(sa.sun_path) - 1;
                memcpy(sa.sun_path + 1, abstract, len);
                if (connect(s, (struct sockaddr *)&sa, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)) ==
                    0) {
                        note(&n, "connected to sandbox 1's abstract socket");
                        ok = false;
                } else {
                        note(&n, "abstract socket: %s", en(errno));
                }
                close(s);
        }
        int id = shmget(key, 0, 0);
        if (id >= 0) {
                note(&n, "shmget(sandbox 1's key 0x%x) found it", (unsigned)key);
                ok = false;
        } else {
                note(&n, "shmget: %s", en(errno));
        }
        if (kill(host, 0) == 0) {
                note(&n, "kill(host pid %d, 0) found a process", (int)host);
                ok = false;
        } else {
                note(&n, "kill(host pid %d, 0): %s", (int)host, en(errno));
        }
        return finish(&n, ok);
}

/* ------------------------------------------------------------------ */
/* a fork bomb, run under --pids 64 (tests/integration/limits.sh has the
 * fork_bomb_bounded test of the limit itself) */

static int a_fork_bomb(int argc, char **argv)
{
        enum { CAP = 400 };
        static pid_t kids[CAP];
        int got = 0, e = 0;
        while (got < CAP) {
                pid_t p = spawn_sleeper();
                if (p < 0) {
                        e = errno;
                        break;
                }
                kids[got++] = p;
        }
        for (int i = 0; i < got; i++)
                reap(kids[i]);
        /* itself and its parent count too */
        if (got + 1 <= 64)
                return blocked("%d processes (with itself), then fork: %s", got + 1, e ? en(e) : "none");
        return through("%d processes (with itself)%s", got + 1, got == CAP ? ", stopped at the probe's own cap" : "");
}

static int a_selftest(int argc, char **argv)
{
        return blocked("probe runs, uid %d, pid %d", (int)getuid(), (int)getpid());
}

/* --- approvals: what is approved is what was asked (issue #10) ---
 *
 * Run by tests/escape/run.sh in a `cordon sandbox` whose policy asks before
 * writes beneath /ask and execs beneath /ask-bin; the runner approves the
 * first request once it is pending, after this probe has rewritten the
 * path buffer of the waiting call to name another file the rule covers. */

struct swap_call {
        char path[64];
        int result; /* fd or -errno */
};

static void *swap_open_thread(void *arg)
{
        struct swap_call *c = arg;
        int fd = (int)syscall(SYS_openat, AT_FDCWD, c->path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        c->result = fd < 0 ? -errno : fd;
        return NULL;
}

static int a_ask_swap_open(int argc, char **argv)
{
        (void)argc;
        (void)argv;
        static struct swap_call c = {.path = "/ask/approved"};
        pthread_t t;
        if (pthread_create(&t, NULL, swap_open_thread, &c) != 0)
                return probe_error("pthread_create");
        sleep(1); /* the open waits for its approval by now */
        memcpy(c.path, "/ask/swapped", sizeof("/ask/swapped"));
        pthread_join(t, NULL);
        struct stat st;
        bool swapped = stat("/ask/swapped", &st) == 0, approved = stat("/ask/approved", &st) == 0;
        if (c.result >= 0 || swapped)
                return through("open of a buffer swapped while waiting: fd %d, /ask/swapped %s", c.result,
                               swapped ? "created" : "absent");
        return blocked("the open, its path rewritten while it waited, failed with %s; /ask/swapped and "
                       "/ask/approved %s",
                       en(-c.result), approved ? "(approved created!)" : "absent");
}

static void *swap_exec_thread(void *arg)
{
        struct swap_call *c = arg;
        char *const args[] = {(char *)"escape-probe", (char *)"ask-exec-ran", NULL};
        char *const env[] = {NULL};
        syscall(SYS_execve, c->path, args, env);
        c->result = -errno;
        return NULL;
}

static int a_ask_swap_exec(int argc, char **argv)
{
        (void)argc;
        (void)argv;
        pid_t p = fork();
        if (p < 0)
                return probe_error("fork: %s", en(errno));
        if (p == 0) {
                static struct swap_call c = {.path = "/ask-bin/a"};
                pthread_t t;
                if (pthread_create(&t, NULL, swap_exec_thread, &c) != 0)
                        _exit(5);
                sleep(1);
                memcpy(c.path, "/ask-bin/b", sizeof("/ask-bin/b"));
                pthread_join(t, NULL);
                _exit(c.result == -EACCES ? 3 : 4);
        }
        int status;
        if (waitpid(p, &status, 0) < 0)
                return probe_error("waitpid: %s", en(errno));
        if (WIFEXITED(status) && WEXITSTATUS(status) == 42)
                return through("the swapped-in /ask-bin/b ran under /ask-bin/a's approval");
        if (WIFEXITED(status) && WEXITSTATUS(status) == 43)
                return through("/ask-bin/a ran although the buffer named /ask-bin/b when it was served");
        if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
                return blocked("the exec, its path rewritten while it waited, failed with EACCES; nothing ran");
        if (WIFSIGNALED(status))
                return blocked("the exec was killed (signal %d) before the new image ran", WTERMSIG(status));
        return probe_error("unexpected child status 0x%x", status);
}

/* The image a successful ask-swap-exec runs: says which one it is. */
static int a_ask_exec_ran(int argc, char **argv)
{
        (void)argc;
        (void)argv;
        char exe[PATH_MAX];
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        exe[n > 0 ? n : 0] = '\0';
        reported = true;
        _exit(n > 2 && strcmp(exe + n - 2, "/b") == 0 ? 42 : 43);
}

static const struct {
        const char *name;
        int (*fn)(int, char **);
} attempts[] = {
        {"selftest", a_selftest},
        {"mount", a_mount},
        {"umount-shadow", a_umount_shadow},
        {"pivot-root", a_pivot_root},
        {"chroot", a_chroot},
        {"fsopen", a_fsopen},
        {"open-tree", a_open_tree},
        {"mount-setattr", a_mount_setattr},
        {"unshare-user", a_unshare_user},
        {"unshare-mount", a_unshare_mount},
        {"clone-user", a_clone_user},
        {"clone3-user", a_clone3_user},
        {"setns", a_setns},
        {"ptrace-attach", a_ptrace_attach},
        {"ptrace-traceme", a_ptrace_traceme},
        {"process-vm-readv", a_process_vm_readv},
        {"pidfd-getfd", a_pidfd_getfd},
        {"proc-mem-init", a_proc_mem_init},
        {"core-dump", a_core_dump},
        {"open-by-handle", a_open_by_handle},
        {"io-uring", a_io_uring},
        {"bpf", a_bpf},
        {"bpf-pins", a_bpf_pins},
        {"perf-event", a_perf_event},
        {"userfaultfd", a_userfaultfd},
        {"keyctl", a_keyctl},
        {"add-key", a_add_key},
        {"kexec", a_kexec},
        {"modify-ldt", a_modify_ldt},
        {"init-module", a_init_module},
        {"iopl", a_iopl},
        {"ioperm", a_ioperm},
        {"reboot", a_reboot},
        {"swapon", a_swapon},
        {"acct", a_acct},
        {"settimeofday", a_settimeofday},
        {"clock-settime", a_clock_settime},
        {"syslog", a_syslog},
        {"seccomp-listener", a_seccomp_listener},
        {"tiocsti", a_tiocsti},
        {"tioclinux", a_tioclinux},
        {"tiocsetd", a_tiocsetd},
        {"x32", a_x32},
        {"i386", a_i386},
        {"caps", a_caps},
        {"setuid-nosuid", a_setuid_nosuid},
        {"sethostname", a_sethostname},
        {"setuid-regain", a_setuid_regain},
        {"read-secret", a_read_secret},
        {"proc1-root", a_proc1_root},
        {"proc-self-root", a_proc_self_root},
        {"proc1-cwd", a_proc1_cwd},
        {"symlink-tmp", a_symlink_tmp},
        {"dotdot-tmp", a_dotdot_tmp},
        {"openat2", a_openat2},
        {"kcore", a_kcore},
        {"kallsyms", a_kallsyms},
        {"sysrq", a_sysrq},
        {"sys", a_sys},
        {"proc-sys-write", a_proc_sys_write},
        {"dev-nodes", a_dev_nodes},
        {"mknod", a_mknod},
        {"write-usr", a_write_usr},
        {"write-etc", a_write_etc},
        {"write-root", a_write_root},
        {"fd-leak", a_fd_leak},
        {"env-leak", a_env_leak},
        {"stdio-dir", a_stdio_dir},
        {"kill-host", a_kill_host},
        {"proc-pids", a_proc_pids},
        {"proc1-cmdline", a_proc1_cmdline},
        {"sysv-ipc", a_sysv_ipc},
        {"net-tcp-host", a_net_tcp_host},
        {"net-abstract", a_net_abstract},
        {"unix-path", a_unix_path},
        {"af-packet", a_af_packet},
        {"af-vsock", a_af_vsock},
        {"netlink-audit", a_netlink_audit},
        {"socket-highbits", a_socket_highbits},
        {"socket-kinds", a_socket_kinds},
        {"raw-socket", a_raw_socket},
        {"net-raw-opts", a_net_raw_opts},
        {"egress-loopback", a_egress_loopback},
        {"egress-literals", a_egress_literals},
        {"egress-race", a_egress_race},
        {"egress-unspec-reconnect", a_egress_unspec_reconnect},
        {"egress-unspec-listen", a_egress_unspec_listen},
        {"egress-gate-ifconf", a_egress_gate_ifconf},
        {"egress-gate-sockopts", a_egress_gate_sockopts},
        {"ipv6-rthdr", a_ipv6_rthdr},
        {"egress-pool-oob", a_egress_pool_oob},
        {"toctou-open", a_toctou_open},
        {"symlink-race", a_symlink_race},
        {"hidden-paths", a_hidden_paths},
        {"rename-race", a_rename_race},
        {"hidden-link", a_hidden_link},
        {"chdir-race", a_chdir_race},
        {"exec-i386", a_exec_i386},
        {"exec-flip", a_exec_flip},
        {"exec-fd-swap", a_exec_fd_swap},
        {"process-vm-writev", a_process_vm_writev},
        {"proc-mem-write", a_proc_mem_write},
        {"proc-mem-write-race", a_proc_mem_write_race},
        {"ptrace-sibling", a_ptrace_sibling},
        {"personality", a_personality},
        {"other-sandbox", a_other_sandbox},
        {"fork-bomb", a_fork_bomb},
        {"ask-swap-open", a_ask_swap_open},
        {"ask-swap-exec", a_ask_swap_exec},
        {"ask-exec-ran", a_ask_exec_ran},
};

int main(int argc, char **argv)
{
        if (argc < 2) {
                fprintf(stderr, "usage: escape-probe ATTEMPT [ARGS...] | list\n");
                return 2;
        }
        if (strcmp(argv[1], "list") == 0) {
                for (size_t i = 0; i < sizeof(attempts) / sizeof(attempts[0]); i++)
                        puts(attempts[i].name);
                return 0;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (host_root()) {
                /* the attempts are real: proc-mem-write writes into every
                 * process it can see, others change host files */
                fprintf(stderr, "escape-probe: refusing to run as the host's root (the attempts would reach the "
                                "host's processes and files); run it under cordon\n");
                return 2;
        }
        if (strcmp(argv[1], "hold-secrets") == 0)
                return hold_secrets(argc, argv);
        /* a hung attempt must not hang the suite */
        alarm(25);
        for (size_t i = 0; i < sizeof(attempts) / sizeof(attempts[0]); i++)
                if (strcmp(argv[1], attempts[i].name) == 0) {
                        attempt = attempts[i].name;
                        int r = attempts[i].fn(argc, argv);
                        if (!reported)
                                return probe_error("the attempt reported nothing");
                        return r;
                }
        attempt = argv[1];
        return probe_error("unknown attempt");
}
