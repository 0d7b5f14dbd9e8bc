/* A sentry worker thread's identity: its own fs context rooted in the view,
 * and the child's filesystem credentials. Credentials on Linux are per
 * thread at the syscall level; glibc's wrappers broadcast set*id and
 * setgroups to every thread, so the raw syscalls are used on purpose. */
#include "config.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "common/util.h"
#include "fs/fs-internal.h"
#include "fs/fs.h"

/* This thread's capabilities as fs_worker_init left them, and what its
 * effective set is now. Only this thread changes its own credentials (raw
 * capset), so the state kept here is the kernel's: switching the effective
 * set needs no capget, and a switch to the set the thread already has
 * needs no capset (about 0.9 us each on the reference machine; two per
 * emulated call before, bench/).
 *
 * The resting set is CAP_SYS_PTRACE alone (reading the child's memory and
 * /proc/TID); fs_as_child_begin empties it for the operation done as the
 * child, and fs_as_child_end does not give it back: the thread stays
 * without it, and notify/ tries its reads of the trapped thread as the
 * thread is, calling fs_privileged (through notify_privileged) and trying
 * again only when one is refused. Usually none is: the sentry (euid 0)
 * owns the sandbox's user namespace and so passes the ptrace checks for
 * its processes without an effective capability; what needs it is a
 * process whose mm still belongs to the host's namespace (the OCI init
 * before its exec). So an emulated call usually makes no capset at all.
 * Nothing runs with more privilege than before: an operation done as the
 * child always runs with the empty set (begin makes sure), anything else
 * runs with the empty set or, after a refusal, with CAP_SYS_PTRACE as it
 * always did. */
static __thread struct {
        bool known;
        uint32_t permitted[2];
        uint32_t resting;   /* low word of the effective set outside child operations */
        uint32_t effective; /* low word of the effective set now (the high word is always 0) */
} own_caps;

/* This thread's filesystem identity since the last switch (known: the
 * ids below are set; dirty: a switch was begun and not finished). */
static __thread struct {
        bool known, dirty;
        uint32_t fsuid, fsgid;
        size_t n_groups;
        uint32_t groups[NOTIFY_MAX_GROUPS];
} own_ids;

/* The last umask fs_set_umask gave this thread's private fs_struct; -1:
 * not known (a new thread, whose umask is inherited). */
static __thread int own_umask = -1;

int fs_worker_init(void *userdata)
{
        const struct fs_context *ctx = userdata;

        /* A worker may be started by another worker and inherit its reduced
         * effective set and its fs context: take the permitted set back
         * first, then confine this thread afresh. */
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
        struct __user_cap_data_struct d[2];
        if (syscall(SYS_capget, &h, d) < 0)
                return negative_errno();
        d[0].effective = d[0].permitted;
        d[1].effective = d[1].permitted;
        if (syscall(SYS_capset, &h, d) < 0)
                return negative_errno();

        /* A private fs_struct: chroot and umask below touch this thread only. */
        if (unshare(CLONE_FS) < 0)
                return negative_errno();
        if (fchdir(ctx->root_fd) < 0)
                return negative_errno();
        /* The view's root becomes this thread's root: absolute paths and
         * absolute symlinks resolve inside it, and ".." stops at it, by the
         * kernel's own path walk (no hand-written canonicaliser). */
        if (chroot(".") < 0)
                return negative_errno();
        if (chdir("/") < 0)
                return negative_errno();

        if (!ctx->keep_groups && syscall(SYS_setgroups, 0, NULL) < 0)
                return negative_errno();
        syscall(SYS_setfsgid, ctx->fsgid);
        syscall(SYS_setfsuid, ctx->fsuid);
        if ((gid_t)syscall(SYS_setfsgid, -1) != ctx->fsgid || (uid_t)syscall(SYS_setfsuid, -1) != ctx->fsuid)
                return -EPERM;

        /* Keep only CAP_SYS_PTRACE effective: it lets this thread read the
         * caller's memory and /proc/TID entries; it grants nothing on file
         * permission checks, which are now the child's. The permitted set
         * is left as is so no other thread is affected. */
        if (syscall(SYS_capget, &h, d) < 0)
                return negative_errno();
        d[0].effective = (1U << CAP_SYS_PTRACE) & d[0].permitted;
        d[1].effective = 0;
        d[0].inheritable = d[1].inheritable = 0;
        if (syscall(SYS_capset, &h, d) < 0)
                return negative_errno();
        own_caps.permitted[0] = d[0].permitted;
        own_caps.permitted[1] = d[1].permitted;
        own_caps.resting = own_caps.effective = d[0].effective;
        own_caps.known = true;
        own_umask = -1;
        own_ids.known = false;
        own_ids.dirty = false;
        notify_set_privilege_hook(fs_privileged);
        return 0;
}

static int set_effective(uint32_t low)
{
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
        struct __user_cap_data_struct d[2] = {0};
        if (own_caps.known) {
                /* a permitted set that had shrunk meanwhile would make the
                 * capset below fail (EPERM): fail closed, never wider */
                d[0].permitted = own_caps.permitted[0];
                d[1].permitted = own_caps.permitted[1];
        } else if (syscall(SYS_capget, &h, d) < 0)
                return negative_errno();
        d[0].effective = low & d[0].permitted;
        d[1].effective = 0;
        if (syscall(SYS_capset, &h, d) < 0) {
                /* what the set is now is no longer known: the next switch
                 * is made whatever it believes */
                own_caps.effective = UINT32_MAX;
                return negative_errno();
        }
        own_caps.effective = d[0].effective;
        return 0;
}

static bool id_mapped(const struct fs_ids *m, bool gid, uint32_t host)
{
        return host - (gid ? m->gid_host : m->uid_host) < m->count;
}

