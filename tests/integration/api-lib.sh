#!/bin/bash
# Shared by the API's runners (api.sh, api-tenant.sh), sourced after lib.sh: their skips, a
# server on a unix socket of the test's own, a curl call to `cordon serve` on that socket ($SOCK)
# or over TCP ($TCP, with $TOKEN), and a value of its answer.

need_root() { [ "$(id -u)" = 0 ] || skip "the API's sandboxes live under /run/cordon (root)"; }
need_curl() { command -v curl >/dev/null || skip "curl is not installed"; }

# starts `cordon serve` on a unix socket of the test's own (extra ARGS passed on)
start_api() {
        SOCK=$IT_TMP/api.sock
        "$CORDON" serve --listen "unix:$SOCK" -v "$@" >>"$IT_TMP/serve.log" 2>&1 &
        API_PID=$!
        at_exit "kill $API_PID"
        # answering, not just there: a killed server's socket file stays until the next binds anew
        wait_until 10 curl -sf -o /dev/null --unix-socket "$SOCK" http://cordon/v1/openapi.json ||
                fail "cordon serve did not start: $(cat "$IT_TMP/serve.log")"
}

# api METHOD PATH [BODY] [CURL ARGS...]: sets CODE and OUT (the body)
api() {
        local m=$1 p=$2 body=${3-}
        shift 3 2>/dev/null || shift $#
        local args=(-sS --max-time 30 -X "$m" -o "$IT_TMP/body" -w '%{http_code}')
        if [ -n "${TCP:-}" ]; then
                args+=("http://$TCP$p")
                [ -n "${TOKEN:-}" ] && args+=(-H "Authorization: Bearer $TOKEN")
        else
                args+=(--unix-socket "$SOCK" "http://cordon$p")
        fi
        [ -n "$body" ] && args+=(--data-binary "$body")
        CODE=$(curl "${args[@]}" "$@")
        OUT=$(cat "$IT_TMP/body")
        printf '+ %s %s -> %s %s\n' "$m" "$p" "$CODE" "$(_it_short "$OUT")" >&2
}

# j EXPR: a value of $OUT (python syntax on d); strings bare, others as JSON
j() {
        printf '%s' "$OUT" | python3 -c 'import json,sys
d=json.load(sys.stdin); v=eval(sys.argv[1])
print(v if isinstance(v,str) else json.dumps(v, sort_keys=True))' "$1"
}
