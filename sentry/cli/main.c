/* cordon: the command line. */
#include "config.h"

#include <fcntl.h>
#include <getopt.h>
#include <seccomp.h>

#include "common/trace.h"
#include "common/util.h"
#include "fs/fs.h"
#include "sentry/cli/cli.h"
#include "sentry/oci/oci.h"
#include "sentry/sandbox/sandbox.h"
#include "sentry/sentry.h"

static void usage(FILE *f)
{
        fputs("Usage: cordon run [OPTIONS] -- CMD [ARGS...]\n"
              "       cordon check [--json]\n"
              "       cordon syscalls\n"
              "       cordon gc                  remove what crashed sandboxes left (safe any time)\n"
              "       cordon sandbox VERB ...    long-lived sandboxes (cordon sandbox --help)\n"
              "       cordon serve [OPTIONS]     the sandbox API over HTTP (cordon serve --help)\n"
              "       cordon oci VERB ...        OCI runtime, runc's command line (also as cordon-oci)\n"
              "       cordon digest DIR          print the sha256 digest of a template tree (source.digest)\n"
              "       cordon --help | --version\n"
              "\n"
              "Runs CMD in a sandbox: its own user, mount, pid, net, ipc, uts and cgroup\n"
              "namespaces; host system directories read-only, private /tmp and home;\n"
              "no network; every open decided by the sentry; dangerous syscalls refused.\n"
              "\n"
              "Options for run:\n"
              "  -p, --policy FILE        load a JSON policy (see DESIGN.md)\n"
              "  -b, --bind HOST:SANDBOX[:ro]\n"
              "                           make a host directory or file visible in the view\n"
              "  -e, --env KEY=VALUE      set a variable in the sandbox's environment\n"
              "  -C, --cwd DIR            working directory in the sandbox (default: the current directory\n"
              "                           where the view shows it, else the home, /root; -v says which)\n"
              "  -w, --workspace          bind the current directory read-write at its own path and start\n"
              "                           there: read the system, write the workspace\n"
              "  -u, --user UID[:GID]     run the command as this uid and gid in the sandbox (GID defaults\n"
              "                           to UID), with no supplementary groups; the policy's \"user\" too\n"
              "  -t, --tty                give the command a terminal even if ours is not one\n"
              "  -T, --no-tty             never give the command a terminal\n"
              "      --trap-all           emulate every path call, also those the mount view decides alone\n"
              "      --allow-unverified-exec\n"
              "                           where this host refuses ptrace, run without checking after each\n"
              "                           exec that the checked file is the one that runs (a weaker tier)\n"
              "\n"
              "Limits (the policy's \"limits\" too; where both are given the stricter wins). Without\n"
              "either, or the admission file, a sandbox gets 2G of memory and 1024 tasks; each\n"
              "limit's value may also be \"unlimited\", which lifts it (and its default):\n"
              "      --memory SIZE        memory of the whole sandbox, e.g. 512M (OOM-killed inside it)\n"
              "      --cpus N             CPU bandwidth, e.g. 1.5 CPUs\n"
              "      --pids N, --max-processes N\n"
              "                           processes and threads at once (fork beyond fails with EAGAIN)\n"
              "      --disk SIZE          the writable layer (/tmp, /var/tmp, /run, home, /dev/shm, a template\n"
              "                           root's changes): ENOSPC beyond\n"
              "      --nofile N           open files per process\n"
              "      --timeout DURATION   e.g. 30s, 5m: then every process is killed (exit status 124)\n"
              "      --admission FILE     host-wide maxima (default /etc/cordon/admission.json if present)\n"
              "      --cgroup auto|v1|v2  which cgroup hierarchy enforces the limits\n"
              "      --stats FILE         write what the sandbox used as JSON when it ends\n"
              "\n"
              "Network: the sandbox has its own loopback only; the policy's networkPolicy lists\n"
              "host names it may reach on port 443, through the sentry's DNS stub and egress gate.\n"
              "      --audit FILE         append every egress decision as a JSON line\n"
              "      --approve-interactive\n"
              "                           ask on the controlling terminal (y/n/always) when a policy\n"
              "                           \"ask\" rule is reached; without it such calls are denied\n"
              "  -v, --verbose            say what the sentry does and which layers are on\n"
              "\n"
              "Tests only (never in production):\n"
              "      --debug-unsafe       honour CORDON_DEBUG_DISABLE=LAYER[,LAYER...], which switches\n"
              "                           layers off so a test can show the next one holds alone:\n"
              "                           net-emulation, fs-emulation, ro-binds, noexec-rules,\n"
              "                           egress-floor, landlock.\n"
              "                           Without this flag a set CORDON_DEBUG_DISABLE refuses to run.\n"
              "\n"
              "Exit status: the command's; 128+N if it died of signal N; 2 for a bad command\n"
              "line or policy; 3 for a request over the host's admission limits; 124 when the\n"
              "timeout or expiry killed it; 125 if the sandbox could not be set up; 126/127 if\n"
              "CMD could not be executed / found.\n",
              f);
}

