#!/bin/bash
# cordon integration tests for what the gate checks inside allowed connections and for the
# credential broker (net/relay.c, net/hello.c, net/broker.c): every allowed connection's first
# flight must be a TLS ClientHello naming the rule's host; credential grants are validated
# strictly, their secrets read from a 0600 file or cordon's environment, and the sandbox sees
# only a placeholder. Runs on tests/integration/egress.sh's fixture (sourced: the namespace
# with the HTTPS upstream for upstream.cordon.test, the test CA, the hosts file); run like it:
#
#   CORDON=/path/to/cordon HELPERS=/path/to/build/tests/helpers TESTS_SRCDIR=/path/to/tests \
#       bash tests/integration/broker.sh [REGEX...]
#
# Needs root (network namespaces), ip(8), python3 and openssl on the host; skips otherwise.
if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

BROKER_SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
EG_LIBRARY=1
# shellcheck source=tests/integration/egress.sh
. "$(dirname "$BROKER_SCRIPT")/egress.sh"
IT_SCRIPT=$BROKER_SCRIPT
unset EG_LIBRARY

# cred_policy FILE HOSTS_FILE GRANT_JSON: the egress fixture's policy with one grant
cred_policy() {
        local f=$1 h=$2 grant=$3
        cat >"$f" <<EOF
{"networkPolicy": {"mode": "allow-listed",
                   "rules": [{"host": "$UPSTREAM", "port": 443, "reason": "broker tests"}],
                   "testing": {"hostsFile": "$h", "allowPrivateNetworks": ["10.213.$EG_NET.0/30"]}},
 "credentials": [$grant]}
EOF
}

# a secret for the test: random, in a 0600 file of the test's own
make_secret() {
        SECRET="sk-test-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
        SECRET_FILE="$IT_TMP/secret"
        (umask 077 && printf '%s\n' "$SECRET" >"$SECRET_FILE")
}

# =============================================================================================
# the first flight

it_test sni_other_name_refused
sni_other_name_refused() {
        egress_setup
        need_in_sandbox openssl
        # the connection is to the listed name's address, but the ClientHello asks for another
        # host (domain fronting): closed before anything goes upstream
        crun "${RUNARGS[@]}" -- sh -c "openssl s_client -connect $UPSTREAM:443 -servername front.cordon.test \
                -CAfile /ca/ca.pem </dev/null 2>&1"
        expect_true "s_client must fail (exit $RC)" test "$RC" != 0
        expect_contains "$OUT" "handshake has read 0 bytes" "nothing came back from upstream"
        expect_audit "$AUDIT" "the fronted name" reason=sni_mismatch host=$UPSTREAM sni=front.cordon.test
        # and without a server name at all
        crun "${RUNARGS[@]}" -- sh -c "openssl s_client -connect $UPSTREAM:443 -noservername \
                -CAfile /ca/ca.pem </dev/null 2>&1"
        expect_true "s_client without SNI must fail (exit $RC)" test "$RC" != 0
        expect_eq 2 "$(audit_count "$AUDIT" reason=sni_mismatch)" "sni_mismatch records"
}

it_test plain_http_refused
plain_http_refused() {
        egress_setup
        # plain HTTP on the allowed host's port: no TLS, no answer from upstream
        crun "${RUNARGS[@]}" -- python3 -c '
import socket, sys
s = socket.create_connection((sys.argv[1], 443), timeout=10)
s.sendall(b"GET /token HTTP/1.1\r\nHost: " + sys.argv[1].encode() + b"\r\n\r\n")
try:
    d = s.recv(4096)
    print("got", len(d))
except OSError as e:
    print("error", e.errno)
' "$UPSTREAM"
        expect_rc 0 "the client"
        expect_match "$OUT" '^(got 0|error 104)$' "closed without an answer"
        expect_audit "$AUDIT" "plain HTTP" reason=not_tls host=$UPSTREAM
}

it_test hello_two_names_and_split
hello_two_names_and_split() {
        egress_setup
        # a ClientHello with two host names (the listed one first), then a good one sent in
        # three segments with pauses between: the first is refused, the second reaches upstream
        crun "${RUNARGS[@]}" --bind "$TESTS_SRCDIR/fuzz/corpus/hello:/hello:ro" -- python3 -c '
import socket, ssl, sys, time
name = sys.argv[1]
s = socket.create_connection((name, 443), timeout=10)
s.sendall(open("/hello/two-names", "rb").read())
try:
    print("two_names", len(s.recv(4096)))
except OSError as e:
    print("two_names error", e.errno)
ctx = ssl.create_default_context(cafile="/ca/ca.pem")
inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
t = ctx.wrap_bio(inc, out, server_hostname=name)
try:
    t.do_handshake()
except ssl.SSLWantReadError:
    pass
hello = out.read()
s = socket.create_connection((name, 443), timeout=10)
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
for part in (hello[:3], hello[3:70], hello[70:]):
    s.sendall(part)
    time.sleep(0.2)
d = s.recv(5)
print("split first_byte", d[:1].hex())
' "$UPSTREAM"
        expect_rc 0 "the client"
        expect_match "$(field two_names)" '^(0|error 104)$' "two server names: closed"
        expect_eq 16 "$(field 'split first_byte')" "a split ClientHello: the server's handshake comes back"
        expect_audit "$AUDIT" "two server names" reason=sni_mismatch host=$UPSTREAM
        expect_eq 1 "$(audit_count "$AUDIT" reason=sni_mismatch)" "sni_mismatch records"
}

it_test silent_client_times_out
silent_client_times_out() {
        egress_setup
        # connects and never sends: the relay gives up on its own (10 s), closing the connection
        crun "${RUNARGS[@]}" -- python3 -c '
import socket, sys, time
s = socket.create_connection((sys.argv[1], 443), timeout=30)
t = time.time()
try:
    d = s.recv(1)
    print("got", len(d))
except OSError as e:
    print("error", e.errno)
print("waited", int(time.time() - t))
' "$UPSTREAM"
        expect_rc 0 "the client"
        expect_match "$(field got)$(field error)" '^(0|104)$' "closed by the gate"
        expect_true "closed after the hello timeout, not at once ($(field waited) s)" test "$(field waited)" -ge 5
        expect_audit "$AUDIT" "the silent client" reason=not_tls host=$UPSTREAM
}

