#include "config.h"

/* Unit tests for the sandbox's control groups (sentry/cgroup/), against
 * the host's real hierarchies, once per backend (v1 and v2) where the host
 * has it: a group's life (create, attach, stats, kill, destroy), freezing,
 * the limits (memory → OOM kill, pids → fork fails, cpu → throttling), the
 * refusal of a limit the hierarchy cannot enforce (nothing left behind), and
 * what `cordon gc` uses (leftovers, removal of a directory, and refusing
 * anything not named cordon-*).
 *
 * Every process a test forks dies with the test (PR_SET_PDEATHSIG) and every
 * group is named with this run's prefix; main() sweeps any group of the run
 * that a failed test left behind. Needs root; skips (77) otherwise. */

#include <check.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>

#include "common/util.h"
#include "sentry/cgroup/cgroup.h"

#define MIB (1024 * 1024)

static const enum cg_mode modes[] = {CG_V1, CG_V2};
static const struct cg_limits no_limits = {CG_UNSET, CG_UNSET, CG_UNSET};
static bool have_mode[3];   /* by enum cg_mode */
static char run_prefix[32]; /* "c0de<pid of main>-": ids are [0-9a-f-] only */
static unsigned id_counter;

static const char *mode_name(enum cg_mode m)
{
        return m == CG_V1 ? "v1" : m == CG_V2 ? "v2" : "auto";
}

static char *new_id(void)
{
        return xasprintf("%s%x-%x", run_prefix, (unsigned)getpid(), id_counter++);
}

static bool skip_unless(enum cg_mode m)
{
        if (have_mode[m])
                return false;
        printf("skipped: no cgroup %s on this host\n", mode_name(m));
        return true;
}

static int64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
        struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static bool exists(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0;
}

static bool gone(const char *path)
{
        struct stat st;
        return stat(path, &st) < 0 && errno == ENOENT;
}

static char *parent_of(const char *path)
{
        const char *slash = strrchr(path, '/');
        ck_assert_ptr_nonnull(slash);
        return strndup(path, (size_t)(slash - path));
}

