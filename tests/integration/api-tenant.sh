#!/bin/bash
# cordon integration tests of the HTTP API against a hostile tenant: what a sandbox's own token
# and a raw socket to `cordon serve` cannot do (approve their own ask requests, hold a
# connection with a trickle of bytes), what the SDKs do behind a reverse proxy's path prefix,
# and what a sandbox's records and snapshots keep. Driven by curl, python3 and node. Run like
# api.sh:
#
#   CORDON=/path/to/cordon TESTS_SRCDIR=/path/to/tests bash tests/integration/api-tenant.sh [REGEX...]
if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

IT_SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$IT_SCRIPT")/lib.sh"

SRC=$(dirname "$(dirname "$IT_SCRIPT")")/..

# shellcheck source=tests/integration/api-lib.sh
. "$(dirname "$IT_SCRIPT")/api-lib.sh"

# starts `cordon serve` over TCP on loopback with an admin token of the test's own (extra
# environment for the server in SERVE_ENV): TCP, ADMIN (the token), TOKEN (the one api sends)
start_tcp_api() {
        local port=$((20000 + RANDOM % 20000))
        head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$IT_TMP/admin.token"
        chmod 0600 "$IT_TMP/admin.token"
        env ${SERVE_ENV:-} "$CORDON" serve --listen "tcp:127.0.0.1:$port" --token-file "$IT_TMP/admin.token" -v \
                >>"$IT_TMP/serve.log" 2>&1 &
        API_PID=$!
        at_exit "kill $API_PID"
        TCP=127.0.0.1:$port
        ADMIN=$(cat "$IT_TMP/admin.token")
        TOKEN=$ADMIN
        wait_until 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null ||
                fail "cordon serve did not start: $(cat "$IT_TMP/serve.log")"
}

# creates a sandbox with the admin token (BODY, default a 2-minute TTL): ID, TOKEN_SB
api_sandbox() {
        local t=$TOKEN
        TOKEN=$ADMIN
        api POST /v1/sandboxes "${1:-{\"ttlMs\": 120000\}}"
        TOKEN=$t
        [ "$CODE" = 201 ] || fail "create: $CODE $OUT"
        ID=$(j 'd["id"]')
        TOKEN_SB=$(j 'd["token"]')
        at_exit "timeout 30 '$CORDON' sandbox terminate $ID"
}

# waits for a pending approval of sandbox ID (seen with TOKEN): REQ
wait_pending() {
        wait_until 10 bash -c "curl -s -H 'Authorization: Bearer $TOKEN' http://$TCP/v1/sandboxes/$ID/approvals | grep -q '\"request\"'" ||
                fail "no approval became pending"
        api GET "/v1/sandboxes/$ID/approvals"
        REQ=$(j 'd["approvals"][0]["request"]')
}

