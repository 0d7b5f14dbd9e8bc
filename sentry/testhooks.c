/* What the tests may switch: CORDON_TEST_STALL's pauses, the layers
 * --debug-unsafe switches off (CORDON_DEBUG_DISABLE) and the kernel
 * features CORDON_TEST_FORCE_FALLBACK forces absent. None of them changes a
 * decision the sentry takes for a sandbox that does not ask for it. */
#include "config.h"

#include "sentry/sentry-internal.h"

/* Test hook: CORDON_TEST_STALL=start|teardown makes the sentry pause at that
 * point (CORDON_TEST_STALL_SECONDS, default 30) so the fault-injection tests
 * can SIGKILL it there, and the layer tests can swap a template between its
 * check and its mount. It only delays; it changes no decision. */
void test_stall(const char *point)
{
        const char *s = getenv("CORDON_TEST_STALL");
        if (s && streq(s, point)) {
                const char *secs = getenv("CORDON_TEST_STALL_SECONDS");
                unsigned n = secs ? (unsigned)strtoul(secs, NULL, 10) : 30;
                fprintf(stderr, "cordon: stalled at %s (CORDON_TEST_STALL)\n", point);
                sleep(n > 0 && n <= 30 ? n : 30);
        }
}

int sentry_debug_parse(const char *list, unsigned *ret, const char **ret_bad)
{
        static const struct {
                const char *name;
                unsigned bit;
        } names[] = {
                {"net-emulation", DEBUG_OFF_NET_EMULATION}, {"fs-emulation", DEBUG_OFF_FS_EMULATION},
                {"ro-binds", DEBUG_OFF_RO_BINDS},           {"egress-floor", DEBUG_OFF_EGRESS_FLOOR},
                {"landlock", DEBUG_OFF_LANDLOCK},           {"noexec-rules", DEBUG_OFF_NOEXEC_RULES},
        };
        unsigned bits = 0;
        for (const char *p = list; p && *p;) {
                size_t len = strcspn(p, ",");
                bool found = false;
                for (size_t i = 0; i < ELEMENTSOF(names); i++)
                        if (len == strlen(names[i].name) && strncmp(p, names[i].name, len) == 0) {
                                bits |= names[i].bit;
                                found = true;
                        }
                if (!found && len > 0) {
                        if (ret_bad)
                                *ret_bad = p;
                        return -EINVAL;
                }
                p = p[len] ? p + len + 1 : NULL;
        }
        *ret = bits;
        return 0;
}

/* Test only: the filter rebuilt with the rows of the switched-off
 * emulation allowed natively. The run's own table is changed, so the
 * dispatch (which the engine builds from it) agrees with the filter. Network
 * emulation: the calls that name a destination. Fs emulation: every path
 * call the sentry performs (not exec, whose check is a layer of its own). */
int debug_rebuild_filter(struct sandbox_plan *plan, unsigned off)
{
        static const char *const net_rows[] = {"connect", "sendto", "sendmsg", "sendmmsg"};
        struct syscall_entry *table = plan->table;
        size_t n = plan->n_table;
        for (size_t i = 0; i < n; i++) {
                if (table[i].action != SC_EMULATE)
                        continue;
                for (size_t k = 0; (off & DEBUG_OFF_NET_EMULATION) && k < ELEMENTSOF(net_rows); k++)
                        if (streq(table[i].name, net_rows[k]))
                                table[i].action = SC_ALLOW;
                if ((off & DEBUG_OFF_FS_EMULATION) && table[i].ctx == CTX_FS && !streq(table[i].name, "execve") &&
                    !streq(table[i].name, "execveat"))
                        table[i].action = SC_ALLOW;
        }
        struct sock_fprog prog;
        const char *bad = NULL;
        int r = notify_filter_build(table, n, &prog, &bad);
        if (r < 0) {
                fprintf(stderr, "cordon: cannot build the debug seccomp filter (row %s): %s\n", bad ? bad : "?",
                        strerror(-r));
                return r;
        }
        free(plan->filter.filter);
        plan->filter = prog;
        /* the debug filter is the one installed, execs trapped or not as it says */
        free(plan->filter_native_exec.filter);
        plan->filter_native_exec = (struct sock_fprog){0};
        return 0;
}