# =============================================================================================
# grants: the policy, the sources, the placeholder

it_test grant_policy_errors
grant_policy_errors() {
        egress_setup
        make_secret
        local p="$IT_TMP/bad.json" g
        local src="\"source\": {\"file\": \"$SECRET_FILE\"}, \"reason\": \"tests\""
        for g in \
                "{\"env\": \"T\", \"host\": \"other.cordon.test\", $src}|credentials[0].host: other.cordon.test:443 is not listed" \
                "{\"env\": \"T\", \"host\": \"$UPSTREAM\", \"methods\": [\"get\"], $src}|credentials[0].methods[0]: expected an HTTP method" \
                "{\"env\": \"T\", \"host\": \"$UPSTREAM\", \"format\": \"Bearer\", $src}|credentials[0].format: must hold \"{}\"" \
                "{\"env\": \"T\", \"host\": \"$UPSTREAM\", \"header\": \"Host\", $src}|credentials[0].header: \"Host\" frames" \
                "{\"env\": \"T\", \"host\": \"$UPSTREAM\", \"pathPrefix\": \"repos\", $src}|credentials[0].pathPrefix: expected a request path" \
                "{\"env\": \"T\", \"host\": \"$UPSTREAM\", \"source\": {\"file\": \"$SECRET_FILE\", \"env\": \"X\"}, \"reason\": \"r\"}|credentials[0].source: expected exactly one" \
                "{\"env\": \"T\", \"host\": \"$UPSTREAM\", \"reason\": \"r\"}|credentials[0].source: required key is missing" \
                "{\"env\": \"1T\", \"host\": \"$UPSTREAM\", $src}|credentials[0].env: expected a variable name" \
                "{\"env\": \"T\", \"host\": \"$UPSTREAM\", \"expiresAt\": \"2026-13-01T00:00:00Z\", $src}|credentials[0].expiresAt:" \
                "{\"env\": \"T\", \"host\": \"$UPSTREAM\", \"scope\": 1, $src}|credentials[0].scope: unknown key"; do
                cred_policy "$p" "$HOSTS" "${g%%|*}"
                crun --policy "$p" -- true
                expect_rc 2 "policy with ${g%%|*}"
                expect_contains "$ERR" "${g#*|}" "the error names the key"
        done
        # a grant that outlives the sandbox's own expiry
        cat >"$p" <<EOF
{"networkPolicy": {"mode": "allow-listed", "rules": [{"host": "$UPSTREAM", "port": 443, "reason": "r"}]},
 "expiresAt": "2099-01-01T00:00:00Z",
 "credentials": [{"env": "T", "host": "$UPSTREAM", "expiresAt": "2099-06-01T00:00:00Z", $src}]}
EOF
        crun --policy "$p" -- true
        expect_rc 2 "a grant later than the sandbox"
        expect_contains "$ERR" "credentials[0].expiresAt: is later than the sandbox's own expiresAt" "the message"
}

it_test grant_sources
grant_sources() {
        egress_setup
        make_secret
        local p="$IT_TMP/grant.json"
        # group- or world-readable: refused, naming the file
        chmod 0644 "$SECRET_FILE"
        cred_policy "$p" "$HOSTS" "{\"env\": \"API_TOKEN\", \"host\": \"$UPSTREAM\",
                \"source\": {\"file\": \"$SECRET_FILE\"}, \"reason\": \"tests\"}"
        crun --policy "$p" -- true
        expect_rc 2 "a world-readable secret file"
        expect_contains "$ERR" "$SECRET_FILE is group- or world-accessible" "the message names the file"
        # missing file
        chmod 0600 "$SECRET_FILE"
        cred_policy "$p" "$HOSTS" "{\"env\": \"API_TOKEN\", \"host\": \"$UPSTREAM\",
                \"source\": {\"file\": \"$IT_TMP/nonexistent\"}, \"reason\": \"tests\"}"
        crun --policy "$p" -- true
        expect_rc 2 "a missing secret file"
        expect_contains "$ERR" "cannot open $IT_TMP/nonexistent" "the message names the file"
        # a variable of cordon's environment that is not set
        cred_policy "$p" "$HOSTS" "{\"env\": \"API_TOKEN\", \"host\": \"$UPSTREAM\",
                \"source\": {\"env\": \"CORDON_TEST_NO_SUCH_SECRET\"}, \"reason\": \"tests\"}"
        crun --policy "$p" -- true
        expect_rc 2 "an unset source variable"
        expect_contains "$ERR" "CORDON_TEST_NO_SUCH_SECRET is not set" "the message names the variable"
        expect_not_contains "$ERR" "$SECRET" "no message holds the secret"
}

