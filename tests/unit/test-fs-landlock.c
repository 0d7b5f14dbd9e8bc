#include "config.h"

/* Unit tests for the Landlock floor (fs/landlock.c), applied in a forked
 * child on the host's own tree (the ruleset names absolute paths: here they
 * are the host's rather than a view's): a read-write bind target is
 * writable (create, rename across its directories, remove, truncate), a
 * directory outside every writable place is not (EACCES, even for root),
 * reading and executing work across the tree, and an exec:false rule
 * beneath a read-only parent refuses exec where its sibling runs; truncate
 * stays refused beneath a read waypoint whose mount is read-write.
 *
 * Skips (77) where the kernel has no usable Landlock. The test's
 * directories live in the working directory (the build tree), which is
 * none of the writable places (/tmp, /var/tmp, /run, /root, /dev/shm). */

#include <check.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "common/util.h"
#include "fs/fs.h"

static char base[PATH_MAX], rw[PATH_MAX + 8], ro[PATH_MAX + 8], bins[PATH_MAX + 8];

enum result {
        R_RW_CREATE,
        R_RW_MKDIR,
        R_RW_RENAME_ACROSS,
        R_RW_TRUNCATE,
        R_RW_REMOVE,
        R_RO_CREATE,
        R_RO_MKDIR,
        R_RO_READ,
        R_RO_TRUNCATE,
        R_EXEC_TRUE,
        R_EXEC_DENIED,
        R_EXEC_SIBLING,
        R_DEV_NULL,
        _R_MAX,
};

static int errno_of(int r)
{
        return r < 0 ? errno : 0;
}

static int create_file(const char *path)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0)
                return errno;
        close(fd);
        return 0;
}

static int run_prog(const char *path)
{
        pid_t pid = fork();
        if (pid == 0) {
                execl(path, path, (char *)NULL);
                _exit(errno == EACCES ? 100 : 101);
        }
        int status;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status))
                return -1;
        return WEXITSTATUS(status) == 100 ? EACCES : WEXITSTATUS(status);
}

static void apply_and_probe(int res[_R_MAX], int *ret_abi, char *why)
{
        int p[2];
        ck_assert_int_eq(pipe(p), 0);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                close(p[0]);
                int out[_R_MAX + 1];
                char err[1024] = "";
                struct fs_bind binds[] = {{"unused", rw, false}, {"unused", ro, true}};
                struct fs_rule rules[] = {{bins, FS_READ, 1}, {NULL, FS_READ, 0}};
                char denied[PATH_MAX + 16];
                snprintf(denied, sizeof(denied), "%s/no", bins);
                rules[1].path = denied;
                struct fs_view_spec spec = {.binds = binds, .n_binds = 2, .rules = rules + 1, .n_rules = 1};
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        _exit(2);
                out[_R_MAX] = fs_landlock_apply(&spec, err, sizeof(err));
                if (out[_R_MAX] <= 0) {
                        (void)!write(p[1], out, sizeof(out));
                        (void)!write(p[1], err, sizeof(err));
                        _exit(0);
                }
                char a[PATH_MAX + 32], b[PATH_MAX + 32];
                snprintf(a, sizeof(a), "%s/f", rw);
                out[R_RW_CREATE] = create_file(a);
                snprintf(b, sizeof(b), "%s/d", rw);
                out[R_RW_MKDIR] = errno_of(mkdir(b, 0755));
                snprintf(b, sizeof(b), "%s/d/g", rw);
                out[R_RW_RENAME_ACROSS] = errno_of(rename(a, b));
                out[R_RW_TRUNCATE] = errno_of(truncate(b, 1));
                out[R_RW_REMOVE] = errno_of(unlink(b));
                snprintf(a, sizeof(a), "%s/new", ro);
                out[R_RO_CREATE] = create_file(a);
                snprintf(a, sizeof(a), "%s/dir", ro);
                out[R_RO_MKDIR] = errno_of(mkdir(a, 0755));
                snprintf(a, sizeof(a), "%s/existing", ro);
                int fd = open(a, O_RDONLY | O_CLOEXEC);
                out[R_RO_READ] = fd < 0 ? errno : 0;
                if (fd >= 0)
                        close(fd);
                /* the read-only bind's target is a read waypoint, but its
                 * mount here is read-write: truncate is not granted with it */
                out[R_RO_TRUNCATE] = errno_of(truncate(a, 0));
                out[R_EXEC_TRUE] = run_prog("/bin/true");
                snprintf(a, sizeof(a), "%s/no/true", bins);
                out[R_EXEC_DENIED] = run_prog(a);
                snprintf(a, sizeof(a), "%s/yes/true", bins);
                out[R_EXEC_SIBLING] = run_prog(a);
                fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
                out[R_DEV_NULL] = fd < 0 ? errno : 0;
                (void)!write(p[1], out, sizeof(out));
                (void)!write(p[1], err, sizeof(err));
                _exit(0);
        }
        close(p[1]);
        int out[_R_MAX + 1];
        ck_assert_int_eq(read(p[0], out, sizeof(out)), (ssize_t)sizeof(out));
        ck_assert_int_ge(read(p[0], why, 1024), 0);
        close(p[0]);
        int status;
        waitpid(pid, &status, 0);
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        memcpy(res, out, sizeof(int) * _R_MAX);
        *ret_abi = out[_R_MAX];
}

