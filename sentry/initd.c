/* init's side of a long-lived sandbox: after set-up it waits on the channel
 * to the sentry for runs to start (MSG_EXEC), forks each one with the stdin,
 * stdout and stderr the sentry passed (already checked there), reaps
 * everything, and reports each run's exit. The sentry itself never forks
 * once the sandbox is up: a run is always a child of this init, inside the
 * sandbox's namespaces, cgroup, view and seccomp filter. */
#include "config.h"

#include <ctype.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common/fdpass.h"
#include "sentry/sentry-internal.h"

#define MAX_INIT_RUNS 256

struct init_run {
        int32_t run;
        pid_t pid;
        bool pid1; /* pid 1 of the container's pid namespace */
};

static struct init_run runs[MAX_INIT_RUNS];

/* Test hook, read by the sentry before init is cloned (init's copy of the
 * environment is scrubbed): CORDON_TEST_STALL=run-fork holds each forked run
 * before it takes back the default signal actions, where a signal used to
 * be lost (oci.sh cli_kill_created). It only delays. */
static bool stall_run_fork;

void init_read_test_hooks(void)
{
        const char *s = getenv("CORDON_TEST_STALL");
        stall_run_fork = s && streq(s, "run-fork");
}

void init_default_signals(void)
{
        sigset_t none;
        sigemptyset(&none);
        for (int s = 1; s < NSIG; s++)
                signal(s, SIG_DFL);
        sigprocmask(SIG_SETMASK, &none, NULL);
}

static void on_sigchld(int sig)
{
        (void)sig;
}

/* A held container process that is pid 1 of its namespace: the kernel
 * drops a signal whose action is the default for pid 1 (only SIGKILL and
 * SIGSTOP from outside are forced), yet a kill before `start` must end it
 * (containerd relies on that). Until its exec (which takes the handlers
 * back to the defaults) a caught signal ends it as the signal would. */
static void held_pid1_signal(int sig)
{
        _exit(128 + sig);
}

static void report(int sock, uint32_t type, int32_t value, int64_t run)
{
        /* send(), not sendmsg(): sendto without an address runs natively
         * under the filter, so no trapped call is needed to report */
        struct msg m = {.type = type, .value = value, .aux = run};
        (void)send(sock, &m, sizeof(m), MSG_NOSIGNAL);
}

/* The run's report socket (EXEC_REPORT: OCI create and exec, sentry/oci/
 * create.c oci_await_setup), in the run's own fork: -1 once written, or when there is
 * none. */
static int report_fd = -1;

/* What the run's set-up says to its creator: "" (all set), or why it
 * cannot run, NUL-terminated, once. The creating client (sentry/oci/
 * create.c) fails `create` with it, as runc's create fails when its init
 * cannot get the process ready. */
static void report_setup(const char *why)
{
        if (report_fd < 0)
                return;
        /* send(), as report() does; no SIGPIPE when the client is gone */
        (void)send(report_fd, why, strlen(why) + 1, MSG_NOSIGNAL);
        close(report_fd);
        report_fd = -1;
}

/* A set-up failure: to the creating client where there is one (which
 * says it, as runc's create does: nothing of it goes to the container's
 * own output), else on the run's stderr as "cordon: ...". */
