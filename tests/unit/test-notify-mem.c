#include "config.h"

/* Unit tests for reading a trapped thread's memory and /proc facts
 * (notify/mem.c) and for the notification engine end to end
 * (notify/engine.c): a forked child installs a filter built from a small
 * table whose openat row is emulated by a test handler, hands the listener to
 * the test over a socketpair, and makes openat calls with crafted arguments.
 * The handler does what args[5] (the "op") says — read a string, read memory,
 * open the dirfd, read the umask, ... — and answers with a value the child
 * compares with the expectation. The same string and memory cases also run
 * directly against the test's own memory, and through the /proc/TID/mem
 * fallback. */

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/audit.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#include "common/util.h"
#include "notify/notify.h"

#define PAGE   4096UL
#define U64(x) ((uint64_t)(x))

/* ------------------------------------------------------------------------ */
/* what the test handler can be asked to do (openat's args[5], which the
 * kernel ignores; args[2..4] are the op's parameters p1..p3) */

enum op {
        OP_STRING = 1, /* notify_read_string(a1, size p1) -> its length */
        OP_HASH,       /* notify_read_string(a1, size p1) -> hash of the string; p2: sleep ms */
        OP_MEM,        /* notify_read_mem(a1, p1 bytes) -> hash of the bytes */
        OP_DIRFD,      /* notify_open_dirfd((int)a0) -> 1 when (st_dev, st_ino) == (p1, p2) */
        OP_UMASK,      /* notify_umask() */
        OP_NSIDS,      /* notify_ns_ids() -> nspid | nstgid << 32 */
        OP_FD,         /* VERDICT_FD with /dev/null, fd_flags p1 */
        OP_FD_FAIL,    /* VERDICT_FD with /dev/null, then the handler fails with -p1 */
        OP_VALUE,      /* VERDICT_VALUE p1 */
        OP_ERROR,      /* VERDICT_ERROR p1 */
        OP_FAIL,       /* the handler returns -p1 (the sentry failed) */
        OP_CONTINUE,   /* VERDICT_CONTINUE: the kernel runs openat(a0, a1, p1) */
        OP_IDVALID,    /* 1: the live id is valid, +2: a made-up id is not */
        OP_SETFD,      /* notify_install_fd(/dev/null, target p1, flags p2), then VALUE of its result */
        OP_WRITE,      /* notify_write_mem(a1, p1 bytes of the value p2) -> 0 */
        OP_CWD,        /* notify_stat_cwd() -> 1 when a directory with (st_dev, st_ino) == (p1, p2) */
};

#define MAX_READ  16384
#define FNV_BASIS UINT32_C(0x811c9dc5)

static uint32_t fnv(const void *p, size_t n)
{
        const unsigned char *s = p;
        uint32_t h = FNV_BASIS;
        for (size_t i = 0; i < n; i++) {
                h ^= s[i];
                h *= UINT32_C(16777619);
        }
        return h;
}
/* a positive value that cannot be mistaken for -errno by syscall(2) */
static int64_t hash_value(const void *p, size_t n)
{
        return (int64_t)(fnv(p, n) & 0x7fffffff);
}

/* What the handler saw; shared by all workers, reset per test. */
struct results {
        atomic_int handled;
        atomic_int id_invalid;   /* notify_id_valid() failed right after a read */
        atomic_int unknown_op;   /* an openat the test did not make */
        atomic_int bad_userdata; /* call->userdata was not ours */
        atomic_int thread_inits;
        atomic_int thread_init_bad_userdata;
        atomic_int in_flight, max_in_flight;
        _Atomic int64_t last_pid; /* req->pid of the last call */
        atomic_bool stopped;      /* notify_engine_stop() has returned */
        atomic_int ran_after_stop;
};

static struct results R;
/* test_fd_signals: shared with the child, set when its call is received */
static atomic_int *storm_received;
static bool direct_mode; /* ops run against a made-up request: no live id to check */

static void results_reset(void)
{
        memset(&R, 0, sizeof(R));
}

static void set_error(struct notify_verdict *v, int64_t negative)
{
        v->kind = VERDICT_ERROR;
        v->error = (int)-negative;
}

static void set_value(struct notify_verdict *v, int64_t value)
{
        v->kind = VERDICT_VALUE;
        v->value = value;
}

static void check_still_valid(struct notify_call *call)
{
        if (!direct_mode && notify_id_valid(call) != 0)
                atomic_fetch_add(&R.id_invalid, 1);
}

/* The op itself: fills *v and returns what the handler returns. */
static int do_op(struct notify_call *call, struct notify_verdict *v)
{
        const __u64 *a = call->req->data.args;
        switch ((enum op)a[5]) {
        case OP_STRING:
        case OP_HASH: {
                static _Thread_local char buf[MAX_READ];
                size_t size = a[2] <= sizeof(buf) ? (size_t)a[2] : sizeof(buf);
                ssize_t n = notify_read_string(call, a[1], buf, size);
                check_still_valid(call);
                if (n < 0) {
                        set_error(v, n);
                        return 0;
                }
                if ((size_t)n >= size || buf[n] != '\0' || strlen(buf) != (size_t)n) {
                        set_error(v, -EBADMSG); /* the length does not describe the copy */
                        return 0;
                }
                if (a[5] == OP_HASH && a[3] > 0)
                        nanosleep(&(struct timespec){0, (long)a[3] * 1000000L}, NULL);
                set_value(v, a[5] == OP_STRING ? n : hash_value(buf, (size_t)n));
                return 0;
        }
        case OP_MEM: {
                static _Thread_local char buf[MAX_READ];
                if (a[2] > sizeof(buf)) {
                        set_error(v, -E2BIG);
                        return 0;
                }
                memset(buf, 0x5a, sizeof(buf));
                int r = notify_read_mem(call, a[1], buf, (size_t)a[2]);
                check_still_valid(call);
                if (r < 0)
                        set_error(v, r);
                else
                        set_value(v, hash_value(buf, (size_t)a[2]));
                return 0;
        }
        case OP_WRITE: {
                static _Thread_local char buf[MAX_READ];
                if (a[2] > sizeof(buf)) {
                        set_error(v, -E2BIG);
                        return 0;
                }
                memset(buf, (int)a[3], (size_t)a[2]);
                int r = notify_write_mem(call, a[1], buf, (size_t)a[2]);
                if (r < 0)
                        set_error(v, r);
                else
                        set_value(v, 0);
                return 0;
        }
        case OP_DIRFD: {
                int fd = notify_open_dirfd(call, (int)a[0]);
                if (fd < 0) {
                        set_error(v, fd);
                        return 0;
                }
                struct stat st;
                int r = fstat(fd, &st);
                close(fd);
                if (r < 0) {
                        set_error(v, -errno);
                        return 0;
                }
                if (!S_ISDIR(st.st_mode))
                        set_value(v, 3);
                else
                        set_value(v, st.st_dev == (dev_t)a[2] && st.st_ino == (ino_t)a[3] ? 1 : 2);
                return 0;
        }
        case OP_CWD: {
                struct stat st;
                int r = notify_stat_cwd(call, &st);
                if (r < 0)
                        set_error(v, r);
                else if (!S_ISDIR(st.st_mode))
                        set_value(v, 3);
                else
                        set_value(v, st.st_dev == (dev_t)a[2] && st.st_ino == (ino_t)a[3] ? 1 : 2);
                return 0;
        }
        case OP_UMASK: {
                int r = notify_umask(call);
                if (r < 0)
                        set_error(v, r);
                else
                        set_value(v, r);
                return 0;
        }
        case OP_NSIDS: {
                pid_t p = 0, t = 0;
                int r = notify_ns_ids(call, &p, &t);
                if (r < 0)
                        set_error(v, r);
                else
                        set_value(v, (int64_t)p | (int64_t)t << 32);
                return 0;
        }
        case OP_FD:
        case OP_FD_FAIL: {
                if (storm_received)
                        atomic_store(storm_received, 1); /* test_fd_signals: the call is received */
                int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
                v->kind = VERDICT_FD;
                v->fd = fd;
                v->fd_flags = a[5] == OP_FD ? (unsigned)a[2] : O_CLOEXEC;
                return a[5] == OP_FD ? 0 : -(int)a[2];
        }
        case OP_SETFD: {
                int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (fd < 0)
                        return -errno;
                int r = notify_install_fd(call, fd, (int)a[2], (unsigned)a[3]);
                close(fd);
                if (r < 0)
                        set_error(v, r);
                else
                        set_value(v, r);
                return 0;
        }
        case OP_VALUE:
                set_value(v, (int64_t)a[2]);
                return 0;
        case OP_ERROR:
                v->kind = VERDICT_ERROR;
                v->error = (int)a[2];
                return 0;
        case OP_FAIL:
                return -(int)a[2];
        case OP_CONTINUE:
                v->kind = VERDICT_CONTINUE;
                return 0;
        case OP_IDVALID: {
                struct seccomp_notif other = *call->req;
                other.id += 0x10000000;
                struct notify_call fake = *call;
                fake.req = &other;
                set_value(v, (notify_id_valid(call) == 0 ? 1 : 0) + (notify_id_valid(&fake) == -ENOENT ? 2 : 0));
                return 0;
        }
        }
        atomic_fetch_add(&R.unknown_op, 1);
        set_error(v, -EINVAL);
        return 0;
}

/* Emulates openat(2) for the test: does what args[5] says. */
static int h_openat(struct notify_call *call, struct notify_verdict *ret)
{
        if (call->userdata != &R)
                atomic_fetch_add(&R.bad_userdata, 1);
        if (atomic_load(&R.stopped))
                atomic_fetch_add(&R.ran_after_stop, 1);
        atomic_fetch_add(&R.handled, 1);
        atomic_store(&R.last_pid, (int64_t)call->req->pid);
        int now = atomic_fetch_add(&R.in_flight, 1) + 1;
        int max = atomic_load(&R.max_in_flight);
        while (now > max && !atomic_compare_exchange_weak(&R.max_in_flight, &max, now))
                ;
        int r = do_op(call, ret);
        atomic_fetch_sub(&R.in_flight, 1);
        return r;
}

/* Emulates unlinkat(2) for the test: proves dispatch goes by number. */
static int h_unlinkat(struct notify_call *call, struct notify_verdict *ret)
{
        set_value(ret, 7);
        return 0;
}

static int count_thread_init(void *userdata)
{
        if (userdata != &R)
                atomic_fetch_add(&R.thread_init_bad_userdata, 1);
        atomic_fetch_add(&R.thread_inits, 1);
        return 0;
}

/* Emulates umask(2) as cordon's table does: the cache is told, the kernel
 * runs it. Without this row the umask cache would keep stale values. */
static int h_umask(struct notify_call *call, struct notify_verdict *ret)
{
        notify_umask_changing(call);
        ret->kind = VERDICT_CONTINUE;
        return 0;
}

/* chdir(2) and fchdir(2) as cordon's table has them where native write
 * opens are on: the working directory's cache is told, the kernel runs it. */
static int h_chdir(struct notify_call *call, struct notify_verdict *ret)
{
        notify_cwd_changing(call);
        ret->kind = VERDICT_CONTINUE;
        return 0;
}

