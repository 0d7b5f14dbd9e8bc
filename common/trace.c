/* Start-up tracing (see trace.h). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "common/trace.h"

bool trace_on;
static struct timespec trace_zero;

void trace_init(void)
{
        const char *v = getenv("CORDON_TRACE_STARTUP");
        if (!v || !*v)
                return;
        clock_gettime(CLOCK_MONOTONIC, &trace_zero);
        trace_on = true;
}

/* One write(2) per line, so lines from the sentry's threads and from init
 * do not tear. No allocation: it also runs in init after the fork. */
void trace_mark_slow(const char *what)
{
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        long long us =
                (long long)(now.tv_sec - trace_zero.tv_sec) * 1000000 + (now.tv_nsec - trace_zero.tv_nsec) / 1000;
        char line[160];
        int n = snprintf(line, sizeof(line), "cordon-trace: +%lld.%03lld [%d] %s\n", us / 1000, us % 1000,
                         (int)getpid(), what);
        if (n > (int)sizeof(line) - 1)
                n = (int)sizeof(line) - 1;
        (void)!write(STDERR_FILENO, line, (size_t)n);
}