static char *read_text(const char *path)
{
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return NULL;
        char *buf = xcalloc(1, 65536);
        if (read_full(fd, buf, 65535) < 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

/* A copy of the group's directories, to look at after it is destroyed. */
struct dirs {
        size_t n;
        char *path[8];
};

static void dirs_copy(const struct cgroup *cg, struct dirs *ret)
{
        const char *const *d = cgroup_dirs(cg);
        ck_assert_ptr_nonnull(d);
        memset(ret, 0, sizeof(*ret));
        for (; *d && ret->n < ELEMENTSOF(ret->path); d++)
                ret->path[ret->n++] = xstrdup(*d);
        ck_assert_uint_ge(ret->n, 1);
}

static void dirs_free(struct dirs *d)
{
        for (size_t i = 0; i < d->n; i++)
                free(d->path[i]);
        d->n = 0;
}

static bool procs_empty(const char *dir)
{
        _cleanup_free_ char *p = xasprintf("%s/cgroup.procs", dir);
        _cleanup_free_ char *text = read_text(p);
        return text && text[0] == '\0';
}

/* True if /proc/PID/cgroup puts pid in the group "cordon-<id>". */
static bool in_group(pid_t pid, const char *id)
{
        _cleanup_free_ char *p = xasprintf("/proc/%d/cgroup", (int)pid);
        _cleanup_free_ char *text = read_text(p);
        _cleanup_free_ char *name = xasprintf("/cordon-%s\n", id);
        return text && strstr(text, name);
}

/* ------------------------------------------------------------------------ */
/* children: forked, waiting for "go" until the test has attached them */

static void die_with_parent(void)
{
        (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
        alarm(60); /* bounded even if the parent's death goes unnoticed */
}

static pid_t spawn(void (*fn)(void *), void *arg, int *ret_go)
{
        int p[2];
        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                die_with_parent();
                close(p[1]);
                char c;
                if (read(p[0], &c, 1) != 1)
                        _exit(99);
                fn(arg);
                _exit(0);
        }
        close(p[0]);
        *ret_go = p[1];
        return pid;
}

static void release(int go)
{
        ck_assert_int_eq(write(go, "g", 1), 1);
        close(go);
}

static int wait_status(pid_t pid)
{
        int status;
        pid_t r;
        while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
                ;
        ck_assert_int_eq(r, pid);
        return status;
}

static void assert_killed(pid_t pid)
{
        int status = wait_status(pid);
        ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child %d: status 0x%x, not SIGKILL",
                      (int)pid, status);
}

static void child_sleep(void *arg)
{
        for (;;)
                pause();
}

static void child_spin(void *arg)
{
        volatile uint64_t *counter = arg;
        for (;;)
                (*counter)++;
}

static void child_hog(void *arg)
{
        size_t size = 256 * MIB;
        char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                _exit(2);
        for (size_t i = 0; i < size; i += 4096)
                p[i] = 1;
        _exit(0);
}

static void child_fork_many(void *arg)
{
        int fd = *(int *)arg;
        int res[2] = {0, 0}; /* forks that worked, forks refused with EAGAIN */
        for (int i = 0; i < 20; i++) {
                pid_t p = fork();
                if (p == 0) {
                        die_with_parent();
                        for (;;)
                                pause();
                }
                if (p > 0)
                        res[0]++;
                else if (errno == EAGAIN)
                        res[1]++;
        }
        if (write(fd, res, sizeof(res)) != sizeof(res))
                _exit(3);
        for (;;)
                pause();
}

static void child_busy_1s(void *arg)
{
        int64_t end = now_ms() + 1000;
        volatile uint64_t x = 0;
        while (now_ms() < end)
                x++;
        _exit(0);
}

static struct cgroup *create_ok(enum cg_mode mode, const char *id, const struct cg_limits *lim)
{
        struct cgroup *cg = NULL;
        char *err = NULL;
        int r = cgroup_create(mode, id, lim, &cg, &err);
        ck_assert_msg(r == 0, "cgroup_create(%s, %s): %s: %s", mode_name(mode), id, strerror(-r), err ?: "");
        ck_assert_ptr_nonnull(cg);
        free(err);
        return cg;
}

/* Creates with limits, or returns NULL (having said why) when this host's
 * hierarchy for the mode cannot enforce them. */
static struct cgroup *create_limited(enum cg_mode mode, const char *id, const struct cg_limits *lim)
{
        struct cgroup *cg = NULL;
        char *err = NULL;
        int r = cgroup_create(mode, id, lim, &cg, &err);
        if (r == -EOPNOTSUPP) {
                printf("skipped (%s): %s\n", mode_name(mode), err);
                free(err);
                ck_assert_ptr_null(cg);
                return NULL;
        }
        ck_assert_msg(r == 0, "cgroup_create(%s, %s): %s: %s", mode_name(mode), id, strerror(-r), err ?: "");
        free(err);
        return cg;
}

/* ------------------------------------------------------------------------ */

START_TEST(test_lifecycle)
{
        enum cg_mode mode = modes[_i];
        if (skip_unless(mode))
                return;
        _cleanup_free_ char *id = new_id();
        struct cgroup *cg = create_ok(mode, id, &no_limits);
        ck_assert_str_eq(cgroup_backend(cg), mode_name(mode));

        struct dirs d;
        dirs_copy(cg, &d);
        _cleanup_free_ char *suffix = xasprintf("/cordon-%s", id);
        for (size_t i = 0; i < d.n; i++) {
                ck_assert(exists(d.path[i]));
                ck_assert_str_eq(d.path[i] + strlen(d.path[i]) - strlen(suffix), suffix);
        }
        if (mode == CG_V2)
                ck_assert_uint_eq(d.n, 1);

        int go;
        pid_t pid = spawn(child_sleep, NULL, &go);
        ck_assert_int_eq(cgroup_attach(cg, pid), 0);
        release(go);
        ck_assert(in_group(pid, id));
        for (size_t i = 0; i < d.n; i++)
                ck_assert(!procs_empty(d.path[i]));

        struct cg_stats st;
        ck_assert_int_eq(cgroup_stats(cg, &st), 0);
        ck_assert_int_ge(st.cpu_usage_usec, 0);
        if (st.pids_current != -1)
                ck_assert_int_eq(st.pids_current, 1);

        ck_assert_int_eq(cgroup_kill_all(cg), 0);
        /* empty before the child is reaped: a zombie is no longer listed */
        for (size_t i = 0; i < d.n; i++)
                ck_assert_msg(procs_empty(d.path[i]), "%s not empty", d.path[i]);
        assert_killed(pid);

        ck_assert_int_eq(cgroup_destroy(cg), 0);
        for (size_t i = 0; i < d.n; i++)
                ck_assert_msg(gone(d.path[i]), "%s still there", d.path[i]);
        dirs_free(&d);
}
END_TEST

/* True if path/file exists and reads as want (its first line). */
static bool file_is(const char *dir, const char *file, const char *want)
{
        _cleanup_free_ char *p = xasprintf("%s/%s", dir, file);
        _cleanup_free_ char *text = read_text(p);
        if (!text)
                return false;
        text[strcspn(text, "\n")] = '\0';
        ck_assert_msg(streq(text, want), "%s: \"%s\", expected \"%s\"", p, text, want);
        return true;
}

/* An OCI cgroupsPath: the limits are written in the group it names (as
 * runc writes them), the sentry (here: this process) moves into it, a
 * process the sentry forks is bound by them and placed by the cpuset, and
 * destroy removes that group and the parent made for it. A refusal (v2 on
 * a hybrid host, whose controllers are v1's) leaves nothing either. */
START_TEST(test_cgroups_path)
{
        enum cg_mode mode = modes[_i];
        if (skip_unless(mode))
                return;
        _cleanup_free_ char *top = xasprintf("%spath", run_prefix);
        _cleanup_free_ char *path = xasprintf("/%s/g", top);
        ck_assert_int_eq(cgroup_set_parent(path), 0);
        struct cg_oci o = CG_OCI_NONE;
        o.cpu_quota = 20000;
        o.cpu_period = 200000;
        o.cpu_shares = 512;
        o.cpus = "0";
        o.mems = "0";
        cgroup_set_oci(&o);
        struct cg_limits lim = {64 * MIB, 30, cgroup_cpu_millis(20000, 200000)};
        _cleanup_free_ char *id = new_id();
        _cleanup_free_ char *err = NULL;
        struct cgroup *cg = NULL;
        int r = cgroup_create(mode, id, &lim, &cg, &err);
        _cleanup_free_ char *root_top = xasprintf("/sys/fs/cgroup/%s", top);
        if (r == -EOPNOTSUPP) {
                printf("refused (%s): %s\n", mode_name(mode), err);
                ck_assert_ptr_null(cg);
                ck_assert_msg(gone(root_top), "%s left behind", root_top);
                for (size_t c = 0; c < 8; c++) {
                        static const char *const h[] = {"memory", "pids",    "cpu",     "cpuacct",
                                                        "cpuset", "freezer", "unified", "systemd"};
                        _cleanup_free_ char *d = xasprintf("/sys/fs/cgroup/%s/%s", h[c], top);
                        ck_assert_msg(gone(d), "%s left behind", d);
                }
                return;
        }
        ck_assert_msg(r == 0, "cgroup_create: %s: %s", strerror(-r), err ?: "");

        /* the limits, read where the engine reads them */
        char *parents[32];
        size_t n = 0, seen = 0;
        for (const char *const *d = cgroup_parent_dirs(cg); *d && n < ELEMENTSOF(parents); d++)
                parents[n++] = xstrdup(*d);
        ck_assert_uint_ge(n, 2);
        for (size_t i = 0; i < n; i++) {
                if (!strstr(parents[i], path))
                        continue; /* the parent made on the way */
                seen += file_is(parents[i], "memory.limit_in_bytes", "67108864");
                seen += file_is(parents[i], "memory.max", "67108864");
                seen += file_is(parents[i], "pids.max", "30");
                seen += file_is(parents[i], "cpu.cfs_quota_us", "20000");
                seen += file_is(parents[i], "cpu.cfs_period_us", "200000");
                seen += file_is(parents[i], "cpu.shares", "512");
                seen += file_is(parents[i], "cpu.max", "20000 200000");
                seen += file_is(parents[i], "cpuset.cpus", "0");
        }
        ck_assert_uint_ge(seen, mode == CG_V1 ? 6 : 3);
        /* `cordon-oci update`, from the state file's lists as another
         * process has them: the new limits where create wrote its own */
        struct cg_limits more = {128 * MIB, 50, cgroup_cpu_millis(40000, 200000)};
        o.cpu_quota = 40000;
        r = cgroup_update(cgroup_backend(cg), cgroup_dirs(cg), cgroup_parent_dirs(cg), &more, &o, &err);
        ck_assert_msg(r == 0, "cgroup_update: %s: %s", strerror(-r), err ?: "");
        seen = 0;
        for (size_t i = 0; i < n; i++) {
                if (!strstr(parents[i], path))
                        continue;
                seen += file_is(parents[i], "memory.limit_in_bytes", "134217728");
                seen += file_is(parents[i], "memory.max", "134217728");
                seen += file_is(parents[i], "pids.max", "50");
                seen += file_is(parents[i], "cpu.cfs_quota_us", "40000");
                seen += file_is(parents[i], "cpu.max", "40000 200000");
        }
        ck_assert_uint_ge(seen, 3);
        /* the sentry is in it: what containerd's shim reads */
        _cleanup_free_ char *self = read_text("/proc/self/cgroup");
        ck_assert_msg(strstr(self, path), "%s", self);

        int go;
        pid_t pid = spawn(child_sleep, NULL, &go);
        ck_assert_int_eq(cgroup_attach(cg, pid), 0);
        release(go);
        ck_assert(in_group(pid, id));
        if (mode == CG_V1) {
                /* a placement: the container stays in G with the sentry */
                _cleanup_free_ char *want = xasprintf(":cpuset:%s\n", path);
                _cleanup_free_ char *p = xasprintf("/proc/%d/cgroup", (int)pid);
                _cleanup_free_ char *text = read_text(p);
                ck_assert_msg(strstr(text, want), "%s", text);
                _cleanup_free_ char *st = xasprintf("/proc/%d/status", (int)pid);
                _cleanup_free_ char *status = read_text(st);
                ck_assert_msg(strstr(status, "Cpus_allowed_list:\t0\n"), "%s", status);
        }
        ck_assert_int_eq(cgroup_kill_all(cg), 0);
        assert_killed(pid);
        ck_assert_int_eq(cgroup_destroy(cg), 0);
        for (size_t i = 0; i < n; i++) {
                ck_assert_msg(gone(parents[i]), "%s still there", parents[i]);
                free(parents[i]);
        }
        free(self);
        self = read_text("/proc/self/cgroup");
        ck_assert_msg(!strstr(self, path), "the sentry did not go back: %s", self);
        ck_assert(gone(root_top));
}
END_TEST

/* cgroup v1, a cgroupsPath and no CPU limit or placement at create: the
 * container is in G in the cpu and cpuset hierarchies all the same (as runc
 * places it; the cpuset G has its parent's lists, or no task could join),
 * so an update gives it a CPU limit and a placement, which bind a process
 * forked after; destroy leaves no group in any hierarchy. */
START_TEST(test_cgroups_path_update_unlimited)
{
        if (skip_unless(CG_V1))
                return;
        _cleanup_free_ char *top = xasprintf("%sunl", run_prefix);
        _cleanup_free_ char *path = xasprintf("/%s/g", top);
        _cleanup_free_ char *cpu = xasprintf("/sys/fs/cgroup/cpu%s", path);
        _cleanup_free_ char *cpuset = xasprintf("/sys/fs/cgroup/cpuset%s", path);
        if (!exists("/sys/fs/cgroup/cpu/cpu.shares") || !exists("/sys/fs/cgroup/cpuset/cpuset.cpus")) {
                printf("skipped: no cgroup v1 cpu and cpuset hierarchies at /sys/fs/cgroup/{cpu,cpuset}\n");
                return;
        }
        ck_assert_int_eq(cgroup_set_parent(path), 0);
        cgroup_set_oci(NULL);
        struct cg_limits lim = {64 * MIB, CG_UNSET, CG_UNSET};
        _cleanup_free_ char *id = new_id();
        _cleanup_free_ char *err = NULL;
        struct cgroup *cg = NULL;
        int r = cgroup_create(CG_V1, id, &lim, &cg, &err);
        ck_assert_msg(r == 0, "cgroup_create: %s: %s", strerror(-r), err ?: "");
        _cleanup_free_ char *self = read_text("/proc/self/cgroup");
        _cleanup_free_ char *in_cpu = xasprintf(":cpu:%s\n", path), *in_cpuset = xasprintf(":cpuset:%s\n", path);
        ck_assert_msg(strstr(self, in_cpu) && strstr(self, in_cpuset), "%s", self);
        _cleanup_free_ char *cpus_file = xasprintf("%s/cpuset.cpus", cpuset);
        _cleanup_free_ char *cpus = read_text(cpus_file);
        ck_assert_msg(cpus && cpus[0] && cpus[0] != '\n', "%s: empty", cpus_file);

        struct cg_oci o = CG_OCI_NONE;
        o.cpu_quota = 30000;
        o.cpu_period = 100000;
        o.cpu_shares = 256;
        o.cpus = "0";
        o.mems = "0";
        struct cg_limits more = {CG_UNSET, CG_UNSET, cgroup_cpu_millis(30000, 100000)};
        r = cgroup_update(cgroup_backend(cg), cgroup_dirs(cg), cgroup_parent_dirs(cg), &more, &o, &err);
        ck_assert_msg(r == 0, "cgroup_update: %s: %s", strerror(-r), err ?: "");
        ck_assert(file_is(cpu, "cpu.cfs_quota_us", "30000"));
        ck_assert(file_is(cpu, "cpu.cfs_period_us", "100000"));
        ck_assert(file_is(cpu, "cpu.shares", "256"));
        ck_assert(file_is(cpuset, "cpuset.cpus", "0"));
        ck_assert(file_is(cpuset, "cpuset.mems", "0"));

        int go;
        pid_t pid = spawn(child_sleep, NULL, &go);
        ck_assert_int_eq(cgroup_attach(cg, pid), 0);
        release(go);
        _cleanup_free_ char *st = xasprintf("/proc/%d/status", (int)pid);
        _cleanup_free_ char *status = read_text(st);
        ck_assert_msg(strstr(status, "Cpus_allowed_list:\t0\n"), "%s", status);
        ck_assert_int_eq(cgroup_kill_all(cg), 0);
        assert_killed(pid);
        ck_assert_int_eq(cgroup_destroy(cg), 0);
        static const char *const h[] = {"memory", "pids", "cpu", "cpuacct", "cpuset", "freezer", "unified"};
        for (size_t c = 0; c < ELEMENTSOF(h); c++) {
                _cleanup_free_ char *d = xasprintf("/sys/fs/cgroup/%s/%s", h[c], top);
                ck_assert_msg(gone(d), "%s left behind", d);
        }
}
END_TEST

/* Either backend gives the sandbox a group in the cgroup v2 hierarchy, where
 * the BPF egress floor attaches (v1: one without limits beside the v1
 * groups), listed with the others so it is killed, removed and gc'd too. */
START_TEST(test_v2_group_for_bpf)
{
        enum cg_mode mode = modes[_i];
        if (skip_unless(mode))
                return;
        if (!have_mode[CG_V2]) {
                printf("skipped: no usable cgroup v2 hierarchy for the BPF group\n");
                return;
        }
        _cleanup_free_ char *id = new_id();
        struct cgroup *cg = create_ok(mode, id, &no_limits);
        const char *why = NULL;
        int fd = cgroup_open_v2(cg, &why);
        ck_assert_msg(fd >= 0, "cgroup_open_v2 (%s): %s: %s", mode_name(mode), strerror(-fd), why ?: "");
        struct statfs sf;
        ck_assert_int_eq(fstatfs(fd, &sf), 0);
        ck_assert(sf.f_type == CGROUP2_SUPER_MAGIC);
        close(fd);
        const char *path = cgroup_v2_path(cg);
        ck_assert_ptr_nonnull(path);
        _cleanup_free_ char *suffix = xasprintf("/cordon-%s", id);
        ck_assert_str_eq(path + strlen(path) - strlen(suffix), suffix);
        bool listed = false;
        for (const char *const *d = cgroup_dirs(cg); *d; d++)
                listed |= streq(*d, path);
        ck_assert_msg(listed, "%s is not among the group's directories", path);
        _cleanup_free_ char *copy = xstrdup(path);
        ck_assert_int_eq(cgroup_destroy(cg), 0);
        ck_assert_msg(gone(copy), "%s still there", copy);
}
END_TEST

START_TEST(test_freeze_thaw)
{
        enum cg_mode mode = modes[_i];
        if (skip_unless(mode))
                return;
        volatile uint64_t *counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        ck_assert_ptr_ne((void *)counter, MAP_FAILED);
        _cleanup_free_ char *id = new_id();
        struct cgroup *cg = create_ok(mode, id, &no_limits);

        int go;
        pid_t pid = spawn(child_spin, (void *)counter, &go);
        ck_assert_int_eq(cgroup_attach(cg, pid), 0);
        release(go);
        int64_t deadline = now_ms() + 5000;
        while (*counter == 0 && now_ms() < deadline)
                sleep_ms(1);
        ck_assert_uint_gt(*counter, 0);

        ck_assert_int_eq(cgroup_freeze(cg, true), 0);
        uint64_t a = *counter;
        sleep_ms(200);
        uint64_t b = *counter;
        ck_assert_msg(a == b, "the counter moved while frozen: %llu -> %llu", (unsigned long long)a,
                      (unsigned long long)b);

        ck_assert_int_eq(cgroup_freeze(cg, false), 0);
        deadline = now_ms() + 5000;
        while (*counter == b && now_ms() < deadline)
                sleep_ms(1);
        ck_assert_msg(*counter > b, "the counter did not move after the thaw");

        /* a frozen group is killed too */
        ck_assert_int_eq(cgroup_freeze(cg, true), 0);
        ck_assert_int_eq(cgroup_destroy(cg), 0);
        assert_killed(pid);
        munmap((void *)counter, 4096);
}
END_TEST

START_TEST(test_memory_limit)
{
        enum cg_mode mode = modes[_i];
        if (skip_unless(mode))
                return;
        _cleanup_free_ char *id = new_id();
        struct cg_limits lim = {.memory_bytes = 32 * MIB, .max_processes = CG_UNSET, .cpu_millis = CG_UNSET};
        struct cgroup *cg = create_limited(mode, id, &lim);
        if (!cg)
                return;

        int go;
        pid_t pid = spawn(child_hog, NULL, &go);
        ck_assert_int_eq(cgroup_attach(cg, pid), 0);
        release(go);
        assert_killed(pid); /* by the OOM killer */

        struct cg_stats st;
        ck_assert_int_eq(cgroup_stats(cg, &st), 0);
        ck_assert_int_ge(st.oom_kills, 1);
        if (st.memory_peak_bytes != -1) {
                ck_assert_int_gt(st.memory_peak_bytes, 0);
                ck_assert_int_le(st.memory_peak_bytes, 32 * MIB);
        }
        ck_assert_int_eq(cgroup_destroy(cg), 0);
}
END_TEST

START_TEST(test_pids_limit)
{
        enum cg_mode mode = modes[_i];
        if (skip_unless(mode))
                return;
        _cleanup_free_ char *id = new_id();
        struct cg_limits lim = {.memory_bytes = CG_UNSET, .max_processes = 5, .cpu_millis = CG_UNSET};
        struct cgroup *cg = create_limited(mode, id, &lim);
        if (!cg)
                return;

        int res_pipe[2];
        ck_assert_int_eq(pipe2(res_pipe, O_CLOEXEC), 0);
        int go;
        pid_t pid = spawn(child_fork_many, &res_pipe[1], &go);
        close(res_pipe[1]);
        ck_assert_int_eq(cgroup_attach(cg, pid), 0);
        release(go);
        int res[2];
        ck_assert_int_eq(read_full(res_pipe[0], res, sizeof(res)), (ssize_t)sizeof(res));
        close(res_pipe[0]);
        ck_assert_msg(res[0] <= 5, "%d forks succeeded under pids.max 5", res[0]);
        ck_assert_msg(res[1] > 0, "no fork failed with EAGAIN");

        struct cg_stats st;
        ck_assert_int_eq(cgroup_stats(cg, &st), 0);
        ck_assert_int_le(st.pids_current, 5);
        ck_assert_int_ge(st.pids_current, 1);

        /* update, without a cgroupsPath: the sandbox's own group */
        struct cg_limits more = {.memory_bytes = CG_UNSET, .max_processes = 9, .cpu_millis = CG_UNSET};
        struct cg_oci none = CG_OCI_NONE;
        char *err = NULL;
        int r = cgroup_update(cgroup_backend(cg), cgroup_dirs(cg), cgroup_parent_dirs(cg), &more, &none, &err);
        ck_assert_msg(r == 0, "cgroup_update: %s: %s", strerror(-r), err ?: "");
        size_t seen = 0;
        for (const char *const *d = cgroup_dirs(cg); *d; d++)
                seen += file_is(*d, "pids.max", "9");
        ck_assert_uint_eq(seen, 1);
        more.max_processes = 0;
        ck_assert_int_eq(cgroup_update(cgroup_backend(cg), cgroup_dirs(cg), cgroup_parent_dirs(cg), &more, &none, &err),
                         -EINVAL);
        ck_assert_msg(err && strstr(err, "limits.maxProcesses"), "%s", err ?: "");
        free(err);

        ck_assert_int_eq(cgroup_destroy(cg), 0);
        assert_killed(pid);
}
END_TEST

START_TEST(test_cpu_limit)
{
        enum cg_mode mode = modes[_i];
        if (skip_unless(mode))
                return;
        _cleanup_free_ char *id = new_id();
        struct cg_limits lim = {.memory_bytes = CG_UNSET, .max_processes = CG_UNSET, .cpu_millis = 200};
        struct cgroup *cg = create_limited(mode, id, &lim);
        if (!cg)
                return;

        int go;
        pid_t pid = spawn(child_busy_1s, NULL, &go);
        ck_assert_int_eq(cgroup_attach(cg, pid), 0);
        release(go);
        int status = wait_status(pid);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);

        struct cg_stats st;
        ck_assert_int_eq(cgroup_stats(cg, &st), 0);
        ck_assert_int_gt(st.nr_periods, 0);
        ck_assert_int_gt(st.nr_throttled, 0);
        ck_assert_int_gt(st.throttled_usec, 0);
        /* 20% of a CPU for about a second, with room for a slow start */
        ck_assert_int_gt(st.cpu_usage_usec, 0);
        ck_assert_int_lt(st.cpu_usage_usec, 700000);
        ck_assert_int_eq(cgroup_destroy(cg), 0);
}
END_TEST

