/* sentry/: the cordon program. Its public face for the other parts of the
 * program (main.c, the tests): run options, the syscall table, the checks. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "notify/notify.h"
#include "sentry/cgroup/cgroup.h"
#include "sentry/policy/limits.h"
#include "sentry/policy/policy.h"

/* exit codes of cordon itself, as podman and docker use them */
#define EXIT_USAGE       2   /* bad command line or policy */
#define EXIT_SANDBOX     125 /* the sandbox could not be set up */
#define EXIT_CANNOT_EXEC 126
#define EXIT_NOT_FOUND   127

enum tty_mode { TTY_AUTO, TTY_ALWAYS, TTY_NEVER };

struct serve_config;
struct oci_sandbox;

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
        bool allow_unverified_exec; /* run without the exec tracer where ptrace is refused (weaker tier) */
        bool approve_interactive;   /* ask on the controlling terminal for "ask" rules (cordon run) */
        unsigned debug_disable;     /* DEBUG_OFF_*: layers switched off (tests only, --debug-unsafe) */
        /* `cordon sandbox create`: no command; a detached sentry serves runs
         * (sentry/sandbox.h). NULL for `cordon run`. */
        const struct serve_config *serve;
        /* `cordon oci`: the container's identity, hostname, rlimits and
         * seccomp profile (sentry/oci-sandbox.h); NULL otherwise. */
        const struct oci_sandbox *oci;
};

/* `cordon oci VERB ...`, or the program run as `cordon-oci`: runc's command
 * line (sentry/oci-runtime.c); argv[0] is the program or "oci". */
int sentry_oci(int argc, char **argv);

/* `cordon sandbox VERB ...` (sentry/sandbox.c): returns the exit status. */
int sentry_sandbox(int argc, char **argv);

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
 * in place of the SC_F_PATH_FAST_NOASK ones. */
size_t sentry_syscall_select_rows(bool trap_paths, bool trap_writes, struct syscall_entry *ret, size_t size);

/* `cordon check`: prints what this host supports; returns 0 when every
 * layer `cordon run` requires is there, 1 otherwise. */
int sentry_check(bool json);

/* Whether this host lets the sentry trace the sandbox's exec events
 * (sentry/exectrace.c): 0 or -errno from PTRACE_SEIZE. */
int exectrace_probe(void);

/* `cordon syscalls`: prints the table. */
void sentry_print_syscalls(void);
