/* Reading the trapped thread's memory and its /proc facts. Every value read
 * here is the sentry's own copy; callers act on the copy only, after
 * notify_id_valid() says the thread is still the one that asked. */
#include "config.h"

#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "common/util.h"
#include "notify/notify-internal.h"
#include "notify/notify.h"

#define PAGE 4096UL

/* process_vm_readv can be missing (seccomp'd host, CONFIG_CROSS_MEMORY_ATTACH
 * off); once it says ENOSYS/EPERM we use /proc/TID/mem for the rest of the run. */
static atomic_bool vm_readv_broken;

static __thread bool (*privilege_hook)(void);

void notify_set_privilege_hook(bool (*ensure)(void))
{
        privilege_hook = ensure;
}

bool notify_privileged(void)
{
        return privilege_hook && privilege_hook();
}

int notify_proc_open(int hostproc_fd, const char *path, int flags)
{
        int fd = openat(hostproc_fd, path, flags | O_CLOEXEC);
        /* refused (or, under hidepid=invisible, hidden) for want of
         * CAP_SYS_PTRACE: tried again once the worker has it back */
        if (fd < 0 && (errno == EACCES || errno == EPERM || errno == ENOENT) && notify_privileged())
                fd = openat(hostproc_fd, path, flags | O_CLOEXEC);
        return fd;
}

ssize_t notify_proc_read(int hostproc_fd, const char *path, char *buf, size_t size)
{
        _cleanup_close_ int fd = notify_proc_open(hostproc_fd, path, O_RDONLY);
        if (fd < 0)
                return negative_errno();
        ssize_t n = read(fd, buf, size - 1);
        if (n < 0)
                return negative_errno();
        buf[n] = '\0';
        return n;
}

/* /proc/TID/mem reads and writes with FOLL_FORCE: it would read a PROT_NONE
 * or unreadable mapping (write a read-only one) that the kernel's own copy
 * from or to user memory refuses. Check the range is in mappings with the
 * permission first (perm 'r' or 'w'), so the fallback gives the same EFAULT
 * the call would. */
static int range_allowed(const struct notify_call *call, uint64_t addr, size_t len, char perm)
{
        char path[64];
        snprintf(path, sizeof(path), "%u/maps", call->req->pid);
        int fd = notify_proc_open(call->hostproc_fd, path, O_RDONLY);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        FILE *f = fdopen(fd, "re");
        if (!f) {
                close(fd);
                return -ENOMEM;
        }
        uint64_t want = addr, end = addr + len;
        _cleanup_free_ char *line = NULL;
        size_t cap = 0;
        int r = -EFAULT;
        /* getline: a line is a whole line however long its path (a path is
         * the child's to choose and must not read as a line of its own) */
        while (getline(&line, &cap, f) > 0) {
                unsigned long long lo, hi;
                char perms[8];
                if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perms) != 3)
                        continue;
                if (hi <= want)
                        continue;
                if (lo > want || perms[perm == 'w' ? 1 : 0] != perm)
                        break; /* a hole or a mapping without the permission at want */
                want = hi;
                if (want >= end) {
                        r = 0;
                        break;
                }
        }
        fclose(f);
        return r;
}

static int read_proc_mem(const struct notify_call *call, uint64_t addr, void *buf, size_t len)
{
        if (addr > INT64_MAX || addr + len > (uint64_t)INT64_MAX)
                return -EFAULT; /* beyond what pread's offset can name: kernel space */
        int r = range_allowed(call, addr, len, 'r');
        if (r < 0)
                return r;
        char path[64];
        snprintf(path, sizeof(path), "%u/mem", call->req->pid);
        _cleanup_close_ int fd = notify_proc_open(call->hostproc_fd, path, O_RDONLY);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        ssize_t n = pread(fd, buf, len, (off_t)addr);
        if (n < 0)
                return errno == EIO || errno == EINVAL ? -EFAULT : negative_errno();
        return n == (ssize_t)len ? 0 : -EFAULT;
}

/* Kernel features a test has declared absent (CORDON_TEST_FORCE_FALLBACK).
 * Each is looked at where the feature is used, so the code that would run on
 * a kernel without it is the code that runs. */
