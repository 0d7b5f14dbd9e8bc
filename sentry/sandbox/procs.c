/* The processes of a long-lived sandbox (`cordon sandbox ps` and `kill`):
 * the list and a signal to one of them, served by the sentry.
 *
 * Both read the sandbox's own /proc: the procfs instance mounted in the
 * view, reached from the view's root fd (never the host's /proc). That
 * instance belongs to the sandbox's pid namespace, so it lists exactly the
 * sandbox's processes, numbered as the sandbox numbers them, and a number
 * that is not one of them (a host pid) does not exist there at all. A
 * signal goes through pidfd_send_signal on the process's /proc/PID
 * directory fd, which names that one process: if it has exited and its
 * number was reused, the call fails (ESRCH) instead of reaching the new
 * process. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>

#include "sentry/sandbox/sandbox-internal.h"

#define PS_MAX_PROCS   4096
#define PS_CMDLINE_MAX 1024
/* the reply is one control message: leave room for the wrapper */
#define PS_REPLY_BUDGET (CONTROL_MAX_MSG - 1024)

/* The sandbox's /proc, checked to be the procfs the view was built with
 * (st_dev recorded at set-up): a directory the sandbox made or mounted
 * there would be refused. */
static int sandbox_proc_open(const struct sandbox_state *st, int *ret)
{
        struct open_how how = {
                .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        if (st->fsctx.root_fd < 0)
                return -ENOENT;
        _cleanup_close_ int fd = (int)syscall(SYS_openat2, st->fsctx.root_fd, "proc", &how, sizeof(how));
        if (fd < 0)
                return negative_errno();
        struct statfs sfs;
        struct stat sb;
        if (fstatfs(fd, &sfs) < 0 || fstat(fd, &sb) < 0)
                return negative_errno();
        if (sfs.f_type != PROC_SUPER_MAGIC || (st->fsctx.proc_dev && sb.st_dev != st->fsctx.proc_dev))
                return -EXDEV;
        *ret = TAKE_FD(fd);
        return 0;
}

static ssize_t read_small(int dirfd, const char *name, char *buf, size_t size)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        size_t len = 0;
        while (len < size - 1) {
                ssize_t n = read(fd, buf + len, size - 1 - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        buf[len] = '\0';
        return (ssize_t)len;
}

/* A host id as the sandbox's user namespace names it, from init's map as
 * the sentry reads it ("inside outside count" lines); -1 when unmapped. */
static long long id_inside(const char *map, unsigned long long host)
{
        const char *p = map;
        while (p && *p) {
                unsigned long long in, out, count;
                if (sscanf(p, "%llu %llu %llu", &in, &out, &count) == 3 && host >= out && host - out < count)
                        return (long long)(in + (host - out));
                p = strchr(p, '\n');
                if (p)
                        p++;
        }
        return -1;
}

/* The run a process belongs to: its run's control group ("run-N" in
 * /proc/PID/cgroup), which holds it even after it left the run's session;
 * else up its parents (pids of the sandbox) to a run's first process. */
static int run_of(struct serve *srv, const char *cgroup, pid_t pid, const pid_t *pids, const pid_t *ppids, size_t n)
{
        for (const char *p = cgroup; p && (p = strstr(p, "/run-")); p++) {
                char *end;
                long num = strtol(p + 5, &end, 10);
                if (end != p + 5 && (*end == '\n' || *end == '\0' || *end == '/') && num > 0 && num <= INT32_MAX &&
                    run_find(srv, (int)num))
                        return (int)num;
        }
        for (int depth = 0; pid > 1 && depth < 64; depth++) {
                for (int i = 0; i < srv->n_runs; i++)
                        if (srv->runs[i].pid == pid)
                                return srv->runs[i].num;
                pid_t parent = 0;
                for (size_t i = 0; i < n; i++)
                        if (pids[i] == pid)
                                parent = ppids[i];
                pid = parent;
        }
        return 0;
}

struct proc_row {
        pid_t pid, ppid;
        char state;
        long long uid, gid;
        double cpu;
        long long rss, start_ticks;
        char cgroup[512];
        char comm[64];
        char cmd[PS_CMDLINE_MAX];
};

/* One process from its /proc/PID directory: 0, or -errno (it is gone). */
static int proc_read(int pdir, const char *uid_map, const char *gid_map, struct proc_row *row)
{
        char buf[4096];
        if (read_small(pdir, "stat", buf, sizeof(buf)) <= 0)
                return -ESRCH;
        /* "pid (comm) S ppid ...": comm may hold anything, so from the last ')' */
        char *l = strchr(buf, '('), *rp = strrchr(buf, ')');
        if (!l || !rp || rp < l)
                return -EBADMSG;
        snprintf(row->comm, sizeof(row->comm), "%.*s", (int)(rp - l - 1), l + 1);
        char state = 0;
        int ppid = 0;
        unsigned long long utime = 0, stime = 0, start = 0;
        long long rss = 0;
        /* fields 3.. : state ppid pgrp session tty tpgid flags minflt cminflt
         * majflt cmajflt utime stime cutime cstime priority nice threads
         * itrealvalue starttime vsize rss */
        if (sscanf(rp + 2, "%c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d %*d %*d %llu %*u %lld",
                   &state, &ppid, &utime, &stime, &start, &rss) != 6)
                return -EBADMSG;
        long tck = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
        row->state = state;
        row->ppid = ppid;
        row->cpu = (double)(utime + stime) / (double)(tck > 0 ? tck : 100);
        row->rss = rss * (page > 0 ? page : 4096);
        row->start_ticks = (long long)start;
        row->uid = row->gid = -1;
        if (read_small(pdir, "status", buf, sizeof(buf)) > 0) {
                char *u = strstr(buf, "\nUid:"), *g = strstr(buf, "\nGid:");
                unsigned long long ruid, euid, rgid, egid;
                if (u && sscanf(u + 5, "%llu %llu", &ruid, &euid) == 2)
                        row->uid = id_inside(uid_map, euid);
                if (g && sscanf(g + 5, "%llu %llu", &rgid, &egid) == 2)
                        row->gid = id_inside(gid_map, egid);
        }
        if (read_small(pdir, "cgroup", row->cgroup, sizeof(row->cgroup)) < 0)
                row->cgroup[0] = '\0';
        ssize_t n = read_small(pdir, "cmdline", row->cmd, sizeof(row->cmd));
        if (n < 0)
                n = 0;
        while (n > 0 && row->cmd[n - 1] == '\0')
                n--;
        for (ssize_t i = 0; i < n; i++)
                if (row->cmd[i] == '\0')
                        row->cmd[i] = ' ';
        row->cmd[n] = '\0';
        return 0;
}

/* The sandbox's processes, as one reply. */
static int procs_list(struct sandbox_state *st, json_t **ret)
{
        _cleanup_close_ int proc = -1;
        int r = sandbox_proc_open(st, &proc);
        if (r < 0)
                return r;
        char uid_map[1024] = "", gid_map[1024] = "";
        _cleanup_close_ int initdir = openat(proc, "1", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (initdir >= 0) {
                (void)read_small(initdir, "uid_map", uid_map, sizeof(uid_map));
                (void)read_small(initdir, "gid_map", gid_map, sizeof(gid_map));
        }
        int dfd = fcntl(proc, F_DUPFD_CLOEXEC, 3);
        if (dfd < 0)
                return negative_errno();
        DIR *d = fdopendir(dfd);
        if (!d) {
                close(dfd);
                return -ENOMEM;
        }
        size_t cap = 64, n = 0;
        struct proc_row *rows = xcalloc(cap, sizeof(*rows));
        bool truncated = false;
        struct dirent *de;
        while ((de = readdir(d))) {
                char *end;
                long pid = strtol(de->d_name, &end, 10);
                if (*end || pid <= 0)
                        continue;
                if (n == PS_MAX_PROCS) {
                        truncated = true;
                        break;
                }
                _cleanup_close_ int pdir = openat(proc, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (pdir < 0)
                        continue;
                if (n == cap) {
                        cap *= 2;
                        rows = xrealloc(rows, cap * sizeof(*rows));
                }
                memset(&rows[n], 0, sizeof(rows[n]));
                rows[n].pid = (pid_t)pid;
                if (proc_read(pdir, uid_map, gid_map, &rows[n]) == 0)
                        n++;
        }
        closedir(d);

        _cleanup_free_ pid_t *pids = xcalloc(n + 1, sizeof(pid_t));
        _cleanup_free_ pid_t *ppids = xcalloc(n + 1, sizeof(pid_t));
        for (size_t i = 0; i < n; i++) {
                pids[i] = rows[i].pid;
                ppids[i] = rows[i].ppid;
        }
        struct timespec now, boot;
        clock_gettime(CLOCK_REALTIME, &now);
        clock_gettime(CLOCK_BOOTTIME, &boot);
        long tck = sysconf(_SC_CLK_TCK);
        json_t *list = json_array();
        size_t budget = 0;
        for (size_t i = 0; i < n; i++) {
                struct proc_row *p = &rows[i];
                char started[32] = "";
                double up = (double)boot.tv_sec + (double)boot.tv_nsec / 1e9 -
                            (double)p->start_ticks / (double)(tck > 0 ? tck : 100);
                event_iso_time((time_t)((double)now.tv_sec + (double)now.tv_nsec / 1e9 - up + 0.5), started);
                int run = run_of(st->serve, p->cgroup, p->pid, pids, ppids, n);
                char run_id[16] = "";
                if (run > 0)
                        snprintf(run_id, sizeof(run_id), "r%d", run);
                char state[2] = {p->state, 0};
                json_t *o = json_pack("{s:i, s:i, s:s?, s:I, s:I, s:s, s:s, s:f, s:I, s:s, s:o}", "pid", (int)p->pid,
                                      "ppid", (int)p->ppid, "run", run_id[0] ? run_id : NULL, "uid", (json_int_t)p->uid,
                                      "gid", (json_int_t)p->gid, "state", state, "startedAt", started, "cpuSeconds",
                                      p->cpu, "memoryBytes", (json_int_t)p->rss, "name", p->comm, "command",
                                      json_text(p->cmd, strlen(p->cmd)));
                if (!o)
                        continue;
                if (p->pid == 1)
                        json_object_set_new(o, "init", json_true());
                /* each entry's size, so the reply fits one message */
                char *s = json_dumps(o, JSON_COMPACT);
                size_t len = s ? strlen(s) + 1 : 0;
                free(s);
                if (budget + len > PS_REPLY_BUDGET) {
                        json_decref(o);
                        truncated = true;
                        break;
                }
                budget += len;
                json_array_append_new(list, o);
        }
        free(rows);
        *ret = json_pack("{s:o, s:b}", "processes", list, "truncated", truncated);
        return 0;
}

/* A signal to one of the sandbox's processes, by its pid in the sandbox. */
static int procs_signal(struct sandbox_state *st, long long pid, int sig, char *why, size_t size)
{
        if (pid <= 0 || pid > 4194304) {
                snprintf(why, size, "pid %lld is not a process of sandbox %s", pid, st->serve->id);
                return -ESRCH;
        }
        if (pid == 1) {
                /* the sandbox's init is cordon's own: ending it ends the
                 * sandbox, which is `terminate`'s business */
                snprintf(why, size, "pid 1 is the sandbox's init; use terminate to end sandbox %s", st->serve->id);
                return -EPERM;
        }
        _cleanup_close_ int proc = -1;
        int r = sandbox_proc_open(st, &proc);
        if (r < 0) {
                snprintf(why, size, "cannot open the sandbox's /proc: %s", strerror(-r));
                return r;
        }
        char name[24];
        snprintf(name, sizeof(name), "%lld", pid);
        /* the sandbox's procfs knows only the sandbox's pids: a host pid
         * (or any other namespace's) is not found here */
        _cleanup_close_ int pdir = openat(proc, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (pdir < 0) {
                snprintf(why, size, "pid %lld is not a process of sandbox %s", pid, st->serve->id);
                return -ESRCH;
        }
        /* the directory fd names this process: a pid reused since fails */
        if (syscall(SYS_pidfd_send_signal, pdir, sig, NULL, 0) < 0) {
                r = negative_errno();
                snprintf(why, size, "cannot signal pid %lld of sandbox %s: %s", pid, st->serve->id,
                         r == -ESRCH ? "it has exited" : strerror(-r));
                return r;
        }
        return 0;
}

void procs_request(struct sandbox_state *st, int conn, json_t *req)
{
        struct serve *srv = st->serve;
        const char *op = json_string_value(json_object_get(req, "op"));
        if (op && streq(op, "ps")) {
                json_t *rep = NULL;
                int r = procs_list(st, &rep);
                if (r < 0) {
                        control_reply_error(conn, "ps: cannot read the processes of sandbox %s: %s", srv->id,
                                            strerror(-r));
                        return;
                }
                json_object_set_new(rep, "status", json_string(srv->status));
                (void)control_send(conn, rep, NULL, 0);
                return;
        }
        json_t *jpid = json_object_get(req, "pid"), *jsig = json_object_get(req, "signal");
        json_int_t sig = jsig ? json_integer_value(jsig) : SIGTERM;
        if (!json_is_integer(jpid)) {
                control_reply_error(conn, "signal: \"pid\" must be an integer (a pid inside the sandbox)");
                return;
        }
        if ((jsig && !json_is_integer(jsig)) || sig <= 0 || sig >= 65) {
                control_reply_error(conn, "signal: the signal must be a number from 1 to 64");
                return;
        }
        char why[256];
        int r = procs_signal(st, json_integer_value(jpid), (int)sig, why, sizeof(why));
        if (r < 0) {
                control_reply_error_code(conn, r == -ESRCH ? SANDBOX_ERR_NOT_FOUND : SANDBOX_ERR_DENIED, "%s", why);
                return;
        }
        event_append(srv, "signal", json_pack("{s:I, s:i}", "pid", json_integer_value(jpid), "signal", (int)sig));
        (void)control_send(conn, json_pack("{s:b, s:s}", "ok", 1, "status", srv->status), NULL, 0);
}