/* v2 where the controller is not in the hierarchy (a hybrid host): refused
 * with a message naming the limit, and nothing left behind. */
static const struct {
        const char *limit, *ctrl;
        struct cg_limits lim;
} unavailable_cases[] = {
        {"limits.memoryBytes", "memory", {32 * MIB, CG_UNSET, CG_UNSET}},
        {"limits.maxProcesses", "pids", {CG_UNSET, 5, CG_UNSET}},
        {"limits.cpuMillis", "cpu", {CG_UNSET, CG_UNSET, 200}},
};

START_TEST(test_v2_refuses_missing_controller)
{
        if (skip_unless(CG_V2))
                return;
        _cleanup_free_ char *probe_id = new_id();
        struct cgroup *probe = create_ok(CG_V2, probe_id, &no_limits);
        _cleanup_free_ char *parent = parent_of(cgroup_dirs(probe)[0]);
        ck_assert_int_eq(cgroup_destroy(probe), 0);
        _cleanup_free_ char *cpath = xasprintf("%s/cgroup.controllers", parent);
        _cleanup_free_ char *controllers = read_text(cpath);
        ck_assert_ptr_nonnull(controllers);
        _cleanup_free_ char *word = xasprintf(" %s ", unavailable_cases[_i].ctrl);
        _cleanup_free_ char *padded = xasprintf(" %s ", controllers);
        padded[strcspn(padded, "\n")] = ' ';
        if (strstr(padded, word)) {
                printf("skipped: the %s controller is available in %s\n", unavailable_cases[_i].ctrl, parent);
                return;
        }

        _cleanup_free_ char *id = new_id();
        struct cgroup *cg = NULL;
        char *err = NULL;
        int r = cgroup_create(CG_V2, id, &unavailable_cases[_i].lim, &cg, &err);
        ck_assert_int_eq(r, -EOPNOTSUPP);
        ck_assert_ptr_null(cg);
        ck_assert_ptr_nonnull(err);
        ck_assert_msg(strstr(err, unavailable_cases[_i].limit + strlen("limits.")) && strstr(err, "not available") &&
                              strstr(err, parent),
                      "unclear message: %s", err);
        free(err);
        _cleanup_free_ char *dir = xasprintf("%s/cordon-%s", parent, id);
        ck_assert_msg(gone(dir), "%s left behind", dir);
}
END_TEST

