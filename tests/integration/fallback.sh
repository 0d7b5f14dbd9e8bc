#!/bin/bash
# cordon integration tests for fallback runs: each kernel feature cordon can do without, or
# cannot, forced absent with CORDON_TEST_FORCE_FALLBACK. A feature with a documented fallback
# (openat2, SYNC_WAKE_UP) must still run real workloads, with -v naming the fallback and
# evidence that it ran; a required one (ADDFD, pidfd_getfd) must refuse to start with exit 125
# and a message naming the feature, without running the command. Any other suite can be re-run
# whole with the fallbacks forced, e.g. CORDON_TEST_FORCE_FALLBACK=openat2,sync_wakeup bash
# tests/integration/run.sh (lib.sh passes the variable on to every cordon it starts); the path
# table (fs-semantics.sh) runs each fallback itself. Run by `make check`; by hand:
#
#   CORDON=/path/to/cordon TESTS_SRCDIR=/path/to/tests bash tests/integration/fallback.sh [REGEX...]

if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

IT_SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$IT_SCRIPT")/lib.sh"

# Real programs: python3 writing and reading files and opening one relative to a directory fd,
# the raw openat2 syscall (its result printed), a shell pipeline, git init and commit.
# shellcheck disable=SC2016
WORKLOAD='set -e
cd /tmp
python3 -c "
import ctypes, os, struct
open(\"/tmp/f\", \"w\").write(\"py-ok\n\")
print(open(\"/tmp/f\").read().strip())
d = os.open(\"/tmp\", os.O_RDONLY | os.O_DIRECTORY)
fd = os.open(\"f\", os.O_RDONLY, dir_fd=d)
print(\"dirfd:\" + os.read(fd, 100).decode().strip())
libc = ctypes.CDLL(None, use_errno=True)
how = struct.pack(\"QQQ\", os.O_RDONLY, 0, 0)
r = libc.syscall(437, d, b\"f\", how, len(how))
print(\"openat2:\", \"ok\" if r >= 0 else os.strerror(ctypes.get_errno()))
"
printf "b\na\nc\n" | sort | tr -d "\n"; echo " pipeline"
mkdir repo && cd repo && git init -q . && echo x >x && git add x
git -c user.name=t -c user.email=t@example.com commit -qm one
echo "commits:$(git log --oneline | wc -l)"'

need_workload_tools() {
        command -v python3 >/dev/null || skip "no python3 on the host"
        command -v git >/dev/null || skip "no git on the host"
}

# the workload's output, apart from the openat2 line (which depends on the fallback)
expect_workload() {
        expect_contains "$OUT" "py-ok" "python3 wrote and read a file"
        expect_contains "$OUT" "dirfd:py-ok" "python3 opened a file relative to a directory fd"
        expect_contains "$OUT" "abc pipeline" "a shell pipeline"
        expect_contains "$OUT" "commits:1" "git init and commit"
}

forced() {
        local features=$1
        shift
        CORDON_TEST_FORCE_FALLBACK=$features crun "$@"
}

# =============================================================================================
# features with a fallback

# Without openat2: the sandbox still works, the child's own openat2 says ENOSYS (as on a kernel
# that lacks it), while a normal run on this kernel serves it, so the fallback is what answered.
it_test openat2_absent_runs_workloads
openat2_absent_runs_workloads() {
        need_workload_tools
        crun -- sh -c "$WORKLOAD"
        expect_rc 0 "the workload in a normal run"
        expect_contains "$OUT" "openat2: ok" "the child's openat2 in a normal run"
        forced openat2 -v -- sh -c "$WORKLOAD"
        expect_rc 0 "the workload with openat2 forced absent"
        expect_workload
        expect_contains "$OUT" "openat2: Function not implemented" "the child's openat2 gets ENOSYS"
        expect_contains "$ERR" "cordon: kernel feature openat2 forced absent: cordon's own walks go one component at a time" "-v names the fallback"
}

# Without -v nothing is said about the fallback (it is a -v report, not noise).
it_test openat2_absent_quiet_without_verbose
openat2_absent_quiet_without_verbose() {
        forced openat2 -- sh -c 'echo quiet'
        expect_rc 0
        expect_eq "quiet" "$OUT" "output"
        expect_not_contains "$ERR" "forced absent" "stderr without -v"
}

# A template's digest is recomputed at start by the component walk (openat2 RESOLVE_BENEATH
# normally): the run starts only if the fallback walk hashes the same tree to the same digest
# that `cordon digest` (openat2) printed, symlinks included; a wrong digest still refuses.
it_test openat2_absent_template_digest
openat2_absent_template_digest() {
        local t pol p lib d
        t=$(scratch_dir tpl)
        mkdir -p "$t/usr/bin" "$t/usr/lib/x86_64-linux-gnu" "$t/usr/lib64" "$t/etc" "$t/data" ||
                fail "cannot create the template in $t"
        ln -s usr/bin "$t/bin" && ln -s usr/lib "$t/lib" && ln -s usr/lib64 "$t/lib64" ||
                fail "cannot create the template's links"
        for p in sh cat; do
                cp -L "$(command -v "$p")" "$t/usr/bin/$p" || fail "cannot copy $p into the template"
                for lib in $(ldd "$t/usr/bin/$p" 2>/dev/null | grep -o '/[^ ]*'); do
                        case $lib in
                        */ld-linux*) cp -Ln "$lib" "$t/usr/lib64/" ;;
                        *) cp -Ln "$lib" "$t/usr/lib/x86_64-linux-gnu/" ;;
                        esac || fail "cannot copy $lib into the template"
                done
        done
        echo 'root:x:0:0:root:/root:/bin/sh' >"$t/etc/passwd"
        printf 'original\n' >"$t/data/file"
        ln -s file "$t/data/link"
        chmod -R go+rX "$t"
        d=$("$CORDON" digest "$t") || fail "cordon digest failed"
        pol="$IT_TMP/policy.json"
        printf '{"source": {"kind": "template", "path": "%s", "digest": "%s"}}\n' "$t" "$d" >"$pol"
        forced openat2 -v -p "$pol" -- sh -c 'cat /data/link'
        expect_rc 0 "a template with its digest, openat2 forced absent"
        expect_eq "original" "$OUT" "the template's file through its symlink"
        expect_contains "$ERR" "kernel feature openat2 forced absent" "-v names the fallback"
        printf '{"source": {"kind": "template", "path": "%s", "digest": "sha256:%064d"}}\n' "$t" 0 >"$pol"
        forced openat2 -p "$pol" -- sh -c 'echo RAN'
        expect_rc 2 "a wrong digest, openat2 forced absent"
        expect_not_contains "$OUT" "RAN" "the command must not run"
        expect_contains "$ERR" "found $d; refusing to start" "the fallback walk's digest is cordon digest's"
}

# A long-lived sandbox created without openat2: its sentry opens the sandbox's devpts ptmx for
# `exec -t` by the component walk, and the exec'd command's own openat2 gets ENOSYS.
it_test openat2_absent_sandbox_exec_terminal
openat2_absent_sandbox_exec_terminal() {
        [ "$(id -u)" = 0 ] || skip "long-lived sandboxes keep their state under /run/cordon (root)"
        command -v script >/dev/null || skip "script(1) is not installed"
        command -v python3 >/dev/null || skip "no python3 on the host"
        local id
        id=$(CORDON_TEST_FORCE_FALLBACK=openat2 timeout 30 "$CORDON" sandbox create 2>"$IT_TMP/create.err")
        [[ $id =~ ^[0-9a-f]{16}$ ]] || fail "create printed '$id': $(cat "$IT_TMP/create.err")"
        at_exit "timeout 30 '$CORDON' sandbox terminate $id"
        OUT=$(timeout 30 script -qec "'$CORDON' sandbox exec $id -t -- sh -c 'test -t 0 && test -t 1 && echo tty-yes; tty; exit 3'" /dev/null </dev/null 2>&1)
        RC=$?
        expect_rc 3 "exec -t's status through a terminal"
        expect_contains "$OUT" "tty-yes" "stdin and stdout are a terminal"
        expect_match "$OUT" '/dev/pts/[0-9]+' "from the sandbox's own devpts"
        # shellcheck disable=SC2016
        OUT=$(timeout 30 "$CORDON" sandbox exec "$id" -- python3 -c '
import ctypes, os, struct
libc = ctypes.CDLL(None, use_errno=True)
how = struct.pack("QQQ", os.O_RDONLY, 0, 0)
r = libc.syscall(437, -100, b"/etc/passwd", how, len(how))
print("openat2:", "ok" if r >= 0 else os.strerror(ctypes.get_errno()))' 2>&1)
        expect_contains "$OUT" "openat2: Function not implemented" "an exec'd command's openat2"
        # put and get open in the view without openat2 too (the chrooted worker's own open)
        printf 'blob\n' >"$IT_TMP/blob"
        chmod 0644 "$IT_TMP/blob"
        OUT=$(timeout 30 "$CORDON" sandbox put "$id" "$IT_TMP/blob" /tmp/blob 2>&1) || fail "put: $OUT"
        OUT=$(timeout 30 "$CORDON" sandbox get "$id" /tmp/blob "$IT_TMP/back" 2>&1) || fail "get: $OUT"
        expect_eq "blob" "$(cat "$IT_TMP/back")" "the file back from the sandbox"
}

# Without SYNC_WAKE_UP: the same workloads, slower; -v names it, and the layer report says the
# flag is not in use (where this kernel has it, a normal run says "on", so the switch is real).
it_test sync_wakeup_absent_runs_workloads
sync_wakeup_absent_runs_workloads() {
        need_workload_tools
        crun -v -- true
        expect_rc 0 "a normal run"
        local normal=$ERR
        forced sync_wakeup -v -- sh -c "$WORKLOAD"
        expect_rc 0 "the workload with SYNC_WAKE_UP forced absent"
        expect_workload
        expect_contains "$OUT" "openat2: ok" "openat2 is untouched by this fallback"
        expect_contains "$ERR" "cordon: kernel feature sync_wakeup forced absent: SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP not used" "-v names the fallback"
        expect_contains "$ERR" "SYNC_WAKE_UP unavailable" "the layer report"
        case $normal in
        *"SYNC_WAKE_UP on"*) ;;
        *) it_log "this kernel has no SYNC_WAKE_UP: only the forced run's report is checked" ;;
        esac
}

# Without the killable wait (a kernel before 5.19): the same workloads with every open emulated
# (fds injected, in one step); -v names it and the layer report says the wait is not killable.
it_test wait_killable_absent_runs_workloads
wait_killable_absent_runs_workloads() {
        need_workload_tools
        crun -v -- true
        expect_rc 0 "a normal run"
        local normal=$ERR
        forced wait_killable_recv -v --trap-all -- sh -c "$WORKLOAD"
        expect_rc 0 "the workload with the killable wait forced absent"
        expect_workload
        expect_contains "$ERR" "cordon: kernel feature wait_killable_recv forced absent" "-v names the fallback"
        expect_contains "$ERR" "killable wait UNAVAILABLE" "the layer report"
        case $normal in
        *"killable wait on"*) ;;
        *) it_log "this kernel has no killable wait: only the forced run's report is checked" ;;
        esac
}

# Both fallbacks at once, and with the /proc/TID/mem one: they compose.
it_test all_fallbacks_together
all_fallbacks_together() {
        need_workload_tools
        forced openat2,sync_wakeup,process_vm_readv -v -- sh -c "$WORKLOAD"
        expect_rc 0 "the workload with every fallback forced"
        expect_workload
        expect_contains "$OUT" "openat2: Function not implemented" "the child's openat2"
        expect_contains "$ERR" "kernel feature openat2 forced absent" "-v: openat2"
        expect_contains "$ERR" "kernel feature sync_wakeup forced absent" "-v: sync_wakeup"
        expect_contains "$ERR" "kernel feature process_vm_readv forced absent" "-v: process_vm_readv"
}

# =============================================================================================
# required features: a clear refusal, never a silent downgrade

# refused FEATURE MESSAGE: the run exits 125 naming the feature, and the command never runs
refused() {
        local feature=$1 msg=$2 marker
        marker="$IT_TMP/ran"
        forced "$feature" -v --bind "$IT_TMP:/out" -- sh -c 'echo RAN; touch /out/ran'
        expect_rc 125 "$feature forced absent"
        expect_not_contains "$OUT" "RAN" "the command must not run"
        expect_true "the command must not run (no marker file)" test ! -e "$marker"
        expect_contains "$ERR" "$msg" "the message names the missing feature"
        expect_contains "$ERR" "refusing to start" "the message says the run is refused"
        expect_contains "$ERR" "cordon: kernel feature $feature forced absent: required" "-v line"
        # and without -v the refusal is still said
        forced "$feature" -- true
        expect_rc 125 "$feature forced absent, without -v"
        expect_contains "$ERR" "$msg" "the message without -v"
}

it_test addfd_absent_refuses
addfd_absent_refuses() {
        chmod 0777 "$IT_TMP"
        refused addfd "the kernel lacks SECCOMP_IOCTL_NOTIF_ADDFD (Linux 5.9)"
}

it_test pidfd_getfd_absent_refuses
pidfd_getfd_absent_refuses() {
        chmod 0777 "$IT_TMP"
        refused pidfd_getfd "the kernel lacks pidfd_getfd (Linux 5.6)"
}

# A required feature refuses even when listed with fallbacks that would work.
it_test required_among_fallbacks_refuses
required_among_fallbacks_refuses() {
        forced openat2,addfd,sync_wakeup -- sh -c 'echo RAN'
        expect_rc 125
        expect_not_contains "$OUT" "RAN" "the command must not run"
        expect_contains "$ERR" "SECCOMP_IOCTL_NOTIF_ADDFD" "the message"
}

# A name cordon does not know is a usage error, not a silently normal run.
it_test unknown_feature_refused
unknown_feature_refused() {
        forced openat3 -- sh -c 'echo RAN'
        expect_rc 2
        expect_not_contains "$OUT" "RAN" "the command must not run"
        expect_contains "$ERR" "CORDON_TEST_FORCE_FALLBACK: unknown feature 'openat3'" "the message"
}

it_main "$@"