/* The trapped thread's fsuid, fsgid and groups, on this thread. Only with
 * a range of ids, and once a thread changed its identity: until then (and
 * always with a single id) every thread of the sandbox has the one
 * identity fs_worker_init took. An id outside the sandbox's map (which the
 * kernel would never show for one of its threads) fails closed. */
static int take_identity(struct notify_call *call)
{
        struct fs_context *ctx = call->userdata;
        if (!ctx || ctx->ids.count <= 1 || !atomic_load_explicit(&ctx->creds_vary, memory_order_acquire))
                return 0;
        struct notify_creds c;
        int r = notify_creds(call, &c);
        if (r < 0)
                return r == -E2BIG ? -EPERM : r;
        if (!id_mapped(&ctx->ids, false, c.fsuid) || !id_mapped(&ctx->ids, true, c.fsgid))
                return -EPERM;
        for (size_t i = 0; i < c.n_groups; i++)
                if (!id_mapped(&ctx->ids, true, c.groups[i]))
                        return -EPERM;
        if (!own_ids.known) {
                own_ids.fsuid = ctx->fsuid; /* what fs_worker_init took */
                own_ids.fsgid = ctx->fsgid;
                own_ids.n_groups = 0;
                own_ids.known = true;
        }
        if (!own_ids.dirty && own_ids.fsuid == c.fsuid && own_ids.fsgid == c.fsgid && own_ids.n_groups == c.n_groups &&
            memcmp(own_ids.groups, c.groups, c.n_groups * sizeof(c.groups[0])) == 0)
                return 0;
        /* setgroups and a switch of fsuid/fsgid away from the real ids
         * need CAP_SETGID and CAP_SETUID, effective for these three calls
         * only; the operation itself runs with the empty set */
        /* until the switch is done: a switch that failed half-way leaves
         * this thread in a state not remembered, so the next one is made
         * whatever it is asked for (never skipped as already in force) */
        own_ids.dirty = true;
        if ((r = set_effective((1U << CAP_SETUID) | (1U << CAP_SETGID))) < 0)
                return r;
        gid_t groups[NOTIFY_MAX_GROUPS];
        for (size_t i = 0; i < c.n_groups; i++)
                groups[i] = c.groups[i];
        if (syscall(SYS_setgroups, c.n_groups, groups) < 0)
                return negative_errno();
        syscall(SYS_setfsgid, c.fsgid);
        syscall(SYS_setfsuid, c.fsuid);
        if ((gid_t)syscall(SYS_setfsgid, -1) != c.fsgid || (uid_t)syscall(SYS_setfsuid, -1) != c.fsuid)
                return -EPERM;
        own_ids.fsuid = c.fsuid;
        own_ids.fsgid = c.fsgid;
        own_ids.n_groups = c.n_groups;
        memcpy(own_ids.groups, c.groups, c.n_groups * sizeof(c.groups[0]));
        own_ids.dirty = false;
        return 0;
}

void fs_creds_vary(struct notify_call *call)
{
        struct fs_context *ctx = call->userdata;
        if (ctx)
                atomic_store_explicit(&ctx->creds_vary, true, memory_order_release);
}

int fs_command_ids(const struct fs_context *ctx, uint32_t *ret_uid, uint32_t *ret_gid)
{
        if (!ctx || ctx->fsuid < ctx->ids.uid_host || ctx->fsuid - ctx->ids.uid_host >= ctx->ids.count ||
            ctx->fsgid < ctx->ids.gid_host || ctx->fsgid - ctx->ids.gid_host >= ctx->ids.count)
                return -ERANGE;
        *ret_uid = ctx->ids.uid_inside + (ctx->fsuid - ctx->ids.uid_host);
        *ret_gid = ctx->ids.gid_inside + (ctx->fsgid - ctx->ids.gid_host);
        return 0;
}

int fs_as_child_begin(struct notify_call *call)
{
        int r = take_identity(call);
        if (r < 0) {
                (void)set_effective(0);
                return r;
        }
        if (own_caps.known && own_caps.effective == 0)
                return 0; /* still empty since the last operation as the child */
        return set_effective(0);
}

void fs_as_child_end(void)
{
        /* a worker: nothing, the capability comes back in fs_privileged
         * when a read of the child needs it (see own_caps); a thread
         * fs_worker_init did not set up keeps the old eager switch */
        if (!own_caps.known)
                (void)set_effective(1U << CAP_SYS_PTRACE);
}

bool fs_privileged(void)
{
        if (!own_caps.known || own_caps.effective == own_caps.resting)
                return false;
        /* a failure leaves the thread with less: the read that needed it
         * stays refused and the call fails, never widened */
        return set_effective(own_caps.resting) == 0;
}

int fs_reopen_held(int hostproc_fd, int fd, int flags)
{
        char link[64];
        snprintf(link, sizeof(link), "thread-self/fd/%d", fd);
        /* CAP_DAC_OVERRIDE for this one open only (fs-internal.h says why
         * it grants nothing the caller does not hold); the operations as
         * the child start from the empty set again (fs_as_child_begin) */
        int r = set_effective(1U << CAP_DAC_OVERRIDE);
        if (r < 0)
                return r;
        r = openat(hostproc_fd, link, (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) | O_CLOEXEC | O_NOCTTY);
        r = r < 0 ? negative_errno() : r;
        (void)set_effective(0);
        return r;
}

void fs_set_umask(mode_t um)
{
        /* this thread's fs_struct is its own (fs_worker_init unshared it)
         * and only this function sets its umask: the kernel's value is the
         * one remembered */
        if (own_umask == (int)(um & 0777))
                return;
        umask(um & 0777);
        own_umask = (int)(um & 0777);
}
