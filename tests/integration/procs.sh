#!/bin/bash
# cordon integration tests for the processes and ports of a long-lived sandbox (issue 23):
# `sandbox ps` and `sandbox kill` (pids inside the sandbox only), `sandbox port` (a port the
# sandbox listens on, reached from the host through its sentry). Run like run.sh:
#
#   CORDON=/path/to/cordon TESTS_SRCDIR=/path/to/tests bash tests/integration/procs.sh [REGEX...]
if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

IT_SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$IT_SCRIPT")/lib.sh"

need_root() { [ "$(id -u)" = 0 ] || skip "these tests create long-lived sandboxes under /run/cordon as root"; }

# field F of the process whose command is CMD in `ps --json` output $OUT (empty if none)
ps_field() { # CMD F
        printf '%s' "$OUT" | python3 -c '
import json, sys
for p in json.load(sys.stdin)["processes"]:
    if p["command"] == sys.argv[1]:
        v = p[sys.argv[2]]
        print("" if v is None else v)
        break' "$1" "$2"
}

it_test ps_lists_runs_and_processes_that_left_their_session
ps_lists_runs_and_processes_that_left_their_session() {
        need_root
        new_sandbox
        # a background process, and one that left the run's session (setsid, then its parent exits)
        sb exec "$ID" -- sh -c 'sleep 311 & setsid sh -c "sleep 312 &"; sleep 0.1'
        expect_rc 0 "the first run"
        sb exec "$ID" --detach -- sleep 313
        expect_rc 0 "a detached run"
        local r2=$OUT
        wait_until 5 sh -c "'$CORDON' sandbox ps $ID | grep -q 'sleep 313'"
        sb ps "$ID" --json
        expect_rc 0 "ps --json"
        expect_eq r1 "$(ps_field 'sleep 311' run)" "the background process's run"
        expect_eq r1 "$(ps_field 'sleep 312' run)" "the run of the process that left its session"
        expect_eq 1 "$(ps_field 'sleep 312' ppid)" "its parent (the sandbox's init)"
        expect_eq "$r2" "$(ps_field 'sleep 313' run)" "the detached run's process"
        expect_eq 0 "$(ps_field 'sleep 313' uid)" "the user inside (root of the sandbox)"
        expect_match "$(ps_field 'sleep 313' startedAt)" '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T' "start time"
        expect_match "$(ps_field 'sleep 313' memoryBytes)" '^[1-9][0-9]*$' "memory"
        expect_match "$(ps_field 'sleep 313' pid)" '^[0-9]+$' "pid"
        # pids are the sandbox's own: small numbers, with init at 1
        expect_true "init is pid 1" sh -c "printf '%s' '$OUT' | grep -q '\"pid\":1,'"
        sb ps "$ID"
        expect_rc 0 "ps (table)"
        expect_match "$OUT" '^PID +PPID +RUN' "the table's header"
        expect_contains "$OUT" "sleep 312" "the table"
}

it_test kill_signals_a_process_of_the_sandbox
kill_signals_a_process_of_the_sandbox() {
        need_root
        new_sandbox
        sb exec "$ID" -- sh -c 'setsid sh -c "sleep 321 &"; sleep 0.1'
        sb ps "$ID" --json
        local pid
        pid=$(ps_field 'sleep 321' pid)
        [ -n "$pid" ] || fail "no process 'sleep 321' in the sandbox"
        sb kill "$ID" "$pid" KILL
        expect_rc 0 "kill of the sandbox's process"
        wait_until 5 sh -c "! '$CORDON' sandbox ps $ID | grep -q 'sleep 321'" || fail "the process is still there"
        # it is gone now: the same pid is refused, not reused blindly
        sb kill "$ID" "$pid"
        expect_rc 1 "kill of an exited pid"
        expect_contains "$ERR" "not a process of sandbox" "the reason"
        sb kill "$ID" 1
        expect_rc 1 "kill of the sandbox's init"
        expect_contains "$ERR" "init" "the reason"
        sb kill "$ID" 5 NOSUCHSIG
        expect_rc 2 "a bad signal name"
        sb kill "$ID" abc
        expect_rc 2 "a pid that is not a number"
}

it_test kill_never_reaches_a_host_process
kill_never_reaches_a_host_process() {
        need_root
        new_sandbox
        # a host process whose pid the sandbox does not have; and the sentry's own
        sleep 330 &
        local host=$! sentry
        at_exit "kill $host 2>/dev/null"
        sentry=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sentryPid"])' \
                "/run/cordon/sandboxes/$ID/meta.json")
        sb kill "$ID" "$host" KILL
        expect_rc 1 "kill of a host pid"
        expect_contains "$ERR" "not a process of sandbox" "the reason"
        sb kill "$ID" "$sentry" KILL
        expect_rc 1 "kill of the sentry's host pid"
        expect_true "the host process is untouched" kill -0 "$host"
        expect_true "the sentry is untouched" kill -0 "$sentry"
        sb exec "$ID" -- true
        expect_rc 0 "the sandbox still works"
}

it_main "$@"
