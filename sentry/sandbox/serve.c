/* The detached sentry of a long-lived sandbox (`cordon sandbox create`):
 * after the usual set-up (run.c) it serves a control socket in the
 * sandbox's state directory until terminate or expiry.
 *
 *   client ── control.sock (SEQPACKET, JSON + SCM_RIGHTS) ──▶ sentry
 *   sentry ── MSG_EXEC (+ the client's stdin/stdout/stderr) ─▶ init ── fork ▶ run
 *   sentry ◀─ MSG_RUN_PID / MSG_RUN_EXIT ───────────────────── init
 *
 * The sentry never forks here (it may be confined against it by then):
 * runs are init's children; file transfers are threads of the sentry
 * confined to the view (transfer.c). The state directory holds policy.json,
 * meta.json (replaced atomically: meta.c), events.jsonl (one JSON object a
 * line, each synced as it is written, with a sequence number that only
 * grows: events.c), the control socket and runs/RUN.log for detached runs.
 *
 * This file: the sentry's state (serve_prepare, serve_free) and its loop
 * (serve_loop): the control socket's connections and the dispatch of their
 * requests, init's messages, the audit and transfer pipes, expiry, and the
 * sandbox's end. Runs: runs.c and run-output.c; approvals: approve.c. */
#include "config.h"

#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#include "common/crypto-dl.h"
#include "common/file.h"
#include "sentry/approvals/approvals.h"
#include "sentry/sandbox/archive-dl.h"
#include "sentry/sandbox/sandbox-internal.h"

static void serve_free(struct serve *srv);

