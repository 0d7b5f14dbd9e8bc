/* `cordon run`: creates the sandbox, supervises it in the foreground, and
 * exits with the command's status.
 *
 *   sentry (host) ── clone(all namespaces) ──▶ init (pid 1 in the sandbox)
 *        │  writes uid/gid maps                    │ builds the view, drops
 *        │  ◀── listener fd (+ pty master) ─────── │ everything, loads filter
 *        │  starts the notification engine         │
 *        │  ── start ──────────────────────────▶   │ forks CMD, reaps, relays
 *        │  ◀── CMD's wait status ──────────────── │ signals, reports status
 *
 * init dies with the sentry (PDEATHSIG), and the whole pid namespace dies
 * with init, so the command never runs unsupervised. */
#include "config.h"

#include <fcntl.h>
#include <grp.h>
#include <jansson.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <malloc.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>

#include "common/fdpass.h"
#include "common/trace.h"
#include "common/util.h"
#include "fs/fs.h"
#include "net/net.h"
#include "sentry/approvals/approvals.h"
#include "sentry/cgroup/cgroup.h"
#include "sentry/oci-sandbox.h"
#include "sentry/oci/oci.h"
#include "sentry/policy/limits.h"
#include "sentry/prebuilt.h"
#include "sentry/run-internal.h"
#include "sentry/sandbox/sandbox.h"
#include "sentry/sentry.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif
#ifndef SECBIT_NOROOT
#define SECBIT_NOROOT                      (1 << 0)
#define SECBIT_NOROOT_LOCKED               (1 << 1)
#define SECBIT_NO_SETUID_FIXUP             (1 << 2)
#define SECBIT_NO_SETUID_FIXUP_LOCKED      (1 << 3)
#define SECBIT_KEEP_CAPS_LOCKED            (1 << 5)
#define SECBIT_NO_CAP_AMBIENT_RAISE        (1 << 6)
#define SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED (1 << 7)
#endif

/* the uid/gid the sandbox runs as on the host when cordon runs as root:
 * nobody, so that an escape from the view still meets the host's file
 * permissions as an unprivileged user */
#define HOST_NOBODY 65534

static int send_msg(int sock, uint32_t type, int32_t value, const char *text, const int *fds, size_t n_fds)
{
        struct msg m = {.type = type, .value = value};
        if (text)
                snprintf(m.text, sizeof(m.text), "%s", text);
        return send_fds(sock, &m, sizeof(m), fds, n_fds);
}

/* Receives one message; up to max_fds fds into fds (others -1). 0 on EOF. */
static int recv_msg(int sock, struct msg *m, int *fds, size_t max_fds)
{
        ssize_t n = recv_fds(sock, m, sizeof(*m), fds, max_fds);
        if (n <= 0)
                return (int)n;
        if (n != (ssize_t)sizeof(*m))
                return -EIO;
        m->text[sizeof(m->text) - 1] = '\0';
        return 1;
}

#define MAX_VIEW_MOUNTS 1024

_noreturn_ _printf_(2, 3) static void child_fail(int sock, const char *fmt, ...)
{
        char text[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        (void)send_msg(sock, MSG_ERROR, 0, text, NULL, 0);
        _exit(EXIT_SANDBOX);
}

/* Drops every capability for good: bounding and ambient sets emptied,
 * securebits locked so uid 0 in the sandbox never regains any on exec.
 * With an OCI identity (oci->set_user) the process also becomes that
 * uid/gid with those groups: the bounding set and securebits go first
 * (they need CAP_SETPCAP), NO_SETUID_FIXUP keeps CAP_SETUID/SETGID across
 * the switch, and the capset below empties them all the same. */
static int drop_privileges(const struct oci_sandbox *oci)
{
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                return negative_errno();
        /* up to the kernel's last capability: the first it does not know
         * (EINVAL) is past it */
        for (int cap = 0; cap <= 63; cap++)
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0) {
                        if (errno == EINVAL)
                                break;
                        return negative_errno();
                }
        if (prctl(PR_SET_SECUREBITS,
                  SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
                          SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED,
                  0, 0, 0) < 0)
                return negative_errno();
        if (oci && oci->set_user) {
                gid_t groups[OCI_MAX_IDS];
                for (size_t i = 0; i < oci->n_groups; i++)
                        groups[i] = oci->groups[i];
                if (setgroups(oci->n_groups, groups) < 0 && !(errno == EPERM && oci->n_groups == 0))
                        return negative_errno();
                if (setresgid(oci->gid, oci->gid, oci->gid) < 0 || setresuid(oci->uid, oci->uid, oci->uid) < 0)
                        return negative_errno();
        }
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
        struct __user_cap_data_struct d[2] = {0};
        if (syscall(SYS_capset, &h, d) < 0)
                return negative_errno();
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                return negative_errno();
        return 0;
}

static const int forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT, SIGWINCH};

static volatile sig_atomic_t init_cmd_pid;

static void init_forward(int sig)
{
        if (init_cmd_pid > 0)
                kill(init_cmd_pid, sig);
}

/* A directory (or O_PATH) fd handed in as stdin/stdout/stderr would be a
 * way out of the view: openat(0, "../..") or fchdir(0) starts a walk the
 * view's root never bounds (runc's CVE-2024-21626 is this class). Such a
 * request is refused rather than silently changed. */
int check_passed_fds(const int fds[3], char *why, size_t size)
{
        for (int i = 0; i <= 2; i++) {
                int fd = fds[i];
                struct stat st;
                if (fd < 0)
                        continue;
                int fl = fcntl(fd, F_GETFL);
                if (fl < 0)
                        continue; /* closed: fine */
                int domain = 0, type = 0;
                socklen_t l = sizeof(int);
                if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
                    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l) == 0) {
                        l = sizeof(int);
                        (void)getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l);
                        /* A host socket may be passed in only where it cannot be
                         * aimed: connected-stream kinds ignore or refuse an
                         * address. A unix datagram or an inet datagram socket
                         * would send wherever msg_name says, in the host's
                         * namespaces, and the gate lets an address-less
                         * sendmsg run without looking at the socket. */
                        bool stream = type == SOCK_STREAM || (domain == AF_UNIX && type == SOCK_SEQPACKET);
                        if (!stream || (domain != AF_UNIX && domain != AF_INET && domain != AF_INET6)) {
                                snprintf(why, size,
                                         "%s is a host socket of family %d type %d; only unix stream and TCP sockets "
                                         "may be passed in",
                                         i == 0   ? "stdin"
                                         : i == 1 ? "stdout"
                                                  : "stderr",
                                         domain, type);
                                return -EBADF;
                        }
                }
                if ((fl & O_PATH) || (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))) {
                        snprintf(why, size,
                                 "%s is a directory or O_PATH descriptor; it would let the command walk "
                                 "out of its view, so cordon refuses to pass it in",
                                 i == 0   ? "stdin"
                                 : i == 1 ? "stdout"
                                          : "stderr");
                        return -EBADF;
                }
        }
        return 0;
}

static int check_stdio(char *why, size_t size)
{
        static const int stdio[3] = {0, 1, 2};
        return check_passed_fds(stdio, why, size);
}

/* The mount ids of init's view (its mountinfo's first column), sorted: what
 * the workers tell a walk that starts outside the view by (defence in depth
 * behind check_stdio). Read by the sentry once init has sent its fds (the
 * view is final then), beside init's last steps, not by init. NULL with
 * errno set on failure. */
static uint64_t *read_mount_ids(pid_t init_pid, size_t *ret_n)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)init_pid);
        /* in one read, not procfs's 1 KiB blocks: each read renders the
         * table again up to where it left off (declared before the stream,
         * which uses it until it is closed) */
        char buf[16384];
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        if (!f)
                return NULL;
        setvbuf(f, buf, _IOFBF, sizeof(buf));
        _cleanup_free_ uint64_t *ids = xmalloc(MAX_VIEW_MOUNTS * sizeof(uint64_t));
        char line[4096];
        size_t n = 0;
        while (fgets(line, sizeof(line), f)) {
                unsigned long long id;
                if (sscanf(line, "%llu", &id) != 1)
                        continue;
                if (n == MAX_VIEW_MOUNTS) {
                        errno = E2BIG;
                        return NULL;
                }
                ids[n++] = id;
        }
        if (n == 0) {
                errno = EIO;
                return NULL;
        }
        qsort(ids, n, sizeof(uint64_t), fs_cmp_u64);
        *ret_n = n;
        return TAKE_PTR(ids);
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
        sigset_t none;
        sigemptyset(&none);
        for (int s = 1; s < NSIG; s++)
                signal(s, SIG_DFL);
        sigprocmask(SIG_SETMASK, &none, NULL);

        setsid();
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
        int e = errno;
        if (e == ENOENT && plan->view.template_path)
                dprintf(STDERR_FILENO,
                        "cordon: %s: not found in the sandbox's root, the template %s (it must hold the program "
                        "and, for a dynamically linked one, its ELF interpreter and libraries)\n",
                        plan->argv[0], plan->view.template_path);
        else
                dprintf(STDERR_FILENO, "cordon: %s: %s\n", plan->argv[0], strerror(e));
        _exit(e == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC);
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
                if (rule->exec == 0 && rule->access != FS_HIDDEN &&
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
        if (mount(m->fstype, path, m->fstype, m->flags | MS_NOSUID | MS_NODEV, m->data) < 0)
                child_fail(sock, "mounts: %s %s (%s): %s", m->fstype, m->destination, m->data ? m->data : "",
                           strerror(errno));
}

