#!/bin/bash
# cordon integration tests for the kernel-enforced floors beneath the sentry's emulation: the
# BPF cgroup egress floor (net/floor.bpf.c) and Landlock (fs/landlock.c). Each layer is shown
# holding alone: a test-only switch (CORDON_DEBUG_DISABLE, honoured only with --debug-unsafe)
# turns the layer above it off, and a control run with the floor off too shows the switch did
# what it says. Run like run.sh:
#
#   CORDON=/path/to/cordon HELPERS=/path/to/build/tests/helpers TESTS_SRCDIR=/path/to/tests \
#       bash tests/integration/floor.sh [REGEX...]
#
# Network: a test of its own makes a network namespace cordon-fl-PID joined to the host by a
# veth pair, host side 10.213.N.1/30, namespace side 10.213.N.2/30 (N in 251..254, free on the
# host; egress.sh takes 1..125, tests/escape/run.sh 126..250), with a TCP server on
# 10.213.N.2:8080. No traffic goes anywhere but loopback and that namespace.
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

# the cgroup2 mount, where BPF cgroup programs attach ("" if none)
cgroup2_root() {
        local d
        for d in /sys/fs/cgroup /sys/fs/cgroup/unified; do
                if [ "$(stat -f -c %T "$d" 2>/dev/null)" = cgroup2fs ]; then
                        echo "$d"
                        return
                fi
        done
}

# skips unless this host can have the floor (root, cgroup2, BPF)
need_floor() {
        [ "$(id -u)" = 0 ] || skip "the floor needs root (BPF programs on a cgroup)"
        [ -n "$(cgroup2_root)" ] || skip "no cgroup2 hierarchy mounted"
        OUT=$("$CORDON" check 2>&1)
        grep -qE '^  egress floor +yes' <<<"$OUT" || skip "cordon check: $(grep 'egress floor' <<<"$OUT")"
}

need_landlock() {
        OUT=$("$CORDON" check 2>&1)
        grep -qE '^  landlock +yes' <<<"$OUT" || skip "cordon check: $(grep 'landlock' <<<"$OUT")"
}

# A python client run in the sandbox: connect/sendto to each ADDR:PORT given, one line each:
# "ADDR connected" or "ADDR errno N".
CLIENT='
import socket, sys
for spec in sys.argv[1:]:
    kind, addr, port = spec.split(",")
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    try:
        if kind == "udp":
            socket.socket(fam, socket.SOCK_DGRAM).sendto(b"x", (addr, int(port)))
            print(addr, "sent")
        else:
            s = socket.socket(fam)
            s.settimeout(5)
            s.connect((addr, int(port)))
            print(addr, "connected")
    except OSError as e:
        print(addr, "errno", e.errno)
'

# =============================================================================================
# the egress floor

it_test verbose_reports_floor_and_landlock
verbose_reports_floor_and_landlock() {
        crun -v -- true
        expect_rc 0 "cordon run -v"
        if "$CORDON" check | grep -qE '^  egress floor +yes'; then
                expect_match "$ERR" "egress floor: BPF cgroup connect4/6, sendmsg4/6 and skb egress on /.*/cordon-[0-9a-f]+: own loopback only" \
                        "-v names the floor and its group"
        else
                expect_match "$ERR" "egress floor: ABSENT \(.+\)" "-v says the floor is absent, and why"
        fi
        if "$CORDON" check | grep -qE '^  landlock +yes'; then
                expect_match "$ERR" "landlock: ABI [0-9]+: read and execute across the view" "-v names the Landlock ABI"
        else
                expect_match "$ERR" "landlock: ABSENT \(.+\)" "-v says Landlock is absent, and why"
        fi
        expect_not_contains "$ERR" "not yet: template layers, Landlock" "Landlock is no longer listed as missing"
}

