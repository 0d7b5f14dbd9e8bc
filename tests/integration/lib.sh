# shellcheck shell=bash
# lib.sh: a small runner for cordon's integration tests (sourced by run.sh).
#
# A test is a shell function registered with `it_test NAME`. `it_main "$@"` runs every
# registered test (or those matching the regexes given as arguments), each in a fresh bash
# process (the test script re-executed with IT_RUN_ONE=NAME) under `timeout`, with stdin from
# /dev/null and its output captured. It prints one line per test:
#
#   ok - NAME
#   skip - NAME: reason
#   FAIL - NAME: reason          (followed by the test's captured output, indented)
#
# and at the end, alone on its line, `N passed, N failed` (plus `, N skipped` if any).
# Exit status: 0 if nothing failed, 1 otherwise, 77 if the tests cannot run here at all.
#
# Inside a test:
#   crun ARGS...            `cordon run ARGS...` under timeout; sets OUT, ERR (trailing
#                           newlines stripped) and RC; stdin is inherited
#   expect_rc WANT [WHAT]   $RC must be WANT            (expectations record a failure and go on)
#   expect_eq WANT GOT WHAT / expect_contains HAY NEEDLE WHAT / expect_not_contains HAY NEEDLE WHAT
#   expect_match HAY REGEX WHAT (extended regex, grep -E) / expect_true WHAT CMD...
#   fail REASON             fail now;   skip REASON   skip now
#   at_exit CMD             run CMD (eval'd) when the test ends, however it ends
#   scratch_dir NAME        a fresh host directory under the test's own scratch directory,
#                           mode 0777 so that the sandbox (host uid 65534 when cordon runs as
#                           root) can write into it
#   wait_until SECS CMD...  poll CMD every 50 ms until it succeeds (status 1 on timeout)
#   bg_cordon OUTFILE ARGS...  start `cordon run ARGS` in the background (stdout and stderr to
#                           OUTFILE); sets BG_PID (the timeout wrapper; `wait` on it gives
#                           cordon's status) and BG_CORDON (cordon's own pid)
#
# Environment: CORDON (path of the cordon binary, required), HELPERS (built helper programs),
# TESTS_SRCDIR; IT_TEST_TIMEOUT (per test, default 60 s), IT_CMD_TIMEOUT (per cordon
# invocation, default 30 s), IT_SCRATCH_BASE (host scratch space, default /var/tmp).

IT_NAMES=()
IT_TEST_TIMEOUT=${IT_TEST_TIMEOUT:-60}
IT_CMD_TIMEOUT=${IT_CMD_TIMEOUT:-30}
IT_CLEANUPS=()
IT_FAILED=0

it_test() { IT_NAMES+=("$1"); }

# ---------------------------------------------------------------------------------------------
# helpers for use inside a test

it_log() { printf '# %s\n' "$*" >&2; }

_it_reason() {
        if [ -n "${IT_REASON_FILE:-}" ]; then
                printf '%s\n' "$*" >>"$IT_REASON_FILE"
        fi
}

fail() {
        _it_reason "$*"
        printf 'FAILED: %s\n' "$*" >&2
        exit 1
}

skip() {
        : >"$IT_REASON_FILE"
        _it_reason "$*"
        printf 'SKIPPED: %s\n' "$*" >&2
        exit 77
}

_it_soft_fail() {
        IT_FAILED=1
        _it_reason "$*"
        printf 'FAILED: %s\n' "$*" >&2
}

