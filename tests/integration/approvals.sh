#!/bin/bash
# cordon integration tests for human approval of high-risk calls (issue #10): a policy rule with
# "action": "ask" holds the calling thread of a real program inside a sandbox until
# `cordon sandbox approve|deny` (or, for `cordon run --approve-interactive`, a person at the
# terminal) decides, or the request expires. Run like run.sh:
#
#   CORDON=/path/to/cordon HELPERS=/path/to/build/tests/helpers TESTS_SRCDIR=/path/to/tests \
#       bash tests/integration/approvals.sh [REGEX...]
#
# Fixture for the egress tests (set up once; removed on exit): a network namespace
# cordon-ap-PID joined to the host by a veth pair, host side 10.214.N.1/30, namespace side
# 10.214.N.2/30 (N in 1..250, free on the host), with an HTTPS server for upstream.cordon.test
# on port 443 (certificate from a test CA made here) serving a random token. The policies list
# upstream.cordon.test:443 with "action": "ask" and map it to 10.214.N.2 through
# testing.hostsFile and testing.allowPrivateNetworks. No traffic leaves for anywhere but that
# namespace. The egress tests skip without root, ip(8), openssl or python3; the others need
# root (the sandbox state under /run/cordon) and python3 (the clients inside the sandbox).
if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

IT_SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$IT_SCRIPT")/lib.sh"

UPSTREAM=upstream.cordon.test
STATE=/run/cordon/sandboxes

need_root() { [ "$(id -u)" = 0 ] || skip "these tests read the sandbox's state as root"; }
need_py() { [ -x /usr/bin/python3 ] || skip "no /usr/bin/python3 for the programs inside the sandbox"; }

# job_dirs: a host directory bound at /job: out/ (writes ask), free/ (no rule), bin/ (execs
# ask; holds a copy of /usr/bin/id); sets JOB
job_dirs() {
        JOB=$(scratch_dir job) || exit $?
        mkdir -p "$JOB/out" "$JOB/free" "$JOB/bin" && chmod 0777 "$JOB/out" "$JOB/free" "$JOB/bin" ||
                fail "cannot make the job directories"
        cp /usr/bin/id "$JOB/bin/id" && chmod 0755 "$JOB/bin/id" || fail "cannot copy /usr/bin/id"
}

# fs_policy FILE [TIMEOUT_MS]: /job bound read-write, writes under /job/out and execs under
# /job/bin ask
fs_policy() {
        local t=${2:-60000}
        cat >"$1" <<EOF
{"filesystem": {"binds": [{"source": "$JOB", "target": "/job"}],
                "rules": [{"path": "/job/out", "access": "read-write", "action": "ask"},
                          {"path": "/job/bin", "access": "read", "exec": true, "action": "ask"}]},
 "approvalTimeoutMs": $t}
EOF
}

# pending_count ID: how many requests wait
pending_count() {
        timeout 10 "$CORDON" sandbox pending "$1" --json 2>/dev/null |
                python3 -c 'import json,sys; print(len(json.load(sys.stdin)))' 2>/dev/null || echo -1
}
has_pending() { [ "$(pending_count "$1")" -ge "$2" ]; }
none_pending() { [ "$(pending_count "$ID")" = 0 ]; }

# pending_field ID INDEX KEY: a field of the INDEXth pending request
pending_field() {
        timeout 10 "$CORDON" sandbox pending "$1" --json |
                python3 -c 'import json,sys; print(json.load(sys.stdin)[int(sys.argv[1])][sys.argv[2]])' "$2" "$3"
}

# events_of ID TYPE [KEY=VALUE...]: the events of that type (JSON lines) matching all conditions;
# a KEY of a.b reaches into a nested object
events_of() {
        local id=$1 type=$2
        shift 2
        timeout 10 "$CORDON" sandbox events "$id" --json | python3 -c '
import json, sys
t, conds = sys.argv[1], [c.split("=", 1) for c in sys.argv[2:]]
def get(e, k):
    for part in k.split("."):
        e = e.get(part) if isinstance(e, dict) else None
    return e
for line in sys.stdin:
    e = json.loads(line)
    if e.get("type") != t:
        continue
    if all(str(get(e, k)) == v for k, v in conds):
        print(line.rstrip())
' "$type" "$@"
}

expect_event() { # ID WHAT TYPE KEY=VALUE...
        local id=$1 what=$2 got
        shift 2
        got=$(events_of "$id" "$@")
        if [ -z "$got" ]; then
                _it_soft_fail "no $1 event with ${*:2} ($what); events: $(_it_short "$(timeout 10 "$CORDON" sandbox events "$id" --json | tail -n 8)")"
                return 1
        fi
}

# next_pending: waits (10 s at most) until a request is pending (0) or the background exec has
# ended (1)
next_pending() {
        local i
        for i in $(seq 100); do
                has_pending "$ID" 1 && return 0
                kill -0 "$BG" 2>/dev/null || return 1
                sleep 0.1
        done
        return 1
}

# bg_exec OUTFILE ID CMD...: `sandbox exec` in the background; sets BG
bg_exec() {
        local out=$1
        shift
        printf '+ (background) cordon sandbox exec %s\n' "$*" >&2
        timeout -k 5 "$IT_CMD_TIMEOUT" "$CORDON" sandbox exec "$@" >"$out" 2>&1 </dev/null &
        BG=$!
        at_exit "kill $BG"
}

