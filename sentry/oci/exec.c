/* `exec`: another process in a running container, from --process FILE or
 * from the container's own process with the command line's overrides
 * (identity, additional gids, capabilities within the container's own);
 * what it cannot honour (a capability the container does not hold) is
 * refused; a terminal without --console-socket is relayed by the waiting
 * runtime, as runc's. The runtime then waits for the
 * process (with --detach, a waiter it forks does), forwarding the signals
 * it gets, and exits with the process's status. */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "common/file.h"
#include "common/util.h"
#include "sentry/oci/oci.h"
#include "sentry/oci/runtime-internal.h"
#include "sentry/policy/policy.h"
#include "sentry/sandbox/sandbox.h"
#include "sentry/sentry.h"

/* runc's --user uid[:gid] */
static int parse_user(const char *s, uint32_t *uid, uint32_t *gid)
{
        char *end;
        unsigned long u = strtoul(s, &end, 10);
        if (end == s || (*end && *end != ':'))
                return -EINVAL;
        *uid = (uint32_t)u;
        if (*end == ':') {
                const char *g = end + 1;
                unsigned long gv = strtoul(g, &end, 10);
                if (end == g || *end)
                        return -EINVAL;
                *gid = (uint32_t)gv;
        }
        return 0;
}

static const char *const cap_sets[5] = {"bounding", "effective", "permitted", "inheritable", "ambient"};

static void caps_masks(const struct oci_caps *c, uint64_t out[5])
{
        out[0] = c->bounding;
        out[1] = c->effective;
        out[2] = c->permitted;
        out[3] = c->inheritable;
        out[4] = c->ambient;
}

/* The sets an exec asks for (want, the container's own c changed by a
 * --process file or --cap) checked against what the container's process
 * holds, which is all its init can give a run: a capability cordon refuses
 * (but NET_RAW, held as create holds it), or one the container does not
 * hold in the matching set, is refused by name. held (a container whose
 * init stays root, oci_runs_switch): up to the container's bounding set in
 * every set instead. 0, or -errno (said).
 *
 * Why held may give an exec more than the container's process holds (runc's
 * `exec -u 0` into a `--user 1000` container, with the default set): an
 * exec is asked for by the engine alone, on the sentry's control socket
 * (root's or the container's creator's, which the container cannot reach),
 * and its process file is the engine's, written outside the container; the
 * container's own code can neither cause an exec nor change what it asks
 * for. What the exec gets stays within what the container was created with:
 * its user namespace and uid range, its bounding set (the kernel's ceiling
 * for every process of the container, refused capabilities never in it),
 * and cordon's filter, view, Landlock domain, limits and gate, as for any
 * run. */
static int exec_caps_check(const char *id, uint64_t want[5], const uint64_t c[5], bool held)
{
        uint64_t init_eff = c[1] & c[2] & c[0];
        for (size_t i = 0; i < 5; i++) {
                for (int cap = 0; cap < 64; cap++) {
                        uint64_t bit = UINT64_C(1) << cap;
                        if (!(want[i] & bit))
                                continue;
                        const char *name = policy_cap_name(cap), *refused = NULL;
                        int n;
                        if (!name || policy_cap_parse(name, &n, &refused) < 0) {
                                oci_error("exec: process.capabilities.%s: capability %d is not one cordon knows",
                                          cap_sets[i], cap);
                                return -EINVAL;
                        }
                        if (refused && cap != CAP_NET_RAW) { /* held as create holds it */
                                oci_error("exec: process.capabilities.%s: capability CAP_%s is refused: it gives %s",
                                          cap_sets[i], name, refused);
                                return -EPERM;
                        }
                        /* what the run may get from init: its bounding,
                         * permitted and ambient sets at most (ambient ones
                         * cannot be raised past init's), an inheritable
                         * one within its inheritable or permitted set */
                        const char *lacks = !(c[0] & bit)                      ? "bounding"
                                            : held                             ? NULL
                                            : i == 2 && !(c[2] & bit)          ? "permitted"
                                            : i == 3 && !((c[2] | c[3]) & bit) ? "permitted"
                                            : i == 4 && !(c[4] & bit)          ? "ambient"
                                                                               : NULL;
                        if (lacks) {
                                oci_error("exec: process.capabilities.%s: capability CAP_%s is not permitted to "
                                          "container %s (its process's %s set does not hold it)",
                                          cap_sets[i], name, id, lacks);
                                return -EPERM;
                        }
                }
        }
        /* a bounding capability is dropped with CAP_SETPCAP only (which a
         * held init keeps for it) */
        uint64_t dropped = c[0] & ~want[0];
        if (dropped && !held && !(init_eff & (UINT64_C(1) << CAP_SETPCAP))) {
                int cap = __builtin_ctzll(dropped);
                oci_error("exec: process.capabilities.bounding: dropping CAP_%s from the bounding set needs "
                          "CAP_SETPCAP, which container %s's process does not hold",
                          policy_cap_name(cap) ? policy_cap_name(cap) : "?", id);
                return -EPERM;
        }
        return 0;
}

