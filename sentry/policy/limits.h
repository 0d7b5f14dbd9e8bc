/* sentry/ private: resource limits as requested (policy, command line),
 * the host's admission policy, and the sandbox's state directory. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "sentry/policy/policy.h"

#define EXIT_QUOTA   3   /* a request over the host's admission limits */
#define EXIT_TIMEOUT 124 /* the sandbox reached its timeout or expiry (as timeout(1)) */

#define DEFAULT_ADMISSION_FILE "/etc/cordon/admission.json"

/* Each POLICY_UNSET (-1) when not requested. */
struct run_limits {
        int64_t memory_bytes, cpu_millis, disk_bytes, max_processes, max_open_files, timeout_ms;
        time_t expires_at; /* (time_t)-1: none */
};

void run_limits_unset(struct run_limits *l);
/* Folds the policy's limits into l: where both give a value the stricter wins. */
void run_limits_merge_policy(struct run_limits *l, const struct policy *p);

/* "512M", "1G", "1.5GiB", "4096" (bytes); binary multiples. 0 or -EINVAL. */
int parse_size(const char *s, int64_t *ret);
/* "30s", "500ms", "2m", "1h", "45" (seconds). 0 or -EINVAL. */
int parse_duration_ms(const char *s, int64_t *ret);
/* "1.5" CPUs -> 1500 millis. 0 or -EINVAL. */
int parse_cpus(const char *s, int64_t *ret);
/* One limit option of `run` and `sandbox create` into l: opt is 'M'
 * (--memory), 'c' (--cpus), 'P' (--pids), 'N' (--nofile) or 'D' (--disk).
 * On a bad value prints which and what was expected; -EINVAL. */
int limits_option(char opt, const char *arg, struct run_limits *l);

struct admission {
        const char *origin; /* the file, for messages */
        int64_t memory_bytes, cpu_millis, disk_bytes, max_processes, max_open_files, timeout_ms;
        int64_t max_sandboxes;
};

/* Loads an admission file. path NULL: the default file, which may be absent
 * (no host-wide limits). 0, or -errno with *ret_error naming the file and key. */
int admission_load(const char *path, struct admission *ret, char **ret_error);
/* Checks l against the maxima; fills unset limits with the maxima (a host
 * that caps memory caps every sandbox). 0, or -EDQUOT with *ret_error naming
 * the limit, the value and the maximum. */
int admission_apply(const struct admission *a, struct run_limits *l, char **ret_error);

/* --- state --- */

/* /run/cordon for root; $XDG_RUNTIME_DIR/cordon or /tmp/cordon-UID otherwise;
 * or what --root set. */
const char *state_root(void);
/* true unless --root chose another directory than the default */
bool state_root_is_default(void);
/* --root DIR: where sandboxes' state lives from now on (absolute; short
 * enough for the control sockets under it). 0, or -errno with a message. */
int state_set_root(const char *dir, char **ret_error);
/* Under the admission lock: counts live sandboxes, refuses (-EDQUOT with
 * *ret_error) beyond max_sandboxes (<0: no maximum), else creates the
 * sandbox's state directory and takes its lock. Returns the lock fd (held
 * for the sandbox's life), or -errno. */
int state_admit(const char *id, int64_t max_sandboxes, char **ret_error);
/* Writes state.json in the sandbox's directory (replaced atomically). */
int state_write(const char *id, const char *json);
/* Removes the sandbox's state directory and drops its claim. */
int state_remove(const char *id);
/* The two halves of state_remove, for a teardown that removes the
 * directory early (beside init's exit: ext4 makes a directory's removal
 * cost a few hundred microseconds) and keeps the claim, which alone tells
 * gc that the sandbox's groups are still in use, until they are gone. */
int state_remove_dir(const char *id);
void state_drop_claim(const char *id);
/* `cordon gc`: removes what crashed sentries left: state directories whose
 * lock nobody holds, their cgroups, and cordon cgroups with no live
 * sandbox. Never touches a live sandbox. Prints what it removed unless
 * quiet. Returns the number of things removed, or -errno. */
int state_gc(bool quiet);

/* a fresh sandbox id: 16 hex digits */
void sandbox_new_id(char ret[17]);