/* What the view can take as a bind target: absolute, not /, not under the
 * /proc and /dev cordon makes itself, no "..". */
static bool bind_target_ok(const char *target)
{
        return target[0] == '/' && !streq(target, "/") && !strstr(target, "/..") && !startswith(target, "/proc") &&
               !startswith(target, "/dev");
}

static int parse_bind(const char *arg, struct policy_bind *ret)
{
        _cleanup_free_ char *s = xstrdup(arg);
        char *host = s, *target = strchr(s, ':');
        if (!target)
                return -EINVAL;
        *target++ = '\0';
        char *opt = strchr(target, ':');
        bool ro = false;
        if (opt) {
                *opt++ = '\0';
                if (streq(opt, "ro"))
                        ro = true;
                else if (!streq(opt, "rw"))
                        return -EINVAL;
        }
        if (host[0] != '/' || !bind_target_ok(target))
                return -EINVAL;
        ret->source = xstrdup(host);
        ret->target = xstrdup(target);
        ret->read_only = ro;
        return 0;
}

/* One id of --user: decimal, 0 to 4294967294 ((uid_t)-1 means "no change"
 * to the kernel). */
static int parse_id(const char *s, size_t len, uint32_t *ret)
{
        uint64_t v = 0;
        if (len == 0 || len > 10)
                return -EINVAL;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                v = v * 10 + (uint64_t)(s[i] - '0');
        }
        if (v > UINT32_MAX - 1)
                return -EINVAL;
        *ret = (uint32_t)v;
        return 0;
}

/* --user UID[:GID]: numeric ids (the sandbox's /etc/passwd is not the
 * caller's to consult); GID is UID when not given. */
static int parse_user(const char *arg, uint32_t *ret_uid, uint32_t *ret_gid)
{
        const char *colon = strchr(arg, ':');
        uint32_t uid, gid;
        if (parse_id(arg, colon ? (size_t)(colon - arg) : strlen(arg), &uid) < 0)
                return -EINVAL;
        gid = uid;
        if (colon && parse_id(colon + 1, strlen(colon + 1), &gid) < 0)
                return -EINVAL;
        *ret_uid = uid;
        *ret_gid = gid;
        return 0;
}

static bool valid_env(const char *kv)
{
        const char *eq = strchr(kv, '=');
        if (!eq || eq == kv)
                return false;
        for (const char *p = kv; p < eq; p++)
                if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_' ||
                      (p > kv && *p >= '0' && *p <= '9')))
                        return false;
        return true;
}

/* `cordon digest DIR`: the value a policy's source.digest pins. The
 * directory itself is opened without following a symlink, as `cordon run`
 * opens a template. */
