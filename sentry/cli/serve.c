/* `cordon serve`: the sandbox API over HTTP (sentry/api/), its options
 * parsed and its set-up errors said here. */
#include "config.h"

#include <getopt.h>

#include "common/util.h"
#include "sentry/api/api.h"
#include "sentry/cli/cli.h"
#include "sentry/sentry.h"

#define DEFAULT_LISTEN "unix:/run/cordon/api.sock"

static void serve_usage(FILE *f)
{
        fputs("Usage: cordon serve [--listen unix:PATH | --listen tcp:ADDRESS:PORT --token-file FILE]\n"
              "                    [--admission FILE] [--root DIR] [-v]\n"
              "\n"
              "Serves the sandbox API (JSON over HTTP/1.1; GET /v1/openapi.json describes it) until\n"
              "SIGINT or SIGTERM. The default is " DEFAULT_LISTEN " (mode 0660: root and the\n"
              "socket's group may use it). Over TCP every request needs a bearer token: the admin\n"
              "token (the first line of FILE, mode 0600) or the token a sandbox's create returned,\n"
              "which acts on that sandbox only. Sandboxes never depend on the server: a restarted\n"
              "server serves the live ones again.\n",
              f);
}

int cmd_serve(int argc, char **argv)
{
        static const struct option opts[] = {
                {"listen", required_argument, NULL, 'l'},
                {"token-file", required_argument, NULL, 't'},
                {"admission", required_argument, NULL, 'a'},
                {"root", required_argument, NULL, 'r'},
                {"verbose", no_argument, NULL, 'v'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        struct api_config c = {.listen = DEFAULT_LISTEN};
        int opt;
        optind = 1;
        while ((opt = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
                switch (opt) {
                case 'l':
                        c.listen = optarg;
                        break;
                case 't':
                        c.token_file = optarg;
                        break;
                case 'a':
                        c.admission_path = optarg;
                        break;
                case 'r': {
                        _cleanup_free_ char *err = NULL;
                        if (state_set_root(optarg, &err) < 0) {
                                fprintf(stderr, "cordon: serve %s\n", err);
                                return EXIT_USAGE;
                        }
                        break;
                }
                case 'v':
                        c.verbose = true;
                        break;
                case 'h':
                        serve_usage(stdout);
                        return 0;
                default:
                        serve_usage(stderr);
                        return EXIT_USAGE;
                }
        }
        if (optind != argc) {
                fprintf(stderr, "cordon: serve: unexpected argument '%s'\n", argv[optind]);
                return EXIT_USAGE;
        }
        /* create and check run cordon itself, by its own file, whatever PATH says */
        static char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n <= 0) {
                fprintf(stderr, "cordon: serve: cannot find its own binary: %m\n");
                return 1;
        }
        self[n] = '\0';
        c.self_exe = self;
        _cleanup_free_ char *err = NULL;
        int r = api_serve(&c, &err);
        if (r < 0) {
                fprintf(stderr, "cordon: serve: %s\n", err ? err : strerror(-r));
                /* a bad option or token file is the caller's to fix */
                return r == -EINVAL || r == -EPERM ? EXIT_USAGE : 1;
        }
        return 0;
}
