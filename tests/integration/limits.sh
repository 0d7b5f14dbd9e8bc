#!/bin/bash
# cordon integration tests for limits, time-to-live and deterministic cleanup (issue 5): real
# programs pushed against each limit, the host's admission policy, and the sentry killed at
# several points followed by `cordon gc`. Run like run.sh:
#
#   CORDON=/path/to/cordon TESTS_SRCDIR=/path/to/tests bash tests/integration/limits.sh [REGEX...]
if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

IT_SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$IT_SCRIPT")/lib.sh"

need_root() { [ "$(id -u)" = 0 ] || skip "cgroup limits need root on this host"; }

# every cordon cgroup and state directory on the host (none may outlive its sandbox)
leftovers() {
        find /sys/fs/cgroup -maxdepth 6 -type d -name 'cordon-*' 2>/dev/null
        find /run/cordon/sandboxes -mindepth 1 -maxdepth 1 2>/dev/null
}

json_field() { # FILE KEY
        "$(command -v /usr/bin/python3 || command -v python3)" -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print(json.dumps(v) if isinstance(v,(dict,list)) else v)' "$1" "$2"
}

it_test memory_hog_oom
memory_hog_oom() {
        need_root
        local stats="$IT_TMP/stats.json"
        crun --memory 64M --stats "$stats" -- python3 -c 'b = bytearray(512 << 20); print("survived")'
        expect_rc 137 "the hog is SIGKILLed"
        expect_not_contains "$OUT" "survived" "the allocation must not succeed"
        expect_contains "$ERR" "out of memory" "cordon says why"
        expect_eq oom "$(json_field "$stats" exitReason)" "stats exitReason"
        expect_true "oomKills >= 1" test "$(json_field "$stats" oomKills)" -ge 1
        # the same program under no limit is fine (the host had the memory)
        crun -- python3 -c 'b = bytearray(64 << 20); print("fine")'
        expect_rc 0 "without a limit"
}

it_test fork_bomb_bounded
fork_bomb_bounded() {
        need_root
        local before after
        before=$(ls -d /proc/[0-9]* | wc -l)
        # shellcheck disable=SC2016
        crun --pids 16 -- python3 -c '
import errno, os, signal, time
kids = []
try:
    for i in range(200):
        pid = os.fork()
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        kids.append(pid)
    print("forked", len(kids))
except OSError as e:
    print("stopped after", len(kids), errno.errorcode[e.errno])
for k in kids:
    os.kill(k, signal.SIGKILL)
'
        expect_rc 0 "the bomb's parent"
        expect_match "$OUT" '^stopped after ([0-9]|1[0-5]) EAGAIN$' "fork fails with EAGAIN below the limit"
        after=$(ls -d /proc/[0-9]* | wc -l)
        expect_true "the host's process count is unaffected ($before before, $after after)" test "$after" -lt $((before + 10))
}

it_test disk_filler_enospc
disk_filler_enospc() {
        need_root
        local stats="$IT_TMP/stats.json"
        # shellcheck disable=SC2016
        crun --disk 8M --stats "$stats" -- sh -c '
dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>&1 | grep -m1 "No space left" 
echo more > /root/x || echo "home: full"
echo more > /dev/shm/x || echo "shm: full"
rm -f /tmp/fill; dd if=/dev/zero of=/tmp/fill bs=1M count=4 2>/dev/null && echo "after rm: ok"'
        expect_rc 0 "the filler"
        expect_contains "$OUT" "No space left on device" "dd hits ENOSPC"
        expect_contains "$OUT" "home: full" "home shares the cap"
        expect_contains "$OUT" "shm: full" "/dev/shm shares the cap"
        expect_contains "$OUT" "after rm: ok" "space comes back after rm"
        expect_true "writableBytesUsed is about 4 MiB" test "$(json_field "$stats" writableBytesUsed)" -ge $((4 << 20))
}

it_test cpu_half_throttled
cpu_half_throttled() {
        need_root
        local stats="$IT_TMP/stats.json"
        crun --cpus 0.5 --stats "$stats" -- python3 -c '
import time
end = time.monotonic() + 1.5
while time.monotonic() < end:
    pass'
        expect_rc 0 "the busy loop"
        # the cgroup's own counters, not wall time: throttled in most 100 ms periods
        local periods throttled
        throttled=$(json_field "$stats" cpuThrottledPeriods)
        expect_true "throttled periods > 5 (got $throttled)" test "$throttled" -gt 5
        periods=$(json_field "$stats" cpuTimeUsec)
        expect_true "CPU time well under the 1.5 s of wall time (got $periods us)" test "$periods" -lt 1200000
}

