/* sentry/ private: what run.c, plan.c and supervise.c share. */
#pragma once

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <termios.h>

#include "fs/fs.h"
#include "net/net.h"
#include "notify/notify.h"
#include "sentry/cgroup/cgroup.h"
#include "sentry/policy/limits.h"
#include "sentry/sentry.h"

/* The engine's handler contexts: which userdata a table row's handler gets. */
enum { CTX_FS = 0, CTX_NET = 1 };

/* The set-up channel between the sentry and the sandbox's init. */
enum msg_type {
        MSG_GO = 1,
        MSG_ERROR,
        /* init → sentry after MSG_GO: its user, net, ipc and uts namespaces;
         * MSG_FDS once the view is built: its root, the writable layer and
         * the terminal's master side (when there is one) */
        MSG_NS,
        MSG_FDS,
        MSG_READY,
        MSG_START,
        MSG_STATUS,
        /* init → sentry between MSG_FDS and MSG_READY: value is the Landlock
         * ABI in force (0: none), text why not */
        MSG_LANDLOCK,
        /* after MSG_START, to an init that serves runs (`cordon sandbox`):
         * MSG_EXEC (sentry → init, struct exec_msg with the run's stdin,
         * stdout and stderr attached), MSG_KILL (value: signal, aux: run);
         * init answers MSG_RUN_PID (value: pid, aux: run) and later
         * MSG_RUN_EXIT (value: wait status, aux: run) */
        MSG_EXEC,
        MSG_KILL,
        MSG_RUN_PID,
        MSG_RUN_EXIT,
};

struct msg {
        uint32_t type;
        int32_t value;
        int64_t aux; /* MSG_STATUS: tasks the sandbox started (its pid namespace's last pid) */
        char text[1024];
};

/* Everything the child needs, computed before the clone so that a bad
 * request fails before any namespace exists. */
struct sandbox_plan {
        char **argv;
        char **envp;
        char *cwd;
        struct fs_view_spec view;
        struct fs_bind *binds;
        int *bind_fds; /* OCI: the binds' sources opened by the sentry (view.bind_fds), else NULL */
        size_t n_bind_fds;
        struct fs_rule *rules;
        struct sock_fprog filter;
        /* the syscall table rows in force for this run (see SC_F_PATH_POLICY) */
        struct syscall_entry *table;
        size_t n_table;
        bool trap_paths;  /* --trap-all or a hidden rule: every path call is emulated */
        bool trap_writes; /* a write "ask" rule: every path call that changes the file system is emulated */
        bool use_tty;
        int64_t max_open_files;        /* RLIMIT_NOFILE for the command; -1: inherited */
        unsigned debug_disable;        /* DEBUG_OFF_* (tests only; see sentry.h) */
        bool serve_runs;               /* no command: init waits for MSG_EXEC (sentry/initd.c) */
        const struct oci_sandbox *oci; /* `cordon oci`: applied by init (sentry/oci-sandbox.h), or NULL */
};

/* Prints why it fails. PLAN_POLICY_ERROR: what the policy asks for cannot be
 * run as written (a template that is missing or fails its digest): cordon
 * exits 2, as for a bad policy. Other -errno: the sandbox cannot be set up. */
#define PLAN_POLICY_ERROR (-EBADMSG)
int sandbox_plan_build(const struct run_options *o, struct sandbox_plan *ret);
void sandbox_plan_done(struct sandbox_plan *p);

struct sandbox_state {
        struct sandbox_plan *plan;
        const struct policy *policy;
        int sock;
        int pidfd;
        pid_t init_pid;
        sigset_t sigmask;
        uid_t uid;
        gid_t gid;
        bool verbose;
        bool privileged;
        struct fs_context fsctx;
        struct notify_engine *engine;
        struct net_gate *gate;
        int audit_fd;               /* --audit FILE, or -1 */
        bool allow_unverified_exec; /* --allow-unverified-exec: run on without the exec tracer */
        pid_t exec_tracer;          /* 0: none */

        int pty_master;
        bool tty_raw;
        struct termios saved_termios;

