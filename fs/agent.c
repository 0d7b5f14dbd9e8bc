/* The proc agent: a small process inside the sandbox's user namespace that
 * opens /proc files for the sentry. Some /proc files (status, uid_map,
 * gid_map, the net/ tables) render ids relative to the user namespace of whoever
 * opened them; opened by a sentry thread they would show host ids (65534)
 * where the command expects its own (0). A thread cannot join another user
 * namespace, so a process does: single-threaded, uid 0 of the sandbox's
 * namespace, no capabilities, chrooted in the view — the same standing as
 * the command itself. */
#include "config.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common/allowlist.h"
#include "common/fdpass.h"
#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

enum agent_op {
        AGENT_OPEN = 0,
        AGENT_IDS = 1, /* the owner of the passed fd, as the sandbox's namespace renders it */
        /* on the passed O_PATH fd, with the caller's standing: */
        AGENT_CHOWN = 2,   /* fchownat(fd, "", uid, gid, AT_EMPTY_PATH) */
        AGENT_CHMOD = 3,   /* fchmodat2(fd, "", mode, AT_EMPTY_PATH) */
        AGENT_UTIMENS = 4, /* utimensat(fd, "", times or NULL, AT_EMPTY_PATH) */
        AGENT_RMXATTR = 5, /* removexattrat(fd, "", AT_EMPTY_PATH, path) (Linux 6.13) */
        /* in the passed directory (and a second one), on the names path
         * (and path2), each one component: fs_agent_dirop */
        AGENT_DIROP = 6, /* + enum fs_dirop */
        AGENT_DIROP_END = AGENT_DIROP + FS_DIROP_LINK + 1,
        AGENT_ACCESS = 32, /* faccessat2(fd, "", mode, AT_EMPTY_PATH | AT_EACCESS) */
};

/* The agent holds, for one request, the capabilities its caller holds (a
 * subset of the sandbox's own, ctx->caps), inside the sandbox's user
 * namespace, where the kernel applies them only to files whose owner the
 * namespace maps: the open or chown is then decided as the caller's own
 * (also the ptrace check of a magic link, which wants the opener to hold
 * every capability its target holds). Two more it uses to take a
 * caller's ids. */
#define AGENT_ID_CAPS ((UINT64_C(1) << CAP_SETUID) | (UINT64_C(1) << CAP_SETGID))
#define AGENT_GROUPS  64

struct agent_req {
        uint32_t op; /* enum agent_op */
        /* the caller's standing, in the sandbox's ids (has_creds 0: the
         * map's first id, no groups, no capability) */
        uint32_t has_creds, fsuid, fsgid, n_groups;
        uint64_t caps;
        uint32_t groups[AGENT_GROUPS];
        uint32_t uid, gid; /* AGENT_CHOWN */
        uint32_t has_times;
        struct timespec times[2]; /* AGENT_UTIMENS */
        uint64_t resolve;         /* openat2 RESOLVE_* flags; 0 means plain openat */
        int32_t flags;
        uint32_t mode;
        uint32_t umask;
        uint32_t has_dirfd;
        uint32_t dev; /* AGENT_DIROP + FS_DIROP_MKNOD */
        char path[4096];
        char path2[4096]; /* the second name of a rename or link, a symlink's content */
};

struct agent_resp {
        int32_t result;    /* 0 with an fd attached (AGENT_OPEN), or -errno */
        uint32_t uid, gid; /* AGENT_IDS */
};

/* The agent serves paths that came from the sandbox: after set-up it keeps
 * only what serving needs (receive a request with an fd, open, fstat,
 * answer with an fd, close), so a bug in it would find no more. Anything
 * else fails with EPERM; exec kills it. */
