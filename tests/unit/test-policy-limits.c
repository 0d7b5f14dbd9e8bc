/* Unit tests for the limits (sentry/policy/limits.c): the limit options and their word
 * "unlimited", the policy's "unlimited", and how a sandbox's limits resolve (flag and policy,
 * the stricter wins; the admission file's maxima; the built-in defaults for what nobody set)
 * with the source each value is said to come from. */
#include "config.h"

#include <check.h>
#include <stdio.h>

#include "common/util.h"
#include "sentry/policy/policy.h"

#define GIB (INT64_C(1) << 30)
#define MIB (INT64_C(1) << 20)

static struct policy *load(const char *json)
{
        struct policy *p = NULL;
        _cleanup_free_ char *err = NULL;
        int r = policy_load_buffer(json, strlen(json), "test.json", &p, &err);
        ck_assert_msg(r == 0, "%s: %s", json, err ? err : "?");
        return p;
}

/* flags, then the policy, then admission (NULL: none), then the defaults: as sentry_run does */
static void resolve(struct run_limits *l, const char *policy_json, const struct admission *a, int expect_r)
{
        _cleanup_(policy_freep) struct policy *p = policy_json ? load(policy_json) : policy_new_default();
        run_limits_merge_policy(l, p);
        if (a) {
                _cleanup_free_ char *err = NULL;
                int r = admission_apply(a, l, &err);
                ck_assert_msg(r == expect_r, "admission_apply: %d (%s)", r, err ? err : "");
                if (r < 0)
                        return;
        }
        run_limits_apply_defaults(l);
}

static struct admission no_admission(void)
{
        struct admission a = {.origin = "adm.json"};
        a.memory_bytes = a.cpu_millis = a.disk_bytes = a.max_processes = a.max_open_files = a.timeout_ms =
                a.max_sandboxes = POLICY_UNSET;
        return a;
}

START_TEST(test_defaults_when_nothing_is_set)
{
        struct run_limits l;
        run_limits_unset(&l);
        resolve(&l, NULL, NULL, 0);
        ck_assert_int_eq(l.memory_bytes, 2 * GIB);
        ck_assert_int_eq(l.src[LIMIT_MEMORY], LIMIT_SRC_DEFAULT);
        ck_assert_int_eq(l.max_processes, 1024);
        ck_assert_int_eq(l.src[LIMIT_PROCESSES], LIMIT_SRC_DEFAULT);
        /* no default of their own */
        ck_assert_int_eq(l.disk_bytes, POLICY_UNSET);
        ck_assert_int_eq(l.cpu_millis, POLICY_UNSET);
        ck_assert_int_eq(l.max_open_files, POLICY_UNSET);
        ck_assert_int_eq(l.timeout_ms, POLICY_UNSET);
        ck_assert_int_eq(l.src[LIMIT_DISK], LIMIT_SRC_NONE);
        char buf[256];
        ck_assert_str_eq(limit_describe(&l, LIMIT_MEMORY, buf, sizeof(buf)), "2 GiB (the built-in default)");
        ck_assert_str_eq(limit_describe(&l, LIMIT_PROCESSES, buf, sizeof(buf)), "1024 tasks (the built-in default)");
        ck_assert_str_eq(limit_describe(&l, LIMIT_CPU, buf, sizeof(buf)), "none");
        ck_assert_str_eq(limit_raise_hint(&l, LIMIT_MEMORY, buf, sizeof(buf)),
                         "raise it with --memory SIZE or --memory unlimited");
        ck_assert_str_eq(limit_raise_hint(&l, LIMIT_PROCESSES, buf, sizeof(buf)),
                         "raise it with --pids N or --pids unlimited");
}
END_TEST

START_TEST(test_flags_win_over_defaults)
{
        struct run_limits l;
        run_limits_unset(&l);
        ck_assert_int_eq(limits_option('M', "8G", &l), 0);
        ck_assert_int_eq(limits_option('m', "50000", &l), 0);
        resolve(&l, NULL, NULL, 0);
        ck_assert_int_eq(l.memory_bytes, 8 * GIB);
        ck_assert_int_eq(l.src[LIMIT_MEMORY], LIMIT_SRC_FLAG);
        ck_assert_int_eq(l.max_processes, 50000);
        ck_assert_int_eq(l.src[LIMIT_PROCESSES], LIMIT_SRC_FLAG);
        char buf[256];
        ck_assert_str_eq(limit_describe(&l, LIMIT_MEMORY, buf, sizeof(buf)), "8 GiB (from --memory)");
}
END_TEST