# =============================================================================================
# writes

it_test write_approve
write_approve() {
        need_root
        job_dirs
        fs_policy "$IT_TMP/p.json"
        new_sandbox --policy "$IT_TMP/p.json"
        # outside the ask rule nothing waits
        sb exec "$ID" -- sh -c 'echo free > /job/free/f && echo written'
        expect_eq written "$OUT" "a write outside the ask rule"
        expect_eq 0 "$(pending_count "$ID")" "nothing pending for it"

        bg_exec "$IT_TMP/e.out" "$ID" -- sh -c 'echo approved-content > /job/out/a; echo "rc=$?"'
        wait_until 10 has_pending "$ID" 1 || fail "no pending request appeared"
        expect_true "the shell waits: nothing written yet" test ! -e "$JOB/out/a"
        local req
        req=$(pending_field "$ID" 0 request)
        expect_eq /job/out/a "$(pending_field "$ID" 0 target)" "the pending request's target"
        expect_eq write "$(pending_field "$ID" 0 capability)" "its capability"
        expect_event "$ID" "approval_required event" approval_required request="$req" capability=write \
                target=/job/out/a summary.syscall=openat
        expect_match "$(events_of "$ID" approval_required request="$req")" '"cmdline":"sh -c echo approved-content' \
                "the summary has the process's command line"
        expect_match "$(events_of "$ID" approval_required request="$req")" '"expiresAt":"20[0-9-]+T' "an expiry time"
        expect_match "$(events_of "$ID" approval_required request="$req")" '"run":"r[0-9]+"' "the run it belongs to"
        sb approve "$ID" "$req"
        expect_rc 0 "approve"
        wait "$BG"
        expect_eq "rc=0" "$(cat "$IT_TMP/e.out")" "the shell's write succeeded"
        expect_eq approved-content "$(cat "$JOB/out/a" 2>/dev/null)" "the file was written on the host"
        expect_event "$ID" "approval_decided" approval_decided request="$req" decision=approved
        expect_match "$(events_of "$ID" approval_decided request="$req")" '"decidedBy":"uid 0 pid [0-9]+"' \
                "who decided: the client's uid and pid"
        expect_event "$ID" "the audit record" audit record.reason=approval_approved record.request="$req" \
                record.decision=allow
        expect_eq 0 "$(pending_count "$ID")" "nothing pending afterwards"
        # the same path again asks again (no --remember)
        bg_exec "$IT_TMP/e2.out" "$ID" -- sh -c 'echo again > /job/out/a; echo "rc=$?"'
        wait_until 10 has_pending "$ID" 1 || fail "the second write did not ask again"
        sb deny "$ID" "$(pending_field "$ID" 0 request)"
        wait "$BG"
        expect_contains "$(cat "$IT_TMP/e2.out")" "rc=2" "the denied write failed"
}

it_test write_deny
write_deny() {
        need_root
        job_dirs
        fs_policy "$IT_TMP/p.json"
        new_sandbox --policy "$IT_TMP/p.json"
        bg_exec "$IT_TMP/e.out" "$ID" -- sh -c 'echo x > /job/out/d; echo "rc=$?"; mkdir /job/out/dir; echo "mkdir=$?"'
        wait_until 10 has_pending "$ID" 1 || fail "no pending request appeared"
        sb deny "$ID" "$(pending_field "$ID" 0 request)"
        expect_rc 0 "deny"
        # mkdir beneath the rule asks too
        wait_until 10 has_pending "$ID" 1 || fail "mkdir did not ask"
        expect_eq /job/out/dir "$(pending_field "$ID" 0 target)" "mkdir's target"
        sb deny "$ID" "$(pending_field "$ID" 0 request)"
        wait "$BG"
        local out
        out=$(cat "$IT_TMP/e.out")
        expect_contains "$out" "Permission denied" "the program sees EACCES"
        expect_contains "$out" "rc=2" "the write failed"
        expect_contains "$out" "mkdir=1" "mkdir failed"
        expect_true "nothing was written" test ! -e "$JOB/out/d" -a ! -e "$JOB/out/dir"
        expect_event "$ID" "denied" approval_decided target=/job/out/d decision=denied
        expect_event "$ID" "the audit record" audit record.reason=approval_denied record.decision=deny
        sb deny "$ID" q999
        expect_true "deny of an unknown request fails" test "$RC" != 0
        expect_contains "$ERR" "no pending request q999" "and says so"
}

