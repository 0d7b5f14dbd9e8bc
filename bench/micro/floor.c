/* The bare seccomp user-notification floor: what one trapped syscall costs
 * with nothing but a minimal supervisor answering it.
 *
 *   floor [N]
 *
 * For each variant a supervisor process forks a child; the child loads a
 * filter that sends one syscall (getppid, or openat) to user notification
 * (SECCOMP_FILTER_FLAG_NEW_LISTENER), passes the listener to the supervisor
 * over a socketpair, and then calls that syscall W+N times; the supervisor
 * answers each with -ENOENT through SECCOMP_IOCTL_NOTIF_RECV/SEND, with or
 * without SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP. The child times the last N.
 * Also the same loop without a filter (the native syscall) for reference,
 * and variants closer to what a real sentry does: the filter loaded with
 * SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, two supervisor threads waiting in
 * RECV at once, and an emulated openat of an existing file (the supervisor
 * copies the path with process_vm_readv, opens it itself and injects the fd
 * with SECCOMP_IOCTL_NOTIF_ADDFD + SECCOMP_ADDFD_FLAG_SEND); and a create
 * (openat O_WRONLY|O_CREAT|O_TRUNC of a file in /dev/shm + close) natively
 * and trapped, the supervisor copying the path and answering
 * SECCOMP_USER_NOTIF_FLAG_CONTINUE, as cordon serves a write open it leaves
 * to the kernel: the floor of cordon's CONTINUE'd opens (h-creat).
 *
 * Output: one line per variant, "name<TAB>ns-per-call" (or "name<TAB>fail
 * <TAB>reason"). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef SECCOMP_FILTER_FLAG_NEW_LISTENER
#define SECCOMP_FILTER_FLAG_NEW_LISTENER (1UL << 3)
#endif
#ifndef SECCOMP_RET_USER_NOTIF
#define SECCOMP_RET_USER_NOTIF 0x7fc00000U
#endif
#ifndef SECCOMP_IOCTL_NOTIF_RECV
struct seccomp_data_compat {
        int nr;
        uint32_t arch;
        uint64_t instruction_pointer;
        uint64_t args[6];
};
struct seccomp_notif {
        uint64_t id;
        uint32_t pid;
        uint32_t flags;
        struct seccomp_data_compat data;
};
struct seccomp_notif_resp {
        uint64_t id;
        int64_t val;
        int32_t error;
        uint32_t flags;
};
#define SECCOMP_IOC_MAGIC        '!'
#define SECCOMP_IOCTL_NOTIF_RECV _IOWR(SECCOMP_IOC_MAGIC, 0, struct seccomp_notif)
#define SECCOMP_IOCTL_NOTIF_SEND _IOWR(SECCOMP_IOC_MAGIC, 1, struct seccomp_notif_resp)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS _IOW('!', 4, __u64)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_IOCTL_NOTIF_ADDFD
struct seccomp_notif_addfd {
        uint64_t id;
        uint32_t flags;
        uint32_t srcfd;
        uint32_t newfd;
        uint32_t newfd_flags;
};
#define SECCOMP_IOCTL_NOTIF_ADDFD _IOW('!', 3, struct seccomp_notif_addfd)
#endif
#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

#define WARMUP 1000

static uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

#define EXISTING "/etc/passwd"

struct variant {
        const char *name;
        int nr;       /* the trapped (or, unfiltered, called) syscall */
        int existing; /* 1: openat of EXISTING + close instead of a missing path; 2: a create + close */
        int filtered, sync, pin, killable, threads;
        int emulate; /* 1: ADDFD with SEND; 2: ADDFD, then SEND; 3: the path copied, then CONTINUE */
};

static char creat_path[64];

