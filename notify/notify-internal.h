/* notify/ private: kernel ABI pieces older uapi headers lack. */
#pragma once

#include <linux/seccomp.h>
#include <linux/types.h>
#include <sys/ioctl.h>

#ifndef SECCOMP_IOCTL_NOTIF_ADDFD
struct seccomp_notif_addfd {
        __u64 id;
        __u32 flags;
        __u32 srcfd;
        __u32 newfd;
        __u32 newfd_flags;
};
#define SECCOMP_IOCTL_NOTIF_ADDFD SECCOMP_IOW(3, struct seccomp_notif_addfd)
#endif
#ifndef SECCOMP_ADDFD_FLAG_SETFD
#define SECCOMP_ADDFD_FLAG_SETFD (1UL << 0)
#endif
#ifndef SECCOMP_ADDFD_FLAG_SEND
#define SECCOMP_ADDFD_FLAG_SEND (1UL << 1)
#endif
/* Linux 6.6: wake the waiting thread on the CPU that answers it. */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif
#ifndef SECCOMP_USER_NOTIF_FLAG_CONTINUE
#define SECCOMP_USER_NOTIF_FLAG_CONTINUE (1UL << 0)
#endif

/* the highest x86_64 syscall number the dispatch table indexes, plus one */
#define NOTIFY_NR_MAX 512

struct notify_call;
struct notify_engine;
/* The engine's umask cache (notify/umask.c): made and freed with the engine. */
struct notify_umask_cache;
struct notify_umask_cache *notify_umask_cache_new(void);
void notify_umask_cache_free(struct notify_umask_cache *c);
struct notify_umask_cache *notify_engine_umask_cache(const struct notify_engine *e);
/* The caller's umask from the whole of /proc/TID/status (notify/mem.c):
 * umask.c's fallback when its short read did not find the line. */
int notify_umask_uncached(const struct notify_call *call);
/* Called by the engine for every notification before its handler: a
 * thread's new call proves its pending umask/execve is over (umask.c). */
void notify_umask_observe(const struct notify_call *call);
