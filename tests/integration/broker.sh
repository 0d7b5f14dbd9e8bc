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
