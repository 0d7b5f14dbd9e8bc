/* The kernel egress floor: loads the programs of floor.bpf.c (their
 * instructions read from the libbpf skeleton bpftool generated at build
 * time) and attaches them to the sandbox's cgroup v2 group.
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
#include <sys/syscall.h>
#include <unistd.h>

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

/* The programs of one floor: the four sock_addr hooks and one of the two
 * egress programs, as fds the kernel gave for them. */
struct floor_progs {
        int fd[ELEMENTSOF(hooks)];
};

static void progs_close(struct floor_progs *p)
{
        for (size_t i = 0; i < ELEMENTSOF(p->fd); i++)
                if (p->fd[i] >= 0)
                        close(TAKE_FD(p->fd[i]));
}

static struct bpf_program *hook_prog(struct floor_bpf *skel, size_t i, bool joined)
{
        struct bpf_program *p[] = {skel->progs.floor_connect4, skel->progs.floor_connect6, skel->progs.floor_sendmsg4,
                                   skel->progs.floor_sendmsg6,
                                   joined ? skel->progs.floor_egress_joined : skel->progs.floor_egress};
        return p[i];
}

/* One BPF_PROG_LOAD of prog's instructions as compiled, by the syscall
 * itself: libbpf's bpf_prog_load would first load two probe programs of its
 * own in every process (whether the kernel takes program names, whether it
 * charges BPF memory to the memory cgroup). A kernel that still counts it
 * against RLIMIT_MEMLOCK (before Linux 5.11) may refuse with EPERM: then
 * libbpf's load, which raises the limit. The fd, or -errno. */
static int prog_load(const struct bpf_program *prog, enum bpf_attach_type type)
{
        union bpf_attr attr = {
                .prog_type = bpf_program__type(prog),
                .expected_attach_type = type,
                .insns = (uintptr_t)bpf_program__insns(prog),
                .insn_cnt = bpf_program__insn_cnt(prog),
                .license = (uintptr_t) "GPL",
        };
        /* at most 15 characters, as libbpf cuts them ("floor_egress_jo") */
        snprintf(attr.prog_name, sizeof(attr.prog_name), "%s", bpf_program__name(prog));
        int fd = (int)syscall(SYS_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
        if (fd >= 0)
                return fd;
        if (errno != EPERM)
                return negative_errno();
        LIBBPF_OPTS(bpf_prog_load_opts, opts, .expected_attach_type = type);
        fd = bpf_prog_load(attr.prog_type, attr.prog_name, "GPL", bpf_program__insns(prog), bpf_program__insn_cnt(prog),
                           &opts);
        return fd >= 0 ? fd : fd == -1 ? negative_errno() : fd;
}

/* Loads the five programs a floor needs straight from the embedded object's
 * instructions, with one BPF_PROG_LOAD each. floor_bpf__load would first
 * probe the kernel's features (four probe programs, nine BTF loads), load
 * the object's BTF and load the egress program the sandbox does not use:
 * about half the floor's CPU per start, for nothing these programs need.
 * They call helpers only, read no map and no global data and have no
 * subprograms (everything is __always_inline), so the instructions as
 * compiled are the instructions loaded: there is nothing for libbpf to
 * relocate (floor.bpf.o has no .rel section for any program). Should one
 * ever read a map, its unrelocated load is refused by the verifier and the
 * floor fails as a whole, never loads half-made. The verifier checks each
 * program exactly as before; a kernel that refuses one fails the floor as
 * before. */
static int load(bool joined, struct floor_progs *ret, char *why, size_t size)
{
        libbpf_set_print(quiet);
        struct floor_bpf *skel = floor_bpf__open();
        if (!skel) {
                int r = -errno ?: -EINVAL;
                set_why(why, size, "opening the embedded BPF object failed: %s", strerror(-r));
                return r;
        }
        struct floor_progs p;
        for (size_t i = 0; i < ELEMENTSOF(p.fd); i++)
                p.fd[i] = -1;
        int r = 0;
        for (size_t i = 0; i < ELEMENTSOF(p.fd); i++) {
                const struct bpf_program *prog = hook_prog(skel, i, joined);
                p.fd[i] = prog_load(prog, hooks[i].type);
                if (p.fd[i] < 0) {
                        r = p.fd[i];
                        p.fd[i] = -1;
                        set_why(why, size, "loading the %s program failed: %s%s", hooks[i].name, strerror(-r),
                                r == -EPERM || r == -EACCES ? " (needs CAP_BPF and CAP_NET_ADMIN, or root)" : "");
                        break;
                }
        }
        floor_bpf__destroy(skel);
        if (r < 0) {
                progs_close(&p);
                return r;
        }
        *ret = p;
        return 0;
}

/* The load begun early on a thread (net_floor_preload): the verifier and
 * the JIT take a few hundred microseconds, which then overlap the sentry's
 * other set-up instead of delaying the sandbox's start. One per process;
 * only the thread that started it joins it, so no lock. */
static struct {
        pthread_t thread;
        bool started, joined;
        struct floor_progs progs;
        int r;
        char why[256];
} pre;

static void *preload_main(void *arg)
{
        (void)arg;
        pre.r = load(pre.joined, &pre.progs, pre.why, sizeof(pre.why));
        return NULL;
}

void net_floor_preload(bool joined)
{
        if (pre.started)
                return;
        pre.joined = joined;
        /* no signal is this thread's to take: the sentry's handlers run on
         * the threads that expect them */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        pre.started = pthread_create(&pre.thread, NULL, preload_main, NULL) == 0;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Waits for the preload thread, if one runs; true if it loaded programs. */
static bool preload_joined(void)
{
        if (!pre.started)
                return false;
        pthread_join(pre.thread, NULL);
        pre.started = false;
        return pre.r >= 0;
}

/* The preloaded programs (waiting for the load to end), or a load now. */
static int take_loaded(bool joined, struct floor_progs *ret, char *why, size_t size)
{
        bool started = pre.started;
        if (preload_joined() && pre.joined == joined) {
                *ret = pre.progs;
                return 0;
        }
        if (started && pre.r >= 0)
                progs_close(&pre.progs); /* the other egress program: load anew */
        else if (started) {
                set_why(why, size, "%s", pre.why);
                return pre.r;
        }
        return load(joined, ret, why, size);
}

void net_floor_preload_end(void)
{
        if (preload_joined())
                progs_close(&pre.progs);
}

int net_floor_probe(char *why, size_t size)
{
        struct floor_progs p;
        int r = load(false, &p, why, size);
        if (r < 0)
                return r;
        progs_close(&p);
        return 0;
}

int net_floor_attach(int cgroup_fd, char *why, size_t size)
{
        return net_floor_attach_joined(cgroup_fd, false, why, size);
}

int net_floor_attach_joined(int cgroup_fd, bool joined, char *why, size_t size)
{
        struct floor_progs p;
        int r = take_loaded(joined, &p, why, size);
        if (r < 0)
                return r;
        size_t done = 0;
        for (; done < ELEMENTSOF(hooks); done++) {
                if (bpf_prog_attach(p.fd[done], cgroup_fd, hooks[done].type, BPF_F_ALLOW_MULTI) < 0) {
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
                        (void)bpf_prog_detach2(p.fd[done], cgroup_fd, hooks[done].type);
        /* the group holds the attached programs now; our fds can go */
        progs_close(&p);
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
