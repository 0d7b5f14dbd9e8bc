/* The sentry's own seccomp allow-list (sentry/confine.c): each test confines
 * a forked process and checks what it may still do and what it may not. */
#include "config.h"

#include <check.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common/util.h"
#include "sentry/sentry-internal.h"

/* Runs fn in a confined child; returns its wait status. fn's return value
 * becomes the exit code. */
static int confined(int (*fn)(void))
{
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                const char *bad = NULL;
                if (sentry_confine(&bad) < 0)
                        _exit(99);
                _exit(fn());
        }
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        return status;
}

static int try_exec(void)
{
        char *argv[] = {"/bin/true", NULL}, *envp[] = {NULL};
        execve("/bin/true", argv, envp);
        return 10; /* refused instead of killed */
}

START_TEST(exec_kills)
{
        int status = confined(try_exec);
        ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "status %#x", status);
}
END_TEST

static int try_fork(void)
{
        pid_t p = fork();
        if (p == 0)
                _exit(0);
        return p < 0 && errno == EPERM ? 0 : 10;
}

START_TEST(no_new_process)
{
        int status = confined(try_fork);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
}
END_TEST

static void *thread_fn(void *arg)
{
        int fd = openat(AT_FDCWD, "/proc/self/status", O_RDONLY | O_CLOEXEC);
        if (fd >= 0)
                close(fd);
        *(int *)arg = fd >= 0 ? 1 : -1;
        return NULL;
}

/* The engine starts workers while the sandbox runs: threads must still
 * work (pthread_create goes from clone3 to clone), and they inherit the
 * filter. */
static int try_threads(void)
{
        int got = 0;
        pthread_t t;
        if (pthread_create(&t, NULL, thread_fn, &got) != 0)
                return 10;
        pthread_join(t, NULL);
        if (got != 1)
                return 11;
        if (syscall(SYS_unshare, CLONE_FS) != 0) /* a worker's private fs context */
                return 12;
        return 0;
}

START_TEST(threads_and_files_work)
{
        int status = confined(try_threads);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x", status);
}
END_TEST

static int try_refused(void)
{
        if (mount("none", "/", NULL, MS_REMOUNT, NULL) == 0 || errno != EPERM)
                return 10;
        if (unshare(CLONE_NEWNS) == 0 || errno != EPERM)
                return 11;
        if (unshare(CLONE_NEWUSER) == 0 || errno != EPERM)
                return 12;
        if (socket(AF_PACKET, SOCK_RAW, 0) >= 0 || errno != EPERM)
                return 13;
#ifndef CORDON_SANITIZERS /* allowed there for LeakSanitizer (confine.c) */
        if (syscall(SYS_ptrace, 0 /* PTRACE_TRACEME */, 0, 0, 0) == 0 || errno != EPERM)
                return 14;
#endif
        if (syscall(SYS_bpf, 0, NULL, 0) == 0 || errno != EPERM)
                return 15;
        if (syscall(SYS_init_module, NULL, 0, "") == 0 || errno != EPERM)
                return 16;
        /* what the gate needs still works */
        int s = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (s < 0)
                return 17;
        close(s);
        return 0;
}

START_TEST(refused_calls)
{
        int status = confined(try_refused);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %#x (exit %d)", status,
                      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}
END_TEST

static Suite *suite(void)
{
        Suite *s = suite_create("sentry-confine");
        TCase *tc = tcase_create("confine");
        tcase_add_test(tc, exec_kills);
        tcase_add_test(tc, no_new_process);
        tcase_add_test(tc, threads_and_files_work);
        tcase_add_test(tc, refused_calls);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(suite());
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        int run = srunner_ntests_run(sr);
        srunner_free(sr);
        printf("%d passed, %d failed\n", run - failed, failed);
        return failed ? 1 : 0;
}
