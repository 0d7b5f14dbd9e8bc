/* sentry/oci/ private: the runtime half of the room, runc's command line on
 * top of the parser half (sentry/oci/oci.h). Its files, each calling only
 * files listed below it:
 *   runtime.c    the command line: global options, usage, version, and the
 *                dispatch to the verbs (sentry_oci)
 *   create.c     create and run: config.json made into a sandbox, its
 *                sentry started, the container's process held until start
 *   exec.c       exec: another process in a running container
 *   update.c     update: new cgroup limits for a live container
 *   lifecycle.c  start, kill, delete, pause, resume
 *   query.c      state, list, ps, features, spec
 *   hooks.c      the OCI hooks, run in the runtime's namespaces
 *   container.c  a container's state directory (--root/ID): open, status,
 *                state document, terminate, remove; small file helpers
 *   request.c    talking to a container's sentry over its control socket
 *   log.c        the global options, and errors, warnings and debug lines
 *                (stderr and --log, in runc's formats)
 * The parser half knows nothing of containers and never includes this. */
#pragma once

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/util.h"
#include "sentry/oci/oci.h"
#include "sentry/sandbox/sandbox.h"

#define OCI_DEFAULT_ROOT "/run/cordon-oci"
#define OCI_SPEC_VERSION "1.1.0"

/* ---- log.c ---- */

/* The global options: runtime.c's command line sets them, the verbs read
 * them. */
struct oci_globals {
        const char *root;
        const char *log_path;
        bool log_json;
        bool debug;
        bool systemd_cgroup;
        int log_fd;
};
extern struct oci_globals oci_G;

/* Now, as RFC 3339 with nanoseconds (the log's and state's times). */
void oci_now_rfc3339(char *buf, size_t size);
/* An error: to stderr and the log. The caller exits non-zero. */
_printf_(1, 2) void oci_error(const char *fmt, ...);
/* To the log; to stderr too with --debug. */
_printf_(1, 2) void oci_warn(const char *fmt, ...);
/* With --debug only: to stderr and the log. */
_printf_(1, 2) void oci_debug(const char *fmt, ...);

/* ---- request.c ---- */

/* One request (req is stolen) and its reply in *ret (may be NULL), fds
 * sent with it and up to max_fds back in ret_fds. 0, or -errno with the
 * error said (what names the request for the message). */
int oci_sentry_request(const char *sid, const char *what, json_t *req, const int *fds, size_t n_fds, json_t **ret,
                       int *ret_fds, size_t max_fds);
/* The terminal's master to --console-socket path, as runc sends it. */
int oci_send_console(const char *path, int master);
/* A NULL-terminated array of strings as a JSON array (NULL: empty). */
json_t *oci_strv_json(char **v);
/* The exec request for pr: main_run holds it before its exec (create). */
json_t *oci_process_request(const struct oci_process *pr, bool main_run, bool tty);
/* Whether a container's runs each take their own identity from their
 * request (its process.user is not root: oci_sandbox.runs_switch), which
 * oci_request_identity then gives them all, the container's process too. */
static inline bool oci_runs_switch(const struct oci_process *p)
{
        return p->user.uid != 0;
}
/* The run's user, additional gids and five capability sets (bounding,
 * effective, permitted, inheritable, ambient) into req. */
void oci_request_identity(json_t *req, uint32_t uid, uint32_t gid, const uint32_t *gids, size_t n_gids,
                          const uint64_t caps[5]);
/* A run's word on its set-up (initd.c exec_run), read from the report
 * socket fd (the request's "report") once the sentry has handed it the
 * run and, for create, the prestart and createRuntime hooks have run (a
 * hook may put the command in place, as runc's init looks for it after
 * them): told so by a byte, it looks for its command and says "" when it
 * is ready (and, created, waits for `start`), else why it cannot run (its
 * command not found or not executable, its user or cwd refused), which
 * fails the create or exec as runc's and crun's do. EOF without a word: it
 * ended during its set-up. 0 or -errno (said, after what). */
int oci_await_setup(int fd, const char *what);
/* stdin, stdout, stderr (a closed one as nul) and the preserved fds. */
size_t oci_client_fds(int fds[EXEC_MAX_FDS], int nul, int preserve);
/* Catches SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 for a verb
 * that waits: the last one caught is in oci_pending_signal, for it to
 * forward (and reset to 0). */
void oci_catch_signals(void);
/* A terminal run or exec in the foreground without --console-socket, as
 * runc's: the caller's terminal (stdin, when it is one) in raw mode and its
 * size on master (SIGWINCH followed), stdin copied in and master's output
 * to stdout, each signal oci_catch_signals caught handed to forward, until
 * master's other side is closed (the process ended); the caller's terminal
 * then restored. oci_terminal_size: the size alone, before the process
 * starts. */
