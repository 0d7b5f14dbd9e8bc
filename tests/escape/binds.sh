#!/bin/bash
# Escape attempts against a read-write bind: a root-started sandbox's read-write bind is
# idmapped so that what it makes there belongs to the source's host owner (here root), so a
# setuid or setgid file, a file capability or a device node made there would be one the host
# can run or open as that owner. Each attempt runs in its own `cordon run` with the bind, and
# counts as passed when refused (EPERM, or EXDEV for a rename or link from the private layer);
# afterwards the host itself looks at the bind: `find -perm /6000 -o -type b -o -type c` and
# every file's security.capability must show nothing. The same attempts run again under
# --trap-all, and by uid 65534
# (cordon unprivileged: the bind is simply that user's directory, not idmapped) where setpriv(1)
# and user namespaces allow, against a second directory of that user's.
#
# Environment (set by `make check`): CORDON, HELPERS (with setid-probe).

if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

START=$(date +%s)
PASSED=0
FAILED=0
FAILED_NAMES=()
N=0

: "${CORDON:?CORDON must name the cordon binary}"
: "${HELPERS:?HELPERS must name the directory of the test helpers}"

skip() {
        echo "escape tests (binds) skipped: $*"
        echo "0 passed, 0 failed"
        exit 77
}

[ -x "$CORDON" ] || skip "no cordon at $CORDON"
[ -x "$HELPERS/setid-probe" ] || skip "no setid-probe in $HELPERS (make tests/helpers/setid-probe)"
[ "$(id -u)" = 0 ] || skip "idmapped read-write binds are made for root-started sandboxes"

WORK=$(mktemp -d /var/tmp/cordon-esc-binds.XXXXXX) || skip "cannot create a work directory"
if [ -d /srv ] && [ -w /srv ]; then
        JOB=$(mktemp -d /srv/cordon-esc-job-XXXXXX)
else
        JOB=$(mktemp -d /var/tmp/cordon-esc-job-XXXXXX)
fi
[ -n "$JOB" ] || skip "cannot create the bind's directory"
chown 0:0 "$JOB" && chmod 0755 "$JOB"
JOB_USER=$(mktemp -d "$JOB.user-XXXXXX")
chown 65534:65534 "$JOB_USER" && chmod 0755 "$JOB_USER"
cleanup() {
        rm -rf "$WORK" "$JOB" "$JOB_USER" "${JOB_ROOT:-}" "${JOB_TRAP:-}"
}
trap cleanup EXIT

# The probe is bound read-only, from a copy any user can read (a source under
# the host's /tmp would be hidden by cordon's staging tmpfs).
mkdir -p "$WORK/bin" && cp "$HELPERS/setid-probe" "$WORK/bin/" && chmod 755 "$WORK" "$WORK/bin" "$WORK/bin/setid-probe" ||
        skip "cannot stage the probe"
BIN=$WORK/bin
# how cordon is run, with which options, and the bind it gets: root first
AS=()
OPTS=()
SUFFIX=

record() {
        local name=$1 rc=$2 out=$3 line
        line=$(tr -d '\r\0' <"$out" | grep -a -o -m1 "escape $name: .*")
        if [ -z "$line" ]; then
                echo "escape $name: FAILED (no result line; exit $rc)$SUFFIX"
                tail -n 3 "$out" | sed 's/^/    | /'
                FAILED=$((FAILED + 1))
                FAILED_NAMES+=("$name")
                return
        fi
        echo "$line$SUFFIX"
        case "$line" in
        "escape $name: blocked ("*)
                if [ "$rc" -eq 0 ]; then
                        PASSED=$((PASSED + 1))
                        return
                fi
                echo "    (but the attempt exited $rc)"
                ;;
        esac
        FAILED=$((FAILED + 1))
        FAILED_NAMES+=("$name")
}

# probe NAME: one attempt of the C probe, in the bind /job
probe() {
        local name=$1 rc
        N=$((N + 1))
        local out=$WORK/out.$N
        (cd / && timeout -k 5 30 "${AS[@]}" "$CORDON" run "${OPTS[@]}" --bind "$BIN:/helpers:ro" --bind "$JOB:/job" -- \
                /helpers/setid-probe "$name" /job </dev/null >"$out" 2>&1)
        rc=$?
        record "$name" "$rc" "$out"
}

# shell NAME SCRIPT: an attempt with the sandbox's own tools, which prints its result line
shell() {
        local name=$1 script=$2 rc
        N=$((N + 1))
        local out=$WORK/out.$N
        (cd / && timeout -k 5 30 "${AS[@]}" "$CORDON" run "${OPTS[@]}" --bind "$JOB:/job" -- /bin/sh -c "$script" \
                </dev/null >"$out" 2>&1)
        rc=$?
        record "$name" "$rc" "$out"
}

