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
 * meta.json (replaced atomically), events.jsonl (one JSON object a line,
 * each synced as it is written, with a sequence number that only grows),
 * the control socket and runs/RUN.log for detached runs. */
#include "config.h"

#include <fcntl.h>
#include <jansson.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#include "common/crypto-dl.h"
#include "common/fdpass.h"
#include "sentry/approvals/approvals.h"
#include "sentry/run-internal.h"
#include "sentry/sandbox/archive-dl.h"
#include "sentry/sandbox/sandbox-internal.h"

#define MAX_RUNS          1024         /* run records kept per sandbox */
#define MAX_ACTIVE_RUNS   64           /* runs alive at once */
#define MAX_CONNS         32           /* clients that have not yet sent their request */
#define RUN_LOG_MAX       (16LL << 20) /* a detached run's log; beyond, a marker and nothing more */
#define EVENT_MAX         (64 * 1024)  /* one event line */
#define EVENT_LINE_MAX    4096         /* output longer than this without a newline is split */
#define RUN_OUTPUT_EVENTS 20000        /* output events per run; then one marker */
#define EVENTS_MAX        (64LL << 20) /* the events file; beyond, events are counted, not written */

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
        int hold_wr; /* OCI create: writing a byte releases the held run's exec (op "start"); -1 none */
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
        bool events_dirty;        /* written, not yet synced (sync_events) */
        struct line_reader audit; /* the egress gate's audit lines */
        int audit_wr;
        struct line_reader done; /* transfer threads' results */
        int done_wr;
        int appr_wake_rd, appr_wake_wr; /* approvals queued events (approvals_take_events) */
        json_t *snapshots;
        int ready_fd;
        char *policy_text;
        const char *snapshot, *snapshot_digest;
        bool progress; /* restore progress on ready_fd for a client on a terminal */
        time_t created, expires;
        const char *status; /* running, paused, terminating */
        bool terminate;
        const char *end_reason; /* terminated, expired, killed */
        struct run_rec runs[MAX_RUNS];
        int n_runs;
        bool oci;        /* `cordon oci`: see serve_config */
        int main_run;    /* the container's process (its num), 0: none yet */
        int main_status; /* its wait status, once it ended */
        bool main_ended;
        int conns[MAX_CONNS];
        uid_t owner;
};