# With the seccomp network rows off, the sandbox's own sockets reach the kernel directly: the
# floor refuses (EPERM) before routing, where without it the kernel answers ENETUNREACH (the
# sandbox's namespace has only lo).
it_test floor_alone_refuses_what_emulation_would
floor_alone_refuses_what_emulation_would() {
        need_floor
        local specs=(tcp,10.213.0.1,80 tcp,198.18.0.1,443 tcp,::ffff:10.213.0.1,80 tcp,2001:db8::1,443
                udp,10.213.0.1,53 udp,2001:db8::1,53 tcp,::ffff:198.18.0.1,443)
        CORDON_DEBUG_DISABLE=net-emulation crun --debug-unsafe -- python3 -c "$CLIENT" "${specs[@]}"
        expect_rc 0 "the client with the network rows off"
        expect_contains "$ERR" "layers switched off: net-emulation" "cordon warns about the switch"
        expect_eq 7 "$(grep -c ' errno 1$' <<<"$OUT")" "every non-loopback destination refused with EPERM"
        # the control: the floor off too, the same calls reach the kernel's routing
        CORDON_DEBUG_DISABLE=net-emulation,egress-floor crun --debug-unsafe -v -- python3 -c "$CLIENT" "${specs[@]}"
        expect_rc 0 "the client with the floor off too"
        expect_contains "$ERR" "egress floor: ABSENT (switched off (--debug-unsafe))" "-v says the floor is off"
        expect_eq 0 "$(grep -c ' errno 1$' <<<"$OUT")" "no EPERM without the floor"
        expect_contains "$OUT" "10.213.0.1 errno 101" "ENETUNREACH without the floor"
}

it_test floor_lets_own_loopback_through
floor_lets_own_loopback_through() {
        need_floor
        # a server and clients inside the sandbox, over its own loopback, with the network rows off
        CORDON_DEBUG_DISABLE=net-emulation crun --debug-unsafe -- python3 -c '
import socket, threading
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(8); port = srv.getsockname()[1]
srv6 = socket.socket(socket.AF_INET6); srv6.bind(("::1", 0)); srv6.listen(8); port6 = srv6.getsockname()[1]
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(("127.0.0.1", 0))
socket.create_connection(("127.0.0.1", port)).close(); print("tcp4 ok")
socket.create_connection(("::1", port6)).close(); print("tcp6 ok")
s = socket.socket(socket.AF_INET6); s.connect(("::ffff:127.0.0.1", port)); print("mapped ok")
socket.create_connection(("127.0.0.53", 53), timeout=5).close(); print("stub tcp ok")
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", u.getsockname()); print("udp ok", u.recv(10))
'
        expect_rc 0 "loopback traffic with the floor on and the network rows off"
        expect_eq $'tcp4 ok\ntcp6 ok\nmapped ok\nstub tcp ok\nudp ok b\'x\'' "$OUT" "every loopback form"
}

# The floor on a plain host process, in the host's network namespace, where the packet would get
# out: a server in a test namespace behind a veth pair is reached from outside the floor's group
# and refused (EPERM) from inside it.
fl_pick_subnet() {
        local n used
        used=$( (ip -o addr show; ip route show table all) 2>/dev/null)
        for n in 251 252 253 254; do
                if ! grep -qE "10\.213\.$n\.[0-9]" <<<"$used"; then
                        echo "$n"
                        return 0
                fi
        done
        return 1
}

# The floor's programs taken from their pins (a start loads and pins them where the host has a
# bpffs, or can mount one) and loaded at the start (forced) decide alike, and -v and check say
# which way they came.
it_test floor_pinned_and_loaded_decide_alike
floor_pinned_and_loaded_decide_alike() {
        need_floor
        local specs=(tcp,10.213.0.1,80 tcp,198.18.0.1,443 tcp,::ffff:10.213.0.1,80 tcp,2001:db8::1,443
                udp,10.213.0.1,53 udp,2001:db8::1,53 tcp,::ffff:198.18.0.1,443)
        crun -- true
        [ -d /sys/fs/bpf/cordon ] || skip "no pins on this host (no bpffs at /sys/fs/bpf, none mountable)"
        CORDON_DEBUG_DISABLE=net-emulation crun --debug-unsafe -v -- python3 -c "$CLIENT" "${specs[@]}"
        expect_rc 0 "the client, programs from their pins"
        expect_contains "$ERR" "programs reused from their pins in /sys/fs/bpf/cordon" "-v: the pins"
        expect_eq 7 "$(grep -c ' errno 1$' <<<"$OUT")" "pinned: every non-loopback destination refused with EPERM"
        OUT=$("$CORDON" check 2>&1)
        expect_match "$OUT" "egress floor +yes .*programs reused from their pins" "check: the pins"
        CORDON_TEST_FORCE_FALLBACK=floor_pin CORDON_DEBUG_DISABLE=net-emulation crun --debug-unsafe -v -- \
                python3 -c "$CLIENT" "${specs[@]}"
        expect_rc 0 "the client, programs loaded at the start"
        expect_contains "$ERR" "floor_pin forced absent" "-v: the forced fallback"
        expect_contains "$ERR" "programs loaded at this start (pins: forced absent" "-v: loaded"
        expect_eq 7 "$(grep -c ' errno 1$' <<<"$OUT")" "loaded: every non-loopback destination refused with EPERM"
        OUT=$(CORDON_TEST_FORCE_FALLBACK=floor_pin "$CORDON" check 2>&1)
        expect_match "$OUT" "egress floor +yes .*programs loaded at this start \(pins: forced absent" "check: loaded"
}

