/* The sandbox room's private declarations (sentry/sandbox/ only; the rest
 * of cordon uses sandbox.h): what the room's files share among themselves. */
#pragma once

#include "sentry/sandbox/sandbox.h"

/* protocol.c: a JSON string of n bytes that may not be UTF-8 (never
 * NULL). */
json_t *json_text(const char *s, size_t n);
/* {"error": "..."} */
json_t *error_reply(const char *fmt, ...) _printf_(1, 2);
/* Sends {"error": "..."} on conn. */
void control_reply_error(int conn, const char *fmt, ...) _printf_(2, 3);
/* The same with "code" (SANDBOX_ERR_*, sandbox.h): what the HTTP API maps to
 * its status; the CLI prints the text alone. */
void control_reply_error_code(int conn, const char *code, const char *fmt, ...) _printf_(3, 4);

/* confined.c: the calling thread enters the view as the sandbox's user, no
 * capability. */
int xfer_confine(const struct fs_context *ctx);
/* open(2) inside the confined thread's view, never through a magic link. */
int xfer_open(const char *path, int flags, mode_t mode);

/* Transfers (transfer.c): run in a thread confined to the view as the
 * sandbox's user; each answers on conn and closes it and the fd. */
struct xfer {
        struct sandbox_state *st;
        int conn;
        int fd;           /* the client's local file, or -1 */
        char *op;         /* put, get, ls, snapshot */
        char *path;       /* in the view */
        int mode;         /* put: file mode */
        int64_t size;     /* put: the bytes the client said it sends (a stream's), or -1: its end is the file's */
        char *extra_json; /* snapshot: policy and metadata to store */
        bool progress;    /* snapshot: the client shows progress (its stderr is a terminal) */
        int upper_fd;     /* snapshot of a template root: its overlay's upper directory; else -1 */
        int done_fd;      /* the result goes here too, as one JSON line (an event) */
        /* put from a stream of unknown length (a pipe, a terminal): the
         * client confirms its end, so that a client killed with its
         * producer (Ctrl-C) is told from the stream's real end */
        bool confirm_end;
};
int xfer_start(struct xfer *x); /* takes x */
int xfer_active(void);
/* events.c: a bounded copy of an event's fields with credential-like
 * values masked; whether a field name is credential-like. */
#define EVENT_MAX_DEPTH  16
#define EVENT_MAX_STRING 4096
#define EVENT_MAX_ITEMS  1024
json_t *event_sanitize(json_t *v);
bool event_secret_key(const char *k);

/* The detached sentry's state: serve.c makes it and runs the loop;
 * runs.c, run-output.c, meta.c, approve.c and events.c work on it. */
#define MAX_RUNS        1024 /* run records kept per sandbox */
#define MAX_ACTIVE_RUNS 64   /* runs alive at once */
#define MAX_CONNS       32   /* clients that have not yet sent their request */
#define EVENT_LINE_MAX  4096 /* output longer than this without a newline is split */

/* An attached run's stdout or stderr: the run writes into a pipe the
 * sentry reads (its lines become events, as a detached run's do), and the
 * sentry passes the bytes on into a pipe whose other end the client holds
 * and copies to its own stream. The sentry's ends are non-blocking: a slow
 * client holds back only its own run (the pipe fills and the run waits),
 * never the serve loop. A run with a terminal: stream 0 reads the pty's
 * master (the terminal's output, recorded as "tty" events) and stream 1
 * carries the client's input from its pipe into the master (not recorded:
 * a terminal echoes what is typed, and that echo is in stream 0). */
struct stream {
        int in, to;
        int run_end; /* a run's output: the sentry's copy of the pipe's write end, until the run's status (-1) */
        char buf[16384];
        size_t off, len;
        char line[EVENT_LINE_MAX];
        size_t line_len;
};

