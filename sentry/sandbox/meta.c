/* meta.json, a long-lived sandbox's state as others read it (`list`, a
 * snapshot's record, `inspect` live): the sandbox, its limits and isolation,
 * its runs' records and its pending approvals, replaced atomically each
 * time it changes. */
#include "config.h"

#include <fcntl.h>
#include <jansson.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>

#include "sentry/approvals/approvals.h"
#include "sentry/sandbox/sandbox-internal.h"

json_t *meta_run_json(const struct run_rec *r)
{
        char start[32], end[32];
        event_iso_time(r->started, start);
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
                event_iso_time(r->ended, end);
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
        return json_pack("{s:[sssssss], s:o, s:I, s:I, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "namespaces", "user",
                         "mount", "pid", "net", "ipc", "uts", "cgroup", "identity", sandbox_identity_json(st),
                         "hostUid", (json_int_t)st->uid, "hostGid", (json_int_t)st->gid, "view",
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

json_t *meta_json(const struct sandbox_state *st, bool live)
{
        const struct serve *srv = st->serve;
        char created[32], expires[32];
        event_iso_time(srv->created, created);
        const struct run_limits *l = &st->limits;
        json_t *policy = json_incref(srv->policy_json);
        json_t *j = json_pack("{s:s, s:s, s:s, s:I, s:I, s:o, s:{s:I, s:I, s:I, s:I, s:I}, s:o}", "id", srv->id,
                              "status", srv->status, "createdAt", created, "sentryPid", (json_int_t)getpid(), "initPid",
                              (json_int_t)st->init_pid, "policy", policy ? policy : json_null(), "limits",
                              "memoryBytes", (json_int_t)l->memory_bytes, "cpuMillis", (json_int_t)l->cpu_millis,
                              "diskBytes", (json_int_t)l->disk_bytes, "maxProcesses", (json_int_t)l->max_processes,
                              "maxOpenFiles", (json_int_t)l->max_open_files, "isolation", isolation_json(st));
        if (srv->expires != (time_t)-1) {
                event_iso_time(srv->expires, expires);
                json_object_set_new(j, "expiresAt", json_string(expires));
        } else
                json_object_set_new(j, "expiresAt", json_null());
        json_t *runs = json_array();
        for (int i = 0; i < srv->n_runs; i++)
                json_array_append_new(runs, meta_run_json(&srv->runs[i]));
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

void meta_write(struct sandbox_state *st)
{
        struct serve *srv = st->serve;
        srv->meta_dirty = false; /* this write has all there is */
        json_t *j = meta_json(st, false);
        char *text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
        json_decref(j);
        if (!text)
                return;
        /* write-then-rename: a reader (list, inspect) never sees half of it */
        _cleanup_close_ int fd =
                openat(srv->dirfd, "meta.json.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd >= 0 && write_all(fd, text, strlen(text)) == 0 && (!srv->state_durable || fdatasync(fd) == 0))
                (void)renameat(srv->dirfd, "meta.json.tmp", srv->dirfd, "meta.json");
        free(text);
}

/* Each write is the whole document, every run's record in it (up to
 * MAX_RUNS): made, dumped and replaced at each run's start and end, it
 * cost a sandbox that runs commands in a row more with each one (the
 * serving sentry's CPU per `exec` of /bin/true went from 1.7 ms to 2.9 ms
 * over 300 runs). Runs that start and end close together now share one.
 * Nothing waits on the file for a run: exec's status and `inspect` come
 * from the sentry itself, the events log is written at once. An OCI
 * engine reads its container's status from the file right after a call
 * returns, so a container's are written at once. */
void meta_write_soon(struct sandbox_state *st)
{
        struct serve *srv = st->serve;
        if (srv->oci) {
                meta_write(st);
                return;
        }
        if (!srv->meta_dirty) {
                srv->meta_dirty = true;
                srv->meta_due_ms = monotonic_ms() + META_SOON_MS;
        }
}

int meta_wait_ms(const struct serve *srv)
{
        if (!srv->meta_dirty)
                return -1;
        int64_t left = srv->meta_due_ms - monotonic_ms();
        return left > 0 ? (int)left : 0;
}

void meta_write_due(struct sandbox_state *st)
{
        if (st->serve->meta_dirty && meta_wait_ms(st->serve) == 0)
                meta_write(st);
}

/* inspect's reply: the live metadata, which must fit one control message.
 * A sandbox keeps up to MAX_RUNS run records, far more than fit: the oldest
 * ended runs are left out (counted in runsOmitted; meta.json and the
 * run_exited events keep them all), running ones never. */
json_t *meta_inspect_json(struct sandbox_state *st)
{
        json_t *j = meta_json(st, true);
        /* the exposed ports (at most 32 small records: within the budget below) */
        json_t *ports = st->serve ? ports_json(st->serve) : NULL;
        if (json_array_size(ports) > 0)
                json_object_set(j, "ports", ports);
        json_decref(ports);
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
