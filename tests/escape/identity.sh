#!/bin/bash
# Escape attempts against identity (issue #18): a capability the sandbox's root holds inside its
# user namespace must not be effective on anything of the host's, and two sandboxes running at
# once, sharing one read-write bind, must not read, write or signal each other's private state.
# Every attempt runs in a root-started `cordon run` and prints its own result line, judged as in
# tests/escape/run.sh: "escape NAME: blocked (...)" passes; GOT THROUGH, FAILED (a precondition
# the attempt needs did not hold, e.g. the capability is not held inside at all, so the attempt
# would prove nothing), a probe error or a missing line fails.
#
# Host-side fixtures (all removed on exit), in a fresh root-owned 0755 directory under /var/tmp:
#   bind/rootonly       root's, mode 0000 (the control: CAP_DAC_OVERRIDE inside reads it)
#   bind/theirs         host uid 4242's, 0600, a secret
#   bind/theirs-dir/f   in a 4242-owned 0700 directory, the same secret
#   bind/nobodys        host uid 65534's, 0600, a second secret
#   three host `sleep`s, as root, 65534 and 4242, whose pids the attempts are given
# After the attempts the runner checks the host side itself: the files' owners, modes and
# contents unchanged, the sleeps alive, no set-id, capability or device file in the bind, and
# neither secret in any output.
#
#   CORDON=/path/to/cordon bash tests/escape/identity.sh

if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

START=$(date +%s)
PASSED=0
FAILED=0
FAILED_NAMES=()

skip() {
        echo "identity escape tests skipped: $*"
        echo "0 passed, 0 failed"
        exit 77
}

: "${CORDON:?CORDON must name the cordon binary}"
[ -x "$CORDON" ] || skip "no cordon at $CORDON"
[ "$(id -u)" = 0 ] || skip "the attempts need a root-started sandbox and host files of other uids"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "no /usr/bin/python3 (the attempts are written in python)"
command -v setpriv >/dev/null || skip "no setpriv(1) for the host processes of other uids"

