/* `cordon sandbox exec` and `cordon sandbox events`: the client verbs that
 * stay with a sandbox while it works. exec relays the run's stdio (or its
 * terminal, in raw mode) through the pipes the sentry hands back, forwards
 * the signals a user sends and the terminal's size, and exits with the
 * run's status; events prints the event log from the state directory and,
 * with --follow, keeps reading it until the sandbox is gone. */
#include "config.h"

#include <ctype.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>

#include "sentry/sandbox/sandbox-internal.h"

/* --- exec --- */

static volatile sig_atomic_t pending_signal;

static void on_signal(int sig)
{
        pending_signal = sig;
}

int client_exec(int argc, char **argv)
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
                        client_usage(stdout);
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

        /* stdin, stdout and stderr go across as they are (a closed one as
         * /dev/null); then the write ends of the pipes the run's stdout and
         * stderr come back through (the sentry records them as events on
         * the way): ours, so that nothing needs to come back before the
         * run's status */
        int fds[5];
        int own[2][2] = {{-1, -1}, {-1, -1}};
        _cleanup_close_ int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        for (int i = 0; i < 3; i++)
                fds[i] = fcntl(i, F_GETFD) >= 0 ? i : nul;
        bool client_pipes = !detach && !tty && pipe2(own[0], O_CLOEXEC) == 0 && pipe2(own[1], O_CLOEXEC) == 0;
        if (client_pipes) {
                fds[3] = own[0][1];
                fds[4] = own[1][1];
                json_object_set_new(req, "clientPipes", json_true());
        }
        size_t n_fds = detach || tty ? 0 : client_pipes ? 5 : 3;

        _cleanup_close_ int fd = -1;
        int r = client_connect(id, &fd);
        if (r >= 0)
                r = control_send(fd, req, n_fds ? fds : NULL, n_fds);
        else
                json_decref(req);
        /* the sentry has the write ends now: ours would keep the pipes from
         * ending */
        for (int k = 0; k < 2; k++)
                if (own[k][1] >= 0)
                        close(own[k][1]);
        if (fd < 0) {
                for (int k = 0; k < 2; k++)
                        if (own[k][0] >= 0)
                                close(own[k][0]);
                return EXIT_SANDBOX; /* client_connect said why */
        }
        json_t *rep = NULL;
        /* back come the pipes of the run's stdout and stderr (unless ours
         * went), or with a terminal, of the terminal's output and of our
         * input into it (the sentry holds the pty's master and records the
         * output as events on the way); with our own pipes, only an error,
         * or the "ok" of a sentry that does not take them */
        int back[2] = {-1, -1};
        if (r >= 0 && !client_pipes)
                r = control_recv(fd, &rep, back, 2);
        _cleanup_close_ int tty_in = tty ? back[1] : -1;
        _cleanup_close_ int out_pipe = client_pipes ? own[0][0] : back[0];
        _cleanup_close_ int err_pipe = client_pipes ? own[1][0] : tty ? -1 : back[1];
        if (r == -E2BIG) {
                fprintf(stderr, "cordon: sandbox exec: the command line and environment are too long\n");
                return EXIT_USAGE;
        }
        if (r < 0 || (r == 0 && !client_pipes)) {
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
        rep = NULL;

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
                int more[2] = {-1, -1};
                r = control_recv(fd, &rep, client_pipes ? more : NULL, client_pipes ? 2 : 0);
                if (r <= 0) {
                        if (raw)
                                tcsetattr(STDIN_FILENO, TCSADRAIN, &saved);
                        fprintf(stderr, "cordon: sandbox %s: its sentry went away before the run ended\n", id);
                        return EXIT_SANDBOX;
                }
                if (json_object_get(rep, "exitCode"))
                        break;
                const char *e = json_string_value(json_object_get(rep, "error"));
                if (client_pipes && e) {
                        /* the request refused: nothing ran */
                        fprintf(stderr, "cordon: %s\n", e);
                        json_decref(rep);
                        return EXIT_SANDBOX;
                }
                if (client_pipes && json_is_true(json_object_get(rep, "ok")) && more[0] >= 0 && more[1] >= 0) {
                        /* a sentry that made the pipes itself (an older
                         * one): its come back, ours stay unused */
                        close(out_pipe);
                        close(err_pipe);
                        out_pipe = TAKE_FD(more[0]);
                        err_pipe = TAKE_FD(more[1]);
                        run_out_open = run_err_open = true;
                }
                for (int k = 0; k < 2; k++)
                        if (more[k] >= 0)
                                close(more[k]);
                json_decref(rep);
                rep = NULL;
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

/* --- events --- */

/* Prints the events the log has beyond *after (of run, where given),
 * moving *after on: whether the log had anything new. */
static bool print_events(struct event_reader *er, const char *run, bool json, long long *after)
{
        bool got = false;
        json_t *ev;
        const char *full;
        while (event_reader_next(er, &ev, &full) > 0) {
                got = true;
                long long seq = (long long)json_integer_value(json_object_get(ev, "seq"));
                const char *evrun = json_string_value(json_object_get(ev, "run"));
                if (seq > *after && (!run || (evrun && streq(evrun, run)))) {
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
                        *after = seq;
                }
                json_decref(ev);
        }
        fflush(stdout);
        return got;
}

int client_events(int argc, char **argv)
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
        char *end;
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
                        errno = 0;
                        after = strtoll(optarg, &end, 10);
                        if (!isdigit((unsigned char)optarg[0]) || *end || errno) {
                                fprintf(stderr, "cordon: --after %s: expected an event's seq (0 or more)\n", optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case 'r':
                        run = optarg;
                        if (run[0] != 'r' || !run[1] || run[1 + strspn(run + 1, "0123456789")]) {
                                fprintf(stderr, "cordon: --run %s: expected a run id such as r1\n", run);
                                return EXIT_USAGE;
                        }
                        break;
                default:
                        return EXIT_USAGE;
                }
        }
        struct event_reader er;
        _cleanup_close_ int dfd = -1;
        int r = event_reader_open(id, &er, &dfd);
        if (r == -EINVAL) {
                fprintf(stderr, "cordon: '%s' is not a sandbox id\n", id);
                return EXIT_USAGE;
        }
        if (r < 0) {
                fprintf(stderr, "cordon: sandbox %s: no events (%s/sandboxes/%s/events.jsonl: %s)\n", id, state_root(),
                        id, strerror(-r));
                return 1;
        }
        /* from the first event asked for on, not through the whole log */
        if (after > 0)
                (void)event_reader_seek(&er, after, NULL);
        for (bool last = false;;) {
                bool got = print_events(&er, run, json, &after);
                if (!follow || last)
                        break;
                /* the sandbox is gone: one last read (its last events,
                 * shown as every other), then done */
                if (!got && !state_dir_live(dfd))
                        last = true;
                else if (!got)
                        usleep(100 * 1000);
        }
        event_reader_close(&er);
        return 0;
}