/* init's user, net, ipc and uts namespaces, to the sentry (MSG_NS): its
 * proc agent joins them all (a /proc/sys file is looked up in the opener's),
 * its DNS stub listens in the net one. By fd, which takes no ptrace check of
 * init (a non-dumpable init would refuse an unprivileged sentry). */
static void send_namespaces(int sock)
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
        if (send_msg(sock, MSG_NS, 0, NULL, fds, ELEMENTSOF(fds)) < 0)
                _exit(EXIT_SANDBOX);
        for (size_t i = 0; i < ELEMENTSOF(fds); i++)
                close(fds[i]);
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
                int r = write_all(fd, c->value, strlen(c->value));
                if (r < 0)
                        child_fail(sock, "linux.sysctl: %s = \"%s\": %s", c->key, c->value, strerror(-r));
        }
}

/* pid 1 of the sandbox. */
_noreturn_ static void sandbox_init(const struct sandbox_plan *plan, int sock, struct cgroup_entry *cg_entry)
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
        if (close_all_but(only_sock, n_keep) < 0)
                _exit(EXIT_SANDBOX);

        /* Out of the host terminal's session: a Ctrl-C there reaches the
         * sentry only, which forwards it once (init would otherwise get it
         * too and the command would see it twice). */
        setsid();
        trace_mark("init: started");
        /* with the go: the template's idmapped lower layer, when the sentry made one */
        fds[0] = -1;
        r = recv_msg(sock, &m, fds, 1);
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

        /* become the sandbox's uid/gid 0, which the maps tie to an
         * unprivileged host identity (our host credentials were still root's) */
        if (setgroups(0, NULL) < 0 && errno != EPERM)
                child_fail(sock, "setgroups: %s", strerror(errno));
        if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
                child_fail(sock, "switch to the sandbox's uid 0: %s", strerror(errno));
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
        if (sethostname(hostname, strlen(hostname)) < 0)
                child_fail(sock, "sethostname: %s", strerror(errno));
        send_namespaces(sock);
        trace_mark("init: namespaces sent");

        char err[1024] = "";
        int layerfd = -1;
        r = fs_view_enter(&view, err, sizeof(err), &layerfd);
        if (r < 0)
                child_fail(sock, "cannot build the sandbox's view: %s", err);
        trace_mark("init: view built");
        for (size_t i = 0; plan->oci && i < plan->oci->n_mounts; i++)
                oci_mount(sock, &plan->oci->mounts[i]);
        if (plan->debug_disable & (DEBUG_OFF_RO_BINDS | DEBUG_OFF_NOEXEC_RULES))
                debug_mount_flags(plan, sock);

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

        int keep[] = {sock, master, slave, rootfd, lastpid, layerfd};
        if ((r = close_all_but(keep, ELEMENTSOF(keep))) < 0)
                child_fail(sock, "close_range: %s", strerror(-r));

        /* The view and its mounts are final: the sentry starts its proc
         * agent with them while init drops its privileges and installs
         * Landlock and the filter. */
        int out[3] = {rootfd, layerfd, master};
        if (send_msg(sock, MSG_FDS, 0, NULL, out, master >= 0 ? 3 : 2) < 0)
                _exit(EXIT_SANDBOX);
        close(layerfd); /* the sentry's alone: nothing of the sandbox may reach the layer's hidden parts */

        /* the container's rlimits, while init may still raise them within
         * what the host allows (it cannot exceed the hard limits it got) */
        for (size_t i = 0; plan->oci && i < plan->oci->n_rlimits; i++) {
                const struct oci_limit *l = &plan->oci->rlimits[i];
                struct rlimit rl = {(rlim_t)l->soft, (rlim_t)l->hard};
                if (setrlimit(l->resource, &rl) < 0)
                        child_fail(sock, "process.rlimits: resource %d soft %llu hard %llu: %s", l->resource,
                                   (unsigned long long)l->soft, (unsigned long long)l->hard, strerror(errno));
        }
        if (plan->oci && plan->oci->has_umask)
                umask((mode_t)plan->oci->umask);
        r = drop_privileges(plan->oci);
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
                ll_abi = fs_landlock_apply(&plan->view, ll_why, sizeof(ll_why));
                if (ll_abi < 0)
                        child_fail(sock, "cannot apply the Landlock ruleset: %s", ll_why);
        }

        trace_mark("init: privileges dropped, landlock applied");
        /* Everything for the sentry goes before the filter: once it is
         * installed, sendmsg and opens are trapped, and nobody serves them
         * until the sentry has the listener. */
        if (send_msg(sock, MSG_LANDLOCK, ll_abi, ll_why, NULL, 0) < 0)
                _exit(EXIT_SANDBOX);

        /* The command's working directory, entered with the command's own
         * standing (no capabilities left) and inherited through the fork:
         * done here, before the filter, it is no trapped chdir — which the
         * sentry could not serve through the /proc/TID/mem fallback anyway,
         * since a process that is not dumpable (init's fork before its exec)
         * has /proc files only the host's root may open. */
        if (chdir(plan->cwd) < 0)
                child_fail(sock, "cannot change to %s in the sandbox: %s", plan->cwd, strerror(errno));

        bool killable = false;
        trace_mark("init: fds sent");
        int listener = notify_filter_install(&plan->filter, &killable);
        if (listener < 0)
                child_fail(sock, "install the seccomp filter: %s", strerror(-listener));
        trace_mark("init: filter installed");
        /* no core dumps: a host core_pattern pipe would hand the dump to a
         * host program; and the open-files limit asked for (before the
         * command's fork, which inherits them) */
        struct rlimit core = {0, 0};
        setrlimit(RLIMIT_CORE, &core);
        if (plan->max_open_files > 0) {
                struct rlimit nofile = {(rlim_t)plan->max_open_files, (rlim_t)plan->max_open_files};
                if (setrlimit(RLIMIT_NOFILE, &nofile) < 0)
                        child_fail(sock, "RLIMIT_NOFILE %lld: %s", (long long)plan->max_open_files, strerror(errno));
        }
        /* The listener's number only, with send() (sendto without an address
         * runs natively); the sentry takes the fd itself with pidfd_getfd. */
        struct msg ready = {.type = MSG_READY, .value = killable, .aux = listener};
        if (send(sock, &ready, sizeof(ready), MSG_NOSIGNAL) != (ssize_t)sizeof(ready))
                _exit(EXIT_SANDBOX);

        /* The command's process, forked while the sentry takes the listener
         * and sends the start (a fork of init's copy of the sentry's memory
         * costs a few hundred microseconds). It runs nothing but waits for
         * init's go, which comes after the start, once init is no longer
         * dumpable; its copies of init's fds are close-on-exec (the
         * listener, the view's root, the namespaces, the terminal's
         * master). */
        pid_t cmd = -1;
        int go[2] = {-1, -1};
        if (!plan->serve_runs) {
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

        r = recv_msg(sock, &m, fds, 0);
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

        struct sigaction sa = {.sa_handler = init_forward, .sa_flags = SA_RESTART};
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < ELEMENTSOF(forwarded_signals); i++)
                sigaction(forwarded_signals[i], &sa, NULL);

        if (plan->serve_runs)
                init_serve_runs(sock, plan->oci);

        if (write(go[1], "g", 1) != 1)
                _exit(EXIT_SANDBOX);
        close(go[1]);
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

static int write_file(const char *path, const char *text)
{
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return negative_errno();
        return write_all(fd, text, strlen(text));
}

/* process.oomScoreAdj, written by the sentry into init before init forks
 * anything (every process of the container inherits it), as runc does
 * for the container's process. */
