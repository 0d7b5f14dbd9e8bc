/* sigstorm: file syscalls under a storm of timer signals.
 *
 * A SIGALRM handler (SA_RESTART) counts signals while setitimer(ITIMER_REAL) fires every
 * millisecond. Meanwhile one or more threads loop, in the directory given as the argument:
 *
 *   open(O_CREAT|O_EXCL|O_WRONLY) a unique file, write a known pattern, close,
 *   open(O_RDONLY), read it back and compare, close, unlink;
 *
 * and the same again with openat2(dirfd, name, RESOLVE_BENEATH) in place of open. Under
 * cordon every open is trapped and emulated by the supervisor, so a signal arriving while
 * the call waits for the supervisor must neither surface as EINTR (SA_RESTART is set) nor
 * make a restarted O_EXCL create see its own first attempt (EEXIST), nor lose a file (ENOENT).
 * Every unexpected result counts as an error and is printed (the first few of them).
 *
 * Where openat2 itself answers ENOSYS (an old kernel, or cordon with openat2 forced absent)
 * the openat2 half is left out and "sigstorm: openat2 absent (ENOSYS)" is printed first, so a
 * test can tell (and refuse it where openat2 should be there).
 *
 * Usage: sigstorm [-t THREADS] [-d SECONDS] [-n ITERATIONS] DIR
 * Prints "sigstorm: N iterations, M signals, E errors"; exits 0 iff E == 0 and M > 100. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif
#ifndef RESOLVE_BENEATH
#define RESOLVE_BENEATH 0x08
#endif

/* struct open_how from <linux/openat2.h>, which older headers lack */
struct sigstorm_open_how {
        uint64_t flags;
        uint64_t mode;
        uint64_t resolve;
};

#define PATTERN_SIZE 4096
#define MAX_PRINTED  20
#define MIN_SECONDS  0.5 /* run at least this long, so that the timer fires often enough */

static atomic_long n_signals;
static atomic_long n_iterations;
static atomic_long n_errors;
static bool no_openat2; /* openat2 answered ENOSYS before the storm began */
static atomic_long n_printed;

static const char *dir;
static int dirfd_;
static double duration = 3.0;
static long max_iterations = 20000;
static int n_threads = 1;
static double t_start;

static void on_alarm(int sig)
{
        (void)sig;
        atomic_fetch_add(&n_signals, 1);
}