struct run_rec {
        int num;                /* the run's id is "r<num>" */
        struct stream *streams; /* [2]: stdout, stderr of an attached run; NULL otherwise */
        json_t *argv;
        bool detached, running, timed_out, cancelled;
        bool cgroup;      /* the run has its own control group (cgroup_run_create) */
        bool cgroup_left; /* it ended, but its group could not be removed yet */
        bool tty;         /* streams[0] is the pty master's output, streams[1] the client's input into it */
        pid_t pid;        /* in the sandbox's pid namespace; 0 until init says */
        int conn;         /* the waiting client, or -1 */
        int log_in, log_fd;
        int64_t log_bytes;
        bool log_truncated;
        char line[EVENT_LINE_MAX]; /* a detached run's output line being assembled */
        size_t line_len;
        int output_events;
        int timer;
        int status;
        time_t started, ended;
        int64_t started_seq; /* the seq of its run_started event: none of its events comes before */
        int hold_wr;         /* OCI create: writing a byte releases the held run's exec (op "start"); -1 none */
};

/* JSON lines from a pipe, each handed to fn; a line longer than the
 * buffer is dropped. */
struct line_reader {
        int fd;
        char buf[8192];
        size_t len;
};

struct serve {
        char id[17];
        int dirfd;
        int listen_fd;
        int events_fd;
        int64_t seq;
        int64_t events_bytes, events_dropped;
        unsigned events_capped;   /* event classes whose share of the file is used up (events.c) */
        bool audit_full;          /* the audit share is: the gate refuses new connections (events.c) */
        bool events_dirty;        /* written, not yet synced (event_sync) */
        bool state_durable;       /* sync events and meta.json to the disk (not runtime state) */
        struct line_reader audit; /* the egress gate's audit lines */
        int audit_wr;
        struct line_reader done; /* transfer threads' results */
        int done_wr;
        int appr_wake_rd, appr_wake_wr; /* approvals queued events (approvals_take_events) */
        json_t *snapshots;
        int ready_fd;
        char *policy_text;
        json_t *policy_json; /* policy_text parsed once, for meta.json */
        bool meta_dirty;     /* runs changed since meta.json was written (meta_write_soon) */
        int64_t meta_due_ms; /* then written by this time (CLOCK_MONOTONIC, ms) */
        const char *snapshot, *snapshot_digest;
        bool progress; /* restore progress on ready_fd for a client on a terminal */
        time_t created, expires;
        const char *status; /* running, paused, terminating */
        bool terminate;
        const char *end_reason; /* terminated, expired, killed */
        struct run_rec runs[MAX_RUNS];
        int n_runs;
        int live_from;            /* runs before it hold no fd the serve loop polls (they never will again) */
        int next_num, next_procs; /* run next_num's group, made ahead: its cgroup.procs (next_num 0: none) */
        bool oci;                 /* `cordon oci`: see serve_config */
        int main_run;             /* the container's process (its num), 0: none yet */
        int main_status;          /* its wait status, once it ended */
        bool main_ended;
        int conns[MAX_CONNS];
        uid_t owner;
        struct ports *ports; /* the port forwarder (ports.c); NULL: none */
};

/* events.c: the event log. A time as events and meta.json write it
 * ("YYYY-MM-DDTHH:MM:SSZ"); appends an event (steals ev, may be NULL) with
 * the next sequence number; event_sync makes the appended ones durable. */
void event_iso_time(time_t t, char buf[32]);
void event_append(struct serve *srv, const char *type, json_t *ev);
void event_sync(struct serve *srv);

/* meta.c: a run's record, the sandbox's metadata (live: with its current
 * use), meta.json written from it (now, or soon), and inspect's reply
 * (which fits one control message). */
json_t *meta_run_json(const struct run_rec *r);
json_t *meta_json(const struct sandbox_state *st, bool live);
void meta_write(struct sandbox_state *st);
/* A run's start or end: meta.json written within META_SOON_MS, with
 * whatever else changed by then (at once for an OCI container). The loop
 * waits at most meta_wait_ms (-1: nothing due) and calls meta_write_due. */
#define META_SOON_MS 50
void meta_write_soon(struct sandbox_state *st);
int meta_wait_ms(const struct serve *srv);
void meta_write_due(struct sandbox_state *st);
json_t *meta_inspect_json(struct sandbox_state *st);

/* runs.c: the run records (by number, by id "rN"), a signal for a run,
 * the exec request, a run's end, the run a sandbox process belongs to
 * ("" when none), a message on a waiting exec client's connection, and one
 * message from init (true when one was read). */
