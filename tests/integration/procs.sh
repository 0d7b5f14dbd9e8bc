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

IT_TEST_TIMEOUT=${IT_TEST_TIMEOUT:-120}
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

# --- ports ---

# a small server for the sandbox: "send N" sends N bytes, "recv N" reads N bytes and answers
# "ok COUNT", "echo" echoes lines until the client closes, "eof" reads until the client shuts its
# side and answers "ok COUNT", "half N" sends N bytes, shuts its side and counts what still comes
# (into /tmp/half.count); it closes each connection when done
# (also on a malformed request: the forwarder keeps a half-closed connection open while the
# server does, as a direct connection would)
SRV_PY='import socket, sys, threading
def handle(c):
    try:
        serve(c)
    except Exception:
        pass
    c.close()
def serve(c):
    f = c.makefile('"'"'rb'"'"')
    line = f.readline().split()
    if not line: c.close(); return
    n = int(line[1])
    if line[0] == b'"'"'send'"'"':
        buf = b'"'"'\0'"'"' * (1 << 20)
        while n > 0:
            k = c.send(buf[:min(n, len(buf))]); n -= k
    elif line[0] == b'"'"'recv'"'"':
        got = 0
        while got < n:
            d = f.read1(1 << 20)
            if not d: break
            got += len(d)
        c.sendall(b'"'"'ok %d\n'"'"' % got)
    elif line[0] == b'"'"'half'"'"':
        # n bytes, then our side shut; what the client sends after that is
        # counted into /tmp/half.count
        buf = b'"'"'\0'"'"' * (1 << 20)
        while n > 0:
            k = c.send(buf[:min(n, len(buf))]); n -= k
        c.shutdown(socket.SHUT_WR)
        got = 0
        while True:
            d = f.read1(1 << 20)
            if not d: break
            got += len(d)
        open('"'"'/tmp/half.count'"'"', '"'"'w'"'"').write('"'"'%d\n'"'"' % got)
    elif line[0] == b'"'"'eof'"'"':
        # read until the client shuts its side, then answer the count
        got = 0
        while True:
            d = f.read1(1 << 20)
            if not d: break
            got += len(d)
        c.sendall(b'"'"'ok %d\n'"'"' % got)
    elif line[0] == b'"'"'echo'"'"':
        while True:
            d = f.readline()
            if not d: break
            c.sendall(d)
    c.close()
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('"'"'127.0.0.1'"'"', int(sys.argv[1]))); s.listen(64)
while True:
    c, _ = s.accept()
    threading.Thread(target=handle, args=(c,), daemon=True).start()
'

# a client on the host: ADDR MODE N; prints the bytes it moved
client() {
        python3 - "$@" <<'PY'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
mode, n = sys.argv[2], int(sys.argv[3])
c = socket.create_connection((host, int(port)), timeout=30)
if mode == "send":
    c.sendall(b"send %d\n" % n)
    got = 0
    while True:
        d = c.recv(1 << 20)
        if not d:
            break
        got += len(d)
    print(got)
else:
    c.sendall(b"recv %d\n" % n)
    buf, left = b"\0" * (1 << 20), n
    while left > 0:
        k = c.send(buf[: min(left, len(buf))])
        left -= k
    print(int(c.makefile("rb").readline().split()[1]))
PY
}

# starts the server in sandbox $ID on PORT inside, and waits until it listens
start_server() { # PORT
        local f
        f=$(scratch_dir srv)/srv.py
        printf '%s' "$SRV_PY" >"$f"
        sb put "$ID" "$f" /tmp/srv.py
        [ "$RC" = 0 ] || fail "put of the server failed"
        sb exec "$ID" --detach -- python3 /tmp/srv.py "$1"
        [ "$RC" = 0 ] || fail "the server did not start"
        wait_until 10 sh -c "'$CORDON' sandbox exec $ID -- python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", $1)).close()' >/dev/null 2>&1" ||
                fail "the server does not listen on $1"
}

sentry_of() {
        python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sentryPid"])' "/run/cordon/sandboxes/$1/meta.json"
}

port_field() { # PORT FIELD (from `port ID --list --json` in $OUT)
        printf '%s' "$OUT" | python3 -c '
import json, sys
for p in json.load(sys.stdin)["ports"]:
    if p["port"] == int(sys.argv[1]):
        print(p[sys.argv[2]])' "$1" "$2"
}

