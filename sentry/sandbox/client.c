/* `cordon sandbox VERB`: the client side of long-lived sandboxes.
 *
 * `create` forks a detached sentry (its own session, stdio away from the
 * terminal) that sets the sandbox up exactly as `cordon run` does, with an
 * init that waits for runs, and says "READY <id>" on a pipe once it serves;
 * set-up errors come back through an anonymous file that was the sentry's
 * stderr. Every other verb talks to that sentry over the control socket in
 * the sandbox's state directory, or reads the files there (list, events). */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>

#include "common/fdpass.h"
#include "sentry/sandbox/sandbox.h"

static void sandbox_usage(FILE *f)
{
        fputs("Usage: cordon sandbox [--root DIR] VERB ...   (state under DIR; default /run/cordon for root)\n"
              "       cordon sandbox create [--policy FILE] [--ttl DURATION] [--from-snapshot SNAP [--digest sha256:HEX]]\n"
              "                             [--memory SIZE] [--cpus N] [--pids N] [--disk SIZE] [--json]\n"
              "       cordon sandbox exec ID [--detach] [--timeout DURATION] [--cwd DIR] [--env K=V]... [-t|-T] -- CMD ...\n"
              "       cordon sandbox put ID LOCAL SANDBOX-PATH      (LOCAL - reads stdin)\n"
              "       cordon sandbox get ID SANDBOX-PATH LOCAL      (LOCAL - writes stdout)\n"
              "       cordon sandbox ls ID PATH [--json]\n"
              "       cordon sandbox pause ID | resume ID | terminate ID\n"
              "       cordon sandbox cancel ID RUN\n"
              "       cordon sandbox list [--json] | inspect ID [--json]\n"
              "       cordon sandbox events ID [--run RUN] [--after N] [--follow] [--json]\n"
              "       cordon sandbox snapshot ID OUT.tar.zst\n"
              "       cordon sandbox pending ID [--json]\n"
              "       cordon sandbox approve ID REQ [--remember] | deny ID REQ\n"
              "\n"
              "A sandbox keeps running (a small init under a detached sentry) until it is\n"
              "terminated or expires (--ttl, or the policy's expiresAt), even with no client.\n"
              "exec exits with the command's status (128+N for signal N, 124 at --timeout).\n"
              "A call a policy \"ask\" rule covers waits (only its thread) for approve or deny;\n"
              "--remember allows identical calls for the sandbox's lifetime (the policy file\n"
              "is never changed). Unanswered, it is denied at approvalTimeoutMs (default 5 min).\n",
              f);
}

/* --- the control socket --- */

static int connect_sandbox(const char *id, int *ret)
{
        char dir[600];
        if (sandbox_dir(id, dir, sizeof(dir)) < 0) {
                fprintf(stderr, "cordon: '%s' is not a sandbox id\n", id);
                return -EINVAL;
        }
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        static const char sock_name[] = "/control.sock";
        size_t dl = strlen(dir);
        if (dl + sizeof(sock_name) > sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, dir, dl);
        memcpy(sa.sun_path + dl, sock_name, sizeof(sock_name));
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                int r = negative_errno();
                close(fd);
                struct stat st;
                if (stat(dir, &st) < 0)
                        fprintf(stderr, "cordon: no sandbox %s\n", id);
                else if (state_root_is_default())
                        fprintf(stderr,
                                "cordon: sandbox %s does not answer (%s); if its sentry died, `cordon gc` removes "
                                "what it left\n",
                                id, strerror(-r));
                else
                        fprintf(stderr,
                                "cordon: sandbox %s does not answer (%s); if its sentry died, `cordon gc --root %s` "
                                "removes what it left\n",
                                id, strerror(-r), state_root());
                return r;
        }
        *ret = fd;
        return 0;
}

/* One request, one reply, with any {"progress": ...} messages before the
 * reply handed to on_progress (may be NULL); prints an error reply. 0, or 1
 * for an error reply. */
static int request_progress(const char *id, json_t *req, const int *fds, size_t n_fds, void (*on_progress)(json_t *p),
                            json_t **ret)
{
        _cleanup_close_ int fd = -1;
        if (connect_sandbox(id, &fd) < 0) {
                json_decref(req);
                return -1;
        }
        int r = control_send(fd, req, fds, n_fds);
        json_t *rep = NULL;
        while (r >= 0 && (r = control_recv(fd, &rep, NULL, 0)) > 0 && json_object_get(rep, "progress") &&
               !json_object_get(rep, "error")) {
                if (on_progress)
                        on_progress(json_object_get(rep, "progress"));
                json_decref(rep);
                rep = NULL;
        }
        if (r <= 0) {
                fprintf(stderr, "cordon: sandbox %s: no answer from its sentry (%s)\n", id,
                        r == 0 ? "connection closed" : strerror(-r));
                return -1;
        }
        const char *err = json_string_value(json_object_get(rep, "error"));
        if (err) {
                fprintf(stderr, "cordon: %s\n", err);
                json_decref(rep);
                return 1;
        }
        if (ret)
                *ret = rep;
        else
                json_decref(rep);
        return 0;
}

static int request(const char *id, json_t *req, const int *fds, size_t n_fds, json_t **ret)
{
        return request_progress(id, req, fds, n_fds, NULL, ret);
}

/* "12.3 MB" */
static void human_bytes(long long n, char buf[32])
{
        static const char *const units[] = {"bytes", "kB", "MB", "GB", "TB"};
        double v = (double)n;
        size_t u = 0;
        while (v >= 1000 && u + 1 < ELEMENTSOF(units)) {
                v /= 1000;
                u++;
        }
        if (u == 0)
                snprintf(buf, 32, "%lld bytes", n);
        else
                snprintf(buf, 32, "%.1f %s", v, units[u]);
}

/* A progress line on the terminal (stderr), rewritten in place; the final
 * one ends it. */