START_TEST(test_unlimited_flags)
{
        static const char opts[] = {'M', 'c', 'P', 'm', 'N', 'D', 'o'};
        for (size_t i = 0; i < ELEMENTSOF(opts); i++) {
                struct run_limits l;
                run_limits_unset(&l);
                ck_assert_int_eq(limits_option(opts[i], "64", &l), opts[i] == 'M' || opts[i] == 'D' ? -EINVAL : 0);
                ck_assert_int_eq(limits_option(opts[i], "unlimited", &l), 0);
                resolve(&l, NULL, NULL, 0);
                for (size_t k = 0; k < _LIMIT_KIND_MAX; k++)
                        if (l.src[k] == LIMIT_SRC_FLAG)
                                ck_assert_int_eq(l.value[k], POLICY_UNSET);
        }
        struct run_limits l;
        run_limits_unset(&l);
        ck_assert_int_eq(limits_option('M', "unlimited", &l), 0);
        ck_assert_int_eq(limits_option('P', "unlimited", &l), 0);
        resolve(&l, NULL, NULL, 0);
        ck_assert_int_eq(l.memory_bytes, POLICY_UNSET);
        ck_assert_int_eq(l.max_processes, POLICY_UNSET);
        ck_assert_int_eq(l.src[LIMIT_MEMORY], LIMIT_SRC_FLAG);
        char buf[256];
        ck_assert_str_eq(limit_describe(&l, LIMIT_MEMORY, buf, sizeof(buf)), "none (--memory unlimited)");
        ck_assert_str_eq(limit_describe(&l, LIMIT_PROCESSES, buf, sizeof(buf)), "none (--pids unlimited)");
}
END_TEST

START_TEST(test_bad_values)
{
        static const struct {
                char opt;
                const char *arg;
        } bad[] = {
                {'M', "lots"}, {'M', "1M"},  {'M', "unlimitedG"}, {'M', "UNLIMITED"}, {'M', ""},        {'c', "0"},
                {'c', "-1"},   {'P', "0"},   {'P', "1.5"},        {'m', "x"},         {'N', "-3"},      {'D', "512K"},
                {'o', "5x"},   {'o', "31d"}, {'P', "unlimited "}, {'N', "inf"},       {'m', "4194305"},
        };
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct run_limits l;
                run_limits_unset(&l);
                ck_assert_msg(limits_option(bad[i].opt, bad[i].arg, &l) == -EINVAL, "-%c %s", bad[i].opt, bad[i].arg);
                for (size_t k = 0; k < _LIMIT_KIND_MAX; k++) {
                        ck_assert_int_eq(l.value[k], POLICY_UNSET);
                        ck_assert_int_eq(l.src[k], LIMIT_SRC_NONE);
                }
        }
}
END_TEST

START_TEST(test_policy_unlimited)
{
        _cleanup_(policy_freep) struct policy *p =
                load("{\"limits\": {\"memoryBytes\": \"unlimited\", \"maxProcesses\": 64}}");
        ck_assert_int_eq(p->memory_bytes, POLICY_UNSET);
        ck_assert_uint_eq(p->unlimited, LIMIT_BIT(LIMIT_MEMORY));

        struct run_limits l;
        run_limits_unset(&l);
        resolve(&l, "{\"limits\": {\"memoryBytes\": \"unlimited\", \"maxProcesses\": 64}}", NULL, 0);
        ck_assert_int_eq(l.memory_bytes, POLICY_UNSET);
        ck_assert_int_eq(l.src[LIMIT_MEMORY], LIMIT_SRC_POLICY);
        ck_assert_int_eq(l.max_processes, 64);
        ck_assert_int_eq(l.src[LIMIT_PROCESSES], LIMIT_SRC_POLICY);
        char buf[256];
        ck_assert_str_eq(limit_describe(&l, LIMIT_MEMORY, buf, sizeof(buf)), "none (\"unlimited\" in the policy)");
        ck_assert_str_eq(limit_raise_hint(&l, LIMIT_PROCESSES, buf, sizeof(buf)),
                         "raise limits.maxProcesses in the policy");

        /* a flag's value is stricter than the policy's "unlimited" */
        run_limits_unset(&l);
        ck_assert_int_eq(limits_option('M', "1G", &l), 0);
        resolve(&l, "{\"limits\": {\"memoryBytes\": \"unlimited\"}}", NULL, 0);
        ck_assert_int_eq(l.memory_bytes, GIB);
        ck_assert_int_eq(l.src[LIMIT_MEMORY], LIMIT_SRC_FLAG);

        /* and the policy's value stricter than a flag's "unlimited" */
        run_limits_unset(&l);
        ck_assert_int_eq(limits_option('M', "unlimited", &l), 0);
        resolve(&l, "{\"limits\": {\"memoryBytes\": 67108864}}", NULL, 0);
        ck_assert_int_eq(l.memory_bytes, 64 * MIB);
        ck_assert_int_eq(l.src[LIMIT_MEMORY], LIMIT_SRC_POLICY);
        ck_assert_str_eq(limit_describe(&l, LIMIT_MEMORY, buf, sizeof(buf)), "64 MiB (from the policy)");

        /* every limit takes the word */
        _cleanup_(policy_freep) struct policy *all =
                load("{\"limits\": {\"cpuMillis\": \"unlimited\", \"memoryBytes\": \"unlimited\", \"diskBytes\": "
                     "\"unlimited\", \"maxProcesses\": \"unlimited\", \"maxOpenFiles\": \"unlimited\", "
                     "\"timeoutMs\": \"unlimited\"}}");
        ck_assert_uint_eq(all->unlimited, (1u << _LIMIT_KIND_MAX) - 1);
}
END_TEST