static long call(const struct variant *v)
{
        if (v->nr == SYS_getppid)
                return syscall(SYS_getppid);
        if (v->existing == 2) {
                long fd = syscall(SYS_openat, AT_FDCWD, creat_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                if (fd >= 0)
                        close((int)fd);
                return fd;
        }
        if (v->existing) {
                long fd = syscall(SYS_openat, AT_FDCWD, EXISTING, O_RDONLY | O_CLOEXEC);
                if (fd >= 0)
                        close((int)fd);
                return fd;
        }
        return syscall(SYS_openat, AT_FDCWD, "/nonexistent/cordon-bench", O_RDONLY | O_CLOEXEC);
}

/* The supervisor's side: answer forever (the process exits when the child
 * has reported). Emulating: copy the path, open it here, inject the fd. */
struct serve_args {
        int lfd;
        const struct variant *v;
        volatile const char *err;
};

static void *serve(void *arg)
{
        struct serve_args *a = arg;
        struct seccomp_notif req;
        struct seccomp_notif_resp resp;
        for (;;) {
                memset(&req, 0, sizeof(req));
                if (ioctl(a->lfd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
                        if (errno == EINTR || errno == ENOENT)
                                continue;
                        a->err = "SECCOMP_IOCTL_NOTIF_RECV failed";
                        return NULL;
                }
                if (a->v->emulate == 3) {
                        char path[256];
                        struct iovec local = {.iov_base = path, .iov_len = sizeof(path)};
                        struct iovec remote = {.iov_base = (void *)(uintptr_t)req.data.args[1],
                                               .iov_len = sizeof(path)};
                        (void)process_vm_readv((pid_t)req.pid, &local, 1, &remote, 1, 0);
                        memset(&resp, 0, sizeof(resp));
                        resp.id = req.id;
                        resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
                        if (ioctl(a->lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT) {
                                a->err = "SECCOMP_IOCTL_NOTIF_SEND failed";
                                return NULL;
                        }
                        continue;
                }
                if (a->v->emulate) {
                        char path[256];
                        struct iovec local = {.iov_base = path, .iov_len = sizeof(path)};
                        struct iovec remote = {.iov_base = (void *)(uintptr_t)req.data.args[1],
                                               .iov_len = sizeof(path)};
                        ssize_t got = process_vm_readv((pid_t)req.pid, &local, 1, &remote, 1, 0);
                        int fd = -1;
                        if (got > 0 && memchr(path, 0, (size_t)got))
                                fd = open(path, (int)req.data.args[2] | O_CLOEXEC);
                        if (fd >= 0) {
                                struct seccomp_notif_addfd add = {.id = req.id,
                                                                  .flags = a->v->emulate == 1 ? SECCOMP_ADDFD_FLAG_SEND
                                                                                              : 0,
                                                                  .srcfd = (uint32_t)fd,
                                                                  .newfd_flags = O_CLOEXEC};
                                long r = ioctl(a->lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
                                close(fd);
                                if (r >= 0 && a->v->emulate == 2) {
                                        memset(&resp, 0, sizeof(resp));
                                        resp.id = req.id;
                                        resp.val = r;
                                        if (ioctl(a->lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT) {
                                                a->err = "SECCOMP_IOCTL_NOTIF_SEND failed";
                                                return NULL;
                                        }
                                        continue;
                                }
                                if (r >= 0 || errno == ENOENT)
                                        continue;
                                a->err = "SECCOMP_IOCTL_NOTIF_ADDFD failed";
                                return NULL;
                        }
                }
                memset(&resp, 0, sizeof(resp));
                resp.id = req.id;
                resp.error = -ENOENT;
                if (ioctl(a->lfd, SECCOMP_IOCTL_NOTIF_SEND, &resp) < 0 && errno != ENOENT) {
                        a->err = "SECCOMP_IOCTL_NOTIF_SEND failed";
                        return NULL;
                }
        }
}

static int send_fd(int sock, int fd)
{
        char c = 'f';
        struct iovec iov = {.iov_base = &c, .iov_len = 1};
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u;
        memset(&u, 0, sizeof(u));
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof(int));
        return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sock)
{
        char c;
        struct iovec iov = {.iov_base = &c, .iov_len = 1};
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u;
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
        if (recvmsg(sock, &msg, 0) != 1)
                return -1;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        if (!cm || cm->cmsg_type != SCM_RIGHTS)
                return -1;
        int fd;
        memcpy(&fd, CMSG_DATA(cm), sizeof(int));
        return fd;
}

static void pin_cpu0(void)
{
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(0, &set);
        sched_setaffinity(0, sizeof(set), &set);
}

/* Runs in a fresh process; prints the result line. */
static int variant(const struct variant *v, int n)
{
        const char *name = v->name;
        int nr = v->nr, filtered = v->filtered, sync = v->sync, pin = v->pin;
        int sv[2], res[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(res, O_CLOEXEC) < 0) {
                printf("%s\tfail\tsocketpair: %s\n", name, strerror(errno));
                return 1;
        }
        if (pin)
                pin_cpu0();
        pid_t child = fork();
        if (child < 0) {
                printf("%s\tfail\tfork: %s\n", name, strerror(errno));
                return 1;
        }
        if (child == 0) {
                alarm(60);
                double per = -1;
                if (filtered) {
                        struct sock_filter f[] = {
                                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
                                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
                                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
                        };
                        struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
                        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                                _exit(10);
                        unsigned long fl = SECCOMP_FILTER_FLAG_NEW_LISTENER;
                        if (v->killable)
                                fl |= SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
                        int lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, fl, &prog);
                        if (lfd < 0)
                                _exit(11);
                        if (send_fd(sv[1], lfd) < 0)
                                _exit(12);
                        close(lfd);
                        char go;
                        if (read(sv[1], &go, 1) != 1)
                                _exit(13);
                }
                for (int i = 0; i < WARMUP; i++)
                        if (call(v) < 0 && v->existing)
                                _exit(15);
                uint64_t t0 = now_ns();
                for (int i = 0; i < n; i++)
                        call(v);
                uint64_t t1 = now_ns();
                per = (double)(t1 - t0) / n;
                if (v->existing == 2)
                        unlink(creat_path);
                if (write(res[1], &per, sizeof(per)) != sizeof(per))
                        _exit(14);
                _exit(0);
        }
        close(sv[1]);
        close(res[1]);
        const char *err = NULL;
        if (filtered) {
                int lfd = recv_fd(sv[0]);
                if (lfd < 0) {
                        err = "no listener fd (seccomp user notification unavailable?)";
                        goto out;
                }
                if (sync && ioctl(lfd, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP) < 0) {
                        err = "SECCOMP_IOCTL_NOTIF_SET_FLAGS failed (kernel < 6.6?)";
                        goto out;
                }
                if (write(sv[0], "g", 1) != 1) {
                        err = "go";
                        goto out;
                }
                static struct serve_args sa[4];
                int nt = v->threads > 0 ? v->threads : 1;
                for (int t = 0; t < nt && t < 4; t++) {
                        sa[t] = (struct serve_args){.lfd = lfd, .v = v};
                        pthread_t th;
                        if (pthread_create(&th, NULL, serve, &sa[t]) != 0) {
                                err = "pthread_create";
                                goto out;
                        }
                }
        }
        double per;
        if (read(res[0], &per, sizeof(per)) != sizeof(per))
                err = "child gave no result (an emulated open failed?)";
out:
        if (err) {
                kill(child, SIGKILL);
                printf("%s\tfail\t%s\n", name, err);
        }
        int st;
        waitpid(child, &st, 0);
        if (!err)
                printf("%s\t%.0f\n", name, per);
        fflush(stdout);
        return err ? 1 : 0;
}

int main(int argc, char **argv)
{
        int n = argc > 1 ? atoi(argv[1]) : 20000;
        if (n <= 0)
                n = 20000;
        const int G = SYS_getppid, O = SYS_openat;
        static const struct variant v[] = {
                {"native getppid", G, 0, 0, 0, 0, 0, 0, 0},
                {"native openat (missing)", O, 0, 0, 0, 0, 0, 0, 0},
                {"native openat (existing) + close", O, 1, 0, 0, 0, 0, 0, 0},
                {"notify getppid, no SYNC_WAKE_UP", G, 0, 1, 0, 0, 0, 1, 0},
                {"notify getppid, SYNC_WAKE_UP", G, 0, 1, 1, 0, 0, 1, 0},
                {"notify getppid, no SYNC_WAKE_UP, both on CPU 0", G, 0, 1, 0, 1, 0, 1, 0},
                {"notify getppid, SYNC_WAKE_UP, both on CPU 0", G, 0, 1, 1, 1, 0, 1, 0},
                {"notify openat (missing), no SYNC_WAKE_UP", O, 0, 1, 0, 0, 0, 1, 0},
                {"notify openat (missing), SYNC_WAKE_UP", O, 0, 1, 1, 0, 0, 1, 0},
                {"notify openat (missing), SYNC_WAKE_UP, WAIT_KILLABLE_RECV", O, 0, 1, 1, 0, 1, 1, 0},
                {"notify openat (missing), SYNC_WAKE_UP, 2 supervisor threads", O, 0, 1, 1, 0, 0, 2, 0},
                {"emulated openat (existing) + close, SYNC_WAKE_UP", O, 1, 1, 1, 0, 0, 1, 1},
                {"emulated openat (existing) + close, no SYNC_WAKE_UP", O, 1, 1, 0, 0, 0, 1, 1},
                {"emulated openat (existing) + close, ADDFD then SEND, SYNC_WAKE_UP", O, 1, 1, 1, 0, 0, 1, 2},
                {"native openat (O_CREAT|O_TRUNC in /dev/shm) + close", O, 2, 0, 0, 0, 0, 0, 0},
                {"notify openat (O_CREAT|O_TRUNC in /dev/shm) + close, path copied, CONTINUE, SYNC_WAKE_UP", O, 2, 1, 1,
                 0, 1, 1, 3},
        };
        snprintf(creat_path, sizeof(creat_path), "/dev/shm/cordon-floor-creat.%d", (int)getpid());
        int rc = 0;
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
                if (argc > 2 && !strstr(v[i].name, argv[2]))
                        continue;
                fflush(stdout);
                pid_t p = fork();
                if (p == 0)
                        _exit(variant(&v[i], v[i].nr == G && !v[i].filtered ? n * 10 : n));
                int st;
                waitpid(p, &st, 0);
                if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
                        rc = 1;
        }
        return rc;
}
