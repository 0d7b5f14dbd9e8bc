/* The child half of the floor benchmark on its own, to run natively and
 * under a sandbox:
 *
 *   sysloop MODE N [PATH]
 *
 * MODE getppid: N getppid() calls; open: N openat(PATH)+close() of an
 * existing file; missing: N openat() of a path that does not exist.
 * Prints "@metric ns_per_call VALUE" (after 1000 untimed warm-up calls). The
 * timed loop stops early after 1 s (slow sandboxes), counting what it did. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
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
        default:
                if (syscall(SYS_openat, AT_FDCWD, "/nonexistent/cordon-bench", O_RDONLY | O_CLOEXEC) >= 0 ||
                    errno != ENOENT)
                        return -1;
                return 0;
        }
}

int main(int argc, char **argv)
{
        if (argc < 3) {
                fprintf(stderr, "usage: sysloop getppid|open|missing N [PATH]\n");
                return 2;
        }
        int mode = !strcmp(argv[1], "getppid")   ? 0
                   : !strcmp(argv[1], "open")    ? 1
                   : !strcmp(argv[1], "missing") ? 2
                                                 : -1;
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
        uint64_t t0 = now_ns(), t1 = t0;
        long done = 0;
        while (done < n) {
                for (int k = 0; k < 64 && done < n; k++, done++)
                        one(mode, path);
                t1 = now_ns();
                if (t1 - t0 > 1000000000ULL)
                        break;
        }
        printf("@metric ns_per_call %.1f\n", (double)(t1 - t0) / (double)done);
        printf("calls %ld of %ld\n", done, n);
        return 0;
}