it_test http_server_answers_through_an_exposed_port
http_server_answers_through_an_exposed_port() {
        need_root
        command -v python3 >/dev/null || skip "no python3"
        new_sandbox
        sb exec "$ID" --detach -- sh -c 'mkdir -p /tmp/www && echo hello-from-the-sandbox >/tmp/www/index.html &&
                exec python3 -m http.server 3000 --bind 127.0.0.1 --directory /tmp/www'
        sb port "$ID" 3000
        expect_rc 0 "port"
        local addr=$OUT
        expect_match "$addr" '^127\.0\.0\.1:[0-9]+$' "the printed host address"
        wait_until 10 sh -c "python3 -c 'import urllib.request,sys; sys.exit(0 if b\"hello-from\" in urllib.request.urlopen(\"http://$addr/\", timeout=5).read() else 1)' 2>/dev/null" ||
                fail "the page does not come through $addr"
        sb port "$ID" --list --json
        expect_rc 0 "port --list"
        expect_eq "$addr" "$(port_field 3000 listen)" "the listed address"
        # each connection is an audit event with its peer and bytes each way
        wait_until 5 grep -q '"reason":"port_forwarded"' "/run/cordon/sandboxes/$ID/events.jsonl" || fail "no audit event"
        local ev
        ev=$(grep '"reason":"port_forwarded"' "/run/cordon/sandboxes/$ID/events.jsonl" | grep -v '"error"' | tail -1)
        expect_match "$ev" '"peer":"127\.0\.0\.1:[0-9]+"' "the peer"
        expect_match "$ev" '"bytesOut":[1-9][0-9]*' "bytes from the sandbox"
        expect_match "$ev" '"bytesIn":[1-9][0-9]*' "bytes into the sandbox"
        # closed: the address no longer answers
        sb port "$ID" 3000 --close
        expect_rc 0 "port --close"
        expect_true "the closed address refuses" sh -c "! python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", ${addr##*:}), timeout=3)' 2>/dev/null"
        sb port "$ID" 3000 --close
        expect_rc 1 "closing a port that is not exposed"
}

it_test long_lived_connection_and_large_transfer
long_lived_connection_and_large_transfer() {
        need_root
        command -v python3 >/dev/null || skip "no python3"
        new_sandbox
        start_server 5000
        sb port "$ID" 5000
        local addr=$OUT
        # a long-lived connection: messages both ways over a few seconds
        local got
        got=$(python3 - "$addr" <<'PY'
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
c = socket.create_connection((host, int(port)), timeout=10)
c.sendall(b"echo 0\n")
f = c.makefile("rb")
out = []
for i in range(4):
    c.sendall(b"ping %d\n" % i)
    out.append(f.readline().strip().decode())
    time.sleep(0.7)
print(",".join(out))
PY
)
        expect_eq "ping 0,ping 1,ping 2,ping 3" "$got" "messages over a long-lived connection"
        # 1 GiB each way, and each connection's audit line counts exactly the bytes that went
        # (the request line "send N\n" in, N out; "recv N\n" and N in, "ok N\n" out)
        local n=$((1024 * 1024 * 1024)) ev
        expect_eq "$n" "$(client "$addr" send "$n")" "1 GiB out of the sandbox"
        expect_eq "$n" "$(client "$addr" recv "$n")" "1 GiB into the sandbox"
        local req_out=$((${#n} + 6)) req_in=$((n + ${#n} + 6)) ans=$((${#n} + 4))
        wait_until 5 sh -c "grep -q '\"bytesIn\":$req_in' /run/cordon/sandboxes/$ID/events.jsonl" ||
                fail "no audit line for the 1 GiB into the sandbox"
        ev=$(grep "\"bytesOut\":$n," "/run/cordon/sandboxes/$ID/events.jsonl")
        expect_match "$ev" "\"bytesIn\":$req_out," "the 1 GiB out's line counts its request in"
        ev=$(grep "\"bytesIn\":$req_in," "/run/cordon/sandboxes/$ID/events.jsonl")
        expect_match "$ev" "\"bytesOut\":$ans," "the 1 GiB in's line counts the answer out"
}

it_test half_close_passes_through_the_forwarder
half_close_passes_through_the_forwarder() {
        need_root
        command -v python3 >/dev/null || skip "no python3"
        new_sandbox
        start_server 5000
        sb port "$ID" 5000
        local addr=$OUT got
        # the client shuts its side after 3 MiB: the server sees the end, and its answer still
        # comes back on the half-open connection, then the end of it
        got=$(python3 - "$addr" <<'PY'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
c = socket.create_connection((host, int(port)), timeout=30)
c.sendall(b"eof 0\n" + b"x" * (3 << 20))
c.shutdown(socket.SHUT_WR)
out = b""
while True:
    d = c.recv(1 << 16)
    if not d:
        break
    out += d
print(out.decode().strip())
PY
)
        expect_eq "ok $((3 << 20))" "$got" "the answer after the client's half-close"
        wait_until 5 sh -c "grep -q '\"bytesIn\":$((6 + (3 << 20))),' /run/cordon/sandboxes/$ID/events.jsonl" ||
                fail "no audit line with the bytes in before the half-close"
        # the other way: the server shuts its side after 1 MiB; the client reads to the end, then
        # sends 2 MiB more, which the server still receives
        got=$(python3 - "$addr" <<'PY'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
c = socket.create_connection((host, int(port)), timeout=30)
c.sendall(b"half %d\n" % (1 << 20))
got = 0
while True:
    d = c.recv(1 << 20)
    if not d:
        break
    got += len(d)
c.sendall(b"y" * (2 << 20))
c.shutdown(socket.SHUT_WR)
c.recv(1)
print(got)
PY
)
        expect_eq $((1 << 20)) "$got" "the bytes before the server's half-close"
        wait_until 10 sh -c "'$CORDON' sandbox exec $ID -- cat /tmp/half.count 2>/dev/null | grep -qx $((2 << 20))" ||
                fail "the server did not get the 2 MiB sent after its half-close: $("$CORDON" sandbox exec "$ID" -- cat /tmp/half.count 2>&1)"
        wait_until 5 sh -c "grep -q '\"bytesOut\":$((1 << 20)),' /run/cordon/sandboxes/$ID/events.jsonl" ||
                fail "no audit line for the server's half-close connection"
        ev=$(grep "\"bytesOut\":$((1 << 20))," "/run/cordon/sandboxes/$ID/events.jsonl")
        expect_match "$ev" "\"bytesIn\":$((13 + (2 << 20)))," "its bytes in (the request line and the 2 MiB)"
}

it_test another_sandboxs_port_is_not_reachable
another_sandboxs_port_is_not_reachable() {
        need_root
        command -v python3 >/dev/null || skip "no python3"
        new_sandbox
        local other=$ID
        start_server 5000
        new_sandbox
        # this sandbox listens on nothing: its forwarder reaches its own loopback only
        sb port "$ID" 5000
        local addr=$OUT
        expect_eq 0 "$(client "$addr" send 1000 2>/dev/null || echo 0)" "bytes through the first sandbox's forwarder"
        wait_until 5 grep -q 'nothing listens on the port in the sandbox' "/run/cordon/sandboxes/$ID/events.jsonl" ||
                fail "the refused connection is not recorded"
        expect_true "the other sandbox saw no connection" sh -c "! grep -q port_forwarded /run/cordon/sandboxes/$other/events.jsonl"
}

it_test port_bad_input
port_bad_input() {
        need_root
        command -v python3 >/dev/null || skip "no python3"
        new_sandbox
        # out of range: a usage error, as a port that is no number (39f3ddb)
        sb port "$ID" 0
        expect_rc 2 "port 0"
        expect_contains "$ERR" "(1-65535)" "the reason"
        sb port "$ID" 65536
        expect_rc 2 "port 65536"
        sb port "$ID" http
        expect_rc 2 "a port that is not a number"
        sb port "$ID" 5000 --listen 1.2.3
        expect_rc 1 "a bad listen address"
        expect_contains "$ERR" "not ADDR:PORT" "the reason"
        sb port "$ID" 5000
        expect_rc 0 "port 5000"
        local addr=$OUT
        sb port "$ID" 5000
        expect_rc 1 "port 5000 again"
        expect_contains "$ERR" "already exposed" "the reason"
        sb port "$ID" 5001 --listen "$addr"
        expect_rc 1 "a listen address in use"
        expect_contains "$ERR" "in use" "the reason"
        sb port "$ID" 5002 --listen 0.0.0.0:0
        expect_rc 0 "any address on request"
        expect_contains "$ERR" "warning" "the warning for a non-loopback address"
}

it_test paused_sandbox_connections_wait
paused_sandbox_connections_wait() {
        need_root
        command -v python3 >/dev/null || skip "no python3"
        new_sandbox
        start_server 5000
        sb pause "$ID"
        [ "$RC" = 0 ] || skip "no freezer here: $ERR"
        sb port "$ID" 5000
        expect_rc 0 "port on a paused sandbox"
        expect_contains "$ERR" "paused" "said plainly"
        local addr=$OUT out
        out=$(scratch_dir c)/out
        client "$addr" send 12345 >"$out" 2>&1 &
        local c=$!
        sleep 1
        expect_true "the connection waits while paused" kill -0 "$c"
        sb resume "$ID"
        wait "$c"
        expect_eq 12345 "$(cat "$out")" "the bytes after resume"
}

it_test abandoned_connections_leak_no_fd
abandoned_connections_leak_no_fd() {
        need_root
        command -v python3 >/dev/null || skip "no python3"
        new_sandbox
        start_server 5000
        sb port "$ID" 5000
        local addr=$OUT sentry before after
        sentry=$(sentry_of "$ID")
        client "$addr" send 10 >/dev/null
        wait_until 5 sh -c "'$CORDON' sandbox port $ID --list --json | grep -q '\"connections\":0'"
        before=$(ls /proc/"$sentry"/fd | wc -l)
        # 1000 connections opened and dropped: half at once, half after a partial request
        python3 - "$addr" <<'PY'
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
for i in range(1000):
    c = socket.create_connection((host, int(port)), timeout=10)
    if i % 2:
        c.sendall(b"sen")
    c.close()
PY
        wait_until 30 sh -c "'$CORDON' sandbox port $ID --list --json | grep -q '\"accepted\":1001,\"connections\":0'" ||
                fail "the connections did not all end: $("$CORDON" sandbox port "$ID" --list --json)"
        after=$(ls /proc/"$sentry"/fd | wc -l)
        expect_eq "$before" "$after" "the sentry's fds before and after"
        expect_eq 10 "$(client "$addr" send 10)" "the forwarder still serves"
        # the port closes with the sandbox
        sb terminate "$ID"
        expect_true "the address is closed with the sandbox" sh -c "! python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", ${addr##*:}), timeout=3)' 2>/dev/null"
}

it_test policy_ports_are_exposed_at_create
policy_ports_are_exposed_at_create() {
        need_root
        command -v python3 >/dev/null || skip "no python3"
        local pol
        pol=$(scratch_dir pol)/policy.json
        echo '{"ports": [{"port": 5000, "listen": "127.0.0.1:0"}, {"port": 5001}]}' >"$pol"
        new_sandbox --policy "$pol"
        sb port "$ID" --list --json
        expect_rc 0 "port --list"
        local addr
        addr=$(port_field 5000 listen)
        expect_match "$addr" '^127\.0\.0\.1:[0-9]+$' "port 5000's address"
        expect_match "$(port_field 5001 listen)" '^127\.0\.0\.1:[0-9]+$' "port 5001's address (the default)"
        expect_true "the created event lists them" sh -c "grep '\"type\":\"created\"' /run/cordon/sandboxes/$ID/events.jsonl | grep -q '\"ports\"'"
        sb inspect "$ID"
        expect_contains "$OUT" "port      5000 at $addr" "inspect shows the port"
        start_server 5000
        expect_eq 4096 "$(client "$addr" send 4096)" "bytes through the policy's port"
        # an address the policy asks for that is taken: the sandbox does not start, and says why
        echo "{\"ports\": [{\"port\": 5000, \"listen\": \"$addr\"}]}" >"$pol"
        sb create --policy "$pol"
        expect_rc 125 "create with a listen address in use"
        expect_contains "$ERR" "in use" "the reason"
        [ "$RC" = 0 ] && timeout 30 "$CORDON" sandbox terminate "$OUT"
        echo '{"ports": [{"port": 70000}]}' >"$pol"
        sb create --policy "$pol"
        expect_rc 2 "a policy port out of range"
        expect_contains "$ERR" "ports[0].port" "the field"
}

it_main "$@"
