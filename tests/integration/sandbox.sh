#!/bin/bash
# cordon integration tests for long-lived sandboxes (issue 6): create, exec, file transfer,
# pause/resume, terminate, TTL, events, snapshots, and `cordon gc` after a killed detached
# sentry. Run like run.sh:
#
#   CORDON=/path/to/cordon TESTS_SRCDIR=/path/to/tests bash tests/integration/sandbox.sh [REGEX...]
if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

IT_SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$IT_SCRIPT")/lib.sh"

need_root() { [ "$(id -u)" = 0 ] || skip "these tests read the sandbox's cgroups and state as root"; }

STATE=/run/cordon/sandboxes

meta() { # ID KEY
        python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$STATE/$1/meta.json" "$2"
}

# true if PID is gone (absent, or a zombie nobody reaped: it runs nothing)
pid_gone() {
        [ ! -e "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# the cgroup directories of a sandbox, from every hierarchy
cgroups_of() { find /sys/fs/cgroup -maxdepth 6 -type d -name "cordon-$1" 2>/dev/null; }

# host pids that still have the mount namespace NSLINK (e.g. mnt:[4026532]) open
procs_in_ns() {
        local f
        for f in /proc/[0-9]*/ns/mnt; do
                [ "$(readlink "$f" 2>/dev/null)" = "$1" ] && echo "${f%/ns/mnt}"
        done
        return 0
}

# The control socket is the sentry's alone: no helper it forked (the proc agent, the exec
# tracer, init) holds a copy. One that did kept the socket accepting for a moment after the
# sentry was killed, and a client got "no answer" instead of being told to run gc.
it_test control_socket_held_by_the_sentry_alone
control_socket_held_by_the_sentry_alone() {
        need_root
        new_sandbox
        sb exec "$ID" -- true
        local sentry inode holders
        sentry=$(meta "$ID" sentryPid)
        inode=$(awk -v p="$STATE/$ID/control.sock" '$8 == p {print $7}' /proc/net/unix | head -1)
        [ -n "$inode" ] || fail "the control socket is not in /proc/net/unix"
        holders=$(for f in /proc/[0-9]*/fd/*; do
                [ "$(readlink "$f" 2>/dev/null)" = "socket:[$inode]" ] && echo "${f%/fd/*}"
        done | sort -u | tr '\n' ' ')
        expect_eq "/proc/$sentry " "$holders" "processes holding the control socket"
}

it_test create_exec_status
create_exec_status() {
        need_root
        new_sandbox
        expect_true "state directory exists" test -d "$STATE/$ID"
        expect_eq 600 "$(stat -c %a "$STATE/$ID/control.sock")" "control socket mode"
        sb exec "$ID" -- sh -c 'echo out; echo err >&2; exit 7'
        expect_rc 7 "the command's exit status"
        expect_eq out "$OUT" "stdout streams to the client"
        expect_eq err "$ERR" "stderr streams to the client"
        sb exec "$ID" -- sh -c 'kill -TERM $$'
        expect_rc 143 "128+N for a signal"
        sb exec "$ID" -- /no/such/program
        expect_rc 127 "a missing program"
        # two runs share the sandbox: the second sees the first one's file
        sb exec "$ID" -- sh -c 'echo shared-$$ > /tmp/note; cat /tmp/note'
        expect_rc 0 "first run"
        local first=$OUT
        sb exec "$ID" --env FOO=bar --cwd /tmp -- sh -c 'cat note; echo "$FOO $(pwd)"'
        expect_rc 0 "second run"
        expect_eq "$first"$'\n'"bar /tmp" "$OUT" "the second run sees the first one's /tmp, env and cwd"
        # runs share the pid namespace with init, not with the host
        sb exec "$ID" -- sh -c 'cat /proc/1/cmdline | tr "\0" " "'
        expect_contains "$OUT" "cordon-init" "pid 1 is the sandbox's init"
        sb list
        expect_contains "$OUT" "$ID" "list shows it"
        sb inspect "$ID" --json
        expect_contains "$OUT" '"status": "running"' "inspect status"
        expect_contains "$OUT" '"namespaces"' "inspect shows the isolation layers"
        expect_contains "$OUT" 'sentry, proc agent and exec tracer each confined by their own seccomp allow-list' \
                "inspect says the sentry, agent and tracer are confined"
        expect_match "$OUT" '"id": "r5"' "inspect lists the runs"
}

# A run starts in one of two ways (initd.c): a child sharing init's memory until its exec
# (vfork: where execs run natively and the sentry is privileged) or a fork. CORDON_TEST_STALL=
# run-fork makes every run a fork (with a short pause). Both must give the run the same
# identity, capabilities, filter, groups, namespaces, Landlock domain, cwd and environment,
# and fail the same way.
exec_probe() { # ID
        local host="" n
        for n in cgroup ipc mnt net pid user uts; do host+="$(readlink /proc/self/ns/$n) "; done
        sb exec "$1" --cwd /tmp --env PROBE=1 --env "HOST_NS=$host" -- sh -c '
grep -E "^(Uid|Gid|Groups|CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp|Seccomp_filters):" /proc/self/status
sed "s/run-[0-9]*/run-N/" /proc/self/cgroup
for n in cgroup ipc mnt net pid user uts; do
        case " $HOST_NS " in *" $(readlink /proc/self/ns/$n) "*) echo "ns $n: the host'"'"'s";; *) echo "ns $n: own";; esac
done
pwd; env | grep -v ^HOST_NS= | sort
touch /usr/probe 2>&1; echo "touch: $?"
ls /proc/self/fd | wc -l'
        printf '%s\n%s\n' "$OUT" "$RC"
        sb exec "$1" -- /no/such/program
        printf '%s\n%s\n' "$ERR" "$RC"
        sb exec "$1" --cwd /no/such/dir -- true
        printf '%s\n%s\n' "$ERR" "$RC"
}

it_test exec_paths_agree
exec_paths_agree() {
        need_root
        local shared forked
        new_sandbox
        shared=$(exec_probe "$ID")
        CORDON_TEST_STALL=run-fork new_sandbox
        forked=$(exec_probe "$ID")
        expect_contains "$shared" "ns pid: own" "the run is in the sandbox's namespaces"
        expect_not_contains "$shared" "the host's" "in none of the host's"
        expect_contains "$shared" "0::/run-N" "the run is in its own group"
        expect_contains "$shared" "Seccomp:"$'\t'"2" "the run is under the filter"
        expect_eq "$forked" "$shared" "a shared-memory start and a fork give the same run"
}

# The exec request's two forms: the CLI's own output pipes ("clientPipes", checked to be
# pipes open for writing, no reply before the status), and the sentry's pipes sent back in
# an "ok" reply (older clients).
it_test exec_request_forms
exec_request_forms() {
        need_root
        new_sandbox
        OUT=$(timeout 30 python3 - "$STATE/$ID/control.sock" <<'PY' 2>&1
import json, os, socket, sys
def call(req, fds):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    socket.send_fds(s, [json.dumps(req).encode()], fds)
    return s
def recv(s):
    msg, fds, _, _ = socket.recv_fds(s, 65536, 4)
    return json.loads(msg), fds
null = os.open("/dev/null", os.O_RDWR)
s = call({"op": "exec", "argv": ["true"], "clientPipes": True}, [null, null, null, null, null])
print("not pipes:", recv(s)[0].get("error"))
r, w = os.pipe()
s = call({"op": "exec", "argv": ["true"], "clientPipes": True}, [null, null, null, r, w])
print("a read end:", recv(s)[0].get("error"))
o, e = os.pipe(), os.pipe()
s = call({"op": "exec", "argv": ["sh", "-c", "echo own; exit 3"], "clientPipes": True}, [null, null, null, o[1], e[1]])
os.close(o[1]); os.close(e[1])
rep, fds = recv(s)
print("own pipes:", rep.get("exitCode"), len(fds), os.read(o[0], 100).decode().strip())
s = call({"op": "exec", "argv": ["sh", "-c", "echo back; exit 4"]}, [null, null, null])
rep, fds = recv(s)
print("sentry pipes:", rep.get("ok"), len(fds), os.read(fds[0], 100).decode().strip(), recv(s)[0].get("exitCode"))
PY
)
        expect_contains "$OUT" "not pipes: exec: clientPipes: fds 3 and 4 must be pipes open for writing" \
                "a client's fds that are not pipes are refused"
        expect_contains "$OUT" "a read end: exec: clientPipes" "nor a pipe's read end"
        expect_contains "$OUT" "own pipes: 3 0 own" "the run's output in the client's pipes, the status the only reply"
        expect_contains "$OUT" "sentry pipes: True 2 back 4" "without them, the sentry's pipes in an ok reply"
        # the client against a sentry that does not take its pipes (an older one): it answers
        # ok with its own, which the client then reads (a stand-in sentry here)
        local root
        root=$(scratch_dir old-sentry)
        mkdir -p "$root/sandboxes/0123456789abcdef"
        timeout 30 python3 - "$root/sandboxes/0123456789abcdef/control.sock" <<'PY' &
import json, os, socket, sys
l = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
l.bind(sys.argv[1]); l.listen(1)
c, _ = l.accept()
msg, fds, _, _ = socket.recv_fds(c, 65536, 8)
for fd in fds:
    os.close(fd)  # an older sentry closes what it does not use
o, e = os.pipe(), os.pipe()
socket.send_fds(c, [json.dumps({"ok": True, "run": "r1"}).encode()], [o[0], e[0]])
os.write(o[1], b"from-old-sentry\n"); os.write(e[1], b"err-old\n")
os.close(o[1]); os.close(e[1])
c.send(json.dumps({"status": 5 << 8, "exitCode": 5, "timedOut": False}).encode())
PY
        local fake=$!
        wait_until 10 test -S "$root/sandboxes/0123456789abcdef/control.sock"
        sb --root "$root" exec 0123456789abcdef -- true
        wait "$fake"
        expect_rc 5 "the status from an older sentry"
        expect_eq from-old-sentry "$OUT" "its stdout through its own pipes"
        expect_eq err-old "$ERR" "and its stderr"
}

# meta.json, which `list` and a snapshot's record read, holds every run with its end and the
# policy the sandbox was made with. Runs that start and end close together share one write
# of it (within META_SOON_MS, sentry/sandbox/meta.c): it is complete a moment after the last
# exec returns, and the policy in it is the one given (parsed once, kept).
meta_runs() { # ID: each run as ID:STATUS:EXITCODE
        python3 -c 'import json,sys
m = json.load(open(sys.argv[1]))
print(" ".join("%s:%s:%s" % (r["id"], r["status"], r.get("exitCode")) for r in m["runs"]))' "$STATE/$1/meta.json"
}
meta_runs_are() { [ "$(meta_runs "$1")" = "$2" ]; } # ID WANT

it_test meta_json_records_runs
meta_json_records_runs() {
        need_root
        local pol="$IT_TMP/meta-policy.json" i want="r1:exited:1 r2:exited:2 r3:exited:3 r4:exited:4 r5:exited:5"
        printf '{"env": {"META_MARK": "m-%s"}}\n' "$$" >"$pol"
        new_sandbox --policy "$pol"
        for i in 1 2 3 4 5; do
                sb exec "$ID" -- sh -c "exit $i"
                expect_rc "$i" "run $i's status"
        done
        wait_until 5 meta_runs_are "$ID" "$want"
        expect_eq "$want" "$(meta_runs "$ID")" "meta.json has every run, ended, with its exit code"
        expect_eq "m-$$" "$(meta "$ID" policy | python3 -c 'import ast,sys; print(ast.literal_eval(sys.stdin.read())["env"]["META_MARK"])')" \
                "meta.json keeps the sandbox's policy"
        sb exec "$ID" --detach -- sleep 30
        expect_rc 0 "a detached run"
        wait_until 5 meta_runs_are "$ID" "$want r6:running:None"
        expect_eq "$want r6:running:None" "$(meta_runs "$ID")" "a run still running is in it as such"
}

it_test exec_timeout_and_detach
exec_timeout_and_detach() {
        need_root
        new_sandbox
        local t0 t1
        t0=$(date +%s)
        sb exec "$ID" --timeout 1s -- sleep 20
        t1=$(date +%s)
        expect_rc 124 "a run past its --timeout"
        expect_true "killed within seconds ($((t1 - t0)) s)" test $((t1 - t0)) -lt 10
        sb exec "$ID" --detach -- sh -c 'echo detached-out; echo detached-err >&2'
        expect_rc 0 "--detach returns at once"
        local run=$OUT
        expect_match "$run" '^r[0-9]+$' "a run id"
        wait_until 5 grep -q detached-err "$STATE/$ID/runs/$run.log" || fail "no log for the detached run"
        expect_contains "$(cat "$STATE/$ID/runs/$run.log")" "detached-out" "the log has stdout too"
        # a directory passed as stdin would be a way out of the view: refused
        OUT=$(timeout 20 "$CORDON" sandbox exec "$ID" -- true 2>&1 </)
        RC=$?
        expect_rc 125 "a directory as stdin"
        expect_contains "$OUT" "directory" "says why"
        # events: the runs, with growing sequence numbers
        sb events "$ID" --json
        expect_contains "$OUT" '"type":"created"' "created event"
        expect_contains "$OUT" "\"run\":\"$run\"" "the detached run's events"
        expect_match "$OUT" '"exitCode":124|"status":"timeout"' "the timed-out run's status"
        local seqs
        seqs=$(printf '%s\n' "$OUT" | sed -n 's/.*"seq":\([0-9]*\).*/\1/p' | tr '\n' ' ')
        expect_eq "$(seq -s ' ' 1 "$(printf '%s\n' "$OUT" | wc -l)") " "$seqs" "sequence numbers without gaps"
        sb events "$ID" --json --after 2
        expect_not_contains "$OUT" '"seq":2,' "--after skips what was seen"
        expect_contains "$OUT" '"seq":3,' "--after starts right after"
}

it_test put_get_through_the_view
put_get_through_the_view() {
        need_root
        new_sandbox
        local d
        d=$(scratch_dir xfer)
        head -c 200000 /dev/urandom >"$d/blob"
        sb put "$ID" "$d/blob" /tmp/blob
        expect_rc 0 "put"
        sb exec "$ID" -- sha256sum /tmp/blob
        expect_eq "$(sha256sum <"$d/blob" | cut -d' ' -f1)" "${OUT%% *}" "the sandbox sees what was put"
        sb get "$ID" /tmp/blob "$d/back"
        expect_rc 0 "get"
        expect_true "round trip is byte-identical" cmp -s "$d/blob" "$d/back"
        sb ls "$ID" /tmp
        expect_contains "$OUT" "blob" "ls lists it"

        # a host file the sandbox must never reach, and symlinks inside the sandbox aimed at it
        echo "host-secret-$$" >"$d/secret"
        chmod 0644 "$d/secret"
        sb exec "$ID" -- sh -c "ln -s '$d/secret' /tmp/to-host; ln -s /etc/shadow /tmp/to-shadow; ln -s ../../../../../..$d/secret /tmp/dotdot; ln -s /proc/1/root$d/secret /tmp/magic"
        expect_rc 0 "symlinks made inside the sandbox"
        local l
        for l in to-host dotdot magic; do
                sb get "$ID" "/tmp/$l" "$d/got-$l"
                expect_true "get /tmp/$l fails" test "$RC" != 0
                expect_not_contains "$(cat "$d/got-$l" 2>/dev/null)" "host-secret" "get /tmp/$l must not return host content"
        done
        sb get "$ID" /tmp/to-shadow "$d/got-shadow"
        expect_rc 0 "get through a symlink to /etc/shadow reads the view's"
        expect_eq 0 "$(wc -c <"$d/got-shadow")" "the view's /etc/shadow is the masked (empty) one"
        expect_true "the host's /etc/shadow is not empty (so the check means something)" test -s /etc/shadow

        # the view's rules hold for put: read-only system dirs, no way out with ..
        sb put "$ID" "$d/blob" /etc/passwd
        expect_true "put onto a read-only path fails" test "$RC" != 0
        expect_contains "$ERR" "Read-only" "says why"
        sb put "$ID" "$d/blob" "/tmp/../../../..$d/planted"
        expect_true "put cannot leave the view" test ! -e "$d/planted"
        sb put "$ID" "$d/blob" /tmp/to-host
        expect_true "put through a symlink aimed at the host fails" test "$RC" != 0
        expect_contains "$(cat "$d/secret")" "host-secret" "the host file is untouched"
        # the client's own LOCAL is never followed through a symlink
        ln -s "$d/secret" "$d/local-link"
        sb get "$ID" /tmp/blob "$d/local-link"
        expect_true "get refuses a symlink as LOCAL" test "$RC" != 0
        expect_contains "$(cat "$d/secret")" "host-secret" "the symlink's target is untouched"
}

it_test put_respects_disk_quota
put_respects_disk_quota() {
        need_root
        new_sandbox --disk 2M
        local d
        d=$(scratch_dir quota)
        head -c $((4 << 20)) /dev/zero >"$d/big"
        sb put "$ID" "$d/big" /tmp/big
        expect_true "a put beyond the disk limit fails" test "$RC" != 0
        expect_contains "$ERR" "No space left" "ENOSPC"
        # and leaves nothing: no partial file, and an old file whole
        sb exec "$ID" -- sh -c 'ls -A /tmp; df -k /tmp | tail -n 1'
        expect_not_contains "$OUT" big "no partial file of a failed put"
        printf 'old content\n' >"$d/small"
        sb put "$ID" "$d/small" /tmp/keep
        sb put "$ID" "$d/big" /tmp/keep
        expect_true "an overwrite beyond the disk limit fails" test "$RC" != 0
        sb exec "$ID" -- cat /tmp/keep
        expect_eq "old content" "$OUT" "the file a failed put would have replaced is whole"
        sb exec "$ID" -- ls -A /tmp
        expect_eq keep "$OUT" "no temporary file is left either"
        # a put that fits replaces it, with its mode
        printf 'new\n' >"$d/small"
        sb put "$ID" "$d/small" /tmp/keep
        sb exec "$ID" -- cat /tmp/keep
        expect_eq new "$OUT" "a put replaces the file"
}

# A put from a stream (`producer | cordon sandbox put ID - PATH`) lands only when its client saw
# the end: Ctrl-C kills the client with its producer, and the stream's end that follows is the
# producer's death, not the data's end. A truncated file landed as if whole before.
it_test put_stream_killed_lands_nothing
put_stream_killed_lands_nothing() {
        need_root
        new_sandbox
        local pg
        # the whole pipeline killed at once, as a terminal's Ctrl-C does (SIGTERM: a background
        # job of a script ignores SIGINT)
        setsid sh -c '(printf partial; sleep 60) | "$0" sandbox put "$1" - /tmp/x' "$CORDON" "$ID" &
        pg=$!
        wait_until 10 sh -c "\"$CORDON\" sandbox ls $ID /tmp | grep -q cordon-put"
        kill -TERM -- "-$pg"
        wait "$pg" 2>/dev/null
        wait_until 10 sh -c "\"$CORDON\" sandbox events $ID | grep -q 'went away'"
        sb events "$ID"
        expect_contains "$OUT" "the client went away before the upload's end; nothing was written" "said as an event"
        sb exec "$ID" -- ls -A /tmp
        expect_eq "" "$OUT" "no file and no temporary file after the pipeline was killed"
        # the client killed while its producer goes on: the put stops at once
        local fifo prod client
        fifo=$(scratch_dir put-fifo)/fifo
        mkfifo "$fifo"
        (printf partial; exec sleep 60) >"$fifo" &
        prod=$!
        "$CORDON" sandbox put "$ID" - /tmp/y <"$fifo" &
        client=$!
        wait_until 10 sh -c "\"$CORDON\" sandbox ls $ID /tmp | grep -q cordon-put"
        kill "$client"
        wait "$client" 2>/dev/null
        wait_until 10 sh -c "! \"$CORDON\" sandbox ls $ID /tmp | grep -q cordon-put"
        sb exec "$ID" -- ls -A /tmp
        expect_eq "" "$OUT" "nothing lands while the producer still writes"
        kill "$prod" 2>/dev/null
        wait "$prod" 2>/dev/null
        # a stream that ends on its own lands whole, from a pipe and from a terminal-less stdin
        printf 'whole\n' | "$CORDON" sandbox put "$ID" - /tmp/z
        expect_true "a piped put succeeds" test $? = 0
        sb exec "$ID" -- cat /tmp/z
        expect_eq whole "$OUT" "and lands"
}

# the freezer state of a sandbox's group: FROZEN/THAWED (v1) or 1/0 (v2)
# (on a hybrid host the sandbox also has a limit-free v2 group for the BPF
# floor; the v1 freezer is the one cordon uses there, so it is asked first)
freezer_state() {
        local g
        for g in $(cgroups_of "$1"); do
                if [ -f "$g/freezer.state" ]; then
                        cat "$g/freezer.state"
                        return
                fi
        done
        for g in $(cgroups_of "$1"); do
                if [ -f "$g/cgroup.events" ]; then
                        sed -n 's/^frozen //p' "$g/cgroup.events"
                        return
                fi
        done
}

it_test pause_resume
pause_resume() {
        need_root
        new_sandbox
        [ -n "$(cgroups_of "$ID")" ] || skip "no cgroup for the sandbox on this host"
        sb exec "$ID" --detach -- sh -c 'i=0; while :; do i=$((i+1)); echo $i > /tmp/count; sleep 0.05; done'
        expect_rc 0 "a ticking run"
        local d c1 c2
        d=$(scratch_dir pause)
        wait_until 5 sh -c "'$CORDON' sandbox get $ID /tmp/count - 2>/dev/null | grep -q '[0-9]'" || fail "the run does not tick"
        sb pause "$ID"
        expect_rc 0 "pause"
        expect_match "$(freezer_state "$ID")" '^(FROZEN|1)$' "the cgroup is frozen"
        sb exec "$ID" -- true
        expect_true "exec on a paused sandbox fails" test "$RC" != 0
        expect_contains "$ERR" "paused" "and says so"
        expect_contains "$ERR" "sandbox resume" "and how to go on"
        sb exec "$ID" --detach -- true
        expect_true "a detached exec on a paused sandbox fails too" test "$RC" != 0
        expect_contains "$ERR" "paused" "and says so"
        sb get "$ID" /tmp/count -
        c1=$OUT
        sleep 1
        sb get "$ID" /tmp/count -
        c2=$OUT
        expect_eq "$c1" "$c2" "nothing runs while paused"
        local init
        init=$(meta "$ID" initPid)
        expect_true "init is still there (frozen, not killed)" test -d "/proc/$init"
        sb inspect "$ID" --json
        expect_contains "$OUT" '"status": "paused"' "inspect says paused"
        sb resume "$ID"
        expect_rc 0 "resume"
        expect_match "$(freezer_state "$ID")" '^(THAWED|0)$' "the cgroup is thawed"
        wait_until 5 sh -c "[ \"\$('$CORDON' sandbox get $ID /tmp/count - 2>/dev/null)\" != '$c2' ]" ||
                _it_soft_fail "the run goes on after resume"
        sb exec "$ID" -- echo back
        expect_eq back "$OUT" "exec works again"
        sb events "$ID" --json
        expect_contains "$OUT" '"type":"paused"' "paused event"
        expect_contains "$OUT" '"type":"resumed"' "resumed event"
}

it_test terminate_leaves_nothing
terminate_leaves_nothing() {
        need_root
        new_sandbox
        sb exec "$ID" --detach -- sleep 1000
        local init sentry ns
        init=$(meta "$ID" initPid)
        sentry=$(meta "$ID" sentryPid)
        ns=$(readlink "/proc/$init/ns/mnt")
        [ -n "$ns" ] || fail "cannot read init's mount namespace"
        # held open, so that its inode number (which names it in /proc/PID/ns)
        # is not given to a namespace made after it is freed: another test's
        # sandbox, started meanwhile, was once taken for a leftover of this one
        local nsfd
        exec {nsfd}<"/proc/$init/ns/mnt" || fail "cannot open init's mount namespace"
        expect_true "the sandbox's mount namespace is in use" test -n "$(procs_in_ns "$ns")"
        # pause first: terminate must also end a frozen sandbox
        sb pause "$ID"
        sb terminate "$ID"
        expect_rc 0 "terminate"
        expect_true "no state directory left" test ! -e "$STATE/$ID"
        expect_eq "" "$(cgroups_of "$ID")" "no cgroup left"
        expect_true "init is gone" pid_gone "$init"
        wait_until 5 pid_gone "$sentry" || _it_soft_fail "the sentry is gone"
        expect_eq "" "$(procs_in_ns "$ns")" "no process holds the sandbox's mounts"
        exec {nsfd}<&-
        sb terminate "$ID"
        expect_rc 0 "terminate is idempotent"
        sb exec "$ID" -- true
        expect_true "exec after terminate fails" test "$RC" != 0
}

it_test ttl_expires_without_client
ttl_expires_without_client() {
        need_root
        # long enough for the steps before the first look on a loaded machine (with 2 s, a
        # sanitizer-free make -j2 check on a slow host saw the sandbox already gone)
        new_sandbox --ttl 6s
        local init sentry
        init=$(meta "$ID" initPid)
        sentry=$(meta "$ID" sentryPid)
        sb exec "$ID" --detach -- sleep 1000
        expect_true "alive before its TTL" test -d "$STATE/$ID"
        # no client of ours is running now; the sentry alone must end it
        wait_until 15 test ! -e "$STATE/$ID" || fail "the sandbox outlived its TTL"
        expect_true "init is gone" pid_gone "$init"
        wait_until 5 pid_gone "$sentry" || _it_soft_fail "the sentry is gone"
        expect_eq "" "$(cgroups_of "$ID")" "no cgroup left"
        # the policy's expiresAt is enforced the same way
        local pol="$IT_TMP/policy.json"
        printf '{"expiresAt": "%s"}\n' "$(date -u -d '+2 seconds' +%Y-%m-%dT%H:%M:%SZ)" >"$pol"
        new_sandbox --policy "$pol"
        wait_until 10 test ! -e "$STATE/$ID" || fail "the sandbox outlived its expiresAt"
}

it_test gc_after_killed_sentry
gc_after_killed_sentry() {
        need_root
        # a private state root: every `cordon run` of the suites running in parallel starts with
        # a gc of the default root, which could take this dead sandbox's state first
        local root="$IT_TMP/gcroot" id init sentry
        sb --root "$root" create
        [ "$RC" = 0 ] || fail "create --root failed with $RC: $ERR"
        id=$OUT
        at_exit "timeout 30 '$CORDON' sandbox --root '$root' terminate $id"
        init=$(STATE=$root/sandboxes meta "$id" initPid)
        sentry=$(STATE=$root/sandboxes meta "$id" sentryPid)
        kill -KILL "$sentry"
        wait_until 5 pid_gone "$init" || _it_soft_fail "init dies with its sentry"
        expect_true "the state is still there before gc" test -e "$root/sandboxes/$id"
        sb --root "$root" exec "$id" -- true
        expect_true "exec on a dead sandbox fails" test "$RC" != 0
        expect_contains "$ERR" "cordon gc --root $root" "and points at gc for its root"
        OUT=$(timeout 30 "$CORDON" gc --root "$root" 2>&1)
        expect_contains "$OUT" "$id" "gc names what it removed"
        expect_true "no state directory left" test ! -e "$root/sandboxes/$id"
        expect_eq "" "$(cgroups_of "$id")" "no cgroup left"
}

# `cordon run` collects what a killed sentry left: the state directory and
# the cgroups of a sandbox whose sentry was killed are gone once a run has
# ended. (Runs of suites in parallel collect it as well; if the run's gc
# could not work, none would.)
it_test run_collects_killed_sentry
run_collects_killed_sentry() {
        need_root
        local id init sentry
        sb create
        [ "$RC" = 0 ] || fail "create failed with $RC: $ERR"
        id=$OUT
        at_exit "timeout 30 '$CORDON' gc >/dev/null 2>&1"
        init=$(meta "$id" initPid)
        sentry=$(meta "$id" sentryPid)
        expect_true "the sandbox has cgroups" test -n "$(cgroups_of "$id")"
        kill -KILL "$sentry"
        wait_until 5 pid_gone "$init" || _it_soft_fail "init dies with its sentry"
        # a few runs (another suite's gc may hold the admission lock): one of them collects it
        local i
        for i in 1 2 3 4 5; do
                crun -- true
                expect_rc 0 "a run after the sentry was killed"
                [ -e "$STATE/$id" ] || break
        done
        expect_true "the killed sandbox's state is gone after a run" test ! -e "$STATE/$id"
        expect_eq "" "$(cgroups_of "$id")" "no cgroup left"
}

it_test snapshot_and_restore
snapshot_and_restore() {
        need_root
        local first d
        d=$(scratch_dir snap)
        printf '%s\n' '{"limits": {"maxProcesses": 77}, "env": {"FROM_POLICY": "yes"}}' >"$d/policy.json"
        new_sandbox --policy "$d/policy.json"
        first=$ID
        sb exec "$ID" -- sh -c 'echo kept > /tmp/kept; mkdir -p /root/work; echo home > /root/work/f; ln -s kept /tmp/link'
        expect_rc 0 "write some state"
        sb snapshot "$ID" "$d/s.tar.zst"
        expect_rc 0 "snapshot"
        expect_match "$OUT" '^sha256:[0-9a-f]{64}$' "the digest is printed"
        expect_eq "${OUT#sha256:}" "$(sha256sum <"$d/s.tar.zst" | cut -d' ' -f1)" "it is the archive's sha256"
        expect_true "the digest is stored" grep -q "$OUT" "$d/s.tar.zst.sha256"
        if command -v zstd >/dev/null; then
                expect_true "a valid zstd stream" zstd -q -t "$d/s.tar.zst"
                expect_contains "$(zstd -dc "$d/s.tar.zst" | tar -tf -)" "layer/tmp/kept" "the layer is in the tar"
        fi
        sb terminate "$first"
        new_sandbox --from-snapshot "$d/s.tar.zst" --policy "$d/policy.json"
        expect_not_contains "$ERR" "another policy" "restored under the policy it was taken under: no note"
        sb exec "$ID" -- sh -c 'cat /tmp/kept /root/work/f; readlink /tmp/link; echo "$FROM_POLICY"'
        expect_eq $'kept\nhome\nkept\nyes' "$OUT" "restored as the writable layer's content"
        sb terminate "$ID"
        # the archive's policy is data, never applied: without --policy the
        # restored sandbox runs under the default one, and create says so
        new_sandbox --from-snapshot "$d/s.tar.zst"
        expect_contains "$ERR" "taken under another policy" "a restore under another policy is noted"
        sb exec "$ID" -- sh -c 'cat /tmp/kept; echo "[$FROM_POLICY]"'
        expect_eq $'kept\n[]' "$OUT" "and runs under its own policy"
        sb terminate "$ID"
        # one byte changed: refused
        python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(100); b = f.read(1); f.seek(100); f.write(bytes([b[0] ^ 0xff]))' "$d/s.tar.zst"
        sb create --from-snapshot "$d/s.tar.zst"
        expect_true "a digest mismatch refuses" test "$RC" != 0
        expect_contains "$ERR" "digest mismatch" "and says so"
        [ "$RC" = 0 ] && at_exit "timeout 30 '$CORDON' sandbox terminate $OUT"
        return 0
}

# A small root made of the host's own binaries (as layers.sh's make_template), with files the
# test changes: /data/victim to delete, /opt/tools to replace, /etc to add to.
make_small_template() {
        local t=$1 p lib
        mkdir -p "$t/usr/bin" "$t/usr/lib/x86_64-linux-gnu" "$t/usr/lib64" "$t/etc" "$t/data" "$t/opt/tools" ||
                fail "cannot create the template in $t"
        ln -s usr/bin "$t/bin" && ln -s usr/lib "$t/lib" && ln -s usr/lib64 "$t/lib64" ||
                fail "cannot create the template's links"
        for p in sh cat ls rm mkdir chmod ln readlink; do
                [ -x "/usr/bin/$p" ] || [ -x "/bin/$p" ] || skip "the host has no $p to put in a template"
                cp -L "$(command -v "$p")" "$t/usr/bin/$p" || fail "cannot copy $p into the template"
                for lib in $(ldd "$t/usr/bin/$p" 2>/dev/null | grep -o '/[^ ]*'); do
                        case $lib in
                        */ld-linux*) cp -Ln "$lib" "$t/usr/lib64/" ;;
                        *) cp -Ln "$lib" "$t/usr/lib/x86_64-linux-gnu/" ;;
                        esac || fail "cannot copy $lib into the template"
                done
        done
        echo 'root:x:0:0:root:/root:/bin/sh' >"$t/etc/passwd"
        echo victim >"$t/data/victim"
        echo keep >"$t/data/keep"
        cp -L "$(command -v cat)" "$t/opt/tools/mycat"
        chmod 0755 "$t" "$t/data" "$t/opt/tools"
}