# the calls that change a file without opening it ask too (they are trapped for a write ask
# rule), while calls that only read stay native
it_test other_writes_ask
other_writes_ask() {
        need_root
        job_dirs
        fs_policy "$IT_TMP/p.json"
        echo precious >"$JOB/out/pre"
        chmod 0666 "$JOB/out/pre"
        new_sandbox --policy "$IT_TMP/p.json"
        sb exec "$ID" -- sh -c 'cat /job/out/pre; ls /job/out; stat -c %s /job/out/pre'
        expect_eq $'precious\npre\n9' "$OUT" "reads beneath the rule do not ask"
        bg_exec "$IT_TMP/e.out" "$ID" -- sh -c 'rm -f /job/out/pre; echo "rm=$?"; chmod 600 /job/out/pre; echo "chmod=$?";
                mv /job/out/pre /job/free/pre; echo "mv=$?"; ln /job/out/pre /job/free/hl; echo "ln=$?";
                touch -d 2001-01-01 /job/out/pre; echo "touch=$?"'
        # deny whatever asks until the shell is done (touch asks twice: its open, then utimensat)
        local seen="" i t
        for i in $(seq 12); do
                next_pending || break
                t=$(pending_field "$ID" 0 target)
                seen="$seen $t"
                sb deny "$ID" "$(pending_field "$ID" 0 request)"
        done
        wait "$BG"
        local out
        out=$(cat "$IT_TMP/e.out")
        for t in rm chmod mv ln touch; do
                expect_match "$out" "^$t=[1-9]" "$t beneath the rule was denied"
        done
        expect_eq " /job/out/pre /job/out/pre /job/out/pre /job/out/pre /job/out/pre /job/out/pre" "$seen" \
                "each asked about the file (rm, chmod, mv, ln, touch's open and its utimensat)"
        expect_eq precious "$(cat "$JOB/out/pre")" "the file is intact"
        expect_eq 666 "$(stat -c %a "$JOB/out/pre")" "its mode unchanged"
        expect_true "no link or copy appeared outside" test ! -e "$JOB/free/pre" -a ! -e "$JOB/free/hl"
}

it_test write_expires
write_expires() {
        need_root
        job_dirs
        fs_policy "$IT_TMP/p.json" 1500
        new_sandbox --policy "$IT_TMP/p.json"
        local t0 t1
        t0=$(date +%s%N)
        sb exec "$ID" -- sh -c 'echo late > /job/out/e; echo "rc=$?"'
        t1=$(date +%s%N)
        expect_contains "$OUT" "rc=2" "the write failed once expired"
        expect_true "it waited for the expiry ($(((t1 - t0) / 1000000)) ms)" test $(((t1 - t0) / 1000000)) -ge 1400
        expect_true "and not much longer ($(((t1 - t0) / 1000000)) ms)" test $(((t1 - t0) / 1000000)) -lt 10000
        expect_true "nothing was written" test ! -e "$JOB/out/e"
        expect_event "$ID" "expired" approval_decided target=/job/out/e decision=expired decidedBy=timeout
        expect_event "$ID" "the audit record" audit record.reason=approval_expired record.decidedBy=timeout
        expect_eq 0 "$(pending_count "$ID")" "nothing pending"
        sb approve "$ID" "$(events_of "$ID" approval_required | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["request"])')"
        expect_true "an expired request cannot be approved any more" test "$RC" != 0
}

it_test write_remember
write_remember() {
        need_root
        job_dirs
        fs_policy "$IT_TMP/p.json"
        new_sandbox --policy "$IT_TMP/p.json"
        bg_exec "$IT_TMP/e.out" "$ID" -- sh -c 'echo 1 >> /job/out/log; echo "rc=$?"'
        wait_until 10 has_pending "$ID" 1 || fail "no pending request appeared"
        sb approve "$ID" "$(pending_field "$ID" 0 request)" --remember
        expect_rc 0 "approve --remember"
        expect_contains "$OUT" "remembered" "says it is remembered"
        wait "$BG"
        expect_eq "rc=0" "$(cat "$IT_TMP/e.out")" "the first write"
        # later identical calls pass without asking
        sb exec "$ID" -- sh -c 'for i in 2 3 4; do echo $i >> /job/out/log || exit 1; done; echo done'
        expect_eq done "$OUT" "later identical writes pass at once"
        expect_eq "1 2 3 4" "$(tr '\n' ' ' <"$JOB/out/log" | sed 's/ $//')" "all four writes landed"
        expect_event "$ID" "remembered" approval_decided target=/job/out/log decision=remembered
        expect_eq 1 "$(events_of "$ID" approval_required target=/job/out/log | wc -l)" "asked once only"
        # another path is another request
        bg_exec "$IT_TMP/e2.out" "$ID" -- sh -c 'echo x > /job/out/other; echo "rc=$?"'
        wait_until 10 has_pending "$ID" 1 || fail "another path did not ask"
        expect_eq /job/out/other "$(pending_field "$ID" 0 target)" "the other path asks"
        sb deny "$ID" "$(pending_field "$ID" 0 request)"
        wait "$BG"
        # the policy file is never changed
        expect_true "the policy file is unchanged" grep -q '"action": "ask"' "$IT_TMP/p.json"
        expect_contains "$(cat "$STATE/$ID/policy.json")" '"action": "ask"' "the sandbox's stored policy unchanged"
}

# =============================================================================================
# exec

it_test exec_approve_deny
exec_approve_deny() {
        need_root
        job_dirs
        fs_policy "$IT_TMP/p.json"
        new_sandbox --policy "$IT_TMP/p.json"
        bg_exec "$IT_TMP/e.out" "$ID" -- sh -c '/job/bin/id -u; echo "rc=$?"'
        wait_until 10 has_pending "$ID" 1 || fail "the exec did not ask"
        expect_eq exec "$(pending_field "$ID" 0 capability)" "capability"
        expect_eq /job/bin/id "$(pending_field "$ID" 0 target)" "target"
        expect_event "$ID" "approval_required" approval_required capability=exec summary.syscall=execve
        sb approve "$ID" "$(pending_field "$ID" 0 request)"
        wait "$BG"
        expect_eq $'0\nrc=0' "$(cat "$IT_TMP/e.out")" "the approved binary ran"
        bg_exec "$IT_TMP/e2.out" "$ID" -- sh -c '/job/bin/id -u; echo "rc=$?"'
        wait_until 10 has_pending "$ID" 1 || fail "the second exec did not ask"
        sb deny "$ID" "$(pending_field "$ID" 0 request)"
        wait "$BG"
        expect_contains "$(cat "$IT_TMP/e2.out")" "rc=126" "the denied exec fails (EACCES: 126)"
        expect_contains "$(cat "$IT_TMP/e2.out")" "Permission denied" "with EACCES"
        expect_event "$ID" "denied" approval_decided capability=exec decision=denied
}