/* A create that fails half way (the name is taken in the last hierarchy)
 * removes what it made, and not what it did not make. */
START_TEST(test_create_rollback)
{
        enum cg_mode mode = modes[_i];
        if (skip_unless(mode))
                return;
        _cleanup_free_ char *probe_id = new_id();
        struct cgroup *probe = create_ok(mode, probe_id, &no_limits);
        struct dirs d;
        dirs_copy(probe, &d);
        ck_assert_int_eq(cgroup_destroy(probe), 0);

        /* the last hierarchy a failure is fatal in: with v1, the limit-free
         * v2 group for the BPF floor comes last and is optional (without it
         * the floor is reported absent) */
        size_t last = d.n - 1;
        struct statfs sf;
        _cleanup_free_ char *v2_parent = parent_of(d.path[last]);
        if (mode == CG_V1 && last > 0 && statfs(v2_parent, &sf) == 0 && sf.f_type == CGROUP2_SUPER_MAGIC)
                last--;
        _cleanup_free_ char *id = new_id();
        _cleanup_free_ char *last_parent = parent_of(d.path[last]);
        _cleanup_free_ char *taken = xasprintf("%s/cordon-%s", last_parent, id);
        ck_assert_int_eq(mkdir(taken, 0755), 0);

        struct cgroup *cg = NULL;
        char *err = NULL;
        int r = cgroup_create(mode, id, &no_limits, &cg, &err);
        bool taken_kept = exists(taken);
        bool others_gone = true;
        for (size_t i = 0; i < d.n; i++) {
                if (i == last)
                        continue;
                _cleanup_free_ char *p = parent_of(d.path[i]);
                _cleanup_free_ char *dir = xasprintf("%s/cordon-%s", p, id);
                others_gone &= gone(dir);
        }
        int removed = cgroup_remove_dir(taken);
        dirs_free(&d);

        ck_assert_int_eq(r, -EEXIST);
        ck_assert_ptr_null(cg);
        ck_assert_msg(err && strstr(err, taken), "unclear message: %s", err ?: "(none)");
        free(err);
        ck_assert_msg(taken_kept, "removed a group it did not create");
        ck_assert_msg(others_gone, "left a group behind");
        ck_assert_int_eq(removed, 0);
}
END_TEST

