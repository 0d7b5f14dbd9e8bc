/* Start-up tracing: with CORDON_TRACE_STARTUP set in cordon's environment,
 * each trace_mark() writes one line to stderr, "cordon-trace: +MS.US [PID]
 * WHAT", in milliseconds since main() on CLOCK_MONOTONIC. Forks (init) keep
 * the same zero, so their lines interleave with the sentry's on one time
 * line. Without the variable a mark is one predictable branch. */
#pragma once

#include <stdbool.h>

extern bool trace_on;

void trace_init(void);
void trace_mark_slow(const char *what);

static inline void trace_mark(const char *what)
{
        if (__builtin_expect(trace_on, 0))
                trace_mark_slow(what);
}