# shortens a value for a one-line failure reason
_it_short() {
        local s=${1//$'\n'/\\n}
        if [ ${#s} -gt 200 ]; then
                s="${s:0:200}..."
        fi
        printf '%s' "$s"
}

expect_rc() {
        local want=$1 what=${2:-exit status}
        if [ "$RC" != "$want" ]; then
                local note=
                [ "$RC" = 124 ] && note=" (cordon timed out after ${IT_CMD_TIMEOUT}s)"
                _it_soft_fail "$what: expected exit $want, got $RC$note (stderr: $(_it_short "$ERR"))"
                return 1
        fi
}

expect_eq() {
        local want=$1 got=$2 what=$3
        if [ "$want" != "$got" ]; then
                _it_soft_fail "$what: expected '$(_it_short "$want")', got '$(_it_short "$got")'"
                return 1
        fi
}

expect_contains() {
        local hay=$1 needle=$2 what=$3
        case $hay in
        *"$needle"*) return 0 ;;
        esac
        _it_soft_fail "$what: '$(_it_short "$needle")' not found in '$(_it_short "$hay")'"
        return 1
}

expect_not_contains() {
        local hay=$1 needle=$2 what=$3
        case $hay in
        *"$needle"*)
                _it_soft_fail "$what: '$(_it_short "$needle")' must not appear, got '$(_it_short "$hay")'"
                return 1
                ;;
        esac
}

expect_match() {
        local hay=$1 re=$2 what=$3
        if ! printf '%s\n' "$hay" | grep -Eq -- "$re"; then
                _it_soft_fail "$what: no line matches /$re/ in '$(_it_short "$hay")'"
                return 1
        fi
}

expect_true() {
        local what=$1
        shift
        if ! "$@"; then
                _it_soft_fail "$what"
                return 1
        fi
}

at_exit() { IT_CLEANUPS+=("$1"); }

_it_run_cleanups() {
        local i
        for ((i = ${#IT_CLEANUPS[@]} - 1; i >= 0; i--)); do
                eval "${IT_CLEANUPS[$i]}" >/dev/null 2>&1 || true
        done
        IT_CLEANUPS=()
}

scratch_dir() {
        local d="$IT_TMP/$1"
        mkdir -p "$d" && chmod 0777 "$d" || fail "cannot create scratch directory $d"
        printf '%s\n' "$d"
}

# `cordon sandbox ARGS...` under timeout; sets OUT, ERR and RC like crun
sb() {
        local errf
        errf=$(mktemp -p "$IT_TMP" stderr.XXXXXX) || fail "mktemp failed"
        printf '+ cordon sandbox' >&2
        printf ' %q' "$@" >&2
        printf '\n' >&2
        OUT=$(timeout -k 5 "$IT_CMD_TIMEOUT" "$CORDON" sandbox "$@" 2>"$errf")
        RC=$?
        ERR=$(cat "$errf")
        rm -f "$errf"
        printf '  [exit %s]\n' "$RC" >&2
        [ -n "$OUT" ] && printf '%s\n' "$OUT" | sed 's/^/  stdout| /' | head -n 40 >&2
        [ -n "$ERR" ] && printf '%s\n' "$ERR" | sed 's/^/  stderr| /' | head -n 40 >&2
        return 0
}

# creates a sandbox (extra ARGS for create) and makes sure the test's end terminates it
new_sandbox() {
        sb create "$@"
        [ "$RC" = 0 ] || fail "create failed with $RC: $ERR"
        ID=$OUT
        [[ $ID =~ ^[0-9a-f]{16}$ ]] || fail "create printed '$ID', not an id"
        at_exit "timeout 30 '$CORDON' sandbox terminate $ID"
}

wait_until() {
        local secs=$1 i n
        shift
        n=$((secs * 20))
        for ((i = 0; i < n; i++)); do
                if "$@"; then
                        return 0
                fi
                sleep 0.05
        done
        return 1
}

crun() {
        local errf
        errf=$(mktemp -p "$IT_TMP" stderr.XXXXXX) || fail "mktemp failed"
        printf '+ cordon run' >&2
        printf ' %q' "$@" >&2
        printf '\n' >&2
        OUT=$(timeout -k 5 "$IT_CMD_TIMEOUT" "$CORDON" run "$@" 2>"$errf")
        RC=$?
        ERR=$(cat "$errf")
        rm -f "$errf"
        printf '  [exit %s]\n' "$RC" >&2
        if [ -n "$OUT" ]; then
                printf '%s\n' "$OUT" | sed 's/^/  stdout| /' | head -n 60 >&2
        fi
        if [ -n "$ERR" ]; then
                printf '%s\n' "$ERR" | sed 's/^/  stderr| /' | head -n 60 >&2
        fi
        return 0
}

# pids of the children of process PPID (from /proc, so that procps is not needed)
it_children() {
        local f rest ppid pid
        for f in /proc/[0-9]*/stat; do
                read -r rest 2>/dev/null <"$f" || continue
                rest=${rest##*) }
                read -r _ ppid _ <<<"$rest"
                if [ "$ppid" = "$1" ]; then
                        pid=${f#/proc/}
                        printf '%s\n' "${pid%/stat}"
                fi
        done
}

# "PID ARGS" of the processes whose command line contains STRING (ours excluded)
it_procs_matching() {
        local f pid args
        for f in /proc/[0-9]*/cmdline; do
                pid=${f#/proc/}
                pid=${pid%/cmdline}
                [ "$pid" = "$$" ] || [ "$pid" = "${BASHPID:-}" ] && continue
                args=$(tr '\0' ' ' <"$f" 2>/dev/null) || continue
                case $args in
                *"$1"*) printf '%s %s\n' "$pid" "$args" ;;
                esac
        done
}

_it_find_child() {
        BG_CORDON=$(it_children "$BG_PID" | head -n 1)
        [ -n "$BG_CORDON" ]
}

bg_cordon() {
        local out=$1
        shift
        printf '+ (background) cordon run' >&2
        printf ' %q' "$@" >&2
        printf '\n' >&2
        timeout -k 5 "$IT_CMD_TIMEOUT" "$CORDON" run "$@" >"$out" 2>&1 </dev/null &
        BG_PID=$!
        BG_CORDON=
        at_exit "kill $BG_PID"
        wait_until 5 _it_find_child || fail "cordon did not start in the background"
}

# true if the program is on the sandbox's PATH (the view holds the host's system directories)
in_sandbox() {
        timeout -k 5 "$IT_CMD_TIMEOUT" "$CORDON" run -- sh -c "command -v $1" >/dev/null 2>&1 </dev/null
}

need_in_sandbox() {
        local t
        for t in "$@"; do
                in_sandbox "$t" || skip "$t is not installed"
        done
}

# ---------------------------------------------------------------------------------------------
# the runner

_it_userns_usable() {
        if [ "$(id -u)" = 0 ]; then
                return 0
        fi
        if [ -r /proc/sys/user/max_user_namespaces ] &&
                [ "$(cat /proc/sys/user/max_user_namespaces)" = 0 ]; then
                return 1
        fi
        if [ "$(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null || echo 1)" = 0 ]; then
                return 1
        fi
        if command -v unshare >/dev/null 2>&1; then
                timeout 10 unshare -U true >/dev/null 2>&1 || return 1
        fi
        return 0
}

_it_child() {
        trap _it_run_cleanups EXIT
        trap 'exit 143' TERM
        trap 'exit 130' INT
        if ! declare -F "$IT_RUN_ONE" >/dev/null; then
                fail "no such test: $IT_RUN_ONE"
        fi
        "$IT_RUN_ONE"
        exit "$IT_FAILED"
}

# Host files no sandbox may ever change, with their hashes: compared around
# every test, so a test that lets a sandbox write the host fails by name even
# when its own checks pass.
_it_host_canary() {
        local f
        for f in /etc/passwd /etc/group /etc/shadow /etc/hosts /etc/hostname; do
                [ -e "$f" ] && printf '%s %s\n' "$f" "$(sha256sum <"$f" 2>/dev/null | cut -c1-16)"
        done
}

it_main() {
        if [ -n "${IT_RUN_ONE:-}" ]; then
                _it_child
        fi

        if [ -z "${CORDON:-}" ]; then
                echo "CORDON is not set (the path of the cordon binary); skipping the integration tests"
                exit 77
        fi
        if [ ! -x "$CORDON" ]; then
                echo "CORDON=$CORDON is not an executable file; skipping the integration tests"
                exit 77
        fi
        case $CORDON in
        /*) ;;
        *) CORDON="$(cd "$(dirname "$CORDON")" && pwd)/$(basename "$CORDON")" ;;
        esac
        if ! _it_userns_usable; then
                echo "not root and user namespaces are not usable here; skipping the integration tests"
                exit 77
        fi
        export CORDON
        export HELPERS="${HELPERS:-}"
        export TESTS_SRCDIR="${TESTS_SRCDIR:-}"

        local base=${IT_SCRATCH_BASE:-/var/tmp}
        [ -d "$base" ] && [ -w "$base" ] || base=${TMPDIR:-/tmp}
        IT_ROOT=$(mktemp -d "$base/cordon-it.XXXXXX") || {
                echo "cannot create a scratch directory in $base"
                exit 99
        }
        chmod 0755 "$IT_ROOT"
        # shellcheck disable=SC2064
        trap "chmod -R u+rwX '$IT_ROOT' 2>/dev/null; rm -rf '$IT_ROOT'" EXIT
        trap 'exit 130' INT
        trap 'exit 143' TERM

        local passed=0 failed=0 skipped=0 name rc reason start pat sel before after
        start=$(date +%s)
        for name in "${IT_NAMES[@]}"; do
                if [ $# -gt 0 ]; then
                        sel=0
                        for pat in "$@"; do
                                if [[ $name =~ $pat ]]; then
                                        sel=1
                                fi
                        done
                        [ $sel = 1 ] || continue
                fi
                local tdir="$IT_ROOT/$name"
                mkdir -p "$tdir" && chmod 0755 "$tdir"
                : >"$tdir.reason"
                : >"$tdir.log"
                before=$(_it_host_canary)
                IT_RUN_ONE=$name IT_TMP=$tdir IT_REASON_FILE="$tdir.reason" \
                        timeout -k 5 "$IT_TEST_TIMEOUT" bash "$IT_SCRIPT" </dev/null >"$tdir.log" 2>&1
                rc=$?
                after=$(_it_host_canary)
                if [ "$before" != "$after" ]; then
                        # whatever the test says: a host file changed while it ran
                        printf 'host files changed while this test ran (a sandbox reached the host?): %s\n' \
                                "$(diff <(printf '%s\n' "$before") <(printf '%s\n' "$after") | grep '^>' | cut -c3- | tr '\n' ' ')" \
                                >>"$tdir.reason"
                        [ "$rc" = 0 ] || [ "$rc" = 77 ] && rc=1
                fi
                reason=$(cat "$tdir.reason")
                reason=${reason//$'\n'/; }
                case $rc in
                0)
                        passed=$((passed + 1))
                        printf 'ok - %s\n' "$name"
                        ;;
                77)
                        skipped=$((skipped + 1))
                        printf 'skip - %s: %s\n' "$name" "${reason:-skipped}"
                        ;;
                *)
                        failed=$((failed + 1))
                        if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
                                reason="timed out after ${IT_TEST_TIMEOUT}s${reason:+; $reason}"
                        fi
                        printf 'FAIL - %s: %s\n' "$name" "${reason:-exit status $rc}"
                        sed 's/^/#   /' "$tdir.log" | head -n 200
                        ;;
                esac
                chmod -R u+rwX "$tdir" 2>/dev/null
                rm -rf "$tdir" "$tdir.reason" "$tdir.log"
        done
        echo "# integration tests took $(($(date +%s) - start)) s"
        if [ "$skipped" -gt 0 ]; then
                echo "$passed passed, $failed failed, $skipped skipped"
        else
                echo "$passed passed, $failed failed"
        fi
        [ "$failed" = 0 ]
        exit $?
}