START_TEST(ruleset_matches_the_spec)
{
        int res[_R_MAX], abi;
        char why[1024] = "";
        apply_and_probe(res, &abi, why);
        ck_assert_msg(abi > 0, "fs_landlock_apply: %d: %s", abi, why);
        ck_assert_int_eq(res[R_RW_CREATE], 0);
        ck_assert_int_eq(res[R_RW_MKDIR], 0);
        ck_assert_int_eq(res[R_RW_RENAME_ACROSS], 0);
        ck_assert_int_eq(res[R_RW_TRUNCATE], 0);
        ck_assert_int_eq(res[R_RW_REMOVE], 0);
        ck_assert_int_eq(res[R_RO_CREATE], EACCES);
        ck_assert_int_eq(res[R_RO_MKDIR], EACCES);
        ck_assert_int_eq(res[R_RO_READ], 0);
        ck_assert_int_eq(res[R_RO_TRUNCATE], EACCES);
        ck_assert_int_eq(res[R_EXEC_TRUE], 0);
        ck_assert_int_eq(res[R_EXEC_DENIED], EACCES);
        ck_assert_int_eq(res[R_EXEC_SIBLING], 0);
        ck_assert_int_eq(res[R_DEV_NULL], 0);
}
END_TEST

static int copy_true(const char *dir)
{
        char cmd[3 * PATH_MAX];
        snprintf(cmd, sizeof(cmd), "mkdir -p '%s' && cp /bin/true '%s/true'", dir, dir);
        return system(cmd);
}

/* Write opens may run natively only where Landlock gives no write right on
 * /proc (fs/open.c, open_native_write): any writable place that is /proc,
 * holds it or lies beneath it turns that off. */
START_TEST(proc_unwritable_follows_the_writable_places)
{
        struct fs_view_spec spec = {0};
        ck_assert(fs_landlock_proc_unwritable(&spec));
        struct fs_bind ro_bind = {.source = "/x", .target = "/proc/sys", .read_only = true};
        spec.binds = &ro_bind;
        spec.n_binds = 1;
        ck_assert(fs_landlock_proc_unwritable(&spec));
        struct fs_bind rw_bind = {.source = "/x", .target = "/proc/sys/net", .read_only = false};
        spec.binds = &rw_bind;
        ck_assert(!fs_landlock_proc_unwritable(&spec));
        struct fs_bind rw_proc2 = {.source = "/x", .target = "/proc2", .read_only = false};
        spec.binds = &rw_proc2;
        ck_assert(fs_landlock_proc_unwritable(&spec)); /* a sibling named alike */
        spec.n_binds = 0;
        struct fs_rule root_rw = {.path = "/", .access = FS_READ_WRITE, .exec = -1};
        spec.rules = &root_rw;
        spec.n_rules = 1;
        ck_assert(!fs_landlock_proc_unwritable(&spec)); /* "/" holds /proc */
        struct fs_rule proc_ro = {.path = "/proc", .access = FS_READ, .exec = -1};
        spec.rules = &proc_ro;
        ck_assert(fs_landlock_proc_unwritable(&spec));
        spec.n_rules = 0;
        spec.home = "/proc/home";
        ck_assert(!fs_landlock_proc_unwritable(&spec));
}
END_TEST

int main(void)
{
        int abi = fs_landlock_abi();
        if (abi < 2) {
                printf("skip: no usable Landlock (%d)\n", abi);
                return 77;
        }
        if (!getcwd(base, sizeof(base) - 32))
                return 1;
        /* the ruleset grants writes under the view's writable places: a
         * build tree below one of them (a clone in /tmp) stages elsewhere */
        static const char *const writable[] = {"/tmp", "/var/tmp", "/run", "/root", "/dev/shm"};
        for (size_t i = 0; i < sizeof(writable) / sizeof(writable[0]); i++) {
                size_t l = strlen(writable[i]);
                if (strncmp(base, writable[i], l) == 0 && (base[l] == '/' || base[l] == '\0')) {
                        snprintf(base, sizeof(base) - 32, "/var/lib");
                        if (access(base, W_OK) < 0) {
                                printf("skip: the build tree is under %s and /var/lib is not writable\n", writable[i]);
                                return 77;
                        }
                        break;
                }
        }
        size_t n = strlen(base);
        snprintf(base + n, sizeof(base) - n, "/ll-unit-%d", (int)getpid());
        snprintf(rw, sizeof(rw), "%s/rw", base);
        snprintf(ro, sizeof(ro), "%s/ro", base);
        snprintf(bins, sizeof(bins), "%s/bins", base);
        char path[PATH_MAX + 32];
        snprintf(path, sizeof(path), "%s/no", bins);
        int r = mkdir(base, 0755) | mkdir(rw, 0755) | mkdir(ro, 0755) | copy_true(path);
        snprintf(path, sizeof(path), "%s/yes", bins);
        r |= copy_true(path);
        snprintf(path, sizeof(path), "%s/existing", ro);
        r |= create_file(path);
        if (r != 0) {
                printf("FAIL: staging %s\n", base);
                return 1;
        }

        Suite *s = suite_create("fs-landlock");
        TCase *tc = tcase_create("landlock");
        tcase_add_test(tc, ruleset_matches_the_spec);
        tcase_add_test(tc, proc_unwritable_follows_the_writable_places);
        suite_add_tcase(s, tc);
        SRunner *sr = srunner_create(s);
        srunner_set_fork_status(sr, CK_NOFORK);
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);

        char cmd[PATH_MAX + 16];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
        if (system(cmd) != 0)
                printf("warning: could not remove %s\n", base);
        return failed ? 1 : 0;
}
