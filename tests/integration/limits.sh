#!/bin/bash
# cordon integration tests for limits, time-to-live and deterministic cleanup (issue 5): real
# programs pushed against each limit, the built-in limits a plain `cordon run` gets and
# "unlimited" (issue 18), the host's admission policy, and the sentry killed at several points
# followed by `cordon gc`. Run like run.sh:
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

# The directory of sandbox ID's group in the hierarchy that has FILE (v1: one per controller;
# v2 on a hybrid host: the unified one), or nothing.
group_with() { # ID FILE
        local d
        for d in $(find /sys/fs/cgroup -maxdepth 6 -type d -name "cordon-$1" 2>/dev/null); do
                [ -e "$d/$2" ] && {
                        echo "$d"
                        return 0
                }
        done
        return 1
}

# The id of the sandbox a `cordon run -v` in the background reports in its output file.
bg_sandbox_id() { # OUTFILE
        wait_until 10 grep -q 'init is host pid' "$1" || fail "the sandbox did not start: $(cat "$1")"
        sed -n 's/^cordon: sandbox \([0-9a-f]*\), init is host pid.*/\1/p' "$1" | head -1
}

# A memory limit file's value as a number of bytes: v2 says "max" where v1 says a page-aligned
# PAGE_COUNTER_MAX.
mem_limit_of() { # GROUPDIR
        local v
        if [ -e "$1/memory.max" ]; then v=$(cat "$1/memory.max"); else v=$(cat "$1/memory.limit_in_bytes"); fi
        [ "$v" = max ] && v=9223372036854775807
        echo "$v"
}

# Without a flag, a policy or an admission file, a sandbox gets 2 GiB and 1,024 tasks, and both
# -v and `cordon check` say so and where each value came from.
it_test builtin_limits_shown
builtin_limits_shown() {
        need_root
        local pol="$IT_TMP/policy.json"
        crun -v -- true
        expect_rc 0 "a plain run"
        expect_contains "$ERR" "memory 2 GiB (the built-in default)" "-v: the memory default"
        expect_contains "$ERR" "processes 1024 tasks (the built-in default)" "-v: the task default"
        OUT=$("$CORDON" check 2>&1)
        expect_contains "$OUT" "2 GiB (the built-in default)" "cordon check: the memory default"
        expect_contains "$OUT" "1024 tasks (the built-in default)" "cordon check: the task default"
        crun -v --memory 512M --max-processes 300 -- true
        expect_contains "$ERR" "memory 512 MiB (from --memory)" "-v: a flag's memory"
        expect_contains "$ERR" "processes 300 tasks (from --pids)" "-v: --max-processes is --pids"
        printf '{"limits": {"memoryBytes": 268435456, "maxProcesses": "unlimited"}}\n' >"$pol"
        crun -v --policy "$pol" -- true
        expect_rc 0 "a policy with unlimited"
        expect_contains "$ERR" "memory 256 MiB (from the policy)" "-v: the policy's memory"
        expect_contains "$ERR" 'processes none ("unlimited" in the policy)' "-v: the policy lifts the tasks"
        printf '{"limits": {"memoryBytes": "lots"}}\n' >"$pol"
        crun --policy "$pol" -- true
        expect_rc 2 "a policy limit that is neither a number nor unlimited"
        expect_contains "$ERR" 'limits.memoryBytes: expected a positive integer or "unlimited", got "lots"' \
                "names the field"
}

# A fork bomb under a plain `cordon run`: every process forks for ever, and the first one ends
# (status 1) when its own fork is refused. cordon ends with it, says which limit did it, and
# the host's process table is as before.
it_test fork_bomb_stopped_by_default
fork_bomb_stopped_by_default() {
        need_root
        # the marker in every bomb process's command line, for the host to look for afterwards
        local marker="cordon-it-bomb-$$-$RANDOM"
        # the children wait rather than fork on: a bomb whose every process forks is a random
        # walk once the group is full (each exit frees a slot another fork takes), and its first
        # process met its refused fork after 1 s or after more than 30 (2 runs in 15); here the
        # first process fills the group itself and is refused at the 1,024th task
        crun -- python3 -c '
import os, signal
while True:
    try:
        if os.fork() == 0:
            signal.pause()
    except OSError:
        os._exit(1)
' "$marker"
        expect_rc 1 "the bomb's first process, refused a fork"
        expect_contains "$ERR" "cordon: the sandbox reached its process limit (1024 tasks, the built-in default; raise it with --pids N or --pids unlimited)" \
                "cordon names the limit, its source and the flag"
        expect_eq "" "$(pgrep -f "$marker")" "no process of the bomb is left on the host"
        expect_true "the host can still fork" sh -c 'true & wait'
}

