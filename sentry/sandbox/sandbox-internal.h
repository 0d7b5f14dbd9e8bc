/* The sandbox room's private declarations (sentry/sandbox/ only; the rest
 * of cordon uses sandbox.h): what the room's files share among themselves. */
#pragma once

#include "sentry/sandbox/sandbox.h"

/* protocol.c: a JSON string of n bytes that may not be UTF-8 (never
 * NULL). */
json_t *json_text(const char *s, size_t n);
/* {"error": "..."} */
json_t *error_reply(const char *fmt, ...) _printf_(1, 2);

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
        char *extra_json; /* snapshot: policy and metadata to store */
        bool progress;    /* snapshot: the client shows progress (its stderr is a terminal) */
        int upper_fd;     /* snapshot of a template root: its overlay's upper directory; else -1 */
        int done_fd;      /* the result goes here too, as one JSON line (an event) */
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
