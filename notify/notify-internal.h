/* notify/ private: kernel ABI pieces older uapi headers lack, and what
 * engine.c asks of signal.c. */
#pragma once

#include <linux/seccomp.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/types.h>

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

/* A trapped thread's signal state, from its /proc/TID/status (notify/signal.c). */
struct notify_sigstate {
        uint64_t pnd, shd, blk, ign, cgt; /* bit s-1 for signal s */
        pid_t tgid;
        bool leader; /* tid == tgid */
        unsigned threads;
};
int notify_sig_parse(const char *status, struct notify_sigstate *ret);
/* The process signals pending that the thread would take (not blocked,
 * handled or stopping it): what notify_sig_check's seen remembers. */
uint64_t notify_sig_shared(const struct notify_sigstate *s);
/* The pending signals the kernel is certain to deliver to the thread on
 * its way out (signal.c says why), given the signals some other thread of
 * its process does not block and those seen pending (notify_sig_shared)
 * on the previous look. */
uint64_t notify_sig_takeable(const struct notify_sigstate *s, uint64_t others_unblocked, uint64_t seen_before);
/* 1 if thread tid (a caller whose call waits in the sentry) has a signal
 * to take, 0 if not, -errno when its status cannot be read. seen: 0 on
 * the first look at a call, kept between looks. Check the notification is
 * still valid after it (a recycled tid). */
int notify_sig_check(int hostproc_fd, pid_t tid, uint64_t *seen);
