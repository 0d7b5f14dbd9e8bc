/* What the client verbs of long-lived sandboxes share: the usage text, the
 * client's end of a sandbox's control socket (client_connect, which says
 * what is wrong when no sentry answers), one request and its reply (with
 * any progress messages before it), and whether a sandbox is live (its
 * lock is held); and the same calls without printing (sandbox_call,
 * sandbox_list_json, sandbox_terminate, event_reader_*: sandbox.h), which
 * the verbs and the HTTP API (sentry/api/) share. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "sentry/sandbox/sandbox-internal.h"

void client_usage(FILE *f)
{
        fputs("Usage: cordon sandbox [--root DIR] VERB ...   (state under DIR; default /run/cordon for root)\n"
              "       cordon sandbox create [--policy FILE] [--ttl DURATION] [--from-snapshot SNAP [--digest sha256:HEX]]\n"
              "                             [--memory SIZE] [--cpus N] [--pids N] [--disk SIZE] [--json]\n"
              "       cordon sandbox exec ID [--detach] [--timeout DURATION] [--cwd DIR] [--env K=V]... [-t|-T] -- CMD ...\n"
              "       cordon sandbox put ID LOCAL SANDBOX-PATH      (LOCAL - reads stdin)\n"
              "       cordon sandbox get ID SANDBOX-PATH LOCAL      (LOCAL - writes stdout)\n"
              "       cordon sandbox ls ID PATH [--json]\n"
              "       cordon sandbox pause ID | resume ID | terminate ID\n"
              "       cordon sandbox cancel ID RUN\n"
              "       cordon sandbox ps ID [--json] | kill ID PID [SIGNAL]   (pids inside the sandbox)\n"
              "       cordon sandbox port ID PORT [--listen ADDR:PORT] | port ID --list | port ID PORT --close\n"
              "       cordon sandbox list [--json] | inspect ID [--json]\n"
              "       cordon sandbox events ID [--run RUN] [--after N] [--follow] [--json]\n"
              "       cordon sandbox snapshot ID OUT.tar.zst\n"
              "       cordon sandbox pending ID [--json]\n"
              "       cordon sandbox approve ID REQ [--remember] | deny ID REQ\n"
              "\n"
              "A sandbox keeps running (a small init under a detached sentry) until it is\n"
              "terminated or expires (--ttl, or the policy's expiresAt), even with no client.\n"
              "exec exits with the command's status (128+N for signal N, 124 at --timeout).\n"
              "A call a policy \"ask\" rule covers waits (only its thread) for approve or deny;\n"
              "--remember allows identical calls for the sandbox's lifetime (the policy file\n"
              "is never changed). Unanswered, it is denied at approvalTimeoutMs (default 5 min).\n",
              f);
}

/* --- the control socket --- */

int client_connect(const char *id, int *ret)
{
        char dir[600];
        if (sandbox_dir(id, dir, sizeof(dir)) < 0) {
                fprintf(stderr, "cordon: '%s' is not a sandbox id\n", id);
                return -EINVAL;
        }
        int fd = -1, r = control_connect(id, &fd);
        if (r < 0) {
                struct stat st;
                if (stat(dir, &st) < 0)
                        fprintf(stderr, "cordon: no sandbox %s\n", id);
                else if (state_root_is_default())
                        fprintf(stderr,
                                "cordon: sandbox %s does not answer (%s); if its sentry died, `cordon gc` removes "
                                "what it left\n",
                                id, strerror(-r));
                else
                        fprintf(stderr,
                                "cordon: sandbox %s does not answer (%s); if its sentry died, `cordon gc --root %s` "
                                "removes what it left\n",
                                id, strerror(-r), state_root());
                return r;
        }
        *ret = fd;
        return 0;
}

/* One request on fd and its reply (an error reply too), with any
 * {"progress": ...} messages before it handed to on_progress: 0 with *ret,
 * or -errno (0 is -ECONNRESET: the sentry closed the connection). */
