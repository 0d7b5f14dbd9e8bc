/* The exec tracer: verifies after every exec in the sandbox that the process
 * runs the image the exec handler approved (fs/exec.c), and kills it
 * otherwise.
 *
 * It is a process of its own, forked by the sentry while the sentry is still
 * single-threaded. It PTRACE_SEIZEs the sandbox's init before init forks the
 * command, and keeps it. Every other thread it seizes only when the exec
 * handler asks (over the channel, before it lets a trapped execve run), and
 * lets go of at that exec's event, once the image is verified. Only exec
 * events are asked for, and no per-syscall stops: a process stops for the
 * tracer at its exec and nowhere else, not at its forks, its signals or its
 * exit (a traced child's exit would also wait for the tracer before its
 * parent could reap it). Every exec is still seen: execve and execveat are
 * always trapped, and the thread is traced before the handler answers.
 *
 * Why a process and not a thread of the sentry: ptrace belongs to the tracing
 * thread, and waiting for tracees is waitpid(-1, __WALL) — in the sentry that
 * would also reap init, whose exit status the main loop (supervise.c) waits
 * for. The tracer has no children of its own, so everything it waits for is a
 * tracee; when a traced init exits, the tracer's wait passes it on to its real
 * parent, the sentry, as the kernel does for any ptraced child.
 *
 * Lifetime: PTRACE_O_EXITKILL kills every tracee if the tracer dies, init
 * among them, and with init the whole sandbox; a process that outlived it a
 * moment could not exec (the handler's request fails: refused). The tracer
 * dies with the sentry (PR_SET_PDEATHSIG), and exits by itself once init is
 * gone and no tracee is left.
 *
 * The end of the file is the sentry's side (exec_checks_*): starting it
 * only where execs will be checked, taking its word, letting it go. */
#include "config.h"

#include <seccomp.h>

#include <elf.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>

#include "common/allowlist.h"
#include "common/fdpass.h"
#include "common/trace.h"
#include "common/util.h"
#include "fs/fs.h"
#include "notify/notify.h"
#include "sentry/sentry-internal.h"

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif

#define TRACE_OPTIONS (PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL)

/* One audit line: to stderr with -v, to the audit log when one is open. */
static void audit_kill(const struct exectrace_config *c, pid_t pid, pid_t former, const char *why,
                       const struct stat *st, const struct fs_exec_approval *a)
{
        char ts[40];
        struct timespec now;
        struct tm tm;
        clock_gettime(CLOCK_REALTIME, &now);
        gmtime_r(&now.tv_sec, &tm);
        size_t tl = strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
        snprintf(ts + tl, sizeof(ts) - tl, ".%03ldZ", now.tv_nsec / 1000000);
        char exe[64] = "unknown", want[64] = "none";
        if (st)
                snprintf(exe, sizeof(exe), "%llu:%llu", (unsigned long long)st->st_dev, (unsigned long long)st->st_ino);
        if (a)
                snprintf(want, sizeof(want), "%llu:%llu", (unsigned long long)a->run.dev,
                         (unsigned long long)a->run.ino);
        if (c->verbose)
                dprintf(STDERR_FILENO,
                        "cordon: exec check: killed host pid %d (exec by thread %d): %s (runs %s, approved %s)\n",
                        (int)pid, (int)former, why, exe, want);
        if (c->audit_fd >= 0) {
                /* the reason is one of our own fixed strings: no escaping needed */
                char line[512];
                int n = snprintf(line, sizeof(line),
                                 "{\"time\":\"%s\",\"sandbox\":\"%s\",\"syscall\":\"execve\",\"pid\":%d,"
                                 "\"decision\":\"killed\",\"reason\":\"exec_mismatch\",\"detail\":\"%s\","
                                 "\"exe\":\"%s\",\"approved\":\"%s\"}\n",
                                 ts, c->sandbox_id, (int)pid, why, exe, want);
                if (n > 0 && (size_t)n < sizeof(line))
                        (void)write_all(c->audit_fd, line, (size_t)n);
        }
}

/* Whether the tracee, stopped at its exec event, runs 64-bit code: the
 * kernel gives a tracer the register set of the tracee's mode (the check
 * strace makes), 27 longs for x86_64 against 17 ints for i386. It needs no
 * access to the tracee's memory or file, which a non-dumpable image (an
 * execute-only file) may deny us. */
