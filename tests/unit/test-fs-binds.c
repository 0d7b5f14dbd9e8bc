/* Unit tests for fs/binds.c: which modes, nodes and xattrs may be made
 * outside the sandbox's own filesystems (a bind), and which anywhere: rows
 * of (object type, mode, private?) and the expected refusal. */
#include "config.h"

#include <check.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "common/util.h"
#include "fs/fs-internal.h"

struct setid_case {
        mode_t type, mode;
        bool private, refused;
};

static const struct setid_case setid_cases[] = {
        /* in a bind: setuid never, setgid only on a directory */
        {S_IFREG, 04755, false, true},
        {S_IFREG, 02755, false, true},
        {S_IFREG, 06755, false, true},
        {S_IFREG, 04000, false, true},
        {S_IFDIR, 04755, false, true},
        {S_IFDIR, 02775, false, false},
        {S_IFDIR, 03777, false, false},
        {S_IFIFO, 02644, false, true},
        {S_IFLNK, 04777, false, true},
        {S_IFREG, 0755, false, false},
        {S_IFREG, 01777, false, false},
        {S_IFREG, 0, false, false},
        /* the private layer: as natively */
        {S_IFREG, 04755, true, false},
        {S_IFREG, 06755, true, false},
        {S_IFDIR, 04755, true, false},
};

START_TEST(test_setid)
{
        const struct setid_case *c = &setid_cases[_i];
        ck_assert_msg(fs_setid_refused(c->type, c->mode, c->private) == c->refused,
                      "type 0%o mode 0%o private %d: expected refused %d", (unsigned)c->type, (unsigned)c->mode,
                      c->private, c->refused);
}
END_TEST

START_TEST(test_mknod)
{
        /* devices and whiteouts: only on the sandbox's own filesystems */
        ck_assert(fs_mknod_refused(S_IFCHR | 0666, false));
        ck_assert(fs_mknod_refused(S_IFBLK | 0660, false));
        ck_assert(!fs_mknod_refused(S_IFCHR | 0666, true));
        /* setid nodes: as chmod; a mode without a type is a regular file */
        ck_assert(fs_mknod_refused(S_IFREG | 04755, false));
        ck_assert(fs_mknod_refused(04755, false));
        ck_assert(fs_mknod_refused(S_IFIFO | 02644, false));
        ck_assert(!fs_mknod_refused(S_IFREG | 04755, true));
        /* ordinary nodes anywhere */
        ck_assert(!fs_mknod_refused(S_IFREG | 0644, false));
        ck_assert(!fs_mknod_refused(S_IFIFO | 0600, false));
        ck_assert(!fs_mknod_refused(S_IFSOCK | 0755, false));
        ck_assert(!fs_mknod_refused(0644, false));
}
END_TEST

START_TEST(test_xattr)
{
        ck_assert(fs_xattr_guarded("security.capability"));
        ck_assert(!fs_xattr_guarded("security.capability2"));
        ck_assert(!fs_xattr_guarded("security.selinux"));
        ck_assert(!fs_xattr_guarded("user.capability"));
        ck_assert(!fs_xattr_guarded("system.posix_acl_access"));
        ck_assert(!fs_xattr_guarded(""));
}
END_TEST

START_TEST(test_private_dev)
{
        struct fs_context ctx = {.private_devs = {makedev(0, 40), makedev(0, 41)}, .n_private_devs = 2};
        ck_assert(fs_private_dev(&ctx, makedev(0, 40)));
        ck_assert(fs_private_dev(&ctx, makedev(0, 41)));
        ck_assert(!fs_private_dev(&ctx, makedev(8, 1)));
        /* not filled in: nothing is private (fails closed) */
        struct fs_context none = {0};
        ck_assert(!fs_private_dev(&none, makedev(0, 40)));
}
END_TEST

static Suite *binds_suite(void)
{
        Suite *s = suite_create("fs-binds");
        TCase *tc = tcase_create("guard");
        tcase_add_loop_test(tc, test_setid, 0, (int)ELEMENTSOF(setid_cases));
        tcase_add_test(tc, test_mknod);
        tcase_add_test(tc, test_xattr);
        tcase_add_test(tc, test_private_dev);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(binds_suite());
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