static int request_on(int fd, json_t *req, const int *fds, size_t n_fds, void (*on_progress)(json_t *p, void *data),
                      void *data, json_t **ret)
{
        int r = control_send(fd, req, fds, n_fds);
        json_t *rep = NULL;
        while (r >= 0 && (r = control_recv(fd, &rep, NULL, 0)) > 0 && json_object_get(rep, "progress") &&
               !json_object_get(rep, "error")) {
                /* a put's stream ended (confirmEnd): we are still here, so
                 * its end is the stream's own, not a kill of ours */
                if (json_object_get(json_object_get(rep, "progress"), "end")) {
                        r = control_send(fd, json_pack("{s:b}", "commit", 1), NULL, 0);
                        json_decref(rep);
                        rep = NULL;
                        continue;
                }
                if (on_progress)
                        on_progress(json_object_get(rep, "progress"), data);
                json_decref(rep);
                rep = NULL;
        }
        if (r <= 0)
                return r == 0 ? -ECONNRESET : r;
        *ret = rep;
        return 0;
}

int sandbox_call(const char *id, json_t *req, const int *fds, size_t n_fds, void (*on_progress)(json_t *p, void *data),
                 void *data, json_t **ret)
{
        char dir[600];
        if (!id || sandbox_dir(id, dir, sizeof(dir)) < 0) {
                json_decref(req);
                return -EINVAL;
        }
        _cleanup_close_ int fd = -1;
        int r = control_connect(id, &fd);
        if (r < 0) {
                struct stat st;
                json_decref(req);
                return stat(dir, &st) < 0 ? -ENOENT : r;
        }
        return request_on(fd, req, fds, n_fds, on_progress, data, ret);
}

struct progress_fn {
        void (*fn)(json_t *p);
};

static void call_progress(json_t *p, void *data)
{
        struct progress_fn *f = data;
        if (f->fn)
                f->fn(p);
}

/* One request, one reply, with any {"progress": ...} messages before the
 * reply handed to on_progress (may be NULL); prints an error reply. 0, or 1
 * for an error reply. */
int client_request_progress(const char *id, json_t *req, const int *fds, size_t n_fds, void (*on_progress)(json_t *p),
                            json_t **ret)
{
        _cleanup_close_ int fd = -1;
        if (client_connect(id, &fd) < 0) {
                json_decref(req);
                return -1;
        }
        struct progress_fn f = {on_progress};
        json_t *rep = NULL;
        int r = request_on(fd, req, fds, n_fds, call_progress, &f, &rep);
        if (r < 0) {
                fprintf(stderr, "cordon: sandbox %s: no answer from its sentry (%s)\n", id,
                        r == -ECONNRESET ? "connection closed" : strerror(-r));
                return -1;
        }
        const char *err = json_string_value(json_object_get(rep, "error"));
        if (err) {
                fprintf(stderr, "cordon: %s\n", err);
                json_decref(rep);
                return 1;
        }
        if (ret)
                *ret = rep;
        else
                json_decref(rep);
        return 0;
}

int client_request(const char *id, json_t *req, const int *fds, size_t n_fds, json_t **ret)
{
        return client_request_progress(id, req, fds, n_fds, NULL, ret);
}

/* --- list, terminate, the event log: shared with the HTTP API --- */

int sandbox_list_json(json_t **ret)
{
        char dir[600];
        snprintf(dir, sizeof(dir), "%s/sandboxes", state_root());
        json_t *all = json_array();
        DIR *d = opendir(dir);
        struct dirent *de;
        while (d && (de = readdir(d))) {
                if (!sandbox_id_valid(de->d_name))
                        continue;
                _cleanup_close_ int fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0 || !state_dir_live(fd))
                        continue;
                _cleanup_close_ int mfd = openat(fd, "meta.json", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                json_error_t jerr;
                json_t *m = mfd >= 0 ? json_loadfd(mfd, 0, &jerr) : NULL;
                if (!m) /* a `cordon run` sandbox, or one still starting */
                        m = json_pack("{s:s, s:s}", "id", de->d_name, "status",
                                      mfd >= 0 ? "starting" : "run (foreground)");
                json_object_del(m, "policy");
                json_array_append_new(all, m);
        }
        if (d)
                closedir(d);
        *ret = all;
        return 0;
}

