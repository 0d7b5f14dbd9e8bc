#!/bin/bash
# cordon integration tests for the start-up path (issue #8, cold start): how the sandbox's
# init enters its control groups without the sentry writing cgroup.procs (born in the cgroup v2
# group with clone3(CLONE_INTO_CGROUP), moving itself into the v1 groups through their "tasks"
# files), that the command ends up in every group the sandbox has, and that a group that is gone
# when init comes to enter it fails the run cleanly: exit 125, a message naming the group, the
# command never run, nothing left behind. Run by `make check`; by hand:
#
#   CORDON=/path/to/cordon TESTS_SRCDIR=/path/to/tests bash tests/integration/startup.sh [REGEX...]

if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

IT_SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$IT_SCRIPT")/lib.sh"

need_cgroups() {
        [ "$(id -u)" = 0 ] || skip "the sandbox gets control groups only where cordon may create them (root here)"
        grep -qE ' cgroup2? ' /proc/mounts || skip "no cgroup hierarchy is mounted"
}

py() { "$(command -v /usr/bin/python3 || command -v python3)" "$@"; }

# The state directory of the sandbox whose sentry is pid $1 (each `cordon run` has one under
# /run/cordon/sandboxes while it runs); empty if none yet.
state_of_sentry() {
        py - "$1" <<'EOF'
import glob, json, sys
for f in glob.glob("/run/cordon/sandboxes/*/state.json"):
    try:
        s = json.load(open(f))
    except Exception:
        continue
    if str(s.get("sentryPid")) == sys.argv[1]:
        print(f.rsplit("/", 1)[0])
EOF
}

# The sandbox's group directories from its state file, one a line.
groups_of() { py -c 'import json,sys; print("\n".join(json.load(open(sys.argv[1]))["cgroups"]))' "$1/state.json"; }

# Whether a directory is in the cgroup v2 hierarchy.
is_v2() { [ "$(stat -f -c %T "$1" 2>/dev/null)" = cgroup2fs ]; }

# Starts `cordon run` stalled after its groups and state exist (CORDON_TEST_STALL=start) and sets
# STATE and CGS (an array) for it. $1: the output file; the rest: cordon run's arguments. The
# stall is long enough for the test to find the state and act on it on a loaded machine: with
# 3 s, a full `make -j2 check` sometimes let the run go on (and end, its state gone) before the
# test had read the state file.
start_stalled() {
        local out=$1
        shift
        CORDON_TEST_STALL=start CORDON_TEST_STALL_SECONDS=8 bg_cordon "$out" "$@"
        wait_until 10 grep -q "stalled at start" "$out" || fail "cordon did not reach its stall: $(cat "$out")"
        STATE=$(state_of_sentry "$BG_CORDON")
        [ -n "$STATE" ] || fail "no state directory for sentry $BG_CORDON"
        mapfile -t CGS < <(groups_of "$STATE")
        [ "${#CGS[@]}" -gt 0 ] || skip "this sandbox got no control group on this host"
}

# After the run: none of its groups, nor its state directory, is left.
expect_nothing_left() {
        local g
        for g in "${CGS[@]}"; do
                expect_true "the group $g is removed" test ! -e "$g"
        done
        expect_true "the state directory $STATE is removed" test ! -e "$STATE"
}

# The command of a normal run is in every group the sandbox has, v1 and v2 alike: the groups
# it entered by itself (tasks) and the one it was born in (CLONE_INTO_CGROUP). With the clone
# fallback forced the sentry moves it into the v2 group instead: the same groups.
in_every_group() {
        local marker=$1 out=$2 pid state g
        # the whole line: with -v, cordon's own lines ("... cgroup v2 group ...") hold "up" too
        wait_until 10 grep -qx up "$out" || fail "the sandbox did not start: $(cat "$out")"
        # the sandbox's shell: the marker in its command line (the sentry's proc agent runs as
        # the sandbox's root too, with cordon's command line, which the anchor leaves out)
        pid=$(pgrep -f -- "^sh -c .*$marker" | head -1)
        [ -n "$pid" ] || fail "cannot find the sandbox's command"
        state=$(state_of_sentry "$BG_CORDON")
        [ -n "$state" ] || fail "no state directory for sentry $BG_CORDON"
        mapfile -t CGS < <(groups_of "$state")
        [ "${#CGS[@]}" -gt 0 ] || skip "this sandbox got no control group on this host"
        for g in "${CGS[@]}"; do
                expect_true "the command (host pid $pid) is in $g" grep -qx "$pid" "$g/cgroup.procs"
        done
        kill "$BG_CORDON"
        wait "$BG_PID" 2>/dev/null
}

