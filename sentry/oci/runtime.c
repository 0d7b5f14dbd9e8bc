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
 * that was killed. config.json is parsed by the room's parser half
 * (sentry/oci/oci.h). This file is the command line itself: the global
 * options, usage and version, and the dispatch to the verbs; the files
 * that do the work are listed in runtime-internal.h. */
#include "config.h"

#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>

#include "common/util.h"
#include "sentry/oci/oci.h"
#include "sentry/oci/runtime-internal.h"
#include "sentry/sentry.h"

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
              "  update [--resources FILE|-] [--memory N] [--memory-swap N] [--pids-limit N] [--cpu-quota N]\n"
              "       [--cpu-period N] [--cpu-shares N] [--cpuset-cpus L] [--cpuset-mems L] ID\n"
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
                                oci_G.root = val;
                                break;
                        case 1:
                                oci_G.log_path = val;
                                break;
                        case 2:
                                if (!streq(val, "text") && !streq(val, "json")) {
                                        oci_error("--log-format %s: expected text or json", val);
                                        return -1;
                                }
                                oci_G.log_json = streq(val, "json");
                                break;
                        default:
                                break; /* --criu (no checkpointing), --rootless (detected) */
                        }
                        return used;
                }
        }
        if (streq(a, "--debug")) {
                oci_G.debug = true;
                return 1;
        }
        if (streq(a, "--systemd-cgroup")) {
                oci_G.systemd_cgroup = true;
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
                        oci_G.log_json = streq(argv[k + 1], "json");
                else if (streq(argv[k], "--log-format=json"))
                        oci_G.log_json = true;
                if (streq(argv[k], "--log") && k + 1 < argc)
                        oci_G.log_path = argv[k + 1];
                else if (startswith(argv[k], "--log="))
                        oci_G.log_path = argv[k] + 6;
                if (streq(argv[k], "--log") || streq(argv[k], "--log-format"))
                        k++;
        }
        if (oci_G.log_path) {
                oci_G.log_fd = open(oci_G.log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
                if (oci_G.log_fd < 0)
                        fprintf(stderr, "cordon-oci: --log %s: %m\n", oci_G.log_path);
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
        if (oci_G.root[0] != '/') {
                oci_error("--root %s: must be an absolute path", oci_G.root);
                return EXIT_USAGE;
        }
        const char *verb = argv[i];
        int vargc = argc - i;
        char **vargv = argv + i;
        oci_debug("%s", verb);
        int r;
        if (streq(verb, "create"))
                r = oci_cmd_create(vargc, vargv, false);
        else if (streq(verb, "run"))
                r = oci_cmd_create(vargc, vargv, true);
        else if (streq(verb, "start"))
                r = oci_cmd_start(vargc, vargv);
        else if (streq(verb, "state"))
                r = oci_cmd_state(vargc, vargv);
        else if (streq(verb, "kill"))
                r = oci_cmd_kill(vargc, vargv);
        else if (streq(verb, "delete"))
                r = oci_cmd_delete(vargc, vargv);
        else if (streq(verb, "pause") || streq(verb, "resume"))
                r = oci_simple_op(vargc, vargv, verb);
        else if (streq(verb, "exec"))
                r = oci_cmd_exec(vargc, vargv);
        else if (streq(verb, "update"))
                r = oci_cmd_update(vargc, vargv);
        else if (streq(verb, "list"))
                r = oci_cmd_list(vargc, vargv);
        else if (streq(verb, "ps"))
                r = oci_cmd_ps(vargc, vargv);
        else if (streq(verb, "features"))
                r = oci_cmd_features();
        else if (streq(verb, "spec"))
                r = oci_cmd_spec(vargc, vargv);
        else if (streq(verb, "version")) {
                print_version();
                r = 0;
        } else if (streq(verb, "help")) {
                oci_usage(stdout);
                r = 0;
        } else if (streq(verb, "checkpoint") || streq(verb, "restore")) {
                /* runc's CRIU verbs (podman container checkpoint/restore,
                 * ctr checkpoint): said plainly rather than as a typo */
                oci_error("%s is not supported by cordon: a container runs under its sentry (the seccomp listener, "
                          "the view, the egress gate's connections), which CRIU can neither dump nor restore; "
                          "stop the container and start a new one instead",
                          verb);
                r = 1;
        } else {
                oci_error("unknown command '%s'; try 'cordon-oci --help'", verb);
                r = EXIT_USAGE;
        }
        return r;
}
