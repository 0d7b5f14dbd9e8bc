#include "config.h"

/* Unit tests for what sentry/cgroup/ says about resource values before any
 * group exists (sentry/cgroup/resources.c): CPU and memory-node lists, the
 * check of a cpuset against the CPUs and nodes the host has online, and the
 * CPU bandwidth a quota and period come to. No root, no group. */

#include <check.h>
#include <unistd.h>

#include "common/util.h"
#include "sentry/cgroup/cgroup.h"

static const struct {
        const char *list;
        int r;
        uint64_t word0, word1;
} lists[] = {
        {"0", 0, 0x1, 0},
        {"0-3", 0, 0xf, 0},
        {"0-1,3", 0, 0xb, 0},
        {"5,1", 0, 0x22, 0},
        {"63-65", 0, UINT64_C(1) << 63, 0x3},
        {"2-2", 0, 0x4, 0},
        {"0\n", 0, 0x1, 0}, /* as /sys writes it */
        {"", -EINVAL, 0, 0},
        {"-1", -EINVAL, 0, 0},
        {"0-", -EINVAL, 0, 0},
        {"3-1", -EINVAL, 0, 0},
        {"0,,1", -EINVAL, 0, 0},
        {"0,", -EINVAL, 0, 0},
        {"0 1", -EINVAL, 0, 0},
        {"0-7:2", -EINVAL, 0, 0}, /* the kernel's strides: not taken */
        {"all", -EINVAL, 0, 0},
        {"128", -ERANGE, 0, 0}, /* past two words */
        {"99999999999", -ERANGE, 0, 0},
};

START_TEST(test_list_parse)
{
        uint64_t mask[2] = {~UINT64_C(0), ~UINT64_C(0)};
        int r = cgroup_list_parse(lists[_i].list, mask, 2);
        ck_assert_msg(r == lists[_i].r, "\"%s\": %d, expected %d", lists[_i].list, r, lists[_i].r);
        if (r == 0) {
                ck_assert_uint_eq(mask[0], lists[_i].word0);
                ck_assert_uint_eq(mask[1], lists[_i].word1);
        }
}
END_TEST

START_TEST(test_cpu_millis)
{
        ck_assert_int_eq(cgroup_cpu_millis(50000, 100000), 500);
        ck_assert_int_eq(cgroup_cpu_millis(200000, 100000), 2000);
        ck_assert_int_eq(cgroup_cpu_millis(50000, 500000), 100);
        ck_assert_int_eq(cgroup_cpu_millis(150000, 100000), 1500);
        ck_assert_int_eq(cgroup_cpu_millis(1000, 1000000), 1); /* a thousandth */
        ck_assert_int_eq(cgroup_cpu_millis(1, 1000000), 1);    /* less is still a limit */
        ck_assert_int_eq(cgroup_cpu_millis(1000, 0), 0);
}
END_TEST

START_TEST(test_cpuset_check)
{
        _cleanup_free_ char *err = NULL;
        /* CPU 0 and node 0 are always there */
        ck_assert_int_eq(cgroup_cpuset_check("0", "0", &err), 0);
        ck_assert_int_eq(cgroup_cpuset_check(NULL, NULL, &err), 0);
        ck_assert_ptr_null(err);

        long n = sysconf(_SC_NPROCESSORS_CONF);
        ck_assert_int_eq(cgroup_cpuset_check("0-4095", NULL, &err), -EINVAL);
        ck_assert_ptr_nonnull(err);
        ck_assert_msg(strstr(err, "linux.resources.cpu.cpus \"0-4095\": CPUs ") && strstr(err, "-4095 are not online"),
                      "%s", err);
        free(TAKE_PTR(err));
        char one[32];
        snprintf(one, sizeof(one), "%ld", n + 7 < 4095 ? n + 7 : 4095);
        ck_assert_int_eq(cgroup_cpuset_check(one, NULL, &err), -EINVAL);
        ck_assert_msg(strstr(err, "CPU ") && strstr(err, " is not online on this host (online: "), "%s", err);
        free(TAKE_PTR(err));

        ck_assert_int_eq(cgroup_cpuset_check(NULL, "4000", &err), -EINVAL);
        ck_assert_msg(strstr(err, "linux.resources.cpu.mems \"4000\": memory node 4000 is not online"), "%s", err);
        free(TAKE_PTR(err));
        ck_assert_int_eq(cgroup_cpuset_check("x", NULL, &err), -EINVAL);
        ck_assert_msg(strstr(err, "linux.resources.cpu.cpus \"x\": expected a list"), "%s", err);
        free(TAKE_PTR(err));
        ck_assert_int_eq(cgroup_cpuset_check("0-5000", NULL, &err), -EINVAL);
        ck_assert_msg(strstr(err, "past what cordon handles"), "%s", err);
}
END_TEST

int main(void)
{
        Suite *s = suite_create("sentry-cgroup-resources");
        TCase *tc = tcase_create("resources");
        tcase_add_loop_test(tc, test_list_parse, 0, (int)ELEMENTSOF(lists));
        tcase_add_test(tc, test_cpu_millis);
        tcase_add_test(tc, test_cpuset_check);
        suite_add_tcase(s, tc);
        SRunner *sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? 1 : 0;
}