# A sandbox's token is held by whoever drives the sandbox (the tenant, or the agent itself):
# it may list and deny its sandbox's ask requests, but approving is the operator's, so it is
# 403 from curl and from both SDKs, and the request stays pending for the operator.
it_test sandbox_token_cannot_approve
sandbox_token_cannot_approve() {
        need_root
        need_curl
        start_tcp_api
        local job
        job=$(scratch_dir job)
        mkdir -p "$job/out" && chmod 0777 "$job/out"
        api_sandbox '{"ttlMs": 120000, "filesystem": {"binds": [{"source": "'"$job"'", "target": "/job"}], "rules": [{"path": "/job/out", "access": "read-write", "action": "ask"}]}}'
        TOKEN=$TOKEN_SB
        api POST "/v1/sandboxes/$ID/runs" '{"argv": ["sh", "-c", "echo x > /job/out/a && echo written"]}'
        local run
        run=$(j 'd["runId"]')
        wait_pending
        api POST "/v1/sandboxes/$ID/approvals/$REQ/approve" '{"remember": true}'
        expect_eq "403 forbidden" "$CODE $(j 'd["error"]["code"]')" "a sandbox's token approving its own request"
        expect_contains "$(j 'd["error"]["message"]')" "admin token" "the error says what approving needs"
        python3 - "$TCP" "$TOKEN_SB" "$ID" "$REQ" "$SRC/sdk/python" <<'PY' || fail "the Python SDK's approve with a sandbox's token was not refused with 403"
import sys
sys.path.insert(0, sys.argv[5])
import cordon
c = cordon.Client(url="http://" + sys.argv[1], token=sys.argv[2])
try:
    c.sandboxes.get(sys.argv[3]).approvals.approve(sys.argv[4])
except cordon.CordonError as e:
    sys.exit(0 if e.status == 403 and e.code == "forbidden" else 1)
sys.exit(1)
PY
        if command -v node >/dev/null && [ "$(node -p 'process.versions.node.split(".")[0]')" -ge 18 ]; then
                node --input-type=module - "$TCP" "$TOKEN_SB" "$ID" "$REQ" "$SRC/sdk/typescript/index.js" <<'JS' ||
const [tcp, tok, id, req, sdk] = process.argv.slice(2);
const { Cordon } = await import(sdk);
const sb = await new Cordon({ url: `http://${tcp}`, token: tok }).sandboxes.get(id);
try {
  await sb.approvals.approve(req, { remember: true });
} catch (e) {
  process.exit(e.status === 403 && e.code === 'forbidden' ? 0 : 1);
}
process.exit(1);
JS
                        fail "the TypeScript SDK's approve with a sandbox's token was not refused with 403"
        fi
        api GET "/v1/sandboxes/$ID/approvals"
        expect_eq "$REQ" "$(j 'd["approvals"][0]["request"]')" "the request still waits for the operator"
        [ -e "$job/out/a" ] && fail "the write went through on the sandbox token's approval"
        # the operator approves with the admin token
        TOKEN=$ADMIN
        api POST "/v1/sandboxes/$ID/approvals/$REQ/approve" '{}'
        expect_eq "200 approved" "$CODE $(j 'd["decision"]')" "the admin token approves"
        expect_contains "$(j 'd["decidedBy"]')" "the admin token from 127.0.0.1" "and is recorded as the decider"
        api GET "/v1/sandboxes/$ID/runs/$run/events?follow=1"
        expect_contains "$OUT" '"text":"written"' "the approved write went through"
        # denying narrows: the sandbox's token may
        TOKEN=$TOKEN_SB
        api POST "/v1/sandboxes/$ID/runs" '{"argv": ["sh", "-c", "echo y > /job/out/b && echo written"]}'
        run=$(j 'd["runId"]')
        wait_pending
        api POST "/v1/sandboxes/$ID/approvals/$REQ/deny"
        expect_eq "200 denied" "$CODE $(j 'd["decision"]')" "a sandbox's token denies"
        api GET "/v1/sandboxes/$ID/runs/$run/events?follow=1"
        expect_not_contains "$OUT" '"text":"written"' "the denied write"
        [ -e "$job/out/b" ] && fail "a denied write reached the host"
        # another sandbox's request: not found, as before, never a 403 that says it exists
        local a=$ID
        api_sandbox
        TOKEN=$TOKEN_SB
        api POST "/v1/sandboxes/$a/approvals/$REQ/approve" '{}'
        expect_eq 404 "$CODE" "approving in another sandbox"
}


