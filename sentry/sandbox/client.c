/* `cordon sandbox VERB`: the client side of long-lived sandboxes.
 *
 * `create` forks a detached sentry (its own session, stdio away from the
 * terminal) that sets the sandbox up exactly as `cordon run` does, with an
 * init that waits for runs, and says "READY <id>" on a pipe once it serves;
 * set-up errors come back through an anonymous file that was the sentry's
 * stderr. Every other verb talks to that sentry over the control socket in
 * the sandbox's state directory, or reads the files there (list, events).
 *
 * This file: the verbs' dispatch (sentry_sandbox), create, terminate, list,
 * inspect, pending, approve and deny, put, get, ls and snapshot. exec and
 * events: client-exec.c; the usage and the control socket's requests, which
 * all the verbs use: client-common.c. The client files are the room's only
 * ones that print for people. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "common/docparse.h"
#include "common/file.h"
#include "sentry/sandbox/sandbox-internal.h"

/* "12.3 MB" */
static void human_bytes(long long n, char buf[32])
{
        static const char *const units[] = {"bytes", "kB", "MB", "GB", "TB"};
        double v = (double)n;
        size_t u = 0;
        while (v >= 1000 && u + 1 < ELEMENTSOF(units)) {
                v /= 1000;
                u++;
        }
        if (u == 0)
                snprintf(buf, 32, "%lld bytes", n);
        else
                snprintf(buf, 32, "%.1f %s", v, units[u]);
}

/* A progress line on the terminal (stderr), rewritten in place; the final
 * one ends it. */
static void show_progress(const char *what, long long bytes, long long total, long long entries, bool final)
{
        char b[32], t[32];
        human_bytes(bytes, b);
        if (total > 0) {
                human_bytes(total, t);
                fprintf(stderr, "\rcordon: %s: %s of %s (%lld%%), %lld entries\033[K", what, b, t,
                        total ? bytes * 100 / total : 0, entries);
        } else
                fprintf(stderr, "\rcordon: %s: %s, %lld entries\033[K", what, b, entries);
        if (final)
                fputc('\n', stderr);
        fflush(stderr);
}

static void snapshot_progress(json_t *p)
{
        show_progress("snapshot", (long long)json_integer_value(json_object_get(p, "bytes")), 0,
                      (long long)json_integer_value(json_object_get(p, "entries")),
                      json_is_true(json_object_get(p, "final")));
}

static int simple_verb(const char *op, int argc, char **argv)
{
        if (argc != 2) {
                fprintf(stderr, "cordon: sandbox %s ID\n", op);
                return EXIT_USAGE;
        }
        json_t *rep = NULL;
        int r = client_request(argv[1], json_pack("{s:s}", "op", op), NULL, 0, &rep);
        if (r != 0)
                return 1;
        json_decref(rep);
        return 0;
}

/* --- create --- */

static void copy_out(int fd)
{
        char buf[4096];
        ssize_t n;
        off_t off = 0;
        while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
                (void)write_all(STDERR_FILENO, buf, (size_t)n);
                off += n;
        }
}

