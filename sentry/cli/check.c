/* `cordon check`: which isolation layers this host offers, each probed by
 * trying it (never inferred from the kernel version). */
#include "config.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common/util.h"
#include "fs/fs.h"
#include "net/net.h"
#include "notify/notify.h"
#include "sentry/cli/cli.h"
#include "sentry/sentry.h"

/* Tries flags in a child (after a user namespace when asked); true if the
 * kernel allowed it. */
static bool try_unshare(int flags, bool in_userns)
{
        pid_t pid = fork();
        if (pid < 0)
                return false;
        if (pid == 0) {
                if (in_userns && unshare(CLONE_NEWUSER) < 0)
                        _exit(1);
                _exit(unshare(flags) < 0 ? 1 : 0);
        }
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

static int write_text(const char *path, const char *text)
{
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        return fd >= 0 && write_all(fd, text, strlen(text)) == 0 ? 0 : -1;
}

/* In a throw-away user and mount namespace (a tmpfs on its /tmp): whether
 * fn says yes. */
static bool try_in_userns(bool (*fn)(void))
{
        uid_t uid = geteuid();
        gid_t gid = getegid();
        pid_t pid = fork();
        if (pid < 0)
                return false;
        if (pid == 0) {
                char map[64];
                if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
                        _exit(1);
                snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
                if (write_text("/proc/self/setgroups", "deny") < 0 || write_text("/proc/self/uid_map", map) < 0)
                        _exit(1);
                snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
                if (write_text("/proc/self/gid_map", map) < 0)
                        _exit(1);
                if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
                    mount("tmpfs", "/tmp", "tmpfs", 0, "size=64k") < 0)
                        _exit(1);
                _exit(fn() ? 0 : 1);
        }
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* overlayfs mounted in a user namespace over a tmpfs upper, as a template
 * root is (Linux 5.11 allows it; userxattr as cordon mounts it) */
static bool overlay_mounts(void)
{
        if (mkdir("/tmp/l", 0755) < 0 || mkdir("/tmp/u", 0755) < 0 || mkdir("/tmp/w", 0755) < 0 ||
            mkdir("/tmp/m", 0755) < 0)
                return false;
        return mount("overlay", "/tmp/m", "overlay", 0, "lowerdir=/tmp/l,upperdir=/tmp/u,workdir=/tmp/w,userxattr") ==
               0;
}

/* A binfmt_misc of the namespace's own (Linux 6.7): what lets execs run
 * natively without the host's registered formats (fs/binfmt.c). */
static bool binfmt_mounts(void)
{
        return mkdir("/tmp/b", 0755) == 0 && mount("binfmt_misc", "/tmp/b", "binfmt_misc", 0, NULL) == 0;
}

static bool try_overlay_in_userns(void)
{
        return try_in_userns(overlay_mounts);
}

static bool syscall_exists(long nr, long a0, long a1, long a2, long a3)
{
        long r = syscall(nr, a0, a1, a2, a3);
        return r >= 0 || errno != ENOSYS;
}

/* SO_NETNS_COOKIE (Linux 5.14): the egress gate tells the sandbox's own
 * sockets from the ones it made in the host's namespace by it. */
static bool has_netns_cookie(void)
{
        _cleanup_close_ int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        uint64_t c = 0;
        socklen_t l = sizeof(c);
        return s >= 0 && getsockopt(s, SOL_SOCKET, 71 /* SO_NETNS_COOKIE */, &c, &l) == 0 && c != 0;
}

static bool has_filesystem(const char *name)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/filesystems", "re");
        char line[256];
        while (f && fgets(line, sizeof(line), f)) {
                char *tab = strrchr(line, '\t');
                const char *fs = tab ? tab + 1 : line;
                if (strncmp(fs, name, strlen(name)) == 0 && fs[strlen(name)] == '\n')
                        return true;
        }
        return false;
}

static bool is_cgroup2(const char *path)
{
        struct statfs s;
        return statfs(path, &s) == 0 && s.f_type == CGROUP2_SUPER_MAGIC;
}

static bool cgroup_v1_controller(const char *name)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/cgroups", "re");
        char line[256];
        while (f && fgets(line, sizeof(line), f)) {
                char n[64];
                int hier, num, enabled;
                if (sscanf(line, "%63s %d %d %d", n, &hier, &num, &enabled) == 4 && streq(n, name))
                        return hier != 0 && enabled;
        }
        return false;
}