static int serve_prepare(const struct serve_config *cfg, const char *id, const struct run_limits *l, struct serve **ret)
{
        struct serve *srv = xcalloc(1, sizeof(*srv));
        snprintf(srv->id, sizeof(srv->id), "%s", id);
        srv->listen_fd = srv->events_fd = srv->audit.fd = srv->audit_wr = srv->done.fd = srv->done_wr = srv->dirfd = -1;
        srv->appr_wake_rd = srv->appr_wake_wr = -1;
        srv->snapshots = json_array();
        srv->ready_fd = cfg->ready_fd;
        srv->policy_text = xstrdup(cfg->policy_text ? cfg->policy_text : "{}");
        json_error_t jerr;
        srv->policy_json = json_loads(srv->policy_text, 0, &jerr);
        if (!srv->policy_json)
                srv->policy_json = json_null();
        srv->snapshot = cfg->snapshot;
        srv->snapshot_digest = cfg->snapshot_digest;
        srv->oci = cfg->oci;
        srv->progress = cfg->progress;
        srv->status = "starting";
        srv->owner = geteuid();
        for (size_t i = 0; i < MAX_CONNS; i++)
                srv->conns[i] = -1;
        srv->created = time(NULL);
        srv->expires = l->expires_at;
        if (l->timeout_ms > 0) {
                time_t t = srv->created + (time_t)((l->timeout_ms + 999) / 1000);
                if (srv->expires == (time_t)-1 || t < srv->expires)
                        srv->expires = t;
        }
        int r;
        char dir[600];
        if ((r = sandbox_dir(id, dir, sizeof(dir))) < 0)
                goto fail;
        srv->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (srv->dirfd < 0)
                goto fail_errno;
        /* /run/cordon and the like: what the serve loop writes there is
         * not synced (common/file.h says why). A sync per turn of the loop
         * cost each `sandbox exec` 6 to 10 ms where /run is on a disk */
        srv->state_durable = !dir_is_runtime_state(srv->dirfd);
        if (mkdirat(srv->dirfd, "runs", 0700) < 0)
                goto fail_errno;
        {
                _cleanup_close_ int pfd =
                        openat(srv->dirfd, "policy.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (pfd < 0 || (r = write_all(pfd, srv->policy_text, strlen(srv->policy_text))) < 0)
                        goto fail_errno;
        }
        srv->events_fd = openat(srv->dirfd, "events.jsonl",
                                O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (srv->events_fd < 0)
                goto fail_errno;
        int ap[2];
        if (pipe2(ap, O_CLOEXEC) < 0)
                goto fail_errno;
        srv->audit.fd = ap[0];
        srv->audit_wr = ap[1];
        fcntl(srv->audit.fd, F_SETFL, O_NONBLOCK);
        if (pipe2(ap, O_CLOEXEC) < 0)
                goto fail_errno;
        srv->done.fd = ap[0];
        srv->done_wr = ap[1];
        fcntl(srv->done.fd, F_SETFL, O_NONBLOCK);
        /* both ends non-blocking: a full pipe means the loop is woken already */
        if (pipe2(ap, O_CLOEXEC | O_NONBLOCK) < 0)
                goto fail_errno;
        srv->appr_wake_rd = ap[0];
        srv->appr_wake_wr = ap[1];

        /* The control socket: mode 0600 in a 0700 directory of the creating
         * user; and each connection's SO_PEERCRED is checked too. */
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/control.sock", dir) >= sizeof(sa.sun_path)) {
                r = -ENAMETOOLONG;
                goto fail;
        }
        srv->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (srv->listen_fd < 0)
                goto fail_errno;
        mode_t old = umask(0177);
        r = bind(srv->listen_fd, (struct sockaddr *)&sa, sizeof(sa));
        umask(old);
        if (r < 0 || fchmodat(srv->dirfd, "control.sock", 0600, 0) < 0 || listen(srv->listen_fd, 16) < 0)
                goto fail_errno;
        *ret = srv;
        return 0;
fail_errno:
        r = negative_errno();
fail:
        serve_free(srv);
        return r;
}

static int serve_audit_fd(struct serve *srv)
{
        return srv->audit_wr;
}

/* Ports are the sandbox's own network's business: an OCI container's are
 * its engine's (the namespace may be the engine's), so none there. */
static int serve_netns(struct serve *srv, int netns_fd)
{
        int r = srv->oci ? 0 : ports_begin(srv, netns_fd);
        if (r < 0)
                fprintf(stderr, "cordon: cannot start the sandbox's port forwarder in its network namespace: %s\n",
                        strerror(-r));
        return r;
}

static int serve_approvals_wake_fd(struct serve *srv)
{
        return srv->appr_wake_wr;
}

static void serve_free(struct serve *srv)
{
        if (!srv)
                return;
        ports_stop(srv);
        if (srv->next_num > 0)
                close(srv->next_procs);
        for (int i = 0; i < srv->n_runs; i++) {
                struct run_rec *r = &srv->runs[i];
                json_decref(r->argv);
                if (r->conn >= 0)
                        close(r->conn);
                if (r->log_in >= 0)
                        close(r->log_in);
                if (r->log_fd >= 0)
                        close(r->log_fd);
                if (r->timer >= 0)
                        close(r->timer);
                if (r->hold_wr >= 0)
                        close(r->hold_wr);
                for (int k = 0; r->streams && k < 2; k++) {
                        if (r->streams[k].in >= 0)
                                close(r->streams[k].in);
                        if (r->streams[k].to >= 0)
                                close(r->streams[k].to);
                        if (r->streams[k].run_end >= 0)
                                close(r->streams[k].run_end);
                }
                free(r->streams);
        }
        for (size_t i = 0; i < MAX_CONNS; i++)
                if (srv->conns[i] >= 0)
                        close(srv->conns[i]);
        int fds[] = {srv->dirfd,   srv->listen_fd, srv->events_fd,    srv->audit.fd,     srv->audit_wr,
                     srv->done.fd, srv->done_wr,   srv->appr_wake_rd, srv->appr_wake_wr, srv->ready_fd};
        json_decref(srv->snapshots);
        for (size_t i = 0; i < ELEMENTSOF(fds); i++)
                if (fds[i] >= 0)
                        close(fds[i]);
        free(srv->policy_text);
        json_decref(srv->policy_json);
        free(srv);
}

static void drain_lines(struct sandbox_state *st, struct line_reader *lr,
                        void (*fn)(struct sandbox_state *st, json_t *rec))
{
        for (;;) {
                ssize_t n = read(lr->fd, lr->buf + lr->len, sizeof(lr->buf) - 1 - lr->len);
                if (n <= 0)
                        return;
                lr->len += (size_t)n;
                char *start = lr->buf, *nl;
                while ((nl = memchr(start, '\n', lr->len - (size_t)(start - lr->buf)))) {
                        json_error_t jerr;
                        json_t *rec = json_loadb(start, (size_t)(nl - start), 0, &jerr);
                        if (rec)
                                fn(st, rec);
                        start = nl + 1;
                }
                size_t left = lr->len - (size_t)(start - lr->buf);
                if (left == sizeof(lr->buf) - 1)
                        left = 0;
                memmove(lr->buf, start, left);
                lr->len = left;
        }
}

/* The gate's audit lines become events; once the audit share is used up
 * the gate is closed: egress that cannot be recorded must not happen
 * (events.c keeps room for the records of what it let through before). */
static void on_audit(struct sandbox_state *st, json_t *rec)
{
        event_append(st->serve, "audit", json_pack("{s:o}", "record", rec));
        if (st->serve->audit_full)
                net_gate_audit_full(st->gate);
}

/* A transfer ended: its event; a snapshot's digest is kept in the metadata. */
static void on_transfer_done(struct sandbox_state *st, json_t *rec)
{
        struct serve *srv = st->serve;
        const char *op = json_string_value(json_object_get(rec, "op"));
        if (op && streq(op, "snapshot") && json_object_get(rec, "digest")) {
                if (json_array_size(srv->snapshots) >= 64)
                        json_array_remove(srv->snapshots, 0);
                json_array_append(srv->snapshots, rec);
                meta_write(st);
        }
        event_append(srv, "transfer", rec);
}

static void begin_end(struct sandbox_state *st, const char *reason)
{
        struct serve *srv = st->serve;
        if (srv->terminate)
                return;
        srv->terminate = true;
        srv->end_reason = reason;
        srv->status = "terminating";
        /* a terminated sandbox answers every pending request: denied */
        approvals_close(st->approvals, streq(reason, "terminated") ? "terminate" : reason);
        approve_drain(st);
        meta_write(st);
        ports_stop(srv); /* no new connection into a sandbox that ends */
        sandbox_kill_all(st);
}

static void handle_request(struct sandbox_state *st, int conn, json_t *req, int fds[EXEC_MAX_FDS])
{
        struct serve *srv = st->serve;
        const char *op = json_string_value(json_object_get(req, "op"));
        if (!op)
                op = "";
        if (srv->terminate) {
                control_reply_error(conn, "sandbox %s is being terminated", srv->id);
                return;
        }
        if (streq(op, "exec")) {
                run_exec(st, conn, req, fds);
        } else if (streq(op, "start") && srv->oci) {
                struct run_rec *r = srv->main_run ? run_find(srv, srv->main_run) : NULL;
                if (!r || !r->running) {
                        control_reply_error(conn, "container %s has no process to start%s", srv->id,
                                            r ? " (it has already exited)" : "");
                        return;
                }
                if (r->hold_wr < 0) {
                        control_reply_error(conn, "container %s has already been started", srv->id);
                        return;
                }
                char go = 1;
                ssize_t w = write(r->hold_wr, &go, 1);
                close(TAKE_FD(r->hold_wr));
                if (w != 1) {
                        control_reply_error(conn, "cannot start container %s: %s", srv->id,
                                            w < 0 ? strerror(errno) : "its process is gone");
                        return;
                }
                event_append(srv, "started", json_pack("{s:i}", "run", r->num));
                (void)control_send(conn, json_pack("{s:b}", "ok", 1), NULL, 0);
        } else if (streq(op, "kill") && srv->oci) {
                /* OCI kill: the container's process (all: every process of
                 * the sandbox but its init); works before start too */
                json_int_t sig = json_integer_value(json_object_get(req, "signal"));
                bool all = json_is_true(json_object_get(req, "all"));
                struct run_rec *r = srv->main_run ? run_find(srv, srv->main_run) : NULL;
                if (sig <= 0 || sig >= 65) {
                        control_reply_error(conn, "kill: signal %lld is out of range", (long long)sig);
                        return;
                }
                if (!all && (!r || !r->running)) {
                        control_reply_error(conn, "container not running");
                        return;
                }
                if (all) {
                        struct msg m = {.type = MSG_KILL, .value = (int32_t)sig, .aux = -1};
                        (void)send(st->sock, &m, sizeof(m), MSG_NOSIGNAL);
                }
                if (r && r->running)
                        run_kill(st, r, (int)sig);
                (void)control_send(conn, json_pack("{s:b}", "ok", 1), NULL, 0);
        } else if (streq(op, "terminate")) {
                event_append(srv, "terminated", NULL);
                begin_end(st, "terminated");
                (void)control_send(conn, json_pack("{s:b}", "ok", 1), NULL, 0);
        } else if (streq(op, "pause") || streq(op, "resume")) {
                bool pause = streq(op, "pause");
                if (!st->cg) {
                        control_reply_error(
                                conn,
                                "cannot %s sandbox %s: it has no control group (none could be made for it on "
                                "this host, e.g. no delegated cgroup for this user), so there is no freezer "
                                "to stop its processes; it keeps running",
                                op, srv->id);
                        return;
                }
                if (streq(srv->status, pause ? "paused" : "running")) {
                        (void)control_send(conn, json_pack("{s:b, s:s}", "ok", 1, "status", srv->status), NULL, 0);
                        return;
                }
                int r = cgroup_freeze(st->cg, pause);
                if (r == -EOPNOTSUPP) {
                        control_reply_error(conn,
                                            "cannot %s sandbox %s: no cgroup freezer is available for it (cgroup v1 "
                                            "without a freezer hierarchy and no cgroup v2 group, or a kernel before "
                                            "5.2 without cgroup.freeze); it keeps running",
                                            op, srv->id);
                        return;
                }
                if (r < 0) {
                        control_reply_error(conn, "cannot %s sandbox %s: %s", op, srv->id, strerror(-r));
                        return;
                }
                srv->status = pause ? "paused" : "running";
                event_append(srv, pause ? "paused" : "resumed", NULL);
                meta_write(st);
                (void)control_send(conn, json_pack("{s:b, s:s}", "ok", 1, "status", srv->status), NULL, 0);
        } else if (streq(op, "port") || streq(op, "ports") || streq(op, "unport")) {
                ports_request(st, conn, req);
        } else if (streq(op, "ps") || streq(op, "signal")) {
                procs_request(st, conn, req);
        } else if (streq(op, "inspect")) {
                (void)control_send(conn, meta_inspect_json(st), NULL, 0);
        } else if (streq(op, "run")) {
                /* one run's record, and where its events begin (a reader of
                 * them seeks there instead of reading the whole log) */
                struct run_rec *r = run_find_id(srv, json_string_value(json_object_get(req, "run")));
                if (!r) {
                        control_reply_error_code(conn, SANDBOX_ERR_NOT_FOUND, "no run %s in sandbox %s",
                                                 json_string_value(json_object_get(req, "run")), srv->id);
                        return;
                }
                (void)control_send(conn,
                                   json_pack("{s:b, s:o, s:I}", "ok", 1, "run", meta_run_json(r), "startedSeq",
                                             (json_int_t)r->started_seq),
                                   NULL, 0);
        } else if (streq(op, "approve") || streq(op, "deny")) {
                approve_decide(st, conn, req, streq(op, "approve"));
        } else if (streq(op, "pending")) {
                (void)control_send(conn, json_pack("{s:o}", "pending", approvals_pending_json(st->approvals)), NULL, 0);
        } else if (streq(op, "cancel")) {
                struct run_rec *r = run_find_id(srv, json_string_value(json_object_get(req, "run")));
                if (!r) {
                        control_reply_error_code(conn, SANDBOX_ERR_NOT_FOUND, "no run %s in sandbox %s",
                                                 json_string_value(json_object_get(req, "run")), srv->id);
                        return;
                }
                if (!r->running) {
                        control_reply_error_code(conn, SANDBOX_ERR_CONFLICT, "run %s has already ended (%s)",
                                                 json_string_value(json_object_get(req, "run")),
                                                 r->cancelled   ? "cancelled"
                                                 : r->timed_out ? "timeout"
                                                                : "exited");
                        return;
                }
                /* marked before the kill: an exit that arrives afterwards,
                 * even a success, never turns it back */
                r->cancelled = true;
                run_kill(st, r, SIGKILL);
                event_append(srv, "run_cancelled",
                             json_pack("{s:s}", "run", json_string_value(json_object_get(req, "run"))));
                meta_write(st);
                (void)control_send(conn, json_pack("{s:b, s:b}", "ok", 1, "cancelled", 1), NULL, 0);
        } else if (streq(op, "put") || streq(op, "get") || streq(op, "ls") || streq(op, "snapshot")) {
                const char *path = json_string_value(json_object_get(req, "path"));
                if (!streq(op, "snapshot") && (!path || path[0] != '/' || strlen(path) >= 4096)) {
                        control_reply_error(conn, "%s: the path in the sandbox must be absolute", op);
                        return;
                }
                if (!streq(op, "ls") && fds[0] < 0) {
                        control_reply_error(conn, "%s: no local file was passed", op);
                        return;
                }
                const char *why = NULL;
                if (streq(op, "snapshot") && (archive_dl_load(&why) < 0 || crypto_dl_load(&why) < 0)) {
                        /* here, on the main thread: the transfer thread is
                         * chrooted into the view (common/dl.h) */
                        control_reply_error(conn, "snapshot: %s", why);
                        return;
                }
                struct xfer *x = xcalloc(1, sizeof(*x));
                x->st = st;
                x->conn = fcntl(conn, F_DUPFD_CLOEXEC, 3);
                x->fd = TAKE_FD(fds[0]);
                x->op = xstrdup(op);
                x->path = xstrdup(path ? path : "/");
                x->mode = (int)json_integer_value(json_object_get(req, "mode"));
                /* a put from a stream (the API's upload) names its length:
                 * one that ends short is a client gone, never a file */
                json_t *size = json_object_get(req, "size");
                x->size = json_is_integer(size) && json_integer_value(size) >= 0 ? json_integer_value(size) : -1;
                x->confirm_end = streq(op, "put") && x->size < 0 && json_is_true(json_object_get(req, "confirmEnd"));
                x->upper_fd = -1;
                x->progress = json_is_true(json_object_get(req, "progress"));
                if (streq(op, "snapshot")) {
                        json_t *extra =
                                json_pack("{s:o, s:s}", "meta", meta_json(st, false), "policy", srv->policy_text);
                        x->extra_json = json_dumps(extra, JSON_INDENT(2) | JSON_SORT_KEYS);
                        json_decref(extra);
                }
                x->done_fd = fcntl(srv->done_wr, F_DUPFD_CLOEXEC, 3);
                int r = xfer_start(x);
                if (r < 0)
                        control_reply_error(conn, "%s: cannot start the transfer: %s", op, strerror(-r));
        } else
                control_reply_error(conn, "unknown request '%s'", op);
}

/* A new connection, in srv->conns: its index, or -1. */
static int accept_conn(struct serve *srv)
{
        int c = accept4(srv->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (c < 0)
                return -1;
        /* only root and the user who created the sandbox may drive it */
        struct ucred cred;
        socklen_t l = sizeof(cred);
        if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &l) < 0 || (cred.uid != 0 && cred.uid != srv->owner)) {
                control_reply_error(c, "permission denied: sandbox %s belongs to uid %u", srv->id,
                                    (unsigned)srv->owner);
                close(c);
                return -1;
        }
        for (size_t i = 0; i < MAX_CONNS; i++)
                if (srv->conns[i] < 0) {
                        srv->conns[i] = c;
                        return (int)i;
                }
        control_reply_error(c, "sandbox %s is busy (%d requests pending)", srv->id, MAX_CONNS);
        close(c);
        return -1;
}

