#include "config.h"

/* Unit tests for notify/signal.c: which pending signal a thread whose call
 * waits in the sentry is certain to take, read from /proc/TID/status. The
 * live cases use a stopped child (a stopped thread takes no signal, so a
 * signal sent to it stays pending), with one or two threads. */

#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common/util.h"
#include "notify/notify-internal.h"
#include "notify/notify.h"

#define BIT(s) (UINT64_C(1) << ((s)-1))

static const char *status_text(const char *pnd, const char *shd, const char *blk, const char *ign, const char *cgt,
                               int threads, char *buf, size_t size)
{
        snprintf(buf, size,
                 "Name:\tx\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t100\nNgid:\t0\nPid:\t%d\nPPid:\t1\n"
                 "Threads:\t%d\nSigQ:\t0/1000\nSigPnd:\t%s\nShdPnd:\t%s\nSigBlk:\t%s\nSigIgn:\t%s\nSigCgt:\t%s\n"
                 "CapInh:\t0000000000000000\n",
                 threads > 1 ? 101 : 100, threads, pnd, shd, blk, ign, cgt);
        return buf;
}

START_TEST(test_parse)
{
        char buf[1024];
        struct notify_sigstate s;
        ck_assert_int_eq(notify_sig_parse(status_text("0000000000000200", "0000000000002000", "0000000000000001",
                                                      "0000000000001000", "0000000000004200", 3, buf, sizeof(buf)),
                                          &s),
                         0);
        ck_assert_uint_eq(s.pnd, 0x200);
        ck_assert_uint_eq(s.shd, BIT(SIGALRM));
        ck_assert_uint_eq(s.blk, BIT(SIGHUP));
        ck_assert_uint_eq(s.ign, 0x1000);
        ck_assert_uint_eq(s.cgt, 0x4200);
        ck_assert_int_eq(s.tgid, 100);
        ck_assert(!s.leader);
        ck_assert_uint_eq(s.threads, 3);
        /* a line missing, or not a number: refused, never guessed */
        ck_assert_int_eq(notify_sig_parse("Name:\tx\nSigPnd:\t0\n", &s), -EINVAL);
        status_text("0", "0", "zz", "0", "0", 1, buf, sizeof(buf));
        ck_assert_int_eq(notify_sig_parse(buf, &s), -EINVAL);
}
END_TEST

START_TEST(test_takeable)
{
        struct notify_sigstate s = {.cgt = BIT(SIGALRM) | BIT(SIGINT), .leader = false, .threads = 2};
        /* a thread's own pending signal, handled and not blocked */
        s.pnd = BIT(SIGALRM);
        ck_assert_uint_eq(notify_sig_takeable(&s, ~UINT64_C(0), 0), BIT(SIGALRM));
        s.blk = BIT(SIGALRM);
        ck_assert_uint_eq(notify_sig_takeable(&s, 0, 0), 0);
        s.blk = 0;
        s.pnd = 0;
        /* a process signal: only where no other thread could take it */
        s.shd = BIT(SIGINT);
        ck_assert_uint_eq(notify_sig_shared(&s), BIT(SIGINT));
        ck_assert_uint_eq(notify_sig_takeable(&s, BIT(SIGINT), BIT(SIGINT)), 0);
        ck_assert_uint_eq(notify_sig_takeable(&s, ~BIT(SIGINT), 0), BIT(SIGINT));
        /* the leader: once seen on the look before */
        s.leader = true;
        ck_assert_uint_eq(notify_sig_takeable(&s, BIT(SIGINT), 0), 0);
        ck_assert_uint_eq(notify_sig_takeable(&s, BIT(SIGINT), BIT(SIGINT)), BIT(SIGINT));
        /* unhandled: only a stop signal not ignored counts */
        s.shd = BIT(SIGUSR1) | BIT(SIGTSTP);
        ck_assert_uint_eq(notify_sig_takeable(&s, 0, 0), BIT(SIGTSTP));
        s.ign = BIT(SIGTSTP);
        ck_assert_uint_eq(notify_sig_takeable(&s, 0, 0), 0);
        s.shd = BIT(SIGSTOP);
        ck_assert_uint_eq(notify_sig_takeable(&s, 0, 0), BIT(SIGSTOP));
}
END_TEST

static void on_usr1(int sig)
{
        (void)sig;
}

static int tid_pipe[2];
static sigset_t second_mask;

static void *second(void *arg)
{
        (void)arg;
        pthread_sigmask(SIG_SETMASK, &second_mask, NULL);
        pid_t tid = (pid_t)syscall(SYS_gettid);
        (void)!write(tid_pipe[1], &tid, sizeof(tid));
        for (;;)
                pause();
        return NULL;
}

