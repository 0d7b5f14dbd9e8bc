/* The runs of a long-lived sandbox (`cordon sandbox exec`): building
 * MSG_EXEC from a request and handing it to init with the run's stdio (the
 * client's, a terminal of the sandbox's own devpts, or a detached run's log
 * pipe), the run records, the signals a run gets (cancel, --timeout, its
 * client's), init's word of each run's pid and exit, and a run's end. What a
 * run writes: run-output.c. */
#include "config.h"

#include <fcntl.h>
#include <jansson.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>

#include "common/fdpass.h"
#include "sentry/sandbox/sandbox-internal.h"

struct run_rec *run_find(struct serve *srv, int num)
{
        /* run n is the nth record (run_exec numbers them so) */
        if (num > 0 && num <= srv->n_runs && srv->runs[num - 1].num == num)
                return &srv->runs[num - 1];
        for (int i = 0; i < srv->n_runs; i++)
                if (srv->runs[i].num == num)
                        return &srv->runs[i];
        return NULL;
}

struct run_rec *run_find_id(struct serve *srv, const char *id)
{
        if (!id || id[0] != 'r')
                return NULL;
        char *end;
        long n = strtol(id + 1, &end, 10);
        if (*end || n <= 0 || n > INT32_MAX)
                return NULL;
        return run_find(srv, (int)n);
}

/* A signal for a run: init sends it to the run's process and process
 * group. SIGKILL (cancel, --timeout) also goes to the run's own control
 * group, which holds every process the run forked, also those that left its
 * session (setsid, double fork): they all end, and no other run's does.
 * Without a group (no cgroup v2 on the host: see cgroup_run_create) only
 * the process group is reached, and a process that left it survives. */
void run_kill(struct sandbox_state *st, struct run_rec *r, int sig)
{
        if (sig == SIGKILL && r->cgroup) {
                int q = cgroup_run_kill(st->cg, r->num, false);
                if (q < 0)
                        fprintf(stderr, "cordon: sandbox %s: cannot kill the group of run r%d: %s\n", st->serve->id,
                                r->num, strerror(-q));
        }
        struct msg m = {.type = MSG_KILL, .value = sig, .aux = r->num};
        (void)send(st->sock, &m, sizeof(m), MSG_NOSIGNAL);
}

/* Builds MSG_EXEC from the request: cwd, argv, the sandbox's environment
 * with the request's K=V on top. */
static int build_exec(const struct sandbox_state *st, json_t *req, int num, struct exec_msg *e, char *why, size_t size)
{
        json_t *argv = json_object_get(req, "argv"), *env = json_object_get(req, "env"), *v;
        const char *cwd = json_string_value(json_object_get(req, "cwd"));
        /* none asked: an OCI container's process.cwd (runc's exec starts
         * there: the image may have no /root), else the home */
        if (!cwd)
                cwd = st->plan->oci && st->plan->oci->cwd ? st->plan->oci->cwd : "/root";
        if (!json_is_array(argv) || json_array_size(argv) == 0 || json_array_size(argv) > 4096) {
                snprintf(why, size, "exec: argv must be a non-empty array of strings");
                return -EINVAL;
        }
        if (cwd[0] != '/') {
                snprintf(why, size, "exec: cwd must be an absolute path in the sandbox");
                return -EINVAL;
        }
        memset(e, 0, offsetof(struct exec_msg, strings));
        e->type = MSG_EXEC;
        e->run = num;
        size_t len = 0;
#define PUT(s)                                                                                        \
        do {                                                                                          \
                size_t l_ = strlen(s) + 1;                                                            \
                if (len + l_ > EXEC_MAX_STRINGS) {                                                    \
                        snprintf(why, size, "exec: the command line and environment exceed %d bytes", \
                                 EXEC_MAX_STRINGS);                                                   \
                        return -E2BIG;                                                                \
                }                                                                                     \
                memcpy(e->strings + len, s, l_);                                                      \
                len += l_;                                                                            \
        } while (0)
        PUT(cwd);
        size_t i;
        json_array_foreach(argv, i, v)
        {
                if (!json_is_string(v)) {
                        snprintf(why, size, "exec: argv[%zu] is not a string", i);
                        return -EINVAL;
                }
                PUT(json_string_value(v));
                e->argc++;
        }
        /* the request's variables override the sandbox's; an OCI process
         * (cleanEnv) has exactly the environment its config gives */
        bool clean = json_is_true(json_object_get(req, "cleanEnv"));
        for (char **p = clean ? NULL : st->plan->envp; p && *p; p++) {
                const char *eq = strchr(*p, '=');
                bool overridden = false;
                json_array_foreach(env, i, v)
                {
                        const char *kv = json_string_value(v);
                        if (kv && eq && strncmp(kv, *p, (size_t)(eq - *p + 1)) == 0)
                                overridden = true;
                }
                if (!overridden) {
                        PUT(*p);
                        e->envc++;
                }
        }
        json_array_foreach(env, i, v)
        {
                const char *kv = json_string_value(v);
                const char *eq = kv ? strchr(kv, '=') : NULL;
                if (!eq || eq == kv || e->envc >= 4096) {
                        snprintf(why, size, "exec: env[%zu] must be KEY=VALUE", i);
                        return -EINVAL;
                }
                PUT(kv);
                e->envc++;
        }
#undef PUT
        e->len = (uint32_t)len;
        return 0;
}

