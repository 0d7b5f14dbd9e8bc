#include "config.h"

/* Unit tests for the pure parts of path resolution (fs/resolve.c): the id
 * translation between the sentry's user namespace and the child's, and the
 * policy's hidden rules on a resolved view path (longest prefix wins, whole
 * components only). The kernel-facing parts are covered side by side with
 * native runs in tests/integration/fs-semantics.sh. */

#include <check.h>

#include "common/util.h"
#include "fs/fs.h"

#define ROOT_ID 65534u /* cordon's host id for the child's 0 when run as root */

static const struct {
        uint32_t host, want;
} to_child[] = {
        {ROOT_ID, 0},          /* the child's own files */
        {0, 65534},            /* the host's root: unmapped, shown as the overflow id */
        {1000, 65534},         /* another host user */
        {ROOT_ID - 1, 65534},  /* a neighbour of the mapped id */
        {ROOT_ID + 1, 65534},  /* and the other one */
        {(uint32_t)-1, 65534}, /* not an id */
};

START_TEST(test_id_to_child)
{
        ck_assert_uint_eq(fs_id_to_child(to_child[_i].host, ROOT_ID), to_child[_i].want);
}
END_TEST

START_TEST(test_id_to_child_other_root)
{
        /* an unprivileged run: the child's 0 is the invoking user */
        ck_assert_uint_eq(fs_id_to_child(1000, 1000), 0);
        ck_assert_uint_eq(fs_id_to_child(65534, 1000), 65534);
        ck_assert_uint_eq(fs_id_to_child(0, 1000), 65534);
}
END_TEST

static const struct {
        uint32_t child;
        int ret;
        uint32_t want;
} from_child[] = {
        {0, 0, ROOT_ID},                 /* the child's root is cordon's host id */
        {(uint32_t)-1, 0, (uint32_t)-1}, /* -1: leave as is */
        {1, -EINVAL, 0},                 /* unmapped: EINVAL, as the kernel says */
        {65534, -EINVAL, 0},             /* the overflow id is not mapped either */
        {ROOT_ID, -EINVAL, 0},           /* the host id itself is not a child id */
        {(uint32_t)-2, -EINVAL, 0},      /* nor anything near -1 */
};

START_TEST(test_id_from_child)
{
        uint32_t got = 12345;
        int r = fs_id_from_child(from_child[_i].child, ROOT_ID, &got);
        ck_assert_int_eq(r, from_child[_i].ret);
        if (r == 0)
                ck_assert_uint_eq(got, from_child[_i].want);
        else
                ck_assert_uint_eq(got, 12345); /* ret_* untouched on failure */
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
        tcase_add_test(tc, test_id_to_child_other_root);
        tcase_add_loop_test(tc, test_id_from_child, 0, (int)ELEMENTSOF(from_child));
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
