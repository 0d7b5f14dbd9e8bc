#!/bin/bash
# `cordon run -- CMD` as a drop-in for running CMD natively: everyday shell
# idioms and tools whose results under cordon must equal a native run's
# (output, exit status, files made), where nothing the default policy
# refuses is involved. Each test names the idiom a user would write.
#
#   CORDON=/path/to/cordon HELPERS=/path/to/build/tests/helpers TESTS_SRCDIR=/path/to/tests \
#       bash tests/integration/run-native.sh [REGEX...]

if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

IT_SCRIPT=$(readlink -f "${BASH_SOURCE[0]}")
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$IT_SCRIPT")/lib.sh"

# =============================================================================================
# stdio reopened by name

it_test stdio_pipes_reopened_by_name
stdio_pipes_reopened_by_name() {
        # /dev/stdin, /dev/stdout and /dev/stderr are links to /proc/self/fd:
        # opening them reopens the pipe cordon's caller made, which the
        # sandbox's user namespace does not map (EACCES before the fix)
        local errf="$IT_TMP/err"
        # shellcheck disable=SC2016
        OUT=$(printf 'in\n' | timeout -k 5 "$IT_CMD_TIMEOUT" "$CORDON" run -- \
                sh -c 'cat /dev/stdin; echo out > /dev/stdout; echo err > /dev/stderr; echo t | tee /dev/stderr' \
                2>"$errf" | cat)
        RC=$?
        ERR=$(cat "$errf")
        expect_rc 0 "reopening stdio by name"
        expect_eq $'in\nout\nt' "$OUT" "stdout"
        # (each open of /dev/stderr truncates the file, natively too)
        expect_eq 't' "$ERR" "stderr, a file"
}

it_test stdout_file_reopened_by_name
stdout_file_reopened_by_name() {
        # `cmd > log 2>&1` where cmd writes to /dev/stdout and /dev/stderr:
        # the log is cordon's caller's file, outside the view and not the
        # sandbox's user's; as natively, each open truncates unless >>
        # (and spelled relative to /dev/fd or /proc/self)
        # shellcheck disable=SC2016
        local script='echo a > /dev/stdout; echo b >> /dev/stdout; echo c >> /dev/stderr; echo d >&2
                (cd /dev/fd && echo e >> 1); (cd /proc/self && echo f >> fd/2); (cd /proc/self/fd && echo g >> 1)'
        sh -c "$script" >"$IT_TMP/native" 2>&1
        timeout -k 5 "$IT_CMD_TIMEOUT" "$CORDON" run -- sh -c "$script" >"$IT_TMP/log" 2>&1
        RC=$?
        ERR=
        expect_rc 0 "writes to /dev/stdout and /dev/stderr"
        expect_eq "$(cat "$IT_TMP/native")" "$(cat "$IT_TMP/log")" "the log, as natively"
        # the same where a hidden rule has every path call emulated (the
        # check of a creating open's symlinks read /proc/PID/fd/1's text,
        # the caller's path, and looked for it in the view: ENOENT)
        printf '{"filesystem": {"rules": [{"path": "/srv", "access": "hidden"}]}}\n' >"$IT_TMP/hidden.json"
        timeout -k 5 "$IT_CMD_TIMEOUT" "$CORDON" run --policy "$IT_TMP/hidden.json" -- sh -c "$script" \
                >"$IT_TMP/log" 2>&1
        RC=$?
        expect_rc 0 "writes to /dev/stdout and /dev/stderr, a hidden rule in force"
        expect_eq "$(cat "$IT_TMP/native")" "$(cat "$IT_TMP/log")" "the log, a hidden rule in force"
        # the sentry's reopen never widens: stdin open for reading cannot be
        # written where the file's owner is not the sandbox's (run by root;
        # run by its owner, the file is the command's own to open, as natively)
        if [ "$(id -u)" = 0 ]; then
                timeout -k 5 "$IT_CMD_TIMEOUT" "$CORDON" run -- sh -c 'echo x > /dev/stdin' <"$IT_TMP/log" 2>/dev/null
                RC=$?
                expect_rc 2 "writing stdin, open for reading"
                expect_eq "$(cat "$IT_TMP/native")" "$(cat "$IT_TMP/log")" "the log after that"
        fi
}