# Egress that cannot be recorded must not happen: once a sandbox's audit share of its events
# file is used up (made small here with CORDON_TEST_AUDIT_SHARE, which can only lower it),
# the gate refuses every new connection with EACCES, and one audit_limit event says so.
# The allowed upstream is a listener on the host's 127.0.0.2:443, mapped to a listed name by
# the policy's testing section; the filler is refused connects to a documentation address.
it_test audit_share_full_refuses_egress
audit_share_full_refuses_egress() {
        need_root
        [ -x /usr/bin/python3 ] || skip "no /usr/bin/python3 for the program inside the sandbox"
        python3 - "$IT_TMP/accepted" >"$IT_TMP/listener.log" 2>&1 <<'PY' &
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.2", 443)); s.listen(16)
open(sys.argv[1] + ".ready", "w").close()
n = 0
while True:
    c, _ = s.accept(); n += 1
    open(sys.argv[1], "w").write(str(n)); c.close()
PY
        local lst=$!
        at_exit "kill $lst"
        wait_until 10 test -e "$IT_TMP/accepted.ready" || skip "cannot listen on 127.0.0.2:443: $(cat "$IT_TMP/listener.log")"
        local job
        job=$(scratch_dir job)
        printf 'up.cordon.test 127.0.0.2\n' >"$IT_TMP/hosts"
        cat >"$job/c.py" <<'PY'
import socket, sys
def conn(addr):
    s = socket.socket()
    try:
        s.connect(addr); return "ok"
    except OSError as e:
        return "errno=%d" % e.errno
    finally:
        s.close()
up = socket.getaddrinfo("up.cordon.test", 443, socket.AF_INET, socket.SOCK_STREAM)[0][4]
print("first", conn(up))
for i in range(int(sys.argv[1])):
    conn(("203.0.113.9", 443))
for i in range(int(sys.argv[2])):
    print("after", conn(up))
PY
        cat >"$IT_TMP/p.json" <<JSON
{"filesystem": {"binds": [{"source": "$job", "target": "/job", "readOnly": true}]},
 "networkPolicy": {"mode": "allow-listed",
                   "rules": [{"host": "up.cordon.test", "port": 443, "reason": "audit share test"}],
                   "testing": {"hostsFile": "$IT_TMP/hosts", "allowPrivateNetworks": ["127.0.0.2/32"]}}}
JSON
        CORDON_TEST_AUDIT_SHARE=40000 new_sandbox --policy "$IT_TMP/p.json"
        sb exec "$ID" -- python3 /job/c.py 150 0
        expect_contains "$OUT" "first ok" "a connection while the audit log has room"
        # the records reach the events file through a pipe: the gate closes once the sandbox's
        # loop has read the one that did not fit (a connection made meanwhile is still recorded)
        wait_until 10 bash -c "'$CORDON' sandbox events $ID --json | grep -q '\"type\":\"audit_limit\"'" ||
                fail "no audit_limit event"
        sb exec "$ID" -- python3 /job/c.py 0 1
        expect_contains "$OUT" "first errno=13" "a connection once the audit share is used up: EACCES"
        local n
        n=$(cat "$IT_TMP/accepted" 2>/dev/null)
        sb events "$ID" --json
        printf '%s\n' "$OUT" >"$IT_TMP/events"
        python3 - "$IT_TMP/events" "$n" <<'PY' || fail "the events: $(tail -c 600 "$IT_TMP/events")"
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
lim = [e for e in evs if e["type"] == "audit_limit"]
assert len(lim) == 1 and lim[0]["egressRefused"] is True, lim
i = evs.index(lim[0])
# nothing the gate refused after it takes the log's room; what it allowed before is all there
after = [e for e in evs[i + 1:] if e["type"] == "audit"]
assert all(e["record"]["decision"] == "allow" for e in after), after
# every connection that reached the upstream is recorded
allowed = [e for e in evs if e["type"] == "audit" and e["record"]["reason"] == "egress_allowed"]
assert len(allowed) == int(sys.argv[2]), (allowed, sys.argv[2])
PY
        expect_eq 1 "$n" "connections that reached the upstream"
}
# Slowloris: libmicrohttpd's idle timeout restarts at every byte, so a request must arrive whole
# in time: a header block trickled a byte at a time, or a body trickled after quick headers, has
# its connection closed (deadlines shortened for the test with CORDON_TEST_HTTP_DEADLINE_MS),
# while an answer that takes longer than the deadline (a follow stream) is never cut.
it_test trickled_requests_are_cut_off
trickled_requests_are_cut_off() {
        need_root
        need_curl
        SERVE_ENV=CORDON_TEST_HTTP_DEADLINE_MS=1500 start_tcp_api
        api_sandbox
        python3 - "$TCP" "$ADMIN" "$ID" <<'PY' || fail "a trickled request kept its connection"
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
token, sid = sys.argv[2], sys.argv[3]
def trickle(head, drip, secs=12):
    """sends head, then drip a byte every 0.25 s: how long until the server closed"""
    s = socket.create_connection((host, int(port)))
    s.sendall(head.encode())
    s.settimeout(0.25)
    start = time.monotonic()
    i = 0
    while time.monotonic() - start < secs:
        try:
            if s.recv(4096) == b"":
                return time.monotonic() - start
        except socket.timeout:
            pass
        except OSError:
            return time.monotonic() - start
        try:
            s.send(drip[i % len(drip)].encode())
        except OSError:
            return time.monotonic() - start
        i += 1
    return None
auth = "Authorization: Bearer %s\r\n" % token
t = trickle("GET /v1/host HTTP/1.1\r\nHost: x\r\n" + auth + "X-Slow: ", "abcdefgh")
print("header block trickled: closed after", t)
assert t is not None, "the header block's trickle was never cut off"
t = trickle("POST /v1/sandboxes/%s/files HTTP/1.1\r\nHost: x\r\n%sContent-Type: application/json\r\n"
            "Content-Length: 100000\r\n\r\n{\"path\": \"/tmp/x\", \"contentBase64\": \"" % (sid, auth), "QUFB")
print("body trickled: closed after", t)
assert t is not None, "the body's trickle was never cut off"
PY
        # what takes longer than the deadline on the server's side is not cut: a follow stream
        # of a run that prints after 3 s, and an upload of 2 MiB
        api POST "/v1/sandboxes/$ID/runs" '{"argv": ["sh", "-c", "sleep 3; echo late"]}'
        local run
        run=$(j 'd["runId"]')
        api GET "/v1/sandboxes/$ID/runs/$run/events?follow=1"
        expect_contains "$OUT" '"text":"late"' "a follow stream longer than the deadline"
        head -c $((2 << 20)) /dev/urandom >"$IT_TMP/big"
        CODE=$(curl -sS -o /dev/null -w '%{http_code}' -X PUT -H "Authorization: Bearer $ADMIN" \
                --data-binary @"$IT_TMP/big" "http://$TCP/v1/sandboxes/$ID/files?path=/tmp/big")
        expect_eq 200 "$CODE" "an upload of 2 MiB"
        api GET "/v1/host"
        expect_eq 200 "$CODE" "the server still answers"
}