tree_state() {
        (cd "$1" && find . -printf '%y %m %s %p -> %l\n' | sort && find . -type f -exec sha256sum {} + | sort)
}

# A template root's changes anywhere in its root (new files, changed ones, deletions, a replaced
# directory) are in its snapshot, and come back only onto the same template.
it_test snapshot_template_root
snapshot_template_root() {
        need_root
        local t t2 d pol pol2 before
        t=$(scratch_dir tpl)
        d=$(scratch_dir tsnap)
        make_small_template "$t"
        before=$(tree_state "$t")
        pol="$IT_TMP/tpl-policy.json"
        printf '{"source": {"kind": "template", "path": "%s"}}\n' "$t" >"$pol"
        new_sandbox --policy "$pol"
        local first=$ID
        sb exec "$ID" -- sh -c 'mkdir -p /usr/local/bin && echo "echo tool-ran" >/usr/local/bin/tool &&
                chmod 755 /usr/local/bin/tool && echo conf >/etc/app.conf && rm /data/victim &&
                rm -rf /opt/tools && mkdir /opt/tools && echo new >/opt/tools/new && echo layer >/tmp/kept &&
                ln -s /etc/app.conf /etc/applink'
        expect_rc 0 "change the root"
        sb snapshot "$ID" "$d/s.tar.zst"
        expect_rc 0 "snapshot of a template root"
        local listing
        listing=$(zstd -dc "$d/s.tar.zst" | tar -tf -)
        expect_contains "$listing" "upper/usr/local/bin/tool" "a new file anywhere in the root"
        expect_contains "$listing" "upper/etc/app.conf" "a file added to the template's /etc"
        expect_contains "$listing" "upper/data/.wh.victim" "a deletion, as a whiteout marker"
        expect_contains "$listing" "upper/opt/tools/.wh..wh..opq" "a replaced directory, as an opaque marker"
        expect_not_contains "$listing" "upper/etc/resolv.conf" "cordon's own mount points are left out"
        expect_contains "$(zstd -dc "$d/s.tar.zst" | tar -xOf - cordon/sandbox.json)" "\"path\": \"$t\"" \
                "the template is named in the snapshot"
        sb terminate "$first"

        new_sandbox --policy "$pol" --from-snapshot "$d/s.tar.zst"
        sb exec "$ID" -- sh -c '/usr/local/bin/tool; cat /etc/app.conf /tmp/kept; readlink /etc/applink;
                ls /data; ls /opt/tools; test -e /data/victim && echo victim-back'
        expect_eq $'tool-ran\nconf\nlayer\n/etc/app.conf\nkeep\nnew' "$OUT" \
                "restored onto the same template: new, changed and deleted files as they were"
        expect_eq "$before" "$(tree_state "$t")" "the template itself is untouched"
        sb terminate "$ID"

        # another template (same tree plus one file): refused, and says why
        t2=$(scratch_dir tpl2)
        cp -a "$t/." "$t2/" && echo extra >"$t2/data/extra"
        pol2="$IT_TMP/tpl2-policy.json"
        printf '{"source": {"kind": "template", "path": "%s"}}\n' "$t2" >"$pol2"
        sb create --policy "$pol2" --from-snapshot "$d/s.tar.zst"
        [ "$RC" = 0 ] && at_exit "timeout 30 '$CORDON' sandbox terminate $OUT"
        expect_true "a snapshot of one template onto another is refused" test "$RC" != 0
        expect_contains "$ERR" "template mismatch" "and says so"
        # the default root: refused too
        sb create --from-snapshot "$d/s.tar.zst"
        [ "$RC" = 0 ] && at_exit "timeout 30 '$CORDON' sandbox terminate $OUT"
        expect_true "a template snapshot onto the default root is refused" test "$RC" != 0
        expect_contains "$ERR" "not a template" "and says so"
        # the same template pinned by digest in the new policy: accepted
        local dg
        dg=$("$CORDON" digest "$t" 2>/dev/null)
        if [[ $dg =~ ^sha256: ]]; then
                printf '{"source": {"kind": "template", "path": "%s", "digest": "%s"}}\n' "$t" "$dg" >"$pol2"
                new_sandbox --policy "$pol2" --from-snapshot "$d/s.tar.zst"
                sb exec "$ID" -- cat /etc/app.conf
                expect_eq conf "$OUT" "restored under a policy that pins the template's digest"
        fi
}

