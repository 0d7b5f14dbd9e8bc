/* The kernel egress floor: loads the programs of floor.bpf.c through the
 * libbpf skeleton bpftool generated at build time and attaches them to the
 * sandbox's cgroup v2 group.
 *
 * Attached with the legacy BPF_PROG_ATTACH rather than as bpf_links: the
 * attachment then belongs to the cgroup and lasts until the group is
 * removed, not until the sentry closes an fd, so no window opens when the
 * sentry exits (or is killed) before the last of the sandbox's processes.
 *
 * BPF_F_ALLOW_MULTI: programs the host attached to ancestor groups (systemd's
 * IP accounting and firewall use ALLOW_MULTI too) keep running alongside
 * ours, and a verdict of any of them that refuses wins. Nothing in the
 * sandbox can attach programs beneath ours to undo it: bpf() is refused by
 * its seccomp filter and it holds no capability, and with ALLOW_MULTI a
 * descendant's program could only add refusals anyway. */
#include "config.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>

#include "common/util.h"
#include "net/floor.skel.h"
#include "net/net.h"

static const struct {
        const char *name;
        enum bpf_attach_type type;
} hooks[] = {
        {"connect4", BPF_CGROUP_INET4_CONNECT}, {"connect6", BPF_CGROUP_INET6_CONNECT},
        {"sendmsg4", BPF_CGROUP_UDP4_SENDMSG},  {"sendmsg6", BPF_CGROUP_UDP6_SENDMSG},
        {"egress", BPF_CGROUP_INET_EGRESS},
};

/* libbpf would print to stderr; only sentry/ talks to people, so its
 * messages are dropped and the caller gets an errno and a reason instead. */
static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
        return 0;
}

_printf_(3, 4) static void set_why(char *why, size_t size, const char *fmt, ...)
{
        if (!why || size == 0)
                return;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(why, size, fmt, ap);
        va_end(ap);
}

static struct bpf_program *hook_prog(struct floor_bpf *skel, size_t i, bool joined)
{
        struct bpf_program *p[] = {skel->progs.floor_connect4, skel->progs.floor_connect6, skel->progs.floor_sendmsg4,
                                   skel->progs.floor_sendmsg6,
                                   joined ? skel->progs.floor_egress_joined : skel->progs.floor_egress};
        return p[i];
}

static int load(struct floor_bpf **ret, char *why, size_t size)
{
        libbpf_set_print(quiet);
        struct floor_bpf *skel = floor_bpf__open();
        if (!skel) {
                int r = -errno ?: -EINVAL;
                set_why(why, size, "opening the embedded BPF object failed: %s", strerror(-r));
                return r;
        }
        int r = floor_bpf__load(skel);
        if (r < 0) {
                r = r == -1 ? -errno : r;
                set_why(why, size, "loading the BPF programs failed: %s%s", strerror(-r),
                        r == -EPERM || r == -EACCES ? " (needs CAP_BPF and CAP_NET_ADMIN, or root)" : "");
                floor_bpf__destroy(skel);
                return r;
        }
        *ret = skel;
        return 0;
}

/* The load begun early on a thread (net_floor_preload): libbpf's feature
 * probes and the verifier take about a millisecond, which then overlaps
 * the sentry's other set-up instead of delaying the sandbox's start. One
 * per process; only the thread that started it joins it, so no lock. */
static struct {
        pthread_t thread;
        bool started;
        struct floor_bpf *skel;
        int r;
        char why[256];
} pre;

static void *preload_main(void *arg)
{
        (void)arg;
        pre.r = load(&pre.skel, pre.why, sizeof(pre.why));
        return NULL;
}

void net_floor_preload(void)
{
        if (pre.started)
                return;
        /* no signal is this thread's to take: the sentry's handlers run on
         * the threads that expect them */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pre.started = pthread_create(&pre.thread, NULL, preload_main, NULL) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The preloaded programs (waiting for the load to end), or a load now. */
static int take_loaded(struct floor_bpf **ret, char *why, size_t size)
{
        if (!pre.started)
                return load(ret, why, size);
        pthread_join(pre.thread, NULL);
        pre.started = false;
        if (pre.r < 0) {
                set_why(why, size, "%s", pre.why);
                return pre.r;
        }
        *ret = TAKE_PTR(pre.skel);
        return 0;
}

void net_floor_preload_end(void)
{
        if (!pre.started)
                return;
        pthread_join(pre.thread, NULL);
        pre.started = false;
        if (pre.skel)
                floor_bpf__destroy(TAKE_PTR(pre.skel));
}

int net_floor_probe(char *why, size_t size)
{
        struct floor_bpf *skel = NULL;
        int r = load(&skel, why, size);
        if (r < 0)
                return r;
        floor_bpf__destroy(skel);
        return 0;
}

int net_floor_attach(int cgroup_fd, char *why, size_t size)
{
        return net_floor_attach_joined(cgroup_fd, false, why, size);
}

int net_floor_attach_joined(int cgroup_fd, bool joined, char *why, size_t size)
{
        struct floor_bpf *skel = NULL;
        int r = take_loaded(&skel, why, size);
        if (r < 0)
                return r;
        size_t done = 0;
        for (; done < ELEMENTSOF(hooks); done++) {
                int fd = bpf_program__fd(hook_prog(skel, done, joined));
                if (bpf_prog_attach(fd, cgroup_fd, hooks[done].type, BPF_F_ALLOW_MULTI) < 0) {
                        r = negative_errno();
                        set_why(why, size, "attaching the %s program to the sandbox's cgroup failed: %s%s",
                                hooks[done].name, strerror(-r),
                                r == -EPERM ? " (an ancestor group holds an exclusive program, or no privilege)" : "");
                        break;
                }
        }
        if (r < 0)
                /* all or nothing: a half floor would be reported as absent
                 * while still refusing some calls */
                while (done-- > 0)
                        (void)bpf_prog_detach2(bpf_program__fd(hook_prog(skel, done, joined)), cgroup_fd,
                                               hooks[done].type);
        /* the group holds the attached programs now; our fds can go */
        floor_bpf__destroy(skel);
        return r;
}

int net_floor_attached(int cgroup_fd)
{
        int n = 0;
        for (size_t i = 0; i < ELEMENTSOF(hooks); i++) {
                __u32 ids[16], count = ELEMENTSOF(ids), flags = 0;
                if (bpf_prog_query(cgroup_fd, hooks[i].type, 0, &flags, ids, &count) < 0)
                        return negative_errno();
                if (count > 0)
                        n++;
        }
        return n;
}
