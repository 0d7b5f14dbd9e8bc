#include "config.h"

/* Unit tests for the pure parts of path resolution (fs/resolve.c): the id
 * translation between the sentry's user namespace and the child's, and the
 * policy's hidden rules on a resolved view path (longest prefix wins, whole
 * components only). The kernel-facing parts are covered side by side with
 * native runs in tests/integration/fs-semantics.sh. */

#include <check.h>

#include "common/util.h"
#include "fs/fs.h"

/* a root-started sandbox: inside 0..65535 = host 2^31.. (gids from 3 * 2^30) */
#define BASE  2147483648u
#define GBASE 3221225472u
static const struct fs_ids range = {0, BASE, 0, GBASE, 65536};
/* an unprivileged run keeping the caller's identity: 1000 = 1000 */
static const struct fs_ids single = {1000, 1000, 1000, 1000, 1};

static const struct {
        uint32_t host, want;
} to_child[] = {
        {BASE, 0},             /* the sandbox's root */
        {BASE + 1000, 1000},   /* one of its users */
        {BASE + 65535, 65535}, /* the last id of the range */
        {BASE + 65536, 65534}, /* just past it: unmapped, the overflow id */
        {BASE - 1, 65534},     /* just below it */
        {0, 65534},            /* the host's root */
        {65534, 65534},        /* the host's nobody is not the sandbox's */
        {(uint32_t)-1, 65534}, /* not an id */
};

START_TEST(test_id_to_child)
{
        ck_assert_uint_eq(fs_id_to_child(&range, false, to_child[_i].host), to_child[_i].want);
}
END_TEST

START_TEST(test_id_to_child_gid_half)
{
        ck_assert_uint_eq(fs_id_to_child(&range, true, GBASE + 7), 7);
        ck_assert_uint_eq(fs_id_to_child(&range, true, BASE + 7), 65534); /* a uid base is no gid */
}
END_TEST

START_TEST(test_id_to_child_single)
{
        /* an unprivileged run: the caller's own id, nothing else */
        ck_assert_uint_eq(fs_id_to_child(&single, false, 1000), 1000);
        ck_assert_uint_eq(fs_id_to_child(&single, false, 1001), 65534);
        ck_assert_uint_eq(fs_id_to_child(&single, false, 0), 65534);
}
END_TEST

static const struct {
        uint32_t child;
        int ret;
        uint32_t want;
} from_child[] = {
        {0, 0, BASE},                    /* the child's root is the range's first id */
        {4242, 0, BASE + 4242},          /* any id of the range */
        {65535, 0, BASE + 65535},        /* its last */
        {(uint32_t)-1, 0, (uint32_t)-1}, /* -1: leave as is */
        {65536, -EINVAL, 0},             /* past the range: EINVAL, as the kernel says */
        {BASE, -EINVAL, 0},              /* a host id is not a child id */
        {(uint32_t)-2, -EINVAL, 0},      /* nor anything near -1 */
};

START_TEST(test_id_from_child)
{
        uint32_t got = 12345;
        int r = fs_id_from_child(&range, false, from_child[_i].child, &got);
        ck_assert_int_eq(r, from_child[_i].ret);
        if (r == 0)
                ck_assert_uint_eq(got, from_child[_i].want);
        else
                ck_assert_uint_eq(got, 12345); /* ret_* untouched on failure */
}
END_TEST

START_TEST(test_id_from_child_single)
{
        uint32_t got = 0;
        ck_assert_int_eq(fs_id_from_child(&single, false, 1000, &got), 0);
        ck_assert_uint_eq(got, 1000);
        ck_assert_int_eq(fs_id_from_child(&single, false, 0, &got), -EINVAL);
        ck_assert_int_eq(fs_id_from_child(&single, true, 999, &got), -EINVAL);
}
END_TEST

static const struct fs_rule rules[] = {
        {"/etc/ssl/private", FS_HIDDEN, -1},      {"/srv/job", FS_READ_WRITE, -1},
        {"/srv/job/secrets/", FS_HIDDEN, -1}, /* a trailing slash is the same rule */
        {"/srv/job/secrets/public", FS_READ, -1}, {"/opt", FS_READ, 1},
};

static const struct {
        const char *path;
        bool hidden;
} hide_cases[] = {
        {"/etc/ssl/private", true},
        {"/etc/ssl/private/key.pem", true},
        {"/etc/ssl/private/a/b/c", true},
        {"/etc/ssl/privateer", false}, /* whole components only */
        {"/etc/ssl/priv", false},
        {"/etc/ssl", false},
        {"/etc", false},
        {"/", false},
        {"/srv/job", false},
        {"/srv/job/out", false},
        {"/srv/job/secrets", true},
        {"/srv/job/secrets/x", true},
        {"/srv/job/secrets/public", false}, /* the longer rule wins */
        {"/srv/job/secrets/public/y", false},
        {"/srv/job/secrets/publicity", true},
        {"/opt/tools", false},
        {"/proc/self", false},
};

