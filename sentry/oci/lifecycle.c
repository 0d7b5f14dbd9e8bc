/* The verbs that drive a container once it exists: start (the
 * startContainer hooks in the container, the held process execs, then the
 * poststart hooks), kill (a signal to its process,
 * or with --all to every one), delete (its sentry ended, the poststop
 * hooks, its state directory removed), pause and resume. */
#include "config.h"

#include <jansson.h>
#include <signal.h>
#include <string.h>
#include <strings.h>

#include "common/util.h"
#include "sentry/oci/runtime-internal.h"

int oci_cmd_start(int argc, char **argv)
{
        struct container c;
        int ec = oci_lookup_one(argc, argv, "start", &c);
        if (ec != 0)
                return ec;
        const char *status = oci_container_status(&c);
        int r = -EINVAL;
        if (streq(status, "stopped"))
                oci_error("cannot start a container that has stopped");
        else if (!streq(status, "created"))
                oci_error("cannot start an already running container");
        else if ((r = oci_container_start_hooks(&c)) < 0) {
                /* as under runc, whose container process fails with its
                 * hook: the container does not run */
                json_t *k = json_pack("{s:s, s:i, s:b}", "op", "kill", "signal", SIGKILL, "all", 1);
                (void)oci_sentry_request(oci_st_str(&c, "sandbox"), "kill", k, NULL, 0, NULL, NULL, 0);
        } else
                r = oci_sentry_request(oci_st_str(&c, "sandbox"), "start", json_pack("{s:s}", "op", "start"), NULL, 0,
                                       NULL, NULL, 0);
        if (r == 0) {
                json_object_set_new(c.state, "started", json_true());
                (void)oci_container_save(&c);
                if (oci_container_hooks(&c, "poststart", "poststart", "running") < 0)
                        oci_warn("a poststart hook of container %s failed", c.id);
        }
        oci_container_close(&c);
        return r == 0 ? 0 : 1;
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

int oci_cmd_kill(int argc, char **argv)
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
        if (oci_lookup(id, &c) < 0)
                return 1;
        int r = -ESRCH;
        if (streq(oci_container_status(&c), "stopped"))
                oci_error("container not running");
        else
                r = oci_sentry_request(oci_st_str(&c, "sandbox"), "kill",
                                       json_pack("{s:s, s:i, s:b}", "op", "kill", "signal", sig, "all", all), NULL, 0,
                                       NULL, NULL, 0);
        oci_container_close(&c);
        return r == 0 ? 0 : 1;
}

int oci_cmd_delete(int argc, char **argv)
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
        int r = oci_container_open(id, &c);
        if (r == -ENOENT && force)
                return 0; /* as runc: what is asked for is already true */
        if (r == -ENOENT)
                oci_error("container %s does not exist", id);
        if (r < 0)
                return 1;
        const char *status = oci_container_status(&c);
        if (!force && (streq(status, "running") || streq(status, "paused"))) {
                oci_error("cannot delete container %s that is not stopped: %s", id, status);
                oci_container_close(&c);
                return 1;
        }
        r = oci_container_terminate(&c);
        if (r == 0) {
                if (oci_container_hooks(&c, "poststop", "poststop", "stopped") < 0)
                        oci_warn("a poststop hook of container %s failed", id);
                r = oci_container_remove(&c);
                if (r < 0)
                        oci_error("delete: %s/%s: %s", oci_G.root, id, strerror(-r));
        }
        oci_container_close(&c);
        return r == 0 ? 0 : 1;
}

int oci_simple_op(int argc, char **argv, const char *op)
{
        struct container c;
        int ec = oci_lookup_one(argc, argv, op, &c);
        if (ec != 0)
                return ec;
        const char *status = oci_container_status(&c);
        int r = -EINVAL;
        bool pause = streq(op, "pause");
        if (pause && !streq(status, "running"))
                oci_error("container %s is not running (%s)", c.id, status);
        else if (!pause && !streq(status, "paused"))
                oci_error("container %s is not paused (%s)", c.id, status);
        else
                r = oci_sentry_request(oci_st_str(&c, "sandbox"), op, json_pack("{s:s}", "op", op), NULL, 0, NULL, NULL,
                                       0);
        oci_container_close(&c);
        return r == 0 ? 0 : 1;
}
