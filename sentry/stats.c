/* --stats FILE: what the sandbox used, written when it ends. */
#include "config.h"

#include <fcntl.h>
#include <jansson.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include "common/util.h"
#include "sentry/policy/policy.h"
#include "sentry/sentry-internal.h"

static json_t *int_or_null(int64_t v)
{
        return v < 0 ? json_null() : json_integer(v);
}

/* Unprivileged with the caller's ranges, "host" is the first id of the
 * range (inside i is host start + i) but for the caller, which is named. */
json_t *sandbox_identity_json(const struct sandbox_state *st)
{
        const struct fs_ids *m = &st->plan->ids;
        const struct subid_range *sub = &st->subid;
        char *caps = policy_caps_format(st->plan->caps);
        json_t *j = json_pack("{s:{s:I,s:I,s:I}, s:{s:I,s:I,s:I}, s:I, s:I, s:s, s:s}", "uids", "inside",
                              (json_int_t)m->uid_inside, "host", (json_int_t)(sub->used ? sub->uid_start : m->uid_host),
                              "count", (json_int_t)m->count, "gids", "inside", (json_int_t)m->gid_inside, "host",
                              (json_int_t)(sub->used ? sub->gid_start : m->gid_host), "count", (json_int_t)m->count,
                              "uid", (json_int_t)st->plan->cmd_uid, "gid", (json_int_t)st->plan->cmd_gid,
                              "rootCapabilities", caps, "noNewPrivs", "always");
        free(caps);
        if (j && sub->used) {
                json_object_set_new(json_object_get(j, "uids"), "caller",
                                    json_pack("{s:I,s:I}", "inside", (json_int_t)sub->uid_pos, "host",
                                              (json_int_t)sub->caller_uid));
                json_object_set_new(json_object_get(j, "gids"), "caller",
                                    json_pack("{s:I,s:I}", "inside", (json_int_t)sub->gid_pos, "host",
                                              (json_int_t)sub->caller_gid));
        }
        return j;
}

char *identity_describe(const struct sandbox_state *st)
{
        const struct fs_ids *im = &st->plan->ids;
        const struct subid_range *sub = &st->subid;
        if (sub->used)
                return xasprintf("uids/gids 0-%u in the sandbox: %u/%u is you (host %u/%u), any other N is host "
                                 "%u+N / %u+N (your /etc/subuid and /etc/subgid ranges, mapped by newuidmap)",
                                 SUBID_COUNT - 1, sub->uid_pos, sub->gid_pos, sub->caller_uid, sub->caller_gid,
                                 sub->uid_start, sub->gid_start);
        if (im->count > 1)
                return xasprintf("uids/gids 0-%u in the sandbox = host %u-%u / %u-%u (its own range)", im->count - 1,
                                 im->uid_host, im->uid_host + (im->count - 1), im->gid_host,
                                 im->gid_host + (im->count - 1));
        return xasprintf("one id: uid %u gid %u in the sandbox = host %u/%u (the single-id map: %s)", im->uid_inside,
                         im->gid_inside, sub->caller_uid, sub->caller_gid,
                         sub->why[0] ? sub->why : "no /etc/subuid range is used");
}

int write_stats(struct sandbox_state *st, const char *path, int exit_code)
{
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t wall_ms = (now.tv_sec - st->started.tv_sec) * 1000 + (now.tv_nsec - st->started.tv_nsec) / 1000000;

        struct cg_stats cs = {-1, -1, -1, -1, -1, -1, -1};
        if (st->cg)
                (void)cgroup_stats(st->cg, &cs);

        int64_t written = -1;
        struct statfs sf;
        if (st->writable_fd >= 0 && fstatfs(st->writable_fd, &sf) == 0)
                written = (int64_t)(sf.f_blocks - sf.f_bfree) * (int64_t)sf.f_bsize;

        /* trappedSyscalls: calls per syscall; trappedSyscallTime: the
         * sentry's time on them, from receiving each call to the reply that
         * wakes the caller (the kernel's round trip, a few microseconds per
         * call, bench/micro/floor.c, comes on top) */
        json_t *trapped = json_object(), *timing = json_object();
        for (size_t i = 0; i < st->n_trapped; i++) {
                const struct trapped_count *t = &st->trapped[i];
                if (json_object_get(trapped, t->name))
                        continue; /* a syscall with two rows (conditions) */
                json_object_set_new(trapped, t->name, json_integer((json_int_t)t->count));
                if (!t->count)
                        continue;
                json_t *one = json_object();
                json_object_set_new(one, "calls", json_integer((json_int_t)t->count));
                json_object_set_new(one, "totalUs", json_integer((json_int_t)(t->total_ns / 1000)));
                json_object_set_new(one, "meanNs", json_integer((json_int_t)(t->total_ns / t->count)));
                json_object_set_new(one, "maxUs", json_integer((json_int_t)(t->max_ns / 1000)));
                json_object_set_new(timing, t->name, one);
        }

        json_t *root = json_object();
        json_object_set_new(root, "id", json_string(st->id));
        json_object_set_new(root, "exitReason", json_string(st->exit_reason));
        json_object_set_new(root, "exitCode", json_integer(exit_code));
        if (st->have_status && WIFSIGNALED(st->cmd_status))
                json_object_set_new(root, "signal", json_integer(WTERMSIG(st->cmd_status)));
        json_object_set_new(root, "wallTimeMs", json_integer(wall_ms));
        json_object_set_new(root, "cgroup", json_string(st->cg ? cgroup_backend(st->cg) : "none"));
        json_object_set_new(root, "identity", sandbox_identity_json(st));
        json_object_set_new(root, "memoryPeakBytes", int_or_null(cs.memory_peak_bytes));
        json_object_set_new(root, "cpuTimeUsec", int_or_null(cs.cpu_usage_usec));
        json_object_set_new(root, "oomKills", int_or_null(cs.oom_kills));
        json_object_set_new(root, "cpuThrottledPeriods", int_or_null(cs.nr_throttled));
        json_object_set_new(root, "cpuThrottledUsec", int_or_null(cs.throttled_usec));
        /* the pid namespace's last pid: processes and threads started */
        json_object_set_new(root, "tasksStarted", int_or_null(st->tasks_started));
        json_object_set_new(root, "writableBytesUsed", int_or_null(written));
        json_object_set_new(root, "trappedSyscalls", trapped);
        json_object_set_new(root, "trappedSyscallTime", timing);
        /* creating calls take the caller's umask from a per-thread cache
         * (notify/umask.c); a miss reads /proc/TID/status */
        json_t *um = json_object();
        json_object_set_new(um, "hits", json_integer((json_int_t)st->umask_cache.hits));
        json_object_set_new(um, "misses", json_integer((json_int_t)st->umask_cache.misses));
        json_object_set_new(um, "off", json_boolean(st->umask_cache.off));
        /* and, where native write opens are on, a relative one's directory */
        json_object_set_new(um, "cwdHits", json_integer((json_int_t)st->umask_cache.cwd_hits));
        json_object_set_new(um, "cwdMisses", json_integer((json_int_t)st->umask_cache.cwd_misses));
        json_object_set_new(root, "umaskCache", um);

        int r = 0;
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        if (fd < 0)
                r = negative_errno();
        else if (!text)
                r = -ENOMEM;
        else if ((r = write_all(fd, text, strlen(text))) == 0)
                r = write_all(fd, "\n", 1);
        if (r < 0)
                fprintf(stderr, "cordon: --stats %s: %s\n", path, strerror(-r));
        free(text);
        json_decref(root);
        return r;
}
