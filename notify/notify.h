/* notify/: the seccomp side of cordon. It builds the filter from a syscall
 * table, receives user notifications on worker threads, reads child memory,
 * and injects results. It knows the emulation handlers only through the
 * table it is given (fs/ and net/ fill it in via sentry/).
 *
 * Never: it includes nothing but common/ (no fs/, net/ or sentry/ header),
 * decides no policy of its own beyond the table's rows, and prints nothing:
 * failures come back as -errno for the core to report. */
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* What cordon does with one syscall (or one argument pattern of it). */
enum syscall_action {
        SC_ALLOW,   /* runs natively; listed for documentation only */
        SC_ERRNO,   /* refused in the filter with entry->err */
        SC_EMULATE, /* user notification, handled by entry->handler */
        SC_KILL,    /* kills the whole process */
};

enum syscall_support {
        SUPPORT_FULL,
        SUPPORT_PARTIAL,
};

enum arg_op {
        ARG_EQ = 1,     /* (arg & mask) == datum, mask 0 means all 64 bits */
        ARG_MASKED_EQ,  /* (arg & mask) == datum */
        ARG_MASKED_ANY, /* (arg & mask) != 0 and (arg & datum) == 0: one filter
                           rule per bit of mask (datum: bits that must be clear,
                           none of them in mask) */
        ARG_NE,         /* arg != datum (all 64 bits) */
        ARG_GE,         /* arg >= datum (all 64 bits: a value with garbage in the
                           upper half compares large, so GE rows fail closed) */
};

struct syscall_arg_cond {
        unsigned arg; /* 0..5 */
        enum arg_op op;
        uint64_t mask;
        uint64_t datum;
};

struct notify_call;
struct notify_verdict;

/* A handler fills *ret (which starts as a denial) and returns 0; a negative
 * return means the sentry itself failed (the call then gets -ret as errno
 * and the failure is counted), which is different from denying. */
typedef int (*notify_handler_t)(struct notify_call *call, struct notify_verdict *ret);

/* One row of the syscall table. The same rows generate the filter, drive the
 * dispatch and are printed by `cordon syscalls`. */
/* syscall_entry.flags */
enum {
        /* The row is trapped only when the run needs it: with --trap-all, or
         * when the policy has a rule the mount view alone cannot enforce
         * (hidden). Otherwise the sentry leaves it out of the filter and the
         * call runs natively, where the mount view enforces the same
         * decision. The sentry filters rows before building the filter and
         * the engine (sentry/plan.c). */
        SC_F_PATH_POLICY = 1u << 0,
        /* With SC_F_PATH_POLICY: the call changes the file system (mkdir,
         * unlink, rename, chmod, ...). A policy with write "ask" rules needs
         * these trapped (the sentry asks before them) while calls that only
         * read stay native. */
        SC_F_PATH_WRITE = 1u << 1,
        /* The row is a conditional form of an SC_F_PATH_POLICY row of the
         * same call, in force only when that one is left out: the forms
         * the mount view cannot decide alone are still trapped, the rest
         * runs natively. SC_F_PATH_FAST rows are in force under a write ask
         * rule (every open that writes, creates or truncates trapped);
         * SC_F_PATH_FAST_NOASK rows without one (an exclusive create,
         * which cannot open an existing file, native too). */
        SC_F_PATH_FAST = 1u << 2,
        SC_F_PATH_FAST_NOASK = 1u << 3,
        /* An exec row (execve, execveat): left out when execs run natively,
         * where the view alone decides what may run (no exec rule in the
         * policy, Landlock's execute right in force, the sandbox's own empty
         * binfmt_misc; sentry/plan.c and init.c say when). */
        SC_F_EXEC = 1u << 4,
        /* In force only when execs run natively: what the trapped exec
         * would otherwise have told the sentry (see the clone row). */
        SC_F_EXEC_NATIVE = 1u << 5,
};

struct syscall_entry {
        const char *name; /* resolved with libseccomp for x86_64 */
        int nr;           /* used when libseccomp does not know the name (newer syscalls) */
        enum syscall_action action;
        int err; /* for SC_ERRNO */
        unsigned n_cond;
        struct syscall_arg_cond cond[3]; /* all must hold for the row to apply */
        notify_handler_t handler;        /* for SC_EMULATE */
        unsigned ctx;                    /* which of the engine's contexts the handler gets as userdata */
        enum syscall_support support;
        const char *note;
        unsigned flags; /* SC_F_* */
};

/* --- filter --- */

