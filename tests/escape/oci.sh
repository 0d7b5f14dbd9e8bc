#!/bin/bash
# Escape attempts by a non-root container user against the files of its image that root
# owns (issue #19: podman's `--user 1000` once created a file in the image's root-owned
# /etc). The image is a busybox root whose /etc, /etc/sub, /usr and / belong to root with
# the usual modes. A container runs the attempts through `cordon-oci run` with a bundle,
# as uid 1000 with gid 1000, with gid 0 (what podman's --user 1000 gives), and with 0 among
# its additionalGids; then, where podman is installed, through podman with --user 1000.
# Each attempt (create, truncate, append, rename into and out of, link, symlink, fifo,
# mkdir, rmdir, chmod, chown, utimes, unlink, copy over) counts as passed when refused; a
# last check in the same container sees each file as it was, and the rootfs on disk (the
# root is written through to it) is as it was. A root container writing through, with
# cordon-oci and podman: `..`, symlink and /proc/*/root games land only in its rootfs (or
# podman's upper directory), no id outside its map and no setuid file reach the disk of a
# plain-directory rootfs, and its root mount is nosuid,nodev. Then exec's own capability
# sets: no exec gets a capability its container's process does not hold, and one asking for
# fewer holds fewer. Last, a root holding CAP_MKNOD makes no device node, and a container whose
# process.user is not root, whose init stays root to set its runs up, gives none of that away.
#
# Environment (set by `make check`): CORDON.

if [ -z "${BASH_VERSION:-}" ]; then
        exec bash "$0" "$@"
fi
set -u

START=$(date +%s)
PASSED=0
FAILED=0
FAILED_NAMES=()

: "${CORDON:?CORDON must name the cordon binary}"
BUSYBOX=${BUSYBOX:-/bin/busybox}

skip() {
        echo "escape tests (oci) skipped: $*"
        echo "0 passed, 0 failed"
        exit 77
}

[ -x "$CORDON" ] || skip "no cordon at $CORDON"
[ "$(id -u)" = 0 ] || skip "the OCI runtime runs containers as root, as podman and containerd do"
[ -x "$BUSYBOX" ] || skip "no static busybox at $BUSYBOX (apt-get install busybox-static)"
ldd "$BUSYBOX" 2>&1 | grep -q 'not a dynamic' || skip "$BUSYBOX is not statically linked"

WORK=$(mktemp -d /var/tmp/cordon-esc-oci.XXXXXX) || skip "cannot create a work directory"
OCI_ROOT="$WORK/oci-root"
PM_RUNROOT=
NETNS=
cleanup() {
        local c
        [ -n "$NETNS" ] && ip netns del "$NETNS" 2>/dev/null
        for c in $(ls "$OCI_ROOT" 2>/dev/null); do timeout 30 "$OCI" --root "$OCI_ROOT" delete --force "$c"; done
        if [ -n "$PM_RUNROOT" ]; then
                timeout 60 "${PM[@]}" rm -af -t 0 >/dev/null 2>&1
                timeout 60 "${PM[@]}" rmi -af >/dev/null 2>&1
                rm -rf "$PM_RUNROOT"
        fi
        rm -rf "$WORK"
}
trap cleanup EXIT

OCI="$(dirname "$CORDON")/cordon-oci"
if [ ! -x "$OCI" ]; then
        OCI="$WORK/cordon-oci"
        ln -sf "$CORDON" "$OCI"
fi

# the image: everything root's, as an image's files are
ROOTFS="$WORK/rootfs"
mkdir -p "$ROOTFS/bin" "$ROOTFS/etc/sub" "$ROOTFS/usr/lib" "$ROOTFS/proc" "$ROOTFS/dev" "$ROOTFS/sys" \
        "$ROOTFS/tmp" "$ROOTFS/root"
cp "$BUSYBOX" "$ROOTFS/bin/busybox"
ln -sf busybox "$ROOTFS/bin/sh"
echo "root:x:0:0:root:/root:/bin/sh" >"$ROOTFS/etc/passwd"
echo "root:x:0:" >"$ROOTFS/etc/group"
echo original >"$ROOTFS/etc/motd"
echo original >"$ROOTFS/etc/sub/f"
echo secret >"$ROOTFS/etc/shadow"
echo original >"$ROOTFS/usr/lib/lib.so"
chmod 0644 "$ROOTFS/etc/motd" "$ROOTFS/etc/sub/f" "$ROOTFS/usr/lib/lib.so"
chmod 0600 "$ROOTFS/etc/shadow"
chmod 0755 "$ROOTFS" "$ROOTFS/etc" "$ROOTFS/etc/sub" "$ROOTFS/usr" "$ROOTFS/usr/lib"
chmod 1777 "$ROOTFS/tmp"
chown -R 0:0 "$ROOTFS"

