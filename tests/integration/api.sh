#!/bin/bash
# cordon integration tests for the HTTP API (issue 21): `cordon serve` on a unix socket and on
# TCP with tokens, driven with curl, against the CLI as the reference; bad input, restarts, a
# reader that never reads; and the SDKs' own suites (Python unittest, node --test) against a
# live server. Run like run.sh:
#
#   CORDON=/path/to/cordon TESTS_SRCDIR=/path/to/tests bash tests/integration/api.sh [REGEX...]
if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

IT_SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$IT_SCRIPT")/lib.sh"

SRC=$(dirname "$(dirname "$IT_SCRIPT")")/..
STATE=/run/cordon/sandboxes

# shellcheck source=tests/integration/api-lib.sh
. "$(dirname "$IT_SCRIPT")/api-lib.sh"

# creates a sandbox over the API (BODY, default a 2-minute TTL): ID, TOKEN_SB
api_sandbox() {
        api POST /v1/sandboxes "${1:-{\"ttlMs\": 120000\}}"
        [ "$CODE" = 201 ] || fail "create: $CODE $OUT"
        ID=$(j 'd["id"]')
        TOKEN_SB=$(j 'd["token"]')
        at_exit "timeout 30 '$CORDON' sandbox terminate $ID"
}

it_test create_exec_inspect_terminate
create_exec_inspect_terminate() {
        need_root
        need_curl
        start_api
        [ "$(stat -c %a "$SOCK")" = 660 ] || fail "the socket is mode $(stat -c %a "$SOCK"), not 0660"
        local rc=0
        timeout 10 "$CORDON" serve --listen "unix:$SOCK" 2>"$IT_TMP/err" || rc=$?
        expect_eq 1 "$rc" "a second server on a live socket"
        expect_contains "$(cat "$IT_TMP/err")" "another server" "and says why"
        api_sandbox '{"ttlMs": 120000, "env": {"GREETING": "hi"}}'
        expect_match "$ID" '^[0-9a-f]{16}$' "the id"
        expect_match "$TOKEN_SB" '^[0-9a-f]{64}$' "the token"
        expect_eq standard "$(j 'd["isolation"]["tier"]')" "the tier granted by default"
        expect_match "$(j 'd["expiresAt"]')" '^20[0-9-]+T' "expiresAt"
        [ -e "$STATE/$ID/api-token.sha256" ] || fail "the token's hash is not kept with the sandbox"
        grep -q "$TOKEN_SB" "$STATE/$ID/api-token.sha256" && fail "the token is stored in the clear"
        grep -rq "$TOKEN_SB" "$IT_TMP/serve.log" && fail "the token was logged"
        api POST "/v1/sandboxes/$ID/exec" '{"argv": ["sh", "-c", "echo $GREETING $X; echo oops >&2; cat; exit 3"], "env": {"X": "there"}, "stdinBase64": "aW5wdXQK"}'
        expect_eq 200 "$CODE" "exec"
        expect_eq 3 "$(j 'd["exitCode"]')" "the exit code"
        expect_eq "$(printf 'hi there\ninput')" "$(j 'd["stdout"]')" "stdout"
        expect_eq oops "$(j 'd["stderr"]')" "stderr"
        expect_eq false "$(j 'd["truncated"]')" "truncated"
        api POST "/v1/sandboxes/$ID/exec" '{"argv": ["sh", "-c", "kill -9 $$"]}'
        expect_eq 9 "$(j 'd["signal"]')" "a run killed by a signal"
        api POST "/v1/sandboxes/$ID/exec" '{"argv": ["sh", "-c", "head -c 3000000 /dev/zero | tr \\\\0 x"]}'
        expect_eq true "$(j 'd["truncated"]')" "output over the bound"
        expect_eq 1048576 "$(j 'len(d["stdout"])')" "the bound"
        # output that is not text: as text a byte that is not UTF-8 comes back as '?', with
        # outputEncoding base64 the bytes are as the run wrote them (checked against the file
        # the same bytes were teed into, read back raw)
        python3 -c 'import json; print(json.dumps({"argv": ["sh", "-c", "printf \"\\000\\377\\200ok\"; printf \"\\376\" >&2; head -c 70000 /dev/urandom | tee /tmp/r >/dev/null"], "outputEncoding": "base64"}))' >"$IT_TMP/b64.json"
        api POST "/v1/sandboxes/$ID/exec" @"$IT_TMP/b64.json"
        expect_eq "200 AP+Ab2s= /g== false" "$CODE $(j 'd["stdoutBase64"]') $(j 'd["stderrBase64"]') $(j '"stdout" in d')" \
                "outputEncoding base64: the bytes, in place of stdout and stderr"
        python3 -c 'import json; print(json.dumps({"argv": ["cat", "/tmp/r"], "outputEncoding": "base64"}))' >"$IT_TMP/b64.json"
        api POST "/v1/sandboxes/$ID/exec" @"$IT_TMP/b64.json"
        printf '%s' "$OUT" | python3 -c 'import base64, json, sys
open(sys.argv[1], "wb").write(base64.b64decode(json.load(sys.stdin)["stdoutBase64"]))' "$IT_TMP/r.exec"
        curl -sS --unix-socket "$SOCK" -o "$IT_TMP/r.file" "http://cordon/v1/sandboxes/$ID/files?path=/tmp/r"
        expect_true "70000 random bytes out of exec as the file holds them" cmp -s "$IT_TMP/r.exec" "$IT_TMP/r.file"
        api POST "/v1/sandboxes/$ID/exec" '{"argv": ["true"], "outputEncoding": "hex"}'
        expect_eq "400 outputEncoding" "$CODE $(j 'd["error"]["field"]')" "an unknown outputEncoding"
        api GET "/v1/sandboxes/$ID"
        expect_eq 200 "$CODE" "inspect"
        expect_eq running "$(j 'd["status"]')" "status"
        expect_eq standard "$(j 'd["tier"]["tier"]')" "inspect's tier"
        expect_contains "$(j 'd["tier"]["layers"]')" "seccomp user notification" "the tier's layers"
        expect_eq 5 "$(j 'len(d["runs"])')" "runs"
        api GET /v1/sandboxes
        expect_contains "$OUT" "\"$ID\"" "list"
        api GET /v1/host
        expect_eq true "$(j 'd["layers"]["user namespace"]["available"]')" "host layers"
        expect_eq '["standard", "hardened", "maximum"]' "$(j '[t["tier"] for t in d["tiers"]]')" "host tiers"
        api DELETE "/v1/sandboxes/$ID"
        expect_eq 200 "$CODE" "terminate"
        [ -e "$STATE/$ID" ] && fail "the sandbox's state is left after DELETE"
        api GET "/v1/sandboxes/$ID"
        expect_eq 404 "$CODE" "inspect after terminate"
        expect_eq not_found "$(j 'd["error"]["code"]')" "the error's code"
}