static void read_conn(struct sandbox_state *st, size_t i)
{
        struct serve *srv = st->serve;
        int c = srv->conns[i];
        srv->conns[i] = -1;
        /* blocking from here: the request is already queued */
        fcntl(c, F_SETFL, 0);
        json_t *req = NULL;
        int fds[EXEC_MAX_FDS];
        int r = control_recv(c, &req, fds, EXEC_MAX_FDS);
        /* a peer that sent nothing but closed, or garbage */
        if (r <= 0) {
                if (r == -EBADMSG)
                        control_reply_error(c, "a request is one JSON object");
                close(c);
                return;
        }
        /* replies must not block the loop on a client that stops reading */
        struct timeval tv = {5, 0};
        setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        handle_request(st, c, req, fds);
        json_decref(req);
        for (int k = 0; k < EXEC_MAX_FDS; k++)
                if (fds[k] >= 0)
                        close(fds[k]);
        close(c);
}

static void announce_ready(struct serve *srv)
{
        char line[64];
        int n = snprintf(line, sizeof(line), "READY %s\n", srv->id);
        (void)write_all(srv->ready_fd, line, (size_t)n);
        close(srv->ready_fd);
        srv->ready_fd = -1;
        /* from now on the creating client is gone: messages go to the log */
        int log = openat(srv->dirfd, "sentry.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (log >= 0) {
                dup2(log, STDERR_FILENO);
                close(log);
        }
}

