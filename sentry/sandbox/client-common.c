/* What the client verbs of long-lived sandboxes share: the usage text, the
 * client's end of a sandbox's control socket (client_connect, which says
 * what is wrong when no sentry answers), one request and its reply (with
 * any progress messages before it), and whether a sandbox is live (its
 * lock is held). */
#include "config.h"

#include <fcntl.h>
#include <jansson.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

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
        int r = control_send(fd, req, fds, n_fds);
        json_t *rep = NULL;
        while (r >= 0 && (r = control_recv(fd, &rep, NULL, 0)) > 0 && json_object_get(rep, "progress") &&
               !json_object_get(rep, "error")) {
                if (on_progress)
                        on_progress(json_object_get(rep, "progress"));
                json_decref(rep);
                rep = NULL;
        }
        if (r <= 0) {
                fprintf(stderr, "cordon: sandbox %s: no answer from its sentry (%s)\n", id,
                        r == 0 ? "connection closed" : strerror(-r));
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
