/* sentry/ private: what the core room's files share (sentry.h is its
 * public face). */
#pragma once

#include <errno.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "common/util.h"
#include "sentry/sentry.h"

/* The engine's handler contexts: which userdata a table row's handler gets. */
enum { CTX_FS = 0, CTX_NET = 1 };

/* RLIMIT_CORE of every process of a sandbox, soft and hard, in bytes: one
 * byte, below a core file's first page (the kernel writes none) and the
 * value at which it skips a core_pattern pipe, a program the host runs as
 * root (at zero it pipes the dump all the same). Zero where cordon itself
 * was given a hard limit of zero, which it cannot raise: then a pipe
 * pattern refuses the start (sentry_core_dumps_contained). init sets it;
 * the filter keeps it (syscalls.c); init inherits the sentry's limits, so
 * both compute the same value. */
static inline uint64_t sentry_core_limit(void)
{
        struct rlimit rl;
        return getrlimit(RLIMIT_CORE, &rl) == 0 && rl.rlim_max == 0 ? 0 : 1;
}

/* Prints why it fails. PLAN_POLICY_ERROR: what the policy asks for cannot be
 * run as written (a template that is missing or fails its digest): cordon
 * exits 2, as for a bad policy. Other -errno: the sandbox cannot be set up. */
#define PLAN_POLICY_ERROR (-EBADMSG)
int sandbox_plan_build(const struct run_options *o, struct sandbox_plan *ret);
void sandbox_plan_done(struct sandbox_plan *p);

/* The exec tracer (exectrace.c): verifies after each exec in the sandbox
 * that the process runs the image fs_handle_exec approved. */
struct exectrace_config {
        pid_t init_pid;
        struct fs_exec_table *table; /* MAP_SHARED with the handlers */
        int audit_fd;                /* -1: none */
        bool verbose;
        const char *sandbox_id;
};
/* Forks the tracer (call while single-threaded): 0 with *ret_pid and its
 * channel, whose first message says whether it has seized init (it sets
 * itself up beside the caller); or -errno. */
int exectrace_start(const struct exectrace_config *c, pid_t *ret_pid, int *ret_channel);
/* Takes that first message (before init forks the command, and before any
 * request on the channel): 0 once the tracer has seized init, else -errno
 * from PTRACE_SEIZE (the tracer is then killed and reaped). */
int exectrace_ready(pid_t pid, int channel);
/* Ends and reaps the tracer; call after init has been waited for. */
void exectrace_stop(pid_t pid);
/* exectrace_stop in two steps: the tracer's exit then runs beside what the
 * caller does in between (it must reap it before it returns) */
void exectrace_kill(pid_t pid);
/* The sentry's side of the tracer (exectrace.c): exec_checks_start forks
 * it and maps the approval table (while single-threaded; says why on
 * failure); exec_checks_settle takes its word, or lets it go where init
 * runs execs natively, once MSG_READY is in; exec_checks_end drops the
 * table and the channel once no handler runs. */
int exec_checks_start(struct sandbox_state *st);
int exec_checks_settle(struct sandbox_state *st);
void exec_checks_end(struct sandbox_state *st);
/* Has the tracer let go of init and exit, when execs run natively and there
 * is nothing to verify: 0, or -errno (then init may have been killed with
 * the tracer, PTRACE_O_EXITKILL: the sandbox fails closed). */
int exectrace_release(pid_t pid, int channel);
#define EXECTRACE_RELEASE ((pid_t)-1)
void exectrace_reap(pid_t pid);
/* Writes the --stats JSON; 0 or -errno. */
int write_stats(struct sandbox_state *st, const char *path, int exit_code);
/* Runs until init exits; returns cordon's exit code. Calls run_wind_down
 * as soon as the command's status is in. */
int supervise(struct sandbox_state *st);
/* The first of the teardown, once the command has ended (init's own exit,
 * the namespaces' teardown, runs beside it): the trapped-call counts taken
 * (--stats), the approvals closed, the engine stopped, and (`cordon run`)
 * the state directory's removal begun on a thread, its claim kept until
 * the groups are gone. Once only. */
void run_wind_down(struct sandbox_state *st);
/* Once init is reaped and the engine stopped: the sentry's hold on the
 * view let go (init's mount namespace, the view's root and, without
 * --stats or a front, the writable layer's fds; the view's teardown runs
 * there) and, beside it, the proc agent, the exec tracer and the gate
 * stopped and (groups_early) run_groups_end's part done. The view's
 * release runs on this thread where the state directory's thread does the
 * rest, else on a thread of its own that run_view_ended joins. */
void run_teardown(struct sandbox_state *st);
/* Once init is reaped and the counters read: the groups removed, the
 * state directory's removal waited for, and the claim dropped (kept where
 * a group could not be removed). */
void run_groups_end(struct sandbox_state *st);
/* The last of the teardown's threads joined. */
void run_view_ended(struct sandbox_state *st);
void tty_begin(struct sandbox_state *st);
void tty_end(struct sandbox_state *st);