/* (clone_into_cgroup and ptrace are the sentry's, for its clone of init and
 * its exec tracer: kept here so that one list and one variable name every
 * feature a test can force off) */
static const char *const forcible[] = {"process_vm_readv",  "openat2", "addfd",      "pidfd_getfd",       "sync_wakeup",
                                       "clone_into_cgroup", "ptrace",  "proc_pidns", "wait_killable_recv"};
static atomic_uint forced_absent; /* bit i: forcible[i] */

int notify_force_fallback(const char *feature)
{
        for (size_t i = 0; i < ELEMENTSOF(forcible); i++)
                if (streq(feature, forcible[i])) {
                        atomic_fetch_or(&forced_absent, 1u << i);
                        if (i == 0)
                                atomic_store(&vm_readv_broken, true);
                        return 0;
                }
        return -EINVAL;
}

bool notify_feature_absent(const char *feature)
{
        unsigned mask = atomic_load_explicit(&forced_absent, memory_order_relaxed);
        if (!mask)
                return false; /* the normal run: one load on the calls that ask (pidfd_getfd) */
        for (size_t i = 0; i < ELEMENTSOF(forcible); i++)
                if (streq(feature, forcible[i]))
                        return mask & (1u << i);
        return false;
}

/* One copy between the sentry and the caller's memory with
 * process_vm_readv/writev: 0, -errno, or 1 when /proc/TID/mem must do it
 * (the kernel has no such call: from now on; EPERM, which may be about this
 * target only: just this once). */
static int vm_copy(const struct notify_call *call, uint64_t addr, void *buf, size_t len, bool write)
{
        if (atomic_load_explicit(&vm_readv_broken, memory_order_relaxed))
                return 1;
        struct iovec local = {buf, len};
        struct iovec remote = {(void *)(uintptr_t)addr, len};
        pid_t pid = (pid_t)call->req->pid;
        ssize_t n = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
                          : process_vm_readv(pid, &local, 1, &remote, 1, 0);
        /* a worker may be without CAP_SYS_PTRACE (fs/worker.c gives it back
         * lazily): the same copy again once it has it */
        if (n < 0 && errno == EPERM && notify_privileged())
                n = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
                          : process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (n == (ssize_t)len)
                return 0;
        if (n >= 0 || errno == EFAULT)
                return -EFAULT;
        if (errno == ESRCH)
                return -ESRCH;
        if (errno != ENOSYS && errno != EPERM)
                return negative_errno();
        if (errno == ENOSYS)
                atomic_store(&vm_readv_broken, true);
        return 1;
}

int notify_read_mem(const struct notify_call *call, uint64_t addr, void *buf, size_t len)
{
        if (len == 0)
                return 0;
        if (addr + len < addr)
                return -EFAULT;
        int r = vm_copy(call, addr, buf, len, false);
        return r <= 0 ? r : read_proc_mem(call, addr, buf, len);
}

static int write_proc_mem(const struct notify_call *call, uint64_t addr, const void *buf, size_t len)
{
        if (addr > INT64_MAX || addr + len > (uint64_t)INT64_MAX)
                return -EFAULT;
        char path[64];
        snprintf(path, sizeof(path), "%u/mem", call->req->pid);
        _cleanup_close_ int fd = notify_proc_open(call->hostproc_fd, path, O_WRONLY);
        if (fd < 0)
                return errno == ENOENT ? -ESRCH : negative_errno();
        /* the mem fd is bound to the address space it was opened on: once
         * the id is still valid, the write cannot land in a recycled pid */
        if (notify_id_valid(call) < 0)
                return -ESRCH;
        int r = range_allowed(call, addr, len, 'w');
        if (r < 0)
                return r;
        ssize_t n = pwrite(fd, buf, len, (off_t)addr);
        if (n < 0)
                return errno == EIO || errno == EINVAL ? -EFAULT : negative_errno();
        return n == (ssize_t)len ? 0 : -EFAULT;
}