static int active_runs(const struct serve *srv)
{
        int n = 0;
        for (int i = 0; i < srv->n_runs; i++)
                n += srv->runs[i].running;
        return n;
}

/* Opens a pty pair in the view's devpts (dev/pts/ptmx, resolved inside
 * the view's root), the slave through the master (TIOCGPTPEER) so that no
 * path of the sandbox's names it. */
static int open_sandbox_pty(struct sandbox_state *st, int *ret_master, int *ret_slave)
{
        struct open_how how = {.flags = O_RDWR | O_NOCTTY | O_CLOEXEC,
                               .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS};
        int m = notify_feature_absent("openat2")
                        ? -1
                        : (int)syscall(SYS_openat2, st->fsctx.root_fd, "dev/pts/ptmx", &how, sizeof(how));
        if (m < 0 && (errno == ENOSYS || notify_feature_absent("openat2")))
                m = fs_open_in_root(st->fsctx.root_fd, "dev/pts/ptmx", O_RDWR | O_NOCTTY); /* follows no symlink */
        else if (m < 0)
                m = negative_errno();
        if (m < 0)
                return m;
        struct stat sb;
        int unlock = 0;
        if (fstat(m, &sb) < 0 || !S_ISCHR(sb.st_mode) || ioctl(m, TIOCSPTLCK, &unlock) < 0) {
                int r = negative_errno();
                close(m);
                return r;
        }
        int sl = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (sl < 0) {
                int r = negative_errno();
                close(m);
                return r;
        }
        *ret_master = m;
        *ret_slave = sl;
        return 0;
}

static void close_pipes(int (*p)[2][2])
{
        for (int k = 0; k < 2; k++)
                for (int e = 0; e < 2; e++)
                        if ((*p)[k][e] >= 0)
                                close((*p)[k][e]);
}

/* The client's stdin, stdout and stderr, to go into the sandbox as they
 * are: all three passed, and through the checks `cordon run` applies to its
 * own stdio. false: refused, and the reply says why. */
static bool client_stdio_ok(int conn, const int fds[EXEC_MAX_FDS])
{
        char why[512];
        for (int i = 0; i < 3; i++)
                if (fds[i] < 0) {
                        control_reply_error(conn, "exec: stdin, stdout and stderr must be passed");
                        return false;
                }
        if (check_passed_fds(fds, why, sizeof(why)) < 0) {
                control_reply_error(conn, "%s", why);
                return false;
        }
        return true;
}

/* Whether init may start a run with a child that shares its memory until
 * the exec (EXEC_SHARED_VM, initd.c run_vfork: no copy of init's page
 * tables on the exec's path). That child stays as init is, not dumpable,
 * where a forked one is made dumpable for the sentry's sake (initd.c
 * exec_run): this side must need no such help before the exec. It needs
 * none where execs run natively (neither the exec handler nor the tracer
 * looks at the child before its exec) and the sentry's workers read any
 * memory of its user namespace (privileged, holding CAP_SYS_PTRACE, in the
 * namespace it was started in: a trapped call of the child before its exec
 * is read as before). OCI runs keep their fork (hold, report, the
 * container's identity). */
