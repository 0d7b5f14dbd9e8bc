/* sentry/: the supervision of one sandbox (the core room).
 *
 * Promises: sentry_run() builds one sandbox from run_options (its plan: the
 * view, the filter from the syscall table, the limits), clones init into
 * every namespace, takes the seccomp listener and serves the trapped calls
 * through notify/, fs/ and net/, confines itself, verifies each exec, and
 * tears everything down when the command ends, whatever the cause; the
 * command never runs unsupervised. A front that keeps a sandbox serving
 * (sentry/sandbox/) plugs in through run_options, and drives init with the
 * set-up channel's messages declared here. The state root (state.c) admits
 * each sandbox and lets `cordon gc` remove what a crashed sentry left.
 *
 * Never: it parses no document (sentry/policy/ does), makes no cgroup
 * itself (sentry/cgroup/ does), and knows no front: nothing here includes
 * sentry/sandbox/, sentry/oci/ or sentry/cli/. It writes to stderr only the
 * "cordon: ..." diagnostics of a run it supervises, the only words a
 * `cordon run` user gets from the sentry. */
#pragma once

#include <linux/filter.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <termios.h>

#include "fs/fs.h"
#include "net/net.h"
#include "notify/notify.h"
#include "sentry/cgroup/cgroup.h"
#include "sentry/policy/policy.h"

/* exit codes of cordon itself, as podman and docker use them */
#define EXIT_USAGE       2   /* bad command line or policy */
#define EXIT_SANDBOX     125 /* the sandbox could not be set up */
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND   127

enum tty_mode { TTY_AUTO, TTY_ALWAYS, TTY_NEVER };

struct serve_config;
struct serve;
struct oci_sandbox;
struct sandbox_state;

/* A front that keeps a sandbox serving after its start instead of running
 * one command: sentry/sandbox/ (`cordon sandbox create`, and `cordon oci`
 * through it). The core calls it at these points and knows nothing else
 * of it; struct serve_config and struct serve are the front's own. */
struct sentry_front {
        const struct serve_config *config;
        /* Before the clone: the front's state for sandbox id (its files, its
         * control socket, the audit pipe). 0 or -errno. */
        int (*prepare)(const struct serve_config *config, const char *id, const struct run_limits *l,
                       struct serve **ret);
        /* The write end of the pipe the egress gate audits into (owned by srv). */
        int (*audit_fd)(struct serve *srv);
        /* The (non-blocking) pipe the approvals wake the front through when
         * they queue events (owned by srv). */
        int (*approvals_wake_fd)(struct serve *srv);
        /* Optional (NULL: none). Before the sentry confines itself, with the
         * sandbox's network namespace (the fd is the caller's): the front may
         * start a thread that joins it. 0, or -errno once it has said why. */
        int (*netns)(struct serve *srv, int netns_fd);
        /* After MSG_START: serves until the sandbox ends; returns cordon's
         * exit code once init is gone. */
        int (*loop)(struct sandbox_state *st);
        void (*free)(struct serve *srv); /* accepts NULL */
};

