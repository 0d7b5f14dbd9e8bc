/* init's side of the start-up: what pid 1 of the sandbox does between the
 * clone and the command's exec. It sends its namespaces, builds the view,
 * applies a container's hostname, mounts, sysctls and rlimits, drops every
 * privilege, loads the filter, waits for the sentry's start, forks the
 * command (or serves runs: initd.c), relays signals and reports the
 * command's status. It talks to the sentry only through the set-up channel
 * (struct msg), and reports a failure with child_fail's MSG_ERROR. */
#include "config.h"

#include <grp.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <stdarg.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common/fdpass.h"
#include "common/file.h"
#include "common/trace.h"
#include "sentry/sentry-internal.h"

#ifndef SECBIT_NOROOT
#define SECBIT_NOROOT                      (1 << 0)
#define SECBIT_NOROOT_LOCKED               (1 << 1)
#define SECBIT_NO_SETUID_FIXUP             (1 << 2)
#define SECBIT_NO_SETUID_FIXUP_LOCKED      (1 << 3)
#define SECBIT_KEEP_CAPS                   (1 << 4)
#define SECBIT_KEEP_CAPS_LOCKED            (1 << 5)
#define SECBIT_NO_CAP_AMBIENT_RAISE        (1 << 6)
#define SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED (1 << 7)
#endif

int msg_send(int sock, uint32_t type, int32_t value, const char *text, const int *fds, size_t n_fds)
{
        struct msg m = {.type = type, .value = value};
        if (text)
                snprintf(m.text, sizeof(m.text), "%s", text);
        return send_fds(sock, &m, sizeof(m), fds, n_fds);
}

/* Receives one message; up to max_fds fds into fds (others -1). 0 on EOF. */
int msg_recv(int sock, struct msg *m, int *fds, size_t max_fds)
{
        ssize_t n = recv_fds(sock, m, sizeof(*m), fds, max_fds);
        if (n <= 0)
                return (int)n;
        if (n != (ssize_t)sizeof(*m))
                return -EIO;
        m->text[sizeof(m->text) - 1] = '\0';
        return 1;
}

_noreturn_ _printf_(2, 3) static void child_fail(int sock, const char *fmt, ...)
{
        char text[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        (void)msg_send(sock, MSG_ERROR, 0, text, NULL, 0);
        _exit(EXIT_SANDBOX);
}

/* The command's standing, for good. Its root keeps plan->caps within the
 * sandbox's user namespace (bounding, permitted and effective sets; none
 * inheritable or ambient), and across exec, as root does natively; any
 * other user has none, and a switch away from root drops them as the
 * kernel does natively. With no capability to keep (`"capabilities": []`,
 * an OCI container whose config lists none) every one goes for good:
 * securebits locked so uid 0 never regains any on exec. An OCI container
 * (oci_drop_privileges) gets its config's five sets instead. no_new_privs
 * always: a setuid or file-capable file never raises anything. */

/* The bounding set cut to keep, up to the kernel's last capability (the
 * first it does not know, EINVAL, is past it). */
static int drop_bounding(uint64_t keep)
{
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                return negative_errno();
        for (int cap = 0; cap <= 63; cap++) {
                if (keep & (UINT64_C(1) << cap))
                        continue;
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
                        if (errno == EINVAL)
                                break;
                        return negative_errno();
                }
        }
        return 0;
}

/* process.user and process.capabilities, as runc applies them, within the
 * sandbox's user namespace: the bounding set (plan->caps: the config's,
 * with nothing cordon refuses), the identity with the permitted set kept
 * across the switch (KEEP_CAPS), the inheritable set, the ambient set
 * raised, then the effective and permitted sets. The ambient set cannot be
 * raised further afterwards (locked), as cordon's own sandboxes. */
static int oci_drop_privileges(const struct sandbox_plan *plan, const struct oci_sandbox *oci)
{
        uint64_t b = plan->caps;
        int r = drop_bounding(b);
        if (r < 0)
                return r;
        if (prctl(PR_SET_SECUREBITS, SECBIT_KEEP_CAPS, 0, 0, 0) < 0)
                return negative_errno();
        if (oci->runs_switch) {
                /* A container whose process.user is not root: init stays
                 * the namespace's root (as runc's exec starts as root), with
                 * the bounding set and CAP_SETUID, CAP_SETGID, CAP_SETPCAP
                 * and CAP_KILL, and each run (the container's process first)
                 * becomes what its EXEC_USER and EXEC_CAPS say before its
                 * exec (initd.c exec_run; a run without them, the
                 * container's process's own user, groups and sets).
                 * Why this gives the container nothing: init runs nothing of
                 * the container's; the four beyond the bounding set are for
                 * the switch (and init's signals to a run of another uid),
                 * never past a run's exec (its final capset, no_new_privs,
                 * the bounding set, which the kernel applies to root's exec);
                 * init is not in the container's pid namespace (Linux 6.15+),
                 * not dumpable, of another uid than a non-root run (which can
                 * neither signal nor trace it; ptrace is refused anyway);
                 * and what a run asks for is checked by the OCI front
                 * against the bounding set, from an exec only the engine
                 * can ask for (the sentry's control socket). The ambient set
                 * is raised and locked by each run, after its switch. */
                uint64_t keep = b | (UINT64_C(1) << CAP_SETUID) | (UINT64_C(1) << CAP_SETGID) |
                                (UINT64_C(1) << CAP_SETPCAP) | (UINT64_C(1) << CAP_KILL);
                if ((r = capset_sets(keep, keep, oci->cap_inheritable & b)) < 0)
                        return r;
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        return negative_errno();
                return 0;
        }
        if (oci->set_user) {
                gid_t groups[OCI_MAX_IDS];
                for (size_t i = 0; i < oci->n_groups; i++)
                        groups[i] = oci->groups[i];
                if (setgroups(oci->n_groups, groups) < 0 && !(errno == EPERM && oci->n_groups == 0))
                        return negative_errno();
                if (setresgid(oci->gid, oci->gid, oci->gid) < 0 || setresuid(oci->uid, oci->uid, oci->uid) < 0)
                        return negative_errno();
        }
        /* everything still permitted (KEEP_CAPS) made effective, for the
         * steps below (securebits need CAP_SETPCAP, which the config's
         * sets may not hold); the inheritable set for the ambient one */
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
        struct __user_cap_data_struct d[2] = {{0}};
        if (syscall(SYS_capget, &h, d) < 0)
                return negative_errno();
        uint64_t now = d[0].permitted | ((uint64_t)d[1].permitted << 32);
        if ((r = capset_sets(now, now, oci->cap_inheritable & b)) < 0)
                return r;
        /* an ambient capability the inheritable set lacks cannot be
         * raised (EPERM): left out, as runc leaves it (it ignores the
         * failure); buildah's RUN steps list every one as ambient with no
         * inheritable set */
        for (int cap = 0; cap <= 63; cap++)
                if ((oci->cap_ambient & oci->cap_inheritable & b & (UINT64_C(1) << cap)) &&
                    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0)
                        return negative_errno();
        if (prctl(PR_SET_SECUREBITS, SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED, 0, 0, 0) < 0)
                return negative_errno();
        if ((r = capset_sets(oci->cap_effective & oci->cap_permitted & b, oci->cap_permitted & b,
                             oci->cap_inheritable & b)) < 0)
                return r;
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return negative_errno();
        return 0;
}