        const char *id;
        struct cgroup *cg; /* NULL: none (no limits asked, none available) */
        struct run_limits limits;
        struct timespec started;
        const char *exit_reason; /* exited, signaled, oom, timeout, expired, sentry-error */
        int cmd_status;          /* the command's wait status, when have_status */
        bool have_status;
        bool wound_down;        /* run_wind_down done */
        int state_lock;         /* the state directory's lock (state_admit); -1 once removed */
        int64_t tasks_started;  /* -1 unknown */
        int writable_fd;        /* the writable layer (O_PATH), for its usage at the end */
        int layer_fd;           /* the writable layer's root (O_PATH; init sent it): a template root's "upper" */
        bool floor_on;          /* the BPF egress floor is attached to the sandbox's cgroup */
        char floor_why[320];    /* else why not */
        int landlock_abi;       /* the Landlock ABI init enforced; 0: none */
        char landlock_why[320]; /* else why not */
        struct trapped_count {
                const char *name;
                uint64_t count;
                uint64_t total_ns, max_ns; /* the sentry's time on them (notify_engine_call_stats) */
        } trapped[64];                     /* notifications served, per emulated syscall */
        size_t n_trapped;
        /* the umask cache's hits and misses, for --stats */
        struct notify_umask_stats umask_cache;
        struct serve *serve;         /* `cordon sandbox create`: the detached sentry's state, else NULL */
        struct approvals *approvals; /* "ask" rules' pending requests (sentry/approvals.h) */
        int approve_tty;             /* --approve-interactive: the controlling terminal, else -1 */
        int prompt_wake[2];          /* a terminal prompt started or ended: the relay re-polls; -1 */
};

/* The exec tracer (exectrace.c): verifies after each exec in the sandbox
 * that the process runs the image fs_handle_exec approved. */
struct exectrace_config {
        pid_t init_pid;
        struct fs_exec_table *table; /* MAP_SHARED with the handlers */
        int audit_fd;                /* -1: none */
        bool verbose;
        const char *sandbox_id;
};
/* Forks the tracer (call while single-threaded): 0 with *ret_pid and its
 * channel, whose first message says whether it has seized init (it sets
 * itself up beside the caller); or -errno. */
int exectrace_start(const struct exectrace_config *c, pid_t *ret_pid, int *ret_channel);
/* Takes that first message (before init forks the command, and before any
 * request on the channel): 0 once the tracer has seized init, else -errno
 * from PTRACE_SEIZE (the tracer is then killed and reaped). */
int exectrace_ready(pid_t pid, int channel);
/* Ends and reaps the tracer; call after init has been waited for. */
void exectrace_stop(pid_t pid);
/* exectrace_stop in two steps: the tracer's exit then runs beside what the
 * caller does in between (it must reap it before it returns) */
void exectrace_kill(pid_t pid);
void exectrace_reap(pid_t pid);
/* Refuses a directory, O_PATH or aimable host socket among fds (stdin,
 * stdout, stderr of a command): 0, or -EBADF with why filled in. */
int check_passed_fds(const int fds[3], char *why, size_t size);

/* Writes the --stats JSON; 0 or -errno. */
int write_stats(struct sandbox_state *st, const char *path, int exit_code);
/* Kills every process of the sandbox (its cgroup, else init and so its pid
 * namespace). */
void sandbox_kill_all(struct sandbox_state *st);

/* Runs until init exits; returns cordon's exit code. Calls run_wind_down
 * as soon as the command's status is in. */
int supervise(struct sandbox_state *st);
/* The first of the teardown, once the command has ended (init's own exit,
 * the namespaces' teardown, runs beside it): the trapped-call counts taken,
 * the approvals closed, the engine stopped, and (`cordon run`) the state
 * directory removed, its claim kept until the groups are gone. Once only. */
void run_wind_down(struct sandbox_state *st);
void tty_begin(struct sandbox_state *st);
void tty_end(struct sandbox_state *st);

/* Installs the sentry's own seccomp allow-list on every thread (confine.c).
 * Call once set-up is done: afterwards no exec, no new process, no mount,
 * no namespace. 0, or -errno with *ret_bad naming the row that failed. */
int sentry_confine(const char **ret_bad);
/* The same in two steps: the compile (libseccomp's, about a millisecond),
 * which can run on a thread of its own during set-up, and the load. */
int sentry_confine_build(struct sock_fprog *ret, const char **ret_bad);
/* The same, compiled now with libseccomp (sentry_confine_build takes the
 * build-time copy where the binary has one: sentry/prebuilt.h). */
int sentry_confine_build_fresh(struct sock_fprog *ret, const char **ret_bad);
int sentry_confine_load(const struct sock_fprog *prog);
/* How many rows the allow-list has (for -v and `cordon check`). */
size_t sentry_confine_rows(void);