it_test placeholder_not_secret
placeholder_not_secret() {
        egress_setup
        make_secret
        local p="$IT_TMP/grant.json" src
        for src in "{\"file\": \"$SECRET_FILE\"}" "{\"env\": \"CORDON_TEST_SECRET\"}"; do
                cred_policy "$p" "$HOSTS" "{\"env\": \"API_TOKEN\", \"host\": \"$UPSTREAM\",
                        \"source\": $src, \"reason\": \"tests\"}"
                OUT=$(CORDON_TEST_SECRET=$SECRET timeout 30 "$CORDON" run --policy "$p" --audit "$AUDIT" -- sh -c '
                        echo "token $API_TOKEN"
                        echo "source ${CORDON_TEST_SECRET:-unset}"
                        cat /proc/self/environ /proc/1/environ 2>/dev/null | tr "\0" "\n"' 2>"$IT_TMP/err")
                RC=$?
                ERR=$(cat "$IT_TMP/err")
                expect_rc 0 "cordon run with a grant from $src"
                expect_match "$(field token)" '^cordon_[0-9a-f]{40}$' "the placeholder ($src)"
                expect_eq unset "$(field source)" "cordon's own source variable is not passed on"
                expect_not_contains "$OUT$ERR" "$SECRET" "the sandbox's environment and cordon's messages"
        done
        expect_not_contains "$(cat "$AUDIT" 2>/dev/null)" "$SECRET" "the audit log"
}

# =============================================================================================
# the broker: TLS terminated for a granted host, the secret swapped in on matching requests

# grant_setup [EXTRA [TESTING]]: a policy whose grant API_TOKEN (GET and POST under /echo, EXTRA
# keys appended) is for the upstream, its secret in a 0600 file, and (unless TESTING says
# otherwise) the test CA trusted upstream
grant_setup() {
        egress_setup
        need_in_sandbox curl
        make_secret
        local extra=${1:-} ca=${2-"\"upstreamCaFile\": \"$EG_DIR/ca/ca.pem\", "}
        cat >"$POLICY" <<EOF
{"networkPolicy": {"mode": "allow-listed",
                   "rules": [{"host": "$UPSTREAM", "port": 443, "reason": "broker tests"}],
                   "testing": {${ca}"hostsFile": "$HOSTS", "allowPrivateNetworks": ["10.213.$EG_NET.0/30"]}},
 "credentials": [{"env": "API_TOKEN", "host": "$UPSTREAM", "methods": ["GET", "POST"], "pathPrefix": "/echo",
                  "source": {"file": "$SECRET_FILE"}, "reason": "broker tests"$extra}]}
EOF
        RUNARGS=(--policy "$POLICY" --audit "$AUDIT")
}

# how many requests reached the upstream with the secret in their Authorization header
arrivals() {
        cat "$EG_DIR/log/echo.log" 2>/dev/null | grep -c -F "auth=Bearer $SECRET body"
}

# the secret in nothing the sandbox or a person saw
expect_no_secret() {
        expect_not_contains "$OUT" "$SECRET" "the replies and output"
        expect_not_contains "$ERR" "$SECRET" "cordon's messages"
        expect_not_contains "$(cat "$AUDIT" 2>/dev/null)" "$SECRET" "the audit log"
}

it_test broker_swaps_only_matching
broker_swaps_only_matching() {
        grant_setup
        local u="https://$UPSTREAM"
        crun "${RUNARGS[@]}" -- sh -c '
                h="Authorization: Bearer $API_TOKEN"
                echo "ok $(curl -sS -H "$h" '"$u"'/echo/a | head -n 1)"
                echo "method $(curl -sS -X DELETE -H "$h" '"$u"'/echo/b)"
                echo "path $(curl -sS -H "$h" '"$u"'/other)"
                echo "dots $(curl -sS --path-as-is -H "$h" '"$u"'/echo/../other)"
                echo "param $(curl -sS --path-as-is -H "$h" '"$u"'/echo/..\;/other)"
                echo "noauth $(curl -sS -o /dev/null -w "%{http_code}" '"$u"'/echo/noauth)"
                echo "status $(curl -sS -o /dev/null -w "%{http_code}" -X DELETE -H "$h" '"$u"'/echo/b)"'
        expect_rc 0 "the clients"
        expect_eq "GET /echo/a" "$(field ok)" "a matching GET is answered by the upstream"
        expect_eq "{\"error\":\"egress_blocked\",\"reason\":\"credential_method_mismatch\",\"host\":\"$UPSTREAM\"}" \
                "$(field method)" "a method the grant does not list"
        expect_contains "$(field path)" '"reason":"credential_path_mismatch"' "a path outside the prefix"
        expect_contains "$(field dots)" '"reason":"credential_path_mismatch"' "a path leaving the prefix by .."
        expect_contains "$(field param)" '"reason":"credential_path_mismatch"' "a path leaving it by ..; (a parameter)"
        expect_eq 200 "$(field noauth)" "a request without the placeholder goes through"
        expect_eq 403 "$(field status)" "the refusal's status"
        expect_eq 1 "$(arrivals)" "requests that reached the upstream with the secret"
        expect_audit "$AUDIT" "the use" reason=credential_used grant=API_TOKEN method=GET path=/echo/a status=200
        expect_audit "$AUDIT" "the method" reason=credential_method_mismatch method=DELETE path=/echo/b
        expect_audit "$AUDIT" "the path" reason=credential_path_mismatch path=/other
        expect_eq 3 "$(audit_count "$AUDIT" reason=credential_path_mismatch)" "path refusals"
        expect_no_secret
}

# A use of the secret the audit log could not record must not happen: once a sandbox's audit
# share is used up (CORDON_TEST_AUDIT_SHARE makes it small), a connection made before goes on,
# but its next request with the placeholder is refused by the broker (audit_full), and nothing
# reaches the upstream with the secret unrecorded.
it_test broker_refuses_once_the_audit_is_full
broker_refuses_once_the_audit_is_full() {
        grant_setup
        need_root
        local job
        job=$(scratch_dir job)
        "$(host_python)" - "$POLICY" "$job" "$EG_DIR/ca" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
p["filesystem"] = {"binds": [{"source": sys.argv[2], "target": "/job"}, {"source": sys.argv[3], "target": "/ca", "readOnly": True}]}
json.dump(p, open(sys.argv[1], "w"))
PY
        cat >"$job/c.py" <<EOF
import http.client, os, socket, time
h = {"Authorization": "Bearer " + os.environ["API_TOKEN"], "X-Keep-Alive": "1"}
c = http.client.HTTPSConnection("$UPSTREAM", timeout=10)
def get(path):
    c.request("GET", path, headers=h)
    r = c.getresponse()
    return "%d %s" % (r.status, r.read().decode(errors="replace").splitlines()[0])
print("one", get("/echo/one"), flush=True)
for i in range(150):
    s = socket.socket()
    try:
        s.connect(("203.0.113.9", 443))
    except OSError:
        pass
    s.close()
for i in range(200):
    if os.path.exists("/job/go"):
        break
    time.sleep(0.05)
print("two", get("/echo/two"), flush=True)
EOF
        CORDON_TEST_AUDIT_SHARE=40000 new_sandbox --policy "$POLICY"
        sb exec "$ID" --detach -- python3 /job/c.py
        local run=$OUT
        wait_until 15 bash -c "'$CORDON' sandbox events $ID --json | grep -q '\"type\":\"audit_limit\"'" ||
                fail "no audit_limit event"
        touch "$job/go"
        sb events "$ID" --run "$run" --follow --json
        printf '%s\n' "$OUT" >"$IT_TMP/events"
        expect_contains "$OUT" '"text":"one 200 GET /echo/one"' "a request before the audit share was full"
        expect_contains "$OUT" '"text":"two 403 {\"error\":\"egress_blocked\",\"reason\":\"audit_full\"' \
                "the same connection's request after it: refused by the broker"
        expect_eq 1 "$(arrivals)" "requests that reached the upstream with the secret"
        sb events "$ID" --json
        expect_eq 1 "$(printf '%s\n' "$OUT" | grep -c '"reason":"credential_used"')" "the use recorded"
        expect_no_secret
}

it_test broker_real_clients
broker_real_clients() {
        grant_setup
        need_in_sandbox node
        cat >"$IT_TMP/clients.sh" <<EOF
python3 - <<'PY'
import http.client, os, urllib.request
h = {"Authorization": "Bearer " + os.environ["API_TOKEN"]}
r = urllib.request.urlopen(urllib.request.Request("https://$UPSTREAM/echo/urllib", headers=h), timeout=10)
print("urllib", r.status)
c = http.client.HTTPSConnection("$UPSTREAM", timeout=10)
c.request("POST", "/echo/http.client", body=b"payload", headers=h)
print("http.client", c.getresponse().status)
PY
node -e '
require("https").get({host: "$UPSTREAM", path: "/echo/node", headers: {Authorization: "Bearer " + process.env.API_TOKEN}},
                     (r) => { console.log("node", r.statusCode); r.resume(); })
  .on("error", (e) => console.log("node", e.message));'
printf 'GET /echo/openssl HTTP/1.1\r\nHost: $UPSTREAM\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n' "\$API_TOKEN" |
        openssl s_client -quiet -verify_return_error -connect $UPSTREAM:443 -servername $UPSTREAM 2>/dev/null |
        head -n 1 | sed 's/^/openssl /'
EOF
        crun "${RUNARGS[@]}" --bind "$IT_TMP/clients.sh:/clients.sh:ro" -- sh /clients.sh
        expect_rc 0 "the clients"
        expect_eq 200 "$(field urllib)" "python urllib (the sandbox's CA through SSL_CERT_FILE)"
        expect_eq 200 "$(field http.client)" "python http.client POST"
        expect_eq 200 "$(field node)" "node https (NODE_EXTRA_CA_CERTS)"
        expect_match "$(field openssl)" '^HTTP/1\.[01] 200' "openssl s_client, verifying"
        expect_eq 4 "$(arrivals)" "requests that reached the upstream with the secret"
        expect_audit "$AUDIT" "the POST" reason=credential_used method=POST path=/echo/http.client status=200
        expect_no_secret
}

it_test broker_placeholder_misuse
broker_placeholder_misuse() {
        grant_setup
        local u="https://$UPSTREAM"
        crun "${RUNARGS[@]}" -- sh -c '
                echo "query $(curl -sS "'"$u"'/echo/?t=$API_TOKEN")"
                echo "other_header $(curl -sS -H "X-Token: $API_TOKEN" '"$u"'/echo/x)"
                echo "format $(curl -sS -H "Authorization: token $API_TOKEN" '"$u"'/echo/x)"
                echo "host $(curl -sS -H "Host: other.cordon.test" -H "Authorization: Bearer $API_TOKEN" '"$u"'/echo/x)"
                echo "body $(curl -sS --max-time 10 -H "Authorization: Bearer $API_TOKEN" --data "x=$API_TOKEN" '"$u"'/echo/body)"
                { head -c 300000 /dev/zero | tr "\0" a; echo "$API_TOKEN"; } >/tmp/big
                curl -sS --max-time 10 -H "Authorization: Bearer $API_TOKEN" -H "Expect:" --data-binary @/tmp/big \
                        '"$u"'/echo/big >/dev/null 2>&1
                echo "big_rc $?"'
        expect_rc 0 "the clients"
        expect_contains "$(field query)" '"reason":"credential_misuse"' "the placeholder in the query"
        expect_contains "$(field other_header)" '"reason":"credential_misuse"' "the placeholder in another header"
        expect_contains "$(field format)" '"reason":"credential_misuse"' "the placeholder in another format"
        expect_contains "$(field host)" '"reason":"credential_target_mismatch"' "a request for another host"
        expect_contains "$(field body)" '"reason":"credential_misuse"' "the placeholder in the body (refused, nothing sent)"
        expect_true "the placeholder past the body's first 64 KiB ends the connection (curl exit $(field big_rc))" \
                test "$(field big_rc)" != 0
        expect_eq 5 "$(audit_count "$AUDIT" reason=credential_misuse)" "credential_misuse records"
        expect_eq 0 "$(cat "$EG_DIR/log/echo.log" 2>/dev/null | grep -c -F "POST /echo/body ")" \
                "the request with the placeholder in its first bytes never reached the upstream"
        # the big body's head (and first 64 KiB) went upstream with the secret before the rest
        # showed the placeholder: one use, recorded without a status (no response came)
        expect_eq 1 "$(audit_count "$AUDIT" reason=credential_used path=/echo/big status=None)" \
                "credential_used records"
        expect_eq 1 "$(audit_count "$AUDIT" reason=credential_used)" "credential_used records in all"
        expect_no_secret
}

it_test broker_chunked_upload
broker_chunked_upload() {
        grant_setup
        # a body with no length (curl -T - reads stdin): chunked, a chunk line before every piece,
        # which the broker re-frames and sends upstream in whole records; the upstream decodes it
        head -c 200000 /dev/urandom | od -An -tx1 | tr -d ' \n' | head -c 300000 >"$IT_TMP/up"
        local sha
        sha=$(sha256sum <"$IT_TMP/up" | cut -c1-64)
        crun "${RUNARGS[@]}" --bind "$IT_TMP/up:/up:ro" -- sh -c '
                curl -sS --max-time 20 -H "Authorization: Bearer $API_TOKEN" -H "Expect:" -X POST -T - \
                        https://'"$UPSTREAM"'/echo/chunked </up >/tmp/reply
                echo "rc $?"
                echo "reply $(sed -n "s/^body \([0-9]*\) .*/\1/p" /tmp/reply | head -n 1)"
                echo "te $(grep -ci "^transfer-encoding: chunked" /tmp/reply)"'
        expect_rc 0 "the client"
        expect_eq 0 "$(field rc)" "curl's upload"
        expect_eq 1 "$(field te)" "the upstream was sent a chunked body"
        expect_eq 300000 "$(field reply)" "the body's length as the upstream decoded it"
        expect_eq 1 "$(cat "$EG_DIR/log/echo.log" 2>/dev/null |
                grep -c -F "POST /echo/chunked auth=Bearer $SECRET body=300000 sha=$sha")" \
                "the body arrived whole, with the secret in the header"
        expect_no_secret
}

