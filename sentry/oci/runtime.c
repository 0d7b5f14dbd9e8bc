/* `cordon oci [GLOBAL] VERB ...`, also run as `cordon-oci`: the OCI runtime
 * command line as runc has it, so that podman (through conmon), containerd
 * (through its runc shim) and Kubernetes (a RuntimeClass) can run
 * containers under cordon.
 *
 * A container is a long-lived cordon sandbox (sentry/sandbox.h):
 *
 *   create  ── fork ──▶ detached sentry (its pid goes to --pid-file) ── init
 *           ── exec request (hold, main, the client's stdio) ──▶ init forks
 *              the container's process, which waits before its exec
 *   start   ── "start" ──▶ the held process execs process.args
 *   kill    ── "kill" ──▶ init signals the process (or, --all, all of them)
 *   exit    the process ends: the sandbox ends with it and the sentry exits
 *           with its status (code, or 128+signal), which is what conmon
 *           and the shim wait for on the pid in --pid-file
 *   delete  the sentry is gone (or is told to terminate): poststop hooks,
 *           then the state directory goes
 *
 * The container's own state lives in --root/ID/state.json (written
 * atomically, under a flock of --root/ID); the sandbox's under cordon's
 * state root as for any sandbox, so `cordon gc` cleans up after a sentry
 * that was killed. config.json is parsed by oci-config.c (sentry/oci.h). */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>

#include "common/fdpass.h"
#include "sentry/oci-sandbox.h"
#include "sentry/oci/oci.h"
#include "sentry/sandbox/sandbox.h"

#define OCI_DEFAULT_ROOT "/run/cordon-oci"
#define OCI_SPEC_VERSION "1.1.0"

static struct {
        const char *root;
        const char *log_path;
        bool log_json;
        bool debug;
        bool systemd_cgroup;
        int log_fd;
} G = {.root = OCI_DEFAULT_ROOT, .log_fd = -1};

/* --- logging: stderr and --log, in runc's formats --- */

static void now_rfc3339(char *buf, size_t size)
{
        struct timespec ts;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &ts);
        gmtime_r(&ts.tv_sec, &tm);
        char base[32];
        strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(buf, size, "%s.%09ldZ", base, ts.tv_nsec);
}

static void log_line(const char *level, const char *msg)
{
        if (G.log_fd < 0)
                return;
        char when[64];
        now_rfc3339(when, sizeof(when));
        char *line = NULL;
        if (G.log_json) {
                json_t *j = json_pack("{s:s, s:s, s:s}", "level", level, "msg", msg, "time", when);
                line = json_dumps(j, JSON_COMPACT);
                json_decref(j);
        } else {
                /* logrus's text format, which runc writes */
                json_t *q = json_string(msg);
                char *quoted = json_dumps(q, JSON_ENCODE_ANY);
                json_decref(q);
                line = xasprintf("time=\"%s\" level=%s msg=%s", when, level, quoted ? quoted : "\"\"");
                free(quoted);
        }
        if (line) {
                size_t n = strlen(line);
                line = xrealloc(line, n + 2);
                line[n] = '\n';
                (void)write_all(G.log_fd, line, n + 1);
                free(line);
        }
}

/* An error: to stderr and the log. The caller exits non-zero. */
_printf_(1, 2) static void oci_error(const char *fmt, ...)
{
        char msg[4096];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        fprintf(stderr, "cordon-oci: %s\n", msg);
        log_line("error", msg);
}

_printf_(1, 2) static void oci_warn(const char *fmt, ...)
{
        char msg[4096];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (G.debug)
                fprintf(stderr, "cordon-oci: warning: %s\n", msg);
        log_line("warning", msg);
}

_printf_(1, 2) static void oci_debug(const char *fmt, ...)
{
        if (!G.debug)
                return;
        char msg[4096];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        fprintf(stderr, "cordon-oci: %s\n", msg);
        log_line("debug", msg);
}

/* --- small helpers --- */

static int read_file_text(const char *path, char **ret)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return negative_errno();
        size_t cap = 4096, len = 0;
        _cleanup_free_ char *buf = xmalloc(cap);
        for (;;) {
                if (len + 1 >= cap) {
                        if (cap >= (16u << 20))
                                return -EFBIG;
                        cap *= 2;
                        buf = xrealloc(buf, cap);
                }
                ssize_t n = read(fd, buf + len, cap - len - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return negative_errno();
                if (n == 0)
                        break;
                len += (size_t)n;
        }
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        return 0;
}

/* Writes path through path.tmp and a rename: a reader never sees half. */
static int write_file_atomic(int dirfd, const char *name, const char *text, mode_t mode)
{
        char tmp[300];
        snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
        _cleanup_close_ int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd < 0)
                return negative_errno();
        int r = write_all(fd, text, strlen(text));
        if (r < 0 || fsync(fd) < 0) {
                r = r < 0 ? r : negative_errno();
                unlinkat(dirfd, tmp, 0);
                return r;
        }
        if (renameat(dirfd, tmp, dirfd, name) < 0) {
                r = negative_errno();
                unlinkat(dirfd, tmp, 0);
                return r;
        }
        return 0;
}

/* --pid-file: absolute or relative to the caller's cwd, replaced atomically. */
static int write_pid_file(const char *path, pid_t pid)
{
        _cleanup_free_ char *copy = xstrdup(path);
        char *slash = strrchr(copy, '/');
        const char *dir = ".", *name = copy;
        if (slash) {
                *slash = '\0';
                dir = slash == copy ? "/" : copy;
                name = slash + 1;
        }
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return negative_errno();
        char text[32];
        snprintf(text, sizeof(text), "%d", pid);
        return write_file_atomic(dfd, name, text, 0644);
}

/* The start time of pid (field 22 of /proc/PID/stat), so that a recycled
 * pid is never taken for the container's sentry; 0 if it is gone. */
static unsigned long long pid_start_time(pid_t pid)
{
        if (pid <= 0)
                return 0;
        char path[64], buf[1024];
        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return 0;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        if (n <= 0)
                return 0;
        buf[n] = '\0';
        const char *p = strrchr(buf, ')');
        if (!p)
                return 0;
        /* p+2 is field 3 (state); a zombie is as good as gone */
        if (p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'))
                return 0;
        int field = 2;
        for (p++; *p && field < 22; p++)
                if (*p == ' ')
                        field++;
        return strtoull(p, NULL, 10);
}

static bool container_id_valid(const char *id)
{
        size_t n = strlen(id);
        if (n == 0 || n > 1024 || streq(id, ".") || streq(id, ".."))
                return false;
        for (size_t i = 0; i < n; i++) {
                char c = id[i];
                if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                      c == '-' || c == '.' || c == '+'))
                        return false;
        }
        return true;
}

static int mkdir_p(const char *path, mode_t mode)
{
        char buf[PATH_MAX];
        if (strlen(path) >= sizeof(buf))
                return -ENAMETOOLONG;
        strcpy(buf, path);
        for (char *p = buf + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                        return negative_errno();
                *p = '/';
        }
        if (mkdir(buf, mode) < 0 && errno != EEXIST)
                return negative_errno();
        return 0;
}

/* --- the container's state --- */

struct container {
        char *id;
        int dirfd; /* --root/ID, flocked */
        json_t *state;
};

static void container_close(struct container *c)
{
        if (c->dirfd >= 0)
                close(c->dirfd);
        json_decref(c->state);
        free(c->id);
        memset(c, 0, sizeof(*c));
        c->dirfd = -1;
}

/* Opens and locks --root/ID and reads its state. -ENOENT: no such container
 * (said by the caller, as runc says it). */
