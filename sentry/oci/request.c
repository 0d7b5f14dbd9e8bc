/* Talking to a container's sentry over its sandbox's control socket
 * (sentry/sandbox/sandbox.h): one request and its reply; the exec request
 * for a container's process, with the client's stdio and preserved fds;
 * the terminal handed on to --console-socket, or relayed by a foreground
 * run or exec without one; and the signal a waiting runtime has caught, to
 * forward. */
#include "config.h"

#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <termios.h>

#include "common/fdpass.h"
#include "common/util.h"
#include "sentry/oci/oci.h"
#include "sentry/oci/runtime-internal.h"
#include "sentry/sandbox/sandbox.h"

/* One request and its reply. 0 with *ret (may be NULL); -errno, the error
 * said (what names the request for the message). */
int oci_sentry_request(const char *sid, const char *what, json_t *req, const int *fds, size_t n_fds, json_t **ret,
                       int *ret_fds, size_t max_fds)
{
        _cleanup_close_ int fd = -1;
        int r = control_connect(sid, &fd);
        if (r < 0) {
                json_decref(req);
                oci_error("%s: the container's sentry does not answer: %s", what, strerror(-r));
                return r;
        }
        r = control_send(fd, req, fds, n_fds);
        json_t *rep = NULL;
        int dummy[1];
        if (r >= 0)
                r = control_recv(fd, &rep, ret_fds ? ret_fds : dummy, ret_fds ? max_fds : 0);
        if (r <= 0) {
                oci_error("%s: no answer from the container's sentry (%s)", what,
                          r == 0 ? "connection closed" : strerror(-r));
                return r == 0 ? -EPIPE : r;
        }
        const char *err = json_string_value(json_object_get(rep, "error"));
        if (err) {
                oci_error("%s: %s", what, err);
                json_decref(rep);
                return -EIO;
        }
        if (ret)
                *ret = rep;
        else
                json_decref(rep);
        return 0;
}

/* Sends the terminal's master to --console-socket as runc does (one
 * SCM_RIGHTS message; conmon and containerd receive it). */
int oci_send_console(const char *path, int master)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return negative_errno();
        static const char name[] = "/dev/ptmx";
        return send_fds(fd, name, sizeof(name) - 1, &master, 1);
}

json_t *oci_strv_json(char **v)
{
        json_t *a = json_array();
        for (char **p = v; p && *p; p++)
                json_array_append_new(a, json_string(*p));
        return a;
}

json_t *oci_process_request(const struct oci_process *pr, bool main_run, bool tty)
{
        json_t *req = json_pack("{s:s, s:o, s:o, s:s, s:b, s:b, s:b}", "op", "exec", "argv", oci_strv_json(pr->args),
                                "env", oci_strv_json(pr->env), "cwd", pr->cwd ? pr->cwd : "/", "cleanEnv", 1, "direct",
                                1, "detach", 0);
        if (main_run) {
                json_object_set_new(req, "hold", json_true());
                json_object_set_new(req, "main", json_true());
        }
        if (tty) {
                json_object_set_new(req, "tty", json_true());
                json_object_set_new(req, "rows", json_integer(pr->console_height));
                json_object_set_new(req, "cols", json_integer(pr->console_width));
        }
        return req;
}

void oci_request_identity(json_t *req, uint32_t uid, uint32_t gid, const uint32_t *gids, size_t n_gids,
                          const uint64_t caps[5])
{
        static const char *const sets[5] = {"bounding", "effective", "permitted", "inheritable", "ambient"};
        json_object_set_new(req, "user", json_pack("{s:I, s:I}", "uid", (json_int_t)uid, "gid", (json_int_t)gid));
        json_t *g = json_array();
        for (size_t i = 0; i < n_gids; i++)
                json_array_append_new(g, json_integer(gids[i]));
        json_object_set_new(req, "groups", g);
        json_t *c = json_object();
        for (size_t i = 0; i < 5; i++)
                json_object_set_new(c, sets[i], json_integer((json_int_t)caps[i]));
        json_object_set_new(req, "caps", c);
}