/* Whether the serve loop polls anything of run r: its client's connection,
 * its log, its timer or one of its streams. A run's fds are all opened when
 * it starts (run_exec), so one that has none left never has again. */
static bool run_polls(const struct run_rec *r)
{
        if (r->conn >= 0 || r->log_in >= 0 || r->timer >= 0)
                return true;
        for (int k = 0; r->streams && k < 2; k++)
                if (r->streams[k].in >= 0 || (r->streams[k].off < r->streams[k].len && r->streams[k].to >= 0))
                        return true;
        return false;
}

static int serve_loop(struct sandbox_state *st)
{
        struct serve *srv = st->serve;
        _cleanup_close_ int sfd = signalfd(-1, &st->sigmask, SFD_CLOEXEC | SFD_NONBLOCK);
        _cleanup_close_ int life_fd = -1, expiry_fd = -1;
        if (st->limits.timeout_ms > 0)
                life_fd = sentry_timer_arm(CLOCK_MONOTONIC, false, st->limits.timeout_ms);
        if (st->limits.expires_at != (time_t)-1)
                expiry_fd = sentry_timer_arm(CLOCK_REALTIME, true, (int64_t)st->limits.expires_at * 1000);
        if ((st->limits.timeout_ms > 0 && life_fd < 0) || (st->limits.expires_at != (time_t)-1 && expiry_fd < 0)) {
                fprintf(stderr, "cordon: cannot arm the sandbox's expiry: %m\n");
                sandbox_kill_all(st);
                srv->terminate = true;
                srv->end_reason = "sentry-error";
        }

        if (!srv->terminate && srv->snapshot) {
                char err[512] = "";
                _cleanup_close_ int afd = open(srv->snapshot, O_RDONLY | O_CLOEXEC);
                int r = afd < 0 ? negative_errno()
                                : snapshot_restore(st, afd, srv->snapshot_digest, srv->progress ? srv->ready_fd : -1,
                                                   err, sizeof(err));
                if (r < 0) {
                        fprintf(stderr, "cordon: cannot restore the snapshot %s: %s\n", srv->snapshot,
                                err[0] ? err : strerror(-r));
                        sandbox_kill_all(st);
                        srv->terminate = true;
                        srv->end_reason = "sentry-error";
                }
        }
        json_t *ports = NULL;
        if (!srv->terminate) {
                char why[400];
                if (ports_expose_policy(st, &ports, why, sizeof(why)) < 0) {
                        fprintf(stderr, "cordon: %s\n", why);
                        sandbox_kill_all(st);
                        srv->terminate = true;
                        srv->end_reason = "sentry-error";
                }
        }
        if (!srv->terminate) {
                srv->status = "running";
                json_t *ev = json_pack("{s:s}", "sandbox", srv->id);
                if (json_array_size(ports) > 0)
                        json_object_set(ev, "ports", ports);
                /* the snapshot by its digest where the creator gave one:
                 * the API always does, and its archive's path is the
                 * server's own holding file, nothing for a tenant to see */
                if (srv->snapshot)
                        json_object_set_new(ev, "fromSnapshot",
                                            json_string(srv->snapshot_digest ? srv->snapshot_digest : srv->snapshot));
                event_append(srv, "created", ev);
                for (size_t i = 0; i < json_array_size(ports); i++) {
                        json_t *w = json_object_get(json_array_get(ports, i), "warning");
                        if (w) /* the creating client still reads this (its stderr) */
                                fprintf(stderr, "cordon: warning: port %lld at %s: %s\n",
                                        (long long)json_integer_value(
                                                json_object_get(json_array_get(ports, i), "port")),
                                        json_string_value(json_object_get(json_array_get(ports, i), "listen")),
                                        json_string_value(w));
                }
                meta_write(st);
                announce_ready(srv);
                run_group_prepare(st); /* the first run's, once the client has its answer */
        }
        json_decref(ports);

        enum { P_PIDFD, P_INIT, P_SIG, P_LISTEN, P_LIFE, P_EXPIRY, P_AUDIT, P_DONE, P_APPROVALS, P_FIXED };
        struct pollfd p[P_FIXED + MAX_CONNS + 5 * MAX_ACTIVE_RUNS];
        struct {
                int kind; /* 0 conn, 1 run conn, 2 run log, 3 run timer, 4/5 run stdout/stderr relay */
                int index;
        } who[ELEMENTSOF(p)];
        for (;;) {
                size_t n = P_FIXED;
                p[P_PIDFD] = (struct pollfd){st->pidfd, POLLIN, 0};
                p[P_INIT] = (struct pollfd){st->sock, POLLIN, 0};
                p[P_SIG] = (struct pollfd){sfd, POLLIN, 0};
                p[P_LISTEN] = (struct pollfd){srv->terminate ? -1 : srv->listen_fd, POLLIN, 0};
                p[P_LIFE] = (struct pollfd){life_fd, POLLIN, 0};
                p[P_EXPIRY] = (struct pollfd){expiry_fd, POLLIN, 0};
                p[P_AUDIT] = (struct pollfd){srv->audit.fd, POLLIN, 0};
                p[P_DONE] = (struct pollfd){srv->done.fd, POLLIN, 0};
                p[P_APPROVALS] = (struct pollfd){srv->appr_wake_rd, POLLIN, 0};
                for (size_t i = 0; i < MAX_CONNS; i++)
                        if (srv->conns[i] >= 0) {
                                who[n].kind = 0;
                                who[n].index = (int)i;
                                p[n++] = (struct pollfd){srv->conns[i], POLLIN, 0};
                        }
                /* the runs that ended and hold nothing to poll stay
                 * behind: the loop's work follows the live runs, not all
                 * the sandbox has had (up to MAX_RUNS) */
                while (srv->live_from < srv->n_runs && !run_polls(&srv->runs[srv->live_from]))
                        srv->live_from++;
                for (int i = srv->live_from; i < srv->n_runs && n + 5 <= ELEMENTSOF(p); i++) {
                        struct run_rec *r = &srv->runs[i];
                        int fds3[3] = {r->conn, r->log_in, r->timer};
                        for (int k = 0; k < 3; k++)
                                if (fds3[k] >= 0) {
                                        who[n].kind = k + 1;
                                        who[n].index = i;
                                        p[n++] = (struct pollfd){fds3[k], POLLIN, 0};
                                }
                        for (int k = 0; r->streams && k < 2; k++) {
                                struct stream *sm = &r->streams[k];
                                /* the client's end while it is behind, else the run's */
                                bool behind = sm->off < sm->len && sm->to >= 0;
                                if (!behind && sm->in < 0)
                                        continue;
                                who[n].kind = 4 + k;
                                who[n].index = i;
                                p[n++] = behind ? (struct pollfd){sm->to, POLLOUT, 0}
                                                : (struct pollfd){sm->in, POLLIN, 0};
                        }
                }
                int polled = poll(p, n, meta_wait_ms(srv));
                meta_write_due(st);
                if (polled < 0) {
                        if (errno == EINTR)
                                continue;
                        /* the loop cannot go on: the sandbox must not run
                         * unsupervised, nor the wait below block on a live
                         * init */
                        fprintf(stderr, "cordon: sandbox %s: poll: %m; ending the sandbox\n", srv->id);
                        if (!srv->terminate)
                                event_append(srv, "killed", json_pack("{s:s}", "reason", "the sentry's loop failed"));
                        begin_end(st, "sentry-error");
                        break;
                }
                if (p[P_SIG].revents & POLLIN) {
                        struct signalfd_siginfo si;
                        while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
                                int sig = (int)si.ssi_signo;
                                if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT) {
                                        event_append(srv, "terminated", json_pack("{s:i}", "signal", sig));
                                        begin_end(st, "terminated");
                                }
                        }
                }
                if (p[P_INIT].revents)
                        run_read_init(st);
                if (p[P_AUDIT].revents)
                        drain_lines(st, &srv->audit, on_audit);
                if (p[P_DONE].revents)
                        drain_lines(st, &srv->done, on_transfer_done);
                if (p[P_APPROVALS].revents)
                        approve_drain(st);
                if ((p[P_LIFE].revents & POLLIN) || (p[P_EXPIRY].revents & POLLIN)) {
                        if (!srv->terminate)
                                event_append(srv, "expired", NULL);
                        begin_end(st, "expired");
                        if (life_fd >= 0)
                                close(TAKE_FD(life_fd));
                        if (expiry_fd >= 0)
                                close(TAKE_FD(expiry_fd));
                }
                if (p[P_LISTEN].revents & POLLIN) {
                        /* a client sends its request as it connects: read
                         * at once when it is there, not after another
                         * round of the loop's poll */
                        int i = accept_conn(srv);
                        struct pollfd q = {i >= 0 ? srv->conns[i] : -1, POLLIN, 0};
                        if (i >= 0 && poll(&q, 1, 0) == 1)
                                read_conn(st, (size_t)i);
                }
                for (size_t i = P_FIXED; i < n; i++) {
                        if (!p[i].revents)
                                continue;
                        struct run_rec *r = &srv->runs[who[i].index];
                        switch (who[i].kind) {
                        case 0:
                                read_conn(st, (size_t)who[i].index);
                                break;
                        case 1:
                                if (r->conn >= 0)
                                        run_read_conn(st, r);
                                break;
                        case 2:
                                if (r->log_in >= 0)
                                        run_drain_log(srv, r);
                                break;
                        case 4:
                        case 5:
                                if (r->streams)
                                        (void)stream_pump(srv, r, who[i].kind - 4);
                                break;
                        case 3:
                                if (r->timer >= 0) {
                                        close(TAKE_FD(r->timer));
                                        r->timed_out = true;
                                        run_kill(st, r, SIGKILL);
                                }
                                break;
                        default:
                                break;
                        }
                }
                event_sync(srv);
                if (p[P_PIDFD].revents & POLLIN)
                        break;
        }

        ports_stop(srv);
        /* init is gone, and with it every process of the sandbox */
        int init_status = 0;
        while (waitpid(st->init_pid, &init_status, 0) < 0 && errno == EINTR)
                ;
        if (!srv->terminate) {
                srv->end_reason = "killed";
                event_append(srv, "killed",
                             json_pack("{s:s, s:i, s:i}", "reason", "the sandbox's init died", "exitStatus",
                                       WIFEXITED(init_status) ? WEXITSTATUS(init_status) : -1, "signal",
                                       WIFSIGNALED(init_status) ? WTERMSIG(init_status) : 0));
        }
        if (srv->ready_fd >= 0)
                fprintf(stderr, "cordon: the sandbox ended during set-up\n");
        for (int i = 0; i < srv->n_runs; i++) {
                struct run_rec *r = &srv->runs[i];
                if (r->log_in >= 0)
                        run_drain_log(srv, r);
                run_ended(st, r, SIGKILL);
        }
        drain_lines(st, &srv->audit, on_audit);
        if (srv->meta_dirty) /* the runs' ends, not left for later */
                meta_write(st);
        /* the sandbox is over: whatever is still pending is denied */
        approvals_close(st->approvals, srv->end_reason && streq(srv->end_reason, "terminated") ? "terminate"
                                       : srv->end_reason                                       ? srv->end_reason
                                                                                               : "killed");
        approve_drain(st);
        /* transfers still running hold the view's root; let them finish (bounded) */
        for (int i = 0; i < 100 && xfer_active() > 0; i++)
                usleep(50 * 1000);
        drain_lines(st, &srv->done, on_transfer_done);
        event_append(srv, "ended", json_pack("{s:s}", "reason", srv->end_reason ? srv->end_reason : "killed"));
        event_sync(srv);
        st->exit_reason = srv->end_reason ? srv->end_reason : "killed";
        if (srv->ready_fd >= 0)
                return EXIT_SANDBOX;
        if (srv->oci && srv->main_ended)
                return WIFEXITED(srv->main_status)     ? WEXITSTATUS(srv->main_status)
                       : WIFSIGNALED(srv->main_status) ? 128 + WTERMSIG(srv->main_status)
                                                       : EXIT_SANDBOX;
        return srv->oci ? 128 + SIGKILL : 0;
}

struct sentry_front serve_front(const struct serve_config *cfg)
{
        return (struct sentry_front){
                .config = cfg,
                .prepare = serve_prepare,
                .audit_fd = serve_audit_fd,
                .approvals_wake_fd = serve_approvals_wake_fd,
                .netns = serve_netns,
                .loop = serve_loop,
                .free = serve_free,
        };
}
