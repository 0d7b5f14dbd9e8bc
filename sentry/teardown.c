/* The end of a sandbox once its command's status is in: the trapped-call
 * counts kept for --stats, the approvals closed, the engine and the proc
 * agent stopped, `cordon run`'s state directory removed, the view let go,
 * and every process of the sandbox killed. */
#include "config.h"

#include <pthread.h>
#include <seccomp.h>

#include "common/trace.h"
#include "sentry/approvals/approvals.h"
#include "sentry/sentry-internal.h"

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

/* `cordon run`'s state directory removed, its lock let go (the claim
 * stays). The thread touches only st->id and st->state_lock, which nothing
 * else reads until run_state_removed. */
static void *remove_state_main(void *arg)
{
        struct sandbox_state *st = arg;
        (void)state_remove_dir(st->id);
        close(TAKE_FD(st->state_lock));
        trace_mark("state directory removed");
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
                /* On a thread: where the state is on a disk filesystem (a
                 * /run that is not a tmpfs) its unlinks wait on the journal,
                 * and they need wait for nothing else here. The lock is
                 * the thread's to close once the directory is gone. */
                side_task_start(&st->state_remover, remove_state_main, st);
        }
}

void run_state_removed(struct sandbox_state *st)
{
        side_task_join(&st->state_remover);
}

/* The view let go once init is reaped, on a thread beside the rest of the
 * teardown (the proc agent's and the tracer's reaping, the gate's threads
 * joined, the groups' removal): the last reference to init's mount
 * namespace (see sandbox_state.mntns_fd) and the sentry's fds into the
 * view (its root and, without --stats or a front, its writable layer's),
 * whose last close is the overlay's and the mounts' release, with the RCU
 * grace period the unmount waits for: the longest part of the teardown
 * (0.5-1 ms here), begun first. The engine that used the root has stopped
 * (run_wind_down). */
static void *end_view_main(void *arg)
{
        struct sandbox_state *st = arg;
        for (size_t i = 0; i < ELEMENTSOF(st->view_fds); i++)
                if (st->view_fds[i] >= 0)
                        close(TAKE_FD(st->view_fds[i]));
        trace_mark("view released");
        return NULL;
}

void run_view_end_begin(struct sandbox_state *st, bool layer_too)
{
        st->view_fds[0] = TAKE_FD(st->mntns_fd);
        st->view_fds[1] = TAKE_FD(st->fsctx.root_fd);
        st->view_fds[2] = layer_too ? TAKE_FD(st->writable_fd) : -1;
        st->view_fds[3] = layer_too ? TAKE_FD(st->layer_fd) : -1;
        side_task_start(&st->view_ender, end_view_main, st);
}

void run_view_ended(struct sandbox_state *st)
{
        side_task_join(&st->view_ender);
        if (st->mntns_fd >= 0)
                close(TAKE_FD(st->mntns_fd));
}

void sandbox_kill_all(struct sandbox_state *st)
{
        if (st->cg)
                (void)cgroup_kill_all(st->cg);
        kill(st->init_pid, SIGKILL);
}