static bool runs_64bit(pid_t pid)
{
        struct user_regs_struct regs;
        struct iovec iov = {.iov_base = &regs, .iov_len = sizeof(regs)};
        return ptrace(PTRACE_GETREGSET, pid, (void *)(unsigned long)NT_PRSTATUS, &iov) == 0 &&
               iov.iov_len == sizeof(regs);
}

/* At PTRACE_EVENT_EXEC: pid has passed the point of no return and runs no
 * instruction of its new image until we let it. Returns true if it may go. */
static bool verify_exec(const struct exectrace_config *c, pid_t pid)
{
        unsigned long former = 0;
        /* the thread that called execve (it has taken the leader's pid by now) */
        if (ptrace(PTRACE_GETEVENTMSG, pid, NULL, &former) < 0)
                former = (unsigned long)pid;
        struct fs_exec_approval a;
        bool approved = fs_exec_take(c->table, (pid_t)former, &a) == 0;

        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
        struct stat st;
        bool have_st = false;
        enum fs_exec_kind kind = FS_EXEC_OTHER;
        bool kind_known = false;
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                fd = open(path, O_PATH | O_CLOEXEC); /* unreadable to us: identity only */
        if (fd >= 0 && fstat(fd, &st) == 0) {
                have_st = true;
                unsigned char hdr[256];
                ssize_t n = pread(fd, hdr, sizeof(hdr), 0);
                if (n > 0) {
                        kind = fs_exec_classify(hdr, (size_t)n);
                        kind_known = true;
                }
        }

        const char *why = NULL;
        if (!approved)
                why = "no approved exec for this thread";
        else if (!have_st)
                why = "cannot read /proc/PID/exe";
        else if ((uint64_t)st.st_dev != a.run.dev || (uint64_t)st.st_ino != a.run.ino)
                why = "the image is not the approved file (path or file changed after the check)";
        else if (kind_known && kind != FS_EXEC_NATIVE_ELF)
                why = "the image is not an x86_64 ELF (file changed after the check)";
        else if (!kind_known && a.unread && !runs_64bit(pid))
                /* Neither the child nor we could read it (an execute-only
                 * file whose owner the bind's idmap or an unprivileged
                 * sentry does not hold), so its machine is read off the
                 * running process instead. The image is the approved file
                 * itself (its identity, above), so the kernel's ELF loader
                 * ran it, not a #! or binfmt_misc interpreter (whose image
                 * /proc/PID/exe would be); that loader takes x86_64 and the
                 * compat i386 and x32 images only. i386 runs in 32-bit
                 * mode: refused here. x32 runs 64-bit code whose x32 calls
                 * the filter kills like any other ABI's (notify/filter.c).
                 * A register set we cannot read fails closed. */
                why = "the image's machine cannot be checked, or is not x86_64";
        if (!why)
                return true;
        kill(pid, SIGKILL);
        audit_kill(c, pid, (pid_t)former, why, have_st ? &st : NULL, approved ? &a : NULL);
        return false;
}

static bool is_stop_signal(int sig)
{
        return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* The sandbox's pid namespace, as stat shows /proc/PID/ns/pid. */
struct ns_id {
        dev_t dev;
        ino_t ino;
};

static bool pidns_of(pid_t pid, struct ns_id *ret)
{
        char path[64];
        struct stat st;
        snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
        if (stat(path, &st) < 0)
                return false;
        *ret = (struct ns_id){st.st_dev, st.st_ino};
        return true;
}

static bool traced_by_us(pid_t tid)
{
        char path[64], buf[1024];
        snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (n <= 0)
                return false;
        buf[n] = '\0';
        const char *t = strstr(buf, "\nTracerPid:");
        return t && strtol(t + 12, NULL, 10) == getpid();
}

/* Lets go of a task seized by mistake: PTRACE_DETACH needs a stopped
 * tracee, so it is interrupted first. */
static void release(pid_t tid)
{
        if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) < 0)
                return;
        int status;
        while (waitpid(tid, &status, __WALL) < 0 && errno == EINTR)
                ;
        (void)ptrace(PTRACE_DETACH, tid, NULL, NULL);
}

/* A thread the sentry is about to let exec (fs/exec.c): seized, not
 * stopped, so that its exec event stops it. The sentry asks while the
 * thread waits in its trapped execve, and checks afterwards that the call
 * is still pending, so the tid was the caller's throughout; should it have
 * died and its number gone to a task outside the sandbox in between, that
 * task is let go at once. Already ours (an exec the kernel then failed
 * leaves the thread seized): fine. 0 or -errno. */