_printf_(2, 3) _noreturn_ static void setup_fail(int status, const char *fmt, ...)
{
        char why[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        if (report_fd >= 0)
                report_setup(why);
        else
                dprintf(STDERR_FILENO, "cordon: %s\n", why);
        _exit(status);
}

/* errno as Go words it (runc's messages): strerror's, lower-case first */
static const char *go_strerror(int err, char buf[128])
{
        snprintf(buf, 128, "%s", strerror(err));
        buf[0] = (char)tolower((unsigned char)buf[0]);
        return buf;
}

/* Whether path is a file the run may execute: 0, or the errno. Not a
 * directory, and execute permission for the run's ids (access(2), whose
 * real ids are the run's own by now; it also says EACCES on a noexec
 * mount). */
static int executable(const char *path)
{
        struct stat st;
        if (stat(path, &st) < 0)
                return errno;
        if (S_ISDIR(st.st_mode))
                return EACCES;
        return access(path, X_OK) < 0 ? errno : 0;
}

/* Errors that say the file is not there or cannot be run; any other (a
 * lookup the sandbox's filter or sentry could not serve) decides nothing */
static bool lookup_says(int err)
{
        return err == ENOENT || err == ENOTDIR || err == EACCES || err == ELOOP || err == ENAMETOOLONG;
}

/* The OCI create's look for the command, as runc's (Go's exec.LookPath
 * before its init waits for `start`) and crun's: a name with a '/' taken
 * as it is (relative to the cwd), another searched in the PATH of the
 * run's own environment (glibc's default when it has none: what
 * execvpe(3) will search). Run as the run's user, in its cwd, inside the
 * container's view, so it sees what the exec will. Advisory: it only gives
 * a missing or non-executable command runc's error at create; the real
 * execve still decides (a file changed after the look meets it there). A
 * look the sandbox cannot answer leaves the decision to execve too.
 * false: why says runc's message. */
static bool command_found(const char *name, char *const envp[], char *why, size_t size)
{
        char buf[128];
        if (strchr(name, '/')) {
                struct stat st;
                if (stat(name, &st) < 0) {
                        if (!lookup_says(errno))
                                return true;
                        snprintf(why, size, "exec: \"%s\": stat %s: %s", name, name, go_strerror(errno, buf));
                        return false;
                }
                int err = executable(name);
                if (err && lookup_says(err)) {
                        snprintf(why, size, "exec: \"%s\": %s", name, go_strerror(err, buf));
                        return false;
                }
                return true;
        }
        const char *path = "/bin:/usr/bin";
        for (char *const *e = envp; *e; e++)
                if (startswith(*e, "PATH="))
                        path = *e + 5;
        bool undecided = false;
        for (const char *dir = path;; dir++) {
                const char *end = strchrnul(dir, ':');
                char full[PATH_MAX];
                int n = end == dir ? snprintf(full, sizeof(full), "%s", name) /* "": the cwd */
                                   : snprintf(full, sizeof(full), "%.*s/%s", (int)(end - dir), dir, name);
                if (n > 0 && (size_t)n < sizeof(full)) {
                        int err = executable(full);
                        if (err == 0)
                                return true;
                        undecided = undecided || !lookup_says(err);
                }
                dir = end;
                if (!*dir)
                        break;
        }
        if (undecided)
                return true;
        snprintf(why, size, "exec: \"%s\": executable file not found in $PATH", name);
        return false;
}

/* OCI exec's capability sets (EXEC_CAPS), as runc applies a process's:
 * before the identity, the bounding and ambient sets lowered to the ones
 * asked for (init's are the container's; the front refused anything
 * beyond them, and the kernel would too: a bounding capability needs
 * CAP_SETPCAP to drop, an ambient one cannot be raised past init's locked
 * securebit) and the permitted set kept across a switch of uid; after it,
 * the effective, permitted and inheritable sets, which can only narrow
 * what init holds. held: init is the namespace's root with the bounding
 * set (oci_sandbox.runs_switch): the permitted set is always kept across
 * the switch, and the run raises its ambient set and locks it itself. A
 * failure ends the run (setup_fail). */
static void exec_caps_before(const struct exec_msg *e, bool held)
{
        for (int cap = 0; cap <= 63; cap++) {
                uint64_t bit = UINT64_C(1) << cap;
                int in = prctl(PR_CAPBSET_READ, cap, 0, 0, 0);
                if (in < 0)
                        break; /* past the kernel's last capability */
                if (in == 1 && !(e->caps[0] & bit) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
                        setup_fail(EXIT_SANDBOX,
                                   "process.capabilities.bounding: cannot drop capability %d: %s (the "
                                   "container's process does not hold CAP_SETPCAP)",
                                   cap, strerror(errno));
                if (!(e->caps[4] & bit))
                        (void)prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_LOWER, cap, 0, 0);
        }
        /* the permitted set kept across setresuid away from root (not
         * possible, and not needed, where init's securebits lock it off:
         * a container with no capabilities, whose runs ask for none) */
        if ((e->flags & EXEC_USER) && (e->caps[2] || held) && prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
                setup_fail(EXIT_SANDBOX, "process.capabilities: keep them across the switch of user: %s",
                           strerror(errno));
}

static void exec_caps_after(const struct exec_msg *e, bool held)
{
        int r;
        if (held) {
                /* what init held, kept across the switch, effective for
                 * the steps below (the inheritable set, the ambient raise,
                 * the lock, which needs CAP_SETPCAP) */
                struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
                struct __user_cap_data_struct d[2] = {{0}};
                if (syscall(SYS_capget, &h, d) < 0)
                        setup_fail(EXIT_SANDBOX, "process.capabilities: capget: %s", strerror(errno));
                uint64_t now = d[0].permitted | ((uint64_t)d[1].permitted << 32);
                if ((r = capset_sets(now, now, e->caps[3])) < 0)
                        setup_fail(EXIT_SANDBOX, "process.capabilities.inheritable: %s", strerror(-r));
                /* an ambient capability the inheritable set lacks is left
                 * out, as init leaves it (oci_drop_privileges) */
                for (int cap = 0; cap <= 63; cap++)
                        if ((e->caps[4] & e->caps[3] & now & (UINT64_C(1) << cap)) &&
                            prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0)
                                setup_fail(EXIT_SANDBOX, "process.capabilities.ambient: capability %d: %s", cap,
                                           strerror(errno));
                if (prctl(PR_SET_SECUREBITS, SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED, 0, 0,
                          0) < 0)
                        setup_fail(EXIT_SANDBOX, "lock the ambient set: %s", strerror(errno));
        }
        r = capset_sets(e->caps[1] & e->caps[2], e->caps[2], e->caps[3]);
        if (r < 0)
                setup_fail(EXIT_SANDBOX,
                           "process.capabilities: %s (a set holds a capability the container's process does not)",
                           strerror(-r));
        (void)prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
}

/* A run's argv and envp, pointing into e->strings (after the cwd): two
 * arrays from one allocation, argv first; NULL when out of memory. */
static char **run_vectors(const struct exec_msg *e)
{
        char **v = calloc((size_t)e->argc + 1 + e->envc + 1, sizeof(char *));
        if (!v)
                return NULL;
        const char *p = e->strings + strlen(e->strings) + 1;
        for (uint32_t i = 0; i < e->argc; i++, p += strlen(p) + 1)
                v[i] = (char *)p;
        for (uint32_t i = 0; i < e->envc; i++, p += strlen(p) + 1)
                v[e->argc + 1 + i] = (char *)p;
        return v;
}

/* vecs: the run's vectors (run_vectors) made by init before a shared-memory
 * fork (run_shares_vm), which this side must not allocate; NULL in a fork
 * of its own, which makes them. */
_noreturn_ static void exec_run(const struct exec_msg *e, const int fds[EXEC_MAX_FDS], const struct oci_sandbox *oci,
                                char **vecs)
{
        /* first of all, into the run's own group (cgroup_run_create): from
         * here on everything this run forks is found there by cancel and
         * --timeout, whatever session it makes. A run that cannot be put
         * there does not run (the fd is the sentry's, opened with its
         * rights; this process itself has none on the cgroupfs). */
        bool hold = e->flags & EXEC_HOLD;
        /* stdio, then the hold pipe (OCI create) and the report socket
         * (OCI create and exec) */
        size_t at_report = hold ? 4 : 3;
        size_t first_kept = at_report + ((e->flags & EXEC_REPORT) ? 1 : 0);
        if (e->flags & EXEC_REPORT)
                report_fd = fds[at_report];
        if (e->flags & EXEC_CGROUP) {
                /* the last fd: after those and the preserved fds */
                size_t cg = first_kept + e->n_preserve;
                if (cg >= EXEC_MAX_FDS || fds[cg] < 0 || write(fds[cg], "0", 1) != 1) {
                        int err = cg >= EXEC_MAX_FDS || fds[cg] < 0 ? EBADF : errno;
                        if (fds[2] >= 0)
                                dprintf(fds[2], "cordon: cannot move the run into its control group: %s\n",
                                        strerror(err));
                        report_setup("cannot move the container's process into its control group");
                        _exit(EXIT_SANDBOX);
                }
                close(fds[cg]);
        }
        /* init forked us with every signal blocked: one sent meanwhile (OCI
         * kill right after create) stays pending instead of meeting init's
         * SIG_IGN, and acts here once the defaults are back */
        if (stall_run_fork)
                (void)usleep(300 * 1000);
        if ((e->flags & EXEC_HOLD) && getpid() == 1) {
                /* the handlers in place before the mask is lifted: one
                 * pending meets them, not the default pid 1 ignores */
                for (int s = 1; s < NSIG; s++)
                        signal(s, SIG_DFL);
                struct sigaction sa = {.sa_handler = held_pid1_signal};
                sigemptyset(&sa.sa_mask);
                for (int s = 1; s < NSIG; s++)
                        if (s != SIGKILL && s != SIGSTOP && s != SIGCHLD && s != SIGCONT && s != SIGURG &&
                            s != SIGWINCH)
                                (void)sigaction(s, &sa, NULL);
                sigset_t none;
                sigemptyset(&none);
                sigprocmask(SIG_SETMASK, &none, NULL);
        } else
                init_default_signals();
        /* its own session and process group: a signal or a timeout for the
         * run reaches all of it, and nothing else */
        setsid();
        /* init's 0-2 are closed, so the received fds may sit there: move
         * them above first, then into place (dup2 clears close-on-exec):
         * stdio to 0-2, preserved fds (OCI --preserve-fds) to 3, 4, ... */
        size_t n = first_kept + e->n_preserve;
        if (n > EXEC_MAX_FDS)
                _exit(EXIT_SANDBOX);
        /* above every place they go (0 to 2 + n_preserve) */
        int high[EXEC_MAX_FDS], base = n > 64 ? (int)n : 64;
        for (size_t i = 0; i < n; i++)
                if ((high[i] = fds[i] >= 0 ? fcntl(fds[i], F_DUPFD_CLOEXEC, base) : -1) < 0 && fds[i] >= 0)
                        _exit(EXIT_SANDBOX);
        /* the report pipe's number may be one stdio takes next */
        if (report_fd >= 0)
                report_fd = high[at_report];
        for (int i = 0; i < 3; i++)
                if (high[i] >= 0 && dup2(high[i], i) < 0)
                        _exit(EXIT_SANDBOX);
        for (size_t i = 0; i < e->n_preserve; i++)
                if (high[first_kept + i] < 0 || dup2(high[first_kept + i], 3 + (int)i) < 0)
                        _exit(EXIT_SANDBOX);
        if ((e->flags & EXEC_TTY) && ioctl(STDIN_FILENO, TIOCSCTTY, 0) < 0)
                setup_fail(EXIT_SANDBOX, "cannot take the terminal as the controlling one: %s", strerror(errno));

        const char *cwd = e->strings;
        bool shared_vm = vecs != NULL;
        if (!vecs && !(vecs = run_vectors(e)))
                _exit(EXIT_SANDBOX);
        char **argv = vecs, **envp = vecs + e->argc + 1;
        /* exec --user: the run's own identity, taken with init's
         * CAP_SETUID/CAP_SETGID (a container whose identity lacks them
         * cannot: said, as runc would fail); leaving root drops every
         * capability, as the kernel does */
        /* a container whose init stays root (runs_switch): every run
         * takes an identity and sets before its exec, or it would run with
         * init's. The OCI front names them; a run that names none (`cordon
         * sandbox exec`, the API's exec into the container's sandbox) gets
         * the container's process's own user, groups and sets, what it got
         * from init before init stayed root. */
        bool held = oci && oci->runs_switch;
        static struct exec_msg own; /* this fork's only run */
        if (held && (e->flags & (EXEC_USER | EXEC_CAPS)) != (EXEC_USER | EXEC_CAPS)) {
                own = *e;
                if (!(own.flags & EXEC_USER)) {
                        own.uid = oci->uid;
                        own.gid = oci->gid;
                        if (!(own.flags & EXEC_GROUPS)) {
                                own.n_groups =
                                        (uint32_t)(oci->n_groups < EXEC_MAX_GROUPS ? oci->n_groups : EXEC_MAX_GROUPS);
                                for (uint32_t i = 0; i < own.n_groups; i++)
                                        own.groups[i] = oci->groups[i];
                                own.flags |= EXEC_GROUPS;
                        }
                        own.flags |= EXEC_USER;
                }
                if (!(own.flags & EXEC_CAPS)) {
                        const uint64_t c[5] = {oci->cap_bounding, oci->cap_effective, oci->cap_permitted,
                                               oci->cap_inheritable, oci->cap_ambient};
                        memcpy(own.caps, c, sizeof(c));
                        own.flags |= EXEC_CAPS;
                }
                e = &own;
        }
        if (e->flags & EXEC_CAPS)
                exec_caps_before(e, held);
        if (e->flags & EXEC_GROUPS) {
                gid_t groups[EXEC_MAX_GROUPS];
                for (uint32_t i = 0; i < e->n_groups; i++)
                        groups[i] = e->groups[i];
                if (setgroups(e->n_groups, groups) < 0)
                        setup_fail(EXIT_SANDBOX,
                                   "process.user.additionalGids: %s (the container's process does not hold "
                                   "CAP_SETGID)",
                                   strerror(errno));
        }
        if (e->flags & EXEC_USER) {
                if ((!(e->flags & EXEC_GROUPS) && setgroups(0, NULL) < 0 && errno != EPERM) ||
                    setresgid(e->gid, e->gid, e->gid) < 0 || setresuid(e->uid, e->uid, e->uid) < 0)
                        setup_fail(EXIT_SANDBOX,
                                   "cannot run as %u:%u: %s (the container's process.user does not hold "
                                   "CAP_SETUID and CAP_SETGID)",
                                   e->uid, e->gid, strerror(errno));
        }
        if (e->flags & EXEC_CAPS)
                exec_caps_after(e, held);
        if (chdir(cwd) < 0)
                setup_fail(EXIT_SANDBOX, "cannot change to %s in the sandbox: %s", cwd, strerror(errno));
        /* OCI create and exec: a command that is not there or cannot be
         * run fails the create or the exec, as runc's and crun's (the exit
         * statuses are what a failed execvpe gives below) */
        if (report_fd >= 0) {
                /* after the create's prestart and createRuntime hooks,
                 * which may put the command in place (EOF: the client is
                 * gone, and nothing waits for the word) */
                char why[1024], look;
                ssize_t k;
                do
                        k = read(report_fd, &look, 1);
                while (k < 0 && errno == EINTR);
                if (k == 1 && !command_found(argv[0], envp, why, sizeof(why)))
                        setup_fail(strstr(why, "permission denied") ? EXIT_CANNOT_EXEC : EXIT_NOT_FOUND, "%s", why);
                report_setup("");
        }
        /* OCI create: everything is in place; `start` releases the exec (a
         * signal before it ends the process, as containerd expects of kill
         * on a created container). EOF: the sentry gave up on us. */
        if (hold) {
                char go;
                ssize_t r;
                do
                        r = read(high[3], &go, 1);
                while (r < 0 && errno == EINTR);
                if (r != 1)
                        _exit(EXIT_SANDBOX);
        }
        /* As exec_command does for `cordon run` (see there): this fork of
         * init inherited its non-dumpable mm, which belongs to the host's
         * user namespace, and an unprivileged sentry could not read the
         * execve it must check. Dumpable until the exec replaces the image.
         * Unlike there, other processes of the sandbox may exist; what they
         * could read meanwhile is init's memory, whose host command line and
         * environment init scrubbed at start (scrub_host_memory), and they
         * can neither ptrace (refused by the filter) nor see more through
         * /proc/PID/mem than the sandbox's own policy and plan. */
        if (!shared_vm)
                (void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
        /* The container's own seccomp profile, in addition to cordon's
         * filter (already installed in init, so it cannot be lifted): the
         * kernel runs both and the stricter action wins (an ERRNO of the
         * profile beats cordon's USER_NOTIF). A profile asking for its own
         * listener was refused when it was compiled. */
        if (oci && oci->seccomp.len > 0 &&
            syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, oci->seccomp_flags, &oci->seccomp) < 0) {
                dprintf(STDERR_FILENO, "cordon: cannot install linux.seccomp: %s\n", strerror(errno));
                _exit(EXIT_SANDBOX);
        }
        execvpe(argv[0], argv, envp);
        int err = errno;
        dprintf(STDERR_FILENO, "cordon: %s: %s\n", argv[0], strerror(err));
        _exit(err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
}

/* Whether a run may be started by a child that shares init's memory until
 * its exec (run_vfork) instead of a copy of it: where the sentry says so
 * (sandbox/runs.c run_may_share_vm), and never for OCI's runs (held ones
 * wait for `start` before their exec; the container's identity is copied
 * into a static) nor under the run-fork stall (which would hold init). */
static bool run_shares_vm(const struct exec_msg *e, const struct oci_sandbox *oci)
{
        return !oci && (e->flags & EXEC_SHARED_VM) && !(e->flags & (EXEC_HOLD | EXEC_REPORT)) && !stall_run_fork;
}

/* The run's process, started as vfork(2) starts one: sharing init's memory,
 * init suspended until the exec (or the exit of a run that cannot start),
 * no copy of init's page tables. The child writes nothing of init's but its
 * own stack (the vectors were made beforehand, report_fd and setup_fail's
 * report are OCI's) and stays non-dumpable as init is (exec_run). A process
 * of the sandbox that stops it before its exec holds init until it goes on
 * or is killed: it can delay only its own sandbox's runs. */
static pid_t run_vfork(int sock, const struct exec_msg *e, const int fds[EXEC_MAX_FDS], char **vecs)
{
        pid_t pid = vfork();
        if (pid == 0) {
                close(sock); /* the child's own fd table: init's stays open */
                exec_run(e, fds, NULL, vecs);
        }
        return pid;
}

/* The strings must be exactly argc + envc + 1 NUL-terminated entries. */
static bool exec_msg_valid(const struct exec_msg *e, size_t n)
{
        if (n < offsetof(struct exec_msg, strings) || e->len > EXEC_MAX_STRINGS ||
            n != offsetof(struct exec_msg, strings) + e->len || e->argc == 0 || e->argc > 4096 || e->envc > 4096 ||
            e->n_preserve > EXEC_MAX_FDS - 5 || e->n_groups > EXEC_MAX_GROUPS)
                return false;
        uint32_t want = 1 + e->argc + e->envc, seen = 0;
        for (uint32_t i = 0; i < e->len; i++)
                if (e->strings[i] == '\0')
                        seen++;
        return seen == want && e->len > 0 && e->strings[e->len - 1] == '\0';
}

static void reap(int sock)
{
        int status;
        pid_t p;
        while ((p = waitpid(-1, &status, WNOHANG)) > 0)
                for (size_t i = 0; i < MAX_INIT_RUNS; i++)
                        if (runs[i].pid == p) {
                                report(sock, MSG_RUN_EXIT, status, runs[i].run);
                                runs[i].pid = 0;
                                break;
                        }
}

/* The proc helper: forked while init still holds its capabilities, before
 * init unshares the container's pid namespace (so it is not that
 * namespace's pid 1) and before Landlock and the filter. It runs nothing
 * but this: once init has forked the container's process (the namespace's
 * pid 1, whose existence the kernel wants before a procfs can show it), it
 * replaces the view's /proc with one of that namespace, puts the config's
 * mounts in its order after it (fs_view_order) and exits. Nothing
 * of the container's has run by then (its process waits for its run). */
pid_t init_proc_helper_fork(const struct oci_sandbox *oci, int ret_go[2])
{
        int go[2], done[2];
        if (pipe2(go, O_CLOEXEC) < 0)
                return negative_errno();
        if (pipe2(done, O_CLOEXEC) < 0) {
                int r = negative_errno();
                close(go[0]);
                close(go[1]);
                return r;
        }
        pid_t pid = fork();
        if (pid < 0) {
                int r = negative_errno();
                close(go[0]);
                close(go[1]);
                close(done[0]);
                close(done[1]);
                return r;
        }
        if (pid == 0) {
                int keep[] = {go[0], done[1]};
                if (close_all_but(keep, ELEMENTSOF(keep)) < 0)
                        _exit(EXIT_SANDBOX);
                (void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
                char c, err[1024] = "";
                if (read(go[0], &c, 1) != 1)
                        _exit(EXIT_SANDBOX);
                /* init is pid 1 of the /proc the view has now */
                int ns = open("/proc/1/ns/pid_for_children", O_RDONLY | O_CLOEXEC);
                int r = ns < 0 ? negative_errno() : fs_view_proc_renew(ns, err);
                if (ns < 0)
                        snprintf(err, sizeof(err), "open the container's pid namespace: %s", strerror(-r));
                /* then the config's mounts in its order, after that /proc */
                if (r >= 0)
                        r = fs_view_order(oci->order, oci->n_order, oci->rootfs_propagation, err);
                if (r >= 0)
                        err[0] = '\0';
                if (write_all(done[1], err, strlen(err) + 1) < 0)
                        _exit(EXIT_SANDBOX);
                _exit(r < 0 ? EXIT_SANDBOX : 0);
        }
        close(go[0]);
        close(done[1]);
        ret_go[0] = done[0];
        ret_go[1] = go[1];
        return pid;
}

/* The container's process, pid 1 of the namespace init unshared: forked
 * with init's filter, Landlock domain, credentials and working directory,
 * sharing init's file table (CLONE_FILES) so that the fds of its run, which
 * come to init later, are its own too without passing them (a sendmsg would
 * be trapped). It waits for its run's message on a pipe, takes its own copy
 * of the table, says so, and runs it as init's fork of a run would. */
pid_t init_pid1_fork(int sock, const struct oci_sandbox *oci, struct init_pid1 *ret)
{
        int msg[2], ack[2];
        if (pipe2(msg, O_CLOEXEC) < 0)
                return negative_errno();
        if (pipe2(ack, O_CLOEXEC) < 0) {
                int r = negative_errno();
                close(msg[0]);
                close(msg[1]);
                return r;
        }
        /* every signal blocked across the clone, as for a run's fork */
        sigset_t all, before;
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, &before);
        pid_t pid = (pid_t)syscall(SYS_clone, CLONE_FILES | SIGCHLD, NULL, NULL, NULL, NULL);
        if (pid == 0) {
                static struct exec_msg e;
                int fds[EXEC_MAX_FDS];
                size_t n;
                if (read_full(msg[0], &n, sizeof(n)) != (ssize_t)sizeof(n) || n > sizeof(e) ||
                    read_full(msg[0], fds, sizeof(fds)) != (ssize_t)sizeof(fds) ||
                    read_full(msg[0], &e, n) != (ssize_t)n)
                        _exit(EXIT_SANDBOX);
                if (unshare(CLONE_FILES) < 0)
                        _exit(EXIT_SANDBOX);
                if (write(ack[1], "k", 1) != 1)
                        _exit(EXIT_SANDBOX);
                close(msg[0]);
                close(ack[1]);
                close(sock);
                exec_run(&e, fds, oci, NULL);
        }
        int r = pid < 0 ? negative_errno() : 0;
        sigprocmask(SIG_SETMASK, &before, NULL);
        if (r < 0) {
                close(msg[0]);
                close(ack[1]);
                close(msg[1]);
                close(ack[0]);
                return r;
        }
        /* its ends stay open until it has its own table: closed here now,
         * they would be closed for it too */
        *ret = (struct init_pid1){.pid = pid, .msg = msg[1], .ack = ack[0], .its_msg = msg[0], .its_ack = ack[1]};
        return pid;
}

/* Hands the container's first run to its waiting pid 1: 0, or -errno. */
static int hand_to_pid1(const struct init_pid1 *p, const struct exec_msg *e, size_t n, const int fds[EXEC_MAX_FDS])
{
        int r = write_all(p->msg, &n, sizeof(n));
        if (r >= 0)
                r = write_all(p->msg, fds, sizeof(int) * EXEC_MAX_FDS);
        if (r >= 0)
                r = write_all(p->msg, e, n);
        char c;
        if (r >= 0 && read_full(p->ack, &c, 1) != 1)
                r = -EIO;
        /* it has its own table now (or is gone) */
        close(p->its_msg);
        close(p->its_ack);
        close(p->msg);
        close(p->ack);
        return r;
}

_noreturn_ void init_serve_runs(int sock, const struct oci_sandbox *oci, const struct init_pid1 *pid1)
{
        /* init's own stdio was the sentry's at the clone (the creating
         * client's /dev/null and error file): none of it stays in the
         * sandbox. Closed, not replaced: init makes no trapped call (an open)
         * once it is not dumpable, which an unprivileged sentry could not
         * serve. */
        for (int fd = 0; fd <= 2; fd++)
                close(fd);

        /* signals that would end init end the sandbox; a run's are its own */
        for (int s = 1; s < NSIG; s++)
                if (s != SIGCHLD && s != SIGKILL && s != SIGSTOP && s != SIGSEGV && s != SIGBUS && s != SIGILL &&
                    s != SIGFPE && s != SIGABRT && s != SIGTRAP && s != SIGSYS)
                        signal(s, SIG_IGN);
        struct sigaction sa = {.sa_handler = on_sigchld, .sa_flags = SA_NOCLDSTOP};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGCHLD, &sa, NULL);
        sigset_t block, wait_mask;
        sigemptyset(&block);
        sigaddset(&block, SIGCHLD);
        sigprocmask(SIG_BLOCK, &block, &wait_mask);
        sigdelset(&wait_mask, SIGCHLD);

        static struct exec_msg e;
        bool forked_any = false;
        for (;;) {
                reap(sock);
                struct pollfd p = {sock, POLLIN, 0};
                int r = ppoll(&p, 1, NULL, &wait_mask);
                if (r < 0) {
                        if (errno == EINTR)
                                continue;
                        _exit(EXIT_SANDBOX);
                }
                if (!(p.revents & (POLLIN | POLLHUP | POLLERR)))
                        continue;
                int fds[EXEC_MAX_FDS];
                ssize_t n = recv_fds(sock, &e, sizeof(e), fds, EXEC_MAX_FDS);
                if (n <= 0)
                        _exit(0); /* the sentry is gone: so is the sandbox */
                if ((size_t)n >= sizeof(struct msg) && e.type == MSG_KILL) {
                        const struct msg *m = (const struct msg *)&e;
                        /* run -1: every process of the sandbox but init
                         * (OCI kill --all) */
                        bool all = m->aux == -1;
                        /* In a pod's shared pid namespace kill(-1) would
                         * reach the other containers' processes and the
                         * pod's infra process too (the same host ids):
                         * there, every run's process group instead (what
                         * left its group is killed by the sentry through
                         * the control group when the container ends). */
                        if (all && !(oci && oci->join[OCI_JOIN_PID].path))
                                (void)kill(-1, m->value);
                        for (size_t i = 0; i < MAX_INIT_RUNS; i++)
                                if (runs[i].pid > 0 && (runs[i].run == m->aux || all)) {
                                        /* pid 1 of the container's namespace:
                                         * to it alone, as runc's kill (its
                                         * group is the image's business) */
                                        if (!runs[i].pid1)
                                                kill(-runs[i].pid, m->value);
                                        kill(runs[i].pid, m->value);
                                }
                } else if (e.type == MSG_EXEC && exec_msg_valid(&e, (size_t)n)) {
                        size_t slot = MAX_INIT_RUNS;
                        for (size_t i = 0; i < MAX_INIT_RUNS && slot == MAX_INIT_RUNS; i++)
                                if (runs[i].pid == 0)
                                        slot = i;
                        /* every signal blocked across the fork: the run
                         * inherits init's SIG_IGN, and an ignored signal
                         * that is not blocked is dropped when sent */
                        sigset_t all, before;
                        sigfillset(&all);
                        sigprocmask(SIG_SETMASK, &all, &before);
                        pid_t pid;
                        char **vecs = NULL;
                        if (pid1 && !forked_any)
                                /* the container's process: waiting as the
                                 * namespace's pid 1 since the set-up */
                                pid = hand_to_pid1(pid1, &e, (size_t)n, fds) < 0 ? -1 : pid1->pid;
                        else if (slot < MAX_INIT_RUNS && run_shares_vm(&e, oci) && (vecs = run_vectors(&e)))
                                pid = run_vfork(sock, &e, fds, vecs);
                        else
                                pid = slot < MAX_INIT_RUNS ? fork() : -1;
                        if (pid == 0) {
                                close(sock);
                                exec_run(&e, fds, oci, NULL);
                        }
                        free(vecs);
                        sigprocmask(SIG_SETMASK, &before, NULL);
                        if (pid < 0)
                                report(sock, MSG_RUN_EXIT, EXIT_SANDBOX << 8, e.run);
                        else {
                                /* the first run init forks after its
                                 * unshare is the namespace's pid 1 */
                                runs[slot] = (struct init_run){e.run, pid, pid1 && !forked_any};
                                forked_any = true;
                                report(sock, MSG_RUN_PID, pid, e.run);
                        }
                }
                for (int i = 0; i < EXEC_MAX_FDS; i++)
                        if (fds[i] >= 0)
                                close(fds[i]);
        }
}