int sandbox_terminate(const char *id, char **ret_error)
{
        char dir[600], lockpath[700];
        if (sandbox_dir(id, dir, sizeof(dir)) < 0)
                return -EINVAL;
        struct stat st;
        if (stat(dir, &st) < 0)
                return -ENOENT;
        snprintf(lockpath, sizeof(lockpath), "%s/lock", dir);
        _cleanup_close_ int lock = open(lockpath, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        json_t *rep = NULL;
        int r = sandbox_call(id, json_pack("{s:s}", "op", "terminate"), NULL, 0, NULL, NULL, &rep);
        if (r == 0 && json_object_get(rep, "error")) {
                if (ret_error)
                        *ret_error = xstrdup(json_string_value(json_object_get(rep, "error")));
                json_decref(rep);
                return -EBUSY;
        }
        json_decref(rep);
        if (r < 0) {
                /* no sentry: what it left is garbage */
                (void)state_gc(true);
                return stat(dir, &st) < 0 ? 0 : r;
        }
        /* the sentry holds the lock until it has removed everything: the
         * sandbox is gone when we can take it (bounded wait, 30 s). Looked
         * at after 1 ms, then twice as long each time up to 50 ms: a fixed
         * 50 ms step made every terminate take 65 ms for a sentry that was
         * gone in 15 */
        long waited_us = 0;
        for (long step = 1000; lock >= 0 && waited_us < 30 * 1000 * 1000; step = step < 50000 ? step * 2 : 50000) {
                if (flock(lock, LOCK_EX | LOCK_NB) == 0)
                        return 0;
                usleep((useconds_t)step);
                waited_us += step;
        }
        return lock < 0 ? 0 : -ETIMEDOUT;
}

int event_reader_open(const char *id, struct event_reader *ret, int *ret_dirfd)
{
        char dir[600];
        if (sandbox_dir(id, dir, sizeof(dir)) < 0)
                return -EINVAL;
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        int fd = openat(dfd, "events.jsonl", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return negative_errno();
        FILE *f = fdopen(fd, "r");
        if (!f) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        *ret = (struct event_reader){.f = f};
        if (ret_dirfd)
                *ret_dirfd = TAKE_FD(dfd);
        return 0;
}

int event_reader_next(struct event_reader *er, json_t **ret, const char **ret_line)
{
        for (;;) {
                ssize_t n = getline(&er->line, &er->cap, er->f);
                if (n <= 0) {
                        clearerr(er->f);
                        return 0;
                }
                if (er->line[n - 1] != '\n') {
                        /* being written: keep it for the next round */
                        er->partial = xrealloc(er->partial, er->partial_len + (size_t)n + 1);
                        memcpy(er->partial + er->partial_len, er->line, (size_t)n + 1);
                        er->partial_len += (size_t)n;
                        continue;
                }
                if (er->partial_len) {
                        char *joined = xasprintf("%s%s", er->partial, er->line);
                        free(er->line);
                        er->line = joined;
                        er->cap = strlen(joined) + 1;
                        er->partial_len = 0;
                }
                json_error_t jerr;
                json_t *ev = json_loads(er->line, 0, &jerr);
                if (!ev)
                        continue;
                *ret = ev;
                if (ret_line)
                        *ret_line = er->line;
                return 1;
        }
}

/* The seq of the complete line that starts at off, or -1 with no complete
 * line there (the end of the log, or a line being written); *ret_next:
 * where the next line starts. A line that is no event (none should be)
 * counts as the one before it did: -2. */
static long long seq_at(FILE *f, off_t off, char **buf, size_t *cap, off_t *ret_next)
{
        if (fseeko(f, off, SEEK_SET) < 0)
                return -1;
        ssize_t n = getline(buf, cap, f);
        if (n <= 0 || (*buf)[n - 1] != '\n')
                return -1;
        *ret_next = off + n;
        json_t *ev = json_loadb(*buf, (size_t)n, 0, NULL);
        json_t *seq = json_object_get(ev, "seq");
        long long s = json_is_integer(seq) ? (long long)json_integer_value(seq) : -2;
        json_decref(ev);
        return s;
}

/* Where the first line at or after byte p starts (p itself, or just past
 * the first newline from p - 1 on), or limit where that is at or past
 * limit: the scan stops there. */
static off_t line_start(FILE *f, off_t p, off_t limit)
{
        if (p == 0)
                return 0;
        if (fseeko(f, p - 1, SEEK_SET) < 0)
                return limit;
        int c;
        off_t o = p - 1;
        while (o + 1 < limit && (c = getc(f)) != EOF) {
                o++;
                if (c == '\n')
                        return o;
        }
        return limit;
}

/* Where the last newline before byte `before` is, or -1. */
static off_t newline_before(int fd, off_t before)
{
        char buf[4096];
        while (before > 0) {
                off_t from = before > (off_t)sizeof(buf) ? before - (off_t)sizeof(buf) : 0;
                ssize_t n = pread(fd, buf, (size_t)(before - from), from);
                if (n <= 0)
                        return -1;
                for (ssize_t i = n - 1; i >= 0; i--)
                        if (buf[i] == '\n')
                                return from + i;
                before = from;
        }
        return -1;
}

int event_reader_seek(struct event_reader *er, long long after, long long *ret_last)
{
        struct stat st;
        if (fstat(fileno(er->f), &st) < 0)
                return negative_errno();
        off_t size = st.st_size;
        /* the smallest position whose line has a seq above after (or is
         * the end): the predicate rises with the position, as the seqs do */
        off_t lo = 0, hi = size;
        while (lo < hi) {
                off_t mid = lo + (hi - lo) / 2;
                /* Scanned no further than hi: a line that starts at or
                 * past hi is the first one at or after hi too, whose
                 * answer is known (hi's). Unbounded, a long line (a torn
                 * one at the end, 64 MiB at worst) would be scanned to
                 * its end at every halving: a request's cost times ~26. */
                off_t s = line_start(er->f, mid, hi), next = s;
                if (s >= hi) {
                        hi = mid;
                        continue;
                }
                long long q = -2;
                while (q == -2 && s < size) {
                        q = seq_at(er->f, s, &er->line, &er->cap, &next);
                        if (q == -2)
                                s = next;
                }
                if (s >= size || q < 0 || q > after)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        off_t start = line_start(er->f, lo, size);
        if (ret_last) {
                /* the last complete line, read backwards from the end (a
                 * line being written there is not one yet) */
                long long last = 0;
                off_t e = newline_before(fileno(er->f), size), next;
                while (e >= 0 && last == 0) {
                        off_t b = newline_before(fileno(er->f), e);
                        long long q = seq_at(er->f, b + 1, &er->line, &er->cap, &next);
                        if (q > 0)
                                last = q;
                        e = b;
                }
                *ret_last = last;
        }
        if (fseeko(er->f, start, SEEK_SET) < 0)
                return negative_errno();
        er->partial_len = 0;
        return 0;
}

void event_reader_close(struct event_reader *er)
{
        if (er->f)
                fclose(er->f);
        free(er->line);
        free(er->partial);
        *er = (struct event_reader){0};
}

/* --- isolation tiers --- */

int sandbox_tier_missing(int tier, char **ret_missing)
{
        if (tier < 0 || tier >= POLICY_N_TIERS)
                return -EINVAL;
        /* `cordon check --json` by cordon's own binary: the one place that
         * probes the layers, run as a fresh process (its probes fork) */
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return negative_errno();
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
                int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (nul < 0 || dup2(nul, 0) < 0 || dup2(p[1], 1) < 0 || dup2(nul, 2) < 0)
                        _exit(127);
                execl("/proc/self/exe", "cordon", "check", "--json", (char *)NULL);
                _exit(127);
        }
        close(p[1]);
        if (pid < 0) {
                close(p[0]);
                return -EAGAIN;
        }
        json_error_t jerr;
        json_t *host = json_loadfd(p[0], JSON_DISABLE_EOF_CHECK, &jerr);
        close(p[0]);
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        json_t *layers = json_object_get(host, "layers");
        if (!json_is_object(layers)) {
                json_decref(host);
                return -EIO;
        }
        char buf[1024] = "";
        size_t o = 0;
        int n = 0;
        for (const char *const *l = policy_tiers[tier].layers; *l; l++)
                if (!json_is_true(json_object_get(json_object_get(layers, *l), "available"))) {
                        o += (size_t)snprintf(buf + o, o < sizeof(buf) ? sizeof(buf) - o : 0, "%s%s", n++ ? ", " : "",
                                              *l);
                        if (o >= sizeof(buf))
                                o = sizeof(buf) - 1;
                }
        json_decref(host);
        *ret_missing = n ? xstrdup(buf) : NULL;
        return n;
}