static int set_oom_score_adj(pid_t pid, int value)
{
        char path[64], v[16];
        snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pid);
        snprintf(v, sizeof(v), "%d", value);
        return write_file(path, v);
}

/* "0 HOST 1" and, for an OCI identity, one line per other container id
 * (oci_host_id: never host root). */
static void id_map_text(char *buf, size_t size, uint32_t root_host, uint32_t id, const uint32_t *more, size_t n_more)
{
        size_t len = (size_t)snprintf(buf, size, "0 %u 1\n", root_host);
        uint32_t done[1 + OCI_MAX_IDS];
        size_t n_done = 0;
        for (size_t i = 0; i <= n_more && len < size; i++) {
                uint32_t c = i == 0 ? id : more[i - 1];
                bool dup = c == 0;
                for (size_t k = 0; k < n_done; k++)
                        dup = dup || done[k] == c;
                if (dup)
                        continue;
                done[n_done++] = c;
                len += (size_t)snprintf(buf + len, size - len, "%u %u 1\n", c, oci_host_id(c, root_host));
        }
}

static int write_id_maps(pid_t pid, uid_t uid, gid_t gid, bool deny_setgroups, const struct oci_sandbox *oci)
{
        char path[64], map[4096];
        int r;
        if (deny_setgroups) {
                snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
                if ((r = write_file(path, "deny")) < 0)
                        return r;
        }
        bool ids = oci && oci->set_user;
        snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
        id_map_text(map, sizeof(map), uid, ids ? oci->uid : 0, NULL, 0);
        if ((r = write_file(path, map)) < 0)
                return r;
        snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
        id_map_text(map, sizeof(map), gid, ids ? oci->gid : 0, ids ? oci->groups : NULL, ids ? oci->n_groups : 0);
        return write_file(path, map);
}

/* Unprivileged: the sentry first enters a user namespace of its own, in
 * which it holds the capabilities it needs over the sandbox (chroot for its
 * workers, ptrace-level access to the sandbox's memory); on the host it
 * stays the invoking user. */
static int enter_own_userns(uid_t uid, gid_t gid)
{
        /* unshare(CLONE_NEWUSER) needs a single-threaded caller (EINVAL
         * otherwise). The floor's preload thread has been joined, but
         * pthread_join returns when the kernel clears the thread's tid,
         * early in its exit, and the thread leaves the group a moment
         * later: seen as 1 run in 20 failing under load (fs-semantics.sh
         * unprivileged_proc_agent_every_run). So EINVAL is retried, for at
         * most 100 ms; an EINVAL with another cause still fails then. */
        int tries = 2000;
        while (unshare(CLONE_NEWUSER) < 0) {
                if (errno != EINVAL || --tries == 0)
                        return negative_errno();
                (void)clock_nanosleep(CLOCK_MONOTONIC, 0, &(struct timespec){0, 50 * 1000}, NULL);
        }
        char map[64];
        int r;
        if ((r = write_file("/proc/self/setgroups", "deny")) < 0)
                return r;
        snprintf(map, sizeof(map), "%u %u 1\n", uid, uid);
        if ((r = write_file("/proc/self/uid_map", map)) < 0)
                return r;
        snprintf(map, sizeof(map), "%u %u 1\n", gid, gid);
        return write_file("/proc/self/gid_map", map);
}

static int sentry_main_loop(struct sandbox_state *st);
static int run_sandbox(struct sandbox_state *st);

/* clone3 into the cgroup v2 group cgroup_fd (-1: none); where the kernel
 * or a seccomp filter around us refuses clone3 or CLONE_INTO_CGROUP (ENOSYS
 * before 5.3 and inside a sandbox; E2BIG or EINVAL before 5.7), clone as
 * before. *ret_into: the child was born in the group (and, on failure, that
 * clone3 into it was what failed); if not, the caller attaches it. */
static pid_t clone_init(unsigned long flags, int cgroup_fd, int *ret_pidfd, bool *ret_into)
{
        *ret_into = false;
        if (cgroup_fd >= 0 && !notify_feature_absent("clone_into_cgroup")) {
                struct clone_args ca = {
                        .flags = flags | CLONE_INTO_CGROUP,
                        .pidfd = (uint64_t)(uintptr_t)ret_pidfd,
                        .exit_signal = SIGCHLD,
                        .cgroup = (uint64_t)cgroup_fd,
                };
                *ret_into = true;
                pid_t pid = (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
                if (pid >= 0 || (errno != ENOSYS && errno != E2BIG && errno != EINVAL))
                        return pid;
                *ret_into = false;
        }
        return (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, ret_pidfd, NULL, NULL);
}

/* As host root: the template's lower layer, idmapped through the sandbox's
 * user namespace (its maps are written by now) so that host root's files
 * are the sandbox root's and overlayfs can copy them up. Made from the fd
 * the digest was computed on. */
static int template_lower(struct sandbox_plan *plan, pid_t pid)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/ns/user", pid);
        _cleanup_close_ int userns = open(path, O_RDONLY | O_CLOEXEC);
        if (userns < 0)
                return negative_errno();
        return fs_template_idmapped(plan->view.template_fd, userns, &plan->view.template_tree_fd);
}

/* Test hook: CORDON_TEST_STALL=start|teardown makes the sentry pause at that
 * point (CORDON_TEST_STALL_SECONDS, default 30) so the fault-injection tests
 * can SIGKILL it there, and the layer tests can swap a template between its
 * check and its mount. It only delays; it changes no decision. */
static void test_stall(const char *point)
{
        const char *s = getenv("CORDON_TEST_STALL");
        if (s && streq(s, point)) {
                const char *secs = getenv("CORDON_TEST_STALL_SECONDS");
                unsigned n = secs ? (unsigned)strtoul(secs, NULL, 10) : 30;
                fprintf(stderr, "cordon: stalled at %s (CORDON_TEST_STALL)\n", point);
                sleep(n > 0 && n <= 30 ? n : 30);
        }
}

static char *state_json(const char *id, const struct cgroup *cg, const struct run_limits *l)
{
        json_t *root = json_pack("{s:s, s:I, s:I, s:s}", "id", id, "sentryPid", (json_int_t)getpid(), "startedAt",
                                 (json_int_t)time(NULL), "cgroupBackend", cg ? cgroup_backend(cg) : "none");
        json_t *dirs = json_array();
        for (const char *const *d = cg ? cgroup_dirs(cg) : NULL; d && *d; d++)
                json_array_append_new(dirs, json_string(*d));
        json_object_set_new(root, "cgroups", dirs);
        json_object_set_new(root, "limits",
                            json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "memoryBytes", (json_int_t)l->memory_bytes,
                                      "cpuMillis", (json_int_t)l->cpu_millis, "diskBytes", (json_int_t)l->disk_bytes,
                                      "maxProcesses", (json_int_t)l->max_processes, "maxOpenFiles",
                                      (json_int_t)l->max_open_files, "timeoutMs", (json_int_t)l->timeout_ms));
        char *text = json_dumps(root, JSON_COMPACT);
        json_decref(root);
        if (!text)
                oom();
        return text;
}

int sentry_debug_parse(const char *list, unsigned *ret, const char **ret_bad)
{
        static const struct {
                const char *name;
                unsigned bit;
        } names[] = {
                {"net-emulation", DEBUG_OFF_NET_EMULATION}, {"fs-emulation", DEBUG_OFF_FS_EMULATION},
                {"ro-binds", DEBUG_OFF_RO_BINDS},           {"egress-floor", DEBUG_OFF_EGRESS_FLOOR},
                {"landlock", DEBUG_OFF_LANDLOCK},           {"noexec-rules", DEBUG_OFF_NOEXEC_RULES},
        };
        unsigned bits = 0;
        for (const char *p = list; p && *p;) {
                size_t len = strcspn(p, ",");
                bool found = false;
                for (size_t i = 0; i < ELEMENTSOF(names); i++)
                        if (len == strlen(names[i].name) && strncmp(p, names[i].name, len) == 0) {
                                bits |= names[i].bit;
                                found = true;
                        }
                if (!found && len > 0) {
                        if (ret_bad)
                                *ret_bad = p;
                        return -EINVAL;
                }
                p = p[len] ? p + len + 1 : NULL;
        }
        *ret = bits;
        return 0;
}

/* Test only: the filter rebuilt with the rows of the switched-off
 * emulation allowed natively. The run's own table is changed, so the
 * dispatch (which the engine builds from it) agrees with the filter. Network
 * emulation: the calls that name a destination. Fs emulation: every path
 * call the sentry performs (not exec, whose check is a layer of its own). */