# The shell's classic bomb never ends by itself; cordon holds it at 1,024 tasks (read from the
# host, once the group has refused a fork) and, killed, says the limit was reached.
it_test shell_fork_bomb_held
shell_fork_bomb_held() {
        need_root
        local out="$IT_TMP/bomb.out" id dir cur
        bg_cordon "$out" -v -- sh -c 'f(){ f|f& }; f; exec sleep 300'
        id=$(bg_sandbox_id "$out")
        dir=$(group_with "$id" pids.events) || fail "no pids group for sandbox $id"
        wait_until 60 grep -q '^max [1-9]' "$dir/pids.events" || fail "the bomb never reached the limit: $(cat "$dir/pids.events")"
        cur=$(cat "$dir/pids.current")
        expect_true "at most 1024 tasks in the group (got $cur)" test "$cur" -le 1024
        expect_eq 1024 "$(cat "$dir/pids.max")" "the group's pids.max"
        kill "$BG_CORDON"
        wait "$BG_PID"
        RC=$?
        expect_true "cordon ends non-zero (got $RC)" test "$RC" -ne 0 -a "$RC" -ne 124
        expect_contains "$(cat "$out")" "reached its process limit (1024 tasks, the built-in default; raise it with --pids N" \
                "cordon names the limit"
        expect_eq "" "$(find /sys/fs/cgroup -maxdepth 6 -type d -name "cordon-$id" 2>/dev/null)" "the groups are gone"
}

# A memory bomb under a plain `cordon run`: killed at the 2 GiB default, said with the flag to
# raise it.
it_test memory_bomb_stopped_by_default
memory_bomb_stopped_by_default() {
        need_root
        local stats="$IT_TMP/stats.json"
        # filling 2 GiB takes seconds, more on a loaded host: a longer bound than other commands'
        IT_CMD_TIMEOUT=50 crun --stats "$stats" -- python3 -c '
b = []
while True:
    b.append(bytearray(64 << 20))
'
        expect_rc 137 "the bomb is SIGKILLed"
        expect_contains "$ERR" "cordon: the command was killed: out of memory (limit 2 GiB, the built-in default; raise it with --memory SIZE or --memory unlimited)" \
                "cordon names the limit, its source and the flag"
        expect_eq oom "$(json_field "$stats" exitReason)" "stats exitReason"
        expect_true "it peaked at the limit (got $(json_field "$stats" memoryPeakBytes))" \
                test "$(json_field "$stats" memoryPeakBytes)" -le $((2 << 30))
}

# "unlimited" lifts the defaults for real: the group's own limit files, read from the host while
# the sandbox runs, against a plain run's.
it_test unlimited_lifts_the_defaults
unlimited_lifts_the_defaults() {
        need_root
        local out="$IT_TMP/bg.out" id mem pids how
        for how in default unlimited; do
                if [ "$how" = default ]; then
                        bg_cordon "$out" -v -- sh -c 'echo up; sleep 30'
                else
                        bg_cordon "$out" -v --memory unlimited --pids unlimited -- sh -c 'echo up; sleep 30'
                fi
                id=$(bg_sandbox_id "$out")
                wait_until 10 grep -qx up "$out" || fail "the sandbox did not start"
                mem=$(group_with "$id" memory.max || group_with "$id" memory.limit_in_bytes) ||
                        fail "no memory group for sandbox $id"
                pids=$(group_with "$id" pids.max) || fail "no pids group for sandbox $id"
                if [ "$how" = default ]; then
                        expect_eq 2147483648 "$(mem_limit_of "$mem")" "the default's memory limit file"
                        expect_eq 1024 "$(cat "$pids/pids.max")" "the default's pids.max"
                else
                        expect_true "no memory limit with --memory unlimited (got $(mem_limit_of "$mem"))" \
                                test "$(mem_limit_of "$mem")" -gt $((1 << 62))
                        expect_eq max "$(cat "$pids/pids.max")" "pids.max with --pids unlimited"
                        expect_contains "$(cat "$out")" "memory none (--memory unlimited)" "-v says it"
                        expect_contains "$(cat "$out")" "processes none (--pids unlimited)" "-v says it"
                fi
                kill "$BG_CORDON"
                wait "$BG_PID" 2>/dev/null
        done
}