struct found {
        const char *id;
        size_t n;
        char *dir[8];
};

static int collect(const char *dir, const char *id, void *userdata)
{
        struct found *f = userdata;
        if (streq(id, f->id) && f->n < ELEMENTSOF(f->dir))
                f->dir[f->n++] = xstrdup(dir);
        return 0;
}

/* What `cordon gc` does: list leftovers, remove them with what runs in them. */
START_TEST(test_leftover_gc)
{
        enum cg_mode mode = modes[_i];
        if (skip_unless(mode))
                return;
        _cleanup_free_ char *id = new_id();
        struct cgroup *cg = create_ok(mode, id, &no_limits);
        struct dirs d;
        dirs_copy(cg, &d);
        int go;
        pid_t pid = spawn(child_sleep, NULL, &go);
        ck_assert_int_eq(cgroup_attach(cg, pid), 0);
        release(go);

        struct found f = {.id = id};
        ck_assert_int_ge(cgroup_foreach_leftover(collect, &f), (int)d.n);
        ck_assert_uint_eq(f.n, d.n);
        for (size_t i = 0; i < d.n; i++) {
                bool listed = false;
                for (size_t j = 0; j < f.n; j++)
                        listed |= streq(f.dir[j], d.path[i]);
                ck_assert_msg(listed, "%s not listed", d.path[i]);
        }

        for (size_t j = 0; j < f.n; j++) {
                ck_assert_int_eq(cgroup_remove_dir(f.dir[j]), 0);
                ck_assert(gone(f.dir[j]));
                ck_assert_int_eq(cgroup_remove_dir(f.dir[j]), -ENOENT);
                free(f.dir[j]);
        }
        assert_killed(pid);
        /* its directories are gone already: destroy still frees it */
        ck_assert_int_eq(cgroup_destroy(cg), 0);
        dirs_free(&d);
}
END_TEST