# snapshot and create --from-snapshot show their progress (bytes and entries, rewritten in place)
# when stderr is a terminal, and print nothing of it otherwise
it_test snapshot_progress_on_a_terminal
snapshot_progress_on_a_terminal() {
        need_root
        command -v script >/dev/null || skip "script(1) is not installed"
        new_sandbox
        local d out
        d=$(scratch_dir progress)
        sb exec "$ID" -- sh -c 'for i in $(seq 1 300); do head -c 20000 /dev/urandom >/tmp/f$i; done'
        expect_rc 0 "some data to snapshot"
        out=$(timeout 60 script -qec "'$CORDON' sandbox snapshot $ID $d/t.tar.zst >$d/digest" /dev/null </dev/null 2>&1)
        expect_match "$out" $'\r''cordon: snapshot: [0-9.]+ (MB|kB|bytes), [0-9]+ entries' "progress on the terminal"
        expect_match "$out" '30[0-9] entries' "the final line counts every entry"
        expect_match "$(cat "$d/digest")" '^sha256:' "the digest still goes to stdout"
        sb snapshot "$ID" "$d/n.tar.zst"
        expect_rc 0 "snapshot without a terminal"
        expect_eq "" "$ERR" "no progress when stderr is no terminal"
        out=$(timeout 60 script -qec "'$CORDON' sandbox create --from-snapshot $d/t.tar.zst >$d/id" /dev/null </dev/null 2>&1)
        local id2
        id2=$(tr -d '\r\n' <"$d/id")
        [[ $id2 =~ ^[0-9a-f]{16}$ ]] && at_exit "timeout 30 '$CORDON' sandbox terminate $id2"
        expect_match "$id2" '^[0-9a-f]{16}$' "create --from-snapshot on a terminal"
        expect_match "$out" 'restoring the snapshot: [0-9.]+ (MB|kB|bytes) of [0-9.]+ (MB|kB|bytes) \([0-9]+%\), [0-9]+ entries' \
                "restore progress on the terminal"
        sb create --from-snapshot "$d/n.tar.zst"
        [ "$RC" = 0 ] && at_exit "timeout 30 '$CORDON' sandbox terminate $OUT"
        expect_rc 0 "create --from-snapshot without a terminal"
        expect_not_contains "$ERR" "restoring" "no progress when stderr is no terminal"
}