struct run_options {
        struct policy *policy; /* owned by the caller */
        char **argv;           /* the command, NULL-terminated */
        char **extra_env;      /* "K=V" from --env, NULL-terminated or NULL */
        size_t n_extra_env;
        struct policy_bind *binds; /* from --bind, in addition to the policy's */
        size_t n_binds;
        const char *cwd; /* in the view (--cwd); NULL: caller_cwd, else the home */
        /* `cordon run`: the caller's directory, where the command starts when
         * the view shows it as a directory (else the home, said with -v) */
        const char *caller_cwd;
        /* --user UID[:GID]: the command's identity in the sandbox (it wins
         * over the policy's "user") */
        bool user_set;
        uint32_t user_uid, user_gid;
        enum tty_mode tty;
        bool verbose;
        bool trap_all;
        struct run_limits limits;   /* from --memory, --cpus, ...; merged with the policy's */
        const char *admission_path; /* NULL: /etc/cordon/admission.json if present */
        const char *stats_path;     /* --stats FILE */
        const char *audit_path;     /* --audit FILE: the egress audit log (JSON lines) */
        enum cg_mode cgroup_mode;
        bool allow_unverified_exec; /* run without the exec tracer where ptrace is refused (weaker tier) */
        bool approve_interactive;   /* ask on the controlling terminal for "ask" rules (cordon run) */
        unsigned debug_disable;     /* DEBUG_OFF_*: layers switched off (tests only, --debug-unsafe) */
        /* `cordon sandbox create` (and `cordon oci` through it): no command;
         * the front serves runs (struct sentry_front). NULL for `cordon run`. */
        const struct sentry_front *front;
        /* `cordon oci`: the container's identity, hostname, rlimits and
         * seccomp profile (below); NULL otherwise. */
        const struct oci_sandbox *oci;
};

/* Layers the tests may switch off to show that the next one holds alone:
 * CORDON_DEBUG_DISABLE=name,... honoured only with --debug-unsafe. */
enum {
        DEBUG_OFF_NET_EMULATION = 1 << 0, /* "net-emulation": connect/sendto/sendmsg/sendmmsg run natively */
        DEBUG_OFF_FS_EMULATION = 1 << 1,  /* "fs-emulation": every path call the sentry serves runs natively */
        DEBUG_OFF_RO_BINDS = 1 << 2,      /* "ro-binds": read-only binds mounted writable */
        DEBUG_OFF_EGRESS_FLOOR = 1 << 3,  /* "egress-floor": no BPF programs on the cgroup */
        DEBUG_OFF_LANDLOCK = 1 << 4,      /* "landlock": no Landlock ruleset */
        DEBUG_OFF_NOEXEC_RULES = 1 << 5,  /* "noexec-rules": exec:false rules' mounts left executable */
};
/* Parses a CORDON_DEBUG_DISABLE list into DEBUG_OFF_* bits; -EINVAL with
 * *ret_bad (pointing into list) for an unknown name. */
int sentry_debug_parse(const char *list, unsigned *ret, const char **ret_bad);

/* Runs argv in a new sandbox in the foreground. Returns the exit status
 * cordon should exit with (the command's, 128+N for a signal, or
 * EXIT_SANDBOX after printing why the sandbox could not start). */
int sentry_run(const struct run_options *o);

/* The syscall table (sentry/syscalls.c). */
const struct syscall_entry *sentry_syscall_table(size_t *ret_n);
/* The rows in force for one run, copied into ret (room for size rows; the
 * whole table fits in sentry_syscall_table's count): every row when
 * trap_paths (--trap-all, or a policy with a hidden rule) but the
 * conditional open rows, else all but the SC_F_PATH_POLICY rows, whose calls
 * then run natively (the open family's with the SC_F_PATH_FAST_NOASK rows:
 * only opens that write, truncate or create without O_EXCL trapped).
 * Returns the count. */
size_t sentry_syscall_select(bool trap_paths, struct syscall_entry *ret, size_t size);
/* The same, and with trap_writes (a policy with write "ask" rules) also the
 * SC_F_PATH_WRITE rows, the calls that change the file system, and the
 * SC_F_PATH_FAST open rows (every open that writes, creates or truncates)
 * in place of the SC_F_PATH_FAST_NOASK ones; with native_exec the
 * SC_F_EXEC_NATIVE rows in place of the SC_F_EXEC ones. */
size_t sentry_syscall_select_rows(bool trap_paths, bool trap_writes, bool native_exec, struct syscall_entry *ret,
                                  size_t size);

/* Whether this host lets the sentry trace the sandbox's exec events
 * (sentry/exectrace.c): 0 or -errno from PTRACE_SEIZE. */
