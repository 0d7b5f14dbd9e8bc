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

/* `cordon sandbox VERB ...` (client.c): returns the exit status. */
int sentry_sandbox(int argc, char **argv);
