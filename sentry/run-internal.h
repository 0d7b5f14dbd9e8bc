/* sentry/ private: what run.c, plan.c and supervise.c share. */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <termios.h>

#include "fs/fs.h"
#include "notify/notify.h"
#include "sentry/sentry.h"

/* The set-up channel between the sentry and the sandbox's init. */
enum msg_type { MSG_GO = 1, MSG_ERROR, MSG_READY, MSG_START, MSG_STATUS };

struct msg {
        uint32_t type;
        int32_t value;
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
};

int sandbox_plan_build(const struct run_options *o, struct sandbox_plan *ret);
void sandbox_plan_done(struct sandbox_plan *p);

struct sandbox_state {
        struct sandbox_plan *plan;
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

        int pty_master;
        bool tty_raw;
        struct termios saved_termios;
};

/* Runs until init exits; returns cordon's exit code. */
int supervise(struct sandbox_state *st);
void tty_begin(struct sandbox_state *st);
void tty_end(struct sandbox_state *st);