it_test events_replay_follow_and_masking
events_replay_follow_and_masking() {
        need_root
        new_sandbox
        local d
        d=$(scratch_dir events)
        # --follow streams until the sandbox is gone
        timeout 60 "$CORDON" sandbox events "$ID" --follow --json >"$d/follow" 2>&1 &
        local follower=$!
        at_exit "kill $follower"
        sb exec "$ID" --detach -- sh -c 'seq 1 10000; echo "{\"token\": \"abc\", \"inner\": {\"Password\": \"p\", \"keep\": 1}}"'
        local run=$OUT
        # read in pieces with --after while it runs, always from the last sequence seen
        local last=0 piece tries=0
        : >"$d/pieces"
        while :; do
                piece=$(timeout 20 "$CORDON" sandbox events "$ID" --json --after "$last")
                if [ -n "$piece" ]; then
                        printf '%s\n' "$piece" >>"$d/pieces"
                        last=$(printf '%s\n' "$piece" | tail -n 1 | sed -n 's/.*"seq":\([0-9]*\).*/\1/p')
                fi
                grep -q '"type":"run_exited"' "$d/pieces" && break
                tries=$((tries + 1))
                [ $tries -lt 400 ] || fail "the run did not end"
                sleep 0.0$((RANDOM % 10))
        done
        it_log "read in $tries pieces"
        # and once more after the end
        timeout 20 "$CORDON" sandbox events "$ID" --json --after "$last" >>"$d/pieces"
        timeout 20 "$CORDON" sandbox events "$ID" --json >"$d/all"
        expect_true "pieces read with --after equal one full read" cmp -s "$d/pieces" "$d/all"
        # the run's output, from its events, is the whole output in order
        python3 - "$d/all" "$run" >"$d/text" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["type"] == "output" and e["run"] == sys.argv[2] and "text" in e:
        print(e["text"])
PY
        expect_true "10,000 output lines, no gap or duplicate" cmp -s "$d/text" <(seq 1 10000)
        local seqs n
        n=$(wc -l <"$d/all")
        seqs=$(sed -n 's/.*"seq":\([0-9]*\).*/\1/p' "$d/all" | tr '\n' ' ')
        expect_eq "$(seq -s ' ' 1 "$n") " "$seqs" "sequence numbers only grow, without gaps"
        # structured output: credential-like fields are masked, recursively
        expect_contains "$(cat "$d/all")" '"token":"***"' "token masked"
        expect_contains "$(cat "$d/all")" '"Password":"***"' "nested Password masked"
        expect_contains "$(cat "$d/all")" '"keep":1' "other fields kept"
        expect_not_contains "$(cat "$d/all")" '"abc"' "the secret value is nowhere"
        # an egress denial shows up as an audit event
        sb exec "$ID" -- bash -c 'exec 3<>/dev/tcp/169.254.169.254/80'
        sb events "$ID" --json --after "$n"
        expect_contains "$OUT" '"ip_literal_blocked"' "egress denials are events"
        sb terminate "$ID"
        wait_until 10 sh -c "! kill -0 $follower 2>/dev/null" || _it_soft_fail "--follow ends with the sandbox"
        expect_contains "$(cat "$d/follow")" '"type":"ended"' "--follow saw the end"
        expect_contains "$(cat "$d/follow")" '"type":"terminated"' "--follow saw the terminate"
}