static int seize(pid_t tid, const struct ns_id *sandbox, pid_t init_pid)
{
        if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)(unsigned long)TRACE_OPTIONS) < 0) {
                int r = -errno;
                return r == -EPERM && traced_by_us(tid) ? 0 : r;
        }
        struct ns_id ns, nested;
        if (pidns_of(tid, &ns) && ns.dev == sandbox->dev && ns.ino == sandbox->ino)
                return 0;
        /* or the one init's forks are born into: an OCI container's own,
         * nested in the sandbox's (init.c); the sandbox can make no other */
        char path[64];
        struct stat st;
        snprintf(path, sizeof(path), "/proc/%d/ns/pid_for_children", (int)init_pid);
        nested = stat(path, &st) == 0 ? (struct ns_id){st.st_dev, st.st_ino} : (struct ns_id){0, 0};
        if (pidns_of(tid, &ns) && nested.ino != 0 && ns.dev == nested.dev && ns.ino == nested.ino)
                return 0;
        release(tid);
        return -ESRCH;
}

/* Every stop and exit waiting to be collected. 0 while tracees are left,
 * -ECHILD once none is (init and all are gone), or another -errno. */
static int collect(const struct exectrace_config *c)
{
        for (;;) {
                int status;
                pid_t pid = waitpid(-1, &status, __WALL | WNOHANG);
                if (pid == 0)
                        return 0;
                if (pid < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (!WIFSTOPPED(status))
                        continue; /* a tracee exited: reaped (init goes on to the sentry) */
                int sig = WSTOPSIG(status), event = status >> 16;
                switch (event) {
                case 0:
                        /* signal-delivery-stop: deliver it as it came */
                        ptrace(PTRACE_CONT, pid, NULL, (void *)(long)sig);
                        break;
                case PTRACE_EVENT_STOP:
                        /* group-stop (kill -STOP, job control): stay stopped
                         * but let the stop and a later SIGCONT work as without
                         * a tracer; any other event-stop (the end of a listen)
                         * just goes on */
                        if (is_stop_signal(sig))
                                ptrace(PTRACE_LISTEN, pid, NULL, NULL);
                        else
                                ptrace(PTRACE_CONT, pid, NULL, NULL);
                        break;
                case PTRACE_EVENT_EXEC:
                        trace_mark("tracer: exec event");
                        /* verified: let go of it; its next exec is seized
                         * anew (init, which never execs, stays ours) */
                        if (verify_exec(c, pid))
                                ptrace(PTRACE_DETACH, pid, NULL, NULL);
                        trace_mark("tracer: exec verified");
                        break;
                default:
                        ptrace(PTRACE_CONT, pid, NULL, NULL);
                        break;
                }
        }
}

_noreturn_ static void tracer_main(const struct exectrace_config *c, pid_t sentry, int req_fd)
{
        /* dies with the sentry; checked after, for a sentry already gone */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != sentry)
                _exit(1);
        (void)prctl(PR_SET_NAME, "cordon-exectrace", 0, 0, 0);
        /* the terminal's job-control and interrupt signals are the
         * sandbox's business, not ours (SIGKILL and SIGSTOP stay) */
        sigset_t all;
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        /* nothing of the sentry's but the audit log and stderr: not the
         * listener, not the view's root, not init's channel */
        (void)close_all_but((const int[]){req_fd, c->audit_fd}, 2);

        int r = 0;
        /* a stop or an exit of a tracee sends us SIGCHLD (blocked above):
         * read through a signalfd beside the sentry's requests */
        sigset_t chld;
        sigemptyset(&chld);
        sigaddset(&chld, SIGCHLD);
        int sig_fd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
        if (sig_fd < 0)
                r = -errno;
        struct ns_id sandbox = {0, 0};
        if (r >= 0 && !pidns_of(c->init_pid, &sandbox))
                r = -ESRCH;
        /* a test's stand-in for a host that refuses ptrace (Yama, an LSM, a
         * sandbox around cordon's): CORDON_TEST_FORCE_FALLBACK=ptrace */
        if (r >= 0 && notify_feature_absent("ptrace"))
                r = -EPERM;
        else if (r >= 0 && ptrace(PTRACE_SEIZE, c->init_pid, NULL, (void *)(unsigned long)TRACE_OPTIONS) < 0)
                r = -errno;
        /* From here on the tracer only waits, continues, reads /proc and
         * the ELF header of what was exec'd, kills and writes its audit
         * line: a bug in it (it parses a file the sandbox chose) finds no
         * more than that. */
        static const int allowed[] = {
                SCMP_SYS(ptrace),         SCMP_SYS(wait4),        SCMP_SYS(waitid),
                SCMP_SYS(kill),           SCMP_SYS(tgkill),       SCMP_SYS(open),
                SCMP_SYS(openat),         SCMP_SYS(read),         SCMP_SYS(pread64),
                SCMP_SYS(lseek),          SCMP_SYS(fstat),        SCMP_SYS(newfstatat),
                SCMP_SYS(statx),          SCMP_SYS(readlink),     SCMP_SYS(readlinkat),
                SCMP_SYS(close),          SCMP_SYS(write),        SCMP_SYS(clock_gettime),
                SCMP_SYS(getpid),         SCMP_SYS(gettid),       SCMP_SYS(brk),
                SCMP_SYS(mmap),           SCMP_SYS(munmap),       SCMP_SYS(mprotect),
                SCMP_SYS(madvise),        SCMP_SYS(mremap),       SCMP_SYS(futex),
                SCMP_SYS(rt_sigprocmask), SCMP_SYS(rt_sigreturn), SCMP_SYS(restart_syscall),
                SCMP_SYS(exit),           SCMP_SYS(exit_group),   SCMP_SYS(poll),
                SCMP_SYS(ppoll),
        };
        if (r >= 0 && allowlist_install(allowed, ELEMENTSOF(allowed)) < 0)
                r = -EPERM;
        /* our word on init, the channel's first message (exectrace_ready) */
        (void)!write(req_fd, &r, sizeof(r));
        if (r < 0)
                _exit(1);

        for (;;) {
                struct pollfd p[2] = {{.fd = sig_fd, .events = POLLIN}, {.fd = req_fd, .events = POLLIN}};
                if (poll(p, 2, -1) < 0 && errno != EINTR)
                        _exit(1);
                if (p[1].revents) {
                        pid_t tid;
                        if (read(req_fd, &tid, sizeof(tid)) == sizeof(tid) && tid == EXECTRACE_RELEASE) {
                                /* execs run natively (init.c): nothing to
                                 * verify, init let go, the tracer gone */
                                release(c->init_pid);
                                (void)!write(req_fd, &tid, sizeof(tid));
                                _exit(0);
                        } else if (tid > 0) {
                                int res = seize(tid, &sandbox, c->init_pid);
                                (void)!write(req_fd, &res, sizeof(res));
                        } else
                                req_fd = -1; /* the sentry is done: only the tracees matter now */
                }
                if (p[0].revents & POLLIN) {
                        struct signalfd_siginfo si;
                        while (read(sig_fd, &si, sizeof(si)) == sizeof(si))
                                ;
                }
                int collected = collect(c);
                if (collected < 0)
                        _exit(collected == -ECHILD ? 0 : 1);
        }
}