struct run_rec *run_find(struct serve *srv, int num);
struct run_rec *run_find_id(struct serve *srv, const char *id);
void run_kill(struct sandbox_state *st, struct run_rec *r, int sig);
void run_exec(struct sandbox_state *st, int conn, json_t *req, int fds[EXEC_MAX_FDS]);
void run_ended(struct sandbox_state *st, struct run_rec *r, int status);
void run_group_prepare(struct sandbox_state *st);
void run_of_pid(struct serve *srv, pid_t pid, char *buf, size_t size);
void run_read_conn(struct sandbox_state *st, struct run_rec *r);
bool run_read_init(struct sandbox_state *st);

/* run-output.c: a detached run's log pipe drained; an attached run's stream
 * k pumped (true while it has something left to do), closed, or flushed at
 * the run's exit. */
void run_drain_log(struct serve *srv, struct run_rec *r);
bool stream_pump(struct serve *srv, struct run_rec *r, int k);
void stream_close(struct serve *srv, struct run_rec *r, int k);
void streams_flush(struct serve *srv, struct run_rec *r);

/* approve.c: the approver's queued events into the event log; an approve
 * or deny request. */
void approve_drain(struct sandbox_state *st);
void approve_decide(struct sandbox_state *st, int conn, json_t *req, bool approve);

/* procs.c: the "ps" and "signal" requests (the sandbox's processes, read
 * from its own /proc; a signal to one of them). */
void procs_request(struct sandbox_state *st, int conn, json_t *req);
/* client-procs.c: `sandbox ps ID ...`, `sandbox kill ID ...` (argv[0] is
 * the verb); cordon's exit code. */
int client_ps(int argc, char **argv);
int client_kill(int argc, char **argv);

/* ports.c: the forwarder of exposed ports. ports_begin (before the sentry
 * confines itself) starts its thread in the sandbox's network namespace;
 * ports_expose listens at a host address for a port inside (the record, or
 * -errno with why and an error code); ports_request serves "port", "ports"
 * and "unport"; ports_stop ends it all (accepts NULL ports). */
struct ports;
int ports_begin(struct serve *srv, int netns_fd);
int ports_expose(struct serve *srv, int port, const char *listen, json_t **ret, char *why, size_t size,
                 const char **ret_code);
json_t *ports_json(struct serve *srv);
int ports_close(struct serve *srv, int port);
void ports_request(struct sandbox_state *st, int conn, json_t *req);
void ports_stop(struct serve *srv);
int ports_expose_policy(struct sandbox_state *st, json_t **ret, char *why, size_t size);
/* client-procs.c: `sandbox port ID ...` */
int client_port(int argc, char **argv);

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
/* The limits a snapshot's sandbox ran under (its cordon/sandbox.json's
 * meta.limits), each POLICY_UNSET where none is recorded: 0, or -errno
 * (not a snapshot of ours, unreadable). Call on the main thread (it loads
 * libarchive). */
int snapshot_recorded_limits(const char *path, struct run_limits *ret);
/* A template root's digest as snapshots record it: the policy's
 * source.digest, else computed from the template's path. -ENOENT: the root
 * is no template. Call from an unconfined thread. */
int snapshot_template_digest(const struct sandbox_state *st, char ret[FS_DIGEST_SIZE], char *err, size_t errsize);

/* The client verbs (client*.c). client-common.c: the usage text; a
 * connection to sandbox id's control socket (what is wrong is printed); one
 * request (steals req) and its reply, with any {"progress": ...} messages
 * before it handed to on_progress (may be NULL): 0, 1 for an error reply
 * (printed), -1 for no answer. */
void client_usage(FILE *f);
int client_connect(const char *id, int *ret);
int client_request_progress(const char *id, json_t *req, const int *fds, size_t n_fds, void (*on_progress)(json_t *p),
                            json_t **ret);
int client_request(const char *id, json_t *req, const int *fds, size_t n_fds, json_t **ret);
/* client-exec.c: `sandbox exec ID ...` and `sandbox events ID ...` (argv[0]
 * is the verb); cordon's exit code. */
int client_exec(int argc, char **argv);
int client_events(int argc, char **argv);

/* serve.c: the front sandbox_spawn_sentry hands the core for cfg (the
 * serve loop and its state directory's files). */
struct sentry_front serve_front(const struct serve_config *cfg);
