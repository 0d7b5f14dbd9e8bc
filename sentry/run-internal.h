/* sentry/ private: what run.c, plan.c and supervise.c share. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <termios.h>

#include "fs/fs.h"
#include "net/net.h"
#include "notify/notify.h"
#include "sentry/cgroup.h"
#include "sentry/limits.h"
#include "sentry/sentry.h"

/* The engine's handler contexts: which userdata a table row's handler gets. */
enum { CTX_FS = 0, CTX_NET = 1 };

/* The set-up channel between the sentry and the sandbox's init. */
enum msg_type { MSG_GO = 1, MSG_ERROR, MSG_FDS, MSG_READY, MSG_START, MSG_STATUS };

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
        struct fs_rule *rules;
        struct sock_fprog filter;
        bool use_tty;
        int64_t max_open_files; /* RLIMIT_NOFILE for the command; -1: inherited */
        unsigned debug_disable; /* DEBUG_OFF_* (tests only; see sentry.h) */
};

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
        int audit_fd; /* --audit FILE, or -1 */

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
        int64_t tasks_started;  /* -1 unknown */
        int writable_fd;        /* the writable layer (O_PATH), for its usage at the end */
        bool floor_on;          /* the BPF egress floor is attached to the sandbox's cgroup */
        char floor_why[320];    /* else why not */
        int landlock_abi;       /* the Landlock ABI init enforced; 0: none */
        char landlock_why[320]; /* else why not */
        struct trapped_count {
                const char *name;
                uint64_t count;
        } trapped[64]; /* notifications served, per emulated syscall */
        size_t n_trapped;
};

/* Writes the --stats JSON; 0 or -errno. */
int write_stats(struct sandbox_state *st, const char *path, int exit_code);
/* Kills every process of the sandbox (its cgroup, else init and so its pid
 * namespace). */
void sandbox_kill_all(struct sandbox_state *st);

/* Runs until init exits; returns cordon's exit code. */
int supervise(struct sandbox_state *st);
void tty_begin(struct sandbox_state *st);
void tty_end(struct sandbox_state *st);