# the attempts, run inside the container: one line each, GOT-THROUGH or blocked
cat >"$ROOTFS/probe.sh" <<'EOF'
B=/bin/busybox
t() { if "$B" sh -c "$2" >/dev/null 2>&1; then echo "GOT-THROUGH $1"; else echo "blocked $1"; fi; }
$B echo mine >/tmp/mine; $B mkdir -p /tmp/mydir
t create-in-etc 'echo x > /etc/newfile'
t create-excl-in-etc 'set -C; echo x > /etc/newfile2'
t truncate-etc-file 'echo x > /etc/motd'
t append-etc-file 'echo x >> /etc/motd'
t truncate-call '$B truncate -s 0 /etc/motd'
t write-in-subdir 'echo x > /etc/sub/f'
t create-in-subdir 'echo x > /etc/sub/new'
t create-in-usr 'echo x > /usr/lib/evil.so'
t overwrite-lib 'echo x > /usr/lib/lib.so'
t create-at-root 'echo x > /newfile'
t rename-into-etc '$B mv /tmp/mine /etc/mine'
t rename-dir-into-etc '$B mv /tmp/mydir /etc/mydir'
t rename-within-etc '$B mv /etc/motd /etc/motd.old'
t rename-out-of-etc '$B mv /etc/motd /tmp/stolen'
t rename-over-etc-file '$B mv /tmp/mine /etc/passwd'
t hardlink-into-etc '$B ln /tmp/mine /etc/hard'
t symlink-into-etc '$B ln -s /tmp/mine /etc/sym'
t fifo-in-etc '$B mkfifo /etc/fifo'
t mkdir-in-etc '$B mkdir /etc/newdir'
t rmdir-etc-subdir '$B rmdir /etc/sub'
t chmod-etc-file '$B chmod 0666 /etc/motd'
t chmod-etc-dir '$B chmod 0777 /etc'
t chown-etc-file '$B chown 1000 /etc/motd'
t chgrp-etc-file '$B chgrp 1000 /etc/motd'
t utimes-etc-file '$B touch -d 2000-01-01 /etc/motd'
t unlink-etc-file '$B rm -f /etc/motd'
t unlink-etc-passwd '$B rm -f /etc/passwd'
t copy-over-etc-file '$B cp /tmp/mine /etc/motd'
t read-shadow '$B cat /etc/shadow'
# the last word: the files as the container sees them now
s=intact
[ "$($B cat /etc/motd)" = original ] || s=changed
[ "$($B cat /etc/sub/f)" = original ] || s=changed
[ "$($B cat /usr/lib/lib.so)" = original ] || s=changed
for f in /etc/newfile /etc/newfile2 /etc/sub/new /usr/lib/evil.so /newfile /etc/mine /etc/mydir /etc/hard \
        /etc/sym /etc/fifo /etc/newdir /etc/motd.old; do
        [ -e "$f" ] || [ -L "$f" ] && s="changed ($f)"
done
[ "$($B stat -c '%a %u' /etc/motd /etc)" = "$(printf '644 0\n755 0')" ] || s="changed (modes)"
echo "files $s"
EOF
chmod 0755 "$ROOTFS/probe.sh"

# Counts the lines of one container's output; NAME says which container.
tally() { # NAME OUTPUT
        local name=$1 out=$2 line n=0
        while read -r line; do
                case "$line" in
                "blocked "*)
                        PASSED=$((PASSED + 1))
                        n=$((n + 1))
                        ;;
                "GOT-THROUGH "*)
                        FAILED=$((FAILED + 1))
                        FAILED_NAMES+=("$name: ${line#GOT-THROUGH }")
                        echo "ESCAPED: $name: ${line#GOT-THROUGH }"
                        n=$((n + 1))
                        ;;
                "files intact")
                        PASSED=$((PASSED + 1))
                        ;;
                "files "*)
                        FAILED=$((FAILED + 1))
                        FAILED_NAMES+=("$name: $line")
                        echo "ESCAPED: $name: $line"
                        ;;
                esac
        done <<<"$out"
        if [ "$n" -lt 29 ] || ! grep -q '^files ' <<<"$out"; then
                FAILED=$((FAILED + 1))
                FAILED_NAMES+=("$name: the probe ran $n of 29 attempts")
                echo "FAILED: $name: the probe ran $n of 29 attempts; its output:"
                printf '%s\n' "$out" | head -n 20 | sed 's/^/  | /'
        else
                echo "$name: $n attempts, each blocked unless said above"
        fi
}

# a bundle over the image with process.user as given (JSON)
bundle() { # DIR USER_JSON
        mkdir -p "$1"
        "$OCI" spec --bundle "$1" >/dev/null || return 1
        python3 - "$1/config.json" "$ROOTFS" "$2" <<'EOF'
import json, sys
p, root, user = sys.argv[1], sys.argv[2], sys.argv[3]
c = json.load(open(p))
c["root"] = {"path": root, "readonly": False}
c["process"]["terminal"] = False
c["process"]["user"] = json.loads(user)
c["process"]["args"] = ["/bin/busybox", "sh", "/probe.sh"]
json.dump(c, open(p, "w"), indent=1)
EOF
}

i=0
for user in '{"uid": 1000, "gid": 1000}' '{"uid": 1000, "gid": 0}' \
        '{"uid": 1000, "gid": 1000, "additionalGids": [0]}'; do
        i=$((i + 1))
        bundle "$WORK/b$i" "$user" || skip "cannot write a bundle"
        out=$(timeout -k 5 120 "$OCI" --root "$OCI_ROOT" run --bundle "$WORK/b$i" "esc$i" 2>&1)
        tally "cordon-oci, process.user $user" "$out"
done

# Counts blocked/GOT-THROUGH lines without tally's fixed number of attempts.
count() { # NAME OUTPUT WANT: WANT lines are expected
        local name=$1 out=$2 want=$3 line n=0
        while read -r line; do
                case "$line" in
                "blocked "*) PASSED=$((PASSED + 1)) n=$((n + 1)) ;;
                "GOT-THROUGH "*)
                        n=$((n + 1))
                        FAILED=$((FAILED + 1))
                        FAILED_NAMES+=("$name: ${line#GOT-THROUGH }")
                        echo "ESCAPED: $name: ${line#GOT-THROUGH }"
                        ;;
                esac
        done <<<"$out"
        if [ "$n" != "$want" ]; then
                FAILED=$((FAILED + 1))
                FAILED_NAMES+=("$name: $n of $want attempts ran")
                echo "FAILED: $name: $n of $want attempts ran; its output:"
                printf '%s\n' "$out" | head -n 20 | sed 's/^/  | /'
        else
                echo "$name: $n attempts, each blocked unless said above"
        fi
}
# on the host: a check that holds is "blocked NAME", one that does not "GOT-THROUGH NAME"
hold() { if "${@:2}"; then echo "blocked $1"; else echo "GOT-THROUGH $1"; fi; }

