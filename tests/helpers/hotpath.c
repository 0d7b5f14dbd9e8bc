/* The sentry's hot path on its own, for valgrind --tool=callgrind (which
 * cannot run cordon itself: it knows neither seccomp(2) nor clone() into
 * new namespaces).
 *
 *   hotpath N open|missing|creat
 *
 * A child (exec'd, so it runs outside valgrind) loads a filter that sends
 * openat to user notification and makes N openat calls; this process serves
 * them with cordon's own engine (notify/engine.c) and handler
 * (fs/open.c: fs_handle_open, workers confined by fs_worker_init) against a
 * view whose root is the host's "/" and which has no path rules. So the
 * instructions counted inside serve_one are those every emulated open costs
 * in a real sandbox: dispatch, the path copied with process_vm_readv, the
 * id check, the open as the child, the fd injected and the reply.
 * bench/callgrind.sh runs it and prints instructions per call. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/fdpass.h"
#include "fs/fs.h"
#include "notify/notify.h"

#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* valgrind answers seccomp(2) with ENOSYS, and the engine asks it for the
 * notification structs' sizes: this process's syscall() (which the linked
 * cordon code calls) answers that one question with the uapi sizes when the
 * real call fails, and passes everything else to the kernel. */
long syscall(long nr, ...)
{
        va_list ap;
        va_start(ap, nr);
        long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
        long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
        va_end(ap);
        long ret;
        register long r10 __asm__("r10") = a4;
        register long r8 __asm__("r8") = a5;
        register long r9 __asm__("r9") = a6;
        __asm__ volatile("syscall"
                         : "=a"(ret)
                         : "a"(nr), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
                         : "rcx", "r11", "memory");
        if (ret == -ENOSYS && nr == SYS_seccomp && a1 == SECCOMP_GET_NOTIF_SIZES) {
                struct seccomp_notif_sizes *s = (void *)a3;
                s->seccomp_notif = sizeof(struct seccomp_notif);
                s->seccomp_notif_resp = sizeof(struct seccomp_notif_resp);
                s->seccomp_data = sizeof(struct seccomp_data);
                return 0;
        }
        /* valgrind 3.19 knows no pidfd_open either: the umask cache
         * (notify/umask.c) would then never keep an entry. Stand in for
         * the pidfd of the live child thread with an fd that never polls
         * readable (a pipe's read end), so the cache's hit path is what
         * callgrind counts, as it is what a real sandbox runs. */
        if (ret == -ENOSYS && nr == SYS_pidfd_open) {
                int p[2];
                if (pipe2(p, O_CLOEXEC) < 0)
                        return -1;
                return p[0]; /* p[1] stays open: a closed one would poll as "exited" */
        }
        if (ret < 0 && ret > -4096) {
                errno = (int)-ret;
                return -1;
        }
        return ret;
}