int exectrace_probe(void);
/* How many rows the sentry's own allow-list has (confine.c; for -v and
 * `cordon check`). */
size_t sentry_confine_rows(void);

/* 0 when a crash in a sandbox dumps nowhere outside it (the host's
 * kernel.core_pattern is a file or a pipe, which the sandbox's one-byte
 * RLIMIT_CORE stops); -EPERM with why filled in when it is a socket, which
 * no limit stops: then no sandbox may start. */
int sentry_core_dumps_contained(char *why, size_t size);

/* The set-up channel between the sentry and the sandbox's init. */
enum msg_type {
        MSG_GO = 1,
        MSG_ERROR,
        /* init → sentry after MSG_GO: its user, net, ipc and uts namespaces
         * (value: 1 when it has its own binfmt_misc, fs_binfmt_isolate);
         * MSG_FDS once the view is built: its root, the writable layer and
         * the terminal's master side (when there is one) */
        MSG_NS,
        MSG_FDS,
        /* init → sentry, its filter installed: value is READY_* bits, aux
         * the listener's fd number in init */
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
        /* init → sentry after MSG_LANDLOCK: text is the working directory
         * the command starts in and, where it is not the one asked for (the
         * caller's, not shown by the view), why; value is 0 or that errno */
        MSG_CWD,
};

enum {
        READY_KILLABLE = 1 << 0,    /* the filter has WAIT_KILLABLE_RECV */
        READY_NATIVE_EXEC = 1 << 1, /* plan->filter_native_exec installed: execs run natively */
};

struct msg {
        uint32_t type;
        int32_t value;
        int64_t aux; /* MSG_STATUS: tasks the sandbox started (its pid namespace's last pid) */
        char text[1024];
};

/* MSG_EXEC's body: cwd, then argc arguments, then envc "K=V" entries, each
 * NUL-terminated, in strings[0..len). */
#define EXEC_MAX_STRINGS 61440
#define EXEC_TTY         1  /* 0-2 are a terminal: the run takes it as its controlling one */
#define EXEC_HOLD        2  /* fd 3 is a pipe: the run waits for a byte on it before its exec (OCI create/start) */
#define EXEC_CGROUP      4  /* the last fd: the run's own group's cgroup.procs, to move into before anything runs */
#define EXEC_USER        8  /* the run becomes uid:gid (OCI exec --user), no supplementary groups */
#define EXEC_GROUPS      16 /* the run's supplementary groups are groups[] (OCI exec's additionalGids) */
#define EXEC_CAPS        32 /* the run's five capability sets are caps[] (OCI exec's process.capabilities) */
#define EXEC_REPORT      64 /* after stdio and the hold pipe, a socket: the run says whether it got ready (OCI) */
#define EXEC_MAX_GROUPS  32 /* OCI_MAX_IDS */
/* stdin, stdout, stderr, the hold pipe, the report socket, n_preserve fds, the run's group */
#define EXEC_MAX_FDS (OCI_MAX_PRESERVE + 6)
/* the run may share init's memory until its exec (initd.c run_vfork; the
 * sentry says when: sandbox/runs.c run_may_share_vm) */
#define EXEC_SHARED_VM 128
struct exec_msg {
        uint32_t type; /* MSG_EXEC */
        int32_t run;
        uint32_t flags;
        uint32_t argc;
        uint32_t envc;
        uint32_t n_preserve; /* fds after stdio (and the hold and report pipes) that become the run's 3, 4, ... */
        uint32_t uid, gid;   /* with EXEC_USER */
        uint32_t n_groups;   /* with EXEC_GROUPS */
        uint32_t groups[EXEC_MAX_GROUPS];
        /* with EXEC_CAPS: bounding, effective, permitted, inheritable,
         * ambient (masks of 1 << CAP_*), each within what init holds */
        uint64_t caps[5];
        uint32_t len;
        char strings[EXEC_MAX_STRINGS];
};