/* runc's --additional-gids, given once or more, each a number or a
 * comma-separated list */
static int parse_gids(const char *s, uint32_t *gids, size_t *n)
{
        while (*s) {
                char *end;
                errno = 0;
                unsigned long g = strtoul(s, &end, 10);
                if (end == s || errno || g > UINT32_MAX || (*end && *end != ','))
                        return -EINVAL;
                if (*n >= OCI_MAX_IDS)
                        return -E2BIG;
                gids[(*n)++] = (uint32_t)g;
                s = *end ? end + 1 : end;
        }
        return 0;
}

static bool same_gids(const uint32_t *a, size_t na, const uint32_t *b, size_t nb)
{
        if (na != nb)
                return false;
        for (size_t i = 0; i < na; i++)
                if (a[i] != b[i])
                        return false;
        return true;
}

/* a signal the waiting exec caught, for its process (relay's callback) */
static void forward_signal(int sig, void *conn)
{
        (void)control_send(*(int *)conn, json_pack("{s:i}", "signal", sig), NULL, 0);
}

int oci_cmd_exec(int argc, char **argv)
{
        static const struct option opts[] = {
                {"process", required_argument, NULL, 'p'},
                {"tty", no_argument, NULL, 't'},
                {"console-socket", required_argument, NULL, 's'},
                {"detach", no_argument, NULL, 'd'},
                {"pid-file", required_argument, NULL, 'P'},
                {"env", required_argument, NULL, 'e'},
                {"cwd", required_argument, NULL, 'w'},
                {"user", required_argument, NULL, 'u'},
                {"preserve-fds", required_argument, NULL, 'F'},
                {"additional-gids", required_argument, NULL, 'g'},
                {"cap", required_argument, NULL, 'c'},
                {"no-new-privs", no_argument, NULL, 'n'},
                {"apparmor", required_argument, NULL, 'a'},
                {"process-label", required_argument, NULL, 'l'},
                {"ignore-paused", no_argument, NULL, 'i'},
                {"cgroup", required_argument, NULL, 'C'},
                {0},
        };
        const char *process_file = NULL, *console_socket = NULL, *pid_file = NULL, *cwd = NULL, *user = NULL;
        bool tty = false, detach = false;
        int preserve = 0;
        uint64_t added_caps = 0;
        uint32_t gids[OCI_MAX_IDS];
        size_t n_gids = 0;
        bool gids_given = false;
        _cleanup_(strv_freep) char **env = xcalloc(1, sizeof(char *));
        size_t n_env = 0;
        int ch;
        optind = 1;
        opterr = 0;
        while ((ch = getopt_long(argc, argv, "+p:ts:dP:e:w:u:c:g:", opts, NULL)) != -1) {
                switch (ch) {
                case 'p':
                        process_file = optarg;
                        break;
                case 't':
                        tty = true;
                        break;
                case 's':
                        console_socket = optarg;
                        break;
                case 'd':
                        detach = true;
                        break;
                case 'P':
                        pid_file = optarg;
                        break;
                case 'e':
                        env = xrealloc(env, (n_env + 2) * sizeof(char *));
                        env[n_env++] = xstrdup(optarg);
                        env[n_env] = NULL;
                        break;
                case 'w':
                        cwd = optarg;
                        break;
                case 'u':
                        user = optarg;
                        break;
                case 'F':
                        preserve = atoi(optarg);
                        break;
                case 'c': {
                        /* runc's: added to the bounding, effective and
                         * permitted sets (checked below against the
                         * container's) */
                        int cap;
                        const char *refused;
                        if (policy_cap_parse(optarg, &cap, &refused) < 0) {
                                /* a capability name cordon does not know
                                 * grants nothing: said and left out, as
                                 * create leaves it out (runtime-spec 1.1) */
                                size_t n = strlen(optarg);
                                if (n > 0 && n < 64 && strspn(optarg, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == n) {
                                        oci_warn("exec --cap %s: unknown capability ignored (it grants nothing)",
                                                 optarg);
                                        break;
                                }
                                oci_error("exec --cap %s: unknown capability", optarg);
                                return 1;
                        }
                        added_caps |= UINT64_C(1) << cap;
                        break;
                }
                case 'g':
                        gids_given = true;
                        if (parse_gids(optarg, gids, &n_gids) < 0) {
                                oci_error("exec --additional-gids %s: expected gids (at most %d)", optarg, OCI_MAX_IDS);
                                return 1;
                        }
                        break;
                case 'a':
                case 'l':
                        oci_warn("exec: LSM label %s ignored (no LSM profile is applied by cordon)", optarg);
                        break;
                case 'n':
                case 'i':
                case 'C':
                        break; /* no_new_privs is always set; the others change nothing here */
                default:
                        oci_error("exec: unknown option %s", argv[optind - 1]);
                        return EXIT_USAGE;
                }
        }
        if (optind >= argc) {
                oci_error("exec: usage: exec [options] ID [COMMAND ARGS...]");
                return EXIT_USAGE;
        }
        const char *id = argv[optind++];
        if (preserve < 0 || preserve > OCI_MAX_PRESERVE) {
                oci_error("exec --preserve-fds %d: at most %d", preserve, OCI_MAX_PRESERVE);
                return 1;
        }
        struct container c;
        if (oci_lookup(id, &c) < 0)
                return 1;
        const char *status = oci_container_status(&c);
        if (!streq(status, "running")) {
                oci_error("cannot exec in a %s container", status);
                oci_container_close(&c);
                return 1;
        }

        /* the process: the --process file, else the container's own with
         * the command line's overrides (as runc does) */
        struct oci_process pr = {0};
        _cleanup_free_ char *err = NULL;
        struct oci_spec *spec = NULL;
        int r = 0;
        if (oci_spec_load(oci_st_str(&c, "bundle"), &spec, &err) < 0) {
                oci_error("exec: the container's config.json: %s", err ? err : "unreadable");
                r = -EINVAL;
        }
        uint32_t want_uid = 0, want_gid = 0;
        bool has_caps = false;
        if (r == 0 && process_file) {
                _cleanup_free_ char *text = NULL;
                free(TAKE_PTR(err));
                if ((r = read_file_text(process_file, &text)) < 0)
                        oci_error("exec --process %s: %s", process_file, strerror(-r));
                else if ((r = oci_process_parse(text, strlen(text), &pr, &err)) < 0)
                        oci_error("exec --process %s: %s", process_file, err ? err : strerror(-r));
                want_uid = pr.user.uid;
                want_gid = pr.user.gid;
                if (r == 0) {
                        /* what the file gives is the run's (absent: the
                         * container's own, as runc takes them) */
                        json_t *root = json_loads(text, 0, NULL);
                        json_t *juser = json_object_get(root, "user");
                        has_caps = json_object_get(root, "capabilities") != NULL;
                        for (char **w = pr.caps.ignored; w && *w; w++)
                                oci_warn("exec --process %s: %s", process_file, *w);
                        if (!gids_given && json_object_get(juser, "additionalGids")) {
                                gids_given = true;
                                n_gids = 0;
                                for (size_t i = 0; i < pr.user.n_additional_gids && n_gids < OCI_MAX_IDS; i++)
                                        gids[n_gids++] = pr.user.additional_gids[i];
                        }
                        json_decref(root);
                }
        } else if (r == 0) {
                if (optind >= argc) {
                        oci_error("exec: no command given (arguments after the id, or --process FILE)");
                        r = -EINVAL;
                } else {
                        pr.args = xcalloc((size_t)(argc - optind) + 1, sizeof(char *));
                        for (int i = optind; i < argc; i++)
                                pr.args[i - optind] = xstrdup(argv[i]);
                        size_t n = 0;
                        for (char **e = spec->process.env; e && *e; e++)
                                n++;
                        pr.env = xcalloc(n + 1, sizeof(char *));
                        for (size_t i = 0; i < n; i++)
                                pr.env[i] = xstrdup(spec->process.env[i]);
                        pr.cwd = xstrdup(spec->process.cwd ? spec->process.cwd : "/");
                        pr.terminal = tty;
                        want_uid = spec->process.user.uid;
                        want_gid = spec->process.user.gid;
                }
        }
        if (r == 0 && user && parse_user(user, &want_uid, &want_gid) < 0) {
                oci_error("exec --user %s: expected UID[:GID]", user);
                r = -EINVAL;
        }
        /* another identity: init (which forks the run) switches it, with
         * the container's own CAP_SETUID and CAP_SETGID, as root in the
         * container can; without them it cannot, and says so */
        bool other_user = want_uid != spec->process.user.uid || want_gid != spec->process.user.gid;
        if (r == 0 && other_user && (want_uid > 65535 || want_gid > 65535)) {
                oci_error("exec as %u:%u: not one of the container's ids (0-65535)", want_uid, want_gid);
                r = -EINVAL;
        }
        /* the capability sets and groups asked for, sent only where they
         * differ from the container's own, which the run has from init */
        uint64_t want_caps[5], own_caps[5];
        bool send_caps = false, send_gids = false;
        bool held = r == 0 && oci_runs_switch(&spec->process);
        if (r == 0) {
                caps_masks(&spec->process.caps, own_caps);
                caps_masks(has_caps ? &pr.caps : &spec->process.caps, want_caps);
                want_caps[0] |= added_caps;
                want_caps[1] |= added_caps;
                want_caps[2] |= added_caps;
                if (want_caps[3])
                        want_caps[4] |= added_caps;
                r = exec_caps_check(id, want_caps, own_caps, held);
                /* another user: the sets kept across the switch, as runc
                 * applies them to any user (an ambient one survives the
                 * exec), not dropped as a plain switch away from root */
                send_caps = other_user;
                for (size_t i = 0; r == 0 && i < 5; i++)
                        send_caps = send_caps || want_caps[i] != own_caps[i];
                for (size_t i = 0; r == 0 && i < n_gids; i++)
                        if (gids[i] > 65535) {
                                oci_error("exec: additionalGids: %u is not one of the container's ids (0-65535)",
                                          gids[i]);
                                r = -EINVAL;
                        }
                send_gids = gids_given && !same_gids(gids, n_gids, spec->process.user.additional_gids,
                                                     spec->process.user.n_additional_gids);
                /* a held init's runs all name their identity (initd.c):
                 * without additionalGids a process file's has none (as
                 * runc's), the container's own process's has its own */
                if (held && !gids_given) {
                        n_gids = 0;
                        for (size_t i = 0;
                             !process_file && i < spec->process.user.n_additional_gids && n_gids < OCI_MAX_IDS; i++)
                                gids[n_gids++] = spec->process.user.additional_gids[i];
                }
        }
        if (r == 0) {
                if (cwd) {
                        free(pr.cwd);
                        pr.cwd = xstrdup(cwd);
                }
                for (size_t i = 0; i < n_env; i++) {
                        size_t n = 0;
                        while (pr.env && pr.env[n])
                                n++;
                        pr.env = xrealloc(pr.env, (n + 2) * sizeof(char *));
                        pr.env[n] = xstrdup(env[i]);
                        pr.env[n + 1] = NULL;
                }
                if (tty)
                        pr.terminal = true;
                /* without --console-socket, a foreground exec relays the
                 * terminal itself, as runc's does (its size from ours, set
                 * before the process runs) */
                struct winsize ws;
                if (pr.terminal && !console_socket && detach) {
                        oci_error("cannot allocate tty if cordon-oci will detach without setting console socket");
                        r = -EINVAL;
                } else if (pr.terminal && !console_socket && ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0) {
                        pr.console_height = ws.ws_row;
                        pr.console_width = ws.ws_col;
                }
        }
        oci_spec_free(spec);
        const char *sid = oci_st_str(&c, "sandbox");
        _cleanup_free_ char *sid_copy = sid ? xstrdup(sid) : NULL;
        oci_container_close(&c);
        if (r < 0) {
                oci_process_done(&pr);
                return 1;
        }

        _cleanup_close_ int conn = -1;
        r = control_connect(sid_copy, &conn);
        if (r < 0) {
                oci_error("exec: the container's sentry does not answer: %s", strerror(-r));
                oci_process_done(&pr);
                return 1;
        }
        _cleanup_close_ int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        int fds[EXEC_MAX_FDS];
        size_t n_fds = oci_client_fds(fds, nul, preserve);
        json_t *req = oci_process_request(&pr, false, pr.terminal);
        if (held) {
                oci_request_identity(req, want_uid, want_gid, gids, n_gids, want_caps);
                other_user = send_caps = send_gids = false; /* all said */
        }
        if (other_user)
                json_object_set_new(req, "user",
                                    json_pack("{s:I, s:I}", "uid", (json_int_t)want_uid, "gid", (json_int_t)want_gid));
        if (preserve)
                json_object_set_new(req, "preserveFds", json_integer(preserve));
        if (send_caps) {
                json_t *caps = json_object();
                for (size_t i = 0; i < 5; i++)
                        json_object_set_new(caps, cap_sets[i], json_integer((json_int_t)want_caps[i]));
                json_object_set_new(req, "caps", caps);
        }
        if (send_gids) {
                json_t *g = json_array();
                for (size_t i = 0; i < n_gids; i++)
                        json_array_append_new(g, json_integer(gids[i]));
                json_object_set_new(req, "groups", g);
        }
        oci_process_done(&pr);
        /* the process's word on its set-up (its command found) comes back
         * on this socket: a missing command fails the exec, as runc's */
        int setup[2] = {-1, -1};
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, setup) < 0) {
                oci_error("exec: %s", strerror(errno));
                json_decref(req);
                return 1;
        }
        _cleanup_close_ int setup_rd = setup[0];
        fds[n_fds++] = setup[1];
        json_object_set_new(req, "report", json_true());
        r = control_send(conn, req, fds, n_fds);
        close(setup[1]);
        json_t *rep = NULL;
        int back[1] = {-1};
        if (r >= 0)
                r = control_recv(conn, &rep, back, 1);
        if (r <= 0) {
                oci_error("exec: no answer from the container's sentry");
                return 1;
        }
        const char *rerr = json_string_value(json_object_get(rep, "error"));
        if (rerr) {
                oci_error("exec: %s", rerr);
                json_decref(rep);
                return 1;
        }
        json_decref(rep);
        if (oci_await_setup(setup_rd, "exec failed") < 0) {
                if (back[0] >= 0)
                        close(back[0]);
                return 255; /* runc's status for an exec that did not start */
        }
        _cleanup_close_ int master = -1;
        if (back[0] >= 0 && !console_socket)
                master = TAKE_FD(back[0]); /* relayed below */
        if (back[0] >= 0) {
                r = oci_send_console(console_socket, back[0]);
                close(back[0]);
                if (r < 0) {
                        oci_error("--console-socket %s: %s", console_socket, strerror(-r));
                        return 1;
                }
        }

        /* The process is a child of the sandbox's init, which no caller can
         * wait for; a waiter that exits with its status stands in for it
         * (in --pid-file, as conmon and the shim expect for exec). */
        pid_t waiter = 0;
        if (detach) {
                fflush(NULL);
                waiter = fork();
                if (waiter < 0) {
                        oci_error("exec: fork: %s", strerror(errno));
                        return 1;
                }
                if (waiter > 0) {
                        if (pid_file && (r = oci_write_pid_file(pid_file, waiter)) < 0) {
                                oci_error("--pid-file %s: %s", pid_file, strerror(-r));
                                return 1;
                        }
                        return 0;
                }
                /* the waiter holds nothing of the caller's: its pipes must
                 * close when the process closes them */
                if (nul >= 0) {
                        dup2(nul, 0);
                        dup2(nul, 1);
                        dup2(nul, 2);
                }
                setsid();
        } else if (pid_file && (r = oci_write_pid_file(pid_file, getpid())) < 0) {
                oci_error("--pid-file %s: %s", pid_file, strerror(-r));
                return 1;
        }
        oci_catch_signals();
        if (master >= 0)
                oci_relay_terminal(master, forward_signal, &conn);
        for (;;) {
                if (oci_pending_signal) {
                        int sig = oci_pending_signal;
                        oci_pending_signal = 0;
                        (void)control_send(conn, json_pack("{s:i}", "signal", sig), NULL, 0);
                }
                struct pollfd p = {conn, POLLIN, 0};
                if (poll(&p, 1, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                rep = NULL;
                int n = control_recv(conn, &rep, NULL, 0);
                if (n <= 0)
                        break;
                json_t *code = json_object_get(rep, "exitCode");
                if (code) {
                        int ec = (int)json_integer_value(code);
                        json_decref(rep);
                        return ec;
                }
                json_decref(rep);
        }
        if (!detach)
                oci_error("exec: the container's sentry went away before the process ended");
        return 128 + SIGKILL;
}