static int confine_agent(void)
{
        static const int allowed[] = {
                /* serving */
                SCMP_SYS(recvmsg),
                SCMP_SYS(sendmsg),
                SCMP_SYS(openat),
                SCMP_SYS(openat2),
                SCMP_SYS(close),
                SCMP_SYS(fstat),
                SCMP_SYS(newfstatat),
                SCMP_SYS(umask),
                SCMP_SYS(fchownat),
                452 /* fchmodat2: the same number on every architecture */,
                466 /* removexattrat, likewise */,
                SCMP_SYS(utimensat),
                439 /* faccessat2 */,
                SCMP_SYS(mknodat),
                SCMP_SYS(mkdirat),
                SCMP_SYS(symlinkat),
                SCMP_SYS(unlinkat),
                SCMP_SYS(renameat2),
                SCMP_SYS(linkat),
                /* taking each caller's ids and capabilities (agent_take) */
                SCMP_SYS(setfsuid),
                SCMP_SYS(setfsgid),
                SCMP_SYS(setgroups),
                SCMP_SYS(capset),
                /* living: memory, signals, ending, and a sanitizer runtime's report */
                SCMP_SYS(exit),
                SCMP_SYS(exit_group),
                SCMP_SYS(rt_sigreturn),
                SCMP_SYS(restart_syscall),
                SCMP_SYS(brk),
                SCMP_SYS(mmap),
                SCMP_SYS(munmap),
                SCMP_SYS(madvise),
                SCMP_SYS(mprotect),
                SCMP_SYS(futex),
                SCMP_SYS(write),
                SCMP_SYS(getpid),
                SCMP_SYS(gettid),
        };
        return allowlist_install(allowed, ELEMENTSOF(allowed));
}

/* removexattrat on an O_PATH fd: the kernel takes an empty path only on a
 * file opened for I/O (EBADF on O_PATH), so a directory is named as "."
 * from itself; other O_PATH objects stay refused (EBADF). */