it_test cancel_is_final
cancel_is_final() {
        need_root
        new_sandbox
        local run
        # hundreds of short runs in one sandbox, each cancelled 0-20 ms after it started, driven
        # through the control socket: the CLI's own start-up would otherwise dominate the timing
        python3 - "$STATE/$ID/control.sock" "$STATE/$ID/events.jsonl" 500 >"$IT_TMP/cancel.out" 2>&1 <<'PY'
# Cancel races (issue #6): hundreds of short runs in one sandbox, each cancelled after a random
# delay of 0-20 ms, through the control socket (the CLI's start-up would dominate otherwise).
# Whenever cancel answered ok, the run's final status must be "cancelled", in inspect and in
# its run_exited event, even when the run's own exit (a success) arrived afterwards.
import json, random, socket, sys, time
sock_path, events_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def req(obj):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sock_path)
    s.send(json.dumps(obj).encode())
    rep = json.loads(s.recv(1 << 20))
    s.close()
    return rep
ok, late, bad = [], 0, []
t0 = time.time()
for i in range(n):
    rep = req({"op": "exec", "argv": ["sh", "-c", "sleep 0.00%d; exit 0" % random.randrange(10)], "detach": True})
    if "run" not in rep:
        sys.exit("exec %d failed: %s" % (i, rep))
    run = rep["run"]
    time.sleep(random.random() * 0.02)
    rep = req({"op": "cancel", "run": run})
    if rep.get("ok"):
        ok.append(run)
    elif "already ended" not in rep.get("error", ""):
        sys.exit("cancel %s: %s" % (run, rep))