/* Everything the child needs, computed before the clone so that a bad
 * request fails before any namespace exists. */
/* A sandbox's host ids (state.c): inside ids 0..count-1 are host uids
 * uid..uid+count-1 and gids gid..gid+count-1. */
struct id_range {
        uint32_t uid, gid, count;
        int slot; /* its number in the pool */
};

struct sandbox_plan {
        char **argv;
        char **envp;
        char *cwd;
        /* NULL: cwd was asked for (--cwd, --workspace, a front's): entered
         * or the start fails. Else cwd is the caller's directory, tried
         * first, and this (the home) where the view does not show it as a
         * directory, or hides it (MSG_CWD says which and why). */
        const char *cwd_fallback;
        const char *user_origin; /* with user_set: "--user" or "the policy's \"user\"", for messages */
        struct fs_view_spec view;
        struct fs_bind *binds;
        int *bind_fds; /* OCI: the binds' sources opened by the sentry (view.bind_fds), else NULL */
        size_t n_bind_fds;
        struct fs_rule *rules;
        struct sock_fprog filter;
        /* the same with execs native (SC_F_EXEC), where the policy allows
         * it; init installs it in place of filter when the view's floors
         * are in force (len 0: never) */
        struct sock_fprog filter_native_exec;
        /* the syscall table rows in force for this run (see SC_F_PATH_POLICY),
         * with the SC_F_EXEC_NATIVE rows too where filter_native_exec is set */
        struct syscall_entry *table;
        size_t n_table;
        bool trap_paths;  /* --trap-all or a hidden rule: every path call is emulated */
        bool trap_writes; /* a write "ask" rule: every path call that changes the file system is emulated */
        bool use_tty;
        int64_t max_open_files;        /* RLIMIT_NOFILE for the command; -1: inherited */
        unsigned debug_disable;        /* DEBUG_OFF_* (tests only; see sentry.h) */
        bool serve_runs;               /* no command: init waits for MSG_EXEC (sentry/initd.c) */
        const struct oci_sandbox *oci; /* `cordon oci`: applied by init (below), or NULL */
        /* the identity asked for (--user, the policy's "user"), else the
         * default: root in a root-started sandbox, the caller's own ids in
         * an unprivileged one */
        bool user_set;
        uint32_t user_uid, user_gid;
        /* set by the sentry before init's clone (sandbox_ids): the map, the
         * command's ids inside, and the capabilities its root holds in the
         * sandbox's user namespace (a mask of CAP_* bits) */
        struct fs_ids ids;
        uint32_t cmd_uid, cmd_gid;
        /* who init is inside: the map's first id (its root) as root;
         * unprivileged, the caller's own id there, which it already is: a
         * switch to another would make init non-dumpable, and its mm (the
         * host's) would be out of an unprivileged sentry's reach */
        uint32_t init_uid, init_gid;
        uint64_t caps;
        /* the policy's credential grants: secrets read, placeholders in
         * envp (net/broker.c); NULL when the policy has none */
        struct net_broker *broker;
};

/* Unprivileged: the caller's /etc/subuid and /etc/subgid ranges, when the
 * sentry's own user namespace maps them (subid.c). That namespace then
 * maps 0-65535 to the range in order but uid_pos:gid_pos, which is the
 * caller, so the sandbox's map is 0-65535 to the same ids there. */
#define SUBID_COUNT 65536u
struct subid_range {
        bool used;
        uid_t caller_uid; /* on the host */
        gid_t caller_gid;
        uint32_t uid_pos, gid_pos;     /* the caller's ids inside */
        uint32_t uid_start, gid_start; /* the ranges' first host ids */
        char why[256];                 /* not used: why (for -v) */
};

/* A part of the teardown that runs beside the rest: on a thread of its
 * own, or at once where none can be made (teardown.c). */
struct side_task {
        pthread_t thread;
        bool running; /* to be joined */
};