/* Builds the classic-BPF program for the table: architecture check (anything
 * but x86_64 kills the process), x32 numbers refused, then the rows. *ret is
 * malloc'd; free ret->filter. Returns 0 or -errno with *ret_bad naming the
 * offending row when one cannot be expressed. */
int notify_filter_build(const struct syscall_entry *table, size_t n, struct sock_fprog *ret, const char **ret_bad);

/* The classic-BPF program of a libseccomp filter context (a scmp_filter_ctx,
 * which libseccomp declares as void *), compiled without loading it: so that
 * the compile can run before, or beside, the point where it is loaded.
 * *ret is malloc'd; free ret->filter. */
int notify_filter_export(void *scmp_ctx, struct sock_fprog *ret);

/* Runs a built filter on one seccomp_data without loading it (the unit tests'
 * and `cordon syscalls --explain` interpreter). Returns the SECCOMP_RET_*
 * value, or -EINVAL for a malformed program. */
int64_t notify_filter_eval(const struct sock_fprog *prog, const struct seccomp_data *data);
/* The same, counting in *ret_steps the instructions it ran. */
int64_t notify_filter_eval_steps(const struct sock_fprog *prog, const struct seccomp_data *data, unsigned *ret_steps);

/* Installs prog on the calling thread with a new listener; returns the
 * listener fd or -errno. Must run after PR_SET_NO_NEW_PRIVS. Uses
 * SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV when the kernel has it, so a child
 * thread whose call the sentry has started cannot be interrupted by a
 * non-fatal signal into a half-done or repeated operation. */
int notify_filter_install(const struct sock_fprog *prog, bool *ret_wait_killable);

/* --- the engine --- */

struct notify_engine;

#define NOTIFY_MAX_CONTEXTS 4

struct notify_engine_config {
        const struct syscall_entry *table;
        size_t n_table;
        void *userdata;                      /* for thread_init */
        void *contexts[NOTIFY_MAX_CONTEXTS]; /* a handler gets contexts[entry->ctx] as call->userdata */
        int (*thread_init)(void *userdata);  /* run once in each worker before it serves */
        unsigned min_workers;                /* started up front */
        unsigned max_workers;                /* more are started while all are busy, up to this */
        /* who decides calls a handler holds for a person (notify_ask); NULL:
         * every ask is denied at once */
        const struct notify_approver *approver;
        /* Execs are not trapped (no notify_wait_injected before them): an
         * injected fd open for writing is installed, our copy closed, and
         * only then the call answered, so that no exec the caller makes next
         * meets our copy (ETXTBSY). Costs a second wakeup per such call. */
        bool execs_untrapped;
};

/* What the engine asks of the kernel once per process (the size of its
 * notification structs, through seccomp()): a caller that will refuse itself
 * seccomp() asks first. 0, or -errno as the engine's start would fail. */
int notify_engine_prepare(void);
/* Takes ownership of listener_fd. Starts the worker threads. */
int notify_engine_start(const struct notify_engine_config *cfg, int listener_fd, struct notify_engine **ret);
/* Whether the kernel accepted SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP. */
bool notify_engine_sync_wakeup(const struct notify_engine *e);
/* Whether the engine takes the sandbox's filter to wait killably
 * (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV: the kernel knows it, so
 * notify_filter_install set it, and no test forced it off): only then is
 * an fd injected in two steps (ADDFD, then SEND; see execs_untrapped). */
bool notify_engine_wait_killable(const struct notify_engine *e);
/* Count of notifications served per syscall number (for --stats). */
uint64_t notify_engine_count(const struct notify_engine *e, int nr);
/* What serving one syscall number has cost: calls, and the sentry's time
 * on them from the receive to the reply that wakes the caller (the
 * kernel's own round trip, bench/micro/floor.c, comes on top). */
struct notify_call_stats {
        uint64_t count;
        uint64_t total_ns;
        uint64_t max_ns;
};
void notify_engine_call_stats(const struct notify_engine *e, int nr, struct notify_call_stats *ret);
/* Stops serving and frees the engine; workers blocked in a receive are
 * woken. Safe to call once the child is gone. */
void notify_engine_stop(struct notify_engine *e);
/* notify_engine_stop's first half, which waits for nothing: no call is
 * received any more and every thread of the engine is told to end (a
 * handler serving a call finishes it). notify_engine_stop must still be
 * called; it then joins and frees. */
void notify_engine_stop_begin(struct notify_engine *e);

/* --- what a handler sees --- */

struct notify_ask;