# Outside the host's own mount namespace (a container's, say) with no bpffs, a start mounts none:
# it loads its programs as before, and the namespace's /sys/fs/bpf stays sysfs' empty directory.
it_test floor_mounts_no_bpffs_outside_the_host_namespace
floor_mounts_no_bpffs_outside_the_host_namespace() {
        need_floor
        command -v unshare >/dev/null || skip "unshare(1) is not installed"
        [ "$(stat -f -c %T /sys/fs/bpf 2>/dev/null)" = bpf_fs ] || skip "no bpffs at /sys/fs/bpf to hide"
        # shellcheck disable=SC2016
        OUT=$(unshare -m --propagation private sh -c \
                'umount /sys/fs/bpf || exit 9; "$1" run -v -- true 2>&1; stat -f -c %T /sys/fs/bpf' sh "$CORDON")
        RC=$?
        printf '%s\n' "$OUT" >&2
        [ "$RC" = 9 ] && skip "cannot unmount /sys/fs/bpf in a mount namespace of the test's own"
        expect_contains "$OUT" "own loopback only; programs loaded at this start (pins: no bpffs at /sys/fs/bpf)" \
                "the floor is there, its programs loaded"
        expect_eq sysfs "$(tail -n 1 <<<"$OUT")" "no bpffs mounted in that namespace"
}

it_test floor_holds_where_packets_would_leave
floor_holds_where_packets_would_leave() {
        need_floor
        command -v ip >/dev/null || skip "ip(8) is not installed"
        [ -x "${HELPERS:-}/floor-attach" ] || skip "tests/helpers/floor-attach not built"
        local py n ns veth cg token
        py=$(host_python)
        [ -n "$py" ] || skip "python3 is not installed"
        n=$(fl_pick_subnet) || skip "no free 10.213.251-254.0/30 on this host"
        ns="cordon-fl-$$"
        veth="cfl$$"
        ip netns add "$ns" || fail "ip netns add"
        at_exit "ip netns del $ns"
        ip link add "${veth}h" type veth peer name "${veth}n" || fail "ip link add veth"
        at_exit "ip link del ${veth}h"
        ip link set "${veth}n" netns "$ns" &&
                ip addr add "10.213.$n.1/30" dev "${veth}h" && ip link set "${veth}h" up &&
                ip -n "$ns" addr add "10.213.$n.2/30" dev "${veth}n" && ip -n "$ns" link set "${veth}n" up &&
                ip -n "$ns" link set lo up || fail "veth set-up"
        token=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
        ip netns exec "$ns" "$py" -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 8080)); s.listen(8)
while True:
    c, _ = s.accept(); c.sendall(sys.argv[2].encode()); c.close()
' "10.213.$n.2" "$token" &
        at_exit "kill $!"
        # a loopback server on the host for the in-group loopback check
        "$py" -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0)); s.listen(8); print(s.getsockname()[1], flush=True)
while True:
    c, _ = s.accept(); c.sendall(b"loop"); c.close()
' >"$IT_TMP/lport" &
        at_exit "kill $!"
        wait_until 5 test -s "$IT_TMP/lport" || fail "loopback server did not start"
        local lport
        lport=$(cat "$IT_TMP/lport")
        # TCP to the server and to the loopback server; a raw ICMP echo (root: a kind of socket
        # no sock_addr hook sees, left to the floor's skb egress program) waiting for the reply
        local fetch='