static int cmd_digest(int argc, char **argv)
{
        if (argc != 2 || argv[1][0] == '-') {
                fprintf(stderr, "cordon: usage: cordon digest DIR\n");
                return EXIT_USAGE;
        }
        _cleanup_close_ int fd = open(argv[1], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "cordon: digest %s: %m%s\n", argv[1],
                        errno == ELOOP || errno == ENOTDIR ? " (a template must be a directory, not a symlink)" : "");
                return 1;
        }
        char err[4352] = "", digest[FS_DIGEST_SIZE];
        int r = fs_digest_tree(fd, err, sizeof(err), digest);
        if (r < 0) {
                fprintf(stderr, "cordon: digest %s: %s\n", argv[1], err[0] ? err : strerror(-r));
                return 1;
        }
        printf("%s\n", digest);
        return 0;
}

static int cmd_run(int argc, char **argv)
{
        static const struct option opts[] = {
                {"policy", required_argument, NULL, 'p'},
                {"bind", required_argument, NULL, 'b'},
                {"env", required_argument, NULL, 'e'},
                {"cwd", required_argument, NULL, 'C'},
                {"workspace", no_argument, NULL, 'w'},
                {"user", required_argument, NULL, 'u'},
                {"tty", no_argument, NULL, 't'},
                {"no-tty", no_argument, NULL, 'T'},
                {"trap-all", no_argument, NULL, 'A'},
                {"verbose", no_argument, NULL, 'v'},
                {"help", no_argument, NULL, 'h'},
                LIMITS_LONG_OPTIONS,
                {"nofile", required_argument, NULL, 'N'},
                {"timeout", required_argument, NULL, 'o'},
                {"admission", required_argument, NULL, 'a'},
                {"stats", required_argument, NULL, 's'},
                {"cgroup", required_argument, NULL, 'g'},
                {"audit", required_argument, NULL, 'U'},
                {"allow-unverified-exec", no_argument, NULL, 'E'},
                {"debug-unsafe", no_argument, NULL, 'X'},
                {"approve-interactive", no_argument, NULL, 'I'},
                {0},
        };
        struct run_options o = {.tty = TTY_AUTO, .cgroup_mode = CG_AUTO};
        run_limits_unset(&o.limits);
        _cleanup_(policy_freep) struct policy *policy = NULL;
        const char *policy_path = NULL;
        int c, r, code = EXIT_USAGE;
        bool debug_unsafe = false, workspace = false;
        _cleanup_free_ char *here = NULL;

        o.binds = NULL;
        o.extra_env = xcalloc(argc + 1, sizeof(char *));
        o.binds = xcalloc(argc + 1, sizeof(struct policy_bind));

        optind = 1;
        while ((c = getopt_long(argc, argv, "+p:b:e:C:wu:tTvh", opts, NULL)) != -1) {
                switch (c) {
                case 'p':
                        policy_path = optarg;
                        break;
                case 'b':
                        if (parse_bind(optarg, &o.binds[o.n_binds]) < 0) {
                                fprintf(stderr,
                                        "cordon: --bind %s: expected HOST:SANDBOX[:ro] with absolute paths, "
                                        "a target other than /, /proc or /dev, and no '..'\n",
                                        optarg);
                                goto out;
                        }
                        o.n_binds++;
                        break;
                case 'e':
                        if (!valid_env(optarg)) {
                                fprintf(stderr,
                                        "cordon: --env %s: expected KEY=VALUE with KEY of letters, digits and _\n",
                                        optarg);
                                goto out;
                        }
                        o.extra_env[o.n_extra_env++] = optarg;
                        break;
                case 'C':
                        if (optarg[0] != '/') {
                                fprintf(stderr, "cordon: --cwd %s: must be an absolute path in the sandbox\n", optarg);
                                goto out;
                        }
                        o.cwd = optarg;
                        break;
                case 'w':
                        workspace = true;
                        break;
                case 'u':
                        if (parse_user(optarg, &o.user_uid, &o.user_gid) < 0) {
                                fprintf(stderr,
                                        "cordon: --user %s: expected UID[:GID], numeric ids from 0 to 4294967294\n",
                                        optarg);
                                goto out;
                        }
                        o.user_set = true;
                        break;
                case 't':
                        o.tty = TTY_ALWAYS;
                        break;
                case 'T':
                        o.tty = TTY_NEVER;
                        break;
                case 'A':
                        o.trap_all = true;
                        break;
                case 'E':
                        o.allow_unverified_exec = true;
                        break;
                case 'v':
                        o.verbose = true;
                        break;
LIMITS_OPTION_CASES:
                case 'N':
                        if (limits_option((char)c, optarg, &o.limits) < 0)
                                goto out;
                        break;
                case 'o':
                        if (limits_option((char)c, optarg, &o.limits) < 0)
                                goto out;
                        break;
                case 'a':
                        o.admission_path = optarg;
                        break;
                case 's':
                        o.stats_path = optarg;
                        break;
                case 'U':
                        o.audit_path = optarg;
                        break;
                case 'X':
                        debug_unsafe = true;
                        break;
                case 'I':
                        o.approve_interactive = true;
                        break;
                case 'g':
                        if (streq(optarg, "auto"))
                                o.cgroup_mode = CG_AUTO;
                        else if (streq(optarg, "v1"))
                                o.cgroup_mode = CG_V1;
                        else if (streq(optarg, "v2"))
                                o.cgroup_mode = CG_V2;
                        else {
                                fprintf(stderr, "cordon: --cgroup %s: expected auto, v1 or v2\n", optarg);
                                goto out;
                        }
                        break;
                case 'h':
                        usage(stdout);
                        code = 0;
                        goto out;
                default:
                        fprintf(stderr, "cordon: try 'cordon --help'\n");
                        goto out;
                }
        }
        if (optind >= argc) {
                fprintf(stderr, "cordon: run: no command given (cordon run [OPTIONS] -- CMD [ARGS...])\n");
                goto out;
        }
        o.argv = argv + optind;

        /* The caller's directory: where the command starts unless --cwd
         * says otherwise and the view shows it (init decides, and falls back
         * to the home), or with --workspace the directory bound read-write
         * at its own path. */
        here = getcwd(NULL, 0);
        if (workspace) {
                if (!here) {
                        fprintf(stderr, "cordon: --workspace: cannot tell the current directory: %m\n");
                        goto out;
                }
                if (!bind_target_ok(here)) {
                        fprintf(stderr,
                                "cordon: --workspace: the current directory %s cannot be bound at its own path "
                                "(a workspace is a directory other than /, not under /proc or /dev)\n",
                                here);
                        goto out;
                }
                o.binds[o.n_binds++] = (struct policy_bind){xstrdup(here), xstrdup(here), false};
                if (!o.cwd)
                        o.cwd = here;
        } else
                o.caller_cwd = here;

        /* Switching layers off is for the tests that show each layer holds on
         * its own. Asked for without the explicit flag it is an error, never
         * ignored: a stray variable in a production environment must not
         * weaken a sandbox, and must not go unnoticed either. */
        const char *dd = getenv("CORDON_DEBUG_DISABLE");
        if (dd && *dd) {
                if (!debug_unsafe) {
                        fprintf(stderr, "cordon: CORDON_DEBUG_DISABLE is set but --debug-unsafe was not given; "
                                        "refusing to run (it switches isolation layers off, for tests only)\n");
                        goto out;
                }
                const char *bad = NULL;
                if (sentry_debug_parse(dd, &o.debug_disable, &bad) < 0) {
                        fprintf(stderr, "cordon: CORDON_DEBUG_DISABLE: unknown layer '%.*s'\n", (int)strcspn(bad, ","),
                                bad);
                        goto out;
                }
                fprintf(stderr, "cordon: warning: --debug-unsafe: layers switched off: %s (test use only)\n", dd);
        }

        if (policy_path) {
                _cleanup_free_ char *err = NULL;
                r = policy_load_file(policy_path, &policy, &err);
                if (r < 0) {
                        fprintf(stderr, "cordon: %s\n", err ? err : strerror(-r));
                        goto out;
                }
        } else
                policy = policy_new_default();
        /* a named tier is granted exactly or refused (as `sandbox create`
         * and the API do): never run under its name without its layers */
        if (policy->isolation >= 0) {
                _cleanup_free_ char *missing = NULL;
                int m = sandbox_tier_missing(policy->isolation, &missing);
                if (m != 0) {
                        fprintf(stderr, "cordon: requestedIsolation \"%s\": %s%s\n",
                                policy_tiers[policy->isolation].name,
                                m > 0 ? "this host lacks " : "cannot tell which layers this host has: ",
                                m > 0 ? missing : strerror(-m));
                        code = EXIT_SANDBOX;
                        goto out;
                }
        }
        o.policy = policy;
        trace_mark("policy parsed");
        code = sentry_run(&o);
        trace_mark("sentry_run returned");
out:
        for (size_t i = 0; i < o.n_binds; i++) {
                free(o.binds[i].source);
                free(o.binds[i].target);
        }
        free(o.binds);
        free(o.extra_env);
        return code;
}