static int container_open(const char *id, struct container *ret)
{
        if (!container_id_valid(id)) {
                oci_error("invalid container id '%s': only letters, digits, '_', '-', '.' and '+' are allowed", id);
                return -EINVAL;
        }
        _cleanup_close_ int rootfd = open(G.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int fd = rootfd >= 0 ? openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW) : -1;
        if (fd < 0) {
                if (errno == ENOENT)
                        return -ENOENT;
                int r = negative_errno();
                oci_error("container %s: %s/%s: %s", id, G.root, id, strerror(-r));
                return r;
        }
        while (flock(fd, LOCK_EX) < 0 && errno == EINTR)
                ;
        json_error_t jerr;
        _cleanup_close_ int sfd = openat(fd, "state.json", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        json_t *st = sfd >= 0 ? json_loadfd(sfd, 0, &jerr) : NULL;
        if (!st) {
                /* a create that died half-way: nothing to drive, only to delete */
                st = json_pack("{s:s}", "id", id);
                json_object_set_new(st, "incomplete", json_true());
        }
        *ret = (struct container){.id = xstrdup(id), .dirfd = fd, .state = st};
        return 0;
}

static int container_save(struct container *c)
{
        char *text = json_dumps(c->state, JSON_INDENT(2) | JSON_SORT_KEYS);
        if (!text)
                return -ENOMEM;
        int r = write_file_atomic(c->dirfd, "state.json", text, 0600);
        free(text);
        return r;
}

static const char *st_str(const struct container *c, const char *key)
{
        return json_string_value(json_object_get(c->state, key));
}

static pid_t container_pid(const struct container *c)
{
        return (pid_t)json_integer_value(json_object_get(c->state, "sentryPid"));
}

static bool sentry_alive(const struct container *c)
{
        pid_t pid = container_pid(c);
        unsigned long long want = (unsigned long long)json_integer_value(json_object_get(c->state, "sentryStart"));
        return pid > 0 && want != 0 && pid_start_time(pid) == want;
}

/* The sandbox's meta.json (its status and runs), or NULL. */
static json_t *sandbox_meta(const struct container *c)
{
        const char *sid = st_str(c, "sandbox");
        char dir[600], path[700];
        if (!sid || sandbox_dir(sid, dir, sizeof(dir)) < 0)
                return NULL;
        snprintf(path, sizeof(path), "%s/meta.json", dir);
        json_error_t jerr;
        return json_load_file(path, 0, &jerr);
}

/* created, running, paused or stopped (the OCI statuses). */
static const char *container_status(const struct container *c)
{
        if (json_is_true(json_object_get(c->state, "incomplete")) || !sentry_alive(c))
                return "stopped";
        json_t *m = sandbox_meta(c);
        const char *s = m ? json_string_value(json_object_get(m, "status")) : NULL;
        const char *out = "stopped";
        json_t *runs = json_object_get(m, "runs");
        json_t *main_run = json_array_get(runs, 0);
        const char *rs = json_string_value(json_object_get(main_run, "status"));
        if (!s || streq(s, "stopped") || streq(s, "terminating") || (rs && !streq(rs, "running")))
                out = "stopped";
        else if (streq(s, "paused"))
                out = "paused";
        else
                out = json_is_true(json_object_get(c->state, "started")) ? "running" : "created";
        json_decref(m);
        return out;
}

/* The OCI state document (runtime-spec "State"). */
static json_t *state_doc(const struct container *c, const char *status)
{
        json_t *ann = json_object_get(c->state, "annotations");
        return json_pack("{s:s, s:s, s:s, s:I, s:s, s:o}", "ociVersion", OCI_SPEC_VERSION, "id", c->id, "status",
                         status, "pid", (json_int_t)(streq(status, "stopped") ? 0 : container_pid(c)), "bundle",
                         st_str(c, "bundle") ? st_str(c, "bundle") : "", "annotations",
                         ann ? json_incref(ann) : json_object());
}

/* --- talking to the container's sentry --- */

static int connect_sentry(const char *sid, int *ret)
{
        char dir[600];
        if (!sid || sandbox_dir(sid, dir, sizeof(dir)) < 0)
                return -EINVAL;
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if ((size_t)snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/control.sock", dir) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return negative_errno();
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
                int r = negative_errno();
                close(fd);
                return r;
        }
        *ret = fd;
        return 0;
}

/* One request and its reply. 0 with *ret (may be NULL); -errno, the error
 * said (what names the request for the message). */
static int sentry_request(const char *sid, const char *what, json_t *req, const int *fds, size_t n_fds, json_t **ret,
                          int *ret_fds, size_t max_fds)
{
        _cleanup_close_ int fd = -1;
        int r = connect_sentry(sid, &fd);
        if (r < 0) {
                json_decref(req);
                oci_error("%s: the container's sentry does not answer: %s", what, strerror(-r));
                return r;
        }
        r = control_send(fd, req, fds, n_fds);
        json_t *rep = NULL;
        int dummy[1];
        if (r >= 0)
                r = control_recv(fd, &rep, ret_fds ? ret_fds : dummy, ret_fds ? max_fds : 0);
        if (r <= 0) {
                oci_error("%s: no answer from the container's sentry (%s)", what,
                          r == 0 ? "connection closed" : strerror(-r));
                return r == 0 ? -EPIPE : r;
        }
        const char *err = json_string_value(json_object_get(rep, "error"));
        if (err) {
                oci_error("%s: %s", what, err);
                json_decref(rep);
                return -EIO;
        }
        if (ret)
                *ret = rep;
        else
                json_decref(rep);
        return 0;
}

/* --- hooks (run in the runtime's namespaces with the state on stdin) --- */

static json_t *hooks_json(const struct oci_spec *s, enum oci_hook_kind k)
{
        json_t *a = json_array();
        for (size_t i = 0; i < s->n_hooks[k]; i++) {
                const struct oci_hook *h = &s->hooks[k][i];
                json_t *args = json_array(), *env = json_array();
                for (char **p = h->args; p && *p; p++)
                        json_array_append_new(args, json_string(*p));
                for (char **p = h->env; p && *p; p++)
                        json_array_append_new(env, json_string(*p));
                json_array_append_new(a, json_pack("{s:s, s:o, s:o, s:i}", "path", h->path, "args", args, "env", env,
                                                   "timeout", h->timeout));
        }
        return a;
}

static char **strv_from_json(json_t *a)
{
        size_t n = json_array_size(a), i;
        char **v = xcalloc(n + 1, sizeof(char *));
        json_t *e;
        json_array_foreach(a, i, e) v[i] = xstrdup(json_string_value(e) ? json_string_value(e) : "");
        return v;
}

static void strv_free(char **v)
{
        for (char **p = v; p && *p; p++)
                free(*p);
        free(v);
}

static void strv_freep(char ***v)
{
        strv_free(*v);
}

/* Runs each hook of the array in order; the first failure stops them.
 * 0, or -errno with the failure said. */
static int run_hooks(const char *kind, json_t *hooks, const char *state_text)
{
        size_t i;
        json_t *h;
        json_array_foreach(hooks, i, h)
        {
                const char *path = json_string_value(json_object_get(h, "path"));
                int timeout = (int)json_integer_value(json_object_get(h, "timeout"));
                char **args = strv_from_json(json_object_get(h, "args"));
                char **env = strv_from_json(json_object_get(h, "env"));
                char *dflt[] = {(char *)path, NULL};
                int in[2];
                if (pipe2(in, O_CLOEXEC) < 0) {
                        strv_free(args);
                        strv_free(env);
                        return negative_errno();
                }
                fflush(NULL);
                pid_t pid = fork();
                if (pid == 0) {
                        close(in[1]);
                        if (dup2(in[0], 0) < 0)
                                _exit(127);
                        int nul = open("/dev/null", O_WRONLY);
                        if (nul >= 0)
                                dup2(nul, 1); /* a hook's stdout is not ours to print */
                        execve(path, args[0] ? args : dflt, env);
                        fprintf(stderr, "cordon-oci: %s hook %s: %s\n", kind, path, strerror(errno));
                        _exit(127);
                }
                close(in[0]);
                strv_free(args);
                strv_free(env);
                if (pid < 0) {
                        close(in[1]);
                        return negative_errno();
                }
                signal(SIGPIPE, SIG_IGN);
                (void)write_all(in[1], state_text, strlen(state_text));
                close(in[1]);
                int status = 0, waited = 0;
                for (;;) {
                        pid_t w = waitpid(pid, &status, timeout > 0 ? WNOHANG : 0);
                        if (w == pid)
                                break;
                        if (w < 0 && errno != EINTR)
                                break;
                        if (timeout > 0 && w == 0) {
                                if (waited >= timeout * 10) {
                                        kill(pid, SIGKILL);
                                        waitpid(pid, &status, 0);
                                        oci_error("%s hook %s did not finish within its timeout of %d s", kind, path,
                                                  timeout);
                                        return -ETIMEDOUT;
                                }
                                usleep(100 * 1000);
                                waited++;
                        }
                }
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                        oci_error("%s hook %s failed (%s %d)", kind, path, WIFEXITED(status) ? "exit status" : "signal",
                                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
                        return -EIO;
                }
        }
        return 0;
}

static int container_hooks(struct container *c, const char *kind, const char *key, const char *status)
{
        json_t *hooks = json_object_get(json_object_get(c->state, "hooks"), key);
        if (json_array_size(hooks) == 0)
                return 0;
        json_t *doc = state_doc(c, status);
        char *text = json_dumps(doc, JSON_COMPACT);
        json_decref(doc);
        int r = run_hooks(kind, hooks, text ? text : "{}");
        free(text);
        return r;
}

/* --- terminating and removing --- */

/* Tells the sentry to end the sandbox and waits (bounded) until it is gone;
 * a sentry that does not answer is dead already, and what it left is
 * garbage for `cordon gc`. 0 or -errno. */
static int container_terminate(struct container *c)
{
        if (sentry_alive(c)) {
                _cleanup_close_ int fd = -1;
                if (connect_sentry(st_str(c, "sandbox"), &fd) == 0) {
                        (void)control_send(fd, json_pack("{s:s}", "op", "terminate"), NULL, 0);
                        json_t *rep = NULL;
                        if (control_recv(fd, &rep, NULL, 0) > 0)
                                json_decref(rep);
                } else
                        (void)kill(container_pid(c), SIGKILL);
                for (int i = 0; i < 600 && sentry_alive(c); i++)
                        usleep(50 * 1000);
                if (sentry_alive(c)) {
                        /* the sentry must not outlive its container: init dies with it */
                        (void)kill(container_pid(c), SIGKILL);
                        for (int i = 0; i < 100 && sentry_alive(c); i++)
                                usleep(50 * 1000);
                }
                if (sentry_alive(c)) {
                        oci_error("container %s: its sentry (pid %d) did not end", c->id, container_pid(c));
                        return -EBUSY;
                }
        }
        /* a sentry that was killed left its state directory and cgroups */
        char dir[600];
        const char *sid = st_str(c, "sandbox");
        struct stat sb;
        if (sid && sandbox_dir(sid, dir, sizeof(dir)) == 0 && stat(dir, &sb) == 0)
                (void)state_gc(true);
        return 0;
}

static int remove_tree_at(int dirfd, const char *name)
{
        _cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return errno == ENOTDIR || errno == ELOOP ? (unlinkat(dirfd, name, 0) < 0 ? negative_errno() : 0)
                                                          : negative_errno();
        DIR *d = fdopendir(fcntl(fd, F_DUPFD_CLOEXEC, 3));
        struct dirent *de;
        while (d && (de = readdir(d)))
                if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
                        (void)remove_tree_at(fd, de->d_name);
        if (d)
                closedir(d);
        return unlinkat(dirfd, name, AT_REMOVEDIR) < 0 ? negative_errno() : 0;
}

static int container_remove(struct container *c)
{
        _cleanup_close_ int rootfd = open(G.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0)
                return negative_errno();
        return remove_tree_at(rootfd, c->id);
}

/* --- create --- */

/* The view provides these itself (fs/view.c): the OCI mounts of the same
 * kind there are satisfied by it. */
static bool view_provides(const char *dest, const char *type)
{
        static const struct {
                const char *dest, *type;
        } provided[] = {
                {"/proc", "proc"},    {"/dev", "tmpfs"},     {"/dev/pts", "devpts"}, {"/dev/shm", "tmpfs"},
                {"/dev/shm", "bind"}, {"/tmp", "tmpfs"},     {"/var/tmp", "tmpfs"},  {"/run", "tmpfs"},
                {"/root", "tmpfs"},   {"/dev/mqueue", NULL},
        };
        for (size_t i = 0; i < ELEMENTSOF(provided); i++)
                if (streq(dest, provided[i].dest) && (!provided[i].type || streq(type, provided[i].type)))
                        return true;
        return false;
}

static bool lsm_enabled(const char *name)
{
        _cleanup_free_ char *lsm = NULL;
        if (read_file_text("/sys/kernel/security/lsm", &lsm) < 0)
                return streq(name, "apparmor") && access("/sys/module/apparmor/parameters/enabled", F_OK) == 0;
        return strstr(lsm, name) != NULL;
}

struct create_args {
        const char *id;
        const char *bundle;
        const char *pid_file;
        const char *console_socket;
        int preserve_fds;
        bool foreground; /* `run`: the sentry stays our child */
};

struct oci_prepared {
        struct oci_spec *spec;
        struct policy *policy;
        struct oci_sandbox sb;
        char *policy_text;
};

static void prepared_done(struct oci_prepared *p)
{
        oci_spec_free(p->spec);
        if (p->policy)
                policy_free(p->policy);
        free(p->sb.rlimits);
        free(p->sb.mounts);
        free(p->sb.seccomp.filter);
        free(p->policy_text);
        memset(p, 0, sizeof(*p));
}

/* config.json → what the sandbox is made of; refuses, by name, what cordon
 * cannot honour. 0 or -errno (said). */
static int prepare(const char *bundle, struct oci_prepared *p)
{
        _cleanup_free_ char *err = NULL;
        int r = oci_spec_load(bundle, &p->spec, &err);
        if (r < 0) {
                oci_error("%s", err ? err : strerror(-r));
                return r;
        }
        struct oci_spec *s = p->spec;
        if (!s->has_process) {
                oci_error("%s/config.json: process: a container needs a process to run", bundle);
                return -EINVAL;
        }
        for (size_t i = 0; i < s->n_namespaces; i++) {
                const struct oci_namespace *ns = &s->namespaces[i];
                if (!ns->path)
                        continue;
                if (ns->type == CLONE_NEWNET) {
                        /* podman and CNI set up a namespace with their own
                         * interfaces; cordon's egress gate replaces them */
                        oci_warn("linux.namespaces: the network namespace %s is not joined: the container gets "
                                 "cordon's own (loopback only, egress through the gate per %s)",
                                 ns->path, OCI_POLICY_ANNOTATION);
                        continue;
                }
                oci_error("linux.namespaces: joining an existing namespace (%s) is not supported: cordon creates "
                          "its own user, mount, pid, ipc, uts and cgroup namespaces for every container, and "
                          "sharing one with another container would let it reach outside its sandbox",
                          ns->path);
                return -EOPNOTSUPP;
        }
        if (s->process.apparmor_profile && lsm_enabled("apparmor")) {
                oci_error("process.apparmorProfile %s: cordon cannot apply AppArmor profiles; run without one "
                          "(cordon's own layers confine the container)",
                          s->process.apparmor_profile);
                return -EOPNOTSUPP;
        }
        if ((s->process.selinux_label || s->mount_label) && lsm_enabled("selinux")) {
                oci_error("process.selinuxLabel / linux.mountLabel: cordon cannot apply SELinux labels");
                return -EOPNOTSUPP;
        }
        for (size_t k = 0; k < OCI_HOOK_KINDS; k++)
                if ((k == OCI_HOOK_CREATE_CONTAINER || k == OCI_HOOK_START_CONTAINER) && s->n_hooks[k]) {
                        oci_error("hooks.%s: hooks inside the container's namespaces are not supported (they would "
                                  "run host binaries inside the sandbox)",
                                  k == OCI_HOOK_CREATE_CONTAINER ? "createContainer" : "startContainer");
                        return -EOPNOTSUPP;
                }

        r = oci_spec_policy(s, &p->policy, &err);
        if (r < 0) {
                oci_error("%s", err ? err : strerror(-r));
                return r;
        }
        const char *pol = oci_annotation(s, OCI_POLICY_ANNOTATION);
        p->policy_text = xstrdup(pol && pol[0] == '{' ? pol : "{}");

        struct oci_sandbox *sb = &p->sb;
        sb->hostname = s->hostname;
        const struct oci_user *u = &s->process.user;
        if (u->uid || u->gid || u->n_additional_gids) {
                if (geteuid() != 0) {
                        oci_error("process.user %u:%u: without root, cordon can map only the container's root", u->uid,
                                  u->gid);
                        return -EOPNOTSUPP;
                }
                if (u->uid >= 0x7fffffffu || u->gid >= 0x7fffffffu || u->n_additional_gids > OCI_MAX_IDS) {
                        oci_error("process.user: uid and gid must be below 2147483647, with at most %d "
                                  "additionalGids",
                                  OCI_MAX_IDS);
                        return -EINVAL;
                }
                sb->set_user = true;
                sb->uid = u->uid;
                sb->gid = u->gid;
                for (size_t i = 0; i < u->n_additional_gids; i++) {
                        if (u->additional_gids[i] >= 0x7fffffffu) {
                                oci_error("process.user.additionalGids[%zu]: must be below 2147483647", i);
                                return -EINVAL;
                        }
                        sb->groups[sb->n_groups++] = u->additional_gids[i];
                }
        }
        sb->rlimits = xcalloc(s->process.n_rlimits + 1, sizeof(struct oci_limit));
        for (size_t i = 0; i < s->process.n_rlimits; i++)
                sb->rlimits[sb->n_rlimits++] = (struct oci_limit){
                        s->process.rlimits[i].resource, s->process.rlimits[i].soft, s->process.rlimits[i].hard};
        if (s->seccomp) {
                r = oci_seccomp_compile(s->seccomp, &sb->seccomp, &err);
                if (r < 0) {
                        oci_error("linux.seccomp: %s", err ? err : strerror(-r));
                        return r;
                }
                sb->seccomp_flags = s->seccomp->flags;
        }
        sb->sysctls = s->sysctls;
        sb->n_sysctls = s->n_sysctls;
        sb->has_umask = s->process.user.has_umask;
        sb->umask = s->process.user.umask;
        sb->has_oom_score_adj = s->process.has_oom_score_adj;
        sb->oom_score_adj = s->process.oom_score_adj;
        sb->mounts = xcalloc(s->n_mounts + 1, sizeof(struct oci_extra_mount));
        for (size_t i = 0; i < s->n_mounts; i++) {
                const struct oci_mount *m = &s->mounts[i];
                const char *d = m->destination;
                if (view_provides(d, m->type))
                        continue;
                if (streq(m->type, "bind"))
                        continue; /* a bind of the policy (oci_spec_policy) */
                if (streq(m->type, "tmpfs") || streq(m->type, "mqueue")) {
                        sb->mounts[sb->n_mounts++] = (struct oci_extra_mount){
                                d, m->type, m->flags & (MS_RDONLY | MS_NOEXEC | MS_NOATIME | MS_NODIRATIME), m->data};
                        continue;
                }
                if (streq(m->type, "sysfs") && streq(d, "/sys")) {
                        /* sysfs would show the host's devices and kernel: the
                         * container gets an empty read-only /sys instead */
                        sb->mounts[sb->n_mounts++] =
                                (struct oci_extra_mount){d, "tmpfs", MS_RDONLY | MS_NOEXEC, "size=4k,mode=755"};
                        continue;
                }
                if ((streq(m->type, "cgroup") || streq(m->type, "cgroup2")) && startswith(d, "/sys/")) {
                        oci_debug("mounts: %s %s: not provided (the container's /sys is empty)", m->type, d);
                        continue;
                }
                oci_error("mounts: %s of type %s is not supported by cordon (bind, tmpfs, mqueue, and proc, "
                          "devpts, sysfs at their usual places are)",
                          d, m->type);
                return -EOPNOTSUPP;
        }
        return 0;
}

/* Sends the terminal's master to --console-socket as runc does (one
 * SCM_RIGHTS message; conmon and containerd receive it). */
static int send_console(const char *path, int master)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return negative_errno();
        static const char name[] = "/dev/ptmx";
        return send_fds(fd, name, sizeof(name) - 1, &master, 1);
}