it_test dev_fd_relative_spelling
dev_fd_relative_spelling() {
        # from /dev, fd/3 and stdout are /dev/fd/3 and /dev/stdout (the
        # sentry's worker followed them to its own /proc/self: ENOENT)
        # shellcheck disable=SC2016
        local script='cd /dev; exec 3>"$1"; echo x > fd/3; echo rc=$?; echo y >> fd/3; exec 4<"$1"; cat fd/4; echo z > stdout'
        local native
        native=$(bash -c "$script" sh "$IT_TMP/native" 2>&1 </dev/null | cat)
        crun -- bash -c "$script" sh /tmp/f </dev/null
        expect_rc 0 "writes through fd/3 from /dev"
        expect_eq "$native" "$OUT" "output, as natively"
}

it_test relative_writes_follow_cd
relative_writes_follow_cd() {
        # A relative write open is left to the kernel when the directory it
        # starts from is neither procfs nor the view's /dev; that directory
        # is cached per thread and dropped by each chdir and fchdir (trapped
        # for that, notify/umask.c). Writes from /proc/self and /dev after
        # cached ones in a plain directory, by cd and by fchdir, must give
        # what they give natively and with every open emulated (--trap-all).
        # shellcheck disable=SC2016
        local script='cd "$1" && for i in 1 2 3; do echo $i > f$i; done; cat f1 f2 f3
                cd /proc/self && echo renamed > comm && cat comm
                cd /dev && echo x > null && echo null ok
                cd "$1" && echo after > f4 && cat f4
                python3 -c "import os, sys
os.chdir(sys.argv[1]); open(\"f5\", \"w\").write(\"five\\n\")
os.fchdir(os.open(\"/proc/self\", os.O_RDONLY | os.O_DIRECTORY)); open(\"comm\", \"w\").write(\"py\\n\")
print(open(\"comm\").read().strip()); os.chdir(sys.argv[1]); print(open(\"f5\").read().strip())" "$1"'
        local native stats
        mkdir -p "$IT_TMP/nat" || fail "mkdir"
        native=$(sh -c "$script" sh "$IT_TMP/nat" 2>&1 </dev/null)
        stats=$(scratch_dir cwdstats)/s.json
        crun --stats "$stats" -- sh -c "$script" sh /tmp
        expect_rc 0 "exit status"
        expect_eq "$native" "$OUT" "output, as natively"
        crun --trap-all -- sh -c "$script" sh /tmp
        expect_rc 0 "exit status, every open emulated"
        expect_eq "$native" "$OUT" "output, every open emulated"
        # the cache served the repeated creates in the plain directory
        expect_eq "ok" "$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
u, t = d["umaskCache"], d["trappedSyscalls"]
print("ok" if u["cwdHits"] >= 2 and u["cwdMisses"] >= 3 and t["chdir"] >= 3 and t["fchdir"] >= 1 else d)' "$stats")" \
                "--stats: the working directory's cache hit, and chdir and fchdir were noted"
}

it_test root_changes_its_0555_directory
root_changes_its_0555_directory() {
        [ "$(id -u)" = 0 ] || skip "needs the sandbox's range of ids (cordon run as root)"
        # The sandbox's root holds CAP_DAC_OVERRIDE in its namespace: as
        # natively, it makes and removes names in a 0555 directory of its
        # own (mkfifo is always emulated; the rest under --trap-all). The
        # sentry's worker acted without capabilities: EACCES before.
        # shellcheck disable=SC2016
        local script='mkdir /tmp/d && chmod 555 /tmp/d && cd /tmp/d || exit 9
                n=0; mkfifo p || n=$((n+1)); mkdir e/ || n=$((n+1)); : > f || n=$((n+1))
                ln -s x s || n=$((n+1)); ln f h || n=$((n+1)); mv f g || n=$((n+1))
                rm g || n=$((n+1)); rmdir e || n=$((n+1)); echo "failed $n"; ls'
        local opt
        for opt in --no-tty --trap-all; do
                crun "$opt" -- sh -c "$script"
                expect_rc 0 "changes in a 0555 directory ($opt)"
                expect_eq $'failed 0\nh\np\ns' "$OUT" "what they made ($opt)"
        done
        # another user holds no capability: refused as natively
        crun --trap-all --user 1000 -- sh -c 'mkdir /tmp/d && chmod 555 /tmp/d && mkfifo /tmp/d/p; mkdir /tmp/d/e; ls /tmp/d'
        expect_rc 0 "as uid 1000"
        expect_eq "" "$OUT" "what uid 1000 made in its 0555 directory"
        expect_contains "$ERR" "Permission denied" "uid 1000's error"
}

it_test tty_relay_raw
tty_relay_raw() {
        # On a terminal the command gets its own pty and cordon relays it
        # with the caller's terminal in raw mode: output bytes as natively
        # ("hi\r\n"), not translated twice ("hi\r\r\n": the sentry's
        # filter refused getpgrp, so it never took the terminal raw).
        command -v script >/dev/null || skip "script (util-linux) not installed"
        local native
        # (script's stdin stays open until the command is done: at its end
        # script sends the terminal an end of file, which raw mode shows)
        native=$(sleep 2 | script -qec "echo hi" /dev/null | od -An -c | tr -s ' ')
        OUT=$(sleep 2 | script -qec "$CORDON run -- echo hi" /dev/null | od -An -c | tr -s ' ')
        RC=$?
        ERR=
        expect_rc 0 "script -c cordon run"
        expect_eq "$native" "$OUT" "the bytes on the terminal"
}

it_test deep_tree_listed_by_fds
deep_tree_listed_by_fds() {
        # A tree deeper than PATH_MAX, made, listed and removed through
        # directory fds (as rm -r and shutil.rmtree do). Under --trap-all
        # the sentry serves getdents and could not name such a directory:
        # EACCES before.
        local script='import os, shutil
fd = os.open("/tmp", os.O_RDONLY)
for i in range(22):
    os.mkdir("d" * 200, dir_fd=fd)
    fd = os.open("d" * 200, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
    os.listdir(fd)
shutil.rmtree("/tmp/" + "d" * 200)
print("listed and removed", os.listdir("/tmp"))'
        crun --trap-all -- python3 -c "$script"
        expect_rc 0 "a tree deeper than PATH_MAX under --trap-all"
        expect_eq "listed and removed []" "$OUT" "its output"
}

it_test root_access_checks_with_its_capabilities
root_access_checks_with_its_capabilities() {
        [ "$(id -u)" = 0 ] || skip "needs the sandbox's range of ids (cordon run as root)"
        # access(2) as root: W_OK holds on a 0444 file of its own, X_OK only
        # where some execute bit is set; another user gets no override. The
        # emulated check (--trap-all) ran without capabilities: W_OK
        # failed before.
        # shellcheck disable=SC2016
        local script='echo x > /tmp/ro && chmod 444 /tmp/ro && cd /tmp
                test -w ro; w=$?; test -r ro; r=$?; test -x ro; x=$?; chmod 555 ro; test -x ro; x2=$?
                chmod 444 ro; su nobody -s /bin/sh -c "test -w /tmp/ro"; n=$?; echo "$w $r $x $x2 $n"'
        local opt
        for opt in --no-tty --trap-all; do
                crun "$opt" -- sh -c "$script"
                expect_rc 0 "access checks ($opt)"
                expect_eq "0 0 1 0 1" "$OUT" "W_OK, R_OK, X_OK, X_OK of 0555, nobody's W_OK ($opt)"
        done
}

it_test root_walks_into_another_users_0700_directory
root_walks_into_another_users_0700_directory() {
        [ "$(id -u)" = 0 ] || skip "needs the sandbox's range of ids (cordon run as root)"
        # Root's CAP_DAC_OVERRIDE lets it into uid 1000's 0700 directory and
        # write uid 1000's 0400 file. Emulated (--trap-all), the worker
        # walked and looked names up with no capability: stat, readlink,
        # cd, rm, truncate, access, utimes and lgetxattr there failed.
        # shellcheck disable=SC2016
        local script='mkdir /tmp/u && echo x > /tmp/u/f && ln -s f /tmp/u/l && mkdir /tmp/u/d &&
                echo y > /tmp/u/g && python3 -c "import os; os.setxattr(\"/tmp/u/g\", \"user.k\", b\"v\")" &&
                chown -R 1000:1000 /tmp/u && chmod 700 /tmp/u && chmod 400 /tmp/u/f || exit 9
                n=0; for c in "cat /tmp/u/f" "stat /tmp/u/f" "stat -L /tmp/u/l" "readlink /tmp/u/l" "ls -l /tmp/u" \
                        "cd /tmp/u" "truncate -s 0 /tmp/u/f" "test -w /tmp/u/f" "touch -c /tmp/u/f" "rm -r /tmp/u/d"; do
                        sh -c "$c" >/dev/null 2>&1 || { n=$((n+1)); echo "failed: $c"; }
                done
                python3 -c "import os; os.getxattr(\"/tmp/u/g\", \"user.k\", follow_symlinks=False)" ||
                        { n=$((n+1)); echo "failed: lgetxattr"; }
                echo "failed $n"'
        crun --trap-all -- sh -c "$script"
        expect_rc 0 "root in a 0700 directory of uid 1000 (--trap-all)"
        expect_eq "failed 0" "$OUT" "calls that failed"
}

it_test o_tmpfile_linked
o_tmpfile_linked() {
        # An unnamed file (O_TMPFILE) given its name once written, by
        # linkat(fd, "", AT_EMPTY_PATH) and by linkat of /proc/self/fd/N:
        # the sentry opens O_TMPFILE files, and the kernel refused the
        # child's own AT_EMPTY_PATH link of them (ENOENT) before.
        local script='import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for d in ("/tmp", os.getcwd()):
    fd = os.open(d, os.O_TMPFILE | os.O_RDWR, 0o600)
    os.write(fd, b"t")
    a = libc.linkat(fd, b"", -100, (d + "/empty").encode(), 0x1000)
    b = libc.linkat(-100, ("/proc/self/fd/%d" % fd).encode(), -100, (d + "/follow").encode(), 0x400)
    print(a, b, open(d + "/empty").read(), sorted(x for x in os.listdir(d) if x in ("empty", "follow")))'
        local opt
        for opt in --no-tty --trap-all; do
                rm -f "$IT_TMP/empty" "$IT_TMP/follow"
                OUT=$(cd "$IT_TMP" && timeout -k 5 "$IT_CMD_TIMEOUT" "$CORDON" run -w "$opt" -- python3 -c "$script" 2>&1)
                RC=$?
                ERR=
                expect_rc 0 "O_TMPFILE linked ($opt)"
                expect_eq $'0 0 t [\'empty\', \'follow\']\n0 0 t [\'empty\', \'follow\']' "$OUT" "links made ($opt)"
        done
}

it_test execute_only_files_in_a_bind
execute_only_files_in_a_bind() {
        [ "$(id -u)" = 0 ] || skip "needs another host user's directory (cordon run as root)"
        # Root's 0711 copies of ls and busybox in a read-write bind of
        # another user's directory: root's files are unmapped there, so
        # the command may execute them but nobody may read them, not even
        # the exec tracer (host root, through the idmapped bind). Under
        # --trap-all the tracer killed the process at its exec event (the
        # machine "cannot be checked"), and once it ran, its calls on its
        # own fds (ld.so's fstat, ls's opendir) failed with EACCES:
        # /proc/TID/fd of such a process is host root's.
        local d
        d=$(scratch_dir xonly)
        cp /bin/ls "$d/xls" && cp /bin/cat "$d/xcat" && echo hello >"$d/f" && mkdir "$d/sub" &&
                chmod 0711 "$d/xls" "$d/xcat" && chown 4321:4321 "$d" || fail "cannot make the directory"
        # shellcheck disable=SC2016
        local script='cd /x && ./xls -1 . && ./xcat f && ./xls -d sub; echo "rc=$?"'
        local native
        native=$(cd "$d" && sh -c "${script#cd /x && }" 2>&1)
        local opt
        for opt in --no-tty --trap-all; do
                crun "$opt" --bind "$d:/x" -- sh -c "$script"
                expect_rc 0 "execute-only files ($opt)"
                expect_eq "$native" "$OUT" "their output, as natively ($opt)"
        done
}

it_test fifo_open_of_a_killed_opener
fifo_open_of_a_killed_opener() {
        need_in_sandbox python3
        # A FIFO's open waits for its other end. Emulated (--trap-all, a
        # hidden rule), the sentry's worker did the waiting and went on
        # after the opener was killed: the FIFO then had a reader or a
        # writer for nobody, so the next lone reader read an end-of-file
        # at once and a non-blocking writer's open succeeded (ENXIO
        # natively), and the worker was held until a peer came.
        # shellcheck disable=SC2016
        local script='cd /tmp && mkfifo p || exit 9
timeout 0.3 sh -c "echo x > p"; echo "killed writer $?"
timeout 0.3 cat p; echo "reader alone $?"
timeout -s KILL 0.3 cat p 2>/dev/null; echo "killed reader $?"
python3 -c "
import os, errno
try: os.open(\"p\", os.O_WRONLY | os.O_NONBLOCK); print(\"non-blocking writer opened\")
except OSError as e: print(\"non-blocking writer\", errno.errorcode[e.errno])"
(sleep 0.3; timeout 5 cat p; echo "reader $?") & echo y > p; wait'
        local want=$'killed writer 124\nreader alone 124\nkilled reader 137\nnon-blocking writer ENXIO\ny\nreader 0'
        printf '{"filesystem": {"rules": [{"path": "/srv", "access": "hidden"}]}}\n' >"$IT_TMP/hidden.json"
        local opt
        for opt in --trap-all "--policy=$IT_TMP/hidden.json" --no-tty; do
                crun "$opt" -- sh -c "$script"
                expect_rc 0 "FIFO opens ($opt)"
                expect_eq "$want" "$OUT" "as natively ($opt)"
        done
}

it_test fifo_open_interrupted_by_a_signal
fifo_open_interrupted_by_a_signal() {
        # A FIFO's open waits until a writer comes; a signal its opener
        # handles ends the wait natively: the handler runs, then the open is
        # restarted (SA_RESTART) or fails with EINTR. Emulated (--trap-all,
        # a hidden rule) the caller waited killably for the sentry, and the
        # handler never ran while the open waited (notify/signal.c). The
        # helper's writer comes only once the handler has run ("late"
        # after 3 s); the opener is the only thread, the leader with an
        # idle second thread, a second thread (the main one blocking the
        # signal, or the signal sent to it alone), or a second thread while
        # the main one takes the signal (the open goes on waiting).
        if [ -z "${HELPERS:-}" ] || [ ! -x "$HELPERS/fifosig" ]; then
                skip "helper programs not built (make tests/helpers/fifosig)"
        fi
        local h="$IT_TMP/fifosig-bin" d
        mkdir -p "$h" && chmod 0755 "$h" && cp "$HELPERS/fifosig" "$h/" && chmod 0755 "$h/fifosig" ||
                fail "cannot stage fifosig"
        # shellcheck disable=SC2016
        local script='cd /tmp && mkfifo p || exit 9
for m in main idle thread tkill other; do for r in "" -r; do echo "$m$r: $(/h/fifosig $r $m p | tr "\n" " ")"; done; done'
        local native want
        d=$(scratch_dir fifosig)
        native=$(cd "$d" && PATH=$h:$PATH sh -c "$(printf '%s' "${script#cd /tmp && }" | sed 's#/h/#'"$h"'/#g')" 2>&1)
        want='main: open: EINTR read: x 
main-r: open: ok read: x 
idle: open: EINTR read: x 
idle-r: open: ok read: x 
thread: open: EINTR read: x 
thread-r: open: ok read: x 
tkill: open: EINTR read: x 
tkill-r: open: ok read: x 
other: open: ok read: x 
other-r: open: ok read: x '
        expect_eq "$want" "$native" "natively"
        printf '{"filesystem": {"rules": [{"path": "/srv", "access": "hidden"}]}}\n' >"$IT_TMP/hidden.json"
        local opt
        for opt in --trap-all "--policy=$IT_TMP/hidden.json"; do
                crun "$opt" --bind "$h:/h:ro" -- sh -c "$script"
                expect_rc 0 "FIFO opens ($opt)"
                expect_eq "$want" "$OUT" "as natively ($opt)"
        done
}

it_test fifo_opener_stopped_and_continued
fifo_opener_stopped_and_continued() {
        # SIGSTOP ends a FIFO's open natively: the opener stops (T), and
        # once continued the open is restarted and meets its writer.
        # Emulated it stayed in the sentry's wait, not stopped (D).
        # shellcheck disable=SC2016
        local script='cd /tmp && mkfifo p || exit 9
state() { s=$(cat /proc/$1/stat) && s=${s##*) } && echo "${s%% *}"; }
until_state() { i=0; while [ "$(state $1)" != $2 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; state $1; }
cat p & c=$!
until_state $c S >/dev/null
kill -STOP $c; echo "stopped: $(until_state $c T)"
kill -CONT $c; echo "continued: $(until_state $c S)"
echo y > p; wait $c; echo "cat $?"'
        local native d
        d=$(scratch_dir fifostop)
        native=$(cd "$d" && sh -c "${script#cd /tmp && }" 2>&1)
        expect_eq $'stopped: T\ncontinued: S\ny\ncat 0' "$native" "natively"
        crun --trap-all -- sh -c "$script"
        expect_rc 0 "exit status"
        expect_eq "$native" "$OUT" "as natively"
}

it_test fifo_open_interrupted_in_python
fifo_open_interrupted_in_python() {
        need_in_sandbox python3
        # Python's handlers (no SA_RESTART): one that raises ends the open
        # (^C's KeyboardInterrupt, an alarm's exception); one that returns
        # has the open tried again (PEP 475), which a writer the handler
        # woke then completes.
        # shellcheck disable=SC2016
        local script='cd /tmp && mkfifo p || exit 9
python3 -c "
import os, select, signal, time
class Alarm(Exception): pass
def alarm(s, f): raise Alarm()
signal.signal(signal.SIGALRM, alarm)
signal.setitimer(signal.ITIMER_REAL, 0.2)
try: open(\"p\"); print(\"opened\")
except Alarm: print(\"alarm\")
if os.fork() == 0:
    time.sleep(0.2); os.kill(os.getppid(), signal.SIGINT); os._exit(0)
try: open(\"p\"); print(\"opened\")
except KeyboardInterrupt: print(\"interrupt\")
os.wait()
r, w = os.pipe()
def woke(s, f): os.write(w, b\"!\")
signal.signal(signal.SIGALRM, woke)
if os.fork() == 0:
    ok = select.select([r], [], [], 3)[0]
    fd = os.open(\"p\", os.O_WRONLY); os.write(fd, b\"x\" if ok else b\"late\"); os._exit(0)
signal.setitimer(signal.ITIMER_REAL, 0.2)
print(open(\"p\").read()); os.wait()
"'
        local native d
        d=$(scratch_dir fifopy)
        native=$(cd "$d" && sh -c "${script#cd /tmp && }" 2>&1)
        expect_eq $'alarm\ninterrupt\nx' "$native" "natively"
        crun --trap-all -- sh -c "$script"
        expect_rc 0 "exit status"
        expect_eq $'alarm\ninterrupt\nx' "$OUT" "as natively"
}

# the one-letter state of process PID (R, S, T, ...)
proc_state() {
        local rest
        read -r rest 2>/dev/null <"/proc/$1/stat" || return 1
        rest=${rest##*) }
        printf '%s\n' "${rest%% *}"
}

# the host pid of the sandbox's process running COMM (a descendant of PID)
descendant_named() {
        local pid=$1 comm=$2 c
        for c in $(it_children "$pid"); do
                if [ "$(cat "/proc/$c/comm" 2>/dev/null)" = "$comm" ]; then
                        printf '%s\n' "$c"
                        return 0
                fi
                descendant_named "$c" "$comm" && return 0
        done
        return 1
}

job_is() {
        local s
        for s in "$SH_PID" "$SLEEP_PID" "$BG_CORDON"; do
                [ "$(proc_state "$s")" = "$1" ] || return 1
        done
}

it_test stopped_as_a_job
stopped_as_a_job() {
        # Ctrl-Z at the host's terminal (or kill -TSTP) stops cordon and the
        # command's whole job, and fg/bg (SIGCONT) continues both, as a
        # native job. cordon used to stop alone and the command ran on: it
        # forwarded no SIGTSTP, and the command's group, leading a session
        # of its own, was orphaned (the kernel discards a stop sent there).
        bg_cordon "$IT_TMP/out" -- sh -c 'sleep 1000 & wait'
        wait_until 10 eval 'SLEEP_PID=$(descendant_named "$BG_CORDON" sleep)' ||
                fail "the command's sleep did not start"
        SH_PID=$(descendant_named "$BG_CORDON" sh)
        kill -TSTP "$BG_CORDON"
        wait_until 10 job_is T
        expect_true "cordon, sh and its sleep stopped ($(proc_state "$BG_CORDON") $(proc_state "$SH_PID") $(proc_state "$SLEEP_PID"))" job_is T
        kill -CONT "$BG_CORDON"
        wait_until 10 job_is S
        expect_true "all three continued ($(proc_state "$BG_CORDON") $(proc_state "$SH_PID") $(proc_state "$SLEEP_PID"))" job_is S
        kill -TERM "$BG_CORDON"
}

it_test ctrl_c_reaches_the_whole_job
ctrl_c_reaches_the_whole_job() {
        command -v python3 >/dev/null || skip "no python3 on the host to drive a terminal"
        # Ctrl-C at the host's terminal (stdout a file: no pty of the
        # sandbox's) interrupts the command's whole job, as the terminal
        # does natively: bash waiting for its sleep dies of it with the
        # sleep. cordon passed it to the command alone, so the sleep ran
        # out, bash took the interrupt as handled, and went on: "after",
        # exit 0. (kill -INT sent to cordon still goes to the command alone.)
        # shellcheck disable=SC2016
        OUT=$(python3 - "$CORDON" "$IT_TMP/job" <<'PY'
import os, pty, sys, time
cordon, out = sys.argv[1], sys.argv[2]
fo = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
pid, fd = pty.fork()
if pid == 0:
    os.dup2(fo, 1)
    os.execv(cordon, [cordon, "run", "--", "bash", "-c", "echo started; sleep 20; echo after"])
deadline = time.time() + 20
while time.time() < deadline and "started" not in open(out).read():
    time.sleep(0.05)
time.sleep(0.2)  # bash is in its wait for the sleep by now
os.write(fd, b"\x03")
_, st = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(st), open(out).read().split())
PY
        )
        RC=$?
        ERR=
        expect_rc 0 "the terminal's driver"
        expect_eq "130 ['started']" "$OUT" "cordon's status and the job's output"
}

it_main "$@"
