/* sentry/cli/: the command line, the only room that speaks to people.
 *
 * Promises: main.c parses `cordon VERB ...` (run, check, syscalls, digest,
 * gc, sandbox, oci, serve; and `cordon-oci`, runc's command line) with errors that
 * name the option and the value, exits with the codes sentry.h lists, and
 * hands each verb to the room that owns it: `run` to the core
 * (sentry/sentry.h), `sandbox` to sentry/sandbox/, `oci` to sentry/oci/.
 * check.c and syscalls.c print what the host offers and the syscall table.
 *
 * Never: no room includes this one; it holds no sandbox logic of its own
 * (a verb's work is done by the room it names). */
#pragma once

#include <stdbool.h>

/* `cordon check`: prints what this host supports; returns 0 when every
 * layer `cordon run` requires is there, 1 otherwise. */
int sentry_check(bool json);

/* `cordon serve`: the HTTP API (serve.c); returns the exit status. */
int cmd_serve(int argc, char **argv);

/* `cordon syscalls`: prints the table. */
void sentry_print_syscalls(void);
