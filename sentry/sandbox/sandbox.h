/* sentry/ private: long-lived sandboxes (`cordon sandbox ...`): the
 * detached sentry's serve loop (control.c), the init side of runs
 * (initd.c), file transfer and snapshots (transfer.c, snapshot.c), and the
 * client verbs (sandbox.c). */
#pragma once

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/util.h"
#include "sentry/sentry-internal.h"

/* MSG_EXEC's body: cwd, then argc arguments, then envc "K=V" entries, each
 * NUL-terminated, in strings[0..len). */
#define EXEC_MAX_STRINGS 61440
#define EXEC_TTY         1 /* 0-2 are a terminal: the run takes it as its controlling one */
#define EXEC_HOLD        2 /* fd 3 is a pipe: the run waits for a byte on it before its exec (OCI create/start) */
#define EXEC_MAX_FDS     8 /* stdin, stdout, stderr, the hold pipe, then n_preserve fds */
#define EXEC_CGROUP      4 /* the last fd: the run's own group's cgroup.procs, to move into before anything runs */
struct exec_msg {
        uint32_t type; /* MSG_EXEC */
        int32_t run;
        uint32_t flags;
        uint32_t argc;
        uint32_t envc;
        uint32_t n_preserve; /* fds after stdio (and the hold pipe) that become the run's 3, 4, ... */
        uint32_t len;
        char strings[EXEC_MAX_STRINGS];
};

/* What `sandbox create` hands the detached sentry. */
struct serve_config {
        int ready_fd;                /* "READY <id>\n" is written here once the sandbox serves */
        const char *policy_text;     /* the policy as given, kept in the state directory */
        const char *snapshot;        /* --from-snapshot: an archive whose layer/ becomes the writable layer's content */
        const char *snapshot_digest; /* "sha256:<hex>" it must match */
        /* `cordon oci`: the run marked "main" is the container's process:
         * when it ends the sandbox ends, and the sentry exits with its status
         * (code, or 128+signal), which is what conmon and containerd's shim
         * wait for on the pid-file's pid */
        bool oci;
        bool progress; /* the creating client's stderr is a terminal: PROGRESS lines on ready_fd */
};

struct serve;

/* Forks the detached sentry for o (o->serve = cfg; cfg->ready_fd is filled
 * in here; new_session: setsid, so no terminal reaches it) with its stderr
 * on memfd, and waits for its READY line. 0 with *ret_pid and ret_id (16
 * hex digits); -ECHILD when it ended during set-up (*ret_pid reaped, its
 * wait status in *ret_status, its messages in memfd); other -errno. */
int sandbox_spawn_sentry(struct run_options *o, struct serve_config *cfg, bool new_session, int memfd, pid_t *ret_pid,
                         char ret_id[static 17], int *ret_status);

/* Before the clone: the state directory's files (policy.json, meta.json,
 * events.jsonl, the control socket) and the audit pipe. */
int serve_prepare(const struct serve_config *cfg, const char *id, const struct run_limits *l, struct serve **ret);
/* The write end of the pipe the egress gate audits into (owned by srv). */
int serve_audit_fd(struct serve *srv);
/* The (non-blocking) pipe the approvals wake the serve loop through when
 * they queue events (owned by srv). */
int serve_approvals_wake_fd(struct serve *srv);
/* After MSG_START: serves the control socket until terminate or expiry;
 * returns once init is gone. */
int serve_loop(struct sandbox_state *st);
void serve_free(struct serve *srv);

/* The state directory of sandbox id (valid hex id or -EINVAL). */
int sandbox_dir(const char *id, char *buf, size_t size);
bool sandbox_id_valid(const char *id);

/* Control protocol: one JSON object per SOCK_SEQPACKET message. */
#define CONTROL_MAX_MSG 65536
int control_send(int fd, json_t *msg, const int *fds, size_t n_fds); /* steals msg */
/* 1 with *ret set, 0 on EOF, -errno. */
int control_recv(int fd, json_t **ret, int *fds, size_t max_fds);

/* Transfers (transfer.c): run in a thread confined to the view as the
 * sandbox's user; each answers on conn and closes it and the fd. */