static int debug_rebuild_filter(struct sandbox_plan *plan, unsigned off)
{
        static const char *const net_rows[] = {"connect", "sendto", "sendmsg", "sendmmsg"};
        struct syscall_entry *table = plan->table;
        size_t n = plan->n_table;
        for (size_t i = 0; i < n; i++) {
                if (table[i].action != SC_EMULATE)
                        continue;
                for (size_t k = 0; (off & DEBUG_OFF_NET_EMULATION) && k < ELEMENTSOF(net_rows); k++)
                        if (streq(table[i].name, net_rows[k]))
                                table[i].action = SC_ALLOW;
                if ((off & DEBUG_OFF_FS_EMULATION) && table[i].ctx == CTX_FS && !streq(table[i].name, "execve") &&
                    !streq(table[i].name, "execveat"))
                        table[i].action = SC_ALLOW;
        }
        struct sock_fprog prog;
        const char *bad = NULL;
        int r = notify_filter_build(table, n, &prog, &bad);
        if (r < 0) {
                fprintf(stderr, "cordon: cannot build the debug seccomp filter (row %s): %s\n", bad ? bad : "?",
                        strerror(-r));
                return r;
        }
        free(plan->filter.filter);
        plan->filter = prog;
        return 0;
}

/* The kernel egress floor on the sandbox's cgroup v2 group, attached before
 * any process is in the group. Where the host cannot have it (no cgroup v2
 * group for the sandbox, no privilege to load or attach BPF programs, a
 * kernel without the hooks) it is absent and st says why, for -v. Any other
 * failure on a host that offers it refuses the start: returns -errno. */
static int attach_floor(struct sandbox_state *st, unsigned debug_off)
{
        if (debug_off & DEBUG_OFF_EGRESS_FLOOR) {
                snprintf(st->floor_why, sizeof(st->floor_why), "switched off (--debug-unsafe)");
                return 0;
        }
        if (!st->cg) {
                snprintf(st->floor_why, sizeof(st->floor_why), "the sandbox has no cgroup to attach it to");
                return 0;
        }
        const char *why = NULL;
        _cleanup_close_ int fd = cgroup_open_v2(st->cg, &why);
        if (fd < 0) {
                snprintf(st->floor_why, sizeof(st->floor_why), "%s", why);
                return 0;
        }
        int r = net_floor_attach(fd, st->floor_why, sizeof(st->floor_why));
        if (r >= 0) {
                st->floor_on = true;
                st->floor_why[0] = '\0';
                return 0;
        }
        if (r == -EPERM || r == -EACCES || r == -EOPNOTSUPP || r == -ENOSYS || r == -EINVAL)
                return 0;
        fprintf(stderr, "cordon: kernel egress floor: %s\n", st->floor_why);
        return r;
}

static bool any_cgroup_limit(const struct run_limits *l)
{
        return l->memory_bytes != POLICY_UNSET || l->cpu_millis != POLICY_UNSET || l->max_processes != POLICY_UNSET;
}

/* What a run does without each kernel feature a test can force absent (the
 * same as on a kernel that lacks it), said once under -v. */
static const struct {
        const char *name, *consequence;
} fallbacks[] = {
        {"process_vm_readv", "child memory is read through /proc/TID/mem"},
        {"openat2", "cordon's own walks go one component at a time and refuse symlinks; the child's openat2 gets "
                    "ENOSYS"},
        {"sync_wakeup",
         "SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP not used: emulated calls are slower, isolation is the same"},
        {"clone_into_cgroup",
         "init is cloned outside its cgroup v2 group and the sentry moves it there through cgroup.procs, which "
         "waits for an RCU grace period: a slower start, the same groups"},
        {"pidfd_getfd", "required"},
        {"addfd", "required"},
        {"ptrace", "the exec tracer cannot seize init: the run is refused, unless --allow-unverified-exec accepts "
                   "execs that are not verified after the fact"},
};

/* Tests re-run the suite with a kernel feature forced absent so the fallback
 * paths run, not just exist. Falling back never weakens isolation, only
 * speed or reach; a feature without a safe fallback refuses the run. Before
 * the plan, since the plan already walks trees (the source's digest). */
static int apply_forced_fallbacks(bool verbose)
{
        const char *force = getenv("CORDON_TEST_FORCE_FALLBACK");
        if (!force || !*force)
                return 0;
        _cleanup_free_ char *list = xstrdup(force);
        char *save = NULL;
        for (char *f = strtok_r(list, ",", &save); f; f = strtok_r(NULL, ",", &save))
                if (notify_force_fallback(f) < 0) {
                        fprintf(stderr, "cordon: CORDON_TEST_FORCE_FALLBACK: unknown feature '%s'\n", f);
                        return EXIT_USAGE;
                }
        for (size_t i = 0; i < ELEMENTSOF(fallbacks); i++)
                if (verbose && notify_feature_absent(fallbacks[i].name))
                        fprintf(stderr, "cordon: kernel feature %s forced absent: %s\n", fallbacks[i].name,
                                fallbacks[i].consequence);
        /* No safe fallback for these two: without ADDFD the sentry cannot
         * give the child the file or socket it opened on its behalf (letting
         * the kernel redo the call would re-read child memory after the
         * decision); without pidfd_getfd it cannot take the sandbox's seccomp
         * listener from init, nor inspect the child's sockets and dirfds. */
        if (notify_feature_absent("addfd")) {
                fprintf(stderr, "cordon: the kernel lacks SECCOMP_IOCTL_NOTIF_ADDFD (Linux 5.9), which cordon "
                                "requires to inject the files and sockets it opens for the sandbox; refusing to "
                                "start\n");
                return EXIT_SANDBOX;
        }
        if (notify_feature_absent("pidfd_getfd")) {
                fprintf(stderr, "cordon: the kernel lacks pidfd_getfd (Linux 5.6), which cordon requires to take "
                                "the sandbox's seccomp listener and inspect the sandbox's fds; refusing to start\n");
                return EXIT_SANDBOX;
        }
        return 0;
}

/* (a cleanup: net_floor_preload_end is a no-op once ended or never begun) */
static void floor_preload_end(bool *preloading)
{
        (void)preloading;
        net_floor_preload_end();
}