/* What a run does without each kernel feature a test can force absent (the
 * same as on a kernel that lacks it), said once under -v. */
static const struct {
        const char *name, *consequence;
} fallbacks[] = {
        {"process_vm_readv", "child memory is read through /proc/TID/mem"},
        {"openat2", "cordon's own walks go one component at a time and refuse symlinks; the child's openat2 gets "
                    "ENOSYS"},
        {"sync_wakeup",
         "SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP not used: emulated calls are slower, isolation is the same"},
        {"clone_into_cgroup",
         "init is cloned outside its cgroup v2 group and the sentry moves it there through cgroup.procs, which "
         "waits for an RCU grace period: a slower start, the same groups"},
        {"wait_killable_recv",
         "the sandbox's filter without SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: a signal can interrupt an emulated "
         "call, which the kernel then makes again; an fd is injected and the call answered in one step"},
        {"pidfd_getfd", "required"},
        {"addfd", "required"},
        {"ptrace", "the exec tracer cannot seize init: the run is refused, unless --allow-unverified-exec accepts "
                   "execs that are not verified after the fact"},
};

/* Tests re-run the suite with a kernel feature forced absent so the fallback
 * paths run, not just exist. Falling back never weakens isolation, only
 * speed or reach; a feature without a safe fallback refuses the run. Before
 * the plan, since the plan already walks trees (the source's digest). */
int apply_forced_fallbacks(bool verbose)
{
        const char *force = getenv("CORDON_TEST_FORCE_FALLBACK");
        if (!force || !*force)
                return 0;
        _cleanup_free_ char *list = xstrdup(force);
        char *save = NULL;
        for (char *f = strtok_r(list, ",", &save); f; f = strtok_r(NULL, ",", &save))
                if (net_floor_force_fallback(f) == 0) {
                        if (verbose)
                                fprintf(stderr, "cordon: kernel feature floor_pin forced absent: the egress floor's "
                                                "programs are loaded at this start, not taken from their pins\n");
                } else if (notify_force_fallback(f) < 0) {
                        fprintf(stderr, "cordon: CORDON_TEST_FORCE_FALLBACK: unknown feature '%s'\n", f);
                        return EXIT_USAGE;
                }
        for (size_t i = 0; i < ELEMENTSOF(fallbacks); i++)
                if (verbose && notify_feature_absent(fallbacks[i].name))
                        fprintf(stderr, "cordon: kernel feature %s forced absent: %s\n", fallbacks[i].name,
                                fallbacks[i].consequence);
        /* No safe fallback for these two: without ADDFD the sentry cannot
         * give the child the file or socket it opened on its behalf (letting
         * the kernel redo the call would re-read child memory after the
         * decision); without pidfd_getfd it cannot take the sandbox's seccomp
         * listener from init, nor inspect the child's sockets and dirfds. */
        if (notify_feature_absent("addfd")) {
                fprintf(stderr, "cordon: the kernel lacks SECCOMP_IOCTL_NOTIF_ADDFD (Linux 5.9), which cordon "
                                "requires to inject the files and sockets it opens for the sandbox; refusing to "
                                "start\n");
                return EXIT_SANDBOX;
        }
        if (notify_feature_absent("pidfd_getfd")) {
                fprintf(stderr, "cordon: the kernel lacks pidfd_getfd (Linux 5.6), which cordon requires to take "
                                "the sandbox's seccomp listener and inspect the sandbox's fds; refusing to start\n");
                return EXIT_SANDBOX;
        }
        return 0;
}