it_test timeout_kills_everything
timeout_kills_everything() {
        local stats="$IT_TMP/stats.json" start end
        start=$(date +%s%N)
        crun --timeout 1s --stats "$stats" -- sh -c 'sleep 60 & sleep 60 & sleep 60'
        end=$(date +%s%N)
        expect_rc 124 "exit status after the timeout"
        expect_contains "$ERR" "timeout" "cordon says why"
        expect_eq timeout "$(json_field "$stats" exitReason)" "stats exitReason"
        expect_true "it ended within 10 s" test $(((end - start) / 1000000)) -lt 10000
}

it_test expires_at_kills
expires_at_kills() {
        local pol="$IT_TMP/policy.json" when
        when=$(date -u -d '+2 seconds' +%Y-%m-%dT%H:%M:%SZ)
        printf '{"expiresAt": "%s"}\n' "$when" >"$pol"
        crun --policy "$pol" -- sleep 60
        expect_rc 124 "exit status at expiry"
        expect_contains "$ERR" "expiry" "cordon says why"
        printf '{"expiresAt": "2001-01-01T00:00:00Z"}\n' >"$pol"
        crun --policy "$pol" -- echo never
        expect_rc 2 "an expiry in the past"
        expect_not_contains "$OUT" "never" "the command must not run"
}

it_test nofile_limit
nofile_limit() {
        crun --nofile 64 -- sh -c 'ulimit -n; ulimit -c'
        expect_rc 0 "ulimit"
        expect_eq $'64\n0' "$OUT" "open files and core size"
        local pol="$IT_TMP/policy.json"
        printf '{"limits": {"maxOpenFiles": 100}}\n' >"$pol"
        crun --policy "$pol" --nofile 200 -- sh -c 'ulimit -n'
        expect_eq 100 "$OUT" "the stricter of policy and command line wins"
}

it_test bad_limit_options
bad_limit_options() {
        crun --memory lots -- true
        expect_rc 2 "--memory lots"
        expect_contains "$ERR" "--memory lots" "names the option"
        crun --timeout 5x -- true
        expect_rc 2 "--timeout 5x"
        crun --cpus -1 -- true
        expect_rc 2 "--cpus -1"
}

it_test admission_refusals
admission_refusals() {
        need_root
        local adm="$IT_TMP/admission.json" out="$IT_TMP/bg.out"
        printf '{"maxPerSandbox": {"memoryBytes": 134217728, "timeoutMs": 60000}, "maxConcurrentSandboxes": 1}\n' >"$adm"
        crun --admission "$adm" --memory 1G -- echo ran
        expect_rc 3 "a request over the maximum"
        expect_contains "$ERR" "quota: memoryBytes 1073741824 exceeds the host's maximum 134217728" "message"
        expect_not_contains "$OUT" "ran" "the command must not run"
        crun --admission "$adm" --timeout 2m -- true
        expect_rc 3 "a timeout over the maximum"
        expect_contains "$ERR" "timeoutMs 120000 exceeds" "message"
        # no memory requested: the host's maximum applies (the hog dies at 128 MiB)
        crun --admission "$adm" -- python3 -c 'b = bytearray(512 << 20); print("survived")'
        expect_rc 137 "the maximum is the default"
        # one sandbox at a time: the second is refused at once, not queued
        bg_cordon "$out" --admission "$adm" -- sh -c 'echo up; sleep 20'
        wait_until 10 grep -qx up "$out" || fail "the first sandbox did not start"
        crun --admission "$adm" -- echo second
        expect_rc 3 "a second concurrent sandbox"
        expect_contains "$ERR" "maxConcurrentSandboxes 1 reached" "message"
        kill "$BG_CORDON"
        wait "$BG_PID"
        crun --admission "$adm" -- echo again
        expect_rc 0 "after the first ended"
        printf '{"maxPerSandbox": {"memoryBytes": "1G"}}\n' >"$adm"
        crun --admission "$adm" -- true
        expect_rc 2 "a malformed admission file"
        expect_contains "$ERR" "maxPerSandbox.memoryBytes" "names the key"
}

it_test stats_contents
stats_contents() {
        local stats="$IT_TMP/stats.json"
        crun --stats "$stats" -- sh -c 'for i in 1 2 3; do cat /etc/hostname > /tmp/f$i; done; head -c 100000 /dev/zero > /tmp/big'
        expect_rc 0 "the command"
        expect_eq exited "$(json_field "$stats" exitReason)" "exitReason"
        expect_eq 0 "$(json_field "$stats" exitCode)" "exitCode"
        expect_true "tasksStarted >= 4" test "$(json_field "$stats" tasksStarted)" -ge 4
        expect_true "trapped openat > 3" test "$("$(command -v /usr/bin/python3 || command -v python3)" -c 'import json,sys; print(json.load(open(sys.argv[1]))["trappedSyscalls"]["openat"])' "$stats")" -gt 3
        expect_true "writableBytesUsed >= 100000" test "$(json_field "$stats" writableBytesUsed)" -ge 100000
        if [ "$(id -u)" = 0 ]; then
                expect_true "cpuTimeUsec > 0" test "$(json_field "$stats" cpuTimeUsec)" -gt 0
                expect_true "memoryPeakBytes > 0" test "$(json_field "$stats" memoryPeakBytes)" -gt 0
        fi
}