START_TEST(test_remove_dir_refuses)
{
        ck_assert_int_eq(cgroup_remove_dir(NULL), -EINVAL);
        ck_assert_int_eq(cgroup_remove_dir(""), -EINVAL);
        ck_assert_int_eq(cgroup_remove_dir("cordon-abc"), -EINVAL);
        ck_assert_int_eq(cgroup_remove_dir("sys/fs/cgroup/cordon-abc"), -EINVAL);
        ck_assert_int_eq(cgroup_remove_dir("/sys/fs/cgroup"), -EINVAL);
        ck_assert_int_eq(cgroup_remove_dir("/sys/fs/cgroup/memory"), -EINVAL);
        ck_assert_int_eq(cgroup_remove_dir("/sys/fs/cgroup/cordon-../memory"), -EINVAL);
        ck_assert_int_eq(cgroup_remove_dir("/sys/fs/cgroup/memory/cordon-"), -EINVAL);
        ck_assert_int_eq(cgroup_remove_dir("/sys/fs/cgroup/memory/cordon-.."), -EINVAL);
        ck_assert_int_eq(cgroup_remove_dir("/sys/fs/cgroup/memory/cordon-ABC"), -EINVAL);
        ck_assert_int_eq(cgroup_remove_dir("/sys/fs/cgroup/memory/cordon-abc/"), -EINVAL);

        /* named like ours, but not a control group */
        char tmp[] = "/tmp/test-cgroup-cgroup-XXXXXX";
        ck_assert_ptr_nonnull(mkdtemp(tmp));
        _cleanup_free_ char *fake = xasprintf("%s/cordon-abc", tmp);
        ck_assert_int_eq(mkdir(fake, 0700), 0);
        int r_fake = cgroup_remove_dir(fake);
        bool fake_kept = exists(fake);
        (void)rmdir(fake);
        (void)rmdir(tmp);
        ck_assert_int_eq(r_fake, -EINVAL);
        ck_assert(fake_kept);

        /* a control group, but not named like ours */
        enum cg_mode mode = have_mode[CG_V1] ? CG_V1 : CG_V2;
        if (!have_mode[mode])
                return;
        _cleanup_free_ char *probe_id = new_id();
        struct cgroup *probe = create_ok(mode, probe_id, &no_limits);
        _cleanup_free_ char *parent = parent_of(cgroup_dirs(probe)[0]);
        ck_assert_int_eq(cgroup_destroy(probe), 0);
        _cleanup_free_ char *other = xasprintf("%s/%snot-ours", parent, run_prefix);
        ck_assert_int_eq(mkdir(other, 0755), 0);
        int r_other = cgroup_remove_dir(other);
        bool other_kept = exists(other);
        (void)rmdir(other);
        ck_assert_int_eq(r_other, -EINVAL);
        ck_assert(other_kept);

        /* ours, but gone */
        _cleanup_free_ char *absent_id = new_id();
        _cleanup_free_ char *absent = xasprintf("%s/cordon-%s", parent, absent_id);
        ck_assert_int_eq(cgroup_remove_dir(absent), -ENOENT);
}
END_TEST