struct sandbox_state {
        struct sandbox_plan *plan;
        const struct policy *policy;
        int sock;
        int pidfd;
        pid_t init_pid;
        sigset_t sigmask;
        uid_t uid; /* the command's host uid and gid (its fsuid, fsgid) */
        gid_t gid;
        struct id_range range;    /* root: the sandbox's own host ids (count 0: none) */
        struct subid_range subid; /* unprivileged: the caller's ranges, if used */
        bool verbose;
        bool privileged;
        struct fs_context fsctx;
        struct notify_engine *engine;
        struct net_gate *gate;
        int audit_fd;               /* --audit FILE, or -1 */
        bool allow_unverified_exec; /* --allow-unverified-exec: run on without the exec tracer */
        pid_t exec_tracer;          /* 0: none */
        bool native_exec;           /* init installed the filter with execs native (READY_NATIVE_EXEC) */
        bool exec_native_expected;  /* what the sentry foresaw at MSG_NS: no exec tracer started */

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
        bool keep_counts;       /* --stats: the engine's per-syscall counts kept at its stop */
        bool keep_layer;        /* --stats or a front: the writable layer's fds kept to the end */
        int64_t tasks_started;  /* -1 unknown */
        int writable_fd;        /* the writable layer (O_PATH), for its usage at the end */
        int layer_fd;           /* the writable layer's root (O_PATH; init sent it): a template root's "upper" */
        bool floor_on;          /* the BPF egress floor is attached to the sandbox's cgroup */
        char floor_why[320];    /* else why not */
        int landlock_abi;       /* the Landlock ABI init enforced; 0: none */
        char landlock_why[320]; /* else why not */
        char cwd_note[320];     /* MSG_CWD's text: where the command started (and why there), for -v */

        /* removing `cordon run`'s state directory (teardown.c), then, with
         * rest_waits, the rest of the teardown: joined by run_teardown or
         * run_groups_end */
        struct side_task state_remover;
        /* init's mount namespace, held from before the start so that init's
         * exit does not tear the view down (its mounts' release and the
         * RCU grace periods that waits for): the sentry's last reference
         * goes on a thread once init is reaped (teardown.c), beside the
         * rest of the teardown. -1: none held. */
        int mntns_fd;
        /* the view's fds' last close, on a thread once init is reaped
         * (teardown.c): the fds it closes */
        struct side_task view_ender;
        int view_fds[4];
        /* the teardown's other steps, on a thread beside the view's
         * release (run_teardown); with groups_early (no --stats, no front
         * reads them afterwards) they end with run_groups_end's removal
         * of the groups and the claim: groups_removed once done */
        bool groups_early, groups_removed;
        /* rest_waits: the state directory's thread may go on with the
         * rest of the teardown (teardown.c), which rest_by says who does
         * (whoever sets it first: that thread once done with the directory,
         * or run_teardown at init's reap); it waits for rest_go */
        bool rest_waits;
        _Atomic int rest_by;
        sem_t rest_go;
        /* An OCI container's: the first thread waits on leader_efd while
         * the main loop runs on another (run.c, main_loop_in_view), and is
         * told there when to enter the view's mount namespace (leader_view,
         * a copy of mntns_fd) or that the loop ended. -1: not used. */
        int leader_efd, leader_view;
        int leader_r; /* the loop's status, for the first thread */
        struct trapped_count {
                const char *name;
                uint64_t count;
                uint64_t total_ns, max_ns; /* the sentry's time on them (notify_engine_call_stats) */
        } trapped[64];                     /* notifications served, per emulated syscall */
        size_t n_trapped;
        /* the umask cache's hits and misses, for --stats */
        struct notify_umask_stats umask_cache;
        const struct sentry_front *front; /* run_options.front: NULL for `cordon run` */
        struct serve *serve;              /* the front's state (front->prepare), else NULL */
        struct approvals *approvals;      /* "ask" rules' pending requests (sentry/approvals/approvals.h) */
        int approve_tty;                  /* --approve-interactive: the controlling terminal, else -1 */
        int prompt_wake[2];               /* a terminal prompt started or ended: the relay re-polls; -1 */
};