struct notify_call {
        const struct seccomp_notif *req;
        int listener_fd;
        int hostproc_fd; /* the host's /proc, opened before any worker chroots */
        void *userdata;
        struct notify_engine *engine;
        /* Set when a held call is served again after a person approved it:
         * what was approved. notify_ask() lets exactly that request through
         * and refuses any other (see there). NULL on a first serving. */
        const struct notify_ask *approved;
};

enum verdict_kind {
        VERDICT_ERROR,    /* the call fails with -error */
        VERDICT_VALUE,    /* the call returns value */
        VERDICT_FD,       /* fd is injected into the child and returned (ADDFD|SEND) */
        VERDICT_CONTINUE, /* the kernel runs the call; only where no decision read child memory */
        VERDICT_HELD,     /* notify_ask() holds the call for a person: answered later, not now */
};

struct notify_verdict {
        enum verdict_kind kind;
        int error;
        int64_t value;
        int fd;            /* owned by the verdict; closed by the engine after injection */
        unsigned fd_flags; /* O_CLOEXEC or 0, for the child's new fd */
};

/* The calling worker thread's way back to the privilege that reading a
 * trapped thread's memory and its /proc/TID entries may need
 * (CAP_SYS_PTRACE). A worker stays without it after acting as the child
 * (fs/worker.c) and usually needs none: operations on the trapped thread
 * are tried as the thread is, and tried once more after
 * notify_privileged() when they were refused for want of it — the same
 * result as with the capability always on, reached without two capset
 * calls per emulated call. The hook returns whether it raised anything.
 * Per thread; none (the default) raises nothing. */
void notify_set_privilege_hook(bool (*ensure)(void));
bool notify_privileged(void);
/* openat(hostproc_fd, path, flags | O_CLOEXEC) for a trapped thread's
 * /proc/TID entry (path relative to /proc), tried again after
 * notify_privileged() when refused or hidden. The fd, or -1 with errno. */
int notify_proc_open(int hostproc_fd, const char *path, int flags);
/* One read(2) of such an entry (notify_proc_open) into buf, NUL-terminated:
 * the bytes read, or -errno. */
ssize_t notify_proc_read(int hostproc_fd, const char *path, char *buf, size_t size);

/* Around a handler's system call that may wait on the sandbox's own
 * processes (an open of a FIFO waits for its other end): while it lasts,
 * the engine's watchdog looks at the call every few milliseconds and, once
 * its caller is gone (killed while the call waited), interrupts the
 * worker's system call (EINTR), so that what it waits for never happens
 * for nobody and the worker is not held for ever; likewise once the caller
 * has a signal to take (notify_block_interrupted). The handler then checks
 * notify_id_valid and gives up, or tries again on a stray EINTR. Calls
 * nothing outside a worker (a resume thread): no-ops there. */
void notify_block_begin(const struct notify_call *call);
void notify_block_end(const struct notify_call *call);
/* After an EINTR inside the block: whether the watchdog interrupted the
 * worker because the caller has a signal to take (notify/signal.c). The
 * handler then gives up and answers -NOTIFY_ERESTARTSYS, as the kernel's
 * own interrupted wait would: the caller's handler runs, and the call is
 * restarted (SA_RESTART, or no handler: a stop) or fails with EINTR. */
bool notify_block_interrupted(const struct notify_call *call);
/* the kernel's ERESTARTSYS (include/linux/errno.h, not in uapi) */
#define NOTIFY_ERESTARTSYS 512

/* Copies len bytes at addr in the calling thread's memory (process_vm_readv,
 * falling back to /proc/TID/mem). 0 or -EFAULT/-ESRCH. */
int notify_read_mem(const struct notify_call *call, uint64_t addr, void *buf, size_t len);
/* Copies len bytes from buf to addr in the calling thread's memory, as the
 * kernel's copy to user memory would (process_vm_writev, falling back to
 * /proc/TID/mem; a read-only or unmapped range is -EFAULT in both). Checks
 * the notification is still valid just before writing. 0 or -EFAULT/-ESRCH. */
int notify_write_mem(const struct notify_call *call, uint64_t addr, const void *buf, size_t len);
/* Copies a NUL-terminated string of at most size-1 bytes. Returns its length,
 * -ENAMETOOLONG if no NUL within size bytes, -EFAULT for a bad pointer. */
ssize_t notify_read_string(const struct notify_call *call, uint64_t addr, char *buf, size_t size);
/* 0 if the notification is still pending (the thread still waits for us and
 * its pid has not been recycled), -ENOENT otherwise. Call after every read of
 * child memory and before acting on it. */