int exectrace_start(const struct exectrace_config *c, pid_t *ret_pid, int *ret_channel)
{
        int q[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, q) < 0)
                return negative_errno();
        pid_t sentry = getpid();
        pid_t pid = fork();
        if (pid < 0) {
                int r = negative_errno();
                close(q[0]);
                close(q[1]);
                return r;
        }
        if (pid == 0) {
                close(q[0]);
                tracer_main(c, sentry, q[1]);
        }
        close(q[1]);
        *ret_pid = pid;
        *ret_channel = q[0];
        return 0;
}

int exectrace_ready(pid_t pid, int channel)
{
        int r = 0;
        ssize_t n;
        do
                n = read(channel, &r, sizeof(r));
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t)sizeof(r))
                r = -ECHILD;
        if (r < 0) {
                kill(pid, SIGKILL);
                while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        return r;
}

int exectrace_release(pid_t pid, int channel)
{
        pid_t tid = EXECTRACE_RELEASE;
        int r = 0;
        if (write(channel, &tid, sizeof(tid)) != sizeof(tid) || read(channel, &tid, sizeof(tid)) != sizeof(tid))
                r = -EIO;
        exectrace_stop(pid);
        return r;
}

void exectrace_kill(pid_t pid)
{
        /* by now init is gone and the tracer has left by itself, or is about
         * to; SIGKILL covers a tracer that is stuck */
        if (pid > 0)
                kill(pid, SIGKILL);
}

void exectrace_reap(pid_t pid)
{
        if (pid <= 0)
                return;
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
}

void exectrace_stop(pid_t pid)
{
        exectrace_kill(pid);
        exectrace_reap(pid);
}