static int drop_privileges(const struct sandbox_plan *plan)
{
        const struct oci_sandbox *oci = plan->oci;
        if (oci && (plan->caps || oci->runs_switch))
                return oci_drop_privileges(plan, oci);
        uint64_t keep = oci ? 0 : plan->caps;
        int r = drop_bounding(keep);
        if (r < 0)
                return r;
        /* with capabilities: keep-caps stays the process's to set (setpriv,
         * daemons dropping to their user set it), ambient ones are never
         * raised */
        unsigned long bits = keep ? SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED
                                  : SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
                                             SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                                             SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
        if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
                return negative_errno();
        if (oci && oci->set_user) {
                gid_t groups[OCI_MAX_IDS];
                for (size_t i = 0; i < oci->n_groups; i++)
                        groups[i] = oci->groups[i];
                if (setgroups(oci->n_groups, groups) < 0 && !(errno == EPERM && oci->n_groups == 0))
                        return negative_errno();
                if (setresgid(oci->gid, oci->gid, oci->gid) < 0 || setresuid(oci->uid, oci->uid, oci->uid) < 0)
                        return negative_errno();
        } else if (!oci && (plan->cmd_uid != plan->init_uid || plan->cmd_gid != plan->init_gid)) {
                /* --user: no supplementary groups (setgroups is denied to
                 * an unprivileged run, which has none to drop) */
                if (setgroups(0, NULL) < 0 && errno != EPERM)
                        return negative_errno();
                if (setresgid(plan->cmd_gid, plan->cmd_gid, plan->cmd_gid) < 0 ||
                    setresuid(plan->cmd_uid, plan->cmd_uid, plan->cmd_uid) < 0)
                        return negative_errno();
        }
        uint64_t have = getuid() == 0 ? keep : 0;
        if ((r = capset_sets(have, have, 0)) < 0)
                return r;
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return negative_errno();
        return 0;
}

const int forwarded_signals[N_FORWARDED_SIGNALS] = {SIGINT,  SIGTERM, SIGHUP,   SIGQUIT, SIGUSR1,
                                                    SIGUSR2, SIGCONT, SIGWINCH, SIGTSTP};

static volatile sig_atomic_t init_cmd_pid;

static void init_forward(int sig, siginfo_t *info, void *uc)
{
        (void)uc;
        if (init_cmd_pid <= 0)
                return;
        /* To the command's whole process group (it leads its own group:
         * prepare_command) where natively the terminal would signal the
         * whole job: a stop and the continue after it, and what the
         * sentry passes on from its terminal (FORWARD_TO_GROUP: Ctrl-C,
         * Ctrl-\, a hangup), so that a shell's child dies of Ctrl-C with
         * it. A signal sent to cordon with kill(1) goes to the command
         * alone, as it would have gone to one process. A process of the
         * sandbox can ask the same of init (sigqueue), and could signal
         * that group itself. */
        bool group = sig == SIGTSTP || sig == SIGCONT ||
                     (info && info->si_code == SI_QUEUE && info->si_value.sival_int == FORWARD_TO_GROUP);
        if (group && kill(-init_cmd_pid, sig) == 0)
                return;
        kill(init_cmd_pid, sig);
}

/* init is a fork of the cordon process: its argument and environment areas
 * still hold the host's command line and environment, and /proc/1/cmdline
 * is readable in the sandbox. Overwrite both in place. */