it_test cgroup_v2_path
cgroup_v2_path() {
        need_root
        grep -q ' cgroup2 ' /proc/mounts || skip "no cgroup2 hierarchy on this host"
        local stats="$IT_TMP/stats.json"
        crun --cgroup v2 --stats "$stats" -- python3 -c '
import time
end = time.monotonic() + 0.3
while time.monotonic() < end:
    pass'
        expect_rc 0 "a run tracked by the v2 hierarchy"
        expect_eq v2 "$(json_field "$stats" cgroup)" "backend"
        expect_true "v2 cpu.stat usage > 100 ms" test "$(json_field "$stats" cpuTimeUsec)" -gt 100000
        if ! grep -qw memory /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null && [ -d /sys/fs/cgroup/unified ]; then
                # this host's memory controller is bound to v1: v2 must refuse, not ignore
                crun --cgroup v2 --memory 64M -- echo ran
                expect_rc 125 "a memory limit the v2 hierarchy cannot enforce"
                expect_contains "$ERR" "memoryBytes" "names the limit"
                expect_not_contains "$OUT" "ran" "the command must not run"
        fi
        crun --cgroup v1 --stats "$stats" -- true
        expect_rc 0 "the v1 backend"
        expect_eq v1 "$(json_field "$stats" cgroup)" "backend"
}

# Without a CPU limit the sandbox stays in the sentry's own group of the v1 cpu
# controller: a group there is a scheduler group of its own, and with the
# sandbox in one and the sentry outside it, every trapped call answered with
# an fd costs a migration to the other CPU and back (bench/micro/floor.c).
# The CPU time is then counted by the v2 group.
it_test cpu_group_only_for_a_cpu_limit
cpu_group_only_for_a_cpu_limit() {
        need_root
        grep -qE '^[0-9]+:([^:]*,)?cpu(,[^:]*)?:' /proc/self/cgroup || skip "no cgroup v1 cpu hierarchy on this host"
        local out="$IT_TMP/cpu.out" mine pid theirs stats="$IT_TMP/stats.json"
        mine=$(grep -E '^[0-9]+:([^:]*,)?cpu(,[^:]*)?:' /proc/self/cgroup)
        for lim in none 1; do
                if [ "$lim" = none ]; then
                        bg_cordon "$out" --cgroup v1 -- sh -c 'echo up; sleep 30; : cpu-group-probe'
                else
                        bg_cordon "$out" --cgroup v1 --cpus "$lim" -- sh -c 'echo up; sleep 30; : cpu-group-probe'
                fi
                wait_until 10 grep -qx up "$out" || fail "the sandbox did not start: $(cat "$out")"
                # the sandboxed shell itself (^sh), not cordon's or timeout's command line
                pid=$(pgrep -f '^sh -c echo up; sleep 30; : cpu-group-prob[e]' | head -1)
                [ -n "$pid" ] || fail "no sandboxed shell found"
                theirs=$(grep -E '^[0-9]+:([^:]*,)?cpu(,[^:]*)?:' "/proc/$pid/cgroup")
                if [ "$lim" = none ]; then
                        expect_eq "$mine" "$theirs" "the sandbox's cpu group without a CPU limit"
                else
                        expect_contains "$theirs" "cordon-" "the sandbox's cpu group with --cpus $lim"
                fi
                kill "$BG_PID"
                wait "$BG_PID" 2>/dev/null
                wait_until 5 sh -c "! pgrep -f '^sh -c echo up; sleep 30; : cpu-group-prob[e]' >/dev/null" ||
                        fail "the sandbox outlived its sentry"
        done
        if [ -d /sys/fs/cgroup/unified ] || grep -q ' cgroup2 ' /proc/mounts; then
                crun --cgroup v1 --stats "$stats" -- python3 -c '
import time
end = time.monotonic() + 0.3
while time.monotonic() < end:
    pass'
                expect_rc 0 "a busy run on the v1 backend"
                expect_true "CPU time counted without a cpu group (got $(json_field "$stats" cpuTimeUsec))" \
                        test "$(json_field "$stats" cpuTimeUsec)" -gt 100000
        fi
}