static const struct syscall_entry test_table[] = {
        {.name = "openat", .action = SC_EMULATE, .handler = h_openat, .note = "the test handler"},
        {.name = "umask", .action = SC_EMULATE, .handler = h_umask, .note = "noted, then run by the kernel"},
        {.name = "chdir", .action = SC_EMULATE, .handler = h_chdir, .note = "noted, then run by the kernel"},
        {.name = "fchdir", .action = SC_EMULATE, .handler = h_chdir, .note = "noted, then run by the kernel"},
        {.name = "unlinkat", .action = SC_EMULATE, .handler = h_unlinkat, .note = "answers 7"},
        {.name = "mkdirat", .action = SC_EMULATE, .handler = NULL, .note = "notified but no handler: ENOSYS"},
        {.name = "getppid", .action = SC_ERRNO, .err = EPERM, .note = "refused in the filter"},
};

/* ------------------------------------------------------------------------ */
/* cases: one trapped openat (or a custom run in the child) and its expected result */

struct mcase {
        const char *what;
        int op;
        uint64_t a0, a1, p1, p2, p3;
        int64_t want;
        int64_t (*run)(const struct mcase *c); /* in the child instead of the plain call */
        bool proc_mem_differs;                 /* /proc/TID/mem reads PROT_NONE pages (FOLL_FORCE) */
};

#define MAX_CASES 64

/* In the child: the trapped call, -errno or its result. */
static int64_t trap(int op, uint64_t a0, uint64_t a1, uint64_t p1, uint64_t p2, uint64_t p3)
{
        long r = syscall(__NR_openat, a0, a1, p1, p2, p3, (uint64_t)op);
        return r < 0 ? -(int64_t)errno : r;
}

static int64_t run_case(const struct mcase *c)
{
        if (c->run)
                return c->run(c);
        return trap(c->op, c->a0, c->a1, c->p1, c->p2, c->p3);
}

/* In the test process: the same op against a made-up request for our own
 * thread, through the very same handler code. */
static int64_t run_case_direct(const struct mcase *c)
{
        int procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(procfd, 0);
        struct seccomp_notif req = {.id = 1, .pid = (uint32_t)gettid()};
        req.data.nr = __NR_openat;
        req.data.arch = AUDIT_ARCH_X86_64;
        uint64_t args[6] = {c->a0, c->a1, c->p1, c->p2, c->p3, (uint64_t)c->op};
        memcpy(req.data.args, args, sizeof(args));
        struct notify_call call = {.req = &req, .listener_fd = -1, .hostproc_fd = procfd, .userdata = &R};
        struct notify_verdict v = {.kind = VERDICT_ERROR, .error = EACCES, .fd = -1};
        direct_mode = true;
        int r = do_op(&call, &v);
        direct_mode = false;
        close(procfd);
        if (r < 0)
                return r;
        ck_assert_int_ne(v.kind, VERDICT_FD);
        if (v.kind == VERDICT_VALUE)
                return v.value;
        return -(int64_t)v.error;
}

static void report_results(const struct mcase *cases, size_t n, const int64_t *got, const char *how)
{
        int bad = 0;
        for (size_t i = 0; i < n; i++)
                if (got[i] != cases[i].want) {
                        fprintf(stderr, "%s: case \"%s\": got %" PRId64 " (%s), expected %" PRId64 " (%s)\n", how,
                                cases[i].what, got[i], got[i] < 0 && got[i] > -4096 ? strerror((int)-got[i]) : "",
                                cases[i].want,
                                cases[i].want < 0 && cases[i].want > -4096 ? strerror((int)-cases[i].want) : "");
                        bad++;
                }
        for (size_t i = 0; i < n; i++)
                ck_assert_msg(got[i] == cases[i].want,
                              "%s: case \"%s\": got %" PRId64 ", expected %" PRId64
                              " (%d of %zu cases wrong, all listed on stderr)",
                              how, cases[i].what, got[i], cases[i].want, bad, n);
}

/* ------------------------------------------------------------------------ */
/* the harness: a child with the filter, the engine in the test process */

struct scenario {
        const struct mcase *cases;
        size_t n;
        bool new_pidns;
        bool execs_untrapped; /* notify_engine_config's: fds open for writing injected in two steps */
        unsigned min_workers, max_workers;
        int (*thread_init)(void *userdata);
};

struct outcome {
        int64_t got[MAX_CASES];
        pid_t child; /* in our pid namespace */
        uint64_t count_openat, count_unlinkat, count_mkdirat;
        int fds_before, fds_after;
        struct notify_umask_stats umask;
        bool wait_killable; /* the engine took the filter to wait killably */
};

static int64_t child_got[MAX_CASES];

static void on_alarm(int sig)
{
        static const char msg[] = "test child: timed out\n";
        (void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
        _exit(124);
}

static int send_fd(int sock, int status, int fd)
{
        char cbuf[CMSG_SPACE(sizeof(int))] = {0};
        struct iovec iov = {&status, sizeof(status)};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
        if (fd >= 0) {
                mh.msg_control = cbuf;
                mh.msg_controllen = sizeof(cbuf);
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &fd, sizeof(int));
        }
        return sendmsg(sock, &mh, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

/* Returns the fd, or the child's negative status, or -errno. */
static int recv_fd(int sock)
{
        int status = -EIO;
        char cbuf[CMSG_SPACE(sizeof(int))] = {0};
        struct iovec iov = {&status, sizeof(status)};
        struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof(cbuf)};
        ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
        if (n < 0)
                return -errno;
        if (n != sizeof(status))
                return -EPIPE;
        struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                int fd;
                memcpy(&fd, CMSG_DATA(c), sizeof(int));
                return fd;
        }
        return status < 0 ? status : -EPROTO;
}

_noreturn_ static void child_main(const struct scenario *sc, const struct sock_fprog *prog, int sock)
{
        struct sigaction sa = {.sa_handler = on_alarm};
        sigaction(SIGALRM, &sa, NULL);
        alarm(20);
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
                (void)send_fd(sock, -errno, -1);
                _exit(2);
        }
        int lfd = notify_filter_install(prog, NULL);
        if (lfd < 0) {
                (void)send_fd(sock, lfd, -1);
                _exit(3);
        }
        if (send_fd(sock, 0, lfd) < 0)
                _exit(4);
        close(lfd); /* the sentry holds the only copy now */

        /* From here on every openat goes to the test's engine. */
        for (size_t i = 0; i < sc->n; i++)
                child_got[i] = run_case(&sc->cases[i]);
        if (write_all(sock, child_got, sc->n * sizeof(int64_t)) < 0)
                _exit(5);
        _exit(0);
}

static int count_fds(void)
{
        DIR *d = opendir("/proc/self/fd");
        ck_assert_ptr_nonnull(d);
        int n = 0;
        struct dirent *de;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        n++;
        closedir(d);
        return n;
}

/* Forks the child of a scenario; returns the listener it sent us. */
static int spawn_child(const struct scenario *sc, int *ret_sock, pid_t *ret_pid)
{
        struct sock_fprog prog;
        const char *bad = NULL;
        int r = notify_filter_build(test_table, ELEMENTSOF(test_table), &prog, &bad);
        ck_assert_msg(r == 0, "notify_filter_build: %s at %s", strerror(-r), bad ? bad : "?");

        int sp[2];
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
        pid_t pid;
        if (sc->new_pidns)
                /* a bare clone: the child is init of a new pid namespace */
                pid = (pid_t)syscall(__NR_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL, 0);
        else
                pid = fork();
        ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
        if (pid == 0) {
                close(sp[0]);
                child_main(sc, &prog, sp[1]);
        }
        close(sp[1]);
        free(prog.filter);

        int lfd = recv_fd(sp[0]);
        if (lfd < 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                ck_abort_msg("the child could not install the filter: %s", strerror(-lfd));
        }
        *ret_sock = sp[0];
        *ret_pid = pid;
        return lfd;
}

static void run_scenario(const struct scenario *sc, struct outcome *out)
{
        ck_assert_uint_le(sc->n, MAX_CASES);
        memset(out, 0, sizeof(*out));
        out->fds_before = count_fds();
        alarm(45); /* a backstop for CK_FORK=no; Check's own timeout is shorter */
        int sock;
        pid_t pid;
        int lfd = spawn_child(sc, &sock, &pid);
        out->child = pid;
        int r;
        results_reset();
        struct notify_engine_config cfg = {
                .table = test_table,
                .n_table = ELEMENTSOF(test_table),
                .userdata = &R,
                .contexts = {&R},
                .thread_init = sc->thread_init,
                .min_workers = sc->min_workers,
                .max_workers = sc->max_workers,
                .execs_untrapped = sc->execs_untrapped,
        };
        struct notify_engine *e = NULL;
        r = notify_engine_start(&cfg, lfd, &e);
        if (r < 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                ck_abort_msg("notify_engine_start: %s", strerror(-r));
        }

        ssize_t n = read_full(sock, out->got, sc->n * sizeof(int64_t));
        close(sock);
        int st = 0;
        ck_assert_int_eq(waitpid(pid, &st, 0), pid);
        out->count_openat = notify_engine_count(e, __NR_openat);
        out->count_unlinkat = notify_engine_count(e, __NR_unlinkat);
        out->count_mkdirat = notify_engine_count(e, __NR_mkdirat);
        notify_umask_get_stats(e, &out->umask);
        out->wait_killable = notify_engine_wait_killable(e);
        notify_engine_stop(e);
        alarm(0);
        out->fds_after = count_fds();

        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x (exit %d, signal %d)", st,
                      WIFEXITED(st) ? WEXITSTATUS(st) : -1, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
        ck_assert_int_eq(n, (ssize_t)(sc->n * sizeof(int64_t)));
        ck_assert_int_eq(atomic_load(&R.bad_userdata), 0);
        ck_assert_int_eq(atomic_load(&R.unknown_op), 0);
        ck_assert_msg(atomic_load(&R.id_invalid) == 0, "notify_id_valid() said a pending call was gone %d times",
                      atomic_load(&R.id_invalid));
        /* the listener, the engine's /proc and every injected fd are closed again */
        ck_assert_int_eq(out->fds_after, out->fds_before);
}

static void run_cases(const struct mcase *cases, size_t n, const char *how)
{
        struct scenario sc = {.cases = cases, .n = n};
        struct outcome out;
        run_scenario(&sc, &out);
        report_results(cases, n, out.got, how);
        /* every case is one openat, answered by the handler */
        size_t openats = 0;
        for (size_t i = 0; i < n; i++)
                openats += cases[i].run == NULL;
        ck_assert_uint_ge(out.count_openat, openats);
}

/* ------------------------------------------------------------------------ */
/* memory layouts: strings next to guard pages. Built in the test process
 * before the fork, so the child has them at the same addresses. */