struct row {
        const char *layer;
        bool ok;
        bool required;
        const char *note;
};

/* The kernel egress floor: a cgroup v2 group the sandbox can have, and BPF
 * programs this process may load (loaded for real, then dropped). */
static bool probe_floor(char *note, size_t size)
{
        const char *why = NULL;
        if (cgroup_v2_probe(&why) < 0) {
                snprintf(note, size, "BPF cgroup egress floor: ABSENT: %s", why);
                return false;
        }
        char err[256];
        if (net_floor_probe(err, sizeof(err)) < 0) {
                snprintf(note, size, "BPF cgroup egress floor: ABSENT: %s", err);
                return false;
        }
        snprintf(note, size, "BPF cgroup connect4/6, sendmsg4/6, skb egress: own loopback only, beneath the gate; %s",
                 net_floor_how());
        return true;
}

static bool probe_landlock(char *note, size_t size)
{
        int abi = fs_landlock_abi();
        if (abi == -ENOSYS)
                snprintf(note, size, "ABSENT: the kernel was built without Landlock");
        else if (abi == -EOPNOTSUPP)
                snprintf(note, size, "ABSENT: Landlock is disabled at boot (add it to lsm=)");
        else if (abi < 0)
                snprintf(note, size, "ABSENT: probing failed: %s", strerror(-abi));
        else if (abi < 2)
                snprintf(note, size, "ABSENT: ABI %d is too old (renames across directories need ABI 2)", abi);
        else
                snprintf(note, size, "ABI %d: the child's native file access bounded by the view", abi);
        return abi >= 2;
}

static void json_string_out(const char *s)
{
        putchar('"');
        for (; *s; s++) {
                if (*s == '"' || *s == '\\')
                        printf("\\%c", *s);
                else if ((unsigned char)*s < 0x20)
                        printf("\\u%04x", *s);
                else
                        putchar(*s);
        }
        putchar('"');
}

/* Can this process load seccomp filters at all? (The sentry, its agent and
 * its tracer confine themselves with one whenever they can.) */