# let every run end, then compare
deadline = time.time() + 20
while True:
    ins = req({"op": "inspect"})
    if "runs" not in ins:
        sys.exit("inspect failed: %s" % ins)
    if not any(r["status"] == "running" for r in ins["runs"]) or time.time() > deadline:
        break
    time.sleep(0.1)
status = {r["id"]: r["status"] for r in ins["runs"]}
exited = {}
for line in open(events_path):
    e = json.loads(line)
    if e["type"] == "run_exited":
        if e["run"] in exited:
            bad.append("%s exited twice" % e["run"])
        exited[e["run"]] = e["status"]
for run in ok:
    if status.get(run, "cancelled") != "cancelled":  # runs beyond inspect's window are checked by events
        bad.append("%s: inspect says %s after a successful cancel" % (run, status[run]))
    if exited.get(run) != "cancelled":
        bad.append("%s: run_exited says %s after a successful cancel" % (run, exited.get(run)))
print("%d runs, %d cancels answered ok, %.1f s" % (n, len(ok), time.time() - t0))
for b in bad[:20]:
    print("BAD", b)
sys.exit(1 if bad or len(ok) < n // 10 else 0)
PY
        RC=$?
        it_log "$(cat "$IT_TMP/cancel.out")"
        expect_rc 0 "every successful cancel left the run cancelled (see BAD lines)"
        # inspect still answers with 500 runs on record (its reply once outgrew one message)
        sb inspect "$ID" --json
        expect_rc 0 "inspect with hundreds of runs"
        expect_match "$OUT" '"runsOmitted": [1-9]' "older runs are counted, not listed"
        # a long run: cancel stops the actual processes
        sb exec "$ID" --detach -- sleep 1000
        run=$OUT
        sb cancel "$ID" "$run"
        expect_rc 0 "cancel"
        wait_until 5 sh -c "'$CORDON' sandbox inspect $ID --json | grep -q '\"status\": \"cancelled\"'" ||
                _it_soft_fail "the run is cancelled"
        local g procs=
        for g in $(cgroups_of "$ID"); do
                if [ -f "$g/cgroup.procs" ]; then
                        procs=$(wc -l <"$g/cgroup.procs")
                        break
                fi
        done
        [ -n "$procs" ] && expect_eq 1 "$procs" "only init is left in the sandbox's cgroup"
        sb cancel "$ID" "$run"
        expect_true "cancelling an ended run fails" test "$RC" != 0
        # the runs' own groups (cgroup v2) go as the runs end: none of the 501 is left; the next
        # run's (r502), made ahead while the sandbox idles (run_group_prepare), is there, empty
        local g2=
        for g in $(cgroups_of "$ID"); do
                [ -f "$g/cgroup.kill" ] && g2=$g
        done
        if [ -n "$g2" ]; then
                wait_until 5 sh -c "! ls '$g2' | grep '^run-' | grep -qvx 'run-502'" || true
                expect_eq "run-502 " "$(ls "$g2" | grep '^run-' | tr '\n' ' ')" \
                        "no ended run's group is left behind, only the next run's"
                expect_eq "" "$(cat "$g2/run-502/cgroup.procs" 2>&1)" "the next run's group, made ahead, is empty"
        fi
}

# the command lines of every process in the sandbox, one a line, as the sandbox's own /proc shows them
sandbox_procs() {
        timeout 30 "$CORDON" sandbox exec "$1" -- sh -c \
                'for p in /proc/[0-9]*; do [ -r $p/cmdline ] && tr "\0" " " <$p/cmdline; echo; done' 2>/dev/null
}