struct xfer {
        struct sandbox_state *st;
        int conn;
        int fd;           /* the client's local file, or -1 */
        char *op;         /* put, get, ls, snapshot */
        char *path;       /* in the view */
        int mode;         /* put: file mode */
        char *extra_json; /* snapshot: policy and metadata to store */
        bool progress;    /* snapshot: the client shows progress (its stderr is a terminal) */
        int upper_fd;     /* snapshot of a template root: its overlay's upper directory; else -1 */
        int done_fd;      /* the result goes here too, as one JSON line (an event) */
};
int xfer_start(struct xfer *x); /* takes x */
int xfer_active(void);
/* The calling thread enters the view as the sandbox's user, no capability. */
int xfer_confine(const struct fs_context *ctx);
/* open(2) inside the confined thread's view, never through a magic link. */
int xfer_open(const char *path, int flags, mode_t mode);
/* events.c: a bounded copy of an event's fields with credential-like
 * values masked; whether a field name is credential-like. */
#define EVENT_MAX_DEPTH  16
#define EVENT_MAX_STRING 4096
#define EVENT_MAX_ITEMS  1024
json_t *event_sanitize(json_t *v);
bool event_secret_key(const char *k);

/* A JSON string of n bytes that may not be UTF-8 (never NULL). */
json_t *json_text(const char *s, size_t n);
/* {"error": "..."} */
json_t *error_reply(const char *fmt, ...) _printf_(1, 2);
/* snapshot-entry.c: the writable layer's directories as the view shows them
 * and their names in a snapshot archive. */
struct snapshot_layer_dir {
        const char *view, *name;
};
#define SNAPSHOT_LAYER_DIRS 5
extern const struct snapshot_layer_dir snapshot_layer_dirs[SNAPSHOT_LAYER_DIRS];
/* "layer/tmp/a/b" -> "tmp/a/b" (relative to the view's root); NULL: not
 * part of the layer, or the layer directory itself. */
char *snapshot_view_name(const char *arc);
/* A template root's changes in a snapshot: "upper/..." (snapshot-entry.c
 * describes the names), deletions as OCI-style whiteout markers. */
#define SNAPSHOT_UPPER    "upper"
#define SNAPSHOT_WHITEOUT ".wh."
#define SNAPSHOT_OPAQUE   ".wh..wh..opq"
enum snapshot_action {
        SNAPSHOT_ACT_WRITE = 1, /* write the entry at name: a layer directory's content */
        SNAPSHOT_ACT_UPPER,     /* write the entry at name: a template root's change, on the root's own mount */
        SNAPSHOT_ACT_WHITEOUT,  /* remove name (and what is beneath it) from the view */
        SNAPSHOT_ACT_OPAQUE,    /* remove everything beneath the directory name */
};
struct snapshot_plan {
        enum snapshot_action action;
        char *name;     /* relative to the view's root, no ".." */
        char *hardlink; /* a hard link's target, likewise (same area as name); else NULL */
};
/* What a restore does with archive entry e: the action (> 0) with *ret
 * filled (free with snapshot_plan_done); 0, leaves it out (outside layer/
 * and upper/, of a type a snapshot does not hold, or a hard link to outside
 * its area), *ret untouched; -EINVAL, refuses the archive (a ".." in a name,
 * a malformed marker). */
struct archive_entry;
int snapshot_entry_plan(struct archive_entry *e, struct snapshot_plan *ret);
void snapshot_plan_done(struct snapshot_plan *p);

/* snapshot.c: writes the archive to x->fd; the reply (digest or error). */
json_t *snapshot_write(struct xfer *x);
/* Restores a snapshot's layer into the view (create --from-snapshot), as
 * the sandbox's user; synchronous. With progress_fd >= 0, writes lines
 * "PROGRESS <bytes read> <archive size> <entries>\n" there as it goes. */
int snapshot_restore(struct sandbox_state *st, int archive_fd, const char *want_digest, int progress_fd, char *err,
                     size_t errsize);
/* A template root's digest as snapshots record it: the policy's
 * source.digest, else computed from the template's path. -ENOENT: the root
 * is no template. Call from an unconfined thread. */
int snapshot_template_digest(const struct sandbox_state *st, char ret[FS_DIGEST_SIZE], char *err, size_t errsize);

/* `cordon sandbox VERB ...` (client.c): returns the exit status. */
int sentry_sandbox(int argc, char **argv);
