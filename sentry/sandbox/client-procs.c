/* The client verbs for a sandbox's processes: `cordon sandbox ps ID
 * [--json]` (a table for people, the sentry's reply for programs) and
 * `cordon sandbox kill ID PID [SIGNAL]` (the pid as the sandbox numbers
 * it; the sentry refuses any other). */
#include "config.h"

#include <jansson.h>
#include <signal.h>
#include <strings.h>

#include "common/docparse.h"
#include "sentry/sandbox/sandbox-internal.h"

/* "TERM", "SIGTERM", "15", "RTMIN+2": the number, or -EINVAL. */
static int signal_parse(const char *s)
{
        char *end;
        long n = strtol(s, &end, 10);
        if (*s && !*end)
                return n > 0 && n < 65 ? (int)n : -EINVAL;
        if (strncasecmp(s, "SIG", 3) == 0)
                s += 3;
        for (int sig = 1; sig < 32; sig++) {
                const char *name = sigabbrev_np(sig);
                if (name && strcasecmp(name, s) == 0)
                        return sig;
        }
        if (strncasecmp(s, "RTMIN", 5) == 0 || strncasecmp(s, "RTMAX", 5) == 0) {
                long off = s[5] ? strtol(s + 5, &end, 10) : 0;
                int sig = (strncasecmp(s, "RTMIN", 5) == 0 ? SIGRTMIN : SIGRTMAX) + (int)off;
                if ((!s[5] || !*end) && sig >= SIGRTMIN && sig <= SIGRTMAX)
                        return sig;
        }
        return -EINVAL;
}

static void human_size(long long n, char buf[16])
{
        const char *units[] = {"B", "K", "M", "G", "T"};
        double v = (double)n;
        size_t u = 0;
        while (v >= 1024 && u + 1 < ELEMENTSOF(units)) {
                v /= 1024;
                u++;
        }
        snprintf(buf, 16, u ? "%.1f%s" : "%.0f%s", v, units[u]);
}

int client_ps(int argc, char **argv)
{
        bool json = argc == 3 && streq(argv[2], "--json");
        if (argc < 2 || argc > 3 || (argc == 3 && !json)) {
                fprintf(stderr, "cordon: sandbox ps ID [--json]\n");
                return EXIT_USAGE;
        }
        json_t *rep = NULL;
        if (client_request(argv[1], json_pack("{s:s}", "op", "ps"), NULL, 0, &rep) != 0)
                return 1;
        if (json) {
                json_dumpf(rep, stdout, JSON_COMPACT);
                putchar('\n');
                json_decref(rep);
                return 0;
        }
        printf("%-7s %-7s %-5s %-6s %-2s %-20s %8s %7s %s\n", "PID", "PPID", "RUN", "UID", "S", "STARTED", "CPU", "MEM",
               "COMMAND");
        size_t i;
        json_t *p;
        json_array_foreach(json_object_get(rep, "processes"), i, p)
        {
                char mem[16], uid[24];
                human_size(json_integer_value(json_object_get(p, "memoryBytes")), mem);
                json_int_t u = json_integer_value(json_object_get(p, "uid"));
                if (u < 0)
                        snprintf(uid, sizeof(uid), "?");
                else
                        snprintf(uid, sizeof(uid), "%lld", (long long)u);
                /* the sandbox's code sets its command line: escaped for the terminal */
                const char *c = json_string_value(json_object_get(p, "command"));
                _cleanup_free_ char *cmd = doc_printable(c && *c ? c : json_string_value(json_object_get(p, "name")));
                const char *run = json_string_value(json_object_get(p, "run"));
                printf("%-7lld %-7lld %-5s %-6s %-2s %-20s %7.2fs %7s %s\n",
                       (long long)json_integer_value(json_object_get(p, "pid")),
                       (long long)json_integer_value(json_object_get(p, "ppid")),
                       run                                        ? run
                       : json_is_true(json_object_get(p, "init")) ? "init"
                                                                  : "-",
                       uid, json_string_value(json_object_get(p, "state")),
                       json_string_value(json_object_get(p, "startedAt")),
                       json_real_value(json_object_get(p, "cpuSeconds")), mem, cmd);
        }
        if (json_is_true(json_object_get(rep, "truncated")))
                fprintf(stderr, "cordon: the list is truncated (it did not fit one reply)\n");
        const char *status = json_string_value(json_object_get(rep, "status"));
        if (status && streq(status, "paused"))
                fprintf(stderr, "cordon: sandbox %s is paused: its processes are frozen\n", argv[1]);
        json_decref(rep);
        return 0;
}