# An HTTP/1.1 request has exactly one Host (RFC 9112 3.2): none, or two, is 400 invalid_host
# (a proxy in front could read two otherwise than the server does); HTTP/1.0 needs none.
it_test host_header_required
host_header_required() {
        need_root
        start_tcp_api
        python3 - "$TCP" "$ADMIN" <<'PY' || fail "a request's Host was not checked"
import socket, sys
host, port = sys.argv[1].rsplit(":", 1)
auth = "Authorization: Bearer %s\r\n" % sys.argv[2]
def ask(head):
    s = socket.create_connection((host, int(port)), timeout=10)
    s.sendall((head + auth + "Connection: close\r\n\r\n").encode())
    data = b""
    while True:
        b = s.recv(65536)
        if not b:
            break
        data += b
    return data.decode(errors="replace")
for head, want in (("GET /v1/host HTTP/1.1\r\n", "400"),
                   ("GET /v1/host HTTP/1.1\r\nHost: a\r\nHost: b\r\n", "400"),
                   ("GET /v1/host HTTP/1.1\r\nHost: a\r\n", "200"),
                   ("GET /v1/host HTTP/1.0\r\n", "200")):
    got = ask(head)
    status = got.split(" ", 2)[1] if got.startswith("HTTP/") else got[:80]
    print(repr(head), "->", status)
    assert status == want, (head, got[:300])
    assert want == "200" or "invalid_host" in got, got[:300]
PY
}

# A reader resuming at a seq is served from there (a binary search on the log, and a run's
# events from its start, which its sentry knows), not by a parse of the whole log: the answers
# are exactly those of a full read (`cordon sandbox events --json`), for the sandbox's events
# and a run's, at the start, the middle, the edges of runs and the end.
it_test events_read_from_a_seq_match_a_full_read
events_read_from_a_seq_match_a_full_read() {
        need_root
        need_curl
        start_tcp_api
        api_sandbox
        local i
        for i in 1 2 3; do
                api POST "/v1/sandboxes/$ID/exec" "{\"argv\": [\"sh\", \"-c\", \"seq 1 $((i * 700)) | sed s/^/run$i-/\"]}"
                [ "$CODE" = 200 ] || fail "exec $i: $CODE"
        done
        "$CORDON" sandbox events "$ID" --json >"$IT_TMP/all" || fail "cordon sandbox events"
        local last q run after
        last=$(tail -1 "$IT_TMP/all" | python3 -c 'import json,sys; print(json.load(sys.stdin)["seq"])')
        for q in "- 0" "- 1" "- 350" "- 702" "- 703" "- $((last - 1))" "- $last" "r1 0" "r2 0" "r2 1000" "r3 0" "r3 $((last - 5))" "r3 $last"; do
                read -r run after <<<"$q"
                if [ "$run" = - ]; then
                        api GET "/v1/sandboxes/$ID/events?afterSequence=$after"
                else
                        api GET "/v1/sandboxes/$ID/runs/$run/events?afterSequence=$after"
                fi
                printf '%s\n' "$OUT" >"$IT_TMP/got"
                python3 - "$IT_TMP/all" "$IT_TMP/got" "$run" "$after" <<'PY' || fail "events of ${run} after $after differ from a full read"
import json, sys
want = [l.rstrip("\n") for l in open(sys.argv[1]) if l.strip()
        if json.loads(l)["seq"] > int(sys.argv[4]) and (sys.argv[3] == "-" or json.loads(l).get("run") == sys.argv[3])]
got = [l.rstrip("\n") for l in open(sys.argv[2]) if l.strip()]
assert got == want, (len(got), len(want), got[:2], want[:2])
PY
        done
        api GET "/v1/sandboxes/$ID/events?afterSequence=$((last + 1))"
        expect_eq "400 afterSequence" "$CODE $(j 'd["error"]["field"]')" "a seq beyond the log's end"
        api GET "/v1/sandboxes/$ID/runs/r9/events"
        expect_eq 404 "$CODE" "a run there never was"
}