static void reply_error(int conn, const char *fmt, ...) _printf_(2, 3);
static void reply_error(int conn, const char *fmt, ...)
{
        char text[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        (void)control_send(conn, json_pack("{s:s}", "error", text), NULL, 0);
}

static void iso_time(time_t t, char buf[32])
{
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(buf, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Appends an event (steals ev) with the next sequence number, synced. */
static void event(struct serve *srv, const char *type, json_t *ev)
{
        json_t *clean = ev ? event_sanitize(ev) : json_object();
        json_decref(ev);
        ev = clean;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        char t[32], when[48];
        iso_time(ts.tv_sec, t);
        snprintf(when, sizeof(when), "%.19s.%03ldZ", t, ts.tv_nsec / 1000000);
        if (srv->events_bytes >= EVENTS_MAX) {
                /* the file is full: counted, and said once (below) */
                srv->events_dropped++;
                json_decref(ev);
                return;
        }
        json_object_set_new(ev, "seq", json_integer(srv->seq + 1));
        json_object_set_new(ev, "time", json_string(when));
        json_object_set_new(ev, "type", json_string(type));
        char *line = json_dumps(ev, JSON_COMPACT | JSON_SORT_KEYS);
        if (line && strlen(line) > EVENT_MAX) {
                /* too big even after the bounds: its kind survives, marked */
                free(line);
                json_t *small = json_pack("{s:I, s:s, s:s, s:b}", "seq", (json_int_t)srv->seq + 1, "time", when, "type",
                                          type, "truncated", 1);
                line = json_dumps(small, JSON_COMPACT | JSON_SORT_KEYS);
                json_decref(small);
        }
        json_decref(ev);
        if (!line)
                return; /* out of memory: no sequence number was used */
        size_t len = strlen(line);
        if (srv->events_bytes + (int64_t)len + 1 > EVENTS_MAX) {
                free(line);
                json_t *full = json_pack("{s:I, s:s, s:s}", "seq", (json_int_t)srv->seq + 1, "time", when, "type",
                                         "events_limit");
                line = json_dumps(full, JSON_COMPACT | JSON_SORT_KEYS);
                json_decref(full);
                if (!line)
                        return;
                len = strlen(line);
                srv->events_dropped++;
                srv->events_bytes = EVENTS_MAX; /* nothing more after this one */
        }
        line[len] = '\n';
        if (write_all(srv->events_fd, line, len + 1) == 0) {
                srv->seq++;
                if (srv->events_bytes < EVENTS_MAX)
                        srv->events_bytes += (int64_t)len + 1;
                srv->events_dirty = true;
        }
        free(line);
}

/* Each event is written (so a crash of the sentry loses at most the one
 * being written) as it happens; the disk sync is once per turn of the
 * serve loop, not once per line, or a chatty run would make the sentry
 * wait on the disk for every line it prints. */
static void sync_events(struct serve *srv)
{
        if (srv->events_dirty) {
                (void)fdatasync(srv->events_fd);
                srv->events_dirty = false;
        }
}

static json_t *run_json(const struct run_rec *r)
{
        char start[32], end[32];
        iso_time(r->started, start);
        json_t *j = json_pack("{s:O, s:b, s:s, s:s}", "argv", r->argv, "detached", r->detached, "startedAt", start,
                              "status",
                              r->running     ? "running"
                              : r->cancelled ? "cancelled"
                              : r->timed_out ? "timeout"
                                             : "exited");
        char id[16];
        snprintf(id, sizeof(id), "r%d", r->num);
        json_object_set_new(j, "id", json_string(id));
        if (!r->running) {
                iso_time(r->ended, end);
                json_object_set_new(j, "endedAt", json_string(end));
                json_object_set_new(j, "exitCode",
                                    json_integer(WIFEXITED(r->status)     ? WEXITSTATUS(r->status)
                                                 : WIFSIGNALED(r->status) ? 128 + WTERMSIG(r->status)
                                                                          : EXIT_SANDBOX));
                if (WIFSIGNALED(r->status))
                        json_object_set_new(j, "signal", json_integer(WTERMSIG(r->status)));
        }
        if (r->detached)
                json_object_set_new(j, "log", json_sprintf("runs/r%d.log", r->num));
        return j;
}

static json_t *isolation_json(const struct sandbox_state *st)
{
        /* the sentry confines itself before the command runs (run.c refuses
         * to start otherwise); the agent and the tracer do the same */
        char confined[160];
        snprintf(confined, sizeof(confined),
                 "sentry, proc agent and exec tracer each confined by their own seccomp allow-list "
                 "(sentry: %zu rows)",
                 sentry_confine_rows());
        return json_pack("{s:[sssssss], s:s, s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "namespaces", "user",
                         "mount", "pid", "net", "ipc", "uts", "cgroup", "identity",
                         "uid/gid 0 in the sandbox; no capabilities; no_new_privs", "hostUid", (json_int_t)st->uid,
                         "hostGid", (json_int_t)st->gid, "view",
                         "host system dirs read-only, private writable layer, own /proc and /dev", "network",
                         "own namespace, loopback only; DNS stub and egress gate", "seccomp",
                         "filter from the syscall table; path and socket calls emulated by the sentry", "cgroup",
                         st->cg ? cgroup_backend(st->cg) : "none", "privileged",
                         st->privileged ? "sentry runs as root" : "sentry runs in its own user namespace",
                         "confinement", confined, "runKill",
                         cgroup_v2_path(st->cg) ? "each run in its own cgroup v2 group: cancel and --timeout end all "
                                                  "of a run's processes, also those that left its session"
                                                : "no cgroup v2 group: cancel and --timeout reach the run's process "
                                                  "and process group only");
}

static json_t *meta_json(const struct sandbox_state *st, bool live)
{
        const struct serve *srv = st->serve;
        char created[32], expires[32];
        iso_time(srv->created, created);
        const struct run_limits *l = &st->limits;
        json_error_t jerr;
        json_t *policy = json_loads(srv->policy_text, 0, &jerr);
        json_t *j = json_pack("{s:s, s:s, s:s, s:I, s:I, s:o, s:{s:I, s:I, s:I, s:I, s:I}, s:o}", "id", srv->id,
                              "status", srv->status, "createdAt", created, "sentryPid", (json_int_t)getpid(), "initPid",
                              (json_int_t)st->init_pid, "policy", policy ? policy : json_null(), "limits",
                              "memoryBytes", (json_int_t)l->memory_bytes, "cpuMillis", (json_int_t)l->cpu_millis,
                              "diskBytes", (json_int_t)l->disk_bytes, "maxProcesses", (json_int_t)l->max_processes,
                              "maxOpenFiles", (json_int_t)l->max_open_files, "isolation", isolation_json(st));
        if (srv->expires != (time_t)-1) {
                iso_time(srv->expires, expires);
                json_object_set_new(j, "expiresAt", json_string(expires));
        } else
                json_object_set_new(j, "expiresAt", json_null());
        json_t *runs = json_array();
        for (int i = 0; i < srv->n_runs; i++)
                json_array_append_new(runs, run_json(&srv->runs[i]));
        json_object_set_new(j, "runs", runs);
        json_object_set(j, "snapshots", srv->snapshots);
        /* in the state (meta.json), so a pending request outlives any client */
        json_object_set_new(j, "pendingApprovals", approvals_pending_json(st->approvals));
        if (live) {
                json_t *use = json_object();
                struct cg_stats cs;
                if (st->cg && cgroup_stats(st->cg, &cs) == 0) {
                        json_object_set_new(use, "memoryPeakBytes", json_integer(cs.memory_peak_bytes));
                        json_object_set_new(use, "cpuUsageUsec", json_integer(cs.cpu_usage_usec));
                        json_object_set_new(use, "tasks", json_integer(cs.pids_current));
                        json_object_set_new(use, "oomKills", json_integer(cs.oom_kills));
                }
                struct statfs sf;
                if (st->writable_fd >= 0 && fstatfs(st->writable_fd, &sf) == 0)
                        json_object_set_new(use, "diskBytes",
                                            json_integer((json_int_t)((sf.f_blocks - sf.f_bfree) * sf.f_bsize)));
                json_object_set_new(j, "use", use);
                json_object_set_new(j, "events", json_integer(srv->seq));
        }
        return j;
}

static void write_meta(struct sandbox_state *st)
{
        struct serve *srv = st->serve;
        json_t *j = meta_json(st, false);
        char *text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
        json_decref(j);
        if (!text)
                return;
        /* write-then-rename: a reader (list, inspect) never sees half of it */
        _cleanup_close_ int fd =
                openat(srv->dirfd, "meta.json.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0 && write_all(fd, text, strlen(text)) == 0 && fdatasync(fd) == 0)
                (void)renameat(srv->dirfd, "meta.json.tmp", srv->dirfd, "meta.json");
        free(text);
}

int serve_prepare(const struct serve_config *cfg, const char *id, const struct run_limits *l, struct serve **ret)
{
        struct serve *srv = xcalloc(1, sizeof(*srv));
        snprintf(srv->id, sizeof(srv->id), "%s", id);
        srv->listen_fd = srv->events_fd = srv->audit.fd = srv->audit_wr = srv->done.fd = srv->done_wr = srv->dirfd = -1;
        srv->appr_wake_rd = srv->appr_wake_wr = -1;
        srv->snapshots = json_array();
        srv->ready_fd = cfg->ready_fd;
        srv->policy_text = xstrdup(cfg->policy_text ? cfg->policy_text : "{}");
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

int serve_audit_fd(struct serve *srv)
{
        return srv->audit_wr;
}

int serve_approvals_wake_fd(struct serve *srv)
{
        return srv->appr_wake_wr;
}

void serve_free(struct serve *srv)
{
        if (!srv)
                return;
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
        free(srv);
}

static struct run_rec *find_run(struct serve *srv, int num)
{
        for (int i = 0; i < srv->n_runs; i++)
                if (srv->runs[i].num == num)
                        return &srv->runs[i];
        return NULL;
}

static struct run_rec *find_run_id(struct serve *srv, const char *id)
{
        if (!id || id[0] != 'r')
                return NULL;
        char *end;
        long n = strtol(id + 1, &end, 10);
        if (*end || n <= 0 || n > INT32_MAX)
                return NULL;
        return find_run(srv, (int)n);
}

/* A signal for a run: init sends it to the run's process and process
 * group. SIGKILL (cancel, --timeout) also goes to the run's own control
 * group, which holds every process the run forked, also those that left its
 * session (setsid, double fork): they all end, and no other run's does.
 * Without a group (no cgroup v2 on the host: see cgroup_run_create) only
 * the process group is reached, and a process that left it survives. */
static void kill_run(struct sandbox_state *st, struct run_rec *r, int sig)
{
        if (sig == SIGKILL && r->cgroup) {
                int q = cgroup_run_kill(st->cg, r->num, false);
                if (q < 0)
                        fprintf(stderr, "cordon: sandbox %s: cannot kill the group of run r%d: %s\n", st->serve->id,
                                r->num, strerror(-q));
        }
        struct msg m = {.type = MSG_KILL, .value = sig, .aux = r->num};
        (void)send(st->sock, &m, sizeof(m), MSG_NOSIGNAL);
}

static int arm_ms(int clock, bool absolute, int64_t ms)
{
        int fd = timerfd_create(clock, TFD_CLOEXEC | TFD_NONBLOCK);
        if (fd < 0)
                return negative_errno();
        struct itimerspec its = {.it_value = {ms / 1000, (ms % 1000) * 1000000}};
        if (timerfd_settime(fd, absolute ? TFD_TIMER_ABSTIME : 0, &its, NULL) < 0) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        return fd;
}

/* Builds MSG_EXEC from the request: cwd, argv, the sandbox's environment
 * with the request's K=V on top. */
static int build_exec(const struct sandbox_state *st, json_t *req, int num, struct exec_msg *e, char *why, size_t size)
{
        json_t *argv = json_object_get(req, "argv"), *env = json_object_get(req, "env"), *v;
        const char *cwd = json_string_value(json_object_get(req, "cwd"));
        if (!cwd)
                cwd = "/root";
        if (!json_is_array(argv) || json_array_size(argv) == 0 || json_array_size(argv) > 4096) {
                snprintf(why, size, "exec: argv must be a non-empty array of strings");
                return -EINVAL;
        }
        if (cwd[0] != '/') {
                snprintf(why, size, "exec: cwd must be an absolute path in the sandbox");
                return -EINVAL;
        }
        memset(e, 0, offsetof(struct exec_msg, strings));
        e->type = MSG_EXEC;
        e->run = num;
        size_t len = 0;
#define PUT(s)                                                                                        \
        do {                                                                                          \
                size_t l_ = strlen(s) + 1;                                                            \
                if (len + l_ > EXEC_MAX_STRINGS) {                                                    \
                        snprintf(why, size, "exec: the command line and environment exceed %d bytes", \
                                 EXEC_MAX_STRINGS);                                                   \
                        return -E2BIG;                                                                \
                }                                                                                     \
                memcpy(e->strings + len, s, l_);                                                      \
                len += l_;                                                                            \
        } while (0)
        PUT(cwd);
        size_t i;
        json_array_foreach(argv, i, v)
        {
                if (!json_is_string(v)) {
                        snprintf(why, size, "exec: argv[%zu] is not a string", i);
                        return -EINVAL;
                }
                PUT(json_string_value(v));
                e->argc++;
        }
        /* the request's variables override the sandbox's; an OCI process
         * (cleanEnv) has exactly the environment its config gives */
        bool clean = json_is_true(json_object_get(req, "cleanEnv"));
        for (char **p = clean ? NULL : st->plan->envp; p && *p; p++) {
                const char *eq = strchr(*p, '=');
                bool overridden = false;
                json_array_foreach(env, i, v)
                {
                        const char *kv = json_string_value(v);
                        if (kv && eq && strncmp(kv, *p, (size_t)(eq - *p + 1)) == 0)
                                overridden = true;
                }
                if (!overridden) {
                        PUT(*p);
                        e->envc++;
                }
        }
        json_array_foreach(env, i, v)
        {
                const char *kv = json_string_value(v);
                const char *eq = kv ? strchr(kv, '=') : NULL;
                if (!eq || eq == kv || e->envc >= 4096) {
                        snprintf(why, size, "exec: env[%zu] must be KEY=VALUE", i);
                        return -EINVAL;
                }
                PUT(kv);
                e->envc++;
        }
#undef PUT
        e->len = (uint32_t)len;
        return 0;
}

static int active_runs(const struct serve *srv)
{
        int n = 0;
        for (int i = 0; i < srv->n_runs; i++)
                n += srv->runs[i].running;
        return n;
}

/* Opens a pty pair in the view's devpts (dev/pts/ptmx, resolved inside
 * the view's root), the slave through the master (TIOCGPTPEER) so that no
 * path of the sandbox's names it. */
static int open_sandbox_pty(struct sandbox_state *st, int *ret_master, int *ret_slave)
{
        struct open_how how = {.flags = O_RDWR | O_NOCTTY | O_CLOEXEC,
                               .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS};
        int m = notify_feature_absent("openat2")
                        ? -1
                        : (int)syscall(SYS_openat2, st->fsctx.root_fd, "dev/pts/ptmx", &how, sizeof(how));
        if (m < 0 && (errno == ENOSYS || notify_feature_absent("openat2")))
                m = fs_open_in_root(st->fsctx.root_fd, "dev/pts/ptmx", O_RDWR | O_NOCTTY); /* follows no symlink */
        else if (m < 0)
                m = negative_errno();
        if (m < 0)
                return m;
        struct stat sb;
        int unlock = 0;
        if (fstat(m, &sb) < 0 || !S_ISCHR(sb.st_mode) || ioctl(m, TIOCSPTLCK, &unlock) < 0) {
                int r = negative_errno();
                close(m);
                return r;
        }
        int sl = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (sl < 0) {
                int r = negative_errno();
                close(m);
                return r;
        }
        *ret_master = m;
        *ret_slave = sl;
        return 0;
}

static void close_pipes(int (*p)[2][2])
{
        for (int k = 0; k < 2; k++)
                for (int e = 0; e < 2; e++)
                        if ((*p)[k][e] >= 0)
                                close((*p)[k][e]);
}

/* exec: a run inside the sandbox with the client's stdio (or, detached, a
 * log file the sentry writes, bounded). */
static void do_exec(struct sandbox_state *st, int conn, json_t *req, int fds[EXEC_MAX_FDS])
{
        struct serve *srv = st->serve;
        char why[512];
        if (streq(srv->status, "paused")) {
                reply_error(conn, "sandbox %s is paused; `cordon sandbox resume %s` before exec", srv->id, srv->id);
                return;
        }
        if (active_runs(srv) >= MAX_ACTIVE_RUNS || srv->n_runs >= MAX_RUNS) {
                reply_error(conn, "too many runs in sandbox %s (at most %d at once, %d in all)", srv->id,
                            MAX_ACTIVE_RUNS, MAX_RUNS);
                return;
        }
        bool detach = json_is_true(json_object_get(req, "detach"));
        bool tty = json_is_true(json_object_get(req, "tty"));
        if (tty && detach) {
                reply_error(conn, "exec: a terminal and --detach do not go together");
                return;
        }
        json_int_t timeout_ms = json_integer_value(json_object_get(req, "timeoutMs"));
        /* OCI: "direct" hands the client's stdio to the run as they are (no
         * relay through the sentry: the client, a runtime command, exits
         * at once; conmon and the shim read the pipes themselves); "hold"
         * keeps the run before its exec until op "start"; "main" makes it
         * the container's process; preserveFds more fds become its 3, 4, ... */
        bool direct = json_is_true(json_object_get(req, "direct"));
        bool hold = json_is_true(json_object_get(req, "hold"));
        bool is_main = json_is_true(json_object_get(req, "main"));
        json_int_t n_preserve = json_integer_value(json_object_get(req, "preserveFds"));
        if ((hold || is_main || n_preserve) && !srv->oci) {
                reply_error(conn, "exec: hold, main and preserveFds are for OCI containers only");
                return;
        }
        if (is_main && srv->main_run) {
                reply_error(conn, "exec: the container already has its process");
                return;
        }
        if (n_preserve < 0 || n_preserve > EXEC_MAX_FDS - 5) {
                reply_error(conn, "exec: at most %d preserved fds", EXEC_MAX_FDS - 5);
                return;
        }
        for (json_int_t i = 0; i < n_preserve; i++) {
                /* preserved fds pass the same checks as stdio */
                int chk[3] = {fds[3 + i], -1, -1};
                if (chk[0] < 0) {
                        reply_error(conn, "exec: preserved fd %lld was not passed", (long long)(3 + i));
                        return;
                }
                if (check_passed_fds(chk, why, sizeof(why)) < 0) {
                        reply_error(conn, "preserved fd %lld: %s", (long long)(3 + i), why);
                        return;
                }
        }
        int num = srv->n_runs + 1;
        static struct exec_msg e;
        if (build_exec(st, req, num, &e, why, sizeof(why)) < 0) {
                reply_error(conn, "%s", why);
                return;
        }
        e.n_preserve = (uint32_t)n_preserve;
        _cleanup_close_ int hold_rd = -1, hold_wr = -1;
        if (hold) {
                int hp[2];
                if (pipe2(hp, O_CLOEXEC) < 0) {
                        reply_error(conn, "exec: cannot make the start pipe: %s", strerror(errno));
                        return;
                }
                hold_rd = hp[0];
                hold_wr = hp[1];
                e.flags |= EXEC_HOLD;
        }
        int log_in = -1, log_fd = -1;
        int pass[4] = {fds[0], fds[1], fds[2], -1};
        _cleanup_(close_pipes) int run_pipe[2][2] = {{-1, -1}, {-1, -1}};
        _cleanup_(close_pipes) int client_pipe[2][2] = {{-1, -1}, {-1, -1}};
        _cleanup_close_ int nul = -1, pw = -1, master = -1, slave = -1;
        if (tty) {
                /* a terminal from the sandbox's own devpts instance: the run
                 * gets its slave; the sentry keeps the master and relays it
                 * to the client through two pipes, so that what the run
                 * shows on its terminal becomes events too */
                int r = open_sandbox_pty(st, &master, &slave);
                if (r < 0) {
                        reply_error(conn, "exec: cannot open a terminal in the sandbox: %s", strerror(-r));
                        return;
                }
                struct winsize ws = {.ws_row = (unsigned short)json_integer_value(json_object_get(req, "rows")),
                                     .ws_col = (unsigned short)json_integer_value(json_object_get(req, "cols"))};
                if (ws.ws_row && ws.ws_col)
                        (void)ioctl(master, TIOCSWINSZ, &ws);
                pass[0] = pass[1] = pass[2] = slave;
                e.flags |= EXEC_TTY;
                /* run_pipe[0]: the master's output (from a dup of it, so
                 * that the two directions close apart); client_pipe[0]: out
                 * to the client; client_pipe[1]: the client's input in;
                 * run_pipe[1]: into the master */
                if (pipe2(client_pipe[0], O_CLOEXEC) < 0 || pipe2(client_pipe[1], O_CLOEXEC) < 0) {
                        reply_error(conn, "exec: cannot make the terminal's pipes: %s", strerror(errno));
                        return;
                }
                run_pipe[0][0] = fcntl(master, F_DUPFD_CLOEXEC, 3);
                run_pipe[1][1] = TAKE_FD(master);
                if (run_pipe[0][0] < 0) {
                        reply_error(conn, "exec: cannot relay the terminal: %s", strerror(errno));
                        return;
                }
                fcntl(run_pipe[0][0], F_SETFL, O_NONBLOCK);
                fcntl(run_pipe[1][1], F_SETFL, O_NONBLOCK);
                fcntl(client_pipe[0][1], F_SETFL, O_NONBLOCK);
                fcntl(client_pipe[1][0], F_SETFL, O_NONBLOCK);
        } else if (direct) {
                for (int i = 0; i < 3; i++)
                        if (fds[i] < 0) {
                                reply_error(conn, "exec: stdin, stdout and stderr must be passed");
                                return;
                        }
                if (check_passed_fds(fds, why, sizeof(why)) < 0) {
                        reply_error(conn, "%s", why);
                        return;
                }
        } else if (detach) {
                int p[2];
                char name[64];
                snprintf(name, sizeof(name), "runs/r%d.log", num);
                nul = open("/dev/null", O_RDWR | O_CLOEXEC);
                log_fd = openat(srv->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (nul < 0 || log_fd < 0 || pipe2(p, O_CLOEXEC) < 0) {
                        reply_error(conn, "cannot open the run's log: %s", strerror(errno));
                        if (log_fd >= 0)
                                close(log_fd);
                        return;
                }
                log_in = p[0];
                pw = p[1];
                fcntl(log_in, F_SETFL, O_NONBLOCK);
                pass[0] = nul;
                pass[1] = pass[2] = pw;
        } else {
                /* the client's descriptors go into the sandbox: the same
                 * checks as `cordon run` applies to its own stdio */
                for (int i = 0; i < 3; i++)
                        if (fds[i] < 0) {
                                reply_error(conn, "exec: stdin, stdout and stderr must be passed");
                                return;
                        }
                if (check_passed_fds(fds, why, sizeof(why)) < 0) {
                        reply_error(conn, "%s", why);
                        return;
                }
                /* stdin goes in as it is; stdout and stderr come back
                 * through the sentry, which records them as events and
                 * passes them on to the client (struct stream) */
                for (int k = 0; k < 2; k++) {
                        if (pipe2(run_pipe[k], O_CLOEXEC) < 0 || pipe2(client_pipe[k], O_CLOEXEC) < 0) {
                                reply_error(conn, "exec: cannot make the run's output pipes: %s", strerror(errno));
                                return;
                        }
                        fcntl(run_pipe[k][0], F_SETFL, O_NONBLOCK);
                        fcntl(client_pipe[k][1], F_SETFL, O_NONBLOCK);
                }
                pass[1] = run_pipe[0][1];
                pass[2] = run_pipe[1][1];
        }
        /* the run's own control group, which its first process enters
         * before anything of the run executes (initd.c exec_run) */
        _cleanup_close_ int procs = -1;
        if (st->cg) {
                int q = cgroup_run_create(st->cg, num, &procs);
                if (q < 0 && q != -EOPNOTSUPP) {
                        reply_error(conn, "exec: cannot make the run's control group: %s", strerror(-q));
                        return;
                }
        }
        if (procs >= 0)
                e.flags |= EXEC_CGROUP;
        int all[EXEC_MAX_FDS] = {pass[0], pass[1], pass[2]};
        size_t n_all = 3;
        if (hold)
                all[n_all++] = hold_rd;
        for (json_int_t i = 0; i < n_preserve; i++)
                all[n_all++] = fds[3 + i];
        /* last, where init looks for it (initd.c exec_run) */
        if (procs >= 0)
                all[n_all++] = procs;
        if (send_fds(st->sock, &e, offsetof(struct exec_msg, strings) + e.len, all, n_all) < 0) {
                if (procs >= 0)
                        (void)cgroup_run_remove(st->cg, num);
                reply_error(conn, "the sandbox's init is gone");
                if (log_in >= 0)
                        close(log_in);
                if (log_fd >= 0)
                        close(log_fd);
                return;
        }
        struct run_rec *r = &srv->runs[srv->n_runs++];
        *r = (struct run_rec){.num = num,
                              .argv = json_incref(json_object_get(req, "argv")),
                              .detached = detach,
                              .cgroup = procs >= 0,
                              .tty = tty,
                              .running = true,
                              .conn = -1,
                              .log_in = log_in,
                              .log_fd = log_fd,
                              .timer = -1,
                              .hold_wr = TAKE_FD(hold_wr),
                              .started = time(NULL)};
        if (is_main)
                srv->main_run = num;
        if (timeout_ms > 0)
                r->timer = arm_ms(CLOCK_MONOTONIC, false, timeout_ms);
        int back[2] = {-1, -1};
        size_t n_back = 0;
        if (tty) {
                /* the client reads the terminal's output from back[0] and
                 * writes its input into back[1] */
                r->streams = xcalloc(2, sizeof(struct stream));
                r->streams[0].in = TAKE_FD(run_pipe[0][0]);
                r->streams[0].to = TAKE_FD(client_pipe[0][1]);
                r->streams[1].in = TAKE_FD(client_pipe[1][0]);
                r->streams[1].to = TAKE_FD(run_pipe[1][1]);
                back[0] = client_pipe[0][0];
                back[1] = client_pipe[1][1];
                n_back = 2;
        } else if (run_pipe[0][0] >= 0) {
                r->streams = xcalloc(2, sizeof(struct stream));
                for (int k = 0; k < 2; k++) {
                        r->streams[k].in = TAKE_FD(run_pipe[k][0]);
                        r->streams[k].to = TAKE_FD(client_pipe[k][1]);
                        back[k] = client_pipe[k][0];
                }
                n_back = 2;
        }
        char id[16];
        snprintf(id, sizeof(id), "r%d", num);
        event(srv, "run_started", json_pack("{s:s, s:O, s:b}", "run", id, "argv", r->argv, "detached", detach));
        (void)control_send(conn, json_pack("{s:b, s:s}", "ok", 1, "run", id), n_back ? back : NULL, n_back);
        write_meta(st);
        if (!detach)
                r->conn = fcntl(conn, F_DUPFD_CLOEXEC, 3);
}

static void drain_log(struct serve *srv, struct run_rec *r);
static void streams_flush(struct serve *srv, struct run_rec *r);
static void stream_close(struct serve *srv, struct run_rec *r, int k);
static bool stream_pump(struct serve *srv, struct run_rec *r, int k);

static void run_ended(struct sandbox_state *st, struct run_rec *r, int status)
{
        struct serve *srv = st->serve;
        if (!r->running)
                return;
        /* what the run wrote before it exited is in the pipe already: its
         * events come before the exit's */
        for (int i = 0; i < 64 && r->log_in >= 0; i++) {
                int avail = 0;
                if (ioctl(r->log_in, FIONREAD, &avail) < 0 || avail == 0)
                        break;
                drain_log(srv, r);
        }
        /* a terminal's input has nowhere to go any more */
        if (r->tty && r->streams && r->streams[1].in >= 0)
                stream_close(srv, r, 1);
        streams_flush(srv, r);
        if (r->cgroup) {
                /* a cancelled or timed-out run: anything of it that got into
                 * its group after the kill (the kill and the run's first
                 * fork may cross) ends now too, and is waited for (the run
                 * itself is gone, so nothing of it is frozen mid-way: a
                 * short wait), so that the group can go at once */
                if (r->cancelled || r->timed_out)
                        (void)cgroup_run_kill(st->cg, r->num, true);
                /* empty unless the run left processes behind it (or
                 * killed ones are still on their way out): then it is
                 * tried again as later runs end, and goes with the
                 * sandbox's group at the latest */
                r->cgroup_left = cgroup_run_remove(st->cg, r->num) < 0;
                for (int i = 0; i < srv->n_runs; i++)
                        if (srv->runs[i].cgroup_left && !srv->runs[i].running && &srv->runs[i] != r)
                                srv->runs[i].cgroup_left = cgroup_run_remove(st->cg, srv->runs[i].num) < 0;
        }
        r->running = false;
        r->status = status;
        if (r->hold_wr >= 0)
                close(TAKE_FD(r->hold_wr));
        r->ended = time(NULL);
        if (r->timer >= 0) {
                close(r->timer);
                r->timer = -1;
        }
        json_t *j = run_json(r);
        json_t *ev = json_pack("{s:O, s:O, s:O}", "run", json_object_get(j, "id"), "status",
                               json_object_get(j, "status"), "exitCode", json_object_get(j, "exitCode"));
        if (json_object_get(j, "signal"))
                json_object_set(ev, "signal", json_object_get(j, "signal"));
        event(srv, "run_exited", ev);
        if (r->conn >= 0) {
                (void)control_send(r->conn,
                                   json_pack("{s:i, s:O, s:b}", "status", status, "exitCode",
                                             json_object_get(j, "exitCode"), "timedOut", r->timed_out),
                                   NULL, 0);
                close(r->conn);
                r->conn = -1;
        }
        json_decref(j);
        write_meta(st);
        /* the container's process ended: so does the container (what it
         * left running goes with the sandbox), and the sentry's exit
         * status becomes this one */
        if (srv->oci && r->num == srv->main_run && !srv->main_ended) {
                srv->main_ended = true;
                srv->main_status = status;
                if (!srv->terminate) {
                        srv->terminate = true;
                        srv->end_reason = "exited";
                        srv->status = "stopped";
                        write_meta(st);
                        sandbox_kill_all(st);
                }
        }
}

/* A detached run's output, into its log, bounded. */
/* One line of a detached run's output as an event: a line that is a JSON
 * object is recorded as structured data (so its credential-like fields are
 * masked), any other as text. */
static void output_event(struct serve *srv, struct run_rec *r, const char *text, size_t len, bool split,
                         const char *stream)
{
        char id[16];
        snprintf(id, sizeof(id), "r%d", r->num);
        if (r->output_events == RUN_OUTPUT_EVENTS) {
                event(srv, "output_truncated", json_pack("{s:s, s:i}", "run", id, "limit", RUN_OUTPUT_EVENTS));
                r->output_events++;
        }
        if (r->output_events > RUN_OUTPUT_EVENTS)
                return;
        r->output_events++;
        json_error_t jerr;
        json_t *data = split ? NULL : json_loadb(text, len, JSON_DECODE_ANY, &jerr);
        json_t *ev = json_pack("{s:s}", "run", id);
        if (stream)
                json_object_set_new(ev, "stream", json_string(stream));
        if (json_is_object(data))
                json_object_set_new(ev, "data", data);
        else {
                json_decref(data);
                json_object_set_new(ev, "text", json_text(text, len));
                if (split)
                        json_object_set_new(ev, "continued", json_true());
        }
        event(srv, "output", ev);
}

static void output_lines(struct serve *srv, struct run_rec *r, const char *buf, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                if (buf[i] == '\n') {
                        output_event(srv, r, r->line, r->line_len, false, NULL);
                        r->line_len = 0;
                        continue;
                }
                if (r->line_len == sizeof(r->line)) {
                        output_event(srv, r, r->line, r->line_len, true, NULL);
                        r->line_len = 0;
                }
                r->line[r->line_len++] = buf[i];
        }
}

static void drain_log(struct serve *srv, struct run_rec *r)
{
        char buf[16384];
        /* bounded per call: a run that writes without pause must not keep
         * the serve loop from everything else (while its lines still become
         * events, a few thousand of them at most per call) */
        int rounds = r->output_events <= RUN_OUTPUT_EVENTS ? 1 : 16;
        size_t chunk = r->output_events <= RUN_OUTPUT_EVENTS ? 4096 : sizeof(buf);
        for (int round = 0; round < rounds; round++) {
                ssize_t n = read(r->log_in, buf, chunk);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        if (n == 0 || errno != EAGAIN) {
                                if (r->line_len > 0)
                                        output_event(srv, r, r->line, r->line_len, false, NULL);
                                r->line_len = 0;
                                close(r->log_in);
                                r->log_in = -1;
                                close(r->log_fd);
                                r->log_fd = -1;
                        }
                        return;
                }
                output_lines(srv, r, buf, (size_t)n);
                if (r->log_bytes + n <= RUN_LOG_MAX) {
                        (void)write_all(r->log_fd, buf, (size_t)n);
                        r->log_bytes += n;
                } else if (!r->log_truncated) {
                        static const char marker[] = "\n[cordon: output truncated at the log's limit]\n";
                        (void)write_all(r->log_fd, marker, sizeof(marker) - 1);
                        r->log_truncated = true;
                }
        }
}

static const char *const stream_names[2] = {"stdout", "stderr"};

static const char *stream_name(const struct run_rec *r, int k)
{
        return r->tty ? "tty" : stream_names[k];
}

static void stream_lines(struct serve *srv, struct run_rec *r, int k, const char *buf, size_t n)
{
        struct stream *sm = &r->streams[k];
        if (r->tty && k == 1)
                return; /* what the client types: its echo comes back on stream 0 */
        for (size_t i = 0; i < n; i++) {
                if (buf[i] == '\n') {
                        /* a terminal ends its lines with \r\n */
                        size_t len = sm->line_len;
                        if (r->tty && len > 0 && sm->line[len - 1] == '\r')
                                len--;
                        output_event(srv, r, sm->line, len, false, stream_name(r, k));
                        sm->line_len = 0;
                        continue;
                }
                if (sm->line_len == sizeof(sm->line)) {
                        output_event(srv, r, sm->line, sm->line_len, true, stream_name(r, k));
                        sm->line_len = 0;
                }
                sm->line[sm->line_len++] = buf[i];
        }
}

static void stream_close(struct serve *srv, struct run_rec *r, int k)
{
        struct stream *sm = &r->streams[k];
        if (sm->line_len > 0)
                output_event(srv, r, sm->line, sm->line_len, false, stream_name(r, k));
        sm->line_len = 0;
        if (sm->in >= 0)
                close(TAKE_FD(sm->in));
        if (sm->to >= 0)
                close(TAKE_FD(sm->to));
        sm->off = sm->len = 0;
}

/* Moves what it can of stream k from the run to the client without
 * blocking; returns true while the stream has something left to do. */
static bool stream_pump(struct serve *srv, struct run_rec *r, int k)
{
        struct stream *sm = &r->streams[k];
        for (int round = 0; round < 16; round++) {
                if (sm->off < sm->len) {
                        ssize_t w = write(sm->to, sm->buf + sm->off, sm->len - sm->off);
                        if (w < 0 && (errno == EAGAIN || errno == EINTR))
                                return true; /* the client is behind: wait for it */
                        if (w < 0) {
                                /* the client's end is gone: the run's own
                                 * writes now fail, as on a closed stream */
                                stream_close(srv, r, k);
                                return false;
                        }
                        sm->off += (size_t)w;
                        if (sm->off < sm->len)
                                return true;
                        sm->off = sm->len = 0;
                }
                if (sm->in < 0) {
                        stream_close(srv, r, k);
                        return false;
                }
                ssize_t n = read(sm->in, sm->buf, sizeof(sm->buf));
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        return true;
                if (n == 0 && r->tty && k == 1 && sm->to >= 0) {
                        /* the client's input ended: on a terminal that is
                         * its EOF character, not a closed master */
                        struct termios t;
                        if (tcgetattr(sm->to, &t) == 0 && t.c_cc[VEOF])
                                (void)!write(sm->to, &t.c_cc[VEOF], 1);
                }
                if (n <= 0) {
                        stream_close(srv, r, k);
                        return false;
                }
                stream_lines(srv, r, k, sm->buf, (size_t)n);
                sm->len = (size_t)n;
                sm->off = 0;
        }
        return true;
}

/* At the run's exit, what it wrote is passed on before its status (bounded:
 * a process it left behind may hold the pipe open; its output follows
 * later through the serve loop). */
static void streams_flush(struct serve *srv, struct run_rec *r)
{
        if (!r->streams)
                return;
        for (int round = 0; round < 40; round++) {
                struct pollfd q[2];
                int busy = 0;
                for (int k = 0; k < 2; k++) {
                        q[k] = (struct pollfd){-1, 0, 0};
                        if (!stream_pump(srv, r, k))
                                continue;
                        struct stream *sm = &r->streams[k];
                        q[k] = sm->off < sm->len ? (struct pollfd){sm->to, POLLOUT, 0}
                                                 : (struct pollfd){sm->in, POLLIN, 0};
                        busy++;
                }
                if (!busy || poll(q, 2, 50) <= 0)
                        return;
        }
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

/* The gate's audit lines become events. */
static void on_audit(struct sandbox_state *st, json_t *rec)
{
        event(st->serve, "audit", json_pack("{s:o}", "record", rec));
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
                write_meta(st);
        }
        event(srv, "transfer", rec);
}

/* The run a sandbox process belongs to: its thread group, then up its
 * parents (host /proc) until one is a run's first process (init reports
 * those pids in the sandbox's namespace). "" when none is. */
static void run_of_pid(struct serve *srv, pid_t pid, char *buf, size_t size)
{
        buf[0] = '\0';
        bool tgid_done = false;
        for (int depth = 0; pid > 1 && depth < 64; depth++) {
                char path[64], line[256];
                snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
                _cleanup_fclose_ FILE *f = fopen(path, "re");
                if (!f)
                        return;
                pid_t ppid = 0, nspid = 0, tgid = 0;
                while (fgets(line, sizeof(line), f)) {
                        if (startswith(line, "PPid:"))
                                ppid = (pid_t)atoi(line + 5);
                        else if (startswith(line, "Tgid:"))
                                tgid = (pid_t)atoi(line + 5);
                        else if (startswith(line, "NSpid:")) {
                                const char *last = strrchr(line, '\t');
                                nspid = (pid_t)atoi(last ? last + 1 : line + 6);
                        }
                }
                if (!tgid_done && tgid > 0 && tgid != pid) {
                        tgid_done = true;
                        pid = tgid; /* a thread: its process decides */
                        continue;
                }
                tgid_done = true;
                for (int i = 0; i < srv->n_runs; i++)
                        if (srv->runs[i].pid > 0 && srv->runs[i].pid == nspid) {
                                snprintf(buf, size, "r%d", srv->runs[i].num);
                                return;
                        }
                pid = ppid;
        }
}

/* The approver's queued events become the sandbox's events; the pending
 * set, changed, goes to meta.json. */
static bool read_init(struct sandbox_state *st);
static void drain_approvals(struct sandbox_state *st)
{
        struct serve *srv = st->serve;
        char buf[256];
        while (read(srv->appr_wake_rd, buf, sizeof(buf)) > 0)
                ;
        if (!st->approvals)
                return;
        json_t *evs = approvals_take_events(st->approvals);
        bool changed = false;
        size_t i;
        json_t *ev;
        json_array_foreach(evs, i, ev)
        {
                const char *type = json_string_value(json_object_get(ev, "type"));
                if (!type)
                        continue;
                char t[64];
                snprintf(t, sizeof(t), "%s", type);
                json_t *body = json_deep_copy(ev);
                json_object_del(body, "type");
                if (streq(t, "audit")) {
                        event(srv, "audit", body);
                        continue;
                }
                json_int_t pid = json_integer_value(json_object_get(json_object_get(ev, "summary"), "pid"));
                char run[16];
                run_of_pid(srv, (pid_t)pid, run, sizeof(run));
                if (!run[0] && streq(t, "approval_required")) {
                        /* a run's first process can ask before init's word
                         * of its pid has been read: read it (bounded) */
                        struct pollfd ip = {st->sock, POLLIN, 0};
                        while (st->sock >= 0 && poll(&ip, 1, 100) > 0 && read_init(st))
                                ;
                        run_of_pid(srv, (pid_t)pid, run, sizeof(run));
                }
                if (run[0])
                        json_object_set_new(body, "run", json_string(run));
                event(srv, t, body);
                changed = true;
        }
        json_decref(evs);
        if (changed)
                write_meta(st);
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
        drain_approvals(st);
        write_meta(st);
        sandbox_kill_all(st);
}

/* `sandbox approve|deny ID REQ [--remember]`: who decided is the client's
 * SO_PEERCRED (checked at accept to be root or the sandbox's owner). */
static void decide(struct sandbox_state *st, int conn, json_t *req, bool approve)
{
        struct serve *srv = st->serve;
        const char *id = json_string_value(json_object_get(req, "request"));
        bool remember = json_is_true(json_object_get(req, "remember"));
        if (!id || strlen(id) > 20) {
                reply_error(conn, "%s: which request? (see `cordon sandbox pending %s`)", approve ? "approve" : "deny",
                            srv->id);
                return;
        }
        if (remember && !approve) {
                reply_error(conn, "deny: --remember is for approvals only (a denial is never remembered)");
                return;
        }
        struct ucred cred = {0};
        socklen_t l = sizeof(cred);
        char who[64];
        if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &l) == 0)
                snprintf(who, sizeof(who), "uid %u pid %d", (unsigned)cred.uid, (int)cred.pid);
        else
                snprintf(who, sizeof(who), "client");
        char err[200];
        int r = approvals_decide(st->approvals, id, approve, remember, who, err, sizeof(err));
        drain_approvals(st);
        if (r < 0) {
                reply_error(conn, "sandbox %s: %s", srv->id, err);
                return;
        }
        (void)control_send(conn,
                           json_pack("{s:b, s:s, s:s, s:b, s:s}", "ok", 1, "request", id, "decision",
                                     approve ? "approved" : "denied", "remember", remember, "decidedBy", who),
                           NULL, 0);
}

/* inspect's reply: the live metadata, which must fit one control message.
 * A sandbox keeps up to MAX_RUNS run records, far more than fit: the oldest
 * ended runs are left out (counted in runsOmitted; meta.json and the
 * run_exited events keep them all), running ones never. */
static json_t *inspect_json(struct sandbox_state *st)
{
        json_t *j = meta_json(st, true);
        json_t *runs = json_incref(json_object_get(j, "runs"));
        size_t n = json_array_size(runs);
        size_t *sizes = xcalloc(n + 1, sizeof(size_t));
        size_t total = 0;
        for (size_t i = 0; i < n; i++) {
                char *t = json_dumps(json_array_get(runs, i), JSON_COMPACT);
                sizes[i] = (t ? strlen(t) : 0) + 1;
                total += sizes[i];
                free(t);
        }
        json_object_del(j, "runs");
        char *rest = json_dumps(j, JSON_COMPACT);
        size_t budget = CONTROL_MAX_MSG - 1024;
        size_t base = rest ? strlen(rest) : budget;
        free(rest);
        json_t *kept = json_array();
        size_t omitted = 0;
        for (size_t i = 0; i < n; i++) {
                json_t *r = json_array_get(runs, i);
                bool running = streq(json_string_value(json_object_get(r, "status")) ?: "", "running");
                if (!running && base + total > budget) {
                        total -= sizes[i];
                        omitted++;
                        continue;
                }
                json_array_append(kept, r);
        }
        free(sizes);
        json_decref(runs);
        json_object_set_new(j, "runs", kept);
        json_object_set_new(j, "runsOmitted", json_integer((json_int_t)omitted));
        return j;
}

static void handle_request(struct sandbox_state *st, int conn, json_t *req, int fds[EXEC_MAX_FDS])
{
        struct serve *srv = st->serve;
        const char *op = json_string_value(json_object_get(req, "op"));
        if (!op)
                op = "";
        if (srv->terminate) {
                reply_error(conn, "sandbox %s is being terminated", srv->id);
                return;
        }
        if (streq(op, "exec")) {
                do_exec(st, conn, req, fds);
        } else if (streq(op, "start") && srv->oci) {
                struct run_rec *r = srv->main_run ? find_run(srv, srv->main_run) : NULL;
                if (!r || !r->running) {
                        reply_error(conn, "container %s has no process to start%s", srv->id,
                                    r ? " (it has already exited)" : "");
                        return;
                }
                if (r->hold_wr < 0) {
                        reply_error(conn, "container %s has already been started", srv->id);
                        return;
                }
                char go = 1;
                ssize_t w = write(r->hold_wr, &go, 1);
                close(TAKE_FD(r->hold_wr));
                if (w != 1) {
                        reply_error(conn, "cannot start container %s: %s", srv->id,
                                    w < 0 ? strerror(errno) : "its process is gone");
                        return;
                }
                event(srv, "started", json_pack("{s:i}", "run", r->num));
                (void)control_send(conn, json_pack("{s:b}", "ok", 1), NULL, 0);
        } else if (streq(op, "kill") && srv->oci) {
                /* OCI kill: the container's process (all: every process of
                 * the sandbox but its init); works before start too */
                json_int_t sig = json_integer_value(json_object_get(req, "signal"));
                bool all = json_is_true(json_object_get(req, "all"));
                struct run_rec *r = srv->main_run ? find_run(srv, srv->main_run) : NULL;
                if (sig <= 0 || sig >= 65) {
                        reply_error(conn, "kill: signal %lld is out of range", (long long)sig);
                        return;
                }
                if (!all && (!r || !r->running)) {
                        reply_error(conn, "container not running");
                        return;
                }
                if (all) {
                        struct msg m = {.type = MSG_KILL, .value = (int32_t)sig, .aux = -1};
                        (void)send(st->sock, &m, sizeof(m), MSG_NOSIGNAL);
                }
                if (r && r->running)
                        kill_run(st, r, (int)sig);
                (void)control_send(conn, json_pack("{s:b}", "ok", 1), NULL, 0);
        } else if (streq(op, "terminate")) {
                event(srv, "terminated", NULL);
                begin_end(st, "terminated");
                (void)control_send(conn, json_pack("{s:b}", "ok", 1), NULL, 0);
        } else if (streq(op, "pause") || streq(op, "resume")) {
                bool pause = streq(op, "pause");
                if (!st->cg) {
                        reply_error(conn,
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
                        reply_error(conn,
                                    "cannot %s sandbox %s: no cgroup freezer is available for it (cgroup v1 "
                                    "without a freezer hierarchy and no cgroup v2 group, or a kernel before "
                                    "5.2 without cgroup.freeze); it keeps running",
                                    op, srv->id);
                        return;
                }
                if (r < 0) {
                        reply_error(conn, "cannot %s sandbox %s: %s", op, srv->id, strerror(-r));
                        return;
                }
                srv->status = pause ? "paused" : "running";
                event(srv, pause ? "paused" : "resumed", NULL);
                write_meta(st);
                (void)control_send(conn, json_pack("{s:b, s:s}", "ok", 1, "status", srv->status), NULL, 0);
        } else if (streq(op, "inspect")) {
                (void)control_send(conn, inspect_json(st), NULL, 0);
        } else if (streq(op, "approve") || streq(op, "deny")) {
                decide(st, conn, req, streq(op, "approve"));
        } else if (streq(op, "pending")) {
                (void)control_send(conn, json_pack("{s:o}", "pending", approvals_pending_json(st->approvals)), NULL, 0);
        } else if (streq(op, "cancel")) {
                struct run_rec *r = find_run_id(srv, json_string_value(json_object_get(req, "run")));
                if (!r) {
                        reply_error(conn, "no run %s in sandbox %s", json_string_value(json_object_get(req, "run")),
                                    srv->id);
                        return;
                }
                if (!r->running) {
                        reply_error(conn, "run %s has already ended (%s)",
                                    json_string_value(json_object_get(req, "run")),
                                    r->cancelled   ? "cancelled"
                                    : r->timed_out ? "timeout"
                                                   : "exited");
                        return;
                }
                /* marked before the kill: an exit that arrives afterwards,
                 * even a success, never turns it back */
                r->cancelled = true;
                kill_run(st, r, SIGKILL);
                event(srv, "run_cancelled", json_pack("{s:s}", "run", json_string_value(json_object_get(req, "run"))));
                write_meta(st);
                (void)control_send(conn, json_pack("{s:b, s:b}", "ok", 1, "cancelled", 1), NULL, 0);
        } else if (streq(op, "put") || streq(op, "get") || streq(op, "ls") || streq(op, "snapshot")) {
                const char *path = json_string_value(json_object_get(req, "path"));
                if (!streq(op, "snapshot") && (!path || path[0] != '/' || strlen(path) >= 4096)) {
                        reply_error(conn, "%s: the path in the sandbox must be absolute", op);
                        return;
                }
                if (!streq(op, "ls") && fds[0] < 0) {
                        reply_error(conn, "%s: no local file was passed", op);
                        return;
                }
                const char *why = NULL;
                if (streq(op, "snapshot") && (archive_dl_load(&why) < 0 || crypto_dl_load(&why) < 0)) {
                        /* here, on the main thread: the transfer thread is
                         * chrooted into the view (common/dl.h) */
                        reply_error(conn, "snapshot: %s", why);
                        return;
                }
                struct xfer *x = xcalloc(1, sizeof(*x));
                x->st = st;
                x->conn = fcntl(conn, F_DUPFD_CLOEXEC, 3);
                x->fd = TAKE_FD(fds[0]);
                x->op = xstrdup(op);
                x->path = xstrdup(path ? path : "/");
                x->mode = (int)json_integer_value(json_object_get(req, "mode"));
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
                        reply_error(conn, "%s: cannot start the transfer: %s", op, strerror(-r));
        } else
                reply_error(conn, "unknown request '%s'", op);
}

static void accept_conn(struct serve *srv)
{
        int c = accept4(srv->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (c < 0)
                return;
        /* only root and the user who created the sandbox may drive it */
        struct ucred cred;
        socklen_t l = sizeof(cred);
        if (getsockopt(c, SOL_SOCKET, SO_PEERCRED, &cred, &l) < 0 || (cred.uid != 0 && cred.uid != srv->owner)) {
                reply_error(c, "permission denied: sandbox %s belongs to uid %u", srv->id, (unsigned)srv->owner);
                close(c);
                return;
        }
        for (size_t i = 0; i < MAX_CONNS; i++)
                if (srv->conns[i] < 0) {
                        srv->conns[i] = c;
                        return;
                }
        reply_error(c, "sandbox %s is busy (%d requests pending)", srv->id, MAX_CONNS);
        close(c);
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
                        reply_error(c, "a request is one JSON object");
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

/* A message on a waiting exec client's connection: a signal to forward,
 * or the client gone (its run goes on: closing a client only stops it
 * waiting). */
static void read_run_conn(struct sandbox_state *st, struct run_rec *r)
{
        json_t *req = NULL;
        int fds[1];
        int n = control_recv(r->conn, &req, fds, 0);
        if (n <= 0) {
                close(r->conn);
                r->conn = -1;
                return;
        }
        json_int_t sig = json_integer_value(json_object_get(req, "signal"));
        if (sig > 0 && sig < 65 && r->running)
                kill_run(st, r, (int)sig);
        /* the client's terminal changed size: the run's follows (the kernel
         * sends the run's foreground group SIGWINCH) */
        json_int_t rows = json_integer_value(json_object_get(req, "rows")),
                   cols = json_integer_value(json_object_get(req, "cols"));
        if (r->tty && r->streams && r->streams[0].in >= 0 && rows > 0 && rows < 65536 && cols > 0 && cols < 65536) {
                struct winsize ws = {.ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols};
                (void)ioctl(r->streams[0].in, TIOCSWINSZ, &ws);
        }
        json_decref(req);
}

/* One message from init, if there is one: true when one was read. */
static bool read_init(struct sandbox_state *st)
{
        struct serve *srv = st->serve;
        struct msg m;
        if (st->sock < 0)
                return false;
        ssize_t n = recv(st->sock, &m, sizeof(m), MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
                close(st->sock);
                st->sock = -1;
                return false;
        }
        if (n != (ssize_t)sizeof(m))
                return false;
        struct run_rec *r = find_run(srv, (int)m.aux);
        if (!r)
                return true;
        if (m.type == MSG_RUN_PID)
                r->pid = m.value;
        else if (m.type == MSG_RUN_EXIT)
                run_ended(st, r, m.value);
        return true;
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

int serve_loop(struct sandbox_state *st)
{
        struct serve *srv = st->serve;
        _cleanup_close_ int sfd = signalfd(-1, &st->sigmask, SFD_CLOEXEC | SFD_NONBLOCK);
        _cleanup_close_ int life_fd = -1, expiry_fd = -1;
        if (st->limits.timeout_ms > 0)
                life_fd = arm_ms(CLOCK_MONOTONIC, false, st->limits.timeout_ms);
        if (st->limits.expires_at != (time_t)-1)
                expiry_fd = arm_ms(CLOCK_REALTIME, true, (int64_t)st->limits.expires_at * 1000);
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
        if (!srv->terminate) {
                srv->status = "running";
                json_t *ev = json_pack("{s:s}", "sandbox", srv->id);
                if (srv->snapshot)
                        json_object_set_new(ev, "fromSnapshot", json_string(srv->snapshot));
                event(srv, "created", ev);
                write_meta(st);
                announce_ready(srv);
        }

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
                for (int i = 0; i < srv->n_runs && n + 5 <= ELEMENTSOF(p); i++) {
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
                if (poll(p, n, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        /* the loop cannot go on: the sandbox must not run
                         * unsupervised, nor the wait below block on a live
                         * init */
                        fprintf(stderr, "cordon: sandbox %s: poll: %m; ending the sandbox\n", srv->id);
                        if (!srv->terminate)
                                event(srv, "killed", json_pack("{s:s}", "reason", "the sentry's loop failed"));
                        begin_end(st, "sentry-error");
                        break;
                }
                if (p[P_SIG].revents & POLLIN) {
                        struct signalfd_siginfo si;
                        while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
                                int sig = (int)si.ssi_signo;
                                if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP || sig == SIGQUIT) {
                                        event(srv, "terminated", json_pack("{s:i}", "signal", sig));
                                        begin_end(st, "terminated");
                                }
                        }
                }
                if (p[P_INIT].revents)
                        read_init(st);
                if (p[P_AUDIT].revents)
                        drain_lines(st, &srv->audit, on_audit);
                if (p[P_DONE].revents)
                        drain_lines(st, &srv->done, on_transfer_done);
                if (p[P_APPROVALS].revents)
                        drain_approvals(st);
                if ((p[P_LIFE].revents & POLLIN) || (p[P_EXPIRY].revents & POLLIN)) {
                        if (!srv->terminate)
                                event(srv, "expired", NULL);
                        begin_end(st, "expired");
                        if (life_fd >= 0)
                                close(TAKE_FD(life_fd));
                        if (expiry_fd >= 0)
                                close(TAKE_FD(expiry_fd));
                }
                if (p[P_LISTEN].revents & POLLIN)
                        accept_conn(srv);
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
                                        read_run_conn(st, r);
                                break;
                        case 2:
                                if (r->log_in >= 0)
                                        drain_log(srv, r);
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
                                        kill_run(st, r, SIGKILL);
                                }
                                break;
                        default:
                                break;
                        }
                }
                sync_events(srv);
                if (p[P_PIDFD].revents & POLLIN)
                        break;
        }

        /* init is gone, and with it every process of the sandbox */
        int init_status = 0;
        while (waitpid(st->init_pid, &init_status, 0) < 0 && errno == EINTR)
                ;
        if (!srv->terminate) {
                srv->end_reason = "killed";
                event(srv, "killed",
                      json_pack("{s:s, s:i, s:i}", "reason", "the sandbox's init died", "exitStatus",
                                WIFEXITED(init_status) ? WEXITSTATUS(init_status) : -1, "signal",
                                WIFSIGNALED(init_status) ? WTERMSIG(init_status) : 0));
        }
        if (srv->ready_fd >= 0)
                fprintf(stderr, "cordon: the sandbox ended during set-up\n");
        for (int i = 0; i < srv->n_runs; i++) {
                struct run_rec *r = &srv->runs[i];
                if (r->log_in >= 0)
                        drain_log(srv, r);
                run_ended(st, r, SIGKILL);
        }
        drain_lines(st, &srv->audit, on_audit);
        /* the sandbox is over: whatever is still pending is denied */
        approvals_close(st->approvals, srv->end_reason && streq(srv->end_reason, "terminated") ? "terminate"
                                       : srv->end_reason                                       ? srv->end_reason
                                                                                               : "killed");
        drain_approvals(st);
        /* transfers still running hold the view's root; let them finish (bounded) */
        for (int i = 0; i < 100 && xfer_active() > 0; i++)
                usleep(50 * 1000);
        drain_lines(st, &srv->done, on_transfer_done);
        event(srv, "ended", json_pack("{s:s}", "reason", srv->end_reason ? srv->end_reason : "killed"));
        sync_events(srv);
        st->exit_reason = srv->end_reason ? srv->end_reason : "killed";
        if (srv->ready_fd >= 0)
                return EXIT_SANDBOX;
        if (srv->oci && srv->main_ended)
                return WIFEXITED(srv->main_status)     ? WEXITSTATUS(srv->main_status)
                       : WIFSIGNALED(srv->main_status) ? 128 + WTERMSIG(srv->main_status)
                                                       : EXIT_SANDBOX;
        return srv->oci ? 128 + SIGKILL : 0;
}