static double now(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void error(int thread, long iter, const char *what, const char *name, int err)
{
        atomic_fetch_add(&n_errors, 1);
        if (atomic_fetch_add(&n_printed, 1) < MAX_PRINTED) {
                if (err)
                        fprintf(stderr, "sigstorm: thread %d iteration %ld: %s %s: %s (errno %d)\n", thread, iter, what,
                                name, strerror(err), err);
                else
                        fprintf(stderr, "sigstorm: thread %d iteration %ld: %s %s\n", thread, iter, what, name);
        }
}

static int do_openat2(const char *name, int flags, mode_t mode)
{
        struct sigstorm_open_how how = {
                .flags = (uint64_t)flags | O_CLOEXEC,
                .mode = (flags & O_CREAT) ? mode : 0,
                .resolve = RESOLVE_BENEATH,
        };
        return (int)syscall(SYS_openat2, dirfd_, name, &how, sizeof(how));
}

/* Opens with the chosen variant: full path with open(), or name relative to the directory
 * with openat2(RESOLVE_BENEATH). */
static int open_variant(bool use_openat2, const char *path, const char *name, int flags, mode_t mode)
{
        if (use_openat2)
                return do_openat2(name, flags, mode);
        return open(path, flags | O_CLOEXEC, mode);
}

static void fill(unsigned char *buf, int thread, long iter)
{
        for (size_t i = 0; i < PATTERN_SIZE; i++)
                buf[i] = (unsigned char)((i * 31u + (size_t)iter * 7u + (size_t)thread * 13u) & 0xff);
}

/* One round trip: create, write, close, reopen, read, compare, close, unlink. */
static void round_trip(int thread, long iter, bool use_openat2)
{
        char name[128], path[4096];
        unsigned char want[PATTERN_SIZE], got[PATTERN_SIZE + 1];
        const char *v = use_openat2 ? "openat2" : "open";

        snprintf(name, sizeof(name), "sigstorm.%d.%d.%ld.%s", (int)getpid(), thread, iter, v);
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        fill(want, thread, iter);

        int fd = open_variant(use_openat2, path, name, O_CREAT | O_EXCL | O_WRONLY, 0644);
        if (fd < 0) {
                error(thread, iter, use_openat2 ? "openat2(O_CREAT|O_EXCL)" : "open(O_CREAT|O_EXCL)", name, errno);
                /* a file left behind by a restarted create: clean it up for the next runs */
                unlink(path);
                return;
        }
        size_t off = 0;
        while (off < PATTERN_SIZE) {
                ssize_t n = write(fd, want + off, PATTERN_SIZE - off);
                if (n < 0) {
                        error(thread, iter, "write", name, errno);
                        break;
                }
                if (n == 0) {
                        error(thread, iter, "write returned 0 for", name, 0);
                        break;
                }
                off += (size_t)n;
        }
        if (close(fd) < 0)
                error(thread, iter, "close (after write)", name, errno);

        fd = open_variant(use_openat2, path, name, O_RDONLY, 0);
        if (fd < 0) {
                error(thread, iter, use_openat2 ? "openat2(O_RDONLY)" : "open(O_RDONLY)", name, errno);
        } else {
                off = 0;
                for (;;) {
                        ssize_t n = read(fd, got + off, sizeof(got) - off);
                        if (n < 0) {
                                error(thread, iter, "read", name, errno);
                                break;
                        }
                        if (n == 0)
                                break;
                        off += (size_t)n;
                        if (off == sizeof(got))
                                break;
                }
                if (off != PATTERN_SIZE || memcmp(got, want, PATTERN_SIZE) != 0) {
                        char what[96];
                        snprintf(what, sizeof(what), "content mismatch (%zu bytes read, %d expected) in", off,
                                 PATTERN_SIZE);
                        error(thread, iter, what, name, 0);
                }
                if (close(fd) < 0)
                        error(thread, iter, "close (after read)", name, errno);
        }
        if (unlink(path) < 0)
                error(thread, iter, "unlink", name, errno);
}

/* openat2 with RESOLVE_BENEATH must refuse to climb out of the directory. */
static void check_beneath(int thread)
{
        int fd = do_openat2("../sigstorm-escape-check", O_RDONLY, 0);
        if (fd >= 0) {
                close(fd);
                error(thread, -1, "openat2(RESOLVE_BENEATH) of ../ succeeded:", "../sigstorm-escape-check", 0);
        } else if (errno != EXDEV) {
                error(thread, -1, "openat2(RESOLVE_BENEATH) of ../ (expected EXDEV)", "../sigstorm-escape-check",
                      errno);
        }
}

static void *worker(void *arg)
{
        int thread = (int)(intptr_t)arg;
        long per_thread = max_iterations / n_threads;
        if (per_thread < 1)
                per_thread = 1;

        if (!no_openat2)
                check_beneath(thread);
        for (long i = 0;; i++) {
                double elapsed = now() - t_start;
                if (elapsed >= duration)
                        break;
                if (i >= per_thread && elapsed >= MIN_SECONDS)
                        break;
                round_trip(thread, i, false);
                if (!no_openat2)
                        round_trip(thread, i, true);
                atomic_fetch_add(&n_iterations, 1);
        }
        return NULL;
}

static void usage(void)
{
        fprintf(stderr, "usage: sigstorm [-t THREADS] [-d SECONDS] [-n ITERATIONS] DIR\n");
        exit(2);
}

int main(int argc, char **argv)
{
        int c;
        while ((c = getopt(argc, argv, "t:d:n:h")) != -1) {
                switch (c) {
                case 't':
                        n_threads = atoi(optarg);
                        if (n_threads < 1 || n_threads > 256)
                                usage();
                        break;
                case 'd':
                        duration = atof(optarg);
                        if (duration <= 0)
                                usage();
                        break;
                case 'n':
                        max_iterations = atol(optarg);
                        if (max_iterations < 1)
                                usage();
                        break;
                default:
                        usage();
                }
        }
        if (optind + 1 != argc)
                usage();
        dir = argv[optind];
        dirfd_ = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dirfd_ < 0) {
                fprintf(stderr, "sigstorm: %s: %s\n", dir, strerror(errno));
                return 2;
        }

        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_alarm;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGALRM, &sa, NULL) < 0) {
                perror("sigstorm: sigaction");
                return 2;
        }
        /* before the timer: an ENOSYS here cannot be a signal's doing */
        int probe = do_openat2(".", O_RDONLY | O_DIRECTORY, 0);
        if (probe >= 0)
                close(probe);
        else if (errno == ENOSYS) {
                no_openat2 = true;
                printf("sigstorm: openat2 absent (ENOSYS)\n");
        }
        struct itimerval it = {.it_interval = {0, 1000}, .it_value = {0, 1000}};
        t_start = now();
        if (setitimer(ITIMER_REAL, &it, NULL) < 0) {
                perror("sigstorm: setitimer");
                return 2;
        }

        pthread_t *tids = calloc((size_t)n_threads, sizeof(pthread_t));
        if (!tids)
                return 2;
        int started = 0;
        for (int i = 0; i < n_threads; i++) {
                int r = pthread_create(&tids[i], NULL, worker, (void *)(intptr_t)i);
                if (r != 0) {
                        /* EAGAIN may itself be interrupted-create fallout: count it */
                        error(i, -1, "pthread_create", "", r);
                        break;
                }
                started++;
        }
        for (int i = 0; i < started; i++)
                pthread_join(tids[i], NULL);

        struct itimerval off = {{0, 0}, {0, 0}};
        setitimer(ITIMER_REAL, &off, NULL);
        free(tids);
        close(dirfd_);

        long iters = atomic_load(&n_iterations), sigs = atomic_load(&n_signals), errs = atomic_load(&n_errors);
        printf("sigstorm: %ld iterations, %ld signals, %ld errors\n", iters, sigs, errs);
        fflush(stdout);
        return (errs == 0 && sigs > 100) ? 0 : 1;
}