int sandbox_spawn_sentry(struct run_options *o, struct serve_config *cfg, bool new_session, int memfd, pid_t *ret_pid,
                         char ret_id[static 17], int *ret_status)
{
        int ready[2];
        if (pipe2(ready, O_CLOEXEC) < 0)
                return negative_errno();
        cfg->ready_fd = ready[1];
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0) {
                int r = negative_errno();
                close(ready[0]);
                close(ready[1]);
                return r;
        }
        if (pid == 0) {
                /* the detached sentry: no terminal, the creating client's
                 * stderr replaced by the memfd it reads */
                close(ready[0]);
                if (new_session)
                        setsid();
                int nul = open("/dev/null", O_RDWR);
                if (nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(memfd, 2) < 0)
                        _exit(EXIT_SANDBOX);
                if (nul > 2)
                        close(nul);
                /* nothing else of the client's goes with it: an inherited
                 * pipe (a test runner's, a shell's) would stay open for the
                 * sandbox's whole life */
                if (dup2(ready[1], 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0 ||
                    syscall(SYS_close_range, 4, ~0U, 0) < 0)
                        _exit(EXIT_SANDBOX);
                cfg->ready_fd = 3;
                signal(SIGPIPE, SIG_IGN);
                struct sentry_front front = serve_front(cfg);
                o->front = &front;
                _exit(sentry_run(o));
        }
        close(ready[1]);
        /* "READY <id>", after any "PROGRESS <bytes> <total> <entries>" of a
         * restore (sent only when cfg->progress) */
        char line[128] = "";
        bool shown = false;
        for (;;) {
                size_t len = 0;
                while (len < sizeof(line) - 1) {
                        ssize_t n = read(ready[0], line + len, 1);
                        if (n < 0 && errno == EINTR)
                                continue;
                        if (n <= 0 || line[len] == '\n')
                                break;
                        len++;
                }
                line[len] = '\0';
                long long b, t, e;
                if (!startswith(line, "PROGRESS ") || sscanf(line + 9, "%lld %lld %lld", &b, &t, &e) != 3)
                        break;
                show_progress("restoring the snapshot", b, t, e, false);
                shown = true;
        }
        if (shown)
                fputc('\n', stderr);
        close(ready[0]);
        *ret_pid = pid;
        if (!startswith(line, "READY ") || strlen(line + 6) != 16) {
                int status = 0;
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                        ;
                *ret_status = status;
                return -ECHILD;
        }
        memcpy(ret_id, line + 6, 17);
        return 0;
}

/* A sandbox restored from a snapshot keeps the limits its snapshot's
 * sandbox ran under (--memory, --pids, --cpus, --disk, --nofile), where
 * this create sets none of its own (no flag, nothing in the policy). Only
 * where they are stricter than what it would get otherwise (the built-in
 * defaults, or none): the archive is data, and data may narrow a sandbox,
 * never widen it (a looser one is said, and left to a flag). The admission
 * file's maxima hold afterwards as for any flag. */
static void keep_snapshot_limits(const char *snapshot, const struct policy *p, struct run_limits *l)
{
        struct run_limits rec;
        if (snapshot_recorded_limits(snapshot, &rec) < 0)
                return;
        const int64_t policy_values[_LIMIT_KIND_MAX] = {
                [LIMIT_MEMORY] = p->memory_bytes,       [LIMIT_CPU] = p->cpu_millis,
                [LIMIT_DISK] = p->disk_bytes,           [LIMIT_PROCESSES] = p->max_processes,
                [LIMIT_OPEN_FILES] = p->max_open_files, [LIMIT_TIMEOUT] = p->timeout_ms,
        };
        struct run_limits defaults;
        run_limits_unset(&defaults);
        run_limits_apply_defaults(&defaults);
        for (size_t k = 0; k < _LIMIT_KIND_MAX; k++) {
                int64_t v = rec.value[k];
                /* the TTL is this create's own, as it always was */
                if (k == LIMIT_TIMEOUT || v == POLICY_UNSET || l->value[k] != POLICY_UNSET ||
                    l->src[k] != LIMIT_SRC_NONE || policy_values[k] != POLICY_UNSET || (p->unlimited & LIMIT_BIT(k)))
                        continue;
                char a[32], b[32];
                if (defaults.value[k] == POLICY_UNSET || v < defaults.value[k]) {
                        l->value[k] = v;
                        l->src[k] = LIMIT_SRC_FLAG;
                } else if (v > defaults.value[k])
                        fprintf(stderr,
                                "cordon: note: the snapshot's sandbox had %s %s, more than the default %s this one "
                                "gets; give %s to have it\n",
                                limit_flag((enum limit_kind)k), limit_format_value((enum limit_kind)k, v, a, sizeof(a)),
                                limit_format_value((enum limit_kind)k, defaults.value[k], b, sizeof(b)),
                                limit_flag((enum limit_kind)k));
        }
}