# The CLI is the reference: one scenario both ways, the results compared.
it_test cli_and_api_agree
cli_and_api_agree() {
        need_root
        need_curl
        start_api
        local id
        id=$(timeout 30 "$CORDON" sandbox create --ttl 2m) || fail "cordon sandbox create"
        at_exit "timeout 30 '$CORDON' sandbox terminate $id"
        local cli_out cli_err cli_rc
        cli_out=$(timeout 30 "$CORDON" sandbox exec "$id" -- sh -c 'echo out; echo err >&2; exit 7' 2>"$IT_TMP/err")
        cli_rc=$?
        cli_err=$(cat "$IT_TMP/err")
        api POST "/v1/sandboxes/$id/exec" '{"argv": ["sh", "-c", "echo out; echo err >&2; exit 7"]}'
        expect_eq "$cli_out" "$(j 'd["stdout"]')" "stdout, CLI vs API"
        expect_eq "$cli_err" "$(j 'd["stderr"]')" "stderr, CLI vs API"
        expect_eq "$cli_rc" "$(j 'd["exitCode"]')" "exit code, CLI vs API"
        # a file in through the CLI, out through the API, and the other way
        printf 'from the cli\n' >"$IT_TMP/in"
        timeout 30 "$CORDON" sandbox put "$id" "$IT_TMP/in" /tmp/cli.txt || fail "put"
        api GET "/v1/sandboxes/$id/files?path=/tmp/cli.txt"
        expect_eq "from the cli" "$OUT" "a CLI put read through the API"
        api POST "/v1/sandboxes/$id/files" '{"path": "/tmp/api.txt", "contentBase64": "ZnJvbSB0aGUgYXBpCg=="}'
        expect_eq 200 "$CODE" "a file written through the API"
        expect_eq "from the api" "$(timeout 30 "$CORDON" sandbox get "$id" /tmp/api.txt -)" "read through the CLI"
        api PUT "/v1/sandboxes/$id/files?path=/tmp/raw.bin" "$(printf 'raw body')"
        expect_eq "raw body" "$(timeout 30 "$CORDON" sandbox get "$id" /tmp/raw.bin -)" "a raw PUT"
        local cli_ls
        cli_ls=$(timeout 30 "$CORDON" sandbox ls "$id" /tmp --json | python3 -c 'import json,sys; print(json.dumps(sorted(json.loads(l)["name"] for l in sys.stdin)))')
        api GET "/v1/sandboxes/$id/files?path=/tmp&list=1"
        expect_eq "$cli_ls" "$(j 'sorted(e["name"] for e in d["entries"])')" "ls, CLI vs API"
        # the run's events: the same lines from both
        local cli_ev
        cli_ev=$(timeout 30 "$CORDON" sandbox events "$id" --run r2 --json)
        api GET "/v1/sandboxes/$id/runs/r2/events"
        expect_eq "$cli_ev" "$OUT" "the run's events, CLI vs API (NDJSON)"
        # inspect: the CLI's --json and the API's agree on what they share
        local cli_inspect
        cli_inspect=$(timeout 30 "$CORDON" sandbox inspect "$id" --json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps([d["id"], d["status"], d["limits"], [r["id"] for r in d["runs"]]], sort_keys=True))')
        api GET "/v1/sandboxes/$id"
        expect_eq "$cli_inspect" "$(j '[d["id"], d["status"], d["limits"], [r["id"] for r in d["runs"]]]')" "inspect, CLI vs API"
}

