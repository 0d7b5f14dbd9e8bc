/* A process's own seccomp allow-list, for cordon's helper processes (the
 * proc agent, the exec tracer): the syscalls given are allowed, execve and
 * execveat kill the process, anything else fails with EPERM. */
#pragma once

#include <stddef.h>

/* nrs: x86_64 syscall numbers (SCMP_SYS(...)). Sets no_new_privs. 0 or -errno. */
int allowlist_install(const int *nrs, size_t n);