static int cmd_create(int argc, char **argv)
{
        static const struct option opts[] = {
                {"policy", required_argument, NULL, 'p'},
                {"ttl", required_argument, NULL, 'l'},
                {"json", no_argument, NULL, 'j'},
                {"verbose", no_argument, NULL, 'v'},
                LIMITS_LONG_OPTIONS,
                {"admission", required_argument, NULL, 'a'},
                {"from-snapshot", required_argument, NULL, 'S'},
                {"digest", required_argument, NULL, 'd'},
                {"help", no_argument, NULL, 'h'},
                {0},
        };
        struct run_options o = {.tty = TTY_NEVER, .cgroup_mode = CG_AUTO};
        run_limits_unset(&o.limits);
        const char *policy_path = NULL, *snapshot = NULL, *digest = NULL;
        bool json = false;
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, "+p:vh", opts, NULL)) != -1) {
                switch (c) {
                case 'p':
                        policy_path = optarg;
                        break;
                case 'l':
                        if (parse_duration_ms(optarg, &o.limits.timeout_ms) < 0) {
                                fprintf(stderr,
                                        "cordon: --ttl %s: expected a duration such as 90s, 30m, 1h (at most 30d)\n",
                                        optarg);
                                return EXIT_USAGE;
                        }
                        break;
                case 'j':
                        json = true;
                        break;
                case 'v':
                        o.verbose = true;
                        break;
LIMITS_OPTION_CASES:
                        if (limits_option((char)c, optarg, &o.limits) < 0)
                                return EXIT_USAGE;
                        break;
                case 'a':
                        o.admission_path = optarg;
                        break;
                case 'S':
                        snapshot = optarg;
                        break;
                case 'd':
                        digest = optarg;
                        break;
                case 'h':
                        client_usage(stdout);
                        return 0;
                default:
                        return EXIT_USAGE;
                }
        }
        if (optind != argc) {
                fprintf(stderr, "cordon: sandbox create takes no command (use `cordon sandbox exec ID -- CMD`)\n");
                return EXIT_USAGE;
        }

        _cleanup_free_ char *policy_text = NULL, *digest_text = NULL;
        _cleanup_(policy_freep) struct policy *policy = NULL;
        if (policy_path) {
                _cleanup_free_ char *err = NULL;
                int r = read_file_text(policy_path, &policy_text);
                if (r < 0) {
                        fprintf(stderr, "cordon: --policy %s: %s\n", policy_path, strerror(-r));
                        return EXIT_USAGE;
                }
                r = policy_load_file(policy_path, &policy, &err);
                if (r < 0) {
                        fprintf(stderr, "cordon: %s\n", err ? err : strerror(-r));
                        return EXIT_USAGE;
                }
        } else {
                policy = policy_new_default();
                policy_text = xstrdup("{}");
        }
        /* a snapshot is restored only against the digest recorded for it */
        char snap_abs[4096];
        if (snapshot) {
                if (!realpath(snapshot, snap_abs)) {
                        fprintf(stderr, "cordon: --from-snapshot %s: %m\n", snapshot);
                        return EXIT_USAGE;
                }
                snapshot = snap_abs;
                if (!digest) {
                        char side[4200];
                        snprintf(side, sizeof(side), "%s.sha256", snapshot);
                        if (read_file_text(side, &digest_text) < 0) {
                                fprintf(stderr,
                                        "cordon: --from-snapshot %s: no digest (give --digest sha256:HEX or keep %s)\n",
                                        snapshot, side);
                                return EXIT_USAGE;
                        }
                        digest_text[strcspn(digest_text, " \n")] = '\0';
                        digest = digest_text;
                }
        }
        /* a tier is granted exactly or refused: a host that lacks one of
         * its layers runs no sandbox that asked for it */
        if (policy->isolation >= 0) {
                _cleanup_free_ char *missing = NULL;
                int m = sandbox_tier_missing(policy->isolation, &missing);
                if (m != 0) {
                        fprintf(stderr, "cordon: requestedIsolation \"%s\": %s%s\n",
                                policy_tiers[policy->isolation].name,
                                m > 0 ? "this host lacks " : "cannot tell which layers this host has: ",
                                m > 0 ? missing : strerror(-m));
                        return EXIT_SANDBOX;
                }
        }
        o.policy = policy;
        if (snapshot)
                keep_snapshot_limits(snapshot, policy, &o.limits);

        int memfd = memfd_create("cordon-create", MFD_CLOEXEC);
        if (memfd < 0) {
                fprintf(stderr, "cordon: create: %m\n");
                return EXIT_SANDBOX;
        }
        struct serve_config cfg = {.policy_text = policy_text,
                                   .snapshot = snapshot,
                                   .snapshot_digest = digest,
                                   .progress = snapshot && isatty(STDERR_FILENO)};
        pid_t pid;
        char id[17];
        int status;
        int r = sandbox_spawn_sentry(&o, &cfg, true, memfd, &pid, id, &status);
        if (r == -ECHILD) {
                copy_out(memfd);
                int code = WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_SANDBOX;
                if (code == 0)
                        code = EXIT_SANDBOX;
                fprintf(stderr, "cordon: the sandbox could not be created\n");
                return code;
        }
        if (r < 0) {
                fprintf(stderr, "cordon: create: %s\n", strerror(-r));
                return EXIT_SANDBOX;
        }
        copy_out(memfd); /* warnings, --verbose */
        close(memfd);
        if (json) {
                json_t *j = json_pack("{s:s, s:I}", "id", id, "sentryPid", (json_int_t)pid);
                json_dumpf(j, stdout, JSON_COMPACT);
                json_decref(j);
                putchar('\n');
        } else
                printf("%s\n", id);
        return 0;
}