int sentry_run(const struct run_options *o)
{
        int r = apply_forced_fallbacks(o->verbose);
        if (r != 0)
                return r;
        /* The floor's programs load on a thread while the plan, admission,
         * state and cgroup are made: attach_floor takes them before the
         * clone (nothing here forks or clones before it), and any return
         * before that waits for the thread. */
        _cleanup_(floor_preload_end) bool floor_preloading = !(o->debug_disable & DEBUG_OFF_EGRESS_FLOOR);
        if (floor_preloading)
                net_floor_preload();
        _cleanup_(sandbox_plan_done) struct sandbox_plan plan = {0};
        r = sandbox_plan_build(o, &plan);
        if (r < 0)
                return r == PLAN_POLICY_ERROR ? EXIT_USAGE : EXIT_SANDBOX; /* plan_build printed why */
        trace_mark("plan built (table, filter)");

        /* limits: command line and policy (the stricter wins), then the host's admission policy */
        struct run_limits limits = o->limits;
        run_limits_merge_policy(&limits, o->policy);
        struct admission adm;
        _cleanup_free_ char *err = NULL;
        r = admission_load(o->admission_path, &adm, &err);
        if (r < 0) {
                fprintf(stderr, "cordon: admission policy: %s\n", err);
                return EXIT_USAGE;
        }
        r = admission_apply(&adm, &limits, &err);
        if (r < 0) {
                fprintf(stderr, "cordon: %s\n", err);
                return EXIT_QUOTA;
        }
        if (limits.expires_at != (time_t)-1 && limits.expires_at <= time(NULL)) {
                fprintf(stderr, "cordon: expiresAt is in the past; the sandbox would be dead on arrival\n");
                return EXIT_USAGE;
        }
        plan.view.writable_bytes = limits.disk_bytes;
        plan.max_open_files = limits.max_open_files;
        plan.debug_disable = o->debug_disable;
        if ((o->debug_disable & (DEBUG_OFF_NET_EMULATION | DEBUG_OFF_FS_EMULATION)) &&
            debug_rebuild_filter(&plan, o->debug_disable) < 0)
                return EXIT_SANDBOX;

        char why[512];
        if (check_stdio(why, sizeof(why)) < 0) {
                fprintf(stderr, "cordon: %s\n", why);
                return EXIT_SANDBOX;
        }

        /* --approve-interactive asks whoever runs cordon, on the terminal
         * that controls it: without one there is nobody to ask, and running
         * with every ask denied is not what the flag asked for */
        _cleanup_close_ int approve_tty = -1;
        if (o->approve_interactive) {
                approve_tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
                if (approve_tty < 0) {
                        fprintf(stderr,
                                "cordon: --approve-interactive needs a controlling terminal to ask on, and there is "
                                "none (/dev/tty: %m); use `cordon sandbox` with `sandbox approve` instead\n");
                        return EXIT_USAGE;
                }
        } else if (!o->serve) {
                bool asks = false;
                for (size_t i = 0; i < o->policy->n_rules; i++)
                        asks = asks || o->policy->rules[i].action == ACTION_ASK;
                for (size_t i = 0; i < o->policy->n_net_rules; i++)
                        asks = asks || o->policy->net_rules[i].action == ACTION_ASK;
                if (asks)
                        fprintf(stderr, "cordon: warning: the policy has \"ask\" rules and nobody to ask "
                                        "(--approve-interactive not given): every such call is denied\n");
        }

        trace_mark("admission, stdio checked");
        /* what crashed sentries left behind goes first (never a live sandbox) */
        (void)state_gc(true);
        trace_mark("state gc");

        char id[17];
        sandbox_new_id(id);
        _cleanup_close_ int lock = state_admit(id, adm.max_sandboxes, &err);
        if (lock < 0) {
                fprintf(stderr, "cordon: %s\n", err);
                return lock == -EDQUOT ? EXIT_QUOTA : EXIT_SANDBOX;
        }

        trace_mark("admitted");
        struct cgroup *cg = NULL;
        struct cg_limits cgl = {limits.memory_bytes, limits.max_processes, limits.cpu_millis};
        free(TAKE_PTR(err));
        r = cgroup_create(o->cgroup_mode, id, &cgl, &cg, &err);
        if (r < 0) {
                if (any_cgroup_limit(&limits) || o->cgroup_mode != CG_AUTO) {
                        fprintf(stderr, "cordon: %s; refusing to start without the requested limits\n", err);
                        state_remove(id);
                        return EXIT_SANDBOX;
                }
                /* No limit asked for: the pid namespace still ends every
                 * process with init; only accounting is lost. Said plainly. */
                if (o->verbose)
                        fprintf(stderr, "cordon: no cgroup for this sandbox (%s); no limits were requested\n", err);
                cg = NULL;
        }
        trace_mark("cgroup created");
        _cleanup_free_ char *sj = state_json(id, cg, &limits);
        (void)state_write(id, sj);
        trace_mark("state written");
        test_stall("start");

        /* `sandbox create`: the state directory's files, the control socket */
        struct serve *srv = NULL;
        if (o->serve && (r = serve_prepare(o->serve, id, &limits, &srv)) < 0) {
                fprintf(stderr, "cordon: cannot prepare the sandbox's state directory: %s\n", strerror(-r));
                cgroup_destroy(cg);
                state_remove(id);
                return EXIT_SANDBOX;
        }

        _cleanup_close_ int audit_fd = -1;
        if (srv)
                audit_fd = fcntl(serve_audit_fd(srv), F_DUPFD_CLOEXEC, 3);
        else if (o->audit_path) {
                audit_fd = open(o->audit_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
                if (audit_fd < 0) {
                        fprintf(stderr, "cordon: --audit %s: %m\n", o->audit_path);
                        cgroup_destroy(cg);
                        state_remove(id);
                        return EXIT_USAGE;
                }
        }

        struct sandbox_state st = {
                .plan = &plan,
                .policy = o->policy,
                .audit_fd = audit_fd,
                .verbose = o->verbose,
                .allow_unverified_exec = o->allow_unverified_exec,
                .cg = cg,
                .limits = limits,
                .id = id,
                .exit_reason = "exited",
                .writable_fd = -1,
                .tasks_started = -1,
                .sock = -1,
                .pidfd = -1,
                .pty_master = -1,
                .layer_fd = -1,
                .serve = srv,
                .approve_tty = approve_tty,
                .prompt_wake = {-1, -1},
                .state_lock = TAKE_FD(lock),
                .fsctx = {.exec_channel = -1},
        };
        clock_gettime(CLOCK_MONOTONIC, &st.started);
        r = attach_floor(&st, o->debug_disable);
        /* the preload thread is over before the clone, whether the floor
         * took its programs or not (no cgroup to attach them to) */
        net_floor_preload_end();
        if (r < 0) {
                cgroup_destroy(cg);
                state_remove(id);
                close(st.state_lock);
                return EXIT_SANDBOX;
        }
        trace_mark("floor attached");
        int code = run_sandbox(&st);
        trace_mark("run_sandbox returned");
        serve_free(srv);

        test_stall("teardown");
        if (o->stats_path)
                (void)write_stats(&st, o->stats_path, code);
        if (st.writable_fd >= 0)
                close(st.writable_fd);
        if (st.layer_fd >= 0)
                close(st.layer_fd);
        trace_mark("stats written");
        /* A group that could not be removed keeps the claim on disk (closed,
         * so stale): the next gc finds it, and with it the group. */
        bool groups_gone = cgroup_destroy(cg) == 0;
        trace_mark("cgroup destroyed");
        if (st.state_lock >= 0) {
                (void)state_remove_dir(id);
                close(st.state_lock);
        }
        if (groups_gone)
                state_drop_claim(id);
        trace_mark("state removed");
        return code;
}

static int run_sandbox(struct sandbox_state *st)
{
        struct sandbox_plan *plan = st->plan;
        int r;

        uid_t host_uid = getuid(), host_gid = getgid();
        bool privileged = geteuid() == 0;
        uid_t child_uid = privileged ? HOST_NOBODY : host_uid;
        gid_t child_gid = privileged ? HOST_NOBODY : host_gid;
        if (!privileged) {
                r = enter_own_userns(host_uid, host_gid);
                if (r < 0) {
                        fprintf(stderr,
                                "cordon: user namespaces are not available to this user (%s); "
                                "cordon needs them to isolate without root. See `cordon check`.\n",
                                strerror(-r));
                        return EXIT_SANDBOX;
                }
        }

        int sp[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
                fprintf(stderr, "cordon: socketpair: %m\n");
                return EXIT_SANDBOX;
        }

        /* signals are taken through a signalfd in the main loop; block them
         * before the clone so none is lost in between */
        sigset_t mask, old;
        sigemptyset(&mask);
        for (size_t i = 0; i < ELEMENTSOF(forwarded_signals); i++)
                sigaddset(&mask, forwarded_signals[i]);
        sigaddset(&mask, SIGCHLD);
        sigaddset(&mask, SIGPIPE);
        sigprocmask(SIG_BLOCK, &mask, &old);

        /* The sandbox's groups, entered at birth (see cgroup_entry): opened
         * now, as the sentry, for init to inherit. */
        _cleanup_(cgroup_entry_close) struct cgroup_entry cg_entry = CGROUP_ENTRY_NULL;
        const char *cg_path = NULL;
        if (st->cg && (r = cgroup_entry_open(st->cg, &cg_entry, &cg_path)) < 0) {
                fprintf(stderr, "cordon: cannot enter the sandbox's control group %s: %s\n", cg_path ?: "?",
                        strerror(-r));
                close(sp[0]);
                close(sp[1]);
                sigprocmask(SIG_SETMASK, &old, NULL);
                return EXIT_SANDBOX;
        }

        /* No CLONE_NEWCGROUP here: init joins its own cgroup namespace once
         * it is in the sandbox's groups, so that the group is its cgroup
         * root. */
        int pidfd = -1;
        unsigned long flags =
                CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_PIDFD;
        bool born_in_group = false;
        init_read_test_hooks();
        trace_mark("clone");
        pid_t pid = clone_init(flags, cg_entry.v2_fd, &pidfd, &born_in_group);
        if (pid < 0) {
                int e = errno;
                if (born_in_group)
                        fprintf(stderr,
                                "cordon: cannot create the sandbox's init in its control group %s (clone3 "
                                "CLONE_INTO_CGROUP): %s\n",
                                cgroup_v2_path(st->cg), strerror(e));
                else
                        fprintf(stderr,
                                "cordon: cannot create the sandbox's namespaces (user, mount, pid, net, ipc, uts, "
                                "cgroup): %s%s\n",
                                strerror(e),
                                e == EPERM || e == ENOSPC
                                        ? "; user namespaces may be disabled on this host (see `cordon check`)"
                                        : "");
                close(sp[0]);
                close(sp[1]);
                sigprocmask(SIG_SETMASK, &old, NULL);
                return EXIT_SANDBOX;
        }
        if (pid == 0) {
                close(sp[0]);
                sigprocmask(SIG_SETMASK, &old, NULL);
                sandbox_init(plan, sp[1], &cg_entry);
        }
        close(sp[1]);
        trace_mark("cloned");
        /* a v2 group the clone could not put init in: moved the slow way
         * (the v1 groups init enters itself all the same) */
        bool attach_v2 = cg_entry.v2_fd >= 0 && !born_in_group;
        cgroup_entry_close(&cg_entry);

        st->sock = sp[0];
        st->pidfd = pidfd;
        st->init_pid = pid;
        st->sigmask = mask;
        st->uid = child_uid;
        st->gid = child_gid;
        st->privileged = privileged;

        r = write_id_maps(pid, child_uid, child_gid, !privileged, plan->oci);
        trace_mark("id maps written");
        if (r < 0)
                fprintf(stderr, "cordon: cannot write the sandbox's uid/gid maps: %s\n", strerror(-r));
        else if (plan->oci && plan->oci->has_oom_score_adj &&
                 (r = set_oom_score_adj(pid, plan->oci->oom_score_adj)) < 0)
                fprintf(stderr, "cordon: process.oomScoreAdj %d: %s%s\n", plan->oci->oom_score_adj, strerror(-r),
                        r == -EACCES ? " (lowering it needs CAP_SYS_RESOURCE, which the runtime lacks here)" : "");
        else if (attach_v2 && (r = cgroup_attach(st->cg, pid)) < 0)
                fprintf(stderr, "cordon: cannot move the sandbox into its cgroup: %s\n", strerror(-r));
        else if (plan->view.template_path && privileged && (r = template_lower(plan, pid)) < 0)
                fprintf(stderr,
                        "cordon: cannot make an idmapped mount of the template %s: %s (its filesystem may not "
                        "support idmapped mounts); without one the sandbox could not write over the template's "
                        "root-owned files, so cordon refuses to start\n",
                        plan->view.template_path, strerror(-r));
        if (r < 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
                close(st->sock);
                close(pidfd);
                sigprocmask(SIG_SETMASK, &old, NULL);
                return EXIT_SANDBOX;
        }
        trace_mark("cgroup attached");
        r = sentry_main_loop(st);
        sigprocmask(SIG_SETMASK, &old, NULL);
        return r;
}

/* The egress gate: the policy's rules (rule i answers as pool address i),
 * its test-only overrides, the audit file; then the DNS stub inside the
 * sandbox's network namespace. */
static int start_gate(struct sandbox_state *st, int netnsfd)
{
        const struct policy *p = st->policy;
        _cleanup_free_ struct net_rule *rules = xcalloc(p->n_net_rules, sizeof(*rules));
        for (size_t i = 0; i < p->n_net_rules; i++)
                rules[i] = (struct net_rule){p->net_rules[i].host, p->net_rules[i].port,
                                             p->net_rules[i].action == ACTION_ASK};
        _cleanup_free_ struct net_cidr *allow = xcalloc(p->net_testing.n_allow_private, sizeof(*allow));
        for (size_t i = 0; i < p->net_testing.n_allow_private; i++) {
                allow[i].family = p->net_testing.allow_private[i].family;
                allow[i].prefix = p->net_testing.allow_private[i].prefix;
                memcpy(allow[i].addr, p->net_testing.allow_private[i].addr, 16);
        }
        struct net_gate_config cfg = {
                .sandbox_id = st->id,
                .rules = rules,
                .n_rules = p->n_net_rules,
                .test_hosts_file = p->net_testing.hosts_file,
                .test_allow = allow,
                .n_test_allow = p->net_testing.n_allow_private,
                .audit_fd = st->audit_fd,
                .verbose = st->verbose,
        };
        int r = net_gate_new(&cfg, &st->gate);
        if (r < 0) {
                fprintf(stderr, "cordon: cannot start the egress gate: %s\n", strerror(-r));
                return r;
        }
        r = net_gate_start_stub(st->gate, netnsfd);
        if (r < 0) {
                fprintf(stderr, "cordon: cannot start the DNS stub in the sandbox: %s\n", strerror(-r));
                net_gate_free(TAKE_PTR(st->gate));
                return r;
        }
        if (p->has_net_testing)
                fprintf(stderr, "cordon: warning: the policy's networkPolicy.testing overrides are in force "
                                "(test use only; every use is audited)\n");
        return 0;
}

/* The engine's per-syscall counts, kept for --stats before it is freed. */
static void capture_trapped_counts(struct sandbox_state *st)
{
        size_t n = st->plan->n_table;
        const struct syscall_entry *t = st->plan->table;
        st->n_trapped = 0;
        for (size_t i = 0; i < n && st->n_trapped < ELEMENTSOF(st->trapped); i++) {
                if (t[i].action != SC_EMULATE)
                        continue;
                int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, t[i].name);
                if (nr == __NR_SCMP_ERROR)
                        nr = t[i].nr;
                struct notify_call_stats cs;
                notify_engine_call_stats(st->engine, nr, &cs);
                st->trapped[st->n_trapped++] = (struct trapped_count){
                        .name = t[i].name, .count = cs.count, .total_ns = cs.total_ns, .max_ns = cs.max_ns};
        }
        notify_umask_get_stats(st->engine, &st->umask_cache);
}