# The root is written through to the bundle's rootfs (issue #19): the non-root users above
# changed nothing of root's there either, on disk.
out=$(
        hold "on disk: /etc/motd as it was" test "$(cat "$ROOTFS/etc/motd")" = original
        hold "on disk: /usr/lib/lib.so as it was" test "$(cat "$ROOTFS/usr/lib/lib.so")" = original
        made=
        for f in /etc/newfile /etc/newfile2 /etc/sub/new /usr/lib/evil.so /newfile /etc/mine /etc/mydir /etc/hard \
                /etc/sym /etc/fifo /etc/newdir /etc/motd.old; do
                [ -e "$ROOTFS$f" ] || [ -L "$ROOTFS$f" ] && made+=" $f"
        done
        hold "on disk: no file made in /etc, /usr or /" test -z "$made"
        hold "on disk: /etc/motd 644 root's" test "$(stat -c '%a %u %g' "$ROOTFS/etc/motd")" = "644 0 0"
)
count "non-root users, the rootfs on disk" "$out" 4

# A root container writing through: nothing outside its rootfs, no id outside its range, no
# setuid or device file in a plain directory (the host's filesystem), and its root mount is
# nosuid and nodev. Each ESC-* file it makes must land inside the rootfs.
mkdir -p "$WORK/outside"
bundle "$WORK/bw" '{"uid": 0, "gid": 0}' || skip "cannot write a bundle"
python3 - "$WORK/bw/config.json" "$WORK" <<'EOF2'
import json, sys
c = json.load(open(sys.argv[1]))
w = sys.argv[2]
c["process"]["args"] = ["/bin/busybox", "sh", "-c", """
B=/bin/busybox
$B echo x > /../../ESC-dotdot
cd / && cd ../../.. && $B echo x > ESC-cd
$B ln -s ../../../.. /up; $B echo x > /up/ESC-sym
$B ln -s %s /hostwork; $B echo x > /hostwork/outside/ESC-abs 2>/dev/null
$B echo x > /proc/self/root/../ESC-proc; $B echo x > /proc/1/cwd/../../ESC-cwd
$B echo x > /proc/self/cwd/../ESC-cwd2
$B touch /own
if $B chown 70000:70000 /own 2>/dev/null; then echo "GOT-THROUGH chown to an id outside the container's map"; else echo "blocked chown to an id outside the container's map"; fi
$B cp /bin/busybox /suid
if $B chmod 4755 /suid 2>/dev/null; then echo "GOT-THROUGH chmod 4755 in a plain-directory rootfs"; else echo "blocked chmod 4755 in a plain-directory rootfs"; fi
if $B chmod 2755 /suid 2>/dev/null; then echo "GOT-THROUGH chmod 2755 in a plain-directory rootfs"; else echo "blocked chmod 2755 in a plain-directory rootfs"; fi
$B cp /bin/busybox /tmp/suid
if $B chmod 4755 /tmp/suid 2>/dev/null; then echo "GOT-THROUGH chmod 4755 in its /tmp (the rootfs's own)"; else echo "blocked chmod 4755 in its /tmp (the rootfs's own)"; fi
if $B mkfifo -m 4755 /fifo 2>/dev/null && [ -u /fifo ]; then echo "GOT-THROUGH a setuid fifo"; else echo "blocked a setuid fifo"; fi
m=$($B awk '$5 == "/" {print $6}' /proc/self/mountinfo | $B tail -n 1)
case ",$m," in *,nosuid,*nodev,*|*,nodev,*nosuid,*) echo "blocked root mount without nosuid,nodev ($m)" ;; *) echo "GOT-THROUGH root mount without nosuid,nodev ($m)" ;; esac
""" % w]
caps = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_FSETID", "CAP_MKNOD", "CAP_SETUID", "CAP_SETGID"]
c["process"]["capabilities"] = {k: caps for k in ("bounding", "effective", "permitted")}
json.dump(c, open(sys.argv[1], "w"), indent=1)
EOF2
out=$(timeout -k 5 60 "$OCI" --root "$OCI_ROOT" run --bundle "$WORK/bw" escwt 2>&1 </dev/null)
out+=$'\n'$(
        hold "ESC-* files only inside the rootfs" test -z "$(find "$WORK" -name 'ESC-*' ! -path "$ROOTFS/*")"
        hold "the container's writes did land (it ran)" test -e "$ROOTFS/ESC-dotdot" -a -e "$ROOTFS/ESC-sym"
        hold "on disk: no id of the sandbox's host range or beyond the map" \
                test -z "$(find "$ROOTFS" \( -uid +65535 -o -gid +65535 \) -print)"
        hold "on disk: no setuid or setgid file in the rootfs" test -z "$(find "$ROOTFS" -type f -perm /6000 -print)"
        hold "on disk: nothing in the work directory outside the rootfs" test -z "$(ls -A "$WORK/outside")"
)
count "a root container writing through" "$out" 11

# podman, when it is here: its overlay root and its --user
if command -v podman >/dev/null && { command -v conmon >/dev/null || [ -x /usr/libexec/podman/conmon ]; }; then
        PM_RUNROOT=$(mktemp -d /tmp/cordon-epm.XXXXXX)
        PM=(podman --root "$WORK/storage" --runroot "$PM_RUNROOT" --tmpdir "$WORK/pmtmp" --runtime "$OCI"
                --cgroup-manager=cgroupfs --events-backend=file)
        tar -C "$ROOTFS" -cf "$WORK/rootfs.tar" . &&
                timeout 120 "${PM[@]}" import "$WORK/rootfs.tar" localhost/cordon-esc:1 >/dev/null 2>&1
        if [ $? = 0 ]; then
                for u in 1000 1000:1000; do
                        out=$(timeout -k 5 120 "${PM[@]}" run --rm --network=none --ulimit nofile=20000:20000 \
                                --ulimit nproc=32768:32768 --user "$u" localhost/cordon-esc:1 /bin/busybox sh /probe.sh 2>&1)
                        tally "podman --user $u" "$out"
                done
                # its root written through to podman's upper directory: every ESC-* file the
                # container makes lands there, none beside it (podman's work, merged, lower)
                timeout -k 5 120 "${PM[@]}" run --name escwt --network=none --ulimit nofile=20000:20000 \
                        --ulimit nproc=32768:32768 localhost/cordon-esc:1 /bin/busybox sh -c '
                        B=/bin/busybox; $B echo x > /../../ESC-dotdot; cd / && cd ../../.. && $B echo x > ESC-cd
                        $B ln -s ../../../.. /up; $B echo x > /up/ESC-sym; $B echo x > /proc/self/root/../ESC-proc
                        $B mkdir -p /work /merged; $B echo x > /../work/ESC-work; $B echo x > /../merged/ESC-merged
                        $B echo x > /proc/1/cwd/../../lower/ESC-lower 2>/dev/null; true' >/dev/null 2>&1
                out=$(
                        hold "podman: ESC-* files only in the container's upper directory" \
                                test -z "$(find "$WORK/storage" -name 'ESC-*' ! -path "$WORK/storage/overlay/*/diff/*")"
                        hold "podman: the container's writes landed there (it ran)" \
                                test -n "$(find "$WORK/storage/overlay" -path '*/diff/ESC-sym')"
                )
                count "podman, a root container writing through" "$out" 2
                timeout 60 "${PM[@]}" rm -f escwt >/dev/null 2>&1
        else
                echo "podman: cannot import the image; its attempts are not run"
        fi