/* Refuses a directory, O_PATH or aimable host socket among fds (stdin,
 * stdout, stderr of a command): 0, or -EBADF with why filled in. */
int check_passed_fds(const int fds[3], char *why, size_t size);
/* Lets the command reopen the anonymous pipes among fds (its stdin, stdout,
 * stderr) through /proc/self/fd, as natively: adds read and write for
 * others to each (passed-fds.c says why that is safe). */
void open_passed_pipes(const int fds[3]);

/* A timerfd (non-blocking, close-on-exec) for a relative timeout
 * (CLOCK_MONOTONIC) or an absolute expiry (CLOCK_REALTIME, so a clock
 * change moves it as it moves the deadline): the fd, or -errno. */
int sentry_timer_arm(int clock, bool absolute, int64_t when_ms);
/* Kills every process of the sandbox (its cgroup, else init and so its pid
 * namespace). */
void sandbox_kill_all(struct sandbox_state *st);

/* The sandbox's ids and what its root holds (stats.c): "identity" in
 * --stats and `sandbox inspect` (a jansson json_t). */
struct json_t;
struct json_t *sandbox_identity_json(const struct sandbox_state *st);
/* The -v identity line's map: the range, the caller's ranges, or the one id and why (stats.c). */
char *identity_describe(const struct sandbox_state *st);

/* --- the state root (state.c) --- */

/* /run/cordon for root; $XDG_RUNTIME_DIR/cordon or /tmp/cordon-UID otherwise;
 * or what --root set. */
const char *state_root(void);
/* true unless --root chose another directory than the default */
bool state_root_is_default(void);
/* --root DIR: where sandboxes' state lives from now on (absolute; short
 * enough for the control sockets under it). 0, or -errno with a message. */
int state_set_root(const char *dir, char **ret_error);
/* Where ranges come from: `ranges` ranges of 65,536 ids from uid_start
 * and gid_start, named by source. */
struct id_pool {
        uint32_t uid_start, gid_start, ranges;
        const char *source;
};
/* The pool in force: /etc/subuid's and /etc/subgid's cordon entries, else
 * the default (2^31 on, 16,384 ranges). -EINVAL for an entry that holds 0. */
int idrange_pool(struct id_pool *ret);
/* Under the admission lock, with the claim of sandbox id held: a free range
 * for it; -EDQUOT with *ret_error naming the pool when none is free. */
int idrange_take(const char *id, struct id_range *ret, char **ret_error);
/* Under the admission lock, with the claim of sandbox id held: a share of
 * *range (a pod's, taken by its sandbox container, which must be live),
 * held as long as id's claim, so that the range stays in use while any
 * sandbox of the pod lives. 0, or -errno with *ret_error. */
int idrange_share(const char *id, const struct id_range *range, char **ret_error);
/* The range this process took, given back (state_drop_claim calls it). */
void idrange_release(void);
/* `cordon gc`, under the admission lock: drops ranges of dead sandboxes
 * (printing each unless quiet). */
int idrange_gc(bool quiet);

/* Under the admission lock: counts live sandboxes, refuses (-EDQUOT with
 * *ret_error) beyond max_sandboxes (<0: no maximum), else creates the
 * sandbox's state directory and takes its lock, and with ret_range a uid
 * range (idrange_take; -EDQUOT when the pool is exhausted). Returns the lock
 * fd (held for the sandbox's life), or -errno. */
int state_admit(const char *id, int64_t max_sandboxes, struct id_range *ret_range, char **ret_error);
/* The default state root (what is host-wide for this user lives there),
 * and whether sandbox id's claim there is held by a live sentry. */