void run_wind_down(struct sandbox_state *st)
{
        if (st->wound_down)
                return;
        st->wound_down = true;
        capture_trapped_counts(st);
        /* every hold decided (denied) before the engine that holds them
         * goes; the approver itself stays until the engine has stopped, as
         * a worker still in a handler may ask it (and is refused: closed) */
        approvals_close(st->approvals, "terminate");
        /* What is left of the sandbox until init's exit has killed it (a
         * daemon the command left) finds nobody to serve its trapped calls
         * or its DNS queries: they wait, and end with it. The stub's thread
         * ends beside the engine's (joined when the gate is freed). */
        net_gate_wind_down(st->gate);
        notify_engine_stop(st->engine);
        trace_mark("engine stopped");
        /* no handler is left to ask the proc agent: its exit can run now
         * (reaped in fs_agent_stop) */
        fs_agent_kill(&st->fsctx);
        /* `cordon run`'s state directory goes now too (a long-lived
         * sandbox's still takes its last events). Its claim stays held
         * until the groups are gone: gc takes a group for garbage only
         * when neither is held. */
        if (!st->serve && st->state_lock >= 0) {
                (void)state_remove_dir(st->id);
                close(TAKE_FD(st->state_lock));
                trace_mark("state directory removed");
        }
}

void sandbox_kill_all(struct sandbox_state *st)
{
        if (st->cg)
                (void)cgroup_kill_all(st->cg);
        kill(st->init_pid, SIGKILL);
}

/* The approval table and the tracer's channel, once no handler runs. */
static void end_exec_checks(struct sandbox_state *st)
{
        fs_exec_table_free(TAKE_PTR(st->fsctx.exec));
        if (st->fsctx.exec_channel >= 0)
                close(TAKE_FD(st->fsctx.exec_channel));
}

static void kill_and_reap(struct sandbox_state *st)
{
        net_gate_free(TAKE_PTR(st->gate)); /* a set-up that failed after the gate started */
        tty_end(st);                       /* a failure after the start had made the terminal raw */
        sandbox_kill_all(st);
        fs_agent_stop(&st->fsctx);
        while (waitpid(st->init_pid, NULL, 0) < 0 && errno == EINTR)
                ;
        exectrace_stop(st->exec_tracer);
        st->exec_tracer = 0;
        end_exec_checks(st);
        free(TAKE_PTR(st->fsctx.mount_ids)); /* a set-up that failed after init sent them */
}

/* Whether init already failed its set-up: an init that gave up (a
 * child_fail message, sent before it exits) leaves the sentry's next step
 * failing too (its mount table is gone); its message is the cause to show.
 * Prints it. */
static bool init_failed_first(struct sandbox_state *st)
{
        /* only once init is gone: a live init's next message belongs to the
         * set-up that goes on */
        struct pollfd gone = {.fd = st->pidfd, .events = POLLIN};
        if (poll(&gone, 1, 0) <= 0)
                return false;
        /* its error follows whatever it sent before (its fds, the Landlock
         * report): passed over, their fds closed */
        for (;;) {
                struct pollfd p = {.fd = st->sock, .events = POLLIN};
                if (poll(&p, 1, 0) <= 0)
                        return false;
                struct msg m;
                int fds[4];
                ssize_t n = recv_fds(st->sock, &m, sizeof(m), fds, ELEMENTSOF(fds));
                for (size_t i = 0; n >= 0 && i < ELEMENTSOF(fds); i++)
                        if (fds[i] >= 0)
                                close(fds[i]);
                if (n <= 0)
                        return false;
                if (n == (ssize_t)sizeof(m) && m.type == MSG_ERROR) {
                        m.text[sizeof(m.text) - 1] = '\0';
                        fprintf(stderr, "cordon: %s\n", m.text);
                        return true;
                }
        }
}