/* n read-write pages between two PROT_NONE guard pages */
static char *guarded(size_t n)
{
        char *m = mmap(NULL, (n + 2) * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ck_assert_ptr_ne(m, MAP_FAILED);
        ck_assert_int_eq(mprotect(m, PAGE, PROT_NONE), 0);
        ck_assert_int_eq(mprotect(m + (n + 1) * PAGE, PAGE, PROT_NONE), 0);
        return m + PAGE;
}

static size_t n_str_cases;
static struct mcase str_cases[MAX_CASES];

static void add(struct mcase c)
{
        ck_assert_uint_lt(n_str_cases, MAX_CASES);
        str_cases[n_str_cases++] = c;
}

#define S(w, addr, size, expect) \
        add((struct mcase){.what = w, .op = OP_STRING, .a1 = U64(addr), .p1 = size, .want = expect})
#define H(w, addr, size, str, len) \
        add((struct mcase){.what = w, .op = OP_HASH, .a1 = U64(addr), .p1 = size, .want = hash_value(str, len)})
#define M(w, addr, len, expect) add((struct mcase){.what = w, .op = OP_MEM, .a1 = U64(addr), .p1 = len, .want = expect})

static void build_string_cases(void)
{
        static const char normal[] = "/usr/lib/os-release";
        static const char midnul[] = "abc\0def";
        n_str_cases = 0;

        S("a normal path", normal, PATH_MAX, 19);
        H("a normal path, content", normal, PATH_MAX, normal, 19);
        S("the empty string", "", PATH_MAX, 0);
        S("a NUL in the middle", midnul, PATH_MAX, 3);
        S("size exactly len+1", normal, 20, 19);
        S("size exactly len (no room for NUL)", normal, 19, -ENAMETOOLONG);
        S("size 1, empty string", "", 1, 0);
        S("size 1, non-empty", normal, 1, -ENAMETOOLONG);

        /* 4095 chars + NUL, crossing a page boundary */
        char *r = guarded(2);
        memset(r + 100, 'a', 4095);
        r[100 + 4095] = '\0';
        S("4095 chars + NUL", r + 100, PATH_MAX, 4095);
        H("4095 chars + NUL, content", r + 100, PATH_MAX, r + 100, 4095);

        /* 4096 chars, NUL further on */
        r = guarded(2);
        memset(r, 'b', 5000);
        r[5000] = '\0';
        S("4096 chars without NUL in PATH_MAX", r, PATH_MAX, -ENAMETOOLONG);
        S("the same with a larger buffer", r, 8192, 5000);

        /* 4096 chars running right up to a guard page: only size bytes are read */
        r = guarded(1);
        memset(r, 'c', PAGE);
        S("4096 chars up to a guard page", r, PATH_MAX, -ENAMETOOLONG);

        /* the NUL is the last byte before a guard page */
        r = guarded(1);
        strcpy(r + PAGE - 12, "end-of-page");
        S("string ending at a page end, guard after", r + PAGE - 12, PATH_MAX, 11);
        H("the same, content", r + PAGE - 12, PATH_MAX, "end-of-page", 11);
        S("one char + NUL at a page end", r + PAGE - 2, PATH_MAX, 1);

        /* a string at the very start of a page, guard before */
        r = guarded(1);
        strcpy(r, "x");
        S("string at a page start, guard before", r, PATH_MAX, 1);

        /* a long string over a page boundary, ending at a guard page */
        r = guarded(2);
        memset(r + 2 * PAGE - 6001, 'd', 6000);
        r[2 * PAGE - 1] = '\0';
        S("6000 chars over a boundary, ending at a guard", r + 2 * PAGE - 6001, 8192, 6000);
        H("the same, content", r + 2 * PAGE - 6001, 8192, r + 2 * PAGE - 6001, 6000);

        /* running into a guard page without NUL */
        r = guarded(1);
        memset(r, 'e', PAGE);
        add((struct mcase){.what = "running into a PROT_NONE page",
                           .op = OP_STRING,
                           .a1 = U64(r + PAGE - 100),
                           .p1 = PATH_MAX,
                           .want = -EFAULT,
                           .proc_mem_differs = true});
        add((struct mcase){.what = "starting in a PROT_NONE page",
                           .op = OP_STRING,
                           .a1 = U64(r - 10),
                           .p1 = PATH_MAX,
                           .want = -EFAULT,
                           .proc_mem_differs = true});

        /* running into an unmapped page without NUL */
        char *m = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ck_assert_ptr_ne(m, MAP_FAILED);
        ck_assert_int_eq(munmap(m + PAGE, PAGE), 0);
        memset(m, 'f', PAGE);
        S("running into an unmapped page", m + PAGE - 100, PATH_MAX, -EFAULT);
        S("in an unmapped page", m + PAGE, PATH_MAX, -EFAULT);

        S("NULL", 0, PATH_MAX, -EFAULT);
        S("the top of the address space", UINT64_C(0xfffffffffffff000), PATH_MAX, -EFAULT);
        S("wrapping past 2^64", UINT64_MAX - 10, PATH_MAX, -EFAULT);
        S("a kernel address", UINT64_C(0xffff888000000000), PATH_MAX, -EFAULT);
        S("a non-canonical address", UINT64_C(0x0000800000000000), PATH_MAX, -EFAULT);

        /* notify_read_mem */
        M("16 bytes", normal, 16, hash_value(normal, 16));
        M("zero bytes at NULL", 0, 0, hash_value("", 0));
        r = guarded(2);
        for (size_t i = 0; i < 2 * PAGE; i++)
                r[i] = (char)(i * 7 + 3);
        M("two whole pages up to a guard", r, 2 * PAGE, hash_value(r, 2 * PAGE));
        M("a range over a page boundary", r + 4000, 200, hash_value(r + 4000, 200));
        add((struct mcase){.what = "one byte into a guard page",
                           .op = OP_MEM,
                           .a1 = U64(r),
                           .p1 = 2 * PAGE + 1,
                           .want = -EFAULT,
                           .proc_mem_differs = true});
        add((struct mcase){.what = "starting in a guard page",
                           .op = OP_MEM,
                           .a1 = U64(r - 8),
                           .p1 = 16,
                           .want = -EFAULT,
                           .proc_mem_differs = true});
        M("into an unmapped page", m + PAGE - 8, 16, -EFAULT);
        M("wrapping past 2^64", UINT64_MAX - 3, 16, -EFAULT);
        M("NULL", 0, 8, -EFAULT);
}

/* ------------------------------------------------------------------------ */
/* strings and memory */

enum selection { ALL_CASES, NOT_GUARD_PAGES, GUARD_PAGES_ONLY };

/* Builds the cases and keeps the selected ones. */
static void string_cases(enum selection sel)
{
        build_string_cases();
        size_t k = 0;
        for (size_t i = 0; i < n_str_cases; i++)
                if (sel == ALL_CASES || (sel == GUARD_PAGES_ONLY) == str_cases[i].proc_mem_differs)
                        str_cases[k++] = str_cases[i];
        n_str_cases = k;
        ck_assert_uint_gt(n_str_cases, 0);
}

static void run_string_cases_direct(const char *how)
{
        results_reset();
        int64_t got[MAX_CASES];
        for (size_t i = 0; i < n_str_cases; i++)
                got[i] = run_case_direct(&str_cases[i]);
        report_results(str_cases, n_str_cases, got, how);
}

START_TEST(test_strings_direct)
{
        string_cases(ALL_CASES);
        run_string_cases_direct("direct, process_vm_readv");
}
END_TEST

START_TEST(test_strings_engine)
{
        string_cases(ALL_CASES);
        run_cases(str_cases, n_str_cases, "through the engine, process_vm_readv");
}
END_TEST

/* The /proc/TID/mem fallback must give the same answers. */
START_TEST(test_strings_fallback_direct)
{
        ck_assert_int_eq(notify_force_fallback("process_vm_readv"), 0);
        string_cases(NOT_GUARD_PAGES);
        run_string_cases_direct("direct, /proc/TID/mem fallback");
}
END_TEST

START_TEST(test_strings_fallback_engine)
{
        ck_assert_int_eq(notify_force_fallback("process_vm_readv"), 0);
        string_cases(NOT_GUARD_PAGES);
        run_cases(str_cases, n_str_cases, "through the engine, /proc/TID/mem fallback");
}
END_TEST

/* Memory the thread cannot read (PROT_NONE) is a bad pointer in the
 * fallback too: /proc/TID/mem reads with FOLL_FORCE, which would otherwise
 * read through guard pages that process_vm_readv and the kernel refuse. */
START_TEST(test_fallback_guard_pages)
{
        ck_assert_int_eq(notify_force_fallback("process_vm_readv"), 0);
        string_cases(GUARD_PAGES_ONLY);
        run_string_cases_direct("direct, /proc/TID/mem fallback, guard pages");
        run_cases(str_cases, n_str_cases, "through the engine, /proc/TID/mem fallback, guard pages");
}
END_TEST

/* The fallback's readability check reads /proc/TID/maps, whose lines end in
 * a path the child chooses: a line longer than the check's line buffer must
 * not be taken for two lines, or a crafted file name forges a mapping. */
START_TEST(test_fallback_maps_long_lines)
{
        ck_assert_int_eq(notify_force_fallback("process_vm_readv"), 0);

        /* one reserved range: the file's page, a gap, the string's page,
         * then the guard pages; so the file's maps line comes first */
        char *base = mmap(NULL, 5 * PAGE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ck_assert_ptr_ne(base, MAP_FAILED);
        char *g = base + 2 * PAGE;
        ck_assert_int_eq(mprotect(g, PAGE, PROT_READ | PROT_WRITE), 0);
        memset(g, 'e', PAGE);

        /* the file, in a directory with a long name */
        char dir[] = "/tmp/cordon-maps-XXXXXX";
        ck_assert_ptr_nonnull(mkdtemp(dir));
        char sub[PATH_MAX], file[PATH_MAX + 16], forged[PATH_MAX + 300];
        char longname[201];
        memset(longname, 'd', 200);
        longname[200] = '\0';
        snprintf(sub, sizeof(sub), "%s/%s", dir, longname);
        ck_assert_int_eq(mkdir(sub, 0700), 0);
        snprintf(file, sizeof(file), "%s/f", sub);
        int fd = open(file, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(ftruncate(fd, PAGE), 0);
        char *fm = mmap(base, PAGE, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0);
        ck_assert_ptr_eq(fm, base);
        close(fd);

        /* where the path starts in the file's maps line */
        static char maps[1 << 16];
        fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ssize_t n = read_full(fd, maps, sizeof(maps) - 1);
        close(fd);
        ck_assert_int_gt(n, 0);
        maps[n] = '\0';
        long path_start = -1;
        for (char *line = maps; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                unsigned long long lo;
                if (sscanf(line, "%llx-", &lo) == 1 && lo == (unsigned long long)(uintptr_t)fm) {
                        char *p = strstr(line, "/tmp/cordon-maps-");
                        ck_assert_ptr_nonnull(p);
                        path_start = p - line;
                        break;
                }
        }
        ck_assert_int_ge(path_start, 0);

        /* rename the file so that the line's byte 511 (where a 512-byte
         * fgets() buffer ends) starts a made-up "readable everything" line */
        long at = path_start + (long)strlen(sub) + 1;
        ck_assert_int_le(at, 511);
        char name[256];
        long pad = 511 - at;
        ck_assert_int_le(pad + 20, 255);
        memset(name, 'x', (size_t)pad);
        strcpy(name + pad, "0-7fffffffffff rw-p");
        snprintf(forged, sizeof(forged), "%s/%s", sub, name);
        ck_assert_int_eq(rename(file, forged), 0);

        /* the maps line now carries the made-up one at byte 511 */
        fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        n = read_full(fd, maps, sizeof(maps) - 1);
        close(fd);
        ck_assert_int_gt(n, 0);
        maps[n] = '\0';
        bool forged_in_place = false;
        for (char *line = maps; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                unsigned long long lo;
                if (sscanf(line, "%llx-", &lo) == 1 && lo == (unsigned long long)(uintptr_t)fm) {
                        forged_in_place = strncmp(line + 511, "0-7fffffffffff rw-p", 19) == 0;
                        break;
                }
        }
        ck_assert_msg(forged_in_place, "the test could not place its made-up line at byte 511");

        int procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(procfd, 0);
        struct seccomp_notif req = {.id = 1, .pid = (uint32_t)gettid()};
        struct notify_call call = {.req = &req, .listener_fd = -1, .hostproc_fd = procfd};
        char buf[PATH_MAX];
        ssize_t r = notify_read_string(&call, U64(g + PAGE - 100), buf, sizeof(buf));
        int rm = notify_read_mem(&call, U64(g + PAGE - 8), buf, 16);
        close(procfd);
        munmap(base, 5 * PAGE);
        unlink(forged);
        rmdir(sub);
        rmdir(dir);
        ck_assert_msg(r == -EFAULT, "a string running into a guard page read as %zd with a forged maps line", r);
        ck_assert_msg(rm == -EFAULT, "memory running into a guard page read as %d with a forged maps line", rm);
}
END_TEST

START_TEST(test_force_fallback_unknown)
{
        ck_assert_int_eq(notify_force_fallback("no-such-feature"), -EINVAL);
}
END_TEST

/* notify_proc_open and the privilege hook: an open that succeeds asks
 * for nothing; one refused or hidden is tried again exactly once, and only
 * when the hook raised something (a worker already privileged gains
 * nothing from a second try). */
static int hook_calls;
static bool hook_raises;
static bool count_hook(void)
{
        hook_calls++;
        return hook_raises;
}

START_TEST(test_privilege_hook_retry)
{
        int proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(proc, 0);
        char self[64];
        snprintf(self, sizeof(self), "%d/status", (int)getpid());

        ck_assert(!notify_privileged()); /* no hook: nothing raised */
        notify_set_privilege_hook(count_hook);
        hook_calls = 0;
        hook_raises = true;
        int fd = notify_proc_open(proc, self, O_RDONLY);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
        close(fd);
        ck_assert_int_eq(hook_calls, 0);

        /* ENOENT (what hidepid=invisible answers): one hook call, one retry */
        errno = 0;
        ck_assert_int_lt(notify_proc_open(proc, "999999999/status", O_RDONLY), 0);
        ck_assert_int_eq(errno, ENOENT);
        ck_assert_int_eq(hook_calls, 1);

        /* a hook that raised nothing: no second try, the first error stands */
        hook_raises = false;
        ck_assert_int_lt(notify_proc_open(proc, "999999999/status", O_RDONLY), 0);
        ck_assert_int_eq(errno, ENOENT);
        ck_assert_int_eq(hook_calls, 2);
        ck_assert(!notify_privileged());

        notify_set_privilege_hook(NULL);
        close(proc);
}
END_TEST

/* A thread that is gone: every helper fails, none pretends. */
START_TEST(test_dead_thread)
{
        pid_t p = fork();
        ck_assert_int_ge(p, 0);
        if (p == 0)
                _exit(0);
        ck_assert_int_eq(waitpid(p, NULL, 0), p);

        int procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(procfd, 0);
        struct seccomp_notif req = {.id = 42, .pid = (uint32_t)p};
        struct notify_call call = {.req = &req, .listener_fd = -1, .hostproc_fd = procfd};
        char buf[64];
        static const char s[] = "still mapped here";
        ck_assert_int_eq(notify_read_mem(&call, U64(s), buf, sizeof(s)), -ESRCH);
        ck_assert_int_eq(notify_read_string(&call, U64(s), buf, sizeof(buf)), -ESRCH);
        ck_assert_int_lt(notify_open_dirfd(&call, AT_FDCWD), 0);
        ck_assert_int_lt(notify_open_dirfd(&call, 0), 0);
        ck_assert_int_lt(notify_umask(&call), 0);
        pid_t a = 0, b = 0;
        ck_assert_int_lt(notify_ns_ids(&call, &a, &b), 0);
        ck_assert_int_eq(notify_id_valid(&call), -ENOENT);

        /* and through the fallback */
        ck_assert_int_eq(notify_force_fallback("process_vm_readv"), 0);
        ck_assert_int_eq(notify_read_mem(&call, U64(s), buf, sizeof(s)), -ESRCH);
        ck_assert_int_eq(notify_read_string(&call, U64(s), buf, sizeof(buf)), -ESRCH);
        close(procfd);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* /proc facts of the calling thread */

static char tmpdir[PATH_MAX];

static void stat_args(const char *path, uint64_t *dev, uint64_t *ino)
{
        struct stat st;
        if (stat(path, &st) < 0) {
                *dev = *ino = 0;
                return;
        }
        *dev = st.st_dev;
        *ino = st.st_ino;
}

static int64_t run_dirfd_cwd(const struct mcase *c)
{
        if (chdir(tmpdir) < 0)
                return -1000;
        uint64_t dev, ino;
        stat_args(".", &dev, &ino);
        return trap(OP_DIRFD, U64((int64_t)AT_FDCWD), 0, dev, ino, 0);
}

static int64_t run_dirfd_fd(const struct mcase *c)
{
        /* O_PATH|O_DIRECTORY with open() would be trapped now: dup an fd
         * opened before the filter instead */
        int fd = fcntl((int)c->a0, F_DUPFD_CLOEXEC, 40);
        if (fd < 0)
                return -1000;
        uint64_t dev, ino;
        stat_args("/", &dev, &ino);
        int64_t r = trap(OP_DIRFD, U64(fd), 0, dev, ino, 0);
        close(fd);
        return r;
}

static int64_t run_dirfd_file(const struct mcase *c)
{
        /* a dirfd that is not a directory: the handler reports what it got */
        return trap(OP_DIRFD, U64(STDERR_FILENO), 0, 0, 0, 0);
}

static void *dirfd_thread(void *arg)
{
        int64_t *ret = arg;
        /* a thread with its own cwd: /proc/TID/cwd, not the process's */
        if (unshare(CLONE_FS) < 0 || chdir("/") < 0) {
                *ret = -1000;
                return NULL;
        }
        uint64_t dev, ino;
        stat_args("/", &dev, &ino);
        *ret = trap(OP_DIRFD, U64((int64_t)AT_FDCWD), 0, dev, ino, 0);
        return NULL;
}

static int64_t run_in_thread(void *(*fn)(void *))
{
        int64_t ret = -2000;
        pthread_t t;
        if (pthread_create(&t, NULL, fn, &ret) != 0)
                return -3000;
        pthread_join(t, NULL);
        return ret;
}

static int64_t run_dirfd_thread(const struct mcase *c)
{
        return run_in_thread(dirfd_thread);
}

static int root_fd = -1;

START_TEST(test_dirfd)
{
        char tmpl[] = "/tmp/cordon-test-XXXXXX";
        ck_assert_ptr_nonnull(mkdtemp(tmpl));
        snprintf(tmpdir, sizeof(tmpdir), "%s", tmpl);
        root_fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(root_fd, 0);
        close(987);

        const struct mcase cases[] = {
                {.what = "AT_FDCWD is the child's cwd", .run = run_dirfd_cwd, .want = 1},
                {.what = "a directory fd of the child", .run = run_dirfd_fd, .a0 = U64(root_fd), .want = 1},
                {.what = "an fd the child does not have", .op = OP_DIRFD, .a0 = 987, .want = -EBADF},
                {.what = "a negative fd other than AT_FDCWD", .op = OP_DIRFD, .a0 = U64((int64_t)-5), .want = -EBADF},
                {.what = "AT_FDCWD in a thread with its own cwd", .run = run_dirfd_thread, .want = 1},
                {.what = "AT_FDCWD again (the main thread's cwd is unchanged)", .run = run_dirfd_cwd, .want = 1},
                {.what = "a dirfd that is not a directory", .run = run_dirfd_file, .want = 3},
        };
        struct scenario sc = {.cases = cases, .n = ELEMENTSOF(cases)};
        struct outcome out;
        run_scenario(&sc, &out);
        rmdir(tmpdir); /* before any assertion, so a failure leaves nothing behind */
        close(root_fd);
        report_results(cases, ELEMENTSOF(cases), out.got, "dirfd");
}
END_TEST

static int64_t run_umask(const struct mcase *c)
{
        umask((mode_t)c->p1);
        return trap(OP_UMASK, 0, 0, 0, 0, 0);
}

static void *umask_thread(void *arg)
{
        int64_t *ret = arg;
        if (unshare(CLONE_FS) < 0) {
                *ret = -1000;
                return NULL;
        }
        umask(0077);
        *ret = trap(OP_UMASK, 0, 0, 0, 0, 0);
        return NULL;
}

static int64_t run_umask_thread(const struct mcase *c)
{
        umask(022);
        int64_t r = run_in_thread(umask_thread);
        /* and the main thread still has its own */
        int64_t main_um = trap(OP_UMASK, 0, 0, 0, 0, 0);
        return r == 0077 && main_um == 022 ? 1 : r * 1000 + main_um;
}

static int64_t run_umask_comm(const struct mcase *c)
{
        /* The thread's name is the first line of /proc/TID/status and is the
         * child's to choose: it must not be taken for the Umask line. */
        char name[16] = "Umask:\t0777";
        if (prctl(PR_SET_NAME, name, 0, 0, 0) < 0)
                return -1000;
        umask(022);
        int64_t r = trap(OP_UMASK, 0, 0, 0, 0, 0);
        strcpy(name, "Umask:0000");
        (void)prctl(PR_SET_NAME, name, 0, 0, 0);
        int64_t r2 = trap(OP_UMASK, 0, 0, 0, 0, 0);
        (void)prctl(PR_SET_NAME, "test-child", 0, 0, 0);
        return r == 022 && r2 == 022 ? 022 : r * 1000 + r2;
}

/* ------------------------------------------------------------------------ */
/* the umask cache (notify/umask.c): every value must be what the kernel
 * holds when the call is made, whatever the cache kept */

static int64_t um_now(void)
{
        return trap(OP_UMASK, 0, 0, 0, 0, 0);
}

/* The same thread asks again and again: hits, and a change is seen at once. */
static int64_t run_umask_repeat(const struct mcase *c)
{
        umask(027);
        int64_t a[4];
        for (int i = 0; i < 4; i++)
                a[i] = um_now();
        umask(0);
        int64_t z = um_now(), z2 = um_now();
        for (int i = 0; i < 4; i++)
                if (a[i] != 027)
                        return -1000 - a[i];
        return z == 0 && z2 == 0 ? 1 : -2000 - z * 1000 - z2;
}

struct sib {
        int to_sib[2], to_parent[2];
        int64_t got[3];
};

static int sib_main(void *arg)
{
        struct sib *sb = arg;
        char x;
        int64_t got[3];
        got[0] = um_now(); /* 022, now cached for this thread */
        if (write(sb->to_parent[1], "a", 1) != 1 || read(sb->to_sib[0], &x, 1) != 1)
                _exit(3);
        got[1] = um_now(); /* after the parent's umask(077): 077 */
        got[2] = um_now();
        umask(0); /* and the other way round: the parent must see 0 */
        if (write(sb->to_parent[1], got, sizeof(got)) != sizeof(got))
                _exit(4);
        _exit(0);
}

/* Two processes sharing one fs_struct (clone(CLONE_FS), not threads): a
 * umask call by either is the other's too. A cache per thread group, or
 * one that forgets only the caller's entry, gives the old value. */
static int64_t run_umask_clone_fs(const struct mcase *c)
{
        umask(022);
        struct sib sb;
        if (pipe(sb.to_sib) < 0 || pipe(sb.to_parent) < 0)
                return -1000;
        size_t size = 256 * 1024;
        char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED)
                return -1001;
        int64_t before = um_now(); /* 022 cached for this thread too */
        pid_t pid = clone(sib_main, stack + size, CLONE_FS | SIGCHLD, &sb);
        if (pid < 0)
                return -1002;
        char x;
        if (read(sb.to_parent[0], &x, 1) != 1)
                return -1003;
        umask(077);
        if (write(sb.to_sib[1], "b", 1) != 1)
                return -1004;
        int64_t got[3];
        if (read_full(sb.to_parent[0], got, sizeof(got)) != (ssize_t)sizeof(got))
                return -1005;
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                return -1006;
        int64_t after = um_now(); /* the sibling set 0 */
        munmap(stack, size);
        if (before == 022 && got[0] == 022 && got[1] == 077 && got[2] == 077 && after == 0)
                return 1;
        return -(before * 100000000 + got[0] * 1000000 + got[1] * 10000 + got[2] * 100 + after);
}

/* fork copies the umask: the child starts with the parent's value at the
 * fork, and a later change by either is its own. */
static int64_t run_umask_fork(const struct mcase *c)
{
        umask(027);
        int64_t p0 = um_now();
        int go[2], done[2];
        if (pipe(go) < 0 || pipe(done) < 0)
                return -1000;
        pid_t pid = fork();
        if (pid < 0)
                return -1001;
        if (pid == 0) {
                char x;
                int64_t got[2];
                got[0] = um_now(); /* 027, inherited */
                if (read(go[0], &x, 1) != 1)
                        _exit(3);
                got[1] = um_now(); /* still 027 after the parent's umask(077) */
                _exit(write(done[1], got, sizeof(got)) == sizeof(got) ? 0 : 4);
        }
        umask(077);
        int64_t p1 = um_now();
        if (write(go[1], "g", 1) != 1)
                return -1002;
        int64_t got[2];
        if (read_full(done[0], got, sizeof(got)) != (ssize_t)sizeof(got))
                return -1003;
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                return -1004;
        if (p0 == 027 && p1 == 077 && got[0] == 027 && got[1] == 027)
                return 1;
        return -(p0 * 1000000 + p1 * 10000 + got[0] * 100 + got[1]);
}

/* A sharer whose umask(2) the sentry answered but that has not provably
 * finished it (it runs on without another syscall) keeps the cache from
 * filling: the other asks read /proc each time and see the new value. */
static atomic_bool spin_stop;

static int spinner_main(void *arg)
{
        int *ready = arg;
        umask(077);
        if (write(ready[1], "s", 1) != 1)
                _exit(3);
        /* no syscall from here on: only its exit proves the umask done */
        for (unsigned long i = 0; i < 4000000000UL && !atomic_load_explicit(&spin_stop, memory_order_relaxed); i++)
                __asm__ volatile("" ::: "memory");
        _exit(0);
}

static int64_t run_umask_in_flight(const struct mcase *c)
{
        umask(022);
        int ready[2];
        if (pipe(ready) < 0)
                return -1000;
        size_t size = 256 * 1024;
        char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED)
                return -1001;
        /* CLONE_VM too, so spin_stop reaches it; no CLONE_THREAD: its own pid */
        pid_t pid = clone(spinner_main, stack + size, CLONE_FS | CLONE_VM | SIGCHLD, ready);
        if (pid < 0)
                return -1002;
        char x;
        if (read(ready[0], &x, 1) != 1)
                return -1003;
        int64_t got[3];
        for (int i = 0; i < 3; i++)
                got[i] = um_now();
        atomic_store(&spin_stop, true);
        int st;
        if (waitpid(pid, &st, 0) != pid)
                return -1004;
        munmap(stack, size);
        int64_t later[3];
        for (int i = 0; i < 3; i++)
                later[i] = um_now();
        for (int i = 0; i < 3; i++)
                if (got[i] != 077 || later[i] != 077)
                        return -(got[i] * 1000 + later[i]);
        return 1;
}

/* A recycled tid must never get the umask of the thread that had it
 * before. In a pid namespace of its own the test can make the next fork
 * reuse a pid (ns_last_pid); the engine runs inside it, so the tids it sees
 * are those. */
static int last_pid_fd = -1;

static int64_t run_umask_pid_reuse(const struct mcase *c)
{
        umask(022);
        int64_t mine = um_now();
        int p[2];
        if (pipe(p) < 0)
                return -1000;
        pid_t a = fork();
        if (a == 0) {
                umask(077);
                int64_t got[2] = {um_now(), um_now()}; /* a miss, then a hit */
                _exit(write(p[1], got, sizeof(got)) == sizeof(got) ? 0 : 3);
        }
        int64_t got[2] = {0, 0}, reused = 0;
        if (a < 0 || read_full(p[0], got, sizeof(got)) != (ssize_t)sizeof(got) || waitpid(a, NULL, 0) != a)
                return -1001;
        char num[16];
        int len = snprintf(num, sizeof(num), "%d", (int)a - 1);
        if (pwrite(last_pid_fd, num, (size_t)len, 0) != len)
                return -1002;
        pid_t b = fork(); /* gets a's pid again, and this process's umask, 022 */
        if (b == 0) {
                int64_t z = um_now();
                _exit(write(p[1], &z, sizeof(z)) == sizeof(z) ? 0 : 3);
        }
        if (b < 0 || read_full(p[0], &reused, sizeof(reused)) != (ssize_t)sizeof(reused) || waitpid(b, NULL, 0) != b)
                return -1003;
        if (b != a)
                return -1004; /* the pid was not reused: nothing was tested */
        if (mine == 022 && got[0] == 077 && got[1] == 077 && reused == 022)
                return 1;
        return -(mine * 1000000 + got[0] * 10000 + got[1] * 100 + reused);
}

/* pid 1 of the new pid namespace: its own /proc, then the scenario */
_noreturn_ static void pid_reuse_init(void)
{
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
            mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                _exit(77);
        last_pid_fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
        if (last_pid_fd < 0)
                _exit(77);
        const struct mcase cases[] = {
                {.what = "a recycled pid after a umask 077 thread", .run = run_umask_pid_reuse, .want = 1},
        };
        struct scenario sc = {.cases = cases, .n = ELEMENTSOF(cases)};
        struct outcome out;
        run_scenario(&sc, &out);
        report_results(cases, ELEMENTSOF(cases), out.got, "umask cache, pid reuse");
        /* the first thread's entry was there to be misused: it hit once */
        ck_assert_msg(out.umask.hits == 1 && out.umask.misses == 3, "umask cache: %" PRIu64 " hits, %" PRIu64 " misses",
                      out.umask.hits, out.umask.misses);
        _exit(0);
}

START_TEST(test_umask_cache_pid_reuse)
{
        pid_t w = fork();
        ck_assert_int_ge(w, 0);
        if (w == 0) {
                if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0)
                        _exit(77);
                pid_t init = fork();
                if (init == 0)
                        pid_reuse_init();
                int st;
                if (init < 0 || waitpid(init, &st, 0) != init)
                        _exit(2);
                _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
        }
        int st;
        ck_assert_int_eq(waitpid(w, &st, 0), w);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 77) {
                fprintf(stderr, "test_umask_cache_pid_reuse: no pid and mount namespace of our own here; not run\n");
                return;
        }
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "pid namespace's init: status %#x", st);
}
END_TEST