# =============================================================================================
# many threads at once

it_test concurrent_threads_out_of_order
concurrent_threads_out_of_order() {
        need_root
        need_py
        job_dirs
        fs_policy "$IT_TMP/p.json"
        cat >"$JOB/free/threads.py" <<'EOF'
import os, threading, time
res = {}
ticks = [0]
stop = [False]
def opener(i):
    try:
        fd = os.open("/job/out/t%d" % i, os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, b"thread %d\n" % i)
        os.close(fd)
        res[i] = "ok"
    except OSError as e:
        res[i] = "errno%d" % e.errno
def ticker():
    while not stop[0]:
        ticks[0] += 1
        # written whole and renamed: the test never reads a truncated file
        with open("/job/free/ticks.new", "w") as f:
            f.write("%d\n" % ticks[0])
        os.replace("/job/free/ticks.new", "/job/free/ticks")
        time.sleep(0.02)
t = threading.Thread(target=ticker)
t.start()
ts = [threading.Thread(target=opener, args=(i,)) for i in range(8)]
for x in ts:
    x.start()
for x in ts:
    x.join()
stop[0] = True
t.join()
for i in range(8):
    print("t%d %s" % (i, res[i]))
EOF
        new_sandbox --policy "$IT_TMP/p.json"
        bg_exec "$IT_TMP/e.out" "$ID" -- python3 /job/free/threads.py
        wait_until 15 has_pending "$ID" 8 || fail "8 pending requests did not appear (got $(pending_count "$ID"))"
        # the other threads of the program keep running while all eight wait
        local a b
        a=$(cat "$JOB/free/ticks")
        sleep 1
        b=$(cat "$JOB/free/ticks")
        expect_true "a thread of the same process kept running ($a -> $b ticks in 1 s)" test $((b - a)) -ge 10
        # and so does another process of the sandbox
        sb exec "$ID" -- sh -c 'echo other-process-runs'
        expect_eq other-process-runs "$OUT" "another run is served while eight calls wait"
        # answer out of order: by target, from the last thread to the first; even ones approved
        local list i req
        list=$(timeout 10 "$CORDON" sandbox pending "$ID" --json)
        for i in 7 6 5 4 3 2 1 0; do
                req=$(printf '%s' "$list" | python3 -c 'import json,sys; print([p["request"] for p in json.load(sys.stdin) if p["target"] == "/job/out/t" + sys.argv[1]][0])' "$i")
                if [ $((i % 2)) = 0 ]; then
                        sb approve "$ID" "$req"
                else
                        sb deny "$ID" "$req"
                fi
                expect_rc 0 "answer for thread $i"
        done
        wait "$BG"
        local out
        out=$(cat "$IT_TMP/e.out")
        for i in 0 2 4 6; do
                expect_contains "$out" "t$i ok" "thread $i got its approval"
                expect_eq "thread $i" "$(cat "$JOB/out/t$i" 2>/dev/null)" "thread $i's file"
        done
        for i in 1 3 5 7; do
                expect_contains "$out" "t$i errno13" "thread $i got its denial (EACCES)"
                expect_true "thread $i wrote nothing" test ! -e "$JOB/out/t$i"
        done
}

# =============================================================================================
# clients come and go; terminate

it_test pending_survives_client
pending_survives_client() {
        need_root
        job_dirs
        fs_policy "$IT_TMP/p.json"
        new_sandbox --policy "$IT_TMP/p.json"
        # a follower that goes away before the request is made
        timeout 20 "$CORDON" sandbox events "$ID" --follow --json >"$IT_TMP/f1" 2>&1 &
        local f1=$!
        sleep 0.5
        kill "$f1"
        wait "$f1" 2>/dev/null
        sb exec "$ID" --detach -- sh -c 'echo kept > /job/out/k; echo "rc=$?"'
        expect_rc 0 "a detached run"
        local run=$OUT
        wait_until 10 has_pending "$ID" 1 || fail "no pending request appeared"
        # the request is in the sandbox's state, not in any client
        expect_contains "$(cat "$STATE/$ID/meta.json")" '"target": "/job/out/k"' "meta.json lists the pending request"
        sb inspect "$ID"
        expect_contains "$OUT" "pending approvals" "inspect shows it"
        expect_contains "$OUT" "/job/out/k" "with its target"
        # a new follower sees it, and answers from what it saw
        timeout 20 "$CORDON" sandbox events "$ID" --follow --json >"$IT_TMP/f2" 2>&1 &
        local f2=$!
        at_exit "kill $f2"
        wait_until 10 grep -q '"type":"approval_required"' "$IT_TMP/f2" || fail "the reconnecting follower did not see the request"
        local req
        req=$(grep '"type":"approval_required"' "$IT_TMP/f2" | python3 -c 'import json,sys; print(json.loads(sys.stdin.readline())["request"])')
        sb approve "$ID" "$req"
        expect_rc 0 "approve what the follower saw"
        wait_until 10 grep -q '"type":"approval_decided"' "$IT_TMP/f2" || fail "the follower did not see the decision"
        wait_until 10 test -e "$STATE/$ID/runs/$run.log" -a -s "$STATE/$ID/runs/$run.log" || true
        wait_until 10 grep -q "rc=0" "$STATE/$ID/runs/$run.log" || fail "the run did not finish its write"
        expect_eq kept "$(cat "$JOB/out/k" 2>/dev/null)" "the approved write"
        kill "$f2" 2>/dev/null
}