/* A stopped child handling SIGUSR1, with a second thread when two; the
 * main thread (the leader) and the second block it as asked. */
static pid_t stopped_child(bool two, bool leader_blocks, bool second_blocks, pid_t *ret_second)
{
        ck_assert_int_eq(pipe2(tid_pipe, O_CLOEXEC), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                signal(SIGUSR1, on_usr1);
                sigemptyset(&second_mask);
                if (second_blocks)
                        sigaddset(&second_mask, SIGUSR1);
                pthread_t t;
                if (two)
                        pthread_create(&t, NULL, second, NULL);
                else {
                        pid_t none = 0;
                        (void)!write(tid_pipe[1], &none, sizeof(none));
                }
                sigset_t m;
                sigemptyset(&m);
                if (leader_blocks)
                        sigaddset(&m, SIGUSR1);
                pthread_sigmask(SIG_SETMASK, &m, NULL);
                for (;;)
                        pause();
        }
        pid_t tid;
        ck_assert_int_eq(read(tid_pipe[0], &tid, sizeof(tid)), (ssize_t)sizeof(tid));
        close(tid_pipe[0]);
        close(tid_pipe[1]);
        /* the masks are set before the tid is written, the leader's a moment after */
        usleep(50 * 1000);
        ck_assert_int_eq(kill(pid, SIGSTOP), 0);
        int st;
        ck_assert_int_eq(waitpid(pid, &st, WUNTRACED), pid);
        ck_assert(WIFSTOPPED(st));
        *ret_second = tid;
        return pid;
}

static void reap(pid_t pid)
{
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
}

START_TEST(test_live_one_thread)
{
        _cleanup_close_ int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        pid_t t2;
        pid_t pid = stopped_child(false, false, false, &t2);
        uint64_t seen = 0;
        ck_assert_int_eq(notify_sig_check(proc, pid, &seen), 0); /* nothing pending */
        ck_assert_int_eq(kill(pid, SIGUSR1), 0);
        ck_assert_int_eq(notify_sig_check(proc, pid, &seen), 1); /* the only thread */
        reap(pid);
        pid = stopped_child(false, true, false, &t2);
        seen = 0;
        ck_assert_int_eq(kill(pid, SIGUSR1), 0);
        ck_assert_int_eq(notify_sig_check(proc, pid, &seen), 0); /* blocked */
        reap(pid);
        seen = 0;
        ck_assert_int_lt(notify_sig_check(proc, pid, &seen), 0); /* gone */
}
END_TEST

START_TEST(test_live_two_threads)
{
        _cleanup_close_ int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        pid_t t2;
        /* neither blocks: the second thread could take it, the leader only
         * once it stayed pending */
        pid_t pid = stopped_child(true, false, false, &t2);
        ck_assert_int_eq(kill(pid, SIGUSR1), 0);
        uint64_t seen_l = 0, seen_2 = 0;
        ck_assert_int_eq(notify_sig_check(proc, t2, &seen_2), 0);
        ck_assert_int_eq(notify_sig_check(proc, t2, &seen_2), 0);
        ck_assert_int_eq(notify_sig_check(proc, pid, &seen_l), 0);
        ck_assert_int_eq(notify_sig_check(proc, pid, &seen_l), 1);
        /* sent to the second thread alone: its own */
        ck_assert_int_eq((int)syscall(SYS_tgkill, pid, t2, SIGUSR1), 0);
        seen_2 = 0;
        ck_assert_int_eq(notify_sig_check(proc, t2, &seen_2), 1);
        reap(pid);
        /* the leader blocks it: the second thread is the only taker */
        pid = stopped_child(true, true, false, &t2);
        ck_assert_int_eq(kill(pid, SIGUSR1), 0);
        seen_l = seen_2 = 0;
        ck_assert_int_eq(notify_sig_check(proc, t2, &seen_2), 1);
        ck_assert_int_eq(notify_sig_check(proc, pid, &seen_l), 0);
        ck_assert_int_eq(notify_sig_check(proc, pid, &seen_l), 0);
        reap(pid);
}
END_TEST

static Suite *signal_suite(void)
{
        Suite *s = suite_create("notify-signal");
        TCase *tc = tcase_create("status");
        tcase_add_test(tc, test_parse);
        tcase_add_test(tc, test_takeable);
        suite_add_tcase(s, tc);
        tc = tcase_create("live");
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_live_one_thread);
        tcase_add_test(tc, test_live_two_threads);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(signal_suite());
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