# the files among NUL-separated paths on stdin that have security.capability (the host's view)
HOST_CAPS='
import os, sys
for p in sys.stdin.buffer.read().split(b"\0"):
    try:
        p and os.getxattr(p, "security.capability", follow_symlinks=False) and print(p.decode())
    except OSError:
        pass
'

# every attempt, then what the host sees in the bind
attempts() {
        for a in chmod-setuid chmod-setgid fchmod-fd fchmodat fchmodat2-nofollow fchmodat2-empty-path chmod-via-proc-fd \
                open-creat-setuid open-excl-setuid creat-setuid openat2-setuid tmpfile-setuid tmpfile-fchmod \
                mknod-reg-setuid mknod-char mknod-block mknod-whiteout setxattr-cap lsetxattr-cap fsetxattr-cap \
                rename-from-private link-from-private fchmod-race; do
                probe "$a"
        done

        # tar -p (as root: modes restored with fchmod/fchmodat) of an archive holding setuid and
        # setgid files, made in the private layer where they are allowed
        shell tar-p "
        mkdir -p /tmp/src && cp /bin/true /tmp/src/su && chmod 4755 /tmp/src/su &&
        cp /bin/true /tmp/src/sg && chmod 2755 /tmp/src/sg &&
        tar -cf /tmp/a.tar -C /tmp/src . || { echo 'escape tar-p: probe error (no archive)'; exit 2; }
        mkdir -p /job/tar && tar -xpf /tmp/a.tar -C /job/tar 2>/dev/null
        if [ -n \"\$(find /job/tar -perm /6000)\" ]; then echo \"escape tar-p: GOT THROUGH (\$(find /job/tar -perm /6000))\"; exit 1; fi
        echo 'escape tar-p: blocked (tar -xp of a setuid and a setgid file: the bits refused)'"

        shell cp-p "
        cp /bin/true /tmp/cpsrc && chmod 6755 /tmp/cpsrc || { echo 'escape cp-p: probe error'; exit 2; }
        cp -p /tmp/cpsrc /job/cp-p 2>/dev/null; cp -a /tmp/cpsrc /job/cp-a 2>/dev/null
        if [ -n \"\$(find /job -name 'cp-*' -perm /6000)\" ]; then echo 'escape cp-p: GOT THROUGH'; exit 1; fi
        echo 'escape cp-p: blocked (cp -p and cp -a of a setuid file: the bits refused)'"

        # what the host sees
        N=$((N + 1))
        found=$(find "$JOB" \( -perm /6000 -o -type b -o -type c \) -printf '%m %y %p\n' 2>&1)
        if [ -n "$found" ]; then
                echo "escape host-find: GOT THROUGH (on the host: $(printf '%s' "$found" | tr '\n' ';'))"
                FAILED=$((FAILED + 1))
                FAILED_NAMES+=(host-find)
        else
                echo "escape host-find: blocked (find $JOB -perm /6000 -o -type b -o -type c: nothing, $(find "$JOB" | wc -l) entries)$SUFFIX"
                PASSED=$((PASSED + 1))
        fi

        N=$((N + 1))
        caps=$(find "$JOB" -xdev \( -type f -o -type d \) -print0 | python3 -c "$HOST_CAPS" 2>&1)
        if [ -n "$caps" ]; then
                echo "escape host-capability: GOT THROUGH (security.capability on the host: $(printf '%s' "$caps" | tr '\n' ' '))"
                FAILED=$((FAILED + 1))
                FAILED_NAMES+=(host-capability)
        else
                echo "escape host-capability: blocked (no file in the bind has security.capability on the host)$SUFFIX"
                PASSED=$((PASSED + 1))
        fi
}

attempts
# the same under full emulation: the filter's setid rows and the emulated calls decide alike
OPTS=(--trap-all)
SUFFIX=" [--trap-all]"
JOB_ROOT=$JOB
JOB=$(mktemp -d "$JOB_ROOT.trap-XXXXXX") && chown 0:0 "$JOB" && chmod 0755 "$JOB" || skip "cannot make a bind"
JOB_TRAP=$JOB
attempts
OPTS=()
if command -v setpriv >/dev/null &&
        (cd / && setpriv --reuid=65534 --regid=65534 --clear-groups -- unshare -U true) >/dev/null 2>&1; then
        AS=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
        SUFFIX=" [cordon run by uid 65534]"
        JOB=$JOB_USER
        attempts
else
        echo "# the unprivileged round skipped: uid 65534 cannot make user namespaces here"
fi

echo "# $N attempts in $(($(date +%s) - START))s${FAILED_NAMES[0]:+; failed: ${FAILED_NAMES[*]}}"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