import os, socket, struct, sys
for a, p in ((sys.argv[1], 8080), ("127.0.0.1", int(sys.argv[2]))):
    try:
        s = socket.create_connection((a, p), timeout=5); print(a, "got", s.recv(64).decode())
    except OSError as e:
        print(a, "errno", e.errno)
def csum(b):
    t = sum(struct.unpack("!%dH" % (len(b) // 2), b)); t = (t >> 16) + (t & 0xffff); return ~(t + (t >> 16)) & 0xffff
pkt = struct.pack("!BBHHH", 8, 0, 0, os.getpid() & 0xffff, 1) + b"floor"
pkt = pkt[:2] + struct.pack("!H", csum(pkt + b"\0")) + pkt[4:]
try:
    r = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); r.settimeout(3)
    r.sendto(pkt, (sys.argv[1], 0)); r.recv(256); print("icmp reply")
except OSError as e:
    print("icmp errno", e.errno)
'
        wait_until 5 "$py" -c "import socket; socket.create_connection(('10.213.$n.2', 8080), timeout=1)" ||
                fail "the namespace's server did not start"
        # outside any floor: reaches the server over the veth
        OUT=$("$py" -c "$fetch" "10.213.$n.2" "$lport" 2>&1)
        printf '%s\n' "$OUT" | sed 's/^/  outside| /' >&2
        expect_contains "$OUT" "10.213.$n.2 got $token" "outside the group: the server answers"
        expect_contains "$OUT" "icmp reply" "outside the group: the namespace answers a ping"
        # in a group with the floor
        cg="$(cgroup2_root)/floortest-$$"
        mkdir "$cg" || fail "mkdir $cg"
        at_exit "rmdir $cg"
        OUT=$("$HELPERS/floor-attach" "$cg" 2>&1)
        expect_eq 5 "$OUT" "hooks with the floor attached"
        # shellcheck disable=SC2016
        OUT=$(sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$cg" "$py" -c "$fetch" "10.213.$n.2" "$lport" 2>&1)
        printf '%s\n' "$OUT" | sed 's/^/  inside| /' >&2
        expect_contains "$OUT" "10.213.$n.2 errno 1" "inside the group: EPERM before any packet"
        expect_contains "$OUT" "127.0.0.1 got loop" "inside the group: loopback still works"
        expect_contains "$OUT" "icmp errno 1" "inside the group: a raw ICMP packet is dropped (EPERM)"
}

it_test floor_group_removed_with_sandbox
floor_group_removed_with_sandbox() {
        need_floor
        crun -v -- true
        expect_rc 0 "cordon run -v"
        local dir
        dir=$(sed -nE 's/.*egress floor: BPF cgroup connect4\/6, sendmsg4\/6 and skb egress on (\/[^:]+): .*/\1/p' <<<"$ERR")
        [ -n "$dir" ] || fail "no group path in -v output"
        expect_true "the sandbox's v2 group is gone after the run ($dir)" test ! -e "$dir"
        # a sentry killed while it runs leaves the group; cordon gc removes it
        bg_cordon "$IT_TMP/bg.out" -v -- sleep 20
        wait_until 10 grep -q "egress floor:" "$IT_TMP/bg.out" || fail "the background sandbox did not start"
        dir=$(sed -nE 's/.*egress floor: BPF cgroup connect4\/6, sendmsg4\/6 and skb egress on (\/[^:]+): .*/\1/p' "$IT_TMP/bg.out")
        [ -n "$dir" ] && [ -d "$dir" ] || fail "the background sandbox's v2 group ($dir) is not there"
        kill -KILL "$BG_CORDON"
        wait "$BG_PID" 2>/dev/null
        wait_until 5 sh -c "! grep -q . '$dir/cgroup.procs' 2>/dev/null" || true
        OUT=$("$CORDON" gc 2>&1)
        printf '%s\n' "$OUT" >&2
        expect_true "cordon gc removed the v2 group $dir" test ! -e "$dir"
}

it_test unprivileged_floor_absent
unprivileged_floor_absent() {
        [ "$(id -u)" = 0 ] || skip "needs root to switch to uid 65534"
        command -v setpriv >/dev/null || skip "setpriv is not installed"
        (cd / && timeout 10 setpriv --reuid=65534 --regid=65534 --clear-groups -- unshare -U true) >/dev/null 2>&1 ||
                skip "user namespaces are not usable by uid 65534 here"
        local bin="$IT_TMP/bin"
        mkdir -p "$bin" && chmod 0755 "$bin" && cp "$CORDON" "$bin/cordon" && chmod 0755 "$bin/cordon" ||
                fail "cannot copy cordon to $bin"
        OUT=$(cd / && timeout -k 5 "$IT_CMD_TIMEOUT" setpriv --reuid=65534 --regid=65534 --clear-groups -- \
                "$bin/cordon" run -v -- sh -c 'echo hi > /tmp/x; cat /tmp/x' 2>"$IT_TMP/err")
        RC=$?
        ERR=$(cat "$IT_TMP/err")
        printf '%s\n%s\n' "$OUT" "$ERR" >&2
        expect_rc 0 "cordon run as uid 65534"
        expect_eq hi "$OUT" "output"
        expect_match "$ERR" "egress floor: ABSENT \(.+\)" "the floor is reported absent, with why"
        OUT=$(cd / && setpriv --reuid=65534 --regid=65534 --clear-groups -- "$bin/cordon" check 2>&1)
        expect_match "$OUT" "egress floor +NO +optional +BPF cgroup egress floor: ABSENT: .+" \
                "cordon check as uid 65534 lists the floor as absent, with why"
}

# =============================================================================================
# Landlock

# With the open rows off and the bind's read-only mount made writable, only Landlock stands
# between the command and the host directory.
it_test landlock_alone_refuses_writes
landlock_alone_refuses_writes() {
        need_landlock
        local d
        d=$(scratch_dir ro)
        echo original >"$d/f" && chmod 0666 "$d/f"
        # shellcheck disable=SC2016
        local script='echo new > /x/f; echo "write $?"; mkdir /x/d; echo "mkdir $?"; rm -f /x/f; echo "rm $?";
                ln -s f /x/l; echo "symlink $?"; echo tmp > /tmp/t; echo "tmp $?"'
        CORDON_DEBUG_DISABLE=fs-emulation,ro-binds crun --debug-unsafe --bind "$d:/x:ro" -- sh -c "$script"
        expect_rc 0 "the script"
        expect_eq $'write 2\nmkdir 1\nrm 1\nsymlink 1\ntmp 0' "$OUT" "every write to the bind refused, /tmp writable"
        expect_contains "$ERR" "/x/f: Permission denied" "EACCES (Landlock), not EROFS"
        expect_eq original "$(cat "$d/f")" "the host file"
        # the control: Landlock off too, the same writes go through (the switches did what they say)
        CORDON_DEBUG_DISABLE=fs-emulation,ro-binds,landlock crun --debug-unsafe -v --bind "$d:/x:ro" -- sh -c "$script"
        expect_contains "$ERR" "landlock: ABSENT (switched off (--debug-unsafe))" "-v says Landlock is off"
        expect_eq $'write 0\nmkdir 0\nrm 0\nsymlink 0\ntmp 0' "$OUT" "without Landlock the writes land"
}

it_test landlock_alone_refuses_exec
landlock_alone_refuses_exec() {
        need_landlock
        local d
        d=$(scratch_dir bins)
        chmod 0755 "$d"
        mkdir -p "$d/sub" "$d/other" && cp /bin/true "$d/sub/p" && cp /bin/true "$d/other/p" &&
                chmod -R 0755 "$d" || fail "staging"
        cat >"$IT_TMP/policy.json" <<EOF
{"filesystem": {"binds": [{"source": "$d", "target": "/x", "readOnly": true}],
                "rules": [{"path": "/x/sub", "access": "read", "exec": false}]}}
EOF
        # shellcheck disable=SC2016
        local script='/x/sub/p; echo "sub $?"; /x/other/p; echo "other $?"; /usr/bin/true; echo "usr $?"'
        crun --policy "$IT_TMP/policy.json" -- sh -c "$script"
        expect_eq $'sub 126\nother 0\nusr 0' "$OUT" "exec:false refused, the rest runs"
        CORDON_DEBUG_DISABLE=noexec-rules crun --debug-unsafe --policy "$IT_TMP/policy.json" -- sh -c \
                "grep ' /x/sub ' /proc/self/mountinfo | grep -c noexec; $script"
        expect_eq $'0\nsub 126\nother 0\nusr 0' "$OUT" "with the mount executable, Landlock alone refuses"
        CORDON_DEBUG_DISABLE=noexec-rules,landlock crun --debug-unsafe --policy "$IT_TMP/policy.json" -- sh -c "$script"
        expect_eq $'sub 0\nother 0\nusr 0' "$OUT" "the control: without Landlock it runs"
}

it_test landlock_normal_programs
landlock_normal_programs() {
        need_landlock
        # shellcheck disable=SC2016
        crun -- sh -c '
set -e
cd /tmp && mkdir -p a/b && echo x > a/b/f && mv a/b/f a/g && cp -r a c && rm -r a c && echo "fs ok"
git init -q r && cd r && echo hello > h && git add h && git -c user.email=t@t -c user.name=t commit -qm one &&
        git mv h h2 && git -c user.email=t@t -c user.name=t commit -qm two && git log --oneline | wc -l
cd /tmp && python3 -c "
import os, tempfile, subprocess, socket
d = tempfile.mkdtemp(); open(os.path.join(d, \"f\"), \"w\").write(\"y\"); os.rename(d, d + \"2\")
s = socket.socket(socket.AF_UNIX); s.bind(\"/tmp/sock\"); os.mkfifo(\"/tmp/fifo\")
print(subprocess.run([\"sh\", \"-c\", \"echo hi | tr h H\"], capture_output=True, text=True).stdout.strip())"
seq 1 100 | sort -rn | head -1 > /dev/null && : > /dev/null && echo pipes ok
ln /tmp/r/h2 /tmp/hard && truncate -s 3 /tmp/hard && ln -s /tmp/r /tmp/link && echo links ok
cp /bin/true /tmp/t && /tmp/t && echo "exec in tmp ok"
touch /root/home /var/tmp/vt /run/rt /dev/shm/shm && echo "writable places ok"
mkdir /usr/x 2>/dev/null || echo "usr refused"
'
        expect_rc 0 "the programs"
        expect_eq $'fs ok\n2\nHi\npipes ok\nlinks ok\nexec in tmp ok\nwritable places ok\nusr refused' "$OUT" \
                "git, python3, pipelines, links, exec and the writable places under Landlock"
        expect_contains "$ERR" "" "stderr"
}

# =============================================================================================
# the switch and cordon check

it_test debug_switch_needs_the_flag
debug_switch_needs_the_flag() {
        CORDON_DEBUG_DISABLE=net-emulation crun -- true
        expect_rc 2 "the variable without --debug-unsafe"
        expect_contains "$ERR" "CORDON_DEBUG_DISABLE is set but --debug-unsafe was not given; refusing to run" \
                "the refusal says why"
        CORDON_DEBUG_DISABLE=seccomp crun --debug-unsafe -- true
        expect_rc 2 "an unknown layer"
        expect_contains "$ERR" "unknown layer 'seccomp'" "names the unknown layer"
        crun --debug-unsafe -- true
        expect_rc 0 "the flag alone changes nothing"
        expect_not_contains "$ERR" "switched off" "no warning without the variable"
        OUT=$("$CORDON" run --help 2>&1)
        expect_contains "$OUT" "--debug-unsafe" "run --help documents the flag"
        expect_contains "$OUT" "Tests only" "as test-only"
}

it_test check_lists_floor_and_landlock
check_lists_floor_and_landlock() {
        OUT=$("$CORDON" check 2>&1)
        printf '%s\n' "$OUT" >&2
        expect_match "$OUT" "^  landlock +(yes|NO) +optional +.+" "check lists Landlock"
        expect_match "$OUT" "^  egress floor +(yes|NO) +optional +.+" "check lists the egress floor"
        OUT=$("$CORDON" check --json 2>&1)
        local py
        py=$(host_python)
        [ -n "$py" ] || skip "python3 is not installed"
        OUT=$("$py" -c '
import json, sys
d = json.loads(sys.stdin.read())["layers"]
for k in ("landlock", "egress floor"):
    print(k, d[k]["available"], bool(d[k]["note"]))
' <<<"$OUT")
        expect_match "$OUT" "^landlock (True|False) True$" "--json: Landlock with a note"
        expect_match "$OUT" "^egress floor (True|False) True$" "--json: the floor with a note"
}

it_main "$@"