# An unprivileged user here has no cgroup of their own: the defaults cannot be applied, the run
# still starts (as a run without limits always has), and -v says the defaults are absent
# rather than claim them.
it_test defaults_absent_without_cgroups_said
defaults_absent_without_cgroups_said() {
        need_root
        command -v setpriv >/dev/null || skip "setpriv is not installed"
        local bin="$IT_TMP/bin" err
        mkdir -p "$bin" && chmod 0755 "$IT_TMP" "$bin" && cp "$CORDON" "$bin/cordon" && chmod 0755 "$bin/cordon" ||
                fail "cannot copy cordon to $bin"
        err=$(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups -- timeout 30 "$bin/cordon" run -v -- true 2>&1)
        RC=$?
        printf '%s\n' "$err" | sed 's/^/  stderr| /' | head -40 >&2
        expect_rc 0 "an unprivileged plain run"
        if printf '%s\n' "$err" | grep -q 'cgroup none'; then
                expect_contains "$err" "memory none (the built-in default of 2 GiB cannot be applied on this host)" \
                        "-v: the memory default absent"
                expect_contains "$err" "cannot be applied on this host (" "-v: and why"
                expect_not_contains "$err" "(the built-in default)" "nothing claims a default it lacks"
        else
                expect_contains "$err" "memory 2 GiB (the built-in default)" "a delegated group has the default"
        fi
        # a limit asked for is never dropped: no group, no start
        err=$(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups -- timeout 30 "$bin/cordon" run --memory 1G -- echo ran 2>&1)
        RC=$?
        if printf '%s\n' "$err" | grep -q 'refusing to start'; then
                expect_rc 125 "an explicit limit that cannot be applied"
                expect_not_contains "$err" "ran" "the command must not run"
        fi
}

it_test memory_hog_oom
memory_hog_oom() {
        need_root
        local stats="$IT_TMP/stats.json"
        crun --memory 64M --stats "$stats" -- python3 -c 'b = bytearray(512 << 20); print("survived")'
        expect_rc 137 "the hog is SIGKILLed"
        expect_not_contains "$OUT" "survived" "the allocation must not succeed"
        expect_contains "$ERR" "out of memory" "cordon says why"
        expect_contains "$ERR" "(limit 64 MiB, from --memory; raise it with --memory SIZE" "names the flag's limit"
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
        crun --pids 0 -- true
        expect_rc 2 "--pids 0"
        expect_contains "$ERR" "--pids 0: expected a positive integer, or unlimited" "names the option"
        crun --max-processes many -- true
        expect_rc 2 "--max-processes many"
        expect_contains "$ERR" "--max-processes many" "names the option as given"
        crun --memory Unlimited -- true
        expect_rc 2 "the word is lower case"
        crun --timeout unlimited --nofile unlimited --cpus unlimited --disk unlimited -- true
        expect_rc 0 "every limit flag takes unlimited"
}

it_test admission_refusals
# The sandboxes alive host-wide: claims some sentry holds locked (sentry/state.c).
live_claims() {
        local f n=0
        for f in /run/cordon/claims/*; do
                [ -e "$f" ] || continue
                flock -n "$f" true 2>/dev/null || n=$((n + 1))
        done
        echo "$n"
}
no_live_claims() { [ "$(live_claims)" = 0 ]; }

admission_refusals() {
        need_root
        local adm="$IT_TMP/admission.json" out="$IT_TMP/bg.out"
        # maxConcurrentSandboxes counts every live sandbox on the host: the runners before this
        # one may still be tearing theirs down (podman's --rm cleanup runs after `podman run`
        # returns; a sanitizer build is slower); a minute is long enough, and what still lives
        # then is named
        wait_until 60 no_live_claims ||
                fail "sandboxes still alive on the host before the test: $(live_claims) ($(ls /run/cordon/claims /run/cordon/sandboxes 2>/dev/null | tr '\n' ' '))"
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
        expect_contains "$ERR" "(limit 128 MiB, the host's maximum in $adm; only the host's administrator can raise it" \
                "names the admission file"
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