/* --- terminate --- */

static int cmd_terminate(int argc, char **argv)
{
        if (argc != 2) {
                fprintf(stderr, "cordon: sandbox terminate ID\n");
                return EXIT_USAGE;
        }
        const char *id = argv[1];
        _cleanup_free_ char *err = NULL;
        int r = sandbox_terminate(id, &err);
        switch (r) {
        case 0:
                return 0;
        case -EINVAL:
                fprintf(stderr, "cordon: '%s' is not a sandbox id\n", id);
                return EXIT_USAGE;
        case -ENOENT:
                /* idempotent: gone is what was asked for */
                fprintf(stderr, "cordon: sandbox %s is not running (already terminated?)\n", id);
                return 0;
        case -ETIMEDOUT:
                fprintf(stderr, "cordon: sandbox %s did not finish terminating within 30 s\n", id);
                return 1;
        default:
                if (err)
                        fprintf(stderr, "cordon: %s\n", err);
                else
                        fprintf(stderr, "cordon: sandbox %s does not answer (%s)\n", id, strerror(-r));
                return 1;
        }
}

/* --- list, inspect --- */

static int cmd_list(int argc, char **argv)
{
        bool json = argc > 1 && streq(argv[1], "--json");
        if (argc > 2 || (argc == 2 && !json)) {
                fprintf(stderr, "cordon: sandbox list [--json]\n");
                return EXIT_USAGE;
        }
        json_t *all = NULL;
        (void)sandbox_list_json(&all);
        if (json) {
                json_dumpf(all, stdout, JSON_COMPACT);
                putchar('\n');
        } else {
                printf("%-18s %-18s %-21s %-21s %s\n", "ID", "STATUS", "CREATED", "EXPIRES", "RUNS");
                size_t i;
                json_t *m;
                json_array_foreach(all, i, m)
                {
                        const char *exp = json_string_value(json_object_get(m, "expiresAt"));
                        printf("%-18s %-18s %-21s %-21s %zu\n", json_string_value(json_object_get(m, "id")),
                               json_string_value(json_object_get(m, "status")),
                               json_string_value(json_object_get(m, "createdAt")) ?: "-", exp ? exp : "-",
                               json_array_size(json_object_get(m, "runs")));
                }
        }
        json_decref(all);
        return 0;
}

static void print_pending(json_t *list)
{
        if (json_array_size(list) == 0) {
                printf("no pending requests\n");
                return;
        }
        printf("%-6s %-7s %-21s %-40s %s\n", "REQ", "KIND", "EXPIRES", "TARGET", "SUMMARY");
        size_t i;
        json_t *v;
        json_array_foreach(list, i, v)
        {
                json_t *sum = json_object_get(v, "summary");
                /* the target and the command line are the sandbox's: shown
                 * escaped, so they cannot redraw the request an approver reads */
                _cleanup_free_ char *target = doc_printable(json_string_value(json_object_get(v, "target")));
                _cleanup_free_ char *cmdline = doc_printable(json_string_value(json_object_get(sum, "cmdline")));
                printf("%-6s %-7s %-21s %-40s %s pid %lld: %s\n", json_string_value(json_object_get(v, "request")),
                       json_string_value(json_object_get(v, "capability")),
                       json_string_value(json_object_get(v, "expiresAt")), target,
                       json_string_value(json_object_get(sum, "syscall")),
                       (long long)json_integer_value(json_object_get(sum, "pid")), cmdline);
        }
}