static const char *const bad_ids[] = {
        "",     "/",    "a/b",       "..",
        ".",    "../x", "x",         "ABC",
        "ab c", "ab\n", "cordon-..", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", /* 65 */
};

START_TEST(test_bad_ids)
{
        struct cgroup *cg = NULL;
        char *err = NULL;
        ck_assert_int_eq(cgroup_create(CG_AUTO, bad_ids[_i], &no_limits, &cg, &err), -EINVAL);
        ck_assert_ptr_null(cg);
        ck_assert_ptr_nonnull(err);
        free(err);
        err = NULL;
        ck_assert_int_eq(cgroup_create(CG_AUTO, NULL, &no_limits, &cg, &err), -EINVAL);
        free(err);
}
END_TEST

START_TEST(test_bad_limits)
{
        struct cg_limits lim[] = {
                {0, CG_UNSET, CG_UNSET},
                {CG_UNSET, -5, CG_UNSET},
                {CG_UNSET, CG_UNSET, 0},
        };
        for (size_t i = 0; i < ELEMENTSOF(lim); i++) {
                _cleanup_free_ char *id = new_id();
                struct cgroup *cg = NULL;
                char *err = NULL;
                ck_assert_int_eq(cgroup_create(CG_AUTO, id, &lim[i], &cg, &err), -EINVAL);
                ck_assert_ptr_null(cg);
                ck_assert_ptr_nonnull(strstr(err, "limits."));
                free(err);
        }
        ck_assert_int_eq(cgroup_destroy(NULL), 0);
}
END_TEST