it_test command_in_every_group
command_in_every_group() {
        need_cgroups
        local marker="cordon-it-start-$$" out="$IT_TMP/bg.out"
        bg_cordon "$out" -- sh -c "echo up; sleep 30 #$marker"
        in_every_group "$marker" "$out"
}

it_test command_in_every_group_clone_fallback
command_in_every_group_clone_fallback() {
        need_cgroups
        local marker="cordon-it-startfb-$$" out="$IT_TMP/bg.out"
        CORDON_TEST_FORCE_FALLBACK=clone_into_cgroup bg_cordon "$out" -v -- sh -c "echo up; sleep 30 #$marker"
        in_every_group "$marker" "$out"
        expect_contains "$(cat "$out")" "kernel feature clone_into_cgroup forced absent" "-v names the fallback"
}

# A v1 group removed after cordon made it and before init enters it: the sentry's open of its
# "tasks" file (or, had it been removed a moment later, init's write to it) fails, and the run
# stops there.
it_test v1_group_gone_before_entry
v1_group_gone_before_entry() {
        need_cgroups
        local out="$IT_TMP/bg.out" g victim=
        start_stalled "$out" -- sh -c 'echo RAN'
        for g in "${CGS[@]}"; do
                is_v2 "$g" || victim=$g
        done
        [ -n "$victim" ] || skip "the sandbox has no cgroup v1 group on this host"
        rmdir "$victim" || fail "cannot remove $victim"
        wait "$BG_PID"
        RC=$?
        OUT=$(grep -v "stalled at start" "$out")
        expect_rc 125 "the run whose group is gone"
        expect_contains "$OUT" "cannot enter the sandbox's control group $victim" "names the group"
        expect_not_contains "$OUT" "RAN" "the command must not run"
        expect_nothing_left
}

# The v2 group removed before the clone: clone3 cannot create init in it, and the run stops
# with a message naming it (not a misleading one about namespaces). The kernel egress floor
# (attached to that group after the clone, while init builds the view) is switched off here,
# so that nothing but the clone meets the group's absence.
it_test v2_group_gone_before_clone
v2_group_gone_before_clone() {
        need_cgroups
        local out="$IT_TMP/bg.out" g victim=
        CORDON_DEBUG_DISABLE=egress-floor start_stalled "$out" --debug-unsafe -- sh -c 'echo RAN'
        for g in "${CGS[@]}"; do
                is_v2 "$g" && victim=$g
        done
        [ -n "$victim" ] || skip "the sandbox has no cgroup v2 group on this host"
        rmdir "$victim" || fail "cannot remove $victim"
        wait "$BG_PID"
        RC=$?
        OUT=$(grep -v "stalled at start" "$out")
        expect_rc 125 "the run whose v2 group is gone"
        expect_contains "$OUT" "$victim" "names the group"
        expect_not_contains "$OUT" "RAN" "the command must not run"
        expect_nothing_left
}

# A run that ends normally: once `cordon run` has returned, none of its groups and no state
# directory is left, though their removal overlaps the rest of the teardown (the state
# directory's on a thread of its own, sentry/teardown.c: waited for before the return).
it_test normal_run_leaves_nothing
normal_run_leaves_nothing() {
        need_cgroups
        local out="$IT_TMP/bg.out"
        bg_cordon "$out" -- sh -c 'echo up; sleep 2; exit 3'
        wait_until 10 grep -qx up "$out" || fail "the sandbox did not start: $(cat "$out")"
        STATE=$(state_of_sentry "$BG_CORDON")
        [ -n "$STATE" ] || fail "no state directory for sentry $BG_CORDON"
        mapfile -t CGS < <(groups_of "$STATE")
        [ "${#CGS[@]}" -gt 0 ] || skip "this sandbox got no control group on this host"
        wait "$BG_PID"
        RC=$?
        expect_rc 3 "the command's status"
        expect_nothing_left
}