# Behind a reverse proxy that serves the API under a path prefix (here a small python proxy
# that strips /cordon), both SDKs given http://HOST:PORT/cordon reach every route through it.
it_test sdks_behind_a_proxy_prefix
sdks_behind_a_proxy_prefix() {
        need_root
        need_curl
        start_tcp_api
        python3 - "$TCP" >"$IT_TMP/proxy.log" 2>&1 <<'PY' &
import http.client, http.server, sys
up_host, up_port = sys.argv[1].rsplit(":", 1)
class Proxy(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def relay(self):
        if not self.path.startswith("/cordon/"):
            self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers(); return
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        c = http.client.HTTPConnection(up_host, int(up_port), timeout=60)
        h = {k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type", "accept")}
        c.request(self.command, self.path[len("/cordon"):], body=body, headers=h)
        r = c.getresponse(); data = r.read()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("transfer-encoding", "content-length", "connection"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data))); self.end_headers(); self.wfile.write(data)
    do_GET = do_POST = do_PUT = do_DELETE = relay
    def log_message(self, *a): pass
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
print(srv.server_address[1], flush=True)
srv.serve_forever()
PY
        local proxy=$!
        at_exit "kill $proxy"
        wait_until 10 test -s "$IT_TMP/proxy.log" || fail "the proxy did not start"
        local url
        url=http://127.0.0.1:$(head -1 "$IT_TMP/proxy.log")/cordon
        python3 - "$url" "$ADMIN" "$SRC/sdk/python" <<'PY' || fail "the Python SDK through the proxy's prefix"
import sys
sys.path.insert(0, sys.argv[3])
import cordon
c = cordon.Client(url=sys.argv[1] + "/", token=sys.argv[2])
sb = c.sandboxes.create({"ttlMs": 120000})
try:
    assert sb.exec({"argv": ["echo", "via the prefix"]})["stdout"] == "via the prefix\n"
    run = sb.runs.start({"argv": ["sh", "-c", "echo one; echo two"]})
    texts = [e.get("text") for e in sb.runs.events(run)]
    assert texts.count("one") == 1 and texts.count("two") == 1, texts
    sb.files.write({"path": "/tmp/f", "content": b"data"})
    assert sb.files.read("/tmp/f") == b"data"
finally:
    sb.terminate()
PY
        if command -v node >/dev/null && [ "$(node -p 'process.versions.node.split(".")[0]')" -ge 18 ]; then
                node --input-type=module - "$url" "$ADMIN" "$SRC/sdk/typescript/index.js" <<'JS' ||
const [url, token, sdk] = process.argv.slice(2);
const { Cordon } = await import(sdk);
const sb = await new Cordon({ url, token }).sandboxes.create({ ttlMs: 120000 });
try {
  const r = await sb.exec({ argv: ['echo', 'via the prefix'] });
  if (r.stdout !== 'via the prefix\n') throw new Error(JSON.stringify(r));
  const texts = [];
  for await (const ev of sb.runs.events(await sb.runs.start({ argv: ['echo', 'three'] }))) texts.push(ev.text);
  if (!texts.includes('three')) throw new Error(JSON.stringify(texts));
} finally {
  await sb.terminate();
}
JS
                        fail "the TypeScript SDK through the proxy's prefix"
        fi
}