static int cmd_inspect(int argc, char **argv)
{
        bool json = argc > 2 && streq(argv[2], "--json");
        if (argc < 2 || argc > 3 || (argc == 3 && !json)) {
                fprintf(stderr, "cordon: sandbox inspect ID [--json]\n");
                return EXIT_USAGE;
        }
        json_t *m = NULL;
        int r = client_request(argv[1], json_pack("{s:s}", "op", "inspect"), NULL, 0, &m);
        if (r != 0)
                return 1;
        if (json) {
                json_dumpf(m, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
                putchar('\n');
                json_decref(m);
                return 0;
        }
        const char *exp = json_string_value(json_object_get(m, "expiresAt"));
        printf("sandbox   %s\nstatus    %s\ncreated   %s\nexpires   %s\n", json_string_value(json_object_get(m, "id")),
               json_string_value(json_object_get(m, "status")), json_string_value(json_object_get(m, "createdAt")),
               exp ? exp : "never");
        json_t *l = json_object_get(m, "limits"), *u = json_object_get(m, "use"),
               *iso = json_object_get(m, "isolation");
        printf("limits    memory %lld, cpu %lld millis, disk %lld, tasks %lld, open files %lld (-1: none)\n",
               (long long)json_integer_value(json_object_get(l, "memoryBytes")),
               (long long)json_integer_value(json_object_get(l, "cpuMillis")),
               (long long)json_integer_value(json_object_get(l, "diskBytes")),
               (long long)json_integer_value(json_object_get(l, "maxProcesses")),
               (long long)json_integer_value(json_object_get(l, "maxOpenFiles")));
        printf("use       memory peak %lld, cpu %lld us, tasks %lld, disk %lld bytes\n",
               (long long)json_integer_value(json_object_get(u, "memoryPeakBytes")),
               (long long)json_integer_value(json_object_get(u, "cpuUsageUsec")),
               (long long)json_integer_value(json_object_get(u, "tasks")),
               (long long)json_integer_value(json_object_get(u, "diskBytes")));
        /* the tier it asked for (the API's and create's check held it to it) */
        int tier = policy_tier_find(
                json_string_value(json_object_get(json_object_get(m, "policy"), "requestedIsolation")));
        if (tier >= 0) {
                printf("tier      %s:", policy_tiers[tier].name);
                for (const char *const *layer = policy_tiers[tier].layers; *layer; layer++)
                        printf("%s %s", layer == policy_tiers[tier].layers ? "" : ",", *layer);
                putchar('\n');
        }
        printf("isolation\n");
        const char *k;
        json_t *v;
        json_object_foreach(iso, k, v)
        {
                char *s = json_is_string(v) ? xstrdup(json_string_value(v))
                                            : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
                printf("  %-12s %s\n", k, s);
                free(s);
        }
        json_t *pend = json_object_get(m, "pendingApprovals");
        if (json_array_size(pend) > 0) {
                printf("pending approvals\n");
                print_pending(pend);
        }
        char *pol = json_dumps(json_object_get(m, "policy"), JSON_COMPACT | JSON_ENCODE_ANY);
        printf("policy    %s\nruns\n", pol ? pol : "null");
        free(pol);
        json_int_t omitted = json_integer_value(json_object_get(m, "runsOmitted"));
        if (omitted > 0)
                printf("  (%lld older runs not shown: see meta.json or `cordon sandbox events`)\n", (long long)omitted);
        size_t i;
        json_array_foreach(json_object_get(m, "runs"), i, v)
        {
                char *a = json_dumps(json_object_get(v, "argv"), JSON_COMPACT);
                json_t *ec = json_object_get(v, "exitCode");
                char code[16] = "-";
                if (ec)
                        snprintf(code, sizeof(code), "%lld", (long long)json_integer_value(ec));
                printf("  %-6s %-10s exit %-4s %s\n", json_string_value(json_object_get(v, "id")),
                       json_string_value(json_object_get(v, "status")), code, a ? a : "");
                free(a);
        }
        json_array_foreach(json_object_get(m, "ports"), i, v)
        {
                printf("port      %lld at %s\n", (long long)json_integer_value(json_object_get(v, "port")),
                       json_string_value(json_object_get(v, "listen")));
        }
        json_decref(m);
        return 0;
}

/* --- approvals --- */

static int cmd_pending(int argc, char **argv)
{
        bool json = argc > 2 && streq(argv[2], "--json");
        if (argc < 2 || argc > 3 || (argc == 3 && !json)) {
                fprintf(stderr, "cordon: sandbox pending ID [--json]\n");
                return EXIT_USAGE;
        }
        json_t *rep = NULL;
        if (client_request(argv[1], json_pack("{s:s}", "op", "pending"), NULL, 0, &rep) != 0)
                return 1;
        json_t *list = json_object_get(rep, "pending");
        if (json) {
                json_dumpf(list, stdout, JSON_COMPACT);
                putchar('\n');
        } else
                print_pending(list);
        json_decref(rep);
        return 0;
}

/* approve ID REQ [--remember] | deny ID REQ */
static int cmd_decide(bool approve, int argc, char **argv)
{
        bool remember = false;
        int n = 0;
        const char *pos[2] = {NULL, NULL};
        for (int i = 1; i < argc; i++) {
                if (approve && streq(argv[i], "--remember"))
                        remember = true;
                else if (argv[i][0] != '-' && n < 2)
                        pos[n++] = argv[i];
                else
                        n = 3;
        }
        if (n != 2) {
                fprintf(stderr,
                        approve ? "cordon: sandbox approve ID REQ [--remember]\n" : "cordon: sandbox deny ID REQ\n");
                return EXIT_USAGE;
        }
        json_t *rep = NULL;
        int r = client_request(pos[0],
                               json_pack("{s:s, s:s, s:b}", "op", approve ? "approve" : "deny", "request", pos[1],
                                         "remember", remember),
                               NULL, 0, &rep);
        if (r != 0)
                return 1;
        printf("%s %s%s\n", pos[1], approve ? "approved" : "denied",
               remember ? " (remembered for this sandbox's lifetime)" : "");
        json_decref(rep);
        return 0;
}

/* --- put, get, ls, snapshot --- */

static int cmd_put(int argc, char **argv)
{
        if (argc != 4) {
                fprintf(stderr, "cordon: sandbox put ID LOCAL SANDBOX-PATH\n");
                return EXIT_USAGE;
        }
        _cleanup_close_ int fd =
                streq(argv[2], "-") ? fcntl(0, F_DUPFD_CLOEXEC, 3) : open(argv[2], O_RDONLY | O_CLOEXEC | O_NOCTTY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || S_ISDIR(st.st_mode)) {
                fprintf(stderr, "cordon: put: %s: %s\n", argv[2], fd < 0 ? strerror(errno) : "is a directory");
                return 1;
        }
        json_t *req = json_pack("{s:s, s:s, s:i}", "op", "put", "path", argv[3], "mode",
                                S_ISREG(st.st_mode) ? (int)(st.st_mode & 0755) : 0644);
        /* a stream (a pipe, a terminal): its end is confirmed by us, so that
         * a Ctrl-C, which kills us with the producer, lands nothing */
        if (!S_ISREG(st.st_mode))
                json_object_set_new(req, "confirmEnd", json_true());
        json_t *rep = NULL;
        int r = client_request(argv[1], req, &fd, 1, &rep);
        json_decref(rep);
        return r == 0 ? 0 : 1;
}

/* get: the sandbox's file lands at LOCAL whole or not at all, as a put's
 * does in the sandbox: it is written beside LOCAL under a temporary name
 * (opened by us as the invoking user, never through a symlink) and renamed
 * over it once complete, so a get that fails (no such path, the sandbox
 * gone midway) leaves LOCAL as it was. A LOCAL that exists and is no
 * regular file (a FIFO, a terminal) is written in place; a symlink is
 * refused (the rename would replace it, never follow it, either way). */
static int cmd_get(int argc, char **argv)
{
        if (argc != 4) {
                fprintf(stderr, "cordon: sandbox get ID SANDBOX-PATH LOCAL\n");
                return EXIT_USAGE;
        }
        const char *local = argv[3];
        struct stat st;
        bool exists = !streq(local, "-") && lstat(local, &st) == 0;
        if (exists && S_ISLNK(st.st_mode)) {
                /* a bind-mounted directory the sandbox can write might have planted it */
                fprintf(stderr, "cordon: get: %s: is a symlink, which is never followed\n", local);
                return 1;
        }
        bool in_place = streq(local, "-") || (exists && !S_ISREG(st.st_mode));
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -1;
        if (streq(local, "-"))
                fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
        else if (in_place)
                fd = open(local, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        else {
                const char *slash = strrchr(local, '/');
                tmp = slash ? xasprintf("%.*s/.%s.cordon-get-XXXXXX", (int)(slash - local), local, slash + 1)
                            : xasprintf(".%s.cordon-get-XXXXXX", local);
                fd = mkostemp(tmp, O_CLOEXEC);
                if (fd >= 0) {
                        /* what open(LOCAL, 0644) would have made */
                        mode_t um = umask(0);
                        umask(um);
                        (void)fchmod(fd, 0644 & ~um);
                }
        }
        if (fd < 0) {
                fprintf(stderr, "cordon: get: %s: %m\n", local);
                return 1;
        }
        json_t *rep = NULL;
        int r = client_request(argv[1], json_pack("{s:s, s:s}", "op", "get", "path", argv[2]), &fd, 1, &rep);
        json_decref(rep);
        if (tmp && r == 0 && rename(tmp, local) < 0) {
                fprintf(stderr, "cordon: get: %s: %m\n", local);
                r = -1;
        }
        if (tmp && r != 0)
                (void)unlink(tmp);
        return r == 0 ? 0 : 1;
}

static int cmd_ls(int argc, char **argv)
{
        bool json = argc == 4 && streq(argv[3], "--json");
        if (argc != 3 && !json) {
                fprintf(stderr, "cordon: sandbox ls ID PATH [--json]   (a directory in the sandbox; `cordon sandbox "
                                "list` lists the sandboxes)\n");
                return EXIT_USAGE;
        }
        _cleanup_close_ int fd = -1;
        if (client_connect(argv[1], &fd) < 0)
                return 1;
        if (control_send(fd, json_pack("{s:s, s:s}", "op", "ls", "path", argv[2]), NULL, 0) < 0)
                return 1;
        for (;;) {
                json_t *m = NULL;
                int r = control_recv(fd, &m, NULL, 0);
                if (r <= 0) {
                        fprintf(stderr, "cordon: ls: no answer from the sandbox's sentry\n");
                        return 1;
                }
                const char *err = json_string_value(json_object_get(m, "error"));
                if (err) {
                        fprintf(stderr, "cordon: ls: %s\n", err);
                        json_decref(m);
                        return 1;
                }
                if (json_object_get(m, "ok")) {
                        json_decref(m);
                        return 0;
                }
                size_t i;
                json_t *e;
                json_array_foreach(json_object_get(m, "entries"), i, e)
                {
                        if (json) {
                                json_dumpf(e, stdout, JSON_COMPACT | JSON_SORT_KEYS);
                                putchar('\n');
                        } else {
                                /* a name the sandbox's code chose: escaped for the terminal */
                                _cleanup_free_ char *name =
                                        doc_printable(json_string_value(json_object_get(e, "name")));
                                printf("%-8s %04o %12lld  %s\n", json_string_value(json_object_get(e, "type")),
                                       (unsigned)json_integer_value(json_object_get(e, "mode")),
                                       (long long)json_integer_value(json_object_get(e, "size")), name);
                        }
                }
                json_decref(m);
        }
}

static int cmd_snapshot(int argc, char **argv)
{
        if (argc != 3) {
                fprintf(stderr, "cordon: sandbox snapshot ID OUT.tar.zst\n");
                return EXIT_USAGE;
        }
        _cleanup_close_ int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) {
                fprintf(stderr, "cordon: snapshot: %s: %m\n", argv[2]);
                return 1;
        }
        /* progress only for a person at a terminal: a program reading
         * stderr gets the errors alone */
        bool tty = isatty(STDERR_FILENO);
        json_t *rep = NULL;
        int r = client_request_progress(argv[1], json_pack("{s:s, s:b}", "op", "snapshot", "progress", tty), &fd, 1,
                                        tty ? snapshot_progress : NULL, &rep);
        if (r != 0) {
                unlink(argv[2]);
                return 1;
        }
        const char *digest = json_string_value(json_object_get(rep, "digest"));
        /* the digest is stored next to the archive: create --from-snapshot
         * refuses an archive that no longer matches it */
        char side[4200];
        snprintf(side, sizeof(side), "%s.sha256", argv[2]);
        _cleanup_close_ int sfd = open(side, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (sfd < 0 || dprintf(sfd, "%s  %s\n", digest, argv[2]) < 0) {
                fprintf(stderr, "cordon: snapshot: cannot store the digest in %s: %m\n", side);
                json_decref(rep);
                return 1;
        }
        printf("%s\n", digest);
        json_decref(rep);
        return 0;
}

int sentry_sandbox(int argc, char **argv)
{
        /* --root DIR (or --root=DIR) before the verb: where the sandboxes'
         * state lives, as runc's --root */
        if (argc >= 2 && (streq(argv[1], "--root") || startswith(argv[1], "--root="))) {
                const char *dir = argv[1][6] == '=' ? argv[1] + 7 : argc >= 3 ? argv[2] : NULL;
                int used = argv[1][6] == '=' ? 1 : 2;
                _cleanup_free_ char *err = NULL;
                if (!dir) {
                        fprintf(stderr, "cordon: sandbox --root: needs a directory\n");
                        return EXIT_USAGE;
                }
                if (state_set_root(dir, &err) < 0) {
                        fprintf(stderr, "cordon: sandbox %s\n", err);
                        return EXIT_USAGE;
                }
                argv[used] = argv[0];
                argc -= used;
                argv += used;
        }
        if (argc < 2 || streq(argv[1], "--help") || streq(argv[1], "-h") || streq(argv[1], "help")) {
                client_usage(argc < 2 ? stderr : stdout);
                return argc < 2 ? EXIT_USAGE : 0;
        }
        const char *verb = argv[1];
        argc--;
        argv++;
        if (streq(verb, "create"))
                return cmd_create(argc, argv);
        if (streq(verb, "exec"))
                return client_exec(argc, argv);
        if (streq(verb, "terminate"))
                return cmd_terminate(argc, argv);
        if (streq(verb, "pause") || streq(verb, "resume"))
                return simple_verb(verb, argc, argv);
        if (streq(verb, "cancel")) {
                if (argc != 3) {
                        fprintf(stderr, "cordon: sandbox cancel ID RUN\n");
                        return EXIT_USAGE;
                }
                json_t *rep = NULL;
                int r = client_request(argv[1], json_pack("{s:s, s:s}", "op", "cancel", "run", argv[2]), NULL, 0, &rep);
                json_decref(rep);
                return r == 0 ? 0 : 1;
        }
        if (streq(verb, "list"))
                return cmd_list(argc, argv);
        if (streq(verb, "inspect"))
                return cmd_inspect(argc, argv);
        if (streq(verb, "put"))
                return cmd_put(argc, argv);
        if (streq(verb, "get"))
                return cmd_get(argc, argv);
        if (streq(verb, "ls"))
                return cmd_ls(argc, argv);
        if (streq(verb, "snapshot"))
                return cmd_snapshot(argc, argv);
        if (streq(verb, "events"))
                return client_events(argc, argv);
        if (streq(verb, "ps"))
                return client_ps(argc, argv);
        if (streq(verb, "kill"))
                return client_kill(argc, argv);
        if (streq(verb, "port"))
                return client_port(argc, argv);
        if (streq(verb, "pending"))
                return cmd_pending(argc, argv);
        if (streq(verb, "approve") || streq(verb, "deny"))
                return cmd_decide(streq(verb, "approve"), argc, argv);
        fprintf(stderr, "cordon: unknown sandbox verb '%s'; try 'cordon sandbox --help'\n", verb);
        return EXIT_USAGE;
}
