/* See allowlist.h. */
#include "config.h"

#include <errno.h>
#include <linux/sched.h>
#include <seccomp.h>

#include "common/allowlist.h"

int seccomp_ctx_tree(void *ctx)
{
        int r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
        return r == -EINVAL || r == -EOPNOTSUPP ? 0 : r;
}

int allowlist_install(const int *nrs, size_t n)
{
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
        if (!ctx)
                return -ENOMEM;
        int r = seccomp_ctx_tree(ctx);
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nrs[i], 0);
        /* what any thread's runtime may call at its end */
        if (r >= 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(sigaltstack), 0);
#ifdef CORDON_SANITIZERS
        /* Test builds only (--enable-sanitizers): ASan intercepts _exit and
         * runs LeakSanitizer there, which lists the threads and stops the
         * world from a CLONE_VM helper that ptraces them (as in
         * sentry/confine.c). A fork (no CLONE_VM) stays refused. */
        static const int san[] = {SCMP_SYS(ptrace),
                                  SCMP_SYS(wait4),
                                  SCMP_SYS(getdents),
                                  SCMP_SYS(getdents64),
                                  SCMP_SYS(prctl),
                                  SCMP_SYS(sched_yield),
                                  SCMP_SYS(rt_sigaction),
                                  SCMP_SYS(rt_sigprocmask),
                                  SCMP_SYS(readlink),
                                  SCMP_SYS(nanosleep),
                                  SCMP_SYS(clock_nanosleep),
                                  SCMP_SYS(getppid),
                                  SCMP_SYS(sched_getaffinity),
                                  SCMP_SYS(open),
                                  SCMP_SYS(openat)};
        for (size_t i = 0; r >= 0 && i < sizeof(san) / sizeof(san[0]); i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, san[i], 0);
        if (r >= 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                                     SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_VM, CLONE_VM));
#endif
        if (r >= 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(execve), 0);
        if (r >= 0)
                r = seccomp_rule_add(ctx, SCMP_ACT_KILL_PROCESS, SCMP_SYS(execveat), 0);
        if (r >= 0)
                r = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1);
        if (r >= 0)
                r = seccomp_load(ctx);
        seccomp_release(ctx);
        return r;
}
