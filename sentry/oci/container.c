/* A container on disk: --root/ID, flocked, with its state.json (written
 * atomically): opened or looked up by id, saved, removed; its OCI status
 * (created, running, paused, stopped) and state document, told from its
 * sentry's liveness and its sandbox's meta.json; its sentry terminated.
 * Also the small helpers the verbs share: a text file read whole, the
 * --pid-file written, a pid's start time, a container id checked. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "common/file.h"
#include "common/util.h"
#include "sentry/oci/runtime-internal.h"
#include "sentry/sandbox/sandbox.h"

/* --- small helpers --- */

/* Writes path through path.tmp and a rename: a reader never sees half. */
static int write_file_atomic(int dirfd, const char *name, const char *text, mode_t mode)
{
        char tmp[300];
        snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
        _cleanup_close_ int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd < 0)
                return negative_errno();
        int r = write_all(fd, text, strlen(text));
        /* the engines keep the state beneath /run: not synced there
         * (common/file.h), as runc and crun do not sync it at all */
        if (r < 0 || (!dir_is_runtime_state(dirfd) && fsync(fd) < 0)) {
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
int oci_write_pid_file(const char *path, pid_t pid)
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
unsigned long long oci_pid_start_time(pid_t pid)
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

bool oci_container_id_valid(const char *id)
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

/* --- the container's state --- */

void oci_container_close(struct container *c)
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
int oci_container_open(const char *id, struct container *ret)
{
        if (!oci_container_id_valid(id)) {
                oci_error("invalid container id '%s': only letters, digits, '_', '-', '.' and '+' are allowed", id);
                return -EINVAL;
        }
        _cleanup_close_ int rootfd = open(oci_G.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int fd = rootfd >= 0 ? openat(rootfd, id, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW) : -1;
        if (fd < 0) {
                if (errno == ENOENT)
                        return -ENOENT;
                int r = negative_errno();
                oci_error("container %s: %s/%s: %s", id, oci_G.root, id, strerror(-r));
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

int oci_container_save(struct container *c)
{
        char *text = json_dumps(c->state, JSON_INDENT(2) | JSON_SORT_KEYS);
        if (!text)
                return -ENOMEM;
        int r = write_file_atomic(c->dirfd, "state.json", text, 0600);
        free(text);
        return r;
}

const char *oci_st_str(const struct container *c, const char *key)
{
        return json_string_value(json_object_get(c->state, key));
}

static pid_t container_pid(const struct container *c)
{
        return (pid_t)json_integer_value(json_object_get(c->state, "sentryPid"));
}

bool oci_container_alive(const struct container *c)
{
        pid_t pid = container_pid(c);
        unsigned long long want = (unsigned long long)json_integer_value(json_object_get(c->state, "sentryStart"));
        return pid > 0 && want != 0 && oci_pid_start_time(pid) == want;
}

/* The sandbox's meta.json (its status and runs), or NULL. */
json_t *oci_container_meta(const struct container *c)
{
        const char *sid = oci_st_str(c, "sandbox");
        char dir[600], path[700];
        if (!sid || sandbox_dir(sid, dir, sizeof(dir)) < 0)
                return NULL;
        snprintf(path, sizeof(path), "%s/meta.json", dir);
        json_error_t jerr;
        return json_load_file(path, 0, &jerr);
}

/* created, running, paused or stopped (the OCI statuses). */
const char *oci_container_status(const struct container *c)
{
        if (json_is_true(json_object_get(c->state, "incomplete")) || !oci_container_alive(c))
                return "stopped";
        json_t *m = oci_container_meta(c);
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
json_t *oci_state_doc(const struct container *c, const char *status)
{
        json_t *ann = json_object_get(c->state, "annotations");
        return json_pack("{s:s, s:s, s:s, s:I, s:s, s:o}", "ociVersion", OCI_SPEC_VERSION, "id", c->id, "status",
                         status, "pid", (json_int_t)(streq(status, "stopped") ? 0 : container_pid(c)), "bundle",
                         oci_st_str(c, "bundle") ? oci_st_str(c, "bundle") : "", "annotations",
                         ann ? json_incref(ann) : json_object());
}

/* --- terminating and removing --- */

/* Tells the sentry to end the sandbox and waits (bounded) until it is gone;
 * a sentry that does not answer is dead already, and what it left is
 * garbage for `cordon gc`. 0 or -errno. */
int oci_container_terminate(struct container *c)
{
        if (oci_container_alive(c)) {
                _cleanup_close_ int fd = -1;
                if (control_connect(oci_st_str(c, "sandbox"), &fd) == 0) {
                        (void)control_send(fd, json_pack("{s:s}", "op", "terminate"), NULL, 0);
                        json_t *rep = NULL;
                        if (control_recv(fd, &rep, NULL, 0) > 0)
                                json_decref(rep);
                } else
                        (void)kill(container_pid(c), SIGKILL);
                for (int i = 0; i < 600 && oci_container_alive(c); i++)
                        usleep(50 * 1000);
                if (oci_container_alive(c)) {
                        /* the sentry must not outlive its container: init dies with it */
                        (void)kill(container_pid(c), SIGKILL);
                        for (int i = 0; i < 100 && oci_container_alive(c); i++)
                                usleep(50 * 1000);
                }
                if (oci_container_alive(c)) {
                        oci_error("container %s: its sentry (pid %d) did not end", c->id, container_pid(c));
                        return -EBUSY;
                }
        }
        /* a sentry that was killed left its state directory and cgroups */
        char dir[600];
        const char *sid = oci_st_str(c, "sandbox");
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

int oci_container_remove(struct container *c)
{
        _cleanup_close_ int rootfd = open(oci_G.root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0)
                return negative_errno();
        return remove_tree_at(rootfd, c->id);
}

/* --- the verbs' lookup --- */

int oci_lookup(const char *id, struct container *c)
{
        int r = oci_container_open(id, c);
        if (r == -ENOENT)
                oci_error("container %s does not exist", id);
        return r;
}

int oci_lookup_one(int argc, char **argv, const char *verb, struct container *c)
{
        if (argc != 2) {
                oci_error("%s: usage: %s ID", verb, verb);
                return EXIT_USAGE;
        }
        if (oci_lookup(argv[1], c) < 0)
                return 1;
        return 0;
}