else
        echo "podman is not installed: its attempts are not run"
fi

# exec's own capability sets (runc exec --process, --cap): an exec gets no capability the
# container's process does not hold, and one that asks for fewer holds fewer (before #19's
# change every exec ran with the container's sets). The container is root with CHOWN and
# KILL only; an attempt gets through when the exec runs holding the capability it asked for.
bundle "$WORK/bc" '{"uid": 0, "gid": 0}' || skip "cannot write a bundle"
python3 - "$WORK/bc/config.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["args"] = ["/bin/busybox", "sleep", "100"]
c["process"]["capabilities"] = {k: ["CAP_CHOWN", "CAP_KILL"] for k in ("bounding", "effective", "permitted")}
json.dump(c, open(sys.argv[1], "w"), indent=1)
EOF
if timeout -k 5 60 "$OCI" --root "$OCI_ROOT" run --detach --bundle "$WORK/bc" esccap >/dev/null 2>&1 </dev/null; then
        capx() { # NAME CAP SETS-JSON [FIELD [--cap CAP]]: got through when CAP is in the exec's FIELD (CapPrm)
                local name=$1 bit=$2 sets=$3 field=${4:-CapPrm} out
                shift 3
                [ $# -gt 0 ] && shift
                python3 -c 'import json,sys
json.dump({"terminal": False, "user": {"uid": 0, "gid": 0}, "cwd": "/", "env": ["PATH=/bin"],
           "args": ["/bin/busybox", "sh", "-c", "grep ^%s /proc/self/status" % sys.argv[3]],
           "capabilities": json.loads(sys.argv[2])}, open(sys.argv[1], "w"))' "$WORK/p.json" "$sets" "$field"
                out=$(timeout -k 5 30 "$OCI" --root "$OCI_ROOT" exec "$@" --process "$WORK/p.json" esccap 2>/dev/null)
                if [ $? = 0 ] && [ $((0x${out##*[[:space:]]} >> bit & 1)) = 1 ]; then
                        echo "GOT-THROUGH $name"
                else
                        echo "blocked $name"
                fi
        }
        all() { printf '{"bounding": ["%s"], "effective": ["%s"], "permitted": ["%s"], "inheritable": ["%s"], "ambient": ["%s"]}' "$1" "$1" "$1" "$1" "$1"; }
        out=$(
                capx "exec --process asking for CAP_SYS_ADMIN" 21 "$(all CAP_SYS_ADMIN)"
                capx "exec --process asking for CAP_DAC_OVERRIDE" 1 "$(all CAP_DAC_OVERRIDE)"
                capx "exec --process asking for CAP_SYS_PTRACE" 19 "$(all CAP_SYS_PTRACE)"
                capx "exec --process asking for CAP_SETUID" 7 "$(all CAP_SETUID)"
                capx "exec --process raising CAP_CHOWN ambient (the container has none)" 0 "$(all CAP_CHOWN)" CapAmb
                capx "exec --cap CAP_DAC_OVERRIDE" 1 '{}' CapPrm --cap CAP_DAC_OVERRIDE
                capx "exec --cap CAP_SYS_ADMIN" 21 '{}' CapPrm --cap CAP_SYS_ADMIN
                # fewer: asked for none, it must hold none (CHOWN is the container's)
                capx "exec --process asking for no capability keeps CAP_CHOWN" 0 '{"bounding": [], "effective": [], "permitted": []}'
        )
        n=$(grep -c . <<<"$out")
        while read -r line; do
                case "$line" in
                "blocked "*) PASSED=$((PASSED + 1)) ;;
                "GOT-THROUGH "*)
                        FAILED=$((FAILED + 1))
                        FAILED_NAMES+=("exec capabilities: ${line#GOT-THROUGH }")
                        echo "ESCAPED: exec capabilities: ${line#GOT-THROUGH }"
                        ;;
                esac
        done <<<"$out"
        echo "exec capabilities: $n attempts, each blocked unless said above"
        timeout 30 "$OCI" --root "$OCI_ROOT" delete --force esccap >/dev/null 2>&1
else
        FAILED=$((FAILED + 1))
        FAILED_NAMES+=("exec capabilities: the container did not start")
        echo "FAILED: exec capabilities: the container did not start"
fi

# CAP_MKNOD, held as runc holds it (Docker's and containerd's default sets carry it): inside
# the container's user namespace it must make no device node. The container's root holds it
# in every set (checked: else these attempts would prove nothing); each mknod of a character
# or block device, in the writable layer and in a tmpfs, gets through when it succeeds.
bundle "$WORK/bm" '{"uid": 0, "gid": 0}' || skip "cannot write a bundle"
python3 - "$WORK/bm/config.json" <<'EOF2'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["args"] = ["/bin/busybox", "sh", "-c", """
grep -q '^CapEff:.*' /proc/self/status || exit 3
eff=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
[ $(( 0x$eff >> 27 & 1 )) = 1 ] && echo HOLDS-MKNOD
for d in /tmp /; do
  for spec in "c 1 3" "c 1 1" "b 7 0" "b 8 0"; do
    set -- $spec
    if /bin/busybox mknod "$d/dev-$1-$2-$3" "$1" "$2" "$3" 2>/dev/null; then echo "GOT-THROUGH mknod $spec in $d"; else echo "blocked mknod $spec in $d"; fi
  done
done
"""]
caps = ["CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FOWNER", "CAP_MKNOD"]
c["process"]["capabilities"] = {k: caps for k in ("bounding", "effective", "permitted")}
json.dump(c, open(sys.argv[1], "w"), indent=1)
EOF2
out=$(timeout -k 5 60 "$OCI" --root "$OCI_ROOT" run --bundle "$WORK/bm" escmknod 2>&1 </dev/null)
timeout 30 "$OCI" --root "$OCI_ROOT" delete --force escmknod >/dev/null 2>&1
if grep -q HOLDS-MKNOD <<<"$out"; then
        n=0
        while read -r line; do
                case "$line" in
                "blocked "*) PASSED=$((PASSED + 1)); n=$((n + 1)) ;;
                "GOT-THROUGH "*)
                        n=$((n + 1))
                        FAILED=$((FAILED + 1))
                        FAILED_NAMES+=("CAP_MKNOD: ${line#GOT-THROUGH }")
                        echo "ESCAPED: CAP_MKNOD: ${line#GOT-THROUGH }"
                        ;;
                esac
        done <<<"$out"
        echo "CAP_MKNOD: $n device-node attempts by a root holding it, each blocked unless said above"
else
        FAILED=$((FAILED + 1))
        FAILED_NAMES+=("CAP_MKNOD: the container's root does not hold it (or did not run): ${out:0:200}")
        echo "FAILED: CAP_MKNOD: the container's root does not hold it: ${out:0:200}"
fi

# CAP_NET_RAW, held as runc holds it (containerd's and Docker's default sets carry it): the
# container's root holds it in every set (checked: else the attempts would prove nothing),
# and still makes no raw or packet socket (the filter refuses them whatever a process holds),
# in its own network namespace and in one an engine prepared; in the engine's, which the
# host's user namespace owns, it cannot mark a socket, bind transparently or move a socket
# bound to a device to another either.
if [ -x "${HELPERS:-}/escape-probe" ] && command -v ip >/dev/null; then
        mkdir -p "$ROOTFS/lib/x86_64-linux-gnu" "$ROOTFS/lib64"
        cp "$HELPERS/escape-probe" "$ROOTFS/bin/escape-probe"
        cp /lib/x86_64-linux-gnu/libc.so.6 "$ROOTFS/lib/x86_64-linux-gnu/"
        cp /lib64/ld-linux-x86-64.so.2 "$ROOTFS/lib64/"
        chown -R 0:0 "$ROOTFS/bin/escape-probe" "$ROOTFS/lib" "$ROOTFS/lib64"
        NETNS=cordon-escoci-$$
        ip netns add "$NETNS" && ip -n "$NETNS" link set lo up
        for where in own engine; do
                bundle "$WORK/br-$where" '{"uid": 0, "gid": 0}' || skip "cannot write a bundle"
                python3 - "$WORK/br-$where/config.json" "$where" "/run/netns/$NETNS" <<'EOF6'
import json, sys
p, where, path = sys.argv[1], sys.argv[2], sys.argv[3]
c = json.load(open(p))
attempts = "af-packet raw-socket socket-highbits" + (" net-raw-opts" if where == "engine" else "")
c["process"]["args"] = ["/bin/busybox", "sh", "-c", """
eff=$(/bin/busybox sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
[ $(( 0x$eff >> 13 & 1 )) = 1 ] && echo HOLDS-NET_RAW
for a in %s; do /bin/escape-probe $a; done; true""" % attempts]
caps = ["CAP_CHOWN", "CAP_NET_BIND_SERVICE", "CAP_NET_RAW"]
c["process"]["capabilities"] = {k: caps for k in ("bounding", "effective", "permitted")}
if where == "engine":
    for n in c["linux"]["namespaces"]:
        if n["type"] == "network":
            n["path"] = path
json.dump(c, open(p, "w"), indent=1)
EOF6
                out=$(timeout -k 5 60 "$OCI" --root "$OCI_ROOT" run --bundle "$WORK/br-$where" "escraw$where" 2>&1 </dev/null)
                timeout 30 "$OCI" --root "$OCI_ROOT" delete --force "escraw$where" >/dev/null 2>&1
                want=3
                [ "$where" = engine ] && want=4
                if ! grep -q HOLDS-NET_RAW <<<"$out"; then
                        FAILED=$((FAILED + 1))
                        FAILED_NAMES+=("CAP_NET_RAW ($where network): the container's root does not hold it: ${out:0:200}")
                        echo "FAILED: CAP_NET_RAW ($where network): the root does not hold it: ${out:0:300}"
                        continue
                fi
                # escape-probe's lines ("escape NAME: blocked|GOT THROUGH|probe error (...)") in
                # count's words
                count "CAP_NET_RAW ($where network)" "$(sed -n -e 's/^escape \([^:]*\): blocked.*/blocked \1/p' \
                        -e 's/^escape \([^:]*\): \(GOT THROUGH\|probe error\)\(.*\)/GOT-THROUGH \1: \2\3/p' <<<"$out")" "$want"
        done
        ip netns del "$NETNS" 2>/dev/null
        NETNS=
else
        echo "CAP_NET_RAW: no escape-probe in HELPERS or no ip(8): its attempts are not run"
fi

# A container whose process.user is not root: its init stays the namespace's root, holding the
# bounding set and CAP_SETUID, CAP_SETGID, CAP_SETPCAP and CAP_KILL to set each run up
# (sentry/init.c oci_drop_privileges). The bounding set here lacks those four, so that whatever
# of them reaches a process is init's. Both shapes: init outside the container's pid namespace
# (Linux 6.15+) and, forced as on an older kernel, init as its pid 1, visible to it. A uid-1000
# exec must neither signal nor read any process of another uid (init: /proc/PID/mem, environ,
# fd, root, cwd), hold no capability, regain root, or gain one from a file's capabilities (a v3
# xattr naming the container's root, which the kernel would honour but for no_new_privs and
# nosuid, and a v2 one); the container's process, a root exec asking for the whole bounding
# set and `cordon sandbox exec` hold none of the four; an exec asking for one is refused. The
# older shape's control: init (uid 0) is seen, else its attempts would prove nothing.
cat >"$ROOTFS/held-check.sh" <<'EOF'
B=/bin/busybox
t() { if $B sh -c "$2" >/dev/null 2>&1; then echo "GOT-THROUGH $1"; else echo "blocked $1"; fi; }
# KILL (5), SETGID (6), SETUID (7), SETPCAP (8) in no set of "CapXxx: HEX" lines on stdin
four() {
        bad=
        while read -r k v; do [ $((0x$v & 0x1e0)) = 0 ] || bad="$bad $k"; done
        if [ -n "$bad" ]; then echo "GOT-THROUGH $1 holds one of init's four in$bad"; else echo "blocked $1 holds none of init's four"; fi
}
none() {
        bad= n=0
        while read -r k v; do n=$((n + 1)); case $k in CapBnd:) ;; *) [ $((0x$v)) = 0 ] || bad="$bad $k$v" ;; esac; done
        if [ "$n" = 0 ]; then echo "ERROR $1: no capability lines"; elif [ -n "$bad" ]; then echo "GOT-THROUGH $1 holds$bad"; else echo "blocked $1 holds no capability"; fi
}
me=$($B id -u)
[ "$me" = 1000 ] && echo "blocked the exec is uid 1000" || echo "GOT-THROUGH the exec is uid $me, not 1000"
others=
for d in /proc/[0-9]*; do
        u=$($B awk '/^Uid:/ {print $2}' $d/status 2>/dev/null)
        [ -n "$u" ] && [ "$u" != 1000 ] && others="$others ${d#/proc/}"