# The teardown's two splits (sentry/teardown.c): the state directory's thread, done with the
# directory before init is reaped, stops the helpers, removes the groups and drops the claim
# while the main thread lets the view go (forced here by holding the main thread before its
# teardown); or, where the directory's removal is still going on when init is reaped (forced by
# holding that thread), the main thread does the rest and the view goes on a thread of its own.
# Either way: the command's status, its output, and nothing left (groups, state directory,
# claim, id range). Likewise with --stats, which reads the groups before they go.
it_test teardown_either_way_leaves_nothing
teardown_either_way_leaves_nothing() {
        need_cgroups
        local out="$IT_TMP/bg.out" stall id
        for stall in teardown state-dir stats; do
                if [ "$stall" = stats ]; then
                        bg_cordon "$out" --stats "$IT_TMP/stats.json" -- sh -c 'echo up; sleep 1; exit 3'
                else
                        CORDON_TEST_STALL=$stall CORDON_TEST_STALL_SECONDS=1 \
                                bg_cordon "$out" -- sh -c 'echo up; sleep 1; exit 3'
                fi
                wait_until 10 grep -qx up "$out" || fail "the sandbox did not start ($stall): $(cat "$out")"
                STATE=$(state_of_sentry "$BG_CORDON")
                [ -n "$STATE" ] || fail "no state directory for sentry $BG_CORDON ($stall)"
                id=${STATE##*/}
                mapfile -t CGS < <(groups_of "$STATE")
                [ "${#CGS[@]}" -gt 0 ] || skip "this sandbox got no control group on this host"
                wait "$BG_PID"
                RC=$?
                expect_rc 3 "the command's status ($stall)"
                expect_nothing_left
                expect_true "the claim is dropped ($stall)" test ! -e "/run/cordon/claims/$id"
                expect_eq "" "$(grep -l "$id" /run/cordon/idranges/* 2>/dev/null)" "the id range is let go ($stall)"
                [ "$stall" != teardown ] || expect_contains "$(cat "$out")" "stalled at teardown" "the stall was reached"
                [ "$stall" != state-dir ] || expect_contains "$(cat "$out")" "stalled at state-dir" "the stall was reached"
        done
        expect_true "--stats was written" test -s "$IT_TMP/stats.json"
}

# init fails after it has sent the sentry the view and the namespaces (the working directory
# is entered last, after Landlock): by then the sentry has started its proc agent and DNS stub
# beside init's set-up. The run fails with init's message, exit 125, the command never runs,
# and no process of it is left (the agent carries cordon's command line).
it_test late_set_up_failure_leaves_nothing
late_set_up_failure_leaves_nothing() {
        need_cgroups
        local dir="/no/such/dir-$$-$RANDOM"
        crun -C "$dir" -- sh -c 'echo RAN'
        expect_rc 125 "a run whose working directory is missing"
        expect_contains "$ERR" "cannot change to $dir in the sandbox" "init's own message"
        expect_not_contains "$OUT" "RAN" "the command must not run"
        expect_eq "" "$(pgrep -f -- "$dir")" "no process of the run is left (the proc agent)"
        # the same failure before the exec tracer can seize init (held back a second): the
        # tracer's error would then be the first to surface; init's, sent after its fds and
        # its Landlock report, is the one shown
        CORDON_TEST_STALL=tracer CORDON_TEST_STALL_SECONDS=1 crun -C "$dir" -- sh -c 'echo RAN'
        expect_rc 125 "the same run with the tracer late"
        expect_contains "$ERR" "cannot change to $dir in the sandbox" "init's own message, not the tracer's"
        expect_not_contains "$OUT" "RAN" "the command must not run"
}

# The pids whose open fds include the namespace $1 ("mnt:[N]"), one a line.
ns_holders() {
        local f
        for f in /proc/[0-9]*/fd/*; do
                [ "$(readlink "$f" 2>/dev/null)" = "$1" ] && { f=${f#/proc/}; echo "${f%%/*}"; }
        done | sort -u
}

# The sentry holds the sandbox's mount namespace (the view) from before the start, so that
# init's exit, which the command's status waits for, is not the view's teardown: it lets go on
# a thread once init is reaped (sentry/teardown.c). Nothing else holds it (the proc agent and
# the exec tracer, forked before, have no copy whose exit would be the view's end), and once
# `cordon run` has returned nothing does.
it_test view_held_by_the_sentry_alone
view_held_by_the_sentry_alone() {
        local out="$IT_TMP/bg.out" mark="view-held-$$-$RANDOM"
        # the command waits for the test's signal, not for a fixed time: the scan of every
        # process's fds below took longer than two seconds under the sanitizers on a busy host
        bg_cordon "$out" -- sh -c 'trap "exit 4" USR1; echo up; sleep 60 & wait $!; exit 5' "$mark"
        wait_until 10 grep -qx up "$out" || fail "the sandbox did not start: $(cat "$out")"
        local pid ns
        pid=$(pgrep -f -- "^sh -c .* $mark\$" | head -n 1)
        [ -n "$pid" ] || fail "no process of the sandbox's shell ($mark)"
        ns=$(readlink "/proc/$pid/ns/mnt")
        [ -n "$ns" ] || fail "no mount namespace for the sandbox's shell (pid $pid)"
        [ "$(readlink /proc/self/ns/mnt)" != "$ns" ] || fail "the sandbox's shell (pid $pid) is in the host's mount namespace"
        expect_eq "$BG_CORDON" "$(ns_holders "$ns" | tr '\n' ' ' | sed 's/ $//')" \
                "the sentry alone holds the sandbox's mount namespace"
        kill -USR1 "$pid"
        wait "$BG_PID"
        RC=$?
        expect_rc 4 "the command's status"
        expect_eq "" "$(ns_holders "$ns")" "nothing holds the mount namespace once cordon run has returned"
}

# init looks at its own binfmt_misc on the host's /tmp and leaves it mounted there (the pivot's
# detach takes it along, sparing an unmount's RCU grace period), having taken the binds'
# sources from the host's tree first: a source under /tmp is the host's, read-only or
# read-write, a directory or a file, never the binfmt_misc mount that covers /tmp for a moment.
# And the sandbox's binfmt_misc is still its own: execs run natively (no exec tracer started).
it_test binds_from_host_tmp
binds_from_host_tmp() {
        local d
        d=$(mktemp -d /tmp/cordon-startup.XXXXXX) || fail "mktemp in /tmp"
        at_exit "rm -rf '$d'"
        chmod 0755 "$d"
        mkdir "$d/ro" "$d/rw"
        echo from-host >"$d/ro/file"
        echo single >"$d/one"
        chmod 0777 "$d/rw"
        crun --bind "$d/ro:/ro:ro" --bind "$d/rw:/rw" --bind "$d/one:/one:ro" -- \
                sh -c 'cat /ro/file /one && echo written >/rw/new && ls /ro && grep -c . /proc/self/mountinfo >/dev/null'
        expect_rc 0 "a run whose binds' sources are under the host's /tmp"
        expect_contains "$OUT" "from-host" "the read-only directory bind shows the host's files"
        expect_contains "$OUT" "single" "the file bind shows the host's file"
        expect_not_contains "$OUT" "register" "no binfmt_misc control file where a bind's source was"
        expect_eq "written" "$(cat "$d/rw/new" 2>/dev/null)" "the read-write bind writes to the host's /tmp"
        # the binfmt_misc instance is the sandbox's own (empty): execs run natively
        CORDON_TRACE_STARTUP=1 crun --bind "$d/ro:/ro:ro" -- /bin/true
        expect_rc 0 "a plain run with a bind from /tmp"
        expect_not_contains "$ERR" "exec tracer started" "the sandbox's own binfmt_misc: no exec tracer"
}

it_main "$@"