/* The exec tracer, forked while the sentry is single-threaded: it holds
 * init, and every other thread from its trapped execve to that exec's event
 * (fs/exec.c). Its word on seizing init is taken later (check_exec_tracer). */
static int start_exec_tracer(struct sandbox_state *st)
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
        end_exec_checks(st);
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

/* The set-up message from init that comes next, into *m with its fds:
 * false when init sent its error instead or died, which is said; the
 * sandbox is then killed and reaped. */
static bool recv_setup_msg(struct sandbox_state *st, uint32_t type, struct msg *m, int *fds, size_t n_fds)
{
        int r = recv_msg(st->sock, m, fds, n_fds);
        if (r > 0 && m->type == type)
                return true;
        kill_and_reap(st);
        fprintf(stderr, "cordon: %s\n",
                r > 0 && m->type == MSG_ERROR ? m->text : "the sandbox's init died during set-up");
        return false;
}

static int sentry_main_loop(struct sandbox_state *st)
{
        struct msg m;
        int fds[7];
        int r;

        int tree = st->plan->view.template_tree_fd;
        r = send_msg(st->sock, MSG_GO, 0, NULL, tree >= 0 ? &tree : NULL, tree >= 0 ? 1 : 0);
        if (tree >= 0) {
                close(tree);
                st->plan->view.template_tree_fd = -1;
        }
        /* init has its own copy since the clone; ours would only be
         * inherited by what the sentry forks next (the proc agent) */
        if (st->plan->view.template_fd >= 0) {
                close(st->plan->view.template_fd);
                st->plan->view.template_fd = -1;
        }
        if (r < 0) {
                kill_and_reap(st);
                fprintf(stderr, "cordon: the sandbox's init went away during set-up\n");
                return EXIT_SANDBOX;
        }
        trace_mark("go sent");
        /* While init builds its view: the exec tracer (a fork, so while the
         * sentry is still single-threaded; it must have seized init before
         * init forks the command, which waits for MSG_START: its word is
         * taken before that). */
        test_stall("tracer");
        r = start_exec_tracer(st);
        trace_mark("exec tracer started");
        if (r < 0) {
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }
        /* and the proc agent, still single-threaded: it waits for the
         * namespaces and the view's root, sent once init has them */
        r = fs_agent_fork(&st->fsctx, st->privileged);
        if (r < 0) {
                fprintf(stderr, "cordon: cannot start the proc agent: %s\n", strerror(-r));
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }
        trace_mark("proc agent forked");
        if (!recv_setup_msg(st, MSG_NS, &m, fds, 4))
                return EXIT_SANDBOX;
        _cleanup_close_ int usernsfd = fds[0];
        _cleanup_close_ int netnsfd = fds[1];
        _cleanup_close_ int ipcnsfd = fds[2];
        _cleanup_close_ int utsnsfd = fds[3];
        if (usernsfd < 0 || netnsfd < 0 || ipcnsfd < 0 || utsnsfd < 0) {
                kill_and_reap(st);
                fprintf(stderr, "cordon: no namespaces from the sandbox\n");
                return EXIT_SANDBOX;
        }
        /* The gate's DNS stub needs only the network namespace (its thread
         * brings the loopback up): started, its threads after the last
         * fork, while init builds the view. */
        r = start_gate(st, netnsfd);
        trace_mark("gate started");
        if (r < 0) {
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }
        /* The sentry's own filter, while init builds the view: the sentry
         * makes no process and joins no namespace from here on (the DNS
         * stub has joined the sandbox's and listens there). Nothing of the
         * sandbox's has run yet; the engine that will serve it starts
         * below, confined from its first thread, and no input of the
         * sandbox's ever reaches an unconfined sentry. */
        const char *step = NULL;
        r = net_gate_stub_ready(st->gate, &step);
        if (r < 0) {
                fprintf(stderr, "cordon: cannot start the DNS stub in the sandbox (%s): %s\n", step, strerror(-r));
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }
        const char *bad = NULL;
        r = notify_engine_prepare(); /* its seccomp() is refused once confined */
        if (r < 0) {
                fprintf(stderr, "cordon: seccomp(SECCOMP_GET_NOTIF_SIZES): %s\n", strerror(-r));
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }
        r = sentry_confine(&bad); /* the build-time filter's copy (sentry/prebuilt.h), loaded */
        trace_mark("sentry confined");
        if (r < 0) {
                fprintf(stderr, "cordon: cannot confine the sentry with its own seccomp filter (%s): %s\n",
                        bad ? bad : "?", strerror(-r));
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }

        if (!recv_setup_msg(st, MSG_FDS, &m, fds, 3))
                return EXIT_SANDBOX;
        st->fsctx.root_fd = fds[0];
        st->layer_fd = fds[1];
        st->pty_master = fds[2];
        if (st->fsctx.root_fd < 0 || st->layer_fd < 0) {
                kill_and_reap(st);
                fprintf(stderr, "cordon: no root or writable layer from the sandbox\n");
                return EXIT_SANDBOX;
        }
        /* the proc agent joins the sandbox's user, net, ipc and uts
         * namespaces (by the fds init sent) while init finishes */
        r = fs_agent_begin(&st->fsctx, (const int[4]){usernsfd, netnsfd, ipcnsfd, utsnsfd});
        if (r < 0) {
                fprintf(stderr, "cordon: cannot start the proc agent in the sandbox's user namespace: %s\n",
                        strerror(-r));
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }
        trace_mark("proc agent started");
        st->fsctx.mount_ids = read_mount_ids(st->init_pid, &st->fsctx.n_mount_ids);
        if (!st->fsctx.mount_ids) {
                /* an init that failed just after sending its fds is gone
                 * (a zombie has no mount table): its message says why */
                int err = errno;
                struct pollfd gone = {.fd = st->pidfd, .events = POLLIN};
                (void)poll(&gone, 1, 1000); /* its exit may be under way */
                if (!init_failed_first(st))
                        fprintf(stderr, "cordon: cannot read the view's mount table (/proc/%d/mountinfo): %s\n",
                                (int)st->init_pid, strerror(err));
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }

        st->fsctx.fsuid = st->uid;
        st->fsctx.fsgid = st->gid;
        st->fsctx.keep_groups = !st->privileged;
        st->fsctx.rules = st->plan->rules;
        st->fsctx.n_rules = st->plan->view.n_rules;
        for (size_t i = 0; i < st->fsctx.n_rules; i++) {
                const struct fs_rule *fr = &st->plan->rules[i];
                st->fsctx.ask_write = st->fsctx.ask_write || (fr->ask && fr->access == FS_READ_WRITE);
                st->fsctx.ask_exec = st->fsctx.ask_exec || (fr->ask && fr->exec == 1);
        }
        struct stat pst;
        if (fstatat(st->fsctx.root_fd, "proc", &pst, 0) < 0) {
                fprintf(stderr, "cordon: the view has no /proc: %m\n");
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }
        st->fsctx.proc_dev = pst.st_dev;
        /* the writable layer, for its usage at the end (the fd keeps it
         * readable after the mount namespace is gone) */
        st->writable_fd = openat(st->fsctx.root_fd, "tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);

        /* the Landlock report comes first, then the ready */
        if (!recv_setup_msg(st, MSG_LANDLOCK, &m, NULL, 0))
                return EXIT_SANDBOX;
        st->landlock_abi = m.value;
        snprintf(st->landlock_why, sizeof(st->landlock_why), "%.300s", m.text);
        if (!recv_setup_msg(st, MSG_READY, &m, NULL, 0))
                return EXIT_SANDBOX;
        /* init's listener, taken across (init may make no trapped call, such
         * as the sendmsg that would pass it, before we serve) */
        trace_mark("ready received");
        int listener = (int)syscall(SYS_pidfd_getfd, st->pidfd, (int)m.aux, 0);
        if (listener < 0) {
                fprintf(stderr, "cordon: pidfd_getfd of the sandbox's seccomp listener: %m\n");
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }
        /* A kernel without ADDFD (before 5.9) cannot run a sandbox at all
         * (see apply_forced_fallbacks): say so now, before the command runs,
         * rather than failing at its first open. */
        if (!notify_listener_has_addfd(listener)) {
                close(listener);
                kill_and_reap(st);
                fprintf(stderr, "cordon: the kernel lacks SECCOMP_IOCTL_NOTIF_ADDFD (Linux 5.9), which cordon "
                                "requires to inject the files and sockets it opens for the sandbox; refusing to "
                                "start\n");
                return EXIT_SANDBOX;
        }
        if (!m.value && st->verbose)
                fprintf(stderr, "cordon: kernel lacks SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV; "
                                "a signal can interrupt an emulated call\n");
        trace_mark("listener taken");
        if (check_exec_tracer(st) < 0) {
                close(listener);
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }
        trace_mark("exec tracer ready");
        /* The start, now that the listener is ours (init becomes
         * non-dumpable on it): init forks the command while the rest is
         * started here. Nothing of the command's own runs before the engine
         * serves its execve: its calls until then wait in the kernel, and a
         * failure below kills it with init. */
        if (st->pty_master >= 0)
                tty_begin(st);
        if (send_msg(st->sock, MSG_START, 0, NULL, NULL, 0) < 0) {
                close(listener);
                kill_and_reap(st);
                fprintf(stderr, "cordon: the sandbox's init died during set-up\n");
                return EXIT_SANDBOX;
        }
        trace_mark("start sent");
        /* the approver: before the engine, which hands it the asks */
        if (st->approve_tty >= 0 && pipe2(st->prompt_wake, O_CLOEXEC | O_NONBLOCK) < 0) {
                fprintf(stderr, "cordon: pipe: %m\n");
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }
        struct approvals_config acfg = {
                .sandbox_id = st->id,
                .timeout_ms = st->policy->approval_timeout_ms,
                .audit_fd = st->audit_fd,
                .events = st->serve != NULL,
                .wake_events_fd = st->serve ? serve_approvals_wake_fd(st->serve) : -1,
                .tty_fd = st->approve_tty,
                .wake_fd = st->prompt_wake[1],
        };
        r = approvals_new(&acfg, &st->approvals);
        if (r < 0) {
                fprintf(stderr, "cordon: cannot start the approvals: %s\n", strerror(-r));
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }

        size_t n_table = st->plan->n_table;
        const struct syscall_entry *table = st->plan->table;
        struct notify_engine_config cfg = {
                .approver = approvals_approver(st->approvals),
                .table = table,
                .n_table = n_table,
                .userdata = &st->fsctx,
                .contexts = {[CTX_FS] = &st->fsctx, [CTX_NET] = st->gate},
                .thread_init = fs_worker_init,
                .min_workers = 1, /* more start when a call blocks (notify/engine.c) */
                .max_workers = 64,
        };
        trace_mark("approvals");
        r = notify_engine_start(&cfg, listener, &st->engine);
        trace_mark("engine started");
        if (r < 0) {
                fprintf(stderr, "cordon: cannot start the notification engine: %s\n", strerror(-r));
                approvals_free(TAKE_PTR(st->approvals));
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }
        if (st->verbose) {
                char mem[32] = "none", cpu[32] = "none", tasks[32] = "none", disk[32] = "none";
                const struct run_limits *l = &st->limits;
                if (l->memory_bytes > 0)
                        snprintf(mem, sizeof(mem), "%lld bytes", (long long)l->memory_bytes);
                if (l->cpu_millis > 0)
                        snprintf(cpu, sizeof(cpu), "%lld millis", (long long)l->cpu_millis);
                if (l->max_processes > 0)
                        snprintf(tasks, sizeof(tasks), "%lld", (long long)l->max_processes);
                if (l->disk_bytes > 0)
                        snprintf(disk, sizeof(disk), "%lld bytes", (long long)l->disk_bytes);
                _cleanup_free_ char *view =
                        st->plan->view.template_path
                                ? xasprintf("template %s (read-only lower layer%s%s) under a private overlay",
                                            st->plan->view.template_path, st->privileged ? ", idmapped" : "",
                                            st->policy->source_digest ? ", digest verified" : ", no digest pinned")
                                : xstrdup("host system dirs read-only");
                fprintf(stderr,
                        "cordon: sandbox %s, init is host pid %d; layers in force:\n"
                        "cordon:   namespaces: user, mount, pid, net, ipc, uts, cgroup\n"
                        "cordon:   identity: uid/gid 0 in the sandbox = host %u/%u; no capabilities; no_new_privs\n"
                        "cordon:   view: %s, private /tmp /var/tmp /run /root, own /proc and /dev\n"
                        "cordon:   network: own namespace, loopback only; DNS stub at " NET_STUB_ADDR
                        "; egress gate for %zu listed name(s)\n"
                        "cordon:   seccomp: filter from %zu table rows; %s and socket calls emulated by the sentry; "
                        "killable wait %s; SYNC_WAKE_UP %s\n"
                        "cordon:   exec: checked by the sentry; %s\n"
                        "cordon:   limits: memory %s, cpu %s, tasks %s, disk %s; cgroup %s\n"
                        "cordon:   approvals: %s\n",
                        st->id, st->init_pid, st->uid, st->gid, view, st->policy->n_net_rules, n_table,
                        st->plan->trap_paths ? "every path call"
                        : st->plan->trap_writes
                                ? "opens that write and every call that writes (an ask rule; reads native)"
                                : "opens that write (read-only opens and other path calls native: the view decides)",
                        m.value ? "on" : "UNAVAILABLE", notify_engine_sync_wakeup(st->engine) ? "on" : "unavailable",
                        st->exec_tracer ? "the running image verified at each exec event (ptrace, no syscall stops)"
                                        : "NOT verified after exec (--allow-unverified-exec)",
                        mem, cpu, tasks, disk, st->cg ? cgroup_backend(st->cg) : "none",
                        st->serve              ? "`cordon sandbox approve|deny`, pending ones in the state"
                        : st->approve_tty >= 0 ? "asked on the controlling terminal (--approve-interactive)"
                                               : "nobody to ask: every \"ask\" call is denied");
                if (st->floor_on)
                        fprintf(stderr,
                                "cordon:   egress floor: BPF cgroup connect4/6, sendmsg4/6 and skb egress on %s: own loopback only\n",
                                cgroup_v2_path(st->cg));
                else
                        fprintf(stderr, "cordon:   egress floor: ABSENT (%s)\n", st->floor_why);
                if (st->landlock_abi > 0)
                        fprintf(stderr,
                                "cordon:   landlock: ABI %d: read and execute across the view, write only in its "
                                "writable places\n",
                                st->landlock_abi);
                else
                        fprintf(stderr, "cordon:   landlock: ABSENT (%s)\n", st->landlock_why);
        }

        /* Set-up is over: from here on the sentry serves, relays and cleans
         * up, confined to that since before the start. A long-lived
         * sandbox's snapshots load libarchive and libcrypto when the first
         * one is asked for, on the main thread (control.c): never loaded,
         * they cost an idle sentry nothing (about 3.5 MiB of resident pages
         * once mapped). */
        if (st->verbose)
                fprintf(stderr, "cordon:   sentry: confined by its own seccomp allow-list (%zu rows; exec kills it)\n",
                        sentry_confine_rows());

        /* a long-lived sandbox idles for hours: give back what set-up
         * allocated and freed (its RSS is the cost of each one more) */
        if (st->serve)
                malloc_trim(0);
        trace_mark("serving");
        int code = st->serve ? serve_loop(st) : supervise(st);
        trace_mark("supervise returned");
        /* init is gone: the proc agent's exit can run beside the rest of
         * the teardown (reaped in fs_agent_stop below) */
        fs_agent_kill(&st->fsctx);
        tty_end(st);
        /* so is the exec tracer's (reaped at the end) */
        exectrace_kill(st->exec_tracer);
        trace_mark("exec tracer stopped");
        run_wind_down(st); /* done already when the command's status came */
        approvals_free(TAKE_PTR(st->approvals));
        for (int i = 0; i < 2; i++)
                if (st->prompt_wake[i] >= 0)
                        close(TAKE_FD(st->prompt_wake[i]));
        net_gate_free(st->gate);
        st->gate = NULL;
        trace_mark("gate freed");
        fs_agent_stop(&st->fsctx);
        trace_mark("proc agent stopped");
        free(st->fsctx.mount_ids);
        end_exec_checks(st);
        close(st->fsctx.root_fd);
        close(st->sock);
        close(st->pidfd);
        exectrace_reap(st->exec_tracer);
        st->exec_tracer = 0;
        return code;
}