START_TEST(test_stricter_of_flag_and_policy)
{
        struct run_limits l;
        run_limits_unset(&l);
        ck_assert_int_eq(limits_option('P', "100", &l), 0);
        resolve(&l, "{\"limits\": {\"maxProcesses\": 50, \"memoryBytes\": 4294967296}}", NULL, 0);
        ck_assert_int_eq(l.max_processes, 50);
        ck_assert_int_eq(l.src[LIMIT_PROCESSES], LIMIT_SRC_POLICY);
        /* the policy's own value, larger than the default: the policy set it */
        ck_assert_int_eq(l.memory_bytes, 4 * GIB);
        ck_assert_int_eq(l.src[LIMIT_MEMORY], LIMIT_SRC_POLICY);

        /* a value a caller parsed itself (--ttl) counts as a flag */
        run_limits_unset(&l);
        l.timeout_ms = 5000;
        resolve(&l, NULL, NULL, 0);
        ck_assert_int_eq(l.src[LIMIT_TIMEOUT], LIMIT_SRC_FLAG);
}
END_TEST

START_TEST(test_admission)
{
        struct admission a = no_admission();
        a.memory_bytes = 128 * MIB;
        a.max_processes = 4096;
        struct run_limits l;

        /* nothing set: the host's maxima, not the defaults */
        run_limits_unset(&l);
        resolve(&l, NULL, &a, 0);
        ck_assert_int_eq(l.memory_bytes, 128 * MIB);
        ck_assert_int_eq(l.src[LIMIT_MEMORY], LIMIT_SRC_ADMISSION);
        ck_assert_int_eq(l.max_processes, 4096);
        ck_assert_int_eq(l.src[LIMIT_PROCESSES], LIMIT_SRC_ADMISSION);
        char buf[256];
        ck_assert_str_eq(limit_describe(&l, LIMIT_MEMORY, buf, sizeof(buf)),
                         "128 MiB (the host's maximum in adm.json)");
        ck_assert_str_eq(limit_raise_hint(&l, LIMIT_MEMORY, buf, sizeof(buf)),
                         "only the host's administrator can raise it");

        /* applied after the defaults, it still replaces them */
        run_limits_unset(&l);
        run_limits_apply_defaults(&l);
        _cleanup_free_ char *err = NULL;
        ck_assert_int_eq(admission_apply(&a, &l, &err), 0);
        ck_assert_int_eq(l.memory_bytes, 128 * MIB);

        /* an explicit "unlimited" is over any maximum */
        run_limits_unset(&l);
        ck_assert_int_eq(limits_option('M', "unlimited", &l), 0);
        resolve(&l, NULL, &a, -EDQUOT);
        run_limits_unset(&l);
        resolve(&l, "{\"limits\": {\"maxProcesses\": \"unlimited\"}}", &a, -EDQUOT);
        run_limits_unset(&l);
        ck_assert_int_eq(limits_option('M', "unlimited", &l), 0);
        err = NULL;
        ck_assert_int_eq(admission_apply(&a, &l, &err), -EDQUOT);
        ck_assert_str_eq(err, "quota: memoryBytes unlimited (--memory unlimited) exceeds the host's maximum "
                              "134217728 (adm.json)");
        free(TAKE_PTR(err));

        /* the limit the admission file leaves alone keeps its default */
        a = no_admission();
        a.memory_bytes = 8 * GIB;
        run_limits_unset(&l);
        resolve(&l, NULL, &a, 0);
        ck_assert_int_eq(l.memory_bytes, 8 * GIB);
        ck_assert_int_eq(l.max_processes, 1024);
        ck_assert_int_eq(l.src[LIMIT_PROCESSES], LIMIT_SRC_DEFAULT);
}
END_TEST