static int child(int sock, long n, const char *mode)
{
        struct sock_filter f[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return 10;
        int lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                               SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
        if (lfd < 0)
                return 11;
        if (send_fds(sock, "L", 1, &lfd, 1) < 0)
                return 12;
        close(lfd);
        char go;
        if (read(sock, &go, 1) != 1)
                return 13;
        char path[64];
        snprintf(path, sizeof(path), "/tmp/hotpath.%d", (int)getpid());
        for (long i = 0; i < n; i++) {
                int fd;
                if (!strcmp(mode, "missing"))
                        fd = (int)syscall(SYS_openat, AT_FDCWD, "/nonexistent/cordon-hotpath", O_RDONLY | O_CLOEXEC);
                else if (!strcmp(mode, "creat"))
                        fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                else
                        fd = (int)syscall(SYS_openat, AT_FDCWD, "/etc/passwd", O_RDONLY | O_CLOEXEC);
                if (fd >= 0)
                        close(fd);
                else if (strcmp(mode, "missing") != 0)
                        return 14;
        }
        unlink(path); /* not trapped: unlinkat runs natively */
        return 0;
}

static int cmp_u64(const void *a, const void *b)
{
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
        if (argc == 5 && !strcmp(argv[1], "child"))
                return child(atoi(argv[2]), atol(argv[3]), argv[4]);
        if (argc != 3) {
                fprintf(stderr, "usage: hotpath N open|missing|creat\n");
                return 2;
        }
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0)
                return 1;
        char self[PATH_MAX];
        ssize_t l = readlink("/proc/self/exe", self, sizeof(self) - 1); /* valgrind gives the client's */
        if (l <= 0)
                return 1;
        self[l] = '\0';
        pid_t pid = fork();
        if (pid == 0) {
                close(sv[0]);
                char fdarg[16];
                snprintf(fdarg, sizeof(fdarg), "%d", sv[1]);
                execl(self, "hotpath", "child", fdarg, argv[1], argv[2], (char *)NULL);
                _exit(127);
        }
        close(sv[1]);
        int lfd = -1;
        char tag;
        if (recv_fds(sv[0], &tag, 1, &lfd, 1) <= 0 || lfd < 0) {
                fprintf(stderr, "hotpath: no listener from the child (seccomp user notification unavailable?)\n");
                return 1;
        }

        /* Valgrind (3.19) knows no openat2 and answers ENOSYS: the view's
         * walks then take the path a kernel without it would (said, since
         * the count is then that path's). */
        struct open_how probe = {.flags = O_PATH | O_CLOEXEC};
        long pfd = syscall(SYS_openat2, AT_FDCWD, "/", &probe, sizeof(probe));
        if (pfd >= 0)
                close((int)pfd);
        else if (errno == ENOSYS) {
                notify_force_fallback("openat2");
                printf("openat2: unknown here (valgrind?), the walks without it are counted\n");
        }

        /* the view: the host's root, its mounts, no rules, no proc agent */
        static struct fs_context ctx;
        ctx.root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        ctx.fsuid = geteuid();
        ctx.fsgid = getegid();
        ctx.keep_groups = true;
        struct stat pst;
        if (ctx.root_fd < 0 || stat("/proc", &pst) < 0)
                return 1;
        ctx.proc_dev = pst.st_dev;
        static uint64_t ids[4096];
        FILE *mi = fopen("/proc/self/mountinfo", "re");
        char line[4096];
        while (mi && ctx.n_mount_ids < 4096 && fgets(line, sizeof(line), mi))
                ids[ctx.n_mount_ids++] = strtoull(line, NULL, 10);
        if (mi)
                fclose(mi);
        qsort(ids, ctx.n_mount_ids, sizeof(ids[0]), cmp_u64);
        ctx.mount_ids = ids;
        pthread_mutex_init(&ctx.agent_lock, NULL);

        static const struct syscall_entry table[] = {
                {.name = "openat", .action = SC_EMULATE, .handler = fs_handle_open, .support = SUPPORT_FULL},
        };
        struct notify_engine_config cfg = {
                .table = table,
                .n_table = 1,
                .userdata = &ctx,
                .contexts = {&ctx},
                .thread_init = fs_worker_init,
                .min_workers = 1,
                .max_workers = 4,
        };
        struct notify_engine *e = NULL;
        int r = notify_engine_start(&cfg, lfd, &e);
        if (r < 0) {
                fprintf(stderr, "hotpath: notify_engine_start: %s\n", strerror(-r));
                return 1;
        }
        if (write(sv[0], "g", 1) != 1)
                return 1;
        int st;
        waitpid(pid, &st, 0);
        printf("openat served: %llu\n", (unsigned long long)notify_engine_count(e, SYS_openat));
        struct notify_umask_stats us;
        notify_umask_get_stats(e, &us);
        printf("umask cache: %llu hits, %llu misses%s\n", (unsigned long long)us.hits, (unsigned long long)us.misses,
               us.off ? " (off)" : "");
        notify_engine_stop(e);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                fprintf(stderr, "hotpath: the child failed (status %#x)\n", st);
                return 1;
        }
        return 0;
}