it_test broker_expired_grant
broker_expired_grant() {
        grant_setup ', "expiresAt": "2020-01-01T00:00:00Z"'
        crun "${RUNARGS[@]}" -- sh -c 'curl -sS -H "Authorization: Bearer $API_TOKEN" https://'"$UPSTREAM"'/echo/x'
        expect_contains "$OUT" '"reason":"credential_expired"' "an expired grant"
        expect_audit "$AUDIT" "the expiry" reason=credential_expired
        expect_eq 0 "$(arrivals)" "requests that reached the upstream with the secret"
        # a client that does not trust the sandbox's CA ends the handshake: audited, nothing sent
        [ -r /usr/share/ca-certificates/mozilla/ISRG_Root_X1.crt ] || return 0
        crun "${RUNARGS[@]}" -- sh -c 'printf "GET /echo/distrust HTTP/1.1\r\nHost: '"$UPSTREAM"'\r\nAuthorization: Bearer %s\r\n\r\n" "$API_TOKEN" |
                openssl s_client -quiet -verify_return_error -no-CApath -no-CAstore \
                -CAfile /usr/share/ca-certificates/mozilla/ISRG_Root_X1.crt -connect '"$UPSTREAM"':443 \
                -servername '"$UPSTREAM"' 2>&1; echo "rc $?"'
        expect_true "s_client fails to verify (exit $(field rc))" test "$(field rc)" != 0
        expect_audit "$AUDIT" "the client's handshake" reason=not_tls "stage=client handshake"
        expect_eq 0 "$(cat "$EG_DIR/log/echo.log" 2>/dev/null | grep -c -F /echo/distrust)" "the request never reached the upstream"
}

