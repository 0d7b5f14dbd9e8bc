#!/bin/bash
# cordon integration tests for exec. Where the policy has no exec rule and the view's floors are in
# force (Landlock's execute right, the sandbox's own binfmt_misc), execs run natively and the
# view decides them; with --trap-all (or an exec rule) execve/execveat are checked by the sentry
# (fs/exec.c) and the running image is verified at each exec event (sentry/exectrace.c). The
# tests run each case both ways and expect the same results, but for a foreign binary, which
# the check refuses (ENOEXEC) and the filter's architecture check kills natively at its first
# syscall (SIGSYS). Real programs and
# small python3 programs run under `cordon run`; the files they execute are made on the host
# in a scratch directory bound into the sandbox at /x. Run like run.sh:
#
#   CORDON=/path/to/cordon HELPERS=/path/to/build/tests/helpers TESTS_SRCDIR=/path/to/tests \
#       bash tests/integration/exec.sh [REGEX...]

if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

IT_SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$IT_SCRIPT")/lib.sh"

host_python() {
        if [ -x /usr/bin/python3 ]; then
                echo /usr/bin/python3
        else
                command -v python3
        fi
}

# ELF headers for other machines, written by the host's python: a runnable i386 program (exits
# 42 through int $0x80; the kernel runs it where it has IA32 emulation), and bare headers for
# aarch64 and x32 (ELFCLASS32 with EM_X86_64).
make_foreign_elves() {
        local d=$1
        "$(host_python)" - "$d" <<'EOF' || fail "cannot write the test ELF files"
import struct, sys, os
d = sys.argv[1]
code = bytes.fromhex('b801000000bb2a000000cd80')
base, eh, ph = 0x08048000, 52, 32
hdr = b'\x7fELF' + bytes([1, 1, 1, 0]) + bytes(8)
hdr += struct.pack('<HHIIIIIHHHHHH', 2, 3, 1, base + eh + ph, eh, 0, 0, eh, ph, 1, 0, 0, 0)
size = eh + ph + len(code)
prog = struct.pack('<IIIIIIII', 1, 0, base, base, size, size, 5, 0x1000)
open(d + '/i386', 'wb').write(hdr + prog + code)
# x32: the same image marked EM_X86_64
open(d + '/x32', 'wb').write(hdr[:18] + struct.pack('<H', 62) + hdr[20:] + prog + code)
# aarch64: a 64-bit header with e_machine 183
a = b'\x7fELF' + bytes([2, 1, 1, 0]) + bytes(8)
a += struct.pack('<HHIQQQIHHHHHH', 2, 183, 1, 0x400078, 64, 0, 0, 64, 56, 1, 0, 0, 0)
a += struct.pack('<IIQQQQQQ', 1, 5, 0, 0x400000, 0x400000, 0x80, 0x80, 0x10000)
open(d + '/aarch64', 'wb').write(a + bytes(8))
for f in ('i386', 'x32', 'aarch64'):
    os.chmod(d + '/' + f, 0o755)
EOF
}

# Whether this host's kernel runs the i386 program of make_foreign_elves at all (it exits 42): a
# kernel without IA32 emulation, or with it off, refuses it at exec (ENOEXEC), and then a native
# exec in the sandbox meets the same refusal before any filter can see the program.
host_runs_i386() {
        "$1/i386" 2>/dev/null
        [ $? = 42 ]
}