static void show_progress(const char *what, long long bytes, long long total, long long entries, bool final)
{
        char b[32], t[32];
        human_bytes(bytes, b);
        if (total > 0) {
                human_bytes(total, t);
                fprintf(stderr, "\rcordon: %s: %s of %s (%lld%%), %lld entries\033[K", what, b, t,
                        total ? bytes * 100 / total : 0, entries);
        } else
                fprintf(stderr, "\rcordon: %s: %s, %lld entries\033[K", what, b, entries);
        if (final)
                fputc('\n', stderr);
        fflush(stderr);
}

static void snapshot_progress(json_t *p)
{
        show_progress("snapshot", (long long)json_integer_value(json_object_get(p, "bytes")), 0,
                      (long long)json_integer_value(json_object_get(p, "entries")),
                      json_is_true(json_object_get(p, "final")));
}

static int simple_verb(const char *op, int argc, char **argv)
{
        if (argc != 2) {
                fprintf(stderr, "cordon: sandbox %s ID\n", op);
                return EXIT_USAGE;
        }
        json_t *rep = NULL;
        int r = request(argv[1], json_pack("{s:s}", "op", op), NULL, 0, &rep);
        if (r != 0)
                return 1;
        json_decref(rep);
        return 0;
}

/* --- create --- */

static int read_text_file(const char *path, char **ret)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        size_t cap = 4096, len = 0;
        char *buf = xmalloc(cap);
        for (;;) {
                if (len + 1 >= cap) {
                        if (cap >= (16u << 20)) {
                                free(buf);
                                return -EFBIG;
                        }
                        cap *= 2;
                        buf = xrealloc(buf, cap);
                }
                ssize_t n = read(fd, buf + len, cap - len - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int r = negative_errno();
                        free(buf);
                        return r;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        buf[len] = '\0';
        *ret = buf;
        return 0;
}

static void copy_out(int fd)
{
        char buf[4096];
        ssize_t n;
        off_t off = 0;
        while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
                (void)write_all(STDERR_FILENO, buf, (size_t)n);
                off += n;
        }
}

int sandbox_spawn_sentry(struct run_options *o, struct serve_config *cfg, bool new_session, int memfd, pid_t *ret_pid,
                         char ret_id[static 17], int *ret_status)
{
        int ready[2];
        if (pipe2(ready, O_CLOEXEC) < 0)
                return negative_errno();
        cfg->ready_fd = ready[1];
        o->serve = cfg;
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
                int r = negative_errno();
                close(ready[0]);
                close(ready[1]);
                return r;
        }
        if (pid == 0) {
                /* the detached sentry: no terminal, the creating client's
                 * stderr replaced by the memfd it reads */
                close(ready[0]);
                if (new_session)
                        setsid();
                int nul = open("/dev/null", O_RDWR);
                if (nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(memfd, 2) < 0)
                        _exit(EXIT_SANDBOX);
                if (nul > 2)
                        close(nul);
                /* nothing else of the client's goes with it: an inherited
                 * pipe (a test runner's, a shell's) would stay open for the
                 * sandbox's whole life */
                if (dup2(ready[1], 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0 ||
                    syscall(SYS_close_range, 4, ~0U, 0) < 0)
                        _exit(EXIT_SANDBOX);
                cfg->ready_fd = 3;
                signal(SIGPIPE, SIG_IGN);
                _exit(sentry_run(o));
        }
        close(ready[1]);
        /* "READY <id>", after any "PROGRESS <bytes> <total> <entries>" of a
         * restore (sent only when cfg->progress) */
        char line[128] = "";
        bool shown = false;
        for (;;) {
                size_t len = 0;
                while (len < sizeof(line) - 1) {
                        ssize_t n = read(ready[0], line + len, 1);
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n <= 0 || line[len] == '\n')
                                break;
                        len++;
                }
                line[len] = '\0';
                long long b, t, e;
                if (!startswith(line, "PROGRESS ") || sscanf(line + 9, "%lld %lld %lld", &b, &t, &e) != 3)
                        break;
                show_progress("restoring the snapshot", b, t, e, false);
                shown = true;
        }
        if (shown)
                fputc('\n', stderr);
        close(ready[0]);
        *ret_pid = pid;
        if (!startswith(line, "READY ") || strlen(line + 6) != 16) {
                int status = 0;
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                        ;
                *ret_status = status;
                return -ECHILD;
        }
        memcpy(ret_id, line + 6, 17);
        return 0;
}