it_test broker_upstream_unverified
broker_upstream_unverified() {
        # without upstreamCaFile, the upstream's certificate (from the test CA) is not trusted
        grant_setup "" ""
        crun "${RUNARGS[@]}" -- sh -c 'curl -sS -w "\nstatus %{http_code}\n" -H "Authorization: Bearer $API_TOKEN" https://'"$UPSTREAM"'/echo/x'
        expect_contains "$OUT" '"reason":"upstream_unverified"' "the answer"
        expect_eq 502 "$(field status)" "the status"
        expect_audit "$AUDIT" "the failed verification" reason=upstream_unverified host=$UPSTREAM
        expect_eq 0 "$(arrivals)" "requests that reached the upstream with the secret"
}

it_test broker_bad_input
broker_bad_input() {
        grant_setup
        cat >"$IT_TMP/bad.py" <<EOF
import os, re, socket, ssl, time
name = "$UPSTREAM"
auth = "Authorization: Bearer " + os.environ["API_TOKEN"]
ctx = ssl.create_default_context()
def conn():
    return ctx.wrap_socket(socket.create_connection((name, 443), timeout=15), server_hostname=name)
def reply(s):
    d = b""
    while True:
        try:
            x = s.recv(65536)
        except (OSError, ssl.SSLError):
            break
        if not x:
            break
        d += x
    return d.decode("latin-1")
def one(label, req, split=None):
    s = conn()
    if split:
        s.sendall(req[:split]); time.sleep(0.3); s.sendall(req[split:])
    else:
        s.sendall(req)
    r = reply(s)
    print(label, " ".join(re.findall(r"HTTP/1\.[01] ([0-9]{3}) ", r)))
head = "GET /echo/%s HTTP/1.1\r\nHost: " + name + "\r\n" + auth + "\r\nConnection: close\r\n"
one("oversized", ((head % "big") + "X-Big: " + "a" * 40000 + "\r\n\r\n").encode())
one("long_url", ((head % ("u" * 40000)) + "\r\n").encode())
one("bad_line", ("GET /echo/bad HTTP/1.1 extra\r\nHost: " + name + "\r\n" + auth + "\r\n\r\n").encode())
one("bad_header", ("GET /echo/badh HTTP/1.1\r\nHost: " + name + "\r\n" + auth + "\r\nNo colon here\r\n\r\n").encode())
one("te_cl", ("POST /echo/tecl HTTP/1.1\r\nHost: " + name + "\r\n" + auth +
              "\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n").encode())
one("te_gzip", ("POST /echo/tegz HTTP/1.1\r\nHost: " + name + "\r\n" + auth +
                "\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n").encode())
one("te_space", ("POST /echo/tesp HTTP/1.1\r\nHost: " + name + "\r\n" + auth +
                 "\r\nTransfer-Encoding : chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n").encode())
one("http09", ("GET /echo/h09\r\nHost: " + name + "\r\n" + auth + "\r\n\r\n").encode())
one("split", ((head % "split") + "\r\n").encode(), split=40)
p = ("GET /echo/p1 HTTP/1.1\r\nHost: " + name + "\r\n" + auth + "\r\n\r\n" +
     "DELETE /echo/p2 HTTP/1.1\r\nHost: " + name + "\r\n" + auth + "\r\n\r\n" +
     "GET /echo/p3 HTTP/1.1\r\nHost: " + name + "\r\n" + auth + "\r\n\r\n")
one("pipelined", p.encode())
EOF
        crun "${RUNARGS[@]}" --bind "$IT_TMP/bad.py:/bad.py:ro" -- python3 /bad.py
        expect_rc 0 "the client"
        expect_eq 431 "$(field oversized)" "an oversized header block"
        expect_eq 431 "$(field long_url)" "an oversized request line"
        expect_eq 400 "$(field bad_line)" "a malformed request line"
        expect_eq 400 "$(field bad_header)" "a malformed header line"
        expect_eq 400 "$(field te_cl)" "Transfer-Encoding with Content-Length"
        expect_eq 400 "$(field te_gzip)" "a Transfer-Encoding that is not just chunked"
        expect_eq 400 "$(field te_space)" "a header name that is not a token (Transfer-Encoding :)"
        expect_eq 400 "$(field http09)" "a request line without a version (HTTP/0.9)"
        expect_eq 200 "$(field split)" "a head split across TLS records"
        expect_eq "200 403" "$(field pipelined)" "pipelined: the first answered, the second refused, the third never sent"
        expect_eq 2 "$(arrivals)" "requests that reached the upstream with the secret (split, p1)"
        expect_eq 0 "$(grep -c -F 'GET /echo/p3 ' "$EG_DIR/log/echo.log")" "the request after the refused one"
        expect_audit "$AUDIT" "the oversized head" reason=http_refused status=431
        expect_no_secret
}