static void scrub_host_memory(void)
{
        _cleanup_fclose_ FILE *f = fopen("/proc/self/stat", "re");
        char buf[2048];
        if (!f || !fgets(buf, sizeof(buf), f))
                return;
        const char *p = strrchr(buf, ')');
        if (!p)
                return;
        /* fields 48..51 (arg_start, arg_end, env_start, env_end); p is at field 2's end */
        unsigned long v[4];
        int field = 2;
        const char *q = p + 1;
        while (*q && field < 47) {
                if (*q == ' ')
                        field++;
                q++;
        }
        if (sscanf(q, "%*s %lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4)
                return;
        static const char name[] = "cordon-init";
        if (v[1] > v[0] + sizeof(name)) {
                memset((void *)v[0], 0, v[1] - v[0]);
                memcpy((void *)v[0], name, sizeof(name));
        }
        if (v[3] > v[2])
                memset((void *)v[2], 0, v[3] - v[2]);
}

/* The command's process before its go: default signal actions, its own
 * session, the terminal. Done while it waits for init's go (which is on the
 * path to its first instruction), not after. */
static void prepare_command(int tty_slave)
{
        init_default_signals();
        /* With a terminal of its own the command leads a session, to take
         * it as its controlling terminal. Without one it leads a process
         * group in init's session: its parent, init, is then in another
         * group of the same session, so the group is not orphaned and a
         * forwarded SIGTSTP stops it as Ctrl-Z stops a job natively (the
         * kernel discards a stop sent to an orphaned group). */
        if (tty_slave >= 0)
                setsid();
        else
                setpgid(0, 0);
        if (tty_slave >= 0) {
                if (ioctl(tty_slave, TIOCSCTTY, 0) < 0)
                        _exit(EXIT_SANDBOX);
                for (int fd = 0; fd <= 2; fd++)
                        if (dup2(tty_slave, fd) < 0)
                                _exit(EXIT_SANDBOX);
                if (tty_slave > 2)
                        close(tty_slave);
        }
}

/* MSG_FDS's text: "M" and each mount's id (mountinfo's first column),
 * space-separated; left empty where they do not all fit */
static void mount_ids_text(const char *mountinfo, char *out, size_t size)
{
        size_t len = (size_t)snprintf(out, size, "M");
        for (const char *p = mountinfo; *p;) {
                const char *end = p;
                while (*end >= '0' && *end <= '9')
                        end++;
                if (end > p && *end == ' ') {
                        int n = snprintf(out + len, size - len, " %.*s", (int)(end - p), p);
                        if (n < 0 || (size_t)n >= size - len) {
                                out[0] = '\0';
                                return;
                        }
                        len += (size_t)n;
                }
                const char *nl = strchr(p, '\n');
                if (!nl)
                        break;
                p = nl + 1;
        }
        if (len == 1)
                out[0] = '\0';
}

/* an exec that failed: said, and the command's exit status for it */
_noreturn_ static void exec_failed(const struct sandbox_plan *plan, int e)
{
        if (e == ENOENT && plan->view.template_path)
                dprintf(STDERR_FILENO,
                        "cordon: %s: not found in the sandbox's root, the template %s (it must hold the program "
                        "and, for a dynamically linked one, its ELF interpreter and libraries)\n",
                        plan->argv[0], plan->view.template_path);
        else
                dprintf(STDERR_FILENO, "cordon: %s: %s\n", plan->argv[0], strerror(e));
        _exit(e == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
}

_noreturn_ static void exec_command(const struct sandbox_plan *plan)
{
        /* the working directory is init's, set before the filter (below) */
        /* This copy of init's mm belongs to the host's user namespace: were
         * it not dumpable, an unprivileged sentry could not read this
         * process's memory to check its execve. It was forked while init
         * still was (init drops that at the start, after our fork), and
         * stays so until exec replaces the image (which resets it anyway):
         * no other process of the sandbox exists yet to look, and this copy
         * of init holds nothing the command may not see (the channel to the
         * sentry is closed). */
        (void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
        execvpe(plan->argv[0], plan->argv, plan->envp);
        exec_failed(plan, errno);
}

/* The command's process where execs are native: made after the start with
 * CLONE_VM | CLONE_VFORK, on a stack of its own, so that it shares init's
 * memory until its exec instead of copying it (a fork of init's copy of the
 * sentry's memory cost a few hundred microseconds of page tables, copy-on-
 * write faults on both sides and their teardown at the exec). init waits,
 * suspended, until the exec has replaced the child's memory (or the child
 * has exited), so the two never run at once on the shared memory, and all
 * signals stay blocked across the clone until the child has put its actions
 * back to the defaults (posix_spawn's way). Only where execs are not
 * trapped: a trapped execve is checked by the sentry reading the process's
 * memory, which exec_command makes dumpable for that (PR_SET_DUMPABLE is
 * the memory's, and init's must stay not dumpable); an untrapped one is
 * read by nobody, so the child leaves dumpability as it is (init's, not
 * dumpable since the start) and the exec sets the command's own. */
struct spawn_arg {
        const struct sandbox_plan *plan;
        int sock, slave;
};

static char spawn_stack[64 * 1024] __attribute__((aligned(16)));

static int spawn_main(void *p)
{
        const struct spawn_arg *a = p;
        close(a->sock);
        prepare_command(a->slave); /* the default actions, then no signal blocked */
        trace_mark("cmd: exec");
        execvpe(a->plan->argv[0], a->plan->argv, a->plan->envp);
        exec_failed(a->plan, errno);
}

static pid_t spawn_command(const struct sandbox_plan *plan, int sock, int slave)
{
        struct spawn_arg a = {.plan = plan, .sock = sock, .slave = slave};
        sigset_t all, old;
        sigfillset(&all);
        sigprocmask(SIG_BLOCK, &all, &old);
        pid_t pid = clone(spawn_main, spawn_stack + sizeof(spawn_stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &a);
        int e = errno;
        sigprocmask(SIG_SETMASK, &old, NULL);
        return pid < 0 ? -e : pid;
}

/* Test only (--debug-unsafe, "ro-binds", "noexec-rules"): mounts the
 * read-only binds writable again, or the exec:false rules' paths executable,
 * so a test can show Landlock alone refuses the write or the exec. Runs in
 * init while it still holds CAP_SYS_ADMIN over its own mount namespace,
 * where the view's flags were set and are not locked. */
static void debug_mount_flags(const struct sandbox_plan *plan, int sock)
{
        for (size_t i = 0; (plan->debug_disable & DEBUG_OFF_NOEXEC_RULES) && i < plan->view.n_rules; i++) {
                const struct fs_rule *rule = &plan->view.rules[i];
                unsigned long ro = rule->access == FS_READ ? MS_RDONLY : 0;
                if (rule->exec == 0 && !fs_access_masks(rule->access) &&
                    mount(NULL, rule->path, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | ro, NULL) < 0)
                        child_fail(sock, "debug: remount %s executable: %s", rule->path, strerror(errno));
        }
        for (size_t i = 0; (plan->debug_disable & DEBUG_OFF_RO_BINDS) && i < plan->view.n_binds; i++) {
                const struct fs_bind *b = &plan->view.binds[i];
                if (b->read_only && mount(NULL, b->target, NULL, MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV, NULL) < 0)
                        child_fail(sock, "debug: remount %s writable: %s", b->target, strerror(errno));
        }
}

/* An OCI mount the view does not provide (a tmpfs, mqueue), inside the
 * sandbox's own mount namespace after the pivot; its mount point made if
 * the image lacks it. Always nosuid and nodev. */
static void oci_mount(int sock, const struct oci_extra_mount *m)
{
        char path[4096];
        snprintf(path, sizeof(path), "%s", m->destination);
        for (char *p = path + 1; *p; p++) {
                if (*p != '/')
                        continue;
                *p = '\0';
                if (mkdir(path, 0755) < 0 && errno != EEXIST)
                        child_fail(sock, "mounts: %s: mkdir %s: %s", m->destination, path, strerror(errno));
                *p = '/';
        }
        if (mkdir(path, 0755) < 0 && errno != EEXIST)
                child_fail(sock, "mounts: %s: mkdir: %s", m->destination, strerror(errno));
        /* tmpcopyup: what the image has there, opened before the tmpfs
         * covers it (a symlink there is no directory to copy: refused) */
        _cleanup_close_ int below = -1;
        if (m->copyup && (below = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
                child_fail(sock, "mounts: %s (tmpcopyup): %s", m->destination, strerror(errno));
        /* a read-only one is made read-only once filled */
        unsigned long flags = m->flags | MS_NOSUID | MS_NODEV;
        if (mount(m->fstype, path, m->fstype, below >= 0 ? flags & ~MS_RDONLY : flags, m->data) < 0)
                child_fail(sock, "mounts: %s %s (%s): %s", m->fstype, m->destination, m->data ? m->data : "",
                           strerror(errno));
        if (below >= 0) {
                char err[4096] = "";
                _cleanup_close_ int top = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                int r = top < 0 ? negative_errno() : fs_copyup(below, top, err, sizeof(err));
                if (r < 0)
                        child_fail(sock, "mounts: %s (tmpcopyup): copy %s: %s", m->destination, err[0] ? err : ".",
                                   strerror(-r));
                if ((flags & MS_RDONLY) && mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | flags, NULL) < 0)
                        child_fail(sock, "mounts: %s: make it read-only: %s", m->destination, strerror(errno));
        }
}

/* init's user, net, ipc and uts namespaces, to the sentry (MSG_NS): its
 * proc agent joins them all (a /proc/sys file is looked up in the opener's),
 * its DNS stub listens in the net one. By fd, which takes no ptrace check of
 * init (a non-dumpable init would refuse an unprivileged sentry). The value
 * says whether the sandbox has its own binfmt_misc (fs_binfmt_isolate). */
static void send_namespaces(int sock, bool binfmt_own)
{
        static const char *const names[4] = {"user", "net", "ipc", "uts"};
        int fds[4];
        for (size_t i = 0; i < ELEMENTSOF(names); i++) {
                char path[32];
                snprintf(path, sizeof(path), "/proc/self/ns/%s", names[i]);
                fds[i] = open(path, O_RDONLY | O_CLOEXEC);
                if (fds[i] < 0)
                        child_fail(sock, "open the sandbox's %s namespace: %s", names[i], strerror(errno));
        }
        if (msg_send(sock, MSG_NS, binfmt_own, NULL, fds, ELEMENTSOF(fds)) < 0)
                _exit(EXIT_SANDBOX);
        for (size_t i = 0; i < ELEMENTSOF(fds); i++)
                close(fds[i]);
}

/* net.ipv4.ping_group_range names groups of the writer's user namespace,
 * and the kernel refuses a gid that namespace does not map (EINVAL).
 * Docker, and containerd's enable_unprivileged_icmp (on by default from
 * containerd 2.0), ask for "0 2147483647", every group: every group the
 * container's range maps, here. Each bound above the highest gid mapped
 * is lowered to it, which keeps what was asked for and nothing more (the
 * kernel still checks each gid against the namespace; cordon's filter
 * refuses ICMP sockets whatever the range). Other values as given. */
static const char *ping_range(const char *key, const char *value, char *buf, size_t size)
{
        unsigned long lo, hi;
        int end = 0;
        if (!streq(key, "net.ipv4.ping_group_range") || sscanf(value, " %lu %lu %n", &lo, &hi, &end) != 2 || value[end])
                return value;
        _cleanup_fclose_ FILE *f = fopen("/proc/self/gid_map", "re");
        unsigned long inside, outside, count, top = 0;
        bool any = false;
        while (f && fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3)
                if (count > 0 && inside + count - 1 >= top) {
                        top = inside + count - 1;
                        any = true;
                }
        if (!any)
                return value;
        snprintf(buf, size, "%lu\t%lu", lo > top ? top : lo, hi > top ? top : hi);
        return buf;
}

/* linux.sysctl, written by init while the host's /proc is still mounted
 * (the view's /proc/sys is read-only): a net, ipc or uts sysctl file acts
 * on the namespace of the process that opens it, which is the sandbox's
 * own here, and init is root of the user namespace that owns them. Like
 * runc, a value the kernel refuses fails the start. */
static void oci_sysctls(int sock, const struct oci_sandbox *oci)
{
        _cleanup_close_ int sys = oci->n_sysctls ? open("/proc/sys", O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
        if (oci->n_sysctls && sys < 0)
                child_fail(sock, "linux.sysctl: open /proc/sys: %s", strerror(errno));
        for (size_t i = 0; i < oci->n_sysctls; i++) {
                const struct oci_sysctl *c = &oci->sysctls[i];
                /* a joined namespace's: the sentry wrote them (join.c) */
                if (oci->join[join_kind_of_sysctl(c->key)].path)
                        continue;
                char rel[256];
                if (snprintf(rel, sizeof(rel), "%s", c->key) >= (int)sizeof(rel))
                        child_fail(sock, "linux.sysctl: %s: name too long", c->key);
                for (char *p = rel; *p; p++)
                        if (*p == '.')
                                *p = '/';
                /* the parser refused "..", "/" and empty parts; beneath
                 * /proc/sys without symlinks all the same */
                struct open_how how = {.flags = O_WRONLY | O_CLOEXEC | O_TRUNC,
                                       .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS};
                _cleanup_close_ int fd = (int)syscall(SYS_openat2, sys, rel, &how, sizeof(how));
                if (fd < 0)
                        child_fail(sock, "linux.sysctl: %s: %s", c->key, strerror(errno));
                char buf[64];
                const char *value = ping_range(c->key, c->value, buf, sizeof(buf));
                int r = write_all(fd, value, strlen(value));
                if (r < 0)
                        child_fail(sock, "linux.sysctl: %s = \"%s\": %s", c->key, c->value, strerror(-r));
        }
}

/* Why dir (absolute, in the view) cannot be the command's working
 * directory though chdir may reach it, into why; false when nothing says
 * so. A hidden path shows an empty mask there (fs_view_hidden_by), and
 * /proc and /dev are the sandbox's own, not the caller's. */
static bool cwd_refused(const struct sandbox_plan *plan, const char *dir, char *why, size_t size)
{
        static const char *const own[] = {"/proc", "/dev"};
        const char *hider = fs_view_hidden_by(&plan->view, dir);
        if (hider) {
                snprintf(why, size, "is hidden in the sandbox's view (by %s)", hider);
                return true;
        }
        for (size_t i = 0; i < ELEMENTSOF(own); i++) {
                if (path_beneath(dir, own[i])) {
                        snprintf(why, size, "is under %s, which in the sandbox is its own", own[i]);
                        return true;
                }
        }
        return false;
}

/* Enters dir and checks where that led (a symlink in a template's tree may
 * lead elsewhere in the view): 0, or -errno with why filled in. Entered
 * with the command's own standing, so a directory it may not search is
 * refused too. */
static int try_cwd(const struct sandbox_plan *plan, const char *dir, char *why, size_t size)
{
        char at[4096];
        if (cwd_refused(plan, dir, why, size))
                return -EACCES;
        if (chdir(dir) < 0) {
                int e = errno;
                if (e == ENOENT || e == ENOTDIR)
                        snprintf(why, size, "is not a directory in the sandbox's view");
                else
                        snprintf(why, size, "cannot be entered: %s", strerror(e));
                return -e;
        }
        if (!getcwd(at, sizeof(at))) {
                int e = errno;
                snprintf(why, size, "cannot be entered: getcwd: %s", strerror(e));
                return -e;
        }
        if (!streq(at, dir) && cwd_refused(plan, at, why, size))
                return -EACCES;
        return 0;
}

/* The command's working directory (see sandbox_plan.cwd_fallback), and
 * MSG_CWD saying which, for -v. Never a hidden one: the fallback is the
 * home, checked the same way, and a refused one fails the start. */
static void enter_cwd(const struct sandbox_plan *plan, int sock)
{
        char why[512] = "", note[1024];
        int r = try_cwd(plan, plan->cwd, why, sizeof(why));
        if (r < 0 && !plan->cwd_fallback)
                child_fail(sock, "cannot change to %s in the sandbox: it %s", plan->cwd, why);
        if (r < 0) {
                char why2[512] = "";
                if (try_cwd(plan, plan->cwd_fallback, why2, sizeof(why2)) < 0)
                        child_fail(
                                sock,
                                "cannot change to the home %s in the sandbox: it %s (nor to the caller's directory %s: it %s)",
                                plan->cwd_fallback, why2, plan->cwd, why);
                snprintf(note, sizeof(note), "%s, the home: the caller's directory %s %s", plan->cwd_fallback,
                         plan->cwd, why);
        } else
                snprintf(note, sizeof(note), "%s%s", plan->cwd, plan->cwd_fallback ? " (the caller's directory)" : "");
        if (msg_send(sock, MSG_CWD, r < 0 ? -r : 0, note, NULL, 0) < 0)
                _exit(EXIT_SANDBOX);
}

/* Takes, before anything is mounted in init's copy of the host's tree, what
 * the view would take from it by path later: each bind's source, as the
 * detached recursive copy that fs_view_enter attaches (what its bind by
 * path, MS_BIND | MS_REC, makes), cloned by init with the same standing
 * (the sandbox's, as ever for `cordon run --bind`); a read-write bind's
 * idmapped tree, which the sentry made, as it is. src_fds becomes
 * view->bind_fds. True when nothing is left for the view to open by host
 * path; false, with nothing changed, for an OCI container (the sentry
 * cloned its binds; its mounts' sources are the engine's), a template
 * opened by path, or where a clone fails (fs_view_enter then fails with its
 * own message). */
static bool prepare_view_sources(const struct sandbox_plan *plan, struct fs_view_spec *view, int src_fds[64])
{
        if (plan->oci || (view->template_path && view->template_tree_fd < 0) || view->n_binds > 64)
                return false;
        for (size_t i = 0; i < view->n_binds; i++) {
                /* a read-write bind's idmapped tree, which the sentry made */
                bool made = view->bind_fds && view->bind_fds[i] >= 0;
                src_fds[i] = made ? view->bind_fds[i]
                                  : (int)syscall(SYS_open_tree, AT_FDCWD, view->binds[i].source,
                                                 OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
                if (src_fds[i] < 0) {
                        while (i-- > 0)
                                if (!view->bind_fds || view->bind_fds[i] < 0)
                                        close(src_fds[i]);
                        return false;
                }
        }
        if (view->n_binds > 0)
                view->bind_fds = src_fds;
        return true;
}

/* pid 1 of the sandbox. */
_noreturn_ void sandbox_init(const struct sandbox_plan *plan, int sock, struct cgroup_entry *cg_entry)
{
        struct msg m;
        int fds[4];
        int r;

        /* Whatever the sentry held (the sandbox's state lock, the engine's
         * fds) is not init's: a copy here would outlive a killed sentry.
         * The template's directory stays until the view is built (the view
         * checks that the template it mounts is the one the sentry hashed). */
        int only_sock[2 + CG_ENTRY_MAX + 64] = {sock, plan->view.template_fd};
        size_t n_keep = 2;
        for (size_t i = 0; i < cg_entry->n_tasks; i++)
                only_sock[n_keep++] = cg_entry->tasks_fd[i];
        for (size_t i = 0; i < plan->n_bind_fds && n_keep < ELEMENTSOF(only_sock); i++)
                only_sock[n_keep++] = plan->bind_fds[i];
        if (plan->view.proc_tree_fd >= 0 && n_keep < ELEMENTSOF(only_sock))
                only_sock[n_keep++] = plan->view.proc_tree_fd;
        if (plan->view.shm_tree_fd >= 0 && n_keep < ELEMENTSOF(only_sock))
                only_sock[n_keep++] = plan->view.shm_tree_fd;
        if (close_all_but(only_sock, n_keep) < 0)
                _exit(EXIT_SANDBOX);

        /* Out of the host terminal's session: a Ctrl-C there reaches the
         * sentry only, which forwards it once (init would otherwise get it
         * too and the command would see it twice). */
        setsid();
        trace_mark("init: started");
        /* with the go: the template's idmapped lower layer, when the sentry made one */
        fds[0] = -1;
        r = msg_recv(sock, &m, fds, 1);
        if (r <= 0 || m.type != MSG_GO)
                _exit(EXIT_SANDBOX);
        trace_mark("init: go received");
        struct fs_view_spec view = plan->view;
        view.template_tree_fd = fds[0];
        /* Into the sandbox's control groups before anything else: born in
         * its v2 group (CLONE_INTO_CGROUP), init moves itself into the v1
         * ones; it is single-threaded, so its thread is all of it. Nothing
         * of the sandbox's has run or forked yet. */
        const char *cg_path = NULL;
        r = cgroup_entry_join(cg_entry, &cg_path);
        if (r < 0)
                child_fail(sock, "cannot enter the sandbox's control group %s: %s", cg_path, strerror(-r));
        cgroup_entry_close(cg_entry);
        trace_mark("init: joined its cgroups");
        /* that group is now our cgroup namespace's root */
        if (unshare(CLONE_NEWCGROUP) < 0)
                child_fail(sock, "unshare the cgroup namespace: %s", strerror(errno));

        /* become the first id of the sandbox's map (its root), which the
         * maps tie to an unprivileged host identity (our host credentials
         * were still root's); unprivileged, the caller's own id inside,
         * which init already is (plan->init_uid) */
        if (setgroups(0, NULL) < 0 && errno != EPERM)
                child_fail(sock, "setgroups: %s", strerror(errno));
        uid_t u0 = plan->init_uid;
        gid_t g0 = plan->init_gid;
        if (setresgid(g0, g0, g0) < 0 || setresuid(u0, u0, u0) < 0)
                child_fail(sock, "switch to the sandbox's uid %u: %s", (unsigned)u0, strerror(errno));
        /* The sentry gone means we go too, and with us the pid namespace.
         * Set only now: changing credentials (the setresuid above, from host
         * root to nobody) clears the parent-death signal. Had the sentry died
         * before this line, the next message to it fails and we exit. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                child_fail(sock, "PR_SET_PDEATHSIG: %s", strerror(errno));

        trace_mark("init: credentials set");
        if (plan->oci)
                oci_sysctls(sock, plan->oci);

        /* The namespaces but the mount one are final since the clone: sent
         * now, so that the sentry starts its DNS stub in the network one
         * (and brings its loopback up) while init builds the view. (Opened
         * through the host's /proc, still mounted here: /proc/self is init
         * in any pid namespace's view.) */
        const char *hostname = plan->oci && plan->oci->hostname ? plan->oci->hostname : "cordon";
        /* a joined uts namespace (a pod's) keeps the name its owner gave it */
        bool uts_joined = plan->oci && plan->oci->join[OCI_JOIN_UTS].path;
        if (!uts_joined && sethostname(hostname, strlen(hostname)) < 0)
                child_fail(sock, "sethostname: %s", strerror(errno));
        /* The sandbox's own empty binfmt_misc, whatever execs do: the host's
         * registered formats are not the sandbox's; where the kernel cannot
         * give one, execs stay trapped (the check refuses those formats).
         * Done before the view, on the host tree's copy made private first
         * (nothing mounted here may reach the host), so that the sentry
         * learns with the namespaces whether it needs the exec tracer. */
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                child_fail(sock, "make the mount namespace private: %s", strerror(errno));
        /* Mounted on the host's /tmp for the look, and left there where
         * nothing of the host's tree is looked up by path after it: its
         * unmount would wait for an RCU grace period (0.2 ms here) on the
         * way to the view, while the pivot's detach of the host's tree,
         * which must wait for one anyway, takes it along. The view's
         * staging tmpfs covers it meanwhile, and nothing of the sandbox's
         * runs before the pivot. What the view takes from the host's tree
         * by path, its binds' sources (a template comes as an fd, or takes
         * the old way), is taken here first: a source under /tmp is then
         * the host's, never the mount's. */
        int src_fds[64];
        bool keep_binfmt = prepare_view_sources(plan, &view, src_fds);
        bool binfmt_own = fs_binfmt_isolate("/tmp", keep_binfmt) == 0;
        send_namespaces(sock, binfmt_own);
        trace_mark("init: namespaces sent");

        /* An OCI container's process is pid 1 of its own pid namespace, as
         * runc makes it (signals to pid 1, orphans reaped by the image's
         * own init, /proc/1 its command). init unshares one once the view
         * is built, so that every process it forks from then on is born
         * into it: the container's process first (init_pid1_fork, right
         * after the filter), then each exec. init stays pid 1 of the
         * sandbox's namespace, the parent of the container's: the
         * container's processes are members of both, so init's exit (with
         * the sentry's) still ends every one of them, and all of them come
         * from init's fork, under its filter, Landlock domain, cgroup and
         * view. The view's /proc is then made anew for the container's
         * namespace by a helper that kept init's privileges (the kernel
         * shows a pid namespace only once its pid 1 exists).
         * A kernel whose procfs cannot show another pid namespace (before
         * 6.15) keeps the old shape: init is pid 1, the container's
         * process its child. A pod's app container that shares the pod's
         * pid namespace was born into it (join.c), whose pid 1 is the pod's
         * infra process: its processes are init's children there, as with
         * runc, and the sentry's teardown kills what is left of them
         * through the sandbox's control group, init not being a pid 1
         * whose exit would. */
        bool pid_joined = plan->oci && plan->oci->join[OCI_JOIN_PID].path;
        bool own_pidns = plan->oci && plan->serve_runs && !pid_joined && fs_proc_pidns_supported() &&
                         !notify_feature_absent("proc_pidns"); /* a test's older kernel */

        char err[1024] = "";
        int layerfd = -1;
        r = fs_view_enter(&view, err, sizeof(err), &layerfd);
        if (r < 0)
                child_fail(sock, "cannot build the sandbox's view: %s", err);
        trace_mark("init: view built");
        for (size_t i = 0; plan->oci && i < plan->oci->n_mounts; i++)
                oci_mount(sock, &plan->oci->mounts[i]);
        /* the config's mounts in its order, with their propagation; with
         * the container's own pid namespace, by its /proc helper once that
         * /proc is made (the last mount) */
        if (plan->oci && !own_pidns &&
            (r = fs_view_order(plan->oci->order, plan->oci->n_order, plan->oci->rootfs_propagation, err)) < 0)
                child_fail(sock, "mounts: %s", err);
        if (plan->debug_disable & (DEBUG_OFF_RO_BINDS | DEBUG_OFF_NOEXEC_RULES))
                debug_mount_flags(plan, sock);
        /* --user: the private home is the command's own (the view made it
         * init's, 0700), as a home is its user's */
        if (!plan->oci && (plan->cmd_uid != plan->init_uid || plan->cmd_gid != plan->init_gid) &&
            chown(plan->view.home, plan->cmd_uid, plan->cmd_gid) < 0)
                child_fail(sock, "%s: give the home %s to uid %u: %s", plan->user_origin ? plan->user_origin : "--user",
                           plan->view.home, plan->cmd_uid, strerror(errno));

        /* the container's pid namespace (see own_pidns): its /proc helper
         * first, then the namespace every later fork is born into */
        int helper[2] = {-1, -1};
        pid_t helper_pid = -1;
        if (own_pidns) {
                helper_pid = init_proc_helper_fork(plan->oci, helper);
                if (helper_pid < 0)
                        child_fail(sock, "fork the container's /proc helper: %s", strerror(-helper_pid));
                if (unshare(CLONE_NEWPID) < 0)
                        child_fail(sock, "unshare the container's pid namespace: %s", strerror(errno));
        }

        /* the terminal, from the sandbox's own devpts instance */
        int master = -1, slave = -1;
        if (plan->use_tty) {
                master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
                if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0)
                        child_fail(sock, "open a terminal in the sandbox: %s", strerror(errno));
                char name[64];
                if (ptsname_r(master, name, sizeof(name)) != 0)
                        child_fail(sock, "ptsname: %s", strerror(errno));
                slave = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
                if (slave < 0)
                        child_fail(sock, "open %s: %s", name, strerror(errno));
        }

        /* nothing of the host's but stdin/stdout/stderr crosses into the sandbox */
        /* the view's root, for the sentry's workers to chroot into (sent
         * rather than looked up through /proc, which a non-dumpable init
         * would refuse to an unprivileged sentry) */
        int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (rootfd < 0)
                child_fail(sock, "open the view's root: %s", strerror(errno));

        scrub_host_memory();

        /* the pid namespace's last pid, read when the command ends: how many
         * tasks the sandbox started (opened now: later opens are trapped) */
        int lastpid = open("/proc/sys/kernel/ns_last_pid", O_RDONLY | O_CLOEXEC);

        int keep[] = {sock, master, slave, rootfd, lastpid, layerfd, helper[0], helper[1]};
        if ((r = close_all_but(keep, ELEMENTSOF(keep))) < 0)
                child_fail(sock, "close_range: %s", strerror(-r));

        /* The view and its mounts are final: the sentry starts its proc
         * agent with them while init drops its privileges and installs
         * Landlock and the filter. */
        int out[3] = {rootfd, layerfd, master};
        /* The view's mount table, read once: its ids go to the sentry with
         * the fds (which it would otherwise read again from
         * /proc/1/mountinfo, about 85 us of the CPU init wants now), and
         * Landlock takes its mount points below; nothing is mounted or
         * unmounted between here and there. The sentry may take init's
         * word for it as it takes the view's root: nothing of the
         * sandbox's has run yet. */
        _cleanup_free_ char *mountinfo = NULL; /* stays NULL where it cannot be read */
        if (!own_pidns)
                (void)read_file_text("/proc/self/mountinfo", &mountinfo);
        char ids[sizeof(((struct msg *)0)->text)] = "";
        if (mountinfo)
                mount_ids_text(mountinfo, ids, sizeof(ids));
        /* value 1: /proc is replaced once the container's process exists,
         * so the sentry reads the view's mounts after MSG_READY; no ids
         * (too many for the message, or none read): the sentry reads them */
        if (msg_send(sock, MSG_FDS, own_pidns, ids, out, master >= 0 ? 3 : 2) < 0)
                _exit(EXIT_SANDBOX);
        close(layerfd); /* the sentry's alone: nothing of the sandbox may reach the layer's hidden parts */

        /* the container's rlimits, while init may still raise them within
         * what the host allows (it cannot exceed the hard limits it got) */
        for (size_t i = 0; plan->oci && i < plan->oci->n_rlimits; i++) {
                const struct oci_limit *l = &plan->oci->rlimits[i];
                if (l->resource == RLIMIT_CORE)
                        continue; /* cordon's one byte, below (create warned) */
                struct rlimit rl = {(rlim_t)l->soft, (rlim_t)l->hard};
                if (setrlimit(l->resource, &rl) < 0)
                        child_fail(sock, "process.rlimits: resource %d soft %llu hard %llu: %s", l->resource,
                                   (unsigned long long)l->soft, (unsigned long long)l->hard, strerror(errno));
        }
        if (plan->oci && plan->oci->has_umask)
                umask((mode_t)plan->oci->umask);
        r = drop_privileges(plan);
        if (r < 0)
                child_fail(sock, "drop privileges%s: %s",
                           plan->oci && plan->oci->set_user ? " and become process.user" : "", strerror(-r));

        /* Landlock, before anything runs that the sandbox controls: init
         * restricts itself, so the command and all it forks inherit the
         * domain. Present but failing is fatal (fail closed); absent is
         * reported to the sentry, which says so with -v. */
        char ll_why[1024] = "switched off (--debug-unsafe)";
        int ll_abi = 0;
        if (!(plan->debug_disable & DEBUG_OFF_LANDLOCK)) {
                ll_why[0] = '\0';
                ll_abi = fs_landlock_apply_table(&plan->view, mountinfo, ll_why, sizeof(ll_why));
                if (ll_abi < 0)
                        child_fail(sock, "cannot apply the Landlock ruleset: %s", ll_why);
        }

        trace_mark("init: privileges dropped, landlock applied");
        /* Everything for the sentry goes before the filter: once it is
         * installed, sendmsg and opens are trapped, and nobody serves them
         * until the sentry has the listener. */
        if (msg_send(sock, MSG_LANDLOCK, ll_abi, ll_why, NULL, 0) < 0)
                _exit(EXIT_SANDBOX);

        /* The command's working directory, entered with the command's own
         * standing (no capabilities left) and inherited through the fork:
         * done here, before the filter, it is no trapped chdir — which the
         * sentry could not serve through the /proc/TID/mem fallback anyway,
         * since a process that is not dumpable (init's fork before its exec)
         * has /proc files only the host's root may open. */
        enter_cwd(plan, sock);

        bool killable = false;
        trace_mark("init: fds sent");
        /* No core dumps: not to a file, nor to a host core_pattern pipe,
         * which would hand the sandbox's memory to a host program as root
         * (sentry_core_limit). Set before the filter, which keeps it (and
         * would hold this very call for a sentry not yet serving). */
        rlim_t core_limit = (rlim_t)sentry_core_limit();
        struct rlimit core = {core_limit, core_limit};
        if (setrlimit(RLIMIT_CORE, &core) < 0)
                child_fail(sock, "RLIMIT_CORE %llu: %s", (unsigned long long)core_limit, strerror(errno));
        /* Execs run natively only where the view decides them alone, as the
         * trapped check would: the policy has no exec rule (the plan built
         * the filter only then), Landlock's execute right holds the view's
         * bounds (nothing outside it runs, even from an fd), and no format
         * of the host's applies; noexec mounts, the x bit and the filter's
         * architecture check are the kernel's either way. SECURITY.md says
         * what the trapped check adds beyond that: an audit of each exec and
         * ENOEXEC (rather than SIGSYS at its first call) for a foreign
         * binary. */
        bool native_exec = plan->filter_native_exec.len > 0 && ll_abi > 0 && binfmt_own;
        int listener = notify_filter_install(native_exec ? &plan->filter_native_exec : &plan->filter, &killable);
        if (listener < 0)
                child_fail(sock, "install the seccomp filter: %s", strerror(-listener));
        trace_mark("init: filter installed");
        /* the open-files limit asked for (before the command's fork, which
         * inherits it) */
        if (plan->max_open_files > 0) {
                struct rlimit nofile = {(rlim_t)plan->max_open_files, (rlim_t)plan->max_open_files};
                if (setrlimit(RLIMIT_NOFILE, &nofile) < 0)
                        child_fail(sock, "RLIMIT_NOFILE %lld: %s", (long long)plan->max_open_files, strerror(errno));
        }
        /* The container's process, pid 1 of its namespace, under the filter
         * just installed; then its /proc. A failure is said with send()
         * (child_fail's sendmsg is trapped now, and nobody serves yet). */
        struct init_pid1 pid1 = {.pid = -1};
        if (own_pidns) {
                char perr[1024] = "";
                pid_t p = init_pid1_fork(sock, plan->oci, &pid1);
                /* The helper opens the namespace through /proc/1 (this
                 * init), which a credential change made non-dumpable: made
                 * dumpable for that moment, and back. Safe: the sandbox
                 * holds nothing else yet but the helper and the container's
                 * process, both cordon's code (the latter waits for its
                 * run), and the filter refuses ptrace and cross-process
                 * memory calls all the same. */
                int was_dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
                (void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
                if (p < 0)
                        snprintf(perr, sizeof(perr), "fork the container's process: %s", strerror(-(int)p));
                else if (write(helper[1], "g", 1) != 1 || read(helper[0], perr, sizeof(perr) - 1) <= 0)
                        snprintf(perr, sizeof(perr), "the container's /proc helper died");
                (void)prctl(PR_SET_DUMPABLE, was_dumpable > 0 ? was_dumpable : 0, 0, 0, 0);
                perr[sizeof(perr) - 1] = '\0';
                close(helper[0]);
                close(helper[1]);
                while (waitpid(helper_pid, NULL, 0) < 0 && errno == EINTR)
                        ;
                if (perr[0]) {
                        struct msg fm = {.type = MSG_ERROR};
                        snprintf(fm.text, sizeof(fm.text), "%s", perr);
                        (void)send(sock, &fm, sizeof(fm), MSG_NOSIGNAL);
                        _exit(EXIT_SANDBOX);
                }
        }
        /* The listener's number only, with send() (sendto without an address
         * runs natively); the sentry takes the fd itself with pidfd_getfd. */
        struct msg ready = {.type = MSG_READY,
                            .value = (killable ? READY_KILLABLE : 0) | (native_exec ? READY_NATIVE_EXEC : 0),
                            .aux = listener};
        if (send(sock, &ready, sizeof(ready), MSG_NOSIGNAL) != (ssize_t)sizeof(ready))
                _exit(EXIT_SANDBOX);

        /* Where execs are trapped, the command's process is forked while
         * the sentry takes the listener and sends the start (a fork of
         * init's copy of the sentry's memory costs a few hundred
         * microseconds). It runs nothing but waits for init's go, which
         * comes after the start, once init is no longer dumpable; its
         * copies of init's fds are close-on-exec (the listener, the view's
         * root, the namespaces, the terminal's master). With execs native
         * it is made after the start instead, sharing init's memory until
         * its exec (spawn_command): no copy at all. */
        pid_t cmd = -1;
        int go[2] = {-1, -1};
        bool spawn = !plan->serve_runs && native_exec;
        if (!plan->serve_runs && !spawn) {
                if (pipe2(go, O_CLOEXEC) < 0)
                        child_fail(sock, "pipe: %s", strerror(errno));
                cmd = fork();
                if (cmd < 0)
                        child_fail(sock, "fork: %s", strerror(errno));
                if (cmd == 0) {
                        close(sock);
                        close(go[1]);
                        prepare_command(slave);
                        char c;
                        ssize_t n;
                        do
                                n = read(go[0], &c, 1);
                        while (n < 0 && errno == EINTR);
                        if (n != 1)
                                _exit(EXIT_SANDBOX); /* init is gone: so is the sandbox */
                        close(go[0]);
                        trace_mark("cmd: exec");
                        exec_command(plan);
                }
                close(go[0]);
                init_cmd_pid = cmd;
        }

        r = msg_recv(sock, &m, fds, 0);
        if (r <= 0 || m.type != MSG_START)
                _exit(EXIT_SANDBOX);
        trace_mark("init: start received");
        /* The sentry has taken the listener (pidfd_getfd needs init to be
         * dumpable for an unprivileged sentry). Now, before the command
         * runs anything: init holds the channel to the sentry, and the
         * command must not be able to read or write its memory through
         * /proc/1/mem. */
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
                _exit(EXIT_SANDBOX);
        close(listener);
        close(rootfd);
        if (master >= 0)
                close(master);

        struct sigaction sa = {.sa_sigaction = init_forward, .sa_flags = SA_RESTART | SA_SIGINFO};
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ELEMENTSOF(forwarded_signals); i++)
                sigaction(forwarded_signals[i], &sa, NULL);

        if (plan->serve_runs)
                init_serve_runs(sock, plan->oci, own_pidns ? &pid1 : NULL);

        if (spawn) {
                cmd = spawn_command(plan, sock, slave);
                if (cmd < 0)
                        _exit(EXIT_SANDBOX);
                init_cmd_pid = cmd;
        } else {
                if (write(go[1], "g", 1) != 1)
                        _exit(EXIT_SANDBOX);
                close(go[1]);
        }
        if (slave >= 0)
                close(slave);

        /* reap everything; report the command's status; leave when it ends
         * (the kernel then kills what is left in the pid namespace) */
        for (;;) {
                int status;
                pid_t p = waitpid(-1, &status, 0);
                if (p < 0) {
                        if (errno == EINTR)
                                continue;
                        _exit(EXIT_SANDBOX);
                }
                if (p == cmd) {
                        trace_mark("init: command reaped");
                        int64_t tasks = -1;
                        char buf[32];
                        ssize_t n = lastpid >= 0 ? pread(lastpid, buf, sizeof(buf) - 1, 0) : -1;
                        if (n > 0) {
                                buf[n] = '\0';
                                tasks = strtoll(buf, NULL, 10);
                        }
                        /* send(), not sendmsg(): sendto without an address is
                         * not trapped, so this works even if the sentry is busy */
                        struct msg st = {.type = MSG_STATUS, .value = status, .aux = tasks};
                        (void)send(sock, &st, sizeof(st), MSG_NOSIGNAL);
                        _exit(0);
                }
        }
}