static json_t *strv_json(char **v)
{
        json_t *a = json_array();
        for (char **p = v; p && *p; p++)
                json_array_append_new(a, json_string(*p));
        return a;
}

/* The detached sentry: as `cordon sandbox create` makes it, with the OCI
 * container's identity. Returns its pid; *ret_sid the sandbox id. */
static int start_sentry(struct oci_prepared *p, bool foreground, pid_t *ret_pid, char ret_sid[17])
{
        struct run_options o = {.tty = TTY_NEVER, .cgroup_mode = CG_AUTO, .cwd = "/"};
        run_limits_unset(&o.limits);
        o.policy = p->policy;
        o.oci = &p->sb;
        int memfd = memfd_create("cordon-oci-create", MFD_CLOEXEC);
        if (memfd < 0) {
                oci_error("create: %s", strerror(errno));
                return -errno;
        }
        struct serve_config cfg = {.policy_text = p->policy_text, .oci = true};
        int status;
        int r = sandbox_spawn_sentry(&o, &cfg, !foreground, memfd, ret_pid, ret_sid, &status);
        if (r == -ECHILD) {
                char buf[3000] = "";
                ssize_t n = pread(memfd, buf, sizeof(buf) - 1, 0);
                close(memfd);
                buf[n > 0 ? n : 0] = '\0';
                /* one line for the log: the sentry's own messages, joined */
                for (char *q = buf; *q; q++)
                        if (*q == '\n')
                                *q = q[1] ? ' ' : '\0';
                oci_error("the container's sandbox could not be created: %s",
                          buf[0] ? buf : "its sentry exited during set-up");
                return -EIO;
        }
        close(memfd);
        if (r < 0)
                oci_error("create: %s", strerror(-r));
        return r;
}

