#include "config.h"

/* Unit tests for common/file.c: a whole small file read back, and which
 * directories hold runtime state (not synced to the disk): a tmpfs, a place
 * beneath /run or $XDG_RUNTIME_DIR whatever backs it, and not the build
 * tree. */

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/file.h"
#include "common/util.h"

static bool on_tmpfs(const char *path)
{
        struct statfs sf;
        return statfs(path, &sf) == 0 && (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC);
}

static bool runtime(const char *path)
{
        int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
        bool r = dir_is_runtime_state(fd);
        close(fd);
        return r;
}

START_TEST(reads_a_whole_file)
{
        char tmpl[] = "/tmp/test-common-file-XXXXXX";
        int fd = mkstemp(tmpl);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, "hello\n", 6), 6);
        close(fd);
        char *text = NULL;
        ck_assert_int_eq(read_file_text(tmpl, &text), 0);
        ck_assert_str_eq(text, "hello\n");
        free(text);
        ck_assert_int_eq(read_file_text("/nonexistent/cordon", &text), -ENOENT);
        unlink(tmpl);
}
END_TEST

START_TEST(runtime_state_places)
{
        /* the build tree: synced, unless it is itself on a tmpfs or in /run */
        char cwd[4096];
        ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
        bool cwd_runtime = on_tmpfs(cwd) || strncmp(cwd, "/run/", 5) == 0;
        ck_assert_int_eq(runtime("."), cwd_runtime);
        /* /run, whatever backs it, and a directory beneath it */
        if (access("/run", F_OK) == 0)
                ck_assert(runtime("/run"));
        char dir[] = "/run/test-common-file-XXXXXX";
        if (mkdtemp(dir)) {
                ck_assert(runtime(dir));
                rmdir(dir);
        }
        /* "/" is not beneath /run (a prefix test would say "/run" holds it) */
        ck_assert(!runtime("/") || on_tmpfs("/"));
        /* $XDG_RUNTIME_DIR names one more */
        setenv("XDG_RUNTIME_DIR", cwd, 1);
        ck_assert(runtime("."));
        unsetenv("XDG_RUNTIME_DIR");
        /* a tmpfs anywhere */
        if (on_tmpfs("/dev/shm"))
                ck_assert(runtime("/dev/shm"));
}
END_TEST

int main(void)
{
        Suite *s = suite_create("common-file");
        TCase *tc = tcase_create("file");
        tcase_add_test(tc, reads_a_whole_file);
        tcase_add_test(tc, runtime_state_places);
        suite_add_tcase(s, tc);
        SRunner *sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}
