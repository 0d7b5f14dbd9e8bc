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

#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common/fdpass.h"
#include "common/trace.h"
#include "sentry/approvals/approvals.h"
#include "sentry/sentry-internal.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
#endif

static int sentry_main_loop(struct sandbox_state *st);
static int main_loop_in_view(struct sandbox_state *st);
static int run_sandbox(struct sandbox_state *st);

static const int stdio[3] = {0, 1, 2};

static int check_stdio(char *why, size_t size)
{
        return check_passed_fds(stdio, why, size);
}

static char *state_json(const char *id, const struct cgroup *cg, const struct run_limits *l)
{
        json_t *root = json_pack("{s:s, s:I, s:I, s:s}", "id", id, "sentryPid", (json_int_t)getpid(), "startedAt",
                                 (json_int_t)time(NULL), "cgroupBackend", cg ? cgroup_backend(cg) : "none");
        json_t *dirs = json_array();
        for (const char *const *d = cg ? cgroup_dirs(cg) : NULL; d && *d; d++)
                json_array_append_new(dirs, json_string(*d));
        json_object_set_new(root, "cgroups", dirs);
        json_t *parents = json_array();
        for (const char *const *d = cg ? cgroup_parent_dirs(cg) : NULL; d && *d; d++)
                json_array_append_new(parents, json_string(*d));
        json_object_set_new(root, "cgroupParents", parents);
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

/* The kernel egress floor on the sandbox's cgroup v2 group, attached before
 * anything of the sandbox's runs there (init, in the group since its
 * clone, is still in cordon's own set-up). Where the host cannot have it (no cgroup v2
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
        bool joined = st->plan->oci && st->plan->oci->net_prepared;
        int r = net_floor_attach_joined(fd, joined, st->floor_why, sizeof(st->floor_why));
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

/* The sandbox's groups with its limits. A built-in default this host cannot
 * apply (no memory or pids controller for the group, as unprivileged) is
 * dropped and the rest tried again: the sandbox then starts as it does
 * where no limit was asked for, and -v and the limits line say the default
 * is absent, never claim it. A limit someone asked for is never dropped. */
static int create_cgroup(const struct run_options *o, const char *id, struct run_limits *l, struct cgroup **ret,
                         char **ret_error)
{
        static const enum limit_kind defaults[] = {LIMIT_MEMORY, LIMIT_PROCESSES};
        for (;;) {
                struct cg_limits cgl = {l->memory_bytes, l->max_processes, l->cpu_millis};
                free(TAKE_PTR(*ret_error));
                int r = cgroup_create(o->cgroup_mode, id, &cgl, ret, ret_error);
                if (r >= 0)
                        return r;
                /* a limit someone asked for is refused: the start with it */
                for (size_t k = 0; k < _LIMIT_KIND_MAX; k++) {
                        char key[40];
                        snprintf(key, sizeof(key), "limits.%s", limit_key((enum limit_kind)k));
                        if (l->value[k] != POLICY_UNSET && l->src[k] != LIMIT_SRC_DEFAULT && *ret_error &&
                            strstr(*ret_error, key))
                                return r;
                }
                /* the default the refusal names ("limits.memoryBytes cannot
                 * be enforced ..."); where it names none, every one left */
                bool drop[ELEMENTSOF(defaults)] = {false}, any = false;
                for (int pass = 0; pass < 2 && !any; pass++)
                        for (size_t i = 0; i < ELEMENTSOF(defaults); i++) {
                                enum limit_kind k = defaults[i];
                                char key[40];
                                snprintf(key, sizeof(key), "limits.%s", limit_key(k));
                                drop[i] = l->value[k] != POLICY_UNSET && l->src[k] == LIMIT_SRC_DEFAULT &&
                                          (pass == 1 || (*ret_error && strstr(*ret_error, key)));
                                any |= drop[i];
                        }
                if (!any)
                        return r;
                for (size_t i = 0; i < ELEMENTSOF(defaults); i++) {
                        enum limit_kind k = defaults[i];
                        char v[48];
                        if (!drop[i])
                                continue;
                        if (o->verbose)
                                fprintf(stderr,
                                        "cordon: the built-in limit %s (%s) cannot be applied on this host (%s); the "
                                        "sandbox runs without it\n",
                                        limit_key(k), limit_format_value(k, l->value[k], v, sizeof(v)),
                                        *ret_error ? *ret_error : strerror(-r));
                        run_limits_drop_default(l, k);
                }
        }
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
        /* OCI: the engine's group for the container (kubelet's QoS tree,
         * containerd's /k8s.io/ID), where the sandbox's groups go */
        if (o->oci && o->oci->cgroups_path && cgroup_set_parent(o->oci->cgroups_path) < 0) {
                fprintf(stderr, "cordon: linux.cgroupsPath %s: not a cgroup path\n", o->oci->cgroups_path);
                return EXIT_USAGE;
        }
        /* The floor's programs load on a thread started once the sentry
         * has made its last process (sentry_main_loop); any return while it
         * runs waits for it here. */
        _cleanup_(floor_preload_end) bool floor_preloading = true;
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
        /* what nobody set gets the built-in defaults (a fork or memory bomb
         * stops at the sandbox), but not in an OCI container: runc applies
         * only what config.json says, and so does cordon */
        if (!o->oci)
                run_limits_apply_defaults(&limits);
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
        if (!o->front)
                open_passed_pipes(stdio);
        if (sentry_core_dumps_contained(why, sizeof(why)) < 0) {
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
        } else if (!o->front) {
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

        char id[17];
        sandbox_new_id(id);
        /* root: the sandbox's own range of host ids, taken with its claim */
        struct id_range range = {0};
        /* a pod's app container shares its pod's range (state_admit) */
        if (o->oci && o->oci->pod_range.count)
                range = o->oci->pod_range;
        _cleanup_close_ int lock = state_admit(id, adm.max_sandboxes, geteuid() == 0 ? &range : NULL, &err);
        if (lock < 0) {
                fprintf(stderr, "cordon: %s\n", err);
                return lock == -EDQUOT ? EXIT_QUOTA : EXIT_SANDBOX;
        }

        trace_mark("admitted");
        struct cgroup *cg = NULL;
        free(TAKE_PTR(err));
        r = create_cgroup(o, id, &limits, &cg, &err);
        /* a pod's shared pid namespace outlives init: the control group is
         * what ends the container's processes there (init.c, pid_joined) */
        bool pid_joined = o->oci && o->oci->join[OCI_JOIN_PID].path;
        if (r < 0) {
                if (any_cgroup_limit(&limits) || o->cgroup_mode != CG_AUTO || pid_joined || cgroup_oci_asks()) {
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
        if (o->front && (r = o->front->prepare(o->front->config, id, &limits, &srv)) < 0) {
                fprintf(stderr, "cordon: cannot prepare the sandbox's state directory: %s\n", strerror(-r));
                cgroup_destroy(cg);
                state_remove(id);
                return EXIT_SANDBOX;
        }

        _cleanup_close_ int audit_fd = -1;
        if (srv)
                audit_fd = fcntl(o->front->audit_fd(srv), F_DUPFD_CLOEXEC, 3);
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
                .front = o->front,
                .serve = srv,
                .approve_tty = approve_tty,
                .prompt_wake = {-1, -1},
                .state_lock = TAKE_FD(lock),
                /* --stats reads the writable layer's use after the teardown */
                .keep_layer = o->stats_path || o->front,
                .range = range,
                .fsctx = {.exec_channel = -1},
                .mntns_fd = -1,
                .view_fds = {-1, -1, -1, -1},
                .leader_efd = -1,
                .leader_view = -1,
                .keep_counts = o->stats_path != NULL,
                /* --stats and a front read the groups after the run */
                .groups_early = !o->stats_path && !o->front,
        };
        clock_gettime(CLOCK_MONOTONIC, &st.started);
        int code = run_sandbox(&st);
        trace_mark("run_sandbox returned");
        if (o->front)
                o->front->free(srv);

        if (o->stats_path)
                (void)write_stats(&st, o->stats_path, code);
        if (st.writable_fd >= 0)
                close(st.writable_fd);
        if (st.layer_fd >= 0)
                close(st.layer_fd);
        trace_mark("stats written");
        /* Here once --stats has read them (else done in run_teardown,
         * beside the view's release) */
        if (!st.groups_removed)
                run_groups_end(&st);
        run_view_ended(&st); /* the last of the teardown's threads */
        trace_mark("state removed");
        return code;
}

static int run_sandbox(struct sandbox_state *st)
{
        struct sandbox_plan *plan = st->plan;
        int r;

        uid_t host_uid = getuid(), host_gid = getgid();
        bool privileged = geteuid() == 0;
        r = sandbox_ids(plan, privileged ? &st->range : NULL, host_uid, host_gid, &plan->ids, &plan->cmd_uid,
                        &plan->cmd_gid);
        if (r < 0) {
                /* the ids asked for (sandbox_ids left cmd_uid and cmd_gid unset) */
                bool oci = !plan->user_set && plan->oci;
                fprintf(stderr, "cordon: %s %u:%u is not one of the sandbox's ids (0-%u)\n",
                        oci                 ? "process.user"
                        : plan->user_origin ? plan->user_origin
                                            : "--user",
                        oci ? plan->oci->uid : plan->user_uid, oci ? plan->oci->gid : plan->user_gid,
                        st->range.count - 1);
                return EXIT_USAGE;
        }
        if (!privileged) {
                r = enter_own_userns(host_uid, host_gid, plan->cmd_uid, plan->cmd_gid, &st->subid);
                if (r < 0) {
                        fprintf(stderr,
                                "cordon: user namespaces are not available to this user (%s); "
                                "cordon needs them to isolate without root. See `cordon check`.\n",
                                strerror(-r));
                        return EXIT_SANDBOX;
                }
                uint32_t bad = 0;
                if (subid_ids(plan, &st->subid, &bad) < 0) {
                        fprintf(stderr, "cordon: process.user's group %u is not one of the sandbox's ids (0-%u)\n", bad,
                                SUBID_COUNT - 1);
                        return EXIT_USAGE;
                }
        }
        plan->init_uid = privileged ? plan->ids.uid_inside : plan->cmd_uid;
        plan->init_gid = privileged ? plan->ids.gid_inside : plan->cmd_gid;
        /* the command's ids in the sentry's namespace: what its workers act as */
        uid_t child_uid = plan->ids.uid_host + (plan->cmd_uid - plan->ids.uid_inside);
        gid_t child_gid = plan->ids.gid_host + (plan->cmd_gid - plan->ids.gid_inside);
        st->fsctx.ids = plan->ids; /* before the proc agent's fork, which takes them */
        st->fsctx.caps = plan->caps;
        /* groups the workers do not start with: each thread's are read */
        st->fsctx.creds_vary = plan->oci && plan->oci->set_user && plan->oci->n_groups > 0;

        /* the read-write binds' idmapped trees, which init inherits */
        if (privileged && bind_trees(plan, child_uid, child_gid) < 0)
                return EXIT_SANDBOX;

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
        /* OCI: the namespaces an engine prepared, entered for the clone
         * only (init inherits them; the sentry returns to its own) */
        int saved_ns[OCI_JOIN_KINDS];
        char why[320];
        if ((r = join_proc_tree(plan, why, sizeof(why))) < 0 ||
            (r = join_enter(plan->oci, &flags, saved_ns, why, sizeof(why))) < 0) {
                fprintf(stderr, "cordon: %s\n", why);
                close(sp[0]);
                close(sp[1]);
                sigprocmask(SIG_SETMASK, &old, NULL);
                return EXIT_SANDBOX;
        }
        trace_mark("clone");
        pid_t pid = clone_init(flags, cg_entry.v2_fd, &pidfd, &born_in_group);
        int clone_errno = errno;
        if (pid != 0)
                join_leave(saved_ns);
        if (pid < 0) {
                int e = clone_errno;
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
                /* init keeps no handle on the sentry's (the host's) namespaces */
                for (size_t k = 0; k < OCI_JOIN_KINDS; k++)
                        if (saved_ns[k] >= 0)
                                close(saved_ns[k]);
                close(sp[0]);
                sigprocmask(SIG_SETMASK, &old, NULL);
                sandbox_init(plan, sp[1], &cg_entry);
        }
        close(sp[1]);
        bind_trees_close(plan); /* init has its own; the proc agent, forked later, is not to inherit them */
        if (plan->view.proc_tree_fd >= 0) {
                close(plan->view.proc_tree_fd);
                plan->view.proc_tree_fd = -1;
        }
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

        char lower_err[1024] = "";
        r = write_id_maps(pid, &plan->ids, !privileged && !st->subid.used, &st->subid);
        trace_mark("id maps written");
        if (r < 0)
                fprintf(stderr, "cordon: cannot write the sandbox's uid/gid maps: %s\n", strerror(-r));
        else if (plan->oci && plan->oci->has_oom_score_adj &&
                 (r = set_oom_score_adj(pid, plan->oci->oom_score_adj)) < 0)
                fprintf(stderr, "cordon: process.oomScoreAdj %d: %s%s\n", plan->oci->oom_score_adj, strerror(-r),
                        r == -EACCES ? " (lowering it needs CAP_SYS_RESOURCE, which the runtime lacks here)" : "");
        else if (attach_v2 && (r = cgroup_attach(st->cg, pid)) < 0)
                fprintf(stderr, "cordon: cannot move the sandbox into its cgroup: %s\n", strerror(-r));
        else if (plan->view.template_path && privileged && (r = template_lower(plan, pid, lower_err)) < 0 &&
                 plan->view.root_write_through)
                /* never a private layer instead: the engine would lose
                 * what the container writes */
                fprintf(stderr,
                        "cordon: root.path %s: cannot write the container's root through to it: %s; cordon "
                        "refuses to start it rather than keep its writes apart, where its engine would lose them\n",
                        plan->view.template_path, lower_err[0] ? lower_err : strerror(-r));
        else if (r < 0 && plan->view.template_path && privileged)
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
        r = main_loop_in_view(st);
        sigprocmask(SIG_SETMASK, &old, NULL);
        return r;
}

static void *loop_main(void *arg)
{
        struct sandbox_state *st = arg;
        int r = sentry_main_loop(st);
        /* the loop ended (or failed before the view): the first thread
         * returns, and this status is the process's */
        st->leader_r = r;
        (void)eventfd_write(st->leader_efd, 2);
        return NULL;
}

/* An OCI container's pid, for its engine, is the sentry's (--pid-file and
 * state: conmon and containerd's shim wait for it, and it ends with the
 * container's status). What an engine does in that pid's namespaces must
 * reach the container, not the host: podman cp to or from a running
 * container joins /proc/PID/ns/mnt and copies at its "/", which was the
 * host's. So while the container lives, the sentry's first thread, whose
 * namespaces /proc/PID/ns/ shows, is in the view's mount namespace and
 * only waits; the sentry's work (the main loop, whose paths are the
 * host's) runs on a thread that stays in the host's. The loop tells the
 * first thread to enter the view once it holds the view's namespace,
 * after its last fork (sentry_main_loop); the first thread is blocked in
 * read() until then, holding no lock a fork could copy. Once the loop
 * ends the first thread returns to the host's namespace and working
 * directory for what follows. It holds nothing of the view the sentry does
 * not hold anyway, and nothing of the sandbox can reach it (another pid
 * namespace). */
static int main_loop_in_view(struct sandbox_state *st)
{
        if (!st->plan->oci)
                return sentry_main_loop(st);
        _cleanup_close_ int host = open("/proc/thread-self/ns/mnt", O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        st->leader_efd = eventfd(0, EFD_CLOEXEC);
        pthread_t t;
        if (host < 0 || cwd < 0 || st->leader_efd < 0 || pthread_create(&t, NULL, loop_main, st) != 0) {
                /* fails closed: the engine's pid would show the host's
                 * mount namespace; the loop ends the sandbox and tears down */
                fprintf(stderr, "cordon: cannot keep the container's pid in its mount namespace (%m): ending it\n");
                if (st->leader_efd >= 0)
                        close(TAKE_FD(st->leader_efd));
                sandbox_kill_all(st);
                return sentry_main_loop(st);
        }
        bool moved = false;
        eventfd_t v = 0;
        while (eventfd_read(st->leader_efd, &v) < 0 && errno == EINTR)
                ;
        if (v == 1 && st->leader_view >= 0) {
                /* after the loop's thread was made: it keeps the host's
                 * namespace and fs context */
                moved = unshare(CLONE_FS) == 0 && setns(st->leader_view, CLONE_NEWNS) == 0;
                close(TAKE_FD(st->leader_view));
        }
        if (!moved && v == 1) {
                /* fails closed, as above; the loop sees init end */
                fprintf(stderr, "cordon: cannot enter the container's mount namespace (%m): ending it\n");
                sandbox_kill_all(st);
        }
        pthread_join(t, NULL);
        if (moved && (setns(host, CLONE_NEWNS) < 0 || fchdir(cwd) < 0)) {
                /* what follows the loop needs the host's paths */
                fprintf(stderr, "cordon: cannot return to the host's mount namespace: %m\n");
                abort();
        }
        if (st->leader_view >= 0)
                close(TAKE_FD(st->leader_view));
        close(TAKE_FD(st->leader_efd));
        return st->leader_r;
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
        exec_checks_end(st);
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

/* The set-up message from init that comes next, into *m with its fds:
 * false when init sent its error instead or died, which is said; the
 * sandbox is then killed and reaped. */
static bool recv_setup_msg(struct sandbox_state *st, uint32_t type, struct msg *m, int *fds, size_t n_fds)
{
        int r = msg_recv(st->sock, m, fds, n_fds);
        if (r > 0 && m->type == type)
                return true;
        kill_and_reap(st);
        fprintf(stderr, "cordon: %s\n",
                r > 0 && m->type == MSG_ERROR ? m->text : "the sandbox's init died during set-up");
        return false;
}

/* The view's mount ids and its /proc's device, which the workers go by:
 * read once the view is final. 0, or -1 with the sandbox killed and why
 * said. */
/* The mount ids init sent with the view's fds ("M id id ...", see
 * sandbox_init), sorted; NULL where it sent none (then read here) */
static uint64_t *sent_mount_ids(const char *text, size_t *ret_n)
{
        if (text[0] != 'M')
                return NULL;
        size_t n = 0, cap = 64;
        _cleanup_free_ uint64_t *ids = xmalloc(cap * sizeof(uint64_t));
        for (const char *p = text + 1; *p;) {
                char *end;
                errno = 0;
                unsigned long long v = strtoull(p, &end, 10);
                if (end == p || errno || (*end != ' ' && *end != '\0'))
                        return NULL;
                if (n == cap) {
                        cap *= 2;
                        ids = xrealloc(ids, cap * sizeof(uint64_t));
                }
                ids[n++] = v;
                p = end;
        }
        if (n == 0)
                return NULL;
        qsort(ids, n, sizeof(uint64_t), fs_cmp_u64);
        *ret_n = n;
        return TAKE_PTR(ids);
}

static int read_view_mounts(struct sandbox_state *st, const char *sent)
{
        st->fsctx.mount_ids = sent ? sent_mount_ids(sent, &st->fsctx.n_mount_ids) : NULL;
        if (!st->fsctx.mount_ids)
                st->fsctx.mount_ids = fs_read_mount_ids(st->init_pid, &st->fsctx.n_mount_ids);
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
                return -1;
        }
        struct stat pst;
        if (fstatat(st->fsctx.root_fd, "proc", &pst, 0) < 0) {
                fprintf(stderr, "cordon: the view has no /proc: %m\n");
                kill_and_reap(st);
                return -1;
        }
        st->fsctx.proc_dev = pst.st_dev;
        if (fstatat(st->fsctx.root_fd, "dev", &pst, AT_SYMLINK_NOFOLLOW) == 0)
                st->fsctx.dev_dev = pst.st_dev;
        if (fstat(st->fsctx.root_fd, &pst) == 0) {
                st->fsctx.root_dev = pst.st_dev;
                st->fsctx.root_ino = pst.st_ino;
        }
        st->fsctx.root_writable = st->plan->view.template_path != NULL;
        return 0;
}

static int sentry_main_loop(struct sandbox_state *st)
{
        struct msg m;
        int fds[7];
        int r;

        int tree = st->plan->view.template_tree_fd;
        r = msg_send(st->sock, MSG_GO, 0, NULL, tree >= 0 ? &tree : NULL, tree >= 0 ? 1 : 0);
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
        /* While init builds its view: the proc agent (a fork, so while the
         * sentry is still single-threaded): it waits for the namespaces and
         * the view's root, sent once init has them */
        r = fs_agent_fork(&st->fsctx, st->privileged || st->subid.used);
        if (r < 0) {
                fprintf(stderr, "cordon: cannot start the proc agent: %s\n", strerror(-r));
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }
        trace_mark("proc agent forked");
        /* What crashed sentries left behind, collected while init builds
         * its view rather than before its clone: never a live sandbox's (gc
         * takes only what no held lock or claim covers), and admission
         * needs no gc before it (it counts only held claims, and takes only
         * id ranges no held claim covers). */
        (void)state_gc(true);
        trace_mark("state gc");
        if (!recv_setup_msg(st, MSG_NS, &m, fds, 4))
                return EXIT_SANDBOX;
        /* The exec tracer (a fork too, still single-threaded: the gate's
         * threads start below), unless init will let execs run natively,
         * which it does exactly when the plan allows it, Landlock holds (the
         * same kernel answers both of us) and it has its own binfmt_misc,
         * which it has just said. It must have seized init before init
         * forks the command, which waits for MSG_START: its word is taken
         * before that. */
        st->exec_native_expected = st->plan->filter_native_exec.len > 0 && m.value == 1 &&
                                   !(st->plan->debug_disable & DEBUG_OFF_LANDLOCK) && fs_landlock_abi() >= 2;
        if (!st->exec_native_expected) {
                test_stall("tracer");
                r = exec_checks_start(st);
                trace_mark("exec tracer started");
                if (r < 0) {
                        for (size_t i = 0; i < 4; i++)
                                if (fds[i] >= 0)
                                        close(fds[i]);
                        kill_and_reap(st);
                        return EXIT_SANDBOX;
                }
        }
        _cleanup_close_ int usernsfd = fds[0];
        _cleanup_close_ int netnsfd = fds[1];
        _cleanup_close_ int ipcnsfd = fds[2];
        _cleanup_close_ int utsnsfd = fds[3];
        if (usernsfd < 0 || netnsfd < 0 || ipcnsfd < 0 || utsnsfd < 0) {
                kill_and_reap(st);
                fprintf(stderr, "cordon: no namespaces from the sandbox\n");
                return EXIT_SANDBOX;
        }
        /* The kernel egress floor's programs load on a thread while init
         * builds the view: started after the sentry's last process (the
         * clone of init runs no fork handlers, so no other thread may hold
         * a lock of libc's across it), taken and attached before the
         * sentry confines itself (bpf() is refused then) and before the
         * start. Init is in the group already, but nothing of the
         * sandbox's runs before the start; the hooks act on every socket
         * of the group at the call, made before the attach or after. */
        /* The sentry's own hold on init's mount namespace (the view), taken
         * after its last fork (the proc agent and the tracer inherit no
         * copy, whose exit would then be the view's end): let go once init
         * is reaped, so that init's exit, which the command's status waits
         * for, is not the view's teardown. Only the sentry holds it, as it
         * holds the view's root already; nothing of the sandbox's can
         * reach it. Without it (an unexpected refusal) init's exit tears
         * the view down as before. */
        char nspath[64];
        snprintf(nspath, sizeof(nspath), "/proc/%d/ns/mnt", (int)st->init_pid);
        st->mntns_fd = open(nspath, O_RDONLY | O_CLOEXEC);
        /* an OCI container's first thread, waiting to enter the view's
         * namespace (main_loop_in_view): now, after the last fork */
        if (st->leader_efd >= 0) {
                /* the first thread moves on 1 whatever happens; without a
                 * copy of the namespace it ends the sandbox (fails closed) */
                if (st->mntns_fd >= 0)
                        st->leader_view = fcntl(st->mntns_fd, F_DUPFD_CLOEXEC, 3);
                (void)eventfd_write(st->leader_efd, 1);
        }
        if (!(st->plan->debug_disable & DEBUG_OFF_EGRESS_FLOOR) && st->cg)
                net_floor_preload(st->plan->oci && st->plan->oci->net_prepared);
        /* The gate's DNS stub needs only the network namespace (its thread
         * brings the loopback up): started, its threads after the last
         * fork, while init builds the view. */
        r = start_gate(st, netnsfd);
        if (r >= 0 && st->serve && st->front->netns) /* it says why it failed */
                r = st->front->netns(st->serve, netnsfd);
        trace_mark("gate started");
        if (r < 0) {
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }
        const char *step = NULL;
        r = net_gate_stub_ready(st->gate, &step);
        if (r < 0) {
                fprintf(stderr, "cordon: cannot start the DNS stub in the sandbox (%s): %s\n", step, strerror(-r));
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }
        r = notify_engine_prepare(); /* its seccomp() is refused once confined */
        if (r < 0) {
                fprintf(stderr, "cordon: seccomp(SECCOMP_GET_NOTIF_SIZES): %s\n", strerror(-r));
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }

        /* The floor, before anything of the sandbox's runs (see above),
         * and the preload thread over, whether it took the programs or
         * not (no cgroup v2 group to attach them to): here, where the
         * sentry would otherwise wait for init's view, not between init's
         * ready and the start, where the attach and the confinement below
         * (0.25 and 0.1 ms, CORDON_TRACE_STARTUP medians) were the start's
         * to wait for. */
        r = attach_floor(st, st->plan->debug_disable);
        if (r == 0)
                r = join_require_floor(st, st->plan->debug_disable);
        net_floor_preload_end();
        trace_mark("floor attached");
        if (r < 0) {
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }
        /* The sentry's own filter: the sentry makes no process and joins
         * no namespace from here on (the DNS stub has joined the sandbox's
         * and listens there). Nothing of the sandbox's has run yet (init's
         * set-up is cordon's own code, and the command waits for the
         * start); the engine that will serve it starts below, confined
         * from its first thread, and no input of the sandbox's ever
         * reaches an unconfined sentry. */
        const char *bad = NULL;
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
        if (st->fsctx.root_fd < 0 || st->layer_fd < 0 ||
            fs_private_layer_init(&st->fsctx, st->layer_fd, st->plan->view.root_write_through) < 0) {
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
        /* an OCI container's own pid namespace (init.c, own_pidns): its
         * /proc is made once its process exists, after the filter; the
         * view's mounts and /proc are read once init is ready */
        bool proc_later = m.value == 1;
        if (!proc_later && read_view_mounts(st, m.text) < 0)
                return EXIT_SANDBOX;
        trace_mark("view mounts read");

        st->fsctx.fsuid = st->uid;
        st->fsctx.fsgid = st->gid;
        st->fsctx.keep_groups = !st->privileged && !st->subid.used;
        st->fsctx.rules = st->plan->rules;
        st->fsctx.n_rules = st->plan->view.n_rules;
        for (size_t i = 0; i < st->fsctx.n_rules; i++) {
                const struct fs_rule *fr = &st->plan->rules[i];
                st->fsctx.ask_write = st->fsctx.ask_write || (fr->ask && fr->access == FS_READ_WRITE);
                st->fsctx.ask_exec = st->fsctx.ask_exec || (fr->ask && fr->exec == 1);
        }
        /* the writable layer, for its usage at the end (the fd keeps it
         * readable after the mount namespace is gone) */
        st->writable_fd = openat(st->fsctx.root_fd, "tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);

        /* the Landlock report comes first, then the working directory, then the ready */
        if (!recv_setup_msg(st, MSG_LANDLOCK, &m, NULL, 0))
                return EXIT_SANDBOX;
        st->landlock_abi = m.value;
        /* write opens left to the kernel where Landlock bounds them as
         * tightly as the handler would (fs/open.c, open_native_write) */
        st->fsctx.native_writes = !st->plan->trap_paths && !st->plan->trap_writes && st->landlock_abi >= 3 &&
                                  fs_landlock_proc_unwritable(&st->plan->view);
        snprintf(st->landlock_why, sizeof(st->landlock_why), "%.300s", m.text);
        if (!recv_setup_msg(st, MSG_CWD, &m, NULL, 0))
                return EXIT_SANDBOX;
        snprintf(st->cwd_note, sizeof(st->cwd_note), "%.300s", m.text);
        if (!recv_setup_msg(st, MSG_READY, &m, NULL, 0))
                return EXIT_SANDBOX;
        if (proc_later && read_view_mounts(st, NULL) < 0)
                return EXIT_SANDBOX;
        trace_mark("ready received");
        /* init's listener, taken across (init may make no trapped call, such
         * as the sendmsg that would pass it, before we serve) */
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
        bool killable = m.value & READY_KILLABLE;
        st->native_exec = m.value & READY_NATIVE_EXEC;
        if (!killable && st->verbose)
                fprintf(stderr, "cordon: kernel lacks SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV; "
                                "a signal can interrupt an emulated call\n");
        trace_mark("listener taken");
        if (exec_checks_settle(st) < 0) {
                close(listener);
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }
        trace_mark("exec tracer ready");
        /* The start, now that the listener is ours (init becomes
         * non-dumpable on it): init forks the command while the rest is
         * started here. Nothing of the command's own runs before the engine
         * serves its execve (or, with execs native, its first trapped call
         * waits in the kernel until the engine serves it), and a failure
         * below kills it with init. */
        if (st->pty_master >= 0)
                tty_begin(st);
        if (msg_send(st->sock, MSG_START, 0, NULL, NULL, 0) < 0) {
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
                .wake_events_fd = st->serve ? st->front->approvals_wake_fd(st->serve) : -1,
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
                .execs_untrapped = st->native_exec,
                .table = table,
                .n_table = n_table,
                .userdata = &st->fsctx,
                .contexts = {[CTX_FS] = &st->fsctx, [CTX_NET] = st->gate},
                .thread_init = fs_worker_init,
                .min_workers = 1, /* more start when a call blocks (notify/engine.c) */
                .max_workers = 64,
        };
        egress_attach_approvals(st); /* "ask" grants' requests */
        trace_mark("approvals");
        r = notify_engine_start(&cfg, listener, &st->engine);
        trace_mark("engine started");
        if (r < 0) {
                fprintf(stderr, "cordon: cannot start the notification engine: %s\n", strerror(-r));
                struct approvals *ap = TAKE_PTR(st->approvals);
                egress_attach_approvals(st); /* the gate lets go of it first */
                approvals_free(ap);
                kill_and_reap(st);
                return EXIT_SANDBOX;
        }
        if (st->verbose) {
                char mem[256], cpu[256], tasks[256], disk[256];
                limit_describe(&st->limits, LIMIT_MEMORY, mem, sizeof(mem));
                limit_describe(&st->limits, LIMIT_CPU, cpu, sizeof(cpu));
                limit_describe(&st->limits, LIMIT_PROCESSES, tasks, sizeof(tasks));
                limit_describe(&st->limits, LIMIT_DISK, disk, sizeof(disk));
                _cleanup_free_ char *idmap = identity_describe(st);
                _cleanup_free_ char *capset = policy_caps_format(st->plan->caps);
                _cleanup_free_ char *capsline =
                        st->plan->cmd_uid == 0
                                ? xasprintf(", holding %s within the sandbox's user namespace only", capset)
                                : xstrdup(", no capabilities");
                _cleanup_free_ char *view =
                        st->plan->view.template_path
                                ? xasprintf("template %s (read-only lower layer%s%s) under a private overlay",
                                            st->plan->view.template_path, st->privileged ? ", idmapped" : "",
                                            st->policy->source_digest ? ", digest verified" : ", no digest pinned")
                                : xstrdup("host system dirs read-only");
                fprintf(stderr,
                        "cordon: sandbox %s, init is host pid %d; layers in force:\n"
                        "cordon:   namespaces: user, mount, pid, net, ipc, uts, cgroup\n"
                        "cordon:   identity: %s; the command is uid %u gid %u%s; no_new_privs\n"
                        "cordon:   view: %s, private /tmp /var/tmp /run /root, own /proc and /dev\n"
                        "cordon:   network: own namespace, loopback only; DNS stub at " NET_STUB_ADDR
                        "; egress gate for %zu listed name(s)\n"
                        "cordon:   seccomp: filter from %zu table rows; %s and socket calls emulated by the sentry; "
                        "killable wait %s; SYNC_WAKE_UP %s\n"
                        "cordon:   exec: %s\n"
                        "cordon:   limits: memory %s, cpu %s, processes %s, disk %s; cgroup %s\n"
                        "cordon:   approvals: %s\n",
                        st->id, st->init_pid, idmap, st->plan->cmd_uid, st->plan->cmd_gid, capsline, view,
                        st->policy->n_net_rules, n_table,
                        st->plan->trap_paths ? "every path call"
                        : st->plan->trap_writes
                                ? "opens that write and every call that writes (an ask rule; reads native)"
                                : "opens that write (read-only opens and other path calls native: the view decides)",
                        killable ? "on" : "UNAVAILABLE", notify_engine_sync_wakeup(st->engine) ? "on" : "unavailable",
                        st->native_exec ? "native: the view decides alone (no exec rule; Landlock's execute right, "
                                          "the sandbox's own binfmt_misc, noexec mounts)"
                        : st->exec_tracer
                                ? "checked by the sentry; the running image verified at each exec event (ptrace, no "
                                  "syscall stops)"
                                : "checked by the sentry; NOT verified after exec (--allow-unverified-exec)",
                        mem, cpu, tasks, disk, st->cg ? cgroup_backend(st->cg) : "none",
                        st->serve              ? "`cordon sandbox approve|deny`, pending ones in the state"
                        : st->approve_tty >= 0 ? "asked on the controlling terminal (--approve-interactive)"
                                               : "nobody to ask: every \"ask\" call is denied");
                if (st->floor_on)
                        fprintf(stderr,
                                "cordon:   egress floor: BPF cgroup connect4/6, sendmsg4/6 and skb egress on %s: own loopback "
                                "only; %s\n",
                                cgroup_v2_path(st->cg), net_floor_how());
                else
                        fprintf(stderr, "cordon:   egress floor: ABSENT (%s)\n", st->floor_why);
                if (st->landlock_abi > 0)
                        fprintf(stderr,
                                "cordon:   landlock: ABI %d: read and execute across the view, write only in its "
                                "writable places\n",
                                st->landlock_abi);
                else
                        fprintf(stderr, "cordon:   landlock: ABSENT (%s)\n", st->landlock_why);
                fprintf(stderr, "cordon:   cwd: %s\n", st->cwd_note);
        }

        /* Set-up is over: from here on the sentry serves, relays and cleans
         * up, confined to that since before the start. A long-lived
         * sandbox's snapshots load libarchive and libcrypto when the first
         * one is asked for, on the main thread (sentry/sandbox/serve.c): never loaded,
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
        int code = st->serve ? st->front->loop(st) : supervise(st);
        trace_mark("supervise returned");
        run_wind_down(st); /* done already when the command's status came */
        /* (a test's stall: a sentry killed here leaves its groups and its
         * claim, which the next start's gc collects) */
        test_stall("teardown");
        tty_end(st);
        run_teardown(st);
        return code;
}
