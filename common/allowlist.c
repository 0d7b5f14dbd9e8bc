/* See allowlist.h. */
#include "config.h"

#include <errno.h>
#include <seccomp.h>

#include "common/allowlist.h"

int allowlist_install(const int *nrs, size_t n)
{
        scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(EPERM));
        if (!ctx)
                return -ENOMEM;
        int r = 0;
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nrs[i], 0);
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