static bool run_may_share_vm(const struct sandbox_state *st)
{
        static int can_ptrace = -1;
        if (can_ptrace < 0) {
                struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3};
                struct __user_cap_data_struct d[2] = {0};
                can_ptrace = syscall(SYS_capget, &h, d) == 0 &&
                             (d[CAP_SYS_PTRACE / 32].permitted & (1U << (CAP_SYS_PTRACE % 32)));
        }
        return st->native_exec && st->privileged && can_ptrace && !st->serve->oci;
}

/* The write ends of the client's own output pipes (fds[3] and fds[4],
 * "clientPipes"), into (*ret)[k][1]; (*ret)[k][0] stays -1: the client holds the
 * read ends. Each must be a pipe open for writing: the sentry writes the
 * run's output there, what it would have written into pipes of its own
 * whose read ends it passed back. false: refused, and the reply says why. */
static bool take_client_pipes(int conn, int fds[EXEC_MAX_FDS], int (*ret)[2][2])
{
        for (int k = 0; k < 2; k++) {
                struct stat st;
                int fl = fds[3 + k] >= 0 ? fcntl(fds[3 + k], F_GETFL) : -1;
                if (fl < 0 || (fl & O_ACCMODE) != O_WRONLY || fstat(fds[3 + k], &st) < 0 || !S_ISFIFO(st.st_mode)) {
                        control_reply_error(conn, "exec: clientPipes: fds 3 and 4 must be pipes open for writing");
                        return false;
                }
        }
        for (int k = 0; k < 2; k++)
                (*ret)[k][1] = TAKE_FD(fds[3 + k]);
        return true;
}

/* exec: a run inside the sandbox with the client's stdio (or, detached, a
 * log file the sentry writes, bounded). */
