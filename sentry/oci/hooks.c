/* The OCI hooks: a config's hooks kept in the container's state at create,
 * and each kind run in order when its time comes, in the runtime's own
 * namespaces, with the container's state document on stdin and each hook
 * held to its timeout; the first failure stops the rest. */
#include "config.h"

#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <sys/wait.h>

#include "common/util.h"
#include "sentry/oci/oci.h"
#include "sentry/oci/runtime-internal.h"

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