int notify_write_mem(const struct notify_call *call, uint64_t addr, const void *buf, size_t len)
{
        if (len == 0)
                return 0;
        if (addr + len < addr)
                return -EFAULT;
        /* The id is checked right before the write: a thread waiting for us
         * (killable wait) leaves only by dying, and its pid would have to be
         * freed and handed out again within the next few instructions for
         * the write to go astray. (The /proc/TID/mem path checks it again
         * once its fd is bound to the address space.) */
        if (notify_id_valid(call) < 0)
                return -ESRCH;
        int r = vm_copy(call, addr, (void *)buf, len, true);
        return r <= 0 ? r : write_proc_mem(call, addr, buf, len);
}

ssize_t notify_read_string(const struct notify_call *call, uint64_t addr, char *buf, size_t size)
{
        size_t got = 0;
        if (size == 0)
                return -ENAMETOOLONG;
        /* Read up to each page boundary so that a string ending just before
         * an unmapped page is still read, as the kernel's strncpy_from_user does. */
        while (got < size) {
                uint64_t at = addr + got;
                size_t chunk = PAGE - (size_t)(at % PAGE);
                if (chunk > size - got)
                        chunk = size - got;
                int r = notify_read_mem(call, at, buf + got, chunk);
                if (r < 0)
                        return r;
                char *nul = memchr(buf + got, '\0', chunk);
                if (nul)
                        return (ssize_t)(nul - buf);
                got += chunk;
        }
        buf[size - 1] = '\0';
        return -ENAMETOOLONG;
}