# a request whose caller is gone (its run cancelled) is not left listed until it expires
it_test caller_gone_dropped
caller_gone_dropped() {
        need_root
        job_dirs
        fs_policy "$IT_TMP/p.json"
        new_sandbox --policy "$IT_TMP/p.json"
        sb exec "$ID" --detach -- sh -c 'echo x > /job/out/gone'
        local run=$OUT
        wait_until 10 has_pending "$ID" 1 || fail "no pending request appeared"
        sb cancel "$ID" "$run"
        expect_rc 0 "cancel the run"
        wait_until 5 none_pending || fail "the request of a killed caller is still pending"
        expect_event "$ID" "recorded" approval_decided target=/job/out/gone decision=denied decidedBy=caller-gone
        expect_true "nothing was written" test ! -e "$JOB/out/gone"
}

it_test terminate_denies_pending
terminate_denies_pending() {
        need_root
        job_dirs
        fs_policy "$IT_TMP/p.json"
        new_sandbox --policy "$IT_TMP/p.json"
        timeout 30 "$CORDON" sandbox events "$ID" --follow --json >"$IT_TMP/f" 2>&1 &
        local f=$!
        at_exit "kill $f"
        sb exec "$ID" --detach -- sh -c 'echo a > /job/out/x1'
        sb exec "$ID" --detach -- sh -c 'echo b > /job/out/x2'
        wait_until 10 has_pending "$ID" 2 || fail "two pending requests did not appear"
        sb terminate "$ID"
        expect_rc 0 "terminate"
        wait "$f"
        local out
        out=$(cat "$IT_TMP/f")
        local n
        n=$(printf '%s\n' "$out" | grep '"type":"approval_decided"' | grep '"decision":"denied"' | grep -c '"decidedBy":"terminate"')
        expect_eq 2 "$n" "both pending requests denied by terminate"
        expect_contains "$out" '"type":"ended"' "the follower saw the end"
        expect_true "nothing was written" test ! -e "$JOB/out/x1" -a ! -e "$JOB/out/x2"
}

# =============================================================================================
# cordon run

it_test run_without_approver_denies
run_without_approver_denies() {
        job_dirs
        fs_policy "$IT_TMP/p.json"
        crun --policy "$IT_TMP/p.json" --audit "$IT_TMP/audit" -- sh -c 'echo x > /job/out/r; echo "rc=$?"; echo y > /job/free/r; echo "free=$?"'
        expect_rc 0 "exit status"
        expect_contains "$OUT" "rc=2" "the ask write is denied"
        expect_contains "$OUT" "free=0" "other writes work"
        expect_contains "$ERR" "nobody to ask" "said at start"
        expect_true "nothing written beneath the ask rule" test ! -e "$JOB/out/r"
        expect_contains "$(cat "$IT_TMP/audit")" '"decidedBy":"no-approver"' "audited with who decided"
}

it_test run_interactive_no_terminal_refused
run_interactive_no_terminal_refused() {
        job_dirs
        fs_policy "$IT_TMP/p.json"
        OUT=$(setsid -w timeout 20 "$CORDON" run --approve-interactive --policy "$IT_TMP/p.json" -- sh -c 'echo RAN' 2>&1 </dev/null)
        RC=$?
        expect_rc 2 "--approve-interactive without a terminal"
        expect_contains "$OUT" "needs a controlling terminal" "says why"
        expect_not_contains "$OUT" "RAN" "the command did not run"
}

# drive_pty ANSWER... -- CMD...: runs CMD on a new pty, answering each approval prompt with the
# next ANSWER; prints what the terminal showed and "EXIT n"
drive_pty() {
        python3 - "$@" <<'EOF'
import os, pty, select, sys, time
args = sys.argv[1:]
sep = args.index("--")
answers, argv = args[:sep], args[sep + 1:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(argv[0], argv)
buf, seen = b"", 0
deadline = time.time() + 40
while time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 0.1)
    if r:
        try:
            d = os.read(fd, 4096)
        except OSError:
            break
        if not d:
            break
        buf += d
    if buf.count(b"allow? [y]es") > seen and answers:
        seen += 1
        time.sleep(0.2)
        os.write(fd, answers.pop(0).encode() + b"\r")
_, st = os.waitpid(pid, 0)
sys.stdout.write(buf.decode(errors="replace").replace("\r", ""))
print("\nEXIT %d" % os.waitstatus_to_exitcode(st))
EOF
}

