/* fifosig: an open of a FIFO with no writer, interrupted by a signal the
 * opener handles; natively the handler runs during the open, which is then
 * restarted (SA_RESTART) or fails with EINTR.
 *
 * Usage: fifosig [-r] MODE FIFO
 *   -r       the SIGALRM handler has SA_RESTART
 *   MODE     main:   the process's only thread opens; SIGALRM from a timer
 *            idle:   the main thread opens; a second thread, which does not
 *                    block SIGALRM, sleeps (natively the main thread, the
 *                    leader, takes the timer's signal)
 *            thread: a second thread opens; the main thread blocks SIGALRM
 *            tkill:  a second thread opens; SIGALRM sent to it alone
 *            other:  a second thread opens; the main thread, which does not
 *                    block SIGALRM, takes the timer's signal (natively the
 *                    open goes on waiting, and succeeds even without -r)
 * A writer process waits until the handler has run (it writes to a pipe),
 * then opens the FIFO and writes "x"; if the handler has not run within 3 s
 * it writes "late" instead. Prints "open: ok" or "open: EINTR" (after which
 * the FIFO is opened again), then "read: x" (or "read: late"). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int woke[2];
static const char *fifo;

static void on_alarm(int sig)
{
        (void)sig;
        (void)!write(woke[1], "!", 1);
}

static void *opener(void *arg)
{
        (void)arg;
        int fd = open(fifo, O_RDONLY);
        if (fd < 0) {
                printf("open: %s\n", errno == EINTR ? "EINTR" : strerror(errno));
                if (errno != EINTR)
                        printf("errno %d\n", errno);
                fd = open(fifo, O_RDONLY);
        } else
                printf("open: ok\n");
        char buf[16] = "";
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        printf("read: %.*s\n", n > 0 ? (int)n : 0, buf);
        return NULL;
}

static void *idle(void *arg)
{
        (void)arg;
        for (;;)
                pause();
        return NULL;
}

int main(int argc, char **argv)
{
        int i = 1;
        bool restart = argc > i && strcmp(argv[i], "-r") == 0;
        i += restart;
        if (argc != i + 2) {
                fprintf(stderr, "usage: fifosig [-r] main|idle|thread|tkill|other FIFO\n");
                return 2;
        }
        const char *mode = argv[i];
        fifo = argv[i + 1];
        setvbuf(stdout, NULL, _IONBF, 0);
        if (pipe(woke) < 0)
                return 1;
        pid_t w = fork();
        if (w == 0) {
                struct pollfd p = {.fd = woke[0], .events = POLLIN};
                int r = poll(&p, 1, 3000);
                int fd = open(fifo, O_WRONLY);
                (void)!write(fd, r > 0 ? "x" : "late", r > 0 ? 1 : 4);
                _exit(0);
        }
        struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = restart ? SA_RESTART : 0};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGALRM, &sa, NULL);
        struct itimerval it = {.it_value = {0, 200000}};
        pthread_t t;
        if (strcmp(mode, "main") == 0) {
                setitimer(ITIMER_REAL, &it, NULL);
                opener(NULL);
        } else if (strcmp(mode, "idle") == 0) {
                pthread_create(&t, NULL, idle, NULL);
                setitimer(ITIMER_REAL, &it, NULL);
                opener(NULL);
        } else if (strcmp(mode, "other") == 0) {
                pthread_create(&t, NULL, opener, NULL);
                setitimer(ITIMER_REAL, &it, NULL);
                pthread_join(t, NULL);
        } else if (strcmp(mode, "thread") == 0 || strcmp(mode, "tkill") == 0) {
                bool blocks = strcmp(mode, "thread") == 0;
                sigset_t set;
                sigemptyset(&set);
                sigaddset(&set, SIGALRM);
                pthread_create(&t, NULL, opener, NULL);
                if (blocks) {
                        pthread_sigmask(SIG_BLOCK, &set, NULL);
                        setitimer(ITIMER_REAL, &it, NULL);
                } else {
                        nanosleep(&(struct timespec){0, 200000000}, NULL);
                        pthread_kill(t, SIGALRM);
                }
                pthread_join(t, NULL);
        } else
                return 2;
        waitpid(w, NULL, 0);
        return 0;
}