/* Installs the sentry's own seccomp allow-list on every thread (confine.c).
 * Call once set-up is done: afterwards no exec, no new process, no mount,
 * no namespace. 0, or -errno with *ret_bad naming the row that failed. */
int sentry_confine(const char **ret_bad);
/* The same in two steps: the compile (libseccomp's, about a millisecond),
 * which can run on a thread of its own during set-up, and the load. */
int sentry_confine_build(struct sock_fprog *ret, const char **ret_bad);
/* The same, compiled now with libseccomp (sentry_confine_build takes the
 * build-time copy where the binary has one: sentry/prebuilt.h). */
int sentry_confine_build_fresh(struct sock_fprog *ret, const char **ret_bad);
int sentry_confine_load(const struct sock_fprog *prog);

/* --- init's side of the start-up (init.c) --- */

/* The signals init relays to the command, which the sentry forwards to
 * init. */
#define N_FORWARDED_SIGNALS 9
extern const int forwarded_signals[N_FORWARDED_SIGNALS];
/* The value with which the sentry queues a forwarded signal that init is to
 * pass to the command's whole process group (one the host's terminal sent). */
#define FORWARD_TO_GROUP 0x636f7264
/* One message on the set-up channel, with fds attached. */
int msg_send(int sock, uint32_t type, int32_t value, const char *text, const int *fds, size_t n_fds);
/* Receives one message; up to max_fds fds into fds (others -1). 1, 0 on
 * EOF, or -errno. */
int msg_recv(int sock, struct msg *m, int *fds, size_t max_fds);
/* In a process init forks to run a command (initd.c): every signal back
 * to its default action and none blocked, as the command expects. */
void init_default_signals(void);
/* capset(2) of the calling thread's effective, permitted and inheritable
 * sets: 0 or -errno. Inline: init.c and initd.c both call it, and initd.c
 * must not call back into init.c (tests/house.sh). */
static inline int capset_sets(uint64_t eff, uint64_t perm, uint64_t inh)
{
        struct __user_cap_header_struct h = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
        struct __user_cap_data_struct d[2] = {{0}};
        d[0].effective = (uint32_t)eff;
        d[1].effective = (uint32_t)(eff >> 32);
        d[0].permitted = (uint32_t)perm;
        d[1].permitted = (uint32_t)(perm >> 32);
        d[0].inheritable = (uint32_t)inh;
        d[1].inheritable = (uint32_t)(inh >> 32);
        return syscall(SYS_capset, &h, d) < 0 ? negative_errno() : 0;
}
/* init's body: from the clone to the command's exec (or to serving runs). */
_noreturn_ void sandbox_init(const struct sandbox_plan *plan, int sock, struct cgroup_entry *cg_entry);
/* init's side of a sandbox that serves runs (initd.c): waits for MSG_EXEC
 * and forks each run; never returns. With oci, each run gets its seccomp
 * profile just before its exec. With pid1, init unshared a pid namespace
 * for them: the first run (the OCI container's process) goes to pid1, its
 * pid 1 (init_pid1_fork), and a signal for that run goes to it alone, as
 * runc sends it. */
struct init_pid1 {
        pid_t pid;
        int msg, ack;         /* pipes: its run to it, its word that it took it */
        int its_msg, its_ack; /* their other ends, in the table it shares until then */
};
_noreturn_ void init_serve_runs(int sock, const struct oci_sandbox *oci, const struct init_pid1 *pid1);
/* The OCI container's pid namespace (initd.c): the helper that gives the
 * view a /proc of it (returns its pid; ret_pipes[1] is its go, [0] its
 * answer: an error text, empty when done), and the container's process,
 * pid 1 there, forked once init's filter is in place. */
pid_t init_proc_helper_fork(const struct oci_sandbox *oci, int ret_pipes[2]);
pid_t init_pid1_fork(int sock, const struct oci_sandbox *oci, struct init_pid1 *ret);
/* The sentry, before init's clone: init's test hooks (CORDON_TEST_STALL). */
void init_read_test_hooks(void);

/* --- the user namespace from the host's side (userns.c) --- */

/* The sandbox's id map and its command's identity inside (userns.c):
 * -ERANGE when the identity asked for is not in the range. */
int sandbox_ids(const struct sandbox_plan *plan, const struct id_range *range, uid_t host_uid, gid_t host_gid,
                struct fs_ids *ret, uint32_t *ret_uid, uint32_t *ret_gid);
int write_id_maps(pid_t pid, const struct fs_ids *ids, bool deny_setgroups, const struct subid_range *sub);
/* Unprivileged: the sentry's own user namespace, over the caller's
 * /etc/subuid and /etc/subgid ranges when it has them (subid.c), with the
 * caller at uid_pos:gid_pos; else the caller's one id (s->why says why). */
