/* The child half of the floor benchmark on its own, to run natively and
 * under a sandbox:
 *
 *   sysloop MODE N [PATH]
 *
 * MODE getppid: N getppid() calls; open: N openat(PATH)+close() of an
 * existing file; missing: N openat() of a path that does not exist; creat:
 * openat(PATH, O_WRONLY|O_CREAT|O_TRUNC)+close(); stat: stat(PATH); mkdir:
 * mkdir(PATH)+rmdir(PATH); connect: a TCP socket connected to 127.0.0.1:9
 * (refused: nothing listens there) and closed.
 * Prints "@metric ns_per_call VALUE" (after 1000 untimed warm-up calls) and
 * "cpu_ns_per_call VALUE", the calling thread's own CPU time per call: for a
 * call the kernel answers in the caller's context (native, bubblewrap, an
 * untrapped call under cordon) its whole cost, and steadier than wall time on
 * a shared host; not for a call another process serves (a trapped call, proot,
 * gVisor's ptrace platform), whose time it leaves out. The timed loop stops
 * early after 0.4 s (slow sandboxes), counting what it did. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int one(int mode, const char *path)
{
        switch (mode) {
        case 0:
                syscall(SYS_getppid);
                return 0;
        case 1: {
                int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        return -1;
                close(fd);
                return 0;
        }
        case 2:
                if (syscall(SYS_openat, AT_FDCWD, "/nonexistent/cordon-bench", O_RDONLY | O_CLOEXEC) >= 0 ||
                    errno != ENOENT)
                        return -1;
                return 0;
        case 3: {
                int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
                if (fd < 0)
                        return -1;
                close(fd);
                return 0;
        }
        case 4: {
                struct stat st;
                return stat(path, &st);
        }
        case 5:
                if (mkdir(path, 0700) < 0)
                        return -1;
                return rmdir(path);
        default: {
                int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
                if (fd < 0)
                        return -1;
                struct sockaddr_in sin = {.sin_family = AF_INET, .sin_port = htons(9)};
                sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                int r = connect(fd, (struct sockaddr *)&sin, sizeof(sin));
                int err = errno;
                close(fd);
                return r < 0 && err == ECONNREFUSED ? 0 : -1;
        }
        }
}

int main(int argc, char **argv)
{
        if (argc < 3) {
                fprintf(stderr, "usage: sysloop getppid|open|missing|creat|stat|mkdir|connect N [PATH]\n");
                return 2;
        }
        static const char *const modes[] = {"getppid", "open", "missing", "creat", "stat", "mkdir", "connect"};
        int mode = -1;
        for (int i = 0; i < (int)(sizeof(modes) / sizeof(modes[0])); i++)
                if (!strcmp(argv[1], modes[i]))
                        mode = i;
        long n = atol(argv[2]);
        const char *path = argc > 3 ? argv[3] : "/etc/passwd";
        if (mode < 0 || n <= 0) {
                fprintf(stderr, "sysloop: bad arguments\n");
                return 2;
        }
        for (int i = 0; i < 1000; i++)
                if (one(mode, path) < 0) {
                        fprintf(stderr, "sysloop: %s %s: %s\n", argv[1], path, strerror(errno));
                        return 1;
                }
        uint64_t c0 = cpu_ns(), t0 = now_ns(), t1 = t0;
        long done = 0;
        while (done < n) {
                for (int k = 0; k < 64 && done < n; k++, done++)
                        one(mode, path);
                t1 = now_ns();
                if (t1 - t0 > 400000000ULL)
                        break;
        }
        uint64_t c1 = cpu_ns();
        printf("@metric ns_per_call %.1f\n", (double)(t1 - t0) / (double)done);
        printf("cpu_ns_per_call %.1f\n", (double)(c1 - c0) / (double)done);
        printf("calls %ld of %ld\n", done, n);
        return 0;
}
