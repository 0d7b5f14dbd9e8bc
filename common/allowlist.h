/* A process's own seccomp allow-list, for cordon's helper processes (the
 * proc agent, the exec tracer): the syscalls given are allowed, execve and
 * execveat kill the process, anything else fails with EPERM. */
#pragma once

#include <stddef.h>

/* nrs: x86_64 syscall numbers (SCMP_SYS(...)). Sets no_new_privs. 0 or -errno. */
int allowlist_install(const int *nrs, size_t n);

/* Has libseccomp emit ctx (a scmp_filter_ctx) as a binary tree over the
 * syscall numbers instead of a chain, for every filter cordon builds.
 * Loading a filter costs the kernel a walk of it for every syscall number
 * of each of its architectures (the constant-action cache, Linux 5.11), and
 * every call that misses the cache walks it again; in the chain a syscall
 * without a row of its own (most of them) passes every row's compare. An
 * older libseccomp without the attribute keeps the chain. 0 or -errno. */
int seccomp_ctx_tree(void *ctx);