done
echo "OTHERS$others"
for p in $others; do
        t "signal pid $p of another uid" "$B kill -0 $p"
        t "stop pid $p of another uid" "$B kill -STOP $p"
        t "open /proc/$p/mem" ": </proc/$p/mem"
        t "read /proc/$p/environ" "$B cat /proc/$p/environ"
        t "list /proc/$p/fd" "$B ls /proc/$p/fd"
        t "list /proc/$p/root" "$B ls /proc/$p/root/"
        t "read /proc/$p/cwd" "$B readlink /proc/$p/cwd | $B grep ."
done
$B grep '^Cap' /proc/self/status | none "a uid-1000 exec"
$B grep '^Cap' /proc/self/status | four "a uid-1000 exec"
$B grep '^Cap' /tmp/held-own | none "the container's process"
$B grep '^Cap' /tmp/held-own | four "the container's process"
if [ -x /bin/escape-probe ]; then
        /bin/escape-probe setuid-regain | $B sed -n 's/^escape \([^:]*\): blocked.*/blocked \1/p; s/^escape \([^:]*\): GOT THROUGH.*/GOT-THROUGH \1/p'
fi
for v in v3 v2; do
        [ -x /fc/$v/busybox ] || continue
        /fc/$v/busybox grep '^Cap' /proc/self/status | none "a file with capabilities ($v) run"