START_TEST(test_umask_cache)
{
        const struct mcase cases[] = {
                {.what = "one thread, umask 027 then 0", .run = run_umask_repeat, .want = 1},
        };
        struct scenario sc = {.cases = cases, .n = ELEMENTSOF(cases)};
        struct outcome out;
        run_scenario(&sc, &out);
        report_results(cases, ELEMENTSOF(cases), out.got, "umask cache");
        /* each change is a miss, the asks after it hit */
        ck_assert_msg(out.umask.hits == 4 && out.umask.misses == 2, "umask cache: %" PRIu64 " hits, %" PRIu64 " misses",
                      out.umask.hits, out.umask.misses);
        ck_assert(!out.umask.off);
}
END_TEST

START_TEST(test_umask_cache_sharing)
{
        const struct mcase cases[] = {
                {.what = "two processes sharing CLONE_FS change it in turn", .run = run_umask_clone_fs, .want = 1},
                {.what = "a forked child keeps the value of the fork", .run = run_umask_fork, .want = 1},
                {.what = "a thread with its own umask (CLONE_FS unshared)", .run = run_umask_thread, .want = 1},
        };
        run_cases(cases, ELEMENTSOF(cases), "umask cache, shared and copied fs");
}
END_TEST

/* ------------------------------------------------------------------------ */
/* the working directory's cache (notify/umask.c, beside the umask): every
 * answer must be the directory the thread is in when it asks */