it_test run_interactive_pty
run_interactive_pty() {
        need_py
        job_dirs
        fs_policy "$IT_TMP/p.json"
        local out
        out=$(drive_pty y n always -- "$CORDON" run --approve-interactive --policy "$IT_TMP/p.json" --audit "$IT_TMP/audit" \
                -- sh -c 'echo yes > /job/out/y; echo "y=$?"; echo no > /job/out/n; echo "n=$?";
                          echo 1 > /job/out/a; echo "a1=$?"; echo 2 >> /job/out/a; echo "a2=$?"')
        printf '%s\n' "$out" | sed 's/^/  pty| /' >&2
        expect_contains "$out" "approval needed" "the prompt was shown"
        expect_contains "$out" "write /job/out/y" "with the request"
        expect_contains "$out" "y=0" "answered y: the write succeeded"
        expect_contains "$out" "n=2" "answered n: the write failed"
        expect_contains "$out" "a1=0" "answered always"
        expect_contains "$out" "a2=0" "the identical later write passed"
        expect_eq 3 "$(printf '%s\n' "$out" | grep -c 'allow? \[y\]es')" "three prompts, none for the remembered write"
        expect_contains "$out" "EXIT 0" "cordon's exit"
        expect_eq yes "$(cat "$JOB/out/y" 2>/dev/null)" "y written"
        expect_true "n not written" test ! -e "$JOB/out/n"
        expect_eq "1 2" "$(tr '\n' ' ' <"$JOB/out/a" | sed 's/ $//')" "a written twice"
        local audit
        audit=$(cat "$IT_TMP/audit")
        expect_contains "$audit" '"decidedBy":"terminal"' "the audit says who decided"
        expect_contains "$audit" '"reason":"approval_remembered"' "and the remembered one"
}

# the names and command lines an approver reads are the sandbox's: a terminal escape or a
# carriage return in them must not redraw the request shown (to look like another)
it_test approver_sees_no_terminal_escapes
approver_sees_no_terminal_escapes() {
        need_root
        need_py
        job_dirs
        fs_policy "$IT_TMP/p.json"
        new_sandbox --policy "$IT_TMP/p.json"
        bg_exec "$IT_TMP/e.out" "$ID" -- sh -c 'echo x > "/job/out/$(printf "evil\033[2J\rharmless")"'
        next_pending || fail "nothing became pending"
        sb pending "$ID"
        expect_not_contains "$OUT" $'\033' "pending shows no escape byte"
        expect_not_contains "$OUT" $'\r' "nor a carriage return"
        expect_contains "$OUT" 'evil\x1b[2J\x0dharmless' "it shows them escaped"
        sb deny "$ID" "$(pending_field "$ID" 0 request)"
        wait "$BG"
        local out
        out=$(drive_pty n -- "$CORDON" run --approve-interactive --policy "$IT_TMP/p.json" \
                -- sh -c 'echo x > "/job/out/$(printf "evil\033[2J\rharmless")"; echo "rc=$?"')
        expect_contains "$out" 'evil\x1b[2J\x0dharmless' "the terminal prompt shows them escaped"
        expect_not_contains "$(printf '%s\n' "$out" | grep '^cordon:')" $'\033' "and never sends the escape itself"
}

it_test policy_ask_validated
policy_ask_validated() {
        echo '{"filesystem": {"rules": [{"path": "/etc", "access": "read", "action": "ask"}]}}' >"$IT_TMP/p.json"
        crun --policy "$IT_TMP/p.json" -- sh -c 'echo RAN'
        expect_rc 2 "an ask rule that asks for nothing"
        expect_contains "$ERR" "filesystem.rules[0]" "names the rule"
        expect_not_contains "$OUT" "RAN" "the command did not run"
        echo '{"filesystem": {"rules": [{"path": "/etc", "access": "hidden", "action": "ask"}]}}' >"$IT_TMP/p.json"
        crun --policy "$IT_TMP/p.json" -- sh -c 'echo RAN'
        expect_rc 2 "ask on a hidden rule"
}

# =============================================================================================
# escapes: an approval covers exactly what was asked

it_test escape_swap_path_while_waiting
escape_swap_path_while_waiting() {
        need_root
        need_py
        job_dirs
        fs_policy "$IT_TMP/p.json"
        cat >"$JOB/free/swap.py" <<'EOF'
import ctypes, ctypes.util, os, threading, time
libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
buf = ctypes.create_string_buffer(b"/job/out/approved\0" + b"\0" * 64)
res = []
def opener():
    fd = libc.open(buf, os.O_WRONLY | os.O_CREAT, 0o644)
    res.append(fd if fd >= 0 else -ctypes.get_errno())
t = threading.Thread(target=opener)
t.start()
time.sleep(1.5)
# while the call waits for its approval, point the path elsewhere beneath the ask rule
ctypes.memmove(buf, b"/job/out/swapped\0", 17)
open("/job/free/swapped-now", "w").close()
t.join()
print("result %d" % res[0])
EOF
        new_sandbox --policy "$IT_TMP/p.json"
        bg_exec "$IT_TMP/e.out" "$ID" -- python3 /job/free/swap.py
        wait_until 10 has_pending "$ID" 1 || fail "no pending request"
        expect_eq /job/out/approved "$(pending_field "$ID" 0 target)" "asked for the path as first read"
        wait_until 10 test -e "$JOB/free/swapped-now" || fail "the program did not swap its buffer"
        sb approve "$ID" "$(pending_field "$ID" 0 request)"
        wait "$BG"
        expect_contains "$(cat "$IT_TMP/e.out")" "result -13" "the swapped call fails with EACCES"
        expect_true "the swapped-in path was not created" test ! -e "$JOB/out/swapped"
        expect_true "nor the approved one (the call did not ask for it any more)" test ! -e "$JOB/out/approved"
        expect_event "$ID" "the mismatch is audited" audit record.reason=approval_mismatch record.target=/job/out/swapped
}

# =============================================================================================
# egress: a TLS client to the test's own upstream

AP_PIDS=()
AP_NS=
AP_VETH=
ap_cleanup() {
        local p
        for p in "${AP_PIDS[@]}"; do
                kill "$p" 2>/dev/null
        done
        for p in "${AP_PIDS[@]}"; do
                wait "$p" 2>/dev/null
        done
        [ -n "$AP_VETH" ] && ip link del "${AP_VETH}h" >/dev/null 2>&1
        [ -n "$AP_NS" ] && ip netns del "$AP_NS" >/dev/null 2>&1
        [ -n "${AP_DIR:-}" ] && [ -d "$AP_DIR" ] && rm -rf -- "$AP_DIR"
}

ap_pick_subnet() {
        local n i used
        used=$( (ip -o addr show; ip route show table all) 2>/dev/null)
        n=$(($$ % 250 + 1))
        for ((i = 0; i < 250; i++)); do
                if ! grep -qE "10\.214\.$n\.[0-9]" <<<"$used"; then
                        echo "$n"
                        return 0
                fi
                n=$((n % 250 + 1))
        done
        return 1
}

ap_setup() {
        local dir n ns i
        [ "$(id -u)" = 0 ] || { AP_SKIP="network namespaces need root"; return; }
        command -v ip >/dev/null 2>&1 || { AP_SKIP="ip(8) is not installed"; return; }
        command -v openssl >/dev/null 2>&1 || { AP_SKIP="openssl is not installed"; return; }
        [ -x /usr/bin/python3 ] || { AP_SKIP="python3 is not installed"; return; }
        n=$(ap_pick_subnet) || { AP_SKIP="no free 10.214.N.0/30"; return; }
        dir=$(mktemp -d "${IT_SCRATCH_BASE:-/var/tmp}/cordon-ap.XXXXXX") || { AP_ERROR="mktemp"; return; }
        AP_DIR=$dir
        chmod 0755 "$dir"
        mkdir -p "$dir/ca" "$dir/pki" "$dir/www" && chmod 0755 "$dir/ca" "$dir/www" && chmod 0700 "$dir/pki"
        if ! (
                cd "$dir/pki" &&
                        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
                                -keyout ca.key -out ca.pem -days 2 -subj "/CN=cordon approvals test CA" \
                                -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign &&
                        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
                                -keyout server.key -out server.csr -subj "/CN=$UPSTREAM" &&
                        printf '%s\n' "subjectAltName=DNS:$UPSTREAM" "basicConstraints=CA:FALSE" \
                                "extendedKeyUsage=serverAuth" >ext.cnf &&
                        openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
                                -out server.pem -days 2 -extfile ext.cnf
        ) >"$dir/openssl.log" 2>&1; then
                AP_ERROR="openssl: $(tail -n 2 "$dir/openssl.log" | tr '\n' ' ')"
                return
        fi
        cp "$dir/pki/ca.pem" "$dir/ca/ca.pem" && chmod 0644 "$dir/ca/ca.pem"
        AP_TOKEN="cordon-approvals-token-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')"
        printf '%s' "$AP_TOKEN" >"$dir/www/token"
        chmod 0644 "$dir/www/token"
        cat >"$dir/upstream.py" <<'EOF'
import http.server, os, ssl, sys
root, cert, key, ready = sys.argv[1:5]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
class H(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **k):
        super().__init__(*a, directory=root, **k)
    def log_message(self, *a):
        pass
class S(http.server.ThreadingHTTPServer):
    daemon_threads = True
    def get_request(self):
        c, a = self.socket.accept()
        c.settimeout(10)
        return ctx.wrap_socket(c, server_side=True, do_handshake_on_connect=False), a
    def handle_error(self, *a):
        pass
srv = S(("0.0.0.0", 443), H)
open(ready, "w").write("ok")
srv.serve_forever()
EOF
        ns="cordon-ap-$$"
        ip netns add "$ns" 2>/dev/null || { AP_SKIP="cannot create a network namespace"; return; }
        AP_NS=$ns
        AP_VETH="cap$$"
        if ! {
                ip link add "${AP_VETH}h" type veth peer name "${AP_VETH}n" &&
                        ip link set "${AP_VETH}n" netns "$ns" &&
                        ip addr add "10.214.$n.1/30" dev "${AP_VETH}h" &&
                        ip link set "${AP_VETH}h" up &&
                        ip -n "$ns" addr add "10.214.$n.2/30" dev "${AP_VETH}n" &&
                        ip -n "$ns" link set "${AP_VETH}n" up &&
                        ip -n "$ns" link set lo up
        } 2>"$dir/ip.log"; then
                AP_ERROR="veth: $(tail -n 1 "$dir/ip.log")"
                return
        fi
        timeout 600 ip netns exec "$ns" /usr/bin/python3 "$dir/upstream.py" "$dir/www" "$dir/pki/server.pem" \
                "$dir/pki/server.key" "$dir/ready" </dev/null >"$dir/upstream.out" 2>&1 &
        AP_PIDS+=($!)
        for ((i = 0; i < 100; i++)); do
                [ -e "$dir/ready" ] && break
                sleep 0.05
        done
        [ -e "$dir/ready" ] || { AP_ERROR="the upstream did not start: $(tail -n 2 "$dir/upstream.out")"; return; }
        AP_NET=$n
        AP_UP="10.214.$n.2"
}

need_upstream() {
        [ -z "${AP_SKIP:-}" ] || skip "$AP_SKIP"
        [ -z "${AP_ERROR:-}" ] || fail "fixture: $AP_ERROR"
        [ -n "${AP_UP:-}" ] || fail "fixture: not set up"
}

# egress_policy FILE: upstream.cordon.test:443 asks; the fixture's /30 is the test's override
egress_policy() {
        printf '%s %s\n' "$UPSTREAM" "$AP_UP" >"$IT_TMP/hosts"
        cat >"$1" <<EOF
{"filesystem": {"binds": [{"source": "$AP_DIR/ca", "target": "/ca", "readOnly": true},
                          {"source": "$JOB", "target": "/job"}]},
 "networkPolicy": {"mode": "allow-listed",
                   "rules": [{"host": "$UPSTREAM", "port": 443, "reason": "approval tests", "action": "ask"}],
                   "testing": {"hostsFile": "$IT_TMP/hosts", "allowPrivateNetworks": ["10.214.$AP_NET.0/30"]}},
 "approvalTimeoutMs": 60000}
EOF
        cat >"$JOB/free/tls.py" <<'EOF'
import socket, ssl, sys
name = "upstream.cordon.test"
try:
    # one address (IPv4) only: a client that tries each address of the name in turn asks once
    # per address, and a denial of the first would be followed by a question for the next
    addr = socket.getaddrinfo(name, 443, socket.AF_INET, socket.SOCK_STREAM)[0][4]
    s = socket.create_connection(addr, timeout=30)
    t = ssl.create_default_context(cafile="/ca/ca.pem").wrap_socket(s, server_hostname=name)
    t.sendall(b"GET /token HTTP/1.0\r\nHost: " + name.encode() + b"\r\n\r\n")
    d = b""
    while True:
        x = t.recv(4096)
        if not x:
            break
        d += x
    print("body " + d.partition(b"\r\n\r\n")[2].decode())
except OSError as e:
    print("error errno=%s %s" % (e.errno, e))
EOF
}

it_test egress_tls_approve_deny
egress_tls_approve_deny() {
        need_upstream
        job_dirs
        egress_policy "$IT_TMP/p.json"
        new_sandbox --policy "$IT_TMP/p.json"
        bg_exec "$IT_TMP/e.out" "$ID" -- python3 /job/free/tls.py
        wait_until 15 has_pending "$ID" 1 || fail "the connect did not ask"
        expect_eq egress "$(pending_field "$ID" 0 capability)" "capability"
        expect_eq "$UPSTREAM:443" "$(pending_field "$ID" 0 target)" "target host:port"
        expect_event "$ID" "approval_required" approval_required capability=egress summary.syscall=connect
        sb approve "$ID" "$(pending_field "$ID" 0 request)"
        wait "$BG"
        expect_eq "body $AP_TOKEN" "$(cat "$IT_TMP/e.out")" "the TLS client got the upstream's token"
        expect_event "$ID" "the gate's own audit" audit record.reason=egress_allowed record.host="$UPSTREAM"

        bg_exec "$IT_TMP/e2.out" "$ID" -- python3 /job/free/tls.py
        wait_until 15 has_pending "$ID" 1 || fail "the second connect did not ask"
        sb deny "$ID" "$(pending_field "$ID" 0 request)"
        wait "$BG"
        expect_contains "$(cat "$IT_TMP/e2.out")" "error errno=13" "the denied connect fails with EACCES"
        expect_event "$ID" "denied" approval_decided capability=egress decision=denied

        # remember: later connections pass at once
        bg_exec "$IT_TMP/e3.out" "$ID" -- python3 /job/free/tls.py
        wait_until 15 has_pending "$ID" 1 || fail "the third connect did not ask"
        sb approve "$ID" "$(pending_field "$ID" 0 request)" --remember
        wait "$BG"
        expect_eq "body $AP_TOKEN" "$(cat "$IT_TMP/e3.out")" "approved with --remember"
        sb exec "$ID" -- python3 /job/free/tls.py
        expect_eq "body $AP_TOKEN" "$OUT" "a later connection passes without asking"
        expect_event "$ID" "remembered" approval_decided capability=egress decision=remembered
}

it_test egress_expires
egress_expires() {
        need_upstream
        job_dirs
        egress_policy "$IT_TMP/p.json"
        sed -i 's/"approvalTimeoutMs": 60000/"approvalTimeoutMs": 1000/' "$IT_TMP/p.json"
        new_sandbox --policy "$IT_TMP/p.json"
        sb exec "$ID" -- python3 /job/free/tls.py
        expect_contains "$OUT" "error errno=13" "an unanswered connect fails at its expiry"
        expect_event "$ID" "expired" approval_decided capability=egress decision=expired decidedBy=timeout
}

# =============================================================================================

if [ -n "${IT_RUN_ONE:-}" ]; then
        it_main "$@"
fi

trap ap_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
AP_SKIP=
AP_ERROR=
ap_setup
export AP_SKIP AP_ERROR AP_DIR AP_TOKEN AP_NET AP_UP
(it_main "$@")
exit $?