# A sandbox restored from a snapshot keeps the limits its snapshot's sandbox ran under
# (--memory, --pids, ...), in its record and in the kernel, from the CLI and the API alike;
# a flag of the new create wins, and a recorded limit looser than the default is not taken
# from the archive (data narrows a sandbox, never widens it): a note says so.
it_test snapshot_keeps_limits
snapshot_keeps_limits() {
        need_root
        need_curl
        # limits KIND of sandbox ID, as inspect says: memoryBytes maxProcesses
        limits_of() {
                timeout 10 "$CORDON" sandbox inspect "$1" --json |
                        python3 -c 'import json,sys; l=json.load(sys.stdin)["limits"]; print(l["memoryBytes"], l["maxProcesses"])'
        }
        new_sandbox --ttl 5m --memory 256M --pids 64
        sb snapshot "$ID" "$IT_TMP/s.tar.zst"
        [ "$RC" = 0 ] || fail "snapshot: $ERR"
        new_sandbox --ttl 5m --from-snapshot "$IT_TMP/s.tar.zst"
        expect_eq "268435456 64" "$(limits_of "$ID")" "the restored sandbox's limits"
        local cg
        cg=$(find /sys/fs/cgroup -maxdepth 5 -type f -name pids.max -path "*cordon-$ID/*" 2>/dev/null | head -1)
        [ -n "$cg" ] && expect_eq 64 "$(cat "$cg")" "the restored sandbox's pids.max in the kernel"
        new_sandbox --ttl 5m --pids 100 --from-snapshot "$IT_TMP/s.tar.zst"
        expect_eq "268435456 100" "$(limits_of "$ID")" "a flag of the new create wins"
        start_tcp_api
        python3 - "$IT_TMP/s.tar.zst" >"$IT_TMP/body.json" <<'PY'
import base64, json, sys
d = open(sys.argv[1] + ".sha256").read().split()[0]
print(json.dumps({"ttlMs": 120000, "fromSnapshot": {"archiveBase64": base64.b64encode(open(sys.argv[1], "rb").read()).decode(), "digest": d}}))
PY
        api POST /v1/sandboxes @"$IT_TMP/body.json"
        [ "$CODE" = 201 ] || fail "create from the snapshot over the API: $CODE $OUT"
        local api_id
        api_id=$(j 'd["id"]')
        at_exit "timeout 30 '$CORDON' sandbox terminate $api_id"
        expect_eq "268435456 64" "$(limits_of "$api_id")" "restored over the API"
        # its created event names the snapshot by digest, not by the server's holding file
        api GET "/v1/sandboxes/$api_id/events"
        expect_contains "$OUT" "\"fromSnapshot\":\"$(cut -d' ' -f1 "$IT_TMP/s.tar.zst.sha256")\"" \
                "the created event names the snapshot's digest"
        expect_not_contains "$OUT" "restore-" "and not the server's file"
        # looser than the default: not taken from the archive, and said
        new_sandbox --ttl 5m --memory 4G
        sb snapshot "$ID" "$IT_TMP/big.tar.zst"
        new_sandbox --ttl 5m --from-snapshot "$IT_TMP/big.tar.zst"
        expect_eq "2147483648 1024" "$(limits_of "$ID")" "a looser recorded limit is not taken"
        expect_contains "$ERR" "give --memory to have it" "and the create says so"
}