done
EOF
chmod 0755 "$ROOTFS/held-check.sh"
# the same check on the host, for a root exec's and cordon sandbox exec's lines
four_host() { # NAME: "CapXxx: HEX" lines on stdin
        local k v bad=
        while read -r k v; do [ $((0x$v & 0x1e0)) = 0 ] || bad+=" $k"; done
        if [ -n "$bad" ]; then echo "GOT-THROUGH $1 holds one of init's four in$bad"; else echo "blocked $1 holds none of init's four"; fi
}
held_init_attempts() { # SHAPE: own (init outside the container's pid namespace) or pid1
        local shape=$1 id="eschold$1" out x cpid hroot sid force= want
        bundle "$WORK/bh-$shape" '{"uid": 1000, "gid": 1000}' || skip "cannot write a bundle"
        python3 - "$WORK/bh-$shape/config.json" <<'EOF7'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["args"] = ["/bin/busybox", "sh", "-c", "/bin/busybox grep ^Cap /proc/self/status >/tmp/held-own; exec /bin/busybox sleep 100"]
c["process"]["capabilities"] = {"bounding": ["CAP_CHOWN", "CAP_NET_RAW"]}
json.dump(c, open(sys.argv[1], "w"), indent=1)
EOF7
        [ "$shape" = pid1 ] && force=proc_pidns
        if ! CORDON_TEST_FORCE_FALLBACK=$force timeout -k 5 60 "$OCI" --root "$OCI_ROOT" run --detach \
                --bundle "$WORK/bh-$shape" "$id" >/dev/null 2>&1 </dev/null; then
                FAILED=$((FAILED + 1))
                FAILED_NAMES+=("held init ($shape): the container did not start")
                echo "FAILED: held init ($shape): the container did not start"
                return
        fi
        cpid=$(timeout 30 "$OCI" --root "$OCI_ROOT" state "$id" | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
        rm -rf "$ROOTFS/fc" && mkdir -p "$ROOTFS/fc/v3" "$ROOTFS/fc/v2"
        # the container's root on the host: the state's pid is the sentry's, its children are
        # in the container's user namespace
        hroot=
        for p in $(pgrep -P "$cpid"); do
                hroot=$(awk '$1 == 0 && $2 != 0 {print $2}' "/proc/$p/uid_map" 2>/dev/null)
                [ -n "$hroot" ] && break
        done
        if command -v setcap >/dev/null && [ -n "$hroot" ]; then
                cp "$BUSYBOX" "$ROOTFS/fc/v3/busybox" && cp "$BUSYBOX" "$ROOTFS/fc/v2/busybox" &&
                        setcap -n "$hroot" cap_setuid,cap_kill,cap_dac_override+eip "$ROOTFS/fc/v3/busybox" &&
                        setcap cap_setuid,cap_kill,cap_dac_override+eip "$ROOTFS/fc/v2/busybox"
        else
                echo "held init ($shape): no setcap(8) or no uid map: the file-capability attempts are not run"
        fi
        wait_file() { local i; for i in $(seq 50); do [ -s "$1" ] && return; sleep 0.1; done; }
        wait_file "$ROOTFS/tmp/held-own"
        out=$(timeout -k 5 60 "$OCI" --root "$OCI_ROOT" exec "$id" /bin/busybox sh /held-check.sh 2>&1)
        if [ "$shape" = pid1 ]; then
                if grep -q '^OTHERS .' <<<"$out"; then
                        PASSED=$((PASSED + 1))
                else
                        FAILED=$((FAILED + 1))
                        FAILED_NAMES+=("held init (pid1): init is not seen (the control)")
                        echo "FAILED: held init (pid1): init (uid 0) is not seen by the container (the control)"
                fi
        fi
        local others
        others=$(sed -n 's/^OTHERS//p' <<<"$out" | wc -w)
        want=$((5 + 7 * others))
        [ -x "$ROOTFS/bin/escape-probe" ] && want=$((want + 1))
        [ -x "$ROOTFS/fc/v3/busybox" ] && want=$((want + 2))
        python3 -c 'import json,sys
caps = sys.argv[2].split(",")
json.dump({"terminal": False, "user": {"uid": 0, "gid": 0}, "cwd": "/", "env": ["PATH=/bin"],
           "args": ["/bin/busybox", "grep", "^Cap", "/proc/self/status"],
           "capabilities": {k: caps for k in ("bounding", "effective", "permitted", "inheritable", "ambient")}},
          open(sys.argv[1], "w"))' "$WORK/ph-$shape.json" CAP_CHOWN,CAP_NET_RAW
        out+=$'\n'$(
                x=$(timeout -k 5 30 "$OCI" --root "$OCI_ROOT" exec --process "$WORK/ph-$shape.json" "$id" 2>&1)
                if [ $? = 0 ] && grep -q '^CapBnd' <<<"$x"; then
                        grep '^Cap' <<<"$x" | four_host "a root exec asking for the whole bounding set"
                else
                        echo "GOT-THROUGH a root exec asking for the whole bounding set did not run: ${x:0:200}"
                fi
        )
        want=$((want + 1))
        if [ "$shape" = own ]; then
                python3 -c 'import json,sys
json.dump({"terminal": False, "user": {"uid": 0, "gid": 0}, "cwd": "/", "env": ["PATH=/bin"], "args": ["/bin/busybox", "true"],
           "capabilities": {k: ["CAP_SETUID"] for k in ("bounding", "effective", "permitted")}}, open(sys.argv[1], "w"))' "$WORK/ph-setuid.json"
                sid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sandbox"])' "$OCI_ROOT/$id/state.json")
                out+=$'\n'$(
                        hold "an exec asking for CAP_SETUID beyond the bounding set" \
                                test "$(timeout -k 5 30 "$OCI" --root "$OCI_ROOT" exec --process "$WORK/ph-setuid.json" "$id" >/dev/null 2>&1; echo $?)" != 0
                        x=$(timeout -k 5 30 "$CORDON" sandbox exec "$sid" --cwd / -- /bin/busybox grep '^Cap' /proc/self/status 2>&1)
                        if grep -q '^CapBnd' <<<"$x"; then
                                grep '^Cap' <<<"$x" | four_host "cordon sandbox exec"
                        else
                                echo "GOT-THROUGH cordon sandbox exec did not run: ${x:0:200}"
                        fi
                )
                want=$((want + 2))
        fi
        timeout 30 "$OCI" --root "$OCI_ROOT" delete --force "$id" >/dev/null 2>&1
        rm -rf "$ROOTFS/fc" "$ROOTFS/tmp/held-own"
        count "held init ($shape shape, $others processes of another uid seen)" "$(grep -v '^OTHERS' <<<"$out")" "$want"
}
held_init_attempts own
held_init_attempts pid1

# The command's look-up before create reports (initd.c command_found: stat and access, as the
# container's user, in its view) must not wait on what it finds: a FIFO named by the command,
# directly and through PATH. Each create must end (either way) within its timeout.
mkdir -p "$ROOTFS/fifodir" && rm -f "$ROOTFS/fifodir/fifo-cmd" && mkfifo -m 0777 "$ROOTFS/fifodir/fifo-cmd"
out=$(
        for cmd in /fifodir/fifo-cmd fifo-cmd; do
                rm -rf "$WORK/bf"
                bundle "$WORK/bf" '{"uid": 1000, "gid": 1000}' || continue
                python3 - "$WORK/bf/config.json" "$cmd" <<'EOF8'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["args"] = [sys.argv[2]]
c["process"]["env"] = ["PATH=/fifodir:/bin"]
json.dump(c, open(sys.argv[1], "w"), indent=1)
EOF8
                timeout -k 5 20 "$OCI" --root "$OCI_ROOT" create --bundle "$WORK/bf" escfifo >/dev/null 2>&1 </dev/null
                hold "create of a command that is a FIFO ($cmd) ends" test $? != 124
                timeout 30 "$OCI" --root "$OCI_ROOT" delete --force escfifo >/dev/null 2>&1
        done
)
rm -rf "$ROOTFS/fifodir"
count "the command's look-up" "$out" 2

# Another container's namespaces named by the pid cordon gave for it (podman's --network,
# --pid container:NAME): the two become one pod, which shares the network, ipc, uts and pid
# namespaces only. Joining its user, mount or cgroup namespace, or bringing a policy of one's
# own into it, gets through when the container is created. The net join is the control: it
# must be created, else the refusals prove nothing.
bundle "$WORK/bv" '{"uid": 0, "gid": 0}' || skip "cannot write a bundle"
python3 - "$WORK/bv/config.json" <<'EOF3'
import json, sys
c = json.load(open(sys.argv[1]))
c["process"]["args"] = ["/bin/busybox", "sleep", "100"]
json.dump(c, open(sys.argv[1], "w"), indent=1)
EOF3
if timeout -k 5 60 "$OCI" --root "$OCI_ROOT" run --detach --bundle "$WORK/bv" escvictim >/dev/null 2>&1 </dev/null; then
        vpid=$(timeout 30 "$OCI" --root "$OCI_ROOT" state escvictim | python3 -c 'import json,sys; print(json.load(sys.stdin)["pid"])')
        joiner() { # ID NAME PYTHON: got through when the container is created
                local id=$1 name=$2
                shift
                bundle "$WORK/$id" '{"uid": 0, "gid": 0}' || return
                python3 - "$WORK/$id/config.json" "$vpid" "$2" <<'EOF4'
import json, sys
p, pid, code = sys.argv[1], sys.argv[2], sys.argv[3]
c = json.load(open(p))
c["process"]["args"] = ["/bin/busybox", "true"]
ns = {n["type"]: n for n in c["linux"]["namespaces"]}
def join(t, name):
    ns.setdefault(t, {"type": t})["path"] = "/proc/%s/ns/%s" % (pid, name)
exec(code)
c["linux"]["namespaces"] = list(ns.values())
json.dump(c, open(p, "w"), indent=1)
EOF4
                if timeout -k 5 60 "$OCI" --root "$OCI_ROOT" create --bundle "$WORK/$id" "$id" >/dev/null 2>&1 </dev/null; then
                        echo "GOT-THROUGH $name"
                else
                        echo "blocked $name"
                fi
                timeout 30 "$OCI" --root "$OCI_ROOT" delete --force "$id" >/dev/null 2>&1
        }
        out=$(
                joiner escj1 "joining its user namespace by its pid" 'join("network", "net"); join("user", "user")'
                joiner escj2 "joining its mount namespace by its pid" 'join("network", "net"); join("mount", "mnt")'
                joiner escj3 "joining its cgroup namespace by its pid" 'join("network", "net"); join("cgroup", "cgroup")'
                joiner escj4 "bringing a policy of its own into its network" 'join("network", "net"); c.setdefault("annotations", {})["dev.cordon.policy"] = "{}"'
        )
        count "another container named by its pid" "$out" 4
        out=$(joiner escj5 "control" 'join("network", "net")')
        if [ "$out" = "GOT-THROUGH control" ]; then
                PASSED=$((PASSED + 1))
        else
                FAILED=$((FAILED + 1))
                FAILED_NAMES+=("another container named by its pid: joining its network was refused (the control)")
                echo "FAILED: another container named by its pid: joining its network was refused (the control)"
        fi
        timeout 30 "$OCI" --root "$OCI_ROOT" delete --force escvictim >/dev/null 2>&1
else
        FAILED=$((FAILED + 1))
        FAILED_NAMES+=("another container named by its pid: the container did not start")
        echo "FAILED: another container named by its pid: the container did not start"
fi

# A read-only bind of the policy's (dev.cordon.policy) is not idmapped, unlike the engine's
# own read-only binds: the container's root reads there only what others may read, so a host
# file of root's with mode 0600 stays closed to it. The same directory bound by the config
# itself is the control: the container's root reads the file, as under runc.
mkdir -p "$WORK/pbind"
echo host-secret >"$WORK/pbind/secret" && chmod 600 "$WORK/pbind/secret"
bundle "$WORK/bp" '{"uid": 0, "gid": 0}' || skip "cannot write a bundle"
python3 - "$WORK/bp/config.json" "$WORK/pbind" <<'EOF5'
import json, sys
p, src = sys.argv[1], sys.argv[2]
c = json.load(open(p))
c["process"]["args"] = ["/bin/busybox", "sh", "-c", "/bin/busybox cat /pb/secret 2>/dev/null; /bin/busybox cat /eb/secret 2>/dev/null; true"]
c.setdefault("annotations", {})["dev.cordon.policy"] = json.dumps({"filesystem": {"binds": [{"source": src, "target": "/pb", "readOnly": True}]}})
c["mounts"].append({"destination": "/eb", "type": "bind", "source": src, "options": ["rbind", "ro"]})
json.dump(c, open(p, "w"), indent=1)
EOF5
out=$(timeout -k 5 60 "$OCI" --root "$OCI_ROOT" run --bundle "$WORK/bp" escpbind 2>&1 </dev/null)
timeout 30 "$OCI" --root "$OCI_ROOT" delete --force escpbind >/dev/null 2>&1
if [ "$(grep -c host-secret <<<"$out")" = 1 ]; then
        PASSED=$((PASSED + 1))
        echo "policy bind: a 0600 file of root's in a read-only bind of the policy's stays closed (the engine's bind reads it)"
elif [ "$(grep -c host-secret <<<"$out")" = 2 ]; then
        FAILED=$((FAILED + 1))
        FAILED_NAMES+=("policy bind: root read a 0600 file of root's through a read-only bind of the policy's")
        echo "ESCAPED: policy bind: root read a 0600 file of root's through a read-only bind of the policy's"
else
        FAILED=$((FAILED + 1))
        FAILED_NAMES+=("policy bind: the control failed (the engine's read-only bind did not read the file): ${out:0:200}")
        echo "FAILED: policy bind: the control failed: ${out:0:200}"
fi

echo
if [ "$FAILED" -gt 0 ]; then
        echo "failed:"
        printf '  %s\n' "${FAILED_NAMES[@]}"
fi
echo "escape tests (oci) took $(($(date +%s) - START))s"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