# Processes that leave the run's process group and session (setsid, a double fork, nohup &)
# still belong to the run: cancel and exec --timeout end all of them, and nothing of another
# run of the same sandbox.
it_test cancel_kills_escaped_processes
cancel_kills_escaped_processes() {
        need_root
        new_sandbox
        sb inspect "$ID" --json
        case $OUT in
        *'"runKill": "no cgroup v2 group'*) skip "no cgroup v2 group on this host: runs are killed by process group only" ;;
        esac
        expect_contains "$OUT" "each run in its own cgroup v2 group" "inspect says how runs are killed"
        sb exec "$ID" --detach -- sleep 999
        local other=$OUT
        sb exec "$ID" --detach -- sh -c 'setsid sleep 1001 & (setsid sh -c "sleep 1002 & exit 0" &); nohup sleep 1003 >/dev/null 2>&1 & exec sleep 1000'
        local run=$OUT
        wait_until 10 sh -c "'$CORDON' sandbox exec $ID -- sh -c 'cat /proc/[0-9]*/cmdline 2>/dev/null | tr \"\\0\" \" \"' | grep -q 'sleep 1003'" ||
                fail "the run's daemons did not start"
        local before
        before=$(sandbox_procs "$ID")
        expect_match "$before" 'sleep 1001' "a setsid daemon runs"
        expect_match "$before" 'sleep 1002' "a double-forked daemon runs"
        sb cancel "$ID" "$run"
        expect_rc 0 "cancel"
        wait_until 5 sh -c "! '$CORDON' sandbox exec $ID -- sh -c 'cat /proc/[0-9]*/cmdline 2>/dev/null | tr \"\\0\" \" \"' | grep -q 'sleep 100[0-3]'" || true
        local after
        after=$(sandbox_procs "$ID")
        expect_not_contains "$after" "sleep 1000" "the run's own process is gone"
        expect_not_contains "$after" "sleep 1001" "the setsid daemon is gone"
        expect_not_contains "$after" "sleep 1002" "the double-forked daemon is gone"
        expect_not_contains "$after" "sleep 1003" "the nohup'd process is gone"
        expect_contains "$after" "sleep 999" "another run of the sandbox is untouched"
        # --timeout ends the escaped ones too
        sb exec "$ID" --timeout 1s -- sh -c 'setsid sleep 1004 & (setsid sh -c "sleep 1005 & exit 0" &); sleep 30'
        expect_rc 124 "the run timed out"
        wait_until 5 sh -c "! '$CORDON' sandbox exec $ID -- sh -c 'cat /proc/[0-9]*/cmdline 2>/dev/null | tr \"\\0\" \" \"' | grep -q 'sleep 100[45]'" || true
        after=$(sandbox_procs "$ID")
        expect_not_contains "$after" "sleep 1004" "a setsid daemon of a timed-out run is gone"
        expect_not_contains "$after" "sleep 1005" "a double-forked daemon of a timed-out run is gone"
        expect_contains "$after" "sleep 999" "the other run still runs"
        sb inspect "$ID" --json
        expect_match "$OUT" "\"id\": \"$other\"" "the other run is listed"
        expect_eq running "$(printf '%s\n' "$OUT" | python3 -c 'import json,sys; print([r for r in json.load(sys.stdin)["runs"] if r["id"]==sys.argv[1]][0]["status"])' "$other")" "and still running"
}

it_test control_socket_owner_only
control_socket_owner_only() {
        need_root
        command -v setpriv >/dev/null || skip "setpriv is not installed"
        new_sandbox
        sb exec "$ID" -- true
        expect_rc 0 "root drives it"
        OUT=$(timeout 20 setpriv --reuid 65534 --regid 65534 --clear-groups "$CORDON" sandbox exec "$ID" -- echo hi 2>&1)
        RC=$?
        expect_true "another user cannot drive it" test "$RC" != 0
        expect_not_contains "$OUT" "hi"$'\n' "nothing ran"
}

it_test unprivileged_user
unprivileged_user() {
        need_root
        command -v setpriv >/dev/null || skip "setpriv is not installed"
        local as="setpriv --reuid 65534 --regid 65534 --clear-groups env -i PATH=/usr/bin:/bin HOME=/tmp"
        $as "$CORDON" --version >/dev/null 2>&1 || skip "the cordon binary is not reachable by uid 65534"
        $as "$CORDON" run -- true >/dev/null 2>&1 || skip "user namespaces are not usable by uid 65534"
        local id out
        id=$(timeout 30 $as "$CORDON" sandbox create 2>"$IT_TMP/err")
        [[ $id =~ ^[0-9a-f]{16}$ ]] || fail "create as uid 65534: $(cat "$IT_TMP/err")"
        at_exit "timeout 30 $as '$CORDON' sandbox terminate $id"
        out=$(timeout 30 $as "$CORDON" sandbox exec "$id" -- sh -c 'echo one > /tmp/f; cat /tmp/f' 2>&1)
        expect_eq one "$out" "a run of an unprivileged user's sandbox"
        out=$(timeout 30 $as "$CORDON" sandbox exec "$id" -- cat /tmp/f 2>&1)
        expect_eq one "$out" "a second run sees the first one's file"
        out=$(timeout 30 $as "$CORDON" sandbox get "$id" /tmp/f - 2>&1)
        expect_eq one "$out" "get"
        # pause needs a freezer: where this user's sandbox has no control group, it says so and
        # the sandbox runs on (where it has one, it is paused and resumed)
        if timeout 30 $as "$CORDON" sandbox inspect "$id" --json | grep -q '"cgroup": "none"'; then
                out=$(timeout 30 $as "$CORDON" sandbox pause "$id" 2>&1)
                RC=$?
                expect_true "pause without a freezer fails" test "$RC" != 0
                expect_contains "$out" "no freezer" "and says why"
                out=$(timeout 30 $as "$CORDON" sandbox exec "$id" -- cat /tmp/f 2>&1)
                expect_eq one "$out" "the sandbox still runs after the refused pause"
        else
                it_log "uid 65534's sandbox has a control group: pause is tested in pause_resume"
        fi
        # root's sandboxes are not this user's, and this user's state is its own
        expect_true "not under root's state directory" test ! -e "$STATE/$id"
        timeout 30 $as "$CORDON" sandbox terminate "$id"
        RC=$?
        expect_rc 0 "terminate"
        out=$(timeout 30 $as "$CORDON" sandbox list 2>&1)
        expect_not_contains "$out" "$id" "gone from the list"
}

# --root DIR keeps a set of sandboxes apart (as runc's --root): state, control socket and
# listing live under DIR; the default root does not see them; gc --root cleans there.
# An attached run's output reaches the client's own stdout and stderr, kept apart, and is
# recorded as events too (issue #6: every run records its output), stdin still flows in, and a
# large output arrives whole and in order.
it_test attached_run_output_is_recorded
attached_run_output_is_recorded() {
        local out err
        new_sandbox
        out=$(printf 'from-stdin\n' | timeout 30 "$CORDON" sandbox exec "$ID" -- sh -c \
                'cat; echo to-out; echo to-err >&2; printf "{\"password\": \"%s%s\"}\\n" p4 ss; exit 5' 2>"$IT_TMP/err")
        RC=$?
        err=$(cat "$IT_TMP/err")
        expect_rc 5 "the run's exit status"
        expect_eq $'from-stdin\nto-out\n{"password": "p4ss"}' "$out" "stdout at the client"
        expect_eq "to-err" "$err" "stderr at the client, apart from stdout"
        sb events "$ID" --json
        expect_match "$OUT" '"stream":"stdout".*"text":"from-stdin"|"text":"from-stdin".*"stream":"stdout"' "stdin's echo recorded"
        expect_match "$OUT" '"stream":"stderr".*"text":"to-err"|"text":"to-err".*"stream":"stderr"' "stderr recorded as such"
        expect_contains "$OUT" '"password":"***"' "a credential in the output is masked in the events"
        expect_not_contains "$OUT" "p4ss" "the password itself is in no event"
        out=$(timeout 60 "$CORDON" sandbox exec "$ID" -- seq 1 200000 | sha256sum)
        expect_eq "$(seq 1 200000 | sha256sum)" "$out" "200,000 lines arrive whole and in order"
}