# A directory of executables bound at /x: a copy of true, scripts, a file without the x bit.
exec_fixture() {
        local d
        d=$(scratch_dir x) || exit $?
        chmod 0755 "$d"
        cp /bin/true "$d/true" && chmod 0755 "$d/true" || fail "cannot copy /bin/true"
        cp /bin/true "$d/nox" && chmod 0644 "$d/nox" || fail "cannot copy /bin/true"
        printf '#!/bin/sh\necho "script:$*"\n' >"$d/s.sh"
        printf '#!/x/s.sh nested\n' >"$d/s2.sh"
        printf '#!   /bin/sh   \necho "blanks:$*"\n' >"$d/blanks.sh"
        printf '#!/x/no-such-interpreter\n' >"$d/badinterp.sh"
        printf '#!/x/nox\n' >"$d/noxinterp.sh"
        printf '#!/x/i386\n' >"$d/i386interp.sh"
        printf 'echo plain-text-ran\n' >"$d/plain"
        chmod 0755 "$d"/*.sh "$d/plain"
        ln -s true "$d/link"
        make_foreign_elves "$d"
        printf '%s\n' "$d"
}

# python3 in the sandbox, for the calls a shell cannot make (execveat, errno, threads)
PY_EXEC_LIB='
import ctypes, os, sys, threading
libc = ctypes.CDLL(None, use_errno=True)
def execveat(dirfd, path, argv, flags):
    a = (ctypes.c_char_p * (len(argv) + 1))(*[x.encode() for x in argv], None)
    e = (ctypes.c_char_p * 1)(None)
    libc.syscall(322, dirfd, path.encode(), a, e, flags)
    return ctypes.get_errno()
def run(name, fn):
    """fn runs in a child and execs; reports the errno or how it ended"""
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        try:
            r = fn()
        except OSError as ex:
            r = ex.errno
        os.write(1, ("%s errno=%d\n" % (name, r)).encode())
        os._exit(3)
    _, st = os.waitpid(pid, 0)
    if os.WIFSIGNALED(st):
        print("%s signal=%d" % (name, os.WTERMSIG(st)))
    elif os.WEXITSTATUS(st) != 3:
        print("%s exit=%d" % (name, os.WEXITSTATUS(st)))
    sys.stdout.flush()
'

# the two ways an exec is decided (see the top): natively by the view, and checked by the sentry
EXEC_MODES=(native --trap-all)
mode_args() { [ "$1" = native ] || printf '%s\n' "$1"; }

it_test exec_scripts
exec_scripts() {
        local d m
        d=$(exec_fixture) || exit $?
        for m in "${EXEC_MODES[@]}"; do
                exec_scripts_in "$d" "$m"
        done
}
exec_scripts_in() {
        local d=$1 m=$2
        it_log "exec decided: $m"
        # shellcheck disable=SC2046
        crun $(mode_args "$m") --bind "$d:/x:ro" -- sh -c '/x/s.sh a b; /x/s2.sh c; /x/blanks.sh d; /x/plain; cd /x && ./s.sh rel'
        expect_rc 0 "scripts"
        expect_contains "$OUT" "script:a b" "a #!/bin/sh script"
        expect_contains "$OUT" "script:nested /x/s2.sh c" "a script whose interpreter is a script"
        expect_contains "$OUT" "blanks:d" "blanks around the interpreter"
        expect_contains "$OUT" "plain-text-ran" "a text file without #! (the shell runs it on ENOEXEC)"
        expect_contains "$OUT" "script:rel" "a script by a relative path"
        # shellcheck disable=SC2046
        crun $(mode_args "$m") --bind "$d:/x:ro" -- python3 -c "$PY_EXEC_LIB
run('badinterp', lambda: os.execv('/x/badinterp.sh', ['b']))
run('noxinterp', lambda: os.execv('/x/noxinterp.sh', ['b']))
run('i386interp', lambda: os.execv('/x/i386interp.sh', ['b']))"
        expect_rc 0 "python3 driver"
        expect_contains "$OUT" "badinterp errno=2" "a missing interpreter: ENOENT"
        expect_contains "$OUT" "noxinterp errno=13" "an interpreter without the x bit: EACCES"
        if [ "$m" = native ] && host_runs_i386 "$d"; then
                expect_contains "$OUT" "i386interp signal=31" "an i386 interpreter: killed at its first syscall"
        else
                # checked, cordon refuses it; native on a host that runs no i386 image, the kernel
                expect_contains "$OUT" "i386interp errno=8" "an i386 interpreter: ENOEXEC"
        fi
}

it_test exec_paths_and_fds
exec_paths_and_fds() {
        local d m
        d=$(exec_fixture) || exit $?
        for m in "${EXEC_MODES[@]}"; do
                exec_paths_and_fds_in "$d" "$m"
        done
}
exec_paths_and_fds_in() {
        local d=$1 m=$2
        it_log "exec decided: $m"
        # shellcheck disable=SC2046
        crun $(mode_args "$m") --bind "$d:/x:ro" --cwd /x -- python3 -c "$PY_EXEC_LIB
AT_EMPTY_PATH, AT_SYMLINK_NOFOLLOW = 0x1000, 0x100
run('relative', lambda: os.execv('./true', ['t']))
dfd = os.open('/x', os.O_RDONLY | os.O_DIRECTORY)
run('dirfd', lambda: execveat(dfd, 'true', ['t'], 0))
# a script through a close-on-exec dirfd: its interpreter would be handed /dev/fd/N/s.sh,
# which is gone after the exec, so the kernel says ENOENT; through an inheritable one it runs
run('dirfd-script-cloexec', lambda: execveat(dfd, 's.sh', ['s', 'via-dirfd'], 0))
os.set_inheritable(dfd, True)
run('dirfd-script', lambda: execveat(dfd, 's.sh', ['s', 'via-dirfd'], 0))
ofd = os.open('/x/true', os.O_PATH)
run('empty-path-opath', lambda: execveat(ofd, '', ['t'], AT_EMPTY_PATH))
rfd = os.open('/x/true', os.O_RDONLY)
os.set_inheritable(rfd, True)
run('fexecve', lambda: os.execve(rfd, ['t'], {}))
run('proc-self-fd', lambda: os.execv('/proc/self/fd/%d' % rfd, ['t']))
run('dev-fd', lambda: os.execv('/dev/fd/%d' % rfd, ['t']))
sfd = os.open('/x/s.sh', os.O_RDONLY)
os.set_inheritable(sfd, True)
run('fexecve-script', lambda: os.execve(sfd, ['s', 'via-fd'], {}))
run('empty-no-flag', lambda: execveat(rfd, '', ['t'], 0))
run('link-nofollow', lambda: execveat(dfd, 'link', ['t'], AT_SYMLINK_NOFOLLOW))
run('link-follow', lambda: execveat(dfd, 'link', ['t'], 0))
run('bad-flag', lambda: execveat(dfd, 'true', ['t'], 0x2))
run('directory', lambda: os.execv('/x', ['t']))
run('dirfd-itself', lambda: execveat(dfd, '', ['t'], AT_EMPTY_PATH))
run('missing', lambda: os.execv('/x/none', ['t']))
run('bad-fd', lambda: execveat(999, 'true', ['t'], 0))
"
        expect_rc 0 "python3 driver"
        local c
        for c in relative dirfd empty-path-opath fexecve proc-self-fd dev-fd link-follow; do
                expect_contains "$OUT" "$c exit=0" "exec $c"
        done
        expect_contains "$OUT" "dirfd-script-cloexec errno=2" "a script through a close-on-exec dirfd: ENOENT"
        expect_contains "$OUT" "script:via-dirfd" "a script through a dirfd"
        expect_contains "$OUT" "script:via-fd" "a script through fexecve"
        expect_contains "$OUT" "empty-no-flag errno=2" "an empty path without AT_EMPTY_PATH: ENOENT"
        expect_contains "$OUT" "link-nofollow errno=40" "AT_SYMLINK_NOFOLLOW on a symlink: ELOOP"
        expect_contains "$OUT" "bad-flag errno=22" "an unknown execveat flag: EINVAL"
        expect_contains "$OUT" "directory errno=13" "a directory: EACCES"
        expect_contains "$OUT" "dirfd-itself errno=13" "a directory fd with AT_EMPTY_PATH: EACCES"
        expect_contains "$OUT" "missing errno=2" "a missing file: ENOENT"
        expect_contains "$OUT" "bad-fd errno=9" "a bad dirfd: EBADF"
}

it_test exec_permissions
exec_permissions() {
        local d m
        d=$(exec_fixture) || exit $?
        for m in "${EXEC_MODES[@]}"; do
                exec_permissions_in "$d" "$m"
        done
}
exec_permissions_in() {
        local d=$1 m=$2
        it_log "exec decided: $m"
        # shellcheck disable=SC2046
        crun $(mode_args "$m") --bind "$d:/x:ro" -- python3 -c "$PY_EXEC_LIB
run('nox', lambda: os.execv('/x/nox', ['t']))
import shutil
shutil.copy('/x/true', '/dev/shm/t')
os.chmod('/dev/shm/t', 0o755)
run('tmp-copy', lambda: os.execv('/dev/shm/t', ['t']))
os.chmod('/dev/shm/t', 0o644)
run('tmp-nox', lambda: os.execv('/dev/shm/t', ['t']))
"
        expect_rc 0 "python3 driver"
        expect_contains "$OUT" "nox errno=13" "a file without the x bit: EACCES"
        expect_contains "$OUT" "tmp-nox errno=13" "a copy made in the sandbox, x bit removed: EACCES"
        if printf '%s\n' "$OUT" | grep -q "tmp-copy exit=0"; then
                it_log "/dev/shm allows exec in this view"
        else
                expect_contains "$OUT" "tmp-copy errno=13" "exec on /dev/shm: as the mount says"
        fi
}

it_test exec_foreign_architectures
exec_foreign_architectures() {
        local d
        d=$(exec_fixture) || exit $?
        # where the host's kernel runs the i386 program, the checked refusal below is cordon's,
        # not the kernel's, and the native exec reaches the filter's architecture check
        local i386=false
        host_runs_i386 "$d" && i386=true
        it_log "natively, the i386 test program runs: $i386"
        # checked by the sentry: refused before the kernel loads it
        crun --trap-all --bind "$d:/x:ro" -- python3 -c "$PY_EXEC_LIB
for f in ('i386', 'x32', 'aarch64'):
    run(f, lambda: os.execv('/x/' + f, [f]))
"
        expect_rc 0 "python3 driver"
        expect_contains "$OUT" "i386 errno=8" "an i386 ELF: ENOEXEC"
        expect_contains "$OUT" "x32 errno=8" "an x32 ELF: ENOEXEC"
        expect_contains "$OUT" "aarch64 errno=8" "an aarch64 ELF: ENOEXEC"
        # as the command: execvp takes ENOEXEC for a script without #! and hands the file to
        # /bin/sh, which finds no command in it (127); 42 would mean it ran, 159 (SIGSYS) that
        # the kernel loaded it and the filter's architecture check killed it
        crun --trap-all --bind "$d:/x:ro" -- /x/i386
        expect_rc 127 "an i386 ELF as the command"
        # native: the kernel loads the i386 program, whose first syscall (int $0x80) meets the
        # filter's architecture check: killed by SIGSYS, never exit 42; the others the kernel
        # itself refuses
        crun --bind "$d:/x:ro" -- python3 -c "$PY_EXEC_LIB
for f in ('i386', 'x32', 'aarch64'):
    run(f, lambda: os.execv('/x/' + f, [f]))
"
        expect_rc 0 "python3 driver (native)"
        if $i386; then
                expect_contains "$OUT" "i386 signal=31" "an i386 ELF natively: SIGSYS at its first syscall"
        else
                # the kernel refuses it as it does outside: the filter is never asked
                expect_contains "$OUT" "i386 errno=8" "an i386 ELF natively, on a host that runs none: ENOEXEC"
        fi
        expect_contains "$OUT" "x32 errno=8" "an x32 ELF natively: ENOEXEC"
        expect_contains "$OUT" "aarch64 errno=8" "an aarch64 ELF natively: ENOEXEC"
        crun --bind "$d:/x:ro" -- /x/i386
        if $i386; then
                expect_rc 159 "an i386 ELF as the command, natively (SIGSYS)"
        else
                expect_rc 127 "an i386 ELF as the command, natively, on a host that runs none (sh: not found)"
        fi
}

it_test exec_from_thread
exec_from_thread() {
        crun -- python3 -c '
import os, threading, time
def go():
    os.execv("/bin/sh", ["sh", "-c", "echo exec-from-thread pid=$$"])
print("leader pid=%d" % os.getpid(), flush=True)
for i in range(3):
    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
t = threading.Thread(target=go)
t.start()
t.join()
print("not reached")'
        expect_rc 0 "a non-leader thread execs"
        expect_contains "$OUT" "exec-from-thread" "the exec'd program ran"
        expect_not_contains "$OUT" "not reached" "the old image is gone"
        local lp ep
        lp=$(printf '%s\n' "$OUT" | sed -n 's/^leader pid=//p')
        ep=$(printf '%s\n' "$OUT" | sed -n 's/^exec-from-thread pid=//p')
        expect_eq "$lp" "$ep" "after exec the process has the leader's pid"
}

it_test exec_vfork_posix_spawn
exec_vfork_posix_spawn() {
        crun -- python3 -c '
import os
for i in range(20):
    pid = os.posix_spawn("/bin/sh", ["sh", "-c", "exit %d" % i], {})
    _, st = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(st) == i, (i, st)
pid = os.posix_spawnp("true", ["true"], os.environ)
print("spawned", os.waitpid(pid, 0)[1])
import subprocess
print(subprocess.run(["sh", "-c", "echo via-subprocess"], capture_output=True, text=True).stdout.strip())'
        expect_rc 0 "posix_spawn (clone with CLONE_VFORK)"
        expect_contains "$OUT" "spawned 0" "posix_spawnp"
        expect_contains "$OUT" "via-subprocess" "subprocess (vfork and exec)"
}

# Stop and continue inside the sandbox, with the tracer attached: group-stops must look the
# same to the parent (WUNTRACED, WCONTINUED). One visible difference: /proc shows a stopped
# tracee as "t" (tracing stop), not "T". (SIGTSTP is not tried: the command's process group is
# orphaned, so the kernel discards it, with or without a tracer.)
it_test exec_job_control
exec_job_control() {
        crun -- python3 -c '
import os, signal, time
pid = os.fork()
if pid == 0:
    time.sleep(20)
    os._exit(7)
os.kill(pid, signal.SIGSTOP)
_, st = os.waitpid(pid, os.WUNTRACED)
print("stopped", os.WIFSTOPPED(st), os.WSTOPSIG(st))
state = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0]
print("state", state)
os.kill(pid, signal.SIGCONT)
_, st = os.waitpid(pid, os.WCONTINUED)
print("continued", os.WIFCONTINUED(st))
os.kill(pid, signal.SIGSTOP)
_, st = os.waitpid(pid, os.WUNTRACED)
print("again", os.WIFSTOPPED(st), os.WSTOPSIG(st))
os.kill(pid, signal.SIGCONT)
os.kill(pid, signal.SIGUSR1)
_, st = os.waitpid(pid, 0)
print("usr1", os.WIFSIGNALED(st), os.WTERMSIG(st))'
        expect_rc 0 "stop, continue, signal a child"
        expect_contains "$OUT" "stopped True 19" "SIGSTOP stops the child (WUNTRACED)"
        expect_match "$OUT" "^state [Tt]$" "the stopped child is in state T (t: traced)"
        expect_contains "$OUT" "continued True" "SIGCONT continues it (WCONTINUED)"
        expect_contains "$OUT" "again True 19" "a second SIGSTOP stops it again"
        expect_contains "$OUT" "usr1 True 10" "SIGUSR1 kills it as without a tracer"
        # a shell's own job control: a background job stopped and continued
        crun -- sh -c 'sleep 3 & p=$!; kill -STOP $p; sleep 0.2; s=$(cut -d" " -f3 /proc/$p/stat); kill -CONT $p; kill $p; wait $p; echo "state=$s rc=$?"'
        expect_rc 0 "sh job"
        expect_match "$OUT" "^state=[Tt] rc=143$" "sh: a background job stopped, continued and terminated"
}

it_test exec_heavy_programs
exec_heavy_programs() {
        need_in_sandbox make
        local d
        d=$(scratch_dir mk) || exit $?
        {
                printf 'all:'
                for i in $(seq 1 40); do printf ' t%d' "$i"; done
                printf '\n\t@echo all-done\n'
                for i in $(seq 1 40); do printf 't%d:\n\t@sh -c "echo %d | tr 0-9 a-j | cat >/dev/null" && true\n' "$i" "$i"; done
        } >"$d/Makefile"
        crun --bind "$d:/mk:ro" -- sh -c 'make -s -j2 -C /mk; for i in $(seq 200); do /bin/true; done; echo loop-done; printf "x\ny\n" | sort -r | head -1 | tr x X'
        expect_rc 0 "make -j2 and a shell loop of 200 execs"
        expect_contains "$OUT" "all-done" "make ran every target"
        expect_contains "$OUT" "loop-done" "the shell loop finished"
        expect_contains "$OUT" "y" "a pipeline"
}

# A path flipped by a second thread during execve: the tracer kills what the handler did not
# approve, and says so with -v and in the audit log.
it_test exec_mismatch_reported
exec_mismatch_reported() {
        [ -x "${HELPERS:-}/escape-probe" ] || skip "escape-probe not built"
        local h audit="$IT_TMP/audit.jsonl"
        h=$(scratch_dir helpers) || exit $?
        chmod 0755 "$h"
        cp "$HELPERS/escape-probe" "$h/" && chmod 0755 "$h/escape-probe" || fail "cannot stage escape-probe"
        crun -v --trap-all --audit "$audit" --bind "$h:/h:ro" -- /h/escape-probe exec-flip checked
        expect_rc 0 "exec-flip"
        expect_contains "$OUT" "escape exec-flip: blocked" "the probe's verdict"
        if printf '%s\n' "$OUT" | grep -q ' 0 killed by the tracer'; then
                skip "the race was not hit in this run (nothing for the tracer to kill)"
        fi
        expect_contains "$ERR" "cordon: exec check: killed" "-v names the kill"
        expect_true "the audit log has an exec_mismatch record" grep -q '"reason":"exec_mismatch"' "$audit"
}

# The tracer holds init for the sandbox's life, and any other thread only from its trapped
# execve to that exec's event: a process that has been verified runs untraced, so its forks,
# signals and exit never wait for the tracer (sentry/exectrace.c).
it_test tracer_lets_go_after_verifying
tracer_lets_go_after_verifying() {
        local out="$IT_TMP/out" tracer init pid
        bg_cordon "$out" --trap-all -- sh -c 'echo up; sleep 30; : exec-release-probe'
        wait_until 10 grep -qx up "$out" || fail "the sandbox did not start: $(cat "$out")"
        tracer=$(pgrep -P "$BG_CORDON" -x cordon-exectrac | head -1)
        [ -n "$tracer" ] || fail "no exec tracer beside the sentry"
        pid=$(pgrep -f '^sh -c echo up; sleep 30; : exec-release-prob[e]' | head -1)
        [ -n "$pid" ] || fail "the sandboxed shell was not found"
        expect_eq "0" "$(awk '/^TracerPid:/ { print $2 }' "/proc/$pid/status")" "the shell's tracer after its exec"
        init=$(awk '/^PPid:/ { print $2 }' "/proc/$pid/status")
        expect_eq "$tracer" "$(awk '/^TracerPid:/ { print $2 }' "/proc/$init/status")" "init's tracer"
}

# With the tracer gone no exec can be verified: init (its tracee for the sandbox's life) is
# killed with it (PTRACE_O_EXITKILL), and with init every process of the sandbox.
it_test tracer_killed_ends_sandbox
tracer_killed_ends_sandbox() {
        local out="$IT_TMP/out" tracer rc
        bg_cordon "$out" --trap-all -- sh -c 'echo up; sleep 30; : exec-tracer-kill-probe'
        wait_until 10 grep -qx up "$out" || fail "the sandbox did not start: $(cat "$out")"
        tracer=$(pgrep -P "$BG_CORDON" -x cordon-exectrac | head -1)
        [ -n "$tracer" ] || fail "no exec tracer beside the sentry"
        kill -9 "$tracer"
        wait_until 5 sh -c "! pgrep -f '^sh -c echo up; sleep 30; : exec-tracer-kill-prob[e]' >/dev/null" ||
                fail "the sandbox's processes outlived the exec tracer"
        wait "$BG_PID"
        rc=$?
        expect_true "cordon ends with a failure (got $rc)" test "$rc" -ne 0
}

it_test exec_check_row
exec_check_row() {
        OUT=$("$CORDON" check 2>&1)
        RC=$?
        ERR=
        expect_match "$OUT" 'ptrace exec events +yes +required' "cordon check reports the exec tracer"
        crun --trap-all -- true
        expect_rc 0 "a sandbox starts with the tracer"
        crun -v --trap-all -- true
        expect_contains "$ERR" "verified at each exec event" "-v says exec is verified"
        crun -v -- true
        expect_contains "$ERR" "exec: native: the view decides alone" "-v says execs run natively"
        # no tracer beside the sentry once execs run natively
        local out="$IT_TMP/out"
        bg_cordon "$out" -- sh -c 'echo up; sleep 30; : exec-native-probe'
        wait_until 10 grep -qx up "$out" || fail "the sandbox did not start: $(cat "$out")"
        expect_eq "" "$(pgrep -P "$BG_CORDON" -x cordon-exectrac)" "an exec tracer with execs native"
        # an exec rule in the policy keeps every exec checked
        local pol="$IT_TMP/noexec.json"
        printf '{"filesystem": {"rules": [{"path": "/tmp/nx", "access": "read-write", "exec": false}]}}\n' >"$pol"
        crun -v --policy "$pol" -- true
        expect_contains "$ERR" "verified at each exec event" "-v with an exec rule: every exec checked"
}

# A host that refuses ptrace (here forced: CORDON_TEST_FORCE_FALLBACK=ptrace) leaves the exec
# tracer unable to seize init. The sentry takes the tracer's word only just before the start,
# so the set-up goes on beside it; the run must still be refused before anything of the
# command's runs, with the reason, unless --allow-unverified-exec asks for the weaker tier,
# which is then said.
it_test tracer_refused_fails_closed
tracer_refused_fails_closed() {
        CORDON_TEST_FORCE_FALLBACK=ptrace crun --trap-all -- sh -c '/bin/echo RAN'
        expect_rc 125 "a run whose exec tracer cannot seize init"
        expect_contains "$ERR" "cannot trace the sandbox's exec events (PTRACE_SEIZE: Operation not permitted)" \
                "saying why"
        expect_not_contains "$OUT" "RAN" "the command must not run"
        CORDON_TEST_FORCE_FALLBACK=ptrace crun --trap-all --allow-unverified-exec -- sh -c '/bin/echo RAN'
        expect_rc 0 "the same run with --allow-unverified-exec"
        expect_eq "RAN" "$OUT" "the command and its own exec run"
        expect_contains "$ERR" "exec is NOT verified after the fact" "the weaker tier is said"
        # execs native: nothing to verify, so a host without ptrace runs the default sandbox
        CORDON_TEST_FORCE_FALLBACK=ptrace crun -- sh -c '/bin/echo RAN'
        expect_rc 0 "execs native on a host that refuses ptrace"
        expect_eq "RAN" "$OUT" "the command and its own exec run"
}

it_main "$@"
