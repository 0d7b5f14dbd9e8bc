/* `cordon syscalls`: the syscall table (sentry/syscalls.c) printed for
 * people, one row a syscall: what cordon does with it, how fully, and why. */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "sentry/cli/cli.h"
#include "sentry/sentry.h"

static const char *action_name(const struct syscall_entry *e, char *buf, size_t size)
{
        switch (e->action) {
        case SC_ALLOW:
                return "allow";
        case SC_EMULATE:
                return "emulate";
        case SC_KILL:
                return "kill";
        case SC_ERRNO:
                snprintf(buf, size, "errno %s", strerrorname_np(e->err) ? strerrorname_np(e->err) : "?");
                return buf;
        }
        return "?";
}

void sentry_print_syscalls(void)
{
        size_t n;
        const struct syscall_entry *t = sentry_syscall_table(&n);
        printf("%-20s %-18s %-8s %s\n", "SYSCALL", "ACTION", "SUPPORT", "NOTE");
        printf("%-20s %-18s %-8s %s\n", "(other arch, x32)", "kill", "full",
               "only the x86_64 ABI is allowed; any other is killed");
        for (size_t i = 0; i < n; i++) {
                char buf[64];
                printf("%-20s %-18s %-8s %s%s\n", t[i].name, action_name(&t[i], buf, sizeof(buf)),
                       t[i].support == SUPPORT_FULL ? "full" : "partial", t[i].n_cond ? "[when] " : "", t[i].note);
        }
        printf("%-20s %-18s %-8s %s\n", "(everything else)", "allow", "full", "runs natively");
}