static bool has_seccomp_filter(void)
{
        unsigned action = SECCOMP_RET_KILL_PROCESS;
        return syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

/* The limits a `cordon run` without flags or policy gets here: the
 * admission file's maxima, else the built-in defaults, each default tried
 * for real in a group of its own (made and removed at once), so that what
 * this host cannot apply is said, never claimed. */
struct limit_row {
        enum limit_kind kind;
        const char *name;
        char text[320];
};

static void probe_limits(struct run_limits *l, struct limit_row *rows, size_t n, char *note, size_t size)
{
        run_limits_unset(l);
        struct admission adm;
        _cleanup_free_ char *err = NULL;
        note[0] = '\0';
        if (admission_load(NULL, &adm, &err) < 0)
                snprintf(note, size, "admission file: %s (cordon run refuses to start)", err);
        else if (admission_apply(&adm, l, &err) < 0)
                snprintf(note, size, "admission file: %s", err);
        run_limits_apply_defaults(l);
        static const enum limit_kind defaults[] = {LIMIT_MEMORY, LIMIT_PROCESSES};
        for (size_t i = 0; i < ELEMENTSOF(defaults); i++) {
                enum limit_kind k = defaults[i];
                if (l->src[k] != LIMIT_SRC_DEFAULT)
                        continue;
                struct cg_limits cgl = {CG_UNSET, CG_UNSET, CG_UNSET};
                if (k == LIMIT_MEMORY)
                        cgl.memory_bytes = l->memory_bytes;
                else
                        cgl.max_processes = l->max_processes;
                char id[17];
                sandbox_new_id(id);
                struct cgroup *cg = NULL;
                free(TAKE_PTR(err));
                if (cgroup_create(CG_AUTO, id, &cgl, &cg, &err) < 0) {
                        size_t o = strlen(note);
                        if (o < size)
                                snprintf(note + o, size - o, "%s%s: %s", o ? "; " : "", limit_key(k),
                                         err ? err : "no cgroup");
                        run_limits_drop_default(l, k);
                } else
                        (void)cgroup_destroy(cg);
        }
        for (size_t i = 0; i < n; i++)
                limit_describe(l, rows[i].kind, rows[i].text, sizeof(rows[i].text));
}

/* The kernel features a test forces absent (CORDON_TEST_FORCE_FALLBACK, as
 * `cordon run` applies them): what a run would lack, check says it lacks. */
static void apply_test_fallbacks(void)
{
        const char *force = getenv("CORDON_TEST_FORCE_FALLBACK");
        _cleanup_free_ char *list = force ? xstrdup(force) : NULL;
        char *save = NULL;
        for (char *f = list ? strtok_r(list, ",", &save) : NULL; f; f = strtok_r(NULL, ",", &save))
                if (net_floor_force_fallback(f) < 0)
                        (void)notify_force_fallback(f);
}

int sentry_check(bool json)
{
        apply_test_fallbacks();
        bool root = geteuid() == 0;
        bool userns = try_unshare(CLONE_NEWUSER, false);
        struct notify_features nf = {0};
        (void)notify_probe_features(&nf);
        char floor_note[400], landlock_note[200];
        bool floor = probe_floor(floor_note, sizeof(floor_note));
        bool landlock = probe_landlock(landlock_note, sizeof(landlock_note));
        bool cg2 = is_cgroup2("/sys/fs/cgroup") || is_cgroup2("/sys/fs/cgroup/unified");
        bool filters = has_seccomp_filter();
        char confined_note[120];
        if (filters)
                snprintf(confined_note, sizeof(confined_note), "own seccomp allow-list, %zu rows",
                         sentry_confine_rows());
        else
                snprintf(confined_note, sizeof(confined_note), "NOT confined: seccomp filters cannot be loaded");

        char idnote[320];
        struct id_pool pool;
        if (!root)
                snprintf(idnote, sizeof(idnote), "the command keeps your uid and gid (one id mapped)");
        else if (idrange_pool(&pool) < 0)
                snprintf(idnote, sizeof(idnote),
                         "the cordon entries of /etc/subuid or /etc/subgid hold host id 0: cordon run refuses");
        else
                snprintf(idnote, sizeof(idnote),
                         "each sandbox its own 65536 host uids/gids, from %s (%u ranges, uids from %u)", pool.source,
                         pool.ranges, pool.uid_start);
        char core_note[400];
        bool core_ok = sentry_core_dumps_contained(core_note, sizeof(core_note)) == 0;
        if (core_ok)
                snprintf(core_note, sizeof(core_note),
                         "a crash dumps nowhere: RLIMIT_CORE one byte, kept (a file or pipe core_pattern)");
        struct row rows[] = {
                {"user namespace", userns, true, idnote},
                {"mount namespace", try_unshare(CLONE_NEWNS, true), true, "the private view"},
                {"pid namespace", try_unshare(CLONE_NEWPID, true), true, "host processes invisible"},
                {"network namespace", try_unshare(CLONE_NEWNET, true), true, "no host interfaces"},
                {"ipc namespace", try_unshare(CLONE_NEWIPC, true), true, ""},
                {"uts namespace", try_unshare(CLONE_NEWUTS, true), true, ""},
                {"cgroup namespace", try_unshare(CLONE_NEWCGROUP, true), true, ""},
                {"seccomp user notification", nf.user_notif, true, "the sentry's emulation"},
                {"seccomp ADDFD", nf.addfd, true, "fd injection (Linux 5.9)"},
                {"seccomp ADDFD_FLAG_SEND", nf.addfd_send, false, "atomic inject+answer (Linux 5.14)"},
                {"seccomp WAIT_KILLABLE_RECV", nf.wait_killable_recv, false,
                 "signals cannot interrupt an emulated call (Linux 5.19)"},
                {"seccomp SYNC_WAKE_UP", nf.sync_wakeup, false, "faster round trip (Linux 6.6)"},
                {"openat2", syscall_exists(SYS_openat2, -1, 0, 0, 0) && !notify_feature_absent("openat2"), false,
                 "RESOLVE_* path walks"},
                {"mount_setattr", syscall_exists(442, -1, 0, 0, 0), true, "recursive read-only binds (Linux 5.12)"},
                {"pidfd_open", syscall_exists(SYS_pidfd_open, 0, 0, 0, 0), true, "watching the sandbox's init"},
                {"SO_NETNS_COOKIE", has_netns_cookie(), true, "the egress gate tells its sockets apart (Linux 5.14)"},
                {"sentry confined", filters, true, confined_note},
                {"ptrace exec events", exectrace_probe() == 0, true,
                 "exec verified after the fact where execs are checked (--trap-all, exec rules; else only with "
                 "--allow-unverified-exec)"},
                {"binfmt_misc per user namespace", try_in_userns(binfmt_mounts), false,
                 "execs decided natively by the view (Linux 6.7); without it every exec is checked"},
                {"process_vm_readv", syscall_exists(SYS_process_vm_readv, 0, 0, 0, 0), false, "else /proc/PID/mem"},
                {"landlock", landlock, false, landlock_note},
                {"egress floor", floor, false, floor_note},
                {"overlayfs", has_filesystem("overlay"), false, "template roots"},
                {"overlayfs in a user namespace", try_overlay_in_userns(), false,
                 "template roots (Linux 5.11); without it a template source is refused"},
                {"cgroup v2", cg2, false, "limits, where its controllers are delegated"},
                {"cgroup v1 memory", cgroup_v1_controller("memory"), false, "limits (v1 backend)"},
                {"cgroup v1 pids", cgroup_v1_controller("pids"), false, ""},
                {"cgroup v1 cpu", cgroup_v1_controller("cpu"), false, ""},
                {"cgroup v1 freezer", cgroup_v1_controller("freezer"), false, ""},
                {"core dumps contained", core_ok, true, core_note},
        };
        bool all = true;
        for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                if (rows[i].required && !rows[i].ok)
                        all = false;
        struct run_limits lim;
        struct limit_row lrows[] = {
                {LIMIT_MEMORY, "memory", ""}, {LIMIT_PROCESSES, "processes", ""},   {LIMIT_CPU, "cpu", ""},
                {LIMIT_DISK, "disk", ""},     {LIMIT_OPEN_FILES, "open files", ""}, {LIMIT_TIMEOUT, "timeout", ""},
        };
        char lnote[1024];
        probe_limits(&lim, lrows, ELEMENTSOF(lrows), lnote, sizeof(lnote));

        if (json) {
                printf("{\"root\":%s,\"ready\":%s,\"layers\":{", root ? "true" : "false", all ? "true" : "false");
                for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                        printf("%s\"%s\":{\"available\":%s,\"required\":%s,\"note\":", i ? "," : "", rows[i].layer,
                               rows[i].ok ? "true" : "false", rows[i].required ? "true" : "false");
                        json_string_out(rows[i].note);
                        printf("}");
                }
                static const char *const src_names[] = {
                        [LIMIT_SRC_NONE] = "none",     [LIMIT_SRC_DEFAULT] = "default",     [LIMIT_SRC_FLAG] = "flag",
                        [LIMIT_SRC_POLICY] = "policy", [LIMIT_SRC_ADMISSION] = "admission",
                };
                printf("},\"limits\":{");
                for (size_t i = 0; i < ELEMENTSOF(lrows); i++) {
                        enum limit_kind k = lrows[i].kind;
                        printf("%s\"%s\":{\"value\":", i ? "," : "", limit_key(k));
                        if (lim.value[k] == POLICY_UNSET)
                                printf("null");
                        else
                                printf("%lld", (long long)lim.value[k]);
                        printf(",\"source\":\"%s\",\"note\":", src_names[lim.src[k]]);
                        json_string_out(lrows[i].text);
                        printf("}");
                }
                printf("},\"limitsNote\":");
                json_string_out(lnote);
                printf("}\n");
        } else {
                printf("cordon check (running as %s)\n", root ? "root" : "an unprivileged user");
                for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                        printf("  %-28s %-9s %-9s %s\n", rows[i].layer, rows[i].ok ? "yes" : "NO",
                               rows[i].required ? "required" : "optional", rows[i].note);
                printf("limits of a sandbox without flags or a policy (cordon run -v shows a run's own):\n");
                for (size_t i = 0; i < ELEMENTSOF(lrows); i++)
                        printf("  %-28s %s\n", lrows[i].name, lrows[i].text);
                if (lnote[0])
                        printf("  (%s)\n", lnote);
                printf(all ? "ready: every layer `cordon run` requires is available\n"
                           : "NOT READY: a required layer is missing; `cordon run` will refuse to start\n");
        }
        return all ? 0 : 1;
}