const char *state_default_root(void);
bool state_claim_held(const char *id);
/* Writes state.json in the sandbox's directory (replaced atomically). */
int state_write(const char *id, const char *json);
/* Removes the sandbox's state directory and drops its claim. */
int state_remove(const char *id);
/* The two halves of state_remove, for a teardown that removes the
 * directory early (beside init's exit: ext4 makes a directory's removal
 * cost a few hundred microseconds) and keeps the claim, which alone tells
 * gc that the sandbox's groups are still in use, until they are gone. */
int state_remove_dir(const char *id);
/* The same for `cordon run`'s directory (state.json and the lock): by
 * name, the scan only where something else is left. */
int state_remove_run_dir(const char *id);
void state_drop_claim(const char *id);
/* `cordon gc`: removes what crashed sentries left: state directories whose
 * lock nobody holds, their cgroups, and cordon cgroups with no live
 * sandbox. Never touches a live sandbox. Prints what it removed unless
 * quiet. Returns the number of things removed, or -errno. */
int state_gc(bool quiet);

/* The state directory of sandbox id (state_root()/sandboxes/ID): 0, or
 * -EINVAL for an id that is not 1-64 lower-case hex digits. */
int sandbox_dir(const char *id, char *buf, size_t size);
bool sandbox_id_valid(const char *id);
/* Whether the sandbox whose state directory is dirfd is alive (its lock is
 * held by its sentry). */
bool state_dir_live(int dirfd);

/* a fresh sandbox id: 16 hex digits */
void sandbox_new_id(char ret[17]);

/* --- what an OCI container asks of its sandbox --- */

/* What an OCI container asks of its sandbox beyond a cordon policy
 * (sentry/oci/ fills it from config.json; init.c and initd.c apply it in
 * the sandbox's init). Everything here only narrows what the sandbox may
 * do, except the identity, whose host ids are chosen by cordon (the
 * sandbox's own range, state.c) and never host root. */
#define OCI_MAX_IDS 32 /* additional gids mapped */
/* --preserve-fds: one SCM_RIGHTS message carries them with stdio, the start
 * gate and the run's group, and the kernel passes at most 253 fds in one */
#define OCI_MAX_PRESERVE 240

/* linux.sysctl's entries (sentry/oci/ checks the names: namespaced, no
 * ".." or "/"). */
struct oci_sysctl {
        char *key, *value;
};

struct oci_limit {
        int resource;
        uint64_t soft, hard;
};

/* A mount the view does not already provide, made by init inside the
 * sandbox's own mount namespace after the view is built (tmpfs, mqueue). */
/* struct oci_sandbox's join[]: the namespaces that may be joined. The pid
 * one is a pod's (shareProcessNamespace): the pod sandbox container's
 * process namespace, whose pid 1 is the pod's infra process. */
enum { OCI_JOIN_NET, OCI_JOIN_IPC, OCI_JOIN_UTS, OCI_JOIN_PID, OCI_JOIN_KINDS };

struct oci_extra_mount {
        const char *destination;
        const char *fstype;
        unsigned long flags;
        const char *data;
        bool copyup; /* tmpcopyup: the image's files there copied in (fs_copyup) */
};