int exectrace_probe(void)
{
        /* a child to seize, as the tracer seizes init: Yama's ptrace_scope 3
         * or a seccomp filter around us refuse it */
        pid_t child = fork();
        if (child < 0)
                return negative_errno();
        if (child == 0) {
                pause();
                _exit(0);
        }
        int r = 0;
        if (ptrace(PTRACE_SEIZE, child, NULL, (void *)(unsigned long)TRACE_OPTIONS) < 0)
                r = negative_errno();
        kill(child, SIGKILL);
        while (waitpid(child, NULL, __WALL) < 0 && errno == EINTR)
                ;
        return r;
}

/* --- the sentry's side: the tracer started, its word taken, let go --- */

/* The approval table and the tracer's channel, once no handler runs. */
void exec_checks_end(struct sandbox_state *st)
{
        fs_exec_table_free(TAKE_PTR(st->fsctx.exec));
        if (st->fsctx.exec_channel >= 0)
                close(TAKE_FD(st->fsctx.exec_channel));
}

/* The exec tracer, forked while the sentry is single-threaded: it holds
 * init, and every other thread from its trapped execve to that exec's event
 * (fs/exec.c). Its word on seizing init is taken later (check_exec_tracer). */
int exec_checks_start(struct sandbox_state *st)
{
        int r = fs_exec_table_new(&st->fsctx.exec);
        if (r < 0) {
                fprintf(stderr, "cordon: cannot map the exec approval table: %s\n", strerror(-r));
                return r;
        }
        struct exectrace_config c = {
                .init_pid = st->init_pid,
                .table = st->fsctx.exec,
                .audit_fd = st->audit_fd,
                .verbose = st->verbose,
                .sandbox_id = st->id,
        };
        r = exectrace_start(&c, &st->exec_tracer, &st->fsctx.exec_channel);
        if (r < 0) {
                fs_exec_table_free(TAKE_PTR(st->fsctx.exec));
                fprintf(stderr, "cordon: cannot start the exec tracer: %s\n", strerror(-r));
        }
        return r;
}

/* The tracer's word, taken once init is ready and before it may fork the
 * command (the tracer seizes init and sets itself up beside the rest of
 * the set-up). Where the host refuses ptrace the sandbox does not start,
 * unless --allow-unverified-exec accepts the weaker tier (said plainly). */
static int check_exec_tracer(struct sandbox_state *st)
{
        int r = exectrace_ready(st->exec_tracer, st->fsctx.exec_channel);
        if (r == 0)
                return 0;
        st->exec_tracer = 0; /* reaped */
        exec_checks_end(st);
        if (!st->allow_unverified_exec) {
                fprintf(stderr,
                        "cordon: cannot trace the sandbox's exec events (PTRACE_SEIZE: %s): without them the "
                        "sentry cannot verify that an executed file is the one it checked. Refusing to start; "
                        "--allow-unverified-exec accepts the weaker tier (see `cordon check`).\n",
                        strerror(-r));
                return r;
        }
        fprintf(stderr,
                "cordon: warning: exec is NOT verified after the fact on this host (PTRACE_SEIZE: %s); "
                "running the weaker tier as --allow-unverified-exec asked\n",
                strerror(-r));
        return 0;
}

/* Once init's filter is installed (MSG_READY says whether execs run
 * natively): the tracer let go of where it has nothing to verify, its word
 * taken where it has. 0, or -errno after saying why (the caller then kills
 * the sandbox). */
int exec_checks_settle(struct sandbox_state *st)
{
        if (!st->native_exec && !st->exec_tracer) {
                /* init traps execs after all, and there is no tracer to
                 * verify them: refused, never run unverified */
                fprintf(stderr, "cordon: the sandbox's init checks execs, but no exec tracer was started for them\n");
                return -EPROTO;
        }
        if (!st->native_exec)
                return check_exec_tracer(st);
        if (!st->exec_tracer)
                return 0;
        /* Execs run natively: nothing for the tracer to verify, so a host
         * that refuses ptrace costs nothing here, and init is let go before
         * it forks the command. */
        int r = exectrace_ready(st->exec_tracer, st->fsctx.exec_channel);
        r = r == 0 ? exectrace_release(st->exec_tracer, st->fsctx.exec_channel) : 0;
        st->exec_tracer = 0;
        exec_checks_end(st);
        if (r < 0)
                fprintf(stderr, "cordon: the exec tracer could not let go of the sandbox's init: %s\n", strerror(-r));
        return r;
}