it_test state_root_option
state_root_option() {
        local root="$IT_TMP/root" id
        sb --root "$root" create
        [ "$RC" = 0 ] || fail "create --root failed with $RC: $ERR"
        id=$OUT
        at_exit "timeout 30 '$CORDON' sandbox --root '$root' terminate $id"
        expect_true "the state is under --root" test -S "$root/sandboxes/$id/control.sock"
        sb --root "$root" exec "$id" -- sh -c 'echo in-root'
        expect_eq "in-root" "$OUT" "exec through the socket under --root"
        sb --root="$root" list
        expect_contains "$OUT" "$id" "list under --root=DIR"
        sb list
        expect_not_contains "$OUT" "$id" "the default root does not list it"
        sb exec "$id" -- true
        expect_true "the default root cannot reach it" test "$RC" != 0
        # a gc under the default root (every cordon start runs one) sees this sandbox's cgroups
        # but not its state: its claim keeps them from being taken for garbage
        OUT=$("$CORDON" gc 2>&1)
        expect_not_contains "$OUT" "$id" "gc under the default root leaves it alone"
        sb --root "$root" exec "$id" -- sh -c 'echo still-alive'
        expect_eq "still-alive" "$OUT" "the sandbox still runs after the other root's gc"
        sb --root "$root" terminate "$id"
        expect_rc 0 "terminate under --root"
        expect_true "its state is gone" test ! -e "$root/sandboxes/$id"
        sb --root relative/dir list
        expect_rc 2 "a relative --root"
        expect_contains "$ERR" "absolute" "says why"
}

it_test exec_with_a_terminal
exec_with_a_terminal() {
        need_root
        command -v script >/dev/null || skip "script(1) is not installed"
        new_sandbox
        # script's stdin stays open while the run lasts: at its end script(1) types an end-of-file
        # character at the terminal, which the client, in raw mode, passes on to the run as any key
        # (it showed in the run's output as ^@ where the run had not ended yet)
        local keep hold
        exec {keep}< <(exec sleep 60 2>/dev/null)
        hold=$!
        OUT=$(timeout 30 script -qec "'$CORDON' sandbox exec $ID -t -- sh -c 'test -t 0 && test -t 1 && echo tty-yes; tty; exit 3'" /dev/null <&"$keep" 2>&1)
        RC=$?
        exec {keep}<&-
        kill "$hold" 2>/dev/null
        expect_rc 3 "the run's status through a terminal"
        expect_contains "$OUT" "tty-yes" "stdin and stdout are a terminal"
        expect_match "$OUT" '/dev/pts/[0-9]+' "from the sandbox's own devpts"
        # what the run showed on its terminal is recorded as events too (issue #6)
        sb events "$ID" --json
        expect_match "$OUT" '"stream":"tty","text":"[^"]*tty-yes"' "a terminal run's output is an event"
        expect_match "$OUT" '"text":"/dev/pts/[0-9]+"' "every line of it, without the terminal's \\r"
        # input typed at the client's terminal reaches the run, and its end is the run's EOF
        OUT=$( (sleep 1; printf 'hello\n'; sleep 1) | timeout 30 script -qec "'$CORDON' sandbox exec $ID -t -- sh -c 'read x; echo got-\$x; cat; echo cat-ended'" /dev/null 2>&1)
        RC=$?
        expect_rc 0 "the run ends when the input does"
        expect_contains "$OUT" "got-hello" "input through the terminal"
        expect_contains "$OUT" "cat-ended" "the input's end reaches the run as EOF"
        sb events "$ID" --json
        expect_contains "$OUT" '"text":"got-hello"' "recorded as an event too"
        sb exec "$ID" -- sh -c 'test -t 0 || echo no-tty'
        expect_eq no-tty "$OUT" "no terminal unless ours is one (or -t)"
        sb exec "$ID" -t --detach -- true
        expect_true "-t with --detach is refused" test "$RC" != 0
}

it_test output_cannot_blind_the_record
output_cannot_blind_the_record() {
        need_root
        new_sandbox
        # the sandboxed code prints more than the events file holds ...
        timeout 120 "$CORDON" sandbox exec "$ID" -- sh -c 'head -c 70000000 /dev/zero | tr "\\0" a; echo' >/dev/null
        RC=$?
        expect_rc 0 "a run that prints 70 MB"
        # ... and what it does next is still recorded: its next run and its
        # egress attempts (the audit), and the run can still be followed
        sb exec "$ID" -- bash -c 'echo after; exec 3<>/dev/tcp/169.254.169.254/80'
        sb events "$ID" --json --run r2
        expect_contains "$OUT" '"type":"run_exited"' "the next run's end is an event"
        expect_not_contains "$OUT" '"text":"after"' "but not its output, past the output's share"
        sb events "$ID" --json
        expect_contains "$OUT" '"type":"output_limit"' "the output's limit is said"
        expect_contains "$OUT" '"ip_literal_blocked"' "an egress denial after it is an event"
        sb terminate "$ID"
}

# names and command lines inside a sandbox are its code's: `ls` and `ps` print them with
# terminal escapes and carriage returns escaped, never raw to the operator's terminal
it_test listings_escape_control_bytes
listings_escape_control_bytes() {
        need_root
        new_sandbox
        sb exec "$ID" -- bash -c 'touch "/tmp/$(printf "a\033]0;t\007\rb")"; exec -a "$(printf "s\033[2Jp")" sleep 30 &'
        sb ls "$ID" /tmp
        expect_not_contains "$OUT" $'\033' "ls prints no escape byte"
        expect_contains "$OUT" 'a\x1b]0;t\x07\x0db' "ls shows the name escaped"
        sb ps "$ID"
        expect_not_contains "$OUT" $'\033' "ps prints no escape byte"
        expect_contains "$OUT" 's\x1b[2Jp' "ps shows the command escaped"
        sb terminate "$ID"
}

# `get` lands whole or not at all at LOCAL: one that fails (no such path in the sandbox) leaves an
# existing LOCAL as it was (it used to be truncated to nothing) and makes no file where there was
# none. `events` refuses an --after or --run it cannot read, naming the flag (it used to read
# "abc" as 0), and a follow that outlives its sandbox shows its last events as the others.
it_test get_and_events_refuse_cleanly
get_and_events_refuse_cleanly() {
        need_root
        new_sandbox
        local d
        d=$(scratch_dir get)
        echo precious >"$d/keep"
        sb get "$ID" /no/such/file "$d/keep"
        expect_rc 1 "get of a missing path"
        expect_eq precious "$(cat "$d/keep")" "LOCAL is left as it was"
        sb get "$ID" /no/such/file "$d/new"
        expect_true "no file is made" test ! -e "$d/new"
        expect_eq "" "$(ls -A "$d" | grep cordon-get)" "nor any temporary one left"
        sb exec "$ID" -- sh -c 'echo fresh > /tmp/f'
        sb get "$ID" /tmp/f "$d/keep"
        expect_eq "0 fresh" "$RC $(cat "$d/keep")" "a get that works replaces LOCAL"
        sb get "$ID" /tmp/f -
        expect_eq "0 fresh" "$RC $OUT" "get to stdout"
        local bad
        for bad in abc -5 1x ""; do
                sb events "$ID" --after "$bad"
                expect_rc 2 "events --after '$bad'"
                expect_contains "$ERR" "--after" "the error names the flag"
        done
        sb events "$ID" --run '../x'
        expect_rc 2 "events --run ../x"
        for bad in 0 99999 abc; do
                sb port "$ID" "$bad"
                expect_rc 2 "port $bad (a usage error, as any bad argument)"
                expect_contains "$ERR" "1-65535" "the error says the range"
        done
        sb exec "$ID" -- echo hi
        ( sleep 1; timeout 30 "$CORDON" sandbox terminate "$ID" >/dev/null 2>&1 ) &
        sb events "$ID" --follow
        expect_rc 0 "a follow ends with its sandbox"
        expect_contains "$OUT" "terminated" "and shows its last event"
}

it_main "$@"