it_test nothing_left_behind
nothing_left_behind() {
        need_root
        local l
        crun --memory 64M --pids 32 --cpus 1 --disk 16M -- sh -c 'sleep 1 & echo done'
        expect_rc 0 "a run with every limit"
        l=$(leftovers)
        expect_eq "" "$l" "cgroups or state left after a normal exit"
        crun --memory 64M -- sh -c 'kill -9 $$'
        l=$(leftovers)
        expect_eq "" "$l" "after a signal death"
}

# The sentry SIGKILLed at a point: during start (after its cgroup and state exist, before
# the child), while the command runs, and during teardown. Then no process of the sandbox may
# remain, and after `cordon gc` no cgroup or state directory either.
kill_sentry_at() {
        local point=$1 marker=$2 out="$IT_TMP/$point.out"
        if [ "$point" = running ]; then
                bg_cordon "$out" --memory 64M -- sh -c "echo up; sleep 30 #$marker"
                wait_until 10 grep -qx up "$out" || fail "the sandbox did not start"
        else
                CORDON_TEST_STALL=$point bg_cordon "$out" --memory 64M -- sh -c "echo up; sleep 0.2 #$marker"
                wait_until 10 grep -q "stalled at $point" "$out" || fail "cordon did not reach $point: $(cat "$out")"
        fi
        kill -9 "$BG_CORDON"
        wait "$BG_PID" 2>/dev/null
        # [c]... keeps pgrep from matching the shell that runs it
        wait_until 5 sh -c "! pgrep -f '[c]${marker#c}' >/dev/null" ||
                fail "processes of the sandbox survived ($point): $(pgrep -af "[c]${marker#c}")"
}

# A sentry killed in its teardown (its state directory already gone, its groups not yet)
# leaves only its groups and its claim: the next sandbox's own start (a quiet gc, which
# scans the groups only when it drops a dead sentry's claim) collects them, no `cordon gc`.
it_test killed_in_teardown_collected_by_next_run
killed_in_teardown_collected_by_next_run() {
        need_root
        local point=teardown # kill_sentry_at's out= expands $point before its own local
        "$CORDON" gc >/dev/null 2>&1
        kill_sentry_at "$point" "cordon-it-fault-$$-next-run"
        expect_true "groups are left after the kill" sh -c "find /sys/fs/cgroup -maxdepth 6 -type d -name 'cordon-*' | grep -q ."
        crun -- true
        expect_rc 0 "the next run"
        expect_eq "" "$(leftovers)" "cgroups or state left after the next run"
}

it_test sentry_killed_then_gc
sentry_killed_then_gc() {
        need_root
        local point i l
        for i in 1 2; do
                for point in start running teardown; do
                        kill_sentry_at "$point" "cordon-it-fault-$$-$i-$point"
                done
        done
        OUT=$("$CORDON" gc 2>&1)
        RC=$?
        expect_rc 0 "cordon gc"
        l=$(leftovers)
        expect_eq "" "$l" "cgroups or state left after cordon gc"
        OUT=$("$CORDON" gc 2>&1)
        expect_contains "$OUT" "removed 0 item" "a second gc has nothing to do"
}

it_test gc_spares_live_sandbox
gc_spares_live_sandbox() {
        need_root
        local out="$IT_TMP/bg.out"
        bg_cordon "$out" --memory 64M -- sh -c 'echo up; sleep 3; echo still-here'
        wait_until 10 grep -qx up "$out" || fail "the sandbox did not start"
        "$CORDON" gc >/dev/null 2>&1
        wait "$BG_PID"
        RC=$?
        expect_rc 0 "the live sandbox"
        expect_contains "$(cat "$out")" "still-here" "gc must not touch a live sandbox"
}

# An unprivileged user's cordon (its gc runs at every start) must not take root's live
# sandboxes for garbage: their processes run as host uid 65534, which that user may signal.
it_test gc_by_other_user_spares_root_sandbox
gc_by_other_user_spares_root_sandbox() {
        need_root
        command -v setpriv >/dev/null || skip "setpriv is not installed"
        local out="$IT_TMP/bg.out" bin="$IT_TMP/bin"
        mkdir -p "$bin" && chmod 0755 "$IT_TMP" "$bin" && cp "$CORDON" "$bin/cordon" && chmod 0755 "$bin/cordon" ||
                fail "cannot copy cordon to $bin"
        bg_cordon "$out" --memory 64M -- sh -c 'echo up; sleep 2; echo still-here'
        wait_until 10 grep -qx up "$out" || fail "the sandbox did not start"
        (cd / && setpriv --reuid=65534 --regid=65534 --clear-groups -- "$bin/cordon" gc) >/dev/null 2>&1
        wait "$BG_PID"
        RC=$?
        expect_rc 0 "root's sandbox while uid 65534 ran cordon gc"
        expect_contains "$(cat "$out")" "still-here" "the sandbox must run to its end"
}

it_main "$@"