# A file over the old 64 MiB body limit goes in with PUT as it arrives, never held whole by the
# server (its memory stays small), and lands whole (the same sha256 out as in) or not at all: an
# upload cut short leaves the old file, one over the sandbox's disk limit is 507 `no_space`
# with nothing left beside its target, a chunked body is 411 (its length tells whole from cut).
it_test large_upload_streams_whole_or_not_at_all
large_upload_streams_whole_or_not_at_all() {
        need_root
        need_curl
        start_tcp_api
        api_sandbox
        TOKEN=$TOKEN_SB
        head -c $((80 << 20)) /dev/urandom >"$IT_TMP/big"
        local sum rss
        sum=$(sha256sum <"$IT_TMP/big" | cut -d' ' -f1)
        api PUT "/v1/sandboxes/$ID/files?path=/tmp/big&mode=0600" "" -T "$IT_TMP/big"
        expect_eq "200 83886080" "$CODE $(j 'd["size"]')" "an 80 MiB upload"
        rss=$(awk '/^VmHWM/ {print $2}' /proc/$API_PID/status)
        expect_true "the server's peak memory stays small (${rss} KiB)" [ "$rss" -lt 65536 ]
        expect_eq "$sum" "$(curl -sS -H "Authorization: Bearer $TOKEN" "http://$TCP/v1/sandboxes/$ID/files?path=/tmp/big" | sha256sum | cut -d' ' -f1)" \
                "the file read back"
        api GET "/v1/sandboxes/$ID/files?path=/tmp&list=1"
        expect_eq "384" "$(j '[e["mode"] for e in d["entries"] if e["name"] == "big"][0]')" "?mode=0600"
        api PUT "/v1/sandboxes/$ID/files?path=/tmp/f" "old"
        python3 - "$TCP" "$TOKEN" "$ID" <<'PY' || fail "the cut upload"
import socket, sys, time
s = socket.create_connection(tuple(sys.argv[1].split(":")[:1]) + (int(sys.argv[1].split(":")[1]),))
s.sendall(("PUT /v1/sandboxes/%s/files?path=/tmp/f HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
           "Content-Length: 1000000\r\n\r\n" % (sys.argv[3], sys.argv[2])).encode() + b"x" * 500000)
time.sleep(0.3)
s.close()
PY
        sleep 0.5
        api GET "/v1/sandboxes/$ID/files?path=/tmp/f"
        expect_eq "200 old" "$CODE $OUT" "an upload cut short leaves the old file whole"
        python3 -c 'import base64, json; print(json.dumps({"path": "/tmp/j", "contentBase64": base64.b64encode(bytes(2 << 20)).decode()}))' >"$IT_TMP/big.json"
        api POST "/v1/sandboxes/$ID/files" @"$IT_TMP/big.json"
        expect_eq 413 "$CODE" "a file over the JSON body's limit"
        expect_contains "$(j 'd["error"]["message"]')" "PUT .../files" "says what takes it"
        api PUT "/v1/sandboxes/$ID/files?path=/tmp/g" "" -T "$IT_TMP/big" -H 'Transfer-Encoding: chunked'
        expect_eq "411 length_required" "$CODE $(j 'd["error"]["code"]')" "a chunked upload"
        api PUT "/v1/sandboxes/$ID/files?path=/tmp/g&mode=1777" "x"
        expect_eq "400 mode" "$CODE $(j 'd["error"]["field"]')" "a bad mode"
        api PUT "/v1/sandboxes/$ID/files?path=/usr/bin/planted" "x"
        expect_eq "403 forbidden" "$CODE $(j 'd["error"]["code"]')" "a read-only path of the view (403, as a denied one)"
        api_sandbox '{"ttlMs": 120000, "limits": {"diskBytes": 33554432}}'
        TOKEN=$TOKEN_SB
        api PUT "/v1/sandboxes/$ID/files?path=/tmp/big" "" -T "$IT_TMP/big"
        expect_eq "507 no_space" "$CODE $(j 'd["error"]["code"]')" "an upload over the disk limit"
        api GET "/v1/sandboxes/$ID/files?path=/tmp&list=1"
        expect_eq "[]" "$(j 'd["entries"]')" "nothing is left of it"
}