int notify_id_valid(const struct notify_call *call)
{
        __u64 id = call->req->id;
        if (ioctl(call->listener_fd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0)
                return -ENOENT;
        return 0;
}

int notify_install_fd(const struct notify_call *call, int srcfd, int target_fd, unsigned fd_flags)
{
        if (srcfd < 0 || (fd_flags & ~(unsigned)O_CLOEXEC))
                return -EINVAL;
        struct seccomp_notif_addfd a = {
                .id = call->req->id,
                .flags = target_fd >= 0 ? SECCOMP_ADDFD_FLAG_SETFD : 0,
                .srcfd = (__u32)srcfd,
                .newfd = target_fd >= 0 ? (__u32)target_fd : 0,
                .newfd_flags = fd_flags,
        };
        int r = ioctl(call->listener_fd, SECCOMP_IOCTL_NOTIF_ADDFD, &a);
        return r < 0 ? negative_errno() : r;
}

int notify_dup_child_fd(const struct notify_call *call, int fd)
{
        if (fd < 0)
                return -EBADF;
        /* No fallback: reopening /proc/TID/fd/N is not the same open file (a
         * socket cannot be reopened at all, a file would get new flags and
         * offset), so whatever needs the child's own fd fails closed. */
        if (notify_feature_absent("pidfd_getfd"))
                return -ENOSYS;
        /* a pidfd for the calling thread itself (PIDFD_THREAD, Linux 6.9),
         * else for its thread group leader: the fd table is shared either way */
        int pidfd = (int)syscall(SYS_pidfd_open, (pid_t)call->req->pid, 0x80 /* PIDFD_THREAD = O_EXCL */);
        if (pidfd < 0) {
                char status[64], buf[4096];
                snprintf(status, sizeof(status), "%u/status", call->req->pid);
                _cleanup_close_ int sfd = notify_proc_open(call->hostproc_fd, status, O_RDONLY);
                ssize_t n = sfd < 0 ? -1 : read_full(sfd, buf, sizeof(buf) - 1);
                if (n <= 0)
                        return -ESRCH;
                buf[n] = '\0';
                const char *t = strstr(buf, "\nTgid:");
                if (!t)
                        return -ESRCH;
                pidfd = (int)syscall(SYS_pidfd_open, (pid_t)strtol(t + 6, NULL, 10), 0);
                if (pidfd < 0)
                        return negative_errno();
        }
        int r = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
        if (r < 0 && errno == EPERM && notify_privileged())
                r = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
        r = r < 0 ? negative_errno() : r;
        close(pidfd);
        return r;
}

int notify_child_fd_cloexec(const struct notify_call *call, int fd)
{
        char path[64], buf[512];
        snprintf(path, sizeof(path), "%u/fdinfo/%d", call->req->pid, fd);
        _cleanup_close_ int f = notify_proc_open(call->hostproc_fd, path, O_RDONLY);
        if (f < 0)
                return errno == ENOENT ? -EBADF : negative_errno();
        ssize_t n = read_full(f, buf, sizeof(buf) - 1);
        if (n <= 0)
                return -EIO;
        buf[n] = '\0';
        const char *p = strstr(buf, "flags:");
        if (!p)
                return -EIO;
        return (strtol(p + 6, NULL, 8) & O_CLOEXEC) ? 1 : 0;
}

/* The caller's dirfd (or working directory) as a path beneath the host's
 * /proc: 0, or -EBADF for a negative fd other than AT_FDCWD. */
static int dirfd_path(const struct notify_call *call, int dirfd, char path[64])
{
        if (dirfd == AT_FDCWD)
                snprintf(path, 64, "%u/cwd", call->req->pid);
        else if (dirfd >= 0)
                snprintf(path, 64, "%u/fd/%d", call->req->pid, dirfd);
        else
                return -EBADF;
        return 0;
}

/* The caller's fd as an O_PATH fd of ours, taken across (pidfd_getfd)
 * where /proc/TID/fd refused it. That directory is its dump owner's, 0500:
 * for a non-dumpable caller whose memory the host's namespace owns (it ran
 * a file it may execute but not read, whose owner the sandbox does not
 * map: an execute-only file in a bind) that is host root, which a worker
 * with the caller's fsuid is not even holding CAP_SYS_PTRACE. The caller
 * itself may always use its own fds; pidfd_getfd asks only the ptrace
 * check (PTRACE_MODE_ATTACH_REALCREDS, the sentry's own), and the reopen
 * of our copy is the same file at the same place that /proc/TID/fd/N
 * would have given. 0 or -errno. */
static int child_fd_as_path(const struct notify_call *call, int fd)
{
        _cleanup_close_ int dup = notify_dup_child_fd(call, fd);
        if (dup < 0)
                return dup;
        /* still pending: the thread whose fd we took was the caller (a
         * recycled tid would have made the call invalid) */
        if (notify_id_valid(call) < 0)
                return -ESRCH;
        char link[64];
        snprintf(link, sizeof(link), "thread-self/fd/%d", dup);
        int r = openat(call->hostproc_fd, link, O_PATH | O_CLOEXEC);
        return r < 0 ? negative_errno() : r;
}

int notify_stat_dirfd(const struct notify_call *call, int dirfd, struct stat *ret)
{
        char path[64];
        int r = dirfd_path(call, dirfd, path);
        if (r < 0)
                return r;
        if (fstatat(call->hostproc_fd, path, ret, 0) == 0)
                return 0;
        r = negative_errno();
        if (r != -EACCES || dirfd == AT_FDCWD)
                return r;
        _cleanup_close_ int fd = child_fd_as_path(call, dirfd);
        if (fd < 0)
                return r;
        return fstat(fd, ret) < 0 ? negative_errno() : 0;
}

int notify_open_dirfd(const struct notify_call *call, int dirfd)
{
        char path[64];
        int r = dirfd_path(call, dirfd, path);
        if (r < 0)
                return r;
        int fd = notify_proc_open(call->hostproc_fd, path, O_PATH);
        if (fd < 0) {
                if (errno == ENOENT && dirfd != AT_FDCWD)
                        return -EBADF;
                r = negative_errno();
                if (r == -EACCES && dirfd != AT_FDCWD) {
                        fd = child_fd_as_path(call, dirfd);
                        return fd < 0 ? r : fd;
                }
                return r;
        }
        return fd;
}

/* Reads all of /proc/TID/status into *ret (malloc'd, NUL-terminated): it
 * grows with the supplementary groups, and a prefix could end inside the
 * very line we want. 0 or -errno. */
static int read_status(const struct notify_call *call, char **ret)
{
        char path[64];
        snprintf(path, sizeof(path), "%u/status", call->req->pid);
        _cleanup_close_ int fd = notify_proc_open(call->hostproc_fd, path, O_RDONLY);
        if (fd < 0)
                return negative_errno();
        size_t size = 4096, got = 0;
        _cleanup_free_ char *buf = xmalloc(size);
        for (;;) {
                ssize_t n = read(fd, buf + got, size - got - 1);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return negative_errno();
                }
                if (n == 0)
                        break;
                got += (size_t)n;
                if (got == size - 1) {
                        if (size >= (1u << 20))
                                return -E2BIG; /* bounded: 65536 groups fit */
                        size *= 2;
                        buf = xrealloc(buf, size);
                }
        }
        buf[got] = '\0';
        *ret = TAKE_PTR(buf);
        return 0;
}