static int agent_removexattr(int fd, const char *name)
{
        if (syscall(466 /* removexattrat */, fd, "", AT_EMPTY_PATH, name) == 0)
                return 0;
        struct stat st;
        if (errno != EBADF || fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
                return negative_errno();
        return syscall(466, fd, ".", 0, name) < 0 ? negative_errno() : 0;
}

/* Whether name is one component (trailing slashes allowed, as the
 * resolution keeps them), neither empty nor spelled from the root. */
static bool one_component(const char *name)
{
        if (name[0] == '\0' || name[0] == '/')
                return false;
        const char *slash = strchr(name, '/');
        return !slash || slash[strspn(slash, "/")] == '\0';
}

/* One directory change (AGENT_DIROP + op) in dirfd (and dirfd2). */
static int agent_dirop(const struct agent_req *q, int dirfd, int dirfd2)
{
        if (q->path[sizeof(q->path) - 1] != '\0' || q->path2[sizeof(q->path2) - 1] != '\0' || !one_component(q->path) ||
            dirfd < 0)
                return -EINVAL;
        enum fs_dirop op = (enum fs_dirop)(q->op - AGENT_DIROP);
        bool two = op == FS_DIROP_RENAME || op == FS_DIROP_LINK;
        if (two && (dirfd2 < 0 || !one_component(q->path2)))
                return -EINVAL;
        long r;
        switch (op) {
        case FS_DIROP_MKNOD:
                /* no device: the handler refused those before asking */
                if (S_ISBLK(q->mode) || (S_ISCHR(q->mode) && q->dev != 0))
                        return -EPERM;
                umask((mode_t)(q->umask & 0777));
                r = mknodat(dirfd, q->path, (mode_t)q->mode, (dev_t)q->dev);
                break;
        case FS_DIROP_MKDIR:
                umask((mode_t)(q->umask & 0777));
                r = mkdirat(dirfd, q->path, (mode_t)q->mode);
                break;
        case FS_DIROP_SYMLINK:
                r = symlinkat(q->path2, dirfd, q->path);
                break;
        case FS_DIROP_UNLINK:
                r = unlinkat(dirfd, q->path, q->flags & AT_REMOVEDIR);
                break;
        case FS_DIROP_RENAME:
                r = syscall(SYS_renameat2, dirfd, q->path, dirfd2, q->path2, (unsigned)q->flags);
                break;
        case FS_DIROP_LINK:
                r = linkat(dirfd, q->path, dirfd2, q->path2, 0); /* never followed (paths.c) */
                break;
        default:
                return -EINVAL;
        }
        return r < 0 ? negative_errno() : 0;
}

/* The caller's ids and filesystem capabilities for one request, or the
 * map's first id with none. Capabilities last: a change of fsuid to or
 * from 0 moves the effective set, which the capset then puts right. */
static int agent_take(const struct agent_req *q, struct fs_ids ids, uint64_t caps, bool may_setgroups)
{
        uint64_t permitted = caps | AGENT_ID_CAPS;
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
        struct __user_cap_data_struct d[2] = {{0}};
        d[0].permitted = (uint32_t)permitted;
        d[1].permitted = (uint32_t)(permitted >> 32);
        d[0].effective = (uint32_t)AGENT_ID_CAPS;
        if (syscall(SYS_capset, &h, d) < 0)
                return negative_errno();
        uint32_t fsuid = q->has_creds ? q->fsuid : ids.uid_inside, fsgid = q->has_creds ? q->fsgid : ids.gid_inside;
        gid_t groups[AGENT_GROUPS];
        size_t n = q->has_creds && q->n_groups <= AGENT_GROUPS ? q->n_groups : 0;
        for (size_t i = 0; i < n; i++)
                groups[i] = q->groups[i];
        if (may_setgroups && syscall(SYS_setgroups, n, groups) < 0)
                return negative_errno();
        syscall(SYS_setfsgid, fsgid);
        syscall(SYS_setfsuid, fsuid);
        if ((gid_t)syscall(SYS_setfsgid, -1) != fsgid || (uid_t)syscall(SYS_setfsuid, -1) != fsuid)
                return -EPERM;
        uint64_t eff = q->has_creds ? q->caps & caps : 0;
        d[0].effective = (uint32_t)eff;
        d[1].effective = (uint32_t)(eff >> 32);
        if (syscall(SYS_capset, &h, d) < 0)
                return negative_errno();
        return 0;
}

_noreturn_ static void agent_main(int sock, const int ns_fds[4], int root_fd, bool may_setgroups, struct fs_ids ids,
                                  uint64_t caps)
{
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        /* The sandbox's user namespace, and its net, ipc and uts ones too:
         * a /proc/sys file acts on the namespace of whoever opens it (net
         * and ipc tables are looked up at open), so an agent left in the
         * host's would show the sandbox the host's interfaces and values.
         * The user namespace first: the rest are then joined with the
         * capabilities it gives. By namespace fds, not init's pidfd: a
         * pidfd's setns takes a ptrace check of init, which an unprivileged
         * agent failed in some runs (EPERM however long it retried), and
         * the agent died, failing every /proc open of the sandbox. */
        static const int types[4] = {CLONE_NEWUSER, CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS};
        for (size_t i = 0; i < 4; i++) {
                if (setns(ns_fds[i], types[i]) < 0)
                        _exit(10);
                close(ns_fds[i]);
        }
        if (fchdir(root_fd) < 0 || chroot(".") < 0 || chdir("/") < 0)
                _exit(11);
        close(root_fd);
        if (may_setgroups && setgroups(0, NULL) < 0)
                _exit(12);
        /* the first id of the sandbox's map: its root, or the one id of an
         * unprivileged run that keeps the caller's */
        if (setresgid(ids.gid_inside, ids.gid_inside, ids.gid_inside) < 0 ||
            setresuid(ids.uid_inside, ids.uid_inside, ids.uid_inside) < 0)
                _exit(13);
        /* setresuid cleared it; the sentry gone means we go too (and if it
         * went before this line, the socket's EOF ends the loop below) */
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        uint64_t permitted = caps | AGENT_ID_CAPS;
        for (int cap = 0; cap <= 63; cap++)
                if (!(permitted & (UINT64_C(1) << cap)))
                        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno == EINVAL)
                                break; /* past the kernel's last capability */
        /* permitted: what agent_take may make effective for one request;
         * effective: none */
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
        struct __user_cap_data_struct d[2] = {{0}};
        d[0].permitted = (uint32_t)permitted;
        d[1].permitted = (uint32_t)(permitted >> 32);
        if (syscall(SYS_capset, &h, d) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                _exit(15);
        if (confine_agent() < 0)
                _exit(16);

        struct agent_req req;
        for (;;) {
                int fds_in[2];
                ssize_t n = recv_fds(sock, &req, sizeof(req), fds_in, 2);
                int dirfd = fds_in[0];
                if (n <= 0)
                        _exit(0);
                struct agent_resp resp = {.result = -EINVAL};
                int fd = -1;
                struct stat st;
                if (n == (ssize_t)sizeof(req) && (resp.result = agent_take(&req, ids, caps, may_setgroups)) < 0)
                        ; /* answered as is: the caller's standing could not be taken */
                else if (n == (ssize_t)sizeof(req) && req.op >= AGENT_DIROP && req.op < AGENT_DIROP_END)
                        resp.result = agent_dirop(&req, dirfd, fds_in[1]);
                else if (n == (ssize_t)sizeof(req) && req.op == AGENT_ACCESS && dirfd >= 0)
                        resp.result = syscall(439 /* faccessat2 */, dirfd, "", (int)(req.mode & 07),
                                              AT_EMPTY_PATH | AT_EACCESS) < 0
                                              ? negative_errno()
                                              : 0;
                else if (n == (ssize_t)sizeof(req) && req.op == AGENT_CHOWN && dirfd >= 0)
                        resp.result = fchownat(dirfd, "", req.uid, req.gid, AT_EMPTY_PATH) < 0 ? negative_errno() : 0;
                else if (n == (ssize_t)sizeof(req) && req.op == AGENT_CHMOD && dirfd >= 0)
                        resp.result = syscall(452 /* fchmodat2 */, dirfd, "", (mode_t)req.mode, AT_EMPTY_PATH) < 0
                                              ? negative_errno()
                                              : 0;
                else if (n == (ssize_t)sizeof(req) && req.op == AGENT_RMXATTR && dirfd >= 0 &&
                         req.path[sizeof(req.path) - 1] == '\0')
                        resp.result = agent_removexattr(dirfd, req.path);
                else if (n == (ssize_t)sizeof(req) && req.op == AGENT_UTIMENS && dirfd >= 0)
                        resp.result = utimensat(dirfd, "", req.has_times ? req.times : NULL, AT_EMPTY_PATH) < 0
                                              ? negative_errno()
                                              : 0;
                else if (n == (ssize_t)sizeof(req) && req.op == AGENT_IDS && dirfd >= 0) {
                        if (fstat(dirfd, &st) == 0) {
                                resp.result = 0;
                                resp.uid = st.st_uid;
                                resp.gid = st.st_gid;
                        } else
                                resp.result = negative_errno();
                } else if (n == (ssize_t)sizeof(req) && req.op == AGENT_OPEN &&
                           req.path[sizeof(req.path) - 1] == '\0' && (req.has_dirfd ? dirfd >= 0 : dirfd < 0)) {
                        umask((mode_t)(req.umask & 0777));
                        int at = req.has_dirfd ? dirfd : AT_FDCWD;
                        if (req.resolve) {
                                struct open_how how = {.flags = (uint64_t)(req.flags | O_CLOEXEC | O_NOCTTY),
                                                       .mode = req.mode,
                                                       .resolve = req.resolve};
                                fd = (int)syscall(SYS_openat2, at, req.path, &how, sizeof(how));
                        } else
                                fd = openat(at, req.path, req.flags | O_CLOEXEC | O_NOCTTY, (mode_t)req.mode);
                        resp.result = fd < 0 ? negative_errno() : 0;
                }
                for (size_t i = 0; i < 2; i++)
                        if (n > 0 && fds_in[i] >= 0)
                                close(fds_in[i]);
                (void)send_fds(sock, &resp, sizeof(resp), &fd, fd >= 0 ? 1 : 0);
                if (fd >= 0)
                        close(fd);
        }
}

/* The forked agent's first message: its namespaces and the view's root. */
_noreturn_ static void agent_wait(int sock, bool may_setgroups, struct fs_ids ids, uint64_t caps)
{
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        /* nothing of the sentry's but our socket and stderr: not init's
         * channel, not a long-lived sandbox's control socket (which a
         * client could otherwise still reach for a moment after the sentry
         * died), not the tracer's */
        (void)close_all_but(&sock, 1);
        char what;
        int fds[5];
        ssize_t n = recv_fds(sock, &what, 1, fds, 5);
        for (size_t i = 0; i < 5; i++)
                if (n != 1 || fds[i] < 0)
                        _exit(n == 0 ? 0 : 17); /* EOF: the sentry gave up on the sandbox */
        agent_main(sock, fds, fds[4], may_setgroups, ids, caps);
}

int fs_agent_fork(struct fs_context *ctx, bool may_setgroups)
{
        int sp[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
                return negative_errno();
        pid_t pid = fork();
        if (pid < 0) {
                int r = negative_errno();
                close(sp[0]);
                close(sp[1]);
                return r;
        }
        if (pid == 0) {
                close(sp[0]);
                agent_wait(sp[1], may_setgroups, ctx->ids, ctx->caps);
        }
        close(sp[1]);
        ctx->agent_sock = sp[0];
        ctx->agent_pid = pid;
        pthread_mutex_init(&ctx->agent_lock, NULL);
        return 0;
}

int fs_agent_begin(struct fs_context *ctx, const int ns_fds[4])
{
        if (ctx->agent_pid <= 0)
                return -ESRCH;
        const int fds[5] = {ns_fds[0], ns_fds[1], ns_fds[2], ns_fds[3], ctx->root_fd};
        return send_fds(ctx->agent_sock, "n", 1, fds, 5);
}

void fs_agent_kill(struct fs_context *ctx)
{
        if (ctx->agent_pid > 0)
                kill(ctx->agent_pid, SIGKILL);
}

void fs_agent_stop(struct fs_context *ctx)
{
        if (ctx->agent_pid <= 0)
                return;
        close(ctx->agent_sock);
        ctx->agent_sock = -1;
        kill(ctx->agent_pid, SIGKILL);
        while (waitpid(ctx->agent_pid, NULL, 0) < 0 && errno == EINTR)
                ;
        ctx->agent_pid = 0;
        pthread_mutex_destroy(&ctx->agent_lock);
}

/* One request and its answer, under the agent's lock: fd_in (-1: none)
 * goes with the request; an fd the answer carries is *ret_fd when asked
 * for, else closed. 0 with *resp filled, or -errno (-EIO for a short
 * answer). */
static int agent_exchange2(struct fs_context *ctx, const struct agent_req *req, const int *fds_in, size_t n_in,
                           struct agent_resp *resp, int *ret_fd)
{
        int fd = -1;
        pthread_mutex_lock(&ctx->agent_lock);
        int r = send_fds(ctx->agent_sock, req, sizeof(*req), fds_in, n_in);
        if (r == 0) {
                ssize_t n = recv_fds(ctx->agent_sock, resp, sizeof(*resp), &fd, 1);
                r = n == (ssize_t)sizeof(*resp) ? 0 : -EIO;
        }
        pthread_mutex_unlock(&ctx->agent_lock);
        if (ret_fd && r == 0)
                *ret_fd = fd;
        else if (fd >= 0)
                close(fd);
        return r;
}

static int agent_exchange(struct fs_context *ctx, const struct agent_req *req, int fd_in, struct agent_resp *resp,
                          int *ret_fd)
{
        return agent_exchange2(ctx, req, &fd_in, fd_in >= 0 ? 1 : 0, resp, ret_fd);
}

int fs_agent_ids(struct fs_context *ctx, int fd, uint32_t *ret_uid, uint32_t *ret_gid)
{
        if (ctx->agent_pid <= 0)
                return -ENOSYS;
        struct agent_req req = {.op = AGENT_IDS, .has_dirfd = 1};
        struct agent_resp resp = {0};
        int r = agent_exchange(ctx, &req, fd, &resp, NULL);
        if (r < 0)
                return r;
        if (resp.result < 0)
                return resp.result;
        *ret_uid = resp.uid;
        *ret_gid = resp.gid;
        return 0;
}

/* The trapped thread's standing, in the sandbox's ids, into req. */
static int agent_creds(struct notify_call *call, struct agent_req *req)
{
        const struct fs_context *ctx = call->userdata;
        struct notify_creds c;
        int r = notify_creds(call, &c);
        if (r < 0)
                return r;
        if (c.n_groups > AGENT_GROUPS)
                return -EPERM;
        req->has_creds = 1;
        req->fsuid = fs_id_to_child(&ctx->ids, false, c.fsuid);
        req->fsgid = fs_id_to_child(&ctx->ids, true, c.fsgid);
        req->n_groups = (uint32_t)c.n_groups;
        for (size_t i = 0; i < c.n_groups; i++)
                req->groups[i] = fs_id_to_child(&ctx->ids, true, c.groups[i]);
        req->caps = c.cap_effective & ctx->caps;
        return 0;
}

bool fs_caller_overrides(struct notify_call *call)
{
        struct notify_creds c;
        return notify_creds(call, &c) == 0 && (c.cap_effective & ((1U << CAP_DAC_OVERRIDE) | (1U << CAP_FOWNER)));
}

static int agent_fdop(struct notify_call *call, int fd, struct agent_req *req);

int fs_agent_chown(struct notify_call *call, int fd, uint32_t uid, uint32_t gid)
{
        struct agent_req req = {.op = AGENT_CHOWN, .uid = uid, .gid = gid};
        return agent_fdop(call, fd, &req);
}

int fs_agent_chmod(struct notify_call *call, int fd, mode_t mode)
{
        struct agent_req req = {.op = AGENT_CHMOD, .mode = mode};
        return agent_fdop(call, fd, &req);
}

int fs_agent_access(struct notify_call *call, int fd, int mode)
{
        struct agent_req req = {.op = AGENT_ACCESS, .mode = (uint32_t)mode};
        return agent_fdop(call, fd, &req);
}

int fs_agent_utimens(struct notify_call *call, int fd, const struct timespec *times)
{
        struct agent_req req = {.op = AGENT_UTIMENS, .has_times = times != NULL};
        if (times)
                memcpy(req.times, times, sizeof(req.times));
        return agent_fdop(call, fd, &req);
}

int fs_agent_removexattr(struct notify_call *call, int fd, const char *name)
{
        struct agent_req req = {.op = AGENT_RMXATTR};
        if (strlen(name) >= sizeof(req.path))
                return -ERANGE;
        strcpy(req.path, name);
        return agent_fdop(call, fd, &req);
}

static int agent_fdop(struct notify_call *call, int fd, struct agent_req *req)
{
        struct fs_context *ctx = call->userdata;
        if (ctx->agent_pid <= 0)
                return -ENOSYS;
        int r = agent_creds(call, req);
        if (r < 0)
                return r;
        struct agent_resp resp = {0};
        r = agent_exchange(ctx, req, fd, &resp, NULL);
        return r < 0 ? r : resp.result;
}

int fs_agent_open(struct fs_context *ctx, struct notify_call *call, int dirfd, const char *path, int flags, mode_t mode,
                  uint64_t resolve, mode_t um)
{
        if (ctx->agent_pid <= 0)
                return -ENOSYS;
        struct agent_req req = {.op = AGENT_OPEN,
                                .resolve = resolve,
                                .flags = flags,
                                .mode = mode,
                                .umask = um,
                                .has_dirfd = dirfd >= 0};
        if (strlen(path) >= sizeof(req.path))
                return -ENAMETOOLONG;
        strcpy(req.path, path);
        int cr = call ? agent_creds(call, &req) : 0;
        if (cr < 0)
                return cr;

        struct agent_resp resp = {0};
        int fd = -1;
        int r = agent_exchange(ctx, &req, dirfd, &resp, &fd);
        if (r < 0)
                return r;
        if (resp.result < 0) {
                if (fd >= 0)
                        close(fd);
                return resp.result;
        }
        return fd >= 0 ? fd : -EIO;
}

int fs_agent_dirop(struct notify_call *call, enum fs_dirop op, int dirfd, const char *name, int dirfd2,
                   const char *name2, mode_t mode, dev_t dev, int flags)
{
        struct fs_context *ctx = call->userdata;
        if (ctx->agent_pid <= 0)
                return -ENOSYS;
        bool two = op == FS_DIROP_RENAME || op == FS_DIROP_LINK;
        if (dirfd < 0 || (two && dirfd2 < 0))
                return -EBADF;
        /* the request is a few pages: from the heap, not a worker's stack */
        _cleanup_free_ struct agent_req *req = calloc(1, sizeof(*req));
        if (!req)
                return -ENOMEM;
        req->op = AGENT_DIROP + (uint32_t)op;
        req->mode = mode;
        req->dev = (uint32_t)dev;
        req->flags = flags;
        if (strlen(name) >= sizeof(req->path) || (name2 && strlen(name2) >= sizeof(req->path2)))
                return -ENAMETOOLONG;
        strcpy(req->path, name);
        if (name2)
                strcpy(req->path2, name2);
        if (op == FS_DIROP_MKNOD || op == FS_DIROP_MKDIR) {
                int um = notify_umask(call);
                if (um < 0)
                        return -ESRCH;
                req->umask = (uint32_t)um;
        }
        int r = agent_creds(call, req);
        if (r < 0)
                return r;
        const int fds[2] = {dirfd, dirfd2};
        struct agent_resp resp = {0};
        r = agent_exchange2(ctx, req, fds, two ? 2 : 1, &resp, NULL);
        return r < 0 ? r : resp.result;
}