it_test bad_input_gets_its_error
bad_input_gets_its_error() {
        need_root
        need_curl
        start_api
        api_sandbox
        api POST /v1/sandboxes '{"ttlMs": 1000'
        expect_eq "400 invalid_json" "$CODE $(j 'd["error"]["code"]')" "malformed JSON"
        api POST /v1/sandboxes '[1]'
        expect_eq 400 "$CODE" "a body that is not an object"
        api POST /v1/sandboxes '{"limits": {"memoryBytes": "lots"}}'
        expect_eq "400 limits.memoryBytes" "$CODE $(j 'd["error"]["field"]')" "a wrong type names the field"
        api POST /v1/sandboxes '{"colour": "blue"}'
        expect_eq "400 colour" "$CODE $(j 'd["error"]["field"]')" "an unknown field"
        api POST /v1/sandboxes '{"ttlMs": "soon"}'
        expect_eq "400 ttlMs" "$CODE $(j 'd["error"]["field"]')" "ttlMs"
        api POST /v1/sandboxes '{"ttlMs": 99999999999999}'
        expect_eq "400 ttlMs" "$CODE $(j 'd["error"]["field"]')" "a ttlMs over the longest a sandbox lives"
        expect_contains "$(j 'd["error"]["message"]')" "30 days" "and what the longest is"
        api POST /v1/sandboxes '{"requestedIsolation": "bulletproof"}'
        expect_eq "400 requestedIsolation" "$CODE $(j 'd["error"]["field"]')" "an unknown tier"
        api POST "/v1/sandboxes/$ID/exec" '{"argv": "ls"}'
        expect_eq "400 argv" "$CODE $(j 'd["error"]["field"]')" "argv not an array"
        api POST "/v1/sandboxes/$ID/exec" '{"argv": ["ls", 3]}'
        expect_eq "400 argv[1]" "$CODE $(j 'd["error"]["field"]')" "argv[1] not a string"
        api POST "/v1/sandboxes/$ID/exec" '{"argv": ["ls"], "shell": true}'
        expect_eq "400 shell" "$CODE $(j 'd["error"]["field"]')" "an unknown exec field"
        api POST "/v1/sandboxes/$ID/exec" '{"argv": ["ls"], "env": {"A": 1}}'
        expect_eq "400 env.A" "$CODE $(j 'd["error"]["field"]')" "env with a number"
        head -c 1100000 /dev/zero | tr '\0' ' ' >"$IT_TMP/big"
        api POST "/v1/sandboxes/$ID/exec" "@$IT_TMP/big"
        expect_eq "413 too_large" "$CODE $(j 'd["error"]["code"]')" "an oversized body"
        CODE=$(curl -sS -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" -H "X-Big: $(head -c 70000 /dev/zero | tr '\0' a)" http://cordon/v1/host)
        [ "$CODE" -ge 400 ] || fail "an oversized header got $CODE"
        # framing two ways at once (a proxy in front may read the one cordon does not:
        # request smuggling), or a length that is no number: refused, not guessed at
        api POST "/v1/sandboxes/$ID/exec" '{"argv": ["true"]}' -H 'Transfer-Encoding: chunked' -H 'Content-Length: 17'
        expect_eq "400 invalid_framing" "$CODE $(j 'd["error"]["code"]')" "Content-Length with Transfer-Encoding"
        OUT=$(printf 'GET /v1/host HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n' |
                timeout 10 python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.stdin.buffer.read()); print(s.recv(200).decode(errors="replace"))' "$SOCK")
        expect_match "$OUT" '^HTTP/1.1 400' "a negative Content-Length"
        api GET "/v1/sandboxes/$ID/events?afterSequence=999999"
        expect_eq "400 afterSequence" "$CODE $(j 'd["error"]["field"]')" "afterSequence in the future"
        api GET "/v1/sandboxes/$ID/events?afterSequence=-1"
        expect_eq 400 "$CODE" "a negative afterSequence"
        api GET "/v1/sandboxes/$ID/runs/r99/events"
        expect_eq 404 "$CODE" "events of a run there never was"
        api GET /v1/nowhere
        expect_eq 404 "$CODE" "an unknown route"
        api PATCH "/v1/sandboxes/$ID"
        expect_eq 405 "$CODE" "a method the route has not"
        api GET "/v1/sandboxes/../../etc"
        [ "$CODE" = 404 ] || [ "$CODE" = 400 ] || fail "a path with .. got $CODE"
        # files?path= never leaves the sandbox's view: a host file outside it
        # is not found, however the path climbs
        local secret=/var/tmp/cordon-api-secret.$$
        echo host-only >"$secret"
        at_exit "rm -f $secret"
        api GET "/v1/sandboxes/$ID/files?path=/../../..$secret"
        expect_not_contains "$OUT" host-only "a traversal read the host's file"
        expect_eq 404 "$CODE" "a traversal to a host file"
        api PUT "/v1/sandboxes/$ID/files?path=/../../../var/tmp/cordon-api-planted.$$" x
        [ -e "/var/tmp/cordon-api-planted.$$" ] && fail "a traversal wrote on the host"
        api GET "/v1/sandboxes/$ID/files?path=relative"
        expect_eq "400 path" "$CODE $(j 'd["error"]["field"]')" "a relative path"
        api POST "/v1/sandboxes/$ID/files" '{"path": "/tmp/x", "contentBase64": "not base64!"}'
        expect_eq "400 contentBase64" "$CODE $(j 'd["error"]["field"]')" "bad base64"
        # a paused sandbox: exec is a conflict
        api POST "/v1/sandboxes/$ID/pause"
        if [ "$CODE" = 200 ]; then
                api POST "/v1/sandboxes/$ID/exec" '{"argv": ["true"]}'
                expect_eq "409 conflict" "$CODE $(j 'd["error"]["code"]')" "exec in a paused sandbox"
                expect_contains "$(j 'd["error"]["message"]')" "POST /v1/sandboxes/$ID/resume" "saying how, in the API's terms"
                api POST "/v1/sandboxes/$ID/resume"
        fi
        # the server is still there for everyone
        api GET /v1/host
        expect_eq 200 "$CODE" "the server after bad input"
}

it_test isolation_and_quotas_from_admission
isolation_and_quotas_from_admission() {
        need_root
        need_curl
        cat >"$IT_TMP/admission.json" <<'JSON'
{"minimumIsolation": "hardened", "highRiskRequiresStrongest": true, "maxPerSandbox": {"memoryBytes": 1073741824}}
JSON
        start_api --admission "$IT_TMP/admission.json"
        api GET /v1/host
        [ "$(j '[t["available"] for t in d["tiers"]][1]')" = true ] || skip "this host cannot give the hardened tier"
        api POST /v1/sandboxes '{"requestedIsolation": "standard"}'
        expect_eq "422 isolation_below_minimum requestedIsolation" "$CODE $(j 'd["error"]["code"]') $(j 'd["error"]["field"]')" "below the minimum"
        api POST /v1/sandboxes '{"requestedIsolation": "hardened", "networkPolicy": {"mode": "allow-listed", "rules": [{"host": "api.example.com", "port": 443, "reason": "test"}]}}'
        expect_eq "422 isolation_required" "$CODE $(j 'd["error"]["code"]')" "a high-risk create below the strongest tier"
        expect_contains "$(j 'd["error"]["message"]')" networkPolicy "the reason"
        api POST /v1/sandboxes '{"limits": {"memoryBytes": 4294967296}}'
        expect_eq "429 quota_exceeded memoryBytes 4294967296 1073741824" \
                "$CODE $(j 'd["error"]["code"]') $(j 'd["error"]["limit"]') $(j 'd["error"]["requested"]') $(j 'd["error"]["allowed"]')" "a quota"
        api POST /v1/sandboxes '{"limits": {"memoryBytes": "unlimited"}}'
        expect_eq "429 unlimited" "$CODE $(j 'd["error"]["requested"]')" "unlimited over a maximum"
        # nothing was queued: no sandbox came of the refusals
        api GET /v1/sandboxes
        local before=$OUT
        api_sandbox '{"ttlMs": 120000}'
        expect_eq hardened "$(j 'd["isolation"]["tier"]')" "the admission's minimum granted"
        api GET "/v1/sandboxes/$ID"
        expect_eq hardened "$(j 'd["tier"]["tier"]')" "inspect reports the tier"
        expect_contains "$(j 'd["tier"]["layers"]')" landlock "and its layers"
        # a tier this host lacks is refused, naming what is missing
        api GET /v1/host
        if [ "$(j '[t["available"] for t in d["tiers"]][2]')" = false ]; then
                api POST /v1/sandboxes '{"requestedIsolation": "maximum"}'
                expect_eq "422 isolation_unavailable" "$CODE $(j 'd["error"]["code"]')" "an unavailable tier"
                [ "$(j 'len(d["error"]["missing"])')" -gt 0 ] || fail "the missing layers are not named"
        fi
        expect_not_contains "$before" '"status": "queued"' "a refused create left something"
}

it_test idempotent_create_and_run
idempotent_create_and_run() {
        need_root
        need_curl
        start_api
        api_sandbox '{"ttlMs": 120000, "idempotencyKey": "k-'$$'"}'
        local first=$ID
        api POST /v1/sandboxes '{"ttlMs": 120000, "idempotencyKey": "k-'$$'"}'
        expect_eq 200 "$CODE" "a repeated create"
        expect_eq "$first" "$(j 'd["id"]')" "the same sandbox"
        expect_eq true "$(j 'd["idempotentReplay"]')" "marked as a replay"
        expect_eq null "$(j 'd["token"]')" "no token the second time"
        api POST "/v1/sandboxes/$first/runs" '{"argv": ["true"], "idempotencyKey": "run-1"}'
        expect_eq 201 "$CODE" "a run start"
        local run
        run=$(j 'd["runId"]')
        api POST "/v1/sandboxes/$first/runs" '{"argv": ["true"], "idempotencyKey": "run-1"}'
        expect_eq "200 $run" "$CODE $(j 'd["runId"]')" "the same run again"
        api GET "/v1/sandboxes/$first"
        expect_eq 1 "$(j 'len(d["runs"])')" "one run, not two"
}

# Events resumed from any seq lose nothing and repeat nothing; a follow stream ends with the run;
# closing a connection never cancels the run.
it_test events_resume_follow_and_disconnect
events_resume_follow_and_disconnect() {
        need_root
        need_curl
        start_api
        api_sandbox
        api POST "/v1/sandboxes/$ID/runs" '{"argv": ["sh", "-c", "i=0; while [ $i -lt 300 ]; do echo line$i; i=$((i+1)); done"]}'
        local run
        run=$(j 'd["runId"]')
        api GET "/v1/sandboxes/$ID/runs/$run/events?follow=1"
        local all
        all=$(printf '%s\n' "$OUT" | python3 -c 'import json,sys; print(" ".join(str(json.loads(l)["seq"]) for l in sys.stdin if l.strip()))')
        expect_contains "$OUT" '"type":"run_exited"' "a follow stream ends with the run's exit"
        # read in pieces: each resumed at the last seq seen
        local after=0 got="" n
        for n in 1 2 3 4 5 6 7 8 9 10; do
                api GET "/v1/sandboxes/$ID/runs/$run/events?afterSequence=$after"
                local part
                part=$(printf '%s\n' "$OUT" | head -$((n * 7)) | python3 -c 'import json,sys; print(" ".join(str(json.loads(l)["seq"]) for l in sys.stdin if l.strip()))')
                [ -z "$part" ] && break
                got="$got $part"
                after=${part##* }
        done
        api GET "/v1/sandboxes/$ID/runs/$run/events?afterSequence=$after"
        got="$got $(printf '%s\n' "$OUT" | python3 -c 'import json,sys; print(" ".join(str(json.loads(l)["seq"]) for l in sys.stdin if l.strip()))')"
        expect_eq "$all" "$(echo $got)" "every event once, across resumed reads"
        # resumed after the run's end, a follow stream ends at once, empty
        api GET "/v1/sandboxes/$ID/runs/$run/events?afterSequence=${all##* }&follow=1" '' --max-time 10
        expect_eq "200 " "$CODE $OUT" "following a run that ended before afterSequence"
        # server-sent events resumed by Last-Event-ID
        local sse
        sse=$(curl -sS --max-time 20 --unix-socket "$SOCK" -H 'Accept: text/event-stream' -H "Last-Event-ID: ${all%% *}" "http://cordon/v1/sandboxes/$ID/runs/$run/events")
        expect_contains "$sse" "id: ${all##* }" "SSE carries the seq as id"
        expect_not_contains "$sse" "id: ${all%% *}"$'\n' "SSE resumed after Last-Event-ID"
        # an exec whose client goes away: its run goes on and finishes
        curl -sS --max-time 1 --unix-socket "$SOCK" -X POST "http://cordon/v1/sandboxes/$ID/exec" \
                -d '{"argv": ["sh", "-c", "sleep 2; echo done > /tmp/finished"]}' >/dev/null 2>&1
        sleep 3
        api GET "/v1/sandboxes/$ID/files?path=/tmp/finished"
        expect_eq "200 done" "$CODE $OUT" "a run whose client closed its connection"
        # a background run cancelled: cancel wins
        api POST "/v1/sandboxes/$ID/runs" '{"argv": ["sleep", "30"]}'
        run=$(j 'd["runId"]')
        api POST "/v1/sandboxes/$ID/runs/$run/cancel"
        expect_eq 200 "$CODE" "cancel"
        wait_until 10 bash -c "curl -s --unix-socket '$SOCK' http://cordon/v1/sandboxes/$ID/runs/$run | grep -q cancelled" ||
                fail "the run is not reported cancelled"
        api POST "/v1/sandboxes/$ID/runs/$run/cancel"
        expect_eq 409 "$CODE" "cancelling an ended run"
}

# Clients that never read, or send their request a byte at a time, hold only their own connection.
it_test stalled_clients_hold_only_themselves
stalled_clients_hold_only_themselves() {
        need_root
        need_curl
        start_api
        api_sandbox
        api POST "/v1/sandboxes/$ID/runs" '{"argv": ["sh", "-c", "i=0; while [ $i -lt 20000 ]; do echo a-long-line-of-output-$i; i=$((i+1)); done; sleep 20"]}'
        local run
        run=$(j 'd["runId"]')
        python3 - "$SOCK" "$ID" "$run" >"$IT_TMP/stall.log" 2>&1 <<'PY' &
import socket, sys, time
sock, sid, run = sys.argv[1:4]
held = []
for i in range(5):  # readers that never read a following stream
    s = socket.socket(socket.AF_UNIX); s.connect(sock)
    s.sendall(("GET /v1/sandboxes/%s/runs/%s/events?follow=1 HTTP/1.1\r\nHost: x\r\n\r\n" % (sid, run)).encode())
    held.append(s)
for i in range(5):  # slowloris: half a request, then nothing
    s = socket.socket(socket.AF_UNIX); s.connect(sock)
    s.sendall(b"GET /v1/host HTTP/1.1\r\nHost: x\r\nX-Slow: ")
    held.append(s)
time.sleep(15)
PY
        local stall=$!
        at_exit "kill $stall"
        sleep 1
        local i
        for i in 1 2 3; do
                api GET "/v1/sandboxes/$ID"
                expect_eq 200 "$CODE" "inspect while others stall ($i)"
                api POST "/v1/sandboxes/$ID/exec" '{"argv": ["echo", "still here"]}'
                expect_eq "still here" "$(j 'd["stdout"]')" "exec while others stall ($i)"
        done
}

it_test restart_picks_up_live_sandboxes
restart_picks_up_live_sandboxes() {
        need_root
        need_curl
        start_api
        api_sandbox
        api POST "/v1/sandboxes/$ID/runs" '{"argv": ["sh", "-c", "sleep 2; echo survived"]}'
        local run
        run=$(j 'd["runId"]')
        kill -9 "$API_PID"
        wait "$API_PID" 2>/dev/null
        api GET /v1/host
        [ "$CODE" = 200 ] && fail "the killed server still answers"
        start_api
        api GET "/v1/sandboxes/$ID"
        expect_eq "200 running" "$CODE $(j 'd["status"]')" "the sandbox after the server's restart"
        api GET "/v1/sandboxes/$ID/runs/$run/events?follow=1"
        expect_contains "$OUT" survived "the run that went on through the restart"
        api POST "/v1/sandboxes/$ID/exec" '{"argv": ["echo", "ok"]}'
        expect_eq ok "$(j 'd["stdout"]')" "exec after the restart"
}

it_test tcp_needs_tokens_scoped_to_their_sandbox
tcp_needs_tokens_scoped_to_their_sandbox() {
        need_root
        need_curl
        local port=$((20000 + RANDOM % 20000))
        head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$IT_TMP/admin.token"
        chmod 0644 "$IT_TMP/admin.token"
        RC=0
        timeout 10 "$CORDON" serve --listen "tcp:127.0.0.1:$port" --token-file "$IT_TMP/admin.token" 2>"$IT_TMP/err" || RC=$?
        expect_eq 2 "$RC" "a token file others can read is refused"
        expect_contains "$(cat "$IT_TMP/err")" 0600 "and says why"
        RC=0
        timeout 10 "$CORDON" serve --listen "tcp:127.0.0.1:$port" 2>"$IT_TMP/err" || RC=$?
        expect_eq 2 "$RC" "tcp without --token-file is refused"
        chmod 0600 "$IT_TMP/admin.token"
        "$CORDON" serve --listen "tcp:127.0.0.1:$port" --token-file "$IT_TMP/admin.token" >"$IT_TMP/serve.log" 2>&1 &
        API_PID=$!
        at_exit "kill $API_PID"
        TCP=127.0.0.1:$port
        wait_until 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null || fail "the TCP server did not start"
        TOKEN=
        api GET /v1/sandboxes
        expect_eq 401 "$CODE" "no token"
        TOKEN=wrong-token-wrong-token
        api GET /v1/host
        expect_eq 401 "$CODE" "a wrong token"
        TOKEN=$(cat "$IT_TMP/admin.token")
        api_sandbox
        local a=$ID a_tok=$TOKEN_SB
        api_sandbox
        local b=$ID
        TOKEN=$a_tok
        api POST "/v1/sandboxes/$a/exec" '{"argv": ["echo", "mine"]}'
        expect_eq "200 mine" "$CODE $(j 'd["stdout"]')" "a sandbox's token on its sandbox"
        api GET /v1/sandboxes
        expect_eq "[\"$a\"]" "$(j '[s["id"] for s in d["sandboxes"]]')" "a sandbox's token lists its sandbox only"
        api GET "/v1/sandboxes/$b"
        local other="$CODE $OUT"
        api GET /v1/sandboxes/0123456789abcdef
        expect_eq "$(echo "$other" | sed "s/$b/ID/g")" "$(echo "$CODE $OUT" | sed 's/0123456789abcdef/ID/g')" \
                "another sandbox and none at all look the same"
        expect_eq 404 "${other%% *}" "another sandbox's"
        api POST "/v1/sandboxes/$b/exec" '{"argv": ["true"]}'
        expect_eq 404 "$CODE" "exec in another sandbox"
        api DELETE "/v1/sandboxes/$b"
        expect_eq 404 "$CODE" "terminate another sandbox"
        api POST /v1/sandboxes '{}'
        expect_eq 401 "$CODE" "a sandbox's token cannot create"
        # one tenant's streams cannot hold every connection (behind a proxy they all share
        # its address): a sandbox's token has 16 requests in progress at most
        local i streams=()
        for i in $(seq 16); do
                curl -sS -o /dev/null --max-time 60 -H "Authorization: Bearer $a_tok" \
                        "http://$TCP/v1/sandboxes/$a/events?follow=1" &
                streams+=($!)
        done
        wait_until 10 bash -c "[ \$(ss -Htn state established '( dport = :$port )' | wc -l) -ge 16 ]" ||
                _it_soft_fail "the 16 streams did not connect"
        sleep 0.5
        api GET "/v1/sandboxes/$a"
        expect_eq "429 too_many_requests" "$CODE $(j 'd["error"]["code"]')" "a 17th request of the same token"
        TOKEN=$(cat "$IT_TMP/admin.token")
        api GET "/v1/sandboxes/$a"
        expect_eq 200 "$CODE" "while the admin's is served"
        TOKEN=$a_tok
        kill "${streams[@]}" 2>/dev/null
        wait "${streams[@]}" 2>/dev/null
        wait_until 10 bash -c "curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer $a_tok' http://$TCP/v1/sandboxes/$a | grep -q 200" ||
                _it_soft_fail "the token is served again once its streams end"
        # a sandbox's token exposes its ports on loopback at a port the kernel
        # picks, never on the host's other addresses or at a port it names
        # (a privileged one, or one a host service such as this server
        # wants back after a restart): those are the host's to give
        local listen
        for listen in 0.0.0.0:0 "127.0.0.1:$port" 127.0.0.1:81 "[::]:0"; do
                api POST "/v1/sandboxes/$a/ports" "{\"port\": 3000, \"listen\": \"$listen\"}"
                expect_eq "403 listen" "$CODE $(j 'd["error"]["field"]')" "a sandbox's token cannot listen on $listen"
        done
        api POST "/v1/sandboxes/$a/ports" '{"port": 3000, "listen": "127.0.0.1:0"}'
        expect_eq 201 "$CODE" "a sandbox's token on loopback, the port the kernel's"
        api POST "/v1/sandboxes/$a/ports" '{"port": 3001}'
        expect_eq "201 127.0.0.1" "$CODE $(j 'd["listen"].rsplit(":", 1)[0]')" "and by default"
        TOKEN=$(cat "$IT_TMP/admin.token")
        api POST "/v1/sandboxes/$a/ports" '{"port": 3002, "listen": "0.0.0.0:0"}'
        expect_eq 201 "$CODE" "the admin token may choose any address"
        TOKEN=$a_tok
        grep -q "$a_tok" "$IT_TMP/serve.log" && fail "a token was logged"
        # tokens survive a restart: they are kept (hashed) with the sandbox
        kill -9 "$API_PID"
        wait "$API_PID" 2>/dev/null
        "$CORDON" serve --listen "tcp:127.0.0.1:$port" --token-file "$IT_TMP/admin.token" >>"$IT_TMP/serve.log" 2>&1 &
        API_PID=$!
        at_exit "kill $API_PID"
        wait_until 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null || fail "the TCP server did not restart"
        api GET "/v1/sandboxes/$a"
        expect_eq 200 "$CODE" "a sandbox's token after the server's restart"
}

it_test unix_socket_refuses_others
unix_socket_refuses_others() {
        need_root
        need_curl
        command -v setpriv >/dev/null || skip "setpriv is not installed"
        chmod 0755 "$IT_TMP"
        start_api
        # the socket is 0660: a user outside its group cannot even connect;
        # opened to everyone, the server still refuses by SO_PEERCRED
        chmod 0666 "$SOCK"
        CODE=$(setpriv --reuid 65534 --regid 65534 --clear-groups curl -sS -o "$IT_TMP/nobody" -w '%{http_code}' --unix-socket "$SOCK" http://cordon/v1/sandboxes)
        expect_eq 401 "$CODE" "a user neither root nor in the socket's group"
        CODE=$(setpriv --reuid 65534 --regid 0 --clear-groups curl -sS -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" http://cordon/v1/host)
        expect_eq 200 "$CODE" "a member of the socket's group"
}

it_test openapi_document_matches_the_server
openapi_document_matches_the_server() {
        need_root
        need_curl
        start_api
        api GET /v1/openapi.json
        expect_eq 200 "$CODE" "the document"
        python3 - "$SRC/sentry/api/openapi.json" "$OUT" <<'PY' || fail "the served document is not the repo's"
import json, sys
assert json.load(open(sys.argv[1])) == json.loads(sys.argv[2])
PY
        # every documented call reaches a handler (never "no_route" or 405);
        # with an unknown field, so that a create makes nothing
        local m p
        while read -r m p; do
                api "$m" "${p//\{id\}/0123456789abcdef}" '{"probe": 1}'
                case $(j 'd.get("error", {}).get("code", "")' 2>/dev/null) in
                no_route | method_not_allowed) fail "$m $p is documented but not served" ;;
                esac
        done < <(python3 -c 'import json,sys
for p, ops in json.load(open(sys.argv[1]))["paths"].items():
    for m in ops: print(m.upper(), p.replace("{run}", "r1").replace("{req}", "q1"))' "$SRC/sentry/api/openapi.json")
}

# A tier this host cannot give (openat2 forced absent, as a kernel without it) is refused by
# the API (422, naming the layer) and by the CLI alike; never granted as something less.
it_test tier_the_host_lacks_is_refused
tier_the_host_lacks_is_refused() {
        need_root
        need_curl
        export CORDON_TEST_FORCE_FALLBACK=openat2
        start_api
        api GET /v1/host
        expect_eq '[true, false, false]' "$(j '[t["available"] for t in d["tiers"]]')" "tiers without openat2"
        api POST /v1/sandboxes '{"requestedIsolation": "hardened"}'
        expect_eq "422 isolation_unavailable requestedIsolation" "$CODE $(j 'd["error"]["code"]') $(j 'd["error"]["field"]')" "a tier the host lacks"
        expect_eq '["openat2"]' "$(j 'd["error"]["missing"]')" "the missing layers are named"
        echo '{"requestedIsolation": "hardened"}' >"$IT_TMP/policy.json"
        local out rc=0
        out=$(timeout 30 "$CORDON" sandbox create --policy "$IT_TMP/policy.json" 2>&1) || rc=$?
        expect_eq 125 "$rc" "the CLI refuses it too"
        expect_contains "$out" openat2 "and names the layer"
        rc=0
        out=$(timeout 30 "$CORDON" run --policy "$IT_TMP/policy.json" -- true 2>&1) || rc=$?
        expect_eq 125 "$rc" "cordon run refuses it too"
        expect_contains "$out" openat2 "and names the layer"
        api POST /v1/sandboxes '{"requestedIsolation": "standard", "ttlMs": 60000}'
        expect_eq 201 "$CODE" "the tier the host has"
        [ "$CODE" = 201 ] && timeout 30 "$CORDON" sandbox terminate "$(j 'd["id"]')"
}

it_test exec_stream_snapshot_and_sandbox_events
exec_stream_snapshot_and_sandbox_events() {
        need_root
        need_curl
        start_api
        api_sandbox
        local sse
        sse=$(curl -sS --max-time 20 --unix-socket "$SOCK" -H 'Accept: text/event-stream' -X POST \
                -d '{"argv": ["sh", "-c", "echo one; sleep 1; echo two"]}' "http://cordon/v1/sandboxes/$ID/exec?stream=1")
        expect_contains "$sse" '"text":"one"' "a streamed exec's first line"
        expect_contains "$sse" '"text":"two"' "and its last"
        expect_match "$sse" '^event: run_exited' "the stream ends with the exit"
        # a large file streams out whole (never held whole by the server)
        api POST "/v1/sandboxes/$ID/exec" '{"argv": ["sh", "-c", "head -c 24000000 /dev/urandom > /tmp/big && sha256sum /tmp/big"]}'
        local want
        want=$(j 'd["stdout"]')
        curl -sS --max-time 30 --unix-socket "$SOCK" -o "$IT_TMP/big" "http://cordon/v1/sandboxes/$ID/files?path=/tmp/big" ||
                fail "GET of a large file"
        expect_eq "${want%% *}" "$(sha256sum <"$IT_TMP/big" | cut -d' ' -f1)" "a 24 MB file read through the API"
        api GET "/v1/sandboxes/$ID/files?path=/tmp"
        expect_eq "400 not_a_file" "$CODE $(j 'd["error"]["code"]')" "reading a directory as a file"
        curl -sS --max-time 20 --unix-socket "$SOCK" -X POST -D "$IT_TMP/headers" -o "$IT_TMP/snap.tar.zst" \
                "http://cordon/v1/sandboxes/$ID/snapshot" || fail "snapshot"
        local digest
        digest=$(tr -d '\r' <"$IT_TMP/headers" | sed -n 's/^X-Cordon-Digest: //Ip')
        expect_eq "sha256:$(sha256sum <"$IT_TMP/snap.tar.zst" | cut -d' ' -f1)" "$digest" "the snapshot's digest header"
        # a snapshot made through the API restores through the CLI
        local restored
        restored=$(timeout 30 "$CORDON" sandbox create --ttl 1m --from-snapshot "$IT_TMP/snap.tar.zst" --digest "$digest") ||
                fail "restoring the API's snapshot"
        timeout 30 "$CORDON" sandbox terminate "$restored"
        # and through the API: the archive given as a create's fromSnapshot
        python3 - "$IT_TMP/snap.tar.zst" "$digest" >"$IT_TMP/restore.json" <<'PY'
import base64, json, sys
arc = base64.b64encode(open(sys.argv[1], "rb").read()).decode()
print(json.dumps({"ttlMs": 60000, "fromSnapshot": {"archiveBase64": arc, "digest": sys.argv[2]}}))
PY
        local first=$ID
        api POST /v1/sandboxes "@$IT_TMP/restore.json"
        expect_eq 201 "$CODE" "a create restoring a snapshot"
        restored=$(j 'd["id"]')
        at_exit "timeout 30 '$CORDON' sandbox terminate $restored"
        api POST "/v1/sandboxes/$restored/exec" '{"argv": ["sha256sum", "/tmp/big"]}'
        expect_eq "$want" "$(j 'd["stdout"]')" "the restored sandbox has the snapshot's files"
        sed -i 's/"digest": "sha256:[0-9a-f]*"/"digest": "sha256:'"$(printf '0%.0s' {1..64})"'"/' "$IT_TMP/restore.json"
        api POST /v1/sandboxes "@$IT_TMP/restore.json"
        expect_eq "400 fromSnapshot.digest" "$CODE $(j 'd["error"]["field"]')" "an archive whose digest differs"
        expect_eq "" "$(find /run/cordon/api -name 'restore-*' 2>/dev/null)" "no archive is left behind"
        # one a killed server left is removed when a server starts again
        touch -d '2 hours ago' /run/cordon/api/restore-left
        kill "$API_PID"
        wait "$API_PID" 2>/dev/null
        start_api
        expect_true "a killed server's restore archive goes at the next start" test ! -e /run/cordon/api/restore-left
        api DELETE "/v1/sandboxes/$restored"
        ID=$first
        # the sandbox's own events follow until it is gone
        curl -sS --max-time 30 --unix-socket "$SOCK" "http://cordon/v1/sandboxes/$ID/events?follow=1" >"$IT_TMP/events" &
        local reader=$!
        sleep 0.5
        api DELETE "/v1/sandboxes/$ID"
        wait_until 10 bash -c "! kill -0 $reader 2>/dev/null" || fail "a follow stream outlived its sandbox"
        expect_contains "$(cat "$IT_TMP/events")" '"type":"terminated"' "the sandbox's events to its end"
}

it_test approvals_over_the_api
approvals_over_the_api() {
        need_root
        need_curl
        start_api
        local job
        job=$(scratch_dir job)
        mkdir -p "$job/out" && chmod 0777 "$job/out"
        api_sandbox '{"ttlMs": 120000, "filesystem": {"binds": [{"source": "'"$job"'", "target": "/job"}], "rules": [{"path": "/job/out", "access": "read-write", "action": "ask"}]}}'
        api POST "/v1/sandboxes/$ID/runs" '{"argv": ["sh", "-c", "echo x > /job/out/a && echo written"]}'
        local run
        run=$(j 'd["runId"]')
        wait_until 10 bash -c "curl -s --unix-socket '$SOCK' http://cordon/v1/sandboxes/$ID/approvals | grep -q '\"request\"'" ||
                fail "no approval became pending"
        api GET "/v1/sandboxes/$ID/approvals"
        local req
        req=$(j 'd["approvals"][0]["request"]')
        api POST "/v1/sandboxes/$ID/approvals/$req/approve" '{"remember": "yes"}'
        expect_eq "400 remember" "$CODE $(j 'd["error"]["field"]')" "remember must be a boolean"
        api POST "/v1/sandboxes/$ID/approvals/$req/approve" '{}'
        expect_eq "200 approved" "$CODE $(j 'd["decision"]')" "approve"
        # who decided is the API's client, not only the server that relayed it
        expect_match "$(j 'd["decidedBy"]')" "^uid 0 pid $API_PID via the API: uid $(id -u) pid [0-9]+\$" \
                "the decider is the API's client"
        api GET "/v1/sandboxes/$ID/runs/$run/events?follow=1"
        expect_contains "$OUT" '"text":"written"' "the approved write went through"
        api POST "/v1/sandboxes/$ID/runs" '{"argv": ["sh", "-c", "echo y > /job/out/b && echo written"]}'
        run=$(j 'd["runId"]')
        wait_until 10 bash -c "curl -s --unix-socket '$SOCK' http://cordon/v1/sandboxes/$ID/approvals | grep -q '\"request\"'" ||
                fail "the second write did not ask"
        api GET "/v1/sandboxes/$ID/approvals"
        req=$(j 'd["approvals"][0]["request"]')
        api POST "/v1/sandboxes/$ID/approvals/$req/deny"
        expect_eq "200 denied" "$CODE $(j 'd["decision"]')" "deny"
        api GET "/v1/sandboxes/$ID/runs/$run/events?follow=1"
        expect_not_contains "$OUT" '"text":"written"' "the denied write"
        [ -e "$job/out/b" ] && fail "a denied write reached the host"
        api POST "/v1/sandboxes/$ID/approvals/$req/deny"
        expect_eq 404 "$CODE" "a request already decided"
}

# Many clients at once: every create, exec and stream answered, and afterwards no fd, thread or
# sandbox of theirs left behind (the server's counts are back where they were).
it_test concurrent_clients_leave_nothing_behind
concurrent_clients_leave_nothing_behind() {
        need_root
        need_curl
        start_api
        api GET /v1/host
        local fds0 threads0
        fds0=$(ls /proc/$API_PID/fd | wc -l)
        threads0=$(ls /proc/$API_PID/task | wc -l)
        python3 - "$SOCK" "$SRC/sdk/python" >"$IT_TMP/load.log" 2>&1 <<'PY' || fail "the clients: $(tail -5 "$IT_TMP/load.log")"
import sys, threading
sys.path.insert(0, sys.argv[2])
import cordon
c = cordon.Client(socket_path=sys.argv[1])
errors = []
def client(i):
    try:
        sb = c.sandboxes.create({"ttlMs": 120000})
        try:
            for k in range(3):
                r = sb.exec({"argv": ["sh", "-c", "echo %d-%d" % (i, k)]})
                assert r["stdout"] == "%d-%d\n" % (i, k), r
            run = sb.runs.start({"argv": ["sh", "-c", "for j in 1 2 3 4 5 6 7 8; do echo $j; done"]})
            seqs = [e["seq"] for e in sb.runs.events(run)]
            assert len(seqs) == len(set(seqs)) and seqs == sorted(seqs), seqs
            assert len(seqs) == 10, seqs  # started, 8 lines, exited
        finally:
            sb.terminate()
    except Exception as e:
        errors.append("%d: %r" % (i, e))
ts = [threading.Thread(target=client, args=(i,)) for i in range(12)]
for t in ts: t.start()
for t in ts: t.join()
print("\n".join(errors))
sys.exit(1 if errors else 0)
PY
        sleep 1
        local fds1 threads1
        fds1=$(ls /proc/$API_PID/fd | wc -l)
        threads1=$(ls /proc/$API_PID/task | wc -l)
        expect_eq "$fds0" "$fds1" "the server's open fds after the clients"
        expect_eq "$threads0" "$threads1" "the server's threads after the clients"
}

it_test sdk_python
sdk_python() {
        need_root
        command -v python3 >/dev/null || skip "python3 is not installed"
        start_api
        CORDON_API_SOCKET=$SOCK PYTHONPATH="$SRC/sdk/python" timeout 120 python3 -m unittest discover -s "$SRC/sdk/python/tests" -v ||
                fail "the Python SDK's tests failed"
}

it_test sdk_typescript
sdk_typescript() {
        need_root
        command -v node >/dev/null || skip "node is not installed (Node 18 or later runs the TypeScript SDK's tests)"
        local major
        major=$(node -p 'process.versions.node.split(".")[0]')
        [ "$major" -ge 18 ] || skip "node $major is older than 18"
        start_api
        CORDON_API_SOCKET=$SOCK timeout 120 node --test "$SRC/sdk/typescript/test/" || fail "the TypeScript SDK's tests failed"
        if command -v npm >/dev/null; then
                # the package as npm builds it (offline: pack only reads the tree)
                cp -r "$SRC/sdk/typescript" "$IT_TMP/ts"
                (cd "$IT_TMP/ts" && timeout 60 npm pack --dry-run --offline >"$IT_TMP/pack.log" 2>&1) ||
                        fail "npm pack refused the package: $(tail -3 "$IT_TMP/pack.log")"
                expect_contains "$(cat "$IT_TMP/pack.log")" index.d.ts "the package carries its types"
        fi
}

# both SDKs over TCP, with the admin token and a sandbox's own
it_test sdks_over_tcp_with_tokens
sdks_over_tcp_with_tokens() {
        need_root
        local port=$((20000 + RANDOM % 20000))
        head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$IT_TMP/admin.token"
        chmod 0600 "$IT_TMP/admin.token"
        "$CORDON" serve --listen "tcp:127.0.0.1:$port" --token-file "$IT_TMP/admin.token" >"$IT_TMP/serve.log" 2>&1 &
        API_PID=$!
        at_exit "kill $API_PID"
        wait_until 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null || fail "the TCP server did not start"
        export CORDON_API_URL=http://127.0.0.1:$port CORDON_API_TOKEN
        CORDON_API_TOKEN=$(cat "$IT_TMP/admin.token")
        PYTHONPATH="$SRC/sdk/python" timeout 120 python3 -m unittest discover -s "$SRC/sdk/python/tests" -v ||
                fail "the Python SDK over TCP"
        if command -v node >/dev/null && [ "$(node -p 'process.versions.node.split(".")[0]')" -ge 18 ]; then
                timeout 120 node --test "$SRC/sdk/typescript/test/" || fail "the TypeScript SDK over TCP"
        else
                it_log "node 18+ absent: the TypeScript SDK's TCP test not run"
        fi
}

it_main "$@"