void run_exec(struct sandbox_state *st, int conn, json_t *req, int fds[EXEC_MAX_FDS])
{
        struct serve *srv = st->serve;
        char why[512];
        if (streq(srv->status, "paused")) {
                control_reply_error_code(conn, SANDBOX_ERR_CONFLICT,
                                         "sandbox %s is paused: resume it before exec (`cordon sandbox resume %s`, "
                                         "or POST /v1/sandboxes/%s/resume)",
                                         srv->id, srv->id, srv->id);
                return;
        }
        if (active_runs(srv) >= MAX_ACTIVE_RUNS || srv->n_runs >= MAX_RUNS) {
                control_reply_error_code(conn, SANDBOX_ERR_QUOTA,
                                         "too many runs in sandbox %s (at most %d at once, %d in all)", srv->id,
                                         MAX_ACTIVE_RUNS, MAX_RUNS);
                return;
        }
        bool detach = json_is_true(json_object_get(req, "detach"));
        bool tty = json_is_true(json_object_get(req, "tty"));
        if (tty && detach) {
                control_reply_error(conn, "exec: a terminal and --detach do not go together");
                return;
        }
        json_int_t timeout_ms = json_integer_value(json_object_get(req, "timeoutMs"));
        /* OCI: "direct" hands the client's stdio to the run as they are (no
         * relay through the sentry: the client, a runtime command, exits
         * at once; conmon and the shim read the pipes themselves); "hold"
         * keeps the run before its exec until op "start"; "main" makes it
         * the container's process; preserveFds more fds become its 3, 4, ...;
         * "report": the fd after them is a socket of the client's, where
         * the run says whether it got ready (its command found: initd.c),
         * so that create and exec fail as runc's */
        bool direct = json_is_true(json_object_get(req, "direct"));
        /* "clientPipes": the client made the pipes its run's stdout and
         * stderr come back through and passed their write ends after its
         * stdio; no reply until the run's status (or an error) */
        bool client_pipes = json_is_true(json_object_get(req, "clientPipes")) && !tty && !detach && !direct;
        bool hold = json_is_true(json_object_get(req, "hold"));
        bool is_main = json_is_true(json_object_get(req, "main"));
        bool report = json_is_true(json_object_get(req, "report"));
        json_int_t n_preserve = json_integer_value(json_object_get(req, "preserveFds"));
        if ((hold || is_main || n_preserve || report) && !srv->oci) {
                control_reply_error(conn, "exec: hold, main, report and preserveFds are for OCI containers only");
                return;
        }
        if (is_main && srv->main_run) {
                control_reply_error(conn, "exec: the container already has its process");
                return;
        }
        if (n_preserve < 0 || n_preserve > EXEC_MAX_FDS - 6) {
                control_reply_error(conn, "exec: at most %d preserved fds", EXEC_MAX_FDS - 6);
                return;
        }
        /* the report socket: the run's before its exec only (closed
         * then; close-on-exec besides), and checked as stdio is */
        int report_fd = report ? fds[3 + n_preserve] : -1;
        if (report) {
                int chk[3] = {report_fd, -1, -1};
                if (report_fd < 0 || check_passed_fds(chk, why, sizeof(why)) < 0) {
                        control_reply_error(conn, "exec: the report socket: %s", report_fd < 0 ? "not passed" : why);
                        return;
                }
        }
        for (json_int_t i = 0; i < n_preserve; i++) {
                /* preserved fds pass the same checks as stdio */
                int chk[3] = {fds[3 + i], -1, -1};
                if (chk[0] < 0) {
                        control_reply_error(conn, "exec: preserved fd %lld was not passed", (long long)(3 + i));
                        return;
                }
                if (check_passed_fds(chk, why, sizeof(why)) < 0) {
                        control_reply_error(conn, "preserved fd %lld: %s", (long long)(3 + i), why);
                        return;
                }
        }
        int num = srv->n_runs + 1;
        static struct exec_msg e;
        if (build_exec(st, req, num, &e, why, sizeof(why)) < 0) {
                control_reply_error(conn, "%s", why);
                return;
        }
        e.n_preserve = (uint32_t)n_preserve;
        if (run_may_share_vm(st))
                e.flags |= EXEC_SHARED_VM;
        /* OCI exec --user: another id of the container's range, which its
         * init switches the run to (refused there unless the container's
         * identity holds CAP_SETUID and CAP_SETGID in its namespace) */
        json_t *user = json_object_get(req, "user");
        if (user) {
                json_int_t uid = json_integer_value(json_object_get(user, "uid"));
                json_int_t gid = json_integer_value(json_object_get(user, "gid"));
                if (!srv->oci || !json_is_integer(json_object_get(user, "uid")) ||
                    !json_is_integer(json_object_get(user, "gid")) || uid < 0 || gid < 0 || uid > 65535 ||
                    gid > 65535) {
                        control_reply_error(conn, "exec: user is an OCI container's uid and gid, each 0-65535");
                        return;
                }
                e.flags |= EXEC_USER;
                e.uid = (uint32_t)uid;
                e.gid = (uint32_t)gid;
        }
        /* OCI exec's own additionalGids and capability sets. Nothing here
         * can widen the run's standing: init applies them with what it
         * holds itself (the container's sets, within the sandbox's user
         * namespace), and the kernel refuses a capability beyond them. */
        json_t *groups = json_object_get(req, "groups");
        if (groups) {
                size_t i;
                json_t *g;
                bool ok = srv->oci && json_is_array(groups) && json_array_size(groups) <= EXEC_MAX_GROUPS;
                json_array_foreach(groups, i, g) ok =
                        ok && json_is_integer(g) && json_integer_value(g) >= 0 && json_integer_value(g) <= 65535;
                if (!ok) {
                        control_reply_error(conn,
                                            "exec: groups are at most %d of an OCI container's gids, each 0-65535",
                                            EXEC_MAX_GROUPS);
                        return;
                }
                e.flags |= EXEC_GROUPS;
                e.n_groups = (uint32_t)json_array_size(groups);
                json_array_foreach(groups, i, g) e.groups[i] = (uint32_t)json_integer_value(g);
        }
        json_t *caps = json_object_get(req, "caps");
        if (caps) {
                static const char *const sets[] = {"bounding", "effective", "permitted", "inheritable", "ambient"};
                bool ok = srv->oci && json_is_object(caps);
                for (size_t i = 0; ok && i < ELEMENTSOF(sets); i++) {
                        json_t *v = json_object_get(caps, sets[i]);
                        ok = json_is_integer(v) && json_integer_value(v) >= 0;
                        e.caps[i] = ok ? (uint64_t)json_integer_value(v) : 0;
                }
                if (!ok) {
                        control_reply_error(conn, "exec: caps are an OCI container's five capability sets, as masks");
                        return;
                }
                e.flags |= EXEC_CAPS;
        }
        _cleanup_close_ int hold_rd = -1, hold_wr = -1;
        if (hold) {
                int hp[2];
                if (pipe2(hp, O_CLOEXEC) < 0) {
                        control_reply_error(conn, "exec: cannot make the start pipe: %s", strerror(errno));
                        return;
                }
                hold_rd = hp[0];
                hold_wr = hp[1];
                e.flags |= EXEC_HOLD;
        }
        int log_in = -1, log_fd = -1;
        int pass[4] = {fds[0], fds[1], fds[2], -1};
        _cleanup_(close_pipes) int run_pipe[2][2] = {{-1, -1}, {-1, -1}};
        _cleanup_(close_pipes) int client_pipe[2][2] = {{-1, -1}, {-1, -1}};
        _cleanup_close_ int nul = -1, pw = -1, master = -1, slave = -1;
        if (tty) {
                /* a terminal from the sandbox's own devpts instance: the run
                 * gets its slave; but for OCI, the sentry keeps the master
                 * and relays it to the client through two pipes, so that
                 * what the run shows on its terminal becomes events too */
                int r = open_sandbox_pty(st, &master, &slave);
                if (r < 0) {
                        control_reply_error(conn, "exec: cannot open a terminal in the sandbox: %s", strerror(-r));
                        return;
                }
                struct winsize ws = {.ws_row = (unsigned short)json_integer_value(json_object_get(req, "rows")),
                                     .ws_col = (unsigned short)json_integer_value(json_object_get(req, "cols"))};
                if (ws.ws_row && ws.ws_col)
                        (void)ioctl(master, TIOCSWINSZ, &ws);
                pass[0] = pass[1] = pass[2] = slave;
                e.flags |= EXEC_TTY;
        }
        if (tty && direct) {
                /* OCI (--console-socket): the terminal's master itself goes
                 * back, as runc hands it to the engine, which checks that it
                 * is a terminal (containerd's shim), reads and writes it,
                 * and sets its size; nothing is relayed or recorded. It is
                 * a terminal of the sandbox's own devpts, and its holder
                 * gets from it only what the run writes to its slave. */
        } else if (tty) {
                /* run_pipe[0]: the master's output (from a dup of it, so
                 * that the two directions close apart); client_pipe[0]: out
                 * to the client; client_pipe[1]: the client's input in;
                 * run_pipe[1]: into the master */
                if (pipe2(client_pipe[0], O_CLOEXEC) < 0 || pipe2(client_pipe[1], O_CLOEXEC) < 0) {
                        control_reply_error(conn, "exec: cannot make the terminal's pipes: %s", strerror(errno));
                        return;
                }
                run_pipe[0][0] = fcntl(master, F_DUPFD_CLOEXEC, 3);
                run_pipe[1][1] = TAKE_FD(master);
                if (run_pipe[0][0] < 0) {
                        control_reply_error(conn, "exec: cannot relay the terminal: %s", strerror(errno));
                        return;
                }
                fcntl(run_pipe[0][0], F_SETFL, O_NONBLOCK);
                fcntl(run_pipe[1][1], F_SETFL, O_NONBLOCK);
                fcntl(client_pipe[0][1], F_SETFL, O_NONBLOCK);
                fcntl(client_pipe[1][0], F_SETFL, O_NONBLOCK);
        } else if (direct) {
                if (!client_stdio_ok(conn, fds))
                        return;
        } else if (detach) {
                int p[2];
                char name[64];
                snprintf(name, sizeof(name), "runs/r%d.log", num);
                nul = open("/dev/null", O_RDWR | O_CLOEXEC);
                log_fd = openat(srv->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (nul < 0 || log_fd < 0 || pipe2(p, O_CLOEXEC) < 0) {
                        control_reply_error(conn, "cannot open the run's log: %s", strerror(errno));
                        if (log_fd >= 0)
                                close(log_fd);
                        return;
                }
                log_in = p[0];
                pw = p[1];
                fcntl(log_in, F_SETFL, O_NONBLOCK);
                pass[0] = nul;
                pass[1] = pass[2] = pw;
        } else {
                /* the client's descriptors go into the sandbox: the same
                 * checks as `cordon run` applies to its own stdio */
                if (!client_stdio_ok(conn, fds))
                        return;
                /* stdin goes in as it is; stdout and stderr come back
                 * through the sentry, which records them as events and
                 * passes them on to the client (struct stream) */
                if (client_pipes && !take_client_pipes(conn, fds, &client_pipe))
                        return;
                for (int k = 0; k < 2; k++) {
                        if (pipe2(run_pipe[k], O_CLOEXEC) < 0 ||
                            (!client_pipes && pipe2(client_pipe[k], O_CLOEXEC) < 0)) {
                                control_reply_error(conn, "exec: cannot make the run's output pipes: %s",
                                                    strerror(errno));
                                return;
                        }
                        fcntl(run_pipe[k][0], F_SETFL, O_NONBLOCK);
                        fcntl(client_pipe[k][1], F_SETFL, O_NONBLOCK);
                }
                pass[1] = run_pipe[0][1];
                pass[2] = run_pipe[1][1];
        }
        /* the run's own control group, which its first process enters
         * before anything of the run executes (initd.c exec_run); made
         * ahead, while the sandbox was idle, by run_group_prepare */
        _cleanup_close_ int procs = -1;
        if (srv->next_num == num) {
                /* made ahead, its cgroup.procs open (run_group_prepare) */
                procs = srv->next_procs;
                srv->next_num = 0;
        } else if (st->cg) {
                int q = cgroup_run_create(st->cg, num, &procs);
                if (q < 0 && q != -EOPNOTSUPP) {
                        control_reply_error(conn, "exec: cannot make the run's control group: %s", strerror(-q));
                        return;
                }
        }
        if (procs >= 0)
                e.flags |= EXEC_CGROUP;
        int all[EXEC_MAX_FDS] = {pass[0], pass[1], pass[2]};
        size_t n_all = 3;
        if (hold)
                all[n_all++] = hold_rd;
        if (report) {
                all[n_all++] = report_fd;
                e.flags |= EXEC_REPORT;
        }
        for (json_int_t i = 0; i < n_preserve; i++)
                all[n_all++] = fds[3 + i];
        /* last, where init looks for it (initd.c exec_run) */
        if (procs >= 0)
                all[n_all++] = procs;
        if (send_fds(st->sock, &e, offsetof(struct exec_msg, strings) + e.len, all, n_all) < 0) {
                if (procs >= 0)
                        (void)cgroup_run_remove(st->cg, num);
                control_reply_error(conn, "the sandbox's init is gone");
                if (log_in >= 0)
                        close(log_in);
                if (log_fd >= 0)
                        close(log_fd);
                return;
        }
        struct run_rec *r = &srv->runs[srv->n_runs++];
        *r = (struct run_rec){.num = num,
                              .argv = json_incref(json_object_get(req, "argv")),
                              .detached = detach,
                              .cgroup = procs >= 0,
                              .tty = tty,
                              .running = true,
                              .conn = -1,
                              .log_in = log_in,
                              .log_fd = log_fd,
                              .timer = -1,
                              .hold_wr = TAKE_FD(hold_wr),
                              .started = time(NULL)};
        if (is_main)
                srv->main_run = num;
        if (timeout_ms > 0)
                r->timer = sentry_timer_arm(CLOCK_MONOTONIC, false, timeout_ms);
        int back[2] = {-1, -1};
        size_t n_back = 0;
        if (tty && direct) {
                back[0] = master;
                n_back = 1;
        } else if (tty) {
                /* the client reads the terminal's output from back[0] and
                 * writes its input into back[1] */
                r->streams = xcalloc(2, sizeof(struct stream));
                r->streams[0].run_end = r->streams[1].run_end = -1;
                r->streams[0].in = TAKE_FD(run_pipe[0][0]);
                r->streams[0].to = TAKE_FD(client_pipe[0][1]);
                r->streams[1].in = TAKE_FD(client_pipe[1][0]);
                r->streams[1].to = TAKE_FD(run_pipe[1][1]);
                back[0] = client_pipe[0][0];
                back[1] = client_pipe[1][1];
                n_back = 2;
        } else if (run_pipe[0][0] >= 0) {
                r->streams = xcalloc(2, sizeof(struct stream));
                for (int k = 0; k < 2; k++) {
                        /* the pipe's write end stays open here too until
                         * the run's status: its read end meets no hang-up
                         * when the run exits, only output, and the sentry
                         * wakes once at the end (for init's report), not
                         * also for the pipes */
                        r->streams[k].run_end = TAKE_FD(run_pipe[k][1]);
                        r->streams[k].in = TAKE_FD(run_pipe[k][0]);
                        r->streams[k].to = TAKE_FD(client_pipe[k][1]);
                        back[k] = client_pipe[k][0];
                }
                n_back = 2;
        }
        char id[16];
        snprintf(id, sizeof(id), "r%d", num);
        event_append(srv, "run_started", json_pack("{s:s, s:O, s:b}", "run", id, "argv", r->argv, "detached", detach));
        r->started_seq = srv->seq;
        if (!client_pipes)
                (void)control_send(conn, json_pack("{s:b, s:s}", "ok", 1, "run", id), n_back ? back : NULL, n_back);
        meta_write_soon(st);
        if (!detach)
                r->conn = fcntl(conn, F_DUPFD_CLOEXEC, 3);
}

/* The next run's group, made while nothing waits (once the sandbox is up,
 * and after each run's end), so that its mkdir (the group's control files
 * made, 35-50 µs here) is not on the next exec's path: cgroup_run_create
 * takes a group that exists. Empty until a run takes it; one no run took
 * goes with the sandbox's group at the end. */
void run_group_prepare(struct sandbox_state *st)
{
        struct serve *srv = st->serve;
        int fd = -1;
        if (srv->next_num > 0 && srv->next_num != srv->n_runs + 1) {
                close(srv->next_procs);
                srv->next_num = 0;
        }
        if (st->cg && !srv->terminate && srv->n_runs < MAX_RUNS && srv->next_num == 0 &&
            cgroup_run_create(st->cg, srv->n_runs + 1, &fd) == 0) {
                /* kept open for the run's exec: the group's cgroup.procs,
                 * opened by the sentry as cgroup_run_create always does */
                srv->next_num = srv->n_runs + 1;
                srv->next_procs = fd;
        }
}

void run_ended(struct sandbox_state *st, struct run_rec *r, int status)
{
        struct serve *srv = st->serve;
        if (!r->running)
                return;
        /* what the run wrote before it exited is in the pipe already: its
         * events come before the exit's */
        for (int i = 0; i < 64 && r->log_in >= 0; i++) {
                int avail = 0;
                if (ioctl(r->log_in, FIONREAD, &avail) < 0 || avail == 0)
                        break;
                run_drain_log(srv, r);
        }
        /* a terminal's input has nowhere to go any more */
        if (r->tty && r->streams && r->streams[1].in >= 0)
                stream_close(srv, r, 1);
        /* the output pipes end when the run's processes have closed them
         * (held open here until now: run_exec) */
        for (int k = 0; r->streams && k < 2; k++)
                if (r->streams[k].run_end >= 0)
                        close(TAKE_FD(r->streams[k].run_end));
        streams_flush(srv, r);
        /* a cancelled or timed-out run: anything of it that got into its
         * group after the kill (the kill and the run's first fork may
         * cross) ends now too, before its client hears of the end, and is
         * waited for (the run itself is gone, so nothing of it is frozen
         * mid-way: a short wait), so that the group can go at once */
        if (r->cgroup && (r->cancelled || r->timed_out))
                (void)cgroup_run_kill(st->cg, r->num, true);
        r->running = false;
        r->status = status;
        if (r->hold_wr >= 0)
                close(TAKE_FD(r->hold_wr));
        r->ended = time(NULL);
        if (r->timer >= 0) {
                close(r->timer);
                r->timer = -1;
        }
        json_t *j = meta_run_json(r);
        json_t *ev = json_pack("{s:O, s:O, s:O}", "run", json_object_get(j, "id"), "status",
                               json_object_get(j, "status"), "exitCode", json_object_get(j, "exitCode"));
        if (json_object_get(j, "signal"))
                json_object_set(ev, "signal", json_object_get(j, "signal"));
        event_append(srv, "run_exited", ev);
        if (r->conn >= 0) {
                (void)control_send(r->conn,
                                   json_pack("{s:i, s:O, s:b}", "status", status, "exitCode",
                                             json_object_get(j, "exitCode"), "timedOut", r->timed_out),
                                   NULL, 0);
                close(r->conn);
                r->conn = -1;
        }
        /* the client's ends of the output pipes the run closed (held for
         * this, run-output.c stream_held) */
        for (int k = 0; r->streams && k < 2; k++)
                if (r->streams[k].in < 0 && r->streams[k].off >= r->streams[k].len)
                        stream_close(srv, r, k);
        json_decref(j);
        /* the run's group goes once its client has the status, which does
         * not wait on it (the kill above is over by then) */
        if (r->cgroup) {
                /* empty unless the run left processes behind it (or
                 * killed ones are still on their way out): then it is
                 * tried again as later runs end, and goes with the
                 * sandbox's group at the latest */
                r->cgroup_left = cgroup_run_remove(st->cg, r->num) < 0;
                for (int i = 0; i < srv->n_runs; i++)
                        if (srv->runs[i].cgroup_left && !srv->runs[i].running && &srv->runs[i] != r)
                                srv->runs[i].cgroup_left = cgroup_run_remove(st->cg, srv->runs[i].num) < 0;
                run_group_prepare(st);
        }
        meta_write_soon(st);
        /* the container's process ended: so does the container (what it
         * left running goes with the sandbox), and the sentry's exit
         * status becomes this one */
        if (srv->oci && r->num == srv->main_run && !srv->main_ended) {
                srv->main_ended = true;
                srv->main_status = status;
                if (!srv->terminate) {
                        srv->terminate = true;
                        srv->end_reason = "exited";
                        srv->status = "stopped";
                        meta_write(st);
                        sandbox_kill_all(st);
                }
        }
}

/* The run a sandbox process belongs to: its thread group, then up its
 * parents (host /proc) until one is a run's first process (init reports
 * those pids in the sandbox's namespace). "" when none is. */
void run_of_pid(struct serve *srv, pid_t pid, char *buf, size_t size)
{
        buf[0] = '\0';
        bool tgid_done = false;
        for (int depth = 0; pid > 1 && depth < 64; depth++) {
                char path[64], line[256];
                snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
                _cleanup_fclose_ FILE *f = fopen(path, "re");
                if (!f)
                        return;
                pid_t ppid = 0, nspid = 0, tgid = 0;
                while (fgets(line, sizeof(line), f)) {
                        if (startswith(line, "PPid:"))
                                ppid = (pid_t)atoi(line + 5);
                        else if (startswith(line, "Tgid:"))
                                tgid = (pid_t)atoi(line + 5);
                        else if (startswith(line, "NSpid:")) {
                                const char *last = strrchr(line, '\t');
                                nspid = (pid_t)atoi(last ? last + 1 : line + 6);
                        }
                }
                if (!tgid_done && tgid > 0 && tgid != pid) {
                        tgid_done = true;
                        pid = tgid; /* a thread: its process decides */
                        continue;
                }
                tgid_done = true;
                for (int i = 0; i < srv->n_runs; i++)
                        if (srv->runs[i].pid > 0 && srv->runs[i].pid == nspid) {
                                snprintf(buf, size, "r%d", srv->runs[i].num);
                                return;
                        }
                pid = ppid;
        }
}

/* A message on a waiting exec client's connection: a signal to forward,
 * or the client gone (its run goes on: closing a client only stops it
 * waiting). */
void run_read_conn(struct sandbox_state *st, struct run_rec *r)
{
        json_t *req = NULL;
        int fds[1];
        int n = control_recv(r->conn, &req, fds, 0);
        if (n <= 0) {
                close(r->conn);
                r->conn = -1;
                return;
        }
        json_int_t sig = json_integer_value(json_object_get(req, "signal"));
        if (sig > 0 && sig < 65 && r->running)
                run_kill(st, r, (int)sig);
        /* the client's terminal changed size: the run's follows (the kernel
         * sends the run's foreground group SIGWINCH) */
        json_int_t rows = json_integer_value(json_object_get(req, "rows")),
                   cols = json_integer_value(json_object_get(req, "cols"));
        if (r->tty && r->streams && r->streams[0].in >= 0 && rows > 0 && rows < 65536 && cols > 0 && cols < 65536) {
                struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
                (void)ioctl(r->streams[0].in, TIOCSWINSZ, &ws);
        }
        json_decref(req);
}

/* One message from init, if there is one: true when one was read. */
bool run_read_init(struct sandbox_state *st)
{
        struct serve *srv = st->serve;
        struct msg m;
        if (st->sock < 0)
                return false;
        ssize_t n = recv(st->sock, &m, sizeof(m), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                close(st->sock);
                st->sock = -1;
                return false;
        }
        if (n != (ssize_t)sizeof(m))
                return false;
        struct run_rec *r = run_find(srv, (int)m.aux);
        if (!r)
                return true;
        if (m.type == MSG_RUN_PID)
                r->pid = m.value;
        else if (m.type == MSG_RUN_EXIT)
                run_ended(st, r, m.value);
        return true;
}
