/* The OCI hooks: a config's hooks kept in the container's state at create,
 * and each kind run in order when its time comes, in the runtime's own
 * namespaces (startContainer's: in the container, as a run of its
 * sandbox), with the container's state document on stdin and each hook
 * held to its timeout; the first failure stops the rest. */
#include "config.h"

#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "common/util.h"
#include "sentry/oci/oci.h"
#include "sentry/oci/runtime-internal.h"
#include "sentry/sandbox/sandbox.h"

json_t *oci_hooks_json(const struct oci_spec *s, enum oci_hook_kind k)
{
        json_t *a = json_array();
        for (size_t i = 0; i < s->n_hooks[k]; i++) {
                const struct oci_hook *h = &s->hooks[k][i];
                json_array_append_new(a,
                                      json_pack("{s:s, s:o, s:o, s:i}", "path", h->path, "args", oci_strv_json(h->args),
                                                "env", oci_strv_json(h->env), "timeout", h->timeout));
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

/* One startContainer hook, in the container: a run of its sandbox, as an
 * exec's (its namespaces, view, filter, Landlock domain, limits, and the
 * container process's identity), its path looked up in the container's
 * root, the state document on its stdin, its stderr ours. Its argv[0] is
 * its path (a run's program is its argv[0]). identity: the user, groups and
 * sets every run of a container whose process.user is not root names
 * (create.c), or NULL. Its exit code, or -errno with the failure said. */
static int hook_in_container(const char *sid, json_t *h, const char *state_text, json_t *identity)
{
        const char *path = json_string_value(json_object_get(h, "path"));
        int timeout = (int)json_integer_value(json_object_get(h, "timeout"));
        json_t *argv = json_array(), *args = json_object_get(h, "args");
        json_array_append_new(argv, json_string(path));
        for (size_t i = 1; i < json_array_size(args); i++)
                json_array_append(argv, json_array_get(args, i));
        json_t *env = json_object_get(h, "env");
        json_t *req = json_pack("{s:s, s:o, s:o, s:s, s:b, s:b, s:b}", "op", "exec", "argv", argv, "env",
                                json_is_array(env) ? json_incref(env) : json_array(), "cwd", "/", "cleanEnv", 1,
                                "direct", 1, "detach", 0);
        if (identity)
                json_object_update(req, identity);
        _cleanup_close_ int conn = -1, nul = open("/dev/null", O_RDWR | O_CLOEXEC);
        int in[2] = {-1, -1};
        int r = control_connect(sid, &conn);
        if (r == 0 && pipe2(in, O_CLOEXEC) < 0)
                r = negative_errno();
        /* the whole state goes in before the hook runs: the pipe made as
         * large as it needs (up to the host's pipe-max-size; a state beyond
         * fails rather than blocking here) */
        size_t len = strlen(state_text);
        if (r == 0 && len > 65536 && fcntl(in[1], F_SETPIPE_SZ, (int)len) < 0)
                r = negative_errno();
        if (r == 0 && fcntl(in[1], F_SETFL, O_NONBLOCK) < 0)
                r = negative_errno();
        if (r == 0 && write_all(in[1], state_text, len) < 0)
                r = -E2BIG;
        if (in[1] >= 0)
                close(in[1]);
        if (r == 0) {
                int fds[3] = {in[0], nul, fcntl(STDERR_FILENO, F_GETFD) >= 0 ? STDERR_FILENO : nul};
                r = control_send(conn, TAKE_PTR(req), fds, 3);
        }
        json_decref(req);
        if (in[0] >= 0)
                close(in[0]);
        if (r < 0) {
                oci_error("startContainer hook %s: the container's sentry: %s", path, strerror(-r));
                return r;
        }
        int64_t deadline = timeout > 0 ? monotonic_ms() + (int64_t)timeout * 1000 : -1;
        for (;;) {
                struct pollfd p = {conn, POLLIN, 0};
                int left = deadline < 0 ? -1 : (int)(deadline - monotonic_ms());
                int n = poll(&p, 1, deadline < 0 ? -1 : left > 0 ? left : 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n == 0) {
                        (void)control_send(conn, json_pack("{s:i}", "signal", SIGKILL), NULL, 0);
                        oci_error("startContainer hook %s did not finish within its timeout of %d s", path, timeout);
                        return -ETIMEDOUT;
                }
                json_t *rep = NULL;
                if (n < 0 || control_recv(conn, &rep, NULL, 0) <= 0) {
                        oci_error("startContainer hook %s: the container's sentry went away", path);
                        return -EIO;
                }
                const char *err = json_string_value(json_object_get(rep, "error"));
                json_t *code = json_object_get(rep, "exitCode");
                if (err || code) {
                        int ec = err ? -EIO : (int)json_integer_value(code);
                        if (err)
                                oci_error("startContainer hook %s: %s", path, err);
                        json_decref(rep);
                        return ec;
                }
                json_decref(rep);
        }
}

int oci_container_start_hooks(struct container *c)
{
        json_t *hooks = json_object_get(json_object_get(c->state, "hooks"), "startContainer");
        if (json_array_size(hooks) == 0)
                return 0;
        json_t *doc = oci_state_doc(c, "created");
        char *text = json_dumps(doc, JSON_COMPACT);
        json_decref(doc);
        size_t i;
        json_t *h;
        int r = 0;
        json_array_foreach(hooks, i, h)
        {
                r = hook_in_container(oci_st_str(c, "sandbox"), h, text ? text : "{}",
                                      json_object_get(c->state, "runIdentity"));
                if (r > 0) {
                        oci_error("startContainer hook %s failed (exit status %d)",
                                  json_string_value(json_object_get(h, "path")), r);
                        r = -EIO;
                }
                if (r < 0)
                        break;
        }
        free(text);
        return r;
}

int oci_container_hooks(struct container *c, const char *kind, const char *key, const char *status)
{
        json_t *hooks = json_object_get(json_object_get(c->state, "hooks"), key);
        if (json_array_size(hooks) == 0)
                return 0;
        json_t *doc = oci_state_doc(c, status);
        char *text = json_dumps(doc, JSON_COMPACT);
        json_decref(doc);
        int r = run_hooks(kind, hooks, text ? text : "{}");
        free(text);
        return r;
}