/* stdin, stdout, stderr (a closed one as /dev/null) and the preserved fds. */
size_t oci_client_fds(int fds[EXEC_MAX_FDS], int nul, int preserve)
{
        size_t n = 0;
        for (int i = 0; i < 3; i++)
                fds[n++] = fcntl(i, F_GETFD) >= 0 ? i : nul;
        for (int i = 0; i < preserve; i++)
                fds[n++] = 3 + i;
        return n;
}

volatile sig_atomic_t oci_pending_signal;
static void on_signal(int sig)
{
        oci_pending_signal = sig;
}

void oci_catch_signals(void)
{
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
        struct sigaction sa = {.sa_handler = on_signal};
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                sigaction(sigs[i], &sa, NULL);
}

static volatile sig_atomic_t winch;
static void on_winch(int sig)
{
        (void)sig;
        winch = 1;
}

static void copy_size(int from, int to)
{
        struct winsize ws;
        if (ioctl(from, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col)
                (void)ioctl(to, TIOCSWINSZ, &ws);
}

void oci_terminal_size(int master)
{
        if (isatty(STDIN_FILENO))
                copy_size(STDIN_FILENO, master);
}

void oci_relay_terminal(int master, void (*forward)(int sig, void *ctx), void *ctx)
{
        struct termios saved;
        bool raw = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &saved) == 0;
        if (raw) {
                struct termios t = saved;
                cfmakeraw(&t);
                (void)tcsetattr(STDIN_FILENO, TCSANOW, &t);
                copy_size(STDIN_FILENO, master);
        }
        struct sigaction sa = {.sa_handler = on_winch};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGWINCH, &sa, NULL);
        bool in_open = true;
        char buf[8192];
        for (;;) {
                if (winch && raw) {
                        winch = 0;
                        copy_size(STDIN_FILENO, master);
                }
                if (oci_pending_signal) {
                        int sig = oci_pending_signal;
                        oci_pending_signal = 0;
                        forward(sig, ctx);
                }
                struct pollfd p[2] = {{master, POLLIN, 0}, {in_open ? STDIN_FILENO : -1, POLLIN, 0}};
                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (p[0].revents) {
                        ssize_t n = read(master, buf, sizeof(buf));
                        if (n <= 0 && !(n < 0 && (errno == EINTR || errno == EAGAIN)))
                                break; /* EIO: every slave closed, the process is gone */
                        if (n > 0 && write_all(STDOUT_FILENO, buf, (size_t)n) < 0)
                                break;
                }
                if (p[1].revents) {
                        ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
                        if (n > 0)
                                (void)write_all(master, buf, (size_t)n);
                        else if (n == 0 || (errno != EINTR && errno != EAGAIN))
                                in_open = false; /* the input ended: the output still comes */
                }
        }
        if (raw)
                (void)tcsetattr(STDIN_FILENO, TCSANOW, &saved);
}

int oci_await_setup(int fd, const char *what)
{
        char why[1100];
        /* its set-up's failures may be there already; the byte then meets a
         * closed socket, which changes nothing */
        (void)send(fd, "l", 1, MSG_NOSIGNAL);
        size_t len = 0;
        /* the set-up is a few system calls; a minute covers a sentry
         * serving them on a loaded host */
        int64_t deadline = monotonic_ms() + 60 * 1000;
        while (len < sizeof(why) - 1) {
                int64_t left = deadline - monotonic_ms();
                struct pollfd p = {fd, POLLIN, 0};
                int n = left > 0 ? poll(&p, 1, (int)left) : 0;
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        oci_error("%s: the process did not get ready within a minute", what);
                        return -ETIMEDOUT;
                }
                ssize_t k = read(fd, why + len, sizeof(why) - 1 - len);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        break;
                len += (size_t)k;
                if (memchr(why, '\0', len))
                        break;
        }
        why[len] = '\0';
        if (len > 0 && why[0] == '\0')
                return 0;
        oci_error("%s: %s", what, why[0] ? why : "the process ended during its set-up");
        return strstr(why, "not found") || strstr(why, "no such file") ? -ENOENT : -EIO;
}
