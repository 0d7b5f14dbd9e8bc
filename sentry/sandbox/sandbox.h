/* The sandbox room's public face: long-lived sandboxes (`cordon sandbox
 * ...`). What the rest of cordon may use of the room is declared here and
 * nowhere else; everything else of the room is private to it
 * (sandbox-internal.h).
 *
 * What the room promises:
 *   - a sandbox outlives its client: `create` forks a detached sentry that
 *     serves the sandbox until terminate or expiry, whether or not any
 *     client is connected;
 *   - its state is on disk under the state root (sandbox_dir: policy.json,
 *     meta.json replaced atomically, events.jsonl, runs/RUN.log), which
 *     `list` and `events` read without asking the sentry;
 *   - every request that reaches the control socket is answered there,
 *     with its reply or {"error": "..."};
 *   - events are bounded (each field, each line, the file) and values of
 *     credential-like fields are masked before anything is written.
 * What it must never do:
 *   - print for people outside the client verbs (client*.c): the sentry's
 *     side answers on the control socket, and what it writes to stderr is
 *     its log (sentry.log; during set-up the memfd the creating client
 *     reads and passes on);
 *   - reach past the sandbox's view in a transfer: put, get, ls and
 *     snapshots run in a thread confined to the view as the sandbox's own
 *     user, and the host side of a transfer is only ever an fd the client
 *     opened itself.
 *
 * It sits above the core (sentry/sentry.h): the core knows it only as the
 * front (struct sentry_front) sandbox_spawn_sentry hands it, and drives
 * init's runs with the set-up channel's MSG_EXEC. */
#pragma once

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/util.h"
#include "sentry/sentry.h"

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

/* Forks the detached sentry for o (o->front: the serve loop, with cfg;
 * cfg->ready_fd is filled
 * in here; new_session: setsid, so no terminal reaches it) with its stderr
 * on memfd, and waits for its READY line. 0 with *ret_pid and ret_id (16
 * hex digits); -ECHILD when it ended during set-up (*ret_pid reaped, its
 * wait status in *ret_status, its messages in memfd); other -errno. */
int sandbox_spawn_sentry(struct run_options *o, struct serve_config *cfg, bool new_session, int memfd, pid_t *ret_pid,
                         char ret_id[static 17], int *ret_status);

/* Control protocol: one JSON object per SOCK_SEQPACKET message. */
#define CONTROL_MAX_MSG 65536
/* A connection to sandbox id's control socket: 0 with *ret, or -errno
 * (-EINVAL for an id that is not one; nothing printed). */
int control_connect(const char *id, int *ret);
int control_send(int fd, json_t *msg, const int *fds, size_t n_fds); /* steals msg */
/* 1 with *ret set, 0 on EOF, -errno. */
int control_recv(int fd, json_t **ret, int *fds, size_t max_fds);

/* The "code" of an error reply, where a client may act on it (the HTTP
 * API's status); replies without one are plain failures. */
#define SANDBOX_ERR_CONFLICT  "conflict"       /* the sandbox's or run's state forbids it (paused, ended) */
#define SANDBOX_ERR_NOT_FOUND "not_found"      /* no such run or approval request */
#define SANDBOX_ERR_QUOTA     "quota_exceeded" /* a per-sandbox limit (runs at once) */
#define SANDBOX_ERR_DENIED    "forbidden"      /* the sandbox's own user may not (a transfer's path) */
#define SANDBOX_ERR_NO_SPACE  "no_space"       /* a put over the sandbox's disk limit (or its disk full) */
#define SANDBOX_ERR_SHORT     "incomplete"     /* a put's stream ended before the length it named */

/* The client calls the command line's verbs are made of, which print
 * nothing (client-common.c), for the HTTP API (sentry/api/) as much as for
 * `cordon sandbox`: */
/* One request (steals req) and its reply, the error replies included
 * ({"error": "...", "code"?}), with any {"progress": ...} messages before it
 * handed to on_progress (may be NULL): 0 with *ret; -ENOENT when there is no
 * sandbox id, -EINVAL when id is not one, other -errno when its sentry does
 * not answer. */
int sandbox_call(const char *id, json_t *req, const int *fds, size_t n_fds, void (*on_progress)(json_t *p, void *data),
                 void *data, json_t **ret);
/* The live sandboxes' metadata (meta.json without the policy), as `list
 * --json` prints it: 0 with *ret (an array). */
int sandbox_list_json(json_t **ret);
/* Terminates sandbox id and waits (30 s at most) until nothing of it is
 * left: 0; -ENOENT when it was not running; -ETIMEDOUT; other -errno with
 * the sentry's reply in *ret_error (malloc'd) where it gave one. */
int sandbox_terminate(const char *id, char **ret_error);
/* Reads a sandbox's event log (events.jsonl) as it grows: each complete
 * line once, a line being written kept until it ends. */
struct event_reader {
        FILE *f;
        char *line, *partial;
        size_t cap, partial_len;
};
/* Opens sandbox id's log: 0, -EINVAL (not an id), -ENOENT (no sandbox). */
int event_reader_open(const char *id, struct event_reader *ret, int *ret_dirfd);
/* The next complete event: 1 with *ret (and its line in *ret_line, valid
 * until the next call), 0 when none is complete yet. */
int event_reader_next(struct event_reader *er, json_t **ret, const char **ret_line);
/* Puts the reader at the first event whose seq is above after, by a binary
 * search on the file (the events' seqs rise by one a line), so a reader
 * resuming near the end reads what it asked for, not the whole log; with
 * *ret_last the last complete event's seq (0: none). 0 or -errno. */
int event_reader_seek(struct event_reader *er, long long after, long long *ret_last);
void event_reader_close(struct event_reader *er);

/* The layers of isolation tier `tier` (policy_tiers) this host lacks, by
 * `cordon check --json`: the number missing (their names, comma-separated,
 * in *ret_missing, malloc'd; NULL when none), or -errno. */
int sandbox_tier_missing(int tier, char **ret_missing);

/* `cordon sandbox VERB ...` (client.c): returns the exit status. */
int sentry_sandbox(int argc, char **argv);