static int cmd_create(int argc, char **argv)
{
        static const struct option opts[] = {
                {"policy", required_argument, NULL, 'p'},
                {"ttl", required_argument, NULL, 'l'},
                {"json", no_argument, NULL, 'j'},
                {"verbose", no_argument, NULL, 'v'},
                {"memory", required_argument, NULL, 'M'},
                {"cpus", required_argument, NULL, 'c'},
                {"pids", required_argument, NULL, 'P'},
                {"disk", required_argument, NULL, 'D'},
                {"admission", required_argument, NULL, 'a'},
                {"from-snapshot", required_argument, NULL, 'S'},
                {"digest", required_argument, NULL, 'd'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        struct run_options o = {.tty = TTY_NEVER, .cgroup_mode = CG_AUTO};
        run_limits_unset(&o.limits);
        const char *policy_path = NULL, *snapshot = NULL, *digest = NULL;
        bool json = false;
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, "+p:vh", opts, NULL)) != -1) {
                switch (c) {
                case 'p':
                        policy_path = optarg;
                        break;
                case 'l':
                        if (parse_duration_ms(optarg, &o.limits.timeout_ms) < 0) {
                                fprintf(stderr, "cordon: --ttl %s: expected a duration such as 90s, 30m, 1h\n", optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case 'j':
                        json = true;
                        break;
                case 'v':
                        o.verbose = true;
                        break;
                case 'M':
                case 'c':
                case 'P':
                case 'D':
                        if (limits_option((char)c, optarg, &o.limits) < 0)
                                return EXIT_USAGE;
                        break;
                case 'a':
                        o.admission_path = optarg;
                        break;
                case 'S':
                        snapshot = optarg;
                        break;
                case 'd':
                        digest = optarg;
                        break;
                case 'h':
                        sandbox_usage(stdout);
                        return 0;
                default:
                        return EXIT_USAGE;
                }
        }
        if (optind != argc) {
                fprintf(stderr, "cordon: sandbox create takes no command (use `cordon sandbox exec ID -- CMD`)\n");
                return EXIT_USAGE;
        }

        _cleanup_free_ char *policy_text = NULL, *digest_text = NULL;
        _cleanup_(policy_freep) struct policy *policy = NULL;
        if (policy_path) {
                _cleanup_free_ char *err = NULL;
                int r = read_text_file(policy_path, &policy_text);
                if (r < 0) {
                        fprintf(stderr, "cordon: --policy %s: %s\n", policy_path, strerror(-r));
                        return EXIT_USAGE;
                }
                r = policy_load_file(policy_path, &policy, &err);
                if (r < 0) {
                        fprintf(stderr, "cordon: %s\n", err ? err : strerror(-r));
                        return EXIT_USAGE;
                }
        } else {
                policy = policy_new_default();
                policy_text = xstrdup("{}");
        }
        /* a snapshot is restored only against the digest recorded for it */
        char snap_abs[4096];
        if (snapshot) {
                if (!realpath(snapshot, snap_abs)) {
                        fprintf(stderr, "cordon: --from-snapshot %s: %m\n", snapshot);
                        return EXIT_USAGE;
                }
                snapshot = snap_abs;
                if (!digest) {
                        char side[4200];
                        snprintf(side, sizeof(side), "%s.sha256", snapshot);
                        if (read_text_file(side, &digest_text) < 0) {
                                fprintf(stderr,
                                        "cordon: --from-snapshot %s: no digest (give --digest sha256:HEX or keep %s)\n",
                                        snapshot, side);
                                return EXIT_USAGE;
                        }
                        digest_text[strcspn(digest_text, " \n")] = '\0';
                        digest = digest_text;
                }
        }
        o.policy = policy;

        int memfd = memfd_create("cordon-create", MFD_CLOEXEC);
        if (memfd < 0) {
                fprintf(stderr, "cordon: create: %m\n");
                return EXIT_SANDBOX;
        }
        struct serve_config cfg = {.policy_text = policy_text,
                                   .snapshot = snapshot,
                                   .snapshot_digest = digest,
                                   .progress = snapshot && isatty(STDERR_FILENO)};
        pid_t pid;
        char id[17];
        int status;
        int r = sandbox_spawn_sentry(&o, &cfg, true, memfd, &pid, id, &status);
        if (r == -ECHILD) {
                copy_out(memfd);
                int code = WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_SANDBOX;
                if (code == 0)
                        code = EXIT_SANDBOX;
                fprintf(stderr, "cordon: the sandbox could not be created\n");
                return code;
        }
        if (r < 0) {
                fprintf(stderr, "cordon: create: %s\n", strerror(-r));
                return EXIT_SANDBOX;
        }
        copy_out(memfd); /* warnings, --verbose */
        close(memfd);
        if (json) {
                json_t *j = json_pack("{s:s, s:I}", "id", id, "sentryPid", (json_int_t)pid);
                json_dumpf(j, stdout, JSON_COMPACT);
                json_decref(j);
                putchar('\n');
        } else
                printf("%s\n", id);
        return 0;
}

/* --- exec --- */

static volatile sig_atomic_t pending_signal;

static void on_signal(int sig)
{
        pending_signal = sig;
}

static int cmd_exec(int argc, char **argv)
{
        static const struct option opts[] = {
                {"detach", no_argument, NULL, 'd'},    {"timeout", required_argument, NULL, 'o'},
                {"cwd", required_argument, NULL, 'C'}, {"env", required_argument, NULL, 'e'},
                {"tty", no_argument, NULL, 't'},       {"no-tty", no_argument, NULL, 'T'},
                {"help", no_argument, NULL, 'h'},      {0},
        };
        if (argc < 2) {
                fprintf(stderr, "cordon: sandbox exec ID [OPTIONS] -- CMD [ARGS...]\n");
                return EXIT_USAGE;
        }
        const char *id = argv[1];
        bool detach = false;
        int tty = -1; /* -1: when stdin and stdout are terminals */
        int64_t timeout_ms = 0;
        const char *cwd = NULL;
        json_t *env = json_array();
        int c;
        optind = 2;
        while ((c = getopt_long(argc, argv, "+de:C:tTh", opts, NULL)) != -1) {
                switch (c) {
                case 't':
                        tty = 1;
                        break;
                case 'T':
                        tty = 0;
                        break;
                case 'd':
                        detach = true;
                        break;
                case 'o':
                        if (parse_duration_ms(optarg, &timeout_ms) < 0) {
                                fprintf(stderr, "cordon: --timeout %s: expected a duration such as 10s\n", optarg);
                                json_decref(env);
                                return EXIT_USAGE;
                        }
                        break;
                case 'C':
                        if (optarg[0] != '/') {
                                fprintf(stderr, "cordon: --cwd %s: must be an absolute path in the sandbox\n", optarg);
                                json_decref(env);
                                return EXIT_USAGE;
                        }
                        cwd = optarg;
                        break;
                case 'e':
                        if (!strchr(optarg, '=') || optarg[0] == '=') {
                                fprintf(stderr, "cordon: --env %s: expected KEY=VALUE\n", optarg);
                                json_decref(env);
                                return EXIT_USAGE;
                        }
                        json_array_append_new(env, json_string(optarg));
                        break;
                case 'h':
                        sandbox_usage(stdout);
                        json_decref(env);
                        return 0;
                default:
                        json_decref(env);
                        return EXIT_USAGE;
                }
        }
        if (optind >= argc) {
                fprintf(stderr, "cordon: sandbox exec: no command given\n");
                json_decref(env);
                return EXIT_USAGE;
        }
        json_t *cmd = json_array();
        for (int i = optind; i < argc; i++)
                json_array_append_new(cmd, json_string(argv[i]));
        json_t *req = json_pack("{s:s, s:o, s:o, s:b, s:I}", "op", "exec", "argv", cmd, "env", env, "detach", detach,
                                "timeoutMs", (json_int_t)timeout_ms);
        if (cwd)
                json_object_set_new(req, "cwd", json_string(cwd));
        if (tty < 0)
                tty = !detach && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
        if (tty) {
                struct winsize ws = {0};
                (void)ioctl(STDIN_FILENO, TIOCGWINSZ, &ws);
                json_object_set_new(req, "tty", json_true());
                json_object_set_new(req, "rows", json_integer(ws.ws_row));
                json_object_set_new(req, "cols", json_integer(ws.ws_col));
        }

        /* stdin, stdout and stderr go across as they are (a closed one as /dev/null) */
        int fds[3];
        _cleanup_close_ int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        for (int i = 0; i < 3; i++)
                fds[i] = fcntl(i, F_GETFD) >= 0 ? i : nul;

        _cleanup_close_ int fd = -1;
        if (connect_sandbox(id, &fd) < 0) {
                json_decref(req);
                return EXIT_SANDBOX;
        }
        int r = control_send(fd, req, detach || tty ? NULL : fds, detach || tty ? 0 : 3);
        json_t *rep = NULL;
        /* back come the pipes of the run's stdout and stderr, or with a
         * terminal, of the terminal's output and of our input into it (the
         * sentry holds the pty's master and records the output as events
         * on the way) */
        int back[2] = {-1, -1};
        if (r >= 0)
                r = control_recv(fd, &rep, back, 2);
        _cleanup_close_ int tty_in = tty ? back[1] : -1;
        _cleanup_close_ int out_pipe = back[0], err_pipe = tty ? -1 : back[1];
        if (r == -E2BIG) {
                fprintf(stderr, "cordon: sandbox exec: the command line and environment are too long\n");
                return EXIT_USAGE;
        }
        if (r <= 0) {
                fprintf(stderr, "cordon: sandbox %s: no answer from its sentry\n", id);
                return EXIT_SANDBOX;
        }
        const char *err = json_string_value(json_object_get(rep, "error"));
        if (err) {
                fprintf(stderr, "cordon: %s\n", err);
                json_decref(rep);
                return EXIT_SANDBOX;
        }
        if (detach) {
                printf("%s\n", json_string_value(json_object_get(rep, "run")));
                json_decref(rep);
                return 0;
        }
        json_decref(rep);

        if (tty && (out_pipe < 0 || tty_in < 0)) {
                fprintf(stderr, "cordon: sandbox %s: no terminal came back for the run\n", id);
                return EXIT_SANDBOX;
        }

        /* the run's output comes through the sentry's pipes to our stdout
         * and stderr (with a terminal, our input goes the other way); we
         * wait for its status and forward the signals a user sends us and
         * our terminal's size */
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGWINCH};
        struct sigaction sa = {.sa_handler = on_signal};
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                if (sigs[i] != SIGWINCH || tty)
                        sigaction(sigs[i], &sa, NULL);
        /* the sentry closes our input's pipe when the run ends: that is
         * the end of the input, not of us */
        if (tty)
                signal(SIGPIPE, SIG_IGN);
        struct termios saved;
        bool raw = false;
        if (tty && tcgetattr(STDIN_FILENO, &saved) == 0 && tcgetpgrp(STDIN_FILENO) == getpgrp()) {
                struct termios t = saved;
                cfmakeraw(&t);
                raw = tcsetattr(STDIN_FILENO, TCSADRAIN, &t) == 0;
        }
        bool in_open = tty;
        bool run_out_open = out_pipe >= 0, run_err_open = err_pipe >= 0;
        for (;;) {
                if (pending_signal) {
                        int sig = pending_signal;
                        pending_signal = 0;
                        struct winsize ws;
                        if (sig == SIGWINCH) {
                                if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
                                        (void)control_send(fd,
                                                           json_pack("{s:s, s:i, s:i}", "op", "winsize", "rows",
                                                                     ws.ws_row, "cols", ws.ws_col),
                                                           NULL, 0);
                        } else
                                (void)control_send(fd, json_pack("{s:s, s:i}", "op", "signal", "signal", sig), NULL, 0);
                }
                struct pollfd p[5] = {{fd, POLLIN, 0},
                                      {in_open ? STDIN_FILENO : -1, POLLIN, 0},
                                      {-1, 0, 0},
                                      {run_out_open ? out_pipe : -1, POLLIN, 0},
                                      {run_err_open ? err_pipe : -1, POLLIN, 0}};
                if (poll(p, 5, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                if (p[1].revents && relay_some(STDIN_FILENO, tty_in) < 0) {
                        /* our input ended: the sentry types the terminal's
                         * EOF character when its pipe closes */
                        in_open = false;
                        close(TAKE_FD(tty_in));
                }
                if (p[3].revents && relay_some(out_pipe, STDOUT_FILENO) < 0)
                        run_out_open = false;
                if (p[4].revents && relay_some(err_pipe, STDERR_FILENO) < 0)
                        run_err_open = false;
                if (!p[0].revents)
                        continue;
                r = control_recv(fd, &rep, NULL, 0);
                if (r <= 0) {
                        if (raw)
                                tcsetattr(STDIN_FILENO, TCSADRAIN, &saved);
                        fprintf(stderr, "cordon: sandbox %s: its sentry went away before the run ended\n", id);
                        return EXIT_SANDBOX;
                }
                if (json_object_get(rep, "exitCode"))
                        break;
                json_decref(rep);
        }
        /* the sentry passed on all the run wrote before its status; take
         * it until the pipes end (or stay quiet: a process the run left
         * behind may hold them open) */
        while (run_out_open || run_err_open) {
                struct pollfd q[2] = {{run_out_open ? out_pipe : -1, POLLIN, 0},
                                      {run_err_open ? err_pipe : -1, POLLIN, 0}};
                if (poll(q, 2, 100) <= 0)
                        break;
                if (q[0].revents && relay_some(out_pipe, STDOUT_FILENO) < 0)
                        run_out_open = false;
                if (q[1].revents && relay_some(err_pipe, STDERR_FILENO) < 0)
                        run_err_open = false;
        }
        if (raw)
                tcsetattr(STDIN_FILENO, TCSADRAIN, &saved);
        int code = (int)json_integer_value(json_object_get(rep, "exitCode"));
        if (json_is_true(json_object_get(rep, "timedOut"))) {
                fprintf(stderr, "cordon: the run reached its timeout (%lld ms) and was killed\n",
                        (long long)timeout_ms);
                code = EXIT_TIMEOUT;
        }
        json_decref(rep);
        return code;
}

/* --- terminate --- */

static int cmd_terminate(int argc, char **argv)
{
        if (argc != 2) {
                fprintf(stderr, "cordon: sandbox terminate ID\n");
                return EXIT_USAGE;
        }
        const char *id = argv[1];
        char dir[600], lockpath[700];
        if (sandbox_dir(id, dir, sizeof(dir)) < 0) {
                fprintf(stderr, "cordon: '%s' is not a sandbox id\n", id);
                return EXIT_USAGE;
        }
        struct stat st;
        if (stat(dir, &st) < 0) {
                /* idempotent: gone is what was asked for */
                fprintf(stderr, "cordon: sandbox %s is not running (already terminated?)\n", id);
                return 0;
        }
        snprintf(lockpath, sizeof(lockpath), "%s/lock", dir);
        _cleanup_close_ int lock = open(lockpath, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        json_t *rep = NULL;
        int r = request(id, json_pack("{s:s}", "op", "terminate"), NULL, 0, &rep);
        json_decref(rep);
        if (r < 0) {
                /* no sentry: what it left is garbage */
                (void)state_gc(true);
                return stat(dir, &st) < 0 ? 0 : 1;
        }
        if (r > 0)
                return 1;
        /* the sentry holds the lock until it has removed everything: the
         * sandbox is gone when we can take it (bounded wait) */
        for (int i = 0; lock >= 0 && i < 600; i++) {
                if (flock(lock, LOCK_EX | LOCK_NB) == 0)
                        return 0;
                usleep(50 * 1000);
        }
        if (lock < 0)
                return 0;
        fprintf(stderr, "cordon: sandbox %s did not finish terminating within 30 s\n", id);
        return 1;
}

/* --- list, inspect --- */

static bool live_dir(int dirfd)
{
        _cleanup_close_ int fd = openat(dirfd, "lock", O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return false;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0)
                return errno == EWOULDBLOCK;
        flock(fd, LOCK_UN);
        return false;
}

static int cmd_list(int argc, char **argv)
{
        bool json = argc > 1 && streq(argv[1], "--json");
        if (argc > 2 || (argc == 2 && !json)) {
                fprintf(stderr, "cordon: sandbox list [--json]\n");
                return EXIT_USAGE;
        }
        char dir[600];
        snprintf(dir, sizeof(dir), "%s/sandboxes", state_root());
        json_t *all = json_array();
        DIR *d = opendir(dir);
        struct dirent *de;
        while (d && (de = readdir(d))) {
                if (!sandbox_id_valid(de->d_name))
                        continue;
                _cleanup_close_ int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0 || !live_dir(fd))
                        continue;
                _cleanup_close_ int mfd = openat(fd, "meta.json", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                json_error_t jerr;
                json_t *m = mfd >= 0 ? json_loadfd(mfd, 0, &jerr) : NULL;
                if (!m) /* a `cordon run` sandbox, or one still starting */
                        m = json_pack("{s:s, s:s}", "id", de->d_name, "status",
                                      mfd >= 0 ? "starting" : "run (foreground)");
                json_object_del(m, "policy");
                json_array_append_new(all, m);
        }
        if (d)
                closedir(d);
        if (json) {
                json_dumpf(all, stdout, JSON_COMPACT);
                putchar('\n');
        } else {
                printf("%-18s %-18s %-21s %-21s %s\n", "ID", "STATUS", "CREATED", "EXPIRES", "RUNS");
                size_t i;
                json_t *m;
                json_array_foreach(all, i, m)
                {
                        const char *exp = json_string_value(json_object_get(m, "expiresAt"));
                        printf("%-18s %-18s %-21s %-21s %zu\n", json_string_value(json_object_get(m, "id")),
                               json_string_value(json_object_get(m, "status")),
                               json_string_value(json_object_get(m, "createdAt")) ?: "-", exp ? exp : "-",
                               json_array_size(json_object_get(m, "runs")));
                }
        }
        json_decref(all);
        return 0;
}

static void print_pending(json_t *list)
{
        if (json_array_size(list) == 0) {
                printf("no pending requests\n");
                return;
        }
        printf("%-6s %-7s %-21s %-40s %s\n", "REQ", "KIND", "EXPIRES", "TARGET", "SUMMARY");
        size_t i;
        json_t *v;
        json_array_foreach(list, i, v)
        {
                json_t *sum = json_object_get(v, "summary");
                printf("%-6s %-7s %-21s %-40s %s pid %lld: %s\n", json_string_value(json_object_get(v, "request")),
                       json_string_value(json_object_get(v, "capability")),
                       json_string_value(json_object_get(v, "expiresAt")),
                       json_string_value(json_object_get(v, "target")),
                       json_string_value(json_object_get(sum, "syscall")),
                       (long long)json_integer_value(json_object_get(sum, "pid")),
                       json_string_value(json_object_get(sum, "cmdline")) ?: "");
        }
}

static int cmd_inspect(int argc, char **argv)
{
        bool json = argc > 2 && streq(argv[2], "--json");
        if (argc < 2 || argc > 3 || (argc == 3 && !json)) {
                fprintf(stderr, "cordon: sandbox inspect ID [--json]\n");
                return EXIT_USAGE;
        }
        json_t *m = NULL;
        int r = request(argv[1], json_pack("{s:s}", "op", "inspect"), NULL, 0, &m);
        if (r != 0)
                return 1;
        if (json) {
                json_dumpf(m, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
                putchar('\n');
                json_decref(m);
                return 0;
        }
        const char *exp = json_string_value(json_object_get(m, "expiresAt"));
        printf("sandbox   %s\nstatus    %s\ncreated   %s\nexpires   %s\n", json_string_value(json_object_get(m, "id")),
               json_string_value(json_object_get(m, "status")), json_string_value(json_object_get(m, "createdAt")),
               exp ? exp : "never");
        json_t *l = json_object_get(m, "limits"), *u = json_object_get(m, "use"),
               *iso = json_object_get(m, "isolation");
        printf("limits    memory %lld, cpu %lld millis, disk %lld, tasks %lld, open files %lld (-1: none)\n",
               (long long)json_integer_value(json_object_get(l, "memoryBytes")),
               (long long)json_integer_value(json_object_get(l, "cpuMillis")),
               (long long)json_integer_value(json_object_get(l, "diskBytes")),
               (long long)json_integer_value(json_object_get(l, "maxProcesses")),
               (long long)json_integer_value(json_object_get(l, "maxOpenFiles")));
        printf("use       memory peak %lld, cpu %lld us, tasks %lld, disk %lld bytes\n",
               (long long)json_integer_value(json_object_get(u, "memoryPeakBytes")),
               (long long)json_integer_value(json_object_get(u, "cpuUsageUsec")),
               (long long)json_integer_value(json_object_get(u, "tasks")),
               (long long)json_integer_value(json_object_get(u, "diskBytes")));
        printf("isolation\n");
        const char *k;
        json_t *v;
        json_object_foreach(iso, k, v)
        {
                char *s = json_is_string(v) ? xstrdup(json_string_value(v))
                                            : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
                printf("  %-12s %s\n", k, s);
                free(s);
        }
        json_t *pend = json_object_get(m, "pendingApprovals");
        if (json_array_size(pend) > 0) {
                printf("pending approvals\n");
                print_pending(pend);
        }
        char *pol = json_dumps(json_object_get(m, "policy"), JSON_COMPACT | JSON_ENCODE_ANY);
        printf("policy    %s\nruns\n", pol ? pol : "null");
        free(pol);
        json_int_t omitted = json_integer_value(json_object_get(m, "runsOmitted"));
        if (omitted > 0)
                printf("  (%lld older runs not shown: see meta.json or `cordon sandbox events`)\n", (long long)omitted);
        size_t i;
        json_array_foreach(json_object_get(m, "runs"), i, v)
        {
                char *a = json_dumps(json_object_get(v, "argv"), JSON_COMPACT);
                json_t *ec = json_object_get(v, "exitCode");
                char code[16] = "-";
                if (ec)
                        snprintf(code, sizeof(code), "%lld", (long long)json_integer_value(ec));
                printf("  %-6s %-10s exit %-4s %s\n", json_string_value(json_object_get(v, "id")),
                       json_string_value(json_object_get(v, "status")), code, a ? a : "");
                free(a);
        }
        json_decref(m);
        return 0;
}

/* --- approvals --- */

static int cmd_pending(int argc, char **argv)
{
        bool json = argc > 2 && streq(argv[2], "--json");
        if (argc < 2 || argc > 3 || (argc == 3 && !json)) {
                fprintf(stderr, "cordon: sandbox pending ID [--json]\n");
                return EXIT_USAGE;
        }
        json_t *rep = NULL;
        if (request(argv[1], json_pack("{s:s}", "op", "pending"), NULL, 0, &rep) != 0)
                return 1;
        json_t *list = json_object_get(rep, "pending");
        if (json) {
                json_dumpf(list, stdout, JSON_COMPACT);
                putchar('\n');
        } else
                print_pending(list);
        json_decref(rep);
        return 0;
}

/* approve ID REQ [--remember] | deny ID REQ */
static int cmd_decide(bool approve, int argc, char **argv)
{
        bool remember = false;
        int n = 0;
        const char *pos[2] = {NULL, NULL};
        for (int i = 1; i < argc; i++) {
                if (approve && streq(argv[i], "--remember"))
                        remember = true;
                else if (argv[i][0] != '-' && n < 2)
                        pos[n++] = argv[i];
                else
                        n = 3;
        }
        if (n != 2) {
                fprintf(stderr,
                        approve ? "cordon: sandbox approve ID REQ [--remember]\n" : "cordon: sandbox deny ID REQ\n");
                return EXIT_USAGE;
        }
        json_t *rep = NULL;
        int r = request(pos[0],
                        json_pack("{s:s, s:s, s:b}", "op", approve ? "approve" : "deny", "request", pos[1], "remember",
                                  remember),
                        NULL, 0, &rep);
        if (r != 0)
                return 1;
        printf("%s %s%s\n", pos[1], approve ? "approved" : "denied",
               remember ? " (remembered for this sandbox's lifetime)" : "");
        json_decref(rep);
        return 0;
}

/* --- put, get, ls, snapshot --- */

static int cmd_put(int argc, char **argv)
{
        if (argc != 4) {
                fprintf(stderr, "cordon: sandbox put ID LOCAL SANDBOX-PATH\n");
                return EXIT_USAGE;
        }
        _cleanup_close_ int fd =
                streq(argv[2], "-") ? fcntl(0, F_DUPFD_CLOEXEC, 3) : open(argv[2], O_RDONLY | O_CLOEXEC | O_NOCTTY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || S_ISDIR(st.st_mode)) {
                fprintf(stderr, "cordon: put: %s: %s\n", argv[2], fd < 0 ? strerror(errno) : "is a directory");
                return 1;
        }
        json_t *req = json_pack("{s:s, s:s, s:i}", "op", "put", "path", argv[3], "mode",
                                S_ISREG(st.st_mode) ? (int)(st.st_mode & 0755) : 0644);
        json_t *rep = NULL;
        int r = request(argv[1], req, &fd, 1, &rep);
        json_decref(rep);
        return r == 0 ? 0 : 1;
}

static int cmd_get(int argc, char **argv)
{
        if (argc != 4) {
                fprintf(stderr, "cordon: sandbox get ID SANDBOX-PATH LOCAL\n");
                return EXIT_USAGE;
        }
        /* our own file, opened by us as the invoking user: never through a
         * symlink at its last component (a bind-mounted directory the
         * sandbox can write might have planted one) */
        bool to_stdout = streq(argv[3], "-");
        _cleanup_close_ int fd =
                to_stdout ? fcntl(1, F_DUPFD_CLOEXEC, 3)
                          : open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0644);
        if (fd < 0) {
                fprintf(stderr, "cordon: get: %s: %m\n", argv[3]);
                return 1;
        }
        json_t *rep = NULL;
        int r = request(argv[1], json_pack("{s:s, s:s}", "op", "get", "path", argv[2]), &fd, 1, &rep);
        json_decref(rep);
        if (r != 0 && !to_stdout)
                if (ftruncate(fd, 0) < 0) {
                        /* nothing more to undo */
                }
        return r == 0 ? 0 : 1;
}

static int cmd_ls(int argc, char **argv)
{
        bool json = argc == 4 && streq(argv[3], "--json");
        if (argc != 3 && !json) {
                fprintf(stderr, "cordon: sandbox ls ID PATH [--json]\n");
                return EXIT_USAGE;
        }
        _cleanup_close_ int fd = -1;
        if (connect_sandbox(argv[1], &fd) < 0)
                return 1;
        if (control_send(fd, json_pack("{s:s, s:s}", "op", "ls", "path", argv[2]), NULL, 0) < 0)
                return 1;
        for (;;) {
                json_t *m = NULL;
                int r = control_recv(fd, &m, NULL, 0);
                if (r <= 0) {
                        fprintf(stderr, "cordon: ls: no answer from the sandbox's sentry\n");
                        return 1;
                }
                const char *err = json_string_value(json_object_get(m, "error"));
                if (err) {
                        fprintf(stderr, "cordon: ls: %s\n", err);
                        json_decref(m);
                        return 1;
                }
                if (json_object_get(m, "ok")) {
                        json_decref(m);
                        return 0;
                }
                size_t i;
                json_t *e;
                json_array_foreach(json_object_get(m, "entries"), i, e)
                {
                        if (json) {
                                json_dumpf(e, stdout, JSON_COMPACT | JSON_SORT_KEYS);
                                putchar('\n');
                        } else
                                printf("%-8s %04o %12lld  %s\n", json_string_value(json_object_get(e, "type")),
                                       (unsigned)json_integer_value(json_object_get(e, "mode")),
                                       (long long)json_integer_value(json_object_get(e, "size")),
                                       json_string_value(json_object_get(e, "name")));
                }
                json_decref(m);
        }
}

static int cmd_snapshot(int argc, char **argv)
{
        if (argc != 3) {
                fprintf(stderr, "cordon: sandbox snapshot ID OUT.tar.zst\n");
                return EXIT_USAGE;
        }
        _cleanup_close_ int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) {
                fprintf(stderr, "cordon: snapshot: %s: %m\n", argv[2]);
                return 1;
        }
        /* progress only for a person at a terminal: a program reading
         * stderr gets the errors alone */
        bool tty = isatty(STDERR_FILENO);
        json_t *rep = NULL;
        int r = request_progress(argv[1], json_pack("{s:s, s:b}", "op", "snapshot", "progress", tty), &fd, 1,
                                 tty ? snapshot_progress : NULL, &rep);
        if (r != 0) {
                unlink(argv[2]);
                return 1;
        }
        const char *digest = json_string_value(json_object_get(rep, "digest"));
        /* the digest is stored next to the archive: create --from-snapshot
         * refuses an archive that no longer matches it */
        char side[4200];
        snprintf(side, sizeof(side), "%s.sha256", argv[2]);
        _cleanup_close_ int sfd = open(side, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (sfd < 0 || dprintf(sfd, "%s  %s\n", digest, argv[2]) < 0) {
                fprintf(stderr, "cordon: snapshot: cannot store the digest in %s: %m\n", side);
                json_decref(rep);
                return 1;
        }
        printf("%s\n", digest);
        json_decref(rep);
        return 0;
}

/* --- events --- */

static int cmd_events(int argc, char **argv)
{
        static const struct option opts[] = {
                {"follow", no_argument, NULL, 'f'},
                {"json", no_argument, NULL, 'j'},
                {"after", required_argument, NULL, 'a'},
                {"run", required_argument, NULL, 'r'},
                {0},
        };
        if (argc < 2) {
                fprintf(stderr, "cordon: sandbox events ID [--run RUN] [--after N] [--follow] [--json]\n");
                return EXIT_USAGE;
        }
        const char *id = argv[1], *run = NULL;
        bool follow = false, json = false;
        long long after = 0;
        int c;
        optind = 2;
        while ((c = getopt_long(argc, argv, "fj", opts, NULL)) != -1) {
                switch (c) {
                case 'f':
                        follow = true;
                        break;
                case 'j':
                        json = true;
                        break;
                case 'a':
                        after = strtoll(optarg, NULL, 10);
                        break;
                case 'r':
                        run = optarg;
                        break;
                default:
                        return EXIT_USAGE;
                }
        }
        char dir[600], path[700];
        if (sandbox_dir(id, dir, sizeof(dir)) < 0) {
                fprintf(stderr, "cordon: '%s' is not a sandbox id\n", id);
                return EXIT_USAGE;
        }
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        snprintf(path, sizeof(path), "%s/events.jsonl", dir);
        _cleanup_close_ int fd = dfd >= 0 ? openat(dfd, "events.jsonl", O_RDONLY | O_CLOEXEC | O_NOFOLLOW) : -1;
        if (fd < 0) {
                fprintf(stderr, "cordon: sandbox %s: no events (%s: %m)\n", id, path);
                return 1;
        }
        FILE *f = fdopen(TAKE_FD(fd), "r");
        char *line = NULL;
        size_t cap = 0, partial_len = 0;
        char *partial = NULL;
        for (;;) {
                ssize_t n;
                bool got = false;
                while ((n = getline(&line, &cap, f)) > 0) {
                        got = true;
                        if (line[n - 1] != '\n') {
                                /* being written: keep it for the next round */
                                partial = xrealloc(partial, partial_len + (size_t)n + 1);
                                memcpy(partial + partial_len, line, (size_t)n + 1);
                                partial_len += (size_t)n;
                                continue;
                        }
                        char *full = line;
                        _cleanup_free_ char *joined = NULL;
                        if (partial_len) {
                                joined = xasprintf("%s%s", partial, line);
                                full = joined;
                                partial_len = 0;
                        }
                        json_error_t jerr;
                        json_t *ev = json_loads(full, 0, &jerr);
                        if (!ev)
                                continue;
                        long long seq = (long long)json_integer_value(json_object_get(ev, "seq"));
                        const char *evrun = json_string_value(json_object_get(ev, "run"));
                        if (seq > after && (!run || (evrun && streq(evrun, run)))) {
                                if (json)
                                        fputs(full, stdout);
                                else {
                                        printf("%6lld %s %-12s", seq, json_string_value(json_object_get(ev, "time")),
                                               json_string_value(json_object_get(ev, "type")));
                                        const char *k;
                                        json_t *v;
                                        json_object_foreach(ev, k, v)
                                        {
                                                if (streq(k, "seq") || streq(k, "time") || streq(k, "type"))
                                                        continue;
                                                char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
                                                printf(" %s=%s", k, s);
                                                free(s);
                                        }
                                        putchar('\n');
                                }
                                after = seq;
                        }
                        json_decref(ev);
                }
                clearerr(f);
                fflush(stdout);
                if (!follow)
                        break;
                if (!got && !live_dir(dfd)) {
                        /* the sandbox is gone: one last read, then done */
                        while ((n = getline(&line, &cap, f)) > 0)
                                if (json)
                                        fputs(line, stdout);
                        break;
                }
                if (!got)
                        usleep(100 * 1000);
        }
        free(line);
        free(partial);
        fclose(f);
        return 0;
}

int sentry_sandbox(int argc, char **argv)
{
        /* --root DIR (or --root=DIR) before the verb: where the sandboxes'
         * state lives, as runc's --root */
        if (argc >= 2 && (streq(argv[1], "--root") || startswith(argv[1], "--root="))) {
                const char *dir = argv[1][6] == '=' ? argv[1] + 7 : argc >= 3 ? argv[2] : NULL;
                int used = argv[1][6] == '=' ? 1 : 2;
                _cleanup_free_ char *err = NULL;
                if (!dir) {
                        fprintf(stderr, "cordon: sandbox --root: needs a directory\n");
                        return EXIT_USAGE;
                }
                if (state_set_root(dir, &err) < 0) {
                        fprintf(stderr, "cordon: sandbox %s\n", err);
                        return EXIT_USAGE;
                }
                argv[used] = argv[0];
                argc -= used;
                argv += used;
        }
        if (argc < 2 || streq(argv[1], "--help") || streq(argv[1], "-h") || streq(argv[1], "help")) {
                sandbox_usage(argc < 2 ? stderr : stdout);
                return argc < 2 ? EXIT_USAGE : 0;
        }
        const char *verb = argv[1];
        argc--;
        argv++;
        if (streq(verb, "create"))
                return cmd_create(argc, argv);
        if (streq(verb, "exec"))
                return cmd_exec(argc, argv);
        if (streq(verb, "terminate"))
                return cmd_terminate(argc, argv);
        if (streq(verb, "pause") || streq(verb, "resume"))
                return simple_verb(verb, argc, argv);
        if (streq(verb, "cancel")) {
                if (argc != 3) {
                        fprintf(stderr, "cordon: sandbox cancel ID RUN\n");
                        return EXIT_USAGE;
                }
                json_t *rep = NULL;
                int r = request(argv[1], json_pack("{s:s, s:s}", "op", "cancel", "run", argv[2]), NULL, 0, &rep);
                json_decref(rep);
                return r == 0 ? 0 : 1;
        }
        if (streq(verb, "list"))
                return cmd_list(argc, argv);
        if (streq(verb, "inspect"))
                return cmd_inspect(argc, argv);
        if (streq(verb, "put"))
                return cmd_put(argc, argv);
        if (streq(verb, "get"))
                return cmd_get(argc, argv);
        if (streq(verb, "ls"))
                return cmd_ls(argc, argv);
        if (streq(verb, "snapshot"))
                return cmd_snapshot(argc, argv);
        if (streq(verb, "events"))
                return cmd_events(argc, argv);
        if (streq(verb, "pending"))
                return cmd_pending(argc, argv);
        if (streq(verb, "approve") || streq(verb, "deny"))
                return cmd_decide(streq(verb, "approve"), argc, argv);
        fprintf(stderr, "cordon: unknown sandbox verb '%s'; try 'cordon sandbox --help'\n", verb);
        return EXIT_USAGE;
}