/* 1 when the sentry's answer is the directory path names, else what the
 * handler gave (2: another directory) */
static int64_t cwd_is(const char *path)
{
        struct stat st;
        if (stat(path, &st) < 0)
                return -5000;
        return trap(OP_CWD, 0, 0, (uint64_t)st.st_dev, (uint64_t)st.st_ino, 0);
}

/* The same thread asks again and again: hits, and chdir and fchdir are seen
 * at once. */
static int64_t run_cwd_repeat(const struct mcase *c)
{
        (void)c;
        /* open(2), not openat: the test's filter traps every openat */
        int root = (int)syscall(SYS_open, "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0 || chdir("/") < 0)
                return -1000;
        int64_t a[3];
        for (int i = 0; i < 3; i++)
                a[i] = cwd_is("/"); /* a miss, then hits */
        if (chdir("/proc") < 0)
                return -1001;
        int64_t p[2] = {cwd_is("/proc"), cwd_is("/proc")};
        if (fchdir(root) < 0)
                return -1002;
        int64_t r = cwd_is("/");
        close(root);
        for (int i = 0; i < 3; i++)
                if (a[i] != 1)
                        return -2000 - a[i];
        return p[0] == 1 && p[1] == 1 && r == 1 ? 1 : -(p[0] * 100 + p[1] * 10 + r);
}

struct cwd_sib {
        int to_sib[2], to_parent[2];
};

static int cwd_sib_main(void *arg)
{
        struct cwd_sib *sb = arg;
        char x;
        int64_t got[2];
        got[0] = cwd_is("/"); /* the parent's "/", now cached for this thread */
        if (write(sb->to_parent[1], "a", 1) != 1 || read(sb->to_sib[0], &x, 1) != 1)
                _exit(3);
        got[1] = cwd_is("/proc"); /* after the parent's chdir("/proc") */
        _exit(write(sb->to_parent[1], got, sizeof(got)) == sizeof(got) ? 0 : 4);
}

/* Two processes sharing one fs_struct (clone(CLONE_FS)): a chdir by one
 * moves the other too, and the other's cached entry must not outlive it. */
static int64_t run_cwd_clone_fs(const struct mcase *c)
{
        (void)c;
        struct cwd_sib sb;
        if (chdir("/") < 0 || pipe(sb.to_sib) < 0 || pipe(sb.to_parent) < 0)
                return -1000;
        size_t size = 256 * 1024;
        char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (stack == MAP_FAILED)
                return -1001;
        pid_t pid = clone(cwd_sib_main, stack + size, CLONE_FS | SIGCHLD, &sb);
        if (pid < 0)
                return -1002;
        char x;
        if (read(sb.to_parent[0], &x, 1) != 1 || chdir("/proc") < 0 || write(sb.to_sib[1], "b", 1) != 1)
                return -1003;
        int64_t got[2];
        if (read_full(sb.to_parent[0], got, sizeof(got)) != (ssize_t)sizeof(got))
                return -1004;
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                return -1005;
        munmap(stack, size);
        int64_t mine = cwd_is("/proc");
        if (chdir("/") < 0)
                return -1006;
        return got[0] == 1 && got[1] == 1 && mine == 1 ? 1 : -(got[0] * 100 + got[1] * 10 + mine);
}

START_TEST(test_cwd_cache)
{
        const struct mcase cases[] = {
                {.what = "one thread: chdir, fchdir and asks in between", .run = run_cwd_repeat, .want = 1},
        };
        struct scenario sc = {.cases = cases, .n = ELEMENTSOF(cases)};
        struct outcome out;
        run_scenario(&sc, &out);
        report_results(cases, ELEMENTSOF(cases), out.got, "working directory cache");
        /* each change is a miss, the asks after it hit */
        ck_assert_msg(out.umask.cwd_hits == 3 && out.umask.cwd_misses == 3,
                      "cwd cache: %" PRIu64 " hits, %" PRIu64 " misses", out.umask.cwd_hits, out.umask.cwd_misses);
        ck_assert(!out.umask.off);
}
END_TEST

START_TEST(test_cwd_cache_sharing)
{
        const struct mcase cases[] = {
                {.what = "two processes sharing CLONE_FS, one moves", .run = run_cwd_clone_fs, .want = 1},
        };
        run_cases(cases, ELEMENTSOF(cases), "working directory cache, shared fs");
}
END_TEST

START_TEST(test_umask_cache_in_flight)
{
        const struct mcase cases[] = {
                {.what = "a sharer's umask not yet provably applied", .run = run_umask_in_flight, .want = 1},
        };
        struct scenario sc = {.cases = cases, .n = ELEMENTSOF(cases)};
        struct outcome out;
        run_scenario(&sc, &out);
        report_results(cases, ELEMENTSOF(cases), out.got, "umask cache, change in flight");
        /* while the spinner ran, nothing was cached: three misses; once
         * it exited: one miss, then hits */
        ck_assert_msg(out.umask.misses == 4 && out.umask.hits == 2, "umask cache: %" PRIu64 " hits, %" PRIu64 " misses",
                      out.umask.hits, out.umask.misses);
}
END_TEST

/* notify_write_mem: the bytes land where the thread asked, and a pointer
 * the kernel's copy to user memory would refuse (unmapped, read-only,
 * running into PROT_NONE) is EFAULT with nothing written, in the fallback
 * through /proc/TID/mem (which writes with FOLL_FORCE) as well. */
static int64_t run_write_ok(const struct mcase *c)
{
        (void)c;
        static char buf[64];
        memset(buf, 0, sizeof(buf));
        int64_t r = trap(OP_WRITE, 0, (uint64_t)(uintptr_t)(buf + 8), 16, 0x41, 0);
        if (r != 0)
                return r;
        for (int i = 0; i < 64; i++)
                if (buf[i] != (i >= 8 && i < 24 ? 0x41 : 0))
                        return -1000 - i;
        return 1;
}

static int64_t run_write_ro(const struct mcase *c)
{
        (void)c;
        char *p = mmap(NULL, PAGE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                return -2000;
        int64_t r = trap(OP_WRITE, 0, (uint64_t)(uintptr_t)p, 16, 0x41, 0);
        bool untouched = p[0] == 0;
        munmap(p, PAGE);
        return untouched ? r : -3000;
}

static int64_t run_write_guard(const struct mcase *c)
{
        (void)c;
        char *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED || mprotect(p + PAGE, PAGE, PROT_NONE) < 0)
                return -2000;
        int64_t r = trap(OP_WRITE, 0, (uint64_t)(uintptr_t)(p + PAGE + 8), 16, 0x41, 0);
        munmap(p, 2 * PAGE);
        return r;
}

static const struct mcase write_cases[] = {
        {.what = "16 bytes into a buffer", .run = run_write_ok, .want = 1},
        {.what = "a read-only mapping", .run = run_write_ro, .want = -EFAULT},
        {.what = "a PROT_NONE page", .run = run_write_guard, .want = -EFAULT},
        {.what = "address 8", .op = OP_WRITE, .a1 = 8, .p1 = 16, .p2 = 0x41, .want = -EFAULT},
        {.what = "the top of the address space", .op = OP_WRITE, .a1 = UINT64_MAX - 4, .p1 = 16, .want = -EFAULT},
        {.what = "nothing", .op = OP_WRITE, .a1 = 8, .p1 = 0, .want = 0},
};

START_TEST(test_write_mem)
{
        run_cases(write_cases, ELEMENTSOF(write_cases), "notify_write_mem");
}
END_TEST

START_TEST(test_write_mem_fallback)
{
        ck_assert_int_eq(notify_force_fallback("process_vm_readv"), 0);
        run_cases(write_cases, ELEMENTSOF(write_cases), "notify_write_mem, /proc/TID/mem fallback");
}
END_TEST

START_TEST(test_umask)
{
        const struct mcase cases[] = {
                {.what = "umask 027", .run = run_umask, .p1 = 027, .want = 027},
                {.what = "umask 0", .run = run_umask, .p1 = 0, .want = 0},
                {.what = "umask 0777", .run = run_umask, .p1 = 0777, .want = 0777},
                {.what = "a thread with its own umask (CLONE_FS unshared)", .run = run_umask_thread, .want = 1},
                {.what = "umask 002", .run = run_umask, .p1 = 002, .want = 002},
        };
        run_cases(cases, ELEMENTSOF(cases), "umask");
}
END_TEST

START_TEST(test_umask_thread_name)
{
        const struct mcase cases[] = {
                {.what = "umask 022 with the thread named \"Umask:\\t0777\" / \"Umask:0000\"",
                 .run = run_umask_comm,
                 .want = 022},
        };
        run_cases(cases, ELEMENTSOF(cases), "umask vs. thread name");
}
END_TEST

static int64_t ids_now(void)
{
        return (int64_t)gettid() | (int64_t)getpid() << 32;
}

static int64_t run_nsids(const struct mcase *c)
{
        int64_t want = ids_now();
        int64_t got = trap(OP_NSIDS, 0, 0, 0, 0, 0);
        return got == want ? 1 : got;
}

static void *nsids_thread(void *arg)
{
        *(int64_t *)arg = run_nsids(NULL);
        return NULL;
}

static int64_t run_nsids_thread(const struct mcase *c)
{
        return run_in_thread(nsids_thread);
}

START_TEST(test_ns_ids)
{
        const struct mcase cases[] = {
                {.what = "main thread", .run = run_nsids, .want = 1},
                {.what = "another thread (tid != tgid)", .run = run_nsids_thread, .want = 1},
        };
        run_cases(cases, ELEMENTSOF(cases), "ns ids");
}
END_TEST

/* Where the last digit of the NSpid line sits in our own status, or -1. */
static long nspid_last_digit(void)
{
        static char status[1 << 17];
        int fd = open("/proc/thread-self/status", O_RDONLY | O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ssize_t n = read_full(fd, status, sizeof(status) - 1);
        close(fd);
        ck_assert_int_gt(n, 0);
        status[n] = '\0';
        char *p = strstr(status, "\nNSpid:");
        ck_assert_ptr_nonnull(p);
        char *eol = strchr(p + 1, '\n');
        ck_assert_ptr_nonnull(eol);
        return eol - status - 1;
}

static void ids_direct(pid_t *nspid, pid_t *nstgid, int *r)
{
        int procfd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        ck_assert_int_ge(procfd, 0);
        struct seccomp_notif req = {.id = 1, .pid = (uint32_t)gettid()};
        struct notify_call call = {.req = &req, .listener_fd = -1, .hostproc_fd = procfd};
        *nspid = *nstgid = 0;
        *r = notify_ns_ids(&call, nspid, nstgid);
        close(procfd);
}

/* /proc/TID/status grows with the supplementary groups (the Groups line
 * comes before NStgid and NSpid): the ids must be read from the whole file,
 * never from a prefix that ends before, or in the middle of, their lines. */
START_TEST(test_ns_ids_large_status)
{
        static gid_t groups[4000];
        pid_t p, t;
        int r;

        for (size_t i = 0; i < ELEMENTSOF(groups); i++)
                groups[i] = 1;
        if (setgroups(0, NULL) < 0) {
                fprintf(stderr, "test_ns_ids_large_status: setgroups: %s; not run\n", strerror(errno));
                return;
        }
        long base = nspid_last_digit();
        ck_assert_int_lt(base, 4000);

        /* 4000 groups: NSpid far beyond the first 4 KiB */
        ck_assert_int_eq(setgroups(ELEMENTSOF(groups), groups), 0);
        ids_direct(&p, &t, &r);
        ck_assert_msg(r == 0 && p == gettid() && t == getpid(),
                      "with 4000 groups: notify_ns_ids = %d (%s), nspid %d (want %d), nstgid %d (want %d)", r,
                      r < 0 ? strerror(-r) : "ok", p, gettid(), t, getpid());

        /* the NSpid number cut by a 4096-byte buffer: its last digit at
         * bytes 4093..4096 (one group of "10" first makes any shift) */
        for (long target = 4093; target <= 4096; target++) {
                bool found = false;
                size_t from = target - base > 20 ? (size_t)(target - base) / 2 - 8 : 1;
                for (size_t k = from; k < ELEMENTSOF(groups) && !found; k++)
                        for (int wide = 0; wide <= 1 && !found; wide++) {
                                groups[0] = wide ? 10 : 1;
                                ck_assert_int_eq(setgroups(k, groups), 0);
                                found = nspid_last_digit() == target;
                        }
                ck_assert_msg(found, "no group list puts the NSpid digits at %ld", target);
                ids_direct(&p, &t, &r);
                ck_assert_msg(r == 0 && p == gettid() && t == getpid(),
                              "NSpid's last digit at byte %ld: notify_ns_ids = %d (%s), nspid %d (want %d), "
                              "nstgid %d (want %d)",
                              target, r, r < 0 ? strerror(-r) : "ok", p, gettid(), t, getpid());
        }
}
END_TEST

static int64_t run_nsids_init(const struct mcase *c)
{
        if (getpid() != 1)
                return -1000; /* not in a new pid namespace */
        return trap(OP_NSIDS, 0, 0, 0, 0, 0);
}

/* In a pid namespace: the ids as the child sees them, while the kernel hands
 * the sentry the host pid. */
START_TEST(test_ns_ids_pidns)
{
        pid_t probe = fork();
        ck_assert_int_ge(probe, 0);
        if (probe == 0)
                _exit(unshare(CLONE_NEWPID) == 0 ? 0 : 1);
        int pst;
        ck_assert_int_eq(waitpid(probe, &pst, 0), probe);
        if (!WIFEXITED(pst) || WEXITSTATUS(pst) != 0) {
                fprintf(stderr, "test_ns_ids_pidns: no new pid namespace here; not run\n");
                return;
        }

        const struct mcase cases[] = {
                {.what = "init of a new pid namespace", .run = run_nsids_init, .want = 1 | (int64_t)1 << 32},
                {.what = "umask in a new pid namespace (host /proc)", .run = run_umask, .p1 = 026, .want = 026},
        };
        struct scenario sc = {.cases = cases, .n = ELEMENTSOF(cases), .new_pidns = true};
        struct outcome out;
        run_scenario(&sc, &out);
        report_results(cases, ELEMENTSOF(cases), out.got, "pid namespace");
        /* the sentry saw the child by its pid in our namespace, not 1 */
        ck_assert_int_eq(atomic_load(&R.last_pid), out.child);
        ck_assert_int_ne(out.child, 1);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* verdicts */

static int64_t check_devnull(int64_t fd, bool want_cloexec)
{
        if (fd < 0)
                return fd;
        struct stat st;
        if (fstat((int)fd, &st) < 0)
                return -1001;
        if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
                return -1002;
        int fl = fcntl((int)fd, F_GETFD);
        if (fl < 0 || !!(fl & FD_CLOEXEC) != want_cloexec)
                return -1003;
        int acc = fcntl((int)fd, F_GETFL);
        if (acc < 0 || (acc & O_ACCMODE) != O_RDWR)
                return -1004;
        close((int)fd);
        return 1;
}

static int64_t run_fd(const struct mcase *c)
{
        /* the injected fd is the lowest free number, as open() would give */
        int probe = dup(0);
        if (probe < 0)
                return -1000;
        close(probe);
        int64_t fd = trap(OP_FD, 0, 0, c->p1, 0, 0);
        if (fd >= 0 && fd != probe)
                return -1005;
        return check_devnull(fd, c->p1 & O_CLOEXEC);
}

/* SETFD: /dev/null replaces what the child had at fd 100 (a pipe), as dup2 would */
static int64_t run_setfd(const struct mcase *c)
{
        int p[2];
        if (pipe(p) < 0)
                return -1000;
        if (dup2(p[0], 100) < 0)
                return -1000;
        close(p[0]);
        close(p[1]);
        int64_t fd = trap(OP_SETFD, 0, 0, 100, c->p1, 0);
        if (fd != 100)
                return fd < 0 ? fd : -1006;
        return check_devnull(fd, c->p1 & O_CLOEXEC);
}

static int64_t run_continue(const struct mcase *c)
{
        int64_t fd = trap(OP_CONTINUE, U64((int64_t)AT_FDCWD), U64("/dev/null"), O_RDWR | O_CLOEXEC, 0, 0);
        return check_devnull(fd, true);
}

static int64_t run_unlinkat(const struct mcase *c)
{
        long r = syscall(__NR_unlinkat, AT_FDCWD, "/nonexistent", 0);
        return r < 0 ? -(int64_t)errno : r;
}

static int64_t run_mkdirat(const struct mcase *c)
{
        long r = syscall(__NR_mkdirat, AT_FDCWD, "/nonexistent", 0755);
        return r < 0 ? -(int64_t)errno : r;
}

static int64_t run_getppid(const struct mcase *c)
{
        long r = syscall(__NR_getppid);
        return r < 0 ? -(int64_t)errno : r;
}

static int64_t run_getpid(const struct mcase *c)
{
        return syscall(__NR_getpid) == getpid() ? 1 : 0;
}

static void check_verdicts(const char *how, bool execs_untrapped, bool want_killable)
{
        const struct mcase cases[] = {
                {.what = "VERDICT_FD with O_CLOEXEC", .run = run_fd, .p1 = O_CLOEXEC, .want = 1},
                {.what = "VERDICT_FD without O_CLOEXEC", .run = run_fd, .p1 = 0, .want = 1},
                {.what = "VERDICT_FD, then the handler fails", .op = OP_FD_FAIL, .p1 = EIO, .want = -EIO},
                {.what = "notify_install_fd at fd 100 (SETFD), with O_CLOEXEC",
                 .run = run_setfd,
                 .p1 = O_CLOEXEC,
                 .want = 1},
                {.what = "notify_install_fd at fd 100 (SETFD), without", .run = run_setfd, .p1 = 0, .want = 1},
                {.what = "VERDICT_VALUE 12345", .op = OP_VALUE, .p1 = 12345, .want = 12345},
                {.what = "VERDICT_VALUE 0", .op = OP_VALUE, .p1 = 0, .want = 0},
                {.what = "VERDICT_VALUE 2^40", .op = OP_VALUE, .p1 = UINT64_C(1) << 40, .want = INT64_C(1) << 40},
                {.what = "VERDICT_ERROR ENOENT", .op = OP_ERROR, .p1 = ENOENT, .want = -ENOENT},
                {.what = "VERDICT_ERROR 0 (a denial without a reason)", .op = OP_ERROR, .p1 = 0, .want = -EACCES},
                {.what = "the handler fails with -EIO", .op = OP_FAIL, .p1 = EIO, .want = -EIO},
                {.what = "the handler fails with -ENOMEM", .op = OP_FAIL, .p1 = ENOMEM, .want = -ENOMEM},
                {.what = "VERDICT_CONTINUE (the kernel opens /dev/null)", .run = run_continue, .want = 1},
                {.what = "notify_id_valid: live id valid, made-up id not", .op = OP_IDVALID, .want = 3},
                {.what = "a second table row (unlinkat)", .run = run_unlinkat, .want = 7},
                {.what = "a notified row without handler (mkdirat)", .run = run_mkdirat, .want = -ENOSYS},
                {.what = "an errno row (getppid)", .run = run_getppid, .want = -EPERM},
                {.what = "an untrapped call (getpid)", .run = run_getpid, .want = 1},
        };
        struct scenario sc = {.cases = cases,
                              .n = ELEMENTSOF(cases),
                              .execs_untrapped = execs_untrapped,
                              .thread_init = count_thread_init,
                              .min_workers = 3,
                              .max_workers = 5};
        struct outcome out;
        run_scenario(&sc, &out);
        report_results(cases, ELEMENTSOF(cases), out.got, how);
        ck_assert_msg(out.wait_killable == want_killable, "%s: the engine took the wait %s", how,
                      out.wait_killable ? "to be killable" : "not to be killable");
        /* counts: the openats with a handler, unlinkat once, mkdirat (no handler) never */
        ck_assert_uint_eq(out.count_openat, 14);
        ck_assert_uint_eq(out.count_unlinkat, 1);
        ck_assert_uint_eq(out.count_mkdirat, 0);
        ck_assert_int_eq(atomic_load(&R.handled), 14);
        ck_assert_int_ge(atomic_load(&R.thread_inits), 3);
        ck_assert_int_le(atomic_load(&R.thread_inits), 5);
        ck_assert_int_eq(atomic_load(&R.thread_init_bad_userdata), 0);
}

/* Whether this kernel has the killable wait the two-step injection needs. */
static bool have_killable(void)
{
        struct notify_features f;
        return notify_probe_features(&f) == 0 && f.wait_killable_recv;
}

START_TEST(test_verdicts)
{
        check_verdicts("verdicts", false, have_killable());
}
END_TEST

START_TEST(test_verdicts_execs_untrapped)
{
        /* the fds (/dev/null, open for writing) injected in two steps where
         * the wait is killable: every verdict the same */
        check_verdicts("verdicts, execs untrapped", true, have_killable());
}
END_TEST

START_TEST(test_verdicts_not_killable)
{
        /* the filter without the killable wait: one step always, and every
         * verdict the same */
        ck_assert_int_eq(notify_force_fallback("wait_killable_recv"), 0);
        check_verdicts("verdicts, execs untrapped, wait not killable", true, false);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* An injected fd and a signal storm: whichever way the engine injects, no
 * signal can leave the program an fd it does not know of. With execs
 * untrapped an fd open for writing is injected in two steps where the wait
 * is killable, in one otherwise. The engine holds each injection for
 * 200 ms after ADDFD (CORDON_TEST_STALL=fd-copy), and
 * from 10 ms after the engine received the call a thread signals the
 * caller every millisecond, 30 times (SA_RESTART). Two steps, the caller's
 * wait is killable once the call is received, so it sleeps through them
 * until the SEND, and the call is served once; in one step
 * (ADDFD_FLAG_SEND, 4 ms after the receive) the call is usually over
 * before the storm begins, and a call the storm interrupts is withdrawn and
 * made again. Were the two steps used without the killable wait, a signal
 * after the ADDFD would restart the call and the first fd would stay
 * behind (an extra fd). */

static atomic_int storm_handled;
static atomic_bool storm_stop;
static pid_t storm_target;

static void on_storm(int sig)
{
        (void)sig;
        atomic_fetch_add(&storm_handled, 1);
}

static void *storm(void *arg)
{
        (void)arg;
        for (int i = 0; i < 5000 && !atomic_load(storm_received) && !atomic_load(&storm_stop); i++)
                nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
        for (int i = 0; i < 30 && !atomic_load(&storm_stop); i++) {
                syscall(__NR_tgkill, getpid(), storm_target, SIGUSR1);
                nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
        }
        return NULL;
}

/* open fds 0..1023, counted without an open (openat is trapped here) */
static int count_fds_trapped(void)
{
        int n = 0;
        for (int fd = 0; fd < 1024; fd++)
                n += fcntl(fd, F_GETFD) >= 0;
        return n;
}

static int64_t run_fd_storm(const struct mcase *c)
{
        struct sigaction sa = {.sa_handler = on_storm, .sa_flags = SA_RESTART};
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGUSR1, &sa, NULL) < 0)
                return -1000;
        int before = count_fds_trapped();
        storm_target = (pid_t)syscall(__NR_gettid);
        atomic_store(&storm_stop, false);
        pthread_t t;
        if (pthread_create(&t, NULL, storm, NULL) != 0)
                return -1000;
        int64_t fd = trap(OP_FD, 0, 0, O_CLOEXEC, 0, 0);
        atomic_store(&storm_stop, true);
        pthread_join(t, NULL);
        int after = count_fds_trapped();
        if (fd < 0)
                return fd;
        if (after != before + 1)
                return -2000 - (after - before); /* -2002: an fd left behind */
        /* p1: the storm must have reached the call's wait (two steps) */
        if (c->p1 && atomic_load(&storm_handled) == 0)
                return -3000;
        return check_devnull(fd, true);
}

static void check_fd_storm(const char *how, bool want_killable)
{
        storm_received = mmap(NULL, sizeof(*storm_received), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        ck_assert_ptr_ne(storm_received, MAP_FAILED);
        const struct mcase cases[] = {
                {.what = "an injected fd under a storm of signals: it, and no other",
                 .run = run_fd_storm,
                 .p1 = want_killable,
                 .want = 1},
        };
        setenv("CORDON_TEST_STALL", "fd-copy", 1);
        struct scenario sc = {.cases = cases, .n = 1, .execs_untrapped = true, .min_workers = 2, .max_workers = 4};
        struct outcome out;
        run_scenario(&sc, &out);
        unsetenv("CORDON_TEST_STALL");
        report_results(cases, 1, out.got, how);
        ck_assert_msg(out.wait_killable == want_killable, "%s: the engine took the wait %s", how,
                      out.wait_killable ? "to be killable" : "not to be killable");
        /* two steps: served once, never interrupted into a second request */
        if (want_killable)
                ck_assert_uint_eq(out.count_openat, 1);
        munmap(storm_received, sizeof(*storm_received));
        storm_received = NULL;
}

START_TEST(test_fd_signals)
{
        check_fd_storm("signals, execs untrapped", have_killable());
}
END_TEST

START_TEST(test_fd_signals_not_killable)
{
        ck_assert_int_eq(notify_force_fallback("wait_killable_recv"), 0);
        check_fd_storm("signals, execs untrapped, wait not killable", false);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* concurrency: 8 threads x 200 calls, each with its own payload and answer */

#define N_THREADS 8
#define N_CALLS   200

struct worker_arg {
        int t;
        int wrong, done;
};

static void *hammer(void *arg)
{
        struct worker_arg *w = arg;
        char buf[600];
        for (int i = 0; i < N_CALLS; i++) {
                int len = snprintf(buf, sizeof(buf), "thread %d call %d:", w->t, i);
                int pad = (w->t * 37 + i * 11) % 400;
                memset(buf + len, 'a' + (i + w->t) % 26, (size_t)pad);
                len += pad;
                buf[len] = '\0';
                /* every 20th call is slow, so calls overlap and workers are added */
                uint64_t sleep_ms = i % 20 == 0 ? 3 : 0;
                int64_t want = hash_value(buf, (size_t)len);
                int64_t got = trap(OP_HASH, 0, U64(buf), PATH_MAX, sleep_ms, 0);
                if (got != want)
                        w->wrong++;
                w->done++;
        }
        return NULL;
}

static int64_t run_hammer(const struct mcase *c)
{
        pthread_t th[N_THREADS];
        struct worker_arg args[N_THREADS] = {{0}};
        for (int t = 0; t < N_THREADS; t++) {
                args[t].t = t;
                if (pthread_create(&th[t], NULL, hammer, &args[t]) != 0)
                        return -1000;
        }
        int64_t wrong = 0, done = 0;
        for (int t = 0; t < N_THREADS; t++) {
                pthread_join(th[t], NULL);
                wrong += args[t].wrong;
                done += args[t].done;
        }
        /* all done and none wrong gives exactly N_THREADS * N_CALLS */
        return done + wrong * 1000000;
}

static void check_concurrency(unsigned min_workers, unsigned max_workers)
{
        static const struct mcase cases[] = {
                {.what = "calls completed + 10^6 x answers that were not for the call",
                 .run = run_hammer,
                 .want = N_THREADS * N_CALLS},
        };
        struct scenario sc = {.cases = cases, .n = 1, .min_workers = min_workers, .max_workers = max_workers};
        struct outcome out;
        run_scenario(&sc, &out);
        report_results(cases, 1, out.got, "concurrency");
        ck_assert_uint_eq(out.count_openat, N_THREADS * N_CALLS);
        ck_assert_int_eq(atomic_load(&R.handled), N_THREADS * N_CALLS);
        /* more than one call was served at a time (workers were added), never more than allowed */
        ck_assert_int_ge(atomic_load(&R.max_in_flight), 2);
        ck_assert_int_le(atomic_load(&R.max_in_flight), (int)max_workers);
}

START_TEST(test_concurrency_grow)
{
        check_concurrency(1, 4);
}
END_TEST

START_TEST(test_concurrency_wide)
{
        check_concurrency(8, 8);
}
END_TEST

/* A handler that blocks must not hold up the other threads' calls: the
 * engine has one receiver, and its watchdog hands receiving on (to a parked
 * or new worker) once a call has been served for a tick. */

static void *slow_call(void *arg)
{
        (void)arg;
        char buf[] = "the slow one";
        trap(OP_HASH, 0, U64(buf), PATH_MAX, 400, 0); /* 400 ms in the handler */
        return NULL;
}

static int64_t run_blocked(const struct mcase *c)
{
        pthread_t th;
        if (pthread_create(&th, NULL, slow_call, NULL) != 0)
                return -1000;
        nanosleep(&(struct timespec){0, 20000000}, NULL); /* the slow call is being served */
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int wrong = 0;
        for (int i = 0; i < 100; i++) {
                char buf[64];
                int len = snprintf(buf, sizeof(buf), "quick call %d", i);
                if (trap(OP_HASH, 0, U64(buf), PATH_MAX, 0, 0) != hash_value(buf, (size_t)len))
                        wrong++;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        pthread_join(th, NULL);
        int64_t ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
        /* 1: all answered right, and long before the slow call ended */
        return wrong ? -wrong : ms < 200 ? 1 : 1000 + ms;
}

START_TEST(test_blocked_handler)
{
        static const struct mcase cases[] = {
                {.what = "100 quick calls while another thread's call blocks 400 ms (1: done in < 200 ms; "
                         "1000+ms: they waited)",
                 .run = run_blocked,
                 .want = 1},
        };
        struct scenario sc = {.cases = cases, .n = 1, .min_workers = 1, .max_workers = 4};
        struct outcome out;
        run_scenario(&sc, &out);
        report_results(cases, 1, out.got, "blocked handler");
        ck_assert_int_eq(atomic_load(&R.handled), 101);
}
END_TEST

/* Stopping while calls keep coming: when notify_engine_stop() returns, no
 * worker of the engine may run any more (it has freed the engine). */

static void *forever(void *arg)
{
        char buf[64];
        for (unsigned i = 0;; i++) {
                snprintf(buf, sizeof(buf), "%p call %u", arg, i);
                if (trap(OP_HASH, 0, U64(buf), PATH_MAX, 1, 0) < 0)
                        break; /* the listener is gone: ENOSYS */
        }
        return NULL;
}

static int64_t run_forever(const struct mcase *c)
{
        pthread_t th[N_THREADS];
        for (int t = 0; t < N_THREADS; t++)
                if (pthread_create(&th[t], NULL, forever, (void *)(uintptr_t)t) != 0)
                        return -1000;
        for (int t = 0; t < N_THREADS; t++)
                pthread_join(th[t], NULL);
        return 0;
}

static int slow_thread_init(void *userdata)
{
        atomic_fetch_add(&R.thread_inits, 1);
        nanosleep(&(struct timespec){0, 3000000}, NULL);
        if (atomic_load(&R.stopped))
                atomic_fetch_add(&R.ran_after_stop, 1);
        return 0;
}

START_TEST(test_stop_under_load)
{
        static const struct mcase cases[] = {{.what = "calls until the engine stops", .run = run_forever}};
        struct scenario sc = {.cases = cases, .n = 1};
        for (int round = 0; round < 10; round++) {
                alarm(45);
                int sock;
                pid_t pid;
                int lfd = spawn_child(&sc, &sock, &pid);
                results_reset();
                struct notify_engine_config cfg = {
                        .table = test_table,
                        .n_table = ELEMENTSOF(test_table),
                        .userdata = &R,
                        .contexts = {&R},
                        .thread_init = slow_thread_init,
                        .min_workers = 1,
                        .max_workers = 32,
                };
                struct notify_engine *e = NULL;
                ck_assert_int_eq(notify_engine_start(&cfg, lfd, &e), 0);
                for (int i = 0; i < 5000 && atomic_load(&R.handled) < 40; i++)
                        nanosleep(&(struct timespec){0, 1000000}, NULL);
                ck_assert_int_ge(atomic_load(&R.handled), 40);
                notify_engine_stop(e);
                atomic_store(&R.stopped, true);
                /* give a straggler time to show itself */
                nanosleep(&(struct timespec){0, 50000000}, NULL);
                int after = atomic_load(&R.ran_after_stop);
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                close(sock);
                alarm(0);
                ck_assert_msg(after == 0,
                              "round %d: %d worker(s) ran after notify_engine_stop() returned (%d workers started)",
                              round, after, atomic_load(&R.thread_inits));
        }
}
END_TEST

/* ------------------------------------------------------------------------ */

static Suite *mem_suite(void)
{
        Suite *s = suite_create("notify-mem");
        TCase *tc;

        tc = tcase_create("strings");
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_strings_direct);
        tcase_add_test(tc, test_strings_engine);
        tcase_add_test(tc, test_dead_thread);
        suite_add_tcase(s, tc);

        tc = tcase_create("fallback");
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_force_fallback_unknown);
        tcase_add_test(tc, test_privilege_hook_retry);
        tcase_add_test(tc, test_write_mem);
        tcase_add_test(tc, test_write_mem_fallback);
        tcase_add_test(tc, test_strings_fallback_direct);
        tcase_add_test(tc, test_strings_fallback_engine);
        tcase_add_test(tc, test_fallback_guard_pages);
        tcase_add_test(tc, test_fallback_maps_long_lines);
        suite_add_tcase(s, tc);

        tc = tcase_create("proc");
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_dirfd);
        tcase_add_test(tc, test_umask);
        tcase_add_test(tc, test_umask_thread_name);
        tcase_add_test(tc, test_umask_cache);
        tcase_add_test(tc, test_umask_cache_sharing);
        tcase_add_test(tc, test_umask_cache_in_flight);
        tcase_add_test(tc, test_umask_cache_pid_reuse);
        tcase_add_test(tc, test_cwd_cache);
        tcase_add_test(tc, test_cwd_cache_sharing);
        tcase_add_test(tc, test_ns_ids);
        tcase_add_test(tc, test_ns_ids_pidns);
        tcase_add_test(tc, test_ns_ids_large_status);
        suite_add_tcase(s, tc);

        tc = tcase_create("engine");
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_verdicts);
        tcase_add_test(tc, test_verdicts_execs_untrapped);
        tcase_add_test(tc, test_verdicts_not_killable);
        tcase_add_test(tc, test_fd_signals);
        tcase_add_test(tc, test_fd_signals_not_killable);
        tcase_add_test(tc, test_concurrency_grow);
        tcase_add_test(tc, test_concurrency_wide);
        tcase_add_test(tc, test_blocked_handler);
        tcase_add_test(tc, test_stop_under_load);
        suite_add_tcase(s, tc);
        return s;
}

int main(void)
{
        struct notify_features f;
        int r = notify_probe_features(&f);
        if (r < 0 || !f.user_notif) {
                fprintf(stderr, "SKIP: seccomp user notification is not available (%s)\n",
                        r < 0 ? strerror(-r) : "SECCOMP_RET_USER_NOTIF not offered");
                return 77;
        }
        if (!f.addfd_send)
                fprintf(stderr, "note: no SECCOMP_ADDFD_FLAG_SEND; the engine's two-step fd injection runs\n");
        SRunner *sr = srunner_create(mem_suite());
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