# A URL is read as the client (and a proxy in front) wrote it, or refused saying why: an encoded
# NUL used to cut the path short unseen, so `DELETE .../ID%00/ports/3000` (a port's close, to a
# proxy) terminated the sandbox, and `?path=/a%00b` read /a; an encoded slash split a segment a
# proxy saw whole; a query key given twice was read by its first value, where a proxy may check
# the last. Another sandbox's id, however spelled, is refused or "not found", as a missing one.
it_test hostile_urls_are_refused
hostile_urls_are_refused() {
        need_root
        need_curl
        start_tcp_api
        api_sandbox
        local theirs=$ID
        api_sandbox
        local own=$ID
        TOKEN=$TOKEN_SB
        api DELETE "/v1/sandboxes/$own%00/ports/3000"
        expect_eq "400 invalid_url" "$CODE $(j 'd["error"]["code"]')" "an encoded NUL in the path"
        TOKEN=$ADMIN
        api GET "/v1/sandboxes/$own"
        expect_eq "200 running" "$CODE $(j 'd["status"]')" "the sandbox it would have terminated"
        TOKEN=$TOKEN_SB
        api GET "/v1/sandboxes/$own/files?path=/etc/passwd%00x"
        expect_eq "400 invalid_url" "$CODE $(j 'd["error"]["code"]')" "an encoded NUL in a query value"
        api GET "/v1/sandboxes/$own/files?path=/etc/hostname&path=/etc/passwd"
        expect_eq "400 invalid_query path" "$CODE $(j 'd["error"]["code"]') $(j 'd["error"]["field"]')" "a query key twice"
        api GET "/v1/sandboxes/$own/files?path=%2Fetc%2Fhostname"
        expect_eq 200 "$CODE" "the same call, once (an encoded slash in a query value is a slash)"
        api DELETE "/v1/sandboxes/$own%2Fports%2F3000"
        expect_eq "400 invalid_url" "$CODE $(j 'd["error"]["code"]')" "an encoded slash in the path"
        # a body's key given twice: refused naming it
        api POST "/v1/sandboxes/$own/exec" '{"argv": ["true"], "timeoutMs": 1000, "argv": ["false"]}'
        expect_eq "400 invalid_json argv" "$CODE $(j 'd["error"]["code"]') $(j 'd["error"]["field"]')" "a key given twice"
        # two credentials: refused, whichever comes first
        api GET /v1/sandboxes "" -H "Authorization: Bearer $ADMIN"
        expect_eq "400 invalid_authorization" "$CODE $(j 'd["error"]["code"]')" "two Authorization headers"
        # the other tenant's id, by any spelling, with this token: not found, as a missing one
        local spelled
        for spelled in "$theirs" "${theirs:0:8}" "${theirs^^}" "%$(printf '%x' "'${theirs:0:1}")${theirs:1}" "$own/../$theirs" "$theirs%2f..%2f$own"; do
                api GET "/v1/sandboxes/$spelled/files?path=/etc/hostname"
                case $CODE in
                404 | 400) ;;
                *) fail "another sandbox's id spelled $spelled: $CODE $OUT" ;;
                esac
        done
        api GET "/v1/sandboxes/$own/files?path=/../../../../etc/shadow"
        expect_eq 200 "$CODE" "the view's own /etc/shadow"
        expect_not_contains "$OUT" "root:" "never the host's"
}

# An exec asking for cancelOnDisconnect whose client goes away before its reply (curl's
# --max-time here; the TypeScript SDK's AbortSignal alike) has its run cancelled: its id was in
# that reply alone. Without it (api.sh), and for a run started in the background whose reader
# leaves, the run goes on.
it_test exec_is_cancelled_when_its_client_goes
exec_is_cancelled_when_its_client_goes() {
        need_root
        need_curl
        start_tcp_api
        api_sandbox
        TOKEN=$TOKEN_SB
        api POST "/v1/sandboxes/$ID/exec" '{"argv": ["sh", "-c", "sleep 30; touch /tmp/late"], "cancelOnDisconnect": true}' --max-time 1
        expect_eq 000 "$CODE" "the client gave up"
        wait_until 10 bash -c "curl -s -H 'Authorization: Bearer $TOKEN' http://$TCP/v1/sandboxes/$ID/runs/r1 | grep -q cancelled" ||
                fail "the exec's run was not cancelled"
        api GET "/v1/sandboxes/$ID/processes"
        expect_not_contains "$OUT" "sleep 30" "nothing of the run is left"
        api POST "/v1/sandboxes/$ID/exec" '{"argv": ["true"], "cancelOnDisconnect": 1}'
        expect_eq "400 cancelOnDisconnect" "$CODE $(j 'd["error"]["field"]')" "a cancelOnDisconnect that is no boolean"
        api POST "/v1/sandboxes/$ID/runs" '{"argv": ["sleep", "30"]}'
        api GET "/v1/sandboxes/$ID/runs/r2/events?follow=1" "" --max-time 1
        api GET "/v1/sandboxes/$ID/runs/r2"
        expect_eq running "$(j 'd["status"]')" "a background run outlives its reader"
}

it_main "$@"
