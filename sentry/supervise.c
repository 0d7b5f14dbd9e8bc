/* The sentry's main thread while the sandbox runs: watches init through a
 * pidfd (so it never waits on a receive for a child that is gone), takes
 * signals through a signalfd and forwards them, and relays the terminal. */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

#include "common/trace.h"
#include "common/util.h"
#include "sentry/approvals/approvals.h"
#include "sentry/sentry-internal.h"

static void sync_winsize(struct sandbox_state *st)
{
        struct winsize ws;
        if (st->pty_master >= 0 && ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
                ioctl(st->pty_master, TIOCSWINSZ, &ws);
}

void tty_begin(struct sandbox_state *st)
{
        struct termios t;
        /* Only the terminal's foreground job may change its modes: from a
         * background process group (`timeout cordon run ...` puts cordon in
         * its own group) tcsetattr would stop us with SIGTTOU, and the
         * terminal belongs to whoever is in the foreground anyway. */
        bool foreground = tcgetpgrp(STDIN_FILENO) == getpgrp();
        if (tcgetattr(STDIN_FILENO, &t) == 0) {
                /* the sandbox's terminal starts as ours was */
                tcsetattr(st->pty_master, TCSANOW, &t);
                st->saved_termios = t;
                cfmakeraw(&t);
                if (foreground && tcsetattr(STDIN_FILENO, TCSADRAIN, &t) == 0)
                        st->tty_raw = true;
        }
        sync_winsize(st);
}

void tty_end(struct sandbox_state *st)
{
        if (st->tty_raw) {
                tcsetattr(STDIN_FILENO, TCSADRAIN, &st->saved_termios);
                st->tty_raw = false;
        }
}

static int exit_code_of(int status)
{
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return EXIT_SANDBOX;
}

int sentry_timer_arm(int clock, bool absolute, int64_t when_ms)
{
        int fd = timerfd_create(clock, TFD_CLOEXEC | TFD_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        struct itimerspec its = {.it_value = {when_ms / 1000, (when_ms % 1000) * 1000000}};
        if (timerfd_settime(fd, absolute ? TFD_TIMER_ABSTIME : 0, &its, NULL) < 0) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        return fd;
}

static void take_status(struct sandbox_state *st, const struct msg *m)
{
        st->cmd_status = m->value;
        st->tasks_started = m->aux;
        st->have_status = true;
}

/* Which limit stopped the command, if one did: its value, where it came
 * from and how to raise it. */
static void say_limits_reached(const struct sandbox_state *st, const struct cg_stats *cs)
{
        const struct run_limits *l = &st->limits;
        char v[48], src[256], hint[256];
        if (cs->oom_kills > 0 && l->memory_bytes == POLICY_UNSET)
                /* accounted in the group, but no limit of the sandbox's */
                fprintf(stderr,
                        "cordon: out of memory: the kernel killed %lld process(es) in the sandbox, which had no memory "
                        "limit (%s): the host itself ran short\n",
                        (long long)cs->oom_kills, limit_format_source(l, LIMIT_MEMORY, src, sizeof(src)));
        else if (cs->oom_kills > 0) {
                limit_format_value(LIMIT_MEMORY, l->memory_bytes, v, sizeof(v));
                limit_format_source(l, LIMIT_MEMORY, src, sizeof(src));
                limit_raise_hint(l, LIMIT_MEMORY, hint, sizeof(hint));
                if (st->have_status && WIFSIGNALED(st->cmd_status) && WTERMSIG(st->cmd_status) == SIGKILL)
                        fprintf(stderr, "cordon: the command was killed: out of memory (limit %s, %s; %s)\n", v, src,
                                hint);
                else
                        fprintf(stderr,
                                "cordon: out of memory: the kernel killed %lld process(es) in the sandbox (limit %s, "
                                "%s; %s)\n",
                                (long long)cs->oom_kills, v, src, hint);
        }
        if (cs->pids_max_events > 0 && l->max_processes != POLICY_UNSET) {
                limit_format_value(LIMIT_PROCESSES, l->max_processes, v, sizeof(v));
                limit_format_source(l, LIMIT_PROCESSES, src, sizeof(src));
                limit_raise_hint(l, LIMIT_PROCESSES, hint, sizeof(hint));
                fprintf(stderr,
                        "cordon: the sandbox reached its process limit (%s, %s; %s): %lld fork(s) failed there\n", v,
                        src, hint, (long long)cs->pids_max_events);
        }
}

/* Passes sig to init marked for the command's whole process group
 * (init_forward), through init's pidfd (pidfd_send_signal carries the
 * mark). 0 or -errno. */
static int queue_to_group(struct sandbox_state *st, int sig)
{
        if (st->pidfd < 0)
                return -EBADF;
        siginfo_t info = {.si_signo = sig, .si_code = SI_QUEUE};
        info.si_pid = getpid();
        info.si_uid = getuid();
        info.si_value.sival_int = FORWARD_TO_GROUP;
        return syscall(SYS_pidfd_send_signal, st->pidfd, sig, &info, 0) < 0 ? negative_errno() : 0;
}

int supervise(struct sandbox_state *st)
{
        _cleanup_close_ int sfd = signalfd(-1, &st->sigmask, SFD_CLOEXEC | SFD_NONBLOCK);
        _cleanup_close_ int timeout_fd = -1, expiry_fd = -1;
        bool stdin_open = st->pty_master >= 0, master_open = st->pty_master >= 0;
        const char *killed_for = NULL;

        if (st->limits.timeout_ms > 0)
                timeout_fd = sentry_timer_arm(CLOCK_MONOTONIC, false, st->limits.timeout_ms);
        if (st->limits.expires_at != (time_t)-1)
                expiry_fd = sentry_timer_arm(CLOCK_REALTIME, true, (int64_t)st->limits.expires_at * 1000);
        if (timeout_fd < 0 && st->limits.timeout_ms > 0) {
                fprintf(stderr, "cordon: cannot arm the timeout: %s\n", strerror(-timeout_fd));
                sandbox_kill_all(st);
        }
        if (expiry_fd < 0 && st->limits.expires_at != (time_t)-1) {
                fprintf(stderr, "cordon: cannot arm the expiry: %s\n", strerror(-expiry_fd));
                sandbox_kill_all(st);
        }

        for (;;) {
                /* while an approval prompt reads the terminal
                 * (--approve-interactive), our stdin is its, not the
                 * sandbox's: the relay waits */
                bool relay_in = stdin_open && !approvals_prompting(st->approvals);
                struct pollfd p[8] = {
                        {st->pidfd, POLLIN, 0},
                        {st->sock, POLLIN, 0},
                        {sfd, POLLIN, 0},
                        {relay_in ? STDIN_FILENO : -1, POLLIN, 0},
                        {master_open ? st->pty_master : -1, POLLIN, 0},
                        {timeout_fd, POLLIN, 0},
                        {expiry_fd, POLLIN, 0},
                        {st->prompt_wake[0], POLLIN, 0},
                };
                if (poll(p, ELEMENTSOF(p), -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (p[7].revents & POLLIN) {
                        char buf[64];
                        while (read(st->prompt_wake[0], buf, sizeof(buf)) > 0)
                                ;
                }
                if (p[1].revents) {
                        struct msg m;
                        ssize_t n = recv(st->sock, &m, sizeof(m), MSG_DONTWAIT);
                        if (n == (ssize_t)sizeof(m) && m.type == MSG_STATUS) {
                                take_status(st, &m);
                                trace_mark("status received");
                                /* beside init's exit, which tears the
                                 * namespaces down */
                                run_wind_down(st);
                        } else if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                                close(st->sock);
                                st->sock = -1;
                        }
                }
                if (p[2].revents & POLLIN) {
                        struct signalfd_siginfo si;
                        while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
                                int sig = (int)si.ssi_signo;
                                if (sig == SIGCHLD || sig == SIGPIPE)
                                        continue;
                                if (sig == SIGWINCH && st->pty_master >= 0) {
                                        sync_winsize(st);
                                        continue;
                                }
                                /* the terminal's own (Ctrl-C, Ctrl-\, a
                                 * hangup) reach the whole job natively */
                                if (!(si.ssi_code == SI_KERNEL && (sig == SIGINT || sig == SIGQUIT || sig == SIGHUP) &&
                                      queue_to_group(st, sig) == 0))
                                        kill(st->init_pid, sig);
                                if (sig == SIGTSTP && st->pty_master < 0)
                                        /* Stopped with the command, as the
                                         * job the shell sees: its fg or bg
                                         * continues us, and that SIGCONT is
                                         * forwarded in turn. (With a pty
                                         * the host terminal is raw and ^Z
                                         * is the sandbox's; a stop sent to
                                         * us stops the command only.) */
                                        raise(SIGSTOP);
                        }
                }
                if (p[3].revents && relay_some(STDIN_FILENO, st->pty_master) < 0) {
                        stdin_open = false;
                        /* end of our input: the terminal's EOF character tells
                         * the command, as typing Ctrl-D would */
                        struct termios t;
                        if (tcgetattr(st->pty_master, &t) == 0 && t.c_cc[VEOF])
                                (void)write_all(st->pty_master, &t.c_cc[VEOF], 1);
                }
                if (p[4].revents && relay_some(st->pty_master, STDOUT_FILENO) < 0)
                        master_open = false;
                if ((p[5].revents & POLLIN) && !killed_for) {
                        killed_for = "timeout";
                        sandbox_kill_all(st);
                }
                if ((p[6].revents & POLLIN) && !killed_for) {
                        killed_for = "expired";
                        sandbox_kill_all(st);
                }
                if (p[0].revents & POLLIN)
                        break;
        }

        /* init is gone: take its exit, and the last of the terminal's output */
        if (master_open) {
                int fl = fcntl(st->pty_master, F_GETFL);
                fcntl(st->pty_master, F_SETFL, fl | O_NONBLOCK);
                while (relay_some(st->pty_master, STDOUT_FILENO) == 0) {
                        struct pollfd q = {st->pty_master, POLLIN, 0};
                        if (poll(&q, 1, 50) <= 0)
                                break;
                }
        }
        if (!st->have_status && st->sock >= 0) {
                struct msg m;
                if (recv(st->sock, &m, sizeof(m), MSG_DONTWAIT) == (ssize_t)sizeof(m) && m.type == MSG_STATUS)
                        take_status(st, &m);
        }
        int init_status = 0;
        while (waitpid(st->init_pid, &init_status, 0) < 0 && errno == EINTR)
                ;
        trace_mark("init reaped");
        if (st->pty_master >= 0)
                close(st->pty_master);

        /* the end's reason, in order of precedence */
        /* only the counters that say a limit was reached (--stats reads
         * the rest later, stats.c): the end of every run waits for these */
        struct cg_stats cs;
        bool have_cs = st->cg && cgroup_limit_events(st->cg, &cs) == 0;
        bool oom = have_cs && cs.oom_kills > 0;
        if (have_cs)
                say_limits_reached(st, &cs);
        if (killed_for) {
                st->exit_reason = killed_for;
                if (streq(killed_for, "timeout"))
                        fprintf(stderr, "cordon: the sandbox reached its timeout (%lld ms); every process was killed\n",
                                (long long)st->limits.timeout_ms);
                else
                        fprintf(stderr, "cordon: the sandbox reached its expiry time; every process was killed\n");
                return EXIT_TIMEOUT;
        }
        if (oom)
                st->exit_reason = "oom";
        if (st->have_status) {
                if (!oom)
                        st->exit_reason = WIFSIGNALED(st->cmd_status) ? "signaled" : "exited";
                return exit_code_of(st->cmd_status);
        }
        if (WIFSIGNALED(init_status)) {
                if (!oom)
                        st->exit_reason = "killed";
                fprintf(stderr, "cordon: the sandbox was killed (signal %d)\n", WTERMSIG(init_status));
                return 128 + WTERMSIG(init_status);
        }
        st->exit_reason = "sentry-error";
        fprintf(stderr, "cordon: the sandbox ended without reporting the command's status\n");
        return EXIT_SANDBOX;
}