WORK=
PIDS=()
cleanup() {
        local p
        for p in "${PIDS[@]}"; do
                kill "$p" 2>/dev/null
        done
        for p in "${PIDS[@]}"; do
                wait "$p" 2>/dev/null
        done
        [ -n "$WORK" ] && rm -rf -- "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

rand() { od -An -N16 -tx1 /dev/urandom | tr -d ' \n'; }

WORK=$(mktemp -d /var/tmp/cordon-esc-id.XXXXXX) || skip "cannot create a work directory"
chmod 0755 "$WORK"
IN=$WORK/in
BIND=$WORK/bind
mkdir -p "$IN" "$BIND/theirs-dir" && chmod 0755 "$IN" "$BIND" || skip "cannot create the fixtures"
SECRET="cordon-id-secret-$(rand)"
NOBODY_SECRET="cordon-id-nobody-$(rand)"
printf 'control\n' >"$BIND/rootonly" && chmod 0000 "$BIND/rootonly"
printf '%s\n' "$SECRET" >"$BIND/theirs" && chown 4242:4242 "$BIND/theirs" && chmod 0600 "$BIND/theirs"
printf '%s\n' "$SECRET" >"$BIND/theirs-dir/f" && chown 4242:4242 "$BIND/theirs-dir/f" && chmod 0600 "$BIND/theirs-dir/f"
chown 4242:4242 "$BIND/theirs-dir" && chmod 0700 "$BIND/theirs-dir"
printf '%s\n' "$NOBODY_SECRET" >"$BIND/nobodys" && chown 65534:65534 "$BIND/nobodys" && chmod 0600 "$BIND/nobodys"

# the host's state of the fixtures, compared after the attempts
fixture_state() {
        (cd "$BIND" && stat -c '%n %u:%g %a %s %Y' rootonly theirs theirs-dir theirs-dir/f nobodys &&
                sha256sum rootonly theirs theirs-dir/f nobodys)
}
BEFORE=$(fixture_state)

timeout 300 sleep 300 &
PIDS+=($!)
timeout 300 setpriv --reuid=65534 --regid=65534 --clear-groups -- sleep 300 &
PIDS+=($!)
timeout 300 setpriv --reuid=4242 --regid=4242 --clear-groups -- sleep 300 &
PIDS+=($!)
sleep 0.3
# the sleeps themselves (children of the timeouts)
HOST_PIDS=()
for p in "${PIDS[@]}"; do
        for c in /proc/[0-9]*/stat; do
                read -r rest 2>/dev/null <"$c" || continue
                rest=${rest##*) }
                read -r _ ppid _ <<<"$rest"
                [ "$ppid" = "$p" ] && HOST_PIDS+=("$(basename "$(dirname "$c")")")
        done
done
HOST_PIDS+=("$$")
cat >"$IN/probe.py" <<'PROBE'
# identity escape attempts, run inside a root-started sandbox: each prints one line
# "escape NAME: blocked (...)", "escape NAME: GOT THROUGH (...)" or "escape NAME: FAILED (...)"
import ctypes, errno, os, shutil, signal, stat, subprocess, sys, tarfile, io

name = sys.argv[1]
args = sys.argv[2:]
libc = ctypes.CDLL(None, use_errno=True)

def caps():
    for line in open("/proc/self/status"):
        if line.startswith("CapEff:"):
            return int(line.split()[1], 16)
    return 0

CAP = {"CHOWN": 0, "DAC_OVERRIDE": 1, "FOWNER": 3, "FSETID": 4, "KILL": 5, "SETGID": 6, "SETUID": 7, "MKNOD": 27, "SETFCAP": 31}

def result(kind, why):
    print("escape %s: %s (%s)" % (name, kind, why), flush=True)
    sys.exit(0 if kind == "blocked" else 1)

def need_caps(*names):
    have = caps()
    missing = [n for n in names if not have & (1 << CAP[n])]
    if missing:
        result("FAILED", "precondition: the sandbox's root holds no %s (CapEff %#x), so the attempt proves nothing"
               % (", ".join("CAP_" + n for n in missing), have))

def err(e):
    return errno.errorcode.get(e.errno, str(e.errno))

def try_read(path):
    try:
        with open(path, "rb") as f:
            return f.read(200)
    except OSError as e:
        return err(e)

if name == "dac-override-unmapped":
    # /b/rootonly: mode 0000, the bind owner's (mapped: root inside); /b/theirs: host uid 4242,
    # 0600 (unmapped); /b/theirs-dir: 4242, 0700
    need_caps("DAC_OVERRIDE")
    ctl = try_read("/b/rootonly")
    if not isinstance(ctl, bytes):
        result("FAILED", "control: CAP_DAC_OVERRIDE does not even read the bind owner's mode-0000 file (%s)" % ctl)
    got = []
    r = try_read("/b/theirs")
    if isinstance(r, bytes):
        got.append("read /b/theirs")
    try:
        os.listdir("/b/theirs-dir"); got.append("listed /b/theirs-dir")
    except OSError:
        pass
    r = try_read("/b/theirs-dir/f")
    if isinstance(r, bytes):
        got.append("read /b/theirs-dir/f")
    try:
        fd = os.open("/b/theirs", os.O_WRONLY | os.O_APPEND); os.write(fd, b"x"); os.close(fd); got.append("appended to /b/theirs")
    except OSError:
        pass
    if got:
        result("GOT THROUGH", ", ".join(got))
    result("blocked", "CAP_DAC_OVERRIDE held and effective on the bind owner's files, not on host uid 4242's: read, list, append refused")

if name == "chown-fowner-unmapped":
    need_caps("CHOWN", "FOWNER")
    got = []
    for what, fn in [("chown 0:0", lambda: os.chown("/b/theirs", 0, 0)), ("chown 1234", lambda: os.chown("/b/theirs", 1234, -1)),
                     ("chmod 0644", lambda: os.chmod("/b/theirs", 0o644)), ("utime", lambda: os.utime("/b/theirs", (0, 0))),
                     ("rename", lambda: os.rename("/b/theirs-dir/f", "/b/stolen")),
                     ("unlink in 4242's 0700 dir", lambda: os.unlink("/b/theirs-dir/f"))]:
        try:
            fn(); got.append(what)
        except OSError:
            pass
    if got:
        result("GOT THROUGH", "on host uid 4242's file: " + ", ".join(got))
    result("blocked", "CAP_CHOWN and CAP_FOWNER held; chown, chmod, utime, rename, unlink of host uid 4242's files refused")

if name == "setuid-host-nobody":
    # /b/nobodys: host uid 65534's, 0600; the sandbox's uid 65534 is another host uid
    got = []
    r = try_read("/b/nobodys")
    if isinstance(r, bytes):
        got.append("read as the sandbox's root")
    pid = os.fork()
    if pid == 0:
        try:
            os.setgid(65534); os.setuid(65534)
        except OSError as e:
            os._exit(3)
        os._exit(0 if isinstance(try_read("/b/nobodys"), bytes) else 2)
    _, st = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(st)
    if code == 0:
        got.append("read after setuid(65534)")
    if got:
        result("GOT THROUGH", "host uid 65534's 0600 file: " + ", ".join(got))
    if code == 3:
        result("FAILED", "precondition: setuid(65534) inside failed, so CAP_SETUID was not tried (the direct read was refused)")
    result("blocked", "setuid(65534) inside works, and neither root nor uid 65534 inside reads host uid 65534's 0600 file")

if name == "kill-host":
    need_caps("KILL")
    got = []
    for p in [int(x) for x in args]:
        for sig in (0, signal.SIGKILL):
            try:
                os.kill(p, sig); got.append("kill(%d, %d)" % (p, sig))
            except OSError:
                pass
        try:
            fd = os.pidfd_open(p); got.append("pidfd_open(%d)" % p); os.close(fd)
        except OSError:
            pass
    if got:
        result("GOT THROUGH", ", ".join(got))
    result("blocked", "CAP_KILL held; kill(0), kill(SIGKILL) and pidfd_open of %d host pids (root, 65534, 4242) all failed" % len(args))

if name == "special-files-in-bind":
    # the bind must be writable at all for this to mean anything
    try:
        with open("/b/plain", "w") as f:
            f.write("plain\n")
    except OSError as e:
        result("FAILED", "precondition: cannot create a plain file in the rw bind of a root-owned directory (%s)" % err(e))
    made = []   # calls that did not fail
    shutil.copy("/bin/true", "/b/sh")
    os.chmod("/b/sh", 0o755)
    def attempt(what, fn):
        try:
            fn(); made.append(what)
        except OSError as e:
            if e.errno != errno.EPERM:
                made.append("%s (%s, not EPERM)" % (what, err(e)))
    attempt("fchmodat 04755", lambda: os.chmod("/b/sh", 0o4755))
    attempt("fchmodat 02755", lambda: os.chmod("/b/sh", 0o2755))
    def fchmod_fd():
        fd = os.open("/b/sh", os.O_RDONLY)
        try:
            os.fchmod(fd, 0o6755)
        finally:
            os.close(fd)
    attempt("fchmod on an fd 06755", fchmod_fd)
    def chmod_proc_fd():
        fd = os.open("/b/sh", os.O_PATH)
        try:
            os.chmod("/proc/self/fd/%d" % fd, 0o4755)
        finally:
            os.close(fd)
    attempt("chmod via /proc/self/fd of an O_PATH fd", chmod_proc_fd)
    def creat_suid():
        fd = os.open("/b/created", os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o4755)
        os.close(fd)
        if os.stat("/b/created").st_mode & 0o6000:
            raise SystemError
    try:
        creat_suid()
    except OSError as e:
        if e.errno != errno.EPERM:
            made.append("open(O_CREAT, 04755) (%s)" % err(e))
    except SystemError:
        made.append("open(O_CREAT, 04755) made a setuid file")
    attempt("setxattr security.capability",
            lambda: os.setxattr("/b/sh", "security.capability",
                                bytes.fromhex("0100000200200000000000000000000000000000")))
    attempt("mknod c 1 3", lambda: os.mknod("/b/null", 0o666 | stat.S_IFCHR, os.makedev(1, 3)))
    attempt("mknod b 7 0", lambda: os.mknod("/b/loop", 0o666 | stat.S_IFBLK, os.makedev(7, 0)))
    # tar -p of an archive holding a setuid-root and a setgid file
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for n, mode in (("tar-suid", 0o4755), ("tar-sgid", 0o2755)):
            data = open("/bin/true", "rb").read()
            ti = tarfile.TarInfo(n); ti.size = len(data); ti.mode = mode; ti.uid = ti.gid = 0
            tf.addfile(ti, io.BytesIO(data))
    open("/tmp/suid.tar", "wb").write(buf.getvalue())
    r = subprocess.run(["tar", "-xpf", "/tmp/suid.tar", "-C", "/b"], capture_output=True, text=True)
    for n in ("tar-suid", "tar-sgid"):
        try:
            if os.stat("/b/" + n).st_mode & 0o6000:
                made.append("tar -p made " + n + " set-id")
        except OSError:
            pass
    # a setuid file made in the private layer, moved into the bind
    shutil.copy("/bin/true", "/tmp/priv-suid")
    try:
        os.chmod("/tmp/priv-suid", 0o4755)
    except OSError:
        pass
    try:
        os.rename("/tmp/priv-suid", "/b/renamed"); made.append("rename(2) from /tmp into the bind")
    except OSError:
        pass
    try:
        shutil.move("/tmp/priv-suid", "/b/moved")
        if os.stat("/b/moved").st_mode & 0o6000:
            made.append("mv from /tmp into the bind kept the set-id bit")
    except (OSError, shutil.Error):
        pass
    # what the sandbox sees now; the runner checks the host side itself
    seen = []
    for root, dirs, files in os.walk("/b"):
        for n in files + dirs:
            p = os.path.join(root, n)
            st = os.lstat(p)
            if st.st_mode & 0o6000 or stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
                seen.append("%s %o" % (p, st.st_mode))
            try:
                os.getxattr(p, "security.capability", follow_symlinks=False); seen.append(p + " has security.capability")
            except OSError:
                pass
    if seen:
        result("GOT THROUGH", "in the bind: " + ", ".join(seen) + ("; calls that succeeded: " + ", ".join(made) if made else ""))
    if made:
        result("FAILED", "no set-id, capability or device file resulted, but these were not refused with EPERM: " + ", ".join(made))
    result("blocked", "chmod/fchmod/fchmodat/O_PATH chmod 04755, open(O_CREAT, 04755), setxattr security.capability, mknod c and b: EPERM; tar -p and mv from /tmp made no set-id file")

if name == "hold":
    # sandbox A: private files, files and planted symlinks in the shared bind, then waits
    token, secret = args[0], args[1]
    p = "/tmp/a-private-" + token
    with open(p, "w") as f:
        f.write(secret + "\n")
    os.chmod(p, 0o600)
    try:
        with open("/shared/a-shared", "w") as f:
            f.write("shared from A\n")
        os.chmod("/shared/a-shared", 0o600)
    except OSError as e:
        print("A: cannot write the shared bind: %s" % err(e), flush=True)
    for n, target in (("link-tmp", p), ("link-proc1", "/proc/1/root" + p), ("link-self", "/proc/%d/root%s" % (os.getpid(), p))):
        try:
            os.symlink(target, "/shared/" + n)
        except OSError:
            pass
    with open("/shared/a.ready.tmp", "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename("/shared/a.ready.tmp", "/shared/a.ready")
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    import time
    time.sleep(90)
    sys.exit(0)

if name == "other-sandbox-files":
    # sandbox B: A's private /tmp file, by A's host pids through /proc, through A's symlinks
    token, secret = args[0], args[1]
    hostpids = args[2:]
    p = "/tmp/a-private-" + token
    got = []
    cands = [p, "/shared/link-tmp", "/shared/link-proc1", "/shared/link-self"]
    for hp in hostpids:
        cands += ["/proc/%s/root%s" % (hp, p), "/proc/%s/cwd/../../..%s" % (hp, p), "/proc/%s/environ" % hp]
    for c in cands:
        r = try_read(c)
        if isinstance(r, bytes) and secret.encode() in r:
            got.append("read " + c)
    for c in cands[:4] + ["/proc/%s/root%s" % (hp, p) for hp in hostpids]:
        try:
            fd = os.open(c, os.O_WRONLY | os.O_APPEND)
            os.close(fd)
            if c != p:
                got.append("opened for writing " + c)
        except OSError:
            pass
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if token.encode() in open("/proc/%s/cmdline" % d, "rb").read() and int(d) != os.getpid():
                    got.append("A's process visible as pid " + d)
            except OSError:
                pass
    if got:
        result("GOT THROUGH", ", ".join(got))
    result("blocked", "A's private /tmp file unreachable: own /tmp, A's symlinks in the shared bind, /proc/HOSTPID/{root,cwd,environ} of %d host pids; no A process in B's /proc" % len(hostpids))

if name == "other-sandbox-signal":
    held = "held" if caps() & (1 << CAP["KILL"]) else "NOT held"
    got = []
    for hp in [int(x) for x in args]:
        for sig in (0, signal.SIGKILL):
            try:
                os.kill(hp, sig); got.append("kill(%d, %d)" % (hp, sig))
            except OSError:
                pass
        try:
            fd = os.pidfd_open(hp); got.append("pidfd_open(%d)" % hp); os.close(fd)
        except OSError:
            pass
    if got:
        result("GOT THROUGH", ", ".join(got))
    result("blocked", "CAP_KILL %s; kill(0), kill(SIGKILL) and pidfd_open of sandbox A's %d host pids all failed" % (held, len(args)))

result("FAILED", "no such attempt")
PROBE
chmod 0644 "$IN/probe.py"

N=0

# record NAME RC OUTFILE: judges one attempt's output (as tests/escape/run.sh does)
record() {
        local name=$1 rc=$2 out=$3 line
        line=$(tr -d '\r\0' <"$out" | grep -a -o -m1 "escape $name: .*")
        if [ -z "$line" ]; then
                echo "escape $name: FAILED (no result line; exit $rc)"
                tr -d '\r\0' <"$out" | grep -a -v -F -e "$SECRET" -e "$NOBODY_SECRET" | tail -n 5 | sed 's/^/    | /'
                FAILED=$((FAILED + 1))
                FAILED_NAMES+=("$name")
                return
        fi
        echo "$line"
        case "$line" in
        "escape $name: blocked ("*)
                if [ "$rc" -eq 0 ]; then
                        PASSED=$((PASSED + 1))
                        return
                fi
                echo "    (but the probe exited $rc)"
                ;;
        esac
        tr -d '\r\0' <"$out" | grep -a -v -F -e "$SECRET" -e "$NOBODY_SECRET" -e "escape $name:" | tail -n 5 | sed 's/^/    | /'
        FAILED=$((FAILED + 1))
        FAILED_NAMES+=("$name")
}

# verdict NAME WHY-IF-GOT-THROUGH: a host-side check's own result line
verdict() {
        local name=$1 bad=$2 ok=$3
        N=$((N + 1))
        if [ -n "$bad" ]; then
                echo "escape $name: GOT THROUGH ($bad)"
                FAILED=$((FAILED + 1))
                FAILED_NAMES+=("$name")
        else
                echo "escape $name: blocked ($ok)"
                PASSED=$((PASSED + 1))
        fi
}

# attempt NAME ARGS...: one attempt in a fresh root-started sandbox with the bind at /b
attempt() {
        local name=$1 rc
        shift
        N=$((N + 1))
        local out=$WORK/out.$N
        timeout -k 5 60 "$CORDON" run --bind "$BIND:/b" --bind "$IN:/in:ro" -- "$PY" /in/probe.py "$name" "$@" \
                </dev/null >"$out" 2>&1
        rc=$?
        record "$name" "$rc" "$out"
}

# --- a capability held inside is not effective on the host -------------------------------

attempt dac-override-unmapped
attempt chown-fowner-unmapped
attempt setuid-host-nobody
attempt kill-host "${HOST_PIDS[@]}"
attempt special-files-in-bind

bad=
for p in "${HOST_PIDS[@]}"; do
        kill -0 "$p" 2>/dev/null || bad="${bad:+$bad, }host pid $p is gone"
done
verdict host-processes-alive "$bad" "the ${#HOST_PIDS[@]} host processes the attempts aimed at are alive"

AFTER=$(fixture_state)
bad=
[ "$BEFORE" = "$AFTER" ] || bad="the host fixtures changed: $(diff <(printf '%s\n' "$BEFORE") <(printf '%s\n' "$AFTER") | grep '^>' | cut -c3- | tr '\n' ' ')"
verdict host-fixtures-unchanged "$bad" "owners, modes, sizes, mtimes and contents of the host's files in the bind unchanged"

# the host's side of the bind: no set-id file, no device, no file capability, whatever the
# sandbox was told
special=$(find "$BIND" \( -perm /6000 -o -type b -o -type c \) -printf '%M %U:%G %p\n' 2>/dev/null | head -n 10)
fcaps=$("$PY" - "$BIND" <<'PYEOF'
import os, sys
for root, dirs, files in os.walk(sys.argv[1]):
    for n in dirs + files:
        p = os.path.join(root, n)
        try:
            os.getxattr(p, "security.capability", follow_symlinks=False)
            print(p)
        except OSError:
            pass
PYEOF
)
verdict special-files-on-host "$(printf '%s %s' "$special" "$fcaps" | tr '\n' ' ' | sed 's/^ *$//')" \
        "the host sees no set-id file, device node or security.capability in the bind"

# --- two sandboxes at once, sharing one read-write bind ----------------------------------

# The shared directory is 0777 so that A can write it whichever uid its root is on the host (so
# that this part means something before and after the identity change alike).
SHARED=$WORK/shared
mkdir -p "$SHARED" && chmod 0777 "$SHARED"
TOKEN="cordon-id-a-$(rand)"
A_SECRET="cordon-id-a-secret-$(rand)"
timeout -k 5 120 "$CORDON" run --bind "$SHARED:/shared" --bind "$IN:/in:ro" -- "$PY" /in/probe.py hold "$TOKEN" "$A_SECRET" \
        </dev/null >"$WORK/a.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 150); do
        [ -s "$SHARED/a.ready" ] && break
        sleep 0.1
done
A_PIDS=()
for p in /proc/[0-9]*; do
        if tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -qF "probe.py hold $TOKEN "; then
                A_PIDS+=("${p#/proc/}")
        fi
done
# (the host-side timeout, cordon and its helpers, and the holder inside A), and A's init: the
# parent of the one of them that lives in a pid namespace of its own
for p in "${A_PIDS[@]}"; do
        if awk '/^NSpid:/ { exit !(NF == 3) }' "/proc/$p/status" 2>/dev/null; then
                A_INIT=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
                [ -n "$A_INIT" ] && A_PIDS+=("$A_INIT")
                break
        fi
done
if [ ! -s "$SHARED/a.ready" ] || [ ${#A_PIDS[@]} = 0 ]; then
        for n in other-sandbox-files other-sandbox-signal; do
                N=$((N + 1))
                echo "escape $n: FAILED (sandbox A did not start: $(grep -v -F "$A_SECRET" "$WORK/a.out" | head -c 300 | tr '\n' ' '))"
                FAILED=$((FAILED + 1))
                FAILED_NAMES+=("$n")
        done
else
        N=$((N + 1))
        timeout -k 5 60 "$CORDON" run --bind "$SHARED:/shared" --bind "$IN:/in:ro" -- \
                "$PY" /in/probe.py other-sandbox-files "$TOKEN" "$A_SECRET" "${A_PIDS[@]}" </dev/null >"$WORK/out.$N" 2>&1
        record other-sandbox-files $? "$WORK/out.$N"
        N=$((N + 1))
        timeout -k 5 60 "$CORDON" run --bind "$SHARED:/shared" --bind "$IN:/in:ro" -- \
                "$PY" /in/probe.py other-sandbox-signal "${A_PIDS[@]}" </dev/null >"$WORK/out.$N" 2>&1
        record other-sandbox-signal $? "$WORK/out.$N"
        bad=
        for p in "${A_PIDS[@]}"; do
                kill -0 "$p" 2>/dev/null || bad="${bad:+$bad, }sandbox A's pid $p is gone"
        done
        verdict other-sandbox-alive "$bad" "sandbox A's ${#A_PIDS[@]} processes alive after B's attempts"
fi

# --- no secret in any output ---------------------------------------------------------------

bad=
if grep -rqaF -e "$SECRET" -e "$NOBODY_SECRET" -e "$A_SECRET" "$WORK"/out.* 2>/dev/null; then
        bad="a secret appears in the output of $(grep -rlaF -e "$SECRET" -e "$NOBODY_SECRET" -e "$A_SECRET" "$WORK"/out.* | wc -l) attempt(s)"
fi
verdict secret-in-output "$bad" "neither host secret nor sandbox A's secret appears in any attempt's output"

echo "# $N attempts in $(($(date +%s) - START))s${FAILED_NAMES[0]:+; failed: ${FAILED_NAMES[*]}}"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