int notify_id_valid(const struct notify_call *call);
/* Opens (O_PATH) the directory a *at() call resolves relative paths against:
 * the thread's cwd for AT_FDCWD, else its fd dirfd. Returns the fd or -errno
 * (-EBADF when the child has no such fd). */
/* stat(2) of the caller's dirfd (AT_FDCWD: its working directory), the
 * object it names, without opening it: 0 or -errno. */
int notify_stat_dirfd(const struct notify_call *call, int dirfd, struct stat *ret);
int notify_open_dirfd(const struct notify_call *call, int dirfd);
/* Installs srcfd in the calling thread's process without answering the
 * call (SECCOMP_IOCTL_NOTIF_ADDFD): at target_fd when >= 0 (SETFD, replacing
 * what is there, as dup2 would), else at the lowest free number. fd_flags is
 * O_CLOEXEC or 0. Returns the fd number in the child, or -errno (-ENOENT: the
 * call is gone). The handler then answers with a value of its own, e.g. 0
 * for a connect() whose socket was swapped for a connected one. */
int notify_install_fd(const struct notify_call *call, int srcfd, int target_fd, unsigned fd_flags);

/* A duplicate of the caller's fd (pidfd_getfd): the same open file, for
 * inspecting a socket's family, type and options. Returns the fd or -errno
 * (-EBADF when the child has no such fd). */
int notify_dup_child_fd(const struct notify_call *call, int fd);
/* Whether the caller's fd has FD_CLOEXEC set (from /proc/TID/fdinfo).
 * 1, 0 or -errno. */
int notify_child_fd_cloexec(const struct notify_call *call, int fd);

/* The calling thread's filesystem identity, in the sentry's namespace's
 * ids (read from /proc/TID/status, then checked to be still the trapped
 * thread's with notify_id_valid). */
#define NOTIFY_MAX_GROUPS 256
struct notify_creds {
        uint32_t fsuid, fsgid;
        uint32_t groups[NOTIFY_MAX_GROUPS];
        size_t n_groups;
        uint64_t cap_effective;
};
/* 0, -E2BIG beyond NOTIFY_MAX_GROUPS groups, or -errno (-ESRCH: gone). */
int notify_creds(const struct notify_call *call, struct notify_creds *ret);

/* The calling thread's pid and tgid as seen inside its pid namespace. */
int notify_ns_ids(const struct notify_call *call, pid_t *ret_nspid, pid_t *ret_nstgid);
/* The calling thread's umask, or -errno. Cached per thread (notify/umask.c
 * says when an entry is trusted); a miss reads /proc/TID/status. */
int notify_umask(const struct notify_call *call);
/* The umask(2) handler calls this before answering CONTINUE: the cache is
 * dropped and not refilled until the change is known to be applied. */
void notify_umask_changing(const struct notify_call *call);
/* The calling thread's working directory stat()ed: only st_dev, st_ino and
 * st_mode are filled in. Cached per thread beside the umask (notify/umask.c),
 * which is right only while every chdir(2) and fchdir(2) is trapped and its
 * handler calls notify_cwd_changing first: the filter does that where native
 * write opens are on (fs_context.native_writes), and only there may this be
 * called. A miss stats /proc/TID/cwd. 0 or -errno. */
int notify_stat_cwd(const struct notify_call *call, struct stat *ret);
/* The chdir(2) and fchdir(2) handlers call this before answering CONTINUE:
 * as notify_umask_changing, for the working directory. */
void notify_cwd_changing(const struct notify_call *call);
/* A thread whose umask the cache could not follow (one with an fs_struct
 * of its own, when execs run natively): the cache is off for the run. */
void notify_umask_untrackable(const struct notify_call *call);
/* The execve handlers call this first: a thread that is not its group's
 * leader takes over the leader's tid when its exec succeeds, so the cache
 * treats it as a umask change. */
void notify_exec_starting(const struct notify_call *call);
/* The execve handlers call this before answering CONTINUE: it waits until
 * no fd the engine injected is still open here too. The caller of an
 * injection runs again before the engine closes its own copy (ADDFD with
 * SEND), and a file still open for writing here would make an execve of it
 * fail with ETXTBSY. */
void notify_wait_injected(const struct notify_call *call);
/* For tests and --stats: what the cache did. */
struct notify_umask_stats {
        uint64_t hits;
        uint64_t misses;
        uint64_t cwd_hits; /* notify_stat_cwd's */
        uint64_t cwd_misses;
        unsigned pending; /* umask/execve calls not yet known to be over */
        bool off;         /* a change could not be tracked: the cache is off for this run */
};
void notify_umask_get_stats(const struct notify_engine *e, struct notify_umask_stats *ret);

