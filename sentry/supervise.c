/* The sentry's main thread while the sandbox runs: watches init through a
 * pidfd (so it never waits on a receive for a child that is gone), takes
 * signals through a signalfd and forwards them, and relays the terminal. */
#include "config.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "common/util.h"
#include "sentry/run-internal.h"

static void sync_winsize(struct sandbox_state *st)
{
        struct winsize ws;
        if (st->pty_master >= 0 && ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
                ioctl(st->pty_master, TIOCSWINSZ, &ws);
}

void tty_begin(struct sandbox_state *st)
{
        struct termios t;
        if (tcgetattr(STDIN_FILENO, &t) == 0) {
                /* the sandbox's terminal starts as ours was */
                tcsetattr(st->pty_master, TCSANOW, &t);
                st->saved_termios = t;
                cfmakeraw(&t);
                if (tcsetattr(STDIN_FILENO, TCSADRAIN, &t) == 0)
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

/* Copies what is available from in to out; -1 on EOF or error of in. */
static int relay(int in, int out)
{
        char buf[16384];
        ssize_t n = read(in, buf, sizeof(buf));
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
                return 0;
        if (n <= 0)
                return -1;
        (void)write_all(out, buf, (size_t)n);
        return 0;
}

static int exit_code_of(int status)
{
        if (WIFEXITED(status))
                return WEXITSTATUS(status);
        if (WIFSIGNALED(status))
                return 128 + WTERMSIG(status);
        return EXIT_SANDBOX;
}

int supervise(struct sandbox_state *st)
{
        _cleanup_close_ int sfd = signalfd(-1, &st->sigmask, SFD_CLOEXEC | SFD_NONBLOCK);
        bool have_status = false, stdin_open = st->pty_master >= 0, master_open = st->pty_master >= 0;
        int status = 0;

        for (;;) {
                struct pollfd p[5] = {
                        {st->pidfd, POLLIN, 0},
                        {st->sock, POLLIN, 0},
                        {sfd, POLLIN, 0},
                        {stdin_open ? STDIN_FILENO : -1, POLLIN, 0},
                        {master_open ? st->pty_master : -1, POLLIN, 0},
                };
                if (poll(p, ELEMENTSOF(p), -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (p[1].revents) {
                        struct msg m;
                        ssize_t n = recv(st->sock, &m, sizeof(m), MSG_DONTWAIT);
                        if (n == (ssize_t)sizeof(m) && m.type == MSG_STATUS) {
                                status = m.value;
                                have_status = true;
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
                                kill(st->init_pid, sig);
                        }
                }
                if (p[3].revents && relay(STDIN_FILENO, st->pty_master) < 0) {
                        stdin_open = false;
                        /* end of our input: the terminal's EOF character tells
                         * the command, as typing Ctrl-D would */
                        struct termios t;
                        if (tcgetattr(st->pty_master, &t) == 0 && t.c_cc[VEOF])
                                (void)write_all(st->pty_master, &t.c_cc[VEOF], 1);
                }
                if (p[4].revents && relay(st->pty_master, STDOUT_FILENO) < 0)
                        master_open = false;
                if (p[0].revents & POLLIN)
                        break;
        }

        /* init is gone: take its exit, and the last of the terminal's output */
        if (master_open) {
                int fl = fcntl(st->pty_master, F_GETFL);
                fcntl(st->pty_master, F_SETFL, fl | O_NONBLOCK);
                while (relay(st->pty_master, STDOUT_FILENO) == 0) {
                        struct pollfd q = {st->pty_master, POLLIN, 0};
                        if (poll(&q, 1, 50) <= 0)
                                break;
                }
        }
        if (!have_status && st->sock >= 0) {
                struct msg m;
                if (recv(st->sock, &m, sizeof(m), MSG_DONTWAIT) == (ssize_t)sizeof(m) && m.type == MSG_STATUS) {
                        status = m.value;
                        have_status = true;
                }
        }
        int init_status = 0;
        while (waitpid(st->init_pid, &init_status, 0) < 0 && errno == EINTR)
                ;
        if (st->pty_master >= 0)
                close(st->pty_master);
        if (have_status)
                return exit_code_of(status);
        if (WIFSIGNALED(init_status)) {
                fprintf(stderr, "cordon: the sandbox was killed (signal %d)\n", WTERMSIG(init_status));
                return 128 + WTERMSIG(init_status);
        }
        fprintf(stderr, "cordon: the sandbox ended without reporting the command's status\n");
        return EXIT_SANDBOX;
}
