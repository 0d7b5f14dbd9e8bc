/* Whether a trapped thread whose call waits in the sentry has a signal to
 * take now, read from /proc/TID/status (the engine's watchdog asks it of
 * each blocked call, notify/engine.c).
 *
 * Natively a FIFO's open waits interruptibly: a signal the opener handles
 * ends the wait (-ERESTARTSYS), its handler runs, and the open is restarted
 * (SA_RESTART) or fails with EINTR. Emulated, the caller waits for the
 * sentry's answer, killably only (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV:
 * a non-fatal signal does not end that wait), so the sentry must end the
 * wait itself and answer -ERESTARTSYS. The kernel turns that answer into
 * the native outcome only if the caller finds a signal pending on its way
 * out (TIF_SIGPENDING): with none, -512 would reach user space as the
 * call's result. So the answer is given only where the caller's own flag
 * is certainly set, which the kernel guarantees (it sets the flag when it
 * queues a signal for a thread that does not block it, and never clears
 * another thread's flag) in these cases:
 *
 *  - a signal pending for the thread itself (SigPnd) that it does not
 *    block;
 *  - a signal pending for its process (ShdPnd) that it does not block and
 *    every other thread of the process blocks (or it has no other): the
 *    kernel could give it to no other thread;
 *  - such a process signal, with the caller its process's leader, seen
 *    pending on two looks in a row: a process's signals (kill(PID),
 *    alarm(), a terminal's ^C, a timer) are offered to the leader first,
 *    which takes it unless it already had the flag set; another thread
 *    chosen instead (kill() of a non-leader's tid) would have taken it
 *    between the looks.
 *
 * Otherwise (a process signal another thread may take) the call goes on
 * waiting, as natively when another thread takes the signal. Only a signal
 * the thread handles counts (SigCgt), or one that stops it (default
 * action): an ignored one is never queued, and a fatal one kills the
 * caller, whose abandoned call the watchdog ends on its own. */
#include "config.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>

#include "common/util.h"
#include "notify/notify-internal.h"
#include "notify/notify.h"

#define SIGBIT(s)    (UINT64_C(1) << ((s)-1))
#define STOP_SIGNALS (SIGBIT(SIGSTOP) | SIGBIT(SIGTSTP) | SIGBIT(SIGTTIN) | SIGBIT(SIGTTOU))

/* the hex mask of the line "\nKEY:" in text, or -1 when absent (at the
 * start of a line: the Name: line, the child's, is escaped) */
static int status_mask(const char *text, const char *key, uint64_t *ret)
{
        char k[16];
        snprintf(k, sizeof(k), "\n%s:", key);
        const char *p = strstr(text, k);
        if (!p || !strchr(p + 1, '\n'))
                return -1;
        char *end;
        *ret = strtoull(p + strlen(k), &end, 16);
        return end == p + strlen(k) ? -1 : 0;
}

int notify_sig_parse(const char *status, struct notify_sigstate *ret)
{
        struct notify_sigstate s = {0};
        uint64_t tgid, pid, threads;
        if (status_mask(status, "SigPnd", &s.pnd) < 0 || status_mask(status, "ShdPnd", &s.shd) < 0 ||
            status_mask(status, "SigBlk", &s.blk) < 0 || status_mask(status, "SigIgn", &s.ign) < 0 ||
            status_mask(status, "SigCgt", &s.cgt) < 0)
                return -EINVAL;
        /* decimal lines: read as hex digits they would be wrong, so again */
        const char *p;
        if (!(p = strstr(status, "\nTgid:")) || sscanf(p + 6, "%" SCNu64, &tgid) != 1 ||
            !(p = strstr(status, "\nPid:")) || sscanf(p + 5, "%" SCNu64, &pid) != 1 ||
            !(p = strstr(status, "\nThreads:")) || sscanf(p + 9, "%" SCNu64, &threads) != 1)
                return -EINVAL;
        s.tgid = (pid_t)tgid;
        s.leader = tgid == pid;
        s.threads = (unsigned)threads;
        *ret = s;
        return 0;
}

uint64_t notify_sig_shared(const struct notify_sigstate *s)
{
        /* SIGKILL is never pending for a live caller; SIGSTOP cannot be
         * caught or ignored, and the others stop it unless handled or
         * ignored */
        uint64_t want = s->cgt | (STOP_SIGNALS & ~s->ign);
        return (s->shd & ~s->blk & want);
}

uint64_t notify_sig_takeable(const struct notify_sigstate *s, uint64_t others_unblocked, uint64_t seen_before)
{
        uint64_t want = s->cgt | (STOP_SIGNALS & ~s->ign);
        uint64_t own = s->pnd & ~s->blk & want;
        uint64_t shared = s->shd & ~s->blk & want;
        uint64_t only_here = shared & ~others_unblocked;
        uint64_t leader_kept = s->leader ? shared & seen_before : 0;
        return own | only_here | leader_kept;
}

/* The signals some other thread of process tgid (not tid) does not block:
 * ~0 (any) when they cannot be read. */
static uint64_t others_unblocked(int hostproc_fd, pid_t tgid, pid_t tid)
{
        char path[64];
        snprintf(path, sizeof(path), "%d/task", tgid);
        int dfd = notify_proc_open(hostproc_fd, path, O_RDONLY | O_DIRECTORY);
        if (dfd < 0)
                return ~UINT64_C(0);
        DIR *d = fdopendir(dfd);
        if (!d) {
                close(dfd);
                return ~UINT64_C(0);
        }
        uint64_t any = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                char *end;
                long t = strtol(de->d_name, &end, 10);
                if (*end || t <= 0 || t == tid)
                        continue;
                char buf[4096];
                snprintf(path, sizeof(path), "%ld/status", t);
                int fd = openat(dirfd(d), path, O_RDONLY | O_CLOEXEC);
                if (fd < 0) {
                        if (errno == ENOENT)
                                continue; /* exited meanwhile */
                        any = ~UINT64_C(0);
                        break;
                }
                ssize_t n = read(fd, buf, sizeof(buf) - 1);
                close(fd);
                uint64_t blk;
                if (n <= 0 || (buf[n] = '\0', status_mask(buf, "SigBlk", &blk) < 0)) {
                        if (n == 0)
                                continue; /* exited meanwhile */
                        any = ~UINT64_C(0);
                        break;
                }
                any |= ~blk;
        }
        closedir(d);
        return any;
}

int notify_sig_check(int hostproc_fd, pid_t tid, uint64_t *seen)
{
        char path[64], buf[4096];
        snprintf(path, sizeof(path), "%d/status", tid);
        ssize_t n = notify_proc_read(hostproc_fd, path, buf, sizeof(buf));
        if (n < 0)
                return (int)n;
        struct notify_sigstate s;
        int r = notify_sig_parse(buf, &s);
        if (r < 0)
                return r;
        uint64_t shared = notify_sig_shared(&s);
        /* the other threads' masks only where a process signal waits */
        uint64_t others = shared && s.threads > 1 ? others_unblocked(hostproc_fd, s.tgid, tid) : 0;
        uint64_t take = notify_sig_takeable(&s, others, *seen);
        *seen = shared;
        return take != 0;
}