/* Makes cordon behave as if the kernel lacked a feature, so tests exercise
 * the fallback or the refusal: "process_vm_readv" (child memory through
 * /proc/TID/mem), "openat2" (component walks without symlinks; the child's
 * openat2 gets ENOSYS), "sync_wakeup" (served without it),
 * "clone_into_cgroup" (the sentry's clone of init: the sentry moves it into
 * its cgroup v2 group instead), "wait_killable_recv" (the sandbox's filter
 * without it: a signal can interrupt an emulated call, and an fd is
 * injected and the call answered in one step), "pidfd_getfd" and "addfd"
 * (required: the run refuses to start). -EINVAL for an unknown name. */
int notify_force_fallback(const char *feature);
/* Whether feature (a name notify_force_fallback knows) was forced absent. */
bool notify_feature_absent(const char *feature);

/* For `cordon check`: what the running kernel offers. */
struct notify_features {
        bool user_notif;
        bool addfd;
        bool addfd_send;
        bool wait_killable_recv;
        bool sync_wakeup;
};
int notify_probe_features(struct notify_features *ret);
/* Whether the kernel knows SECCOMP_IOCTL_NOTIF_ADDFD, asked on a listener
 * with no notification pending (nothing is injected). */
bool notify_listener_has_addfd(int listener_fd);

/* --- calls held for a person's decision (approvals) ---
 *
 * A handler that reaches a call a policy rule marks "ask" describes it in a
 * struct notify_ask and calls notify_ask(). The engine hands it to the
 * approver and, unless the approver decides at once (a remembered answer,
 * or nobody to ask), keeps the notification pending without holding a
 * worker: the calling thread waits in the kernel, every other thread and
 * process of the sandbox goes on being served. When the approver decides,
 * notify_hold_decide() queues the call to a resume thread of the engine
 * (one that entered the view as the workers did): a denial is answered
 * with EACCES; an approval serves the call again from the start, with
 * call->approved set, and the handler proceeds only if what it resolves
 * this time is the very request that was approved (a path buffer swapped
 * by another thread while the call waited makes it fail with EACCES: the
 * approval is never stretched to something else). */

#define NOTIFY_ASK_TARGET_MAX  4200 /* a path, or two (rename), or host:port */
#define NOTIFY_ASK_CMDLINE_MAX 256
#define NOTIFY_ASK_BYTES_MAX   64

struct notify_ask {
        char capability[16];                       /* "egress", "write", "exec" */
        char target[NOTIFY_ASK_TARGET_MAX];        /* "host:port", or a path in the view */
        char syscall[32];                          /* the syscall's name */
        char cmdline[NOTIFY_ASK_CMDLINE_MAX];      /* the caller's, arguments joined by spaces (filled by notify_ask) */
        uint32_t pid;                              /* the caller's tid, as the host sees it (filled by notify_ask) */
        unsigned char bytes[NOTIFY_ASK_BYTES_MAX]; /* the first bytes the call sends, where known */
        size_t n_bytes;
};

struct notify_hold;

/* The approver (sentry/approvals/approvals.c). ask returns 1: allowed now (a
 * remembered answer; the hold is not kept); 0: the approver keeps hold and
 * will call notify_hold_decide() on it exactly once, from any thread, maybe
 * before ask has returned; -EACCES: denied now (the hold is not kept).
 * mismatch records a re-served call that resolved to something other than
 * what was approved (it fails with EACCES). */
struct notify_approver {
        int (*ask)(void *userdata, const struct notify_ask *q, struct notify_hold *hold);
        void (*mismatch)(void *userdata, const struct notify_ask *approved, const struct notify_ask *now);
        void *userdata;
};

/* Asks for q (capability, target, syscall and bytes filled in by the
 * handler). 1: go on and perform the call now (approved earlier for this
 * very request, or remembered); 0: *ret is set (held for a person, or
 * denied with EACCES) and the handler returns 0 at once; -errno: the
 * sentry failed. */
int notify_ask(struct notify_call *call, struct notify_ask *q, struct notify_verdict *ret);
/* The approver's answer to a hold it kept; frees the hold. */
void notify_hold_decide(struct notify_hold *h, bool approved);
/* Whether the held call's thread still waits (it may have been killed). */
bool notify_hold_alive(const struct notify_hold *h);
