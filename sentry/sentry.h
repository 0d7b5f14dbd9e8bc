/* sentry/: the cordon program. Its public face for the other parts of the
 * program (main.c, the tests): run options, the syscall table, the checks. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "notify/notify.h"
#include "sentry/cgroup.h"
#include "sentry/limits.h"
#include "sentry/policy.h"

/* exit codes of cordon itself, as podman and docker use them */
#define EXIT_USAGE       2   /* bad command line or policy */
#define EXIT_SANDBOX     125 /* the sandbox could not be set up */
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND   127

enum tty_mode { TTY_AUTO, TTY_ALWAYS, TTY_NEVER };

struct serve_config;

struct run_options {
        struct policy *policy; /* owned by the caller */
        char **argv;           /* the command, NULL-terminated */
        char **extra_env;      /* "K=V" from --env, NULL-terminated or NULL */
        size_t n_extra_env;
        struct policy_bind *binds; /* from --bind, in addition to the policy's */
        size_t n_binds;
        const char *cwd; /* in the view; default the home */
        enum tty_mode tty;
        bool verbose;
        bool trap_all;
        struct run_limits limits;   /* from --memory, --cpus, ...; merged with the policy's */
        const char *admission_path; /* NULL: /etc/cordon/admission.json if present */
        const char *stats_path;     /* --stats FILE */
        const char *audit_path;     /* --audit FILE: the egress audit log (JSON lines) */
        enum cg_mode cgroup_mode;
        /* `cordon sandbox create`: no command; a detached sentry serves runs
         * (sentry/sandbox.h). NULL for `cordon run`. */
        const struct serve_config *serve;
};

/* `cordon sandbox VERB ...` (sentry/sandbox.c): returns the exit status. */
int sentry_sandbox(int argc, char **argv);

/* Runs argv in a new sandbox in the foreground. Returns the exit status
 * cordon should exit with (the command's, 128+N for a signal, or
 * EXIT_SANDBOX after printing why the sandbox could not start). */
int sentry_run(const struct run_options *o);

/* The syscall table (sentry/syscalls.c). */
const struct syscall_entry *sentry_syscall_table(size_t *ret_n);

/* `cordon check`: prints what this host supports; returns 0 when every
 * layer `cordon run` requires is there, 1 otherwise. */
int sentry_check(bool json);

/* `cordon syscalls`: prints the table. */
void sentry_print_syscalls(void);