it_test broker_response_scanned
broker_response_scanned() {
        grant_setup
        local leak="leak-$RANDOM$RANDOM"
        printf 'before %s after\n' "$SECRET" >"$EG_DIR/www/$leak"
        chmod 0644 "$EG_DIR/www/$leak"
        at_exit "rm -f '$EG_DIR/www/$leak'"
        crun "${RUNARGS[@]}" --stats "$IT_TMP/stats.json" -- sh -c '
                curl -sS https://'"$UPSTREAM"'/'"$leak"'
                for k in 1 5 13; do curl -sS https://'"$UPSTREAM"'/chunked/'"$leak"'?cut=$k | sed "s/^before/chunked$k/"; done
                curl -sS -o /dev/null -H "Authorization: Bearer $API_TOKEN" https://'"$UPSTREAM"'/echo/used
                echo "env"; env; echo "environ"; tr "\0" "\n" </proc/self/environ; tr "\0" "\n" </proc/1/environ
                for d in /tmp /root /run /var/tmp "$HOME"; do find "$d" -xdev -type f -size -1M -exec cat {} + 2>/dev/null; done'
        expect_rc 0 "the sandbox"
        local mask
        mask=$(printf '%s\n' "$OUT" | sed -n 's/^before \(.*\) after$/\1/p')
        expect_eq ${#SECRET} ${#mask} "the secret's place in the reply keeps its length"
        expect_match "$mask" '^cordon_[0-9a-f]+$' "and shows the placeholder"
        # the same file in chunks of 1, 5 and 13 bytes: the chunk lines split the secret, and
        # the client, which reads the data without them, must still see only the placeholder
        local k
        for k in 1 5 13; do
                expect_eq "chunked$k $mask after" "$(printf '%s\n' "$OUT" | grep "^chunked$k ")" \
                        "a secret split by chunk lines every $k bytes is replaced too"
        done
        expect_eq 1 "$(arrivals)" "the use reached the upstream"
        expect_no_secret
        expect_not_contains "$(cat "$IT_TMP/stats.json" 2>/dev/null)" "$SECRET" "--stats"
}

it_test broker_git_clone_push
broker_git_clone_push() {
        egress_setup
        make_secret
        command -v git >/dev/null 2>&1 || skip "git is not installed"
        need_in_sandbox git
        # a bare repository the upstream serves (git http-backend), with one commit
        local repo="broker-$RANDOM$RANDOM"
        mkdir -p "$EG_DIR/git" && chmod 0755 "$EG_DIR/git"
        at_exit "rm -rf '$EG_DIR/git/$repo.git'"
        git init -q --bare "$EG_DIR/git/$repo.git" && git -C "$EG_DIR/git/$repo.git" config http.receivepack true &&
                git -C "$EG_DIR/git/$repo.git" symbolic-ref HEAD refs/heads/main &&
                (cd "$IT_TMP" && git init -q seed && cd seed && echo one >f && git add f &&
                        git -c user.name=t -c user.email=t@t commit -qm one &&
                        git push -q "$EG_DIR/git/$repo.git" HEAD:refs/heads/main) || fail "cannot make the repository"
        cat >"$POLICY" <<EOF
{"networkPolicy": {"mode": "allow-listed",
                   "rules": [{"host": "$UPSTREAM", "port": 443, "reason": "broker tests"}],
                   "testing": {"upstreamCaFile": "$EG_DIR/ca/ca.pem", "hostsFile": "$HOSTS",
                               "allowPrivateNetworks": ["10.213.$EG_NET.0/30"]}},
 "credentials": [{"env": "GIT_TOKEN", "host": "$UPSTREAM", "methods": ["GET", "POST"], "pathPrefix": "/git/$repo.git/",
                  "source": {"file": "$SECRET_FILE"}, "reason": "clone and push"}]}
EOF
        crun --policy "$POLICY" --audit "$AUDIT" -- sh -c '
                cd /tmp && git -c http.extraHeader="Authorization: Bearer $GIT_TOKEN" clone -q https://'"$UPSTREAM"'/git/'"$repo"'.git w &&
                cd w && echo two >>f && git -c user.name=t -c user.email=t@t commit -qam two &&
                git -c http.extraHeader="Authorization: Bearer $GIT_TOKEN" push -q origin HEAD:main && echo pushed'
        expect_rc 0 "git clone and push through the broker"
        expect_contains "$OUT" pushed "the push"
        expect_eq "one
two" "$(git -C "$EG_DIR/git/$repo.git" show main:f 2>&1)" "the upstream repository has the pushed commit"
        expect_true "git's requests reached the upstream with the secret ($(arrivals))" test "$(arrivals)" -ge 4
        expect_audit "$AUDIT" "the push" reason=credential_used method=POST "path=/git/$repo.git/git-receive-pack" \
                status=200
        expect_no_secret
}

it_test exit_with_open_relays
exit_with_open_relays() {
        grant_setup
        local t0 t1
        t0=$(date +%s%N)
        crun "${RUNARGS[@]}" -- python3 -c '
import socket, ssl, sys, time
n = sys.argv[1]
a = socket.create_connection((n, 443))                     # silent: the relay waits for a hello
b = ssl.create_default_context().wrap_socket(socket.create_connection((n, 443)), server_hostname=n)
b.sendall(b"GET /echo/x HTTP/1.1\r\nHost: " + n.encode() + b"\r\n")   # half a head
time.sleep(1)
print("leaving")
' "$UPSTREAM"
        t1=$(date +%s%N)
        expect_rc 0 "the sandbox"
        expect_true "cordon ended $(((t1 - t0) / 1000000)) ms after starting (want < 4500: a relay that ignored the end would hold it 5 s)" test $(((t1 - t0) / 1000000)) -lt 4500
}

it_test secret_not_in_sandbox_memory
secret_not_in_sandbox_memory() {
        grant_setup
        local ready="$IT_TMP/ready"
        : >"$IT_TMP/marker"
        chmod 0666 "$IT_TMP/marker"
        # the command uses the grant once, then waits; meanwhile the test reads the memory of every
        # process under the sentry (init, the command) for the secret's bytes, and, to show the
        # search works, the sentry's own, which holds it
        bg_cordon "$IT_TMP/bg.out" "${RUNARGS[@]}" --bind "$IT_TMP/marker:/marker" -- sh -c '
                curl -sS -o /dev/null -H "Authorization: Bearer $API_TOKEN" https://'"$UPSTREAM"'/echo/mem
                echo used >/marker
                sleep 20'
        wait_until 15 grep -q used "$IT_TMP/marker" || fail "the command did not use the grant"
        local out
        out=$("$(host_python)" - "$BG_CORDON" "$SECRET" <<'EOF'
import os, re, sys
sentry, secret = int(sys.argv[1]), sys.argv[2].encode()
def children(pid):
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                st = open("/proc/%s/stat" % p).read()
            except OSError:
                continue
            if int(st.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(p))
    return out
def hits(pid):
    n = 0
    try:
        maps = open("/proc/%d/maps" % pid).read().splitlines()
        mem = open("/proc/%d/mem" % pid, "rb", 0)
    except OSError as e:
        return "error %s" % e.errno
    for line in maps:
        a, perms = line.split()[:2]
        if not perms.startswith("r"):
            continue
        lo, hi = (int(x, 16) for x in a.split("-"))
        # a sanitizer build reserves terabytes of shadow memory: no secret
        # lives in a mapping that size, and reading it would never end
        if hi - lo > (1 << 30):
            continue
        try:
            mem.seek(lo)
            n += mem.read(hi - lo).count(secret)
        except (OSError, ValueError, OverflowError, MemoryError):
            pass
    return n
todo, seen = children(sentry), []
while todo:
    p = todo.pop()
    seen.append(p)
    todo += children(p)
print("sentry", hits(sentry))
print("sandbox", sum(h for h in (hits(p) for p in seen) if isinstance(h, int)), len(seen))
EOF
)
        it_log "$out"
        expect_match "$(printf '%s\n' "$out" | sed -n 's/^sentry //p')" '^[1-9][0-9]*$' \
                "the search finds the secret in the sentry's memory (where it is kept)"
        expect_match "$(printf '%s\n' "$out" | sed -n 's/^sandbox //p')" '^0 [1-9][0-9]*$' \
                "no process of the sandbox holds it (hits, processes searched)"
}

# =============================================================================================
# "ask" grants: each matching request waits for a person (sentry/approvals) before the secret
# goes in

# ask_sandbox TIMEOUT_MS: a sandbox whose grant asks (grant_setup's, "action": "ask"); sets ID
ask_sandbox() {
        grant_setup ', "action": "ask"'
        sed -i "s/^ \"credentials\"/ \"approvalTimeoutMs\": $1,\n \"credentials\"/" "$POLICY"
        new_sandbox --policy "$POLICY"
}

# pending_field INDEX KEY: a field of the sandbox's INDEXth pending request ("" when none)
pending_field() {
        timeout 10 "$CORDON" sandbox pending "$ID" --json 2>/dev/null | "$(host_python)" -c '
import json, sys
p = json.load(sys.stdin)
i, keys = int(sys.argv[1]), sys.argv[2].split(".")
v = p[i] if len(p) > i else {}
for k in keys:
    v = v.get(k, "") if isinstance(v, dict) else ""
print(v)' "$1" "$2" 2>/dev/null
}
has_pending() { [ -n "$(pending_field 0 request)" ]; }

# event_count TYPE KEY=VALUE...: the sandbox's events of TYPE with all these values (a.b reaches
# into an object)
event_count() {
        local type=$1
        shift
        timeout 10 "$CORDON" sandbox events "$ID" --json 2>/dev/null | "$(host_python)" -c '
import json, sys
t, conds, n = sys.argv[1], [c.split("=", 1) for c in sys.argv[2:]], 0
def get(e, k):
    for part in k.split("."):
        e = e.get(part) if isinstance(e, dict) else None
    return e
for line in sys.stdin:
    e = json.loads(line)
    n += e.get("type") == t and all(str(get(e, k)) == v for k, v in conds)
print(n)' "$type" "$@"
}

# ask_exec OUTFILE CURL_ARGS...: curl in the sandbox, in the background, with the placeholder;
# prints the body, then "status CODE"; sets BG
ask_exec() {
        local out=$1
        shift
        timeout -k 5 "$IT_CMD_TIMEOUT" "$CORDON" sandbox exec "$ID" -- sh -c \
                'curl -sS --max-time 60 -w "\nstatus %{http_code}\n" -H "Authorization: Bearer $API_TOKEN" "$@"' \
                sh "$@" >"$out" 2>&1 </dev/null &
        BG=$!
        at_exit "kill $BG"
}

it_test broker_ask_approve_deny
broker_ask_approve_deny() {
        ask_sandbox 60000
        local u="https://$UPSTREAM" req
        # approved: the request reaches the upstream with the secret; the person saw the grant,
        # the method, the target as sent and the body's first bytes
        ask_exec "$IT_TMP/a.out" --data "first-bytes-of-ask" "$u/echo/ask1?x=1"
        wait_until 20 has_pending || fail "the request did not ask"
        expect_eq credential "$(pending_field 0 capability)" "the pending request's capability"
        expect_eq "API_TOKEN POST https://$UPSTREAM/echo/ask1?x=1" "$(pending_field 0 target)" "its target"
        expect_eq "first-bytes-of-ask" "$(pending_field 0 summary.bytes)" "its first bytes"
        expect_eq 0 "$(arrivals)" "nothing reached the upstream with the secret before the answer"
        req=$(pending_field 0 request)
        sb approve "$ID" "$req"
        expect_rc 0 "sandbox approve"
        wait "$BG"
        OUT=$(cat "$IT_TMP/a.out")
        expect_eq "POST /echo/ask1?x=1" "$(printf '%s\n' "$OUT" | head -n 1)" "the approved request was answered by the upstream"
        expect_eq 200 "$(field status)" "its status"
        expect_eq 1 "$(arrivals)" "requests that reached the upstream with the secret"
        expect_eq 1 "$(event_count approval_decided capability=credential decision=approved request="$req")" \
                "the approval event"
        expect_eq 1 "$(event_count audit record.reason=credential_used record.path=/echo/ask1 record.status=200)" \
                "the use, audited"
        # denied: answered by the gate, nothing upstream
        ask_exec "$IT_TMP/d.out" "$u/echo/ask2"
        wait_until 20 has_pending || fail "the second request did not ask"
        expect_eq "API_TOKEN GET https://$UPSTREAM/echo/ask2" "$(pending_field 0 target)" "the second target"
        sb deny "$ID" "$(pending_field 0 request)"
        wait "$BG"
        OUT=$(cat "$IT_TMP/d.out")
        expect_contains "$OUT" "{\"error\":\"egress_blocked\",\"reason\":\"credential_denied\",\"host\":\"$UPSTREAM\"}" \
                "the denied request's answer"
        expect_eq 403 "$(field status)" "its status"
        expect_eq 1 "$(arrivals)" "still one request with the secret"
        expect_eq 1 "$(event_count audit record.reason=credential_denied record.path=/echo/ask2 record.status=403)" \
                "the refusal, audited"
        expect_eq 1 "$(event_count audit record.reason=approval_denied record.capability=credential)" \
                "the decision, audited"
        # a request that does not carry the placeholder, or that fails the grant's own checks,
        # asks nobody
        sb exec "$ID" -- sh -c 'curl -sS -o /dev/null -w "noauth %{http_code}\n" '"$u"'/echo/free
                curl -sS -H "Authorization: Bearer $API_TOKEN" -X DELETE '"$u"'/echo/x; echo'
        expect_eq 200 "$(field noauth)" "a request without the placeholder"
        expect_contains "$OUT" '"reason":"credential_method_mismatch"' "a method the grant does not list"
        expect_eq 2 "$(event_count approval_required capability=credential)" "questions asked in all"
        expect_eq "" "$(pending_field 0 request)" "nothing left pending"
        # --remember: the same request (grant, method, target) passes again without asking,
        # another target still asks
        ask_exec "$IT_TMP/r.out" "$u/echo/again"
        wait_until 20 has_pending || fail "the third request did not ask"
        sb approve "$ID" "$(pending_field 0 request)" --remember
        wait "$BG"
        sb exec "$ID" -- sh -c 'curl -sS -H "Authorization: Bearer $API_TOKEN" '"$u"'/echo/again | head -n 1'
        expect_eq "GET /echo/again" "$OUT" "a remembered request passes at once"
        expect_eq 3 "$(event_count approval_required capability=credential)" "no question for it"
        expect_eq 1 "$(event_count approval_decided capability=credential decision=remembered)" "recorded as remembered"
        expect_eq 3 "$(arrivals)" "requests that reached the upstream with the secret"
        OUT=$(timeout 10 "$CORDON" sandbox events "$ID" --json)
        expect_no_secret
}

it_test broker_ask_expires
broker_ask_expires() {
        ask_sandbox 1000
        sb exec "$ID" -- sh -c 'curl -sS -w "\nstatus %{http_code}\n" -H "Authorization: Bearer $API_TOKEN" https://'"$UPSTREAM"'/echo/late'
        expect_contains "$OUT" '"reason":"credential_approval_expired"' "an unanswered request's answer"
        expect_eq 403 "$(field status)" "its status"
        expect_eq 0 "$(arrivals)" "requests that reached the upstream with the secret"
        expect_eq 1 "$(event_count approval_decided capability=credential decision=expired decidedBy=timeout)" \
                "the expiry event"
        expect_eq 1 "$(event_count audit record.reason=credential_approval_expired record.path=/echo/late)" \
                "the refusal, audited"
        # `cordon run` with nobody to ask: refused at once, and said so
        grant_setup ', "action": "ask"'
        crun "${RUNARGS[@]}" -- sh -c 'curl -sS -H "Authorization: Bearer $API_TOKEN" https://'"$UPSTREAM"'/echo/run'
        expect_contains "$OUT" '"reason":"credential_denied"' "no approver: refused"
        expect_contains "$ERR" "needs a person's approval and nobody can be asked" "cordon run says why"
        expect_audit "$AUDIT" "the decision" reason=approval_denied capability=credential decidedBy=no-approver
        expect_audit "$AUDIT" "the refusal" reason=credential_denied path=/echo/run
        expect_eq 0 "$(arrivals)" "requests that reached the upstream with the secret"
        expect_no_secret
}

it_test broker_ask_terminal
broker_ask_terminal() {
        grant_setup ', "action": "ask"'
        # `cordon run --approve-interactive` on a pty: y for the first request, n for the second
        OUT=$("$(host_python)" - "$CORDON" "${RUNARGS[@]}" <<'EOF'
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], [sys.argv[1], "run", "--approve-interactive"] + sys.argv[2:] + ["--", "sh", "-c",
             'for p in tty1 tty2; do echo "$p $(curl -sS -o /dev/null -w "%{http_code}" '
             '-H "Authorization: Bearer $API_TOKEN" https://upstream.cordon.test/echo/$p)"; done'])
buf, answers, seen, deadline = b"", ["y", "n"], 0, time.time() + 40
while time.time() < deadline:
    if select.select([fd], [], [], 0.1)[0]:
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
print(buf.decode(errors="replace").replace("\r", ""))
print("EXIT %d" % os.waitstatus_to_exitcode(st))
EOF
)
        printf '%s\n' "$OUT" | sed 's/^/  pty| /' >&2
        expect_contains "$OUT" "credential API_TOKEN GET https://$UPSTREAM/echo/tty1" "the prompt names the request"
        expect_eq 200 "$(field tty1)" "answered y: the request went with the secret"
        expect_eq 403 "$(field tty2)" "answered n: refused"
        expect_eq 1 "$(arrivals)" "requests that reached the upstream with the secret"
        expect_audit "$AUDIT" "the terminal's decision" reason=approval_approved capability=credential decidedBy=terminal
        expect_audit "$AUDIT" "the refusal" reason=credential_denied path=/echo/tty2
        ERR=""
        expect_no_secret
}

# =============================================================================================

if [ -n "${IT_RUN_ONE:-}" ]; then
        it_main "$@"
fi

trap eg_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
EG_SKIP=
EG_FIXTURE_ERROR=
eg_setup
export EG_SKIP EG_FIXTURE_ERROR EG_DIR EG_TOKEN EG_NET EG_UP EG_UP_DENIED EG_HOST_SIDE EG_BLACKHOLE
(it_main "$@")
exit $?
