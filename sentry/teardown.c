/* The end of a sandbox once its command's status is in: the trapped-call
 * counts kept for --stats, the approvals closed, the engine and the proc
 * agent stopped, `cordon run`'s state directory removed, the view let go,
 * the groups removed and the claim dropped, and every process of the
 * sandbox killed. */
#include "config.h"

#include <pthread.h>
#include <seccomp.h>
#include <stdatomic.h>

#include "common/trace.h"
#include "sentry/approvals/approvals.h"
#include "sentry/sentry-internal.h"

/* who does rest_main once init is reaped, where the state directory's
 * thread may (sandbox_state.rest_by) */
enum { REST_UNDECIDED, REST_BY_STATE_THREAD, REST_BY_TEARDOWN };

static void side_task_start(struct side_task *t, void *(*fn)(void *), void *arg)
{
        if (pthread_create(&t->thread, NULL, fn, arg) == 0)
                t->running = true;
        else
                (void)fn(arg);
}

static void side_task_join(struct side_task *t)
{
        if (t->running) {
                pthread_join(t->thread, NULL);
                t->running = false;
        }
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

/* The groups removed, then (the state directory gone) the claim dropped;
 * a group that could not be removed keeps the claim on disk (closed, so
 * stale): the next gc finds it, and with it the group. init is reaped:
 * every process of the sandbox is gone (cgroup_destroy kills what a
 * refused rmdir shows). join_state: the state directory's thread is
 * another's (else this is it, done with the directory). */
static void groups_and_claim(struct sandbox_state *st, bool join_state)
{
        bool gone = cgroup_destroy(TAKE_PTR(st->cg)) == 0;
        st->groups_removed = true;
        trace_mark("cgroup destroyed");
        if (join_state)
                side_task_join(&st->state_remover);
        if (st->state_lock >= 0) {
                (void)state_remove_dir(st->id);
                close(TAKE_FD(st->state_lock));
        }
        if (gone)
                state_drop_claim(st->id);
        trace_mark("claim dropped");
}

void run_groups_end(struct sandbox_state *st)
{
        groups_and_claim(st, true);
}

/* What the view's release runs beside once init is reaped (run_teardown):
 * nothing here touches the view's fds or the engine (stopped already).
 * With groups_early, the groups and the claim too. */
static void rest_main(struct sandbox_state *st, bool on_state_thread)
{
        /* init is gone: the proc agent's exit can run beside the rest of
         * the teardown (reaped in fs_agent_stop below) */
        fs_agent_kill(&st->fsctx);
        /* so is the exec tracer's (reaped at the end) */
        exectrace_kill(st->exec_tracer);
        trace_mark("exec tracer stopped");
        struct approvals *ap = TAKE_PTR(st->approvals);
        egress_attach_approvals(st); /* the gate's relays ask it no more */
        approvals_free(ap);
        for (int i = 0; i < 2; i++)
                if (st->prompt_wake[i] >= 0)
                        close(TAKE_FD(st->prompt_wake[i]));
        net_gate_free(TAKE_PTR(st->gate));
        trace_mark("gate freed");
        fs_agent_stop(&st->fsctx);
        trace_mark("proc agent stopped");
        free(TAKE_PTR(st->fsctx.mount_ids));
        exec_checks_end(st);
        close(TAKE_FD(st->sock));
        close(TAKE_FD(st->pidfd));
        exectrace_reap(st->exec_tracer);
        st->exec_tracer = 0;
        if (st->groups_early)
                groups_and_claim(st, !on_state_thread);
}

/* `cordon run`'s state directory removed, its lock let go (the claim
 * stays). Until rest_go, the thread touches only st->id and
 * st->state_lock, which nothing else reads until it is joined; with
 * rest_waits it then does rest_main, while run_teardown's thread touches
 * only the view's fds. */
static void *remove_state_main(void *arg)
{
        struct sandbox_state *st = arg;
        /* (a test's stall: init is reaped first, run_teardown does the rest) */
        test_stall("state-dir");
        (void)state_remove_run_dir(st->id);
        close(TAKE_FD(st->state_lock));
        trace_mark("state directory removed");
        /* run_teardown's other half, once init is reaped, unless init was
         * reaped before this (its journal waits here can be long, and
         * the rest must not wait behind them): then run_teardown did the
         * rest itself */
        int undecided = REST_UNDECIDED;
        if (st->rest_waits && atomic_compare_exchange_strong(&st->rest_by, &undecided, REST_BY_STATE_THREAD)) {
                while (sem_wait(&st->rest_go) < 0 && errno == EINTR)
                        ;
                rest_main(st, true);
        }
        return NULL;
}

void run_wind_down(struct sandbox_state *st)
{
        if (st->wound_down)
                return;
        st->wound_down = true;
        if (st->keep_counts)
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
        /* its threads end while the state directory's thread is made */
        notify_engine_stop_begin(st->engine);
        /* `cordon run`'s state directory goes now too (a long-lived
         * sandbox's still takes its last events). Its claim stays held
         * until the groups are gone: gc takes a group for garbage only
         * when neither is held. */
        if (!st->serve && st->state_lock >= 0) {
                /* On a thread: where the state is on a disk filesystem (a
                 * /run that is not a tmpfs) its unlinks wait on the journal,
                 * and they need wait for nothing else here. The lock is
                 * the thread's to close once the directory is gone. Made
                 * now, while init exits, it also does the rest of the
                 * teardown once init is reaped (rest_waits): then no thread
                 * is made there, just before the view's release (a
                 * pthread_create there cost 0.05-0.1 ms of that path). */
                st->rest_waits = st->groups_early && sem_init(&st->rest_go, 0, 0) == 0;
                if (pthread_create(&st->state_remover.thread, NULL, remove_state_main, st) == 0)
                        st->state_remover.running = true;
                else {
                        /* nobody to wait: run_teardown does it all */
                        st->rest_waits = false;
                        (void)remove_state_main(st);
                }
        }
        notify_engine_stop(TAKE_PTR(st->engine));
        trace_mark("engine stopped");
        /* no handler is left to ask the proc agent: its exit can run now
         * (reaped in fs_agent_stop) */
        fs_agent_kill(&st->fsctx);
}

/* The view let go once init is reaped, beside the rest of the teardown
 * (rest_main: the proc agent's and the tracer's reaping, the gate's
 * threads joined, the groups' removal; see run_teardown for which thread
 * does which): the last reference to init's mount
 * namespace (see sandbox_state.mntns_fd) and the sentry's fds into the
 * view (its root and, without --stats or a front, its writable layer's),
 * whose last close is the overlay's and the mounts' release, with the RCU
 * grace period the unmount waits for: the longest part of the teardown
 * (0.5-1 ms here), begun first. The engine that used the root has stopped
 * (run_wind_down). */
static void *end_view_main(void *arg)
{
        struct sandbox_state *st = arg;
        trace_mark("view release begun");
        for (size_t i = 0; i < ELEMENTSOF(st->view_fds); i++)
                if (st->view_fds[i] >= 0)
                        close(TAKE_FD(st->view_fds[i]));
        trace_mark("view released");
        return NULL;
}

/* The view's fds moved to where end_view_main closes them (the writable
 * layer's only with layer_too: --stats or a front still reads it). */
static void view_fds_take(struct sandbox_state *st, bool layer_too)
{
        st->view_fds[0] = TAKE_FD(st->mntns_fd);
        st->view_fds[1] = TAKE_FD(st->fsctx.root_fd);
        st->view_fds[2] = layer_too ? TAKE_FD(st->writable_fd) : -1;
        st->view_fds[3] = layer_too ? TAKE_FD(st->layer_fd) : -1;
}

static void view_end_begin(struct sandbox_state *st, bool layer_too)
{
        view_fds_take(st, layer_too);
        side_task_start(&st->view_ender, end_view_main, st);
}

void run_view_ended(struct sandbox_state *st)
{
        side_task_join(&st->view_ender);
        if (st->mntns_fd >= 0)
                close(TAKE_FD(st->mntns_fd));
}

void run_teardown(struct sandbox_state *st)
{
        bool layer_too = !st->serve && !st->keep_layer;
        int undecided = REST_UNDECIDED;
        if (st->rest_waits && !atomic_compare_exchange_strong(&st->rest_by, &undecided, REST_BY_TEARDOWN)) {
                /* the state directory's thread, made at the status, does
                 * the rest while this one lets the view go: no thread made
                 * now, when the view's release is next. The view's fds
                 * are this thread's before the other runs: from the post
                 * on, the two share no field of st (rest_main passes
                 * st->fsctx, beside root_fd, to the proc agent's stop) */
                view_fds_take(st, layer_too);
                sem_post(&st->rest_go);
                (void)end_view_main(st);
                side_task_join(&st->state_remover);
                sem_destroy(&st->rest_go);
                st->rest_waits = false;
                return;
        }
        /* the view's release on a thread of its own, the rest here (the
         * state directory's thread, if any, ends with the directory) */
        view_end_begin(st, layer_too);
        rest_main(st, false);
        if (st->rest_waits) {
                /* the state thread is joined (run_groups_end at the
                 * latest) and never waited on it */
                sem_destroy(&st->rest_go);
                st->rest_waits = false;
        }
}

void sandbox_kill_all(struct sandbox_state *st)
{
        if (st->cg)
                (void)cgroup_kill_all(st->cg);
        kill(st->init_pid, SIGKILL);
}