/* The last number on the status line that starts with key. */
static long status_last_field(const char *status, const char *key)
{
        const char *p = strstr(status, key);
        if (!p)
                return -ENOENT;
        p += strlen(key);
        const char *eol = strchr(p, '\n');
        if (!eol)
                return -ENOENT; /* a line cut short is no answer */
        const char *q = eol;
        while (q > p && (q[-1] == ' ' || q[-1] == '\t'))
                q--;
        while (q > p && q[-1] >= '0' && q[-1] <= '9')
                q--;
        if (q == eol)
                return -ENOENT;
        return strtol(q, NULL, 10);
}

int notify_ns_ids(const struct notify_call *call, pid_t *ret_nspid, pid_t *ret_nstgid)
{
        _cleanup_free_ char *status = NULL;
        int r = read_status(call, &status);
        if (r < 0)
                return r;
        long pid = status_last_field(status, "\nNSpid:");
        long tgid = status_last_field(status, "\nNStgid:");
        if (pid <= 0 || tgid <= 0)
                return -ENOENT;
        *ret_nspid = (pid_t)pid;
        *ret_nstgid = (pid_t)tgid;
        return 0;
}

/* The n-th number (0 on) of the status line that starts with key, in base. */
static int status_field(const char *status, const char *key, int n, int base, unsigned long long *ret)
{
        const char *p = strstr(status, key);
        if (!p || !strchr(p + 1, '\n'))
                return -ENOENT; /* a line cut short is no answer */
        p += strlen(key);
        for (int i = 0; i <= n; i++) {
                char *end;
                errno = 0;
                unsigned long long v = strtoull(p, &end, base);
                if (end == p || errno != 0 || (*end != ' ' && *end != '\t' && *end != '\n'))
                        return -ENOENT;
                *ret = v;
                p = end;
        }
        return 0;
}

int notify_creds(const struct notify_call *call, struct notify_creds *ret)
{
        _cleanup_free_ char *status = NULL;
        int r = read_status(call, &status);
        if (r < 0)
                return r;
        /* each at the start of a line: the thread's name (the Name: line,
         * set by the child) could hold any of these words */
        unsigned long long fsuid, fsgid, caps;
        if (status_field(status, "\nUid:", 3, 10, &fsuid) < 0 || status_field(status, "\nGid:", 3, 10, &fsgid) < 0 ||
            status_field(status, "\nCapEff:", 0, 16, &caps) < 0 || fsuid > UINT32_MAX || fsgid > UINT32_MAX)
                return -ENOENT;
        ret->fsuid = (uint32_t)fsuid;
        ret->fsgid = (uint32_t)fsgid;
        ret->cap_effective = caps;
        ret->n_groups = 0;
        const char *g = strstr(status, "\nGroups:");
        if (!g)
                return -ENOENT;
        g += strlen("\nGroups:");
        for (;;) {
                while (*g == ' ' || *g == '\t')
                        g++;
                if (*g == '\n')
                        break;
                char *end;
                unsigned long long v = strtoull(g, &end, 10);
                if (end == g || v > UINT32_MAX)
                        return -ENOENT;
                if (ret->n_groups == NOTIFY_MAX_GROUPS)
                        return -E2BIG;
                ret->groups[ret->n_groups++] = (uint32_t)v;
                g = end;
        }
        /* read from the trapped thread, not one that took its tid since */
        return notify_id_valid(call) == 0 ? 0 : -ESRCH;
}

int notify_umask_uncached(const struct notify_call *call)
{
        _cleanup_free_ char *status = NULL;
        int r = read_status(call, &status);
        if (r < 0)
                return r;
        /* at the start of a line: the thread's name (the Name: line, set by
         * the child) could contain "Umask:" */
        const char *p = strstr(status, "\nUmask:");
        if (!p)
                return -ENOENT;
        return (int)(strtol(p + 7, NULL, 8) & 0777);
}
