/* File I/O on an already-open file, timed inside the program (no start-up,
 * no open in the timed part): the sandbox must add nothing here.
 *
 *   fio DIR MB ROUNDS
 *
 * Opens DIR/fio.PID once, then ROUNDS x (write MB MiB in 64 KiB blocks,
 * seek back, read them), and prints "@metric seconds VALUE". */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
        if (argc < 4) {
                fprintf(stderr, "usage: fio DIR MB ROUNDS\n");
                return 2;
        }
        char path[4096];
        snprintf(path, sizeof(path), "%s/fio.%d", argv[1], (int)getpid());
        long mb = atol(argv[2]), rounds = atol(argv[3]);
        static char buf[65536];
        memset(buf, 'x', sizeof(buf));
        int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) {
                perror(path);
                return 1;
        }
        unlink(path);
        double t0 = now();
        for (long r = 0; r < rounds; r++) {
                if (lseek(fd, 0, SEEK_SET) < 0)
                        return 1;
                for (long i = 0; i < mb * 16; i++)
                        if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
                                perror("write");
                                return 1;
                        }
                if (lseek(fd, 0, SEEK_SET) < 0)
                        return 1;
                for (long i = 0; i < mb * 16; i++)
                        if (read(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
                                perror("read");
                                return 1;
                        }
        }
        printf("@metric seconds %.6f\n", now() - t0);
        close(fd);
        return 0;
}