START_TEST(test_rules_hide)
{
        ck_assert_msg(fs_rules_hide(rules, ELEMENTSOF(rules), hide_cases[_i].path) == hide_cases[_i].hidden,
                      "%s: expected %s", hide_cases[_i].path, hide_cases[_i].hidden ? "hidden" : "visible");
}
END_TEST

START_TEST(test_rules_hide_root_rule)
{
        const struct fs_rule all[] = {{"/", FS_HIDDEN, -1}, {"/tmp", FS_READ_WRITE, -1}};
        ck_assert(fs_rules_hide(all, 2, "/"));
        ck_assert(fs_rules_hide(all, 2, "/etc/passwd"));
        ck_assert(!fs_rules_hide(all, 2, "/tmp"));
        ck_assert(!fs_rules_hide(all, 2, "/tmp/x"));
        ck_assert(fs_rules_hide(all, 2, "/tmpfoo"));
}
END_TEST

/* "ask" rules: the deciding (longest) rule must ask and grant what is asked
 * about (read-write for a write, exec 1 for an exec) */
static const struct fs_rule ask_rules[] = {
        {"/job/out", FS_READ_WRITE, -1, true}, {"/job/out/free", FS_READ_WRITE, -1, false},
        {"/job/bin", FS_READ, 1, true},        {"/job/both", FS_READ_WRITE, 1, true},
        {"/job/ro-ask", FS_READ, -1, true},    {"/job", FS_READ_WRITE, -1, false},
};

static const struct {
        const char *capability, *path;
        bool ask;
} ask_cases[] = {
        {"write", "/job/out", true},
        {"write", "/job/out/a", true},
        {"write", "/job/out/a/b", true},
        {"write", "/job/outside", false},  /* whole components only */
        {"write", "/job/out/free", false}, /* the longer rule wins */
        {"write", "/job/out/free/x", false},
        {"write", "/job/out/freedom", true},
        {"write", "/job/bin/tool", false}, /* an exec ask rule does not ask for writes */
        {"exec", "/job/bin/tool", true},
        {"exec", "/job/out/tool", false}, /* a write ask rule does not ask for execs */
        {"write", "/job/both/x", true},
        {"exec", "/job/both/x", true},
        {"write", "/job/ro-ask/x", false}, /* grants neither: asks for nothing */
        {"exec", "/job/ro-ask/x", false},
        {"write", "/job/x", false},
        {"write", "/", false},
        {"egress", "/job/out/a", false}, /* not a file capability */
};

START_TEST(test_rules_ask)
{
        ck_assert_msg(fs_rules_ask(ask_rules, ELEMENTSOF(ask_rules), ask_cases[_i].capability, ask_cases[_i].path) ==
                              ask_cases[_i].ask,
                      "%s %s: expected %s", ask_cases[_i].capability, ask_cases[_i].path,
                      ask_cases[_i].ask ? "ask" : "no ask");
}
END_TEST

START_TEST(test_rules_none)
{
        ck_assert(!fs_rules_hide(NULL, 0, "/etc/ssl/private"));
        ck_assert(!fs_rules_have_hidden(NULL, 0));
        ck_assert(fs_rules_have_hidden(rules, ELEMENTSOF(rules)));
        ck_assert(!fs_rules_have_hidden(rules + 3, 2));
}
END_TEST

static Suite *resolve_suite(void)
{
        Suite *s = suite_create("fs-resolve");
        TCase *tc = tcase_create("ids");
        tcase_add_loop_test(tc, test_id_to_child, 0, (int)ELEMENTSOF(to_child));
        tcase_add_test(tc, test_id_to_child_gid_half);
        tcase_add_test(tc, test_id_to_child_single);
        tcase_add_loop_test(tc, test_id_from_child, 0, (int)ELEMENTSOF(from_child));
        tcase_add_test(tc, test_id_from_child_single);
        suite_add_tcase(s, tc);
        tc = tcase_create("rules");
        tcase_add_loop_test(tc, test_rules_hide, 0, (int)ELEMENTSOF(hide_cases));
        tcase_add_test(tc, test_rules_hide_root_rule);
        tcase_add_test(tc, test_rules_none);
        tcase_add_loop_test(tc, test_rules_ask, 0, (int)ELEMENTSOF(ask_cases));
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        SRunner *sr = srunner_create(resolve_suite());
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