int enter_own_userns(uid_t uid, gid_t gid, uint32_t uid_pos, uint32_t gid_pos, struct subid_range *s);
/* Then the sandbox's map as the sentry's namespace sees it (userns.c):
 * -ERANGE for a group of process.user outside the range (*ret_bad). */
int subid_ids(struct sandbox_plan *plan, const struct subid_range *s, uint32_t *ret_bad);

/* --- the caller's subordinate ids (subid.c) --- */

/* The newuidmap and newgidmap command lines the helper runs. */
struct subid_argv {
        char *argv[12];
        char pid[16];
        char num[9][12];
};
struct subid_helper {
        pid_t pid;   /* forked before the unshare, in the host's namespace */
        int go, err; /* the sentry's end of "unshared" and of the tools' stderr */
        struct subid_argv uidmap, gidmap;
};
enum { SUBID_UID = 1, SUBID_GID = 2 };
/* Finds the caller's ranges and forks the helper (h->pid), else says why
 * not (s->why). */
void subid_prepare(uid_t uid, gid_t gid, uint32_t uid_pos, uint32_t gid_pos, struct subid_range *s,
                   struct subid_helper *h);
/* Lets the helper map the sentry (unshared: the sentry is in its new
 * namespace; else it is told to go) and waits for it: which maps it wrote
 * (SUBID_UID | SUBID_GID: s->used), s->why when not both. */
int subid_finish(struct subid_helper *h, bool unshared, struct subid_range *s);
int set_oom_score_adj(pid_t pid, int value);
/* clone3 into the cgroup v2 group cgroup_fd (-1: none), else clone;
 * *ret_into: the child was born in the group. */
pid_t clone_init(unsigned long flags, int cgroup_fd, int *ret_pidfd, bool *ret_into);
/* As host root: the template's lower layer idmapped through init's user
 * namespace (plan->view.template_tree_fd), or with
 * plan->view.root_write_through the writable mount of an OCI root; err
 * (1024 bytes) may say why not. */
int template_lower(struct sandbox_plan *plan, pid_t pid, char *err);

/* --- the egress gate (egress.c) --- */

/* Starts st->gate from the policy, its DNS stub in the network namespace
 * netnsfd (a joined one: the gate's upstream sockets are made there too).
 * Prints why it fails; -errno. Call before the sentry's own filter. */
int start_gate(struct sandbox_state *st, int netnsfd);
/* Hands the gate st->approvals to put "ask" grants' requests to, or (NULL)
 * takes it back, waiting for an ask in progress: before approvals_free. */
void egress_attach_approvals(struct sandbox_state *st);

/* --- namespaces an OCI container joins (join.c) --- */

/* Enters oci->join's namespaces on the calling thread (each reopened and
 * checked to be the one the front checked), clearing their CLONE_NEW*
 * from *flags; saved gets the thread's own for join_leave (-1 for those
 * not joined). 0, or -errno with why filled and nothing entered. */
int join_enter(const struct oci_sandbox *oci, unsigned long *flags, int saved[OCI_JOIN_KINDS], char *why, size_t size);
/* As host root, before the clone: for a joined pid namespace, a procfs of
 * it in plan->view.proc_tree_fd (init mounts it as its /proc). 0, or
 * -errno with why filled. */
int join_proc_tree(struct sandbox_plan *plan, char *why, size_t size);
/* OCI_JOIN_* of the namespace a linux.sysctl key belongs to. */
int join_kind_of_sysctl(const char *key);
/* After attach_floor: -EOPNOTSUPP (said) for a sandbox in a joined network
 * namespace without the kernel egress floor, which it needs. */
int join_require_floor(const struct sandbox_state *st, unsigned debug_off);
/* Back to the thread's own namespaces (saved closed). */
void join_leave(int saved[OCI_JOIN_KINDS]);

/* --- read-write binds from the host's side (binds.c) --- */

/* As host root, before init is cloned: an idmapped tree for each read-write
 * bind (plan->bind_fds, -1 for the read-only ones), its source's owner
 * mapped to the sandbox root's host ids root_uid/root_gid. Nothing for an
 * OCI run (its binds are trees already). Prints why it fails; -errno. */
int bind_trees(struct sandbox_plan *plan, uid_t root_uid, gid_t root_gid);
/* After the clone: the sentry's copies of plan->bind_fds closed (init has
 * its own). */
void bind_trees_close(struct sandbox_plan *plan);

/* --- test hooks (testhooks.c) --- */

/* CORDON_TEST_STALL=point: pauses there (tests SIGKILL the sentry). */
void test_stall(const char *point);
/* --debug-unsafe: the filter rebuilt with the switched-off emulation's rows
 * allowed natively. */
int debug_rebuild_filter(struct sandbox_plan *plan, unsigned off);
/* CORDON_TEST_FORCE_FALLBACK: 0, or the exit code to refuse the run with. */
int apply_forced_fallbacks(bool verbose);