/* CG_AUTO: v2 on a pure v2 host, where the controllers are; v1 where the
 * host has v1 hierarchies (hybrid or v1 only). */
START_TEST(test_auto)
{
        struct statfs sfs;
        bool pure_v2 = statfs("/sys/fs/cgroup", &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC;
        enum cg_mode expect = pure_v2 || !have_mode[CG_V1] ? CG_V2 : CG_V1;
        if (skip_unless(expect))
                return;
        _cleanup_free_ char *id = new_id();
        struct cgroup *cg = create_ok(CG_AUTO, id, &no_limits);
        ck_assert_str_eq(cgroup_backend(cg), mode_name(expect));
        ck_assert_int_eq(cgroup_destroy(cg), 0);
}
END_TEST

static Suite *cgroup_suite(void)
{
        Suite *s = suite_create("sentry-cgroup");
        TCase *tc;
        int nm = (int)ELEMENTSOF(modes);

        tc = tcase_create("group");
        tcase_set_timeout(tc, 60);
        tcase_add_loop_test(tc, test_lifecycle, 0, nm);
        tcase_add_loop_test(tc, test_freeze_thaw, 0, nm);
        tcase_add_loop_test(tc, test_create_rollback, 0, nm);
        tcase_add_loop_test(tc, test_v2_group_for_bpf, 0, nm);
        tcase_add_loop_test(tc, test_cgroups_path, 0, nm);
        tcase_add_test(tc, test_cgroups_path_update_unlimited);
        suite_add_tcase(s, tc);

        tc = tcase_create("limits");
        tcase_set_timeout(tc, 60);
        tcase_add_loop_test(tc, test_memory_limit, 0, nm);
        tcase_add_loop_test(tc, test_pids_limit, 0, nm);
        tcase_add_loop_test(tc, test_cpu_limit, 0, nm);
        tcase_add_loop_test(tc, test_v2_refuses_missing_controller, 0, (int)ELEMENTSOF(unavailable_cases));
        suite_add_tcase(s, tc);

        tc = tcase_create("gc");
        tcase_set_timeout(tc, 60);
        tcase_add_loop_test(tc, test_leftover_gc, 0, nm);
        tcase_add_test(tc, test_remove_dir_refuses);
        suite_add_tcase(s, tc);

        tc = tcase_create("validation");
        tcase_set_timeout(tc, 60);
        tcase_add_loop_test(tc, test_bad_ids, 0, (int)ELEMENTSOF(bad_ids));
        tcase_add_test(tc, test_bad_limits);
        tcase_add_test(tc, test_auto);
        suite_add_tcase(s, tc);

        return s;
}

/* Removes whatever group of this run a failed test left behind. */
static int sweep_one(const char *dir, const char *id, void *userdata)
{
        if (!startswith(id, run_prefix))
                return 0;
        int r = cgroup_remove_dir(dir);
        fprintf(stderr, "test-cgroup-cgroup: removed a leftover group %s: %s\n", dir, r < 0 ? strerror(-r) : "ok");
        ++*(int *)userdata;
        return 0;
}

int main(void)
{
        if (geteuid() != 0) {
                fprintf(stderr, "test-cgroup-cgroup: skipped: creating control groups needs root\n");
                return 77;
        }
        snprintf(run_prefix, sizeof(run_prefix), "c0de%x-", (unsigned)getpid());

        for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                _cleanup_free_ char *id = new_id();
                struct cgroup *cg = NULL;
                char *err = NULL;
                int r = cgroup_create(modes[i], id, &no_limits, &cg, &err);
                if (r == 0)
                        have_mode[modes[i]] = cgroup_destroy(cg) == 0;
                else
                        fprintf(stderr, "test-cgroup-cgroup: no cgroup %s: %s\n", mode_name(modes[i]), err ?: "");
                free(err);
        }
        if (!have_mode[CG_V1] && !have_mode[CG_V2]) {
                fprintf(stderr, "test-cgroup-cgroup: skipped: neither cgroup backend is usable here\n");
                return 77;
        }

        SRunner *sr = srunner_create(cgroup_suite());
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);

        int leftovers = 0;
        (void)cgroup_foreach_leftover(sweep_one, &leftovers);
        if (leftovers > 0) {
                fprintf(stderr, "test-cgroup-cgroup: %d group(s) were left behind\n", leftovers);
                failed++;
        }
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