START_TEST(test_drop_default)
{
        struct run_limits l;
        run_limits_unset(&l);
        ck_assert_int_eq(limits_option('P', "77", &l), 0);
        resolve(&l, NULL, NULL, 0);
        run_limits_drop_default(&l, LIMIT_MEMORY);
        run_limits_drop_default(&l, LIMIT_PROCESSES); /* a flag's: kept */
        ck_assert_int_eq(l.memory_bytes, POLICY_UNSET);
        ck_assert_int_eq(l.src[LIMIT_MEMORY], LIMIT_SRC_DEFAULT);
        ck_assert_int_eq(l.max_processes, 77);
        char buf[256];
        ck_assert_str_eq(limit_describe(&l, LIMIT_MEMORY, buf, sizeof(buf)),
                         "none (the built-in default of 2 GiB cannot be applied on this host)");
}
END_TEST

START_TEST(test_format_values)
{
        char buf[64];
        ck_assert_str_eq(limit_format_value(LIMIT_MEMORY, 2 * GIB, buf, sizeof(buf)), "2 GiB");
        ck_assert_str_eq(limit_format_value(LIMIT_MEMORY, 1536 * MIB, buf, sizeof(buf)), "1536 MiB");
        ck_assert_str_eq(limit_format_value(LIMIT_MEMORY, 5000000, buf, sizeof(buf)), "5000000 bytes");
        ck_assert_str_eq(limit_format_value(LIMIT_DISK, 8 * MIB, buf, sizeof(buf)), "8 MiB");
        ck_assert_str_eq(limit_format_value(LIMIT_CPU, 1500, buf, sizeof(buf)), "1.5 CPUs");
        ck_assert_str_eq(limit_format_value(LIMIT_CPU, 1000, buf, sizeof(buf)), "1 CPU");
        ck_assert_str_eq(limit_format_value(LIMIT_PROCESSES, 1, buf, sizeof(buf)), "1 task");
        ck_assert_str_eq(limit_format_value(LIMIT_TIMEOUT, 90000, buf, sizeof(buf)), "90 s");
        ck_assert_str_eq(limit_format_value(LIMIT_TIMEOUT, 120000, buf, sizeof(buf)), "2 min");
        ck_assert_str_eq(limit_format_value(LIMIT_TIMEOUT, 1500, buf, sizeof(buf)), "1500 ms");
        ck_assert_str_eq(limit_format_value(LIMIT_OPEN_FILES, POLICY_UNSET, buf, sizeof(buf)), "none");
        ck_assert_str_eq(limit_key(LIMIT_PROCESSES), "maxProcesses");
        ck_assert_str_eq(limit_flag(LIMIT_PROCESSES), "--pids");
        ck_assert_str_eq(limit_flag_arg(LIMIT_MEMORY), "SIZE");
}
END_TEST

/* CPUs to millicpus, rounded to the nearest (half up), as llround did */
START_TEST(test_cpus_rounded)
{
        const struct {
                const char *in;
                int64_t ms;
        } rows[] = {
                {"1.5", 1500},  {"0.3", 300},      {"0.01", 10},     {"0.0125", 13},
                {"0.0124", 12}, {"1000", 1000000}, {"2.0004", 2000}, {"2.0006", 2001},
        };
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                int64_t v = -1;
                ck_assert_msg(parse_cpus(rows[i].in, &v) == 0, "%s", rows[i].in);
                ck_assert_msg(v == rows[i].ms, "%s: %lld", rows[i].in, (long long)v);
        }
        int64_t v;
        ck_assert_int_eq(parse_cpus("0.009", &v), -EINVAL);
        ck_assert_int_eq(parse_cpus("1000.001", &v), -EINVAL);
}
END_TEST

static Suite *limits_suite(void)
{
        Suite *s = suite_create("policy-limits");
        TCase *tc = tcase_create("options");
        tcase_add_test(tc, test_unlimited_flags);
        tcase_add_test(tc, test_bad_values);
        tcase_add_test(tc, test_format_values);
        tcase_add_test(tc, test_cpus_rounded);
        suite_add_tcase(s, tc);

        tc = tcase_create("resolution");
        tcase_add_test(tc, test_defaults_when_nothing_is_set);
        tcase_add_test(tc, test_flags_win_over_defaults);
        tcase_add_test(tc, test_policy_unlimited);
        tcase_add_test(tc, test_stricter_of_flag_and_policy);
        tcase_add_test(tc, test_admission);
        tcase_add_test(tc, test_drop_default);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        /* limits_option's messages are for people; the tests need only the return */
        if (!freopen("/dev/null", "w", stderr))
                return EXIT_FAILURE;
        SRunner *sr = srunner_create(limits_suite());
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