void oci_relay_terminal(int master, void (*forward)(int sig, void *ctx), void *ctx);
void oci_terminal_size(int master);
extern volatile sig_atomic_t oci_pending_signal;

/* ---- container.c ---- */

/* The small helpers (a file read whole: common/file.h): a --pid-file
 * replaced atomically; a pid's start time (0: gone); whether
 * an id may name a container (runc's characters). */
int oci_write_pid_file(const char *path, pid_t pid);
unsigned long long oci_pid_start_time(pid_t pid);
bool oci_container_id_valid(const char *id);

struct container {
        char *id;
        int dirfd; /* --root/ID, flocked */
        json_t *state;
};

void oci_container_close(struct container *c);
/* -ENOENT: no such container, for the caller to say. */
int oci_container_open(const char *id, struct container *ret);
int oci_container_save(struct container *c);
/* state.json's string member key, or NULL. */
const char *oci_st_str(const struct container *c, const char *key);
/* Whether the container's sentry is alive (its pid with the start time
 * recorded), and its sandbox's meta.json (NULL: none). */
bool oci_container_alive(const struct container *c);
json_t *oci_container_meta(const struct container *c);
/* created, running, paused or stopped */
const char *oci_container_status(const struct container *c);
/* The OCI state document, as `state` prints it and hooks read it. */
json_t *oci_state_doc(const struct container *c, const char *status);
/* Ends the container's sentry (bounded). 0, or -errno said. */
int oci_container_terminate(struct container *c);
/* Removes --root/ID. */
int oci_container_remove(struct container *c);
/* oci_container_open(), saying "does not exist" for a verb. */
int oci_lookup(const char *id, struct container *c);
/* For a verb that takes one container id and nothing else (start, state,
 * pause, resume): 0 with *c open, or the exit status, the error said. */
int oci_lookup_one(int argc, char **argv, const char *verb, struct container *c);

/* ---- pod.c ---- */

/* The CRI annotations containerd gives every container of a pod. */
#define OCI_CRI_TYPE_ANNOTATION    "io.kubernetes.cri.container-type"
#define OCI_CRI_SANDBOX_ANNOTATION "io.kubernetes.cri.sandbox-id"

/* The namespaces of s given by path, checked and chosen (sb->join): a
 * network namespace an engine prepared (never the host's, nor one another
 * live container of --root joined); for a pod's app container (the CRI
 * annotations) its pod sandbox container's network, ipc and uts, the pod's
 * uid range and the pod's policy annotation (set in s). What cannot be
 * joined fails, naming the field and the value. *ret_record: what the
 * container's state keeps of it. Allocates sb->join's paths (freed by
 * oci_pod_done). 0 or -errno (said). */
int oci_pod_prepare(struct oci_spec *s, struct oci_sandbox *sb, json_t **ret_record);
void oci_pod_done(struct oci_sandbox *sb);

/* ---- hooks.c ---- */

/* A kind of hook of the config, as the state keeps it. */
json_t *oci_hooks_json(const struct oci_spec *s, enum oci_hook_kind k);
/* Runs the container's hooks under key (kind names them in messages) with
 * its state document for status on stdin. 0, or -errno said. */
int oci_container_hooks(struct container *c, const char *kind, const char *key, const char *status);
/* The startContainer hooks kept in c's state, each run in the container
 * (its namespaces and confinement, as an exec), with c's state ("created")
 * on stdin, before its process is let go. 0, or -errno (said). */
int oci_container_start_hooks(struct container *c);

/* ---- the verbs: argv[0] is the verb; each returns the exit status ---- */

/* create.c: run is create + start, then (without --detach) wait and delete */
int oci_cmd_create(int argc, char **argv, bool run);
/* exec.c */
int oci_cmd_exec(int argc, char **argv);
/* update.c; and linux.resources as what sentry/cgroup/ writes beyond the
 * policy's limits (fields cgroup v2 has no file for warned about and
 * cleared; ret's lists borrowed from res), and as the state keeps it (a
 * LinuxResources document, which oci_resources_parse reads back) */
int oci_cmd_update(int argc, char **argv);
struct cg_oci;
void oci_resources_cg(const struct oci_resources *res, struct cg_oci *ret);
json_t *oci_resources_json(const struct oci_resources *r);
/* lifecycle.c: oci_simple_op is pause or resume (op) */
int oci_cmd_start(int argc, char **argv);
int oci_cmd_kill(int argc, char **argv);
int oci_cmd_delete(int argc, char **argv);
int oci_simple_op(int argc, char **argv, const char *op);
/* query.c */
int oci_cmd_state(int argc, char **argv);
int oci_cmd_list(int argc, char **argv);
int oci_cmd_ps(int argc, char **argv);
int oci_cmd_features(void);
int oci_cmd_spec(int argc, char **argv);