#ifdef CORDON_SANITIZERS
/* LeakSanitizer stops the world with ptrace, which a sandbox refuses: a
 * cordon started inside one (the nested-sandbox tests) leaves leak checks
 * to the runs outside. Called by ASan before main. */
#include <sys/prctl.h>
#include <sys/syscall.h>
const char *__asan_default_options(void);
_public_ const char *__asan_default_options(void)
{
        /* the raw syscall: ASan intercepts prctl() and is not set up yet */
        return syscall(SYS_prctl, PR_GET_SECCOMP, 0, 0, 0, 0) == 2 ? "detect_leaks=0" : "";
}
#endif

int main(int argc, char **argv)
{
        trace_init();
        trace_mark("main");
        /* installed as cordon-oci (a link to cordon): runc's command line */
        const char *prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
        if (streq(prog, "cordon-oci"))
                return sentry_oci(argc, argv);
        if (argc < 2) {
                usage(stderr);
                return EXIT_USAGE;
        }
        const char *verb = argv[1];
        if (streq(verb, "--help") || streq(verb, "-h") || streq(verb, "help")) {
                usage(stdout);
                return 0;
        }
        if (streq(verb, "--version") || streq(verb, "-V")) {
                const struct scmp_version *v = seccomp_version();
                printf("cordon %s (libseccomp %u.%u.%u)\n", PACKAGE_VERSION, v->major, v->minor, v->micro);
                return 0;
        }
        if (streq(verb, "run"))
                return cmd_run(argc - 1, argv + 1);
        if (streq(verb, "sandbox"))
                return sentry_sandbox(argc - 1, argv + 1);
        if (streq(verb, "oci"))
                return sentry_oci(argc - 1, argv + 1);
        if (streq(verb, "serve"))
                return cmd_serve(argc - 1, argv + 1);
        if (streq(verb, "check")) {
                bool json = argc > 2 && streq(argv[2], "--json");
                if (argc > 2 && !json) {
                        fprintf(stderr, "cordon: check: unknown option %s\n", argv[2]);
                        return EXIT_USAGE;
                }
                return sentry_check(json);
        }
        if (streq(verb, "gc")) {
                if (argc == 4 && streq(argv[2], "--root")) {
                        _cleanup_free_ char *err = NULL;
                        if (state_set_root(argv[3], &err) < 0) {
                                fprintf(stderr, "cordon: gc %s\n", err);
                                return EXIT_USAGE;
                        }
                } else if (argc != 2) {
                        fprintf(stderr, "cordon: gc [--root DIR]\n");
                        return EXIT_USAGE;
                }
                int n = state_gc(false);
                if (n < 0) {
                        fprintf(stderr, "cordon: gc: %s\n", strerror(-n));
                        return 1;
                }
                printf("cordon gc: removed %d item(s)\n", n);
                return 0;
        }
        if (streq(verb, "digest"))
                return cmd_digest(argc - 1, argv + 1);
        if (streq(verb, "syscalls")) {
                sentry_print_syscalls();
                return 0;
        }
        fprintf(stderr, "cordon: unknown command '%s'; try 'cordon --help'\n", verb);
        return EXIT_USAGE;
}