struct oci_sandbox {
        const char *hostname; /* NULL: "cordon" */
        /* process.cwd: where a run that names none starts (`cordon sandbox
         * exec`, the API's exec), as runc's exec starts in it */
        const char *cwd;
        bool set_user; /* false: the sandbox's root (uid 0) */
        uint32_t uid, gid;
        /* process.user is not root: init stays the namespace's root, with
         * the bounding set and what it needs to set a run up (init.c
         * oci_drop_privileges), and each run, the container's process
         * too, takes its own identity and sets from its EXEC_USER and
         * EXEC_CAPS (initd.c), so that an exec may be root (runc's `exec
         * -u 0`) within the bounding set */
        bool runs_switch;
        uint32_t groups[OCI_MAX_IDS];
        size_t n_groups;
        /* process.capabilities, masks of (1 << CAP_*), within the sandbox's
         * user namespace only: none on cordon's refused list (sentry/oci/
         * refuses them at create). All 0: none at all, locked as for an
         * empty policy list. */
        uint64_t cap_bounding, cap_effective, cap_permitted, cap_inheritable, cap_ambient;
        bool root_readonly; /* root.readonly: the view's root mount read-only */
        struct oci_limit *rlimits;
        size_t n_rlimits;
        /* linux.seccomp compiled (len 0: none): installed in every run just
         * before its exec, on top of cordon's own filter */
        struct sock_fprog seccomp;
        unsigned seccomp_flags;
        struct oci_extra_mount *mounts;
        size_t n_mounts;
        /* their destinations (n_mounts of them), made in the root before
         * it is read-only (fs_view_spec.mount_points) */
        const char **mount_points;
        /* The targets of the config's own bind mounts (the engine's
         * volumes and files, not the policy's binds): read-only ones are
         * idmapped as read-write ones are (bind_trees) */
        const char **engine_binds;
        size_t n_engine_binds;
        /* The config's mounts under /dev, made in the view as configured
         * (fs_view_spec.dev_mounts), and /dev's own tmpfs options (NULL:
         * cordon's) */
        struct fs_dev_mount *dev_mounts;
        size_t n_dev_mounts;
        const char *dev_data;
        /* The engine's own /dev/shm tmpfs (fs_view_spec.shm_tree_fd);
         * NULL: cordon's */
        const char *shm_source;
        /* Every mount of the config in its order, with its propagation, and
         * linux.rootfsPropagation (0: private): fs_view_order, once the
         * last mount (the container's /proc) is made */
        struct fs_mount_order *order;
        size_t n_order;
        unsigned long rootfs_propagation;
        /* linux.sysctl (names checked by the parser: namespaced, no ".."
         * or "/"), written by init in the sandbox's own namespaces */
        const struct oci_sysctl *sysctls;
        size_t n_sysctls;
        /* process.umask and process.oomScoreAdj, set by init and inherited
         * by every process of the container */
        bool has_umask, has_oom_score_adj;
        uint32_t umask;
        int oom_score_adj;
        /* Namespaces an engine prepared, joined instead of created (sentry/
         * oci/pod.c chose and checked them: never the host's): a CNI pod
         * network or a podman network for the network one, and for a
         * Kubernetes pod's app container its pod's network, ipc and uts,
         * and its process namespace where the pod shares one.
         * The sentry opens each path again and joins it only if it is still
         * the namespace that was checked (its nsfs device and inode). */
        struct oci_join {
                const char *path; /* NULL: a new namespace */
                uint64_t dev, ino;
        } join[OCI_JOIN_KINDS];
        /* A pod's app container: the pod's uid range (held by its sandbox
         * container) is shared, not a new one taken (count 0: none). */
        struct id_range pod_range;
        /* The first nameserver of the resolv.conf the engine mounted (its
         * cluster's DNS), for networkPolicy.clusterDomain; NULL: none */
        const char *cluster_dns;
        /* The view's /etc/resolv.conf: cordon's with the engine's search
         * domains and options (fs_view_spec.resolv_conf); NULL: cordon's */
        const char *resolv_conf;
        /* linux.cgroupsPath (cgroupfs form), or NULL: cgroup_set_parent */
        const char *cgroups_path;
        /* The joined network namespace is one an engine prepared (a CNI or
         * podman network, with routes beyond loopback), not a pod sandbox
         * container's own cordon namespace: the gate connects from it, and
         * the floor must hold there (join.c) */
        bool net_prepared;
        /* The joined network namespace already has a DNS stub at
         * NET_STUB_ADDR (the pod sandbox container's): none is started. */
        bool stub_shared;
};