static json_t *process_request(const struct oci_process *pr, bool main_run, bool tty)
{
        json_t *req =
                json_pack("{s:s, s:o, s:o, s:s, s:b, s:b, s:b}", "op", "exec", "argv", strv_json(pr->args), "env",
                          strv_json(pr->env), "cwd", pr->cwd ? pr->cwd : "/", "cleanEnv", 1, "direct", 1, "detach", 0);
        if (main_run) {
                json_object_set_new(req, "hold", json_true());
                json_object_set_new(req, "main", json_true());
        }
        if (tty) {
                json_object_set_new(req, "tty", json_true());
                json_object_set_new(req, "rows", json_integer(pr->console_height));
                json_object_set_new(req, "cols", json_integer(pr->console_width));
        }
        return req;
}

/* stdin, stdout, stderr (a closed one as /dev/null) and the preserved fds. */
static size_t client_fds(int fds[EXEC_MAX_FDS], int nul, int preserve)
{
        size_t n = 0;
        for (int i = 0; i < 3; i++)
                fds[n++] = fcntl(i, F_GETFD) >= 0 ? i : nul;
        for (int i = 0; i < preserve; i++)
                fds[n++] = 3 + i;
        return n;
}

static int do_create(const struct create_args *a, pid_t *ret_sentry)
{
        if (G.systemd_cgroup) {
                oci_error("--systemd-cgroup cannot be honoured: cordon makes and owns each container's cgroup "
                          "itself (under its own cordon group), not a systemd unit; configure the cgroupfs manager "
                          "(podman --cgroup-manager=cgroupfs, containerd SystemdCgroup = false)");
                return -EOPNOTSUPP;
        }
        if (!container_id_valid(a->id)) {
                oci_error("invalid container id '%s': only letters, digits, '_', '-', '.' and '+' are allowed", a->id);
                return -EINVAL;
        }
        if (a->preserve_fds < 0 || a->preserve_fds > OCI_MAX_PRESERVE) {
                oci_error("--preserve-fds %d: cordon passes at most %d extra fds", a->preserve_fds, OCI_MAX_PRESERVE);
                return -EINVAL;
        }
        for (int i = 0; i < a->preserve_fds; i++)
                if (fcntl(3 + i, F_GETFD) < 0) {
                        oci_error("--preserve-fds %d: fd %d is not open", a->preserve_fds, 3 + i);
                        return -EBADF;
                }
        char bundle[PATH_MAX];
        if (!realpath(a->bundle ? a->bundle : ".", bundle)) {
                oci_error("bundle %s: %s", a->bundle ? a->bundle : ".", strerror(errno));
                return -errno;
        }
        int r = mkdir_p(G.root, 0711);
        if (r < 0) {
                oci_error("--root %s: %s", G.root, strerror(-r));
                return r;
        }
        _cleanup_close_ int rootfd = open(G.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0 || mkdirat(rootfd, a->id, 0700) < 0) {
                r = negative_errno();
                if (r == -EEXIST)
                        oci_error("container with id %s already exists", a->id);
                else
                        oci_error("--root %s: cannot make the container's directory: %s", G.root, strerror(-r));
                return r;
        }
        struct container c = {.id = xstrdup(a->id), .dirfd = -1};
        c.dirfd = openat(rootfd, a->id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (c.dirfd < 0 || flock(c.dirfd, LOCK_EX) < 0) {
                oci_error("%s/%s: %s", G.root, a->id, strerror(errno));
                container_remove(&c);
                container_close(&c);
                return -EIO;
        }
        c.state = json_pack("{s:s, s:b}", "id", a->id, "incomplete", 1);
        (void)container_save(&c);

        struct oci_prepared p = {0};
        r = prepare(bundle, &p);
        const struct oci_process *pr = p.spec ? &p.spec->process : NULL;
        if (r == 0 && pr->terminal && !a->console_socket && !a->foreground) {
                oci_error("cannot allocate tty if cordon-oci will detach without setting console socket");
                r = -EINVAL;
        }
        if (r == 0 && pr->terminal && !a->console_socket) {
                oci_error("process.terminal with `run` needs --console-socket in this version of cordon-oci");
                r = -EOPNOTSUPP;
        }
        pid_t spid = 0;
        char sid[17] = "";
        if (r == 0)
                r = start_sentry(&p, a->foreground, &spid, sid);
        if (r < 0) {
                prepared_done(&p);
                container_remove(&c);
                container_close(&c);
                return r;
        }
        char created[64];
        now_rfc3339(created, sizeof(created));
        json_t *ann = json_object();
        for (size_t i = 0; i < p.spec->n_annotations; i++)
                json_object_set_new(ann, p.spec->annotations[i].key, json_string(p.spec->annotations[i].value));
        json_decref(c.state);
        c.state = json_pack(
                "{s:s, s:s, s:s, s:s, s:o, s:s, s:I, s:I, s:b, s:{s:o, s:o, s:o}, s:i}", "id", a->id, "bundle", bundle,
                "rootfs", p.spec->root_path, "created", created, "annotations", ann, "sandbox", sid, "sentryPid",
                (json_int_t)spid, "sentryStart", (json_int_t)pid_start_time(spid), "started", 0, "hooks", "prestart",
                hooks_json(p.spec, OCI_HOOK_PRESTART), "createRuntime", hooks_json(p.spec, OCI_HOOK_CREATE_RUNTIME),
                "poststart", hooks_json(p.spec, OCI_HOOK_POSTSTART), "owner", (int)geteuid());
        json_object_set_new(json_object_get(c.state, "hooks"), "poststop", hooks_json(p.spec, OCI_HOOK_POSTSTOP));
        r = container_save(&c);
        if (r < 0)
                oci_error("%s/%s/state.json: %s", G.root, a->id, strerror(-r));

        /* the container's process, held before its exec until `start` */
        _cleanup_close_ int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        int fds[EXEC_MAX_FDS];
        size_t n_fds = client_fds(fds, nul, a->preserve_fds);
        json_t *req = process_request(pr, true, pr->terminal);
        if (a->preserve_fds)
                json_object_set_new(req, "preserveFds", json_integer(a->preserve_fds));
        int back[1] = {-1};
        if (r == 0)
                r = sentry_request(sid, "create", req, fds, n_fds, NULL, back, 1);
        else
                json_decref(req);
        if (r == 0 && pr->terminal) {
                if (back[0] < 0) {
                        oci_error("create: no terminal came back from the container's sentry");
                        r = -EIO;
                } else if ((r = send_console(a->console_socket, back[0])) < 0)
                        oci_error("--console-socket %s: cannot send the terminal: %s", a->console_socket, strerror(-r));
        }
        if (back[0] >= 0)
                close(back[0]);
        if (r == 0) {
                r = container_hooks(&c, "prestart", "prestart", "created");
                if (r == 0)
                        r = container_hooks(&c, "createRuntime", "createRuntime", "created");
        }
        if (r == 0 && a->pid_file && (r = write_pid_file(a->pid_file, spid)) < 0)
                oci_error("--pid-file %s: %s", a->pid_file, strerror(-r));
        if (r < 0) {
                (void)container_terminate(&c);
                if (!a->foreground)
                        (void)waitpid(spid, NULL, WNOHANG);
                else
                        (void)waitpid(spid, NULL, 0);
                container_remove(&c);
        }
        prepared_done(&p);
        container_close(&c);
        if (r == 0 && ret_sentry)
                *ret_sentry = spid;
        return r;
}

/* --- verbs --- */

static int lookup(const char *id, struct container *c)
{
        int r = container_open(id, c);
        if (r == -ENOENT)
                oci_error("container %s does not exist", id);
        return r;
}

static int cmd_create(int argc, char **argv, bool run);

static int cmd_start(int argc, char **argv)
{
        if (argc != 2) {
                oci_error("start: usage: start ID");
                return EXIT_USAGE;
        }
        struct container c;
        if (lookup(argv[1], &c) < 0)
                return 1;
        const char *status = container_status(&c);
        int r = -EINVAL;
        if (streq(status, "stopped"))
                oci_error("cannot start a container that has stopped");
        else if (!streq(status, "created"))
                oci_error("cannot start an already running container");
        else
                r = sentry_request(st_str(&c, "sandbox"), "start", json_pack("{s:s}", "op", "start"), NULL, 0, NULL,
                                   NULL, 0);
        if (r == 0) {
                json_object_set_new(c.state, "started", json_true());
                (void)container_save(&c);
                if (container_hooks(&c, "poststart", "poststart", "running") < 0)
                        oci_warn("a poststart hook of container %s failed", c.id);
        }
        container_close(&c);
        return r == 0 ? 0 : 1;
}

static int cmd_state(int argc, char **argv)
{
        if (argc != 2) {
                oci_error("state: usage: state ID");
                return EXIT_USAGE;
        }
        struct container c;
        if (lookup(argv[1], &c) < 0)
                return 1;
        json_t *doc = state_doc(&c, container_status(&c));
        json_dumpf(doc, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(doc);
        container_close(&c);
        return 0;
}

static int parse_signal(const char *s)
{
        char *end;
        long n = strtol(s, &end, 10);
        if (*s && !*end)
                return n > 0 && n < 65 ? (int)n : -EINVAL;
        if (startswith(s, "SIG") || startswith(s, "sig"))
                s += 3;
        for (int sig = 1; sig < 32; sig++) {
                const char *name = sigabbrev_np(sig);
                if (name && strcasecmp(name, s) == 0)
                        return sig;
        }
        if (strncasecmp(s, "RTMIN", 5) == 0 || strncasecmp(s, "RTMAX", 5) == 0) {
                long off = s[5] ? strtol(s + 5, &end, 10) : 0;
                int sig = (strncasecmp(s, "RTMIN", 5) == 0 ? SIGRTMIN : SIGRTMAX) + (int)off;
                if (!*end && sig >= SIGRTMIN && sig <= SIGRTMAX)
                        return sig;
        }
        return -EINVAL;
}

static int cmd_kill(int argc, char **argv)
{
        bool all = false;
        int i = 1;
        for (; i < argc && argv[i][0] == '-' && argv[i][1]; i++) {
                if (streq(argv[i], "--all") || streq(argv[i], "-a"))
                        all = true;
                else {
                        oci_error("kill: unknown option %s", argv[i]);
                        return EXIT_USAGE;
                }
        }
        if (i >= argc || argc - i > 3) {
                oci_error("kill: usage: kill [--all] ID [SIGNAL]");
                return EXIT_USAGE;
        }
        const char *id = argv[i++];
        /* runc also takes --all after the id */
        const char *signame = "SIGTERM";
        for (; i < argc; i++) {
                if (streq(argv[i], "--all") || streq(argv[i], "-a"))
                        all = true;
                else
                        signame = argv[i];
        }
        int sig = parse_signal(signame);
        if (sig < 0) {
                oci_error("kill: unknown signal \"%s\"", signame);
                return EXIT_USAGE;
        }
        struct container c;
        if (lookup(id, &c) < 0)
                return 1;
        int r = -ESRCH;
        if (streq(container_status(&c), "stopped"))
                oci_error("container not running");
        else
                r = sentry_request(st_str(&c, "sandbox"), "kill",
                                   json_pack("{s:s, s:i, s:b}", "op", "kill", "signal", sig, "all", all), NULL, 0, NULL,
                                   NULL, 0);
        container_close(&c);
        return r == 0 ? 0 : 1;
}

static int cmd_delete(int argc, char **argv)
{
        bool force = false;
        const char *id = NULL;
        for (int i = 1; i < argc; i++) {
                if (streq(argv[i], "--force") || streq(argv[i], "-f"))
                        force = true;
                else if (argv[i][0] == '-') {
                        oci_error("delete: unknown option %s", argv[i]);
                        return EXIT_USAGE;
                } else if (!id)
                        id = argv[i];
                else {
                        oci_error("delete: usage: delete [--force] ID");
                        return EXIT_USAGE;
                }
        }
        if (!id) {
                oci_error("delete: usage: delete [--force] ID");
                return EXIT_USAGE;
        }
        struct container c;
        int r = container_open(id, &c);
        if (r == -ENOENT && force)
                return 0; /* as runc: what is asked for is already true */
        if (r == -ENOENT)
                oci_error("container %s does not exist", id);
        if (r < 0)
                return 1;
        const char *status = container_status(&c);
        if (!force && (streq(status, "running") || streq(status, "paused"))) {
                oci_error("cannot delete container %s that is not stopped: %s", id, status);
                container_close(&c);
                return 1;
        }
        r = container_terminate(&c);
        if (r == 0) {
                if (container_hooks(&c, "poststop", "poststop", "stopped") < 0)
                        oci_warn("a poststop hook of container %s failed", id);
                r = container_remove(&c);
                if (r < 0)
                        oci_error("delete: %s/%s: %s", G.root, id, strerror(-r));
        }
        container_close(&c);
        return r == 0 ? 0 : 1;
}

static int simple_op(int argc, char **argv, const char *op)
{
        if (argc != 2) {
                oci_error("%s: usage: %s ID", op, op);
                return EXIT_USAGE;
        }
        struct container c;
        if (lookup(argv[1], &c) < 0)
                return 1;
        const char *status = container_status(&c);
        int r = -EINVAL;
        bool pause = streq(op, "pause");
        if (pause && !streq(status, "running"))
                oci_error("container %s is not running (%s)", c.id, status);
        else if (!pause && !streq(status, "paused"))
                oci_error("container %s is not paused (%s)", c.id, status);
        else
                r = sentry_request(st_str(&c, "sandbox"), op, json_pack("{s:s}", "op", op), NULL, 0, NULL, NULL, 0);
        container_close(&c);
        return r == 0 ? 0 : 1;
}

static int cmd_list(int argc, char **argv)
{
        bool json = false, quiet = false;
        for (int i = 1; i < argc; i++) {
                if (streq(argv[i], "--format=json") || streq(argv[i], "-f=json") ||
                    ((streq(argv[i], "--format") || streq(argv[i], "-f")) && i + 1 < argc &&
                     streq(argv[i + 1], "json") && ++i))
                        json = true;
                else if ((streq(argv[i], "--format") || streq(argv[i], "-f")) && i + 1 < argc &&
                         streq(argv[i + 1], "table"))
                        i++;
                else if (streq(argv[i], "-q") || streq(argv[i], "--quiet"))
                        quiet = true;
                else {
                        oci_error("list: unknown option %s", argv[i]);
                        return EXIT_USAGE;
                }
        }
        json_t *all = json_array();
        DIR *d = opendir(G.root);
        struct dirent *de;
        while (d && (de = readdir(d))) {
                if (de->d_name[0] == '.' || !container_id_valid(de->d_name))
                        continue;
                struct container c;
                if (container_open(de->d_name, &c) < 0)
                        continue;
                const char *status = container_status(&c);
                json_t *doc = state_doc(&c, status);
                json_object_set_new(doc, "rootfs", json_string(st_str(&c, "rootfs") ? st_str(&c, "rootfs") : ""));
                json_object_set_new(doc, "created", json_string(st_str(&c, "created") ? st_str(&c, "created") : ""));
                json_object_set_new(
                        doc, "owner",
                        json_string(json_integer_value(json_object_get(c.state, "owner")) ? "user" : "root"));
                json_array_append_new(all, doc);
                container_close(&c);
        }
        if (d)
                closedir(d);
        size_t i;
        json_t *v;
        if (json) {
                json_dumpf(all, stdout, JSON_COMPACT);
                putchar('\n');
        } else if (quiet) {
                json_array_foreach(all, i, v) printf("%s\n", json_string_value(json_object_get(v, "id")));
        } else {
                printf("%-20s %-8s %-10s %-40s %-31s %s\n", "ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER");
                json_array_foreach(all, i, v)
                {
                        printf("%-20s %-8lld %-10s %-40s %-31s %s\n", json_string_value(json_object_get(v, "id")),
                               (long long)json_integer_value(json_object_get(v, "pid")),
                               json_string_value(json_object_get(v, "status")),
                               json_string_value(json_object_get(v, "bundle")),
                               json_string_value(json_object_get(v, "created")),
                               json_string_value(json_object_get(v, "owner")));
                }
        }
        json_decref(all);
        return 0;
}

/* Every pid in the cgroup tree under dir (the sandbox's cgroup). */
static void collect_pids(const char *dir, json_t *pids, int depth)
{
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        long long pid;
        while (f && fscanf(f, "%lld", &pid) == 1)
                json_array_append_new(pids, json_integer(pid));
        if (depth > 8)
                return;
        DIR *d = opendir(dir);
        struct dirent *de;
        while (d && (de = readdir(d)))
                if (de->d_type == DT_DIR && de->d_name[0] != '.') {
                        snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                        collect_pids(path, pids, depth + 1);
                }
        if (d)
                closedir(d);
}

static int cmd_ps(int argc, char **argv)
{
        bool json = false;
        const char *id = NULL;
        char **ps_args = NULL;
        for (int i = 1; i < argc; i++) {
                if (streq(argv[i], "--format=json") || streq(argv[i], "-f=json") ||
                    ((streq(argv[i], "--format") || streq(argv[i], "-f")) && i + 1 < argc &&
                     streq(argv[i + 1], "json") && ++i))
                        json = true;
                else if ((streq(argv[i], "--format") || streq(argv[i], "-f")) && i + 1 < argc &&
                         streq(argv[i + 1], "table"))
                        i++;
                else if (!id && argv[i][0] != '-')
                        id = argv[i];
                else if (id) {
                        ps_args = argv + i;
                        break;
                } else {
                        oci_error("ps: unknown option %s", argv[i]);
                        return EXIT_USAGE;
                }
        }
        if (!id) {
                oci_error("ps: usage: ps [--format table|json] ID [ps options]");
                return EXIT_USAGE;
        }
        struct container c;
        if (lookup(id, &c) < 0)
                return 1;
        json_t *pids = json_array();
        if (!streq(container_status(&c), "stopped")) {
                char dir[600], path[700];
                json_error_t jerr;
                if (sandbox_dir(st_str(&c, "sandbox"), dir, sizeof(dir)) == 0) {
                        snprintf(path, sizeof(path), "%s/state.json", dir);
                        json_t *sst = json_load_file(path, 0, &jerr);
                        size_t i;
                        json_t *cg;
                        json_array_foreach(json_object_get(sst, "cgroups"), i, cg)
                        {
                                const char *cgdir = json_string_value(cg);
                                char probe[PATH_MAX];
                                snprintf(probe, sizeof(probe), "%s/cgroup.procs", cgdir ? cgdir : "");
                                if (cgdir && access(probe, F_OK) == 0) {
                                        collect_pids(cgdir, pids, 0);
                                        break;
                                }
                        }
                        json_decref(sst);
                }
        }
        container_close(&c);
        if (json) {
                json_dumpf(pids, stdout, JSON_COMPACT);
                putchar('\n');
                json_decref(pids);
                return 0;
        }
        /* the table is ps(1)'s own, for these pids */
        size_t n = json_array_size(pids), i;
        json_t *v;
        char *list = xstrdup("");
        json_array_foreach(pids, i, v)
        {
                char *next = xasprintf("%s%s%lld", list, i ? "," : "", (long long)json_integer_value(v));
                free(list);
                list = next;
        }
        json_decref(pids);
        if (n == 0) {
                free(list);
                printf("UID          PID    PPID  C STIME TTY          TIME CMD\n");
                return 0;
        }
        size_t extra = 0;
        while (ps_args && ps_args[extra])
                extra++;
        char **args = xcalloc(extra + 5, sizeof(char *));
        size_t k = 0;
        args[k++] = (char *)"ps";
        if (extra == 0)
                args[k++] = (char *)"-f";
        for (size_t e = 0; e < extra; e++)
                args[k++] = ps_args[e];
        args[k++] = (char *)"-p";
        args[k++] = list;
        fflush(NULL);
        execvp("ps", args);
        oci_error("ps: cannot run ps(1): %s", strerror(errno));
        return 1;
}

static volatile sig_atomic_t pending_signal;
static void on_signal(int sig)
{
        pending_signal = sig;
}

/* runc's --user uid[:gid] */
static int parse_user(const char *s, uint32_t *uid, uint32_t *gid)
{
        char *end;
        unsigned long u = strtoul(s, &end, 10);
        if (end == s || (*end && *end != ':'))
                return -EINVAL;
        *uid = (uint32_t)u;
        if (*end == ':') {
                const char *g = end + 1;
                unsigned long gv = strtoul(g, &end, 10);
                if (end == g || *end)
                        return -EINVAL;
                *gid = (uint32_t)gv;
        }
        return 0;
}

static int cmd_exec(int argc, char **argv)
{
        static const struct option opts[] = {
                {"process", required_argument, NULL, 'p'},
                {"tty", no_argument, NULL, 't'},
                {"console-socket", required_argument, NULL, 's'},
                {"detach", no_argument, NULL, 'd'},
                {"pid-file", required_argument, NULL, 'P'},
                {"env", required_argument, NULL, 'e'},
                {"cwd", required_argument, NULL, 'w'},
                {"user", required_argument, NULL, 'u'},
                {"preserve-fds", required_argument, NULL, 'F'},
                {"additional-gids", required_argument, NULL, 'g'},
                {"cap", required_argument, NULL, 'c'},
                {"no-new-privs", no_argument, NULL, 'n'},
                {"apparmor", required_argument, NULL, 'a'},
                {"process-label", required_argument, NULL, 'l'},
                {"ignore-paused", no_argument, NULL, 'i'},
                {"cgroup", required_argument, NULL, 'C'},
                {0},
        };
        const char *process_file = NULL, *console_socket = NULL, *pid_file = NULL, *cwd = NULL, *user = NULL;
        bool tty = false, detach = false;
        int preserve = 0;
        _cleanup_(strv_freep) char **env = xcalloc(1, sizeof(char *));
        size_t n_env = 0;
        int ch;
        optind = 1;
        opterr = 0;
        while ((ch = getopt_long(argc, argv, "+p:ts:dP:e:w:u:c:", opts, NULL)) != -1) {
                switch (ch) {
                case 'p':
                        process_file = optarg;
                        break;
                case 't':
                        tty = true;
                        break;
                case 's':
                        console_socket = optarg;
                        break;
                case 'd':
                        detach = true;
                        break;
                case 'P':
                        pid_file = optarg;
                        break;
                case 'e':
                        env = xrealloc(env, (n_env + 2) * sizeof(char *));
                        env[n_env++] = xstrdup(optarg);
                        env[n_env] = NULL;
                        break;
                case 'w':
                        cwd = optarg;
                        break;
                case 'u':
                        user = optarg;
                        break;
                case 'F':
                        preserve = atoi(optarg);
                        break;
                case 'c':
                        /* cordon's floor: a process never holds a capability */
                        oci_error("exec --cap %s: cordon grants no capabilities to a container's processes", optarg);
                        return 1;
                case 'a':
                case 'l':
                        oci_warn("exec: LSM label %s ignored (no LSM profile is applied by cordon)", optarg);
                        break;
                case 'n':
                case 'i':
                case 'g':
                case 'C':
                        break; /* no_new_privs is always set; the others change nothing here */
                default:
                        oci_error("exec: unknown option %s", argv[optind - 1]);
                        return EXIT_USAGE;
                }
        }
        if (optind >= argc) {
                oci_error("exec: usage: exec [options] ID [COMMAND ARGS...]");
                return EXIT_USAGE;
        }
        const char *id = argv[optind++];
        if (preserve < 0 || preserve > OCI_MAX_PRESERVE) {
                oci_error("exec --preserve-fds %d: at most %d", preserve, OCI_MAX_PRESERVE);
                return 1;
        }
        struct container c;
        if (lookup(id, &c) < 0)
                return 1;
        const char *status = container_status(&c);
        if (!streq(status, "running")) {
                oci_error("cannot exec in a %s container", status);
                container_close(&c);
                return 1;
        }

        /* the process: the --process file, else the container's own with
         * the command line's overrides (as runc does) */
        struct oci_process pr = {0};
        _cleanup_free_ char *err = NULL;
        struct oci_spec *spec = NULL;
        int r = 0;
        if (oci_spec_load(st_str(&c, "bundle"), &spec, &err) < 0) {
                oci_error("exec: the container's config.json: %s", err ? err : "unreadable");
                r = -EINVAL;
        }
        uint32_t want_uid = 0, want_gid = 0;
        if (r == 0 && process_file) {
                _cleanup_free_ char *text = NULL;
                free(TAKE_PTR(err));
                if ((r = read_file_text(process_file, &text)) < 0)
                        oci_error("exec --process %s: %s", process_file, strerror(-r));
                else if ((r = oci_process_parse(text, strlen(text), &pr, &err)) < 0)
                        oci_error("exec --process %s: %s", process_file, err ? err : strerror(-r));
                want_uid = pr.user.uid;
                want_gid = pr.user.gid;
        } else if (r == 0) {
                if (optind >= argc) {
                        oci_error("exec: no command given (arguments after the id, or --process FILE)");
                        r = -EINVAL;
                } else {
                        pr.args = xcalloc((size_t)(argc - optind) + 1, sizeof(char *));
                        for (int i = optind; i < argc; i++)
                                pr.args[i - optind] = xstrdup(argv[i]);
                        size_t n = 0;
                        for (char **e = spec->process.env; e && *e; e++)
                                n++;
                        pr.env = xcalloc(n + 1, sizeof(char *));
                        for (size_t i = 0; i < n; i++)
                                pr.env[i] = xstrdup(spec->process.env[i]);
                        pr.cwd = xstrdup(spec->process.cwd ? spec->process.cwd : "/");
                        pr.terminal = tty;
                        want_uid = spec->process.user.uid;
                        want_gid = spec->process.user.gid;
                }
        }
        if (r == 0 && user && parse_user(user, &want_uid, &want_gid) < 0) {
                oci_error("exec --user %s: expected UID[:GID]", user);
                r = -EINVAL;
        }
        if (r == 0 && (want_uid != spec->process.user.uid || want_gid != spec->process.user.gid)) {
                /* every process of a cordon container has the identity init
                 * took before it dropped its privileges for good */
                oci_error("exec as %u:%u: cordon runs every process of a container as its process.user (%u:%u)",
                          want_uid, want_gid, spec->process.user.uid, spec->process.user.gid);
                r = -EOPNOTSUPP;
        }
        if (r == 0) {
                if (cwd) {
                        free(pr.cwd);
                        pr.cwd = xstrdup(cwd);
                }
                for (size_t i = 0; i < n_env; i++) {
                        size_t n = 0;
                        while (pr.env && pr.env[n])
                                n++;
                        pr.env = xrealloc(pr.env, (n + 2) * sizeof(char *));
                        pr.env[n] = xstrdup(env[i]);
                        pr.env[n + 1] = NULL;
                }
                if (tty)
                        pr.terminal = true;
                if (pr.terminal && !console_socket) {
                        oci_error("exec --tty needs --console-socket in this version of cordon-oci");
                        r = -EOPNOTSUPP;
                }
        }
        oci_spec_free(spec);
        const char *sid = st_str(&c, "sandbox");
        _cleanup_free_ char *sid_copy = sid ? xstrdup(sid) : NULL;
        container_close(&c);
        if (r < 0) {
                oci_process_done(&pr);
                return 1;
        }

        _cleanup_close_ int conn = -1;
        r = connect_sentry(sid_copy, &conn);
        if (r < 0) {
                oci_error("exec: the container's sentry does not answer: %s", strerror(-r));
                oci_process_done(&pr);
                return 1;
        }
        _cleanup_close_ int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        int fds[EXEC_MAX_FDS];
        size_t n_fds = client_fds(fds, nul, preserve);
        json_t *req = process_request(&pr, false, pr.terminal);
        if (preserve)
                json_object_set_new(req, "preserveFds", json_integer(preserve));
        oci_process_done(&pr);
        r = control_send(conn, req, fds, n_fds);
        json_t *rep = NULL;
        int back[1] = {-1};
        if (r >= 0)
                r = control_recv(conn, &rep, back, 1);
        if (r <= 0) {
                oci_error("exec: no answer from the container's sentry");
                return 1;
        }
        const char *rerr = json_string_value(json_object_get(rep, "error"));
        if (rerr) {
                oci_error("exec: %s", rerr);
                json_decref(rep);
                return 1;
        }
        json_decref(rep);
        if (back[0] >= 0) {
                r = send_console(console_socket, back[0]);
                close(back[0]);
                if (r < 0) {
                        oci_error("--console-socket %s: %s", console_socket, strerror(-r));
                        return 1;
                }
        }

        /* The process is a child of the sandbox's init, which no caller can
         * wait for; a waiter that exits with its status stands in for it
         * (in --pid-file, as conmon and the shim expect for exec). */
        pid_t waiter = 0;
        if (detach) {
                fflush(NULL);
                waiter = fork();
                if (waiter < 0) {
                        oci_error("exec: fork: %s", strerror(errno));
                        return 1;
                }
                if (waiter > 0) {
                        if (pid_file && (r = write_pid_file(pid_file, waiter)) < 0) {
                                oci_error("--pid-file %s: %s", pid_file, strerror(-r));
                                return 1;
                        }
                        return 0;
                }
                /* the waiter holds nothing of the caller's: its pipes must
                 * close when the process closes them */
                if (nul >= 0) {
                        dup2(nul, 0);
                        dup2(nul, 1);
                        dup2(nul, 2);
                }
                setsid();
        } else if (pid_file && (r = write_pid_file(pid_file, getpid())) < 0) {
                oci_error("--pid-file %s: %s", pid_file, strerror(-r));
                return 1;
        }
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
        struct sigaction sa = {.sa_handler = on_signal};
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                sigaction(sigs[i], &sa, NULL);
        for (;;) {
                if (pending_signal) {
                        int sig = pending_signal;
                        pending_signal = 0;
                        (void)control_send(conn, json_pack("{s:i}", "signal", sig), NULL, 0);
                }
                struct pollfd p = {conn, POLLIN, 0};
                if (poll(&p, 1, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        break;
                }
                rep = NULL;
                int n = control_recv(conn, &rep, NULL, 0);
                if (n <= 0)
                        break;
                json_t *code = json_object_get(rep, "exitCode");
                if (code) {
                        int ec = (int)json_integer_value(code);
                        json_decref(rep);
                        return ec;
                }
                json_decref(rep);
        }
        if (!detach)
                oci_error("exec: the container's sentry went away before the process ended");
        return 128 + SIGKILL;
}

static int cmd_create(int argc, char **argv, bool run)
{
        static const struct option opts[] = {
                {"bundle", required_argument, NULL, 'b'},
                {"pid-file", required_argument, NULL, 'P'},
                {"console-socket", required_argument, NULL, 's'},
                {"preserve-fds", required_argument, NULL, 'F'},
                {"no-pivot", no_argument, NULL, 'n'},
                {"no-new-keyring", no_argument, NULL, 'k'},
                {"detach", no_argument, NULL, 'd'},
                {"keep", no_argument, NULL, 'K'},
                {"no-subreaper", no_argument, NULL, 'S'},
                {0},
        };
        struct create_args a = {0};
        bool detach = false, keep = false;
        int ch;
        optind = 1;
        opterr = 0;
        while ((ch = getopt_long(argc, argv, "+b:dP:s:", opts, NULL)) != -1) {
                switch (ch) {
                case 'b':
                        a.bundle = optarg;
                        break;
                case 'P':
                        a.pid_file = optarg;
                        break;
                case 's':
                        a.console_socket = optarg;
                        break;
                case 'F': {
                        char *end;
                        long n = strtol(optarg, &end, 10);
                        if (*end || n < 0 || n > 1024) {
                                oci_error("--preserve-fds %s: expected a small number", optarg);
                                return EXIT_USAGE;
                        }
                        a.preserve_fds = (int)n;
                        break;
                }
                case 'n':
                        /* no pivot_root is cordon's business: the view is
                         * always entered with one, and the host's tree detached */
                        oci_debug("--no-pivot: ignored; cordon always pivots into the container's view");
                        break;
                case 'k':
                        break; /* keyctl is refused in the sandbox anyway: no keyring to share */
                case 'd':
                        detach = true;
                        break;
                case 'K':
                        keep = true;
                        break;
                case 'S':
                        break;
                default:
                        oci_error("%s: unknown option %s", run ? "run" : "create", argv[optind - 1]);
                        return EXIT_USAGE;
                }
        }
        if (optind != argc - 1) {
                oci_error("%s: usage: %s [options] ID", run ? "run" : "create", run ? "run" : "create");
                return EXIT_USAGE;
        }
        a.id = argv[optind];
        if (!run)
                return do_create(&a, NULL) == 0 ? 0 : 1;

        /* run = create + start (+ wait and delete unless --detach) */
        a.foreground = !detach;
        pid_t spid = 0;
        if (do_create(&a, &spid) < 0)
                return 1;
        char *start_argv[] = {(char *)"start", (char *)a.id, NULL};
        if (cmd_start(2, start_argv) != 0) {
                char *del[] = {(char *)"delete", (char *)"--force", (char *)a.id, NULL};
                (void)cmd_delete(3, del);
                return 1;
        }
        if (detach)
                return 0;
        static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};
        struct sigaction sa = {.sa_handler = on_signal};
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ELEMENTSOF(sigs); i++)
                sigaction(sigs[i], &sa, NULL);
        int status = 0;
        for (;;) {
                pid_t w = waitpid(spid, &status, 0);
                if (w == spid)
                        break;
                if (w < 0 && errno != EINTR) {
                        status = (EXIT_SANDBOX << 8);
                        break;
                }
                if (pending_signal) {
                        char num[16];
                        snprintf(num, sizeof(num), "%d", (int)pending_signal);
                        pending_signal = 0;
                        char *kill_argv[] = {(char *)"kill", (char *)a.id, num, NULL};
                        (void)cmd_kill(3, kill_argv);
                }
        }
        if (!keep) {
                char *del[] = {(char *)"delete", (char *)"--force", (char *)a.id, NULL};
                (void)cmd_delete(3, del);
        }
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* --- features, spec, version --- */

static int cmd_features(void)
{
        json_t *ns = json_pack("[sssssss]", "cgroup", "ipc", "mount", "network", "pid", "user", "uts");
        json_t *actions = json_pack("[sssssss]", "SCMP_ACT_ALLOW", "SCMP_ACT_ERRNO", "SCMP_ACT_KILL",
                                    "SCMP_ACT_KILL_PROCESS", "SCMP_ACT_KILL_THREAD", "SCMP_ACT_LOG", "SCMP_ACT_TRAP");
        json_array_append_new(actions, json_string("SCMP_ACT_TRACE"));
        json_t *ops = json_pack("[sssssss]", "SCMP_CMP_EQ", "SCMP_CMP_GE", "SCMP_CMP_GT", "SCMP_CMP_LE", "SCMP_CMP_LT",
                                "SCMP_CMP_MASKED_EQ", "SCMP_CMP_NE");
        json_t *doc = json_pack(
                "{s:s, s:s, s:[ssss], s:[ssssssssssss], s:{s:o, s:[], s:{s:b, s:b, s:b, s:b}, s:{s:b, s:o, s:o, "
                "s:[ss], s:[sss]}, s:{s:b}, s:{s:b}}, s:{s:s, s:s, s:s}}",
                "ociVersionMin", "1.0.0", "ociVersionMax", OCI_SPEC_VERSION, "hooks", "prestart", "createRuntime",
                "poststart", "poststop", "mountOptions", "ro", "rw", "nosuid", "nodev", "noexec", "bind", "rbind",
                "private", "rprivate", "relatime", "noatime", "strictatime", "linux", "namespaces", ns, "capabilities",
                "cgroup", "v1", 1, "v2", 1, "systemd", 0, "systemdUser", 0, "seccomp", "enabled", 1, "actions", actions,
                "operators", ops, "archs", "SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64", "knownFlags",
                "SECCOMP_FILTER_FLAG_TSYNC", "SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW", "apparmor",
                "enabled", 0, "selinux", "enabled", 0, "annotations", OCI_POLICY_ANNOTATION,
                "cordon policy for the container: a path to a policy file or inline JSON; without it, no egress",
                "dev.cordon.capabilities", "a container never holds a capability: every set is empty",
                "dev.cordon.namespaces",
                "cordon always creates its own namespaces; a network namespace path is "
                "replaced by cordon's own, other paths are refused");
        if (!doc) {
                oci_error("features: cannot build the document");
                return 1;
        }
        json_dumpf(doc, stdout, JSON_INDENT(2));
        putchar('\n');
        json_decref(doc);
        return 0;
}

static int cmd_spec(int argc, char **argv)
{
        const char *bundle = ".";
        bool rootless = false;
        for (int i = 1; i < argc; i++) {
                if (streq(argv[i], "--rootless"))
                        rootless = true;
                else if ((streq(argv[i], "--bundle") || streq(argv[i], "-b")) && i + 1 < argc)
                        bundle = argv[++i];
                else if (startswith(argv[i], "--bundle="))
                        bundle = argv[i] + 9;
                else {
                        oci_error("spec: unknown option %s", argv[i]);
                        return EXIT_USAGE;
                }
        }
        json_t *mounts = json_pack(
                "[{s:s, s:s, s:s}, {s:s, s:s, s:s, s:[ssss]}, {s:s, s:s, s:s, s:[ssssss]}, {s:s, s:s, s:s, "
                "s:[ssss]}, {s:s, s:s, s:s, s:[sss]}]",
                "destination", "/proc", "type", "proc", "source", "proc", "destination", "/dev", "type", "tmpfs",
                "source", "tmpfs", "options", "nosuid", "strictatime", "mode=755", "size=65536k", "destination",
                "/dev/pts", "type", "devpts", "source", "devpts", "options", "nosuid", "noexec", "newinstance",
                "ptmxmode=0666", "mode=0620", rootless ? "mode=0620" : "gid=5", "destination", "/dev/shm", "type",
                "tmpfs", "source", "shm", "options", "nosuid", "noexec", "nodev", "mode=1777", "destination",
                "/dev/mqueue", "type", "mqueue", "source", "mqueue", "options", "nosuid", "noexec", "nodev");
        json_array_append_new(mounts, json_pack("{s:s, s:s, s:s, s:[ssss]}", "destination", "/sys", "type", "sysfs",
                                                "source", "sysfs", "options", "nosuid", "noexec", "nodev", "ro"));
        json_t *nss = json_pack("[{s:s}, {s:s}, {s:s}, {s:s}, {s:s}]", "type", "pid", "type", "ipc", "type", "uts",
                                "type", "mount", "type", "cgroup");
        if (rootless)
                json_array_append_new(nss, json_pack("{s:s}", "type", "user"));
        else
                json_array_append_new(nss, json_pack("{s:s}", "type", "network"));
        json_t *doc = json_pack(
                "{s:s, s:{s:b, s:{s:i, s:i}, s:[s], s:[ss], s:s, s:[{s:s, s:i, s:i}], s:b}, s:{s:s, s:b}, s:s, "
                "s:o, s:{s:o, s:[sssssssss], s:[ssssss]}}",
                "ociVersion", OCI_SPEC_VERSION, "process", "terminal", 1, "user", "uid", 0, "gid", 0, "args", "sh",
                "env", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm", "cwd", "/",
                "rlimits", "type", "RLIMIT_NOFILE", "hard", 1024, "soft", 1024, "noNewPrivileges", 1, "root", "path",
                "rootfs", "readonly", 1, "hostname", "cordon", "mounts", mounts, "linux", "namespaces", nss,
                "maskedPaths", "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
                "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "readonlyPaths",
                "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger", "/proc/scsi");
        if (rootless) {
                json_object_set_new(
                        json_object_get(doc, "linux"), "uidMappings",
                        json_pack("[{s:i, s:i, s:i}]", "containerID", 0, "hostID", (int)getuid(), "size", 1));
                json_object_set_new(
                        json_object_get(doc, "linux"), "gidMappings",
                        json_pack("[{s:i, s:i, s:i}]", "containerID", 0, "hostID", (int)getgid(), "size", 1));
        }
        char *text = doc ? json_dumps(doc, JSON_INDENT(2)) : NULL;
        json_decref(doc);
        _cleanup_close_ int dfd = open(bundle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        _cleanup_close_ int fd =
                dfd >= 0 ? openat(dfd, "config.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644) : -1;
        if (!text || fd < 0) {
                oci_error("spec: %s/config.json: %s", bundle, errno == EEXIST ? "File exists" : strerror(errno));
                free(text);
                return 1;
        }
        size_t n = strlen(text);
        text = xrealloc(text, n + 2);
        text[n] = '\n';
        int r = write_all(fd, text, n + 1);
        free(text);
        return r < 0 ? 1 : 0;
}

static void print_version(void)
{
        const struct scmp_version *v = seccomp_version();
        printf("cordon-oci version %s\nspec: %s\nruntime: cordon (seccomp user-notification sandbox)\n"
               "libseccomp: %u.%u.%u\n",
               PACKAGE_VERSION, OCI_SPEC_VERSION, v->major, v->minor, v->micro);
}

static void oci_usage(FILE *f)
{
        fputs("Usage: cordon-oci [GLOBAL OPTIONS] COMMAND [OPTIONS] ...   (also: cordon oci ...)\n"
              "\n"
              "An OCI runtime with runc's command line: each container runs in a cordon sandbox.\n"
              "\n"
              "Global options:\n"
              "  --root DIR             containers' state (default " OCI_DEFAULT_ROOT ")\n"
              "  --log FILE             also write errors there\n"
              "  --log-format text|json runc's formats\n"
              "  --debug                say more\n"
              "  --systemd-cgroup       refused at create: cordon owns each container's cgroup\n"
              "\n"
              "Commands:\n"
              "  create [--bundle DIR] [--pid-file F] [--console-socket S] [--preserve-fds N] ID\n"
              "  start ID | state ID | pause ID | resume ID\n"
              "  kill [--all] ID [SIGNAL]\n"
              "  delete [--force] ID\n"
              "  run [--bundle DIR] [--detach] [--pid-file F] [--console-socket S] ID\n"
              "  exec [--process FILE] [--tty --console-socket S] [--detach] [--pid-file F] [--env K=V]\n"
              "       [--cwd DIR] [--user UID[:GID]] ID [COMMAND ARGS...]\n"
              "  list [--format table|json] | ps [--format table|json] ID\n"
              "  features | spec [--rootless] [--bundle DIR] | --version\n"
              "\n"
              "Network: the annotation " OCI_POLICY_ANNOTATION " names the container's cordon policy\n"
              "(a file, or inline JSON); without it the container has no egress at all.\n",
              f);
}

/* A global option: 1 consumed one argument, 2 two, 0 not global, -1 bad. */
static int global_option(int argc, char **argv, int i)
{
        const char *a = argv[i];
        const char *val = NULL;
        int used = 1;
        static const char *const with_value[] = {"--root", "--log", "--log-format", "--criu", "--rootless"};
        for (size_t k = 0; k < ELEMENTSOF(with_value); k++) {
                size_t l = strlen(with_value[k]);
                if (strncmp(a, with_value[k], l) == 0 && (a[l] == '=' || a[l] == '\0')) {
                        if (a[l] == '=')
                                val = a + l + 1;
                        else if (i + 1 < argc) {
                                val = argv[i + 1];
                                used = 2;
                        } else {
                                oci_error("%s needs a value", a);
                                return -1;
                        }
                        switch (k) {
                        case 0:
                                G.root = val;
                                break;
                        case 1:
                                G.log_path = val;
                                break;
                        case 2:
                                if (!streq(val, "text") && !streq(val, "json")) {
                                        oci_error("--log-format %s: expected text or json", val);
                                        return -1;
                                }
                                G.log_json = streq(val, "json");
                                break;
                        default:
                                break; /* --criu (no checkpointing), --rootless (detected) */
                        }
                        return used;
                }
        }
        if (streq(a, "--debug")) {
                G.debug = true;
                return 1;
        }
        if (streq(a, "--systemd-cgroup")) {
                G.systemd_cgroup = true;
                return 1;
        }
        return 0;
}

int sentry_oci(int argc, char **argv)
{
        int i = 1;
        /* the log first: errors about the rest of the command line go there */
        for (int k = 1; k < argc && argv[k][0] == '-'; k++) {
                bool takes_value = streq(argv[k], "--root") || streq(argv[k], "--criu") || streq(argv[k], "--rootless");
                if (takes_value) {
                        k++;
                        continue;
                }
                if (streq(argv[k], "--log-format") && k + 1 < argc)
                        G.log_json = streq(argv[k + 1], "json");
                else if (streq(argv[k], "--log-format=json"))
                        G.log_json = true;
                if (streq(argv[k], "--log") && k + 1 < argc)
                        G.log_path = argv[k + 1];
                else if (startswith(argv[k], "--log="))
                        G.log_path = argv[k] + 6;
                if (streq(argv[k], "--log") || streq(argv[k], "--log-format"))
                        k++;
        }
        if (G.log_path) {
                G.log_fd = open(G.log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
                if (G.log_fd < 0)
                        fprintf(stderr, "cordon-oci: --log %s: %m\n", G.log_path);
        }
        while (i < argc && argv[i][0] == '-') {
                if (streq(argv[i], "--version") || streq(argv[i], "-v")) {
                        print_version();
                        return 0;
                }
                if (streq(argv[i], "--help") || streq(argv[i], "-h")) {
                        oci_usage(stdout);
                        return 0;
                }
                int n = global_option(argc, argv, i);
                if (n < 0)
                        return EXIT_USAGE;
                if (n == 0) {
                        /* podman's --runtime-flag X=Y arrives as a global
                         * --X=Y: a runc option cordon does not have changes
                         * nothing it could honour, so it is noted, not fatal */
                        oci_warn("global option %s is not a cordon-oci option; ignored", argv[i]);
                        n = 1;
                }
                i += n;
        }
        if (i >= argc) {
                oci_usage(stderr);
                return EXIT_USAGE;
        }
        if (G.root[0] != '/') {
                oci_error("--root %s: must be an absolute path", G.root);
                return EXIT_USAGE;
        }
        const char *verb = argv[i];
        int vargc = argc - i;
        char **vargv = argv + i;
        oci_debug("%s", verb);
        int r;
        if (streq(verb, "create"))
                r = cmd_create(vargc, vargv, false);
        else if (streq(verb, "run"))
                r = cmd_create(vargc, vargv, true);
        else if (streq(verb, "start"))
                r = cmd_start(vargc, vargv);
        else if (streq(verb, "state"))
                r = cmd_state(vargc, vargv);
        else if (streq(verb, "kill"))
                r = cmd_kill(vargc, vargv);
        else if (streq(verb, "delete"))
                r = cmd_delete(vargc, vargv);
        else if (streq(verb, "pause") || streq(verb, "resume"))
                r = simple_op(vargc, vargv, verb);
        else if (streq(verb, "exec"))
                r = cmd_exec(vargc, vargv);
        else if (streq(verb, "list"))
                r = cmd_list(vargc, vargv);
        else if (streq(verb, "ps"))
                r = cmd_ps(vargc, vargv);
        else if (streq(verb, "features"))
                r = cmd_features();
        else if (streq(verb, "spec"))
                r = cmd_spec(vargc, vargv);
        else if (streq(verb, "version")) {
                print_version();
                r = 0;
        } else if (streq(verb, "help")) {
                oci_usage(stdout);
                r = 0;
        } else {
                oci_error("unknown command '%s'; try 'cordon-oci --help'", verb);
                r = EXIT_USAGE;
        }
        return r;
}