int client_kill(int argc, char **argv)
{
        if (argc < 3 || argc > 4) {
                fprintf(stderr, "cordon: sandbox kill ID PID [SIGNAL]   (default TERM)\n");
                return EXIT_USAGE;
        }
        char *end;
        long long pid = strtoll(argv[2], &end, 10);
        if (!*argv[2] || *end || pid <= 0) {
                fprintf(stderr, "cordon: sandbox kill: '%s' is not a pid\n", argv[2]);
                return EXIT_USAGE;
        }
        int sig = argc == 4 ? signal_parse(argv[3]) : SIGTERM;
        if (sig < 0) {
                fprintf(stderr, "cordon: sandbox kill: '%s' is not a signal\n", argv[3]);
                return EXIT_USAGE;
        }
        json_t *rep = NULL;
        int r = client_request(argv[1],
                               json_pack("{s:s, s:I, s:i}", "op", "signal", "pid", (json_int_t)pid, "signal", sig),
                               NULL, 0, &rep);
        if (r == 0) {
                const char *status = json_string_value(json_object_get(rep, "status"));
                if (status && streq(status, "paused") && sig != SIGKILL)
                        fprintf(stderr, "cordon: sandbox %s is paused: the signal is delivered when it resumes\n",
                                argv[1]);
        }
        json_decref(rep);
        return r == 0 ? 0 : 1;
}

/* `sandbox port ID PORT [--listen ADDR:PORT] [--json]`, `port ID --list
 * [--json]`, `port ID PORT --close`. */
int client_port(int argc, char **argv)
{
        const char *id = argc > 1 ? argv[1] : NULL, *listen = NULL, *port_s = NULL;
        bool list = false, close_it = false, json = false, bad = false;
        for (int i = 2; i < argc; i++) {
                if (streq(argv[i], "--list"))
                        list = true;
                else if (streq(argv[i], "--close"))
                        close_it = true;
                else if (streq(argv[i], "--json"))
                        json = true;
                else if (streq(argv[i], "--listen") && i + 1 < argc)
                        listen = argv[++i];
                else if (startswith(argv[i], "--listen="))
                        listen = argv[i] + 9;
                else if (!port_s && argv[i][0] != '-')
                        port_s = argv[i];
                else
                        bad = true;
        }
        if (!id || bad || (list && (port_s || close_it || listen)) || (!list && !port_s) || (close_it && listen)) {
                fprintf(stderr,
                        "cordon: sandbox port ID PORT [--listen ADDR:PORT] [--json] | port ID --list [--json] | "
                        "port ID PORT --close\n");
                return EXIT_USAGE;
        }
        long port = 0;
        if (port_s) {
                char *end;
                port = strtol(port_s, &end, 10);
                if (!*port_s || *end || port < 1 || port > 65535) {
                        fprintf(stderr, "cordon: sandbox port: '%s' is not a port number (1-65535)\n", port_s);
                        return EXIT_USAGE;
                }
        }
        json_t *req = list ? json_pack("{s:s}", "op", "ports")
                      : close_it
                              ? json_pack("{s:s, s:I}", "op", "unport", "port", (json_int_t)port)
                              : json_pack("{s:s, s:I, s:s?}", "op", "port", "port", (json_int_t)port, "listen", listen);
        json_t *rep = NULL;
        if (client_request(id, req, NULL, 0, &rep) != 0)
                return 1;
        if (json) {
                json_dumpf(rep, stdout, JSON_COMPACT);
                putchar('\n');
        } else if (list) {
                printf("%-7s %-46s %-9s %s\n", "PORT", "LISTEN", "ACCEPTED", "OPEN");
                size_t i;
                json_t *p;
                json_array_foreach(json_object_get(rep, "ports"), i, p)
                {
                        printf("%-7lld %-46s %-9lld %lld\n", (long long)json_integer_value(json_object_get(p, "port")),
                               json_string_value(json_object_get(p, "listen")),
                               (long long)json_integer_value(json_object_get(p, "accepted")),
                               (long long)json_integer_value(json_object_get(p, "connections")));
                }
        } else if (!close_it)
                printf("%s\n", json_string_value(json_object_get(rep, "listen")));
        const char *warning = json_string_value(json_object_get(rep, "warning"));
        const char *note = json_string_value(json_object_get(rep, "note"));
        if (warning)
                fprintf(stderr, "cordon: warning: %s\n", warning);
        if (note)
                fprintf(stderr, "cordon: %s\n", note);
        json_decref(rep);
        return 0;
}
